/* The channel suite (Liu et al.) on the suite driver (channel_suite.h): its
 * variant table and options, the per-point state and its validation, and
 * the channel's kernels.  Beside it: the raw RDMA-write kernels
 * (channel_raw.c), the host MPI's kernels as variants (channel_hostmpi.c),
 * the connection-scaling table (channel_conns.c); what they share is
 * channel_suite_impl.h. */
#include "channel/channel_suite_impl.h"

#include "boot/boot.h"
#include "channel/channel.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/wait.h"
#include "pattern/pattern.h"
#include "xport/xport.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static size_t opt_ring = 256 * 1024;

static const struct ibc_opt opts[] = {
	{ .name = "ring", .type = IBC_OPT_SIZE, .dest = &opt_ring, .metavar = "BYTES",
	  .help = "the channel's ring per direction (a multiple of 64, >= 64 KiB)",
	  .min = 65536, .max = 1 << 30 },
	IBC_OPT_END
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

static int cs_usable(const struct ibc_suite_ctx *c, const struct ibc_suite_variant *v, long fanin,
		     char *why, size_t cap)
{
	const struct cs_arg *a = v->arg;

	(void)fanin;
	if (a != NULL && a->probe)
		return cs_probe_usable(c, why, cap);
	if (a == NULL || a->design == NULL)
		return IBC_OK;
	return ibc_channel_usable(ibc_channel_design_find(a->design), c->x, why, cap);
}

static int cs_teardown(struct ibc_suite_op *o);
static int cs_run(struct ibc_suite_op *o);

/* the host MPI's variants (channel_hostmpi.c) carry their kernel, not a
 * cs_arg, and run it, not cs_run */
static const struct ibc_channel_suite_fn *fn_of(const struct ibc_suite_op *o)
{
	return o->v->run != cs_run ? o->v->arg : NULL;
}

static enum cs_kind kind_of(const struct ibc_suite_op *o)
{
	const struct ibc_channel_suite_fn *f = fn_of(o);

	return f != NULL ? (f->bw ? CS_BW : CS_LAT) : arg_of(o)->kind;
}

/* The payload messages of an iteration this rank sends and receives (the
 * bandwidth kernels' acks carry no payload). */
static long msgs_sent(const struct ibc_suite_op *o, const struct cs_inst *in)
{
	enum cs_kind k = kind_of(o);

	return k == CS_LAT ? 1 : k == CS_BIBW || o->ctx->x->rank == 0 ? in->window : 0;
}

static long msgs_received(const struct ibc_suite_op *o, const struct cs_inst *in)
{
	enum cs_kind k = kind_of(o);

	return k == CS_LAT ? 1 : k == CS_BIBW || o->ctx->x->rank == 1 ? in->window : 0;
}

/* where message k lands (rdma-write: its slot) */
static const unsigned char *msg_dst(const struct cs_inst *in, long k)
{
	if (in->mr != NULL)
		return (const unsigned char *)in->mr->addr + (size_t)k * in->slot;
	return in->rbuf + (size_t)(k % in->nmsg) * in->m;
}

/* the messages of iteration in->done_iter that arrived here */
static void received_check(struct ibc_suite_op *o, struct cs_inst *in)
{
	int me = o->ctx->x->rank;
	long k, n = msgs_received(o, in);

	for (k = 0; k < n && in->done_iter > 0; k++) {
		size_t off = 0, bad = ibc_suite_pattern_check(
			msg_dst(in, k), in->m,
			ibc_suite_pattern_seed(1 - me, me, (uint64_t)in->done_iter, (uint64_t)k), &off);

		if (bad > 0 && in->bad == 0) {
			in->bad_iter = in->done_iter;
			in->bad_msg = k;
			in->bad_off = off;
		}
		in->bad += bad;
	}
	in->done_iter = 0;
}

/* untimed, before every iteration: last iteration's arrivals checked, this
 * one's messages filled */
static int cs_prepare(struct ibc_suite_op *o)
{
	struct cs_inst *in = o->inst;
	int me = o->ctx->x->rank;
	long k, n;

	if (!o->ctx->cli->validate)
		return IBC_OK;
	received_check(o, in);
	n = msgs_sent(o, in);
	for (k = 0; k < n; k++) {
		unsigned char *b = msg_src(in, k);

		ibc_suite_pattern_fill(b, in->m,
				       ibc_suite_pattern_seed(me, 1 - me, (uint64_t)o->iter, (uint64_t)k));
		(void)ibc_suite_corrupt(o, k, n, b, in->m);
	}
	return IBC_OK;
}

static int cs_setup(struct ibc_suite_op *o)
{
	const struct cs_arg *a = fn_of(o) != NULL ? NULL : arg_of(o);
	struct cs_inst *in = calloc(1, sizeof(*in));
	struct ibc_xport *x = o->ctx->x;
	int rc = IBC_OK;

	if (in == NULL)
		return IBC_ERR_NOMEM;
	o->inst = in;
	in->m = o->pt->bytes > 0 ? o->pt->bytes : 1;
	in->window = kind_of(o) == CS_LAT ? 0 : ibc_channel_suite_window(in->m);
	in->nmsg = o->ctx->cli->validate && in->window > 0 ? in->window : 1;
	if (posix_memalign((void **)&in->sbuf, 4096, in->m * (size_t)in->nmsg) ||
	    posix_memalign((void **)&in->rbuf, 4096, in->m * (size_t)in->nmsg)) {
		(void)cs_teardown(o);
		return IBC_ERR_NOMEM;
	}
	memset(in->sbuf, 1, in->m * (size_t)in->nmsg);
	memset(in->rbuf, 0, in->m * (size_t)in->nmsg);
	if (a != NULL && a->design != NULL) {
		struct ibc_channel_params cp;

		ibc_channel_params_init(&cp);
		cp.ring_bytes = opt_ring;
		if (a->chunk)
			cp.chunk_bytes = a->chunk;
		if (a->lazy)
			cp.lazy_bytes = a->lazy;
		cp.staged = a->staged;
		rc = ibc_channel_create(x, a->design, 1 - x->rank, &cp, &in->ch);
		if (rc == IBC_OK)
			rc = ibc_channel_setup(in->ch);
	} else if (a != NULL && a->probe) {
		rc = cs_probe_setup(o, in);
	} else if (a != NULL) {
		rc = cs_raw_setup(o, in);
	}
	if (rc != IBC_OK)
		(void)cs_teardown(o);
	return rc;
}

/* ------------------------------------------------------------ channel -- */

/* rank 0 sends, rank 1 answers with its own message when rank 0's is in */
static int ch_lat(struct ibc_suite_op *o, struct cs_inst *in)
{
	int rank = o->ctx->x->rank, rc = IBC_OK;

	if (rank == 1)
		rc = ibc_channel_recv_all(in->ch, in->rbuf, in->m, WAIT_NS);
	if (rc == IBC_OK)
		rc = ibc_channel_send_all(in->ch, in->sbuf, in->m, WAIT_NS);
	if (rc == IBC_OK && rank == 0)
		rc = ibc_channel_recv_all(in->ch, in->rbuf, in->m, WAIT_NS);
	return arrived(o, in, rc);
}

static int ch_bw(struct ibc_suite_op *o, struct cs_inst *in)
{
	int rank = o->ctx->x->rank, rc = IBC_OK;
	double t0 = ibc_timer_now_us();
	unsigned char ack = 1;
	long k;

	if (rank == 0) {
		for (k = 0; k < in->window && rc == IBC_OK; k++)
			rc = ibc_channel_send_all(in->ch, msg_src(in, k), in->m, WAIT_NS);
		if (rc == IBC_OK)
			rc = ibc_channel_recv_all(in->ch, &ack, 1, WAIT_NS);
		ibc_harness_sample_set(o->h, (ibc_timer_now_us() - t0) / (double)in->window);
		return rc;
	}
	for (k = 0; k < in->window && rc == IBC_OK; k++)
		rc = ibc_channel_recv_all(in->ch, in->rbuf + (size_t)(k % in->nmsg) * in->m, in->m,
					  WAIT_NS);
	if (rc == IBC_OK)
		rc = ibc_channel_send_all(in->ch, &ack, 1, WAIT_NS);
	return arrived(o, in, rc);
}

/* both ways at once: put and get without waiting, until the window is done;
 * a put or get never crosses a message's end */
static int ch_bibw(struct ibc_suite_op *o, struct cs_inst *in)
{
	struct ibc_wait_deadline dl = IBC_WAIT_DEADLINE(WAIT_NS);
	double t0 = ibc_timer_now_us();
	size_t want = in->m * (size_t)in->window, sent = 0, got = 0, span = in->m * (size_t)in->nmsg;
	unsigned long polls = 0;
	int rc = IBC_OK;

	while (rc == IBC_OK && (sent < want || got < want)) {
		size_t acc = 0, n = 0;

		if (sent < want) {
			struct iovec v = { in->sbuf + sent % span, in->m - sent % in->m };

			rc = ibc_channel_put(in->ch, &v, 1, &acc);
			sent += acc;
		}
		if (rc == IBC_OK && got < want) {
			struct iovec v = { in->rbuf + got % span, in->m - got % in->m };

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
	return arrived(o, in, rc);
}

static int cs_run(struct ibc_suite_op *o)
{
	const struct cs_arg *a = arg_of(o);
	struct cs_inst *in = o->inst;

	if (a->probe)
		return cs_probe_run(in);
	if (a->design == NULL)
		return a->kind == CS_LAT ? cs_raw_lat(o, in) : cs_raw_bw(o, in);
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

static int cs_validate(struct ibc_suite_op *o)
{
	struct cs_inst *in = o->inst;
	int agreed, rc;

	received_check(o, in);
	if (in->bad > 0)
		ibc_error("channel %s rank %d: %llu wrong bytes at %zu bytes per message; the first "
			  "at byte %zu of message %ld of iteration %ld", o->v->name, o->ctx->x->rank,
			  (unsigned long long)in->bad, in->m, in->bad_off, in->bad_msg, in->bad_iter);
	rc = ibc_boot_agree(o->ctx->boot, in->bad > 0 ? IBC_ERR_VALIDATE : IBC_OK, &agreed);
	return rc != IBC_OK ? rc : agreed;
}

static const char *const counter_names[] = { "put_full", "head_writes", "tail_writes", "packets",
					     "zcopy_reads", "zcopy_writes", NULL };

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
	vals[5] = c.zcopy_writes;
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
	snprintf(buf, cap, "ring=%zu;chunk=%zu;lazy=%zu;window=%ld;staged=%d", opt_ring,
		 a->chunk ? a->chunk : (size_t)16384, a->lazy ? a->lazy : opt_ring / 4, in->window,
		 a->staged || !ibc_channel_direct(in->ch));
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
	ibc_probe_close(in->probe);
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

const struct ibc_suite_variant cs_tmpl = {
	.timing = IBC_HARNESS_TIME_ROOT,
	.usable = cs_usable, .setup = cs_setup, .prepare = cs_prepare, .run = cs_run,
	.validate = cs_validate, .checked = "bytes", .counters = counter_names, .counters_get = cs_counters,
	.extra = cs_extra, .teardown = cs_teardown,
};

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
	out[n] = cs_tmpl;
	out[n].name = names[n];
	out[n].desc = descs[n];
	out[n].arg = &args[n];
	if (a->kind == CS_LAT) {
		out[n].scale = 0.5;
	} else {
		out[n].flags = IBC_SUITE_V_NO_B2B;
	}
	if (a->design == NULL) {
		/* raw writes land straight in the peer's slots */
		out[n].flags |= IBC_SUITE_V_ONE_SIDED;
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
	for (k = 0; k < 2; k++) {
		struct cs_arg a = { .design = k ? "pipeline" : "piggyback", .kind = CS_BW, .staged = 1 };

		snprintf(nm, sizeof(nm), "%s-bw-staged", a.design);
		snprintf(ds, sizeof(ds), "%s-bw staging every packet, as the paper does (on a "
			 "transport whose write is a CPU copy, %s-bw writes packets >= 4 KiB from the "
			 "caller's buffer)", a.design, a.design);
		n = add(out, cap, n, &a, nm, ds);
	}
	{
		struct cs_arg a = { .design = "zcopy", .kind = CS_BW, .staged = 1 };

		n = add(out, cap, n, &a, "zcopy-bw-staged",
			"zcopy-bw as the paper does: packets staged, the receiver reads all of a "
			"large put (on a transport whose write is a CPU copy, zcopy-bw has the sender "
			"write the second half meanwhile)");
	}
	{
		struct cs_arg a = { .design = NULL, .kind = CS_LAT };

		n = add(out, cap, n, &a, "rdma-write",
			"the upper line: raw RDMA-write ping-pong, no channel (last word polled)");
		a.kind = CS_BW;
		n = add(out, cap, n, &a, "rdma-write-bw",
			"raw RDMA writes streamed (a window, then an ack); time per message");
	}
	{
		struct cs_arg a = { .design = NULL, .kind = CS_LAT, .probe = 1 };

		n = add(out, cap, n, &a, "probe-write",
			"the floor: the placement probe's one-sided write pattern (each rank stores "
			"a word into the line the other polls), no transport, no channel; one node");
		/* nothing travels that a check could read */
		out[n - 1].validate = NULL;
		out[n - 1].checked = NULL;
		out[n - 1].prepare = NULL;
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
	.after = cs_conn_table,
	.info = info,
};
