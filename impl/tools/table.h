/* A small table of text cells, built once and rendered as aligned text (the
 * summaries on stdout) or as HTML (ibchar report).  A column has a heading
 * and a text width (negative: left-aligned); cells are appended row by row. */
#ifndef IBC_TOOLS_TABLE_H
#define IBC_TOOLS_TABLE_H

#include <stddef.h>
#include <stdio.h>

struct ibc_tab {
	char *title;          /* "" for none */
	char *note;           /* a line under the table (a legend), NULL for none */
	size_t ncols, nrows;  /* nrows: rows started */
	char **head;
	int *width;
	char **cell;          /* nrows * ncols; a cell not set is NULL ("") */
	size_t cap, at;       /* rows allocated; cells set in the last row */
};

/* characters that may follow a number in a cell as a mark (summary.h) */
#define IBC_TAB_MARKS "*?"

/* NULL when out of memory; title may be NULL */
struct ibc_tab *ibc_tab_new(const char *title);
/* before the first row */
int ibc_tab_col(struct ibc_tab *t, const char *head, int width);
int ibc_tab_row(struct ibc_tab *t);
/* the next cell of the row begun last (cells past the last column are dropped) */
int ibc_tab_cell(struct ibc_tab *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *ibc_tab_get(const struct ibc_tab *t, size_t row, size_t col);
/* the note printed under the table (replaces an earlier one) */
int ibc_tab_note(struct ibc_tab *t, const char *note);
/* the title line (after a blank line) when there is one, the heading, the
 * rows, the note */
void ibc_tab_text(FILE *f, const struct ibc_tab *t);
/* <table> with a <caption> from the title and the note as its footer; cells
 * that read as numbers are right-aligned (class "n"), marks after a number
 * (IBC_TAB_MARKS: "12.5*") set apart as <sup class="mark"> */
void ibc_tab_html(FILE *f, const struct ibc_tab *t);
void ibc_tab_free(struct ibc_tab *t);

/* s with &, <, >, " escaped (HTML text and attributes; XML too) */
void ibc_html_puts(FILE *f, const char *s);

#endif
