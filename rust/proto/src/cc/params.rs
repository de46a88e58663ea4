// SPDX-License-Identifier: GPL-2.0
//! Every congestion-control knob as a `u32` in a fixed table ([`PARAMS`], index constants
//! in [`idx`]): the driver exposes each as one debugfs file and as a module-parameter
//! default. [`Params`] holds one value per entry, always inside the entry's range, and
//! converts to the units the algorithms use (bytes/s, nanoseconds, fractions of 1024).
//!
//! Names follow mlx5's DCQCN knobs where one exists (`rp_*` reaction point, `np_*`
//! notification point); defaults are DCQCN's, with these choices:
//!
//! * `rp_byte_reset` is 32767 * 64 = 2097088 bytes: mlx5's default count read in 64-byte
//!   units. At the rates rrxe reaches the timer, not the byte counter, drives increases,
//!   so hyper increase (which needs both counters past `rp_threshold`) is rare.
//! * `rp_threshold` is the DCQCN paper's F = 5 (mlx5 uses 1): five fast-recovery events
//!   before additive increase.
//! * `rp_dce_tcp_g` is mlx5's 1019/1024 read as the weight of the *old* alpha, i.e. the
//!   paper's g = (1024 - 1019) / 1024 = 5/1024: on a CNP
//!   `alpha = g' * alpha + (1 - g')`, and per quiet alpha period `alpha = g' * alpha`.
//! * `rp_gd` is mlx5's shift: a cut takes `rc * alpha / 2^rp_gd` with alpha in 1/1024, so
//!   the default 11 is the paper's `rc * alpha / 2`.
//! * `rp_dce_tcp_rtt` (alpha period) is 55 us, `np_min_time_between_cnps` 50 us: both
//!   well inside what a software timer does, and a CNP per QP per 50 us still reacts
//!   within one round trip of a slow VM (0.2-2 ms).

use super::{Algo, MBPS, NS_PER_US};

/// One knob: name (the debugfs file), default, inclusive range, and units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// File and module-parameter name.
    pub name: &'static str,
    /// Default value.
    pub default: u32,
    /// Smallest accepted value.
    pub min: u32,
    /// Largest accepted value.
    pub max: u32,
    /// Meaning and units.
    pub doc: &'static str,
}

const fn p(name: &'static str, default: u32, min: u32, max: u32, doc: &'static str) -> ParamInfo {
    ParamInfo {
        name,
        default,
        min,
        max,
        doc,
    }
}

