// SPDX-License-Identifier: GPL-2.0
//! The completer executor: an ACK, NAK, READ response or atomic acknowledgement, run
//! through the protocol core's completer ([`rc::comp`], [`rc::req`]): completes the WQEs
//! it covers, places READ responses and atomic results, goes back or waits out an RNR
//! NAK as the core decides; with selective retransmission, READ responses are placed in
//! any order and their holes asked for again ([`ReadRepair`] through [`ReadIo`]).

use super::super::tx::Path;
use super::mem::WqeCache;
use super::sched::mono_ns;
use super::{selmode, Qp, State};
use crate::proto::bth::Bth;
use crate::proto::ccwire::CAP_CC;
use crate::proto::exthdr::{Reth, Syndrome};
use crate::proto::opcode::{flags as f, op};
use crate::proto::packet::{Ext, Packet};
use crate::proto::psn::Psn;
use crate::proto::rc::comp::Reply;
use crate::proto::rc::req::{self, ReadResp, Slot};
use crate::proto::rc::{self as rcore, DEFAULT_PKEY};
use crate::proto::rdrep::{ReadPort, ReadRepair, ReadSpan};
use crate::proto::sel::{self, ProbeDelay};
use crate::proto::uapi::{self, wc_status};
use crate::proto::verify::{OnFail, Outcome, CAP_VERIFY, XF_VFAIL};

impl Qp {
    /// An ACK, NAK or READ response arrived.
    pub(crate) fn on_response(&self, pkt: &Packet<'_>, alone: bool) {
        let mut st = self.st.lock();
        self.handle_response(&mut st, pkt);
        if alone {
            self.batch_end(&mut st);
        }
    }

    fn handle_response(&self, st: &mut State, pkt: &Packet<'_>) {
        if !st.state.sending() {
            self.dev.stats.drop_state.inc();
            return;
        }
        let psn = pkt.bth.psn;
        st.cc.peer = pkt.bth.caps & CAP_CC != 0;
        if let Some(e) = pkt.ts_echo() {
            self.cc_echo(st, e);
        }
        if !st.sel_seen && self.sel_mode == selmode::AUTO {
            st.sel_seen = true;
            if pkt.bth.caps & sel::CAP_SELECTIVE != 0 {
                st.sel_tx = true;
                self.dev.stats.sel_negotiated.inc();
            } else {
                self.dev.stats.sel_fallback.inc();
            }
        }
        if !st.vfy_seen {
            // Verified WRITEs need the extended header: selective retransmission.
            st.vfy_seen = true;
            if self.vfy_offer && st.sel_tx && pkt.bth.caps & CAP_VERIFY != 0 {
                st.vfy_tx = true;
                self.dev.stats.verify_negotiated.inc();
            }
        }
        // (Its capability bits above still describe the peer, and may release a WRITE
        // that waited for them.)
        if st.req.ghost(psn) {
            self.dev.stats.ghost_resp.inc();
            self.more_to_send(st);
            return;
        }
        if pkt.bth.xflags & XF_VFAIL != 0 && pkt.info.opcode == op::RC_ACK && st.vfy_tx {
            // A verified WRITE failed its check at the responder.
            match pkt.vres() {
                Some(Ok(v)) if v.outcome == Outcome::Mismatch => {
                    st.heard();
                    self.on_vfail(st, psn, v.attempt);
                }
                _ => {
                    self.dev.stats.drop_malformed.inc();
                    self.more_to_send(st);
                }
            }
            return;
        }
        if let Some(aeth) = pkt.aeth().filter(|_| pkt.info.has(f::AETH)) {
            if matches!(aeth.syndrome, Syndrome::Rnr(_)) {
                self.dev.stats.rnr_nak_rcvd.inc();
            }
            match st.req.on_syndrome(aeth.syndrome) {
                Reply::Ack => {}
                Reply::RnrWait { us } => {
                    self.ack_upto(st, psn, false);
                    self.rewind(st, psn);
                    st.req.rnr_wait = true;
                    self.timer.arm_us(us);
                    return;
                }
                Reply::GoBack => {
                    self.dev.stats.seq_nak_rcvd.inc();
                    self.ack_upto(st, psn, false);
                    self.rewind(st, psn);
                    self.dev.stats.retransmits.inc();
                    self.send_work.queue();
                    return;
                }
                Reply::Fail { status, ack_first } => {
                    if ack_first {
                        self.ack_upto(st, psn, false);
                    }
                    self.fail(st, status);
                    return;
                }
                Reply::Malformed => {
                    // (Its capability bits counted: a WRITE held for them may go.)
                    self.dev.stats.drop_malformed.inc();
                    self.more_to_send(st);
                    return;
                }
            }
        }
        if pkt.info.opcode == op::RC_ACK {
            let before = st.req.comp_psn;
            self.ack_upto(st, psn, true);
            if let Some(s) = pkt.sack() {
                self.on_sack(st, &s, before);
            }
        } else if pkt.info.opcode == op::RC_ATOMIC_ACK {
            self.atomic_response(st, pkt);
        } else if pkt.info.has(f::PAYLOAD) {
            st.rd.response_seen();
            if self.placement_response(st, pkt) {
                // (An ATOMIC WRITE or FLUSH answered.)
            } else if st.sel_tx {
                self.read_response_sel(st, pkt);
            } else {
                self.read_response(st, pkt);
            }
        }
        st.heard();
        if st.sel_tx {
            let a = if pkt.info.opcode == op::RC_ACK {
                psn.add(1)
            } else {
                psn
            };
            st.req.acked_to(a);
            self.settle(st);
        }
        // Round trip: an ACK covers every PSN up to its own, a READ response only its own
        // (and one answering a re-request says nothing of one round trip).
        let covered = pkt.info.opcode == op::RC_ACK
            || pkt.info.opcode == op::RC_ATOMIC_ACK
            || pkt.bth.xflags & sel::XF_RETX == 0;
        if covered && st.pto.covers(psn) {
            st.pto.sample(mono_ns());
        }
        // The transport timer measures silence, not the age of the oldest request: a long
        // READ response stream or a large window must not look like a loss.
        if !st.req.idle() {
            self.arm_retx(st);
        }
        self.more_to_send(st);
    }

