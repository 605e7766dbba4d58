/* The LoP closed loop over several passes (logp_passes.h). */
#include "logp/logp_passes.h"

#include "core/csv.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "logp/logp_fits.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RUNS 128
#define NMOD 3

static const char *const mod_col[NMOD] = { "lop", "lop_rtt", "loggp" };
static const char *const mod_names[NMOD] = { "LoP", "LoP-RTT", "LogGP" };
/* the columns of lop-model.csv taken as the passes' median */
static const char *const med_cols[] = { "measured_us", "p50_us", "copy_us", "user_write_us" };
#define NMED (sizeof(med_cols) / sizeof(med_cols[0]))
/* the key of a row across the passes */
static const char *const key_cols[] = { "suite", "variant", "xport", "ranks", "bytes", "fanin" };
#define NKEY (sizeof(key_cols) / sizeof(key_cols[0]))
static const char *const added_cols[] = { "passes", "best_err_min", "best_err_max" };
#define NADDED (sizeof(added_cols) / sizeof(added_cols[0]))

struct run {
	const char *id;
	int logp, fam;               /* rows of the kernels, rows a family predicts */
	char sub[4200];              /* DIR/passes/<id> */
	struct ibc_csv_table *model; /* its lop-model.csv, NULL: not modelled */
};

static int is_fam(const struct ibc_logp_model_opts *o, const char *suite)
{
	size_t i;

	for (i = 0; i < o->nfams; i++)
		if (strcmp(o->fams[i].suite, suite) == 0)
			return 1;
	return 0;
}

/* the runs of t, in order of their first row; IBC_ERR_INVAL past MAX_RUNS */
static int runs_find(const struct ibc_logp_model_opts *o, const struct ibc_csv_table *t,
		     struct run *runs, size_t *n)
{
	size_t r, i;

	*n = 0;
	for (r = 0; r + 1 < t->nrows; r++) {
		const char *id = ibc_csv_str(t, r, "run_id"), *suite = ibc_csv_str(t, r, "suite");

		for (i = 0; i < *n && strcmp(runs[i].id, id) != 0; i++)
			;
		if (i == *n) {
			if (*n == MAX_RUNS)
				return IBC_ERR_INVAL;
			memset(&runs[i], 0, sizeof(runs[i]));
			runs[i].id = id;
			(*n)++;
		}
		runs[i].logp |= strcmp(suite, "logp") == 0;
		runs[i].fam |= is_fam(o, suite) && strcmp(ibc_csv_str(t, r, "impl"), "ibchar") == 0;
	}
	return IBC_OK;
}

/* DIR/passes/<the id, as a file name>, another name than the passes before */
static void sub_name(const char *dir, const struct run *runs, size_t i, char *b, size_t cap)
{
	char name[80];
	size_t k, j;

	for (k = 0; runs[i].id[k] != '\0' && k + 1 < sizeof(name) - 8; k++) {
		char c = runs[i].id[k];

		name[k] = isalnum((unsigned char)c) || c == '-' || c == '_' || (c == '.' && k > 0)
				  ? c
				  : '_';
	}
	name[k] = '\0';
	if (k == 0)
		snprintf(name, sizeof(name), "run");
	snprintf(b, cap, "%s/passes/%s", dir, name);
	for (j = 0; j < i; j++)
		if (strcmp(runs[j].sub, b) == 0) {
			snprintf(b, cap, "%s/passes/%s-%zu", dir, name, i + 1);
			break;
		}
}

/* sub/meta.csv: the blocks of dir/meta.csv (each from its key "bench")
 * whose run_id is id; nothing when dir has none */
