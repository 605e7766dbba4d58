/* Rank 0's side of a point: the samples gathered, reduced over ranks to
 * the statistics, written as results.csv rows (see docs/design.md for the
 * columns) and summed up on one progress line. */
#include "harness/harness_priv.h"
#include "core/csv.h"
#include "core/fs.h"
#include "core/status.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GATHER_CHUNK 2048   /* doubles per rank per gather call */

static const char *const row_columns[] = {
	"run_id", "suite", "variant", "impl", "xport", "launcher", "nodes", "ppn", "ranks",
	"bytes", "fanin", "iters", "warmup", "min_us", "p50_us", "mean_us", "p99_us", "max_us",
	"stdev_us", "ci_lo_us", "ci_hi_us", "skew_us", "wait", "oversub", "probe_us", "extra"
};
#define NCOLS (sizeof(row_columns) / sizeof(row_columns[0]))

static void fmt_double(char *buf, size_t cap, double v)
{
	if (isnan(v) || v < 0)
		buf[0] = '\0';
	else
		snprintf(buf, cap, "%.4f", v);
}

/* gathers n doubles of every rank to rank 0's all (size * n) */
int ibc_harness_samples_gather(struct ibc_boot *b, const double *mine, double *all, size_t n)
{
	double *tmp = NULL;
	size_t off, chunk, r;
	int rc = IBC_OK;

	if (b->size == 1) {
		memcpy(all, mine, n * sizeof(double));
		return IBC_OK;
	}
	if (b->rank == 0) {
		tmp = malloc(sizeof(double) * GATHER_CHUNK * (size_t)b->size);
		if (tmp == NULL)
			return IBC_ERR_NOMEM; /* the others would hang: the caller aborts */
	}
	for (off = 0; off < n; off += chunk) {
		chunk = n - off < GATHER_CHUNK ? n - off : GATHER_CHUNK;
		rc = ibc_boot_gather(b, mine + off, tmp, chunk * sizeof(double), 0);
		if (rc != IBC_OK)
			break;
		if (b->rank == 0)
			for (r = 0; r < (size_t)b->size; r++)
				memcpy(all + r * n + off, tmp + r * chunk, chunk * sizeof(double));
	}
	free(tmp);
	return rc;
}

/* rank 0: per-iteration reduction over ranks, then the statistics */
int ibc_harness_reduce(struct ibc_harness *h, struct op_state *s, long iters)
{
	int size = h->boot->size, r;
	double *per_iter, *skew, *rank_sum, lo, hi, v, sum_means = 0;
	struct ibc_stats sk;
	long i, kept;
	int rc;

	per_iter = malloc(sizeof(double) * (size_t)iters);
	skew = malloc(sizeof(double) * (size_t)iters);
	rank_sum = calloc((size_t)size, sizeof(double));
	if (per_iter == NULL || skew == NULL || rank_sum == NULL) {
		free(per_iter);
		free(skew);
		free(rank_sum);
		return IBC_ERR_NOMEM;
	}
	for (i = 0, kept = 0; i < iters; i++) {
		int late = 0;

		lo = hi = s->all[i];
		for (r = 0; r < size; r++) {
			v = s->all[(size_t)r * (size_t)iters + (size_t)i];
			late |= v < 0;
			if (v < lo)
				lo = v;
			if (v > hi)
				hi = v;
		}
		if (late) /* window mode only: counted in extra late_iters */
			continue;
		per_iter[kept] = s->op->timing == IBC_HARNESS_TIME_ROOT ? s->all[i] : hi;
		skew[kept] = hi - lo;
		for (r = 0; r < size; r++)
			rank_sum[r] += s->all[(size_t)r * (size_t)iters + (size_t)i];
		kept++;
	}
	s->late_iters = iters - kept;
	s->kept = kept;
	if ((double)s->late_iters / (double)iters > h->worst_late)
		h->worst_late = (double)s->late_iters / (double)iters;
	if (kept == 0) {
		/* the caller decides: measure the point again at a barrier (auto)
		 * or fail (--sync window) */
		free(per_iter);
		free(skew);
		free(rank_sum);
		return IBC_OK;
	}
	for (r = 0; r < size; r++)
		sum_means += rank_sum[r] / (double)kept;
	s->rank_mean = sum_means / size;
	rc = ibc_stats_compute(per_iter, (size_t)kept, &s->st); /* per_iter stays in order */
	if (rc == IBC_OK)
		rc = ibc_stats_compute_inplace(skew, (size_t)kept, &sk);
	if (rc == IBC_OK)
		s->skew_p50 = sk.p50;
	free(s->kept_samples);
	s->kept_samples = per_iter; /* in iteration order; for samples.csv */
	free(skew);
	free(rank_sum);
	return rc;
}

