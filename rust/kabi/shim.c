// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe C shim: bodies for the prototypes in include/rrxe_shim.h, whose top comment says
 * what belongs here: (1) wrappers for static inline functions and macros, (2) C-only
 * helpers, (3) the packet path modelled on rdma_rxe's rxe_net.c. Exported kernel
 * functions are called from Rust directly and have no body here; including the kernel's
 * headers before rrxe_shim.h makes the compiler check the redeclarations in its
 * section 4 against them.
 */
#include <linux/netdevice.h>
#include <linux/if_vlan.h>
#include <linux/cpumask.h>
#include <linux/inetdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <linux/vmalloc.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/uaccess.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/addrconf.h>
#include <net/dst.h>
#include <net/route.h>
#include <net/ip6_route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <linux/hmm.h>
#include <rdma/uverbs_ioctl.h>
#include "rrxe_shim.h"

/* ---- 1. inline and macro wrappers ---- */

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

bool rrxe_netdev_is_vlan(const struct net_device *ndev)
{
	return is_vlan_dev(ndev);
}

bool rrxe_netdev_port_active(const struct net_device *ndev)
{
	return ib_get_curr_port_state((struct net_device *)ndev) == IB_PORT_ACTIVE;
}

const char *rrxe_netdev_name(const struct net_device *ndev)
{
	return netdev_name(ndev);
}

struct net *rrxe_netdev_net(const struct net_device *ndev)
{
	return dev_net(ndev);
}

struct net_device *rrxe_dst_dev(const struct dst_entry *dst)
{
	return dst_dev(dst);
}

struct net *rrxe_sock_net(const struct sock *sk)
{
	return sock_net(sk);
}

void rrxe_ib_mark_name_assigned_by_user(struct ib_device *ibdev)
{
	ib_mark_name_assigned_by_user(ibdev);
}

unsigned int rrxe_num_possible_cpus(void)
{
	return num_possible_cpus();
}

void rrxe_spin_lock_bh(spinlock_t *lock)
{
	spin_lock_bh(lock);
}

void rrxe_spin_unlock_bh(spinlock_t *lock)
{
	spin_unlock_bh(lock);
}

int rrxe_spin_trylock_bh(spinlock_t *lock)
{
	return spin_trylock_bh(lock);
}

unsigned long rrxe_spin_lock_irqsave(spinlock_t *lock)
{
	unsigned long flags;

	spin_lock_irqsave(lock, flags);
	return flags;
}

void rrxe_spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags)
{
	spin_unlock_irqrestore(lock, flags);
}

int rrxe_spin_trylock_irqsave(spinlock_t *lock, unsigned long *flags)
{
	return spin_trylock_irqsave(lock, *flags);
}

void rrxe_skb_drop(struct sk_buff *skb)
{
	kfree_skb(skb);
}

void rrxe_skb_consume(struct sk_buff *skb)
{
	consume_skb(skb);
}

struct ib_umem *rrxe_umem_get(struct ib_device *dev, u64 start, u64 len, int access)
{
	return ib_umem_get_va(dev, start, len, access);
}

size_t rrxe_umem_num_pages(struct ib_umem *umem)
{
	return ib_umem_num_pages(umem);
}

void *rrxe_page_address(struct page *page)
{
	return page_address(page);
}

u32 rrxe_load_acquire32(const u32 *addr)
{
	return smp_load_acquire(addr);
}

void rrxe_store_release32(u32 *addr, u32 val)
{
	smp_store_release(addr, val);
}

void rrxe_write_once64(u64 *addr, u64 val)
{
	WRITE_ONCE(*addr, val);
}

void rrxe_wmb(void)
{
	wmb();
}

void *rrxe_vmalloc_user(size_t size)
{
	return vmalloc_user(size);
}

u64 rrxe_mmap_entry_offset(const struct rdma_user_mmap_entry *entry)
{
	return rdma_user_mmap_get_offset(entry);
}

int rrxe_udata_copy_to(struct ib_udata *udata, const void *src, size_t len)
{
	return ib_copy_to_udata(udata, (void *)src, len);
}

struct ib_ucontext *rrxe_udata_ucontext(struct ib_udata *udata)
{
	return rdma_udata_to_uverbs_attr_bundle(udata)->context;
}

void rrxe_work_init(struct work_struct *work, void (*fn)(struct work_struct *))
{
	INIT_WORK(work, fn);
}

