// SPDX-License-Identifier: GPL-2.0
//! rrxe devices: creation on `rdma link add`, removal on `rdma link delete` or when the
//! net device goes away, the device/port queries userspace sees in `ibv_devinfo`, the
//! verbs ib_core calls, and the device's QP table.

use super::limits::{self, QP_TABLE};
use super::qp::Qp;
use super::res::{access, Ah, AhPath, Cq, Mr, Mw, Pd, Srq};
use super::shared::{filled, DevShared};
use super::stats::Stats;
use super::tx::Path;
use crate::kabi::ib::{DevParams, IbDev, IbDriver, ResAttrs, MAX_COUNTERS};
use crate::kabi::lock::{new_spinlock_irq, SpinLockIrq};
use crate::kabi::mem::UmemCounts;
use crate::kabi::netdev::{NetDevice, NetdevEvent, NetdevEvents};
use crate::kabi::num_possible_cpus;
use crate::kabi::odp;
use crate::kabi::udp::{SocketRef, UdpSockets};
use crate::kabi::verbs::{Av, CqHandle, QpHandle, SrqHandle, Udata};
use crate::proto::pma::PortCounters;
use crate::proto::port::{eui64_from_mac, ib_mtu_for_netdev, IB_MTU_4096};
use crate::proto::rc::DEFAULT_PKEY;
use crate::proto::uapi::{Cqe, RecvWqe, SendWqe};
use crate::sys as b;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

// Every counter reaches `rdma statistic`.
const _: () = assert!(Stats::NAMES.len() <= MAX_COUNTERS);

/// First QPN handed out (0 and 1 are the special QPs; rxe starts at 16).
const MIN_QPN: u32 = 16;
/// The GSI QP (ib_core's MAD layer, used by the connection manager).
const GSI_QPN: u32 = 1;

/// Table slot of a QPN: 0 for the GSI QP, then one per QPN from [`MIN_QPN`].
fn qp_slot(qpn: u32) -> Option<usize> {
    if qpn == GSI_QPN {
        return Some(0);
    }
    let i = qpn.checked_sub(MIN_QPN)? as usize + 1;
    (i <= QP_TABLE).then_some(i)
}

/// Device limits reported by `query_device`. Only what rrxe implements is advertised:
/// no multicast, no implicit on-demand paging.
mod caps {
    use super::super::limits;

    pub(super) const VENDOR_ID: u32 = 0xff_ffff;
    pub(super) const MAX_QP: u32 = limits::QP_TABLE as u32;
    pub(super) const MAX_QP_WR: u32 = limits::MAX_QP_WR;
    pub(super) const MAX_SGE: u32 = limits::MAX_SGE;
    pub(super) const MAX_CQ: u32 = 1 << 16;
    pub(super) const MAX_CQE: u32 = limits::MAX_CQE;
    pub(super) const MAX_MR: u32 = limits::MR_TABLE as u32 - 1;
    pub(super) const MAX_MW: u32 = limits::MW_TABLE as u32;
    pub(super) const MAX_PD: u32 = 1 << 16;
    pub(super) const MAX_QP_RD_ATOM: u32 = limits::MAX_QP_RD_ATOM;
    pub(super) const MAX_RES_RD_ATOM: u32 = 1 << 16;
    pub(super) const MAX_AH: u32 = limits::AH_TABLE as u32 - 1;
    pub(super) const MAX_SRQ: u32 = 1 << 16;
    pub(super) const MAX_SRQ_WR: u32 = limits::MAX_QP_WR;
    pub(super) const MAX_SRQ_SGE: u32 = limits::MAX_SGE;
    pub(super) const MAX_PKEYS: u16 = 1;
    pub(super) const LOCAL_CA_ACK_DELAY: u8 = 15;
    pub(super) const GID_TBL_LEN: i32 = 1024;
    pub(super) const MAX_MSG_SZ: u32 = 1 << 31;
    pub(super) const MAX_FAST_REG_PAGES: u32 = limits::MAX_FAST_REG_PAGES;
}

/// The rrxe driver type (ib_core callbacks, netdev events).
pub(crate) struct Rrxe;

/// The QPs of a device by number.
struct QpTable {
    qps: KVec<Option<Arc<Qp>>>,
    used: KVec<bool>,
    /// Where the search for a free QPN starts: QPNs are handed out cyclically, as
    /// rdma_rxe does, so that a destroyed QP's number is not reused at once (its peer's
    /// late packets, and its `Closed` record, would then meet a new connection).
    next: usize,
}

