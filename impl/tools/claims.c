/* The reproduction scorecard: see claims.h.  This file judges a claim
 * against a run (evaluation) and reads the claims files; the rule language
 * is in claims_rules.c and a run's rows in claims_rows.c (claims_priv.h). */
#define _GNU_SOURCE
#include "tools/claims.h"
#include "tools/claims_priv.h"
#include "tools/summary.h"

#include "core/csv.h"
#include "core/log.h"
#include "core/status.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_FILES 32
#define MIN_TREND 3 /* points along the axis for a trend */

/* ------------------------------------------------------- evaluation ---- */

enum { EX_OVERSUB = 1, EX_FEW = 2, EX_NOMETRIC = 4 };

struct pair {
	size_t a, b;  /* rows: subject, reference */
	int s, f;     /* their sides */
	double stat, x;
	unsigned ex;  /* why not evidence (0: evidence) */
	int series;   /* trend: the pair's series */
};

struct eval {
	const struct claim *c;
	const struct run *ru;
	size_t *rows[2 * MAX_SIDES], nrows[2 * MAX_SIDES];
	struct pair *p;
	size_t np, cap;
};

static const struct side *side_of(const struct claim *c, int k)
{
	return k < (int)c->nsubj ? &c->subj[k] : &c->ref[k - (int)c->nsubj];
}

static int same_cell(const struct run *ru, size_t a, size_t b, const char *col)
{
	return strcmp(ibc_csv_str(ru->t, a, col), ibc_csv_cell(ru->t, b, col)) == 0;
}

/* 1 when a side of the pair names col in its own conditions (the sides then
 * differ in it by design, as rgm[fanin=7] against rgm[fanin=1]) */
static int side_names(const struct side *x, const struct side *y, const char *col)
{
	size_t i;

	for (i = 0; i < x->nc; i++)
		if (strcmp(x->c[i].key, col) == 0)
			return 1;
	for (i = 0; i < y->nc; i++)
		if (strcmp(y->c[i].key, col) == 0)
			return 1;
	return 0;
}

/* a and b measured at one point: run, transport, nodes, ppn, N, size, and
 * the fan-in when both have one; a column a side's own conditions name is
 * not compared */
static int same_point(const struct run *ru, size_t a, size_t b, const struct side *x, const struct side *y)
{
	static const char *const cols[] = { "run_id", "xport", "nodes", "ppn", "ranks", "bytes" };
	const char *fa = ibc_csv_cell(ru->t, a, "fanin"), *fb = ibc_csv_cell(ru->t, b, "fanin");
	size_t i;

	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (!side_names(x, y, cols[i]) && !same_cell(ru, a, b, cols[i]))
			return 0;
	return fa[0] == '\0' || fb[0] == '\0' || strcmp(fa, fb) == 0 || side_names(x, y, "fanin");
}

/* x and y of one series of a trend: every point column but along agrees
 * (and N, which moves with nodes and ppn; and ppn when along is N) */
static int same_series(const struct run *ru, const struct pair *x, const struct pair *y, const char *along)
{
	static const char *const cols[] = { "run_id", "xport", "nodes", "ppn", "ranks", "bytes", "fanin", "impl" };
	int job = strcmp(along, "ranks") == 0 || strcmp(along, "ppn") == 0 || strcmp(along, "nodes") == 0;
	size_t i;

	if (x->s != y->s || x->f != y->f)
		return 0;
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		if (strcmp(cols[i], along) == 0 || (job && strcmp(cols[i], "ranks") == 0) ||
		    (strcmp(along, "ranks") == 0 && strcmp(cols[i], "ppn") == 0))
			continue;
		if (!same_cell(ru, x->a, y->a, cols[i]) || !same_cell(ru, x->b, y->b, cols[i]))
			return 0;
	}
	return 1;
}

static unsigned row_excl(const struct run *ru, size_t r)
{
	unsigned ex = 0;

	if (strcmp(ibc_csv_str(ru->t, r, "oversub"), "1") == 0)
		ex |= EX_OVERSUB;
	if (strtod(ibc_csv_str(ru->t, r, "iters"), NULL) < IBC_SUMMARY_MIN_SAMPLES)
		ex |= EX_FEW;
	return ex;
}

static const char *unit(const struct claim *c)
{
	return c->rate ? " MB/s" : " us";
}

static void stat_text(const struct claim *c, double v, char *buf, size_t cap)
{
	if (c->stat == STAT_FACTOR)
		snprintf(buf, cap, "%.2fx", v);
	else
		snprintf(buf, cap, "%+.3g%s", v, unit(c));
}

