/* ibchar-link: link-level benchmarks over any transport (perftest-equivalent):
 *   write-lat  RDMA-write ping-pong: payload write + 8-byte sequence flag (one post
 *              list of two WRs; the flag inline when it fits); the receiver waits on
 *              the flag, then answers the same way; one-way = round trip / 2;
 *   read-lat   RDMA read of the size from the peer, until its completion;
 *   send-lat   send/receive ping-pong (receives posted ahead); one-way = RTT / 2;
 *   write-bw   a window of writes (--window, default 64) posted as one list, the
 *              last one signaled, until its completion; the row's time is per
 *              message, extra holds window= and MBps= (from the median window time).
 * --perftest adds impl=perftest rows for write-lat and write-bw (verbs, both ranks on
 * one node): rank 1 runs perftest's ib_write_lat / ib_write_bw server, rank 0 the
 * client, during the point's setup; write-lat rows hold every one-way sample perftest
 * prints with -U (no tail dropped), write-bw rows its average bandwidth as time per
 * message.  Ranks 0 and 1 take part (--ranks 2).  Every row keeps the whole distribution
 * (median, p99, max: no dropped tail).  On verbs the placement probe is the
 * transport's own 8-byte write ping-pong (ibc_xport_pingpong); on shm the
 * harness's cache-line probe stays. */
#include "core/log.h"
#include "core/opt.h"
#include "core/status.h"
#include "core/timer.h"
#include "harness/harness.h"
#include "xport/xport.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TMO_NS (30LL * 1000 * 1000 * 1000)
#define NRECV 4
#define MAX_WINDOW 1024

struct link {
	struct ibc_boot *boot;
	struct ibc_xport *x;
	struct ibc_xport_mr *mr;     /* [0, maxb) receive area, [maxb, 2 maxb) source, flags */
	struct ibc_xport_rdesc rd[2];
	unsigned char *rx, *tx;
	uint64_t *flag_in, *flag_src;
	size_t maxb, bytes;
	uint64_t seq;                /* write-lat rounds, the same on both ranks */
	int rank, peer;
	int recvs_posted;
	long window;
	double *bw_us;               /* write-bw window times of this point */
	long bw_n, bw_cap, bw_skip;
};

struct link_op {
	struct link *L;
	int kind;
};

enum { K_WRITE_LAT, K_READ_LAT, K_SEND_LAT, K_WRITE_BW, K_PT_LAT, K_PT_BW };

/* perftest results of the current point (rank 0) */
struct perftest {
	double *us;
	long n, cap, next;
	double mbps;
};
static struct perftest PTS[2]; /* [0] write-lat, [1] write-bw: both set up per point */
static int pt_tcp_port;

static unsigned char pattern(size_t bytes, size_t i)
{
	return (unsigned char)(bytes * 7 + i * 13 + 1);
}

static int wc_wait(struct link *L, int cq, const char *what)
{
	struct ibc_xport_wc wc;
	int rc = ibc_xport_cq_wait(L->x, cq, TMO_NS, &wc);

	if (rc != IBC_OK) {
		ibc_error("link: %s: no completion: %s", what, ibc_status_str(rc));
		return rc;
	}
	if (wc.status != IBC_OK) {
		ibc_error("link: %s: %s failed: %s", what, ibc_xport_opcode_name(wc.opcode), wc.reason);
		return IBC_ERR_REMOTE;
	}
	return IBC_OK;
}

static int recv_post_one(struct link *L)
{
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)L->rx, (uint32_t)L->maxb, L->mr->lkey };

	return ibc_xport_recv(L->x, L->peer, NULL, &s, 1, 1);
}

/* ------------------------------------------------------------ perftest ---- */

