/* The barrier suite (Kini et al.) on the suite driver: one variant per
 * algorithm of the barrier table (RGM once per fan-in), and variants made
 * from any barrier function (the host MPI's, bench/barrier/mpi.c).  Every
 * variant is validated the same way (--validate, barrier.h), and RGM's
 * reliability counters are its own instances', over the timed iterations.
 *
 * An algorithm's row is over --instances barriers of it (default 8), each
 * with its own flags and buffers, called in turn: where one barrier's words
 * lie decides what it costs to move them between two cores (docs/model.md),
 * so one instance's figure is a draw of its placement, and the row's is over
 * eight.  Every rank calls the same instance in turn, so they stay in step;
 * the validation check sees one sequence of barriers across them.  RGM
 * keeps one (instances_of). */
#include "barrier/barrier_suite.h"

#include "barrier/barrier.h"
#include "boot/boot.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "pattern/pattern.h"
#include "xport/xport.h"

#include <stdlib.h>
#include <string.h>

#define BS_MAX_INSTANCES 64

/* the --help default: ibc_barrier_params_init's timeout_us */
static double opt_timeout_us = 500, opt_mcast_drop = 0;
static long opt_instances = 8;

static const struct ibc_opt opts[] = {
	{ .name = "timeout", .type = IBC_OPT_DOUBLE, .dest = &opt_timeout_us, .metavar = "US",
	  .help = "RGM: microseconds before a receiver NAKs a late release", .min = 1, .max = 1e9 },
	{ .name = "mcast-drop", .type = IBC_OPT_DOUBLE, .dest = &opt_mcast_drop, .metavar = "P",
	  .help = "probability that a member discards a multicast datagram (seeded; "
		  "reliability experiments; shm and verbs)", .min = 0, .max = 1 },
	{ .name = "instances", .type = IBC_OPT_INT, .dest = &opt_instances, .metavar = "K",
	  .help = "barriers of an algorithm per row, each with its own buffers, called in turn "
		  "(the row's figure is over K placements; 1: one barrier; RGM: always 1)", .min = 1,
	  .max = BS_MAX_INSTANCES },
	IBC_OPT_END
};

static const char *const counter_names[] = { "naks", "retransmits", "duplicates", "pulls",
					     "mcast_drops", "gather_spins", "spin_timeouts",
					     NULL };

struct bs_inst {
	struct ibc_barrier *b[BS_MAX_INSTANCES]; /* an algorithm of the table: nb instances */
	uint64_t calls[BS_MAX_INSTANCES];        /* each one's, for the row's instances= */
	int nb, cur;                             /* cur: the next call's */
	struct ibc_barrier_check *chk;           /* --validate: one over every instance */
};

static const struct ibc_barrier_suite_fn *fn_of(const struct ibc_suite_op *o)
{
	return o->v->arg;
}

static int bs_usable(const struct ibc_suite_ctx *c, const struct ibc_suite_variant *v, long fanin,
		     char *why, size_t cap)
{
	const struct ibc_barrier_alg *alg = ibc_barrier_alg_find(v->name);
	struct ibc_barrier_params bp;

	if (alg == NULL || ibc_barrier_alg_usable(alg, c->x, why, cap) != IBC_OK)
		return IBC_ERR_UNSUPPORTED;
	/* past N - 1 every l = 2^k - 1 gives the same flat tree: keep the first */
	if ((v->flags & IBC_SUITE_V_FANIN) && c->x->size > 1 &&
	    !ibc_pattern_fanin_distinct(fanin, c->x->size)) {
		snprintf(why, cap, "fan-in %ld gives the flat tree of fan-in %ld at N = %d", fanin,
			 (fanin - 1) / 2, c->x->size);
		return IBC_ERR_UNSUPPORTED;
	}
	ibc_barrier_params_init(&bp);
	bp.fanin = (int)fanin;
	bp.timeout_us = opt_timeout_us;
	return ibc_barrier_params_check(alg, c->x->size, &bp, NULL);
}

static int bs_teardown(struct ibc_suite_op *o);

/* RGM's instance holds a multicast group (shm: 8 a process; verbs: a UD QP
 * each) and every fan-in's is set up at once: one barrier a row */
static int instances_of(const struct ibc_suite_op *o)
{
	const struct ibc_barrier_alg *alg = ibc_barrier_alg_find(o->v->name);

	return alg != NULL && (alg->needs & IBC_BARRIER_NEEDS_MULTICAST) ? 1 : (int)opt_instances;
}