/// Per-device state.
#[pin_data]
pub(crate) struct Device {
    /// Hardware address of the bound net device at creation (GUID source).
    mac: [u8; 6],
    shared: Arc<DevShared>,
    #[pin]
    qps: SpinLockIrq<QpTable>,
    /// This device's reference on its namespace's RoCEv2 sockets.
    _socks: SocketRef,
}

impl Device {
    pub(crate) fn shared(&self) -> &Arc<DevShared> {
        &self.shared
    }

    /// Reserves a QP number: 1 for the GSI QP, else the next free one from 16 on,
    /// cyclically (see [`QpTable::next`]).
    fn alloc_qpn(&self, gsi: bool) -> Result<u32> {
        let mut t = self.qps.lock();
        let i = if gsi {
            (!t.used.first().copied().unwrap_or(true))
                .then_some(0)
                .ok_or(EBUSY)?
        } else {
            let from = t.next.clamp(1, QP_TABLE);
            let free = |r: core::ops::Range<usize>| {
                r.clone()
                    .zip(t.used.get(r).unwrap_or(&[]))
                    .find(|(_, u)| !**u)
                    .map(|(i, _)| i)
            };
            let i = free(from..QP_TABLE + 1)
                .or_else(|| free(1..from))
                .ok_or(ENOMEM)?;
            t.next = if i >= QP_TABLE { 1 } else { i + 1 };
            i
        };
        if let Some(u) = t.used.get_mut(i) {
            *u = true;
        }
        Ok(if gsi { GSI_QPN } else { MIN_QPN + i as u32 - 1 })
    }

    fn free_qpn(&self, qpn: u32) {
        let mut t = self.qps.lock();
        if let Some(u) = qp_slot(qpn).and_then(|i| t.used.get_mut(i)) {
            *u = false;
        }
    }

    /// Publishes `qp` under its number: packets and completions find it from now on.
    fn insert_qp(&self, qp: Arc<Qp>) -> Result {
        let mut t = self.qps.lock();
        let slot = qp_slot(qp.qpn)
            .and_then(|i| t.qps.get_mut(i))
            .ok_or(EINVAL)?;
        *slot = Some(qp);
        Ok(())
    }

    fn remove_qp(&self, qpn: u32) {
        let old = {
            let mut t = self.qps.lock();
            qp_slot(qpn)
                .and_then(|i| t.qps.get_mut(i))
                .and_then(Option::take)
        };
        drop(old);
    }

    /// The C side of the QP with number `qpn`, if it exists. (Without a reference on the
    /// QP: `poll_cq` may run with interrupts disabled, where the last reference must not
    /// be dropped.)
    fn qp_handle(&self, qpn: u32) -> Option<QpHandle> {
        let t = self.qps.lock();
        qp_slot(qpn)
            .and_then(|i| t.qps.get(i))
            .and_then(|q| q.as_ref().map(|q| q.handle))
    }

    /// The QP with number `qpn`, if it exists.
    pub(crate) fn qp(&self, qpn: u32) -> Option<Arc<Qp>> {
        let t = self.qps.lock();
        qp_slot(qpn)
            .and_then(|i| t.qps.get(i))
            .and_then(Clone::clone)
    }
}

impl Rrxe {
    fn device_cap_flags() -> u64 {
        (b::ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT
            | b::ib_device_cap_flags_IB_DEVICE_SYS_IMAGE_GUID
            | b::ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN
            | b::ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS
            | b::ib_device_cap_flags_IB_DEVICE_MEM_WINDOW
            | b::ib_device_cap_flags_IB_DEVICE_MEM_WINDOW_TYPE_2B) as u64
            // IBTA 1.5 placement operations (kernel flags beyond 32 bits).
            | b::ib_device_cap_flags_IB_DEVICE_FLUSH_GLOBAL as u64
            | b::ib_device_cap_flags_IB_DEVICE_FLUSH_PERSISTENT as u64
            | b::ib_device_cap_flags_IB_DEVICE_ATOMIC_WRITE as u64
    }
}

impl Rrxe {
    fn kernel_cap_flags() -> u64 {
        let odp = if odp::enabled() {
            b::ib_kernel_cap_flags_IBK_ON_DEMAND_PAGING
        } else {
            0
        };
        u64::from(b::ib_kernel_cap_flags_IBK_ALLOW_USER_UNREG | odp)
    }