/// Index constants into [`PARAMS`] and [`Params::get`], one per entry.
pub mod idx {
    /// `algo`.
    pub const ALGO: usize = 0;
    /// `rp_ai_rate`.
    pub const RP_AI_RATE: usize = 1;
    /// `rp_hai_rate`.
    pub const RP_HAI_RATE: usize = 2;
    /// `rp_time_reset`.
    pub const RP_TIME_RESET: usize = 3;
    /// `rp_byte_reset`.
    pub const RP_BYTE_RESET: usize = 4;
    /// `rp_threshold`.
    pub const RP_THRESHOLD: usize = 5;
    /// `rp_min_rate`.
    pub const RP_MIN_RATE: usize = 6;
    /// `rp_max_rate`.
    pub const RP_MAX_RATE: usize = 7;
    /// `rp_min_dec_fac`.
    pub const RP_MIN_DEC_FAC: usize = 8;
    /// `rp_dce_tcp_g`.
    pub const RP_DCE_TCP_G: usize = 9;
    /// `rp_dce_tcp_rtt`.
    pub const RP_DCE_TCP_RTT: usize = 10;
    /// `rp_initial_alpha_value`.
    pub const RP_INITIAL_ALPHA_VALUE: usize = 11;
    /// `rp_rate_to_set_on_first_cnp`.
    pub const RP_RATE_TO_SET_ON_FIRST_CNP: usize = 12;
    /// `rp_rate_reduce_monitor_period`.
    pub const RP_RATE_REDUCE_MONITOR_PERIOD: usize = 13;
    /// `rp_gd`.
    pub const RP_GD: usize = 14;
    /// `rp_clamp_tgt_rate`.
    pub const RP_CLAMP_TGT_RATE: usize = 15;
    /// `np_min_time_between_cnps`.
    pub const NP_MIN_TIME_BETWEEN_CNPS: usize = 16;
    /// `np_meter_us`.
    pub const NP_METER_US: usize = 17;
    /// `np_idle_us`.
    pub const NP_IDLE_US: usize = 18;
    /// `rate_margin`.
    pub const RATE_MARGIN: usize = 19;
    /// `delay_target_us`.
    pub const DELAY_TARGET_US: usize = 20;
    /// `delay_big_dec`.
    pub const DELAY_BIG_DEC: usize = 21;
    /// `delay_small_dec`.
    pub const DELAY_SMALL_DEC: usize = 22;
    /// `delay_inc`.
    pub const DELAY_INC: usize = 23;
    /// `pacer_burst`.
    pub const PACER_BURST: usize = 24;
    /// `delay_min_window_ms` (beyond the spec's list).
    pub const DELAY_MIN_WINDOW_MS: usize = 25;
    /// `rate_time_reset` (beyond the spec's list).
    pub const RATE_TIME_RESET: usize = 26;
    /// `delay_slow_start` (beyond the spec's list).
    pub const DELAY_SLOW_START: usize = 27;
    /// `delay_ack_pkts` (beyond the spec's list).
    pub const DELAY_ACK_PKTS: usize = 28;
    /// `rate_init_win` (beyond the spec's list).
    pub const RATE_INIT_WIN: usize = 29;
}

/// Largest rate knob in Mb/s (400 Gb/s).
const MAX_MBPS: u32 = 400_000;
/// The line rate `rp_max_rate = 0` stands for, Mb/s.
pub const DEFAULT_LINE_MBPS: u32 = 10_000;

