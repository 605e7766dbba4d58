/* The link suite's kernels and table (link.h). */
#include "link/link.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/wait.h"
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
#define PT_TRIES 4            /* perftest runs per point before it is skipped */
#define STREAM_WINDOWS 16     /* write-bw-stream: windows of messages per iteration */
#define STREAM_MAX_BYTES (64L << 20)
#define STREAM_CQ_MOD 100     /* perftest's default CQ moderation ... */
#define STREAM_CQ_MOD_LIMIT 8192 /* ... and the size above which it signals every write */

enum kind {
	K_WRITE_LAT, K_WRITE_LAT_LASTBYTE, K_WRITE_LAT_IMM, K_READ_LAT, K_SEND_LAT,
	K_WRITE_BW_BURST, K_WRITE_BW_STREAM, K_PT_LAT, K_PT_BW, K_COUNT
};

static long opt_window = 64;
static int opt_perftest;

static const struct ibc_opt opts[] = {
	{ .name = "window", .type = IBC_OPT_INT, .dest = &opt_window, .metavar = "N",
	  .help = "write-bw-burst: writes per burst; write-bw-stream: writes in flight",
	  .min = 1, .max = IBC_LINK_MAX_WINDOW },
	{ .name = "perftest", .type = IBC_OPT_FLAG, .dest = &opt_perftest,
	  .help = "also run perftest's ib_write_lat / ib_write_bw (verbs; impl=perftest rows)" },
	IBC_OPT_END
};

/* One kernel's buffers: each kernel has its own, so the interleaved
 * kernels do not move each other's cache lines around (with shared buffers a
 * 4 KiB write-lat measured 7x its time alone on shm). */
struct area {
	unsigned char *rx, *tx;        /* maxb bytes each */
	uint64_t *flag_in, *flag_src;  /* one cache line each */
};
#define AREA_FLAGS 128

/* The suite's state: buffers registered once, exchanged once; the layout is
 * the same on both ranks, so a peer's address is its base + our offset. */
struct link {
	struct ibc_boot *boot;
	struct ibc_xport *x;
	struct ibc_xport_mr *mr;
	struct ibc_xport_rdesc rd[2];  /* rank 0's and rank 1's region */
	struct area a[K_PT_LAT];       /* the kernels' */
	size_t maxb;
	int rank, peer;
	int recvs_posted;
	int pt_port;                   /* next perftest TCP port, the same on both ranks */
};

/* One variant at one point. */
struct link_inst {
	struct link *L;
	struct area *a;                /* its buffers */
	size_t bytes;
	uint64_t seq;                  /* rounds of a ping-pong, the same on both ranks */
	double *t;                     /* bandwidth: this rank's iteration times */
	long nt, cap;
	long msgs;                     /* write-bw-stream: messages per iteration */
	struct ibc_xport_sge sge;      /* bandwidth: the payload, ... */
	struct ibc_xport_wr *wr;       /* ... the burst's writes (the stream's one template) */
	struct ibc_xport_sge lat_sge[2]; /* ping-pong: the payload and the flag, ... */
	struct ibc_xport_wr lat_wr[2];   /* ... their writes, built once per point */
	int lat_n;
	struct ibc_link_perftest_result pt; /* perftest's numbers (rank 0) */
	long pt_next;
	/* --validate: each message of a burst or stream its own slot of vmr
	 * (the sources on rank 0, the targets on rank 1; nmsg of them, else
	 * nmsg = 1 and the kernel's area), filled before the iteration and
	 * checked after it (prepare, validate: untimed) */
	struct ibc_xport_mr *vmr;
	struct ibc_xport_rdesc vpeer;  /* the peer's vmr */
	struct ibc_xport_sge *sges;    /* the burst's, one per write */
	long nmsg;
	long done_iter;                /* the iteration whose arrivals are unchecked, or 0 */
	uint64_t bad;                  /* wrong bytes received */
	long bad_iter, bad_msg;        /* the first */
	size_t bad_off;
};

static enum kind kind_of(const struct ibc_suite_op *o)
{
	return (enum kind)(intptr_t)o->v->arg;
}

static int wc_wait(struct link *L, int cq, const char *what)
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

static int recv_post_one(struct link *L)
{
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)L->a[K_SEND_LAT].rx, (uint32_t)L->maxb,
				   L->mr->lkey };

	return ibc_xport_recv(L->x, L->peer, NULL, &s, 1, 1);
}

/* the peer's address of a local buffer (the layouts are the same) */
static uint64_t remote(const struct link *L, const void *local)
{
	return L->rd[L->peer].addr +
	       (uint64_t)((const unsigned char *)local - (const unsigned char *)L->mr->addr);
}

/* ------------------------------------------------------------ perftest ---- */

