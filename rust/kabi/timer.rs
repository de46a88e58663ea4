// SPDX-License-Identifier: GPL-2.0
//! A high-resolution timer that calls back into a driver object (softirq context).

use super::gate::Gate;
use crate::sys as b;
use core::sync::atomic::{AtomicI64, AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::types::Opaque;

/// Receives timer expiries (softirq; must not sleep).
pub(crate) trait TimerHandler: Sync + 'static {
    /// Timer `id` (as given to [`Timer::new`]) fired.
    fn timer_fired(&self, id: u8);
}

#[repr(C)]
#[pin_data]
struct TimerBox<T> {
    timer: Opaque<b::hrtimer>,
    ctx: AtomicPtr<T>,
    /// When the callback is due (`ktime_get` nanoseconds). Moving it later costs nothing:
    /// the `hrtimer` keeps its earlier expiry and the callback starts it again for the
    /// new time (see [`fire`]).
    due_ns: AtomicI64,
    /// The expiry the `hrtimer` was last started for; 0 once it has fired.
    armed_ns: AtomicI64,
    /// Which of its owner's timers this is.
    id: u8,
    /// Closed by [`Timer::shutdown`] before it cancels the timer (see [`start`]).
    #[pin]
    gate: Gate,
}

/// Nanoseconds on the monotonic clock.
pub(crate) fn now_ns() -> i64 {
    // SAFETY: `ktime_get` has no preconditions.
    unsafe { b::ktime_get() }
}

/// Starts the `hrtimer` for `at` (absolute monotonic ns) unless the timer is shut down:
/// `shutdown` closes the gate before it cancels the timer, so no start can leave it
/// queued after `shutdown` returns.
fn start<T>(tb: &TimerBox<T>, at: i64) {
    tb.gate.pass(|| {
        tb.armed_ns.store(at, Ordering::SeqCst);
        // SAFETY: the timer was set up in `Timer::new` and is not freed before `shutdown`,
        // which cannot close the gate while this runs.
        unsafe {
            b::hrtimer_start_range_ns(
                tb.timer.get(),
                at,
                SLACK_NS,
                b::hrtimer_mode_HRTIMER_MODE_ABS_SOFT,
            )
        };
    });
}

/// How late the kernel may run an expiry to batch it with others.
const SLACK_NS: u64 = 50_000;

/// A timer bound to an object of type `T` that outlives it: the owner calls
/// [`Timer::shutdown`] before the object can go away.
pub(crate) struct Timer<T: TimerHandler>(Pin<KBox<TimerBox<T>>>);

// SAFETY: the timer is driven by the kernel's hrtimer core; every shared field is atomic
// or locked.
unsafe impl<T: TimerHandler> Send for Timer<T> {}
// SAFETY: as above.
unsafe impl<T: TimerHandler> Sync for Timer<T> {}

/// # Safety
///
/// Called by the hrtimer core (softirq) for a timer set up by [`Timer::new`], so `t` is
/// the first field of a pinned `TimerBox<T>`, not freed before [`Timer::shutdown`] (also
/// run on drop) has waited for this call; a non-NULL `ctx` is the object given to
/// [`Timer::bind`].
unsafe extern "C" fn fire<T: TimerHandler>(t: *mut b::hrtimer) -> b::hrtimer_restart {
    // SAFETY: `t` is the first field of a live `TimerBox<T>` (shutdown waits for us).
    let tb = unsafe { &*t.cast::<TimerBox<T>>() };
    // Cleared before `due_ns` is read: an `arm_us` that moved `due_ns` either sees 0 and
    // starts the timer itself, or its new time is seen here.
    tb.armed_ns.store(0, Ordering::SeqCst);
    let due = tb.due_ns.load(Ordering::SeqCst);
    if due.wrapping_sub(now_ns()) > 0 {
        start(tb, due);
        return b::hrtimer_restart::HRTIMER_NORESTART;
    }
    let ctx = tb.ctx.load(Ordering::Acquire);
    if !ctx.is_null() {
        // SAFETY: `ctx` is set by `bind` to an object that stays alive until `shutdown`
        // clears it and waits for this callback to finish.
        unsafe { (*ctx).timer_fired(tb.id) };
    }
    b::hrtimer_restart::HRTIMER_NORESTART
}

