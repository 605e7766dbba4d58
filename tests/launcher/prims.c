/* Primitives of ibchar-launch (barrier, gather, allgather, bcast, scatter,
 * alltoall, send/recv, put/fence/get) with data checks, 1..64 processes over
 * 1..8 hosts, tree and flat mode, every cache policy; counters checked as
 * chapter 3 of the thesis says.  Started with PMI_FD set, this binary is the
 * worker that the launcher runs. */
#include "tap.h"
#include "lt_util.h"
#include "boot/boot.h"
#include "launcher/client.h"
#include "launcher/proto.h"
#include "core/status.h"

#include <stdarg.h>
#include <stdint.h>

extern const struct ibc_boot_ops ibc_boot_launcher_ops;

static int w_rank = -1, w_failed;

/* A worker check: reports on stderr and marks the worker failed (the launcher
 * then ends the job with this rank's status). */
static void check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	if (cond)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "rank %d: check failed: ", w_rank);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	w_failed = 1;
}
#define CHECK check

static int worker(int nomiss, int rounds)
{
	struct ibc_boot *b = NULL;
	struct ibc_launch_client *c;
	int rank = -1, n, i, rc, round;
	uint32_t v, *all;
	unsigned char buf[256], big[4096];
	size_t len;

	rc = ibc_boot_open(NULL, 1, &b); /* auto: PMI_FD picks the launcher backend */
	CHECK(rc == IBC_OK && b->ops == &ibc_boot_launcher_ops, "open: %d", rc);
	if (rc != IBC_OK)
		return 1;
	rank = w_rank = b->rank;
	n = b->size;
	c = b->priv;
	CHECK(rank == atoi(getenv("PMI_RANK")) && n == atoi(getenv("PMI_SIZE")), "rank/size env");
	CHECK(b->local_rank < b->local_size && b->node_id < b->num_nodes, "local/node ids");
	CHECK(ibc_boot_barrier(b) == IBC_OK, "barrier");
	all = calloc((size_t)n, sizeof(*all));
	v = (uint32_t)rank * 7u + 1u;
	CHECK(ibc_boot_allgather(b, &v, all, sizeof(v)) == IBC_OK, "allgather");
	for (i = 0; i < n; i++)
		CHECK(all[i] == (uint32_t)i * 7u + 1u, "allgather[%d] = %u", i, all[i]);
	memset(all, 0, (size_t)n * sizeof(*all));
	v = (uint32_t)rank + 100u;
	CHECK(ibc_boot_gather(b, &v, all, sizeof(v), n - 1) == IBC_OK, "gather");
	if (rank == n - 1)
		for (i = 0; i < n; i++)
			CHECK(all[i] == (uint32_t)i + 100u, "gather[%d] = %u", i, all[i]);
	for (i = 0; i < 100; i++)
		buf[i] = rank == n / 2 ? (unsigned char)(i * 3 + 1) : 0;
	CHECK(ibc_boot_bcast(b, buf, 100, n / 2) == IBC_OK, "bcast");
	for (i = 0; i < 100; i++)
		CHECK(buf[i] == (unsigned char)(i * 3 + 1), "bcast[%d]", i);
	/* scatter from 0: block i holds i * 3 */
	for (i = 0; i < n; i++)
		all[i] = (uint32_t)i * 3u;
	CHECK(ibc_launch_client_coll(c, IBC_LAUNCH_COLL_SCATTER, 0, all, rank == 0 ? (size_t)n * 4 : 0, &v,
				     sizeof(v), &len) == IBC_OK && len == 4, "scatter");
	CHECK(v == (uint32_t)rank * 3u, "scatter value %u", v);
	/* alltoall: block for d from s is s * 1000 + d */
	{
		uint32_t *s = calloc((size_t)n, 4), *r = calloc((size_t)n, 4);

		for (i = 0; i < n; i++)
			s[i] = (uint32_t)rank * 1000u + (uint32_t)i;
		CHECK(ibc_launch_client_coll(c, IBC_LAUNCH_COLL_ALLTOALL, 0, s, (size_t)n * 4, r, (size_t)n * 4,
					     &len) == IBC_OK && len == (size_t)n * 4, "alltoall");
		for (i = 0; i < n; i++)
			CHECK(r[i] == (uint32_t)i * 1000u + (uint32_t)rank, "alltoall[%d] = %u", i, r[i]);
		free(s);
		free(r);
	}
	/* ring send/recv, then a recv from any source */
	{
		int src = -2;

		v = (uint32_t)rank;
		CHECK(ibc_launch_client_send(c, (rank + 1) % n, 5, &v, 4) == IBC_OK, "send");
		CHECK(ibc_launch_client_send(c, (rank + n - 1) % n, 6, &v, 4) == IBC_OK, "send 2");
		CHECK(ibc_launch_client_recv(c, (rank + n - 1) % n, 5, &v, 4, &len, &src) == IBC_OK && len == 4,
		      "recv");
		CHECK(v == (uint32_t)((rank + n - 1) % n) && src == (rank + n - 1) % n, "recv value %u", v);
		CHECK(ibc_launch_client_recv(c, -1, 6, &v, 4, &len, &src) == IBC_OK, "recv any");
		CHECK(v == (uint32_t)((rank + 1) % n) && src == (rank + 1) % n, "recv any value %u from %d", v, src);
	}
	/* bulletin board, in stages like MPI_Init: put, fence, gets of every rank */
	for (round = 0; round < rounds; round++) {
		char key[64], want[128];

		snprintf(key, sizeof(key), "r%d-k%d", round, rank);
		len = (size_t)snprintf((char *)big, sizeof(big), "value-%d-of-rank-%d-padding-padding", round, rank);
		CHECK(ibc_boot_put(b, key, big, len) == IBC_OK, "put");
		CHECK(ibc_boot_fence(b) == IBC_OK, "fence");
		for (i = 0; i < n; i++) {
			int peer = (rank + i) % n;

			snprintf(key, sizeof(key), "r%d-k%d", round, peer);
			snprintf(want, sizeof(want), "value-%d-of-rank-%d-padding-padding", round, peer);
			CHECK(ibc_boot_get(b, key, big, sizeof(big), &len) == IBC_OK, "get %s", key);
			CHECK(len == strlen(want) && memcmp(big, want, len) == 0, "get %s value", key);
		}
	}
	if (!nomiss)
		CHECK(ibc_boot_get(b, "no-such-key", big, sizeof(big), &len) == IBC_ERR_NOTFOUND, "missing key");
	CHECK(ibc_boot_barrier(b) == IBC_OK, "last barrier");
	free(all);
	CHECK(ibc_boot_close(b) == IBC_OK, "close");
	return w_failed;
}

