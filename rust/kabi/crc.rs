// SPDX-License-Identifier: GPL-2.0
//! The kernel's (arch-accelerated) CRC-32 and CRC32C behind the protocol core's `Crc32` and
//! `Crc32c` traits, and its random numbers.

use crate::proto::icrc::Crc32;

/// `crc32_le` from lib/crc.
pub(crate) struct KernelCrc32;

impl Crc32 for KernelCrc32 {
    fn update(&self, crc: u32, data: &[u8]) -> u32 {
        // SAFETY: reads `data.len()` bytes from a valid slice.
        unsafe { crate::sys::crc32_le(crc, data.as_ptr().cast(), data.len()) }
    }
}

/// `crc32c` from lib/crc (the CPU's CRC32 instruction where there is one).
pub(crate) struct KernelCrc32c;

impl crate::proto::verify::Crc32c for KernelCrc32c {
    fn update(&self, crc: u32, data: &[u8]) -> u32 {
        // SAFETY: reads `data.len()` bytes from a valid slice.
        unsafe { crate::sys::crc32c(crc, data.as_ptr().cast(), data.len()) }
    }
}

/// A random 32-bit number (`get_random_u32`), for fault injection.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: no preconditions; callable from any context.
    unsafe { kernel::bindings::get_random_u32() }
}
