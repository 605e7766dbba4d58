/* The LoP closed loop on a synthetic results directory (tests/lib/lopsynth.h):
 * kernel rows from known functions are fitted (fits.csv, logp-derived.csv),
 * and the model's predictions of barrier and all-to-all rows equal the
 * values worked out by hand from §4.4's formulas and LogGP's; the outputs
 * and the errors for missing inputs, placement and oversubscription.  The
 * kernels that cost particular rounds (pool, multicast, exchanges,
 * readout, user writes): model_kernels.c. */
#include "lopsynth.h"
#include "core/status.h"
#include "logp/logp_fits.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the copy term per algorithm, N = 8, 4 KiB blocks (the kernels' size) */
static void copies_check(const struct ibc_csv_table *t)
{
	double hcube = 40 * cp_own(4096) + 3 * (cp_own(16384) + cp_peer(16384));
	/* two rounds of signals to 7 peers; the 7 blocks posted into user memory */
	double de_rtt = 2 * 7 * rtt_w(7, 1) / 2 + 7 * os_u(1, 2) + cp_own(4096);
	/* per peer: RTS, CTS, FIN (sends, k = 1), the block into user memory */
	double direct_rtt = 7 * (3 * rtt_s(1, 1) / 2 + os_u(1, 2)) + cp_own(4096);

	tap_is_double_within(lop_cell(t, "hrwg", 8, "", "copy_us"), 9 * 0.05 + 7 * 0.10, 1e-6,
			     "copies hrwg N=8: 8 blocks staged, its own out, 7 received out = 1.15");
	tap_is_double_within(lop_cell(t, "hypercube", 8, "", "copy_us"), hcube, 1e-3 * hcube,
			     "copies hypercube N=8: 40 own blocks, 3 eager 16 KiB messages in and "
			     "out = %.4f", hcube);
	tap_is_double_within(lop_cell(t, "direct", 8, "", "copy_us"), 0.05, 1e-6,
			     "copies direct: its own block only (rendezvous, no eager copies)");
	tap_is_double_within(lop_cell(t, "de", 8, "", "copy_us"), 0.05, 1e-6,
			     "copies de: its own block only (zero copy)");
	tap_is_double_within(lop_cell(t, "de", 8, "", "lop_rtt_us"), de_rtt, 1e-3,
			     "LoP-RTT de N=8: the addresses' round, the flags' round, 7 writes into user "
			     "memory, its copy = %.4f", de_rtt);
	tap_is_double_within(lop_cell(t, "de", 8, "", "user_write_us"), 7 * os_u(1, 2), 1e-6,
			     "user writes de N=8: 7 posts of os-write-user at 4 KiB");
	tap_is_double_within(lop_cell(t, "direct", 8, "", "lop_rtt_us"), direct_rtt, 1e-3,
			     "LoP-RTT direct N=8: 7 x (RTS, CTS, FIN, a write into user memory), its "
			     "copy = %.4f", direct_rtt);
	tap_is_double_within(lop_cell(t, "hrwg", 8, "", "user_write_us"), 0, 1e-12,
			     "user writes hrwg: none (its buffer is mr_alloc'd)");
	tap_is_double_within(lop_cell(t, "rds", 8, "", "copy_us"), 0, 1e-12, "copies rds: none");
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

	lop_results_open(dir);
	lop_with_copies = 0;
	lop_kernels();
	lop_with_copies = 1;
	lop_row("barrier", "rds", 8, 0, 0, 10.0, "");
	lop_row("alltoall", "hrwg", 8, 4096, 0, 10.0, "");
	lop_row("alltoall", "de", 8, 4096, 0, 10.0, "");
	out = lop_model_said(&mo, dir, "no copy rows");
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
		tap_ok(strtod(lop_scell(t, "rds", 8, "", "lop_rtt_us"), NULL) > 0,
		       "no copy rows: rds (no copies) still predicted");
		for (k = 0; k < 3; k++) {
			tap_is_str(lop_scell(t, "hrwg", 8, "", us[k]), "", "no copy rows: hrwg %s empty", us[k]);
			tap_ok(strncmp(lop_scell(t, "hrwg", 8, "", st[k]), "no prediction: no copy rows", 27) == 0,
			       "... %s '%s'", st[k], lop_scell(t, "hrwg", 8, "", st[k]));
		}
		tap_is_str(lop_scell(t, "hrwg", 8, "", "copy_us"), "", "... copy_us empty");
		tap_is_str(lop_scell(t, "de", 8, "", "lop_rtt_us"), "", "no copy rows: de no number");
		tap_ok(strncmp(lop_scell(t, "de", 8, "", "lop_rtt_status"), "no prediction: no ", 18) == 0,
		       "... '%s'", lop_scell(t, "de", 8, "", "lop_rtt_status"));
		ibc_csv_table_free(t);
	} else {
		tap_ok(0, "no copy rows: lop-model.csv written");
	}
	lop_dir_remove(dir);
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

	lop_results_open(dir);
	for (p = 1; p <= 7; p++) {
		lop_row("logp", "rtt-write-1n", 8, 1, p, rtt_w(p, 1), "");
		lop_row("logp", "rtt-send-1n", 8, 1, p, rtt_s(p, 1), "");
		lop_row("logp", "os-write", 8, 1, p, 5 + 0.2 / p, "");
		lop_row("logp", "os-send", 8, 1, p, 5 + 0.2 / p, "");
	}
	/* PRTT(n) below PRTT(1): Netgauge's g < 0 */
	lop_row("logp", "loggp-prtt1", 8, 1, 0, 2.0, "");
	lop_row("logp", "loggp-prttn", 8, 1, 0, 1.7, "");
	lop_row("logp", "loggp-prttd", 8, 1, 0, 2.0 + 15 * (0.3 + 2.0), "d_us=2.000");
	lop_row("barrier", "rds", 8, 0, 0, 10.0, "");
	lop_row("barrier", "rgm", 8, 0, 3, 10.0, "");
	lop_row("barrier", "rgm", 8, 0, 7, 12.0, "");
	lop_row_over = "1";
	lop_row("barrier", "pe", 16, 0, 0, 10.0, "");
	lop_row_over = "0";
	out = lop_model_said(&mo, dir, "negative");
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
		tap_is_str(lop_scell(t, "rds", 8, "", "lop_us"), "", "negative: rds LoP not printed");
		tap_ok(strncmp(lop_scell(t, "rds", 8, "", "lop_status"), "no prediction: <= 0", 19) == 0,
		       "negative: ... lop_status '%s'", lop_scell(t, "rds", 8, "", "lop_status"));
		tap_ok(strtod(lop_scell(t, "rds", 8, "", "lop_rtt_us"), NULL) > 0,
		       "negative: LoP-RTT still predicts (%s)", lop_scell(t, "rds", 8, "", "lop_rtt_us"));
		tap_ok(strstr(lop_scell(t, "rds", 8, "", "note"), "loggp<0->0") != NULL,
		       "negative: LogGP's g held at 0 noted (%s)", lop_scell(t, "rds", 8, "", "note"));
		tap_is_str(lop_scell(t, "pe", 16, "", "lop_status"), "not modelled (oversubscribed)",
			   "oversubscribed row: not modelled");
		tap_is_str(lop_scell(t, "pe", 16, "", "lop_rtt_us"), "", "... no number");
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
		tap_ok(strtod(lop_scell(t, "pe", 16, "", "lop_rtt_us"), NULL) > 0 &&
		       lop_scell(t, "pe", 16, "", "lop_rtt_err")[0] == '\0',
		       "--pus 16: the N = 16 row predicted (%s us), no error against an oversubscribed "
		       "measurement", lop_scell(t, "pe", 16, "", "lop_rtt_us"));
		ibc_csv_table_free(t);
	}
	lop_dir_remove(dir);
}

