// SPDX-License-Identifier: GPL-2.0
//! `struct net_device` access and the netdevice notifier.

use crate::sys as b;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::error::Result;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A borrowed `struct net_device`, valid for the lifetime of the reference (a callback's
/// argument or an owned [`NetDevRef`]).
#[repr(transparent)]
pub(crate) struct NetDevice(Opaque<b::net_device>);

impl NetDevice {
    /// # Safety
    ///
    /// `ptr` must point to a live `net_device` that stays alive (registered or referenced)
    /// for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut b::net_device) -> &'a NetDevice {
        // SAFETY: `NetDevice` is a transparent wrapper; the caller guarantees liveness.
        unsafe { &*ptr.cast::<NetDevice>() }
    }

    /// The raw pointer, for handing back to C.
    pub(crate) fn as_raw(&self) -> *mut b::net_device {
        self.0.get()
    }

    /// Interface name.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: `netdev_name` returns the NUL-terminated name embedded in the live device.
        unsafe { CStr::from_char_ptr(b::rrxe_netdev_name(self.as_raw())) }
    }

    /// Current MTU.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: `self` is a live device.
        unsafe { b::rrxe_netdev_mtu(self.as_raw()) }
    }

    /// Interface index.
    pub(crate) fn ifindex(&self) -> i32 {
        ifindex_of(self.as_raw())
    }

    /// Whether this is a VLAN device.
    pub(crate) fn is_vlan(&self) -> bool {
        // SAFETY: `self` is a live device.
        unsafe { b::rrxe_netdev_is_vlan(self.as_raw()) }
    }

    /// Administratively up (`IFF_UP`).
    pub(crate) fn is_up(&self) -> bool {
        // SAFETY: `self` is a live device; `netif_get_flags` only reads its flags.
        let flags = unsafe { b::netif_get_flags(self.as_raw()) };
        flags & b::net_device_flags_IFF_UP != 0
    }

    /// Running with carrier: what an RDMA port reports as ACTIVE.
    pub(crate) fn port_active(&self) -> bool {
        // SAFETY: `self` is a live device.
        unsafe { b::rrxe_netdev_port_active(self.as_raw()) }
    }

    /// The 6-byte hardware address, if the device has one.
    pub(crate) fn mac(&self) -> Option<[u8; 6]> {
        let mut mac = [0u8; 6];
        // SAFETY: `self` is live and `mac` has room for the 6 bytes the shim copies.
        unsafe { b::rrxe_netdev_mac(self.as_raw(), mac.as_mut_ptr()) }.then_some(mac)
    }

    /// The network namespace the device lives in.
    pub(crate) fn net(&self) -> NetNs {
        // SAFETY: `self` is live; `dev_net` only reads a field.
        NetNs(unsafe { b::rrxe_netdev_net(self.as_raw()) })
    }
}

/// A counted reference on a `net_device` (released with `dev_put`).
pub(crate) struct NetDevRef(NonNull<b::net_device>);

impl NetDevRef {
    /// # Safety
    ///
    /// `ptr` must be non-null and carry a reference (`dev_hold`) that this value now owns.
    pub(crate) unsafe fn from_held(ptr: *mut b::net_device) -> Option<NetDevRef> {
        NonNull::new(ptr).map(NetDevRef)
    }
}

impl core::ops::Deref for NetDevRef {
    type Target = NetDevice;
    fn deref(&self) -> &NetDevice {
        // SAFETY: the reference we hold keeps the device alive.
        unsafe { NetDevice::from_raw(self.0.as_ptr()) }
    }
}

impl Drop for NetDevRef {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { b::rrxe_netdev_put(self.0.as_ptr()) }
    }
}

/// Netdevice notifier events rrxe reacts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NetdevEvent {
    /// The device is going away.
    Unregister,
    /// The MTU changed.
    ChangeMtu,
    /// Up, down or carrier change.
    StateChange,
    /// Anything else.
    Other,
}

impl NetdevEvent {
    fn from_raw(ev: u64) -> Self {
        match u32::try_from(ev) {
            Ok(b::netdev_cmd_NETDEV_UNREGISTER) => NetdevEvent::Unregister,
            Ok(b::netdev_cmd_NETDEV_CHANGEMTU) => NetdevEvent::ChangeMtu,
            Ok(
                b::netdev_cmd_NETDEV_UP | b::netdev_cmd_NETDEV_DOWN | b::netdev_cmd_NETDEV_CHANGE,
            ) => NetdevEvent::StateChange,
            _ => NetdevEvent::Other,
        }
    }
}

