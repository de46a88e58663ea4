// SPDX-License-Identifier: GPL-2.0
//! ib_core glue: the `ib_device` that embeds the driver's per-device state, the
//! `ib_device_ops` table built from the [`IbDriver`] trait, the rdma link type
//! (`rdma link add NAME type rrxe netdev IF`) and the few ib_core services the driver calls.

use crate::kabi::netdev::{NetDevRef, NetDevice};
use crate::kabi::verbs::{
    self, fill_wc, kernel_recv_wr, kernel_send_wr, Av, CqHandle, MrShell, QpHandle, Shell,
    SrqHandle, Udata,
};
use crate::proto::pma::{self, PortCounters, MAD_LEN};
use crate::proto::uapi::{Cqe, RecvWqe, SendWqe};
use crate::sys as b;
use core::marker::PhantomData;
use core::ptr::{addr_of_mut, NonNull};
use kernel::error::{from_result, to_result, Result};
use kernel::prelude::*;
use kernel::sync::Arc;
use kernel::types::Opaque;

/// rdma-core's rxe provider binds devices by this driver id (see the uABI notes).
const DRIVER_ID: b::rdma_driver_id = b::rdma_driver_id_RDMA_DRIVER_RXE;
/// The provider ABI version librxe accepts (1..=2).
const UVERBS_ABI_VER: u32 = 2;

/// The per-device callbacks of a driver, with safe arguments. ib_core calls them in process
/// context.
pub(crate) trait IbDriver: Sized + 'static {
    /// Driver state stored inside the `ib_device` allocation; dropped when ib_core frees
    /// the device.
    type Dev: Send + Sync;

    /// `rdma link add`: create and register a device named `name` on `ndev`.
    fn newlink(name: &CStr, ndev: &NetDevice) -> Result;
    /// `rdma link delete`: called before ib_core unregisters the device.
    fn dellink(dev: &IbDev<Self>) -> Result;
    /// Fills the device attributes. `udata_len` is the provider-specific (in, out) length.
    fn query_device(
        dev: &IbDev<Self>,
        attr: &mut b::ib_device_attr,
        udata_len: (usize, usize),
    ) -> Result;
    /// Fills the attributes of `port`.
    fn query_port(dev: &IbDev<Self>, port: u32, attr: &mut b::ib_port_attr) -> Result;
    /// Fills the immutable attributes of `port`.
    fn port_immutable(dev: &IbDev<Self>, port: u32, imm: &mut b::ib_port_immutable) -> Result;
    /// Returns P_Key table entry `index` of `port`.
    fn query_pkey(dev: &IbDev<Self>, port: u32, index: u16) -> Result<u16>;
    /// The device became visible: report the initial port state.
    fn enable(dev: &IbDev<Self>) -> Result;

    /// Protection domain state.
    type Pd: Send + Sync;
    /// Memory region state.
    type Mr: Send + Sync;
    /// Completion queue state.
    type Cq: Send + Sync;
    /// Queue pair state.
    type Qp: Send + Sync;
    /// Address handle state.
    type Ah: Send + Sync;
    /// Shared receive queue state.
    type Srq: Send + Sync;
    /// Memory window state.
    type Mw: Send + Sync;

    /// Allocates a PD.
    fn alloc_pd(dev: &IbDev<Self>) -> Result<Arc<Self::Pd>>;
    /// Frees a PD.
    fn dealloc_pd(dev: &IbDev<Self>, pd: Arc<Self::Pd>);
    /// Registers user memory; returns the MR and its key (lkey = rkey).
    fn reg_user_mr(
        dev: &IbDev<Self>,
        pd: &Arc<Self::Pd>,
        start: u64,
        len: u64,
        iova: u64,
        access: i32,
    ) -> Result<(Arc<Self::Mr>, u32)>;
    /// The DMA MR of a kernel PD (kernel virtual addresses, local access only); returns
    /// it and its key.
    fn get_dma_mr(
        dev: &IbDev<Self>,
        pd: &Arc<Self::Pd>,
        access: i32,
    ) -> Result<(Arc<Self::Mr>, u32)>;
    /// A fast-registration MR of a kernel PD for up to `max_pages` pages
    /// (`ib_alloc_mr` with `IB_MR_TYPE_MEM_REG`); returns it and its key.
    fn alloc_mr(
        dev: &IbDev<Self>,
        pd: &Arc<Self::Pd>,
        max_pages: u32,
    ) -> Result<(Arc<Self::Mr>, u32)>;
    /// `ib_map_mr_sg` begins mapping pages of `page_size` bytes into `mr`.
    fn map_mr_begin(mr: &Arc<Self::Mr>, page_size: u32) -> Result;
    /// `ib_map_mr_sg` maps the page at DMA (here: kernel virtual) address `addr` next.
    fn map_mr_page(mr: &Arc<Self::Mr>, addr: u64) -> Result;
    /// Deregisters an MR (refused while memory windows are bound to it).
    fn dereg_mr(dev: &IbDev<Self>, mr: Arc<Self::Mr>) -> Result;
    /// Allocates a memory window of type 2 (else 1); returns it and its rkey.
    fn alloc_mw(dev: &IbDev<Self>, pd: &Arc<Self::Pd>, type2: bool)
        -> Result<(Arc<Self::Mw>, u32)>;
    /// Deallocates a memory window.
    fn dealloc_mw(dev: &IbDev<Self>, mw: Arc<Self::Mw>);
    /// Creates a CQ of at least `cqe` entries; returns it and its real capacity.
    fn create_cq(
        dev: &IbDev<Self>,
        cqe: u32,
        flags: u32,
        handle: CqHandle,
        udata: Option<&Udata>,
    ) -> Result<(Arc<Self::Cq>, u32)>;
    /// Destroys a CQ.
    fn destroy_cq(dev: &IbDev<Self>, cq: &Arc<Self::Cq>) -> Result;
    /// Resizes a user CQ to at least `cqe` entries; returns the real capacity.
    fn resize_cq(cq: &Arc<Self::Cq>, cqe: u32, udata: &Udata) -> Result<u32>;
    /// Arms a CQ; returns 1 if completions are already pending and the caller asked.
    fn req_notify_cq(cq: &Arc<Self::Cq>, flags: u32) -> i32;
    /// Creates a QP; writes the real capacities back into `init.cap`; returns the QPN.
    fn create_qp(
        dev: &IbDev<Self>,
        pd: &Arc<Self::Pd>,
        init: &mut b::ib_qp_init_attr,
        cqs: (Arc<Self::Cq>, Arc<Self::Cq>),
        srq: Option<Arc<Self::Srq>>,
        handle: QpHandle,
        udata: Option<&Udata>,
    ) -> Result<(Arc<Self::Qp>, u32)>;
    /// Queues one work request of a kernel consumer (the list ends with [`IbDriver::post_send`]).
    fn post_send_kernel(qp: &Arc<Self::Qp>, wqe: &SendWqe) -> Result;
    /// Posts one receive work request of a kernel consumer.
    fn post_recv_kernel(qp: &Arc<Self::Qp>, wqe: &RecvWqe) -> Result;
    /// Takes up to `max` completions of a kernel CQ, handing each to `sink` with its
    /// index and QP; returns how many were taken.
    fn poll_cq(
        dev: &IbDev<Self>,
        cq: &Arc<Self::Cq>,
        max: usize,
        sink: &mut dyn FnMut(usize, &Cqe, QpHandle),
    ) -> usize;
    /// The number UD work requests name an address handle by.
    fn ah_num(ah: &Self::Ah) -> u32;
    /// Creates an address handle; returns it and its number (never 0). `sleepable` is
    /// false when the caller may be in atomic context.
    fn create_ah(
        dev: &IbDev<Self>,
        pd: &Arc<Self::Pd>,
        av: &Av,
        sleepable: bool,
    ) -> Result<(Arc<Self::Ah>, u32)>;
    /// Destroys an address handle.
    fn destroy_ah(dev: &IbDev<Self>, ah: Arc<Self::Ah>);
    /// Creates an SRQ; writes the real capacities back into `attr`.
    fn create_srq(
        dev: &IbDev<Self>,
        pd: &Arc<Self::Pd>,
        attr: &mut b::ib_srq_attr,
        handle: SrqHandle,
        udata: Option<&Udata>,
    ) -> Result<Arc<Self::Srq>>;
    /// Posts one receive work request of a kernel consumer to an SRQ.
    fn post_srq_recv_kernel(srq: &Arc<Self::Srq>, wqe: &RecvWqe) -> Result;
    /// Modifies an SRQ (`IB_SRQ_LIMIT`; resizing is not supported).
    fn modify_srq(srq: &Arc<Self::Srq>, attr: &b::ib_srq_attr, mask: u32) -> Result;
    /// Queries an SRQ.
    fn query_srq(srq: &Arc<Self::Srq>, attr: &mut b::ib_srq_attr);
    /// Destroys an SRQ.
    fn destroy_srq(dev: &IbDev<Self>, srq: Arc<Self::Srq>);
    /// Modifies a QP.
    fn modify_qp(dev: &IbDev<Self>, qp: &Arc<Self::Qp>, attr: &b::ib_qp_attr, mask: u32) -> Result;
    /// Queries a QP.
    fn query_qp(
        qp: &Arc<Self::Qp>,
        attr: &mut b::ib_qp_attr,
        init: &mut b::ib_qp_init_attr,
    ) -> Result;
    /// Destroys a QP (every packet path user has stopped when this returns).
    fn destroy_qp(dev: &IbDev<Self>, qp: Arc<Self::Qp>) -> Result;
    /// The user SQ doorbell.
    fn post_send(qp: &Arc<Self::Qp>) -> Result;

    /// Driver attributes of a QP for `rdma resource show qp -dd` (written with
    /// [`ResAttrs::put_u64`]).
    fn qp_res_attrs(qp: &Arc<Self::Qp>, out: &mut ResAttrs<'_>) -> Result;

    /// Names of the device counters (`rdma statistic show link`).
    const COUNTERS: &'static [&'static CStr];
    /// Current counter values, in [`IbDriver::COUNTERS`] order.
    fn counters(dev: &IbDev<Self>, out: &mut [u64]);
    /// The port's traffic counters, as the performance-management agent reports them.
    fn port_counters(dev: &IbDev<Self>) -> PortCounters;
}

