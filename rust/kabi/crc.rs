// SPDX-License-Identifier: GPL-2.0
//! The kernel's (arch-accelerated) CRC-32 behind the protocol core's `Crc32` trait.

use crate::proto::icrc::Crc32;

/// `crc32_le` from lib/crc.
pub(crate) struct KernelCrc32;

impl Crc32 for KernelCrc32 {
    fn update(&self, crc: u32, data: &[u8]) -> u32 {
        // SAFETY: reads `data.len()` bytes from a valid slice.
        unsafe { crate::sys::crc32_le(crc, data.as_ptr().cast(), data.len()) }
    }
}
