// SPDX-License-Identifier: GPL-2.0
//! Delay-based rate control per destination (source document 002, algorithm `delay`).
//!
//! Data packets carry the sender's transmit timestamp, the receiver's ACK echoes it with
//! its own receive timestamp. The sender then has two one-way delays per echo:
//! forward = rx - tx and reverse = ack arrival - rx. Clocks are not synchronised, so each
//! carries an unknown constant offset; only its excess over its own minimum (the
//! queueing delay in that direction) is used, and the offsets cancel. Their sum is the
//! true round trip, which paces the decisions.
//!
//! Each destination has a register ([`DelayCc`]): minimum forward and reverse delay
//! (re-learned per `delay_min_window_ms`: the minimum of the current and the previous
//! window, so a route change cannot pin an old minimum for more than two windows),
//! smoothed queueing delays (gain 1/4 per echo, kept in 1/16 us; reported), the queueing
//! delays of the last eight echoes, a smoothed round trip (gain 1/8), the smoothed
//! interval between echoes, and the destination's rate. A decision goes by the lowest
//! queueing delay of the echoes of the last 3 ms in each direction, at least four and at
//! most eight of them: a queue delays every packet, while a receiver or sender busy
//! elsewhere for a moment delays a few (in a loaded guest, by milliseconds), and a
//! smoothed delay reads those as a queue that never drains below the target. (Eight
//! echoes come within microseconds at a gigabit with an ACK per packet, but take 160 ms
//! at 25 Mbit/s with an ACK per 64 KiB message, and a queue seen 160 ms late has long
//! overflowed. So the requester asks for an ACK every `delay_ack_pkts` packets: with the
//! default 8, eight echoes take 21 ms at 25 Mbit/s.) At most
//! once per smoothed round trip, or per
//! `rp_time_reset` when that is shorter (a queue far beyond the target inflates the
//! round trip, and reacting only once per inflated round trip lets it overflow), an echo
//! decides, comparing both queueing delays with their values at the last decision:
//!
//! | forward | reverse | case                                        | rate               |
//! |---------|---------|---------------------------------------------|--------------------|
//! | grows   | grows   | [`Case::Worse`] when reverse > forward      | `-= delay_big_dec` |
//! | grows   | grows   | [`Case::SlightlyWorse`] when reverse <= fwd | `-= delay_small_dec` |
//! | grows   | shrinks | [`Case::Improving`] (also the mirror case)  | hold               |
//! | shrinks | shrinks | [`Case::ImprovingFast`]                     | hold               |
//! | both under the target             || [`Case::Baseline`]                | `+= step`          |
//! | neither, queue over 2 * target    || as if both grew (standing queue)  | cut                |
//! | neither grows nor shrinks         || [`Case::Hold`]                    | hold               |
//!
//! The standing-queue row is an addition to document 002's four cases: a queue that
//! stopped growing only because the bottleneck drops (or because the rates sum to exactly
//! its capacity) would otherwise be held forever, far above the target. Holding stays the
//! answer between the target and twice the target.
//! The target is `delay_target_us`, or, out of slow start, the time `TARGET_BYTES` take
//! at the destination's rate when that is longer: a queue of a packet or two is not
//! congestion (at 100 Mbit/s one 1 KiB packet takes 82 us, more than the default 50 us),
//! and a destination sending less than its neighbours tolerates more of it, so it grows
//! while they hold (the fairness term of Swift's flow-scaled target).
//!
//! The additive increase `step` is `INC_BYTES / D^2` per second since the last increase,
//! where `D` is the feedback delay (the smoothed round trip plus the interval of the four
//! echoes a decision needs), at most `delay_inc` per decision: what an increase adds to
//! the bottleneck's queue before the echoes that show it come back stays near
//! `INC_BYTES`, whatever the bottleneck's rate and however sparse the echoes (TCP's one
//! segment per round trip, per round trip, is the same law). Per second, not per echo:
//! every destination behind one bottleneck gains the same, so increases are additive
//! and shares converge.
//!
//! "Grows"/"shrinks": changed by more than the tolerance `max(1 us, delay_target_us / 4)`
//! since the last decision. A direction that neither grows nor shrinks follows the other
//! one: an uncongested reverse path (the usual case: ACKs are small) must not hide
//! forward congestion, so forward growth alone is [`Case::SlightlyWorse`]. The reverse
//! queueing delay exceeding the forward one means the receiver's side is congested (in a
//! software RoCE receiver, late ACKs are an overloaded receiver): the big cut. A [`Case::Hold`]
//! keeps the reference values, so slow creep adds up until it passes the tolerance.
//!
//! Each destination's share of the sender's line rate is an even split over the active
//! destinations ([`split`]). A new destination does not start at its share but at
//! `1/delay_slow_start` of it and doubles once per round trip while both queueing delays
//! stay under the target (slow start, an addition to document 002): a sender that joins
//! a loaded bottleneck at its full share fills the bottleneck's queue faster than a
//! decision per round trip can empty it. A doubling waits until every echo a decision
//! goes by is of a packet sent after the last one. The first queue (the decision's queueing delay or the
//! smoothed one over the target) ends slow start at once and halves the rate: the last
//! doubling built that queue. Reaching the share ends it too, without the halving.

