// SPDX-License-Identifier: GPL-2.0
//! DCQCN (Zhu et al., SIGCOMM 2015) as mlx5 exposes it: the reaction point of one QP and
//! the notification point's CNP spacing.
//!
//! Reaction point, with alpha and g' in 1/1024 (see [`super::params`] for the knobs):
//!
//! * CNP (ignored within `rp_rate_reduce_monitor_period` of the last cut):
//!   `rt = rc` (always with `rp_clamp_tgt_rate`, otherwise only if the rate rose since the
//!   last cut, as mlx5 does with `clamp_tgt_rate_after_time_inc`, so a burst of CNPs does
//!   not drag the recovery target down with it); `rc -= rc * alpha >> rp_gd` (the paper's
//!   `rc * (1 - alpha/2)` at the default `rp_gd` 11), keeping at least `rp_min_dec_fac`
//!   percent and `rp_min_rate`; then `alpha = g' * alpha + (1 - g')` (the paper's
//!   `alpha = (1 - g) * alpha + g` with `g = 1 - g'`). Counters and timers restart.
//!   The first CNP of a QP sets `rp_rate_to_set_on_first_cnp` instead when it is not 0.
//! * Every `rp_dce_tcp_rtt` without a CNP: `alpha = g' * alpha`.
//! * Increase events, every `rp_time_reset` (timer count T) and every `rp_byte_reset`
//!   bytes sent (byte count B): while both counts are at most F = `rp_threshold`, fast
//!   recovery; once one passes F, additive increase `rt += ai`; once both do, hyper
//!   increase `rt += i * hai` with `i = min(T, B) - F`. Every event then sets
//!   `rc = (rt + rc) / 2` (rounded up, so that it reaches `rt`). `rt` and `rc` stay within [`rp_min_rate`, `rp_max_rate`].

use super::params::Params;
use super::{mul_div, Change, MAX_PERIODS};

/// DCQCN reaction point of one QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dcqcn {
    /// Current rate, bytes/s.
    rc: u64,
    /// Target rate, bytes/s.
    rt: u64,
    /// Alpha, /1024.
    alpha: u32,
    /// Timer increase events since the last cut.
    t_cnt: u32,
    /// Byte-counter increase events since the last cut.
    b_cnt: u32,
    /// Bytes sent since the last byte-counter event.
    bytes: u64,
    /// Start of the current alpha period.
    alpha_t: u64,
    /// Start of the current increase-timer period.
    inc_t: u64,
    /// Time of the last cut.
    cut_t: u64,
    /// A cut has happened (`cut_t` is meaningful).
    cut: bool,
    /// The rate rose since the last cut.
    increased: bool,
}

impl Dcqcn {
    /// A QP starting at line rate with the initial alpha.
    pub fn new(now: u64, p: &Params) -> Dcqcn {
        let max = p.max_rate();
        Dcqcn {
            rc: max,
            rt: max,
            alpha: p.initial_alpha().min(1024),
            t_cnt: 0,
            b_cnt: 0,
            bytes: 0,
            alpha_t: now,
            inc_t: now,
            cut_t: now,
            cut: false,
            increased: false,
        }
    }

    /// Whether a CNP at `now` is ignored: within rp_rate_reduce_monitor_period of the
    /// last decrease.
    pub fn monitoring(&self, now: u64, p: &Params) -> bool {
        self.cut && now.saturating_sub(self.cut_t) < p.reduce_monitor_ns()
    }

    /// A CNP arrived: Decreased, or Same when ignored ([`Dcqcn::monitoring`]) or when the
    /// rate is already at its floor.
    pub fn on_cnp(&mut self, now: u64, p: &Params) -> Change {
        if self.monitoring(now, p) {
            return Change::Same;
        }
        let old = self.rc;
        let first = p.first_cnp_rate();
        if !self.cut && first != 0 {
            self.rt = self.rc;
            self.rc = p.clamp_rate(first);
        } else {
            if p.clamp_tgt_rate() || self.increased || !self.cut {
                self.rt = self.rc;
            }
            let cut = (u128::from(self.rc) * u128::from(self.alpha)) >> p.gd();
            let cut = u64::try_from(cut).unwrap_or(u64::MAX);
            let floor = mul_div(self.rc, p.min_dec_fac(), 100);
            self.rc = self.rc.saturating_sub(cut).max(floor);
        }
        self.rc = p.clamp_rate(self.rc);
        self.rt = p.clamp_rate(self.rt);
        let g = p.g().min(1024);
        self.alpha = (g * self.alpha + (1024 - g) * 1024) / 1024;
        self.t_cnt = 0;
        self.b_cnt = 0;
        self.bytes = 0;
        self.alpha_t = now;
        self.inc_t = now;
        self.cut_t = now;
        self.cut = true;
        self.increased = false;
        if self.rc < old {
            Change::Decreased
        } else {
            Change::Same
        }
    }

