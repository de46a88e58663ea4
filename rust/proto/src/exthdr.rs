// SPDX-License-Identifier: GPL-2.0
//! IBTA extension transport headers: RETH, AETH, AtomicETH, AtomicAckETH, DETH, ImmDt and
//! IETH. Each decodes from and encodes to a byte slice that starts at the header.

use super::bth::HdrError;
use super::opcode::{AETH_LEN, ATMACK_LEN, ATMETH_LEN, DETH_LEN, RETH_LEN};
use super::wire::{be24, be32, be64, be8, put, put24};

fn fits(buf: &[u8], len: usize) -> Result<(), HdrError> {
    if buf.len() < len {
        Err(HdrError::Truncated)
    } else {
        Ok(())
    }
}

/// RDMA extended transport header: virtual address, rkey, DMA length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Reth {
    /// Remote virtual address.
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// Length of the whole RDMA operation.
    pub len: u32,
}

impl Reth {
    /// Decodes a RETH.
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        let t = HdrError::Truncated;
        Ok(Reth {
            va: be64(b, 0).ok_or(t)?,
            rkey: be32(b, 8).ok_or(t)?,
            len: be32(b, 12).ok_or(t)?,
        })
    }

    /// Encodes a RETH.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        fits(b, RETH_LEN)?;
        put(b, 0, &self.va.to_be_bytes());
        put(b, 8, &self.rkey.to_be_bytes());
        put(b, 12, &self.len.to_be_bytes());
        Ok(())
    }
}

/// AETH syndrome classes (IBTA table 42).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syndrome {
    /// Positive acknowledgement, with the 5-bit credit count.
    Ack(u8),
    /// Receiver not ready, with the 5-bit RNR timer code.
    Rnr(u8),
    /// Negative acknowledgement, with the NAK code.
    Nak(NakCode),
    /// Reserved encoding.
    Reserved(u8),
}

/// NAK codes (IBTA table 43).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NakCode {
    /// PSN sequence error.
    PsnSeqErr,
    /// Invalid request.
    InvalidRequest,
    /// Remote access error.
    RemoteAccessErr,
    /// Remote operational error.
    RemoteOpErr,
    /// Invalid RD request.
    InvalidRdRequest,
    /// Any other (reserved) code.
    Other(u8),
}

impl NakCode {
    const fn from_bits(v: u8) -> Self {
        match v {
            0 => NakCode::PsnSeqErr,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessErr,
            3 => NakCode::RemoteOpErr,
            4 => NakCode::InvalidRdRequest,
            o => NakCode::Other(o & 0x1f),
        }
    }

    const fn bits(self) -> u8 {
        match self {
            NakCode::PsnSeqErr => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessErr => 2,
            NakCode::RemoteOpErr => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Other(o) => o & 0x1f,
        }
    }
}

impl Syndrome {
    /// Decodes the syndrome byte.
    pub const fn from_byte(b: u8) -> Self {
        let v = b & 0x1f;
        match (b >> 5) & 0x3 {
            0 => Syndrome::Ack(v),
            1 => Syndrome::Rnr(v),
            3 => Syndrome::Nak(NakCode::from_bits(v)),
            _ => Syndrome::Reserved(b),
        }
    }

    /// Encodes the syndrome byte (bit 7 is reserved and written as zero).
    pub const fn to_byte(self) -> u8 {
        match self {
            Syndrome::Ack(c) => c & 0x1f,
            Syndrome::Rnr(t) => 0x20 | (t & 0x1f),
            Syndrome::Nak(n) => 0x60 | n.bits(),
            Syndrome::Reserved(b) => b,
        }
    }
}

/// ACK extended transport header: syndrome and message sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aeth {
    /// Syndrome.
    pub syndrome: Syndrome,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

impl Aeth {
    /// Decodes an AETH.
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        let t = HdrError::Truncated;
        Ok(Aeth {
            syndrome: Syndrome::from_byte(be8(b, 0).ok_or(t)?),
            msn: be24(b, 1).ok_or(t)?,
        })
    }

    /// Encodes an AETH.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        fits(b, AETH_LEN)?;
        put(b, 0, &[self.syndrome.to_byte()]);
        put24(b, 1, self.msn);
        Ok(())
    }
}

/// Atomic extended transport header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AtomicEth {
    /// Remote virtual address (8-byte aligned).
    pub va: u64,
    /// Remote key.
    pub rkey: u32,
    /// Swap value (compare-swap) or addend (fetch-add).
    pub swap_add: u64,
    /// Compare value (compare-swap only).
    pub compare: u64,
}

impl AtomicEth {
    /// Decodes an AtomicETH.
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        let t = HdrError::Truncated;
        Ok(AtomicEth {
            va: be64(b, 0).ok_or(t)?,
            rkey: be32(b, 8).ok_or(t)?,
            swap_add: be64(b, 12).ok_or(t)?,
            compare: be64(b, 20).ok_or(t)?,
        })
    }

    /// Encodes an AtomicETH.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        fits(b, ATMETH_LEN)?;
        put(b, 0, &self.va.to_be_bytes());
        put(b, 8, &self.rkey.to_be_bytes());
        put(b, 12, &self.swap_add.to_be_bytes());
        put(b, 20, &self.compare.to_be_bytes());
        Ok(())
    }
}

/// Atomic acknowledge header: the original remote data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AtomicAckEth {
    /// Value at the remote address before the operation.
    pub orig: u64,
}

impl AtomicAckEth {
    /// Decodes an AtomicAckETH.
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        Ok(AtomicAckEth {
            orig: be64(b, 0).ok_or(HdrError::Truncated)?,
        })
    }

    /// Encodes an AtomicAckETH.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        fits(b, ATMACK_LEN)?;
        put(b, 0, &self.orig.to_be_bytes());
        Ok(())
    }
}

