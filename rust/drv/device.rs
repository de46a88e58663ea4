// SPDX-License-Identifier: GPL-2.0
//! rrxe devices: creation on `rdma link add`, removal on `rdma link delete` or when the
//! net device goes away, and the device/port queries userspace sees in `ibv_devinfo`.

use super::net::Path;
use super::qp::{Qp, MAX_QP_WR};
use super::res::{access, Ah, Cq, Mr, Pd, Srq};
use crate::kabi::ib::{DevParams, IbDev, IbDriver};
use crate::kabi::lock::{new_spinlock_bh, new_spinlock_irq, SpinLockBh, SpinLockIrq};
use crate::kabi::netdev::{NetDevice, NetNs, NetdevEvent, NetdevEvents};
use crate::kabi::num_possible_cpus;
use crate::kabi::timer::Deadline;
use crate::kabi::udp::{SocketRef, UdpSockets};
use crate::kabi::verbs::{Av, CqHandle, QpHandle, SrqHandle, Udata};
use crate::proto::port::{eui64_from_mac, ib_mtu_for_netdev, IB_MTU_4096};
use crate::proto::psn::Psn;
use crate::proto::uapi::{Cqe, RecvWqe, SendWqe};
use crate::sys as b;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::sync::Arc;

/// Largest `max_rd_atomic` / `max_dest_rd_atomic`.
pub(crate) const MAX_QP_RD_ATOM: u32 = 128;
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
/// QP table size per device.
const QP_TABLE: usize = 1024;
/// MR table size per device.
const MR_TABLE: usize = 16384;
/// Address handles per device (AH number 0 is never used).
const AH_TABLE: usize = 4096;

/// A statistics counter.
pub(crate) struct Counter(AtomicU64);

impl Counter {
    const fn new() -> Self {
        Counter(AtomicU64::new(0))
    }

    pub(crate) fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Adds `n`; returns the new value (gauges).
    pub(crate) fn add(&self, n: u64) -> u64 {
        self.0.fetch_add(n, Ordering::Relaxed).wrapping_add(n)
    }

    /// Subtracts `n` (gauges).
    pub(crate) fn sub(&self, n: u64) {
        self.0.fetch_sub(n, Ordering::Relaxed);
    }

    /// Raises the value to `v` if it is lower (high-water marks).
    pub(crate) fn raise(&self, v: u64) {
        self.0.fetch_max(v, Ordering::Relaxed);
    }
}

macro_rules! stats {
    ($($name:ident),* $(,)?) => {
        /// Device counters (see Documentation/rrxe/index.rst).
        pub(crate) struct Stats {
            $(pub(crate) $name: Counter,)*
        }

        impl Stats {
            const fn new() -> Self {
                Stats { $($name: Counter::new(),)* }
            }

            /// Counter names, in declaration order.
            pub(crate) const NAMES: &'static [&'static CStr] = &[$(kernel::c_str!(stringify!($name)),)*];

            /// Counter values, in [`Stats::NAMES`] order.
            pub(crate) fn values(&self, out: &mut [u64]) {
                for (o, v) in out.iter_mut().zip([$(self.$name.get(),)*]) {
                    *o = v;
                }
            }
        }
    };
}

stats!(
    tx_packets,
    tx_errors,
    rx_packets,
    drop_malformed,
    drop_opcode,
    drop_icrc,
    drop_qpn,
    drop_state,
    out_of_seq,
    duplicates,
    dup_or_ooo_resp,
    retransmits,
    timeouts,
    rnr_nak_sent,
    rnr_nak_rcvd,
    seq_nak_rcvd,
    nak_sent,
    cq_overflow,
    local_errors,
    window_full,
    cnp_rcvd,
    drop_qkey,
    drop_no_recv,
    drop_rx_queue,
    sel_negotiated,
    sel_fallback,
    sel_accepted,
    ooo_kept,
    ooo_placed,
    sack_sent,
    sack_rcvd,
    sack_spurious,
    retx_packets,
    rd_rereq,
    tlp_sent,
    reasm_bytes,
    reasm_high,
    drop_reasm_limit,
    sack_again,
    closed_acks,
);