static int meta_write(const char *dir, const char *sub, const char *id)
{
	static const char *const cols[] = { "key", "value" };
	struct ibc_csv_table *t = NULL;
	struct ibc_csv_writer *w = NULL;
	char path[4300];
	size_t r, b0 = 0, e;
	int rc;

	snprintf(path, sizeof(path), "%s/meta.csv", dir);
	if (access(path, R_OK) != 0 || ibc_csv_read(path, &t) != IBC_OK)
		return IBC_OK;
	snprintf(path, sizeof(path), "%s/meta.csv", sub);
	rc = ibc_csv_writer_open(path, cols, 2, 0, &w);
	while (rc == IBC_OK && b0 + 1 < t->nrows) {
		int mine = 0;

		for (e = b0 + 1; e + 1 < t->nrows && strcmp(ibc_csv_str(t, e, "key"), "bench") != 0; e++)
			;
		for (r = b0; r < e; r++)
			mine |= strcmp(ibc_csv_str(t, r, "key"), "run_id") == 0 &&
				strcmp(ibc_csv_str(t, r, "value"), id) == 0;
		for (r = b0; mine && r < e && rc == IBC_OK; r++) {
			const char *f[2] = { ibc_csv_str(t, r, "key"), ibc_csv_str(t, r, "value") };

			rc = ibc_csv_writer_row(w, f);
		}
		b0 = e;
	}
	if (w != NULL && ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	ibc_csv_table_free(t);
	return rc;
}

/* the pass's rows into sub/results.csv, its meta.csv, its fits, then the
 * model over sub, its stdout into sub/model.txt */
static int pass_model(const struct ibc_logp_model_opts *o, const struct ibc_csv_table *t,
		      struct run *p)
{
	struct ibc_logp_model_opts po = *o;
	struct ibc_csv_writer *w = NULL;
	char path[4300];
	size_t r;
	int rc = ibc_fs_mkdir_p(p->sub);

	snprintf(path, sizeof(path), "%s/results.csv", p->sub);
	if (rc == IBC_OK)
		rc = ibc_csv_writer_open(path, (const char *const *)t->cells, t->ncols, 0, &w);
	for (r = 0; rc == IBC_OK && r + 1 < t->nrows; r++)
		if (strcmp(ibc_csv_str(t, r, "run_id"), p->id) == 0)
			rc = ibc_csv_writer_row(w, (const char *const *)&t->cells[(r + 1) * t->ncols]);
	if (w != NULL && ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	if (rc == IBC_OK)
		rc = meta_write(o->dir, p->sub, p->id);
	if (rc != IBC_OK) {
		ibc_error("logp model: writing %s: %s", p->sub, ibc_status_str(rc));
		return rc;
	}
	rc = ibc_logp_fits_write(p->sub, p->id);
	if (rc != IBC_OK)
		return rc;
	snprintf(path, sizeof(path), "%s/model.txt", p->sub);
	po.dir = p->sub;
	po.out = fopen(path, "w");
	rc = ibc_logp_model_run(&po);
	if (po.out != NULL && fclose(po.out) != 0 && rc == IBC_OK)
		rc = IBC_ERR_IO;
	if (rc == IBC_OK) {
		snprintf(path, sizeof(path), "%s/lop-model.csv", p->sub);
		rc = ibc_csv_read(path, &p->model);
	}
	return rc;
}

/* whether row ra of a and row rb of b agree on the columns cols[0..n) */
static int same_cols(const struct ibc_csv_table *a, size_t ra, const struct ibc_csv_table *b,
		     size_t rb, const char *const *cols, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (strcmp(ibc_csv_str(a, ra, cols[k]), ibc_csv_str(b, rb, cols[k])) != 0)
			return 0;
	return 1;
}

static int same_key(const struct ibc_csv_table *a, size_t ra, const struct ibc_csv_table *b,
		    size_t rb)
{
	return same_cols(a, ra, b, rb, key_cols, NKEY);
}

/* the row of table t with row r of table a's key, or -1 (t NULL: -1) */
static long row_in(const struct ibc_csv_table *t, const struct ibc_csv_table *a, size_t r)
{
	size_t q;

	for (q = 0; t != NULL && q + 1 < t->nrows; q++)
		if (same_key(t, q, a, r))
			return (long)q;
	return -1;
}

/* whether one of tab[0..i) has row j of tab[i]'s key (its row is out) */
static int key_seen(struct ibc_csv_table *const *tab, size_t i, size_t j)
{
	size_t q;

	for (q = 0; q < i; q++)
		if (row_in(tab[q], tab[i], j) >= 0)
			return 1;
	return 0;
}

/* each modelled pass's `name` (DIR/passes/<id>/name) into tab[i]; NULL
 * where the pass was not modelled or the file cannot be read */
static void pass_tables(const struct run *pass, size_t npass, const char *name,
			struct ibc_csv_table **tab)
{
	char path[4300];
	size_t i;

	for (i = 0; i < npass; i++) {
		tab[i] = NULL;
		snprintf(path, sizeof(path), "%s/%s", pass[i].sub, name);
		if (pass[i].model != NULL && ibc_csv_read(path, &tab[i]) != IBC_OK)
			tab[i] = NULL;
	}
}

static void tables_free(struct ibc_csv_table **tab, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ibc_csv_table_free(tab[i]);
}

static void fmtd(char *b, size_t cap, double v)
{
	if (isfinite(v))
		snprintf(b, cap, "%.4g", v);
	else
		b[0] = '\0';
}

/* the median of the finite v[0..n) (NAN: none); sorts v */
static double median(double *v, size_t n)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++)
		if (isfinite(v[i]))
			v[m++] = v[i];
	if (m == 0)
		return NAN;
	ibc_stats_sort(v, m);
	return ibc_stats_quantile_sorted(v, m, 0.5);
}

