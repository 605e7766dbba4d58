/* The node agent's spawning: local processes with their rank's
 * environment, and node agents on other hosts through the remote shell
 * (its argv from the --rsh template). */
#define _GNU_SOURCE
#include "launcher/agent_loop.h"
#include "launcher/rsh.h"
#include "launcher/tree.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------- spawning --- */

static void argv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void child_unblock_signals(void)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
}

void ibc_launch_proc_env(const struct ibc_launch_job *j, int rank, int fd)
{
	int node = ibc_launch_rank_node(j->start, (int)j->nnodes, rank);
	int lsize = j->start[node + 1] - j->start[node];
	char v[64];
	int i;

#define SETI(name, val) do { snprintf(v, sizeof(v), "%d", (int)(val)); setenv(name, v, 1); } while (0)
	if (fd >= 0)
		SETI("PMI_FD", fd);
	SETI("PMI_RANK", rank);
	SETI("PMI_SIZE", j->np);
	SETI("IBC_LAUNCH_RANK", rank);
	SETI("IBC_LAUNCH_SIZE", j->np);
	SETI("IBC_LAUNCH_LOCAL_RANK", rank - j->start[node]);
	SETI("IBC_LAUNCH_LOCAL_SIZE", lsize);
	SETI("IBC_LAUNCH_NODE", node);
	SETI("IBC_LAUNCH_NNODES", j->nnodes);
	SETI("IBC_LAUNCH_JOBID", j->jobid);
	SETI("MPI_LOCALRANKID", rank - j->start[node]);
	SETI("MPI_LOCALNRANKS", lsize);
#undef SETI
	setenv("IBC_LAUNCH_HOST", j->hosts[node], 1);
	unsetenv("PMI_PORT");
	unsetenv("PMI_ID");
	for (i = 0; i < j->nenv; i++) {
		char *eq = strchr(j->env[i], '=');

		if (eq != NULL) {
			char *name = strndup(j->env[i], (size_t)(eq - j->env[i]));

			if (name) {
				setenv(name, eq + 1, 1);
				free(name);
			}
		}
	}
}

/* Forks a local process of this node with its PMI socket and pipes. */
int ibc_launch_spawn_local(struct ibc_launch_agent *a, struct ibc_launch_proc *p)
{
	int sv[2], out[2], err[2], in[2], ep[2], e = 0;
	pid_t pid;
	ssize_t r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    pipe2(err, O_CLOEXEC) < 0 || pipe2(in, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		ibc_error("launch: pipes for rank %d: %s", p->rank, strerror(errno));
		return IBC_ERR_SYS;
	}
	pid = fork();
	if (pid < 0) {
		ibc_error("launch: fork for rank %d: %s", p->rank, strerror(errno));
		return IBC_ERR_SYS;
	}
	if (pid == 0) {
		child_unblock_signals();
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		fcntl(sv[1], F_SETFD, 0);
		ibc_launch_proc_env(&a->job, p->rank, sv[1]);
		if (chdir(a->job.cwd) != 0) {
			/* keep the agent's directory */
		}
		execvp(a->job.argv[0], a->job.argv);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0) {
			/* nothing to do */
		}
		_exit(127);
	}
	setpgid(pid, pid); /* also here: no window where kill(-pid) misses */
	close(sv[1]);
	close(out[1]);
	close(err[1]);
	close(in[0]);
	close(ep[1]);
	r = read(ep[0], &e, sizeof(e));
	close(ep[0]);
	p->pid = pid;
	p->sock = sv[0];
	p->ofd[0] = out[0];
	p->ofd[1] = err[0];
	p->infd = in[1];
	ibc_launch_fd_nonblock(p->sock);
	ibc_launch_fd_nonblock(p->ofd[0]);
	ibc_launch_fd_nonblock(p->ofd[1]);
	ibc_launch_fd_nonblock(p->infd);
	if (r == (ssize_t)sizeof(e)) {
		ibc_launch_fail(a, p->rank, 127, "rank %d on %s: cannot execute '%s': %s", p->rank,
				ibc_launch_host_of(a, p->rank), a->job.argv[0], strerror(e));
		return IBC_ERR_NOTFOUND;
	}
	return IBC_OK;
}

/* Starts argv through the remote shell for host; stdio: pipes when io != NULL
 * (io[0] stdin write end, io[1] stdout, io[2] stderr read ends), else
 * /dev/null in and inherited out/err. */
int ibc_launch_spawn_rsh(struct ibc_launch_agent *a, const char *host, char **cmd, int *io, pid_t *pid_out)
{
	char **argv = NULL;
	int rc = ibc_launch_rsh_argv(a->job.rsh, host, cmd, &argv), in[2] = { -1, -1 }, out[2] = { -1, -1 },
	    err[2] = { -1, -1 };
	pid_t pid;

	if (rc != IBC_OK)
		return rc;
	if (io != NULL && (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)) {
		ibc_error("launch: pipes: %s", strerror(errno));
		argv_free(argv);
		return IBC_ERR_SYS;
	}
	pid = fork();
	if (pid < 0) {
		ibc_error("launch: fork: %s", strerror(errno));
		argv_free(argv);
		return IBC_ERR_SYS;
	}
	if (pid == 0) {
		child_unblock_signals();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (io != NULL) {
			setpgid(0, 0); /* a process: its group is killed with it */
			dup2(in[0], 0);
			dup2(out[1], 1);
			dup2(err[1], 2);
		} else {
			int nul = open("/dev/null", O_RDONLY);

			if (nul >= 0)
				dup2(nul, 0);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "ibchar-launch: cannot run the remote shell '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	argv_free(argv);
	if (io != NULL) {
		setpgid(pid, pid);
		close(in[0]);
		close(out[1]);
		close(err[1]);
		io[0] = in[1];
		io[1] = out[0];
		io[2] = err[0];
	}
	*pid_out = pid;
	return IBC_OK;
}
