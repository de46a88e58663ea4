// SPDX-License-Identifier: GPL-2.0
//! Verified RDMA WRITE: the requester sends a CRC of the message with its last packet,
//! the responder reads the placed bytes back from memory once every packet is in, checks
//! them, and acknowledges the WRITE only if they match. One round trip tells the
//! requester that its data landed intact, where an application would otherwise WRITE,
//! READ the same range back and compare.
//!
//! On the wire (byte diagrams in Documentation/rrxe/verify.rst), only between two rrxe
//! ends that agreed to it:
//!
//! * BTH byte 4, reserved bit [`CAP_VERIFY`]: on a request "I can send verified WRITEs",
//!   on a response "I check them". A requester sends verified WRITEs only once a
//!   response carried the bit.
//! * BTH byte 8, reserved bit [`XF_VCRC`]: the last packet of a verified WRITE carries a
//!   [`Vcrc`] header (the message's CRC, which CRC it is, and the attempt number) after
//!   the XETH.
//! * BTH byte 8, reserved bit [`XF_VFAIL`]: a NAK (syndrome "remote operational error")
//!   whose PSN is the first PSN of a WRITE that failed its check carries a [`Vres`]
//!   header after the SACK position: the outcome and the attempt it answers. An ACK
//!   covering a verified WRITE's last PSN is its success: the responder does not move
//!   past that PSN before the check passed.
//!
//! The CRC is CRC-32 (the Ethernet polynomial, as the ICRC) by default or CRC32C (the
//! Castagnoli polynomial, as iSCSI and NVMe/TCP data digests) on request ([`Alg`]),
//! computed by the requester while it gathers each packet's payload the first time, and
//! by the responder over the message's range of the memory region after placement, with
//! the algorithm the requester named. [`Crc`] is the kernel's accelerated pair in the
//! module, [`TableCrc`] on the host. CRC-32 is the default because the kernel computes it
//! by carry-less multiplication (PCLMULQDQ folding), which emulators and CPUs without a
//! CRC32 instruction also run fast; CRC32C goes through the CRC32 instruction.

use super::bth::HdrError;
use super::cc::params::ParamInfo;
use super::wire::{be32, be8, put};

/// BTH byte 4 capability bit: verified WRITEs offered (requests) or checked (responses).
pub const CAP_VERIFY: u8 = 0x04;
/// BTH byte 8 flag on a WRITE's last packet: a [`Vcrc`] header follows the XETH.
pub const XF_VCRC: u8 = 0x10;
/// BTH byte 8 flag on a NAK: a [`Vres`] header follows; the WRITE at the NAK's PSN failed
/// its check.
pub const XF_VFAIL: u8 = 0x20;
/// Length of the [`Vcrc`] header.
pub const VCRC_LEN: usize = 8;
/// Length of the [`Vres`] header.
pub const VRES_LEN: usize = 4;

/// Which CRC a verified WRITE carries (byte 5 of its [`Vcrc`] header). Both are
/// reflected CRC-32s started from [`CRC_INIT`] and ended by [`crc_finish`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Alg {
    /// CRC32C, reflected polynomial 0x82f63b78 (the kernel's `crc32c`).
    Crc32c,
    /// CRC-32, reflected polynomial 0xedb88320 (the kernel's `crc32_le`, the ICRC's).
    #[default]
    Crc32,
}

impl Alg {
    /// Its code on the wire.
    pub const fn wire(self) -> u8 {
        match self {
            Alg::Crc32c => 0,
            Alg::Crc32 => 1,
        }
    }

    /// The algorithm of wire code `b` (`None`: unknown).
    pub const fn from_wire(b: u8) -> Option<Alg> {
        match b {
            0 => Some(Alg::Crc32c),
            1 => Some(Alg::Crc32),
            _ => None,
        }
    }
}

/// The two CRCs without pre- or post-inversion, as the kernel's `crc32c(seed, data, len)`
/// and `crc32_le(seed, data, len)`: start from [`CRC_INIT`], end with [`crc_finish`].
pub trait Crc {
    /// Continues `crc` of algorithm `alg` over `data`.
    fn update(&self, alg: Alg, crc: u32, data: &[u8]) -> u32;
}