/// Bytes of packets kept beyond the expected PSN, per device (all QPs).
pub(crate) const REASM_DEV_MAX: u64 = 64 << 20;

impl DevShared {
    /// Reserves `n` bytes of the device's reassembly budget.
    pub(crate) fn reasm_reserve(&self, n: usize) -> bool {
        let n = n as u64;
        let now = self.stats.reasm_bytes.add(n);
        if now > REASM_DEV_MAX {
            self.stats.reasm_bytes.sub(n);
            return false;
        }
        self.stats.reasm_high.raise(now);
        true
    }

    /// Returns `n` bytes to the device's reassembly budget.
    pub(crate) fn reasm_release(&self, n: usize) {
        self.stats.reasm_bytes.sub(n as u64);
    }
}

struct Tables {
    qps: KVec<Option<Arc<Qp>>>,
    qpn_used: KVec<bool>,
    /// Where the search for a free QPN starts: QPNs are handed out cyclically, as
    /// rdma_rxe does, so that a destroyed QP's number is not reused at once (its peer's
    /// late packets, and its `Closed` record, would then meet a new connection).
    qpn_next: usize,
    mrs: KVec<Option<Arc<Mr>>>,
    mr_used: KVec<bool>,
    key_gen: u8,
    /// Recently destroyed RC QPs (see [`Closed`]), reused round-robin from `closed_next`.
    closed: KVec<Option<Closed>>,
    closed_next: usize,
}

/// An RC QP destroyed while connected: enough to acknowledge its peer's retransmissions
/// of requests it had executed, for [`CLOSED_US`]. A peer whose last ACK was lost would
/// otherwise retry into a QPN that no longer answers: `ibv_rc_pingpong`'s server exits
/// right after its last receive, and under loss its client then failed or, with
/// `retry_cnt` 7 (unlimited in rdma_rxe and rrxe), retried until killed.
#[derive(Clone)]
pub(crate) struct Closed {
    pub(crate) qpn: u32,
    pub(crate) dest_qpn: u32,
    /// Requests before this PSN were executed (the ACK names the one before it).
    pub(crate) resp_psn: Psn,
    pub(crate) msn: u32,
    pub(crate) path: Arc<Path>,
    pub(crate) until: Deadline,
}

/// Destroyed QPs remembered per device.
const CLOSED_MAX: usize = 16;
/// How long a destroyed QP's executed requests are still acknowledged.
pub(crate) const CLOSED_US: u64 = 20_000_000;
/// How far before a destroyed QP's expected PSN a request may be (a peer has far fewer
/// requests in flight).
const CLOSED_PSNS: i32 = 1 << 16;

/// Device state shared with QPs and the packet path.
#[pin_data]
pub(crate) struct DevShared {
    pub(crate) net: NetNs,
    pub(crate) stats: Stats,
    #[pin]
    tables: SpinLockBh<Tables>,
    /// Serialises the responder's atomic operations (atomicity among this device's
    /// atomics, as `IB_ATOMIC_HCA` promises).
    #[pin]
    pub(crate) atomic: SpinLockBh<()>,
    /// Address handles by number. Kernel consumers create and destroy AHs with
    /// interrupts disabled (the CM does, under its own locks).
    #[pin]
    ahs: SpinLockIrq<KVec<Option<Arc<Ah>>>>,
}

fn filled<T: Clone>(n: usize, v: T) -> Result<KVec<T>> {
    let mut k = KVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        k.push(v.clone(), GFP_KERNEL)?;
    }
    Ok(k)
}

impl DevShared {
    fn new(net: NetNs) -> Result<Arc<DevShared>> {
        let qps = filled(QP_TABLE + 1, None)?;
        let qpn_used = filled(QP_TABLE + 1, false)?;
        let mrs = filled(MR_TABLE, None)?;
        let mut mr_used = filled(MR_TABLE, false)?;
        let ah_table = filled(AH_TABLE, None)?;
        let closed = filled(CLOSED_MAX, None)?;
        // Index 0 would give key 0x000000xx; keep it unused so lkey 0 never resolves.
        if let Some(u) = mr_used.get_mut(0) {
            *u = true;
        }
        Arc::pin_init(
            try_pin_init!(DevShared {
                net,
                stats: Stats::new(),
                tables <- new_spinlock_bh!(Tables {
                    qps,
                    qpn_used,
                    qpn_next: 1,
                    mrs,
                    mr_used,
                    key_gen: 0,
                    closed,
                    closed_next: 0
                }),
                atomic <- new_spinlock_bh!(()),
                ahs <- new_spinlock_irq!(ah_table),
            }),
            GFP_KERNEL,
        )
    }

