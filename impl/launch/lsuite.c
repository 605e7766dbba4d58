/* The launch suite: see lsuite.h. */
#include "launch/lsuite.h"
#include "launch/cache.h"
#include "launch/stamp.h"
#include "launch/tree.h"
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARGS_MAX 48
#define MAX_HOSTS 4096
#define LRU_STAGES 2          /* hcmab-lru's bound: two stages' entries per process */
#define ENTRY_BYTES_EST 160   /* a stage's entry in an agent cache: key + 64 B + overhead */

enum lkind { L_TREE, L_FLAT, L_MPICH, L_OPENMPI, L_SRUN, L_SRUN_PMIX };
enum lprog { P_TRUE, P_PMI, P_HELLO, P_MAX_ };
static const char *const prog_names[] = { "true", "pmi", "hello" };

struct lspec {
	char name[32];
	enum lkind kind;
	int degree;    /* 0: auto */
	int max_conn;  /* 0: default */
	const char *impl;
	char why[160]; /* why it cannot run here, empty when it can */
};

struct point {
	char variant[64], extra[512];
	int hosts, ppn, mult, nodes, ranks;
	long long fanin;
	double *s;
	size_t n, cap;
};

struct ls {
	const struct ibc_lsuite_opts *o;
	struct lspec spec[16];
	int nspec;
	int progs[P_MAX_];
	char **hostnames;
	int nhosts_avail;
	int testhosts;            /* hosts are netns test hosts */
	const char *rsh;
	char dir[4200];           /* OUT/.launch: stamp files, logs, the rsh wrapper */
	char wrapper[4300], iface[IF_NAMESIZE + 1], cidr[96];
	char launch[4200], probe[4200], hello[2][4200], mpirun[2][4200], srun[4200];
	int slurm_nodes;
	struct ibc_csv_writer *rows;
	struct point *pts;
	size_t npts, cappts;
	int failed, jobs;
};

