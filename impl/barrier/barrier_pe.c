/* PE: pairwise exchange over the transport's two-sided send/receive: the
 * point-to-point baseline of RPE without MPI (same schedule, impl/pattern).  Each
 * message carries the barrier id; a receive completion raises got[peer] to it. */
#include "barrier/barrier_impl.h"

#include "core/status.h"

#include <stdlib.h>

static const struct ibc_barrier_tunable tunables[] = {
	{ "deadline", "60", "seconds before a wait gives up (IBC_ERR_TIMEOUT)" },
	{ NULL, NULL, NULL }
};

static int pe_setup(struct ibc_barrier *b)
{
	uint8_t *want, *is_source;
	int rc;

	want = calloc((size_t)b->size, 1);
	is_source = calloc((size_t)b->size, 1);
	if (!want || !is_source) {
		rc = IBC_ERR_NOMEM;
		goto out_free;
	}
	ibc_barrier_steps_peers(b, ibc_pattern_pe_nsteps(b->size), ibc_pattern_pe_step_get, want,
				is_source);
	rc = ibc_barrier_p2p_setup(b, want, is_source);
out_free:
	free(want);
	free(is_source);
	return rc;
}

static int pe_run(struct ibc_barrier *b, uint64_t id)
{
	return ibc_barrier_steps_p2p(b, id, ibc_pattern_pe_nsteps(b->size), ibc_pattern_pe_step_get);
}

const struct ibc_barrier_alg ibc_barrier_alg_pe = {
	.name = "pe",
	.desc = "pairwise exchange over two-sided send/receive (baseline of rpe)",
	.needs = IBC_BARRIER_NEEDS_TWO_SIDED,
	.tunables = tunables,
	.setup = pe_setup,
	.run = pe_run,
	.teardown = NULL,
	.priv_size = 0,
};
