// SPDX-License-Identifier: GPL-2.0
//! Transmission: the path (route) of a connected QP or an address handle, and one
//! RoCEv2 packet built into an skb, its ICRC computed, handed to the IP layer.

use super::frame::ecn;
use super::stats::Stats;
use crate::kabi::crc::KernelCrc32;
use crate::kabi::netdev::NetNs;
use crate::kabi::skb::{Dst, SkBuff};
use crate::kabi::verbs::Av;
use crate::proto::bth::Bth;
use crate::proto::icrc;
use crate::proto::opcode::{op, ICRC_LEN};
use crate::proto::packet::{self, write_headers, Ext};
use kernel::prelude::*;

/// Where a connected QP sends: addresses, UDP source port and a cached route.
pub(crate) struct Path {
    v6: bool,
    saddr: [u8; 16],
    pub(crate) daddr: [u8; 16],
    sport: u16,
    tclass: u8,
    hop_limit: u8,
    dst: Dst,
}

impl Path {
    pub(crate) fn new(net: NetNs, av: &Av, qpn: u32, dest_qpn: u32) -> Result<Path> {
        let v4 = |g: &[u8; 16]| [g[12], g[13], g[14], g[15]];
        let dst = if av.v6 {
            Dst::route6(net, av.ifindex, &av.sgid, &av.dgid)
        } else {
            Dst::route4(net, av.ifindex, v4(&av.sgid), v4(&av.dgid))
        }
        .ok_or(ENETUNREACH)?;
        // rdma_get_udp_sport-style entropy from the QPNs, in the 0xc000.. range.
        let h = (qpn ^ dest_qpn.rotate_left(7)).wrapping_mul(0x9e37_79b1) >> 18;
        Ok(Path {
            v6: av.v6,
            saddr: av.sgid,
            daddr: av.dgid,
            sport: 0xc000 | (h as u16 & 0x3fff),
            tclass: av.tclass,
            hop_limit: if av.hop_limit == 0 { 64 } else { av.hop_limit },
            dst,
        })
    }
}

/// Writes the payload bytes from offset `at` on into the slice (gathered from memory
/// regions): all of them at once into the skb, or in pieces when the skb could not be
/// allocated (see [`xmit`]). `Ok(Some(raw))`: it also computed the bytes' CRC-32 from 0
/// (`crc32_le(0, ..)`), which the ICRC then reuses instead of reading them again; `Err`
/// carries the completion status to report.
pub(crate) type Filler<'a> = &'a dyn Fn(u32, &mut [u8]) -> core::result::Result<Option<u32>, u32>;

/// The piece a payload is gathered in when its packet could not be allocated.
const LOST_PIECE: usize = 256;

/// Where a packet's payload comes from: written straight into the skb.
pub(crate) enum Payload<'a> {
    /// No payload.
    None,
    /// `len` bytes produced by a filler.
    Fill(usize, Filler<'a>),
    /// As [`Payload::Fill`], then the sealer rewrites the headers once the payload is in
    /// place (a verified WRITE's last packet carries the CRC of what was gathered).
    Sealed(usize, Filler<'a>, &'a dyn Fn(&mut [u8])),
}

/// One packet to send: BTH, extension headers and payload.
pub(crate) struct TxPkt<'a> {
    pub(crate) bth: Bth,
    pub(crate) ext: Ext,
    pub(crate) payload: Payload<'a>,
}

