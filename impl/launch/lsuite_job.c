/* The launch suite's jobs: the command line of each launcher (ibchar-launch,
 * mpirun.mpich, mpirun.openmpi, srun), the remote-shell wrapper the mpiruns
 * use, starting a job in its own process group, its timeout, and reading
 * its processes' stamps into the phases.  See lsuite.h. */
#include "launch/lsuite_priv.h"
#include "launcher/hostcmd.h"
#include "launcher/stop.h"
#include "core/log.h"
#include "core/status.h"
#include "core/topo.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* --------------------------------------------------------------- a job ---- */
struct job {
	char *argv[ARGS_MAX + 1];
	char store[ARGS_MAX][256];
	int argc;
	char slurm_name[32]; /* srun's step, for a scancel on timeout */
};

static void job_arg(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_arg(struct job *j, const char *fmt, ...)
{
	va_list ap;

	if (j->argc >= ARGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(j->store[j->argc], sizeof(j->store[0]), fmt, ap);
	va_end(ap);
	j->argv[j->argc] = j->store[j->argc];
	j->argv[++j->argc] = NULL;
}

/* An argument that outlives the job's build (no copy, any length). */
static void job_arg_ref(struct job *j, char *arg)
{
	if (j->argc >= ARGS_MAX)
		return;
	j->argv[j->argc] = arg;
	j->argv[++j->argc] = NULL;
}

/* The head of a host launcher's command line (impl/launcher/hostcmd.c). */
static int job_head(struct job *j, const struct ibc_launch_hostcmd *c, int rc)
{
	int i;

	if (rc != IBC_OK) {
		ibc_error("launch: %s", c->err);
		return rc;
	}
	for (i = 0; i < c->argc; i++)
		job_arg(j, "%s", c->argv[i]);
	return IBC_OK;
}

/* The host list: each of the first h hosts m times (m agents per host). */
static void host_list(const struct ls *ls, int h, int m, int slots, char *buf, size_t cap)
{
	size_t used = 0;
	int i, r;

	buf[0] = '\0';
	for (i = 0; i < h; i++)
		for (r = 0; r < m; r++) {
			if (slots > 0)
				used += (size_t)snprintf(buf + used, cap > used ? cap - used : 0, "%s%s:%d",
							 used ? "," : "", ls->hostnames[i], slots);
			else
				used += (size_t)snprintf(buf + used, cap > used ? cap - used : 0, "%s%s",
							 used ? "," : "", ls->hostnames[i]);
		}
}


static int job_build(const struct ls *ls, const struct jobspec *js, const char *stamp, struct job *j)
{
	static char hosts[MAX_HOSTS * 24];
	struct ibc_launch_hostcmd hc;
	const struct lspec *s = js->s;
	int np = js->h * js->c * js->m, local = strcmp(ls->rsh, "local") == 0;
	int mpi = s->kind == L_OPENMPI || s->kind == L_SRUN_PMIX;
	char stages[16];

	j->argc = 0;
	j->slurm_name[0] = '\0';
	switch (s->kind) {
	case L_TREE:
	case L_FLAT:
		job_arg(j, "%s", ls->launch);
		job_arg(j, "-n");
		job_arg(j, "%d", np);
		if (!(local && js->h * js->m == 1)) {
			host_list(ls, js->h, js->m, 0, hosts, sizeof(hosts));
			job_arg(j, "--hosts");
			job_arg_ref(j, hosts);
			job_arg(j, "--ppn");
			job_arg(j, "%d", js->c);
		}
		job_arg(j, "--rsh");
		if (ls->o->rsh_delay_ms > 0 && ls->wrapper[0] != '\0')
			job_arg(j, "%s {host}", ls->wrapper);
		else
			job_arg(j, "%s", ls->rsh);
		job_arg(j, "--timeout");
		job_arg(j, "%ld", ls->o->timeout_s);
		if (s->kind == L_FLAT) {
			job_arg(j, "--mode");
			job_arg(j, "flat");
		}
		if (s->degree > 0) {
			job_arg(j, "--degree");
			job_arg(j, "%d", s->degree);
		}
		if (s->max_conn > 0) {
			job_arg(j, "--max-conn");
			job_arg(j, "%d", s->max_conn);
		}
		if (js->cache != NULL) {
			job_arg(j, "--cache");
			job_arg(j, "%s", js->cache);
			if (strcmp(js->cache, "hcmab-lru") == 0) {
				job_arg(j, "--cache-bytes");
				job_arg(j, "%d", np * LRU_STAGES * ENTRY_BYTES_EST);
			}
		}
		if (js->stats != NULL) {
			job_arg(j, "--stats-csv");
			job_arg(j, "%s", js->stats);
		}
		job_arg(j, "--");
		break;
	case L_MPICH:
		if (job_head(j, &hc, ibc_launch_hostcmd_mpirun(&hc, ls->mpirun[0], np)) != IBC_OK)
			return IBC_ERR_INVAL;
		if (!local) {
			host_list(ls, js->h, 1, 0, hosts, sizeof(hosts));
			job_arg(j, "-ppn");
			job_arg(j, "%d", js->c);
			job_arg(j, "-hosts");
			job_arg_ref(j, hosts);
			if (ls->wrapper[0] != '\0') {
				job_arg(j, "-launcher");
				job_arg(j, "rsh");
				job_arg(j, "-launcher-exec");
				job_arg(j, "%s", ls->wrapper);
			}
			if (ls->iface[0] != '\0') {
				job_arg(j, "-iface");
				job_arg(j, "%s", ls->iface);
			}
		}
		break;
	case L_OPENMPI: {
		struct ibc_topo_info ti;

		if (job_head(j, &hc, ibc_launch_hostcmd_mpirun(&hc, ls->mpirun[1], np)) != IBC_OK)
			return IBC_ERR_INVAL;
		if (!local) {
			host_list(ls, js->h, 1, js->c, hosts, sizeof(hosts));
			job_arg(j, "--host");
			job_arg_ref(j, hosts);
			if (ls->wrapper[0] != '\0') {
				job_arg(j, "--mca");
				job_arg(j, "plm_rsh_agent");
				job_arg(j, "%s", ls->wrapper);
			}
			if (ls->cidr[0] != '\0') {
				job_arg(j, "--mca");
				job_arg(j, "oob_tcp_if_include");
				job_arg(j, "%s", ls->cidr);
				job_arg(j, "--mca");
				job_arg(j, "btl_tcp_if_include");
				job_arg(j, "%s", ls->cidr);
			}
		}
		if (ls->testhosts) {
			/* several orteds on one machine race in hwloc_shmem_topology_write
			 * (a segfault in about 1 job of 6); one per node on a cluster */
			job_arg(j, "--mca");
			job_arg(j, "rtc");
			job_arg(j, "^hwloc");
		}
		if (ibc_topo_query(&ti) != IBC_OK || js->c > ti.allowed_pus || local)
			job_arg(j, "--oversubscribe");
		break;
	}
	case L_SRUN:
	case L_SRUN_PMIX:
		if (job_head(j, &hc, ibc_launch_hostcmd_srun(&hc, ls->srun, js->h, np, js->c,
							    s->kind == L_SRUN_PMIX ? "pmix" : "pmi2")) != IBC_OK)
			return IBC_ERR_INVAL;
		job_arg(j, "--time=%ld", (ls->o->timeout_s + 59) / 60);
		snprintf(j->slurm_name, sizeof(j->slurm_name), "%s", hc.name);
		break;
	}
	switch (js->prog) {
	case P_TRUE:
	case P_PMI:
		job_arg(j, "%s", ls->probe);
		job_arg(j, "%s", stamp);
		if (js->prog == P_TRUE) {
			job_arg(j, "true");
		} else {
			snprintf(stages, sizeof(stages), "%ld", js->stages);
			job_arg(j, "pmi");
			job_arg(j, "%s", js->pattern);
			job_arg(j, "%s", stages);
		}
		break;
	default:
		job_arg(j, "%s", ls->hello[mpi]);
		job_arg(j, "%s", stamp);
		break;
	}
	return IBC_OK;
}

static pid_t spawn_job(char **argv, const char *log)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	extern char **environ;
	pid_t pid = -1;
	int err;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
	posix_spawnattr_init(&at);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	err = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (err != 0) {
		ibc_error("launch: cannot run %s: %s", argv[0], strerror(err));
		return -1;
	}
	return pid;
}

/* Waits for pid up to timeout_s, then ends the job its launcher's way
 * (launcher/stop.h: scancel of srun's step, else SIGTERM to the group and
 * SIGKILL 10 s later): the exit status (128+N for a signal, 124 for the
 * timeout) and the instant. */
static int wait_job(pid_t pid, const char *slurm_name, long timeout_s, int64_t *t_exit)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), status = 0, timed_out = 0;

	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		int r;

		do
			r = poll(&p, 1, timeout_s > 0 ? (int)(timeout_s * 1000) : -1);
		while (r < 0 && errno == EINTR);
		if (r == 0)
			timed_out = 1;
		close(pfd);
	}
	*t_exit = ibc_launch_stamp_now();
	if (timed_out) {
		struct ibc_launch_stop_how how;

		(void)ibc_launch_stop(pid, slurm_name[0] != '\0' ? slurm_name : NULL,
				      slurm_name[0] != '\0' ? 40 : 10, &how);
		fprintf(stderr, "launch: the job ran out of its %ld s: %s%s\n", timeout_s,
			how.cancelled ? "its Slurm step cancelled" : "SIGTERM to its launcher",
			how.killed ? ", then killed" : "");
		return 124;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pfd < 0)
		*t_exit = ibc_launch_stamp_now();
	/* whatever the launcher left in its group goes too */
	kill(-pid, SIGKILL);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void log_tail(const char *log)
{
	char line[512];
	FILE *f = fopen(log, "r");
	int n = 0;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL && n++ < 6)
		fprintf(stderr, "  | %s", line);
	if (f != NULL)
		fclose(f);
}