/*
 * Work items run on the module's own unbound workqueue. WQ_MEM_RECLAIM: storage consumers
 * (NVMe-oF, NFS/RDMA) write back through it. Not WQ_HIGHPRI: its workers run at nice -20,
 * and the scheduler weighs a nice 0 task at about 1% of one of them: under a stream the
 * debug kernel could not keep up with, short commands took twice as long as with the
 * workers at nice 0. A softirq, whose work this is, runs at most about 2 ms before the
 * rest waits for ksoftirqd at normal priority; a work item has no such budget.
 */
static struct workqueue_struct *rrxe_wq;

int rrxe_wq_create(void)
{
	rrxe_wq = alloc_workqueue("rrxe", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return rrxe_wq ? 0 : -ENOMEM;
}

void rrxe_wq_destroy(void)
{
	destroy_workqueue(rrxe_wq);
	rrxe_wq = NULL;
}

bool rrxe_work_queue(struct work_struct *work)
{
	return queue_work(rrxe_wq, work);
}

bool rrxe_may_sleep(void)
{
	return !in_atomic() && !irqs_disabled();
}

unsigned long rrxe_usecs_to_jiffies(u64 usecs)
{
	return usecs_to_jiffies(usecs);
}

struct nlattr *rrxe_nla_nest_driver(struct sk_buff *msg)
{
	return nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
}

void rrxe_nla_nest_end(struct sk_buff *msg, struct nlattr *nest, bool ok)
{
	if (ok)
		nla_nest_end(msg, nest);
	else
		nla_nest_cancel(msg, nest);
}

/* ---- 2. C-only helpers ---- */

bool rrxe_netdev_mac(const struct net_device *ndev, u8 *mac)
{
	if (ndev->addr_len < ETH_ALEN)
		return false;
	memcpy(mac, ndev->dev_addr, ETH_ALEN);
	return true;
}

struct net_device *rrxe_skb_dev(const struct sk_buff *skb)
{
	return skb->dev;
}

static void (*rrxe_pernet_exit_fn)(struct net *net);

static void rrxe_pernet_exit(struct net *net)
{
	if (rrxe_pernet_exit_fn)
		rrxe_pernet_exit_fn(net);
}

static struct pernet_operations rrxe_pernet_ops = {
	.exit = rrxe_pernet_exit,
};

int rrxe_pernet_register(void (*exit)(struct net *net))
{
	rrxe_pernet_exit_fn = exit;
	return register_pernet_subsys(&rrxe_pernet_ops);
}

void rrxe_pernet_unregister(void)
{
	unregister_pernet_subsys(&rrxe_pernet_ops);
}

size_t rrxe_umem_pages(struct ib_umem *umem, struct page **pages, size_t n)
{
	struct sg_page_iter it;
	size_t i = 0;

	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (i == n)
			break;
		pages[i++] = sg_page_iter_page(&it);
	}
	return i;
}

#ifdef CONFIG_INFINIBAND_ON_DEMAND_PAGING
static void (*rrxe_odp_inval_fn)(void *owner, u64 start, u64 end, bool refault);

static bool rrxe_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp, notifier);
	u64 start, end;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max_t(u64, ib_umem_start(odp), range->start);
	end = min_t(u64, ib_umem_end(odp), range->end);
	if (odp->private && start < end)
		rrxe_odp_inval_fn(odp->private, start, end,
				  range->event != MMU_NOTIFY_UNMAP &&
				  range->event != MMU_NOTIFY_RELEASE);
	ib_umem_odp_unmap_dma_pages(odp, start, end);
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops rrxe_odp_ops = {
	.invalidate = rrxe_odp_invalidate,
};

bool rrxe_odp_enabled(void)
{
	return true;
}

struct ib_umem *rrxe_odp_get(struct ib_device *dev, u64 start, u64 len, int access,
			     void (*inval)(void *owner, u64 start, u64 end, bool refault),
			     void *owner)
{
	struct ib_umem_odp *odp;

	WRITE_ONCE(rrxe_odp_inval_fn, inval);
	odp = ib_umem_odp_get(dev, start, len, access, &rrxe_odp_ops);
	if (IS_ERR(odp))
		return ERR_CAST(odp);
	mutex_lock(&odp->umem_mutex);
	odp->private = owner;
	mutex_unlock(&odp->umem_mutex);
	return &odp->umem;
}

