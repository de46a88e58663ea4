// SPDX-License-Identifier: GPL-2.0
//! Receiver-measured rates in the CNP (source document 003, algorithm `rate`).
//!
//! The receiver (notification point) meters each QP's receive rate and the port's total
//! over `np_meter_us` intervals ([`Meter`]) and counts the QPs that received a packet in
//! the last `np_idle_us` ([`Port`]). When it sends a CNP it fills the 16 reserved bytes
//! of the standard RoCEv2 CNP (after the BTH) with [`CnpInfo`]; a standard NIC sends them
//! zeroed and ignores them, so the CNP stays a valid DCQCN CNP either way. The sender
//! ([`RateCc`]) sets the QP's rate directly from the measurement instead of cutting by a
//! fixed factor: one CNP brings every flow of a congested port to its share.
//!
//! Layout of the 16 bytes, big endian:
//!
//! ```text
//!  0               1               2               3
//!  0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//! +-------------------------------+---------------+---------------+
//! |      magic 0x7272 ('rr')      |  version (1)  |  reserved (0) |  0
//! +-------------------------------+---------------+---------------+
//! |              qp_rate, KB/s (1000 B/s), saturating             |  4
//! +---------------------------------------------------------------+
//! |             port_rate, KB/s (1000 B/s), saturating            |  8
//! +-------------------------------+-------------------------------+
//! |          active_qps           |  interval, 16-us units, sat.  | 12
//! +-------------------------------+-------------------------------+
//! ```
//!
//! `port_rate` and `active_qps` leave out the port's light QPs (see [`Port`]).

use super::super::wire::{be16, be32, be8, put};
use super::params::Params;
use super::{mul_div, Change, MAX_PERIODS, NS_PER_SEC, NS_PER_US};

/// Length of the CNP payload rrxe fills.
pub const CNP_INFO_LEN: usize = 16;
/// Magic in bytes 0-1 ('rr').
pub const CNP_MAGIC: u16 = 0x7272;
/// Version in byte 2.
pub const CNP_VERSION: u8 = 1;

/// What an rrxe receiver puts in a CNP's 16 reserved bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CnpInfo {
    /// The QP's receive rate over the last interval, bytes/s (sent in KB/s).
    pub qp_rate: u64,
    /// The receiving port's total rate over the last interval less its light QPs',
    /// bytes/s (sent in KB/s).
    pub port_rate: u64,
    /// QPs that received a packet within `np_idle_us`, less the light ones.
    pub active_qps: u16,
    /// The meter interval, us (sent in 16-us units).
    pub interval_us: u32,
}

impl CnpInfo {
    /// None for an all-zero payload (a standard NIC's CNP), an unknown magic/version, or
    /// a short buffer.
    pub fn decode(b: &[u8]) -> Option<CnpInfo> {
        if be16(b, 0)? != CNP_MAGIC || be8(b, 2)? != CNP_VERSION {
            return None;
        }
        Some(CnpInfo {
            qp_rate: u64::from(be32(b, 4)?) * 1000,
            port_rate: u64::from(be32(b, 8)?) * 1000,
            active_qps: be16(b, 12)?,
            interval_us: u32::from(be16(b, 14)?) * 16,
        })
    }

    /// Encodes into `b[..16]`; false if b.len() < 16. Rates are rounded down to KB/s and
    /// the interval to 16 us, each saturating at its field's maximum.
    pub fn encode(&self, b: &mut [u8]) -> bool {
        if b.len() < CNP_INFO_LEN {
            return false;
        }
        let kb = |r: u64| u32::try_from(r / 1000).unwrap_or(u32::MAX);
        let iv = u16::try_from(self.interval_us / 16).unwrap_or(u16::MAX);
        put(b, 0, &CNP_MAGIC.to_be_bytes())
            && put(b, 2, &[CNP_VERSION, 0])
            && put(b, 4, &kb(self.qp_rate).to_be_bytes())
            && put(b, 8, &kb(self.port_rate).to_be_bytes())
            && put(b, 12, &self.active_qps.to_be_bytes())
            && put(b, 14, &iv.to_be_bytes())
    }
}

/// A rate meter over fixed intervals (per QP on the receiver; also the port total).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meter {
    /// Start of the open interval.
    start: u64,
    /// Bytes in the open interval.
    bytes: u64,
    /// Rate of the last closed interval, bytes/s.
    rate: u64,
    /// When the last interval closed.
    closed: u64,
    /// An interval has closed.
    valid: bool,
    /// Last time bytes were counted.
    last: u64,
    /// Bytes have been counted.
    started: bool,
}

