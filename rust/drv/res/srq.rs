// SPDX-License-Identifier: GPL-2.0
//! Shared receive queues: a ring several QPs take receive WQEs from, with the limit
//! event.

use super::ring::Ring;
use crate::kabi::lock::{new_spinlock_bh, new_spinlock_irq, SpinLockBh, SpinLockIrq};
use crate::kabi::verbs::{SrqHandle, Udata};
use crate::proto::uapi::{self, RecvWqe};
use kernel::prelude::*;
use kernel::sync::Arc;

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
    /// `destroy_srq`: withdraws the ring from mmap in process context (QPs may drop the
    /// last reference later, in softirq).
    pub(crate) fn unpublish(&self) {
        self.rq.unpublish();
    }

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

    /// Takes the next receive WQE if `ready` accepts it once decoded into `into`:
    /// `None` if the queue is empty, `Some(Err)` if the slot does not decode (it is
    /// consumed), `Some(Ok(false))` if `ready` refused it (it stays on the queue).
    pub(crate) fn take(
        &self,
        into: &mut RecvWqe,
        ready: impl FnOnce(&RecvWqe) -> bool,
    ) -> Option<core::result::Result<bool, ()>> {
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
        if wqe.is_ok() && !ready(into) {
            return Some(Ok(false));
        }
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
        Some(wqe.map(|()| true))
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
