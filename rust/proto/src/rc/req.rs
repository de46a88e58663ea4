// SPDX-License-Identifier: GPL-2.0
//! The requester: the send queue's slots (one per WQE, its PSN span and progress), the
//! PSN window, segmentation of a WQE into packets with the acknowledge-request policy,
//! and the send-queue bookkeeping the completer drives (completing the head, going back
//! to a PSN).
//!
//! The WQE itself stays in the user's ring; a [`Slot`] keeps what the engine needs to
//! retransmit and complete it. The slots are the driver's memory (one per ring slot);
//! every function here takes them as a slice, with the ring's geometry and the user's
//! producer index.

use super::super::psn::Psn;
use super::super::rdrep::{ReadRepair, ReadSpan};
use super::super::uapi::{wr, RingGeom};
use super::super::verify::{OnFail, WriteCrc};
use super::{needs_response, packets, Retry, MAX_PKT_PER_ACK, MAX_UNACKED_PSNS};

/// Per-WQE requester state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slot {
    /// The WQE's `wr_id`.
    pub wr_id: u64,
    /// Work-request opcode (`uapi::wr`).
    pub opcode: u32,
    /// Send flags (`uapi::send_flags`).
    pub flags: u32,
    /// Message length in bytes.
    pub length: u32,
    /// PSN of the first packet (request).
    pub first_psn: Psn,
    /// PSN of the last packet (a READ: of its last response).
    pub last_psn: Psn,
    /// Bytes transmitted so far (the next packet starts here).
    pub sent: u32,
    /// The WQE was fetched and given PSNs.
    pub started: bool,
    /// READ: bytes received in order.
    pub got: u32,
    /// WQE sequence number (the extended header's).
    pub seq: u32,
    /// A verified WRITE: its CRC and attempts.
    pub vfy: Option<WriteCrc>,
}

impl Slot {
    /// This READ, in slot `i`, as [`ReadRepair`] sees it.
    pub const fn read_span(&self, i: u32) -> ReadSpan {
        ReadSpan {
            first: self.first_psn,
            last: self.last_psn,
            tag: i,
        }
    }

    /// An RDMA READ.
    pub const fn is_read(&self) -> bool {
        self.opcode == wr::RDMA_READ
    }

    /// A READ or atomic: completed by its response, never by an ACK.
    pub const fn responds(&self) -> bool {
        needs_response(self.opcode)
    }

    /// The byte offset packet or response PSN `psn` of this WQE carries.
    pub fn offset_of(&self, psn: Psn, mtu: u32) -> u32 {
        (psn.diff(self.first_psn).max(0) as u32).saturating_mul(mtu)
    }
}

/// What the requester knows of a WQE when it starts it.
#[derive(Clone, Copy, Debug, Default)]
pub struct WqeHead {
    /// `wr_id`.
    pub wr_id: u64,
    /// Work-request opcode.
    pub opcode: u32,
    /// Send flags.
    pub flags: u32,
    /// Message length.
    pub length: u32,
}

/// One data packet of a SEND or WRITE: packet `k` of its WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    /// Its PSN.
    pub psn: Psn,
    /// Its index in the message.
    pub k: u32,
    /// Offset of its payload in the message.
    pub off: u32,
    /// Payload bytes.
    pub len: u32,
    /// The message's first packet (carries the RETH of a WRITE).
    pub first: bool,
    /// The message's last packet (carries immediate data or an invalidate rkey).
    pub last: bool,
    /// AckReq.
    pub ack_req: bool,
}

impl Seg {
    /// Packet `k` of the SEND or WRITE in `slot` at path MTU `mtu`.
    pub fn of(slot: &Slot, k: u32, mtu: u32, ack_req: bool) -> Seg {
        let mtu = mtu.max(1);
        let off = k.saturating_mul(mtu).min(slot.length);
        let len = (slot.length - off).min(mtu);
        Seg {
            psn: slot.first_psn.add(k),
            k,
            off,
            len,
            first: k == 0,
            last: off + len == slot.length,
            ack_req,
        }
    }
}

/// A READ or atomic request to send for a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Its PSN.
    pub psn: Psn,
    /// READ: the offset in the message it asks from (the RETH's address moves by it).
    pub off: u32,
    /// READ: the bytes it asks for.
    pub len: u32,
    /// PSNs it takes (a READ: one per response).
    pub span: u32,
    /// It was sent before (a re-request after going back).
    pub resend: bool,
}

/// What a READ response does (go-back-N requester, responses taken in PSN order only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadResp {
    /// No WQE at the head.
    Nothing,
    /// Not the expected response: dropped (counted).
    Stale,
    /// Beyond the expected response: dropped, and the READ is asked for again from the
    /// given PSN (once per gap) — go back to it.
    Gap(Psn),
    /// Place the payload in the WQE of slot `slot` at byte `off` (at most `length` in all).
    Place {
        /// Slot index.
        slot: u32,
        /// Byte offset.
        off: u32,
        /// The WQE's length.
        length: u32,
    },
}

