// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe-verify: an RC traffic generator that checks every byte it moves (perftest does not).
 *
 *   server: rrxe-verify -d rrxe1 [-g 1] [-m 1024] [-p port]
 *   client: rrxe-verify -d rrxe0 [-g 1] [-m 1024] -o write|send|atomic [-s size] [-n iters]
 *           [-k depth] [-p port] <server address>
 *
 * The two sides swap QP numbers, GIDs, PSNs and the server buffer's rkey over TCP (port
 * 18516 unless -p names another), then run one of:
 *   write   k slots of the server buffer; iteration i writes pattern(i) into slot i % k with
 *           RDMA WRITE and reads it back with RDMA READ into a private buffer, which must
 *           equal pattern(i). Up to k WRITE+READ pairs are in flight.
 *   send    SEND with immediate i carrying pattern(i); the server checks every message
 *           against the pattern the immediate names, in order.
 *   atomic  n FETCH_ADDs of 1..n on one 8-byte word (each original value must be the sum
 *           so far), then n compare-swaps that succeed and one that must fail, then a READ
 *           of the final value.
 *   vwrite  k slots; iteration i writes pattern(i) into slot i % k with RDMA WRITE alone
 *           (verified by the provider when both devices have verify/enable set); once the
 *           WRITE completes, its slot is read back with RDMA READ and must equal
 *           pattern(i): a WRITE that completes successfully must have landed intact. A
 *           WRITE that completes with an error is reported (status and iteration), the
 *           rest flush, and the exit status is 3 (1 for any wrong byte).
 *   wonly   RDMA WRITE of pattern(i) into slot i % k, k in flight, nothing read back (the
 *           benchmark of WRITE, verified or not).
 *   atomic-write  ATOMIC WRITE (ibv_wr_atomic_write) of a distinct 8-byte value into word
 *           i % k, k in flight; after each completes its word is read back and must hold
 *           the value.
 *   churn   (one process, no peer) n times: two RC QPs of one device created, connected
 *           to each other, a WRITE of size bytes from one to the other read back and
 *           compared, both destroyed.
 *   recon   (one process, no peer) two RC QPs of one device connected to each other once,
 *           then n times: a WRITE of size bytes from one to the other read back and
 *           compared, and both QPs moved to RESET and connected again with new PSNs. The
 *           last line gives, per connection, how much the device's rp_start_held counter
 *           (hw_counters) rose meanwhile: a QP connected again starts its congestion
 *           control afresh, so under `rate` each connection's first long WRITE is held.
 *   failnth (one process, no peer; needs fault injection: /proc/thread-self/fail-nth and
 *           failslab with ignore-gfp-wait off) for each verb (PD, CQ, MR, SRQ, RC and UD
 *           QP create, QP modify, CQ resize), the 1st, 2nd, ... allocation it makes
 *           fails in turn until it makes no more: each attempt must succeed or fail with
 *           an errno, and a WRITE between two fresh QPs must work afterwards. Prints the
 *           faults injected and the errnos seen.
 *   failadd (one process, no peer; fault injection as for failnth; run in the netdev's
 *           namespace) `rdma link add <-d name> type rrxe netdev <netdev>`, sent as one
 *           netlink request, with its n-th allocation failing, for n = 1 to 16 and then
 *           growing by a quarter each time (a device add makes over 36,000 and takes
 *           about 13 s with its delete on the debug kernel) until it makes no n-th: each
 *           attempt must either add the device (which is then deleted) or fail with an
 *           errno and leave no device behind.
 *   park    (one process, no peer) targets for a hostile peer: RC QPs in RESET, INIT,
 *           RTR, RTS (receives posted), on an SRQ (RTS), in ERR and in SQD, a UD QP (RTS,
 *           receives posted) and a UC QP (RTS, receives posted), the connected ones
 *           towards a peer QP 0x777 at the IPv4
 *           address given as the argument; prints "park: qpn:psn,..." (each QP's
 *           expected PSN) and waits until stdin closes.
 *   dereg   RDMA WRITEs of a new pattern each into slot i % k, k in flight, while the server
 *           deregisters its MR after 200 ms: the client must get IBV_WC_REM_ACCESS_ERR
 *           (exit status 3 if every WRITE succeeded), and the server's buffer must not
 *           change after ibv_dereg_mr returned (exit status 1 if a byte did: a WRITE in
 *           progress went on into memory no longer registered).
 *   hole    (with -O, size a multiple of 4096) the server unmaps the first page of its
 *           slot 1 after registering the buffer: a WRITE into slot 0 must succeed, one
 *           into slot 1 must fail with IBV_WC_REM_ACCESS_ERR (not wait for ever).
 * -O registers the buffer for on-demand paging (IBV_ACCESS_ON_DEMAND: not pinned), and
 * -F MS forks a child that exits at once every MS milliseconds while the run lasts (each
 * fork write-protects the process's pages for copy-on-write, which invalidates every
 * on-demand-paged page, and the next write to one copies it): the bytes must still
 * arrive intact. The last line then gives the number of forks.
 * -Q (server) receives on a shared receive queue instead of the QP's own.
 * With -k 1 the last line also gives the latency of one iteration (post to last
 * completion), median and 99th percentile, in microseconds.
 * SIGUSR1 ends a write client early: it posts no new iteration, checks those in flight and
 * reports the iterations it ran (a stream that must outlast events whose timing a slow
 * kernel stretches, such as the packets another tool injects meanwhile).
 *   srq-limit  (one process, no peer) two RC QPs on the same device, the receiver on an SRQ
 *           with k WQEs and its limit armed at k/2: SENDs from the other QP must raise
 *           IBV_EVENT_SRQ_LIMIT_REACHED exactly once the SRQ drops below the limit, and the
 *           limit reads back as 0 (disarmed) afterwards; moved to ERR, the receiving QP
 *           must report IBV_EVENT_QP_LAST_WQE_REACHED.
 *   resize   (one process, no peer) completions pending in a small CQ survive ibv_resize_cq
 *           (grow while holding 6, more land after it, all 16 come out in order); shrinking
 *           below the pending count is refused.
 *   sqd      (one process, no peer) k SENDs of size bytes, then RTS->SQD with
 *           en_sqd_async_notify and one more SEND: IBV_EVENT_SQ_DRAINED arrives for that
 *           QP; the SENDs that had started by then (at least the first) have completed, in
 *           order, and nothing else completes while in SQD; ibv_query_qp reports SQD and no
 *           longer draining; after SQD->RTS the rest complete, in order.
 * Connected QPs get Local ACK Timeout 12 (16.8 ms), or RRXE_VERIFY_TIMEOUT from the
 * environment, and 7 transport and RNR retries. A wait for a completion fails after 60 s,
 * or RRXE_VERIFY_WAIT seconds from the environment.
 * Exit status 0 only if every check passed; the last line reports op, bytes and MB/s.
 */
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int tcp_port = 18516;
#define die(...) do { fprintf(stderr, "rrxe-verify: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

