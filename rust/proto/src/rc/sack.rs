// SPDX-License-Identifier: GPL-2.0
//! Selective retransmission's decisions in the RC engine: the responder's [`Keeper`]
//! (which requests beyond the expected PSN to keep, when a hole is reported in a SACK,
//! what a probe gets) and the requester's [`SackTx`] (which PSNs a SACK makes it send
//! again). The driver stores the kept packets and sends what these decide; the window,
//! bitmaps and codecs are [`super::super::sel`]'s.

use super::super::psn::Psn;
use super::super::sel::{Arrival, PsnBits, Reordering, RxWindow, Sack, RX_SPAN};

/// What to do with a request beyond the expected PSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrive {
    /// Keep it (or place its payload at once and keep its headers), then
    /// [`Keeper::stored`] (or [`Keeper::store_failed`] if it does not fit).
    Keep {
        /// It is a probe: answer with every hole ([`Keeper::probe_answer`]).
        answer_probe: bool,
        /// A later retransmission overtook the repair of a reported hole: send this SACK
        /// naming it again.
        again: Option<Sack>,
        /// It filled a hole reported too early (it is the original, not the repair).
        spurious: bool,
    },
    /// Kept already.
    Duplicate {
        /// It is a probe: answer it.
        answer_probe: bool,
    },
    /// Beyond what the QP may keep: dropped (the SACKs name it; it comes again).
    Limit,
}

/// One step of moving the receive window up to the expected PSN ([`Keeper::catch_up`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatchUp {
    /// The window is at the expected PSN.
    Done,
    /// The expected PSN jumped (a modify): drop everything kept and start over there.
    Restart,
    /// Free what is kept at `release` (a PSN just processed, or skipped by a READ's
    /// span); if `process`, the packet kept at the expected PSN is the next in order.
    Step {
        /// The PSN the window moved past.
        release: Psn,
        /// The expected PSN is kept: process it now.
        process: bool,
    },
}

/// The selective responder: its receive window and when it reports holes.
#[derive(Clone, Copy, Debug)]
pub struct Keeper {
    /// PSNs kept beyond the expected PSN.
    pub rxw: RxWindow,
    /// How many later PSNs must arrive before a hole is reported (the path's
    /// reordering).
    reorder: Reordering,
    /// Packets were kept since the last SACK decision.
    sack_due: bool,
    /// A packet was dropped at the reassembly limit and the packets kept since have not
    /// all been released: holes are reported at a batch's end only (a drop makes its PSN
    /// a hole again, every later stored packet would name it again, and its
    /// retransmission would meet the same full QP).
    at_limit: bool,
}

impl Keeper {
    /// A window from `base`; reordering thresholds up to `reorder_max`, lowered after
    /// `decay` confirmed reports.
    pub const fn new(base: Psn, reorder_max: u32, decay: u32) -> Self {
        Keeper {
            rxw: RxWindow::new(base),
            reorder: Reordering::new(reorder_max, decay),
            sack_due: false,
            at_limit: false,
        }
    }

    /// Everything kept was dropped; the window starts again at `base`.
    pub fn restart(&mut self, base: Psn) {
        self.rxw = RxWindow::new(base);
    }

    /// A request `psn` beyond the expected PSN arrived (`probe`, `retx`: its flags).
    pub fn arrive(&mut self, psn: Psn, probe: bool, retx: bool) -> Arrive {
        match self.rxw.arrive(psn) {
            Arrival::Ahead => {
                let spurious = self.filled(psn, retx);
                self.sack_due = true;
                let again = if !probe && retx && !self.at_limit {
                    self.rxw.lost_again(psn)
                } else {
                    None
                };
                Arrive::Keep {
                    answer_probe: probe,
                    again,
                    spurious,
                }
            }
            Arrival::Duplicate => Arrive::Duplicate {
                answer_probe: probe,
            },
            Arrival::Beyond | Arrival::Expected => {
                self.at_limit = true;
                Arrive::Limit
            }
        }
    }