static void extra_append(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void extra_append(char *buf, size_t cap, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= cap)
		return;
	if (used > 0)
		buf[used++] = ';', buf[used] = '\0';
	va_start(ap, fmt);
	vsnprintf(buf + used, cap - used, fmt, ap);
	va_end(ap);
}

int ibc_harness_row_write(struct ibc_harness *h, struct op_state *s, struct op_state *all_ops,
			  size_t n, const struct ibc_harness_point *pt)
{
	const struct ibc_harness_params *p = h->p;
	const struct ibc_harness_op *op = s->op;
	char c_nodes[32], c_ppn[32], c_ranks[32], c_bytes[32], c_fanin[32], c_iters[32],
		c_warm[32], c_min[32], c_p50[32], c_mean[32], c_p99[32], c_max[32], c_sd[32],
		c_cilo[32], c_cihi[32], c_skew[32], c_over[8], c_probe[32], extra[EXTRA_CAP + 512];
	const char *fields[NCOLS];
	size_t k, j;
	char name[64];

	snprintf(c_nodes, sizeof(c_nodes), "%d", h->boot->num_nodes);
	snprintf(c_ppn, sizeof(c_ppn), "%d", h->boot->local_size);
	snprintf(c_ranks, sizeof(c_ranks), "%d", h->boot->size);
	snprintf(c_bytes, sizeof(c_bytes), "%zu", pt->bytes);
	if (op->fanin > 0)
		snprintf(c_fanin, sizeof(c_fanin), "%ld", op->fanin);
	else
		c_fanin[0] = '\0';
	snprintf(c_iters, sizeof(c_iters), "%ld", s->kept);
	snprintf(c_warm, sizeof(c_warm), "%ld", pt->warmup);
	fmt_double(c_min, sizeof(c_min), s->st.min);
	fmt_double(c_p50, sizeof(c_p50), s->st.p50);
	fmt_double(c_mean, sizeof(c_mean), s->st.mean);
	fmt_double(c_p99, sizeof(c_p99), s->st.p99);
	fmt_double(c_max, sizeof(c_max), s->st.max);
	fmt_double(c_sd, sizeof(c_sd), s->st.stdev);
	fmt_double(c_cilo, sizeof(c_cilo), s->st.ci_lo);
	fmt_double(c_cihi, sizeof(c_cihi), s->st.ci_hi);
	fmt_double(c_skew, sizeof(c_skew), s->skew_p50);
	if (op->one_figure) {
		/* one figure repeated: no spread was measured */
		snprintf(c_iters, sizeof(c_iters), "1");
		c_min[0] = c_p99[0] = c_max[0] = c_sd[0] = c_cilo[0] = c_cihi[0] = c_skew[0] = '\0';
	}
	snprintf(c_over, sizeof(c_over), "%d", h->oversub);
	fmt_double(c_probe, sizeof(c_probe), h->probe_start_us);

	extra[0] = '\0';
	extra_append(extra, sizeof(extra), "rank_mean_us=%.4f", s->rank_mean);
	if (op->one_figure)
		extra_append(extra, sizeof(extra), "n=1");
	for (j = 0; j < p->nfactor_refs; j++) {
		const char *ref = p->factor_refs[j], *slash = strchr(ref, '/');
		size_t vlen = slash != NULL ? (size_t)(slash - ref) : strlen(ref);

		for (k = 0; k < n; k++) {
			const struct ibc_harness_op *o2 = all_ops[k].op;

			if (!all_ops[k].active || strlen(o2->variant) != vlen ||
			    strncmp(o2->variant, ref, vlen) != 0)
				continue;
			if (slash != NULL && strcmp(o2->impl != NULL ? o2->impl : "ibchar", slash + 1) != 0)
				continue;
			if (o2->fanin > 0 && o2->fanin != op->fanin)
				continue;
			snprintf(name, sizeof(name), "factor_vs_%s", ref);
			for (char *c = name; *c; c++)
				if (*c == '-' || *c == '/')
					*c = '_';
			if (s->st.p50 > 0)
				extra_append(extra, sizeof(extra), "%s=%.4f", name,
					     all_ops[k].st.p50 / s->st.p50);
			break;
		}
	}
	extra_append(extra, sizeof(extra), "sync=%s", h->window ? "window" : "barrier");
	if (h->ngroups > 1) /* timed with the operations of its group only (harness.c) */
		extra_append(extra, sizeof(extra), "group=%d/%d", s->group + 1, h->ngroups);
	/* each timed iteration after a call of its own: its prime, or timed
	 * alone, its own last call (harness.c); either way what it finds in
	 * the caches is its own, so compare may judge one against the other */
	if (s->prime || s->alone)
		extra_append(extra, sizeof(extra), "primed=1");
	if (h->window)
		extra_append(extra, sizeof(extra), "window_us=%.3f;late_tol_us=%.3f;late=%ld;late_iters=%ld",
			     s->win_us, s->late_tol_us, s->late, s->late_iters);
	if (s->valid >= 0)
		extra_append(extra, sizeof(extra), "valid=%d", s->valid);
	if (s->valid >= 0 && op->checked != NULL)
		extra_append(extra, sizeof(extra), "checked=%s", op->checked);
	if (s->extra[0] != '\0')
		extra_append(extra, sizeof(extra), "%s", s->extra);

	fields[0] = h->run_id;
	fields[1] = p->suite;
	fields[2] = op->variant;
	fields[3] = op->impl != NULL ? op->impl : "ibchar";
	fields[4] = op->xport != NULL ? op->xport : p->xport;
	fields[5] = h->launcher;
	fields[6] = c_nodes;
	fields[7] = c_ppn;
	fields[8] = c_ranks;
	fields[9] = c_bytes;
	fields[10] = c_fanin;
	fields[11] = c_iters;
	fields[12] = c_warm;
	fields[13] = c_min;
	fields[14] = c_p50;
	fields[15] = c_mean;
	fields[16] = c_p99;
	fields[17] = c_max;
	fields[18] = c_sd;
	fields[19] = c_cilo;
	fields[20] = c_cihi;
	fields[21] = c_skew;
	fields[22] = ibc_wait_name(h->wait);
	fields[23] = c_over;
	fields[24] = c_probe;
	fields[25] = extra;
	if (!op->one_figure && s->kept_samples != NULL && s->kept > 0) {
		int src = ibc_harness_samples_append(p->out_dir, fields, s->kept_samples, (size_t)s->kept);

		if (src != IBC_OK)
			return src;
	}
	if (p->print_rows) {
		printf("%-10s %-16s ranks=%-4d bytes=%-8zu%s%-4s p50=%10.3f us  mean=%10.3f  p99=%10.3f  skew=%8.3f\n",
		       p->suite, op->variant, h->boot->size, pt->bytes, op->fanin > 0 ? " fanin=" : "",
		       c_fanin, s->st.p50, s->st.mean, s->st.p99, s->skew_p50);
		fflush(stdout);
	}
	return ibc_csv_writer_row(h->rows, fields);
}
/* rank 0: the output directory and results.csv (appended to with --append) */
int ibc_harness_rows_open(struct ibc_harness *h)
{
	char path[4200];
	int rc = ibc_fs_mkdir_p(h->p->out_dir);

	if (rc != IBC_OK)
		return rc;
	snprintf(path, sizeof(path), "%s/results.csv", h->p->out_dir);
	return ibc_csv_writer_open(path, row_columns, NCOLS, h->p->append, &h->rows);
}

