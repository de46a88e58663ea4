// SPDX-License-Identifier: GPL-2.0
//! The requester executor: runs the protocol core's requester ([`rc::req`]) over the send
//! queue and carries out what it decides: builds and transmits each packet (headers from
//! the core, payload gathered from the WQE), arms the retransmit timer, and sends again
//! what a SACK, a probe or a go-back names.

use super::super::tx::{Payload, TxPkt};
use super::local::Local;
use super::sched::mono_ns;
use super::Qp;
use super::{selmode, QpState, State};
use crate::proto::bth::Bth;
use crate::proto::ccwire::{CAP_CC, XF_TS};
use crate::proto::exthdr::{AtomicEth, Reth};
use crate::proto::opcode::{self, flags as f};
use crate::proto::packet::Ext;
use crate::proto::psn::Psn;
use crate::proto::rc::req::{Request, Seg, Slot, WqeHead};
use crate::proto::rc::{self, Kind, DEFAULT_PKEY};
use crate::proto::sel::{self, Sack, Xeth};
use crate::proto::uapi::{send_flags, wc_status, wr, SendWqe};
use crate::proto::uc;

/// Silence after which a selective requester sends a tail-loss probe: twice the smallest
/// recent round trip (see `ProbeDelay`) within these bounds, the upper one until
/// measured. (A fixed 1 ms probe made lossless READ slower on a host where silences over
/// 1 ms were common without loss; 1.5 ms on a faster one sent at most 15 probes in a 4 s
/// lossless run.)
const PROBE_MIN_US: u32 = 1500;
const PROBE_MAX_US: u32 = 3000;

/// The largest WQE, in packets, a doorbell leaves to the work item while packets are in
/// flight (see `Qp::autocork`).
const AUTOCORK_PKTS: u32 = 8;

impl Qp {
    /// Sends as much as the window allows (in SQD only what was started before the drain).
    pub(super) fn req_run(&self, st: &mut State) {
        if st.req.rnr_wait || !st.state.sending() {
            return;
        }
        if self.ud() {
            self.ud_run(st);
            return;
        }
        if self.uc() {
            self.uc_run(st);
            return;
        }
        let mut sent_any = false;
        let now = mono_ns();
        self.cc_refresh(st, now);
        loop {
            if st.req.window_full() {
                self.dev.stats.window_full.inc();
                break;
            }
            let i = st.req.next;
            if i == self.sq.producer() || (st.state == QpState::Sqd && i == st.sqd_stop) {
                break;
            }
            let Ok(wqe) = self.take_wqe(&mut st.cur, i) else {
                self.fail_at(st, wc_status::LOC_QP_OP_ERR);
                break;
            };
            if wr::local(wqe.opcode) {
                // (Waiting, it goes on when the completer runs the requester again.)
                let step = self.local_step(st, i, &wqe);
                st.cur.put(wqe);
                if step == Local::Done {
                    continue;
                }
                break;
            }
            let kind = Kind::of_wr(wqe.opcode);
            let slot = st.slots.get(i as usize).copied().unwrap_or_default();
            let blocked = st.req.blocked(&slot, wqe.opcode, st.max_rd_atomic);
            let sent = match kind {
                // Paced (congestion control): the pacing timer runs the requester again.
                Some(k) if !blocked => {
                    let mtu = st.mtu;
                    if self.cc_admit(st, now, mtu) {
                        Some(self.send_next(st, i, &wqe, k, slot))
                    } else {
                        None
                    }
                }
                _ => None,
            };
            st.cur.put(wqe);
            let Some(sent) = sent else {
                if kind.is_none() {
                    self.fail_at(st, wc_status::LOC_QP_OP_ERR);
                }
                break;
            };
            match sent {
                Ok(done) => {
                    sent_any = true;
                    if done {
                        st.req.next = self.sq.geom.next(i);
                    }
                }
                Err(status) => {
                    self.fail_at(st, status);
                    break;
                }
            }
        }
        if sent_any {
            st.pto.sent(st.req.req_psn.sub(1), mono_ns);
            let t = self.rto_us(st);
            if t != 0 {
                self.timer.arm_us(t);
            }
        }
    }

