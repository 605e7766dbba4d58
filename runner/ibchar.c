/* ibchar: the command-line front end.  Subcommands: list, run, model, plot,
 * accept, compare, report, claims.  Each has its own option table; the logic is in
 * impl/tools (runner.c, and a file per command). */
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "tools/accept.h"
#include "tools/claims.h"
#include "tools/compare.h"
#include "harness/harness.h"
#include "tools/plot.h"
#include "tools/report.h"
#include "tools/runner.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static const struct ibc_opt main_opts[] = { IBC_OPT_END };
static const struct ibc_opt_spec main_spec = {
	.prog = "ibchar",
	.synopsis = "COMMAND [OPTIONS] [ARGS]",
	.summary = "Benchmark and characterisation suite for RDMA clusters.",
	.opts = main_opts,
	.epilog = "Commands:\n"
		  "  list                 suites, variants, transports and MPIs found here\n"
		  "  run [SUITE...]       run suites (default: every suite that can run here)\n"
		  "  model DIR            the LoP closed loop: DIR's fitted logp model predicts its\n"
		  "                       barrier and all-to-all rows, and extrapolates them\n"
		  "  plot DIR             draw the figures of the suites found in DIR/results.csv\n"
		  "  accept --spec F [DIR] acceptance thresholds: run the spec's suites and check\n"
		  "                       the rows they wrote, or DIR's (TAP; --junit FILE)\n"
		  "  compare BASE NEW     noise-aware regression verdicts between two results\n"
		  "                       directories (TAP; --junit FILE)\n"
		  "  report DIR           one self-contained HTML page of DIR: provenance,\n"
		  "                       figures with their papers' captions, tables, verdicts\n"
		  "  claims DIR           the papers' claims (results/claims/) against DIR: each\n"
		  "                       reproduced, not reproduced or not measurable here (TAP)\n"
		  "Run 'ibchar COMMAND --help' for a command's options.",
	.stop_at_operand = 1,
};

static const struct ibc_opt list_opts[] = { IBC_OPT_END };
static const struct ibc_opt_spec list_spec = {
	.prog = "ibchar list",
	.synopsis = "",
	.summary = "Lists the suites and their variants, the transports available here "
		   "(shm always; verbs when a device has an active port) and the MPIs found.",
	.opts = list_opts,
};

static struct ibc_harness_runner_opts run_o = { .iters = 0, .warmup = -1, .budget = -1, .timeout = -1,
						 .sync = IBC_HARNESS_SYNC_AUTO };
static const char *run_mpi_default;

