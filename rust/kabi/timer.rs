// SPDX-License-Identifier: GPL-2.0
//! A `timer_list` that calls back into a driver object (softirq context).

use crate::sys as b;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::types::Opaque;

/// Receives timer expiries (softirq; must not sleep).
pub(crate) trait TimerHandler: Sync + 'static {
    /// The timer fired.
    fn timer_fired(&self);
}

#[repr(C)]
struct TimerBox<T> {
    timer: Opaque<b::timer_list>,
    ctx: AtomicPtr<T>,
}

/// A timer bound to an object of type `T` that outlives it: the owner calls
/// [`Timer::shutdown`] before the object can go away.
pub(crate) struct Timer<T: TimerHandler>(Pin<KBox<TimerBox<T>>>);

// SAFETY: the timer is driven by the kernel's timer core; `ctx` is atomic.
unsafe impl<T: TimerHandler> Send for Timer<T> {}
// SAFETY: as above.
unsafe impl<T: TimerHandler> Sync for Timer<T> {}

/// # Safety
///
/// Called by the timer core (softirq) for a timer set up by [`Timer::new`], so `t` is the
/// first field of a pinned `TimerBox<T>`, not freed before [`Timer::shutdown`] (also run on
/// drop) has waited for this call; a non-NULL `ctx` is the object given to [`Timer::bind`].
unsafe extern "C" fn fire<T: TimerHandler>(t: *mut b::timer_list) {
    // SAFETY: `t` is the first field of a live `TimerBox<T>` (shutdown waits for us).
    let tb = unsafe { &*t.cast::<TimerBox<T>>() };
    let ctx = tb.ctx.load(Ordering::Acquire);
    if !ctx.is_null() {
        // SAFETY: `ctx` is set by `bind` to an object that stays alive until `shutdown`
        // clears it and waits for this callback to finish.
        unsafe { (*ctx).timer_fired() };
    }
}

impl<T: TimerHandler> Timer<T> {
    /// An unbound timer.
    pub(crate) fn new() -> Result<Self> {
        let tb = KBox::pin(
            TimerBox {
                timer: Opaque::zeroed(),
                ctx: AtomicPtr::new(core::ptr::null_mut()),
            },
            GFP_KERNEL,
        )?;
        // SAFETY: the box is pinned for the timer's lifetime.
        unsafe { b::rrxe_timer_setup(tb.timer.get(), Some(fire::<T>)) };
        Ok(Timer(tb))
    }

    /// Binds the timer to `ctx`, which must stay alive until [`Timer::shutdown`].
    pub(crate) fn bind(&self, ctx: &T) {
        self.0
            .ctx
            .store(core::ptr::from_ref(ctx).cast_mut(), Ordering::Release);
    }

    /// (Re)arms the timer `delay_us` microseconds from now.
    pub(crate) fn arm_us(&self, delay_us: u64) {
        // SAFETY: initialised in `new`.
        unsafe {
            let j = b::rrxe_jiffies().wrapping_add(b::rrxe_usecs_to_jiffies(delay_us).max(1));
            b::mod_timer(self.0.timer.get(), j);
        }
    }

    /// Stops the timer for good and waits for a running callback.
    pub(crate) fn shutdown(&self) {
        self.0.ctx.store(core::ptr::null_mut(), Ordering::Release);
        // SAFETY: initialised in `new`; may sleep-wait for the callback (process context).
        unsafe { b::timer_delete_sync(self.0.timer.get()) };
    }
}

/// A point in time `us` microseconds ahead, in jiffies (for expiring records).
#[derive(Clone, Copy)]
pub(crate) struct Deadline(usize);

impl Deadline {
    /// The deadline `us` microseconds from now.
    pub(crate) fn after_us(us: u64) -> Self {
        // SAFETY: reading jiffies and converting a duration have no preconditions.
        Deadline(unsafe { b::rrxe_jiffies().wrapping_add(b::rrxe_usecs_to_jiffies(us)) })
    }

    /// Whether the deadline has not passed yet (jiffies comparison, wrap-safe).
    pub(crate) fn pending(self) -> bool {
        // SAFETY: reading jiffies has no preconditions.
        let now = unsafe { b::rrxe_jiffies() };
        (self.0.wrapping_sub(now) as isize) > 0
    }
}

impl<T: TimerHandler> Drop for Timer<T> {
    fn drop(&mut self) {
        self.shutdown();
    }
}