struct info {
	uint32_t qpn, psn, rkey, size;
	uint64_t addr;
	uint8_t gid[16];
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_qp_ex *qpx;
static double *lat_us;
static struct ibv_mr *mr;
static uint8_t *buf;
static size_t size = 65536, bufsz;
static unsigned iters = 100, depth = 4, mtu = 1024, gidx = 1;
static int sock = -1;
static volatile sig_atomic_t stop_posting;
/* The longest wait for a completion, s: RRXE_VERIFY_WAIT, or 60. */
static time_t wait_s = 60;

static void on_usr1(int sig)
{
	(void)sig;
	stop_posting = 1;
}

static void pattern(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static void xfer(void *p, size_t n, int out)
{
	for (size_t d = 0; d < n;) {
		ssize_t r = out ? write(sock, (char *)p + d, n - d) : read(sock, (char *)p + d, n - d);
		if (r <= 0)
			die("tcp %s: %s", out ? "write" : "read", r ? strerror(errno) : "closed");
		d += r;
	}
}

static void tcp(const char *host)
{
	if (host) {
		struct addrinfo *ai, hints = { .ai_socktype = SOCK_STREAM };
		char port[8];
		snprintf(port, sizeof(port), "%d", tcp_port);
		if (getaddrinfo(host, port, &hints, &ai))
			die("cannot resolve %s", host);
		for (int t = 0; t < 100; t++) {
			sock = socket(ai->ai_family, SOCK_STREAM, 0);
			if (!connect(sock, ai->ai_addr, ai->ai_addrlen))
				return;
			close(sock);
			usleep(100000);
		}
		die("cannot connect to %s", host);
	}
	int one = 1, l = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(tcp_port) };
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		die("listen: %s", strerror(errno));
	sock = accept(l, NULL, NULL);
	close(l);
}

static void connect_qp(struct info *me, struct info *peer)
{
	/* UC (park only): no READ or atomics, none of RC's responder and retry attributes. */
	int uc = qp->qp_type == IBV_QPT_UC;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   (uc ? 0 : IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC) };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu == 256 ? IBV_MTU_256 : mtu == 512 ? IBV_MTU_512 : mtu == 2048 ? IBV_MTU_2048 :
		     mtu == 4096 ? IBV_MTU_4096 : IBV_MTU_1024;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = gidx;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | (uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)))
		die("RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me->psn;
	if (uc) {
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
			die("RTS: %s", strerror(errno));
		return;
	}
	const char *ackt = getenv("RRXE_VERIFY_TIMEOUT");
	a.timeout = ackt ? atoi(ackt) & 31 : 12;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS: %s", strerror(errno));
}

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* The next completion, whatever its status. */
static struct ibv_wc poll_any(void)
{
	struct ibv_wc wc;
	int n;
	time_t t0 = time(NULL);
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		if (time(NULL) - t0 > wait_s)
			die("no completion for %ld s", (long)wait_s);
	if (n < 0)
		die("poll_cq failed");
	return wc;
}

static struct ibv_wc poll1(void)
{
	struct ibv_wc wc = poll_any();
	if (wc.status != IBV_WC_SUCCESS)
		die("wr_id %llu: %s (%d), opcode %d", (unsigned long long)wc.wr_id,
		    ibv_wc_status_str(wc.status), wc.status, wc.opcode);
	return wc;
}

static void post(enum ibv_wr_opcode op, uint64_t id, void *laddr, uint32_t len, uint64_t raddr,
		 uint32_t rkey, uint64_t cmp, uint64_t swap, uint32_t imm)
{
	struct ibv_sge sge = { .addr = (uintptr_t)laddr, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(imm) }, *bad;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(qp, &wr, &bad))
		die("post_send: %s", strerror(errno));
}

/* With -Q the server's QP receives from this SRQ. */
static struct ibv_srq *recv_srq;

static void post_recv(uint64_t id, void *addr, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;
	if (recv_srq ? ibv_post_srq_recv(recv_srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad))
		die("post_recv: %s", strerror(errno));
}

/* Client buffer: [0, k*size) sources, [k*size, 2k*size) read-back targets. */
/* Reports how `got` (iteration i's data) differs from `want`, per MTU-sized packet: the
 * first and last wrong packets, how many, and what the first wrong one holds instead
 * (zeros, another iteration's pattern, or this one's from another offset). */
static void mismatch(const uint8_t *want, const uint8_t *got, unsigned i)
{
	size_t first = size, last = 0, bad = 0;
	for (size_t o = 0; o < size; o += mtu) {
		size_t n = size - o < mtu ? size - o : mtu;
		if (memcmp(want + o, got + o, n)) {
			first = first < o ? first : o;
			last = o;
			bad++;
		}
	}
	if (first == size)
		return;
	size_t n = size - first < mtu ? size - first : mtu, z = 0;
	for (size_t k = 0; k < n; k++)
		z += !got[first + k];
	fprintf(stderr, "rrxe-verify: iteration %u: %zu of %zu packets differ, first at byte %zu, last at byte %zu; the first holds %zu zero bytes of %zu\n",
		i, bad, (size + mtu - 1) / mtu, first, last, z, n);
	uint8_t *other = malloc(size);
	for (unsigned j = 0; j < iters + depth; j++) {
		pattern(other, size, j);
		for (size_t o = 0; o + n <= size; o += mtu)
			if (!memcmp(other + o, got + first, n))
				fprintf(stderr, "rrxe-verify: it holds iteration %u's bytes from offset %zu\n", j, o);
	}
	free(other);
}

static uint64_t run_write(struct info *peer)
{
	uint8_t *want = malloc(size);
	unsigned posted = 0, done = 0;
	double *t = calloc(iters, sizeof(*t));
	while (done < iters) {
		while (!stop_posting && posted < iters && posted - done < depth) {
			unsigned s = posted % depth;
			t[posted] = now_us();
			uint8_t *src = buf + s * size, *dst = buf + (depth + s) * size;
			pattern(src, size, posted);
			memset(dst, 0, size);
			post(IBV_WR_RDMA_WRITE, 2ull * posted, src, size, peer->addr + s * size,
			     peer->rkey, 0, 0, 0);
			post(IBV_WR_RDMA_READ, 2ull * posted + 1, dst, size, peer->addr + s * size,
			     peer->rkey, 0, 0, 0);
			posted++;
		}
		if (posted == done)
			break;
		struct ibv_wc wc = poll1();
		if (!(wc.wr_id & 1))
			continue;
		unsigned i = wc.wr_id / 2;
		if (i != done)
			die("READ %u completed before READ %u", i, done);
		pattern(want, size, i);
		if (memcmp(want, buf + (depth + i % depth) * size, size)) {
			mismatch(want, buf + (depth + i % depth) * size, i);
			die("iteration %u: data read back differs from data written", i);
		}
		if (lat_us)
			lat_us[i] = now_us() - t[i];
		done++;
	}
	free(t);
	free(want);
	iters = done;
	return 2ull * done * size;
}

/* Verified WRITEs (see the top): a WRITE alone, then, once it completed successfully, a
 * READ of its slot. Returns the bytes written; *errors counts WRITEs that completed with an
 * error (the first one ends the run: the QP is then in the error state). */
