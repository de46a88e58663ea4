// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe_ktest: the kernel-consumer verbs of an rrxe device, driven the way an in-kernel
 * ULP drives them (selftests/kverbs.sh loads it; never part of rrxe.ko).
 *
 * On load it finds the device named by the "dev" parameter, connects two RC QPs of one
 * PD on that device to each other (kernel QPs, CQ polled from a workqueue, one QP
 * receiving from its own RQ and the other from a kernel SRQ), moves data both ways and
 * checks it, then registers memory the way storage ULPs do (ib_alloc_mr, ib_map_mr_sg,
 * IB_WR_REG_MR, IB_WR_LOCAL_INV, SEND with invalidate, key generations), and prints one
 * KTAP line per case to the kernel log. The load succeeds only if every case passed;
 * the script reads the lines from dmesg.
 */
#include <linux/completion.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev = "rrxe0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "name of the rrxe device to test");

#define KT "rrxe_ktest: "
#define BUF_LEN 8192
#define WAIT (5 * HZ)
#define NCASES 14
/* The fast-registered region: 6000 bytes from 100 bytes into buffer 2 (two pages). */
#define FR_OFF 100
#define FR_LEN 6000

struct op {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
};

struct kt {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_srq *srq;
	struct ib_qp *a, *b;
	u8 *buf[4];
	u64 dma[4];
	struct completion srq_limit;
	struct ib_mr *mr;
	struct scatterlist sg;
	bool sg_mapped;
	union ib_gid gid;
	int passed, failed, n;
	/* Operations in flight: not on the stack, so a completion that comes after a
	 * timeout still lands in live memory (the CQ is freed before the module is). */
	struct op ops[32];
	int nops;
};

static void op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct op *o = container_of(wc->wr_cqe, struct op, cqe);

	o->wc = *wc;
	complete(&o->done);
}

/* A fresh operation from the pool; the pool is sized for every case below. */
static struct op *op_new(struct kt *t)
{
	struct op *o = &t->ops[t->nops++ % ARRAY_SIZE(t->ops)];

	memset(o, 0, sizeof(*o));
	o->cqe.done = op_done;
	init_completion(&o->done);
	return o;
}

/* Waits for an operation's completion; false (and a diagnostic) if none came. */
static bool op_wait(struct op *o, const char *what)
{
	if (!wait_for_completion_timeout(&o->done, WAIT)) {
		pr_info(KT "# %s: no completion within 5 s\n", what);
		return false;
	}
	return true;
}

static void report(struct kt *t, bool ok, const char *name)
{
	t->n++;
	if (ok)
		t->passed++;
	else
		t->failed++;
	pr_info(KT "%s %d %s\n", ok ? "ok" : "not ok", t->n, name);
}

static void srq_event(struct ib_event *ev, void *ctx)
{
	struct kt *t = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		complete(&t->srq_limit);
}