u64 rrxe_odp_start(struct ib_umem *umem)
{
	return ib_umem_start(to_ib_umem_odp(umem));
}

size_t rrxe_odp_num_pages(struct ib_umem *umem)
{
	return ib_umem_odp_num_pages(to_ib_umem_odp(umem));
}

int rrxe_odp_fault_lock(struct ib_umem *umem, u64 va, u64 len, bool write)
{
	return ib_umem_odp_map_dma_and_lock(to_ib_umem_odp(umem), va, len,
					    write ? HMM_PFN_WRITE : 0, true);
}

void *rrxe_odp_page(struct ib_umem *umem, size_t idx)
{
	struct ib_umem_odp *odp = to_ib_umem_odp(umem);
	unsigned long pfn;

	if (idx >= ib_umem_odp_num_pages(odp))
		return NULL;
	pfn = odp->map.pfn_list[idx];
	if (!(pfn & HMM_PFN_VALID))
		return NULL;
	return page_address(hmm_pfn_to_page(pfn));
}

void rrxe_odp_unlock(struct ib_umem *umem)
{
	mutex_unlock(&to_ib_umem_odp(umem)->umem_mutex);
}
#else
bool rrxe_odp_enabled(void)
{
	return false;
}

struct ib_umem *rrxe_odp_get(struct ib_device *dev, u64 start, u64 len, int access,
			     void (*inval)(void *owner, u64 start, u64 end, bool refault),
			     void *owner)
{
	return ERR_PTR(-EOPNOTSUPP);
}

u64 rrxe_odp_start(struct ib_umem *umem)
{
	return 0;
}

size_t rrxe_odp_num_pages(struct ib_umem *umem)
{
	return 0;
}

int rrxe_odp_fault_lock(struct ib_umem *umem, u64 va, u64 len, bool write)
{
	return -EOPNOTSUPP;
}

void *rrxe_odp_page(struct ib_umem *umem, size_t idx)
{
	return NULL;
}

void rrxe_odp_unlock(struct ib_umem *umem)
{
}
#endif

void rrxe_memcpy(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
}

void rrxe_cq_comp_handler(struct ib_cq *cq)
{
	if (cq->comp_handler)
		cq->comp_handler(cq, cq->cq_context);
}

void rrxe_srq_event(struct ib_srq *srq, int event)
{
	struct ib_event ev = {
		.device = srq->device,
		.element.srq = srq,
		.event = event,
	};

	if (srq->event_handler)
		srq->event_handler(&ev, srq->srq_context);
}

void rrxe_cq_event(struct ib_cq *cq, int event)
{
	struct ib_event ev = {
		.device = cq->device,
		.element.cq = cq,
		.event = event,
	};

	if (cq->event_handler)
		cq->event_handler(&ev, cq->cq_context);
}

void rrxe_qp_event(struct ib_qp *qp, int event)
{
	struct ib_event ev = {
		.device = qp->device,
		.element.qp = qp,
		.event = event,
	};

	if (qp->event_handler)
		qp->event_handler(&ev, qp->qp_context);
}

void rrxe_hw_stats_set(struct rdma_hw_stats *stats, int index, u64 value)
{
	if (index >= 0 && index < stats->num_counters)
		stats->value[index] = value;
}

/* ---- 3. packet path (as rdma_rxe's rxe_net.c; see rrxe_shim.h for why in C) ---- */

#define RRXE_HDR_ROOM (sizeof(struct ipv6hdr) + sizeof(struct udphdr))

struct sk_buff *rrxe_skb_alloc_tx(struct net_device *ndev, unsigned int len)
{
	unsigned int room = LL_RESERVED_SPACE(ndev) + RRXE_HDR_ROOM;
	struct sk_buff *skb = alloc_skb(room + len, GFP_ATOMIC);

	if (!skb)
		return NULL;
	skb_reserve(skb, room);
	skb->dev = ndev;
	return skb;
}

int rrxe_skb_rx_view(struct sk_buff *skb, u8 **l3, unsigned int *l3_len, bool *v6)
{
	int off;

	if (skb_linearize(skb))
		return -ENOMEM;
	if (skb->protocol == htons(ETH_P_IP))
		*v6 = false;
	else if (skb->protocol == htons(ETH_P_IPV6))
		*v6 = true;
	else
		return -EPROTONOSUPPORT;
	off = skb_network_offset(skb);	/* negative: the IP header is before data */
	if (off > 0)
		return -EINVAL;
	*l3 = skb_network_header(skb);
	*l3_len = skb->len - off;
	return 0;
}

