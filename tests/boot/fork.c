/* The fork bootstrap: collectives with 1..8 ranks, data checked on every rank
 * (each rank's verdict is gathered to rank 0, which alone prints TAP), and a
 * dying child that must not hang the others. */
#include "boot/boot.h"
#include "core/status.h"
#include "tap.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BIG (200 * 1024 + 7) /* larger than one slot: exercises chunking */

static unsigned char pattern(int rank, size_t i)
{
	return (unsigned char)(rank * 31 + i * 7 + 1);
}

/* Runs every collective; returns a bit mask of failed checks. */
static unsigned run_checks(struct ibc_boot *b)
{
	unsigned bad = 0;
	int n = b->size, r, rc;
	size_t i, len;
	int64_t mine[3], *all;
	unsigned char *big, *bigall = NULL;
	char key[32], val[64], got[64];

	all = calloc((size_t)n * 3, sizeof(*all));
	big = malloc(BIG);
	if (b->rank == 1 % n)
		bigall = malloc((size_t)n * BIG);
	if (all == NULL || big == NULL || (b->rank == 1 % n && bigall == NULL))
		return ~0u;
	if (b->local_rank != b->rank || b->node_id != 0 || b->local_size != n)
		bad |= 1u << 0;
	/* allgather */
	mine[0] = b->rank;
	mine[1] = b->rank * 1000 + 7;
	mine[2] = -b->rank;
	if (ibc_boot_allgather(b, mine, all, sizeof(mine)) != IBC_OK)
		bad |= 1u << 1;
	for (r = 0; r < n; r++)
		if (all[r * 3] != r || all[r * 3 + 1] != r * 1000 + 7 || all[r * 3 + 2] != -r)
			bad |= 1u << 2;
	/* gather of a big block to rank 1 % n */
	for (i = 0; i < BIG; i++)
		big[i] = pattern(b->rank, i);
	if (ibc_boot_gather(b, big, bigall, BIG, 1 % n) != IBC_OK)
		bad |= 1u << 3;
	if (bigall != NULL)
		for (r = 0; r < n; r++)
			for (i = 0; i < BIG; i += 997)
				if (bigall[(size_t)r * BIG + i] != pattern(r, i))
					bad |= 1u << 4;
	/* bcast from the last rank */
	for (i = 0; i < BIG; i++)
		big[i] = b->rank == n - 1 ? pattern(99, i) : 0;
	if (ibc_boot_bcast(b, big, BIG, n - 1) != IBC_OK)
		bad |= 1u << 5;
	for (i = 0; i < BIG; i++)
		if (big[i] != pattern(99, i)) {
			bad |= 1u << 6;
			break;
		}
	/* barriers */
	for (i = 0; i < 200; i++)
		if (ibc_boot_barrier(b) != IBC_OK)
			bad |= 1u << 7;
	/* put / fence / get */
	snprintf(key, sizeof(key), "ep-%d", b->rank);
	snprintf(val, sizeof(val), "endpoint of rank %d", b->rank);
	if (ibc_boot_put(b, key, val, strlen(val) + 1) != IBC_OK)
		bad |= 1u << 8;
	if (ibc_boot_fence(b) != IBC_OK)
		bad |= 1u << 8;
	for (r = 0; r < n; r++) {
		snprintf(key, sizeof(key), "ep-%d", r);
		snprintf(val, sizeof(val), "endpoint of rank %d", r);
		rc = ibc_boot_get(b, key, got, sizeof(got), &len);
		if (rc != IBC_OK || len != strlen(val) + 1 || strcmp(got, val) != 0)
			bad |= 1u << 9;
	}
	if (ibc_boot_get(b, "no-such-key", got, sizeof(got), &len) != IBC_ERR_NOTFOUND)
		bad |= 1u << 10;
	free(all);
	free(big);
	free(bigall);
	return bad;
}