use super::params::Params;
use super::{mul_div, Change, NS_PER_US};

/// Smoothed delays are kept in 1/`SCALE` us.
const SCALE: i64 = 16;

/// Timestamps on the wire: microseconds, u32, wrapping. Forward sample = rx_ts - tx_ts,
/// reverse = ack_arrival - rx_ts, each as wrapping u32 difference reinterpreted as i32
/// (clocks are not synchronised: only changes against the minimum matter).
pub fn ts_us(now_ns: u64) -> u32 {
    // Truncation is the wire format: the timestamp wraps every 2^32 us.
    (now_ns / NS_PER_US) as u32
}

/// `later - earlier` of two wire timestamps, as a signed wrapping difference.
pub fn delta_us(later: u32, earlier: u32) -> i32 {
    later.wrapping_sub(earlier) as i32
}

/// The decision an echo falls in (see the module doc's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// Both queueing delays grow and the reverse one is larger: cut a lot.
    Worse,
    /// Both grow, the forward one is larger: cut a little.
    SlightlyWorse,
    /// One grows, the other shrinks: hold.
    Improving,
    /// Both shrink (above the baseline): hold.
    ImprovingFast,
    /// Both under `delay_target_us`: increase a little.
    Baseline,
    /// No trend: hold.
    Hold,
}

/// Minimum of the current and the previous window, in wrapping `i32` order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MinWin {
    cur: Option<i32>,
    prev: Option<i32>,
}

/// The smaller of two delays in wrapping order.
fn wmin(a: i32, b: i32) -> i32 {
    if a.wrapping_sub(b) < 0 {
        a
    } else {
        b
    }
}

impl MinWin {
    fn get(&self) -> Option<i32> {
        match (self.cur, self.prev) {
            (Some(a), Some(b)) => Some(wmin(a, b)),
            (a, b) => a.or(b),
        }
    }

    fn rotate(&mut self) {
        self.prev = self.cur;
        self.cur = None;
    }

    fn add(&mut self, x: i32) {
        self.cur = Some(match self.cur {
            Some(c) => wmin(c, x),
            None => x,
        });
    }
}

/// Echoes whose lowest queueing delay a decision goes by: at most this many, those of the
/// last filter span (see [`Dir::level`]) ...
const LOW_N: usize = 8;
/// ... and at least this many.
const LOW_MIN: usize = 4;
/// The filter span of [`Dir::level`], ns.
const FILTER_NS: u64 = 3_000_000;
/// A queue of this many bytes at the destination's own rate is not congestion (see the
/// module doc).
const TARGET_BYTES: u64 = 2048;
/// What an additive increase may add to the queue within a feedback delay, bytes (see
/// [`DelayCc::step`]).
const INC_BYTES: u64 = 4096;
const NS_PER_S: u64 = 1_000_000_000;

