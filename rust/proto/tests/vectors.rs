// SPDX-License-Identifier: GPL-2.0
//! Known-answer vectors: RoCEv2 packets that the kernel's rdma_rxe put on the wire
//! (`selftests/lib/capture-rxe.sh`: `ibv_rc_pingpong` between two namespaces, IPv4 and IPv6
//! GIDs), from the IP header to the ICRC. rrxe must compute the same ICRCs and parse them.
// Tests index, unwrap and panic freely: a failure is the test failing.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use rrxe_proto::icrc::{self, TableCrc32};
use rrxe_proto::packet::parse;

const V4_SEND_ONLY: &str = concat!(
    "4500009075cc40004011b08e0a0000010a000002c12112b7007c00000400ffff0000001180c5b6cc7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b1ef90c70",
);

const V4_ACK: &str =
    "4500003030d240004011f5e80a0000020a000001c12112b7001c00001100ffff0000001100c5b6cc1f000001f36fb926";

const V6_SEND_FIRST: &str = concat!(
    "6000000004181140fd000000000000000000000000000001fd000000000000000000000000000002c14412b704180000",
    "0000ffff000000120070fec97b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b5b1ba85c",
);

const V6_SEND_LAST: &str = concat!(
    "6000000001f41140fd000000000000000000000000000001fd000000000000000000000000000002c14412b701f40000",
    "0200ffff000000128070feca7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b",
    "7b7b7b7b7b7b7b7bc5482242",
);

const V6_ACK: &str = concat!(
    "60000000001c1140fd000000000000000000000000000002fd000000000000000000000000000001c14412b7001c0000",
    "1100ffff000000120070feca1f0000012871fa9c",
);

fn bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// (name, packet, opcode, IPv6)
fn vectors() -> Vec<(&'static str, Vec<u8>, u8, bool)> {
    vec![
        ("V4_SEND_ONLY", bytes(V4_SEND_ONLY), 0x04, false),
        ("V4_ACK", bytes(V4_ACK), 0x11, false),
        ("V6_SEND_FIRST", bytes(V6_SEND_FIRST), 0x00, true),
        ("V6_SEND_LAST", bytes(V6_SEND_LAST), 0x02, true),
        ("V6_ACK", bytes(V6_ACK), 0x11, true),
    ]
}

#[test]
fn rdma_rxe_icrc_matches() {
    for (name, pkt, _, _) in vectors() {
        let n = pkt.len() - 4;
        let crc = icrc::compute(&TableCrc32, &pkt[..n]).unwrap();
        assert_eq!(&crc[..], &pkt[n..], "{name}");
    }
}

#[test]
fn rdma_rxe_packets_parse() {
    for (name, pkt, opcode, v6) in vectors() {
        let udp = if v6 { 48 } else { 28 };
        let p = parse(&pkt[udp..]).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(p.bth.opcode, opcode, "{name}");
        assert_eq!(p.bth.tver, 0);
        assert_eq!(p.bth.pkey, 0xffff);
        assert_eq!(&p.icrc[..], &pkt[pkt.len() - 4..]);
        if opcode == 0x11 {
            assert!(p.aeth().is_some(), "{name}");
            assert!(p.payload.is_empty());
        } else {
            assert!(!p.payload.is_empty(), "{name}");
        }
    }
}

#[test]
fn corrupted_vectors_fail_the_icrc() {
    for (name, pkt, _, v6) in vectors() {
        let n = pkt.len() - 4;
        // Flip a payload/header byte outside the masked fields: the ICRC must change.
        let i = if v6 { 48 + 1 } else { 28 + 1 };
        let mut bad = pkt.clone();
        bad[i] ^= 0x01;
        assert_ne!(
            icrc::compute(&TableCrc32, &bad[..n]).unwrap()[..],
            pkt[n..],
            "{name}"
        );
        // Rewriting the TTL / hop limit (masked) must not.
        let mut ttl = pkt.clone();
        ttl[if v6 { 7 } else { 8 }] = 1;
        assert_eq!(
            icrc::compute(&TableCrc32, &ttl[..n]).unwrap()[..],
            pkt[n..],
            "{name}"
        );
    }
}