static int pt_setup(struct link_inst *in, int bw, const struct ibc_harness_point *pt)
{
	struct link *L = in->L;
	struct ibc_link_perftest_result *res = &in->pt;
	struct ibc_link_perftest_args a = {
		.tool = bw ? IBC_LINK_PERFTEST_WRITE_BW : IBC_LINK_PERFTEST_WRITE_LAT,
		.device = L->x->caps.device,
		.gid_index = L->x->params.gid_index,
		.bytes = in->bytes,
		.iters = bw ? (in->bytes >= 1024 * 1024 ? 20 : 200) : pt->iters + pt->warmup,
		.window = opt_window,
	};
	int rc;

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
				 "(last line: '%s')", tool, in->bytes, t, why ? why : "a rank failed",
				 res->last_line);
		else if (L->rank == 0)
			ibc_info("link: perftest %s at %zu bytes, try %d of %d: %s", tool,
				 in->bytes, t, PT_TRIES, why ? why : "a rank failed");
		if (t == PT_TRIES)
			return agreed;
		nanosleep(&(struct timespec){ 0, 300 * 1000 * 1000 }, NULL);
	}
}

/* replay perftest's numbers: one sample per iteration (rank 0 counts) */
static int pt_replay(struct ibc_suite_op *o, struct link_inst *in, int bw)
{
	if (in->L->rank != 0) {
		ibc_harness_sample_set(o->h, 0);
	} else if (!bw) {
		if (in->pt.n == 0)
			return IBC_ERR_INVAL;
		ibc_harness_sample_set(o->h, in->pt.us[in->pt_next++ % in->pt.n]);
	} else {
		if (in->pt.mbps <= 0)
			return IBC_ERR_INVAL;
		ibc_harness_sample_set(o->h, (double)in->bytes / in->pt.mbps);
	}
	return IBC_OK;
}

/* ------------------------------------------------------------- kernels ---- */

/* The payload (the kernel's tx, the point's size) as a scatter entry, and
 * the inline flag when it fits. */
static struct ibc_xport_sge tx_sge(const struct link_inst *in)
{
	return (struct ibc_xport_sge){ (uint64_t)(uintptr_t)in->a->tx, (uint32_t)in->bytes,
				       in->L->mr->lkey };
}

static unsigned tx_inline(const struct link_inst *in)
{
	return in->bytes <= in->L->x->caps.max_inline ? IBC_XPORT_WR_INLINE : 0;
}

/* One round of a ping-pong: rank 0 posts and waits for the answer, rank 1
 * waits and answers (in->seq is the round, the same on both).  The post's own
 * send completion, when reap is set, is reaped right after the post, as
 * perftest does: while the message flies, not between the answer and the
 * next round. */
static int pingpong(struct link_inst *in, int (*post)(struct link_inst *),
		    int (*wait)(struct link_inst *), const char *reap)
{
	struct link *L = in->L;
	int rc = IBC_OK;

	in->seq++;
	if (L->rank == 1)
		rc = wait(in);
	if (rc == IBC_OK)
		rc = post(in);
	if (rc == IBC_OK && reap != NULL)
		rc = wc_wait(L, IBC_XPORT_CQ_SEND, reap);
	if (rc == IBC_OK && L->rank == 0)
		rc = wait(in);
	return rc;
}

/* The ping-pong writes of a point, built once (as perftest builds its work
 * request once): write-lat's payload then flag (= the round) as one post
 * list, the flag signaled; write-lat-lastbyte's one signaled payload write;
 * write-lat-imm's one signaled write with immediate.  A round only sets the
 * round's number. */
static void lat_wrs_build(struct link_inst *in, enum kind k)
{
	struct link *L = in->L;
	struct area *a = in->a;
	struct ibc_xport_wr *w = in->lat_wr;
	unsigned inl = tx_inline(in);

	memset(in->lat_wr, 0, sizeof(in->lat_wr));
	in->lat_sge[0] = tx_sge(in);
	in->lat_sge[1] = (struct ibc_xport_sge){ (uint64_t)(uintptr_t)a->flag_src, 8, L->mr->lkey };
	w[0].opcode = k == K_WRITE_LAT_IMM ? IBC_XPORT_OP_WRITE_IMM : IBC_XPORT_OP_WRITE;
	w[0].peer = L->peer;
	w[0].num_sge = 1;
	w[0].sge = &in->lat_sge[0];
	w[0].remote_addr = remote(L, a->rx);
	w[0].rkey = L->rd[L->peer].rkey;
	w[0].flags = inl | (k == K_WRITE_LAT ? 0 : IBC_XPORT_WR_SIGNALED);
	in->lat_n = 1;
	if (k == K_WRITE_LAT) {
		w[1] = w[0];
		w[1].sge = &in->lat_sge[1];
		w[1].remote_addr = remote(L, a->flag_in);
		w[1].flags = IBC_XPORT_WR_SIGNALED |
			     (L->x->caps.max_inline >= 8 ? IBC_XPORT_WR_INLINE : 0);
		in->lat_n = 2;
	}
}

