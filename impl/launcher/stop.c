/* Ending a launch that ran out of time: see stop.h. */
#include "launcher/stop.h"
#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* scancel ID, waited for */
static int scancel_one(const char *id)
{
	char *argv[] = { "scancel", (char *)id, NULL };
	extern char **environ;
	pid_t pid;
	int status = 0, err = posix_spawnp(&pid, "scancel", NULL, NULL, argv, environ);

	if (err != 0) {
		ibc_error("launch: cannot run scancel %s: %s", id, strerror(err));
		return IBC_ERR_SYS;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? IBC_OK : IBC_ERR_REMOTE;
}

int ibc_launch_stop_slurm(const char *name)
{
	char line[512], id[64], nm[256];
	int n = 0;
	FILE *f;

	if (name == NULL || name[0] == '\0')
		return 0;
	/* the steps, each "JOBID.STEPID NAME" */
	f = popen("squeue -h -s -o '%i %j' 2>/dev/null", "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%63s %255s", id, nm) == 2 && strcmp(nm, name) == 0) {
			ibc_info("launch: scancel %s (step %s)", id, name);
			if (scancel_one(id) == IBC_OK)
				n++;
		}
	pclose(f);
	return n;
}

/* waitpid(pid) until deadline (< 0: none): 1 reaped, 0 still running, -1 error */
static int reap_by(pid_t pid, double deadline, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, deadline < 0 ? 0 : WNOHANG);

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
		if (r == 0) {
			if ((double)ibc_timer_mono_ns() / 1e9 >= deadline)
				return 0;
			usleep(50000);
		}
	}
}

int ibc_launch_stop(pid_t pid, const char *slurm_name, double grace_s, struct ibc_launch_stop_how *how)
{
	int r;

	memset(how, 0, sizeof(*how));
	how->cancelled = ibc_launch_stop_slurm(slurm_name);
	if (how->cancelled == 0)
		kill(-pid, SIGTERM);
	r = reap_by(pid, (double)ibc_timer_mono_ns() / 1e9 + grace_s, &how->status);
	if (r == 0) {
		how->killed = 1;
		kill(-pid, SIGKILL);
		r = reap_by(pid, -1, &how->status);
	}
	/* whatever the launcher left in its group goes too */
	kill(-pid, SIGKILL);
	return r == 1 ? IBC_OK : IBC_ERR_SYS;
}
