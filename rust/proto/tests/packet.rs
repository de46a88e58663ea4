// SPDX-License-Identifier: GPL-2.0
//! Packet-level properties: every opcode builds and parses back; arbitrary bytes never
//! make the parser panic; the ICRC ignores exactly the masked fields.
// Tests index, unwrap and panic freely: a failure is the test failing.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use proptest::prelude::*;
use rrxe_proto::bth::Bth;
use rrxe_proto::ccwire::{TsEcho, TS_ECHO_LEN, TS_LEN, XF_TS};
use rrxe_proto::exthdr::{Aeth, AtomicAckEth, AtomicEth, Deth, Feth, Reth, Syndrome};
use rrxe_proto::icrc::{self, TableCrc32};
use rrxe_proto::opcode::{flags, info, ICRC_LEN};
use rrxe_proto::packet::{parse, write_headers, Ext, ParseError};
use rrxe_proto::psn::Psn;
use rrxe_proto::sel::{Sack, Xeth, SACK_LEN, XETH_LEN, XF_EXT, XF_PROBE, XF_RETX, XF_SOLO};
use rrxe_proto::verify::{Alg, Outcome, Vcrc, Vres, VCRC_LEN, VRES_LEN, XF_VCRC, XF_VFAIL};

fn all_ext() -> Ext {
    Ext {
        reth: Some(Reth {
            va: 0x1122_3344_5566_7788,
            rkey: 0xdead_beef,
            len: 4096,
        }),
        aeth: Some(Aeth {
            syndrome: Syndrome::Ack(0x1f),
            msn: 0x00ab_cdef,
        }),
        atomic: Some(AtomicEth {
            va: 0x1000,
            rkey: 7,
            swap_add: 9,
            compare: 3,
        }),
        atomic_ack: Some(AtomicAckEth {
            orig: 0x0102_0304_0506_0708,
        }),
        deth: Some(Deth {
            qkey: 0x8001_0000,
            sqpn: 0x12,
        }),
        imm: Some(0xcafe_f00d),
        ieth: Some(0x0000_1234),
        xeth: Some(Xeth {
            wqe_seq: 77,
            offset: 2048,
            total: 9000,
        }),
        sack: Some(Sack {
            base: Psn::new(0xff_fff0),
            full: true,
            missing: 0x8000_0000_0000_0000_0000_0000_0000_0005,
        }),
        ts: Some(0x8765_4321),
        ts_echo: Some(TsEcho {
            tx: 0xfeed_0001,
            rx: 0x0000_beef,
        }),
        feth: Some(Feth { plt: 2, sel: 1 }),
        vcrc: Some(Vcrc {
            crc: 0x1234_5678,
            attempt: 3,
            alg: Alg::Crc32c,
        }),
        vres: Some(Vres {
            outcome: Outcome::Mismatch,
            attempt: 3,
        }),
    }
}

fn build(opcode: u8, payload: &[u8]) -> Vec<u8> {
    build_x(opcode, payload, 0)
}

fn build_x(opcode: u8, payload: &[u8], xflags: u8) -> Vec<u8> {
    let pad = ((4 - payload.len() % 4) % 4) as u8;
    let bth = Bth {
        opcode,
        pad,
        xflags,
        pkey: 0xffff,
        dqpn: 0x11,
        psn: Psn::new(5),
        ..Bth::default()
    };
    let mut buf = vec![0u8; 64 + payload.len() + 4 + ICRC_LEN];
    let h = write_headers(&bth, &all_ext(), &mut buf).unwrap();
    buf.truncate(h);
    buf.extend_from_slice(payload);
    buf.extend(std::iter::repeat_n(0, pad as usize));
    buf.extend_from_slice(&[1, 2, 3, 4]);
    buf
}

