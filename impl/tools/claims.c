/* The reproduction scorecard: see claims.h. */
#define _GNU_SOURCE
#include "tools/claims.h"
#include "tools/summary.h"

#include "core/csv.h"
#include "core/log.h"
#include "core/status.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SIDES 8
#define MAX_CONDS 8
#define MAX_FILES 32
#define MIN_TREND 3 /* points along the axis for a trend */

/* ------------------------------------------------------------ rules ---- */

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

static const char *const claim_cols[] = {
	"id",	     "paper",	  "section",	  "claim",	  "suite",	  "subject", "reference",
	"select",    "metric",	  "stat",	  "expect",	  "threshold",	  "along",   "needs",
	"paper_figure", "testbed", "paper_method", "method",	  "method_note",
};

static const char *const op_text[] = { "=", "!=", "<", "<=", ">", ">=" };

/* a number with an optional K, M or G (x1024); the whole of s */
static int parse_num(const char *s, double *out)
{
	char *end;
	double v;

	if (s == NULL || s[0] == '\0')
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0 || !isfinite(v))
		return 0;
	if (*end == 'K' || *end == 'k')
		v *= 1024, end++;
	else if (*end == 'M')
		v *= 1024.0 * 1024, end++;
	else if (*end == 'G')
		v *= 1024.0 * 1024 * 1024, end++;
	if (*end != '\0')
		return 0;
	*out = v;
	return 1;
}

static int parse_cond(const char *s, struct cond *c)
{
	size_t k = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");
	const char *o = s + k, *v;

	memset(c, 0, sizeof(*c));
	if (k == 0 || k >= sizeof(c->key))
		return 0;
	memcpy(c->key, s, k);
	if (strncmp(o, "<=", 2) == 0)
		c->op = OP_LE, v = o + 2;
	else if (strncmp(o, ">=", 2) == 0)
		c->op = OP_GE, v = o + 2;
	else if (strncmp(o, "!=", 2) == 0)
		c->op = OP_NE, v = o + 2;
	else if (*o == '=')
		c->op = OP_EQ, v = o + 1;
	else if (*o == '<')
		c->op = OP_LT, v = o + 1;
	else if (*o == '>')
		c->op = OP_GT, v = o + 1;
	else
		return 0;
	if (v[0] == '\0' || strlen(v) >= sizeof(c->val))
		return 0;
	snprintf(c->val, sizeof(c->val), "%s", v);
	c->pow2 = strcmp(v, "pow2") == 0;
	c->isnum = parse_num(v, &c->num);
	if (c->pow2 && c->op != OP_EQ && c->op != OP_NE)
		return 0;
	return c->pow2 || c->isnum || c->op == OP_EQ || c->op == OP_NE;
}

static void cond_text(const struct cond *c, char *buf, size_t cap)
{
	if (c->pow2)
		snprintf(buf, cap, "%s %s a power of two", c->key, c->op == OP_EQ ? "is" : "is not");
	else
		snprintf(buf, cap, "%s%s%s", c->key, op_text[c->op], c->val);
}

/* "a;b;c" (sep ';') or "a,b" (sep ',') into c[]; 0 on a bad one */
static int parse_conds(const char *s, char sep, struct cond *c, size_t *n)
{
	char buf[512], *tok, *save = NULL, seps[3] = { sep, '\0', '\0' };

	*n = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, seps, &save); tok != NULL; tok = strtok_r(NULL, seps, &save)) {
		tok += strspn(tok, " ");
		tok[strcspn(tok, " ")] = '\0';
		if (tok[0] == '\0')
			continue;
		if (*n == MAX_CONDS || !parse_cond(tok, &c[*n]))
			return 0;
		(*n)++;
	}
	return 1;
}

/* "rds rgm[fanin=7]": variants, each with its own conditions */
static int parse_sides(const char *s, struct side *sd, size_t *n)
{
	char buf[512], *tok, *save = NULL;

	*n = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
		char *br = strchr(tok, '[');

		if (*n == MAX_SIDES)
			return 0;
		memset(&sd[*n], 0, sizeof(sd[*n]));
		if (br != NULL) {
			size_t len = strlen(br);

			if (len < 3 || br[len - 1] != ']')
				return 0;
			br[len - 1] = '\0';
			*br++ = '\0';
			if (!parse_conds(br, ',', sd[*n].c, &sd[*n].nc) || sd[*n].nc == 0)
				return 0;
		}
		if (tok[0] == '\0' || strlen(tok) >= sizeof(sd[*n].variant))
			return 0;
		snprintf(sd[*n].variant, sizeof(sd[*n].variant), "%s", tok);
		(*n)++;
	}
	return *n > 0;
}

static int claim_bad(const struct claim *c, const char *what, const char *val)
{
	ibc_error("claims: %s line %zu: claim '%s': %s '%s'", c->file, c->line, c->id, what, val);
	return IBC_ERR_INVAL;
}

