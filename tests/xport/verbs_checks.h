/* Verbs backend checks shared by tests/xport/verbs.c (one host, fork
 * bootstrap, Soft-RoCE in one guest) and tests/xport/twonode.c (tcp
 * bootstrap across two guests).  Every check is collective: each rank
 * computes its verdict, the verdicts are allgathered, and the printing
 * ranks emit one TAP line with the ranks that failed.
 * Included by exactly one .c file per test binary. */
#ifndef IBC_TESTS_XPORT_VERBS_CHECKS_H
#define IBC_TESTS_XPORT_VERBS_CHECKS_H

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "tap.h"
#include "xport/xport.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VC_REGION (8u << 20)    /* per rank: [0, 4M) target area, [4M, 8M) source */
#define VC_SRC (4u << 20)
#define VC_CTRL_OFF ((8u << 20) - 4096) /* flags and counters live in the last page */
#define VC_TIMEOUT_NS (20LL * 1000 * 1000 * 1000)

struct vc {
	struct ibc_boot *b;
	int print;                 /* this rank prints TAP */
	struct ibc_xport *x;
	struct ibc_xport_mr *mr;
	struct ibc_xport_rdesc *rd; /* every rank's region */
	uint8_t *base;
	int right, left;
};

/* collective verdict; returns 1 when every rank passed */
static int vc_check(struct vc *c, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int vc_check(struct vc *c, int ok, const char *fmt, ...)
{
	int n = c->b->size;
	int *all = calloc((size_t)n, sizeof(int));
	int mine = ok ? 1 : 0, every = 1;
	char name[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (!all || ibc_boot_allgather(c->b, &mine, all, sizeof(int)) != IBC_OK) {
		if (c->print)
			tap_ok(0, "%s (verdict exchange failed)", name);
		free(all);
		return 0;
	}
	char bad[256] = "";
	size_t bl = 0;
	for (int r = 0; r < n; r++) {
		if (!all[r]) {
			every = 0;
			if (bl < sizeof(bad) - 8)
				bl += (size_t)snprintf(bad + bl, sizeof(bad) - bl, " %d", r);
		}
	}
	if (c->print) {
		tap_ok(every, "%s", name);
		if (!every)
			tap_diag("failed on rank(s):%s", bad);
	}
	free(all);
	return every;
}

static void vc_pattern(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131u + seed * 7u + (i >> 8)) & 0xff);
}

static int vc_pattern_ok(const uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)((i * 131u + seed * 7u + (i >> 8)) & 0xff))
			return 0;
	return 1;
}

/* waits for one completion on cq; IBC_OK only for a successful one */
static int vc_wait(struct vc *c, int cq, struct ibc_xport_wc *wc)
{
	int rc = ibc_xport_cq_wait(c->x, cq, VC_TIMEOUT_NS, wc);
	if (rc)
		return rc;
	if (wc->status != IBC_OK)
		tap_diag("rank %d: %s completed with %s", c->b->rank, ibc_xport_opcode_name(wc->opcode),
			 wc->reason ? wc->reason : "?");
	return wc->status;
}

static struct ibc_xport_sge vc_sge(struct vc *c, size_t off, uint32_t len)
{
	return (struct ibc_xport_sge){ .addr = (uint64_t)(uintptr_t)(c->base + off), .len = len,
				       .lkey = c->mr->lkey };
}

static uint64_t vc_raddr(struct vc *c, int r, size_t off)
{
	return c->rd[r].addr + off;
}

/* write `len` bytes gathered from nseg pieces of the source area to the right
 * neighbour's target area at offset 0; the neighbour checks */
