// SPDX-License-Identifier: GPL-2.0
//! RoCEv2 packet I/O: paths (routes) of connected QPs, transmission with the ICRC, and the
//! receive path from the UDP socket (softirq) to the QPs.

use super::device::{DevShared, Rrxe};
use super::qp::Qp;
use crate::kabi::crc::KernelCrc32;
use crate::kabi::ib::IbDev;
use crate::kabi::skb::{Dst, SkBuff};
use crate::kabi::udp::UdpRx;
use crate::kabi::verbs::Av;
use crate::proto::bth::Bth;
use crate::proto::exthdr::{Aeth, Syndrome};
use crate::proto::icrc::{self, IPV4_HLEN, IPV6_HLEN, UDP_HLEN};
use crate::proto::opcode::{flags as f, ICRC_LEN};
use crate::proto::packet::{self, write_headers, Ext, Packet, ParseError};
use crate::proto::psn::Psn;
use crate::proto::sel;
use kernel::prelude::*;

/// Where a connected QP sends: addresses, UDP source port and a cached route.
pub(crate) struct Path {
    v6: bool,
    saddr: [u8; 16],
    daddr: [u8; 16],
    sport: u16,
    tclass: u8,
    hop_limit: u8,
    dst: Dst,
}

impl Path {
    pub(crate) fn new(dev: &DevShared, av: &Av, qpn: u32, dest_qpn: u32) -> Result<Path> {
        let v4 = |g: &[u8; 16]| [g[12], g[13], g[14], g[15]];
        let dst = if av.v6 {
            Dst::route6(dev.net, av.ifindex, &av.sgid, &av.dgid)
        } else {
            Dst::route4(dev.net, av.ifindex, v4(&av.sgid), v4(&av.dgid))
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

/// Where a packet's payload comes from: written straight into the skb.
pub(crate) enum Payload<'a> {
    /// No payload.
    None,
    /// `len` bytes produced by a filler (gathered from memory regions); `Err` carries the
    /// completion status to report.
    Fill(
        usize,
        &'a dyn Fn(&mut [u8]) -> core::result::Result<(), u32>,
    ),
}

/// One packet to send: BTH, extension headers and payload.
pub(crate) struct TxPkt<'a> {
    pub(crate) bth: Bth,
    pub(crate) ext: Ext,
    pub(crate) payload: Payload<'a>,
}

impl DevShared {
    /// Sends a packet without payload (requests, acknowledgements); a failure is like a
    /// loss on the wire, which the protocol recovers.
    pub(crate) fn xmit_hdr(&self, path: &Path, bth: Bth, ext: Ext) {
        let _ = self.xmit(
            path,
            &TxPkt {
                bth,
                ext,
                payload: Payload::None,
            },
        );
    }

    /// Builds and sends one packet on `path`. `Err(status)` if the payload could not be
    /// gathered (a completion status), `Err(LOC_QP_OP_ERR)` for any other failure.
    pub(crate) fn xmit(&self, path: &Path, p: &TxPkt<'_>) -> core::result::Result<(), u32> {
        use crate::proto::uapi::wc_status::LOC_QP_OP_ERR as E;
        let hlen = packet::headers_len(&p.bth).ok_or(E)?;
        let plen = match p.payload {
            Payload::None => 0,
            Payload::Fill(n, _) => n,
        };
        let pad = usize::from(p.bth.pad);
        let total = hlen + plen + pad + ICRC_LEN;
        let mut skb = SkBuff::alloc_tx(path.dst.dev(), u32::try_from(total).map_err(|_| E)?)
            .map_err(|_| E)?;
        let mut r = Ok(());
        skb.put_with(total, |buf| {
            if write_headers(&p.bth, &p.ext, buf).is_err() {
                r = Err(E);
            }
            if let (Payload::Fill(n, fill), Some(d)) = (&p.payload, buf.get_mut(hlen..hlen + plen))
            {
                if *n == d.len() {
                    r = r.and(fill(d));
                }
            }
            for b in buf.iter_mut().skip(hlen + plen) {
                *b = 0;
            }
        })
        .map_err(|_| E)?;
        r?;
        if path.v6 {
            skb.push_ip6(
                &path.dst,
                &path.saddr,
                &path.daddr,
                path.tclass,
                path.hop_limit,
                path.sport,
            );
        } else {
            let v4 = |g: &[u8; 16]| [g[12], g[13], g[14], g[15]];
            skb.push_ip4(
                &path.dst,
                v4(&path.saddr),
                v4(&path.daddr),
                path.tclass,
                path.hop_limit,
                path.sport,
            );
        }
        let l3 = skb.l3_mut();
        let n = l3.len().checked_sub(ICRC_LEN).ok_or(E)?;
        let crc = icrc::compute(&KernelCrc32, l3.get(..n).ok_or(E)?).map_err(|_| E)?;
        l3.get_mut(n..).ok_or(E)?.copy_from_slice(&crc);
        match skb.send(path.v6) {
            Ok(()) => {
                self.stats.tx_packets.inc();
                Ok(())
            }
            Err(_) => {
                // The stack dropped it (queue full, no neighbour): the retransmit logic
                // recovers, exactly as for a packet lost on the wire.
                self.stats.tx_errors.inc();
                Ok(())
            }
        }
    }
}

/// The RoCEv2 part of a received packet: its IP header and the UDP payload.
fn split(l3: &[u8], v6: bool) -> Option<(&[u8], &[u8])> {
    let iplen = if v6 { IPV6_HLEN } else { IPV4_HLEN };
    if !v6 && l3.first() != Some(&0x45) {
        return None;
    }
    Some((l3.get(..iplen)?, l3.get(iplen + UDP_HLEN..)?))
}

impl DevShared {
    /// Checks and delivers a packet the softirq queued for `qp` (its work item runs this,
    /// on whichever CPU is free: the receive softirq only sorts packets).
    pub(crate) fn deliver(&self, qp: &Qp, mut skb: SkBuff) {
        let Ok((l3, v6)) = skb.rx_view() else {
            return;
        };
        let Some((ip, udp_payload)) = split(l3, v6) else {
            self.stats.drop_malformed.inc();
            return;
        };
        let Ok(pkt) = packet::parse(udp_payload) else {
            self.stats.drop_malformed.inc();
            return;
        };
        let body = l3.get(..l3.len().saturating_sub(ICRC_LEN)).unwrap_or(&[]);
        if icrc::compute(&KernelCrc32, body).ok() != Some(pkt.icrc) {
            self.stats.drop_icrc.inc();
            return;
        }
        let bytes = udp_payload.len();
        if pkt.info.has(f::REQ) {
            if let Some(psn) = qp.on_request(&pkt, ip) {
                qp.keep(psn, skb, bytes);
                return;
            }
        } else {
            qp.on_response(&pkt);
        }
        skb.consume();
    }
}

impl DevShared {
    /// A SEND or WRITE packet `psn` from `l3`'s source for QP `qpn`, which is gone: if
    /// the QP was destroyed moments ago and had executed that request, the peer is
    /// retransmitting because our ACK was lost, and gets it again (see
    /// [`super::device::Closed`]). `false`: nothing known, the packet is dropped.
    fn ack_closed(&self, qpn: u32, psn: Psn, l3: &[u8], v6: bool) -> bool {
        let Some((path, dest_qpn, ack_psn, msn)) = self.closed_for(qpn, psn) else {
            return false;
        };
        let from = if v6 { l3.get(8..24) } else { l3.get(12..16) };
        let to = if v6 {
            path.daddr.get(..)
        } else {
            path.daddr.get(12..)
        };
        if from.is_none() || from != to {
            return false;
        }
        let bth = Bth {
            opcode: crate::proto::opcode::op::RC_ACK,
            pkey: 0xffff,
            dqpn: dest_qpn,
            psn: ack_psn,
            ..Bth::default()
        };
        let ext = Ext {
            aeth: Some(Aeth {
                syndrome: Syndrome::Ack(0x1f),
                msn,
            }),
            ..Ext::default()
        };
        self.xmit_hdr(&path, bth, ext);
        self.stats.closed_acks.inc();
        true
    }
}

/// The RoCEv2 packet in a received skb the QP kept (its ICRC was checked on arrival).
pub(crate) fn rc_packet(skb: &mut SkBuff) -> Option<Packet<'_>> {
    let (l3, v6) = skb.rx_view().ok()?;
    let (_, udp_payload) = split(l3, v6)?;
    packet::parse(udp_payload).ok()
}

