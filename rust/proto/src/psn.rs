// SPDX-License-Identifier: GPL-2.0
//! 24-bit packet sequence number arithmetic (IBTA 9.7.1).
//!
//! PSNs live in a 2^24 circle. Comparisons are only meaningful inside half the circle
//! (2^23), exactly as the specification's "valid PSN region" rules assume.

/// Mask of the PSN field.
pub const PSN_MASK: u32 = 0x00ff_ffff;

/// A 24-bit packet sequence number. Always kept masked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Psn(u32);

impl Psn {
    /// Builds a PSN from the low 24 bits of `v`.
    #[inline]
    pub const fn new(v: u32) -> Self {
        Psn(v & PSN_MASK)
    }

    /// The raw 24-bit value.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// `self + n` on the 24-bit circle.
    #[inline]
    pub const fn add(self, n: u32) -> Self {
        Psn(self.0.wrapping_add(n) & PSN_MASK)
    }

    /// `self - n` on the 24-bit circle.
    #[inline]
    pub const fn sub(self, n: u32) -> Self {
        Psn(self.0.wrapping_sub(n) & PSN_MASK)
    }

    /// Signed distance `self - other`, in `[-2^23, 2^23)`.
    #[inline]
    pub const fn diff(self, other: Psn) -> i32 {
        // Shift the 24-bit difference into the top of an i32, then back: sign extension.
        ((self.0.wrapping_sub(other.0) << 8) as i32) >> 8
    }

    /// `self` comes strictly before `other`.
    #[inline]
    pub const fn before(self, other: Psn) -> bool {
        self.diff(other) < 0
    }

    /// `self` comes strictly after `other`.
    #[inline]
    pub const fn after(self, other: Psn) -> bool {
        self.diff(other) > 0
    }

    /// The earlier of `self` and `other` (serial order).
    #[inline]
    pub const fn earlier(self, other: Psn) -> Psn {
        if self.before(other) {
            self
        } else {
            other
        }
    }

    /// The later of `self` and `other` (serial order).
    #[inline]
    pub const fn later(self, other: Psn) -> Psn {
        if self.after(other) {
            self
        } else {
            other
        }
    }

    /// `self` lies in the half-open window `[start, start + len)`.
    #[inline]
    pub const fn in_window(self, start: Psn, len: u32) -> bool {
        let d = self.diff(start);
        d >= 0 && (d as u32) < len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraps() {
        assert_eq!(Psn::new(PSN_MASK).add(1).get(), 0);
        assert_eq!(Psn::new(0).sub(1).get(), PSN_MASK);
        assert_eq!(Psn::new(0).diff(Psn::new(PSN_MASK)), 1);
        assert_eq!(Psn::new(PSN_MASK).diff(Psn::new(0)), -1);
        assert!(Psn::new(2).after(Psn::new(PSN_MASK - 3)));
        assert!(Psn::new(PSN_MASK - 3).before(Psn::new(2)));
        assert_eq!(Psn::new(0x0080_0000).diff(Psn::new(0)), -0x0080_0000);
        assert!(Psn::new(1).in_window(Psn::new(PSN_MASK), 3));
        assert!(!Psn::new(2).in_window(Psn::new(PSN_MASK), 3));
        // Serial order across the wrap, not numeric order.
        let (lo, hi) = (Psn::new(PSN_MASK - 1), Psn::new(1));
        assert_eq!(lo.later(hi), hi);
        assert_eq!(hi.later(lo), hi);
        assert_eq!(lo.earlier(hi), lo);
        assert_eq!(hi.earlier(lo), lo);
        assert_eq!(hi.later(hi), hi);
    }

    proptest! {
        #[test]
        fn add_then_diff(a in 0u32..=PSN_MASK, n in 0u32..0x0080_0000) {
            let p = Psn::new(a);
            prop_assert_eq!(p.add(n).diff(p), n as i32);
            prop_assert_eq!(p.add(n).sub(n), p);
            prop_assert_eq!(p.diff(p.add(n)), -(n as i32));
            prop_assert!(p.add(n).get() <= PSN_MASK);
        }

        #[test]
        fn antisymmetric(a in 0u32..=PSN_MASK, b in 0u32..=PSN_MASK) {
            let (a, b) = (Psn::new(a), Psn::new(b));
            let d = a.diff(b);
            prop_assume!(d != -0x0080_0000);
            prop_assert_eq!(b.diff(a), -d);
            prop_assert_eq!(a.before(b), b.after(a));
        }
    }
}