static int claim_parse(const struct ibc_csv_table *t, size_t r, const char *file, struct claim *c)
{
	const char *v;

	memset(c, 0, sizeof(*c));
	c->file = file;
	c->line = r + 2;
	c->id = ibc_csv_cell(t, r, "id");
	c->paper = ibc_csv_cell(t, r, "paper");
	c->section = ibc_csv_cell(t, r, "section");
	c->text = ibc_csv_cell(t, r, "claim");
	c->suite = ibc_csv_cell(t, r, "suite");
	c->metric = ibc_csv_cell(t, r, "metric");
	c->along = ibc_csv_cell(t, r, "along");
	c->paper_figure = ibc_csv_cell(t, r, "paper_figure");
	c->testbed = ibc_csv_cell(t, r, "testbed");
	c->paper_method = ibc_csv_cell(t, r, "paper_method");
	c->method_note = ibc_csv_cell(t, r, "method_note");
	if (c->id[0] == '\0' || c->suite[0] == '\0' || c->text[0] == '\0' || c->paper[0] == '\0')
		return claim_bad(c, "id, paper, claim and suite are needed; got id", c->id);
	if (!parse_sides(ibc_csv_cell(t, r, "subject"), c->subj, &c->nsubj))
		return claim_bad(c, "bad subject", ibc_csv_cell(t, r, "subject"));
	if (!parse_sides(ibc_csv_cell(t, r, "reference"), c->ref, &c->nref))
		return claim_bad(c, "bad reference", ibc_csv_cell(t, r, "reference"));
	if (!parse_conds(ibc_csv_cell(t, r, "select"), ';', c->sel, &c->nsel))
		return claim_bad(c, "bad select", ibc_csv_cell(t, r, "select"));
	if (c->metric[0] == '\0' || strspn(c->metric, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
					    strlen(c->metric))
		return claim_bad(c, "bad metric", c->metric);
	c->rate = strcmp(c->metric, "mbps") == 0;
	if (!c->rate && (strlen(c->metric) < 4 || strcmp(c->metric + strlen(c->metric) - 3, "_us") != 0))
		return claim_bad(c, "metric is a time (NAME_us) or mbps, not", c->metric);
	v = ibc_csv_cell(t, r, "stat");
	if (strcmp(v, "factor") == 0)
		c->stat = STAT_FACTOR;
	else if (strcmp(v, "gap") == 0)
		c->stat = STAT_GAP;
	else
		return claim_bad(c, "stat is factor or gap, not", v);
	v = ibc_csv_cell(t, r, "expect");
	if (strcmp(v, "better") == 0)
		c->expect = EXP_BETTER;
	else if (strcmp(v, "better-growing") == 0)
		c->expect = EXP_BETTER_GROWING;
	else if (strcmp(v, "similar") == 0)
		c->expect = EXP_SIMILAR;
	else
		return claim_bad(c, "expect is better, better-growing or similar, not", v);
	v = ibc_csv_cell(t, r, "threshold");
	if (v[0] == '\0' && c->expect == EXP_SIMILAR)
		return claim_bad(c, "similar needs a threshold; got", v);
	if (v[0] == '\0')
		c->thr = c->stat == STAT_FACTOR ? 1.0 : 0.0;
	else if (!parse_num(v, &c->thr) || c->thr < 0 || (c->expect == EXP_SIMILAR && c->stat == STAT_FACTOR && c->thr < 1))
		return claim_bad(c, "bad threshold", v);
	if (c->expect == EXP_BETTER_GROWING &&
	    strcmp(c->along, "ranks") != 0 && strcmp(c->along, "ppn") != 0 && strcmp(c->along, "nodes") != 0 &&
	    strcmp(c->along, "bytes") != 0 && strcmp(c->along, "fanin") != 0)
		return claim_bad(c, "along (ranks, ppn, nodes, bytes or fanin) is needed for a trend; got", c->along);
	v = ibc_csv_cell(t, r, "needs");
	if (strcmp(v, "hw-multicast") == 0)
		c->hw_mcast = 1;
	else if (v[0] != '\0')
		return claim_bad(c, "needs is hw-multicast or empty, not", v);
	v = ibc_csv_cell(t, r, "method");
	if (strcmp(v, "same") == 0 || v[0] == '\0')
		c->method = METH_SAME;
	else if (strcmp(v, "differs") == 0)
		c->method = METH_DIFFERS;
	else if (strcmp(v, "unstated") == 0)
		c->method = METH_UNSTATED;
	else if (parse_cond(v, &c->mcond))
		c->method = METH_COND;
	else
		return claim_bad(c, "method is same, differs, unstated or KEY=VALUE, not", v);
	return IBC_OK;
}

/* ------------------------------------------------------------- rows ---- */

struct run {
	const char *dir;
	struct ibc_csv_table *t, *meta;
	int col_extra;
};

/* a column's cell, else the value of key in the row's extra; NULL when absent */
static const char *row_get(const struct run *ru, size_t r, const char *key, char *buf, size_t cap)
{
	if (ibc_csv_column(ru->t, key) >= 0)
		return ibc_csv_cell(ru->t, r, key);
	return ibc_csv_extra_get(ibc_csv_cell(ru->t, r, "extra"), key, buf, cap);
}

static int is_model(const struct run *ru, size_t r)
{
	return strcmp(ibc_csv_cell(ru->t, r, "impl"), "model") == 0;
}

static int cond_holds(const struct run *ru, size_t r, const struct cond *c)
{
	char buf[128];
	const char *v = row_get(ru, r, c->key, buf, sizeof(buf));
	double x;

	if (v == NULL)
		return c->op == OP_NE;
	if (c->pow2) {
		long long n;
		int p;

		if (!parse_num(v, &x) || x < 1 || x != floor(x))
			return c->op == OP_NE;
		n = (long long)x;
		p = (n & (n - 1)) == 0;
		return c->op == OP_EQ ? p : !p;
	}
	if (c->isnum && parse_num(v, &x)) {
		switch (c->op) {
		case OP_EQ: return x == c->num;
		case OP_NE: return x != c->num;
		case OP_LT: return x < c->num;
		case OP_LE: return x <= c->num;
		case OP_GT: return x > c->num;
		case OP_GE: return x >= c->num;
		}
	}
	if (c->op == OP_EQ)
		return strcmp(v, c->val) == 0;
	if (c->op == OP_NE)
		return strcmp(v, c->val) != 0;
	return 0;
}

/* The claim's metric of row r: 1 with *v, 0 when the row has none, -1 (an
 * error logged) when it is there and not a time or a rate. */
static int row_metric(const struct run *ru, size_t r, const struct claim *c, double *v)
{
	char buf[64];
	const char *s;
	double b, p;

	if (c->rate) {
		if (!parse_num(ibc_csv_cell(ru->t, r, "bytes"), &b) || !parse_num(ibc_csv_cell(ru->t, r, "p50_us"), &p))
			return 0;
		if (p <= 0 || b <= 0)
			return 0;
		*v = b / p;
		return 1;
	}
	s = row_get(ru, r, c->metric, buf, sizeof(buf));
	if (s == NULL || s[0] == '\0')
		return 0;
	if (!parse_num(s, v) || *v < 0) {
		ibc_error("claims: %s/results.csv line %zu: %s '%s' is not a time", ru->dir, r + 2, c->metric, s);
		return -1;
	}
	return 1;
}

static int whole_number(const char *s)
{
	double x;

	return parse_num(s, &x) && x >= 0 && x == floor(x);
}

static int damaged(const struct run *ru, size_t r, const char *col, const char *what)
{
	ibc_error("claims: %s/results.csv line %zu: %s '%s' is not %s", ru->dir, r + 2, col,
		  ibc_csv_cell(ru->t, r, col), what);
	return IBC_ERR_INVAL;
}

/* every cell a verdict reads is what its column says */
static int run_check(const struct run *ru)
{
	static const char *const need[] = { "run_id", "suite", "variant", "impl", "xport", "nodes", "ppn",
					    "ranks", "bytes", "fanin", "iters", "p50_us", "oversub", "extra" };
	static const char *const whole[] = { "nodes", "ppn", "ranks", "bytes" };
	size_t i, r;
	double x;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (ibc_csv_column(ru->t, need[i]) < 0) {
			ibc_error("claims: %s/results.csv has no column %s", ru->dir, need[i]);
			return IBC_ERR_INVAL;
		}
	}
	if (ru->t->nrows < 2) {
		ibc_error("claims: %s/results.csv has no rows", ru->dir);
		return IBC_ERR_INVAL;
	}
	for (r = 0; r + 1 < ru->t->nrows; r++) {
		const char *o = ibc_csv_cell(ru->t, r, "oversub"), *f = ibc_csv_cell(ru->t, r, "fanin");

		if (ibc_csv_cell(ru->t, r, "suite")[0] == '\0' || ibc_csv_cell(ru->t, r, "variant")[0] == '\0')
			return damaged(ru, r, "suite", "a suite and variant");
		for (i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
			if (!whole_number(ibc_csv_cell(ru->t, r, whole[i])))
				return damaged(ru, r, whole[i], "a whole number");
		if (f[0] != '\0' && !whole_number(f))
			return damaged(ru, r, "fanin", "empty or a whole number");
		if (strcmp(o, "0") != 0 && strcmp(o, "1") != 0)
			return damaged(ru, r, "oversub", "0 or 1");
		if (is_model(ru, r))
			continue;
		if (!whole_number(ibc_csv_cell(ru->t, r, "iters")))
			return damaged(ru, r, "iters", "a count of samples");
		if (!parse_num(ibc_csv_cell(ru->t, r, "p50_us"), &x) || x < 0)
			return damaged(ru, r, "p50_us", "a time");
	}
	return IBC_OK;
}

static int run_open(struct run *ru, const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	memset(ru, 0, sizeof(*ru));
	ru->dir = dir;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		ibc_error("claims: %s: not a results directory (%s)", dir, errno ? strerror(errno) : "not a directory");
		return IBC_ERR_INVAL;
	}
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	if (access(path, R_OK) != 0) {
		ibc_error("claims: %s: no readable results.csv (%s)", dir, strerror(errno));
		return IBC_ERR_INVAL;
	}
	if (ibc_csv_read(path, &ru->t) != IBC_OK) {
		ibc_error("claims: %s: results.csv does not parse", dir);
		ru->t = NULL;
		return IBC_ERR_INVAL;
	}
	snprintf(path, sizeof(path), "%s/meta.csv", dir);
	if (access(path, R_OK) != 0 || ibc_csv_read(path, &ru->meta) != IBC_OK) {
		ibc_error("claims: %s: no readable meta.csv (the run's provenance)", dir);
		ru->meta = NULL;
		return IBC_ERR_INVAL;
	}
	if (ibc_csv_column(ru->meta, "key") < 0 || ibc_csv_column(ru->meta, "value") < 0 || ru->meta->nrows < 2) {
		ibc_error("claims: %s/meta.csv is empty or not key,value", dir);
		return IBC_ERR_INVAL;
	}
	return run_check(ru);
}

