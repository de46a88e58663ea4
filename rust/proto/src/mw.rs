// SPDX-License-Identifier: GPL-2.0
//! Memory windows (IBTA 10.6.7): a window gives a peer access to part of a registered MR
//! through an rkey of its own. Type 1 windows are bound with `ibv_bind_mw` (librxe turns
//! it into a BIND_MW work request) and stay until bound again or deallocated; type 2
//! windows are bound by BIND_MW work requests to one QP and are invalidated like a
//! fast-registration MR (LOCAL_INV, SEND with invalidate). The rules of binding,
//! invalidating and using a window, as [`Window`] applies them; the driver keeps the
//! window, its MR and the table they live in.

use super::mr::index;

/// `IB_ACCESS_LOCAL_WRITE`.
pub const LOCAL_WRITE: u32 = 1;
/// `IB_ACCESS_REMOTE_WRITE`.
pub const REMOTE_WRITE: u32 = 2;
/// `IB_ACCESS_REMOTE_READ`.
pub const REMOTE_READ: u32 = 4;
/// `IB_ACCESS_REMOTE_ATOMIC`.
pub const REMOTE_ATOMIC: u32 = 8;
/// `IB_ACCESS_MW_BIND`: MRs that windows may be bound to.
pub const MW_BIND: u32 = 16;
/// `IB_ZERO_BASED`: the window's addresses start at 0.
pub const ZERO_BASED: u32 = 32;
/// Bits 20..29: optional flags a provider may ignore (relaxed ordering and friends).
pub const OPTIONAL: u32 = 0x3ff0_0000;
/// Access flags a bind may name (an MR's, plus zero-based; only the remote ones and
/// zero-based mean anything for a window).
pub const SUPPORTED: u32 =
    LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC | MW_BIND | ZERO_BASED | OPTIONAL;

/// First table index of a window key: MR and window keys are told apart by index.
pub const FIRST_INDEX: u32 = 1 << 16;

/// Whether `key` names a memory window (else an MR).
pub const fn is_mw(key: u32) -> bool {
    index(key) >= FIRST_INDEX
}

/// Why a bind or an invalidation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MwError {
    /// The window's current rkey is not the one named.
    Stale,
    /// The new rkey names another window.
    WrongIndex,
    /// A type 1 window bound or invalidated the type 2 way, or the reverse; or a type 2
    /// window bound while still bound.
    State,
    /// The QP, the window and the MR are not all in one protection domain.
    WrongPd,
    /// The MR does not allow windows, or a writable window on an MR without local write.
    MrAccess,
    /// The window is not inside the MR.
    Range,
    /// Access flags a window cannot grant.
    Access,
}

/// The MR a bind names, as the rules need to see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MrView {
    /// In the QP's protection domain.
    pub same_pd: bool,
    /// Its access flags.
    pub access: u32,
    /// Its region.
    pub iova: u64,
    /// Its length.
    pub len: u64,
}

/// A BIND_MW request (see `uapi::Bind`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BindReq {
    /// The window's current rkey.
    pub mw_rkey: u32,
    /// The rkey it takes (same index, the consumer's next generation).
    pub rkey: u32,
    /// First address of the window in the MR.
    pub addr: u64,
    /// Length; 0 unbinds a type 1 window.
    pub len: u64,
    /// Access flags.
    pub access: u32,
}

/// A memory window's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Type 2 (else type 1).
    pub type2: bool,
    /// Current rkey.
    pub rkey: u32,
    /// Bound (type 2) or allocated (type 1; usable once bound with a length).
    pub valid: bool,
    /// Access granted.
    pub access: u32,
    /// Bound region, in the MR's addresses.
    pub addr: u64,
    /// Bound length (0: nothing bound).
    pub len: u64,
    /// Type 2: the QP it is bound to.
    pub qpn: u32,
}

impl Window {
    /// A new window with key `rkey`: type 1 starts valid with nothing bound, type 2
    /// free.
    pub const fn new(type2: bool, rkey: u32) -> Window {
        Window {
            type2,
            rkey,
            valid: !type2,
            access: 0,
            addr: 0,
            len: 0,
            qpn: 0,
        }
    }