/// An `ib_device` followed by the driver's state. ib_core allocates it (`_ib_alloc_device`
/// with our size) and frees it; it never moves.
#[repr(C)]
pub(crate) struct IbDev<T: IbDriver> {
    ib: Opaque<b::ib_device>,
    data: T::Dev,
}

/// Fixed identity of a new device.
pub(crate) struct DevParams<'a> {
    /// Device name (`rrxe0`).
    pub(crate) name: &'a CStr,
    /// Node description shown by tools.
    pub(crate) node_desc: &'a [u8],
    /// Node GUID (EUI-64), in wire byte order.
    pub(crate) node_guid: [u8; 8],
    /// Number of completion vectors.
    pub(crate) num_comp_vectors: u32,
}

impl<T: IbDriver> IbDev<T> {
    /// # Safety
    ///
    /// `ib` must be an `ib_device` allocated by [`IbDev::register`] for this `T` whose
    /// driver state is initialised, alive for `'a`.
    unsafe fn from_raw<'a>(ib: *mut b::ib_device) -> &'a Self {
        // SAFETY: `IbDev` is `repr(C)` with the `ib_device` at offset 0; the caller
        // guarantees the allocation is an initialised `IbDev<T>`.
        unsafe { &*ib.cast::<Self>() }
    }

    fn raw(&self) -> *mut b::ib_device {
        self.ib.get()
    }

    /// The driver state.
    pub(crate) fn data(&self) -> &T::Dev {
        &self.data
    }

    /// The device name as registered.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: `name` is a NUL-terminated array inside the live device; ib_core only
        // changes it under rename, which rrxe devices do not support from the driver side.
        unsafe { CStr::from_char_ptr((*self.raw()).name.as_ptr()) }
    }

    /// The net device bound to port 1, with a reference held.
    pub(crate) fn netdev(&self) -> Option<NetDevRef> {
        // SAFETY: the device is live; the returned pointer carries a reference.
        unsafe { NetDevRef::from_held(b::ib_device_get_netdev(self.raw(), 1)) }
    }

    /// Reports the port's current state (from `ndev`) as a port event.
    pub(crate) fn dispatch_port_state(&self, ndev: &NetDevice) {
        // SAFETY: both devices are live.
        unsafe { b::ib_dispatch_port_state_event(self.raw(), ndev.as_raw()) }
    }

    /// Ethernet speed and width of `port` as ib enums (`ib_get_eth_speed`).
    pub(crate) fn eth_speed(&self, port: u32) -> Result<(u16, u8)> {
        let (mut speed, mut width) = (0u16, 0u8);
        // SAFETY: the device is live and the out pointers are valid; may sleep (rtnl),
        // which is fine in the process context of query_port.
        to_result(unsafe { b::ib_get_eth_speed(self.raw(), port, &mut speed, &mut width) })?;
        Ok((speed, width))
    }

    /// Attributes of `port` through ib_core (`ib_query_port`).
    pub(crate) fn query_port_core(&self, port: u32) -> Result<b::ib_port_attr> {
        let mut attr: b::ib_port_attr = pin_init::zeroed();
        // SAFETY: the device is live and `attr` is a valid out pointer.
        to_result(unsafe { b::ib_query_port(self.raw(), port, &mut attr) })?;
        Ok(attr)
    }

    /// Allocates, initialises and registers a device on `ndev`.
    pub(crate) fn register(
        ndev: &NetDevice,
        p: &DevParams<'_>,
        init: impl PinInit<T::Dev, Error>,
    ) -> Result {
        // SAFETY: `_ib_alloc_device` returns zeroed memory of the requested size with an
        // initialised `ib_device` at its start, or NULL.
        let ib = unsafe { b::_ib_alloc_device(size_of::<Self>(), ndev.net().0) };
        if ib.is_null() {
            return Err(ENOMEM);
        }
        let this = ib.cast::<Self>();
        // SAFETY: `this` is a fresh allocation of `size_of::<Self>()` bytes that ib_core
        // never moves, so `data` may be initialised in place and stays pinned.
        if let Err(e) = unsafe { pin_init::raw_try_init(addr_of_mut!((*this).data), init) } {
            // SAFETY: no ops are set yet, so freeing does not call `dealloc_driver` on
            // uninitialised state.
            unsafe { b::ib_dealloc_device(ib) };
            return Err(e);
        }
        // SAFETY: `ib` is allocated, unregistered and only reachable from here.
        unsafe {
            b::ib_set_device_ops(ib, Ops::<T>::build());
            (*ib).node_type = b::RDMA_NODE_IB_CA as u8;
            (*ib).phys_port_cnt = 1;
            (*ib).num_comp_vectors = i32::try_from(p.num_comp_vectors.max(1)).unwrap_or(1);
            (*ib).local_dma_lkey = 0;
            (*ib).node_guid = u64::from_ne_bytes(p.node_guid);
            let desc = &mut (*ib).node_desc;
            let room = desc.len().saturating_sub(1);
            for (d, s) in desc.iter_mut().zip(p.node_desc.iter().take(room)) {
                *d = *s as c_char;
            }
            (*ib).uverbs_cmd_mask |= (1u64 << b::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_POST_SEND)
                | (1u64 << b::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
            (*ib).link_ops = LINK_OPS.0.get();
            b::rrxe_ib_mark_name_assigned_by_user(ib);
        }
        // SAFETY: `ib` and `ndev` are live; on failure the device is freed exactly once
        // (`ib_dealloc_device` runs `dealloc_driver`, which drops the driver state).
        let r =
            to_result(unsafe { b::ib_device_set_netdev(ib, ndev.as_raw(), 1) }).and_then(|()| {
                // SAFETY: as above; `name` is NUL-terminated; NULL dma device = virtual DMA.
                to_result(unsafe {
                    b::ib_register_device(ib, p.name.as_char_ptr(), core::ptr::null_mut())
                })
            });
        if let Err(e) = r {
            // SAFETY: registration failed, so the caller owns the device and must free it.
            unsafe { b::ib_dealloc_device(ib) };
            return Err(e);
        }
        Ok(())
    }

    /// Finds our device bound to `ndev`, with a reference held.
    pub(crate) fn get_by_netdev(ndev: &NetDevice) -> Option<IbDevRef<T>> {
        // SAFETY: `ndev` is live; a non-NULL result carries a device reference.
        let ib = NonNull::new(unsafe { b::ib_device_get_by_netdev(ndev.as_raw(), DRIVER_ID) })?;
        let r = IbDevRef::<T>(ib, PhantomData);
        // Another module could report the same driver id; only devices whose ops carry our
        // module as owner embed an `IbDev<T>`.
        // SAFETY: the reference keeps the device and its ops alive.
        let owner = unsafe { (*ib.as_ptr()).ops.owner };
        (owner == this_module()).then_some(r)
    }

    /// Registers user memory for an MR on this device (may sleep): pinned, or on-demand
    /// paged when `access` carries `IB_ACCESS_ON_DEMAND`; counted in `counts`.
    pub(crate) fn umem_get(
        &self,
        start: u64,
        len: u64,
        access: i32,
        counts: &Arc<crate::kabi::mem::UmemCounts>,
    ) -> Result<crate::kabi::mem::Umem> {
        crate::kabi::mem::Umem::get(self.raw(), start, len, access, counts)
    }

    /// Unregisters every device of this driver and waits for them to go (module exit).
    pub(crate) fn unregister_all() {
        // SAFETY: no preconditions; sleeps until every device with our driver id is gone.
        unsafe { b::ib_unregister_driver(DRIVER_ID) }
    }
}

