/* ibchar compare: see compare.h. */
#include "tools/compare.h"
#include "tools/junit.h"
#include "core/csv.h"
#include "core/stats.h"
#include "core/status.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the columns that name a row in both files, and in results.csv the rest of its key */
#define SKEY_COLS 7
static const char *const skey_cols[SKEY_COLS] = { "suite", "variant", "impl", "xport", "ranks", "bytes", "fanin" };
static const char *const results_need[] = { "run_id", "suite", "variant", "impl", "xport", "nodes", "ppn",
					    "ranks", "bytes", "fanin", "p50_us", "oversub", "extra", NULL };
static const char *const samples_need[] = { "run_id", "suite", "variant", "impl", "xport", "ranks", "bytes",
					    "fanin", "n", "samples_us", NULL };

/* one run's figure of a row */
struct cunit {
	char run_id[64];
	double fig;  /* the median of the kept samples, or the row's one figure; NAN none */
	long kept;   /* kept samples; -1 for a row of one figure */
	double probe; /* the run's placement probe for the row (probe_us), NAN none */
};

/* a row of one side, over its runs */
struct crow {
	char key[640];   /* suite|variant|impl|xport|nodes|ppn|ranks|bytes|fanin */
	char label[320];
	char suite[64], variant[96];
	int oversub;     /* oversubscribed in any run */
	int placement;   /* the probe suite: where the ranks sit, not the code */
	char group[16];  /* its timed group (extra group=G/NG), "" when the point had one */
	size_t nprimed;  /* its runs whose timed iterations were primed (extra primed=1) */
	/* the placements of its buffers a run's figure is over (extra instances=
	 * or sets=, 1 without: a barrier over its instances, a logp kernel over
	 * its sets of slots); -1 when its runs differ */
	long places;
	struct cunit *u;
	size_t nu, ucap;
	double mlog;     /* mean over runs of log fig (NAN when a run has none) */
	double sd;       /* standard deviation over runs of log fig (NAN below 2 runs) */
	long min_kept;   /* fewest kept samples of a run; -1 when every run is one figure */
	double plog, psd; /* mean and scatter over runs of log probe_us; NAN when a run has none */
};

#define CSIDE_MACHINES 4 /* distinct CPU models a side's runs name, at most */
#define CSIDE_MACHINE_LEN 128

struct cside {
	const char *dir;
	/* the machine its runs name in meta.csv: cpu_model, and vm_host_cpu
	 * (a guest's host CPU, scripts/softroce-vm) where recorded */
	char cpu[CSIDE_MACHINES][CSIDE_MACHINE_LEN], vmhost[CSIDE_MACHINES][CSIDE_MACHINE_LEN];
	size_t ncpu, nvmhost;
	struct crow *r;
	size_t n, cap;
	size_t nruns;      /* distinct run_ids */
	double probe_us;   /* median probe_us of its rows not oversubscribed, NAN none */
};

enum verdict_kind { V_UNCHANGED, V_SLOWER, V_FASTER, V_INCONCLUSIVE, V_MISSING };
static const char *const kind_names[] = { "unchanged", "slower", "faster", "inconclusive", "missing in NEW" };

struct verdict {
	char name[400];
	char text[400];
	enum verdict_kind kind;
	double d;        /* log ratio NEW / BASE (rows judged) */
	int judged;      /* the row counts in its groups */
};

/* One line on stderr: the damaged input and why. */
static int damaged(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int damaged(const char *path, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ibchar compare: %s: ", path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return IBC_ERR_INVAL;
}

/* a results.csv cell that must be a non-negative number or empty (*out NAN) */
static int num_col(const struct ibc_csv_table *t, size_t r, const char *path, const char *col, double *out)
{
	int rc = ibc_csv_num_strict(t, r, col, out);

	if (rc == IBC_ERR_NOTFOUND) {
		*out = NAN;
		return IBC_OK;
	}
	if (rc != IBC_OK || *out < 0)
		return damaged(path, "line %zu: %s is '%s', not a time or count", r + 2, col, ibc_csv_cell(t, r, col));
	return IBC_OK;
}

static int need_columns(const struct ibc_csv_table *t, const char *path, const char *const *cols)
{
	for (; *cols != NULL; cols++)
		if (ibc_csv_column(t, *cols) < 0)
			return damaged(path, "no %s column", *cols);
	return IBC_OK;
}

/* reads path: a missing file, a malformed one (ibc_csv_read said why) or one
 * without data rows is damaged */
static int table_read(const char *dir, const char *name, char *path, size_t cap, struct ibc_csv_table **t)
{
	snprintf(path, cap, "%s/%s", dir, name);
	if (access(path, F_OK) != 0)
		return damaged(dir, "no %s (not a results directory)", name);
	if (ibc_csv_read(path, t) != IBC_OK)
		return IBC_ERR_INVAL; /* the reader logged the line at fault */
	if ((*t)->nrows < 2) {
		ibc_csv_table_free(*t);
		*t = NULL;
		return damaged(path, "holds no rows");
	}
	return IBC_OK;
}

static void skey_of(const struct ibc_csv_table *t, size_t r, char *buf, size_t cap)
{
	size_t used = 0, i;

	snprintf(buf, cap, "%s", ibc_csv_str(t, r, "run_id"));
	used = strlen(buf);
	for (i = 0; i < SKEY_COLS && used < cap; i++)
		used += (size_t)snprintf(buf + used, cap - used, "|%s", ibc_csv_cell(t, r, skey_cols[i]));
}

static double median_sorted_copy(const double *v, size_t n, double *tmp)
{
	memcpy(tmp, v, n * sizeof(*v));
	ibc_stats_sort(tmp, n);
	return ibc_stats_quantile_sorted(tmp, n, 0.5);
}

/* samples.csv row r: its n values into *v (validated: n integer >= 1, as many
 * finite non-negative values) */
static int samples_parse(const struct ibc_csv_table *t, size_t r, const char *path, double **v, size_t *n)
{
	const char *p = ibc_csv_cell(t, r, "samples_us");
	double dn;
	size_t k = 0, want;
	char *end;

	if (ibc_csv_num_strict(t, r, "n", &dn) != IBC_OK || dn < 1 || dn != floor(dn) || dn > 1e9)
		return damaged(path, "line %zu: n is '%s', not a count", r + 2, ibc_csv_cell(t, r, "n"));
	want = (size_t)dn;
	*v = malloc(want * sizeof(**v));
	if (*v == NULL)
		return IBC_ERR_NOMEM;
	for (;;) {
		double x;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		errno = 0;
		x = strtod(p, &end);
		if (end == p || (*end != ' ' && *end != '\0') || !isfinite(x) || x < 0) {
			free(*v);
			*v = NULL;
			return damaged(path, "line %zu: sample %zu is not a time: '%.20s'", r + 2, k + 1, p);
		}
		if (k == want) {
			free(*v);
			*v = NULL;
			return damaged(path, "line %zu: n=%zu but more values follow", r + 2, want);
		}
		(*v)[k++] = x;
		p = end;
	}
	if (k != want) {
		free(*v);
		*v = NULL;
		return damaged(path, "line %zu: n=%zu but %zu values", r + 2, want, k);
	}
	*n = k;
	return IBC_OK;
}

static struct crow *row_get(struct cside *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->r[i].key, key) == 0)
			return &c->r[i];
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct crow *nr = realloc(c->r, cap * sizeof(*nr));

		if (nr == NULL)
			return NULL;
		c->r = nr;
		c->cap = cap;
	}
	memset(&c->r[c->n], 0, sizeof(c->r[0]));
	snprintf(c->r[c->n].key, sizeof(c->r[0].key), "%s", key);
	return &c->r[c->n++];
}

