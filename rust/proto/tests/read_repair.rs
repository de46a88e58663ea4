// SPDX-License-Identifier: GPL-2.0
//! READ response repair on the requester ([`ReadRepair`]), packet by chosen packet: which
//! response PSNs a hole, a lost repair, a lost request and the probes make it ask for,
//! and over a simulated responder with random losses, that every READ completes and
//! nothing is asked for without a loss.
// Tests index, unwrap and panic freely: a failure is the test failing.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use proptest::prelude::*;
use rrxe_proto::psn::Psn;
use rrxe_proto::rdrep::{ReadPort, ReadRepair, ReadSpan};
use std::collections::VecDeque;

/// The driver's reordering bounds for READ responses.
const REORDER_MAX: u32 = 256;
const DECAY: u32 = 8;

/// A send queue of READs with consecutive PSN spans, and the requests asked again.
struct Sq {
    /// (first PSN, responses) of each READ.
    reads: Vec<(Psn, u32)>,
    /// (PSN, responses) of each request asked again, in order.
    asks: Vec<(u32, u32)>,
}

impl ReadPort for Sq {
    fn span(&self, psn: Psn) -> Option<ReadSpan> {
        self.reads.iter().enumerate().find_map(|(i, &(first, n))| {
            let last = first.add(n - 1);
            (!psn.before(first) && !psn.after(last)).then_some(ReadSpan {
                first,
                last,
                tag: i as u32,
            })
        })
    }

    fn ask(&mut self, span: &ReadSpan, psn: Psn, n: u32) {
        assert!(!psn.before(span.first) && !psn.add(n - 1).after(span.last));
        self.asks.push((psn.get(), n));
    }
}

/// A requester: its READs, its completion PSN and the repair state.
struct Req {
    sq: Sq,
    rr: ReadRepair,
    comp: Psn,
    end: Psn,
}

impl Req {
    /// READs of `sizes` responses each, from PSN `base`.
    fn new(base: u32, sizes: &[u32]) -> Self {
        let base = Psn::new(base);
        let mut p = base;
        let mut reads = Vec::new();
        for &n in sizes {
            reads.push((p, n));
            p = p.add(n);
        }
        Req {
            sq: Sq {
                reads,
                asks: Vec::new(),
            },
            rr: ReadRepair::new(base, REORDER_MAX, DECAY),
            comp: base,
            end: p,
        }
    }

    /// Response `psn` arrives (as the driver's `read_response_sel`). Returns whether it
    /// made the requester ask again for holes whose answers were lost.
    fn arrive(&mut self, psn: u32, retx: bool) -> bool {
        let psn = Psn::new(psn);
        self.rr.response_seen();
        let Some(s) = self.sq.span(psn) else {
            return false;
        };
        if !self.rr.wanted(self.comp, psn) {
            return false;
        }
        self.rr.received(psn, retx);
        while self.comp.before(self.end) && self.rr.has(self.comp) {
            self.comp = self.comp.add(1);
        }
        self.rr.advance_to(self.comp);
        self.rr
            .after_response(self.comp, s.first, psn, retx, &mut self.sq)
    }

    /// Responses `from..to` arrive in order, none resent.
    fn arrive_all(&mut self, from: u32, to: u32) {
        for p in from..to {
            self.arrive(p, false);
        }
    }

    /// A probe fires (the last request is the last READ's).
    fn probe(&mut self) {
        let last = self.end.sub(1);
        self.rr.probe(self.comp, last, &mut self.sq);
    }

    /// The requests asked again since the last call.
    fn asks(&mut self) -> Vec<(u32, u32)> {
        std::mem::take(&mut self.sq.asks)
    }
}

#[test]
fn in_order_responses_ask_for_nothing() {
    let mut r = Req::new(100, &[4, 4, 4]);
    r.arrive_all(100, 112);
    assert_eq!(r.comp, Psn::new(112));
    assert_eq!(r.asks(), []);
}

#[test]
fn hole_in_the_same_read_is_asked_for_at_once_and_once() {
    let mut r = Req::new(0, &[8]);
    r.arrive_all(0, 2);
    r.arrive(3, false);
    assert_eq!(r.asks(), [(2, 1)]);
    r.arrive_all(4, 6);
    assert_eq!(r.asks(), []);
    r.arrive(2, true);
    assert_eq!(r.comp, Psn::new(6));
}

#[test]
fn hole_in_an_earlier_read_waits_for_the_reordering_threshold() {
    let mut r = Req::new(0, &[4, 4]);
    r.arrive_all(0, 3);
    assert_eq!(r.rr.reordering(), 3);
    r.arrive_all(4, 6);
    assert_eq!(r.asks(), [], "two later responses do not reveal it");
    r.arrive(6, false);
    assert_eq!(r.asks(), [(3, 1)]);
}

