/* The claim rule language of the scorecard: a row of a claims file (its
 * subject and reference sides, selectors, metric, statistic, expectation and
 * method) parsed into a struct claim, and a condition's text.  See claims.h
 * for the vocabulary and claims_priv.h for how the claims files call. */
#include "tools/claims_priv.h"

#include "core/csv.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ rules ---- */

static const char *const op_text[] = { "=", "!=", "<", "<=", ">", ">=" };

/* a number with an optional K, M or G (x1024); the whole of s */
int ibc_claims_num_parse(const char *s, double *out)
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
	c->isnum = ibc_claims_num_parse(v, &c->num);
	if (c->pow2 && c->op != OP_EQ && c->op != OP_NE)
		return 0;
	return c->pow2 || c->isnum || c->op == OP_EQ || c->op == OP_NE;
}

void ibc_claims_cond_text(const struct cond *c, char *buf, size_t cap)
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

int ibc_claims_rule_bad(const struct claim *c, const char *what, const char *val)
{
	ibc_error("claims: %s line %zu: claim '%s': %s '%s'", c->file, c->line, c->id, what, val);
	return IBC_ERR_INVAL;
}

int ibc_claims_rule_parse(const struct ibc_csv_table *t, size_t r, const char *file, struct claim *c)
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
		return ibc_claims_rule_bad(c, "id, paper, claim and suite are needed; got id", c->id);
	if (!parse_sides(ibc_csv_cell(t, r, "subject"), c->subj, &c->nsubj))
		return ibc_claims_rule_bad(c, "bad subject", ibc_csv_cell(t, r, "subject"));
	if (!parse_sides(ibc_csv_cell(t, r, "reference"), c->ref, &c->nref))
		return ibc_claims_rule_bad(c, "bad reference", ibc_csv_cell(t, r, "reference"));
	if (!parse_conds(ibc_csv_cell(t, r, "select"), ';', c->sel, &c->nsel))
		return ibc_claims_rule_bad(c, "bad select", ibc_csv_cell(t, r, "select"));
	if (c->metric[0] == '\0' || strspn(c->metric, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
					    strlen(c->metric))
		return ibc_claims_rule_bad(c, "bad metric", c->metric);
	c->rate = strcmp(c->metric, "mbps") == 0;
	if (!c->rate && (strlen(c->metric) < 4 || strcmp(c->metric + strlen(c->metric) - 3, "_us") != 0))
		return ibc_claims_rule_bad(c, "metric is a time (NAME_us) or mbps, not", c->metric);
	v = ibc_csv_cell(t, r, "stat");
	if (strcmp(v, "factor") == 0)
		c->stat = STAT_FACTOR;
	else if (strcmp(v, "gap") == 0)
		c->stat = STAT_GAP;
	else
		return ibc_claims_rule_bad(c, "stat is factor or gap, not", v);
	v = ibc_csv_cell(t, r, "expect");
	if (strcmp(v, "better") == 0)
		c->expect = EXP_BETTER;
	else if (strcmp(v, "better-growing") == 0)
		c->expect = EXP_BETTER_GROWING;
	else if (strcmp(v, "similar") == 0)
		c->expect = EXP_SIMILAR;
	else
		return ibc_claims_rule_bad(c, "expect is better, better-growing or similar, not", v);
	v = ibc_csv_cell(t, r, "threshold");
	if (v[0] == '\0' && c->expect == EXP_SIMILAR)
		return ibc_claims_rule_bad(c, "similar needs a threshold; got", v);
	if (v[0] == '\0')
		c->thr = c->stat == STAT_FACTOR ? 1.0 : 0.0;
	else if (!ibc_claims_num_parse(v, &c->thr) || c->thr < 0 ||
		 (c->expect == EXP_SIMILAR && c->stat == STAT_FACTOR && c->thr < 1))
		return ibc_claims_rule_bad(c, "bad threshold", v);
	if (c->expect == EXP_BETTER_GROWING &&
	    strcmp(c->along, "ranks") != 0 && strcmp(c->along, "ppn") != 0 && strcmp(c->along, "nodes") != 0 &&
	    strcmp(c->along, "bytes") != 0 && strcmp(c->along, "fanin") != 0)
		return ibc_claims_rule_bad(c, "along (ranks, ppn, nodes, bytes or fanin) is needed for a trend; got", c->along);
	v = ibc_csv_cell(t, r, "needs");
	if (strcmp(v, "hw-multicast") == 0)
		c->hw_mcast = 1;
	else if (v[0] != '\0')
		return ibc_claims_rule_bad(c, "needs is hw-multicast or empty, not", v);
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
		return ibc_claims_rule_bad(c, "method is same, differs, unstated or KEY=VALUE, not", v);
	return IBC_OK;
}
