// SPDX-License-Identifier: GPL-2.0
//! The responder executor: a request run through the protocol core's responder
//! ([`rc::resp`]): the PSN check decides whether it executes, is kept (selective), is a
//! duplicate or earns a NAK; executing places a SEND through the receive WQE or a WRITE
//! through the rkey's MR after the access and bounds checks, answers a READ from memory,
//! performs an atomic; the core then decides the ACK, NAK or RNR NAK and the MSN.

use super::super::res::{access, Mr};
use super::super::tx::{Payload, TxPkt};
use super::Qp;
use super::{selmode, QpState, State, WriteCtx};
use crate::kabi::crc::random_u32;
use crate::kabi::mem::write_barrier;
use crate::proto::bth::Bth;
use crate::proto::ccwire::{CAP_CC, XF_TS};
use crate::proto::exthdr::{flush_level, flush_type, Aeth, AtomicAckEth, NakCode, Reth, Syndrome};
use crate::proto::opcode::{self, flags as f, op};
use crate::proto::packet::{Ext, Packet};
use crate::proto::psn::Psn;
use crate::proto::rc::resp::{Check, Dup};
use crate::proto::rc::{self, DEFAULT_PKEY};
use crate::proto::sel::{self, Sack};
use crate::proto::uapi::{self, wc_flags, wc_opcode, wc_status, Cqe, RecvWqe};
use crate::proto::verify::{self, Outcome, Vcrc, Vres, CAP_VERIFY, XF_VFAIL};
use core::sync::atomic::Ordering;
use kernel::sync::Arc;

/// Why a request did not execute.
pub(super) enum Exec {
    /// Answered with this NAK or RNR NAK.
    Nak(Syndrome),
    /// A verified WRITE (first packet at `first`, this `attempt`) failed its check.
    Vfail { first: Psn, attempt: u8 },
    /// An old copy of the last packet of a verified WRITE being placed again.
    Stale,
}

impl From<Syndrome> for Exec {
    fn from(s: Syndrome) -> Self {
        Exec::Nak(s)
    }
}

impl Qp {
    /// A request arrived; `ip` is its IP header (UD receivers get it in the GRH area).
    /// `Some(psn)`: the packet lies beyond the expected PSN and the QP keeps it; the
    /// caller hands the skb over with [`Qp::keep`].
    pub(crate) fn on_request(&self, pkt: &Packet<'_>, ip: &[u8], alone: bool) -> Option<Psn> {
        let mut st = self.st.lock();
        let kept = self.handle_request(&mut st, pkt, ip);
        if alone && kept.is_none() {
            self.batch_end(&mut st);
        }
        kept
    }

