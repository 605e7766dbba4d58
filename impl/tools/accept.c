/* ibchar accept: see accept.h.  This file makes the runs, checks their rows
 * and reports; the spec is read by accept_spec.c (accept_priv.h). */
#include "tools/accept.h"
#include "tools/accept_priv.h"
#include "tools/junit.h"
#include "core/csv.h"
#include "core/fs.h"
#include "core/opt.h"
#include "core/status.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* the columns accept reads to tell rows apart */
static const char *const id_cols[] = { "run_id", "suite", "variant", "impl", "xport", "ranks", "bytes", "fanin", NULL };

/* ---------------------------------------------------------- the runs ---- */

/* How well a line of a run's output says why it failed: 3 an error logged
 * (": error: ", or a sanitizer's "ERROR: "), 2 the launch that failed
 * ("barrier at 4 ranks failed (exit 1)"), 1 any other line, 0 none (blank,
 * or the "Try '... --help'" hint after a usage error). */
static int error_rank(const char *s)
{
	if (strstr(s, ": error: ") != NULL || strstr(s, "ERROR: ") != NULL)
		return 3;
	if (strstr(s, " failed (exit ") != NULL)
		return 2;
	if (s[0] == '\0' || strncmp(s, "Try '", 5) == 0)
		return 0;
	return 1;
}

/* `ibchar run [--dry-run] ARGS --out DIR`: its output (stdout and stderr)
 * is passed on to stderr unless quiet, and the line that best says why it
 * failed is kept in last.  *code: its exit status, 128 + the signal that
 * killed it. */
static int run_spawn(const struct acc *a, const struct run_line *rl, int dry, int quiet, int *code, char *last,
		     size_t cap)
{
	char *w[MAX_WORDS + 6], prog[4200], args[1024], *line = NULL;
	posix_spawn_file_actions_t fa;
	extern char **environ;
	int n, status, p[2], err, best = 0, k;
	size_t lcap = 0;
	pid_t pid;
	FILE *out;

	snprintf(prog, sizeof(prog), "%s/ibchar", a->o->bindir);
	snprintf(args, sizeof(args), "%s", rl->args);
	w[0] = prog;
	w[1] = "run";
	k = 2;
	if (dry)
		w[k++] = "--dry-run";
	n = ibc_accept_words_split(args, w + k, MAX_WORDS);
	w[k + n] = "--out";
	w[k + n + 1] = (char *)a->o->dir;
	w[k + n + 2] = NULL;
	last[0] = '\0';
	if (!dry)
		fprintf(stderr, "ibchar accept: line %d: ibchar run%s --out %s\n", rl->line, rl->args, a->o->dir);
	fflush(stdout);
	fflush(stderr);
	if (pipe(p) != 0) {
		fprintf(stderr, "ibchar accept: pipe: %s\n", strerror(errno));
		return IBC_ERR_SYS;
	}
	if (posix_spawn_file_actions_init(&fa) != 0) {
		close(p[0]);
		close(p[1]);
		return IBC_ERR_NOMEM;
	}
	posix_spawn_file_actions_addclose(&fa, p[0]);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDERR_FILENO);
	posix_spawn_file_actions_addclose(&fa, p[1]);
	err = posix_spawn(&pid, prog, &fa, NULL, w, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (err != 0) {
		close(p[0]);
		fprintf(stderr, "ibchar accept: cannot run %s: %s\n", prog, strerror(err));
		return IBC_ERR_SYS;
	}
	out = fdopen(p[0], "r");
	if (out == NULL) {
		close(p[0]);
	} else {
		while (getline(&line, &lcap, out) >= 0) {
			int r;

			if (!quiet)
				fputs(line, stderr);
			line[strcspn(line, "\r\n")] = '\0';
			r = error_rank(line);
			if (r > 0 && r >= best) {
				best = r;
				snprintf(last, cap, "%s", line);
			}
		}
		free(line);
		fclose(out);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "ibchar accept: waitpid: %s\n", strerror(errno));
			return IBC_ERR_SYS;
		}
	}
	*code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (WIFSIGNALED(status) && best < 3)
		snprintf(last, cap, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	return IBC_OK;
}