/* "N = 4, 4096 B" (and the fan-ins) of a pair */
static void point_text(const struct run *ru, const struct pair *p, char *buf, size_t cap)
{
	const char *fa = ibc_csv_cell(ru->t, p->a, "fanin"), *fb = ibc_csv_cell(ru->t, p->b, "fanin");

	snprintf(buf, cap, "N = %s", ibc_csv_cell(ru->t, p->a, "ranks"));
	if (strcmp(ibc_csv_str(ru->t, p->a, "bytes"), "0") != 0)
		ibc_claims_text_append(buf, cap, ", %s B", ibc_csv_cell(ru->t, p->a, "bytes"));
	if (strcmp(ibc_csv_str(ru->t, p->a, "ppn"), ibc_csv_cell(ru->t, p->a, "ranks")) != 0)
		ibc_claims_text_append(buf, cap, ", %s per node", ibc_csv_cell(ru->t, p->a, "ppn"));
	if (fa[0] != '\0' || fb[0] != '\0')
		ibc_claims_text_append(buf, cap, ", fan-in %s", fa[0] != '\0' ? fa : fb);
}

static void pair_name(const struct eval *e, const struct pair *p, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%s", ibc_csv_cell(e->ru->t, p->a, "variant"), ibc_csv_cell(e->ru->t, p->b, "variant"));
	if (ibc_csv_cell(e->ru->t, p->a, "fanin")[0] != '\0' && side_of(e->c, p->s)->nc == 0)
		ibc_claims_text_append(buf, cap, "(l=%s)", ibc_csv_cell(e->ru->t, p->a, "fanin"));
}

/* what was not counted, "14 oversubscribed (N = 3..16, 2 PUs), 2 with
 * fewer than 30 kept samples"; "" when nothing */
static void excluded_text(const struct eval *e, char *buf, size_t cap)
{
	size_t i, n[3] = { 0, 0, 0 }, k = 0;
	double *v = malloc((e->np + 1) * sizeof(*v));
	char set[128], pus[64];

	buf[0] = '\0';
	for (i = 0; i < e->np; i++) {
		n[0] += (e->p[i].ex & EX_OVERSUB) != 0;
		n[1] += (e->p[i].ex & (EX_OVERSUB | EX_FEW)) == EX_FEW;
		n[2] += e->p[i].ex == EX_NOMETRIC;
		if ((e->p[i].ex & EX_OVERSUB) && v != NULL)
			v[k++] = strtod(ibc_csv_str(e->ru->t, e->p[i].a, "ranks"), NULL);
	}
	if (n[0]) {
		ibc_claims_num_set(v, k, set, sizeof(set));
		ibc_claims_meta_values(e->ru, "pus", pus, sizeof(pus));
		ibc_claims_text_append(buf, cap, "%zu comparison%s with an oversubscribed row (N = %s%s%s%s)", n[0],
		    n[0] == 1 ? "" : "s", set, pus[0] ? " on " : "", pus, pus[0] ? " PUs" : "");
	}
	if (n[1])
		ibc_claims_text_append(buf, cap, "%s%zu with a row of fewer than %d kept samples", buf[0] ? ", " : "", n[1],
		    IBC_SUMMARY_MIN_SAMPLES);
	if (n[2])
		ibc_claims_text_append(buf, cap, "%s%zu without %s", buf[0] ? ", " : "", n[2], e->c->metric);
	free(v);
}

static int pair_add(struct eval *e, const struct pair *p)
{
	if (e->np == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 64;
		struct pair *q = realloc(e->p, cap * sizeof(*q));

		if (q == NULL)
			return IBC_ERR_NOMEM;
		e->p = q;
		e->cap = cap;
	}
	e->p[e->np++] = *p;
	return IBC_OK;
}

static int has_hw_multicast(const struct eval *e, char *why, size_t cap)
{
	char dev[256], xp[128];
	size_t k, i;
	int verbs = 0, soft = 0;

	ibc_claims_meta_values(e->ru, "device", dev, sizeof(dev));
	xp[0] = '\0';
	for (k = 0; k < e->c->nsubj + e->c->nref; k++)
		for (i = 0; i < e->nrows[k]; i++) {
			const char *x = ibc_csv_cell(e->ru->t, e->rows[k][i], "xport");

			verbs |= strcmp(x, "verbs") == 0;
			if (strstr(xp, x) == NULL)
				ibc_claims_text_append(xp, sizeof(xp), "%s%s", xp[0] ? ", " : "", x);
		}
	soft = dev[0] == '\0' || strstr(dev, "rxe") != NULL || strstr(dev, "siw") != NULL ||
	       strstr(dev, "shm") != NULL || strstr(dev, "none") != NULL;
	snprintf(why, cap, "needs hardware multicast (this run: transport %s, device %s)", xp[0] ? xp : "none",
		 dev[0] ? dev : "not recorded");
	return verbs && !soft;
}