    /// On-demand paging (explicit MRs; no implicit ODP): RC and UD, as rdma_rxe.
    fn odp_caps() -> b::ib_odp_caps {
        if !odp::enabled() {
            return pin_init::zeroed();
        }
        let rc = b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SEND
            | b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_RECV
            | b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_WRITE
            | b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_READ
            | b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC
            | b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SRQ_RECV
            | b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_FLUSH
            | b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_ATOMIC_WRITE;
        let ud = b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SEND
            | b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_RECV
            | b::ib_odp_transport_cap_bits_IB_ODP_SUPPORT_SRQ_RECV;
        let mut c: b::ib_odp_caps = pin_init::zeroed();
        c.general_caps = u64::from(b::ib_odp_general_cap_bits_IB_ODP_SUPPORT);
        c.per_transport_caps.rc_odp_caps = rc;
        c.per_transport_caps.ud_odp_caps = ud;
        c
    }
}

impl IbDriver for Rrxe {
    type Dev = Device;

    fn newlink(name: &CStr, ndev: &NetDevice) -> Result {
        if ndev.is_vlan() {
            pr_err!(
                "{}: create the device on the real device, not a VLAN\n",
                ndev.name()
            );
            return Err(EPERM);
        }
        if let Some(existing) = IbDev::<Rrxe>::get_by_netdev(ndev) {
            pr_err!("{} already has device {}\n", ndev.name(), existing.name());
            return Err(EEXIST);
        }
        // A device without a hardware address still needs a unique GUID: derive a
        // locally administered one from the interface index.
        let mac = ndev.mac().unwrap_or_else(|| {
            let i = ndev.ifindex().to_be_bytes();
            [0x02, 0x00, i[0], i[1], i[2], i[3]]
        });
        let params = DevParams {
            name,
            node_desc: b"rrxe",
            node_guid: eui64_from_mac(mac),
            num_comp_vectors: num_possible_cpus(),
        };
        let shared = DevShared::new(ndev.net(), name, &super::cc::defaults())?;
        let table = QpTable {
            qps: filled(QP_TABLE + 1, None)?,
            used: filled(QP_TABLE + 1, false)?,
            next: 1,
        };
        let _socks = UdpSockets::get::<Rrxe>(ndev.net())?;
        IbDev::<Rrxe>::register(
            ndev,
            &params,
            kernel::try_pin_init!(Device {
                mac,
                shared,
                qps <- new_spinlock_irq!(table),
                _socks
            }),
        )?;
        pr_info!("{} added on {}\n", name, ndev.name());
        Ok(())
    }

    fn dellink(dev: &IbDev<Self>) -> Result {
        pr_info!("{} deleted\n", dev.name());
        Ok(())
    }

    fn query_device(
        dev: &IbDev<Self>,
        attr: &mut b::ib_device_attr,
        udata_len: (usize, usize),
    ) -> Result {
        // librxe sends no provider data; anything else is a caller error, as in rxe.
        if udata_len != (0, 0) {
            return Err(EINVAL);
        }
        *attr = b::ib_device_attr {
            sys_image_guid: u64::from_ne_bytes(eui64_from_mac(dev.data().mac)),
            max_mr_size: u64::MAX,
            page_size_cap: 0xffff_f000,
            vendor_id: caps::VENDOR_ID,
            max_qp: caps::MAX_QP,
            max_qp_wr: caps::MAX_QP_WR,
            device_cap_flags: Self::device_cap_flags(),
            kernel_cap_flags: Self::kernel_cap_flags(),
            odp_caps: Self::odp_caps(),
            max_send_sge: caps::MAX_SGE,
            max_recv_sge: caps::MAX_SGE,
            max_sge_rd: caps::MAX_SGE,
            max_cq: caps::MAX_CQ,
            max_cqe: caps::MAX_CQE,
            max_mr: caps::MAX_MR,
            max_mw: caps::MAX_MW,
            max_pd: caps::MAX_PD,
            max_qp_rd_atom: caps::MAX_QP_RD_ATOM,
            max_res_rd_atom: caps::MAX_RES_RD_ATOM,
            max_qp_init_rd_atom: caps::MAX_QP_RD_ATOM,
            atomic_cap: b::ib_atomic_cap_IB_ATOMIC_HCA,
            max_ah: caps::MAX_AH,
            max_srq: caps::MAX_SRQ,
            max_srq_wr: caps::MAX_SRQ_WR,
            max_srq_sge: caps::MAX_SRQ_SGE,
            max_pkeys: caps::MAX_PKEYS,
            max_fast_reg_page_list_len: caps::MAX_FAST_REG_PAGES,
            local_ca_ack_delay: caps::LOCAL_CA_ACK_DELAY,
            ..pin_init::zeroed()
        };
        Ok(())
    }