const TABLE: [ParamInfo; 30] = [
    p(
        "algo",
        2,
        0,
        3,
        "reaction point: 0 none, 1 dcqcn, 2 rate, 3 delay",
    ),
    p("rp_ai_rate", 5, 1, MAX_MBPS, "additive increase step, Mb/s"),
    p("rp_hai_rate", 50, 1, MAX_MBPS, "hyper increase step, Mb/s"),
    p(
        "rp_time_reset",
        300,
        1,
        1_000_000,
        "rate-increase timer period, us",
    ),
    p(
        "rp_byte_reset",
        2_097_088,
        1024,
        0x7fff_ffff,
        "rate-increase byte counter, bytes",
    ),
    p(
        "rp_threshold",
        5,
        1,
        31,
        "fast-recovery events before additive increase (F)",
    ),
    p("rp_min_rate", 1, 1, MAX_MBPS, "lowest rate, Mb/s"),
    p(
        "rp_max_rate",
        0,
        0,
        MAX_MBPS,
        "highest (line) rate, Mb/s; 0 = 10000",
    ),
    p(
        "rp_min_dec_fac",
        50,
        1,
        100,
        "a single cut keeps at least this percent of the rate",
    ),
    p(
        "rp_dce_tcp_g",
        1019,
        0,
        1024,
        "alpha gain g' (weight of the old alpha), /1024",
    ),
    p(
        "rp_dce_tcp_rtt",
        55,
        1,
        1_000_000,
        "alpha decay period without CNP, us",
    ),
    p(
        "rp_initial_alpha_value",
        1023,
        0,
        1024,
        "alpha of a new QP, /1024",
    ),
    p(
        "rp_rate_to_set_on_first_cnp",
        0,
        0,
        MAX_MBPS,
        "rate on the first CNP, Mb/s; 0 = cut as usual",
    ),
    p(
        "rp_rate_reduce_monitor_period",
        4,
        0,
        1_000_000,
        "CNPs this soon after a cut are ignored, us",
    ),
    p(
        "rp_gd",
        11,
        10,
        20,
        "a cut is rc * alpha / 2^rp_gd (alpha /1024)",
    ),
    p(
        "rp_clamp_tgt_rate",
        0,
        0,
        1,
        "1: every CNP sets the target to the current rate",
    ),
    p(
        "np_min_time_between_cnps",
        50,
        0,
        1_000_000,
        "receiver: CNPs per QP at most this often, us",
    ),
    p(
        "np_meter_us",
        1000,
        16,
        1_000_000,
        "receiver rate meter interval, us",
    ),
    p(
        "np_idle_us",
        10_000,
        100,
        10_000_000,
        "receiver: a QP silent this long is not active, us",
    ),
    p(
        "rate_margin",
        51,
        0,
        512,
        "rate: set this far below the measured share, /1024",
    ),
    p(
        "delay_target_us",
        50,
        1,
        100_000,
        "delay: queueing delay counted as baseline, us",
    ),
    p(
        "delay_big_dec",
        256,
        1,
        1023,
        "delay: cut when congestion worsens fast, /1024",
    ),
    p(
        "delay_small_dec",
        64,
        1,
        1023,
        "delay: cut when congestion worsens slowly, /1024",
    ),
    p(
        "delay_inc",
        10,
        1,
        MAX_MBPS,
        "delay: largest additive increase per decision, Mb/s",
    ),
    p(
        "pacer_burst",
        1024,
        256,
        16_777_216,
        "pacer bucket depth, bytes",
    ),
    p(
        "delay_min_window_ms",
        1000,
        1,
        600_000,
        "delay: minimum delays are re-learned per window, ms",
    ),
    p(
        "rate_time_reset",
        300,
        1,
        1_000_000,
        "rate: recovery period without CNP, us",
    ),
    p(
        "delay_slow_start",
        1024,
        1,
        1_000_000,
        "delay: a new destination starts at its split / this",
    ),
    p(
        "delay_ack_pkts",
        8,
        1,
        64,
        "delay: an ACK (an echo) every this many packets",
    ),
    p(
        "rate_init_win",
        16,
        1,
        128,
        "rate: packets unacknowledged before the first CNP, +1 per ACKed (128: off)",
    ),
];

/// The knobs, in index order (see [`idx`]).
pub const PARAMS: &[ParamInfo] = &TABLE;
/// Number of knobs.
pub const NPARAMS: usize = TABLE.len();

/// One value per knob, each within its entry's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    v: [u32; NPARAMS],
}

const fn clamp(v: u32, i: &ParamInfo) -> u32 {
    if v < i.min {
        i.min
    } else if v > i.max {
        i.max
    } else {
        v
    }
}

impl Default for Params {
    fn default() -> Self {
        Params::DEFAULT
    }
}

impl Params {
    /// Every knob at its default.
    // Evaluated at compile time: an out-of-range index would fail the build, not panic.
    #[allow(clippy::indexing_slicing)]
    pub const DEFAULT: Params = {
        let mut v = [0u32; NPARAMS];
        let mut i = 0;
        while i < NPARAMS {
            v[i] = TABLE[i].default;
            i += 1;
        }
        Params { v }
    };

    /// The defaults with a 1 Gbit/s line rate (the unit tests' setting).
    #[cfg(test)]
    pub(crate) fn gbit() -> Params {
        let mut p = Params::DEFAULT;
        p.set(idx::RP_MAX_RATE, 1000);
        p
    }

    /// Params from raw values; out-of-range values are clamped to [min, max].
    pub fn from_values(v: &[u32; NPARAMS]) -> Params {
        let mut out = Params::DEFAULT;
        for ((o, &x), info) in out.v.iter_mut().zip(v.iter()).zip(TABLE.iter()) {
            *o = clamp(x, info);
        }
        out
    }