    fn handle_request(&self, st: &mut State, pkt: &Packet<'_>, ip: &[u8]) -> Option<Psn> {
        if !st.state.receiving() {
            self.dev.stats.drop_state.inc();
            return None;
        }
        // The opcode's transport (its top three bits) must be the QP's.
        let transport = if self.ud() {
            opcode::transport(op::UD_SEND_ONLY)
        } else if self.uc() {
            opcode::transport(op::UC_SEND_FIRST)
        } else {
            opcode::transport(op::RC_SEND_FIRST)
        };
        if opcode::transport(pkt.info.opcode) != transport {
            self.dev.stats.drop_opcode.inc();
            return None;
        }
        if self.ud() {
            self.ud_recv(st, pkt, ip);
            return None;
        }
        if self.uc() {
            self.uc_recv(st, pkt);
            return None;
        }
        self.cc_np(st, pkt);
        if pkt.bth.caps & sel::CAP_SELECTIVE != 0 && self.sel_mode != selmode::OFF && !st.peer_sel {
            st.peer_sel = true;
            self.dev.stats.sel_accepted.inc();
        }
        if pkt.bth.caps & CAP_VERIFY != 0 {
            st.peer_vfy = true;
        }
        let psn = pkt.bth.psn;
        let probe = pkt.bth.xflags & sel::XF_PROBE != 0;
        let keep = st.peer_sel && !st.kept.is_empty();
        match st.resp.check(psn, keep, probe) {
            Check::Execute => {
                // (The peer answered: see `SoloHint`.)
                st.pinged |= pkt.info.has(f::SEND) || pkt.info.has(f::WRITE);
            }
            Check::Keep => {
                self.dev.stats.out_of_seq.inc();
                return self.ahead(st, pkt, probe);
            }
            Check::RnrAgain(p) => {
                self.dev.stats.out_of_seq.inc();
                // Our RNR NAK may have been lost: a probe gets it again, so the requester
                // goes back instead of probing forever.
                let t = st.min_rnr_timer;
                self.send_ack(st, p, Syndrome::Rnr(t));
                return None;
            }
            Check::RepairGap(p, attempt) => {
                self.dev.stats.out_of_seq.inc();
                // A verified WRITE is being placed again and this packet cannot go on
                // with it: say where the resend stands (our report may have been lost).
                self.send_vfail(st, p, attempt);
                return None;
            }
            Check::Replace => {
                self.replace(st, pkt);
                return None;
            }
            Check::NakSeq(e) => {
                self.dev.stats.out_of_seq.inc();
                self.send_ack(st, e, Syndrome::Nak(NakCode::PsnSeqErr));
                return None;
            }
            Check::Drop => {
                self.dev.stats.out_of_seq.inc();
                return None;
            }
            Check::Duplicate => {
                self.dev.stats.duplicates.inc();
                let probe_sel = probe && st.peer_sel;
                let read = pkt.info.has(f::READ);
                let atomic = pkt.info.has(f::ATMETH);
                let placement = pkt.info.has(f::FLUSH) || pkt.info.has(f::ATOMIC_WRITE);
                match st
                    .resp
                    .duplicate(&st.replay, psn, (read, atomic, placement), probe_sel)
                {
                    Dup::Read => {
                        // READs are idempotent: answer again from memory.
                        let _ = self.read_request(st, pkt, false);
                        if probe_sel && st.keep.rxw.has_holes() {
                            self.answer_probe(st);
                        }
                    }
                    // Atomics are not: replay the saved result, never execute twice.
                    Dup::Atomic(Some(orig)) => self.send_atomic_ack(st, psn, orig),
                    // Older than anything remembered: the requester has long seen the
                    // answer (it keeps at most that many atomics unanswered).
                    Dup::Atomic(None) => self.dev.stats.replay_miss.inc(),
                    Dup::Probe => self.answer_probe(st),
                    Dup::Placement => self.send_placement_ack(st, psn),
                    Dup::Ack => self.ack_executed(st),
                }
                return None;
            }
        }
        if st.peer_sel && st.keep.rxw.has_holes() {
            self.hole_filled(st, pkt);
        }
        self.in_order(st, pkt, None);
        self.catch_up(st);
        if probe && st.peer_sel && st.keep.rxw.has_holes() {
            self.answer_probe(st);
        }
        None
    }

    /// Processes the request at the expected PSN; `placed`: its payload (that many
    /// bytes) was placed when it arrived early.
    pub(super) fn in_order(&self, st: &mut State, pkt: &Packet<'_>, placed: Option<u32>) {
        let psn = pkt.bth.psn;
        // A READ or atomic answers with responses; an ACK still owed goes before them
        // (they carry later PSNs).
        let responds = pkt.info.has(f::READ)
            || pkt.info.has(f::ATMETH)
            || pkt.info.has(f::FLUSH)
            || pkt.info.has(f::ATOMIC_WRITE);
        if st.resp.in_order(responds) {
            self.ack_executed(st);
        }
        let r = if pkt.info.has(f::SEND) {
            self.recv_send(st, pkt, placed).map_err(Exec::from)
        } else if pkt.info.has(f::WRITE) {
            self.recv_write(st, pkt, placed)
        } else if pkt.info.has(f::READ) {
            self.read_request(st, pkt, true).map_err(Exec::from)
        } else if pkt.info.has(f::ATMETH) {
            self.atomic_request(st, pkt).map_err(Exec::from)
        } else if pkt.info.has(f::ATOMIC_WRITE) {
            self.atomic_write_request(st, pkt).map_err(Exec::from)
        } else if pkt.info.has(f::FLUSH) {
            self.flush_request(st, pkt).map_err(Exec::from)
        } else {
            Err(Exec::Nak(Syndrome::Nak(NakCode::InvalidRequest)))
        };
        match r {
            Ok(()) => {
                // Else the batch's end sends it: one ACK for the receive batch.
                let batching = self.rx_batching.load(Ordering::Acquire);
                let last = pkt.info.has(f::LAST);
                if st
                    .resp
                    .executed(psn, last, pkt.bth.ack_req, responds, batching)
                {
                    self.send_ack(st, psn, rc::ACK);
                }
            }
            Err(Exec::Nak(Syndrome::Rnr(_))) => {
                self.dev.stats.rnr_nak_sent.inc();
                let t = st.min_rnr_timer;
                self.send_ack(st, psn, Syndrome::Rnr(t));
                if st.resp.rnr(st.peer_sel) {
                    self.drop_kept(st);
                }
            }
            Err(Exec::Vfail { first, attempt }) => {
                // The requester sends the WRITE again: its packets are placed again, then
                // this one executes again (the expected PSN stays here).
                st.resp.verify_failed(first, psn, attempt);
                self.send_vfail(st, first, attempt);
            }
            Err(Exec::Stale) => {
                self.dev.stats.duplicates.inc();
                if let Some(r) = st.resp.repair() {
                    self.send_vfail(st, r.next, r.reported);
                }
            }
            Err(Exec::Nak(syn)) => {
                self.dev.stats.nak_sent.inc();
                self.send_ack(st, psn, syn);
                st.state = QpState::Err;
                self.flush(st);
            }
        }
    }

