// SPDX-License-Identifier: GPL-2.0
//! The tail-loss probe delay: twice the smallest recent round trip, within its bounds,
//! measured only on packets sent once (Karn), doubled for each unanswered probe, with
//! integer arithmetic that neither overflows nor panics on any clock or PSN sequence.
// Tests index, unwrap and panic freely: a failure is the test failing.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use proptest::prelude::*;
use rrxe_proto::psn::Psn;
use rrxe_proto::sel::ProbeDelay;

const MIN: u32 = 1500;
const INIT: u32 = 3000;
const MAX: u32 = 20_000;
const US: u64 = 1000;

/// Times PSN `psn` sent at `t0_us` and answered `rtt_us` later.
fn sample(p: &mut ProbeDelay, psn: u32, t0_us: u64, rtt_us: u64) {
    p.sent(Psn::new(psn), || t0_us * US);
    assert!(p.covers(Psn::new(psn)));
    p.sample((t0_us + rtt_us) * US);
}

#[test]
fn initial_delay_before_any_sample() {
    let p = ProbeDelay::new();
    assert_eq!(p.min_rtt_us(), None);
    assert_eq!(p.delay_us(MIN, INIT, MAX), INIT);
}

#[test]
fn twice_the_smallest_sample() {
    let mut p = ProbeDelay::new();
    p.sent(Psn::new(10), || 0);
    assert!(!p.covers(Psn::new(9)));
    sample(&mut p, 10, 0, 1400);
    assert_eq!(p.min_rtt_us(), Some(1400));
    assert_eq!(p.delay_us(MIN, INIT, MAX), 2800);
    // A queue that lengthens later round trips does not lengthen the delay.
    sample(&mut p, 20, 2000, 2600);
    assert_eq!(p.min_rtt_us(), Some(1400));
    sample(&mut p, 30, 5000, 1000);
    assert_eq!(p.delay_us(MIN, INIT, MAX), 2000);
}

#[test]
fn bounds() {
    let mut p = ProbeDelay::new();
    sample(&mut p, 1, 0, 100);
    assert_eq!(p.delay_us(MIN, INIT, MAX), MIN);
    // A path slower than the initial delay is followed, up to the upper bound.
    let mut q = ProbeDelay::new();
    sample(&mut q, 1, 0, 5000);
    assert_eq!(q.delay_us(MIN, INIT, MAX), 10_000);
    let mut r = ProbeDelay::new();
    sample(&mut r, 1, 0, 50_000);
    assert_eq!(r.delay_us(MIN, INIT, MAX), MAX);
    // Inverted bounds give the lower one, never a panic.
    assert_eq!(r.delay_us(MAX, INIT, MIN), MAX);
}

#[test]
fn unanswered_probes_double_the_delay() {
    let mut p = ProbeDelay::new();
    let d: Vec<u32> = (0..4).map(|k| p.backoff_us(MIN, INIT, MAX, k)).collect();
    assert_eq!(d, [INIT, 2 * INIT, 4 * INIT, 8 * INIT]);
    sample(&mut p, 1, 0, 1000);
    assert_eq!(p.backoff_us(MIN, INIT, MAX, 0), 2000);
    assert_eq!(p.backoff_us(MIN, INIT, MAX, 1), 4000);
    // At most PROBE_BACKOFF doublings, and no overflow whatever the bounds.
    assert_eq!(
        p.backoff_us(MIN, INIT, MAX, 1000),
        2000 << rrxe_proto::sel::PROBE_BACKOFF
    );
    assert_eq!(
        p.backoff_us(u32::MAX, u32::MAX, u32::MAX, u32::MAX),
        u32::MAX
    );
}

#[test]
fn minimum_follows_a_slower_path() {
    let mut p = ProbeDelay::new();
    sample(&mut p, 0, 0, 200);
    // 64 to 128 samples later the old minimum is forgotten.
    let mut t = 1000;
    for k in 1..128u32 {
        sample(&mut p, k, t, 1200);
        t += 2000;
    }
    assert_eq!(p.min_rtt_us(), Some(1200));
    assert_eq!(p.delay_us(MIN, INIT, MAX), 2400);
}

#[test]
fn one_packet_timed_at_a_time() {
    let mut p = ProbeDelay::new();
    p.sent(Psn::new(5), || 0);
    // A later batch does not restart the timing of the first.
    p.sent(Psn::new(9), || 500 * US);
    assert!(p.covers(Psn::new(5)));
    p.sample(700 * US);
    assert_eq!(p.min_rtt_us(), Some(700));
    assert!(!p.covers(Psn::new(9)));
}

