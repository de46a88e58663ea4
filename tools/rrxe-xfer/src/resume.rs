// SPDX-License-Identifier: GPL-2.0
//! Where an interrupted file resumes, and how a transfer is cut into chunks.
//!
//! A receiver writes chunks strictly in order (a chunk that arrives early, over another
//! QP, waits in its ring slot), so its partial file is always a prefix of the source:
//! the prefix length is the offset to resume from. The checksum still covers the whole
//! file: the sender hashes the prefix it skips, the receiver the prefix it keeps, and a
//! prefix that differs from the source is caught by the end-to-end check.

/// The offset a transfer of a `source_size`-byte file starts from when the receiver
/// holds `part_len` bytes of it (None: no partial file, or resume not asked for).
/// A partial file longer than the source cannot be a prefix of it: start again.
pub fn resume_offset(part_len: Option<u64>, source_size: u64) -> u64 {
    match part_len {
        Some(n) if n <= source_size => n,
        _ => 0,
    }
}

/// Chunks of a transfer: `count` chunks of `chunk` bytes (the last one shorter) covering
/// `offset..size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub offset: u64,
    pub size: u64,
    pub chunk: u64,
}

impl Plan {
    pub fn new(offset: u64, size: u64, chunk: u32) -> Plan {
        Plan {
            offset: offset.min(size),
            size,
            chunk: u64::from(chunk.max(1)),
        }
    }
    pub fn count(&self) -> u64 {
        (self.size - self.offset).div_ceil(self.chunk)
    }
    /// File offset and length of chunk `i` (None past the end).
    pub fn chunk(&self, i: u64) -> Option<(u64, u32)> {
        if i >= self.count() {
            return None;
        }
        let start = self.offset + i * self.chunk;
        let len = self.chunk.min(self.size - start);
        Some((start, len as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn offsets() {
        assert_eq!(resume_offset(None, 100), 0);
        assert_eq!(resume_offset(Some(0), 100), 0);
        assert_eq!(resume_offset(Some(40), 100), 40);
        assert_eq!(resume_offset(Some(100), 100), 100);
        assert_eq!(resume_offset(Some(101), 100), 0);
        assert_eq!(resume_offset(Some(5), 0), 0);
    }

    #[test]
    fn edge_plans() {
        assert_eq!(Plan::new(0, 0, 4096).count(), 0);
        assert_eq!(Plan::new(100, 100, 4096).count(), 0);
        let p = Plan::new(0, 1, 4096);
        assert_eq!((p.count(), p.chunk(0)), (1, Some((0, 1))));
        let p = Plan::new(0, (1 << 20) + 1, 1 << 20);
        assert_eq!(p.count(), 2);
        assert_eq!(p.chunk(1), Some((1 << 20, 1)));
        assert_eq!(p.chunk(2), None);
        let p = Plan::new(5000, 12288, 4096);
        assert_eq!(p.chunk(0), Some((5000, 4096)));
        assert_eq!(p.chunk(1), Some((9096, 3192)));
    }

    proptest! {
        /// The chunks tile offset..size exactly, in order, none empty or over the size.
        #[test]
        fn chunks_tile_the_rest(off in 0u64..1 << 40, full in 0u64..3000, tail: u32, chunk in 1u32..1 << 24) {
            let size = off + full * u64::from(chunk) + u64::from(tail % chunk);
            let p = Plan::new(off, size, chunk);
            let n = p.count();
            prop_assert_eq!(n, full + u64::from(tail % chunk != 0));
            let mut at = p.offset;
            for i in 0..n {
                let (s, l) = p.chunk(i).unwrap();
                prop_assert_eq!(s, at);
                prop_assert!(l >= 1 && l <= chunk);
                at += u64::from(l);
            }
            prop_assert_eq!(at, size);
            prop_assert!(p.chunk(n).is_none());
        }

        /// A resumed transfer moves exactly the bytes the partial file lacks.
        #[test]
        fn resume_moves_the_rest(size in 0u64..1 << 40, part in proptest::option::of(0u64..1 << 41)) {
            let off = resume_offset(part, size);
            prop_assert!(off <= size);
            if let Some(n) = part {
                prop_assert_eq!(off, if n <= size { n } else { 0 });
            }
        }
    }
}
