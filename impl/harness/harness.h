/* The measurement engine (docs/design.md "Measurement").
 *
 * A bench driver (usually the suite driver, impl/suite) describes what it
 * measures as operations and hands them to ibc_harness_run() with a
 * bootstrap and parameters:
 *
 *   struct ibc_harness_op ops[] = {
 *       { .variant = "rds", .setup = rds_setup, .run = rds_run, .arg = &st },
 *       { .variant = "rgm", .fanin = 7, .run = rgm_run, .arg = &st2 },
 *   };
 *   struct ibc_harness_params p;
 *   ibc_harness_params_init(&p);            (OSU-compatible defaults)
 *   p.suite = "barrier"; p.out_dir = "results/x";
 *   rc = ibc_harness_run(boot, &p, ops, 2);
 *
 * For every point (one size of p.sizes) all operations are set up, warmed up
 * and measured interleaved on the same processes, one iteration of each per
 * round, the order rotated every round (A B C, B C A, C A B, ...) so that no
 * variant always runs first or after the same neighbour.  Only operations of
 * about one duration (the warm-up's medians within 10x, 20 us at least) are
 * interleaved: groups of them are timed one after the other, fastest first,
 * each with its own iteration count (extra: group=G/NG), since an operation
 * timed after a long one pays the long one's gap (harness.c).
 *
 * How an iteration starts (p.sync_mode, recorded in meta.csv as sync):
 *  - window (the default wherever the global clock is good and the ranks
 *    fit the PUs): a global clock is built and checked first (gclock.h);
 *    every rank starts iteration i at the same global instant t0 + i W,
 *    sleeping then spinning until then; its sample is its exit minus that
 *    common start, so the row's time (the slowest rank's) holds no release
 *    skew of a sync step (a point-to-point operation's: from its call,
 *    ibc_harness_sample_from).  A rank that finds itself past the start after
 *    its wait (more than the tolerance late_tol_us) marks the iteration
 *    late: it leaves the statistics on every rank and is counted
 *    (late_iters).  Each operation has its own W: three times its median
 *    (the slowest rank's) plus twice the clock's error and 2 us, from the
 *    warm-up and then block by block (see window.c); blocks are
 *    re-anchored after a sync step so a late block does not make the next
 *    one late.  Oversubscribed ranks cannot all be on a PU at one instant,
 *    so there the default is barrier; on a host so noisy that most starts
 *    are late, or when the clock (fitted again before every point across
 *    nodes) fails its check, auto goes on at a barrier (meta.csv:
 *    sync_fallback) and window fails;
 *  - barrier: before every timed iteration the ranks line up at a sync step
 *    that is not the operation under test (one node: a shared-memory
 *    barrier, several: the bootstrap's barrier) and each times itself from
 *    its own exit of it, so the sync's release skew is in the sample;
 *    kept for comparison.
 * Either way every rank keeps every sample; after the point the samples are
 * gathered on rank 0 where, per iteration, the slowest rank's time counts
 * (or rank 0's alone for IBC_HARNESS_TIME_ROOT ops) and the skew is
 * max - min over ranks (in window mode: of the exit times).  One row per
 * (point, operation) goes to <out>/results.csv (appended, flushed row by
 * row) with docs/design.md's columns; provenance goes to <out>/meta.csv once per
 * run.  Every call is collective over the bootstrap's ranks.
 *
 * Failures: an error of any callback ends the run on every rank at once
 * (the bootstrap's abort; no collective teardown after it).
 *
 * A driver's bootstrap: ibc_harness_cli_boot() (fork / launcher / tcp), or
 * ibc_boot_mpi_open() in the *-<mpi> binaries, which also fill
 * p.mpi_version with ibc_harness_mpi_version(). */
#ifndef IBC_HARNESS_H
#define IBC_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"
#include "core/opt.h"
#include "core/wait.h"

struct ibc_harness;
struct ibc_xport;


enum ibc_harness_kind {
	IBC_HARNESS_LATENCY = 0,    /* OSU pt2pt: 10000/100 up to 8 KiB, then 1000/10 */
	IBC_HARNESS_COLLECTIVE = 1  /* OSU collectives: 1000/100 up to 8 KiB, then 100/10 */
};

