/* The channel suite (Liu et al.) on the suite driver (channel_suite.h). */
#include "channel/channel_suite.h"

#include "boot/boot.h"
#include "channel/channel.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/wait.h"
#include "xport/xport.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_NS 30000000000LL

static size_t opt_ring = 256 * 1024;

static const struct ibc_opt opts[] = {
	{ .name = "ring", .type = IBC_OPT_SIZE, .dest = &opt_ring, .metavar = "BYTES",
	  .help = "the channel's ring per direction (a multiple of 64, >= 64 KiB)",
	  .min = 65536, .max = 1 << 30 },
	IBC_OPT_END
};

enum cs_kind { CS_LAT, CS_BW, CS_BIBW };

struct cs_arg {
	const char *design;       /* NULL: raw RDMA writes (rdma-write) */
	enum cs_kind kind;
	size_t chunk, lazy;       /* 0: the design's default */
};

struct cs_inst {
	struct ibc_channel *ch;
	unsigned char *sbuf, *rbuf;
	size_t m;
	long window;
	uint64_t it, bad;
	/* rdma-write */
	struct ibc_xport_mr *mr;        /* [window slots | ack word] remote writable */
	struct ibc_xport_mr *src;       /* one slot, the source */
	struct ibc_xport_rdesc peer_rd;
	size_t slot;                    /* PAD8(m) + 8 */
	uint64_t seq;
};

static const struct cs_arg *arg_of(const struct ibc_suite_op *o)
{
	return o->v->arg;
}

long ibc_channel_suite_window(size_t bytes)
{
	long w = bytes <= 131072 ? 64 : (long)((8u << 20) / bytes);

	return w < 8 ? 8 : w > 64 ? 64 : w;
}

/* the test pattern of call it from rank r */
static unsigned char pat(int r, uint64_t it, size_t i)
{
	return (unsigned char)((unsigned)r * 131u + (unsigned)it * 7u + (unsigned)i * 13u +
			       (unsigned)(i >> 8));
}

static void fill(unsigned char *b, size_t m, int r, uint64_t it)
{
	for (size_t i = 0; i < m; i++)
		b[i] = pat(r, it, i);
}

static uint64_t check(const unsigned char *b, size_t m, int r, uint64_t it)
{
	uint64_t bad = 0;

	for (size_t i = 0; i < m; i++)
		bad += b[i] != pat(r, it, i);
	return bad;
}

static int cs_usable(const struct ibc_suite_ctx *c, const struct ibc_suite_variant *v, long fanin,
		     char *why, size_t cap)
{
	const struct cs_arg *a = v->arg;

	(void)fanin;
	if (a == NULL || a->design == NULL)
		return IBC_OK;
	return ibc_channel_usable(ibc_channel_design_find(a->design), c->x, why, cap);
}

static int cs_teardown(struct ibc_suite_op *o);

#define PAD8(n) (((n) + 7) & ~(size_t)7)

static int raw_setup(struct ibc_suite_op *o, struct cs_inst *in)
{
	struct ibc_xport *x = o->ctx->x;
	struct ibc_xport_rdesc all[2];
	int rc;

	in->slot = PAD8(in->m) + 8;
	rc = ibc_xport_mr_alloc(x, in->slot * (size_t)(in->window > 0 ? in->window : 1) + 64,
				IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_WRITE, &in->mr);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(x, in->slot, IBC_XPORT_ACCESS_LOCAL_WRITE, &in->src);
	if (rc == IBC_OK)
		rc = ibc_xport_rdesc_allgather(x, &in->mr->rdesc, all);
	if (rc == IBC_OK)
		rc = ibc_xport_connect(x, NULL);
	if (rc == IBC_OK)
		in->peer_rd = all[1 - x->rank];
	return rc;
}

static int fn_run(struct ibc_suite_op *o);

