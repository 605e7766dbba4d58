/* Private state of the measurement engine, shared by harness.c (parameters,
 * points, the run), window.c (how iterations start: the sync step, the
 * global clock's windows) and rows.c (rank 0's statistics and results.csv
 * rows).  Not part of the harness interface: only those three include it. */
#ifndef IBC_HARNESS_PRIV_H
#define IBC_HARNESS_PRIV_H

#include "harness/harness.h"
#include "harness/gclock.h"
#include "core/stats.h"

#include <stddef.h>

#define EXTRA_CAP 1024         /* an operation's extra column */
#define WINDOW_SPIN_US 300     /* window mode: the end of a wait that is spun (at least) */
#define WINDOW_FALLBACK 0.5    /* auto: more late iterations than this -> barrier from then on */
#define WINDOW_BLOCK_MAX 512   /* window mode: rounds per block at most (the block's times) */

struct op_state {
	const struct ibc_harness_op *op;
	int active;       /* set up on every rank for this point */
	int valid;        /* -1 not checked, 0 failed, 1 ok */
	long late;        /* window mode: timed starts this rank reached late */
	long late_iters;  /* rank 0: iterations dropped because a rank started late */
	long kept;        /* rank 0: iterations in the statistics */
	double *samples;  /* iters, this rank */
	double *all;      /* rank 0: size * iters */
	double *warm;     /* warm-up durations of this rank (the groups, window mode's first W) */
	long nwarm;
	int group;        /* interleaved with the operations of its group (harness.c), */
	long iters;       /* ... which ran this many timed iterations */
	int prime;        /* 1: each timed iteration follows an untimed one of it (harness.c) */
	int alone;        /* 1: timed alone in its group, each timed iteration after its own
			     last one (as a prime would leave it; rows say primed=1) */
	double slow_pct;  /* IBC_SLOWDOWN's stretch of it, looked up once per point */
	double slow_min_us; /* ... of its shortest iteration so far (0: none yet) */
	/* window mode */
	double win_us;    /* this operation's window W */
	double late_tol_us;
	long block_late;  /* this rank's late starts of it in the block */
	double *dur;      /* this rank's times of it in the block (us) */
	long ndur;
	struct ibc_stats st;
	double *kept_samples; /* rank 0: the statistics' samples (kept of them, in order) */
	double skew_p50, rank_mean;
	char extra[EXTRA_CAP];
};

struct ibc_harness {
	struct ibc_boot *boot;
	const struct ibc_harness_params *p;
	enum ibc_wait wait;
	int oversub;
	int pinned;
	double sample_override; /* < 0: none */
	double sample_end_us;   /* > 0: the operation's end (ibc_harness_sample_end) */
	double probe_start_us;
	/* how iterations start */
	int window;              /* 1: window mode */
	int have_clock;          /* clock below was built */
	struct ibc_gclock clock;
	char sync_name[64];
	char sync_why[256];
	struct ibc_node_sync *nsync; /* the sync step on one node, else NULL */
	/* window mode, per point (W and the late tolerance are per operation) */
	double win_next_g;       /* global start of the next iteration */
	double margin_us;        /* an anchor is this far ahead of rank 0's now */
	int win_late;            /* the last window wait ended late */
	long block_rounds;       /* rounds per block (of the current group's operations) */
	enum ibc_harness_call call; /* what the run() being called is for */
	int group;               /* the group of operations being timed, */
	int ngroups;             /* ... of this many in the point */
	double budget_end_us;    /* rank 0: past this local time the timed loop ends at the
				    next anchor (the point's budget); 0: none */
	int win_stop;            /* the last anchor ended the timed loop (all ranks) */
	int block_first_late;    /* this rank started a block's first window late */
	double spin_us;          /* the end of a wait spun: learnt from how late naps end */
	double worst_late;       /* rank 0: the largest late fraction of an operation's
				    iterations in the last point */
	/* operations of the current point (window mode) */
	struct op_state *st;
	size_t nst;
	char run_id[96];
	char launcher[64];
	struct ibc_csv_writer *rows; /* rank 0 */
};

/* window.c */
int ibc_harness_sync_decide(struct ibc_harness *h);
int ibc_harness_warm_medians(struct ibc_harness *h, struct op_state *st, size_t n, double *d);
int ibc_harness_window_first(struct ibc_harness *h, struct op_state *st, size_t n, const double *d);
int ibc_harness_window_anchor(struct ibc_harness *h, int first);
int ibc_harness_window_wait(struct ibc_harness *h, struct op_state *s, int first_of_block,
			    double *start_out);

/* rows.c */
int ibc_harness_rows_open(struct ibc_harness *h);
int ibc_harness_samples_gather(struct ibc_boot *b, const double *mine, double *all, size_t n);
int ibc_harness_reduce(struct ibc_harness *h, struct op_state *s, long iters);
int ibc_harness_row_write(struct ibc_harness *h, struct op_state *s, struct op_state *all_ops,
			  size_t n, const struct ibc_harness_point *pt);
void ibc_harness_point_line(struct ibc_harness *h, struct op_state *st, size_t n, int index,
			    const struct ibc_harness_point *pt, double elapsed_us);

#endif
