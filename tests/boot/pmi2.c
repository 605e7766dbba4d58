/* The pmi2 bootstrap (boot_pmi2.c).
 *
 * Without arguments: PMI_process_mapping parsing, and the client against a
 * fake PMI-2 server on a socketpair that says the job has 2 ranks (this is
 * rank 0) and answers rank 1's keys with a known pattern, so the wire
 * format, the hex chunks of a 1 MiB allgather, bcast, gather, the bulletin
 * board, an error response and a server that is not PMI-2 are all checked.
 *
 * With --live, under a real process manager (srun --mpi=pmi2, run by
 * tests/scripts/slurm-local.t): every rank runs the collectives with data
 * it can check and compares its node id and local rank with Slurm's
 * SLURM_NODEID / SLURM_LOCALID; the verdicts are gathered and rank 0 prints
 * TAP. */
#include "boot/boot.h"
#include "core/status.h"
#include "tap.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIG (1024 * 1024 + 3)

/* what the fake server says: the job size and the mapping response */
static int g_size = 2;
static const char *g_mapping = "cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,2,1));rc=0;";

static unsigned char pat(int rank, size_t i)
{
	return (unsigned char)(rank * 37 + i * 11 + (i >> 9) + 5);
}

/* ------------------------------------------------------- fake server -- */