    /// A plain ACK of every request executed, unless the last one was a READ or an
    /// atomic and the requester is an IBTA one (see [`Responder::read_last`]).
    pub(super) fn ack_executed(&self, st: &mut State) {
        if let Some(p) = st.resp.ack_psn(st.peer_sel) {
            self.send_ack(st, p, rc::ACK);
        }
    }

    /// Sends a selective NACK (an ACK of everything before the expected PSN, plus the
    /// holes after it). It goes only to an rrxe requester, which completes a READ or an
    /// atomic only from its own response, so it may name the expected PSN even right
    /// after one.
    pub(super) fn send_sack(&self, st: &mut State, s: Sack) {
        self.dev.stats.sack_sent.inc();
        let p = st.resp.psn.sub(1);
        self.respond(st, p, rc::ACK, None, Some(s));
    }

    pub(super) fn send_ack(&self, st: &mut State, psn: Psn, syndrome: Syndrome) {
        self.respond(st, psn, syndrome, None, None);
    }

    /// Reports a failed check of the verified WRITE starting at `first`: a NAK
    /// (remote operational error, what an IBTA reader would take it for) naming its
    /// first PSN, with the result header.
    fn send_vfail(&self, st: &mut State, first: Psn, attempt: u8) {
        self.dev.stats.nak_sent.inc();
        let v = Vres {
            outcome: Outcome::Mismatch,
            attempt,
        };
        self.respond_v(
            st,
            first,
            Syndrome::Nak(NakCode::RemoteOpErr),
            None,
            None,
            Some(v),
        );
    }

    /// The capability bits a response carries: accepted if the requester offered.
    pub(super) fn accept(st: &State) -> u8 {
        let s = if st.peer_sel { sel::CAP_SELECTIVE } else { 0 };
        let c = if st.cc.offered { CAP_CC } else { 0 };
        let v = if st.peer_vfy { CAP_VERIFY } else { 0 };
        s | c | v
    }

    /// Sends an ACK/NAK, an ATOMIC ACKNOWLEDGE when `atomic_ack` is given, or a SACK.
    pub(super) fn respond(
        &self,
        st: &mut State,
        psn: Psn,
        syndrome: Syndrome,
        atomic_ack: Option<AtomicAckEth>,
        sack: Option<Sack>,
    ) {
        self.respond_v(st, psn, syndrome, atomic_ack, sack, None);
    }

    /// [`Qp::respond`], with the result of a failed check when `vres` is given.
    fn respond_v(
        &self,
        st: &mut State,
        psn: Psn,
        syndrome: Syndrome,
        atomic_ack: Option<AtomicAckEth>,
        sack: Option<Sack>,
        vres: Option<Vres>,
    ) {
        // (Only an ACK echoes a timestamp.)
        let ts_echo = if atomic_ack.is_none() {
            st.cc.take_echo()
        } else {
            None
        };
        let Some(path) = st.path.as_ref() else {
            return;
        };
        let bth = Bth {
            opcode: if atomic_ack.is_some() {
                op::RC_ATOMIC_ACK
            } else {
                op::RC_ACK
            },
            pkey: DEFAULT_PKEY,
            dqpn: st.dest_qpn,
            psn,
            caps: Self::accept(st),
            xflags: if sack.is_some() { sel::XF_EXT } else { 0 }
                | if ts_echo.is_some() { XF_TS } else { 0 }
                | if vres.is_some() { XF_VFAIL } else { 0 },
            ..Bth::default()
        };
        let ext = Ext {
            aeth: Some(Aeth {
                syndrome,
                msn: st.resp.msn,
            }),
            atomic_ack,
            sack,
            ts_echo,
            vres,
            ..Ext::default()
        };
        self.dev.xmit_hdr(path, bth, ext);
        // Every responder ACK/NAK is cumulative up to the expected PSN.
        st.resp.sent();
    }