/* Every run line through `ibchar run --dry-run`: a line it refuses (exit 2)
 * is a bad spec, named by its line.  IBC_OK, IBC_ERR_INVAL, or
 * IBC_ERR_REMOTE when a line would not run here (report is set). */
static int runs_dry(const struct acc *a, int report)
{
	char last[512];
	size_t i;
	int rc = IBC_OK, code, st;

	for (i = 0; i < a->nr; i++) {
		st = run_spawn(a, &a->rl[i], 1, !report, &code, last, sizeof(last));
		if (st != IBC_OK)
			return st;
		if (code == 2) {
			fprintf(stderr, "ibchar accept: %s:%d: ibchar run refuses the line: %s: run%s\n", a->o->spec,
				a->rl[i].line, last[0] ? last : "exit 2", a->rl[i].args);
			rc = IBC_ERR_INVAL;
		} else if (code != 0 && report) {
			fprintf(stderr, "ibchar accept: %s:%d: the line would not run here (exit %d): %s\n", a->o->spec,
				a->rl[i].line, code, last);
			if (rc == IBC_OK)
				rc = IBC_ERR_REMOTE;
		}
	}
	return rc;
}

static int verdict_add(struct acc *a, struct verdict **v)
{
	if (ibc_accept_array_grow((void **)&a->vd, &a->vcap, a->nv, sizeof(*a->vd)) != IBC_OK)
		return IBC_ERR_NOMEM;
	*v = &a->vd[a->nv++];
	memset(*v, 0, sizeof(**v));
	return IBC_OK;
}

/* DIR/results.csv into a->t (replacing it); a missing file is no rows. */
static int results_load(struct acc *a, int must_exist)
{
	char path[4200];
	size_t i;

	if (a->t != NULL)
		ibc_csv_table_free(a->t);
	a->t = NULL;
	a->nrows = 0;
	snprintf(path, sizeof(path), "%s/results.csv", a->o->dir);
	if (access(path, F_OK) != 0 && !must_exist)
		return IBC_OK;
	if (access(path, R_OK) != 0) {
		fprintf(stderr, "ibchar accept: cannot read %s: %s\n", path, strerror(errno));
		return IBC_ERR_INVAL;
	}
	if (ibc_csv_read(path, &a->t) != IBC_OK) {
		fprintf(stderr, "ibchar accept: %s is not a readable CSV file (above: why)\n", path);
		return IBC_ERR_INVAL;
	}
	for (i = 0; id_cols[i] != NULL; i++)
		if (ibc_csv_column(a->t, id_cols[i]) < 0) {
			fprintf(stderr, "ibchar accept: %s has no %s column: not an ibchar results.csv\n", path,
				id_cols[i]);
			return IBC_ERR_INVAL;
		}
	a->nrows = a->t->nrows - 1;
	return IBC_OK;
}

static const char *cell(const struct acc *a, size_t r, const char *col)
{
	const char *c = ibc_csv_cell(a->t, r, col);

	return c != NULL ? c : "";
}

/* The group of (run_id, line), added when new. */
static int group_of(struct acc *a, const char *run_id, int line, int *out)
{
	size_t i;

	for (i = 0; i < a->ng; i++)
		if (a->g[i].line == line && strcmp(a->g[i].run_id, run_id) == 0) {
			*out = (int)i;
			return IBC_OK;
		}
	if (ibc_accept_array_grow((void **)&a->g, &a->gcap, a->ng, sizeof(*a->g)) != IBC_OK)
		return IBC_ERR_NOMEM;
	snprintf(a->g[a->ng].run_id, sizeof(a->g[0].run_id), "%s", run_id);
	a->g[a->ng].line = line;
	*out = (int)a->ng++;
	return IBC_OK;
}

