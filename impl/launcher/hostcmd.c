/* The host MPI's launchers' command lines (mpirun.<mpi>, srun) and Open
 * MPI's run-as-root environment: see hostcmd.h. */
#include "launcher/hostcmd.h"
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned seq; /* srun job names */

static void hostcmd_arg(struct ibc_launch_hostcmd *c, const char *s)
{
	if (c->argc >= IBC_LAUNCH_HOSTCMD_MAX)
		return;
	c->argv[c->argc++] = s;
	c->argv[c->argc] = NULL;
}

static void hostcmd_argf(struct ibc_launch_hostcmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hostcmd_argf(struct ibc_launch_hostcmd *c, const char *fmt, ...)
{
	va_list ap;

	if (c->argc >= IBC_LAUNCH_HOSTCMD_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(c->store[c->argc], sizeof(c->store[0]), fmt, ap);
	va_end(ap);
	hostcmd_arg(c, c->store[c->argc]);
}

static int hostcmd_start(struct ibc_launch_hostcmd *c, const char *what, const char *prog, int np)
{
	c->argc = 0;
	c->argv[0] = NULL;
	c->err[0] = '\0';
	c->name[0] = '\0';
	if (prog == NULL || *prog == '\0') {
		snprintf(c->err, sizeof(c->err), "%s: no program", what);
		return IBC_ERR_INVAL;
	}
	if (np < 1) {
		snprintf(c->err, sizeof(c->err), "%s: %d processes (at least 1)", what, np);
		return IBC_ERR_INVAL;
	}
	return IBC_OK;
}

int ibc_launch_hostcmd_mpirun(struct ibc_launch_hostcmd *c, const char *mpirun, int np)
{
	int rc = hostcmd_start(c, "mpirun", mpirun, np);

	if (rc != IBC_OK)
		return rc;
	hostcmd_arg(c, mpirun);
	hostcmd_arg(c, "-n");
	hostcmd_argf(c, "%d", np);
	return IBC_OK;
}

int ibc_launch_hostcmd_srun(struct ibc_launch_hostcmd *c, const char *srun, int nodes, int np, int ppn,
			    const char *pmi)
{
	int rc = hostcmd_start(c, "srun", srun, np);

	if (rc != IBC_OK)
		return rc;
	if (nodes < 0 || ppn < 0) {
		snprintf(c->err, sizeof(c->err), "srun: %d nodes, %d per node (0 or more)", nodes, ppn);
		return IBC_ERR_INVAL;
	}
	if (pmi == NULL || (strcmp(pmi, "pmi2") != 0 && strcmp(pmi, "pmix") != 0)) {
		snprintf(c->err, sizeof(c->err), "srun: --mpi=%s: neither pmi2 nor pmix", pmi ? pmi : "");
		return IBC_ERR_INVAL;
	}
	hostcmd_arg(c, srun);
	if (nodes > 0) {
		hostcmd_arg(c, "-N");
		hostcmd_argf(c, "%d", nodes);
	}
	hostcmd_arg(c, "-n");
	hostcmd_argf(c, "%d", np);
	if (ppn > 0)
		hostcmd_argf(c, "--ntasks-per-node=%d", ppn);
	hostcmd_argf(c, "--mpi=%s", pmi);
	snprintf(c->name, sizeof(c->name), "ibc-%d-%u", (int)getpid(), seq++);
	hostcmd_argf(c, "--job-name=%s", c->name);
	return IBC_OK;
}

void ibc_launch_hostcmd_root_env(void)
{
	if (geteuid() != 0)
		return;
	setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
	setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
}
