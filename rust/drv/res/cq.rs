// SPDX-License-Identifier: GPL-2.0
//! Completion queues: a ring mapped into the owning process (or, for a kernel consumer,
//! polled through `poll_cq`), notification arming, resize.

use super::ring::publish_ring;
use crate::kabi::lock::{new_spinlock_irq, SpinLockIrq};
use crate::kabi::mem::UserBuf;
use crate::kabi::verbs::{CqHandle, Mmap, Udata};
use crate::proto::uapi::{self, Cqe, RingGeom, CONSUMER_OFF, CQE_SLOT, PRODUCER_OFF};
use kernel::prelude::*;
use kernel::sync::Arc;

/// IB CQ notification flags.
const CQ_SOLICITED: u32 = 1;
const CQ_NEXT_COMP: u32 = 2;
const CQ_SOLICITED_MASK: u32 = 3;
const CQ_REPORT_MISSED_EVENTS: u32 = 4;

struct CqState {
    /// The ring (replaced by a resize) and its mmap registration.
    ring: Arc<UserBuf>,
    geom: RingGeom,
    mmap: Option<Mmap>,
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
    st: SpinLockIrq<CqState>,
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
                st <- new_spinlock_irq!(CqState {
                    ring,
                    geom,
                    mmap,
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
                core::mem::replace(&mut st.mmap, mmap),
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

    /// `destroy_cq`: no completion is posted any more, and the ring is withdrawn from
    /// mmap here, in process context (see [`crate::kabi::verbs::MmapSlot`]): a QP may
    /// drop the last reference to the CQ later, in softirq.
    pub(crate) fn kill(&self) {
        let mmap = {
            let mut st = self.st.lock();
            st.dead = true;
            st.mmap.take()
        };
        // (Removed outside the lock: removal takes a mutex.)
        drop(mmap);
    }
}