    /// Reserves a QP number: 1 for the GSI QP, else the next free one from 16 on,
    /// cyclically (see [`Tables::qpn_next`]).
    pub(crate) fn alloc_qpn(&self, gsi: bool) -> Result<u32> {
        let mut t = self.tables.lock();
        let i = if gsi {
            (!t.qpn_used.first().copied().unwrap_or(true))
                .then_some(0)
                .ok_or(EBUSY)?
        } else {
            let from = t.qpn_next.clamp(1, QP_TABLE);
            let free = |r: core::ops::Range<usize>| {
                r.clone()
                    .zip(t.qpn_used.get(r).unwrap_or(&[]))
                    .find(|(_, u)| !**u)
                    .map(|(i, _)| i)
            };
            let i = free(from..QP_TABLE + 1)
                .or_else(|| free(1..from))
                .ok_or(ENOMEM)?;
            t.qpn_next = if i >= QP_TABLE { 1 } else { i + 1 };
            i
        };
        if let Some(u) = t.qpn_used.get_mut(i) {
            *u = true;
        }
        Ok(if gsi { GSI_QPN } else { MIN_QPN + i as u32 - 1 })
    }

    pub(crate) fn free_qpn(&self, qpn: u32) {
        let mut t = self.tables.lock();
        if let Some(u) = qp_slot(qpn).and_then(|i| t.qpn_used.get_mut(i)) {
            *u = false;
        }
    }

    pub(crate) fn insert_qp(&self, qpn: u32, qp: Arc<Qp>) -> Result {
        let mut t = self.tables.lock();
        let slot = qp_slot(qpn).and_then(|i| t.qps.get_mut(i)).ok_or(EINVAL)?;
        *slot = Some(qp);
        Ok(())
    }

    pub(crate) fn remove_qp(&self, qpn: u32) {
        let old = {
            let mut t = self.tables.lock();
            qp_slot(qpn)
                .and_then(|i| t.qps.get_mut(i))
                .and_then(Option::take)
        };
        drop(old);
    }

    /// Remembers a destroyed QP (replacing an older record of the same QPN, else the
    /// oldest slot).
    pub(crate) fn remember_closed(&self, c: Closed) {
        let old = {
            let mut t = self.tables.lock();
            let at = t
                .closed
                .iter()
                .position(|e| e.as_ref().is_some_and(|e| e.qpn == c.qpn));
            let i = at.unwrap_or(t.closed_next);
            if at.is_none() {
                t.closed_next = (t.closed_next + 1) % CLOSED_MAX;
            }
            t.closed.get_mut(i).and_then(|e| e.replace(c))
        };
        // (The old record's route is released outside the lock.)
        drop(old);
    }

    /// The record of destroyed QP `qpn` if it is recent and `psn` names a request it
    /// executed: its path, peer QPN, ACK PSN and MSN.
    pub(crate) fn closed_for(&self, qpn: u32, psn: Psn) -> Option<(Arc<Path>, u32, Psn, u32)> {
        let t = self.tables.lock();
        t.closed
            .iter()
            .flatten()
            .find(|e| {
                e.qpn == qpn
                    && e.until.pending()
                    && (1..=CLOSED_PSNS).contains(&e.resp_psn.diff(psn))
            })
            .map(|e| (e.path.clone(), e.dest_qpn, e.resp_psn.sub(1), e.msn))
    }

    /// The QP with number `qpn`, if it exists.
    pub(crate) fn qp(&self, qpn: u32) -> Option<Arc<Qp>> {
        let t = self.tables.lock();
        qp_slot(qpn)
            .and_then(|i| t.qps.get(i))
            .and_then(Clone::clone)
    }