/// The running CRC before any byte.
pub const CRC_INIT: u32 = !0;

/// The CRC of a message from its running value.
pub const fn crc_finish(raw: u32) -> u32 {
    !raw
}

/// The CRC of `data` in one call.
pub fn crc(c: &impl Crc, alg: Alg, data: &[u8]) -> u32 {
    crc_finish(c.update(alg, CRC_INIT, data))
}

static TABLE_C: [u32; 256] = super::crctab::reflected_table(0x82f6_3b78);
static TABLE_32: [u32; 256] = super::crctab::reflected_table(0xedb8_8320);

/// Byte-at-a-time table CRCs.
pub struct TableCrc;

impl Crc for TableCrc {
    fn update(&self, alg: Alg, crc: u32, data: &[u8]) -> u32 {
        let t = match alg {
            Alg::Crc32c => &TABLE_C,
            Alg::Crc32 => &TABLE_32,
        };
        super::crctab::update(t, crc, data)
    }
}

/// The CRC header of a verified WRITE's last packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vcrc {
    /// CRC32C of the whole message.
    pub crc: u32,
    /// How many times the WRITE was sent again after a failed check (0 the first time).
    pub attempt: u8,
    /// Which CRC `crc` is.
    pub alg: Alg,
}

impl Vcrc {
    /// Decodes a CRC header (the two reserved bytes are ignored); an unknown algorithm is
    /// malformed.
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        let t = HdrError::Truncated;
        if b.len() < VCRC_LEN {
            return Err(t);
        }
        Ok(Vcrc {
            crc: be32(b, 0).ok_or(t)?,
            attempt: be8(b, 4).ok_or(t)?,
            alg: Alg::from_wire(be8(b, 5).ok_or(t)?).ok_or(HdrError::Malformed)?,
        })
    }

    /// Encodes a CRC header (reserved bytes zero).
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        let mut w = [0u8; VCRC_LEN];
        w[..4].copy_from_slice(&self.crc.to_be_bytes());
        w[4] = self.attempt;
        w[5] = self.alg.wire();
        if put(b, 0, &w) {
            Ok(())
        } else {
            Err(HdrError::Truncated)
        }
    }
}

/// Outcome of a responder's check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The placed bytes match the CRC.
    Match,
    /// They differ.
    Mismatch,
}

/// The result header of a NAK that reports a failed check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vres {
    /// What the check found.
    pub outcome: Outcome,
    /// The attempt (of the WRITE's [`Vcrc`]) it answers.
    pub attempt: u8,
}

impl Vres {
    /// Decodes a result header; an unknown outcome is malformed.
    pub fn decode(b: &[u8]) -> Result<Self, HdrError> {
        let t = HdrError::Truncated;
        if b.len() < VRES_LEN {
            return Err(t);
        }
        let outcome = match be8(b, 0).ok_or(t)? {
            0 => Outcome::Match,
            1 => Outcome::Mismatch,
            _ => return Err(HdrError::Malformed),
        };
        Ok(Vres {
            outcome,
            attempt: be8(b, 1).ok_or(t)?,
        })
    }

    /// Encodes a result header.
    pub fn encode(&self, b: &mut [u8]) -> Result<(), HdrError> {
        let o = match self.outcome {
            Outcome::Match => 0,
            Outcome::Mismatch => 1,
        };
        if put(b, 0, &[o, self.attempt, 0, 0]) {
            Ok(())
        } else {
            Err(HdrError::Truncated)
        }
    }
}

/// Index constants into [`PARAMS`].
pub mod idx {
    /// `enable`: offer verified WRITEs on new connections.
    pub const ENABLE: usize = 0;
    /// `retries`: resends of a WRITE whose check failed before it completes in error.
    pub const RETRIES: usize = 1;
    /// `skip_after`: clean checks in a row after which the responder skips read-backs.
    pub const SKIP_AFTER: usize = 2;
    /// `fault_ppm`: fault injection at the responder.
    pub const FAULT_PPM: usize = 3;
    /// `crc`: the CRC a requester sends ([`Alg`](super::Alg) wire code).
    pub const CRC: usize = 4;
}