    /// Decodes the next receive WQE into `st.recv.wqe`. From the RQ it stays posted
    /// until [`Qp::complete_recv`]; from an SRQ it is taken at once (other QPs share the
    /// queue).
    /// Takes the next receive WQE into `st.recv.wqe`; the first `need` bytes of its
    /// buffer are about to be written. A QP's own RQ keeps the WQE posted until it
    /// completes (its readers check the buffer's pages themselves). An SRQ's WQE is
    /// taken for good, so one whose first `need` bytes are on-demand-paged pages being
    /// faulted in stays on the SRQ: RNR NAK (or, for a datagram, a drop).
    pub(super) fn take_recv_wqe(
        &self,
        st: &mut State,
        need: usize,
    ) -> core::result::Result<(), Syndrome> {
        let bad = Syndrome::Nak(NakCode::RemoteOpErr);
        let Some(rq) = &self.rq else {
            let ready = |w: &RecvWqe| {
                need == 0 || self.sges_resident(w.sge.get(..w.num).unwrap_or(&[]), 0, need)
            };
            return match self
                .srq
                .as_ref()
                .and_then(|q| q.take(&mut st.recv.wqe, ready))
            {
                Some(Ok(true)) => Ok(()),
                Some(Ok(false)) => {
                    if self.ud() {
                        self.dev.stats.odp_wait.inc();
                    } else {
                        self.dev.stats.odp_rnr.inc();
                    }
                    Err(Syndrome::Rnr(0))
                }
                Some(Err(())) => Err(bad),
                None => Err(Syndrome::Rnr(0)),
            };
        };
        if st.rq_cons == rq.producer() {
            return Err(Syndrome::Rnr(0));
        }
        let mut buf = [0u8; uapi::RECV_WQE_HDR + uapi::MAX_SGE * uapi::SGE_LEN];
        let s = rq.read_slot(st.rq_cons, &mut buf).ok_or(bad)?;
        st.recv
            .wqe
            .decode_into(s, self.max_recv_sge as usize)
            .map_err(|_| bad)
    }

    pub(super) fn complete_recv(&self, st: &mut State, cqe: Cqe, solicited: bool) {
        if let Some(rq) = &self.rq {
            st.rq_cons = rq.geom.next(st.rq_cons);
            rq.publish_consumer(st.rq_cons);
        }
        if self.rcq.post(&cqe, solicited).is_err() {
            self.dev.stats.cq_overflow.inc();
        }
    }

    /// A SEND's packet found on-demand-paged receive pages being faulted in: RNR NAK.
    fn recv_odp_miss(&self, st: &mut State, first: bool) -> core::result::Result<(), Syndrome> {
        self.dev.stats.odp_rnr.inc();
        st.recv.held = first && self.rq.is_none();
        Err(Syndrome::Rnr(0))
    }