/// One direction's register: its minimum, its smoothed queueing delay, and the queueing
/// delays of its last `LOW_N` echoes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Dir {
    min: MinWin,
    /// Smoothed queueing delay, 1/SCALE us (reported).
    sq: i64,
    /// Queueing delays of the last echoes, 1/SCALE us (a ring; `n` of them valid), and
    /// when each came, ns.
    last: [i64; LOW_N],
    last_t: [u64; LOW_N],
    /// Echoes in `last` (up to `LOW_N`), and the next slot to write.
    n: usize,
    at: usize,
    /// `level()` at the last decision that was not a hold.
    reference: i64,
}

impl Dir {
    /// Applies a change of the minimum from `old` to the current one to the stored delays.
    fn rebase(&mut self, old: Option<i32>) {
        match (old, self.min.get()) {
            (Some(o), Some(n)) => {
                let d = i64::from(o.wrapping_sub(n)) * SCALE;
                self.sq = self.sq.saturating_add(d).max(0);
                for l in &mut self.last {
                    *l = l.saturating_add(d).max(0);
                }
                self.reference = self.reference.saturating_add(d).max(0);
            }
            _ => {
                self.sq = 0;
                self.n = 0;
                self.reference = 0;
            }
        }
    }

    fn sample(&mut self, now: u64, x: i32, rotate: bool) {
        let old = self.min.get();
        if rotate {
            self.min.rotate();
        }
        self.min.add(x);
        self.rebase(old);
        let q = match self.min.get() {
            Some(m) => i64::from(x.wrapping_sub(m)).max(0) * SCALE,
            None => 0,
        };
        self.sq += (q - self.sq) / 4;
        if let Some(slot) = self.last.get_mut(self.at) {
            *slot = q;
        }
        if let Some(slot) = self.last_t.get_mut(self.at) {
            *slot = now;
        }
        self.at = (self.at + 1) % LOW_N;
        self.n = (self.n + 1).min(LOW_N);
    }

    /// The queueing delay a decision goes by, and the number of echoes it went by: the
    /// lowest of the echoes of the last `FILTER_NS`, at least `LOW_MIN` and at most
    /// `LOW_N` of them. A queue delays every packet; a late packet alone (a receiver or a
    /// sender busy elsewhere) is not a queue. (Bounded by a time too: with sparse echoes,
    /// `LOW_N` of them reach back too far for a growing queue to show in time.)
    fn level(&self, now: u64) -> (i64, usize) {
        let mut low: Option<i64> = None;
        let mut used = 0;
        // Newest first: the newest `LOW_MIN` always, older ones while within the span.
        for k in 0..self.n {
            let i = (self.at + LOW_N - 1 - k) % LOW_N;
            let (Some(&q), Some(&t)) = (self.last.get(i), self.last_t.get(i)) else {
                break;
            };
            if k >= LOW_MIN && now.saturating_sub(t) > FILTER_NS {
                break;
            }
            low = Some(low.map_or(q, |l| l.min(q)));
            used += 1;
        }
        (low.unwrap_or(self.sq), used)
    }

    /// +1 grows, -1 shrinks, 0 neither: `level` against the reference and the tolerance.
    fn trend(&self, level: i64, tol: i64) -> i32 {
        let d = level - self.reference;
        if d > tol {
            1
        } else if d < -tol {
            -1
        } else {
            0
        }
    }
}

/// One destination's register: min and smoothed forward/reverse one-way delays and the
/// destination's rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelayCc {
    rate: u64,
    fwd: Dir,
    rev: Dir,
    /// Start of the current minimum window.
    win_t: u64,
    /// Smoothed round trip, ns (0: none yet).
    srtt: u64,
    /// Time of the last decision.
    dec_t: u64,
    /// A decision has been made.
    decided: bool,
    /// Slow start: until the first queue (or the split), each decision doubles the rate.
    slow: bool,
    /// The rate slow start ends at: the destination's split.
    ceil: u64,
    /// Echoes from a round trip after the last decision on (slow start doubles only
    /// after `LOW_N` of them: the lowest queueing delay of the last `LOW_N` echoes must
    /// have seen the rate it doubles).
    since: usize,
    /// Smoothed interval between echoes, ns (0: none yet), and the last echo's time.
    gap: u64,
    echo_t: u64,
    /// Time of the last increase.
    inc_t: u64,
}