static const struct ibc_opt run_opts[] = {
	{ .name = "out", .short_name = 'o', .type = IBC_OPT_STRING, .dest = &run_o.out, .metavar = "DIR",
	  .help = "results directory (default results/<UTC timestamp>)" },
	{ .name = "ranks", .short_name = 'n', .type = IBC_OPT_STRING, .dest = &run_o.ranks, .metavar = "LIST",
	  .help = "rank counts to sweep, e.g. 2,4,8..16 (default: each suite's)" },
	{ .name = "variants", .short_name = 'V', .type = IBC_OPT_STRING, .dest = &run_o.variants,
	  .metavar = "LIST", .help = "variants to run (default: all that can run here)" },
	{ .name = "fanin", .short_name = 'f', .type = IBC_OPT_STRING, .dest = &run_o.fanin, .metavar = "LIST",
	  .help = "fan-in values for tree variants" },
	{ .name = "sizes", .short_name = 's', .type = IBC_OPT_STRING, .dest = &run_o.sizes, .metavar = "LIST",
	  .help = "message sizes, e.g. 1,8,1K..4M" },
	{ .name = "xport", .short_name = 'x', .type = IBC_OPT_STRING, .dest = &run_o.xport, .metavar = "NAME",
	  .help = "transport: shm, verbs or auto" },
	{ .name = "launcher", .short_name = 'l', .type = IBC_OPT_STRING, .dest = &run_o.launcher,
	  .metavar = "NAME", .help = "fork (local), mpirun, tree (ibchar-launch) or srun (Slurm: PMI-2, or "
		  "PMIx for Open MPI's build) (default: each suite's)" },
	{ .name = "mpi", .type = IBC_OPT_STRING, .dest = &run_mpi_default, .metavar = "NAME",
	  .help = "host MPI: openmpi, mpich or none; runs the suites' -<mpi> builds (under "
		  "mpirun unless --launcher tree), so the MPI's own variants run beside ibchar's" },
	{ .name = "iters", .short_name = 'i', .type = IBC_OPT_INT, .dest = &run_o.iters, .metavar = "N",
	  .help = "timed iterations per point (0: OSU default)", .min = 0, .max = 1e9 },
	{ .name = "warmup", .short_name = 'w', .type = IBC_OPT_INT, .dest = &run_o.warmup, .metavar = "N",
	  .help = "warm-up iterations (-1: OSU default)", .min = -1, .max = 1e9 },
	{ .name = "budget", .short_name = 'b', .type = IBC_OPT_DOUBLE, .dest = &run_o.budget, .metavar = "S",
	  .help = "time budget per point in seconds (-1: the bench's default)", .min = -1, .max = 1e6 },
	{ .name = "timeout", .type = IBC_OPT_DOUBLE, .dest = &run_o.timeout, .metavar = "S",
	  .help = "end a launch that writes no row for S seconds, rows so far kept (-1: 3 x the budget "
		  "+ 60 s, 600 s without one; 0: never)", .min = -1, .max = 1e7 },
	{ .name = "hosts", .short_name = 'H', .type = IBC_OPT_STRING, .dest = &run_o.hosts, .metavar = "LIST",
	  .help = "launch suite: host counts to sweep (test hosts ibc-h1.., scripts/testhosts up N)" },
	{ .name = "ppn", .type = IBC_OPT_STRING, .dest = &run_o.ppn, .metavar = "LIST",
	  .help = "launch suite: processes per host to sweep" },
	{ .name = "validate", .type = IBC_OPT_FLAG, .dest = &run_o.validate,
	  .help = "check correctness after every point" },
	{ .name = "sync", .type = IBC_OPT_CHOICE, .dest = &run_o.sync, .choices = ibc_harness_sync_names,
	  .metavar = "MODE", .help = "how iterations start: window, barrier or auto (see README)" },
	{ .name = "repeat", .short_name = 'r', .type = IBC_OPT_INT, .dest = &run_o.repeat, .metavar = "R",
	  .help = "run the whole sweep R times into DIR, each pass with its own run_id (a baseline "
		  "for ibchar compare needs 3 or more)", .min = 1, .max = 1000 },
	{ .name = "dry-run", .type = IBC_OPT_FLAG, .dest = &run_o.dry_run,
	  .help = "check the options, suites and variants (exit 2 when one is wrong); make no "
		  "directory, run nothing" },
	IBC_OPT_END
};
static const struct ibc_opt_spec run_spec = {
	.prog = "ibchar run",
	.synopsis = "[OPTIONS] [SUITE...]",
	.summary = "Runs suites through their bench binaries (found next to ibchar), sweeping "
		   "the rank list; every launch appends to DIR/results.csv.  Progress goes to "
		   "stderr, a summary table to stdout.",
	.opts = run_opts,
};

static const struct ibc_opt plot_opts[] = { IBC_OPT_END };
static const struct ibc_opt_spec plot_spec = {
	.prog = "ibchar plot",
	.synopsis = "DIR",
	.summary = "Runs plots/<suite>.py and plots/<suite>_*.py for every suite in DIR/results.csv; "
		   "each writes PNG and PDF into DIR and its paths are printed on stdout.  plots/ "
		   "is found at <bindir>/../../plots or $IBC_PLOTS; python3 is $IBC_PYTHON or the "
		   "first python3 that imports matplotlib.  Exit 2 for a bad DIR, 1 if a script fails.",
	.opts = plot_opts,
};

