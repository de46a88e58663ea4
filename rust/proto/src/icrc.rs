// SPDX-License-Identifier: GPL-2.0
//! RoCEv2 invariant CRC (IBTA annex A17.3.3).
//!
//! The ICRC is a CRC-32 (the Ethernet polynomial, reflected) over: eight 0xff bytes standing
//! for the masked LRH, the IP header, the UDP header, the BTH and everything after it up to
//! the ICRC itself, where the fields a network may rewrite are replaced by ones: IPv4 TOS,
//! TTL and header checksum; IPv6 traffic class, flow label and hop limit; the UDP checksum;
//! and BTH byte 4 (FECN, BECN, reserved). The complement of the CRC is sent little-endian.

use super::opcode::BTH_LEN;

/// CRC-32 (reflected polynomial 0xedb88320) without pre- or post-inversion, as the
/// kernel's `crc32_le(seed, data, len)`. The module uses the kernel's accelerated one; the
/// host and the tests use [`TableCrc32`].
pub trait Crc32 {
    /// Continues `crc` over `data`.
    fn update(&self, crc: u32, data: &[u8]) -> u32;
}

/// Byte-at-a-time table CRC-32.
pub struct TableCrc32;

static TABLE: [u32; 256] = super::crctab::reflected_table(0xedb8_8320);

impl Crc32 for TableCrc32 {
    fn update(&self, crc: u32, data: &[u8]) -> u32 {
        super::crctab::update(&TABLE, crc, data)
    }
}

/// CRC state after `0xffffffff` and eight `0xff` bytes (the masked LRH).
pub const ICRC_SEED: u32 = 0xdebb_20e3;

/// IPv4 header length rrxe accepts (no options).
pub const IPV4_HLEN: usize = 20;
/// IPv6 header length.
pub const IPV6_HLEN: usize = 40;
/// UDP header length.
pub const UDP_HLEN: usize = 8;

/// Why an ICRC could not be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcrcError {
    /// Not an IPv4 header without options or an IPv6 header.
    BadIpHeader,
    /// Shorter than the headers.
    Truncated,
}

/// Starts the ICRC over the IP header, UDP header and BTH given in `ip_udp_bth` (the
/// IP header at offset 0, exactly `IP + 8 + 12` bytes long, or longer: the rest is
/// ignored). Returns the running CRC; continue it with [`Crc32::update`] over the
/// remaining headers, payload and pad, then finish with [`finish`].
pub fn start<C: Crc32>(c: &C, ip_udp_bth: &[u8]) -> Result<u32, IcrcError> {
    let ip_len = match ip_udp_bth.first().map(|b| b >> 4) {
        Some(4) if ip_udp_bth.first() == Some(&0x45) => IPV4_HLEN,
        Some(6) => IPV6_HLEN,
        Some(_) => return Err(IcrcError::BadIpHeader),
        None => return Err(IcrcError::Truncated),
    };
    let total = ip_len + UDP_HLEN + BTH_LEN;
    let src = ip_udp_bth.get(..total).ok_or(IcrcError::Truncated)?;
    let mut buf = [0u8; IPV6_HLEN + UDP_HLEN + BTH_LEN];
    let hdr = buf.get_mut(..total).ok_or(IcrcError::Truncated)?;
    hdr.copy_from_slice(src);
    let mut mask = |i: usize, v: u8| {
        if let Some(b) = hdr.get_mut(i) {
            *b = v;
        }
    };
    if ip_len == IPV4_HLEN {
        mask(1, 0xff); // TOS
        mask(8, 0xff); // TTL
        mask(10, 0xff); // header checksum
        mask(11, 0xff);
    } else {
        mask(0, 0x6f); // version 6, traffic class high nibble
        mask(1, 0xff); // traffic class low nibble, flow label
        mask(2, 0xff);
        mask(3, 0xff);
        mask(7, 0xff); // hop limit
    }
    mask(ip_len + 6, 0xff); // UDP checksum
    mask(ip_len + 7, 0xff);
    mask(ip_len + UDP_HLEN + 4, 0xff); // BTH FECN/BECN/resv6
    Ok(c.update(ICRC_SEED, hdr))
}

/// Finishes a running ICRC: the four bytes to put on (or expect from) the wire.
pub const fn finish(crc: u32) -> [u8; 4] {
    (!crc).to_le_bytes()
}

/// ICRC of a whole IP packet (`ip_packet` holds IP header through pad, the ICRC excluded).
pub fn compute<C: Crc32>(c: &C, ip_packet: &[u8]) -> Result<[u8; 4], IcrcError> {
    let crc = start(c, ip_packet)?;
    let rest = ip_packet
        .get(bth_end(ip_packet)..)
        .ok_or(IcrcError::Truncated)?;
    Ok(finish(c.update(crc, rest)))
}

/// Where the bytes after the BTH start in a packet [`start`] accepted.
fn bth_end(ip_packet: &[u8]) -> usize {
    let ip_len = if ip_packet.first() == Some(&0x45) {
        IPV4_HLEN
    } else {
        IPV6_HLEN
    };
    ip_len + UDP_HLEN + BTH_LEN
}

