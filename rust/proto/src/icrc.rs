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
    let ip_len = if ip_packet.first() == Some(&0x45) {
        IPV4_HLEN
    } else {
        IPV6_HLEN
    };
    let rest = ip_packet
        .get(ip_len + UDP_HLEN + BTH_LEN..)
        .ok_or(IcrcError::Truncated)?;
    Ok(finish(c.update(crc, rest)))
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
}
