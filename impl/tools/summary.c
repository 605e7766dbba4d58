/* Summary tables of a results directory: see summary.h. */
#include "tools/summary.h"
#include "tools/suites.h"
#include "harness/harness.h"

#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PIV_MAX 64

struct piv_key {
	char variant[48], impl[24], fanin[12], bytes[24];
};

static int piv_key_eq(const struct piv_key *a, const struct piv_key *b)
{
	return strcmp(a->variant, b->variant) == 0 && strcmp(a->impl, b->impl) == 0 &&
	       strcmp(a->fanin, b->fanin) == 0 && strcmp(a->bytes, b->bytes) == 0;
}

static int row_in(const struct ibc_csv_table *t, size_t r, const char *run_id, const char *suite)
{
	return strcmp(ibc_csv_str(t, r, "run_id"), run_id) == 0 &&
	       strcmp(ibc_csv_str(t, r, "suite"), suite) == 0;
}

/* the marks of a cell (summary.h): its row was oversubscribed, or kept
 * fewer than IBC_SUMMARY_MIN_SAMPLES samples */
enum { MARK_OVERSUB = 1, MARK_FEW = 2 };

static unsigned row_marks(const struct ibc_csv_table *t, size_t r)
{
	const char *o = ibc_csv_cell(t, r, "oversub"), *it = ibc_csv_cell(t, r, "iters");
	unsigned m = 0;

	if (o != NULL && strcmp(o, "1") == 0)
		m |= MARK_OVERSUB;
	if (it != NULL && it[0] != '\0' && strtod(it, NULL) < IBC_SUMMARY_MIN_SAMPLES)
		m |= MARK_FEW;
	return m;
}

static const char *marks_str(unsigned m)
{
	static const char *const s[] = { "", IBC_SUMMARY_MARK_OVERSUB, IBC_SUMMARY_MARK_FEW,
					 IBC_SUMMARY_MARK_OVERSUB IBC_SUMMARY_MARK_FEW };

	return s[m & 3];
}

/* the legend under a table whose cells carry marks (any: the marks used) */
static void marks_note(struct ibc_tab *tab, unsigned any)
{
	char note[256] = "";

	if (any & MARK_OVERSUB)
		snprintf(note, sizeof(note), "%s oversubscribed point (ranks > PUs: not evidence of speed)",
			 IBC_SUMMARY_MARK_OVERSUB);
	if (any & MARK_FEW)
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s%s fewer than %d kept samples (iters)",
			 note[0] ? "; " : "", IBC_SUMMARY_MARK_FEW, IBC_SUMMARY_MIN_SAMPLES);
	if (note[0] != '\0')
		ibc_tab_note(tab, note);
}

struct pivot {
	struct piv_key keys[PIV_MAX];
	double p50[PIV_MAX][PIV_MAX]; /* key x N; < 0: not measured */
	unsigned char mark[PIV_MAX][PIV_MAX];
	long ns[PIV_MAX];
	size_t nk, nn;
	int have_ref;
};

/* One suite's rows as variant x N of the median (p50, us); RGM's fan-ins
 * beside each other, N sorted. */