static const char *model_fits;
static long model_pus;
static int model_any_place;
static const char *const model_rtt_names[] = { "b2b", "p50", NULL };
static const char *const model_measured_names[] = { "median", "mean", NULL };
static int model_rtt;      /* index in model_rtt_names: 0 b2b */
static int model_measured; /* index in model_measured_names: 1 mean */
static const struct ibc_opt model_opts[] = {
	{ .name = "fits", .type = IBC_OPT_STRING, .dest = &model_fits, .metavar = "DIR2",
	  .help = "take fits.csv and logp-derived.csv from DIR2 (a logp run) instead of DIR" },
	{ .name = "pus", .type = IBC_OPT_INT, .dest = &model_pus, .metavar = "N",
	  .help = "model a machine of N PUs per node: rows with more ranks per node are not "
		  "modelled, the others are, also where they were measured oversubscribed (then "
		  "with no error); 0: each row's oversub column (the PUs where it was measured)",
	  .min = 0, .max = 1e6 },
	{ .name = "any-placement", .type = IBC_OPT_FLAG, .dest = &model_any_place,
	  .help = "model every row whatever the placement probe says (default: a row whose "
		  "probe, or a run whose probe at its end, is more than 2x from the kernels' at "
		  "its N is not modelled: another placement of the cores; oversubscribed runs "
		  "are left out)" },
	{ .name = "rtt", .type = IBC_OPT_CHOICE, .dest = &model_rtt, .choices = model_rtt_names,
	  .metavar = "b2b|p50",
	  .help = "what a round trip kernel costs: b2b, its back-to-back loop's median (the "
		  "rows' b2b_p50_us: rtt-write-1n, its post list, rtt-mcast, xchg-write), like "
		  "the rows it predicts, where the run measured one, else p50; p50: its timed iterations' "
		  "median, one call at a time" },
	{ .name = "measured", .type = IBC_OPT_CHOICE, .dest = &model_measured,
	  .choices = model_measured_names, .metavar = "median|mean",
	  .help = "what a row is measured by: its back-to-back loop's median (b2b_p50_us), a "
		  "median as the kernels' figures are, or its mean (paper_us: the papers' "
		  "figure, which one preemption in the loop can double); else the other, else "
		  "p50_us.  stdout also counts the rows within +-20% by the other" },
	IBC_OPT_END
};
static const struct ibc_opt_spec model_spec = {
	.prog = "ibchar model",
	.synopsis = "[--fits DIR2] [--pus N] [--any-placement] [--rtt b2b|p50] [--measured median|mean] DIR",
	.summary = "The LoP closed loop (Hoefler & Rehm): the fitted model of a logp run "
		   "(DIR/fits.csv, from `ibchar run logp`) predicts every barrier and all-to-all "
		   "row of DIR/results.csv from the algorithms' rounds, by LoP (as printed, and "
		   "LoP-RTT: its kernels without the overhead algebra) and by LogGP, and "
		   "extrapolates them to 1 K .. 64 K processes; RGM's fan-in is chosen by the model "
		   "and checked against the measured sweep.  A prediction <= 0, or without a usable "
		   "fit (fits.csv: usable), is printed as \"no prediction\" with why; rows with more "
		   "ranks than PUs as \"not modelled (oversubscribed)\", and rows measured at another "
		   "placement of the cores than the kernels (their placement probes more than 2x "
		   "apart) as \"not modelled (placement: ...)\".  A DIR of several passes (run "
		   "--repeat) is modelled pass by pass, each by its own fits, into DIR/passes/, and "
		   "lop-model.csv and lop-extrapolation.csv give each row's medians over the "
		   "passes.  Writes DIR/lop-model.csv, lop-extrapolation.csv and lop-fanin.csv and "
		   "prints the tables (docs/model.md).  Exit 2 for "
		   "bad arguments, 1 when there is no fit or nothing to predict.",
	.opts = model_opts,
};