static void run_close(struct run *ru)
{
	if (ru->t != NULL)
		ibc_csv_table_free(ru->t);
	if (ru->meta != NULL)
		ibc_csv_table_free(ru->meta);
}

/* the distinct values meta.csv gives key, "a, b" */
static void meta_values(const struct run *ru, const char *key, char *buf, size_t cap)
{
	size_t r, len = 0;

	buf[0] = '\0';
	for (r = 0; r + 1 < ru->meta->nrows && len + 1 < cap; r++) {
		const char *v = ibc_csv_cell(ru->meta, r, "value");
		const char *at;

		if (strcmp(ibc_csv_cell(ru->meta, r, "key"), key) != 0 || v[0] == '\0')
			continue;
		at = strstr(buf, v);
		if (at != NULL && (at == buf || at[-1] == ' ') && (at[strlen(v)] == '\0' || at[strlen(v)] == ','))
			continue;
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", v);
	}
}

/* ----------------------------------------------------------- text ---- */

static void app(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void app(char *buf, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the distinct numbers of v[0..n-1] as "2", "2, 4, 8" or "2..16" */
static void num_set(double *v, size_t n, char *buf, size_t cap)
{
	size_t i, k = 0;

	buf[0] = '\0';
	qsort(v, n, sizeof(*v), dbl_cmp);
	for (i = 0; i < n; i++)
		if (i == 0 || v[i] != v[i - 1])
			v[k++] = v[i];
	if (k > 3)
		snprintf(buf, cap, "%g..%g", v[0], v[k - 1]);
	else
		for (i = 0; i < k; i++)
			app(buf, cap, "%s%g", i ? ", " : "", v[i]);
}

/* the distinct values of column key over rows[0..n-1], as num_set or "a, b" */
static void col_set(const struct run *ru, const size_t *rows, size_t n, const char *key, char *buf, size_t cap)
{
	double *v = malloc((n + 1) * sizeof(*v));
	char tmp[128];
	size_t i, k = 0;
	int num = 1;

	buf[0] = '\0';
	for (i = 0; i < n && v != NULL; i++) {
		const char *s = row_get(ru, rows[i], key, tmp, sizeof(tmp));

		if (s == NULL || s[0] == '\0')
			continue;
		if (!parse_num(s, &v[k])) {
			num = 0;
			if (strstr(buf, s) == NULL)
				app(buf, cap, "%s%s", buf[0] ? ", " : "", s);
			continue;
		}
		k++;
	}
	if (num && v != NULL)
		num_set(v, k, buf, cap);
	if (buf[0] == '\0')
		snprintf(buf, cap, "none");
	free(v);
}

/* ------------------------------------------------------- evaluation ---- */

enum { EX_OVERSUB = 1, EX_FEW = 2, EX_NOMETRIC = 4 };

struct pair {
	size_t a, b;  /* rows: subject, reference */
	int s, f;     /* their sides */
	double stat, x;
	unsigned ex;  /* why not evidence (0: evidence) */
	int series;   /* trend: the pair's series */
};

struct eval {
	const struct claim *c;
	const struct run *ru;
	size_t *rows[2 * MAX_SIDES], nrows[2 * MAX_SIDES];
	struct pair *p;
	size_t np, cap;
};

static const struct side *side_of(const struct claim *c, int k)
{
	return k < (int)c->nsubj ? &c->subj[k] : &c->ref[k - (int)c->nsubj];
}

static int same_cell(const struct run *ru, size_t a, size_t b, const char *col)
{
	return strcmp(ibc_csv_cell(ru->t, a, col), ibc_csv_cell(ru->t, b, col)) == 0;
}

/* 1 when a side of the pair names col in its own conditions (the sides then
 * differ in it by design, as rgm[fanin=7] against rgm[fanin=1]) */
static int side_names(const struct side *x, const struct side *y, const char *col)
{
	size_t i;

	for (i = 0; i < x->nc; i++)
		if (strcmp(x->c[i].key, col) == 0)
			return 1;
	for (i = 0; i < y->nc; i++)
		if (strcmp(y->c[i].key, col) == 0)
			return 1;
	return 0;
}

/* a and b measured at one point: run, transport, nodes, ppn, N, size, and
 * the fan-in when both have one; a column a side's own conditions name is
 * not compared */
static int same_point(const struct run *ru, size_t a, size_t b, const struct side *x, const struct side *y)
{
	static const char *const cols[] = { "run_id", "xport", "nodes", "ppn", "ranks", "bytes" };
	const char *fa = ibc_csv_cell(ru->t, a, "fanin"), *fb = ibc_csv_cell(ru->t, b, "fanin");
	size_t i;

	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (!side_names(x, y, cols[i]) && !same_cell(ru, a, b, cols[i]))
			return 0;
	return fa[0] == '\0' || fb[0] == '\0' || strcmp(fa, fb) == 0 || side_names(x, y, "fanin");
}

/* x and y of one series of a trend: every point column but along agrees
 * (and N, which moves with nodes and ppn; and ppn when along is N) */
static int same_series(const struct run *ru, const struct pair *x, const struct pair *y, const char *along)
{
	static const char *const cols[] = { "run_id", "xport", "nodes", "ppn", "ranks", "bytes", "fanin", "impl" };
	int job = strcmp(along, "ranks") == 0 || strcmp(along, "ppn") == 0 || strcmp(along, "nodes") == 0;
	size_t i;

	if (x->s != y->s || x->f != y->f)
		return 0;
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		if (strcmp(cols[i], along) == 0 || (job && strcmp(cols[i], "ranks") == 0) ||
		    (strcmp(along, "ranks") == 0 && strcmp(cols[i], "ppn") == 0))
			continue;
		if (!same_cell(ru, x->a, y->a, cols[i]) || !same_cell(ru, x->b, y->b, cols[i]))
			return 0;
	}
	return 1;
}

static unsigned row_excl(const struct run *ru, size_t r)
{
	unsigned ex = 0;

	if (strcmp(ibc_csv_cell(ru->t, r, "oversub"), "1") == 0)
		ex |= EX_OVERSUB;
	if (strtod(ibc_csv_cell(ru->t, r, "iters"), NULL) < IBC_SUMMARY_MIN_SAMPLES)
		ex |= EX_FEW;
	return ex;
}

static const char *unit(const struct claim *c)
{
	return c->rate ? " MB/s" : " us";
}

static void stat_text(const struct claim *c, double v, char *buf, size_t cap)
{
	if (c->stat == STAT_FACTOR)
		snprintf(buf, cap, "%.2fx", v);
	else
		snprintf(buf, cap, "%+.3g%s", v, unit(c));
}

/* "N = 4, 4096 B" (and the fan-ins) of a pair */
static void point_text(const struct run *ru, const struct pair *p, char *buf, size_t cap)
{
	const char *fa = ibc_csv_cell(ru->t, p->a, "fanin"), *fb = ibc_csv_cell(ru->t, p->b, "fanin");

	snprintf(buf, cap, "N = %s", ibc_csv_cell(ru->t, p->a, "ranks"));
	if (strcmp(ibc_csv_cell(ru->t, p->a, "bytes"), "0") != 0)
		app(buf, cap, ", %s B", ibc_csv_cell(ru->t, p->a, "bytes"));
	if (strcmp(ibc_csv_cell(ru->t, p->a, "ppn"), ibc_csv_cell(ru->t, p->a, "ranks")) != 0)
		app(buf, cap, ", %s per node", ibc_csv_cell(ru->t, p->a, "ppn"));
	if (fa[0] != '\0' || fb[0] != '\0')
		app(buf, cap, ", fan-in %s", fa[0] != '\0' ? fa : fb);
}

static void pair_name(const struct eval *e, const struct pair *p, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%s", ibc_csv_cell(e->ru->t, p->a, "variant"), ibc_csv_cell(e->ru->t, p->b, "variant"));
	if (ibc_csv_cell(e->ru->t, p->a, "fanin")[0] != '\0' && side_of(e->c, p->s)->nc == 0)
		app(buf, cap, "(l=%s)", ibc_csv_cell(e->ru->t, p->a, "fanin"));
}

/* what was not counted, "14 oversubscribed (N = 3..16, 2 PUs), 2 with
 * fewer than 30 kept samples"; "" when nothing */
static void excluded_text(const struct eval *e, char *buf, size_t cap)
{
	size_t i, n[3] = { 0, 0, 0 }, k = 0;
	double *v = malloc((e->np + 1) * sizeof(*v));
	char set[128], pus[64];

	buf[0] = '\0';
	for (i = 0; i < e->np; i++) {
		n[0] += (e->p[i].ex & EX_OVERSUB) != 0;
		n[1] += (e->p[i].ex & (EX_OVERSUB | EX_FEW)) == EX_FEW;
		n[2] += e->p[i].ex == EX_NOMETRIC;
		if ((e->p[i].ex & EX_OVERSUB) && v != NULL)
			v[k++] = strtod(ibc_csv_cell(e->ru->t, e->p[i].a, "ranks"), NULL);
	}
	if (n[0]) {
		num_set(v, k, set, sizeof(set));
		meta_values(e->ru, "pus", pus, sizeof(pus));
		app(buf, cap, "%zu comparison%s with an oversubscribed row (N = %s%s%s%s)", n[0], n[0] == 1 ? "" : "s",
		    set, pus[0] ? " on " : "", pus, pus[0] ? " PUs" : "");
	}
	if (n[1])
		app(buf, cap, "%s%zu with a row of fewer than %d kept samples", buf[0] ? ", " : "", n[1],
		    IBC_SUMMARY_MIN_SAMPLES);
	if (n[2])
		app(buf, cap, "%s%zu without %s", buf[0] ? ", " : "", n[2], e->c->metric);
	free(v);
}

static int pair_add(struct eval *e, const struct pair *p)
{
	if (e->np == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 64;
		struct pair *q = realloc(e->p, cap * sizeof(*q));

		if (q == NULL)
			return IBC_ERR_NOMEM;
		e->p = q;
		e->cap = cap;
	}
	e->p[e->np++] = *p;
	return IBC_OK;
}

static int has_hw_multicast(const struct eval *e, char *why, size_t cap)
{
	char dev[256], xp[128];
	size_t k, i;
	int verbs = 0, soft = 0;

	meta_values(e->ru, "device", dev, sizeof(dev));
	xp[0] = '\0';
	for (k = 0; k < e->c->nsubj + e->c->nref; k++)
		for (i = 0; i < e->nrows[k]; i++) {
			const char *x = ibc_csv_cell(e->ru->t, e->rows[k][i], "xport");

			verbs |= strcmp(x, "verbs") == 0;
			if (strstr(xp, x) == NULL)
				app(xp, sizeof(xp), "%s%s", xp[0] ? ", " : "", x);
		}
	soft = dev[0] == '\0' || strstr(dev, "rxe") != NULL || strstr(dev, "siw") != NULL ||
	       strstr(dev, "shm") != NULL || strstr(dev, "none") != NULL;
	snprintf(why, cap, "needs hardware multicast (this run: transport %s, device %s)", xp[0] ? xp : "none",
		 dev[0] ? dev : "not recorded");
	return verbs && !soft;
}

/* the sides' rows; 0 and *why when a side has none */
static int eval_rows(struct eval *e, char *why, size_t cap)
{
	const struct claim *c = e->c;
	const struct run *ru = e->ru;
	size_t k, r, i, n, any = 0;
	char t1[128], t2[256];

	for (r = 0; r + 1 < ru->t->nrows; r++)
		any += !is_model(ru, r) && strcmp(ibc_csv_cell(ru->t, r, "suite"), c->suite) == 0;
	if (any == 0) {
		snprintf(why, cap, "no %s rows in this run (ibchar run %s)", c->suite, c->suite);
		return 0;
	}
	for (k = 0; k < c->nsubj + c->nref; k++) {
		const struct side *s = side_of(c, (int)k);

		e->rows[k] = malloc(ru->t->nrows * sizeof(size_t));
		if (e->rows[k] == NULL) {
			snprintf(why, cap, "out of memory");
			return 0;
		}
		for (r = 0, n = 0; r + 1 < ru->t->nrows; r++)
			if (!is_model(ru, r) && strcmp(ibc_csv_cell(ru->t, r, "suite"), c->suite) == 0 &&
			    strcmp(ibc_csv_cell(ru->t, r, "variant"), s->variant) == 0)
				e->rows[k][n++] = r;
		e->nrows[k] = n;
		if (n == 0) {
			snprintf(why, cap, "no rows of %s %s in this run", c->suite, s->variant);
			return 0;
		}
		/* the side's own conditions, then the claim's, one at a time */
		for (i = 0; i < s->nc + c->nsel; i++) {
			const struct cond *cd = i < s->nc ? &s->c[i] : &c->sel[i - s->nc];
			size_t j, m = 0;

			col_set(ru, e->rows[k], e->nrows[k], cd->key, t2, sizeof(t2));
			for (j = 0; j < e->nrows[k]; j++)
				if (cond_holds(ru, e->rows[k][j], cd))
					e->rows[k][m++] = e->rows[k][j];
			e->nrows[k] = m;
			if (m == 0) {
				cond_text(cd, t1, sizeof(t1));
				snprintf(why, cap, "no %s rows with %s (this run: %s %s)", s->variant, t1, cd->key, t2);
				return 0;
			}
		}
	}
	return 1;
}

/* pairs every subject row with every reference row at its point */
static int eval_pairs(struct eval *e)
{
	const struct claim *c = e->c;
	size_t s, f, i, j;
	int rc = IBC_OK;

	for (s = 0; s < c->nsubj; s++)
		for (f = 0; f < c->nref; f++)
			for (i = 0; i < e->nrows[s]; i++)
				for (j = 0; j < e->nrows[c->nsubj + f] && rc == IBC_OK; j++) {
					struct pair p = { .a = e->rows[s][i], .b = e->rows[c->nsubj + f][j],
							  .s = (int)s, .f = (int)(c->nsubj + f), .series = -1 };
					double va = 0, vb = 0;
					int ma, mb;

					if (p.a == p.b || !same_point(e->ru, p.a, p.b, &c->subj[s], &c->ref[f]))
						continue;
					ma = row_metric(e->ru, p.a, c, &va);
					mb = row_metric(e->ru, p.b, c, &vb);
					if (ma < 0 || mb < 0)
						return IBC_ERR_INVAL;
					p.ex = row_excl(e->ru, p.a) | row_excl(e->ru, p.b);
					if (!ma || !mb || (c->stat == STAT_FACTOR && (va <= 0 || vb <= 0)))
						p.ex |= EX_NOMETRIC;
					else if (c->stat == STAT_FACTOR)
						p.stat = c->rate ? va / vb : vb / va;
					else
						p.stat = c->rate ? va - vb : vb - va;
					if (c->along[0] != '\0')
						p.x = strtod(ibc_csv_cell(e->ru->t, p.a, c->along), NULL);
					else
						p.x = strtod(ibc_csv_cell(e->ru->t, p.a, "ranks"), NULL);
					rc = pair_add(e, &p);
				}
	return rc;
}

static int pair_x_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->series != y->series)
		return x->series < y->series ? -1 : 1;
	return x->x < y->x ? -1 : x->x > y->x;
}