/// A counted reference on one of our devices (`ib_device_put` on drop).
pub(crate) struct IbDevRef<T: IbDriver>(NonNull<b::ib_device>, PhantomData<T>);

impl<T: IbDriver> IbDevRef<T> {
    /// Queues the device for unregistration (safe from a netdev notifier).
    pub(crate) fn unregister_queued(&self) {
        // SAFETY: we hold a reference; ib_core serialises with other unregistrations.
        unsafe { b::ib_unregister_device_queued(self.0.as_ptr()) }
    }
}

impl<T: IbDriver> core::ops::Deref for IbDevRef<T> {
    type Target = IbDev<T>;
    fn deref(&self) -> &IbDev<T> {
        // SAFETY: checked to be ours in `get_by_netdev`; the reference keeps it alive and
        // the driver state is initialised for every registered device.
        unsafe { IbDev::from_raw(self.0.as_ptr()) }
    }
}

impl<T: IbDriver> Drop for IbDevRef<T> {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { b::ib_device_put(self.0.as_ptr()) }
    }
}

fn this_module() -> *mut b::module {
    kernel::module::this_module::<crate::LocalModule>().as_ptr()
}

// ---- ops trampolines: C calls these with pointers ib_core guarantees valid ----

/// # Safety
///
/// Called by ib_core on a device of ours (also during registration), so `ib` is an
/// `IbDev<T>` with initialised driver state (the ops are installed only after that); `attr`
/// is a valid, exclusive out pointer and `udata` is NULL or valid, both for the call.
unsafe extern "C" fn query_device<T: IbDriver>(
    ib: *mut b::ib_device,
    attr: *mut b::ib_device_attr,
    udata: *mut b::ib_udata,
) -> c_int {
    // SAFETY: ib_core calls ops only on registered devices of ours; `attr` is valid.
    let (dev, attr) = unsafe { (IbDev::<T>::from_raw(ib), &mut *attr) };
    let lens = if udata.is_null() {
        (0, 0)
    } else {
        // SAFETY: a non-NULL udata is valid for the call.
        unsafe { ((*udata).inlen, (*udata).outlen) }
    };
    from_result(|| T::query_device(dev, attr, lens).map(|()| 0))
}

/// # Safety
///
/// Called by ib_core on a device of ours (`ib` as in [`query_device`]); `attr` is a valid,
/// exclusive out pointer for the call.
unsafe extern "C" fn query_port<T: IbDriver>(
    ib: *mut b::ib_device,
    port: u32,
    attr: *mut b::ib_port_attr,
) -> c_int {
    // SAFETY: as in `query_device`.
    let (dev, attr) = unsafe { (IbDev::<T>::from_raw(ib), &mut *attr) };
    from_result(|| T::query_port(dev, port, attr).map(|()| 0))
}

/// # Safety
///
/// Called by ib_core during registration of a device of ours (`ib` as in [`query_device`]);
/// `imm` is a valid, exclusive out pointer for the call.
unsafe extern "C" fn get_port_immutable<T: IbDriver>(
    ib: *mut b::ib_device,
    port: u32,
    imm: *mut b::ib_port_immutable,
) -> c_int {
    // SAFETY: as in `query_device`.
    let (dev, imm) = unsafe { (IbDev::<T>::from_raw(ib), &mut *imm) };
    from_result(|| T::port_immutable(dev, port, imm).map(|()| 0))
}

/// # Safety
///
/// None beyond the op's C signature: neither argument is dereferenced.
unsafe extern "C" fn get_link_layer(_ib: *mut b::ib_device, _port: u32) -> b::rdma_link_layer {
    b::rdma_link_layer_IB_LINK_LAYER_ETHERNET
}

/// # Safety
///
/// Called by ib_core on a device of ours (`ib` as in [`query_device`]); `pkey` is a valid,
/// exclusive out pointer for the call.
unsafe extern "C" fn query_pkey<T: IbDriver>(
    ib: *mut b::ib_device,
    port: u32,
    index: u16,
    pkey: *mut u16,
) -> c_int {
    // SAFETY: as in `query_device`; `pkey` is a valid out pointer.
    let (dev, pkey) = unsafe { (IbDev::<T>::from_raw(ib), &mut *pkey) };
    from_result(|| {
        *pkey = T::query_pkey(dev, port, index)?;
        Ok(0)
    })
}

/// # Safety
///
/// None beyond the op's C signature: neither argument is dereferenced.
unsafe extern "C" fn alloc_ucontext(_uctx: *mut b::ib_ucontext, _udata: *mut b::ib_udata) -> c_int {
    0
}

/// # Safety
///
/// None beyond the op's C signature: `_uctx` is not dereferenced.
unsafe extern "C" fn dealloc_ucontext(_uctx: *mut b::ib_ucontext) {}

/// Device removal with processes still attached: ib_core destroys their objects through
/// the ordinary destroy ops and zaps the ring mappings; nothing else to let go of. Having
/// the op lets `rdma link delete` and rmmod proceed instead of waiting for the processes.
///
/// # Safety
///
/// None beyond the op's C signature: `_uctx` is not dereferenced.
unsafe extern "C" fn disassociate_ucontext(_uctx: *mut b::ib_ucontext) {}

/// # Safety
///
/// Called by ib_core once per device from `ib_register_device`, with `ib` an `IbDev<T>`
/// whose driver state is initialised (the ops are only installed after that).
unsafe extern "C" fn enable_driver<T: IbDriver>(ib: *mut b::ib_device) -> c_int {
    // SAFETY: called once the registered device is visible.
    let dev = unsafe { IbDev::<T>::from_raw(ib) };
    from_result(|| T::enable(dev).map(|()| 0))
}

/// # Safety
///
/// Called by ib_core exactly once, from `ib_dealloc_device`, as the last op before `ib` is
/// freed; `ib` is an `IbDev<T>` whose driver state was initialised before the ops were
/// installed, and nothing touches that state afterwards.
unsafe extern "C" fn dealloc_driver<T: IbDriver>(ib: *mut b::ib_device) {
    // SAFETY: ib_core calls this exactly once, as the last op before freeing the memory,
    // and the ops (hence this call) are only installed after the state was initialised.
    unsafe { core::ptr::drop_in_place(addr_of_mut!((*ib.cast::<IbDev<T>>()).data)) }
}

// ---- verbs trampolines ----

type PdShell<T> = Shell<b::ib_pd, <T as IbDriver>::Pd>;
type CqShell<T> = Shell<b::ib_cq, <T as IbDriver>::Cq>;
type QpShell<T> = Shell<b::ib_qp, <T as IbDriver>::Qp>;
type AhShell<T> = Shell<b::ib_ah, <T as IbDriver>::Ah>;
type SrqShell<T> = Shell<b::ib_srq, <T as IbDriver>::Srq>;
type MwShell<T> = Shell<b::ib_mw, <T as IbDriver>::Mw>;

fn errno(e: Error) -> c_int {
    e.to_errno()
}

