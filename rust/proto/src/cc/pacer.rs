// SPDX-License-Identifier: GPL-2.0
//! A token bucket that spaces a QP's packets at the rate its congestion control sets.
//!
//! Tokens are kept in nanobytes (bytes * 10^9) so that accrual `rate * elapsed_ns` is exact
//! in integers: no rounding drift however often the bucket is asked. The bucket holds at
//! most `burst` bytes; a packet may leave whenever the balance is not negative and takes
//! it negative by its size, so a packet larger than the burst still leaves, and over any
//! window of `t` ns at most `burst + rate * t + one packet` bytes leave.

use super::NS_PER_SEC;

/// Nanobytes per byte.
const NB: i128 = NS_PER_SEC as i128;

/// Token-bucket pacer; unlimited until [`Pacer::set_rate`] gives it a rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacer {
    rate: u64,
    burst: u32,
    /// Balance in nanobytes, at most `burst * NB`.
    tokens: i128,
    /// Time the balance was last brought up to date.
    last: u64,
}

impl Pacer {
    /// An unlimited pacer with a bucket of `burst` bytes.
    pub const fn new(burst: u32) -> Pacer {
        Pacer {
            rate: 0,
            burst,
            tokens: burst as i128 * NB,
            last: 0,
        }
    }

    fn cap(&self) -> i128 {
        i128::from(self.burst) * NB
    }

    /// Brings the balance up to `now` at the current rate.
    fn refill(&mut self, now: u64) {
        if self.rate == 0 {
            self.tokens = self.cap();
        } else {
            let dt = now.saturating_sub(self.last);
            let add = i128::from(self.rate).saturating_mul(i128::from(dt));
            self.tokens = self.tokens.saturating_add(add).min(self.cap());
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
        self.tokens = self.tokens.min(self.cap());
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
            return Ok(());
        }
        // (At most one packet's worth of nanobytes: 64-bit division, which the kernel
        // has; it has no 128-bit one.)
        let debt = u64::try_from(self.tokens.unsigned_abs()).unwrap_or(u64::MAX);
        Err(debt.div_ceil(self.rate))
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

    proptest! {
        /// Over any window of t ns at most burst + rate * t + one packet leave, and a
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
            for i in 0..sent.len() {
                let mut total = 0u128;
                for j in i..sent.len() {
                    total += u128::from(sent[j].1);
                    let t = u128::from(sent[j].0 - sent[i].0);
                    let bound = u128::from(burst) + u128::from(rate) * t / 1_000_000_000
                        + u128::from(max_pkt);
                    prop_assert!(total <= bound, "{} > {} over {} ns", total, bound, t);
                }
            }
        }
    }
}
