// SPDX-License-Identifier: GPL-2.0
//! Allocation-failure injection in the packet paths: while the debugfs file
//! `rrxe-<dev>/fault/interval` holds n > 0, every n-th allocation the device's packet
//! paths make fails as if memory had run out (the skb of every packet sent, the
//! record of a request placed early, a slot in a QP's receive queue). The kernel's
//! failslab cannot aim there: those allocations run in softirqs and work items, not in
//! a task a test can mark. An injected failure takes the same path as a real one: the
//! packet is lost, counted in `nomem`, and the protocol recovers it as a loss on the wire.

use kernel::debugfs::ScopedDir;
use kernel::sync::atomic::{Atomic, Relaxed};

/// The device's fault point (see the module doc).
pub(crate) struct FaultPoint {
    /// Every n-th allocation fails (0: none).
    interval: Atomic<u32>,
    /// Allocations counted while the point was armed.
    seen: Atomic<u32>,
}

impl FaultPoint {
    /// An unarmed fault point.
    pub(crate) fn new() -> FaultPoint {
        FaultPoint {
            interval: Atomic::new(0),
            seen: Atomic::new(0),
        }
    }

    /// Whether this allocation is to fail.
    pub(crate) fn fail(&self) -> bool {
        let n = self.interval.load(Relaxed);
        n != 0 && self.seen.fetch_add(1, Relaxed).wrapping_add(1) % n == 0
    }

    /// The file `dir/fault/interval`.
    pub(crate) fn populate<'d>(&'d self, dir: &ScopedDir<'d, '_>) {
        let sub = dir.dir(c"fault");
        sub.read_write_file(c"interval", &self.interval);
    }
}