static int vc_write_gather(struct vc *c, size_t len, int nseg, unsigned seed, int inl)
{
	int ok = 1;
	struct ibc_xport_sge sg[IBC_XPORT_MAX_SGE];
	if (nseg > (int)c->x->caps.max_sge)
		nseg = (int)c->x->caps.max_sge;
	memset(c->base, 0, len + 64);
	vc_pattern(c->base + VC_SRC, len, seed + (unsigned)c->b->rank);
	/* uneven pieces, each from a gap-separated place in the source, copied
	 * to where the pattern expects them: piece k of the source area starts at
	 * VC_SRC + off + k*64 so pieces are not contiguous locally */
	size_t off = 0;
	uint8_t *tmp = malloc(len ? len : 1);
	if (!tmp)
		return 0;
	memcpy(tmp, c->base + VC_SRC, len);
	size_t per = len / (size_t)nseg;
	for (int k = 0; k < nseg; k++) {
		size_t l = k == nseg - 1 ? len - off : per;
		size_t src = VC_SRC + off + (size_t)k * 64;
		memmove(c->base + src, tmp + off, l);
		sg[k] = vc_sge(c, src, (uint32_t)l);
		off += l;
	}
	free(tmp);
	ibc_boot_barrier(c->b); /* the target area is clear everywhere */
	int rc = ibc_xport_write(c->x, c->right, sg, nseg, vc_raddr(c, c->right, 0),
				 c->rd[c->right].rkey,
				 IBC_XPORT_WR_SIGNALED | (inl ? IBC_XPORT_WR_INLINE : 0), 42);
	struct ibc_xport_wc wc;
	if (rc == IBC_OK)
		rc = vc_wait(c, IBC_XPORT_CQ_SEND, &wc);
	if (rc || wc.wr_id != 42 || wc.opcode != IBC_XPORT_OP_WRITE || wc.peer != c->right)
		ok = 0;
	ibc_boot_barrier(c->b);
	if (!vc_pattern_ok(c->base, len, seed + (unsigned)c->left))
		ok = 0;
	return ok;
}

static void vc_run_errors(struct ibc_boot *b, int print, struct vc *c0);
static void vc_run_xrc(struct ibc_boot *b, int print);

