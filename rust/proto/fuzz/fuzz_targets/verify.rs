// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the verified-WRITE headers, the FETH and the verification state. The body is `rrxe_proto::fuzzing::verify`, which
//! `tests/fuzz_corpus.rs` also runs over the corpus kept in `fuzz/seeds/verify/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rrxe_proto::fuzzing::verify(data));