    /// A request filled a hole (kept beyond the expected PSN, or the expected one). If
    /// the hole was reported and this is the original packet, not the repair, the report
    /// came too early: allow for more reordering. `true`: it was such a spurious report.
    pub fn filled(&mut self, psn: Psn, retx: bool) -> bool {
        if !psn.before(self.rxw.reported()) {
            return false;
        }
        self.reorder.filled(retx);
        !retx
    }

    /// The packet [`Keeper::arrive`] said to keep was stored: the SACK to send now, if a
    /// hole is followed by enough later arrivals (each hole once). Waiting for the end
    /// of a long receive batch would delay its repair by the rest of the batch.
    pub fn stored(&mut self) -> Option<Sack> {
        if self.at_limit {
            None
        } else {
            self.settled()
        }
    }

    /// The packet [`Keeper::arrive`] said to keep did not fit the limits: forgotten.
    pub fn store_failed(&mut self, psn: Psn) {
        self.rxw.forget(psn);
        self.at_limit = true;
    }

    /// The holes followed by enough later arrivals, each hole once.
    fn settled(&mut self) -> Option<Sack> {
        let settled = self.rxw.high().sub(self.reorder.get().saturating_sub(1));
        self.rxw.sack_settled(false, settled)
    }

    /// End of a receive batch (`nothing_kept`: no packet is kept any more): the SACK to
    /// send for the holes that outlived the batch (a packet sent from another CPU can
    /// overtake a few others; a lost one stays missing).
    pub fn batch_end(&mut self, nothing_kept: bool) -> Option<Sack> {
        if nothing_kept {
            self.at_limit = false;
        }
        if !self.sack_due {
            return None;
        }
        self.sack_due = false;
        if self.at_limit {
            // Every hole from the expected PSN: the retransmissions of PSNs dropped at
            // the limit are dropped again until the first hole is filled, and each SACK
            // naming only those would keep the requester from probing (its timer
            // measures silence) while its repair of the first hole may have been lost.
            return self.rxw.sack(true);
        }
        let s = self.settled();
        if s.is_none() {
            // Holes not yet settled are looked at again after the next batch.
            self.sack_due = self.rxw.has_holes();
        }
        s
    }

    /// The responder executed requests up to `expected`: the next step of moving the
    /// window after it (call until [`CatchUp::Done`] or [`CatchUp::Restart`]).
    pub fn catch_up(&mut self, expected: Psn) -> CatchUp {
        let base = self.rxw.base();
        if base == expected {
            return CatchUp::Done;
        }
        let d = expected.diff(base);
        if d < 0 || d >= RX_SPAN as i32 {
            return CatchUp::Restart;
        }
        let kept = self.rxw.advance();
        CatchUp::Step {
            release: base,
            process: kept && self.rxw.base() == expected,
        }
    }

    /// A probe's answer: every hole (`None`: there is none, send the ACK).
    pub fn probe_answer(&mut self) -> Option<Sack> {
        self.rxw.sack(true)
    }
}

/// Probes the matching of full SACKs may lag behind (answers lost, or probes answered by
/// a plain ACK): the oldest probe taken to be unanswered is one of the last 64.
const PROBE_LAG: u16 = 64;

/// What the SACK being handled is (see [`SackTx::begin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Sent by the responder on its own: resend all it names.
    Incremental,
    /// Every hole, but no probe is waiting for an answer: the round-trip rule only.
    Full,
    /// The answer to the probe with this number.
    Answer(u16),
}