static int cs_setup(struct ibc_suite_op *o)
{
	/* the host MPI's variants carry their kernel, not a cs_arg */
	const struct cs_arg *a = o->v->run == fn_run ? NULL : arg_of(o);
	struct cs_inst *in = calloc(1, sizeof(*in));
	struct ibc_xport *x = o->ctx->x;
	int rc = IBC_OK;

	if (in == NULL)
		return IBC_ERR_NOMEM;
	o->inst = in;
	in->m = o->pt->bytes > 0 ? o->pt->bytes : 1;
	in->window = a == NULL ? (o->v->flags & IBC_SUITE_V_NO_B2B ? ibc_channel_suite_window(in->m) : 0)
			       : a->kind == CS_LAT ? 0 : ibc_channel_suite_window(in->m);
	if (posix_memalign((void **)&in->sbuf, 4096, in->m) ||
	    posix_memalign((void **)&in->rbuf, 4096, in->m)) {
		(void)cs_teardown(o);
		return IBC_ERR_NOMEM;
	}
	memset(in->sbuf, 1, in->m);
	memset(in->rbuf, 0, in->m);
	if (a != NULL && a->design != NULL) {
		struct ibc_channel_params cp;

		ibc_channel_params_init(&cp);
		cp.ring_bytes = opt_ring;
		if (a->chunk)
			cp.chunk_bytes = a->chunk;
		if (a->lazy)
			cp.lazy_bytes = a->lazy;
		rc = ibc_channel_create(x, a->design, 1 - x->rank, &cp, &in->ch);
		if (rc == IBC_OK)
			rc = ibc_channel_setup(in->ch);
	} else if (a != NULL) {
		rc = raw_setup(o, in);
	}
	if (rc != IBC_OK)
		(void)cs_teardown(o);
	return rc;
}

static int cs_prepare(struct ibc_suite_op *o)
{
	struct cs_inst *in = o->inst;

	in->it++;
	if (o->ctx->cli->validate && o->ctx->x->rank == 0)
		fill(in->sbuf, in->m, 0, in->it);
	return IBC_OK;
}

/* ---------------------------------------------------- raw RDMA writes -- */

/* m bytes and the trailer (seq) as one write into slot k of the peer */
static int raw_write(struct ibc_xport *x, struct cs_inst *in, const unsigned char *data, long k,
		     int signaled)
{
	unsigned char *s = in->src->addr;
	struct ibc_xport_sge sge = { (uintptr_t)s, (uint32_t)in->slot, in->src->lkey };
	uint64_t seq = in->seq;

	if (data != NULL)
		memcpy(s, data, in->m);
	memcpy(s + in->slot - 8, &seq, 8);
	return ibc_xport_write(x, 1 - x->rank, &sge, 1, in->peer_rd.addr + (uint64_t)k * in->slot,
			       in->peer_rd.rkey,
			       (signaled ? IBC_XPORT_WR_SIGNALED : 0) |
				       (in->slot <= x->caps.max_inline ? IBC_XPORT_WR_INLINE : 0),
			       0xC5);
}

/* one completion of a raw write; a channel's goes to its channel */
static int raw_reap(struct ibc_xport *x)
{
	for (;;) {
		struct ibc_xport_wc wc;
		int rc = ibc_xport_cq_wait(x, IBC_XPORT_CQ_SEND, WAIT_NS, &wc);

		if (rc)
			return rc;
		if (!ibc_channel_completion(&wc))
			return wc.status;
	}
}

static int raw_wait(struct ibc_xport *x, struct cs_inst *in, long k)
{
	return ibc_xport_wait_u64(x, (const uint64_t *)((unsigned char *)in->mr->addr +
							(size_t)k * in->slot + in->slot - 8),
				  in->seq, WAIT_NS, NULL);
}

static int raw_lat(struct ibc_suite_op *o, struct cs_inst *in)
{
	struct ibc_xport *x = o->ctx->x;
	int rc;

	in->seq++;
	if (x->rank == 0) {
		rc = raw_write(x, in, o->ctx->cli->validate ? in->sbuf : NULL, 0, 1);
		if (rc == IBC_OK)
			rc = raw_reap(x);
		if (rc == IBC_OK)
			rc = raw_wait(x, in, 0);
		if (rc == IBC_OK && o->ctx->cli->validate && !o->in_b2b) {
			ibc_harness_sample_end(o->h);
			in->bad += check(in->mr->addr, in->m, 0, in->it);
		}
		return rc;
	}
	rc = raw_wait(x, in, 0);
	if (rc == IBC_OK) /* echo what came */
		rc = raw_write(x, in, in->mr->addr, 0, 1);
	if (rc == IBC_OK)
		rc = raw_reap(x);
	return rc;
}