    /// Transmits the next packet of WQE `i` (`stored`: its slot as kept so far);
    /// `Ok(true)` once the WQE is fully sent.
    fn send_next(
        &self,
        st: &mut State,
        i: u32,
        wqe: &SendWqe,
        kind: Kind,
        stored: Slot,
    ) -> core::result::Result<bool, u32> {
        let mtu = st.mtu;
        let mut slot = stored;
        if !slot.started {
            let head = WqeHead {
                wr_id: wqe.wr_id,
                opcode: wqe.opcode,
                flags: wqe.flags,
                length: wqe.length,
            };
            slot = st.req.start(&head, mtu);
        }
        if rc::needs_response(wqe.opcode) {
            // One request packet; the responses complete it.
            let r = st.req.next_request(&slot, stored.started, mtu);
            self.request(st, wqe, kind, &r)?;
            st.req.request_sent(&mut slot, &r);
            if let Some(s) = st.slots.get_mut(i as usize) {
                *s = slot;
            }
            return Ok(true);
        }
        let seg = st.req.next_data(&slot, mtu);
        self.data_packet(st, wqe, kind, &slot, &seg, 0)?;
        st.req.data_sent(&mut slot, &seg);
        if let Some(s) = st.slots.get_mut(i as usize) {
            *s = slot;
        }
        Ok(seg.last)
    }

    /// Transmits a READ or atomic request.
    fn request(
        &self,
        st: &State,
        wqe: &SendWqe,
        kind: Kind,
        r: &Request,
    ) -> core::result::Result<(), u32> {
        let path = st.path.as_ref().ok_or(wc_status::LOC_QP_OP_ERR)?;
        let ext = if let Kind::Atomic { cas } = kind {
            if wqe.length < 8 || wqe.remote_addr % 8 != 0 {
                return Err(wc_status::LOC_LEN_ERR);
            }
            Ext {
                atomic: Some(AtomicEth {
                    va: wqe.remote_addr,
                    rkey: wqe.rkey,
                    swap_add: if cas { wqe.swap } else { wqe.compare_add },
                    compare: if cas { wqe.compare_add } else { 0 },
                }),
                ..Ext::default()
            }
        } else {
            // READ: everything not yet received, from the PSN its offset maps to.
            Ext {
                reth: Some(Reth {
                    va: wqe.remote_addr.wrapping_add(u64::from(r.off)),
                    rkey: wqe.rkey,
                    len: r.len,
                }),
                ..Ext::default()
            }
        };
        let bth = Bth {
            opcode: rc::opcode(kind, true, true),
            pkey: DEFAULT_PKEY,
            dqpn: st.dest_qpn,
            ack_req: true,
            psn: r.psn,
            caps: self.offer(),
            ..Bth::default()
        };
        self.dev.xmit(
            path,
            &TxPkt {
                bth,
                ext,
                payload: Payload::None,
            },
        )
    }

    /// The capability bits a request carries (congestion-control extensions always).
    pub(super) fn offer(&self) -> u8 {
        if self.sel_mode == selmode::OFF {
            CAP_CC
        } else {
            sel::CAP_SELECTIVE | CAP_CC
        }
    }

    /// Transmits data packet `seg` of the SEND or WRITE WQE in `slot`; `xflags` adds rrxe
    /// flags (a probe, a retransmission). With selective retransmission on, it carries an
    /// XETH.
    pub(super) fn data_packet(
        &self,
        st: &State,
        wqe: &SendWqe,
        kind: Kind,
        slot: &Slot,
        seg: &Seg,
        xflags: u8,
    ) -> core::result::Result<(), u32> {
        let opcode = if self.uc() {
            uc::opcode(rc::opcode(kind, seg.first, seg.last))
        } else {
            rc::opcode(kind, seg.first, seg.last)
        };
        let info = opcode::info(opcode).ok_or(wc_status::LOC_QP_OP_ERR)?;
        let path = st.path.as_ref().ok_or(wc_status::LOC_QP_OP_ERR)?;
        let ts = st.cc.ts();
        let bth = Bth {
            opcode,
            se: seg.last
                && wqe.flags & send_flags::SOLICITED != 0
                && (info.has(f::SEND) || info.has(f::IMMDT)),
            pkey: DEFAULT_PKEY,
            dqpn: st.dest_qpn,
            ack_req: seg.ack_req,
            psn: seg.psn,
            pad: rc::pad(seg.len),
            caps: self.offer(),
            xflags: if st.sel_tx { sel::XF_EXT | xflags } else { 0 }
                | if ts.is_some() { XF_TS } else { 0 },
            ..Bth::default()
        };
        let ext = Ext {
            ts,
            reth: info.has(f::RETH).then_some(Reth {
                va: wqe.remote_addr,
                rkey: wqe.rkey,
                len: slot.length,
            }),
            // `ex` holds the immediate as the user stored it (network byte order in
            // memory); the header wants its numeric value.
            imm: info
                .has(f::IMMDT)
                .then_some(u32::from_be_bytes(wqe.ex.to_le_bytes())),
            ieth: info.has(f::IETH).then_some(wqe.ex),
            xeth: st.sel_tx.then_some(Xeth {
                wqe_seq: slot.seq,
                offset: seg.off,
                total: slot.length,
            }),
            ..Ext::default()
        };
        let off = seg.off;
        let fill = |d: &mut [u8]| self.gather(wqe, off, d);
        self.dev.xmit(
            path,
            &TxPkt {
                bth,
                ext,
                payload: Payload::Fill(seg.len as usize, &fill),
            },
        )
    }

