/* ibchar compare: see compare.h. */
#include "harness/compare.h"
#include "harness/junit.h"
#include "core/csv.h"
#include "core/stats.h"
#include "core/status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY_COLS 7
static const char *const key_cols[KEY_COLS] = { "suite", "variant", "impl", "xport", "ranks", "bytes", "fanin" };

struct crow {
	char key[512];   /* the key columns joined by '|' */
	char label[256]; /* for people */
	double *s;
	size_t n;
	struct ibc_stats st;
	int oversub;     /* from results.csv: ranks outnumbered the PUs */
	int placement;   /* the probe suite's row: where the ranks sit, not the code */
	double b2b;      /* from results.csv's extra: b2b_p50_us, NAN when none */
	char group[16];  /* ... its timed group (G/NG), "" when the point had one */
	long match;      /* BASE rows: NEW's row, -1 none */
	double lr;       /* log ratio of medians NEW / BASE */
};

struct cset {
	struct crow *r;
	size_t n;
	double probe_us; /* median of the rows' probe_us (rows not oversubscribed), NAN when none */
};

static void cset_free(struct cset *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->r[i].s);
	free(c->r);
}

static int parse_samples(const char *text, double **out, size_t *n)
{
	size_t cap = 64, k = 0;
	double *v = malloc(cap * sizeof(*v)), *nv;
	const char *p = text;
	char *end;

	if (v == NULL)
		return IBC_ERR_NOMEM;
	for (;;) {
		double x;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		x = strtod(p, &end);
		if (end == p || !isfinite(x)) {
			free(v);
			return IBC_ERR_PROTO;
		}
		if (k == cap) {
			cap *= 2;
			nv = realloc(v, cap * sizeof(*v));
			if (nv == NULL) {
				free(v);
				return IBC_ERR_NOMEM;
			}
			v = nv;
		}
		v[k++] = x;
		p = end;
	}
	*out = v;
	*n = k;
	return k > 0 ? IBC_OK : IBC_ERR_PROTO;
}

static void row_key(const struct ibc_csv_table *t, size_t r, char *key, size_t kcap, char *label, size_t lcap)
{
	size_t used = 0, i;
	const char *fanin = ibc_csv_cell(t, r, "fanin");

	key[0] = '\0';
	for (i = 0; i < KEY_COLS; i++) {
		const char *c = ibc_csv_cell(t, r, key_cols[i]);

		used += (size_t)snprintf(key + used, kcap > used ? kcap - used : 0, "%s%s", i ? "|" : "",
					 c != NULL ? c : "");
	}
	snprintf(label, lcap, "%s %s (%s, %s) N=%s bytes=%s%s%s", ibc_csv_cell(t, r, "suite"),
		 ibc_csv_cell(t, r, "variant"), ibc_csv_cell(t, r, "impl"), ibc_csv_cell(t, r, "xport"),
		 ibc_csv_cell(t, r, "ranks"), ibc_csv_cell(t, r, "bytes"), fanin && *fanin ? " fanin=" : "",
		 fanin && *fanin ? fanin : "");
}

/* DIR/samples.csv (later rows of a key replace earlier ones) and the
 * placement probe, oversubscription and back-to-back medians from
 * DIR/results.csv. */