static pid_t spawn(char *const argv[], int out_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(out_fd >= 0 ? out_fd : devnull, 1);
			dup2(out_fd >= 0 ? out_fd : devnull, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* 1 when a TCP socket listens on port (perftest's server is up) */
static int port_listening(int port)
{
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	char line[512];

	for (size_t k = 0; k < 2; k++) {
		FILE *f = fopen(files[k], "r");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			char *colon = strchr(line, ':');
			unsigned lport, st;
			/* "  0: 00000000:4E20 00000000:0000 0A ..." */
			if (colon == NULL || (colon = strchr(colon + 1, ':')) == NULL)
				continue;
			if (sscanf(colon + 1, "%x %*s %x", &lport, &st) == 2 && (int)lport == port &&
			    st == 0x0A) {
				fclose(f);
				return 1;
			}
		}
		fclose(f);
	}
	return 0;
}

static int pt_sample_add(struct perftest *pt, double us)
{
	if (pt->n == pt->cap) {
		long ncap = pt->cap ? pt->cap * 2 : 1024;
		double *n = realloc(pt->us, (size_t)ncap * sizeof(*n));
		if (n == NULL)
			return IBC_ERR_NOMEM;
		pt->us = n;
		pt->cap = ncap;
	}
	pt->us[pt->n++] = us;
	return IBC_OK;
}

/* client output: "#, usec" then "i, value" lines (lat -U); for bw the line after
 * the "#bytes" header: bytes iters peak avg rate */
static char pt_last_line[256]; /* for the log when nothing could be parsed */

static int pt_parse(FILE *f, int bw, size_t bytes)
{
	struct perftest *pt = &PTS[bw];
	char line[512];
	int in_samples = 0, after_hdr = 0;

	pt_last_line[0] = '\0';
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] != '\n' && strncmp(line, "----", 4) != 0) {
			line[strcspn(line, "\n")] = '\0';
			line[sizeof(pt_last_line) - 1] = '\0';
			memcpy(pt_last_line, line, strlen(line) + 1);
		}
		long i;
		double v, peak, avg;
		unsigned long b, it;
		if (!bw) {
			if (strncmp(line, "#, usec", 7) == 0) {
				in_samples = 1;
				continue;
			}
			if (in_samples && sscanf(line, "%ld, %lf", &i, &v) == 2) {
				if (pt_sample_add(pt, v) != IBC_OK)
					return IBC_ERR_NOMEM;
				continue;
			}
			in_samples = 0;
		} else {
			if (strstr(line, "#bytes") != NULL) {
				after_hdr = 1;
				continue;
			}
			if (after_hdr && sscanf(line, " %lu %lu %lf %lf", &b, &it, &peak, &avg) == 4 &&
			    b == bytes) {
				pt->mbps = avg;
				after_hdr = 0;
			}
		}
	}
	return IBC_OK;
}