/* The spec's run lines, one after the other, into DIR.  The rows a line
 * made are the rows it appended to results.csv: accept counts them before
 * and after, so rows already in DIR are never checked, whatever their
 * run_id.  A line that fails is a verdict (not ok); one that ibchar run
 * refuses stops everything (IBC_ERR_INVAL). */
static int runs_do(struct acc *a)
{
	size_t i, *first = NULL, *end = NULL, r;
	char last[512];
	int rc, code, gi;

	rc = runs_dry(a, 0);
	if (rc != IBC_OK)
		return rc;
	first = calloc(a->nr + 1, sizeof(*first));
	end = calloc(a->nr + 1, sizeof(*end));
	if (first == NULL || end == NULL) {
		rc = IBC_ERR_NOMEM;
		goto out_free;
	}
	rc = ibc_fs_mkdir_p(a->o->dir);
	if (rc == IBC_OK)
		rc = results_load(a, 0);
	if (rc != IBC_OK)
		goto out_free;
	for (i = 0; i < a->nr; i++) {
		struct verdict *v;

		first[i] = a->nrows;
		rc = run_spawn(a, &a->rl[i], 0, 0, &code, last, sizeof(last));
		if (rc == IBC_OK)
			rc = results_load(a, 0);
		if (rc != IBC_OK)
			goto out_free;
		if (a->nrows < first[i]) {
			fprintf(stderr, "ibchar accept: %s/results.csv lost rows during line %d's run (%zu, now %zu)\n",
				a->o->dir, a->rl[i].line, first[i], a->nrows);
			rc = IBC_ERR_INVAL;
			goto out_free;
		}
		end[i] = a->nrows;
		if (code == 2) {
			fprintf(stderr, "ibchar accept: %s:%d: ibchar run refused the line's options (exit 2): %s\n",
				a->o->spec, a->rl[i].line, last);
			rc = IBC_ERR_INVAL;
			goto out_free;
		}
		rc = verdict_add(a, &v);
		if (rc != IBC_OK)
			goto out_free;
		v->ok = code == 0;
		snprintf(v->name, sizeof(v->name), "line %d: run%.600s", a->rl[i].line, a->rl[i].args);
		if (code == 0)
			snprintf(v->text, sizeof(v->text), "%zu rows", end[i] - first[i]);
		else
			snprintf(v->text, sizeof(v->text), "exit %d: %s (%zu rows written)", code,
				 last[0] ? last : "no error line", end[i] - first[i]);
	}
	a->grp = malloc((a->nrows + 1) * sizeof(*a->grp));
	if (a->grp == NULL) {
		rc = IBC_ERR_NOMEM;
		goto out_free;
	}
	for (r = 0; r < a->nrows; r++)
		a->grp[r] = -1;
	for (i = 0; i < a->nr; i++)
		for (r = first[i]; r < end[i]; r++) {
			rc = group_of(a, cell(a, r, "run_id"), a->rl[i].line, &gi);
			if (rc != IBC_OK)
				goto out_free;
			a->grp[r] = gi;
		}
out_free:
	free(first);
	free(end);
	return rc;
}