static const char *acc_spec, *acc_junit, *acc_out, *acc_run_ids;
static int acc_dry;
static const struct ibc_opt accept_opts[] = {
	{ .name = "spec", .type = IBC_OPT_STRING, .dest = &acc_spec, .metavar = "FILE",
	  .help = "the acceptance spec (required; see README: Acceptance)" },
	{ .name = "junit", .type = IBC_OPT_STRING, .dest = &acc_junit, .metavar = "FILE",
	  .help = "also write the verdicts as JUnit XML (exit 2, before anything runs, when it "
		  "cannot be written)" },
	{ .name = "out", .short_name = 'o', .type = IBC_OPT_STRING, .dest = &acc_out, .metavar = "DIR",
	  .help = "where the spec's runs write (default results/accept-<UTC timestamp>); rows "
		  "already there are not checked" },
	{ .name = "run-id", .type = IBC_OPT_STRING, .dest = &acc_run_ids, .metavar = "ID,...",
	  .help = "with DIR: check only these runs of it (default: every run in DIR)" },
	{ .name = "dry-run", .type = IBC_OPT_FLAG, .dest = &acc_dry,
	  .help = "parse the spec, check every run line's suites, variants and options "
		  "(ibchar run --dry-run) and list the lines; run and check nothing" },
	IBC_OPT_END
};
static const struct ibc_opt_spec accept_spec = {
	.prog = "ibchar accept",
	.synopsis = "--spec FILE [OPTIONS] [DIR]",
	.summary = "Acceptance testing: without DIR, runs the spec's `run` lines (ibchar run ARGS) "
		   "into one results directory and checks the rows those runs wrote, and only "
		   "them; with DIR, checks DIR's rows (every run in it, or --run-id's).  Each "
		   "`check` line is checked against every row it selects: absolute, or relative to "
		   "the placement probe, to another impl or variant of the same point in the same "
		   "run, or to another suite's row at a size (same N and transport unless the spec "
		   "names them); the TAP line names the reference row.  TAP on stdout; a failed run "
		   "line, and a check that matches no row, are not ok.  Exit 0 when every run and "
		   "check holds, 1 otherwise, 2 for a bad spec (its line is printed), a bad DIR or "
		   "damaged input (a time that is not a number >= 0).",
	.opts = accept_opts,
};

static int cmd_accept(int argc, char **argv, const char *bindir)
{
	struct ibc_accept_opts ao = { .bindir = bindir };
	char dir[256];
	int first, rc = ibc_opt_parse(&accept_spec, argc, argv, &first);

	if (rc == IBC_OPT_HELP_SHOWN)
		return IBC_OK;
	if (rc != IBC_OK)
		return rc;
	if (acc_spec == NULL || argc - first > 1) {
		fprintf(stderr, "ibchar accept: --spec FILE and at most one results directory\n"
			"Try 'ibchar accept --help'.\n");
		return IBC_ERR_INVAL;
	}
	if (argc - first == 1 && acc_out != NULL) {
		fprintf(stderr, "ibchar accept: --out is where the spec's runs go; with DIR nothing runs\n"
			"Try 'ibchar accept --help'.\n");
		return IBC_ERR_INVAL;
	}
	if (argc - first == 0 && acc_run_ids != NULL) {
		fprintf(stderr, "ibchar accept: --run-id picks runs of a results directory given (DIR)\n"
			"Try 'ibchar accept --help'.\n");
		return IBC_ERR_INVAL;
	}
	if (argc - first == 1) {
		ao.dir = argv[first];
	} else {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(dir, sizeof(dir), "results/accept-%Y%m%dT%H%M%SZ", &tm);
		ao.dir = acc_out != NULL ? acc_out : dir;
		ao.run = 1;
	}
	ao.spec = acc_spec;
	ao.junit = acc_junit;
	ao.dry_run = acc_dry;
	ao.run_ids = acc_run_ids;
	return ibc_harness_accept(&ao);
}

