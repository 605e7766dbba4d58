/* The runner's suite table: a suite is added here, with no change to the
 * runner (the summary, the sweeps and the listing read these fields).  variants is what `ibchar list` shows; list_args, when set, makes
 * the bench binary print its variants itself (one per line). */
#include "tools/suites.h"

#include "alltoall/alltoall.h"
#include "barrier/barrier.h"

#include <string.h>

static int alltoall_rounds(const char *variant, int n, long fanin, struct ibc_pattern_round *r,
			   int cap)
{
	(void)fanin;
	return ibc_alltoall_alg_rounds(variant, n, r, cap);
}

const struct ibc_suite ibc_suites[] = {
	{
		.name = "probe",
		.description = "placement probe: cache-line ping-pong, one-way latency between two "
			       "processes on different PUs and on the same PU",
		.bench = "ibchar-probe",
		.launcher = "fork",
		.default_ranks = "2",
		.variants = "probe-cross,probe-same,probe-write",
		.list_args = "--list",
		.min_ranks = 2,
		.max_ranks = 2,
		.needs_verbs = 0,
	},
	{
		.name = "link",
		.description = "link-level write/read/send latency and write bandwidth over a "
			       "transport (perftest-equivalent)",
		.bench = "ibchar-link",
		.launcher = "fork",
		.default_ranks = "2",
		.variants = "write-lat,write-lat-lastbyte,write-lat-imm,read-lat,send-lat,write-bw-burst,write-bw-stream",
		.list_args = "--list",
		.min_ranks = 2,
		.max_ranks = 2,
		.needs_verbs = 0,
	},
	{
		.name = "barrier",
		.description = "barriers of Kini et al.: RDMA pairwise exchange, dissemination, "
			       "gather + multicast (fan-in), two-sided PE and DS",
		.bench = "ibchar-barrier",
		.launcher = "fork",
		.default_ranks = "2..16",
		.variants = "rpe,rds,rgm,pe,ds",
		.list_args = "--list",
		.min_ranks = 1,
		.factor_ref = "mpi",
		.needs_verbs = 0,
		.rounds = ibc_barrier_alg_rounds,
	},
	{
		.name = "alltoall",
		.description = "all-to-all personalized exchange of Sur et al.: HRWG, Direct "
			       "Eager, two-sided hypercube, bruck, pairwise and direct",
		.bench = "ibchar-alltoall",
		.launcher = "fork",
		.default_ranks = "2,4,8",
		.variants = "hrwg,hrwg-multi,de,hypercube,bruck,pairwise,direct",
		.list_args = "--list",
		.min_ranks = 1,
		.factor_ref = "mpi",
		.needs_verbs = 0,
		.rounds = alltoall_rounds,
	},
	{
		.name = "channel",
		.description = "the MPICH2 RDMA channel of Liu et al.: put/get in the designs "
			       "basic, piggyback, pipeline, zcopy; latency, bandwidth, sweeps",
		.bench = "ibchar-channel",
		.launcher = "fork",
		.default_ranks = "2",
		.variants = "basic,piggyback,pipeline,zcopy,rdma-write (and -bw, -bibw, sweeps)",
		.list_args = "--list",
		.min_ranks = 2,
		.max_ranks = 2,
		.needs_verbs = 0,
	},
	{
		.name = "logp",
		.description = "the LoP model of Hoefler & Rehm: o_s(p), o_r(p), RTT(p) 1:n and n:1, "
			       "post lists, inline, send and RDMA write; LogGP's PRTT; fitted",
		.bench = "ibchar-logp",
		.launcher = "fork",
		.default_ranks = "2,4,8",
		.variants = "os-*,or*,rtt-*,loggp-prtt*",
		.list_args = "--list",
		.min_ranks = 2,
		.needs_verbs = 0,
	},
	{
		.name = "launch",
		.description = "job start-up of ScELA (Sridhar): spawn, init and total time under "
			       "ibchar-launch (tree, flat), mpirun.mpich, mpirun.openmpi and srun; "
			       "node-level caches",
		.bench = "ibchar-launch-bench",
		.launcher = "self",
		.default_ranks = "-",
		.variants = "tree,tree-k2,flat,mpich,openmpi,srun,srun-pmix",
		.list_args = "--list",
		.min_ranks = 1,
		.needs_verbs = 0,
		.self_launched = 1,
	},
};

const size_t ibc_suites_count = sizeof(ibc_suites) / sizeof(ibc_suites[0]);

const struct ibc_suite *ibc_suite_find(const char *name)
{
	size_t i;

	for (i = 0; i < ibc_suites_count; i++)
		if (strcmp(ibc_suites[i].name, name) == 0)
			return &ibc_suites[i];
	return NULL;
}