/// The verification knobs of a device (one debugfs file each, `rrxe-<dev>/verify/`).
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "enable",
        default: 0,
        min: 0,
        max: 1,
        doc: "offer verified WRITEs on connections set up from now on (0/1)",
    },
    ParamInfo {
        name: "retries",
        default: 3,
        min: 0,
        max: 15,
        doc: "resends of a WRITE whose check failed, then it completes in error",
    },
    ParamInfo {
        name: "skip_after",
        default: 0,
        min: 0,
        max: 1_000_000,
        doc: "clean checks in a row from a QP after which read-backs are skipped (0: never)",
    },
    ParamInfo {
        name: "fault_ppm",
        default: 0,
        min: 0,
        max: 1_000_000,
        doc: "test only: corrupt one placed byte of this many verified WRITEs per million",
    },
    ParamInfo {
        name: "crc",
        default: 1,
        min: 0,
        max: 1,
        doc: "the CRC this device's requesters send: 0 CRC32C, 1 CRC-32",
    },
];

/// Number of verification knobs.
pub const NPARAMS: usize = 5;

/// `v` clamped to knob `i`'s range (0 for a bad index).
pub fn clamp(i: usize, v: u32) -> u32 {
    PARAMS.get(i).map_or(0, |p| v.clamp(p.min, p.max))
}

/// A responder skips the read-back of at most this share of checks: every
/// `SAMPLE_EVERY`th verified WRITE of a clean QP is still checked.
pub const SAMPLE_EVERY: u32 = 8;

/// Whether the responder reads a WRITE back (document's "clean history" option): after
/// `skip_after` clean checks in a row from one QP, only every [`SAMPLE_EVERY`]th is
/// checked; a mismatch starts the count again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckPolicy {
    clean: u32,
    skipped: u32,
}

impl CheckPolicy {
    /// A QP with no history.
    pub const fn new() -> Self {
        CheckPolicy {
            clean: 0,
            skipped: 0,
        }
    }

    /// Whether to check the next verified WRITE (`false`: skip its read-back).
    pub fn must_check(&mut self, skip_after: u32) -> bool {
        if skip_after == 0 || self.clean < skip_after || self.skipped + 1 >= SAMPLE_EVERY {
            self.skipped = 0;
            return true;
        }
        self.skipped += 1;
        false
    }

    /// The outcome of a check.
    pub fn checked(&mut self, outcome: Outcome) {
        self.clean = match outcome {
            Outcome::Match => self.clean.saturating_add(1),
            Outcome::Mismatch => 0,
        };
    }
}

/// Fault injection: whether a random draw `r` hits a probability of `ppm` per million.
pub const fn inject(r: u32, ppm: u32) -> bool {
    r % 1_000_000 < ppm
}

/// What a requester does with a failed check of its WRITE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFail {
    /// The report answers an attempt already superseded (a duplicate or late NAK), or
    /// names no verified WRITE: ignore it.
    Stale,
    /// Send the WRITE again (the attempt number moved on).
    Resend,
    /// The report names the attempt before the current one: the responder still waits
    /// for the resend (it was lost, or is on its way): send the WRITE again, the same
    /// attempt.
    Again,
    /// Retries exhausted: the WRITE completes with `REM_OP_ERR`.
    Fail,
}

/// A verified WRITE's requester state: the running CRC while its packets are first
/// gathered, and its attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteCrc {
    /// Which CRC.
    pub alg: Alg,
    /// Running CRC (raw) of bytes `[0, off)` of the message.
    pub raw: u32,
    /// Bytes covered by `raw`.
    pub off: u32,
    /// Resends after failed checks.
    pub attempt: u8,
}

impl Default for WriteCrc {
    fn default() -> Self {
        WriteCrc::new(Alg::Crc32)
    }
}

