// SPDX-License-Identifier: GPL-2.0
//! Plain IBTA go-back-N (what rrxe speaks to rdma_rxe and other standard peers): the
//! production requester ([`Requester`], [`Slot`]s, segmentation, the completer's
//! syndrome and timer rules) against the production responder ([`Responder`]) over a
//! simulated link that loses, duplicates and reorders packets in both directions.
//!
//! The harness does only what the driver does around the engine: it keeps the bytes
//! (gather, scatter, READ data), carries packets, completes the WQEs the engine pops and
//! runs a silence timer. Every decision — PSNs, AckReq, which WQE an ACK completes,
//! where to go back to, when the responder ACKs or NAKs, what a duplicate gets — is the
//! engine's.
//! Properties: every WRITE arrives and every READ returns byte-exact, every WQE
//! completes successfully and in order; a lossless link sees no NAK, no timeout and at
//! most one ACK per AckReq; NAKs never exceed lost requests.
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
use rrxe_proto::rc::req::{ReadResp, Requester, Slot, WqeHead};
use rrxe_proto::rc::resp::{Check, Dup, Responder};
use rrxe_proto::rc::{needs_response, packets, Retry, ACK};
use rrxe_proto::uapi::{wc_status, wr, RingGeom};

mod common;
use common::{messages, mtus, sizes, Link, Rng};

/// Ticks without sending or hearing anything before the requester's transport timer
/// fires (the driver re-arms it on both).
const TIMEOUT: u32 = 8;
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
        last: bool,
        ack_req: bool,
    },
    /// A READ request for `len` bytes of message `msg` from `off`.
    Read {
        psn: Psn,
        msg: usize,
        off: u32,
        len: u32,
    },
}

