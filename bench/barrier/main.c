/* ibchar-barrier: the barrier suite (Kini et al.).  Every algorithm of the
 * barrier table (impl/barrier) that the transport supports — RGM once per
 * fan-in — measured interleaved by the harness on the same processes.
 * Rows: one per variant (RGM: per fan-in) in DIR/results.csv; extra holds
 * paper_us (the paper's own figure: 1000 back-to-back barriers, the mean
 * time per barrier averaged over ranks) and RGM's reliability counters. */
#include "barrier/barrier.h"
#include "boot/boot.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "core/timer.h"
#include "harness/harness.h"
#include "xport/xport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPS 64
#define PAPER_ITERS 1000

struct bar_op {
	const char *alg;
	int fanin;
	struct ibc_xport *x;
	struct ibc_barrier *b;
	struct ibc_barrier_check *chk;
	int validate;
};

static struct ibc_harness_cli cli = IBC_HARNESS_CLI_INIT;
static int list_only, info_only;
static double timeout_us = 500, mcast_drop = 0;

static const struct ibc_opt opts[] = {
	IBC_HARNESS_CLI_OPTS(cli),
	{ .name = "timeout", .type = IBC_OPT_DOUBLE, .dest = &timeout_us, .metavar = "US",
	  .help = "RGM: microseconds before a receiver NAKs a late release", .min = 1, .max = 1e9 },
	{ .name = "mcast-drop", .type = IBC_OPT_DOUBLE, .dest = &mcast_drop, .metavar = "P",
	  .help = "shm: probability a multicast datagram is lost (reliability experiments)",
	  .min = 0, .max = 1 },
	{ .name = "list", .type = IBC_OPT_FLAG, .dest = &list_only,
	  .help = "print the variants, one per line, and exit" },
	{ .name = "info", .type = IBC_OPT_FLAG, .dest = &info_only,
	  .help = "describe the algorithms, their needs and tunables, and exit" },
	IBC_OPT_END
};

static const struct ibc_opt_spec spec = {
	.prog = "ibchar-barrier",
	.synopsis = "[OPTIONS]",
	.summary = "Barrier latency of RPE, RDS, RGM (per fan-in), PE and DS over the chosen "
		   "transport, measured interleaved on the same processes; rows go to "
		   "DIR/results.csv.",
	.opts = opts,
};

static int op_setup(struct ibc_harness *h, const struct ibc_harness_point *pt, void *arg)
{
	struct bar_op *o = arg;
	struct ibc_barrier_params bp;
	int rc;

	ibc_barrier_params_init(&bp);
	bp.fanin = o->fanin;
	bp.timeout_us = timeout_us;
	rc = ibc_barrier_create(o->x, o->alg, &bp, &o->b);
	if (rc)
		return rc;
	/* registration and exchange now, not inside the first warm-up barrier */
	rc = ibc_barrier_setup(o->b);
	if (rc == IBC_OK && o->validate) {
		rc = ibc_barrier_check_open(ibc_harness_boot(h),
					    (size_t)(pt->iters + pt->warmup), &o->chk);
	}
	if (rc) {
		(void)ibc_barrier_destroy(o->b);
		o->b = NULL;
	}
	return rc;
}

static int op_run(struct ibc_harness *h, void *arg)
{
	struct bar_op *o = arg;
	int rc;

	(void)h;
	if (o->chk)
		ibc_barrier_check_enter(o->chk);
	rc = ibc_barrier_run(o->b);
	if (o->chk)
		(void)ibc_barrier_check_exit(o->chk); /* reported by op_validate */
	return rc;
}

static int op_validate(struct ibc_harness *h, void *arg)
{
	struct bar_op *o = arg;
	int rc;

	(void)h;
	if (!o->chk)
		return IBC_OK;
	rc = ibc_barrier_check_close(o->chk, NULL);
	o->chk = NULL;
	return rc;
}

/* The paper's figure: PAPER_ITERS back-to-back barriers, each rank's mean,
 * averaged over ranks; then RGM's counters. */
static int op_extra(struct ibc_harness *h, void *arg, char *buf, size_t cap)
{
	struct bar_op *o = arg;
	struct ibc_boot *boot = ibc_harness_boot(h);
	struct ibc_barrier_counters c;
	double t0, mine, *all, sum = 0;
	int r, rc, w;

	all = calloc((size_t)boot->size, sizeof(*all));
	if (!all)
		return IBC_ERR_NOMEM;
	rc = ibc_boot_barrier(boot);
	t0 = ibc_timer_now_us();
	for (r = 0; r < PAPER_ITERS && rc == IBC_OK; r++)
		rc = ibc_barrier_run(o->b);
	mine = (ibc_timer_now_us() - t0) / PAPER_ITERS;
	if (rc == IBC_OK)
		rc = ibc_boot_allgather(boot, &mine, all, sizeof(mine));
	for (r = 0; r < boot->size; r++)
		sum += all[r];
	free(all);
	if (rc == IBC_OK)
		rc = ibc_barrier_counters_sum(o->b, &c);
	if (rc)
		return rc;
	w = snprintf(buf, cap, "paper_us=%.3f", sum / boot->size);
	if (w > 0 && (size_t)w < cap && (ibc_barrier_alg_of(o->b)->needs & IBC_BARRIER_NEEDS_MULTICAST)) {
		buf[w++] = ';';
		buf[w] = '\0';
		(void)ibc_barrier_extra_format(o->b, &c, buf + w, cap - (size_t)w);
	}
	return IBC_OK;
}

