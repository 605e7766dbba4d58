/* The suite driver: what every bench binary does, written once.  A suite is
 * a table of variants (and, for a host-MPI build, a second table of the
 * MPI's variants) plus a main of a few lines:
 *
 *   int main(int argc, char **argv)
 *   {
 *       return ibc_suite_main(&ibc_barrier_suite, NULL, argc, argv);
 *   }
 *
 * ibc_suite_main parses the shared options (IBC_HARNESS_CLI_OPTS, --sync,
 * the suite's own, --list, --info), checks them before any rank starts (an
 * unknown variant, a bad rank count or a suite's own rule exit 2 with a
 * message), opens the bootstrap (fork / launcher / tcp, or the MPI's), the
 * transport (--xport), the suite's state, turns every variant that can run
 * here into harness operations (a fan-in variant once per fan-in; a variant
 * the transport cannot run is skipped with the reason), runs the harness
 * and closes everything in order; the exit status is the run's (0, 1 on a
 * failure, 2 on bad input, 77 when nothing can run here).
 *
 * What every row gets on top of the variant's own measurement (extra):
 *  - paper_us: the back-to-back figure of the papers, def.b2b_iters
 *    operations run back to back after the timed iterations (no sync step
 *    between them), the mean time per operation of each rank averaged over
 *    ranks (rank 0's alone for IBC_HARNESS_TIME_ROOT variants, scaled like
 *    the samples), and b2b_p50_us, the median of that loop's blocks, each
 *    block's time per operation (b2b_block operations a block, n / 16 within
 *    1..16: the clock is read between blocks, not between operations);
 *  - the variant's counters (names in variant.counters), summed over
 *    ranks, over the timed iterations only: read just before the first
 *    and just after the last timed iteration;
 *  - the variant's own keys (variant.extra).
 * A failure anywhere, the back-to-back loop and the counters included,
 * fails the run on every rank at once.
 *
 * Fault injection for tests: IBC_FAULT="WHERE:RANK[:N]" makes rank RANK
 * fail (IBC_ERR_IO) at WHERE = setup, run (the N-th call, default 1), b2b
 * (the N-th back-to-back operation) or counters; WHERE = hang makes it
 * stop for good at its N-th variant setup (one per variant per point: with
 * one variant, its N-th point; rows of the points before are written), for
 * the tests of the deadlines of `ibchar run --timeout`.
 *
 * Validation (--validate): a variant's validate callback says whether what
 * it checked held; the row gets valid=1 or valid=0 and checked=<the
 * variant's checked>, what the check covers:
 *   bytes  every byte of every payload message of every warm-up and timed
 *          iteration, filled (untimed) with ibc_suite_pattern_fill's
 *          pattern of its source, destination, iteration and message and
 *          checked (untimed) on arrival; the back-to-back loop behind
 *          paper_us resends the last iteration's buffers unchecked (a check
 *          between its operations would be inside its time);
 *   order  barriers: in every warm-up and timed iteration, no rank left
 *          before every rank had entered.
 * A variant without a validate callback gets neither key (it moves no
 * payload, or another tool's).  The mutant that tests the checks:
 * IBC_CORRUPT="VARIANT:ITER[:RANK[:MSG[:BYTE]]]" (ibc_suite_corrupt). */
#ifndef IBC_SUITE_SUITE_H
#define IBC_SUITE_SUITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "harness/harness.h"
#include "xport/devcount.h"

struct ibc_boot;
struct ibc_xport;
struct ibc_xport_params;
struct ibc_suite_def;
struct ibc_suite_variant;

#define IBC_SUITE_MAX_COUNTERS 8
#define IBC_SUITE_MAX_OPS 512

/* What every callback sees of the run. */
struct ibc_suite_ctx {
	const struct ibc_suite_def *def;
	struct ibc_boot *boot;
	struct ibc_xport *x;                  /* NULL without IBC_SUITE_XPORT */
	/* the verbs port's counters (devcount.h), read by the node's lowest
	 * rank; NULL on shm, on the node's other ranks, or without them */
	const struct ibc_devcount *dev;
	void *state;                          /* def.open's */
	const struct ibc_harness_cli *cli;    /* the shared options as parsed */
	size_t max_bytes;                     /* the run's largest message size */
};

/* One variant (at one fan-in) as the callbacks see it. */
struct ibc_suite_op {
	const struct ibc_suite_variant *v;
	const struct ibc_suite_ctx *ctx;
	struct ibc_harness *h;                /* inside callbacks */
	const struct ibc_harness_point *pt;   /* from setup on */
	long fanin;                           /* > 0 for fan-in variants */
	void *inst;                           /* the variant's own state for the point */
	int in_b2b;                           /* 1 while the back-to-back loop runs */
	/* the iteration being prepared or run: 1, 2, ... over warm-up and timed
	 * iterations (counted before prepare; the back-to-back loop does not
	 * count) */
	long iter;
	/* the driver's */
	uint64_t c0[IBC_SUITE_MAX_COUNTERS], c1[IBC_SUITE_MAX_COUNTERS];
	uint64_t cprime[IBC_SUITE_MAX_COUNTERS]; /* what the primes counted in the timed loop */
	uint64_t d0[IBC_DEVCOUNT_MAX], d1[IBC_DEVCOUNT_MAX]; /* ctx->dev around the timed loop */
	int dev_read;                         /* 1 when both reads of d0 and d1 succeeded */
	long runs;
};