impl<T: TimerHandler> Timer<T> {
    /// An unbound timer; its expiries reach the handler with `id`.
    pub(crate) fn new(id: u8) -> Result<Self> {
        let tb = KBox::pin_init(
            pin_init!(TimerBox {
                timer: Opaque::zeroed(),
                ctx: AtomicPtr::new(core::ptr::null_mut()),
                due_ns: AtomicI64::new(0),
                armed_ns: AtomicI64::new(0),
                id,
                gate <- Gate::new(),
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: the box is pinned for the timer's lifetime; the callback matches the
        // soft (softirq) absolute mode every start uses.
        unsafe {
            b::hrtimer_setup(
                tb.timer.get(),
                Some(fire::<T>),
                b::CLOCK_MONOTONIC as b::clockid_t,
                b::hrtimer_mode_HRTIMER_MODE_ABS_SOFT,
            )
        };
        Ok(Timer(tb))
    }

    /// Binds the timer to `ctx`, which must stay alive until [`Timer::shutdown`].
    pub(crate) fn bind(&self, ctx: &T) {
        self.0
            .ctx
            .store(core::ptr::from_ref(ctx).cast_mut(), Ordering::Release);
    }

    /// (Re)arms the timer: the callback runs once, `delay_us` microseconds from now (up
    /// to [`SLACK_NS`] later), unless it is armed again before.
    pub(crate) fn arm_us(&self, delay_us: u64) {
        let ns = i64::try_from(delay_us.saturating_mul(1000)).unwrap_or(i64::MAX / 2);
        let due = now_ns().wrapping_add(ns);
        let tb = &*self.0;
        tb.due_ns.store(due, Ordering::SeqCst);
        // An expiry at or before `due` is left alone: the callback starts the timer again
        // for `due`. (This is the common case, re-arming on every response, and it takes
        // no lock.)
        let armed = tb.armed_ns.load(Ordering::SeqCst);
        if armed != 0 && due.wrapping_sub(armed) >= 0 {
            return;
        }
        start(tb, due);
    }

    /// Stops the timer for good (arming it afterwards does nothing) and waits for a
    /// running callback.
    pub(crate) fn shutdown(&self) {
        let tb = &*self.0;
        tb.ctx.store(core::ptr::null_mut(), Ordering::Release);
        tb.gate.close();
        // SAFETY: set up in `new`; may wait for the callback (process context). No start
        // can follow (gate closed), so the timer stays idle afterwards.
        unsafe { b::hrtimer_cancel(tb.timer.get()) };
    }
}

/// A point in time `us` microseconds ahead, in jiffies (for expiring records).
#[derive(Clone, Copy)]
pub(crate) struct Deadline(usize);

impl Deadline {
    /// The deadline `us` microseconds from now.
    pub(crate) fn after_us(us: u64) -> Self {
        // SAFETY: converting a duration has no preconditions.
        Deadline(jiffies().wrapping_add(unsafe { b::rrxe_usecs_to_jiffies(us) }))
    }

    /// Whether the deadline has not passed yet (jiffies comparison, wrap-safe).
    pub(crate) fn pending(self) -> bool {
        (self.0.wrapping_sub(jiffies()) as isize) > 0
    }
}

/// The current jiffies count.
fn jiffies() -> usize {
    // SAFETY: `jiffies` is a kernel global, always mapped and aligned, that the tick
    // updates; C declares it volatile and reads it with a plain volatile load, as here.
    unsafe { core::ptr::read_volatile(&raw const b::jiffies) }
}

impl<T: TimerHandler> Drop for Timer<T> {
    fn drop(&mut self) {
        self.shutdown();
    }
}
