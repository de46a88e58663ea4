// SPDX-License-Identifier: GPL-2.0
//! Memory for the engine: the decoded-WQE cache, gathering a send WQE's payload and
//! scattering bytes into a scatter list, both through the protocol core's SGE walk
//! ([`sge::walk`]) and the MR table's checks.

use super::super::res::access;
use super::Qp;
use crate::proto::rc::sge;
use crate::proto::uapi::{self, wc_status, SendWqe};
use kernel::prelude::*;

/// Not a completion status: [`Qp::gather`] found on-demand-paged pages invalidated (they
/// are being faulted in). A data packet is then treated as lost on the wire; anything
/// else fails with `LOC_PROT_ERR`.
pub(super) const ODP_MISS: u32 = 0x8000_0001;

/// A decoded send WQE, allocated with the QP and reused: at about 700 bytes, moving one
/// per packet cost more copying than the payload did.
pub(super) struct WqeCache {
    /// The slot `wqe` holds, if it is to be reused.
    slot: Option<u32>,
    /// Taken out while in use (see `Qp::take_wqe`).
    wqe: Option<KBox<SendWqe>>,
}

impl WqeCache {
    pub(super) fn new() -> Result<Self> {
        Ok(WqeCache {
            slot: None,
            wqe: Some(KBox::new(SendWqe::EMPTY, GFP_KERNEL)?),
        })
    }

    pub(super) fn put(&mut self, w: KBox<SendWqe>) {
        self.wqe = Some(w);
    }

    /// The slot may be posted again: decode it afresh next time.
    pub(super) fn forget(&mut self) {
        self.slot = None;
    }

    /// Slot `i` completed (it may be posted again).
    pub(super) fn completed(&mut self, i: u32) {
        if self.slot == Some(i) {
            self.slot = None;
        }
    }
}

impl Qp {
    /// The decoded WQE of slot `i` out of cache `c` (decoded again unless it is the one
    /// cached); give it back with [`WqeCache::put`]. A cached slot stays valid until it
    /// completes ([`WqeCache::completed`]) or the queue is reset: only then can it be
    /// posted again.
    pub(super) fn take_wqe(
        &self,
        c: &mut WqeCache,
        i: u32,
    ) -> core::result::Result<KBox<SendWqe>, ()> {
        let mut w = match c.wqe.take() {
            Some(w) => w,
            None => KBox::new(SendWqe::EMPTY, GFP_ATOMIC).map_err(|_| ())?,
        };
        if c.slot != Some(i) {
            c.slot = None;
            let mut buf = [0u8; uapi::SEND_WQE_HDR + uapi::MAX_INLINE];
            let decoded = self.sq.read_slot(i, &mut buf).and_then(|s| {
                w.decode_into(s, self.max_send_sge as usize, self.max_inline as usize)
                    .ok()
            });
            if decoded.is_none() {
                c.put(w);
                return Err(());
            }
            c.slot = Some(i);
        }
        Ok(w)
    }

    /// Copies `out.len()` bytes of the WQE's payload starting at `off`. [`ODP_MISS`] if
    /// on-demand-paged pages there were invalidated since the requester checked them.
    pub(super) fn gather(
        &self,
        wqe: &SendWqe,
        off: u32,
        out: &mut [u8],
    ) -> core::result::Result<(), u32> {
        match &wqe.payload {
            uapi::Payload::Inline { data, len } => {
                let src = data
                    .get(off as usize..(off as usize + out.len()).min(*len))
                    .ok_or(wc_status::LOC_LEN_ERR)?;
                out.get_mut(..src.len())
                    .ok_or(wc_status::LOC_LEN_ERR)?
                    .copy_from_slice(src);
                Ok(())
            }
            uapi::Payload::Sges { sge, num } => {
                let list = sge.get(..*num).unwrap_or(&[]);
                sge::walk(list, off, out.len(), |p| {
                    let mr = self
                        .dev
                        .lookup_mr(p.lkey, self.pd, 0)
                        .ok_or(wc_status::LOC_PROT_ERR)?;
                    let dst = out
                        .get_mut(p.at..p.at + p.len)
                        .ok_or(wc_status::LOC_LEN_ERR)?;
                    mr.read(p.addr, dst).ok_or_else(|| {
                        if mr.odp_miss(p.addr, p.len) {
                            ODP_MISS
                        } else {
                            wc_status::LOC_PROT_ERR
                        }
                    })
                })
                .map(|_| ())
            }
        }
    }

    /// Whether bytes `[off, off + len)` of send WQE `wqe`'s local memory can be reached
    /// without waiting (inline data always can).
    pub(super) fn wqe_resident(&self, wqe: &SendWqe, off: u32, len: usize) -> bool {
        match &wqe.payload {
            uapi::Payload::Inline { .. } => true,
            uapi::Payload::Sges { sge, num } => {
                self.sges_resident(sge.get(..*num).unwrap_or(&[]), off, len)
            }
        }
    }

    /// Whether bytes `[off, off + len)` of the scatter/gather list `sge` can be reached
    /// without waiting (see [`Mr::resident`]); bad keys and ranges are left to the access.
    pub(super) fn sges_resident(&self, sge: &[uapi::Sge], off: u32, len: usize) -> bool {
        if !self.dev.has_odp() {
            return true;
        }
        sge::walk(sge, off, len, |p| {
            match self.dev.lookup_mr(p.lkey, self.pd, 0) {
                Some(mr) if !mr.resident(p.addr, p.len) => Err(()),
                _ => Ok(()),
            }
        })
        .is_ok()
    }

    /// Whether a [`Qp::scatter`] of bytes `[off, off + len)` into `sge` that failed failed
    /// only because on-demand-paged pages were missing: every piece's key admits local
    /// writes and its range, and some piece is on demand paged.
    pub(super) fn scatter_odp_miss(&self, sge: &[uapi::Sge], off: u32, len: usize) -> bool {
        let mut odp = false;
        sge::walk(sge, off, len, |p| {
            let mr = self
                .dev
                .lookup_mr(p.lkey, self.pd, access::LOCAL_WRITE)
                .ok_or(())?;
            if !mr.covers(p.addr, p.len as u64) {
                return Err(());
            }
            odp |= mr.odp_miss(p.addr, p.len);
            Ok(())
        })
        .is_ok()
            && odp
    }

    /// Copies `data` into the scatter list `sge` at byte offset `off`; `None` unless all
    /// of it fits and every piece passes the MR checks.
    pub(super) fn scatter(&self, sge: &[uapi::Sge], off: u32, data: &[u8]) -> Option<()> {
        let done = sge::walk(sge, off, data.len(), |p| {
            let mr = self
                .dev
                .lookup_mr(p.lkey, self.pd, access::LOCAL_WRITE)
                .ok_or(())?;
            mr.write(p.addr, data.get(p.at..p.at + p.len).ok_or(())?)
                .ok_or(())
        })
        .ok()?;
        (done == data.len()).then_some(())
    }
}
