// SPDX-License-Identifier: GPL-2.0
//! The production RC engine over a simulated link that loses, duplicates and reorders
//! packets in both directions: the requester ([`Requester`], [`Slot`]s, segmentation,
//! the completer's syndrome and timer rules) against the responder ([`Responder`]), in
//! plain IBTA go-back-N (what rrxe speaks to rdma_rxe and other standard peers) and with
//! selective retransmission (the responder's [`Keeper`] keeps what arrives beyond the
//! expected PSN and reports holes, the requester's [`SackTx`] resends what SACKs name,
//! silences end with a probe).
//!
//! The harness does only what the driver does around the engine: it keeps the bytes
//! (gather, scatter, READ data, the atomic's memory, the receive queue), carries
//! packets, completes the WQEs the engine pops and runs the timers. Every decision —
//! PSNs, AckReq, which WQE an ACK completes, where to go back to, when the responder
//! ACKs, NAKs or sends an RNR NAK, what a duplicate gets — is the engine's.
//! Properties: WRITEs and SENDs arrive and READs return byte-exact, every atomic executes
//! exactly once and returns the value before it, every WQE completes successfully and in
//! order, a PSN always carries the same bytes; a lossless link sees no NAK, no timeout and
//! at most one ACK per AckReq; go-back-N NAKs never exceed lost packets; selective
//! retransmissions never exceed lost packets plus probes, and the responder never keeps
//! more than its limit. With verified WRITEs the responder's check of a WRITE fails
//! at random (a corrupted placement): every failure is resent or, its retries spent,
//! completes the WRITE with an error, and no WRITE completes successfully with bytes
//! that differ.
// Tests index, unwrap and panic freely: a failure is the test failing.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use proptest::prelude::*;
use rrxe_proto::exthdr::{NakCode, Syndrome};
use rrxe_proto::psn::Psn;
use rrxe_proto::rc::comp::{Reply, Timer};
use rrxe_proto::rc::req::{self, Seg};
use rrxe_proto::rc::req::{ReadResp, Requester, Slot, WqeHead};
use rrxe_proto::rc::resp::{Check, Dup, Responder};
use rrxe_proto::rc::sack::{Arrive, CatchUp, Keeper, SackTx};
use rrxe_proto::rc::{needs_response, packets, Retry, ACK};
use rrxe_proto::sel::{ProbeDelay, Sack, RX_SPAN};
use rrxe_proto::uapi::{wc_status, wr, RingGeom};
use rrxe_proto::verify::{crc, Alg, Crc, OnFail, TableCrc};
use std::collections::{BTreeMap, HashMap};

mod common;
use common::{messages, mtus, sizes, Link, Rng};

/// Ticks without sending or hearing anything before the requester's transport timer
/// fires (the driver re-arms it on both).
const TIMEOUT: u32 = 8;
/// A tick, in the driver's clock (nanoseconds): a millisecond.
const TICK_NS: u64 = 1_000_000;
/// Ticks an RNR NAK makes the requester wait.
const RNR_TICKS: u32 = 3;
/// Packets the requester sends per tick (and so the size of a receive batch).
const BURST: usize = 8;
/// Initiator depth (`max_rd_atomic`).
const RD_ATOMIC: u8 = 4;

#[derive(Clone, Copy, Debug)]
enum Pkt {
    /// A SEND or WRITE packet: message `msg`, bytes `[off, off + len)`.
    Data {
        psn: Psn,
        msg: usize,
        off: u32,
        len: u32,
        first: bool,
        last: bool,
        ack_req: bool,
        send: bool,
        /// Sent again because a SACK or a probe named it (XF_RETX).
        retx: bool,
        /// A tail-loss probe (XF_PROBE).
        probe: bool,
        /// A verified WRITE's last packet: the message's CRC and the attempt.
        vcrc: Option<(u32, u8)>,
    },
    /// A READ request for `len` bytes of message `msg` from `off`.
    Read {
        psn: Psn,
        msg: usize,
        off: u32,
        len: u32,
    },
    /// A fetch-and-add of `add` on the responder's counter.
    Atomic { psn: Psn, add: u64 },
}

impl Pkt {
    fn psn(&self) -> Psn {
        match *self {
            Pkt::Data { psn, .. } | Pkt::Read { psn, .. } | Pkt::Atomic { psn, .. } => psn,
        }
    }