/* the sides' rows; 0 and *why when a side has none */
static int eval_rows(struct eval *e, char *why, size_t cap)
{
	const struct claim *c = e->c;
	const struct run *ru = e->ru;
	size_t k, r, i, n, any = 0;
	char t1[128], t2[256];

	for (r = 0; r + 1 < ru->t->nrows; r++)
		any += !ibc_claims_row_is_model(ru, r) && strcmp(ibc_csv_str(ru->t, r, "suite"), c->suite) == 0;
	if (any == 0) {
		snprintf(why, cap, "no %s rows in this run (ibchar run %s)", c->suite, c->suite);
		return 0;
	}
	for (k = 0; k < c->nsubj + c->nref; k++) {
		const struct side *s = side_of(c, (int)k);

		e->rows[k] = malloc(ru->t->nrows * sizeof(size_t));
		if (e->rows[k] == NULL) {
			snprintf(why, cap, "out of memory");
			return 0;
		}
		for (r = 0, n = 0; r + 1 < ru->t->nrows; r++)
			if (!ibc_claims_row_is_model(ru, r) && strcmp(ibc_csv_str(ru->t, r, "suite"), c->suite) == 0 &&
			    strcmp(ibc_csv_str(ru->t, r, "variant"), s->variant) == 0)
				e->rows[k][n++] = r;
		e->nrows[k] = n;
		if (n == 0) {
			snprintf(why, cap, "no rows of %s %s in this run", c->suite, s->variant);
			return 0;
		}
		/* the side's own conditions, then the claim's, one at a time */
		for (i = 0; i < s->nc + c->nsel; i++) {
			const struct cond *cd = i < s->nc ? &s->c[i] : &c->sel[i - s->nc];
			size_t j, m = 0;

			ibc_claims_col_set(ru, e->rows[k], e->nrows[k], cd->key, t2, sizeof(t2));
			for (j = 0; j < e->nrows[k]; j++)
				if (ibc_claims_cond_holds(ru, e->rows[k][j], cd))
					e->rows[k][m++] = e->rows[k][j];
			e->nrows[k] = m;
			if (m == 0) {
				ibc_claims_cond_text(cd, t1, sizeof(t1));
				snprintf(why, cap, "no %s rows with %s (this run: %s %s)", s->variant, t1, cd->key, t2);
				return 0;
			}
		}
	}
	return 1;
}

/* pairs every subject row with every reference row at its point */
static int eval_pairs(struct eval *e)
{
	const struct claim *c = e->c;
	size_t s, f, i, j;
	int rc = IBC_OK;

	for (s = 0; s < c->nsubj; s++)
		for (f = 0; f < c->nref; f++)
			for (i = 0; i < e->nrows[s]; i++)
				for (j = 0; j < e->nrows[c->nsubj + f] && rc == IBC_OK; j++) {
					struct pair p = { .a = e->rows[s][i], .b = e->rows[c->nsubj + f][j],
							  .s = (int)s, .f = (int)(c->nsubj + f), .series = -1 };
					double va = 0, vb = 0;
					int ma, mb;

					if (p.a == p.b || !same_point(e->ru, p.a, p.b, &c->subj[s], &c->ref[f]))
						continue;
					ma = ibc_claims_row_metric(e->ru, p.a, c, &va);
					mb = ibc_claims_row_metric(e->ru, p.b, c, &vb);
					if (ma < 0 || mb < 0)
						return IBC_ERR_INVAL;
					p.ex = row_excl(e->ru, p.a) | row_excl(e->ru, p.b);
					if (!ma || !mb || (c->stat == STAT_FACTOR && (va <= 0 || vb <= 0)))
						p.ex |= EX_NOMETRIC;
					else if (c->stat == STAT_FACTOR)
						p.stat = c->rate ? va / vb : vb / va;
					else
						p.stat = c->rate ? va - vb : vb - va;
					if (c->along[0] != '\0')
						p.x = strtod(ibc_csv_str(e->ru->t, p.a, c->along), NULL);
					else
						p.x = strtod(ibc_csv_str(e->ru->t, p.a, "ranks"), NULL);
					rc = pair_add(e, &p);
				}
	return rc;
}