impl DelayCc {
    /// A destination whose share of the line rate is `split` (see [`split`]), in slow
    /// start from `split / delay_slow_start` (see the module doc).
    pub fn new(now: u64, split: u64, p: &Params) -> DelayCc {
        let rate = p.clamp_rate(split / p.delay_slow_start().max(1));
        DelayCc {
            rate,
            fwd: Dir::default(),
            rev: Dir::default(),
            win_t: now,
            srtt: 0,
            dec_t: now,
            decided: false,
            slow: rate < split,
            ceil: split,
            since: 0,
            gap: 0,
            echo_t: now,
            inc_t: now,
        }
    }

    /// One echo: classifies it with the four cases (plus Baseline: both queueing delays
    /// under delay_target_us -> increase a little; Hold otherwise) and adjusts the rate
    /// at most once per smoothed round trip (or per rp_time_reset).
    ///
    /// The returned case is the echo's classification even when it is too soon to act
    /// on it (then with [`Change::Same`]).
    pub fn on_sample(&mut self, now: u64, fwd_us: i32, rev_us: i32, p: &Params) -> (Case, Change) {
        let rotate = now.saturating_sub(self.win_t) >= p.delay_min_window_ns();
        if rotate {
            self.win_t = now;
        }
        self.fwd.sample(now, fwd_us, rotate);
        self.rev.sample(now, rev_us, rotate);
        let rtt = i64::from(fwd_us.wrapping_add(rev_us));
        if let Ok(rtt_us) = u64::try_from(rtt) {
            let r = rtt_us.saturating_mul(NS_PER_US);
            self.srtt = if self.srtt == 0 {
                r.max(1)
            } else {
                (self.srtt * 7 + r) / 8
            };
        }

        let g = now.saturating_sub(self.echo_t);
        self.echo_t = now;
        self.gap = if self.gap == 0 {
            g.max(1)
        } else {
            self.gap.saturating_mul(7).saturating_add(g) / 8
        };
        let target = i64::from(p.delay_target_us()) * SCALE;
        let target = if self.slow {
            target
        } else {
            target.max(flow_target(self.rate))
        };
        let tol = (target / 4).max(SCALE);
        let ((qf, nf), (qr, nr)) = (self.fwd.level(now), self.rev.level(now));
        let case = if qf <= target && qr <= target {
            Case::Baseline
        } else {
            let (mut f, mut r) = (self.fwd.trend(qf, tol), self.rev.trend(qr, tol));
            if f == 0 {
                f = r;
            }
            if r == 0 {
                r = f;
            }
            match (f, r) {
                (1, 1) if qr > qf => Case::Worse,
                (1, 1) => Case::SlightlyWorse,
                (-1, -1) => Case::ImprovingFast,
                (0, 0) if qf.max(qr) > 2 * target => {
                    if qr > qf {
                        Case::Worse
                    } else {
                        Case::SlightlyWorse
                    }
                }
                (0, 0) => Case::Hold,
                _ => Case::Improving,
            }
        };

        // In slow start once per round trip (a doubling must be seen before the next);
        // afterwards also per rp_time_reset when that is shorter.
        let every = match (self.srtt, self.slow) {
            (0, _) => p.time_reset_ns(),
            (r, true) => r,
            (r, false) => r.min(p.time_reset_ns()),
        };
        // The first queue ends slow start at once, whenever the last decision was. A
        // doubling waits for `LOW_N` echoes a round trip after the last one: echoes of
        // packets sent at the rate it doubles.
        let early = self.decided && now.saturating_sub(self.dec_t) < every;
        if !early {
            self.since = self.since.saturating_add(1);
        }
        // (In slow start the smoothed delays count too: the lowest of the last `LOW_N`
        // echoes sees a queue that a doubling builds `LOW_N` packets late, and by then
        // the next doubling may have come.)
        let smoothed = self.fwd.sq.max(self.rev.sq) > target;
        let exit = self.slow && (case != Case::Baseline || smoothed);
        let blind = self.slow && self.since < nf.max(nr);
        if !exit && (early || blind) {
            return (case, Change::Same);
        }
        let old = self.rate;
        let was_slow = self.slow;
        let acted = case != Case::Hold || was_slow;
        let cut = |r: u64, d: u64| r.saturating_sub(mul_div(r, d, 1024));
        self.rate = match case {
            Case::Baseline if self.slow && !exit => {
                let r = self.rate.saturating_mul(2);
                self.slow = r < self.ceil;
                r.min(self.ceil)
            }
            _ if self.slow => {
                self.slow = false;
                self.rate / 2
            }
            Case::Worse => cut(self.rate, p.delay_big_dec()),
            Case::SlightlyWorse => cut(self.rate, p.delay_small_dec()),
            Case::Baseline => self.rate.saturating_add(p.delay_inc().min(self.step(now))),
            _ => self.rate,
        };
        self.rate = p.clamp_rate(self.rate);
        if self.rate > old {
            self.inc_t = now;
        }
        if acted {
            self.since = 0;
            self.fwd.reference = qf;
            self.rev.reference = qr;
            // Decisions on a grid of `every`, not `every` after the echo that happened to
            // come first: a destination with more echoes (a higher rate) must not decide,
            // and so increase, more often.
            let next = self.dec_t.saturating_add(every);
            // (Not in slow start, whose doublings wait for their echoes.)
            self.dec_t = if self.decided && !was_slow && now < next.saturating_add(every) {
                next
            } else {
                now
            };
            self.decided = true;
        }
        (case, Change::of(old, self.rate))
    }

