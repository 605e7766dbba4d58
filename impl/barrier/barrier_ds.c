/* DS: dissemination over the transport's two-sided send/receive: the point-to-point
 * baseline of RDS without MPI (same schedule, impl/pattern). */
#include "barrier/barrier_impl.h"

#include "core/status.h"

#include <stdlib.h>

static const struct ibc_barrier_tunable tunables[] = {
	{ "deadline", "60", "seconds before a wait gives up (IBC_ERR_TIMEOUT)" },
	{ NULL, NULL, NULL }
};

static int ds_setup(struct ibc_barrier *b)
{
	uint8_t *want, *is_source;
	int rc;

	want = calloc((size_t)b->size, 1);
	is_source = calloc((size_t)b->size, 1);
	if (!want || !is_source) {
		rc = IBC_ERR_NOMEM;
		goto out_free;
	}
	ibc_barrier_steps_peers(b, ibc_pattern_diss_nsteps(b->size), ibc_pattern_diss_step_get, want,
				is_source);
	rc = ibc_barrier_p2p_setup(b, want, is_source);
out_free:
	free(want);
	free(is_source);
	return rc;
}

static int ds_run(struct ibc_barrier *b, uint64_t id)
{
	return ibc_barrier_steps_p2p(b, id, ibc_pattern_diss_nsteps(b->size), ibc_pattern_diss_step_get);
}

const struct ibc_barrier_alg ibc_barrier_alg_ds = {
	.name = "ds",
	.desc = "dissemination over two-sided send/receive (baseline of rds)",
	.needs = IBC_BARRIER_NEEDS_TWO_SIDED,
	.tunables = tunables,
	.setup = ds_setup,
	.run = ds_run,
	.teardown = NULL,
	.priv_size = 0,
};
