/* ibc_boot_open: picks the bootstrap backend the environment asks for;
 * ibc_boot_agree: one status for all ranks. */
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

int ibc_boot_open(const char *name, int nprocs, struct ibc_boot **out)
{
	const char *env;

	*out = NULL;
	if (name == NULL || strcmp(name, "auto") == 0) {
		/* PMI_FD: ibchar-launch's node agent (it also sets IBC_LAUNCH_RANK),
		 * else a PMI-2 process manager such as srun --mpi=pmi2 */
		if (getenv("PMI_FD") != NULL)
			return getenv("IBC_LAUNCH_RANK") != NULL ? ibc_boot_launcher_open(out)
								 : ibc_boot_pmi2_open(out);
		env = getenv("IBC_BOOT");
		if (env != NULL && strcmp(env, "tcp") == 0)
			return ibc_boot_tcp_open(out);
		if (env != NULL && env[0] != '\0' && strcmp(env, "auto") != 0) {
			name = env;
		} else {
			return nprocs > 1 ? ibc_boot_fork_open(nprocs, out) : ibc_boot_single_open(out);
		}
	}
	if (strcmp(name, "single") == 0) {
		if (nprocs > 1) {
			ibc_error("boot: the single bootstrap runs one rank, %d asked", nprocs);
			return IBC_ERR_INVAL;
		}
		return ibc_boot_single_open(out);
	}
	if (strcmp(name, "fork") == 0)
		return ibc_boot_fork_open(nprocs < 1 ? 1 : nprocs, out);
	if (strcmp(name, "tcp") == 0)
		return ibc_boot_tcp_open(out);
	if (strcmp(name, "launcher") == 0)
		return ibc_boot_launcher_open(out);
	if (strcmp(name, "pmi2") == 0)
		return ibc_boot_pmi2_open(out);
	if (strcmp(name, "mpi") == 0) {
		ibc_error("boot: the mpi bootstrap is only in the *-<mpi> binaries");
		return IBC_ERR_UNSUPPORTED;
	}
	ibc_error("boot: unknown bootstrap '%s' (single, fork, tcp, launcher, pmi2, auto)", name);
	return IBC_ERR_INVAL;
}

int ibc_boot_agree(struct ibc_boot *b, int mine, int *agreed)
{
	int *all, r, rc, worst = IBC_OK;

	all = malloc(sizeof(int) * (size_t)b->size);
	if (all == NULL)
		return IBC_ERR_NOMEM;
	rc = ibc_boot_allgather(b, &mine, all, sizeof(int));
	if (rc == IBC_OK) {
		for (r = 0; r < b->size; r++) {
			if (all[r] == IBC_OK)
				continue;
			if (worst == IBC_OK || worst == IBC_ERR_UNSUPPORTED)
				worst = all[r];
		}
		*agreed = worst;
	}
	free(all);
	return rc;
}