    /// The feedback delay: an increase shows in the lowest queueing delay of the echoes
    /// once `LOW_MIN` echoes of packets sent after it have come back, ns.
    fn feedback_ns(&self) -> u64 {
        self.srtt
            .saturating_add(self.gap.saturating_mul(LOW_MIN as u64))
            .max(1)
    }

    /// The additive increase due now, bytes/s: `INC_BYTES / D^2` per second since the last
    /// increase (at most one feedback delay `D`'s worth), so that what the increase adds
    /// to the bottleneck's queue before its feedback comes back stays near `INC_BYTES`
    /// whatever the bottleneck's rate and however sparse the echoes.
    fn step(&self, now: u64) -> u64 {
        let d = self.feedback_ns();
        let dt = now.saturating_sub(self.inc_t).min(d);
        mul_div(INC_BYTES.saturating_mul(NS_PER_S), dt, d) / d
    }

    /// Current rate, bytes/s.
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// Sets the rate (the destination table re-splits bandwidth when destinations come and go).
    pub fn set_rate(&mut self, rate: u64) {
        self.rate = rate;
    }

    /// Whether the destination is in slow start.
    pub fn slow_start(&self) -> bool {
        self.slow
    }

    /// Smoothed forward and reverse queueing delays, us.
    pub fn queueing_us(&self) -> (u32, u32) {
        let us = |v: i64| u32::try_from(v / SCALE).unwrap_or(u32::MAX);
        (us(self.fwd.sq), us(self.rev.sq))
    }

    /// Smoothed round trip, ns (0 before the first echo).
    pub fn srtt_ns(&self) -> u64 {
        self.srtt
    }
}

/// The delay target that a queue of `TARGET_BYTES` at `rate` (bytes/s) sets, 1/SCALE us.
fn flow_target(rate: u64) -> i64 {
    let us = mul_div(TARGET_BYTES, 1_000_000, rate.max(1));
    i64::try_from(us)
        .unwrap_or(i64::MAX / SCALE)
        .saturating_mul(SCALE)
}

/// Initial per-destination rate: bandwidth split evenly over the active destinations.
pub fn split(line: u64, active: u32) -> u64 {
    line / u64::from(active.max(1))
}

#[cfg(test)]
mod tests {
    use super::super::params::{idx, NPARAMS};
    use super::super::MBPS;
    use super::*;
    use proptest::prelude::*;

