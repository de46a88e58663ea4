// SPDX-License-Identifier: GPL-2.0
//! READ response repair on the requester: which response PSNs to ask for again, and when.
//!
//! With selective retransmission a READ's responses are placed whatever their order and
//! the requester, not the responder, finds the lost ones: it sends a READ request again
//! for each contiguous hole (flagged `XF_RETX`), at the hole's PSN and offset. The rules:
//!
//! * A hole inside the READ of the response that reveals it is a loss at once: the
//!   responder sends one READ's responses in one burst, in order.
//! * A hole in an earlier READ (whose burst another CPU may still be delivering) waits
//!   for the path's reordering estimate of later responses.
//! * A resent response that overtakes the answers to holes asked for before it (in its
//!   READ or an earlier one: asked in PSN order, answered in order) shows those answers
//!   were lost too: they are asked for once more, each PSN once this way.
//! * A lost READ request shows as a hole over its whole span; it is asked for again at
//!   most once between two probes.
//! * Each tail-loss probe asks for every known hole (before the highest response
//!   received); every second probe without a READ response in between also asks for the
//!   last response of the READ after them. The responder answers in order, so that one
//!   arrives after any of that READ's responses still on their way and reveals only the
//!   lost ones as holes.
//!
//! The send queue stays the caller's: [`ReadPort`] finds READs and sends the requests.

use super::psn::Psn;
use super::sel::{PsnBits, Reordering};

/// Which missing response PSNs [`ReadRepair::rerequest`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ask {
    /// Those not asked for since they went missing.
    New,
    /// Every missing one (a probe, a lost request).
    Missing,
    /// Only those asked for already (their answer was lost too).
    Asked,
}

impl Ask {
    /// The PSNs to ask for among a word of received bits and one of asked bits.
    const fn pick(self, got: u64, asked: u64) -> u64 {
        match self {
            Ask::New => !(got | asked),
            Ask::Missing => !got,
            Ask::Asked => !got & asked,
        }
    }
}

/// An outstanding READ, as the repair sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadSpan {
    /// PSN of its first response (the request's PSN).
    pub first: Psn,
    /// PSN of its last response.
    pub last: Psn,
    /// The caller's handle for it (the driver's send-queue slot).
    pub tag: u32,
}

/// The requester around a [`ReadRepair`]: its outstanding READs and a way to ask them
/// again.
pub trait ReadPort {
    /// The outstanding READ whose responses include `psn`.
    fn span(&self, psn: Psn) -> Option<ReadSpan>;
    /// Sends READ `span`'s request again for the `n` responses from `psn`.
    fn ask(&mut self, span: &ReadSpan, psn: Psn, n: u32);
}

/// Most holes one [`ReadRepair::rerequest`] asks for (the bitmaps' span: a bound on the
/// work a burst of responses can cause).
const ASK_BUDGET: u32 = PsnBits::<64>::SPAN;

/// The requester's record of READ responses received and asked for again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadRepair {
    /// Response PSNs received beyond the completion PSN.
    bits: PsnBits<64>,
    /// Response PSNs asked for again since they went missing.
    asked: PsnBits<64>,
    /// Response PSNs asked for again since the last probe. A lost request reported
    /// again in that time is not asked for once more: the answer is likely on its way,
    /// and each time costs the whole READ.
    recent: PsnBits<64>,
    /// Missing responses before this PSN were asked for a second time because a later
    /// resent response overtook theirs.
    again: Psn,
    /// Highest response PSN received (the one before the first, at first).
    high: Psn,
    /// How many later responses reveal a hole in an earlier READ.
    reorder: Reordering,
    /// Probes since the last READ response.
    probes: u32,
}

impl ReadRepair {
    /// Nothing received or asked, from `psn`; holes in earlier READs wait for
    /// [`Reordering`]`::new(reorder_max, decay)` later responses.
    pub const fn new(psn: Psn, reorder_max: u32, decay: u32) -> Self {
        ReadRepair {
            bits: PsnBits::new(psn),
            asked: PsnBits::new(psn),
            recent: PsnBits::new(psn),
            again: psn,
            high: psn.sub(1),
            reorder: Reordering::new(reorder_max, decay),
            probes: 0,
        }
    }

    /// Starts again from `psn` (a new send queue PSN), keeping the reordering estimate
    /// (the path's) and the probe count.
    pub fn restart(&mut self, psn: Psn) {
        self.bits = PsnBits::new(psn);
        self.asked = PsnBits::new(psn);
        self.recent = PsnBits::new(psn);
        self.again = psn;
        self.high = psn.sub(1);
    }

    /// Forgets the PSNs before `comp`, the completion PSN.
    pub fn advance_to(&mut self, comp: Psn) {
        self.bits.advance_to(comp);
    }

    /// Whether response `psn` was received (and not yet forgotten).
    pub fn has(&self, psn: Psn) -> bool {
        self.bits.get(psn)
    }