static int unit_add(struct crow *w, const char *run_id, double fig, long kept, double probe)
{
	if (w->nu == w->ucap) {
		size_t cap = w->ucap ? 2 * w->ucap : 4;
		struct cunit *nu = realloc(w->u, cap * sizeof(*nu));

		if (nu == NULL)
			return IBC_ERR_NOMEM;
		w->u = nu;
		w->ucap = cap;
	}
	snprintf(w->u[w->nu].run_id, sizeof(w->u[0].run_id), "%s", run_id);
	w->u[w->nu].fig = fig;
	w->u[w->nu].kept = kept;
	w->u[w->nu].probe = probe > 0 ? probe : NAN;
	w->nu++;
	return IBC_OK;
}

static int cmp_unit(const void *a, const void *b)
{
	return strcmp(((const struct cunit *)a)->run_id, ((const struct cunit *)b)->run_id);
}

/* The mean and standard deviation over the runs of the log of the double
 * at offset off of each unit (NAN when one is not positive; sd NAN below 2). */
static void units_log_stats(const struct cunit *u, size_t n, size_t off, double *mean, double *sd)
{
	double s = 0, ss = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double x = *(const double *)((const char *)&u[i] + off);

		if (!(x > 0)) {
			*mean = *sd = NAN;
			return;
		}
		s += log(x);
	}
	*mean = s / (double)n;
	for (i = 0; i < n; i++) {
		double d = log(*(const double *)((const char *)&u[i] + off)) - *mean;

		ss += d * d;
	}
	*sd = n >= 2 ? sqrt(ss / (double)(n - 1)) : NAN;
}

/* the runs of a row ordered by run_id (pass p of every row is its p-th),
 * their figures' and probes' mean and scatter in logs */
static void row_finish(struct crow *w)
{
	size_t i;

	qsort(w->u, w->nu, sizeof(*w->u), cmp_unit);
	w->min_kept = -1;
	for (i = 0; i < w->nu; i++)
		if (w->u[i].kept >= 0 && (w->min_kept < 0 || w->u[i].kept < w->min_kept))
			w->min_kept = w->u[i].kept;
	units_log_stats(w->u, w->nu, offsetof(struct cunit, fig), &w->mlog, &w->sd);
	units_log_stats(w->u, w->nu, offsetof(struct cunit, probe), &w->plog, &w->psd);
}

static void cside_free(struct cside *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->r[i].u);
	free(c->r);
	memset(c, 0, sizeof(*c));
}

struct sample_row {
	char skey[640];
	double fig;
	size_t n;
	int used;
};

/* v into set (of *n) unless it is there or the set is full */
static void name_add(char (*set)[CSIDE_MACHINE_LEN], size_t *n, const char *v)
{
	size_t i;

	for (i = 0; i < *n && strcmp(set[i], v) != 0; i++)
		;
	if (i == *n && *n < CSIDE_MACHINES && *v != '\0')
		snprintf(set[(*n)++], CSIDE_MACHINE_LEN, "%s", v);
}