static int cset_load(const char *dir, struct cset *c)
{
	struct ibc_csv_table *t;
	char path[4200];
	size_t r, i;
	int rc;

	memset(c, 0, sizeof(*c));
	c->probe_us = NAN;
	snprintf(path, sizeof(path), "%s/samples.csv", dir);
	if (access(path, R_OK) != 0) {
		fprintf(stderr, "ibchar compare: %s: no samples.csv (a run by an ibchar older than "
			"samples.csv cannot be compared)\n", dir);
		return IBC_ERR_NOTFOUND;
	}
	rc = ibc_csv_read(path, &t);
	if (rc != IBC_OK) {
		fprintf(stderr, "ibchar compare: %s: unreadable\n", path);
		return rc;
	}
	if (ibc_csv_column(t, "samples_us") < 0) {
		fprintf(stderr, "ibchar compare: %s: no samples_us column\n", path);
		ibc_csv_table_free(t);
		return IBC_ERR_PROTO;
	}
	c->r = calloc(t->nrows, sizeof(*c->r));
	if (c->r == NULL) {
		ibc_csv_table_free(t);
		return IBC_ERR_NOMEM;
	}
	for (r = 0; r + 1 < t->nrows; r++) {
		struct crow row;
		const char *suite;

		memset(&row, 0, sizeof(row));
		row_key(t, r, row.key, sizeof(row.key), row.label, sizeof(row.label));
		row.match = -1;
		row.b2b = NAN;
		suite = ibc_csv_cell(t, r, "suite");
		row.placement = suite != NULL && strcmp(suite, "probe") == 0;
		rc = parse_samples(ibc_csv_cell(t, r, "samples_us"), &row.s, &row.n);
		if (rc != IBC_OK) {
			fprintf(stderr, "ibchar compare: %s: row %zu: bad samples\n", path, r + 2);
			ibc_csv_table_free(t);
			return rc;
		}
		ibc_stats_compute(row.s, row.n, &row.st);
		for (i = 0; i < c->n && strcmp(c->r[i].key, row.key) != 0; i++)
			;
		if (i < c->n)
			free(c->r[i].s);
		else
			c->n++;
		c->r[i] = row;
	}
	ibc_csv_table_free(t);
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (access(path, R_OK) == 0 && ibc_csv_read(path, &t) == IBC_OK) {
		/* the placement probe of the run: the rows' that are not
		 * oversubscribed (a probe taken among more ranks than PUs measures
		 * the scheduler, not where the ranks sit); all rows' when every row
		 * is oversubscribed */
		double *pv = malloc(2 * (t->nrows + 1) * sizeof(*pv)), *po = pv + t->nrows + 1;
		size_t np = 0, no = 0;

		for (r = 0; pv != NULL && r + 1 < t->nrows; r++) {
			double v = ibc_csv_num(t, r, "probe_us");
			char key[512], label[256], b2b[32];
			const char *extra = ibc_csv_cell(t, r, "extra");

			if (isfinite(v) && v > 0) {
				if (ibc_csv_num(t, r, "oversub") > 0)
					po[no++] = v;
				else
					pv[np++] = v;
			}
			row_key(t, r, key, sizeof(key), label, sizeof(label));
			for (i = 0; i < c->n; i++)
				if (strcmp(c->r[i].key, key) == 0) {
					c->r[i].oversub = ibc_csv_num(t, r, "oversub") > 0;
					c->r[i].b2b = ibc_csv_extra_get(extra, "b2b_p50_us", b2b, sizeof(b2b))
							      ? strtod(b2b, NULL) : NAN;
					if (!ibc_csv_extra_get(extra, "group", c->r[i].group,
							       sizeof(c->r[i].group)))
						c->r[i].group[0] = '\0';
				}
		}
		if (np == 0 && no > 0) {
			memmove(pv, po, no * sizeof(*pv));
			np = no;
		}
		if (np > 0) {
			ibc_stats_sort(pv, np);
			c->probe_us = ibc_stats_quantile_sorted(pv, np, 0.5);
		}
		free(pv);
		ibc_csv_table_free(t);
	}
	return IBC_OK;
}

struct verdict {
	const char *label;
	int fail;
	char text[320];
};

static double median_of(double *v, size_t n)
{
	ibc_stats_sort(v, n);
	return ibc_stats_quantile_sorted(v, n, 0.5);
}

