// SPDX-License-Identifier: GPL-2.0
//! The opcode table: for every BTH opcode, which extension headers follow the BTH (and at
//! which offsets), whether it carries payload, and its role in a message.
//!
//! One table drives parsing, building and the state machines, as `rxe_opcode.c` does for
//! rdma_rxe. Unknown opcodes have no entry and are rejected by [`info`].

/// Length of the base transport header.
pub const BTH_LEN: usize = 12;
/// RDMA extended transport header.
pub const RETH_LEN: usize = 16;
/// ACK extended transport header.
pub const AETH_LEN: usize = 4;
/// Atomic extended transport header.
pub const ATMETH_LEN: usize = 28;
/// Atomic acknowledge extended transport header.
pub const ATMACK_LEN: usize = 8;
/// Datagram extended transport header.
pub const DETH_LEN: usize = 8;
/// Immediate data.
pub const IMMDT_LEN: usize = 4;
/// Invalidate extended transport header.
pub const IETH_LEN: usize = 4;
/// FLUSH extended transport header.
pub const FETH_LEN: usize = 4;
/// Invariant CRC trailer.
pub const ICRC_LEN: usize = 4;

/// Header-presence and role flags of an opcode.
pub mod flags {
    /// RETH follows.
    pub const RETH: u32 = 1 << 0;
    /// AETH follows.
    pub const AETH: u32 = 1 << 1;
    /// AtomicETH follows.
    pub const ATMETH: u32 = 1 << 2;
    /// AtomicAckETH follows.
    pub const ATMACK: u32 = 1 << 3;
    /// DETH follows.
    pub const DETH: u32 = 1 << 4;
    /// Immediate data follows.
    pub const IMMDT: u32 = 1 << 5;
    /// IETH follows.
    pub const IETH: u32 = 1 << 6;
    /// Carries payload.
    pub const PAYLOAD: u32 = 1 << 7;
    /// A request (travels requester to responder).
    pub const REQ: u32 = 1 << 8;
    /// A response (ACK, READ response, atomic ACK).
    pub const RESP: u32 = 1 << 9;
    /// First packet of a multi-packet message.
    pub const FIRST: u32 = 1 << 10;
    /// Middle packet.
    pub const MIDDLE: u32 = 1 << 11;
    /// Last packet of a multi-packet message.
    pub const LAST: u32 = 1 << 12;
    /// Only packet of a message (first and last).
    pub const ONLY: u32 = FIRST | LAST;
    /// SEND family.
    pub const SEND: u32 = 1 << 13;
    /// RDMA WRITE family.
    pub const WRITE: u32 = 1 << 14;
    /// RDMA READ request.
    pub const READ: u32 = 1 << 15;
    /// Atomic request.
    pub const ATOMIC: u32 = 1 << 16;
    /// Consumes a receive WQE at the responder.
    pub const RWR: u32 = 1 << 17;
    /// Congestion notification packet.
    pub const CNP: u32 = 1 << 18;
    /// FETH follows.
    pub const FETH: u32 = 1 << 19;
    /// FLUSH request.
    pub const FLUSH: u32 = 1 << 20;
    /// ATOMIC WRITE request.
    pub const ATOMIC_WRITE: u32 = 1 << 21;
}

/// Transport service of an opcode (top three bits of the opcode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Reliable connected.
    Rc,
    /// Unreliable connected.
    Uc,
    /// Unreliable datagram.
    Ud,
    /// RoCEv2 congestion notification.
    Cnp,
}

/// What the table says about one opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// The opcode byte.
    pub opcode: u8,
    /// Transport service.
    pub transport: Transport,
    /// Bitwise OR of [`flags`].
    pub flags: u32,
}

impl OpInfo {
    /// `true` if every bit of `f` is set.
    #[inline]
    pub const fn has(&self, f: u32) -> bool {
        self.flags & f == f
    }

    /// Offset (from the start of the BTH) of extension header `hdr`, one of the header
    /// flags, or `None` if this opcode does not carry it. Headers appear in IBTA order:
    /// DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH.
    pub const fn offset(&self, hdr: u32) -> Option<usize> {
        if self.flags & hdr == 0 {
            return None;
        }
        let order = [
            (flags::DETH, DETH_LEN),
            (flags::FETH, FETH_LEN),
            (flags::RETH, RETH_LEN),
            (flags::ATMETH, ATMETH_LEN),
            (flags::AETH, AETH_LEN),
            (flags::ATMACK, ATMACK_LEN),
            (flags::IMMDT, IMMDT_LEN),
            (flags::IETH, IETH_LEN),
        ];
        let mut off = BTH_LEN;
        let mut rest: &[(u32, usize)] = &order;
        while let [(f, len), tail @ ..] = rest {
            if *f == hdr {
                return Some(off);
            }
            if self.flags & *f != 0 {
                off += *len;
            }
            rest = tail;
        }
        None
    }