static int lat_post(struct link_inst *in)
{
	int posted;

	in->lat_wr[in->lat_n - 1].wr_id = in->seq;
	return ibc_xport_post(in->L->x, in->lat_wr, in->lat_n, &posted);
}

/* write-lat: the flag (= the round) after the payload */
static int flag_post(struct link_inst *in)
{
	*in->a->flag_src = in->seq;
	return lat_post(in);
}

static int flag_wait(struct link_inst *in)
{
	int rc = ibc_xport_wait_u64(in->L->x, in->a->flag_in, in->seq, TMO_NS, NULL);

	if (rc == IBC_ERR_TIMEOUT)
		ibc_error("link: write-lat: the peer's flag did not arrive");
	return rc;
}

/* write-lat-lastbyte, perftest's way: the round's counter (1..255, never the
 * 0 that setup left) in the payload's last byte, one signaled write, its
 * completion reaped right after the post */
static unsigned char lastbyte_of(const struct link_inst *in)
{
	return (unsigned char)(in->seq % 255 + 1);
}

static int lastbyte_post(struct link_inst *in)
{
	in->a->tx[in->bytes - 1] = lastbyte_of(in);
	return lat_post(in);
}

static int lastbyte_wait(struct link_inst *in)
{
	int rc = ibc_wait_u8_eq(in->a->rx + in->bytes - 1, lastbyte_of(in), in->L->x->wait, TMO_NS);

	if (rc == IBC_ERR_TIMEOUT)
		ibc_error("link: write-lat-lastbyte: the peer's last byte did not arrive");
	return rc;
}

/* write-lat-imm: the payload as one RDMA write with immediate (= the round);
 * its receive completion at the peer says the data has landed (ordered by
 * the transport), one packet */
static int imm_post(struct link_inst *in)
{
	in->lat_wr[0].imm = (uint32_t)in->seq;
	return lat_post(in);
}

/* send-lat */
static int send_post(struct link_inst *in)
{
	struct ibc_xport_sge s = tx_sge(in);

	return ibc_xport_send(in->L->x, in->L->peer, &s, 1, IBC_XPORT_WR_SIGNALED | tx_inline(in), 3);
}

/* a message (send or write with immediate) arrived: its receive goes back */
static int recv_wait(struct link_inst *in)
{
	int rc = wc_wait(in->L, IBC_XPORT_CQ_RECV, "receive");

	return rc == IBC_OK ? recv_post_one(in->L) : rc;
}

static int run_read_lat(struct link_inst *in)
{
	struct link *L = in->L;
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)in->a->rx, (uint32_t)in->bytes, L->mr->lkey };
	int rc;

	if (L->rank != 0)
		return IBC_OK;
	/* the peer's tx into our rx */
	rc = ibc_xport_read(L->x, L->peer, &s, 1, remote(L, in->a->tx), L->rd[L->peer].rkey,
			    IBC_XPORT_WR_SIGNALED, 2);
	if (rc == IBC_OK)
		rc = wc_wait(L, IBC_XPORT_CQ_SEND, "read-lat");
	return rc;
}

/* a validated burst's or stream's write k: from rank 0's slot k into rank
 * 1's slot k */
static void msg_wr_slot(const struct link_inst *in, struct ibc_xport_wr *wr,
			struct ibc_xport_sge *sge, long k)
{
	sge->addr = (uint64_t)(uintptr_t)in->vmr->addr + (uint64_t)k * in->bytes;
	sge->lkey = in->vmr->lkey;
	wr->remote_addr = in->vpeer.addr + (uint64_t)k * in->bytes;
	wr->rkey = in->vpeer.rkey;
}

/* The bandwidth kernels' writes, built once per point (setup): the burst's
 * --window writes, the last signaled; the stream's template. */
static int bw_wrs_build(struct link_inst *in, long n)
{
	struct link *L = in->L;

	in->sge = tx_sge(in);
	in->wr = calloc((size_t)n, sizeof(*in->wr));
	in->sges = calloc((size_t)n, sizeof(*in->sges));
	if (in->wr == NULL || in->sges == NULL)
		return IBC_ERR_NOMEM;
	for (long i = 0; i < n; i++) {
		struct ibc_xport_wr *wr = &in->wr[i];

		wr->wr_id = (uint64_t)i;
		wr->opcode = IBC_XPORT_OP_WRITE;
		wr->flags = i == n - 1 ? IBC_XPORT_WR_SIGNALED : 0;
		wr->peer = L->peer;
		wr->num_sge = 1;
		in->sges[i] = in->sge;
		wr->sge = &in->sges[i];
		wr->remote_addr = remote(L, in->a->rx);
		wr->rkey = L->rd[L->peer].rkey;
		if (in->nmsg > 1) /* validated: write i from and into slot i */
			msg_wr_slot(in, wr, &in->sges[i], i);
	}
	return IBC_OK;
}

