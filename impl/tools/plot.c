/* `ibchar plot DIR`: the suites come from DIR/results.csv; each suite's
 * scripts are run as `python3 SCRIPT DIR` with stdout passed through. */
#include "tools/plot.h"

#include "core/csv.h"
#include "core/log.h"
#include "core/status.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_SUITES 64

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* runs argv (argv[0] a path or a name looked up in PATH); *code = exit status,
 * or 128 + signal */
static int spawn_wait(char *const *argv, int quiet, int *code)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int err, status;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return IBC_ERR_NOMEM;
	if (quiet) {
		posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	}
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err != 0) {
		if (!quiet)
			ibc_error("plot: cannot run %s: %s", argv[0], strerror(err));
		return IBC_ERR_SYS;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			ibc_error("plot: waitpid: %s", strerror(errno));
			return IBC_ERR_SYS;
		}
	}
	*code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return IBC_OK;
}

static int python_works(const char *py)
{
	char *argv[] = { (char *)py, (char *)"-c", (char *)"import matplotlib", NULL };
	int code = 1;

	return spawn_wait(argv, 1, &code) == IBC_OK && code == 0;
}

/* $IBC_PYTHON, else python3 on PATH, else /usr/bin/python3, whichever
 * imports matplotlib */
static int python_find(const char *given, const char **out)
{
	static const char *const cands[] = { "python3", "/usr/bin/python3" };
	size_t i;

	if (given == NULL)
		given = getenv("IBC_PYTHON");
	if (given != NULL && given[0] != '\0') {
		if (!python_works(given)) {
			ibc_error("plot: %s cannot import matplotlib", given);
			return IBC_ERR_NOTFOUND;
		}
		*out = given;
		return IBC_OK;
	}
	for (i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		if (python_works(cands[i])) {
			*out = cands[i];
			return IBC_OK;
		}
	}
	ibc_error("plot: no python3 with matplotlib found (apt-get install python3-matplotlib, "
		  "or set IBC_PYTHON)");
	return IBC_ERR_NOTFOUND;
}

/* distinct values of the suite column, in file order */
static int suites_read(const char *dir, char suites[][64], size_t *n)
{
	struct ibc_csv_table *t;
	char path[PATH_MAX];
	size_t r, k;
	int rc;

	*n = 0;
	if (!is_dir(dir)) {
		ibc_error("plot: %s: not a directory", dir);
		return IBC_ERR_INVAL;
	}
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (access(path, R_OK) != 0) {
		ibc_error("plot: %s: no results.csv (%s)", dir, strerror(errno));
		return IBC_ERR_INVAL;
	}
	rc = ibc_csv_read(path, &t);
	if (rc != IBC_OK)
		return IBC_ERR_INVAL;
	if (ibc_csv_column(t, "suite") < 0 || t->nrows < 2) {
		ibc_error("plot: %s: no rows with a suite column", path);
		ibc_csv_table_free(t);
		return IBC_ERR_INVAL;
	}
	for (r = 0; r + 1 < t->nrows; r++) {
		const char *s = ibc_csv_cell(t, r, "suite");

		if (s == NULL || s[0] == '\0' || strlen(s) >= 64 || strchr(s, '/') != NULL)
			continue;
		for (k = 0; k < *n && strcmp(suites[k], s) != 0; k++)
			;
		if (k == *n && *n < MAX_SUITES)
			snprintf(suites[(*n)++], 64, "%s", s);
	}
	ibc_csv_table_free(t);
	if (*n == 0) {
		ibc_error("plot: %s: no suite named in any row", path);
		return IBC_ERR_INVAL;
	}
	return IBC_OK;
}

/* buf holds PATH_MAX bytes */
static int plots_dir(const struct ibc_harness_plot_opts *o, char *buf)
{
	const char *p = o->plots != NULL ? o->plots : getenv("IBC_PLOTS");
	char guess[PATH_MAX];

	if (p == NULL || p[0] == '\0') {
		snprintf(guess, sizeof(guess), "%s/../../plots", o->bindir);
		p = guess;
	}
	if (realpath(p, buf) == NULL || !is_dir(buf)) {
		ibc_error("plot: no plots directory at %s (set IBC_PLOTS)", p);
		return IBC_ERR_NOTFOUND;
	}
	return IBC_OK;
}

int ibc_harness_plot_name_of(const char *name, const char *suite, const char *ext)
{
	size_t ls = strlen(suite), ln = strlen(name), le = strlen(ext);

	if (ln < le || strcmp(name + ln - le, ext) != 0 || strncmp(name, suite, ls) != 0)
		return 0;
	return name[ls] == '_' || strcmp(name + ls, ext) == 0;
}

static int suite_plot(const char *plots, const char *suite, const char *python, const char *dir,
		      int *nrun, int *nfail)
{
	struct dirent **ents;
	char path[PATH_MAX * 2];
	int n, i, code, rc, found = 0;

	n = scandir(plots, &ents, NULL, alphasort);
	if (n < 0) {
		ibc_error("plot: cannot list %s: %s", plots, strerror(errno));
		return IBC_ERR_IO;
	}
	for (i = 0; i < n; i++) {
		if (ibc_harness_plot_name_of(ents[i]->d_name, suite, ".py")) {
			char *argv[] = { (char *)python, path, (char *)dir, NULL };

			found = 1;
			snprintf(path, sizeof(path), "%s/%s", plots, ents[i]->d_name);
			fprintf(stderr, "ibchar plot: %s %s\n", ents[i]->d_name, dir);
			fflush(stdout);
			rc = spawn_wait(argv, 0, &code);
			(*nrun)++;
			if (rc != IBC_OK || code != 0) {
				ibc_error("plot: %s failed (exit status %d)", ents[i]->d_name,
					  rc != IBC_OK ? -1 : code);
				(*nfail)++;
			}
		}
		free(ents[i]);
	}
	free(ents);
	if (!found)
		ibc_warn("plot: no plot scripts for suite '%s' in %s", suite, plots);
	return IBC_OK;
}

int ibc_harness_plot_run(const struct ibc_harness_plot_opts *o)
{
	char suites[MAX_SUITES][64];
	char plots[PATH_MAX];
	const char *python;
	size_t n, i;
	int rc, nrun = 0, nfail = 0;

	rc = suites_read(o->dir, suites, &n);
	if (rc != IBC_OK)
		return rc;
	rc = plots_dir(o, plots);
	if (rc != IBC_OK)
		return rc;
	rc = python_find(o->python, &python);
	if (rc != IBC_OK)
		return rc;
	for (i = 0; i < n; i++) {
		rc = suite_plot(plots, suites[i], python, o->dir, &nrun, &nfail);
		if (rc != IBC_OK)
			return rc;
	}
	fprintf(stderr, "ibchar plot: %d script(s) run, %d failed\n", nrun, nfail);
	if (nfail > 0)
		return IBC_ERR_REMOTE;
	return IBC_OK;
}
