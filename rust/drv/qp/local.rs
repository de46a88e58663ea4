// SPDX-License-Identifier: GPL-2.0
//! Local operations: work requests the requester executes without sending a packet
//! (`IB_WR_REG_MR` from kernel consumers, `IB_WR_LOCAL_INV`), and the remote invalidation
//! a SEND with invalidate asks of the responder. The rules (keys, generations, states)
//! are the protocol core's ([`crate::proto::mr`]).

use super::{Qp, State};
use crate::proto::mr::Reg;
use crate::proto::uapi::{wc_status, wr, SendWqe};

impl Qp {
    /// Whether the requester may execute local operation `i` now: only at the head of
    /// the send queue, once every WQE before it has completed (rdma_rxe waits the same
    /// way for LOCAL_INV; for REG_MR it only costs a round trip of pipelining).
    pub(super) fn local_ready(st: &State, i: u32) -> bool {
        i == st.req.cons
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
                mr.register(&reg, self.pd).inspect(|()| self.dev.stats.mr_reg.inc())
            }
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
