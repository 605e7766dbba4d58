/* ibchar list / ibchar run: see runner.h. */
#include "tools/runner.h"
#include "tools/suites.h"
#include "harness/avail.h"
#include "harness/harness.h"
#include "tools/summary.h"
#include "boot/boot.h"
#include "core/csv.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/progress.h"
#include "core/status.h"
#include "core/timer.h"
#include "core/topo.h"
#include "launcher/hostcmd.h"
#include "launcher/stop.h"
#include "logp/logp_model.h"
#include "logp/logp_passes.h"

#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ARGV_MAX 64

static const char *const mpi_names[] = { "openmpi", "mpich", NULL };

int ibc_harness_runner_bindir(char *buf, size_t cap)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		ibc_error("runner: cannot find my own executable: %s", strerror(errno));
		return IBC_ERR_SYS;
	}
	exe[n] = '\0';
	snprintf(buf, cap, "%s", dirname(exe));
	return IBC_OK;
}

static int bench_path(const char *bindir, const char *bench, const char *mpi, char *path, size_t cap)
{
	if (mpi != NULL)
		snprintf(path, cap, "%s/%s-%s", bindir, bench, mpi);
	else
		snprintf(path, cap, "%s/%s", bindir, bench);
	return access(path, X_OK) == 0;
}

/* The variants of a suite's bench (its -<mpi> build when mpi is set) into
 * out: the bench's own list (list_args), else the table's. */
static void variants_get(const char *bindir, const struct ibc_suite *s, const char *mpi,
			 struct ibc_opt_strlist *out)
{
	char path[4200], cmd[4400], line[256];
	FILE *f;

	memset(out, 0, sizeof(*out));
	if (s->list_args != NULL && bench_path(bindir, s->bench, mpi, path, sizeof(path))) {
		snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", path, s->list_args);
		f = popen(cmd, "r");
		if (f != NULL) {
			while (fgets(line, sizeof(line), f) != NULL) {
				line[strcspn(line, "\r\n")] = '\0';
				if (line[0] != '\0' && ibc_opt_strlist_add(out, line, 0) != IBC_OK)
					break;
			}
			pclose(f);
		}
	}
	if (out->n == 0)
		(void)ibc_opt_strlist_add(out, s->variants, 1);
}

static void variants_print(const char *bindir, const struct ibc_suite *s)
{
	struct ibc_opt_strlist names;
	size_t i;

	variants_get(bindir, s, NULL, &names);
	for (i = 0; i < names.n; i++)
		printf("%s%s", i ? " " : "", names.v[i]);
}

int ibc_harness_runner_list(const char *bindir)
{
	char path[4200], devs[512];
	size_t i;
	int m, nverbs;

	printf("Suites:\n");
	for (i = 0; i < ibc_suites_count; i++) {
		const struct ibc_suite *s = &ibc_suites[i];
		int have = bench_path(bindir, s->bench, NULL, path, sizeof(path));

		printf("  %-10s %s\n", s->name, s->description);
		printf("  %-10s variants: ", "");
		variants_print(bindir, s);
		printf("\n  %-10s bench: %s (%s); launcher %s; ranks %s%s\n", "", s->bench,
		       have ? "built" : "not built", s->launcher, s->default_ranks,
		       s->needs_verbs ? "; needs verbs" : "");
		for (m = 0; mpi_names[m] != NULL; m++)
			if (bench_path(bindir, s->bench, mpi_names[m], path, sizeof(path)))
				printf("  %-10s host-MPI build: %s-%s\n", "", s->bench, mpi_names[m]);
	}
	printf("Transports:\n");
	printf("  %-10s available (processes on this host)\n", "shm");
	nverbs = ibc_harness_avail_verbs(devs, sizeof(devs));
	if (nverbs > 0)
		printf("  %-10s available: %s\n", "verbs", devs);
	else
		printf("  %-10s not available (no verbs device with an active port)\n", "verbs");
	printf("MPIs:\n");
	for (m = 0; mpi_names[m] != NULL; m++) {
		char prog[64];
		int have;

		snprintf(prog, sizeof(prog), "mpirun.%s", mpi_names[m]);
		have = ibc_harness_avail_program(prog, path, sizeof(path));
		printf("  %-10s %s", mpi_names[m], have ? path : "mpirun not found");
		{
			size_t k, nb = 0;

			for (k = 0; k < ibc_suites_count; k++)
				if (bench_path(bindir, ibc_suites[k].bench, mpi_names[m], path, sizeof(path)))
					nb++;
			printf("; %zu bench binar%s built\n", nb, nb == 1 ? "y" : "ies");
		}
	}
	fflush(stdout);
	return IBC_OK;
}