/// Requester and completer progress of one send queue (rxe's `req` and `comp` state).
#[derive(Clone, Copy, Debug)]
pub struct Requester {
    /// Oldest WQE not completed.
    pub cons: u32,
    /// Next WQE to send (or the one being segmented).
    pub next: u32,
    /// PSN of the next new packet.
    pub req_psn: Psn,
    /// Oldest PSN not acknowledged: the completer's position.
    pub comp_psn: Psn,
    /// One past the highest PSN ever sent (going back lowers `req_psn`, never this).
    sent_hi: Psn,
    /// READs and atomics sent and not completed (initiator depth in use).
    pub rd_outstanding: u32,
    /// Packets sent since the last AckReq.
    noack: u32,
    /// Sequence number of the next WQE.
    wqe_seq: u32,
    /// Retries left after a transport timeout (`retry_cnt`).
    pub retry: Retry,
    /// Retries left after an RNR NAK (`rnr_retry`).
    pub rnr: Retry,
    /// Waiting out an RNR NAK's timer: nothing is sent.
    pub rnr_wait: bool,
    /// The PSN last gone back to because a READ response skipped ahead (one re-request
    /// per gap, not one per out-of-order response).
    read_gap: Option<Psn>,
    /// Every request before this PSN was acknowledged, explicitly or by a later response
    /// (selective retransmission completes out of step with ACKs).
    pub acked: Psn,
    /// A verified WRITE being sent again after a failed check: its slot and the next PSN
    /// to send.
    pub vrepair: Option<(u32, Psn)>,
}

impl Requester {
    /// An empty send queue starting at PSN `psn`.
    pub const fn new(psn: Psn) -> Self {
        Requester {
            cons: 0,
            next: 0,
            req_psn: psn,
            comp_psn: psn,
            sent_hi: psn,
            rd_outstanding: 0,
            noack: 0,
            wqe_seq: 0,
            retry: Retry::new(0),
            rnr: Retry::rnr(0),
            rnr_wait: false,
            read_gap: None,
            acked: psn,
            vrepair: None,
        }
    }

    /// The QP's SQ PSN was set (modify): nothing is in flight.
    pub fn set_psn(&mut self, psn: Psn) {
        self.req_psn = psn;
        self.comp_psn = psn;
        self.sent_hi = psn;
        self.acked = psn;
    }

    /// A response of `psn` answers no request ever sent: at or beyond the highest PSN
    /// sent, or more than half the PSN space behind it. It acknowledges nothing and
    /// names no PSN to go back to. (rdma_rxe answers a duplicate that arrives before
    /// its first new request with an ACK of PSN 0xffffff.)
    pub fn ghost(&self, psn: Psn) -> bool {
        !psn.before(self.sent_hi)
    }

    /// Reset: everything up to the producer index `prod` is discarded.
    pub fn reset(&mut self, prod: u32) {
        self.cons = prod;
        self.next = prod;
        self.rd_outstanding = 0;
        self.rnr_wait = false;
    }

    /// The PSN window is full: no new packet until an acknowledgement.
    pub fn window_full(&self) -> bool {
        self.req_psn.diff(self.comp_psn) >= MAX_UNACKED_PSNS as i32
    }

    /// Nothing is unacknowledged.
    pub fn idle(&self) -> bool {
        self.req_psn == self.comp_psn
    }

    /// Whether the WQE in `slot` (of opcode `opcode`) must wait for an initiator-depth
    /// credit (`max_rd_atomic`, at least one) before it starts.
    pub fn blocked(&self, slot: &Slot, opcode: u32, max_rd_atomic: u8) -> bool {
        needs_response(opcode)
            && self.rd_outstanding >= u32::from(max_rd_atomic.max(1))
            && !slot.started
    }

    /// Gives the WQE `w` its PSNs and sequence number, from the next PSN on.
    pub fn start(&mut self, w: &WqeHead, mtu: u32) -> Slot {
        let s = Slot {
            wr_id: w.wr_id,
            opcode: w.opcode,
            flags: w.flags,
            length: w.length,
            first_psn: self.req_psn,
            last_psn: self.req_psn.add(packets(w.length, mtu) - 1),
            sent: 0,
            started: true,
            got: 0,
            seq: self.wqe_seq,
            vfy: None,
        };
        self.wqe_seq = self.wqe_seq.wrapping_add(1);
        s
    }

    /// The WQE [`Requester::start`] just started was not sent after all (the stack
    /// refused its request packet): the next start takes its sequence number again.
    pub fn unstart(&mut self) {
        self.wqe_seq = self.wqe_seq.wrapping_sub(1);
    }

    /// The next packet of the SEND or WRITE in `slot`: AckReq on its last packet and at
    /// least every `ack_every` packets (at most [`MAX_PKT_PER_ACK`]; congestion control
    /// by delay asks more often, for its timestamp echoes).
    pub fn next_data(&mut self, slot: &Slot, mtu: u32, ack_every: u32) -> Seg {
        let remaining = slot.length - slot.sent.min(slot.length);
        let last = remaining <= mtu;
        self.noack += 1;
        let ack_req = last || self.noack >= ack_every.clamp(1, MAX_PKT_PER_ACK);
        if ack_req {
            self.noack = 0;
        }
        Seg::of(slot, slot.sent / mtu.max(1), mtu, ack_req)
    }

    /// `seg` of `slot` went out (or was handed to the network).
    pub fn data_sent(&mut self, slot: &mut Slot, seg: &Seg) {
        self.req_psn = self.req_psn.add(1);
        self.sent_hi = self.sent_hi.later(self.req_psn);
        slot.sent += seg.len;
    }

    /// The request a READ or atomic in `slot` sends; `resend`: it had started before (a
    /// READ asks only for what it has not received, from the PSN that data maps to).
    pub fn next_request(&self, slot: &Slot, resend: bool, mtu: u32) -> Request {
        if !slot.is_read() {
            return Request {
                psn: self.req_psn,
                off: 0,
                len: slot.length,
                span: 1,
                resend,
            };
        }
        let off = slot.got.min(slot.length);
        let psn = if resend {
            slot.first_psn.add(off / mtu.max(1))
        } else {
            self.req_psn
        };
        let len = slot.length - off;
        Request {
            psn,
            off,
            len,
            span: packets(len, mtu),
            resend,
        }
    }