/* DIR/meta.csv, results.csv and samples.csv of one side */
static int cside_load(const char *dir, struct cside *c)
{
	struct ibc_csv_table *meta = NULL, *res = NULL, *smp = NULL;
	struct sample_row *sr = NULL;
	char mpath[4200], rpath[4200], spath[4200];
	double *probes = NULL, *v = NULL, *tmp = NULL;
	size_t nsr = 0, np = 0, r, i, ns = 0;
	char (*runs)[64] = NULL;
	struct stat sb;
	int rc;

	memset(c, 0, sizeof(*c));
	c->dir = dir;
	c->probe_us = NAN;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return damaged(dir, "%s", stat(dir, &sb) != 0 ? strerror(errno) : "not a directory");
	rc = table_read(dir, "meta.csv", mpath, sizeof(mpath), &meta);
	if (rc == IBC_OK && (ibc_csv_column(meta, "key") < 0 || ibc_csv_column(meta, "value") < 0))
		rc = damaged(mpath, "not a key,value file");
	for (r = 0; rc == IBC_OK && r + 1 < meta->nrows; r++) {
		const char *k = ibc_csv_str(meta, r, "key");

		if (strcmp(k, "cpu_model") == 0)
			name_add(c->cpu, &c->ncpu, ibc_csv_str(meta, r, "value"));
		else if (strcmp(k, "vm_host_cpu") == 0)
			name_add(c->vmhost, &c->nvmhost, ibc_csv_str(meta, r, "value"));
	}
	if (rc == IBC_OK)
		rc = table_read(dir, "results.csv", rpath, sizeof(rpath), &res);
	if (rc == IBC_OK)
		rc = need_columns(res, rpath, results_need);
	if (rc == IBC_OK) {
		snprintf(spath, sizeof(spath), "%s/samples.csv", dir);
		if (access(spath, F_OK) != 0)
			rc = damaged(dir, "no samples.csv (every run writes one)");
		else if (ibc_csv_read(spath, &smp) != IBC_OK)
			rc = IBC_ERR_INVAL;
		else
			rc = need_columns(smp, spath, samples_need);
	}
	if (rc != IBC_OK)
		goto out;
	/* the samples, each row's median */
	sr = calloc(smp->nrows, sizeof(*sr));
	runs = calloc(res->nrows, sizeof(*runs));
	probes = calloc(res->nrows, sizeof(*probes));
	if (sr == NULL || runs == NULL || probes == NULL) {
		rc = IBC_ERR_NOMEM;
		goto out;
	}
	for (r = 0; r + 1 < smp->nrows; r++) {
		rc = samples_parse(smp, r, spath, &v, &ns);
		if (rc != IBC_OK)
			goto out;
		tmp = realloc(tmp, ns * sizeof(*tmp));
		if (tmp == NULL) {
			rc = IBC_ERR_NOMEM;
			goto out;
		}
		skey_of(smp, r, sr[nsr].skey, sizeof(sr[0].skey));
		sr[nsr].fig = median_sorted_copy(v, ns, tmp);
		sr[nsr++].n = ns;
		free(v);
		v = NULL;
	}
	for (r = 0; r + 1 < res->nrows; r++) {
		const char *run_id = ibc_csv_cell(res, r, "run_id"), *extra = ibc_csv_cell(res, r, "extra");
		char skey[640], key[640], label[320], one[8], grp[16];
		double p50, over, probe;
		struct crow *w;
		long places;
		size_t k;

		if (strcmp(ibc_csv_str(res, r, "impl"), "model") == 0)
			continue; /* a prediction, not a measurement */
		if (*run_id == '\0') {
			rc = damaged(rpath, "line %zu: no run_id", r + 2);
			goto out;
		}
		for (k = 0; k + 1 < meta->nrows; k++)
			if (strcmp(ibc_csv_str(meta, k, "key"), "run_id") == 0 &&
			    strcmp(ibc_csv_str(meta, k, "value"), run_id) == 0)
				break;
		if (k + 1 == meta->nrows) {
			rc = damaged(rpath, "line %zu: run %s has no provenance in meta.csv", r + 2, run_id);
			goto out;
		}
		rc = num_col(res, r, rpath, "p50_us", &p50);
		if (rc == IBC_OK)
			rc = num_col(res, r, rpath, "oversub", &over);
		if (rc == IBC_OK)
			rc = num_col(res, r, rpath, "probe_us", &probe);
		for (k = 0; rc == IBC_OK && k < 2; k++) {
			double x;

			rc = num_col(res, r, rpath, k ? "bytes" : "ranks", &x);
			if (rc == IBC_OK && isnan(x))
				rc = damaged(rpath, "line %zu: no %s", r + 2, k ? "bytes" : "ranks");
		}
		if (rc != IBC_OK)
			goto out;
		if (probe > 0 && !(over > 0))
			probes[np++] = probe;
		snprintf(key, sizeof(key), "%s|%s|%s|%s|%s|%s|%s|%s|%s", ibc_csv_cell(res, r, "suite"),
			 ibc_csv_cell(res, r, "variant"), ibc_csv_cell(res, r, "impl"), ibc_csv_cell(res, r, "xport"),
			 ibc_csv_cell(res, r, "nodes"), ibc_csv_cell(res, r, "ppn"), ibc_csv_cell(res, r, "ranks"),
			 ibc_csv_cell(res, r, "bytes"), ibc_csv_cell(res, r, "fanin"));
		snprintf(label, sizeof(label), "%s %s (%s, %s) N=%s bytes=%s%s%s", ibc_csv_cell(res, r, "suite"),
			 ibc_csv_cell(res, r, "variant"), ibc_csv_cell(res, r, "impl"), ibc_csv_cell(res, r, "xport"),
			 ibc_csv_cell(res, r, "ranks"), ibc_csv_cell(res, r, "bytes"),
			 *ibc_csv_cell(res, r, "fanin") ? " fanin=" : "", ibc_csv_cell(res, r, "fanin"));
		/* its samples: the first unused samples row of its run and key */
		skey_of(res, r, skey, sizeof(skey));
		for (k = 0; k < nsr && (sr[k].used || strcmp(sr[k].skey, skey) != 0); k++)
			;
		w = row_get(c, key);
		if (w == NULL) {
			rc = IBC_ERR_NOMEM;
			goto out;
		}
		if (w->nu == 0) {
			snprintf(w->label, sizeof(w->label), "%s", label);
			snprintf(w->suite, sizeof(w->suite), "%s", ibc_csv_str(res, r, "suite"));
			snprintf(w->variant, sizeof(w->variant), "%s", ibc_csv_str(res, r, "variant"));
			w->placement = strcmp(w->suite, "probe") == 0;
			if (ibc_csv_extra_get(extra, "group", grp, sizeof(grp)))
				snprintf(w->group, sizeof(w->group), "%s", grp);
		}
		w->oversub |= over > 0;
		w->nprimed += ibc_csv_extra_get(extra, "primed", one, sizeof(one)) && strcmp(one, "1") == 0;
		places = ibc_csv_extra_get(extra, "instances", one, sizeof(one)) ||
				 ibc_csv_extra_get(extra, "sets", one, sizeof(one))
			 ? atol(one) : 1;
		w->places = w->nu == 0 || w->places == places ? places : -1;
		if (k < nsr) {
			sr[k].used = 1;
			rc = unit_add(w, run_id, sr[k].fig, (long)sr[k].n, probe);
		} else if (ibc_csv_extra_get(extra, "n", one, sizeof(one)) && strcmp(one, "1") == 0) {
			rc = unit_add(w, run_id, p50, -1, probe);
		} else {
			rc = damaged(rpath, "line %zu (%s, run %s): no samples in samples.csv", r + 2, label, run_id);
		}
		if (rc != IBC_OK)
			goto out;
		for (k = 0; k < c->nruns && strcmp(runs[k], run_id) != 0; k++)
			;
		if (k == c->nruns)
			snprintf(runs[c->nruns++], sizeof(runs[0]), "%s", run_id);
	}
	for (i = 0; i < nsr; i++)
		if (!sr[i].used) {
			rc = damaged(spath, "line %zu: no row of results.csv has its run and key", i + 2);
			goto out;
		}
	if (c->n == 0) {
		rc = damaged(rpath, "holds no measured rows (only predictions)");
		goto out;
	}
	for (i = 0; i < c->n; i++)
		row_finish(&c->r[i]);
	if (np > 0) {
		ibc_stats_sort(probes, np);
		c->probe_us = ibc_stats_quantile_sorted(probes, np, 0.5);
	}
out:
	free(v);
	free(tmp);
	free(sr);
	free(runs);
	free(probes);
	if (meta != NULL)
		ibc_csv_table_free(meta);
	if (res != NULL)
		ibc_csv_table_free(res);
	if (smp != NULL)
		ibc_csv_table_free(smp);
	if (rc != IBC_OK)
		cside_free(c);
	return rc;
}