    /// The value of knob `i` (0 for a bad index).
    pub fn get(&self, i: usize) -> u32 {
        self.v.get(i).copied().unwrap_or(0)
    }

    /// Sets knob `i` to `val` clamped to its range; `false` for a bad index.
    pub fn set(&mut self, i: usize, val: u32) -> bool {
        match (self.v.get_mut(i), TABLE.get(i)) {
            (Some(o), Some(info)) => {
                *o = clamp(val, info);
                true
            }
            _ => false,
        }
    }

    /// The raw values (for copying into module-parameter storage).
    pub fn values(&self) -> [u32; NPARAMS] {
        self.v
    }

    fn mbps(&self, i: usize) -> u64 {
        u64::from(self.get(i)) * MBPS
    }

    fn us(&self, i: usize) -> u64 {
        u64::from(self.get(i)) * NS_PER_US
    }

    /// The selected algorithm.
    pub fn algo(&self) -> Algo {
        Algo::from_u32(self.get(idx::ALGO)).unwrap_or(Algo::None)
    }

    /// Additive increase step, bytes/s.
    pub fn ai_rate(&self) -> u64 {
        self.mbps(idx::RP_AI_RATE)
    }

    /// Hyper increase step, bytes/s.
    pub fn hai_rate(&self) -> u64 {
        self.mbps(idx::RP_HAI_RATE)
    }

    /// Lowest rate, bytes/s (never above [`Params::max_rate`]).
    pub fn min_rate(&self) -> u64 {
        let max = self.max_rate();
        self.mbps(idx::RP_MIN_RATE).min(max)
    }

    /// Line rate, bytes/s (`rp_max_rate`, 0 meaning [`DEFAULT_LINE_MBPS`]).
    pub fn max_rate(&self) -> u64 {
        match self.get(idx::RP_MAX_RATE) {
            0 => u64::from(DEFAULT_LINE_MBPS) * MBPS,
            m => u64::from(m) * MBPS,
        }
    }

    /// `r` limited to [`Params::min_rate`, `Params::max_rate`].
    pub fn clamp_rate(&self, r: u64) -> u64 {
        r.clamp(self.min_rate(), self.max_rate())
    }

    /// Rate-increase timer period, ns.
    pub fn time_reset_ns(&self) -> u64 {
        self.us(idx::RP_TIME_RESET)
    }

    /// Rate-increase byte counter, bytes.
    pub fn byte_reset(&self) -> u64 {
        u64::from(self.get(idx::RP_BYTE_RESET))
    }

    /// Fast-recovery events before additive increase (DCQCN's F).
    pub fn threshold(&self) -> u32 {
        self.get(idx::RP_THRESHOLD)
    }

    /// Percent of the rate a single cut keeps at least.
    pub fn min_dec_fac(&self) -> u64 {
        u64::from(self.get(idx::RP_MIN_DEC_FAC))
    }

    /// Alpha gain g' (weight of the old alpha), /1024.
    pub fn g(&self) -> u32 {
        self.get(idx::RP_DCE_TCP_G)
    }

    /// Alpha decay period, ns.
    pub fn alpha_period_ns(&self) -> u64 {
        self.us(idx::RP_DCE_TCP_RTT)
    }

    /// Initial alpha, /1024.
    pub fn initial_alpha(&self) -> u32 {
        self.get(idx::RP_INITIAL_ALPHA_VALUE)
    }

    /// Rate set on the first CNP, bytes/s (0: cut as usual).
    pub fn first_cnp_rate(&self) -> u64 {
        self.mbps(idx::RP_RATE_TO_SET_ON_FIRST_CNP)
    }

    /// CNPs this soon after a cut are ignored, ns.
    pub fn reduce_monitor_ns(&self) -> u64 {
        self.us(idx::RP_RATE_REDUCE_MONITOR_PERIOD)
    }

