// SPDX-License-Identifier: GPL-2.0
//! Local operations: work requests the requester executes without sending a packet
//! (`IB_WR_REG_MR` from kernel consumers, `IB_WR_LOCAL_INV`, BIND_MW), and the remote
//! invalidation a SEND with invalidate asks of the responder. The rules (keys,
//! generations, states) are the protocol core's ([`crate::proto::mr`],
//! [`crate::proto::mw`]).

use super::{Qp, State};
use crate::proto::mr::Reg;
use crate::proto::mw::BindReq;
use crate::proto::rc::req::Slot;
use crate::proto::uapi::{wc_status, wr, SendWqe};

/// Where the requester is after a local operation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Local {
    /// It waits for the WQEs before it to complete.
    Wait,
    /// Executed and completed: go on.
    Done,
    /// Failed: the QP is in the error state.
    Failed,
}

impl Qp {
    /// Whether the requester may execute local operation `i` now: only at the head of
    /// the send queue, once every WQE before it has completed (rdma_rxe waits the same
    /// way for LOCAL_INV; for REG_MR it only costs a round trip of pipelining).
    pub(super) fn local_ready(st: &State, i: u32) -> bool {
        i == st.req.cons
    }

    /// The requester reached local operation `w` in slot `i`: waits for the WQEs before
    /// it, or executes and completes it (or fails the QP).
    pub(super) fn local_step(&self, st: &mut State, i: u32, w: &SendWqe) -> Local {
        if !Self::local_ready(st, i) {
            return Local::Wait;
        }
        match self.local_op(w) {
            Ok(()) => {
                if let Some(s) = st.slots.get_mut(i as usize) {
                    *s = Slot {
                        wr_id: w.wr_id,
                        opcode: w.opcode,
                        flags: w.flags,
                        ..Slot::default()
                    };
                }
                st.req.next = self.sq.geom.next(i);
                self.complete_send(st, wc_status::SUCCESS);
                Local::Done
            }
            Err(status) => {
                self.fail_at(st, status);
                Local::Failed
            }
        }
    }

    /// Executes local operation `w`; `Err(status)` completes it with that status.
    pub(super) fn local_op(&self, w: &SendWqe) -> core::result::Result<(), u32> {
        let err = wc_status::LOC_QP_OP_ERR;
        let r = match w.opcode {
            // A user ring cannot name a kernel MR.
            wr::REG_MR if self.kernel && !self.ud() => {
                let b = w.bind();
                let mr = self.dev.mr_at(b.mr_lkey).ok_or(err)?;
                let reg = Reg {
                    key: b.rkey,
                    access: b.access,
                    iova: b.addr,
                    len: b.length,
                };
                mr.register(&reg, self.pd)
                    .inspect(|()| self.dev.stats.mr_reg.inc())
            }
            wr::BIND_MW if !self.ud() => return self.bind_mw(w),
            wr::LOCAL_INV if !self.ud() => self
                .dev
                .invalidate(w.ex, self.pd)
                .inspect(|()| self.dev.stats.mr_inv_local.inc()),
            _ => return Err(err),
        };
        r.map_err(|_| {
            self.dev.stats.key_errors.inc();
            err
        })
    }

    /// BIND_MW: binds the window `w` names to part of an MR of this QP's PD.
    fn bind_mw(&self, w: &SendWqe) -> core::result::Result<(), u32> {
        let err = wc_status::MW_BIND_ERR;
        let b = w.bind();
        let win = self.dev.mw_at(b.mw_rkey).ok_or(err)?;
        let mr = if b.length > 0 {
            Some(self.dev.lookup_mr(b.mr_lkey, self.pd, 0).ok_or(err)?)
        } else {
            None
        };
        let req = BindReq {
            mw_rkey: b.mw_rkey,
            rkey: b.rkey,
            addr: b.addr,
            len: b.length,
            access: b.access,
        };
        match win.bind(&req, self.pd, mr, self.qpn) {
            Ok(()) => {
                self.dev.stats.mw_bind.inc();
                Ok(())
            }
            Err(_) => {
                self.dev.stats.key_errors.inc();
                Err(err)
            }
        }
    }

    /// A SEND with invalidate from the peer names `rkey`: invalidates it (an MR of this
    /// QP's PD); `false` if that is refused.
    pub(super) fn remote_invalidate(&self, rkey: u32) -> bool {
        match self.dev.invalidate(rkey, self.pd) {
            Ok(()) => {
                self.dev.stats.mr_inv_remote.inc();
                true
            }
            Err(_) => {
                self.dev.stats.key_errors.inc();
                false
            }
        }
    }
}
