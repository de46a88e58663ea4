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

/// The selective requester's SACK rule.
///
/// A SACK the responder sends on its own (incremental) names holes it has just found:
/// each PSN it names goes out again. A probe's answer (full) names every hole, repairs
/// still on their way included; it resends only the PSNs not resent recently. Recently
/// is a period of at least `hold` (the caller's round-trip bound, see
/// [`SackTx::begin`]): a resent PSN is left alone by full SACKs for one to two periods,
/// the time its repair needs to be seen. Without it, on a path whose round trips vary
/// far beyond the probe delay, every probe's answer resent every hole again (one lost
/// packet cost five resends on a slow, loaded guest). A repair that is lost is still
/// found: the responder reports a hole again when a later retransmission overtakes its
/// repair, and the period ends.
#[derive(Clone, Copy, Debug)]
pub struct SackTx {
    /// PSNs resent in the current period.
    cur: PsnBits<4>,
    /// PSNs resent in the period before it.
    prev: PsnBits<4>,
    /// When the current period started (the caller's clock).
    since: u64,
}

impl SackTx {
    /// Nothing resent, from `comp`.
    pub const fn new(comp: Psn) -> Self {
        SackTx {
            cur: PsnBits::new(comp),
            prev: PsnBits::new(comp),
            since: 0,
        }
    }

    /// A SACK arrived at `now` and its cumulative part moved the completer to `comp`.
    /// A period lasts `hold` (same unit as `now`): once it is over, the PSNs resent in it
    /// become the previous period's, and those of the period before are forgotten.
    pub fn begin(&mut self, comp: Psn, now: u64, hold: u64) {
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
    }

    /// Whether the SACK (`full`: a probe's answer) makes PSN `p` go out again.
    pub fn resend(&mut self, full: bool, p: Psn) -> bool {
        if full && (self.cur.get(p) || self.prev.get(p)) {
            return false;
        }
        self.cur.set(p);
        true
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

    #[test]
    fn sack_resends() {
        let mut t = SackTx::new(Psn::new(0));
        t.begin(Psn::new(0), 100, 10);
        assert!(t.resend(false, Psn::new(3)));
        assert!(t.resend(false, Psn::new(3)));
        // A full SACK skips what an incremental one just resent, and what it resent.
        assert!(!t.resend(true, Psn::new(3)));
        assert!(t.resend(true, Psn::new(4)));
        t.begin(Psn::new(1), 105, 10);
        assert!(!t.resend(true, Psn::new(3)));
        assert!(!t.resend(true, Psn::new(4)));
        // One period later they are the previous period's: still left alone.
        t.begin(Psn::new(1), 112, 10);
        assert!(!t.resend(true, Psn::new(3)));
        assert!(t.resend(true, Psn::new(5)));
        // Two periods after their resend, a probe's answer resends them.
        t.begin(Psn::new(1), 122, 10);
        assert!(t.resend(true, Psn::new(3)));
        assert!(t.resend(true, Psn::new(4)));
        assert!(!t.resend(true, Psn::new(5)));
        // A long silence forgets both periods.
        t.begin(Psn::new(1), 200, 10);
        assert!(t.resend(true, Psn::new(3)));
        assert!(t.resend(true, Psn::new(5)));
        // PSNs acknowledged leave the maps: the PSN 256 later is a different one.
        t.begin(Psn::new(200), 201, 10);
        assert!(t.resend(true, Psn::new(259)));
    }
}