static const struct crow *row_find(const struct cside *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->r[i].key, key) == 0)
			return &c->r[i];
	return NULL;
}

static double median_of(double *v, size_t n)
{
	ibc_stats_sort(v, n);
	return ibc_stats_quantile_sorted(v, n, 0.5);
}

/* The median of a χ² variable of nu degrees of freedom over nu, to the power
 * 1/2 (Wilson-Hilferty): what the median of sample standard deviations of
 * nu + 1 values is of the true one (0.84 for three runs). */
static double median_sd_bias(size_t nu)
{
	double a = 1 - 2.0 / (9.0 * (double)nu);

	return nu > 0 ? pow(a, 1.5) : 1;
}

/* The run-to-run scatter of BASE's rows of a suite (rows with enough runs):
 * the median of the rows' own, corrected for its bias. */
static double suite_scatter(const struct cside *b, const char *suite, double *tmp)
{
	size_t i, k = 0, nu = 0;

	for (i = 0; i < b->n; i++)
		if (strcmp(b->r[i].suite, suite) == 0 && b->r[i].nu >= IBC_COMPARE_MIN_RUNS && isfinite(b->r[i].sd) &&
		    !b->r[i].placement) {
			tmp[k++] = b->r[i].sd;
			nu = nu == 0 || b->r[i].nu - 1 < nu ? b->r[i].nu - 1 : nu;
		}
	return k > 0 ? median_of(tmp, k) / median_sd_bias(nu) : 0;
}

static double pct(double logratio)
{
	return 100 * (exp(logratio) - 1);
}

/* the threshold (log) for a difference of means over rn and rb runs with per-run scatter sigma */
static double threshold(double sigma, size_t rn, size_t rb, double min_effect)
{
	double t = IBC_COMPARE_K * sigma * sqrt(1.0 / (double)rn + 1.0 / (double)rb);

	return min_effect > 0 && log1p(min_effect) > t ? log1p(min_effect) : t;
}

/* A judged verdict's kind, and its text.  An unchanged verdict whose
 * threshold t is wider than --max-threshold could not have told a change
 * of that size (a 2x slowdown at the default 100%): it becomes
 * inconclusive.  Slower and faster stand: the change was beyond even that
 * threshold. */
static const char *kind_text(const struct ibc_compare_opts *o, struct verdict *v, double t)
{
	if (v->kind != V_UNCHANGED || o->max_threshold <= 0 || t <= log1p(o->max_threshold))
		return kind_names[v->kind];
	v->kind = V_INCONCLUSIVE;
	return "inconclusive: too noisy to tell (within a threshold wider than --max-threshold)";
}

/* 0: no run of the row was primed, 1: every run, 2: some */
static int primed_state(const struct crow *x)
{
	return x->nprimed == 0 ? 0 : x->nprimed == x->nu ? 1 : 2;
}

static const char *places_text(const struct crow *x, char *buf, size_t cap)
{
	if (x->places < 0)
		return "differing";
	snprintf(buf, cap, "%ld", x->places);
	return buf;
}

