/* The all-to-all suite's model (Sur et al.'s equations, alltoall_model.c)
 * writing its extrapolation from fitted parameters that make a time <= 0
 * (tw < 0: a fit over noisy or oversubscribed rows): no such time reaches
 * alltoall_extrapolation.csv as a number, the gain beside it stays empty,
 * and stdout says "no prediction" instead of the time; with parameters that
 * give times > 0, the cells hold them.  A run whose rows ran oversubscribed
 * (more ranks than PUs: parameters and rows time the scheduler) gets no model
 * rows and no extrapolation, and stdout says "not modelled (oversubscribed".
 * A measured row's model row carries its error against the row's loop
 * (err_pct: against the loop's median, else its mean, measured_as naming
 * which; err_mean_pct against the mean beside a median) only where the row
 * has one; a row the model gives 0 us gets no
 * model row, and stdout says "no prediction". */
#include "alltoall/alltoall_model.h"
#include "core/csv.h"
#include "core/status.h"
#include "tap.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const cols[] = { "run_id", "suite", "variant", "impl", "xport", "ranks",
				    "bytes", "fanin", "p50_us", "mean_us", "oversub", "extra" };
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

/* the measured row's extra: its back-to-back loop's mean and median */
static const char *row_extra = "paper_us=5.0;b2b_p50_us=4.0";

/* dir/results.csv with one measured DE row of run R1 at N = 2, its oversub
 * column oversub */
static void results_write(const char *dir, const char *oversub)
{
	char path[256];
	struct ibc_csv_writer *w = NULL;
	const char *f[NCOLS] = { "R1", "alltoall", "de", "ibchar", "shm", "2", "4096", "",
				 "5.0", "5.0", oversub, row_extra };

	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (ibc_csv_writer_open(path, cols, NCOLS, 0, &w) != IBC_OK)
		tap_bail_out("writing %s", path);
	ibc_csv_writer_row(w, f);
	ibc_csv_writer_close(w);
}

/* what a case left: of the extrapolation's eq. 3 and 4 rows (24: p =
 * 2..4096, buffers reused or not), neg: de/direct cells that hold a number
 * <= 0, empty: those left empty, gains: gain cells that hold a number,
 * rows: those rows; models: impl=model rows in results.csv; said: stdout's
 * line for eq. 3 and 4 at p = 1024 with buffers reused; nm: its "not
 * modelled" line; mx: the (last) model row's extra; np: its line for the
 * measured DE row when the model gives it no time */
struct seen {
	int neg, empty, gains, rows, models;
	char said[512], nm[512], mx[512], np[512];
};

static int count_models(const char *dir, char *mx, size_t cap)
{
	char path[300];
	struct ibc_csv_table *t = NULL;
	size_t r;
	int n = 0;

	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (ibc_csv_read(path, &t) != IBC_OK)
		tap_bail_out("%s unreadable", path);
	for (r = 0; r + 1 < t->nrows; r++)
		if (strcmp(ibc_csv_cell(t, r, "impl"), "model") == 0) {
			snprintf(mx, cap, "%s", ibc_csv_cell(t, r, "extra"));
			n++;
		}
	ibc_csv_table_free(t);
	return n;
}

/* Runs the model's write with md into a fresh directory whose row has
 * oversub; what it left into *s. */
static void run_case(const struct ibc_alltoall_model *md, const char *label, const char *oversub,
		     struct seen *s)
{
	char dir[] = "/tmp/ibc-a2amXXXXXX", path[300], cmd[400], line[512];
	struct ibc_csv_table *t = NULL;
	FILE *out;
	size_t r;
	int fd, saved, rc;

	memset(s, 0, sizeof(*s));
	if (mkdtemp(dir) == NULL)
		tap_bail_out("mkdtemp");
	results_write(dir, oversub);
	snprintf(path, sizeof(path), "%s/stdout", dir);
	fflush(stdout);
	saved = dup(1);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (saved < 0 || fd < 0 || dup2(fd, 1) < 0)
		tap_bail_out("redirecting stdout");
	close(fd);
	rc = ibc_alltoall_model_write(dir, md, 4096);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	tap_is_int(rc, IBC_OK, "%s: the model writes", label);
	out = fopen(path, "r");
	while (out != NULL && fgets(line, sizeof(line), out) != NULL) {
		line[strcspn(line, "\n")] = '\0'; /* quoted in one line of TAP */
		if (strstr(line, "(eq. 3 and 4)") && strstr(line, "p = 1024, buffers reused"))
			snprintf(s->said, sizeof(s->said), "%s", line);
		if (strstr(line, "not modelled"))
			snprintf(s->nm, sizeof(s->nm), "%s", line);
		if (strstr(line, "de N = 2, 4096 B: no prediction"))
			snprintf(s->np, sizeof(s->np), "%s", line);
	}
	if (out != NULL)
		fclose(out);
	s->models = count_models(dir, s->mx, sizeof(s->mx));
	snprintf(path, sizeof(path), "%s/alltoall_extrapolation.csv", dir);
	if (access(path, F_OK) == 0 && ibc_csv_read(path, &t) != IBC_OK)
		tap_bail_out("%s: %s unreadable", label, path);
	for (r = 0; t != NULL && r + 1 < t->nrows; r++) {
		const char *c[2] = { ibc_csv_cell(t, r, "direct_us"), ibc_csv_cell(t, r, "de_us") };
		int k;

		if (strcmp(ibc_csv_cell(t, r, "what"), "de-vs-direct-eq3-eq4") != 0)
			continue;
		s->rows++;
		for (k = 0; k < 2; k++) {
			if (c[k][0] == '\0')
				s->empty++;
			else if (strtod(c[k], NULL) <= 0)
				s->neg++;
		}
		s->gains += ibc_csv_cell(t, r, "gain_pct")[0] != '\0';
	}
	ibc_csv_table_free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
}

