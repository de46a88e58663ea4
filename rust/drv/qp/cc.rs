// SPDX-License-Identifier: GPL-2.0
//! Congestion control of one QP, carrying out the protocol core's algorithms
//! ([`crate::proto::cc`]) with the device's knobs:
//!
//! * notification point (responder): meters what the QP receives, counts it into the
//!   port's statistics, and answers Congestion Experienced marks with a CNP, at most one
//!   per `np_min_time_between_cnps`; towards an rrxe requester the CNP carries the
//!   measured rates. Echoes request timestamps in ACKs.
//! * reaction point (requester): paces the send queue with a token bucket at the rate
//!   the selected algorithm sets: DCQCN on a standard CNP, the receiver's measured fair
//!   share on an rrxe CNP (`rate`), or the per-destination delay registers (`delay`),
//!   whose limiter every QP to that destination shares.

use super::super::tx::{Payload, TxPkt};
use super::sched::mono_ns;
use super::{Qp, State, TIMER_IDLE, TIMER_PACE};
use crate::kabi::ib::ResAttrs;
use crate::proto::bth::Bth;
use crate::proto::cc::dcqcn::{CnpGate, Dcqcn};
use crate::proto::cc::delay;
use crate::proto::cc::pacer::Pacer;
use crate::proto::cc::params::Params;
use crate::proto::cc::share::{CnpInfo, QpShare, RateCc, CNP_INFO_LEN};
use crate::proto::cc::start::StartWindow;
use crate::proto::cc::{Algo, Change};
use crate::proto::ccwire::{TsEcho, CAP_CC};
use crate::proto::opcode::op;
use crate::proto::packet::{Ext, Packet};
use crate::proto::rc::{DEFAULT_PKEY, MAX_PKT_PER_ACK, MAX_UNACKED_PSNS};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// How often a QP reads the device's knobs again (one atomic each; the receive path
/// would otherwise read them for every packet).
const KNOBS_NS: u64 = 1_000_000;

/// How the requester reacts to CNPs (chosen by the first one).
pub(super) enum Reaction {
    /// No CNP yet: line rate.
    Line,
    /// A standard CNP (or the `dcqcn` algorithm).
    Dcqcn(Dcqcn),
    /// An rrxe CNP under the `rate` algorithm.
    Rate(RateCc),
}

/// A QP's congestion-control state (in its engine state, under the QP's lock).
pub(super) struct QpCc {
    /// The knobs, read at most [`KNOBS_NS`] ago.
    pub(super) p: Params,
    /// When `p` was read.
    p_ns: u64,
    /// Requester: the responder accepted rrxe's extensions (timestamps).
    pub(super) peer: bool,
    /// Responder: the requester offered them (rates in CNPs, timestamp echoes).
    pub(super) offered: bool,
    pacer: Pacer,
    reaction: Reaction,
    /// Requester under `rate`: the bound on unacknowledged packets until the first CNP.
    start: StartWindow,
    /// Requester: the delay algorithm's destination entry.
    pub(super) dest: Option<usize>,
    /// Responder: CNP spacing.
    gate: CnpGate,
    /// Responder: what this QP receives.
    /// Responder: the meter and this QP's part in the port's active and light QPs.
    share: QpShare,
    /// Responder: the timestamp the next ACK echoes.
    echo: Option<TsEcho>,
}

impl QpCc {
    pub(super) fn new(p: Params) -> QpCc {
        QpCc {
            pacer: Pacer::new(p.pacer_burst()),
            start: StartWindow::new(p.rate_init_win()),
            p,
            p_ns: mono_ns(),
            peer: false,
            offered: false,
            reaction: Reaction::Line,
            dest: None,
            gate: CnpGate::new(),
            share: QpShare::new(),
            echo: None,
        }
    }

    /// The transmit timestamp a request carries (the delay algorithm towards an rrxe
    /// responder).
    pub(super) fn ts(&self) -> Option<u32> {
        (self.peer && self.p.algo() == Algo::Delay).then(|| delay::ts_us(mono_ns()))
    }