    /// Request `r` of `slot` went out: the READ's responses take its PSNs, and a new one
    /// takes an initiator-depth credit.
    pub fn request_sent(&mut self, slot: &mut Slot, r: &Request) {
        if !r.resend {
            self.rd_outstanding += 1;
        }
        self.req_psn = r.psn.add(r.span);
        self.sent_hi = self.sent_hi.later(self.req_psn);
        self.noack = 0;
        slot.sent = slot.length;
    }

    /// Removes the head WQE (it completes); returns its slot index and state. A WQE
    /// completed while waiting to be sent again (its responses arrived after going back)
    /// moves the next WQE past it, keeping its original PSNs.
    pub fn pop(&mut self, slots: &mut [Slot], geom: &RingGeom) -> Option<(u32, Slot)> {
        let i = self.cons;
        let e = slots.get_mut(i as usize)?;
        let s = core::mem::take(e);
        self.cons = geom.next(i);
        if self.vrepair.is_some_and(|(r, _)| r == i) {
            self.vrepair = None;
        }
        if self.next == i {
            self.next = self.cons;
            if s.started && self.req_psn.before(s.last_psn.add(1)) {
                self.req_psn = s.last_psn.add(1);
            }
        }
        Some((i, s))
    }

    /// Whether an ACK of `psn` (inclusive if `incl`, as a plain ACK; exclusive for a NAK
    /// or a response, which acknowledge what came before them) completes the head WQE:
    /// a SEND or WRITE fully sent whose last PSN it covers.
    pub fn acked_head(&self, slots: &[Slot], psn: Psn, incl: bool) -> bool {
        let i = self.cons;
        let Some(s) = slots.get(i as usize) else {
            return false;
        };
        if !s.started || (s.sent < s.length && !s.is_read()) {
            return false;
        }
        let covered = if incl {
            !s.last_psn.after(psn)
        } else {
            s.last_psn.before(psn)
        };
        covered && !s.responds()
    }

    /// After completing what an ACK of `psn` covers: moves the completer's PSN, but
    /// never past the first missing response of an incomplete READ or atomic at the
    /// head (an ACK covers requests the responder received, not responses we still
    /// expect).
    pub fn ack_done(&mut self, slots: &[Slot], psn: Psn, incl: bool, mtu: u32) {
        let mut next = if incl { psn.add(1) } else { psn };
        if let Some(s) = slots.get(self.cons as usize) {
            if s.started && s.responds() {
                let expect = s.first_psn.add(s.got / mtu.max(1));
                if next.after(expect) {
                    next = expect;
                }
            }
        }
        if next.after(self.comp_psn) && !next.after(self.req_psn) {
            self.comp_psn = next;
        }
    }

    /// Go-back-N: transmission resumes at `psn`. The WQE holding it is sent again from
    /// the packet `psn` maps to (a READ: asks again from there, forgetting responses
    /// received beyond it); later WQEs are sent again from scratch and take their
    /// initiator-depth credit again. `false` if no sent WQE holds `psn`, or if `psn` is
    /// before the completer's PSN: a duplicated or late NAK names a PSN the responder
    /// has since gone past, and going back there would give the next packets PSNs
    /// before the head WQE's own (rxe's completer drops such a NAK as stale too).
    pub fn rewind(
        &mut self,
        slots: &mut [Slot],
        geom: &RingGeom,
        prod: u32,
        psn: Psn,
        mtu: u32,
    ) -> bool {
        if psn.before(self.comp_psn) {
            return false;
        }
        let mut i = self.cons;
        let mut found = false;
        let mut to = psn;
        while i != prod {
            let Some(s) = slots.get_mut(i as usize) else {
                break;
            };
            if !s.started {
                break;
            }
            if !found && !psn.after(s.last_psn) {
                found = true;
                self.next = i;
                // PSNs before this WQE's belong to WQEs already complete (the completer's
                // PSN can lag behind one completed by a later response): resume at its
                // first PSN, so the next packet's PSN is the one its slot gives it.
                to = psn.later(s.first_psn);
                let done_pkts = psn.diff(s.first_psn).max(0) as u32;
                if s.is_read() {
                    s.sent = 0;
                    s.got = s.got.min(done_pkts.saturating_mul(mtu));
                } else {
                    s.sent = done_pkts.saturating_mul(mtu).min(s.length);
                }
            } else if found {
                let rd = s.responds();
                s.started = false;
                s.sent = 0;
                s.got = 0;
                if rd {
                    self.rd_outstanding = self.rd_outstanding.saturating_sub(1);
                }
            }
            i = geom.next(i);
        }
        if found {
            self.req_psn = to;
        }
        found
    }

    /// The sent WQE whose PSN span holds `psn` (see [`find`]).
    pub fn find(
        &self,
        slots: &[Slot],
        geom: &RingGeom,
        prod: u32,
        psn: Psn,
    ) -> Option<(u32, Slot)> {
        find(slots, geom, self.cons, prod, psn)
    }