static int run_write_bw_burst(struct link_inst *in)
{
	struct link *L = in->L;
	int posted, rc;

	if (L->rank != 0)
		return IBC_OK;
	rc = ibc_xport_post(L->x, in->wr, (int)opt_window, &posted);
	return rc == IBC_OK ? wc_wait(L, IBC_XPORT_CQ_SEND, "write-bw-burst") : rc;
}

/* perftest's run_iter_bw: keep the window full, every cq_mod-th write (and
 * the last) signaled, each completion freeing cq_mod slots, reaped as they
 * come */
static int run_write_bw_stream(struct link_inst *in)
{
	struct link *L = in->L;
	struct ibc_xport_wr *wr = in->wr;
	long cq_mod = in->bytes > STREAM_CQ_MOD_LIMIT ? 1 : STREAM_CQ_MOD, posted = 0, done = 0;
	unsigned long polls = 0;

	if (L->rank != 0)
		return IBC_OK;
	if (cq_mod > opt_window)
		cq_mod = opt_window;
	while (done < in->msgs) {
		struct ibc_xport_wc wc[16];
		int n = 0, rc;

		while (posted < in->msgs && posted - done < opt_window) {
			int one;

			wr->wr_id = (uint64_t)posted;
			wr->flags = posted % cq_mod == cq_mod - 1 || posted == in->msgs - 1 ?
					    IBC_XPORT_WR_SIGNALED : 0;
			if (in->nmsg > 1)
				msg_wr_slot(in, wr, &in->sges[0], posted);
			rc = ibc_xport_post(L->x, wr, 1, &one);
			if (rc != IBC_OK)
				return rc;
			posted++;
		}
		rc = ibc_xport_cq_poll(L->x, IBC_XPORT_CQ_SEND, 16, wc, &n);
		if (rc != IBC_OK)
			return rc;
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBC_OK) {
				ibc_error("link: write-bw-stream: write failed: %s", wc[i].reason);
				return IBC_ERR_REMOTE;
			}
			/* a completion stands for its write and the unsignaled ones before it */
			done = (long)wc[i].wr_id + 1;
		}
		if (n == 0) {
			ibc_wait_relax(L->x->wait, &polls);
			if (polls % 4096 == 0 && ibc_wait_aborted())
				return IBC_ERR_INTERRUPTED;
		}
	}
	return IBC_OK;
}

/* ------------------------------------------------------------- variants ---- */

static int v_usable(const struct ibc_suite_ctx *c, const struct ibc_suite_variant *v, long fanin,
		    char *why, size_t cap)
{
	enum kind k = (enum kind)(intptr_t)v->arg;

	(void)fanin;
	if ((k == K_PT_LAT || k == K_PT_BW) && !opt_perftest) {
		snprintf(why, cap, "--perftest not given");
		return IBC_ERR_UNSUPPORTED;
	}
	if ((k == K_PT_LAT || k == K_PT_BW) &&
	    (strcmp(c->x->caps.backend, "verbs") != 0 || c->boot->num_nodes != 1)) {
		snprintf(why, cap, "perftest runs on verbs between two ranks of one node");
		return IBC_ERR_UNSUPPORTED;
	}
	if ((k == K_WRITE_BW_BURST || k == K_WRITE_BW_STREAM) &&
	    opt_window > (long)c->x->caps.max_send_wr) {
		if (c->boot->rank == 0)
			ibc_error("link: --window %ld exceeds the send queue (%u)", opt_window,
				  c->x->caps.max_send_wr);
		return IBC_ERR_INVAL;
	}
	return IBC_OK;
}

static int v_teardown(struct ibc_suite_op *o);
static int v_setup_kernel(struct ibc_suite_op *o, struct link_inst *in);
static int slots_setup(struct link_inst *in, long n);