static int op_teardown(struct ibc_harness *h, void *arg)
{
	struct bar_op *o = arg;
	int rc;

	(void)h;
	if (o->chk) {
		(void)ibc_barrier_check_close(o->chk, NULL);
		o->chk = NULL;
	}
	rc = ibc_barrier_destroy(o->b);
	o->b = NULL;
	return rc;
}

/* One operation per algorithm; RGM once per fan-in that fits N. */
static int ops_build(struct ibc_xport *x, struct bar_op *bops, struct ibc_harness_op *ops,
		     size_t *n)
{
	static const int dflt_fanins[] = { 1, 3, 7, 15 };
	size_t a, f, nf;

	*n = 0;
	for (a = 0; a < ibc_barrier_alg_count(); a++) {
		const struct ibc_barrier_alg *alg = ibc_barrier_alg_get(a);
		int tree = (alg->needs & IBC_BARRIER_NEEDS_MULTICAST) != 0;
		char why[200];

		if (!ibc_harness_cli_wants(&cli, alg->name))
			continue;
		if (ibc_barrier_alg_usable(alg, x, why, sizeof(why)) != IBC_OK) {
			if (x->rank == 0)
				ibc_warn("%s; skipped", why);
			continue;
		}
		nf = !tree ? 1 : cli.fanin.n ? cli.fanin.n : sizeof(dflt_fanins) / sizeof(dflt_fanins[0]);
		for (f = 0; f < nf && *n < MAX_OPS; f++) {
			struct ibc_barrier_params bp;
			int l = !tree ? 0 : cli.fanin.n ? (int)cli.fanin.v[f] : dflt_fanins[f];

			ibc_barrier_params_init(&bp);
			bp.fanin = l;
			if (tree && x->size > 1 && l >= x->size) {
				if (x->rank == 0)
					ibc_info("%s: fan-in %d needs more than %d ranks; skipped",
						 alg->name, l, x->size);
				continue;
			}
			if (ibc_barrier_params_check(alg, x->size, &bp, NULL) != IBC_OK)
				return IBC_ERR_INVAL;
			bops[*n] = (struct bar_op){ .alg = alg->name, .fanin = l, .x = x,
						    .validate = cli.validate };
			ops[*n] = (struct ibc_harness_op){
				.variant = alg->name, .fanin = tree ? l : 0,
				.timing = IBC_HARNESS_TIME_SLOWEST, .arg = &bops[*n],
				.setup = op_setup, .run = op_run, .validate = op_validate,
				.extra = op_extra, .teardown = op_teardown };
			(*n)++;
		}
	}
	return IBC_OK;
}

int main(int argc, char **argv)
{
	static struct bar_op bops[MAX_OPS];
	static struct ibc_harness_op ops[MAX_OPS];
	struct ibc_harness_params p;
	struct ibc_xport_params xp;
	struct ibc_xport *x = NULL;
	struct ibc_boot *boot;
	size_t a, n = 0;
	int first, rc, rc2;

	ibc_log_init("ibchar-barrier");
	rc = ibc_opt_parse(&spec, argc, argv, &first);
	if (rc == IBC_OPT_HELP_SHOWN)
		return 0;
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	if (first < argc) {
		fprintf(stderr, "ibchar-barrier: unexpected argument '%s'\n"
			"Try 'ibchar-barrier --help'.\n", argv[first]);
		return 2;
	}
	if (list_only) {
		for (a = 0; a < ibc_barrier_alg_count(); a++)
			printf("%s\n", ibc_barrier_alg_get(a)->name);
		return 0;
	}
	if (info_only) {
		ibc_barrier_list_print(stdout, 1);
		return 0;
	}
	for (a = 0; a < cli.variants.n; a++)
		if (!ibc_barrier_alg_find(cli.variants.v[a])) {
			fprintf(stderr, "ibchar-barrier: unknown variant '%s' (known: %s)\n",
				cli.variants.v[a], ibc_barrier_alg_names());
			return 2;
		}

	ibc_harness_params_init(&p);
	p.suite = "barrier";
	p.kind = IBC_HARNESS_COLLECTIVE;
	p.factor_refs[0] = "mpi-pe";
	p.factor_refs[1] = "mpi-ds";
	p.factor_refs[2] = "mpi";
	p.nfactor_refs = 3;
	ibc_harness_params_argv(&p, argc, argv);
	rc = ibc_harness_cli_apply(&cli, &p);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	rc = ibc_harness_cli_boot(&cli, 2, &boot);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);

	/* the transport waits the way the harness will (decided the same way) */
	p.wait_force = ibc_wait_decide(boot->local_size);
	ibc_xport_params_init(&xp);
	xp.backend = cli.xport;
	xp.wait = (enum ibc_wait)p.wait_force;
	xp.mcast_drop = mcast_drop;
	xp.drop_seed = 1;
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc != IBC_OK)
		goto out_close_boot;
	p.xport = x->caps.backend;
	p.device = x->caps.device;
	rc = ops_build(x, bops, ops, &n);
	if (rc == IBC_OK && n == 0) {
		if (boot->rank == 0)
			ibc_error("ibchar-barrier: no variant can run on transport %s",
				  x->caps.backend);
		rc = IBC_ERR_UNSUPPORTED;
	}
	if (rc == IBC_OK)
		rc = ibc_harness_run(boot, &p, ops, n);
	rc2 = ibc_xport_close(x);
	if (rc == IBC_OK)
		rc = rc2;
out_close_boot:
	rc2 = ibc_boot_close(boot);
	if (rc == IBC_OK)
		rc = rc2;
	return ibc_status_exit_code(rc);
}
