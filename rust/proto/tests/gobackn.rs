// SPDX-License-Identifier: GPL-2.0
//! Plain IBTA go-back-N (what rrxe speaks to rdma_rxe and other standard peers) over a
//! simulated link, with the responder rules the driver uses: [`Seq`] to classify each
//! request, [`SeqNak`] for one PSN-sequence-error NAK per gap and [`AckCoalesce`] for one
//! ACK per receive batch. The requester keeps `MAX_UNACKED_PSNS` in flight, asks for an
//! ACK on each message's last packet and every `MAX_PKT_PER_ACK` packets, goes back to
//! the NAKed PSN, and to its oldest unacknowledged PSN on a timeout.
//! Properties: every message arrives byte-exact and completes in order; a lossless link
//! sees no NAK, no timeout and at most one ACK per AckReq; NAKs never exceed losses.
// Tests index, unwrap and panic freely: a failure is the test failing.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use proptest::prelude::*;
use rrxe_proto::psn::Psn;
use rrxe_proto::rc::{AckCoalesce, Seq, SeqNak, MAX_PKT_PER_ACK, MAX_UNACKED_PSNS};

mod common;
use common::{completed_in_order, messages, mtus, place, segments, sizes, Link, Rng, Segment};

/// As the driver's `ACK_EVERY`.
const ACK_EVERY: u32 = MAX_UNACKED_PSNS / 4;
/// Ticks without sending or hearing anything before the requester's transport timer
/// fires (the driver re-arms it on both).
const TIMEOUT: u32 = 8;
/// Packets the requester sends per tick (and so the size of a receive batch).
const BURST: usize = 8;

#[derive(Clone, Copy, Debug)]
struct Pkt {
    psn: Psn,
    seg: Segment,
    ack_req: bool,
}

#[derive(Clone, Copy, Debug)]
enum Back {
    Ack(Psn),
    /// PSN sequence error at the expected PSN (acknowledges everything before it).
    Nak(Psn),
}

struct Responder {
    expected: Psn,
    nak: SeqNak,
    acks: AckCoalesce,
    out: Vec<Vec<u8>>,
    done: Vec<usize>,
    sent_acks: u64,
    sent_naks: u64,
}

impl Responder {
    fn reply(&mut self, b: Back, out: &mut Vec<Back>) {
        match b {
            Back::Ack(_) => self.sent_acks += 1,
            Back::Nak(_) => self.sent_naks += 1,
        }
        self.acks.sent();
        out.push(b);
    }

