// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the ICRC header masking over arbitrary IP packets.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = rrxe_proto::icrc::compute(&rrxe_proto::icrc::TableCrc32, data);
});
