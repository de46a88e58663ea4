// SPDX-License-Identifier: GPL-2.0
//! The rrxe driver: device registry and verbs, built only from the protocol core
//! (`proto`) and the binding layer (`kabi`).

#![forbid(unsafe_code)]

// Dependencies point one way, leaves first: limits, stats, fault <- tx, frame, cc <- res <-
// shared <- qp <- device <- rx.
mod cc;
mod device;
mod fault;
mod frame;
mod limits;
mod qp;
mod res;
mod rx;
mod shared;
mod stats;
mod tx;
mod verify;

use crate::kabi::ib::{IbDev, LinkRegistration};
use crate::kabi::netdev::NetdevNotifier;
use crate::kabi::udp::UdpSockets;
use crate::kabi::work::WorkQueue;
use device::Rrxe;
use kernel::prelude::*;

/// The link type userspace names in `rdma link add NAME type rrxe netdev IF`.
const LINK_TYPE: &CStr = c"rrxe";

/// Module state: the netdev notifier and the link type. Devices live in ib_core.
pub(crate) struct RrxeModule {
    link: Option<LinkRegistration>,
    notifier: Option<NetdevNotifier<Rrxe>>,
    socks: Option<UdpSockets>,
    wq: Option<WorkQueue>,
}

impl kernel::Module for RrxeModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let wq = WorkQueue::create()?;
        crate::kabi::mem::init_releases();
        let socks = UdpSockets::init()?;
        let notifier = NetdevNotifier::<Rrxe>::register()?;
        let link = LinkRegistration::register::<Rrxe>(LINK_TYPE);
        pr_info!("loaded (link type \"rrxe\")\n");
        Ok(RrxeModule {
            link: Some(link),
            notifier: Some(notifier),
            socks: Some(socks),
            wq: Some(wq),
        })
    }
}

impl Drop for RrxeModule {
    fn drop(&mut self) {
        // No new devices, then remove every existing one, then stop netdev events.
        drop(self.link.take());
        IbDev::<Rrxe>::unregister_all();
        // (A user memory region whose last reference went where sleeping is not
        // allowed is released by a work item, which runs module text.)
        crate::kabi::mem::wait_releases();
        drop(self.notifier.take());
        drop(self.socks.take());
        drop(self.wq.take());
        pr_info!("unloaded\n");
    }
}