    pub(super) fn recv_send(
        &self,
        st: &mut State,
        pkt: &Packet<'_>,
        placed: Option<u32>,
    ) -> core::result::Result<(), Syndrome> {
        let first = pkt.info.has(f::FIRST);
        if first {
            // (A WQE taken from the SRQ for this first packet, which then got an RNR NAK
            // for pages being faulted in, waits for it to come again.)
            if !(st.recv.active && st.recv.held) {
                self.take_recv_wqe(st, pkt.payload.len())?;
            }
            st.recv.held = false;
            st.recv.active = true;
            st.recv.offset = 0;
            st.recv.seq = pkt.xeth().map(|x| x.wqe_seq);
        }
        let ctx = &st.recv;
        if !ctx.active {
            return Err(Syndrome::Nak(NakCode::InvalidRequest));
        }
        let data = pkt.payload;
        let n = placed.unwrap_or(data.len() as u32);
        let (wr_id, off) = (ctx.wqe.wr_id, ctx.offset);
        let sge = ctx.wqe.sge.get(..ctx.wqe.num).unwrap_or(&[]);
        // On-demand paging: receive buffers being faulted in get an RNR NAK, as in
        // `remote_mr`; the requester sends this packet again. The WQE stays where it is:
        // posted on the QP's own RQ, or (taken from an SRQ) in the receive context.
        if placed.is_none() && !self.sges_resident(sge, off, data.len()) {
            return self.recv_odp_miss(st, first);
        }
        let fits = off.saturating_add(n) <= ctx.wqe.length;
        let copied = !fits || placed.is_some() || self.scatter(sge, off, data).is_some();
        if fits && !copied && self.scatter_odp_miss(sge, off, data.len()) {
            // (Invalidated between the check and the copy.)
            return self.recv_odp_miss(st, first);
        }
        if !fits || !copied {
            let cqe = Cqe {
                wr_id,
                status: wc_status::LOC_LEN_ERR,
                qp_num: self.qpn,
                ..Cqe::default()
            };
            st.recv.active = false;
            self.complete_recv(st, cqe, false);
            return Err(Syndrome::Nak(NakCode::InvalidRequest));
        }
        st.recv.offset = off + n;
        if pkt.info.has(f::LAST) {
            let total = off + n;
            let mut cqe = Cqe {
                wr_id,
                status: wc_status::SUCCESS,
                opcode: wc_opcode::RECV,
                byte_len: total,
                qp_num: self.qpn,
                wc_flags: wc_flags::GRH,
                port_num: 1,
                ..Cqe::default()
            };
            if let Some(imm) = pkt.imm() {
                // Immediate data travels big-endian and is handed to userspace unchanged.
                cqe.ex = u32::from_ne_bytes(imm.to_be_bytes());
                cqe.wc_flags |= wc_flags::WITH_IMM;
            }
            if let Some(rkey) = pkt.ieth() {
                if !self.remote_invalidate(rkey) {
                    cqe.status = wc_status::REM_INV_REQ_ERR;
                    cqe.opcode = 0;
                    st.recv.active = false;
                    self.complete_recv(st, cqe, false);
                    return Err(Syndrome::Nak(NakCode::InvalidRequest));
                }
                cqe.ex = rkey;
                cqe.wc_flags |= wc_flags::WITH_INV;
            }
            st.recv.active = false;
            self.complete_recv(st, cqe, pkt.bth.se);
        }
        Ok(())
    }

    /// The MR a RETH names, after the QP's and the MR's (or memory window's) access
    /// checks and the bounds check; `None` for a zero-length operation (which touches no
    /// memory). Through a window, `reth.va` becomes the address in the MR it reaches.
    fn remote_mr(
        &self,
        st: &State,
        reth: &mut Reth,
        need: i32,
    ) -> core::result::Result<Option<Arc<Mr>>, Syndrome> {
        let acc = Syndrome::Nak(NakCode::RemoteAccessErr);
        if st.access & need == 0 {
            return Err(acc);
        }
        if reth.len == 0 {
            return Ok(None);
        }
        let (mr, at) = self
            .dev
            .remote(
                reth.rkey,
                self.pd,
                self.qpn,
                need,
                reth.va,
                u64::from(reth.len),
            )
            .ok_or(acc)?;
        if !mr.resident(at, reth.len as usize) {
            // On-demand paging: the pages are being faulted in; the requester sends
            // again after the RNR timer (a page fault answered as hardware does).
            self.dev.stats.odp_rnr.inc();
            return Err(Syndrome::Rnr(0));
        }
        reth.va = at;
        Ok(Some(mr))
    }

