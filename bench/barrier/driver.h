/* The barrier suite's driver, shared by the two mains of bench/barrier:
 * main.c (ibchar-barrier: fork / launcher / tcp bootstrap) and mpi.c
 * (ibchar-barrier-<mpi>: MPI bootstrap, plus the host-MPI variants).
 * Header-only because each bench is one translation unit; everything is
 * static.  A main fills a struct bar_driver and calls bar_driver_main().
 *
 * Every algorithm of the barrier table (impl/barrier) that the transport
 * supports — RGM once per fan-in — plus the driver's own extra operations
 * are measured interleaved by the harness on the same processes.  Rows: one
 * per variant (RGM: per fan-in) in DIR/results.csv; extra holds paper_us
 * (the paper's own figure: 1000 back-to-back barriers, the mean time per
 * barrier averaged over ranks), RGM's reliability counters and
 * factor_vs_mpi / factor_vs_mpi_pe / factor_vs_mpi_ds when those ran. */
#ifndef IBC_BENCH_BARRIER_DRIVER_H
#define IBC_BENCH_BARRIER_DRIVER_H

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

#define BAR_MAX_OPS 64
#define BAR_PAPER_ITERS 1000

/* One measured barrier: an ibchar algorithm (alg, b) or a driver's own
 * (barrier_fn, e.g. MPI_Barrier). */
struct bar_op {
	const char *alg;
	int fanin;
	struct ibc_xport *x;
	struct ibc_barrier *b;
	int (*barrier_fn)(void *ctx);   /* set: a driver-provided barrier */
	void *ctx;
	struct ibc_barrier_check *chk;
	int validate;
};

/* What a main plugs in. */
struct bar_driver {
	const char *prog;
	/* Opens the bootstrap (after option parsing). */
	int (*boot_open)(int *argc, char ***argv, struct ibc_boot **out);
	/* Appends the driver's own variants (ops[*n..cap)), with x as their
	 * bar_op.x (what --validate across hosts checks with); may be NULL. */
	int (*extra_build)(struct ibc_xport *x, struct bar_op *bops,
			   struct ibc_harness_op *ops, size_t *n, size_t cap);
	/* Extra variant names accepted by --variants / printed by --list. */
	const char *const *extra_names;
	const char *mpi_version;  /* meta.csv; NULL for none */
};

static struct ibc_harness_cli bar_cli = IBC_HARNESS_CLI_INIT;
static int bar_list_only, bar_info_only;
static double bar_timeout_us = 500, bar_mcast_drop = 0;

static const struct ibc_opt bar_opts[] = {
	IBC_HARNESS_CLI_OPTS(bar_cli),
	{ .name = "timeout", .type = IBC_OPT_DOUBLE, .dest = &bar_timeout_us, .metavar = "US",
	  .help = "RGM: microseconds before a receiver NAKs a late release", .min = 1, .max = 1e9 },
	{ .name = "mcast-drop", .type = IBC_OPT_DOUBLE, .dest = &bar_mcast_drop, .metavar = "P",
	  .help = "shm: probability a multicast datagram is lost (reliability experiments)",
	  .min = 0, .max = 1 },
	{ .name = "list", .type = IBC_OPT_FLAG, .dest = &bar_list_only,
	  .help = "print the variants, one per line, and exit" },
	{ .name = "info", .type = IBC_OPT_FLAG, .dest = &bar_info_only,
	  .help = "describe the algorithms, their needs and tunables, and exit" },
	IBC_OPT_END
};

static int bar_do_barrier(struct bar_op *o)
{
	return o->barrier_fn ? o->barrier_fn(o->ctx) : ibc_barrier_run(o->b);
}

static int bar_op_setup(struct ibc_harness *h, const struct ibc_harness_point *pt, void *arg)
{
	struct bar_op *o = arg;
	struct ibc_barrier_params bp;
	int rc = IBC_OK;

	if (!o->barrier_fn) {
		ibc_barrier_params_init(&bp);
		bp.fanin = o->fanin;
		bp.timeout_us = bar_timeout_us;
		rc = ibc_barrier_create(o->x, o->alg, &bp, &o->b);
		if (rc)
			return rc;
		/* registration and exchange now, not inside the first warm-up barrier */
		rc = ibc_barrier_setup(o->b);
	}
	if (rc == IBC_OK && o->validate) {
		rc = ibc_barrier_check_open(ibc_harness_boot(h), o->x, IBC_BARRIER_CHECK_AUTO,
					    (size_t)(pt->iters + pt->warmup), &o->chk);
	}
	if (rc && o->b) {
		(void)ibc_barrier_destroy(o->b);
		o->b = NULL;
	}
	return rc;
}

