// SPDX-License-Identifier: GPL-2.0
//! Memory keys and fast registration: the index/generation split of an lkey or rkey,
//! the rules of a fast-registration MR (`IB_MR_TYPE_MEM_REG`) that `IB_WR_REG_MR`,
//! `IB_WR_LOCAL_INV` and a SEND with invalidate apply, and the walk from an address of
//! such an MR to the pages a kernel consumer mapped into it (`ib_map_mr_sg`).
//!
//! A key is `index << 8 | generation`: the index names the MR's table entry, the low
//! byte is what a consumer changes between registrations (`ib_update_fast_reg_key`), so
//! that a peer still holding the previous rkey is refused.

/// Bits of a key a consumer may change (the generation).
pub const GEN_BITS: u32 = 8;

/// The table entry a key names.
pub const fn index(key: u32) -> u32 {
    key >> GEN_BITS
}

/// The generation (low byte) of a key.
pub const fn generation(key: u32) -> u8 {
    (key & 0xff) as u8
}

/// The key of table entry `index` at generation `gen`.
pub const fn make_key(index: u32, gen: u8) -> u32 {
    (index << GEN_BITS) | gen as u32
}

/// Why a registration or invalidation was refused (the WQE completes with a local QP
/// operation error; a remote invalidation fails the receive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyError {
    /// The new key names another table entry than the MR's.
    WrongIndex,
    /// Registration of an MR that is still valid: it must be invalidated first.
    NotFree,
    /// The QP's protection domain is not the MR's.
    WrongPd,
    /// The key is not the MR's current one (a stale generation or a wrong index).
    Stale,
    /// Only fast-registration MRs can be registered by a work request or invalidated.
    NotFastReg,
    /// Memory windows are bound to the MR.
    Bound,
    /// The region does not fit the pages mapped into the MR.
    Range,
}

/// What an `IB_WR_REG_MR` asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reg {
    /// The key the MR takes (lkey and rkey).
    pub key: u32,
    /// Access flags (`IB_ACCESS_*`).
    pub access: u32,
    /// First address of the region.
    pub iova: u64,
    /// Length in bytes.
    pub len: u64,
}

/// The registration state of a fast-registration MR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastMr {
    key: u32,
    valid: bool,
    access: u32,
    iova: u64,
    len: u64,
}

impl FastMr {
    /// A new MR with key `key`, not registered (free).
    pub const fn new(key: u32) -> FastMr {
        FastMr {
            key,
            valid: false,
            access: 0,
            iova: 0,
            len: 0,
        }
    }

    /// The current key.
    pub const fn key(&self) -> u32 {
        self.key
    }

    /// Registered and not invalidated since.
    pub const fn valid(&self) -> bool {
        self.valid
    }

    /// The registered region `(iova, len)`.
    pub const fn region(&self) -> (u64, u64) {
        (self.iova, self.len)
    }

    /// `IB_WR_REG_MR`: only a free MR of the QP's PD, only with a key of the same index;
    /// `mapped` is how many bytes, from the region's start, the pages mapped into the MR
    /// cover (the region may not extend past them).
    pub fn register(&mut self, r: &Reg, same_pd: bool, mapped: u64) -> Result<(), KeyError> {
        if self.valid {
            return Err(KeyError::NotFree);
        }
        if !same_pd {
            return Err(KeyError::WrongPd);
        }
        if index(r.key) != index(self.key) {
            return Err(KeyError::WrongIndex);
        }
        if r.len > mapped {
            return Err(KeyError::Range);
        }
        *self = FastMr {
            key: r.key,
            valid: true,
            access: r.access,
            iova: r.iova,
            len: r.len,
        };
        Ok(())
    }

    /// `IB_WR_LOCAL_INV` or a SEND with invalidate naming `key`; `bound` memory windows
    /// are bound to the MR. An MR that is already free may be invalidated again (the
    /// key still has to be its current one).
    pub fn invalidate(&mut self, key: u32, bound: u32) -> Result<(), KeyError> {
        if key != self.key {
            return Err(KeyError::Stale);
        }
        if bound != 0 {
            return Err(KeyError::Bound);
        }
        self.valid = false;
        Ok(())
    }

    /// Whether an access with `key` needing every bit of `need` (0: local read) is
    /// allowed.
    pub const fn admits(&self, key: u32, need: u32) -> bool {
        self.valid && key == self.key && self.access & need == need
    }
}

