/* The LoP closed loop over several passes in one directory (`ibchar run
 * --repeat`, logp_passes.h), on a synthetic results directory
 * (tests/lib/lopsynth.h).  Three passes measure the same rows:
 *   R1: the rows 1.5x slower than at base, the kernels at base (the machine
 *       slowed down between the kernels and the rows);
 *   R2: kernels and rows both 2x slower than at base (a slower machine all
 *       pass long);
 *   R3: the kernels 1.2x, the rows 0.8x (it sped up between them).
 * Each pass's own fits predict its own rows, so R2 reads the error of a
 * pass at base, R1 a lower one and R3 a higher; the directory's
 * lop-model.csv holds per row the median over the passes: R2's, neither
 * the first pass's nor the last's.  A fourth run of rows without kernels is not
 * modelled; a row the model predicts in one pass of three is "no
 * prediction". */
#include "lopsynth.h"
#include "core/status.h"
#include "logp/logp_fits.h"
#include "logp/logp_passes.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const runs[] = { "R1", "R2", "R3" };
#define NRUNS 3

static struct ibc_csv_table *table(const char *dir, const char *sub, const char *name)
{
	struct ibc_csv_table *t = NULL;
	char path[400];

	snprintf(path, sizeof(path), "%s%s%s/%s", dir, sub[0] ? "/passes/" : "", sub, name);
	return ibc_csv_read(path, &t) == IBC_OK ? t : NULL;
}

static int lines_with(const char *path, const char *what)
{
	char line[2048];
	FILE *f = fopen(path, "r");
	int n = 0;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, what) != NULL;
	if (f != NULL)
		fclose(f);
	return n;
}