/* One row's verdict. */
static void row_judge(const struct ibc_compare_opts *o, const struct cside *b, const struct crow *x,
		      const struct crow *y, double *tmp, struct verdict *v)
{
	double sigma, t, ratio;
	const char *why = NULL;
	char whybuf[160], pa[24], pb[24];

	snprintf(v->name, sizeof(v->name), "%s", x->label);
	if (y == NULL) {
		v->kind = V_MISSING;
		snprintf(v->text, sizeof(v->text), "missing in NEW");
		return;
	}
	if (!isfinite(x->mlog) || !isfinite(y->mlog)) {
		v->kind = V_INCONCLUSIVE;
		snprintf(v->text, sizeof(v->text), "inconclusive: a run has no positive median (%s)",
			 isfinite(x->mlog) ? "NEW" : "BASE");
		return;
	}
	v->d = y->mlog - x->mlog;
	ratio = exp(v->d);
	if (x->nu < IBC_COMPARE_MIN_RUNS) {
		snprintf(whybuf, sizeof(whybuf), "BASE holds %zu run%s of this row, its run-to-run scatter needs %d "
			 "(ibchar run --repeat %d)", x->nu, x->nu == 1 ? "" : "s", IBC_COMPARE_MIN_RUNS,
			 IBC_COMPARE_MIN_RUNS);
		why = whybuf;
	} else if (x->placement && !o->strict) {
		why = "a placement probe (where the ranks sit, not the code)";
	} else if (primed_state(x) != primed_state(y)) {
		/* the harness measured the row another way (primes: docs/design.md),
		 * which moves its figure without the code: a piggyback row went
		 * 0.30 -> 0.20 us; judged, a method change reads as a regression
		 * (or hides one) */
		snprintf(whybuf, sizeof(whybuf), "measured another way (primed in %s, not in %s: make BASE again)",
			 primed_state(y) == 1 ? "NEW" : primed_state(x) == 1 ? "BASE" : "some runs",
			 primed_state(y) == 1 ? "BASE" : primed_state(x) == 1 ? "NEW" : "others");
		why = whybuf;
	} else if (x->places != y->places) {
		/* over other placements of its buffers: the figure is another
		 * one (a barrier's instances, docs/model.md), as with primes */
		snprintf(whybuf, sizeof(whybuf), "measured another way (over %s placements in NEW, "
			 "%s in BASE: make BASE again)", places_text(y, pa, sizeof(pa)),
			 places_text(x, pb, sizeof(pb)));
		why = whybuf;
	} else if ((x->oversub || y->oversub) && !o->strict) {
		why = "oversubscribed (ranks outnumber the PUs: the scheduler's time)";
	} else if ((x->min_kept >= 0 && x->min_kept < IBC_COMPARE_MIN_KEPT) ||
		   (y->min_kept >= 0 && y->min_kept < IBC_COMPARE_MIN_KEPT)) {
		snprintf(whybuf, sizeof(whybuf), "too few kept samples (%ld < %d: no median)",
			 x->min_kept >= 0 && x->min_kept < IBC_COMPARE_MIN_KEPT ? x->min_kept : y->min_kept,
			 IBC_COMPARE_MIN_KEPT);
		why = whybuf;
	} else if (y->min_kept >= 0 && x->min_kept >= 0 && 2 * y->min_kept < x->min_kept) {
		/* BASE's scatter is that of medians of more samples than NEW's */
		snprintf(whybuf, sizeof(whybuf), "too few kept samples (NEW %ld, BASE %ld or more: its scatter "
			 "is of better medians)", y->min_kept, x->min_kept);
		why = whybuf;
	} else if (!o->strict && isfinite(x->plog) && isfinite(y->plog) &&
		   fabs(y->plog - x->plog) > fmax(threshold(fmax(x->psd, IBC_COMPARE_ROW_FLOOR), y->nu, x->nu, 0),
						  log1p(IBC_COMPARE_PROBE_MOVE))) {
		/* the run's own placement probe moved beyond its scatter: the
		 * ranks sat on other cores (a guest's vCPUs moved), which moves
		 * every time of the run with them */
		snprintf(whybuf, sizeof(whybuf), "the ranks sat elsewhere (the run's placement probe %.3g -> "
			 "%.3g us, beyond its run-to-run scatter)", exp(x->plog), exp(y->plog));
		why = whybuf;
	}
	if (why != NULL) {
		v->kind = V_INCONCLUSIVE;
		snprintf(v->text, sizeof(v->text), "inconclusive: %s; %.3fx, %.4g -> %.4g us", why, ratio,
			 exp(x->mlog), exp(y->mlog));
		return;
	}
	sigma = fmax(fmax(x->sd, suite_scatter(b, x->suite, tmp)), IBC_COMPARE_ROW_FLOOR);
	t = threshold(sigma, y->nu, x->nu, o->min_effect);
	v->judged = 1; /* in its groups, whether or not its own threshold can tell */
	v->kind = v->d > t ? V_SLOWER : v->d < -t ? V_FASTER : V_UNCHANGED;
	snprintf(v->text, sizeof(v->text), "%s %.3fx, %.4g -> %.4g us (threshold +-%.1f%%: scatter %.1f%% over %zu "
		 "BASE runs, %zu NEW)", kind_text(o, v, t), ratio, exp(x->mlog), exp(y->mlog), pct(t),
		 pct(sigma), x->nu, y->nu);
	if (strcmp(x->group, y->group) != 0) {
		size_t len = strlen(v->text);

		/* timed beside other variants: its per-iteration figure moved with them */
		snprintf(v->text + len, sizeof(v->text) - len, "; timed group %s -> %s",
			 x->group[0] ? x->group : "1/1", y->group[0] ? y->group : "1/1");
	}
}

/* rows judged together: a suite (variant "") or a variant of a suite */
struct cgroup {
	char suite[64], variant[96];
	size_t k;           /* rows judged */
	size_t rb, rn;      /* fewest BASE and NEW runs of its rows */
	struct ibc_stats st; /* of the rows' log ratios: p50 and its order-statistic interval */
	double sd;          /* BASE's run-to-run scatter of the rows' median */
};

static int in_group(const struct crow *x, const struct cgroup *g)
{
	return strcmp(x->suite, g->suite) == 0 && (g->variant[0] == '\0' || strcmp(x->variant, g->variant) == 0);
}

/* The group's statistics; 0 when it has fewer than IBC_COMPARE_MIN_GROUP rows judged. */
static int group_stats(const struct cside *b, const struct cside *nw, const struct verdict *vd, double *tmp,
		       struct cgroup *g)
{
	double *e, m = 0, ss = 0;
	size_t i, p;

