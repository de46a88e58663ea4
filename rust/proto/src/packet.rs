// SPDX-License-Identifier: GPL-2.0
//! Parsing of a RoCEv2 UDP payload: BTH, extension headers, payload, pad and ICRC.
//!
//! [`parse`] validates everything that can be validated without connection state: the
//! opcode is known, the transport version is 0, the headers fit, the pad count does not
//! exceed the payload, and opcodes without payload carry none. It never panics, whatever
//! the input (see the fuzz target and the property tests).

use super::bth::{Bth, HdrError};
use super::ccwire::{self, TsEcho, TS_ECHO_LEN, TS_LEN, XF_TS};
use super::exthdr::{decode_u32, Aeth, AtomicAckEth, AtomicEth, Deth, Feth, Reth};
use super::opcode::{flags, info, op, OpInfo, ICRC_LEN};
use super::sel::{Sack, Xeth, SACK_LEN, XETH_LEN, XF_EXT};
use super::verify::{Vcrc, Vres, VCRC_LEN, VRES_LEN, XF_VCRC, XF_VFAIL};

/// Why a packet was rejected (each maps to a drop counter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Shorter than BTH + extension headers + ICRC.
    Truncated,
    /// Opcode not implemented.
    UnknownOpcode(u8),
    /// Transport header version is not 0.
    BadTver,
    /// Pad count larger than the payload (payload length underflow).
    BadPad,
    /// Payload on an opcode that carries none.
    UnexpectedPayload,
}

impl From<HdrError> for ParseError {
    fn from(_: HdrError) -> Self {
        ParseError::Truncated
    }
}

/// A parsed packet borrowing its buffer.
#[derive(Clone, Copy, Debug)]
pub struct Packet<'a> {
    /// The decoded BTH.
    pub bth: Bth,
    /// The opcode's table entry.
    pub info: OpInfo,
    /// BTH and extension headers.
    pub hdr: &'a [u8],
    /// Payload without pad.
    pub payload: &'a [u8],
    /// Payload and pad: what the ICRC covers after the headers.
    pub payload_and_pad: &'a [u8],
    /// The ICRC as received.
    pub icrc: [u8; 4],
}

/// Length of the rrxe header (XETH or SACK) a packet with this BTH carries after its
/// IBTA headers: the flag only means something on packets with payload and on ACKs.
fn sel_hdr_len(bth: &Bth, info: &OpInfo) -> usize {
    if bth.xflags & XF_EXT == 0 || info.has(flags::CNP) {
        0
    } else if info.has(flags::PAYLOAD) {
        XETH_LEN
    } else if info.opcode == op::RC_ACK {
        SACK_LEN
    } else {
        0
    }
}

/// Length of the verification header a packet with this BTH carries after the XETH or
/// SACK: the CRC on the last packet of a WRITE, the result on an ACK (a NAK).
fn vfy_hdr_len(bth: &Bth, info: &OpInfo) -> usize {
    if bth.xflags & XF_VCRC != 0 && info.has(flags::WRITE) && info.has(flags::LAST) {
        VCRC_LEN
    } else if bth.xflags & XF_VFAIL != 0 && info.opcode == op::RC_ACK {
        VRES_LEN
    } else {
        0
    }
}

/// Length of the timestamp header a packet with this BTH carries after the XETH or SACK:
/// the flag only means something on requests with payload and on ACKs.
fn ts_hdr_len(bth: &Bth, info: &OpInfo) -> usize {
    if bth.xflags & XF_TS == 0 {
        0
    } else if info.has(flags::PAYLOAD) && info.has(flags::REQ) {
        TS_LEN
    } else if info.opcode == op::RC_ACK {
        TS_ECHO_LEN
    } else {
        0
    }
}

/// Length of the rrxe headers (XETH or SACK, then the verification header, then
/// timestamps) a packet with this BTH carries after its IBTA headers.
pub fn rrxe_hdr_len(bth: &Bth, info: &OpInfo) -> usize {
    sel_hdr_len(bth, info) + vfy_hdr_len(bth, info) + ts_hdr_len(bth, info)
}

/// Offset of the verification header (a WRITE's CRC, an ACK's result) in a packet with
/// this BTH, if it carries one.
pub fn vfy_offset(bth: &Bth) -> Option<usize> {
    let i = info(bth.opcode)?;
    (vfy_hdr_len(bth, &i) != 0).then(|| i.header_len() + sel_hdr_len(bth, &i))
}

/// Length of all headers (IBTA and rrxe) a packet with this BTH carries.
pub fn headers_len(bth: &Bth) -> Option<usize> {
    let i = info(bth.opcode)?;
    Some(i.header_len() + rrxe_hdr_len(bth, &i))
}

