// SPDX-License-Identifier: GPL-2.0
//! Fuzzes the send and receive WQE slot decoders. The body is `rrxe_proto::fuzzing::uapi`, which
//! `tests/fuzz_corpus.rs` also runs over the corpus kept in `fuzz/seeds/uapi/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rrxe_proto::fuzzing::uapi(data));
