/* The harness end to end under mpirun with the MPI bootstrap: the checks of
 * checks.h (slowest-rank rule, skew, mean over ranks, interleaving) on
 * however many ranks mpirun started, after a check of the MPI bootstrap's
 * collectives and bulletin board.  Rank 0 prints TAP; run by mpi.t. */
#include "checks.h"

/* allgather, gather, bcast, put/fence/get; a bit per failed check */
static unsigned boot_checks(struct ibc_boot *b)
{
	unsigned bad = 0;
	int n = b->size, r, mine = b->rank * 7 + 1, *all = calloc((size_t)n, sizeof(int));
	char key[32], val[64], got[64], buf[32] = { 0 };
	size_t len;

	if (all == NULL)
		return ~0u;
	if (ibc_boot_allgather(b, &mine, all, sizeof(int)) != IBC_OK)
		bad |= 1;
	for (r = 0; r < n; r++)
		if (all[r] != r * 7 + 1)
			bad |= 2;
	memset(all, 0, sizeof(int) * (size_t)n);
	if (ibc_boot_gather(b, &mine, all, sizeof(int), n - 1) != IBC_OK)
		bad |= 4;
	if (b->rank == n - 1)
		for (r = 0; r < n; r++)
			if (all[r] != r * 7 + 1)
				bad |= 8;
	if (b->rank == 0)
		snprintf(buf, sizeof(buf), "from rank 0");
	if (ibc_boot_bcast(b, buf, sizeof(buf), 0) != IBC_OK || strcmp(buf, "from rank 0") != 0)
		bad |= 16;
	snprintf(key, sizeof(key), "ep-%d", b->rank);
	snprintf(val, sizeof(val), "endpoint %d", b->rank);
	if (ibc_boot_put(b, key, val, strlen(val) + 1) != IBC_OK || ibc_boot_fence(b) != IBC_OK)
		bad |= 32;
	for (r = 0; r < n; r++) {
		snprintf(key, sizeof(key), "ep-%d", r);
		snprintf(val, sizeof(val), "endpoint %d", r);
		if (ibc_boot_get(b, key, got, sizeof(got), &len) != IBC_OK || strcmp(got, val) != 0)
			bad |= 64;
	}
	if (ibc_boot_get(b, "missing", got, sizeof(got), &len) != IBC_ERR_NOTFOUND)
		bad |= 128;
	free(all);
	return bad;
}

int main(int argc, char **argv)
{
	struct ibc_boot *b;
	int rc, rank, r;
	unsigned bad, *verdicts = NULL;

	rc = ibc_boot_mpi_open(&argc, &argv, &b);
	if (rc != IBC_OK) {
		printf("1..0 # SKIP MPI bootstrap did not open: %s\n", ibc_status_str(rc));
		return 0;
	}
	rank = b->rank;
	bad = boot_checks(b);
	if (rank == 0)
		verdicts = calloc((size_t)b->size, sizeof(unsigned));
	ibc_boot_gather(b, &bad, verdicts, sizeof(bad), 0);
	if (rank == 0) {
		tap_plan(CHK_TESTS + 3);
		tap_ok(b->local_size == b->size && b->num_nodes == 1 && b->node_id == 0 &&
		       b->local_rank == b->rank,
		       "%d ranks on one node: local size %d, node id %d", b->size, b->local_size, b->node_id);
		for (r = 0; verdicts != NULL && r < b->size && verdicts[r] == 0; r++)
			;
		tap_ok(verdicts != NULL && r == b->size,
		       "MPI bootstrap: allgather/gather/bcast/put-fence-get right on every rank%s",
		       r < b->size ? " (some rank failed)" : "");
		free(verdicts);
	}
	chk_run(b, "mpirun");
	rc = ibc_boot_close(b);
	if (rank != 0)
		return 0;
	tap_is_int(rc, IBC_OK, "MPI bootstrap closes");
	return tap_done();
}
