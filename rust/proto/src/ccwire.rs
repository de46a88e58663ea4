// SPDX-License-Identifier: GPL-2.0
//! rrxe's congestion-control bits on the wire (byte diagrams in
//! Documentation/rrxe/wire.rst): the capability, and the timestamps the delay-based
//! algorithm ([`super::cc::delay`]) measures one-way delays with.
//!
//! * BTH byte 4, reserved bit [`CAP_CC`]: on a request, "I am an rrxe requester: send me
//!   CNPs that carry your measured rates, and echo my timestamps"; on a response, "I
//!   accept timestamp headers". An IBTA peer ignores the bit (the ICRC masks that byte)
//!   and never sets it, so it never sees a timestamp header, and its CNPs (all-zero
//!   reserved bytes) get the DCQCN reaction.
//! * BTH byte 8, reserved bit [`XF_TS`]: a timestamp header follows the IBTA headers and
//!   the XETH or SACK: on a request with payload the sender's transmit time ([`TS_LEN`]
//!   bytes), on an ACK the echo of that time and the receiver's receive time
//!   ([`TS_ECHO_LEN`] bytes). Times are microseconds of each host's own monotonic clock,
//!   truncated to 32 bits: only differences against their own minimum are used.

use super::bth::HdrError;
use super::wire::{be32, put};

/// BTH byte 4 capability bit: congestion-control extensions offered (requests) or
/// accepted (responses).
pub const CAP_CC: u8 = 0x02;
/// BTH byte 8 flag: a timestamp header follows the IBTA headers and the XETH or SACK.
pub const XF_TS: u8 = 0x08;
/// Length of the transmit timestamp a request with payload carries.
pub const TS_LEN: usize = 4;
/// Length of the timestamp echo an ACK carries.
pub const TS_ECHO_LEN: usize = 8;

/// The transmit timestamp of a request packet.
pub fn decode_ts(b: &[u8]) -> Result<u32, HdrError> {
    be32(b, 0).ok_or(HdrError::Truncated)
}

/// Writes a transmit timestamp.
pub fn encode_ts(ts: u32, b: &mut [u8]) -> Result<(), HdrError> {
    if b.len() >= TS_LEN && put(b, 0, &ts.to_be_bytes()) {
        Ok(())
    } else {
        Err(HdrError::Truncated)
    }
}

/// What an ACK echoes: the transmit time of the request that asked for it (the
/// requester's clock) and when it arrived (the responder's clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TsEcho {
    /// The request's transmit timestamp, as it carried it.
    pub tx: u32,
    /// The responder's receive timestamp of that request.
    pub rx: u32,
}

impl TsEcho {
    /// Decodes an echo.
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        let t = HdrError::Truncated;
        Ok(TsEcho {
            tx: be32(b, 0).ok_or(t)?,
            rx: be32(b, 4).ok_or(t)?,
        })
    }

    /// Encodes an echo.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        if b.len() >= TS_ECHO_LEN
            && put(b, 0, &self.tx.to_be_bytes())
            && put(b, 4, &self.rx.to_be_bytes())
        {
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
    fn short_buffers() {
        for n in 0..TS_ECHO_LEN {
            assert!(TsEcho::decode(&[0u8; TS_ECHO_LEN][..n]).is_err());
            assert!(TsEcho::default()
                .encode(&mut [0u8; TS_ECHO_LEN][..n])
                .is_err());
        }
        for n in 0..TS_LEN {
            assert!(decode_ts(&[0u8; TS_LEN][..n]).is_err());
            assert!(encode_ts(1, &mut [0u8; TS_LEN][..n]).is_err());
        }
    }

    proptest! {
        #[test]
        fn round_trip(tx in any::<u32>(), rx in any::<u32>()) {
            let e = TsEcho { tx, rx };
            let mut b = [0u8; TS_ECHO_LEN];
            e.encode(&mut b).unwrap();
            prop_assert_eq!(TsEcho::decode(&b).unwrap(), e);
            let mut t = [0u8; TS_LEN];
            encode_ts(tx, &mut t).unwrap();
            prop_assert_eq!(decode_ts(&t).unwrap(), tx);
        }
    }
}
