/* The spec of ibchar accept (see accept.h): its "run ARGS" and "check SUITE
 * VARIANT [K=V...]: METRIC OP BOUND" lines parsed into struct acc, and the
 * small helpers (words, growing arrays) accept.c uses too.  See
 * accept_priv.h for how the accept files call. */
#include "tools/accept_priv.h"
#include "tools/accept.h"
#include "core/opt.h"
#include "core/status.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const metrics[] = { "p50_us", "mean_us", "min_us", "p99_us", "max_us", "mbps",
					"b2b_p50_us", NULL };
static const char *const sel_keys[] = { "impl", "xport", "ranks", "bytes", "fanin", NULL };

static int in_list(const char *const *l, const char *s)
{
	for (; *l != NULL; l++)
		if (strcmp(*l, s) == 0)
			return 1;
	return 0;
}

int ibc_accept_words_split(char *s, char **w, int cap)
{
	int n = 0;
	char *save = NULL, *t;

	for (t = strtok_r(s, " \t", &save); t != NULL && n < cap; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	return n;
}

static int bad(const char *spec, int line, const char *text, const char *why)
{
	fprintf(stderr, "ibchar accept: %s:%d: %s: %s\n", spec, line, why, text);
	return IBC_ERR_INVAL;
}

/* ---------------------------------------------------------- the spec ---- */

/* KEY=VALUE of a selector or a reference's override, VALUE as results.csv
 * writes it (bytes from K/M/G, ranks and fan-in as plain integers). */
static int keyval_parse(char *word, char *key, size_t kcap, char *val, size_t vcap, const char **why)
{
	char *eq = strchr(word, '=');
	size_t b;
	long v;

	if (eq == NULL || eq[1] == '\0') {
		*why = "rows are selected by KEY=VALUE";
		return IBC_ERR_INVAL;
	}
	*eq = '\0';
	if (!in_list(sel_keys, word)) {
		*why = "a KEY is impl, xport, ranks, bytes or fanin";
		return IBC_ERR_INVAL;
	}
	snprintf(key, kcap, "%s", word);
	if (strcmp(word, "bytes") == 0) {
		if (ibc_opt_parse_size(eq + 1, &b) != IBC_OK) {
			*why = "bad bytes";
			return IBC_ERR_INVAL;
		}
		snprintf(val, vcap, "%zu", b);
	} else if (strcmp(word, "ranks") == 0 || strcmp(word, "fanin") == 0) {
		if (ibc_opt_parse_long(eq + 1, &v) != IBC_OK || v < 1) {
			*why = "ranks and fanin are integers >= 1";
			return IBC_ERR_INVAL;
		}
		snprintf(val, vcap, "%ld", v);
	} else {
		snprintf(val, vcap, "%s", eq + 1);
	}
	return IBC_OK;
}

/* The KEY=VALUE words after a reference (w[0..n)). */
static int overrides_parse(const char *spec, int line, char **w, int n, struct check *c)
{
	const char *why = NULL;
	int i, k;

	for (i = 0; i < n; i++) {
		if (c->nov == MAX_SEL)
			return bad(spec, line, c->text, "too many KEY=VALUE after the reference");
		if (keyval_parse(w[i], c->ov_key[c->nov], sizeof(c->ov_key[0]), c->ov_val[c->nov],
				 sizeof(c->ov_val[0]), &why) != IBC_OK)
			return bad(spec, line, c->text, why);
		if ((c->ref == REF_ROW && strcmp(c->ov_key[c->nov], "bytes") == 0) ||
		    (c->ref == REF_FIELD && strcmp(c->ov_key[c->nov], c->ref_key) == 0))
			return bad(spec, line, c->text, "the reference names that KEY already");
		for (k = 0; k < c->nov; k++)
			if (strcmp(c->ov_key[k], c->ov_key[c->nov]) == 0)
				return bad(spec, line, c->text, "a KEY given twice after the reference");
		c->nov++;
	}
	return IBC_OK;
}

/* "check SUITE VARIANT [K=V...]: METRIC OP BOUND" (the words after check) */
static int check_parse(const char *spec, int line, char *rest, struct check *c)
{
	char *colon = strchr(rest, ':'), *w[MAX_WORDS];
	const char *why = NULL;
	size_t b;
	int n, i;

	snprintf(c->text, sizeof(c->text), "%s", rest);
	c->line = line;
	if (colon == NULL)
		return bad(spec, line, c->text, "no ':' between the rows and the threshold");
	*colon = '\0';
	n = ibc_accept_words_split(rest, w, MAX_WORDS);
	if (n < 2)
		return bad(spec, line, c->text, "a check names a suite and a variant");
	snprintf(c->suite, sizeof(c->suite), "%s", w[0]);
	snprintf(c->variant, sizeof(c->variant), "%s", w[1]);
	for (i = 2; i < n; i++) {
		if (c->nsel == MAX_SEL)
			return bad(spec, line, c->text, "too many KEY=VALUE");
		if (keyval_parse(w[i], c->sel_key[c->nsel], sizeof(c->sel_key[0]), c->sel_val[c->nsel],
				 sizeof(c->sel_val[0]), &why) != IBC_OK)
			return bad(spec, line, c->text, why);
		c->nsel++;
	}
	n = ibc_accept_words_split(colon + 1, w, MAX_WORDS);
	if (n < 3)
		return bad(spec, line, c->text, "the threshold is METRIC OP BOUND");
	for (i = 0; i < n; i++) {
		size_t used = strlen(c->threshold);

		snprintf(c->threshold + used, sizeof(c->threshold) - used, "%s%s", i ? " " : "", w[i]);
	}
	if (!in_list(metrics, w[0]))
		return bad(spec, line, c->text,
			   "METRIC is p50_us, mean_us, min_us, p99_us, max_us, mbps or b2b_p50_us");
	snprintf(c->metric, sizeof(c->metric), "%s", w[0]);
	if (strcmp(w[1], "<=") != 0 && strcmp(w[1], "<") != 0 && strcmp(w[1], ">=") != 0 && strcmp(w[1], ">") != 0)
		return bad(spec, line, c->text, "OP is <=, <, >= or >");
	snprintf(c->op, sizeof(c->op), "%s", w[1]);
	if (ibc_opt_parse_double(w[2], &c->factor) != IBC_OK || !isfinite(c->factor))
		return bad(spec, line, c->text, "BOUND starts with a number");
	if (n == 3) {
		c->ref = REF_NONE;
		return IBC_OK;
	}
	if (strcmp(w[3], "*") != 0 || n < 5)
		return bad(spec, line, c->text, "a relative BOUND is F * REF");
	if (n == 5 && strcmp(w[4], "probe") == 0) {
		c->ref = REF_PROBE;
		return IBC_OK;
	}
	if (strncmp(w[4], "impl=", 5) == 0 || strncmp(w[4], "variant=", 8) == 0) {
		char *eq = strchr(w[4], '=');

		*eq = '\0';
		if (eq[1] == '\0')
			return bad(spec, line, c->text, "impl=X or variant=X names X");
		c->ref = REF_FIELD;
		snprintf(c->ref_key, sizeof(c->ref_key), "%s", w[4]);
		snprintf(c->ref_val, sizeof(c->ref_val), "%s", eq + 1);
		return overrides_parse(spec, line, w + 5, n - 5, c);
	}
	if (n >= 7 && strchr(w[4], '.') != NULL && strcmp(w[5], "at") == 0) {
		char *dot = strchr(w[4], '.');

		*dot = '\0';
		c->ref = REF_ROW;
		snprintf(c->ref_suite, sizeof(c->ref_suite), "%s", w[4]);
		snprintf(c->ref_variant, sizeof(c->ref_variant), "%s", dot + 1);
		if (ibc_opt_parse_size(w[6], &b) != IBC_OK)
			return bad(spec, line, c->text, "bad SIZE after 'at'");
		c->ref_bytes = (long long)b;
		return overrides_parse(spec, line, w + 7, n - 7, c);
	}
	return bad(spec, line, c->text, "REF is probe, impl=X, variant=X or SUITE.VARIANT at SIZE");
}

/* "run ARGS": accept gives --out (and --dry-run) itself. */
static int run_parse(const char *spec, int line, const char *args, struct run_line *rl)
{
	char copy[1024], *w[MAX_WORDS];
	int n, i;

	rl->line = line;
	if (snprintf(rl->args, sizeof(rl->args), "%s", args) >= (int)sizeof(rl->args))
		return bad(spec, line, args, "a run line is at most 1023 characters");
	snprintf(copy, sizeof(copy), "%s", args);
	n = ibc_accept_words_split(copy, w, MAX_WORDS);
	if (n == MAX_WORDS)
		return bad(spec, line, args, "a run line has too many words");
	for (i = 0; i < n; i++)
		if (strcmp(w[i], "--out") == 0 || strncmp(w[i], "--out=", 6) == 0 || strncmp(w[i], "-o", 2) == 0 ||
		    strcmp(w[i], "--dry-run") == 0)
			return bad(spec, line, args, "a run line takes no --out or --dry-run (accept gives them)");
	return IBC_OK;
}

/* A spec line without its comment, newline and leading blanks. */
static char *spec_line(char *line)
{
	char *hash = strchr(line, '#');

	if (hash != NULL)
		*hash = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

int ibc_accept_array_grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n < *cap)
		return IBC_OK;
	q = realloc(*p, (*cap ? 2 * *cap : 16) * size);
	if (q == NULL)
		return IBC_ERR_NOMEM;
	*p = q;
	*cap = *cap ? 2 * *cap : 16;
	return IBC_OK;
}

