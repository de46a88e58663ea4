/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rrxe C shim: the part of the kernel API that Rust cannot call through bindgen, and
 * nothing else. Each prototype is both the C declaration and bindgen input, so the Rust
 * side is generated, never hand-written. A function the kernel exports is never wrapped
 * on its own: rust/kabi calls it directly, through kernel::bindings or the declarations
 * in section 4. The shim calls exported functions only inside helpers that need C for
 * another reason (route lookups, the tunnel socket, pernet registration). The bodies
 * (rust/kabi/shim.c) follow the same sections:
 *
 * 1. Inline and macro wrappers. One out-of-line function per static inline function or
 *    macro (dev_put, spin_lock_bh, INIT_WORK, smp_load_acquire, ...), including the
 *    alloc_hooks() macros such as vmalloc_user() and functions that are exported only
 *    under some configurations (consume_skb() is inline without CONFIG_TRACEPOINTS).
 *    Nothing beyond the call and returning its result.
 *
 * 2. C-only helpers. Code that needs C rather than a call: fields inside anonymous
 *    unions, structs with unions built by designated initialisers (struct ib_event),
 *    flexible arrays, a static pernet_operations (register_pernet_subsys() keeps a
 *    pointer to it), loops written as macros (for_each_sgtable_page), and copies of
 *    memory that another context writes concurrently: an out-of-line C memcpy is the
 *    kernel's ordinary practice there, while the same copy in Rust would be a data race
 *    (and a Rust call to the memcpy symbol may be lowered to the compiler's intrinsic).
 *
 * 3. Packet path, modelled on rdma_rxe's drivers/infiniband/sw/rxe/rxe_net.c (skb
 *    allocation, UDP/IP header push, route lookup, ip_local_out, the UDP tunnel socket).
 *    It is in C because almost nothing it uses is callable from Rust: IPCB()/IP6CB() are
 *    macros over skb->cb; __skb_push, skb_reset_network_header, skb_dst_set,
 *    ip6_flow_hdr, LL_RESERVED_SPACE and net_xmit_eval are inline or macros;
 *    ip_route_output_key() is inline, and ip6_dst_lookup_flow() (exported) takes a
 *    struct flowi6 whose fields (flowi6_oif, flowi6_proto) are macros over the shared
 *    flowi_common, so the flow keys are built here; udp_sock_create() is inline and the
 *    tunnel configuration structs are filled here, and the socket is released here too
 *    (udp_tunnel_sock_release() takes sock->sk, a struct sock that the kernel crate's
 *    bindings and rrxe's each declare as a different Rust type). The functions take the
 *    header fields as arguments; which values to send is decided in Rust.
 *
 * 4. Exported functions, redeclared (no body in shim.c). rrxe's bindgen run covers the
 *    rdma headers, this file and a few functions it names; the kernel crate does not
 *    bind these, so they are declared here for bindgen to emit. shim.c includes the
 *    kernel's own headers before this one, so a declaration here that drifts from the
 *    kernel's fails to compile. Exported functions that kernel::bindings already has
 *    (skb_put, cancel_work_sync) are called from there and not repeated.
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
struct ib_srq;
struct ib_qp;
struct page;
struct vm_area_struct;
struct rdma_user_mmap_entry;
struct rdma_hw_stats;
struct work_struct;
typedef struct spinlock spinlock_t;

/* ---- 1. inline and macro wrappers ---- */

/* netdevice */
struct net_device *rrxe_netdev_from_notifier_info(void *info);	/* inline */
void rrxe_netdev_put(struct net_device *ndev);			/* dev_put: inline */
unsigned int rrxe_netdev_mtu(const struct net_device *ndev);	/* READ_ONCE */
bool rrxe_netdev_is_vlan(const struct net_device *ndev);	/* is_vlan_dev: inline */
/* ib_get_curr_port_state() == IB_PORT_ACTIVE: inline */
bool rrxe_netdev_port_active(const struct net_device *ndev);
const char *rrxe_netdev_name(const struct net_device *ndev);	/* inline */
struct net *rrxe_netdev_net(const struct net_device *ndev);	/* dev_net: inline */
struct net_device *rrxe_dst_dev(const struct dst_entry *dst);	/* dst_dev: inline */
struct net *rrxe_sock_net(const struct sock *sk);		/* inline */

/* ib_device */
void rrxe_ib_mark_name_assigned_by_user(struct ib_device *ibdev);	/* inline */

/* cpumask */
/* inline on SMP, a macro on UP */
unsigned int rrxe_num_possible_cpus(void);

/* spinlocks: the packet path runs in softirq and in process context with BH off */
void rrxe_spin_lock_bh(spinlock_t *lock);
void rrxe_spin_unlock_bh(spinlock_t *lock);
int rrxe_spin_trylock_bh(spinlock_t *lock);
unsigned long rrxe_spin_lock_irqsave(spinlock_t *lock);
void rrxe_spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags);
int rrxe_spin_trylock_irqsave(spinlock_t *lock, unsigned long *flags);

