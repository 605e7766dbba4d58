/* ibchar-launch: the launcher (root of the NLA tree), the node launch agent
 * entry point and the flat-mode proxy. */
#define _GNU_SOURCE
#include "launcher/agent_loop.h"
#include "launcher/hosts.h"
#include "launcher/rsh.h"
#include "launcher/tree.h"
#include "core/log.h"
#include "core/status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Looks name up in the test-hosts file (IBC_HOSTS_FILE or the default), then
 * getaddrinfo.  IBC_ERR_NOTFOUND when unknown. */
static int host_resolve(const char *name, struct in_addr *out)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
	char err[512];
	int rc = ibc_launch_hosts_lookup(ibc_launch_hosts_path(), name, out, err, sizeof(err));

	if (rc == IBC_OK)
		return IBC_OK;
	if (rc == IBC_ERR_INVAL)
		ibc_debug("launch: %s", err);
	if (getaddrinfo(name, NULL, &hints, &res) != 0 || res == NULL)
		return IBC_ERR_NOTFOUND;
	*out = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return IBC_OK;
}

/* The local address a host reaches us at (a UDP connect picks the route). */
static int addr_towards(struct in_addr dst, char *buf, size_t n)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(9), .sin_addr = dst };
	socklen_t sl = sizeof(sa);

	if (fd < 0)
		return IBC_ERR_SYS;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		close(fd);
		return IBC_ERR_SYS;
	}
	close(fd);
	inet_ntop(AF_INET, &sa.sin_addr, buf, (socklen_t)n);
	return IBC_OK;
}

static int listen_any(int *fd_out, int *port_out)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t sl = sizeof(sa);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1024) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		ibc_error("launch: cannot listen: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return IBC_ERR_SYS;
	}
	*fd_out = fd;
	*port_out = ntohs(sa.sin_port);
	return IBC_OK;
}

static int read_file(const char *path, char **out)
{
	FILE *f = fopen(path, "r");
	size_t cap = 4096, n = 0;
	char *b;

	if (f == NULL) {
		ibc_error("launch: cannot read hostfile '%s': %s", path, strerror(errno));
		return IBC_ERR_NOTFOUND;
	}
	b = malloc(cap);
	while (b != NULL) {
		size_t r = fread(b + n, 1, cap - n - 1, f);

		n += r;
		if (r == 0)
			break;
		if (n + 1 == cap) {
			char *nb = realloc(b, cap * 2);

			if (nb == NULL) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (b == NULL)
		return IBC_ERR_NOMEM;
	b[n] = '\0';
	*out = b;
	return IBC_OK;
}

static void stats_print(const struct ibc_launch_opts *o, const struct ibc_launch_job *j, const void *p, size_t n,
			uint32_t count)
{
	struct ibc_launch_rd rd;
	FILE *csv = NULL;
	uint32_t i;
	static const char *const cols[] = { "msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv", "puts",
					    "gets", "hits", "misses", "cache_entries", "cache_mem_hwm",
					    "evictions" };

	if (o->stats_csv != NULL) {
		csv = fopen(o->stats_csv, "w");
		if (csv == NULL)
			ibc_error("launch: cannot write '%s': %s", o->stats_csv, strerror(errno));
		else
			fprintf(csv, "mode,cache,nodes,ranks,degree,agent,host,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n",
				cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8],
				cols[9], cols[10]);
	}
	if (o->stats)
		fprintf(stderr, "ibchar-launch: counters (mode %s, cache %s)\n%-6s %-12s %9s %11s %9s %11s %6s %6s %6s %6s %7s %9s %6s\n",
			j->mode ? "flat" : "tree", ibc_launch_cache_names[j->cache], "agent", "host", cols[0],
			cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], "entries", "mem_hwm", "evict");
	ibc_launch_rd_init(&rd, p, n);
	for (i = 0; i < count && !rd.err; i++) {
		uint32_t idx = ibc_launch_rd_u32(&rd);
		char *host = ibc_launch_rd_strdup(&rd);
		unsigned long long v[11];

		for (int k = 0; k < 11; k++)
			v[k] = ibc_launch_rd_u64(&rd);
		if (rd.err || host == NULL) {
			free(host);
			break;
		}
		if (o->stats)
			fprintf(stderr, "%-6u %-12s %9llu %11llu %9llu %11llu %6llu %6llu %6llu %6llu %7llu %9llu %6llu\n",
				idx, host, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]);
		if (csv != NULL)
			fprintf(csv, "%s,%s,%u,%u,%u,%u,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n",
				j->mode ? "flat" : "tree", ibc_launch_cache_names[j->cache], j->nnodes, j->np,
				j->degree, idx, host, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
				v[10]);
		free(host);
	}
	if (csv != NULL)
		fclose(csv);
}

