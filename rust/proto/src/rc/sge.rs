// SPDX-License-Identifier: GPL-2.0
//! The scatter/gather walk: which bytes of which SGE a transfer at a byte offset of a
//! WQE's buffer touches. Gather (a requester reading its payload), scatter (a responder
//! placing a SEND, a requester placing READ responses) and early placement all walk the
//! list the same way; only what they do with each piece differs.

use super::super::uapi::Sge;

/// One contiguous piece of a transfer: `len` bytes at `addr` through `lkey`, which are
/// bytes `[at, at + len)` of the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The SGE's local key.
    pub lkey: u32,
    /// Address inside the MR.
    pub addr: u64,
    /// Offset in the caller's buffer.
    pub at: usize,
    /// Bytes.
    pub len: usize,
}

/// Walks `sge` for `len` bytes starting at byte `off` of the list, calling `each` for
/// every piece in order; stops at the first error. Returns how many bytes the list held
/// (less than `len` when the list is shorter).
pub fn walk<E>(
    sge: &[Sge],
    off: u32,
    len: usize,
    mut each: impl FnMut(Piece) -> Result<(), E>,
) -> Result<usize, E> {
    let mut skip = off;
    let mut done = 0usize;
    for s in sge {
        if done == len {
            break;
        }
        if skip >= s.length {
            skip -= s.length;
            continue;
        }
        let n = ((s.length - skip) as usize).min(len - done);
        each(Piece {
            lkey: s.lkey,
            addr: s.addr.wrapping_add(u64::from(skip)),
            at: done,
            len: n,
        })?;
        done += n;
        skip = 0;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sges(lens: &[u32]) -> Vec<Sge> {
        lens.iter()
            .enumerate()
            .map(|(i, &length)| Sge {
                addr: 0x1000 * (i as u64 + 1),
                length,
                lkey: i as u32,
            })
            .collect()
    }

    #[test]
    fn skips_and_splits() {
        let l = sges(&[4, 0, 6, 10]);
        let mut got = Vec::new();
        let n = walk::<()>(&l, 3, 8, |p| {
            got.push(p);
            Ok(())
        });
        assert_eq!(n, Ok(8));
        assert_eq!(
            got,
            [
                Piece {
                    lkey: 0,
                    addr: 0x1003,
                    at: 0,
                    len: 1
                },
                Piece {
                    lkey: 2,
                    addr: 0x3000,
                    at: 1,
                    len: 6
                },
                Piece {
                    lkey: 3,
                    addr: 0x4000,
                    at: 7,
                    len: 1
                },
            ]
        );
        // Shorter than asked: the caller decides whether that is an error.
        assert_eq!(walk::<()>(&l, 15, 100, |_| Ok(())), Ok(5));
        assert_eq!(walk::<()>(&l, 0, 0, |_| panic!()), Ok(0));
        assert_eq!(
            walk(&l, 0, 5, |p| if p.lkey == 2 { Err(7) } else { Ok(()) }),
            Err(7)
        );
    }

    proptest! {
        #[test]
        fn pieces_tile_the_range(lens in prop::collection::vec(0u32..64, 0..8),
                                 off in 0u32..300, len in 0usize..300) {
            let l = sges(&lens);
            let total: u32 = lens.iter().sum();
            let mut at = 0;
            let n = walk(&l, off, len, |p| {
                prop_assert_eq!(p.at, at);
                prop_assert!(p.len > 0);
                let s = &l[p.lkey as usize];
                prop_assert!(p.addr >= s.addr);
                prop_assert!(p.addr + p.len as u64 <= s.addr + u64::from(s.length));
                at += p.len;
                Ok(())
            })?;
            prop_assert_eq!(n, at);
            prop_assert_eq!(n, len.min(total.saturating_sub(off) as usize));
        }
    }
}