impl Meter {
    /// A meter that has seen nothing.
    pub const fn new() -> Meter {
        Meter {
            start: 0,
            bytes: 0,
            rate: 0,
            closed: 0,
            valid: false,
            last: 0,
            started: false,
        }
    }

    /// Counts `bytes` at `now`; closes the interval when `interval_ns` has passed (and
    /// then returns true).
    ///
    /// The closed interval's rate is its bytes over its real length (from its first
    /// packet to `now`, at least `interval_ns`); `bytes` open the next interval.
    pub fn add(&mut self, now: u64, bytes: u32, interval_ns: u64) -> bool {
        let mut closed = false;
        if !self.started {
            self.started = true;
            self.start = now;
        } else {
            let len = now.saturating_sub(self.start);
            if len >= interval_ns.max(1) {
                self.rate = mul_div(self.bytes, NS_PER_SEC, len);
                self.closed = now;
                self.valid = true;
                self.start = now;
                self.bytes = 0;
                closed = true;
            }
        }
        self.bytes = self.bytes.saturating_add(u64::from(bytes));
        self.last = now;
        closed
    }

    /// Rate of the last closed interval (0 if it is older than 2 intervals).
    pub fn rate(&self, now: u64, interval_ns: u64) -> u64 {
        if !self.valid || now.saturating_sub(self.closed) > interval_ns.saturating_mul(2) {
            0
        } else {
            self.rate
        }
    }

    /// Last time add() saw bytes.
    pub fn last_ns(&self) -> u64 {
        self.last
    }

    /// Whether the meter saw no bytes for `idle_ns` before `now` (or never any).
    pub fn idle(&self, now: u64, idle_ns: u64) -> bool {
        !self.started || now.saturating_sub(self.last) >= idle_ns
    }
}

/// A QP's part in its port's statistics, kept in the QP: its meter, whether it counts
/// as active, and the rate it is counted with as light (0: not light).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpShare {
    meter: Meter,
    active: bool,
    light: u64,
}

impl QpShare {
    /// A QP that has received nothing.
    pub const fn new() -> QpShare {
        QpShare {
            meter: Meter::new(),
            active: false,
            light: 0,
        }
    }

    /// The QP's meter.
    pub fn meter(&self) -> &Meter {
        &self.meter
    }

    /// Whether the QP counts among the port's active QPs.
    pub fn active(&self) -> bool {
        self.active
    }

    /// Whether the QP is counted as light (see [`Port`]).
    pub fn light(&self) -> bool {
        self.light != 0
    }
}

/// Port-level statistics: total bytes (a Meter) and the number of active QPs, of which
/// `light` use less than half an equal share of the port (their rates summed in
/// `light_rate`).
///
/// A CNP carries the share the heavy QPs divide among themselves: the port's rate less
/// the light QPs' and the active QPs less the light ones (max-min fairness, in one
/// step). Without that, a latency probe or an admin queue that moves a few kilobytes
/// would count as a full flow and hold every other flow to `1/(n+1)` of the port.
/// A QP is classified each time its meter closes an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Port {
    meter: Meter,
    active: u16,
    light: u16,
    light_rate: u64,
}

impl Port {
    /// A port without traffic.
    pub const fn new() -> Port {
        Port {
            meter: Meter::new(),
            active: 0,
            light: 0,
            light_rate: 0,
        }
    }

    /// A QP's packet: counts it in the QP's meter and the port's, makes the QP active on
    /// its first packet (+1; true is returned then), and classifies it as light or not
    /// when its meter closes an interval.
    pub fn on_packet(&mut self, now: u64, bytes: u32, qp: &mut QpShare, p: &Params) -> bool {
        self.meter.add(now, bytes, p.meter_ns());
        let closed = qp.meter.add(now, bytes, p.meter_ns());
        let new = !qp.active;
        if new {
            qp.active = true;
            self.active = self.active.saturating_add(1);
        }
        if closed {
            self.unlight(qp);
            let r = qp.meter.rate(now, p.meter_ns());
            let equal = self.rate(now, p) / u64::from(self.active.max(1));
            if r < equal / 2 {
                qp.light = r.max(1);
                self.light = self.light.saturating_add(1);
                self.light_rate = self.light_rate.saturating_add(qp.light);
            }
        }
        new
    }