/* A round that costs <= 0 inside a sum that does not.  o_s = 1.2 at every
 * p and RTT(p) = 2 + 4/p: L(1) = 3 - 2.4 > 0, L(3) = 1.667 - 2.4 < 0.
 * RGM at N = 16, fan-in 3 is two gather rounds of k = 3 (LoP's o_s(3) +
 * 3 L(3) = 1.2 - 2.2 = -1.0 each) and the release by the send round trip
 * (o_s + L = 0.5 + 15 - 1 = 14.5), so the sum is 12.5 us: positive, and
 * not a time; at 64 K processes, eight such rounds, 6.5 us.  No LoP
 * prediction, in the rows, the extrapolation and the fan-in table; fan-in
 * 1 (every round positive) is still predicted. */
static void test_round_negative(const struct ibc_logp_model_opts *base)
{
	struct ibc_logp_model_opts mo = *base;
	char dir[] = "/tmp/ibc-lopnrXXXXXX", path[256];
	struct ibc_csv_table *t = NULL;
	int p, said = 0, chose3 = 0;
	size_t r;

	lop_results_open(dir);
	for (p = 1; p <= 7; p++) {
		lop_row("logp", "rtt-write-1n", 16, 1, p, rtt_w(p, 1), "");
		lop_row("logp", "os-write", 16, 1, p, 1.2, "");
		lop_row("logp", "rtt-send-1n", 16, 1, p, 30.0, "");
		lop_row("logp", "os-send", 16, 1, p, 0.5, "");
	}
	lop_row("barrier", "rgm", 16, 0, 3, 10.0, "");
	lop_row("barrier", "rgm", 16, 0, 1, 10.0, "");
	t = lop_model_table(&mo, dir, "round <= 0", "LoP: no prediction (<= 0 in a round", &said);
	tap_is_str(lop_scell(t, "rgm", 16, "3", "lop_us"), "",
		   "round <= 0: rgm fan-in 3 LoP not printed (the rounds sum to 12.5)");
	tap_ok(strncmp(lop_scell(t, "rgm", 16, "3", "lop_status"), "no prediction: <= 0 in a round",
		       30) == 0,
	       "... lop_status '%s'", lop_scell(t, "rgm", 16, "3", "lop_status"));
	tap_ok(said >= 1, "... stdout says why (%d lines)", said);
	tap_ok(strtod(lop_scell(t, "rgm", 16, "3", "lop_rtt_us"), NULL) > 0,
	       "... LoP-RTT still predicts it (%s)", lop_scell(t, "rgm", 16, "3", "lop_rtt_us"));
	tap_is_double_within(lop_cell(t, "rgm", 16, "1", "lop_us"),
			     4 * 1.8 + 14.5, 1e-3,
			     "round <= 0: rgm fan-in 1, four gather rounds of k = 1 (1.8) and the "
			     "release (14.5), still predicted");
	ibc_csv_table_free(t);
	snprintf(path, sizeof(path), "%s/lop-extrapolation.csv", dir);
	t = NULL;
	if (ibc_csv_read(path, &t) == IBC_OK) {
		int three = 0, empty = 0;

		for (r = 0; r + 1 < t->nrows; r++) {
			if (strcmp(ibc_csv_cell(t, r, "variant"), "rgm") != 0 ||
			    strcmp(ibc_csv_cell(t, r, "fanin"), "3") != 0)
				continue;
			const char *st = ibc_csv_cell(t, r, "lop_status");
			size_t len = strlen(st);

			three++;
			/* the reason whole, not cut at the cell's width */
			empty += ibc_csv_cell(t, r, "lop_us")[0] == '\0' &&
				 strncmp(st, "no prediction: <= 0 in a round", 30) == 0 && len > 5 &&
				 strcmp(st + len - 5, "fails") == 0;
		}
		tap_ok(three > 0 && empty == three,
		       "round <= 0: rgm fan-in 3 extrapolated LoP is 'no prediction' with the whole "
		       "reason (%d of %d)", empty, three);
		ibc_csv_table_free(t);
	} else {
		tap_ok(0, "round <= 0: lop-extrapolation.csv written");
	}
	snprintf(path, sizeof(path), "%s/lop-fanin.csv", dir);
	t = NULL;
	if (ibc_csv_read(path, &t) == IBC_OK) {
		for (r = 0; r + 1 < t->nrows; r++)
			chose3 += strcmp(ibc_csv_cell(t, r, "lop_best_fanin"), "3") == 0;
		tap_is_int(chose3, 0, "round <= 0: LoP's fan-in is never 3 in lop-fanin.csv (%zu rows)",
			   t->nrows - 1);
		ibc_csv_table_free(t);
	} else {
		tap_ok(0, "round <= 0: lop-fanin.csv written");
	}
	lop_dir_remove(dir);
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
		lop_results_open(dir);
		lop_b2b_scale = 0.5;
		lop_kernels();
		lop_b2b_scale = 0;
		lop_row("logp", "rtt-mcast", 8, 1, 0, 4.0,
			"paper_us=3.1;b2b_p50_us=3;b2b_n=1000;kernel=rtt-mcast;op=mcast;p=1");
		lop_row("barrier", "rds", 8, 0, 0, 10.0, "");
		lop_row("barrier", "rgm", 8, 0, 7, 10.0, "");
		lop_row("barrier", "pe", 8, 0, 0, 10.0, "");
		mo.b2b = b;
		t = lop_model_table(&mo, dir, label, b ? "round trips: the kernels' back-to-back loops"
				    : "round trips: the kernels' p50", &said);
		tap_is_int(said, 1, "%s: stdout says what the round trips cost", label);
		tap_ok(b2b_fits(dir, "rtt-write-1n") == 2 && b2b_fits(dir, "os-write") == 0 &&
			       b2b_fits(dir, "rtt-send-1n") == 0,
		       "%s: fits.csv fits rtt-write-1n's loop medians at both sizes, no kernel's "
		       "without a loop", label);
		tap_is_double_within(lop_cell(t, "rds", 8, "", "lop_rtt_us"), 3 * h * rtt_w(1, 1) / 2, 1e-3,
				     "%s: LoP-RTT rds: 3 RTT(1)/2, RTT %s", label,
				     b ? "the loop's median" : "p50");
		tap_is_double_within(lop_cell(t, "rgm", 8, "7", "lop_rtt_us"),
				     7 * h * rtt_w(7, 1) / 2 + (mc - h * rtt_w(1, 1) / 2), 1e-3,
				     "%s: LoP-RTT rgm l=7: the gather and the release, both %s", label,
				     b ? "from the loops" : "p50");
		tap_is_double_within(lop_cell(t, "pe", 8, "", "lop_rtt_us"), 3 * rtt_s(1, 1) / 2, 1e-3,
				     "%s: LoP-RTT pe: the send rounds by p50 (no loop)", label);
		tap_is_double_within(lop_cell(t, "rds", 8, "", "lop_us"), 3 * (rtt_w(1, 1) / 2 - os_w(1, 1)),
				     1e-3, "%s: LoP rds as printed: RTT by single calls, as its o_s", label);
		tap_ok((strstr(lop_scell(t, "rds", 8, "", "note"), "rtt~b2b") != NULL) == b &&
		       strstr(lop_scell(t, "pe", 8, "", "note"), "rtt~b2b") == NULL,
		       "%s: note rtt~b2b on the rows costed by a loop ('%s', pe '%s')", label,
		       lop_scell(t, "rds", 8, "", "note"), lop_scell(t, "pe", 8, "", "note"));
		ibc_csv_table_free(t);
		lop_dir_remove(dir);
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
		lop_results_open(dir);
		lop_kernels();
		lop_row("barrier", "rds", 8, 0, 0, 10.0, "sync=window;paper_us=20;b2b_p50_us=9.5;b2b_n=1000");
		lop_row("barrier", "pe", 8, 0, 0, 10.0, "sync=window;paper_us=8");
		lop_row("barrier", "ds", 8, 0, 0, 10.0, "sync=window");
		mo.meas_mean = mean;
		t = lop_model_table(&mo, dir, label,
				    mean ? "against the loops' medians: 1 of 1"
				     : "against the loops' means (--measured mean): 0 of 1",
				&said);
		tap_is_int(said, 1, "%s: stdout counts the rows within by the other statistic", label);
		tap_is_double_within(lop_cell(t, "rds", 8, "", "measured_us"), rds, 1e-9,
				     "%s: rds measured by its loop's %s", label, mean ? "mean" : "median");
		tap_is_str(lop_scell(t, "rds", 8, "", "measured_as"), mean ? "paper_us" : "b2b_p50_us",
			   "%s: ... measured_as says which", label);
		tap_is_double_within(lop_cell(t, "rds", 8, "", "lop_rtt_err"), lrtt / rds - 1, 1e-3,
				     "%s: ... the error's base", label);
		tap_is_str(lop_scell(t, "pe", 8, "", "measured_as"), "paper_us",
			   "%s: a row with only the loop's mean: by it", label);
		tap_is_double_within(lop_cell(t, "pe", 8, "", "measured_us"), 8.0, 1e-9, "%s: ... 8 us",
				     label);
		tap_is_str(lop_scell(t, "ds", 8, "", "measured_as"), "p50_us",
			   "%s: a row without a loop: by its p50", label);
		ibc_csv_table_free(t);
		lop_dir_remove(dir);
	}
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

	lop_results_open(dir);
	lop_row_probe = "0.04";
	lop_kernels();
	lop_row("barrier", "pe", 8, 0, 0, 10.0, "");
	lop_row("alltoall", "pairwise", 8, 1, 0, 10.0, "eager_max=4096");
	lop_row_probe = "0.2";
	lop_row("barrier", "rds", 8, 0, 0, 10.0, "");
	lop_row_probe = "";
	out = lop_model_said(&mo, dir, "placement");
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
			tap_is_str(lop_scell(t, "rds", 8, "", "lop_rtt_status"),
				   "not modelled (placement: this row's probe 0.200 us, the kernels' "
				   "0.040 us)", "placement: a row at probe 0.2 us against the kernels' "
				   "0.04 us is not modelled, and says why");
			tap_ok(!*lop_scell(t, "rds", 8, "", "lop_rtt_us") &&
			       !*lop_scell(t, "rds", 8, "", "best_err"),
			       "... no value, no error");
			tap_is_str(lop_scell(t, "pe", 8, "", "lop_rtt_status"), "ok",
				   "... a row at probe 0.05 us is predicted");
		} else if (pass == 1) {
			tap_ok(strcmp(lop_scell(t, "rds", 8, "", "lop_rtt_status"), "ok") == 0 &&
			       isfinite(lop_cell(t, "rds", 8, "", "lop_rtt_us")),
			       "placement: --any-placement models the row at 0.2 us as well");
		} else if (pass == 2) {
			tap_ok(starts(lop_scell(t, "pe", 8, "", "lop_status"),
				      "not modelled (placement: the probe moved during this row's run, "
				      "0.040 -> 0.200 us)") &&
				       strcmp(lop_scell(t, "pairwise", 8, "", "lop_status"), "ok") == 0,
			       "placement: the barrier run's probe moved: its rows not modelled ('%s'), "
			       "the all-to-all's modelled ('%s')", lop_scell(t, "pe", 8, "", "lop_status"),
			       lop_scell(t, "pairwise", 8, "", "lop_status"));
		} else {
			tap_ok(starts(lop_scell(t, "pairwise", 8, "", "lop_status"),
				      "not modelled (placement: the probe moved during the kernels' run"),
			       "placement: the logp run's probe moved: no row modelled ('%s')",
			       lop_scell(t, "pairwise", 8, "", "lop_status"));
		}
		ibc_csv_table_free(t);
		t = NULL;
	}
	lop_dir_remove(dir);
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

	lop_results_open(dir);
	lop_row_probe = "0.04";
	lop_kernels();
	lop_row("barrier", "pe", 8, 0, 0, 10.0, "");
	lop_row("barrier", "rds", 16, 0, 0, 10.0, "");
	lop_row_probe = "9.0";
	lop_row_over = "1";
	lop_row("logp", "rtt-write-1n", 4, 1, 1, 50.0, "");
	lop_row_over = "0";
	lop_row_probe = "";
	snprintf(path, sizeof(path), "%s/meta.csv", dir);
	f = fopen(path, "w");
	if (f == NULL)
		tap_bail_out("writing %s", path);
	fprintf(f, "key,value\nbench,1\nsuite,logp\nranks,8\noversubscribed,0\n"
		   "probe_start_us,0.04\nprobe_end_us,0.04\n"
		   "bench,2\nranks,4\noversubscribed,1\nprobe_start_us,9.0\nprobe_end_us,1.3\n"
		   "bench,3\nranks,16\noversubscribed,0\nprobe_start_us,0.04\nprobe_end_us,0.2\n");
	fclose(f);
	out = lop_model_said(&mo, dir, "placement per N");
	if (out != NULL)
		fclose(out);
	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	if (ibc_csv_read(path, &t) != IBC_OK)
		tap_bail_out("placement per N: %s unreadable", path);
	tap_is_str(lop_scell(t, "pe", 8, "", "lop_rtt_status"), "ok",
		   "placement per N: a row at N = 8 is modelled; the oversubscribed run (9 us, "
		   "moved to 1.3) and the N = 16 run that moved are left out");
	tap_ok(starts(lop_scell(t, "rds", 16, "", "lop_rtt_status"),
		      "not modelled (placement: the probe moved during the kernels' run"),
	       "placement per N: a row at N = 16, whose kernels' run moved, is not ('%s')",
	       lop_scell(t, "rds", 16, "", "lop_rtt_status"));
	ibc_csv_table_free(t);
	lop_dir_remove(dir);
}