static int rd(int fd, char *b, size_t n)
{
	while (n > 0) {
		ssize_t k = read(fd, b, n);

		if (k <= 0)
			return -1;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

static void reply(int fd, const char *msg)
{
	char len[24];

	snprintf(len, sizeof(len), "%6d", (int)strlen(msg));
	if (write(fd, len, 6) != 6 || write(fd, msg, strlen(msg)) != (ssize_t)strlen(msg))
		_exit(3);
}

/* what rank 1 put under key "base-chunk": base "ibc<seq>-1" */
static void serve_get(int fd, const char *msg, int len_of_seq[], char kvs[][2][1100], int *nk)
{
	char key[128] = "", out[2200];
	const char *k = strstr(msg, ";key=");
	unsigned long seq;
	size_t chunk, i, n, off;
	int j;

	if (k != NULL)
		sscanf(k + 5, "%127[^;]", key);
	for (j = 0; j < *nk; j++)
		if (strcmp(kvs[j][0], key) == 0) {
			snprintf(out, sizeof(out), "cmd=kvs-get-response;rc=0;found=TRUE;value=%s;", kvs[j][1]);
			reply(fd, out);
			return;
		}
	if (sscanf(key, "ibc%lu-1-%zu", &seq, &chunk) == 2 && seq < 64 && len_of_seq[seq] > 0) {
		int o = snprintf(out, sizeof(out), "cmd=kvs-get-response;rc=0;found=TRUE;value=");

		off = chunk * 500;
		n = (size_t)len_of_seq[seq] - off < 500 ? (size_t)len_of_seq[seq] - off : 500;
		for (i = 0; i < n; i++)
			o += snprintf(out + o, sizeof(out) - (size_t)o, "%02x", pat(1, off + i));
		snprintf(out + o, sizeof(out) - (size_t)o, ";");
		reply(fd, out);
		return;
	}
	reply(fd, "cmd=kvs-get-response;rc=0;found=FALSE;");
}

/* A PMI-2 server for a job of 2 ranks of which the client is rank 0 on
 * node 0 and rank 1 on node 1; mode 1: not PMI-2 at all. */
static void fake_server(int fd, int mode)
{
	static char kvs[256][2][1100];
	int nk = 0, len_of_seq[64] = { 0 };
	char line[256], len[7], msg[8192];
	size_t n = 0;

	while (n + 1 < sizeof(line) && rd(fd, line + n, 1) == 0 && line[n++] != '\n')
		;
	if (mode == 1) {
		if (write(fd, "cmd=response_to_init pmi_version=1 rc=1\n", 40) < 0)
			_exit(3);
		_exit(0);
	}
	if (write(fd, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n", 57) < 0)
		_exit(3);
	for (;;) {
		if (rd(fd, len, 6) != 0)
			_exit(0);
		len[6] = '\0';
		n = (size_t)atoi(len);
		if (n >= sizeof(msg) || rd(fd, msg, n) != 0)
			_exit(2);
		msg[n] = '\0';
		if (strncmp(msg, "cmd=fullinit;", 13) == 0) {
			char fi[256];

			snprintf(fi, sizeof(fi), "cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=0;size=%d;"
				 "appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;", g_size);
			reply(fd, fi);
		} else if (strncmp(msg, "cmd=info-getjobattr;", 20) == 0) {
			reply(fd, g_mapping);
		} else if (strncmp(msg, "cmd=kvs-put;", 12) == 0) {
			char key[128] = "", val[1100] = "";
			unsigned long s;
			int bad = 0;

			sscanf(strstr(msg, "key=") + 4, "%127[^;]", key);
			sscanf(strstr(msg, "value=") + 6, "%1099[^;]", val);
			if (strlen(key) > 64 || strspn(key, "-_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != strlen(key))
				_exit(5); /* not a PMI-2 key */
			if (strcmp(key, "u_refused-n") == 0)
				bad = 1;
			if (nk < 256 && strncmp(key, "ibc", 3) != 0) { /* collectives: only lengths */
				snprintf(kvs[nk][0], sizeof(kvs[nk][0]), "%s", key);
				snprintf(kvs[nk][1], sizeof(kvs[nk][1]), "%s", val);
				nk++;
			}
			/* an allgather's block: rank 1 will have one of the same length */
			if (sscanf(key, "ibc%lu-0-", &s) == 1 && s < 64)
				len_of_seq[s] += (int)strlen(val) / 2;
			reply(fd, bad ? "cmd=kvs-put-response;rc=7;errmsg=full;; try later;"
				      : "cmd=kvs-put-response;rc=0;");
		} else if (strncmp(msg, "cmd=kvs-fence;", 14) == 0) {
			if (mode == 2)
				for (;;)
					pause(); /* a fence some rank never reaches */
			reply(fd, "cmd=kvs-fence-response;rc=0;");
		} else if (strncmp(msg, "cmd=kvs-get;", 12) == 0) {
			serve_get(fd, msg, len_of_seq, kvs, &nk);
		} else if (strncmp(msg, "cmd=finalize;", 13) == 0) {
			reply(fd, "cmd=finalize-response;rc=0;");
			_exit(0);
		} else {
			_exit(4);
		}
	}
}

static pid_t server_start(int mode)
{
	int sv[2];
	pid_t pid;
	char fd[16];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		tap_bail_out("socketpair");
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		fake_server(sv[1], mode);
		_exit(0);
	}
	close(sv[1]);
	snprintf(fd, sizeof(fd), "%d", sv[0]);
	setenv("PMI_FD", fd, 1);
	setenv("PMI_JOBID", "7.0", 1);
	setenv("PMI_RANK", "0", 1);
	return pid;
}

static int server_end(pid_t pid)
{
	int st = 0;

	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_fake(void)
{
	struct ibc_boot *b = NULL;
	unsigned char *mine = malloc(BIG), *all = malloc(2 * (size_t)BIG);
	char buf[64];
	size_t i, len = 0;
	int bad = 0, v = 0, rc;
	pid_t pid = server_start(0);

	if (mine == NULL || all == NULL)
		tap_bail_out("malloc");
	rc = ibc_boot_pmi2_open(&b);
	tap_is_int(rc, IBC_OK, "fake server: open (greeting, fullinit, process mapping)");
	if (rc != IBC_OK) {
		kill(pid, SIGKILL);
		server_end(pid);
		return;
	}
	tap_ok(b->rank == 0 && b->size == 2 && b->node_id == 0 && b->num_nodes == 2 &&
		       b->local_rank == 0 && b->local_size == 1,
	       "rank 0 of 2, node 0 of 2, local 0 of 1 (from (vector,(0,2,1)))");
	for (i = 0; i < BIG; i++)
		mine[i] = pat(0, i);
	rc = ibc_boot_allgather(b, mine, all, BIG);
	for (i = 0; rc == IBC_OK && i < BIG; i++)
		bad += all[i] != pat(0, i) || all[BIG + i] != pat(1, i);
	tap_ok(rc == IBC_OK && bad == 0, "allgather of 1 MiB + 3 in hex chunks: both blocks right (%d bad)",
	       bad);
	rc = ibc_boot_barrier(b);
	tap_is_int(rc, IBC_OK, "barrier is a fence");
	rc = ibc_boot_put(b, "key;with=odd", "val", 3);
	if (rc == IBC_OK)
		rc = ibc_boot_fence(b);
	if (rc == IBC_OK)
		rc = ibc_boot_get(b, "key;with=odd", buf, sizeof(buf), &len);
	tap_ok(rc == IBC_OK && len == 3 && memcmp(buf, "val", 3) == 0, "put, fence, get");
	tap_is_int(ibc_boot_get(b, "absent", buf, sizeof(buf), &len), IBC_ERR_NOTFOUND,
		   "get of a key nobody put: not found");
	tap_ok(ibc_boot_put(b, "refused", &v, sizeof(v)) == IBC_ERR_REMOTE,
	       "a response with rc != 0 is an error (its errmsg logged)");
	v = 42;
	rc = ibc_boot_bcast(b, &v, sizeof(v), 0);
	tap_ok(rc == IBC_OK && v == 42, "bcast from rank 0");
	rc = ibc_boot_close(b);
	tap_is_int(rc, IBC_OK, "finalize");
	tap_is_int(server_end(pid), 0, "the server saw only commands it knows");
	free(mine);
	free(all);

	pid = server_start(1);
	tap_is_int(ibc_boot_pmi2_open(&b), IBC_ERR_PROTO, "a server that is not PMI-2: protocol error");
	server_end(pid);
	/* a fence that never ends: the read's deadline (IBC_TIMEOUT) ends it */
	pid = server_start(2);
	setenv("IBC_TIMEOUT", "0.3", 1);
	rc = ibc_boot_pmi2_open(&b);
	tap_is_int(rc, IBC_OK, "a server that never ends a fence: open");
	if (rc == IBC_OK) {
		tap_is_int(ibc_boot_barrier(b), IBC_ERR_TIMEOUT, "... the barrier (a fence) times out (IBC_TIMEOUT 0.3)");
		(void)ibc_boot_close(b); /* its finalize times out too: freed */
	}
	unsetenv("IBC_TIMEOUT");
	kill(pid, SIGKILL);
	server_end(pid);
	unsetenv("PMI_FD");
	tap_is_int(ibc_boot_pmi2_open(&b), IBC_ERR_NOTFOUND, "no PMI_FD: not found");
}

/* A mapping response of exactly MSG_MAX (999999) bytes, the most the
 * 6-digit length allows: one node per rank for n ranks, padded. */
static char *long_mapping(int n)
{
	size_t cap = 1000000, o;
	char *m = malloc(cap + 1);
	int k;

	if (m == NULL)
		tap_bail_out("malloc");
	o = (size_t)snprintf(m, cap, "cmd=info-getjobattr-response;found=TRUE;value=(vector");
	for (k = 0; k < n; k++)
		o += (size_t)snprintf(m + o, cap - o, ",(%d,1,1)", k);
	o += (size_t)snprintf(m + o, cap - o, ");rc=0;pad=");
	while (o < 999998)
		m[o++] = 'x';
	m[o++] = ';';
	m[o] = '\0';
	return m;
}

/* open against the fake server saying size ranks and mapping response map */
static int open_with(int size, const char *map, struct ibc_boot **b)
{
	pid_t pid;
	int rc;

	g_size = size;
	g_mapping = map;
	pid = server_start(0);
	rc = ibc_boot_pmi2_open(b);
	if (rc == IBC_OK)
		ibc_boot_close(*b);
	else
		kill(pid, SIGKILL);
	server_end(pid);
	return rc;
}

static void test_limits(void)
{
	struct ibc_boot *b = NULL;
	char *m = long_mapping(80000);
	int rc, nodes = -1, local = -1;
	pid_t pid;

	tap_is_int((int)strlen(m), 999999, "a mapping response of 999999 bytes, the 6-digit limit");
	g_size = 80000;
	g_mapping = m;
	pid = server_start(0);
	rc = ibc_boot_pmi2_open(&b);
	if (rc == IBC_OK) {
		nodes = b->num_nodes;
		local = b->local_size;
		ibc_boot_close(b);
	} else {
		kill(pid, SIGKILL);
	}
	server_end(pid);
	tap_ok(rc == IBC_OK && nodes == 80000 && local == 1,
	       "it is read whole: 80000 blocks, 80000 nodes (rc %d, %d nodes, %d local)", rc, nodes, local);
	free(m);
	tap_is_int(open_with(4, "cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,2,2);rc=0;", &b),
		   IBC_ERR_PROTO, "open: a mapping without its closing parenthesis is refused");
	tap_is_int(open_with(4, "cmd=info-getjobattr-response;found=FALSE;rc=0;", &b), IBC_OK,
		   "open: no mapping at all: every rank its own node (warned)");
	tap_is_int(open_with(1000000, "cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,1000000,1));rc=0;", &b),
		   IBC_OK, "open: a job of 1000000 ranks, the limit: opened");
	tap_is_int(open_with(1000001, "cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,1000001,1));rc=0;", &b),
		   IBC_ERR_PROTO, "open: a job of 1000001 ranks: refused (no map of any size allocated)");
	g_size = 2;
	g_mapping = "cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,2,1));rc=0;";
	setenv("PMI_FD", "3x", 1);
	tap_is_int(ibc_boot_pmi2_open(&b), IBC_ERR_INVAL, "PMI_FD=3x: not a descriptor number");
	setenv("PMI_FD", "2147483648", 1);
	tap_is_int(ibc_boot_pmi2_open(&b), IBC_ERR_INVAL, "PMI_FD=2147483648 (INT_MAX+1): refused");
	setenv("PMI_FD", "", 1);
	tap_is_int(ibc_boot_pmi2_open(&b), IBC_ERR_INVAL, "PMI_FD empty: refused");
	setenv("PMI_FD", "999", 1);
	tap_is_int(ibc_boot_pmi2_open(&b), IBC_ERR_INVAL, "PMI_FD=999, not open: refused");
	unsetenv("PMI_FD");
}

static void test_mapping(void)
{
	int node[8], rc, *big = malloc(200 * sizeof(int)), k, bad = 0;
	char *m = malloc(200 * 16);
	size_t o;

	rc = ibc_boot_pmi2_mapping("(vector,(0,2,2))", 4, node);
	tap_ok(rc == IBC_OK && node[0] == 0 && node[1] == 0 && node[2] == 1 && node[3] == 1,
	       "mapping (0,2,2): blocks of 2 per node");
	rc = ibc_boot_pmi2_mapping("(vector,(0,2,1))", 5, node);
	tap_ok(rc == IBC_OK && node[0] == 0 && node[1] == 1 && node[2] == 0 && node[3] == 1 && node[4] == 0,
	       "mapping (0,2,1) for 5 ranks: round robin, repeated");
	rc = ibc_boot_pmi2_mapping("(vector,(0,1,3),(1,1,1))", 4, node);
	tap_ok(rc == IBC_OK && node[0] == 0 && node[2] == 0 && node[3] == 1,
	       "mapping of two blocks (3 on node 0, 1 on node 1)");
	tap_is_int(ibc_boot_pmi2_mapping("(0,2,2)", 4, node), IBC_ERR_PROTO, "not a vector: refused");
	tap_is_int(ibc_boot_pmi2_mapping("(vector,(0,0,2))", 4, node), IBC_ERR_PROTO,
		   "a block of 0 nodes: refused");
	/* more than the 64 blocks once kept: each rank on its own node */
	if (big == NULL || m == NULL)
		tap_bail_out("malloc");
	o = (size_t)snprintf(m, 200 * 16, "(vector");
	for (k = 0; k < 200; k++)
		o += (size_t)snprintf(m + o, 200 * 16 - o, ",(%d,1,1)", k);
	snprintf(m + o, 200 * 16 - o, ")");
	rc = ibc_boot_pmi2_mapping(m, 200, big);
	for (k = 0; k < 200; k++)
		bad += big[k] != k;
	tap_ok(rc == IBC_OK && bad == 0, "200 blocks: rank k on node k for all 200 (%d wrong)", bad);
	/* node ids at the job size and one past; start+n near INT_MAX */
	rc = ibc_boot_pmi2_mapping("(vector,(2,2,1))", 4, node);
	tap_ok(rc == IBC_OK && node[0] == 2 && node[1] == 3 && node[2] == 2,
	       "node ids up to size-1 (3 of 4 ranks): accepted");
	tap_is_int(ibc_boot_pmi2_mapping("(vector,(2,3,1))", 4, node), IBC_ERR_PROTO,
		   "node id 4 of 4 ranks (one past): refused");
	tap_is_int(ibc_boot_pmi2_mapping("(vector,(2147483647,2,1))", 4, node), IBC_ERR_PROTO,
		   "start INT_MAX, 2 nodes (start+n overflows): refused");
	tap_is_int(ibc_boot_pmi2_mapping("(vector,(0,2147483648,1))", 4, node), IBC_ERR_PROTO,
		   "a count of INT_MAX+1: refused");
	rc = ibc_boot_pmi2_mapping("(vector,(0,2147483647,1))", 4, node);
	tap_ok(rc == IBC_OK && node[3] == 3, "a count of INT_MAX: parsed, the first ranks placed");
	tap_is_int(ibc_boot_pmi2_mapping("(vector,(0,2,2)", 4, node), IBC_ERR_PROTO,
		   "no closing parenthesis (cut short): refused");
	tap_is_int(ibc_boot_pmi2_mapping("(vector,(0,2,2))junk", 4, node), IBC_ERR_PROTO,
		   "junk after the vector: refused");
	tap_is_int(ibc_boot_pmi2_mapping("(vector,(0,2,2),(1,1))", 4, node), IBC_ERR_PROTO,
		   "a block of two numbers: refused");
	rc = ibc_boot_pmi2_mapping("(vector, (0, 2, 2))", 4, node);
	tap_ok(rc == IBC_OK && node[3] == 1, "spaces between the tokens: accepted");
	free(big);
	free(m);
}

/* --------------------------------------------------------------- live -- */

static int live(void)
{
	struct ibc_boot *b = NULL;
	enum { NCHK = 6 };
	static const char *const names[NCHK] = {
		"open", "node id and local rank as Slurm says", "allgather (64 KiB per rank)",
		"bcast from the last rank", "gather to rank 0", "put, fence, get of every rank's key"
	};
	int ok[NCHK] = { 0 }, *all, r, c, rc, v, n;
	const char *nid = getenv("SLURM_NODEID"), *lid = getenv("SLURM_LOCALID");
	unsigned char *mine, *got;
	size_t i, len = 65536, l;
	char key[32];
	int64_t g[2], *gall;

	rc = ibc_boot_open(NULL, 0, &b);
	if (rc != IBC_OK) {
		printf("1..1\nnot ok 1 - open: %s\n", ibc_status_str(rc));
		return 1;
	}
	n = b->size;
	ok[0] = strcmp(b->ops->name, "pmi2") == 0;
	ok[1] = nid != NULL && lid != NULL && atoi(nid) == b->node_id && atoi(lid) == b->local_rank;
	mine = malloc(len);
	got = malloc(len * (size_t)n);
	all = malloc(sizeof(int) * (size_t)n * NCHK);
	gall = malloc(sizeof(*gall) * 2 * (size_t)n);
	if (mine == NULL || got == NULL || all == NULL || gall == NULL)
		return 1;
	for (i = 0; i < len; i++)
		mine[i] = pat(b->rank, i);
	ok[2] = ibc_boot_allgather(b, mine, got, len) == IBC_OK;
	for (r = 0; ok[2] && r < n; r++)
		for (i = 0; i < len; i++)
			ok[2] &= got[(size_t)r * len + i] == pat(r, i);
	v = b->rank == n - 1 ? 4242 : -1;
	ok[3] = ibc_boot_bcast(b, &v, sizeof(v), n - 1) == IBC_OK && v == 4242;
	g[0] = b->rank;
	g[1] = (int64_t)b->rank * 1000 + 7;
	ok[4] = ibc_boot_gather(b, g, gall, sizeof(g), 0) == IBC_OK;
	for (r = 0; ok[4] && b->rank == 0 && r < n; r++)
		ok[4] &= gall[2 * r] == r && gall[2 * r + 1] == (int64_t)r * 1000 + 7;
	snprintf(key, sizeof(key), "k%d", b->rank);
	v = b->rank * 3;
	ok[5] = ibc_boot_put(b, key, &v, sizeof(v)) == IBC_OK && ibc_boot_fence(b) == IBC_OK;
	for (r = 0; ok[5] && r < n; r++) {
		snprintf(key, sizeof(key), "k%d", r);
		ok[5] = ibc_boot_get(b, key, &v, sizeof(v), &l) == IBC_OK && l == sizeof(v) && v == r * 3;
	}
	rc = ibc_boot_allgather(b, ok, all, sizeof(ok));
	if (b->rank == 0) {
		printf("1..%d\n", NCHK);
		for (c = 0; c < NCHK; c++) {
			int good = rc == IBC_OK;

			for (r = 0; good && r < n; r++)
				good = all[r * NCHK + c];
			printf("%sok %d - %d ranks on %d nodes: %s\n", good ? "" : "not ", c + 1, n,
			       b->num_nodes, names[c]);
		}
	}
	free(mine);
	free(got);
	free(all);
	free(gall);
	return ibc_boot_close(b) == IBC_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--live") == 0)
		return live();
	tap_plan_none();
	test_mapping();
	test_limits();
	test_fake();
	return tap_done();
}