    /// How many data packets the requester may send between AckReqs: fewer under the
    /// delay algorithm, whose decisions wait for timestamp echoes (one per ACK), and
    /// half the start window while one bounds the QP (the responder acknowledges only
    /// what asks for it, and a window's worth without an AckReq would wait for the
    /// retransmission timer).
    pub(super) fn ack_every(&self) -> u32 {
        match self.p.algo() {
            Algo::Delay if self.peer => self.p.delay_ack_pkts(),
            Algo::Rate => self.start.ack_every(MAX_PKT_PER_ACK),
            _ => MAX_PKT_PER_ACK,
        }
    }

    /// The echo an ACK carries, if a timestamped request arrived since the last one.
    pub(super) fn take_echo(&mut self) -> Option<TsEcho> {
        self.echo.take()
    }
}

impl Qp {
    /// The device's knobs, read again if the QP's copy is older than [`KNOBS_NS`].
    fn knobs(&self, st: &mut State, now: u64) -> Params {
        if now.wrapping_sub(st.cc.p_ns) >= KNOBS_NS {
            st.cc.p = self.dev.knobs.params();
            st.cc.p_ns = now;
        }
        st.cc.p
    }

    /// Receive softirq: a request arrived Congestion Experienced (answered when the
    /// responder processes this QP's next request, see [`Qp::cc_np`]).
    pub(crate) fn note_ce(&self) {
        self.ce.store(true, Ordering::Release);
    }

    fn count(&self, c: Change) {
        match c {
            Change::Decreased => self.dev.stats.rp_rate_dec.inc(),
            Change::Increased => self.dev.stats.rp_rate_inc.inc(),
            Change::Same => {}
        }
    }

    /// Notification point, for every request the responder accepts for processing.
    pub(super) fn cc_np(&self, st: &mut State, pkt: &Packet<'_>) {
        let now = mono_ns();
        let p = self.knobs(st, now);
        st.cc.offered = pkt.bth.caps & CAP_CC != 0;
        let bytes = pkt.payload.len() as u32;
        let new = self
            .dev
            .port
            .lock()
            .on_packet(now, bytes, &mut st.cc.share, &p);
        if new {
            self.idle_timer.arm_us(p.idle_ns() / 1000);
        }
        if let Some(ts) = pkt.ts() {
            st.cc.echo = Some(TsEcho {
                tx: ts,
                rx: delay::ts_us(now),
            });
        }
        if self.ce.swap(false, Ordering::AcqRel) && st.cc.gate.allow(now, &p) {
            self.send_cnp(st, now);
        }
    }

    /// Sends a CNP to the requester: its 16 reserved bytes carry this QP's and the
    /// port's measured rates if the requester is rrxe, zeros otherwise.
    fn send_cnp(&self, st: &mut State, now: u64) {
        let Some(path) = st.path.as_ref() else {
            return;
        };
        let p = st.cc.p;
        let mut info = [0u8; CNP_INFO_LEN];
        if st.cc.offered {
            let i = self.dev.port.lock().info(now, &st.cc.share, &p);
            i.encode(&mut info);
        }
        let bth = Bth {
            opcode: op::CNP,
            pkey: DEFAULT_PKEY,
            becn: true,
            dqpn: st.dest_qpn,
            ..Bth::default()
        };
        let fill = |at: u32, d: &mut [u8]| {
            for (o, i) in d.iter_mut().zip(info.iter().skip(at as usize)) {
                *o = *i;
            }
            Ok(None)
        };
        let sent = self.dev.xmit(
            path,
            &TxPkt {
                bth,
                ext: Ext::default(),
                payload: Payload::Fill(CNP_INFO_LEN, &fill),
            },
        );
        if sent.is_ok() {
            self.dev.stats.np_cnp_sent.inc();
        }
    }