enum ibc_suite_variant_flags {
	IBC_SUITE_V_FANIN = 1,   /* one operation per fan-in (--fanin, else def.fanins) */
	IBC_SUITE_V_NO_B2B = 2,  /* no back-to-back loop (e.g. a bandwidth window) */
	IBC_SUITE_V_ONE_FIGURE = 4, /* its samples repeat one figure (ibc_harness_op.one_figure) */
	/* --validate: a peer reaches this variant's buffers one-sidedly (RDMA
	 * writes and reads, receives posted ahead), so the driver lines the
	 * ranks up (ibc_harness_sync, untimed) before prepare, once every rank
	 * is out of the last iteration, and after it, once every rank has
	 * checked what arrived and filled what goes: a check never reads a
	 * buffer a peer is still writing, a peer never reads one being filled */
	IBC_SUITE_V_ONE_SIDED = 8,
	IBC_SUITE_V_PRIMED = 16  /* primed where the suite is not (ibc_harness_op.primed) */
};

struct ibc_suite_variant {
	const char *name;        /* the variant column; --variants selects by it */
	const char *impl;        /* the impl column; NULL = "ibchar" */
	const char *desc;        /* --info */
	unsigned flags;          /* enum ibc_suite_variant_flags */
	enum ibc_harness_timing timing;
	double scale;            /* sample = time * scale (0 = 1) */
	const void *arg;         /* the variant's constant data */
	/* IBC_OK when it can run here (at this fan-in), IBC_ERR_UNSUPPORTED with
	 * the reason in why (the variant is skipped, the reason logged), any
	 * other error ends the run; optional; on every rank, same answer */
	int (*usable)(const struct ibc_suite_ctx *c, const struct ibc_suite_variant *v, long fanin,
		      char *why, size_t cap);
	/* per point, collective (IBC_ERR_UNSUPPORTED: no row at this point) */
	int (*setup)(struct ibc_suite_op *o);
	int (*prepare)(struct ibc_suite_op *o);       /* untimed, before each iteration */
	int (*run)(struct ibc_suite_op *o);           /* one operation (required) */
	int (*validate)(struct ibc_suite_op *o);      /* after the timed iterations */
	/* after the back-to-back loop, on every rank (optional): what its last
	 * run left due, untimed (rtt-mcast: rank 0's last datagram answered) */
	int (*b2b_end)(struct ibc_suite_op *o);
	const char *checked;     /* what validate checks: "bytes", "order" (above) */
	/* this rank's cumulative counters, values in the order of counters */
	const char *const *counters;                  /* NULL-terminated names */
	int (*counters_get)(struct ibc_suite_op *o, uint64_t *vals);
	/* the variant's own "k=v;..." keys; collective, rank 0's text counts */
	int (*extra)(struct ibc_suite_op *o, char *buf, size_t cap);
	int (*teardown)(struct ibc_suite_op *o);      /* per point, collective */
};

enum ibc_suite_flags {
	IBC_SUITE_XPORT = 1,     /* opens the transport of --xport (ctx.x) */
	IBC_SUITE_CONNECT = 2    /* ... and connects every pair at once */
};

struct ibc_suite_def {
	const char *name;        /* the suite column */
	const char *prog;        /* e.g. "ibchar-barrier" (a host-MPI build adds "-<mpi>") */
	const char *summary;     /* --help */
	unsigned flags;          /* enum ibc_suite_flags */
	enum ibc_harness_kind kind;
	int min_ranks, max_ranks; /* max 0: any */
	int default_ranks;
	const size_t *sizes;     /* default sizes (NULL: one point of 0 bytes) */
	size_t nsizes;
	const long *fanins;      /* default fan-ins of fan-in variants */
	size_t nfanins;
	const struct ibc_opt *opts;        /* the suite's own options (IBC_OPT_END) or NULL */
	const char *const *factor_refs;    /* rows get factor_vs_<ref>; NULL-terminated */
	long b2b_iters;          /* back-to-back operations per row (paper_us); 0: none */
	const char *unprimed;    /* set: its timed iterations are not primed, for this
				    reason (ibc_harness_params.unprimed) */
	/* ... or this many at a point (e.g. fewer for large messages); optional,
	 * the same on every rank */
	long (*b2b_count)(const struct ibc_suite_op *o);
	const struct ibc_suite_variant *variants; /* the table ... */
	size_t nvariants;
	/* ... and variants made from another table (e.g. the barrier
	 * algorithms), appended after it; returns how many */
	size_t (*variants_fill)(struct ibc_suite_variant *out, size_t cap);
	/* the suite's own option rules, before any rank starts (IBC_ERR_INVAL
	 * after a message); optional */
	int (*check)(const struct ibc_harness_cli *cli);
	void (*xport_params)(struct ibc_xport_params *xp);              /* optional */
	int (*open)(struct ibc_suite_ctx *c, void **state);             /* collective, optional */
	void (*close)(struct ibc_suite_ctx *c);                         /* optional */
	/* after a successful run, before close, on every rank (results.csv is
	 * written and closed: e.g. rank 0 derives rows from it); an error
	 * fails the run; optional */
	int (*after)(struct ibc_suite_ctx *c);
	void (*params)(struct ibc_suite_ctx *c, struct ibc_harness_params *p); /* optional */
	void (*info)(FILE *out);                                        /* --info, optional */
};