/* rank 0: a point's progress line on stderr, every operation's median */
void ibc_harness_point_line(struct ibc_harness *h, struct op_state *st, size_t n, int index,
			    const struct ibc_harness_point *pt, double elapsed_us)
{
	/* one write, so lines of several processes do not mix */
	char line[2048];
	size_t used, k;

	snprintf(line, sizeof(line), "%s: point %d/%zu: %d ranks, %zu bytes, %ld iters, %.2f s:",
		 h->p->suite, index + 1, h->p->nsizes, h->boot->size, pt->bytes, pt->iters,
		 elapsed_us / 1e6);
	for (k = 0; k < n; k++) {
		used = strlen(line);
		if (!st[k].active || used + 2 >= sizeof(line))
			continue;
		if (st[k].op->fanin > 0)
			snprintf(line + used, sizeof(line) - used, " %s/l=%ld %.3f us",
				 st[k].op->variant, st[k].op->fanin, st[k].st.p50);
		else
			snprintf(line + used, sizeof(line) - used, " %s %.3f us", st[k].op->variant,
				 st[k].st.p50);
	}
	fprintf(stderr, "%s\n", line);
}

/* DIR/samples.csv: a results row's key (the row's own fields) and every
 * sample its statistics came from, in us, space-separated, in the order they
 * were taken (ibchar compare). */