static uint64_t run_vwrite(struct info *peer, unsigned *errors)
{
	uint8_t *want = malloc(size);
	unsigned posted = 0, checked = 0, written = 0;
	double *t = calloc(iters, sizeof(*t));
	*errors = 0;
	while (checked < iters) {
		while (posted < iters && posted - checked < depth) {
			unsigned s = posted % depth;
			pattern(buf + s * size, size, posted);
			t[posted] = now_us();
			post(IBV_WR_RDMA_WRITE, 2ull * posted, buf + s * size, size,
			     peer->addr + s * size, peer->rkey, 0, 0, 0);
			posted++;
		}
		struct ibv_wc wc = poll_any();
		unsigned i = wc.wr_id / 2;
		if (wc.status != IBV_WC_SUCCESS) {
			if (*errors == 0)
				fprintf(stderr, "rrxe-verify: %s %u completed with %s (%d)\n",
					wc.wr_id & 1 ? "READ" : "WRITE", i, ibv_wc_status_str(wc.status),
					wc.status);
			if (wc.status != IBV_WC_WR_FLUSH_ERR)
				(*errors)++;
			if (i + 1 >= posted)
				break;
			continue;
		}
		if (!(wc.wr_id & 1)) {
			if (i != written)
				die("WRITE %u completed before WRITE %u", i, written);
			written++;
			uint8_t *dst = buf + (depth + i % depth) * size;
			memset(dst, 0, size);
			post(IBV_WR_RDMA_READ, 2ull * i + 1, dst, size, peer->addr + (i % depth) * size,
			     peer->rkey, 0, 0, 0);
			continue;
		}
		if (i != checked)
			die("READ %u completed before READ %u", i, checked);
		pattern(want, size, i);
		if (memcmp(want, buf + (depth + i % depth) * size, size)) {
			mismatch(want, buf + (depth + i % depth) * size, i);
			die("iteration %u: the WRITE completed successfully but the bytes read back differ",
			    i);
		}
		if (lat_us)
			lat_us[i] = now_us() - t[i];
		checked++;
	}
	free(t);
	free(want);
	return (uint64_t)written * size;
}

/* WRITEs only, k in flight, nothing checked: the benchmark of WRITE. */
static uint64_t run_wonly(struct info *peer)
{
	unsigned posted = 0, done = 0;
	double *t = calloc(iters, sizeof(*t));
	for (unsigned s = 0; s < depth; s++)
		pattern(buf + s * size, size, s);
	while (done < iters) {
		while (posted < iters && posted - done < depth) {
			unsigned s = posted % depth;
			t[posted] = now_us();
			post(IBV_WR_RDMA_WRITE, posted, buf + s * size, size, peer->addr + s * size,
			     peer->rkey, 0, 0, 0);
			posted++;
		}
		struct ibv_wc wc = poll1();
		if (lat_us)
			lat_us[wc.wr_id] = now_us() - t[wc.wr_id];
		done++;
	}
	free(t);
	return (uint64_t)iters * size;
}

/* hole (client): a WRITE into slot 0 succeeds, one into slot 1 (unmapped) fails. */
static uint64_t run_hole(struct info *peer, unsigned *errors)
{
	pattern(buf, size, 1);
	post(IBV_WR_RDMA_WRITE, 0, buf, size, peer->addr, peer->rkey, 0, 0, 0);
	struct ibv_wc wc = poll_any();
	if (wc.status != IBV_WC_SUCCESS) {
		printf("rrxe-verify: hole: WRITE into the mapped slot: %s\n",
		       ibv_wc_status_str(wc.status));
		*errors = 1;
		return 0;
	}
	post(IBV_WR_RDMA_WRITE, 1, buf, size, peer->addr + size, peer->rkey, 0, 0, 0);
	wc = poll_any();
	printf("rrxe-verify: hole: WRITE into the unmapped page: %s\n",
	       ibv_wc_status_str(wc.status));
	if (wc.status != IBV_WC_REM_ACCESS_ERR)
		*errors = 1;
	return size;
}

/* dereg (client): WRITEs until one fails; returns the bytes of those that completed. */
static uint64_t run_dereg_client(struct info *peer, unsigned *errors)
{
	unsigned posted = 0, done = 0;
	while (done < iters) {
		while (posted < iters && posted - done < depth) {
			unsigned s = posted % depth;
			pattern(buf + s * size, size, posted);
			post(IBV_WR_RDMA_WRITE, posted, buf + s * size, size, peer->addr + s * size,
			     peer->rkey, 0, 0, 0);
			posted++;
		}
		struct ibv_wc wc = poll_any();
		if (wc.status == IBV_WC_REM_ACCESS_ERR) {
			printf("rrxe-verify: dereg: %u WRITEs completed, then %s\n", done,
			       ibv_wc_status_str(wc.status));
			return (uint64_t)done * size;
		}
		if (wc.status != IBV_WC_SUCCESS)
			die("dereg: WRITE %llu: %s", (unsigned long long)wc.wr_id,
			    ibv_wc_status_str(wc.status));
		done++;
	}
	*errors = 1;
	printf("rrxe-verify: dereg: all %u WRITEs succeeded\n", done);
	return (uint64_t)done * size;
}

/* dereg (server): deregisters the MR under the client's WRITEs, keeps a copy of it. */
static unsigned char *dereg_server(void)
{
	usleep(200000);
	if (ibv_dereg_mr(mr))
		die("dereg_mr: %s", strerror(errno));
	unsigned char *copy = malloc(bufsz);
	if (!copy)
		die("no memory");
	memcpy(copy, buf, bufsz);
	return copy;
}

