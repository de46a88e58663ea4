// SPDX-License-Identifier: GPL-2.0
//! Kernel-binding layer: thin safe wrappers over the C APIs rrxe needs. All of the
//! project's `unsafe` code lives in this directory (and in `sys`), each block with a
//! `// SAFETY:` comment; the driver above it is `#![forbid(unsafe_code)]`.

pub(crate) mod crc;
pub(crate) mod gate;
pub(crate) mod ib;
pub(crate) mod lock;
pub(crate) mod mem;
pub(crate) mod netdev;
pub(crate) mod odp;
pub(crate) mod skb;
pub(crate) mod timer;
pub(crate) mod udp;
pub(crate) mod verbs;
pub(crate) mod work;

/// Number of possible CPUs (the completion-vector count of a software device).
pub(crate) fn num_possible_cpus() -> u32 {
    // SAFETY: reads a kernel global; no preconditions.
    unsafe { crate::sys::rrxe_num_possible_cpus() }
}