    /// Reserves an MR index and key, builds the MR with `make(key)` and publishes it.
    fn insert_mr(&self, make: impl FnOnce(u32) -> Result<Arc<Mr>>) -> Result<(Arc<Mr>, u32)> {
        let (i, key) = {
            let mut t = self.tables.lock();
            let i = t.mr_used.iter().position(|u| !u).ok_or(ENOMEM)?;
            if let Some(u) = t.mr_used.get_mut(i) {
                *u = true;
            }
            t.key_gen = t.key_gen.wrapping_add(1);
            (i, ((i as u32) << 8) | u32::from(t.key_gen))
        };
        let mr = match make(key) {
            Ok(m) => m,
            Err(e) => {
                if let Some(u) = self.tables.lock().mr_used.get_mut(i) {
                    *u = false;
                }
                return Err(e);
            }
        };
        if let Some(s) = self.tables.lock().mrs.get_mut(i) {
            *s = Some(mr.clone());
        }
        Ok((mr, key))
    }

    fn remove_mr(&self, key: u32) {
        let old = {
            let mut t = self.tables.lock();
            let i = (key >> 8) as usize;
            let old = t.mrs.get_mut(i).and_then(|s| {
                if s.as_ref().is_some_and(|m| m.key == key) {
                    s.take()
                } else {
                    None
                }
            });
            if old.is_some() {
                if let Some(u) = t.mr_used.get_mut(i) {
                    *u = false;
                }
            }
            old
        };
        drop(old);
    }

    /// The MR for `key` if it belongs to PD `pd` and allows every bit of `need`.
    /// Stores an AH; returns its number (1..AH_TABLE).
    fn insert_ah(&self, ah: Arc<Ah>) -> Result<u32> {
        let mut t = self.ahs.lock();
        let (i, e) = t
            .iter_mut()
            .enumerate()
            .skip(1)
            .find(|(_, e)| e.is_none())
            .ok_or(ENOMEM)?;
        *e = Some(ah);
        Ok(i as u32)
    }

    fn remove_ah(&self, num: u32) {
        if let Some(e) = self.ahs.lock().get_mut(num as usize) {
            *e = None;
        }
    }

    /// The AH with number `num`.
    pub(crate) fn ah(&self, num: u32) -> Option<Arc<Ah>> {
        self.ahs.lock().get(num as usize)?.clone()
    }

    pub(crate) fn lookup_mr(&self, key: u32, pd: usize, need: i32) -> Option<Arc<Mr>> {
        let t = self.tables.lock();
        let mr = t.mrs.get((key >> 8) as usize)?.as_ref()?;
        (mr.key == key && mr.pd == pd && mr.access & need == need).then(|| mr.clone())
    }
}

/// Device limits reported by `query_device`. Only what rrxe implements is advertised:
/// no memory windows, no FLUSH or ATOMIC_WRITE, no multicast, no ODP.
mod caps {
    pub(super) const VENDOR_ID: u32 = 0xff_ffff;
    pub(super) const MAX_QP: u32 = super::QP_TABLE as u32;
    pub(super) const MAX_QP_WR: u32 = super::MAX_QP_WR;
    pub(super) const MAX_SGE: u32 = 32;
    pub(super) const MAX_CQ: u32 = 1 << 16;
    pub(super) const MAX_CQE: u32 = super::MAX_CQE;
    pub(super) const MAX_MR: u32 = super::MR_TABLE as u32 - 1;
    pub(super) const MAX_PD: u32 = 1 << 16;
    pub(super) const MAX_QP_RD_ATOM: u32 = 128;
    pub(super) const MAX_RES_RD_ATOM: u32 = 1 << 16;
    pub(super) const MAX_AH: u32 = super::AH_TABLE as u32 - 1;
    pub(super) const MAX_SRQ: u32 = 1 << 16;
    pub(super) const MAX_SRQ_WR: u32 = super::MAX_QP_WR;
    pub(super) const MAX_SRQ_SGE: u32 = 32;
    pub(super) const MAX_PKEYS: u16 = 1;
    pub(super) const LOCAL_CA_ACK_DELAY: u8 = 15;
    pub(super) const GID_TBL_LEN: i32 = 1024;
    pub(super) const MAX_MSG_SZ: u32 = 1 << 31;
}

