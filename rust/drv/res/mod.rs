// SPDX-License-Identifier: GPL-2.0
//! Verbs resources other than QPs: protection domains, address handles, and (one file
//! each) memory regions, memory windows, completion queues, shared receive queues and
//! the user rings they share with userspace.

mod cq;
mod mr;
mod mw;
mod ring;
mod srq;

pub(crate) use cq::Cq;
pub(crate) use mr::Mr;
pub(crate) use mw::Mw;
pub(crate) use ring::Ring;
pub(crate) use srq::Srq;

use super::tx::Path;
use crate::kabi::netdev::NetNs;
use crate::kabi::verbs::Av;
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// IB access flags rrxe understands.
pub(crate) mod access {
    pub(crate) const LOCAL_WRITE: i32 = 1;
    pub(crate) const REMOTE_WRITE: i32 = 2;
    pub(crate) const REMOTE_READ: i32 = 4;
    pub(crate) const REMOTE_ATOMIC: i32 = 8;
    /// Memory windows may be bound to the MR.
    pub(crate) const MW_BIND: i32 = 16;
    /// FLUSH to global visibility may target the MR (and the QP).
    pub(crate) const FLUSH_GLOBAL: i32 = 1 << 8;
    /// FLUSH to persistence may target the MR (and the QP): only persistent memory.
    pub(crate) const FLUSH_PERSISTENT: i32 = 1 << 9;
    /// On-demand paging: the pages are not pinned (only where the kernel has ODP).
    pub(crate) const ON_DEMAND: i32 = 1 << 6;
    /// Bits 20..29: optional flags a provider may ignore (relaxed ordering and friends).
    pub(crate) const OPTIONAL: i32 = 0x3ff0_0000;
    pub(crate) const SUPPORTED: i32 = LOCAL_WRITE
        | REMOTE_WRITE
        | REMOTE_READ
        | REMOTE_ATOMIC
        | MW_BIND
        | FLUSH_GLOBAL
        | ON_DEMAND
        | OPTIONAL;
}

static NEXT_PD: AtomicUsize = AtomicUsize::new(1);

/// A protection domain: an identity that MRs and QPs are matched by.
pub(crate) struct Pd {
    pub(crate) id: usize,
}

impl Pd {
    pub(crate) fn new() -> Result<Arc<Pd>> {
        Ok(Arc::new(
            Pd {
                id: NEXT_PD.fetch_add(1, Ordering::Relaxed),
            },
            GFP_KERNEL,
        )?)
    }
}

/// An address handle: the destination of UD sends, with its route.
pub(crate) struct Ah {
    /// The AH number userspace puts into UD WQEs (set once stored).
    pub(crate) num: AtomicU32,
    pub(crate) pd: usize,
    pub(crate) path: AhPath,
}

/// Where an AH sends: a route looked up when it was created, or, for an AH created where
/// the caller may not sleep (ib_cm creates its MAD AHs under a spinlock, interrupts
/// disabled, and a route lookup enables bottom halves), the address to look it up from at
/// each send.
pub(crate) enum AhPath {
    Ready(Path),
    Lookup(NetNs, Av),
}

impl Ah {
    /// Runs `f` with the AH's path; `ENETUNREACH` when a deferred lookup finds no route.
    pub(crate) fn with_path<R>(&self, f: impl FnOnce(&Path) -> R) -> Result<R> {
        match &self.path {
            AhPath::Ready(p) => Ok(f(p)),
            AhPath::Lookup(net, av) => Ok(f(&Path::new(*net, av, 0, 0)?)),
        }
    }
}
