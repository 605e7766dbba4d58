/* DS: dissemination over the transport's two-sided send/receive: the point-to-point
 * baseline of RDS without MPI (same schedule, impl/pattern). */
#include "barrier/barrier_impl.h"

#include "core/status.h"

static int ds_setup(struct ibc_barrier *b)
{
	return ibc_barrier_steps_setup(b, ibc_pattern_diss_nsteps(b->size),
				       ibc_pattern_diss_step_get, 1);
}

static int ds_run(struct ibc_barrier *b, uint64_t id)
{
	return ibc_barrier_steps_p2p(b, id, ibc_pattern_diss_nsteps(b->size), ibc_pattern_diss_step_get);
}

static int ds_rounds(int n, int fanin, struct ibc_pattern_round *r, int cap)
{
	(void)fanin;
	return ibc_pattern_diss_rounds(n, IBC_PATTERN_ROUND_SEND, r, cap);
}

const struct ibc_barrier_alg ibc_barrier_alg_ds = {
	.name = "ds",
	.desc = "dissemination over two-sided send/receive (baseline of rds)",
	.needs = IBC_BARRIER_NEEDS_TWO_SIDED,
	.tunables = ibc_barrier_tunables_steps,
	.setup = ds_setup,
	.run = ds_run,
	.teardown = NULL,
	.rounds = ds_rounds,
	.priv_size = 0,
};