static int v_setup(struct ibc_suite_op *o)
{
	struct link *L = o->ctx->state;
	enum kind k = kind_of(o);
	struct link_inst *in;
	size_t bytes = o->pt->bytes;
	int rc;

	if (bytes > L->maxb || bytes > L->x->caps.max_msg ||
	    ((k == K_WRITE_LAT_LASTBYTE || k == K_PT_LAT || k == K_PT_BW) && bytes == 0))
		return IBC_ERR_UNSUPPORTED;
	in = calloc(1, sizeof(*in));
	if (in == NULL)
		return IBC_ERR_NOMEM;
	o->inst = in;
	in->L = L;
	in->a = k < K_PT_LAT ? &L->a[k] : NULL;
	in->bytes = bytes;
	if (L->rank > 1)
		return IBC_OK;
	rc = k == K_PT_LAT || k == K_PT_BW ? pt_setup(in, k == K_PT_BW, o->pt) : v_setup_kernel(o, in);
	if (rc != IBC_OK)
		v_teardown(o); /* this rank's own: the harness tears down only what was set up */
	return rc;
}

/* buffers, receives and write lists of a kernel (ranks 0 and 1); the
 * harness's agreement after setup puts the ranks in lock-step */
static int v_setup_kernel(struct ibc_suite_op *o, struct link_inst *in)
{
	struct link *L = in->L;
	enum kind k = kind_of(o);
	size_t bytes = in->bytes;
	int rc = IBC_OK;

	in->nmsg = 1;
	if (k == K_WRITE_LAT_LASTBYTE)
		in->a->rx[bytes - 1] = 0; /* the peer's first round writes 1 there */
	if (k == K_WRITE_LAT || k == K_WRITE_LAT_LASTBYTE || k == K_WRITE_LAT_IMM)
		lat_wrs_build(in, k);
	if (k == K_SEND_LAT || k == K_WRITE_LAT_IMM) {
		/* one pool of receives for both: each consumes one and posts
		 * one back per message, so they may share the queue */
		while (L->recvs_posted < NRECV) {
			rc = recv_post_one(L);
			if (rc != IBC_OK)
				return rc;
			L->recvs_posted++;
		}
	}
	if (k == K_WRITE_BW_STREAM) {
		/* 16 windows: the ramp of the first is a few percent; the
		 * iterations stay short enough to sample (perftest runs 5000) */
		in->msgs = STREAM_WINDOWS * opt_window;
		if (bytes > 0 && in->msgs > STREAM_MAX_BYTES / (long)bytes)
			in->msgs = STREAM_MAX_BYTES / (long)bytes;
		if (in->msgs < 16)
			in->msgs = 16;
	}
	if (k == K_WRITE_BW_BURST || k == K_WRITE_BW_STREAM) {
		in->cap = o->pt->iters + 1;
		in->t = calloc((size_t)in->cap, sizeof(double));
		if (in->t == NULL)
			return IBC_ERR_NOMEM;
		if (o->ctx->cli->validate && bytes > 0)
			rc = slots_setup(in, k == K_WRITE_BW_BURST ? opt_window : in->msgs);
		if (rc == IBC_OK)
			rc = bw_wrs_build(in, k == K_WRITE_BW_BURST ? opt_window : 1);
	}
	return rc;
}

/* a validated burst or stream: n slots of the size, rank 0's the sources,
 * rank 1's the targets (collective: both ranks) */
static int slots_setup(struct link_inst *in, long n)
{
	struct link *L = in->L;
	struct ibc_xport_rdesc all[2];
	size_t len = (size_t)n * in->bytes;
	int rc;

	rc = ibc_xport_mr_alloc(L->x, len, IBC_XPORT_ACCESS_ALL, &in->vmr);
	if (rc != IBC_OK) {
		ibc_error("link: --validate: %ld messages of %zu bytes, each in its own slot (%zu "
			  "MiB): %s", n, in->bytes, len >> 20, ibc_status_str(rc));
		return rc;
	}
	rc = ibc_xport_rdesc_allgather(L->x, &in->vmr->rdesc, all);
	if (rc == IBC_OK) {
		in->vpeer = all[L->peer];
		in->nmsg = n;
	}
	return rc;
}

static int v_run(struct ibc_suite_op *o)
{
	struct link_inst *in = o->inst;
	enum kind k = kind_of(o);
	double t0;
	int rc;

	if (in->L->rank > 1)
		return IBC_OK;
	switch (k) {
	case K_WRITE_LAT:
		return pingpong(in, flag_post, flag_wait, "write-lat");
	case K_WRITE_LAT_LASTBYTE:
		return pingpong(in, lastbyte_post, lastbyte_wait, "write-lat-lastbyte");
	case K_WRITE_LAT_IMM:
		return pingpong(in, imm_post, recv_wait, "write-lat-imm");
	case K_READ_LAT:
		return run_read_lat(in);
	case K_SEND_LAT:
		return pingpong(in, send_post, recv_wait, "send-lat send");
	case K_WRITE_BW_BURST:
	case K_WRITE_BW_STREAM:
		t0 = ibc_timer_now_us();
		rc = k == K_WRITE_BW_BURST ? run_write_bw_burst(in) : run_write_bw_stream(in);
		if (rc == IBC_OK && in->L->rank == 0) {
			double us = ibc_timer_now_us() - t0;
			long per = k == K_WRITE_BW_BURST ? opt_window : in->msgs;

			if (in->nt < in->cap && ibc_harness_call(o->h) == IBC_HARNESS_CALL_TIMED)
				in->t[in->nt++] = us;
			/* the row's time is per message */
			ibc_harness_sample_set(o->h, us / (double)per);
		}
		return rc;
	case K_PT_LAT:
	case K_PT_BW:
		return pt_replay(o, in, k == K_PT_BW);
	default:
		return IBC_ERR_INVAL;
	}
}

