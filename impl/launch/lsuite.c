/* The launch suite: see lsuite.h. */
#include "launch/lsuite_priv.h"
#include "launcher/cache.h"
#include "launcher/hostcmd.h"
#include "launcher/hosts.h"
#include "launcher/rsh.h"
#include "launch/stamp.h"
#include "launcher/tree.h"
#include "core/csv.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/topo.h"
#include "harness/avail.h"
#include "harness/harness.h"
#include "harness/meta.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <math.h>
#include <netdb.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers ---- */
static struct point *point_get(struct ls *ls, const char *variant, int hosts, int ppn, int mult)
{
	struct point *p;
	size_t i;

	for (i = 0; i < ls->npts; i++) {
		p = &ls->pts[i];
		if (strcmp(p->variant, variant) == 0 && p->hosts == hosts && p->ppn == ppn && p->mult == mult)
			return p;
	}
	if (ls->npts == ls->cappts) {
		size_t cap = ls->cappts ? 2 * ls->cappts : 64;
		struct point *np = realloc(ls->pts, cap * sizeof(*np));

		if (np == NULL)
			return NULL;
		ls->pts = np;
		ls->cappts = cap;
	}
	p = &ls->pts[ls->npts++];
	memset(p, 0, sizeof(*p));
	snprintf(p->variant, sizeof(p->variant), "%s", variant);
	p->hosts = hosts;
	p->ppn = ppn;
	p->mult = mult;
	p->fanin = -1;
	return p;
}

static int point_add(struct point *p, double us)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		double *ns = realloc(p->s, cap * sizeof(*ns));

		if (ns == NULL)
			return IBC_ERR_NOMEM;
		p->s = ns;
		p->cap = cap;
	}
	p->s[p->n++] = us;
	return IBC_OK;
}

/* ------------------------------------------------- launchers and hosts ---- */
static int spec_parse(const char *name, struct lspec *s)
{
	char *end;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->impl = "ibchar";
	if (strcmp(name, "tree") == 0) {
		s->kind = L_TREE;
	} else if (strncmp(name, "tree-k", 6) == 0 || strncmp(name, "tree-c", 6) == 0) {
		long v = strtol(name + 6, &end, 10);

		if (end == name + 6 || *end != '\0' || v < 1 || v > 4096)
			return IBC_ERR_INVAL;
		s->kind = L_TREE;
		if (name[5] == 'k')
			s->degree = (int)v;
		else
			s->max_conn = (int)v;
	} else if (strcmp(name, "flat") == 0) {
		s->kind = L_FLAT;
	} else if (strcmp(name, "mpich") == 0) {
		s->kind = L_MPICH;
		s->impl = "mpich";
	} else if (strcmp(name, "openmpi") == 0) {
		s->kind = L_OPENMPI;
		s->impl = "openmpi";
	} else if (strcmp(name, "srun") == 0) {
		s->kind = L_SRUN;
		s->impl = "slurm";
	} else if (strcmp(name, "srun-pmix") == 0) {
		s->kind = L_SRUN_PMIX;
		s->impl = "slurm";
	} else {
		return IBC_ERR_INVAL;
	}
	return IBC_OK;
}

/* Which of the programs a launcher can start (hello: its MPI's build). */
static int prog_ok(const struct ls *ls, const struct lspec *s, enum lprog p, const char **why)
{
	*why = NULL;
	switch (p) {
	case P_TRUE:
		return 1;
	case P_PMI:
		if (s->kind == L_OPENMPI || s->kind == L_SRUN_PMIX) {
			*why = "PMIx only: no PMI-1/PMI-2 wire protocol for ibchar's own exchange";
			return 0;
		}
		return 1;
	case P_HELLO:
		if (s->kind == L_OPENMPI || s->kind == L_SRUN_PMIX) {
			if (ls->hello[1][0] == '\0')
				*why = "ibchar-launch-hello-openmpi not built";
			return ls->hello[1][0] != '\0';
		}
		if (ls->hello[0][0] == '\0')
			*why = "ibchar-launch-hello-mpich not built";
		return ls->hello[0][0] != '\0';
	default:
		return 0;
	}
}

