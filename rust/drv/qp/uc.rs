// SPDX-License-Identifier: GPL-2.0
//! Unreliable connected QPs: the requester sends each SEND or WRITE once, with RC's
//! segmentation and UC's opcodes, and completes it as its last packet leaves; the
//! responder places packets in sequence ([`crate::proto::uc`]) and never acknowledges:
//! a gap drops the message in progress.

use super::req::Next;
use super::Qp;
use super::State;
use crate::proto::opcode::flags as f;
use crate::proto::packet::Packet;
use crate::proto::rc::req::{Seg, Slot, WqeHead};
use crate::proto::rc::Kind;
use crate::proto::uapi::{wc_status, Cqe, SendWqe};
use crate::proto::uc::UcRx;
use crate::sys as b;

impl Qp {
    /// An unreliable connected QP.
    pub(super) fn uc(&self) -> bool {
        self.qp_type == b::ib_qp_type_IB_QPT_UC
    }

    /// Sends every WQE posted (in SQD only those started before the drain).
    pub(super) fn uc_run(&self, st: &mut State) {
        loop {
            let (i, wqe) = match self.next_wqe(st) {
                Next::Stop => break,
                Next::Again => continue,
                Next::Wqe(i, wqe) => (i, wqe),
            };
            let r = match Kind::of_wr(wqe.opcode) {
                Some(k @ (Kind::Send { inv: false, .. } | Kind::Write { .. })) => {
                    self.uc_send(st, &wqe, k)
                }
                _ => Err(wc_status::LOC_QP_OP_ERR),
            };
            st.cur.put(wqe);
            if !self.handed_over(st, i, r) {
                break;
            }
        }
    }

    /// Sends every packet of `wqe` once; returns its slot, to be completed.
    fn uc_send(
        &self,
        st: &mut State,
        wqe: &SendWqe,
        kind: Kind,
    ) -> core::result::Result<Slot, u32> {
        let mtu = st.mtu.max(1);
        let head = WqeHead {
            wr_id: wqe.wr_id,
            opcode: wqe.opcode,
            flags: wqe.flags,
            length: wqe.length,
        };
        let mut slot = st.req.start(&head, mtu);
        loop {
            let seg = Seg::of(&slot, slot.sent / mtu, mtu, false);
            self.data_packet(st, wqe, kind, &slot, &seg, 0)?;
            st.req.data_sent(&mut slot, &seg);
            if seg.last {
                break;
            }
        }
        // Nothing is ever acknowledged: nothing stays outstanding.
        st.req.comp_psn = st.req.req_psn;
        st.req.acked = st.req.req_psn;
        Ok(slot)
    }

    /// A UC request arrived.
    pub(super) fn uc_recv(&self, st: &mut State, pkt: &Packet<'_>) {
        let first = pkt.info.has(f::FIRST);
        let last = pkt.info.has(f::LAST);
        match st.uc.on_packet(pkt.bth.psn, first, last) {
            UcRx::Execute => {}
            UcRx::Restart => self.uc_abort(st),
            UcRx::Drop => {
                self.dev.stats.out_of_seq.inc();
                self.uc_abort(st);
                return;
            }
        }
        let failed = if pkt.info.has(f::SEND) {
            self.recv_send(st, pkt, None).is_err()
        } else if pkt.info.has(f::WRITE) {
            self.recv_write(st, pkt, None).is_err()
        } else {
            true
        };
        if failed {
            // No receive WQE, a length or access error: the message is dropped (UC
            // never answers).
            self.dev.stats.drop_state.inc();
            st.uc.abort();
            self.uc_abort(st);
        }
    }

    /// Gives up the message in progress: a receive WQE from the RQ is used again for the
    /// next message; one already taken from an SRQ completes in error.
    fn uc_abort(&self, st: &mut State) {
        if st.recv.active && self.rq.is_none() {
            let cqe = Cqe {
                wr_id: st.recv.wqe.wr_id,
                status: wc_status::REM_INV_REQ_ERR,
                qp_num: self.qpn,
                ..Cqe::default()
            };
            self.complete_recv(st, cqe, false);
        }
        st.recv.active = false;
        st.write = None;
    }
}