static void pivot_fill(struct pivot *p, const struct ibc_csv_table *t, const char *run_id,
		       const char *suite, const char *ref_variant)
{
	size_t r, k, j;

	memset(p, 0, sizeof(*p));
	for (k = 0; k < PIV_MAX; k++)
		for (j = 0; j < PIV_MAX; j++)
			p->p50[k][j] = -1;
	for (r = 0; r + 1 < t->nrows; r++) {
		struct piv_key key;
		long n;

		if (!row_in(t, r, run_id, suite) || strcmp(ibc_csv_str(t, r, "impl"), "model") == 0)
			continue;
		memset(&key, 0, sizeof(key));
		snprintf(key.variant, sizeof(key.variant), "%s", ibc_csv_str(t, r, "variant"));
		snprintf(key.impl, sizeof(key.impl), "%s", ibc_csv_str(t, r, "impl"));
		snprintf(key.fanin, sizeof(key.fanin), "%s", ibc_csv_str(t, r, "fanin"));
		snprintf(key.bytes, sizeof(key.bytes), "%s", ibc_csv_str(t, r, "bytes"));
		n = strtol(ibc_csv_str(t, r, "ranks"), NULL, 10);
		for (k = 0; k < p->nk && !piv_key_eq(&p->keys[k], &key); k++)
			;
		if (k == p->nk) {
			size_t at = p->nk, q;

			if (p->nk == PIV_MAX)
				continue;
			for (q = 0; q < p->nk; q++)
				if (strcmp(p->keys[q].variant, key.variant) == 0)
					at = q + 1;
			for (q = p->nk; q > at; q--) {
				p->keys[q] = p->keys[q - 1];
				memcpy(p->p50[q], p->p50[q - 1], sizeof(p->p50[q]));
				memcpy(p->mark[q], p->mark[q - 1], sizeof(p->mark[q]));
			}
			p->keys[at] = key;
			for (q = 0; q < PIV_MAX; q++) {
				p->p50[at][q] = -1;
				p->mark[at][q] = 0;
			}
			p->nk++;
			k = at;
		}
		for (j = 0; j < p->nn && p->ns[j] != n; j++)
			;
		if (j == p->nn) {
			if (p->nn == PIV_MAX)
				continue;
			while (j > 0 && p->ns[j - 1] > n) {
				size_t q;

				p->ns[j] = p->ns[j - 1];
				for (q = 0; q < PIV_MAX; q++) {
					p->p50[q][j] = p->p50[q][j - 1];
					p->mark[q][j] = p->mark[q][j - 1];
				}
				j--;
			}
			p->ns[j] = n;
			for (k = 0; k < PIV_MAX; k++) {
				p->p50[k][j] = -1;
				p->mark[k][j] = 0;
			}
			p->nn++;
			for (k = 0; k < p->nk && !piv_key_eq(&p->keys[k], &key); k++)
				;
		}
		p->p50[k][j] = strtod(ibc_csv_str(t, r, "p50_us"), NULL);
		p->mark[k][j] = (unsigned char)row_marks(t, r);
		if (ref_variant != NULL && strcmp(key.variant, ref_variant) == 0)
			p->have_ref = 1;
	}
}

static struct ibc_tab *pivot_tab(const struct pivot *p, const char *title)
{
	struct ibc_tab *tab = ibc_tab_new(title);
	char nbuf[24];
	size_t j;

	if (tab == NULL)
		return NULL;
	ibc_tab_col(tab, "variant", -10);
	ibc_tab_col(tab, "impl", -8);
	ibc_tab_col(tab, "fanin", 5);
	ibc_tab_col(tab, "bytes", 8);
	for (j = 0; j < p->nn; j++) {
		snprintf(nbuf, sizeof(nbuf), "%ld", p->ns[j]);
		ibc_tab_col(tab, nbuf, 8);
	}
	return tab;
}

static void pivot_row_head(struct ibc_tab *tab, const struct piv_key *k)
{
	ibc_tab_row(tab);
	ibc_tab_cell(tab, "%s", k->variant);
	ibc_tab_cell(tab, "%s", k->impl);
	ibc_tab_cell(tab, "%s", k->fanin[0] ? k->fanin : "-");
	ibc_tab_cell(tab, "%s", k->bytes);
}