static int bs_setup(struct ibc_suite_op *o)
{
	struct bs_inst *in = calloc(1, sizeof(*in));
	struct ibc_barrier_params bp;
	int rc = IBC_OK;

	if (in == NULL)
		return IBC_ERR_NOMEM;
	o->inst = in;
	ibc_barrier_params_init(&bp);
	bp.fanin = (int)o->fanin;
	bp.timeout_us = opt_timeout_us;
	while (rc == IBC_OK && fn_of(o) == NULL && in->nb < instances_of(o)) {
		rc = ibc_barrier_create(o->ctx->x, o->v->name, &bp, &in->b[in->nb]);
		if (rc != IBC_OK)
			break;
		/* registration and exchange now, not in the first warm-up barrier */
		rc = ibc_barrier_setup(in->b[in->nb++]);
	}
	if (rc == IBC_OK && o->ctx->cli->validate)
		rc = ibc_barrier_check_open(o->ctx->boot, o->ctx->x, IBC_BARRIER_CHECK_AUTO,
					    (size_t)o->pt->runs_max, &in->chk);
	if (rc != IBC_OK)
		(void)bs_teardown(o); /* the harness tears down only what was set up */
	return rc;
}

static int barrier_once(struct ibc_suite_op *o)
{
	struct bs_inst *in = o->inst;
	const struct ibc_barrier_suite_fn *f = fn_of(o);
	int k = in->cur;

	if (f != NULL)
		return f->fn(f->ctx);
	in->cur = k + 1 < in->nb ? k + 1 : 0;
	in->calls[k]++;
	return ibc_barrier_run(in->b[k]);
}

/* The mutant of the validation tests (IBC_CORRUPT, suite.h): rank mut
 * leaves this barrier before the others entered it.  It enters and leaves
 * as the check sees it, then every rank meets at the bootstrap's barrier,
 * and only then do the others enter; the real barrier runs after, so the
 * algorithm stays in step.  The check must report it. */
static int leave_early(struct ibc_suite_op *o, struct bs_inst *in, int mut)
{
	struct ibc_boot *b = o->ctx->boot;
	int rc;

	if (b->rank == mut) {
		(void)ibc_suite_corrupt(o, 0, 1, NULL, 0); /* says so in the log */
		ibc_barrier_check_enter(in->chk);
		(void)ibc_barrier_check_exit(in->chk);
	}
	rc = ibc_boot_barrier(b);
	if (rc == IBC_OK && b->rank != mut)
		ibc_barrier_check_enter(in->chk);
	if (rc == IBC_OK)
		rc = barrier_once(o);
	ibc_harness_sample_end(o->h);
	if (rc == IBC_OK && b->rank != mut)
		(void)ibc_barrier_check_exit(in->chk);
	return rc;
}

static int bs_run(struct ibc_suite_op *o)
{
	struct bs_inst *in = o->inst;
	int rc, mut;

	if (in->chk == NULL)
		return barrier_once(o);
	mut = ibc_suite_corrupt_rank(o);
	if (mut >= 0 && mut < o->ctx->boot->size)
		return leave_early(o, in, mut);
	ibc_barrier_check_enter(in->chk);
	rc = barrier_once(o);
	/* across hosts the check reads every peer's counter after the
	 * barrier, which is no part of the barrier's time */
	ibc_harness_sample_end(o->h);
	(void)ibc_barrier_check_exit(in->chk); /* reported by bs_validate */
	return rc;
}

static int bs_validate(struct ibc_suite_op *o)
{
	struct bs_inst *in = o->inst;
	int rc;

	if (in->chk == NULL)
		return IBC_OK;
	rc = ibc_barrier_check_close(in->chk, NULL);
	in->chk = NULL;
	return rc;
}

static int bs_counters(struct ibc_suite_op *o, uint64_t *vals)
{
	struct bs_inst *in = o->inst;
	struct ibc_barrier_counters c;
	int k;

	for (k = 0; k < in->nb; k++) {
		ibc_barrier_counters_get(in->b[k], &c);
		vals[0] += c.naks;
		vals[1] += c.retransmits;
		vals[2] += c.duplicates;
		vals[3] += c.pulls;
		vals[4] += c.mcast_drops;
		vals[5] += c.gather_spins;
		vals[6] += c.spin_timeouts;
	}
	return IBC_OK;
}

