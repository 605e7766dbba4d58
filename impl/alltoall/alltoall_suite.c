/* The all-to-all suite (Sur et al.) on the suite driver (alltoall_suite.h). */
#include "alltoall/alltoall_suite.h"

#include "alltoall/alltoall.h"
#include "alltoall/alltoall_model.h"
#include "boot/boot.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "pattern/pattern.h"
#include "regcache/regcache.h"
#include "xport/xport.h"

#include <stdlib.h>
#include <string.h>

static long opt_eager = 8192;
static int opt_no_model;

static const struct ibc_opt opts[] = {
	{ .name = "eager", .type = IBC_OPT_INT, .dest = &opt_eager, .metavar = "BYTES",
	  .help = "two-sided baselines: messages up to this size go eager, larger ones by "
		  "rendezvous", .min = 1, .max = 1 << 20 },
	{ .name = "no-model", .type = IBC_OPT_FLAG, .dest = &opt_no_model,
	  .help = "do not measure the cost models' parameters nor write impl=model rows" },
	IBC_OPT_END
};

static const char *const counter_names[] = { "reg_hits", "reg_misses", "rndz", "writes",
					     "sends", "copy_bytes", NULL };

struct as_state {
	struct ibc_regcache *rc;   /* one per run, shared by the variants */
	struct ibc_alltoall_model model;
};

struct as_inst {
	struct ibc_alltoall *a;    /* a table algorithm, or NULL for a fn variant */
	unsigned char *sbuf, *rbuf;
	size_t m, len;
	uint64_t it;               /* calls filled (validate) */
	uint64_t bad;              /* wrong bytes seen (validate) */
	int bad_src;
	size_t bad_off;
};

static const struct ibc_alltoall_suite_fn *fn_of(const struct ibc_suite_op *o)
{
	return o->v->arg;
}

static int as_usable(const struct ibc_suite_ctx *c, const struct ibc_suite_variant *v, long fanin,
		     char *why, size_t cap)
{
	const struct ibc_alltoall_alg *alg = ibc_alltoall_alg_find(v->name);

	(void)fanin;
	return alg != NULL ? ibc_alltoall_alg_usable(alg, c->x, c->x->size, why, cap)
			   : IBC_ERR_UNSUPPORTED;
}

static int as_teardown(struct ibc_suite_op *o);

static int as_setup(struct ibc_suite_op *o)
{
	struct as_state *st = o->ctx->state;
	struct as_inst *in = calloc(1, sizeof(*in));
	struct ibc_alltoall_params ap;
	int n = o->ctx->boot->size, rc = IBC_OK;

	if (in == NULL)
		return IBC_ERR_NOMEM;
	o->inst = in;
	in->m = o->pt->bytes > 0 ? o->pt->bytes : 1;
	in->len = (size_t)n * in->m;
	if (posix_memalign((void **)&in->sbuf, 4096, in->len) ||
	    posix_memalign((void **)&in->rbuf, 4096, in->len)) {
		(void)as_teardown(o);
		return IBC_ERR_NOMEM;
	}
	ibc_alltoall_fill(in->sbuf, o->ctx->boot->rank, n, in->m, 0);
	memset(in->rbuf, 0, in->len);
	if (fn_of(o) == NULL) {
		ibc_alltoall_params_init(&ap);
		ap.max_bytes = in->m;
		ap.eager_max = (size_t)opt_eager;
		ap.rcache = st->rc;
		rc = ibc_alltoall_create(o->ctx->x, o->v->name, &ap, &in->a);
		if (rc == IBC_OK)
			rc = ibc_alltoall_setup(in->a);
	}
	if (rc != IBC_OK)
		(void)as_teardown(o);
	return rc;
}

static int as_prepare(struct ibc_suite_op *o)
{
	struct as_inst *in = o->inst;
	int j, n = o->ctx->boot->size;

	if (!o->ctx->cli->validate)
		return IBC_OK;
	ibc_alltoall_fill(in->sbuf, o->ctx->boot->rank, n, in->m, ++in->it);
	for (j = 0; j < n; j++) /* the mutant of the tests: one byte of the block to j */
		(void)ibc_suite_corrupt(o, j, n, in->sbuf + (size_t)j * in->m, in->m);
	return IBC_OK;
}