static int bar_op_run(struct ibc_harness *h, void *arg)
{
	struct bar_op *o = arg;
	uint64_t t0;
	double us;
	int rc;

	if (!o->chk)
		return bar_do_barrier(o);
	ibc_barrier_check_enter(o->chk);
	t0 = ibc_timer_ticks();
	rc = bar_do_barrier(o);
	us = ibc_timer_ticks_to_us(ibc_timer_ticks() - t0);
	(void)ibc_barrier_check_exit(o->chk); /* reported by bar_op_validate */
	/* the sample is the barrier alone: across hosts the check reads every
	 * peer's counter after it, which is no part of the barrier's time */
	ibc_harness_sample_set(h, us);
	return rc;
}

static int bar_op_validate(struct ibc_harness *h, void *arg)
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

/* The paper's figure: BAR_PAPER_ITERS back-to-back barriers, each rank's
 * mean, averaged over ranks; then RGM's counters. */
static int bar_op_extra(struct ibc_harness *h, void *arg, char *buf, size_t cap)
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
	for (r = 0; r < BAR_PAPER_ITERS && rc == IBC_OK; r++)
		rc = bar_do_barrier(o);
	mine = (ibc_timer_now_us() - t0) / BAR_PAPER_ITERS;
	if (rc == IBC_OK)
		rc = ibc_boot_allgather(boot, &mine, all, sizeof(mine));
	for (r = 0; r < boot->size; r++)
		sum += all[r];
	free(all);
	if (rc == IBC_OK && o->b)
		rc = ibc_barrier_counters_sum(o->b, &c);
	if (rc)
		return rc;
	w = snprintf(buf, cap, "paper_us=%.3f", sum / boot->size);
	if (o->b && w > 0 && (size_t)w < cap &&
	    (ibc_barrier_alg_of(o->b)->needs & IBC_BARRIER_NEEDS_MULTICAST)) {
		buf[w++] = ';';
		buf[w] = '\0';
		(void)ibc_barrier_extra_format(o->b, &c, buf + w, cap - (size_t)w);
	}
	return IBC_OK;
}

static int bar_op_teardown(struct ibc_harness *h, void *arg)
{
	struct bar_op *o = arg;
	int rc = IBC_OK;

	(void)h;
	if (o->chk) {
		(void)ibc_barrier_check_close(o->chk, NULL);
		o->chk = NULL;
	}
	if (o->b) {
		rc = ibc_barrier_destroy(o->b);
		o->b = NULL;
	}
	return rc;
}

/* The harness operation for a bar_op (callbacks above). */
static struct ibc_harness_op bar_harness_op(const char *variant, const char *impl, long fanin,
					    struct bar_op *o)
{
	return (struct ibc_harness_op){
		.variant = variant, .impl = impl, .fanin = fanin,
		.timing = IBC_HARNESS_TIME_SLOWEST, .arg = o,
		.setup = bar_op_setup, .run = bar_op_run, .validate = bar_op_validate,
		.extra = bar_op_extra, .teardown = bar_op_teardown };
}

/* One operation per algorithm; RGM once per fan-in that fits N. */
static int bar_ops_build(struct ibc_xport *x, struct bar_op *bops, struct ibc_harness_op *ops,
			 size_t *n, size_t cap)
{
	static const int dflt_fanins[] = { 1, 3, 7, 15 };
	size_t a, f, nf;

	for (a = 0; a < ibc_barrier_alg_count(); a++) {
		const struct ibc_barrier_alg *alg = ibc_barrier_alg_get(a);
		int tree = (alg->needs & IBC_BARRIER_NEEDS_MULTICAST) != 0;
		char why[200];

		if (!ibc_harness_cli_wants(&bar_cli, alg->name))
			continue;
		if (ibc_barrier_alg_usable(alg, x, why, sizeof(why)) != IBC_OK) {
			if (x->rank == 0)
				ibc_warn("%s; skipped", why);
			continue;
		}
		nf = !tree ? 1 : bar_cli.fanin.n ? bar_cli.fanin.n
						  : sizeof(dflt_fanins) / sizeof(dflt_fanins[0]);
		for (f = 0; f < nf && *n < cap; f++) {
			struct ibc_barrier_params bp;
			int l = !tree ? 0 : bar_cli.fanin.n ? (int)bar_cli.fanin.v[f] : dflt_fanins[f];

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
						    .validate = bar_cli.validate };
			ops[*n] = bar_harness_op(alg->name, NULL, tree ? l : 0, &bops[*n]);
			(*n)++;
		}
	}
	return IBC_OK;
}