    /// The current reordering threshold, in responses.
    pub const fn reordering(&self) -> u32 {
        self.reorder.get()
    }

    /// Whether response `psn` is one to place: not before `comp`, not received yet and
    /// inside the window the bitmaps cover.
    pub fn wanted(&mut self, comp: Psn, psn: Psn) -> bool {
        self.bits.advance_to(comp);
        !psn.before(comp) && !self.bits.get(psn) && self.bits.covers(psn)
    }

    /// Records response `psn`, placed; `retx`: it was flagged as resent. Returns whether
    /// it filled a hole asked for again with the original response (asked too early).
    pub fn received(&mut self, psn: Psn, retx: bool) -> bool {
        self.bits.set(psn);
        if psn.after(self.high) {
            self.high = psn;
        }
        if !self.asked.get(psn) {
            return false;
        }
        self.reorder.filled(retx);
        !retx
    }

    /// A READ response arrived (any: it ends a silence the probes count).
    pub fn response_seen(&mut self) {
        self.probes = 0;
    }

    /// Asks for the holes response `psn` (of the READ starting at `first`, flagged
    /// resent if `retx`) reveals, once it was placed and `comp` advanced. Returns whether
    /// it asked again for holes whose answers were lost.
    pub fn after_response(
        &mut self,
        comp: Psn,
        first: Psn,
        psn: Psn,
        retx: bool,
        port: &mut impl ReadPort,
    ) -> bool {
        let mut again = false;
        if retx {
            let from = self.again.later(comp);
            if from.before(psn) {
                again = self.rerequest(comp, from, psn, Ask::Asked, port) > 0;
                self.again = psn;
            }
        }
        let same_from = first.later(comp);
        if same_from.before(psn) {
            self.rerequest(comp, same_from, psn, Ask::New, port);
        }
        let lim = psn.sub(self.reorder.get().saturating_sub(1));
        let lim = if lim.before(first) { lim } else { first };
        if comp.before(lim) {
            self.rerequest(comp, comp, lim, Ask::New, port);
        }
        again
    }

    /// The request of READ `span` at `psn` was reported lost: asks for all its missing
    /// responses, unless asked for since the last probe.
    pub fn lost_request(&mut self, comp: Psn, span: &ReadSpan, psn: Psn, port: &mut impl ReadPort) {
        self.recent.advance_to(comp);
        if psn == span.first && !self.recent.get(psn) {
            self.rerequest(comp, psn, span.last.add(1), Ask::Missing, port);
        }
    }

    /// A tail-loss probe fires; `last` is the last PSN requested. Asks for the known
    /// holes and, every second probe without a response, the last response of the READ
    /// after them (unless that is `last`, which the probe itself asks for).
    pub fn probe(&mut self, comp: Psn, last: Psn, port: &mut impl ReadPort) {
        self.probes = self.probes.wrapping_add(1);
        self.bits.advance_to(comp);
        self.recent = PsnBits::new(comp);
        let edge = if self.high.before(comp) {
            comp
        } else {
            self.high.add(1)
        };
        if comp.before(edge) {
            self.rerequest(comp, comp, edge, Ask::Missing, port);
        }
        if self.probes.is_multiple_of(2) {
            if let Some(s) = port.span(edge) {
                if s.last != last {
                    self.rerequest(comp, s.last, s.last.add(1), Ask::Missing, port);
                }
            }
        }
    }

    /// Asks again for the response PSNs missing in `[from, to)` that `ask` selects: one
    /// request per contiguous hole within one READ. Returns the number of requests.
    fn rerequest(
        &mut self,
        comp: Psn,
        from: Psn,
        to: Psn,
        ask: Ask,
        port: &mut impl ReadPort,
    ) -> u32 {
        self.asked.advance_to(comp);
        let mut p = from;
        let mut budget = ASK_BUDGET;
        let mut sent = 0;
        while budget > 0 {
            budget -= 1;
            // A word of `bits` and one of `asked` at a time (this runs for every
            // response that arrives while a hole is open).
            let Some(q) = self.bits.find(&self.asked, p, to, |g, a| ask.pick(g, a)) else {
                break;
            };
            p = q;
            let Some(s) = port.span(p) else {
                p = p.add(1);
                continue;
            };
            // (A lost READ request shows as a hole over its whole span: only responses
            // of later READs reveal it, so `to` lies beyond it and the new request spans
            // the rest, as the responder, which never saw the original, expects.)
            let stop = to.earlier(s.last.add(1));
            let end = self
                .bits
                .find(&self.asked, p, stop, |g, a| !ask.pick(g, a))
                .unwrap_or(stop);
            let mut k = p;
            while k.before(end) {
                self.asked.set(k);
                self.recent.set(k);
                k = k.add(1);
            }
            let n = end.diff(p).max(1) as u32;
            port.ask(&s, p, n);
            sent += 1;
            p = end.later(p.add(1));
        }
        sent
    }
}