/* ATOMIC WRITEs of value(i) into word i % k, each read back once it completed. */
static uint64_t run_atomic_write(struct info *peer)
{
	uint64_t *src = (uint64_t *)buf, *back = src + depth;
	unsigned posted = 0, checked = 0, written = 0;
	double *t = calloc(iters, sizeof(*t));
	if (!qpx)
		die("no extended QP");
	while (checked < iters) {
		while (posted < iters && posted - checked < depth) {
			unsigned s = posted % depth;
			uint64_t v = 0x0123456789abcdefull ^ ((uint64_t)posted * 0x9e3779b97f4a7c15ull);
			t[posted] = now_us();
			ibv_wr_start(qpx);
			qpx->wr_id = 2ull * posted;
			qpx->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_atomic_write(qpx, peer->rkey, peer->addr + 8 * s, &v);
			if (ibv_wr_complete(qpx))
				die("ATOMIC WRITE %u: post failed: %s", posted, strerror(errno));
			src[s] = v;
			posted++;
		}
		struct ibv_wc wc = poll1();
		unsigned i = wc.wr_id / 2, s = i % depth;
		if (!(wc.wr_id & 1)) {
			if (wc.opcode != IBV_WC_ATOMIC_WRITE || i != written)
				die("ATOMIC WRITE %u: completion opcode %d (expected %d), in order %u",
				    i, wc.opcode, IBV_WC_ATOMIC_WRITE, written);
			written++;
			back[s] = 0;
			post(IBV_WR_RDMA_READ, 2ull * i + 1, &back[s], 8, peer->addr + 8 * s, peer->rkey,
			     0, 0, 0);
			continue;
		}
		if (i != checked)
			die("READ %u completed before READ %u", i, checked);
		if (back[s] != src[s])
			die("ATOMIC WRITE %u: read back %#llx, wrote %#llx", i,
			    (unsigned long long)back[s], (unsigned long long)src[s]);
		if (lat_us)
			lat_us[i] = now_us() - t[i];
		checked++;
	}
	free(t);
	return (uint64_t)iters * 8;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static uint64_t run_send_client(void)
{
	unsigned posted = 0, done = 0;
	while (done < iters) {
		while (posted < iters && posted - done < depth) {
			uint8_t *src = buf + (posted % depth) * size;
			pattern(src, size, posted);
			post(IBV_WR_SEND_WITH_IMM, posted, src, size, 0, 0, 0, 0, posted);
			posted++;
		}
		poll1();
		done++;
	}
	return (uint64_t)iters * size;
}

static void run_send_server(void)
{
	uint8_t *want = malloc(size);
	for (unsigned i = 0; i < iters; i++) {
		struct ibv_wc wc = poll1();
		unsigned s = wc.wr_id;
		if (wc.opcode != IBV_WC_RECV || !(wc.wc_flags & IBV_WC_WITH_IMM))
			die("message %u: opcode %d flags %#x", i, wc.opcode, wc.wc_flags);
		if (ntohl(wc.imm_data) != i || wc.byte_len != size)
			die("message %u: immediate %u, %u bytes", i, ntohl(wc.imm_data), wc.byte_len);
		pattern(want, size, i);
		if (memcmp(want, buf + s * size, size)) {
			mismatch(want, buf + s * size, i);
			die("message %u: payload differs", i);
		}
		if (i + depth < iters)
			post_recv(s, buf + s * size, size);
	}
	free(want);
}

static uint64_t run_atomic(struct info *peer)
{
	uint64_t *res = (uint64_t *)buf, sum = 0;
	unsigned posted = 0, done = 0;
	/* Fetch-and-add: the responder executes in PSN order, so each original value is known. */
	while (done < iters) {
		while (posted < iters && posted - done < depth) {
			res[posted % depth] = ~0ull;
			post(IBV_WR_ATOMIC_FETCH_AND_ADD, posted, &res[posted % depth], 8, peer->addr,
			     peer->rkey, posted + 1, 0, 0);
			posted++;
		}
		struct ibv_wc wc = poll1();
		if (wc.wr_id != done || wc.opcode != IBV_WC_FETCH_ADD)
			die("FETCH_ADD %u: completion %llu opcode %d", done,
			    (unsigned long long)wc.wr_id, wc.opcode);
		if (res[done % depth] != sum)
			die("FETCH_ADD %u returned %llu, expected %llu", done,
			    (unsigned long long)res[done % depth], (unsigned long long)sum);
		sum += done + 1;
		done++;
	}
	/* Compare-and-swap chain: each succeeds (returns the compare value). */
	for (unsigned i = 0; i < iters; i++) {
		post(IBV_WR_ATOMIC_CMP_AND_SWP, i, res, 8, peer->addr, peer->rkey, sum + i, sum + i + 1, 0);
		struct ibv_wc wc = poll1();
		if (wc.opcode != IBV_WC_COMP_SWAP || *res != sum + i)
			die("CMP_SWAP %u returned %llu, expected %llu", i, (unsigned long long)*res,
			    (unsigned long long)(sum + i));
	}
	uint64_t final = sum + iters;
	post(IBV_WR_ATOMIC_CMP_AND_SWP, 0, res, 8, peer->addr, peer->rkey, 12345, 777, 0);
	poll1();
	if (*res != final)
		die("failing CMP_SWAP returned %llu, expected %llu", (unsigned long long)*res,
		    (unsigned long long)final);
	res[1] = 0;
	post(IBV_WR_RDMA_READ, 0, &res[1], 8, peer->addr, peer->rkey, 0, 0, 0);
	poll1();
	if (res[1] != final)
		die("final value %llu, expected %llu", (unsigned long long)res[1],
		    (unsigned long long)final);
	return (2ull * iters + 2) * 8;
}

static void qp_attr_init(struct info *me, struct ibv_qp *q)
{
	union ibv_gid g;
	if (ibv_query_gid(ctx, 1, gidx, &g))
		die("query_gid");
	memcpy(me->gid, g.raw, 16);
	me->qpn = q->qp_num;
	me->psn = rand() & 0xffffff;
}

/* Connects `a` and `b` (RESET to RTS) to each other, with new PSNs. */
static void connect_pair(struct ibv_qp *a, struct ibv_qp *b)
{
	struct info ia, ib;
	qp_attr_init(&ia, a);
	qp_attr_init(&ib, b);
	qp = a;
	connect_qp(&ia, &ib);
	qp = b;
	connect_qp(&ib, &ia);
}

/* Waits up to `ms` for the next async event, which must be `type` for `element` (a QP or an
 * SRQ); `what` names the step in the failure message. */
static void expect_event(enum ibv_event_type type, void *element, int ms, const char *what)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	if (poll(&pfd, 1, ms) != 1 || ibv_get_async_event(ctx, &ev))
		die("no async event %s", what);
	void *got = type == IBV_EVENT_SRQ_LIMIT_REACHED ? (void *)ev.element.srq : (void *)ev.element.qp;
	if (ev.event_type != type || got != element)
		die("async event %d %s, expected %d", ev.event_type, what, type);
	ibv_ack_async_event(&ev);
}

/* Two QPs of one device: `qp` sends, `rq` receives from an SRQ with an armed limit. */
static int run_srq_limit(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = depth, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	if (!srq)
		die("create_srq: %s", strerror(errno));
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 } };
	struct ibv_qp *sender = qp, *rq = ibv_create_qp(pd, &qa);
	if (!rq)
		die("create_qp on SRQ: %s", strerror(errno));
	for (unsigned i = 0; i < depth; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf + i * 64, .length = 64, .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;
		if (ibv_post_srq_recv(srq, &wr, &bad))
			die("post_srq_recv: %s", strerror(errno));
	}
	struct ibv_srq_attr at = { .srq_limit = depth / 2 };
	if (ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT))
		die("arm SRQ limit: %s", strerror(errno));
	connect_pair(sender, rq);
	qp = sender;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	/* Consume WQEs down to exactly the limit: no event yet. */
	unsigned sent = 0;
	for (; sent < depth - depth / 2; sent++) {
		post(IBV_WR_SEND, sent, buf + depth * 64, 8, 0, 0, 0, 0, 0);
		poll1();
		poll1();
	}
	if (poll(&pfd, 1, 500) != 0)
		die("async event before the SRQ went below its limit");
	post(IBV_WR_SEND, sent, buf + depth * 64, 8, 0, 0, 0, 0, 0);
	poll1();
	poll1();
	expect_event(IBV_EVENT_SRQ_LIMIT_REACHED, srq, 5000, "after the SRQ went below its limit");
	if (ibv_query_srq(srq, &at) || at.srq_limit != 0)
		die("SRQ limit reads %u after the event, expected 0", at.srq_limit);
	/* A QP on an SRQ that enters the error state reports its last WQE. */
	struct ibv_qp_attr qerr = { .qp_state = IBV_QPS_ERR };
	if (ibv_modify_qp(rq, &qerr, IBV_QP_STATE))
		die("modify to ERR: %s", strerror(errno));
	expect_event(IBV_EVENT_QP_LAST_WQE_REACHED, rq, 5000, "after the SRQ's QP entered ERR");
	if (ibv_destroy_qp(rq) || ibv_destroy_srq(srq))
		die("destroy: %s", strerror(errno));
	printf("rrxe-verify: op=srq-limit depth=%u limit=%u ok\n", depth, depth / 2);
	return 0;
}