    fn query_port(dev: &IbDev<Self>, port: u32, attr: &mut b::ib_port_attr) -> Result {
        if port != 1 {
            return Err(EINVAL);
        }
        let ndev = dev.netdev().ok_or(ENODEV)?;
        let (speed, width) = dev.eth_speed(port)?;
        let active = ndev.port_active();
        *attr = b::ib_port_attr {
            state: if active {
                b::ib_port_state_IB_PORT_ACTIVE
            } else {
                b::ib_port_state_IB_PORT_DOWN
            },
            phys_state: if active {
                b::ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP as u8
            } else if ndev.is_up() {
                b::ib_port_phys_state_IB_PORT_PHYS_STATE_POLLING as u8
            } else {
                b::ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED as u8
            },
            max_mtu: IB_MTU_4096,
            active_mtu: ib_mtu_for_netdev(ndev.mtu()),
            gid_tbl_len: caps::GID_TBL_LEN,
            port_cap_flags: b::ib_port_capability_mask_bits_IB_PORT_CM_SUP,
            max_msg_sz: caps::MAX_MSG_SZ,
            pkey_tbl_len: caps::MAX_PKEYS,
            max_vl_num: 1,
            active_speed: speed,
            active_width: width,
            ..pin_init::zeroed()
        };
        Ok(())
    }

    fn port_immutable(dev: &IbDev<Self>, port: u32, imm: &mut b::ib_port_immutable) -> Result {
        let attr = dev.query_port_core(port)?;
        imm.core_cap_flags = b::RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
        imm.pkey_tbl_len = attr.pkey_tbl_len.into();
        imm.gid_tbl_len = attr.gid_tbl_len;
        imm.max_mad_size = b::IB_MGMT_MAD_SIZE;
        Ok(())
    }

    fn query_pkey(_dev: &IbDev<Self>, port: u32, index: u16) -> Result<u16> {
        if port != 1 || index != 0 {
            return Err(EINVAL);
        }
        Ok(DEFAULT_PKEY)
    }

    fn enable(dev: &IbDev<Self>) -> Result {
        let ndev = dev.netdev().ok_or(ENODEV)?;
        dev.dispatch_port_state(&ndev);
        Ok(())
    }

    type Pd = Pd;
    type Mr = Mr;
    type Cq = Cq;
    type Qp = Qp;
    type Ah = Ah;
    type Srq = Srq;
    type Mw = Mw;

    fn alloc_pd(_dev: &IbDev<Self>) -> Result<Arc<Pd>> {
        Pd::new()
    }

    fn dealloc_pd(_dev: &IbDev<Self>, _pd: Arc<Pd>) {}

    fn reg_user_mr(
        dev: &IbDev<Self>,
        pd: &Arc<Pd>,
        start: u64,
        len: u64,
        iova: u64,
        acc: i32,
    ) -> Result<(Arc<Mr>, u32)> {
        if acc & access::FLUSH_PERSISTENT != 0 {
            // No memory rrxe registers is persistent (rdma_rxe's answer for pages that
            // are not pmem).
            return Err(EINVAL);
        }
        if acc & !access::SUPPORTED != 0 {
            return Err(EOPNOTSUPP);
        }
        // (Pinned, or on-demand paged for ON_DEMAND: ib_core refuses that bit unless
        // query_device advertised it.)
        let umem = dev.umem_get(start, len, acc, &dev.data().shared.umem)?;
        let pdid = pd.id;
        let shared = &dev.data().shared;
        let r = shared.insert_mr(|key| Mr::new(key, pdid, acc, start, len, iova, umem))?;
        if r.0.is_odp() {
            shared.odp_mr(true);
        }
        Ok(r)
    }

    fn dereg_mr(dev: &IbDev<Self>, mr: Arc<Mr>) -> Result {
        if mr.has_windows() {
            return Err(EBUSY);
        }
        let shared = &dev.data().shared;
        if mr.is_odp() {
            shared.odp_mr(false);
        }
        mr.deregistered();
        shared.remove_mr(mr.key);
        Ok(())
    }