    /// Cut shift: a cut is `rc * alpha >> gd` with alpha in 1/1024.
    pub fn gd(&self) -> u32 {
        self.get(idx::RP_GD)
    }

    /// Every CNP sets the target rate to the current rate.
    pub fn clamp_tgt_rate(&self) -> bool {
        self.get(idx::RP_CLAMP_TGT_RATE) != 0
    }

    /// Receiver: least time between two CNPs of one QP, ns.
    pub fn cnp_gap_ns(&self) -> u64 {
        self.us(idx::NP_MIN_TIME_BETWEEN_CNPS)
    }

    /// Receiver rate meter interval, ns.
    pub fn meter_ns(&self) -> u64 {
        self.us(idx::NP_METER_US)
    }

    /// Receiver rate meter interval, us.
    pub fn meter_us(&self) -> u32 {
        self.get(idx::NP_METER_US)
    }

    /// Receiver: a QP without packets this long is not active, ns.
    pub fn idle_ns(&self) -> u64 {
        self.us(idx::NP_IDLE_US)
    }

    /// `rate`: margin below the measured share, /1024.
    pub fn rate_margin(&self) -> u64 {
        u64::from(self.get(idx::RATE_MARGIN))
    }

    /// `rate`: recovery period without CNP, ns.
    pub fn rate_time_reset_ns(&self) -> u64 {
        self.us(idx::RATE_TIME_RESET)
    }

    /// `delay`: queueing delay counted as baseline, us.
    pub fn delay_target_us(&self) -> u32 {
        self.get(idx::DELAY_TARGET_US)
    }

    /// `delay`: big cut, /1024.
    pub fn delay_big_dec(&self) -> u64 {
        u64::from(self.get(idx::DELAY_BIG_DEC))
    }

    /// `delay`: small cut, /1024.
    pub fn delay_small_dec(&self) -> u64 {
        u64::from(self.get(idx::DELAY_SMALL_DEC))
    }

    /// `delay`: largest additive increase per decision, bytes/s.
    pub fn delay_inc(&self) -> u64 {
        self.mbps(idx::DELAY_INC)
    }

    /// `delay`: window over which minimum delays are re-learned, ns.
    pub fn delay_min_window_ns(&self) -> u64 {
        u64::from(self.get(idx::DELAY_MIN_WINDOW_MS)) * 1_000_000
    }

    /// `delay`: a new destination's rate is its split divided by this (1: no slow start).
    pub fn delay_slow_start(&self) -> u64 {
        u64::from(self.get(idx::DELAY_SLOW_START))
    }

    /// `delay`: the requester asks for an ACK at least every this many packets.
    pub fn delay_ack_pkts(&self) -> u32 {
        self.get(idx::DELAY_ACK_PKTS)
    }

    /// `rate`: packets a QP may have unacknowledged before its first CNP (see
    /// [`super::start`]).
    pub fn rate_init_win(&self) -> u32 {
        self.get(idx::RATE_INIT_WIN)
    }

