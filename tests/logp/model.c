/* The LoP closed loop on a synthetic results directory: kernel rows from
 * known functions are fitted (fits.csv, logp-derived.csv), and the model's
 * predictions of barrier and all-to-all rows equal the values worked out
 * by hand from §4.4's formulas and LogGP's; the outputs and the errors for
 * missing inputs. */
#include "alltoall/alltoall.h"
#include "barrier/barrier.h"
#include "core/csv.h"
#include "core/status.h"
#include "logp/logp_fits.h"
#include "logp/logp_model.h"
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

static struct ibc_csv_writer *w;
static const char *row_over = "0"; /* the oversub column of the next rows */
static const char *row_probe = "";  /* their probe_us ("": none measured) */

static void row(const char *suite, const char *variant, int n, size_t bytes, long fanin, double us,
		const char *extra)
{
	char f[8][32];
	const char *fp[NCOLS] = { "R1", suite, variant, "ibchar", "shm", f[0], f[1], f[2],
				  f[3], f[3], f[3], row_over, row_probe, extra };

	snprintf(f[0], 32, "%d", n);
	snprintf(f[1], 32, "%zu", bytes);
	if (fanin > 0)
		snprintf(f[2], 32, "%ld", fanin);
	else
		f[2][0] = '\0';
	snprintf(f[3], 32, "%.9g", us);
	ibc_csv_writer_row(w, fp);
}

/* A test's scratch directory (dir: a mkdtemp template) with results.csv
 * open for row() */
static void results_open(char *dir)
{
	char path[256];

	if (mkdtemp(dir) == NULL)
		tap_bail_out("mkdtemp");
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (ibc_csv_writer_open(path, cols, NCOLS, 0, &w) != IBC_OK)
		tap_bail_out("writing %s", path);
}

/* rm -rf dir (a test's scratch directory) */
static void dir_remove(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
}

/* the kernels' functions; size 4096 costs twice as much */
static double rtt_w(double p, double k) { return k * (2 + 4 / p); }
static double rtt_s(double p, double k) { return k * (3 + 4 / p); }
static double os_w(double p, double k) { return k * (0.1 + 0.2 / p); }
static double os_s(double p, double k) { return k * (0.2 + 0.2 / p); }
/* the copy kernels at 1 and 4096 B; a line between and past them */
static double cp_own(double s) { return 0.01 + 0.04 * (s - 1) / 4095; }
static double cp_peer(double s) { return 0.02 + 0.08 * (s - 1) / 4095; }
/* a post of a write into user memory (os-write-user) */
static double os_u(double p, double k) { return k * (1.0 + 0.2 / p); }
static int with_copies = 1;
/* > 0: rtt-write-1n's rows carry a back-to-back loop's median, b2b_scale
 * times their p50 */
static double b2b_scale;

static void kernels(void)
{
	static const size_t sizes[] = { 1, 4096 };
	size_t s;
	int p;

	for (s = 0; s < 2; s++) {
		double k = s ? 2 : 1, g = 0.5 + (double)(sizes[s] - 1) * 1e-4;

		for (p = 1; p <= 7; p++) {
			char b2b[64] = "";

			if (b2b_scale > 0)
				snprintf(b2b, sizeof(b2b), "paper_us=%.9g;b2b_p50_us=%.9g;b2b_n=1000",
					 rtt_w(p, k) * b2b_scale * 1.1, rtt_w(p, k) * b2b_scale);
			row("logp", "rtt-write-1n", 8, sizes[s], p, rtt_w(p, k), b2b);
			row("logp", "rtt-send-1n", 8, sizes[s], p, rtt_s(p, k), "");
			row("logp", "os-write", 8, sizes[s], p, os_w(p, k), "");
			row("logp", "os-send", 8, sizes[s], p, os_s(p, k), "");
			if (with_copies)
				row("logp", "os-write-user", 8, sizes[s], p, os_u(p, k), "");
		}
		/* LogGP: PRTT(1) = 2, g(s) = 0.5 + (s - 1) 1e-4, o = 0.3, d = 2 */
		row("logp", "loggp-prtt1", 8, sizes[s], 0, 2.0, "");
		row("logp", "loggp-prttn", 8, sizes[s], 0, 2.0 + 15 * g, "");
		row("logp", "loggp-prttd", 8, sizes[s], 0, 2.0 + 15 * (0.3 + 2.0), "d_us=2.000");
		if (!with_copies)
			continue;
		row("logp", "copy", 8, sizes[s], 0, cp_own((double)sizes[s]), "kernel=copy;from=own;p=1");
		row("logp", "copy-peer", 8, sizes[s], 0, cp_peer((double)sizes[s]),
		    "kernel=copy;from=peer;p=1");
	}
}

