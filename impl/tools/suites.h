/* The runner's suite table (suites.c): adding a suite = one entry.  The one
 * place that knows every suite; nothing below impl/tools includes it. */
#ifndef IBC_TOOLS_SUITES_H
#define IBC_TOOLS_SUITES_H

#include <stddef.h>

struct ibc_pattern_round;

struct ibc_suite {
	const char *name;
	const char *description;
	const char *bench;          /* binary name in bin/, e.g. "ibchar-probe" */
	const char *launcher;       /* default: "fork" (local) or "mpirun" */
	const char *default_ranks;  /* --ranks default for `ibchar run`, e.g. "2" or "2..16" */
	const char *variants;       /* comma-separated list shown by `ibchar list` */
	const char *list_args;      /* argv tail that makes the bench list its variants, or NULL */
	int min_ranks;
	int max_ranks;              /* 0: any; a sweep skips the rank counts outside */
	const char *factor_ref;     /* the summary's factor table: this variant's p50 / each row's */
	int needs_verbs;            /* 1: runs only where a verbs device is active */
	/* the critical path of a variant's algorithm on n ranks (at fanin, <= 0
	 * when none) as rounds, for the LoP closed loop (`ibchar model`); < 0
	 * when the variant has no round structure (e.g. the host MPI's); NULL:
	 * the suite's rows are not predicted */
	int (*rounds)(const char *variant, int n, long fanin, struct ibc_pattern_round *r, int cap);
	/* 1: the bench starts its own jobs (launch): run once, on this host,
	 * with --hosts and --ppn instead of a rank sweep */
	int self_launched;
};

extern const struct ibc_suite ibc_suites[];
extern const size_t ibc_suites_count;
const struct ibc_suite *ibc_suite_find(const char *name);

#endif
