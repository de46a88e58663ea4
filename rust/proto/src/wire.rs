// SPDX-License-Identifier: GPL-2.0
//! Big-endian field access over byte slices, without panics.
//!
//! Every reader returns `None` when the slice is too short; every writer returns `false`.
//! Codecs build on these so that a truncated packet can never index out of bounds.

/// Reads `N` bytes at `off`.
#[inline]
pub fn get<const N: usize>(buf: &[u8], off: usize) -> Option<[u8; N]> {
    let end = off.checked_add(N)?;
    let s = buf.get(off..end)?;
    let mut out = [0u8; N];
    out.copy_from_slice(s);
    Some(out)
}

/// Writes `v` at `off`; `false` if it does not fit.
#[inline]
pub fn put(buf: &mut [u8], off: usize, v: &[u8]) -> bool {
    let Some(end) = off.checked_add(v.len()) else {
        return false;
    };
    match buf.get_mut(off..end) {
        Some(d) => {
            d.copy_from_slice(v);
            true
        }
        None => false,
    }
}

/// Reads a big-endian `u8`.
#[inline]
pub fn be8(buf: &[u8], off: usize) -> Option<u8> {
    buf.get(off).copied()
}

/// Reads a big-endian `u16`.
#[inline]
pub fn be16(buf: &[u8], off: usize) -> Option<u16> {
    get::<2>(buf, off).map(u16::from_be_bytes)
}

/// Reads a big-endian 24-bit value into the low bits of a `u32`.
#[inline]
pub fn be24(buf: &[u8], off: usize) -> Option<u32> {
    get::<3>(buf, off).map(|b| u32::from_be_bytes([0, b[0], b[1], b[2]]))
}

/// Reads a big-endian `u32`.
#[inline]
pub fn be32(buf: &[u8], off: usize) -> Option<u32> {
    get::<4>(buf, off).map(u32::from_be_bytes)
}

/// Reads a big-endian `u64`.
#[inline]
pub fn be64(buf: &[u8], off: usize) -> Option<u64> {
    get::<8>(buf, off).map(u64::from_be_bytes)
}

/// Writes the low 24 bits of `v` big-endian.
#[inline]
pub fn put24(buf: &mut [u8], off: usize, v: u32) -> bool {
    let b = v.to_be_bytes();
    put(buf, off, &[b[1], b[2], b[3]])
}
