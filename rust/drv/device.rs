// SPDX-License-Identifier: GPL-2.0
//! rrxe devices: creation on `rdma link add`, removal on `rdma link delete` or when the
//! net device goes away, and the device/port queries userspace sees in `ibv_devinfo`.

use crate::kabi::ib::{DevParams, IbDev, IbDriver};
use crate::kabi::netdev::{NetDevice, NetdevEvent, NetdevEvents};
use crate::kabi::num_possible_cpus;
use crate::proto::port::{eui64_from_mac, ib_mtu_for_netdev, IB_MTU_4096};
use crate::sys as b;
use kernel::prelude::*;

/// Device limits reported by `query_device`. Only what rrxe implements is advertised:
/// no memory windows, no FLUSH or ATOMIC_WRITE, no multicast, no ODP.
mod caps {
    pub(super) const VENDOR_ID: u32 = 0xff_ffff;
    pub(super) const MAX_QP: u32 = 1 << 16;
    pub(super) const MAX_QP_WR: u32 = 1 << 15;
    pub(super) const MAX_SGE: u32 = 32;
    pub(super) const MAX_CQ: u32 = 1 << 16;
    pub(super) const MAX_CQE: u32 = (1 << 15) - 1;
    pub(super) const MAX_MR: u32 = 1 << 18;
    pub(super) const MAX_PD: u32 = 1 << 16;
    pub(super) const MAX_QP_RD_ATOM: u32 = 128;
    pub(super) const MAX_RES_RD_ATOM: u32 = 1 << 16;
    pub(super) const MAX_AH: u32 = (1 << 15) - 1;
    pub(super) const MAX_SRQ: u32 = 1 << 16;
    pub(super) const MAX_SRQ_WR: u32 = 1 << 15;
    pub(super) const MAX_SRQ_SGE: u32 = 27;
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
}

impl Rrxe {
    fn device_cap_flags() -> u64 {
        (b::ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT
            | b::ib_device_cap_flags_IB_DEVICE_SYS_IMAGE_GUID
            | b::ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN
            | b::ib_device_cap_flags_IB_DEVICE_SRQ_RESIZE) as u64
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
        IbDev::<Rrxe>::register(ndev, &params, kernel::try_pin_init!(Device { mac }))?;
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