static int to_rts(struct kt *t, struct ib_qp *qp, u32 dest, union ib_gid *gid)
{
	struct ib_qp_attr attr = {};
	int ret;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	ret = ib_modify_qp(qp, &attr,
			   IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = dest;
	attr.rq_psn = 0;
	attr.max_dest_rd_atomic = 4;
	attr.min_rnr_timer = 1;
	attr.ah_attr.type = rdma_ah_find_type(t->ibdev, 1);
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	/* GID index 1: the IPv4 address of the device's netdev. */
	rdma_ah_set_grh(&attr.ah_attr, gid, 0, 1, 64, 0);
	ret = ib_modify_qp(qp, &attr,
			   IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
				   IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
				   IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 0;
	attr.max_rd_atomic = 4;
	return ib_modify_qp(qp, &attr,
			    IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
				    IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC);
}

static struct ib_qp *make_qp(struct kt *t, struct ib_srq *srq)
{
	struct ib_qp_init_attr init = {
		.send_cq = t->cq,
		.recv_cq = t->cq,
		.srq = srq,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16,
			 .max_send_sge = 2, .max_recv_sge = srq ? 0 : 2 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};

	return ib_create_qp(t->pd, &init);
}

static int post_recv(struct kt *t, struct ib_qp *qp, struct ib_srq *srq, int i,
		     struct op *o)
{
	struct ib_sge sge = { .addr = t->dma[i], .length = BUF_LEN,
			      .lkey = t->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_cqe = &o->cqe, .sg_list = &sge, .num_sge = 1 };

	return srq ? ib_post_srq_recv(srq, &wr, NULL) : ib_post_recv(qp, &wr, NULL);
}

/* SEND of `len` bytes from buffer `from` on `qp` into a receive posted to `rqp`/`srq`
 * at buffer `to`; with immediate data if `imm`. */
static bool send_case(struct kt *t, struct ib_qp *qp, struct ib_qp *rqp, struct ib_srq *srq,
		      int from, int to, u32 len, bool imm)
{
	/* Two SGEs: the payload is gathered from both halves of the buffer. */
	struct ib_sge sge[2] = {
		{ .addr = t->dma[from], .length = len / 2, .lkey = t->pd->local_dma_lkey },
		{ .addr = t->dma[from] + len / 2, .length = len - len / 2,
		  .lkey = t->pd->local_dma_lkey },
	};
	struct ib_send_wr wr = {};
	struct op *s = op_new(t), *r = op_new(t);
	u32 i;

	for (i = 0; i < len; i++)
		t->buf[from][i] = (u8)(i * 7 + from + len);
	memset(t->buf[to], 0xee, BUF_LEN);
	if (post_recv(t, rqp, srq, to, r))
		return false;
	wr.wr_cqe = &s->cqe;
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.opcode = imm ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
	wr.ex.imm_data = cpu_to_be32(0x12345678);
	wr.send_flags = IB_SEND_SIGNALED;
	if (ib_post_send(qp, &wr, NULL))
		return false;
	if (!op_wait(s, "send") || !op_wait(r, "recv"))
		return false;
	if (s->wc.status != IB_WC_SUCCESS || r->wc.status != IB_WC_SUCCESS) {
		pr_info(KT "# status send %d recv %d\n", s->wc.status, r->wc.status);
		return false;
	}
	if (r->wc.opcode != IB_WC_RECV || r->wc.byte_len != len || r->wc.qp != rqp) {
		pr_info(KT "# recv opcode %d byte_len %u\n", r->wc.opcode, r->wc.byte_len);
		return false;
	}
	if (imm != !!(r->wc.wc_flags & IB_WC_WITH_IMM) ||
	    (imm && r->wc.ex.imm_data != cpu_to_be32(0x12345678))) {
		pr_info(KT "# immediate data wrong\n");
		return false;
	}
	if (memcmp(t->buf[from], t->buf[to], len) || t->buf[to][len] != 0xee) {
		pr_info(KT "# payload differs\n");
		return false;
	}
	return true;
}

/* RDMA WRITE into kernel memory through the PD's DMA MR key must fail: rrxe never lets a
 * peer reach kernel memory through a DMA MR. */
static bool write_refused(struct kt *t)
{
	struct ib_sge sge = { .addr = t->dma[0], .length = 64, .lkey = t->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {};
	struct op *s = op_new(t);

	memset(t->buf[1], 0x5a, 64);
	memset(t->buf[0], 0xa5, 64);
	wr.wr.wr_cqe = &s->cqe;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.remote_addr = t->dma[1];
	wr.rkey = t->pd->local_dma_lkey;
	if (ib_post_send(t->a, &wr.wr, NULL) || !op_wait(s, "write"))
		return false;
	if (s->wc.status != IB_WC_REM_ACCESS_ERR) {
		pr_info(KT "# write status %d, expected a remote access error\n", s->wc.status);
		return false;
	}
	return t->buf[1][0] == 0x5a && t->buf[1][63] == 0x5a;
}

/* Arms the SRQ limit at 3 with 4 receives posted; two SENDs leave 2: the event fires. */
static bool srq_limit_case(struct kt *t)
{
	struct ib_srq_attr attr = { .srq_limit = 3 };
	struct op *r[4], *s;
	struct ib_sge sge = { .addr = t->dma[0], .length = 16, .lkey = t->pd->local_dma_lkey };
	struct ib_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };
	int i;

	for (i = 0; i < 4; i++) {
		r[i] = op_new(t);
		if (post_recv(t, NULL, t->srq, 2 + (i & 1), r[i]))
			return false;
	}
	reinit_completion(&t->srq_limit);
	if (ib_modify_srq(t->srq, &attr, IB_SRQ_LIMIT))
		return false;
	for (i = 0; i < 2; i++) {
		s = op_new(t);
		wr.wr_cqe = &s->cqe;
		if (ib_post_send(t->a, &wr, NULL) || !op_wait(s, "send") ||
		    !op_wait(r[i], "recv") || s->wc.status != IB_WC_SUCCESS)
			return false;
	}
	if (!wait_for_completion_timeout(&t->srq_limit, WAIT)) {
		pr_info(KT "# no IB_EVENT_SRQ_LIMIT_REACHED\n");
		return false;
	}
	/* The event disarmed the limit. */
	if (ib_query_srq(t->srq, &attr) || attr.srq_limit != 0) {
		pr_info(KT "# limit after the event: %u\n", attr.srq_limit);
		return false;
	}
	/* The two receives left are flushed when the QP is destroyed; drain them now. */
	for (i = 2; i < 4; i++) {
		s = op_new(t);
		wr.wr_cqe = &s->cqe;
		if (ib_post_send(t->a, &wr, NULL) || !op_wait(s, "send") ||
		    !op_wait(r[i], "recv"))
			return false;
	}
	return true;
}

/* Both QPs back to RTS after an error case left them in the error state. */
static bool reconnect(struct kt *t)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	return !ib_modify_qp(t->a, &attr, IB_QP_STATE) && !ib_modify_qp(t->b, &attr, IB_QP_STATE) &&
	       !to_rts(t, t->a, t->b->qp_num, &t->gid) && !to_rts(t, t->b, t->a->qp_num, &t->gid);
}

/* Posts one signaled request on `qp` and waits; true if it completed with `want` (and,
 * on success, with completion opcode `op`). */
static bool post_wait(struct kt *t, struct ib_qp *qp, struct ib_send_wr *wr, struct op *o,
		      enum ib_wc_status want, enum ib_wc_opcode op, const char *what)
{
	wr->wr_cqe = &o->cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	if (ib_post_send(qp, wr, NULL) || !op_wait(o, what))
		return false;
	if (o->wc.status != want || (want == IB_WC_SUCCESS && o->wc.opcode != op)) {
		pr_info(KT "# %s: status %d opcode %d, expected status %d\n", what, o->wc.status,
			o->wc.opcode, want);
		return false;
	}
	return true;
}

/* IB_WR_REG_MR of the test MR on QP b with its current key. */
static bool reg_mr(struct kt *t, enum ib_wc_status want)
{
	struct ib_reg_wr wr = {};

	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = t->mr;
	wr.key = t->mr->rkey;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	return post_wait(t, t->b, &wr.wr, op_new(t), want, IB_WC_REG_MR, "reg_mr");
}

/* RDMA WRITE (or READ) of FR_LEN bytes between buffer `local` and the test MR's region
 * through `rkey`, posted on QP a. */
static bool rdma_op(struct kt *t, bool read, int local, u32 rkey, enum ib_wc_status want)
{
	struct ib_sge sge = { .addr = t->dma[local], .length = FR_LEN,
			      .lkey = t->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {};

	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.opcode = read ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
	wr.remote_addr = t->mr->iova;
	wr.rkey = rkey;
	return post_wait(t, t->a, &wr.wr, op_new(t), want,
			 read ? IB_WC_RDMA_READ : IB_WC_RDMA_WRITE, read ? "read" : "write");
}

static void fill(u8 *p, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(i * 13 + seed);
}

/* A WRITE through `rkey` must fail with a remote access error and leave the region as it
 * was; the QPs are connected again afterwards. */
static bool write_fails(struct kt *t, u32 rkey)
{
	u8 *region = t->buf[2] + FR_OFF;
	u8 before = region[0];

	fill(t->buf[0], FR_LEN, 0x77);
	if (!rdma_op(t, false, 0, rkey, IB_WC_REM_ACCESS_ERR))
		return false;
	if (region[0] != before) {
		pr_info(KT "# region changed through a refused rkey\n");
		return false;
	}
	return reconnect(t);
}

/* ib_alloc_mr + ib_map_mr_sg of two pages, REG_MR, then a peer's WRITE lands and its READ
 * returns the same bytes. */
static bool fastreg_case(struct kt *t)
{
	int n;

	t->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 4);
	if (IS_ERR(t->mr)) {
		pr_info(KT "# ib_alloc_mr: %ld\n", PTR_ERR(t->mr));
		return false;
	}
	sg_init_one(&t->sg, t->buf[2] + FR_OFF, FR_LEN);
	if (ib_dma_map_sg(t->ibdev, &t->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return false;
	t->sg_mapped = true;
	n = ib_map_mr_sg(t->mr, &t->sg, 1, NULL, PAGE_SIZE);
	if (n != 1 || t->mr->length != FR_LEN) {
		pr_info(KT "# ib_map_mr_sg: %d, length %llu\n", n, t->mr->length);
		return false;
	}
	ib_update_fast_reg_key(t->mr, ib_inc_rkey(t->mr->rkey));
	if (!reg_mr(t, IB_WC_SUCCESS))
		return false;
	memset(t->buf[2], 0, BUF_LEN);
	fill(t->buf[0], FR_LEN, 1);
	memset(t->buf[1], 0xee, BUF_LEN);
	if (!rdma_op(t, false, 0, t->mr->rkey, IB_WC_SUCCESS) ||
	    !rdma_op(t, true, 1, t->mr->rkey, IB_WC_SUCCESS))
		return false;
	if (memcmp(t->buf[2] + FR_OFF, t->buf[0], FR_LEN) || t->buf[2][FR_OFF - 1] ||
	    t->buf[2][FR_OFF + FR_LEN]) {
		pr_info(KT "# WRITE through the fast-registered rkey: region differs\n");
		return false;
	}
	if (memcmp(t->buf[1], t->buf[0], FR_LEN)) {
		pr_info(KT "# READ through the fast-registered rkey: data differs\n");
		return false;
	}
	return true;
}

/* LOCAL_INV, then the rkey is refused; registered again with the next key generation, the
 * new rkey works and the previous one is refused. */
static bool generation_case(struct kt *t)
{
	struct ib_send_wr inv = { .opcode = IB_WR_LOCAL_INV };
	u32 old = t->mr->rkey;

	inv.ex.invalidate_rkey = old;
	if (!post_wait(t, t->b, &inv, op_new(t), IB_WC_SUCCESS, IB_WC_LOCAL_INV, "local_inv") ||
	    !write_fails(t, old))
		return false;
	ib_update_fast_reg_key(t->mr, ib_inc_rkey(t->mr->rkey));
	if (!reg_mr(t, IB_WC_SUCCESS))
		return false;
	fill(t->buf[0], FR_LEN, 9);
	if (!rdma_op(t, false, 0, t->mr->rkey, IB_WC_SUCCESS) ||
	    memcmp(t->buf[2] + FR_OFF, t->buf[0], FR_LEN)) {
		pr_info(KT "# WRITE through the new key generation failed\n");
		return false;
	}
	return write_fails(t, old);
}

/* A SEND with invalidate: the receive reports the rkey with IB_WC_WITH_INVALIDATE, and the
 * MR no longer admits it. */
static bool send_inv_case(struct kt *t)
{
	struct ib_sge sge = { .addr = t->dma[0], .length = 64, .lkey = t->pd->local_dma_lkey };
	struct ib_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IB_WR_SEND_WITH_INV };
	struct op *r = op_new(t);
	u32 rkey = t->mr->rkey;

	if (post_recv(t, NULL, t->srq, 3, r))
		return false;
	wr.ex.invalidate_rkey = rkey;
	if (!post_wait(t, t->a, &wr, op_new(t), IB_WC_SUCCESS, IB_WC_SEND, "send_inv") ||
	    !op_wait(r, "recv"))
		return false;
	if (r->wc.status != IB_WC_SUCCESS || !(r->wc.wc_flags & IB_WC_WITH_INVALIDATE) ||
	    r->wc.ex.invalidate_rkey != rkey) {
		pr_info(KT "# recv status %d flags %#x rkey %#x\n", r->wc.status,
			r->wc.wc_flags, r->wc.ex.invalidate_rkey);
		return false;
	}
	return write_fails(t, rkey);
}

/* REG_MR of an MR that is still registered is refused. */
static bool reg_twice_case(struct kt *t)
{
	ib_update_fast_reg_key(t->mr, ib_inc_rkey(t->mr->rkey));
	return reg_mr(t, IB_WC_SUCCESS) && reg_mr(t, IB_WC_LOC_QP_OP_ERR) && reconnect(t);
}

/* IB_WR_REG_MR of the test MR on QP b with its next key and these access flags. */
static bool reg_mr_access(struct kt *t, int access)
{
	struct ib_reg_wr wr = {};

	ib_update_fast_reg_key(t->mr, ib_inc_rkey(t->mr->rkey));
	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = t->mr;
	wr.key = t->mr->rkey;
	wr.access = access;
	return post_wait(t, t->b, &wr.wr, op_new(t), IB_WC_SUCCESS, IB_WC_REG_MR, "reg_mr");
}

/* An IB_WR_ATOMIC_WRITE or IB_WR_FLUSH (an ib_rdma_wr: the SGE list names the 8 bytes,
 * or, for FLUSH, the range's length) through the test MR's rkey at `off` bytes into its
 * region, posted on QP a. */
static bool placement_op(struct kt *t, enum ib_wr_opcode opcode, u32 off, u32 len,
			 enum ib_wc_status want)
{
	struct ib_sge sge = { .addr = t->dma[0], .length = len, .lkey = t->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {};

	wr.wr.sg_list = &sge;
	wr.wr.num_sge = len ? 1 : 0;
	wr.wr.opcode = opcode;
	wr.remote_addr = t->mr->iova + off;
	wr.rkey = t->mr->rkey;
	return post_wait(t, t->a, &wr.wr, op_new(t), want,
			 opcode == IB_WR_FLUSH ? IB_WC_FLUSH : IB_WC_ATOMIC_WRITE,
			 opcode == IB_WR_FLUSH ? "flush" : "atomic_write");
}

/* ATOMIC WRITE of 8 bytes to an aligned address of the fast-registered region: they land. */
static bool atomic_write_case(struct kt *t)
{
	u32 off = ALIGN(t->mr->iova, 8) - t->mr->iova;
	static const u8 v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	memcpy(t->buf[0], v, 8);
	memset(t->buf[2], 0, BUF_LEN);
	if (!placement_op(t, IB_WR_ATOMIC_WRITE, off, 8, IB_WC_SUCCESS))
		return false;
	if (memcmp(t->buf[2] + FR_OFF + off, v, 8)) {
		pr_info(KT "# ATOMIC WRITE: the 8 bytes did not land\n");
		return false;
	}
	/* Misaligned: refused before it is sent (as an atomic's), the QP fails; connected
	 * again after. */
	return placement_op(t, IB_WR_ATOMIC_WRITE, off + 4, 8, IB_WC_LOC_LEN_ERR) &&
	       reconnect(t);
}

/* FLUSH (placement type global): refused by an MR and a QP without FLUSH_GLOBAL; with it,
 * a range inside the region and the whole MR succeed, a range beyond it is refused. */
static bool flush_case(struct kt *t)
{
	struct ib_send_wr inv = { .opcode = IB_WR_LOCAL_INV };
	struct ib_qp_attr attr = { .qp_access_flags = IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ | IB_ACCESS_FLUSH_GLOBAL };
	int acc = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;

	if (!placement_op(t, IB_WR_FLUSH, 0, 64, IB_WC_REM_ACCESS_ERR) || !reconnect(t))
		return false;
	inv.ex.invalidate_rkey = t->mr->rkey;
	if (!post_wait(t, t->b, &inv, op_new(t), IB_WC_SUCCESS, IB_WC_LOCAL_INV, "local_inv") ||
	    !reg_mr_access(t, acc | IB_ACCESS_FLUSH_GLOBAL) ||
	    ib_modify_qp(t->b, &attr, IB_QP_ACCESS_FLAGS))
		return false;
	if (!placement_op(t, IB_WR_FLUSH, 0, FR_LEN, IB_WC_SUCCESS) ||
	    !placement_op(t, IB_WR_FLUSH, 0, 0, IB_WC_SUCCESS))
		return false;
	return placement_op(t, IB_WR_FLUSH, 0, FR_LEN + 4096, IB_WC_REM_ACCESS_ERR) &&
	       reconnect(t);
}

static void run(struct kt *t)
{
	struct ib_srq_init_attr sinit = {
		.event_handler = srq_event,
		.srq_context = t,
		.attr = { .max_wr = 16, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	union ib_gid *gid = &t->gid;
	bool ok;
	int i;

	init_completion(&t->srq_limit);
	pr_info(KT "KTAP version 1\n");
	pr_info(KT "1..%d\n", NCASES);
	for (i = 0; i < 4; i++) {
		t->buf[i] = kzalloc(BUF_LEN + 64, GFP_KERNEL);
		if (!t->buf[i])
			goto out;
		t->dma[i] = ib_dma_map_single(t->ibdev, t->buf[i], BUF_LEN + 64,
					      DMA_BIDIRECTIONAL);
	}
	t->pd = ib_alloc_pd(t->ibdev, 0);
	t->cq = IS_ERR(t->pd) ? ERR_PTR(-EINVAL) :
				ib_alloc_cq(t->ibdev, t, 64, 0, IB_POLL_WORKQUEUE);
	t->srq = IS_ERR(t->cq) ? ERR_PTR(-EINVAL) : ib_create_srq(t->pd, &sinit);
	ok = !IS_ERR(t->pd) && !IS_ERR(t->cq) && !IS_ERR(t->srq);
	if (ok && (sinit.attr.max_wr < 16 || sinit.attr.max_sge < 1))
		ok = false;
	report(t, ok, "kernel PD, CQ (workqueue polling) and SRQ created");
	if (!ok)
		goto out;
	t->a = make_qp(t, NULL);
	t->b = IS_ERR(t->a) ? ERR_PTR(-EINVAL) : make_qp(t, t->srq);
	ok = !IS_ERR(t->a) && !IS_ERR(t->b) && !rdma_query_gid(t->ibdev, 1, 1, gid) &&
	     !to_rts(t, t->a, t->b->qp_num, gid) && !to_rts(t, t->b, t->a->qp_num, gid);
	report(t, ok, "two kernel RC QPs connected to each other (one on the SRQ)");
	if (!ok)
		goto out;
	report(t, send_case(t, t->a, t->b, t->srq, 0, 2, 3000, false),
	       "SEND 3000 B, two SGEs, into an SRQ receive: data exact");
	report(t, send_case(t, t->b, t->a, NULL, 1, 3, 5000, true),
	       "SEND with immediate 5000 B into an RQ receive: data and immediate exact");
	report(t, send_case(t, t->a, t->b, t->srq, 3, 0, 0, false),
	       "zero-length SEND into an SRQ receive");
	report(t, srq_limit_case(t), "SRQ limit event fires once and disarms the limit");
	report(t, write_refused(t),
	       "RDMA WRITE through the DMA MR key: remote access error, memory unchanged");
	ok = reconnect(t);
	report(t, ok && fastreg_case(t),
	       "fast registration (ib_map_mr_sg of two pages, REG_MR): peer WRITE and READ exact");
	if (IS_ERR_OR_NULL(t->mr))
		goto out;
	report(t, generation_case(t),
	       "LOCAL_INV refuses the rkey; the next key generation works, the old one is refused");
	report(t, send_inv_case(t),
	       "SEND with invalidate: IB_WC_WITH_INVALIDATE and the rkey, then the rkey is refused");
	report(t, reg_twice_case(t), "REG_MR of a registered MR fails (local QP operation error)");
	report(t, atomic_write_case(t),
	       "ATOMIC WRITE: 8 aligned bytes land; a misaligned one fails locally");
	report(t, flush_case(t),
	       "FLUSH refused without FLUSH_GLOBAL access; with it a range and the MR succeed");
	report(t, ib_dereg_mr(t->mr) == 0, "the fast-registration MR deregisters");
	t->mr = NULL;
out:
	if (!IS_ERR_OR_NULL(t->mr))
		ib_dereg_mr(t->mr);
	if (t->sg_mapped)
		ib_dma_unmap_sg(t->ibdev, &t->sg, 1, DMA_BIDIRECTIONAL);
	if (!IS_ERR_OR_NULL(t->b))
		ib_destroy_qp(t->b);
	if (!IS_ERR_OR_NULL(t->a))
		ib_destroy_qp(t->a);
	if (!IS_ERR_OR_NULL(t->srq))
		ib_destroy_srq(t->srq);
	if (!IS_ERR_OR_NULL(t->cq))
		ib_free_cq(t->cq);
	if (!IS_ERR_OR_NULL(t->pd))
		ib_dealloc_pd(t->pd);
	for (i = 0; i < 4; i++) {
		if (t->buf[i])
			ib_dma_unmap_single(t->ibdev, t->dma[i], BUF_LEN + 64,
					    DMA_BIDIRECTIONAL);
		kfree(t->buf[i]);
	}
	t->failed += NCASES - t->n;
	pr_info(KT "%d passed, %d failed\n", t->passed, t->failed);
}

static struct kt state;

static int kt_add(struct ib_device *ibdev)
{
	if (strcmp(dev_name(&ibdev->dev), dev) || state.ibdev)
		return -EOPNOTSUPP;
	state.ibdev = ibdev;
	return 0;
}

static void kt_remove(struct ib_device *ibdev, void *data)
{
}

static struct ib_client kt_client = {
	.name = "rrxe_ktest",
	.add = kt_add,
	.remove = kt_remove,
};

static int __init kt_init(void)
{
	int ret = ib_register_client(&kt_client);

	if (ret)
		return ret;
	if (!state.ibdev) {
		pr_info(KT "no device %s\n", dev);
		ib_unregister_client(&kt_client);
		return -ENODEV;
	}
	run(&state);
	ib_unregister_client(&kt_client);
	return state.failed ? -EIO : 0;
}

static void __exit kt_exit(void)
{
}

module_init(kt_init);
module_exit(kt_exit);
MODULE_DESCRIPTION("rrxe kernel-consumer verbs test (selftests only)");
MODULE_LICENSE("GPL");
