// SPDX-License-Identifier: GPL-2.0
//! Views of a received RoCEv2 frame: its IP header and UDP payload, and the parsed
//! packet of an skb a QP kept.

use crate::kabi::skb::SkBuff;
use crate::proto::icrc::{IPV4_HLEN, IPV6_HLEN, UDP_HLEN};
use crate::proto::packet::{self, Packet};

/// The RoCEv2 part of a received packet: its IP header and the UDP payload.
pub(crate) fn split(l3: &[u8], v6: bool) -> Option<(&[u8], &[u8])> {
    let iplen = if v6 { IPV6_HLEN } else { IPV4_HLEN };
    if !v6 && l3.first() != Some(&0x45) {
        return None;
    }
    Some((l3.get(..iplen)?, l3.get(iplen + UDP_HLEN..)?))
}

/// The RoCEv2 packet in a received skb the QP kept (its ICRC was checked on arrival).
pub(crate) fn rc_packet(skb: &mut SkBuff) -> Option<Packet<'_>> {
    let (l3, v6) = skb.rx_view().ok()?;
    let (_, udp_payload) = split(l3, v6)?;
    packet::parse(udp_payload).ok()
}

/// ECN codepoints in the IP header's traffic class (RFC 3168).
pub(crate) mod ecn {
    /// ECN-capable transport, codepoint 0: what rrxe's data packets carry.
    pub(crate) const ECT0: u8 = 0x02;
    /// Both ECN bits: the field's mask, and Congestion Experienced.
    pub(crate) const CE: u8 = 0x03;
}

/// Whether a router marked the packet Congestion Experienced (IPv4 TOS or IPv6 traffic
/// class, low two bits).
pub(crate) fn ce(l3: &[u8], v6: bool) -> bool {
    let bits = if v6 {
        l3.get(1).map(|b| b >> 4)
    } else {
        l3.get(1).copied()
    };
    bits.is_some_and(|b| b & ecn::CE == ecn::CE)
}
