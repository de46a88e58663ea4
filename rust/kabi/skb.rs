// SPDX-License-Identifier: GPL-2.0
//! Owned `sk_buff`s for the transmit and receive paths.

use crate::kabi::netdev::{NetDevice, NetNs};
use crate::sys as b;
use core::ptr::NonNull;
use kernel::prelude::*;

/// An owned `sk_buff`; dropped (counted as a drop) unless consumed or sent.
pub(crate) struct SkBuff(NonNull<b::sk_buff>);

// SAFETY: an skb is a plain heap object with no thread affinity.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// # Safety
    ///
    /// `skb` must be a valid skb whose ownership passes to the returned value.
    pub(crate) unsafe fn from_raw(skb: *mut b::sk_buff) -> Option<SkBuff> {
        NonNull::new(skb).map(SkBuff)
    }

    fn raw(&self) -> *mut b::sk_buff {
        self.0.as_ptr()
    }

    fn into_raw(self) -> *mut b::sk_buff {
        let p = self.raw();
        core::mem::forget(self);
        p
    }

    /// A transmit skb for `ndev` with room for `len` bytes of BTH onwards (atomic alloc).
    pub(crate) fn alloc_tx(ndev: &NetDevice, len: u32) -> Result<SkBuff> {
        // SAFETY: `ndev` is live; returns NULL or a fresh skb we own.
        let p = unsafe { b::rrxe_skb_alloc_tx(ndev.as_raw(), len) };
        NonNull::new(p).map(SkBuff).ok_or(ENOMEM)
    }

    /// Appends `len` bytes and lets `f` fill them.
    pub(crate) fn put_with(&mut self, len: usize, f: impl FnOnce(&mut [u8])) -> Result {
        let n = u32::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: `alloc_tx` reserved the tailroom the caller asked for; `skb_put` panics
        // (skb_over_panic) otherwise, so callers only put what they allocated.
        let p: *mut u8 = unsafe { b::skb_put(self.raw(), n) }.cast();
        // SAFETY: `skb_put` returned `len` writable bytes owned by this skb; nothing else
        // references them.
        f(unsafe { core::slice::from_raw_parts_mut(p, len) });
        Ok(())
    }

    /// The device the skb arrived on.
    pub(crate) fn dev(&self) -> Option<&NetDevice> {
        // SAFETY: a received skb's device is alive while the skb is processed.
        let d = unsafe { b::rrxe_skb_dev(self.raw()) };
        // SAFETY: as above.
        (!d.is_null()).then(|| unsafe { NetDevice::from_raw(d) })
    }

    /// Linear receive view: `(network header .. end of UDP payload, is_ipv6)`.
    pub(crate) fn rx_view(&mut self) -> Result<(&[u8], bool)> {
        let mut l3 = core::ptr::null_mut();
        let mut len = 0u32;
        let mut v6 = false;
        // SAFETY: we own the skb; the shim linearises it and reports the linear range.
        kernel::error::to_result(unsafe {
            b::rrxe_skb_rx_view(self.raw(), &mut l3, &mut len, &mut v6)
        })?;
        // SAFETY: after linearisation the range is inside the skb's linear data, which stays
        // put while we hold `&mut self` (the borrow ties the slice to it).
        Ok((unsafe { core::slice::from_raw_parts(l3, len as usize) }, v6))
    }

    /// Pushes UDP and IPv4 headers; `dst` is cloned into the skb.
    pub(crate) fn push_ip4(
        &mut self,
        dst: &Dst,
        saddr: [u8; 4],
        daddr: [u8; 4],
        tos: u8,
        ttl: u8,
        sport: u16,
    ) {
        // SAFETY: `alloc_tx` reserved headroom for UDP + IPv6 (the larger header).
        unsafe {
            b::rrxe_skb_push_ip4(
                self.raw(),
                dst.0.as_ptr(),
                u32::from_ne_bytes(saddr),
                u32::from_ne_bytes(daddr),
                tos,
                ttl,
                sport,
            )
        }
    }

    /// Pushes UDP and IPv6 headers; `dst` is cloned into the skb.
    pub(crate) fn push_ip6(
        &mut self,
        dst: &Dst,
        saddr: &[u8; 16],
        daddr: &[u8; 16],
        tclass: u8,
        hop: u8,
        sport: u16,
    ) {
        // SAFETY: as in `push_ip4`; the addresses are 16-byte buffers read by value.
        unsafe {
            b::rrxe_skb_push_ip6(
                self.raw(),
                dst.0.as_ptr(),
                saddr.as_ptr().cast(),
                daddr.as_ptr().cast(),
                tclass,
                hop,
                sport,
            )
        }
    }

    /// The bytes from the network header to the tail (after the pushes).
    pub(crate) fn l3_mut(&mut self) -> &mut [u8] {
        let mut len = 0u32;
        // SAFETY: the skb is linear (built by us) and owned.
        let p = unsafe { b::rrxe_skb_l3(self.raw(), &mut len) };
        // SAFETY: the range lies in the skb's linear data, exclusively borrowed via `self`.
        unsafe { core::slice::from_raw_parts_mut(p, len as usize) }
    }

    /// Sends through the IP stack (consumes the skb).
    pub(crate) fn send(self, v6: bool) -> Result {
        // SAFETY: the skb has a dst and complete headers; ownership passes to the stack.
        kernel::error::to_result(unsafe { b::rrxe_ip_send(self.into_raw(), v6) })
    }

    /// Frees a successfully processed skb (not counted as a drop).
    pub(crate) fn consume(self) {
        // SAFETY: we own it.
        unsafe { b::rrxe_skb_consume(self.into_raw()) }
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: we own it.
        unsafe { b::rrxe_skb_drop(self.raw()) }
    }
}

/// A route (`dst_entry`) reference.
pub(crate) struct Dst(NonNull<b::dst_entry>);

// SAFETY: dst entries are reference counted and usable from any context.
unsafe impl Send for Dst {}
// SAFETY: `&Dst` only reads.
unsafe impl Sync for Dst {}

impl Dst {
    /// IPv4 route from `saddr` to `daddr` out of interface `oif`.
    pub(crate) fn route4(net: NetNs, oif: i32, saddr: [u8; 4], daddr: [u8; 4]) -> Option<Dst> {
        // SAFETY: `net` is a live namespace (the device's); returns a held dst or NULL.
        NonNull::new(unsafe {
            b::rrxe_route4(
                net.0,
                oif,
                u32::from_ne_bytes(saddr),
                u32::from_ne_bytes(daddr),
            )
        })
        .map(Dst)
    }

    /// IPv6 route.
    pub(crate) fn route6(net: NetNs, oif: i32, saddr: &[u8; 16], daddr: &[u8; 16]) -> Option<Dst> {
        // SAFETY: as in `route4`.
        NonNull::new(unsafe {
            b::rrxe_route6(net.0, oif, saddr.as_ptr().cast(), daddr.as_ptr().cast())
        })
        .map(Dst)
    }

    /// The output device.
    pub(crate) fn dev(&self) -> &NetDevice {
        // SAFETY: a held dst keeps a reference on its device.
        unsafe { NetDevice::from_raw(b::rrxe_dst_dev(self.0.as_ptr())) }
    }
}

impl Drop for Dst {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { b::dst_release(self.0.as_ptr()) }
    }
}
