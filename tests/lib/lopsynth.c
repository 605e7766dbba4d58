/* The LoP model tests' synthetic results directory (lopsynth.h). */
#include "lopsynth.h"

#include "alltoall/alltoall.h"
#include "barrier/barrier.h"
#include "core/status.h"
#include "logp/logp_fits.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const cols[] = { "run_id", "suite", "variant", "impl", "xport", "ranks",
				    "bytes", "fanin", "min_us", "p50_us", "mean_us", "oversub",
				    "probe_us", "extra" };
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

struct ibc_csv_writer *lop_w;
const char *lop_row_over = "0"; /* the oversub column of the next rows */
const char *lop_row_probe = "";  /* their probe_us ("": none measured) */
const char *lop_row_run = "R1";  /* their run_id */

void lop_row(const char *suite, const char *variant, int n, size_t bytes, long fanin, double us,
	     const char *extra)
{
	char f[8][32];
	const char *fp[NCOLS] = { lop_row_run, suite, variant, "ibchar", "shm", f[0], f[1], f[2],
				  f[3], f[3], f[3], lop_row_over, lop_row_probe, extra };

	snprintf(f[0], 32, "%d", n);
	snprintf(f[1], 32, "%zu", bytes);
	if (fanin > 0)
		snprintf(f[2], 32, "%ld", fanin);
	else
		f[2][0] = '\0';
	snprintf(f[3], 32, "%.9g", us);
	ibc_csv_writer_row(lop_w, fp);
}

/* A test's scratch directory (dir: a mkdtemp template) with results.csv
 * open for lop_row() */
void lop_results_open(char *dir)
{
	if (mkdtemp(dir) == NULL)
		tap_bail_out("mkdtemp");
	lop_results_create(dir);
}

void lop_results_create(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (ibc_csv_writer_open(path, cols, NCOLS, 0, &lop_w) != IBC_OK)
		tap_bail_out("writing %s", path);
}

/* rm -rf dir (a test's scratch directory) */
void lop_dir_remove(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
}

int lop_with_copies = 1;
/* every kernel row's time times this */
double lop_kernel_scale = 1;
/* > 0: rtt-write-1n's rows carry a back-to-back loop's median, lop_b2b_scale
 * times their p50 */
double lop_b2b_scale;

void lop_kernels(void)
{
	static const size_t sizes[] = { 1, 4096 };
	size_t s;
	int p;

	for (s = 0; s < 2; s++) {
		double k = (s ? 2 : 1) * lop_kernel_scale, g = 0.5 + (double)(sizes[s] - 1) * 1e-4;

		for (p = 1; p <= 7; p++) {
			char b2b[64] = "";

			if (lop_b2b_scale > 0)
				snprintf(b2b, sizeof(b2b), "paper_us=%.9g;b2b_p50_us=%.9g;b2b_n=1000",
					 rtt_w(p, k) * lop_b2b_scale * 1.1, rtt_w(p, k) * lop_b2b_scale);
			lop_row("logp", "rtt-write-1n", 8, sizes[s], p, rtt_w(p, k), b2b);
			lop_row("logp", "rtt-send-1n", 8, sizes[s], p, rtt_s(p, k), "");
			lop_row("logp", "os-write", 8, sizes[s], p, os_w(p, k), "");
			lop_row("logp", "os-send", 8, sizes[s], p, os_s(p, k), "");
			if (lop_with_copies)
				lop_row("logp", "os-write-user", 8, sizes[s], p, os_u(p, k), "");
		}
		/* LogGP (not scaled): PRTT(1) = 2, g(s) = 0.5 + (s - 1) 1e-4, o = 0.3, d = 2 */
		lop_row("logp", "loggp-prtt1", 8, sizes[s], 0, 2.0, "");
		lop_row("logp", "loggp-prttn", 8, sizes[s], 0, 2.0 + 15 * g, "");
		lop_row("logp", "loggp-prttd", 8, sizes[s], 0, 2.0 + 15 * (0.3 + 2.0), "d_us=2.000");
		if (!lop_with_copies)
			continue;
		lop_row("logp", "copy", 8, sizes[s], 0, cp_own((double)sizes[s]) * lop_kernel_scale,
			"kernel=copy;from=own;p=1");
		lop_row("logp", "copy-peer", 8, sizes[s], 0, cp_peer((double)sizes[s]) * lop_kernel_scale,
			"kernel=copy;from=peer;p=1");
	}
}

double lop_cell(const struct ibc_csv_table *t, const char *variant, int n, const char *fanin,
		const char *col)
{
	size_t r;

	for (r = 0; r + 1 < t->nrows; r++)
		if (strcmp(ibc_csv_cell(t, r, "variant"), variant) == 0 &&
		    atoi(ibc_csv_cell(t, r, "ranks")) == n &&
		    strcmp(ibc_csv_cell(t, r, "fanin"), fanin) == 0)
			return strtod(ibc_csv_cell(t, r, col), NULL);
	return NAN;
}

const char *lop_scell(const struct ibc_csv_table *t, const char *variant, int n,
		      const char *fanin, const char *col)
{
	size_t r;

	for (r = 0; r + 1 < t->nrows; r++)
		if (strcmp(ibc_csv_cell(t, r, "variant"), variant) == 0 &&
		    atoi(ibc_csv_cell(t, r, "ranks")) == n &&
		    strcmp(ibc_csv_cell(t, r, "fanin"), fanin) == 0)
			return ibc_csv_cell(t, r, col);
	return "";
}

/* The rows written (results.csv closed), their fits, then the model over
 * dir, its stdout into dir/stdout; that file open to read (NULL if it
 * cannot be) */
FILE *lop_model_said(struct ibc_logp_model_opts *mo, const char *dir, const char *label)
{
	char path[300];
	FILE *out;

	ibc_csv_writer_close(lop_w);
	tap_is_int(ibc_logp_fits_write(dir, NULL), IBC_OK, "%s: fits written", label);
	snprintf(path, sizeof(path), "%s/stdout", dir);
	out = fopen(path, "w");
	mo->dir = dir;
	mo->out = out;
	tap_is_int(ibc_logp_model_run(mo), IBC_OK, "%s: model run", label);
	if (out != NULL)
		fclose(out);
	return fopen(path, "r");
}

/* model_said, then its lop-model.csv (bails out when unreadable); *said
 * counts the lines of stdout that hold says */
struct ibc_csv_table *lop_model_table(struct ibc_logp_model_opts *mo, const char *dir,
				      const char *label, const char *says, int *said)
{
	char path[300], line[1024];
	struct ibc_csv_table *t = NULL;
	FILE *out = lop_model_said(mo, dir, label);

	while (out != NULL && fgets(line, sizeof(line), out) != NULL)
		*said += strstr(line, says) != NULL;
	if (out != NULL)
		fclose(out);
	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	if (ibc_csv_read(path, &t) != IBC_OK)
		tap_bail_out("%s: %s unreadable", label, path);
	return t;
}

static int a2a_rounds(const char *v, int n, long fanin, struct ibc_pattern_round *r, int cap)
{
	(void)fanin;
	return ibc_alltoall_alg_rounds(v, n, r, cap);
}

void lop_model_opts_init(struct ibc_logp_model_opts *mo)
{
	static const struct ibc_logp_family fams[] = { { "barrier", ibc_barrier_alg_rounds },
						       { "alltoall", a2a_rounds } };

	memset(mo, 0, sizeof(*mo));
	mo->fams = fams;
	mo->nfams = 2;
}
