/* The scorecard's view of a run: results.csv and meta.csv opened and
 * checked, a row's cells, conditions and metric, and the text of value sets
 * ("2..16", "a, b").  See claims_priv.h for how the claims files call. */
#include "tools/claims_priv.h"

#include "core/csv.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- rows ---- */

/* a column's cell, else the value of key in the row's extra; NULL when absent */
const char *ibc_claims_row_get(const struct run *ru, size_t r, const char *key, char *buf, size_t cap)
{
	if (ibc_csv_column(ru->t, key) >= 0)
		return ibc_csv_cell(ru->t, r, key);
	return ibc_csv_extra_get(ibc_csv_cell(ru->t, r, "extra"), key, buf, cap);
}

int ibc_claims_row_is_model(const struct run *ru, size_t r)
{
	return strcmp(ibc_csv_str(ru->t, r, "impl"), "model") == 0;
}

int ibc_claims_cond_holds(const struct run *ru, size_t r, const struct cond *c)
{
	char buf[128];
	const char *v = ibc_claims_row_get(ru, r, c->key, buf, sizeof(buf));
	double x;

	if (v == NULL)
		return c->op == OP_NE;
	if (c->pow2) {
		long long n;
		int p;

		if (!ibc_claims_num_parse(v, &x) || x < 1 || x != floor(x))
			return c->op == OP_NE;
		n = (long long)x;
		p = (n & (n - 1)) == 0;
		return c->op == OP_EQ ? p : !p;
	}
	if (c->isnum && ibc_claims_num_parse(v, &x)) {
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
int ibc_claims_row_metric(const struct run *ru, size_t r, const struct claim *c, double *v)
{
	char buf[64];
	const char *s;
	double b, p;

	if (c->rate) {
		if (!ibc_claims_num_parse(ibc_csv_cell(ru->t, r, "bytes"), &b) ||
		    !ibc_claims_num_parse(ibc_csv_cell(ru->t, r, "p50_us"), &p))
			return 0;
		if (p <= 0 || b <= 0)
			return 0;
		*v = b / p;
		return 1;
	}
	s = ibc_claims_row_get(ru, r, c->metric, buf, sizeof(buf));
	if (s == NULL || s[0] == '\0')
		return 0;
	if (!ibc_claims_num_parse(s, v) || *v < 0) {
		ibc_error("claims: %s/results.csv line %zu: %s '%s' is not a time", ru->dir, r + 2, c->metric, s);
		return -1;
	}
	return 1;
}

static int whole_number(const char *s)
{
	double x;

	return ibc_claims_num_parse(s, &x) && x >= 0 && x == floor(x);
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
		if (ibc_claims_row_is_model(ru, r))
			continue;
		if (!whole_number(ibc_csv_cell(ru->t, r, "iters")))
			return damaged(ru, r, "iters", "a count of samples");
		if (!ibc_claims_num_parse(ibc_csv_cell(ru->t, r, "p50_us"), &x) || x < 0)
			return damaged(ru, r, "p50_us", "a time");
	}
	return IBC_OK;
}

int ibc_claims_run_open(struct run *ru, const char *dir)
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

void ibc_claims_run_close(struct run *ru)
{
	if (ru->t != NULL)
		ibc_csv_table_free(ru->t);
	if (ru->meta != NULL)
		ibc_csv_table_free(ru->meta);
}

/* the distinct values meta.csv gives key, "a, b" */
void ibc_claims_meta_values(const struct run *ru, const char *key, char *buf, size_t cap)
{
	size_t r, len = 0;

	buf[0] = '\0';
	for (r = 0; r + 1 < ru->meta->nrows && len + 1 < cap; r++) {
		const char *v = ibc_csv_cell(ru->meta, r, "value");
		const char *at;

		if (strcmp(ibc_csv_str(ru->meta, r, "key"), key) != 0 || v[0] == '\0')
			continue;
		at = strstr(buf, v);
		if (at != NULL && (at == buf || at[-1] == ' ') && (at[strlen(v)] == '\0' || at[strlen(v)] == ','))
			continue;
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", v);
	}
}

/* ----------------------------------------------------------- text ---- */

void ibc_claims_text_append(char *buf, size_t cap, const char *fmt, ...)
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
void ibc_claims_num_set(double *v, size_t n, char *buf, size_t cap)
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
			ibc_claims_text_append(buf, cap, "%s%g", i ? ", " : "", v[i]);
}

/* the distinct values of column key over rows[0..n-1], as ibc_claims_num_set or "a, b" */
void ibc_claims_col_set(const struct run *ru, const size_t *rows, size_t n, const char *key, char *buf, size_t cap)
{
	double *v = malloc((n + 1) * sizeof(*v));
	char tmp[128];
	size_t i, k = 0;
	int num = 1;

	buf[0] = '\0';
	for (i = 0; i < n && v != NULL; i++) {
		const char *s = ibc_claims_row_get(ru, rows[i], key, tmp, sizeof(tmp));

		if (s == NULL || s[0] == '\0')
			continue;
		if (!ibc_claims_num_parse(s, &v[k])) {
			num = 0;
			if (strstr(buf, s) == NULL)
				ibc_claims_text_append(buf, cap, "%s%s", buf[0] ? ", " : "", s);
			continue;
		}
		k++;
	}
	if (num && v != NULL)
		ibc_claims_num_set(v, k, buf, cap);
	if (buf[0] == '\0')
		snprintf(buf, cap, "none");
	free(v);
}

