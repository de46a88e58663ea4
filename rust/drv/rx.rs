// SPDX-License-Identifier: GPL-2.0
//! The receive demultiplexer (softirq, from the UDP socket): finds the device by
//! ingress netdev or destination address, parses just enough to find the QP, counts and
//! drops what no QP takes (acknowledging a recently destroyed QP's retransmissions), and
//! hands the packet to its QP (`Qp::queue_rx`).

use super::device::Rrxe;
use super::frame;
use super::shared::DevShared;
use crate::kabi::crc::KernelCrc32;
use crate::kabi::ib::IbDev;
use crate::kabi::skb::SkBuff;
use crate::kabi::udp::UdpRx;
use crate::proto::bth::Bth;
use crate::proto::exthdr::Aeth;
use crate::proto::icrc;
use crate::proto::opcode::{flags as f, op, ICRC_LEN};
use crate::proto::packet::{self, Ext, ParseError};
use crate::proto::psn::Psn;
use crate::proto::rc::{self, DEFAULT_PKEY};
use crate::proto::sel;

/// A SEND or WRITE packet `psn` from `l3`'s source for QP `qpn`, which is gone: if
/// the QP was destroyed moments ago and had executed that request, the peer is
/// retransmitting because our ACK was lost, and gets it again (see
/// [`super::shared::Closed`]). `false`: nothing known, the packet is dropped.
fn ack_closed(dev: &DevShared, qpn: u32, psn: Psn, l3: &[u8], v6: bool) -> bool {
    let Some((path, dest_qpn, ack_psn, msn)) = dev.closed_for(qpn, psn) else {
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
        opcode: op::RC_ACK,
        pkey: DEFAULT_PKEY,
        dqpn: dest_qpn,
        psn: ack_psn,
        ..Bth::default()
    };
    let ext = Ext {
        aeth: Some(Aeth {
            syndrome: rc::ACK,
            msn,
        }),
        ..Ext::default()
    };
    dev.xmit_hdr(&path, bth, ext);
    dev.stats.closed_acks.inc();
    true
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
        let data = dev.data();
        let shared = data.shared();
        shared.stats.rx_packets.inc();
        // Before anything can drop it: a router marked it (the QP's responder answers
        // with a CNP, see `Qp::note_ce`).
        let ce = frame::ce(l3, v6);
        if ce {
            shared.stats.np_ecn_marked_roce_packets.inc();
        }
        let Some((_, udp_payload)) = frame::split(l3, v6) else {
            shared.stats.drop_malformed.inc();
            return;
        };
        let len = udp_payload.len();
        shared.stats.rx_bytes.add(len as u64);
        let (dqpn, cnp, retx, solo, key, request) = match packet::parse(udp_payload) {
            Ok(p) => (
                p.bth.dqpn,
                p.info.has(f::CNP),
                // (Not a probe: it carries the highest PSN sent, and ahead of the queue
                // it would make every packet still queued look missing.)
                p.bth.xflags & (sel::XF_RETX | sel::XF_PROBE) == sel::XF_RETX,
                p.bth.xflags & sel::XF_SOLO != 0,
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
        }
        let Some(qp) = data.qp(dqpn) else {
            if cnp {
                shared.stats.drop_qpn.inc();
                return;
            }
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
            } else if !(request && ack_closed(shared, dqpn, key.psn, l3, v6)) {
                shared.stats.drop_qpn.inc();
            }
            return;
        };
        if ce && !key.resp {
            qp.note_ce();
        }
        qp.queue_rx(skb, len, key, retx, solo);
        // (A test's fault point: keep the QP a while, see `fault`.)
        shared.knobs.fault.rx_hold();
        drop(qp);
    }
}