    /// Sends PSN `psn` again (a SACK named it, or a probe): only that packet, or, for a
    /// READ or atomic request, go-back-N from it.
    pub(super) fn retransmit_psn(&self, st: &mut State, psn: Psn, xflags: u8) {
        if psn.before(st.req.comp_psn) || !psn.before(st.req.req_psn) {
            return;
        }
        let Some((i, s)) = self.slot_of(st, psn) else {
            return;
        };
        if s.is_read() && st.sel_tx {
            // The request was lost: ask for everything still missing, unless asked since
            // the last probe (two SACKs, or a probe's answer and a SACK, named it).
            let comp = st.req.comp_psn;
            let (rd, mut io) = self.read_io(st);
            rd.lost_request(comp, &s.read_span(i), psn, &mut io);
            return;
        }
        if s.responds() {
            if psn == s.first_psn {
                self.rewind(st, psn);
                self.dev.stats.retransmits.inc();
                self.send_work.queue();
            }
            return;
        }
        let Some(kind) = Kind::of_wr(s.opcode) else {
            return;
        };
        let Ok(wqe) = self.take_wqe(&mut st.cur, i) else {
            return;
        };
        let seg = Seg::of(&s, psn.diff(s.first_psn).max(0) as u32, st.mtu, true);
        let sent = self.data_packet(st, &wqe, kind, &s, &seg, xflags);
        st.cur.put(wqe);
        if sent.is_ok() {
            self.dev.stats.retx_packets.inc();
            // The cumulative ACK of the timed packet now waits for this one.
            st.pto.cancel();
        }
    }

    /// A SACK arrived: send exactly the PSNs it names, before any new data.
    pub(super) fn on_sack(&self, st: &mut State, s: &Sack) {
        self.dev.stats.sack_rcvd.inc();
        st.sack.begin(st.req.comp_psn);
        for p in s.iter() {
            if st.sack.resend(s.full, p) {
                self.retransmit_psn(st, p, sel::XF_RETX);
            }
        }
        st.sack.end(s.full, st.req.comp_psn);
    }

    /// Silence after which a tail-loss probe is sent.
    pub(super) fn probe_us(st: &State) -> u64 {
        u64::from(st.pto.delay_us(PROBE_MIN_US, PROBE_MAX_US))
    }

    /// Retransmit timeout: with selective retransmission a tail-loss probe after
    /// [`Qp::probe_us`] of silence, else the transport timer.
    pub(super) fn rto_us(&self, st: &State) -> u64 {
        let t = rc::ack_timeout_us(st.timeout);
        let p = Self::probe_us(st);
        if st.sel_tx && (t == 0 || t > p) {
            p
        } else {
            t
        }
    }

    /// Go-back-N: transmission resumes at `psn` (as [`rc::req::Requester::rewind`]
    /// decides).
    pub(super) fn rewind(&self, st: &mut State, psn: Psn) {
        let prod = self.sq.producer();
        st.req
            .rewind(&mut st.slots, &self.sq.geom, prod, psn, st.mtu);
    }

    /// Whether a doorbell leaves the next WQE to the work item (like TCP's autocorking):
    /// packets are in flight, so ACKs run the requester soon anyway, and the WQE is a
    /// small SEND or WRITE (at most [`AUTOCORK_PKTS`] packets), which the work item then
    /// sends together with whatever else was posted meanwhile: fewer requester runs and
    /// fewer ACKs per message. A READ or atomic, a large WQE or an idle QP is sent from
    /// the syscall at once: a large one keeps the posting thread's CPU busy with its own
    /// packets, and a READ request waited on would stall its responses.
    pub(super) fn autocork(&self, st: &mut State) -> bool {
        let i = st.req.next;
        if self.ud() || st.state != QpState::Rts || st.req.idle() || i == self.sq.producer() {
            return false;
        }
        let Ok(w) = self.take_wqe(&mut st.cur, i) else {
            return false;
        };
        let small =
            !rc::needs_response(w.opcode) && w.length <= AUTOCORK_PKTS.saturating_mul(st.mtu);
        st.cur.put(w);
        small
    }
}