/* ------------------------------------------------------------ validation -- */

/* The payload messages of an iteration that rank sends: a ping-pong's one
 * each way, read-lat's one from rank 1 (the data rank 0 reads), a burst's
 * or a stream's from rank 0; what the other rank receives. */
static long msgs_from(const struct link_inst *in, enum kind k, int rank)
{
	switch (k) {
	case K_READ_LAT:
		return rank == 1;
	case K_WRITE_BW_BURST:
		return rank == 0 ? opt_window : 0;
	case K_WRITE_BW_STREAM:
		return rank == 0 ? in->msgs : 0;
	default:
		return 1;
	}
}

/* payload bytes checked: write-lat-lastbyte's last byte is the round's
 * counter, which its wait compares */
static size_t msg_len(const struct link_inst *in, enum kind k)
{
	return k == K_WRITE_LAT_LASTBYTE && in->bytes > 0 ? in->bytes - 1 : in->bytes;
}

/* message m of an iteration: where it is sent from (tx) and lands (rx) */
static unsigned char *msg_at(const struct link_inst *in, long m, int tx)
{
	if (in->nmsg > 1)
		return (unsigned char *)in->vmr->addr + (size_t)m * in->bytes;
	return tx ? in->a->tx : in->a->rx;
}

static void received_check(struct ibc_suite_op *o, struct link_inst *in)
{
	struct link *L = in->L;
	enum kind k = kind_of(o);
	long m, n = msgs_from(in, k, L->peer);

	for (m = 0; m < n && in->done_iter > 0; m++) {
		size_t off = 0, bad = ibc_suite_pattern_check(
			msg_at(in, m, 0), msg_len(in, k),
			ibc_suite_pattern_seed(L->peer, L->rank, (uint64_t)in->done_iter, (uint64_t)m),
			&off);

		if (bad > 0 && in->bad == 0) {
			in->bad_iter = in->done_iter;
			in->bad_msg = m;
			in->bad_off = off;
		}
		in->bad += bad;
	}
	in->done_iter = 0;
}

/* untimed, before every iteration (the ranks lined up around it:
 * IBC_SUITE_V_ONE_SIDED): the last iteration's arrivals checked, this one's
 * messages filled */
static int v_prepare(struct ibc_suite_op *o)
{
	struct link_inst *in = o->inst;
	struct link *L = in->L;
	enum kind k = kind_of(o);
	long m, n;

	if (!o->ctx->cli->validate || L->rank > 1)
		return IBC_OK;
	received_check(o, in);
	n = msgs_from(in, k, L->rank);
	for (m = 0; m < n; m++) {
		unsigned char *b = msg_at(in, m, 1);

		ibc_suite_pattern_fill(b, msg_len(in, k),
				       ibc_suite_pattern_seed(L->rank, L->peer, (uint64_t)o->iter,
							      (uint64_t)m));
		(void)ibc_suite_corrupt(o, m, n, b, msg_len(in, k));
	}
	in->done_iter = o->iter; /* what arrives in it is checked next time */
	return IBC_OK;
}

static int v_validate(struct ibc_suite_op *o)
{
	struct link_inst *in = o->inst;

	if (in->L->rank > 1)
		return IBC_OK;
	received_check(o, in);
	if (in->bad == 0)
		return IBC_OK;
	ibc_error("link: %s rank %d: %llu wrong bytes at %zu bytes per message; the first at byte "
		  "%zu of message %ld of iteration %ld", o->v->name, in->L->rank,
		  (unsigned long long)in->bad, in->bytes, in->bad_off, in->bad_msg, in->bad_iter);
	return IBC_ERR_VALIDATE;
}