enum ibc_harness_timing {
	IBC_HARNESS_TIME_SLOWEST = 0, /* collective: the slowest rank's time per iteration */
	IBC_HARNESS_TIME_ROOT = 1     /* point to point: rank 0's time (e.g. a round trip) */
};

/* What a point is, as the callbacks see it. */
struct ibc_harness_point {
	size_t bytes;
	long iters;   /* timed iterations planned (the time budget may cut them after warm-up) */
	long warmup;  /* planned; a fifth of the budget caps it */
	int index;    /* point number in p.sizes */
	long budget_iters; /* after the timed run: the iterations it ran when the
			    * budget cut it short of the plan, else 0 */
	long runs_max;     /* at most this many run() calls of an operation in the
			    * point: the warm-up, the timed iterations and their primes */
};

struct ibc_harness_op {
	const char *variant;  /* the row's variant column (required) */
	const char *impl;     /* the row's impl column; NULL = "ibchar" */
	const char *xport;    /* the row's xport column; NULL = params.xport */
	long fanin;           /* the row's fanin column; <= 0 = empty */
	enum ibc_harness_timing timing;
	double scale;         /* sample = measured time * scale (0 = 1; 0.5 for RTT/2) */
	/* 1: the samples repeat one figure (e.g. another tool's average): the
	 * row keeps it as p50 and mean, leaves the spread columns (min, p99,
	 * max, stdev, CI, skew) empty, says n=1 in extra and iters=1 */
	int one_figure;
	/* 1: primed (harness.c) even where params.unprimed is set, for an
	 * operation whose cost is mostly what its own last call left warm */
	int primed;
	void *arg;
	/* Before the point's warm-up, on every rank.  IBC_ERR_UNSUPPORTED on any
	 * rank skips the operation at this point (no row); other errors end the run. */
	int (*setup)(struct ibc_harness *h, const struct ibc_harness_point *pt, void *arg);
	/* Untimed, before the sync of every iteration (e.g. re-pinning); optional. */
	int (*prepare)(struct ibc_harness *h, void *arg);
	/* One iteration; the harness times it (required). */
	int (*run)(struct ibc_harness *h, void *arg);
	/* After the timed iterations when params.validate is set; optional.
	 * Collective; an error marks the row (extra valid=0) and fails the run. */
	int (*validate)(struct ibc_harness *h, void *arg);
	/* what validate checks, written beside valid= as checked=<this>; optional */
	const char *checked;
	/* Suite counters "k=v;k=v" for this point's row; optional.  Called on
	 * every rank after the timed iterations (reduce across ranks inside if
	 * needed); rank 0's text goes into the row. */
	int (*extra)(struct ibc_harness *h, void *arg, char *buf, size_t cap);
	/* After the point, on every rank; optional (not called after a failure:
	 * the job is being aborted). */
	int (*teardown)(struct ibc_harness *h, void *arg);
	/* Just before the first and just after the last timed iteration of the
	 * point, on every rank, local (no communication); optional.  For
	 * counters that must cover the timed iterations only. */
	int (*timed_begin)(struct ibc_harness *h, void *arg);
	int (*timed_end)(struct ibc_harness *h, void *arg);
};

enum ibc_harness_sync_mode {
	IBC_HARNESS_SYNC_AUTO = 0,   /* window where the clock is good and not oversubscribed */
	IBC_HARNESS_SYNC_WINDOW = 1, /* window, or an error when the clock check fails */
	IBC_HARNESS_SYNC_BARRIER = 2
};
/* the modes' names, by enum value (NULL-terminated: --sync's choices) */
extern const char *const ibc_harness_sync_names[];

/* The placement probe: one-way latency in microseconds between two
 * processes of this node (rank 0 and the next local rank); called at the
 * start and the end of the run on every rank; *us < 0 = not measurable. */
typedef int (*ibc_harness_probe_fn)(struct ibc_harness *h, void *arg, double *us);

#define IBC_HARNESS_MAX_SIZES 64
#define IBC_HARNESS_MAX_REFS 8