/* The directory given: every run in it, or those --run-id names. */
static int runs_of_dir(struct acc *a)
{
	struct ibc_opt_strlist want;
	size_t r, i;
	int rc, gi;

	memset(&want, 0, sizeof(want));
	rc = results_load(a, 1);
	if (rc != IBC_OK)
		return rc;
	if (a->o->run_ids != NULL && ibc_opt_strlist_add(&want, a->o->run_ids, 1) != IBC_OK) {
		fprintf(stderr, "ibchar accept: bad --run-id list '%s'\n", a->o->run_ids);
		return IBC_ERR_INVAL;
	}
	a->grp = malloc((a->nrows + 1) * sizeof(*a->grp));
	if (a->grp == NULL)
		return IBC_ERR_NOMEM;
	for (r = 0; r < a->nrows; r++) {
		a->grp[r] = -1;
		rc = group_of(a, cell(a, r, "run_id"), 0, &gi);
		if (rc != IBC_OK)
			return rc;
		if (want.n == 0 || ibc_opt_strlist_has(&want, cell(a, r, "run_id")))
			a->grp[r] = gi;
	}
	for (i = 0; i < want.n; i++) {
		for (gi = 0; gi < (int)a->ng && strcmp(a->g[gi].run_id, want.v[i]) != 0; gi++)
			;
		if (gi == (int)a->ng) {
			fprintf(stderr, "ibchar accept: %s holds no run %s (its runs:", a->o->dir, want.v[i]);
			for (gi = 0; gi < (int)a->ng; gi++)
				fprintf(stderr, " %s", a->g[gi].run_id);
			fprintf(stderr, ")\n");
			return IBC_ERR_INVAL;
		}
	}
	if (want.n == 0 && a->ng > 1) {
		fprintf(stderr, "ibchar accept: %s holds %zu runs; every one is checked (--run-id picks):", a->o->dir,
			a->ng);
		for (gi = 0; gi < (int)a->ng; gi++)
			fprintf(stderr, " %s", a->g[gi].run_id);
		fprintf(stderr, "\n");
	}
	return IBC_OK;
}

/* -------------------------------------------------------- the checks ---- */

/* "barrier rds (ibchar) shm N=4 bytes=0 fanin=3", and the run when more
 * than one is checked. */
static void row_desc(const struct acc *a, size_t r, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s %s (%s) %s N=%s bytes=%s%s%s", cell(a, r, "suite"), cell(a, r, "variant"),
			 cell(a, r, "impl"), cell(a, r, "xport"), cell(a, r, "ranks"), cell(a, r, "bytes"),
			 cell(a, r, "fanin")[0] ? " fanin=" : "", cell(a, r, "fanin"));
	const struct group *g;

	if (a->ng < 2 || a->grp[r] < 0 || n < 0 || (size_t)n >= cap)
		return;
	g = &a->g[a->grp[r]];
	if (g->line > 0)
		snprintf(buf + n, cap - (size_t)n, " (run %s of line %d)", g->run_id, g->line);
	else
		snprintf(buf + n, cap - (size_t)n, " (run %s)", g->run_id);
}

/* A time or a size of row r: IBC_OK; IBC_ERR_NOTFOUND for an empty cell
 * (why says so); IBC_ERR_PROTO for a damaged one (not a number, infinite,
 * negative), logged here in one line: damaged input. */
static int num_get(const struct acc *a, size_t r, const char *col, double *out, char *why, size_t cap)
{
	char desc[300];
	int rc = ibc_csv_num_strict(a->t, r, col, out);

	if (rc == IBC_OK && *out >= 0)
		return IBC_OK;
	if (rc == IBC_ERR_NOTFOUND) {
		row_desc(a, r, desc, sizeof(desc));
		snprintf(why, cap, "%s has no %s", desc, col);
		return IBC_ERR_NOTFOUND;
	}
	row_desc(a, r, desc, sizeof(desc));
	fprintf(stderr, "ibchar accept: %s/results.csv, row %zu (%s): %s is '%s', not %s\n", a->o->dir, r + 1, desc,
		col, cell(a, r, col), strcmp(col, "bytes") == 0 ? "a size" : "a time (a finite number >= 0)");
	return IBC_ERR_PROTO;
}