static int pt_run_pair(struct link *L, int bw, size_t bytes, long iters)
{
	char dev[IBC_XPORT_NAME_MAX], *colon, s_bytes[32], s_iters[32], s_port[16], s_ib[16],
		s_gid[16], s_win[16];
	const char *tool = bw ? "ib_write_bw" : "ib_write_lat";
	char *argv[24];
	int a = 0, rc = IBC_OK, status;
	pid_t pid = -1;

	snprintf(dev, sizeof(dev), "%s", L->x->caps.device);
	colon = strchr(dev, ':');
	snprintf(s_ib, sizeof(s_ib), "%s", colon != NULL ? colon + 1 : "1");
	if (colon != NULL)
		*colon = '\0';
	snprintf(s_bytes, sizeof(s_bytes), "%zu", bytes);
	snprintf(s_iters, sizeof(s_iters), "%ld", iters < 5 ? 5 : iters);
	snprintf(s_port, sizeof(s_port), "%d", pt_tcp_port++);
	snprintf(s_gid, sizeof(s_gid), "%d", L->x->params.gid_index);
	snprintf(s_win, sizeof(s_win), "%ld", L->window);
	argv[a++] = (char *)tool;
	argv[a++] = "-d";
	argv[a++] = dev;
	argv[a++] = "-i";
	argv[a++] = s_ib;
	argv[a++] = "-s";
	argv[a++] = s_bytes;
	argv[a++] = "-n";
	argv[a++] = s_iters;
	argv[a++] = "-p";
	argv[a++] = s_port;
	argv[a++] = "-F";
	if (L->x->params.gid_index >= 0) {
		argv[a++] = "-x";
		argv[a++] = s_gid;
	}
	if (bw) {
		argv[a++] = "-t";
		argv[a++] = s_win;
	} else {
		argv[a++] = "-U";
	}
	if (L->rank == 1) {
		int port = atoi(s_port), i;
		argv[a] = NULL;
		pid = spawn(argv, -1); /* the server */
		for (i = 0; i < 300 && pid > 0 && !port_listening(port); i++) {
			struct timespec ts = { 0, 100 * 1000 * 1000 };
			if (waitpid(pid, &status, WNOHANG) == pid) {
				pid = -1;
				break;
			}
			nanosleep(&ts, NULL);
		}
		if (pid <= 0 || i == 300)
			ibc_info("link: %s server did not start listening on port %d", tool, port);
	}
	rc = ibc_boot_barrier(L->boot);
	if (rc == IBC_OK && L->rank == 0) {
		char tmpl[] = "/tmp/ibchar-perftest-XXXXXX";
		int fd = mkstemp(tmpl);
		argv[a++] = "127.0.0.1";
		argv[a] = NULL;
		if (fd < 0) {
			rc = IBC_ERR_SYS;
		} else {
			unlink(tmpl);
			pid = spawn(argv, fd);
			if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0) {
				char last[256] = "";
				FILE *f = fdopen(dup(fd), "r");
				if (f != NULL) {
					char line[256];
					rewind(f);
					while (fgets(line, sizeof(line), f) != NULL)
						if (line[0] != '\n')
							snprintf(last, sizeof(last), "%s", line);
					fclose(f);
				}
				last[strcspn(last, "\n")] = '\0';
				ibc_info("link: %s client failed (status %d, last words: '%s'): no "
					 "perftest rows", tool, pid < 0 ? -1 : status, last);
				rc = IBC_ERR_UNSUPPORTED;
			} else {
				FILE *f = fdopen(fd, "r");
				if (f == NULL) {
					rc = IBC_ERR_SYS;
				} else {
					rewind(f);
					rc = pt_parse(f, bw, bytes);
					fclose(f);
					fd = -1;
				}
			}
			if (fd >= 0)
				close(fd);
		}
		pid = -1;
	}
	/* the client is done: the server ends with it, or is stopped */
	if (ibc_boot_barrier(L->boot) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_CLOSED;
	if (L->rank == 1 && pid > 0) {
		for (int i = 0; i < 50; i++) {
			struct timespec ts = { 0, 100 * 1000 * 1000 };
			if (waitpid(pid, &status, WNOHANG) == pid) {
				pid = -1;
				break;
			}
			nanosleep(&ts, NULL);
		}
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
	}
	return rc;
}

static int pt_setup(struct link *L, int bw, const struct ibc_harness_point *pt)
{
	struct perftest *res = &PTS[bw];
	int rc;

	res->n = res->next = 0;
	res->mbps = 0;
	if (strcmp(L->x->caps.backend, "verbs") != 0 ||
	    L->boot->num_nodes != 1 || L->bytes == 0)
		return IBC_ERR_UNSUPPORTED;
	rc = pt_run_pair(L, bw, L->bytes, bw ? (L->bytes >= 1024 * 1024 ? 20 : 200)
					     : pt->iters + pt->warmup);
	if (rc == IBC_OK && L->rank == 0 && ((!bw && res->n == 0) || (bw && res->mbps <= 0))) {
		ibc_info("link: no %s results parsed from perftest (last line: '%s')",
			 bw ? "bandwidth" : "latency", pt_last_line);
		rc = IBC_ERR_UNSUPPORTED;
	}
	return rc;
}

static int op_setup(struct ibc_harness *h, const struct ibc_harness_point *pt, void *arg)
{
	struct link_op *o = arg;
	struct link *L = o->L;

	L->x->wait = ibc_harness_wait_get(h);
	L->bytes = pt->bytes;
	if (L->bytes > L->maxb || L->bytes > L->x->caps.max_msg)
		return IBC_ERR_UNSUPPORTED;
	if (o->kind == K_PT_LAT || o->kind == K_PT_BW)
		return L->rank > 1 ? IBC_OK : pt_setup(L, o->kind == K_PT_BW, pt);
	if (L->rank > 1)
		return IBC_OK;
	for (size_t i = 0; i < L->bytes; i++)
		L->tx[i] = pattern(L->bytes, i);
	if (o->kind == K_SEND_LAT) {
		while (L->recvs_posted < NRECV) {
			int rc = recv_post_one(L);
			if (rc != IBC_OK)
				return rc;
			L->recvs_posted++;
		}
	}
	if (o->kind == K_WRITE_BW) {
		if (L->window > (long)L->x->caps.max_send_wr) {
			ibc_error("link: --window %ld exceeds the send queue (%u)", L->window,
				  L->x->caps.max_send_wr);
			return IBC_ERR_INVAL;
		}
		L->bw_n = 0;
		L->bw_skip = pt->warmup;
		if (L->bw_cap < pt->iters + pt->warmup + 1) {
			free(L->bw_us);
			L->bw_cap = pt->iters + pt->warmup + 1;
			L->bw_us = calloc((size_t)L->bw_cap, sizeof(*L->bw_us));
			if (L->bw_us == NULL)
				return IBC_ERR_NOMEM;
		}
	}
	return IBC_OK;
}