/* Two RC QPs of one device, connected to each other; `a` sends on `scq`. */
static void loop_pair(struct ibv_cq *scq, struct ibv_qp **a, struct ibv_qp **b)
{
	struct ibv_qp_init_attr qa = { .send_cq = scq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 1, .max_recv_sge = 1 } };
	if (!(*a = ibv_create_qp(pd, &qa)))
		die("create_qp: %s", strerror(errno));
	qa.send_cq = cq;
	if (!(*b = ibv_create_qp(pd, &qa)))
		die("create_qp: %s", strerror(errno));
	connect_pair(*a, *b);
}

static struct ibv_wc poll_on(struct ibv_cq *c)
{
	struct ibv_cq *saved = cq;
	cq = c;
	struct ibv_wc wc = poll1();
	cq = saved;
	return wc;
}

/* `n` SENDs from `a` (ids from `first`), each received by `b` before the next. */
static void sends(struct ibv_qp *a, struct ibv_qp *b, unsigned first, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		qp = b;
		post_recv(i, buf + 4096, 64);
		qp = a;
		post(IBV_WR_SEND, first + i, buf, 8, 0, 0, 0, 0, 0);
		poll1(); /* the receive, on the main CQ: the send is complete too */
	}
}

static int run_resize(void)
{
	struct ibv_cq *small = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *a, *b;
	if (!small)
		die("create_cq: %s", strerror(errno));
	loop_pair(small, &a, &b);
	sends(a, b, 0, 6);
	if (ibv_resize_cq(small, 64) || small->cqe < 64)
		die("resize to 64 with 6 pending: %s (cqe %d)", strerror(errno), small->cqe);
	sends(a, b, 6, 10);
	for (unsigned i = 0; i < 16; i++) {
		struct ibv_wc wc = poll_on(small);
		if (wc.wr_id != i || wc.opcode != IBV_WC_SEND)
			die("completion %u after resize: wr_id %llu opcode %d", i,
			    (unsigned long long)wc.wr_id, wc.opcode);
	}
	sends(a, b, 16, 6);
	if (!ibv_resize_cq(small, 2))
		die("resize to 2 with 6 pending succeeded");
	for (unsigned i = 0; i < 6; i++)
		if (poll_on(small).wr_id != 16 + i)
			die("completion %u after a refused resize", 16 + i);
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_cq(small))
		die("destroy: %s", strerror(errno));
	printf("rrxe-verify: op=resize ok\n");
	return 0;
}

static int pending(struct ibv_cq *c, int ms)
{
	struct ibv_wc wc;
	for (int i = 0; i < ms / 10; i++) {
		int n = ibv_poll_cq(c, 1, &wc);
		if (n)
			return n;
		usleep(10000);
	}
	return 0;
}

static int run_sqd(void)
{
	struct ibv_cq *scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *a, *b;
	unsigned n = depth > 16 ? 16 : depth;
	if (!scq)
		die("create_cq: %s", strerror(errno));
	loop_pair(scq, &a, &b);
	qp = b;
	for (unsigned i = 0; i <= n; i++)
		post_recv(i, buf + size, size);
	qp = a;
	for (unsigned i = 0; i < n; i++)
		post(IBV_WR_SEND, i, buf, size, 0, 0, 0, 0, 0);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	if (ibv_modify_qp(a, &at, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY))
		die("RTS->SQD: %s", strerror(errno));
	/* Posting is allowed in SQD; the WQE waits. */
	post(IBV_WR_SEND, n, buf, size, 0, 0, 0, 0, 0);
	expect_event(IBV_EVENT_SQ_DRAINED, a, 30000, "within 30 s of RTS->SQD");
	/* The SENDs that had started complete, in order; no other starts in SQD. */
	unsigned k = 0;
	struct ibv_wc wc;
	while (ibv_poll_cq(scq, 1, &wc) == 1) {
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != k || wc.opcode != IBV_WC_SEND)
			die("send completion %u while draining: wr_id %llu status %d", k,
			    (unsigned long long)wc.wr_id, wc.status);
		k++;
	}
	if (k == 0)
		die("SQ_DRAINED before the SEND in progress completed");
	if (pending(scq, 500))
		die("a SEND started while in SQD");
	for (unsigned i = 0; i < k; i++)
		if (poll1().wr_id != i)
			die("receive %u while draining", i);
	if (pending(cq, 10))
		die("a SEND arrived that never completed");
	struct ibv_qp_init_attr ia;
	if (ibv_query_qp(a, &at, IBV_QP_STATE, &ia) || at.qp_state != IBV_QPS_SQD || at.sq_draining)
		die("query after the drain: state %d, draining %d", at.qp_state, at.sq_draining);
	at.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(a, &at, IBV_QP_STATE))
		die("SQD->RTS: %s", strerror(errno));
	for (unsigned i = k; i <= n; i++)
		if (poll_on(scq).wr_id != i || poll1().wr_id != i)
			die("SEND %u (posted before or in SQD) did not complete in order after RTS", i);
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_cq(scq))
		die("destroy: %s", strerror(errno));
	printf("rrxe-verify: op=sqd sends=%u size=%zu drained=%u ok\n", n + 1, size, k);
	return 0;
}

/* From `a`, pattern(i) WRITten into the buffer's second slot and READ back into its third:
 * the two must match (`what` i names the step in the failure message). */
static void write_read_back(struct ibv_qp *a, unsigned i, const char *what)
{
	qp = a;
	pattern(buf, size, i);
	memset(buf + 2 * size, 0, size);
	post(IBV_WR_RDMA_WRITE, 1, buf, size, (uintptr_t)buf + size, mr->rkey, 0, 0, 0);
	poll1();
	post(IBV_WR_RDMA_READ, 2, buf + 2 * size, size, (uintptr_t)buf + size, mr->rkey, 0, 0, 0);
	poll1();
	if (memcmp(buf, buf + 2 * size, size))
		die("%s %u: data read back differs", what, i);
}

/* Create, connect, use and destroy a QP pair, n times (see the top). */
static int run_churn(void)
{
	for (unsigned i = 0; i < iters; i++) {
		struct ibv_qp *a, *b;
		loop_pair(cq, &a, &b);
		write_read_back(a, i, "cycle");
		if (ibv_destroy_qp(a) || ibv_destroy_qp(b))
			die("cycle %u: destroy_qp: %s", i, strerror(errno));
	}
	printf("rrxe-verify: op=churn cycles=%u size=%zu ok\n", iters, size);
	return 0;
}

/* The device's counter `name` (hw_counters of port 1), or -1 if it cannot be read. */
static long long hw_counter(const char *name)
{
	char path[256];
	long long v = -1;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(ctx->device), name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* A WRITE read back and compared, then both QPs reset and connected again, n times (see
 * the top). */
static int run_recon(void)
{
	struct ibv_qp *a, *b;
	char held[1024] = "";
	size_t off = 0;
	loop_pair(cq, &a, &b);
	for (unsigned i = 0; i < iters; i++) {
		long long h0 = hw_counter("rp_start_held");
		write_read_back(a, i, "connection");
		long long h1 = hw_counter("rp_start_held");
		if (off < sizeof(held))
			off += snprintf(held + off, sizeof(held) - off, "%s%lld", i ? "," : "",
					h0 < 0 || h1 < 0 ? -1 : h1 - h0);
		struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };
		if (ibv_modify_qp(a, &r, IBV_QP_STATE) || ibv_modify_qp(b, &r, IBV_QP_STATE))
			die("connection %u: to RESET: %s", i, strerror(errno));
		connect_pair(a, b);
	}
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b))
		die("destroy_qp: %s", strerror(errno));
	printf("rrxe-verify: op=recon connections=%u size=%zu held=%s ok\n", iters, size, held);
	return 0;
}

