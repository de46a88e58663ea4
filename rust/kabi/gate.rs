// SPDX-License-Identifier: GPL-2.0
//! A gate that closes for good. Whatever passes it runs under its lock, so once
//! [`Gate::close`] has returned nothing passes again and nothing is still passing: the
//! timer and the work item use it so that no start or queueing can slip in between
//! their shutdown's cancel and the owner freeing them.

use super::lock::{new_spinlock_irq, SpinLockIrq};
use kernel::prelude::*;

/// Open until [`Gate::close`]; any context.
#[pin_data]
pub(crate) struct Gate {
    #[pin]
    open: SpinLockIrq<bool>,
}

impl Gate {
    /// An open gate.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Gate {
            open <- new_spinlock_irq!(true),
        })
    }

    /// Runs `f`, which must not sleep, if the gate is open.
    pub(crate) fn pass(&self, f: impl FnOnce()) {
        // The guard is held while `f` runs: `close` waits for it.
        let open = self.open.lock();
        if *open {
            f();
        }
    }

    /// Closes the gate for good, after any `pass` under way has finished.
    pub(crate) fn close(&self) {
        *self.open.lock() = false;
    }
}