struct row {
	int agent;
	unsigned long long v[11];
};

/* Reads the --stats-csv file: rows[agent] (agent 0 = launcher). */
static int read_stats(const char *path, struct row *rows, int max)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int n = 0;

	if (f == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f) && n < max) {
		char *save = NULL, *tok = strtok_r(line, ",", &save);
		int col = 0;

		for (; tok; tok = strtok_r(NULL, ",", &save), col++) {
			if (col == 5)
				rows[n].agent = atoi(tok);
			else if (col >= 7 && col < 18)
				rows[n].v[col - 7] = strtoull(tok, NULL, 10);
		}
		n++;
	}
	fclose(f);
	return n;
}
enum { C_MSENT, C_BSENT, C_MRECV, C_BRECV, C_PUTS, C_GETS, C_HITS, C_MISSES, C_ENTRIES, C_HWM, C_EVICT };

static char launcher[PATH_MAX], self[PATH_MAX];

static int run_job(int np, int nhosts, const char *rsh, const char *extra, const char *wargs, const char *csv)
{
	char cmd[16384], hosts[1024] = "";
	int i;

	for (i = 1; i <= nhosts; i++) {
		char h[32];

		snprintf(h, sizeof(h), "%s%s%d", i > 1 ? "," : "", strcmp(rsh, "local") == 0 ? "fake" : "ibc-h", i);
		strcat(hosts, h);
	}
	snprintf(cmd, sizeof(cmd), "%s -n %d --hosts %s --rsh '%s' --timeout 30 %s %s%s -- %s worker %s",
		 launcher, np, hosts, rsh, extra, csv ? "--stats-csv " : "", csv ? csv : "", self, wargs);
	return lt_run(cmd);
}