/* b2b_p50_us: the back-to-back loop's median, a key of the row's extra */
static int b2b_get(const struct acc *a, size_t r, double *out, char *why, size_t cap)
{
	char buf[64], desc[300];
	const char *v = ibc_csv_extra_get(cell(a, r, "extra"), "b2b_p50_us", buf, sizeof(buf));

	row_desc(a, r, desc, sizeof(desc));
	if (v == NULL) {
		snprintf(why, cap, "%s has no b2b_p50_us (no back-to-back loop)", desc);
		return IBC_ERR_NOTFOUND;
	}
	if (ibc_csv_num_text(v, out) != IBC_OK || *out < 0) {
		fprintf(stderr, "ibchar accept: %s/results.csv, row %zu (%s): b2b_p50_us is '%s', not a "
			"time (a finite number >= 0)\n", a->o->dir, r + 1, desc, v);
		return IBC_ERR_PROTO;
	}
	return IBC_OK;
}

static int metric_get(const struct acc *a, size_t r, const char *m, double *out, char *why, size_t cap)
{
	double p, b;
	int rc;

	if (strcmp(m, "b2b_p50_us") == 0)
		return b2b_get(a, r, out, why, cap);
	if (strcmp(m, "mbps") != 0)
		return num_get(a, r, m, out, why, cap);
	rc = num_get(a, r, "p50_us", &p, why, cap);
	if (rc == IBC_OK)
		rc = num_get(a, r, "bytes", &b, why, cap);
	if (rc != IBC_OK)
		return rc;
	if (p == 0) {
		snprintf(why, cap, "p50_us is 0: no rate");
		return IBC_ERR_NOTFOUND;
	}
	*out = b / p;
	return IBC_OK;
}

static int row_selected(const struct acc *a, size_t r, const struct check *c)
{
	int i, model_named = 0;

	if (a->grp[r] < 0)
		return 0;
	if (strcmp(cell(a, r, "suite"), c->suite) != 0 || strcmp(cell(a, r, "variant"), c->variant) != 0)
		return 0;
	for (i = 0; i < c->nsel; i++) {
		if (strcmp(cell(a, r, c->sel_key[i]), c->sel_val[i]) != 0)
			return 0;
		model_named |= strcmp(c->sel_key[i], "impl") == 0;
	}
	/* predictions are not measurements */
	return model_named || strcmp(cell(a, r, "impl"), "model") != 0;
}

/* What the reference of check c for row r must be: column = value pairs,
 * and whether a reference without a fan-in also does (fanin_none). */
struct want {
	const char *col[12], *val[12];
	int n;
	const char *fanin;   /* the reference's fan-in */
	int fanin_none;      /* a row with no fan-in matches too */
	int impl_set;        /* impl given: model rows are not excluded */
};

static void want_add(struct want *w, const char *col, const char *val)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (strcmp(w->col[i], col) == 0) {
			w->val[i] = val;
			return;
		}
	w->col[w->n] = col;
	w->val[w->n++] = val;
}

static void want_build(const struct acc *a, size_t r, const struct check *c, char *bytes, size_t bcap, struct want *w)
{
	int i;

	memset(w, 0, sizeof(*w));
	w->fanin = cell(a, r, "fanin");
	if (c->ref == REF_ROW) {
		snprintf(bytes, bcap, "%lld", c->ref_bytes);
		want_add(w, "suite", c->ref_suite);
		want_add(w, "variant", c->ref_variant);
		want_add(w, "bytes", bytes);
		w->fanin_none = 1;
	} else {
		want_add(w, "suite", cell(a, r, "suite"));
		want_add(w, "bytes", cell(a, r, "bytes"));
		if (strcmp(c->ref_key, "impl") == 0) {
			want_add(w, "variant", cell(a, r, "variant"));
			want_add(w, "impl", c->ref_val);
			w->impl_set = 1;
		} else {
			/* variant=X takes any measured impl: the host MPI's */
			want_add(w, "variant", c->ref_val);
			w->fanin_none = 1; /* MPI_Barrier has no fan-in */
		}
	}
	want_add(w, "xport", cell(a, r, "xport"));
	want_add(w, "ranks", cell(a, r, "ranks"));
	for (i = 0; i < c->nov; i++) {
		if (strcmp(c->ov_key[i], "fanin") == 0) {
			w->fanin = c->ov_val[i];
			w->fanin_none = 0;
			continue;
		}
		want_add(w, c->ov_key[i], c->ov_val[i]);
		w->impl_set |= strcmp(c->ov_key[i], "impl") == 0;
	}
}