    /// Checks a bind of this window from QP `qpn` (`same_pd`: the QP's PD is the
    /// window's) to `mr` (`None` when the request has no length); on success the
    /// window is bound (and a previous binding is to be released by the caller).
    pub fn bind(
        &mut self,
        r: &BindReq,
        same_pd: bool,
        mr: Option<&MrView>,
        qpn: u32,
    ) -> Result<(), MwError> {
        if r.mw_rkey != self.rkey {
            return Err(MwError::Stale);
        }
        if index(r.rkey) != index(self.rkey) {
            return Err(MwError::WrongIndex);
        }
        if r.access & !SUPPORTED != 0 {
            return Err(MwError::Access);
        }
        if self.type2 {
            // A type 2 window is bound only when free, and only to memory.
            if self.valid || mr.is_none() || r.len == 0 {
                return Err(MwError::State);
            }
        } else if !self.valid || r.access & ZERO_BASED != 0 {
            return Err(MwError::State);
        }
        if !same_pd {
            return Err(MwError::WrongPd);
        }
        if let Some(m) = mr {
            if !m.same_pd {
                return Err(MwError::WrongPd);
            }
            if m.access & MW_BIND == 0
                || (r.access & (REMOTE_WRITE | REMOTE_ATOMIC) != 0 && m.access & LOCAL_WRITE == 0)
            {
                return Err(MwError::MrAccess);
            }
            // (Zero-based or not, the window's bytes are `addr..addr + len` of the MR.)
            let inside = r.addr >= m.iova
                && r.addr
                    .checked_add(r.len)
                    .is_some_and(|e| m.iova.checked_add(m.len).is_some_and(|me| e <= me));
            if !inside {
                return Err(MwError::Range);
            }
        }
        let len = if mr.is_some() { r.len } else { 0 };
        *self = Window {
            type2: self.type2,
            rkey: r.rkey,
            valid: true,
            access: r.access,
            addr: r.addr,
            len,
            qpn: if self.type2 { qpn } else { 0 },
        };
        Ok(())
    }

    /// LOCAL_INV or a SEND with invalidate naming `rkey`: only a bound type 2 window.
    pub fn invalidate(&mut self, rkey: u32) -> Result<(), MwError> {
        if rkey != self.rkey {
            return Err(MwError::Stale);
        }
        if !self.type2 || !self.valid {
            return Err(MwError::State);
        }
        *self = Window::new(true, self.rkey);
        Ok(())
    }

    /// An access with `rkey` from QP `qpn` (`same_pd`) to `n` bytes at `va` needing
    /// every bit of `need`: the address in the MR it reaches, or `None`.
    pub fn admits(
        &self,
        rkey: u32,
        same_pd: bool,
        qpn: u32,
        need: u32,
        va: u64,
        n: u64,
    ) -> Option<u64> {
        if !self.valid
            || rkey != self.rkey
            || !same_pd
            || (self.type2 && self.qpn != qpn)
            || self.len == 0
            || self.access & need != need
        {
            return None;
        }
        let (start, rel) = if self.access & ZERO_BASED != 0 {
            (self.addr.checked_add(va)?, va)
        } else {
            (va, va.checked_sub(self.addr)?)
        };
        (rel.checked_add(n)? <= self.len).then_some(start)
    }
}

#[cfg(test)]
mod tests {
    use super::super::mr::make_key;
    use super::*;
    use proptest::prelude::*;

    const MR: MrView = MrView {
        same_pd: true,
        access: LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | MW_BIND,
        iova: 0x1000,
        len: 0x4000,
    };

    fn req(w: &Window, gen: u8, addr: u64, len: u64, access: u32) -> BindReq {
        BindReq {
            mw_rkey: w.rkey,
            rkey: make_key(index(w.rkey), gen),
            addr,
            len,
            access,
        }
    }

    #[test]
    fn key_space() {
        assert!(!is_mw(make_key(5, 1)));
        assert!(is_mw(make_key(FIRST_INDEX, 0)));
    }

    #[test]
    fn type1_bind_use_rebind() {
        let mut w = Window::new(false, make_key(FIRST_INDEX + 3, 7));
        assert_eq!(
            w.admits(w.rkey, true, 1, 0, 0x1000, 1),
            None,
            "nothing bound"
        );
        // (pyverbs binds with LOCAL_WRITE among the window's access flags.)
        let r = req(&w, 8, 0x2000, 0x100, REMOTE_READ | LOCAL_WRITE);
        w.bind(&r, true, Some(&MR), 9).unwrap();
        assert_eq!(w.rkey, r.rkey);
        // Any QP of the PD may use a type 1 window.
        assert_eq!(
            w.admits(r.rkey, true, 42, REMOTE_READ, 0x2000, 0x100),
            Some(0x2000)
        );
        assert_eq!(w.admits(r.rkey, true, 42, REMOTE_WRITE, 0x2000, 1), None);
        assert_eq!(w.admits(r.rkey, true, 42, REMOTE_READ, 0x2000, 0x101), None);
        assert_eq!(w.admits(r.rkey, true, 42, REMOTE_READ, 0x1fff, 1), None);
        assert_eq!(w.admits(r.rkey, false, 42, REMOTE_READ, 0x2000, 1), None);
        assert_eq!(
            w.admits(make_key(FIRST_INDEX + 3, 7), true, 42, 0, 0x2000, 1),
            None
        );
        // Type 1 cannot be invalidated; binding with length 0 unbinds.
        assert_eq!(w.invalidate(w.rkey), Err(MwError::State));
        let r2 = req(&w, 9, 0, 0, 0);
        w.bind(&r2, true, None, 9).unwrap();
        assert_eq!(w.admits(r2.rkey, true, 1, 0, 0, 1), None);
    }

