/* `ibchar plot DIR`: runs the plot scripts (plots/<suite>.py and
 * plots/<suite>_*.py) of every suite found in DIR/results.csv.  The scripts
 * write their figures into DIR and print the paths on stdout. */
#ifndef IBC_TOOLS_PLOT_H
#define IBC_TOOLS_PLOT_H

struct ibc_harness_plot_opts {
	const char *dir;      /* the results directory */
	const char *bindir;   /* where ibchar lives; plots/ is bindir/../../plots */
	const char *plots;    /* NULL: $IBC_PLOTS, else bindir/../../plots */
	const char *python;   /* NULL: $IBC_PYTHON, else the first python3 with matplotlib */
};

/* 1 when name is SUITE + ext or SUITE_* + ext: plots/<suite>.py and
 * plots/<suite>_*.py are a suite's scripts, <suite>.png and <suite>_*.png
 * its figures */
int ibc_harness_plot_name_of(const char *name, const char *suite, const char *ext);

/* IBC_ERR_INVAL when dir has no readable results.csv or no rows,
 * IBC_ERR_NOTFOUND when plots/ or python3 + matplotlib is missing,
 * IBC_ERR_REMOTE when a script failed (the others still run). */
int ibc_harness_plot_run(const struct ibc_harness_plot_opts *o);

#endif