static int as_run(struct ibc_suite_op *o)
{
	struct as_inst *in = o->inst;
	const struct ibc_alltoall_suite_fn *f = fn_of(o);
	int rc, src = -1;
	size_t off = 0, bad;

	rc = f != NULL ? f->fn(f->ctx, in->sbuf, in->rbuf, in->m)
		       : ibc_alltoall_run(in->a, in->sbuf, in->rbuf, in->m);
	if (rc != IBC_OK || !o->ctx->cli->validate || o->in_b2b)
		return rc;
	ibc_harness_sample_end(o->h);  /* the check is no part of the call's time */
	bad = ibc_alltoall_check(in->rbuf, o->ctx->boot->rank, o->ctx->boot->size, in->m, in->it,
				 &src, &off);
	if (bad > 0 && in->bad == 0) {
		in->bad_src = src;
		in->bad_off = off;
	}
	in->bad += bad;
	return IBC_OK;
}

static int as_validate(struct ibc_suite_op *o)
{
	struct as_inst *in = o->inst;
	int agreed, rc;

	if (in->bad > 0)
		ibc_error("alltoall %s rank %d: %llu wrong bytes at m = %zu; the first in the block "
			  "from rank %d at offset %zu", o->v->name, o->ctx->boot->rank,
			  (unsigned long long)in->bad, in->m, in->bad_src, in->bad_off);
	rc = ibc_boot_agree(o->ctx->boot, in->bad > 0 ? IBC_ERR_VALIDATE : IBC_OK, &agreed);
	return rc != IBC_OK ? rc : agreed;
}

static int as_counters(struct ibc_suite_op *o, uint64_t *vals)
{
	struct as_inst *in = o->inst;
	struct ibc_alltoall_counters c;

	if (in->a == NULL)
		return IBC_OK;
	ibc_alltoall_counters_get(in->a, &c);
	vals[0] = c.reg_hits;
	vals[1] = c.reg_misses;
	vals[2] = c.rndz;
	vals[3] = c.writes;
	vals[4] = c.sends;
	vals[5] = c.copy_bytes;
	return IBC_OK;
}

static int as_extra(struct ibc_suite_op *o, char *buf, size_t cap)
{
	struct as_inst *in = o->inst;
	int n = o->ctx->boot->size;

	if (in->a == NULL)
		return IBC_OK;
	if (strncmp(o->v->name, "hrwg", 4) == 0)
		snprintf(buf, cap, "schedule=%s", ibc_pattern_pow2_is(n) ? "hypercube" : "bruck");
	else if (ibc_alltoall_alg_of(in->a)->needs & IBC_ALLTOALL_NEEDS_TWO_SIDED)
		snprintf(buf, cap, "eager_max=%ld", opt_eager);
	return IBC_OK;
}

static int as_teardown(struct ibc_suite_op *o)
{
	struct as_state *st = o->ctx->state;
	struct as_inst *in = o->inst;
	int rc = IBC_OK;

	if (in == NULL)
		return IBC_OK;
	if (in->a != NULL)
		rc = ibc_alltoall_destroy(in->a);
	/* the cache must not outlive the memory it registered */
	if (in->sbuf)
		(void)ibc_regcache_invalidate(st->rc, in->sbuf, in->len);
	if (in->rbuf)
		(void)ibc_regcache_invalidate(st->rc, in->rbuf, in->len);
	free(in->sbuf);
	free(in->rbuf);
	free(in);
	o->inst = NULL;
	return rc;
}

static const struct ibc_suite_variant alg_variant = {
	.timing = IBC_HARNESS_TIME_SLOWEST,
	.usable = as_usable, .setup = as_setup, .prepare = as_prepare, .run = as_run,
	.validate = as_validate, .checked = "bytes", .counters = counter_names, .counters_get = as_counters,
	.extra = as_extra, .teardown = as_teardown,
};