    #[test]
    fn type2_bind_invalidate() {
        let mut w = Window::new(true, make_key(FIRST_INDEX, 1));
        let r = req(&w, 2, 0x1000, 0x800, REMOTE_WRITE | ZERO_BASED);
        assert_eq!(
            w.bind(&req(&w, 2, 0, 0, 0), true, None, 5),
            Err(MwError::State)
        );
        w.bind(&r, true, Some(&MR), 5).unwrap();
        // Only its QP; zero-based addresses.
        assert_eq!(
            w.admits(r.rkey, true, 5, REMOTE_WRITE, 0x10, 0x10),
            Some(0x1010)
        );
        assert_eq!(w.admits(r.rkey, true, 6, REMOTE_WRITE, 0x10, 0x10), None);
        assert_eq!(w.admits(r.rkey, true, 5, REMOTE_WRITE, 0x7f0, 0x11), None);
        assert_eq!(
            w.bind(&req(&w, 3, 0, 1, 0), true, Some(&MR), 5),
            Err(MwError::State)
        );
        assert_eq!(w.invalidate(make_key(FIRST_INDEX, 1)), Err(MwError::Stale));
        w.invalidate(r.rkey).unwrap();
        assert_eq!(w.admits(r.rkey, true, 5, 0, 0, 1), None);
        assert_eq!(w.invalidate(r.rkey), Err(MwError::State));
        // Free again: bound anew with the next generation.
        w.bind(&req(&w, 3, 0x1000, 0x100, REMOTE_READ), true, Some(&MR), 5)
            .unwrap();
    }

    #[test]
    fn bind_refusals() {
        let w0 = Window::new(false, make_key(FIRST_INDEX + 1, 0));
        let mut w = w0;
        let mut bad_mr = MR;
        bad_mr.access &= !MW_BIND;
        assert_eq!(
            w.bind(&req(&w0, 1, 0x1000, 1, 0), true, Some(&bad_mr), 1),
            Err(MwError::MrAccess)
        );
        let mut ro = MR;
        ro.access = MW_BIND | REMOTE_READ;
        assert_eq!(
            w.bind(&req(&w0, 1, 0x1000, 1, REMOTE_WRITE), true, Some(&ro), 1),
            Err(MwError::MrAccess)
        );
        assert_eq!(
            w.bind(&req(&w0, 1, 0x4000, 0x1001, 0), true, Some(&MR), 1),
            Err(MwError::Range)
        );
        assert_eq!(
            w.bind(&req(&w0, 1, 0x1000, 1, 0), false, Some(&MR), 1),
            Err(MwError::WrongPd)
        );
        let mut other = MR;
        other.same_pd = false;
        assert_eq!(
            w.bind(&req(&w0, 1, 0x1000, 1, 0), true, Some(&other), 1),
            Err(MwError::WrongPd)
        );
        let mut r = req(&w0, 1, 0x1000, 1, 0);
        r.rkey = make_key(FIRST_INDEX + 2, 1);
        assert_eq!(w.bind(&r, true, Some(&MR), 1), Err(MwError::WrongIndex));
        r = req(&w0, 1, 0x1000, 1, 0);
        r.mw_rkey ^= 1;
        assert_eq!(w.bind(&r, true, Some(&MR), 1), Err(MwError::Stale));
        assert_eq!(
            w.bind(&req(&w0, 1, 0x1000, 1, 1 << 6), true, Some(&MR), 1),
            Err(MwError::Access)
        );
        assert_eq!(
            w.bind(&req(&w0, 1, 0, 1, ZERO_BASED), true, Some(&MR), 1),
            Err(MwError::State),
            "a type 1 window is never zero-based"
        );
        assert_eq!(w, w0, "refused binds change nothing");
    }

    proptest! {
        /// Whatever is asked of a window, an access it admits lies inside the bound
        /// window, inside the MR, with the current rkey and the access bound.
        #[test]
        fn admitted_inside(type2 in any::<bool>(), ops in proptest::collection::vec(
            (any::<bool>(), any::<u8>(), 0u64..0x6000, 0u64..0x6000, 0u32..64, 0u32..4), 0..30),
            va in 0u64..0x8000, n in 0u64..0x8000, need in 0u32..16) {
            let mut w = Window::new(type2, make_key(FIRST_INDEX + 9, 0));
            for (is_bind, gen, addr, len, access, qpn) in ops {
                if is_bind {
                    let r = BindReq { mw_rkey: w.rkey, rkey: make_key(FIRST_INDEX + 9, gen),
                                      addr, len, access };
                    let _ = w.bind(&r, true, (len > 0).then_some(&MR), qpn);
                } else {
                    let _ = w.invalidate(w.rkey);
                }
                if let Some(at) = w.admits(w.rkey, true, w.qpn, need, va, n) {
                    prop_assert!(at >= MR.iova && at + n <= MR.iova + MR.len);
                    prop_assert!(at >= w.addr && at + n <= w.addr + w.len);
                    prop_assert_eq!(w.access & need, need);
                }
            }
        }
    }
}