    fn alloc_mw(dev: &IbDev<Self>, pd: &Arc<Pd>, type2: bool) -> Result<(Arc<Mw>, u32)> {
        let pdid = pd.id;
        dev.data()
            .shared
            .insert_mw(|rkey| Mw::new(pdid, type2, rkey))
    }

    fn dealloc_mw(dev: &IbDev<Self>, mw: Arc<Mw>) {
        mw.release();
        dev.data().shared.remove_mw(mw.key);
    }

    fn create_cq(
        _dev: &IbDev<Self>,
        cqe: u32,
        flags: u32,
        handle: CqHandle,
        udata: Option<&Udata>,
    ) -> Result<(Arc<Cq>, u32)> {
        if flags != 0 {
            return Err(EOPNOTSUPP);
        }
        Cq::new(cqe, limits::MAX_CQE, handle, udata)
    }

    fn destroy_cq(_dev: &IbDev<Self>, cq: &Arc<Cq>) -> Result {
        cq.kill();
        Ok(())
    }

    fn resize_cq(cq: &Arc<Cq>, cqe: u32, udata: &Udata) -> Result<u32> {
        cq.resize(cqe, udata)
    }

    fn req_notify_cq(cq: &Arc<Cq>, flags: u32) -> i32 {
        cq.arm(flags)
    }

    fn create_qp(
        dev: &IbDev<Self>,
        pd: &Arc<Pd>,
        init: &mut b::ib_qp_init_attr,
        cqs: (Arc<Cq>, Arc<Cq>),
        srq: Option<Arc<Srq>>,
        handle: QpHandle,
        udata: Option<&Udata>,
    ) -> Result<(Arc<Qp>, u32)> {
        let data = dev.data();
        let gsi = init.qp_type == b::ib_qp_type_IB_QPT_GSI;
        let qpn = data.alloc_qpn(gsi)?;
        let qp = match Qp::create(&data.shared, qpn, pd.id, init, cqs, srq, handle, udata) {
            Ok(q) => q,
            Err(e) => {
                data.free_qpn(qpn);
                return Err(e);
            }
        };
        if let Err(e) = data.insert_qp(qp.clone()) {
            qp.abort();
            data.free_qpn(qpn);
            return Err(e);
        }
        Ok((qp, qpn))
    }

    fn post_send_kernel(qp: &Arc<Qp>, wqe: &SendWqe) -> Result {
        qp.post_send_kernel(wqe)
    }

    fn post_recv_kernel(qp: &Arc<Qp>, wqe: &RecvWqe) -> Result {
        qp.post_recv_kernel(wqe)
    }

    fn poll_cq(
        dev: &IbDev<Self>,
        cq: &Arc<Cq>,
        max: usize,
        sink: &mut dyn FnMut(usize, &Cqe, QpHandle),
    ) -> usize {
        let data = dev.data();
        let mut n = 0;
        cq.poll(max, |_, c| {
            // A completion of a QP destroyed since is dropped (ib_core drains QPs first).
            if let Some(h) = data.qp_handle(c.qp_num) {
                sink(n, c, h);
                n += 1;
            }
        });
        n
    }

    fn ah_num(ah: &Ah) -> u32 {
        ah.num.load(Ordering::Relaxed)
    }

    fn get_dma_mr(dev: &IbDev<Self>, pd: &Arc<Pd>, acc: i32) -> Result<(Arc<Mr>, u32)> {
        let pdid = pd.id;
        dev.data()
            .shared
            .insert_mr(|key| Mr::new_dma(key, pdid, acc))
    }

    fn alloc_mr(dev: &IbDev<Self>, pd: &Arc<Pd>, max_pages: u32) -> Result<(Arc<Mr>, u32)> {
        if max_pages == 0 || max_pages > caps::MAX_FAST_REG_PAGES {
            return Err(EINVAL);
        }
        let pdid = pd.id;
        dev.data()
            .shared
            .insert_mr(|key| Mr::new_fast(key, pdid, max_pages as usize))
    }

    fn map_mr_begin(mr: &Arc<Mr>, page_size: u32) -> Result {
        mr.map_begin(page_size)
    }

    fn map_mr_page(mr: &Arc<Mr>, addr: u64) -> Result {
        mr.map_page(addr)
    }

