/* ibchar-launch-bench: the launch suite (ScELA, thesis ch. 2-3): jobs started
 * by ibchar-launch (tree, flat), mpirun.mpich, mpirun.openmpi and srun, timed
 * from outside, and the node-level caches; impl/launch/lsuite.c. */
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "tools/runner.h"
#include "launch/lsuite.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static struct ibc_lsuite_opts o = { .suite = "launch", .trials = 5, .stages = 8, .timeout_s = 120 };
static const char *out = "results/launch", *run_id, *variants;
static long iters;
static int list_flag;

static const struct ibc_opt opts[] = {
	{ .name = "out", .short_name = 'o', .type = IBC_OPT_STRING, .dest = &out, .metavar = "DIR", .help = "results directory" },
	{ .name = "run-id", .short_name = 0, .type = IBC_OPT_STRING, .dest = &run_id, .metavar = "ID", .help = "run id of the rows (default: UTC time)" },
	{ .name = "hosts", .short_name = 'H', .type = IBC_OPT_INT_LIST, .dest = &o.hosts, .metavar = "LIST",
	  .help = "host counts to sweep, e.g. 1,2,4,8 (default 1: this host); above 1 the test hosts "
	  "ibc-h1.. (scripts/testhosts up N) unless --hostnames" },
	{ .name = "ppn", .short_name = 'c', .type = IBC_OPT_INT_LIST, .dest = &o.ppn, .metavar = "LIST", .help = "processes per host to sweep (default 1,2)" },
	{ .name = "mult", .short_name = 'm', .type = IBC_OPT_INT_LIST, .dest = &o.mult, .metavar = "LIST",
	  .help = "node agents per host, the host multiplier for scale beyond the hosts (tree and flat "
	  "only; default 1)" },
	{ .name = "launchers", .short_name = 'L', .type = IBC_OPT_STRING_LIST, .dest = &o.launchers, .metavar = "LIST",
	  .help = "tree, tree-kK (degree K), tree-cN (MAX_CONN N), flat, mpich, openmpi, srun, srun-pmix "
	  "(default: tree,tree-k2,flat,mpich,openmpi,srun,srun-pmix, those that run here)" },
	{ .name = "variants", .short_name = 'V', .type = IBC_OPT_STRING, .dest = &variants, .metavar = "LIST", .help = "the same as --launchers" },
	{ .name = "programs", .short_name = 'P', .type = IBC_OPT_STRING_LIST, .dest = &o.programs, .metavar = "LIST",
	  .help = "true, pmi, hello (default all; hello = MPI_Init + MPI_Finalize of the launcher's MPI)" },
	{ .name = "caches", .short_name = 0, .type = IBC_OPT_STRING_LIST, .dest = &o.caches, .metavar = "LIST",
	  .help = "cache policies for the exchanges of ch. 3: hcs, hcma, hcmab, hcmab-lru, or none "
	  "(default all four)" },
	{ .name = "stages", .short_name = 0, .type = IBC_OPT_INT, .dest = &o.stages, .metavar = "S", .help = "exchange stages per cache job; the memory "
	  "sweep runs 1, 2, 4 .. S", .min = 1, .max = 64 },
	{ .name = "hostnames", .short_name = 0, .type = IBC_OPT_STRING, .dest = &o.hostnames, .metavar = "H1,H2,..", .help = "real hosts instead of the test hosts" },
	{ .name = "rsh", .short_name = 0, .type = IBC_OPT_STRING, .dest = &o.rsh, .metavar = "ssh|local|TEMPLATE",
	  .help = "remote shell (default: 'ip netns exec {host}' for test hosts, ssh for --hostnames)" },
	{ .name = "rsh-delay", .short_name = 0, .type = IBC_OPT_DOUBLE, .dest = &o.rsh_delay_ms, .metavar = "MS",
	  .help = "every remote shell call first sleeps MS ms (a connection's latency, as ssh across "
		  "a network has; every launcher then goes through the same wrapper)", .min = 0, .max = 60000 },
	{ .name = "trials", .short_name = 't', .type = IBC_OPT_INT, .dest = &o.trials, .metavar = "N", .help = "jobs per launcher, program and point, interleaved",
	  .min = 1, .max = 10000 },
	{ .name = "iters", .short_name = 'i', .type = IBC_OPT_INT, .dest = &iters, .metavar = "N", .help = "the same as --trials (what `ibchar run --iters` passes)",
	  .min = 0, .max = 10000 },
	{ .name = "timeout", .short_name = 0, .type = IBC_OPT_INT, .dest = &o.timeout_s, .metavar = "S", .help = "a job running longer is killed and counted as "
	  "failed", .min = 1, .max = 86400 },
	{ .name = "quiet", .short_name = 'q', .type = IBC_OPT_FLAG, .dest = &o.quiet, .metavar = NULL, .help = "no progress lines" },
	{ .name = "list", .short_name = 0, .type = IBC_OPT_FLAG, .dest = &list_flag, .metavar = NULL, .help = "print the launchers and exit" },
	IBC_OPT_END
};

static const struct ibc_opt_spec spec = {
	.prog = "ibchar-launch-bench",
	.synopsis = "[OPTIONS]",
	.summary = "The launch suite: spawn, init and total time of jobs started by ibchar-launch "
		   "(tree, flat), mpirun.mpich, mpirun.openmpi and srun, for hosts x processes per "
		   "host, interleaved trials; the node-level caches' exchanges (1:2 ring, 1:p "
		   "all-gather) per policy with messages and memory; growth fits; Table 3.1.  Rows in "
		   "DIR/results.csv, with launch-cache.csv, launch-growth.csv, launch-memory.csv.",
	.opts = opts,
	.epilog = "Exit status: 0; 1 when a job failed (the other rows are written); 2 for bad input.",
};

int main(int argc, char **argv)
{
	char bindir[4096], id[64];
	time_t now = time(NULL);
	struct tm tm;
	int rc, i;

	ibc_log_init("ibchar-launch-bench");
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--list") == 0) {
			printf("tree\ntree-k2\nflat\nmpich\nopenmpi\nsrun\nsrun-pmix\n");
			return 0;
		}
	rc = ibc_opt_parse_all(&spec, argc, argv);
	if (rc != IBC_OK)
		return rc == IBC_OPT_HELP_SHOWN ? 0 : ibc_status_exit_code(rc);
	if (variants != NULL && ibc_opt_strlist_add(&o.launchers, variants, 1) != IBC_OK)
		return 2;
	if (iters > 0)
		o.trials = iters;
	if (o.hosts.n == 0)
		ibc_opt_list_parse("1", 0, &o.hosts);
	if (o.ppn.n == 0)
		ibc_opt_list_parse("1,2", 0, &o.ppn);
	if (o.mult.n == 0)
		ibc_opt_list_parse("1", 0, &o.mult);
	if (run_id == NULL) {
		gmtime_r(&now, &tm);
		strftime(id, sizeof(id), "%Y%m%dT%H%M%SZ", &tm);
		run_id = id;
	}
	if (ibc_harness_runner_bindir(bindir, sizeof(bindir)) != IBC_OK)
		return 1;
	o.out = out;
	o.run_id = run_id;
	o.bindir = bindir;
	rc = ibc_lsuite_run(&o);
	return ibc_status_exit_code(rc);
}