/* numbers the trend's series among the evidence; returns how many */
static int eval_series(struct eval *e)
{
	size_t i, j;
	int ns = 0;

	for (i = 0; i < e->np; i++) {
		if (e->p[i].ex)
			continue;
		for (j = 0; j < i; j++)
			if (!e->p[j].ex && same_series(e->ru, &e->p[i], &e->p[j], e->c->along))
				break;
		e->p[i].series = j < i ? e->p[j].series : ns++;
	}
	qsort(e->p, e->np, sizeof(*e->p), pair_x_cmp);
	return ns;
}

/* this run's figure: per subject/reference, the statistic's range and where */
static void eval_figure(const struct eval *e, struct ibc_claim_result *res)
{
	size_t i, j, n = 0, k;
	double *xs = malloc((e->np + 1) * sizeof(double)), *bs = malloc((e->np + 1) * sizeof(double));
	char name[160], a[32], b[32], set[128];

	res->figure[0] = '\0';
	for (i = 0; i < e->np; i++) {
		double lo, hi;

		if (e->p[i].ex)
			continue;
		pair_name(e, &e->p[i], name, sizeof(name));
		for (j = 0; j < i; j++) {
			char other[160];

			if (e->p[j].ex)
				continue;
			pair_name(e, &e->p[j], other, sizeof(other));
			if (strcmp(other, name) == 0)
				break;
		}
		if (j < i)
			continue;
		lo = hi = e->p[i].stat;
		for (j = i + 1; j < e->np; j++) {
			char other[160];

			if (e->p[j].ex)
				continue;
			pair_name(e, &e->p[j], other, sizeof(other));
			if (strcmp(other, name) != 0)
				continue;
			lo = fmin(lo, e->p[j].stat);
			hi = fmax(hi, e->p[j].stat);
		}
		stat_text(e->c, lo, a, sizeof(a));
		stat_text(e->c, hi, b, sizeof(b));
		if (lo == hi)
			app(res->figure, sizeof(res->figure), "%s%s %s", res->figure[0] ? ", " : "", name, a);
		else
			app(res->figure, sizeof(res->figure), "%s%s %s to %s", res->figure[0] ? ", " : "", name, a, b);
	}
	for (i = 0, k = 0; i < e->np && xs != NULL && bs != NULL; i++) {
		if (e->p[i].ex)
			continue;
		xs[k] = strtod(ibc_csv_cell(e->ru->t, e->p[i].a, "ranks"), NULL);
		bs[k++] = strtod(ibc_csv_cell(e->ru->t, e->p[i].a, "bytes"), NULL);
		n++;
	}
	if (xs != NULL && bs != NULL && k > 0) {
		num_set(xs, k, set, sizeof(set));
		app(res->figure, sizeof(res->figure), " (%zu comparison%s at N = %s", n, n == 1 ? "" : "s", set);
		num_set(bs, k, set, sizeof(set));
		if (strcmp(set, "0") != 0)
			app(res->figure, sizeof(res->figure), "; %s B", set);
		app(res->figure, sizeof(res->figure), ")");
	}
	free(xs);
	free(bs);
}