struct combined {
	double meas, us[NMOD], err[NMOD], lo, hi;
	int best, passes;
	char status[NMOD][256];
};

/* Model m over the passes: row at[i] of tab[i] (at[i] < 0: pass i has no
 * such row), `passes` of them.  Pass i's error into e[i] (NAN: none).  When
 * the model predicts in more than half of the passes, *us and *err are the
 * medians of its predictions and errors and status "ok"; else NAN and the
 * status says why (the first pass's reason). */
static void model_median(struct ibc_csv_table *const *tab, const long *at, size_t nrun,
			 int passes, int m, double *us, double *err, double *e, char *status,
			 size_t cap)
{
	double v[MAX_RUNS];
	char col[32];
	const char *first = "";
	size_t i;
	int npred = 0;

	for (i = 0; i < nrun; i++) {
		v[i] = e[i] = NAN;
		if (at[i] < 0)
			continue;
		snprintf(col, sizeof(col), "%s_us", mod_col[m]);
		v[i] = ibc_csv_num(tab[i], (size_t)at[i], col);
		snprintf(col, sizeof(col), "%s_err", mod_col[m]);
		e[i] = ibc_csv_num(tab[i], (size_t)at[i], col);
		npred += isfinite(v[i]);
		snprintf(col, sizeof(col), "%s_status", mod_col[m]);
		if (!isfinite(v[i]) && *first == '\0')
			first = ibc_csv_str(tab[i], (size_t)at[i], col);
	}
	*us = *err = NAN;
	if (2 * npred > passes) {
		double ev[MAX_RUNS];

		*us = median(v, nrun);
		memcpy(ev, e, nrun * sizeof(*ev));
		*err = median(ev, nrun);
		snprintf(status, cap, "ok");
	} else if (npred == 0) {
		snprintf(status, cap, "%s", first);
	} else {
		snprintf(status, cap, "no prediction: in %d of %d passes only (%s in the others)",
			 npred, passes, first);
	}
}

/* whether col is model m's column of that suffix ("_us", ...) */
static int is_mod_col(const char *col, int m, const char *suffix)
{
	size_t n = strlen(mod_col[m]);

	return strncmp(col, mod_col[m], n) == 0 && strcmp(col + n, suffix) == 0;
}

/* the row with key (a, r) over the passes' lop-model.csv tab[0..nrun):
 * medians, statuses, best */
