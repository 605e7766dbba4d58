/* How the logp suite times its kernels (the harness's per-iteration
 * sample): a kernel in which every rank works at once, as a collective's
 * ranks do, is timed by the slowest rank of each iteration, as the
 * collectives' rows are; a kernel of rank 0's (a post, a round trip from
 * rank 0) by rank 0.  os-write-user-all is DE's and `direct`'s writes into
 * user memory, every rank at once: an all-to-all waits for the last of
 * them, so the model's user-write term is the slowest rank's. */
#include "logp/logp_suite.h"
#include "tap.h"

#include <string.h>

static int timing_of(const struct ibc_suite_variant *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return (int)v[i].timing;
	return -1;
}

int main(void)
{
	static struct ibc_suite_variant v[256];
	size_t n = ibc_logp_suite.variants_fill(v, sizeof(v) / sizeof(v[0]));

	tap_plan(5);
	tap_ok(n > 0 && n < sizeof(v) / sizeof(v[0]), "the logp suite's kernels: %zu", n);
	tap_is_int(timing_of(v, n, "os-write-user-all"), IBC_HARNESS_TIME_SLOWEST,
		   "os-write-user-all (every rank writing at once): the slowest rank per iteration");
	tap_is_int(timing_of(v, n, "rtt-write-n1"), IBC_HARNESS_TIME_SLOWEST,
		   "rtt-write-n1 (the slowest peer's round trip): the slowest rank");
	tap_is_int(timing_of(v, n, "os-write-user"), IBC_HARNESS_TIME_ROOT,
		   "os-write-user (rank 0 writing alone): rank 0");
	tap_is_int(timing_of(v, n, "rtt-write-1n"), IBC_HARNESS_TIME_ROOT,
		   "rtt-write-1n (rank 0's round trip): rank 0");
	return tap_done();
}