impl WriteCrc {
    /// A WRITE none of whose bytes were gathered yet, checked with `alg`.
    pub const fn new(alg: Alg) -> Self {
        WriteCrc {
            alg,
            raw: CRC_INIT,
            off: 0,
            attempt: 0,
        }
    }

    /// Whether the payload of a packet at message offset `off` extends the CRC (its
    /// first transmission; a resent packet was counted already).
    pub const fn due(&self, off: u32) -> bool {
        off == self.off
    }

    /// The payload at the current offset was gathered: `raw` is the CRC over it too.
    pub fn fed(&mut self, raw: u32, n: u32) {
        self.raw = raw;
        self.off = self.off.saturating_add(n);
    }

    /// The CRC header of the last packet (the message's CRC once every byte was fed).
    pub const fn header(&self) -> Vcrc {
        Vcrc {
            crc: crc_finish(self.raw),
            attempt: self.attempt,
            alg: self.alg,
        }
    }

    /// A NAK reported a failed check of `attempt`; `retries`: how many resends are
    /// allowed.
    pub fn failed(&mut self, attempt: u8, retries: u32) -> OnFail {
        if attempt.wrapping_add(1) == self.attempt {
            return OnFail::Again;
        }
        if attempt != self.attempt {
            return OnFail::Stale;
        }
        if u32::from(self.attempt) >= retries {
            return OnFail::Fail;
        }
        self.attempt = self.attempt.wrapping_add(1);
        OnFail::Resend
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn crc_check_values() {
        let c = |d: &[u8]| crc(&TableCrc, Alg::Crc32c, d);
        // RFC 3720 B.4 test vectors and the common "123456789" check value.
        assert_eq!(c(b"123456789"), 0xe306_9283);
        assert_eq!(c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(c(&[0xffu8; 32]), 0x62a8_ab43);
        let inc: [u8; 32] = core::array::from_fn(|i| i as u8);
        assert_eq!(c(&inc), 0x46dd_794e);
        assert_eq!(c(&[]), 0);
        // CRC-32 (IEEE 802.3) check value.
        assert_eq!(crc(&TableCrc, Alg::Crc32, b"123456789"), 0xcbf4_3926);
        assert_eq!(crc(&TableCrc, Alg::Crc32, &[]), 0);
    }

    #[test]
    fn alg_codes() {
        for a in [Alg::Crc32c, Alg::Crc32] {
            assert_eq!(Alg::from_wire(a.wire()), Some(a));
        }
        assert_eq!(Alg::from_wire(2), None);
        // A header from a peer that predates the algorithm byte (zero) is CRC32C.
        assert_eq!(
            Vcrc::decode(&[0, 0, 0, 1, 0, 0, 0, 0]).unwrap().alg,
            Alg::Crc32c
        );
        assert_eq!(
            Vcrc::decode(&[0, 0, 0, 1, 0, 9, 0, 0]),
            Err(HdrError::Malformed)
        );
    }

    #[test]
    fn headers_and_short_buffers() {
        for n in 0..VCRC_LEN {
            assert!(Vcrc::decode(&[0u8; VCRC_LEN][..n]).is_err());
            assert!(Vcrc::default().encode(&mut [0u8; VCRC_LEN][..n]).is_err());
        }
        let r = Vres {
            outcome: Outcome::Mismatch,
            attempt: 2,
        };
        for n in 0..VRES_LEN {
            assert!(Vres::decode(&[1u8; VRES_LEN][..n]).is_err());
            assert!(r.encode(&mut [0u8; VRES_LEN][..n]).is_err());
        }
        let mut b = [0u8; VRES_LEN];
        r.encode(&mut b).unwrap();
        assert_eq!(b, [1, 2, 0, 0]);
        assert_eq!(Vres::decode(&b).unwrap(), r);
        assert_eq!(Vres::decode(&[7, 0, 0, 0]), Err(HdrError::Malformed));
    }

    #[test]
    fn check_policy_skips_only_after_a_clean_streak() {
        let mut p = CheckPolicy::new();
        // Never skips with the knob at 0.
        for _ in 0..100 {
            assert!(p.must_check(0));
            p.checked(Outcome::Match);
        }
        let mut p = CheckPolicy::new();
        for _ in 0..3 {
            assert!(p.must_check(3));
            p.checked(Outcome::Match);
        }
        // Then one in SAMPLE_EVERY is checked.
        let checked = (0..8 * SAMPLE_EVERY).filter(|_| p.must_check(3)).count();
        assert_eq!(checked, 8);
        // A mismatch: every WRITE is checked again until the streak is rebuilt.
        p.checked(Outcome::Mismatch);
        assert!(p.must_check(3) && p.must_check(3) && p.must_check(3));
    }

    #[test]
    fn attempts_and_stale_reports() {
        let mut w = WriteCrc::new(Alg::Crc32);
        assert_eq!(w.failed(1, 3), OnFail::Stale);
        assert_eq!(w.failed(0, 3), OnFail::Resend);
        // The same report again: the responder still waits for the resend.
        assert_eq!(w.failed(0, 3), OnFail::Again);
        assert_eq!(w.header().attempt, 1);
        assert_eq!(w.failed(1, 3), OnFail::Resend);
        // Older reports are stale.
        assert_eq!(w.failed(0, 3), OnFail::Stale);
        assert_eq!(w.failed(2, 3), OnFail::Resend);
        assert_eq!(w.failed(3, 3), OnFail::Fail);
        assert_eq!(w.failed(2, 3), OnFail::Again);
        assert_eq!(w.header().attempt, 3);
        assert_eq!(WriteCrc::default().failed(0, 0), OnFail::Fail);
    }

    #[test]
    fn injection_rate() {
        assert!(!inject(0, 0));
        assert!(inject(999_999, 1_000_000));
        let hits = (0..1_000_000u32).filter(|&r| inject(r, 10_000)).count();
        assert_eq!(hits, 10_000);
    }

    proptest! {
        /// Feeding a message in packets of any size, each the first time it is sent
        /// (resends in between change nothing), gives the CRC of the whole message.
        #[test]
        fn crc_fed_in_packets(data in proptest::collection::vec(any::<u8>(), 0..5000),
                              mtu in 1usize..2048, resend in any::<u64>(), c in any::<bool>()) {
            let alg = if c { Alg::Crc32c } else { Alg::Crc32 };
            let mut w = WriteCrc::new(alg);
            let mut off = 0usize;
            let mut k = 0u32;
            while off < data.len() || (data.is_empty() && off == 0 && w.off == 0 && k == 0) {
                let end = (off + mtu).min(data.len());
                let chunk = &data[off..end];
                prop_assert!(w.due(off as u32));
                let raw = TableCrc.update(alg, w.raw, chunk);
                w.fed(raw, chunk.len() as u32);
                // A resend of an earlier packet is not due.
                if resend >> (k % 64) & 1 == 1 && off > 0 {
                    prop_assert!(!w.due(0));
                }
                k += 1;
                off = end;
                if data.is_empty() {
                    break;
                }
            }
            prop_assert_eq!(w.header().crc, crc(&TableCrc, alg, &data));
        }

        #[test]
        fn header_round_trips(crc in any::<u32>(), attempt in any::<u8>(), mis in any::<bool>(),
                              c in any::<bool>()) {
            let alg = if c { Alg::Crc32c } else { Alg::Crc32 };
            let v = Vcrc { crc, attempt, alg };
            let mut b = [0u8; VCRC_LEN];
            v.encode(&mut b).unwrap();
            prop_assert_eq!(Vcrc::decode(&b).unwrap(), v);
            let r = Vres { outcome: if mis { Outcome::Mismatch } else { Outcome::Match }, attempt };
            let mut b = [0u8; VRES_LEN];
            r.encode(&mut b).unwrap();
            prop_assert_eq!(Vres::decode(&b).unwrap(), r);
        }

        /// Any bytes: decoding never panics.
        #[test]
        fn decoders_never_panic(b in proptest::collection::vec(any::<u8>(), 0..16)) {
            let _ = Vcrc::decode(&b);
            let _ = Vres::decode(&b);
        }
    }
}
