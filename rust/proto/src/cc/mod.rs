// SPDX-License-Identifier: GPL-2.0
//! Congestion control, sans I/O: the reaction-point algorithms a sending QP runs, the
//! notification-point pieces a receiving QP runs, and the pacer between them.
//!
//! * [`params`]: every knob as a `u32` with its range and default (debugfs files and
//!   module parameters in the driver), and typed accessors in bytes/s and nanoseconds.
//! * [`pacer`]: the token bucket that spaces a QP's packets at the rate an algorithm sets.
//! * [`dcqcn`]: DCQCN as mlx5 exposes it (rate cut by alpha on a CNP, fast recovery,
//!   additive and hyper increase on a timer and a byte counter), and the receiver's CNP
//!   spacing.
//! * [`share`] (source document 003, algorithm `rate`): the receiver measures each QP's
//!   receive rate, the port's total and the number of active QPs and puts them in the
//!   reserved bytes of a standard RoCEv2 CNP; the sender sets its rate directly from them.
//! * [`delay`] (source document 002, algorithm `delay`): per-destination one-way delay
//!   registers from echoed timestamps, the four-case decision, and the even initial split.
//! * [`start`]: the window that bounds a `rate` QP's unacknowledged packets until its
//!   first CNP.
//!
//! Rates are bytes per second (`u64`), times monotonic nanoseconds (`u64`). The machines
//! take events and the current time and return what they did ([`Change`]); timers are lazy
//! (applied when `tick` is called, for every period elapsed since the last call).

pub mod dcqcn;
pub mod delay;
pub mod pacer;
pub mod params;
pub mod share;
pub mod start;

/// Selectable reaction-point algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// No congestion control: QPs send at the pacer's unlimited rate.
    None = 0,
    /// DCQCN ([`dcqcn::Dcqcn`]), reacting to standard CNPs.
    Dcqcn = 1,
    /// Receiver-measured rate in the CNP ([`share::RateCc`], document 003).
    Rate = 2,
    /// Per-destination one-way delays ([`delay::DelayCc`], document 002).
    Delay = 3,
}

impl Algo {
    /// The algorithm numbered `v` (the `algo` parameter), if there is one.
    pub const fn from_u32(v: u32) -> Option<Algo> {
        Some(match v {
            0 => Algo::None,
            1 => Algo::Dcqcn,
            2 => Algo::Rate,
            3 => Algo::Delay,
            _ => return None,
        })
    }

    /// The algorithm's name: "none", "dcqcn", "rate" or "delay".
    pub const fn name(self) -> &'static str {
        match self {
            Algo::None => "none",
            Algo::Dcqcn => "dcqcn",
            Algo::Rate => "rate",
            Algo::Delay => "delay",
        }
    }
}

/// What a tick or a feedback did to a rate (for counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The rate is unchanged (also: the event was ignored).
    Same,
    /// The rate went down.
    Decreased,
    /// The rate went up.
    Increased,
}

impl Change {
    /// The change from rate `old` to rate `new`.
    pub const fn of(old: u64, new: u64) -> Change {
        if new < old {
            Change::Decreased
        } else if new > old {
            Change::Increased
        } else {
            Change::Same
        }
    }
}

/// Bytes per second in one Mbit/s.
pub const MBPS: u64 = 125_000;

/// Nanoseconds per microsecond.
pub const NS_PER_US: u64 = 1_000;

/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Most timer periods one lazy update applies one by one; beyond this the state has long
/// saturated (alpha 0, rate at the line) and the rest are skipped.
pub const MAX_PERIODS: u64 = 4096;

/// `v * num / den` without overflow (saturating at `u64::MAX`; 0 when `den` is 0).
///
/// No 128-bit division: the kernel has no `__udivti3`. Exact while `v * num` fits in 64
/// bits; beyond, `v = q * den + r` gives `q * num + r * num / den`, and the second term
/// (less than `num`) drops low bits of `r` and `den` alike until its product fits.
pub fn mul_div(v: u64, num: u64, den: u64) -> u64 {
    if den == 0 {
        return 0;
    }
    if let Some(p) = v.checked_mul(num) {
        return p / den;
    }
    let (q, mut r, mut d) = (v / den, v % den, den);
    while r.checked_mul(num).is_none() {
        r >>= 1;
        d >>= 1;
    }
    let lo = match r.checked_mul(num) {
        Some(p) if d != 0 => p / d,
        _ => 0,
    };
    q.saturating_mul(num).saturating_add(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_div_without_u128() {
        let cases = [
            (7u64, 3u64, 2u64),
            (u64::MAX, 1_000_000_000, 1_000_000_000),
            (u64::MAX / 3, 1 << 40, 1 << 41),
            (123_456_789_012, 987_654_321_098, 1_000_000_007),
            (u64::MAX, u64::MAX, u64::MAX - 1),
            (5, 0, 3),
        ];
        for (v, n, d) in cases {
            let exact = u128::from(v) * u128::from(n) / u128::from(d);
            let want = u64::try_from(exact).unwrap_or(u64::MAX);
            let got = mul_div(v, n, d);
            // Exact, or (saturated or shifted) within one part in 2^30.
            assert!(
                got == want || got.abs_diff(want) <= want >> 30,
                "{v} {n} {d}: {got} {want}"
            );
        }
        assert_eq!(mul_div(1, 2, 0), 0);
    }

    #[test]
    fn algo_numbers_and_names() {
        for v in 0..4 {
            let a = Algo::from_u32(v).unwrap();
            assert_eq!(a as u32, v);
        }
        assert_eq!(Algo::from_u32(4), None);
        assert_eq!(Algo::Dcqcn.name(), "dcqcn");
        assert_eq!(Algo::Rate.name(), "rate");
        assert_eq!(Algo::Delay.name(), "delay");
        assert_eq!(Algo::None.name(), "none");
    }

    #[test]
    fn change_and_mul_div() {
        assert_eq!(Change::of(1, 2), Change::Increased);
        assert_eq!(Change::of(2, 1), Change::Decreased);
        assert_eq!(Change::of(2, 2), Change::Same);
        assert_eq!(mul_div(u64::MAX, 3, 2), u64::MAX);
        assert_eq!(mul_div(u64::MAX, 2, 4), u64::MAX / 2);
        assert_eq!(mul_div(5, 1, 0), 0);
    }
}
