// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the verified-WRITE headers (CRC and result), the FETH, and the requester's
//! and responder's verification state under any sequence of events a peer could cause.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rrxe_proto::exthdr::Feth;
use rrxe_proto::verify::{CheckPolicy, OnFail, Outcome, Vcrc, Vres, WriteCrc};

fuzz_target!(|data: &[u8]| {
    let _ = (Vcrc::decode(data), Vres::decode(data), Feth::decode(data));
    let mut w = WriteCrc::new();
    let mut p = CheckPolicy::new();
    for pair in data.chunks(2) {
        let (a, b) = (pair.first().copied().unwrap_or(0), pair.get(1).copied().unwrap_or(0));
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
            _ => p.checked(if b & 1 == 0 { Outcome::Match } else { Outcome::Mismatch }),
        }
    }
});