    /// A READ response of PSN `psn` arrived (go-back-N: responses are taken in PSN order
    /// only). The caller has completed what it implicitly acknowledges.
    pub fn read_resp(
        &mut self,
        slots: &mut [Slot],
        geom: &RingGeom,
        prod: u32,
        psn: Psn,
        mtu: u32,
    ) -> ReadResp {
        let i = self.cons;
        let Some(s) = slots.get(i as usize).copied() else {
            return ReadResp::Nothing;
        };
        if !s.started || !s.is_read() || psn != self.comp_psn {
            // A response beyond the expected PSN means responses were lost: ask again
            // from the first missing one now instead of waiting for the timer.
            if s.started && psn.after(self.comp_psn) && self.read_gap != Some(self.comp_psn) {
                let p = self.comp_psn;
                self.read_gap = Some(p);
                self.rewind(slots, geom, prod, p, mtu);
                return ReadResp::Gap(p);
            }
            return ReadResp::Stale;
        }
        ReadResp::Place {
            slot: i,
            off: s.offset_of(psn, mtu),
            length: s.length,
        }
    }

    /// The payload of READ response `psn` (`n` bytes at `off`) was placed in slot `i`.
    /// `true`: the READ has every byte and completes. Every response of every request
    /// for a WQE maps PSN to offset the same way, so whichever response (a re-requested
    /// tail ends with LAST, a replay of the original request may not) delivered the last
    /// bytes, the READ is complete.
    pub fn read_placed(&mut self, slots: &mut [Slot], i: u32, psn: Psn, off: u32, n: u32) -> bool {
        let got = off.saturating_add(n);
        let Some(s) = slots.get_mut(i as usize) else {
            return false;
        };
        s.got = got;
        self.comp_psn = psn.add(1);
        if got >= s.length {
            self.rd_outstanding = self.rd_outstanding.saturating_sub(1);
            return true;
        }
        false
    }

    /// An atomic acknowledgement of PSN `psn`: the head slot it completes, if it is the
    /// expected one.
    pub fn atomic_resp(&self, slots: &[Slot], psn: Psn) -> Option<(u32, Slot)> {
        let i = self.cons;
        let s = slots.get(i as usize).copied()?;
        let atomic = matches!(s.opcode, wr::ATOMIC_CMP_AND_SWP | wr::ATOMIC_FETCH_AND_ADD);
        (s.started && atomic && psn == self.comp_psn && psn == s.first_psn).then_some((i, s))
    }

    /// The zero-length READ response of PSN `psn` that answers an ATOMIC WRITE or FLUSH:
    /// the head slot it completes, if it is the expected one.
    pub fn placement_resp(&self, slots: &[Slot], psn: Psn) -> Option<(u32, Slot)> {
        let i = self.cons;
        let s = slots.get(i as usize).copied()?;
        (s.started && super::placement_op(s.opcode) && psn == self.comp_psn && psn == s.first_psn)
            .then_some((i, s))
    }

    /// The head READ or atomic got its last response at `psn`: it completes.
    pub fn response_done(&mut self, psn: Psn) {
        self.comp_psn = psn.add(1);
        self.rd_outstanding = self.rd_outstanding.saturating_sub(1);
    }

    /// Selective READs: moves the completer over the head READ's responses received
    /// (in any order, recorded in `rd`). `true`: the head READ has every response and
    /// completes.
    pub fn read_head_done(&mut self, slots: &mut [Slot], mtu: u32, rd: &mut ReadRepair) -> bool {
        let i = self.cons;
        let Some(s) = slots.get(i as usize).copied() else {
            return false;
        };
        if !s.started || !s.is_read() || self.comp_psn.before(s.first_psn) {
            return false;
        }
        while !self.comp_psn.after(s.last_psn) && rd.has(self.comp_psn) {
            self.comp_psn = self.comp_psn.add(1);
        }
        rd.advance_to(self.comp_psn);
        let got = s.offset_of(self.comp_psn, mtu).min(s.length);
        if let Some(e) = slots.get_mut(i as usize) {
            e.got = got;
        }
        if self.comp_psn.after(s.last_psn) {
            self.rd_outstanding = self.rd_outstanding.saturating_sub(1);
            return true;
        }
        false
    }

    /// The head WQE is an atomic, ATOMIC WRITE or FLUSH already sent: no tail-loss probe
    /// can repair it (see [`Requester::probe_psn`]), only the transport timer.
    pub fn head_unprobed(&self, slots: &[Slot]) -> bool {
        slots
            .get(self.cons as usize)
            .is_some_and(|s| s.started && s.responds() && !s.is_read())
    }

    /// Selective retransmission, after a silence: the PSN of the tail-loss probe (the last
    /// packet sent, if it is data or a READ request), or `None` to go back instead. Going
    /// back is also the only repair for an atomic at the head whose acknowledgement was
    /// lost: the responder executed everything, so a probe only brings an ACK, which
    /// never completes an atomic, and nothing would ask for it again.
    pub fn probe_psn(&self, slots: &[Slot], geom: &RingGeom, prod: u32) -> Option<Psn> {
        if self.head_unprobed(slots) {
            return None;
        }
        let last = self.req_psn.sub(1);
        self.find(slots, geom, prod, last)
            .filter(|(_, s)| !s.responds() || s.is_read())
            .map(|_| last)
    }