    /// Reaction point: a CNP for this QP arrived. `none` and `delay` ignore it; `rate`
    /// takes an rrxe CNP's measured rates, and everything else gets DCQCN.
    pub(super) fn on_cnp(&self, pkt: &Packet<'_>) {
        let mut st = self.st.lock();
        let now = mono_ns();
        let p = self.knobs(&mut st, now);
        let algo = p.algo();
        if !st.state.sending() || matches!(algo, Algo::None | Algo::Delay) {
            self.dev.stats.rp_cnp_ignored.inc();
            return;
        }
        let info = if algo == Algo::Rate {
            CnpInfo::decode(pkt.payload)
        } else {
            None
        };
        let mut ignored = false;
        // The rate the CNP sets governs from now on.
        let started = st.cc.start.active();
        st.cc.start.end();
        let change = match (info, &mut st.cc.reaction) {
            (Some(i), Reaction::Rate(r)) => r.on_cnp(now, &i, &p),
            (Some(i), slot) => {
                let mut r = RateCc::new(now, &p);
                let c = if started {
                    r.on_cnp_after_start(now, &i, &p)
                } else {
                    r.on_cnp(now, &i, &p)
                };
                *slot = Reaction::Rate(r);
                c
            }
            (None, Reaction::Dcqcn(d)) => {
                ignored = d.monitoring(now, &p);
                d.on_cnp(now, &p)
            }
            (None, slot) => {
                let mut d = Dcqcn::new(now, &p);
                let c = d.on_cnp(now, &p);
                *slot = Reaction::Dcqcn(d);
                c
            }
        };
        if ignored {
            // Within DCQCN's rate-reduction monitor period.
            self.dev.stats.rp_cnp_ignored.inc();
        } else {
            self.dev.stats.rp_cnp_handled.inc();
        }
        self.count(change);
        let r = Self::reaction_rate(&st.cc.reaction);
        st.cc.pacer.set_rate(now, r);
    }

    fn reaction_rate(r: &Reaction) -> u64 {
        match r {
            Reaction::Line => 0,
            Reaction::Dcqcn(d) => d.rate(),
            Reaction::Rate(r) => r.rate(),
        }
    }

    /// Requester, once per run: the knobs (see [`KNOBS_NS`]), and the reaction's timers
    /// (rate recovery).
    pub(super) fn cc_refresh(&self, st: &mut State, now: u64) {
        let p = self.knobs(st, now);
        let c = match &mut st.cc.reaction {
            Reaction::Line => Change::Same,
            Reaction::Dcqcn(d) => d.tick(now, &p),
            Reaction::Rate(r) => r.tick(now, &p),
        };
        self.count(c);
        if c != Change::Same {
            let r = Self::reaction_rate(&st.cc.reaction);
            st.cc.pacer.set_rate(now, r);
        }
        st.cc.pacer.set_burst(p.pacer_burst());
    }

    /// Requester under `rate`, before the QP's first CNP: whether the start window lets
    /// the next packet go (see [`StartWindow`]); if not, the next acknowledgement runs
    /// the requester again, as when the transport's window is full.
    pub(super) fn cc_start(&self, st: &mut State) -> bool {
        if st.cc.p.algo() != Algo::Rate || !st.cc.start.active() {
            return true;
        }
        let ok = st
            .cc
            .start
            .allows(st.req.req_psn, st.req.comp_psn, MAX_UNACKED_PSNS);
        if !ok {
            self.dev.stats.rp_start_held.inc();
        }
        ok
    }

    /// Requester: whether a packet of `bytes` may leave now; if not, the pacing timer
    /// runs the requester again when it may.
    pub(super) fn cc_admit(&self, st: &mut State, now: u64, bytes: u32) -> bool {
        let p = st.cc.p;
        let r = match p.algo() {
            Algo::None => Ok(()),
            Algo::Dcqcn | Algo::Rate => {
                let r = st.cc.pacer.take(now, bytes);
                if r.is_ok() {
                    if let Reaction::Dcqcn(d) = &mut st.cc.reaction {
                        let c = d.on_sent(now, bytes, &p);
                        self.count(c);
                        if c != Change::Same {
                            let rate = d.rate();
                            st.cc.pacer.set_rate(now, rate);
                        }
                    }
                }
                r
            }
            Algo::Delay => match st.cc.dest {
                Some(i) => self.dev.dests.lock().take(i, now, bytes, &p),
                None => Ok(()),
            },
        };
        match r {
            Ok(()) => true,
            Err(wait_ns) => {
                let us = wait_ns.div_ceil(1000).max(1);
                self.dev.stats.rp_paced.inc();
                self.dev.stats.rp_paced_us.add(us);
                self.pace_timer.arm_us(us);
                false
            }
        }
    }

