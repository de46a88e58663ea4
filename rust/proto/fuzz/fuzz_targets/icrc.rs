// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the ICRC computation. The body is `rrxe_proto::fuzzing::icrc`, which
//! `tests/fuzz_corpus.rs` also runs over the corpus kept in `fuzz/seeds/icrc/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rrxe_proto::fuzzing::icrc(data));
