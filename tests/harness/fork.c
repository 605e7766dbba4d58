/* The harness end to end on 4 ranks (and 2) with the fork bootstrap:
 * slowest-rank rule, skew, mean over ranks, interleaving (checks.h); window
 * mode is tests/harness/window.c. */
#include "checks.h"


#include <stdlib.h>

static void one_job(int n)
{
	struct ibc_boot *b;
	int rc = ibc_boot_fork_open(n, &b), rank;

	if (rc != IBC_OK) {
		tap_ok(0, "fork open %d ranks: %s", n, ibc_status_str(rc));
		tap_skip(CHK_TESTS, "no job");
		return;
	}
	rank = b->rank;
	chk_run(b, "fork");
	rc = ibc_boot_close(b);
	if (rank != 0)
		exit(0); /* a test child: leave without the parent's TAP */
	tap_is_int(rc, IBC_OK, "%d ranks: job closes cleanly", n);
}

int main(void)
{
	tap_plan(2 * (CHK_TESTS + 1));
	one_job(4);
	one_job(2);
	return tap_done();
}