/* sk_buff */
void rrxe_skb_drop(struct sk_buff *skb);			/* kfree_skb: inline */
/* consume_skb: inline unless CONFIG_TRACEPOINTS */
void rrxe_skb_consume(struct sk_buff *skb);

/* ib_umem and pages */
/* ib_umem_get_va: inline */
struct ib_umem *rrxe_umem_get(struct ib_device *dev, u64 start, u64 len, int access);
size_t rrxe_umem_num_pages(struct ib_umem *umem);		/* inline */
/* inline unless HIGHMEM (then exported: configuration-dependent, like consume_skb) */
void *rrxe_page_address(struct page *page);

/* ordered accesses to memory shared with userspace: macros */
u32 rrxe_load_acquire32(const u32 *addr);
void rrxe_store_release32(u32 *addr, u32 val);
/* ATOMIC WRITE: one 8-byte store (WRITE_ONCE on an aligned address) */
void rrxe_write_once64(u64 *addr, u64 val);
/* FLUSH to global visibility: wmb() */
void rrxe_wmb(void);

/* vmalloc'ed rings shared with userspace */
void *rrxe_vmalloc_user(size_t size);				/* alloc_hooks macro */
u64 rrxe_mmap_entry_offset(const struct rdma_user_mmap_entry *entry);	/* inline */

/* udata */
int rrxe_udata_copy_to(struct ib_udata *udata, const void *src, size_t len); /* inline */
/* rdma_udata_to_uverbs_attr_bundle()->context: inline */
struct ib_ucontext *rrxe_udata_ucontext(struct ib_udata *udata);

/* work items on rrxe's workqueue (unbound, high priority) */
/* INIT_WORK: macro */
void rrxe_work_init(struct work_struct *work, void (*fn)(struct work_struct *));
bool rrxe_work_queue(struct work_struct *work);			/* queue_work: inline */
int rrxe_wq_create(void);	/* the module's workqueue: a static here, not a Rust global */
void rrxe_wq_destroy(void);

/* whether the caller may sleep: not in interrupt or softirq context, BH, interrupts or
 * (where counted) preemption not disabled: !in_atomic() && !irqs_disabled(), macros */
bool rrxe_may_sleep(void);

/* time */
unsigned long rrxe_usecs_to_jiffies(u64 usecs);			/* inline */

/* The driver attribute table of a resource dump: nla_nest_start(RDMA_NLDEV_ATTR_DRIVER),
 * then nla_nest_end (ok) or nla_nest_cancel. */
struct nlattr *rrxe_nla_nest_driver(struct sk_buff *msg);
void rrxe_nla_nest_end(struct sk_buff *msg, struct nlattr *nest, bool ok);

/* ---- 2. C-only helpers ---- */

/*
 * Copies the first 6 bytes of the hardware address; returns false if there is none
 * (a C copy: dev_addr_set() may be rewriting the buffer while it is read).
 */
bool rrxe_netdev_mac(const struct net_device *ndev, u8 *mac);
/* skb->dev (inside sk_buff's anonymous unions) */
struct net_device *rrxe_skb_dev(const struct sk_buff *skb);

/* pernet_operations whose exit calls `exit(net)` (sleeps; process context) */
int rrxe_pernet_register(void (*exit)(struct net *net));
void rrxe_pernet_unregister(void);