/* ---------------------------------------------------------------- run ---- */
static const char *mpi_of(const struct ibc_harness_runner_opts *o)
{
	return o->mpi != NULL && strcmp(o->mpi, "none") != 0 ? o->mpi : NULL;
}

static int can_run_here(const char *bindir, const struct ibc_suite *s, int verbs, const char **why)
{
	char path[4200];

	if (s->needs_verbs && !verbs) {
		*why = "no active verbs device";
		return 0;
	}
	if (!bench_path(bindir, s->bench, NULL, path, sizeof(path))) {
		*why = "bench binary not built";
		return 0;
	}
	return 1;
}

/* What the wait of one launch knows: its deadline and how to end it. */
struct launch_wait {
	const char *what;       /* "barrier at 4 ranks (launcher fork)" */
	const char *rows;       /* the results.csv whose growth is progress */
	double timeout;         /* seconds without a new row; 0: none */
	const char *why;        /* how the timeout was chosen */
	const char *slurm_name; /* srun's step name, else NULL */
	const char *progress;   /* the ranks' progress records (core/progress.h), else NULL */
	int nranks;
};

static volatile sig_atomic_t wait_signal;

static void wait_on_signal(int sig)
{
	wait_signal = sig;
}

static long long rows_size(const char *path)
{
	struct stat sb;

	return path != NULL && stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* Who did not answer, from the ranks' progress records, before they end */
static void launch_blame(const struct launch_wait *w)
{
	char prefix[200], text[4096];

	if (w->progress == NULL)
		return;
	snprintf(prefix, sizeof(prefix), "ibchar: %s: ", w->what);
	if (ibc_progress_blame(w->progress, w->nranks, prefix, text, sizeof(text)) < 0)
		fprintf(stderr, "%scannot read the ranks' progress records (%s)\n", prefix, w->progress);
	else
		fputs(text, stderr);
}

/* The launch ran out of time or the runner was interrupted: end it through
 * its launcher (launcher/stop.h), say how; *exit_code 124 (timeout) or
 * 128 + the signal. */
static int launch_end(pid_t pid, const struct launch_wait *w, int *exit_code)
{
	int srun = w->slurm_name != NULL;
	double grace = srun ? 40 : 10; /* Slurm's KillWait is 30 s by default */
	struct ibc_launch_stop_how how;
	int rc;

	if (wait_signal)
		fprintf(stderr, "ibchar: %s: interrupted (%s): ending it\n", w->what, strsignal(wait_signal));
	else
		fprintf(stderr, "ibchar: %s: no new row for %g s (%s): ending it (%s)\n", w->what, w->timeout,
			w->why, srun ? "scancel of its Slurm step" : "SIGTERM to its processes, 10 s to go");
	launch_blame(w);
	rc = ibc_launch_stop(pid, w->slurm_name, grace, &how);
	/* a rank ended between making a shared segment and unlinking it */
	(void)ibc_boot_shm_sweep();
	if (srun && how.cancelled == 0)
		fprintf(stderr, "ibchar: %s: no Slurm step named %s found; sent SIGTERM to srun\n", w->what,
			w->slurm_name);
	if (how.killed)
		fprintf(stderr, "ibchar: %s: still running %g s later: killed\n", w->what, grace);
	fprintf(stderr, "ibchar: %s: ended; the rows of its finished points are kept in %s\n", w->what,
		w->rows);
	*exit_code = wait_signal ? 128 + wait_signal : 124;
	return rc;
}

/* Runs argv as the leader of its own process group and waits for it, at
 * most w->timeout seconds after its last new row (0: no deadline). */
static int spawn_wait(char **argv, const struct launch_wait *w, int *exit_code)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	struct sigaction sa, old_int, old_term;
	extern char **environ;
	long long size, last_size;
	double last_row;
	pid_t pid;
	int status = 0, err, rc = IBC_OK, done = 0;

	fflush(stdout);
	fflush(stderr);
	/* the bench's result lines are progress here: stdout is the summary */
	if (posix_spawn_file_actions_init(&fa) != 0)
		return IBC_ERR_NOMEM;
	posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
	posix_spawnattr_init(&at);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	err = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (err != 0) {
		ibc_error("runner: cannot run %s: %s", argv[0], strerror(err));
		return IBC_ERR_SYS;
	}
	/* its own group no longer gets the terminal's ^C: the runner passes
	 * it on, the launcher's own way */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wait_on_signal;
	sigemptyset(&sa.sa_mask);
	wait_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	last_size = rows_size(w->rows);
	last_row = (double)ibc_timer_mono_ns() / 1e9;
	while (!done) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid) {
			done = 1;
		} else if (r < 0 && errno != EINTR) {
			ibc_error("runner: waitpid: %s", strerror(errno));
			rc = IBC_ERR_SYS;
			done = 1;
		} else if (wait_signal || (w->timeout > 0 && (double)ibc_timer_mono_ns() / 1e9 - last_row > w->timeout)) {
			rc = launch_end(pid, w, exit_code);
			sigaction(SIGINT, &old_int, NULL);
			sigaction(SIGTERM, &old_term, NULL);
			rc = rc != IBC_OK ? rc : wait_signal ? IBC_ERR_INTERRUPTED : IBC_ERR_TIMEOUT;
			return rc;
		} else {
			usleep(100000);
			size = rows_size(w->rows);
			if (size != last_size) {
				last_size = size;
				last_row = (double)ibc_timer_mono_ns() / 1e9;
			}
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	/* whatever the launcher left in its group goes too */
	kill(-pid, SIGKILL);
	if (rc != IBC_OK)
		return rc;
	if (WIFEXITED(status)) {
		*exit_code = WEXITSTATUS(status);
	} else {
		ibc_error("runner: %s was killed by signal %d (%s)", argv[0], WTERMSIG(status),
			  strsignal(WTERMSIG(status)));
		*exit_code = 128 + WTERMSIG(status);
	}
	return IBC_OK;
}

