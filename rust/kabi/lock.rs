// SPDX-License-Identifier: GPL-2.0
//! Spinlocks for the packet path. It runs in softirq and in process context, so every lock
//! it shares is taken with `spin_lock_bh` ([`SpinLockBh`]). Locks that kernel consumers
//! take from any context, interrupts disabled included (address handles, kernel work
//! request queues, CQs and the QP table `poll_cq` reads: SRP polls its send CQ under a
//! lock taken with `spin_lock_irqsave`), use `spin_lock_irqsave` ([`SpinLockIrq`]): a
//! `spin_unlock_bh` there would enable bottom halves with interrupts disabled.

use crate::sys as b;
use kernel::sync::lock::{Backend, Lock};

/// Defines a `spinlock_t` backend: `$guard` is what `lock` returns and `unlock` consumes.
macro_rules! spinlock_backend {
    ($(#[$m:meta])* $name:ident, $guard:ty,
     lock: |$lp:ident| $lock:expr,
     try_lock: |$tp:ident| $try:expr,
     unlock: |$up:ident, $ug:ident| $unlock:expr $(,)?) => {
        $(#[$m])*
        pub(crate) struct $name;

        // SAFETY: `spinlock_t` gives mutual exclusion; `unlock` is the counterpart of `lock`
        // and of a successful `try_lock` (restoring what they saved), and `relock` uses the
        // default (same) locking method.
        unsafe impl Backend for $name {
            type State = b::spinlock_t;
            type GuardState = $guard;

            unsafe fn init(
                ptr: *mut Self::State,
                name: *const kernel::ffi::c_char,
                key: *mut b::lock_class_key,
            ) {
                // SAFETY: the caller guarantees `ptr` is valid for writes and `name`/`key`
                // live forever.
                unsafe { b::__spin_lock_init(ptr, name, key) }
            }

            unsafe fn lock($lp: *mut Self::State) -> Self::GuardState {
                // SAFETY: the caller guarantees the lock was initialised.
                unsafe { $lock }
            }

            unsafe fn try_lock($tp: *mut Self::State) -> Option<Self::GuardState> {
                // SAFETY: the caller guarantees the lock was initialised.
                unsafe { $try }
            }

            unsafe fn unlock($up: *mut Self::State, $ug: &Self::GuardState) {
                // SAFETY: the caller owns the lock and passes the guard `lock` returned.
                unsafe { $unlock }
            }

            unsafe fn assert_is_held(ptr: *mut Self::State) {
                // SAFETY: the caller guarantees the lock was initialised.
                unsafe { b::spin_assert_is_held(ptr) }
            }
        }
    };
}

spinlock_backend!(
    /// Backend for [`SpinLockBh`].
    SpinLockBhBackend, (),
    lock: |p| b::rrxe_spin_lock_bh(p),
    try_lock: |p| (b::rrxe_spin_trylock_bh(p) != 0).then_some(()),
    unlock: |p, _g| b::rrxe_spin_unlock_bh(p),
);

spinlock_backend!(
    /// Backend for [`SpinLockIrq`].
    SpinLockIrqBackend, kernel::ffi::c_ulong,
    lock: |p| b::rrxe_spin_lock_irqsave(p),
    try_lock: |p| {
        let mut flags = 0;
        (b::rrxe_spin_trylock_irqsave(p, &mut flags) != 0).then_some(flags)
    },
    unlock: |p, g| b::rrxe_spin_unlock_irqrestore(p, *g),
);

/// A `spin_lock_bh` lock around `T`.
pub(crate) type SpinLockBh<T> = Lock<T, SpinLockBhBackend>;

/// A `spin_lock_irqsave` lock around `T`.
pub(crate) type SpinLockIrq<T> = Lock<T, SpinLockIrqBackend>;

/// Creates a lock initialiser with backend `$backend` and a static lock class.
macro_rules! new_lock {
    ($backend:ident, $inner:expr $(, $name:literal)?) => {
        kernel::sync::lock::Lock::<_, $crate::kabi::lock::$backend>::new(
            $inner,
            kernel::optional_name!($($name)?),
            kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_lock;

/// Creates a [`SpinLockBh`] initialiser with a static lock class.
macro_rules! new_spinlock_bh {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::kabi::lock::new_lock!(SpinLockBhBackend, $inner $(, $name)?)
    };
}
pub(crate) use new_spinlock_bh;

/// Creates a [`SpinLockIrq`] initialiser with a static lock class.
macro_rules! new_spinlock_irq {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::kabi::lock::new_lock!(SpinLockIrqBackend, $inner $(, $name)?)
    };
}
pub(crate) use new_spinlock_irq;
