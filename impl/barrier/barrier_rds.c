/* RDS: RDMA-based dissemination (Kini et al. §3.2).  Round m writes the barrier id into
 * slot <rank> of (rank + 2^m) mod N and waits for slot (rank - 2^m) mod N to reach it;
 * ceil(log2 N) rounds for every N. */
#include "barrier/barrier_impl.h"

#include "core/status.h"

static int rds_setup(struct ibc_barrier *b)
{
	return ibc_barrier_steps_setup(b, ibc_pattern_diss_nsteps(b->size),
				       ibc_pattern_diss_step_get, 0);
}

static int rds_run(struct ibc_barrier *b, uint64_t id)
{
	return ibc_barrier_steps_rdma(b, id, ibc_pattern_diss_nsteps(b->size), ibc_pattern_diss_step_get);
}

static int rds_rounds(int n, int fanin, struct ibc_pattern_round *r, int cap)
{
	(void)fanin;
	return ibc_pattern_diss_rounds(n, IBC_PATTERN_ROUND_WRITE, r, cap);
}

const struct ibc_barrier_alg ibc_barrier_alg_rds = {
	.name = "rds",
	.desc = "RDMA dissemination (ceil(log2 N) rounds)",
	.needs = IBC_BARRIER_NEEDS_RDMA_WRITE,
	.tunables = ibc_barrier_tunables_steps,
	.setup = rds_setup,
	.run = rds_run,
	.teardown = NULL,
	.rounds = rds_rounds,
	.priv_size = 0,
};