    /// Queues the requester if WQEs wait to be sent (sending more is requester work:
    /// leave the softirq to another CPU).
    fn more_to_send(&self, st: &State) {
        if self.sq.producer() != st.req.next || st.req.rnr_wait {
            self.send_work.queue();
        }
    }

    /// Completes every SEND/WRITE whose last PSN an ACK of `psn` covers (inclusive if
    /// `incl`), then moves the completer's PSN (never past a response still expected).
    pub(super) fn ack_upto(&self, st: &mut State, psn: Psn, incl: bool) {
        while st.req.acked_head(&st.slots, psn, incl) {
            self.complete_send(st, wc_status::SUCCESS);
        }
        st.req.ack_done(&st.slots, psn, incl, st.mtu);
    }

    fn atomic_response(&self, st: &mut State, pkt: &Packet<'_>) {
        let psn = pkt.bth.psn;
        // The response implicitly acknowledges every request before it.
        self.ack_upto(st, psn, false);
        let (true, Some(ack)) = (
            st.slots.get(st.req.cons as usize).is_some(),
            pkt.atomic_ack(),
        ) else {
            return;
        };
        let Some((i, s)) = st.req.atomic_resp(&st.slots, psn) else {
            self.dev.stats.dup_or_ooo_resp.inc();
            return;
        };
        // The original value lands in the local buffer in host byte order.
        if !self.deliver(st, i, 0, &ack.orig.to_ne_bytes(), s.length) {
            return;
        }
        st.req.response_done(psn);
        self.complete_send(st, wc_status::SUCCESS);
    }

    /// The zero-length READ response that answers an ATOMIC WRITE or FLUSH: completes it
    /// at the head (`true`: the packet was one).
    fn placement_response(&self, st: &mut State, pkt: &Packet<'_>) -> bool {
        let psn = pkt.bth.psn;
        if pkt.info.opcode != op::RC_READ_RESP_ONLY || !pkt.payload.is_empty() {
            return false;
        }
        if !self
            .slot_of(st, psn)
            .is_some_and(|(_, s)| rcore::placement_op(s.opcode))
        {
            return false;
        }
        // The response implicitly acknowledges every request before it.
        self.ack_upto(st, psn, false);
        if st.req.placement_resp(&st.slots, psn).is_some() {
            st.req.response_done(psn);
            self.complete_send(st, wc_status::SUCCESS);
        } else {
            self.dev.stats.dup_or_ooo_resp.inc();
        }
        true
    }

    /// A verified WRITE failed its check (attempt `attempt`) and its resend is to start at
    /// `psn`: it is sent again from there, or, its retries spent, completes with
    /// `REM_OP_ERR`.
    fn on_vfail(&self, st: &mut State, psn: Psn, attempt: u8) {
        // Everything before it was executed (and its WRITEs checked).
        self.ack_upto(st, psn, false);
        let retries = self.dev.knobs.verify().retries();
        let prod = self.sq.producer();
        let (r, i) =
            st.req
                .verify_failed(&mut st.slots, &self.sq.geom, prod, psn, attempt, retries);
        match r {
            OnFail::Stale => self.dev.stats.dup_or_ooo_resp.inc(),
            OnFail::Resend | OnFail::Again => {
                if r == OnFail::Resend {
                    self.dev.stats.verify_resent.inc();
                }
                self.dev.stats.retransmits.inc();
                st.pto.cancel();
                self.send_work.queue();
            }
            OnFail::Fail => {
                self.dev.stats.verify_errors.inc();
                self.fail_from(st, i, wc_status::REM_OP_ERR);
            }
        }
    }