static void combine(struct ibc_csv_table *const *tab, size_t nrun, const struct ibc_csv_table *a,
		    size_t r, struct combined *c, char cells[][256], const char *const *cols,
		    size_t ncols)
{
	static double v[MAX_RUNS], e[NMOD][MAX_RUNS];
	long at[MAX_RUNS];
	size_t i, k;
	int m;
	double med_v;

	memset(c, 0, sizeof(*c));
	c->best = -1;
	c->meas = NAN;
	for (i = 0; i < nrun; i++) {
		at[i] = row_in(tab[i], a, r);
		c->passes += at[i] >= 0;
	}
	for (k = 0; k < ncols; k++) {
		int med = 0;

		for (i = 0; i < NMED; i++)
			med |= strcmp(cols[k], med_cols[i]) == 0;
		snprintf(cells[k], 256, "%s", ibc_csv_str(a, r, cols[k]));
		if (!med)
			continue;
		for (i = 0; i < nrun; i++)
			v[i] = at[i] >= 0 ? ibc_csv_num(tab[i], (size_t)at[i], cols[k]) : NAN;
		med_v = median(v, nrun);
		fmtd(cells[k], 256, med_v);
		if (strcmp(cols[k], "measured_us") == 0)
			c->meas = med_v;
	}
	for (m = 0; m < NMOD; m++) {
		model_median(tab, at, nrun, c->passes, m, &c->us[m], &c->err[m], e[m], c->status[m],
			     sizeof(c->status[m]));
		if (isfinite(c->err[m]) && (c->best < 0 || fabs(c->err[m]) < fabs(c->err[c->best])))
			c->best = m;
	}
	c->lo = c->hi = NAN;
	/* fmin and fmax pass over a NAN */
	for (i = 0; c->best >= 0 && i < nrun; i++) {
		c->lo = fmin(c->lo, e[c->best][i]);
		c->hi = fmax(c->hi, e[c->best][i]);
	}
	for (k = 0; k < ncols; k++) {
		if (strcmp(cols[k], "best") == 0)
			snprintf(cells[k], 256, "%s", c->best >= 0 ? mod_names[c->best] : "");
		if (strcmp(cols[k], "best_err") == 0)
			fmtd(cells[k], 256, c->best >= 0 ? c->err[c->best] : NAN);
		for (m = 0; m < NMOD; m++) {
			if (is_mod_col(cols[k], m, "_us"))
				fmtd(cells[k], 256, c->us[m]);
			if (is_mod_col(cols[k], m, "_err"))
				fmtd(cells[k], 256, c->err[m]);
			if (is_mod_col(cols[k], m, "_status"))
				snprintf(cells[k], 256, "%s", c->status[m]);
		}
	}
}

/* a pass's score: rows within +-20% by the closest model, rows scored */
static void pass_score(const struct ibc_csv_table *t, int *in, int *of)
{
	size_t r;

	*in = *of = 0;
	for (r = 0; t != NULL && r + 1 < t->nrows; r++) {
		double e = ibc_csv_num(t, r, "best_err");

		*of += isfinite(e);
		*in += isfinite(e) && fabs(e) <= 0.2;
	}
}

static int file_copy(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "r"), *out = in != NULL ? fopen(to, "w") : NULL;
	size_t n;
	int rc = in != NULL && out != NULL ? IBC_OK : IBC_ERR_IO;

	while (rc == IBC_OK && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = IBC_ERR_IO;
	if (in != NULL && ferror(in))
		rc = IBC_ERR_IO;
	if (in != NULL)
		fclose(in);
	if (out != NULL && fclose(out) != 0)
		rc = IBC_ERR_IO;
	if (rc != IBC_OK)
		ibc_error("logp model: copying %s to %s failed", from, to);
	return rc;
}

/* DIR/lop-model.csv: every key of the modelled passes, in order of the
 * first pass that has it; the table on o->out */