/* ------------------------------------------------------------- helpers ---- */
static void say(const struct ls *ls, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct ls *ls, const char *fmt, ...)
{
	va_list ap;

	if (ls->o->quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fflush(stdout);
}

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
	FILE *f;
	char line[256], ip[64], name[128];

	/* the test hosts' file first, as ibchar-launch does */
	f = fopen("/run/ibchar/testhosts.hosts", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%63s %127s", ip, name) == 2 && strcmp(name, ls->hostnames[0]) == 0)
			inet_pton(AF_INET, ip, &sa.sin_addr);
	if (f != NULL)
		fclose(f);
	if (sa.sin_addr.s_addr == 0) {
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
	char body[8192], tmpl[1024], delay[64] = "";
	const char *p;
	size_t used = 0;
	FILE *f;

	if (strcmp(ls->rsh, "local") == 0 || (strcmp(ls->rsh, "ssh") == 0 && ls->o->rsh_delay_ms <= 0))
		return IBC_OK;
	if (ls->o->rsh_delay_ms > 0)
		snprintf(delay, sizeof(delay), "sleep %.4f\n", ls->o->rsh_delay_ms / 1e3);
	for (p = ls->rsh; *p && used + 8 < sizeof(tmpl); p++) {
		if (strncmp(p, "{host}", 6) == 0) {
			used += (size_t)snprintf(tmpl + used, sizeof(tmpl) - used, "\"$h\"");
			p += 5;
		} else {
			tmpl[used++] = *p;
		}
	}
	tmpl[used] = '\0';
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
			say(ls, "launch: %s skipped: %s\n", s->name, s->why);
	}
}

/* --------------------------------------------------------------- a job ---- */
struct job {
	char *argv[ARGS_MAX + 1];
	char store[ARGS_MAX][256];
	int argc;
};

static void job_arg(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_arg(struct job *j, const char *fmt, ...)
{
	va_list ap;

	if (j->argc >= ARGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(j->store[j->argc], sizeof(j->store[0]), fmt, ap);
	va_end(ap);
	j->argv[j->argc] = j->store[j->argc];
	j->argv[++j->argc] = NULL;
}

/* An argument that outlives the job's build (no copy, any length). */
static void job_arg_ref(struct job *j, char *arg)
{
	if (j->argc >= ARGS_MAX)
		return;
	j->argv[j->argc] = arg;
	j->argv[++j->argc] = NULL;
}

/* The host list: each of the first h hosts m times (m agents per host). */
static void host_list(const struct ls *ls, int h, int m, int slots, char *buf, size_t cap)
{
	size_t used = 0;
	int i, r;

	buf[0] = '\0';
	for (i = 0; i < h; i++)
		for (r = 0; r < m; r++) {
			if (slots > 0)
				used += (size_t)snprintf(buf + used, cap > used ? cap - used : 0, "%s%s:%d",
							 used ? "," : "", ls->hostnames[i], slots);
			else
				used += (size_t)snprintf(buf + used, cap > used ? cap - used : 0, "%s%s",
							 used ? "," : "", ls->hostnames[i]);
		}
}

struct jobspec {
	const struct lspec *s;
	enum lprog prog;
	int h, c, m;
	const char *cache;   /* tree only; NULL: default */
	const char *pattern; /* pmi: ring or allgather */
	long stages;
	const char *stats;   /* --stats-csv path or NULL */
};

static void job_build(const struct ls *ls, const struct jobspec *js, const char *stamp, struct job *j)
{
	static char hosts[MAX_HOSTS * 24];
	const struct lspec *s = js->s;
	int np = js->h * js->c * js->m, local = strcmp(ls->rsh, "local") == 0;
	int mpi = s->kind == L_OPENMPI || s->kind == L_SRUN_PMIX;
	char stages[16];

	j->argc = 0;
	switch (s->kind) {
	case L_TREE:
	case L_FLAT:
		job_arg(j, "%s", ls->launch);
		job_arg(j, "-n");
		job_arg(j, "%d", np);
		if (!(local && js->h * js->m == 1)) {
			host_list(ls, js->h, js->m, 0, hosts, sizeof(hosts));
			job_arg(j, "--hosts");
			job_arg_ref(j, hosts);
			job_arg(j, "--ppn");
			job_arg(j, "%d", js->c);
		}
		job_arg(j, "--rsh");
		if (ls->o->rsh_delay_ms > 0 && ls->wrapper[0] != '\0')
			job_arg(j, "%s {host}", ls->wrapper);
		else
			job_arg(j, "%s", ls->rsh);
		job_arg(j, "--timeout");
		job_arg(j, "%ld", ls->o->timeout_s);
		if (s->kind == L_FLAT) {
			job_arg(j, "--mode");
			job_arg(j, "flat");
		}
		if (s->degree > 0) {
			job_arg(j, "--degree");
			job_arg(j, "%d", s->degree);
		}
		if (s->max_conn > 0) {
			job_arg(j, "--max-conn");
			job_arg(j, "%d", s->max_conn);
		}
		if (js->cache != NULL) {
			job_arg(j, "--cache");
			job_arg(j, "%s", js->cache);
			if (strcmp(js->cache, "hcmab-lru") == 0) {
				job_arg(j, "--cache-bytes");
				job_arg(j, "%d", np * LRU_STAGES * ENTRY_BYTES_EST);
			}
		}
		if (js->stats != NULL) {
			job_arg(j, "--stats-csv");
			job_arg(j, "%s", js->stats);
		}
		job_arg(j, "--");
		break;
	case L_MPICH:
		job_arg(j, "%s", ls->mpirun[0]);
		job_arg(j, "-n");
		job_arg(j, "%d", np);
		if (!local) {
			host_list(ls, js->h, 1, 0, hosts, sizeof(hosts));
			job_arg(j, "-ppn");
			job_arg(j, "%d", js->c);
			job_arg(j, "-hosts");
			job_arg_ref(j, hosts);
			if (ls->wrapper[0] != '\0') {
				job_arg(j, "-launcher");
				job_arg(j, "rsh");
				job_arg(j, "-launcher-exec");
				job_arg(j, "%s", ls->wrapper);
			}
			if (ls->iface[0] != '\0') {
				job_arg(j, "-iface");
				job_arg(j, "%s", ls->iface);
			}
		}
		break;
	case L_OPENMPI: {
		struct ibc_topo_info ti;

		job_arg(j, "%s", ls->mpirun[1]);
		job_arg(j, "-n");
		job_arg(j, "%d", np);
		if (!local) {
			host_list(ls, js->h, 1, js->c, hosts, sizeof(hosts));
			job_arg(j, "--host");
			job_arg_ref(j, hosts);
			if (ls->wrapper[0] != '\0') {
				job_arg(j, "--mca");
				job_arg(j, "plm_rsh_agent");
				job_arg(j, "%s", ls->wrapper);
			}
			if (ls->cidr[0] != '\0') {
				job_arg(j, "--mca");
				job_arg(j, "oob_tcp_if_include");
				job_arg(j, "%s", ls->cidr);
				job_arg(j, "--mca");
				job_arg(j, "btl_tcp_if_include");
				job_arg(j, "%s", ls->cidr);
			}
		}
		if (ls->testhosts) {
			/* several orteds on one machine race in hwloc_shmem_topology_write
			 * (a segfault in about 1 job of 6); one per node on a cluster */
			job_arg(j, "--mca");
			job_arg(j, "rtc");
			job_arg(j, "^hwloc");
		}
		if (ibc_topo_query(&ti) != IBC_OK || js->c > ti.allowed_pus || local)
			job_arg(j, "--oversubscribe");
		break;
	}
	case L_SRUN:
	case L_SRUN_PMIX:
		job_arg(j, "%s", ls->srun);
		job_arg(j, "-N");
		job_arg(j, "%d", js->h);
		job_arg(j, "-n");
		job_arg(j, "%d", np);
		job_arg(j, "--ntasks-per-node=%d", js->c);
		job_arg(j, "--mpi=%s", s->kind == L_SRUN_PMIX ? "pmix" : "pmi2");
		job_arg(j, "--time=%ld", (ls->o->timeout_s + 59) / 60);
		break;
	}
	switch (js->prog) {
	case P_TRUE:
	case P_PMI:
		job_arg(j, "%s", ls->probe);
		job_arg(j, "%s", stamp);
		if (js->prog == P_TRUE) {
			job_arg(j, "true");
		} else {
			snprintf(stages, sizeof(stages), "%ld", js->stages);
			job_arg(j, "pmi");
			job_arg(j, "%s", js->pattern);
			job_arg(j, "%s", stages);
		}
		break;
	default:
		job_arg(j, "%s", ls->hello[mpi]);
		job_arg(j, "%s", stamp);
		break;
	}
}

static pid_t spawn_job(char **argv, const char *log)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	extern char **environ;
	pid_t pid = -1;
	int err;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
	posix_spawnattr_init(&at);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	err = posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (err != 0) {
		ibc_error("launch: cannot run %s: %s", argv[0], strerror(err));
		return -1;
	}
	return pid;
}

/* Waits for pid up to timeout_s (then the process group is killed): the
 * exit status (128+N for a signal, 124 for the timeout) and the instant. */
static int wait_job(pid_t pid, long timeout_s, int64_t *t_exit)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), status = 0, timed_out = 0;

	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		int r;

		do
			r = poll(&p, 1, timeout_s > 0 ? (int)(timeout_s * 1000) : -1);
		while (r < 0 && errno == EINTR);
		if (r == 0)
			timed_out = 1;
		close(pfd);
	}
	*t_exit = ibc_launch_stamp_now();
	if (timed_out) {
		kill(-pid, SIGTERM);
		usleep(200000);
		kill(-pid, SIGKILL);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pfd < 0)
		*t_exit = ibc_launch_stamp_now();
	/* whatever the launcher left in its group goes too */
	kill(-pid, SIGKILL);
	if (timed_out)
		return 124;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void log_tail(const char *log)
{
	char line[512];
	FILE *f = fopen(log, "r");
	int n = 0;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL && n++ < 6)
		fprintf(stderr, "  | %s", line);
	if (f != NULL)
		fclose(f);
}