	g->k = g->rb = g->rn = 0;
	for (i = 0; i < b->n; i++) {
		const struct crow *x = &b->r[i], *y;

		if (!vd[i].judged || !in_group(x, g))
			continue;
		y = row_find(nw, x->key);
		tmp[g->k++] = vd[i].d;
		g->rb = g->rb == 0 || x->nu < g->rb ? x->nu : g->rb;
		g->rn = g->rn == 0 || y->nu < g->rn ? y->nu : g->rn;
	}
	if (g->k < IBC_COMPARE_MIN_GROUP || ibc_stats_compute(tmp, g->k, &g->st) != IBC_OK)
		return 0;
	/* pass p (each row's p-th run by run_id) against the rows' means: the
	 * median over rows is what the group's median would have moved had
	 * that run been NEW */
	e = calloc(g->rb, sizeof(*e));
	if (e == NULL)
		return 0;
	for (p = 0; p < g->rb; p++) {
		size_t q = 0;

		for (i = 0; i < b->n; i++)
			if (vd[i].judged && in_group(&b->r[i], g))
				tmp[q++] = log(b->r[i].u[p].fig) - b->r[i].mlog;
		e[p] = median_of(tmp, q);
		m += e[p] / (double)g->rb;
	}
	for (p = 0; p < g->rb; p++)
		ss += (e[p] - m) * (e[p] - m);
	g->sd = sqrt(ss / (double)(g->rb - 1));
	free(e);
	return 1;
}

/* A group's verdict against its noise: its own scatter, at least the median
 * of every group's and IBC_COMPARE_GROUP_FLOOR. */
static void group_judge(const struct ibc_compare_opts *o, const struct cgroup *g, double pooled, struct verdict *v)
{
	double sigma = fmax(fmax(g->sd, pooled), IBC_COMPARE_GROUP_FLOOR);
	double t = threshold(sigma, g->rn, g->rb, o->min_effect);

	v->d = g->st.p50;
	v->kind = g->st.p50 > t && g->st.ci_lo > 0 ? V_SLOWER
		  : g->st.p50 < -t && g->st.ci_hi < 0 ? V_FASTER : V_UNCHANGED;
	if (g->variant[0] != '\0')
		snprintf(v->name, sizeof(v->name), "variant %s.%s (%zu rows)", g->suite, g->variant, g->k);
	else
		snprintf(v->name, sizeof(v->name), "suite %s (%zu rows)", g->suite, g->k);
	snprintf(v->text, sizeof(v->text), "%s, median ratio %.3fx [%.3f, %.3f] over rows (threshold +-%.1f%%: "
		 "scatter of the median %.1f%% over %zu BASE runs)", kind_text(o, v, t), exp(g->st.p50),
		 exp(g->st.ci_lo), exp(g->st.ci_hi), pct(t), pct(sigma), g->rb);
}

/* Did the machine move between BASE and NEW?  The placement probe's
 * probe-same row (two ranks on one PU: a pair of context switches) measures
 * the speed of the machine's CPU and kernel, and nothing of the code under
 * test; probe-cross and probe-write measure which cores the ranks got, which
 * moves 1.5x between runs of one guest with every row unchanged, so they are
 * not used.  *d: the median of the probe-same rows' log ratios, *t: the
 * median of their row thresholds; 0 when no probe-same row has
 * IBC_COMPARE_MIN_RUNS BASE runs and a figure on both sides. */
static int machine_shift(const struct cside *b, const struct cside *nw, double *tmp, double *tmp2, double *d,
			 double *t)
{
	size_t i, k = 0;

	for (i = 0; i < b->n; i++) {
		const struct crow *x = &b->r[i], *y = row_find(nw, x->key);

		if (!x->placement || strcmp(x->variant, IBC_COMPARE_MACHINE_ROW) != 0 || y == NULL ||
		    x->nu < IBC_COMPARE_MIN_RUNS || !isfinite(x->mlog) ||
		    !isfinite(y->mlog))
			continue;
		tmp[k] = y->mlog - x->mlog;
		tmp2[k++] = threshold(fmax(x->sd, IBC_COMPARE_ROW_FLOOR), y->nu, x->nu, 0);
	}
	if (k == 0)
		return 0;
	*d = median_of(tmp, k);
	*t = median_of(tmp2, k);
	return 1;
}

/* The first name of NEW's set that BASE's does not hold, or NULL; NULL
 * also when either side names none (not recorded: nothing to tell). */
static const char *name_outside(char (*nset)[CSIDE_MACHINE_LEN], size_t nn, char (*bset)[CSIDE_MACHINE_LEN],
				size_t nb)
{
	size_t i, j;

	for (i = 0; nb > 0 && i < nn; i++) {
		for (j = 0; j < nb && strcmp(nset[i], bset[j]) != 0; j++)
			;
		if (j == nb)
			return nset[i];
	}
	return NULL;
}

/* Did NEW run on another machine than BASE?  Its CPU model, or a guest's
 * host CPU where both sides recorded one, is not among BASE's.  A speed that
 * two machines share by chance (probe-same alike) judges nothing across
 * them: why says which.  0: the same machine as far as meta.csv tells, and
 * why the line the header prints of it. */
