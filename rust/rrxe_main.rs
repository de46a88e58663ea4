// SPDX-License-Identifier: GPL-2.0
//! rrxe: a Soft-RoCE (RoCEv2) provider written in Rust.
//!
//! Three layers: the protocol core (`proto`, plain safe Rust, also a host crate), the
//! kernel-binding layer (`sys` generated bindings and `kabi` safe wrappers, where all
//! `unsafe` lives) and the driver (`drv`, `#![forbid(unsafe_code)]`).

mod drv;
mod kabi;
#[allow(unreachable_pub, dead_code)]
#[path = "proto/src/lib.rs"]
mod proto;
mod sys;

use kernel::prelude::*;

module! {
    type: drv::RrxeModule,
    name: "rrxe",
    authors: ["rrxe developers"],
    description: "Soft-RoCE (RoCEv2) provider in Rust",
    license: "GPL",
    alias: ["rdma-link-rrxe"],
    params: {
        selective: u32 {
            default: 1,
            description: "Selective retransmission: 0 = plain IBTA go-back-N, 1 = negotiate per connection (default), 2 = always (both ends rrxe)",
        },
        cc_algo: u32 {
            default: 2,
            description: "Congestion control of new devices (debugfs rrxe-DEV/cc_params/algo changes it at run time): 0 = none, 1 = dcqcn, 2 = rate (the receiver's measured rate from rrxe peers' CNPs, dcqcn for others; default), 3 = delay (per-destination one-way delays)",
        },
        verify: u32 {
            default: 0,
            description: "Verified WRITEs on new devices (debugfs rrxe-DEV/verify/enable changes it at run time): 0 = off (default), 1 = offer them on every RC connection (used when the peer is rrxe and accepts)",
        },
        reasm_qp_kib: u32 {
            default: 4096,
            description: "KiB of packets one QP keeps beyond its expected PSN (1..65536; the device keeps at most 64 MiB)",
        },
    },
}
