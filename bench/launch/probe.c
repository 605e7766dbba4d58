/* ibchar-launch-probe: the program the launch suite starts under each
 * launcher.  It stamps when it started, does what its mode says, and appends
 * one line to STAMPFILE (impl/launch/stamp.h):
 *
 *   true                        nothing (the /bin/true of a spawn measurement)
 *   pmi ring|allgather STAGES   STAGES rounds of the PMI exchange of the thesis (ch. 3):
 *                               put one 64-byte value, fence, get the values of the
 *                               ring neighbours (1:2, Fig. 3.3) or of every rank (1:p,
 *                               Fig. 3.4), barrier; each round timed
 *
 * pmi bootstraps from the environment (ibchar-launch, PMI-2 under hydra or
 * srun --mpi=pmi2); without a process manager it is a singleton and says size 1. */
#include "boot/boot.h"
#include "core/status.h"
#include "launch/stamp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_BYTES 64

static int usage(void)
{
	fprintf(stderr, "Usage: ibchar-launch-probe STAMPFILE true\n"
			"       ibchar-launch-probe STAMPFILE pmi ring|allgather STAGES\n"
			"The launch suite's probe program (see impl/launch/stamp.h).\n");
	return 2;
}

/* One round: put, fence, the gets of the pattern, barrier. */
static int stage(struct ibc_boot *b, int s, int allgather)
{
	char key[64], val[VALUE_BYTES], got[VALUE_BYTES];
	size_t len;
	int i, peer, rc;

	memset(val, 'a' + (b->rank + s) % 26, sizeof(val));
	snprintf(key, sizeof(key), "ls%d-%d", s, b->rank);
	rc = b->ops->put(b, key, val, sizeof(val));
	if (rc == IBC_OK)
		rc = b->ops->fence(b);
	for (i = 0; rc == IBC_OK && i < (allgather ? b->size : 2); i++) {
		peer = allgather ? i : (b->rank + (i ? b->size - 1 : 1)) % b->size;
		if (peer == b->rank && b->size > 1)
			continue;
		snprintf(key, sizeof(key), "ls%d-%d", s, peer);
		rc = b->ops->get(b, key, got, sizeof(got), &len);
		if (rc == IBC_OK && (len != sizeof(got) || got[0] != 'a' + (peer + s) % 26)) {
			fprintf(stderr, "ibchar-launch-probe: rank %d: wrong value for %s\n", b->rank, key);
			rc = IBC_ERR_PROTO;
		}
	}
	if (rc == IBC_OK)
		rc = b->ops->barrier(b);
	return rc;
}

int main(int argc, char **argv)
{
	struct ibc_launch_stamp st = { .t_start = ibc_launch_stamp_now() };
	struct ibc_boot *b = NULL;
	long stages;
	int s, rc, allgather;

	if (argc == 3 && strcmp(argv[2], "true") == 0) {
		ibc_launch_stamp_env_rank(&st.rank, &st.size);
		st.t_init = st.t_end = st.t_start;
		return ibc_launch_stamp_write(argv[1], &st) == IBC_OK ? 0 : 1;
	}
	if (argc != 5 || strcmp(argv[2], "pmi") != 0 ||
	    (strcmp(argv[3], "ring") != 0 && strcmp(argv[3], "allgather") != 0))
		return usage();
	stages = strtol(argv[4], NULL, 10);
	if (stages < 1 || stages > IBC_LAUNCH_STAMP_STAGES)
		return usage();
	allgather = strcmp(argv[3], "allgather") == 0;
	rc = ibc_boot_open("auto", 0, &b);
	if (rc != IBC_OK) {
		fprintf(stderr, "ibchar-launch-probe: no bootstrap: %s\n", ibc_status_str(rc));
		return 1;
	}
	st.rank = b->rank;
	st.size = b->size;
	st.t_init = ibc_launch_stamp_now();
	for (s = 0; s < stages && rc == IBC_OK; s++) {
		int64_t t = ibc_launch_stamp_now();

		rc = stage(b, s, allgather);
		st.stage[s] = ibc_launch_stamp_now() - t;
		st.nstages = s + 1;
	}
	if (rc != IBC_OK) {
		b->ops->abort(b, 1, "launch probe: exchange failed");
		return 1;
	}
	st.t_end = ibc_launch_stamp_now();
	if (ibc_launch_stamp_write(argv[1], &st) != IBC_OK) {
		b->ops->abort(b, 1, "launch probe: cannot write the stamp file");
		return 1;
	}
	return b->ops->close(b) == IBC_OK ? 0 : 1;
}