static int machine_other(struct cside *b, struct cside *nw, char *why, size_t cap)
{
	const char *x = name_outside(nw->cpu, nw->ncpu, b->cpu, b->ncpu);

	if (x != NULL) {
		snprintf(why, cap, "BASE ran on %s, NEW on %s", b->cpu[0], x);
		return 1;
	}
	x = name_outside(nw->vmhost, nw->nvmhost, b->vmhost, b->nvmhost);
	if (x != NULL) {
		snprintf(why, cap, "BASE's guest ran on a %s host, NEW's on a %s host", b->vmhost[0], x);
		return 1;
	}
	if (b->ncpu == 0 || nw->ncpu == 0)
		snprintf(why, cap, "not recorded in %s (meta.csv's cpu_model): another machine cannot be told",
			 b->ncpu == 0 && nw->ncpu == 0 ? "BASE or NEW" : b->ncpu == 0 ? "BASE" : "NEW");
	else if (b->nvmhost > 0 && nw->nvmhost > 0)
		snprintf(why, cap, "%s in a guest on a %s host, both sides", b->cpu[0], b->vmhost[0]);
	else
		snprintf(why, cap, "%s, both sides%s", b->cpu[0],
			 b->nvmhost + nw->nvmhost == 0
				 ? strncmp(b->cpu[0], "QEMU", 4) == 0
					   ? "; a guest's, whose host is not recorded (vm_host_cpu), so not compared"
					   : ""
			 : b->nvmhost > 0 ? "; the guest's host is recorded in BASE only, so not compared"
					  : "; the guest's host is recorded in NEW only, so not compared");
	return 0;
}

/* The machine moved, or is another: a judged verdict cannot be told from the
 * machine's change.  why: the reason's text. */
static void machine_override(struct verdict *v, const char *why)
{
	char buf[sizeof(v->text) + 320];

	if (v->kind == V_MISSING || v->kind == V_INCONCLUSIVE)
		return;
	snprintf(buf, sizeof(buf), "inconclusive: %s; was: %s", why, v->text);
	v->kind = V_INCONCLUSIVE;
	snprintf(v->text, sizeof(v->text), "%.*s", (int)sizeof(v->text) - 1, buf);
}

/* "3 runs", or "1-3 runs" when the rows differ */
static const char *runs_text(const struct cside *c, char *buf, size_t cap)
{
	size_t i, lo = 0, hi = 0;

	for (i = 0; i < c->n; i++) {
		lo = lo == 0 || c->r[i].nu < lo ? c->r[i].nu : lo;
		hi = c->r[i].nu > hi ? c->r[i].nu : hi;
	}
	if (lo == hi)
		snprintf(buf, cap, "%zu run%s", lo, lo == 1 ? "" : "s");
	else
		snprintf(buf, cap, "%zu-%zu runs", lo, hi);
	return buf;
}

/* Say which suites of BASE ran at more than one placement: a run whose
 * placement probe read 1.25x or more another's (a guest's vCPUs moved
 * between passes).  Such a suite's rows hold the move in their run-to-run
 * scatter, which widens their thresholds; nothing is judged differently. */
static void base_placements(const struct cside *b)
{
	size_t i, j, u;

	for (i = 0; i < b->n; i++) {
		double lo = INFINITY, hi = 0;

		for (j = 0; j < i && strcmp(b->r[j].suite, b->r[i].suite) != 0; j++)
			;
		if (j < i || b->r[i].placement)
			continue; /* said with its suite's first row; a probe row is a placement */
		for (j = i; j < b->n; j++) {
			if (strcmp(b->r[j].suite, b->r[i].suite) != 0 || b->r[j].oversub)
				continue;
			for (u = 0; u < b->r[j].nu; u++)
				if (b->r[j].u[u].probe > 0) {
					lo = fmin(lo, b->r[j].u[u].probe);
					hi = fmax(hi, b->r[j].u[u].probe);
				}
		}
		if (hi > (1 + IBC_COMPARE_PROBE_MOVE) * lo)
			printf("# BASE: the %s runs sat at more than one placement (placement probe %.3g to %.3g us): "
			       "its rows' scatter holds the move and their thresholds are wider for it (make BASE "
			       "again with the cores steady)\n", b->r[i].suite, lo, hi);
	}
}

static int verdict_fails(const struct verdict *v)
{
	return v->kind == V_SLOWER || v->kind == V_MISSING;
}