/// The selective requester's SACK rule.
///
/// A SACK the responder sends on its own (incremental) names holes it has just found:
/// each PSN it names goes out again. A probe's answer (full) names every hole, repairs
/// still on their way included; it resends only the PSNs whose last resend would have
/// reached the responder already, had it not been lost. Two rules say which:
///
/// - **The probes' order.** The path keeps order, so a repair sent before the probe a
///   full SACK answers arrived before that probe or was lost, and one sent after it may
///   still be on its way. Probes are numbered; each resent PSN remembers how many probes
///   went out before its resend (and before its first resend since it was last
///   acknowledged); the full SACKs answer the probes in turn. An answer that will not
///   come (lost, or a plain ACK: the probe found no hole) shows when the cumulative ACK
///   passes the latest probe's PSN or a PSN first resent after a probe (see
///   [`SackTx::begin`]); the matching lags at most [`PROBE_LAG`] probes.
/// - **The round trip.** A full SACK leaves alone the PSNs resent in the current or
///   previous period of at least `hold` (the caller's round-trip bound, see
///   [`SackTx::begin`]): one to two periods, the time a repair needs to be seen. This is
///   the only rule for a full SACK that no probe waits for (a responder at its keep limit
///   names every hole at a batch's end).
///
/// Without them, on a path whose round trips vary far beyond the probe delay, every
/// probe's answer resent every hole again (one lost packet cost five resends on a slow,
/// loaded guest). The round trip alone is not enough: heavy loss cancels nearly every
/// round-trip sample (Karn's rule), so the estimate, and the hold, can stay at the
/// lossless path's while the loaded path's round trip grows tenfold. A repair that is lost
/// is still found: the responder reports a hole again when a later retransmission
/// overtakes its repair, and the answer to a later probe resends it.
#[derive(Clone, Debug)]
pub struct SackTx {
    /// PSNs resent in the current period.
    cur: PsnBits<4>,
    /// PSNs resent in the period before it.
    prev: PsnBits<4>,
    /// When the current period started (the caller's clock).
    since: u64,
    /// PSNs resent since the completer's PSN: their `epoch` is valid.
    resent: PsnBits<4>,
    /// For each resent PSN (indexed by the PSN modulo the span): the probes sent before
    /// its last resend.
    epoch: [u16; PsnBits::<4>::SPAN as usize],
    /// The same for its first resend since it was last acknowledged.
    first: [u16; PsnBits::<4>::SPAN as usize],
    /// Probes sent (wrapping).
    probes: u16,
    /// The PSN the latest probe carried.
    probed: Option<Psn>,
    /// Probes taken to be answered (wrapping; at most [`PROBE_LAG`] behind `probes`,
    /// never after it).
    answered: u16,
    /// The SACK being handled.
    kind: Kind,
}

impl SackTx {
    /// Nothing resent, from `comp`.
    pub const fn new(comp: Psn) -> Self {
        SackTx {
            cur: PsnBits::new(comp),
            prev: PsnBits::new(comp),
            since: 0,
            resent: PsnBits::new(comp),
            epoch: [0; PsnBits::<4>::SPAN as usize],
            first: [0; PsnBits::<4>::SPAN as usize],
            probes: 0,
            probed: None,
            answered: 0,
            kind: Kind::Incremental,
        }
    }

    /// Nothing resent, from `comp` again (a modify set the PSN), in place: the
    /// structure is over a kilobyte, too much for a temporary on a kernel stack. (The
    /// epochs of PSNs not marked resent are never read.)
    pub fn restart(&mut self, comp: Psn) {
        self.cur = PsnBits::new(comp);
        self.prev = PsnBits::new(comp);
        self.since = 0;
        self.resent = PsnBits::new(comp);
        self.probes = 0;
        self.probed = None;
        self.answered = 0;
        self.kind = Kind::Incremental;
    }

    /// A SACK (`full`: every hole) arrived at `now`; before it the completer was at
    /// `before`, and its cumulative part moved it to `comp`. A period lasts `hold` (same
    /// unit as `now`): once it is over, the PSNs resent in it become the previous
    /// period's, and those of the period before are forgotten.
    pub fn begin(&mut self, full: bool, before: Psn, comp: Psn, now: u64, hold: u64) {
        let age = now.saturating_sub(self.since);
        if age >= hold {
            self.prev = if age >= hold.saturating_mul(2) {
                PsnBits::new(comp)
            } else {
                self.cur
            };
            self.cur = PsnBits::new(comp);
            self.since = now;
        }
        self.cur.advance_to(comp);
        self.prev.advance_to(comp);
        // What earlier ACKs said about the probes' answers, then this SACK's pairing,
        // then its own cumulative part (a probe's answer may acknowledge repairs that
        // reached the responder in the same batch as the probe).
        self.acked_to(before);
        self.kind = if !full {
            Kind::Incremental
        } else if self.answered == self.probes {
            Kind::Full
        } else {
            self.answered = self.answered.wrapping_add(1);
            Kind::Answer(self.answered)
        };
        self.acked_to(comp);
    }

