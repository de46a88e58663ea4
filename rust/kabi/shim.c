// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe C shims: bodies for the prototypes in include/rrxe_shim.h. Only static inline
 * functions and macros that Rust cannot call directly belong here; no logic.
 */
#include <linux/netdevice.h>
#include <linux/if_vlan.h>
#include <linux/cpumask.h>
#include <rdma/ib_verbs.h>
#include "rrxe_shim.h"

struct net_device *rrxe_netdev_from_notifier_info(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

void rrxe_netdev_put(struct net_device *ndev)
{
	dev_put(ndev);
}

unsigned int rrxe_netdev_mtu(const struct net_device *ndev)
{
	return READ_ONCE(ndev->mtu);
}

int rrxe_netdev_ifindex(const struct net_device *ndev)
{
	return ndev->ifindex;
}

bool rrxe_netdev_is_vlan(const struct net_device *ndev)
{
	return is_vlan_dev(ndev);
}

bool rrxe_netdev_is_up(const struct net_device *ndev)
{
	return netif_get_flags(ndev) & IFF_UP;
}

bool rrxe_netdev_port_active(const struct net_device *ndev)
{
	return ib_get_curr_port_state((struct net_device *)ndev) == IB_PORT_ACTIVE;
}

bool rrxe_netdev_mac(const struct net_device *ndev, u8 *mac)
{
	if (ndev->addr_len < ETH_ALEN)
		return false;
	memcpy(mac, ndev->dev_addr, ETH_ALEN);
	return true;
}

const char *rrxe_netdev_name(const struct net_device *ndev)
{
	return netdev_name(ndev);
}

struct net *rrxe_netdev_net(const struct net_device *ndev)
{
	return dev_net(ndev);
}

void rrxe_ib_mark_name_assigned_by_user(struct ib_device *ibdev)
{
	ib_mark_name_assigned_by_user(ibdev);
}

unsigned int rrxe_num_possible_cpus(void)
{
	return num_possible_cpus();
}