    /// Pacer bucket depth, bytes.
    pub fn pacer_burst(&self) -> u32 {
        self.get(idx::PACER_BURST)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn table_is_consistent() {
        assert_eq!(PARAMS.len(), NPARAMS);
        for (i, e) in PARAMS.iter().enumerate() {
            assert!(e.min <= e.default && e.default <= e.max, "{}", e.name);
            assert!(!e.doc.is_empty());
            assert_eq!(Params::DEFAULT.get(i), e.default);
            for f in &PARAMS[i + 1..] {
                assert_ne!(e.name, f.name);
            }
        }
        let names = [
            (idx::ALGO, "algo"),
            (idx::RP_AI_RATE, "rp_ai_rate"),
            (idx::RP_HAI_RATE, "rp_hai_rate"),
            (idx::RP_TIME_RESET, "rp_time_reset"),
            (idx::RP_BYTE_RESET, "rp_byte_reset"),
            (idx::RP_THRESHOLD, "rp_threshold"),
            (idx::RP_MIN_RATE, "rp_min_rate"),
            (idx::RP_MAX_RATE, "rp_max_rate"),
            (idx::RP_MIN_DEC_FAC, "rp_min_dec_fac"),
            (idx::RP_DCE_TCP_G, "rp_dce_tcp_g"),
            (idx::RP_DCE_TCP_RTT, "rp_dce_tcp_rtt"),
            (idx::RP_INITIAL_ALPHA_VALUE, "rp_initial_alpha_value"),
            (
                idx::RP_RATE_TO_SET_ON_FIRST_CNP,
                "rp_rate_to_set_on_first_cnp",
            ),
            (
                idx::RP_RATE_REDUCE_MONITOR_PERIOD,
                "rp_rate_reduce_monitor_period",
            ),
            (idx::RP_GD, "rp_gd"),
            (idx::RP_CLAMP_TGT_RATE, "rp_clamp_tgt_rate"),
            (idx::NP_MIN_TIME_BETWEEN_CNPS, "np_min_time_between_cnps"),
            (idx::NP_METER_US, "np_meter_us"),
            (idx::NP_IDLE_US, "np_idle_us"),
            (idx::RATE_MARGIN, "rate_margin"),
            (idx::DELAY_TARGET_US, "delay_target_us"),
            (idx::DELAY_BIG_DEC, "delay_big_dec"),
            (idx::DELAY_SMALL_DEC, "delay_small_dec"),
            (idx::DELAY_INC, "delay_inc"),
            (idx::PACER_BURST, "pacer_burst"),
            (idx::DELAY_MIN_WINDOW_MS, "delay_min_window_ms"),
            (idx::RATE_TIME_RESET, "rate_time_reset"),
            (idx::DELAY_SLOW_START, "delay_slow_start"),
            (idx::DELAY_ACK_PKTS, "delay_ack_pkts"),
            (idx::RATE_INIT_WIN, "rate_init_win"),
        ];
        assert_eq!(names.len(), NPARAMS);
        for (i, n) in names {
            assert_eq!(PARAMS[i].name, n);
        }
    }

    #[test]
    fn defaults_in_units() {
        let p = Params::DEFAULT;
        assert_eq!(p.algo(), Algo::Rate);
        assert_eq!(p.ai_rate(), 5 * MBPS);
        assert_eq!(p.hai_rate(), 50 * MBPS);
        assert_eq!(p.max_rate(), 10_000 * MBPS);
        assert_eq!(p.min_rate(), MBPS);
        assert_eq!(p.time_reset_ns(), 300_000);
        assert_eq!(p.alpha_period_ns(), 55_000);
        assert_eq!(p.get(NPARAMS), 0);
        let mut q = p;
        assert!(!q.set(NPARAMS, 1));
        assert!(q.set(idx::RP_MAX_RATE, 100));
        assert_eq!(q.max_rate(), 100 * MBPS);
        assert!(q.set(idx::RP_MIN_RATE, 200));
        assert_eq!(q.min_rate(), q.max_rate());
    }

    proptest! {
        #[test]
        fn from_values_clamps(v in proptest::collection::vec(any::<u32>(), NPARAMS)) {
            let mut a = [0u32; NPARAMS];
            a.copy_from_slice(&v);
            let p = Params::from_values(&a);
            for (i, e) in PARAMS.iter().enumerate() {
                let x = p.get(i);
                prop_assert!(e.min <= x && x <= e.max);
                if e.min <= a[i] && a[i] <= e.max {
                    prop_assert_eq!(x, a[i]);
                }
            }
            prop_assert!(p.min_rate() <= p.max_rate());
            prop_assert_eq!(Params::from_values(&p.values()), p);
        }
    }
}