static const char *cmp_junit;
static double cmp_min_effect;
static int cmp_strict;
static double cmp_max_threshold = 100 * IBC_COMPARE_MAX_THRESHOLD;
static const struct ibc_opt compare_opts[] = {
	{ .name = "junit", .type = IBC_OPT_STRING, .dest = &cmp_junit, .metavar = "FILE",
	  .help = "also write the verdicts as JUnit XML (exit 2 when it cannot be written)" },
	{ .name = "min-effect", .type = IBC_OPT_DOUBLE, .dest = &cmp_min_effect, .metavar = "PCT",
	  .help = "never call a change smaller than PCT percent slower or faster, whatever the "
		  "noise (0: the noise alone decides)", .min = 0, .max = 1000 },
	{ .name = "max-threshold", .type = IBC_OPT_DOUBLE, .dest = &cmp_max_threshold, .metavar = "PCT",
	  .help = "a row or group whose threshold is wider than +-PCT percent is inconclusive "
		  "('too noisy to tell'), not unchanged: it could not have told a change that large "
		  "(default 100: a 2x slowdown; 0: no limit); slower and faster verdicts stand",
	  .min = 0, .max = 100000 },
	{ .name = "strict", .type = IBC_OPT_FLAG, .dest = &cmp_strict,
	  .help = "judge oversubscribed rows and the placement probes too, and every row when the "
		  "probe says the machine moved or meta.csv names another (default: inconclusive; they measure the scheduler, "
		  "where the ranks sit, the machine)" },
	IBC_OPT_END
};
_Static_assert(IBC_COMPARE_K == 4.0, "compare's --help says 4x");
static const struct ibc_opt_spec compare_spec = {
	.prog = "ibchar compare",
	.synopsis = "[OPTIONS] BASE NEW",
	.summary = "Compares every measured row of BASE (a results directory; a baseline of 3 or "
		   "more runs: ibchar run --repeat 3) with the same row of NEW (one or more runs).  "
		   "Each run gives a row one figure, the median of its kept samples.  A row is "
		   "slower (or faster) when NEW's mean log figure is beyond 4x the row's run-to-run "
		   "scatter in BASE (at least its suite's median scatter and 2%) times "
		   "sqrt(1/R_new + 1/R_base); inconclusive, with the reason, when BASE holds fewer "
		   "than 3 runs of it, a run kept fewer than 5 samples or NEW fewer than half of BASE's, "
		   "it was oversubscribed, the run's placement probe moved, it was primed on one side "
		   "only, or it is a placement probe, or its threshold is wider than --max-threshold "
		   "(too noisy to tell).  Rows are also judged together, per suite and per variant "
		   "(6 or more rows): the median of their ratios, with its sign-test interval over "
		   "rows, against BASE's run-to-run scatter of that median.  When the placement "
		   "probe's rows moved beyond their own scatter, the machine changed speed and every "
		   "verdict is inconclusive; so it is when NEW ran on another machine (meta.csv's "
		   "cpu_model, or a guest's vm_host_cpu, not BASE's).  TAP on stdout (not ok: "
		   "a slower row or group, a row missing in NEW).  Exit 0 when nothing is slower or "
		   "missing, 1 otherwise, 2 for bad arguments or damaged input (one line says what).",
	.opts = compare_opts,
};

static int cmd_compare(int argc, char **argv)
{
	struct ibc_compare_opts co = { .min_effect = 0 };
	int first, rc = ibc_opt_parse(&compare_spec, argc, argv, &first);

	if (rc == IBC_OPT_HELP_SHOWN)
		return IBC_OK;
	if (rc != IBC_OK)
		return rc;
	if (argc - first != 2) {
		fprintf(stderr, "ibchar compare: two results directories are needed (BASE NEW)\n"
			"Try 'ibchar compare --help'.\n");
		return IBC_ERR_INVAL;
	}
	co.base = argv[first];
	co.new_dir = argv[first + 1];
	co.junit = cmp_junit;
	co.min_effect = cmp_min_effect / 100;
	co.strict = cmp_strict;
	co.max_threshold = cmp_max_threshold / 100;
	return ibc_harness_compare(&co);
}

static int cmd_model(int argc, char **argv)
{
	int first, rc = ibc_opt_parse(&model_spec, argc, argv, &first);

	if (rc == IBC_OPT_HELP_SHOWN)
		return IBC_OK;
	if (rc != IBC_OK)
		return rc;
	if (argc - first != 1) {
		fprintf(stderr, "ibchar model: one results directory is needed\nTry 'ibchar model --help'.\n");
		return IBC_ERR_INVAL;
	}
	return ibc_harness_runner_model(argv[first], model_fits, (int)model_pus, model_any_place,
					model_rtt == 0, model_measured == 1);
}

static int cmd_plot(int argc, char **argv, const char *bindir)
{
	struct ibc_harness_plot_opts o = { .bindir = bindir };
	int first, rc = ibc_opt_parse(&plot_spec, argc, argv, &first);

	if (rc == IBC_OPT_HELP_SHOWN)
		return IBC_OK;
	if (rc != IBC_OK)
		return rc;
	if (argc - first != 1) {
		fprintf(stderr, "ibchar plot: one results directory is needed\nTry 'ibchar plot --help'.\n");
		return IBC_ERR_INVAL;
	}
	o.dir = argv[first];
	return ibc_harness_plot_run(&o);
}