static int bar_name_known(const struct bar_driver *d, const char *name)
{
	size_t i;

	if (ibc_barrier_alg_find(name))
		return 1;
	for (i = 0; d->extra_names && d->extra_names[i]; i++)
		if (strcmp(d->extra_names[i], name) == 0)
			return 1;
	return 0;
}

/* Parse, select, harness_run; returns the process exit code. */
static int bar_driver_main(const struct bar_driver *d, int argc, char **argv)
{
	static struct bar_op bops[BAR_MAX_OPS];
	static struct ibc_harness_op ops[BAR_MAX_OPS];
	const struct ibc_opt_spec spec = {
		.prog = d->prog,
		.synopsis = "[OPTIONS]",
		.summary = "Barrier latency of RPE, RDS, RGM (per fan-in), PE and DS over the chosen "
			   "transport (and the host MPI's barriers in the -<mpi> builds), measured "
			   "interleaved on the same processes; rows go to DIR/results.csv.",
		.opts = bar_opts,
	};
	struct ibc_harness_params p;
	struct ibc_xport_params xp;
	struct ibc_xport *x = NULL;
	struct ibc_boot *boot;
	size_t a, n = 0;
	int rc, rc2;

	ibc_log_init(d->prog);
	rc = ibc_opt_parse_all(&spec, argc, argv);
	if (rc != IBC_OK)
		return rc == IBC_OPT_HELP_SHOWN ? 0 : ibc_status_exit_code(rc);
	if (bar_list_only) {
		for (a = 0; a < ibc_barrier_alg_count(); a++)
			printf("%s\n", ibc_barrier_alg_get(a)->name);
		for (a = 0; d->extra_names && d->extra_names[a]; a++)
			printf("%s\n", d->extra_names[a]);
		return 0;
	}
	if (bar_info_only) {
		ibc_barrier_list_print(stdout, 1);
		return 0;
	}
	for (a = 0; a < bar_cli.variants.n; a++)
		if (!bar_name_known(d, bar_cli.variants.v[a])) {
			fprintf(stderr, "%s: unknown variant '%s' (known: %s", d->prog,
				bar_cli.variants.v[a], ibc_barrier_alg_names());
			for (n = 0; d->extra_names && d->extra_names[n]; n++)
				fprintf(stderr, ", %s", d->extra_names[n]);
			fprintf(stderr, ")\n");
			return 2;
		}
	/* the fan-in rule (2^k - 1) before any rank starts; l < N is checked per N */
	for (a = 0; a < ibc_barrier_alg_count(); a++) {
		const struct ibc_barrier_alg *alg = ibc_barrier_alg_get(a);
		struct ibc_barrier_params bp;

		if (!(alg->needs & IBC_BARRIER_NEEDS_MULTICAST))
			continue;
		for (n = 0; n < bar_cli.fanin.n; n++) {
			ibc_barrier_params_init(&bp);
			bp.fanin = (int)bar_cli.fanin.v[n];
			bp.timeout_us = bar_timeout_us;
			if (ibc_barrier_params_check(alg, bp.fanin + 1, &bp, NULL) != IBC_OK)
				return 2;
		}
	}
	n = 0;

	ibc_harness_params_init(&p);
	p.suite = "barrier";
	p.kind = IBC_HARNESS_COLLECTIVE;
	p.factor_refs[0] = "mpi-pe";
	p.factor_refs[1] = "mpi-ds";
	p.factor_refs[2] = "mpi";
	p.nfactor_refs = 3;
	p.mpi_version = d->mpi_version;
	ibc_harness_params_argv(&p, argc, argv);
	rc = ibc_harness_cli_apply(&bar_cli, &p);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	rc = d->boot_open(&argc, &argv, &boot);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);

	/* the transport waits the way the harness will (decided the same way) */
	p.wait_force = ibc_wait_decide(boot->local_size);
	ibc_xport_params_init(&xp);
	xp.backend = bar_cli.xport;
	xp.wait = (enum ibc_wait)p.wait_force;
	xp.mcast_drop = bar_mcast_drop;
	xp.drop_seed = 1;
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc != IBC_OK)
		goto out_close_boot;
	p.xport = x->caps.backend;
	p.device = x->caps.device;
	rc = bar_ops_build(x, bops, ops, &n, BAR_MAX_OPS);
	if (rc == IBC_OK && d->extra_build)
		rc = d->extra_build(x, bops, ops, &n, BAR_MAX_OPS);
	if (rc == IBC_OK && n == 0) {
		if (boot->rank == 0)
			ibc_error("%s: no variant can run on transport %s", d->prog,
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

#endif