int ibc_harness_samples_append(const char *dir, const char *const *row_fields, const double *v, size_t n)
{
	static const char *const cols[] = { "run_id", "suite", "variant", "impl", "xport", "ranks", "bytes",
					    "fanin", "n", "samples_us" };
	struct ibc_csv_writer *w;
	const char *f[10];
	char path[4200], cn[32], *buf;
	size_t i, used = 0, cap = n * 16 + 1;
	int rc;

	buf = malloc(cap);
	if (buf == NULL)
		return IBC_ERR_NOMEM;
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		used += (size_t)snprintf(buf + used, cap - used, "%s%.4f", i ? " " : "", v[i]);
	snprintf(cn, sizeof(cn), "%zu", n);
	/* the row's columns: run_id 0, suite 1, variant 2, impl 3, xport 4, ranks 8, bytes 9, fanin 10 */
	f[0] = row_fields[0];
	f[1] = row_fields[1];
	f[2] = row_fields[2];
	f[3] = row_fields[3];
	f[4] = row_fields[4];
	f[5] = row_fields[8];
	f[6] = row_fields[9];
	f[7] = row_fields[10];
	f[8] = cn;
	f[9] = buf;
	snprintf(path, sizeof(path), "%s/samples.csv", dir);
	rc = ibc_csv_writer_open(path, cols, 10, 1, &w);
	if (rc == IBC_OK) {
		rc = ibc_csv_writer_row(w, f);
		if (ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
			rc = IBC_ERR_IO;
	}
	free(buf);
	return rc;
}

int ibc_harness_rows_writer_open(const char *dir, struct ibc_csv_writer **out)
{
	char path[4200];
	int rc = ibc_fs_mkdir_p(dir);

	if (rc != IBC_OK)
		return rc;
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	return ibc_csv_writer_open(path, row_columns, NCOLS, 1, out);
}

int ibc_harness_row_from_samples(struct ibc_csv_writer *w, const struct ibc_harness_row_in *r)
{
	char c[14][32], extra[EXTRA_CAP + 64];
	const char *fields[NCOLS];
	struct ibc_stats st;
	int rc = ibc_stats_compute(r->samples, r->n, &st), one = r->n == 1;

	if (rc != IBC_OK)
		return rc;
	snprintf(c[0], sizeof(c[0]), "%d", r->nodes);
	snprintf(c[1], sizeof(c[1]), "%d", r->ppn);
	snprintf(c[2], sizeof(c[2]), "%d", r->ranks);
	snprintf(c[3], sizeof(c[3]), "%lld", r->bytes);
	if (r->fanin >= 0)
		snprintf(c[4], sizeof(c[4]), "%lld", r->fanin);
	else
		c[4][0] = '\0';
	snprintf(c[5], sizeof(c[5]), "%zu", r->n);
	fmt_double(c[6], sizeof(c[6]), st.min);
	fmt_double(c[7], sizeof(c[7]), st.p50);
	fmt_double(c[8], sizeof(c[8]), st.mean);
	fmt_double(c[9], sizeof(c[9]), st.p99);
	fmt_double(c[10], sizeof(c[10]), st.max);
	fmt_double(c[11], sizeof(c[11]), st.stdev);
	fmt_double(c[12], sizeof(c[12]), st.ci_lo);
	snprintf(extra, sizeof(extra), "%s%s%s", r->extra != NULL ? r->extra : "",
		 one && r->extra != NULL && r->extra[0] ? ";" : "", one ? "n=1" : "");
	fields[0] = r->run_id;
	fields[1] = r->suite;
	fields[2] = r->variant;
	fields[3] = r->impl;
	fields[4] = r->xport;
	fields[5] = r->launcher;
	fields[6] = c[0];
	fields[7] = c[1];
	fields[8] = c[2];
	fields[9] = c[3];
	fields[10] = c[4];
	fields[11] = c[5];
	fields[12] = "0";
	fields[13] = one ? "" : c[6];
	fields[14] = c[7];
	fields[15] = c[8];
	fields[16] = one ? "" : c[9];
	fields[17] = one ? "" : c[10];
	fields[18] = one ? "" : c[11];
	fields[19] = one ? "" : c[12];
	fmt_double(c[13], sizeof(c[13]), st.ci_hi);
	fields[20] = one ? "" : c[13];
	fields[21] = NULL;
	fields[22] = NULL;
	fields[23] = "0";
	fields[24] = NULL;
	fields[25] = extra;
	rc = ibc_csv_writer_row(w, fields);
	if (rc == IBC_OK && r->dir != NULL && !one)
		rc = ibc_harness_samples_append(r->dir, fields, r->samples, r->n);
	return rc;
}