static const char *rep_out, *rep_claims;
static struct ibc_opt_strlist rep_verdicts;
static int rep_plot = -1, rep_no_plot;
static const struct ibc_opt report_opts[] = {
	{ .name = "out", .short_name = 'o', .type = IBC_OPT_STRING, .dest = &rep_out, .metavar = "FILE",
	  .help = "where the page goes (default DIR/report.html)" },
	{ .name = "verdicts", .type = IBC_OPT_APPEND, .dest = &rep_verdicts, .metavar = "FILE",
	  .help = "the TAP output of ibchar accept or compare to show (repeatable; DIR's *.tap "
		  "files are shown too)" },
	{ .name = "plot", .type = IBC_OPT_FLAG, .dest = &rep_plot,
	  .help = "draw the figures first (default: only when DIR has no PNG)" },
	{ .name = "no-plot", .type = IBC_OPT_FLAG, .dest = &rep_no_plot,
	  .help = "never draw: show the PNGs DIR has" },
	{ .name = "claims", .type = IBC_OPT_STRING, .dest = &rep_claims, .metavar = "PATH",
	  .help = "the claims for the scorecard, as ibchar claims --claims (default $IBC_CLAIMS, else "
		  "results/claims beside the build)" },
	IBC_OPT_END
};
static const struct ibc_opt_spec report_spec = {
	.prog = "ibchar report",
	.synopsis = "[OPTIONS] DIR",
	.summary = "Writes one self-contained HTML file (no network: figures inlined as PNG "
		   "data, no script) for the results directory DIR: the provenance from meta.csv "
		   "(host, kernel, device, MPI, git revision, placement probe, sync method and its "
		   "error), the verdicts of accept and compare when given, and per suite its "
		   "figures (a reproduced paper figure captioned with the paper's figure and "
		   "testbed against this run's) and its summary tables (medians, factors against "
		   "the host MPI, a model's predicted against measured; cells of oversubscribed points "
		   "and of rows with fewer than 30 kept samples marked), and the scorecard of the "
		   "papers' claims (as ibchar claims).  The figures are drawn by "
		   "ibchar plot when DIR has none.  Prints the file's path.  Exit 2 for a DIR "
		   "without results.csv or an unreadable verdict file.",
	.opts = report_opts,
};

static int cmd_report(int argc, char **argv, const char *bindir)
{
	struct ibc_report_opts ro = { .bindir = bindir };
	int first, rc = ibc_opt_parse(&report_spec, argc, argv, &first);
	size_t i;

	if (rc == IBC_OPT_HELP_SHOWN)
		return IBC_OK;
	if (rc != IBC_OK)
		return rc;
	if (argc - first != 1) {
		fprintf(stderr, "ibchar report: one results directory is needed\nTry 'ibchar report --help'.\n");
		return IBC_ERR_INVAL;
	}
	if (rep_plot == 1 && rep_no_plot) {
		fprintf(stderr, "ibchar report: --plot and --no-plot together\n");
		return IBC_ERR_INVAL;
	}
	if (rep_verdicts.n > IBC_REPORT_MAX_VERDICTS) {
		fprintf(stderr, "ibchar report: at most %d --verdicts files\n", IBC_REPORT_MAX_VERDICTS);
		return IBC_ERR_INVAL;
	}
	ro.dir = argv[first];
	ro.out = rep_out;
	ro.claims = rep_claims;
	for (i = 0; i < rep_verdicts.n; i++)
		ro.verdicts[i] = rep_verdicts.v[i];
	ro.nverdicts = rep_verdicts.n;
	ro.plot = rep_no_plot ? 0 : rep_plot;
	return ibc_harness_report(&ro);
}

static const char *claims_path;
static const struct ibc_opt claims_opts[] = {
	{ .name = "claims", .type = IBC_OPT_STRING, .dest = &claims_path, .metavar = "PATH",
	  .help = "a claims CSV or a directory of them (default $IBC_CLAIMS, else results/claims "
		  "beside the build)" },
	IBC_OPT_END
};
static const struct ibc_opt_spec claims_spec = {
	.prog = "ibchar claims",
	.synopsis = "[--claims PATH] DIR",
	.summary = "The reproduction scorecard: every claim of the papers written in "
		   "results/claims/*.csv (paper, section, the paper's figures, a rule over the rows) "
		   "judged against the results directory DIR.  A claim is reproduced, not "
		   "reproduced, or not measurable here (no rows for it, every row oversubscribed or "
		   "with fewer than 30 kept samples, too few points for a trend, hardware it needs), "
		   "with this run's figure beside the paper's and whether the method is the paper's.  "
		   "TAP on stdout: reproduced is ok, not reproduced is not ok, not measurable is "
		   "ok # SKIP with the reason.  Exit 0 when no claim is not reproduced, 1 when one "
		   "is, 2 for damaged or missing input (DIR, its results.csv or meta.csv, a claims "
		   "file).",
	.opts = claims_opts,
};