static int hosts_setup(struct ls *ls)
{
	const struct ibc_lsuite_opts *o = ls->o;
	long long need = 1;
	size_t i;
	int k;

	for (i = 0; i < o->hosts.n; i++)
		if (o->hosts.v[i] > need)
			need = o->hosts.v[i];
	if (need > MAX_HOSTS) {
		fprintf(stderr, "launch: --hosts %lld: at most %d\n", need, MAX_HOSTS);
		return IBC_ERR_INVAL;
	}
	ls->hostnames = calloc((size_t)need + 1, sizeof(char *));
	if (ls->hostnames == NULL)
		return IBC_ERR_NOMEM;
	if (o->hostnames != NULL) {
		char *dup = strdup(o->hostnames), *save = NULL, *t;

		if (dup == NULL)
			return IBC_ERR_NOMEM;
		for (t = strtok_r(dup, ",", &save); t != NULL && ls->nhosts_avail < need;
		     t = strtok_r(NULL, ",", &save))
			ls->hostnames[ls->nhosts_avail++] = strdup(t);
		free(dup);
		if (ls->nhosts_avail < need) {
			fprintf(stderr, "launch: --hosts %lld but --hostnames names %d\n", need, ls->nhosts_avail);
			return IBC_ERR_INVAL;
		}
		ls->rsh = o->rsh != NULL ? o->rsh : "ssh";
		return IBC_OK;
	}
	if (need == 1 && o->rsh == NULL) {
		/* one host: this one, every launcher on its own (no remote shell) */
		ls->hostnames[0] = strdup("localhost");
		ls->nhosts_avail = 1;
		ls->rsh = "local";
		return IBC_OK;
	}
	for (k = 1; k <= need; k++) {
		char path[64], name[32];

		snprintf(name, sizeof(name), "ibc-h%d", k);
		snprintf(path, sizeof(path), "/run/netns/%s", name);
		if (access(path, F_OK) != 0) {
			fprintf(stderr, "launch: --hosts %lld needs the test hosts ibc-h1..ibc-h%lld, and %s is "
				"not up: run 'scripts/testhosts up %lld' (root), or name real hosts with "
				"--hostnames\n", need, need, name, need);
			return IBC_ERR_INVAL;
		}
		ls->hostnames[k - 1] = strdup(name);
	}
	ls->nhosts_avail = (int)need;
	ls->testhosts = 1;
	ls->rsh = o->rsh != NULL ? o->rsh : "ip netns exec {host}";
	return IBC_OK;
}

/* The interface (for hydra's -iface) and subnet (for Open MPI's
 * oob/btl_tcp_if_include) that reach the first host. */
static void net_setup(struct ls *ls)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM }, *res = NULL;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(9) };
	struct ifaddrs *ifa = NULL, *i;
	socklen_t sl = sizeof(sa);
	int fd;
	char ip[64], err[512];

	/* the test hosts' file first, as ibchar-launch does */
	if (ibc_launch_hosts_lookup(IBC_LAUNCH_HOSTS_FILE, ls->hostnames[0], &sa.sin_addr, err, sizeof(err)) != IBC_OK) {
		if (getaddrinfo(ls->hostnames[0], NULL, &hints, &res) != 0 || res == NULL)
			return;
		sa.sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
		freeaddrinfo(res);
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		close(fd);
		return;
	}
	close(fd);
	if (getifaddrs(&ifa) != 0)
		return;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		struct sockaddr_in *a = (struct sockaddr_in *)i->ifa_addr, *m = (struct sockaddr_in *)i->ifa_netmask;

		if (a == NULL || m == NULL || a->sin_family != AF_INET || a->sin_addr.s_addr != sa.sin_addr.s_addr)
			continue;
		{
			struct in_addr net = { .s_addr = a->sin_addr.s_addr & m->sin_addr.s_addr };
			int bits = __builtin_popcount(m->sin_addr.s_addr);

			snprintf(ls->iface, sizeof(ls->iface), "%s", i->ifa_name);
			inet_ntop(AF_INET, &net, ip, sizeof(ip));
			snprintf(ls->cidr, sizeof(ls->cidr), "%s/%d", ip, bits);
		}
		break;
	}
	freeifaddrs(ifa);
}

/* The remote shell as a program "WRAPPER HOST COMMAND..." for mpirun's
 * launchers: {host} of the template replaced by the host. */
static int wrapper_write(struct ls *ls)
{
	char body[8192], tmpl[1024], delay[64] = "", *t = NULL;
	FILE *f;

	if (strcmp(ls->rsh, "local") == 0 || (strcmp(ls->rsh, "ssh") == 0 && ls->o->rsh_delay_ms <= 0))
		return IBC_OK;
	if (ls->o->rsh_delay_ms > 0)
		snprintf(delay, sizeof(delay), "sleep %.4f\n", ls->o->rsh_delay_ms / 1e3);
	if (ibc_launch_rsh_subst(ls->rsh, "\"$h\"", &t) != IBC_OK)
		return IBC_ERR_NOMEM;
	snprintf(tmpl, sizeof(tmpl), "%s", t);
	free(t);
	if (strcmp(ls->rsh, "ssh") == 0) /* the command goes as one string, as ssh takes it */
		snprintf(tmpl, sizeof(tmpl), "ssh -o BatchMode=yes -x \"$h\" \"$*\" #");
	/* a TMPDIR per host: the test hosts share one hostname, so Open MPI's
	 * per-host session directories (/tmp/ompi.HOST...) would collide */
	snprintf(body, sizeof(body), "#!/bin/sh\n# written by ibchar-launch-bench: --rsh '%s' as a program\n"
		 "h=$1; shift\nTMPDIR='%s'/tmp-$h; mkdir -p \"$TMPDIR\"; export TMPDIR\n%s"
		 "exec %s sh -c \"$*\"\n", ls->rsh, ls->dir, delay, tmpl);
	snprintf(ls->wrapper, sizeof(ls->wrapper), "%s/rsh", ls->dir);
	f = fopen(ls->wrapper, "w");
	if (f == NULL || fputs(body, f) < 0 || fclose(f) != 0 || chmod(ls->wrapper, 0755) != 0) {
		ibc_error("launch: cannot write %s: %s", ls->wrapper, strerror(errno));
		return IBC_ERR_SYS;
	}
	return IBC_OK;
}

