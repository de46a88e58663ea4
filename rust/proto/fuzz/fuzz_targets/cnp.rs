// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the CNP payload codec and the rate it sets. The body is `rrxe_proto::fuzzing::cnp`, which
//! `tests/fuzz_corpus.rs` also runs over the corpus kept in `fuzz/seeds/cnp/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rrxe_proto::fuzzing::cnp(data));