static int vc_run(struct ibc_boot *b, int print)
{
	struct vc cs = { .b = b, .print = print }, *c = &cs;
	struct ibc_xport_params p;
	ibc_xport_params_init(&p);
	p.backend = "verbs";
	int rc = ibc_xport_open(b, &p, &c->x);
	if (!vc_check(c, rc == IBC_OK, "open the verbs transport"))
		return 1;
	if (print)
		tap_diag("device %s inline %u max_sge %u mcast %d (mtu %u, loopback %d) atomics %d",
			 c->x->caps.device, c->x->caps.max_inline, c->x->caps.max_sge, c->x->caps.mcast,
			 c->x->caps.mcast_mtu, c->x->caps.mcast_loopback, c->x->caps.atomics);
	c->right = (b->rank + 1) % b->size;
	c->left = (b->rank + b->size - 1) % b->size;
	rc = ibc_xport_mr_alloc(c->x, VC_REGION, IBC_XPORT_ACCESS_ALL, &c->mr);
	c->rd = calloc((size_t)b->size, sizeof(*c->rd));
	if (rc == IBC_OK && c->rd)
		rc = ibc_xport_rdesc_allgather(c->x, &c->mr->rdesc, c->rd);
	if (!vc_check(c, rc == IBC_OK && c->rd, "register 8 MiB and exchange descriptors"))
		return 1;
	c->base = c->mr->addr;
	rc = ibc_xport_connect(c->x, NULL);
	if (!vc_check(c, rc == IBC_OK, "connect RC queue pairs to every rank"))
		return 1;

	/* ---- RDMA write with gather lists, sizes 1 B .. 4 MiB ---- */
	static const struct { size_t len; int nseg; } wg[] = {
		{ 1, 1 }, { 64, 2 }, { 4099, 3 }, { 65536, 16 }, { 1u << 20, 5 }, { (4u << 20) - 4096, 16 },
	};
	for (size_t i = 0; i < sizeof(wg) / sizeof(wg[0]); i++)
		vc_check(c, vc_write_gather(c, wg[i].len, wg[i].nseg, (unsigned)i, 0),
			 "write %zu bytes gathered from %d segments", wg[i].len, wg[i].nseg);
	if (c->x->caps.max_inline >= 16)
		vc_check(c, vc_write_gather(c, c->x->caps.max_inline, 2, 99, 1),
			 "inline write of %u bytes", c->x->caps.max_inline);
	else if (print)
		tap_skip(1, "device gives no inline data");

	/* ---- post list vs single post ---- */
	{
		struct ibc_xport_stats s0, s1, s2;
		struct ibc_xport_wr w[32];
		struct ibc_xport_sge sg[32];
		memset(c->base, 0, 32 * 128);
		for (int i = 0; i < 32; i++)
			vc_pattern(c->base + VC_SRC + (size_t)i * 128, 128, (unsigned)(b->rank * 100 + i));
		ibc_boot_barrier(b);
		for (int i = 0; i < 32; i++) {
			sg[i] = vc_sge(c, VC_SRC + (size_t)i * 128, 64);
			w[i] = (struct ibc_xport_wr){ .wr_id = (uint64_t)i, .opcode = IBC_XPORT_OP_WRITE,
						      .flags = i == 31 ? IBC_XPORT_WR_SIGNALED : 0,
						      .peer = c->right, .num_sge = 1, .sge = &sg[i],
						      .remote_addr = vc_raddr(c, c->right, (size_t)i * 128),
						      .rkey = c->rd[c->right].rkey };
		}
		ibc_xport_stats_get(c->x, &s0);
		int posted = 0, ok = 1;
		rc = ibc_xport_post(c->x, w, 32, &posted);
		struct ibc_xport_wc wc;
		ok &= rc == IBC_OK && posted == 32 && vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK &&
		      wc.wr_id == 31;
		ibc_xport_stats_get(c->x, &s1);
		/* second halves, one call each */
		for (int i = 0; i < 32 && ok; i++) {
			sg[i].addr += 64;
			w[i].remote_addr += 64;
			ok &= ibc_xport_post(c->x, &w[i], 1, &posted) == IBC_OK;
		}
		ok &= vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK && wc.wr_id == 31;
		ibc_xport_stats_get(c->x, &s2);
		ibc_boot_barrier(b);
		for (int i = 0; i < 32; i++)
			ok &= vc_pattern_ok(c->base + (size_t)i * 128, 128,
					    (unsigned)(c->left * 100 + i));
		vc_check(c, ok, "post list of 32 writes and 32 single posts deliver the same bytes");
		vc_check(c, s1.post_calls - s0.post_calls == 1 && s2.post_calls - s1.post_calls == 32 &&
				    s2.posted - s0.posted == 64,
			 "post list = 1 ibv_post_send call, single posts = 32 (%" PRIu64 ", %" PRIu64 ")",
			 s1.post_calls - s0.post_calls, s2.post_calls - s1.post_calls);
	}

	/* ---- payload then flag, many times; the reader checks after the flag ---- */
	{
		uint64_t *flag = (uint64_t *)(c->base + VC_CTRL_OFF);
		uint64_t *ack = flag + 1;
		uint64_t *one = flag + 8; /* source words */
		*flag = *ack = 0;
		ibc_boot_barrier(b);
		int ok = 1;
		const size_t plen = 65536;
		for (uint64_t it = 1; it <= 50 && ok; it++) {
			memset(c->base + VC_SRC, (int)(it & 0xff), plen);
			struct ibc_xport_sge ps = vc_sge(c, VC_SRC, (uint32_t)plen);
			one[0] = it;
			struct ibc_xport_sge fs = vc_sge(c, VC_CTRL_OFF + 64, 8);
			struct ibc_xport_wr w[2] = {
				{ .wr_id = 1, .opcode = IBC_XPORT_OP_WRITE, .peer = c->right, .num_sge = 1,
				  .sge = &ps, .remote_addr = vc_raddr(c, c->right, 0),
				  .rkey = c->rd[c->right].rkey },
				{ .wr_id = 2, .opcode = IBC_XPORT_OP_WRITE, .flags = IBC_XPORT_WR_SIGNALED,
				  .peer = c->right, .num_sge = 1, .sge = &fs,
				  .remote_addr = vc_raddr(c, c->right, VC_CTRL_OFF), .rkey = c->rd[c->right].rkey },
			};
			int posted;
			struct ibc_xport_wc wc;
			ok &= ibc_xport_post(c->x, w, 2, &posted) == IBC_OK;
			ok &= ok && vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK;
			/* reader side */
			ok &= ok && ibc_xport_wait_u64(c->x, flag, it, VC_TIMEOUT_NS, NULL) == IBC_OK;
			for (size_t i = 0; i < plen && ok; i += 509)
				ok &= c->base[i] == (uint8_t)(it & 0xff);
			ok &= c->base[plen - 1] == (uint8_t)(it & 0xff);
			/* ack back to the writer (our left) */
			one[1] = it;
			struct ibc_xport_sge as = vc_sge(c, VC_CTRL_OFF + 72, 8);
			ok &= ok && ibc_xport_write(c->x, c->left, &as, 1, vc_raddr(c, c->left, VC_CTRL_OFF + 8),
						    c->rd[c->left].rkey, IBC_XPORT_WR_SIGNALED, 3) == IBC_OK;
			ok &= ok && vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK;
			ok &= ok && ibc_xport_wait_u64(c->x, ack, it, VC_TIMEOUT_NS, NULL) == IBC_OK;
		}
		vc_check(c, ok, "64 KiB payload then flag, 50 rounds: payload complete when the flag shows");
	}

	/* ---- RDMA read ---- */
	{
		vc_pattern(c->base + VC_SRC + (2u << 20), 1u << 20, 500u + (unsigned)b->rank);
		ibc_boot_barrier(b);
		struct ibc_xport_sge sg[3] = { vc_sge(c, 0, 1000), vc_sge(c, 4096, 300000),
					       vc_sge(c, 400000, (1u << 20) - 301000) };
		struct ibc_xport_wc wc;
		rc = ibc_xport_read(c->x, c->right, sg, 3, vc_raddr(c, c->right, VC_SRC + (2u << 20)),
				    c->rd[c->right].rkey, IBC_XPORT_WR_SIGNALED, 7);
		int ok = rc == IBC_OK && vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK &&
			 wc.opcode == IBC_XPORT_OP_READ && wc.byte_len == (1u << 20);
		uint8_t *chk = malloc(1u << 20);
		if (chk && ok) {
			memcpy(chk, c->base, 1000);
			memcpy(chk + 1000, c->base + 4096, 300000);
			memcpy(chk + 301000, c->base + 400000, (1u << 20) - 301000);
			ok = vc_pattern_ok(chk, 1u << 20, 500u + (unsigned)c->right);
		}
		free(chk);
		ibc_boot_barrier(b);
		vc_check(c, ok, "RDMA read of 1 MiB scattered into 3 segments");
	}

	/* ---- write with immediate ---- */
	{
		struct ibc_xport_sge rs = vc_sge(c, VC_SRC + (3u << 20), 64);
		int ok = ibc_xport_recv(c->x, c->left, NULL, &rs, 1, 77) == IBC_OK;
		ibc_boot_barrier(b);
		vc_pattern(c->base + VC_SRC, 3000, 900u + (unsigned)b->rank);
		struct ibc_xport_sge sg = vc_sge(c, VC_SRC, 3000);
		struct ibc_xport_wc wc;
		ok &= ibc_xport_write_imm(c->x, c->right, &sg, 1, vc_raddr(c, c->right, 8192),
					  c->rd[c->right].rkey, 0xabc00000u + (uint32_t)b->rank,
					  IBC_XPORT_WR_SIGNALED, 8) == IBC_OK;
		ok &= vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK && wc.opcode == IBC_XPORT_OP_WRITE_IMM;
		ok &= vc_wait(c, IBC_XPORT_CQ_RECV, &wc) == IBC_OK &&
		      wc.opcode == IBC_XPORT_OP_RECV_WRITE_IMM && wc.wr_id == 77 &&
		      (wc.flags & IBC_XPORT_WC_IMM) && wc.imm == 0xabc00000u + (uint32_t)c->left &&
		      wc.peer == c->left;
		ok &= vc_pattern_ok(c->base + 8192, 3000, 900u + (unsigned)c->left);
		ibc_boot_barrier(b);
		vc_check(c, ok, "write with immediate: data, immediate and source at the target");
	}

	/* ---- send / receive ---- */
	{
		int ok = 1;
		struct ibc_xport_sge rs[2] = { vc_sge(c, VC_SRC + (3u << 20), 100),
					       vc_sge(c, VC_SRC + (3u << 20) + 4096, 4000) };
		ok &= ibc_xport_recv(c->x, c->left, NULL, rs, 2, 55) == IBC_OK;
		ibc_boot_barrier(b);
		vc_pattern(c->base + VC_SRC, 2500, 1300u + (unsigned)b->rank);
		struct ibc_xport_sge ss[2] = { vc_sge(c, VC_SRC, 1000), vc_sge(c, VC_SRC + 1000, 1500) };
		struct ibc_xport_wc wc;
		ok &= ibc_xport_send(c->x, c->right, ss, 2, IBC_XPORT_WR_SIGNALED, 9) == IBC_OK;
		ok &= vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK && wc.opcode == IBC_XPORT_OP_SEND;
		ok &= vc_wait(c, IBC_XPORT_CQ_RECV, &wc) == IBC_OK && wc.opcode == IBC_XPORT_OP_RECV &&
		      wc.byte_len == 2500 && wc.wr_id == 55 && wc.peer == c->left;
		uint8_t chk[2500];
		memcpy(chk, c->base + VC_SRC + (3u << 20), 100);
		memcpy(chk + 100, c->base + VC_SRC + (3u << 20) + 4096, 2400);
		ok &= vc_pattern_ok(chk, 2500, 1300u + (unsigned)c->left);
		ibc_boot_barrier(b);
		vc_check(c, ok, "send of 2500 bytes from 2 segments into a 2-segment receive");
	}

	/* ---- atomics under contention: every rank hits rank 0 ---- */
	if (c->x->caps.atomics) {
		uint64_t *ctr = (uint64_t *)(c->base + VC_CTRL_OFF + 256);
		uint64_t *lock = ctr + 1;
		uint64_t *res = (uint64_t *)(c->base + VC_CTRL_OFF + 512);
		*ctr = *lock = 0;
		ibc_boot_barrier(b);
		int ok = 1;
		const int k = 100;
		struct ibc_xport_sge rsg = vc_sge(c, VC_CTRL_OFF + 512, 8);
		struct ibc_xport_wc wc;
		for (int i = 0; i < k && ok; i++) {
			ok &= ibc_xport_fadd(c->x, 0, &rsg, vc_raddr(c, 0, VC_CTRL_OFF + 256),
					     c->rd[0].rkey, 1, IBC_XPORT_WR_SIGNALED, 10) == IBC_OK;
			ok &= ok && vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK &&
			      wc.opcode == IBC_XPORT_OP_FETCH_ADD && *res < (uint64_t)(k * b->size);
		}
		*res = 12345;
		ok &= ok && ibc_xport_cswap(c->x, 0, &rsg, vc_raddr(c, 0, VC_CTRL_OFF + 264), c->rd[0].rkey,
					    0, (uint64_t)b->rank + 1, IBC_XPORT_WR_SIGNALED, 11) == IBC_OK;
		ok &= ok && vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK;
		int won = ok && *res == 0;
		ibc_boot_barrier(b);
		int *wins = calloc((size_t)b->size, sizeof(int));
		ibc_boot_allgather(b, &won, wins, sizeof(int));
		int nwin = 0, winner = -1;
		for (int r = 0; r < b->size; r++)
			if (wins[r]) {
				nwin++;
				winner = r;
			}
		free(wins);
		if (b->rank == 0)
			ok &= *ctr == (uint64_t)(k * b->size) && *lock == (uint64_t)winner + 1;
		vc_check(c, ok && nwin == 1,
			 "%d fetch-adds from each of %d ranks sum up; exactly one compare-swap wins",
			 k, b->size);
	} else if (print) {
		tap_skip(1, "device has no atomics");
	}

	/* ---- multicast: rank 0 sends, everybody (rank 0 too with loopback) receives ---- */
	if (c->x->caps.mcast) {
		struct ibc_xport_mcast *g = NULL;
		rc = ibc_xport_mcast_join(c->x, "verbs-smoke", 0, &g);
		int ok = rc == IBC_OK;
		const int nd = 3;
		for (int i = 0; i < 8 && ok; i++) {
			struct ibc_xport_sge rs = vc_sge(c, VC_SRC + (3u << 20) + (size_t)i * 4096, 2048);
			ok &= ibc_xport_recv(c->x, -1, g, &rs, 1, 200u + (unsigned)i) == IBC_OK;
		}
		if (!vc_check(c, ok, "join multicast group and post receives"))
			goto mcast_done;
		int want = b->rank != 0 || c->x->caps.mcast_loopback;
		if (b->rank == 0) {
			for (int i = 0; i < nd && ok; i++) {
				vc_pattern(c->base + VC_SRC + (size_t)i * 1024, 200, 2000u + (unsigned)i);
				struct ibc_xport_sge ss = vc_sge(c, VC_SRC + (size_t)i * 1024, 200);
				struct ibc_xport_wc wc;
				ok &= ibc_xport_mcast_send(c->x, g, &ss, 1, IBC_XPORT_WR_SIGNALED, 300) == IBC_OK;
				ok &= ok && vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK &&
				      wc.opcode == IBC_XPORT_OP_MCAST_SEND;
			}
		}
		int got = 0, good = 0;
		if (want) {
			for (int i = 0; i < nd; i++) {
				struct ibc_xport_wc wc;
				rc = ibc_xport_cq_wait(c->x, IBC_XPORT_CQ_RECV, 5LL * 1000 * 1000 * 1000, &wc);
				if (rc)
					break;
				got++;
				if (wc.status == IBC_OK && wc.opcode == IBC_XPORT_OP_MCAST_RECV &&
				    wc.byte_len == 200 && wc.wr_id >= 200 && wc.wr_id < 208) {
					const uint8_t *d = c->base + VC_SRC + (3u << 20) +
							   (size_t)(wc.wr_id - 200) * 4096;
					for (int s = 0; s < nd; s++)
						if (vc_pattern_ok(d, 200, 2000u + (unsigned)s))
							good++;
				}
			}
			if (got < nd)
				tap_diag("rank %d: %d of %d datagrams arrived", b->rank, got, nd);
		}
		ibc_boot_barrier(b);
		vc_check(c, ok && (!want || (good >= 1 && good == got)),
			 "multicast: datagrams from rank 0 reach the other %d members intact (unreliable: >= 1)",
			 b->size - 1);
		/* leave drains the group's queue; its posted receives are orphaned */
		vc_check(c, ibc_xport_mcast_leave(c->x, g) == IBC_OK, "leave the multicast group");
	} else if (print) {
		tap_skip(3, "no multicast on this device");
	}
mcast_done:;

	struct ibc_xport_stats st;
	ibc_xport_stats_get(c->x, &st);
	vc_check(c, st.mrs == 1 && st.qps >= (uint64_t)b->size, "stats: 1 registration, %" PRIu64 " queue pairs", st.qps);

	vc_run_errors(b, print, c);
	vc_run_xrc(b, print);

	free(c->rd);
	vc_check(c, ibc_xport_mr_dereg(c->x, c->mr) == IBC_OK, "deregister");
	rc = ibc_xport_close(c->x);
	c->x = NULL;
	/* vc_check still works: it only uses the bootstrap */
	vc_check(c, rc == IBC_OK, "close");
	return 0;
}

