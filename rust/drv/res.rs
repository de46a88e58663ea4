// SPDX-License-Identifier: GPL-2.0
//! Protection domains, memory regions, completion queues, address handles, shared
//! receive queues and the user rings they share with userspace.

use super::net::Path;
use super::qp::MAX_QP_WR;
use crate::kabi::lock::{new_spinlock_bh, new_spinlock_irq, SpinLockBh, SpinLockIrq};
use crate::kabi::mem::{KernelVa, Umem, UserBuf};
use crate::kabi::verbs::{CqHandle, Mmap, SrqHandle, Udata};
use crate::proto::uapi::{self, Cqe, RecvWqe, RingGeom, CONSUMER_OFF, CQE_SLOT, PRODUCER_OFF};
use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// IB access flags rrxe understands.
pub(crate) mod access {
    pub(crate) const LOCAL_WRITE: i32 = 1;
    pub(crate) const REMOTE_WRITE: i32 = 2;
    pub(crate) const REMOTE_READ: i32 = 4;
    pub(crate) const REMOTE_ATOMIC: i32 = 8;
    /// Bits 20..29: optional flags a provider may ignore (relaxed ordering and friends).
    pub(crate) const OPTIONAL: i32 = 0x3ff0_0000;
    pub(crate) const SUPPORTED: i32 =
        LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC | OPTIONAL;
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

/// A registered user memory region.
pub(crate) struct Mr {
    pub(crate) key: u32,
    pub(crate) pd: usize,
    pub(crate) access: i32,
    pub(crate) iova: u64,
    pub(crate) len: u64,
    mem: MrMem,
}

/// What an MR's addresses refer to.
enum MrMem {
    /// Pinned user pages; `first_off` is the start's offset in the first page.
    User { umem: Umem, first_off: usize },
    /// Kernel virtual addresses (the DMA MR of a kernel PD).
    Kernel,
}

impl Mr {
    pub(crate) fn new(
        key: u32,
        pd: usize,
        access: i32,
        start: u64,
        len: u64,
        iova: u64,
        umem: Umem,
    ) -> Result<Arc<Mr>> {
        let page = kernel::page::PAGE_SIZE as u64;
        let first_off = (start % page) as usize;
        Ok(Arc::new(
            Mr {
                key,
                pd,
                access,
                iova,
                len,
                mem: MrMem::User { umem, first_off },
            },
            GFP_KERNEL,
        )?)
    }

    /// The DMA MR of kernel PD `pd`: local access to kernel virtual addresses only (a
    /// remote peer must never reach kernel memory through it).
    pub(crate) fn new_dma(key: u32, pd: usize) -> Result<Arc<Mr>> {
        Ok(Arc::new(
            Mr {
                key,
                pd,
                access: access::LOCAL_WRITE,
                iova: 0,
                len: u64::MAX,
                mem: MrMem::Kernel,
            },
            GFP_KERNEL,
        )?)
    }

    /// Offset of `[va, va + n)` from the MR's start, if the range lies in the MR.
    fn offset(&self, va: u64, n: usize) -> Option<usize> {
        let rel = va.checked_sub(self.iova)?;
        let end = rel.checked_add(n as u64)?;
        if end > self.len {
            return None;
        }
        usize::try_from(rel).ok()
    }

    /// Copies `buf` into the MR at `va`.
    pub(crate) fn write(&self, va: u64, buf: &[u8]) -> Option<()> {
        let off = self.offset(va, buf.len())?;
        match &self.mem {
            MrMem::User { umem, first_off } => umem.copy_in(off.checked_add(*first_off)?, buf),
            MrMem::Kernel => KernelVa::write(va, buf),
        }
    }

    /// Copies from the MR at `va` into `buf`.
    pub(crate) fn read(&self, va: u64, buf: &mut [u8]) -> Option<()> {
        let off = self.offset(va, buf.len())?;
        match &self.mem {
            MrMem::User { umem, first_off } => umem.copy_out(off.checked_add(*first_off)?, buf),
            MrMem::Kernel => KernelVa::read(va, buf),
        }
    }

