// SPDX-License-Identifier: GPL-2.0
//! The rings rrxe shares with userspace (SQ, RQ, SRQ, CQ): a `vmalloc_user` buffer with
//! the ring header, published for mmap; kernel consumers' rings are the same, unmapped.

use super::super::limits::MAX_QP_WR;
use crate::kabi::lock::SpinLockIrq;
use crate::kabi::mem::UserBuf;
use crate::kabi::verbs::{Mmap, MmapSlot, Udata};
use crate::proto::uapi::{self, RecvWqe, RingGeom, CONSUMER_OFF, PRODUCER_OFF};
use kernel::prelude::*;
use kernel::sync::Arc;

/// Allocates a ring of geometry `geom`, writes its header and publishes it for mmap in
/// the caller's context; returns the buffer, its mmap entry and the `mminfo` for the
/// provider response (offset, size, pad).
pub(crate) fn publish_ring(
    geom: &RingGeom,
    udata: Option<&Udata>,
) -> Result<(Arc<UserBuf>, Option<Mmap>, [u8; 16])> {
    let buf = Arc::new(UserBuf::new(geom.bytes())?, GFP_KERNEL)?;
    buf.write(0, &geom.log2_slot.to_le_bytes()).ok_or(EINVAL)?;
    buf.write(4, &geom.mask.to_le_bytes()).ok_or(EINVAL)?;
    // A kernel consumer's ring is not mapped anywhere.
    let Some(udata) = udata else {
        return Ok((buf, None, [0; 16]));
    };
    let (mmap, off) = Mmap::insert(udata.ucontext(), buf.clone())?;
    let size =
        u32::try_from(buf.len().next_multiple_of(kernel::page::PAGE_SIZE)).map_err(|_| EINVAL)?;
    let mut mi = [0u8; 16];
    mi[0..8].copy_from_slice(&off.to_le_bytes());
    mi[8..12].copy_from_slice(&size.to_le_bytes());
    Ok((buf, Some(mmap), mi))
}

/// A ring shared with userspace plus its mmap registration.
pub(crate) struct Ring {
    buf: Arc<UserBuf>,
    pub(crate) geom: RingGeom,
    mmap: MmapSlot,
}

impl Ring {
    /// A ring of at least `depth` slots of `elem` bytes, mapped for `udata`'s process (or
    /// private to the kernel when `udata` is `None`).
    pub(crate) fn new(depth: u32, elem: usize, udata: Option<&Udata>) -> Result<(Ring, [u8; 16])> {
        let geom = RingGeom::new(depth, elem, MAX_QP_WR).ok_or(EINVAL)?;
        let (buf, mmap, mi) = publish_ring(&geom, udata)?;
        Ok((
            Ring {
                buf,
                geom,
                mmap: MmapSlot::new(mmap),
            },
            mi,
        ))
    }

    /// Withdraws the ring from mmap (the owner's destroy verb: process context, see
    /// [`MmapSlot`]). Existing mappings stay valid.
    pub(crate) fn unpublish(&self) {
        self.mmap.remove();
    }

    /// The user's producer index (masked).
    pub(crate) fn producer(&self) -> u32 {
        self.buf.load_acquire(PRODUCER_OFF) & self.geom.mask
    }

    pub(crate) fn publish_consumer(&self, c: u32) {
        self.buf.store_release(CONSUMER_OFF, c);
    }

    /// Kernel consumers: appends `wqe` (encoded by `enc`) if there is room; `ENOMEM` if full.
    pub(crate) fn push(&self, enc: impl FnOnce(&mut [u8]) -> Result) -> Result {
        let prod = self.producer();
        let cons = self.buf.load_acquire(CONSUMER_OFF) & self.geom.mask;
        if self.geom.full(prod, cons) {
            return Err(ENOMEM);
        }
        let mut slot = [0u8; MAX_SLOT];
        let s = slot
            .get_mut(..self.geom.slot_size().min(MAX_SLOT))
            .ok_or(EINVAL)?;
        enc(s)?;
        self.buf.write(self.geom.slot_off(prod), s).ok_or(EINVAL)?;
        self.buf.store_release(PRODUCER_OFF, self.geom.next(prod));
        Ok(())
    }

    /// Kernel consumers: appends receive request `w` (at most `max_sge` SGEs) under the
    /// posting lock `lock`; `EINVAL` for too many SGEs, `ENOMEM` if the ring is full.
    pub(crate) fn push_recv(&self, lock: &SpinLockIrq<()>, max_sge: u32, w: &RecvWqe) -> Result {
        if w.num > max_sge as usize {
            return Err(EINVAL);
        }
        let _g = lock.lock();
        self.push(|s| w.encode(s).map_err(|_| EINVAL))
    }

    /// A private copy of slot `i` (at most `out.len()` bytes).
    pub(crate) fn read_slot<'a>(&self, i: u32, out: &'a mut [u8]) -> Option<&'a [u8]> {
        let n = self.geom.slot_size().min(out.len());
        let s = out.get_mut(..n)?;
        self.buf.read(self.geom.slot_off(i), s)?;
        Some(s)
    }
}

/// Largest slot a kernel work request is encoded into (header plus every SGE).
const MAX_SLOT: usize = uapi::SEND_WQE_HDR + uapi::MAX_SGE * uapi::SGE_LEN;