static void sweep(const char *rsh)
{
	static const struct { int np, nh; const char *extra; } cases[] = {
		{ 1, 1, "" }, { 2, 1, "" }, { 3, 2, "" }, { 5, 3, "--degree 1" }, { 16, 4, "" },
		{ 24, 8, "--degree 2" }, { 64, 8, "" },
		{ 1, 1, "--mode flat" }, { 7, 3, "--mode flat" }, { 64, 8, "--mode flat" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = run_job(cases[i].np, cases[i].nh, rsh, cases[i].extra, "", NULL);

		tap_is_int(rc, 0, "%s: %d processes on %d hosts %s", rsh, cases[i].np, cases[i].nh, cases[i].extra);
	}
}

static void caches(const char *rsh)
{
	static const char *const pol[] = { "hcs", "hcma", "hcmab", "hcmab-lru" };
	struct row rows[4][16];
	int nrows[4], p, i;
	char csv[64], extra[128];

	for (p = 0; p < 4; p++) {
		snprintf(csv, sizeof(csv), "/tmp/ibc-launch-stats-%d-%d.csv", (int)getpid(), p);
		snprintf(extra, sizeof(extra), "--cache %s --degree 2 %s", pol[p],
			 p == 3 ? "--cache-bytes 2K" : "");
		tap_is_int(run_job(32, 8, rsh, extra, "--no-miss --rounds 3", csv), 0, "%s: cache %s gives the same answers",
			   rsh, pol[p]);
		nrows[p] = read_stats(csv, rows[p], 16);
		unlink(csv);
		tap_is_int(nrows[p], 9, "cache %s: counters of the launcher and 8 agents", pol[p]);
	}
	/* HCS: NLAs miss and forward gets; HCMAB serves all gets locally */
	{
		unsigned long long miss[4] = { 0 }, hits[4] = { 0 }, gets[4] = { 0 }, hwm_max[4] = { 0 };

		for (p = 0; p < 4; p++)
			for (i = 0; i < nrows[p]; i++) {
				if (rows[p][i].agent == 0)
					continue;
				miss[p] += rows[p][i].v[C_MISSES];
				hits[p] += rows[p][i].v[C_HITS];
				gets[p] += rows[p][i].v[C_GETS];
				if (rows[p][i].v[C_HWM] > hwm_max[p])
					hwm_max[p] = rows[p][i].v[C_HWM];
			}
		tap_ok(miss[0] > 0, "hcs: NLAs forward gets they miss (%llu misses)", miss[0]);
		tap_ok(miss[2] == 0 && hits[2] == gets[2] && gets[2] > 0,
		       "hcmab: every get served by the local NLA (%llu hits, %llu misses)", hits[2], miss[2]);
		tap_ok(hwm_max[3] <= 2048, "hcmab-lru: NLA cache stays under 2 KiB (high-water %llu)", hwm_max[3]);
		tap_ok(hwm_max[2] > 2048, "hcmab: NLA caches hold everything (high-water %llu)", hwm_max[2]);
		/* messages into the root: aggregation (HCMA) sends fewer than HCS */
		{
			unsigned long long r0 = 0, r1 = 0;

			for (i = 0; i < nrows[0]; i++)
				if (rows[0][i].agent == 0)
					r0 = rows[0][i].v[C_MRECV];
			for (i = 0; i < nrows[1]; i++)
				if (rows[1][i].agent == 0)
					r1 = rows[1][i].v[C_MRECV];
			tap_ok(r1 < r0, "hcma: the root receives fewer messages than with hcs (%llu < %llu)", r1, r0);
		}
	}
}

int main(int argc, char **argv)
{
	char why[128];
	int mine;

	if (getenv("PMI_FD") != NULL && argc >= 2 && strcmp(argv[1], "worker") == 0) {
		int nomiss = 0, rounds = 1, i;

		for (i = 2; i < argc; i++) {
			if (strcmp(argv[i], "--no-miss") == 0)
				nomiss = 1;
			else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
				rounds = atoi(argv[++i]);
		}
		return worker(nomiss, rounds);
	}
	lt_launcher(argv[0], launcher, sizeof(launcher));
	lt_self(argv[0], self, sizeof(self));
	tap_plan_none();
	/* without root: hosts are names only, everything on this machine */
	sweep("local");
	caches("local");
	if (!lt_netns_ok(why, sizeof(why))) {
		tap_skip(1, "network namespaces: %s", why);
		return tap_done();
	}
	/* take the hosts down at the end only when this test made them */
	mine = lt_run("ip netns list 2>/dev/null | grep -q '^ibc-h1\\b'") != 0;
	if (lt_run("scripts/testhosts up 8 >/dev/null") != 0) {
		tap_ok(0, "scripts/testhosts up 8");
		return tap_done();
	}
	sweep("ip netns exec {host}");
	caches("ip netns exec {host}");
	if (mine)
		tap_is_int(lt_run("scripts/testhosts down"), 0, "testhosts down");
	return tap_done();
}