static int pair_x_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->series != y->series)
		return x->series < y->series ? -1 : 1;
	return x->x < y->x ? -1 : x->x > y->x;
}

/* numbers the trend's series among the evidence; returns how many */
static int eval_series(struct eval *e)
{
	size_t i, j;
	int ns = 0;

	for (i = 0; i < e->np; i++) {
		if (e->p[i].ex)
			continue;
		for (j = 0; j < i; j++)
			if (!e->p[j].ex && same_series(e->ru, &e->p[i], &e->p[j], e->c->along))
				break;
		e->p[i].series = j < i ? e->p[j].series : ns++;
	}
	qsort(e->p, e->np, sizeof(*e->p), pair_x_cmp);
	return ns;
}

/* this run's figure: per subject/reference, the statistic's range and where */
static void eval_figure(const struct eval *e, struct ibc_claim_result *res)
{
	size_t i, j, n = 0, k;
	double *xs = malloc((e->np + 1) * sizeof(double)), *bs = malloc((e->np + 1) * sizeof(double));
	char name[160], a[32], b[32], set[128];

	res->figure[0] = '\0';
	for (i = 0; i < e->np; i++) {
		double lo, hi;

		if (e->p[i].ex)
			continue;
		pair_name(e, &e->p[i], name, sizeof(name));
		for (j = 0; j < i; j++) {
			char other[160];

			if (e->p[j].ex)
				continue;
			pair_name(e, &e->p[j], other, sizeof(other));
			if (strcmp(other, name) == 0)
				break;
		}
		if (j < i)
			continue;
		lo = hi = e->p[i].stat;
		for (j = i + 1; j < e->np; j++) {
			char other[160];

			if (e->p[j].ex)
				continue;
			pair_name(e, &e->p[j], other, sizeof(other));
			if (strcmp(other, name) != 0)
				continue;
			lo = fmin(lo, e->p[j].stat);
			hi = fmax(hi, e->p[j].stat);
		}
		stat_text(e->c, lo, a, sizeof(a));
		stat_text(e->c, hi, b, sizeof(b));
		if (lo == hi)
			ibc_claims_text_append(res->figure, sizeof(res->figure), "%s%s %s", res->figure[0] ? ", " : "", name, a);
		else
			ibc_claims_text_append(res->figure, sizeof(res->figure), "%s%s %s to %s", res->figure[0] ? ", " : "", name, a, b);
	}
	for (i = 0, k = 0; i < e->np && xs != NULL && bs != NULL; i++) {
		if (e->p[i].ex)
			continue;
		xs[k] = strtod(ibc_csv_str(e->ru->t, e->p[i].a, "ranks"), NULL);
		bs[k++] = strtod(ibc_csv_str(e->ru->t, e->p[i].a, "bytes"), NULL);
		n++;
	}
	if (xs != NULL && bs != NULL && k > 0) {
		ibc_claims_num_set(xs, k, set, sizeof(set));
		ibc_claims_text_append(res->figure, sizeof(res->figure), " (%zu comparison%s at N = %s", n, n == 1 ? "" : "s", set);
		ibc_claims_num_set(bs, k, set, sizeof(set));
		if (strcmp(set, "0") != 0)
			ibc_claims_text_append(res->figure, sizeof(res->figure), "; %s B", set);
		ibc_claims_text_append(res->figure, sizeof(res->figure), ")");
	}
	free(xs);
	free(bs);
}