int ibc_harness_compare(const struct ibc_compare_opts *o)
{
	struct cset b, nw;
	struct verdict *vd = NULL;
	double *lr = NULL, *dev = NULL, min_eff = o->min_effect, probe_ratio = NAN, alpha = o->alpha > 0 ? o->alpha : 0.01;
	double eff[2];
	size_t i, j, nv = 0, nm = 0, nfail = 0, nslow = 0, nfast = 0, nplace = 0, nadv = 0, nwait = 0, nmiss = 0, ngroup = 0, ncls[2];
	int rc, cls;

	rc = cset_load(o->base, &b);
	if (rc != IBC_OK)
		return rc;
	rc = cset_load(o->new_dir, &nw);
	if (rc != IBC_OK) {
		cset_free(&b);
		return rc;
	}
	vd = calloc(b.n + nw.n + 1, sizeof(*vd));
	lr = calloc(b.n + 1, sizeof(*lr));
	dev = calloc(b.n + 1, sizeof(*dev));
	if (vd == NULL || lr == NULL || dev == NULL) {
		rc = IBC_ERR_NOMEM;
		goto out;
	}
	/* matches and log ratios */
	for (i = 0; i < b.n; i++)
		for (j = 0; j < nw.n; j++)
			if (strcmp(b.r[i].key, nw.r[j].key) == 0) {
				b.r[i].match = (long)j;
				if (b.r[i].st.p50 > 0 && nw.r[j].st.p50 > 0)
					b.r[i].lr = log(nw.r[j].st.p50 / b.r[i].st.p50);
				break;
			}
	/* the runs' own spread, for rows that were oversubscribed and rows that
	 * were not apart (the first scatter far more from run to run) */
	for (cls = 0; cls < 2; cls++) {
		size_t nh = 0;
		double mid, q90, e = 0.05;

		nm = 0;
		for (i = 0; i < b.n; i++) {
			const struct crow *x = &b.r[i], *y;
			double hb, hn;

			/* the probe suite's rows move with the vCPUs' cores (2-3x
			 * between two guests): they would set the bar for the rest */
			if (x->oversub != cls || x->placement || x->match < 0 || !(x->st.p50 > 0))
				continue;
			y = &nw.r[x->match];
			if (!(y->st.p50 > 0))
				continue;
			hb = (x->st.ci_hi - x->st.ci_lo) / 2 / x->st.p50;
			hn = (y->st.ci_hi - y->st.ci_lo) / 2 / y->st.p50;
			lr[nm++] = x->lr;
			dev[nh++] = hb > hn ? hb : hn; /* each row's own spread */
		}
		if (nh > 0 && 3 * median_of(dev, nh) > e)
			e = 3 * median_of(dev, nh);
		/* with enough rows to tell the bulk from the changed ones: 2.5 x
		 * the 90th percentile of how far the rows' changes stray from
		 * their median (the tail of the run-to-run scatter, which a
		 * uniform shift of every row does not widen) */
		if (nm >= 10) {
			mid = median_of(lr, nm);
			for (i = 0; i < nm; i++)
				dev[i] = fabs(lr[i] - mid);
			ibc_stats_sort(dev, nm);
			q90 = ibc_stats_quantile_sorted(dev, nm, 0.9);
			if (exp(2.5 * q90) - 1 > e)
				e = exp(2.5 * q90) - 1;
		}
		eff[cls] = min_eff >= 0 ? min_eff : e;
		ncls[cls] = nm;
	}
	if (isfinite(b.probe_us) && isfinite(nw.probe_us) && b.probe_us > 0)
		probe_ratio = nw.probe_us / b.probe_us;
	printf("# ibchar compare %s -> %s\n# minimum effect %.1f%% (%zu rows), oversubscribed %.1f%% (%zu rows)%s; "
	       "alpha %g; placement probe %.3f -> %.3f us%s\n",
	       o->base, o->new_dir, 100 * eff[0], ncls[0], 100 * eff[1], ncls[1],
	       o->min_effect < 0 ? " (from the runs' spread)" : "", alpha, b.probe_us, nw.probe_us,
	       isfinite(probe_ratio) && probe_ratio > 1 + eff[0] ? " (NEW's placement is slower)" : "");
	for (i = 0; i < b.n; i++) {
		struct crow *x = &b.r[i], *y = x->match >= 0 ? &nw.r[x->match] : NULL;
		struct verdict *v = &vd[nv++];
		double ratio, lo, hi, u, p;

		v->label = x->label;
		if (y == NULL) {
			v->fail = 1;
			nmiss++;
			snprintf(v->text, sizeof(v->text), "missing in NEW");
			continue;
		}
		if (!(x->st.p50 > 0) || !(x->st.ci_lo > 0) || !(y->st.p50 > 0)) {
			snprintf(v->text, sizeof(v->text), "not compared: medians %.4g -> %.4g us", x->st.p50, y->st.p50);
			continue;
		}
		min_eff = eff[x->oversub];
		ratio = y->st.p50 / x->st.p50;
		lo = y->st.ci_lo / x->st.ci_hi;
		hi = y->st.ci_hi / x->st.ci_lo;
		ibc_stats_mann_whitney(x->s, x->n, y->s, y->n, &u, &p);
		if (p < alpha && ratio > 1 + min_eff && lo > 1) {
			if (isfinite(probe_ratio) && probe_ratio > 1 + eff[0] && ratio <= probe_ratio * (1 + min_eff)) {
				nplace++;
				snprintf(v->text, sizeof(v->text), "slower with the placement %.3fx [%.3f, %.3f] p=%.2g (probe %.2fx)",
					 ratio, lo, hi, p, probe_ratio);
			} else if (x->placement && !o->strict) {
				nplace++;
				snprintf(v->text, sizeof(v->text), "slower %.3fx [%.3f, %.3f] p=%.2g, a placement "
					 "probe: advisory", ratio, lo, hi, p);
			} else if (x->oversub && !o->strict) {
				nadv++;
				snprintf(v->text, sizeof(v->text), "slower %.3fx [%.3f, %.3f] p=%.2g, oversubscribed: advisory",
					 ratio, lo, hi, p);
			} else if (x->b2b > 0 && y->b2b > 0 && y->b2b / x->b2b <= 1 + min_eff && !o->strict) {
				/* the operation's own loop is unchanged: what slowed is
				 * around it (the wait for the window, the wake-up) */
				nwait++;
				snprintf(v->text, sizeof(v->text), "slower per iteration %.3fx [%.3f, %.3f] p=%.2g, "
					 "%.4g -> %.4g us, back to back unchanged %.3fx: advisory", ratio, lo, hi, p,
					 x->st.p50, y->st.p50, y->b2b / x->b2b);
			} else {
				v->fail = 1;
				nslow++;
				snprintf(v->text, sizeof(v->text), "slower %.3fx [%.3f, %.3f] p=%.2g, %.4g -> %.4g us%s", ratio,
					 lo, hi, p, x->st.p50, y->st.p50, x->oversub ? ", oversubscribed" : "");
			}
		} else if (p < alpha && ratio < 1 / (1 + min_eff) && hi < 1) {
			nfast++;
			snprintf(v->text, sizeof(v->text), "faster %.3fx [%.3f, %.3f] p=%.2g, %.4g -> %.4g us", ratio, lo,
				 hi, p, x->st.p50, y->st.p50);
		} else {
			snprintf(v->text, sizeof(v->text), "unchanged %.3fx [%.3f, %.3f] p=%.2g", ratio, lo, hi, p);
		}
		if (strcmp(x->group, y->group) != 0) {
			/* timed beside other variants (harness.c): its per-iteration
			 * figure moved with them */
			size_t len = strlen(v->text);

			ngroup++;
			snprintf(v->text + len, sizeof(v->text) - len, "; timed group %s -> %s",
				 x->group[0] ? x->group : "1/1", y->group[0] ? y->group : "1/1");
		}
	}
	printf("1..%zu\n", nv);
	for (i = 0; i < nv; i++) {
		printf("%sok %zu - %s: %s\n", vd[i].fail ? "not " : "", i + 1, vd[i].label, vd[i].text);
		nfail += (size_t)vd[i].fail;
	}
	for (j = 0; j < nw.n; j++) {
		for (i = 0; i < b.n && strcmp(b.r[i].key, nw.r[j].key) != 0; i++)
			;
		if (i == b.n)
			printf("# new in NEW (not in BASE): %s\n", nw.r[j].label);
	}
	printf("# %zu rows: %zu slower, %zu faster, %zu slower with the placement, %zu slower oversubscribed "
	       "(advisory), %zu slower per iteration only (advisory), %zu missing, %zu unchanged or not "
	       "compared\n", nv, nslow, nfast, nplace, nadv, nwait, nmiss,
	       nv - nslow - nfast - nplace - nadv - nwait - nmiss);
	if (ngroup > 0)
		printf("# %zu rows were timed in another group than in BASE (beside other variants): "
		       "their per-iteration figures are not like for like\n", ngroup);
	if (o->junit != NULL) {
		struct ibc_junit_case *jc = calloc(nv + 1, sizeof(*jc));

		if (jc == NULL) {
			rc = IBC_ERR_NOMEM;
			goto out;
		}
		for (i = 0; i < nv; i++)
			jc[i] = (struct ibc_junit_case){ vd[i].label, vd[i].text, !vd[i].fail };
		rc = ibc_harness_junit_write(o->junit, "ibchar compare", jc, nv);
		free(jc);
	}
	if (rc == IBC_OK && nfail > 0)
		rc = IBC_ERR_REMOTE;
out:
	free(vd);
	free(lr);
	free(dev);
	cset_free(&b);
	cset_free(&nw);
	return rc;
}