static size_t pivot_tables(const struct ibc_csv_table *t, const char *run_id, const char *suite,
			   const char *ref_variant, struct ibc_tab **out)
{
	static struct pivot p;
	char title[256];
	size_t k, j, ref, n = 0;
	unsigned any, mk;
	int kind;

	pivot_fill(&p, t, run_id, suite, ref_variant);
	if (p.nk == 0)
		return 0;
	for (kind = 0; kind < 2 && (kind == 0 || p.have_ref); kind++) {
		/* 0: the medians; 1: the factor against ref_variant at the same
		 * N and size (its p50 / the row's) */
		if (kind == 0)
			snprintf(title, sizeof(title),
				 "%s: median (p50_us, slowest rank per iteration) by variant x ranks", suite);
		else
			snprintf(title, sizeof(title),
				 "%s: factor vs %s (%s p50 / variant p50; > 1 = faster than %s)", suite,
				 ref_variant, ref_variant, ref_variant);
		out[n] = pivot_tab(&p, title);
		if (out[n] == NULL)
			return n;
		any = 0;
		for (k = 0; k < p.nk; k++) {
			pivot_row_head(out[n], &p.keys[k]);
			for (j = 0; j < p.nn; j++) {
				double v = p.p50[k][j];

				mk = p.mark[k][j];
				if (kind == 1 && v > 0) {
					for (ref = 0; ref < p.nk; ref++)
						if (strcmp(p.keys[ref].variant, ref_variant) == 0 &&
						    strcmp(p.keys[ref].bytes, p.keys[k].bytes) == 0 &&
						    p.p50[ref][j] > 0)
							break;
					v = ref == p.nk ? -1 : p.p50[ref][j] / v;
					if (ref < p.nk)
						mk |= p.mark[ref][j];
				} else if (kind == 1) {
					v = -1;
				}
				if (v < 0) {
					ibc_tab_cell(out[n], "-");
				} else {
					ibc_tab_cell(out[n], "%.2f%s", v, marks_str(mk));
					any |= mk;
				}
			}
		}
		marks_note(out[n], any);
		n++;
	}
	return n;
}

/* the rows one by one (a suite measured at one N) */
static struct ibc_tab *long_table(const struct ibc_csv_table *t, const char *run_id, const char *suite)
{
	static const struct {
		const char *col;
		int width;
	} cols[] = { { "suite", -10 },  { "variant", -18 }, { "impl", -8 },	{ "ranks", 6 },
		     { "bytes", 9 },	{ "fanin", 6 },	    { "iters", 8 },	{ "p50_us", 12 },
		     { "mean_us", 12 }, { "p99_us", 12 },   { "wait", -10 } };
	struct ibc_tab *tab = ibc_tab_new("");
	size_t r, c;
	unsigned any = 0;

	if (tab == NULL)
		return NULL;
	for (c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
		ibc_tab_col(tab, cols[c].col, cols[c].width);
	for (r = 0; r + 1 < t->nrows; r++) {
		unsigned mk;

		if (!row_in(t, r, run_id, suite) || strcmp(ibc_csv_str(t, r, "impl"), "model") == 0)
			continue;
		mk = row_marks(t, r);
		ibc_tab_row(tab);
		for (c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			const char *v = ibc_csv_cell(t, r, cols[c].col);
			int timed = strstr(cols[c].col, "_us") != NULL;

			if (v == NULL || v[0] == '\0') {
				ibc_tab_cell(tab, "-");
			} else {
				ibc_tab_cell(tab, "%s%s", v, timed ? marks_str(mk) : "");
				any |= timed ? mk : 0;
			}
		}
	}
	marks_note(tab, any);
	if (tab->nrows == 0) {
		ibc_tab_free(tab);
		return NULL;
	}
	return tab;
}

/* Rows of a model (impl=model: a suite's predictions, with the measured
 * figure and the error in extra) as a table of predicted against measured. */
static struct ibc_tab *model_table(const struct ibc_csv_table *t, const char *run_id, const char *suite)
{
	static const struct {
		const char *head, *key; /* key NULL: the column of that name */
		int width;
	} cols[] = { { "variant", "=variant", -10 },
		     { "ranks", "=ranks", 5 },
		     { "bytes", "=bytes", 8 },
		     { "measured", "measured_b2b_us", 10 },
		     { "as", "measured_as", -10 },
		     { "predicted", "=p50_us", 10 },
		     { "err%", "err_pct", 7 },
		     { "eq", "eq", -10 },
		     { "literal", "literal_us", 10 },
		     { "err%", "literal_err_pct", 7 } };
	struct ibc_tab *tab;
	char title[256], buf[64];
	size_t r, c;
	unsigned any = 0;