/* error completions break the connection (QP in error state): each case
 * gets a fresh instance */
static void vc_run_errors(struct ibc_boot *b, int print, struct vc *c0)
{
	static const char *const what[] = { "bad rkey", "out-of-range address", "deregistered memory" };
	for (int kind = 0; kind < 3; kind++) {
		struct vc cs = { .b = b, .print = print }, *c = &cs;
		struct ibc_xport_params p;
		ibc_xport_params_init(&p);
		p.backend = "verbs";
		int rc = ibc_xport_open(b, &p, &c->x);
		struct ibc_xport_mr *victim = NULL;
		if (rc == IBC_OK)
			rc = ibc_xport_mr_alloc(c->x, 1u << 16, IBC_XPORT_ACCESS_ALL, &c->mr);
		if (rc == IBC_OK)
			rc = ibc_xport_mr_alloc(c->x, 4096, IBC_XPORT_ACCESS_ALL, &victim);
		c->rd = calloc((size_t)b->size, sizeof(*c->rd));
		struct ibc_xport_rdesc *vd = calloc((size_t)b->size, sizeof(*vd));
		if (rc == IBC_OK)
			rc = ibc_xport_rdesc_allgather(c->x, &c->mr->rdesc, c->rd);
		if (rc == IBC_OK)
			rc = ibc_xport_rdesc_allgather(c->x, &victim->rdesc, vd);
		if (rc == IBC_OK)
			rc = ibc_xport_connect(c->x, NULL);
		if (!vc_check(c, rc == IBC_OK, "error case %s: set up", what[kind])) {
			free(c->rd);
			free(vd);
			if (c->x)
				ibc_xport_close(c->x);
			continue;
		}
		c->base = c->mr->addr;
		c->right = (b->rank + 1) % b->size;
		if (kind == 2) {
			rc = ibc_xport_mr_dereg(c->x, victim);
			victim = NULL;
		}
		ibc_boot_barrier(b);
		memset(c->base, 0x5a, 4096);
		struct ibc_xport_sge sg = vc_sge(c, 0, 256);
		uint32_t rkey = vd[c->right].rkey;
		uint64_t raddr = vd[c->right].addr;
		if (kind == 0)
			rkey ^= 0x00ff00ffu;
		else if (kind == 1)
			raddr += 4096 - 128; /* runs 128 bytes past the end */
		struct ibc_xport_wc wc = { 0 };
		int ok = ibc_xport_write(c->x, c->right, &sg, 1, raddr, rkey, 0 /* unsignaled */, 66) == IBC_OK;
		rc = ok ? ibc_xport_cq_wait(c->x, IBC_XPORT_CQ_SEND, VC_TIMEOUT_NS, &wc) : IBC_ERR_INVAL;
		ok = ok && rc == IBC_OK && wc.status != IBC_OK && wc.wr_id == 66 &&
		     wc.opcode == IBC_XPORT_OP_WRITE && wc.reason && *wc.reason;
		if (rc == IBC_OK && print)
			tap_diag("%s: status %s, reason \"%s\"", what[kind], ibc_status_str(wc.status),
				 wc.reason ? wc.reason : "");
		ibc_boot_barrier(b);
		/* nothing of the failed write landed in our victim region */
		int clean = 1;
		if (victim)
			for (size_t i = 0; i < victim->len; i++)
				clean &= ((const uint8_t *)victim->addr)[i] == 0;
		vc_check(c, ok && clean, "error completion for a write with a %s (unsignaled), no stray store",
			 what[kind]);
		free(c->rd);
		free(vd);
		(void)c0;
		vc_check(c, ibc_xport_close(c->x) == IBC_OK, "error case %s: close", what[kind]);
	}
}