static double cell(const struct ibc_csv_table *t, const char *variant, int n, const char *fanin,
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

static const char *scell(const struct ibc_csv_table *t, const char *variant, int n,
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

/* the copy term per algorithm, N = 8, 4 KiB blocks (the kernels' size) */
static void copies_check(const struct ibc_csv_table *t)
{
	double hcube = 40 * cp_own(4096) + 3 * (cp_own(16384) + cp_peer(16384));
	/* two rounds of signals to 7 peers; the 7 blocks posted into user memory */
	double de_rtt = 2 * 7 * rtt_w(7, 1) / 2 + 7 * os_u(1, 2) + cp_own(4096);
	/* per peer: RTS, CTS, FIN (sends, k = 1), the block into user memory */
	double direct_rtt = 7 * (3 * rtt_s(1, 1) / 2 + os_u(1, 2)) + cp_own(4096);

	tap_is_double_within(cell(t, "hrwg", 8, "", "copy_us"), 9 * 0.05 + 7 * 0.10, 1e-6,
			     "copies hrwg N=8: 8 blocks staged, its own out, 7 received out = 1.15");
	tap_is_double_within(cell(t, "hypercube", 8, "", "copy_us"), hcube, 1e-3 * hcube,
			     "copies hypercube N=8: 40 own blocks, 3 eager 16 KiB messages in and "
			     "out = %.4f", hcube);
	tap_is_double_within(cell(t, "direct", 8, "", "copy_us"), 0.05, 1e-6,
			     "copies direct: its own block only (rendezvous, no eager copies)");
	tap_is_double_within(cell(t, "de", 8, "", "copy_us"), 0.05, 1e-6,
			     "copies de: its own block only (zero copy)");
	tap_is_double_within(cell(t, "de", 8, "", "lop_rtt_us"), de_rtt, 1e-3,
			     "LoP-RTT de N=8: the addresses' round, the flags' round, 7 writes into user "
			     "memory, its copy = %.4f", de_rtt);
	tap_is_double_within(cell(t, "de", 8, "", "user_write_us"), 7 * os_u(1, 2), 1e-6,
			     "user writes de N=8: 7 posts of os-write-user at 4 KiB");
	tap_is_double_within(cell(t, "direct", 8, "", "lop_rtt_us"), direct_rtt, 1e-3,
			     "LoP-RTT direct N=8: 7 x (RTS, CTS, FIN, a write into user memory), its "
			     "copy = %.4f", direct_rtt);
	tap_is_double_within(cell(t, "hrwg", 8, "", "user_write_us"), 0, 1e-12,
			     "user writes hrwg: none (its buffer is mr_alloc'd)");
	tap_is_double_within(cell(t, "rds", 8, "", "copy_us"), 0, 1e-12, "copies rds: none");
}

/* The rows written (results.csv closed), their fits, then the model over
 * dir, its stdout into dir/stdout; that file open to read (NULL if it
 * cannot be) */
static FILE *model_said(struct ibc_logp_model_opts *mo, const char *dir, const char *label)
{
	char path[300];
	FILE *out;

	ibc_csv_writer_close(w);
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
static struct ibc_csv_table *model_table(struct ibc_logp_model_opts *mo, const char *dir,
					 const char *label, const char *says, int *said)
{
	char path[300], line[1024];
	struct ibc_csv_table *t = NULL;
	FILE *out = model_said(mo, dir, label);

	while (out != NULL && fgets(line, sizeof(line), out) != NULL)
		*said += strstr(line, says) != NULL;
	if (out != NULL)
		fclose(out);
	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	if (ibc_csv_read(path, &t) != IBC_OK)
		tap_bail_out("%s: %s unreadable", label, path);
	return t;
}

/* A run without the copy kernels (before them): the barriers still
 * predicted; an algorithm that copies is "no prediction" with the reason,
 * no number, and stdout says the copy term is absent. */
static void test_nocopy(const struct ibc_logp_model_opts *base)
{
	struct ibc_logp_model_opts mo = *base;
	char dir[] = "/tmp/ibc-lopncXXXXXX", path[256], line[1024];
	static const char *const st[] = { "lop_status", "lop_rtt_status", "loggp_status" };
	static const char *const us[] = { "lop_us", "lop_rtt_us", "loggp_us" };
	struct ibc_csv_table *t = NULL;
	int said = 0, k;
	FILE *out;

	results_open(dir);
	with_copies = 0;
	kernels();
	with_copies = 1;
	row("barrier", "rds", 8, 0, 0, 10.0, "");
	row("alltoall", "hrwg", 8, 4096, 0, 10.0, "");
	row("alltoall", "de", 8, 4096, 0, 10.0, "");
	out = model_said(&mo, dir, "no copy rows");
	while (out != NULL && fgets(line, sizeof(line), out) != NULL)
		said += strstr(line, "copy term: absent") != NULL ||
			strstr(line, "user-write term: absent") != NULL ||
			strstr(line, "1 of 1 (and 2 rows no model predicts: no prediction)") != NULL;
	if (out != NULL)
		fclose(out);
	tap_is_int(said, 3, "no copy rows: stdout says the copy and user-write terms are absent, "
			    "and counts the rows without a prediction");
	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	if (ibc_csv_read(path, &t) == IBC_OK) {
		tap_ok(strtod(scell(t, "rds", 8, "", "lop_rtt_us"), NULL) > 0,
		       "no copy rows: rds (no copies) still predicted");
		for (k = 0; k < 3; k++) {
			tap_is_str(scell(t, "hrwg", 8, "", us[k]), "", "no copy rows: hrwg %s empty", us[k]);
			tap_ok(strncmp(scell(t, "hrwg", 8, "", st[k]), "no prediction: no copy rows", 27) == 0,
			       "... %s '%s'", st[k], scell(t, "hrwg", 8, "", st[k]));
		}
		tap_is_str(scell(t, "hrwg", 8, "", "copy_us"), "", "... copy_us empty");
		tap_is_str(scell(t, "de", 8, "", "lop_rtt_us"), "", "no copy rows: de no number");
		tap_ok(strncmp(scell(t, "de", 8, "", "lop_rtt_status"), "no prediction: no ", 18) == 0,
		       "... '%s'", scell(t, "de", 8, "", "lop_rtt_status"));
		ibc_csv_table_free(t);
	} else {
		tap_ok(0, "no copy rows: lop-model.csv written");
	}
	dir_remove(dir);
}

static int a2a_rounds(const char *v, int n, long fanin, struct ibc_pattern_round *r, int cap)
{
	(void)fanin;
	return ibc_alltoall_alg_rounds(v, n, r, cap);
}

/* logp-derived.csv of a run whose o_s exceeds RTT/2: no value < 0; L
 * and L_list empty and "not physical" with both sides; LogGP's g < 0
 * written as 0, "held at 0" */
static void derived_check(const char *dir)
{
	struct ibc_csv_table *t = NULL;
	char path[256];
	int neg = 0, marked = 0, bad = 0, held = 0;
	size_t r;

	snprintf(path, sizeof(path), "%s/logp-derived.csv", dir);
	if (ibc_csv_read(path, &t) != IBC_OK) {
		tap_ok(0, "negative: logp-derived.csv readable");
		return;
	}
	for (r = 0; r + 1 < t->nrows; r++) {
		const char *q = ibc_csv_cell(t, r, "quantity"), *v = ibc_csv_cell(t, r, "value_us");
		const char *st = ibc_csv_cell(t, r, "status");

		neg += strtod(v, NULL) < 0;
		if (q[0] == 'L') {
			int m = strncmp(st, "not physical: o_s(p) + o_s(1) = ", 32) == 0 ||
				strncmp(st, "not physical: p o_s(p) + o_s(1) = ", 34) == 0;

			marked += m && v[0] == '\0' && strstr(st, "exceeds RTT(p)/2 = ") != NULL;
			bad += !m && strcmp(st, "ok") != 0;
		}
		held += strcmp(q, "loggp_g") == 0 && strcmp(v, "0") == 0 &&
			strncmp(st, "held at 0: ", 11) == 0;
	}
	tap_is_int(neg, 0, "derived: no value < 0 (%zu rows)", t->nrows - 1);
	tap_ok(marked > 0 && bad == 0, "derived: L < 0 empty, 'not physical' with why (%d rows)", marked);
	tap_is_int(held, 1, "derived: LogGP's g < 0 written as 0, 'held at 0'");
	ibc_csv_table_free(t);
}

/* A post overhead larger than half the RTT: §4.4's L(k) < 0, so LoP's
 * arithmetic goes negative.  No negative number reaches lop-model.csv,
 * lop-extrapolation.csv, lop-fanin.csv or stdout: "no prediction" and why.
 * An oversubscribed row is not modelled; --pus lets it be. */
static void test_negative(const struct ibc_logp_model_opts *base)
{
	struct ibc_logp_model_opts mo = *base;
	char dir[] = "/tmp/ibc-lopnegXXXXXX", path[256], line[1024];
	struct ibc_csv_table *t = NULL;
	FILE *out;
	int p, neg = 0, nopred = 0, rows = 0;
	size_t r;

	results_open(dir);
	for (p = 1; p <= 7; p++) {
		row("logp", "rtt-write-1n", 8, 1, p, rtt_w(p, 1), "");
		row("logp", "rtt-send-1n", 8, 1, p, rtt_s(p, 1), "");
		row("logp", "os-write", 8, 1, p, 5 + 0.2 / p, "");
		row("logp", "os-send", 8, 1, p, 5 + 0.2 / p, "");
	}
	/* PRTT(n) below PRTT(1): Netgauge's g < 0 */
	row("logp", "loggp-prtt1", 8, 1, 0, 2.0, "");
	row("logp", "loggp-prttn", 8, 1, 0, 1.7, "");
	row("logp", "loggp-prttd", 8, 1, 0, 2.0 + 15 * (0.3 + 2.0), "d_us=2.000");
	row("barrier", "rds", 8, 0, 0, 10.0, "");
	row("barrier", "rgm", 8, 0, 3, 10.0, "");
	row("barrier", "rgm", 8, 0, 7, 12.0, "");
	row_over = "1";
	row("barrier", "pe", 16, 0, 0, 10.0, "");
	row_over = "0";
	out = model_said(&mo, dir, "negative");
	derived_check(dir);
	while (out != NULL && fgets(line, sizeof(line), out) != NULL) {
		char *s = line;

		/* the extrapolation's cells (a|b|c) hold no negative number, and
		 * LoP's arithmetic for rds (3 (RTT(1)/2 - o(1)) = -6.6) is not printed */
		while (strchr(line, '|') != NULL && (s = strchr(s, '-')) != NULL) {
			neg += s[1] >= '0' && s[1] <= '9';
			s++;
		}
		neg += strstr(line, "-6.6") != NULL;
		nopred += strstr(line, "LoP: no prediction (<= 0") != NULL;
	}
	if (out != NULL)
		fclose(out);
	tap_ok(nopred >= 2, "negative: stdout says 'LoP: no prediction (<= 0 ...)' (%d lines)", nopred);

	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	if (ibc_csv_read(path, &t) == IBC_OK) {
		tap_is_str(scell(t, "rds", 8, "", "lop_us"), "", "negative: rds LoP not printed");
		tap_ok(strncmp(scell(t, "rds", 8, "", "lop_status"), "no prediction: <= 0", 19) == 0,
		       "negative: ... lop_status '%s'", scell(t, "rds", 8, "", "lop_status"));
		tap_ok(strtod(scell(t, "rds", 8, "", "lop_rtt_us"), NULL) > 0,
		       "negative: LoP-RTT still predicts (%s)", scell(t, "rds", 8, "", "lop_rtt_us"));
		tap_ok(strstr(scell(t, "rds", 8, "", "note"), "loggp<0->0") != NULL,
		       "negative: LogGP's g held at 0 noted (%s)", scell(t, "rds", 8, "", "note"));
		tap_is_str(scell(t, "pe", 16, "", "lop_status"), "not modelled (oversubscribed)",
			   "oversubscribed row: not modelled");
		tap_is_str(scell(t, "pe", 16, "", "lop_rtt_us"), "", "... no number");
		for (r = 0; r + 1 < t->nrows; r++) {
			neg += strtod(ibc_csv_cell(t, r, "lop_us"), NULL) < 0;
			neg += strtod(ibc_csv_cell(t, r, "lop_rtt_us"), NULL) < 0;
			rows++;
		}
		ibc_csv_table_free(t);
	}
	snprintf(path, sizeof(path), "%s/lop-extrapolation.csv", dir);
	t = NULL;
	if (ibc_csv_read(path, &t) == IBC_OK) {
		size_t empty = 0;

		for (r = 0; r + 1 < t->nrows; r++) {
			neg += strtod(ibc_csv_cell(t, r, "lop_us"), NULL) < 0;
			empty += ibc_csv_cell(t, r, "lop_us")[0] == '\0' &&
				 strncmp(ibc_csv_cell(t, r, "lop_status"), "no prediction", 13) == 0;
		}
		tap_ok(t->nrows > 1 && empty == t->nrows - 1,
		       "negative: every extrapolated LoP is 'no prediction' (%zu of %zu)", empty,
		       t->nrows - 1);
		ibc_csv_table_free(t);
	}
	snprintf(path, sizeof(path), "%s/lop-fanin.csv", dir);
	t = NULL;
	if (ibc_csv_read(path, &t) == IBC_OK) {
		for (r = 0; r + 1 < t->nrows; r++) {
			neg += strtod(ibc_csv_cell(t, r, "lop_us"), NULL) < 0;
			neg += ibc_csv_cell(t, r, "lop_best_fanin")[0] != '\0';
		}
		ibc_csv_table_free(t);
	}
	tap_is_int(neg, 0, "negative: no negative time and no LoP fan-in anywhere (%d rows)", rows);

	/* --pus 16: the row measured on 16 ranks is modelled, not scored */
	mo.out = NULL;
	mo.pus = 16;
	tap_is_int(ibc_logp_model_run(&mo), IBC_OK, "--pus 16: model run");
	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	t = NULL;
	if (ibc_csv_read(path, &t) == IBC_OK) {
		tap_ok(strtod(scell(t, "pe", 16, "", "lop_rtt_us"), NULL) > 0 &&
		       scell(t, "pe", 16, "", "lop_rtt_err")[0] == '\0',
		       "--pus 16: the N = 16 row predicted (%s us), no error against an oversubscribed "
		       "measurement", scell(t, "pe", 16, "", "lop_rtt_us"));
		ibc_csv_table_free(t);
	}
	dir_remove(dir);
}

/* rtt-pool-1n: the two-sided path through the receive pool, dearer than
 * the bare send */
static double rtt_q(double p, double k) { return k * (5 + 4 / p); }

/* A run with rtt-pool-1n rows: the send rounds (PE, DS, the two-sided
 * all-to-alls) are costed by it, the write rounds and RGM's multicast
 * release (no pool) are not; stdout says which kernel the send rounds used. */
static void test_pool(const struct ibc_logp_model_opts *base)
{
	struct ibc_logp_model_opts mo = *base;
	char dir[] = "/tmp/ibc-loppXXXXXX", path[256], line[1024];
	struct ibc_csv_table *t = NULL;
	size_t s;
	int p, said = 0;
	FILE *out;

	results_open(dir);
	kernels();
	for (s = 0; s < 2; s++)
		for (p = 1; p <= 7; p++)
			row("logp", "rtt-pool-1n", 8, s ? 4096 : 1, p, rtt_q(p, s ? 2 : 1), "");
	row("barrier", "pe", 8, 0, 0, 10.0, "");
	row("barrier", "rds", 8, 0, 0, 10.0, "");
	row("barrier", "rgm", 8, 0, 7, 10.0, "");
	out = model_said(&mo, dir, "pool");
	while (out != NULL && fgets(line, sizeof(line), out) != NULL)
		said += strstr(line, "send rounds: costed by rtt-pool-1n") != NULL;
	if (out != NULL)
		fclose(out);
	tap_is_int(said, 1, "pool: stdout says the send rounds are costed by rtt-pool-1n");
	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	if (ibc_csv_read(path, &t) == IBC_OK) {
		tap_is_double_within(cell(t, "pe", 8, "", "lop_rtt_us"), 3 * rtt_q(1, 1) / 2, 1e-3,
				     "pool: LoP-RTT pe N=8: 3 RTT_pool(1)/2");
		tap_is_double_within(cell(t, "pe", 8, "", "lop_us"), 3 * (rtt_q(1, 1) / 2 - os_s(1, 1)),
				     1e-3, "pool: LoP pe N=8: 3 (RTT_pool(1)/2 - o_s(1))");
		tap_is_double_within(cell(t, "rds", 8, "", "lop_rtt_us"), 3 * rtt_w(1, 1) / 2, 1e-3,
				     "pool: LoP-RTT rds: its write rounds as before");
		tap_is_double_within(cell(t, "rgm", 8, "7", "lop_rtt_us"),
				     7 * rtt_w(7, 1) / 2 + rtt_s(1, 1) / 2, 1e-3,
				     "pool: LoP-RTT rgm l=7: the multicast release by the bare send");
		tap_ok(strstr(scell(t, "pe", 8, "", "note"), "send~raw") == NULL,
		       "pool: pe's note does not say send~raw ('%s')", scell(t, "pe", 8, "", "note"));
		ibc_csv_table_free(t);
	} else {
		tap_ok(0, "pool: lop-model.csv readable");
	}
	dir_remove(dir);
}

/* rtt-mcast: a multicast datagram from rank 0 and rank 1's write back
 * (p = 1, extra p=1); RGM's release is costed by it less half of
 * rtt-write-1n at p = 1 (6): the datagram's one way.  Run with rtt-mcast =
 * 4 (one way 1) and with 2.5 (one way -0.5: no prediction, with the
 * reason); stdout says how the release was costed. */
static void test_mcast(const struct ibc_logp_model_opts *base)
{
	static const double rtt_m[] = { 4.0, 2.5 };
	struct ibc_logp_model_opts mo = *base;
	struct ibc_csv_table *t;
	char label[32];
	int said, i;

	for (i = 0; i < 2; i++) {
		char dir[] = "/tmp/ibc-lopmXXXXXX";

		results_open(dir);
		kernels();
		row("logp", "rtt-mcast", 8, 1, 0, rtt_m[i], "kernel=rtt-mcast;op=mcast;p=1");
		row("barrier", "rgm", 8, 0, 7, 10.0, "");
		row("barrier", "rds", 8, 0, 0, 10.0, "");
		snprintf(label, sizeof(label), "mcast %.1f", rtt_m[i]);
		said = 0;
		t = model_table(&mo, dir, label, "multicast release: costed by rtt-mcast", &said);
		tap_is_int(said, 1, "%s: stdout says the release is costed by rtt-mcast", label);
		tap_ok(strstr(scell(t, "rgm", 8, "7", "note"), "mcast~send") == NULL,
		       "%s: rgm's note does not say mcast~send ('%s')", label,
		       scell(t, "rgm", 8, "7", "note"));
		tap_is_double_within(cell(t, "rds", 8, "", "lop_rtt_us"), 3 * rtt_w(1, 1) / 2, 1e-3,
				     "%s: LoP-RTT rds: no multicast, as before", label);
		if (i == 0) {
			tap_is_double_within(cell(t, "rgm", 8, "7", "lop_rtt_us"),
					     7 * rtt_w(7, 1) / 2 + (rtt_m[i] - rtt_w(1, 1) / 2), 1e-3,
					     "%s: LoP-RTT rgm l=7: the gather, then RTT_mcast - "
					     "RTT_write(1)/2", label);
			tap_is_double_within(cell(t, "rgm", 8, "7", "lop_us"),
					     7 * rtt_w(7, 1) / 2 - 6 * os_w(7, 1) - 7 * os_w(1, 1) +
						     (rtt_m[i] - rtt_w(1, 1) / 2) - os_s(1, 1),
					     1e-3, "%s: LoP rgm l=7: the release's one way less o_s(1)",
					     label);
		} else {
			tap_ok(scell(t, "rgm", 8, "7", "lop_rtt_us")[0] == '\0' &&
				       scell(t, "rgm", 8, "7", "lop_us")[0] == '\0',
			       "%s: rgm: no LoP or LoP-RTT number ('%s', '%s')", label,
			       scell(t, "rgm", 8, "7", "lop_rtt_us"), scell(t, "rgm", 8, "7", "lop_us"));
			tap_ok(strstr(scell(t, "rgm", 8, "7", "lop_rtt_status"), "multicast") != NULL,
			       "%s: rgm's LoP-RTT status says why ('%s')", label,
			       scell(t, "rgm", 8, "7", "lop_rtt_status"));
		}
		ibc_csv_table_free(t);
		dir_remove(dir);
	}
}

/* The exchange kernels: xchg-write, a pair writing each other at once (1.5
 * at both sizes, p = 1), where half of rtt-write-1n's round trip at p = 1
 * is 3; xchg-pool, a pair sending each other at once (2.5), where half of
 * the send round trip is 3.5 (rtt-send-1n: no rtt-pool-1n rows here).  Run
 * without their rows, with xchg-write's, and with both: with a kernel's
 * rows, LoP-RTT costs each exchange round of signals of its kind by it --
 * RDS and DS at N = 8, three rounds; RPE and PE at N = 6, their two
 * exchanges but not the extra ranks' fold-in and release, which stay half a
 * round trip -- and the note xchg~half goes; LoP as printed does not move;
 * stdout says which. */
static void test_xchg(const struct ibc_logp_model_opts *base)
{
	static const char *const says[] = { "exchange rounds of writes: costed in LoP-RTT as half",
					    "exchange rounds of writes: costed in LoP-RTT by xchg-write",
					    "exchange rounds of sends: costed in LoP-RTT by xchg-pool" };
	static const char *const lab[] = { "no xchg", "xchg-write", "xchg both" };
	struct ibc_logp_model_opts mo = *base;
	struct ibc_csv_table *t;
	double rds[3], rds_lop[3], ds_lop[3], rpe[3], ds[3], pe[3], x = 1.5, y = 2.5;
	double half = rtt_w(1, 1) / 2, shalf = rtt_s(1, 1) / 2;
	char note[3][128], dsnote[3][128];
	int d, said[3] = { 0, 0, 0 };

	for (d = 0; d < 3; d++) {
		char dir[] = "/tmp/ibc-lopxXXXXXX";

		results_open(dir);
		kernels();
		if (d >= 1) {
			row("logp", "xchg-write", 8, 1, 0, x, "kernel=xchg;op=write;p=1;pairs=4");
			row("logp", "xchg-write", 8, 4096, 0, x, "kernel=xchg;op=write;p=1;pairs=4");
		}
		if (d == 2) {
			row("logp", "xchg-pool", 8, 1, 0, y, "kernel=xchg;op=send;p=1;pairs=4");
			row("logp", "xchg-pool", 8, 4096, 0, y, "kernel=xchg;op=send;p=1;pairs=4");
		}
		row("barrier", "rds", 8, 0, 0, 10.0, "");
		row("barrier", "rpe", 6, 0, 0, 10.0, "");
		row("barrier", "ds", 8, 0, 0, 10.0, "");
		row("barrier", "pe", 6, 0, 0, 10.0, "");
		t = model_table(&mo, dir, lab[d], says[d], &said[d]);
		rds[d] = cell(t, "rds", 8, "", "lop_rtt_us");
		rds_lop[d] = cell(t, "rds", 8, "", "lop_us");
		ds_lop[d] = cell(t, "ds", 8, "", "lop_us");
		rpe[d] = cell(t, "rpe", 6, "", "lop_rtt_us");
		ds[d] = cell(t, "ds", 8, "", "lop_rtt_us");
		pe[d] = cell(t, "pe", 6, "", "lop_rtt_us");
		snprintf(note[d], sizeof(note[d]), "%s", scell(t, "rds", 8, "", "note"));
		snprintf(dsnote[d], sizeof(dsnote[d]), "%s", scell(t, "ds", 8, "", "note"));
		ibc_csv_table_free(t);
		dir_remove(dir);
	}
	tap_ok(said[0] == 1 && said[1] == 1 && said[2] == 1,
	       "xchg: stdout says how the exchange rounds are costed: by xchg-write and xchg-pool "
	       "where their rows are, else as half a round trip");
	tap_is_double_within(rds[0], 3 * half, 1e-6, "xchg: LoP-RTT rds N=8 without its rows: 3 x "
			     "RTT_write(1)/2 = %.4f", rds[0]);
	tap_is_double_within(rds[1], 3 * x, 1e-6, "xchg: ... with them: 3 exchanges of %.1f = %.4f",
			     x, rds[1]);
	tap_is_double_within(rpe[1], 2 * x + 2 * half, 1e-6,
			     "xchg: LoP-RTT rpe N=6: 2 exchanges, the fold-in and release half a "
			     "round trip each = %.4f (without: %.4f)", rpe[1], rpe[0]);
	tap_ok(ds[1] == ds[0] && fabs(ds[0] - 3 * shalf) < 1e-6,
	       "xchg: ds's send rounds do not move with xchg-write's rows (%.4f = 3 x %.1f)", ds[1],
	       shalf);
	tap_is_double_within(ds[2], 3 * y, 1e-6, "xchg: LoP-RTT ds N=8 with xchg-pool's rows: 3 "
			     "exchanges of %.1f = %.4f", y, ds[2]);
	tap_is_double_within(pe[2], 2 * y + 2 * shalf, 1e-6,
			     "xchg: LoP-RTT pe N=6: 2 exchanges, the fold-in and release half a "
			     "send round trip each = %.4f (without: %.4f)", pe[2], pe[0]);
	tap_ok(rds_lop[1] == rds_lop[0] && rds_lop[2] == rds_lop[0] && ds_lop[2] == ds_lop[0],
	       "xchg: LoP as printed does not move (rds %.4f, ds %.4f)", rds_lop[2], ds_lop[2]);
	tap_ok(strstr(note[0], "xchg~half") != NULL && strstr(note[1], "xchg~half") == NULL &&
		       strstr(dsnote[1], "xchg~half") != NULL && strstr(dsnote[2], "xchg~half") == NULL,
	       "xchg: the note xchg~half where an exchange's kernel has no rows (rds '%s', ds '%s'), "
	       "not where it has (rds '%s', ds '%s')", note[0], dsnote[1], note[1], dsnote[2]);
}

/* fits.csv's rows of stat "b2b": how many for variant (at any size) */
static int b2b_fits(const char *dir, const char *variant)
{
	struct ibc_csv_table *t = NULL;
	char path[300];
	int n = 0;
	size_t r;

	snprintf(path, sizeof(path), "%s/fits.csv", dir);
	if (ibc_csv_read(path, &t) != IBC_OK)
		return -1;
	for (r = 0; r + 1 < t->nrows; r++)
		n += strcmp(ibc_csv_cell(t, r, "stat"), "b2b") == 0 &&
		     strcmp(ibc_csv_cell(t, r, "variant"), variant) == 0 &&
		     strcmp(ibc_csv_cell(t, r, "usable"), "1") == 0;
	ibc_csv_table_free(t);
	return n;
}

/* The round trips from the kernels' back-to-back loops: rtt-write-1n's
 * rows carry b2b_p50_us, half their p50, and rtt-mcast's 3 (p50 4).  With
 * opts.b2b LoP-RTT costs the write rounds and the release by them (note
 * rtt~b2b), the send rounds (no loop) by p50 as before; without, by p50
 * alone; LoP as printed takes p50 either way (its overheads are single
 * calls).  fits.csv fits the loop's medians (stat b2b) of rtt-write-1n, and
 * of no kernel without a loop. */
static void test_b2b(const struct ibc_logp_model_opts *base)
{
	struct ibc_logp_model_opts mo = *base;
	int b;

	for (b = 0; b < 2; b++) {
		char dir[] = "/tmp/ibc-lopbXXXXXX", label[16];
		struct ibc_csv_table *t;
		double h = b ? 0.5 : 1.0, mc = b ? 3.0 : 4.0;
		int said = 0;

		snprintf(label, sizeof(label), "b2b %s", b ? "on" : "off");
		results_open(dir);
		b2b_scale = 0.5;
		kernels();
		b2b_scale = 0;
		row("logp", "rtt-mcast", 8, 1, 0, 4.0,
		    "paper_us=3.1;b2b_p50_us=3;b2b_n=1000;kernel=rtt-mcast;op=mcast;p=1");
		row("barrier", "rds", 8, 0, 0, 10.0, "");
		row("barrier", "rgm", 8, 0, 7, 10.0, "");
		row("barrier", "pe", 8, 0, 0, 10.0, "");
		mo.b2b = b;
		t = model_table(&mo, dir, label, b ? "round trips: the kernels' back-to-back loops"
						   : "round trips: the kernels' p50", &said);
		tap_is_int(said, 1, "%s: stdout says what the round trips cost", label);
		tap_ok(b2b_fits(dir, "rtt-write-1n") == 2 && b2b_fits(dir, "os-write") == 0 &&
			       b2b_fits(dir, "rtt-send-1n") == 0,
		       "%s: fits.csv fits rtt-write-1n's loop medians at both sizes, no kernel's "
		       "without a loop", label);
		tap_is_double_within(cell(t, "rds", 8, "", "lop_rtt_us"), 3 * h * rtt_w(1, 1) / 2, 1e-3,
				     "%s: LoP-RTT rds: 3 RTT(1)/2, RTT %s", label,
				     b ? "the loop's median" : "p50");
		tap_is_double_within(cell(t, "rgm", 8, "7", "lop_rtt_us"),
				     7 * h * rtt_w(7, 1) / 2 + (mc - h * rtt_w(1, 1) / 2), 1e-3,
				     "%s: LoP-RTT rgm l=7: the gather and the release, both %s", label,
				     b ? "from the loops" : "p50");
		tap_is_double_within(cell(t, "pe", 8, "", "lop_rtt_us"), 3 * rtt_s(1, 1) / 2, 1e-3,
				     "%s: LoP-RTT pe: the send rounds by p50 (no loop)", label);
		tap_is_double_within(cell(t, "rds", 8, "", "lop_us"), 3 * (rtt_w(1, 1) / 2 - os_w(1, 1)),
				     1e-3, "%s: LoP rds as printed: RTT by single calls, as its o_s", label);
		tap_ok((strstr(scell(t, "rds", 8, "", "note"), "rtt~b2b") != NULL) == b &&
			       strstr(scell(t, "pe", 8, "", "note"), "rtt~b2b") == NULL,
		       "%s: note rtt~b2b on the rows costed by a loop ('%s', pe '%s')", label,
		       scell(t, "rds", 8, "", "note"), scell(t, "pe", 8, "", "note"));
		ibc_csv_table_free(t);
		dir_remove(dir);
	}
}

/* What a row is measured by: its loop's median (b2b_p50_us), or with
 * meas_mean its mean (paper_us); a row with one of them by that one, a row
 * with neither by p50_us.  The error's base follows, and stdout counts the
 * rows within +-20% by the other statistic as well. */
static void test_measured(const struct ibc_logp_model_opts *base)
{
	struct ibc_logp_model_opts mo = *base;
	int mean;

	for (mean = 0; mean < 2; mean++) {
		char dir[] = "/tmp/ibc-lopmXXXXXX", label[32];
		struct ibc_csv_table *t;
		/* LoP-RTT rds: 3 RTT(1)/2 = 9, within 20% of 9.5, not of 20 */
		double rds = mean ? 20.0 : 9.5, lrtt = 3 * rtt_w(1, 1) / 2;
		int said = 0;

		snprintf(label, sizeof(label), "--measured %s", mean ? "mean" : "median");
		results_open(dir);
		kernels();
		row("barrier", "rds", 8, 0, 0, 10.0, "sync=window;paper_us=20;b2b_p50_us=9.5;b2b_n=1000");
		row("barrier", "pe", 8, 0, 0, 10.0, "sync=window;paper_us=8");
		row("barrier", "ds", 8, 0, 0, 10.0, "sync=window");
		mo.meas_mean = mean;
		t = model_table(&mo, dir, label,
				mean ? "against the loops' medians: 1 of 1"
				     : "against the loops' means (--measured mean): 0 of 1",
				&said);
		tap_is_int(said, 1, "%s: stdout counts the rows within by the other statistic", label);
		tap_is_double_within(cell(t, "rds", 8, "", "measured_us"), rds, 1e-9,
				     "%s: rds measured by its loop's %s", label, mean ? "mean" : "median");
		tap_is_str(scell(t, "rds", 8, "", "measured_as"), mean ? "paper_us" : "b2b_p50_us",
			   "%s: ... measured_as says which", label);
		tap_is_double_within(cell(t, "rds", 8, "", "lop_rtt_err"), lrtt / rds - 1, 1e-3,
				     "%s: ... the error's base", label);
		tap_is_str(scell(t, "pe", 8, "", "measured_as"), "paper_us",
			   "%s: a row with only the loop's mean: by it", label);
		tap_is_double_within(cell(t, "pe", 8, "", "measured_us"), 8.0, 1e-9, "%s: ... 8 us",
				     label);
		tap_is_str(scell(t, "ds", 8, "", "measured_as"), "p50_us",
			   "%s: a row without a loop: by its p50", label);
		ibc_csv_table_free(t);
		dir_remove(dir);
	}
}

/* rtt-write-readout-1n: the write round trip whose reader copies each
 * block out before the next, dearer (2 more per unit of size) */
static double rtt_r(double p, double k) { return k * (4 + 4 / p); }

/* rtt-write-readout-flag-1n: the same with the flag a write of its own on a
 * line of its own, dearer again (1 more per unit of size) */
static double rtt_f(double p, double k) { return k * (5 + 4 / p); }

/* HRWG at N = 8, 4096 B: three write rounds of 4 blocks (16 KiB, past the
 * largest kernel size: the 4096 B cost plus LogGP's G for the rest, the
 * same either way), each ending in its tail flag on a line of its own.  Run
 * without rtt-write-readout-1n rows, with them, and with
 * rtt-write-readout-flag-1n's too: with the readout rows, each round costs
 * RTT_readout(1)/2 at 4096 B, 3 x (rtt_r - rtt_w)/2 = 6 more in LoP and
 * LoP-RTT, and the note write~unread goes; with the flag rows, RTT_flag(1)/2,
 * 3 x (rtt_f - rtt_r)/2 = 3 more again, and the note flag~inblock goes; RDS's
 * write rounds carry no blocks and stay on rtt-write-1n; stdout says which
 * kernel the block writes used. */
static void test_readout(const struct ibc_logp_model_opts *base)
{
	struct ibc_logp_model_opts mo = *base;
	static const char *const col[] = { "lop_rtt_us", "lop_us" };
	static const char *const says[] = { "block writes: costed by rtt-write-1n",
					    "block writes: costed by rtt-write-readout-1n",
					    "tail flags: costed by rtt-write-readout-flag-1n" };
	char dir[3][24] = { "/tmp/ibc-loprXXXXXX", "/tmp/ibc-loprXXXXXX", "/tmp/ibc-loprXXXXXX" };
	char note[3][128];
	struct ibc_csv_table *t;
	double v[3][2], rds[3];
	int d, p, k, said[3] = { 0, 0, 0 };

	for (d = 0; d < 3; d++) {
		results_open(dir[d]);
		kernels();
		for (p = 1; d >= 1 && p <= 7; p++) {
			row("logp", "rtt-write-readout-1n", 8, 1, p, rtt_r(p, 1), "");
			row("logp", "rtt-write-readout-1n", 8, 4096, p, rtt_r(p, 2), "");
		}
		for (p = 1; d == 2 && p <= 7; p++) {
			row("logp", "rtt-write-readout-flag-1n", 8, 1, p, rtt_f(p, 1), "");
			row("logp", "rtt-write-readout-flag-1n", 8, 4096, p, rtt_f(p, 2), "");
		}
		row("alltoall", "hrwg", 8, 4096, 0, 10.0, "");
		row("barrier", "rds", 8, 0, 0, 10.0, "");
		t = model_table(&mo, dir[d], d == 2 ? "flag" : d ? "readout" : "no readout", says[d],
				&said[d]);
		for (k = 0; k < 2; k++)
			v[d][k] = cell(t, "hrwg", 8, "", col[k]);
		rds[d] = cell(t, "rds", 8, "", "lop_rtt_us");
		snprintf(note[d], sizeof(note[d]), "%s", scell(t, "hrwg", 8, "", "note"));
		ibc_csv_table_free(t);
		dir_remove(dir[d]);
	}
	tap_ok(said[0] == 1 && said[1] == 1 && said[2] == 1,
	       "readout: stdout says HRWG's flags are costed by rtt-write-readout-flag-1n, the block "
	       "writes without its rows by rtt-write-readout-1n, without those by rtt-write-1n");
	for (k = 0; k < 2; k++)
		tap_is_double_within(v[1][k] - v[0][k], 3 * (rtt_r(1, 2) - rtt_w(1, 2)) / 2, 1e-3,
				     "readout: hrwg N=8 4096 B %s: 3 rounds x (RTT_readout(1) - "
				     "RTT_write(1))/2 more (%.4f against %.4f)", col[k], v[1][k], v[0][k]);
	for (k = 0; k < 2; k++)
		tap_is_double_within(v[2][k] - v[1][k], 3 * (rtt_f(1, 2) - rtt_r(1, 2)) / 2, 1e-3,
				     "readout: hrwg N=8 4096 B %s with the flag's rows: 3 rounds x "
				     "(RTT_flag(1) - RTT_readout(1))/2 more (%.4f against %.4f)", col[k],
				     v[2][k], v[1][k]);
	tap_ok(rds[1] == rds[0] && rds[2] == rds[0],
	       "readout: rds's write rounds (no blocks) unchanged");
	tap_ok(strstr(note[0], "write~unread") != NULL && strstr(note[1], "write~unread") == NULL &&
	       strstr(note[2], "write~unread") == NULL,
	       "readout: hrwg's note says write~unread without the readout kernel's rows ('%s'), not "
	       "with them ('%s')", note[0], note[1]);
	tap_ok(strstr(note[0], "flag~inblock") != NULL && strstr(note[1], "flag~inblock") != NULL &&
	       strstr(note[2], "flag~inblock") == NULL,
	       "readout: hrwg's note says flag~inblock without the flag kernel's rows ('%s'), not "
	       "with them ('%s')", note[1], note[2]);
}

/* copy-peer-flag: a block copied out after a flag on a line of its own,
 * dearer than copy-peer at a line (its lines not yet touched) */
static double cp_peer_flag(double s) { return 0.09 + 0.02 * (s - 1) / 4095; }

/* HRWG and hypercube at N = 8, 4096 B, run with and without copy-peer-flag
 * rows: HRWG's 7 received blocks (its rounds end in a tail flag on a line
 * of its own) cost copy-peer-flag where it was measured, else copy-peer,
 * note peer~inblock; hypercube's eager messages (the flag in the header's
 * line) stay on copy-peer either way; stdout says which kernel was used. */
static void test_peer_flag(const struct ibc_logp_model_opts *base)
{
	struct ibc_logp_model_opts mo = *base;
	static const char *const says[] = { "blocks out after a tail flag: costed by copy-peer,",
					    "blocks out after a tail flag: costed by copy-peer-flag" };
	char dir[2][24] = { "/tmp/ibc-lopfXXXXXX", "/tmp/ibc-lopfXXXXXX" };
	double hcube = 40 * cp_own(4096) + 3 * (cp_own(16384) + cp_peer(16384));
	double want[2] = { 9 * cp_own(4096) + 7 * cp_peer(4096),
			   9 * cp_own(4096) + 7 * cp_peer_flag(4096) };
	struct ibc_csv_table *t;
	int d, said[2] = { 0, 0 };

	for (d = 0; d < 2; d++) {
		results_open(dir[d]);
		kernels();
		if (d == 1) {
			row("logp", "copy-peer-flag", 8, 1, 0, cp_peer_flag(1),
			    "kernel=copy;from=peer;p=1;flag=own-line");
			row("logp", "copy-peer-flag", 8, 4096, 0, cp_peer_flag(4096),
			    "kernel=copy;from=peer;p=1;flag=own-line");
		}
		row("alltoall", "hrwg", 8, 4096, 0, 10.0, "");
		row("alltoall", "hypercube", 8, 4096, 0, 10.0, "eager_max=65536");
		t = model_table(&mo, dir[d], d ? "peer flag" : "no peer flag", says[d], &said[d]);
		tap_is_double_within(cell(t, "hrwg", 8, "", "copy_us"), want[d], 1e-6,
				     "%s: hrwg N=8 copies: 9 own blocks, 7 received out by %s = %.4f",
				     d ? "peer flag" : "no peer flag", d ? "copy-peer-flag" : "copy-peer",
				     want[d]);
		tap_ok((strstr(scell(t, "hrwg", 8, "", "note"), "peer~inblock") != NULL) == !d,
		       "... its note %s peer~inblock ('%s')", d ? "without" : "with",
		       scell(t, "hrwg", 8, "", "note"));
		tap_is_double_within(cell(t, "hypercube", 8, "", "copy_us"), hcube, 1e-3 * hcube,
				     "... hypercube's eager copies stay on copy-peer (%.4f), no "
				     "peer~inblock ('%s')", hcube, scell(t, "hypercube", 8, "", "note"));
		tap_ok(strstr(scell(t, "hypercube", 8, "", "note"), "peer~inblock") == NULL,
		       "... hypercube's note has no peer~inblock");
		tap_is_int(said[d], 1, "... stdout: '%s'", says[d]);
		ibc_csv_table_free(t);
		dir_remove(dir[d]);
	}
}

/* a post of a write into user memory with every rank writing at once
 * (os-write-user-all) */
static double os_ua(double p, double k) { return k * (1.5 + 0.3 / p); }

/* DE at N = 8, 4096 B, run with and without os-write-user-all rows (both
 * with os-write-user's): its 7 writes into user memory cost os-write-user-all
 * at p = 1 where it was measured, else os-write-user, note user~one; every
 * model moves by that difference; stdout says which kernel was used. */
static void test_user_all(const struct ibc_logp_model_opts *base)
{
	struct ibc_logp_model_opts mo = *base;
	static const char *const col[] = { "lop_us", "lop_rtt_us", "loggp_us" };
	char dir[2][24] = { "/tmp/ibc-lopuXXXXXX", "/tmp/ibc-lopuXXXXXX" }, note[2][128];
	struct ibc_csv_table *t;
	double v[2][3], u[2];
	int d, p, k, said[2] = { 0, 0 };

	for (d = 0; d < 2; d++) {
		results_open(dir[d]);
		kernels();
		for (p = 1; d == 1 && p <= 7; p++) {
			row("logp", "os-write-user-all", 8, 1, p, os_ua(p, 1), "");
			row("logp", "os-write-user-all", 8, 4096, p, os_ua(p, 2), "");
		}
		row("alltoall", "de", 8, 4096, 0, 10.0, "");
		t = model_table(&mo, dir[d], d ? "user-all" : "no user-all",
				d ? "user-write term: each write into a peer's user memory (user_us), "
				    "costed by the logp kernel os-write-user-all"
				  : "user-write term: costed by os-write-user (rank 0 writing alone)",
				&said[d]);
		for (k = 0; k < 3; k++)
			v[d][k] = cell(t, "de", 8, "", col[k]);
		u[d] = cell(t, "de", 8, "", "user_write_us");
		snprintf(note[d], sizeof(note[d]), "%s", scell(t, "de", 8, "", "note"));
		ibc_csv_table_free(t);
		dir_remove(dir[d]);
	}
	tap_ok(said[0] == 1 && said[1] == 1,
	       "user-all: stdout says the user writes are costed by os-write-user-all, or "
	       "without its rows by os-write-user");
	tap_is_double_within(u[0], 7 * os_u(1, 2), 1e-6,
			     "user-all: without its rows, de's 7 user writes cost os-write-user at 4 KiB");
	tap_is_double_within(u[1], 7 * os_ua(1, 2), 1e-6,
			     "user-all: with them, os-write-user-all at 4 KiB");
	for (k = 0; k < 3; k++)
		tap_is_double_within(v[1][k] - v[0][k], 7 * (os_ua(1, 2) - os_u(1, 2)), 1e-3,
				     "user-all: de N=8 4096 B %s moves by 7 x the kernels' difference "
				     "(%.4f against %.4f)", col[k], v[1][k], v[0][k]);
	tap_ok(strstr(note[0], "user~one") != NULL && strstr(note[1], "user~one") == NULL,
	       "user-all: de's note says user~one without the kernel's rows ('%s'), not with "
	       "them ('%s')", note[0], note[1]);
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* meta.csv of a run of the suites with their probes at start and end */
static void meta_write(const char *dir, const char *const *suite, const char *const *start,
		       const char *const *end, int n)
{
	char path[256];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/meta.csv", dir);
	f = fopen(path, "w");
	if (f == NULL)
		tap_bail_out("writing %s", path);
	fprintf(f, "key,value\nrun_id,R1\n");
	for (i = 0; i < n; i++)
		fprintf(f, "suite,%s\nprobe_start_us,%s\nprobe_end_us,%s\n", suite[i], start[i],
			end[i]);
	fclose(f);
}

/* Placement (logp_place.h): the kernels at probe 0.04 us.
 *  - a row at 0.2 us (another placement) is not modelled, says why, has no
 *    value and is not scored; one at 0.05 us is predicted; with
 *    --any-placement both are;
 *  - meta.csv: the barrier run's probe moved (0.04 -> 0.2): its rows are not
 *    modelled, the all-to-all's are; the logp run's moved: none is. */
static void test_placement(const struct ibc_logp_model_opts *base)
{
	static const char *const su[] = { "logp", "barrier", "alltoall" };
	static const char *const st[] = { "0.04", "0.04", "0.04" };
	static const char *const en_b[] = { "0.04", "0.2", "0.04" };
	static const char *const en_k[] = { "0.2", "0.04", "0.04" };
	struct ibc_logp_model_opts mo = *base;
	char dir[] = "/tmp/ibc-loplXXXXXX", path[256], line[1024];
	struct ibc_csv_table *t = NULL;
	int pass, said = 0;
	FILE *out;

	results_open(dir);
	row_probe = "0.04";
	kernels();
	row("barrier", "pe", 8, 0, 0, 10.0, "");
	row("alltoall", "pairwise", 8, 1, 0, 10.0, "eager_max=4096");
	row_probe = "0.2";
	row("barrier", "rds", 8, 0, 0, 10.0, "");
	row_probe = "";
	out = model_said(&mo, dir, "placement");
	while (out != NULL && fgets(line, sizeof(line), out) != NULL)
		said += strncmp(line, "placement: the kernels' probe shm 0.040 us", 42) == 0;
	if (out != NULL)
		fclose(out);
	tap_is_int(said, 1, "placement: stdout says the kernels' probe");
	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	for (pass = 0; pass < 4; pass++) {
		/* pass 0: as measured; 1: --any-placement; 2: the barrier run
		 * moved; 3: the logp run moved */
		mo.dir = dir;
		mo.out = NULL;
		mo.any_placement = pass == 1;
		if (pass >= 2)
			meta_write(dir, su, st, pass == 2 ? en_b : en_k, 3);
		if (pass > 0 && ibc_logp_model_run(&mo) != IBC_OK)
			tap_bail_out("placement: model pass %d", pass);
		if (ibc_csv_read(path, &t) != IBC_OK)
			tap_bail_out("placement: %s unreadable", path);
		if (pass == 0) {
			tap_is_str(scell(t, "rds", 8, "", "lop_rtt_status"),
				   "not modelled (placement: this row's probe 0.200 us, the kernels' "
				   "0.040 us)", "placement: a row at probe 0.2 us against the kernels' "
				   "0.04 us is not modelled, and says why");
			tap_ok(!*scell(t, "rds", 8, "", "lop_rtt_us") &&
				       !*scell(t, "rds", 8, "", "best_err"),
			       "... no value, no error");
			tap_is_str(scell(t, "pe", 8, "", "lop_rtt_status"), "ok",
				   "... a row at probe 0.05 us is predicted");
		} else if (pass == 1) {
			tap_ok(strcmp(scell(t, "rds", 8, "", "lop_rtt_status"), "ok") == 0 &&
				       isfinite(cell(t, "rds", 8, "", "lop_rtt_us")),
			       "placement: --any-placement models the row at 0.2 us as well");
		} else if (pass == 2) {
			tap_ok(starts(scell(t, "pe", 8, "", "lop_status"),
				      "not modelled (placement: the probe moved during this row's run, "
				      "0.040 -> 0.200 us)") &&
				       strcmp(scell(t, "pairwise", 8, "", "lop_status"), "ok") == 0,
			       "placement: the barrier run's probe moved: its rows not modelled ('%s'), "
			       "the all-to-all's modelled ('%s')", scell(t, "pe", 8, "", "lop_status"),
			       scell(t, "pairwise", 8, "", "lop_status"));
		} else {
			tap_ok(starts(scell(t, "pairwise", 8, "", "lop_status"),
				      "not modelled (placement: the probe moved during the kernels' run"),
			       "placement: the logp run's probe moved: no row modelled ('%s')",
			       scell(t, "pairwise", 8, "", "lop_status"));
		}
		ibc_csv_table_free(t);
		t = NULL;
	}
	dir_remove(dir);
}

/* Placement per N: kernels at N = 8 (probe 0.04 us), one oversubscribed
 * kernel row at N = 4 (9 us: the scheduler's) whose run's probe moved
 * (9 -> 1.3 us), and a logp run at N = 16 whose probe moved (0.04 -> 0.2).
 * A row at N = 8 is modelled: the oversubscribed run is left out, and the
 * run that moved is another N's; a row at N = 16 is not. */
static void test_placement_n(const struct ibc_logp_model_opts *base)
{
	struct ibc_logp_model_opts mo = *base;
	char dir[] = "/tmp/ibc-lopnXXXXXX", path[256];
	struct ibc_csv_table *t = NULL;
	FILE *f, *out;

	results_open(dir);
	row_probe = "0.04";
	kernels();
	row("barrier", "pe", 8, 0, 0, 10.0, "");
	row("barrier", "rds", 16, 0, 0, 10.0, "");
	row_probe = "9.0";
	row_over = "1";
	row("logp", "rtt-write-1n", 4, 1, 1, 50.0, "");
	row_over = "0";
	row_probe = "";
	snprintf(path, sizeof(path), "%s/meta.csv", dir);
	f = fopen(path, "w");
	if (f == NULL)
		tap_bail_out("writing %s", path);
	fprintf(f, "key,value\nbench,1\nsuite,logp\nranks,8\noversubscribed,0\n"
		   "probe_start_us,0.04\nprobe_end_us,0.04\n"
		   "bench,2\nranks,4\noversubscribed,1\nprobe_start_us,9.0\nprobe_end_us,1.3\n"
		   "bench,3\nranks,16\noversubscribed,0\nprobe_start_us,0.04\nprobe_end_us,0.2\n");
	fclose(f);
	out = model_said(&mo, dir, "placement per N");
	if (out != NULL)
		fclose(out);
	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	if (ibc_csv_read(path, &t) != IBC_OK)
		tap_bail_out("placement per N: %s unreadable", path);
	tap_is_str(scell(t, "pe", 8, "", "lop_rtt_status"), "ok",
		   "placement per N: a row at N = 8 is modelled; the oversubscribed run (9 us, "
		   "moved to 1.3) and the N = 16 run that moved are left out");
	tap_ok(starts(scell(t, "rds", 16, "", "lop_rtt_status"),
		      "not modelled (placement: the probe moved during the kernels' run"),
	       "placement per N: a row at N = 16, whose kernels' run moved, is not ('%s')",
	       scell(t, "rds", 16, "", "lop_rtt_status"));
	ibc_csv_table_free(t);
	dir_remove(dir);
}

int main(void)
{
	const struct ibc_logp_family fams[] = { { "barrier", ibc_barrier_alg_rounds },
						{ "alltoall", a2a_rounds } };
	struct ibc_logp_model_opts mo = { .fams = fams, .nfams = 2 };
	char dir[] = "/tmp/ibc-lopXXXXXX", path[256];
	struct ibc_csv_table *t = NULL;
	FILE *devnull = fopen("/dev/null", "w");
	double o1w = os_w(1, 1), o1s = os_s(1, 1), v;
	int rc;

	tap_plan_none();
	if (mkdtemp(dir) == NULL)
		tap_bail_out("mkdtemp");
	mo.dir = dir;
	mo.out = devnull;
	tap_is_int(ibc_logp_model_run(&mo), IBC_ERR_NOTFOUND, "no fits.csv: not found");

	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (ibc_csv_writer_open(path, cols, NCOLS, 0, &w) != IBC_OK)
		tap_bail_out("writing %s", path);
	kernels();
	row("barrier", "rds", 8, 0, 0, 10.0, "");
	row("barrier", "pe", 8, 0, 0, 10.0, "");
	row("barrier", "ds", 8, 0, 0, 10.0, "sync=window;paper_us=5.000;b2b_p50_us=4.9");
	row("barrier", "rgm", 8, 0, 7, 10.0, "");
	row("barrier", "rgm", 8, 0, 3, 10.0, "");
	row("barrier", "mpi", 8, 0, 0, 10.0, "");
	row("alltoall", "bruck", 8, 1, 0, 10.0, "");
	row("alltoall", "pairwise", 8, 8192, 0, 10.0, "eager_max=4096");
	row("alltoall", "hrwg", 8, 4096, 0, 10.0, "");
	row("alltoall", "hypercube", 8, 4096, 0, 10.0, "eager_max=65536");
	row("alltoall", "direct", 8, 4096, 0, 10.0, "eager_max=8192");
	row("alltoall", "de", 8, 4096, 0, 10.0, "");
	ibc_csv_writer_close(w);

	tap_is_int(ibc_logp_model_run(&mo), IBC_ERR_NOTFOUND, "rows but no fits.csv: not found");
	rc = ibc_logp_fits_write(dir, NULL);
	tap_is_int(rc, IBC_OK, "fits written");
	snprintf(path, sizeof(path), "%s/fits.csv", dir);
	if (ibc_csv_read(path, &t) == IBC_OK) {
		size_t r, ok = 0, n = t->nrows - 1;
		double r2min = 1;

		for (r = 0; r + 1 < t->nrows; r++)
			if (strcmp(ibc_csv_cell(t, r, "status"), "ok") == 0) {
				ok++;
				v = strtod(ibc_csv_cell(t, r, "r2"), NULL);
				r2min = v < r2min ? v : r2min;
			}
		/* 5 kernels x 2 sizes x 3 statistics */
		tap_is_int((long long)n, 30, "fits.csv: a row per kernel, size and statistic");
		tap_is_int((long long)ok, 30, "... each fitted");
		tap_ok(r2min > 0.9999, "... exactly (R2 min %.6f)", r2min);
		ibc_csv_table_free(t);
	}

	rc = ibc_logp_model_run(&mo);
	tap_is_int(rc, IBC_OK, "model run");
	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	t = NULL;
	if (ibc_csv_read(path, &t) == IBC_OK) {
		/* rds: 3 rounds of t_1:1 = o(1) + L(1) = RTT(1)/2 - o(1) */
		double rds = 3 * (rtt_w(1, 1) / 2 - o1w);
		/* rgm l = 7 on 8: one stage of 7 writes, then the release as a send */
		double o7 = os_w(7, 1), L7 = rtt_w(7, 1) / 2 - (o7 + o1w);
		double rgm = o7 + 7 * L7 + (rtt_s(1, 1) / 2 - o1s);
		/* bruck, 1 B blocks: 3 steps of 4 blocks (4 B): between 1 and 4096 B */
		double t1 = rtt_s(1, 1) / 2 - o1s, t4k = rtt_s(1, 2) / 2 - os_s(1, 2);
		double bruck = 3 * (t1 + (t4k - t1) * 3.0 / 4095.0);
		/* its copies: the 8 blocks in and out, 4 packed and 4 unpacked per
		 * step; each step's 4 B message eager, copied in and out */
		double bruck_cp = 40 * cp_own(1) + 3 * (cp_own(4) + cp_peer(4));
		/* pairwise, 8 KiB: past 4096 B, LogGP's G (1e-4 us/B) per further byte;
		 * its own block copied (the copy line past 4096 B), the messages over
		 * the eager limit (4096): no eager copies */
		double pairwise = 7 * (t4k + 4096 * 1e-4) + cp_own(8192);

		tap_is_double_within(cell(t, "rds", 8, "", "lop_us"), rds, 1e-3 * rds,
				     "LoP rds N=8: 3 (RTT(1)/2 - o(1)) = %.4f", rds);
		tap_is_double_within(cell(t, "rds", 8, "", "lop_rtt_us"), 3 * rtt_w(1, 1) / 2, 1e-3,
				     "LoP-RTT rds N=8: 3 RTT(1)/2");
		tap_is_double_within(cell(t, "rgm", 8, "7", "lop_rtt_us"),
				     7 * rtt_w(7, 1) / 2 + rtt_s(1, 1) / 2, 1e-3,
				     "LoP-RTT rgm l=7 N=8: 7 RTT(7)/2 + RTT_send(1)/2");
		tap_is_double_within(cell(t, "pe", 8, "", "lop_us"), 3 * (rtt_s(1, 1) / 2 - o1s), 1e-3,
				     "LoP pe N=8: the send kernels");
		tap_ok(strstr(scell(t, "pe", 8, "", "note"), "send~raw") != NULL,
		       "no rtt-pool-1n rows: pe's send rounds by rtt-send-1n, note send~raw ('%s')",
		       scell(t, "pe", 8, "", "note"));
		tap_is_double_within(cell(t, "rgm", 8, "7", "lop_us"), rgm, 1e-3 * rgm,
				     "LoP rgm l=7 N=8: o(7) + 7 L(7) + a send = %.4f", rgm);
		tap_is_double_within(cell(t, "bruck", 8, "", "lop_us"), bruck + bruck_cp, 1e-3 * bruck,
				     "LoP bruck N=8 1 B: sizes interpolated, plus its copies = %.4f",
				     bruck + bruck_cp);
		tap_is_double_within(cell(t, "bruck", 8, "", "copy_us"), bruck_cp, 1e-3 * bruck_cp,
				     "copies bruck N=8 1 B: 40 own blocks, 3 eager messages in and out "
				     "= %.4f", bruck_cp);
		tap_is_double_within(cell(t, "pairwise", 8, "", "lop_us"), pairwise, 1e-3 * pairwise,
				     "LoP pairwise N=8 8 KiB: past the sizes by G, its own block copied, "
				     "nothing eager = %.4f", pairwise);
		copies_check(t);
		/* LogGP: o = 0.3, g = 0.5, L = PRTT(1)/2 - 2 o = 0.4 */
		tap_is_double_within(cell(t, "rds", 8, "", "loggp_us"), 3 * (0.6 + 0.4), 1e-6,
				     "LogGP rds N=8: 3 (2o + L)");
		tap_is_double_within(cell(t, "rgm", 8, "7", "loggp_us"), (1.0 + 6 * 0.5) + 1.0, 1e-6,
				     "LogGP rgm l=7: 2o + L + 6 max(o, g), then 2o + L");
		tap_is_double_within(cell(t, "rds", 8, "", "lop_err"), rds / 10 - 1, 1e-3,
				     "relative error against p50");
		tap_ok(isnan(cell(t, "mpi", 8, "", "lop_us")), "the host MPI's rows are not predicted");
		tap_is_double_within(cell(t, "ds", 8, "", "measured_us"), 4.9, 1e-9,
				     "a row's back-to-back loop (its median, b2b_p50_us) is what is "
				     "predicted...");
		tap_is_double_within(cell(t, "ds", 8, "", "lop_err"),
				     cell(t, "ds", 8, "", "lop_us") / 4.9 - 1, 1e-3, "... and the error's base");
		tap_is_double_within(cell(t, "ds", 8, "", "p50_us"), 10.0, 1e-9, "... p50 kept beside it");
		ibc_csv_table_free(t);
	} else {
		tap_ok(0, "lop-model.csv readable");
	}
	snprintf(path, sizeof(path), "%s/lop-extrapolation.csv", dir);
	t = NULL;
	if (ibc_csv_read(path, &t) == IBC_OK) {
		double rds64 = cell(t, "rds", 65536, "", "lop_us");

		tap_is_double_within(rds64, 16 * (rtt_w(1, 1) / 2 - o1w), 1e-3,
				     "extrapolated rds at 64 K: 16 rounds");
		tap_ok(strstr(ibc_csv_cell(t, 0, "method"), "model-eval") != NULL,
		       "... method model-eval");
		ibc_csv_table_free(t);
	}
	snprintf(path, sizeof(path), "%s/lop-fanin.csv", dir);
	t = NULL;
	if (ibc_csv_read(path, &t) == IBC_OK) {
		/* measured: l = 3 10 us, l = 7 10 us; the chooser's l is measured */
		const char *ratio = NULL, *ml = NULL;
		size_t r;

		for (r = 0; r + 1 < t->nrows; r++)
			if (strcmp(ibc_csv_cell(t, r, "ranks"), "8") == 0) {
				ratio = ibc_csv_cell(t, r, "model_over_best");
				ml = ibc_csv_cell(t, r, "model_fanin");
			}
		tap_ok(ratio != NULL && strtod(ratio, NULL) == 1.0 && (strcmp(ml, "3") == 0 || strcmp(ml, "7") == 0),
		       "lop-fanin.csv: the model's l (%s) measured, over the best: %s", ml ? ml : "?",
		       ratio ? ratio : "?");
		ibc_csv_table_free(t);
	} else {
		tap_ok(0, "lop-fanin.csv written");
	}
	test_negative(&mo);
	test_nocopy(&mo);
	test_pool(&mo);
	test_mcast(&mo);
	test_xchg(&mo);
	test_b2b(&mo);
	test_measured(&mo);
	test_readout(&mo);
	test_peer_flag(&mo);
	test_user_all(&mo);
	test_placement(&mo);
	test_placement_n(&mo);
	dir_remove(dir);
	fclose(devnull);
	return tap_done();
}