struct ibc_harness_params {
	const char *suite;        /* required: the row's suite column */
	const char *out_dir;      /* required: created if missing */
	const char *run_id;       /* NULL: $IBC_RUN_ID, else "<UTC time>-<pid>" */
	const char *xport;        /* row column; default "none" */
	const char *device;       /* meta.csv; default "none" */
	const char *launcher;     /* row column; NULL = the bootstrap's name */
	const char *mpi_version;  /* meta.csv; MPI drivers fill it (ibc_harness_mpi_version) */
	const char *command;      /* meta.csv; ibc_harness_params_argv() fills it */
	char command_buf[2048];
	enum ibc_harness_kind kind;
	size_t sizes[IBC_HARNESS_MAX_SIZES];
	size_t nsizes;            /* default: one point of 0 bytes */
	long iters, warmup;       /* <= 0 / < 0: the OSU default for kind and size */
	double budget_s;          /* per point; default 10 (IMB); 0 = none */
	int validate;
	int pin;                  /* 1 (default): pin local rank r to PU r when ranks fit */
	const char *pinning;      /* meta.csv note when the operations pin themselves */
	int wait_force;           /* -1 (default): decide; else an ibc_harness_wait */
	int append;               /* 1 (default): append to an existing results.csv */
	int print_rows;           /* 1 (default): a summary line per row on stdout (rank 0) */
	int progress;             /* 1 (default): a progress line per point on stderr */
	enum ibc_harness_sync_mode sync_mode; /* default AUTO (see above) */
	const char *barrier_only;  /* set: the suite's iterations start at a barrier
				      whatever sync_mode says, for this reason */
	const char *unprimed;      /* set: no timed iteration is primed (harness.c),
				      for this reason (meta.csv's prime), but those
				      of the operations that say primed */
	int measures_machine;      /* 1: the suite measures the machine, not the code
				      (the placement probe): IBC_SLOWDOWN=* leaves it */
	/* window mode: > 0 fixes W (microseconds) instead of adapting it */
	double window_us;
	/* window mode: a start later than this is late; <= 0: a quarter of the
	 * warm-up's operation time, within [0.2, 2] us */
	double late_tol_us;
	/* carries the global clock's ping-pongs across nodes when set (else the
	 * bootstrap); the suite driver passes its transport */
	struct ibc_xport *clock_xport;
	/* Called now and then while the harness waits (sync step, window): work
	 * a peer may need from this rank between iterations (e.g. RGM's root
	 * answering a NAK, through the transport's progress hooks); optional;
	 * an error ends the run.  The suite driver sets its transport's
	 * progress. */
	int (*serve)(void *arg);
	void *serve_arg;
	ibc_harness_probe_fn probe;    /* default: ibc_harness_probe_default */
	void *probe_arg;
	/* Rows whose point also measured one of these variants get
	 * factor_vs_<variant>=<its p50 / this p50> in extra ('-' -> '_'); a
	 * reference "variant/impl" matches that impl only (factor_vs_<variant>_<impl>). */
	const char *factor_refs[IBC_HARNESS_MAX_REFS];
	size_t nfactor_refs;
};

void ibc_harness_params_init(struct ibc_harness_params *p);
/* Records the command line (for meta.csv); keeps a copy inside p's storage. */
void ibc_harness_params_argv(struct ibc_harness_params *p, int argc, char **argv);
/* OSU-compatible iteration / warm-up counts for a kind and size. */
void ibc_harness_defaults(enum ibc_harness_kind kind, size_t bytes, long *iters, long *warmup);

/* Runs every point of p with the n operations; collective.  IBC_OK, or the
 * first error (a failed validation: IBC_ERR_VALIDATE after every point ran). */
int ibc_harness_run(struct ibc_boot *boot, const struct ibc_harness_params *p,
		    const struct ibc_harness_op *ops, size_t n);

/* Getters for callbacks. */
struct ibc_boot *ibc_harness_boot(const struct ibc_harness *h);
enum ibc_wait ibc_harness_wait_get(const struct ibc_harness *h);
int ibc_harness_oversubscribed(const struct ibc_harness *h);
/* Inside run(): replaces this iteration's measured time (us), for operations
 * that time only part of what they do. */
void ibc_harness_sample_set(struct ibc_harness *h, double us);
/* Inside run(): the operation ended now; what run() does after this (e.g.
 * a correctness check) is not timed. */