/* XRC: one SRQ per process, one initiator QP per remote node.  Devices
 * without XRC (rxe) refuse at open: skip with the device's own reason. */
static void vc_run_xrc(struct ibc_boot *b, int print)
{
	struct vc cs = { .b = b, .print = print }, *c = &cs;
	struct ibc_xport_params p;
	ibc_xport_params_init(&p);
	p.backend = "verbs";
	p.conn = IBC_XPORT_CONN_XRC;
	int rc = ibc_xport_open(b, &p, &c->x);
	int *all = calloc((size_t)b->size, sizeof(int));
	ibc_boot_allgather(b, &rc, all, sizeof(int));
	int unsup = 0, okc = 0;
	for (int r = 0; r < b->size; r++) {
		unsup += all[r] == IBC_ERR_UNSUPPORTED;
		okc += all[r] == IBC_OK;
	}
	free(all);
	if (unsup == b->size) {
		if (print)
			tap_skip(4, "XRC unsupported: %s", ibc_xport_unsupported_reason());
		return;
	}
	if (!vc_check(c, okc == b->size, "XRC: open")) {
		if (c->x)
			ibc_xport_close(c->x);
		return;
	}
	c->right = (b->rank + 1) % b->size;
	c->left = (b->rank + b->size - 1) % b->size;
	c->rd = calloc((size_t)b->size, sizeof(*c->rd));
	rc = ibc_xport_mr_alloc(c->x, 1u << 20, IBC_XPORT_ACCESS_ALL, &c->mr);
	if (rc == IBC_OK)
		rc = ibc_xport_rdesc_allgather(c->x, &c->mr->rdesc, c->rd);
	if (rc == IBC_OK)
		rc = ibc_xport_connect(c->x, NULL);
	if (vc_check(c, rc == IBC_OK, "XRC: register and connect (%d ranks)", b->size)) {
		c->base = c->mr->addr;
		struct ibc_xport_sge rs = vc_sge(c, 512u << 10, 8192);
		int ok = ibc_xport_recv(c->x, IBC_XPORT_PEER_ANY, NULL, &rs, 1, 5) == IBC_OK;
		vc_pattern(c->base + (256u << 10), 5000, 77u + (unsigned)b->rank);
		ibc_boot_barrier(b);
		struct ibc_xport_sge ws = vc_sge(c, 256u << 10, 5000);
		struct ibc_xport_wc wc;
		ok &= ibc_xport_write(c->x, c->right, &ws, 1, vc_raddr(c, c->right, 0),
				      c->rd[c->right].rkey, IBC_XPORT_WR_SIGNALED, 1) == IBC_OK;
		ok &= ok && vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK;
		ok &= ibc_xport_send(c->x, c->right, &ws, 1, IBC_XPORT_WR_SIGNALED, 2) == IBC_OK;
		ok &= ok && vc_wait(c, IBC_XPORT_CQ_SEND, &wc) == IBC_OK;
		ok &= ok && vc_wait(c, IBC_XPORT_CQ_RECV, &wc) == IBC_OK && wc.byte_len == 5000;
		ibc_boot_barrier(b);
		ok &= vc_pattern_ok(c->base, 5000, 77u + (unsigned)c->left);
		vc_check(c, ok, "XRC: write and send to the right neighbour through the node's shared QP");
	} else if (print) {
		tap_skip(1, "XRC connect failed");
	}
	free(c->rd);
	vc_check(c, ibc_xport_close(c->x) == IBC_OK, "XRC: close");
}

#endif
