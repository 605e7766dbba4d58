/* The launch suite's pure pieces: the growth fit (log n against linear),
 * which a mutant that swaps the two models or drops a point fails, and the
 * stamp lines (round trip, whole lines under concurrent appends, a bad line
 * refused). */
#include "tap.h"
#include "core/status.h"
#include "launch/lsuite.h"
#include "launch/stamp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void growth(void)
{
	double x[] = { 1, 2, 4, 8, 16, 32 }, y[6], yl[6], noisy[6];
	struct ibc_lsuite_growth g;
	int i;

	for (i = 0; i < 6; i++) {
		y[i] = 3 + 2 * log2(x[i]);                 /* a tree: a + b log n */
		yl[i] = 1 + 0.5 * x[i];                    /* flat: a + b n */
		noisy[i] = y[i] * (1 + 0.02 * ((i % 2) ? 1 : -1));
	}
	tap_is_int(ibc_lsuite_growth_fit(x, y, 6, &g), IBC_OK, "fit of a log curve");
	tap_is_double_within(g.log_b, 2, 1e-9, "log slope 2 recovered");
	tap_is_double_within(g.log_a, 3, 1e-9, "log intercept 3 recovered");
	tap_ok(g.log_r2 > 0.999999 && g.lin_r2 < g.log_r2, "log curve: R2 log %.4f > R2 linear %.4f", g.log_r2,
	       g.lin_r2);
	tap_is_int(ibc_lsuite_growth_fit(x, yl, 6, &g), IBC_OK, "fit of a line");
	tap_is_double_within(g.lin_b, 0.5, 1e-9, "linear slope 0.5 recovered");
	tap_ok(g.lin_r2 > 0.999999 && g.log_r2 < 0.95, "line: R2 linear %.4f, R2 log %.4f", g.lin_r2, g.log_r2);
	tap_is_int(ibc_lsuite_growth_fit(x, noisy, 6, &g), IBC_OK, "fit with 2%% noise");
	tap_ok(g.log_r2 > g.lin_r2, "noisy log curve still judged log (%.4f > %.4f)", g.log_r2, g.lin_r2);
	tap_is_int(ibc_lsuite_growth_fit(x, y, 2, &g), IBC_ERR_INVAL, "two points: refused");
	x[1] = x[2] = x[0];
	tap_is_int(ibc_lsuite_growth_fit(x, y, 3, &g), IBC_ERR_INVAL, "one distinct n: refused");
	x[0] = 0;
	tap_is_int(ibc_lsuite_growth_fit(x, y, 6, &g), IBC_ERR_INVAL, "n = 0: refused");
}

static void stamps(void)
{
	char path[] = "/tmp/ibc-stamp-XXXXXX";
	struct ibc_launch_stamp s = { .rank = 3, .size = 8, .t_start = 1000, .t_init = 2000, .t_end = 3500,
				      .nstages = 3, .stage = { 10, 20, 30 } }, *got = NULL;
	size_t n = 0, i;
	int fd = mkstemp(path), k, ok, seen[64] = { 0 };
	FILE *f;

	close(fd);
	unlink(path);
	tap_is_int(ibc_launch_stamps_read(path, &got, &n), IBC_OK, "a missing stamp file is 0 stamps");
	tap_is_int((long long)n, 0, "0 stamps");
	tap_is_int(ibc_launch_stamp_write(path, &s), IBC_OK, "stamp written");
	tap_is_int(ibc_launch_stamps_read(path, &got, &n), IBC_OK, "stamp read back");
	tap_ok(n == 1 && got[0].rank == 3 && got[0].size == 8 && got[0].t_start == 1000 && got[0].t_init == 2000 &&
		       got[0].t_end == 3500 && got[0].nstages == 3 && got[0].stage[2] == 30,
	       "every field round-trips");
	free(got);
	unlink(path);
	/* 64 processes appending at once: 64 whole lines */
	for (k = 0; k < 64; k++) {
		if (fork() == 0) {
			struct ibc_launch_stamp c = { .rank = k, .size = 64, .t_start = k, .t_init = k, .t_end = k,
						      .nstages = IBC_LAUNCH_STAMP_STAGES };

			for (i = 0; i < IBC_LAUNCH_STAMP_STAGES; i++)
				c.stage[i] = 1000000000000LL + (long long)i;
			_exit(ibc_launch_stamp_write(path, &c) == IBC_OK ? 0 : 1);
		}
	}
	for (k = 0, ok = 1; k < 64; k++) {
		int st;

		wait(&st);
		ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	tap_ok(ok, "64 concurrent writers exit 0");
	tap_is_int(ibc_launch_stamps_read(path, &got, &n), IBC_OK, "64 concurrent lines parse");
	for (i = 0, ok = n == 64; i < n; i++)
		ok &= got[i].rank >= 0 && got[i].rank < 64 && !seen[got[i].rank]++ &&
		      got[i].nstages == IBC_LAUNCH_STAMP_STAGES && got[i].stage[63] == 1000000000063LL;
	tap_ok(ok, "64 distinct whole lines of 64 stages");
	free(got);
	f = fopen(path, "a");
	fputs("1 2 3 x 5 0\n", f);
	fclose(f);
	tap_is_int(ibc_launch_stamps_read(path, &got, &n), IBC_ERR_PROTO, "a garbled line is refused");
	f = fopen(path, "w");
	fputs("1 2 3 4 5 2 7\n", f);
	fclose(f);
	tap_is_int(ibc_launch_stamps_read(path, &got, &n), IBC_ERR_PROTO, "fewer stages than announced: refused");
	unlink(path);
}

int main(void)
{
	tap_plan_none();
	growth();
	stamps();
	return tap_done();
}
