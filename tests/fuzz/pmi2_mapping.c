/* The PMI-2 process mapping parser (boot/boot_pmi2.c): the input is the
 * value of PMI_process_mapping; the job size comes from its length, so
 * mappings are tried against small and larger jobs. */
#include "fuzz.h"
#include "boot/boot.h"
#include "core/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *map = fuzz_str(data, size);
	int n = 1 + (int)(size % 97), *node = malloc((size_t)n * sizeof(int)), r;

	fuzz_quiet();
	if (node == NULL)
		abort();
	if (ibc_boot_pmi2_mapping(map, n, node) == IBC_OK)
		for (r = 0; r < n; r++)
			if (node[r] < 0 || node[r] >= n)
				abort(); /* the contract: a node id below the job size */
	free(node);
	free(map);
	return 0;
}
