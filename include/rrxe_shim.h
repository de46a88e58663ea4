/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rrxe C shims: one non-inline wrapper per static inline function or macro that the Rust
 * binding layer (rust/kabi) needs. Each prototype is both the C declaration and bindgen
 * input, so the Rust side is generated, never hand-written.
 */
#ifndef RRXE_SHIM_H
#define RRXE_SHIM_H

#include <linux/types.h>

struct net_device;
struct ib_device;
struct net;

/* netdevice */
struct net_device *rrxe_netdev_from_notifier_info(void *info);
void rrxe_netdev_put(struct net_device *ndev);
unsigned int rrxe_netdev_mtu(const struct net_device *ndev);
int rrxe_netdev_ifindex(const struct net_device *ndev);
bool rrxe_netdev_is_vlan(const struct net_device *ndev);
bool rrxe_netdev_is_up(const struct net_device *ndev);
bool rrxe_netdev_port_active(const struct net_device *ndev);
/* Copies the first 6 bytes of the hardware address; returns false if there is none. */
bool rrxe_netdev_mac(const struct net_device *ndev, u8 *mac);
const char *rrxe_netdev_name(const struct net_device *ndev);
struct net *rrxe_netdev_net(const struct net_device *ndev);

/* ib_device */
void rrxe_ib_mark_name_assigned_by_user(struct ib_device *ibdev);

/* misc */
unsigned int rrxe_num_possible_cpus(void);

#endif /* RRXE_SHIM_H */