static int build_hosts(const struct ibc_launch_opts *o, char ***names, int **slots, int *nhosts)
{
	char err[256] = "";
	int n;

	if (o->hostfile != NULL) {
		char *text;
		int rc = read_file(o->hostfile, &text);

		if (rc != IBC_OK)
			return rc;
		n = ibc_launch_hostfile_parse(text, names, slots, err, sizeof(err));
		free(text);
		if (n < 0) {
			ibc_error("launch: hostfile '%s': %s", o->hostfile, err);
			return n;
		}
		*nhosts = n;
		return IBC_OK;
	}
	if (o->hosts != NULL) {
		char *copy = strdup(o->hosts), *save = NULL, *item;

		n = 0;
		*names = calloc(strlen(o->hosts) + 1, sizeof(**names));
		*slots = calloc(strlen(o->hosts) + 1, sizeof(**slots));
		if (copy == NULL || *names == NULL || *slots == NULL) {
			free(copy);
			return IBC_ERR_NOMEM;
		}
		for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
			if (ibc_launch_host_item_parse(item, &(*names)[n], &(*slots)[n]) != IBC_OK) {
				ibc_error("launch: --hosts: bad host '%s' (want name or name:slots)", item);
				free(copy);
				*nhosts = n;
				return IBC_ERR_INVAL;
			}
			n++;
		}
		free(copy);
		if (n == 0) {
			ibc_error("launch: --hosts: no hosts given");
			return IBC_ERR_INVAL;
		}
		*nhosts = n;
		return IBC_OK;
	}
	*names = calloc(1, sizeof(**names));
	*slots = calloc(1, sizeof(**slots));
	if (*names == NULL || *slots == NULL)
		return IBC_ERR_NOMEM;
	(*names)[0] = strdup("localhost");
	*nhosts = 1;
	return (*names)[0] ? IBC_OK : IBC_ERR_NOMEM;
}

