/* The launch suite's tables: the growth of each phase with the number of
 * node agents (log n against linear) and Table 3.1 computed for the
 * thesis' job sizes.  See lsuite.h. */
#include "launch/lsuite_priv.h"
#include "launcher/cache.h"
#include "core/csv.h"
#include "core/stats.h"
#include "core/status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------- growth ---- */
int ibc_lsuite_growth_fit(const double *x, const double *y, size_t n, struct ibc_lsuite_growth *g)
{
	double *lx, my = 0, sst = 0, ssl = 0, ssn = 0;
	size_t i, distinct = 0;
	int rc;

	if (n < 3)
		return IBC_ERR_INVAL;
	for (i = 0; i < n; i++) {
		if (!(x[i] > 0))
			return IBC_ERR_INVAL;
		if (i > 0 && x[i] != x[0])
			distinct = 1;
		my += y[i];
	}
	if (!distinct)
		return IBC_ERR_INVAL;
	lx = malloc(n * sizeof(*lx));
	if (lx == NULL)
		return IBC_ERR_NOMEM;
	for (i = 0; i < n; i++)
		lx[i] = log2(x[i]);
	rc = ibc_stats_line_fit(lx, y, n, &g->log_a, &g->log_b, NULL);
	if (rc == IBC_OK)
		rc = ibc_stats_line_fit(x, y, n, &g->lin_a, &g->lin_b, NULL);
	my /= (double)n;
	for (i = 0; rc == IBC_OK && i < n; i++) {
		double el = y[i] - (g->log_a + g->log_b * lx[i]), en = y[i] - (g->lin_a + g->lin_b * x[i]);

		sst += (y[i] - my) * (y[i] - my);
		ssl += el * el;
		ssn += en * en;
	}
	free(lx);
	if (rc != IBC_OK)
		return rc;
	g->log_r2 = sst > 0 ? 1 - ssl / sst : 1;
	g->lin_r2 = sst > 0 ? 1 - ssn / sst : 1;
	return IBC_OK;
}

/* For every phase variant at a fixed ppn and multiplier measured at three or
 * more agent counts: launch-growth.csv and a table. */