    pub(super) fn recv_write(
        &self,
        st: &mut State,
        pkt: &Packet<'_>,
        placed: Option<u32>,
    ) -> core::result::Result<(), Exec> {
        let acc = Syndrome::Nak(NakCode::RemoteAccessErr);
        let last = pkt.info.has(f::LAST);
        let vcrc = match pkt.vcrc().filter(|_| last && st.peer_vfy) {
            None => None,
            Some(Ok(v)) => Some(v),
            // A CRC header this end cannot read (an unknown algorithm): the WRITE must
            // not be acknowledged as verified.
            Some(Err(_)) => return Err(Syndrome::Nak(NakCode::InvalidRequest).into()),
        };
        if vcrc.is_some_and(|v| st.resp.stale_attempt(v.attempt)) {
            return Err(Exec::Stale);
        }
        if pkt.info.has(f::FIRST) {
            let mut reth = pkt.reth().ok_or(Syndrome::Nak(NakCode::InvalidRequest))?;
            let mr = self.remote_mr(st, &mut reth, access::REMOTE_WRITE)?;
            st.write = Some(WriteCtx {
                mr,
                va: reth.va,
                resid: reth.len,
                len: reth.len,
                start: reth.va,
                seq: pkt.xeth().map(|x| x.wqe_seq),
                first_psn: pkt.bth.psn,
            });
        }
        let Some(w) = st.write.as_mut() else {
            return Err(Syndrome::Nak(NakCode::InvalidRequest).into());
        };
        let n = placed.unwrap_or(pkt.payload.len() as u32);
        if n > w.resid {
            return Err(Syndrome::Nak(NakCode::InvalidRequest).into());
        }
        if n > 0 && placed.is_none() {
            let mr = w.mr.as_ref().ok_or(acc)?;
            if !mr.resident(w.va, pkt.payload.len()) {
                // (Invalidated since the first packet: as in `remote_mr`.)
                self.dev.stats.odp_rnr.inc();
                return Err(Syndrome::Rnr(0).into());
            }
            if mr.write(w.va, pkt.payload).is_none() {
                // (Invalidated between the check and the copy: an RNR NAK as above.)
                return Err(if mr.odp_miss(w.va, pkt.payload.len()) {
                    self.dev.stats.odp_rnr.inc();
                    Syndrome::Rnr(0).into()
                } else {
                    acc.into()
                });
            }
        }
        // (Where this packet started: a WRITE whose last packet must execute again, after
        // a failed check or an RNR NAK, resumes there.)
        let at = (w.va, w.resid);
        w.va = w.va.wrapping_add(u64::from(n));
        w.resid -= n;
        let len = w.len;
        if last {
            // A verified WRITE is checked once every byte is in place, before anything
            // acknowledges or completes it.
            let mut r = match vcrc {
                Some(v) => self.check_write(st, &v),
                None => Ok(()),
            };
            let imm = pkt.imm();
            if r.is_ok() && imm.is_some() {
                r = self.take_recv_wqe(st, 0).map_err(Exec::from);
            }
            if let Err(e) = r {
                if let Some(w) = st.write.as_mut() {
                    (w.va, w.resid) = at;
                }
                return Err(e);
            }
            st.write = None;
            if let Some(imm) = imm {
                let cqe = Cqe {
                    wr_id: st.recv.wqe.wr_id,
                    status: wc_status::SUCCESS,
                    opcode: wc_opcode::RECV_RDMA_WITH_IMM,
                    byte_len: len,
                    ex: u32::from_ne_bytes(imm.to_be_bytes()),
                    qp_num: self.qpn,
                    wc_flags: wc_flags::GRH | wc_flags::WITH_IMM,
                    port_num: 1,
                    ..Cqe::default()
                };
                self.complete_recv(st, cqe, pkt.bth.se);
            }
        }
        Ok(())
    }

    /// Reads the WRITE in progress (complete: its last packet was placed) back from
    /// memory and compares it with the requester's CRC `v`, unless the QP's clean
    /// history lets the check be skipped; the fault injector may first corrupt a byte.
    fn check_write(&self, st: &mut State, v: &Vcrc) -> core::result::Result<(), Exec> {
        let Some(w) = st.write.as_ref() else {
            return Err(Syndrome::Nak(NakCode::InvalidRequest).into());
        };
        let knobs = self.dev.knobs.verify();
        if !st.vcheck.must_check(knobs.skip_after()) {
            self.dev.stats.verify_skipped.inc();
            return Ok(());
        }
        let (start, len) = (w.start, w.len);
        let crc = match w.mr.as_ref() {
            Some(mr) => {
                if len > 0 && verify::inject(random_u32(), knobs.fault_ppm()) {
                    self.dev.stats.verify_faults.inc();
                    let _ = mr.corrupt(start, len, random_u32());
                }
                mr.crc(v.alg, start, len)
            }
            // A zero-length WRITE touches no memory: the CRC of no bytes.
            None => Some(verify::crc_finish(verify::CRC_INIT)),
        };
        let outcome = if crc == Some(v.crc) {
            Outcome::Match
        } else {
            Outcome::Mismatch
        };
        st.vcheck.checked(outcome);
        if outcome == Outcome::Match {
            self.dev.stats.verify_ok.inc();
            st.resp.verify_passed();
            return Ok(());
        }
        self.dev.stats.verify_failed.inc();
        Err(Exec::Vfail {
            first: w.first_psn,
            attempt: v.attempt,
        })
    }

    /// A packet of a verified WRITE's resend, the next one the repair waits for: placed
    /// again at its offset in the WRITE (from its XETH).
    fn replace(&self, st: &mut State, pkt: &Packet<'_>) {
        let n = pkt.payload.len() as u32;
        let ok = match (pkt.xeth(), st.write.as_ref()) {
            (Some(x), Some(w)) if pkt.info.has(f::WRITE) && x.fits(n) && x.total == w.len => {
                n == 0
                    || w.mr.as_ref().is_some_and(|mr| {
                        mr.write(w.start.wrapping_add(u64::from(x.offset)), pkt.payload)
                            .is_some()
                    })
            }
            _ => false,
        };
        if ok {
            self.dev.stats.duplicates.inc();
            st.resp.replaced(pkt.bth.psn);
        } else {
            self.dev.stats.drop_malformed.inc();
        }
    }