    /// Total length of BTH plus extension headers.
    pub const fn header_len(&self) -> usize {
        let mut len = BTH_LEN;
        if self.flags & flags::DETH != 0 {
            len += DETH_LEN;
        }
        if self.flags & flags::FETH != 0 {
            len += FETH_LEN;
        }
        if self.flags & flags::RETH != 0 {
            len += RETH_LEN;
        }
        if self.flags & flags::ATMETH != 0 {
            len += ATMETH_LEN;
        }
        if self.flags & flags::AETH != 0 {
            len += AETH_LEN;
        }
        if self.flags & flags::ATMACK != 0 {
            len += ATMACK_LEN;
        }
        if self.flags & flags::IMMDT != 0 {
            len += IMMDT_LEN;
        }
        if self.flags & flags::IETH != 0 {
            len += IETH_LEN;
        }
        len
    }
}

/// The transport service an opcode belongs to (its top three bits: RC, UC, RD, UD, CNP,
/// XRC).
pub const fn transport(opcode: u8) -> u8 {
    opcode & 0xe0
}

/// Opcode constants (IBTA table 38, plus the RoCEv2 CNP).
#[allow(missing_docs)]
pub mod op {
    pub const RC_SEND_FIRST: u8 = 0x00;
    pub const RC_SEND_MIDDLE: u8 = 0x01;
    pub const RC_SEND_LAST: u8 = 0x02;
    pub const RC_SEND_LAST_IMM: u8 = 0x03;
    pub const RC_SEND_ONLY: u8 = 0x04;
    pub const RC_SEND_ONLY_IMM: u8 = 0x05;
    pub const RC_WRITE_FIRST: u8 = 0x06;
    pub const RC_WRITE_MIDDLE: u8 = 0x07;
    pub const RC_WRITE_LAST: u8 = 0x08;
    pub const RC_WRITE_LAST_IMM: u8 = 0x09;
    pub const RC_WRITE_ONLY: u8 = 0x0a;
    pub const RC_WRITE_ONLY_IMM: u8 = 0x0b;
    pub const RC_READ_REQ: u8 = 0x0c;
    pub const RC_READ_RESP_FIRST: u8 = 0x0d;
    pub const RC_READ_RESP_MIDDLE: u8 = 0x0e;
    pub const RC_READ_RESP_LAST: u8 = 0x0f;
    pub const RC_READ_RESP_ONLY: u8 = 0x10;
    pub const RC_ACK: u8 = 0x11;
    pub const RC_ATOMIC_ACK: u8 = 0x12;
    pub const RC_CMP_SWAP: u8 = 0x13;
    pub const RC_FETCH_ADD: u8 = 0x14;
    pub const RC_SEND_LAST_INV: u8 = 0x16;
    pub const RC_SEND_ONLY_INV: u8 = 0x17;
    pub const RC_FLUSH: u8 = 0x1c;
    pub const RC_ATOMIC_WRITE: u8 = 0x1d;
    pub const UC_SEND_FIRST: u8 = 0x20;
    pub const UC_SEND_MIDDLE: u8 = 0x21;
    pub const UC_SEND_LAST: u8 = 0x22;
    pub const UC_SEND_LAST_IMM: u8 = 0x23;
    pub const UC_SEND_ONLY: u8 = 0x24;
    pub const UC_SEND_ONLY_IMM: u8 = 0x25;
    pub const UC_WRITE_FIRST: u8 = 0x26;
    pub const UC_WRITE_MIDDLE: u8 = 0x27;
    pub const UC_WRITE_LAST: u8 = 0x28;
    pub const UC_WRITE_LAST_IMM: u8 = 0x29;
    pub const UC_WRITE_ONLY: u8 = 0x2a;
    pub const UC_WRITE_ONLY_IMM: u8 = 0x2b;
    pub const UD_SEND_ONLY: u8 = 0x64;
    pub const UD_SEND_ONLY_IMM: u8 = 0x65;
    pub const CNP: u8 = 0x81;
}

use flags::*;