#[test]
fn clock_read_only_to_start_a_timing() {
    let mut p = ProbeDelay::new();
    let mut reads = 0;
    for psn in [5, 9] {
        p.sent(Psn::new(psn), || {
            reads += 1;
            0
        });
    }
    assert_eq!(reads, 1);
}

#[test]
fn karn_retransmission_cancels() {
    let mut p = ProbeDelay::new();
    p.sent(Psn::new(5), || 0);
    p.cancel();
    assert!(!p.covers(Psn::new(5)));
    p.sample(9_000 * US);
    assert_eq!(p.min_rtt_us(), None);
}

#[test]
fn only_its_own_repair_cancels() {
    let mut p = ProbeDelay::new();
    p.sent(Psn::new(63), || 0);
    p.resent(Psn::new(10), Psn::new(63));
    assert!(p.covers(Psn::new(63)));
    p.resent(Psn::new(60), Psn::new(64));
    assert!(!p.covers(Psn::new(63)));
}

#[test]
fn rewound_psns_are_not_timed() {
    let mut p = ProbeDelay::new();
    p.sent(Psn::new(100), || 0);
    p.cancel();
    // Go-back-N sends 90..=100 again: not timed.
    p.sent(Psn::new(100), || 10 * US);
    assert!(!p.covers(Psn::new(100)));
    // New PSNs are.
    p.sent(Psn::new(101), || 20 * US);
    assert!(p.covers(Psn::new(101)));
}

#[test]
fn timing_across_psn_wrap() {
    let mut p = ProbeDelay::new();
    p.sent(Psn::new(0x00ff_fffe), || 0);
    assert!(p.covers(Psn::new(1)));
    p.sample(300 * US);
    p.sent(Psn::new(2), || 400 * US);
    assert!(p.covers(Psn::new(2)));
}

#[test]
fn extreme_clocks() {
    let mut p = ProbeDelay::new();
    p.sent(Psn::new(1), || 0);
    p.sample(u64::MAX);
    assert_eq!(p.delay_us(MIN, INIT, MAX), MAX);
    // A clock going backwards counts as zero.
    let mut q = ProbeDelay::new();
    q.sent(Psn::new(1), || 5_000);
    q.sample(0);
    assert_eq!(q.min_rtt_us(), Some(0));
    assert_eq!(q.delay_us(MIN, INIT, MAX), MIN);
}

#[test]
fn rto_follows_the_typical_round_trip() {
    let mut p = ProbeDelay::new();
    assert_eq!(p.rto_us(), None);
    // The first sample: SRTT = R, RTTVAR = R/2, so SRTT + 4 RTTVAR = 3R.
    sample(&mut p, 1, 0, 2000);
    assert_eq!(p.rto_us(), Some(6000));
    // A steady path: the variation decays, and the timeout comes down to twice the
    // round trip.
    for i in 0..100u32 {
        sample(&mut p, 2 + i, u64::from(i) * 10_000, 2000);
    }
    assert_eq!(p.rto_us(), Some(4000));
    // A peer that slows down to 40 ms round trips (a loaded host): the timeout follows
    // it, while the probe delay's minimum stays at the fast samples.
    for i in 0..30u32 {
        sample(&mut p, 200 + i, 2_000_000 + u64::from(i) * 100_000, 40_000);
    }
    assert!(p.rto_us().unwrap() >= 40_000);
    assert_eq!(p.min_rtt_us(), Some(2000));
    // The transport timer takes it within four times the Local ACK Timeout (16.8 ms).
    let t = rrxe_proto::rc::transport_timer_us(12, p.rto_us(), 0);
    assert!((40_000..=4 * 16_777).contains(&t), "{t}");
}

proptest! {
    /// Whatever the sends, cancels and samples: the delay stays within its bounds.
    #[test]
    fn delay_within_bounds(ops in prop::collection::vec((0u8..3, 0u32..0x0100_0000, 0u64..5_000_000_000), 1..300)) {
        let mut p = ProbeDelay::new();
        let mut now = 0u64;
        for (op, psn, dt) in ops {
            now = now.wrapping_add(dt);
            match op {
                0 => p.sent(Psn::new(psn), || now),
                1 => p.cancel(),
                _ => {
                    if p.covers(Psn::new(psn)) {
                        p.sample(now);
                    }
                }
            }
            let d = p.delay_us(MIN, INIT, MAX);
            prop_assert!((MIN..=MAX).contains(&d));
            // The timeout is at least the smallest sample, once there is one.
            if let (Some(r), Some(m)) = (p.rto_us(), p.min_rtt_us()) {
                prop_assert!(r >= m.min(u32::MAX / 2) / 2);
            }
            let b = p.backoff_us(MIN, INIT, MAX, psn % 16);
            prop_assert!(b >= d && b <= d << rrxe_proto::sel::PROBE_BACKOFF);
        }
    }
}
