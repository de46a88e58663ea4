// SPDX-License-Identifier: GPL-2.0
//! Base transport header (IBTA 9.2), 12 bytes:
//!
//! ```text
//!  byte 0      1            2-3     4           5-7    8          9-11
//! +--------+-----------+--------+-----------+-------+----------+------+
//! | opcode |SE|M|Pad|TV| P_Key  |F|B| resv6 | DestQP|A| resv7  | PSN  |
//! +--------+-----------+--------+-----------+-------+----------+------+
//! ```
//!
//! rrxe gives two reserved fields a meaning (see `sel` and Documentation/rrxe/wire.rst):
//! `resv6` carries capability offers (the ICRC masks that byte, and IBTA receivers ignore
//! it), `resv7` flags rrxe's own extension header on a packet (only ever set towards a peer
//! that accepted the offer).

use super::opcode::BTH_LEN;
use super::psn::Psn;
use super::wire::{be16, be24, be8, put, put24};

/// Transport header version carried by every RoCEv2 packet.
pub const TVER: u8 = 0;
/// Default partition key.
pub const DEFAULT_PKEY: u16 = 0xffff;
/// Mask of the destination QP number.
pub const QPN_MASK: u32 = 0x00ff_ffff;

/// A decoded BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Bth {
    /// Opcode byte.
    pub opcode: u8,
    /// Solicited event.
    pub se: bool,
    /// Migration state.
    pub mig: bool,
    /// Pad count (0..=3 bytes of pad before the ICRC).
    pub pad: u8,
    /// Transport header version (4 bits).
    pub tver: u8,
    /// Partition key.
    pub pkey: u16,
    /// Forward explicit congestion notification.
    pub fecn: bool,
    /// Backward explicit congestion notification.
    pub becn: bool,
    /// Destination QP (24 bits).
    pub dqpn: u32,
    /// Acknowledge request.
    pub ack_req: bool,
    /// Packet sequence number.
    pub psn: Psn,
    /// The six reserved bits of byte 4 (rrxe: capability offer/accept bits).
    pub caps: u8,
    /// The seven reserved bits of byte 8 (rrxe: extension-header flags).
    pub xflags: u8,
}

/// Why a header could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HdrError {
    /// The buffer is shorter than the header.
    Truncated,
    /// A field holds a value the header does not define.
    Malformed,
}

impl Bth {
    /// Decodes the first 12 bytes of `buf`.
    pub fn decode(buf: &[u8]) -> Result<Bth, HdrError> {
        let t = HdrError::Truncated;
        let b1 = be8(buf, 1).ok_or(t)?;
        let b4 = be8(buf, 4).ok_or(t)?;
        let b8 = be8(buf, 8).ok_or(t)?;
        Ok(Bth {
            opcode: be8(buf, 0).ok_or(t)?,
            se: b1 & 0x80 != 0,
            mig: b1 & 0x40 != 0,
            pad: (b1 >> 4) & 0x3,
            tver: b1 & 0xf,
            pkey: be16(buf, 2).ok_or(t)?,
            fecn: b4 & 0x80 != 0,
            becn: b4 & 0x40 != 0,
            dqpn: be24(buf, 5).ok_or(t)?,
            ack_req: b8 & 0x80 != 0,
            psn: Psn::new(be24(buf, 9).ok_or(t)?),
            caps: b4 & 0x3f,
            xflags: b8 & 0x7f,
        })
    }

    /// Encodes into the first 12 bytes of `buf` (reserved bits from `caps` and `xflags`).
    pub fn encode(&self, buf: &mut [u8]) -> Result<(), HdrError> {
        if buf.len() < BTH_LEN {
            return Err(HdrError::Truncated);
        }
        let b1 = (u8::from(self.se) << 7)
            | (u8::from(self.mig) << 6)
            | ((self.pad & 3) << 4)
            | (self.tver & 0xf);
        let b4 = (u8::from(self.fecn) << 7) | (u8::from(self.becn) << 6) | (self.caps & 0x3f);
        let ok = put(buf, 0, &[self.opcode, b1])
            && put(buf, 2, &self.pkey.to_be_bytes())
            && put(buf, 4, &[b4])
            && put24(buf, 5, self.dqpn & QPN_MASK)
            && put(
                buf,
                8,
                &[(u8::from(self.ack_req) << 7) | (self.xflags & 0x7f)],
            )
            && put24(buf, 9, self.psn.get());
        if ok {
            Ok(())
        } else {
            Err(HdrError::Truncated)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_bytes() {
        // RC SEND ONLY, SE, pad 2, pkey ffff, dqp 0x000011, ackreq, psn 0xabcdef
        let raw = [
            0x04, 0xa0, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0xab, 0xcd, 0xef,
        ];
        let b = Bth::decode(&raw).unwrap();
        assert_eq!(b.opcode, 4);
        assert!(b.se && !b.mig && b.ack_req);
        assert_eq!(b.pad, 2);
        assert_eq!(b.dqpn, 0x11);
        assert_eq!(b.psn.get(), 0xabcdef);
        let mut out = [0u8; 12];
        b.encode(&mut out).unwrap();
        assert_eq!(out, raw);
    }

    #[test]
    fn truncated() {
        for n in 0..12 {
            assert_eq!(Bth::decode(&[0u8; 12][..n]), Err(HdrError::Truncated));
            assert!(Bth::default().encode(&mut [0u8; 12][..n]).is_err());
        }
    }

    prop_compose! {
        fn any_bth()(opcode in any::<u8>(), se in any::<bool>(), mig in any::<bool>(),
                     pad in 0u8..4, tver in 0u8..16, pkey in any::<u16>(), fecn in any::<bool>(),
                     becn in any::<bool>(), dqpn in 0u32..=QPN_MASK, ack_req in any::<bool>(),
                     psn in 0u32..=0xff_ffff, caps in 0u8..64, xflags in 0u8..128) -> Bth {
            Bth { opcode, se, mig, pad, tver, pkey, fecn, becn, dqpn, ack_req, psn: Psn::new(psn),
                  caps, xflags }
        }
    }

    proptest! {
        #[test]
        fn round_trip(b in any_bth()) {
            let mut buf = [0u8; 12];
            b.encode(&mut buf).unwrap();
            prop_assert_eq!(Bth::decode(&buf).unwrap(), b);
        }

        #[test]
        fn decode_any_bytes_never_panics(buf in proptest::collection::vec(any::<u8>(), 0..32)) {
            if let Ok(b) = Bth::decode(&buf) {
                let mut out = [0u8; 12];
                b.encode(&mut out).unwrap();
                // Every bit survives a round trip (the reserved ones through caps/xflags).
                prop_assert_eq!(out.to_vec(), buf[0..12].to_vec());
            }
        }
    }
}