static int v_extra(struct ibc_suite_op *o, char *buf, size_t cap)
{
	struct link_inst *in = o->inst;
	struct link *L = in->L;
	enum kind k = kind_of(o);

	switch (k) {
	case K_WRITE_BW_BURST:
	case K_WRITE_BW_STREAM: {
		/* the timed iterations' (run() keeps no other) */
		long per = k == K_WRITE_BW_BURST ? opt_window : in->msgs;
		double med = 0;

		if (in->nt > 0) {
			ibc_stats_sort(in->t, (size_t)in->nt);
			med = ibc_stats_quantile_sorted(in->t, (size_t)in->nt, 0.5);
		}
		snprintf(buf, cap, "window=%ld;%s%ld;MBps=%.1f", opt_window,
			 k == K_WRITE_BW_BURST ? "burst=" : "msgs=", per,
			 med > 0 ? (double)per * (double)in->bytes / med : 0.0);
		break;
	}
	case K_WRITE_LAT:
		snprintf(buf, cap, "flag=separate-write;inline_flag=%d", L->x->caps.max_inline >= 8);
		break;
	case K_WRITE_LAT_LASTBYTE:
		snprintf(buf, cap, "poll=last-byte;inline=%d", in->bytes <= L->x->caps.max_inline);
		break;
	case K_WRITE_LAT_IMM:
		snprintf(buf, cap, "notify=receive-completion;inline=%d",
			 in->bytes <= L->x->caps.max_inline);
		break;
	case K_PT_LAT:
		snprintf(buf, cap, "tool=ib_write_lat;samples=%ld", in->pt.n);
		break;
	case K_PT_BW:
		snprintf(buf, cap, "tool=ib_write_bw;window=%ld;MBps=%.1f", opt_window, in->pt.mbps);
		break;
	case K_SEND_LAT:
		snprintf(buf, cap, "inline=%d", in->bytes <= L->x->caps.max_inline);
		break;
	default:
		break;
	}
	return IBC_OK;
}

static int v_teardown(struct ibc_suite_op *o)
{
	struct link_inst *in = o->inst;

	if (in != NULL) {
		if (in->vmr != NULL)
			(void)ibc_xport_mr_dereg(in->L->x, in->vmr);
		free(in->t);
		free(in->wr);
		free(in->sges);
		ibc_link_perftest_result_free(&in->pt);
		free(in);
	}
	o->inst = NULL;
	return IBC_OK;
}

/* ibchar's kernels: validated (peers write into each other's buffers) */
#define LINK_VARIANT(nm, k, impl_, flags_, scale_, desc_) \
	{ .name = nm, .impl = impl_, .desc = desc_, .flags = (flags_) | IBC_SUITE_V_ONE_SIDED, \
	  .timing = IBC_HARNESS_TIME_ROOT, .scale = scale_, .arg = (const void *)(intptr_t)(k), \
	  .usable = v_usable, .setup = v_setup, .prepare = v_prepare, .run = v_run, \
	  .validate = v_validate, .checked = "bytes", .extra = v_extra, .teardown = v_teardown }
/* perftest's: its own data, not checked here (no valid key) */
#define PT_VARIANT(nm, k, flags_, desc_) \
	{ .name = nm, .impl = "perftest", .desc = desc_, .flags = flags_, \
	  .timing = IBC_HARNESS_TIME_ROOT, .scale = 1.0, .arg = (const void *)(intptr_t)(k), \
	  .usable = v_usable, .setup = v_setup, .run = v_run, .extra = v_extra, \
	  .teardown = v_teardown }

static const struct ibc_suite_variant variants[] = {
	LINK_VARIANT("write-lat", K_WRITE_LAT, NULL, 0, 0.5,
		     "RDMA-write ping-pong, payload then an ordered 8-byte flag; one-way = RTT/2"),
	LINK_VARIANT("write-lat-lastbyte", K_WRITE_LAT_LASTBYTE, NULL, 0, 0.5,
		     "as ib_write_lat: one signaled write, the receiver polls its last byte"),
	LINK_VARIANT("write-lat-imm", K_WRITE_LAT_IMM, NULL, 0, 0.5,
		     "RDMA write with immediate, the receiver waits for its receive completion"),
	LINK_VARIANT("read-lat", K_READ_LAT, NULL, 0, 1.0, "RDMA read of the size, until its completion"),
	LINK_VARIANT("send-lat", K_SEND_LAT, NULL, 0, 0.5, "send/receive ping-pong; one-way = RTT/2"),
	LINK_VARIANT("write-bw-burst", K_WRITE_BW_BURST, NULL, IBC_SUITE_V_NO_B2B, 1.0,
		     "a burst of --window writes per iteration; time per message"),
	LINK_VARIANT("write-bw-stream", K_WRITE_BW_STREAM, NULL, IBC_SUITE_V_NO_B2B, 1.0,
		     "as ib_write_bw: a stream with --window writes in flight; time per message"),
	PT_VARIANT("write-lat-lastbyte", K_PT_LAT, IBC_SUITE_V_NO_B2B,
		   "perftest's ib_write_lat -U samples (with --perftest, verbs)"),
	PT_VARIANT("write-bw-stream", K_PT_BW, IBC_SUITE_V_NO_B2B | IBC_SUITE_V_ONE_FIGURE,
		   "perftest's ib_write_bw average as time per message (with --perftest, verbs)"),
};