/// # Safety
///
/// Called by ib_core with `pd` a freshly zero-allocated `PdShell<T>` (our `size_ib_pd`)
/// whose `device` is one of our registered devices; no one else can see the PD yet.
unsafe extern "C" fn alloc_pd<T: IbDriver>(pd: *mut b::ib_pd, _udata: *mut b::ib_udata) -> c_int {
    // SAFETY: ib_core passes a zeroed PD shell of our size on one of our devices.
    let dev = unsafe { IbDev::<T>::from_raw((*pd).device) };
    match T::alloc_pd(dev) {
        // SAFETY: the PD is not visible to anyone else yet.
        Ok(p) => unsafe { PdShell::<T>::set(pd, Some(p)).map_or(0, |_| 0) },
        Err(e) => errno(e),
    }
}

/// # Safety
///
/// Called by ib_core with `pd` a PD shell of ours on one of our devices; ib_core serialises
/// the call against every other use of the PD and frees the shell afterwards.
unsafe extern "C" fn dealloc_pd<T: IbDriver>(pd: *mut b::ib_pd, _udata: *mut b::ib_udata) -> c_int {
    // SAFETY: ib_core serialises destroy against every other use of the PD.
    let dev = unsafe { IbDev::<T>::from_raw((*pd).device) };
    // SAFETY: as above.
    if let Some(p) = unsafe { PdShell::<T>::set(pd, None) } {
        T::dealloc_pd(dev, p);
    }
    0
}

/// The `ib_mr` ib_core gets for a driver MR just made (`made`), with its region; on
/// failure the MR is deregistered again and the error returned as an error pointer.
fn mr_shell<T: IbDriver>(
    dev: &IbDev<T>,
    made: Result<(Arc<T::Mr>, u32)>,
    iova: u64,
    len: u64,
) -> *mut b::ib_mr {
    let fail = |e: Error| -> *mut b::ib_mr { kernel::error::Error::to_ptr(e) };
    match made {
        Ok((mr, key)) => match MrShell::alloc(mr.clone(), key, key, iova, len) {
            Ok(m) => m,
            Err(e) => {
                let _ = T::dereg_mr(dev, mr);
                fail(e)
            }
        },
        Err(e) => fail(e),
    }
}

/// # Safety
///
/// Called by ib_core in the registering process's context with `pd` a live PD shell of
/// ours on one of our devices; `dmah` is NULL or valid (only tested for NULL).
unsafe extern "C" fn reg_user_mr<T: IbDriver>(
    pd: *mut b::ib_pd,
    start: u64,
    len: u64,
    iova: u64,
    access: c_int,
    dmah: *mut b::ib_dmah,
    _udata: *mut b::ib_udata,
) -> *mut b::ib_mr {
    let fail = |e: Error| -> *mut b::ib_mr { kernel::error::Error::to_ptr(e) };
    if !dmah.is_null() {
        return fail(EOPNOTSUPP);
    }
    // SAFETY: a live PD of ours.
    let (dev, shell) = unsafe {
        (
            IbDev::<T>::from_raw((*pd).device),
            PdShell::<T>::from_raw(pd),
        )
    };
    let Some(p) = shell.data() else {
        return fail(EINVAL);
    };
    mr_shell::<T>(
        dev,
        T::reg_user_mr(dev, p, start, len, iova, access),
        iova,
        len,
    )
}

/// # Safety
///
/// Called by ib_core with `mr` an `MrShell<T::Mr>` returned by our `reg_user_mr` or
/// `get_dma_mr`; ib_core never uses `mr` again after this call.
unsafe extern "C" fn dereg_mr<T: IbDriver>(mr: *mut b::ib_mr, _udata: *mut b::ib_udata) -> c_int {
    // SAFETY: the MR was allocated by `reg_user_mr` on one of our devices.
    let (dev, data) = unsafe {
        (
            IbDev::<T>::from_raw((*mr).device),
            MrShell::<T::Mr>::data_of(mr).clone(),
        )
    };
    match T::dereg_mr(dev, data) {
        Ok(()) => {
            // SAFETY: deregistered; ib_core never uses the MR after a successful dereg.
            drop(unsafe { MrShell::<T::Mr>::free(mr) });
            0
        }
        // (Refused, e.g. while memory windows are bound to it: the MR stays.)
        Err(e) => errno(e),
    }
}

/// # Safety
///
/// Called by ib_core (`ALLOC_MW`) with `mw` a zeroed `MwShell<T>` whose device and PD are
/// ours and that lives until `dealloc_mw`.
unsafe extern "C" fn alloc_mw<T: IbDriver>(mw: *mut b::ib_mw, _udata: *mut b::ib_udata) -> c_int {
    // SAFETY: a zeroed MW shell with its core fields (device, pd, type) filled in.
    let (dev, pd, ty) = unsafe {
        (
            IbDev::<T>::from_raw((*mw).device),
            PdShell::<T>::from_raw((*mw).pd).data(),
            (*mw).type_,
        )
    };
    let Some(pd) = pd else {
        return EINVAL.to_errno();
    };
    let type2 = match ty {
        b::ib_mw_type_IB_MW_TYPE_1 => false,
        b::ib_mw_type_IB_MW_TYPE_2 => true,
        _ => return EOPNOTSUPP.to_errno(),
    };
    match T::alloc_mw(dev, pd, type2) {
        Ok((w, rkey)) => {
            // SAFETY: not visible yet.
            unsafe {
                (*mw).rkey = rkey;
                MwShell::<T>::set(mw, Some(w));
            }
            0
        }
        Err(e) => errno(e),
    }
}

/// # Safety
///
/// Called by ib_core with `mw` a live MW shell of ours that no other op uses any more;
/// ib_core frees the shell afterwards.
unsafe extern "C" fn dealloc_mw<T: IbDriver>(mw: *mut b::ib_mw) -> c_int {
    // SAFETY: live MW of ours; ib_core frees the shell afterwards.
    let (dev, w) = unsafe {
        (
            IbDev::<T>::from_raw((*mw).device),
            MwShell::<T>::set(mw, None),
        )
    };
    if let Some(w) = w {
        T::dealloc_mw(dev, w);
    }
    0
}

/// # Safety
///
/// Called by ib_core with `cq` a zeroed `CqShell<T>` whose `device` is ours and that lives
/// until `destroy_cq`; `attr` is valid for the call; `attrs` is NULL (kernel consumer) or
/// a uverbs bundle whose first member is the driver udata.
unsafe extern "C" fn create_cq<T: IbDriver>(
    cq: *mut b::ib_cq,
    attr: *const b::ib_cq_init_attr,
    attrs: *mut b::uverbs_attr_bundle,
) -> c_int {
    // SAFETY: a zeroed CQ shell on one of our devices; `attr` is valid for the call.
    let (dev, attr) = unsafe { (IbDev::<T>::from_raw((*cq).device), &*attr) };
    // SAFETY: for user calls `driver_udata` is the bundle's first member (offset 0, which
    // C relies on the same way); kernel callers pass a NULL bundle.
    let udata = unsafe { Udata::from_raw(attrs.cast::<b::ib_udata>()) };
    // SAFETY: the CQ shell lives until destroy_cq, which marks the driver CQ dead first.
    let Some(handle) = (unsafe { CqHandle::new(cq) }) else {
        return EINVAL.to_errno();
    };
    match T::create_cq(dev, attr.cqe, attr.flags, handle, udata.as_ref()) {
        Ok((c, cap)) => {
            // SAFETY: not visible yet.
            unsafe {
                (*cq).cqe = cap as i32;
                CqShell::<T>::set(cq, Some(c));
            }
            0
        }
        Err(e) => errno(e),
    }
}

/// # Safety
///
/// Called by ib_core with `cq` a live CQ shell of ours, serialised against every other op
/// on it; after a successful return ib_core frees the shell.
unsafe extern "C" fn destroy_cq<T: IbDriver>(cq: *mut b::ib_cq, _udata: *mut b::ib_udata) -> c_int {
    // SAFETY: live CQ shell of ours.
    let (dev, shell) = unsafe {
        (
            IbDev::<T>::from_raw((*cq).device),
            CqShell::<T>::from_raw(cq),
        )
    };
    if let Some(c) = shell.data() {
        if let Err(e) = T::destroy_cq(dev, c) {
            return errno(e);
        }
    }
    // SAFETY: destroy succeeded; ib_core frees the shell next.
    drop(unsafe { CqShell::<T>::set(cq, None) });
    0
}