    fn unlight(&mut self, qp: &mut QpShare) {
        if qp.light != 0 {
            self.light = self.light.saturating_sub(1);
            self.light_rate = self.light_rate.saturating_sub(qp.light);
            qp.light = 0;
        }
    }

    /// The QP went idle (no packet for np_idle_us) or was destroyed: -1 if it was active.
    pub fn on_idle(&mut self, qp: &mut QpShare) {
        if qp.active {
            qp.active = false;
            self.active = self.active.saturating_sub(1);
            self.unlight(qp);
        }
    }

    /// Active QPs.
    pub fn active(&self) -> u16 {
        self.active
    }

    /// Active QPs counted as light.
    pub fn light(&self) -> u16 {
        self.light
    }

    /// The port's receive rate over the last closed interval, bytes/s.
    pub fn rate(&self, now: u64, p: &Params) -> u64 {
        self.meter.rate(now, p.meter_ns())
    }

    /// The CNP payload for `qp`: its rate, and the port's rate and active QPs without
    /// the light ones (all of them if every active QP is light).
    pub fn info(&self, now: u64, qp: &QpShare, p: &Params) -> CnpInfo {
        let rate = self.rate(now, p);
        let (port_rate, active_qps) = match self.active.saturating_sub(self.light) {
            0 => (rate, self.active),
            heavy => (rate.saturating_sub(self.light_rate), heavy),
        };
        CnpInfo {
            qp_rate: qp.meter.rate(now, p.meter_ns()),
            port_rate,
            active_qps,
            interval_us: p.meter_us(),
        }
    }
}

/// The `rate` reaction point (per QP): on an rrxe CNP sets the rate directly from the
/// receiver's measurement: fair = port_rate / max(active,1);
/// rate = min(qp_rate, fair) * (1024 - rate_margin) / 1024, at least min_rate. No fixed
/// decrements. When CNPs stop (no CNP for `rate_time_reset`): recover towards the
/// remembered fair share quickly (halve the gap per period), then probe beyond it in
/// steps of `rate_margin` of the share, up to max_rate.
///
/// Choices the spec leaves open:
///
/// * A measurement of 0 means "not measured yet" (the receiver's meter has not closed an
///   interval): `qp_rate` 0 uses the fair share alone, `port_rate` 0 the QP's rate alone;
///   with neither, the CNP cuts like DCQCN at alpha 1, to `rp_min_dec_fac` percent.
/// * Hold: for two of the receiver's meter intervals (`interval_us` of the CNP) after
///   the rate was set, CNPs may still lower it to the margin below the fair share, but
///   not below it from `qp_rate`: the receiver has not measured the new rate yet, and the
///   stale measurement would otherwise compound the margin once per interval while the
///   queue drains.
/// * Recovery: one event per `rate_time_reset` (its own knob, 300 us like DCQCN's
///   `rp_time_reset` by default: a slower period held a VM's flows below their share
///   when its timers fired late). The gap to the fair share halves per event;
///   once it is under a unit of `fair * rate_margin / 1024` the rate is the fair share,
///   further events add one unit, and after `rp_threshold` of them one more unit per
///   `rp_threshold` events, up to `max_rate`: a share that went stale (a flow left) is
///   outgrown in a few tens of events. Before the first measured CNP the units are
///   mlx5's absolute `rp_ai_rate` and `rp_hai_rate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateCc {
    rate: u64,
    /// Remembered fair share (0: none yet).
    fair: u64,
    /// Last CNP that set the rate, or the last increase event.
    inc_t: u64,
    /// Time the rate was last set from a CNP.
    set_t: u64,
    /// Hold length after `set_t`, ns.
    hold_ns: u64,
    /// Increase events at or beyond the fair share since the last CNP.
    above: u32,
}

impl RateCc {
    /// A QP at line rate.
    pub fn new(now: u64, p: &Params) -> RateCc {
        RateCc {
            rate: p.max_rate(),
            fair: 0,
            inc_t: now,
            set_t: now,
            hold_ns: 0,
            above: 0,
        }
    }