/// The rrxe driver type (ib_core callbacks, netdev events).
pub(crate) struct Rrxe;

/// Per-device state.
#[pin_data]
pub(crate) struct Device {
    /// Hardware address of the bound net device at creation (GUID source).
    mac: [u8; 6],
    shared: Arc<DevShared>,
    /// This device's reference on its namespace's RoCEv2 sockets.
    _socks: SocketRef,
}

impl Device {
    pub(crate) fn shared(&self) -> &Arc<DevShared> {
        &self.shared
    }
}

impl Rrxe {
    fn device_cap_flags() -> u64 {
        (b::ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT
            | b::ib_device_cap_flags_IB_DEVICE_SYS_IMAGE_GUID
            | b::ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN) as u64
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
        let shared = DevShared::new(ndev.net())?;
        let _socks = UdpSockets::get::<Rrxe>(ndev.net())?;
        IbDev::<Rrxe>::register(
            ndev,
            &params,
            kernel::try_pin_init!(Device {
                mac,
                shared,
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
            kernel_cap_flags: u64::from(b::ib_kernel_cap_flags_IBK_ALLOW_USER_UNREG),
            max_send_sge: caps::MAX_SGE,
            max_recv_sge: caps::MAX_SGE,
            max_sge_rd: caps::MAX_SGE,
            max_cq: caps::MAX_CQ,
            max_cqe: caps::MAX_CQE,
            max_mr: caps::MAX_MR,
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
        Ok(0xffff)
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
        if acc & !access::SUPPORTED != 0 {
            return Err(EOPNOTSUPP);
        }
        let umem = dev.umem_get(start, len, acc)?;
        let pdid = pd.id;
        let r = dev
            .data()
            .shared
            .insert_mr(|key| Mr::new(key, pdid, acc, start, len, iova, umem))?;
        Ok(r)
    }

    fn dereg_mr(dev: &IbDev<Self>, mr: Arc<Mr>) -> Result {
        dev.data().shared.remove_mr(mr.key);
        Ok(())
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
        Cq::new(cqe, MAX_CQE, handle, udata)
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
        let qp = Qp::create(&dev.data().shared, pd.id, init, cqs, srq, handle, udata)?;
        let qpn = qp.qpn;
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
        let shared = &dev.data().shared;
        let mut n = 0;
        cq.poll(max, |_, c| {
            // A completion of a QP destroyed since is dropped (ib_core drains QPs first).
            if let Some(qp) = shared.qp(c.qp_num) {
                sink(n, c, qp.handle);
                n += 1;
            }
        });
        n
    }

    fn ah_num(ah: &Ah) -> u32 {
        ah.num.load(Ordering::Relaxed)
    }

    fn get_dma_mr(dev: &IbDev<Self>, pd: &Arc<Pd>, _access: i32) -> Result<(Arc<Mr>, u32)> {
        let pdid = pd.id;
        dev.data().shared.insert_mr(|key| Mr::new_dma(key, pdid))
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
        let path = Path::new(shared, av, 0, 0)?;
        let flags = if sleepable { GFP_KERNEL } else { GFP_ATOMIC };
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

    fn destroy_srq(_dev: &IbDev<Self>, _srq: Arc<Srq>) {}

    fn query_qp(qp: &Arc<Qp>, attr: &mut b::ib_qp_attr, init: &mut b::ib_qp_init_attr) -> Result {
        qp.query(attr, init);
        Ok(())
    }

    fn destroy_qp(_dev: &IbDev<Self>, qp: Arc<Qp>) -> Result {
        qp.shutdown();
        Ok(())
    }

    fn post_send(qp: &Arc<Qp>) -> Result {
        qp.doorbell()
    }

    const COUNTERS: &'static [&'static CStr] = Stats::NAMES;

    fn counters(dev: &IbDev<Self>, out: &mut [u64]) {
        dev.data().shared.stats.values(out);
    }
}

/// Largest CQ.
const MAX_CQE: u32 = 32767;

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