    /// One increase event (the counts already advanced).
    fn increase(&mut self, p: &Params) {
        let f = p.threshold();
        let hi = self.t_cnt.max(self.b_cnt);
        let lo = self.t_cnt.min(self.b_cnt);
        if hi > f {
            if lo > f {
                let i = u64::from(lo - f);
                self.rt = self.rt.saturating_add(i.saturating_mul(p.hai_rate()));
            } else {
                self.rt = self.rt.saturating_add(p.ai_rate());
            }
        }
        self.rt = p.clamp_rate(self.rt);
        let rc = (u128::from(self.rt) + u128::from(self.rc)).div_ceil(2);
        self.rc = p.clamp_rate(u64::try_from(rc).unwrap_or(u64::MAX));
        self.increased = true;
    }

    /// Bytes sent (the byte counter stage).
    pub fn on_sent(&mut self, now: u64, bytes: u32, p: &Params) -> Change {
        let _ = now;
        let old = self.rc;
        let reset = p.byte_reset().max(1);
        self.bytes = self.bytes.saturating_add(u64::from(bytes));
        let n = self.bytes / reset;
        self.bytes %= reset;
        for _ in 0..n.min(MAX_PERIODS) {
            self.b_cnt = self.b_cnt.saturating_add(1);
            self.increase(p);
        }
        Change::of(old, self.rc)
    }

    /// Lazy timers: alpha decay every rp_dce_tcp_rtt without CNP, rate-increase events
    /// every rp_time_reset: fast recovery (rp_threshold steps of rc=(rt+rc)/2), additive
    /// (rt += ai), hyper (rt += i*hai). Applies every period elapsed since the last call
    /// (bounded loop or closed form).
    pub fn tick(&mut self, now: u64, p: &Params) -> Change {
        let old = self.rc;
        let ap = p.alpha_period_ns().max(1);
        let n = now.saturating_sub(self.alpha_t) / ap;
        if n > 0 {
            let g = p.g().min(1024);
            for _ in 0..n.min(MAX_PERIODS) {
                if self.alpha == 0 {
                    break;
                }
                self.alpha = g * self.alpha / 1024;
            }
            self.alpha_t = self.alpha_t.saturating_add(n.saturating_mul(ap));
        }
        let tp = p.time_reset_ns().max(1);
        let n = now.saturating_sub(self.inc_t) / tp;
        if n > 0 {
            let max = p.max_rate();
            for _ in 0..n.min(MAX_PERIODS) {
                if self.rc == max && self.rt == max {
                    break;
                }
                self.t_cnt = self.t_cnt.saturating_add(1);
                self.increase(p);
            }
            self.inc_t = self.inc_t.saturating_add(n.saturating_mul(tp));
        }
        Change::of(old, self.rc)
    }

    /// Current rate, bytes/s.
    pub fn rate(&self) -> u64 {
        self.rc
    }

    /// Target rate, bytes/s (what fast recovery converges to).
    pub fn target(&self) -> u64 {
        self.rt
    }

    /// Alpha, /1024.
    pub fn alpha(&self) -> u32 {
        self.alpha
    }
}

/// Receiver side: at most one CNP per QP per np_min_time_between_cnps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CnpGate {
    last: u64,
    sent: bool,
}

impl CnpGate {
    /// A gate that lets the first CNP through.
    pub const fn new() -> CnpGate {
        CnpGate {
            last: 0,
            sent: false,
        }
    }

