// SPDX-License-Identifier: GPL-2.0
//! A `timer_list` that calls back into a driver object (softirq context).

use crate::sys as b;
use core::sync::atomic::{AtomicI64, AtomicPtr, Ordering};
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
    /// When the callback is due (`ktime_get` nanoseconds). The `timer_list` only has the
    /// resolution of a tick (4 ms at HZ=250) and fires at the first tick after the
    /// jiffy it is armed for, which may be microseconds away: the callback runs early
    /// expiries again (see [`fire`]), so a delay is never cut short.
    due_ns: AtomicI64,
}

/// Nanoseconds on the monotonic clock.
fn now_ns() -> i64 {
    // SAFETY: `ktime_get` has no preconditions.
    unsafe { b::ktime_get() }
}

/// Arms `t` for no later than the first tick `ns` nanoseconds from now (moves it earlier
/// if it is set for later; a tick that comes too early is re-armed by [`fire`]).
///
/// # Safety
///
/// `t` is an initialised `timer_list`.
unsafe fn reduce(t: *mut b::timer_list, ns: i64) {
    let us = u64::try_from(ns / 1000).unwrap_or(0);
    // SAFETY: reading jiffies and converting a duration have no preconditions; `t` is
    // initialised (caller). After `timer_shutdown_sync` this is a no-op.
    unsafe {
        let j = b::rrxe_jiffies().wrapping_add(b::rrxe_usecs_to_jiffies(us).max(1));
        b::timer_reduce(t, j);
    }
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
    let early = tb.due_ns.load(Ordering::Acquire).wrapping_sub(now_ns());
    if early > 0 {
        // SAFETY: `t` is initialised; re-arming a shut-down timer does nothing.
        unsafe { reduce(t, early) };
        return;
    }
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
                due_ns: AtomicI64::new(0),
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

    /// (Re)arms the timer: the callback runs once, at least `delay_us` microseconds from
    /// now (and within a tick after that), unless it is armed again before.
    pub(crate) fn arm_us(&self, delay_us: u64) {
        let ns = i64::try_from(delay_us.saturating_mul(1000)).unwrap_or(i64::MAX / 2);
        self.0
            .due_ns
            .store(now_ns().wrapping_add(ns), Ordering::Release);
        // SAFETY: initialised in `new`.
        unsafe { reduce(self.0.timer.get(), ns) };
    }

    /// Stops the timer for good (arming it afterwards does nothing) and waits for a
    /// running callback.
    pub(crate) fn shutdown(&self) {
        self.0.ctx.store(core::ptr::null_mut(), Ordering::Release);
        // SAFETY: initialised in `new`; may sleep-wait for the callback (process context).
        unsafe { b::timer_shutdown_sync(self.0.timer.get()) };
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