static int raw_bw(struct ibc_suite_op *o, struct cs_inst *in)
{
	struct ibc_xport *x = o->ctx->x;
	double t0 = ibc_timer_now_us();
	volatile uint64_t *ack = (uint64_t *)((unsigned char *)in->mr->addr +
					      (size_t)in->window * in->slot);
	long k, sig = 0;
	int rc = IBC_OK;

	in->seq++;
	if (x->rank == 0) {
		for (k = 0; k < in->window && rc == IBC_OK; k++) {
			int s = (k % 16) == 15 || k == in->window - 1;

			rc = raw_write(x, in, k == 0 && o->ctx->cli->validate ? in->sbuf : NULL, k, s);
			sig += s;
		}
		while (rc == IBC_OK && sig-- > 0)
			rc = raw_reap(x);
		if (rc == IBC_OK)
			rc = ibc_xport_wait_u64(x, (const uint64_t *)ack, in->seq, WAIT_NS, NULL);
		ibc_harness_sample_set(o->h, (ibc_timer_now_us() - t0) / (double)in->window);
		return rc;
	}
	/* the last message's trailer: every earlier write has landed */
	rc = raw_wait(x, in, in->window - 1);
	if (rc == IBC_OK) {
		struct ibc_xport_sge sge;
		uint64_t v = in->seq;

		sge.addr = (uintptr_t)&v;
		sge.len = 8;
		sge.lkey = 0;
		rc = ibc_xport_write(x, 0, &sge, 1, in->peer_rd.addr + (uint64_t)in->window * in->slot,
				     in->peer_rd.rkey, IBC_XPORT_WR_SIGNALED | IBC_XPORT_WR_INLINE,
				     0xC5);
		if (rc == IBC_OK)
			rc = raw_reap(x);
	}
	if (rc == IBC_OK && o->ctx->cli->validate)
		in->bad += check(in->mr->addr, in->m, 0, in->it);
	return rc;
}

/* ------------------------------------------------------------ channel -- */

static int ch_lat(struct ibc_suite_op *o, struct cs_inst *in)
{
	int rank = o->ctx->x->rank, rc;

	if (rank == 0) {
		rc = ibc_channel_send_all(in->ch, in->sbuf, in->m, WAIT_NS);
		if (rc == IBC_OK)
			rc = ibc_channel_recv_all(in->ch, in->rbuf, in->m, WAIT_NS);
		if (rc == IBC_OK && o->ctx->cli->validate && !o->in_b2b) {
			ibc_harness_sample_end(o->h);
			in->bad += check(in->rbuf, in->m, 0, in->it);
		}
		return rc;
	}
	rc = ibc_channel_recv_all(in->ch, in->rbuf, in->m, WAIT_NS);
	if (rc == IBC_OK)
		rc = ibc_channel_send_all(in->ch, in->rbuf, in->m, WAIT_NS);
	return rc;
}

static int ch_bw(struct ibc_suite_op *o, struct cs_inst *in)
{
	int rank = o->ctx->x->rank, rc = IBC_OK;
	double t0 = ibc_timer_now_us();
	unsigned char ack = 1;
	long k;

	if (rank == 0) {
		for (k = 0; k < in->window && rc == IBC_OK; k++)
			rc = ibc_channel_send_all(in->ch, in->sbuf, in->m, WAIT_NS);
		if (rc == IBC_OK)
			rc = ibc_channel_recv_all(in->ch, &ack, 1, WAIT_NS);
		ibc_harness_sample_set(o->h, (ibc_timer_now_us() - t0) / (double)in->window);
		return rc;
	}
	for (k = 0; k < in->window && rc == IBC_OK; k++)
		rc = ibc_channel_recv_all(in->ch, in->rbuf, in->m, WAIT_NS);
	if (rc == IBC_OK)
		rc = ibc_channel_send_all(in->ch, &ack, 1, WAIT_NS);
	/* the last message, after the ack: not in rank 0's time */
	if (rc == IBC_OK && o->ctx->cli->validate)
		in->bad += check(in->rbuf, in->m, 0, in->it);
	return rc;
}

