// SPDX-License-Identifier: GPL-2.0
//! The kernel's (arch-accelerated) CRC-32 and CRC32C behind the protocol core's `Crc32` and
//! `Crc` traits, and its random numbers.

use crate::proto::icrc::Crc32;
use crate::proto::verify::Alg;

/// `crc32_le` from lib/crc.
pub(crate) struct KernelCrc32;

impl Crc32 for KernelCrc32 {
    fn update(&self, crc: u32, data: &[u8]) -> u32 {
        // SAFETY: reads `data.len()` bytes from a valid slice.
        unsafe { crate::sys::crc32_le(crc, data.as_ptr().cast(), data.len()) }
    }
}

/// `crc32c` (the CPU's CRC32 instruction where there is one) and `crc32_le` (carry-less
/// multiplication folding) from lib/crc, for verified WRITEs.
pub(crate) struct KernelCrc;

impl crate::proto::verify::Crc for KernelCrc {
    fn update(&self, alg: Alg, crc: u32, data: &[u8]) -> u32 {
        // SAFETY: reads `data.len()` bytes from a valid slice.
        unsafe { raw(alg, crc, data.as_ptr().cast(), data.len()) }
    }
}

/// The kernel's CRC `alg` continued from `crc` over `len` bytes at `p`.
///
/// # Safety
///
/// `p .. p + len` must be readable (others may write it meanwhile: the CRC then differs).
pub(crate) unsafe fn raw(alg: Alg, crc: u32, p: *const u8, len: usize) -> u32 {
    match alg {
        // SAFETY: the caller's guarantee.
        Alg::Crc32c => unsafe { crate::sys::crc32c(crc, p.cast(), len) },
        // SAFETY: the caller's guarantee.
        Alg::Crc32 => unsafe { crate::sys::crc32_le(crc, p.cast(), len) },
    }
}

/// A random 32-bit number (`get_random_u32`), for fault injection.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: no preconditions; callable from any context.
    unsafe { kernel::bindings::get_random_u32() }
}
