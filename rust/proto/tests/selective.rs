// SPDX-License-Identifier: GPL-2.0
//! Selective retransmission over a simulated link: a sender with a PSN window, a lossy,
//! duplicating and reordering link in both directions, and a receiver that keeps packets
//! beyond the expected PSN in an [`RxWindow`] and names its holes in SACKs. Properties:
//! every message arrives byte-exact and completes in order; a SACK only ever names PSNs
//! the receiver lacks; the receiver never keeps more than its window; without reordering
//! or duplication, retransmissions never exceed the losses plus the tail probes.
// Tests index, unwrap and panic freely: a failure is the test failing.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use proptest::prelude::*;
use rrxe_proto::psn::Psn;
use rrxe_proto::sel::{Arrival, RxWindow, Sack, RX_SPAN};
use std::collections::{BTreeMap, VecDeque};

mod common;
use common::{completed_in_order, messages, mtus, place, segments, sizes, Link, Rng, Segment};

/// Unacknowledged PSNs the sender allows (as the driver's `MAX_UNACKED_PSNS`).
const WINDOW: u32 = 128;

#[derive(Clone, Copy, Debug)]
struct Pkt {
    psn: Psn,
    seg: Segment,
    probe: bool,
    /// Sent again because a SACK named it.
    retx: bool,
}

enum Back {
    Ack(Psn),
    Sack(Psn, Sack),
}

struct Receiver {
    win: RxWindow,
    kept: BTreeMap<u32, Pkt>,
    out: Vec<Vec<u8>>,
    done: Vec<usize>,
    max_kept: usize,
    /// Report a hole again when a later retransmission overtook its repair.
    again: bool,
}

impl Receiver {
    fn place(&mut self, p: &Pkt, msgs: &[Vec<u8>]) {
        place(&mut self.out, msgs, &p.seg);
        if p.seg.last {
            self.done.push(p.seg.msg);
        }
    }

    /// One packet arrives; returns what the receiver sends back.
    fn on_pkt(&mut self, p: Pkt, msgs: &[Vec<u8>]) -> Option<Back> {
        let cum = |w: &RxWindow| w.base().sub(1);
        match self.win.arrive(p.psn) {
            Arrival::Expected => {
                self.place(&p, msgs);
                while self.win.advance() {
                    let k = self.kept.remove(&self.win.base().get()).unwrap();
                    self.place(&k, msgs);
                }
                if self.win.has_holes() {
                    if p.probe {
                        return self.win.sack(true).map(|s| Back::Sack(cum(&self.win), s));
                    }
                    return self.win.sack(false).map(|s| Back::Sack(cum(&self.win), s));
                }
                (p.seg.last || p.probe).then(|| Back::Ack(cum(&self.win)))
            }
            Arrival::Ahead => {
                self.kept.insert(p.psn.get(), p);
                self.max_kept = self.max_kept.max(self.kept.len());
                let again = if self.again && p.retx && !p.probe {
                    self.win.lost_again(p.psn)
                } else {
                    None
                };
                let s = again.or_else(|| self.win.sack(p.probe))?;
                Some(Back::Sack(cum(&self.win), s))
            }
            Arrival::Duplicate => {
                if p.probe {
                    return Some(match self.win.sack(true) {
                        Some(s) => Back::Sack(cum(&self.win), s),
                        None => Back::Ack(cum(&self.win)),
                    });
                }
                None
            }
            Arrival::Beyond => None,
        }
    }
}

struct Outcome {
    ok: bool,
    retx: u64,
    probes: u64,
    lost: u64,
}

fn run(sizes: &[usize], mtu: usize, seed: u64, loss: u32, dup: u32, reorder: u32) -> Outcome {
    run_with(sizes, mtu, seed, (loss, dup, reorder), true)
}