static void eval_method(const struct eval *e, struct ibc_claim_result *res, int measured)
{
	const struct claim *c = e->c;
	size_t i, n = 0, ok = 0;
	char vals[256] = "", buf[128];

	switch (c->method) {
	case METH_SAME:
		snprintf(res->method, sizeof(res->method), "as the paper's: %s", c->paper_method);
		return;
	case METH_DIFFERS:
		snprintf(res->method, sizeof(res->method), "differs. The paper: %s. Here: %s", c->paper_method,
			 c->method_note);
		return;
	case METH_UNSTATED:
		snprintf(res->method, sizeof(res->method), "the paper does not say how it measured (%s). Here: %s",
			 c->paper_method, c->method_note);
		return;
	case METH_COND:
		break;
	}
	for (i = 0; i < e->np && measured; i++) {
		const char *v;
		int good;

		if (e->p[i].ex)
			continue;
		n++;
		good = cond_holds(e->ru, e->p[i].a, &c->mcond) && cond_holds(e->ru, e->p[i].b, &c->mcond);
		ok += good;
		v = row_get(e->ru, cond_holds(e->ru, e->p[i].a, &c->mcond) ? e->p[i].b : e->p[i].a, c->mcond.key,
			    buf, sizeof(buf));
		if (!good && v != NULL && strstr(vals, v) == NULL)
			app(vals, sizeof(vals), "%s%s", vals[0] ? ", " : "", v);
	}
	cond_text(&c->mcond, buf, sizeof(buf));
	if (!measured)
		snprintf(res->method, sizeof(res->method), "the paper: %s. Here the same is rows with %s: %s",
			 c->paper_method, buf, c->method_note);
	else if (ok == n)
		snprintf(res->method, sizeof(res->method), "as the paper's (every point has %s): %s", buf,
			 c->paper_method);
	else
		snprintf(res->method, sizeof(res->method),
			 "differs at %zu of %zu comparisons (%s %s there, not %s). The paper: %s. Here: %s", n - ok, n,
			 c->mcond.key, vals[0] ? vals : "absent", c->mcond.val, c->paper_method, c->method_note);
}

