/* RDS: RDMA-based dissemination (Kini et al. §3.2).  Round m writes the barrier id into
 * slot <rank> of (rank + 2^m) mod N and waits for slot (rank - 2^m) mod N to reach it;
 * ceil(log2 N) rounds for every N. */
#include "barrier/barrier_impl.h"

#include "core/status.h"

#include <stdlib.h>

static const struct ibc_barrier_tunable tunables[] = {
	{ "deadline", "60", "seconds before a wait gives up (IBC_ERR_TIMEOUT)" },
	{ NULL, NULL, NULL }
};

static int rds_setup(struct ibc_barrier *b)
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
	/* slot i is written by rank i (§4.1): N words */
	rc = ibc_barrier_words_setup(b, (size_t)b->size, want);
out_free:
	free(want);
	free(is_source);
	return rc;
}

static int rds_run(struct ibc_barrier *b, uint64_t id)
{
	return ibc_barrier_steps_rdma(b, id, ibc_pattern_diss_nsteps(b->size), ibc_pattern_diss_step_get);
}

const struct ibc_barrier_alg ibc_barrier_alg_rds = {
	.name = "rds",
	.desc = "RDMA dissemination (ceil(log2 N) rounds)",
	.needs = IBC_BARRIER_NEEDS_RDMA_WRITE,
	.tunables = tunables,
	.setup = rds_setup,
	.run = rds_run,
	.teardown = NULL,
	.priv_size = 0,
};