static double med3(double a, double b, double c)
{
	return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

int main(void)
{
	static const double kscale[NRUNS] = { 1, 2, 1.2 }, rscale[NRUNS] = { 1.5, 2, 0.8 };
	static const char *const over[NRUNS] = { "1", "1", "0" };
	struct ibc_logp_model_opts mo;
	struct ibc_csv_table *t, *own[NRUNS];
	char dir[] = "/tmp/ibc-loppsXXXXXX", path[300];
	double e[NRUNS], lo = INFINITY, hi = -INFINITY;
	const char *best;
	char col[32];
	int i, pe_rows = 0;
	size_t r;

	tap_plan_none();
	lop_model_opts_init(&mo);
	lop_results_open(dir);
	for (i = 0; i < NRUNS; i++) {
		lop_row_run = runs[i];
		lop_kernel_scale = kscale[i];
		lop_kernels();
		lop_row("barrier", "pe", 8, 8, 0, 10.0 * rscale[i], "");
		lop_row("alltoall", "pairwise", 8, 4096, 0, 20.0 * rscale[i], "");
		/* oversubscribed in R1 and R2: predicted in R3 only */
		lop_row_over = over[i];
		lop_row("alltoall", "hypercube", 8, 4096, 0, 20.0 * rscale[i], "");
		lop_row_over = "0";
		/* RGM at N = 8: fan-ins 3 and 7 (the models' choices, asserted
		 * below) at fan-in 1's time in R1, 1.5x it in R2, 2x in R3 */
		lop_row("barrier", "rgm", 8, 0, 1, 10.0 * rscale[i], "");
		lop_row("barrier", "rgm", 8, 0, 3, 10.0 * rscale[i] * (1 + 0.5 * i), "");
		lop_row("barrier", "rgm", 8, 0, 7, 10.0 * rscale[i] * (1 + 0.5 * i), "");
	}
	lop_row_run = "R9"; /* rows without kernels of their own */
	lop_row("barrier", "pe", 8, 8, 0, 99.0, "");
	lop_row_run = "R1";
	lop_kernel_scale = 1;
	ibc_csv_writer_close(lop_w);
	snprintf(path, sizeof(path), "%s/stdout", dir);
	mo.dir = dir;
	mo.out = fopen(path, "w");
	tap_is_int(ibc_logp_model_dir(&mo), IBC_OK, "passes: the model runs over three passes");
	if (mo.out != NULL)
		fclose(mo.out);

	/* each pass alone, by its own fits */
	for (i = 0; i < NRUNS; i++) {
		own[i] = table(dir, runs[i], "lop-model.csv");
		tap_ok(own[i] != NULL, "passes: %s/passes/%s/lop-model.csv written", dir, runs[i]);
		e[i] = own[i] != NULL ? lop_cell(own[i], "pe", 8, "", "lop_rtt_err") : NAN;
	}
	tap_ok(isfinite(e[1]), "passes: R2 predicts pe by LoP-RTT (err %g)", e[1]);
	tap_is_double_within(e[0], (1 + e[1]) / 1.5 - 1, 1e-3,
			     "passes: R1's rows 1.5x slower than its kernels: its own error");
	tap_is_double_within(e[2], (1 + e[1]) * 1.2 / 0.8 - 1, 1e-3,
			     "passes: R3's kernels 1.2x, its rows 0.8x: its own error");
	t = own[1] != NULL ? table(dir, runs[1], "fits.csv") : NULL;
	tap_ok(t != NULL && strcmp(ibc_csv_str(t, 0, "run_id"), "R2") == 0,
	       "passes: R2's fits are fitted from R2's rows (run_id %s)",
	       t != NULL ? ibc_csv_str(t, 0, "run_id") : "-");
	ibc_csv_table_free(t);

	/* the directory's table: the median over the passes */
	t = table(dir, "", "lop-model.csv");
	if (t == NULL)
		tap_bail_out("passes: %s/lop-model.csv unreadable", dir);
	for (r = 0; r + 1 < t->nrows; r++)
		pe_rows += strcmp(ibc_csv_cell(t, r, "variant"), "pe") == 0;
	tap_is_int(pe_rows, 1, "passes: one row per key; R9's row (no kernels) is not in it");
	tap_is_double_within(lop_cell(t, "pe", 8, "", "measured_us"), 15.0, 1e-9,
			     "passes: measured is the median of 15, 20, 8 (R9's 99 left out)");
	tap_is_double_within(lop_cell(t, "pe", 8, "", "lop_rtt_err"), med3(e[0], e[1], e[2]), 1e-3,
			     "passes: LoP-RTT's error is the median of the passes' own errors");
	tap_ok(fabs(lop_cell(t, "pe", 8, "", "lop_rtt_err") - e[1]) < 1e-3 &&
		       fabs(e[1] - e[0]) > 0.1 && fabs(e[1] - e[2]) > 0.1,
	       "... R2's, neither the first pass's nor the last's");
	tap_is_str(lop_scell(t, "pe", 8, "", "passes"), "3", "passes: the row's passes counted");
	best = lop_scell(t, "pe", 8, "", "best");
	snprintf(col, sizeof(col), "%s_err",
		 strcmp(best, "LoP") == 0 ? "lop" : strcmp(best, "LoP-RTT") == 0 ? "lop_rtt" : "loggp");
	for (i = 0; i < NRUNS; i++) {
		double v = own[i] != NULL ? lop_cell(own[i], "pe", 8, "", col) : NAN;

		lo = fmin(lo, v);
		hi = fmax(hi, v);
	}
	tap_ok(best[0] != '\0' && fabs(lop_cell(t, "pe", 8, "", "best_err_min") - lo) < 1e-3 &&
		       fabs(lop_cell(t, "pe", 8, "", "best_err_max") - hi) < 1e-3,
	       "passes: best (%s)'s error over the passes %s..%s (own tables %.4g..%.4g)", best,
	       lop_scell(t, "pe", 8, "", "best_err_min"), lop_scell(t, "pe", 8, "", "best_err_max"),
	       lo, hi);
	tap_is_str(lop_scell(t, "hypercube", 8, "", "lop_rtt_us"), "",
		   "passes: a row predicted in one pass of three is not predicted");
	tap_ok(strncmp(lop_scell(t, "hypercube", 8, "", "lop_rtt_status"),
		       "no prediction: in 1 of 3 passes only (not modelled", 50) == 0,
	       "... and says why: '%s'", lop_scell(t, "hypercube", 8, "", "lop_rtt_status"));
	ibc_csv_table_free(t);
	for (i = 0; i < NRUNS; i++)
		ibc_csv_table_free(own[i]);

	snprintf(path, sizeof(path), "%s/stdout", dir);
	tap_is_int(lines_with(path, "over 3 passes"), 1, "passes: stdout names the passes");
	tap_is_int(lines_with(path, "pass R2: rows within +-20%"), 1, "... and scores each pass");
	tap_is_int(lines_with(path, "not modelled: 1 rows of runs that measured no logp kernels"), 1,
		   "... and counts the rows without kernels");
	tap_is_int(lines_with(path, "by the median of its errors over the passes: "), 1,
		   "... and scores the medians");
	/* the fan-in check over every pass: each pass's ratio, their median
	 * (R2's, neither the first nor the last) and how many are <= 1.1 */
	for (i = 0; i < NRUNS; i++) {
		t = table(dir, runs[i], "lop-fanin.csv");
		e[i] = NAN;
		for (r = 0; t != NULL && r + 1 < t->nrows; r++)
			if (strcmp(ibc_csv_str(t, r, "ranks"), "8") == 0)
				e[i] = ibc_csv_num(t, r, "model_over_best");
		ibc_csv_table_free(t);
	}
	tap_ok(fabs(e[0] - 1) < 1e-9 && fabs(e[1] - 1.5) < 1e-9 && fabs(e[2] - 2) < 1e-9,
	       "passes: RGM's fan-in chosen by the model costs 1, 1.5, 2x the best in R1, R2, R3 "
	       "(%g %g %g)", e[0], e[1], e[2]);
	tap_is_int(lines_with(path, "shm N=8 0 B: 1.000 1.500 2.000; median 1.500; within 1.1x in 1 "
				    "of 3 passes"),
		   1, "passes: stdout holds the fan-in check over every pass");
	t = table(dir, "", "lop-fanin.csv");
	tap_ok(t != NULL, "passes: lop-fanin.csv written");
	ibc_csv_table_free(t);
	/* the extrapolation: each model's median over the passes (R2's, the
	 * kernels 1, 2, 1.2x), neither the first pass's nor the last's */
	for (i = 0; i < NRUNS; i++) {
		t = table(dir, runs[i], "lop-extrapolation.csv");
		e[i] = t != NULL ? lop_cell(t, "pe", 1024, "", "lop_rtt_us") : NAN;
		ibc_csv_table_free(t);
	}
	t = table(dir, "", "lop-extrapolation.csv");
	tap_ok(t != NULL && isfinite(e[0]) && fabs(e[2] / e[0] - 1.2) < 1e-2 &&
		       fabs(e[1] / e[0] - 2) < 1e-2,
	       "passes: lop-extrapolation.csv written; pe at N = 1024 by LoP-RTT %g, %g, %g in the "
	       "passes", e[0], e[1], e[2]);
	tap_is_double_within(t != NULL ? lop_cell(t, "pe", 1024, "", "lop_rtt_us") : NAN,
			     med3(e[0], e[1], e[2]), 1e-3 * e[0],
			     "passes: ... the directory's is their median");
	tap_is_str(t != NULL ? lop_scell(t, "pe", 1024, "", "passes") : "", "3",
		   "... over 3 passes");
	ibc_csv_table_free(t);

	/* --fits DIR2: one set of fits predicts every row, as before */
	mo.fits_dir = dir;
	mo.out = NULL;
	tap_is_int(ibc_logp_fits_write(dir, "R3"), IBC_OK, "--fits: R3's fits into the directory");
	tap_is_int(ibc_logp_model_dir(&mo), IBC_OK, "--fits: one set of fits for every pass");
	t = table(dir, "", "lop-model.csv");
	pe_rows = 0;
	for (r = 0; t != NULL && r + 1 < t->nrows; r++)
		pe_rows += strcmp(ibc_csv_cell(t, r, "variant"), "pe") == 0;
	tap_is_int(pe_rows, 4, "--fits: every run's pe row predicted by them");
	ibc_csv_table_free(t);
	lop_dir_remove(dir);
	return tap_done();
}
