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
struct sk_buff;
struct sock;
struct socket;
struct dst_entry;
struct in6_addr;
struct ib_umem;
struct ib_udata;
struct ib_ucontext;
struct ib_cq;
struct page;
struct vm_area_struct;
struct rdma_user_mmap_entry;
struct rdma_hw_stats;
typedef struct spinlock spinlock_t;

/* netdevice */
struct net_device *rrxe_netdev_from_notifier_info(void *info);
void rrxe_netdev_put(struct net_device *ndev);
unsigned int rrxe_netdev_mtu(const struct net_device *ndev);
bool rrxe_netdev_is_vlan(const struct net_device *ndev);
bool rrxe_netdev_port_active(const struct net_device *ndev);
/* Copies the first 6 bytes of the hardware address; returns false if there is none. */
bool rrxe_netdev_mac(const struct net_device *ndev, u8 *mac);
const char *rrxe_netdev_name(const struct net_device *ndev);
struct net *rrxe_netdev_net(const struct net_device *ndev);

/* ib_device */
void rrxe_ib_mark_name_assigned_by_user(struct ib_device *ibdev);

/* misc */
unsigned int rrxe_num_possible_cpus(void);

/* BH spinlocks (the packet path runs in softirq and in process context with BH off) */
void rrxe_spin_lock_bh(spinlock_t *lock);
void rrxe_spin_unlock_bh(spinlock_t *lock);
int rrxe_spin_trylock_bh(spinlock_t *lock);
unsigned long rrxe_spin_lock_irqsave(spinlock_t *lock);
void rrxe_spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags);
int rrxe_spin_trylock_irqsave(spinlock_t *lock, unsigned long *flags);

/* sk_buff */
/* A transmit skb with headroom for link, IPv6 and UDP headers and `len` bytes of tailroom. */
struct sk_buff *rrxe_skb_alloc_tx(struct net_device *ndev, unsigned int len);
void rrxe_skb_drop(struct sk_buff *skb);
void rrxe_skb_consume(struct sk_buff *skb);
struct net_device *rrxe_skb_dev(const struct sk_buff *skb);
/*
 * Receive view of a UDP-encapsulated skb (data at the UDP header): linearises it and
 * returns the network header and its length up to the end of the UDP payload, plus the
 * IP version. Returns -errno if the skb cannot be linearised or is not IPv4/IPv6.
 */
int rrxe_skb_rx_view(struct sk_buff *skb, u8 **l3, unsigned int *l3_len, bool *v6);
/* Pushes UDP and IPv4/IPv6 headers in front of the data and attaches a clone of dst. */
void rrxe_skb_push_ip4(struct sk_buff *skb, struct dst_entry *dst, __be32 saddr,
		       __be32 daddr, u8 tos, u8 ttl, u16 sport);
void rrxe_skb_push_ip6(struct sk_buff *skb, struct dst_entry *dst,
		       const struct in6_addr *saddr, const struct in6_addr *daddr,
		       u8 tclass, u8 hop_limit, u16 sport);
/* The linear data from the network header to the tail (after the pushes). */
u8 *rrxe_skb_l3(struct sk_buff *skb, unsigned int *len);
/* ip_local_out/ip6_local_out; consumes the skb; returns 0 or -errno. */
int rrxe_ip_send(struct sk_buff *skb, bool v6);

/* routing */
struct dst_entry *rrxe_route4(struct net *net, int oif, __be32 saddr, __be32 daddr);
struct dst_entry *rrxe_route6(struct net *net, int oif, const struct in6_addr *saddr,
			      const struct in6_addr *daddr);
struct net_device *rrxe_dst_dev(const struct dst_entry *dst);

/* UDP tunnel socket on port 4791; rcv runs in softirq and always consumes the skb. */
struct socket *rrxe_udp_tunnel_open(struct net *net, bool v6,
				    int (*rcv)(struct sock *sk, struct sk_buff *skb));
void rrxe_udp_tunnel_close(struct socket *sock);
struct net *rrxe_sock_net(const struct sock *sk);
/* pernet_operations whose exit calls `exit(net)` (sleeps; process context) */
int rrxe_pernet_register(void (*exit)(struct net *net));
void rrxe_pernet_unregister(void);

/* ib_umem */
struct ib_umem *rrxe_umem_get(struct ib_device *dev, u64 start, u64 len, int access);
size_t rrxe_umem_num_pages(struct ib_umem *umem);
/* Fills pages[0..n) with the umem's pages; returns how many were written. */
size_t rrxe_umem_pages(struct ib_umem *umem, struct page **pages, size_t n);
void *rrxe_page_address(struct page *page);

/* copies between kernel buffers and memory that userspace may be writing concurrently */
void rrxe_memcpy(void *dst, const void *src, size_t len);
u32 rrxe_load_acquire32(const u32 *addr);
void rrxe_store_release32(u32 *addr, u32 val);

/* vmalloc'ed rings shared with userspace */
void *rrxe_vmalloc_user(size_t size);
u64 rrxe_mmap_entry_offset(const struct rdma_user_mmap_entry *entry);

/* udata */
int rrxe_udata_copy_to(struct ib_udata *udata, const void *src, size_t len);
struct ib_ucontext *rrxe_udata_ucontext(struct ib_udata *udata);

/* completion and async events */
void rrxe_cq_comp_handler(struct ib_cq *cq);
void rrxe_srq_event(struct ib_srq *srq, int event);
void rrxe_cq_event(struct ib_cq *cq, int event);
void rrxe_qp_event(struct ib_qp *qp, int event);

/* work items on the unbound system workqueue */
struct work_struct;
void rrxe_work_init(struct work_struct *work, void (*fn)(struct work_struct *));
bool rrxe_work_queue(struct work_struct *work);

/* hw counters */
void rrxe_hw_stats_set(struct rdma_hw_stats *stats, int index, u64 value);

/* time */
unsigned long rrxe_usecs_to_jiffies(u64 usecs);

/*
 * Exported functions, not shims: redeclared (no body in shim.c) so that bindgen, whose
 * rrxe run covers the rdma headers and this file, emits them; the kernel crate does not
 * bind them. shim.c includes the kernel's headers first, so a redeclaration that drifts
 * from the kernel's prototype fails to compile.
 */
void dst_release(struct dst_entry *dst);
struct net_device *__ip_dev_find(struct net *net, __be32 addr, bool devref);
struct net_device *ipv6_dev_find(struct net *net, const struct in6_addr *addr,
				 struct net_device *dev);
unsigned int netif_get_flags(const struct net_device *dev);
void vfree(const void *addr);
int remap_vmalloc_range(struct vm_area_struct *vma, void *addr, unsigned long pgoff);

#endif /* RRXE_SHIM_H */