#[test]
fn the_original_filling_an_asked_hole_raises_the_threshold() {
    let mut r = Req::new(0, &[8]);
    r.arrive_all(0, 2);
    r.arrive(3, false);
    assert_eq!(r.asks(), [(2, 1)]);
    assert!(r.rr.wanted(r.comp, Psn::new(2)));
    assert!(
        r.rr.received(Psn::new(2), false),
        "the original: asked too early"
    );
    assert_eq!(r.rr.reordering(), 6);
}

/// The repair of an earlier READ's last hole is lost; a resent response of a later READ
/// overtakes where its answer should have been: asked for again, once this way.
#[test]
fn lost_repair_in_an_earlier_read_is_asked_for_again_once() {
    let mut r = Req::new(0, &[4, 8]);
    r.arrive_all(0, 2);
    r.arrive(3, false);
    assert_eq!(r.asks(), [(2, 1)]);
    r.arrive(4, false);
    r.arrive(6, false);
    assert_eq!(r.asks(), [(5, 1)]);
    r.arrive_all(7, 9);
    r.arrive(10, false);
    r.arrive(11, false);
    assert_eq!(r.asks(), [(9, 1)]);
    // The answer for 2 is lost; the answer for 5 arrives.
    assert!(r.arrive(5, true));
    assert_eq!(r.asks(), [(2, 1)]);
    // The answer for 9 arrives too: 2 is not asked for a third time (the probe does).
    assert!(!r.arrive(9, true));
    assert_eq!(r.asks(), []);
    assert_eq!(r.comp, Psn::new(2));
    r.probe();
    assert_eq!(r.asks(), [(2, 1)]);
    r.arrive(2, true);
    assert_eq!(r.comp, Psn::new(12));
}

#[test]
fn resent_response_in_order_asks_for_nothing_again() {
    let mut r = Req::new(0, &[8]);
    r.arrive_all(0, 2);
    r.arrive_all(4, 6);
    assert_eq!(r.asks(), [(2, 2)]);
    assert!(!r.arrive(2, true));
    assert!(!r.arrive(3, true));
    assert_eq!(r.asks(), []);
}

/// Every second probe without a response asks for the last response of the READ after
/// the highest received, and only that one.
#[test]
fn second_probe_asks_for_the_last_response_of_that_read() {
    let mut r = Req::new(0, &[64, 64]);
    r.arrive_all(0, 10);
    r.probe();
    assert_eq!(r.asks(), [], "the first probe: no known hole");
    r.probe();
    assert_eq!(r.asks(), [(63, 1)]);
    r.probe();
    assert_eq!(r.asks(), []);
    // A response restarts the count.
    r.arrive(10, false);
    r.probe();
    assert_eq!(r.asks(), []);
    r.probe();
    assert_eq!(r.asks(), [(63, 1)]);
}

#[test]
fn second_probe_leaves_the_last_read_to_the_probe_itself() {
    let mut r = Req::new(0, &[64]);
    r.arrive_all(0, 10);
    r.probe();
    r.probe();
    assert_eq!(r.asks(), []);
}

#[test]
fn probe_before_any_response_asks_for_nothing() {
    let mut r = Req::new(7, &[4, 4]);
    r.probe();
    r.probe();
    assert_eq!(
        r.asks(),
        [(10, 1)],
        "only the second probe's: READ 1's last response"
    );
}

#[test]
fn probe_asks_for_every_known_hole() {
    let mut r = Req::new(0, &[4, 4]);
    r.arrive(0, false);
    r.arrive(2, false);
    r.arrive(5, false);
    r.asks();
    r.probe();
    assert_eq!(r.asks(), [(1, 1), (3, 1), (4, 1)]);
}

/// A lost request: all its responses are asked for, once until the next probe.
#[test]
fn lost_request_is_asked_for_once_between_probes() {
    let mut r = Req::new(0, &[4, 4]);
    let a = ReadSpan {
        first: Psn::new(0),
        last: Psn::new(3),
        tag: 0,
    };
    assert_eq!(r.sq.span(Psn::new(0)), Some(a));
    r.rr.lost_request(r.comp, &a, Psn::new(0), &mut r.sq);
    assert_eq!(r.asks(), [(0, 4)]);
    r.rr.lost_request(r.comp, &a, Psn::new(0), &mut r.sq);
    assert_eq!(r.asks(), []);
    // A PSN inside the READ is not its request.
    r.rr.lost_request(r.comp, &a, Psn::new(1), &mut r.sq);
    assert_eq!(r.asks(), []);
    r.probe();
    r.asks();
    r.rr.lost_request(r.comp, &a, Psn::new(0), &mut r.sq);
    assert_eq!(r.asks(), [(0, 4)]);
}

/// A READ request lost on the way: the next READ's responses reveal its span as the
/// reordering threshold passes over it, each part asked for once.
#[test]
fn lost_request_revealed_by_later_responses() {
    let mut r = Req::new(0, &[4, 4, 4]);
    r.arrive_all(0, 4);
    r.arrive_all(8, 11);
    assert_eq!(r.asks(), [(4, 2), (6, 1), (7, 1)]);
    r.arrive_all(11, 12);
    assert_eq!(r.asks(), []);
}