    const US: u64 = 1000;

    /// The unit tests' knobs: 1 Gbit/s, no slow start (see `slow_start`).
    fn params() -> Params {
        let mut p = Params::gbit();
        p.set(idx::DELAY_SLOW_START, 1);
        p
    }

    #[test]
    fn timestamps_wrap() {
        assert_eq!(ts_us(1_999), 1);
        assert_eq!(ts_us((1u64 << 32) * 1000 + 5000), 5);
        assert_eq!(delta_us(3, u32::MAX - 1), 5);
        assert_eq!(delta_us(0, 5), -5);
        assert_eq!(split(100, 0), 100);
        assert_eq!(split(100, 4), 25);
    }

    /// Feeds one echo per 10 us with the given queueing delays on top of offset clocks.
    fn feed(d: &mut DelayCc, t: &mut u64, qf: i32, qr: i32, n: u32, p: &Params) -> (Case, u64) {
        let mut last = Case::Hold;
        for _ in 0..n {
            *t += 10 * US;
            // Receiver clock 2^31 - 40 us ahead of the sender's: the forward delay wraps.
            let fwd = (50 + qf).wrapping_add(i32::MAX - 40);
            let rev = (50 + qr).wrapping_sub(i32::MAX - 40);
            last = d.on_sample(*t, fwd, rev, p).0;
        }
        (last, d.rate())
    }

    #[test]
    fn four_cases() {
        let p = params();
        // (At 500 Mbit/s `TARGET_BYTES` take 33 us: the target is `delay_target_us`.)
        let r0 = 500 * MBPS;
        let mut d = DelayCc::new(0, r0, &p);
        let mut t = 0;
        // Baseline: increases once per round trip (100 us).
        let (c, r) = feed(&mut d, &mut t, 0, 0, 20, &p);
        assert_eq!(c, Case::Baseline);
        assert_eq!(r, r0 + 2 * p.delay_inc());
        // Forward queue grows, reverse flat: small cut (once the round trip, which grows
        // with the queue, has passed).
        let mut d2 = d;
        let mut t2 = t;
        let (c, r) = feed(&mut d2, &mut t2, 200, 0, 20, &p);
        assert_eq!(c, Case::SlightlyWorse);
        let r1 = r0 + 2 * p.delay_inc();
        assert_eq!(r, r1 - r1 * 64 / 1024);
        // Both grow, reverse more: big cut.
        let mut d3 = d;
        let mut t3 = t;
        let before = d3.rate();
        let mut worse = false;
        for _ in 0..60 {
            let (c, r) = feed(&mut d3, &mut t3, 100, 300, 1, &p);
            if c == Case::Worse && r < before {
                worse = true;
                assert_eq!(r, before - before * 256 / 1024);
                break;
            }
        }
        assert!(worse);
        // A standing queue over twice the target is cut.
        let mut standing = d;
        let mut tst = t;
        feed(&mut standing, &mut tst, 300, 0, 200, &p);
        let before = standing.rate();
        let (c, r) = feed(&mut standing, &mut tst, 300, 0, 100, &p);
        assert_eq!(c, Case::SlightlyWorse);
        assert!(r < before);
        // From a standing queue between the target and twice it (80 us forward, 60 us
        // reverse), each trend.
        let mut settled = d;
        let mut ts = t;
        feed(&mut settled, &mut ts, 80, 60, 200, &p);
        let held = settled.rate();
        let (c, r) = feed(&mut settled, &mut ts, 80, 60, 100, &p);
        assert_eq!((c, r), (Case::Hold, held));
        // Each trend ramps from (80, 60) to (qf, qr): a decision goes by the lowest of
        // the last LOW_N echoes, which shows a step down at once and a step up LOW_N
        // echoes later, so opposite steps would read as two separate events.
        let trend = |qf: i32, qr: i32| {
            let mut d = settled;
            let mut t = ts;
            let mut seen = Vec::new();
            for i in 1..=30 {
                t += 10 * US;
                let (qf, qr) = (80 + (qf - 80) * i / 30, 60 + (qr - 60) * i / 30);
                let fwd = (50 + qf).wrapping_add(i32::MAX - 40);
                let rev = (50 + qr).wrapping_sub(i32::MAX - 40);
                seen.push(d.on_sample(t, fwd, rev, &p));
            }
            seen
        };
        // Forward grows while reverse shrinks (and the mirror): hold.
        for (qf, qr) in [(600, 0), (0, 400)] {
            let seen = trend(qf, qr);
            assert!(seen.contains(&(Case::Improving, Change::Same)), "{seen:?}");
            assert!(seen.iter().all(|&(_, ch)| ch == Change::Same), "{seen:?}");
        }
        // Both shrink above the baseline: hold.
        let seen = trend(60, 0);
        assert!(
            seen.contains(&(Case::ImprovingFast, Change::Same)),
            "{seen:?}"
        );
        assert!(seen.iter().all(|&(_, ch)| ch == Change::Same), "{seen:?}");
        // Back at the baseline: increase.
        let seen = trend(0, 0);
        assert!(
            seen.contains(&(Case::Baseline, Change::Increased)),
            "{seen:?}"
        );
        assert!(
            seen.iter().all(|&(_, ch)| ch != Change::Decreased),
            "{seen:?}"
        );
    }