    /// Whether `[va, va + n)` lies in the MR.
    pub(crate) fn covers(&self, va: u64, n: u64) -> bool {
        usize::try_from(n)
            .ok()
            .and_then(|n| self.offset(va, n))
            .is_some()
    }
}

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

/// IB CQ notification flags.
const CQ_SOLICITED: u32 = 1;
const CQ_NEXT_COMP: u32 = 2;
const CQ_SOLICITED_MASK: u32 = 3;
const CQ_REPORT_MISSED_EVENTS: u32 = 4;

struct CqState {
    /// The ring (replaced by a resize) and its mmap registration.
    ring: Arc<UserBuf>,
    geom: RingGeom,
    _mmap: Option<Mmap>,
    producer: u32,
    notify: u32,
    dead: bool,
}

/// A completion queue: a ring mapped into the owning process, or for a kernel consumer
/// the same ring polled through `poll_cq`.
#[pin_data]
pub(crate) struct Cq {
    handle: CqHandle,
    max_cqe: u32,
    #[pin]
    st: SpinLockBh<CqState>,
}

impl Cq {
    pub(crate) fn new(
        cqe: u32,
        max_cqe: u32,
        handle: CqHandle,
        udata: Option<&Udata>,
    ) -> Result<(Arc<Cq>, u32)> {
        let geom = RingGeom::new(cqe, CQE_SLOT, max_cqe).ok_or(EINVAL)?;
        if udata.is_some_and(|u| u.out_len() < 16) {
            return Err(EINVAL);
        }
        let (ring, mmap, mi) = publish_ring(&geom, udata)?;
        if let Some(u) = udata {
            u.respond(&mi)?;
        }
        let cap = geom.capacity();
        let cq = Arc::pin_init(
            try_pin_init!(Cq {
                handle,
                max_cqe,
                st <- new_spinlock_bh!(CqState {
                    ring,
                    geom,
                    _mmap: mmap,
                    producer: 0,
                    notify: 0,
                    dead: false,
                }),
            }),
            GFP_KERNEL,
        )?;
        Ok((cq, cap))
    }

    /// `ibv_resize_cq`: a new ring of at least `cqe` entries holding the completions not
    /// yet consumed, at its start; returns the new capacity. `EINVAL` if they do not fit.
    pub(crate) fn resize(&self, cqe: u32, udata: &Udata) -> Result<u32> {
        let geom = RingGeom::new(cqe, CQE_SLOT, self.max_cqe).ok_or(EINVAL)?;
        if udata.out_len() < 16 {
            return Err(EINVAL);
        }
        let (ring, mmap, mi) = publish_ring(&geom, Some(udata))?;
        // The old ring and its mmap entry are let go of after the lock is dropped.
        let _old = {
            let mut st = self.st.lock();
            let mut cons = st.ring.load_acquire(CONSUMER_OFF) & st.geom.mask;
            let pending = st.geom.count(st.producer, cons);
            if pending > geom.capacity() {
                return Err(EINVAL);
            }
            let mut b = [0u8; uapi::UVERBS_WC_LEN];
            for i in 0..pending {
                st.ring.read(st.geom.slot_off(cons), &mut b).ok_or(EINVAL)?;
                ring.write(geom.slot_off(i), &b).ok_or(EINVAL)?;
                cons = st.geom.next(cons);
            }
            ring.store_release(PRODUCER_OFF, pending);
            st.geom = geom;
            st.producer = pending;
            (
                core::mem::replace(&mut st.ring, ring),
                core::mem::replace(&mut st._mmap, mmap),
            )
        };
        // librxe maps the new ring from this answer (the old mapping stays valid until it
        // unmaps it: the old buffer lives until its mmap entry is freed).
        udata.respond(&mi)?;
        Ok(geom.capacity())
    }

    /// Posts a completion. `Err` if the CQ is full (the consumer gets a CQ error event).
    pub(crate) fn post(&self, cqe: &Cqe, solicited: bool) -> Result {
        let mut st = self.st.lock();
        if st.dead {
            return Err(EINVAL);
        }
        let cons = st.ring.load_acquire(CONSUMER_OFF) & st.geom.mask;
        if st.geom.full(st.producer, cons) {
            self.handle.overrun();
            return Err(ENOSPC);
        }
        st.ring
            .write(st.geom.slot_off(st.producer), &cqe.encode())
            .ok_or(EINVAL)?;
        st.producer = st.geom.next(st.producer);
        st.ring.store_release(PRODUCER_OFF, st.producer);
        let notify = st.notify & CQ_NEXT_COMP != 0 || (st.notify & CQ_SOLICITED != 0 && solicited);
        if notify {
            st.notify = 0;
        }
        drop(st);
        // Outside the lock: a kernel consumer's handler may poll right away.
        if notify {
            self.handle.notify();
        }
        Ok(())
    }

    /// Kernel consumers: takes up to `max` completions, oldest first.
    pub(crate) fn poll(&self, max: usize, mut sink: impl FnMut(usize, &Cqe)) -> usize {
        let st = self.st.lock();
        let mut cons = st.ring.load_acquire(CONSUMER_OFF) & st.geom.mask;
        let mut n = 0;
        while n < max && cons != st.producer {
            let mut b = [0u8; uapi::UVERBS_WC_LEN];
            if st.ring.read(st.geom.slot_off(cons), &mut b).is_some() {
                sink(n, &Cqe::decode(&b));
                n += 1;
            }
            cons = st.geom.next(cons);
        }
        st.ring.store_release(CONSUMER_OFF, cons);
        n
    }

    pub(crate) fn arm(&self, flags: u32) -> i32 {
        let mut st = self.st.lock();
        st.notify |= flags & CQ_SOLICITED_MASK;
        let cons = st.ring.load_acquire(CONSUMER_OFF) & st.geom.mask;
        i32::from(flags & CQ_REPORT_MISSED_EVENTS != 0 && st.geom.count(st.producer, cons) != 0)
    }

