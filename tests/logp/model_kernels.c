/* The LoP model's kernels for particular rounds, on a synthetic results
 * directory (tests/lib/lopsynth.h): the send rounds by rtt-pool-1n, RGM's
 * release by rtt-mcast, the exchange rounds by xchg-write and xchg-pool,
 * the all-to-alls' block rounds by the readout kernels and their copies by
 * copy-peer-flag, the writes into user memory by os-write-user-all.  Each
 * is costed by its kernel where the run measured it and as before (with
 * the note) where it did not. */
#include "lopsynth.h"
#include "core/status.h"
#include "logp/logp_fits.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

	lop_results_open(dir);
	lop_kernels();
	for (s = 0; s < 2; s++)
		for (p = 1; p <= 7; p++)
			lop_row("logp", "rtt-pool-1n", 8, s ? 4096 : 1, p, rtt_q(p, s ? 2 : 1), "");
	lop_row("barrier", "pe", 8, 0, 0, 10.0, "");
	lop_row("barrier", "rds", 8, 0, 0, 10.0, "");
	lop_row("barrier", "rgm", 8, 0, 7, 10.0, "");
	out = lop_model_said(&mo, dir, "pool");
	while (out != NULL && fgets(line, sizeof(line), out) != NULL)
		said += strstr(line, "send rounds: costed by rtt-pool-1n") != NULL;
	if (out != NULL)
		fclose(out);
	tap_is_int(said, 1, "pool: stdout says the send rounds are costed by rtt-pool-1n");
	snprintf(path, sizeof(path), "%s/lop-model.csv", dir);
	if (ibc_csv_read(path, &t) == IBC_OK) {
		tap_is_double_within(lop_cell(t, "pe", 8, "", "lop_rtt_us"), 3 * rtt_q(1, 1) / 2, 1e-3,
				     "pool: LoP-RTT pe N=8: 3 RTT_pool(1)/2");
		tap_is_double_within(lop_cell(t, "pe", 8, "", "lop_us"), 3 * (rtt_q(1, 1) / 2 - os_s(1, 1)),
				     1e-3, "pool: LoP pe N=8: 3 (RTT_pool(1)/2 - o_s(1))");
		tap_is_double_within(lop_cell(t, "rds", 8, "", "lop_rtt_us"), 3 * rtt_w(1, 1) / 2, 1e-3,
				     "pool: LoP-RTT rds: its write rounds as before");
		tap_is_double_within(lop_cell(t, "rgm", 8, "7", "lop_rtt_us"),
				     7 * rtt_w(7, 1) / 2 + rtt_s(1, 1) / 2, 1e-3,
				     "pool: LoP-RTT rgm l=7: the multicast release by the bare send");
		tap_ok(strstr(lop_scell(t, "pe", 8, "", "note"), "send~raw") == NULL,
		       "pool: pe's note does not say send~raw ('%s')", lop_scell(t, "pe", 8, "", "note"));
		ibc_csv_table_free(t);
	} else {
		tap_ok(0, "pool: lop-model.csv readable");
	}
	lop_dir_remove(dir);
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

		lop_results_open(dir);
		lop_kernels();
		lop_row("logp", "rtt-mcast", 8, 1, 0, rtt_m[i], "kernel=rtt-mcast;op=mcast;p=1");
		lop_row("barrier", "rgm", 8, 0, 7, 10.0, "");
		lop_row("barrier", "rds", 8, 0, 0, 10.0, "");
		snprintf(label, sizeof(label), "mcast %.1f", rtt_m[i]);
		said = 0;
		t = lop_model_table(&mo, dir, label, "multicast release: costed by rtt-mcast", &said);
		tap_is_int(said, 1, "%s: stdout says the release is costed by rtt-mcast", label);
		tap_ok(strstr(lop_scell(t, "rgm", 8, "7", "note"), "mcast~send") == NULL,
		       "%s: rgm's note does not say mcast~send ('%s')", label,
		       lop_scell(t, "rgm", 8, "7", "note"));
		tap_is_double_within(lop_cell(t, "rds", 8, "", "lop_rtt_us"), 3 * rtt_w(1, 1) / 2, 1e-3,
				     "%s: LoP-RTT rds: no multicast, as before", label);
		if (i == 0) {
			tap_is_double_within(lop_cell(t, "rgm", 8, "7", "lop_rtt_us"),
					     7 * rtt_w(7, 1) / 2 + (rtt_m[i] - rtt_w(1, 1) / 2), 1e-3,
					     "%s: LoP-RTT rgm l=7: the gather, then RTT_mcast - "
					     "RTT_write(1)/2", label);
			tap_is_double_within(lop_cell(t, "rgm", 8, "7", "lop_us"),
					     7 * rtt_w(7, 1) / 2 - 6 * os_w(7, 1) - 7 * os_w(1, 1) +
						     (rtt_m[i] - rtt_w(1, 1) / 2) - os_s(1, 1),
					     1e-3, "%s: LoP rgm l=7: the release's one way less o_s(1)",
					     label);
		} else {
			tap_ok(lop_scell(t, "rgm", 8, "7", "lop_rtt_us")[0] == '\0' &&
			       lop_scell(t, "rgm", 8, "7", "lop_us")[0] == '\0',
			       "%s: rgm: no LoP or LoP-RTT number ('%s', '%s')", label,
			       lop_scell(t, "rgm", 8, "7", "lop_rtt_us"), lop_scell(t, "rgm", 8, "7", "lop_us"));
			tap_ok(strstr(lop_scell(t, "rgm", 8, "7", "lop_rtt_status"), "multicast") != NULL,
			       "%s: rgm's LoP-RTT status says why ('%s')", label,
			       lop_scell(t, "rgm", 8, "7", "lop_rtt_status"));
		}
		ibc_csv_table_free(t);
		lop_dir_remove(dir);
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
	double rds[3], rds_lop[3], ds_lop[3], rpe[3], ds[3], pe[3], de[3], x = 1.5, y = 2.5;
	double half = rtt_w(1, 1) / 2, shalf = rtt_s(1, 1) / 2;
	char note[3][128], dsnote[3][128];
	int d, said[3] = { 0, 0, 0 };

	for (d = 0; d < 3; d++) {
		char dir[] = "/tmp/ibc-lopxXXXXXX";

		lop_results_open(dir);
		lop_kernels();
		if (d >= 1) {
			lop_row("logp", "xchg-write", 8, 1, 0, x, "kernel=xchg;op=write;p=1;pairs=4");
			lop_row("logp", "xchg-write", 8, 4096, 0, x, "kernel=xchg;op=write;p=1;pairs=4");
		}
		if (d == 2) {
			lop_row("logp", "xchg-pool", 8, 1, 0, y, "kernel=xchg;op=send;p=1;pairs=4");
			lop_row("logp", "xchg-pool", 8, 4096, 0, y, "kernel=xchg;op=send;p=1;pairs=4");
		}
		lop_row("barrier", "rds", 8, 0, 0, 10.0, "");
		lop_row("barrier", "rpe", 6, 0, 0, 10.0, "");
		lop_row("barrier", "ds", 8, 0, 0, 10.0, "");
		lop_row("barrier", "pe", 6, 0, 0, 10.0, "");
		lop_row("alltoall", "de", 8, 4096, 0, 10.0, "");
		t = lop_model_table(&mo, dir, lab[d], says[d], &said[d]);
		rds[d] = lop_cell(t, "rds", 8, "", "lop_rtt_us");
		rds_lop[d] = lop_cell(t, "rds", 8, "", "lop_us");
		ds_lop[d] = lop_cell(t, "ds", 8, "", "lop_us");
		rpe[d] = lop_cell(t, "rpe", 6, "", "lop_rtt_us");
		ds[d] = lop_cell(t, "ds", 8, "", "lop_rtt_us");
		pe[d] = lop_cell(t, "pe", 6, "", "lop_rtt_us");
		de[d] = lop_cell(t, "de", 8, "", "lop_rtt_us");
		snprintf(note[d], sizeof(note[d]), "%s", lop_scell(t, "rds", 8, "", "note"));
		snprintf(dsnote[d], sizeof(dsnote[d]), "%s", lop_scell(t, "ds", 8, "", "note"));
		ibc_csv_table_free(t);
		lop_dir_remove(dir);
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
	tap_ok(de[1] == de[0] && de[2] == de[0] && de[0] > 0,
	       "xchg: de N=8's rounds, every rank to 7 peers at once, are no pair's exchange: "
	       "they do not move (%.4f)", de[0]);
	tap_ok(rds_lop[1] == rds_lop[0] && rds_lop[2] == rds_lop[0] && ds_lop[2] == ds_lop[0],
	       "xchg: LoP as printed does not move (rds %.4f, ds %.4f)", rds_lop[2], ds_lop[2]);
	tap_ok(strstr(note[0], "xchg~half") != NULL && strstr(note[1], "xchg~half") == NULL &&
		       strstr(dsnote[1], "xchg~half") != NULL && strstr(dsnote[2], "xchg~half") == NULL,
	       "xchg: the note xchg~half where an exchange's kernel has no rows (rds '%s', ds '%s'), "
	       "not where it has (rds '%s', ds '%s')", note[0], dsnote[1], note[1], dsnote[2]);
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
		lop_results_open(dir[d]);
		lop_kernels();
		for (p = 1; d >= 1 && p <= 7; p++) {
			lop_row("logp", "rtt-write-readout-1n", 8, 1, p, rtt_r(p, 1), "");
			lop_row("logp", "rtt-write-readout-1n", 8, 4096, p, rtt_r(p, 2), "");
		}
		for (p = 1; d == 2 && p <= 7; p++) {
			lop_row("logp", "rtt-write-readout-flag-1n", 8, 1, p, rtt_f(p, 1), "");
			lop_row("logp", "rtt-write-readout-flag-1n", 8, 4096, p, rtt_f(p, 2), "");
		}
		lop_row("alltoall", "hrwg", 8, 4096, 0, 10.0, "");
		lop_row("barrier", "rds", 8, 0, 0, 10.0, "");
		t = lop_model_table(&mo, dir[d], d == 2 ? "flag" : d ? "readout" : "no readout", says[d],
				    &said[d]);
		for (k = 0; k < 2; k++)
			v[d][k] = lop_cell(t, "hrwg", 8, "", col[k]);
		rds[d] = lop_cell(t, "rds", 8, "", "lop_rtt_us");
		snprintf(note[d], sizeof(note[d]), "%s", lop_scell(t, "hrwg", 8, "", "note"));
		ibc_csv_table_free(t);
		lop_dir_remove(dir[d]);
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
		lop_results_open(dir[d]);
		lop_kernels();
		if (d == 1) {
			lop_row("logp", "copy-peer-flag", 8, 1, 0, cp_peer_flag(1),
				"kernel=copy;from=peer;p=1;flag=own-line");
			lop_row("logp", "copy-peer-flag", 8, 4096, 0, cp_peer_flag(4096),
				"kernel=copy;from=peer;p=1;flag=own-line");
		}
		lop_row("alltoall", "hrwg", 8, 4096, 0, 10.0, "");
		lop_row("alltoall", "hypercube", 8, 4096, 0, 10.0, "eager_max=65536");
		t = lop_model_table(&mo, dir[d], d ? "peer flag" : "no peer flag", says[d], &said[d]);
		tap_is_double_within(lop_cell(t, "hrwg", 8, "", "copy_us"), want[d], 1e-6,
				     "%s: hrwg N=8 copies: 9 own blocks, 7 received out by %s = %.4f",
				     d ? "peer flag" : "no peer flag", d ? "copy-peer-flag" : "copy-peer",
				     want[d]);
		tap_ok((strstr(lop_scell(t, "hrwg", 8, "", "note"), "peer~inblock") != NULL) == !d,
		       "... its note %s peer~inblock ('%s')", d ? "without" : "with",
		       lop_scell(t, "hrwg", 8, "", "note"));
		tap_is_double_within(lop_cell(t, "hypercube", 8, "", "copy_us"), hcube, 1e-3 * hcube,
				     "... hypercube's eager copies stay on copy-peer (%.4f), no "
				     "peer~inblock ('%s')", hcube, lop_scell(t, "hypercube", 8, "", "note"));
		tap_ok(strstr(lop_scell(t, "hypercube", 8, "", "note"), "peer~inblock") == NULL,
		       "... hypercube's note has no peer~inblock");
		tap_is_int(said[d], 1, "... stdout: '%s'", says[d]);
		ibc_csv_table_free(t);
		lop_dir_remove(dir[d]);
	}
}

