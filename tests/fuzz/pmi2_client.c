/* The PMI-2 client (boot/boot_pmi2.c) end to end: the input is everything
 * the process manager says on PMI_FD (the init line, then length-prefixed
 * responses), fed by a thread on a socketpair (feed.h); the client
 * opens (fullinit, process mapping) and, when that worked, runs a get, an
 * allgather, a barrier and finalize. */
#include "fuzz.h"
#include "boot/boot.h"
#include "core/status.h"

#include "feed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ibc_boot *b = NULL;
	struct fuzz_feed f;
	char fd[16], val[64];
	int mine = 7, *all;
	size_t len;

	fuzz_quiet();
	fuzz_feed_start(&f, data, size);
	snprintf(fd, sizeof(fd), "%d", f.sv[0]);
	setenv("PMI_FD", fd, 1);
	setenv("PMI_JOBID", "7.0", 1);
	setenv("PMI_RANK", "0", 1);
	if (ibc_boot_pmi2_open(&b) == IBC_OK) { /* it closes sv[0] otherwise */
		(void)ibc_boot_get(b, "key", val, sizeof(val), &len);
		all = calloc((size_t)b->size, sizeof(int));
		if (all != NULL && b->size <= 64)
			(void)ibc_boot_allgather(b, &mine, all, sizeof(int));
		free(all);
		(void)ibc_boot_barrier(b);
		(void)ibc_boot_close(b);
	}
	fuzz_feed_end(&f);
	return 0;
}