/// `link`: loss, duplication and reordering (per mille); `again`: the receiver reports a
/// hole again when a later retransmission overtook its repair.
fn run_with(sizes: &[usize], mtu: usize, seed: u64, link: (u32, u32, u32), again: bool) -> Outcome {
    let (loss, dup, reorder) = link;
    let start = Psn::new((seed as u32) & 0xff_ffff);
    let msgs = messages(sizes, 0);
    // The packets of every message, by PSN offset from `start`.
    let pkts: Vec<Pkt> = segments(&msgs, mtu)
        .into_iter()
        .enumerate()
        .map(|(k, seg)| Pkt {
            psn: start.add(k as u32),
            seg,
            probe: false,
            retx: false,
        })
        .collect();
    let mut rng = Rng(seed | 1);
    let mut fwd = Link::new(loss, dup, reorder);
    let mut back: Link<(u8, Psn, Sack)> = Link::new(loss, 0, 0);
    let mut rx = Receiver {
        win: RxWindow::new(start),
        kept: BTreeMap::new(),
        out: msgs.iter().map(|m| vec![0u8; m.len()]).collect(),
        done: Vec::new(),
        max_kept: 0,
        again,
    };
    let (mut next, mut comp) = (0u32, 0u32);
    let (mut retx, mut probes) = (0u64, 0u64);
    let mut resend: VecDeque<u32> = VecDeque::new();
    let total = pkts.len() as u32;
    let mut idle = 0;
    for now in 0..200_000u64 {
        if comp == total {
            break;
        }
        // Sender: retransmissions first, then new data, a few packets per tick.
        for _ in 0..4 {
            if let Some(i) = resend.pop_front() {
                if i >= comp {
                    retx += 1;
                    let mut p = pkts[i as usize];
                    p.retx = true;
                    fwd.send(now, &mut rng, p);
                }
            } else if next < total && next - comp < WINDOW {
                fwd.send(now, &mut rng, pkts[next as usize]);
                next += 1;
            }
        }
        let mut busy = !fwd.idle() || !back.idle() || !resend.is_empty();
        for p in fwd.due(now) {
            if let Some(b) = rx.on_pkt(p, &msgs) {
                let v = match b {
                    Back::Ack(c) => (0, c, Sack::default()),
                    Back::Sack(c, s) => {
                        // A SACK names only PSNs the receiver lacks, at or after its base.
                        for q in s.iter() {
                            assert!(!q.before(rx.win.base()), "SACK names a received PSN");
                            assert!(!rx.kept.contains_key(&q.get()), "SACK names a kept PSN");
                        }
                        (1, c, s)
                    }
                };
                back.send(now, &mut rng, v);
            }
            busy = true;
        }
        for (kind, cum, s) in back.due(now) {
            let c = (cum.add(1).diff(start)).max(0) as u32;
            if c > comp && c <= next {
                comp = c;
            }
            if kind == 1 {
                for q in s.iter() {
                    let i = q.diff(start);
                    if i >= comp as i32 && (i as u32) < next {
                        resend.push_back(i as u32);
                    }
                }
            }
            busy = true;
        }
        // Tail-loss probe: after silence, resend the last packet sent, flagged.
        idle = if busy { 0 } else { idle + 1 };
        if idle >= 8 && comp < next {
            idle = 0;
            probes += 1;
            let mut p = pkts[(next - 1) as usize];
            p.probe = true;
            fwd.send(now, &mut rng, p);
        }
    }
    assert!(rx.max_kept <= RX_SPAN as usize);
    let order_ok = completed_in_order(&rx.done, msgs.len());
    Outcome {
        ok: comp == total && order_ok && rx.out == msgs,
        retx,
        probes,
        lost: fwd.lost,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Loss in both directions only: exact data, in order, and every retransmission is
    /// a lost packet or a probe.
    #[test]
    fn lossy_link(sizes in sizes(), mtu in mtus(), seed in any::<u64>(), loss in 0u32..120) {
        let o = run(&sizes, mtu, seed, loss, 0, 0);
        prop_assert!(o.ok);
        prop_assert!(o.retx <= o.lost + o.probes, "retx {} lost {} probes {}", o.retx, o.lost, o.probes);
    }

    /// Loss, duplication and reordering together: still exact and in order.
    #[test]
    fn hostile_link(sizes in sizes(), mtu in mtus(), seed in any::<u64>(), loss in 0u32..100,
                    dup in 0u32..100, reorder in 0u32..200) {
        let o = run(&sizes, mtu, seed, loss, dup, reorder);
        prop_assert!(o.ok);
    }
}

/// A lossless link needs no retransmission at all.
#[test]
fn lossless_link_retransmits_nothing() {
    let o = run(&[65536; 8], 1024, 42, 0, 0, 0);
    assert!(o.ok);
    assert_eq!((o.retx, o.lost), (0, 0));
}

/// 1% loss on 64 KiB messages: retransmissions stay within 1.2x the losses (the issue's
/// target for the whole system), probes included.
#[test]
fn one_percent_loss_ratio() {
    let (mut retx, mut lost) = (0, 0);
    for seed in 1..40 {
        let o = run(&[65536; 16], 1024, seed * 7919, 10, 0, 0);
        assert!(o.ok);
        retx += o.retx + o.probes;
        lost += o.lost;
    }
    assert!(lost > 0);
    assert!(retx * 10 <= lost * 12, "retx {retx} lost {lost}");
}

/// 5% loss: a hole whose retransmission was lost too is reported again as soon as a later
/// retransmission arrives, so fewer repairs wait for a tail-loss probe; and the packets
/// resent still never exceed the losses plus the probes.
#[test]
fn lost_retransmissions_reported_again() {
    let (mut with, mut without) = ((0, 0), (0, 0));
    for seed in 1..60 {
        let sizes = [65536; 8];
        let a = run_with(&sizes, 1024, seed * 104729, (50, 0, 0), true);
        let b = run_with(&sizes, 1024, seed * 104729, (50, 0, 0), false);
        assert!(a.ok && b.ok);
        assert!(
            a.retx <= a.lost + a.probes,
            "retx {} lost {} probes {}",
            a.retx,
            a.lost,
            a.probes
        );
        with = (with.0 + a.probes, with.1 + a.lost);
        without = (without.0 + b.probes, without.1 + b.lost);
    }
    assert!(with.1 > 0 && without.1 > 0);
    // Probes per loss (the two runs of a seed see different losses once they diverge).
    assert!(
        with.0 * without.1 < without.0 * with.1,
        "probes/lost {with:?} vs {without:?}"
    );
}
