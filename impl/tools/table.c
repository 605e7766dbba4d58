/* Text and HTML tables: see table.h. */
#define _GNU_SOURCE
#include "tools/table.h"

#include "core/status.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct ibc_tab *ibc_tab_new(const char *title)
{
	struct ibc_tab *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->title = strdup(title != NULL ? title : "");
	if (t->title == NULL) {
		free(t);
		return NULL;
	}
	return t;
}

int ibc_tab_col(struct ibc_tab *t, const char *head, int width)
{
	char **h;
	int *w;

	if (t->nrows > 0)
		return IBC_ERR_INVAL;
	h = realloc(t->head, (t->ncols + 1) * sizeof(*h));
	if (h == NULL)
		return IBC_ERR_NOMEM;
	t->head = h;
	w = realloc(t->width, (t->ncols + 1) * sizeof(*w));
	if (w == NULL)
		return IBC_ERR_NOMEM;
	t->width = w;
	h[t->ncols] = strdup(head);
	if (h[t->ncols] == NULL)
		return IBC_ERR_NOMEM;
	w[t->ncols++] = width;
	return IBC_OK;
}

int ibc_tab_row(struct ibc_tab *t)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		char **c = realloc(t->cell, cap * t->ncols * sizeof(*c));

		if (c == NULL)
			return IBC_ERR_NOMEM;
		memset(c + t->cap * t->ncols, 0, (cap - t->cap) * t->ncols * sizeof(*c));
		t->cell = c;
		t->cap = cap;
	}
	t->nrows++;
	t->at = 0;
	return IBC_OK;
}

int ibc_tab_cell(struct ibc_tab *t, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (t->nrows == 0 || t->at >= t->ncols)
		return IBC_ERR_INVAL;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return IBC_ERR_NOMEM;
	t->cell[(t->nrows - 1) * t->ncols + t->at++] = s;
	return IBC_OK;
}

int ibc_tab_note(struct ibc_tab *t, const char *note)
{
	char *n = strdup(note);

	if (n == NULL)
		return IBC_ERR_NOMEM;
	free(t->note);
	t->note = n;
	return IBC_OK;
}

const char *ibc_tab_get(const struct ibc_tab *t, size_t row, size_t col)
{
	const char *s;

	if (row >= t->nrows || col >= t->ncols)
		return "";
	s = t->cell[row * t->ncols + col];
	return s != NULL ? s : "";
}

static void text_line(FILE *f, const struct ibc_tab *t, size_t row)
{
	size_t c;

	for (c = 0; c < t->ncols; c++)
		fprintf(f, "%s%*s", c ? " " : "", t->width[c],
			row == (size_t)-1 ? t->head[c] : ibc_tab_get(t, row, c));
	fputc('\n', f);
}

void ibc_tab_text(FILE *f, const struct ibc_tab *t)
{
	size_t r;

	if (t->title[0] != '\0')
		fprintf(f, "\n%s\n", t->title);
	text_line(f, t, (size_t)-1);
	for (r = 0; r < t->nrows; r++)
		text_line(f, t, r);
	if (t->note != NULL)
		fprintf(f, "  %s\n", t->note);
}

void ibc_html_puts(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* 1 when s reads as a number (or is empty or "-"); *marks: where the
 * marks after the number begin (the end of s when none) */
static int numeric(const char *s, const char **marks)
{
	char *end;

	*marks = s + strlen(s);
	if (s[0] == '\0' || strcmp(s, "-") == 0)
		return 1;
	(void)strtod(s, &end);
	if (end == s || end[strspn(end, IBC_TAB_MARKS)] != '\0')
		return 0;
	*marks = end;
	return 1;
}

void ibc_tab_html(FILE *f, const struct ibc_tab *t)
{
	size_t r, c;

	fputs("<table>", f);
	if (t->title[0] != '\0') {
		fputs("<caption>", f);
		ibc_html_puts(f, t->title);
		fputs("</caption>", f);
	}
	fputs("\n<thead><tr>", f);
	for (c = 0; c < t->ncols; c++) {
		fputs("<th>", f);
		ibc_html_puts(f, t->head[c]);
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (r = 0; r < t->nrows; r++) {
		fputs("<tr>", f);
		for (c = 0; c < t->ncols; c++) {
			const char *s = ibc_tab_get(t, r, c), *mk;
			int num = numeric(s, &mk);

			fputs(t->width[c] < 0 || !num ? "<td>" : "<td class=\"n\">", f);
			if (num && *mk != '\0') {
				fprintf(f, "%.*s<sup class=\"mark\">", (int)(mk - s), s);
				ibc_html_puts(f, mk);
				fputs("</sup>", f);
			} else {
				ibc_html_puts(f, s);
			}
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody>", f);
	if (t->note != NULL) {
		fprintf(f, "<tfoot><tr><td class=\"note\" colspan=\"%zu\">", t->ncols);
		ibc_html_puts(f, t->note);
		fputs("</td></tr></tfoot>", f);
	}
	fputs("</table>\n", f);
}

void ibc_tab_free(struct ibc_tab *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cell[i]);
	for (i = 0; i < t->ncols; i++)
		free(t->head[i]);
	free(t->cell);
	free(t->head);
	free(t->width);
	free(t->title);
	free(t->note);
	free(t);
}