/* HRWG's steps as exchanges of blocks: at N = 2 (one step, its 4096 B
 * block) and N = 8 (three steps of four 1024 B blocks, 4096 B a step), run
 * without the block exchange kernel's rows, with them (xchg-write-readout-
 * flag 1.2 us at 1 B, 3.0 at 4096 B, and copy-peer-flag), and with a kernel
 * faster than its own copy (0.05 us).  With them, LoP-RTT costs each step
 * the kernel less its copy out, which the copy term adds; without them, or
 * when the difference is not a time, the round trips as before, note
 * xblk~rtt.  LoP as printed and the two-sided hypercube do not move. */
static void test_xchg_blocks(const struct ibc_logp_model_opts *base)
{
	static const char *const lab[] = { "no xblk", "xblk", "xblk<copy" };
	static const char *const says[] = { "exchange rounds of blocks: costed by the round trips",
					    "exchange rounds of blocks: costed in LoP-RTT by "
					    "xchg-write-readout-flag less copy-peer-flag",
					    "exchange rounds of blocks: costed in LoP-RTT by "
					    "xchg-write-readout-flag" };
	const double k[3][2] = { { 0, 0 }, { 1.2, 3.0 }, { 0.05, 0.05 } };
	struct ibc_logp_model_opts mo = *base;
	double comm2[3], comm8[3], lop8[3], hc[3], step = 3.0 - cp_peer_flag(4096);
	char note[3][160];
	int d, said[3] = { 0, 0, 0 };

	for (d = 0; d < 3; d++) {
		char dir[] = "/tmp/ibc-lopbXXXXXX";
		struct ibc_csv_table *t;

		lop_results_open(dir);
		lop_kernels();
		lop_row("logp", "copy-peer-flag", 2, 1, 0, cp_peer_flag(1),
			"kernel=copy;from=peer;p=1;flag=own-line");
		lop_row("logp", "copy-peer-flag", 2, 4096, 0, cp_peer_flag(4096),
			"kernel=copy;from=peer;p=1;flag=own-line");
		lop_row("logp", "copy-peer-flag", 8, 1, 0, cp_peer_flag(1),
			"kernel=copy;from=peer;p=1;flag=own-line");
		lop_row("logp", "copy-peer-flag", 8, 4096, 0, cp_peer_flag(4096),
			"kernel=copy;from=peer;p=1;flag=own-line");
		if (d > 0) {
			int n;

			for (n = 2; n <= 8; n += 6) {
				lop_row("logp", "xchg-write-readout-flag", n, 1, 0, k[d][0],
					"kernel=xchg;op=write;p=1;readout=1;flag=own-line");
				lop_row("logp", "xchg-write-readout-flag", n, 4096, 0, k[d][1],
					"kernel=xchg;op=write;p=1;readout=1;flag=own-line");
			}
		}
		lop_row("alltoall", "hrwg", 2, 4096, 0, 10.0, "");
		lop_row("alltoall", "hrwg", 8, 1024, 0, 10.0, "");
		lop_row("alltoall", "hypercube", 8, 1024, 0, 10.0, "eager_max=65536");
		t = lop_model_table(&mo, dir, lab[d], says[d], &said[d]);
		comm2[d] = lop_cell(t, "hrwg", 2, "", "lop_rtt_us") - lop_cell(t, "hrwg", 2, "", "copy_us");
		comm8[d] = lop_cell(t, "hrwg", 8, "", "lop_rtt_us") - lop_cell(t, "hrwg", 8, "", "copy_us");
		lop8[d] = lop_cell(t, "hrwg", 8, "", "lop_us");
		hc[d] = lop_cell(t, "hypercube", 8, "", "lop_rtt_us");
		snprintf(note[d], sizeof(note[d]), "%s", lop_scell(t, "hrwg", 8, "", "note"));
		ibc_csv_table_free(t);
		lop_dir_remove(dir);
	}
	tap_ok(said[0] == 1 && said[1] == 1 && said[2] == 1,
	       "xblk: stdout says how HRWG's steps are costed: by the round trips without the "
	       "kernel's rows, by xchg-write-readout-flag less copy-peer-flag with them");
	tap_is_double_within(comm2[1], step, 1e-3,
			     "xblk: LoP-RTT hrwg N=2 4096 B, less its copies: one step, the kernel less "
			     "its copy out = %.4f (round trips: %.4f)", step, comm2[0]);
	tap_is_double_within(comm8[1], 3 * step, 1e-3,
			     "xblk: LoP-RTT hrwg N=8 1024 B blocks, less its copies: 3 steps of 4096 B "
			     "= %.4f (round trips: %.4f)", 3 * step, comm8[0]);
	tap_ok(fabs(comm2[2] - comm2[0]) < 1e-9 && fabs(comm8[2] - comm8[0]) < 1e-9 &&
		       comm8[0] > 0 && fabs(comm8[0] - comm8[1]) > 0.1,
	       "xblk: a kernel faster than its copy (0.05 us) leaves the steps to the round trips "
	       "(%.4f = %.4f)", comm8[2], comm8[0]);
	tap_ok(strstr(note[0], "xblk~rtt") != NULL && strstr(note[1], "xblk~rtt") == NULL &&
		       strstr(note[2], "xblk~rtt") != NULL,
	       "xblk: hrwg's note says xblk~rtt without the kernel's rows ('%s') and when it is "
	       "faster than its copy ('%s'), not otherwise ('%s')", note[0], note[2], note[1]);
	tap_ok(lop8[1] == lop8[0] && lop8[2] == lop8[0] && hc[1] == hc[0] && hc[2] == hc[0],
	       "xblk: LoP as printed (%.4f) and the two-sided hypercube (%.4f) do not move", lop8[0],
	       hc[0]);
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
		lop_results_open(dir[d]);
		lop_kernels();
		for (p = 1; d == 1 && p <= 7; p++) {
			lop_row("logp", "os-write-user-all", 8, 1, p, os_ua(p, 1), "");
			lop_row("logp", "os-write-user-all", 8, 4096, p, os_ua(p, 2), "");
		}
		lop_row("alltoall", "de", 8, 4096, 0, 10.0, "");
		t = lop_model_table(&mo, dir[d], d ? "user-all" : "no user-all",
				    d ? "user-write term: each write into a peer's user memory (user_us), "
				    "costed by the logp kernel os-write-user-all"
				  : "user-write term: costed by os-write-user (rank 0 writing alone)",
				&said[d]);
		for (k = 0; k < 3; k++)
			v[d][k] = lop_cell(t, "de", 8, "", col[k]);
		u[d] = lop_cell(t, "de", 8, "", "user_write_us");
		snprintf(note[d], sizeof(note[d]), "%s", lop_scell(t, "de", 8, "", "note"));
		ibc_csv_table_free(t);
		lop_dir_remove(dir[d]);
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

int main(void)
{
	struct ibc_logp_model_opts mo;
	FILE *devnull = fopen("/dev/null", "w");

	tap_plan_none();
	lop_model_opts_init(&mo);
	mo.out = devnull;
	test_pool(&mo);
	test_mcast(&mo);
	test_xchg(&mo);
	test_xchg_blocks(&mo);
	test_readout(&mo);
	test_peer_flag(&mo);
	test_user_all(&mo);
	fclose(devnull);
	return tap_done();
}