/* Whether q is the reference w describes. */
static int want_match(const struct acc *a, size_t q, const struct want *w)
{
	const char *f = cell(a, q, "fanin");
	int i;

	for (i = 0; i < w->n; i++)
		if (strcmp(cell(a, q, w->col[i]), w->val[i]) != 0)
			return 0;
	if (!w->impl_set && strcmp(cell(a, q, "impl"), "model") == 0)
		return 0;
	return strcmp(f, w->fanin) == 0 || (w->fanin_none && f[0] == '\0');
}

static const char *want_get(const struct want *w, const char *col)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (strcmp(w->col[i], col) == 0)
			return w->val[i];
	return "";
}

/* The rows that match in one place (r's run, or the others): how many,
 * the last of them. */
struct pick {
	long n, q;
};

/* impl=openmpi beside an ibchar variant: the MPI's rows at that point have
 * variants of their own; name them. */
static void impl_hint(const struct acc *a, size_t r, const char *impl, char *why, size_t cap)
{
	size_t used = strlen(why), list = 0, q;
	const char *v;

	for (q = 0; q < a->nrows && used + 80 < cap; q++) {
		if (a->grp[q] != a->grp[r] || strcmp(cell(a, q, "impl"), impl) != 0 ||
		    strcmp(cell(a, q, "suite"), cell(a, r, "suite")) != 0 ||
		    strcmp(cell(a, q, "ranks"), cell(a, r, "ranks")) != 0 ||
		    strcmp(cell(a, q, "bytes"), cell(a, r, "bytes")) != 0 ||
		    strcmp(cell(a, q, "xport"), cell(a, r, "xport")) != 0)
			continue;
		v = cell(a, q, "variant");
		if (list > 0 && strstr(why + list, v) != NULL)
			continue;
		if (list == 0) {
			used += (size_t)snprintf(why + used, cap - used, "; %s's rows there are variant ", impl);
			list = used;
			used += (size_t)snprintf(why + used, cap - used, "%s", v);
		} else {
			used += (size_t)snprintf(why + used, cap - used, ", %s", v);
		}
	}
	if (list > 0 && used < cap)
		snprintf(why + used, cap - used, " (variant=X names one)");
}

/* The reference row of check c for row r: the one row that matches, in
 * r's own run first (impl=X and variant=X: only there, the point beside
 * it).  *ref = -1 and why when none or several. */
static void reference_find(const struct acc *a, size_t r, const struct check *c, long *ref, char *why, size_t cap)
{
	struct pick same = { 0, -1 }, other = { 0, -1 }, *p = &same;
	char bytes[32], desc[300];
	struct want w;
	size_t q;

	*ref = -1;
	want_build(a, r, c, bytes, sizeof(bytes), &w);
	for (q = 0; q < a->nrows; q++) {
		if (a->grp[q] < 0 || !want_match(a, q, &w))
			continue;
		p = a->grp[q] == a->grp[r] ? &same : &other;
		p->n++;
		p->q = (long)q;
	}
	p = &same;
	if (same.n == 0 && c->ref == REF_ROW)
		p = &other; /* another run line's row: the link's, say */
	if (p->n == 1) {
		*ref = p->q;
		return;
	}
	if (p->n > 1) {
		row_desc(a, (size_t)p->q, desc, sizeof(desc));
		snprintf(why, cap, "%ld rows match the reference (one is %s): name it with KEY=VALUE after the "
			 "reference", p->n, desc);
		return;
	}
	if (c->ref == REF_ROW) {
		snprintf(why, cap, "no %s %s row at %s bytes with N=%s on %s%s%s in the runs checked", c->ref_suite,
			 c->ref_variant, bytes, want_get(&w, "ranks"), want_get(&w, "xport"),
			 w.fanin[0] ? ", fan-in " : "", w.fanin);
		return;
	}
	snprintf(why, cap, "no row with %s=%s beside it in its run (same suite, xport, N, bytes, fan-in)",
		 c->ref_key, c->ref_val);
	if (strcmp(c->ref_key, "impl") == 0)
		impl_hint(a, r, c->ref_val, why, cap);
}