    fn modify_qp(dev: &IbDev<Self>, qp: &Arc<Qp>, attr: &b::ib_qp_attr, mask: u32) -> Result {
        let mtu = dev.netdev().map_or(1500, |n| n.mtu());
        let port_mtu = crate::proto::port::ib_mtu_bytes(ib_mtu_for_netdev(mtu)).unwrap_or(256);
        qp.modify(attr, mask, port_mtu)
    }

    fn create_ah(
        dev: &IbDev<Self>,
        pd: &Arc<Pd>,
        av: &Av,
        sleepable: bool,
    ) -> Result<(Arc<Ah>, u32)> {
        let shared = &dev.data().shared;
        let (path, flags) = if sleepable {
            (AhPath::Ready(Path::new(shared.net, av, 0, 0)?), GFP_KERNEL)
        } else {
            (AhPath::Lookup(shared.net, *av), GFP_ATOMIC)
        };
        let ah = Arc::new(
            Ah {
                num: AtomicU32::new(0),
                pd: pd.id,
                path,
            },
            flags,
        )?;
        let num = shared.insert_ah(ah.clone())?;
        ah.num.store(num, Ordering::Relaxed);
        Ok((ah, num))
    }

    fn destroy_ah(dev: &IbDev<Self>, ah: Arc<Ah>) {
        dev.data().shared.remove_ah(ah.num.load(Ordering::Relaxed));
    }

    fn create_srq(
        _dev: &IbDev<Self>,
        pd: &Arc<Pd>,
        attr: &mut b::ib_srq_attr,
        handle: SrqHandle,
        udata: Option<&Udata>,
    ) -> Result<Arc<Srq>> {
        Srq::new(pd.id, attr, handle, udata)
    }

    fn post_srq_recv_kernel(srq: &Arc<Srq>, wqe: &RecvWqe) -> Result {
        srq.post_kernel(wqe)
    }

    fn modify_srq(srq: &Arc<Srq>, attr: &b::ib_srq_attr, mask: u32) -> Result {
        srq.modify(attr, mask)
    }

    fn query_srq(srq: &Arc<Srq>, attr: &mut b::ib_srq_attr) {
        srq.query(attr)
    }

    fn destroy_srq(_dev: &IbDev<Self>, srq: Arc<Srq>) {
        srq.unpublish();
    }

    fn query_qp(qp: &Arc<Qp>, attr: &mut b::ib_qp_attr, init: &mut b::ib_qp_init_attr) -> Result {
        qp.query(attr, init);
        Ok(())
    }

    fn qp_res_attrs(qp: &Arc<Qp>, out: &mut ResAttrs<'_>) -> Result {
        qp.cc_res(out)
    }

    fn destroy_qp(dev: &IbDev<Self>, qp: Arc<Qp>) -> Result {
        let data = dev.data();
        // No packet finds it from here on; then its engine stops; then its number may
        // be handed out again.
        data.remove_qp(qp.qpn);
        qp.shutdown();
        data.free_qpn(qp.qpn);
        Ok(())
    }

    fn post_send(qp: &Arc<Qp>) -> Result {
        qp.doorbell()
    }

    const COUNTERS: &'static [&'static CStr] = Stats::NAMES;

    fn counters(dev: &IbDev<Self>, out: &mut [u64]) {
        let s = &dev.data().shared.stats;
        // (Kept by the binding layer.)
        let u = &dev.data().shared.umem;
        s.odp_faulted.raise(UmemCounts::get(&u.faulted));
        s.odp_invalidated.raise(UmemCounts::get(&u.invalidated));
        s.mr_release_later.raise(UmemCounts::get(&u.released_later));
        s.values(out);
    }

    fn port_counters(dev: &IbDev<Self>) -> PortCounters {
        let s = &dev.data().shared.stats;
        PortCounters {
            xmit_bytes: s.tx_bytes.get(),
            rcv_bytes: s.rx_bytes.get(),
            xmit_pkts: s.tx_packets.get(),
            rcv_pkts: s.rx_packets.get(),
        }
    }
}

impl NetdevEvents for Rrxe {
    fn event(ev: NetdevEvent, ndev: &NetDevice) {
        // Port state events and GID changes come from ib_core's own notifier; rrxe only
        // has to remove its device when the net device goes away.
        if ev == NetdevEvent::Unregister {
            if let Some(dev) = IbDev::<Rrxe>::get_by_netdev(ndev) {
                pr_info!("{} removed with {}\n", dev.name(), ndev.name());
                dev.unregister_queued();
            }
        }
    }
}