static int combined_write(const struct ibc_logp_model_opts *o, struct run *runs, size_t nrun,
			  int *score)
{
	static char cells[64][256];
	struct ibc_csv_table *mt[MAX_RUNS];
	const struct ibc_csv_table *h = NULL;
	const char *cols[64], *fp[64];
	struct ibc_csv_writer *w = NULL;
	char path[4300];
	size_t i, j, k, ncols = 0;
	int rc, m;

	for (i = 0; i < nrun; i++) {
		mt[i] = runs[i].model;
		if (h == NULL)
			h = mt[i];
	}
	if (h == NULL || h->ncols + NADDED > 64) {
		ibc_error("logp model: the passes' lop-model.csv has %zu columns", h ? h->ncols : 0);
		return IBC_ERR_INVAL;
	}
	for (k = 0; k < h->ncols; k++)
		cols[ncols++] = h->cells[k];
	for (k = 0; k < NADDED; k++)
		cols[ncols++] = added_cols[k];
	snprintf(path, sizeof(path), "%s/lop-model.csv", o->dir);
	rc = ibc_csv_writer_open(path, cols, ncols, 0, &w);
	if (rc != IBC_OK) {
		ibc_error("logp model: writing %s: %s", path, ibc_status_str(rc));
		return rc;
	}
	if (o->out != NULL)
		fprintf(o->out, "%-9s %-11s %-5s %5s %8s %5s %10s %10s %7s %10s %7s %10s %7s %-7s %6s  %s\n",
			"suite", "variant", "xport", "N", "bytes", "fanin", "meas_us", "LoP_us", "err",
			"LoPrtt_us", "err", "LogGP_us", "err", "best", "passes",
			"best's err per pass: min..max");
	for (i = 0; i < nrun && rc == IBC_OK; i++) {
		const struct ibc_csv_table *a = mt[i];

		for (j = 0; a != NULL && j + 1 < a->nrows && rc == IBC_OK; j++) {
			struct combined c;
			char s[NMOD][2][16];

			if (key_seen(mt, i, j))
				continue;
			combine(mt, nrun, a, j, &c, cells, cols, h->ncols);
			snprintf(cells[h->ncols], 256, "%d", c.passes);
			fmtd(cells[h->ncols + 1], 256, c.lo);
			fmtd(cells[h->ncols + 2], 256, c.hi);
			for (k = 0; k < ncols; k++)
				fp[k] = cells[k];
			rc = ibc_csv_writer_row(w, fp);
			score[1] += c.best >= 0;
			score[0] += c.best >= 0 && fabs(c.err[c.best]) <= 0.2;
			if (o->out == NULL)
				continue;
			for (m = 0; m < NMOD; m++) {
				if (isfinite(c.us[m]))
					snprintf(s[m][0], 16, "%.4g", c.us[m]);
				else
					snprintf(s[m][0], 16, "%s",
						 strncmp(c.status[m], "not modelled", 12) == 0 ? "n/m"
											      : "no pred.");
				fmtd(s[m][1], 16, c.err[m]);
			}
			fprintf(o->out, "%-9s %-11s %-5s %5s %8s %5s %10.3f %10s %7s %10s %7s %10s %7s %-7s %6d  ",
				ibc_csv_str(a, j, "suite"), ibc_csv_str(a, j, "variant"),
				ibc_csv_str(a, j, "xport"), ibc_csv_str(a, j, "ranks"),
				ibc_csv_str(a, j, "bytes"), ibc_csv_str(a, j, "fanin"), c.meas, s[0][0],
				s[0][1], s[1][0], s[1][1], s[2][0], s[2][1],
				c.best >= 0 ? mod_names[c.best] : "-", c.passes);
			if (c.best >= 0)
				fprintf(o->out, "%+.3f..%+.3f\n", c.lo, c.hi);
			else
				fprintf(o->out, "-\n%42s %s\n", "", c.status[0]);
		}
	}
	if (ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc;
}

/* DIR/lop-extrapolation.csv: per key of the passes' tables, in order of
 * the first pass that has it, each model's median prediction over the
 * passes (model_median's rule), the other cells the first such pass's, and
 * the passes counted */
static int extra_write(const struct ibc_logp_model_opts *o, const struct run *pass, size_t npass)
{
	static char cells[64][256];
	struct ibc_csv_table *et[MAX_RUNS];
	const struct ibc_csv_table *h = NULL;
	const char *cols[64], *fp[64];
	struct ibc_csv_writer *w = NULL;
	char path[4300];
	double e[MAX_RUNS], us, err;
	long at[MAX_RUNS];
	size_t i, j, k, q, ncols = 0;
	int rc = IBC_OK, m;

	pass_tables(pass, npass, "lop-extrapolation.csv", et);
	for (i = 0; i < npass && h == NULL; i++)
		h = et[i];
	if (h == NULL || h->ncols + 1 > 64) {
		ibc_error("logp model: no pass's lop-extrapolation.csv readable, or %zu columns",
			  h != NULL ? h->ncols : 0);
		rc = IBC_ERR_INVAL;
	}
	for (k = 0; rc == IBC_OK && k < h->ncols; k++)
		cols[ncols++] = h->cells[k];
	cols[ncols++] = "passes";
	snprintf(path, sizeof(path), "%s/lop-extrapolation.csv", o->dir);
	if (rc == IBC_OK && (rc = ibc_csv_writer_open(path, cols, ncols, 0, &w)) != IBC_OK)
		ibc_error("logp model: writing %s: %s", path, ibc_status_str(rc));
	for (i = 0; rc == IBC_OK && i < npass; i++) {
		for (j = 0; et[i] != NULL && j + 1 < et[i]->nrows && rc == IBC_OK; j++) {
			int passes = 0;

			if (key_seen(et, i, j))
				continue;
			for (q = 0; q < npass; q++) {
				at[q] = row_in(et[q], et[i], j);
				passes += at[q] >= 0;
			}
			for (k = 0; k + 1 < ncols; k++)
				snprintf(cells[k], 256, "%s", ibc_csv_str(et[i], j, cols[k]));
			for (m = 0; m < NMOD; m++) {
				char status[256];

				model_median(et, at, npass, passes, m, &us, &err, e, status,
					     sizeof(status));
				for (k = 0; k + 1 < ncols; k++) {
					if (is_mod_col(cols[k], m, "_us"))
						fmtd(cells[k], 256, us);
					if (is_mod_col(cols[k], m, "_status"))
						snprintf(cells[k], 256, "%s", status);
				}
			}
			snprintf(cells[ncols - 1], 256, "%d", passes);
			for (k = 0; k < ncols; k++)
				fp[k] = cells[k];
			rc = ibc_csv_writer_row(w, fp);
		}
	}
	if (w != NULL && ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	tables_free(et, npass);
	return rc;
}

#define MAX_FANIN_KEYS 64

/* RGM's fan-in check held over every pass, on o->out: per (xport, N, bytes)
 * whose ratio (measured at the model's fan-in over the measured best) some
 * pass has, each pass's ratio, their median and how many are <= 1.1 */
static void fanin_say(const struct ibc_logp_model_opts *o, const struct run *pass, size_t npass)
{
	static const char *const fkey[] = { "xport", "ranks", "bytes" };
	struct ibc_csv_table *ft[MAX_RUNS];
	const struct ibc_csv_table *kt[MAX_FANIN_KEYS];
	size_t kr[MAX_FANIN_KEYS], nk = 0, i, j, r, q;

	if (o->out == NULL)
		return;
	pass_tables(pass, npass, "lop-fanin.csv", ft);
	for (i = 0; i < npass; i++) {
		for (r = 0; ft[i] != NULL && r + 1 < ft[i]->nrows && nk < MAX_FANIN_KEYS; r++) {
			int seen = 0;

			if (!isfinite(ibc_csv_num(ft[i], r, "model_over_best")))
				continue;
			for (j = 0; j < nk && !seen; j++)
				seen = same_cols(ft[i], r, kt[j], kr[j], fkey, 3);
			if (!seen) {
				kt[nk] = ft[i];
				kr[nk++] = r;
			}
		}
	}
	if (nk > 0)
		fprintf(o->out, "RGM fan-in chosen by the model, measured at it over the measured best, "
			"per pass (each pass's lop-fanin.csv; '-': no ratio in it):\n");
	for (j = 0; j < nk; j++) {
		double v[MAX_RUNS];
		int within = 0, have = 0;

		fprintf(o->out, "  %s N=%s %s B:", ibc_csv_str(kt[j], kr[j], "xport"),
			ibc_csv_str(kt[j], kr[j], "ranks"), ibc_csv_str(kt[j], kr[j], "bytes"));
		for (i = 0; i < npass; i++) {
			v[i] = NAN;
			for (q = 0; ft[i] != NULL && q + 1 < ft[i]->nrows && !isfinite(v[i]); q++)
				if (same_cols(ft[i], q, kt[j], kr[j], fkey, 3))
					v[i] = ibc_csv_num(ft[i], q, "model_over_best");
			if (pass[i].model == NULL)
				continue;
			have += isfinite(v[i]);
			within += isfinite(v[i]) && v[i] <= 1.1;
			if (isfinite(v[i]))
				fprintf(o->out, " %.3f", v[i]);
			else
				fprintf(o->out, " -");
		}
		fprintf(o->out, "; median %.3f; within 1.1x in %d of %d passes\n", median(v, npass),
			within, have);
	}
	tables_free(ft, npass);
}

static int model_passes(const struct ibc_logp_model_opts *o, int *handled)
{
	struct run *runs = NULL, *pass = NULL;
	struct ibc_csv_table *t = NULL;
	char path[4300], to[4300];
	size_t nrun = 0, npass = 0, nmod = 0, orphans = 0, i, r;
	int rc, score[2] = { 0, 0 }, last = -1;

	*handled = 0;
	snprintf(path, sizeof(path), "%s/results.csv", o->dir);
	/* unreadable: the one-run path says so */
	if (o->fits_dir != NULL || access(path, R_OK) != 0 || ibc_csv_read(path, &t) != IBC_OK)
		return IBC_OK;
	runs = calloc(MAX_RUNS, sizeof(*runs));
	pass = calloc(MAX_RUNS, sizeof(*pass));
	rc = runs != NULL && pass != NULL ? runs_find(o, t, runs, &nrun) : IBC_ERR_NOMEM;
	for (i = 0; rc == IBC_OK && i < nrun; i++)
		if (runs[i].logp && runs[i].fam)
			pass[npass++] = runs[i];
	free(runs);
	if (rc != IBC_OK || npass < 2) {
		ibc_csv_table_free(t);
		free(pass);
		if (rc != IBC_OK) {
			*handled = 1;
			ibc_error("logp model: %s: %s", path,
				  rc == IBC_ERR_INVAL ? "more than 128 runs" : ibc_status_str(rc));
		}
		return rc;
	}
	*handled = 1;
	for (r = 0; r + 1 < t->nrows; r++) {
		int in_pass = 0;

		for (i = 0; i < npass && !in_pass; i++)
			in_pass = strcmp(ibc_csv_str(t, r, "run_id"), pass[i].id) == 0;
		orphans += !in_pass && is_fam(o, ibc_csv_str(t, r, "suite")) &&
			   strcmp(ibc_csv_str(t, r, "impl"), "ibchar") == 0;
	}
	if (o->out != NULL) {
		fprintf(o->out, "LoP closed loop over %zu passes of %s: each pass's own fits predict its "
			"own rows (%s/passes/<run_id>/: results.csv, fits.csv, lop-*.csv, model.txt);\n"
			"per row below, the median over the passes of the measurement, of each model's "
			"prediction and of its error (a pass's err = its predicted / its measured - 1);\n"
			"a model predicts a row when it does in more than half of the row's passes\n",
			npass, path, o->dir);
		if (orphans > 0)
			fprintf(o->out, "not modelled: %zu rows of runs that measured no logp kernels of "
				"their own\n", orphans);
	}
	for (i = 0; i < npass; i++) {
		int in, of;

		sub_name(o->dir, pass, i, pass[i].sub, sizeof(pass[i].sub));
		if (pass_model(o, t, &pass[i]) != IBC_OK) {
			if (o->out != NULL)
				fprintf(o->out, "pass %s: not modelled (%s/model.txt says why)\n",
					pass[i].id, pass[i].sub);
			continue;
		}
		nmod++;
		last = (int)i;
		pass_score(pass[i].model, &in, &of);
		if (o->out != NULL)
			fprintf(o->out, "pass %s: rows within +-20%% by the closest model: %d of %d\n",
				pass[i].id, in, of);
	}
	if (nmod == 0) {
		ibc_error("logp model: none of the %zu passes of %s could be modelled", npass, path);
		rc = IBC_ERR_NOTFOUND;
	}
	if (rc == IBC_OK && o->out != NULL)
		fprintf(o->out, "\n");
	if (rc == IBC_OK)
		rc = combined_write(o, pass, npass, score);
	if (rc == IBC_OK && o->out != NULL)
		fprintf(o->out, "rows within +-20%% by the closest model, by the median of its errors "
			"over the passes: %d of %d\n", score[0], score[1]);
	if (rc == IBC_OK)
		fanin_say(o, pass, npass);
	if (rc == IBC_OK)
		rc = extra_write(o, pass, npass);
	if (rc == IBC_OK) {
		snprintf(path, sizeof(path), "%s/lop-fanin.csv", pass[last].sub);
		snprintf(to, sizeof(to), "%s/lop-fanin.csv", o->dir);
		rc = file_copy(path, to);
	}
	if (rc == IBC_OK && o->out != NULL)
		fprintf(o->out, "lop-extrapolation.csv: each model's median over the passes (where it "
			"predicts in more than half of them); lop-fanin.csv: the last pass's "
			"(%s/model.txt)\n\nwritten: %s/lop-model.csv, lop-extrapolation.csv, "
			"lop-fanin.csv\n", pass[last].sub, o->dir);
	for (i = 0; i < npass; i++)
		ibc_csv_table_free(pass[i].model);
	free(pass);
	ibc_csv_table_free(t);
	return rc;
}

int ibc_logp_model_dir(const struct ibc_logp_model_opts *o)
{
	int handled = 0, rc = model_passes(o, &handled);

	return handled ? rc : ibc_logp_model_run(o);
}
