/* Link-level kernels as harness operations (link.h). */
#include "link/link.h"

#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "harness/harness.h"
#include "link/perftest.h"
#include "xport/xport.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TMO_NS (30LL * 1000 * 1000 * 1000)
#define NRECV 4

enum { K_WRITE_LAT, K_READ_LAT, K_SEND_LAT, K_WRITE_BW, K_PT_LAT, K_PT_BW, K_COUNT };

static const char *const variants[] = { "write-lat", "read-lat", "send-lat", "write-bw" };

struct link_op {
	struct ibc_link *L;
	int kind;
};

struct ibc_link {
	struct ibc_boot *boot;
	struct ibc_xport *x;
	struct ibc_xport_mr *mr;     /* [0, maxb) receive area, [maxb, 2 maxb) source, flags */
	struct ibc_xport_rdesc rd[2];
	unsigned char *rx, *tx;
	uint64_t *flag_in, *flag_src;
	size_t maxb, bytes;
	uint64_t seq;                /* write-lat rounds, the same on both ranks */
	int rank, peer;
	int recvs_posted;
	long window;
	int perftest;
	double *bw_us;               /* write-bw window times of this point */
	long bw_n, bw_cap, bw_skip;
	/* perftest results of the current point (rank 0): [0] write-lat, [1] write-bw */
	struct ibc_link_perftest_result pt[2];
	long pt_next;                /* next write-lat sample to replay */
	int pt_port;                 /* next TCP port, the same on both ranks */
	struct link_op ops[K_COUNT];
};

size_t ibc_link_variant_count(void)
{
	return sizeof(variants) / sizeof(variants[0]);
}

const char *ibc_link_variant_name(size_t i)
{
	return i < ibc_link_variant_count() ? variants[i] : NULL;
}

static unsigned char pattern(size_t bytes, size_t i)
{
	return (unsigned char)(bytes * 7 + i * 13 + 1);
}

static int wc_wait(struct ibc_link *L, int cq, const char *what)
{
	struct ibc_xport_wc wc;
	int rc = ibc_xport_cq_wait(L->x, cq, TMO_NS, &wc);

	if (rc != IBC_OK) {
		ibc_error("link: %s: no completion: %s", what, ibc_status_str(rc));
		return rc;
	}
	if (wc.status != IBC_OK) {
		ibc_error("link: %s: %s failed: %s", what, ibc_xport_opcode_name(wc.opcode), wc.reason);
		return IBC_ERR_REMOTE;
	}
	return IBC_OK;
}

static int recv_post_one(struct ibc_link *L)
{
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)L->rx, (uint32_t)L->maxb, L->mr->lkey };

	return ibc_xport_recv(L->x, L->peer, NULL, &s, 1, 1);
}

/* ------------------------------------------------------------ perftest ---- */

#define PT_TRIES 4 /* perftest runs per point before it is skipped */