/// CRC-32's polynomial, bit-reversed (bit 31 holds the coefficient of x^0).
const POLY: u32 = 0xedb8_8320;

/// `a * b` modulo CRC-32's polynomial, both in the CRC's bit-reversed representation.
pub const fn mul_mod(a: u32, mut b: u32) -> u32 {
    let mut p = 0;
    let mut i = 0;
    while i < 32 {
        // Bit 31 - i of `a` is its coefficient of x^i; `b` is the original `b` * x^i.
        if a & (1 << (31 - i)) != 0 {
            p ^= b;
        }
        b = if b & 1 != 0 { (b >> 1) ^ POLY } else { b >> 1 };
        i += 1;
    }
    p
}

/// `X8[k]` = x^(8 * 2^k) modulo the polynomial: what appending 2^k zero bytes multiplies a
/// running CRC by.
// Indexing: `k < 32`, the table's length (evaluated at compile time, where an index out of
// range fails the build).
#[allow(clippy::indexing_slicing)]
const X8: [u32; 32] = {
    let mut t = [0u32; 32];
    // x^1, squared three times: x^8.
    let mut x = 1u32 << 30;
    let mut i = 0;
    while i < 3 {
        x = mul_mod(x, x);
        i += 1;
    }
    let mut k = 0;
    while k < 32 {
        t[k] = x;
        x = mul_mod(x, x);
        k += 1;
    }
    t
};

/// The running CRC `crc` continued over `n` zero bytes, without reading them: with CRC-32's
/// linearity, `update(crc, d) == shift(crc, d.len()) ^ update(0, d)`, so a CRC computed once
/// over some bytes serves two running CRCs (the ICRC and a verified WRITE's message CRC).
/// Costs one multiplication per bit set in `n`.
pub fn shift(crc: u32, n: u32) -> u32 {
    X8.iter()
        .enumerate()
        .filter(|&(k, _)| n & (1 << k) != 0)
        .fold(crc, |r, (_, &x)| mul_mod(x, r))
}

/// As [`compute`], when the CRC-32 of `len` bytes at offset `at` of `ip_packet` (after the
/// BTH) is already known: `raw` = `update(0, bytes)`. Those bytes are not read again.
pub fn compute_known<C: Crc32>(
    c: &C,
    ip_packet: &[u8],
    at: usize,
    len: u32,
    raw: u32,
) -> Result<[u8; 4], IcrcError> {
    let crc = start(c, ip_packet)?;
    let end = at.checked_add(len as usize).ok_or(IcrcError::Truncated)?;
    let before = ip_packet
        .get(bth_end(ip_packet)..at)
        .ok_or(IcrcError::Truncated)?;
    let after = ip_packet.get(end..).ok_or(IcrcError::Truncated)?;
    let crc = shift(c.update(crc, before), len) ^ raw;
    Ok(finish(c.update(crc, after)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        // The standard CRC-32 check value.
        assert_eq!(!TableCrc32.update(!0, b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn seed_is_masked_lrh() {
        assert_eq!(TableCrc32.update(!0, &[0xff; 8]), ICRC_SEED);
    }

    #[test]
    fn shift_is_zero_bytes() {
        for n in [0u32, 1, 3, 8, 255, 1024, 4096, 4099] {
            let zeros = [0u8; 4099];
            let z = zeros.get(..n as usize).unwrap_or(&[]);
            assert_eq!(
                shift(0x1234_5678, n),
                TableCrc32.update(0x1234_5678, z),
                "n {n}"
            );
        }
        assert_eq!(mul_mod(1 << 31, 0xdead_beef), 0xdead_beef);
    }

    proptest::proptest! {
        #[test]
        fn linear(crc in proptest::prelude::any::<u32>(),
                  d in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000)) {
            let whole = TableCrc32.update(crc, &d);
            let split = shift(crc, d.len() as u32) ^ TableCrc32.update(0, &d);
            proptest::prop_assert_eq!(whole, split);
        }

        #[test]
        fn known_payload_same_icrc(
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 40..2000),
            v6 in proptest::prelude::any::<bool>(),
            a in 0usize..2000, b in 0usize..2000) {
            let mut pkt = body;
            let ip = if v6 { IPV6_HLEN } else { IPV4_HLEN };
            if let Some(x) = pkt.first_mut() {
                *x = if v6 { 0x60 } else { 0x45 };
            }
            pkt.resize(pkt.len().max(ip + UDP_HLEN + BTH_LEN), 0);
            let lo = ip + UDP_HLEN + BTH_LEN;
            let span = pkt.len() - lo;
            let (x, y) = (a % (span + 1), b % (span + 1));
            let (at, end) = (lo + x.min(y), lo + x.max(y));
            let raw = TableCrc32.update(0, pkt.get(at..end).unwrap_or(&[]));
            let len = (end - at) as u32;
            proptest::prop_assert_eq!(
                compute_known(&TableCrc32, &pkt, at, len, raw),
                compute(&TableCrc32, &pkt)
            );
        }
    }
}