/* Fills pages[0..n) with the umem's pages; returns how many were written. */
size_t rrxe_umem_pages(struct ib_umem *umem, struct page **pages, size_t n);

/*
 * On-demand paging (ib_umem_odp): struct ib_umem_odp embeds the ib_umem these take and
 * return (container_of), its page list and mutex are fields, the notifier ops are a
 * static struct, HMM_PFN_* and hmm_pfn_to_page() are macros and inline. Without
 * CONFIG_INFINIBAND_ON_DEMAND_PAGING every call fails with -EOPNOTSUPP / NULL.
 */
bool rrxe_odp_enabled(void);
/*
 * ib_umem_odp_get() over [start, start + len), with odp->private = owner. Invalidations
 * (process context, umem_mutex held, before the pages go) call inval(owner, start, end,
 * refault), refault false when the range is being unmapped; every umem passes the same
 * inval. Released with ib_umem_release().
 */
struct ib_umem *rrxe_odp_get(struct ib_device *dev, u64 start, u64 len, int access,
			     void (*inval)(void *owner, u64 start, u64 end, bool refault),
			     void *owner);
/* First address (page-aligned) and number of pages the umem spans. */
u64 rrxe_odp_start(struct ib_umem *umem);
size_t rrxe_odp_num_pages(struct ib_umem *umem);
/*
 * Faults [va, va + len) in (for writing if write) and returns with umem_mutex held (>= 0)
 * or -errno without it; may sleep.
 */
int rrxe_odp_fault_lock(struct ib_umem *umem, u64 va, u64 len, bool write);
/* Kernel address of page idx if present (umem_mutex held), else NULL. */
void *rrxe_odp_page(struct ib_umem *umem, size_t idx);
void rrxe_odp_unlock(struct ib_umem *umem);

/* copies between kernel buffers and memory that userspace may be writing concurrently */
void rrxe_memcpy(void *dst, const void *src, size_t len);

/* completion and async events: call the consumer's handler, if any */
void rrxe_cq_comp_handler(struct ib_cq *cq);
void rrxe_srq_event(struct ib_srq *srq, int event);
void rrxe_cq_event(struct ib_cq *cq, int event);
void rrxe_qp_event(struct ib_qp *qp, int event);

/* hw counters (value[] is a flexible array; out-of-range indexes are ignored) */
void rrxe_hw_stats_set(struct rdma_hw_stats *stats, int index, u64 value);

/* ---- 3. packet path (as rdma_rxe's rxe_net.c) ---- */

/* A transmit skb with headroom for link, IPv6 and UDP headers and `len` bytes of tailroom. */
struct sk_buff *rrxe_skb_alloc_tx(struct net_device *ndev, unsigned int len);
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

/* Route lookups; NULL if there is no route. The caller releases with dst_release(). */
struct dst_entry *rrxe_route4(struct net *net, int oif, __be32 saddr, __be32 daddr);
struct dst_entry *rrxe_route6(struct net *net, int oif, const struct in6_addr *saddr,
			      const struct in6_addr *daddr);

/* UDP tunnel socket on port 4791; rcv runs in softirq and always consumes the skb. */
struct socket *rrxe_udp_tunnel_open(struct net *net, bool v6,
				    int (*rcv)(struct sock *sk, struct sk_buff *skb));
/* udp_tunnel_sock_release() on the socket's sock: undoes rrxe_udp_tunnel_open. */
void rrxe_udp_tunnel_close(struct socket *sock);

/* ---- 4. exported functions, redeclared for bindgen (see the top comment) ---- */

void dst_release(struct dst_entry *dst);
struct net_device *__ip_dev_find(struct net *net, __be32 addr, bool devref);
struct net_device *ipv6_dev_find(struct net *net, const struct in6_addr *addr,
				 struct net_device *dev);
unsigned int netif_get_flags(const struct net_device *dev);
void vfree(const void *addr);
int remap_vmalloc_range(struct vm_area_struct *vma, void *addr, unsigned long pgoff);

#endif /* RRXE_SHIM_H */