/* payload then flag (= seq), as one post list; the flag write is signaled */
static int write_pair(struct link *L)
{
	struct ibc_xport_sge ps = { (uint64_t)(uintptr_t)L->tx, (uint32_t)L->bytes, L->mr->lkey };
	struct ibc_xport_sge fs = { (uint64_t)(uintptr_t)L->flag_src, 8, L->mr->lkey };
	const struct ibc_xport_rdesc *rd = &L->rd[L->peer];
	struct ibc_xport_wr wr[2];
	int posted;

	memset(wr, 0, sizeof(wr));
	*L->flag_src = L->seq;
	wr[0].opcode = IBC_XPORT_OP_WRITE;
	wr[0].peer = L->peer;
	wr[0].num_sge = 1;
	wr[0].sge = &ps;
	wr[0].remote_addr = rd->addr;
	wr[0].rkey = rd->rkey;
	wr[1] = wr[0];
	wr[1].sge = &fs;
	wr[1].remote_addr = rd->addr + ((uint64_t)(uintptr_t)L->flag_in - (uint64_t)(uintptr_t)L->rx);
	wr[1].flags = IBC_XPORT_WR_SIGNALED |
		      (L->x->caps.max_inline >= 8 ? IBC_XPORT_WR_INLINE : 0);
	wr[1].wr_id = L->seq;
	return ibc_xport_post(L->x, wr, 2, &posted);
}

static int run_write_lat(struct link *L)
{
	int rc;

	L->seq++;
	if (L->rank == 0) {
		rc = write_pair(L);
		if (rc == IBC_OK)
			rc = ibc_xport_wait_u64(L->x, L->flag_in, L->seq, TMO_NS, NULL);
	} else {
		rc = ibc_xport_wait_u64(L->x, L->flag_in, L->seq, TMO_NS, NULL);
		if (rc == IBC_OK)
			rc = write_pair(L);
	}
	if (rc == IBC_ERR_TIMEOUT)
		ibc_error("link: write-lat: the peer's flag did not arrive");
	if (rc == IBC_OK)
		rc = wc_wait(L, IBC_XPORT_CQ_SEND, "write-lat");
	return rc;
}

static int run_read_lat(struct link *L)
{
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)L->tx, (uint32_t)L->bytes, L->mr->lkey };
	int rc;

	if (L->rank != 0)
		return IBC_OK;
	rc = ibc_xport_read(L->x, L->peer, &s, 1, L->rd[L->peer].addr, L->rd[L->peer].rkey,
			    IBC_XPORT_WR_SIGNALED, 2);
	if (rc == IBC_OK)
		rc = wc_wait(L, IBC_XPORT_CQ_SEND, "read-lat");
	return rc;
}

static int send_one(struct link *L)
{
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)L->tx, (uint32_t)L->bytes, L->mr->lkey };
	unsigned flags = IBC_XPORT_WR_SIGNALED |
			 (L->bytes <= L->x->caps.max_inline ? IBC_XPORT_WR_INLINE : 0);

	return ibc_xport_send(L->x, L->peer, &s, 1, flags, 3);
}

static int recv_one(struct link *L)
{
	int rc = wc_wait(L, IBC_XPORT_CQ_RECV, "send-lat receive");

	if (rc == IBC_OK)
		rc = recv_post_one(L);
	return rc;
}