    /// Writes response data into the scatter list of WQE `i` at `off` (at most `limit`
    /// bytes in all); on failure the QP fails and `false` is returned. `false` too, with
    /// the QP intact, when on-demand-paged pages there are being faulted in: the packet
    /// is dropped as if lost, and the request is sent again.
    fn deliver(&self, st: &mut State, i: u32, off: u32, data: &[u8], limit: u32) -> bool {
        let Ok(wqe) = self.take_wqe(&mut st.comp, i) else {
            self.fail(st, wc_status::LOC_QP_OP_ERR);
            return false;
        };
        let status = match &wqe.payload {
            uapi::Payload::Sges { sge, num } => {
                let sge = sge.get(..*num).unwrap_or(&[]);
                if off.saturating_add(data.len() as u32) > limit {
                    wc_status::LOC_PROT_ERR
                } else if self.scatter(sge, off, data).is_some() {
                    wc_status::SUCCESS
                } else if self.scatter_odp_miss(sge, off, data.len()) {
                    // On-demand-paged pages being faulted in: dropped (see above).
                    st.comp.put(wqe);
                    self.dev.stats.odp_wait.inc();
                    return false;
                } else {
                    wc_status::LOC_PROT_ERR
                }
            }
            uapi::Payload::Inline { .. } => wc_status::LOC_QP_OP_ERR,
        };
        st.comp.put(wqe);
        if status != wc_status::SUCCESS {
            self.fail(st, status);
            return false;
        }
        true
    }

    /// A READ response towards an IBTA responder: taken in PSN order only; one skipping
    /// ahead makes the READ ask again from the first missing response (once per gap).
    fn read_response(&self, st: &mut State, pkt: &Packet<'_>) {
        let psn = pkt.bth.psn;
        // A response implicitly acknowledges every request before its READ.
        self.ack_upto(st, psn, false);
        let prod = self.sq.producer();
        match st
            .req
            .read_resp(&mut st.slots, &self.sq.geom, prod, psn, st.mtu)
        {
            ReadResp::Nothing => {}
            ReadResp::Stale => self.dev.stats.dup_or_ooo_resp.inc(),
            ReadResp::Gap(_) => {
                self.dev.stats.dup_or_ooo_resp.inc();
                self.dev.stats.retransmits.inc();
                self.send_work.queue();
            }
            ReadResp::Place { slot, off, length } => {
                let data = pkt.payload;
                if !self.deliver(st, slot, off, data, length) {
                    return;
                }
                if st
                    .req
                    .read_placed(&mut st.slots, slot, psn, off, data.len() as u32)
                {
                    self.complete_send(st, wc_status::SUCCESS);
                }
            }
        }
    }

    /// The sent WQE (slot index and state) whose PSN span holds `psn`.
    pub(super) fn slot_of(&self, st: &State, psn: Psn) -> Option<(u32, Slot)> {
        self.find_slot(&st.slots, st.req.cons, psn)
    }

    /// The WQE among `slots`, from the oldest not completed (`sq_cons`), whose PSN span
    /// holds `psn` (what [`Qp::slot_of`] finds, for callers holding other parts of the
    /// state).
    fn find_slot(&self, slots: &[Slot], sq_cons: u32, psn: Psn) -> Option<(u32, Slot)> {
        req::find(slots, &self.sq.geom, sq_cons, self.sq.producer(), psn)
    }

    /// The READ slot whose PSN span holds `psn`.
    fn read_slot_of(&self, st: &State, psn: Psn) -> Option<(u32, Slot)> {
        self.slot_of(st, psn).filter(|(_, s)| s.is_read())
    }

