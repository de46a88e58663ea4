// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the selective-retransmission codecs and the receive window. The body is `rrxe_proto::fuzzing::sel`, which
//! `tests/fuzz_corpus.rs` also runs over the corpus kept in `fuzz/seeds/sel/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rrxe_proto::fuzzing::sel(data));