/// # Safety
///
/// Called by uverbs with `cq` a live CQ shell of ours, serialised with the CQ's other
/// verbs; `udata` is NULL or valid for the call.
unsafe extern "C" fn resize_user_cq<T: IbDriver>(
    cq: *mut b::ib_cq,
    cqe: c_uint,
    udata: *mut b::ib_udata,
) -> c_int {
    // SAFETY: live CQ of ours; `udata` is the caller's (uverbs serialises this with the
    // CQ's other verbs; the provider holds its CQ lock across the call).
    let (shell, udata) = unsafe { (CqShell::<T>::from_raw(cq), Udata::from_raw(udata)) };
    let (Some(c), Some(u)) = (shell.data(), udata) else {
        return EINVAL.to_errno();
    };
    match T::resize_cq(c, cqe, &u) {
        Ok(cap) => {
            // SAFETY: ib_core reports `cqe` back to the caller after we return.
            unsafe { (*cq).cqe = cap as c_int };
            0
        }
        Err(e) => errno(e),
    }
}

/// # Safety
///
/// Called by ib_core (any context) with `cq` a live CQ shell of ours.
unsafe extern "C" fn req_notify_cq<T: IbDriver>(
    cq: *mut b::ib_cq,
    flags: b::ib_cq_notify_flags,
) -> c_int {
    // SAFETY: live CQ shell of ours.
    let shell = unsafe { CqShell::<T>::from_raw(cq) };
    shell.data().map_or(0, |c| T::req_notify_cq(c, flags))
}

/// # Safety
///
/// Called by ib_core with `qp` a zeroed `QpShell<T>` whose device and PD are ours and that
/// lives until `destroy_qp` returns; `init` is valid and exclusive for the call, its CQs and
/// SRQ are NULL or live objects of ours; `udata` is NULL or valid.
unsafe extern "C" fn create_qp<T: IbDriver>(
    qp: *mut b::ib_qp,
    init: *mut b::ib_qp_init_attr,
    udata: *mut b::ib_udata,
) -> c_int {
    // SAFETY: a zeroed QP shell with its core fields (device, pd, cqs) filled in.
    let (dev, init, udata) = unsafe {
        (
            IbDev::<T>::from_raw((*qp).device),
            &mut *init,
            Udata::from_raw(udata),
        )
    };
    // SAFETY: the PD and CQs are live objects of ours (ib_core holds usecnts on them).
    let (pd, scq, rcq) = unsafe {
        (
            PdShell::<T>::from_raw((*qp).pd).data().cloned(),
            (!init.send_cq.is_null())
                .then(|| CqShell::<T>::from_raw(init.send_cq).data().cloned())
                .flatten(),
            (!init.recv_cq.is_null())
                .then(|| CqShell::<T>::from_raw(init.recv_cq).data().cloned())
                .flatten(),
        )
    };
    let (Some(pd), Some(scq), Some(rcq)) = (pd, scq, rcq) else {
        return EINVAL.to_errno();
    };
    let srq = if init.srq.is_null() {
        None
    } else {
        // SAFETY: a live SRQ of ours (ib_core holds a usecnt on it).
        match unsafe { SrqShell::<T>::from_raw(init.srq) }.data() {
            Some(s) => Some(s.clone()),
            None => return EINVAL.to_errno(),
        }
    };
    // SAFETY: the shell lives until destroy_qp returns.
    let Some(handle) = (unsafe { QpHandle::new(qp) }) else {
        return EINVAL.to_errno();
    };
    match T::create_qp(dev, &pd, init, (scq, rcq), srq, handle, udata.as_ref()) {
        Ok((q, qpn)) => {
            // SAFETY: not visible yet.
            unsafe {
                (*qp).qp_num = qpn;
                QpShell::<T>::set(qp, Some(q));
            }
            0
        }
        Err(e) => errno(e),
    }
}

/// # Safety
///
/// Called by ib_core with `qp` a live QP shell of ours and `attr` valid for the call.
unsafe extern "C" fn modify_qp<T: IbDriver>(
    qp: *mut b::ib_qp,
    attr: *mut b::ib_qp_attr,
    mask: c_int,
    _udata: *mut b::ib_udata,
) -> c_int {
    // SAFETY: live QP of ours; `attr` valid for the call.
    let (dev, shell, attr) = unsafe {
        (
            IbDev::<T>::from_raw((*qp).device),
            QpShell::<T>::from_raw(qp),
            &*attr,
        )
    };
    match shell
        .data()
        .map(|q| T::modify_qp(dev, q, attr, mask as u32))
    {
        Some(Ok(())) => 0,
        Some(Err(e)) => errno(e),
        None => EINVAL.to_errno(),
    }
}

/// # Safety
///
/// Called by ib_core with `qp` a live QP shell of ours; `attr` and `init` are valid,
/// exclusive out pointers for the call.
unsafe extern "C" fn query_qp<T: IbDriver>(
    qp: *mut b::ib_qp,
    attr: *mut b::ib_qp_attr,
    _mask: c_int,
    init: *mut b::ib_qp_init_attr,
) -> c_int {
    // SAFETY: live QP of ours; out pointers valid.
    let (shell, attr, init) = unsafe { (QpShell::<T>::from_raw(qp), &mut *attr, &mut *init) };
    match shell.data().map(|q| T::query_qp(q, attr, init)) {
        Some(Ok(())) => 0,
        Some(Err(e)) => errno(e),
        None => EINVAL.to_errno(),
    }
}

/// # Safety
///
/// Called by ib_core with `qp` a live QP shell of ours, serialised against every other op
/// on it; ib_core frees the shell afterwards.
unsafe extern "C" fn destroy_qp<T: IbDriver>(qp: *mut b::ib_qp, _udata: *mut b::ib_udata) -> c_int {
    // SAFETY: live QP of ours; ib_core serialises destroy with every other op.
    let dev = unsafe { IbDev::<T>::from_raw((*qp).device) };
    // SAFETY: as above; afterwards ib_core frees the shell.
    if let Some(q) = unsafe { QpShell::<T>::set(qp, None) } {
        if let Err(e) = T::destroy_qp(dev, q) {
            return errno(e);
        }
    }
    0
}

/// # Safety
///
/// Called by ib_core with `qp` a live QP shell of ours; `wr` is NULL or a valid request
/// list whose UD address handles are live AHs of ours; `bad` is NULL or writable.
unsafe extern "C" fn post_send<T: IbDriver>(
    qp: *mut b::ib_qp,
    wr: *const b::ib_send_wr,
    bad: *mut *const b::ib_send_wr,
) -> c_int {
    // SAFETY: live QP of ours.
    let (shell, qp_type) = unsafe { (QpShell::<T>::from_raw(qp), (*qp).qp_type) };
    let Some(q) = shell.data() else {
        return EINVAL.to_errno();
    };
    // librxe rings the doorbell with an empty list; kernel consumers pass their requests.
    let mut cur = wr;
    while !cur.is_null() {
        // SAFETY: ib_core hands us the consumer's valid request list; an AH in a UD request
        // is a live AH of ours (the consumer holds it until the request completes).
        let r = unsafe {
            kernel_send_wr(cur, qp_type, |ah| {
                (!ah.is_null())
                    .then(|| AhShell::<T>::from_raw(ah).data().map(|a| T::ah_num(a)))
                    .flatten()
            })
        }
        .and_then(|w| T::post_send_kernel(q, &w));
        if let Err(e) = r {
            if !bad.is_null() {
                // SAFETY: the caller's out pointer.
                unsafe { *bad = cur };
            }
            let _ = T::post_send(q);
            return errno(e);
        }
        // SAFETY: as above.
        cur = unsafe { (*cur).next };
    }
    match T::post_send(q) {
        Ok(()) => 0,
        // Kernel requests queued before RTS wait for it, as on hardware.
        Err(_) if !wr.is_null() => 0,
        Err(e) => errno(e),
    }
}

/// Posts a consumer's receive request list one request at a time with `post`; on a
/// failure points `bad` at the failing request and returns its errno.
///
/// # Safety
///
/// `wr` is null or a valid `ib_recv_wr` list; `bad` is null or writable.
unsafe fn post_recv_list(
    wr: *const b::ib_recv_wr,
    bad: *mut *const b::ib_recv_wr,
    post: impl Fn(&RecvWqe) -> Result,
) -> c_int {
    let mut cur = wr;
    while !cur.is_null() {
        // SAFETY: the caller's valid request list.
        let r = unsafe { kernel_recv_wr(cur) }.and_then(|w| post(&w));
        if let Err(e) = r {
            if !bad.is_null() {
                // SAFETY: the caller's out pointer.
                unsafe { *bad = cur };
            }
            return errno(e);
        }
        // SAFETY: as above.
        cur = unsafe { (*cur).next };
    }
    0
}