int ibc_accept_spec_read(struct acc *a)
{
	const char *spec = a->o->spec;
	char line[1024];
	int ln = 0, rc = IBC_OK;
	FILE *f = fopen(spec, "r");

	if (f == NULL) {
		fprintf(stderr, "ibchar accept: cannot read the spec %s: %s\n", spec, strerror(errno));
		return IBC_ERR_INVAL;
	}
	while (rc == IBC_OK && fgets(line, sizeof(line), f) != NULL) {
		char *s = spec_line(line);

		ln++;
		if (*s == '\0')
			continue;
		if (strncmp(s, "run ", 4) == 0 || strncmp(s, "run\t", 4) == 0 || strcmp(s, "run") == 0) {
			rc = ibc_accept_array_grow((void **)&a->rl, &a->rcap, a->nr, sizeof(*a->rl));
			if (rc == IBC_OK)
				rc = run_parse(spec, ln, s + 3, &a->rl[a->nr++]);
			continue;
		}
		if (strncmp(s, "check ", 6) != 0 && strncmp(s, "check\t", 6) != 0) {
			rc = bad(spec, ln, s, "a line is 'run ARGS' or 'check ...'");
			break;
		}
		rc = ibc_accept_array_grow((void **)&a->cs, &a->ccap, a->nc, sizeof(*a->cs));
		if (rc != IBC_OK)
			break;
		memset(&a->cs[a->nc], 0, sizeof(a->cs[0]));
		rc = check_parse(spec, ln, s + 6, &a->cs[a->nc]);
		if (rc == IBC_OK)
			a->nc++;
	}
	fclose(f);
	if (rc == IBC_OK && a->nc == 0)
		rc = bad(spec, ln, "", "no check in the spec");
	return rc;
}