/* fail-nth: the n-th fault-injectable call of this thread fails (0: none). */
static int fail_nth_fd = -1;
static void fail_nth(unsigned n)
{
	char b[16];
	int l = snprintf(b, sizeof(b), "%u", n);
	if (pwrite(fail_nth_fd, b, l, 0) != l)
		die("fail-nth: %s", strerror(errno));
}
/* Whether the fault armed last was injected (the counter ran out). */
static int fail_nth_hit(void)
{
	char b[16] = "";
	if (pread(fail_nth_fd, b, sizeof(b) - 1, 0) < 0)
		die("fail-nth: %s", strerror(errno));
	return atoi(b) == 0;
}

/* One create verb (0-5, see run_failnth) under fault injection; returns 0 or the errno
 * it failed with. Whatever it created is destroyed again. */
static int one_verb(int v)
{
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq,
		.qp_type = v == 5 ? IBV_QPT_UD : IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	int err = 0;
	errno = 0;
	switch (v) {
	case 0: { struct ibv_pd *x = ibv_alloc_pd(ctx); err = x ? 0 : errno; if (x) ibv_dealloc_pd(x); break; }
	case 1: { struct ibv_cq *x = ibv_create_cq(ctx, 16, NULL, NULL, 0); err = x ? 0 : errno; if (x) ibv_destroy_cq(x); break; }
	case 2: { struct ibv_mr *x = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE); err = x ? 0 : errno; if (x) ibv_dereg_mr(x); break; }
	case 3: { struct ibv_srq *x = ibv_create_srq(pd, &sa); err = x ? 0 : errno; if (x) ibv_destroy_srq(x); break; }
	case 4: case 5: { struct ibv_qp *x = ibv_create_qp(pd, &qa); err = x ? 0 : errno; if (x) ibv_destroy_qp(x); break; }
	}
	return err;
}

static int run_failnth(void)
{
	static const char *names[] = { "alloc_pd", "create_cq", "reg_mr", "create_srq",
				       "create_qp(RC)", "create_qp(UD)", "modify_qp", "resize_cq" };
	unsigned faults = 0, errs = 0;
	if ((fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR)) < 0)
		die("no /proc/thread-self/fail-nth: %s", strerror(errno));
	for (int v = 0; v < 8; v++) {
		unsigned n;
		for (n = 1; n < 200; n++) {
			int err;
			if (v == 6 || v == 7) {
				/* Objects made without faults, then the call under test. */
				struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq,
					.qp_type = IBV_QPT_RC, .cap = { .max_send_wr = 8,
					.max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
				struct ibv_qp *x = v == 6 ? ibv_create_qp(pd, &qa) : NULL;
				struct ibv_cq *c = v == 7 ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
				if ((v == 6 && !x) || (v == 7 && !c))
					die("%s: set-up without faults failed", names[v]);
				struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					.qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
				fail_nth(n);
				err = v == 6 ? ibv_modify_qp(x, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
							     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
					     : ibv_resize_cq(c, 64);
				int hit = fail_nth_hit();
				fail_nth(0);
				if (x)
					ibv_destroy_qp(x);
				if (c)
					ibv_destroy_cq(c);
				if (!hit)
					break;
			} else {
				fail_nth(n);
				err = one_verb(v);
				int hit = fail_nth_hit();
				fail_nth(0);
				if (!hit)
					break;
			}
			faults++;
			if (err) {
				errs++;
				if (err < 0 || err > 4095)
					die("%s with fault %u: bad error %d", names[v], n, err);
			}
		}
		printf("rrxe-verify: failnth: %s: %u allocations, each failed once\n", names[v], n - 1);
	}
	/* The device still works: a WRITE between two fresh QPs. */
	struct ibv_qp *a, *b;
	loop_pair(cq, &a, &b);
	qp = a;
	pattern(buf, 4096, 7);
	memset(buf + 8192, 0, 4096);
	post(IBV_WR_RDMA_WRITE, 1, buf, 4096, (uintptr_t)buf + 8192, mr->rkey, 0, 0, 0);
	poll1();
	if (memcmp(buf, buf + 8192, 4096))
		die("failnth: the WRITE afterwards did not land");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	printf("rrxe-verify: op=failnth faults=%u errors=%u ok\n", faults, errs);
	return 0;
}

/* One rdma netlink request (nldev command cmd, attributes already in m) on socket nl;
 * returns the error the kernel acknowledged it with (0 or a negative errno), or, for a
 * dump, calls each(nlh) for every reply message. A reply lost to an injected fault
 * (ENOBUFS on the socket) is returned as -ENOBUFS. */
struct nlreq {
	struct nlmsghdr h;
	char a[256];
};
static void nl_put(struct nlreq *m, uint16_t type, const void *v, size_t n)
{
	struct nlattr *a = (struct nlattr *)((char *)m + NLMSG_ALIGN(m->h.nlmsg_len));
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + n;
	memcpy((char *)a + NLA_HDRLEN, v, n);
	m->h.nlmsg_len = NLMSG_ALIGN(m->h.nlmsg_len) + NLA_ALIGN(a->nla_len);
}
static int nl_call(int nl, struct nlreq *m, int cmd, int dump, void (*each)(struct nlmsghdr *))
{
	static uint32_t seq;
	m->h.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	m->h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0);
	m->h.nlmsg_seq = ++seq;
	if (send(nl, m, m->h.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		static char r[32768];
		ssize_t n = recv(nl, r, sizeof(r), 0);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		for (struct nlmsghdr *h = (struct nlmsghdr *)r; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (each)
				each(h);
		}
	}
}
static const char *nl_name;
static int nl_index = -1;
static void nl_find(struct nlmsghdr *h)
{
	int idx = -1, len = h->nlmsg_len - NLMSG_HDRLEN;
	const char *name = NULL;
	for (struct nlattr *a = NLMSG_DATA(h); len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	     a->nla_len <= len; len -= NLA_ALIGN(a->nla_len),
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
		if (a->nla_type == RDMA_NLDEV_ATTR_DEV_INDEX)
			memcpy(&idx, (char *)a + NLA_HDRLEN, 4);
		else if (a->nla_type == RDMA_NLDEV_ATTR_DEV_NAME)
			name = (char *)a + NLA_HDRLEN;
	}
	if (name && !strcmp(name, nl_name))
		nl_index = idx;
}
static int dev_exists(const char *name)
{
	char p[128];
	struct stat st;
	snprintf(p, sizeof(p), "/sys/class/infiniband/%s", name);
	return !stat(p, &st);
}

static int run_failadd(const char *name, const char *ndev)
{
	unsigned faults = 0, errs = 0, n;
	int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	struct timeval tv = { .tv_sec = 10 };
	if (!name || !ndev || strlen(name) + strlen(ndev) > 200)
		die("failadd: need -d <name> and the netdev (short names: one 256-byte request)");
	if (nl < 0 || setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("failadd: netlink: %s", strerror(errno));
	if (dev_exists(name))
		die("failadd: %s exists already", name);
	if ((fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR)) < 0)
		die("no /proc/thread-self/fail-nth: %s", strerror(errno));
	/* Everything the loop touches is resident: a page fault on the 9p root while a
	 * fault is armed would spend it in the 9p client instead. The first round (n = 0)
	 * arms none and must add the device. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		die("failadd: mlockall: %s", strerror(errno));
	for (n = 0; n < 100000; n = n < 16 ? n + 1 : n + n / 4) {
		struct nlreq m = { .h.nlmsg_len = NLMSG_HDRLEN };
		nl_put(&m, RDMA_NLDEV_ATTR_DEV_NAME, name, strlen(name) + 1);
		nl_put(&m, RDMA_NLDEV_ATTR_LINK_TYPE, "rrxe", 5);
		nl_put(&m, RDMA_NLDEV_ATTR_NDEV_NAME, ndev, strlen(ndev) + 1);
		fail_nth(n);
		int err = nl_call(nl, &m, RDMA_NLDEV_CMD_NEWLINK, 0, NULL);
		int hit = n && fail_nth_hit();
		fail_nth(0);
		if (!n && err)
			die("failadd: %s on %s without faults: %s", name, ndev, strerror(-err));
		if (err == -ETIMEDOUT)
			die("failadd: fault %u: no answer to the request", n);
		if (err < -4095 || err > 0)
			die("failadd: fault %u: bad error %d", n, err);
		int made = dev_exists(name);
		/* The ack itself can be the allocation that failed (-ENOBUFS): then the device
		 * may or may not be there; otherwise the answer must match what happened. */
		if (err && err != -ENOBUFS && made)
			die("failadd: fault %u: failed with %s but %s exists", n, strerror(-err), name);
		if (!err && !made)
			die("failadd: fault %u: succeeded but there is no %s", n, name);
		if (made) {
			struct nlreq d = { .h.nlmsg_len = NLMSG_HDRLEN };
			nl_name = name;
			nl_index = -1;
			if (nl_call(nl, &d, RDMA_NLDEV_CMD_GET, 1, nl_find) || nl_index < 0)
				die("failadd: fault %u: %s is not in the device list", n, name);
			d.h.nlmsg_len = NLMSG_HDRLEN;
			nl_put(&d, RDMA_NLDEV_ATTR_DEV_INDEX, &nl_index, 4);
			if ((err = nl_call(nl, &d, RDMA_NLDEV_CMD_DELLINK, 0, NULL)))
				die("failadd: fault %u: delete %s: %s", n, name, strerror(-err));
			if (dev_exists(name))
				die("failadd: fault %u: %s is still there after delete", n, name);
		} else {
			errs++;
		}
		if (n && !hit)
			break;
		faults += !!n;
	}
	if (n >= 100000)
		die("failadd: still failing after %u faults", faults);
	printf("rrxe-verify: op=failadd faults=%u errors=%u allocations=%u ok\n", faults, errs, n - 1);
	return 0;
}

