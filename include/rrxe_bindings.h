/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bindgen input for rrxe. Everything the kernel crate already binds (kernel::bindings) is
 * blocklisted at generation time so shared types stay the kernel's own Rust types; what
 * is left is generated into rust/sys/bindings_generated.rs.
 */
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_umem.h>
#include <rdma/rdma_netlink.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/ib_user_verbs.h>
#include <uapi/rdma/rdma_user_rxe.h>
#include <uapi/rdma/ib_user_ioctl_verbs.h>
#include <linux/crc32.h>
#include "rrxe_shim.h"