/// # Safety
///
/// Called by ib_core with `qp` a live QP shell of ours; `wr` is NULL or a valid request
/// list and `bad` is NULL or writable.
unsafe extern "C" fn post_recv<T: IbDriver>(
    qp: *mut b::ib_qp,
    wr: *const b::ib_recv_wr,
    bad: *mut *const b::ib_recv_wr,
) -> c_int {
    // SAFETY: live QP of ours.
    let shell = unsafe { QpShell::<T>::from_raw(qp) };
    let Some(q) = shell.data() else {
        return EINVAL.to_errno();
    };
    // SAFETY: ib_core hands us the consumer's valid request list and out pointer.
    unsafe { post_recv_list(wr, bad, |w| T::post_recv_kernel(q, w)) }
}

/// # Safety
///
/// As [`post_recv`], with `srq` a live SRQ shell of ours.
unsafe extern "C" fn post_srq_recv<T: IbDriver>(
    srq: *mut b::ib_srq,
    wr: *const b::ib_recv_wr,
    bad: *mut *const b::ib_recv_wr,
) -> c_int {
    // SAFETY: live SRQ of ours.
    let shell = unsafe { SrqShell::<T>::from_raw(srq) };
    let Some(q) = shell.data() else {
        return EINVAL.to_errno();
    };
    // SAFETY: ib_core hands us the consumer's valid request list and out pointer.
    unsafe { post_recv_list(wr, bad, |w| T::post_srq_recv_kernel(q, w)) }
}

/// # Safety
///
/// Called by ib_core with `cq` a live CQ shell of ours and `wc` writable for `n` entries.
unsafe extern "C" fn poll_cq<T: IbDriver>(cq: *mut b::ib_cq, n: c_int, wc: *mut b::ib_wc) -> c_int {
    // SAFETY: live CQ of ours.
    let (dev, shell) = unsafe {
        (
            IbDev::<T>::from_raw((*cq).device),
            CqShell::<T>::from_raw(cq),
        )
    };
    let (Some(c), Ok(max)) = (shell.data(), usize::try_from(n)) else {
        return 0;
    };
    let got = T::poll_cq(dev, c, max, &mut |i, cqe, qp| {
        if i < max {
            // SAFETY: the caller's array has `n` entries.
            fill_wc(unsafe { &mut *wc.add(i) }, cqe, qp);
        }
    });
    got.min(max) as c_int
}

/// # Safety
///
/// Called by ib_core for a kernel consumer with `pd` a live PD shell of ours.
unsafe extern "C" fn get_dma_mr<T: IbDriver>(pd: *mut b::ib_pd, access: c_int) -> *mut b::ib_mr {
    let fail = |e: Error| -> *mut b::ib_mr { kernel::error::Error::to_ptr(e) };
    // SAFETY: a live PD of ours.
    let (dev, shell) = unsafe {
        (
            IbDev::<T>::from_raw((*pd).device),
            PdShell::<T>::from_raw(pd),
        )
    };
    let Some(p) = shell.data() else {
        return fail(EINVAL);
    };
    mr_shell::<T>(dev, T::get_dma_mr(dev, p, access), 0, u64::MAX)
}

/// # Safety
///
/// Called by ib_core (`ib_alloc_mr`, kernel consumers only) with `pd` a live PD shell of
/// ours.
unsafe extern "C" fn alloc_mr<T: IbDriver>(
    pd: *mut b::ib_pd,
    mr_type: b::ib_mr_type,
    max_num_sg: u32,
) -> *mut b::ib_mr {
    let fail = |e: Error| -> *mut b::ib_mr { kernel::error::Error::to_ptr(e) };
    if mr_type != b::ib_mr_type_IB_MR_TYPE_MEM_REG {
        return fail(EINVAL);
    }
    // SAFETY: a live PD of ours.
    let (dev, shell) = unsafe {
        (
            IbDev::<T>::from_raw((*pd).device),
            PdShell::<T>::from_raw(pd),
        )
    };
    let Some(p) = shell.data() else {
        return fail(EINVAL);
    };
    mr_shell::<T>(dev, T::alloc_mr(dev, p, max_num_sg), 0, 0)
}