struct ibc_suite_variant ibc_alltoall_suite_fn_variant(const char *name, const char *impl,
						       const char *desc,
						       const struct ibc_alltoall_suite_fn *fn)
{
	return ibc_suite_variant_like(&alg_variant, name, impl, desc, fn);
}

static size_t variants_fill(struct ibc_suite_variant *out, size_t cap)
{
	size_t a, n = 0;

	for (a = 0; a < ibc_alltoall_alg_count() && n < cap; a++) {
		const struct ibc_alltoall_alg *alg = ibc_alltoall_alg_get(a);

		out[n] = alg_variant;
		out[n].name = alg->name;
		out[n].desc = alg->desc;
		n++;
	}
	return n;
}

static int open_state(struct ibc_suite_ctx *c, void **state)
{
	struct as_state *st = calloc(1, sizeof(*st));
	int rc;

	if (st == NULL)
		return IBC_ERR_NOMEM;
	rc = ibc_regcache_open(c->x, 0, &st->rc);
	/* the models' parameters, once per run, before any variant's set-up */
	if (rc == IBC_OK && !opt_no_model)
		rc = ibc_alltoall_model_measure(c->x, (size_t)opt_eager, &st->model);
	if (rc) {
		(void)ibc_regcache_close(st->rc);
		free(st);
		return rc;
	}
	*state = st;
	return IBC_OK;
}

/* rank 0: the model's rows beside the measured ones */
static int after_run(struct ibc_suite_ctx *c)
{
	struct as_state *st = c->state;

	if (c->boot->rank != 0 || opt_no_model)
		return IBC_OK;
	return ibc_alltoall_model_write(c->cli->out, &st->model, (size_t)opt_eager);
}

static void close_state(struct ibc_suite_ctx *c)
{
	struct as_state *st = c->state;

	if (st == NULL)
		return;
	(void)ibc_regcache_close(st->rc);
	free(st);
}

/* 1000 back-to-back calls up to 16 KiB per rank, then fewer (at least 20) */
static long b2b_count(const struct ibc_suite_op *o)
{
	size_t per_rank = (size_t)o->ctx->boot->size * (o->pt->bytes > 0 ? o->pt->bytes : 1);
	long n = per_rank <= 16384 ? 1000 : (long)(1000.0 * 16384.0 / (double)per_rank);

	return n < 20 ? 20 : n;
}

static void info(FILE *out)
{
	fprintf(out, "  algorithms (impl/alltoall):\n");
	ibc_alltoall_list_print(out);
	fprintf(out, "  non-powers of two: hrwg uses Bruck's schedule (ceil(log2 p) steps) in its "
		     "persistent buffer; hypercube is skipped\n");
}

static const size_t dflt_sizes[] = { 1, 32, 4096, 131072 };
static const char *const factor_refs[] = { "mpi", NULL };

const struct ibc_suite_def ibc_alltoall_suite = {
	.name = "alltoall",
	.prog = "ibchar-alltoall",
	.summary = "All-to-all personalized exchange of Sur et al.: HRWG (hypercube over RDMA "
		   "write with a gather list), Direct Eager (zero copy), and the two-sided "
		   "baselines hypercube, bruck, pairwise and direct (and the host MPI's in the "
		   "-<mpi> builds), measured interleaved on the same processes; --sizes is the "
		   "block per pair.",
	.flags = IBC_SUITE_XPORT,
	.kind = IBC_HARNESS_COLLECTIVE,
	.min_ranks = 1,
	.default_ranks = 2,
	.sizes = dflt_sizes,
	.nsizes = sizeof(dflt_sizes) / sizeof(dflt_sizes[0]),
	.opts = opts,
	.factor_refs = factor_refs,
	.b2b_iters = 1000,
	.b2b_count = b2b_count,
	.variants_fill = variants_fill,
	.open = open_state,
	.close = close_state,
	.after = after_run,
	.info = info,
};