/// One piece of a walk over a page-mapped region: `len` bytes at byte `off` of page
/// `page`, which are bytes `at..at + len` of the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Index in the page list.
    pub page: usize,
    /// Offset in that page.
    pub off: usize,
    /// Offset in the caller's buffer.
    pub at: usize,
    /// Bytes.
    pub len: usize,
}

/// Where the bytes of a region registered over a page list lie: `ib_sg_to_pages` lists
/// pages of `1 << shift` bytes, the region starting `first_off` bytes into the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageMap {
    shift: u32,
    first_off: u64,
    pages: usize,
}

/// Smallest and largest page size a consumer may map an MR with.
pub const PAGE_SIZES: (u32, u32) = (512, 1 << 30);

impl PageMap {
    /// The map of `pages` pages of `page_size` bytes for a region starting at `iova`;
    /// `None` unless the page size is a power of two in [`PAGE_SIZES`].
    pub fn new(page_size: u32, iova: u64, pages: usize) -> Option<PageMap> {
        if !page_size.is_power_of_two() || page_size < PAGE_SIZES.0 || page_size > PAGE_SIZES.1 {
            return None;
        }
        Some(PageMap {
            shift: page_size.trailing_zeros(),
            first_off: iova & (u64::from(page_size) - 1),
            pages,
        })
    }

    /// Page size in bytes.
    pub const fn page_size(&self) -> u64 {
        1 << self.shift
    }

    /// Bytes from the region's start the pages cover.
    pub fn covered(&self) -> u64 {
        (self.pages as u64)
            .checked_mul(self.page_size())
            .map_or(u64::MAX, |b| b.saturating_sub(self.first_off))
    }