static int run_send_lat(struct link *L)
{
	int rc;

	if (L->rank == 0) {
		rc = send_one(L);
		if (rc == IBC_OK)
			rc = recv_one(L);
	} else {
		rc = recv_one(L);
		if (rc == IBC_OK)
			rc = send_one(L);
	}
	if (rc == IBC_OK)
		rc = wc_wait(L, IBC_XPORT_CQ_SEND, "send-lat send");
	return rc;
}

static int run_write_bw(struct ibc_harness *h, struct link *L)
{
	struct ibc_xport_wr wr[MAX_WINDOW];
	struct ibc_xport_sge s = { (uint64_t)(uintptr_t)L->tx, (uint32_t)L->bytes, L->mr->lkey };
	double t0;
	int rc, posted;

	if (L->rank != 0)
		return IBC_OK;
	t0 = ibc_timer_now_us();
	for (long i = 0; i < L->window; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = (uint64_t)i;
		wr[i].opcode = IBC_XPORT_OP_WRITE;
		wr[i].flags = i == L->window - 1 ? IBC_XPORT_WR_SIGNALED : 0;
		wr[i].peer = L->peer;
		wr[i].num_sge = 1;
		wr[i].sge = &s;
		wr[i].remote_addr = L->rd[L->peer].addr;
		wr[i].rkey = L->rd[L->peer].rkey;
	}
	rc = ibc_xport_post(L->x, wr, (int)L->window, &posted);
	if (rc == IBC_OK)
		rc = wc_wait(L, IBC_XPORT_CQ_SEND, "write-bw");
	if (rc == IBC_OK && L->bw_n < L->bw_cap)
		L->bw_us[L->bw_n++] = ibc_timer_now_us() - t0;
	(void)h;
	return rc;
}

static int op_run(struct ibc_harness *h, void *arg)
{
	struct link_op *o = arg;
	struct link *L = o->L;

	if (L->rank > 1)
		return IBC_OK;
	switch (o->kind) {
	case K_WRITE_LAT:
		return run_write_lat(L);
	case K_READ_LAT:
		return run_read_lat(L);
	case K_SEND_LAT:
		return run_send_lat(L);
	case K_WRITE_BW:
		return run_write_bw(h, L);
	case K_PT_LAT:
	case K_PT_BW:
		/* replay perftest's numbers: one sample per iteration (rank 0 counts) */
		if (L->rank != 0) {
			ibc_harness_sample_set(h, 0);
		} else if (o->kind == K_PT_LAT) {
			struct perftest *r = &PTS[0];
			if (r->n == 0)
				return IBC_ERR_INVAL;
			ibc_harness_sample_set(h, r->us[r->next++ % r->n]);
		} else {
			if (PTS[1].mbps <= 0)
				return IBC_ERR_INVAL;
			ibc_harness_sample_set(h, (double)L->bytes / PTS[1].mbps);
		}
		return IBC_OK;
	}
	return IBC_ERR_INVAL;
}