    /// Whether a CNP may be sent at `now` (if so, it counts as sent). A clock that went
    /// backwards opens the gate rather than closing it for long.
    pub fn allow(&mut self, now: u64, p: &Params) -> bool {
        let ok = !self.sent || now < self.last || now - self.last >= p.cnp_gap_ns();
        if ok {
            self.last = now;
            self.sent = true;
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::super::params::idx;
    use super::super::MBPS;
    use super::*;
    use proptest::prelude::*;

    const US: u64 = 1000;

    fn params() -> Params {
        Params::gbit()
    }

    #[test]
    fn first_cut_halves_and_alpha_rises() {
        let p = params();
        let mut d = Dcqcn::new(0, &p);
        assert_eq!(d.rate(), 1000 * MBPS);
        assert_eq!(d.on_cnp(10 * US, &p), Change::Decreased);
        // alpha 1023/1024 at rp_gd 11: a cut of 1023/2048.
        assert_eq!(d.rate(), 1000 * MBPS - 1000 * MBPS * 1023 / 2048);
        assert_eq!(d.target(), 1000 * MBPS);
        assert_eq!(d.alpha(), (1019 * 1023 + 5 * 1024) / 1024);
        // Inside the monitor period: ignored.
        assert_eq!(d.on_cnp(12 * US, &p), Change::Same);
        // Second cut without an increase in between keeps the target.
        assert_eq!(d.on_cnp(20 * US, &p), Change::Decreased);
        assert_eq!(d.target(), 1000 * MBPS);
    }

    #[test]
    fn min_dec_fac_bounds_a_cut() {
        let mut p = params();
        p.set(idx::RP_GD, 10);
        p.set(idx::RP_INITIAL_ALPHA_VALUE, 1024);
        let mut d = Dcqcn::new(0, &p);
        d.on_cnp(0, &p);
        assert_eq!(d.rate(), 500 * MBPS);
        p.set(idx::RP_MIN_DEC_FAC, 90);
        d.on_cnp(10 * US, &p);
        assert_eq!(d.rate(), 450 * MBPS);
    }

    #[test]
    fn recovery_stages() {
        let p = params();
        let mut d = Dcqcn::new(0, &p);
        d.on_cnp(0, &p);
        let rt = d.target();
        let mut gap = rt - d.rate();
        // Fast recovery: F events halve the gap, target fixed.
        for k in 1..=5u64 {
            assert_eq!(d.tick(k * 300 * US, &p), Change::Increased);
            assert_eq!(d.target(), rt);
            assert!(rt - d.rate() <= gap / 2 + 1);
            gap = rt - d.rate();
        }
        // Then additive: target grows by ai per event (capped at the line).
        d.on_cnp(1600 * US, &p);
        let rt = d.target();
        for k in 1..=8u64 {
            d.tick(1600 * US + k * 300 * US, &p);
        }
        assert_eq!(d.target(), rt + 3 * p.ai_rate());
    }

    #[test]
    fn alpha_decays_without_cnp_and_tick_catches_up() {
        let p = params();
        let mut d = Dcqcn::new(0, &p);
        d.on_cnp(0, &p);
        let a = d.alpha();
        d.tick(55 * US, &p);
        assert_eq!(d.alpha(), 1019 * a / 1024);
        // A year later: bounded work, alpha gone, back at line rate.
        d.tick(365 * 24 * 3600 * 1_000_000_000, &p);
        assert_eq!(d.alpha(), 0);
        assert_eq!(d.rate(), p.max_rate());
    }

    #[test]
    fn byte_counter_events() {
        let p = params();
        let mut d = Dcqcn::new(0, &p);
        d.on_cnp(0, &p);
        let r = d.rate();
        assert_eq!(d.on_sent(1, 1000, &p), Change::Same);
        assert_eq!(d.on_sent(2, u32::MAX, &p), Change::Increased);
        assert!(d.rate() > r);
    }

    #[test]
    fn first_cnp_rate() {
        let mut p = params();
        p.set(idx::RP_RATE_TO_SET_ON_FIRST_CNP, 100);
        let mut d = Dcqcn::new(0, &p);
        assert_eq!(d.on_cnp(0, &p), Change::Decreased);
        assert_eq!(d.rate(), 100 * MBPS);
        d.on_cnp(10 * US, &p);
        assert!(d.rate() < 100 * MBPS);
    }

    #[test]
    fn cnp_gate_spacing() {
        let p = Params::DEFAULT;
        let mut g = CnpGate::new();
        assert!(g.allow(0, &p));
        assert!(!g.allow(49 * US, &p));
        assert!(g.allow(50 * US, &p));
        assert!(!g.allow(60 * US, &p));
        assert!(g.allow(10 * US, &p));
    }

    proptest! {
        /// The rate stays within [min_rate, max_rate] and the target too, whatever the
        /// events, times and knobs.
        #[test]
        fn rate_in_bounds(
            vals in proptest::collection::vec(any::<u32>(), super::super::params::NPARAMS),
            ev in proptest::collection::vec((0u8..3, 0u64..2_000_000, any::<u32>()), 0..300),
        ) {
            let mut a = [0u32; super::super::params::NPARAMS];
            a.copy_from_slice(&vals);
            let p = Params::from_values(&a);
            let mut now = 0u64;
            let mut d = Dcqcn::new(now, &p);
            for (k, dt, b) in ev {
                now = now.saturating_add(dt);
                match k {
                    0 => { d.on_cnp(now, &p); }
                    1 => { d.on_sent(now, b, &p); }
                    _ => { d.tick(now, &p); }
                }
                prop_assert!(p.min_rate() <= d.rate() && d.rate() <= p.max_rate());
                prop_assert!(p.min_rate() <= d.target() && d.target() <= p.max_rate());
                prop_assert!(d.alpha() <= 1024);
            }
        }
    }
}