/// `ib_sg_to_pages`' callback: the next page of the MR being mapped.
///
/// # Safety
///
/// Called by `ib_sg_to_pages` from [`map_mr_sg`] with the `mr` passed there.
unsafe extern "C" fn set_page<T: IbDriver>(mr: *mut b::ib_mr, addr: u64) -> c_int {
    // SAFETY: `map_mr_sg`'s MR, an `MrShell` from `alloc_mr`.
    let data = unsafe { MrShell::<T::Mr>::data_of(mr) };
    match T::map_mr_page(data, addr) {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}

/// # Safety
///
/// Called by ib_core (`ib_map_mr_sg`) with `mr` an `MrShell<T::Mr>` of ours, live for the
/// call, whose `page_size` ib_core just set, and `sg` a DMA-mapped list of `sg_nents`
/// entries; `sg_offset` is NULL or valid.
unsafe extern "C" fn map_mr_sg<T: IbDriver>(
    mr: *mut b::ib_mr,
    sg: *mut b::scatterlist,
    sg_nents: c_int,
    sg_offset: *mut c_uint,
) -> c_int {
    // SAFETY: an MR of ours, live for the call.
    let (data, page_size) = unsafe { (MrShell::<T::Mr>::data_of(mr), (*mr).page_size) };
    if let Err(e) = T::map_mr_begin(data, page_size) {
        return errno(e);
    }
    // SAFETY: the caller's MR and scatter list; `set_page` only touches our MR state.
    unsafe { b::ib_sg_to_pages(mr, sg, sg_nents, sg_offset, Some(set_page::<T>)) }
}

/// Response tail of CREATE_AH for librxe (`struct rxe_create_ah_resp`).
const AH_RESP_LEN: usize = 8;

/// # Safety
///
/// Called by ib_core (maybe atomic unless `RDMA_CREATE_AH_SLEEPABLE`) with `ah` a zeroed
/// `AhShell<T>` whose device and PD are ours; `init` and its `ah_attr` are valid for the
/// call; `udata` is NULL or valid.
unsafe extern "C" fn create_ah<T: IbDriver>(
    ah: *mut b::ib_ah,
    init: *mut b::rdma_ah_init_attr,
    udata: *mut b::ib_udata,
) -> c_int {
    // SAFETY: a zeroed AH shell whose core fields (device, pd, sgid_attr) are filled in;
    // `init` and its `ah_attr` are valid for the call.
    let (dev, init, udata) = unsafe {
        (
            IbDev::<T>::from_raw((*ah).device),
            &*init,
            Udata::from_raw(udata),
        )
    };
    // SAFETY: as above.
    let (attr, pd) = unsafe { (&*init.ah_attr, PdShell::<T>::from_raw((*ah).pd).data()) };
    let (Some(pd), Some(av)) = (pd, Av::from_attr(attr)) else {
        return EINVAL.to_errno();
    };
    let sleepable = init.flags & b::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE != 0;
    match T::create_ah(dev, pd, &av, sleepable) {
        Ok((a, num)) => {
            if let Some(u) = udata.as_ref() {
                if u.out_len() >= AH_RESP_LEN {
                    let mut resp = [0u8; AH_RESP_LEN];
                    resp[..4].copy_from_slice(&num.to_ne_bytes());
                    if let Err(e) = u.respond(&resp) {
                        T::destroy_ah(dev, a);
                        return errno(e);
                    }
                }
            }
            // SAFETY: not visible yet.
            unsafe { AhShell::<T>::set(ah, Some(a)) };
            0
        }
        Err(e) => errno(e),
    }
}

/// # Safety
///
/// Called by ib_core with `ah` a live AH shell of ours that no other op uses any more;
/// ib_core frees the shell afterwards.
unsafe extern "C" fn destroy_ah<T: IbDriver>(ah: *mut b::ib_ah, _flags: u32) -> c_int {
    // SAFETY: live AH of ours; ib_core frees the shell afterwards.
    let (dev, a) = unsafe {
        (
            IbDev::<T>::from_raw((*ah).device),
            AhShell::<T>::set(ah, None),
        )
    };
    if let Some(a) = a {
        T::destroy_ah(dev, a);
    }
    0
}

/// # Safety
///
/// Called by ib_core with `srq` a zeroed `SrqShell<T>` whose device and PD are ours and that
/// lives until `destroy_srq`; `init` is valid and exclusive for the call; `udata` is NULL or
/// valid.
unsafe extern "C" fn create_srq<T: IbDriver>(
    srq: *mut b::ib_srq,
    init: *mut b::ib_srq_init_attr,
    udata: *mut b::ib_udata,
) -> c_int {
    // SAFETY: a zeroed SRQ shell with device and pd filled in; `init` valid for the call.
    let (dev, init, udata) = unsafe {
        (
            IbDev::<T>::from_raw((*srq).device),
            &mut *init,
            Udata::from_raw(udata),
        )
    };
    if init.srq_type != b::ib_srq_type_IB_SRQT_BASIC {
        return EOPNOTSUPP.to_errno();
    }
    // SAFETY: a live PD of ours.
    let Some(pd) = (unsafe { PdShell::<T>::from_raw((*srq).pd) }).data() else {
        return EINVAL.to_errno();
    };
    // SAFETY: the SRQ shell lives until destroy_srq, which stops the driver's users first.
    let Some(handle) = (unsafe { SrqHandle::new(srq) }) else {
        return EINVAL.to_errno();
    };
    match T::create_srq(dev, pd, &mut init.attr, handle, udata.as_ref()) {
        Ok(q) => {
            // SAFETY: not visible yet.
            unsafe { SrqShell::<T>::set(srq, Some(q)) };
            0
        }
        Err(e) => errno(e),
    }
}

/// # Safety
///
/// Called by ib_core with `srq` a live SRQ shell of ours and `attr` valid for the call.
unsafe extern "C" fn modify_srq<T: IbDriver>(
    srq: *mut b::ib_srq,
    attr: *mut b::ib_srq_attr,
    mask: b::ib_srq_attr_mask,
    _udata: *mut b::ib_udata,
) -> c_int {
    // SAFETY: live SRQ of ours; `attr` valid for the call.
    let (shell, attr) = unsafe { (SrqShell::<T>::from_raw(srq), &*attr) };
    match shell.data().map(|q| T::modify_srq(q, attr, mask)) {
        Some(Ok(())) => 0,
        Some(Err(e)) => errno(e),
        None => EINVAL.to_errno(),
    }
}

/// # Safety
///
/// Called by ib_core with `srq` a live SRQ shell of ours and `attr` a valid, exclusive out
/// pointer for the call.
unsafe extern "C" fn query_srq<T: IbDriver>(
    srq: *mut b::ib_srq,
    attr: *mut b::ib_srq_attr,
) -> c_int {
    // SAFETY: live SRQ of ours; `attr` valid for the call.
    let (shell, attr) = unsafe { (SrqShell::<T>::from_raw(srq), &mut *attr) };
    match shell.data() {
        Some(q) => {
            T::query_srq(q, attr);
            0
        }
        None => EINVAL.to_errno(),
    }
}

/// # Safety
///
/// Called by ib_core with `srq` a live SRQ shell of ours that no QP uses and no other op
/// touches any more; ib_core frees the shell afterwards.
unsafe extern "C" fn destroy_srq<T: IbDriver>(
    srq: *mut b::ib_srq,
    _udata: *mut b::ib_udata,
) -> c_int {
    // SAFETY: live SRQ of ours; ib_core frees the shell afterwards (no QP uses it).
    let (dev, q) = unsafe {
        (
            IbDev::<T>::from_raw((*srq).device),
            SrqShell::<T>::set(srq, None),
        )
    };
    if let Some(q) = q {
        T::destroy_srq(dev, q);
    }
    0
}

/// Most counters a driver may expose (a driver checks its list against it at build time:
/// a longer list would lose its tail from `rdma statistic` without a word).
pub(crate) const MAX_COUNTERS: usize = 128;

struct StatDescs(Opaque<[b::rdma_stat_desc; MAX_COUNTERS]>);
// SAFETY: written once in `LinkRegistration::register` (module init) before any device
// exists; read-only afterwards.
unsafe impl Sync for StatDescs {}
static STAT_DESCS: StatDescs = StatDescs(Opaque::zeroed());

fn stat_count<T: IbDriver>() -> usize {
    T::COUNTERS.len().min(MAX_COUNTERS)
}

/// # Safety
///
/// Called by ib_core for a device of ours, which exists only after
/// [`LinkRegistration::register`] filled `STAT_DESCS`; the arguments are not dereferenced.
unsafe extern "C" fn alloc_hw_port_stats<T: IbDriver>(
    _ib: *mut b::ib_device,
    _port: u32,
) -> *mut b::rdma_hw_stats {
    // SAFETY: the descriptor table is static and filled at module init; ib_core frees the
    // stats struct with the device.
    unsafe {
        b::rdma_alloc_hw_stats_struct(
            STAT_DESCS.0.get().cast(),
            stat_count::<T>() as c_int,
            b::RDMA_HW_STATS_DEFAULT_LIFESPAN as usize,
        )
    }
}

/// # Safety
///
/// Called by ib_core with `ib` a registered device of ours and `stats` allocated by
/// [`alloc_hw_port_stats`] for it (room for `stat_count::<T>()` counters).
unsafe extern "C" fn get_hw_stats<T: IbDriver>(
    ib: *mut b::ib_device,
    stats: *mut b::rdma_hw_stats,
    _port: u32,
    _index: c_int,
) -> c_int {
    // SAFETY: one of our registered devices.
    let dev = unsafe { IbDev::<T>::from_raw(ib) };
    let mut vals = [0u64; MAX_COUNTERS];
    let n = stat_count::<T>();
    T::counters(dev, vals.get_mut(..n).unwrap_or(&mut []));
    for (i, v) in vals.iter().take(n).enumerate() {
        // SAFETY: `stats` was allocated by `alloc_hw_port_stats` with `n` counters.
        unsafe { b::rrxe_hw_stats_set(stats, i as c_int, *v) };
    }
    n as c_int
}

/// `ops.process_mad`: the device's performance-management agent (ib_core asks it for the
/// port counters in sysfs); every other MAD goes on to the MAD layer's agents.
///
/// # Safety
///
/// Called by the MAD layer or sysfs with `ib` a registered device of ours, `in_mad` a
/// readable MAD and `out_mad` a writable MAD of at least `*out_mad_size` bytes
/// (`out_mad_size` valid); the other pointers are not used.
unsafe extern "C" fn process_mad<T: IbDriver>(
    ib: *mut b::ib_device,
    _flags: c_int,
    port: u32,
    _in_wc: *const b::ib_wc,
    _in_grh: *const b::ib_grh,
    in_mad: *const b::ib_mad,
    out_mad: *mut b::ib_mad,
    out_mad_size: *mut usize,
    _out_mad_pkey_index: *mut u16,
) -> c_int {
    const PASS: c_int = b::ib_mad_result_IB_MAD_RESULT_SUCCESS as c_int;
    if port != 1 || in_mad.is_null() || out_mad.is_null() || out_mad_size.is_null() {
        return PASS;
    }
    // SAFETY: per the contract; a MAD is `MAD_LEN` bytes (checked against the out size).
    let (dev, inp, room) = unsafe {
        (
            IbDev::<T>::from_raw(ib),
            &*in_mad.cast::<[u8; MAD_LEN]>(),
            *out_mad_size,
        )
    };
    if room < MAD_LEN {
        return PASS;
    }
    let mut out = [0u8; MAD_LEN];
    match pma::answer(inp, &mut out, &T::port_counters(dev)) {
        pma::Answer::Pass => PASS,
        pma::Answer::Reply => {
            // SAFETY: `out_mad` is writable for `room >= MAD_LEN` bytes.
            unsafe {
                core::ptr::copy_nonoverlapping(out.as_ptr(), out_mad.cast::<u8>(), MAD_LEN);
                *out_mad_size = MAD_LEN;
            }
            (b::ib_mad_result_IB_MAD_RESULT_SUCCESS | b::ib_mad_result_IB_MAD_RESULT_REPLY) as c_int
        }
    }
}

/// The netlink message a resource dump is written into (`fill_res_qp_entry`).
pub(crate) struct ResAttrs<'a> {
    msg: *mut b::sk_buff,
    _msg: PhantomData<&'a mut b::sk_buff>,
}

