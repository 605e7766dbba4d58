/* ibchar accept: see accept.h. */
#include "harness/accept.h"
#include "harness/junit.h"
#include "core/csv.h"
#include "core/fs.h"
#include "core/opt.h"
#include "core/status.h"

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_WORDS 64
#define MAX_SEL 5

enum ref_kind { REF_NONE, REF_PROBE, REF_FIELD, REF_ROW };

struct check {
	int line;
	char text[512];
	char suite[48], variant[64];
	char sel_key[MAX_SEL][16], sel_val[MAX_SEL][64];
	int nsel;
	char metric[16];
	char op[3];
	double factor;            /* BOUND = factor (REF_NONE) or factor * the reference */
	enum ref_kind ref;
	char ref_key[16], ref_val[64]; /* REF_FIELD: impl or variant = value */
	char ref_suite[48], ref_variant[64];
	long long ref_bytes;      /* REF_ROW */
};

static const char *const metrics[] = { "p50_us", "mean_us", "min_us", "p99_us", "max_us", "mbps", NULL };
static const char *const sel_keys[] = { "impl", "xport", "ranks", "bytes", "fanin", NULL };

static int in_list(const char *const *l, const char *s)
{
	for (; *l != NULL; l++)
		if (strcmp(*l, s) == 0)
			return 1;
	return 0;
}