    /// How many probes ago `e` (a probe count) was: 0 for the latest.
    fn ago(&self, e: u16) -> u16 {
        self.probes.wrapping_sub(e)
    }

    /// The completer moved to `comp`.
    ///
    /// - If it passed the latest probe's PSN, every probe's answer came, was lost, or is
    ///   not a full SACK (a probe that finds no hole is answered with a plain ACK).
    /// - The first repair of a PSN it passed went out after the probes its epoch counts
    ///   (a later one may be a spurious resend, not the one that arrived), so the
    ///   responder received those probes before that PSN and answered them before
    ///   acknowledging it: an answer to them that did not come is lost.
    ///
    /// Either way the next full SACK answers a later probe.
    fn acked_to(&mut self, comp: Psn) {
        let d = comp.diff(self.resent.base());
        if d <= 0 {
            return;
        }
        if self.probed.is_some_and(|p| p.before(comp)) {
            self.answered = self.probes;
        }
        if self.resent.any() {
            let mut q = self.resent.base();
            for _ in 0..(d as u32).min(PsnBits::<4>::SPAN) {
                if self.resent.get(q) {
                    if let Some(&e) = self.first.get(Self::slot(q)) {
                        if self.ago(e) < self.ago(self.answered) {
                            self.answered = e;
                        }
                    }
                }
                q = q.add(1);
            }
        }
        self.resent.advance_to(comp);
    }

    /// A tail-loss probe of PSN `psn` was sent.
    pub fn probe_sent(&mut self, psn: Psn) {
        self.probes = self.probes.wrapping_add(1);
        self.probed = Some(psn);
        if self.ago(self.answered) > PROBE_LAG {
            self.answered = self.probes.wrapping_sub(PROBE_LAG);
        }
    }

    /// Whether the SACK [`SackTx::begin`] announced makes PSN `p` go out again.
    pub fn resend(&mut self, p: Psn) -> bool {
        if self.held(p) {
            return false;
        }
        self.cur.set(p);
        if let Some(new) = self.resent.set(p) {
            let i = Self::slot(p);
            if let Some(e) = self.epoch.get_mut(i) {
                *e = self.probes;
            }
            if new {
                if let Some(e) = self.first.get_mut(i) {
                    *e = self.probes;
                }
            }
        }
        true
    }

    /// `p`'s index in `epoch`.
    fn slot(p: Psn) -> usize {
        (p.get() % PsnBits::<4>::SPAN) as usize
    }