/* kendall's S of one series (pairs sorted by x): rising pairs - falling */
static int series_rising(const struct eval *e, int series, char *why, size_t cap)
{
	size_t i, j, first = (size_t)-1, last = 0, npts = 0;
	long sgn = 0;
	char a[32], b[32], name[160];

	for (i = 0; i < e->np; i++) {
		if (e->p[i].ex || e->p[i].series != series)
			continue;
		if (first == (size_t)-1)
			first = i;
		last = i;
		npts++;
		for (j = i + 1; j < e->np; j++)
			if (!e->p[j].ex && e->p[j].series == series && e->p[j].x > e->p[i].x)
				sgn += e->p[j].stat > e->p[i].stat ? 1 : e->p[j].stat < e->p[i].stat ? -1 : 0;
	}
	if (npts < MIN_TREND)
		return -1;
	if (sgn > 0 && e->p[last].stat > e->p[first].stat)
		return 1;
	pair_name(e, &e->p[first], name, sizeof(name));
	stat_text(e->c, e->p[first].stat, a, sizeof(a));
	stat_text(e->c, e->p[last].stat, b, sizeof(b));
	snprintf(why, cap, "%s does not grow with %s: %s at %g, %s at %g", name, e->c->along, a, e->p[first].x, b,
		 e->p[last].x);
	return 0;
}

static void side_text(const struct side *sd, char *buf, size_t cap)
{
	size_t i;
	char t[128];

	snprintf(buf, cap, "%s", sd->variant);
	for (i = 0; i < sd->nc; i++) {
		cond_text(&sd->c[i], t, sizeof(t));
		app(buf, cap, "%s%s", i ? ", " : "(", t);
	}
	if (sd->nc)
		app(buf, cap, ")");
}

/* every subject is compared with every reference by a comparison that
 * counts; else 0 and *why names the first pair of sides without one */
static int eval_each_pair(const struct eval *e, char *why, size_t cap)
{
	const struct claim *c = e->c;
	size_t s, f, i, n;
	char a[160], b[160];

	for (s = 0; s < c->nsubj; s++)
		for (f = c->nsubj; f < c->nsubj + c->nref; f++) {
			for (i = 0, n = 0; i < e->np; i++)
				n += e->p[i].s == (int)s && e->p[i].f == (int)f && e->p[i].ex == 0;
			if (n > 0)
				continue;
			side_text(&c->subj[s], a, sizeof(a));
			side_text(side_of(c, (int)f), b, sizeof(b));
			snprintf(why, cap, "no comparison of %s with %s counts (the claim is about both)", a, b);
			return 0;
		}
	return 1;
}

/* a trend: every pair of sides has a series of MIN_TREND points or more,
 * and each such series rises; else 0 with the verdict and reason set */