/* both ways at once: put and get without waiting, until the window is done */
static int ch_bibw(struct ibc_suite_op *o, struct cs_inst *in)
{
	struct ibc_wait_deadline dl = IBC_WAIT_DEADLINE(WAIT_NS);
	double t0 = ibc_timer_now_us();
	size_t want = in->m * (size_t)in->window, sent = 0, got = 0;
	unsigned long polls = 0;
	int rc = IBC_OK;

	while (rc == IBC_OK && (sent < want || got < want)) {
		size_t acc = 0, n = 0;

		if (sent < want) {
			size_t off = sent % in->m;
			struct iovec v = { in->sbuf + off, in->m - off };

			rc = ibc_channel_put(in->ch, &v, 1, &acc);
			sent += acc;
		}
		if (rc == IBC_OK && got < want) {
			size_t off = got % in->m;
			struct iovec v = { in->rbuf + off, in->m - off };

			rc = ibc_channel_get(in->ch, &v, 1, &n);
			got += n;
		}
		if (rc == IBC_OK && acc == 0 && n == 0) {
			ibc_wait_relax(o->ctx->x->wait, &polls);
			if ((polls & 255) == 0)
				rc = ibc_wait_check(&dl);
		}
	}
	ibc_harness_sample_set(o->h, (ibc_timer_now_us() - t0) / (double)in->window);
	return rc;
}

static int cs_run(struct ibc_suite_op *o)
{
	const struct cs_arg *a = arg_of(o);
	struct cs_inst *in = o->inst;

	if (a->design == NULL)
		return a->kind == CS_LAT ? raw_lat(o, in) : raw_bw(o, in);
	switch (a->kind) {
	case CS_LAT:
		return ch_lat(o, in);
	case CS_BW:
		return ch_bw(o, in);
	case CS_BIBW:
		return ch_bibw(o, in);
	}
	return IBC_ERR_INVAL;
}

/* the host MPI's kernels: its ping-pong timed by the harness (RTT/2), its
 * windowed bandwidth per message */
static int fn_run(struct ibc_suite_op *o)
{
	const struct ibc_channel_suite_fn *f = o->v->arg;
	struct cs_inst *in = o->inst;
	double t0 = ibc_timer_now_us();
	int rc = f->fn(f->ctx, in->sbuf, in->rbuf, in->m, f->bw ? in->window : 0);

	if (rc != IBC_OK)
		return rc;
	if (f->bw && o->ctx->x->rank == 0)
		ibc_harness_sample_set(o->h, (ibc_timer_now_us() - t0) / (double)in->window);
	if (o->ctx->cli->validate && !o->in_b2b && (f->bw ? o->ctx->x->rank == 1
							  : o->ctx->x->rank == 0)) {
		ibc_harness_sample_end(o->h);
		in->bad += check(in->rbuf, in->m, 0, in->it);
	}
	return IBC_OK;
}

static int cs_validate(struct ibc_suite_op *o)
{
	struct cs_inst *in = o->inst;
	int agreed, rc;

	if (in->bad > 0)
		ibc_error("channel %s rank %d: %llu wrong bytes at %zu bytes per message", o->v->name,
			  o->ctx->x->rank, (unsigned long long)in->bad, in->m);
	rc = ibc_boot_agree(o->ctx->boot, in->bad > 0 ? IBC_ERR_VALIDATE : IBC_OK, &agreed);
	return rc != IBC_OK ? rc : agreed;
}

static const char *const counter_names[] = { "put_full", "head_writes", "tail_writes", "packets",
					     "zcopy_reads", NULL };