static void eval_method(const struct eval *e, struct ibc_claim_result *res, int measured)
{
	const struct claim *c = e->c;
	size_t i, n = 0, ok = 0;
	char vals[256] = "", buf[128];

	switch (c->method) {
	case METH_SAME:
		snprintf(res->method, sizeof(res->method), "as the paper's: %s", c->paper_method);
		return;
	case METH_DIFFERS:
		snprintf(res->method, sizeof(res->method), "differs. The paper: %s. Here: %s", c->paper_method,
			 c->method_note);
		return;
	case METH_UNSTATED:
		snprintf(res->method, sizeof(res->method), "the paper does not say how it measured (%s). Here: %s",
			 c->paper_method, c->method_note);
		return;
	case METH_COND:
		break;
	}
	for (i = 0; i < e->np && measured; i++) {
		const char *v;
		int good;

		if (e->p[i].ex)
			continue;
		n++;
		good = ibc_claims_cond_holds(e->ru, e->p[i].a, &c->mcond) && ibc_claims_cond_holds(e->ru, e->p[i].b, &c->mcond);
		ok += good;
		v = ibc_claims_row_get(e->ru, ibc_claims_cond_holds(e->ru, e->p[i].a, &c->mcond) ? e->p[i].b : e->p[i].a,
			    c->mcond.key, buf, sizeof(buf));
		if (!good && v != NULL && strstr(vals, v) == NULL)
			ibc_claims_text_append(vals, sizeof(vals), "%s%s", vals[0] ? ", " : "", v);
	}
	ibc_claims_cond_text(&c->mcond, buf, sizeof(buf));
	if (!measured)
		snprintf(res->method, sizeof(res->method), "the paper: %s. Here the same is rows with %s: %s",
			 c->paper_method, buf, c->method_note);
	else if (ok == n)
		snprintf(res->method, sizeof(res->method), "as the paper's (every point has %s): %s", buf,
			 c->paper_method);
	else
		snprintf(res->method, sizeof(res->method),
			 "differs at %zu of %zu comparisons (%s %s there, not %s). The paper: %s. Here: %s", n - ok, n,
			 c->mcond.key, vals[0] ? vals : "absent", c->mcond.val, c->paper_method, c->method_note);
}

/* kendall's S of one series (pairs sorted by x): rising pairs - falling */
static int series_rising(const struct eval *e, int series, char *why, size_t cap)
{
	size_t i, j, first = (size_t)-1, last = 0, npts = 0;
	long sgn = 0;
	char a[32], b[32], name[160];

	for (i = 0; i < e->np; i++) {
		if (e->p[i].ex || e->p[i].series != series)
			continue;
		if (first == (size_t)-1)
			first = i;
		last = i;
		npts++;
		for (j = i + 1; j < e->np; j++)
			if (!e->p[j].ex && e->p[j].series == series && e->p[j].x > e->p[i].x)
				sgn += e->p[j].stat > e->p[i].stat ? 1 : e->p[j].stat < e->p[i].stat ? -1 : 0;
	}
	if (npts < MIN_TREND)
		return -1;
	if (sgn > 0 && e->p[last].stat > e->p[first].stat)
		return 1;
	pair_name(e, &e->p[first], name, sizeof(name));
	stat_text(e->c, e->p[first].stat, a, sizeof(a));
	stat_text(e->c, e->p[last].stat, b, sizeof(b));
	snprintf(why, cap, "%s does not grow with %s: %s at %g, %s at %g", name, e->c->along, a, e->p[first].x, b,
		 e->p[last].x);
	return 0;
}

static void side_text(const struct side *sd, char *buf, size_t cap)
{
	size_t i;
	char t[128];

	snprintf(buf, cap, "%s", sd->variant);
	for (i = 0; i < sd->nc; i++) {
		ibc_claims_cond_text(&sd->c[i], t, sizeof(t));
		ibc_claims_text_append(buf, cap, "%s%s", i ? ", " : "(", t);
	}
	if (sd->nc)
		ibc_claims_text_append(buf, cap, ")");
}

/* every subject is compared with every reference by a comparison that
 * counts; else 0 and *why names the first pair of sides without one */
static int eval_each_pair(const struct eval *e, char *why, size_t cap)
{
	const struct claim *c = e->c;
	size_t s, f, i, n;
	char a[160], b[160];

	for (s = 0; s < c->nsubj; s++)
		for (f = c->nsubj; f < c->nsubj + c->nref; f++) {
			for (i = 0, n = 0; i < e->np; i++)
				n += e->p[i].s == (int)s && e->p[i].f == (int)f && e->p[i].ex == 0;
			if (n > 0)
				continue;
			side_text(&c->subj[s], a, sizeof(a));
			side_text(side_of(c, (int)f), b, sizeof(b));
			snprintf(why, cap, "no comparison of %s with %s counts (the claim is about both)", a, b);
			return 0;
		}
	return 1;
}

/* a trend: every pair of sides has a series of MIN_TREND points or more,
 * and each such series rises; else 0 with the verdict and reason set */
