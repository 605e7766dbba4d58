/* PE: pairwise exchange over the transport's two-sided send/receive: the
 * point-to-point baseline of RPE without MPI (same schedule, impl/pattern).  Each
 * message carries the barrier id; a receive completion raises got[peer] to it. */
#include "barrier/barrier_impl.h"

#include "core/status.h"

static int pe_setup(struct ibc_barrier *b)
{
	return ibc_barrier_steps_setup(b, ibc_pattern_pe_nsteps(b->size),
				       ibc_pattern_pe_step_get, 1);
}

static int pe_run(struct ibc_barrier *b, uint64_t id)
{
	return ibc_barrier_steps_p2p(b, id, ibc_pattern_pe_nsteps(b->size), ibc_pattern_pe_step_get);
}

static int pe_rounds(int n, int fanin, struct ibc_pattern_round *r, int cap)
{
	(void)fanin;
	return ibc_pattern_pe_rounds(n, IBC_PATTERN_ROUND_SEND, r, cap);
}

const struct ibc_barrier_alg ibc_barrier_alg_pe = {
	.name = "pe",
	.desc = "pairwise exchange over two-sided send/receive (baseline of rpe)",
	.needs = IBC_BARRIER_NEEDS_TWO_SIDED,
	.tunables = ibc_barrier_tunables_steps,
	.setup = pe_setup,
	.run = pe_run,
	.teardown = NULL,
	.rounds = pe_rounds,
	.priv_size = 0,
};
