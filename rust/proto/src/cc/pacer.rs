// SPDX-License-Identifier: GPL-2.0
//! A token bucket that spaces a QP's packets at the rate its congestion control sets.
//!
//! Tokens are kept in nanobytes (bytes * 10^9) so that accrual `rate * elapsed_ns` is exact
//! in integers: no rounding drift however often the bucket is asked. The bucket holds at
//! most `burst` bytes; a packet may leave whenever the balance is not negative and takes
//! it negative by its size, so a packet larger than the burst still leaves.
//!
//! A refused packet is told how long to wait, and the caller's timer brings it back.
//! When the timer (or the work it starts) runs late, the tokens that accrued after the
//! announced time would overflow a bucket of `burst` bytes and be lost: in a loaded guest,
//! whose timers run milliseconds late, a 4 KiB bucket delivered 79-89% of the rate it was
//! set to. So a late return may use what accrued since the announced time too, up to
//! [`LATE_BURSTS`] buckets more, until it is spent or the pacer refuses again: the pacer
//! keeps its rate when woken up to `1 + LATE_BURSTS` buckets' worth of time late, and
//! never sends more than an on-time pacer would have by then. (More room bursts more:
//! with eight buckets that guest's bottleneck overflowed.) Over any window of `t` ns at
//! most `burst * (1 + LATE_BURSTS) + rate * t + one packet` bytes leave, and from the
//! first packet on at most `burst + rate * t + one packet`.

use super::NS_PER_SEC;

/// Nanobytes per byte.
const NB: i128 = NS_PER_SEC as i128;

/// How many buckets beyond its own a late return may use (see the module doc).
pub const LATE_BURSTS: u32 = 1;

/// Token-bucket pacer; unlimited until [`Pacer::set_rate`] gives it a rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacer {
    rate: u64,
    burst: u32,
    /// Balance in nanobytes, at most `burst * NB + extra`.
    tokens: i128,
    /// Time the balance was last brought up to date.
    last: u64,
    /// When a refused packet was told it may leave (0: none is waiting).
    due: u64,
    /// Nanobytes the balance may hold beyond the bucket: what accrued after `due` when
    /// the return came late, not yet spent.
    extra: i128,
}

impl Pacer {
    /// An unlimited pacer with a bucket of `burst` bytes.
    pub const fn new(burst: u32) -> Pacer {
        Pacer {
            rate: 0,
            burst,
            tokens: burst as i128 * NB,
            last: 0,
            due: 0,
            extra: 0,
        }
    }

    fn cap(&self) -> i128 {
        i128::from(self.burst) * NB
    }

    /// Brings the balance up to `now` at the current rate. A return after `due` may keep
    /// what accrued since `due` beyond the bucket (at most [`LATE_BURSTS`] buckets).
    fn refill(&mut self, now: u64) {
        if self.rate == 0 {
            self.tokens = self.cap();
            self.extra = 0;
            self.due = 0;
        } else {
            let dt = now.saturating_sub(self.last);
            let add = i128::from(self.rate).saturating_mul(i128::from(dt));
            let most = self.cap().saturating_mul(i128::from(LATE_BURSTS));
            if self.due != 0 && now >= self.due {
                let late = i128::from(now - self.due);
                self.extra = i128::from(self.rate).saturating_mul(late).min(most);
                self.due = 0;
            } else if self.due == 0 && add >= self.cap().saturating_add(most) {
                // Idle long enough to fill any bucket: nothing is owed any more.
                self.extra = 0;
            }
            let limit = self.cap().saturating_add(self.extra);
            self.tokens = self.tokens.saturating_add(add).min(limit);
        }
        if now > self.last {
            self.last = now;
        }
    }

    /// Sets the rate in bytes/s from `now` on (0: unlimited). Tokens accrued so far at
    /// the old rate are kept.
    pub fn set_rate(&mut self, now: u64, rate: u64) {
        self.refill(now);
        self.rate = rate;
    }

    /// The rate in bytes/s (0: unlimited).
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// Sets the bucket depth in bytes (a fuller balance is trimmed to it).
    pub fn set_burst(&mut self, burst: u32) {
        self.burst = burst;
        self.tokens = self.tokens.min(self.cap().saturating_add(self.extra));
    }