static int eval_trends(const struct eval *e, struct ibc_claim_result *res)
{
	const struct claim *c = e->c;
	size_t s, f, i, k;
	int ser, ns = 0;
	char why[512], a[160], b[160], set[128];

	for (i = 0; i < e->np; i++)
		ns = e->p[i].series + 1 > ns ? e->p[i].series + 1 : ns;
	for (s = 0; s < c->nsubj; s++)
		for (f = c->nsubj; f < c->nsubj + c->nref; f++) {
			int longest = 0;
			size_t *rows = malloc((e->np + 1) * sizeof(*rows));

			for (ser = 0; ser < ns; ser++) {
				int cnt = 0;

				for (i = 0; i < e->np; i++)
					cnt += e->p[i].series == ser && e->p[i].s == (int)s && e->p[i].f == (int)f;
				longest = cnt > longest ? cnt : longest;
			}
			if (longest >= MIN_TREND) {
				free(rows);
				continue;
			}
			for (i = 0, k = 0; rows != NULL && i < e->np; i++)
				if (!e->p[i].ex && e->p[i].s == (int)s && e->p[i].f == (int)f)
					rows[k++] = e->p[i].a;
			set[0] = '\0';
			if (rows != NULL)
				ibc_claims_col_set(e->ru, rows, k, c->along, set, sizeof(set));
			free(rows);
			side_text(&c->subj[s], a, sizeof(a));
			side_text(side_of(c, (int)f), b, sizeof(b));
			res->verdict = IBC_CLAIM_NOT_MEASURABLE;
			snprintf(res->reason, sizeof(res->reason),
				 "a trend along %s needs %d points that count; %s against %s has %d (%s %s)", c->along,
				 MIN_TREND, a, b, longest, c->along, k ? set : "none");
			return 0;
		}
	for (ser = 0; ser < ns; ser++)
		if (series_rising(e, ser, why, sizeof(why)) == 0) {
			res->verdict = IBC_CLAIM_NOT_REPRODUCED;
			snprintf(res->reason, sizeof(res->reason), "%s", why);
			return 0;
		}
	return 1;
}

static int claim_eval(const struct claim *c, const struct run *ru, struct ibc_claim_result *res)
{
	struct eval e = { .c = c, .ru = ru };
	char why[512] = "", excl[384], t[64], pt[128];
	size_t i, nev = 0, nbad = 0, worst = 0, k;
	int rc = IBC_OK;

	memset(res, 0, sizeof(*res));
	res->id = c->id;
	res->paper = c->paper;
	res->section = c->section;
	res->claim = c->text;
	res->paper_figure = c->paper_figure;
	res->testbed = c->testbed;
	res->verdict = IBC_CLAIM_NOT_MEASURABLE;
	if (!eval_rows(&e, why, sizeof(why))) {
		snprintf(res->reason, sizeof(res->reason), "%s", why);
		goto free_eval;
	}
	if (c->hw_mcast && !has_hw_multicast(&e, why, sizeof(why))) {
		snprintf(res->reason, sizeof(res->reason), "%s", why);
		goto free_eval;
	}
	rc = eval_pairs(&e);
	if (rc != IBC_OK)
		goto free_eval;
	if (e.np == 0) {
		snprintf(res->reason, sizeof(res->reason),
			 "the subject and the reference share no point (same run, transport, N and size)");
		goto free_eval;
	}
	excluded_text(&e, excl, sizeof(excl));
	for (i = 0; i < e.np; i++)
		nev += e.p[i].ex == 0;
	if (nev == 0) {
		snprintf(res->reason, sizeof(res->reason), "no comparison counts: %s", excl);
		goto free_eval;
	}
	if (c->expect == EXP_BETTER_GROWING)
		eval_series(&e);
	eval_figure(&e, res);
	/* the decision: a comparison that counts and fails decides */
	for (i = 0; i < e.np; i++) {
		double v = e.p[i].stat;
		int good;

		if (e.p[i].ex)
			continue;
		if (c->expect == EXP_SIMILAR)
			good = c->stat == STAT_FACTOR ? v >= 1 / c->thr && v <= c->thr : fabs(v) <= c->thr;
		else
			good = v > c->thr;
		if (!good) {
			double d = c->expect == EXP_SIMILAR ? fabs(log(v > 0 ? v : 1e-300)) : -v;
			double dw = c->expect == EXP_SIMILAR ? fabs(log(e.p[worst].stat > 0 ? e.p[worst].stat : 1e-300))
							     : -e.p[worst].stat;

			if (nbad++ == 0 || d > dw)
				worst = i;
		}
	}
	if (nbad) {
		char name[160];

		res->verdict = IBC_CLAIM_NOT_REPRODUCED;
		pair_name(&e, &e.p[worst], name, sizeof(name));
		stat_text(c, e.p[worst].stat, t, sizeof(t));
		point_text(ru, &e.p[worst], pt, sizeof(pt));
		snprintf(res->reason, sizeof(res->reason), "%s at %zu of %zu comparisons; furthest: %s %s at %s",
			 c->expect == EXP_SIMILAR ? "not similar" : "not better", nbad, nev, name, t, pt);
	} else if (!eval_each_pair(&e, why, sizeof(why))) {
		snprintf(res->reason, sizeof(res->reason), "%s", why);
	} else if (c->expect != EXP_BETTER_GROWING || eval_trends(&e, res)) {
		res->verdict = IBC_CLAIM_REPRODUCED; /* eval_trends set the verdict when not */
	}
	if (excl[0] != '\0')
		ibc_claims_text_append(res->reason, sizeof(res->reason), "%snot counted: %s", res->reason[0] ? "; " : "", excl);
free_eval:
	if (rc == IBC_OK)
		eval_method(&e, res, res->verdict != IBC_CLAIM_NOT_MEASURABLE);
	for (k = 0; k < 2 * MAX_SIDES; k++)
		free(e.rows[k]);
	free(e.p);
	return rc;
}