static int bs_extra(struct ibc_suite_op *o, char *buf, size_t cap)
{
	struct bs_inst *in = o->inst;
	int k, used = 0, w = 0;

	if (in->nb == 0)
		return IBC_OK;
	/* the instances that ran: the row's figure is over these */
	for (k = 0; k < in->nb; k++)
		used += in->calls[k] > 0;
	if (ibc_barrier_alg_of(in->b[0])->needs & IBC_BARRIER_NEEDS_MULTICAST)
		w = snprintf(buf, cap, "timeout_us=%g;mcast_drop=%g;", opt_timeout_us, opt_mcast_drop);
	if (w >= 0 && (size_t)w < cap)
		snprintf(buf + w, cap - (size_t)w, "instances=%d", used);
	return IBC_OK;
}

static int bs_teardown(struct ibc_suite_op *o)
{
	struct bs_inst *in = o->inst;
	int rc = IBC_OK, r, k;

	if (in == NULL)
		return IBC_OK;
	if (in->chk != NULL)
		(void)ibc_barrier_check_close(in->chk, NULL);
	for (k = 0; k < in->nb; k++)
		if ((r = ibc_barrier_destroy(in->b[k])) != IBC_OK && rc == IBC_OK)
			rc = r;
	free(in);
	o->inst = NULL;
	return rc;
}

static const struct ibc_suite_variant alg_variant = {
	.timing = IBC_HARNESS_TIME_SLOWEST,
	.usable = bs_usable, .setup = bs_setup, .run = bs_run, .validate = bs_validate,
	.checked = "order",
	.counters = counter_names, .counters_get = bs_counters, .extra = bs_extra,
	.teardown = bs_teardown,
};

struct ibc_suite_variant ibc_barrier_suite_fn_variant(const char *name, const char *impl,
						      const char *desc,
						      const struct ibc_barrier_suite_fn *fn)
{
	return ibc_suite_variant_like(&alg_variant, name, impl, desc, fn);
}

static size_t variants_fill(struct ibc_suite_variant *out, size_t cap)
{
	size_t a, n = 0;

	for (a = 0; a < ibc_barrier_alg_count() && n < cap; a++) {
		const struct ibc_barrier_alg *alg = ibc_barrier_alg_get(a);

		out[n] = alg_variant;
		out[n].name = alg->name;
		out[n].desc = alg->desc;
		if (alg->needs & IBC_BARRIER_NEEDS_MULTICAST) {
			out[n].flags |= IBC_SUITE_V_FANIN;
		} else {
			out[n].counters = NULL; /* RGM's only */
			out[n].counters_get = NULL;
		}
		n++;
	}
	return n;
}

/* the fan-in rule (2^k - 1) before any rank starts */
static int options_check(const struct ibc_harness_cli *cli)
{
	size_t a, i;

	for (a = 0; a < ibc_barrier_alg_count(); a++) {
		const struct ibc_barrier_alg *alg = ibc_barrier_alg_get(a);
		struct ibc_barrier_params bp;

		if (!(alg->needs & IBC_BARRIER_NEEDS_MULTICAST))
			continue;
		for (i = 0; i < cli->fanin.n; i++) {
			ibc_barrier_params_init(&bp);
			bp.fanin = (int)cli->fanin.v[i];
			bp.timeout_us = opt_timeout_us;
			if (ibc_barrier_params_check(alg, bp.fanin + 1, &bp, NULL) != IBC_OK)
				return IBC_ERR_INVAL;
		}
	}
	return IBC_OK;
}

static void xport_params(struct ibc_xport_params *xp)
{
	xp->mcast_drop = opt_mcast_drop;
	xp->drop_seed = 1;
}

static void info(FILE *out)
{
	ibc_barrier_list_print(out, 1);
}

static const long dflt_fanins[] = { 1, 3, 7, 15 };
static const char *const factor_refs[] = { "mpi-pe", "mpi-ds", "mpi", NULL };

const struct ibc_suite_def ibc_barrier_suite = {
	.name = "barrier",
	.prog = "ibchar-barrier",
	.summary = "Barrier latency of RPE, RDS, RGM (per fan-in), PE and DS over the chosen "
		   "transport (and the host MPI's barriers in the -<mpi> builds), measured "
		   "interleaved on the same processes; rows go to DIR/results.csv with paper_us "
		   "(1000 back-to-back barriers) and RGM's reliability counters in extra.",
	.flags = IBC_SUITE_XPORT,
	.kind = IBC_HARNESS_COLLECTIVE,
	.min_ranks = 1,
	.default_ranks = 2,
	.fanins = dflt_fanins,
	.nfanins = sizeof(dflt_fanins) / sizeof(dflt_fanins[0]),
	.opts = opts,
	.factor_refs = factor_refs,
	.b2b_iters = 1000,
	.variants_fill = variants_fill,
	.check = options_check,
	.xport_params = xport_params,
	.info = info,
};