static int cs_counters(struct ibc_suite_op *o, uint64_t *vals)
{
	struct cs_inst *in = o->inst;
	struct ibc_channel_counters c;

	if (in->ch == NULL)
		return IBC_OK;
	ibc_channel_counters_get(in->ch, &c);
	vals[0] = c.put_full;
	vals[1] = c.head_writes;
	vals[2] = c.tail_writes;
	vals[3] = c.packets;
	vals[4] = c.zcopy_reads;
	return IBC_OK;
}

static int cs_extra(struct ibc_suite_op *o, char *buf, size_t cap)
{
	const struct cs_arg *a = arg_of(o);
	struct cs_inst *in = o->inst;

	if (a == NULL || a->design == NULL) {
		if (in->window > 0)
			snprintf(buf, cap, "window=%ld", in->window);
		return IBC_OK;
	}
	snprintf(buf, cap, "ring=%zu;chunk=%zu;lazy=%zu;window=%ld", opt_ring,
		 a->chunk ? a->chunk : (size_t)16384, a->lazy ? a->lazy : opt_ring / 4, in->window);
	return IBC_OK;
}

static int cs_teardown(struct ibc_suite_op *o)
{
	struct cs_inst *in = o->inst;
	int rc = IBC_OK;

	if (in == NULL)
		return IBC_OK;
	if (in->ch)
		rc = ibc_channel_destroy(in->ch);
	if (in->mr)
		(void)ibc_xport_mr_dereg(o->ctx->x, in->mr);
	if (in->src)
		(void)ibc_xport_mr_dereg(o->ctx->x, in->src);
	free(in->sbuf);
	free(in->rbuf);
	free(in);
	o->inst = NULL;
	return rc;
}

static const struct ibc_suite_variant tmpl = {
	.timing = IBC_HARNESS_TIME_ROOT,
	.usable = cs_usable, .setup = cs_setup, .prepare = cs_prepare, .run = cs_run,
	.validate = cs_validate, .counters = counter_names, .counters_get = cs_counters,
	.extra = cs_extra, .teardown = cs_teardown,
};

struct ibc_suite_variant ibc_channel_suite_fn_variant(const char *name, const char *impl,
						      const char *desc,
						      const struct ibc_channel_suite_fn *fn)
{
	struct ibc_suite_variant v = ibc_suite_variant_like(&tmpl, name, impl, desc, fn);

	v.run = fn_run;
	v.scale = fn->bw ? 0 : 0.5;
	v.flags = fn->bw ? IBC_SUITE_V_NO_B2B : 0;
	return v;
}

/* ------------------------------------------------------------ table ---- */

#define MAX_ARGS 48
static struct cs_arg args[MAX_ARGS];
static char names[MAX_ARGS][40];
static char descs[MAX_ARGS][200];

static size_t add(struct ibc_suite_variant *out, size_t cap, size_t n, const struct cs_arg *a,
		  const char *name, const char *desc)
{
	if (n >= cap || n >= MAX_ARGS)
		return n;
	args[n] = *a;
	snprintf(names[n], sizeof(names[n]), "%s", name);
	snprintf(descs[n], sizeof(descs[n]), "%s", desc);
	out[n] = tmpl;
	out[n].name = names[n];
	out[n].desc = descs[n];
	out[n].arg = &args[n];
	if (a->kind == CS_LAT) {
		out[n].scale = 0.5;
	} else {
		out[n].flags = IBC_SUITE_V_NO_B2B;
	}
	if (a->design == NULL) {
		out[n].counters = NULL;
		out[n].counters_get = NULL;
	}
	return n + 1;
}