/* the payload that arrived last is the peer's pattern for this size */
static int op_validate(struct ibc_harness *h, void *arg)
{
	struct link_op *o = arg;
	struct link *L = o->L;
	const unsigned char *got = o->kind == K_READ_LAT ? L->tx : L->rx;

	(void)h;
	if (L->rank > 1 || (L->rank == 1 && (o->kind == K_READ_LAT || o->kind == K_WRITE_BW)))
		return IBC_OK;
	if (L->rank == 0 && o->kind == K_WRITE_BW)
		return IBC_OK; /* the target checks nothing either: write-bw overwrites */
	if (o->kind == K_PT_LAT || o->kind == K_PT_BW)
		return IBC_OK; /* perftest's own data */
	for (size_t i = 0; i < L->bytes; i++)
		if (got[i] != pattern(L->bytes, i)) {
			ibc_error("link: validation: byte %zu of %zu is wrong", i, L->bytes);
			return IBC_ERR_VALIDATE;
		}
	return IBC_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int op_extra(struct ibc_harness *h, void *arg, char *buf, size_t cap)
{
	struct link_op *o = arg;
	struct link *L = o->L;

	(void)h;
	if (o->kind == K_WRITE_BW) {
		double med = 0;
		/* the warm-up windows come first: use the timed ones */
		long skip = L->bw_skip < L->bw_n ? L->bw_skip : 0, m = L->bw_n - skip;
		if (m > 0) {
			qsort(L->bw_us + skip, (size_t)m, sizeof(double), cmp_double);
			med = L->bw_us[skip + m / 2];
		}
		snprintf(buf, cap, "window=%ld;MBps=%.1f", L->window,
			 med > 0 ? (double)L->window * (double)L->bytes / med : 0.0);
	} else if (o->kind == K_WRITE_LAT) {
		snprintf(buf, cap, "flag=separate-write;inline_flag=%d", L->x->caps.max_inline >= 8);
	} else if (o->kind == K_PT_LAT) {
		snprintf(buf, cap, "tool=ib_write_lat;samples=%ld", PTS[0].n);
	} else if (o->kind == K_PT_BW) {
		snprintf(buf, cap, "tool=ib_write_bw;window=%ld;MBps=%.1f", L->window, PTS[1].mbps);
	} else if (o->kind == K_SEND_LAT) {
		snprintf(buf, cap, "inline=%d", L->bytes <= L->x->caps.max_inline);
	} else {
		buf[0] = '\0';
	}
	return IBC_OK;
}

static int probe_verbs(struct ibc_harness *h, void *arg, double *us)
{
	struct link *L = arg;

	(void)h;
	return ibc_xport_pingpong(L->x, 0, 1, 1000, us);
}

static struct ibc_harness_cli cli = IBC_HARNESS_CLI_INIT;
static int list_only, perftest;
static long window = 64;

static const struct ibc_opt opts[] = {
	IBC_HARNESS_CLI_OPTS(cli),
	{ .name = "window", .type = IBC_OPT_INT, .dest = &window, .metavar = "N",
	  .help = "write-bw: writes in flight per window", .min = 1, .max = MAX_WINDOW },
	{ .name = "perftest", .type = IBC_OPT_FLAG, .dest = &perftest,
	  .help = "also run perftest's ib_write_lat / ib_write_bw (verbs; impl=perftest rows)" },
	{ .name = "list", .type = IBC_OPT_FLAG, .dest = &list_only,
	  .help = "print the variants, one per line, and exit" },
	IBC_OPT_END
};

static const struct ibc_opt_spec spec = {
	.prog = "ibchar-link",
	.synopsis = "[OPTIONS]",
	.summary = "Link-level benchmarks between two ranks over a transport (--xport shm, "
		   "verbs or auto): write-lat, read-lat, send-lat (one-way latency) and write-bw "
		   "(time per message with a window of writes; MB/s in extra).  Sizes default "
		   "to 1..4M; rows go to DIR/results.csv.",
	.opts = opts,
};

int main(int argc, char **argv)
{
	static struct link L;
	static struct link_op o_wl = { &L, K_WRITE_LAT }, o_rl = { &L, K_READ_LAT },
			      o_sl = { &L, K_SEND_LAT }, o_bw = { &L, K_WRITE_BW };
	static struct link_op o_pl = { &L, K_PT_LAT }, o_pb = { &L, K_PT_BW };
	struct ibc_harness_op ops[6], all[6] = {
		{ .variant = "write-lat", .timing = IBC_HARNESS_TIME_ROOT, .scale = 0.5, .arg = &o_wl },
		{ .variant = "read-lat", .timing = IBC_HARNESS_TIME_ROOT, .scale = 1.0, .arg = &o_rl },
		{ .variant = "send-lat", .timing = IBC_HARNESS_TIME_ROOT, .scale = 0.5, .arg = &o_sl },
		{ .variant = "write-bw", .timing = IBC_HARNESS_TIME_ROOT, .scale = 1.0, .arg = &o_bw },
		{ .variant = "write-lat", .impl = "perftest", .timing = IBC_HARNESS_TIME_ROOT,
		  .scale = 1.0, .arg = &o_pl },
		{ .variant = "write-bw", .impl = "perftest", .timing = IBC_HARNESS_TIME_ROOT,
		  .scale = 1.0, .arg = &o_pb },
	};
	struct ibc_xport_params xp;
	struct ibc_harness_params p;
	struct ibc_boot *boot;
	size_t i, n = 0;
	int first, rc, rc2;

	ibc_log_init("ibchar-link");
	rc = ibc_opt_parse(&spec, argc, argv, &first);
	if (rc == IBC_OPT_HELP_SHOWN)
		return 0;
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	if (first < argc) {
		fprintf(stderr, "ibchar-link: unexpected argument '%s'\nTry 'ibchar-link --help'.\n",
			argv[first]);
		return 2;
	}
	if (list_only) {
		for (i = 0; i < 4; i++)
			printf("%s\n", all[i].variant);
		return 0;
	}
	all[3].scale = 1.0 / (double)window; /* write-bw rows: time per message */
	for (i = 0; i < (perftest ? 6u : 4u); i++) {
		all[i].setup = op_setup;
		all[i].run = op_run;
		all[i].validate = op_validate;
		all[i].extra = op_extra;
		if (ibc_harness_cli_wants(&cli, all[i].variant))
			ops[n++] = all[i];
	}
	if (n == 0 || ibc_harness_cli_nranks(&cli, 2) != 2) {
		fprintf(stderr, "ibchar-link: needs --ranks 2 and variants among write-lat, "
				"read-lat, send-lat, write-bw\n");
		return 2;
	}
	ibc_harness_params_init(&p);
	p.suite = "link";
	p.kind = IBC_HARNESS_LATENCY;
	p.nsizes = 0;
	for (size_t b = 1; b <= 4u * 1024 * 1024; b *= 2)
		p.sizes[p.nsizes++] = b;
	ibc_harness_params_argv(&p, argc, argv);
	rc = ibc_harness_cli_apply(&cli, &p);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	L.maxb = 8;
	for (i = 0; i < p.nsizes; i++)
		if (p.sizes[i] > L.maxb)
			L.maxb = p.sizes[i];
	L.maxb = (L.maxb + 63) / 64 * 64;
	L.window = window;

	rc = ibc_timer_init();
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	rc = ibc_harness_cli_boot(&cli, 2, &boot);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	L.boot = boot;
	pt_tcp_port = 20000 + (int)(getpid() % 2000) * 8; /* rank 0's choice, for both */
	rc = ibc_boot_bcast(boot, &pt_tcp_port, sizeof(pt_tcp_port), 0);
	if (rc != IBC_OK)
		goto err_close_boot;
	L.rank = boot->rank;
	L.peer = boot->rank == 0 ? 1 : 0;
	ibc_xport_params_init(&xp);
	xp.backend = cli.xport;
	xp.wait = ibc_wait_decide(boot->local_size);
	rc = ibc_xport_open(boot, &xp, &L.x);
	if (rc != IBC_OK)
		goto err_close_boot;
	rc = ibc_xport_connect(L.x, NULL);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(L.x, 2 * L.maxb + 4096, IBC_XPORT_ACCESS_ALL, &L.mr);
	if (rc != IBC_OK)
		goto err_close_xport;
	L.rx = L.mr->addr;
	L.tx = L.rx + L.maxb;
	L.flag_in = (uint64_t *)(void *)(L.rx + 2 * L.maxb);
	L.flag_src = (uint64_t *)(void *)(L.rx + 2 * L.maxb + 64);
	{
		struct ibc_xport_rdesc *rd = calloc((size_t)boot->size, sizeof(*rd));
		if (rd == NULL) {
			rc = IBC_ERR_NOMEM;
			goto err_dereg;
		}
		rc = ibc_xport_rdesc_allgather(L.x, &L.mr->rdesc, rd);
		L.rd[0] = rd[0];
		L.rd[1] = rd[1 % boot->size];
		free(rd);
		if (rc != IBC_OK)
			goto err_dereg;
	}
	p.xport = L.x->caps.backend;
	p.device = L.x->caps.device;
	if (strcmp(L.x->caps.backend, "verbs") == 0) {
		p.probe = probe_verbs;
		p.probe_arg = &L;
	}
	rc = ibc_harness_run(boot, &p, ops, n);
err_dereg:
	ibc_xport_mr_dereg(L.x, L.mr);
err_close_xport:
	rc2 = ibc_xport_close(L.x);
	if (rc == IBC_OK)
		rc = rc2;
err_close_boot:
	rc2 = ibc_boot_close(boot);
	free(L.bw_us);
	free(PTS[0].us);
	free(PTS[1].us);
	return ibc_status_exit_code(rc != IBC_OK ? rc : rc2);
}