    /// An rrxe CNP with the receiver's measurement (see the type's doc).
    pub fn on_cnp(&mut self, now: u64, info: &CnpInfo, p: &Params) -> Change {
        let old = self.rate;
        let fair = info.port_rate / u64::from(info.active_qps.max(1));
        let in_hold = now.saturating_sub(self.set_t) < self.hold_ns;
        let base = match (info.qp_rate, fair) {
            (0, 0) => mul_div(self.rate, p.min_dec_fac(), 100),
            (0, f) => f,
            (q, 0) => q,
            (_, f) if in_hold => f,
            (q, f) => q.min(f),
        };
        let target = p.clamp_rate(mul_div(base, 1024 - p.rate_margin().min(1024), 1024));
        if fair != 0 {
            self.fair = p.clamp_rate(fair);
        }
        self.inc_t = now;
        self.above = 0;
        if in_hold && target >= self.rate {
            return Change::Same;
        }
        self.rate = target;
        self.set_t = now;
        self.hold_ns = u64::from(info.interval_us).saturating_mul(2 * NS_PER_US);
        Change::of(old, self.rate)
    }

    /// The first CNP of a QP its start window ([`super::start`]) still bounded: the QP's
    /// own measured rate shows that window, not what the QP would send, so only the fair
    /// share counts (as for a CNP without the QP's rate).
    pub fn on_cnp_after_start(&mut self, now: u64, info: &CnpInfo, p: &Params) -> Change {
        let fair_only = CnpInfo {
            qp_rate: 0,
            ..*info
        };
        self.on_cnp(now, &fair_only, p)
    }

    /// A standard CNP without measurement (all-zero payload): treated as a measurement of
    /// nothing, i.e. a cut to `rp_min_dec_fac` percent.
    pub fn on_plain_cnp(&mut self, now: u64, p: &Params) -> Change {
        self.on_cnp(now, &CnpInfo::default(), p)
    }

    /// One increase event.
    fn increase(&mut self, p: &Params) {
        // Steps in proportion to the measured share once there is one (a fixed ai is a
        // fifth of a 25 Mb/s share, and the queue grows before the next CNP can say so);
        // mlx5's absolute ai/hai before the first measured CNP.
        let (unit, hunit) = match self.fair {
            0 => (p.ai_rate(), p.hai_rate()),
            f => {
                let u = mul_div(f, p.rate_margin().max(1), 1024).max(1);
                (u, u)
            }
        };
        if self.rate < self.fair {
            let gap = self.fair - self.rate;
            self.rate = if gap <= unit {
                self.fair
            } else {
                self.rate + gap / 2
            };
        } else {
            self.above = self.above.saturating_add(1);
            let f = p.threshold();
            let step = match self.fair {
                // One more unit per rp_threshold events: gentle enough not to outrun the
                // marking queue's feedback, fast enough to outgrow a share that went
                // stale (a flow left) in tens of events.
                _ if self.above <= f => unit,
                0 => u64::from(self.above - f).saturating_mul(hunit),
                _ => u64::from(1 + (self.above - f) / f.max(1)).saturating_mul(hunit),
            };
            self.rate = self.rate.saturating_add(step);
        }
        self.rate = p.clamp_rate(self.rate);
    }

    /// Lazy recovery timer: one increase event per rate_time_reset without CNP.
    pub fn tick(&mut self, now: u64, p: &Params) -> Change {
        let old = self.rate;
        let tp = p.rate_time_reset_ns().max(1);
        let n = now.saturating_sub(self.inc_t) / tp;
        if n > 0 {
            let max = p.max_rate();
            for _ in 0..n.min(MAX_PERIODS) {
                if self.rate >= max {
                    break;
                }
                self.increase(p);
            }
            self.inc_t = self.inc_t.saturating_add(n.saturating_mul(tp));
        }
        self.rate = p.clamp_rate(self.rate);
        Change::of(old, self.rate)
    }

    /// Current rate, bytes/s.
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// The remembered fair share, bytes/s (0 before the first measured CNP).
    pub fn fair(&self) -> u64 {
        self.fair
    }
}

#[cfg(test)]
mod tests {
    use super::super::params::{idx, NPARAMS};
    use super::super::MBPS;
    use super::*;
    use proptest::prelude::*;

    const US: u64 = 1000;

    #[test]
    fn cnp_info_bytes() {
        let i = CnpInfo {
            qp_rate: 1_234_567,
            port_rate: 9_999_999_999_999,
            active_qps: 3,
            interval_us: 1000,
        };
        let mut b = [0u8; 16];
        assert!(i.encode(&mut b));
        assert_eq!(
            b,
            [0x72, 0x72, 1, 0, 0, 0, 0x04, 0xd2, 0xff, 0xff, 0xff, 0xff, 0, 3, 0, 62]
        );
        let d = CnpInfo::decode(&b).unwrap();
        assert_eq!(d.qp_rate, 1_234_000);
        assert_eq!(d.port_rate, u64::from(u32::MAX) * 1000);
        assert_eq!(d.interval_us, 992);
        assert_eq!(CnpInfo::decode(&[0u8; 16]), None);
        assert_eq!(CnpInfo::decode(&b[..15]), None);
        assert!(!i.encode(&mut b[..15]));
        b[2] = 2;
        assert_eq!(CnpInfo::decode(&b), None);
    }

