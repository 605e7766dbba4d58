/* The reproduction scorecard: the papers' claims, written as data
 * (results/claims/NAME.csv, one row per claim: README "The scorecard"), judged
 * against a results directory.  Each claim names a suite, the variants it is
 * about (subject) and those they are compared with (reference), which rows
 * (select), a metric, a statistic (factor or gap) and what is expected of it
 * (better, better-growing, similar, with a threshold), and quotes the
 * paper's figures, testbed and method.  Nothing here knows a claim: a row
 * whose rule fits this vocabulary is checked with no code change.
 *
 * Evidence: only measured rows (not impl=model), paired at the same point
 * (run, transport, nodes, processes per node, N, size; fan-in when both
 * have one).  A pair with an oversubscribed row, or a row that kept fewer
 * than IBC_SUMMARY_MIN_SAMPLES samples, or without the metric, is not
 * evidence.  A claim with no evidence (or, for a trend, fewer than three
 * points along its axis) is not measurable here, with the reason. */
#ifndef IBC_TOOLS_CLAIMS_H
#define IBC_TOOLS_CLAIMS_H

#include <stddef.h>

enum ibc_claim_verdict {
	IBC_CLAIM_REPRODUCED,
	IBC_CLAIM_NOT_REPRODUCED,
	IBC_CLAIM_NOT_MEASURABLE,
};

/* One claim's verdict; the text fields point into the claims file. */
struct ibc_claim_result {
	const char *id, *paper, *section, *claim;
	const char *paper_figure, *testbed;
	enum ibc_claim_verdict verdict;
	char figure[512]; /* this run's figure ("" when not measurable) */
	char reason[768]; /* why not measurable / where it failed; what was not counted */
	char method[768]; /* the paper's method against this run's */
};

struct ibc_claims_card {
	struct ibc_claim_result *r;
	size_t n;
	size_t count[3]; /* by verdict */
	char source[4096]; /* the claims file or directory read */
	void *priv;        /* the tables the text points into */
};

/* Where the claims are: path (a CSV file or a directory of CSV files), else
 * $IBC_CLAIMS, else bindir/../../results/claims; resolved into buf
 * (PATH_MAX bytes).  IBC_ERR_NOTFOUND when there is none. */
int ibc_claims_locate(const char *path, const char *bindir, char *buf);

/* Judges every claim of claims (a located path) against the results
 * directory dir.  IBC_ERR_INVAL, with one line logged, for damaged or
 * missing input: no directory, no or an empty or unparsable results.csv or
 * meta.csv, a cell that must be a number and is not, a claims file that
 * does not parse (file, line and what). */
int ibc_claims_eval(const char *dir, const char *claims, struct ibc_claims_card **out);
void ibc_claims_card_free(struct ibc_claims_card *c);

const char *ibc_claim_verdict_name(enum ibc_claim_verdict v);

struct ibc_claims_opts {
	const char *dir;
	const char *claims; /* NULL: see ibc_claims_locate */
	const char *bindir;
};

/* `ibchar claims DIR`: TAP on stdout, one line per claim: reproduced is
 * ok, not reproduced is not ok, not measurable here is ok # SKIP with the
 * reason.  IBC_OK when no claim is not reproduced, IBC_ERR_VALIDATE (exit
 * 1) when one is, IBC_ERR_INVAL (exit 2) for damaged or missing input. */
int ibc_harness_claims(const struct ibc_claims_opts *o);

#endif