struct argv_buf {
	char *v[ARGV_MAX + 1];
	char store[ARGV_MAX][64];
	int n;
};

static void arg_add(struct argv_buf *a, const char *s)
{
	if (a->n < ARGV_MAX)
		a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static void arg_add_all(struct argv_buf *a, const char *const *v)
{
	for (; *v != NULL; v++)
		arg_add(a, *v);
}

static void arg_addf(struct argv_buf *a, long long v)
{
	if (a->n >= ARGV_MAX)
		return;
	snprintf(a->store[a->n], sizeof(a->store[0]), "%lld", v);
	arg_add(a, a->store[a->n]);
}

static int one_launch(const struct ibc_harness_runner_opts *o, const struct ibc_suite *s,
		      const char *variants, const char *out, const char *run_id, int n,
		      int *exit_code)
{
	const char *launcher = o->launcher != NULL ? o->launcher : s->launcher;
	const char *mpi = mpi_of(o);
	const char *build_mpi;
	struct argv_buf a = { .n = 0 };
	struct ibc_launch_hostcmd hc;
	char bench[4200], mpirun[4200], prog[64], budget[32], what[160], rows[4200], why[96], tmo[32];
	char progress[4200];
	static unsigned launches;
	struct launch_wait w = { .what = what, .rows = rows, .why = why };
	struct ibc_topo_info ti;
	int rc;

	/* the deadline: a point takes its budget, a fifth more of warm-up,
	 * the setup of its variants; a launch that writes no row for three
	 * budgets and a minute is stuck.  A self-launched suite bounds each of
	 * its jobs itself (the launch suite: 120 s, a row after its trials) */
	if (o->timeout >= 0) {
		w.timeout = o->timeout;
		snprintf(why, sizeof(why), "--timeout %g", o->timeout);
	} else if (s->self_launched) {
		w.timeout = 1800;
		snprintf(why, sizeof(why), "%s bounds its own jobs: 1800 s; --timeout sets it", s->name);
	} else {
		double b = o->budget >= 0 ? o->budget : 10;

		w.timeout = b > 0 ? 3 * b + 60 : 600;
		snprintf(why, sizeof(why), b > 0 ? "3 x the %g s budget + 60 s; --timeout sets it" :
			 "no budget: 600 s; --timeout sets it", b);
	}
	snprintf(rows, sizeof(rows), "%s/results.csv", out);
	snprintf(what, sizeof(what), "%s", s->name);
	/* the ranks' own waits (PMI-2 reads) end at the same deadline */
	snprintf(tmo, sizeof(tmo), "%g", w.timeout);
	setenv("IBC_TIMEOUT", tmo, 1);

	if (s->self_launched) {
		/* the bench starts its own jobs: once, here, over --hosts x --ppn */
		if (!bench_path(o->bindir, s->bench, NULL, bench, sizeof(bench))) {
			ibc_error("runner: %s: %s not built", s->name, bench);
			return IBC_ERR_NOTFOUND;
		}
		arg_add(&a, bench);
		arg_add(&a, "--out");
		arg_add(&a, out);
		arg_add(&a, "--run-id");
		arg_add(&a, run_id);
		if (o->hosts != NULL) {
			arg_add(&a, "--hosts");
			arg_add(&a, o->hosts);
		}
		if (o->ppn != NULL) {
			arg_add(&a, "--ppn");
			arg_add(&a, o->ppn);
		}
		if (variants != NULL) {
			arg_add(&a, "--variants");
			arg_add(&a, variants);
		}
		if (o->iters > 0) {
			arg_add(&a, "--iters");
			arg_addf(&a, o->iters);
		}
		return spawn_wait(a.v, &w, exit_code);
	}
	if (strcmp(launcher, "mpirun") == 0 && mpi == NULL)
		mpi = "openmpi";
	if (mpi != NULL && !bench_path(o->bindir, s->bench, mpi, bench, sizeof(bench))) {
		/* a suite without a host-MPI build runs as it always does */
		fprintf(stderr, "ibchar: %s has no -%s build; it runs under its own launcher (%s)\n",
			s->name, mpi, s->launcher);
		mpi = NULL;
		launcher = s->launcher;
	}
	if (mpi != NULL && strcmp(launcher, "mpirun") != 0 && strcmp(launcher, "tree") != 0 &&
	    strcmp(launcher, "srun") != 0) {
		/* --mpi alone: the launcher that can start the MPI build (an
		 * explicit other launcher was refused before the run) */
		launcher = "mpirun";
	}
	/* the host-MPI build under mpirun, ibchar-launch or srun, else the plain one */
	build_mpi = strcmp(launcher, "mpirun") == 0 || strcmp(launcher, "tree") == 0 ||
			    strcmp(launcher, "srun") == 0 ? mpi : NULL;
	if (!bench_path(o->bindir, s->bench, build_mpi, bench, sizeof(bench))) {
		ibc_error("runner: %s: %s not built", s->name, bench);
		return IBC_ERR_NOTFOUND;
	}
	if (strcmp(launcher, "mpirun") == 0) {
		snprintf(prog, sizeof(prog), "mpirun.%s", mpi);
		if (!ibc_harness_avail_program(prog, mpirun, sizeof(mpirun))) {
			ibc_error("runner: %s not found on PATH", prog);
			return IBC_ERR_NOTFOUND;
		}
		rc = ibc_launch_hostcmd_mpirun(&hc, mpirun, n);
		if (rc != IBC_OK) {
			ibc_error("runner: %s", hc.err);
			return rc;
		}
		arg_add_all(&a, hc.argv);
		if (ibc_topo_query(&ti) == IBC_OK && n > ti.allowed_pus) {
			if (strcmp(mpi, "mpich") == 0) {
				ibc_warn("runner: %s: %d ranks > %d PUs: MPICH busy-polls, not oversubscribing it; skipped",
					 s->name, n, ti.allowed_pus);
				return IBC_ERR_UNSUPPORTED;
			}
			arg_add(&a, "--oversubscribe");
		}
		ibc_launch_hostcmd_root_env();
	} else if (strcmp(launcher, "srun") == 0) {
		/* inside an allocation or not: srun places the ranks; the plain
		 * build bootstraps over PMI-2, Open MPI's over PMIx; shm (or auto
		 * with no RDMA device here) needs every rank on one node */
		const char *x = o->xport != NULL ? o->xport : "auto";
		char devs[64];

		if (!ibc_harness_avail_program("srun", mpirun, sizeof(mpirun))) {
			ibc_error("runner: --launcher srun: srun not found on PATH");
			return IBC_ERR_NOTFOUND;
		}
		rc = ibc_launch_hostcmd_srun(&hc, mpirun, 0, n, 0,
					     mpi != NULL && strcmp(mpi, "openmpi") == 0 ? "pmix" : "pmi2");
		if (rc != IBC_OK) {
			ibc_error("runner: %s", hc.err);
			return rc;
		}
		arg_add_all(&a, hc.argv);
		w.slurm_name = hc.name;
		if (strcmp(x, "shm") == 0 ||
		    (strcmp(x, "auto") == 0 && ibc_harness_avail_verbs(devs, sizeof(devs)) <= 0))
			arg_add(&a, "-N1");
		if (mpi != NULL)
			ibc_launch_hostcmd_root_env();
	} else if (strcmp(launcher, "tree") == 0) {
		/* ibchar-launch on this host (local remote shell): the bench finds PMI_FD */
		if (!bench_path(o->bindir, "ibchar-launch", NULL, mpirun, sizeof(mpirun))) {
			ibc_error("runner: %s not built", mpirun);
			return IBC_ERR_NOTFOUND;
		}
		arg_add(&a, mpirun);
		arg_add(&a, "-n");
		arg_addf(&a, n);
		arg_add(&a, "--");
	}
	arg_add(&a, bench);
	arg_add(&a, "--ranks");
	arg_addf(&a, n);
	arg_add(&a, "--out");
	arg_add(&a, out);
	arg_add(&a, "--run-id");
	arg_add(&a, run_id);
	arg_add(&a, "--launcher");
	arg_add(&a, launcher);
	if (variants != NULL) {
		arg_add(&a, "--variants");
		arg_add(&a, variants);
	}
	if (o->fanin != NULL) {
		arg_add(&a, "--fanin");
		arg_add(&a, o->fanin);
	}
	if (o->sizes != NULL) {
		arg_add(&a, "--sizes");
		arg_add(&a, o->sizes);
	}
	if (o->xport != NULL) {
		arg_add(&a, "--xport");
		arg_add(&a, o->xport);
	}
	if (mpi != NULL) {
		arg_add(&a, "--mpi");
		arg_add(&a, mpi);
	}
	if (o->iters > 0) {
		arg_add(&a, "--iters");
		arg_addf(&a, o->iters);
	}
	if (o->warmup >= 0) {
		arg_add(&a, "--warmup");
		arg_addf(&a, o->warmup);
	}
	if (o->budget >= 0) {
		snprintf(budget, sizeof(budget), "%g", o->budget);
		arg_add(&a, "--budget");
		arg_add(&a, budget);
	}
	if (o->validate)
		arg_add(&a, "--validate");
	if (o->sync != IBC_HARNESS_SYNC_AUTO) {
		arg_add(&a, "--sync");
		arg_add(&a, ibc_harness_sync_names[o->sync]);
	}
	if (ibc_log_enabled(IBC_LOG_INFO)) {
		int i;

		fprintf(stderr, "ibchar: running");
		for (i = 0; i < a.n; i++)
			fprintf(stderr, " %s", a.v[i]);
		fprintf(stderr, "\n");
	}
	snprintf(what, sizeof(what), "%s at %d ranks (launcher %s)", s->name, n, launcher);
	/* where each rank is, read if the launch has to be ended: in the run's
	 * directory, which ranks on other hosts see when it is shared */
	snprintf(progress, sizeof(progress), "%s/.ranks-%u", out, launches++);
	if (ibc_progress_create(progress, n) == IBC_OK) {
		w.progress = progress;
		w.nranks = n;
		setenv("IBC_PROGRESS", progress, 1);
	}
	fprintf(stderr, "ibchar: %s: deadline %g s without a new row (%s)\n", what, w.timeout, why);
	rc = spawn_wait(a.v, &w, exit_code);
	if (w.progress != NULL) {
		unsetenv("IBC_PROGRESS");
		unlink(progress);
	}
	return rc;
}

int ibc_harness_runner_model(const char *dir, const char *fits_dir, int pus, int any_placement,
			     int b2b, int meas_mean)
{
	struct ibc_logp_family fams[16];
	struct ibc_logp_model_opts mo = { .dir = dir, .fits_dir = fits_dir, .fams = fams,
					  .out = stdout, .pus = pus, .any_placement = any_placement,
					  .b2b = b2b, .meas_mean = meas_mean };
	size_t i;

	for (i = 0; i < ibc_suites_count && mo.nfams < 16; i++)
		if (ibc_suites[i].rounds != NULL)
			fams[mo.nfams++] = (struct ibc_logp_family){ ibc_suites[i].name,
								     ibc_suites[i].rounds };
	return ibc_logp_model_dir(&mo);
}

static const char *const launcher_names[] = { "fork", "local", "mpirun", "tree", "srun", "auto", NULL };
static const char *const xport_names[] = { "shm", "verbs", "auto", NULL };

/* The sweep options a bench would refuse, found before anything runs or a
 * directory is made: one line each, IBC_ERR_INVAL. */
static int run_opts_check(const struct ibc_harness_runner_opts *o)
{
	struct ibc_opt_list l;
	size_t j;

	if (o->mpi != NULL && strcmp(o->mpi, "none") != 0 && ibc_opt_choice_find(mpi_names, o->mpi) < 0) {
		fprintf(stderr, "ibchar: unknown MPI '%s' (openmpi, mpich or none)\n", o->mpi);
		return IBC_ERR_INVAL;
	}
	if (o->launcher != NULL && ibc_opt_choice_find(launcher_names, o->launcher) < 0) {
		fprintf(stderr, "ibchar: unknown launcher '%s' (fork, mpirun, tree or srun)\n", o->launcher);
		return IBC_ERR_INVAL;
	}
	if (o->xport != NULL && ibc_opt_choice_find(xport_names, o->xport) < 0) {
		fprintf(stderr, "ibchar: unknown transport '%s' (shm, verbs or auto)\n", o->xport);
		return IBC_ERR_INVAL;
	}
	if (o->sizes != NULL) {
		if (ibc_opt_list_parse(o->sizes, 1, &l) != IBC_OK || l.n == 0) {
			fprintf(stderr, "ibchar: bad size list '%s' (e.g. 8,4K,1M or 1..4M)\n", o->sizes);
			return IBC_ERR_INVAL;
		}
		for (j = 0; j < l.n; j++)
			if (l.v[j] < 0) {
				fprintf(stderr, "ibchar: bad size list '%s': %lld bytes\n", o->sizes, (long long)l.v[j]);
				return IBC_ERR_INVAL;
			}
		if (l.n > IBC_HARNESS_MAX_SIZES) {
			fprintf(stderr, "ibchar: --sizes '%s' gives %zu sizes; a run takes at most %d\n", o->sizes, l.n,
				IBC_HARNESS_MAX_SIZES);
			return IBC_ERR_INVAL;
		}
	}
	if (o->fanin != NULL) {
		if (ibc_opt_list_parse(o->fanin, 0, &l) != IBC_OK || l.n == 0) {
			fprintf(stderr, "ibchar: bad fan-in list '%s'\n", o->fanin);
			return IBC_ERR_INVAL;
		}
		for (j = 0; j < l.n; j++)
			if (l.v[j] < 1) {
				fprintf(stderr, "ibchar: bad fan-in list '%s': %lld (a fan-in is >= 1)\n", o->fanin,
					(long long)l.v[j]);
				return IBC_ERR_INVAL;
			}
	}
	if (o->ranks != NULL) {
		if (ibc_opt_list_parse(o->ranks, 0, &l) != IBC_OK || l.n == 0) {
			fprintf(stderr, "ibchar: bad rank list '%s'\n", o->ranks);
			return IBC_ERR_INVAL;
		}
		for (j = 0; j < l.n; j++)
			if (l.v[j] < 1) {
				fprintf(stderr, "ibchar: bad rank list '%s': %lld ranks (a run needs N >= 1)\n",
					o->ranks, (long long)l.v[j]);
				return IBC_ERR_INVAL;
			}
	}
	return IBC_OK;
}

/* One pass of the sweep: every suite of todo at every rank count, rows
 * under run_id.  *ran and *failed count launches. */
static int run_pass(const struct ibc_harness_runner_opts *o, const struct ibc_suite *const *todo, size_t ntodo,
		    const struct ibc_opt_strlist *want, const struct ibc_opt_strlist *have, const char *out,
		    const char *run_id, int *ran, int *failed)
{
	struct ibc_opt_list ranks;
	size_t i, j;
	int rc, code;

	if (o->ranks != NULL && ibc_opt_list_parse(o->ranks, 0, &ranks) != IBC_OK)
		return IBC_ERR_INVAL; /* checked before */
	setenv("IBC_RUN_ID", run_id, 1);
	for (i = 0; i < ntodo; i++) {
		const struct ibc_suite *s = todo[i];
		char mine[2048] = "";
		size_t w, used = 0;

		for (w = 0; have != NULL && w < want->n; w++)
			if ((strcmp(want->v[w], "all") == 0 || ibc_opt_strlist_has(&have[i], want->v[w])) &&
			    used + strlen(want->v[w]) + 2 < sizeof(mine))
				used += (size_t)snprintf(mine + used, sizeof(mine) - used, "%s%s",
							 used ? "," : "", want->v[w]);
		if (have != NULL && mine[0] == '\0') {
			fprintf(stderr, "ibchar: %s: none of --variants %s is one of its variants; "
				"skipped\n", s->name, o->variants);
			continue;
		}
		if (s->self_launched) {
			if (o->ranks != NULL || mpi_of(o) != NULL || o->launcher != NULL)
				fprintf(stderr, "ibchar: %s starts its own jobs over --hosts x --ppn with every "
					"launcher: --ranks, --mpi and --launcher do not apply to it\n", s->name);
			code = 1;
			rc = one_launch(o, s, have != NULL ? mine : NULL, out, run_id, 1, &code);
			if (rc == IBC_ERR_INTERRUPTED)
				return rc;
			if (rc == IBC_OK && code == 2) {
				fprintf(stderr, "ibchar: %s rejected its options (exit 2)\n", s->name);
				return IBC_ERR_INVAL;
			}
			if (rc != IBC_OK || code != 0) {
				fprintf(stderr, "ibchar: %s failed (exit %d)\n", s->name, code);
				(*failed)++;
			} else {
				(*ran)++;
			}
			continue;
		}
		if (o->ranks == NULL && ibc_opt_list_parse(s->default_ranks, 0, &ranks) != IBC_OK) {
			ibc_error("runner: suite %s: bad default ranks '%s'", s->name, s->default_ranks);
			(*failed)++;
			continue;
		}
		for (j = 0; j < ranks.n; j++) {
			int n = (int)ranks.v[j];

			if (n < s->min_ranks || (s->max_ranks > 0 && n > s->max_ranks)) {
				if (s->max_ranks == s->min_ranks)
					fprintf(stderr, "ibchar: %s runs on %d ranks: N = %d skipped\n",
						s->name, s->min_ranks, n);
				else
					fprintf(stderr, "ibchar: %s runs on %d..%d ranks: N = %d skipped\n",
						s->name, s->min_ranks, s->max_ranks ? s->max_ranks : 1 << 20, n);
				continue;
			}
			code = 1;
			rc = one_launch(o, s, have != NULL ? mine : NULL, out, run_id, n, &code);
			if (rc == IBC_ERR_INTERRUPTED)
				return rc;
			if (rc == IBC_ERR_UNSUPPORTED)
				continue;
			if (rc == IBC_OK && code == 2) {
				/* the bench rejected its options (it said why): a usage error */
				fprintf(stderr, "ibchar: %s rejected its options (exit 2)\n", s->name);
				return IBC_ERR_INVAL;
			}
			if (rc != IBC_OK || code != 0) {
				fprintf(stderr, "ibchar: %s at %d ranks failed (exit %d)\n", s->name, n, code);
				if (code == 77)
					continue; /* the bench says: unsupported here */
				(*failed)++;
				continue;
			}
			(*ran)++;
		}
	}
	return IBC_OK;
}

int ibc_harness_runner_run(const struct ibc_harness_runner_opts *o)
{
	static struct ibc_opt_strlist want;
	struct ibc_opt_strlist *have = NULL; /* per suite, with --variants */
	const struct ibc_suite *todo[64];
	char out_buf[256], stamp[48], run_id[64], devs[256];
	const char *out = o->out, *why;
	size_t i, j, ntodo = 0;
	int verbs, failed = 0, ran = 0, rc, pass, repeat = o->repeat > 0 ? (int)o->repeat : 1;
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (out == NULL) {
		snprintf(out_buf, sizeof(out_buf), "results/%s", stamp);
		out = out_buf;
	}
	rc = run_opts_check(o);
	if (rc != IBC_OK)
		return rc;
	verbs = ibc_harness_avail_verbs(devs, sizeof(devs)) > 0;
	if (o->nsuites == 0) {
		for (i = 0; i < ibc_suites_count && ntodo < 64; i++) {
			if (ibc_suites[i].self_launched)
				fprintf(stderr, "ibchar: suite %s skipped: it starts its own jobs over "
					"--hosts x --ppn; name it to run it (ibchar run %s)\n",
					ibc_suites[i].name, ibc_suites[i].name);
			else if (can_run_here(o->bindir, &ibc_suites[i], verbs, &why))
				todo[ntodo++] = &ibc_suites[i];
			else
				fprintf(stderr, "ibchar: suite %s skipped: %s\n", ibc_suites[i].name, why);
		}
	} else {
		for (i = 0; i < o->nsuites && ntodo < 64; i++) {
			const struct ibc_suite *s = ibc_suite_find(o->suites[i]);

			if (s == NULL) {
				fprintf(stderr, "ibchar: unknown suite '%s' (see 'ibchar list')\n", o->suites[i]);
				return IBC_ERR_INVAL;
			}
			todo[ntodo++] = s;
		}
	}
	if (ntodo == 0) {
		fprintf(stderr, "ibchar: no suite can run here\n");
		return IBC_ERR_UNSUPPORTED;
	}
	if (mpi_of(o) != NULL) {
		char path[4200];
		size_t nbuilt = 0;

		if (o->launcher != NULL && strcmp(o->launcher, "mpirun") != 0 &&
		    strcmp(o->launcher, "tree") != 0 && strcmp(o->launcher, "srun") != 0) {
			fprintf(stderr, "ibchar: --mpi %s runs the -%s build of a suite, which --launcher "
				"%s cannot start: add --launcher mpirun (or tree, or srun), or drop --mpi\n",
				o->mpi, o->mpi, o->launcher);
			return IBC_ERR_INVAL;
		}
		for (i = 0; i < ntodo; i++)
			nbuilt += (size_t)bench_path(o->bindir, todo[i]->bench, o->mpi, path, sizeof(path));
		if (nbuilt == 0) {
			fprintf(stderr, "ibchar: --mpi %s: no suite of this run has a -%s build here (is %s "
				"installed? see 'ibchar list')\n", o->mpi, o->mpi, o->mpi);
			return IBC_ERR_INVAL;
		}
		if (o->launcher == NULL)
			fprintf(stderr, "ibchar: --mpi %s: the -%s builds run under mpirun.%s\n", o->mpi,
				o->mpi, o->mpi);
	}
	/* --variants shared by several suites: each suite gets its own names; a
	 * name that is no suite's is an error, a suite with none of them is
	 * skipped.  Each bench lists its variants once. */
	if (o->variants != NULL) {
		size_t k, w;

		memset(&want, 0, sizeof(want));
		have = calloc(ntodo, sizeof(*have));
		if (have == NULL || ibc_opt_strlist_add(&want, o->variants, 1) != IBC_OK) {
			fprintf(stderr, "ibchar: bad variant list '%s'\n", o->variants);
			free(have);
			return IBC_ERR_INVAL;
		}
		for (i = 0; i < ntodo; i++)
			variants_get(o->bindir, todo[i], mpi_of(o), &have[i]);
		for (w = 0; w < want.n; w++) {
			for (k = 0; k < ntodo && !ibc_opt_strlist_has(&have[k], want.v[w]); k++)
				;
			if (k == ntodo && strcmp(want.v[w], "all") != 0) {
				fprintf(stderr, "ibchar: unknown variant '%s' (known:", want.v[w]);
				for (k = 0; k < ntodo; k++)
					for (j = 0; j < have[k].n; j++)
						fprintf(stderr, " %s", have[k].v[j]);
				fprintf(stderr, ")\n");
				free(have);
				return IBC_ERR_INVAL;
			}
		}
	}
	if (o->dry_run) {
		/* everything above is what a run checks before it starts: nothing made, nothing run */
		fprintf(stderr, "ibchar: dry run: the options hold;");
		for (i = 0; i < ntodo; i++)
			fprintf(stderr, " %s", todo[i]->name);
		fprintf(stderr, " would run into %s\n", out);
		free(have);
		return IBC_OK;
	}
	rc = ibc_fs_mkdir_p(out);
	if (rc != IBC_OK) {
		free(have);
		return rc;
	}
	for (pass = 1; pass <= repeat && rc == IBC_OK; pass++) {
		/* each pass its own run_id, so compare can tell the runs apart */
		if (repeat > 1)
			snprintf(run_id, sizeof(run_id), "%s.%d", stamp, pass);
		else
			snprintf(run_id, sizeof(run_id), "%s", stamp);
		if (repeat > 1)
			fprintf(stderr, "ibchar: pass %d of %d: run %s -> %s\n", pass, repeat, run_id, out);
		else
			fprintf(stderr, "ibchar: run %s -> %s\n", run_id, out);
		rc = run_pass(o, todo, ntodo, &want, have, out, run_id, &ran, &failed);
	}
	free(have);
	if (rc != IBC_OK)
		return rc;
	if (repeat > 1)
		printf("Summary of pass %d of %d (run %s; every pass's rows are in %s/results.csv)\n", repeat,
		       repeat, run_id, out);
	ibc_harness_summary_print(out, run_id);
	/* the closed loop, when this run measured both the model and something it predicts */
	if (ran > 0) {
		char fits[4200];
		int predicted = 0;

		for (i = 0; i < ntodo; i++)
			predicted |= todo[i]->rounds != NULL;
		snprintf(fits, sizeof(fits), "%s/fits.csv", out);
		if (predicted && access(fits, R_OK) == 0) {
			printf("\n");
			fflush(stdout);
			if (ibc_harness_runner_model(out, NULL, 0, 0, 1, 0) != IBC_OK)
				failed++;
		}
	}
	if (failed > 0) {
		fprintf(stderr, "ibchar: %d launch%s failed\n", failed, failed == 1 ? "" : "es");
		return IBC_ERR_REMOTE;
	}
	return ran > 0 ? IBC_OK : IBC_ERR_UNSUPPORTED;
}