/// Parses the UDP payload of a RoCEv2 packet.
pub fn parse(buf: &[u8]) -> Result<Packet<'_>, ParseError> {
    let bth = Bth::decode(buf)?;
    let info = info(bth.opcode).ok_or(ParseError::UnknownOpcode(bth.opcode))?;
    if bth.tver != 0 {
        return Err(ParseError::BadTver);
    }
    let hlen = info.header_len() + rrxe_hdr_len(&bth, &info);
    let body_end = buf
        .len()
        .checked_sub(ICRC_LEN)
        .ok_or(ParseError::Truncated)?;
    if body_end < hlen {
        return Err(ParseError::Truncated);
    }
    let hdr = buf.get(..hlen).ok_or(ParseError::Truncated)?;
    let payload_and_pad = buf.get(hlen..body_end).ok_or(ParseError::Truncated)?;
    let pad = usize::from(bth.pad);
    let plen = payload_and_pad
        .len()
        .checked_sub(pad)
        .ok_or(ParseError::BadPad)?;
    if !info.has(flags::PAYLOAD) && !payload_and_pad.is_empty() {
        return Err(ParseError::UnexpectedPayload);
    }
    let payload = payload_and_pad.get(..plen).ok_or(ParseError::BadPad)?;
    let mut icrc = [0u8; ICRC_LEN];
    icrc.copy_from_slice(buf.get(body_end..).ok_or(ParseError::Truncated)?);
    Ok(Packet {
        bth,
        info,
        hdr,
        payload,
        payload_and_pad,
        icrc,
    })
}

impl Packet<'_> {
    fn ext(&self, f: u32) -> Option<&[u8]> {
        let off = self.info.offset(f)?;
        self.hdr.get(off..)
    }

    /// The RETH, if the opcode carries one.
    pub fn reth(&self) -> Option<Reth> {
        Reth::decode(self.ext(flags::RETH)?).ok()
    }

    /// The AETH, if the opcode carries one.
    pub fn aeth(&self) -> Option<Aeth> {
        Aeth::decode(self.ext(flags::AETH)?).ok()
    }

    /// The AtomicETH, if the opcode carries one.
    pub fn atomic_eth(&self) -> Option<AtomicEth> {
        AtomicEth::decode(self.ext(flags::ATMETH)?).ok()
    }

    /// The AtomicAckETH, if the opcode carries one.
    pub fn atomic_ack(&self) -> Option<AtomicAckEth> {
        AtomicAckEth::decode(self.ext(flags::ATMACK)?).ok()
    }

    /// The DETH, if the opcode carries one.
    pub fn deth(&self) -> Option<Deth> {
        Deth::decode(self.ext(flags::DETH)?).ok()
    }

    /// Immediate data (raw big-endian word), if the opcode carries it.
    pub fn imm(&self) -> Option<u32> {
        decode_u32(self.ext(flags::IMMDT)?).ok()
    }

    /// Invalidated rkey, if the opcode carries an IETH.
    pub fn ieth(&self) -> Option<u32> {
        decode_u32(self.ext(flags::IETH)?).ok()
    }

    /// The FETH, if the opcode (FLUSH) carries one.
    pub fn feth(&self) -> Option<Feth> {
        Feth::decode(self.ext(flags::FETH)?).ok()
    }

    fn rrxe_hdr(&self) -> Option<&[u8]> {
        if sel_hdr_len(&self.bth, &self.info) == 0 {
            return None;
        }
        self.hdr.get(self.info.header_len()..)
    }

    fn vfy_hdr(&self) -> Option<&[u8]> {
        if vfy_hdr_len(&self.bth, &self.info) == 0 {
            return None;
        }
        self.hdr
            .get(self.info.header_len() + sel_hdr_len(&self.bth, &self.info)..)
    }

    fn ts_hdr(&self) -> Option<&[u8]> {
        if ts_hdr_len(&self.bth, &self.info) == 0 {
            return None;
        }
        self.hdr.get(
            self.info.header_len()
                + sel_hdr_len(&self.bth, &self.info)
                + vfy_hdr_len(&self.bth, &self.info)..,
        )
    }

    /// The CRC header of a verified WRITE's last packet (`Err` when the flag is set but
    /// the header is malformed or names an algorithm this end does not know).
    pub fn vcrc(&self) -> Option<Result<Vcrc, HdrError>> {
        if !self.info.has(flags::WRITE) {
            return None;
        }
        Some(Vcrc::decode(self.vfy_hdr()?))
    }

    /// The verification result of a NAK that reports a failed check (`Err` when the
    /// flag is set but the header is malformed).
    pub fn vres(&self) -> Option<Result<Vres, HdrError>> {
        if self.info.opcode != op::RC_ACK {
            return None;
        }
        Some(Vres::decode(self.vfy_hdr()?))
    }

    /// The sender's transmit timestamp, if the packet (a request) carries one.
    pub fn ts(&self) -> Option<u32> {
        if !self.info.has(flags::PAYLOAD) {
            return None;
        }
        ccwire::decode_ts(self.ts_hdr()?).ok()
    }

    /// The timestamp echo, if the packet (an ACK) carries one.
    pub fn ts_echo(&self) -> Option<TsEcho> {
        if self.info.opcode != op::RC_ACK {
            return None;
        }
        TsEcho::decode(self.ts_hdr()?).ok()
    }

    /// rrxe's extended transport header, if the packet carries one.
    pub fn xeth(&self) -> Option<Xeth> {
        if !self.info.has(flags::PAYLOAD) {
            return None;
        }
        Xeth::decode(self.rrxe_hdr()?).ok()
    }

    /// rrxe's selective NACK, if the packet (an ACK) carries one.
    pub fn sack(&self) -> Option<Sack> {
        if self.info.opcode != op::RC_ACK {
            return None;
        }
        Sack::decode(self.rrxe_hdr()?).ok()
    }
}