int ibc_launch_run(const struct ibc_launch_opts *o, int *exit_code)
{
	struct ibc_launch_agent a;
	struct ibc_launch_job *j = &a.job;
	char **names = NULL, err[256] = "", self[4096], cwd[4096];
	int *slots = NULL, *count = NULL, nhosts = 0, rc, i, np, maxc = 0, any_slots = 0;
	ssize_t sl;

	*exit_code = 2;
	memset(&a, 0, sizeof(a));
	a.listen_fd = a.sigfd = a.parent.fd = -1;
	a.stdin_fd = 0;
	if (o->argc < 1) {
		ibc_error("launch: no program given (ibchar-launch [OPTIONS] -- PROGRAM [ARGS...])");
		return IBC_ERR_INVAL;
	}
	rc = build_hosts(o, &names, &slots, &nhosts);
	if (rc != IBC_OK)
		goto err_free_hosts;
	for (i = 0; i < nhosts; i++)
		any_slots |= slots[i] > 0;
	np = (int)o->np;
	if (np <= 0) {
		np = 0;
		for (i = 0; i < nhosts; i++)
			np += o->ppn > 0 ? (int)o->ppn : (slots[i] > 0 ? slots[i] : 1);
	}
	if (nhosts < 1 || nhosts > 100000) {
		rc = IBC_ERR_INVAL;
		goto err_free_hosts;
	}
	count = calloc((size_t)nhosts, sizeof(*count));
	if (count == NULL) {
		rc = IBC_ERR_NOMEM;
		goto err_free_hosts;
	}
	rc = ibc_launch_place(np, nhosts, any_slots ? slots : NULL, (int)o->ppn, count, err, sizeof(err));
	if (rc != IBC_OK) {
		ibc_error("launch: %s", err);
		goto err_free_hosts;
	}
	/* the job: hosts that got ranks, contiguous blocks */
	j->np = (uint32_t)np;
	j->hosts = calloc((size_t)nhosts, sizeof(*j->hosts));
	j->start = calloc((size_t)nhosts + 1, sizeof(*j->start));
	if (j->hosts == NULL || j->start == NULL) {
		rc = IBC_ERR_NOMEM;
		goto err_free_job;
	}
	{
		int run = 0;

		for (i = 0; i < nhosts; i++) {
			if (count[i] == 0)
				continue;
			j->start[j->nnodes] = run;
			run += count[i];
			j->hosts[j->nnodes] = strdup(names[i]);
			if (count[i] > maxc)
				maxc = count[i];
			j->nnodes++;
		}
	}
	j->start[j->nnodes] = np;
	if (o->degree > 0) {
		j->degree = (uint32_t)o->degree;
	} else {
		int k;

		rc = ibc_launch_tree_degree((int)j->nnodes, maxc, (int)o->max_depth, (int)o->max_conn, &k);
		if (rc != IBC_OK) {
			ibc_error("launch: bad --max-depth/--max-conn");
			goto err_free_job;
		}
		j->degree = (uint32_t)k;
	}
	j->mode = (uint32_t)o->mode;
	j->cache = (uint32_t)o->cache;
	j->cache_bound = o->cache_bytes > 0 ? o->cache_bytes : (uint64_t)np * 1024u;
	j->tag_output = (uint32_t)o->tag_output;
	j->log_level = (uint32_t)ibc_log_level_get();
	j->jobid = (uint32_t)getpid() ^ (uint32_t)time(NULL);
	if (getrandom(&j->token, sizeof(j->token), 0) != (ssize_t)sizeof(j->token))
		j->token = j->jobid * 2654435761u;
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0) {
		ibc_error("launch: cannot find my own binary: %s", strerror(errno));
		rc = IBC_ERR_SYS;
		goto err_free_job;
	}
	self[sl] = '\0';
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		strcpy(cwd, "/");
	j->self = strdup(self);
	j->cwd = strdup(cwd);
	if (o->rsh != NULL)
		j->rsh = strdup(o->rsh);
	else
		j->rsh = strdup(o->hosts || o->hostfile ? "ssh" : "local");
	j->argc = o->argc;
	j->argv = calloc((size_t)o->argc + 1, sizeof(*j->argv));
	j->env = calloc((size_t)o->nenv + 1, sizeof(*j->env));
	if (j->self == NULL || j->cwd == NULL || j->rsh == NULL || j->argv == NULL || j->env == NULL) {
		rc = IBC_ERR_NOMEM;
		goto err_free_job;
	}
	for (i = 0; i < o->argc; i++)
		j->argv[i] = strdup(o->argv[i]);
	for (i = 0; i < o->nenv; i++) {
		const char *e = o->env[i];

		if (strchr(e, '=') != NULL) {
			j->env[j->nenv++] = strdup(e);
		} else if (getenv(e) != NULL) {
			char *s = malloc(strlen(e) + strlen(getenv(e)) + 2);

			if (s != NULL)
				sprintf(s, "%s=%s", e, getenv(e));
			j->env[j->nenv++] = s;
		}
	}
	rc = ibc_launch_rsh_check(j->rsh, err, sizeof(err));
	if (rc != IBC_OK) {
		ibc_error("launch: %s", err);
		goto err_free_job;
	}
	/* where each node reaches the launcher */
	a.child_addr = calloc(j->nnodes, sizeof(*a.child_addr));
	if (a.child_addr == NULL) {
		rc = IBC_ERR_NOMEM;
		goto err_free_job;
	}
	for (i = 0; i < (int)j->nnodes; i++) {
		char buf[64];
		struct in_addr in;

		if (o->addr != NULL) {
			snprintf(buf, sizeof(buf), "%s", o->addr);
		} else if (strcmp(j->rsh, "local") == 0) {
			snprintf(buf, sizeof(buf), "127.0.0.1");
		} else if (host_resolve(j->hosts[i], &in) != IBC_OK) {
			ibc_error("launch: unknown host '%s' (not in %s nor resolvable)", j->hosts[i],
				  ibc_launch_hosts_path());
			rc = IBC_ERR_INVAL;
			goto err_free_addr;
		} else if (addr_towards(in, buf, sizeof(buf)) != IBC_OK) {
			ibc_error("launch: no route to host '%s'", j->hosts[i]);
			rc = IBC_ERR_INVAL;
			goto err_free_addr;
		}
		a.child_addr[i] = strdup(buf);
	}
	ibc_debug("launch: %u ranks on %u nodes, degree %u, mode %s, cache %s", j->np, j->nnodes, j->degree,
		  j->mode ? "flat" : "tree", ibc_launch_cache_names[j->cache]);
	rc = listen_any(&a.listen_fd, &a.port);
	if (rc != IBC_OK)
		goto err_free_addr;
	a.me = 0;
	/* a background launcher on a terminal must not stop on SIGTTIN */
	if (isatty(0) && tcgetpgrp(0) != getpgrp())
		a.stdin_fd = -1;
	a.timeout = o->timeout;
	a.deadline = ibc_launch_now() + o->timeout;
	rc = ibc_launch_agent_run(&a);
	{
		struct ibc_launch_buf all = { 0 };

		ibc_launch_buf_put_u32(&all, 0);
		ibc_launch_buf_put_str(&all, "launcher");
		ibc_launch_buf_put_u64(&all, a.ctr.msgs_sent);
		ibc_launch_buf_put_u64(&all, a.ctr.bytes_sent);
		ibc_launch_buf_put_u64(&all, a.ctr.msgs_recv);
		ibc_launch_buf_put_u64(&all, a.ctr.bytes_recv);
		ibc_launch_buf_put_u64(&all, a.ctr.puts);
		ibc_launch_buf_put_u64(&all, a.ctr.gets);
		ibc_launch_buf_put_u64(&all, a.ctr.hits);
		ibc_launch_buf_put_u64(&all, a.ctr.misses);
		ibc_launch_buf_put_u64(&all, a.cache.count);
		ibc_launch_buf_put_u64(&all, a.cache.mem_hwm);
		ibc_launch_buf_put_u64(&all, a.cache.evictions);
		ibc_launch_buf_append(&all, ibc_launch_buf_head(&a.stats), ibc_launch_buf_avail(&a.stats));
		if (o->stats || o->stats_csv)
			stats_print(o, j, ibc_launch_buf_head(&all), ibc_launch_buf_avail(&all), a.nstats + 1);
		ibc_launch_buf_free(&all);
	}
	if (a.failed) {
		fprintf(stderr, "ibchar-launch: %s\n", a.fail_msg);
		*exit_code = a.fail_code;
	} else {
		*exit_code = rc == IBC_OK ? 0 : 1;
	}
	rc = IBC_OK;