static int eval_trends(const struct eval *e, struct ibc_claim_result *res)
{
	const struct claim *c = e->c;
	size_t s, f, i, k;
	int ser, ns = 0;
	char why[512], a[160], b[160], set[128];

	for (i = 0; i < e->np; i++)
		ns = e->p[i].series + 1 > ns ? e->p[i].series + 1 : ns;
	for (s = 0; s < c->nsubj; s++)
		for (f = c->nsubj; f < c->nsubj + c->nref; f++) {
			int longest = 0;
			size_t *rows = malloc((e->np + 1) * sizeof(*rows));

			for (ser = 0; ser < ns; ser++) {
				int cnt = 0;

				for (i = 0; i < e->np; i++)
					cnt += e->p[i].series == ser && e->p[i].s == (int)s && e->p[i].f == (int)f;
				longest = cnt > longest ? cnt : longest;
			}
			if (longest >= MIN_TREND) {
				free(rows);
				continue;
			}
			for (i = 0, k = 0; rows != NULL && i < e->np; i++)
				if (!e->p[i].ex && e->p[i].s == (int)s && e->p[i].f == (int)f)
					rows[k++] = e->p[i].a;
			set[0] = '\0';
			if (rows != NULL)
				col_set(e->ru, rows, k, c->along, set, sizeof(set));
			free(rows);
			side_text(&c->subj[s], a, sizeof(a));
			side_text(side_of(c, (int)f), b, sizeof(b));
			res->verdict = IBC_CLAIM_NOT_MEASURABLE;
			snprintf(res->reason, sizeof(res->reason),
				 "a trend along %s needs %d points that count; %s against %s has %d (%s %s)", c->along,
				 MIN_TREND, a, b, longest, c->along, k ? set : "none");
			return 0;
		}
	for (ser = 0; ser < ns; ser++)
		if (series_rising(e, ser, why, sizeof(why)) == 0) {
			res->verdict = IBC_CLAIM_NOT_REPRODUCED;
			snprintf(res->reason, sizeof(res->reason), "%s", why);
			return 0;
		}
	return 1;
}

static int claim_eval(const struct claim *c, const struct run *ru, struct ibc_claim_result *res)
{
	struct eval e = { .c = c, .ru = ru };
	char why[512] = "", excl[384], t[64], pt[128];
	size_t i, nev = 0, nbad = 0, worst = 0, k;
	int rc = IBC_OK;

	memset(res, 0, sizeof(*res));
	res->id = c->id;
	res->paper = c->paper;
	res->section = c->section;
	res->claim = c->text;
	res->paper_figure = c->paper_figure;
	res->testbed = c->testbed;
	res->verdict = IBC_CLAIM_NOT_MEASURABLE;
	if (!eval_rows(&e, why, sizeof(why))) {
		snprintf(res->reason, sizeof(res->reason), "%s", why);
		goto free_eval;
	}
	if (c->hw_mcast && !has_hw_multicast(&e, why, sizeof(why))) {
		snprintf(res->reason, sizeof(res->reason), "%s", why);
		goto free_eval;
	}
	rc = eval_pairs(&e);
	if (rc != IBC_OK)
		goto free_eval;
	if (e.np == 0) {
		snprintf(res->reason, sizeof(res->reason),
			 "the subject and the reference share no point (same run, transport, N and size)");
		goto free_eval;
	}
	excluded_text(&e, excl, sizeof(excl));
	for (i = 0; i < e.np; i++)
		nev += e.p[i].ex == 0;
	if (nev == 0) {
		snprintf(res->reason, sizeof(res->reason), "no comparison counts: %s", excl);
		goto free_eval;
	}
	if (c->expect == EXP_BETTER_GROWING)
		eval_series(&e);
	eval_figure(&e, res);
	/* the decision: a comparison that counts and fails decides */
	for (i = 0; i < e.np; i++) {
		double v = e.p[i].stat;
		int good;

		if (e.p[i].ex)
			continue;
		if (c->expect == EXP_SIMILAR)
			good = c->stat == STAT_FACTOR ? v >= 1 / c->thr && v <= c->thr : fabs(v) <= c->thr;
		else
			good = v > c->thr;
		if (!good) {
			double d = c->expect == EXP_SIMILAR ? fabs(log(v > 0 ? v : 1e-300)) : -v;
			double dw = c->expect == EXP_SIMILAR ? fabs(log(e.p[worst].stat > 0 ? e.p[worst].stat : 1e-300))
							     : -e.p[worst].stat;

			if (nbad++ == 0 || d > dw)
				worst = i;
		}
	}
	if (nbad) {
		char name[160];

		res->verdict = IBC_CLAIM_NOT_REPRODUCED;
		pair_name(&e, &e.p[worst], name, sizeof(name));
		stat_text(c, e.p[worst].stat, t, sizeof(t));
		point_text(ru, &e.p[worst], pt, sizeof(pt));
		snprintf(res->reason, sizeof(res->reason), "%s at %zu of %zu comparisons; furthest: %s %s at %s",
			 c->expect == EXP_SIMILAR ? "not similar" : "not better", nbad, nev, name, t, pt);
	} else if (!eval_each_pair(&e, why, sizeof(why))) {
		snprintf(res->reason, sizeof(res->reason), "%s", why);
	} else if (c->expect != EXP_BETTER_GROWING || eval_trends(&e, res)) {
		res->verdict = IBC_CLAIM_REPRODUCED; /* eval_trends set the verdict when not */
	}
	if (excl[0] != '\0')
		app(res->reason, sizeof(res->reason), "%snot counted: %s", res->reason[0] ? "; " : "", excl);
free_eval:
	if (rc == IBC_OK)
		eval_method(&e, res, res->verdict != IBC_CLAIM_NOT_MEASURABLE);
	for (k = 0; k < 2 * MAX_SIDES; k++)
		free(e.rows[k]);
	free(e.p);
	return rc;
}

/* ------------------------------------------------------------ files ---- */

struct priv {
	struct ibc_csv_table *t[MAX_FILES];
	char *name[MAX_FILES];
	size_t n;
};

static int csv_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && strcmp(d->d_name + n - 4, ".csv") == 0 && d->d_name[0] != '.';
}

static int load_file(struct priv *pv, const char *path)
{
	size_t i;

	if (pv->n == MAX_FILES) {
		ibc_error("claims: more than %d claims files", MAX_FILES);
		return IBC_ERR_INVAL;
	}
	if (ibc_csv_read(path, &pv->t[pv->n]) != IBC_OK) {
		ibc_error("claims: %s does not parse", path);
		return IBC_ERR_INVAL;
	}
	pv->name[pv->n] = strdup(path);
	if (pv->name[pv->n] == NULL) {
		ibc_csv_table_free(pv->t[pv->n]);
		return IBC_ERR_NOMEM;
	}
	pv->n++;
	for (i = 0; i < sizeof(claim_cols) / sizeof(claim_cols[0]); i++) {
		if (ibc_csv_column(pv->t[pv->n - 1], claim_cols[i]) < 0) {
			ibc_error("claims: %s has no column %s", path, claim_cols[i]);
			return IBC_ERR_INVAL;
		}
	}
	return IBC_OK;
}