    #[test]
    fn meter_intervals() {
        let iv = 1000 * US;
        let mut m = Meter::new();
        assert_eq!(m.rate(0, iv), 0);
        assert!(m.idle(0, 10));
        for t in 0..100u64 {
            m.add(t * 10 * US, 1000, iv); // 1000 B per 10 us = 100 MB/s
        }
        assert_eq!(m.rate(990 * US, iv), 0);
        m.add(1000 * US, 1000, iv);
        assert_eq!(m.rate(1000 * US, iv), 100_000_000);
        assert_eq!(m.last_ns(), 1000 * US);
        assert!(!m.idle(1500 * US, 1000 * US));
        assert_eq!(m.rate(3000 * US, iv), 100_000_000);
        assert_eq!(m.rate(3001 * US, iv), 0);
    }

    #[test]
    fn port_counts_active_qps() {
        let p = Params::DEFAULT;
        let mut port = Port::new();
        let (mut a, mut b) = (QpShare::new(), QpShare::new());
        assert!(port.on_packet(0, 100, &mut a, &p));
        assert!(!port.on_packet(1, 100, &mut a, &p));
        assert!(port.on_packet(2, 100, &mut b, &p));
        assert_eq!(port.active(), 2);
        port.on_idle(&mut a);
        port.on_idle(&mut a);
        assert_eq!(port.active(), 1);
        assert!(!a.active() && b.active());
        port.on_packet(2_000_000, 100, &mut b, &p);
        assert_eq!(port.rate(2_000_000, &p), 300 * 1_000_000_000 / 2_000_000);
        let i = port.info(2_000_000, &QpShare::new(), &p);
        assert_eq!((i.qp_rate, i.active_qps, i.interval_us), (0, 1, 1000));
    }

    /// Three QPs at 40 MB/s and a probe at 0.1 MB/s: the probe is light, and the CNP's
    /// share is the heavy QPs' (their rate over three), not the port's over four.
    #[test]
    fn light_qps_leave_the_share() {
        let p = Params::DEFAULT;
        let mut port = Port::new();
        let mut q = [QpShare::new(); 4];
        // 1 ms intervals: 40 KB per ms each heavy QP, 100 B per ms the probe.
        for ms in 0..5u64 {
            for k in 0..40u64 {
                for (i, s) in q.iter_mut().enumerate().take(3) {
                    port.on_packet(ms * 1_000_000 + k * 25_000 + i as u64, 1000, s, &p);
                }
            }
            port.on_packet(ms * 1_000_000 + 999_000, 100, &mut q[3], &p);
        }
        assert_eq!(port.active(), 4);
        assert_eq!(port.light(), 1);
        assert!(q[3].light() && !q[0].light());
        let now = 5_000_000;
        let i = port.info(now, &q[0], &p);
        assert_eq!(i.active_qps, 3);
        let per = i.port_rate / 3;
        assert!(per > 39_000_000 && per < 41_500_000, "{per}");
        // The probe leaves: nothing light remains, the count and the sum with it.
        port.on_idle(&mut q[3]);
        assert_eq!((port.active(), port.light()), (3, 0));
        let j = port.info(now, &q[0], &p);
        assert_eq!((j.active_qps, j.port_rate), (3, port.rate(now, &p)));
    }