/* QPs in every state for rrxe-hostile to aim at (see the top). */
static int run_park(const char *peer_ip)
{
	struct in_addr a;
	if (!peer_ip || !inet_aton(peer_ip, &a))
		die("park: need the peer's IPv4 address");
	struct info peer = { .qpn = 0x777, .psn = 0 };
	/* The IPv4-mapped GID of the peer's address. */
	memset(peer.gid, 0, 16);
	peer.gid[10] = peer.gid[11] = 0xff;
	memcpy(peer.gid + 12, &a, 4);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	if (!srq)
		die("create_srq: %s", strerror(errno));
	for (unsigned i = 0; i < 64; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;
		if (ibv_post_srq_recv(srq, &wr, &bad))
			die("post_srq_recv: %s", strerror(errno));
	}
	enum { RESET, INIT, RTR, RTS, SRQ, ERR, UD, UC, SQD, N };
	struct ibv_qp *q[N];
	char line[512] = "park:";
	for (int k = 0; k < N; k++) {
		struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq,
			.qp_type = k == UD ? IBV_QPT_UD : k == UC ? IBV_QPT_UC : IBV_QPT_RC,
			.srq = k == SRQ ? srq : NULL,
			.cap = { .max_send_wr = 4, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 } };
		if (!(q[k] = ibv_create_qp(pd, &qa)))
			die("create_qp: %s", strerror(errno));
		qp = q[k];
		struct info me;
		qp_attr_init(&me, qp);
		if (k == UD) {
			struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
						  .qkey = 0x11111111 };
			if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_QKEY))
				die("UD INIT: %s", strerror(errno));
			at.qp_state = IBV_QPS_RTR;
			if (ibv_modify_qp(qp, &at, IBV_QP_STATE))
				die("UD RTR: %s", strerror(errno));
			at.qp_state = IBV_QPS_RTS;
			at.sq_psn = me.psn;
			if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN))
				die("UD RTS: %s", strerror(errno));
		} else if (k != RESET) {
			peer.psn = rand() & 0xffffff;
			if (k == INIT) {
				struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
				if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
					die("INIT: %s", strerror(errno));
			} else {
				connect_qp(&me, &peer);
			}
			if (k == RTR) {
				/* connect_qp went to RTS; a fresh QP stays in RTR. */
				ibv_destroy_qp(qp);
				if (!(q[k] = qp = ibv_create_qp(pd, &qa)))
					die("create_qp: %s", strerror(errno));
				qp_attr_init(&me, qp);
				struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					.qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
				ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					      IBV_QP_ACCESS_FLAGS);
				memset(&at, 0, sizeof(at));
				at.qp_state = IBV_QPS_RTR;
				at.path_mtu = IBV_MTU_1024;
				at.dest_qp_num = peer.qpn;
				at.rq_psn = peer.psn;
				at.max_dest_rd_atomic = 4;
				at.min_rnr_timer = 1;
				at.ah_attr.is_global = 1;
				at.ah_attr.port_num = 1;
				at.ah_attr.grh.hop_limit = 64;
				at.ah_attr.grh.sgid_index = gidx;
				memcpy(at.ah_attr.grh.dgid.raw, peer.gid, 16);
				if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
						  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
					die("RTR: %s", strerror(errno));
			}
		}
		if (k != SRQ && k != RESET)
			for (unsigned i = 0; i < 8; i++)
				post_recv(i, buf + 64 * i, 64);
		if (k == ERR || k == SQD) {
			struct ibv_qp_attr at = { .qp_state = k == ERR ? IBV_QPS_ERR : IBV_QPS_SQD };
			if (ibv_modify_qp(qp, &at, IBV_QP_STATE))
				die("%s: %s", k == ERR ? "ERR" : "SQD", strerror(errno));
		}
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%u:%u",
			 k ? "," : " ", qp->qp_num, peer.psn);
	}
	printf("%s\n", line);
	fflush(stdout);
	char c;
	while (read(0, &c, 1) > 0)
		;
	for (int k = 0; k < N; k++)
		ibv_destroy_qp(q[k]);
	ibv_destroy_srq(srq);
	return 0;
}

static int odp, fork_ms, use_srq;
static volatile int forking = 1;
static unsigned forks;