	snprintf(title, sizeof(title),
		 "%s: model against measurement (back to back: the loop's median b2b_p50_us, else "
		 "its mean paper_us, as 'as' says; err = predicted / measured - 1)",
		 suite);
	tab = ibc_tab_new(title);
	if (tab == NULL)
		return NULL;
	for (c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
		ibc_tab_col(tab, cols[c].head, cols[c].width);
	for (r = 0; r + 1 < t->nrows; r++) {
		const char *x = ibc_csv_cell(t, r, "extra"), *v;

		unsigned mk;

		if (!row_in(t, r, run_id, suite) || strcmp(ibc_csv_str(t, r, "impl"), "model") != 0)
			continue;
		mk = row_marks(t, r) & MARK_OVERSUB; /* a model row keeps no samples */
		ibc_tab_row(tab);
		for (c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			int timed = strcmp(cols[c].head, "measured") == 0 || strcmp(cols[c].head, "predicted") == 0;

			if (cols[c].key[0] == '=')
				v = ibc_csv_cell(t, r, cols[c].key + 1);
			else
				v = ibc_csv_extra_get(x, cols[c].key, buf, sizeof(buf));
			if (v == NULL || v[0] == '\0') {
				ibc_tab_cell(tab, "-");
			} else {
				ibc_tab_cell(tab, "%s%s", v, timed ? marks_str(mk) : "");
				any |= timed ? mk : 0;
			}
		}
	}
	marks_note(tab, any);
	if (tab->nrows == 0) {
		ibc_tab_free(tab);
		return NULL;
	}
	return tab;
}

size_t ibc_harness_summary_distinct(const struct ibc_csv_table *t, const char *where,
				    const char *equal, const char *column, const char **out,
				    size_t cap)
{
	size_t r, i, n = 0;

	for (r = 0; r + 1 < t->nrows; r++) {
		const char *v = ibc_csv_cell(t, r, column);

		if (v == NULL || (where != NULL && strcmp(ibc_csv_str(t, r, where), equal) != 0))
			continue;
		for (i = 0; i < n && strcmp(out[i], v) != 0; i++)
			;
		if (i == n && n < cap)
			out[n++] = v;
	}
	return n;
}

size_t ibc_harness_summary_tables(const struct ibc_csv_table *t, const char *run_id,
				  const char *suite, struct ibc_tab **out)
{
	const struct ibc_suite *def = ibc_suite_find(suite);
	const char *first = NULL;
	size_t r, n = 0;
	int swept = 0;

	for (r = 0; r + 1 < t->nrows; r++) {
		if (!row_in(t, r, run_id, suite) || strcmp(ibc_csv_str(t, r, "impl"), "model") == 0)
			continue;
		if (first == NULL)
			first = ibc_csv_cell(t, r, "ranks");
		else if (strcmp(first, ibc_csv_cell(t, r, "ranks")) != 0)
			swept = 1;
	}
	if (swept) {
		n = pivot_tables(t, run_id, suite, def != NULL ? def->factor_ref : NULL, out);
	} else if (first != NULL) {
		out[n] = long_table(t, run_id, suite);
		n += out[n] != NULL;
	}
	out[n] = model_table(t, run_id, suite);
	n += out[n] != NULL;
	return n;
}

void ibc_harness_summary_print(const char *dir, const char *run_id)
{
	struct ibc_csv_table *t;
	struct ibc_tab *tabs[IBC_SUMMARY_MAX_TABS];
	const char *suites[PIV_MAX];
	char path[4200];
	size_t i, k, n, ns, shown = 0, r;

	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (access(path, R_OK) != 0 || ibc_csv_read(path, &t) != IBC_OK) {
		printf("no results in %s\n", dir);
		return;
	}
	for (r = 0; r + 1 < t->nrows; r++)
		shown += strcmp(ibc_csv_str(t, r, "run_id"), run_id) == 0;
	ns = ibc_harness_summary_distinct(t, "run_id", run_id, "suite", suites, PIV_MAX);
	for (i = 0; i < ns; i++) {
		n = ibc_harness_summary_tables(t, run_id, suites[i], tabs);
		for (k = 0; k < n; k++) {
			ibc_tab_text(stdout, tabs[k]);
			ibc_tab_free(tabs[k]);
		}
	}
	printf("%zu rows; results in %s/results.csv, provenance in %s/meta.csv\n", shown, dir, dir);
	ibc_csv_table_free(t);
}