static void specs_setup(struct ls *ls)
{
	static const char *const all[] = { "tree", "tree-k2", "flat", "mpich", "openmpi", "srun",
					   "srun-pmix", NULL };
	const struct ibc_lsuite_opts *o = ls->o;
	char buf[256];
	int i, n = 0;

	if (o->launchers.n == 0)
		for (i = 0; all[i] != NULL; i++)
			spec_parse(all[i], &ls->spec[n++]);
	else
		for (i = 0; i < (int)o->launchers.n && n < 16; i++)
			spec_parse(o->launchers.v[i], &ls->spec[n++]);
	ls->nspec = n;
	if (ibc_harness_avail_program("srun", ls->srun, sizeof(ls->srun)) &&
	    ibc_harness_cmd_line("sinfo -h -o %D 2>/dev/null", buf, sizeof(buf)) == 0)
		ls->slurm_nodes = atoi(buf);
	for (i = 0; i < n; i++) {
		struct lspec *s = &ls->spec[i];

		switch (s->kind) {
		case L_TREE:
		case L_FLAT:
			if (ls->launch[0] == '\0')
				snprintf(s->why, sizeof(s->why), "ibchar-launch not built");
			break;
		case L_MPICH:
		case L_OPENMPI:
			if (!ibc_harness_avail_program(s->kind == L_MPICH ? "mpirun.mpich" : "mpirun.openmpi",
						       ls->mpirun[s->kind == L_OPENMPI],
						       sizeof(ls->mpirun[0])))
				snprintf(s->why, sizeof(s->why), "mpirun.%s not found", s->name);
			else if (strcmp(ls->rsh, "local") != 0 && strcmp(ls->rsh, "ssh") != 0 &&
				 ls->iface[0] == '\0')
				snprintf(s->why, sizeof(s->why), "no local interface reaches %s", ls->hostnames[0]);
			break;
		case L_SRUN:
		case L_SRUN_PMIX:
			if (ls->srun[0] == '\0')
				snprintf(s->why, sizeof(s->why), "srun not found (Slurm not installed)");
			else if (ls->slurm_nodes <= 0)
				snprintf(s->why, sizeof(s->why), "no Slurm answers (sinfo failed; "
					 "scripts/slurm-local up N and SLURM_CONF)");
			break;
		}
		if (s->why[0] != '\0')
			ibc_lsuite_say(ls, "launch: %s skipped: %s\n", s->name, s->why);
	}
}

/* ------------------------------------------------------- agent counters ---- */
struct astats {
	double root_recv, root_bytes;   /* messages and bytes into the root (the launcher) */
	double mem_max, mem_mean, mem_root, entries_max, hits, misses, evictions;
	int degree, nagents;
};

static int stats_read(const char *path, struct astats *a)
{
	struct ibc_csv_table *t;
	size_t r;
	double sum = 0;
	int rc = ibc_csv_read(path, &t);

	memset(a, 0, sizeof(*a));
	if (rc != IBC_OK)
		return rc;
	for (r = 0; r + 1 < t->nrows; r++) {
		double mem = ibc_csv_num(t, r, "cache_mem_hwm");

		a->degree = (int)ibc_csv_num(t, r, "degree");
		a->hits += ibc_csv_num(t, r, "hits");
		a->misses += ibc_csv_num(t, r, "misses");
		a->evictions += ibc_csv_num(t, r, "evictions");
		if (ibc_csv_num(t, r, "agent") == 0) {
			a->root_recv = ibc_csv_num(t, r, "msgs_recv");
			a->root_bytes = ibc_csv_num(t, r, "bytes_recv");
			a->mem_root = mem;
			continue;
		}
		a->nagents++;
		sum += mem;
		if (mem > a->mem_max)
			a->mem_max = mem;
		if (ibc_csv_num(t, r, "cache_entries") > a->entries_max)
			a->entries_max = ibc_csv_num(t, r, "cache_entries");
	}
	a->mem_mean = a->nagents ? sum / a->nagents : 0;
	ibc_csv_table_free(t);
	return IBC_OK;
}