/* -F: fork every fork_ms milliseconds until the run ends. */
static void *fork_loop(void *arg)
{
	(void)arg;
	while (forking) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		if (p > 0) {
			waitpid(p, NULL, 0);
			forks++;
		}
		usleep(fork_ms * 1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *op = "write";
	int c;
	signal(SIGUSR1, on_usr1);
	while ((c = getopt(argc, argv, "d:g:m:o:s:n:k:p:OF:Q")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'm': mtu = atoi(optarg); break;
		case 'o': op = optarg; break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 'n': iters = atoi(optarg); break;
		case 'k': depth = atoi(optarg); break;
		case 'p': tcp_port = atoi(optarg); break;
		case 'O': odp = 1; break;
		case 'F': fork_ms = atoi(optarg); break;
		case 'Q': use_srq = 1; break;
		default: die("usage: see the comment at the top of rrxe-verify.c");
		}
	}
	const char *host = optind < argc ? argv[optind] : NULL;
	if (!size || !iters || !depth || depth > 64 || (depth < 2 && !strcmp(op, "srq-limit")))
		die("bad size, iterations or depth");
	if (tcp_port <= 0 || tcp_port > 65535)
		die("bad port");
	if (!strcmp(op, "failadd"))
		return run_failadd(dev, host);
	struct ibv_device **l = ibv_get_device_list(NULL);
	for (; l && *l; l++)
		if (!dev || !strcmp(ibv_get_device_name(*l), dev))
			break;
	if (!l || !*l || !(ctx = ibv_open_device(*l)))
		die("no device %s", dev ? dev : "");
	bufsz = 2 * depth * size + 64;
	if (odp) {
		/* (mmap'ed, so that `hole` can unmap a page of it) */
		buf = mmap(NULL, (bufsz + 4095) & ~4095ul, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			die("mmap: %s", strerror(errno));
	} else {
		buf = aligned_alloc(4096, (bufsz + 4095) & ~4095ul);
	}
	memset(buf, 0, bufsz);
	if (!(pd = ibv_alloc_pd(ctx)) || !(cq = ibv_create_cq(ctx, 4 * depth + 4, NULL, NULL, 0)))
		die("pd/cq: %s", strerror(errno));
	if (!(mr = ibv_reg_mr(pd, buf, bufsz, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			      (odp ? IBV_ACCESS_ON_DEMAND : 0))))
		die("reg_mr: %s", strerror(errno));
	struct ibv_qp_init_attr_ex qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * depth + 2, .max_recv_wr = depth + 1, .max_send_sge = 1,
			 .max_recv_sge = 1 }, .pd = pd, .comp_mask = IBV_QP_INIT_ATTR_PD };
	if (use_srq && !host) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = depth + 1, .max_sge = 1 } };
		if (!(recv_srq = ibv_create_srq(pd, &sa)))
			die("create_srq: %s", strerror(errno));
		qa.srq = recv_srq;
	}
	if (!strcmp(op, "atomic-write") && host) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_READ;
	}
	if (!(qp = ibv_create_qp_ex(ctx, &qa)))
		die("create_qp: %s", strerror(errno));
	if (qa.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS && !(qpx = ibv_qp_to_qp_ex(qp)))
		die("no extended QP");
	if (depth == 1 && !(lat_us = calloc(iters, sizeof(*lat_us))))
		die("no memory");
	srand(getpid() ^ time(NULL));
	const char *w = getenv("RRXE_VERIFY_WAIT");
	if (w && atoi(w) > 0)
		wait_s = atoi(w);
	if (!strcmp(op, "srq-limit"))
		return run_srq_limit();
	if (!strcmp(op, "resize"))
		return run_resize();
	if (!strcmp(op, "sqd"))
		return run_sqd();
	if (!strcmp(op, "park"))
		return run_park(host);
	if (!strcmp(op, "churn"))
		return run_churn();
	if (!strcmp(op, "recon"))
		return run_recon();
	if (!strcmp(op, "failnth"))
		return run_failnth();
	struct info me = { .rkey = mr->rkey, .addr = (uintptr_t)buf }, peer;
	qp_attr_init(&me, qp);
	tcp(host);
	xfer(&me, sizeof(me), 1);
	xfer(&peer, sizeof(peer), 0);
	connect_qp(&me, &peer);
	pthread_t forker;
	if (fork_ms > 0 && pthread_create(&forker, NULL, fork_loop, NULL))
		die("no fork thread");
	char go = 'g';
	if (!host) {
		/* The server posts its receives before telling the client to start. */
		int send = !strcmp(op, "send");
		for (unsigned s = 0; send && s < depth && s < iters; s++)
			post_recv(s, buf + s * size, size);
		if (!strcmp(op, "hole") && munmap(buf + size, 4096))
			die("munmap: %s", strerror(errno));
		xfer(&go, 1, 1);
		if (send)
			run_send_server();
		unsigned char *copy = !strcmp(op, "dereg") ? dereg_server() : NULL;
		xfer(&go, 1, 0);
		if (copy) {
			size_t changed = 0;
			for (size_t i = 0; i < bufsz; i++)
				changed += copy[i] != ((unsigned char *)buf)[i];
			if (changed)
				die("dereg: %zu bytes changed after ibv_dereg_mr returned", changed);
			printf("rrxe-verify: dereg: buffer unchanged after deregistration\n");
		}
		if (fork_ms > 0) {
			forking = 0;
			pthread_join(forker, NULL);
		}
		printf("rrxe-verify: server done%s%u\n", fork_ms > 0 ? " forks=" : "",
		       fork_ms > 0 ? forks : 0);
		return 0;
	}
	xfer(&go, 1, 0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t bytes;
	unsigned errors = 0;
	if (!strcmp(op, "write"))
		bytes = run_write(&peer);
	else if (!strcmp(op, "vwrite"))
		bytes = run_vwrite(&peer, &errors);
	else if (!strcmp(op, "wonly"))
		bytes = run_wonly(&peer);
	else if (!strcmp(op, "atomic-write"))
		bytes = run_atomic_write(&peer);
	else if (!strcmp(op, "send"))
		bytes = run_send_client();
	else if (!strcmp(op, "atomic"))
		bytes = run_atomic(&peer);
	else if (!strcmp(op, "dereg"))
		bytes = run_dereg_client(&peer, &errors);
	else if (!strcmp(op, "hole"))
		bytes = run_hole(&peer, &errors);
	else
		die("unknown op %s", op);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (fork_ms > 0) {
		forking = 0;
		pthread_join(forker, NULL);
	}
	xfer(&go, 1, 1);
	double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	char lat[64] = "";
	if (lat_us && !errors) {
		qsort(lat_us, iters, sizeof(*lat_us), cmp_double);
		snprintf(lat, sizeof(lat), " lat_us_p50=%.1f lat_us_p99=%.1f", lat_us[iters / 2],
			 lat_us[(iters * 99) / 100 < iters ? (iters * 99) / 100 : iters - 1]);
	}
	char fk[32] = "";
	if (fork_ms > 0)
		snprintf(fk, sizeof(fk), " forks=%u", forks);
	printf("rrxe-verify: op=%s size=%zu iters=%u depth=%u %s bytes=%llu MB/s=%.2f%s%s\n", op,
	       size, iters, depth, errors ? "errors" : "ok", (unsigned long long)bytes,
	       bytes / s / 1e6, lat, fk);
	return errors ? 3 : 0;
}