int ibc_harness_compare(const struct ibc_compare_opts *o)
{
	struct cside b, nw;
	struct verdict *vd = NULL;
	struct cgroup *gr = NULL;
	char rb[48], rn[48];
	double *tmp = NULL, *tmp2 = NULL, pooled, md = 0, mt = 0;
	size_t i, j, nv, ng = 0, cnt[5] = { 0 }, gcnt[5] = { 0 }, nfail = 0;
	char mwhy[2 * CSIDE_MACHINE_LEN + 96], oreason[sizeof(mwhy) + 32];
	int rc, have_probe, moved, other;

	if (o->junit != NULL && ibc_harness_junit_check(o->junit, "ibchar compare") != IBC_OK)
		return IBC_ERR_INVAL; /* before any verdict: it said why */
	rc = cside_load(o->base, &b);
	if (rc != IBC_OK)
		return rc;
	rc = cside_load(o->new_dir, &nw);
	if (rc != IBC_OK) {
		cside_free(&b);
		return rc;
	}
	/* rows, then at most one group per suite and one per variant */
	vd = calloc(3 * b.n + 1, sizeof(*vd));
	tmp = calloc(b.n + 1, sizeof(*tmp));
	tmp2 = calloc(2 * b.n + 1, sizeof(*tmp2));
	gr = calloc(2 * b.n + 1, sizeof(*gr));
	if (vd == NULL || tmp == NULL || tmp2 == NULL || gr == NULL) {
		rc = IBC_ERR_NOMEM;
		goto out;
	}
	printf("# ibchar compare %s -> %s\n", o->base, o->new_dir);
	printf("# BASE: %s of each row (%zu run ids), NEW: %s; placement probe %.3f -> %.3f us\n",
	       runs_text(&b, rb, sizeof(rb)), b.nruns, runs_text(&nw, rn, sizeof(rn)), b.probe_us, nw.probe_us);
	printf("# a row is slower or faster beyond %gx its run-to-run scatter in BASE (at least its suite's "
	       "median scatter and %g%%) x sqrt(1/R_new + 1/R_base)%s%s; ", IBC_COMPARE_K,
	       100 * IBC_COMPARE_ROW_FLOOR, o->min_effect > 0 ? "; never below --min-effect" : "",
	       o->strict ? "; --strict: oversubscribed rows and probes judged" : "");
	if (o->max_threshold > 0)
		printf("within a threshold wider than +-%g%% it is inconclusive (too noisy to tell), not "
		       "unchanged\n", 100 * o->max_threshold);
	else
		printf("unchanged within any threshold (--max-threshold 0)\n");
	base_placements(&b);
	for (i = 0; i < b.n; i++)
		row_judge(o, &b, &b.r[i], row_find(&nw, b.r[i].key), tmp, &vd[i]);
	nv = b.n;
	/* groups: every suite, then every variant, in BASE's order */
	for (j = 0; j < 2; j++)
		for (i = 0; i < b.n; i++) {
			struct cgroup *g = &gr[ng];
			size_t q;

			snprintf(g->suite, sizeof(g->suite), "%s", b.r[i].suite);
			snprintf(g->variant, sizeof(g->variant), "%s", j ? b.r[i].variant : "");
			for (q = 0; q < i && !in_group(&b.r[q], g); q++)
				;
			if (q == i && group_stats(&b, &nw, vd, tmp, g))
				tmp2[ng++] = g->sd;
		}
	/* every group's scatter comes from the same BASE runs: their median,
	 * corrected for its bias, is the least a group's can be */
	pooled = ng > 0 ? median_of(tmp2, ng) / median_sd_bias(b.nruns > 1 ? gr[0].rb - 1 : 1) : 0;
	for (i = 0; i < ng; i++)
		group_judge(o, &gr[i], pooled, &vd[nv++]);
	have_probe = machine_shift(&b, &nw, tmp, tmp2, &md, &mt);
	moved = have_probe && fabs(md) > mt;
	other = machine_other(&b, &nw, mwhy, sizeof(mwhy));
	if (other)
		printf("# the machine: %s: another machine: %s\n", mwhy,
		       o->strict ? "--strict: judged anyway"
				 : "every verdict is inconclusive (make BASE on this machine)");
	else
		printf("# the CPU: %s\n", mwhy);
	if (!have_probe)
		printf("# the machine is not checked: no %s row (the probe suite) with %d BASE runs on both sides, "
		       "so a change of the machine's speed cannot be told from a change of the code\n",
		       IBC_COMPARE_MACHINE_ROW, IBC_COMPARE_MIN_RUNS);
	else
		printf("# the machine: %s (a pair of context switches on one PU) %.3fx (threshold +-%.1f%%): %s\n",
		       IBC_COMPARE_MACHINE_ROW, exp(md), pct(mt),
		       !moved ? "the machine is steady"
		       : o->strict ? "the machine moved; --strict: judged anyway"
				   : "the machine moved: every verdict is inconclusive");
	if (other)
		snprintf(oreason, sizeof(oreason), "another machine (%s)", mwhy);
	else
		snprintf(oreason, sizeof(oreason), "the machine moved (%s %.3fx)", IBC_COMPARE_MACHINE_ROW, exp(md));
	for (i = 0; i < nv; i++) {
		if ((moved || other) && !o->strict)
			machine_override(&vd[i], oreason);
		(i < b.n ? cnt : gcnt)[vd[i].kind]++;
	}
	if (other && !o->strict)
		fprintf(stderr, "ibchar compare: %s: another machine, so no row or group is judged (make BASE on "
			"this machine; --strict judges anyway)\n", mwhy);
	else if (moved && !o->strict)
		fprintf(stderr, "ibchar compare: %s moved %.3fx between BASE and NEW (beyond its "
			"+-%.1f%% run-to-run threshold): the machine changed speed, so no row or group is judged "
			"(run both on one machine in one state, or make BASE again; --strict judges anyway)\n",
			IBC_COMPARE_MACHINE_ROW, exp(md), pct(mt));
	printf("1..%zu\n", nv);
	for (i = 0; i < nv; i++) {
		printf("%sok %zu - %s: %s\n", verdict_fails(&vd[i]) ? "not " : "", i + 1, vd[i].name, vd[i].text);
		nfail += (size_t)verdict_fails(&vd[i]);
	}
	for (j = 0; j < nw.n; j++)
		if (row_find(&b, nw.r[j].key) == NULL)
			printf("# new in NEW (not in BASE): %s\n", nw.r[j].label);
	printf("# %zu rows: %zu slower, %zu faster, %zu unchanged, %zu inconclusive, %zu missing in NEW; "
	       "%zu groups (of %d or more rows judged): %zu slower, %zu faster, %zu unchanged, %zu inconclusive\n",
	       b.n, cnt[V_SLOWER], cnt[V_FASTER], cnt[V_UNCHANGED], cnt[V_INCONCLUSIVE], cnt[V_MISSING], ng,
	       IBC_COMPARE_MIN_GROUP, gcnt[V_SLOWER], gcnt[V_FASTER], gcnt[V_UNCHANGED], gcnt[V_INCONCLUSIVE]);
	if (o->junit != NULL) {
		struct ibc_junit_case *jc = calloc(nv + 1, sizeof(*jc));

		if (jc == NULL) {
			rc = IBC_ERR_NOMEM;
			goto out;
		}
		for (i = 0; i < nv; i++)
			jc[i] = (struct ibc_junit_case){ vd[i].name, vd[i].text, !verdict_fails(&vd[i]) };
		rc = ibc_harness_junit_write(o->junit, "ibchar compare", jc, nv);
		free(jc);
		if (rc != IBC_OK)
			rc = IBC_ERR_INVAL;
	}
	if (rc == IBC_OK && nfail > 0)
		rc = IBC_ERR_REMOTE;
out:
	free(vd);
	free(tmp);
	free(tmp2);
	free(gr);
	cside_free(&b);
	cside_free(&nw);
	return rc;
}