/* UDP header to port 4791; checksum 0 (the ICRC protects the payload) */
static void rrxe_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh = __skb_push(skb, sizeof(*uh));

	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

void rrxe_skb_push_ip4(struct sk_buff *skb, struct dst_entry *dst, __be32 saddr,
		       __be32 daddr, u8 tos, u8 ttl, u16 sport)
{
	struct iphdr *iph;

	rrxe_push_udp(skb, sport);

	skb_scrub_packet(skb, false);
	skb_clear_hash(skb);
	skb_dst_set(skb, dst_clone(dst));
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	iph = __skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->protocol = IPPROTO_UDP;
	iph->tos = tos;
	iph->ttl = ttl;
	iph->daddr = daddr;
	iph->saddr = saddr;
	iph->check = 0;
	__ip_select_ident(dev_net(dst->dev), iph, 1);
	skb->protocol = htons(ETH_P_IP);
}

void rrxe_skb_push_ip6(struct sk_buff *skb, struct dst_entry *dst,
		       const struct in6_addr *saddr, const struct in6_addr *daddr,
		       u8 tclass, u8 hop_limit, u16 sport)
{
	struct ipv6hdr *ip6h;

	rrxe_push_udp(skb, sport);

	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	skb_dst_set(skb, dst_clone(dst));
	ip6h = __skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, tclass, 0);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = hop_limit;
	ip6h->saddr = *saddr;
	ip6h->daddr = *daddr;
	skb->protocol = htons(ETH_P_IPV6);
}

u8 *rrxe_skb_l3(struct sk_buff *skb, unsigned int *len)
{
	*len = skb_tail_pointer(skb) - skb_network_header(skb);
	return skb_network_header(skb);
}

int rrxe_ip_send(struct sk_buff *skb, bool v6)
{
	struct net *net = dev_net(skb_dst(skb)->dev);
	int err;

	if (v6)
		err = ip6_local_out(net, NULL, skb);
	else
		err = ip_local_out(net, NULL, skb);
	err = net_xmit_eval(err);
	/* NET_XMIT_DROP (a qdisc or a tc action refused the packet) is positive: make it an
	 * errno, or the caller would take it for success and never count it. */
	return err > 0 ? -ENOBUFS : err;
}

struct dst_entry *rrxe_route4(struct net *net, int oif, __be32 saddr, __be32 daddr)
{
	struct flowi4 fl = {
		.flowi4_oif = oif,
		.saddr = saddr,
		.daddr = daddr,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt = ip_route_output_key(net, &fl);

	if (IS_ERR(rt))
		return NULL;
	return &rt->dst;
}

struct dst_entry *rrxe_route6(struct net *net, int oif, const struct in6_addr *saddr,
			      const struct in6_addr *daddr)
{
	struct flowi6 fl = {
		.flowi6_oif = oif,
		.saddr = *saddr,
		.daddr = *daddr,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst = ip6_dst_lookup_flow(net, NULL, &fl, NULL);

	if (IS_ERR(dst))
		return NULL;
	if (dst->error) {
		dst_release(dst);
		return NULL;
	}
	return dst;
}

struct socket *rrxe_udp_tunnel_open(struct net *net, bool v6,
				    int (*rcv)(struct sock *sk, struct sk_buff *skb))
{
	struct udp_port_cfg cfg = {};
	struct udp_tunnel_sock_cfg tnl = {};
	struct socket *sock;
	int err;

	cfg.local_udp_port = htons(ROCE_V2_UDP_DPORT);
	if (v6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
		err = udp_sock_create6(net, &cfg, &sock);
	} else {
		cfg.family = AF_INET;
		err = udp_sock_create4(net, &cfg, &sock);
	}
	if (err)
		return ERR_PTR(err);
	tnl.encap_type = 1;
	tnl.encap_rcv = rcv;
	setup_udp_tunnel_sock(net, sock->sk, &tnl);
	return sock;
}

void rrxe_udp_tunnel_close(struct socket *sock)
{
	udp_tunnel_sock_release(sock->sk);
}
