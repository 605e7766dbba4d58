/* The all-to-all suite's model (Sur et al.'s equations, alltoall_model.c)
 * writing its extrapolation from fitted parameters that make a time <= 0
 * (tw < 0: a fit over noisy or oversubscribed rows): no such time reaches
 * alltoall_extrapolation.csv as a number, the gain beside it stays empty,
 * and stdout says "no prediction" instead of the time; with parameters that
 * give times > 0, the cells hold them. */
#include "alltoall/alltoall_model.h"
#include "core/csv.h"
#include "core/status.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const cols[] = { "run_id", "suite", "variant", "impl", "xport", "ranks",
				    "bytes", "fanin", "p50_us", "mean_us", "oversub", "extra" };
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

/* dir/results.csv with one measured DE row of run R1 at N = 2 */
static void results_write(const char *dir)
{
	char path[256];
	struct ibc_csv_writer *w = NULL;
	const char *f[NCOLS] = { "R1", "alltoall", "de", "ibchar", "shm", "2", "4096", "",
				 "5.0", "5.0", "0", "" };

	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (ibc_csv_writer_open(path, cols, NCOLS, 0, &w) != IBC_OK)
		tap_bail_out("writing %s", path);
	ibc_csv_writer_row(w, f);
	ibc_csv_writer_close(w);
}

/* Runs the model's write with md into a fresh directory; of the
 * extrapolation's eq. 3 and 4 rows (24: p = 2..4096, buffers reused or
 * not), *neg: de/direct cells that hold a number <= 0, *empty: those left
 * empty, *gains: gain cells that hold a number; stdout's line for eq. 3 and
 * 4 at p = 1024 with buffers reused into said. */
static void run_case(const struct ibc_alltoall_model *md, const char *label, int *neg, int *empty,
		     int *gains, char *said, size_t cap)
{
	char dir[] = "/tmp/ibc-a2amXXXXXX", path[300], cmd[400], line[512];
	struct ibc_csv_table *t = NULL;
	FILE *out;
	size_t r;
	int fd, saved, rc;

	*neg = *empty = *gains = 0;
	said[0] = '\0';
	if (mkdtemp(dir) == NULL)
		tap_bail_out("mkdtemp");
	results_write(dir);
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
	while (out != NULL && fgets(line, sizeof(line), out) != NULL)
		if (strstr(line, "(eq. 3 and 4)") && strstr(line, "p = 1024, buffers reused"))
			snprintf(said, cap, "%s", line);
	if (out != NULL)
		fclose(out);
	snprintf(path, sizeof(path), "%s/alltoall_extrapolation.csv", dir);
	if (ibc_csv_read(path, &t) != IBC_OK)
		tap_bail_out("%s: %s unreadable", label, path);
	for (r = 0; r + 1 < t->nrows; r++) {
		const char *c[2] = { ibc_csv_cell(t, r, "direct_us"), ibc_csv_cell(t, r, "de_us") };
		int k;

		if (strcmp(ibc_csv_cell(t, r, "what"), "de-vs-direct-eq3-eq4") != 0)
			continue;
		for (k = 0; k < 2; k++) {
			if (c[k][0] == '\0')
				(*empty)++;
			else if (strtod(c[k], NULL) <= 0)
				(*neg)++;
		}
		*gains += ibc_csv_cell(t, r, "gain_pct")[0] != '\0';
	}
	ibc_csv_table_free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
}

int main(void)
{
	struct ibc_alltoall_model md = { .ranks = 2, .ts = 1.0, .tw = 0.001, .ts2 = 2.0,
					 .trndz = 5.0, .tcreg = 10.0, .twreg = 0.0001,
					 .ts_u = 1.0, .tw_u = 0.001, .tcopy = 0.0001, .valid = 1 };
	char said[512];
	int neg, empty, gains;

	tap_plan(8);
	run_case(&md, "times > 0", &neg, &empty, &gains, said, sizeof(said));
	tap_ok(neg == 0 && empty == 0 && gains == 24,
	       "times > 0: every de and direct cell of eq. 3 and 4 holds a time, every gain is "
	       "written (%d, %d, %d)", neg, empty, gains);
	tap_ok(strstr(said, " against ") != NULL && strstr(said, "a gain of") != NULL,
	       "... stdout gives eq. 3 and 4's times and gain at p = 1024 (%s)", said);

	/* eq. 4 (tw m (p - 1)) below 0 with buffers reused */
	md.tw = -0.001;
	run_case(&md, "tw < 0", &neg, &empty, &gains, said, sizeof(said));
	tap_is_int(neg, 0, "tw < 0: no de or direct cell holds a number <= 0");
	tap_ok(empty > 0, "... those are empty (%d)", empty);
	tap_ok(strstr(said, "no prediction") != NULL && strstr(said, "a gain of") == NULL,
	       "... stdout says no prediction at p = 1024, not a time and a gain (%s)", said);
	tap_ok(gains < 24, "... a gain is written only beside two times (%d of 24 rows)", gains);

	return tap_done();
}