/* What a host-MPI build adds to a suite. */
struct ibc_suite_ext {
	const char *prog_suffix;  /* "-openmpi" */
	int (*boot_open)(int *argc, char ***argv, struct ibc_boot **out);
	const struct ibc_suite_variant *variants;
	size_t nvariants;
	const char *mpi_version;  /* meta.csv */
	/* the host MPI's progress, served while the harness waits (a sync step,
	 * a window): a peer's MPI call may finish only when this rank's MPI
	 * progresses (Open MPI's 64 KiB MPI_Isend waited in MPI_Waitall for
	 * the receiver, which waited at the sync step); optional */
	int (*progress)(void);
};

/* A variant made like tmpl for something that is not one of the suite's
 * table (e.g. the host MPI's collective, arg its function): tmpl's
 * callbacks with name, impl, desc and arg, and no usability check, no
 * counters and no extra keys of its own. */
struct ibc_suite_variant ibc_suite_variant_like(const struct ibc_suite_variant *tmpl,
						const char *name, const char *impl,
						const char *desc, const void *arg);

/* The whole bench; returns the process's exit status. */
int ibc_suite_main(const struct ibc_suite_def *d, const struct ibc_suite_ext *ext, int argc,
		   char **argv);

#ifdef IBC_HAVE_MPI
/* suite_mpi.c, the host-MPI build of a suite (bench/<suite>/mpi.c):
 *
 *   int main(int argc, char **argv)
 *   {
 *       vars[0] = ...the suite's variant maker ("mpi", ibc_suite_mpi_name, ...);
 *       return ibc_suite_mpi_main(&ibc_barrier_suite, vars, n, &job, argc, argv);
 *   }
 *
 * runs the suite bootstrapped by the host MPI with vars (the MPI's
 * operations) after the suite's own variants; job (when not NULL) gets this
 * rank and the job's size once the bootstrap is open, before any variant
 * runs.  Returns the process's exit status. */
struct ibc_suite_mpi_job {
	int rank, size;
};
/* the MPI of this build ("openmpi", "mpich"): the MPI's variants' impl */
extern const char ibc_suite_mpi_name[];
int ibc_suite_mpi_main(const struct ibc_suite_def *d, const struct ibc_suite_variant *vars,
		       size_t nvars, struct ibc_suite_mpi_job *job, int argc, char **argv);
#endif

/* The fault injection point WHERE on this rank (n-th time; see above):
 * IBC_ERR_IO, logged, when IBC_FAULT asks for it, else IBC_OK. */
int ibc_suite_fault(const char *where, int rank, long n);

/* ------------------------------------------------------------ validation --
 * The payload pattern of a message: its 8-byte word w (little endian; a last
 * partial word keeps its low-order bytes) is seed + w * K (K odd), the seed
 * mixed from the message's source rank, destination rank, iteration and
 * index within the iteration.  A byte from another message, iteration or
 * offset differs from the one due (but by chance: 2^-64 per word, 2^-8 for
 * a lone byte). */
uint64_t ibc_suite_pattern_seed(int src, int dst, uint64_t iter, uint64_t msg);
/* byte off of the pattern */
unsigned char ibc_suite_pattern_byte(uint64_t seed, size_t off);
/* the pattern's bytes [0, len) into buf */
void ibc_suite_pattern_fill(void *buf, size_t len, uint64_t seed);
/* how many of buf's len bytes differ from the pattern; the first at *first
 * (when not NULL and any differs) */
size_t ibc_suite_pattern_check(const void *buf, size_t len, uint64_t seed, size_t *first);

/* The mutant for the validation tests: with
 * IBC_CORRUPT="VARIANT:ITER[:RANK[:MSG[:BYTE]]]" in the environment, rank
 * RANK (default 0) flips byte BYTE (default the middle one) of message MSG
 * (default the middle one, nmsg / 2) that it sends in iteration ITER
 * (o->iter) of VARIANT, after the fill: a validated run must catch it.  A
 * suite calls it on every message it fills (msg of nmsg in the iteration);
 * returns 1 when the mutant is here (also with buf NULL, which flips
 * nothing: the suite makes its own fault, e.g. a barrier left early). */
int ibc_suite_corrupt(const struct ibc_suite_op *o, long msg, long nmsg, void *buf, size_t len);
/* The rank whose mutant falls in this iteration of o's variant, else -1
 * (the same answer on every rank). */
int ibc_suite_corrupt_rank(const struct ibc_suite_op *o);

#endif