static int split(char *s, char **w, int cap)
{
	int n = 0;
	char *save = NULL, *t;

	for (t = strtok_r(s, " \t", &save); t != NULL && n < cap; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	return n;
}

static int bad(const char *spec, int line, const char *text, const char *why)
{
	fprintf(stderr, "ibchar accept: %s:%d: %s: %s\n", spec, line, why, text);
	return IBC_ERR_INVAL;
}

static int size_text(const char *t, long long *out)
{
	size_t v;

	if (ibc_opt_parse_size(t, &v) != IBC_OK)
		return IBC_ERR_INVAL;
	*out = (long long)v;
	return IBC_OK;
}

/* "check SUITE VARIANT [K=V...]: METRIC OP BOUND" (the words after check) */
static int check_parse(const char *spec, int line, char *rest, struct check *c)
{
	char *colon = strchr(rest, ':'), *w[MAX_WORDS];
	int n, i;
	long long b;

	snprintf(c->text, sizeof(c->text), "%s", rest);
	c->line = line;
	if (colon == NULL)
		return bad(spec, line, c->text, "no ':' between the rows and the threshold");
	*colon = '\0';
	n = split(rest, w, MAX_WORDS);
	if (n < 2)
		return bad(spec, line, c->text, "a check names a suite and a variant");
	snprintf(c->suite, sizeof(c->suite), "%s", w[0]);
	snprintf(c->variant, sizeof(c->variant), "%s", w[1]);
	for (i = 2; i < n; i++) {
		char *eq = strchr(w[i], '=');

		if (eq == NULL || c->nsel == MAX_SEL)
			return bad(spec, line, c->text, "rows are selected by KEY=VALUE");
		*eq = '\0';
		if (!in_list(sel_keys, w[i]))
			return bad(spec, line, c->text, "a KEY is impl, xport, ranks, bytes or fanin");
		if (strcmp(w[i], "bytes") == 0) {
			if (size_text(eq + 1, &b) != IBC_OK)
				return bad(spec, line, c->text, "bad bytes");
			snprintf(c->sel_val[c->nsel], sizeof(c->sel_val[0]), "%lld", b);
		} else {
			snprintf(c->sel_val[c->nsel], sizeof(c->sel_val[0]), "%s", eq + 1);
		}
		snprintf(c->sel_key[c->nsel++], sizeof(c->sel_key[0]), "%s", w[i]);
	}
	n = split(colon + 1, w, MAX_WORDS);
	if (n < 3)
		return bad(spec, line, c->text, "the threshold is METRIC OP BOUND");
	if (!in_list(metrics, w[0]))
		return bad(spec, line, c->text, "METRIC is p50_us, mean_us, min_us, p99_us, max_us or mbps");
	snprintf(c->metric, sizeof(c->metric), "%s", w[0]);
	if (strcmp(w[1], "<=") != 0 && strcmp(w[1], "<") != 0 && strcmp(w[1], ">=") != 0 && strcmp(w[1], ">") != 0)
		return bad(spec, line, c->text, "OP is <=, <, >= or >");
	snprintf(c->op, sizeof(c->op), "%s", w[1]);
	if (ibc_opt_parse_double(w[2], &c->factor) != IBC_OK)
		return bad(spec, line, c->text, "BOUND starts with a number");
	if (n == 3) {
		c->ref = REF_NONE;
		return IBC_OK;
	}
	if (strcmp(w[3], "*") != 0 || n < 5)
		return bad(spec, line, c->text, "a relative BOUND is F * REF");
	if (n == 5 && strcmp(w[4], "probe") == 0) {
		c->ref = REF_PROBE;
		return IBC_OK;
	}
	if (n == 5 && (strncmp(w[4], "impl=", 5) == 0 || strncmp(w[4], "variant=", 8) == 0)) {
		char *eq = strchr(w[4], '=');

		*eq = '\0';
		c->ref = REF_FIELD;
		snprintf(c->ref_key, sizeof(c->ref_key), "%s", w[4]);
		snprintf(c->ref_val, sizeof(c->ref_val), "%s", eq + 1);
		return IBC_OK;
	}
	if (n == 7 && strchr(w[4], '.') != NULL && strcmp(w[5], "at") == 0) {
		char *dot = strchr(w[4], '.');

		*dot = '\0';
		c->ref = REF_ROW;
		snprintf(c->ref_suite, sizeof(c->ref_suite), "%s", w[4]);
		snprintf(c->ref_variant, sizeof(c->ref_variant), "%s", dot + 1);
		if (size_text(w[6], &c->ref_bytes) != IBC_OK)
			return bad(spec, line, c->text, "bad SIZE after 'at'");
		return IBC_OK;
	}
	return bad(spec, line, c->text, "REF is probe, impl=X, variant=X or SUITE.VARIANT at SIZE");
}

static double metric_of(const struct ibc_csv_table *t, size_t r, const char *m)
{
	if (strcmp(m, "mbps") == 0) {
		double p = ibc_csv_num(t, r, "p50_us"), b = ibc_csv_num(t, r, "bytes");

		return p > 0 ? b / p : NAN;
	}
	return ibc_csv_num(t, r, m);
}

static int row_selected(const struct ibc_csv_table *t, size_t r, const struct check *c)
{
	int i;

	if (strcmp(ibc_csv_cell(t, r, "suite"), c->suite) != 0 || strcmp(ibc_csv_cell(t, r, "variant"), c->variant) != 0)
		return 0;
	if (strcmp(ibc_csv_cell(t, r, "impl"), "model") == 0 && !(c->nsel > 0 && strcmp(c->sel_key[0], "impl") == 0))
		return 0; /* predictions are not measurements */
	for (i = 0; i < c->nsel; i++)
		if (strcmp(ibc_csv_cell(t, r, c->sel_key[i]), c->sel_val[i]) != 0)
			return 0;
	return 1;
}

/* The reference value of a check for row r, or NAN with why set. */
static double reference(const struct ibc_csv_table *t, size_t r, const struct check *c, char *why, size_t cap)
{
	/* the point: the row beside this one differs in variant or impl only */
	static const char *const same[] = { "suite", "xport", "ranks", "bytes", "fanin" };
	size_t q, k;

	switch (c->ref) {
	case REF_NONE:
		return 1;
	case REF_PROBE: {
		double p = ibc_csv_num(t, r, "probe_us");

		if (!(p > 0))
			snprintf(why, cap, "the row has no placement probe");
		return p > 0 ? p : NAN;
	}
	case REF_FIELD:
		for (q = 0; q + 1 < t->nrows; q++) {
			const char *other = strcmp(c->ref_key, "impl") == 0 ? "variant" : "impl";

			if (strcmp(ibc_csv_cell(t, q, c->ref_key), c->ref_val) != 0)
				continue;
			/* impl=X keeps the variant; variant=X takes any measured impl (the host MPI's) */
			if (strcmp(other, "variant") == 0 ? strcmp(ibc_csv_cell(t, q, "variant"), ibc_csv_cell(t, r, "variant")) != 0
							  : strcmp(ibc_csv_cell(t, q, "impl"), "model") == 0)
				continue;
			for (k = 0; k < 4; k++)
				if (strcmp(ibc_csv_cell(t, q, same[k]), ibc_csv_cell(t, r, same[k])) != 0)
					break;
			/* the same fan-in, or (variant=X) a reference that has none, as MPI_Barrier */
			if (k == 4 && (strcmp(ibc_csv_cell(t, q, "fanin"), ibc_csv_cell(t, r, "fanin")) == 0 ||
				       (strcmp(c->ref_key, "variant") == 0 && ibc_csv_cell(t, q, "fanin")[0] == '\0')))
				return metric_of(t, q, c->metric);
		}
		snprintf(why, cap, "no row with %s=%s beside it (same suite, xport, N, bytes, fan-in)", c->ref_key,
			 c->ref_val);
		return NAN;
	case REF_ROW: {
		char b[32];

		snprintf(b, sizeof(b), "%lld", c->ref_bytes);
		for (q = 0; q + 1 < t->nrows; q++)
			if (strcmp(ibc_csv_cell(t, q, "suite"), c->ref_suite) == 0 &&
			    strcmp(ibc_csv_cell(t, q, "variant"), c->ref_variant) == 0 &&
			    strcmp(ibc_csv_cell(t, q, "bytes"), b) == 0 && strcmp(ibc_csv_cell(t, q, "impl"), "model") != 0)
				return metric_of(t, q, c->metric);
		snprintf(why, cap, "no %s %s row at %s bytes", c->ref_suite, c->ref_variant, b);
		return NAN;
	}
	}
	return NAN;
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

struct verdict {
	int ok;
	char name[600], text[300];
};

static int run_line(const struct ibc_accept_opts *o, char *args, int line)
{
	char *w[MAX_WORDS + 4], prog[4200];
	extern char **environ;
	int n, status;
	pid_t pid;

	snprintf(prog, sizeof(prog), "%s/ibchar", o->bindir);
	w[0] = prog;
	w[1] = "run";
	n = split(args, w + 2, MAX_WORDS);
	w[2 + n] = "--out";
	w[3 + n] = (char *)o->dir;
	w[4 + n] = NULL;
	fprintf(stderr, "ibchar accept: line %d: ibchar run", line);
	for (int i = 2; i < n + 4; i++)
		fprintf(stderr, " %s", w[i]);
	fprintf(stderr, "\n");
	fflush(stdout);
	if (posix_spawn(&pid, prog, NULL, NULL, w, environ) != 0) {
		fprintf(stderr, "ibchar accept: cannot run %s: %s\n", prog, strerror(errno));
		return IBC_ERR_SYS;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "ibchar accept: line %d: ibchar run failed (exit %d)\n", line,
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		return WIFEXITED(status) && WEXITSTATUS(status) == 2 ? IBC_ERR_INVAL : IBC_ERR_REMOTE;
	}
	return IBC_OK;
}

/* A spec line without its comment, newline and leading blanks. */
static char *spec_line(char *line)
{
	char *hash = strchr(line, '#');

	if (hash != NULL)
		*hash = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

int ibc_harness_accept(const struct ibc_accept_opts *o)
{
	struct check *cs = NULL;
	struct verdict *vd = NULL;
	struct ibc_csv_table *t = NULL;
	char line[1024], path[4200];
	size_t nc = 0, cap = 0, nv = 0, vcap = 0, i, r, nfail = 0;
	int ln = 0, rc = IBC_OK;
	FILE *f;

	if (o->junit != NULL && ibc_harness_junit_check(o->junit, "ibchar accept") != IBC_OK)
		return IBC_ERR_INVAL; /* before hours of runs */
	f = fopen(o->spec, "r");
	if (f == NULL) {
		fprintf(stderr, "ibchar accept: cannot read the spec %s: %s\n", o->spec, strerror(errno));
		return IBC_ERR_INVAL;
	}
	/* parse everything before running anything */
	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = spec_line(line);

		ln++;
		if (*s == '\0' || strncmp(s, "run ", 4) == 0 || strcmp(s, "run") == 0)
			continue;
		if (strncmp(s, "check ", 6) != 0) {
			rc = bad(o->spec, ln, s, "a line is 'run ARGS' or 'check ...'");
			goto out;
		}
		if (nc == cap) {
			struct check *n2 = realloc(cs, (cap = cap ? 2 * cap : 16) * sizeof(*cs));

			if (n2 == NULL) {
				rc = IBC_ERR_NOMEM;
				goto out;
			}
			cs = n2;
		}
		memset(&cs[nc], 0, sizeof(cs[nc]));
		rc = check_parse(o->spec, ln, s + 6, &cs[nc]);
		if (rc != IBC_OK)
			goto out;
		nc++;
	}
	if (nc == 0) {
		rc = bad(o->spec, ln, "", "no check in the spec");
		goto out;
	}
	if (o->dry_run) {
		for (i = 0; i < nc; i++)
			printf("check %d: %s\n", cs[i].line, cs[i].text);
		goto out;
	}
	if (o->run) {
		rewind(f);
		ln = 0;
		if ((rc = ibc_fs_mkdir_p(o->dir)) != IBC_OK)
			goto out;
		while (rc == IBC_OK && fgets(line, sizeof(line), f) != NULL) {
			char *s = spec_line(line);

			ln++;
			if (strncmp(s, "run ", 4) == 0)
				rc = run_line(o, s + 4, ln);
		}
		if (rc == IBC_ERR_INVAL)
			goto out;
		rc = IBC_OK; /* a failed run shows as the rows it did not write */
	}
	snprintf(path, sizeof(path), "%s/results.csv", o->dir);
	if (access(path, R_OK) != 0 || ibc_csv_read(path, &t) != IBC_OK) {
		fprintf(stderr, "ibchar accept: no readable results.csv in %s\n", o->dir);
		rc = IBC_ERR_INVAL;
		goto out;
	}
	for (i = 0; i < nc; i++) {
		const struct check *c = &cs[i];
		size_t matched = 0;

		for (r = 0; r <= t->nrows - 1; r++) {
			int none = r == t->nrows - 1; /* past the last row: a verdict when nothing matched */
			struct verdict *v;
			char why[200] = "";
			double val, ref, bound;

			if (none ? matched > 0 : !row_selected(t, r, c))
				continue;
			if (nv == vcap) {
				struct verdict *n2 = realloc(vd, (vcap = vcap ? 2 * vcap : 32) * sizeof(*vd));

				if (n2 == NULL) {
					rc = IBC_ERR_NOMEM;
					goto out;
				}
				vd = n2;
			}
			v = &vd[nv++];
			memset(v, 0, sizeof(*v));
			if (none) {
				snprintf(v->name, sizeof(v->name), "line %d: %s", c->line, c->text);
				snprintf(v->text, sizeof(v->text), "no row of the run matches (it did not produce it)");
				continue;
			}
			matched++;
			snprintf(v->name, sizeof(v->name), "line %d: %s %s (%s) N=%s bytes=%s%s%s: %s %s %g%s%s", c->line,
				 c->suite, c->variant, ibc_csv_cell(t, r, "impl"), ibc_csv_cell(t, r, "ranks"),
				 ibc_csv_cell(t, r, "bytes"), ibc_csv_cell(t, r, "fanin")[0] ? " fanin=" : "",
				 ibc_csv_cell(t, r, "fanin"), c->metric, c->op, c->factor, c->ref != REF_NONE ? " * " : "",
				 c->ref == REF_PROBE ? "probe" : c->ref == REF_FIELD ? c->ref_val :
				 c->ref == REF_ROW ? c->ref_variant : "");
			val = metric_of(t, r, c->metric);
			ref = reference(t, r, c, why, sizeof(why));
			if (isnan(val)) {
				snprintf(v->text, sizeof(v->text), "the row has no %s", c->metric);
				continue;
			}
			if (isnan(ref)) {
				snprintf(v->text, sizeof(v->text), "%s", why);
				continue;
			}
			bound = c->factor * ref;
			v->ok = holds(val, c->op, bound);
			snprintf(v->text, sizeof(v->text), "%s = %.4g, bound %.4g%s", c->metric, val, bound,
				 c->ref != REF_NONE ? " (reference measured in the same run)" : "");
		}
	}
	printf("1..%zu\n", nv);
	for (i = 0; i < nv; i++) {
		printf("%sok %zu - %s: %s\n", vd[i].ok ? "" : "not ", i + 1, vd[i].name, vd[i].text);
		nfail += !vd[i].ok;
	}
	printf("# %zu checks from %zu lines of %s: %zu failed\n", nv, nc, o->spec, nfail);
	if (o->junit != NULL) {
		struct ibc_junit_case *jc = calloc(nv + 1, sizeof(*jc));

		if (jc == NULL) {
			rc = IBC_ERR_NOMEM;
			goto out;
		}
		for (i = 0; i < nv; i++)
			jc[i] = (struct ibc_junit_case){ vd[i].name, vd[i].text, vd[i].ok };
		rc = ibc_harness_junit_write(o->junit, "ibchar accept", jc, nv);
		free(jc);
	}
	if (rc == IBC_OK && nfail > 0)
		rc = IBC_ERR_REMOTE;
out:
	fclose(f);
	if (t != NULL)
		ibc_csv_table_free(t);
	free(cs);
	free(vd);
	return rc;
}