static void collectives_case(int n)
{
	struct ibc_boot *b;
	unsigned bad, *verdicts = NULL;
	int r, rc, rank;

	rc = ibc_boot_fork_open(n, &b);
	if (rc != IBC_OK) {
		tap_ok(0, "fork open with %d ranks: %s", n, ibc_status_str(rc));
		return;
	}
	rank = b->rank;
	bad = run_checks(b);
	if (rank == 0)
		verdicts = calloc((size_t)n, sizeof(*verdicts));
	rc = ibc_boot_gather(b, &bad, verdicts, sizeof(bad), 0);
	if (rank != 0) {
		ibc_boot_close(b);
		exit(bad ? 1 : 0); /* a test child: leave without running the parent's TAP */
	}
	tap_is_int(b->size, n, "%d ranks: size", n);
	tap_ok(rc == IBC_OK, "%d ranks: verdicts gathered", n);
	for (r = 0; r < n && verdicts != NULL; r++)
		if (verdicts[r] != 0) {
			tap_diag("rank %d failed checks mask 0x%x", r, verdicts[r]);
			break;
		}
	tap_ok(verdicts != NULL && r == n, "%d ranks: allgather/gather/bcast/barrier/put-get right on every rank", n);
	free(verdicts);
	tap_is_int(ibc_boot_close(b), IBC_OK, "%d ranks: close reports a clean job", n);
}

static void death_case(void)
{
	struct ibc_boot *b;
	int rc, rc_bar, i, rank, *seen;
	unsigned char dummy[4] = { 0 };

	/* the survivors' verdicts, in memory shared before the fork */
	seen = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (seen == MAP_FAILED)
		tap_bail_out("mmap failed");
	for (i = 0; i < 4; i++)
		seen[i] = 12345;
	rc = ibc_boot_fork_open(4, &b);
	if (rc != IBC_OK) {
		tap_ok(0, "fork open (death case): %s", ibc_status_str(rc));
		return;
	}
	rank = b->rank;
	rc_bar = ibc_boot_barrier(b);
	if (rank == 2)
		raise(SIGKILL); /* dies between two collectives */
	for (i = 0; i < 3 && rc_bar == IBC_OK; i++)
		rc_bar = ibc_boot_allgather(b, dummy, NULL, 0);
	if (rc_bar == IBC_OK)
		rc_bar = ibc_boot_barrier(b);
	seen[rank] = rc_bar;
	if (rank != 0) {
		ibc_boot_close(b);
		exit(0);
	}
	tap_is_int(rc_bar, IBC_ERR_CLOSED, "dead child: rank 0's wait returns 'closed' instead of hanging");
	rc = ibc_boot_close(b);
	tap_ok(rc != IBC_OK, "dead child: close reports the failure (%s)", ibc_status_str(rc));
	tap_ok(seen[1] == IBC_ERR_CLOSED && seen[3] == IBC_ERR_CLOSED,
	       "dead child: the surviving children's waits returned 'closed' too (%d, %d)", seen[1], seen[3]);
	munmap(seen, 4096);
}

static void bounds_case(void)
{
	struct ibc_boot *b;
	char big[5000] = { 0 };
	int rc;

	rc = ibc_boot_fork_open(1, &b);
	tap_is_int(rc, IBC_OK, "fork with one rank opens");
	if (rc != IBC_OK)
		return;
	tap_is_int(ibc_boot_put(b, "k", big, sizeof(big)), IBC_ERR_INVAL, "oversized put value rejected");
	tap_is_int(ibc_boot_gather(b, big, big, 1, 3), IBC_ERR_INVAL, "gather root out of range rejected");
	tap_is_int(ibc_boot_close(b), IBC_OK, "one-rank close");
	tap_is_int(ibc_boot_fork_open(0, &b), IBC_ERR_INVAL, "zero ranks rejected");
	unsetenv("PMI_FD");
	unsetenv("IBC_BOOT");
	rc = ibc_boot_open(NULL, 1, &b);
	tap_ok(rc == IBC_OK && strcmp(b->ops->name, "single") == 0, "ibc_boot_open(auto, 1) picks single");
	if (rc == IBC_OK)
		ibc_boot_close(b);
	tap_is_int(ibc_boot_open("bogus", 1, &b), IBC_ERR_INVAL, "an unknown bootstrap name is rejected");
}

int main(void)
{
	int n;

	tap_plan(8 * 4 + 3 + 7);
	for (n = 1; n <= 8; n++)
		collectives_case(n);
	death_case();
	bounds_case();
	return tap_done();
}