struct result {
	double spawn_us, init_us, total_us;
	double stage_us[IBC_LAUNCH_STAMP_STAGES];
	int nstages;
};

/* Runs one job and checks it: every process stamped, and for pmi/hello each
 * knew the job's size and its own distinct rank (singletons are caught). */
static int job_do(struct ls *ls, const struct jobspec *js, struct result *res)
{
	char stamp[4300], log[4300];
	struct ibc_launch_stamp *st = NULL;
	int np = js->h * js->c * js->m, code, i, rc = IBC_OK;
	int64_t t0, t1, last_start = 0, last_init = 0;
	unsigned char *seen = NULL;
	struct job j;
	size_t n = 0, k;
	pid_t pid;

	snprintf(stamp, sizeof(stamp), "%s/stamps", ls->dir);
	snprintf(log, sizeof(log), "%s/job.log", ls->dir);
	unlink(stamp);
	job_build(ls, js, stamp, &j);
	if (ibc_log_enabled(IBC_LOG_INFO)) {
		fprintf(stderr, "launch: job");
		for (i = 0; i < j.argc; i++)
			fprintf(stderr, " %s", j.argv[i]);
		fprintf(stderr, "\n");
	}
	ls->jobs++;
	t0 = ibc_launch_stamp_now();
	pid = spawn_job(j.argv, log);
	if (pid < 0)
		return IBC_ERR_SYS;
	code = wait_job(pid, ls->o->timeout_s, &t1);
	if (code != 0) {
		fprintf(stderr, "launch: %s %s at %dx%d%s failed with exit %d%s; its output:\n", js->s->name,
			prog_names[js->prog], js->h, js->c, js->m > 1 ? " (multiplied)" : "", code,
			code == 124 ? " (timeout)" : "");
		log_tail(log);
		return IBC_ERR_REMOTE;
	}
	rc = ibc_launch_stamps_read(stamp, &st, &n);
	if (rc != IBC_OK) {
		fprintf(stderr, "launch: %s: unreadable stamp file %s\n", js->s->name, stamp);
		return rc;
	}
	seen = calloc((size_t)np, 1);
	if ((int)n != np) {
		fprintf(stderr, "launch: %s %s: %zu of %d processes stamped\n", js->s->name, prog_names[js->prog], n,
			np);
		rc = IBC_ERR_REMOTE;
	}
	memset(res, 0, sizeof(*res));
	for (k = 0; rc == IBC_OK && k < n; k++) {
		if (js->prog != P_TRUE &&
		    (st[k].size != np || st[k].rank < 0 || st[k].rank >= np || seen == NULL || seen[st[k].rank]++)) {
			fprintf(stderr, "launch: %s %s: a process says rank %d of %d in a job of %d%s\n", js->s->name,
				prog_names[js->prog], st[k].rank, st[k].size, np,
				st[k].size == 1 ? ": singletons (the wrong --mpi plugin?)" : "");
			rc = IBC_ERR_REMOTE;
			break;
		}
		if (st[k].t_start > last_start)
			last_start = st[k].t_start;
		if (st[k].t_init > last_init)
			last_init = st[k].t_init;
		for (i = 0; i < st[k].nstages; i++)
			if (st[k].stage[i] / 1e3 > res->stage_us[i])
				res->stage_us[i] = (double)st[k].stage[i] / 1e3;
		if (st[k].nstages > res->nstages)
			res->nstages = st[k].nstages;
	}
	res->spawn_us = (double)(last_start - t0) / 1e3;
	res->init_us = last_init > last_start ? (double)(last_init - last_start) / 1e3 : 0;
	res->total_us = (double)(t1 - t0) / 1e3;
	free(st);
	free(seen);
	return rc;
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

	snprintf(variant, sizeof(variant), "%s:%s:%s", s->name, prog_names[js->prog], phase);
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
				 "degree_rule=%s;max_conn=%d", s->name, prog_names[js->prog], phase, js->h, js->m, k,
				 depth, rule, s->max_conn > 0 ? s->max_conn : IBC_LAUNCH_MAX_CONN_DEFAULT);
		} else {
			snprintf(p->extra, sizeof(p->extra), "kind=phase;launcher=%s;program=%s;phase=%s;hosts=%d;mult=%d",
				 s->name, prog_names[js->prog], phase, strcmp(ls->rsh, "local") == 0 ? 1 : js->h,
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

				if (job_do(ls, &js, &res) != IBC_OK || stats_read(stats, &a) != IBC_OK) {
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

		if (strcmp(ibc_csv_cell(t, r, "run_id"), ls->o->run_id) != 0 ||
		    strcmp(ibc_csv_cell(t, r, "policy"), policy) != 0 ||
		    strcmp(ibc_csv_cell(t, r, "pattern"), pattern) != 0 || ibc_csv_num(t, r, "hosts") != h ||
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

	say(ls, "launch: %d hosts x %d%s (%d processes), p50 ms:", h, c, m > 1 ? " x mult" : "", h * c * m);
	for (i = 0; i < sizeof(show) / sizeof(show[0]); i++) {
		double v;

		snprintf(variant, sizeof(variant), "%s", show[i]);
		if (strncmp(variant, "cache:", 6) == 0)
			variant[strlen(variant) - 6] = '\0';
		v = point_p50(ls, variant, h, c, m);
		if (!isnan(v))
			say(ls, " %s %.2f", variant, v / 1e3);
	}
	say(ls, "\n");
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
				if (job_do(ls, &js, &res) != IBC_OK) {
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

				if (job_do(ls, &js, &res) != IBC_OK) {
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

/* ------------------------------------------------------------- growth ---- */
int ibc_lsuite_growth_fit(const double *x, const double *y, size_t n, struct ibc_lsuite_growth *g)
{
	double *lx, my = 0, sst = 0, ssl = 0, ssn = 0;
	size_t i, distinct = 0;
	int rc;

	if (n < 3)
		return IBC_ERR_INVAL;
	for (i = 0; i < n; i++) {
		if (!(x[i] > 0))
			return IBC_ERR_INVAL;
		if (i > 0 && x[i] != x[0])
			distinct = 1;
		my += y[i];
	}
	if (!distinct)
		return IBC_ERR_INVAL;
	lx = malloc(n * sizeof(*lx));
	if (lx == NULL)
		return IBC_ERR_NOMEM;
	for (i = 0; i < n; i++)
		lx[i] = log2(x[i]);
	rc = ibc_stats_line_fit(lx, y, n, &g->log_a, &g->log_b, NULL);
	if (rc == IBC_OK)
		rc = ibc_stats_line_fit(x, y, n, &g->lin_a, &g->lin_b, NULL);
	my /= (double)n;
	for (i = 0; rc == IBC_OK && i < n; i++) {
		double el = y[i] - (g->log_a + g->log_b * lx[i]), en = y[i] - (g->lin_a + g->lin_b * x[i]);

		sst += (y[i] - my) * (y[i] - my);
		ssl += el * el;
		ssn += en * en;
	}
	free(lx);
	if (rc != IBC_OK)
		return rc;
	g->log_r2 = sst > 0 ? 1 - ssl / sst : 1;
	g->lin_r2 = sst > 0 ? 1 - ssn / sst : 1;
	return IBC_OK;
}

/* For every phase variant at a fixed ppn and multiplier measured at three or
 * more agent counts: launch-growth.csv and a table. */
static int growth_write(struct ls *ls)
{
	static const char *const cols[] = { "run_id", "variant", "ppn", "mult", "points", "nla_min", "nla_max",
					    "log_a_us", "log_b_us", "log_r2", "lin_a_us", "lin_b_us", "lin_r2",
					    "better" };
	struct ibc_csv_writer *w = NULL;
	char path[4400], f[12][48];
	const char *fields[14];
	size_t i, j;
	int header = 0, rc = IBC_OK;

	for (i = 0; i < ls->npts; i++) {
		const struct point *p = &ls->pts[i];
		double x[64], y[64];
		struct ibc_lsuite_growth g;
		size_t n = 0, k;
		int dup = 0;

		if (strncmp(p->variant, "cache:", 6) == 0)
			continue;
		for (j = 0; j < i; j++)
			if (strcmp(ls->pts[j].variant, p->variant) == 0 && ls->pts[j].ppn == p->ppn &&
			    ls->pts[j].mult == p->mult)
				dup = 1;
		if (dup)
			continue;
		for (j = i; j < ls->npts && n < 64; j++) {
			const struct point *q = &ls->pts[j];
			struct ibc_stats st;

			if (strcmp(q->variant, p->variant) == 0 && q->ppn == p->ppn && q->mult == p->mult &&
			    q->n > 0 && ibc_stats_compute(q->s, q->n, &st) == IBC_OK) {
				x[n] = q->nodes;
				y[n++] = st.p50;
			}
		}
		if (ibc_lsuite_growth_fit(x, y, n, &g) != IBC_OK)
			continue;
		if (w == NULL) {
			snprintf(path, sizeof(path), "%s/launch-growth.csv", ls->o->out);
			rc = ibc_csv_writer_open(path, cols, 14, 1, &w);
			if (rc != IBC_OK)
				return rc;
		}
		if (!header++)
			say(ls, "\nlaunch: growth with the number of node agents n (p50): y = a + b log2 n "
				"against y = a + b n\n%-26s %4s %4s %9s %9s %7s %9s %7s %s\n", "variant", "ppn",
			    "mult", "n", "b_log_ms", "R2_log", "b_lin_ms", "R2_lin", "better");
		{
			double lo = x[0], hi = x[0];

			for (k = 1; k < n; k++) {
				lo = x[k] < lo ? x[k] : lo;
				hi = x[k] > hi ? x[k] : hi;
			}
			snprintf(f[0], 48, "%d", p->ppn);
			snprintf(f[1], 48, "%d", p->mult);
			snprintf(f[2], 48, "%zu", n);
			snprintf(f[3], 48, "%.0f", lo);
			snprintf(f[4], 48, "%.0f", hi);
			snprintf(f[5], 48, "%.2f", g.log_a);
			snprintf(f[6], 48, "%.2f", g.log_b);
			snprintf(f[7], 48, "%.4f", g.log_r2);
			snprintf(f[8], 48, "%.2f", g.lin_a);
			snprintf(f[9], 48, "%.3f", g.lin_b);
			snprintf(f[10], 48, "%.4f", g.lin_r2);
			snprintf(f[11], 48, "%s", g.log_r2 >= g.lin_r2 ? "log" : "linear");
			say(ls, "%-26s %4d %4d %4.0f..%-4.0f %9.3f %7.3f %9.4f %7.3f %s\n", p->variant, p->ppn, p->mult,
			    lo, hi, g.log_b / 1e3, g.log_r2, g.lin_b / 1e3, g.lin_r2, f[11]);
		}
		fields[0] = ls->o->run_id;
		fields[1] = p->variant;
		for (k = 0; k < 12; k++)
			fields[2 + k] = f[k];
		if (ibc_csv_writer_row(w, fields) != IBC_OK)
			rc = IBC_ERR_IO;
	}
	if (w != NULL && ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc;
}

/* Table 3.1 for the thesis' job sizes from the measured bytes per cached
 * entry (the largest point's hcs run): launch-memory.csv. */
static int memory_table(struct ls *ls)
{
	static const char *const cols[] = { "run_id", "policy", "ranks", "pairs", "bytes_per_nla", "method",
					    "entry_bytes", "bound_bytes" };
	static const int sizes[] = { 64, 256, 1024, 4096, 16384, 65536 };
	static const int pairs[] = { 1, 4, 16, 64 };
	struct ibc_csv_table *t;
	struct ibc_csv_writer *w;
	char path[4400], f[5][48];
	const char *fields[8];
	double entry = 0, best = -1;
	size_t r, si, pi, ci;
	int rc;

	snprintf(path, sizeof(path), "%s/launch-cache.csv", ls->o->out);
	if (access(path, R_OK) != 0 || ibc_csv_read(path, &t) != IBC_OK)
		return IBC_OK;
	for (r = 0; r + 1 < t->nrows; r++) {
		double e = ibc_csv_num(t, r, "nla_entries_max"), mem = ibc_csv_num(t, r, "nla_mem_max");

		if (strcmp(ibc_csv_cell(t, r, "run_id"), ls->o->run_id) == 0 &&
		    strcmp(ibc_csv_cell(t, r, "policy"), "hcmab") == 0 && e > best && e > 0) {
			best = e;
			entry = mem / e;
		}
	}
	ibc_csv_table_free(t);
	if (entry <= 0)
		return IBC_OK;
	snprintf(path, sizeof(path), "%s/launch-memory.csv", ls->o->out);
	rc = ibc_csv_writer_open(path, cols, 8, 1, &w);
	if (rc != IBC_OK)
		return rc;
	say(ls, "\nlaunch: node-level cache memory (Table 3.1), computed from %.0f bytes per entry; "
		"hcmab-lru bounded to %d stages (KiB per NLA, worst NLA)\n%-10s %6s", entry, LRU_STAGES,
	    "policy", "pairs");
	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		say(ls, " %9d", sizes[si]);
	say(ls, "\n");
	for (ci = 0; ibc_launch_cache_names[ci] != NULL; ci++) {
		int lru = ci == IBC_LAUNCH_CACHE_HCMAB_LRU;

		for (pi = 0; pi < sizeof(pairs) / sizeof(pairs[0]); pi++) {
			say(ls, "%-10s %6d", ibc_launch_cache_names[ci], pairs[pi]);
			for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
				double all = (double)sizes[si] * pairs[pi] * entry;
				double bound = (double)sizes[si] * LRU_STAGES * ENTRY_BYTES_EST;
				double v = lru && all > bound ? bound : all;

				snprintf(f[0], 48, "%d", sizes[si]);
				snprintf(f[1], 48, "%d", pairs[pi]);
				snprintf(f[2], 48, "%.0f", v);
				snprintf(f[3], 48, "%.1f", entry);
				snprintf(f[4], 48, "%.0f", lru ? bound : 0);
				fields[0] = ls->o->run_id;
				fields[1] = ibc_launch_cache_names[ci];
				fields[2] = f[0];
				fields[3] = f[1];
				fields[4] = f[2];
				fields[5] = "computed";
				fields[6] = f[3];
				fields[7] = lru ? f[4] : "";
				if (ibc_csv_writer_row(w, fields) != IBC_OK)
					rc = IBC_ERR_IO;
				say(ls, " %9.0f", v / 1024);
			}
			say(ls, "\n");
		}
	}
	if (ibc_csv_writer_close(w) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc;
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
		for (p = 0; p < P_MAX_ && strcmp(o->programs.v[i], prog_names[p]) != 0; p++)
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
	if (geteuid() == 0) {
		setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
		setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	}
	specs_setup(&ls);
	for (i = 0; i < (size_t)ls.nspec; i++) {
		const char *why;

		for (p = 0; p < P_MAX_; p++)
			if (ls.spec[i].why[0] == '\0' && ls.progs[p] && !prog_ok(&ls, &ls.spec[i], (enum lprog)p, &why))
				say(&ls, "launch: %s does not run %s: %s\n", ls.spec[i].name, prog_names[p], why);
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
					say(&ls, "launch: %d node agents per host: tree and flat only (the mpiruns and "
						 "srun place one daemon per host)\n", m);
				for (i = 0; i < (size_t)ls.nspec; i++)
					if ((ls.spec[i].kind == L_SRUN || ls.spec[i].kind == L_SRUN_PMIX) &&
					    ls.spec[i].why[0] == '\0' && h > ls.slurm_nodes)
						say(&ls, "launch: %s skipped at %d hosts: Slurm has %d nodes\n",
						    ls.spec[i].name, h, ls.slurm_nodes);
				rc = run_point(&ls, h, c, m);
				if (rc != IBC_OK)
					goto out;
			}
	rc = growth_write(&ls);
	if (rc == IBC_OK)
		rc = memory_table(&ls);
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
