/* The host launchers' command lines (impl/launcher/hostcmd.c): the mpirun
 * and srun heads as `ibchar run` and the launch suite use them, bad input
 * refused with a message, and Open MPI's run-as-root environment. */
#include "core/status.h"
#include "launcher/hostcmd.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *joined(const struct ibc_launch_hostcmd *c)
{
	static char buf[512];
	int i;

	buf[0] = '\0';
	for (i = 0; i < c->argc; i++) {
		if (i > 0)
			strcat(buf, " ");
		strcat(buf, c->argv[i]);
	}
	return buf;
}

int main(void)
{
	struct ibc_launch_hostcmd c;
	const char *allow, *confirm;
	char want[128];

	tap_plan_none();
	tap_is_int(ibc_launch_hostcmd_mpirun(&c, "/usr/bin/mpirun.openmpi", 4), IBC_OK, "mpirun");
	tap_is_str(joined(&c), "/usr/bin/mpirun.openmpi -n 4", "... its argv");
	tap_ok(c.argv[c.argc] == NULL, "... NULL-terminated");
	tap_is_int(ibc_launch_hostcmd_srun(&c, "srun", 0, 8, 0, "pmi2"), IBC_OK, "srun as ibchar run starts it");
	snprintf(want, sizeof(want), "srun -n 8 --mpi=pmi2 --job-name=ibc-%d-0", (int)getpid());
	tap_is_str(joined(&c), want, "... its argv, the step named for a scancel");
	snprintf(want, sizeof(want), "ibc-%d-0", (int)getpid());
	tap_is_str(c.name, want, "... the name kept");
	tap_is_int(ibc_launch_hostcmd_srun(&c, "/usr/bin/srun", 3, 12, 4, "pmix"), IBC_OK,
		   "srun as the launch suite starts it");
	snprintf(want, sizeof(want), "/usr/bin/srun -N 3 -n 12 --ntasks-per-node=4 --mpi=pmix --job-name=ibc-%d-1",
		 (int)getpid());
	tap_is_str(joined(&c), want, "... its argv, another name");

	tap_is_int(ibc_launch_hostcmd_mpirun(&c, "mpirun", 0), IBC_ERR_INVAL, "mpirun of 0 processes: refused");
	tap_is_str(c.err, "mpirun: 0 processes (at least 1)", "... saying why");
	tap_is_int(c.argc, 0, "... and an empty argv");
	tap_is_str(c.name, "", "... and no step name");
	tap_is_int(ibc_launch_hostcmd_mpirun(&c, "", 2), IBC_ERR_INVAL, "mpirun without a program: refused");
	tap_is_str(c.err, "mpirun: no program", "... saying why");
	tap_is_int(ibc_launch_hostcmd_srun(&c, NULL, 1, 2, 2, "pmi2"), IBC_ERR_INVAL, "srun without a program");
	tap_is_int(ibc_launch_hostcmd_srun(&c, "srun", 1, 2, 2, "pmi3"), IBC_ERR_INVAL, "srun --mpi=pmi3: refused");
	tap_is_str(c.err, "srun: --mpi=pmi3: neither pmi2 nor pmix", "... saying why");
	tap_is_int(ibc_launch_hostcmd_srun(&c, "srun", -1, 2, 0, "pmi2"), IBC_ERR_INVAL, "srun on -1 nodes");
	tap_is_str(c.err, "srun: -1 nodes, 0 per node (0 or more)", "... saying why");
	tap_is_int(ibc_launch_hostcmd_srun(&c, "srun", 1, -5, 0, "pmix"), IBC_ERR_INVAL, "srun of -5 processes");
	tap_is_str(c.err, "srun: -5 processes (at least 1)", "... saying why");

	unsetenv("OMPI_ALLOW_RUN_AS_ROOT");
	unsetenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM");
	ibc_launch_hostcmd_root_env();
	allow = getenv("OMPI_ALLOW_RUN_AS_ROOT");
	confirm = getenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM");
	if (geteuid() == 0)
		tap_ok(allow != NULL && strcmp(allow, "1") == 0 && confirm != NULL && strcmp(confirm, "1") == 0,
		       "as root: Open MPI allowed to run as root");
	else
		tap_ok(allow == NULL && confirm == NULL, "not root: the environment untouched");
	return tap_done();
}
