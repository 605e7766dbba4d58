/* ibchar report DIR: one self-contained HTML file (no network: figures are
 * inlined as PNG data, the style is in the page, there is no script) with
 * the provenance of the run (meta.csv, readable), the verdicts of accept and
 * compare when given (their TAP output), and per suite its figures, each
 * reproduced paper figure captioned with the paper's figure and testbed
 * against this run's (plots/ writes NAME.caption.txt beside NAME.png), and
 * its summary tables (medians, factors against the host MPI, the model's
 * predicted against measured), and the scorecard of the papers' claims
 * (claims.h: each claim reproduced, not reproduced or not measurable here,
 * this run's figure beside the paper's).  Suites come from the rows, so a
 * new suite needs no edit here. */
#ifndef IBC_TOOLS_REPORT_H
#define IBC_TOOLS_REPORT_H

#include <stddef.h>

#define IBC_REPORT_MAX_VERDICTS 16

struct ibc_report_opts {
	const char *dir;
	const char *out;      /* NULL: DIR/report.html */
	const char *verdicts[IBC_REPORT_MAX_VERDICTS]; /* TAP files, besides the .tap files in DIR */
	size_t nverdicts;
	const char *bindir;   /* for the plots and the claims */
	const char *claims;   /* the claims (ibchar claims --claims); NULL: ibc_claims_locate's default */
	int plot;             /* 1: run the plot scripts first; 0: never; -1: when DIR has no PNG */
};

/* IBC_ERR_INVAL: DIR has no readable results.csv, or a verdict file cannot
 * be read; IBC_ERR_IO: the report cannot be written.  A failing plot script
 * is reported in the page and on stderr, not an error. */
int ibc_harness_report(const struct ibc_report_opts *o);

#endif