static int load_claims(struct priv *pv, const char *path)
{
	struct dirent **ents;
	struct stat st;
	char p[PATH_MAX];
	int k, i, rc = IBC_OK;

	if (stat(path, &st) != 0) {
		ibc_error("claims: %s: %s", path, strerror(errno));
		return IBC_ERR_INVAL;
	}
	if (!S_ISDIR(st.st_mode))
		return load_file(pv, path);
	k = scandir(path, &ents, csv_name, alphasort);
	if (k < 0) {
		ibc_error("claims: %s: %s", path, strerror(errno));
		return IBC_ERR_INVAL;
	}
	for (i = 0; i < k; i++) {
		snprintf(p, sizeof(p), "%s/%s", path, ents[i]->d_name);
		if (rc == IBC_OK)
			rc = load_file(pv, p);
		free(ents[i]);
	}
	free(ents);
	if (rc == IBC_OK && k == 0) {
		ibc_error("claims: %s holds no *.csv", path);
		rc = IBC_ERR_INVAL;
	}
	return rc;
}

static void priv_free(struct priv *pv)
{
	size_t i;

	for (i = 0; pv != NULL && i < pv->n; i++) {
		ibc_csv_table_free(pv->t[i]);
		free(pv->name[i]);
	}
	free(pv);
}

void ibc_claims_card_free(struct ibc_claims_card *c)
{
	if (c == NULL)
		return;
	priv_free(c->priv);
	free(c->r);
	free(c);
}

const char *ibc_claim_verdict_name(enum ibc_claim_verdict v)
{
	switch (v) {
	case IBC_CLAIM_REPRODUCED: return "reproduced";
	case IBC_CLAIM_NOT_REPRODUCED: return "not reproduced";
	case IBC_CLAIM_NOT_MEASURABLE: return "not measurable here";
	}
	return "?";
}

int ibc_claims_locate(const char *path, const char *bindir, char *buf)
{
	const char *p = path != NULL ? path : getenv("IBC_CLAIMS");
	char guess[PATH_MAX];

	if (p == NULL || p[0] == '\0') {
		snprintf(guess, sizeof(guess), "%s/../../results/claims", bindir != NULL ? bindir : ".");
		p = guess;
	}
	if (realpath(p, buf) == NULL) {
		ibc_error("claims: no claims at %s (--claims FILE|DIR or IBC_CLAIMS)", p);
		return IBC_ERR_NOTFOUND;
	}
	return IBC_OK;
}

int ibc_claims_eval(const char *dir, const char *claims, struct ibc_claims_card **out)
{
	struct ibc_claims_card *card = calloc(1, sizeof(*card));
	struct priv *pv = calloc(1, sizeof(*pv));
	struct claim *cl = NULL;
	struct run ru;
	size_t f, r, n = 0, i, j;
	int rc;

	*out = NULL;
	memset(&ru, 0, sizeof(ru));
	if (card == NULL || pv == NULL) {
		rc = IBC_ERR_NOMEM;
		goto free_card;
	}
	card->priv = pv;
	snprintf(card->source, sizeof(card->source), "%s", claims);
	rc = load_claims(pv, claims);
	for (f = 0; rc == IBC_OK && f < pv->n; f++)
		n += pv->t[f]->nrows - 1;
	if (rc == IBC_OK) {
		cl = calloc(n + 1, sizeof(*cl));
		card->r = calloc(n + 1, sizeof(*card->r));
		if (cl == NULL || card->r == NULL)
			rc = IBC_ERR_NOMEM;
	}
	for (f = 0, i = 0; rc == IBC_OK && f < pv->n; f++)
		for (r = 0; rc == IBC_OK && r + 1 < pv->t[f]->nrows; r++, i++)
			rc = claim_parse(pv->t[f], r, pv->name[f], &cl[i]);
	for (i = 0; rc == IBC_OK && i < n; i++)
		for (j = 0; j < i; j++)
			if (strcmp(cl[i].id, cl[j].id) == 0) {
				rc = claim_bad(&cl[i], "the id is taken by an earlier claim:", cl[j].id);
				break;
			}
	if (rc == IBC_OK)
		rc = run_open(&ru, dir);
	for (i = 0; rc == IBC_OK && i < n; i++) {
		rc = claim_eval(&cl[i], &ru, &card->r[i]);
		card->count[card->r[i].verdict] += rc == IBC_OK;
	}
	card->n = n;
	run_close(&ru);
	free(cl);
	if (rc != IBC_OK)
		goto free_card;
	*out = card;
	return IBC_OK;
free_card:
	if (card != NULL)
		card->priv = NULL;
	ibc_claims_card_free(card);
	priv_free(pv);
	return rc == IBC_ERR_NOMEM ? rc : IBC_ERR_INVAL;
}

int ibc_harness_claims(const struct ibc_claims_opts *o)
{
	struct ibc_claims_card *card;
	char path[PATH_MAX];
	size_t i;
	int rc = ibc_claims_locate(o->claims, o->bindir, path);

	if (rc != IBC_OK)
		return IBC_ERR_INVAL;
	rc = ibc_claims_eval(o->dir, path, &card);
	if (rc != IBC_OK)
		return rc;
	printf("1..%zu\n", card->n);
	for (i = 0; i < card->n; i++) {
		const struct ibc_claim_result *r = &card->r[i];

		if (r->verdict == IBC_CLAIM_NOT_MEASURABLE) {
			printf("ok %zu - %s (%s, %s) # SKIP not measurable here: %s\n", i + 1, r->id, r->paper,
			       r->section, r->reason);
		} else {
			printf("%s %zu - %s (%s, %s): %s: %s (paper: %s)\n",
			       r->verdict == IBC_CLAIM_REPRODUCED ? "ok" : "not ok", i + 1, r->id, r->paper,
			       r->section, ibc_claim_verdict_name(r->verdict), r->figure, r->paper_figure);
			if (r->reason[0] != '\0')
				printf("# %s\n", r->reason);
		}
		printf("# claim: %s\n# method: %s\n", r->claim, r->method);
	}
	printf("# %zu reproduced, %zu not reproduced, %zu not measurable here (claims: %s; rows: %s)\n",
	       card->count[IBC_CLAIM_REPRODUCED], card->count[IBC_CLAIM_NOT_REPRODUCED],
	       card->count[IBC_CLAIM_NOT_MEASURABLE], card->source, o->dir);
	rc = card->count[IBC_CLAIM_NOT_REPRODUCED] ? IBC_ERR_VALIDATE : IBC_OK;
	ibc_claims_card_free(card);
	return rc;
}