    /// ATOMIC WRITE: the 8 payload bytes stored at the RETH's 8-byte aligned address as
    /// one access (IBTA oA19-28, A19.4.2), answered with a zero-length READ response.
    fn atomic_write_request(
        &self,
        st: &mut State,
        pkt: &Packet<'_>,
    ) -> core::result::Result<(), Syndrome> {
        let inv = Syndrome::Nak(NakCode::InvalidRequest);
        let mut reth = pkt.reth().ok_or(inv)?;
        let value: [u8; 8] = pkt.payload.try_into().map_err(|_| inv)?;
        if reth.len != 8 || pkt.bth.pad != 0 || reth.va % 8 != 0 {
            return Err(inv);
        }
        let mr = self
            .remote_mr(st, &mut reth, access::REMOTE_WRITE)?
            .ok_or(inv)?;
        {
            let _g = self.dev.atomic.lock();
            if mr.store8(reth.va, value).is_none() {
                // (Pages invalidated since the check: as for atomics.)
                if !mr.odp_miss(reth.va, 8) {
                    return Err(inv);
                }
                self.dev.stats.odp_rnr.inc();
                return Err(Syndrome::Rnr(0));
            }
        }
        self.dev.stats.atomic_write.inc();
        self.placement_done(st, pkt.bth.psn);
        Ok(())
    }

    /// FLUSH: the range (or the whole MR) made globally visible; persistence only where
    /// memory is persistent, which no MR of rrxe's is (registration with
    /// `FLUSH_PERSISTENT` is refused, so such a FLUSH finds no MR: a remote access
    /// error, as rdma_rxe answers).
    fn flush_request(
        &self,
        st: &mut State,
        pkt: &Packet<'_>,
    ) -> core::result::Result<(), Syndrome> {
        let inv = Syndrome::Nak(NakCode::InvalidRequest);
        let acc = Syndrome::Nak(NakCode::RemoteAccessErr);
        let feth = pkt.feth().ok_or(inv)?;
        let reth = pkt.reth().ok_or(inv)?;
        let mut need = 0;
        if feth.plt & flush_type::GLOBAL != 0 {
            need |= access::FLUSH_GLOBAL;
        }
        if feth.plt & flush_type::PERSISTENT != 0 {
            need |= access::FLUSH_PERSISTENT;
        }
        if need == 0 || feth.sel > flush_level::MR {
            return Err(inv);
        }
        if st.access & need != need {
            return Err(acc);
        }
        let mr = self.dev.lookup_mr(reth.rkey, self.pd, need).ok_or(acc)?;
        if feth.sel == flush_level::RANGE && !mr.covers(reth.va, u64::from(reth.len)) {
            return Err(acc);
        }
        write_barrier();
        self.dev.stats.flush.inc();
        self.placement_done(st, pkt.bth.psn);
        Ok(())
    }

    /// The ATOMIC WRITE or FLUSH at `psn` executed: the responder moves on and answers.
    fn placement_done(&self, st: &mut State, psn: Psn) {
        st.resp.placement_executed(psn);
        self.send_placement_ack(st, psn);
    }

    /// The answer to an ATOMIC WRITE or FLUSH (first or again): a zero-length READ
    /// RESPONSE ONLY with an ACK.
    pub(super) fn send_placement_ack(&self, st: &mut State, psn: Psn) {
        let Some(path) = st.path.as_ref() else {
            return;
        };
        let bth = Bth {
            opcode: op::RC_READ_RESP_ONLY,
            pkey: DEFAULT_PKEY,
            dqpn: st.dest_qpn,
            psn,
            caps: Self::accept(st),
            ..Bth::default()
        };
        let ext = Ext {
            aeth: Some(Aeth {
                syndrome: rc::ACK,
                msn: st.resp.msn,
            }),
            ..Ext::default()
        };
        self.dev.xmit_hdr(path, bth, ext);
        st.resp.sent();
    }