impl Pkt {
    fn psn(&self) -> Psn {
        match *self {
            Pkt::Data { psn, .. } | Pkt::Read { psn, .. } => psn,
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
}

/// The requester side: the engine, the slots and the bytes.
struct Req {
    rq: Requester,
    slots: Vec<Slot>,
    geom: RingGeom,
    prod: u32,
    /// The WQE of each ring slot: (message, opcode).
    wqes: Vec<(usize, u32)>,
    mtu: u32,
    /// READ destination buffers.
    got: Vec<Vec<u8>>,
    completions: Vec<(u64, u32)>,
    ack_reqs: u64,
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

    /// As the driver's `req_run`: up to `BURST` packets.
    fn run(&mut self, lens: &[usize], out: &mut Vec<Pkt>) {
        for _ in 0..BURST {
            if self.rq.rnr_wait || self.rq.window_full() {
                return;
            }
            let i = self.rq.next;
            if i == self.prod {
                return;
            }
            let (msg, opcode) = self.wqes[i as usize];
            let stored = self.slots[i as usize];
            if self.rq.blocked(&stored, opcode, RD_ATOMIC) {
                return;
            }
            let mut slot = stored;
            if !slot.started {
                let head = WqeHead {
                    wr_id: msg as u64,
                    opcode,
                    flags: 0,
                    length: lens[msg] as u32,
                };
                slot = self.rq.start(&head, self.mtu);
            }
            if needs_response(opcode) {
                let r = self.rq.next_request(&slot, stored.started, self.mtu);
                out.push(Pkt::Read {
                    psn: r.psn,
                    msg,
                    off: r.off,
                    len: r.len,
                });
                self.rq.request_sent(&mut slot, &r);
                self.slots[i as usize] = slot;
                self.rq.next = self.geom.next(i);
            } else {
                let seg = self.rq.next_data(&slot, self.mtu);
                self.ack_reqs += u64::from(seg.ack_req);
                out.push(Pkt::Data {
                    psn: seg.psn,
                    msg,
                    off: seg.off,
                    len: seg.len,
                    last: seg.last,
                    ack_req: seg.ack_req,
                });
                self.rq.data_sent(&mut slot, &seg);
                self.slots[i as usize] = slot;
                if seg.last {
                    self.rq.next = self.geom.next(i);
                }
            }
        }
    }

    /// As the driver's `on_response` (go-back-N). `true`: progress (the timer restarts).
    fn on_back(&mut self, b: Back, remote: &[Vec<u8>]) -> bool {
        match b {
            Back::Aeth(psn, syn) => match self.rq.on_syndrome(syn) {
                Reply::Ack => self.ack_upto(psn, true),
                Reply::GoBack => {
                    self.ack_upto(psn, false);
                    self.rewind(psn);
                    return true;
                }
                Reply::RnrWait { .. } => {
                    self.ack_upto(psn, false);
                    self.rewind(psn);
                    self.rq.rnr_wait = true;
                    return true;
                }
                Reply::Fail { status, ack_first } => {
                    if ack_first {
                        self.ack_upto(psn, false);
                    }
                    self.complete(status);
                    return true;
                }
                Reply::Malformed => return false,
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
        }
        self.rq.answered();
        true
    }

    /// The silence timer fired. `false`: the retry budget ran out.
    fn timeout(&mut self) -> bool {
        match self.rq.timer() {
            Timer::RnrDone | Timer::Idle => true,
            Timer::Expired => {
                if !self.rq.timed_out() {
                    self.complete(wc_status::RETRY_EXC_ERR);
                    return false;
                }
                let p = self.rq.comp_psn;
                self.rewind(p);
                true
            }
        }
    }
}

/// The responder side: the engine and the bytes.
struct Resp {
    rs: Responder,
    mtu: u32,
    /// WRITE destinations.
    out: Vec<Vec<u8>>,
    done: Vec<usize>,
    acks: u64,
    naks: u64,
}

impl Resp {
    fn reply(&mut self, b: Back, out: &mut Vec<Back>) {
        match b {
            Back::Aeth(_, Syndrome::Ack(_)) => self.acks += 1,
            Back::Aeth(..) => self.naks += 1,
            Back::ReadResp { .. } => {}
        }
        if let Back::Aeth(..) = b {
            self.rs.sent();
        }
        out.push(b);
    }

    fn ack_executed(&mut self, out: &mut Vec<Back>) {
        if let Some(p) = self.rs.ack_psn(false) {
            self.reply(Back::Aeth(p, ACK), out);
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

    /// One receive batch.
    fn batch(&mut self, pkts: Vec<Pkt>, msgs: &[Vec<u8>], out: &mut Vec<Back>) {
        for p in pkts {
            let read = matches!(p, Pkt::Read { .. });
            match self.rs.check(p.psn(), false, false) {
                Check::Execute => {
                    if self.rs.in_order(read) {
                        self.ack_executed(out);
                    }
                    let (last, ack_req) = match p {
                        Pkt::Data {
                            msg,
                            off,
                            len,
                            last,
                            ack_req,
                            ..
                        } => {
                            let (a, n) = (off as usize, len as usize);
                            self.out[msg][a..a + n].copy_from_slice(&msgs[msg][a..a + n]);
                            if last {
                                self.done.push(msg);
                            }
                            (last, ack_req)
                        }
                        Pkt::Read { psn, msg, off, len } => {
                            self.rs.read_accepted();
                            self.answer_read(psn, msg, off, len, out);
                            self.rs.read_executed(psn, packets(len, self.mtu));
                            self.done.push(msg);
                            (true, true)
                        }
                    };
                    if self.rs.executed(p.psn(), last, ack_req, read, true) {
                        self.reply(Back::Aeth(p.psn(), ACK), out);
                    }
                }
                Check::Duplicate => match self.rs.duplicate(p.psn(), read, false, false) {
                    Dup::Read => {
                        if let Pkt::Read { psn, msg, off, len } = p {
                            self.answer_read(psn, msg, off, len, out);
                        }
                    }
                    Dup::Ack => self.ack_executed(out),
                    d => panic!("unexpected {d:?}"),
                },
                Check::NakSeq(e) => {
                    self.reply(Back::Aeth(e, Syndrome::Nak(NakCode::PsnSeqErr)), out)
                }
                Check::Drop => {}
                c => panic!("unexpected {c:?}"),
            }
        }
        if self.rs.ack_owed() {
            self.ack_executed(out);
        }
    }
}

struct Outcome {
    ok: bool,
    lost: u64,
    naks: u64,
    acks: u64,
    ack_reqs: u64,
    timeouts: u64,
}

/// Messages of `sizes`, each a WRITE or (where `reads` has its bit set) a READ.
fn run(sizes: &[usize], reads: u32, mtu: usize, seed: u64, link: (u32, u32, u32)) -> Outcome {
    let (loss, dup, reorder) = link;
    let start = Psn::new((seed as u32) & 0xff_ffff);
    let msgs = messages(sizes, 5);
    let n = msgs.len();
    let opcode = |i: usize| {
        if reads >> (i % 32) & 1 != 0 {
            wr::RDMA_READ
        } else {
            wr::RDMA_WRITE
        }
    };
    let geom = RingGeom {
        log2_slot: 6,
        mask: 63,
    };
    let mut rq = Requester::new(start);
    rq.retry = Retry::new(Retry::UNLIMITED);
    rq.rnr = Retry::new(Retry::UNLIMITED);
    let mut req = Req {
        rq,
        slots: vec![Slot::default(); 64],
        geom,
        prod: n as u32,
        wqes: (0..64).map(|i| (i.min(n.max(1) - 1), opcode(i))).collect(),
        mtu: mtu as u32,
        got: msgs.iter().map(|m| vec![0u8; m.len()]).collect(),
        completions: Vec::new(),
        ack_reqs: 0,
    };
    let mut rs = Responder::new();
    rs.set_psn(start);
    let mut resp = Resp {
        rs,
        mtu: mtu as u32,
        out: msgs.iter().map(|m| vec![0u8; m.len()]).collect(),
        done: Vec::new(),
        acks: 0,
        naks: 0,
    };
    let mut rng = Rng(seed | 1);
    let mut fwd: Link<Pkt> = Link::new(loss, dup, reorder);
    let mut back: Link<Back> = Link::new(loss, dup, reorder);
    let (mut silent, mut timeouts) = (0u32, 0u64);
    let mut seen = std::collections::HashMap::new();
    for now in 0..400_000u64 {
        if req.completions.len() == n {
            break;
        }
        let mut sent = Vec::new();
        req.run(sizes, &mut sent);
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
            resp.batch(arrived, &msgs, &mut replies);
        }
        for b in replies {
            back.send(now, &mut rng, b);
        }
        for b in back.due(now) {
            progress |= req.on_back(b, &msgs);
        }
        silent = if progress { 0 } else { silent + 1 };
        if silent >= TIMEOUT && !req.rq.idle() {
            silent = 0;
            timeouts += 1;
            if !req.timeout() {
                break;
            }
        }
    }
    // WRITEs landed at the responder, READs came back; every WQE completed in order.
    let writes_ok = (0..n).all(|i| opcode(i) == wr::RDMA_READ || resp.out[i] == msgs[i]);
    let reads_ok = (0..n).all(|i| opcode(i) != wr::RDMA_READ || req.got[i] == msgs[i]);
    let in_order = req.completions.len() == n
        && req
            .completions
            .iter()
            .enumerate()
            .all(|(i, &(id, st))| id == i as u64 && st == wc_status::SUCCESS);
    Outcome {
        ok: writes_ok && reads_ok && in_order,
        lost: fwd.lost,
        naks: resp.naks,
        acks: resp.acks,
        ack_reqs: req.ack_reqs,
        timeouts,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Lossless: exact data in order, nothing NAKed or timed out, ACKs coalesced.
    #[test]
    fn lossless_link(sizes in sizes(), reads in any::<u32>(), mtu in mtus(),
                     seed in any::<u64>()) {
        let o = run(&sizes, reads, mtu, seed, (0, 0, 0));
        prop_assert!(o.ok);
        prop_assert_eq!((o.naks, o.timeouts), (0, 0));
        prop_assert!(o.acks <= o.ack_reqs, "acks {} for {} AckReqs", o.acks, o.ack_reqs);
    }

    /// Loss in both directions: exact data in order; one NAK per gap, so never more NAKs
    /// than lost packets.
    #[test]
    fn lossy_link(sizes in sizes(), reads in any::<u32>(), mtu in mtus(),
                  seed in any::<u64>(), loss in 0u32..100) {
        let o = run(&sizes, reads, mtu, seed, (loss, 0, 0));
        prop_assert!(o.ok);
        prop_assert!(o.naks <= o.lost, "naks {} lost {}", o.naks, o.lost);
    }

    /// Loss, duplication and reordering in both directions: still exact and in order.
    #[test]
    fn hostile_link(sizes in sizes(), reads in any::<u32>(), mtu in mtus(),
                    seed in any::<u64>(), loss in 0u32..80, dup in 0u32..100,
                    reorder in 0u32..200) {
        let o = run(&sizes, reads, mtu, seed, (loss, dup, reorder));
        prop_assert!(o.ok);
    }
}

/// Many short WRITEs in one batch get one ACK, not one each.
#[test]
fn short_messages_share_acks() {
    let o = run(&[4096; 60], 0, 1024, 7, (0, 0, 0));
    assert!(o.ok);
    assert_eq!(o.ack_reqs, 60);
    assert!(o.acks < 60, "{} ACKs for 60 messages", o.acks);
}

/// READs only, and READs between WRITEs, at a high loss rate.
#[test]
fn reads_under_loss() {
    for seed in 0..40 {
        let o = run(&[65536, 100, 0, 20_000, 4096], !0, 1024, seed, (50, 0, 0));
        assert!(o.ok, "seed {seed}");
        let o = run(
            &[65536, 100, 0, 20_000, 4096],
            0b01010,
            1024,
            seed,
            (50, 10, 50),
        );
        assert!(o.ok, "seed {seed}");
    }
}

/// Duplicated and reordered NAKs and ACKs: a go-back to a PSN before the head WQE's
/// own gave the next packets PSNs before it (found by `hostile_link`; see also the
/// engine's `stale_nak_is_ignored`).
#[test]
fn stale_nak() {
    let sizes = [18433, 1025, 0, 1, 0, 0, 0, 0, 0, 65536];
    let o = run(
        &sizes,
        721_005_060,
        512,
        8_056_916_762_342_166_184,
        (0, 57, 152),
    );
    assert!(o.ok);
}

/// A READ response from before a go-back arrives after it and makes the READ ask again
/// from the completer's PSN, which still named a WQE completed by that response: the
/// go-back gave the next WRITE its PSNs shifted by one (found by `hostile_link`).
#[test]
fn late_read_response() {
    let sizes = [65536, 65536, 65536, 13313, 0, 13313, 0, 4097, 0, 1025, 7169];
    let o = run(
        &sizes,
        2_821_657_376,
        1024,
        11_258_151_616_421_191_172,
        (13, 30, 197),
    );
    assert!(o.ok);
}