err_free_addr:
	for (i = 0; a.child_addr && i < (int)j->nnodes; i++)
		free(a.child_addr[i]);
	free(a.child_addr);
err_free_job:
	ibc_launch_agent_free(&a);
err_free_hosts:
	for (i = 0; names && i < nhosts; i++)
		free(names[i]);
	free(names);
	free(slots);
	free(count);
	if (rc != IBC_OK)
		*exit_code = ibc_status_exit_code(rc);
	return rc;
}

/* "ADDR:PORT:N:TOKEN" */
static int parse_spec(const char *spec, char *addr, size_t alen, int *port, int *n, uint32_t *token)
{
	const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	const char *c3 = c2 ? strchr(c2 + 1, ':') : NULL;

	if (c1 == NULL || c2 == NULL || c3 == NULL || (size_t)(c1 - spec) >= alen)
		return IBC_ERR_INVAL;
	memcpy(addr, spec, (size_t)(c1 - spec));
	addr[c1 - spec] = '\0';
	*port = atoi(c1 + 1);
	*n = atoi(c2 + 1);
	*token = (uint32_t)strtoul(c3 + 1, NULL, 10);
	return (*port > 0 && *n >= 0) ? IBC_OK : IBC_ERR_INVAL;
}

static int connect_to(const char *addr, int port, int *fd_out)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	double until = ibc_launch_now() + 10.0;
	int one = 1;

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		ibc_error("launch: bad launcher address '%s'", addr);
		return IBC_ERR_INVAL;
	}
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return IBC_ERR_SYS;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			*fd_out = fd;
			return IBC_OK;
		}
		close(fd);
		if (ibc_launch_now() > until) {
			ibc_error("launch: cannot connect to %s:%d: %s", addr, port, strerror(errno));
			return IBC_ERR_SYS;
		}
		usleep(20000);
	}
}

static int read_full(int fd, void *p, size_t n, double until)
{
	char *c = p;

	while (n > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int ms = (int)((until - ibc_launch_now()) * 1000);
		ssize_t r;

		if (ms <= 0 || poll(&pfd, 1, ms) <= 0)
			return IBC_ERR_TIMEOUT;
		r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return IBC_ERR_CLOSED;
		c += r;
		n -= (size_t)r;
	}
	return IBC_OK;
}