static int holds(double v, const char *op, double bound)
{
	if (strcmp(op, "<=") == 0)
		return v <= bound;
	if (strcmp(op, "<") == 0)
		return v < bound;
	if (strcmp(op, ">=") == 0)
		return v >= bound;
	return v > bound;
}

/* 1 when row r failed its own correctness check (extra valid=0): its
 * figure is not the time of a correct operation */
static int row_invalid(const struct acc *a, size_t r)
{
	char v[8];
	const char *e = ibc_csv_cell(a->t, r, "extra");

	return e != NULL && ibc_csv_extra_get(e, "valid", v, sizeof(v)) != NULL && strcmp(v, "0") == 0;
}

/* One verdict: check c on row r.  IBC_ERR_PROTO for damaged input. */
static int check_row(struct acc *a, const struct check *c, size_t r, struct verdict *v)
{
	char desc[300], rdesc[300], why[500] = "";
	double val, refv = 1, bound;
	long ref = -1;
	int rc;

	row_desc(a, r, desc, sizeof(desc));
	snprintf(v->name, sizeof(v->name), "line %d: %s: %s", c->line, desc, c->threshold);
	rc = metric_get(a, r, c->metric, &val, why, sizeof(why));
	if (rc == IBC_ERR_NOTFOUND) {
		snprintf(v->text, sizeof(v->text), "%s", why);
		return IBC_OK;
	}
	if (rc != IBC_OK)
		return rc;
	if (row_invalid(a, r)) {
		snprintf(v->text, sizeof(v->text), "%s = %.4g, but the row failed its correctness check "
			 "(valid=0): not the time of a correct run", c->metric, val);
		return IBC_OK;
	}
	if (c->ref == REF_PROBE) {
		rc = num_get(a, r, "probe_us", &refv, why, sizeof(why));
		if (rc == IBC_OK && refv == 0) {
			snprintf(why, sizeof(why), "the row's placement probe is 0");
			rc = IBC_ERR_NOTFOUND;
		}
		if (rc == IBC_ERR_NOTFOUND) {
			snprintf(v->text, sizeof(v->text), "%s = %.4g; %s", c->metric, val, why);
			return IBC_OK;
		}
		if (rc != IBC_OK)
			return rc;
	} else if (c->ref != REF_NONE) {
		reference_find(a, r, c, &ref, why, sizeof(why));
		if (ref < 0) {
			snprintf(v->text, sizeof(v->text), "%s = %.4g; %s", c->metric, val, why);
			return IBC_OK;
		}
		rc = metric_get(a, (size_t)ref, c->metric, &refv, why, sizeof(why));
		if (rc == IBC_ERR_NOTFOUND) {
			snprintf(v->text, sizeof(v->text), "%s = %.4g; the reference: %s", c->metric, val, why);
			return IBC_OK;
		}
		if (rc != IBC_OK)
			return rc;
		row_desc(a, (size_t)ref, rdesc, sizeof(rdesc));
		if (row_invalid(a, (size_t)ref)) {
			snprintf(v->text, sizeof(v->text), "%s = %.4g; the reference %s failed its correctness "
				 "check (valid=0)", c->metric, val, rdesc);
			return IBC_OK;
		}
	}
	bound = c->factor * refv;
	v->ok = holds(val, c->op, bound);
	if (c->ref == REF_NONE)
		snprintf(v->text, sizeof(v->text), "%s = %.4g, bound %.4g", c->metric, val, bound);
	else if (c->ref == REF_PROBE)
		snprintf(v->text, sizeof(v->text), "%s = %.4g, bound %.4g = %g x the row's probe_us %.4g", c->metric, val,
			 bound, c->factor, refv);
	else
		snprintf(v->text, sizeof(v->text), "%s = %.4g, bound %.4g = %g x %.4g, the %s of %s", c->metric, val,
			 bound, c->factor, refv, c->metric, rdesc);
	return IBC_OK;
}

