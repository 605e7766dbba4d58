/* Private state of ibchar accept, shared by accept.c (the runs, the checks,
 * the report: ibc_harness_accept) and accept_spec.c (the spec parser: its run
 * and check lines into struct acc).  Calls run one way: accept.c calls
 * accept_spec.c, never back.  Not part of the accept interface: only
 * impl/tools/accept*.c include it. */
#ifndef IBC_TOOLS_ACCEPT_PRIV_H
#define IBC_TOOLS_ACCEPT_PRIV_H

#include <stddef.h>

struct ibc_accept_opts;
struct ibc_csv_table;

#define MAX_WORDS 64
#define MAX_SEL 5

enum ref_kind { REF_NONE, REF_PROBE, REF_FIELD, REF_ROW };

struct check {
	int line;
	char text[512];
	char suite[48], variant[64];
	char sel_key[MAX_SEL][16], sel_val[MAX_SEL][64];
	int nsel;
	char threshold[256];      /* METRIC OP BOUND as the spec says it */
	char metric[16];
	char op[3];
	double factor;            /* BOUND = factor (REF_NONE) or factor * the reference */
	enum ref_kind ref;
	char ref_key[16], ref_val[64]; /* REF_FIELD: impl or variant = value */
	char ref_suite[48], ref_variant[64];
	long long ref_bytes;      /* REF_ROW */
	char ov_key[MAX_SEL][16], ov_val[MAX_SEL][64]; /* the reference's KEY=VALUE after REF */
	int nov;
};

struct run_line {
	int line;
	char args[1024];
};

/* A run whose rows are checked: its run_id and, for the runs accept made,
 * the spec line that made it (0: a run found in the directory given). */
struct group {
	char run_id[64];
	int line;
};

struct verdict {
	int ok;
	char name[700], text[700];
};

/* Everything one accept holds. */
struct acc {
	const struct ibc_accept_opts *o;
	struct check *cs;
	size_t nc, ccap;
	struct run_line *rl;
	size_t nr, rcap;
	struct ibc_csv_table *t;   /* DIR/results.csv */
	size_t nrows;              /* its data rows */
	int *grp;                  /* per data row: its group, -1 when not checked */
	struct group *g;
	size_t ng, gcap;
	struct verdict *vd;
	size_t nv, vcap;
};

/* accept_spec.c */

/* s split at blanks into w[0..cap), in place; returns how many words */
int ibc_accept_words_split(char *s, char **w, int cap);
/* room for element n of *p (each size bytes, *cap of them), doubled when full */
int ibc_accept_array_grow(void **p, size_t *cap, size_t n, size_t size);
/* a->o->spec into a's run lines and checks; IBC_ERR_INVAL (said) for a bad spec */
int ibc_accept_spec_read(struct acc *a);

#endif