/// Behind a READ whose request was lost comes another kind of request (rrxe-verify reads
/// back each WRITE): the READ's whole span is asked for in one request.
#[test]
fn lost_request_before_a_gap_is_asked_for_whole() {
    let mut r = Req::new(0, &[4]);
    // A WRITE occupies PSNs 4..8, a READ 8..12.
    r.sq.reads.push((Psn::new(8), 4));
    r.end = Psn::new(12);
    r.arrive_all(8, 11);
    assert_eq!(r.asks(), [(0, 4)]);
}

#[test]
fn holes_across_the_psn_wrap() {
    let base = (1 << 24) - 3;
    let mut r = Req::new(base, &[6]);
    r.arrive(base, false);
    r.arrive((base + 2) & 0xff_ffff, false);
    r.arrive((base + 4) & 0xff_ffff, false);
    assert_eq!(r.asks(), [(base + 1, 1), (0, 1)]);
}

/// One READ request or response on a simulated path: requests reach the responder at
/// once (or are lost), which answers them in order onto a FIFO wire.
#[derive(Clone, Copy)]
struct Resp {
    psn: u32,
    retx: bool,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random READ sizes and losses (requests and responses, originals and repairs):
    /// every READ completes, with no ask and no probe when nothing was lost, and asks
    /// bounded by the losses and the probes.
    #[test]
    fn random_losses(
        base in 0u32..(1 << 24),
        sizes in proptest::collection::vec(1u32..40, 1..6),
        drops in proptest::collection::vec(prop::bool::weighted(0.15), 0..200),
    ) {
        let mut r = Req::new(base, &sizes);
        let mut dice = drops.into_iter();
        let mut lose = move || dice.next().unwrap_or(false);
        let mut wire: VecDeque<Resp> = VecDeque::new();
        let (mut lost, mut probes, mut asked) = (0u32, 0u32, 0u32);
        // A request for `n` responses from `psn`: lost, or answered onto the wire.
        let send = |wire: &mut VecDeque<Resp>, lost: &mut u32, lose: bool, psn: u32, n: u32,
                    retx: bool| {
            if lose {
                *lost += n;
                return;
            }
            for k in 0..n {
                wire.push_back(Resp { psn: (psn + k) & 0xff_ffff, retx });
            }
        };
        for &(first, n) in &r.sq.reads.clone() {
            send(&mut wire, &mut lost, lose(), first.get(), n, false);
        }
        loop {
            while let Some(p) = wire.pop_front() {
                if lose() {
                    lost += 1;
                    continue;
                }
                r.arrive(p.psn, p.retx);
                for (psn, n) in r.asks() {
                    asked += n;
                    send(&mut wire, &mut lost, lose(), psn, n, true);
                }
            }
            if r.comp == r.end {
                break;
            }
            prop_assert!(probes < 500, "no progress: comp {:?} end {:?}", r.comp, r.end);
            probes += 1;
            r.probe();
            for (psn, n) in r.asks() {
                asked += n;
                send(&mut wire, &mut lost, lose(), psn, n, true);
            }
            // The probe's own request, for the last response.
            send(&mut wire, &mut lost, lose(), r.end.sub(1).get(), 1, true);
        }
        if lost == 0 {
            prop_assert_eq!((asked, probes), (0, 0));
        }
        let longest = sizes.iter().copied().max().unwrap_or(0);
        prop_assert!(asked <= 2 * lost + probes * (longest + 1),
            "asked {} lost {} probes {}", asked, lost, probes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any sequence of responses a peer can send (any PSN, far outside the window too,
    /// duplicates, any flag), probes and lost-request reports: no panic, every request
    /// within one outstanding READ, and no more requests per event than the bitmaps'
    /// span allows.
    #[test]
    fn arbitrary_events(
        base in 0u32..(1 << 24),
        sizes in proptest::collection::vec(1u32..200, 1..8),
        events in proptest::collection::vec((0u8..8, -5000i32..5000, any::<bool>()), 0..300),
    ) {
        let mut r = Req::new(base, &sizes);
        let total: u32 = sizes.iter().sum();
        for (kind, d, retx) in events {
            let psn = Psn::new(base).add(d as u32 & 0xff_ffff).get();
            match kind {
                0 => r.probe(),
                1 => {
                    if let Some(s) = r.sq.span(Psn::new(psn)) {
                        r.rr.lost_request(r.comp, &s, s.first, &mut r.sq);
                    }
                }
                _ => {
                    r.arrive(psn, retx);
                }
            }
            let asks = r.asks();
            prop_assert!(asks.len() as u32 <= 3 * 4096);
            for (p, n) in asks {
                prop_assert!(n >= 1 && n <= total);
                prop_assert!(r.sq.span(Psn::new(p)).is_some());
            }
        }
    }
}