    /// The READ repair state and, beside it, the parts of the state its requests need.
    pub(super) fn read_io<'a>(&'a self, st: &'a mut State) -> (&'a mut ReadRepair, ReadIo<'a>) {
        let State {
            rd,
            slots,
            req,
            comp,
            path,
            mtu,
            dest_qpn,
            pto,
            ..
        } = st;
        let io = ReadIo {
            qp: self,
            slots,
            sq_cons: req.cons,
            comp,
            path: path.as_ref(),
            mtu: *mtu,
            dest_qpn: *dest_qpn,
            pto,
        };
        (rd, io)
    }

    /// READ response with selective retransmission: placed at its offset whatever its
    /// order and recorded in `rd`; READs complete in order once all their PSNs are in;
    /// holes are requested again (only the missing ranges, as [`ReadRepair`] decides).
    fn read_response_sel(&self, st: &mut State, pkt: &Packet<'_>) {
        let psn = pkt.bth.psn;
        self.ack_upto(st, psn, false);
        let Some((i, s)) = self.read_slot_of(st, psn) else {
            self.dev.stats.dup_or_ooo_resp.inc();
            return;
        };
        if !st.rd.wanted(st.req.comp_psn, psn) {
            self.dev.stats.dup_or_ooo_resp.inc();
            return;
        }
        let off = (psn.diff(s.first_psn).max(0) as u32).saturating_mul(st.mtu);
        if !self.deliver(st, i, off, pkt.payload, s.length) {
            return;
        }
        let retx = pkt.bth.xflags & sel::XF_RETX != 0;
        if st.rd.received(psn, retx) {
            // A hole we asked for again, filled by the original response: we asked too
            // early.
            self.dev.stats.sack_spurious.inc();
        }
        if psn != st.req.comp_psn {
            self.dev.stats.ooo_kept.inc();
        }
        self.read_progress(st);
        let comp = st.req.comp_psn;
        let (rd, mut io) = self.read_io(st);
        if rd.after_response(comp, s.first_psn, psn, retx, &mut io) {
            self.dev.stats.sack_again.inc();
        }
    }

    /// Selective READs complete out of step with ACKs: a READ at the head may have all
    /// its responses while a WRITE behind it was acknowledged earlier (and skipped). Completes
    /// whatever the responses and acknowledgements received so far allow.
    fn settle(&self, st: &mut State) {
        let mut budget = self.sq.geom.capacity() + 1;
        while budget > 0 {
            budget -= 1;
            let before = st.req.cons;
            self.read_progress(st);
            let a = st.req.acked;
            self.ack_upto(st, a, false);
            if st.req.cons == before {
                break;
            }
        }
    }

    /// Completes the READs at the head of the queue whose every response arrived.
    fn read_progress(&self, st: &mut State) {
        while st.req.read_head_done(&mut st.slots, st.mtu, &mut st.rd) {
            self.complete_send(st, wc_status::SUCCESS);
        }
    }
}

/// The requester's outstanding READs and the means to request their responses again,
/// for [`ReadRepair`]: borrowed from a [`State`] beside its `rd` ([`Qp::read_io`]).
pub(super) struct ReadIo<'a> {
    qp: &'a Qp,
    slots: &'a [Slot],
    sq_cons: u32,
    comp: &'a mut WqeCache,
    path: Option<&'a Path>,
    mtu: u32,
    dest_qpn: u32,
    pto: &'a mut ProbeDelay,
}

impl ReadIo<'_> {
    /// Sends a READ request for `n` response PSNs of READ slot `i` starting at `psn`.
    pub(super) fn request(&mut self, i: u32, psn: Psn, n: u32, xflags: u8) {
        let Some(s) = self.slots.get(i as usize).copied() else {
            return;
        };
        let Ok(wqe) = self.qp.take_wqe(self.comp, i) else {
            return;
        };
        let (va, rkey) = (wqe.remote_addr, wqe.rkey);
        self.comp.put(wqe);
        let Some(path) = self.path else {
            return;
        };
        let mtu = self.mtu.max(1);
        let off = s.offset_of(psn, mtu).min(s.length);
        let len = n.saturating_mul(mtu).min(s.length - off);
        let bth = Bth {
            opcode: op::RC_READ_REQ,
            pkey: DEFAULT_PKEY,
            dqpn: self.dest_qpn,
            ack_req: true,
            psn,
            caps: self.qp.offer(),
            xflags,
            ..Bth::default()
        };
        let ext = Ext {
            reth: Some(Reth {
                va: va.wrapping_add(u64::from(off)),
                rkey,
                len,
            }),
            ..Ext::default()
        };
        self.qp.dev.xmit_hdr(path, bth, ext);
    }
}

impl ReadPort for ReadIo<'_> {
    fn span(&self, psn: Psn) -> Option<ReadSpan> {
        self.qp
            .find_slot(self.slots, self.sq_cons, psn)
            .filter(|(_, s)| s.is_read())
            .map(|(i, s)| s.read_span(i))
    }

    fn ask(&mut self, span: &ReadSpan, psn: Psn, n: u32) {
        self.pto.resent(psn, psn.add(n));
        self.request(span.tag, psn, n, sel::XF_RETX);
        // A request, like a NAK, carries no data: the responses it brings are counted by
        // the responder, which sends them again (unless it never saw the original).
        self.qp.dev.stats.rd_rereq.inc();
    }
}