static size_t variants_fill(struct ibc_suite_variant *out, size_t cap)
{
	static const size_t chunks[] = { 4096, 8192, 32768, 65536 };
	static const size_t lazies[] = { 1024, 4096, 16384, 131072 };
	size_t d, k, n = 0;
	char nm[40], ds[200];

	for (d = 0; d < ibc_channel_design_count(); d++) {
		const struct ibc_channel_design *cd = ibc_channel_design_get(d);
		struct cs_arg a = { .design = cd->name, .kind = CS_LAT };

		snprintf(ds, sizeof(ds), "latency (ping-pong, RTT/2): %s", cd->desc);
		n = add(out, cap, n, &a, cd->name, ds);
		a.kind = CS_BW;
		snprintf(nm, sizeof(nm), "%s-bw", cd->name);
		snprintf(ds, sizeof(ds), "bandwidth: a window streamed, then an ack; time per message");
		n = add(out, cap, n, &a, nm, ds);
		a.kind = CS_BIBW;
		snprintf(nm, sizeof(nm), "%s-bibw", cd->name);
		snprintf(ds, sizeof(ds), "bi-directional: both stream a window at once; time per message");
		n = add(out, cap, n, &a, nm, ds);
	}
	for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		struct cs_arg a = { .design = "pipeline", .kind = CS_BW, .chunk = chunks[k] };

		snprintf(nm, sizeof(nm), "pipeline-bw-c%zuk", chunks[k] / 1024);
		snprintf(ds, sizeof(ds), "the chunk-size sweep: pipeline-bw with %zu KiB chunks",
			 chunks[k] / 1024);
		n = add(out, cap, n, &a, nm, ds);
	}
	for (k = 0; k < sizeof(lazies) / sizeof(lazies[0]); k++) {
		struct cs_arg a = { .design = "piggyback", .kind = CS_BW, .lazy = lazies[k] };

		snprintf(nm, sizeof(nm), "piggyback-bw-l%zuk", lazies[k] / 1024);
		snprintf(ds, sizeof(ds), "the lazy-update sweep: piggyback-bw writing the tail back "
			 "every %zu KiB", lazies[k] / 1024);
		n = add(out, cap, n, &a, nm, ds);
	}
	{
		struct cs_arg a = { .design = NULL, .kind = CS_LAT };

		n = add(out, cap, n, &a, "rdma-write",
			"the upper line: raw RDMA-write ping-pong, no channel (last word polled)");
		a.kind = CS_BW;
		n = add(out, cap, n, &a, "rdma-write-bw",
			"raw RDMA writes streamed (a window, then an ack); time per message");
	}
	return n;
}

static int options_check(const struct ibc_harness_cli *cli)
{
	(void)cli;
	if (opt_ring % 64 != 0) {
		ibc_error("channel: --ring %zu is not a multiple of 64", opt_ring);
		return IBC_ERR_INVAL;
	}
	return IBC_OK;
}

static void info(FILE *out)
{
	fprintf(out, "  designs (impl/channel):\n");
	ibc_channel_list_print(out);
}

static const size_t dflt_sizes[] = { 8, 64, 512, 4096, 32768, 262144, 1048576 };
/* latency rows read factor_vs_rdma_write and factor_vs_mpi, bandwidth rows
 * factor_vs_rdma_write_bw and factor_vs_mpi_bw */
static const char *const factor_refs[] = { "rdma-write", "rdma-write-bw", "mpi", "mpi-bw", NULL };

const struct ibc_suite_def ibc_channel_suite = {
	.name = "channel",
	.prog = "ibchar-channel",
	.summary = "The MPICH2 RDMA channel of Liu et al.: put/get over a ring per direction in "
		   "the designs basic, piggyback, pipeline and zcopy, latency, bandwidth and "
		   "bi-directional bandwidth, the chunk and lazy-update sweeps, raw RDMA writes "
		   "as the upper line (and the host MPI's ping-pong and windowed bandwidth in the "
		   "-<mpi> builds); two ranks.",
	.flags = IBC_SUITE_XPORT,
	.kind = IBC_HARNESS_LATENCY,
	.min_ranks = 2,
	.max_ranks = 2,
	.default_ranks = 2,
	.sizes = dflt_sizes,
	.nsizes = sizeof(dflt_sizes) / sizeof(dflt_sizes[0]),
	.opts = opts,
	.factor_refs = factor_refs,
	.b2b_iters = 1000,
	.variants_fill = variants_fill,
	.check = options_check,
	.info = info,
};
