// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe-hostile: a hostile RoCEv2 peer. Sends COUNT hand-made packets (IPv4, raw socket,
 * from SRC to DST, UDP port 4791) built to reach every parser and state machine of the
 * receiving device: random bytes, and every opcode with truncated, over-long and
 * inconsistent headers, PSNs far ahead and behind the target QPs' expected ones, bad
 * lengths, pad counts and MTU violations, RETH/AtomicETH/FETH fields pointing anywhere,
 * rrxe's own headers (XETH, SACK, CNP payload, timestamps, verified-WRITE CRC and
 * result) with any values, wrong QPNs, P_Keys and rkeys, Q_Keys for UD and QP1. All but
 * the packets meant to carry a bad ICRC (one in 16) have a correct ICRC, so the parsers,
 * not the CRC check, have to reject them.
 *
 *   rrxe-hostile -s SRC -d DST -n COUNT [-q QPN:PSN,...] [-x QPN,...] [-r SEED] [-v]
 *
 * -q names live QPs and the PSN each expects (two in three packets go to one of them, at
 * a PSN near, at, or far from it); the rest go to random QPNs outside the range a device
 * hands out (16 to 1039), or below 16 (QP1 included), never to one -x names. -r seeds the
 * generator (the run is repeatable).
 * Prints how many packets of each kind were sent, and the total; exit 0 unless the
 * socket failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define die(...) do { fprintf(stderr, "rrxe-hostile: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

enum kind {
	K_RANDOM,	/* random bytes after a random BTH-shaped start */
	K_TRUNC,	/* a known opcode, headers cut short */
	K_LONG,		/* a known opcode, payload over any MTU */
	K_FIELDS,	/* a known opcode, every field random (PSN, pad, lengths, keys) */
	K_RRXE,		/* rrxe's own flags and headers, random contents */
	K_CNP,		/* CNPs: zero, rrxe-versioned, random reserved bytes, short */
	K_UD,		/* UD/QP1 datagrams: random Q_Keys, source QPs, lengths */
	K_BADCRC,	/* any of the above with the ICRC flipped */
	K_N
};
static const char *kname[K_N] = { "random", "truncated", "over-long", "fields", "rrxe-headers",
				  "cnp", "ud", "bad-icrc" };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}
static uint32_t below(uint32_t n) { return n ? rnd() % n : 0; }

static uint32_t crc_table[256];
static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}
static uint32_t crc32(uint32_t c, const uint8_t *p, size_t n)
{
	while (n--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

/* Opcodes rrxe knows, and a few it does not. */
static const uint8_t ops[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
	0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x1c, 0x1d, 0x20, 0x24, 0x26,
	0x2a, 0x64, 0x65, 0x81, 0x15, 0x18, 0x30, 0x80, 0xff,
};
/* Header bytes after the BTH each opcode carries (as rrxe's table; 0 for unknown). */
static int ext_len(uint8_t op)
{
	uint8_t low = op & 0x1f;
	if (op == 0x64 || op == 0x65)
		return op == 0x65 ? 12 : 8;
	if (op == 0x81)
		return 16;
	if (op >> 5 > 1)
		return 0;
	switch (low) {
	case 0x03: case 0x09: case 0x16: case 0x17: return 4;
	case 0x05: return 4;
	case 0x06: case 0x0a: case 0x0c: case 0x1d: return 16;
	case 0x0b: return 20;
	case 0x0d: case 0x0f: case 0x10: case 0x11: return 4;
	case 0x12: return 12;
	case 0x13: case 0x14: return 28;
	case 0x1c: return 20;
	default: return 0;
	}
}

struct target { uint32_t qpn, psn; };
static struct target tgt[64];
static int ntgt;
static uint32_t excl[64];
static int nexcl;

static int excluded(uint32_t qpn)
{
	for (int i = 0; i < nexcl; i++)
		if (excl[i] == qpn)
			return 1;
	return 0;
}

/* A destination QPN and a PSN to go with it. */
static void pick(uint32_t *qpn, uint32_t *psn)
{
	if (ntgt && below(3)) {
		struct target *t = &tgt[below(ntgt)];
		static const int32_t near[] = { 0, 1, -1, 2, -2, 5, 127, -128, 511, 512, -4096,
						 1 << 22, -(1 << 22), 1 << 23 };
		*qpn = t->qpn;
		*psn = below(4) ? t->psn + near[below(sizeof(near) / sizeof(near[0]))] : rnd();
	} else {
		/* Outside the QPNs a device hands out (16 to 1039): only the named QPs, and
		 * never a transfer running beside the injector, get in-range QPNs. */
		do
			*qpn = below(4) ? 1040 + below(0xffffff - 1040) : below(16);
		while (excluded(*qpn & 0xffffff));
		*psn = rnd();
	}
	*psn &= 0xffffff;
	*qpn &= 0xffffff;
}

static void be32(uint8_t *p, uint32_t v) { p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v; }
static void be64(uint8_t *p, uint64_t v) { be32(p, v >> 32), be32(p + 4, (uint32_t)v); }
static void fill(uint8_t *p, size_t n) { while (n--) *p++ = (uint8_t)rnd(); }

/* Builds one packet's UDP payload (BTH onwards, without the ICRC) into p; returns its
 * length. */
static size_t build(enum kind k, uint8_t *p)
{
	uint32_t qpn, psn;
	uint8_t op = ops[below(sizeof(ops))];
	size_t n;

	pick(&qpn, &psn);
	if (k == K_CNP)
		op = 0x81;
	if (k == K_UD) {
		op = below(2) ? 0x64 : 0x65;
		if (below(2))
			qpn = 1;
	}
	/* BTH: opcode, SE/M/pad/tver, P_Key, resv|DestQP, A|resv|PSN. */
	p[0] = op;
	p[1] = k == K_FIELDS ? (uint8_t)rnd() : (uint8_t)(below(4) << 4);
	p[2] = 0xff, p[3] = 0xff;
	if (k == K_FIELDS && below(4) == 0)
		p[2] = (uint8_t)rnd(), p[3] = (uint8_t)rnd();
	be32(p + 4, qpn);
	p[4] = k == K_RRXE ? (uint8_t)rnd() : below(8) == 0 ? 0x40 : 0;
	be32(p + 8, psn);
	p[8] = (uint8_t)(below(2) << 7);
	if (k == K_RRXE)
		p[8] |= (uint8_t)(rnd() & 0x7f);
	int ext = ext_len(op);
	switch (k) {
	case K_RANDOM:
		n = 12 + below(1500);
		fill(p + 12, n - 12);
		if (below(2))
			fill(p, 12);
		return n;
	case K_TRUNC:
		n = 12 + (ext ? below(ext) : 0);
		fill(p + 12, n - 12);
		return n;
	case K_LONG:
		/* Beyond a path MTU of 1024 (and of 4096): needs a link MTU of 9000 to arrive. */
		n = 12 + ext + (below(4) ? 1025 + below(400) : 4097 + below(4000));
		fill(p + 12, n - 12);
		return n;
	case K_CNP:
		n = below(4) ? 28 : 12 + below(16);
		memset(p + 12, 0, 16);
		if (below(2)) {
			/* rrxe's versioned payload, any rates. */
			p[12] = 0x72, p[13] = 0x72, p[14] = (uint8_t)below(3);
			fill(p + 16, 12);
		} else if (below(2)) {
			fill(p + 12, 16);
		}
		return n;
	default:
		break;
	}
	/* Well-shaped extension headers with hostile contents, then a payload. */
	n = 12;
	uint8_t *h = p + 12;
	fill(h, ext > 0 ? ext : 0);
	if (op == 0x06 || op == 0x0a || op == 0x0b || op == 0x0c || op == 0x1c || op == 0x1d) {
		uint8_t *reth = h + (op == 0x1c ? 4 : 0);
		static const uint64_t vas[] = { 0, 8, 0x1000, ~0ull, ~0ull - 7, 1ull << 47 };
		static const uint32_t lens[] = { 0, 1, 8, 4096, 65536, 0x7fffffff, 0xffffffff };
		if (below(2))
			be64(reth, vas[below(6)]);
		if (below(2))
			be32(reth + 12, lens[below(7)]);
	}
	n += ext;
	if (k == K_RRXE) {
		/* XETH/SACK, verification and timestamp headers as the flags say, any bytes. */
		size_t extra = 4 * below(9);
		fill(p + n, extra);
		n += extra;
	}
	if (k == K_UD) {
		uint8_t *deth = p + 12;
		be32(deth, below(2) ? 0x80010000u : rnd());
	}
	size_t pay = below(4) == 0 ? below(4200) : below(256);
	fill(p + n, pay);
	return n + pay;
}

int main(int argc, char **argv)
{
	const char *src = NULL, *dst = NULL;
	long count = 0;
	int c, verbose = 0;
	while ((c = getopt(argc, argv, "s:d:n:q:x:r:v")) != -1) {
		switch (c) {
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'n': count = atol(optarg); break;
		case 'r': rng = strtoull(optarg, NULL, 0) * 0x9e3779b97f4a7c15ull | 1; break;
		case 'v': verbose = 1; break;
		case 'q':
			for (char *t = strtok(optarg, ","); t && ntgt < 64; t = strtok(NULL, ",")) {
				char *colon = strchr(t, ':');
				tgt[ntgt].qpn = strtoul(t, NULL, 0);
				tgt[ntgt].psn = colon ? strtoul(colon + 1, NULL, 0) : 0;
				ntgt++;
			}
			break;
		case 'x':
			for (char *t = strtok(optarg, ","); t && nexcl < 64; t = strtok(NULL, ","))
				excl[nexcl++] = strtoul(t, NULL, 0);
			break;
		default: die("usage: see the comment at the top of rrxe-hostile.c");
		}
	}
	if (!src || !dst || count <= 0)
		die("need -s SRC -d DST -n COUNT");
	crc_init();
	int s = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (s < 0)
		die("raw socket: %s", strerror(errno));
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct in_addr sa, da;
	if (!inet_aton(src, &sa) || !inet_aton(dst, &da))
		die("bad address");
	to.sin_addr = da;
	static uint8_t pkt[20 + 8 + 12000];
	long sent[K_N] = { 0 }, total = 0, refused = 0;
	for (long i = 0; i < count; i++) {
		enum kind k = (enum kind)below(K_N);
		int bad = k == K_BADCRC;
		if (bad)
			k = (enum kind)below(K_BADCRC);
		uint8_t *ip = pkt, *udp = pkt + 20, *bth = pkt + 28;
		size_t n = build(k, bth);
		size_t total_len = 28 + n + 4;
		/* IPv4 header: TOS 0, DF, TTL 64, UDP; the kernel fills in the checksum. */
		memset(ip, 0, 20);
		ip[0] = 0x45, ip[2] = total_len >> 8, ip[3] = (uint8_t)total_len;
		ip[4] = (uint8_t)(i >> 8), ip[5] = (uint8_t)i, ip[6] = 0x40, ip[8] = 64, ip[9] = 17;
		memcpy(ip + 12, &sa, 4);
		memcpy(ip + 16, &da, 4);
		uint16_t sport = 0xc000 | below(0x4000);
		udp[0] = sport >> 8, udp[1] = (uint8_t)sport, udp[2] = 4791 >> 8, udp[3] = 4791 & 0xff;
		udp[4] = (uint8_t)((8 + n + 4) >> 8), udp[5] = (uint8_t)(8 + n + 4), udp[6] = 0, udp[7] = 0;
		/* ICRC: eight 0xff bytes, then IP and UDP headers with their variant fields as
		 * ones, then BTH (byte 4 as ones) onwards; the complement, little-endian. */
		uint8_t m[28];
		memcpy(m, pkt, 28);
		m[1] = 0xff, m[8] = 0xff, m[10] = 0xff, m[11] = 0xff, m[26] = 0xff, m[27] = 0xff;
		static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
		uint32_t crc = crc32(0xffffffffu, ones, 8);
		crc = crc32(crc, m, 28);
		uint8_t b4 = bth[4];
		bth[4] = 0xff;
		crc = crc32(crc, bth, n);
		bth[4] = b4;
		crc = ~crc;
		if (bad)
			crc ^= 0x5a5a5a5au;
		uint8_t *t = bth + n;
		t[0] = (uint8_t)crc, t[1] = (uint8_t)(crc >> 8), t[2] = (uint8_t)(crc >> 16), t[3] = (uint8_t)(crc >> 24);
		if (sendto(s, pkt, total_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
			/* EMSGSIZE for the over-long ones beyond the link MTU, ENOBUFS when the
			 * queue is full: counted, and the run goes on. */
			refused++;
			if (errno == ENOBUFS)
				usleep(100);
			continue;
		}
		sent[bad ? K_BADCRC : k]++;
		total++;
	}
	for (int k = 0; k < K_N; k++)
		if (verbose || sent[k])
			printf("rrxe-hostile: %s %ld\n", kname[k], sent[k]);
	printf("rrxe-hostile: sent %ld refused %ld\n", total, refused);
	return 0;
}
