// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the RoCEv2 packet parser and every extension-header accessor.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = rrxe_proto::packet::parse(data) {
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
    let _ = rrxe_proto::bth::Bth::decode(data);
});