/* ------------------------------------------------------------- a point ---- */
static void tree_shape(const struct lspec *s, int nnodes, int c, long long *k, int *depth, const char **rule)
{
	int max_conn = s->max_conn > 0 ? s->max_conn : IBC_LAUNCH_MAX_CONN_DEFAULT, kk = s->degree, kd = 0;

	*rule = "given";
	if (kk == 0) {
		ibc_launch_tree_degree(nnodes, c, IBC_LAUNCH_MAX_DEPTH_DEFAULT, 1 << 30, &kd);
		ibc_launch_tree_degree(nnodes, c, IBC_LAUNCH_MAX_DEPTH_DEFAULT, max_conn, &kk);
		*rule = kk < kd ? "conn" : "depth";
	}
	*k = kk;
	*depth = ibc_launch_tree_depth(nnodes + 1, kk);
}

static int record_phase(struct ls *ls, const struct jobspec *js, const char *phase, double us)
{
	const struct lspec *s = js->s;
	char variant[64];
	struct point *p;

	snprintf(variant, sizeof(variant), "%s:%s:%s", s->name, ibc_lsuite_prog_names[js->prog], phase);
	p = point_get(ls, variant, js->h, js->c, js->m);
	if (p == NULL)
		return IBC_ERR_NOMEM;
	if (p->n == 0) {
		int nn = js->h * js->m, depth;
		const char *rule;
		long long k;

		p->nodes = nn;
		p->ranks = nn * js->c;
		if (s->kind == L_TREE) {
			tree_shape(s, nn, js->c, &k, &depth, &rule);
			p->fanin = k;
			snprintf(p->extra, sizeof(p->extra),
				 "kind=phase;launcher=%s;program=%s;phase=%s;hosts=%d;mult=%d;k=%lld;depth=%d;"
				 "degree_rule=%s;max_conn=%d", s->name, ibc_lsuite_prog_names[js->prog], phase, js->h, js->m, k,
				 depth, rule, s->max_conn > 0 ? s->max_conn : IBC_LAUNCH_MAX_CONN_DEFAULT);
		} else {
			snprintf(p->extra, sizeof(p->extra), "kind=phase;launcher=%s;program=%s;phase=%s;hosts=%d;mult=%d",
				 s->name, ibc_lsuite_prog_names[js->prog], phase, strcmp(ls->rsh, "local") == 0 ? 1 : js->h,
				 js->m);
		}
		if (ls->o->rsh_delay_ms > 0)
			snprintf(p->extra + strlen(p->extra), sizeof(p->extra) - strlen(p->extra),
				 ";rsh_delay_ms=%g", ls->o->rsh_delay_ms);
		if (js->prog == P_HELLO)
			snprintf(p->extra + strlen(p->extra), sizeof(p->extra) - strlen(p->extra), ";mpi=%s",
				 s->kind == L_OPENMPI || s->kind == L_SRUN_PMIX ? "openmpi" : "mpich");
	}
	return point_add(p, us);
}

static const char *cache_of(const struct ls *ls, size_t i)
{
	return ls->o->caches.n ? ls->o->caches.v[i] : ibc_launch_cache_names[i];
}

static size_t ncaches(const struct ls *ls)
{
	if (ls->o->caches.n == 1 && strcmp(ls->o->caches.v[0], "none") == 0)
		return 0;
	return ls->o->caches.n ? ls->o->caches.n : IBC_LAUNCH_CACHE_MAX_;
}

static const char *const patterns[] = { "ring", "allgather" };