    /// The responder reports that a verified WRITE failed its check (`attempt`, see
    /// [`WriteCrc::failed`]) and that its resend is to start at `psn` (its first PSN, or
    /// where a resend in progress stands); `retries`: resends allowed. On
    /// [`OnFail::Resend`] and [`OnFail::Again`] the WRITE's packets from `psn` to its
    /// last are sent again ([`Requester::repair_next`]), the last with the new attempt:
    /// they are retransmissions, behind the completer's PSN (the responder acknowledged
    /// them; it places them again). On [`OnFail::Fail`] the slot index is returned with
    /// it.
    #[allow(clippy::too_many_arguments)]
    pub fn verify_failed(
        &mut self,
        slots: &mut [Slot],
        geom: &RingGeom,
        prod: u32,
        psn: Psn,
        attempt: u8,
        retries: u32,
    ) -> (OnFail, u32) {
        let Some((i, s)) = self.find(slots, geom, prod, psn) else {
            return (OnFail::Stale, 0);
        };
        let Some(e) = slots.get_mut(i as usize) else {
            return (OnFail::Stale, 0);
        };
        // Only a WRITE sent to its end was checked.
        let (true, Some(w)) = (s.sent >= s.length, e.vfy.as_mut()) else {
            return (OnFail::Stale, i);
        };
        let r = w.failed(attempt, retries);
        if matches!(r, OnFail::Resend | OnFail::Again) {
            self.vrepair = Some((i, psn));
        }
        (r, i)
    }

    /// The next packet of a verified WRITE's resend ([`Requester::verify_failed`]): its
    /// slot and segment (AckReq on the last), or `None` when the resend is complete.
    pub fn repair_next(&mut self, slots: &[Slot], mtu: u32) -> Option<(u32, Seg)> {
        let (i, p) = self.vrepair?;
        let s = slots.get(i as usize).copied().filter(|s| s.started)?;
        if p.after(s.last_psn) || p.before(s.first_psn) {
            self.vrepair = None;
            return None;
        }
        let seg = Seg::of(&s, p.diff(s.first_psn).max(0) as u32, mtu, p == s.last_psn);
        self.vrepair = Some((i, p.add(1)));
        Some((i, seg))
    }

    /// Selective retransmission: a response acknowledges every request before `a`.
    pub fn acked_to(&mut self, a: Psn) {
        if a.after(self.acked) && !a.after(self.req_psn) {
            self.acked = a;
        }
    }
}

