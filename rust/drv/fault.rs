// SPDX-License-Identifier: GPL-2.0
//! Fault points for tests, in debugfs `rrxe-<dev>/fault/`:
//!
//! * `interval`: while it holds n > 0, every n-th allocation the device's packet paths
//!   make fails as if memory had run out (the skb of every packet sent, the record of a
//!   request placed early, a slot in a QP's receive queue). The kernel's failslab cannot
//!   aim there: those allocations run in softirqs and work items, not in a task a test
//!   can mark. An injected failure takes the same path as a real one: the packet is
//!   lost, counted in `nomem`, and the protocol recovers it as a loss on the wire.
//! * `rx_hold_ms`: the next received packet that finds its QP keeps the QP that many
//!   milliseconds (at most [`MAX_HOLD_MS`], busy-waiting in the receive softirq) after
//!   it was handled, then the value goes back to 0. A QP destroyed meanwhile loses its
//!   last reference there, in softirq: what a packet that found the QP moments before
//!   its process closed it does by chance.

use kernel::debugfs::ScopedDir;
use kernel::sync::atomic::{Atomic, Relaxed};
use kernel::time::Delta;

/// The longest hold `rx_hold_ms` asks for (longer values are cut to it).
pub(crate) const MAX_HOLD_MS: u32 = 10_000;

/// The device's fault points (see the module doc).
pub(crate) struct FaultPoint {
    /// Every n-th allocation fails (0: none).
    interval: Atomic<u32>,
    /// Allocations counted while the point was armed.
    seen: Atomic<u32>,
    /// Milliseconds the next received packet keeps its QP (0: none).
    rx_hold_ms: Atomic<u32>,
}

impl FaultPoint {
    /// An unarmed fault point.
    pub(crate) fn new() -> FaultPoint {
        FaultPoint {
            interval: Atomic::new(0),
            seen: Atomic::new(0),
            rx_hold_ms: Atomic::new(0),
        }
    }

    /// Whether this allocation is to fail.
    pub(crate) fn fail(&self) -> bool {
        let n = self.interval.load(Relaxed);
        n != 0 && self.seen.fetch_add(1, Relaxed).wrapping_add(1) % n == 0
    }

    /// Called by the receive path with the packet's QP still held: waits out a hold
    /// `rx_hold_ms` asked for, once.
    pub(crate) fn rx_hold(&self) {
        if self.rx_hold_ms.load(Relaxed) == 0 {
            return;
        }
        let ms = self.rx_hold_ms.xchg(0, Relaxed).min(MAX_HOLD_MS);
        for _ in 0..ms {
            kernel::time::delay::udelay(Delta::from_millis(1));
        }
    }

    /// The files `dir/fault/interval` and `dir/fault/rx_hold_ms`.
    pub(crate) fn populate<'d>(&'d self, dir: &ScopedDir<'d, '_>) {
        let sub = dir.dir(c"fault");
        sub.read_write_file(c"interval", &self.interval);
        sub.read_write_file(c"rx_hold_ms", &self.rx_hold_ms);
    }
}