int ibc_lsuite_growth_write(struct ls *ls)
{
	static const char *const cols[] = { "run_id", "variant", "ppn", "mult", "points", "nla_min", "nla_max",
					    "log_a_us", "log_b_us", "log_r2", "lin_a_us", "lin_b_us", "lin_r2",
					    "better" };
	struct ibc_csv_writer *w = NULL;
	char path[4400], f[12][48];
	const char *fields[14];
	size_t i, j;
	int header = 0, rc = IBC_OK;

	for (i = 0; i < ls->npts; i++) {
		const struct point *p = &ls->pts[i];
		double x[64], y[64];
		struct ibc_lsuite_growth g;
		size_t n = 0, k;
		int dup = 0;

		if (strncmp(p->variant, "cache:", 6) == 0)
			continue;
		for (j = 0; j < i; j++)
			if (strcmp(ls->pts[j].variant, p->variant) == 0 && ls->pts[j].ppn == p->ppn &&
			    ls->pts[j].mult == p->mult)
				dup = 1;
		if (dup)
			continue;
		for (j = i; j < ls->npts && n < 64; j++) {
			const struct point *q = &ls->pts[j];
			struct ibc_stats st;

			if (strcmp(q->variant, p->variant) == 0 && q->ppn == p->ppn && q->mult == p->mult &&
			    q->n > 0 && ibc_stats_compute(q->s, q->n, &st) == IBC_OK) {
				x[n] = q->nodes;
				y[n++] = st.p50;
			}
		}
		if (ibc_lsuite_growth_fit(x, y, n, &g) != IBC_OK)
			continue;
		if (w == NULL) {
			snprintf(path, sizeof(path), "%s/launch-growth.csv", ls->o->out);
			rc = ibc_csv_writer_open(path, cols, 14, 1, &w);
			if (rc != IBC_OK)
				return rc;
		}
		if (!header++)
			ibc_lsuite_say(ls, "\nlaunch: growth with the number of node agents n (p50): y = a + b log2 n "
				"against y = a + b n\n%-26s %4s %4s %9s %9s %7s %9s %7s %s\n", "variant", "ppn",
			    "mult", "n", "b_log_ms", "R2_log", "b_lin_ms", "R2_lin", "better");
		{
			double lo = x[0], hi = x[0];

			for (k = 1; k < n; k++) {
				lo = x[k] < lo ? x[k] : lo;
				hi = x[k] > hi ? x[k] : hi;
			}
			snprintf(f[0], 48, "%d", p->ppn);
			snprintf(f[1], 48, "%d", p->mult);
			snprintf(f[2], 48, "%zu", n);
			snprintf(f[3], 48, "%.0f", lo);
			snprintf(f[4], 48, "%.0f", hi);
			snprintf(f[5], 48, "%.2f", g.log_a);
			snprintf(f[6], 48, "%.2f", g.log_b);
			snprintf(f[7], 48, "%.4f", g.log_r2);
			snprintf(f[8], 48, "%.2f", g.lin_a);
			snprintf(f[9], 48, "%.3f", g.lin_b);
			snprintf(f[10], 48, "%.4f", g.lin_r2);
			snprintf(f[11], 48, "%s", g.log_r2 >= g.lin_r2 ? "log" : "linear");
			ibc_lsuite_say(ls, "%-26s %4d %4d %4.0f..%-4.0f %9.3f %7.3f %9.4f %7.3f %s\n", p->variant, p->ppn, p->mult,
			    lo, hi, g.log_b / 1e3, g.log_r2, g.lin_b / 1e3, g.lin_r2, f[11]);
		}
		fields[0] = ls->o->run_id;
		fields[1] = p->variant;
		for (k = 0; k < 12; k++)
			fields[2 + k] = f[k];
		if (ibc_csv_writer_row(w, fields) != IBC_OK)
			rc = IBC_ERR_IO;
	}
	if (w != NULL && ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc;
}

/* Table 3.1 for the thesis' job sizes from the measured bytes per cached
 * entry (the largest point's hcs run): launch-memory.csv. */
int ibc_lsuite_memory_table(struct ls *ls)
{
	static const char *const cols[] = { "run_id", "policy", "ranks", "pairs", "bytes_per_nla", "method",
					    "entry_bytes", "bound_bytes" };
	static const int sizes[] = { 64, 256, 1024, 4096, 16384, 65536 };
	static const int pairs[] = { 1, 4, 16, 64 };
	struct ibc_csv_table *t;
	struct ibc_csv_writer *w;
	char path[4400], f[5][48];
	const char *fields[8];
	double entry = 0, best = -1;
	size_t r, si, pi, ci;
	int rc;

	snprintf(path, sizeof(path), "%s/launch-cache.csv", ls->o->out);
	if (access(path, R_OK) != 0 || ibc_csv_read(path, &t) != IBC_OK)
		return IBC_OK;
	for (r = 0; r + 1 < t->nrows; r++) {
		double e = ibc_csv_num(t, r, "nla_entries_max"), mem = ibc_csv_num(t, r, "nla_mem_max");

		if (strcmp(ibc_csv_str(t, r, "run_id"), ls->o->run_id) == 0 &&
		    strcmp(ibc_csv_str(t, r, "policy"), "hcmab") == 0 && e > best && e > 0) {
			best = e;
			entry = mem / e;
		}
	}
	ibc_csv_table_free(t);
	if (entry <= 0)
		return IBC_OK;
	snprintf(path, sizeof(path), "%s/launch-memory.csv", ls->o->out);
	rc = ibc_csv_writer_open(path, cols, 8, 1, &w);
	if (rc != IBC_OK)
		return rc;
	ibc_lsuite_say(ls, "\nlaunch: node-level cache memory (Table 3.1), computed from %.0f bytes per entry; "
		"hcmab-lru bounded to %d stages (KiB per NLA, worst NLA)\n%-10s %6s", entry, LRU_STAGES,
	    "policy", "pairs");
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		ibc_lsuite_say(ls, " %9d", sizes[si]);
	ibc_lsuite_say(ls, "\n");
	for (ci = 0; ibc_launch_cache_names[ci] != NULL; ci++) {
		int lru = ci == IBC_LAUNCH_CACHE_HCMAB_LRU;

		for (pi = 0; pi < sizeof(pairs) / sizeof(pairs[0]); pi++) {
			ibc_lsuite_say(ls, "%-10s %6d", ibc_launch_cache_names[ci], pairs[pi]);
			for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
				double all = (double)sizes[si] * pairs[pi] * entry;
				double bound = (double)sizes[si] * LRU_STAGES * ENTRY_BYTES_EST;
				double v = lru && all > bound ? bound : all;

				snprintf(f[0], 48, "%d", sizes[si]);
				snprintf(f[1], 48, "%d", pairs[pi]);
				snprintf(f[2], 48, "%.0f", v);
				snprintf(f[3], 48, "%.1f", entry);
				snprintf(f[4], 48, "%.0f", lru ? bound : 0);
				fields[0] = ls->o->run_id;
				fields[1] = ibc_launch_cache_names[ci];
				fields[2] = f[0];
				fields[3] = f[1];
				fields[4] = f[2];
				fields[5] = "computed";
				fields[6] = f[3];
				fields[7] = lru ? f[4] : "";
				if (ibc_csv_writer_row(w, fields) != IBC_OK)
					rc = IBC_ERR_IO;
				ibc_lsuite_say(ls, " %9.0f", v / 1024);
			}
			ibc_lsuite_say(ls, "\n");
		}
	}
	if (ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc;
}