/// The WQE among `slots`, from the oldest not completed (`cons`) to the producer index
/// `prod`, whose PSN span holds `psn`.
pub fn find(
    slots: &[Slot],
    geom: &RingGeom,
    cons: u32,
    prod: u32,
    psn: Psn,
) -> Option<(u32, Slot)> {
    let mut i = cons;
    while i != prod {
        let s = slots.get(i as usize).copied()?;
        if !s.started || psn.before(s.first_psn) {
            return None;
        }
        if !psn.after(s.last_psn) {
            return Some((i, s));
        }
        i = geom.next(i);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: RingGeom = RingGeom {
        log2_slot: 6,
        mask: 7,
    };

    fn head(opcode: u32, length: u32) -> WqeHead {
        WqeHead {
            wr_id: u64::from(length),
            opcode,
            flags: 0,
            length,
        }
    }

    /// Starts and fully sends WQEs of these (opcode, length) at MTU 1024 from PSN 100.
    fn sent(wqes: &[(u32, u32)]) -> (Requester, [Slot; 8]) {
        let mut rq = Requester::new(Psn::new(100));
        let mut slots = [Slot::default(); 8];
        for (i, &(op, len)) in wqes.iter().enumerate() {
            let mut s = rq.start(&head(op, len), 1024);
            if needs_response(op) {
                let r = rq.next_request(&s, false, 1024);
                rq.request_sent(&mut s, &r);
            } else {
                loop {
                    let seg = rq.next_data(&s, 1024, MAX_PKT_PER_ACK);
                    rq.data_sent(&mut s, &seg);
                    if seg.last {
                        break;
                    }
                }
            }
            slots[i] = s;
            rq.next = G.next(i as u32);
        }
        (rq, slots)
    }

    #[test]
    fn ghost_responses() {
        // A WRITE of 3 packets (100..=102) and a READ of 4 responses (103..=106).
        let (mut rq, mut slots) = sent(&[(wr::RDMA_WRITE, 3000), (wr::RDMA_READ, 4096)]);
        assert!(!rq.ghost(Psn::new(99)) && !rq.ghost(Psn::new(106)));
        assert!(rq.ghost(Psn::new(107)));
        // rdma_rxe's ACK of a duplicate before its first new request names PSN 0xffffff:
        // here just behind the first PSN, where it completes nothing.
        assert!(!rq.ghost(Psn::new(0xff_ffff)));
        assert!(!rq.acked_head(&slots, Psn::new(0xff_ffff), true));
        // Going back lowers the next PSN to send, not what a response may answer.
        assert!(rq.rewind(&mut slots, &G, 2, Psn::new(101), 1024));
        assert_eq!(rq.req_psn, Psn::new(101));
        assert!(!rq.ghost(Psn::new(106)) && rq.ghost(Psn::new(107)));
        // Around the wrap of the 24-bit PSN space.
        let mut rq = Requester::new(Psn::new(0xff_fffe));
        let mut s = rq.start(&head(wr::SEND, 3000), 1024);
        for _ in 0..3 {
            let seg = rq.next_data(&s, 1024, MAX_PKT_PER_ACK);
            rq.data_sent(&mut s, &seg);
        }
        assert!(!rq.ghost(Psn::new(0)) && rq.ghost(Psn::new(1)));
        // With a first PSN of 0xe1_0868, 0xffffff is 2 million PSNs ahead: a ghost.
        rq.set_psn(Psn::new(0xe1_0868));
        let mut s = rq.start(&head(wr::RDMA_WRITE, 65536), 1024);
        let seg = rq.next_data(&s, 1024, MAX_PKT_PER_ACK);
        rq.data_sent(&mut s, &seg);
        assert!(rq.ghost(Psn::new(0xff_ffff)) && !rq.ghost(Psn::new(0xe1_0868)));
        rq.set_psn(Psn::new(5));
        assert!(rq.ghost(Psn::new(5)) && !rq.ghost(Psn::new(4)));
    }

    #[test]
    fn only_the_transport_timer_repairs_an_atomic_head() {
        // A WRITE, then an atomic, then a READ: a probe resends the READ's request.
        let (mut rq, slots) = sent(&[
            (wr::RDMA_WRITE, 2048),
            (wr::ATOMIC_CMP_AND_SWP, 8),
            (wr::RDMA_READ, 1024),
        ]);
        assert!(!rq.head_unprobed(&slots));
        assert_eq!(rq.probe_psn(&slots, &G, 3), Some(Psn::new(103)));
        // The WRITE completes: the atomic heads the queue, and only going back repairs it
        // (an ACK never completes an atomic).
        rq.cons = 1;
        assert!(rq.head_unprobed(&slots));
        assert_eq!(rq.probe_psn(&slots, &G, 3), None);
        // A READ at the head is probed for.
        rq.cons = 2;
        assert!(!rq.head_unprobed(&slots));
        // Not yet sent: nothing to repair.
        let (rq, slots) = sent(&[]);
        assert!(!rq.head_unprobed(&slots));
    }

    #[test]
    fn refused_request_starts_again() {
        // An atomic whose request the stack refused is started again on the next run:
        // same PSN, same WQE sequence number, one initiator-depth credit taken.
        let mut rq = Requester::new(Psn::new(7));
        let s = rq.start(&head(wr::ATOMIC_FETCH_AND_ADD, 8), 1024);
        let r = rq.next_request(&s, false, 1024);
        rq.unstart();
        let mut again = rq.start(&head(wr::ATOMIC_FETCH_AND_ADD, 8), 1024);
        assert_eq!(again, s);
        let r2 = rq.next_request(&again, false, 1024);
        assert_eq!((r2.psn, r2.resend), (r.psn, false));
        rq.request_sent(&mut again, &r2);
        assert_eq!((rq.rd_outstanding, rq.req_psn), (1, Psn::new(8)));
        assert_eq!(
            rq.start(&head(wr::SEND, 8), 1024).seq,
            s.seq.wrapping_add(1)
        );
    }

    #[test]
    fn segmentation_and_ack_requests() {
        let mut rq = Requester::new(Psn::new(0xff_fffe));
        let mut s = rq.start(&head(wr::RDMA_WRITE, 200 * 256 + 1), 256);
        assert_eq!((s.first_psn.get(), s.last_psn.get()), (0xff_fffe, 198));
        let mut reqs = Vec::new();
        loop {
            let seg = rq.next_data(&s, 256, MAX_PKT_PER_ACK);
            assert_eq!(seg.psn, rq.req_psn);
            assert_eq!(seg.off, seg.k * 256);
            if seg.ack_req {
                reqs.push(seg.k);
            }
            rq.data_sent(&mut s, &seg);
            if seg.last {
                assert_eq!(seg.len, 1);
                break;
            }
        }
        // Every 64 packets, and the last.
        assert_eq!(reqs, [63, 127, 191, 200]);
        assert_eq!(rq.req_psn, s.last_psn.add(1));
        assert_eq!(s.sent, s.length);
        // Asked more often (delay's echoes): every 8 packets, counted across messages;
        // 0 is taken as 1, more than 64 as 64.
        for (every, want) in [(8, vec![7, 15, 19]), (0, (0..20).collect()), (99, vec![19])] {
            let mut m = rq.start(&head(wr::RDMA_WRITE, 20 * 256), 256);
            let mut got = Vec::new();
            loop {
                let seg = rq.next_data(&m, 256, every);
                if seg.ack_req {
                    got.push(seg.k);
                }
                rq.data_sent(&mut m, &seg);
                if seg.last {
                    break;
                }
            }
            assert_eq!(got, want, "every {every}");
        }
        // A zero-length message is one packet.
        let z = rq.start(&head(wr::SEND, 0), 256);
        assert_eq!(z.first_psn, z.last_psn);
        let seg = rq.next_data(&z, 256, MAX_PKT_PER_ACK);
        assert!(seg.first && seg.last && seg.ack_req && seg.len == 0);
    }

    #[test]
    fn window_and_credits() {
        let (mut rq, slots) = sent(&[(wr::RDMA_WRITE, 127 * 1024)]);
        assert!(!rq.window_full());
        rq.req_psn = rq.req_psn.add(1);
        assert!(rq.window_full());
        let fresh = Slot::default();
        rq.rd_outstanding = 1;
        assert!(rq.blocked(&fresh, wr::RDMA_READ, 1));
        assert!(rq.blocked(&fresh, wr::ATOMIC_FETCH_AND_ADD, 0));
        assert!(!rq.blocked(&fresh, wr::RDMA_READ, 2));
        assert!(!rq.blocked(&slots[0], wr::RDMA_READ, 1));
        assert!(!rq.blocked(&fresh, wr::SEND, 1));
    }

    #[test]
    fn acks_complete_in_order_but_never_a_read() {
        // WRITE 100..101, READ 102..105, WRITE 106.
        let (mut rq, mut slots) = sent(&[
            (wr::RDMA_WRITE, 2048),
            (wr::RDMA_READ, 4096),
            (wr::RDMA_WRITE, 10),
        ]);
        assert_eq!(rq.rd_outstanding, 1);
        assert!(!rq.acked_head(&slots, Psn::new(100), true));
        assert!(rq.acked_head(&slots, Psn::new(101), true));
        assert!(!rq.acked_head(&slots, Psn::new(101), false));
        assert_eq!(rq.pop(&mut slots, &G).map(|(i, _)| i), Some(0));
        // An ACK of everything stops at the READ, and the completer's PSN at its first
        // missing response.
        assert!(!rq.acked_head(&slots, Psn::new(106), true));
        rq.ack_done(&slots, Psn::new(106), true, 1024);
        assert_eq!(rq.comp_psn, Psn::new(102));
        slots[1].got = 2048;
        rq.ack_done(&slots, Psn::new(106), true, 1024);
        assert_eq!(rq.comp_psn, Psn::new(104));
        // Never beyond what was sent.
        rq.ack_done(&slots, Psn::new(500), true, 1024);
        assert_eq!(rq.comp_psn, Psn::new(104));
    }

    #[test]
    fn rewind_resends_from_the_psn() {
        let (mut rq, mut slots) = sent(&[
            (wr::RDMA_WRITE, 3000),
            (wr::RDMA_READ, 4096),
            (wr::SEND, 10),
        ]);
        slots[1].got = 3072;
        // Into the WRITE: it resumes at its second packet; later WQEs start again and
        // give their credit back.
        assert!(rq.rewind(&mut slots, &G, 3, Psn::new(101), 1024));
        assert_eq!(
            (rq.next, rq.req_psn, slots[0].sent),
            (0, Psn::new(101), 1024)
        );
        assert!(!slots[1].started && !slots[2].started);
        assert_eq!(rq.rd_outstanding, 0);
        let seg = rq.next_data(&slots[0], 1024, MAX_PKT_PER_ACK);
        assert_eq!((seg.psn, seg.k, seg.off), (Psn::new(101), 1, 1024));
        // A READ asks again from the first response it has not got.
        let (mut rq, mut slots) = sent(&[(wr::RDMA_WRITE, 1), (wr::RDMA_READ, 4096)]);
        slots[1].got = 3072;
        rq.comp_psn = Psn::new(102);
        assert!(rq.rewind(&mut slots, &G, 2, Psn::new(102), 1024));
        assert_eq!(slots[1].got, 1024);
        let r = rq.next_request(&slots[1], true, 1024);
        assert_eq!(
            (r.psn, r.off, r.len, r.span),
            (Psn::new(102), 1024, 3072, 3)
        );
        rq.request_sent(&mut slots[1], &r);
        assert_eq!((rq.req_psn, rq.rd_outstanding), (Psn::new(105), 1));
        // Beyond everything sent: nothing to go back to.
        assert!(!rq.rewind(&mut slots, &G, 2, Psn::new(200), 1024));
    }

    #[test]
    fn failed_check_resends_the_write_in_place() {
        use super::super::super::verify::OnFail;
        // SEND 100, verified WRITE 101..103, SEND 104.
        let (mut rq, mut slots) = sent(&[(wr::SEND, 10), (wr::RDMA_WRITE, 3000), (wr::SEND, 10)]);
        slots[1].vfy = Some(WriteCrc::default());
        assert!(rq.pop(&mut slots, &G).is_some());
        rq.comp_psn = Psn::new(103);
        let f = |rq: &mut Requester, slots: &mut [Slot], psn, a| {
            rq.verify_failed(slots, &G, 3, Psn::new(psn), a, 2)
        };
        // Another attempt, or no verified WRITE there: stale.
        assert_eq!(f(&mut rq, &mut slots, 101, 1).0, OnFail::Stale);
        assert_eq!(f(&mut rq, &mut slots, 104, 0).0, OnFail::Stale);
        assert_eq!(f(&mut rq, &mut slots, 101, 0), (OnFail::Resend, 1));
        // Nothing goes back: the WRITE's packets are sent again, the last asks for an
        // ACK; the SEND after it is not touched.
        let before = (rq.next, rq.req_psn, rq.comp_psn);
        let mut resent = Vec::new();
        while let Some((i, seg)) = rq.repair_next(&slots, 1024) {
            assert_eq!(i, 1);
            resent.push((seg.psn.get(), seg.off, seg.last, seg.ack_req));
        }
        assert_eq!(
            resent,
            [
                (101, 0, false, false),
                (102, 1024, false, false),
                (103, 2048, true, true)
            ]
        );
        assert_eq!((rq.next, rq.req_psn, rq.comp_psn), before);
        assert!(slots[2].started);
        assert_eq!(slots[1].vfy.map(|w| w.attempt), Some(1));
        // The responder still waits for 102 of that resend: from there, same attempt.
        assert_eq!(f(&mut rq, &mut slots, 102, 0).0, OnFail::Again);
        assert_eq!(
            rq.repair_next(&slots, 1024).map(|(_, s)| s.psn),
            Some(Psn::new(102))
        );
        assert_eq!(f(&mut rq, &mut slots, 101, 1).0, OnFail::Resend);
        assert_eq!(f(&mut rq, &mut slots, 101, 2), (OnFail::Fail, 1));
        // Completing the WRITE ends a resend in progress.
        assert!(rq.vrepair.is_some());
        rq.cons = 1;
        assert!(rq.pop(&mut slots, &G).is_some());
        assert!(rq.vrepair.is_none());
        // A WRITE that is not verified: stale.
        let (mut rq, mut slots) = sent(&[(wr::RDMA_WRITE, 10)]);
        assert_eq!(
            rq.verify_failed(&mut slots, &G, 1, Psn::new(100), 0, 3).0,
            OnFail::Stale
        );
    }

    #[test]
    fn stale_nak_is_ignored() {
        let (mut rq, mut slots) = sent(&[(wr::SEND, 4096), (wr::SEND, 4096)]);
        rq.comp_psn = Psn::new(103);
        let before = (rq.next, rq.req_psn);
        assert!(!rq.rewind(&mut slots, &G, 2, Psn::new(102), 1024));
        assert_eq!((rq.next, rq.req_psn), before);
    }

    #[test]
    fn rewind_never_before_the_head_wqe() {
        let (mut rq, mut slots) = sent(&[(wr::SEND, 1024), (wr::SEND, 4096)]);
        // The first completed by a later response; the completer's PSN still names it.
        assert!(rq.pop(&mut slots, &G).is_some());
        assert!(rq.rewind(&mut slots, &G, 2, Psn::new(100), 1024));
        assert_eq!((rq.next, rq.req_psn, slots[1].sent), (1, Psn::new(101), 0));
    }

    #[test]
    fn pop_of_a_wqe_waiting_to_be_resent() {
        let (mut rq, mut slots) = sent(&[(wr::RDMA_READ, 2048), (wr::SEND, 1)]);
        assert!(rq.rewind(&mut slots, &G, 2, Psn::new(100), 1024));
        assert_eq!((rq.next, rq.req_psn), (0, Psn::new(100)));
        // Its responses arrive after all: the next WQE keeps its PSN.
        rq.response_done(Psn::new(101));
        let (i, s) = rq.pop(&mut slots, &G).unwrap_or_default();
        assert_eq!((i, s.wr_id), (0, 2048));
        assert_eq!(
            (rq.next, rq.req_psn, rq.comp_psn),
            (1, Psn::new(102), Psn::new(102))
        );
        assert_eq!(slots[0], Slot::default());
    }

    #[test]
    fn read_responses_in_order() {
        let (mut rq, mut slots) = sent(&[(wr::RDMA_READ, 2500)]);
        let p = |rq: &mut Requester, slots: &mut [Slot], psn| {
            rq.read_resp(slots, &G, 1, Psn::new(psn), 1024)
        };
        assert_eq!(
            p(&mut rq, &mut slots, 100),
            ReadResp::Place {
                slot: 0,
                off: 0,
                length: 2500
            }
        );
        assert!(!rq.read_placed(&mut slots, 0, Psn::new(100), 0, 1024));
        // A response skipped: go back once per gap.
        assert_eq!(p(&mut rq, &mut slots, 102), ReadResp::Gap(Psn::new(101)));
        assert_eq!(p(&mut rq, &mut slots, 102), ReadResp::Stale);
        assert_eq!(p(&mut rq, &mut slots, 100), ReadResp::Stale);
        assert_eq!(
            p(&mut rq, &mut slots, 101),
            ReadResp::Place {
                slot: 0,
                off: 1024,
                length: 2500
            }
        );
        assert!(!rq.read_placed(&mut slots, 0, Psn::new(101), 1024, 1024));
        assert!(rq.read_placed(&mut slots, 0, Psn::new(102), 2048, 452));
        assert_eq!((rq.rd_outstanding, rq.comp_psn), (0, Psn::new(103)));
        assert_eq!(
            Requester::new(Psn::new(0)).read_resp(&mut [], &G, 0, Psn::new(0), 1024),
            ReadResp::Nothing
        );
    }

    #[test]
    fn atomic_acknowledgements() {
        let (rq, slots) = sent(&[(wr::ATOMIC_CMP_AND_SWP, 8), (wr::RDMA_READ, 8)]);
        assert_eq!(
            rq.atomic_resp(&slots, Psn::new(100)).map(|(i, _)| i),
            Some(0)
        );
        assert_eq!(rq.atomic_resp(&slots, Psn::new(101)), None);
        let (rq, slots) = sent(&[(wr::RDMA_READ, 8)]);
        assert_eq!(rq.atomic_resp(&slots, Psn::new(100)), None);
    }

    #[test]
    fn placement_responses() {
        let (rq, slots) = sent(&[(wr::ATOMIC_WRITE, 8), (wr::FLUSH, 0)]);
        assert_eq!(rq.rd_outstanding, 2);
        assert_eq!(
            rq.placement_resp(&slots, Psn::new(100)).map(|(i, _)| i),
            Some(0)
        );
        // Only the head, at its own PSN.
        assert_eq!(rq.placement_resp(&slots, Psn::new(101)), None);
        assert_eq!(rq.atomic_resp(&slots, Psn::new(100)), None);
        let (rq, slots) = sent(&[(wr::RDMA_READ, 0)]);
        assert_eq!(rq.placement_resp(&slots, Psn::new(100)), None);
    }

    #[test]
    fn find_by_psn() {
        let (rq, slots) = sent(&[(wr::SEND, 2048), (wr::RDMA_READ, 3000)]);
        assert_eq!(
            rq.find(&slots, &G, 2, Psn::new(101)).map(|(i, _)| i),
            Some(0)
        );
        assert_eq!(
            rq.find(&slots, &G, 2, Psn::new(104)).map(|(i, _)| i),
            Some(1)
        );
        assert_eq!(rq.find(&slots, &G, 2, Psn::new(105)), None);
        assert_eq!(rq.find(&slots, &G, 2, Psn::new(99)), None);
    }
}