void ibc_harness_sample_end(struct ibc_harness *h);
/* What the run() being called is for, for an operation that keeps figures
 * of its own: a warm-up iteration, a prime (the untimed iteration before a
 * timed one, harness.c), a timed iteration, or none of them (a suite's own
 * call, e.g. its back-to-back loop). */
enum ibc_harness_call { IBC_HARNESS_CALL_OTHER, IBC_HARNESS_CALL_WARM, IBC_HARNESS_CALL_PRIME,
			IBC_HARNESS_CALL_TIMED };
enum ibc_harness_call ibc_harness_call(const struct ibc_harness *h);
/* The barrier-mode sync step (collective), for callbacks that need the
 * ranks lined up, e.g. before a back-to-back loop.  On one node it serves
 * params.serve while it waits; across nodes it is the bootstrap's barrier,
 * which serves nothing (an operation that needs a peer's progress to
 * finish must not be left half-done across it there). */
int ibc_harness_sync(struct ibc_harness *h);
/* Where an iteration's sample starts (start_us: its window start in window
 * mode, else the end of its sync step).  In window mode a collective
 * (IBC_HARNESS_TIME_SLOWEST) is timed from the common start, so that its
 * time holds the ranks' arrival at it; a point-to-point operation
 * (IBC_HARNESS_TIME_ROOT: rank 0's round trip) is timed from its call, read
 * now, as the back-to-back loop and the placement probe time it: the way
 * from the start to the call (the spin's last clock read, the harness's and
 * the driver's calls, ~50 ns a round trip on this project's test host) is
 * the harness's, not the operation's.  Barrier mode: start_us. */
double ibc_harness_sample_from(const struct ibc_harness_op *op, int window, double start_us);
/* IBC_SLOWDOWN=VARIANT:PCT (an injected regression, for testing `ibchar
 * compare`): PCT for that variant (for every variant when VARIANT is * and
 * star is 1), 0 for every other.  The harness stretches each timed iteration
 * by it, and the suite driver each back-to-back one. */
double ibc_harness_slowdown_pct(const char *variant, int star);
/* Spins until now + *shortest_us * pct / 100, where *shortest_us (0 at
 * first) keeps the shortest (now - since) of the calls for one operation;
 * returns the time it ends. */
double ibc_harness_slowdown_spin(double since_us, double pct, double *shortest_us);


/* -------------------------------------------------------- node sync ---- */
/* A central barrier in shared memory for the ranks of one node
 * (nodesync.c).  The harness's sync step whenever every rank is on one node:
 * a round trip through a node agent (launcher, tcp, mpi) releases the ranks
 * tens of microseconds apart, and a bootstrap barrier cannot serve the
 * operations' progress while it waits.  Collective to open; waits follow w
 * and call progress(arg) (may be NULL) now and then; a wait longer than
 * timeout_s (> 0) returns IBC_ERR_TIMEOUT.  IBC_ERR_UNSUPPORTED over several
 * nodes. */
struct ibc_node_sync;
int ibc_node_sync_open(struct ibc_boot *b, enum ibc_wait w, double timeout_s,
		       struct ibc_node_sync **out);
int ibc_node_sync(struct ibc_node_sync *s, int (*progress)(void *arg), void *arg);
void ibc_node_sync_close(struct ibc_node_sync *s);

/* ------------------------------------------------------------ probe ---- */
/* Cache-line ping-pong (probe.c): a MAP_SHARED line between two ranks of the
 * same node.  Collective over the bootstrap (every rank calls; only ranks a
 * and b map the line). */
struct ibc_probe;
int ibc_probe_open(struct ibc_boot *b, int rank_a, int rank_b, struct ibc_probe **out);
/* One round trip (a: ping then wait for pong; b: wait for ping then pong).
 * yield: 0 = pure spin; N > 0 = after N unanswered polls, sched_yield between
 * polls (1 when both share one PU).
 * IBC_ERR_TIMEOUT when the peer does not answer within 5 s. */
int ibc_probe_round(struct ibc_probe *p, int yield);
/* One round trip of the memory pattern of a one-sided write ping-pong: a
 * stores into b's line and polls its own, b polls its line and stores into
 * a's (two lines, a pause between polls): the floor of a shm write-lat, with
 * no transport. */
