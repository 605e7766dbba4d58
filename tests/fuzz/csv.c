/* The CSV readers behind compare, report and model: the input is one file,
 * written as a results directory's results.csv, meta.csv, samples.csv,
 * fits.csv and logp-derived.csv; then the core reader (core/csv.c) and every
 * cell through its accessors, the model's fits loader (logp/logp_fits.c),
 * ibchar compare of the directory against itself (tools/compare.c) and the
 * results reader of ibchar report (tools/report.c, no plots). */
#include "fuzz.h"
#include "core/csv.h"
#include "logp/logp_fits.h"
#include "tools/compare.h"
#include "tools/report.h"

static void cells(const struct ibc_csv_table *t)
{
	char buf[64];
	size_t r, c;
	double d;

	for (r = 0; r < t->nrows && r < 64; r++)
		for (c = 0; c < t->ncols && c < 64; c++) {
			const char *col = t->cells[c], *v; /* the header row's names */

			(void)ibc_csv_column(t, col);
			(void)ibc_csv_num(t, r, col);
			(void)ibc_csv_num_strict(t, r, col, &d);
			v = ibc_csv_cell(t, r, col);
			if (v != NULL)
				(void)ibc_csv_extra_get(v, "n", buf, sizeof(buf));
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "results.csv", "meta.csv", "samples.csv", "fits.csv",
					      "logp-derived.csv" };
	static struct ibc_logp_params pr;
	struct ibc_csv_table *t = NULL;
	struct ibc_compare_opts co = { 0 };
	struct ibc_report_opts ro = { 0 };
	char path[128], out[160];
	FILE *saved_err = stderr, *saved_out = stdout;
	size_t i;

	fuzz_quiet();
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fuzz_file(names[i], data, size, path, sizeof(path));
	/* the tools print verdicts on stdout and problems on stderr */
	stdout = fopen("/dev/null", "w");
	stderr = fopen("/dev/null", "w");
	if (stdout == NULL || stderr == NULL)
		abort();
	if (ibc_csv_read(path, &t) == 0) {
		cells(t);
		ibc_csv_table_free(t);
	}
	memset(&pr, 0, sizeof(pr));
	(void)ibc_logp_params_load(fuzz_dir(), &pr);
	ibc_logp_params_free(&pr);
	co.base = co.new_dir = fuzz_dir();
	(void)ibc_harness_compare(&co);
	snprintf(out, sizeof(out), "%s/report.html", fuzz_dir());
	ro.dir = fuzz_dir();
	ro.out = out;
	ro.claims = "/nonexistent";
	ro.plot = 0;
	(void)ibc_harness_report(&ro);
	fclose(stdout);
	fclose(stderr);
	stdout = saved_out;
	stderr = saved_err;
	return 0;
}