    /// Calls `f` for each page piece of `n` bytes at `rel` bytes from the region's
    /// start; `None` (before calling `f` at all) if they do not lie within the pages.
    pub fn walk<E>(
        &self,
        rel: u64,
        n: usize,
        mut f: impl FnMut(Piece) -> Result<(), E>,
    ) -> Option<Result<(), E>> {
        let end = rel.checked_add(n as u64)?;
        if end > self.covered() {
            return None;
        }
        let mask = self.page_size() - 1;
        let mut pos = self.first_off.checked_add(rel)?;
        let mut done = 0usize;
        while done < n {
            let page = usize::try_from(pos >> self.shift).ok()?;
            let off = pos & mask;
            let room = self.page_size() - off;
            let len = usize::try_from(room).map_or(n - done, |r| r.min(n - done));
            let p = Piece {
                page,
                off: usize::try_from(off).ok()?,
                at: done,
                len,
            };
            if let Err(e) = f(p) {
                return Some(Err(e));
            }
            done += len;
            pos = pos.checked_add(len as u64)?;
        }
        Some(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALL: u32 = 0xf;

    fn reg(key: u32, iova: u64, len: u64) -> Reg {
        Reg {
            key,
            access: ALL,
            iova,
            len,
        }
    }

    #[test]
    fn key_split() {
        let k = make_key(0x1234, 0x56);
        assert_eq!(k, 0x0012_3456);
        assert_eq!(index(k), 0x1234);
        assert_eq!(generation(k), 0x56);
    }

    #[test]
    fn register_invalidate_cycle() {
        let k0 = make_key(7, 1);
        let mut m = FastMr::new(k0);
        assert!(!m.admits(k0, 0), "a free MR admits nothing");
        let k1 = make_key(7, 2);
        m.register(&reg(k1, 0x1000, 4096), true, 8192).unwrap();
        assert!(m.admits(k1, 2));
        assert!(!m.admits(k0, 0), "the previous generation is stale");
        assert_eq!(
            m.register(&reg(k1, 0, 1), true, 8192),
            Err(KeyError::NotFree)
        );
        assert_eq!(m.invalidate(k0, 0), Err(KeyError::Stale));
        assert_eq!(m.invalidate(k1, 1), Err(KeyError::Bound));
        m.invalidate(k1, 0).unwrap();
        assert!(!m.admits(k1, 0));
        // Invalidating twice is harmless.
        m.invalidate(k1, 0).unwrap();
        let k2 = make_key(7, 3);
        m.register(&reg(k2, 0x2000, 100), true, 8192).unwrap();
        assert!(m.admits(k2, 0) && !m.admits(k1, 0));
    }

    #[test]
    fn register_rules() {
        let mut m = FastMr::new(make_key(3, 0));
        assert_eq!(
            m.register(&reg(make_key(4, 0), 0, 1), true, 4096),
            Err(KeyError::WrongIndex)
        );
        assert_eq!(
            m.register(&reg(make_key(3, 1), 0, 1), false, 4096),
            Err(KeyError::WrongPd)
        );
        assert_eq!(
            m.register(&reg(make_key(3, 1), 0, 4097), true, 4096),
            Err(KeyError::Range)
        );
        assert!(!m.valid(), "a refused registration leaves the MR free");
    }

    #[test]
    fn access_bits() {
        let k = make_key(9, 9);
        let mut m = FastMr::new(k);
        m.register(
            &Reg {
                key: k,
                access: 1 | 4,
                iova: 0,
                len: 10,
            },
            true,
            4096,
        )
        .unwrap();
        assert!(m.admits(k, 4));
        assert!(!m.admits(k, 2), "no remote write");
        assert!(!m.admits(k, 4 | 2));
    }

    #[test]
    fn page_map_bounds() {
        assert!(PageMap::new(3000, 0, 1).is_none());
        assert!(PageMap::new(256, 0, 1).is_none());
        let m = PageMap::new(4096, 0x1_0100, 2).unwrap();
        assert_eq!(m.covered(), 8192 - 0x100);
        assert!(m.walk(0, 8192 - 0x100, |_| Ok::<(), ()>(())).is_some());
        assert!(m.walk(1, 8192 - 0x100, |_| Ok::<(), ()>(())).is_none());
        assert!(m.walk(u64::MAX, 2, |_| Ok::<(), ()>(())).is_none());
        let mut got = [None; 3];
        let mut i = 0;
        m.walk(4000, 200, |p| {
            got[i] = Some(p);
            i += 1;
            Ok::<(), ()>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(
            got[0],
            Some(Piece {
                page: 1,
                off: 4000 + 0x100 - 4096,
                at: 0,
                len: 200
            })
        );
        let mut pieces = 0;
        m.walk(3800, 200, |p| {
            pieces += 1;
            assert!(p.off + p.len <= 4096);
            Ok::<(), ()>(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(pieces, 2);
    }

    #[test]
    fn walk_stops_at_error() {
        let m = PageMap::new(512, 0, 8).unwrap();
        let mut calls = 0;
        let r = m.walk(0, 4096, |p| {
            calls += 1;
            if p.page == 2 {
                Err(p.page)
            } else {
                Ok(())
            }
        });
        assert_eq!(r, Some(Err(2)));
        assert_eq!(calls, 3);
    }

    proptest! {
        /// A walk covers exactly the requested bytes, in order, each piece within one
        /// page and within the page list, and the pieces' page offsets follow the
        /// addresses.
        #[test]
        fn walk_covers_exactly(shift in 9u32..17, iova in any::<u64>(), pages in 1usize..64,
                               rel in 0u64..(1 << 20), n in 0usize..(1 << 18)) {
            let m = PageMap::new(1 << shift, iova, pages).unwrap();
            let ps = 1usize << shift;
            let mut next_at = 0usize;
            let r = m.walk(rel, n, |p| {
                assert_eq!(p.at, next_at);
                assert!(p.len > 0 && p.off + p.len <= ps);
                assert!(p.page < pages);
                let abs = (p.page as u64) * ps as u64 + p.off as u64;
                assert_eq!(abs, (iova & (ps as u64 - 1)) + rel + p.at as u64);
                next_at += p.len;
                Ok::<(), ()>(())
            });
            let fits = rel + n as u64 <= m.covered();
            prop_assert_eq!(r.is_some(), fits);
            if fits {
                prop_assert_eq!(next_at, n);
            } else {
                prop_assert_eq!(next_at, 0);
            }
        }

        /// Whatever sequence of registrations and invalidations a consumer (or a peer's
        /// SEND with invalidate) issues, only the key of the last successful registration
        /// is admitted, and only while no invalidation of it succeeded since.
        #[test]
        fn only_current_key_admitted(ops in proptest::collection::vec((any::<bool>(), any::<u8>(), 0u32..3), 0..40)) {
            let idx = 5;
            let mut m = FastMr::new(make_key(idx, 0));
            let mut current: Option<u32> = None;
            for (is_reg, gen, idx_off) in ops {
                let key = make_key(idx + idx_off, gen);
                if is_reg {
                    let ok = m.register(&reg(key, 0, 1), true, 4096).is_ok();
                    prop_assert_eq!(ok, current.is_none() && idx_off == 0);
                    if ok { current = Some(key); }
                } else if m.invalidate(key, 0).is_ok() {
                    prop_assert!(current.is_none_or(|c| c == key));
                    current = None;
                }
                for g in 0..=255u8 {
                    let k = make_key(idx, g);
                    prop_assert_eq!(m.admits(k, 0), current == Some(k));
                }
            }
        }
    }
}
