// SPDX-License-Identifier: GPL-2.0
//! UD and GSI datagrams: one packet per WQE with a DETH, to the address handle the WQE
//! names; a receive gets the 40-byte network header area, then the payload.

use super::super::tx::{Payload, TxPkt};
use super::mem::ODP_MISS;
use super::{Qp, State};
use crate::proto::bth::Bth;
use crate::proto::exthdr::Deth;
use crate::proto::opcode::op;
use crate::proto::packet::{Ext, Packet};
use crate::proto::rc::req::Slot;
use crate::proto::rc::{self, DEFAULT_PKEY};
use crate::proto::uapi::{self, send_flags, wc_flags, wc_opcode, wc_status, Cqe, SendWqe};

/// Bytes at the start of a UD receive buffer that hold the network header.
const GRH_LEN: usize = 40;
/// `RDMA_NETWORK_IPV4` / `RDMA_NETWORK_IPV6`.
const NET_IPV4: u8 = 2;
const NET_IPV6: u8 = 3;

impl Qp {
    /// UD: every WQE is one datagram, complete once it is handed to the network.
    pub(super) fn ud_run(&self, st: &mut State) {
        while st.req.next != self.sq.producer() {
            let i = st.req.next;
            let r = match self.take_wqe(&mut st.cur, i) {
                Ok(w) => {
                    let r = self.ud_send(st, &w).map(|()| Slot {
                        wr_id: w.wr_id,
                        opcode: w.opcode,
                        flags: w.flags,
                        length: w.length,
                        started: true,
                        ..Slot::default()
                    });
                    st.cur.put(w);
                    r
                }
                Err(()) => Err(wc_status::LOC_QP_OP_ERR),
            };
            if !self.handed_over(st, i, r) {
                break;
            }
        }
    }

    pub(super) fn ud_send(&self, st: &mut State, w: &SendWqe) -> core::result::Result<(), u32> {
        let opcode = match w.opcode {
            uapi::wr::SEND => op::UD_SEND_ONLY,
            uapi::wr::SEND_WITH_IMM => op::UD_SEND_ONLY_IMM,
            _ => return Err(wc_status::LOC_QP_OP_ERR),
        };
        if w.length > st.mtu {
            return Err(wc_status::LOC_LEN_ERR);
        }
        let ah = self
            .dev
            .ah(w.ah_num)
            .filter(|a| a.pd == self.pd)
            .ok_or(wc_status::LOC_QP_OP_ERR)?;
        // A Q_Key with the high bit set means "use the QP's own" (IBTA 10.2.5).
        let qkey = if w.remote_qkey & 0x8000_0000 != 0 {
            st.qkey
        } else {
            w.remote_qkey
        };
        let bth = Bth {
            opcode,
            se: w.flags & send_flags::SOLICITED != 0,
            pkey: DEFAULT_PKEY,
            dqpn: w.remote_qpn & rc::MASK24,
            psn: st.req.req_psn,
            pad: rc::pad(w.length),
            ..Bth::default()
        };
        let ext = Ext {
            deth: Some(Deth {
                qkey,
                sqpn: self.qpn,
            }),
            imm: (opcode == op::UD_SEND_ONLY_IMM).then_some(u32::from_be_bytes(w.ex.to_le_bytes())),
            ..Ext::default()
        };
        let fill = |at: u32, d: &mut [u8]| self.gather(w, at, d).map(|()| None);
        let payload = if w.length == 0 {
            Payload::None
        } else {
            Payload::Fill(w.length as usize, &fill)
        };
        let pkt = TxPkt { bth, ext, payload };
        ah.with_path(|path| self.dev.xmit(path, &pkt))
            .map_err(|_| wc_status::LOC_QP_OP_ERR)?
            .map_err(|e| {
                if e == ODP_MISS {
                    wc_status::LOC_PROT_ERR
                } else {
                    e
                }
            })?;
        st.req.req_psn = st.req.req_psn.add(1);
        Ok(())
    }

    /// UD receive: the 40-byte network header, then the payload, into the next WQE.
    pub(super) fn ud_recv(&self, st: &mut State, pkt: &Packet<'_>, ip: &[u8]) {
        let Some(deth) = pkt.deth() else {
            self.dev.stats.drop_malformed.inc();
            return;
        };
        if deth.qkey != st.qkey {
            self.dev.stats.drop_qkey.inc();
            return;
        }
        if self.take_recv_wqe(st, GRH_LEN + pkt.payload.len()).is_err() {
            // Datagrams are unreliable: no receive WQE, no delivery.
            self.dev.stats.drop_no_recv.inc();
            return;
        }
        let wqe = &st.recv.wqe;
        let mut grh = [0u8; GRH_LEN];
        let at = GRH_LEN.saturating_sub(ip.len());
        if let (Some(d), Some(src)) = (grh.get_mut(at..), ip.get(..GRH_LEN.min(ip.len()))) {
            if d.len() == src.len() {
                d.copy_from_slice(src);
            }
        }
        let total = (GRH_LEN + pkt.payload.len()) as u32;
        let sge = wqe.sge.get(..wqe.num).unwrap_or(&[]);
        let ok = total <= wqe.length
            && self.scatter(sge, 0, &grh).is_some()
            && self.scatter(sge, GRH_LEN as u32, pkt.payload).is_some();
        if !ok
            && total <= wqe.length
            && self.rq.is_some()
            && self.scatter_odp_miss(sge, 0, total as usize)
        {
            // On-demand-paged pages being faulted in: the datagram is dropped (UD is
            // unreliable) and the receive stays posted. (A WQE from an SRQ was checked as
            // it was taken, see `take_recv_wqe`; if its pages went since, it completes
            // in error.)
            self.dev.stats.odp_wait.inc();
            return;
        }
        let mut cqe = Cqe {
            wr_id: wqe.wr_id,
            status: if ok {
                wc_status::SUCCESS
            } else {
                wc_status::LOC_LEN_ERR
            },
            opcode: wc_opcode::RECV,
            byte_len: total,
            qp_num: self.qpn,
            src_qp: deth.sqpn,
            wc_flags: wc_flags::GRH,
            port_num: 1,
            // Kernel consumers (the CM) parse the GRH area by this.
            net_type: match (self.kernel, ip.len()) {
                (false, _) => 0,
                (true, 20) => NET_IPV4,
                (true, _) => NET_IPV6,
            },
            ..Cqe::default()
        };
        if let Some(imm) = pkt.imm() {
            cqe.ex = u32::from_ne_bytes(imm.to_be_bytes());
            cqe.wc_flags |= wc_flags::WITH_IMM;
        }
        self.complete_recv(st, cqe, pkt.bth.se);
    }
}