/// Receives netdevice events (process context, RTNL held).
pub(crate) trait NetdevEvents: 'static {
    /// Called for every event on every net device in every namespace.
    fn event(ev: NetdevEvent, dev: &NetDevice);
}

/// A registered netdevice notifier; unregistered on drop.
pub(crate) struct NetdevNotifier<T: NetdevEvents> {
    nb: Pin<KBox<Opaque<b::notifier_block>>>,
    _t: PhantomData<T>,
}

/// # Safety
///
/// Called by the netdevice notifier chain (process context, RTNL held) for the block
/// registered by [`NetdevNotifier::register`]; `ptr` is a `netdev_notifier_info` whose
/// device is alive for the call.
unsafe extern "C" fn notifier_call<T: NetdevEvents>(
    _nb: *mut b::notifier_block,
    event: usize,
    ptr: *mut c_void,
) -> c_int {
    // SAFETY: the netdevice notifier chain passes a `netdev_notifier_info` whose device is
    // alive for the duration of the call.
    let dev = unsafe { NetDevice::from_raw(b::rrxe_netdev_from_notifier_info(ptr)) };
    T::event(NetdevEvent::from_raw(event as u64), dev);
    b::NOTIFY_DONE as c_int
}

impl<T: NetdevEvents> NetdevNotifier<T> {
    /// Registers the notifier (existing devices are replayed as REGISTER/UP events).
    pub(crate) fn register() -> Result<Self> {
        let nb = KBox::pin(
            Opaque::new(b::notifier_block {
                notifier_call: Some(notifier_call::<T>),
                ..pin_init::zeroed()
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: `nb` is pinned in a heap allocation that outlives the registration
        // (unregistered in `drop` before it is freed).
        kernel::error::to_result(unsafe { b::register_netdevice_notifier(nb.get()) })?;
        Ok(NetdevNotifier {
            nb,
            _t: PhantomData,
        })
    }
}

impl<T: NetdevEvents> Drop for NetdevNotifier<T> {
    fn drop(&mut self) {
        // SAFETY: registered in `register`; after this returns no callback is running.
        unsafe { b::unregister_netdevice_notifier(self.nb.get()) };
    }
}

// SAFETY: the notifier block is only touched by the notifier chain under its own lock.
unsafe impl<T: NetdevEvents> Send for NetdevNotifier<T> {}
// SAFETY: `&NetdevNotifier` exposes nothing.
unsafe impl<T: NetdevEvents> Sync for NetdevNotifier<T> {}

/// The interface index of a raw device pointer (used for GID attribute netdevs).
pub(crate) fn ifindex_of(ndev: *mut b::net_device) -> i32 {
    // SAFETY: callers pass a device pointer that is alive for the call (RCU-protected).
    // `ifindex` is a plain field, written only when the device changes namespace, after
    // it is unlisted, an RCU grace period has passed and NETDEV_UNREGISTER has run.
    unsafe { (*ndev).ifindex }
}

/// A network namespace, used as a key and for lookups while a device of it is alive.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct NetNs(pub(crate) *mut b::net);

// SAFETY: only compared and passed back to the kernel while the namespace is alive.
unsafe impl Send for NetNs {}
// SAFETY: as above.
unsafe impl Sync for NetNs {}

impl NetNs {
    /// The local device that owns `addr` (IPv4, or IPv6 when 16 bytes), without a
    /// reference: valid for the current softirq / RCU section only.
    pub(crate) fn local_dev(&self, addr: &[u8]) -> Option<&NetDevice> {
        let d = match addr.len() {
            // SAFETY: lookup under the caller's RCU section (softirq).
            4 => unsafe {
                b::__ip_dev_find(
                    self.0,
                    u32::from_ne_bytes([addr[0], addr[1], addr[2], addr[3]]),
                    false,
                )
            },
            // SAFETY: as above; `addr` holds 16 bytes.
            16 => unsafe { b::ipv6_dev_find(self.0, addr.as_ptr().cast(), core::ptr::null_mut()) },
            _ => return None,
        };
        // SAFETY: returned devices stay alive for the RCU section.
        (!d.is_null()).then(|| unsafe { NetDevice::from_raw(d) })
    }
}
