/* The tcp bootstrap on loopback: the test forks 4 processes, gives each its
 * IBC_BOOT_* environment (rank 0 starts late so the others must retry their
 * connect), and every rank checks every collective.  Each child sends its
 * per-check results to the parent through a pipe; the parent prints TAP.
 * A second job checks that a length mismatch is a protocol error and that
 * an abort reaches every rank instead of leaving it hanging. */
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "tap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NPROCS 4
#define MAX_CHECKS 32
#define BIG (1u << 20)
#define JOB_TIMEOUT_S 20

struct results {
	int n;
	int ok[MAX_CHECKS];
	char name[MAX_CHECKS][64];
};

static void check(struct results *res, int cond, const char *name)
{
	if (res->n >= MAX_CHECKS)
		return;
	res->ok[res->n] = cond != 0;
	snprintf(res->name[res->n], sizeof(res->name[0]), "%s", name);
	res->n++;
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return ntohs(sa.sin_port);
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* node names a, b, a, b: nodes {0, 2} and {1, 3} */
static const char *const node_names[NPROCS] = { "nodeA", "nodeB", "nodeA", "nodeB" };

static void job_good(int rank, struct results *res)
{
	struct ibc_boot *b = NULL;
	if (rank == 0)
		nap_ms(300); /* the others must retry until rank 0 listens */
	int rc = ibc_boot_tcp_open(&b);
	check(res, rc == IBC_OK && b, "open");
	if (rc != IBC_OK || !b)
		return;
	check(res, b->rank == rank && b->size == NPROCS, "rank and size");
	check(res, strcmp(b->ops->name, "tcp") == 0, "backend name");
	check(res, b->num_nodes == 2 && b->node_id == rank % 2, "node id from the node name");
	check(res, b->local_size == 2 && b->local_rank == rank / 2, "local rank and size");

	/* small odd-sized allgather */
	unsigned char mine[13], all[13 * NPROCS];
	for (int i = 0; i < 13; i++)
		mine[i] = (unsigned char)(rank * 31 + i);
	rc = ibc_boot_allgather(b, mine, all, sizeof(mine));
	int ok = rc == IBC_OK;
	for (int r = 0; r < NPROCS && ok; r++)
		for (int i = 0; i < 13; i++)
			ok &= all[r * 13 + i] == (unsigned char)(r * 31 + i);
	check(res, ok, "allgather 13 bytes");

	/* 1 MiB per rank: partial reads and writes on the sockets */
	unsigned char *big = malloc(BIG), *bigall = malloc((size_t)BIG * NPROCS);
	ok = big && bigall;
	if (ok) {
		for (unsigned i = 0; i < BIG; i++)
			big[i] = (unsigned char)(i * 7 + (unsigned)rank);
		ok = ibc_boot_allgather(b, big, bigall, BIG) == IBC_OK;
		for (int r = 0; r < NPROCS && ok; r++)
			for (unsigned i = 0; i < BIG; i += 4093)
				ok &= bigall[(size_t)r * BIG + i] == (unsigned char)(i * 7 + (unsigned)r);
	}
	check(res, ok, "allgather 1 MiB per rank");
	free(big);
	free(bigall);

	/* gather to rank 2 and to rank 0 */
	int val = 100 + rank, got[NPROCS];
	for (int root = 2; root >= 0; root -= 2) {
		memset(got, 0, sizeof(got));
		rc = ibc_boot_gather(b, &val, got, sizeof(val), root);
		ok = rc == IBC_OK;
		if (rank == root)
			for (int r = 0; r < NPROCS; r++)
				ok &= got[r] == 100 + r;
		check(res, ok, root ? "gather to rank 2" : "gather to rank 0");
	}

	/* bcast from rank 3 and rank 0 */
	for (int root = 3; root >= 0; root -= 3) {
		char msg[32] = "";
		if (rank == root)
			snprintf(msg, sizeof(msg), "hello from %d", root);
		rc = ibc_boot_bcast(b, msg, sizeof(msg), root);
		char want[32];
		snprintf(want, sizeof(want), "hello from %d", root);
		check(res, rc == IBC_OK && strcmp(msg, want) == 0,
		      root ? "bcast from rank 3" : "bcast from rank 0");
	}

	check(res, ibc_boot_barrier(b) == IBC_OK, "barrier");

	/* bulletin board */
	char key[32], v[64];
	snprintf(key, sizeof(key), "ep-%d", rank);
	snprintf(v, sizeof(v), "endpoint of rank %d", rank);
	rc = ibc_boot_put(b, key, v, strlen(v) + 1);
	if (rank == 1)
		rc |= ibc_boot_put(b, "shared", "one", 4);
	if (rank == 3)
		rc |= ibc_boot_put(b, "shared", "three", 6);
	check(res, rc == IBC_OK, "put");
	check(res, ibc_boot_fence(b) == IBC_OK, "fence");
	ok = 1;
	for (int r = 0; r < NPROCS; r++) {
		char k[32], w[64], buf[64];
		size_t len = 0;
		snprintf(k, sizeof(k), "ep-%d", r);
		snprintf(w, sizeof(w), "endpoint of rank %d", r);
		ok &= ibc_boot_get(b, k, buf, sizeof(buf), &len) == IBC_OK && len == strlen(w) + 1 &&
		      strcmp(buf, w) == 0;
	}
	check(res, ok, "get every rank's key after the fence");
	char sv[8];
	size_t sl = 0;
	check(res, ibc_boot_get(b, "shared", sv, sizeof(sv), &sl) == IBC_OK && sl == 6 &&
			   strcmp(sv, "three") == 0,
	      "same key put by two ranks: the higher rank wins");
	check(res, ibc_boot_get(b, "nobody-put-this", sv, sizeof(sv), &sl) == IBC_ERR_NOTFOUND,
	      "get of a missing key is NOTFOUND");
	/* a second fence with nothing new keeps the board */
	check(res, ibc_boot_fence(b) == IBC_OK &&
			   ibc_boot_get(b, "ep-0", v, sizeof(v), &sl) == IBC_OK,
	      "empty fence keeps the board");

	check(res, ibc_boot_close(b) == IBC_OK, "close");
}

static void job_bad(int rank, struct results *res)
{
	struct ibc_boot *b = NULL;
	/* the protocol error and the abort are the point here: keep stderr quiet */
	ibc_log_level_set(IBC_LOG_NONE);
	int rc = ibc_boot_tcp_open(&b);
	check(res, rc == IBC_OK, "open (mismatch job)");
	if (rc)
		return;
	char buf[8 * NPROCS];
	memset(buf, rank, 8);
	/* rank 1 disagrees on the length */
	rc = ibc_boot_allgather(b, buf, buf, rank == 1 ? 8 : 4);
	if (rank == 0) {
		check(res, rc == IBC_ERR_PROTO, "length mismatch is a protocol error at rank 0");
		ibc_boot_abort(b, 3, "test: length mismatch");
	} else {
		check(res, rc != IBC_OK, "the others see an error, not a hang");
	}
	ibc_boot_close(b);
}

/* runs one job of NPROCS children; returns 0 when all reported */
static int run_job(const char *title, void (*job)(int, struct results *), int nchecks_expected[NPROCS])
{
	int port = free_port();
	if (port < 0) {
		tap_diag("no free loopback port: %s", strerror(errno));
		return -1;
	}
	char root[64];
	snprintf(root, sizeof(root), "127.0.0.1:%d", port);
	int pipes[NPROCS][2];
	pid_t pid[NPROCS];
	fflush(stdout);
	fflush(stderr);
	for (int r = 0; r < NPROCS; r++) {
		if (pipe(pipes[r]) < 0)
			return -1;
		pid[r] = fork();
		if (pid[r] < 0)
			return -1;
		if (pid[r] == 0) {
			char rs[16], ss[16];
			snprintf(rs, sizeof(rs), "%d", r);
			snprintf(ss, sizeof(ss), "%d", NPROCS);
			setenv("IBC_BOOT", "tcp", 1);
			setenv("IBC_BOOT_RANK", rs, 1);
			setenv("IBC_BOOT_SIZE", ss, 1);
			setenv("IBC_BOOT_ROOT", root, 1);
			setenv("IBC_BOOT_TIMEOUT", "15", 1);
			setenv("IBC_BOOT_NODENAME", node_names[r], 1);
			alarm(JOB_TIMEOUT_S);
			for (int q = 0; q <= r; q++)
				close(pipes[q][0]);
			struct results res = { 0 };
			job(r, &res);
			ssize_t w = write(pipes[r][1], &res, sizeof(res));
			_exit(w == (ssize_t)sizeof(res) ? 0 : 1);
		}
		close(pipes[r][1]);
	}
	for (int r = 0; r < NPROCS; r++) {
		struct results res = { 0 };
		ssize_t n = read(pipes[r][0], &res, sizeof(res));
		close(pipes[r][0]);
		int status = 0;
		waitpid(pid[r], &status, 0);
		if (n != (ssize_t)sizeof(res)) {
			tap_ok(0, "%s: rank %d reported (status 0x%x)", title, r, status);
			for (int i = 1; i < nchecks_expected[r]; i++)
				tap_ok(0, "%s: rank %d check %d (no report)", title, r, i);
			continue;
		}
		tap_ok(res.n == nchecks_expected[r] && res.ok[0], "%s: rank %d opened and ran %d checks", title, r, res.n);
		for (int i = 1; i < nchecks_expected[r]; i++)
			tap_ok(i < res.n && res.ok[i], "%s: rank %d: %s", title, r,
			       i < res.n ? res.name[i] : "missing");
	}
	return 0;
}

int main(void)
{
	ibc_log_init("boot-tcp.t");
	int good[NPROCS] = { 19, 19, 19, 19 };
	int bad[NPROCS] = { 2, 2, 2, 2 };
	int total = 0;
	for (int r = 0; r < NPROCS; r++)
		total += good[r] + bad[r];
	tap_plan(total);
	if (run_job("collectives", job_good, good) < 0)
		tap_bail_out("cannot start the collectives job");
	if (run_job("mismatch", job_bad, bad) < 0)
		tap_bail_out("cannot start the mismatch job");
	return tap_done();
}