/* The cache experiment's stage-count sweep at one point: launch-cache.csv. */
static int cache_sweep(struct ls *ls, const struct lspec *tree, int h, int c, int m)
{
	static const char *const cols[] = { "run_id", "policy", "pattern", "hosts", "ppn", "mult", "ranks",
					    "nlas", "degree", "stages", "stage_p50_us", "root_msgs_recv",
					    "root_bytes_recv", "nla_mem_max", "nla_mem_mean", "root_mem",
					    "nla_entries_max", "hits", "misses", "evictions" };
	struct ibc_csv_writer *w;
	char path[4400], stats[4400], f[20][32];
	const char *fields[20];
	size_t ci, pi;
	long s;
	int rc;

	snprintf(path, sizeof(path), "%s/launch-cache.csv", ls->o->out);
	snprintf(stats, sizeof(stats), "%s/stats.csv", ls->dir);
	rc = ibc_csv_writer_open(path, cols, 20, 1, &w);
	if (rc != IBC_OK)
		return rc;
	for (ci = 0; ci < ncaches(ls); ci++)
		for (pi = 0; pi < 2; pi++)
			for (s = 1; s <= ls->o->stages; s *= 2) {
				struct jobspec js = { .s = tree, .prog = P_PMI, .h = h, .c = c, .m = m,
						      .cache = cache_of(ls, ci), .pattern = patterns[pi],
						      .stages = s, .stats = stats };
				struct result res;
				struct astats a;
				double med;
				int k;

				if (ibc_lsuite_job_do(ls, &js, &res) != IBC_OK || stats_read(stats, &a) != IBC_OK) {
					ls->failed++;
					continue;
				}
				ibc_stats_sort(res.stage_us, (size_t)res.nstages);
				med = ibc_stats_quantile_sorted(res.stage_us, (size_t)res.nstages, 0.5);
				snprintf(f[0], 32, "%d", h);
				snprintf(f[1], 32, "%d", c);
				snprintf(f[2], 32, "%d", m);
				snprintf(f[3], 32, "%d", h * c * m);
				snprintf(f[4], 32, "%d", a.nagents);
				snprintf(f[5], 32, "%d", a.degree);
				snprintf(f[6], 32, "%ld", s);
				snprintf(f[7], 32, "%.1f", med);
				snprintf(f[8], 32, "%.0f", a.root_recv);
				snprintf(f[9], 32, "%.0f", a.root_bytes);
				snprintf(f[10], 32, "%.0f", a.mem_max);
				snprintf(f[11], 32, "%.0f", a.mem_mean);
				snprintf(f[12], 32, "%.0f", a.mem_root);
				snprintf(f[13], 32, "%.0f", a.entries_max);
				snprintf(f[14], 32, "%.0f", a.hits);
				snprintf(f[15], 32, "%.0f", a.misses);
				snprintf(f[16], 32, "%.0f", a.evictions);
				fields[0] = ls->o->run_id;
				fields[1] = js.cache;
				fields[2] = js.pattern;
				for (k = 0; k < 17; k++)
					fields[3 + k] = f[k];
				if (ibc_csv_writer_row(w, fields) != IBC_OK)
					rc = IBC_ERR_IO;
			}
	if (ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc;
}

/* The sweep's counters for a policy at one point: messages into the root
 * per stage (slope over the stage counts) and memory at the most stages. */
static void cache_counters(const struct ls *ls, const char *policy, const char *pattern, int h, int c, int m,
			   char *buf, size_t cap)
{
	struct ibc_csv_table *t;
	char path[4400];
	double s1 = -1, r1 = 0, sN = -1, rN = 0, mem1 = 0, memN = 0, memroot = 0;
	size_t r;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/launch-cache.csv", ls->o->out);
	if (ibc_csv_read(path, &t) != IBC_OK)
		return;
	for (r = 0; r + 1 < t->nrows; r++) {
		double s = ibc_csv_num(t, r, "stages");

		if (strcmp(ibc_csv_str(t, r, "run_id"), ls->o->run_id) != 0 ||
		    strcmp(ibc_csv_str(t, r, "policy"), policy) != 0 ||
		    strcmp(ibc_csv_str(t, r, "pattern"), pattern) != 0 || ibc_csv_num(t, r, "hosts") != h ||
		    ibc_csv_num(t, r, "ppn") != c || ibc_csv_num(t, r, "mult") != m)
			continue;
		if (s1 < 0 || s < s1) {
			s1 = s;
			r1 = ibc_csv_num(t, r, "root_msgs_recv");
			mem1 = ibc_csv_num(t, r, "nla_mem_max");
		}
		if (s > sN) {
			sN = s;
			rN = ibc_csv_num(t, r, "root_msgs_recv");
			memN = ibc_csv_num(t, r, "nla_mem_max");
			memroot = ibc_csv_num(t, r, "root_mem");
		}
	}
	ibc_csv_table_free(t);
	if (sN > s1 && s1 > 0)
		snprintf(buf, cap, ";root_msgs_per_stage=%.1f;nla_mem_stage1=%.0f;nla_mem_stage%.0f=%.0f;"
			 "nla_mem_growth=%.3f;root_mem=%.0f", (rN - r1) / (sN - s1), mem1, sN, memN,
			 mem1 > 0 ? memN / mem1 : 0, memroot);
}

static int write_points(struct ls *ls, int h, int c, int m)
{
	size_t i;
	int rc = IBC_OK;

	for (i = 0; i < ls->npts; i++) {
		struct point *p = &ls->pts[i];
		struct ibc_harness_row_in r;
		char extra[1024], more[256] = "";

		if (p->hosts != h || p->ppn != c || p->mult != m || p->n == 0)
			continue;
		if (strncmp(p->variant, "cache:", 6) == 0) {
			char pol[32] = "", pat[32] = "";

			sscanf(p->variant + 6, "%31[^:]:%31s", pol, pat);
			cache_counters(ls, pol, pat, h, c, m, more, sizeof(more));
		}
		snprintf(extra, sizeof(extra), "%s%s", p->extra, more);
		r = (struct ibc_harness_row_in){ .run_id = ls->o->run_id, .suite = ls->o->suite,
						 .variant = p->variant,
						 .impl = strstr(p->extra, "launcher=mpich") ? "mpich" :
							 strstr(p->extra, "launcher=openmpi") ? "openmpi" :
							 strstr(p->extra, "launcher=srun") ? "slurm" : "ibchar",
						 .xport = "tcp", .launcher = "-", .nodes = p->nodes,
						 .ppn = c, .ranks = p->ranks, .bytes = 0, .fanin = p->fanin,
						 .samples = p->s, .n = p->n, .extra = extra, .dir = ls->o->out };
		if (ibc_harness_row_from_samples(ls->rows, &r) != IBC_OK)
			rc = IBC_ERR_IO;
	}
	return rc;
}

static double point_p50(const struct ls *ls, const char *variant, int h, int c, int m)
{
	size_t i;

	for (i = 0; i < ls->npts; i++) {
		const struct point *p = &ls->pts[i];
		struct ibc_stats st;

		if (strcmp(p->variant, variant) == 0 && p->hosts == h && p->ppn == c && p->mult == m && p->n > 0 &&
		    ibc_stats_compute(p->s, p->n, &st) == IBC_OK)
			return st.p50;
	}
	return NAN;
}

static void point_line(const struct ls *ls, int h, int c, int m)
{
	static const char *const show[] = { "tree:true:spawn", "flat:true:spawn", "tree:hello:total",
					    "mpich:hello:total", "openmpi:hello:total", "srun:hello:total",
					    "cache:hcs:ring:stage", "cache:hcmab:ring:stage" };
	char variant[64];
	size_t i;

	ibc_lsuite_say(ls, "launch: %d hosts x %d%s (%d processes), p50 ms:", h, c, m > 1 ? " x mult" : "", h * c * m);
	for (i = 0; i < sizeof(show) / sizeof(show[0]); i++) {
		double v;

		snprintf(variant, sizeof(variant), "%s", show[i]);
		if (strncmp(variant, "cache:", 6) == 0)
			variant[strlen(variant) - 6] = '\0';
		v = point_p50(ls, variant, h, c, m);
		if (!isnan(v))
			ibc_lsuite_say(ls, " %s %.2f", variant, v / 1e3);
	}
	ibc_lsuite_say(ls, "\n");
}

/* Every trial: every launcher and program, then the cache policies. */
static int run_point(struct ls *ls, int h, int c, int m)
{
	struct lspec tree;
	long t;
	int i, p, rc;

	spec_parse("tree", &tree);
	for (t = 0; t < ls->o->trials; t++) {
		for (i = 0; i < ls->nspec; i++) {
			const struct lspec *s = &ls->spec[i];

			if (s->why[0] != '\0')
				continue;
			if (m > 1 && s->kind != L_TREE && s->kind != L_FLAT)
				continue; /* said once, below */
			if ((s->kind == L_SRUN || s->kind == L_SRUN_PMIX) && h > ls->slurm_nodes)
				continue;
			for (p = 0; p < P_MAX_; p++) {
				struct jobspec js = { .s = s, .prog = (enum lprog)p, .h = h, .c = c, .m = m,
						      .pattern = "allgather", .stages = 1 };
				struct result res;

				if (!ls->progs[p] || !prog_ok(ls, s, (enum lprog)p, &(const char *){ NULL }))
					continue;
				if (ibc_lsuite_job_do(ls, &js, &res) != IBC_OK) {
					ls->failed++;
					continue;
				}
				rc = record_phase(ls, &js, "spawn", res.spawn_us);
				if (rc == IBC_OK && p != P_TRUE)
					rc = record_phase(ls, &js, "init", res.init_us);
				if (rc == IBC_OK)
					rc = record_phase(ls, &js, "total", res.total_us);
				if (rc != IBC_OK)
					return rc;
			}
		}
		for (i = 0; i < (int)ncaches(ls); i++) {
			size_t pi;

			for (pi = 0; pi < 2; pi++) {
				struct jobspec js = { .s = &tree, .prog = P_PMI, .h = h, .c = c, .m = m,
						      .cache = cache_of(ls, (size_t)i), .pattern = patterns[pi],
						      .stages = ls->o->stages };
				char variant[64];
				struct result res;
				struct point *pt;
				int k;

				if (ibc_lsuite_job_do(ls, &js, &res) != IBC_OK) {
					ls->failed++;
					continue;
				}
				snprintf(variant, sizeof(variant), "cache:%s:%s", js.cache, js.pattern);
				pt = point_get(ls, variant, h, c, m);
				if (pt == NULL)
					return IBC_ERR_NOMEM;
				if (pt->n == 0) {
					long long k2;
					int depth;
					const char *rule;

					pt->nodes = h * m;
					pt->ranks = h * c * m;
					tree_shape(&tree, h * m, c, &k2, &depth, &rule);
					pt->fanin = k2;
					snprintf(pt->extra, sizeof(pt->extra),
						 "kind=cache;launcher=tree;policy=%s;pattern=%s;stages=%ld;hosts=%d;mult=%d;"
						 "k=%lld;depth=%d", js.cache, js.pattern, js.stages, h, m, k2, depth);
				}
				/* the first stage also pays the connections' warm-up: kept */
				for (k = 0; k < res.nstages; k++)
					if (point_add(pt, res.stage_us[k]) != IBC_OK)
						return IBC_ERR_NOMEM;
			}
		}
	}
	if (ncaches(ls) > 0) {
		rc = cache_sweep(ls, &tree, h, c, m);
		if (rc != IBC_OK)
			return rc;
	}
	point_line(ls, h, c, m);
	return write_points(ls, h, c, m);
}

static void meta_add(const struct ls *ls)
{
	char path[4400], buf[512];

	snprintf(path, sizeof(path), "%s/meta.csv", ls->o->out);
	ibc_harness_meta_append(path, "run_id", ls->o->run_id);
	if (ibc_harness_cmd_line("uname -srm", buf, sizeof(buf)) == 0)
		ibc_harness_meta_append(path, "kernel", buf);
	if (gethostname(buf, sizeof(buf)) == 0)
		ibc_harness_meta_append(path, "host", buf);
	ibc_harness_meta_append(path, "launch_rsh", ls->rsh);
	snprintf(buf, sizeof(buf), "%g", ls->o->rsh_delay_ms);
	ibc_harness_meta_append(path, "launch_rsh_delay_ms", buf);
	ibc_harness_meta_append(path, "launch_testhosts", ls->testhosts ? "1" : "0");
	if (ls->iface[0] != '\0')
		ibc_harness_meta_append(path, "launch_iface", ls->iface);
	if (ls->mpirun[0][0] != '\0' && ibc_harness_cmd_line("mpirun.mpich --version 2>&1 | grep -m1 Version", buf,
						  sizeof(buf)) == 0)
		ibc_harness_meta_append(path, "mpich_hydra", buf);
	if (ls->mpirun[1][0] != '\0' && ibc_harness_cmd_line("mpirun.openmpi --version 2>&1 | head -1", buf, sizeof(buf)) == 0)
		ibc_harness_meta_append(path, "openmpi_mpirun", buf);
	if (ls->srun[0] != '\0' && ibc_harness_cmd_line("srun --version 2>&1", buf, sizeof(buf)) == 0)
		ibc_harness_meta_append(path, "slurm", buf);
}

static int bin(const char *bindir, const char *name, char *path, size_t cap)
{
	snprintf(path, cap, "%s/%s", bindir, name);
	if (access(path, X_OK) == 0)
		return 1;
	path[0] = '\0';
	return 0;
}

int ibc_lsuite_run(const struct ibc_lsuite_opts *o)
{
	struct ls ls = { .o = o };
	size_t hi, ci, mi, i;
	int rc, p;

	for (i = 0; i < o->launchers.n; i++)
		if (spec_parse(o->launchers.v[i], &ls.spec[0]) != IBC_OK) {
			fprintf(stderr, "launch: unknown launcher '%s' (tree, tree-kK, tree-cN, flat, mpich, openmpi, "
				"srun, srun-pmix)\n", o->launchers.v[i]);
			return IBC_ERR_INVAL;
		}
	for (i = 0; i < o->programs.n; i++) {
		for (p = 0; p < P_MAX_ && strcmp(o->programs.v[i], ibc_lsuite_prog_names[p]) != 0; p++)
			;
		if (p == P_MAX_) {
			fprintf(stderr, "launch: unknown program '%s' (true, pmi, hello)\n", o->programs.v[i]);
			return IBC_ERR_INVAL;
		}
		ls.progs[p] = 1;
	}
	if (o->programs.n == 0)
		for (p = 0; p < P_MAX_; p++)
			ls.progs[p] = 1;
	for (i = 0; i < o->caches.n; i++)
		if (strcmp(o->caches.v[i], "none") != 0) {
			for (p = 0; ibc_launch_cache_names[p] && strcmp(ibc_launch_cache_names[p], o->caches.v[i]); p++)
				;
			if (ibc_launch_cache_names[p] == NULL) {
				fprintf(stderr, "launch: unknown cache policy '%s' (hcs, hcma, hcmab, hcmab-lru, none)\n",
					o->caches.v[i]);
				return IBC_ERR_INVAL;
			}
		}
	for (i = 0; i < o->hosts.n; i++)
		if (o->hosts.v[i] < 1) {
			fprintf(stderr, "launch: --hosts: counts must be >= 1\n");
			return IBC_ERR_INVAL;
		}
	for (i = 0; i < o->ppn.n; i++)
		if (o->ppn.v[i] < 1 || o->ppn.v[i] > 1024) {
			fprintf(stderr, "launch: --ppn: 1..1024 processes per host\n");
			return IBC_ERR_INVAL;
		}
	for (i = 0; i < o->mult.n; i++)
		if (o->mult.v[i] < 1 || o->mult.v[i] > 64) {
			fprintf(stderr, "launch: --mult: 1..64 node agents per host\n");
			return IBC_ERR_INVAL;
		}
	rc = hosts_setup(&ls);
	if (rc != IBC_OK)
		goto out;
	if (o->rsh_delay_ms > 0 && strcmp(ls.rsh, "local") == 0) {
		fprintf(stderr, "launch: --rsh-delay needs a remote shell: test hosts (--hosts N > 1) or "
			"--hostnames\n");
		rc = IBC_ERR_INVAL;
		goto out;
	}
	snprintf(ls.dir, sizeof(ls.dir), "%s/.launch", o->out);
	rc = ibc_fs_mkdir_p(ls.dir);
	if (rc != IBC_OK)
		goto out;
	bin(o->bindir, "ibchar-launch", ls.launch, sizeof(ls.launch));
	if (!bin(o->bindir, "ibchar-launch-probe", ls.probe, sizeof(ls.probe))) {
		fprintf(stderr, "launch: %s/ibchar-launch-probe not built\n", o->bindir);
		rc = IBC_ERR_NOTFOUND;
		goto out;
	}
	bin(o->bindir, "ibchar-launch-hello-mpich", ls.hello[0], sizeof(ls.hello[0]));
	bin(o->bindir, "ibchar-launch-hello-openmpi", ls.hello[1], sizeof(ls.hello[1]));
	if (strcmp(ls.rsh, "local") != 0)
		net_setup(&ls);
	rc = wrapper_write(&ls);
	if (rc != IBC_OK)
		goto out;
	ibc_launch_hostcmd_root_env();
	specs_setup(&ls);
	for (i = 0; i < (size_t)ls.nspec; i++) {
		const char *why;

		for (p = 0; p < P_MAX_; p++)
			if (ls.spec[i].why[0] == '\0' && ls.progs[p] && !prog_ok(&ls, &ls.spec[i], (enum lprog)p, &why))
				ibc_lsuite_say(&ls, "launch: %s does not run %s: %s\n", ls.spec[i].name, ibc_lsuite_prog_names[p], why);
	}
	rc = ibc_harness_rows_writer_open(o->out, &ls.rows);
	if (rc != IBC_OK)
		goto out;
	meta_add(&ls);
	for (mi = 0; mi < o->mult.n; mi++)
		for (hi = 0; hi < o->hosts.n; hi++)
			for (ci = 0; ci < o->ppn.n; ci++) {
				int h = (int)o->hosts.v[hi], c = (int)o->ppn.v[ci], m = (int)o->mult.v[mi];

				if (m > 1)
					ibc_lsuite_say(&ls, "launch: %d node agents per host: tree and flat only (the mpiruns and "
						 "srun place one daemon per host)\n", m);
				for (i = 0; i < (size_t)ls.nspec; i++)
					if ((ls.spec[i].kind == L_SRUN || ls.spec[i].kind == L_SRUN_PMIX) &&
					    ls.spec[i].why[0] == '\0' && h > ls.slurm_nodes)
						ibc_lsuite_say(&ls, "launch: %s skipped at %d hosts: Slurm has %d nodes\n",
						    ls.spec[i].name, h, ls.slurm_nodes);
				rc = run_point(&ls, h, c, m);
				if (rc != IBC_OK)
					goto out;
			}
	rc = ibc_lsuite_growth_write(&ls);
	if (rc == IBC_OK)
		rc = ibc_lsuite_memory_table(&ls);
	if (rc == IBC_OK && ls.failed > 0) {
		fprintf(stderr, "launch: %d of %d jobs failed (their samples are missing)\n", ls.failed, ls.jobs);
		rc = IBC_ERR_REMOTE;
	}
out:
	if (ls.rows != NULL && ibc_csv_writer_close(ls.rows) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	for (i = 0; i < ls.npts; i++)
		free(ls.pts[i].s);
	free(ls.pts);
	for (i = 0; ls.hostnames != NULL && ls.hostnames[i] != NULL; i++)
		free(ls.hostnames[i]);
	free(ls.hostnames);
	return rc;
}
