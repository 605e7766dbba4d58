/* The summary of a results directory as tables: per suite of a run, a
 * variant x N pivot of the medians and the factor table against the suite's
 * reference variant (a suite swept over N), or its rows one by one (a suite
 * at one N); and a model's predicted-against-measured table where the rows
 * hold one.  `ibchar run` prints them as text, `ibchar report` as HTML.
 * Cells from oversubscribed rows and rows with few samples are marked. */
#ifndef IBC_TOOLS_SUMMARY_H
#define IBC_TOOLS_SUMMARY_H

#include "core/csv.h"
#include "tools/table.h"

#include <stddef.h>

#define IBC_SUMMARY_MAX_TABS 4

/* A cell's marks: the row it comes from was oversubscribed (ranks > PUs),
 * or kept fewer than IBC_SUMMARY_MIN_SAMPLES samples (its iters); such rows
 * are not evidence for a verdict (ibchar claims).  A table with marked cells
 * says what the marks mean in its note. */
#define IBC_SUMMARY_MIN_SAMPLES 30
#define IBC_SUMMARY_MARK_OVERSUB "*"
#define IBC_SUMMARY_MARK_FEW "?"

/* The tables of suite's rows of run_id (out[0..return-1], each to be freed
 * with ibc_tab_free); 0 when there are none. */
size_t ibc_harness_summary_tables(const struct ibc_csv_table *t, const char *run_id,
				  const char *suite, struct ibc_tab **out);

/* Distinct values of column (in file order) of the rows whose column
 * where is equal (where NULL: every row); pointers into t.  Returns how
 * many (<= cap). */
size_t ibc_harness_summary_distinct(const struct ibc_csv_table *t, const char *where,
				    const char *equal, const char *column, const char **out,
				    size_t cap);

/* Every suite of run_id in dir/results.csv as text on stdout, then a line
 * with the row count and where the files are. */
void ibc_harness_summary_print(const char *dir, const char *run_id);

#endif