static int checks_do(struct acc *a)
{
	size_t i, r, matched;
	struct verdict *v;
	int rc;

	for (i = 0; i < a->nc; i++) {
		const struct check *c = &a->cs[i];

		matched = 0;
		for (r = 0; r < a->nrows; r++) {
			if (!row_selected(a, r, c))
				continue;
			matched++;
			rc = verdict_add(a, &v);
			if (rc == IBC_OK)
				rc = check_row(a, c, r, v);
			if (rc != IBC_OK)
				return rc == IBC_ERR_PROTO ? IBC_ERR_INVAL : rc;
		}
		if (matched > 0)
			continue;
		rc = verdict_add(a, &v);
		if (rc != IBC_OK)
			return rc;
		snprintf(v->name, sizeof(v->name), "line %d: %s", c->line, c->text);
		snprintf(v->text, sizeof(v->text), "no row of the runs checked matches (they did not produce it)");
	}
	return IBC_OK;
}

static int report(struct acc *a)
{
	struct ibc_junit_case *jc;
	size_t i, nfail = 0;
	int rc = IBC_OK;

	printf("1..%zu\n", a->nv);
	for (i = 0; i < a->nv; i++) {
		printf("%sok %zu - %s: %s\n", a->vd[i].ok ? "" : "not ", i + 1, a->vd[i].name, a->vd[i].text);
		nfail += !a->vd[i].ok;
	}
	printf("# %zu verdicts from %s (run lines: %zu, check lines: %zu): %zu failed\n", a->nv, a->o->spec, a->nr,
	       a->nc, nfail);
	fflush(stdout);
	if (a->o->junit != NULL) {
		jc = calloc(a->nv + 1, sizeof(*jc));
		if (jc == NULL)
			return IBC_ERR_NOMEM;
		for (i = 0; i < a->nv; i++)
			jc[i] = (struct ibc_junit_case){ a->vd[i].name, a->vd[i].text, a->vd[i].ok };
		rc = ibc_harness_junit_write(a->o->junit, "ibchar accept", jc, a->nv);
		free(jc);
	}
	if (rc == IBC_OK && nfail > 0)
		rc = IBC_ERR_REMOTE;
	return rc;
}

int ibc_harness_accept(const struct ibc_accept_opts *o)
{
	struct acc a = { .o = o };
	size_t i;
	int rc;

	rc = ibc_accept_spec_read(&a);
	if (rc == IBC_OK && o->junit != NULL)
		rc = ibc_harness_junit_check(o->junit, "ibchar accept");
	if (rc != IBC_OK)
		goto out;
	if (o->dry_run) {
		rc = runs_dry(&a, 1);
		for (i = 0; i < a.nr; i++)
			printf("run %d:%s\n", a.rl[i].line, a.rl[i].args);
		for (i = 0; i < a.nc; i++)
			printf("check %d: %s\n", a.cs[i].line, a.cs[i].text);
		goto out;
	}
	rc = o->run ? runs_do(&a) : runs_of_dir(&a);
	if (rc == IBC_OK)
		rc = checks_do(&a);
	if (rc == IBC_OK)
		rc = report(&a);
out:
	if (a.t != NULL)
		ibc_csv_table_free(a.t);
	free(a.grp);
	free(a.g);
	free(a.cs);
	free(a.rl);
	free(a.vd);
	return rc;
}