    /// Executes an atomic request and answers it; the result is kept for replays.
    fn atomic_request(
        &self,
        st: &mut State,
        pkt: &Packet<'_>,
    ) -> core::result::Result<(), Syndrome> {
        let inv = Syndrome::Nak(NakCode::InvalidRequest);
        let acc = Syndrome::Nak(NakCode::RemoteAccessErr);
        let a = pkt.atomic_eth().ok_or(inv)?;
        if st.access & access::REMOTE_ATOMIC == 0 {
            return Err(acc);
        }
        if a.va % 8 != 0 {
            return Err(inv);
        }
        let (mr, va) = self
            .dev
            .remote(a.rkey, self.pd, self.qpn, access::REMOTE_ATOMIC, a.va, 8)
            .ok_or(acc)?;
        if !mr.resident(va, 8) {
            self.dev.stats.odp_rnr.inc();
            return Err(Syndrome::Rnr(0));
        }
        let cas = pkt.info.opcode == op::RC_CMP_SWAP;
        // (Pages invalidated since the check: an RNR NAK, the operation not done.)
        let miss = |mr: &Mr| {
            if mr.odp_miss(va, 8) {
                self.dev.stats.odp_rnr.inc();
                Syndrome::Rnr(0)
            } else {
                acc
            }
        };
        let orig = {
            let _g = self.dev.atomic.lock();
            let mut old = [0u8; 8];
            mr.read(va, &mut old).ok_or_else(|| miss(&mr))?;
            let old = u64::from_ne_bytes(old);
            let new = rc::atomic_result(cas, old, a.swap_add, a.compare);
            mr.write(va, &new.to_ne_bytes()).ok_or_else(|| miss(&mr))?;
            old
        };
        let psn = pkt.bth.psn;
        st.resp.atomic_executed(&mut st.replay, psn, orig);
        self.send_atomic_ack(st, psn, orig);
        Ok(())
    }

    pub(super) fn send_atomic_ack(&self, st: &mut State, psn: Psn, orig: u64) {
        self.respond(st, psn, rc::ACK, Some(AtomicAckEth { orig }), None);
    }

    /// Answers a READ request (`fresh`: not a duplicate).
    pub(super) fn read_request(
        &self,
        st: &mut State,
        pkt: &Packet<'_>,
        fresh: bool,
    ) -> core::result::Result<(), Syndrome> {
        let mut reth = pkt.reth().ok_or(Syndrome::Nak(NakCode::InvalidRequest))?;
        let mr = self.remote_mr(st, &mut reth, access::REMOTE_READ)?;
        let mtu = st.mtu;
        let n = rc::packets(reth.len, mtu);
        if fresh {
            st.resp.read_accepted();
        }
        let Some(path) = st.path.as_ref() else {
            return Ok(());
        };
        for k in 0..n {
            let off = k * mtu;
            let len = (reth.len - off.min(reth.len)).min(mtu);
            let va = reth.va.wrapping_add(u64::from(off));
            let mr = mr.as_ref();
            let fill = |at: u32, d: &mut [u8]| {
                mr.and_then(|m| m.read(va.wrapping_add(u64::from(at)), d))
                    .map(|()| None)
                    .ok_or(wc_status::REM_ACCESS_ERR)
            };
            let code = rc::read_resp_opcode(k, n);
            let info = opcode::info(code).ok_or(Syndrome::Nak(NakCode::InvalidRequest))?;
            let bth = Bth {
                opcode: code,
                pkey: DEFAULT_PKEY,
                dqpn: st.dest_qpn,
                psn: pkt.bth.psn.add(k),
                pad: rc::pad(len),
                caps: Self::accept(st),
                // Answers to a request seen before, or sent again, are retransmissions.
                xflags: if st.peer_sel && (!fresh || pkt.bth.xflags & sel::XF_RETX != 0) {
                    sel::XF_RETX
                } else {
                    0
                } | if st.peer_sel && reth.len <= sel::SOLO_MAX {
                    pkt.bth.xflags & sel::XF_SOLO
                } else {
                    0
                },
                ..Bth::default()
            };
            let ext = Ext {
                aeth: info.has(f::AETH).then_some(Aeth {
                    syndrome: rc::ACK,
                    msn: st.resp.msn,
                }),
                ..Ext::default()
            };
            let payload = if len == 0 {
                Payload::None
            } else {
                Payload::Fill(len as usize, &fill)
            };
            let _ = self.dev.xmit(path, &TxPkt { bth, ext, payload });
        }
        if fresh {
            st.resp.read_executed(pkt.bth.psn, n);
        } else {
            self.dev.stats.retx_packets.add(u64::from(n));
        }
        Ok(())
    }
}