    /// Requester: an ACK echoed a timestamp: one delay sample for the destination.
    pub(super) fn cc_echo(&self, st: &mut State, e: TsEcho) {
        let Some(i) = st.cc.dest else {
            return;
        };
        let now = mono_ns();
        let fwd = delay::delta_us(e.rx, e.tx);
        let rev = delay::delta_us(delay::ts_us(now), e.rx);
        let p = st.cc.p;
        let (_, c) = self.dev.dests.lock().sample(i, now, fwd, rev, &p);
        self.dev.stats.rp_ts_samples.inc();
        self.count(c);
    }

    /// Requester: the QP has a path to `daddr`: join its destination entry.
    pub(super) fn cc_attach(&self, st: &mut State, daddr: &[u8; 16]) {
        self.cc_detach(st);
        let now = mono_ns();
        let p = self.knobs(st, now);
        st.cc.dest = self.dev.dests.lock().attach(daddr, now, &p);
    }

    /// The QP stops sending and receiving (reset, destroy): leave the destination entry
    /// and the port's active QPs.
    pub(super) fn cc_detach(&self, st: &mut State) {
        if let Some(i) = st.cc.dest.take() {
            self.dev.dests.lock().detach(i);
        }
        if st.cc.share.active() {
            self.dev.port.lock().on_idle(&mut st.cc.share);
        }
    }

    /// Timers of congestion control: the pacer's (send what is now admitted) and the
    /// idle check (a QP that received nothing for `np_idle_us` is no longer active).
    pub(super) fn cc_timer(&self, id: u8) {
        if id == TIMER_PACE {
            self.send_work.queue();
            return;
        }
        if id != TIMER_IDLE {
            return;
        }
        let mut st = self.st.lock();
        if !st.cc.share.active() {
            return;
        }
        let idle = st.cc.p.idle_ns();
        let quiet = mono_ns().saturating_sub(st.cc.share.meter().last_ns());
        if quiet >= idle {
            self.dev.port.lock().on_idle(&mut st.cc.share);
        } else {
            self.idle_timer.arm_us((idle - quiet).div_ceil(1000));
        }
    }
}

impl Qp {
    /// Congestion-control attributes for `rdma resource show qp -dd`: the algorithm,
    /// the rate the requester is paced at (Mbit/s, 0 = unpaced), DCQCN's alpha (/1024),
    /// and the receive rate the responder measured (Mbit/s).
    pub(crate) fn cc_res(&self, out: &mut ResAttrs<'_>) -> Result {
        let mbit = |bps: u64| bps.saturating_mul(8) / 1_000_000;
        let now = mono_ns();
        let (algo, mut rate, alpha, rx, dest) = {
            let st = self.st.lock();
            let p = st.cc.p;
            let alpha = match &st.cc.reaction {
                Reaction::Dcqcn(d) => u64::from(d.alpha()),
                _ => 0,
            };
            (
                p.algo(),
                st.cc.pacer.rate(),
                alpha,
                st.cc.share.meter().rate(now, p.meter_ns()),
                st.cc.dest,
            )
        };
        if algo == Algo::Delay {
            rate = dest.map_or(0, |i| self.dev.dests.lock().rate(i));
        } else if algo == Algo::None {
            rate = 0;
        }
        out.put_u64(c"cc_algo", algo as u64)?;
        out.put_u64(c"cc_rate_mbps", mbit(rate))?;
        out.put_u64(c"cc_alpha", alpha)?;
        out.put_u64(c"cc_rx_mbps", mbit(rx))
    }
}