    /// Slow start (from 1/64 of the split here): doubling at the baseline up to the split,
    /// each doubling a round trip (100 us here) and `LOW_N` echoes after the last (all
    /// eight a decision goes by: they come 10 us apart); or, at the first queue, halving
    /// at once and going on by the four cases.
    #[test]
    fn slow_start() {
        let mut p = Params::gbit();
        p.set(idx::DELAY_SLOW_START, 64);
        let share = 640 * MBPS;
        let d0 = DelayCc::new(0, share, &p);
        assert_eq!(d0.rate(), 10 * MBPS);
        assert!(d0.slow_start());
        // No queue: six doublings reach the share, then additive increase.
        let mut d = d0;
        let mut t = 0;
        let mut seen = vec![d.rate()];
        let mut at = vec![0];
        for _ in 0..200 {
            feed(&mut d, &mut t, 0, 0, 1, &p);
            if seen.last() != Some(&d.rate()) {
                seen.push(d.rate());
                at.push(t);
            }
        }
        // (The first decision comes with the first echo.)
        for w in at[1..7].windows(2) {
            assert!(
                w[1] - w[0] >= 100 * US + (LOW_N as u64 - 1) * 10 * US,
                "{at:?}"
            );
        }
        assert_eq!(
            &seen[..7],
            &[10, 20, 40, 80, 160, 320, 640].map(|m| m * MBPS)
        );
        assert!(!d.slow_start());
        assert_eq!(seen[7], share + p.delay_inc());
        // Three doublings, then a queue: half of 80 Mbit/s, and slow start is over.
        let mut d = d0;
        let mut t = 0;
        while d.rate() < 80 * MBPS {
            feed(&mut d, &mut t, 0, 0, 1, &p);
        }
        assert_eq!(d.rate(), 80 * MBPS);
        assert!(d.slow_start());
        feed(&mut d, &mut t, 300, 0, 1, &p);
        assert!(!d.slow_start());
        assert_eq!(d.rate(), 40 * MBPS);
        // (Out of slow start the target is at least the time `TARGET_BYTES` take at the
        // rate: 410 us at 40 Mbit/s.)
        feed(&mut d, &mut t, 1000, 0, 40, &p);
        assert!(!d.slow_start());
        assert!(d.rate() <= 40 * MBPS, "{}", d.rate());
        // delay_slow_start 1: the split at once.
        p.set(idx::DELAY_SLOW_START, 1);
        let d1 = DelayCc::new(0, share, &p);
        assert_eq!(d1.rate(), share);
        assert!(!d1.slow_start());
    }