/// Flags of the operation part of an opcode (low five bits), shared by RC and UC.
const fn op_flags(low: u8) -> Option<u32> {
    Some(match low {
        0x00 => SEND | REQ | PAYLOAD | FIRST | RWR,
        0x01 => SEND | REQ | PAYLOAD | MIDDLE,
        0x02 => SEND | REQ | PAYLOAD | LAST,
        0x03 => SEND | REQ | PAYLOAD | LAST | IMMDT,
        0x04 => SEND | REQ | PAYLOAD | ONLY | RWR,
        0x05 => SEND | REQ | PAYLOAD | ONLY | RWR | IMMDT,
        0x06 => WRITE | REQ | PAYLOAD | FIRST | RETH,
        0x07 => WRITE | REQ | PAYLOAD | MIDDLE,
        0x08 => WRITE | REQ | PAYLOAD | LAST,
        0x09 => WRITE | REQ | PAYLOAD | LAST | IMMDT | RWR,
        0x0a => WRITE | REQ | PAYLOAD | ONLY | RETH,
        0x0b => WRITE | REQ | PAYLOAD | ONLY | RETH | IMMDT | RWR,
        0x0c => READ | REQ | ONLY | RETH,
        0x0d => RESP | PAYLOAD | FIRST | AETH,
        0x0e => RESP | PAYLOAD | MIDDLE,
        0x0f => RESP | PAYLOAD | LAST | AETH,
        0x10 => RESP | PAYLOAD | ONLY | AETH,
        0x11 => RESP | ONLY | AETH,
        0x12 => RESP | ONLY | AETH | ATMACK,
        0x13 | 0x14 => ATOMIC | REQ | ONLY | ATMETH,
        0x16 => SEND | REQ | PAYLOAD | LAST | IETH,
        0x17 => SEND | REQ | PAYLOAD | ONLY | RWR | IETH,
        // IBTA 1.5 (RC only: UC takes opcodes up to 0x0b).
        0x1c => FLUSH | REQ | ONLY | FETH | RETH,
        0x1d => ATOMIC_WRITE | REQ | PAYLOAD | ONLY | RETH,
        _ => return None,
    })
}

/// Looks an opcode up; `None` for opcodes rrxe does not implement.
pub const fn info(opcode: u8) -> Option<OpInfo> {
    let low = opcode & 0x1f;
    let (transport, flags) = match opcode >> 5 {
        0 => match op_flags(low) {
            Some(f) => (Transport::Rc, f),
            None => return None,
        },
        // UC: SEND and WRITE only (no READ, atomics, ACKs or invalidate).
        1 if low <= 0x0b => match op_flags(low) {
            Some(f) => (Transport::Uc, f),
            None => return None,
        },
        3 => match opcode {
            op::UD_SEND_ONLY => (Transport::Ud, SEND | REQ | PAYLOAD | ONLY | RWR | DETH),
            op::UD_SEND_ONLY_IMM => (
                Transport::Ud,
                SEND | REQ | PAYLOAD | ONLY | RWR | DETH | IMMDT,
            ),
            _ => return None,
        },
        // The 16 reserved bytes are its payload (rrxe receivers put their rates there).
        4 if opcode == op::CNP => (Transport::Cnp, CNP | PAYLOAD),
        _ => return None,
    };
    Some(OpInfo {
        opcode,
        transport,
        flags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lengths_match_ibta() {
        // Lengths of BTH + extension headers from IBTA table 38 / rxe_opcode.c.
        let cases: &[(u8, usize)] = &[
            (op::RC_SEND_ONLY, 12),
            (op::RC_SEND_ONLY_IMM, 16),
            (op::RC_WRITE_FIRST, 28),
            (op::RC_WRITE_ONLY_IMM, 32),
            (op::RC_READ_REQ, 28),
            (op::RC_READ_RESP_FIRST, 16),
            (op::RC_READ_RESP_MIDDLE, 12),
            (op::RC_ACK, 16),
            (op::RC_ATOMIC_ACK, 24),
            (op::RC_CMP_SWAP, 40),
            (op::RC_SEND_ONLY_INV, 16),
            (op::RC_FLUSH, 32),
            (op::RC_ATOMIC_WRITE, 28),
            (op::UC_WRITE_ONLY, 28),
            (op::UD_SEND_ONLY, 20),
            (op::UD_SEND_ONLY_IMM, 24),
        ];
        for &(opc, len) in cases {
            assert_eq!(info(opc).unwrap().header_len(), len, "opcode {opc:#x}");
        }
        let imm = info(op::RC_WRITE_ONLY_IMM).unwrap();
        assert_eq!(imm.offset(RETH), Some(12));
        assert_eq!(imm.offset(IMMDT), Some(28));
        let ud = info(op::UD_SEND_ONLY_IMM).unwrap();
        assert_eq!(ud.offset(DETH), Some(12));
        assert_eq!(ud.offset(IMMDT), Some(20));
        assert_eq!(info(op::RC_ATOMIC_ACK).unwrap().offset(ATMACK), Some(16));
        let fl = info(op::RC_FLUSH).unwrap();
        assert_eq!((fl.offset(FETH), fl.offset(RETH)), (Some(12), Some(16)));
    }

    #[test]
    fn unknown_opcodes_rejected() {
        let known = (0u16..=255).filter(|&o| info(o as u8).is_some()).count();
        // 25 RC (with FLUSH and ATOMIC WRITE) + 12 UC + 2 UD + CNP
        assert_eq!(known, 25 + 12 + 2 + 1);
        for o in [0x15u8, 0x18, 0x2c, 0x30, 0x40, 0x60, 0x66, 0x80, 0xff] {
            assert!(info(o).is_none(), "{o:#x}");
        }
        assert!(info(op::UC_SEND_ONLY).is_some());
        assert!(info(0x2c).is_none());
        assert!(info(0x32).is_none()); // UC atomics do not exist
    }
}