/* Runs one job and checks it: every process stamped, and for pmi/hello each
 * knew the job's size and its own distinct rank (singletons are caught). */
int ibc_lsuite_job_do(struct ls *ls, const struct jobspec *js, struct result *res)
{
	char stamp[4300], log[4300];
	struct ibc_launch_stamp *st = NULL;
	int np = js->h * js->c * js->m, code, i, rc = IBC_OK;
	int64_t t0, t1, last_start = 0, last_init = 0;
	unsigned char *seen = NULL;
	struct job j;
	size_t n = 0, k;
	pid_t pid;

	snprintf(stamp, sizeof(stamp), "%s/stamps", ls->dir);
	snprintf(log, sizeof(log), "%s/job.log", ls->dir);
	unlink(stamp);
	rc = job_build(ls, js, stamp, &j);
	if (rc != IBC_OK)
		return rc;
	if (ibc_log_enabled(IBC_LOG_INFO)) {
		fprintf(stderr, "launch: job");
		for (i = 0; i < j.argc; i++)
			fprintf(stderr, " %s", j.argv[i]);
		fprintf(stderr, "\n");
	}
	ls->jobs++;
	t0 = ibc_launch_stamp_now();
	pid = spawn_job(j.argv, log);
	if (pid < 0)
		return IBC_ERR_SYS;
	code = wait_job(pid, j.slurm_name, ls->o->timeout_s, &t1);
	if (code != 0) {
		fprintf(stderr, "launch: %s %s at %dx%d%s failed with exit %d%s; its output:\n", js->s->name,
			ibc_lsuite_prog_names[js->prog], js->h, js->c, js->m > 1 ? " (multiplied)" : "", code,
			code == 124 ? " (timeout)" : "");
		log_tail(log);
		return IBC_ERR_REMOTE;
	}
	rc = ibc_launch_stamps_read(stamp, &st, &n);
	if (rc != IBC_OK) {
		fprintf(stderr, "launch: %s: unreadable stamp file %s\n", js->s->name, stamp);
		return rc;
	}
	seen = calloc((size_t)np, 1);
	if ((int)n != np) {
		fprintf(stderr, "launch: %s %s: %zu of %d processes stamped\n", js->s->name, ibc_lsuite_prog_names[js->prog], n,
			np);
		rc = IBC_ERR_REMOTE;
	}
	memset(res, 0, sizeof(*res));
	for (k = 0; rc == IBC_OK && k < n; k++) {
		if (js->prog != P_TRUE &&
		    (st[k].size != np || st[k].rank < 0 || st[k].rank >= np || seen == NULL || seen[st[k].rank]++)) {
			fprintf(stderr, "launch: %s %s: a process says rank %d of %d in a job of %d%s\n", js->s->name,
				ibc_lsuite_prog_names[js->prog], st[k].rank, st[k].size, np,
				st[k].size == 1 ? ": singletons (the wrong --mpi plugin?)" : "");
			rc = IBC_ERR_REMOTE;
			break;
		}
		if (st[k].t_start > last_start)
			last_start = st[k].t_start;
		if (st[k].t_init > last_init)
			last_init = st[k].t_init;
		for (i = 0; i < st[k].nstages; i++)
			if (st[k].stage[i] / 1e3 > res->stage_us[i])
				res->stage_us[i] = (double)st[k].stage[i] / 1e3;
		if (st[k].nstages > res->nstages)
			res->nstages = st[k].nstages;
	}
	res->spawn_us = (double)(last_start - t0) / 1e3;
	res->init_us = last_init > last_start ? (double)(last_init - last_start) / 1e3 : 0;
	res->total_us = (double)(t1 - t0) / 1e3;
	free(st);
	free(seen);
	return rc;
}

