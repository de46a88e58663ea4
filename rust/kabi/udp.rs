// SPDX-License-Identifier: GPL-2.0
//! RoCEv2 UDP sockets (port 4791, IPv4 and IPv6), one pair per network namespace, shared
//! by every rrxe device of that namespace and closed with the last one (or when the
//! namespace goes away).

use crate::kabi::netdev::NetNs;
use crate::kabi::skb::SkBuff;
use crate::sys as b;
use kernel::prelude::*;

/// Receives every RoCEv2 datagram (softirq; must not sleep).
pub(crate) trait UdpRx: 'static {
    /// Handles one packet; `skb->data` is at the UDP header.
    fn rx(skb: SkBuff);
}

struct NetSocks {
    net: usize,
    s4: *mut b::socket,
    s6: *mut b::socket,
    users: u32,
}

// SAFETY: the socket pointers are only used under the registry lock (open/close).
unsafe impl Send for NetSocks {}

kernel::sync::global_lock! {
    // SAFETY: initialised by `UdpSockets::init` in module init before any use.
    unsafe(uninit) static SOCKS: Mutex<KVec<NetSocks>> = KVec::new();
}

/// # Safety
///
/// Called by the UDP core (softirq) for a socket opened by [`UdpSockets::get`] with `skb`
/// NULL or a valid sk_buff whose ownership passes to us; `_sk` is not dereferenced.
unsafe extern "C" fn encap_rcv<T: UdpRx>(_sk: *mut b::sock, skb: *mut b::sk_buff) -> c_int {
    // SAFETY: the UDP core hands us ownership of `skb`; returning 0 tells it we consumed it.
    if let Some(skb) = unsafe { SkBuff::from_raw(skb) } {
        T::rx(skb);
    }
    0
}

fn close(s: &NetSocks) {
    for sock in [s.s6, s.s4] {
        if !sock.is_null() {
            // SAFETY: opened by `open` and closed exactly once (the entry is removed).
            unsafe { b::rrxe_udp_tunnel_close(sock) }
        }
    }
}

/// # Safety
///
/// Called by the netns core (process context) through the shim's pernet_operations, which
/// [`UdpSockets::init`] registers only after initialising `SOCKS`; `net` is only compared,
/// never dereferenced.
unsafe extern "C" fn pernet_exit(net: *mut b::net) {
    let mut socks = SOCKS.lock();
    if let Some(i) = socks.iter().position(|s| s.net == net as usize) {
        if let Some(s) = socks.get(i) {
            close(s);
        }
        let _ = socks.remove(i);
    }
}

/// Module-lifetime registration of the per-namespace sockets.
pub(crate) struct UdpSockets(());

impl UdpSockets {
    /// Initialises the registry and hooks namespace exit (module init, once).
    pub(crate) fn init() -> Result<Self> {
        // SAFETY: called once from module init, before any other use of `SOCKS`.
        unsafe { SOCKS.init() };
        // SAFETY: registers a static pernet_operations whose exit calls `pernet_exit`.
        kernel::error::to_result(unsafe { b::rrxe_pernet_register(Some(pernet_exit)) })?;
        Ok(UdpSockets(()))
    }

    /// Takes a reference on the sockets of `net`, opening them on first use.
    pub(crate) fn get<T: UdpRx>(ns: NetNs) -> Result<SocketRef> {
        let net = ns.0;
        let mut socks = SOCKS.lock();
        if let Some(s) = socks.iter_mut().find(|s| s.net == net as usize) {
            s.users += 1;
            return Ok(SocketRef(ns));
        }
        // SAFETY: `net` is the live namespace of a device being created; may sleep.
        let s4 = unsafe { b::rrxe_udp_tunnel_open(net, false, Some(encap_rcv::<T>)) };
        if kernel::error::from_err_ptr(s4).is_err() {
            return Err(kernel::error::from_err_ptr(s4).err().unwrap_or(EINVAL));
        }
        // SAFETY: as above.
        let mut s6 = unsafe { b::rrxe_udp_tunnel_open(net, true, Some(encap_rcv::<T>)) };
        if let Err(e) = kernel::error::from_err_ptr(s6) {
            if e != EAFNOSUPPORT {
                // SAFETY: `s4` was opened above and is not registered anywhere.
                unsafe { b::rrxe_udp_tunnel_close(s4) };
                return Err(e);
            }
            s6 = core::ptr::null_mut();
        }
        let entry = NetSocks {
            net: net as usize,
            s4,
            s6,
            users: 1,
        };
        if socks.push(entry, GFP_KERNEL).is_err() {
            close(&NetSocks {
                net: 0,
                s4,
                s6,
                users: 0,
            });
            return Err(ENOMEM);
        }
        Ok(SocketRef(ns))
    }

    fn put(ns: NetNs) {
        let net = ns.0;
        let mut socks = SOCKS.lock();
        let Some(i) = socks.iter().position(|s| s.net == net as usize) else {
            return;
        };
        let last = socks.get_mut(i).is_some_and(|s| {
            s.users = s.users.saturating_sub(1);
            s.users == 0
        });
        if last {
            if let Some(s) = socks.get(i) {
                close(s);
            }
            let _ = socks.remove(i);
        }
    }
}

impl Drop for UdpSockets {
    fn drop(&mut self) {
        // SAFETY: registered in `init`; runs the exit hook for every namespace, closing
        // whatever sockets are left.
        unsafe { b::rrxe_pernet_unregister() };
        let mut socks = SOCKS.lock();
        for s in socks.iter() {
            close(s);
        }
        // Its buffer too, not only its entries: a static is never dropped, and unloading
        // the module frees the static but not what it points to.
        *socks = KVec::new();
    }
}

/// A device's reference on its namespace's sockets; dropping it may close them.
pub(crate) struct SocketRef(NetNs);

impl Drop for SocketRef {
    fn drop(&mut self) {
        UdpSockets::put(self.0);
    }
}