/* ---------------------------------------------------------------- suite ---- */

static int probe_verbs(struct ibc_harness *h, void *arg, double *us)
{
	struct link *L = arg;

	(void)h;
	return ibc_xport_pingpong(L->x, 0, 1, 1000, us);
}

static int link_open(struct ibc_suite_ctx *c, void **state)
{
	struct ibc_boot *boot = c->boot;
	struct ibc_xport_rdesc *rd;
	struct link *L;
	size_t maxb = c->max_bytes > 8 ? c->max_bytes : 8, i;
	int rc;

	L = calloc(1, sizeof(*L));
	if (L == NULL)
		return IBC_ERR_NOMEM;
	L->boot = boot;
	L->x = c->x;
	L->rank = boot->rank;
	L->peer = boot->rank == 0 ? 1 : 0;
	L->maxb = (maxb + 63) / 64 * 64;
	L->pt_port = 20000 + (int)(getpid() % 1000) * 32; /* rank 0's choice, for both */
	rc = ibc_boot_bcast(boot, &L->pt_port, sizeof(L->pt_port), 0);
	if (rc != IBC_OK)
		goto err_free;
	rc = ibc_xport_mr_alloc(c->x, K_PT_LAT * (2 * L->maxb + AREA_FLAGS), IBC_XPORT_ACCESS_ALL,
				&L->mr);
	if (rc != IBC_OK)
		goto err_free;
	for (i = 0; i < K_PT_LAT; i++) {
		unsigned char *base = (unsigned char *)L->mr->addr + i * (2 * L->maxb + AREA_FLAGS);

		L->a[i].rx = base;
		L->a[i].tx = base + L->maxb;
		L->a[i].flag_in = (uint64_t *)(void *)(base + 2 * L->maxb);
		L->a[i].flag_src = (uint64_t *)(void *)(base + 2 * L->maxb + 64);
	}
	rd = calloc((size_t)boot->size, sizeof(*rd));
	if (rd == NULL) {
		rc = IBC_ERR_NOMEM;
		goto err_dereg;
	}
	rc = ibc_xport_rdesc_allgather(c->x, &L->mr->rdesc, rd);
	L->rd[0] = rd[0];
	L->rd[1] = rd[1 % boot->size];
	free(rd);
	if (rc != IBC_OK)
		goto err_dereg;
	*state = L;
	return IBC_OK;
err_dereg:
	ibc_xport_mr_dereg(c->x, L->mr);
err_free:
	free(L);
	return rc;
}

static void link_close(struct ibc_suite_ctx *c)
{
	struct link *L = c->state;

	if (L == NULL)
		return;
	ibc_xport_mr_dereg(L->x, L->mr);
	free(L);
	c->state = NULL;
}

/* on verbs the placement probe is the transport's own write ping-pong */
static void link_params(struct ibc_suite_ctx *c, struct ibc_harness_params *p)
{
	if (strcmp(c->x->caps.backend, "verbs") == 0) {
		p->probe = probe_verbs;
		p->probe_arg = c->state;
	}
}

static const size_t dflt_sizes[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096,
				     8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576,
				     2097152, 4194304 };
static const char *const factor_refs[] = { "write-lat-lastbyte/perftest", "write-bw-stream/perftest",
					   NULL };

const struct ibc_suite_def ibc_link_suite = {
	.name = "link",
	.prog = "ibchar-link",
	.summary = "Link-level benchmarks between two ranks over a transport (--xport shm, verbs "
		   "or auto): write-lat (ordered flag), write-lat-lastbyte (as ib_write_lat), "
		   "write-lat-imm (write with immediate), read-lat, send-lat (one-way latency), write-bw-burst and write-bw-stream (as "
		   "ib_write_bw; time per message, MB/s in extra), beside perftest with "
		   "--perftest.  Sizes default to 1..4M; rows go to DIR/results.csv.",
	.flags = IBC_SUITE_XPORT | IBC_SUITE_CONNECT,
	.kind = IBC_HARNESS_LATENCY,
	.min_ranks = 2,
	.max_ranks = 2,
	.default_ranks = 2,
	.sizes = dflt_sizes,
	.nsizes = sizeof(dflt_sizes) / sizeof(dflt_sizes[0]),
	.opts = opts,
	.factor_refs = factor_refs,
	.b2b_iters = 1000,
	.variants = variants,
	.nvariants = sizeof(variants) / sizeof(variants[0]),
	.open = link_open,
	.close = link_close,
	.params = link_params,
};
