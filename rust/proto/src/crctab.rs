// SPDX-License-Identifier: GPL-2.0
//! Table-driven reflected CRC-32s, byte at a time: the host's (and the tests') stand-in
//! for the kernel's accelerated ones, for the ICRC's polynomial and for CRC32C.

/// The lookup table of the reflected CRC-32 with polynomial `poly` (bit-reversed form).
// Indexing: `i < 256`, the table's length (evaluated at compile time, where an index out
// of range fails the build).
#[allow(clippy::indexing_slicing)]
pub const fn reflected_table(poly: u32) -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { poly ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// Continues `crc` (no pre- or post-inversion) over `data` with `table`.
pub fn update(table: &[u32; 256], mut crc: u32, data: &[u8]) -> u32 {
    for &b in data {
        let idx = ((crc ^ u32::from(b)) & 0xff) as usize;
        crc = table.get(idx).copied().unwrap_or(0) ^ (crc >> 8);
    }
    crc
}
