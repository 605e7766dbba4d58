/* RPE: RDMA-based pairwise exchange (Kini et al. §3.1).  Each step writes the barrier id into
 * slot <rank> of the partner and waits for the partner's slot to reach the id; ranks
 * beyond the largest power of two fold in before and are released after (MPICH), so
 * floor(log2 N) + 2 steps for non-powers of two. */
#include "barrier/barrier_impl.h"

#include "core/status.h"

static int rpe_setup(struct ibc_barrier *b)
{
	return ibc_barrier_steps_setup(b, ibc_pattern_pe_nsteps(b->size),
				       ibc_pattern_pe_step_get, 0);
}

static int rpe_run(struct ibc_barrier *b, uint64_t id)
{
	return ibc_barrier_steps_rdma(b, id, ibc_pattern_pe_nsteps(b->size), ibc_pattern_pe_step_get);
}

static int rpe_rounds(int n, int fanin, struct ibc_pattern_round *r, int cap)
{
	(void)fanin;
	return ibc_pattern_pe_rounds(n, IBC_PATTERN_ROUND_WRITE, r, cap);
}

const struct ibc_barrier_alg ibc_barrier_alg_rpe = {
	.name = "rpe",
	.desc = "RDMA pairwise exchange (recursive doubling; MPICH fold-in for non-powers of two)",
	.needs = IBC_BARRIER_NEEDS_RDMA_WRITE,
	.tunables = ibc_barrier_tunables_steps,
	.setup = rpe_setup,
	.run = rpe_run,
	.teardown = NULL,
	.rounds = rpe_rounds,
	.priv_size = 0,
};
