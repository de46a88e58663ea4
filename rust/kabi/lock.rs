// SPDX-License-Identifier: GPL-2.0
//! A spinlock that disables bottom halves: the packet path runs in softirq and in process
//! context, so every lock it shares must be taken with `spin_lock_bh` in process context.

use crate::sys as b;
use kernel::sync::lock::{Backend, Lock};

/// Backend for [`SpinLockBh`].
pub(crate) struct SpinLockBhBackend;

/// A `spin_lock_bh` lock around `T`.
pub(crate) type SpinLockBh<T> = Lock<T, SpinLockBhBackend>;

// SAFETY: `spinlock_t` gives mutual exclusion; `lock`/`unlock` pair `spin_lock_bh` with
// `spin_unlock_bh` and `relock` uses the default (same) locking method.
unsafe impl Backend for SpinLockBhBackend {
    type State = b::spinlock_t;
    type GuardState = ();

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut b::lock_class_key,
    ) {
        // SAFETY: the caller guarantees `ptr` is valid for writes and `name`/`key` live forever.
        unsafe { b::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: the caller guarantees the lock was initialised.
        unsafe { b::rrxe_spin_lock_bh(ptr) }
    }

    unsafe fn try_lock(ptr: *mut Self::State) -> Option<Self::GuardState> {
        // SAFETY: the caller guarantees the lock was initialised.
        (unsafe { b::rrxe_spin_trylock_bh(ptr) } != 0).then_some(())
    }

    unsafe fn unlock(ptr: *mut Self::State, _guard: &Self::GuardState) {
        // SAFETY: the caller owns the lock.
        unsafe { b::rrxe_spin_unlock_bh(ptr) }
    }

    unsafe fn assert_is_held(ptr: *mut Self::State) {
        // SAFETY: the caller guarantees the lock was initialised.
        unsafe { b::spin_assert_is_held(ptr) }
    }
}

/// Creates a [`SpinLockBh`] initialiser with a static lock class.
macro_rules! new_spinlock_bh {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        kernel::sync::lock::Lock::<_, $crate::kabi::lock::SpinLockBhBackend>::new(
            $inner,
            kernel::optional_name!($($name)?),
            kernel::static_lock_class!(),
        )
    };
}
pub(crate) use new_spinlock_bh;