#[test]
fn every_opcode_round_trips() {
    for opcode in 0..=255u8 {
        let Some(i) = info(opcode) else { continue };
        let payload: &[u8] = if i.has(flags::PAYLOAD) {
            b"hello, rdma"
        } else {
            b""
        };
        let buf = build(opcode, payload);
        let p = parse(&buf).unwrap_or_else(|e| panic!("{opcode:#x}: {e:?}"));
        assert_eq!(p.payload, payload, "{opcode:#x}");
        assert_eq!(p.icrc, [1, 2, 3, 4]);
        let e = all_ext();
        assert_eq!(p.reth(), if i.has(flags::RETH) { e.reth } else { None });
        assert_eq!(p.aeth(), if i.has(flags::AETH) { e.aeth } else { None });
        assert_eq!(
            p.atomic_eth(),
            if i.has(flags::ATMETH) { e.atomic } else { None }
        );
        assert_eq!(
            p.atomic_ack(),
            if i.has(flags::ATMACK) {
                e.atomic_ack
            } else {
                None
            }
        );
        assert_eq!(p.deth(), if i.has(flags::DETH) { e.deth } else { None });
        assert_eq!(p.imm(), if i.has(flags::IMMDT) { e.imm } else { None });
        assert_eq!(p.ieth(), if i.has(flags::IETH) { e.ieth } else { None });
        assert_eq!(p.feth(), if i.has(flags::FETH) { e.feth } else { None });
    }
}

/// With the verification flags, the last packet of a WRITE carries the CRC header and an
/// ACK the result header, after the XETH or SACK and before the timestamps; every other
/// opcode ignores the flags.
#[test]
fn verification_headers_round_trip() {
    for opcode in 0..=255u8 {
        let Some(i) = info(opcode) else { continue };
        let payload: &[u8] = if i.has(flags::PAYLOAD) { b"xyz" } else { b"" };
        for base in [0, XF_EXT, XF_TS, XF_EXT | XF_TS] {
            let plain = build_x(opcode, payload, base);
            let buf = build_x(opcode, payload, base | XF_VCRC | XF_VFAIL);
            let p = parse(&buf).unwrap_or_else(|e| panic!("{opcode:#x}: {e:?}"));
            assert_eq!(p.payload, payload, "{opcode:#x}");
            let e = all_ext();
            let (c, r, extra) = if i.has(flags::WRITE) && i.has(flags::LAST) {
                (e.vcrc.map(Ok), None, VCRC_LEN)
            } else if opcode == 0x11 {
                (None, e.vres.map(Ok), VRES_LEN)
            } else {
                (None, None, 0)
            };
            assert_eq!((p.vcrc(), p.vres()), (c, r), "{opcode:#x}");
            assert_eq!(buf.len(), plain.len() + extra, "{opcode:#x}");
            // The other rrxe headers are still read where they were.
            let q = parse(&plain).unwrap();
            assert_eq!((p.xeth(), p.sack()), (q.xeth(), q.sack()), "{opcode:#x}");
            assert_eq!((p.ts(), p.ts_echo()), (q.ts(), q.ts_echo()), "{opcode:#x}");
            assert_eq!((q.vcrc(), q.vres()), (None, None));
        }
    }
    // A flagged WRITE ONLY too short for its CRC header is truncated, not misread.
    let mut short = build_x(0x0a, b"", XF_VCRC);
    short.drain(28..32);
    assert_eq!(parse(&short).unwrap_err(), ParseError::Truncated);
}

/// The rrxe flags of BTH byte 8 are distinct bits below the AckReq bit, and the solo
/// hint is only a hint: with or without it every opcode parses to the same headers and
/// payload, whatever other rrxe headers are present.
#[test]
fn solo_flag_is_only_a_hint() {
    let all = [XF_EXT, XF_PROBE, XF_RETX, XF_TS, XF_VCRC, XF_VFAIL, XF_SOLO];
    assert_eq!(all.iter().fold(0u8, |a, f| a | f).count_ones(), 7);
    assert!(all.iter().all(|f| f.count_ones() == 1 && f & 0x80 == 0));
    for opcode in 0..=255u8 {
        let Some(i) = info(opcode) else { continue };
        let payload: &[u8] = if i.has(flags::PAYLOAD) { b"xyz" } else { b"" };
        for base in [0, XF_EXT, XF_EXT | XF_TS | XF_VCRC] {
            let plain = build_x(opcode, payload, base);
            let buf = build_x(opcode, payload, base | XF_SOLO);
            assert_eq!(buf.len(), plain.len(), "{opcode:#x}");
            let (p, q) = (parse(&buf).unwrap(), parse(&plain).unwrap());
            assert_eq!(p.bth.xflags, base | XF_SOLO);
            assert_eq!(p.payload, q.payload, "{opcode:#x}");
            assert_eq!((p.xeth(), p.sack()), (q.xeth(), q.sack()), "{opcode:#x}");
            assert_eq!((p.ts(), p.vcrc()), (q.ts(), q.vcrc()), "{opcode:#x}");
            assert_eq!(p.reth(), q.reth(), "{opcode:#x}");
        }
    }
}