static int pt_setup(struct ibc_link *L, int bw, const struct ibc_harness_point *pt)
{
	struct ibc_link_perftest_result *res = &L->pt[bw];
	struct ibc_link_perftest_args a = {
		.tool = bw ? IBC_LINK_PERFTEST_WRITE_BW : IBC_LINK_PERFTEST_WRITE_LAT,
		.device = L->x->caps.device,
		.gid_index = L->x->params.gid_index,
		.bytes = L->bytes,
		.iters = bw ? (L->bytes >= 1024 * 1024 ? 20 : 200) : pt->iters + pt->warmup,
		.window = L->window,
	};
	int rc;

	if (!bw)
		L->pt_next = 0;
	if (strcmp(L->x->caps.backend, "verbs") != 0 ||
	    L->boot->num_nodes != 1 || L->bytes == 0)
		return IBC_ERR_UNSUPPORTED;
	/* perftest is another program with its own TCP handshake and its own
	 * clock calibration, which fails on a busy host (a TCG guest above all)
	 * and then prints zeros or infinities: a point gets PT_TRIES runs, each
	 * on a fresh port after a pause, and is skipped with the reason after */
	for (int t = 1;; t++) {
		const char *tool = bw ? "write-bw" : "write-lat", *why = NULL;
		int agreed;
		ibc_link_perftest_result_reset(res);
		a.tcp_port = L->pt_port++;
		rc = ibc_link_perftest_run(L->boot, &a, res);
		if (rc != IBC_OK)
			why = "its client failed (see above)";
		else if (L->rank == 0 && res->clock_bad)
			why = "it could not calibrate its cycle counter (busy host)";
		else if (L->rank == 0 && ((!bw && res->n == 0) || (bw && res->mbps <= 0)))
			why = "no results in its output";
		if (why != NULL && rc == IBC_OK)
			rc = IBC_ERR_UNSUPPORTED;
		if (ibc_boot_agree(L->boot, rc, &agreed) != IBC_OK)
			return IBC_ERR_CLOSED;
		if (agreed == IBC_OK)
			return IBC_OK;
		if (agreed == IBC_ERR_NOTFOUND) /* not installed: no point in trying again */
			return IBC_ERR_UNSUPPORTED;
		if (L->rank == 0 && t == PT_TRIES)
			ibc_warn("link: perftest %s at %zu bytes skipped after %d tries: %s "
				 "(last line: '%s')", tool, L->bytes, t, why ? why : "a rank failed",
				 res->last_line);
		else if (L->rank == 0)
			ibc_info("link: perftest %s at %zu bytes, try %d of %d: %s", tool,
				 L->bytes, t, PT_TRIES, why ? why : "a rank failed");
		if (t == PT_TRIES)
			return agreed;
		nanosleep(&(struct timespec){ 0, 300 * 1000 * 1000 }, NULL);
	}
}

/* replay perftest's numbers: one sample per iteration (rank 0 counts) */
static int pt_replay(struct ibc_harness *h, struct ibc_link *L, int bw)
{
	if (L->rank != 0) {
		ibc_harness_sample_set(h, 0);
	} else if (!bw) {
		struct ibc_link_perftest_result *r = &L->pt[0];
		if (r->n == 0)
			return IBC_ERR_INVAL;
		ibc_harness_sample_set(h, r->us[L->pt_next++ % r->n]);
	} else {
		if (L->pt[1].mbps <= 0)
			return IBC_ERR_INVAL;
		ibc_harness_sample_set(h, (double)L->bytes / L->pt[1].mbps);
	}
	return IBC_OK;
}

/* ------------------------------------------------------------- kernels ---- */

static int op_setup(struct ibc_harness *h, const struct ibc_harness_point *pt, void *arg)
{
	struct link_op *o = arg;
	struct ibc_link *L = o->L;

	L->x->wait = ibc_harness_wait_get(h);
	L->bytes = pt->bytes;
	if (L->bytes > L->maxb || L->bytes > L->x->caps.max_msg)
		return IBC_ERR_UNSUPPORTED;
	if (o->kind == K_PT_LAT || o->kind == K_PT_BW)
		return L->rank > 1 ? IBC_OK : pt_setup(L, o->kind == K_PT_BW, pt);
	if (L->rank > 1)
		return IBC_OK;
	for (size_t i = 0; i < L->bytes; i++)
		L->tx[i] = pattern(L->bytes, i);
	if (o->kind == K_SEND_LAT) {
		while (L->recvs_posted < NRECV) {
			int rc = recv_post_one(L);
			if (rc != IBC_OK)
				return rc;
			L->recvs_posted++;
		}
	}
	if (o->kind == K_WRITE_BW) {
		if (L->window > (long)L->x->caps.max_send_wr) {
			ibc_error("link: --window %ld exceeds the send queue (%u)", L->window,
				  L->x->caps.max_send_wr);
			return IBC_ERR_INVAL;
		}
		L->bw_n = 0;
		L->bw_skip = pt->warmup;
		if (L->bw_cap < pt->iters + pt->warmup + 1) {
			free(L->bw_us);
			L->bw_cap = pt->iters + pt->warmup + 1;
			L->bw_us = calloc((size_t)L->bw_cap, sizeof(*L->bw_us));
			if (L->bw_us == NULL)
				return IBC_ERR_NOMEM;
		}
	}
	return IBC_OK;
}

