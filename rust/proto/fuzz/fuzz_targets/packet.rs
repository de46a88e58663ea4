// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the RoCEv2 packet parser and every extension-header accessor. The body is `rrxe_proto::fuzzing::packet`, which
//! `tests/fuzz_corpus.rs` also runs over the corpus kept in `fuzz/seeds/packet/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rrxe_proto::fuzzing::packet(data));