    pub(crate) fn kill(&self) {
        self.st.lock().dead = true;
    }
}

/// A ring shared with userspace plus its mmap registration.
pub(crate) struct Ring {
    buf: Arc<UserBuf>,
    pub(crate) geom: RingGeom,
    _mmap: Option<Mmap>,
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
                _mmap: mmap,
            },
            mi,
        ))
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

/// An address handle: the destination of UD sends, with its route.
pub(crate) struct Ah {
    /// The AH number userspace puts into UD WQEs (set once stored).
    pub(crate) num: AtomicU32,
    pub(crate) pd: usize,
    pub(crate) path: Path,
}

struct SrqState {
    cons: u32,
    /// Armed limit (0 = disarmed): the event fires once fewer WQEs remain.
    limit: u32,
}

/// A shared receive queue: a user ring that several QPs take receive WQEs from.
#[pin_data]
pub(crate) struct Srq {
    pub(crate) pd: usize,
    rq: Ring,
    max_sge: u32,
    handle: SrqHandle,
    /// A kernel consumer's SRQ (posted through `post_srq_recv`, not mapped).
    kernel: bool,
    #[pin]
    st: SpinLockBh<SrqState>,
    /// Serializes kernel consumers' posts (any context, interrupts maybe disabled).
    #[pin]
    post_lock: SpinLockIrq<()>,
}

/// `IB_SRQ_MAX_WR` and `IB_SRQ_LIMIT`.
const SRQ_MAX_WR: u32 = 1;
const SRQ_LIMIT: u32 = 2;

impl Srq {
    pub(crate) fn new(
        pd: usize,
        attr: &mut crate::sys::ib_srq_attr,
        handle: SrqHandle,
        udata: Option<&Udata>,
    ) -> Result<Arc<Srq>> {
        // librxe's response: mmap info, then the SRQ number and a reserved word.
        if udata.is_some_and(|u| u.out_len() < 24)
            || attr.max_sge as usize > uapi::MAX_SGE
            || attr.max_wr == 0
        {
            return Err(EINVAL);
        }
        let max_sge = attr.max_sge.max(1);
        let (rq, mi) = Ring::new(attr.max_wr, uapi::rq_elem(max_sge), udata)?;
        if attr.srq_limit > rq.geom.capacity() {
            return Err(EINVAL);
        }
        if let Some(u) = udata {
            let mut resp = [0u8; 24];
            resp[..16].copy_from_slice(&mi);
            u.respond(&resp)?;
        }
        attr.max_wr = rq.geom.capacity();
        attr.max_sge = max_sge;
        let limit = attr.srq_limit;
        Arc::pin_init(
            try_pin_init!(Srq {
                pd,
                rq,
                max_sge,
                handle,
                kernel: udata.is_none(),
                st <- new_spinlock_bh!(SrqState { cons: 0, limit }),
                post_lock <- new_spinlock_irq!(()),
            }),
            GFP_KERNEL,
        )
    }

    /// Takes the next receive WQE: `None` if the queue is empty, `Some(Err)` if the slot
    /// does not decode (it is consumed either way).
    pub(crate) fn take(&self, into: &mut RecvWqe) -> Option<core::result::Result<(), ()>> {
        let mut st = self.st.lock();
        let prod = self.rq.producer();
        if st.cons == prod {
            return None;
        }
        let mut buf = [0u8; uapi::RECV_WQE_HDR + uapi::MAX_SGE * uapi::SGE_LEN];
        let wqe = self
            .rq
            .read_slot(st.cons, &mut buf)
            .ok_or(())
            .and_then(|s| into.decode_into(s, self.max_sge as usize).map_err(|_| ()));
        st.cons = self.rq.geom.next(st.cons);
        self.rq.publish_consumer(st.cons);
        let fire = st.limit != 0 && self.rq.geom.count(prod, st.cons) < st.limit;
        if fire {
            st.limit = 0;
        }
        drop(st);
        if fire {
            self.handle.limit_reached();
        }
        Some(wqe)
    }

    /// A kernel consumer posts a receive work request.
    pub(crate) fn post_kernel(&self, w: &RecvWqe) -> Result {
        if !self.kernel {
            return Err(EINVAL);
        }
        self.rq.push_recv(&self.post_lock, self.max_sge, w)
    }

    pub(crate) fn modify(&self, attr: &crate::sys::ib_srq_attr, mask: u32) -> Result {
        if mask & SRQ_MAX_WR != 0 || mask & !(SRQ_MAX_WR | SRQ_LIMIT) != 0 {
            return Err(EOPNOTSUPP);
        }
        if mask & SRQ_LIMIT != 0 {
            if attr.srq_limit > self.rq.geom.capacity() {
                return Err(EINVAL);
            }
            self.st.lock().limit = attr.srq_limit;
        }
        Ok(())
    }

    pub(crate) fn query(&self, attr: &mut crate::sys::ib_srq_attr) {
        attr.max_wr = self.rq.geom.capacity();
        attr.max_sge = self.max_sge;
        attr.srq_limit = self.st.lock().limit;
    }
}