    /// The SACK being handled leaves `p` alone (see [`SackTx`]).
    fn held(&self, p: Psn) -> bool {
        let probe = match self.kind {
            Kind::Incremental => return false,
            Kind::Full => None,
            Kind::Answer(j) => Some(j),
        };
        if self.cur.get(p) || self.prev.get(p) {
            return true;
        }
        // Resent after probe `j` went out: it may still be on its way.
        probe.is_some_and(|j| {
            self.resent.get(p)
                && self
                    .epoch
                    .get(Self::slot(p))
                    .is_some_and(|&e| self.ago(e) <= self.ago(j))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::sel::REORDER;
    use super::*;

    #[test]
    fn keeps_and_reports_settled_holes_once() {
        let mut k = Keeper::new(Psn::new(10), 48, 8);
        // 10 is missing; 11.. arrive. The hole is reported once enough later PSNs came.
        let mut sacks = Vec::new();
        for p in 11..20 {
            match k.arrive(Psn::new(p), false, false) {
                Arrive::Keep {
                    answer_probe,
                    again,
                    spurious,
                } => {
                    assert!(!answer_probe && again.is_none() && !spurious);
                }
                a => panic!("{a:?}"),
            }
            if let Some(s) = k.stored() {
                sacks.push((p, s));
            }
        }
        assert_eq!(sacks.len(), 1, "{sacks:?}");
        let (at, s) = sacks[0];
        assert_eq!(at, 10 + REORDER);
        assert_eq!(s.iter().collect::<Vec<_>>(), [Psn::new(10)]);
        assert_eq!(
            k.arrive(Psn::new(12), false, false),
            Arrive::Duplicate {
                answer_probe: false
            }
        );
        // A probe gets every hole.
        assert_eq!(k.probe_answer().map(|s| s.count()), Some(1));
        // The original of the reported hole arrives after all: a spurious report.
        assert!(k.filled(Psn::new(10), false));
        assert!(!k.filled(Psn::new(10), true));
    }

    #[test]
    fn at_the_limit_holes_wait_for_the_batch_end() {
        let mut k = Keeper::new(Psn::new(0), 48, 8);
        assert!(matches!(
            k.arrive(Psn::new(5), false, false),
            Arrive::Keep { .. }
        ));
        k.store_failed(Psn::new(5));
        for p in 6..12 {
            assert!(matches!(
                k.arrive(Psn::new(p), false, false),
                Arrive::Keep { .. }
            ));
            assert_eq!(k.stored(), None);
        }
        // The batch's end names every hole from the expected PSN, 5 included.
        let s = k.batch_end(false).map(|s| s.iter().collect::<Vec<_>>());
        assert_eq!(s, Some((0..6).map(Psn::new).collect::<Vec<_>>()));
        assert_eq!(k.batch_end(false), None);
        // Beyond the window: dropped.
        assert_eq!(k.arrive(Psn::new(100_000), false, false), Arrive::Limit);
    }

    #[test]
    fn catching_up() {
        let mut k = Keeper::new(Psn::new(0), 48, 8);
        for p in [2, 3, 5] {
            assert!(matches!(
                k.arrive(Psn::new(p), false, false),
                Arrive::Keep { .. }
            ));
        }
        // 0 and 1 executed: the window moves past them, and 2 (kept) is next.
        let step = |release, process| CatchUp::Step {
            release: Psn::new(release),
            process,
        };
        assert_eq!(k.catch_up(Psn::new(2)), step(0, false));
        assert_eq!(k.catch_up(Psn::new(2)), step(1, true));
        assert_eq!(k.catch_up(Psn::new(2)), CatchUp::Done);
        // 2 and 3 processed in turn; 4 is a hole.
        assert_eq!(k.catch_up(Psn::new(3)), step(2, true));
        assert_eq!(k.catch_up(Psn::new(4)), step(3, false));
        assert_eq!(k.catch_up(Psn::new(4)), CatchUp::Done);
        // The expected PSN jumped far away (a modify).
        assert_eq!(k.catch_up(Psn::new(100_000)), CatchUp::Restart);
        assert_eq!(k.catch_up(Psn::new(1)), CatchUp::Restart);
    }

    /// A SACK with the completer at `comp` before and after it.
    fn at(t: &mut SackTx, full: bool, comp: u32, now: u64, hold: u64) {
        t.begin(full, Psn::new(comp), Psn::new(comp), now, hold)
    }

    #[test]
    fn sack_resends() {
        let mut t = SackTx::new(Psn::new(0));
        at(&mut t, false, 0, 100, 10);
        assert!(t.resend(Psn::new(3)));
        assert!(t.resend(Psn::new(3)));
        // A full SACK skips what an incremental one just resent, and what it resent.
        at(&mut t, true, 0, 100, 10);
        assert!(!t.resend(Psn::new(3)));
        assert!(t.resend(Psn::new(4)));
        at(&mut t, true, 1, 105, 10);
        assert!(!t.resend(Psn::new(3)));
        assert!(!t.resend(Psn::new(4)));
        // One period later they are the previous period's: still left alone.
        at(&mut t, true, 1, 112, 10);
        assert!(!t.resend(Psn::new(3)));
        assert!(t.resend(Psn::new(5)));
        // Two periods after their resend, a full SACK resends them.
        at(&mut t, true, 1, 122, 10);
        assert!(t.resend(Psn::new(3)));
        assert!(t.resend(Psn::new(4)));
        assert!(!t.resend(Psn::new(5)));
        // A long silence forgets both periods.
        at(&mut t, true, 1, 200, 10);
        assert!(t.resend(Psn::new(3)));
        assert!(t.resend(Psn::new(5)));
        // PSNs acknowledged leave the maps: the PSN 256 later is a different one.
        at(&mut t, true, 200, 201, 10);
        assert!(t.resend(Psn::new(259)));
    }

    #[test]
    fn probe_answers_follow_the_probes_order() {
        // A round-trip hold of 1: only the probes' order holds anything back. The probes
        // carry PSN 20, the last one sent.
        let mut t = SackTx::new(Psn::new(0));
        let last = Psn::new(20);
        at(&mut t, false, 0, 10, 1);
        assert!(t.resend(Psn::new(3)));
        // Two probes go out in a silence; their answers come in turn.
        t.probe_sent(last);
        t.probe_sent(last);
        at(&mut t, true, 0, 20, 1);
        // PSN 3 went out before the first probe: it is lost, resend it.
        assert!(t.resend(Psn::new(3)));
        assert!(t.resend(Psn::new(5)));
        at(&mut t, true, 0, 30, 1);
        // The second probe's answer: they went out after it, and may be on their way.
        assert!(!t.resend(Psn::new(3)));
        assert!(!t.resend(Psn::new(5)));
        // No probe waits for an answer: the round-trip hold alone (over).
        at(&mut t, true, 0, 40, 1);
        assert!(t.resend(Psn::new(3)));
        // A third probe, whose answer is lost; PSNs 6 and 9 are resent after it, then a
        // fourth probe, then PSN 8.
        t.probe_sent(last);
        at(&mut t, false, 0, 50, 1);
        assert!(t.resend(Psn::new(6)));
        assert!(t.resend(Psn::new(9)));
        t.probe_sent(last);
        at(&mut t, false, 0, 60, 1);
        assert!(t.resend(Psn::new(8)));
        // A plain ACK passes PSN 6, first resent after the third probe: that probe
        // reached the responder, and its answer will not come. The next full SACK
        // (which acknowledges nothing more) answers the fourth: PSN 9 went out before it
        // and is lost, PSN 8 after it.
        t.begin(true, Psn::new(7), Psn::new(7), 70, 1);
        assert!(t.resend(Psn::new(9)));
        assert!(!t.resend(Psn::new(8)));
    }

    #[test]
    fn probes_without_a_full_answer() {
        let mut t = SackTx::new(Psn::new(0));
        at(&mut t, false, 0, 10, 1);
        assert!(t.resend(Psn::new(3)));
        // Probes that found no hole were answered by plain ACKs, which passed their PSN.
        t.probe_sent(Psn::new(5));
        t.probe_sent(Psn::new(5));
        at(&mut t, false, 6, 20, 1);
        assert!(t.resend(Psn::new(8)));
        // Later a full SACK no probe waits for: the round-trip hold alone (over).
        at(&mut t, true, 6, 30, 1);
        assert!(t.resend(Psn::new(8)));
        // 70,000 probes whose answers never come (the counts wrap): the matching stays
        // within the last 64, and a repair sent after the latest is still held.
        for _ in 0..70_000 {
            t.probe_sent(Psn::new(40));
        }
        at(&mut t, false, 6, 40, 1);
        assert!(t.resend(Psn::new(9)));
        at(&mut t, true, 6, 50, 1);
        assert!(!t.resend(Psn::new(9)));
        // ... and one sent before the probe that full SACK answers is resent.
        assert!(t.resend(Psn::new(8)));
    }
}