/* payload then flag (= seq), as one post list; the flag write is signaled */
static int write_pair(struct ibc_link *L)
{
	struct ibc_xport_sge ps = { (uint64_t)(uintptr_t)L->tx, (uint32_t)L->bytes, L->mr->lkey };
	struct ibc_xport_sge fs = { (uint64_t)(uintptr_t)L->flag_src, 8, L->mr->lkey };
	const struct ibc_xport_rdesc *rd = &L->rd[L->peer];
	struct ibc_xport_wr wr[2];
	int posted;

	memset(wr, 0, sizeof(wr));
	*L->flag_src = L->seq;
	wr[0].opcode = IBC_XPORT_OP_WRITE;
	wr[0].peer = L->peer;
	wr[0].num_sge = 1;
	wr[0].sge = &ps;
	wr[0].remote_addr = rd->addr;
	wr[0].rkey = rd->rkey;
	wr[1] = wr[0];
	wr[1].sge = &fs;
	wr[1].remote_addr = rd->addr + ((uint64_t)(uintptr_t)L->flag_in - (uint64_t)(uintptr_t)L->rx);
	wr[1].flags = IBC_XPORT_WR_SIGNALED |
		      (L->x->caps.max_inline >= 8 ? IBC_XPORT_WR_INLINE : 0);
	wr[1].wr_id = L->seq;
	return ibc_xport_post(L->x, wr, 2, &posted);
}

static int run_write_lat(struct ibc_link *L)
{
	int rc;

	L->seq++;
	if (L->rank == 0) {
		rc = write_pair(L);
		if (rc == IBC_OK)
			rc = ibc_xport_wait_u64(L->x, L->flag_in, L->seq, TMO_NS, NULL);
	} else {
		rc = ibc_xport_wait_u64(L->x, L->flag_in, L->seq, TMO_NS, NULL);
		if (rc == IBC_OK)
			rc = write_pair(L);
	}
	if (rc == IBC_ERR_TIMEOUT)
		ibc_error("link: write-lat: the peer's flag did not arrive");
	if (rc == IBC_OK)
		rc = wc_wait(L, IBC_XPORT_CQ_SEND, "write-lat");
	return rc;
}

static int run_read_lat(struct ibc_link *L)
{
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)L->tx, (uint32_t)L->bytes, L->mr->lkey };
	int rc;

	if (L->rank != 0)
		return IBC_OK;
	rc = ibc_xport_read(L->x, L->peer, &s, 1, L->rd[L->peer].addr, L->rd[L->peer].rkey,
			    IBC_XPORT_WR_SIGNALED, 2);
	if (rc == IBC_OK)
		rc = wc_wait(L, IBC_XPORT_CQ_SEND, "read-lat");
	return rc;
}

static int send_one(struct ibc_link *L)
{
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)L->tx, (uint32_t)L->bytes, L->mr->lkey };
	unsigned flags = IBC_XPORT_WR_SIGNALED |
			 (L->bytes <= L->x->caps.max_inline ? IBC_XPORT_WR_INLINE : 0);

	return ibc_xport_send(L->x, L->peer, &s, 1, flags, 3);
}

static int recv_one(struct ibc_link *L)
{
	int rc = wc_wait(L, IBC_XPORT_CQ_RECV, "send-lat receive");

	if (rc == IBC_OK)
		rc = recv_post_one(L);
	return rc;
}

static int run_send_lat(struct ibc_link *L)
{
	int rc;

	if (L->rank == 0) {
		rc = send_one(L);
		if (rc == IBC_OK)
			rc = recv_one(L);
	} else {
		rc = recv_one(L);
		if (rc == IBC_OK)
			rc = send_one(L);
	}
	if (rc == IBC_OK)
		rc = wc_wait(L, IBC_XPORT_CQ_SEND, "send-lat send");
	return rc;
}