int ibc_probe_round_write(struct ibc_probe *p, int yield);
/* The yield for ranks on PUs of their own that wait the way w says: 0 (spin)
 * or IBC_PROBE_YIELD_AFTER polls (spin-yield). */
#define IBC_PROBE_YIELD_AFTER 100
int ibc_probe_yield(enum ibc_wait w);
/* rounds round trips; on rank a *oneway_us = median round trip / 2. */
int ibc_probe_measure(struct ibc_probe *p, long rounds, int yield, double *oneway_us);
int ibc_probe_role(const struct ibc_probe *p); /* 0 = a, 1 = b, -1 = not in the pair */
void ibc_probe_close(struct ibc_probe *p);
/* The harness's default probe hook (harness.c, over the kernel above): rank 0
 * and the next rank on node 0, pinned to different PUs, 1000 round trips; -1
 * with a single rank. */
int ibc_harness_probe_default(struct ibc_harness *h, void *arg, double *us);

/* ------------------------------------- rows written outside the harness -- */
/* A suite that times no harness operations (launch: whole jobs) writes the
 * same results.csv rows from its own samples. */
struct ibc_csv_writer;
struct ibc_harness_row_in {
	const char *run_id, *suite, *variant, *impl, *xport, *launcher;
	int nodes, ppn, ranks;
	long long bytes, fanin;      /* fanin < 0: empty */
	const double *samples;       /* n >= 1 samples, us */
	size_t n;
	const char *extra;           /* "k=v;..." or NULL */
	const char *dir;             /* the results directory: samples.csv too (NULL: not) */
};
/* Appends a row's samples (v, n, in us) to DIR/samples.csv, keyed by the
 * row's results.csv fields (row_fields: the 26 columns' values). */
int ibc_harness_samples_append(const char *dir, const char *const *row_fields, const double *v, size_t n);
/* DIR/results.csv, created with its header or appended to. */
int ibc_harness_rows_writer_open(const char *dir, struct ibc_csv_writer **out);
/* One row: min, p50, mean, p99, max, stdev and the median's CI of the
 * samples; iters = n; for n = 1 the spread columns stay empty and extra
 * says n=1. */
int ibc_harness_row_from_samples(struct ibc_csv_writer *w, const struct ibc_harness_row_in *r);

/* ------------------------------------------------- shared CLI options ---- */
/* The options every bench driver shares (issue 5), as a struct and a
 * fragment of the driver's one option table:
 *
 *   static struct ibc_harness_cli cli = IBC_HARNESS_CLI_INIT;
 *   static const struct ibc_opt opts[] = { IBC_HARNESS_CLI_OPTS(cli), ..., IBC_OPT_END };
 */
struct ibc_harness_cli {
	struct ibc_opt_list ranks;       /* --ranks: the bench takes one N */
	struct ibc_opt_strlist variants; /* --variants (empty: all) */
	struct ibc_opt_list fanin;       /* --fanin */
	struct ibc_opt_list sizes;       /* --sizes */
	const char *xport;               /* --xport shm|verbs|auto */
	const char *launcher;            /* --launcher fork|local|mpirun|tree|auto */
	const char *mpi;                 /* --mpi (informative inside a bench) */
	const char *out;                 /* --out DIR */
	const char *run_id;              /* --run-id */
	long iters, warmup;              /* --iters, --warmup (0 / -1: defaults) */
	double budget;                   /* --budget seconds per point */
	int validate;                    /* --validate */
	int quiet;                       /* --quiet: no row lines on stdout */
	int sync;                        /* --sync: an enum ibc_harness_sync_mode */
};

#define IBC_HARNESS_CLI_INIT { .xport = "auto", .launcher = "auto", .mpi = "none", \
	.sync = IBC_HARNESS_SYNC_AUTO, \
	.out = "results/latest", .iters = 0, .warmup = -1, .budget = 10.0 }