/* err_pct against median and err_mean_pct against mean in extra mx give
 * one prediction (to their one decimal) */
static int same_prediction(const char *mx, double median, double mean)
{
	const char *a = strstr(mx, ";err_pct="), *b = strstr(mx, "err_mean_pct=");
	double pa, pb;

	if (a == NULL || b == NULL)
		return 0;
	pa = median * (1 + strtod(a + 9, NULL) / 100);
	pb = mean * (1 + strtod(b + 13, NULL) / 100);
	return pa > 0 && fabs(pa - pb) < 0.01 * pa;
}

int main(void)
{
	/* the fitted parameters (eq. 3 and 4) and the measured curves the rows'
	 * predictions interpolate (ts + tw b) */
	struct ibc_alltoall_model md = { .ranks = 2, .ts = 1.0, .tw = 0.001, .ts2 = 2.0,
					 .trndz = 5.0, .tcreg = 10.0, .twreg = 0.0001,
					 .ts_u = 1.0, .tw_u = 0.001, .tcopy = 0.0001, .valid = 1,
					 .w_x = { 8, 65536 }, .w_y = { 1.008, 66.536 },
					 .u_y = { 1.008, 66.536 }, .r_y = { 1.008, 66.536 },
					 .c_x = { 8, 65536 }, .c_y = { 0.0008, 6.5536 },
					 .nw = 2, .nc = 2 };
	struct seen s;

	tap_plan(21);
	run_case(&md, "times > 0", "0", &s);
	tap_ok(s.neg == 0 && s.empty == 0 && s.gains == 24,
	       "times > 0: every de and direct cell of eq. 3 and 4 holds a time, every gain is "
	       "written (%d, %d, %d)", s.neg, s.empty, s.gains);
	tap_ok(strstr(s.said, " against ") != NULL && strstr(s.said, "a gain of") != NULL,
	       "... stdout gives eq. 3 and 4's times and gain at p = 1024 (%s)", s.said);
	tap_is_int(s.models, 1, "... the measured row has its model row");
	/* DE at 4096 B, N = 2: wtime(24) + utime(4096) + ctime(4096) */
	tap_ok(strstr(s.mx, "measured_b2b_us=4.0000;measured_as=b2b_p50_us;err_pct=") != NULL &&
		       strstr(s.mx, "literal_err_pct=") != NULL,
	       "... its error against the loop's median, named (%s)", s.mx);
	tap_ok(same_prediction(s.mx, 4.0, 5.0),
	       "... and against its mean (err_mean_pct), both errors of one prediction");

	/* a loop with only its mean: the error is against the mean, named so */
	row_extra = "paper_us=5.0";
	run_case(&md, "mean only", "0", &s);
	tap_ok(strstr(s.mx, "measured_b2b_us=5.0000;measured_as=paper_us;err_pct=") != NULL &&
		       strstr(s.mx, "err_mean_pct") == NULL,
	       "mean only: the error is against paper_us, named so, and not given twice (%s)", s.mx);

	/* a row without a back-to-back loop: no error against one, not 0 */
	row_extra = "";
	run_case(&md, "no loop", "0", &s);
	row_extra = "paper_us=5.0;b2b_p50_us=4.0";
	tap_ok(s.models == 1 && strstr(s.mx, "err_p50_pct=") != NULL &&
		       strstr(s.mx, "err_pct=") == NULL && strstr(s.mx, "measured_b2b_us") == NULL &&
		       strstr(s.mx, "literal_err_pct") == NULL,
	       "no loop: the model row has its error against p50 only (%s)", s.mx);

	/* no measured curves: the row's prediction is 0, no time */
	md.nw = md.nc = 0;
	run_case(&md, "no curves", "0", &s);
	md.nw = md.nc = 2;
	tap_ok(s.models == 0 && strstr(s.np, "a time <= 0 is not physical") != NULL,
	       "no curves: no model row (%d), stdout says no prediction (%s)", s.models, s.np);

	/* the same parameters, the row oversubscribed */
	run_case(&md, "oversubscribed", "1", &s);
	tap_is_int(s.models, 0, "oversubscribed: no model row");
	tap_is_int(s.rows, 0, "... no extrapolation row");
	tap_ok(strstr(s.nm, "not modelled (oversubscribed") != NULL && s.said[0] == '\0',
	       "... stdout says not modelled (oversubscribed), and gives no gain (%s)", s.nm);

	/* eq. 4 (tw m (p - 1)) below 0 with buffers reused */
	md.tw = -0.001;
	run_case(&md, "tw < 0", "0", &s);
	tap_is_int(s.neg, 0, "tw < 0: no de or direct cell holds a number <= 0");
	tap_ok(s.empty > 0, "... those are empty (%d)", s.empty);
	tap_ok(strstr(s.said, "no prediction") != NULL && strstr(s.said, "a gain of") == NULL,
	       "... stdout says no prediction at p = 1024, not a time and a gain (%s)", s.said);
	tap_ok(s.gains < 24, "... a gain is written only beside two times (%d of 24 rows)", s.gains);

	return tap_done();
}