static int run_write_bw(struct ibc_link *L)
{
	struct ibc_xport_wr wr[IBC_LINK_MAX_WINDOW];
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)L->tx, (uint32_t)L->bytes, L->mr->lkey };
	double t0;
	int rc, posted;

	if (L->rank != 0)
		return IBC_OK;
	t0 = ibc_timer_now_us();
	for (long i = 0; i < L->window; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = (uint64_t)i;
		wr[i].opcode = IBC_XPORT_OP_WRITE;
		wr[i].flags = i == L->window - 1 ? IBC_XPORT_WR_SIGNALED : 0;
		wr[i].peer = L->peer;
		wr[i].num_sge = 1;
		wr[i].sge = &s;
		wr[i].remote_addr = L->rd[L->peer].addr;
		wr[i].rkey = L->rd[L->peer].rkey;
	}
	rc = ibc_xport_post(L->x, wr, (int)L->window, &posted);
	if (rc == IBC_OK)
		rc = wc_wait(L, IBC_XPORT_CQ_SEND, "write-bw");
	if (rc == IBC_OK && L->bw_n < L->bw_cap)
		L->bw_us[L->bw_n++] = ibc_timer_now_us() - t0;
	return rc;
}

static int op_run(struct ibc_harness *h, void *arg)
{
	struct link_op *o = arg;
	struct ibc_link *L = o->L;

	if (L->rank > 1)
		return IBC_OK;
	switch (o->kind) {
	case K_WRITE_LAT:
		return run_write_lat(L);
	case K_READ_LAT:
		return run_read_lat(L);
	case K_SEND_LAT:
		return run_send_lat(L);
	case K_WRITE_BW:
		return run_write_bw(L);
	case K_PT_LAT:
	case K_PT_BW:
		return pt_replay(h, L, o->kind == K_PT_BW);
	}
	return IBC_ERR_INVAL;
}

