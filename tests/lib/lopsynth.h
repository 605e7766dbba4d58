/* The LoP model tests' synthetic results directory: kernel rows from known
 * functions (below) and the collectives' rows written into a results.csv,
 * then the fits and the model run over it (tests/logp/model*.c). */
#ifndef IBC_TESTS_LOPSYNTH_H
#define IBC_TESTS_LOPSYNTH_H

#include "core/csv.h"
#include "logp/logp_model.h"

#include <stddef.h>
#include <stdio.h>

/* the kernels' functions; size 4096 costs twice as much */
static inline double rtt_w(double p, double k) { return k * (2 + 4 / p); }
static inline double rtt_s(double p, double k) { return k * (3 + 4 / p); }
static inline double os_w(double p, double k) { return k * (0.1 + 0.2 / p); }
static inline double os_s(double p, double k) { return k * (0.2 + 0.2 / p); }
/* the copy kernels at 1 and 4096 B; a line between and past them */
static inline double cp_own(double s) { return 0.01 + 0.04 * (s - 1) / 4095; }
static inline double cp_peer(double s) { return 0.02 + 0.08 * (s - 1) / 4095; }
/* a post of a write into user memory (os-write-user) */
static inline double os_u(double p, double k) { return k * (1.0 + 0.2 / p); }

extern struct ibc_csv_writer *lop_w;   /* results.csv being written */
extern const char *lop_row_over;       /* the oversub column of the next rows */
extern const char *lop_row_probe;      /* their probe_us ("": none measured) */
extern const char *lop_row_run;        /* their run_id (default R1) */
extern double lop_kernel_scale;        /* lop_kernels' times scaled by this (default 1) */
extern int lop_with_copies;            /* lop_kernels writes the copy kernels' rows */
extern double lop_b2b_scale;           /* > 0: rtt-write-1n's rows carry a back-to-back
					  loop's median, lop_b2b_scale times their p50 */

/* one row of results.csv (fanin 0: none) */
void lop_row(const char *suite, const char *variant, int n, size_t bytes, long fanin, double us,
	     const char *extra);
/* dir (a mkdtemp template) made, with results.csv open for lop_row;
 * lop_results_create: in dir, made already */
void lop_results_open(char *dir);
void lop_results_create(const char *dir);
/* rm -rf dir (a test's scratch directory) */
void lop_dir_remove(const char *dir);
/* the kernels' rows at 1 and 4096 B, p = 1..7, from the functions above */
void lop_kernels(void);
/* a row's cell of lop-model.csv by variant, N and fanin ("": none): as a
 * number (NAN: no such row) or as written ("") */
double lop_cell(const struct ibc_csv_table *t, const char *variant, int n, const char *fanin,
		const char *col);
const char *lop_scell(const struct ibc_csv_table *t, const char *variant, int n,
		      const char *fanin, const char *col);
/* The rows written (results.csv closed), their fits, then the model over
 * dir, its stdout into dir/stdout; that file open to read (NULL if it
 * cannot be) */
FILE *lop_model_said(struct ibc_logp_model_opts *mo, const char *dir, const char *label);
/* lop_model_said, then its lop-model.csv (bails out when unreadable);
 * *said counts the lines of stdout that hold says */
struct ibc_csv_table *lop_model_table(struct ibc_logp_model_opts *mo, const char *dir,
				      const char *label, const char *says, int *said);
/* the model's options over the barrier and all-to-all families */
void lop_model_opts_init(struct ibc_logp_model_opts *mo);

#endif