    /// Echoes every 20 ms (an ACK per 64 KiB message at 25 Mbit/s): the increase per
    /// decision shrinks with the feedback delay, and a queue shows in the `LOW_MIN`th
    /// echo (not the `LOW_N`th).
    #[test]
    fn sparse_echoes() {
        let mut p = Params::DEFAULT;
        p.set(idx::DELAY_SLOW_START, 1);
        let r0 = 25 * MBPS;
        let mut d = DelayCc::new(0, r0, &p);
        let mut t = 0;
        let echo = |d: &mut DelayCc, t: &mut u64, q: i32| {
            *t += 20_000 * US;
            d.on_sample(*t, 50 + q, 50, &p)
        };
        let mut steps = Vec::new();
        for _ in 0..20 {
            let before = d.rate();
            assert_eq!(echo(&mut d, &mut t, 0).0, Case::Baseline);
            steps.push(d.rate() - before);
        }
        // D = 100 us + 4 * 20 ms: 4 KiB / D^2 * 20 ms = 12.8 KB/s (0.1 Mbit/s), against
        // delay_inc's 10 Mbit/s.
        let last = steps[steps.len() - 1];
        assert!(last > 10_000 && last < 16_000, "{steps:?}");
        // A 5 ms queue: cut by the `LOW_MIN`th echo that shows it.
        let before = d.rate();
        for _ in 1..LOW_MIN {
            let (c, ch) = echo(&mut d, &mut t, 5000);
            assert_ne!(ch, Change::Decreased, "{c:?}");
        }
        let (c, ch) = echo(&mut d, &mut t, 5000);
        assert_eq!((c, ch), (Case::SlightlyWorse, Change::Decreased));
        assert!(d.rate() < before);
    }

    /// Out of slow start, the target is at least the time `TARGET_BYTES` take at the
    /// rate: a standing 400 us queue is the baseline at 25 Mbit/s (655 us) and a queue
    /// at 500 Mbit/s (33 us: `delay_target_us`, 50 us).
    #[test]
    fn target_scales_with_rate() {
        let mut p = Params::DEFAULT;
        p.set(idx::DELAY_SLOW_START, 1);
        // (Increases of 1 Mbit/s keep the rate near where it started.)
        p.set(idx::DELAY_INC, 1);
        for (rate, want) in [
            (25 * MBPS, Case::Baseline),
            (500 * MBPS, Case::SlightlyWorse),
        ] {
            let mut d = DelayCc::new(0, rate, &p);
            let mut t = 0;
            feed(&mut d, &mut t, 0, 0, 10, &p);
            let (c, _) = feed(&mut d, &mut t, 400, 0, 40, &p);
            assert_eq!(c, want, "{rate}");
        }
    }

    #[test]
    fn minimum_is_relearned() {
        let mut p = params();
        p.set(idx::DELAY_MIN_WINDOW_MS, 1);
        let mut d = DelayCc::new(0, 10 * MBPS, &p);
        let mut t = 0;
        feed(&mut d, &mut t, 0, 0, 10, &p);
        // The path gets 500 us longer for good: after two windows it is the baseline.
        let (c, _) = feed(&mut d, &mut t, 500, 500, 300, &p);
        assert_eq!(c, Case::Baseline);
        assert_eq!(d.queueing_us(), (0, 0));
        assert!(d.srtt_ns() > 1000 * US);
    }

    proptest! {
        /// The rate stays within [min_rate, max_rate] whatever the echoes and knobs.
        #[test]
        fn rate_in_bounds(
            vals in proptest::collection::vec(any::<u32>(), NPARAMS),
            n in 0u32..64,
            // (Now and then a jump of any size: the register's times saturate.)
            ev in proptest::collection::vec(
                (prop_oneof![9 => 0u64..3_000_000, 1 => any::<u64>()], any::<i32>(), any::<i32>()),
                0..300,
            ),
        ) {
            let mut a = [0u32; NPARAMS];
            a.copy_from_slice(&vals);
            let p = Params::from_values(&a);
            let mut now = 0u64;
            let mut d = DelayCc::new(now, split(p.max_rate(), n), &p);
            for (dt, f, r) in ev {
                now = now.saturating_add(dt);
                d.on_sample(now, f, r, &p);
                prop_assert!(p.min_rate() <= d.rate() && d.rate() <= p.max_rate());
            }
        }
    }
}