    /// One receive batch: what arrived this tick, then the batch's ACK.
    fn batch(&mut self, pkts: Vec<Pkt>, msgs: &[Vec<u8>], out: &mut Vec<Back>) {
        for p in pkts {
            match Seq::of(self.expected, p.psn) {
                Seq::Expected => {
                    place(&mut self.out, msgs, &p.seg);
                    if p.seg.last {
                        self.done.push(p.seg.msg);
                    }
                    self.expected = self.expected.add(1);
                    self.nak.closed();
                    if self.acks.executed(p.ack_req) {
                        self.reply(Back::Ack(p.psn), out);
                    }
                }
                Seq::Ahead => {
                    if self.nak.ahead(p.psn) {
                        self.reply(Back::Nak(self.expected), out);
                    }
                }
                Seq::Duplicate => self.reply(Back::Ack(self.expected.sub(1)), out),
            }
        }
        if self.acks.batch_end() {
            self.reply(Back::Ack(self.expected.sub(1)), out);
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

fn run(sizes: &[usize], mtu: usize, seed: u64, loss: u32, dup: u32, reorder: u32) -> Outcome {
    let start = Psn::new((seed as u32) & 0xff_ffff);
    let msgs = messages(sizes, 5);
    let mut since_req = 0;
    let pkts: Vec<Pkt> = segments(&msgs, mtu)
        .into_iter()
        .enumerate()
        .map(|(k, seg)| {
            since_req += 1;
            let ack_req = seg.last || since_req >= MAX_PKT_PER_ACK;
            if ack_req {
                since_req = 0;
            }
            Pkt {
                psn: start.add(k as u32),
                seg,
                ack_req,
            }
        })
        .collect();
    let mut rng = Rng(seed | 1);
    let mut fwd: Link<Pkt> = Link::new(loss, dup, reorder);
    let mut back: Link<Back> = Link::new(loss, dup, reorder);
    let mut rx = Responder {
        expected: start,
        nak: SeqNak::default(),
        acks: AckCoalesce::new(ACK_EVERY),
        out: msgs.iter().map(|m| vec![0u8; m.len()]).collect(),
        done: Vec::new(),
        sent_acks: 0,
        sent_naks: 0,
    };
    let total = pkts.len() as u32;
    let (mut next, mut comp, mut silent, mut timeouts, mut ack_reqs) = (0u32, 0u32, 0u32, 0, 0);
    let index = |p: Psn| p.diff(start);
    for now in 0..400_000u64 {
        if comp == total {
            break;
        }
        let mut progress = false;
        for _ in 0..BURST {
            if next < total && next - comp < MAX_UNACKED_PSNS {
                let p = pkts[next as usize];
                ack_reqs += u64::from(p.ack_req);
                fwd.send(now, &mut rng, p);
                next += 1;
                progress = true;
            }
        }
        let mut replies = Vec::new();
        let arrived = fwd.due(now);
        if !arrived.is_empty() {
            rx.batch(arrived, &msgs, &mut replies);
        }
        for b in replies {
            back.send(now, &mut rng, b);
        }
        for b in back.due(now) {
            // Both acknowledge every PSN before theirs; a NAK also sends us back there.
            let (upto, nak) = match b {
                Back::Ack(p) => (index(p) + 1, false),
                Back::Nak(p) => (index(p), true),
            };
            if upto > comp as i32 && upto <= next as i32 {
                comp = upto as u32;
                progress = true;
            }
            if nak && upto >= comp as i32 && upto < next as i32 {
                next = upto as u32;
            }
        }
        silent = if progress { 0 } else { silent + 1 };
        if silent >= TIMEOUT && comp < next {
            silent = 0;
            timeouts += 1;
            next = comp;
        }
    }
    let in_order = completed_in_order(&rx.done, msgs.len());
    Outcome {
        ok: comp == total && in_order && rx.out == msgs,
        lost: fwd.lost,
        naks: rx.sent_naks,
        acks: rx.sent_acks,
        ack_reqs,
        timeouts,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Lossless: exact data in order, nothing NAKed or timed out, ACKs coalesced.
    #[test]
    fn lossless_link(sizes in sizes(), mtu in mtus(), seed in any::<u64>()) {
        let o = run(&sizes, mtu, seed, 0, 0, 0);
        prop_assert!(o.ok);
        prop_assert_eq!((o.naks, o.timeouts), (0, 0));
        prop_assert!(o.acks <= o.ack_reqs, "acks {} for {} AckReqs", o.acks, o.ack_reqs);
    }

    /// Loss in both directions: exact data in order; one NAK per gap, so never more NAKs
    /// than lost requests.
    #[test]
    fn lossy_link(sizes in sizes(), mtu in mtus(), seed in any::<u64>(), loss in 0u32..100) {
        let o = run(&sizes, mtu, seed, loss, 0, 0);
        prop_assert!(o.ok);
        prop_assert!(o.naks <= o.lost, "naks {} lost {}", o.naks, o.lost);
    }

    /// Loss, duplication and reordering in both directions: still exact and in order.
    #[test]
    fn hostile_link(sizes in sizes(), mtu in mtus(), seed in any::<u64>(), loss in 0u32..80,
                    dup in 0u32..100, reorder in 0u32..200) {
        let o = run(&sizes, mtu, seed, loss, dup, reorder);
        prop_assert!(o.ok);
    }
}

/// Many short messages in one batch get one ACK, not one each.
#[test]
fn short_messages_share_acks() {
    let o = run(&[4096; 64], 1024, 7, 0, 0, 0);
    assert!(o.ok);
    assert_eq!(o.ack_reqs, 64);
    assert!(o.acks < 64, "{} ACKs for 64 messages", o.acks);
}