/* HELLO, then the JOB frame, blocking. */
static int greet(int fd, uint32_t src, uint32_t kind, uint32_t token, struct ibc_launch_job *job)
{
	struct ibc_launch_buf b = { 0 };
	struct ibc_launch_hdr h = { .type = IBC_LAUNCH_MSG_HELLO, .src = src, .seq = token, .aux = kind };
	unsigned char hb[IBC_LAUNCH_WIRE_HDR], *pl;
	double until = ibc_launch_now() + 30.0;
	int rc;

	ibc_launch_buf_put_frame(&b, &h, NULL, 0);
	if (write(fd, ibc_launch_buf_head(&b), ibc_launch_buf_avail(&b)) != (ssize_t)IBC_LAUNCH_WIRE_HDR) {
		ibc_launch_buf_free(&b);
		return IBC_ERR_CLOSED;
	}
	ibc_launch_buf_free(&b);
	rc = read_full(fd, hb, sizeof(hb), until);
	if (rc != IBC_OK)
		return rc;
	rc = ibc_launch_hdr_decode(hb, sizeof(hb), IBC_LAUNCH_WIRE_MAX, &h);
	if ((rc != IBC_OK && rc != IBC_ERR_AGAIN) || h.type != IBC_LAUNCH_MSG_JOB)
		return IBC_ERR_PROTO;
	pl = malloc(h.len ? h.len : 1);
	if (pl == NULL)
		return IBC_ERR_NOMEM;
	rc = read_full(fd, pl, h.len, until);
	if (rc == IBC_OK)
		rc = ibc_launch_job_decode(pl, h.len, job);
	free(pl);
	return rc;
}

int ibc_launch_agent_main(const char *spec, int *exit_code)
{
	struct ibc_launch_agent a;
	char addr[64], tag[32];
	int port, idx, rc, fd;
	uint32_t token;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);

	*exit_code = 1;
	memset(&a, 0, sizeof(a));
	a.listen_fd = a.sigfd = a.parent.fd = -1;
	a.stdin_fd = -1;
	if (parse_spec(spec, addr, sizeof(addr), &port, &idx, &token) != IBC_OK || idx < 1) {
		ibc_error("launch: bad --agent '%s' (ADDR:PORT:INDEX:TOKEN)", spec);
		return IBC_ERR_INVAL;
	}
	snprintf(tag, sizeof(tag), "nla %d", idx);
	ibc_log_tag_set(tag);
	rc = connect_to(addr, port, &fd);
	if (rc != IBC_OK)
		return rc;
	rc = greet(fd, (uint32_t)idx, 1, token, &a.job);
	if (rc != IBC_OK) {
		ibc_error("launch: no job description from %s:%d: %s", addr, port, ibc_status_str(rc));
		close(fd);
		return rc;
	}
	ibc_log_level_set((enum ibc_log_level)a.job.log_level);
	a.me = idx;
	a.parent.fd = fd;
	a.parent.idx = ibc_launch_tree_parent(idx, (int)a.job.degree);
	ibc_launch_fd_nonblock(fd);
	if (getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		inet_ntop(AF_INET, &sa.sin_addr, a.addr, sizeof(a.addr));
	{
		int first;

		if (ibc_launch_tree_children(idx, (int)a.job.degree, (int)a.job.nnodes + 1, &first) > 0) {
			rc = listen_any(&a.listen_fd, &a.port);
			if (rc != IBC_OK)
				goto out_free;
		}
	}
	rc = ibc_launch_agent_run(&a);
	*exit_code = (rc == IBC_OK && !a.parent_lost) ? 0 : 1;
out_free:
	ibc_launch_agent_free(&a);
	return rc;
}

int ibc_launch_proxy_main(const char *spec, int *exit_code)
{
	struct ibc_launch_job job;
	char addr[64];
	int port, rank, rc, fd;
	uint32_t token;

	*exit_code = 127;
	if (parse_spec(spec, addr, sizeof(addr), &port, &rank, &token) != IBC_OK) {
		ibc_error("launch: bad --proxy '%s' (ADDR:PORT:RANK:TOKEN)", spec);
		return IBC_ERR_INVAL;
	}
	rc = connect_to(addr, port, &fd);
	if (rc != IBC_OK)
		return rc;
	rc = greet(fd, (uint32_t)rank, 2, token, &job);
	if (rc != IBC_OK || rank >= (int)job.np) {
		ibc_error("launch: no job description from %s:%d", addr, port);
		close(fd);
		return IBC_ERR_PROTO;
	}
	fcntl(fd, F_SETFD, 0);
	ibc_launch_proc_env(&job, rank, fd);
	if (chdir(job.cwd) != 0) {
		/* keep the directory we are in */
	}
	execvp(job.argv[0], job.argv);
	fprintf(stderr, "ibchar-launch: rank %d: cannot execute '%s': %s\n", rank, job.argv[0], strerror(errno));
	ibc_launch_job_free(&job);
	close(fd);
	return IBC_ERR_NOTFOUND;
}