static int cmd_claims(int argc, char **argv, const char *bindir)
{
	struct ibc_claims_opts co = { .bindir = bindir };
	int first, rc = ibc_opt_parse(&claims_spec, argc, argv, &first);

	if (rc == IBC_OPT_HELP_SHOWN)
		return IBC_OK;
	if (rc != IBC_OK)
		return rc;
	if (argc - first != 1) {
		fprintf(stderr, "ibchar claims: one results directory is needed\nTry 'ibchar claims --help'.\n");
		return IBC_ERR_INVAL;
	}
	co.dir = argv[first];
	co.claims = claims_path;
	rc = ibc_harness_claims(&co);
	return rc == IBC_ERR_NOMEM || rc == IBC_ERR_VALIDATE ? rc : rc == IBC_OK ? IBC_OK : IBC_ERR_INVAL;
}

static int cmd_list(int argc, char **argv, const char *bindir)
{
	int first, rc = ibc_opt_parse(&list_spec, argc, argv, &first);

	if (rc == IBC_OPT_HELP_SHOWN)
		return IBC_OK;
	if (rc != IBC_OK)
		return rc;
	if (first < argc) {
		fprintf(stderr, "ibchar list: unexpected argument '%s'\nTry 'ibchar list --help'.\n", argv[first]);
		return IBC_ERR_INVAL;
	}
	return ibc_harness_runner_list(bindir);
}

static int cmd_run(int argc, char **argv, const char *bindir)
{
	int first, rc = ibc_opt_parse(&run_spec, argc, argv, &first);

	if (rc == IBC_OPT_HELP_SHOWN)
		return IBC_OK;
	if (rc != IBC_OK)
		return rc;
	run_o.bindir = bindir;
	run_o.mpi = run_mpi_default;
	run_o.suites = argv + first;
	run_o.nsuites = (size_t)(argc - first);
	return ibc_harness_runner_run(&run_o);
}

int main(int argc, char **argv)
{
	char bindir[4096];
	int first, rc;

	ibc_log_init("ibchar");
	rc = ibc_opt_parse(&main_spec, argc, argv, &first);
	if (rc == IBC_OPT_HELP_SHOWN)
		return 0;
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	if (first >= argc) {
		fprintf(stderr, "ibchar: a command is needed (list, run, model, plot, accept, compare, report, claims)\nTry 'ibchar --help'.\n");
		return 2;
	}
	rc = ibc_harness_runner_bindir(bindir, sizeof(bindir));
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	if (strcmp(argv[first], "list") == 0)
		rc = cmd_list(argc - first, argv + first, bindir);
	else if (strcmp(argv[first], "run") == 0)
		rc = cmd_run(argc - first, argv + first, bindir);
	else if (strcmp(argv[first], "model") == 0)
		rc = cmd_model(argc - first, argv + first);
	else if (strcmp(argv[first], "plot") == 0)
		rc = cmd_plot(argc - first, argv + first, bindir);
	else if (strcmp(argv[first], "accept") == 0)
		rc = cmd_accept(argc - first, argv + first, bindir);
	else if (strcmp(argv[first], "compare") == 0)
		rc = cmd_compare(argc - first, argv + first);
	else if (strcmp(argv[first], "report") == 0)
		rc = cmd_report(argc - first, argv + first, bindir);
	else if (strcmp(argv[first], "claims") == 0)
		rc = cmd_claims(argc - first, argv + first, bindir);
	else {
		fprintf(stderr, "ibchar: unknown command '%s' (list, run, model, plot, accept, compare, report, claims)\nTry 'ibchar --help'.\n", argv[first]);
		return 2;
	}
	return ibc_status_exit_code(rc);
}