    /// Ok(()): may send `bytes` now (consumed). Err(wait_ns): the earliest it may, from now.
    /// Tokens accrue at `rate` up to `burst`; a packet may leave when tokens >= 0 and
    /// takes them negative (so a packet larger than the burst still leaves).
    pub fn take(&mut self, now: u64, bytes: u32) -> Result<(), u64> {
        self.refill(now);
        if self.rate == 0 {
            return Ok(());
        }
        if self.tokens >= 0 {
            self.tokens -= i128::from(bytes) * NB;
            // What is spent of the late tokens is no longer owed.
            self.extra = self.extra.min((self.tokens - self.cap()).max(0));
            return Ok(());
        }
        // (At most one packet's worth of nanobytes: 64-bit division, which the kernel
        // has; it has no 128-bit one.)
        let debt = u64::try_from(self.tokens.unsigned_abs()).unwrap_or(u64::MAX);
        let wait = debt.div_ceil(self.rate);
        self.extra = 0;
        self.due = now.saturating_add(wait).max(1);
        Err(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn unlimited_until_rated() {
        let mut p = Pacer::new(4096);
        for i in 0..100 {
            assert_eq!(p.take(i, 65536), Ok(()));
        }
        p.set_rate(100, 1_000_000); // 1 byte per us
        assert_eq!(p.rate(), 1_000_000);
        assert_eq!(p.take(100, 4096), Ok(()));
        // Balance 0: one more packet leaves and takes it to -1000 bytes.
        assert_eq!(p.take(100, 1000), Ok(()));
        assert_eq!(p.take(100, 1000), Err(1_000_000));
        assert_eq!(p.take(600_100, 1000), Err(400_000));
        assert_eq!(p.take(1_000_100, 1000), Ok(()));
        p.set_rate(1_000_100, 0);
        assert_eq!(p.take(1_000_100, 100_000), Ok(()));
    }

    #[test]
    fn big_packet_leaves_and_burst_trims() {
        let mut p = Pacer::new(1024);
        p.set_rate(0, 1_000_000_000);
        assert_eq!(p.take(0, 9000), Ok(()));
        assert_eq!(p.take(0, 1), Err(7_976));
        // Back on time: the zero balance lets a packet go.
        assert_eq!(p.take(7_976, 1), Ok(()));
        p.set_burst(100);
        assert_eq!(p.take(1_000_000, 1), Ok(()));
        assert_eq!(p.take(1_000_000, 100), Ok(()));
        assert_eq!(p.take(1_000_000, 1), Err(1));
    }

    #[test]
    fn extremes_do_not_overflow() {
        let mut p = Pacer::new(u32::MAX);
        p.set_rate(0, u64::MAX);
        assert_eq!(p.take(u64::MAX, u32::MAX), Ok(()));
        assert_eq!(p.take(u64::MAX, u32::MAX), Ok(()));
        p.set_rate(u64::MAX, 1);
        assert!(p.take(u64::MAX, 1).is_err());
        // Time going backwards accrues nothing.
        assert!(p.take(0, 1).is_err());
    }

    /// Sends whatever the pacer allows each time it is woken, `late_ns` after the time
    /// it announced, for one second; returns the bytes sent.
    fn woken_late(burst: u32, rate: u64, late_ns: u64) -> u64 {
        let mut p = Pacer::new(burst);
        p.set_rate(0, rate);
        let (mut now, mut sent) = (0u64, 0u64);
        while now < 1_000_000_000 {
            match p.take(now, 1024) {
                Ok(()) => sent += 1024,
                Err(w) => now += w + late_ns,
            }
        }
        sent
    }

    /// A timer that fires 2 ms late (a loaded guest's) at 25 Mbit/s, where 4 KiB is 1.3
    /// ms of tokens: the pacer still delivers its rate; an on-time one too.
    #[test]
    fn late_wakeups_keep_the_rate() {
        let rate = 3_125_000;
        for late in [0, 100_000, 2_000_000] {
            let sent = woken_late(4096, rate, late);
            assert!(sent >= rate * 99 / 100, "{sent} at {late} ns late");
            assert!(sent <= rate + 4096 + 1024, "{sent} at {late} ns late");
        }
        // Beyond LATE_BURSTS buckets of lateness the excess is lost, as before.
        let far = woken_late(4096, rate, 100_000_000);
        assert!(far < rate / 2, "{far}");
        // The default 1 KiB bucket holds 0.33 ms of tokens there: it keeps the rate
        // 0.5 ms late, not 1 ms late.
        for late in [0, 100_000, 500_000] {
            let sent = woken_late(1024, rate, late);
            assert!(sent >= rate * 99 / 100, "{sent} at {late} ns late, 1 KiB");
            assert!(
                sent <= rate + 1024 + 1024,
                "{sent} at {late} ns late, 1 KiB"
            );
        }
        assert!(woken_late(1024, rate, 1_000_000) < rate * 9 / 10);
    }

    /// A late return may send what accrued since the announced time, up to a bucket
    /// more; tokens owed for it are not kept for a later burst once the QP idled.
    #[test]
    fn late_return_and_idle() {
        let mut p = Pacer::new(2000);
        p.set_rate(0, 1_000_000); // 1 byte per us
        for _ in 0..3 {
            assert_eq!(p.take(0, 1000), Ok(()));
        }
        assert_eq!(p.take(0, 1000), Err(1_000_000));
        // Woken 3 ms late: the 3000 bytes that accrued since then may go (a bucket of
        // 2000 would hold two packets and the zero balance let a third go).
        for _ in 0..4 {
            assert_eq!(p.take(4_000_000, 1000), Ok(()));
        }
        assert_eq!(p.take(4_000_000, 1000), Err(1_000_000));
        // Woken 5 ms late: 5000 bytes accrued, the bucket and one more may hold 4000;
        // one packet sent, then an hour idle: the bucket's 2000 bytes are there, the
        // 1000 still owed are not.
        assert_eq!(p.take(10_000_000, 1000), Ok(()));
        let t = 3_600_000_000_000;
        for _ in 0..3 {
            assert_eq!(p.take(t, 1000), Ok(()));
        }
        assert_eq!(p.take(t, 1), Err(1_000_000));
    }

    proptest! {
        /// Over any window of t ns at most burst * (1 + LATE_BURSTS) + rate * t + one
        /// packet leave, and from the start at most burst + rate * t + one packet; a
        /// refused packet leaves once the announced wait has passed.
        #[test]
        fn never_more_than_burst_plus_rate(
            rate in 1u64..2_000_000_000,
            burst in 256u32..65536,
            steps in proptest::collection::vec((0u64..50_000, 1u32..9000), 1..200),
        ) {
            let mut p = Pacer::new(burst);
            p.set_rate(0, rate);
            let mut now = 0u64;
            let mut sent: Vec<(u64, u32)> = Vec::new();
            let mut max_pkt = 0u32;
            for (dt, size) in steps {
                now += dt;
                max_pkt = max_pkt.max(size);
                match p.take(now, size) {
                    Ok(()) => sent.push((now, size)),
                    Err(w) => {
                        prop_assert!(w > 0);
                        let mut q = p;
                        prop_assert_eq!(q.take(now + w, size), Ok(()));
                        if w > 1 {
                            let mut q = p;
                            prop_assert!(q.take(now + w - 1, size).is_err());
                        }
                    }
                }
            }
            let window = u128::from(burst) * u128::from(1 + LATE_BURSTS);
            for i in 0..sent.len() {
                let mut total = 0u128;
                for j in i..sent.len() {
                    total += u128::from(sent[j].1);
                    let t = u128::from(sent[j].0 - sent[i].0);
                    let per_ns = u128::from(rate) * t / 1_000_000_000;
                    let bound = window + per_ns + u128::from(max_pkt);
                    prop_assert!(total <= bound, "{} > {} over {} ns", total, bound, t);
                    if i == 0 {
                        let t0 = u128::from(sent[j].0);
                        let from0 = u128::from(burst)
                            + u128::from(rate) * t0 / 1_000_000_000
                            + u128::from(max_pkt);
                        prop_assert!(total <= from0, "{} > {} from the start", total, from0);
                    }
                }
            }
        }
    }
}