#define IBC_HARNESS_CLI_OPTS(c) \
	{ .name = "ranks", .short_name = 'n', .type = IBC_OPT_INT_LIST, .dest = &(c).ranks, .metavar = "N", .help = "number of ranks (the runner sweeps a list)", .min = 1, .max = 1024 }, \
	{ .name = "variants", .short_name = 'V', .type = IBC_OPT_STRING_LIST, .dest = &(c).variants, .metavar = "LIST", .help = "variants to run (default: all that can run here)" }, \
	{ .name = "fanin", .short_name = 'f', .type = IBC_OPT_INT_LIST, .dest = &(c).fanin, .metavar = "LIST", .help = "fan-in values for tree variants", .min = 1, .max = 1024 }, \
	{ .name = "sizes", .short_name = 's', .type = IBC_OPT_SIZE_LIST, .dest = &(c).sizes, .metavar = "LIST", .help = "message sizes in bytes, e.g. 1,8,1K..4M" }, \
	{ .name = "xport", .short_name = 'x', .type = IBC_OPT_STRING, .dest = &(c).xport, .metavar = "NAME", .help = "transport: shm, verbs or auto" }, \
	{ .name = "launcher", .short_name = 'l', .type = IBC_OPT_STRING, .dest = &(c).launcher, .metavar = "NAME", .help = "how ranks start: fork (local), mpirun, tree or auto" }, \
	{ .name = "mpi", .short_name = 0, .type = IBC_OPT_STRING, .dest = &(c).mpi, .metavar = "NAME", .help = "host MPI: openmpi, mpich or none" }, \
	{ .name = "out", .short_name = 'o', .type = IBC_OPT_STRING, .dest = &(c).out, .metavar = "DIR", .help = "results directory (results.csv, meta.csv)" }, \
	{ .name = "run-id", .short_name = 0, .type = IBC_OPT_STRING, .dest = &(c).run_id, .metavar = "ID", .help = "run id for the rows (default: $IBC_RUN_ID or a timestamp)" }, \
	{ .name = "iters", .short_name = 'i', .type = IBC_OPT_INT, .dest = &(c).iters, .metavar = "N", .help = "timed iterations per point (0: OSU default)", .min = 0, .max = 1e9 }, \
	{ .name = "warmup", .short_name = 'w', .type = IBC_OPT_INT, .dest = &(c).warmup, .metavar = "N", .help = "warm-up iterations (-1: OSU default)", .min = -1, .max = 1e9 }, \
	{ .name = "budget", .short_name = 'b', .type = IBC_OPT_DOUBLE, .dest = &(c).budget, .metavar = "S", .help = "time budget per point in seconds (0: none)", .min = 0, .max = 1e6 }, \
	{ .name = "validate", .short_name = 0, .type = IBC_OPT_FLAG, .dest = &(c).validate, .metavar = NULL, .help = "check correctness after every point" }, \
	{ .name = "quiet", .short_name = 'q', .type = IBC_OPT_FLAG, .dest = &(c).quiet, .metavar = NULL, .help = "no result lines on stdout" }, \
	{ .name = "sync", .short_name = 0, .type = IBC_OPT_CHOICE, .dest = &(c).sync, .choices = ibc_harness_sync_names, .metavar = "MODE", .help = "how iterations start: window (common start on a global clock), barrier (a sync step before each), or auto (window where the clock is good and ranks fit the PUs)" }

/* Copies the CLI values into p (sizes, iterations, budget, out, ...). */
int ibc_harness_cli_apply(const struct ibc_harness_cli *c, struct ibc_harness_params *p);
/* 1 when variant was asked for (or no --variants was given). */
int ibc_harness_cli_wants(const struct ibc_harness_cli *c, const char *variant);
/* The rank count asked for (first of --ranks; default dflt). */
int ibc_harness_cli_nranks(const struct ibc_harness_cli *c, int dflt);
/* Opens the bootstrap for --launcher/--ranks: PMI_FD / IBC_BOOT=tcp win;
 * "fork"/"local"/"auto" fork N ranks here; a multi-rank launcher that did
 * not start us is an error. */
int ibc_harness_cli_boot(const struct ibc_harness_cli *c, int dflt_ranks, struct ibc_boot **out);

#ifdef IBC_HAVE_MPI
/* harness_mpi.c: MPI_Get_library_version's first line, for meta.csv. */
void ibc_harness_mpi_version(char *buf, size_t cap);
/* Logs "<who>: <what>: <the MPI's error string>" and returns IBC_ERR_REMOTE:
 * the host-MPI variants' one way to report a failed MPI call. */
int ibc_harness_mpi_error(const char *who, const char *what, int err);
#endif

#endif