/// Extension headers to write after a BTH; those the opcode does not carry are ignored.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ext {
    /// RETH.
    pub reth: Option<Reth>,
    /// AETH.
    pub aeth: Option<Aeth>,
    /// AtomicETH.
    pub atomic: Option<AtomicEth>,
    /// AtomicAckETH.
    pub atomic_ack: Option<AtomicAckEth>,
    /// DETH.
    pub deth: Option<Deth>,
    /// Immediate data.
    pub imm: Option<u32>,
    /// Invalidated rkey.
    pub ieth: Option<u32>,
    /// FLUSH placement and selectivity.
    pub feth: Option<Feth>,
    /// rrxe XETH (written when the BTH flags it on a packet with payload).
    pub xeth: Option<Xeth>,
    /// rrxe SACK (written when the BTH flags it on an ACK).
    pub sack: Option<Sack>,
    /// Transmit timestamp (written when the BTH flags it on a request with payload).
    pub ts: Option<u32>,
    /// Timestamp echo (written when the BTH flags it on an ACK).
    pub ts_echo: Option<TsEcho>,
    /// Verified WRITE's CRC (written when the BTH flags it on a WRITE's last packet).
    pub vcrc: Option<Vcrc>,
    /// Verification result (written when the BTH flags it on an ACK).
    pub vres: Option<Vres>,
}

/// Writes BTH and the opcode's extension headers at the start of `out`; returns the
/// header length. Every header the opcode requires must be present in `ext`.
pub fn write_headers(bth: &Bth, ext: &Ext, out: &mut [u8]) -> Result<usize, ParseError> {
    use super::exthdr::encode_u32;
    let info = info(bth.opcode).ok_or(ParseError::UnknownOpcode(bth.opcode))?;
    let ibta = info.header_len();
    let hlen = ibta + rrxe_hdr_len(bth, &info);
    let out = out.get_mut(..hlen).ok_or(ParseError::Truncated)?;
    bth.encode(out)?;
    let t = ParseError::Truncated;
    let at = |f: u32| info.offset(f);
    if let Some(o) = at(flags::DETH) {
        ext.deth.ok_or(t)?.encode(out.get_mut(o..).ok_or(t)?)?;
    }
    if let Some(o) = at(flags::FETH) {
        ext.feth.ok_or(t)?.encode(out.get_mut(o..).ok_or(t)?)?;
    }
    if let Some(o) = at(flags::RETH) {
        ext.reth.ok_or(t)?.encode(out.get_mut(o..).ok_or(t)?)?;
    }
    if let Some(o) = at(flags::ATMETH) {
        ext.atomic.ok_or(t)?.encode(out.get_mut(o..).ok_or(t)?)?;
    }
    if let Some(o) = at(flags::AETH) {
        ext.aeth.ok_or(t)?.encode(out.get_mut(o..).ok_or(t)?)?;
    }
    if let Some(o) = at(flags::ATMACK) {
        ext.atomic_ack
            .ok_or(t)?
            .encode(out.get_mut(o..).ok_or(t)?)?;
    }
    if let Some(o) = at(flags::IMMDT) {
        encode_u32(ext.imm.ok_or(t)?, out.get_mut(o..).ok_or(t)?)?;
    }
    if let Some(o) = at(flags::IETH) {
        encode_u32(ext.ieth.ok_or(t)?, out.get_mut(o..).ok_or(t)?)?;
    }
    let sel = sel_hdr_len(bth, &info);
    if sel != 0 {
        let x = out.get_mut(ibta..).ok_or(t)?;
        if info.has(flags::PAYLOAD) {
            ext.xeth.ok_or(t)?.encode(x)?;
        } else {
            ext.sack.ok_or(t)?.encode(x)?;
        }
    }
    let vfy = vfy_hdr_len(bth, &info);
    if vfy != 0 {
        let x = out.get_mut(ibta + sel..).ok_or(t)?;
        if info.has(flags::WRITE) {
            ext.vcrc.ok_or(t)?.encode(x)?;
        } else {
            ext.vres.ok_or(t)?.encode(x)?;
        }
    }
    if ts_hdr_len(bth, &info) != 0 {
        let x = out.get_mut(ibta + sel + vfy..).ok_or(t)?;
        if info.has(flags::PAYLOAD) {
            ccwire::encode_ts(ext.ts.ok_or(t)?, x)?;
        } else {
            ext.ts_echo.ok_or(t)?.encode(x)?;
        }
    }
    Ok(hlen)
}