/// Builds and sends one packet on `path`. `Ok(false)`: the IP stack refused it at once
/// (its device queue was full; counted in `tx_errors`), which the caller may treat as a
/// loss on the wire or send again. `Err(status)` if the payload could not be gathered (a
/// completion status), `Err(LOC_QP_OP_ERR)` for any other failure.
///
/// A packet whose skb cannot be allocated (memory is short, or `fail`: the fault point
/// said so) is lost, as on the wire, and counted in `nomem`: the protocol recovers it.
/// Its payload is still gathered, in pieces on the stack, so that the gathering's checks
/// (a bad key fails the work request) and a verified WRITE's CRC see what they would have.
///
/// Every packet but a CNP leaves ECN-capable (ECT(0)), so a congested router marks it
/// instead of dropping it: data, and also requests and ACKs without payload, which an AQM
/// drops early once its queue passes the marking threshold if they are not ECN-capable
/// (a lost ACK costs a retransmission timeout). CNPs, the congestion signal itself, stay
/// not-ECT. The traffic class's upper six bits (DSCP) are the path's.
pub(crate) fn xmit(
    stats: &Stats,
    fail: bool,
    path: &Path,
    p: &TxPkt<'_>,
) -> core::result::Result<bool, u32> {
    use crate::proto::uapi::wc_status::LOC_QP_OP_ERR as E;
    let tclass = if p.bth.opcode != op::CNP {
        (path.tclass & !ecn::CE) | ecn::ECT0
    } else {
        path.tclass & !ecn::CE
    };
    let hlen = packet::headers_len(&p.bth).ok_or(E)?;
    let plen = match p.payload {
        Payload::None => 0,
        Payload::Fill(n, _) | Payload::Sealed(n, _, _) => n,
    };
    let pad = usize::from(p.bth.pad);
    let total = hlen + plen + pad + ICRC_LEN;
    let len = u32::try_from(total).map_err(|_| E)?;
    let skb = if fail {
        None
    } else {
        SkBuff::alloc_tx(path.dst.dev(), len).ok()
    };
    let Some(mut skb) = skb else {
        stats.nomem.inc();
        return gather_lost(&p.payload).map(|()| true);
    };
    let mut r = Ok(None);
    skb.put_with(total, |buf| {
        if write_headers(&p.bth, &p.ext, buf).is_err() {
            r = Err(E);
        }
        match (&p.payload, buf.get_mut(hlen..hlen + plen)) {
            (Payload::Fill(n, fill), Some(d)) | (Payload::Sealed(n, fill, _), Some(d))
                if *n == d.len() =>
            {
                r = r.and_then(|_| fill(0, d));
            }
            _ => {}
        }
        if let (Payload::Sealed(_, _, seal), Some(h)) = (&p.payload, buf.get_mut(..hlen)) {
            seal(h);
        }
        for b in buf.iter_mut().skip(hlen + plen) {
            *b = 0;
        }
    })
    .map_err(|_| E)?;
    let known = r?;
    if path.v6 {
        skb.push_ip6(
            &path.dst,
            &path.saddr,
            &path.daddr,
            tclass,
            path.hop_limit,
            path.sport,
        );
    } else {
        let v4 = |g: &[u8; 16]| [g[12], g[13], g[14], g[15]];
        skb.push_ip4(
            &path.dst,
            v4(&path.saddr),
            v4(&path.daddr),
            tclass,
            path.hop_limit,
            path.sport,
        );
    }
    let l3 = skb.l3_mut();
    let n = l3.len().checked_sub(ICRC_LEN).ok_or(E)?;
    let l3 = l3.get(..n).ok_or(E)?;
    let crc = match known {
        // The payload starts `hlen` bytes after the BTH, which is where the RoCE part of
        // the `total` bytes put above begins.
        Some(raw) => {
            let at = (n + ICRC_LEN).checked_sub(total).ok_or(E)? + hlen;
            icrc::compute_known(&KernelCrc32, l3, at, plen as u32, raw)
        }
        None => icrc::compute(&KernelCrc32, l3),
    }
    .map_err(|_| E)?;
    let l3 = skb.l3_mut();
    l3.get_mut(n..).ok_or(E)?.copy_from_slice(&crc);
    match skb.send(path.v6) {
        Ok(()) => {
            stats.tx_packets.inc();
            stats.tx_bytes.add(total as u64);
            Ok(true)
        }
        Err(_) => {
            // The stack dropped it (queue full, no neighbour).
            stats.tx_errors.inc();
            Ok(false)
        }
    }
}

/// Gathers the payload of a packet that could not be allocated, a piece at a time.
fn gather_lost(payload: &Payload<'_>) -> core::result::Result<(), u32> {
    let (Payload::Fill(n, fill) | Payload::Sealed(n, fill, _)) = payload else {
        return Ok(());
    };
    let mut piece = [0u8; LOST_PIECE];
    let mut at = 0;
    while at < *n {
        let k = (*n - at).min(LOST_PIECE);
        let d = piece
            .get_mut(..k)
            .ok_or(crate::proto::uapi::wc_status::LOC_QP_OP_ERR)?;
        fill(at as u32, d)?;
        at += k;
    }
    Ok(())
}
