// SPDX-License-Identifier: GPL-2.0
//! The bodies of the fuzz targets (`fuzz/fuzz_targets/*.rs`), one function per parser,
//! shared with `tests/fuzz_corpus.rs`, which runs every input of the corpus kept in the
//! tree (`fuzz/seeds/<target>/`) through them in `cargo test`: an input that once crashed
//! a target, added there, stays a regression test without a fuzzer. Each panics (the
//! fuzzer's crash) when a property fails. Not built into the kernel module.
#![allow(
    clippy::indexing_slicing,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used
)]

use super::cc::params::Params;
use super::cc::share::{CnpInfo, RateCc, CNP_INFO_LEN};
use super::exthdr::Feth;
use super::psn::Psn;
use super::sel::{RxWindow, Sack, Xeth};
use super::uapi::{RecvWqe, SendWqe};
use super::verify::{Alg, CheckPolicy, OnFail, Outcome, Vcrc, Vres, WriteCrc};

/// A fuzz target's body.
pub type Body = fn(&[u8]);

/// The targets, by name, as `cargo fuzz list` names them.
pub const TARGETS: &[(&str, Body)] = &[
    ("packet", packet),
    ("icrc", icrc),
    ("sel", sel),
    ("uapi", uapi),
    ("cnp", cnp),
    ("verify", verify),
];

/// The packet parser and every extension-header accessor.
pub fn packet(data: &[u8]) {
    if let Ok(p) = super::packet::parse(data) {
        let _ = (
            p.reth(),
            p.aeth(),
            p.atomic_eth(),
            p.atomic_ack(),
            p.deth(),
            p.imm(),
            p.ieth(),
            p.xeth(),
            p.sack(),
            p.ts(),
            p.ts_echo(),
            p.feth(),
            p.vcrc(),
            p.vres(),
        );
    }
    let _ = super::bth::Bth::decode(data);
}

/// The ICRC over any bytes.
pub fn icrc(data: &[u8]) {
    let _ = super::icrc::compute(&super::icrc::TableCrc32, data);
}

/// XETH, SACK and the receive window under any sequence of arrivals.
pub fn sel(data: &[u8]) {
    if let Ok(x) = Xeth::decode(data) {
        let _ = x.fits(u32::from(data.len() as u16));
    }
    if let Ok(s) = Sack::decode(data) {
        let _ = s.iter().count();
    }
    let mut w = RxWindow::new(Psn::new(0xff_ff00));
    for c in data.chunks(2) {
        let d = u32::from(c[0]) | u32::from(*c.get(1).unwrap_or(&0)) << 8;
        let psn = w.base().add(d & 0x3ff);
        let _ = w.arrive(psn);
        if d & 0x8000 != 0 {
            while w.advance() {}
        }
        if d & 0x2000 != 0 {
            let _ = w.lost_again(psn);
        }
        let _ = w.sack(d & 0x4000 != 0);
    }
}

/// Send and receive WQE slots userspace writes: decoding a sequence into one reused WQE
/// equals a fresh decode of each; an error leaves the WQE unchanged.
pub fn uapi(data: &[u8]) {
    let (Some(&a), Some(&b)) = (data.first(), data.get(1)) else {
        return;
    };
    let (max_sge, max_inline) = (usize::from(a & 0x3f), usize::from(b) * 4);
    let mut w = SendWqe::EMPTY;
    let mut r = RecvWqe::EMPTY;
    for slot in data[2..].chunks(300) {
        let before = w;
        match (
            w.decode_into(slot, max_sge, max_inline),
            SendWqe::decode(slot, max_sge, max_inline),
        ) {
            (Ok(()), Ok(x)) => assert_eq!(w, x),
            (Err(e), Err(f)) => {
                assert_eq!(e, f);
                assert_eq!(w, before);
            }
            (a, b) => panic!("decode_into {a:?}, decode {b:?}"),
        }
        let before = r;
        match (r.decode_into(slot, max_sge), RecvWqe::decode(slot, max_sge)) {
            (Ok(()), Ok(x)) => assert_eq!(r, x),
            (Err(e), Err(f)) => {
                assert_eq!(e, f);
                assert_eq!(r, before);
            }
            (a, b) => panic!("recv decode_into {a:?}, decode {b:?}"),
        }
    }
}

/// The CNP payload: decode, round trip, and the rate it sets stays in range.
pub fn cnp(data: &[u8]) {
    if let Some(i) = CnpInfo::decode(data) {
        let mut b = [0u8; CNP_INFO_LEN];
        assert!(i.encode(&mut b));
        assert_eq!(CnpInfo::decode(&b), Some(i));
        let p = Params::DEFAULT;
        let mut r = RateCc::new(0, &p);
        r.on_cnp(1, &i, &p);
        assert!(p.min_rate() <= r.rate() && r.rate() <= p.max_rate());
    }
}

/// The verified-WRITE headers, the FETH, and the requester's and responder's
/// verification state under any sequence of events a peer could cause.
pub fn verify(data: &[u8]) {
    let _ = (Vcrc::decode(data), Vres::decode(data), Feth::decode(data));
    let mut w =
        WriteCrc::new(Alg::from_wire(data.first().copied().unwrap_or(0) & 1).unwrap_or_default());
    let mut p = CheckPolicy::new();
    for pair in data.chunks(2) {
        let (a, b) = (pair[0], pair.get(1).copied().unwrap_or(0));
        match a % 4 {
            0 => {
                let before = w.header().attempt;
                let r = w.failed(b, u32::from(a >> 4));
                assert!(r != OnFail::Resend || w.header().attempt == before.wrapping_add(1));
            }
            1 => w.fed(u32::from(b) * 0x0101_0101, u32::from(b)),
            2 => {
                let _ = p.must_check(u32::from(b));
            }
            _ => p.checked(if b & 1 == 0 {
                Outcome::Match
            } else {
                Outcome::Mismatch
            }),
        }
    }
}