    /// (retransmission, probe) flags.
    fn flags(&self) -> (bool, bool) {
        match *self {
            Pkt::Data { retx, probe, .. } => (retx, probe),
            _ => (false, false),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Back {
    /// An ACK or NAK (its AETH syndrome).
    Aeth(Psn, Syndrome),
    /// A READ response: message `msg`, bytes `[off, off + len)`.
    ReadResp {
        psn: Psn,
        msg: usize,
        off: u32,
        len: u32,
    },
    /// An atomic acknowledgement with the value before the operation.
    AtomicAck { psn: Psn, orig: u64 },
    /// An ACK of everything before `psn + 1` that names holes after it.
    Sack(Psn, Sack),
    /// The verified WRITE starting at `psn` failed its check (this attempt).
    Vfail(Psn, u8),
}

/// What each message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Write,
    Read,
    Send,
    FetchAdd,
}

impl Kind {
    /// Message `i`'s kind from two bits of `kinds`.
    fn of(kinds: u64, i: usize) -> Kind {
        match (kinds >> (2 * (i % 32))) & 3 {
            0 => Kind::Write,
            1 => Kind::Read,
            2 => Kind::Send,
            _ => Kind::FetchAdd,
        }
    }

    fn opcode(self) -> u32 {
        match self {
            Kind::Write => wr::RDMA_WRITE,
            Kind::Read => wr::RDMA_READ,
            Kind::Send => wr::SEND,
            Kind::FetchAdd => wr::ATOMIC_FETCH_AND_ADD,
        }
    }
}

/// The addend of atomic message `i`.
fn addend(i: usize) -> u64 {
    1 << (i % 40)
}

/// Data packet `seg` of message `msg` in `slot`, with its (retransmission, probe) flags;
/// a verified WRITE's last packet carries the CRC and the attempt.
fn data_pkt(slot: &Slot, seg: &Seg, msg: usize, send: bool, (retx, probe): (bool, bool)) -> Pkt {
    Pkt::Data {
        psn: seg.psn,
        msg,
        off: seg.off,
        len: seg.len,
        first: seg.first,
        last: seg.last,
        ack_req: seg.ack_req,
        send,
        retx,
        probe,
        vcrc: slot
            .vfy
            .filter(|_| seg.last)
            .map(|w| (w.header().crc, w.header().attempt)),
    }
}

/// The requester side: the engine, the slots and the bytes.
struct Req {
    rq: Requester,
    slots: Vec<Slot>,
    geom: RingGeom,
    prod: u32,
    /// The WQE of each ring slot: (message, kind).
    wqes: Vec<(usize, Kind)>,
    mtu: u32,
    /// READ destination buffers, and what each atomic returned.
    got: Vec<Vec<u8>>,
    orig: HashMap<usize, u64>,
    completions: Vec<(u64, u32)>,
    ack_reqs: u64,
    /// Selective retransmission negotiated: SACKs are answered, silences probed.
    sel: bool,
    sack: SackTx,
    /// Round trips (as the driver measures them: one tick is a millisecond) and the
    /// clock, in ticks.
    pto: ProbeDelay,
    now: u64,
    /// Packets sent again for a SACK, and probes.
    retx: u64,
    probes: u64,
    /// WRITEs are verified; a failed one is resent this many times.
    verify: Option<u32>,
    /// WRITEs sent again after a failed check.
    vresent: u64,
    /// See [`Setup::stale_rtt`].
    stale_rtt: bool,
    /// See [`Outcome::retx_inflight`].
    retx_inflight: u64,
}

impl Req {
    fn complete(&mut self, status: u32) {
        if let Some((_, s)) = self.rq.pop(&mut self.slots, &self.geom) {
            self.completions.push((s.wr_id, status));
        }
    }

    /// As the driver's `ack_upto`.
    fn ack_upto(&mut self, psn: Psn, incl: bool) {
        while self.rq.acked_head(&self.slots, psn, incl) {
            self.complete(wc_status::SUCCESS);
        }
        self.rq.ack_done(&self.slots, psn, incl, self.mtu);
    }

    fn rewind(&mut self, psn: Psn) {
        self.rq
            .rewind(&mut self.slots, &self.geom, self.prod, psn, self.mtu);
    }

    /// As the driver's `req_run`: up to `BURST` packets, a verified WRITE's resend first.
    fn run(&mut self, msgs: &[Vec<u8>], out: &mut Vec<Pkt>) {
        let mut budget = BURST;
        while budget > 0 {
            let Some((i, seg)) = self.rq.repair_next(&self.slots, self.mtu) else {
                break;
            };
            budget -= 1;
            let (msg, _) = self.wqes[i as usize];
            out.push(data_pkt(
                &self.slots[i as usize],
                &seg,
                msg,
                false,
                (true, false),
            ));
        }
        let first = self.rq.req_psn;
        self.send_new(msgs, budget, out);
        if self.rq.req_psn != first {
            let now = self.now;
            self.pto.sent(self.rq.req_psn.sub(1), || now * TICK_NS);
        }
    }

    /// New packets, up to `budget`.
    fn send_new(&mut self, msgs: &[Vec<u8>], budget: usize, out: &mut Vec<Pkt>) {
        for _ in 0..budget {
            if self.rq.rnr_wait || self.rq.window_full() {
                return;
            }
            let i = self.rq.next;
            if i == self.prod {
                return;
            }
            let (msg, kind) = self.wqes[i as usize];
            let opcode = kind.opcode();
            let stored = self.slots[i as usize];
            if self.rq.blocked(&stored, opcode, RD_ATOMIC) {
                return;
            }
            let mut slot = stored;
            if !slot.started {
                let length = if kind == Kind::FetchAdd {
                    8
                } else {
                    msgs[msg].len()
                };
                let head = WqeHead {
                    wr_id: msg as u64,
                    opcode,
                    flags: 0,
                    length: length as u32,
                };
                slot = self.rq.start(&head, self.mtu);
                if kind == Kind::Write && self.verify.is_some() {
                    // (Started again after a go-back: the CRC so far and the attempts
                    // stay.)
                    slot.vfy = Some(stored.vfy.unwrap_or_default());
                }
            }
            if needs_response(opcode) {
                let r = self.rq.next_request(&slot, stored.started, self.mtu);
                out.push(if kind == Kind::Read {
                    Pkt::Read {
                        psn: r.psn,
                        msg,
                        off: r.off,
                        len: r.len,
                    }
                } else {
                    Pkt::Atomic {
                        psn: r.psn,
                        add: addend(msg),
                    }
                });
                self.rq.request_sent(&mut slot, &r);
                self.slots[i as usize] = slot;
                self.rq.next = self.geom.next(i);
            } else {
                let seg = self
                    .rq
                    .next_data(&slot, self.mtu, rrxe_proto::rc::MAX_PKT_PER_ACK);
                self.ack_reqs += u64::from(seg.ack_req);
                // As the driver: the CRC grows as each packet is first gathered.
                if let Some(w) = slot.vfy.as_mut().filter(|w| w.due(seg.off)) {
                    let (a, n) = (seg.off as usize, seg.len as usize);
                    let raw = TableCrc.update(w.alg, w.raw, &msgs[msg][a..a + n]);
                    w.fed(raw, seg.len);
                }
                out.push(data_pkt(
                    &slot,
                    &seg,
                    msg,
                    kind == Kind::Send,
                    (false, false),
                ));
                self.rq.data_sent(&mut slot, &seg);
                self.slots[i as usize] = slot;
                if seg.last {
                    self.rq.next = self.geom.next(i);
                }
            }
        }
    }

    /// As the driver's `on_response` (go-back-N). `true`: progress (the timer restarts);
    /// `Err(status)`: the QP failed.
    fn on_back(&mut self, b: Back, remote: &[Vec<u8>], out: &mut Vec<Pkt>) -> Result<bool, u32> {
        match b {
            Back::Sack(psn, s) => {
                // An ACK first (cumulative), then exactly the PSNs it names.
                let before = self.rq.comp_psn;
                self.ack_upto(psn, true);
                self.sampled(psn);
                let comp = self.rq.comp_psn;
                let hold = if self.stale_rtt {
                    TICK_NS
                } else {
                    u64::from(self.pto.sack_hold_us(TICK_NS as u32 / 1000)) * 1000
                };
                self.sack
                    .begin(s.full, before, comp, self.now * TICK_NS, hold);
                for p in s.iter() {
                    if self.sack.resend(p) {
                        self.retx += u64::from(self.retransmit(p, false, out));
                        self.pto.cancel();
                    }
                }
            }
            Back::Aeth(psn, syn) => match self.rq.on_syndrome(syn) {
                Reply::Ack => {
                    self.ack_upto(psn, true);
                    self.sampled(psn);
                }
                Reply::GoBack => {
                    self.ack_upto(psn, false);
                    self.rewind(psn);
                    return Ok(true);
                }
                Reply::RnrWait { .. } => {
                    self.ack_upto(psn, false);
                    self.rewind(psn);
                    self.rq.rnr_wait = true;
                    return Ok(true);
                }
                Reply::Fail { status, ack_first } => {
                    if ack_first {
                        self.ack_upto(psn, false);
                    }
                    self.complete(status);
                    return Err(status);
                }
                Reply::Malformed => return Ok(false),
            },
            Back::ReadResp { psn, msg, off, len } => {
                self.ack_upto(psn, false);
                let r = self
                    .rq
                    .read_resp(&mut self.slots, &self.geom, self.prod, psn, self.mtu);
                if let ReadResp::Place {
                    slot,
                    off: at,
                    length,
                } = r
                {
                    // The responder's offset and the requester's must agree.
                    assert_eq!(at, off, "response {psn:?} placed at {at}, carries {off}");
                    assert!(at + len <= length);
                    let (m, _) = self.wqes[slot as usize];
                    assert_eq!(m, msg);
                    let (a, n) = (at as usize, len as usize);
                    self.got[m][a..a + n].copy_from_slice(&remote[m][a..a + n]);
                    if self.rq.read_placed(&mut self.slots, slot, psn, at, len) {
                        self.complete(wc_status::SUCCESS);
                    }
                }
            }
            Back::Vfail(psn, attempt) => {
                // As the driver's `on_vfail`.
                self.ack_upto(psn, false);
                let retries = self.verify.expect("a report without verified WRITEs");
                let (r, i) = self.rq.verify_failed(
                    &mut self.slots,
                    &self.geom,
                    self.prod,
                    psn,
                    attempt,
                    retries,
                );
                match r {
                    OnFail::Stale | OnFail::Again => {}
                    OnFail::Resend => self.vresent += 1,
                    OnFail::Fail => {
                        while self.rq.cons != i {
                            self.complete(wc_status::WR_FLUSH_ERR);
                        }
                        self.complete(wc_status::REM_OP_ERR);
                        return Err(wc_status::REM_OP_ERR);
                    }
                }
            }
            Back::AtomicAck { psn, orig } => {
                self.ack_upto(psn, false);
                if let Some((i, s)) = self.rq.atomic_resp(&self.slots, psn) {
                    let (m, _) = self.wqes[i as usize];
                    assert_eq!(s.wr_id, m as u64);
                    assert!(self.orig.insert(m, orig).is_none(), "atomic {m} twice");
                    self.rq.response_done(psn);
                    self.complete(wc_status::SUCCESS);
                }
            }
        }
        self.rq.answered();
        Ok(true)
    }

    /// An acknowledgement of everything up to `psn` arrived: a round-trip sample if it
    /// covers the timed packet.
    fn sampled(&mut self, psn: Psn) {
        if self.pto.covers(psn) {
            self.pto.sample(self.now * TICK_NS);
        }
    }

    /// As the driver's `retransmit_psn`: PSN `p` again, alone (a READ or atomic: going
    /// back to it). `true` if a data packet went out.
    fn retransmit(&mut self, p: Psn, probe: bool, out: &mut Vec<Pkt>) -> bool {
        if p.before(self.rq.comp_psn) || !p.before(self.rq.req_psn) {
            return false;
        }
        let Some((i, s)) = req::find(&self.slots, &self.geom, self.rq.cons, self.prod, p) else {
            return false;
        };
        if s.responds() {
            if p == s.first_psn {
                self.rewind(p);
            }
            return false;
        }
        let (msg, kind) = self.wqes[i as usize];
        let seg = Seg::of(&s, p.diff(s.first_psn).max(0) as u32, self.mtu, true);
        // (A packet sent before: its bytes are in the CRC already.)
        assert!(s.vfy.is_none_or(|w| !w.due(seg.off) || seg.len == 0));
        out.push(data_pkt(&s, &seg, msg, kind == Kind::Send, (true, probe)));
        true
    }

    /// A timer fired. `Err(status)`: the retry budget ran out.
    fn timeout(&mut self, out: &mut Vec<Pkt>) -> Result<(), u32> {
        match self.rq.timer() {
            Timer::RnrDone | Timer::Idle => Ok(()),
            Timer::Expired if self.sel && self.probe(out) => Ok(()),
            Timer::Expired => {
                if !self.rq.timed_out() {
                    self.complete(wc_status::RETRY_EXC_ERR);
                    return Err(wc_status::RETRY_EXC_ERR);
                }
                let p = self.rq.comp_psn;
                self.rewind(p);
                Ok(())
            }
        }
    }

    /// As the driver's `probe`: the last packet again, flagged, where the engine says so
    /// (`false`: go back instead).
    fn probe(&mut self, out: &mut Vec<Pkt>) -> bool {
        let Some(last) = self.rq.probe_psn(&self.slots, &self.geom, self.prod) else {
            return false;
        };
        self.probes += 1;
        self.sack.probe_sent(last);
        self.retransmit(last, true, out);
        true
    }
}

/// The responder side: the engine and the bytes.
struct Resp {
    rs: Responder,
    replay: Vec<Option<(Psn, u64)>>,
    /// The requester's oldest PSN not yet completed, as the batch arrives: a duplicate
    /// atomic behind it is a copy the link delayed, whose answer the requester has.
    req_comp: Psn,
    mtu: u32,
    /// WRITE and SEND destinations.
    out: Vec<Vec<u8>>,
    /// The atomics' memory.
    counter: u64,
    /// Receive WQEs posted (`None`: always one).
    credits: Option<u32>,
    acks: u64,
    naks: u64,
    rnr_naks: u64,
    /// Selective retransmission: what arrives beyond the expected PSN is kept (at most
    /// `kept_max` packets) and holes are reported.
    sel: bool,
    keeper: Keeper,
    kept: BTreeMap<u32, Pkt>,
    kept_max: usize,
    max_kept: usize,
    sacks: u64,
    /// Per-mille chance that a verified WRITE's placement is corrupted (one byte).
    fault: u32,
    dice: Rng,
    /// The WRITE in progress started at this PSN.
    write_first: Psn,
    /// Corruptions injected, checks failed, checks passed.
    faults: u64,
    vfailed: u64,
    vok: u64,
}

impl Resp {
    fn reply(&mut self, b: Back, out: &mut Vec<Back>) {
        match b {
            Back::Aeth(_, Syndrome::Ack(_)) => self.acks += 1,
            Back::Aeth(_, Syndrome::Rnr(_)) => self.rnr_naks += 1,
            Back::Aeth(..) | Back::Vfail(..) => self.naks += 1,
            Back::Sack(..) => self.sacks += 1,
            _ => {}
        }
        self.rs.sent();
        out.push(b);
    }

    fn ack_executed(&mut self, out: &mut Vec<Back>) {
        if let Some(p) = self.rs.ack_psn(self.sel) {
            self.reply(Back::Aeth(p, ACK), out);
        }
    }

    fn send_sack(&mut self, s: Sack, out: &mut Vec<Back>) {
        let p = self.rs.psn.sub(1);
        self.reply(Back::Sack(p, s), out);
    }

    /// Every hole, or the ACK if there is none.
    fn answer_probe(&mut self, out: &mut Vec<Back>) {
        match self.keeper.probe_answer() {
            Some(s) => self.send_sack(s, out),
            None => self.ack_executed(out),
        }
    }

    fn drop_kept(&mut self) {
        self.kept.clear();
        self.keeper.restart(self.rs.psn);
    }

    /// As the driver's `ahead`: a request beyond the expected PSN.
    fn ahead(&mut self, p: Pkt, msgs: &[Vec<u8>], out: &mut Vec<Back>) {
        if self.keeper.rxw.base() != self.rs.psn {
            self.catch_up(msgs, out);
        }
        let (retx, probe) = p.flags();
        match self.keeper.arrive(p.psn(), probe, retx) {
            Arrive::Keep {
                answer_probe,
                again,
                ..
            } => {
                if answer_probe {
                    self.answer_probe(out);
                } else if let Some(s) = again {
                    self.send_sack(s, out);
                }
                if self.kept.len() >= self.kept_max {
                    self.keeper.store_failed(p.psn());
                    return;
                }
                self.kept.insert(p.psn().get(), p);
                self.max_kept = self.max_kept.max(self.kept.len());
                if let Some(s) = self.keeper.stored() {
                    self.send_sack(s, out);
                }
            }
            Arrive::Duplicate { answer_probe } => {
                if answer_probe {
                    self.answer_probe(out);
                }
            }
            Arrive::Limit => {}
        }
    }

    /// As the driver's `catch_up`: the kept packets that became the expected one.
    fn catch_up(&mut self, msgs: &[Vec<u8>], out: &mut Vec<Back>) {
        if !self.sel {
            return;
        }
        for _ in 0..2 * RX_SPAN {
            match self.keeper.catch_up(self.rs.psn) {
                CatchUp::Done => return,
                CatchUp::Restart => return self.drop_kept(),
                CatchUp::Step { release, process } => {
                    self.kept.remove(&release.get());
                    let next = if process {
                        self.kept.remove(&self.rs.psn.get())
                    } else {
                        None
                    };
                    if let Some(p) = next {
                        self.in_order(p, msgs, out);
                    }
                }
            }
        }
    }

    /// As the driver's `read_request`: every response of the request.
    fn answer_read(&mut self, psn: Psn, msg: usize, off: u32, len: u32, out: &mut Vec<Back>) {
        let n = packets(len, self.mtu);
        for k in 0..n {
            let o = (k * self.mtu).min(len);
            out.push(Back::ReadResp {
                psn: psn.add(k),
                msg,
                off: off + o,
                len: (len - o).min(self.mtu),
            });
        }
    }

    /// As the driver's `in_order`: executes `p`, then the engine's outcome.
    fn in_order(&mut self, p: Pkt, msgs: &[Vec<u8>], out: &mut Vec<Back>) {
        let responds = !matches!(p, Pkt::Data { .. });
        if self.rs.in_order(responds) {
            self.ack_executed(out);
        }
        let psn = p.psn();
        let (last, ack_req) = match p {
            Pkt::Data {
                msg,
                off,
                len,
                first,
                last,
                ack_req,
                send,
                vcrc,
                ..
            } => {
                if send && first {
                    // A SEND takes its receive WQE with its first packet.
                    match &mut self.credits {
                        Some(0) => {
                            self.reply(Back::Aeth(psn, Syndrome::Rnr(1)), out);
                            if self.rs.rnr(self.sel) {
                                self.drop_kept();
                            }
                            return;
                        }
                        Some(c) => *c -= 1,
                        None => {}
                    }
                }
                if first {
                    self.write_first = psn;
                }
                if let (true, Some((_, attempt))) = (last, vcrc) {
                    // An old copy of the last packet, from before the attempt a failure
                    // report asked for: dropped unexecuted.
                    if self.rs.stale_attempt(attempt) {
                        // (Whoever sent it has not heard the report, or resends the
                        // repair: say where it stands.)
                        if let Some(r) = self.rs.repair() {
                            self.reply(Back::Vfail(r.next, r.reported), out);
                        }
                        return;
                    }
                }
                let (a, n) = (off as usize, len as usize);
                self.out[msg][a..a + n].copy_from_slice(&msgs[msg][a..a + n]);
                if let (true, Some((crc_sent, attempt))) = (last, vcrc) {
                    // As the driver's `check_write`: maybe corrupt, read back, compare.
                    let m = &mut self.out[msg];
                    if !m.is_empty() && self.dice.below(1000) < self.fault {
                        let at = self.dice.below(m.len() as u32) as usize;
                        m[at] = !m[at];
                        self.faults += 1;
                    }
                    if crc(&TableCrc, Alg::Crc32, m) != crc_sent {
                        self.vfailed += 1;
                        let first = self.write_first;
                        self.rs.verify_failed(first, psn, attempt);
                        self.reply(Back::Vfail(first, attempt), out);
                        return;
                    }
                    self.vok += 1;
                    self.rs.verify_passed();
                }
                (last, ack_req)
            }
            Pkt::Read { msg, off, len, .. } => {
                self.rs.read_accepted();
                self.answer_read(psn, msg, off, len, out);
                self.rs.read_executed(psn, packets(len, self.mtu));
                (true, true)
            }
            Pkt::Atomic { add, .. } => {
                let orig = self.counter;
                self.counter = orig.wrapping_add(add);
                self.rs.atomic_executed(&mut self.replay, psn, orig);
                self.reply(Back::AtomicAck { psn, orig }, out);
                (true, true)
            }
        };
        if self.rs.executed(psn, last, ack_req, responds, true) {
            self.reply(Back::Aeth(psn, ACK), out);
        }
    }

    /// One receive batch.
    fn batch(&mut self, pkts: Vec<Pkt>, msgs: &[Vec<u8>], out: &mut Vec<Back>) {
        for p in pkts {
            let (retx, probe) = p.flags();
            match self.rs.check(p.psn(), self.sel, probe) {
                Check::Execute => {
                    if self.sel && self.keeper.rxw.has_holes() {
                        self.keeper.filled(p.psn(), retx);
                    }
                    self.in_order(p, msgs, out);
                    self.catch_up(msgs, out);
                    if probe && self.sel && self.keeper.rxw.has_holes() {
                        self.answer_probe(out);
                    }
                }
                Check::Keep => self.ahead(p, msgs, out),
                Check::RnrAgain(e) => self.reply(Back::Aeth(e, Syndrome::Rnr(1)), out),
                Check::RepairGap(e, a) => self.reply(Back::Vfail(e, a), out),
                Check::Replace => {
                    // Placed again at its offset, as the driver does from its XETH.
                    if let Pkt::Data {
                        psn, msg, off, len, ..
                    } = p
                    {
                        let (a, n) = (off as usize, len as usize);
                        self.out[msg][a..a + n].copy_from_slice(&msgs[msg][a..a + n]);
                        self.rs.replaced(psn);
                    }
                }
                Check::Duplicate => {
                    let read = matches!(p, Pkt::Read { .. });
                    let atomic = matches!(p, Pkt::Atomic { .. });
                    let probe_sel = probe && self.sel;
                    let dup =
                        self.rs
                            .duplicate(&self.replay, p.psn(), (read, atomic, false), probe_sel);
                    match dup {
                        Dup::Read => {
                            if let Pkt::Read { psn, msg, off, len } = p {
                                self.answer_read(psn, msg, off, len, out);
                            }
                        }
                        Dup::Atomic(Some(orig)) => {
                            self.reply(Back::AtomicAck { psn: p.psn(), orig }, out)
                        }
                        // Forgotten: a link's late copy of an atomic the requester
                        // completed is dropped (the driver counts it in `replay_miss`);
                        // one it still waits for is the bug.
                        Dup::Atomic(None) if p.psn().before(self.req_comp) => {}
                        Dup::Atomic(None) => panic!("atomic {:?} forgotten", p.psn()),
                        Dup::Ack => self.ack_executed(out),
                        Dup::Probe => self.answer_probe(out),
                        Dup::Placement => panic!("no ATOMIC WRITE or FLUSH here"),
                    }
                }
                Check::NakSeq(e) => {
                    self.reply(Back::Aeth(e, Syndrome::Nak(NakCode::PsnSeqErr)), out)
                }
                Check::Drop => {}
            }
        }
        if self.sel {
            if let Some(s) = self.keeper.batch_end(self.kept.is_empty()) {
                self.send_sack(s, out);
            }
        }
        if self.rs.ack_owed() {
            self.ack_executed(out);
        }
    }
}

struct Outcome {
    ok: bool,
    retx: u64,
    /// Packets resent for a SACK while an earlier copy was still on its way.
    retx_inflight: u64,
    probes: u64,
    sacks: u64,
    max_kept: usize,
    /// The QP failed with this status.
    failed: Option<u32>,
    lost: u64,
    naks: u64,
    rnr_naks: u64,
    acks: u64,
    ack_reqs: u64,
    timeouts: u64,
    /// Verification: corruptions injected, checks failed and passed, WRITEs resent.
    faults: u64,
    vfailed: u64,
    vok: u64,
    vresent: u64,
    /// Every WQE that completed successfully carried (WRITE, SEND) or brought (READ)
    /// exact bytes.
    successes_exact: bool,
}

/// How a run is set up besides its messages.
#[derive(Clone, Copy)]
struct Setup {
    mtu: usize,
    seed: u64,
    /// Per-mille loss, duplication and reordering, both ways.
    link: (u32, u32, u32),
    /// A receive WQE is posted every this many ticks (0: always one there).
    replenish: u32,
    rnr_retry: u8,
    /// Selective retransmission (no READs: their repair is `tests/read_repair.rs`'s).
    sel: bool,
    /// Packets the selective responder keeps at most.
    kept_max: usize,
    /// Verified WRITEs: (per-mille chance of a corrupted placement, retries).
    verify: Option<(u32, u32)>,
    /// Extra delay per packet, up to this many ticks, both ways, order kept.
    jitter: u32,
    /// The requester's round-trip estimate is stale (its samples were all cancelled
    /// under loss): a full SACK's hold is one tick, whatever the path's round trip.
    stale_rtt: bool,
}

/// Messages of `sizes`, each of the kind two bits of `kinds` name.
fn run(sizes: &[usize], kinds: u64, s: Setup) -> Outcome {
    let (loss, dup, reorder) = s.link;
    let start = Psn::new((s.seed as u32) & 0xff_ffff);
    let msgs = messages(sizes, 5);
    let n = msgs.len();
    let kind = |i: usize| match Kind::of(kinds, i) {
        Kind::Read if s.sel => Kind::Write,
        k => k,
    };
    let geom = RingGeom {
        log2_slot: 6,
        mask: 63,
    };
    let mut rq = Requester::new(start);
    rq.retry = Retry::unlimited();
    rq.rnr = Retry::rnr(s.rnr_retry);
    let mut req = Req {
        rq,
        slots: vec![Slot::default(); 64],
        geom,
        prod: n as u32,
        wqes: (0..64)
            .map(|i| {
                let m = i.min(n.max(1) - 1);
                (m, kind(m))
            })
            .collect(),
        mtu: s.mtu as u32,
        got: msgs.iter().map(|m| vec![0u8; m.len()]).collect(),
        orig: HashMap::new(),
        completions: Vec::new(),
        ack_reqs: 0,
        sel: s.sel,
        sack: SackTx::new(start),
        pto: ProbeDelay::new(),
        now: 0,
        retx: 0,
        probes: 0,
        verify: s.verify.map(|(_, r)| r),
        vresent: 0,
        stale_rtt: s.stale_rtt,
        retx_inflight: 0,
    };
    let mut rs = Responder::new();
    rs.set_psn(start);
    let mut resp = Resp {
        rs,
        // Exactly the initiator depth (the driver keeps REPLAY, the deepest allowed): a
        // requester that ever had more atomics unanswered than `max_rd_atomic` would send
        // a duplicate whose result is gone ("forgotten" below).
        replay: vec![None; RD_ATOMIC as usize],
        req_comp: start,
        mtu: s.mtu as u32,
        out: msgs.iter().map(|m| vec![0u8; m.len()]).collect(),
        counter: 0,
        credits: (s.replenish != 0).then_some(0),
        acks: 0,
        naks: 0,
        rnr_naks: 0,
        sel: s.sel,
        keeper: Keeper::new(start, 48, 8),
        kept: BTreeMap::new(),
        kept_max: s.kept_max,
        max_kept: 0,
        sacks: 0,
        fault: s.verify.map_or(0, |(f, _)| f),
        dice: Rng(s.seed.rotate_left(17) | 1),
        write_first: start,
        faults: 0,
        vfailed: 0,
        vok: 0,
    };
    let mut rng = Rng(s.seed | 1);
    let mut fwd: Link<Pkt> = Link::new(loss, dup, reorder).with_jitter(s.jitter);
    let mut back: Link<Back> = Link::new(loss, dup, reorder).with_jitter(s.jitter);
    let (mut silent, mut timeouts, mut failed) = (0u32, 0u64, None);
    let mut seen = HashMap::new();
    for now in 0..400_000u64 {
        if req.completions.len() == n || failed.is_some() {
            break;
        }
        req.now = now;
        if let Some(c) = &mut resp.credits {
            if now % u64::from(s.replenish) == 0 {
                *c += 1;
            }
        }
        let mut sent = Vec::new();
        req.run(&msgs, &mut sent);
        let mut progress = !sent.is_empty();
        for p in sent {
            // A PSN always carries the same bytes, whatever went back and resent it.
            if let Pkt::Data { psn, msg, off, .. } = p {
                let e = *seen.entry(psn.get()).or_insert((msg, off));
                assert_eq!(e, (msg, off), "PSN {psn:?} reused for other data");
            }
            fwd.send(now, &mut rng, p);
        }
        let mut replies = Vec::new();
        let arrived = fwd.due(now);
        if !arrived.is_empty() {
            resp.req_comp = req.rq.comp_psn;
            resp.batch(arrived, &msgs, &mut replies);
        }
        for b in replies {
            back.send(now, &mut rng, b);
        }
        let mut again = Vec::new();
        for b in back.due(now) {
            match req.on_back(b, &msgs, &mut again) {
                Ok(p) => progress |= p,
                Err(st) => failed = Some(st),
            }
        }
        silent = if progress { 0 } else { silent + 1 };
        let rnr_over = req.rq.rnr_wait && silent >= RNR_TICKS;
        if rnr_over || (silent >= TIMEOUT && !req.rq.idle()) {
            silent = 0;
            timeouts += u64::from(!rnr_over);
            if let Err(st) = req.timeout(&mut again) {
                failed = Some(st);
            }
        }
        // (Retransmissions and probes go out at the next tick.)
        for p in &again {
            if let Pkt::Data {
                psn,
                retx: true,
                probe: false,
                ..
            } = *p
            {
                if fwd.any(|q| matches!(*q, Pkt::Data { psn: x, .. } if x == psn)) {
                    req.retx_inflight += 1;
                }
            }
        }
        for p in again {
            fwd.send(now, &mut rng, p);
        }
    }
    // WRITEs and SENDs landed at the responder, READs came back, atomics ran once each
    // and in order; every WQE completed in order.
    let data_ok = (0..n).all(|i| match kind(i) {
        Kind::Write | Kind::Send => resp.out[i] == msgs[i],
        Kind::Read => req.got[i] == msgs[i],
        Kind::FetchAdd => true,
    });
    let mut sum = 0u64;
    let mut atomics_ok = true;
    for i in (0..n).filter(|&i| kind(i) == Kind::FetchAdd) {
        atomics_ok &= req.orig.get(&i) == Some(&sum);
        sum = sum.wrapping_add(addend(i));
    }
    atomics_ok &= resp.counter == sum;
    let in_order = req.completions.len() == n
        && req
            .completions
            .iter()
            .enumerate()
            .all(|(i, &(id, st))| id == i as u64 && st == wc_status::SUCCESS);
    // Whatever failed later, what completed successfully (in order, before any error)
    // holds exact bytes.
    let successes_exact = req
        .completions
        .iter()
        .enumerate()
        .take_while(|&(_, &(_, st))| st == wc_status::SUCCESS)
        .all(|(i, &(id, _))| {
            id == i as u64
                && match kind(i) {
                    Kind::Write | Kind::Send => resp.out[i] == msgs[i],
                    Kind::Read => req.got[i] == msgs[i],
                    Kind::FetchAdd => true,
                }
        });
    Outcome {
        ok: data_ok && atomics_ok && in_order && failed.is_none(),
        faults: resp.faults,
        vfailed: resp.vfailed,
        vok: resp.vok,
        vresent: req.vresent,
        successes_exact,
        retx: req.retx,
        retx_inflight: req.retx_inflight,
        probes: req.probes,
        sacks: resp.sacks,
        max_kept: resp.max_kept,
        failed,
        lost: fwd.lost,
        naks: resp.naks,
        rnr_naks: resp.rnr_naks,
        acks: resp.acks,
        ack_reqs: req.ack_reqs,
        timeouts,
    }
}

fn setup(mtu: usize, seed: u64, link: (u32, u32, u32)) -> Setup {
    Setup {
        mtu,
        seed,
        link,
        replenish: 0,
        rnr_retry: Retry::UNLIMITED,
        sel: false,
        kept_max: usize::MAX,
        verify: None,
        jitter: 0,
        stale_rtt: false,
    }
}

fn selective(mtu: usize, seed: u64, link: (u32, u32, u32)) -> Setup {
    Setup {
        sel: true,
        kept_max: 256,
        ..setup(mtu, seed, link)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Lossless: exact data in order, nothing NAKed or timed out, ACKs coalesced.
    #[test]
    fn lossless_link(sizes in sizes(), kinds in any::<u64>(), mtu in mtus(),
                     seed in any::<u64>()) {
        let o = run(&sizes, kinds, setup(mtu, seed, (0, 0, 0)));
        prop_assert!(o.ok);
        prop_assert_eq!((o.naks, o.timeouts), (0, 0));
        prop_assert!(o.acks <= o.ack_reqs, "acks {} for {} AckReqs", o.acks, o.ack_reqs);
    }

    /// Loss in both directions: exact data in order; one NAK per gap, so never more NAKs
    /// than lost packets.
    #[test]
    fn lossy_link(sizes in sizes(), kinds in any::<u64>(), mtu in mtus(),
                  seed in any::<u64>(), loss in 0u32..100) {
        let o = run(&sizes, kinds, setup(mtu, seed, (loss, 0, 0)));
        prop_assert!(o.ok);
        prop_assert!(o.naks <= o.lost, "naks {} lost {}", o.naks, o.lost);
    }

    /// Loss, duplication and reordering in both directions: still exact and in order.
    #[test]
    fn hostile_link(sizes in sizes(), kinds in any::<u64>(), mtu in mtus(),
                    seed in any::<u64>(), loss in 0u32..80, dup in 0u32..100,
                    reorder in 0u32..200) {
        let o = run(&sizes, kinds, setup(mtu, seed, (loss, dup, reorder)));
        prop_assert!(o.ok);
    }

    /// A receiver that posts its receive WQEs slowly: RNR NAKs, the requester waits and
    /// goes back, everything still arrives exactly once and in order.
    #[test]
    fn slow_receiver(sizes in sizes(), kinds in any::<u64>(), mtu in mtus(),
                     seed in any::<u64>(), loss in 0u32..50, replenish in 1u32..20) {
        let s = Setup { replenish, ..setup(mtu, seed, (loss, 0, 0)) };
        let o = run(&sizes, kinds, s);
        prop_assert!(o.ok);
    }
}

/// Many short WRITEs in one batch get one ACK, not one each.
#[test]
fn short_messages_share_acks() {
    let o = run(&[4096; 60], 0, setup(1024, 7, (0, 0, 0)));
    assert!(o.ok);
    assert_eq!(o.ack_reqs, 60);
    assert!(o.acks < 60, "{} ACKs for 60 messages", o.acks);
}

/// READs only, and READs between WRITEs, at a high loss rate.
#[test]
fn reads_under_loss() {
    let sizes = [65536, 100, 0, 20_000, 4096];
    for seed in 0..40 {
        assert!(
            run(&sizes, 0x55, setup(1024, seed, (50, 0, 0))).ok,
            "seed {seed}"
        );
        assert!(
            run(&sizes, 0x44, setup(1024, seed, (50, 10, 50))).ok,
            "seed {seed}"
        );
    }
}

/// Atomics duplicated and reordered on the way: each executes once, its duplicates get
/// the saved value.
#[test]
fn atomics_exactly_once() {
    let sizes = [8; 40];
    for seed in 0..20 {
        let o = run(&sizes, !0, setup(1024, seed, (30, 100, 150)));
        assert!(o.ok, "seed {seed}");
    }
}

/// No receive WQE is ever posted: the first SEND fails with RNR_RETRY_EXC_ERR once its
/// RNR retries are spent, having waited once per retry.
#[test]
fn rnr_retries_run_out() {
    let s = Setup {
        replenish: u32::MAX,
        rnr_retry: 3,
        ..setup(1024, 1, (0, 0, 0))
    };
    // (The first tick posts one receive WQE: the first SEND gets it, the second cannot.)
    let o = run(&[100, 100, 100], 0b1010, s);
    assert_eq!(o.failed, Some(wc_status::RNR_RETRY_EXC_ERR));
    assert_eq!(o.rnr_naks, 4);
}

/// Duplicated and reordered NAKs and ACKs: a go-back to a PSN before the head WQE's
/// own gave the next packets PSNs before it (found by `hostile_link`; see also the
/// engine's `stale_nak_is_ignored`).
#[test]
fn stale_nak() {
    let sizes = [18433, 1025, 0, 1, 0, 0, 0, 0, 0, 65536];
    let o = run(
        &sizes,
        0x4_0010,
        setup(512, 8_056_916_762_342_166_184, (0, 57, 152)),
    );
    assert!(o.ok);
}

/// A READ response from before a go-back arrives after it and makes the READ ask again
/// from the completer's PSN, which still named a WQE completed by that response: the
/// go-back gave the next WRITE its PSNs shifted by one (found by `hostile_link`).
#[test]
fn late_read_response() {
    let sizes = [65536, 65536, 65536, 13313, 0, 13313, 0, 4097, 0, 1025, 7169];
    let kinds = 0x5_0400;
    let s = setup(1024, 11_258_151_616_421_191_172, (13, 30, 197));
    assert!(run(&sizes, kinds, s).ok);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Selective, lossless: nothing reported, resent or probed.
    #[test]
    fn sel_lossless_link(sizes in sizes(), kinds in any::<u64>(), mtu in mtus(),
                         seed in any::<u64>()) {
        let o = run(&sizes, kinds, selective(mtu, seed, (0, 0, 0)));
        prop_assert!(o.ok);
        prop_assert_eq!((o.sacks, o.retx, o.probes, o.naks), (0, 0, 0, 0));
    }

    /// Selective, loss both ways: exact and in order; every packet resent for a SACK was
    /// lost or follows a probe; never more kept than the limit.
    #[test]
    fn sel_lossy_link(sizes in sizes(), kinds in any::<u64>(), mtu in mtus(),
                      seed in any::<u64>(), loss in 0u32..120) {
        let o = run(&sizes, kinds, selective(mtu, seed, (loss, 0, 0)));
        prop_assert!(o.ok);
        prop_assert!(o.retx <= o.lost + o.probes, "retx {} lost {} probes {}",
                     o.retx, o.lost, o.probes);
        prop_assert!(o.max_kept <= 256);
    }

    /// Selective, loss, duplication, reordering and a path whose delay varies, a small
    /// keep limit, a slow receiver: still exact and in order.
    #[test]
    fn sel_hostile_link(sizes in sizes(), kinds in any::<u64>(), mtu in mtus(),
                        seed in any::<u64>(), loss in 0u32..100, dup in 0u32..100,
                        reorder in 0u32..200, kept_max in 4usize..300, replenish in 0u32..4,
                        jitter in prop_oneof![Just(0u32), 0u32..64]) {
        let s = Setup {
            kept_max, replenish, jitter, ..selective(mtu, seed, (loss, dup, reorder))
        };
        let o = run(&sizes, kinds, s);
        prop_assert!(o.ok);
        prop_assert!(o.max_kept <= kept_max);
    }
}

/// Totals of seeds 1 to `seeds - 1` of `s` (its seed replaced) on WRITEs of `sizes`,
/// every run exact and in order: (packets resent for a SACK, those resent while an
/// earlier copy was on its way, probes, packets lost).
fn sel_totals(seeds: u64, sizes: &[usize], s: Setup) -> (u64, u64, u64, u64) {
    let mut t = (0, 0, 0, 0);
    for seed in 1..seeds {
        let o = run(
            sizes,
            0,
            Setup {
                seed: seed * 7919,
                ..s
            },
        );
        assert!(o.ok, "seed {}", seed * 7919);
        t = (
            t.0 + o.retx,
            t.1 + o.retx_inflight,
            t.2 + o.probes,
            t.3 + o.lost,
        );
    }
    t
}

/// Selective at 1% loss on 64 KiB WRITEs: packets resent and probes stay within 1.2x the
/// packets lost.
#[test]
fn sel_one_percent_loss_ratio() {
    let (retx, _, probes, lost) = sel_totals(40, &[65536; 16], selective(1024, 0, (10, 0, 0)));
    assert!(lost > 0);
    let resent = retx + probes;
    assert!(resent * 10 <= lost * 12, "resent {resent} lost {lost}");
}

/// Selective at 5% loss on a path whose delay varies far beyond the probe delay (each
/// packet up to 48 ticks late, in order, against a silence of 8 ticks before a probe):
/// most silences end in a probe, and each probe's answer names every hole, repairs on
/// their way included. A full SACK resends only what cannot be on its way any more
/// (5,053 packets resent for 1,281 lost when each answer resent every hole; 1,563 for
/// 1,151 with the round-trip hold; 1,058 for 1,106 with the probes' order as well).
#[test]
fn sel_jittery_path_loss_ratio() {
    let s = Setup {
        jitter: 48,
        ..selective(1024, 0, (50, 0, 0))
    };
    let (retx, _, probes, lost) = sel_totals(20, &[65536; 16], s);
    assert!(retx <= lost * 2, "retx {retx} probes {probes} lost {lost}");
}

/// Selective at 10% loss on a path whose delay varies (up to 96 ticks each way, against
/// a silence of 8 ticks before a probe) while the requester's round-trip estimate is
/// stale: a full SACK's round-trip hold is one tick, as when loss cancelled every sample
/// (Karn's rule) and the loaded path's round trip grew far beyond the estimate. The
/// probes' order alone keeps full SACKs from resending repairs still on their way
/// (9,006 packets resent, 7,172 of them with an earlier copy in flight, for 2,744 lost
/// with the round-trip hold alone; 1,795 and 31 for 2,164).
#[test]
fn sel_stale_round_trip() {
    let s = Setup {
        jitter: 96,
        stale_rtt: true,
        ..selective(1024, 0, (100, 0, 0))
    };
    let (retx, inflight, _, lost) = sel_totals(20, &[16384; 50], s);
    assert!(retx * 10 <= lost * 12, "retx {retx} lost {lost}");
    assert!(
        inflight * 20 <= lost,
        "retx {retx} in flight {inflight} lost {lost}"
    );
}

/// Selective: the acknowledgement of an atomic at the head is lost while later WRITEs
/// are acknowledged; a probe only brought an ACK, so the QP probed forever. The
/// requester goes back to the atomic instead (found by `sel_lossy_link`).
#[test]
fn sel_lost_atomic_ack() {
    let s = selective(256, 15_481_008_352_913_666_602, (107, 0, 0));
    assert!(run(&[0, 65536, 0, 10753], 0b00_10_11_00, s).ok);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Verified WRITEs (selective, lossy, duplicating, reordering link) whose placement
    /// is corrupted at random: every corruption fails its check; the WRITE is resent
    /// until it passes or, its retries spent, completes with REM_OP_ERR; a WRITE that
    /// completes successfully holds exact bytes, and without a failure every message
    /// arrives.
    #[test]
    fn verified_writes_with_faults(sizes in sizes(), kinds in any::<u64>(), mtu in mtus(),
                                   seed in any::<u64>(), loss in 0u32..60, dup in 0u32..60,
                                   reorder in 0u32..120, fault in 0u32..400,
                                   retries in 0u32..4) {
        let s = Setup {
            verify: Some((fault, retries)),
            ..selective(mtu, seed, (loss, dup, reorder))
        };
        let o = run(&sizes, kinds, s);
        prop_assert!(o.successes_exact);
        prop_assert_eq!(o.faults, o.vfailed, "every corruption caught");
        match o.failed {
            None => prop_assert!(o.ok),
            Some(st) => prop_assert_eq!(st, wc_status::REM_OP_ERR),
        }
        prop_assert!(o.vresent <= o.vfailed);
    }
}

/// Verified WRITEs on a clean link, no fault: every WRITE checked once and passed.
#[test]
fn verified_writes_lossless() {
    for seed in 0..20 {
        let sizes = [1, 0, 4096, 65536, 3000, 1025];
        let s = Setup {
            verify: Some((0, 3)),
            ..selective(1024, seed, (0, 0, 0))
        };
        let o = run(&sizes, 0, s);
        assert!(o.ok, "seed {seed}");
        assert_eq!((o.vok, o.vfailed, o.vresent, o.naks), (6, 0, 0, 0));
    }
}

/// Every placement corrupted: each WRITE is checked 1 + retries times and fails the QP
/// with REM_OP_ERR; the WQEs before it completed.
#[test]
fn verified_write_that_never_passes() {
    let s = Setup {
        verify: Some((1000, 2)),
        ..selective(1024, 3, (0, 0, 0))
    };
    let o = run(&[5000, 5000], 0, s);
    assert_eq!(o.failed, Some(wc_status::REM_OP_ERR));
    assert_eq!((o.vfailed, o.vresent, o.faults), (3, 2, 3));
    assert!(o.successes_exact);
}
