// SPDX-License-Identifier: GPL-2.0
//! rrxe protocol core: RoCEv2 header codecs, ICRC, 24-bit PSN arithmetic, and the
//! reliable-connected engine (requester, completer, responder, READ repair, selective
//! retransmission) as state machines without I/O.
//!
//! The same files are compiled into the kernel module (as `mod proto` through `#[path]`)
//! and as the host crate `rrxe_proto` for `cargo test`. Rules for everything in here:
//! `core` only, no allocation, no panics (checked slicing, no `unwrap`), no floats, wrapping
//! arithmetic for PSNs, and siblings are named with `super::`, never with `crate::`.
#![cfg_attr(not(any(test, MODULE)), no_std)]
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::panic)
)]

pub mod bth;
pub mod cc;
pub mod ccwire;
pub mod crctab;
pub mod exthdr;
#[cfg(not(MODULE))]
pub mod fuzzing;
pub mod icrc;
pub mod mr;
pub mod mw;
pub mod opcode;
pub mod packet;
pub mod pma;
pub mod port;
pub mod psn;
pub mod rc;
pub mod rdrep;
pub mod sel;
pub mod uapi;
pub mod uc;
pub mod verify;
pub mod wire;
