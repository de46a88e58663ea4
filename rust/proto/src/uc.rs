// SPDX-License-Identifier: GPL-2.0
//! Unreliable connected (UC) service: SEND and RDMA WRITE between two connected QPs
//! without acknowledgements or retransmission (IBTA 9.7.2, 9.8). The requester sends
//! each message once and completes it when its last packet is sent; the responder takes
//! packets in PSN order and, on a gap, drops the message in progress and everything up
//! to the next message's first packet, where it resynchronises.

use super::opcode::op;
use super::psn::Psn;

/// The UC opcode of an RC SEND or WRITE opcode (UC mirrors them at 0x20).
pub const fn opcode(rc: u8) -> u8 {
    rc | op::UC_SEND_FIRST
}

/// What the responder does with a UC packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UcRx {
    /// Execute it (place its payload, complete the message on its last packet).
    Execute,
    /// Execute it as the first packet of a new message, after dropping the message in
    /// progress (its receive WQE is used again or, from an SRQ, completed in error; a
    /// WRITE's bytes stay where they were placed).
    Restart,
    /// Drop it (and the message in progress, if any).
    Drop,
}

/// The responder's position in the packet sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UcResponder {
    /// The PSN the next packet should carry.
    pub epsn: Psn,
    /// A message is in progress (its first packet was executed, its last not yet).
    pub in_msg: bool,
}

impl UcResponder {
    /// Expecting PSN `psn` (`IB_QP_RQ_PSN`), no message in progress.
    pub const fn new(psn: Psn) -> Self {
        UcResponder {
            epsn: psn,
            in_msg: false,
        }
    }

    /// A packet with PSN `psn` arrived; `first`/`last`: it is the first/last packet of
    /// its message (both for an ONLY opcode).
    pub fn on_packet(&mut self, psn: Psn, first: bool, last: bool) -> UcRx {
        let in_seq = psn == self.epsn;
        let was = self.in_msg;
        if !(first || (in_seq && was)) {
            // A middle or last packet after a gap, or of a message not begun here.
            self.in_msg = false;
            if !in_seq {
                // Resynchronise on the next first packet, whatever its PSN.
                self.epsn = psn.add(1);
            }
            return UcRx::Drop;
        }
        self.epsn = psn.add(1);
        self.in_msg = !last;
        if first && was {
            UcRx::Restart
        } else {
            UcRx::Execute
        }
    }

    /// The message in progress is given up (an error executing it).
    pub fn abort(&mut self) {
        self.in_msg = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn in_order_messages() {
        let mut r = UcResponder::new(Psn::new(10));
        assert_eq!(r.on_packet(Psn::new(10), true, false), UcRx::Execute);
        assert_eq!(r.on_packet(Psn::new(11), false, false), UcRx::Execute);
        assert_eq!(r.on_packet(Psn::new(12), false, true), UcRx::Execute);
        assert!(!r.in_msg);
        assert_eq!(r.on_packet(Psn::new(13), true, true), UcRx::Execute);
        assert_eq!(r.epsn, Psn::new(14));
    }

    #[test]
    fn gap_drops_until_next_first() {
        let mut r = UcResponder::new(Psn::new(0));
        assert_eq!(r.on_packet(Psn::new(0), true, false), UcRx::Execute);
        // PSN 1 lost: 2 and 3 of the same message are dropped.
        assert_eq!(r.on_packet(Psn::new(2), false, false), UcRx::Drop);
        assert_eq!(r.on_packet(Psn::new(3), false, true), UcRx::Drop);
        // The next message starts wherever it starts.
        assert_eq!(r.on_packet(Psn::new(4), true, true), UcRx::Execute);
        // A first packet while a message is in progress restarts.
        assert_eq!(r.on_packet(Psn::new(5), true, false), UcRx::Execute);
        assert_eq!(r.on_packet(Psn::new(7), true, true), UcRx::Restart);
        assert!(!r.in_msg);
        // Duplicates and old packets are dropped too.
        assert_eq!(r.on_packet(Psn::new(7), false, true), UcRx::Drop);
    }

    #[test]
    fn opcodes_mirror_rc() {
        assert_eq!(opcode(op::RC_SEND_ONLY_IMM), op::UC_SEND_ONLY_IMM);
        assert_eq!(opcode(op::RC_WRITE_FIRST), op::UC_WRITE_FIRST);
    }

    #[test]
    fn wraps() {
        let mut r = UcResponder::new(Psn::new(0xff_ffff));
        assert_eq!(r.on_packet(Psn::new(0xff_ffff), true, false), UcRx::Execute);
        assert_eq!(r.on_packet(Psn::new(0), false, true), UcRx::Execute);
    }

    proptest! {
        /// Over any packet sequence, a packet is executed only as a first packet or as
        /// the in-sequence continuation of a message begun and not ended.
        #[test]
        fn executes_only_continuations(pkts in proptest::collection::vec(
            (0u32..8, any::<bool>(), any::<bool>()), 0..60)) {
            let mut r = UcResponder::new(Psn::new(0));
            let mut in_msg = false;
            let mut expect = Psn::new(0);
            for (psn, first, last) in pkts {
                let psn = Psn::new(psn);
                let a = r.on_packet(psn, first, last);
                if a != UcRx::Drop {
                    prop_assert!(first || (in_msg && psn == expect));
                    prop_assert_eq!(a == UcRx::Restart, first && in_msg);
                    in_msg = !last;
                    expect = psn.add(1);
                } else {
                    prop_assert!(!first);
                    in_msg = false;
                }
            }
        }
    }
}