/* ------------------------------------------------------------ files ---- */

static const char *const claim_cols[] = {
	"id",	     "paper",	  "section",	  "claim",	  "suite",	  "subject", "reference",
	"select",    "metric",	  "stat",	  "expect",	  "threshold",	  "along",   "needs",
	"paper_figure", "testbed", "paper_method", "method",	  "method_note",
};

struct priv {
	struct ibc_csv_table *t[MAX_FILES];
	char *name[MAX_FILES];
	size_t n;
};

static int csv_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && strcmp(d->d_name + n - 4, ".csv") == 0 && d->d_name[0] != '.';
}

static int load_file(struct priv *pv, const char *path)
{
	size_t i;

	if (pv->n == MAX_FILES) {
		ibc_error("claims: more than %d claims files", MAX_FILES);
		return IBC_ERR_INVAL;
	}
	if (ibc_csv_read(path, &pv->t[pv->n]) != IBC_OK) {
		ibc_error("claims: %s does not parse", path);
		return IBC_ERR_INVAL;
	}
	pv->name[pv->n] = strdup(path);
	if (pv->name[pv->n] == NULL) {
		ibc_csv_table_free(pv->t[pv->n]);
		return IBC_ERR_NOMEM;
	}
	pv->n++;
	for (i = 0; i < sizeof(claim_cols) / sizeof(claim_cols[0]); i++) {
		if (ibc_csv_column(pv->t[pv->n - 1], claim_cols[i]) < 0) {
			ibc_error("claims: %s has no column %s", path, claim_cols[i]);
			return IBC_ERR_INVAL;
		}
	}
	return IBC_OK;
}

static int load_claims(struct priv *pv, const char *path)
{
	struct dirent **ents;
	struct stat st;
	char p[PATH_MAX];
	int k, i, rc = IBC_OK;

	if (stat(path, &st) != 0) {
		ibc_error("claims: %s: %s", path, strerror(errno));
		return IBC_ERR_INVAL;
	}
	if (!S_ISDIR(st.st_mode))
		return load_file(pv, path);
	k = scandir(path, &ents, csv_name, alphasort);
	if (k < 0) {
		ibc_error("claims: %s: %s", path, strerror(errno));
		return IBC_ERR_INVAL;
	}
	for (i = 0; i < k; i++) {
		snprintf(p, sizeof(p), "%s/%s", path, ents[i]->d_name);
		if (rc == IBC_OK)
			rc = load_file(pv, p);
		free(ents[i]);
	}
	free(ents);
	if (rc == IBC_OK && k == 0) {
		ibc_error("claims: %s holds no *.csv", path);
		rc = IBC_ERR_INVAL;
	}
	return rc;
}

static void priv_free(struct priv *pv)
{
	size_t i;

	for (i = 0; pv != NULL && i < pv->n; i++) {
		ibc_csv_table_free(pv->t[i]);
		free(pv->name[i]);
	}
	free(pv);
}

void ibc_claims_card_free(struct ibc_claims_card *c)
{
	if (c == NULL)
		return;
	priv_free(c->priv);
	free(c->r);
	free(c);
}

const char *ibc_claim_verdict_name(enum ibc_claim_verdict v)
{
	switch (v) {
	case IBC_CLAIM_REPRODUCED: return "reproduced";
	case IBC_CLAIM_NOT_REPRODUCED: return "not reproduced";
	case IBC_CLAIM_NOT_MEASURABLE: return "not measurable here";
	}
	return "?";
}

