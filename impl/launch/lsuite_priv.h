/* The launch suite's state, shared by lsuite.c (the jobs and their rows),
 * lsuite_job.c (one job), lsuite_tables.c (the growth fits and Table 3.1)
 * and lsuite_say.c (program names, progress lines).  Calls run one way:
 * lsuite.c calls the other three; lsuite_job.c and lsuite_tables.c call
 * lsuite_say.c only. */
#ifndef IBC_LAUNCH_LSUITE_PRIV_H
#define IBC_LAUNCH_LSUITE_PRIV_H

#include "launch/lsuite.h"

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#include "launch/stamp.h"

struct ibc_csv_writer;

#define ARGS_MAX 48
#define MAX_HOSTS 4096
#define LRU_STAGES 2          /* hcmab-lru's bound: two stages' entries per process */
#define ENTRY_BYTES_EST 160   /* a stage's entry in an agent cache: key + 64 B + overhead */

enum lkind { L_TREE, L_FLAT, L_MPICH, L_OPENMPI, L_SRUN, L_SRUN_PMIX };
enum lprog { P_TRUE, P_PMI, P_HELLO, P_MAX_ };

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

extern const char *const ibc_lsuite_prog_names[]; /* by enum lprog (lsuite_say.c) */

/* One job: a launcher, a program, a point */
struct jobspec {
	const struct lspec *s;
	enum lprog prog;
	int h, c, m;
	const char *cache;   /* tree only; NULL: default */
	const char *pattern; /* pmi: ring or allgather */
	long stages;
	const char *stats;   /* --stats-csv path or NULL */
};

struct result {
	double spawn_us, init_us, total_us;
	double stage_us[IBC_LAUNCH_STAMP_STAGES];
	int nstages;
};

/* Runs one job and checks it: every process stamped, and for pmi/hello each
 * knew the job's size and its own distinct rank (singletons are caught). */
int ibc_lsuite_job_do(struct ls *ls, const struct jobspec *js, struct result *res);

/* A progress line on stdout (nothing with --quiet). */
void ibc_lsuite_say(const struct ls *ls, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* launch-growth.csv and its table: every phase measured at 3+ agent counts */
int ibc_lsuite_growth_write(struct ls *ls);
/* launch-memory.csv and its table: Table 3.1 from the measured bytes per entry */
int ibc_lsuite_memory_table(struct ls *ls);

#endif