    #[test]
    fn rate_set_from_measurement_and_recovers() {
        let mut p = Params::DEFAULT;
        p.set(idx::RP_MAX_RATE, 1000);
        let mut r = RateCc::new(0, &p);
        let info = CnpInfo {
            qp_rate: 60 * MBPS,
            port_rate: 125 * MBPS,
            active_qps: 4,
            interval_us: 1000,
        };
        assert_eq!(r.on_cnp(0, &info, &p), Change::Decreased);
        let fair = 125 * MBPS / 4;
        assert_eq!(r.rate(), fair * 973 / 1024);
        assert_eq!(r.fair(), fair);
        // In the hold the stale qp_rate cannot push it further down.
        let low = CnpInfo {
            qp_rate: 10 * MBPS,
            ..info
        };
        assert_eq!(r.on_cnp(100 * US, &low, &p), Change::Same);
        // After it, it can (the flow uses less than its share).
        assert_eq!(r.on_cnp(2200 * US, &low, &p), Change::Decreased);
        assert_eq!(r.rate(), 10 * MBPS * 973 / 1024);
        // Quiet: halve the gap to the share, then beyond it in units of the margin.
        let mut last = r.rate();
        let mut t = 2200 * US;
        let tp = p.rate_time_reset_ns();
        assert_eq!(r.tick(t + tp - 1, &p), Change::Same);
        while r.rate() < fair {
            t += tp;
            assert_eq!(r.tick(t, &p), Change::Increased);
            assert!(r.rate() > last);
            last = r.rate();
        }
        assert_eq!(r.rate(), fair);
        let unit = fair * 51 / 1024;
        for i in 1..=u64::from(p.threshold()) {
            t += tp;
            r.tick(t, &p);
            assert_eq!(r.rate(), fair + i * unit);
        }
        // Then one more unit per rp_threshold events: a stale share is left behind.
        for i in 6..=9 {
            t += tp;
            r.tick(t, &p);
            assert_eq!(r.rate(), fair + i * unit);
        }
        t += tp;
        r.tick(t, &p);
        assert_eq!(r.rate(), fair + 11 * unit);
        r.tick(t + 1_000_000_000, &p);
        assert_eq!(r.rate(), p.max_rate());
    }

    #[test]
    fn first_cnp_after_start_takes_the_share() {
        let p = Params::DEFAULT;
        let info = CnpInfo {
            qp_rate: 2 * MBPS,
            port_rate: 100 * MBPS,
            active_qps: 4,
            interval_us: 1000,
        };
        let mut r = RateCc::new(0, &p);
        r.on_cnp_after_start(0, &info, &p);
        assert_eq!(r.rate(), 25 * MBPS * 973 / 1024);
        let mut q = RateCc::new(0, &p);
        q.on_cnp(0, &info, &p);
        assert_eq!(q.rate(), 2 * MBPS * 973 / 1024);
    }

    #[test]
    fn unmeasured_cnp() {
        let p = Params::DEFAULT;
        let mut r = RateCc::new(0, &p);
        assert_eq!(r.on_plain_cnp(0, &p), Change::Decreased);
        assert_eq!(r.rate(), p.max_rate() / 2 * 973 / 1024);
    }

    proptest! {
        #[test]
        fn cnp_info_round_trip(q in any::<u32>(), pr in any::<u32>(), a in any::<u16>(),
                               iv in any::<u16>()) {
            let i = CnpInfo {
                qp_rate: u64::from(q) * 1000,
                port_rate: u64::from(pr) * 1000,
                active_qps: a,
                interval_us: u32::from(iv) * 16,
            };
            let mut b = [0u8; CNP_INFO_LEN];
            prop_assert!(i.encode(&mut b));
            prop_assert_eq!(CnpInfo::decode(&b), Some(i));
        }

        #[test]
        fn cnp_info_decode_any(b in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Some(i) = CnpInfo::decode(&b) {
                let mut out = [0u8; CNP_INFO_LEN];
                prop_assert!(i.encode(&mut out));
                prop_assert_eq!(&out[..3], &b[..3]);
                prop_assert_eq!(&out[4..], &b[4..CNP_INFO_LEN]);
            }
        }

        /// The rate stays within [min_rate, max_rate] whatever the CNPs, times and knobs.
        #[test]
        fn rate_in_bounds(
            vals in proptest::collection::vec(any::<u32>(), NPARAMS),
            ev in proptest::collection::vec(
                (any::<bool>(), 0u64..5_000_000, any::<u64>(), any::<u64>(), any::<u16>(),
                 any::<u32>()), 0..200),
        ) {
            let mut a = [0u32; NPARAMS];
            a.copy_from_slice(&vals);
            let p = Params::from_values(&a);
            let mut now = 0u64;
            let mut r = RateCc::new(now, &p);
            for (cnp, dt, q, pr, act, iv) in ev {
                now = now.saturating_add(dt);
                if cnp {
                    let i = CnpInfo { qp_rate: q, port_rate: pr, active_qps: act, interval_us: iv };
                    r.on_cnp(now, &i, &p);
                } else {
                    r.tick(now, &p);
                }
                prop_assert!(p.min_rate() <= r.rate() && r.rate() <= p.max_rate());
            }
        }
    }
}