/* the payload that arrived last is the peer's pattern for this size */
static int op_validate(struct ibc_harness *h, void *arg)
{
	struct link_op *o = arg;
	struct ibc_link *L = o->L;
	const unsigned char *got = o->kind == K_READ_LAT ? L->tx : L->rx;

	(void)h;
	if (L->rank > 1 || (L->rank == 1 && (o->kind == K_READ_LAT || o->kind == K_WRITE_BW)))
		return IBC_OK;
	if (L->rank == 0 && o->kind == K_WRITE_BW)
		return IBC_OK; /* the target checks nothing either: write-bw overwrites */
	if (o->kind == K_PT_LAT || o->kind == K_PT_BW)
		return IBC_OK; /* perftest's own data */
	for (size_t i = 0; i < L->bytes; i++)
		if (got[i] != pattern(L->bytes, i)) {
			ibc_error("link: validation: byte %zu of %zu is wrong", i, L->bytes);
			return IBC_ERR_VALIDATE;
		}
	return IBC_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int op_extra(struct ibc_harness *h, void *arg, char *buf, size_t cap)
{
	struct link_op *o = arg;
	struct ibc_link *L = o->L;

	(void)h;
	if (o->kind == K_WRITE_BW) {
		double med = 0;
		/* the warm-up windows come first: use the timed ones */
		long skip = L->bw_skip < L->bw_n ? L->bw_skip : 0, m = L->bw_n - skip;
		if (m > 0) {
			qsort(L->bw_us + skip, (size_t)m, sizeof(double), cmp_double);
			med = L->bw_us[skip + m / 2];
		}
		snprintf(buf, cap, "window=%ld;MBps=%.1f", L->window,
			 med > 0 ? (double)L->window * (double)L->bytes / med : 0.0);
	} else if (o->kind == K_WRITE_LAT) {
		snprintf(buf, cap, "flag=separate-write;inline_flag=%d", L->x->caps.max_inline >= 8);
	} else if (o->kind == K_PT_LAT) {
		snprintf(buf, cap, "tool=ib_write_lat;samples=%ld", L->pt[0].n);
	} else if (o->kind == K_PT_BW) {
		snprintf(buf, cap, "tool=ib_write_bw;window=%ld;MBps=%.1f", L->window, L->pt[1].mbps);
	} else if (o->kind == K_SEND_LAT) {
		snprintf(buf, cap, "inline=%d", L->bytes <= L->x->caps.max_inline);
	} else {
		buf[0] = '\0';
	}
	return IBC_OK;
}

static int probe_verbs(struct ibc_harness *h, void *arg, double *us)
{
	struct ibc_link *L = arg;

	(void)h;
	return ibc_xport_pingpong(L->x, 0, 1, 1000, us);
}

/* ---------------------------------------------------------------- API ---- */

size_t ibc_link_ops_build(struct ibc_link *L, struct ibc_harness_op *ops, size_t cap)
{
	static const struct { int kind; const char *impl; double scale; } table[K_COUNT] = {
		{ K_WRITE_LAT, NULL, 0.5 },
		{ K_READ_LAT, NULL, 1.0 },
		{ K_SEND_LAT, NULL, 0.5 },
		{ K_WRITE_BW, NULL, 0.0 }, /* time per message: 1 / window */
		{ K_PT_LAT, "perftest", 1.0 },
		{ K_PT_BW, "perftest", 1.0 },
	};
	size_t n = 0;

	for (size_t i = 0; i < K_COUNT && n < cap; i++) {
		int k = table[i].kind;
		if ((k == K_PT_LAT || k == K_PT_BW) && !L->perftest)
			continue;
		L->ops[k] = (struct link_op){ L, k };
		ops[n++] = (struct ibc_harness_op){
			.variant = k == K_PT_LAT ? variants[K_WRITE_LAT]
				 : k == K_PT_BW ? variants[K_WRITE_BW] : variants[k],
			.impl = table[i].impl,
			.timing = IBC_HARNESS_TIME_ROOT,
			.scale = k == K_WRITE_BW ? 1.0 / (double)L->window : table[i].scale,
			.arg = &L->ops[k],
			.setup = op_setup,
			.run = op_run,
			.validate = op_validate,
			.extra = op_extra,
		};
	}
	return n;
}

void ibc_link_probe_set(struct ibc_link *L, struct ibc_harness_params *hp)
{
	if (strcmp(L->x->caps.backend, "verbs") == 0) {
		hp->probe = probe_verbs;
		hp->probe_arg = L;
	}
}

int ibc_link_open(struct ibc_xport *x, const struct ibc_link_params *p, struct ibc_link **out)
{
	struct ibc_boot *boot = x->boot;
	struct ibc_xport_rdesc *rd;
	struct ibc_link *L;
	int rc;

	*out = NULL;
	L = calloc(1, sizeof(*L));
	if (L == NULL)
		return IBC_ERR_NOMEM;
	L->boot = boot;
	L->x = x;
	L->rank = boot->rank;
	L->peer = boot->rank == 0 ? 1 : 0;
	L->window = p->window;
	L->perftest = p->perftest;
	L->maxb = p->max_bytes > 8 ? p->max_bytes : 8;
	L->maxb = (L->maxb + 63) / 64 * 64;
	L->pt_port = 20000 + (int)(getpid() % 1000) * 32; /* rank 0's choice, for both */
	rc = ibc_boot_bcast(boot, &L->pt_port, sizeof(L->pt_port), 0);
	if (rc != IBC_OK)
		goto err_free;
	rc = ibc_xport_mr_alloc(x, 2 * L->maxb + 4096, IBC_XPORT_ACCESS_ALL, &L->mr);
	if (rc != IBC_OK)
		goto err_free;
	L->rx = L->mr->addr;
	L->tx = L->rx + L->maxb;
	L->flag_in = (uint64_t *)(void *)(L->rx + 2 * L->maxb);
	L->flag_src = (uint64_t *)(void *)(L->rx + 2 * L->maxb + 64);
	rd = calloc((size_t)boot->size, sizeof(*rd));
	if (rd == NULL) {
		rc = IBC_ERR_NOMEM;
		goto err_dereg;
	}
	rc = ibc_xport_rdesc_allgather(x, &L->mr->rdesc, rd);
	L->rd[0] = rd[0];
	L->rd[1] = rd[1 % boot->size];
	free(rd);
	if (rc != IBC_OK)
		goto err_dereg;
	*out = L;
	return IBC_OK;
err_dereg:
	ibc_xport_mr_dereg(x, L->mr);
err_free:
	free(L);
	return rc;
}

void ibc_link_close(struct ibc_link *L)
{
	if (L == NULL)
		return;
	ibc_xport_mr_dereg(L->x, L->mr);
	free(L->bw_us);
	ibc_link_perftest_result_free(&L->pt[0]);
	ibc_link_perftest_result_free(&L->pt[1]);
	free(L);
}