/// With the rrxe flag, packets with payload (not CNPs) carry an XETH and ACKs a SACK after
/// the IBTA headers; every other opcode ignores the flag.
#[test]
fn rrxe_headers_round_trip() {
    for opcode in 0..=255u8 {
        let Some(i) = info(opcode) else { continue };
        let payload: &[u8] = if i.has(flags::PAYLOAD) { b"xyz" } else { b"" };
        let plain = build(opcode, payload);
        let buf = build_x(opcode, payload, XF_EXT);
        let p = parse(&buf).unwrap_or_else(|e| panic!("{opcode:#x}: {e:?}"));
        assert_eq!(p.payload, payload, "{opcode:#x}");
        let e = all_ext();
        // (A CNP's payload is its reserved bytes: no XETH.)
        let (x, s, extra) = if i.has(flags::PAYLOAD) && !i.has(flags::CNP) {
            (e.xeth, None, XETH_LEN)
        } else if opcode == 0x11 {
            (None, e.sack, SACK_LEN)
        } else {
            (None, None, 0)
        };
        assert_eq!((p.xeth(), p.sack()), (x, s), "{opcode:#x}");
        assert_eq!(buf.len(), plain.len() + extra, "{opcode:#x}");
        // Without the flag nothing is read as an rrxe header.
        let q = parse(&plain).unwrap();
        assert_eq!((q.xeth(), q.sack()), (None, None));
    }
    // A flagged packet too short for its XETH is truncated, not misread.
    let mut short = build_x(0x04, b"", XF_EXT);
    short.drain(12..20);
    assert_eq!(parse(&short).unwrap_err(), ParseError::Truncated);
}

/// With the timestamp flag, requests with payload carry a transmit timestamp and ACKs an
/// echo, after the XETH or SACK when both flags are set; every other opcode ignores it.
#[test]
fn timestamp_headers_round_trip() {
    for opcode in 0..=255u8 {
        let Some(i) = info(opcode) else { continue };
        let payload: &[u8] = if i.has(flags::PAYLOAD) { b"xyz" } else { b"" };
        for sel in [0, XF_EXT] {
            let plain = build_x(opcode, payload, sel);
            let buf = build_x(opcode, payload, sel | XF_TS);
            let p = parse(&buf).unwrap_or_else(|e| panic!("{opcode:#x}: {e:?}"));
            assert_eq!(p.payload, payload, "{opcode:#x}");
            let e = all_ext();
            let (t, echo, extra) = if i.has(flags::PAYLOAD) && i.has(flags::REQ) {
                (e.ts, None, TS_LEN)
            } else if opcode == 0x11 {
                (None, e.ts_echo, TS_ECHO_LEN)
            } else {
                (None, None, 0)
            };
            assert_eq!((p.ts(), p.ts_echo()), (t, echo), "{opcode:#x}");
            assert_eq!(buf.len(), plain.len() + extra, "{opcode:#x}");
            // The selective header is still where it was.
            let q = parse(&plain).unwrap();
            assert_eq!((p.xeth(), p.sack()), (q.xeth(), q.sack()), "{opcode:#x}");
            assert_eq!((q.ts(), q.ts_echo()), (None, None));
        }
    }
    let mut short = build_x(0x11, b"", XF_TS);
    short.drain(16..20);
    assert_eq!(parse(&short).unwrap_err(), ParseError::Truncated);
}

