/* Private state of the scorecard, shared by claims.c (the evaluation of a
 * claim against a run, the claims files, the interface of claims.h),
 * claims_rules.c (the claim rule language: a claims file's row into a
 * struct claim) and claims_rows.c (a run's rows: open and check results.csv,
 * a row's cells and metric, and the text of value sets).  Calls run one way:
 * claims.c calls the other two, claims_rows.c calls claims_rules.c.  Not part
 * of the claims interface: only impl/tools/claims*.c include it. */
#ifndef IBC_TOOLS_CLAIMS_PRIV_H
#define IBC_TOOLS_CLAIMS_PRIV_H

#include <stddef.h>

struct ibc_csv_table;

#define MAX_SIDES 8
#define MAX_CONDS 8

enum op { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

struct cond {
	char key[32], val[64];
	enum op op;
	double num;
	int isnum, pow2; /* val is a number (K, M, G: x1024) / the word pow2 */
};

struct side {
	char variant[64];
	struct cond c[MAX_CONDS];
	size_t nc;
};

enum claim_stat { STAT_FACTOR, STAT_GAP };
enum expect { EXP_BETTER, EXP_BETTER_GROWING, EXP_SIMILAR };
enum method { METH_SAME, METH_DIFFERS, METH_UNSTATED, METH_COND };

struct claim {
	const char *file;
	size_t line;
	const char *id, *paper, *section, *text, *suite, *metric, *along;
	const char *paper_figure, *testbed, *paper_method, *method_note;
	struct side subj[MAX_SIDES], ref[MAX_SIDES];
	size_t nsubj, nref;
	struct cond sel[MAX_CONDS];
	size_t nsel;
	int rate; /* the metric is a rate (mbps: bytes / p50_us): higher is better */
	enum claim_stat stat;
	enum expect expect;
	double thr;
	int hw_mcast;
	enum method method;
	struct cond mcond;
};

struct run {
	const char *dir;
	struct ibc_csv_table *t, *meta;
	int col_extra;
};

/* claims_rules.c */

/* a number with an optional K, M or G (x1024); the whole of s */
int ibc_claims_num_parse(const char *s, double *out);
void ibc_claims_cond_text(const struct cond *c, char *buf, size_t cap);
/* an error about claim c (its file, line and id); IBC_ERR_INVAL */
int ibc_claims_rule_bad(const struct claim *c, const char *what, const char *val);
/* row r of claims table t (from file) into *c; IBC_ERR_INVAL for a bad rule */
int ibc_claims_rule_parse(const struct ibc_csv_table *t, size_t r, const char *file, struct claim *c);

/* claims_rows.c */

/* a column's cell, else the value of key in the row's extra; NULL when absent */
const char *ibc_claims_row_get(const struct run *ru, size_t r, const char *key, char *buf, size_t cap);
int ibc_claims_row_is_model(const struct run *ru, size_t r);
int ibc_claims_cond_holds(const struct run *ru, size_t r, const struct cond *c);
/* The claim's metric of row r: 1 with *v, 0 when the row has none, -1 (an
 * error logged) when it is there and not a time or a rate. */
int ibc_claims_row_metric(const struct run *ru, size_t r, const struct claim *c, double *v);
int ibc_claims_run_open(struct run *ru, const char *dir);
void ibc_claims_run_close(struct run *ru);
/* the distinct values meta.csv gives key, "a, b" */
void ibc_claims_meta_values(const struct run *ru, const char *key, char *buf, size_t cap);
/* printf's text at the end of buf, as much as fits */
void ibc_claims_text_append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* the distinct numbers of v[0..n-1] as "2", "2, 4, 8" or "2..16" (sorts v) */
void ibc_claims_num_set(double *v, size_t n, char *buf, size_t cap);
/* the distinct values of column key over rows[0..n-1], as ibc_claims_num_set or "a, b" */
void ibc_claims_col_set(const struct run *ru, const size_t *rows, size_t n, const char *key, char *buf, size_t cap);

#endif