int ibc_claims_locate(const char *path, const char *bindir, char *buf)
{
	const char *p = path != NULL ? path : getenv("IBC_CLAIMS");
	char guess[PATH_MAX];

	if (p == NULL || p[0] == '\0') {
		snprintf(guess, sizeof(guess), "%s/../../results/claims", bindir != NULL ? bindir : ".");
		p = guess;
	}
	if (realpath(p, buf) == NULL) {
		ibc_error("claims: no claims at %s (--claims FILE|DIR or IBC_CLAIMS)", p);
		return IBC_ERR_NOTFOUND;
	}
	return IBC_OK;
}

int ibc_claims_eval(const char *dir, const char *claims, struct ibc_claims_card **out)
{
	struct ibc_claims_card *card = calloc(1, sizeof(*card));
	struct priv *pv = calloc(1, sizeof(*pv));
	struct claim *cl = NULL;
	struct run ru;
	size_t f, r, n = 0, i, j;
	int rc;

	*out = NULL;
	memset(&ru, 0, sizeof(ru));
	if (card == NULL || pv == NULL) {
		rc = IBC_ERR_NOMEM;
		goto free_card;
	}
	card->priv = pv;
	snprintf(card->source, sizeof(card->source), "%s", claims);
	rc = load_claims(pv, claims);
	for (f = 0; rc == IBC_OK && f < pv->n; f++)
		n += pv->t[f]->nrows - 1;
	if (rc == IBC_OK) {
		cl = calloc(n + 1, sizeof(*cl));
		card->r = calloc(n + 1, sizeof(*card->r));
		if (cl == NULL || card->r == NULL)
			rc = IBC_ERR_NOMEM;
	}
	for (f = 0, i = 0; rc == IBC_OK && f < pv->n; f++)
		for (r = 0; rc == IBC_OK && r + 1 < pv->t[f]->nrows; r++, i++)
			rc = ibc_claims_rule_parse(pv->t[f], r, pv->name[f], &cl[i]);
	for (i = 0; rc == IBC_OK && i < n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(cl[i].id, cl[j].id) == 0) {
				rc = ibc_claims_rule_bad(&cl[i], "the id is taken by an earlier claim:", cl[j].id);
				break;
			}
	if (rc == IBC_OK)
		rc = ibc_claims_run_open(&ru, dir);
	for (i = 0; rc == IBC_OK && i < n; i++) {
		rc = claim_eval(&cl[i], &ru, &card->r[i]);
		card->count[card->r[i].verdict] += rc == IBC_OK;
	}
	card->n = n;
	ibc_claims_run_close(&ru);
	free(cl);
	if (rc != IBC_OK)
		goto free_card;
	*out = card;
	return IBC_OK;
free_card:
	if (card != NULL)
		card->priv = NULL;
	ibc_claims_card_free(card);
	priv_free(pv);
	return rc == IBC_ERR_NOMEM ? rc : IBC_ERR_INVAL;
}

int ibc_harness_claims(const struct ibc_claims_opts *o)
{
	struct ibc_claims_card *card;
	char path[PATH_MAX];
	size_t i;
	int rc = ibc_claims_locate(o->claims, o->bindir, path);

	if (rc != IBC_OK)
		return IBC_ERR_INVAL;
	rc = ibc_claims_eval(o->dir, path, &card);
	if (rc != IBC_OK)
		return rc;
	printf("1..%zu\n", card->n);
	for (i = 0; i < card->n; i++) {
		const struct ibc_claim_result *r = &card->r[i];

		if (r->verdict == IBC_CLAIM_NOT_MEASURABLE) {
			printf("ok %zu - %s (%s, %s) # SKIP not measurable here: %s\n", i + 1, r->id, r->paper,
			       r->section, r->reason);
		} else {
			printf("%s %zu - %s (%s, %s): %s: %s (paper: %s)\n",
			       r->verdict == IBC_CLAIM_REPRODUCED ? "ok" : "not ok", i + 1, r->id, r->paper,
			       r->section, ibc_claim_verdict_name(r->verdict), r->figure, r->paper_figure);
			if (r->reason[0] != '\0')
				printf("# %s\n", r->reason);
		}
		printf("# claim: %s\n# method: %s\n", r->claim, r->method);
	}
	printf("# %zu reproduced, %zu not reproduced, %zu not measurable here (claims: %s; rows: %s)\n",
	       card->count[IBC_CLAIM_REPRODUCED], card->count[IBC_CLAIM_NOT_REPRODUCED],
	       card->count[IBC_CLAIM_NOT_MEASURABLE], card->source, o->dir);
	rc = card->count[IBC_CLAIM_NOT_REPRODUCED] ? IBC_ERR_VALIDATE : IBC_OK;
	ibc_claims_card_free(card);
	return rc;
}