/// Datagram extended transport header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Deth {
    /// Queue key.
    pub qkey: u32,
    /// Source QP (24 bits).
    pub sqpn: u32,
}

impl Deth {
    /// Decodes a DETH.
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        let t = HdrError::Truncated;
        Ok(Deth {
            qkey: be32(b, 0).ok_or(t)?,
            sqpn: be24(b, 5).ok_or(t)?,
        })
    }

    /// Encodes a DETH (the reserved byte as zero).
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        fits(b, DETH_LEN)?;
        put(b, 0, &self.qkey.to_be_bytes());
        put(b, 4, &[0]);
        put24(b, 5, self.sqpn);
        Ok(())
    }
}

/// FLUSH placement type bits (FETH bits 3:0).
pub mod flush_type {
    /// Make the range globally visible.
    pub const GLOBAL: u8 = 1;
    /// Make the range persistent.
    pub const PERSISTENT: u8 = 2;
}

/// FLUSH selectivity level (FETH bits 5:4).
pub mod flush_level {
    /// The range the RETH names.
    pub const RANGE: u8 = 0;
    /// The whole memory region of the RETH's rkey.
    pub const MR: u8 = 1;
}

/// FLUSH extended transport header (IBTA 1.5: placement type and selectivity level).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Feth {
    /// Placement type ([`flush_type`]; four bits).
    pub plt: u8,
    /// Selectivity level ([`flush_level`]; two bits).
    pub sel: u8,
}

impl Feth {
    /// Decodes a FETH (reserved bits ignored).
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        let w = be32(b, 0).ok_or(HdrError::Truncated)?;
        Ok(Feth {
            plt: (w & 0xf) as u8,
            sel: ((w >> 4) & 0x3) as u8,
        })
    }

    /// Encodes a FETH (reserved bits zero).
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        let w = u32::from(self.plt & 0xf) | (u32::from(self.sel & 0x3) << 4);
        encode_u32(w, b)
    }
}

/// Decodes a 4-byte header that is a single big-endian word (ImmDt, IETH).
pub fn decode_u32(b: &[u8]) -> Result<u32, HdrError> {
    be32(b, 0).ok_or(HdrError::Truncated)
}

/// Encodes a 4-byte header that is a single big-endian word (ImmDt, IETH).
pub fn encode_u32(v: u32, b: &mut [u8]) -> Result<(), HdrError> {
    if put(b, 0, &v.to_be_bytes()) {
        Ok(())
    } else {
        Err(HdrError::Truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn syndromes() {
        assert_eq!(Syndrome::from_byte(0x1f), Syndrome::Ack(0x1f));
        assert_eq!(Syndrome::from_byte(0x2e), Syndrome::Rnr(0x0e));
        assert_eq!(Syndrome::from_byte(0x60), Syndrome::Nak(NakCode::PsnSeqErr));
        assert_eq!(
            Syndrome::from_byte(0x62),
            Syndrome::Nak(NakCode::RemoteAccessErr)
        );
        assert_eq!(Syndrome::from_byte(0x40), Syndrome::Reserved(0x40));
        for b in 0u8..0x80 {
            assert_eq!(Syndrome::from_byte(b).to_byte(), b);
        }
    }

    proptest! {
        #[test]
        fn reth_rt(va in any::<u64>(), rkey in any::<u32>(), len in any::<u32>()) {
            let h = Reth { va, rkey, len };
            let mut b = [0u8; RETH_LEN];
            h.encode(&mut b).unwrap();
            prop_assert_eq!(Reth::decode(&b).unwrap(), h);
            prop_assert!(Reth::decode(&b[..RETH_LEN - 1]).is_err());
        }

        #[test]
        fn aeth_rt(s in 0u8..0x80, msn in 0u32..0x100_0000) {
            let h = Aeth { syndrome: Syndrome::from_byte(s), msn };
            let mut b = [0u8; AETH_LEN];
            h.encode(&mut b).unwrap();
            prop_assert_eq!(Aeth::decode(&b).unwrap(), h);
            prop_assert!(Aeth::decode(&b[..3]).is_err());
        }

        #[test]
        fn atomic_rt(va in any::<u64>(), rkey in any::<u32>(), s in any::<u64>(), c in any::<u64>(), o in any::<u64>()) {
            let h = AtomicEth { va, rkey, swap_add: s, compare: c };
            let mut b = [0u8; ATMETH_LEN];
            h.encode(&mut b).unwrap();
            prop_assert_eq!(AtomicEth::decode(&b).unwrap(), h);
            prop_assert!(AtomicEth::decode(&b[..ATMETH_LEN - 1]).is_err());
            let a = AtomicAckEth { orig: o };
            let mut b = [0u8; ATMACK_LEN];
            a.encode(&mut b).unwrap();
            prop_assert_eq!(AtomicAckEth::decode(&b).unwrap(), a);
        }

        #[test]
        fn deth_rt(qkey in any::<u32>(), sqpn in 0u32..0x100_0000, v in any::<u32>()) {
            let h = Deth { qkey, sqpn };
            let mut b = [0u8; DETH_LEN];
            h.encode(&mut b).unwrap();
            prop_assert_eq!(Deth::decode(&b).unwrap(), h);
            prop_assert!(Deth::decode(&b[..7]).is_err());
            let mut w = [0u8; 4];
            encode_u32(v, &mut w).unwrap();
            prop_assert_eq!(decode_u32(&w).unwrap(), v);
            prop_assert!(encode_u32(v, &mut w[..3]).is_err());
        }
    }
}