#[test]
fn malformed_packets_are_classified() {
    let good = build(0x04, b"abcd");
    assert!(parse(&good).is_ok());
    for n in 0..good.len() - 4 {
        assert!(parse(&good[..n]).is_err(), "truncated to {n}");
    }
    let mut bad = good.clone();
    bad[0] = 0x15; // reserved RC opcode
    assert_eq!(parse(&bad).unwrap_err(), ParseError::UnknownOpcode(0x15));
    let mut bad = good.clone();
    bad[1] |= 0x01; // TVer 1
    assert_eq!(parse(&bad).unwrap_err(), ParseError::BadTver);
    // READ request with payload
    let mut rd = build(0x0c, b"");
    rd.splice(28..28, [0u8; 4]);
    assert_eq!(parse(&rd).unwrap_err(), ParseError::UnexpectedPayload);
    // pad count larger than the payload (payload-length underflow)
    let mut under = build(0x04, b"");
    under[1] |= 0x30;
    assert_eq!(parse(&under).unwrap_err(), ParseError::BadPad);
}

/// The RoCEv2 headers of an IPv4 packet for the ICRC tests.
fn ipv4_packet(udp_payload: &[u8]) -> Vec<u8> {
    let total = 20 + 8 + udp_payload.len() + ICRC_LEN;
    let mut p = vec![0x45, 0x00];
    p.extend_from_slice(&(total as u16).to_be_bytes());
    p.extend_from_slice(&[0x12, 0x34, 0x40, 0x00, 64, 17, 0xab, 0xcd]);
    p.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    p.extend_from_slice(&[0xc0, 0x00, 0x12, 0xb7]);
    p.extend_from_slice(&((8 + udp_payload.len() + ICRC_LEN) as u16).to_be_bytes());
    p.extend_from_slice(&[0x55, 0x66]);
    p.extend_from_slice(udp_payload);
    p
}

proptest! {
    #[test]
    fn parser_never_panics(buf in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(p) = parse(&buf) {
            prop_assert!(p.hdr.len() + p.payload_and_pad.len() + ICRC_LEN == buf.len());
            prop_assert!(p.payload.len() <= p.payload_and_pad.len());
        }
    }

    #[test]
    fn icrc_ignores_masked_fields(payload in proptest::collection::vec(any::<u8>(), 0..64),
                                  tos in any::<u8>(), ttl in any::<u8>(), csum in any::<u16>(),
                                  ucsum in any::<u16>(), b4 in any::<u8>()) {
        let mut pkt = build(0x04, &payload);
        pkt.truncate(pkt.len() - ICRC_LEN);
        let a = ipv4_packet(&pkt);
        let mut b = a.clone();
        b[1] = tos;
        b[8] = ttl;
        b[10..12].copy_from_slice(&csum.to_be_bytes());
        b[26..28].copy_from_slice(&ucsum.to_be_bytes());
        b[28 + 4] = b4;
        prop_assert_eq!(icrc::compute(&TableCrc32, &a), icrc::compute(&TableCrc32, &b));
    }

    #[test]
    fn icrc_covers_everything_else(payload in proptest::collection::vec(any::<u8>(), 1..64),
                                   pos in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let mut pkt = build(0x04, &payload);
        pkt.truncate(pkt.len() - ICRC_LEN);
        let a = ipv4_packet(&pkt);
        let masked = [1usize, 8, 10, 11, 26, 27, 32];
        let i = pos.index(a.len());
        prop_assume!(!masked.contains(&i) && i != 0);
        let mut b = a.clone();
        b[i] ^= flip;
        prop_assert_ne!(icrc::compute(&TableCrc32, &a), icrc::compute(&TableCrc32, &b));
    }
}

#[test]
fn icrc_rejects_non_roce_ip() {
    assert_eq!(
        icrc::compute(&TableCrc32, &[0x46; 60]),
        Err(icrc::IcrcError::BadIpHeader)
    );
    assert_eq!(
        icrc::compute(&TableCrc32, &[]),
        Err(icrc::IcrcError::Truncated)
    );
    assert_eq!(
        icrc::compute(&TableCrc32, &[0x45; 30]),
        Err(icrc::IcrcError::Truncated)
    );
}