int main(void)
{
	struct ibc_logp_model_opts mo;
	char dir[] = "/tmp/ibc-lopXXXXXX", path[256];
	struct ibc_csv_table *t = NULL;
	FILE *devnull = fopen("/dev/null", "w");
	double o1w = os_w(1, 1), o1s = os_s(1, 1), v;
	int rc;

	tap_plan_none();
	lop_model_opts_init(&mo);
	if (mkdtemp(dir) == NULL)
		tap_bail_out("mkdtemp");
	mo.dir = dir;
	mo.out = devnull;
	tap_is_int(ibc_logp_model_run(&mo), IBC_ERR_NOTFOUND, "no fits.csv: not found");

	lop_results_create(dir);
	lop_kernels();
	lop_row("barrier", "rds", 8, 0, 0, 10.0, "");
	lop_row("barrier", "pe", 8, 0, 0, 10.0, "");
	lop_row("barrier", "ds", 8, 0, 0, 10.0, "sync=window;paper_us=5.000;b2b_p50_us=4.9");
	lop_row("barrier", "rgm", 8, 0, 7, 10.0, "");
	lop_row("barrier", "rgm", 8, 0, 3, 10.0, "");
	lop_row("barrier", "mpi", 8, 0, 0, 10.0, "");
	lop_row("alltoall", "bruck", 8, 1, 0, 10.0, "");
	lop_row("alltoall", "pairwise", 8, 8192, 0, 10.0, "eager_max=4096");
	lop_row("alltoall", "hrwg", 8, 4096, 0, 10.0, "");
	lop_row("alltoall", "hypercube", 8, 4096, 0, 10.0, "eager_max=65536");
	lop_row("alltoall", "direct", 8, 4096, 0, 10.0, "eager_max=8192");
	lop_row("alltoall", "de", 8, 4096, 0, 10.0, "");
	ibc_csv_writer_close(lop_w);

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

		tap_is_double_within(lop_cell(t, "rds", 8, "", "lop_us"), rds, 1e-3 * rds,
				     "LoP rds N=8: 3 (RTT(1)/2 - o(1)) = %.4f", rds);
		tap_is_double_within(lop_cell(t, "rds", 8, "", "lop_rtt_us"), 3 * rtt_w(1, 1) / 2, 1e-3,
				     "LoP-RTT rds N=8: 3 RTT(1)/2");
		tap_is_double_within(lop_cell(t, "rgm", 8, "7", "lop_rtt_us"),
				     7 * rtt_w(7, 1) / 2 + rtt_s(1, 1) / 2, 1e-3,
				     "LoP-RTT rgm l=7 N=8: 7 RTT(7)/2 + RTT_send(1)/2");
		tap_is_double_within(lop_cell(t, "pe", 8, "", "lop_us"), 3 * (rtt_s(1, 1) / 2 - o1s), 1e-3,
				     "LoP pe N=8: the send kernels");
		tap_ok(strstr(lop_scell(t, "pe", 8, "", "note"), "send~raw") != NULL,
		       "no rtt-pool-1n rows: pe's send rounds by rtt-send-1n, note send~raw ('%s')",
		       lop_scell(t, "pe", 8, "", "note"));
		tap_is_double_within(lop_cell(t, "rgm", 8, "7", "lop_us"), rgm, 1e-3 * rgm,
				     "LoP rgm l=7 N=8: o(7) + 7 L(7) + a send = %.4f", rgm);
		tap_is_double_within(lop_cell(t, "bruck", 8, "", "lop_us"), bruck + bruck_cp, 1e-3 * bruck,
				     "LoP bruck N=8 1 B: sizes interpolated, plus its copies = %.4f",
				     bruck + bruck_cp);
		tap_is_double_within(lop_cell(t, "bruck", 8, "", "copy_us"), bruck_cp, 1e-3 * bruck_cp,
				     "copies bruck N=8 1 B: 40 own blocks, 3 eager messages in and out "
				     "= %.4f", bruck_cp);
		tap_is_double_within(lop_cell(t, "pairwise", 8, "", "lop_us"), pairwise, 1e-3 * pairwise,
				     "LoP pairwise N=8 8 KiB: past the sizes by G, its own block copied, "
				     "nothing eager = %.4f", pairwise);
		copies_check(t);
		/* LogGP: o = 0.3, g = 0.5, L = PRTT(1)/2 - 2 o = 0.4 */
		tap_is_double_within(lop_cell(t, "rds", 8, "", "loggp_us"), 3 * (0.6 + 0.4), 1e-6,
				     "LogGP rds N=8: 3 (2o + L)");
		tap_is_double_within(lop_cell(t, "rgm", 8, "7", "loggp_us"), (1.0 + 6 * 0.5) + 1.0, 1e-6,
				     "LogGP rgm l=7: 2o + L + 6 max(o, g), then 2o + L");
		tap_is_double_within(lop_cell(t, "rds", 8, "", "lop_err"), rds / 10 - 1, 1e-3,
				     "relative error against p50");
		tap_ok(isnan(lop_cell(t, "mpi", 8, "", "lop_us")), "the host MPI's rows are not predicted");
		tap_is_double_within(lop_cell(t, "ds", 8, "", "measured_us"), 4.9, 1e-9,
				     "a row's back-to-back loop (its median, b2b_p50_us) is what is "
				     "predicted...");
		tap_is_double_within(lop_cell(t, "ds", 8, "", "lop_err"),
				     lop_cell(t, "ds", 8, "", "lop_us") / 4.9 - 1, 1e-3, "... and the error's base");
		tap_is_double_within(lop_cell(t, "ds", 8, "", "p50_us"), 10.0, 1e-9, "... p50 kept beside it");
		ibc_csv_table_free(t);
	} else {
		tap_ok(0, "lop-model.csv readable");
	}
	snprintf(path, sizeof(path), "%s/lop-extrapolation.csv", dir);
	t = NULL;
	if (ibc_csv_read(path, &t) == IBC_OK) {
		double rds64 = lop_cell(t, "rds", 65536, "", "lop_us");

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
	test_round_negative(&mo);
	test_nocopy(&mo);
	test_b2b(&mo);
	test_measured(&mo);
	test_placement(&mo);
	test_placement_n(&mo);
	lop_dir_remove(dir);
	fclose(devnull);
	return tap_done();
}
