// SPDX-License-Identifier: GPL-2.0
//! How a QP under `rate` starts (an addition to source document 003).
//!
//! Until its first CNP a `rate` QP knows nothing of its path and sends at line rate, so a
//! QP that joins a loaded bottleneck puts its whole PSN window into the bottleneck's
//! queue before the first CNP can bring it to its share: 128 packets, on top of the
//! queue the other flows keep. [`StartWindow`] bounds what such a QP has unacknowledged:
//! `rate_init_win` packets at first, one more for every packet acknowledged (so the bound
//! doubles per round trip, as in TCP's slow start), until it reaches the transport's
//! window, or the first CNP (which sets a rate) ends it. A lone QP reaches the whole
//! window after log2(window / `rate_init_win`) round trips: three at the default 16.
//!
//! PSNs are the transport's 24-bit sequence numbers ([`Psn`]): the bound holds between
//! the oldest unacknowledged PSN and the next one to send.

use super::super::psn::Psn;

/// The start window of one QP (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartWindow {
    /// Packets that may be unacknowledged now.
    limit: u32,
    /// The oldest unacknowledged PSN when last looked at (None: not yet).
    comp: Option<Psn>,
    /// Ended: by a CNP, or by reaching the transport's window.
    done: bool,
}

impl StartWindow {
    /// A start window of `init` packets (at least one).
    pub const fn new(init: u32) -> StartWindow {
        StartWindow {
            limit: if init == 0 { 1 } else { init },
            comp: None,
            done: false,
        }
    }

    /// Whether the next packet (PSN `next`) may go while `comp` is the oldest
    /// unacknowledged PSN and `max` the transport's window. Grows the bound by what was
    /// acknowledged since the last call, and ends the start window once the bound reaches
    /// `max`.
    pub fn allows(&mut self, next: Psn, comp: Psn, max: u32) -> bool {
        if self.done {
            return true;
        }
        if let Some(old) = self.comp {
            // (A PSN that went back, a reset, adds nothing.)
            if let Ok(acked) = u32::try_from(comp.diff(old)) {
                self.limit = self.limit.saturating_add(acked);
            }
        }
        self.comp = Some(comp);
        if self.limit >= max {
            self.done = true;
            return true;
        }
        // (`next` before `comp`: going back N, nothing outstanding beyond it.)
        match u32::try_from(next.diff(comp)) {
            Ok(out) => out < self.limit,
            Err(_) => true,
        }
    }

    /// How many packets may go between AckReqs, at most `max`: half the bound while the
    /// start window is active. A responder acknowledges only the packets that ask for it
    /// (and the end of a message), so a bound's worth of packets of one long message
    /// without an AckReq would wait for the retransmission timer.
    pub fn ack_every(&self, max: u32) -> u32 {
        if self.done {
            max
        } else {
            (self.limit / 2).clamp(1, max.max(1))
        }
    }

    /// The first CNP: the rate it sets governs from now on.
    pub fn end(&mut self) {
        self.done = true;
    }

    /// Whether the start window still bounds the QP.
    pub fn active(&self) -> bool {
        !self.done
    }

    /// The current bound, packets.
    pub fn limit(&self) -> u32 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Sends while allowed, acknowledging everything once per round trip: the bound
    /// doubles per round trip and the window opens after log2(max / init) of them.
    #[test]
    fn doubles_per_round_trip() {
        let mut w = StartWindow::new(16);
        let (mut next, mut comp) = (Psn::new(0xff_fff0), Psn::new(0xff_fff0));
        let mut per_rtt = Vec::new();
        for _ in 0..10 {
            let mut n = 0;
            while w.allows(next, comp, 128) && n < 1000 {
                next = next.add(1);
                n += 1;
            }
            per_rtt.push(n);
            comp = next;
            if !w.active() {
                break;
            }
        }
        assert_eq!(per_rtt, [16, 32, 64, 1000]);
    }

    /// A responder that acknowledges only the packets asking for it (one long message):
    /// every round trip acknowledges something, and the window still opens.
    #[test]
    fn acks_only_when_asked() {
        for init in [1, 2, 3, 16, 127] {
            let mut w = StartWindow::new(init);
            let (mut next, mut comp) = (Psn::new(0), Psn::new(0));
            let mut noack = 0;
            let mut rounds = 0;
            while w.active() {
                let mut asked = None;
                while w.active() && w.allows(next, comp, 128) {
                    noack += 1;
                    if noack >= w.ack_every(64) {
                        noack = 0;
                        asked = Some(next);
                    }
                    next = next.add(1);
                }
                if !w.active() {
                    break;
                }
                // The responder's ACK covers the last packet that asked for one.
                let Some(acked) = asked else {
                    panic!("init {init}: a window's worth without an AckReq");
                };
                comp = acked.add(1);
                rounds += 1;
                assert!(rounds < 40, "init {init}: the window never opened");
            }
            assert_eq!(w.ack_every(64), 64);
        }
    }

    #[test]
    fn cnp_ends_it() {
        let mut w = StartWindow::new(4);
        let p = Psn::new(7);
        assert!(w.allows(p, p, 128));
        assert!(!w.allows(p.add(4), p, 128));
        w.end();
        assert!(!w.active());
        assert!(w.allows(p.add(100), p, 128));
    }

    #[test]
    fn going_back_and_zero() {
        let mut w = StartWindow::new(0);
        assert_eq!(w.limit(), 1);
        let p = Psn::new(100);
        assert!(w.allows(p, p, 128));
        assert!(!w.allows(p.add(1), p, 128));
        // Going back N: the next PSN is the oldest unacknowledged one.
        assert!(w.allows(p, p, 128));
        // An acknowledgement of 3 packets grows the bound by 3.
        assert!(w.allows(p.add(3), p.add(3), 128));
        assert_eq!(w.limit(), 4);
        // The oldest unacknowledged PSN going back (a reset) adds nothing.
        assert!(w.allows(p, p, 128));
        assert_eq!(w.limit(), 4);
    }

    proptest! {
        /// Never more outstanding than the bound, the bound never shrinks, and it never
        /// bounds beyond the transport's window.
        #[test]
        fn bounded(init in 0u32..200, steps in proptest::collection::vec((0u32..40, 0u32..40), 1..200), start in any::<u32>()) {
            let max = 128;
            let mut w = StartWindow::new(init);
            let mut comp = Psn::new(start);
            let mut next = comp;
            let mut last = w.limit();
            for (send, ack) in steps {
                for _ in 0..send {
                    if !w.allows(next, comp, max) {
                        break;
                    }
                    next = next.add(1);
                }
                let out = next.diff(comp) as u32;
                prop_assert!(!w.active() || out <= w.limit().max(1));
                prop_assert!(w.limit() >= last);
                last = w.limit();
                comp = comp.add(ack.min(out));
                // (Looked at, a bound of the transport's window or more ends it.)
                if w.active() && send > 0 {
                    prop_assert!(w.limit() < max);
                }
            }
        }
    }
}