impl ResAttrs<'_> {
    /// Adds the driver attribute `name` = `value`.
    pub(crate) fn put_u64(&mut self, name: &CStr, value: u64) -> Result {
        // SAFETY: `msg` is the message ib_core passed to `fill_res_qp_entry`, alive and
        // exclusively ours for this call (the lifetime of `self`); `name` is a C string.
        let r = unsafe { b::rdma_nl_put_driver_u64(self.msg, name.as_char_ptr(), value) };
        if r == 0 {
            Ok(())
        } else {
            Err(EMSGSIZE)
        }
    }
}

/// # Safety
///
/// Called by ib_core (nldev) with `msg` the netlink message being built and `qp` a live
/// QP shell of ours.
unsafe extern "C" fn fill_res_qp_entry<T: IbDriver>(
    msg: *mut b::sk_buff,
    qp: *mut b::ib_qp,
) -> c_int {
    // SAFETY: live QP of ours (ib_core holds a restrack reference during the dump).
    let shell = unsafe { QpShell::<T>::from_raw(qp) };
    let Some(q) = shell.data() else {
        return 0;
    };
    // The driver's attributes go in one nested table (as iproute2's `rdma -dd` reads them).
    // SAFETY: `msg` is the live message ib_core is building.
    let nest = unsafe { b::rrxe_nla_nest_driver(msg) };
    if nest.is_null() {
        return EMSGSIZE.to_errno();
    }
    let mut out = ResAttrs {
        msg,
        _msg: PhantomData,
    };
    let r = T::qp_res_attrs(q, &mut out);
    // SAFETY: `nest` was opened in `msg` above and nothing else closed it.
    unsafe { b::rrxe_nla_nest_end(msg, nest, r.is_ok()) };
    match r {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}

/// The ops table of driver `T`.
struct Ops<T>(PhantomData<T>);

impl<T: IbDriver> Ops<T> {
    const VTABLE: b::ib_device_ops = b::ib_device_ops {
        owner: kernel::module::this_module::<crate::LocalModule>().as_ptr(),
        driver_id: DRIVER_ID,
        uverbs_abi_ver: UVERBS_ABI_VER,
        query_device: Some(query_device::<T>),
        query_port: Some(query_port::<T>),
        get_port_immutable: Some(get_port_immutable::<T>),
        get_link_layer: Some(get_link_layer),
        query_pkey: Some(query_pkey::<T>),
        alloc_ucontext: Some(alloc_ucontext),
        dealloc_ucontext: Some(dealloc_ucontext),
        disassociate_ucontext: Some(disassociate_ucontext),
        enable_driver: Some(enable_driver::<T>),
        dealloc_driver: Some(dealloc_driver::<T>),
        size_ib_ucontext: size_of::<b::ib_ucontext>(),
        alloc_pd: Some(alloc_pd::<T>),
        dealloc_pd: Some(dealloc_pd::<T>),
        size_ib_pd: size_of::<PdShell<T>>(),
        reg_user_mr: Some(reg_user_mr::<T>),
        dereg_mr: Some(dereg_mr::<T>),
        create_cq: Some(create_cq::<T>),
        destroy_cq: Some(destroy_cq::<T>),
        req_notify_cq: Some(req_notify_cq::<T>),
        resize_user_cq: Some(resize_user_cq::<T>),
        size_ib_cq: size_of::<CqShell<T>>(),
        create_qp: Some(create_qp::<T>),
        modify_qp: Some(modify_qp::<T>),
        query_qp: Some(query_qp::<T>),
        destroy_qp: Some(destroy_qp::<T>),
        post_send: Some(post_send::<T>),
        post_recv: Some(post_recv::<T>),
        poll_cq: Some(poll_cq::<T>),
        get_dma_mr: Some(get_dma_mr::<T>),
        alloc_mr: Some(alloc_mr::<T>),
        alloc_mw: Some(alloc_mw::<T>),
        dealloc_mw: Some(dealloc_mw::<T>),
        size_ib_mw: size_of::<MwShell<T>>(),
        map_mr_sg: Some(map_mr_sg::<T>),
        size_ib_qp: size_of::<QpShell<T>>(),
        create_ah: Some(create_ah::<T>),
        create_user_ah: Some(create_ah::<T>),
        destroy_ah: Some(destroy_ah::<T>),
        size_ib_ah: size_of::<AhShell<T>>(),
        create_srq: Some(create_srq::<T>),
        modify_srq: Some(modify_srq::<T>),
        query_srq: Some(query_srq::<T>),
        destroy_srq: Some(destroy_srq::<T>),
        post_srq_recv: Some(post_srq_recv::<T>),
        size_ib_srq: size_of::<SrqShell<T>>(),
        alloc_hw_port_stats: Some(alloc_hw_port_stats::<T>),
        get_hw_stats: Some(get_hw_stats::<T>),
        fill_res_qp_entry: Some(fill_res_qp_entry::<T>),
        process_mad: Some(process_mad::<T>),
        mmap: Some(verbs::mmap),
        mmap_free: Some(verbs::mmap_free),
        ..pin_init::zeroed()
    };

    const fn build() -> &'static b::ib_device_ops {
        &Self::VTABLE
    }
}

// ---- rdma link type ----

struct LinkOpsCell(Opaque<b::rdma_link_ops>);
// SAFETY: written only in `LinkRegistration::register` before it is published to ib_core,
// which then owns the list linkage under its own lock.
unsafe impl Sync for LinkOpsCell {}

/// rrxe registers exactly one link type, so its `rdma_link_ops` is a static (a fixed
/// address for ib_core's list and for every device's `link_ops`).
static LINK_OPS: LinkOpsCell = LinkOpsCell(Opaque::zeroed());

/// # Safety
///
/// Called by ib_core for `rdma link add ... type rrxe` with `name` NUL-terminated and
/// `ndev` a net device it holds a reference on, both for the duration of the call.
unsafe extern "C" fn newlink<T: IbDriver>(name: *const c_char, ndev: *mut b::net_device) -> c_int {
    // SAFETY: ib_core passes a NUL-terminated name and a net device it holds a reference on.
    let (name, ndev) = unsafe { (CStr::from_char_ptr(name), NetDevice::from_raw(ndev)) };
    from_result(|| T::newlink(name, ndev).map(|()| 0))
}

/// # Safety
///
/// Called by ib_core for `rdma link delete` on a device whose `link_ops` is our
/// `LINK_OPS`, so `ib` is a registered `IbDev<T>`; ib_core holds a reference for the call.
unsafe extern "C" fn dellink<T: IbDriver>(ib: *mut b::ib_device) -> c_int {
    // SAFETY: only our devices have `link_ops` pointing here; ib_core holds a reference.
    let dev = unsafe { IbDev::<T>::from_raw(ib) };
    from_result(|| T::dellink(dev).map(|()| 0))
}

/// The registered link type; unregistered on drop.
pub(crate) struct LinkRegistration(());

impl LinkRegistration {
    /// Registers link type `ty` for driver `T` (module init, once).
    pub(crate) fn register<T: IbDriver>(ty: &'static CStr) -> Self {
        // SAFETY: module init runs once, before any device (and so any stats reader) exists.
        unsafe {
            let d = &mut *STAT_DESCS.0.get();
            for (desc, name) in d.iter_mut().zip(T::COUNTERS.iter()) {
                desc.name = name.as_char_ptr();
            }
        }
        // SAFETY: module init runs once, before ib_core can see the struct; afterwards it
        // is only touched by ib_core under its link-ops lock.
        unsafe {
            *LINK_OPS.0.get() = b::rdma_link_ops {
                type_: ty.as_char_ptr(),
                newlink: Some(newlink::<T>),
                dellink: Some(dellink::<T>),
                ..pin_init::zeroed()
            };
            b::rdma_link_register(LINK_OPS.0.get());
        }
        LinkRegistration(())
    }
}

impl Drop for LinkRegistration {
    fn drop(&mut self) {
        // SAFETY: registered in `register`.
        unsafe { b::rdma_link_unregister(LINK_OPS.0.get()) }
    }
}