impl UdpRx for Rrxe {
    fn rx(mut skb: SkBuff) {
        // The device by ingress netdev; packets between local addresses arrive on `lo`,
        // so fall back to the device that owns the destination address.
        let by_dev = skb.dev().and_then(IbDev::<Rrxe>::get_by_netdev);
        let net = skb.dev().map(|d| d.net());
        let Ok((l3, v6)) = skb.rx_view() else {
            return;
        };
        let daddr = if v6 { l3.get(24..40) } else { l3.get(16..20) };
        let dev = match by_dev {
            Some(d) => d,
            None => {
                let Some(d) = net
                    .zip(daddr)
                    .and_then(|(n, a)| n.local_dev(a).and_then(IbDev::<Rrxe>::get_by_netdev))
                else {
                    return;
                };
                d
            }
        };
        let shared = dev.data().shared();
        shared.stats.rx_packets.inc();
        let Some((_, udp_payload)) = split(l3, v6) else {
            shared.stats.drop_malformed.inc();
            return;
        };
        let len = udp_payload.len();
        let (dqpn, cnp, retx, key, request) = match packet::parse(udp_payload) {
            Ok(p) => (
                p.bth.dqpn,
                p.info.has(f::CNP),
                // (Not a probe: it carries the highest PSN sent, and ahead of the queue
                // it would make every packet still queued look missing.)
                p.bth.xflags & (sel::XF_RETX | sel::XF_PROBE) == sel::XF_RETX,
                sel::RxKey {
                    resp: p.info.has(f::RESP),
                    psn: p.bth.psn,
                },
                // A SEND or WRITE packet: one a destroyed QP can still acknowledge.
                p.info.has(f::SEND) || p.info.has(f::WRITE),
            ),
            Err(ParseError::UnknownOpcode(_)) => {
                shared.stats.drop_opcode.inc();
                return;
            }
            Err(_) => {
                shared.stats.drop_malformed.inc();
                return;
            }
        };
        if cnp {
            shared.stats.cnp_rcvd.inc();
            skb.consume();
            return;
        }
        let Some(qp) = shared.qp(dqpn) else {
            // A corrupted packet is counted as such, whatever QPN its bits now name.
            let body = l3.get(..l3.len().saturating_sub(ICRC_LEN)).unwrap_or(&[]);
            let icrc = l3.get(l3.len().saturating_sub(ICRC_LEN)..);
            if icrc.is_some_and(|c| {
                icrc::compute(&KernelCrc32, body)
                    .ok()
                    .as_ref()
                    .map(|x| &x[..])
                    != Some(c)
            }) {
                shared.stats.drop_icrc.inc();
            } else if !(request && shared.ack_closed(dqpn, key.psn, l3, v6)) {
                shared.stats.drop_qpn.inc();
            }
            return;
        };
        qp.queue_rx(skb, len, key, retx);
    }
}
