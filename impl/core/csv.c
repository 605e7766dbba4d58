/* CSV writing and reading through libcsv.  See core/csv.h.
 *
 * libcsv's own header is <csv.h>; ours is "core/csv.h".  libcsv exports
 * csv_*, so everything here is ibc_csv_* or static. */
#include "core/csv.h"
#include "core/log.h"
#include "core/status.h"

#include <csv.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_SHOW_MAX 200

struct ibc_csv_writer {
	FILE *fp;
	char *path;
	size_t ncols;
	char *row;      /* the row being formatted, written with one fwrite */
	size_t row_cap;
};

/* ------------------------------------------------------------ parsing ---- */

struct parse_ctx {
	const char *path;
	char **cells;
	size_t ncells, cap;
	size_t ncols;       /* 0 until the header row ends */
	size_t nrows;       /* complete rows */
	size_t row_fields;  /* fields of the row in progress */
	size_t max_rows;    /* stop after this many rows (0: no limit) */
	size_t line;        /* physical line being fed, 1-based */
	size_t rec_line;    /* first physical line of the record in progress */
	int rec_new;        /* the next line fed starts a record */
	const char *cur;    /* text of the line being fed, for messages */
	size_t cur_len;
	int status;
	int done;
};

static int no_space(unsigned char c)
{
	(void)c;
	return 0; /* keep leading/trailing blanks of unquoted fields */
}

static void field_cb(void *s, size_t len, void *data)
{
	struct parse_ctx *c = data;
	char *cell;

	if (c->status || c->done)
		return;
	if (c->ncells == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		char **cells = realloc(c->cells, cap * sizeof(*cells));

		if (!cells) {
			ibc_error("csv: %s: out of memory at line %zu", c->path, c->line);
			c->status = IBC_ERR_NOMEM;
			return;
		}
		c->cells = cells;
		c->cap = cap;
	}
	cell = malloc(len + 1);
	if (!cell) {
		ibc_error("csv: %s: out of memory at line %zu", c->path, c->line);
		c->status = IBC_ERR_NOMEM;
		return;
	}
	if (len)
		memcpy(cell, s, len);
	cell[len] = '\0';
	c->cells[c->ncells++] = cell;
	c->row_fields++;
}

static void row_cb(int term, void *data)
{
	struct parse_ctx *c = data;

	(void)term;
	if (c->status || c->done)
		return;
	if (c->nrows == 0) {
		c->ncols = c->row_fields;
	} else if (c->row_fields != c->ncols) {
		int show = c->cur_len > LINE_SHOW_MAX ? LINE_SHOW_MAX : (int)c->cur_len;

		while (show > 0 && (c->cur[show - 1] == '\n' || c->cur[show - 1] == '\r'))
			show--;
		if (c->rec_line != c->line)
			ibc_error("csv: %s:%zu-%zu: row has %zu fields, the header has %zu: '%.*s'",
				  c->path, c->rec_line, c->line, c->row_fields, c->ncols, show,
				  c->cur ? c->cur : "");
		else
			ibc_error("csv: %s:%zu: row has %zu fields, the header has %zu: '%.*s'",
				  c->path, c->line, c->row_fields, c->ncols, show,
				  c->cur ? c->cur : "");
		c->status = IBC_ERR_PROTO;
		return;
	}
	c->nrows++;
	c->row_fields = 0;
	c->rec_new = 1;
	if (c->max_rows && c->nrows >= c->max_rows)
		c->done = 1;
}

static void parse_ctx_cells_free(struct parse_ctx *c)
{
	for (size_t i = 0; i < c->ncells; i++)
		free(c->cells[i]);
	free(c->cells);
	c->cells = NULL;
	c->ncells = c->cap = 0;
}

/* Parses fp line by line into c (at most c->max_rows rows when set). */
static int parse_stream(FILE *fp, struct parse_ctx *c)
{
	struct csv_parser p;
	char *line = NULL;
	size_t line_cap = 0;
	ssize_t len;

	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
		ibc_error("csv: %s: cannot initialise libcsv", c->path);
		return IBC_ERR_NOMEM;
	}
	csv_set_space_func(&p, no_space);
	c->rec_new = 1;
	while (!c->status && !c->done && (len = getline(&line, &line_cap, fp)) > 0) {
		c->line++;
		if (c->rec_new) {
			c->rec_line = c->line;
			c->rec_new = 0;
		}
		c->cur = line;
		c->cur_len = (size_t)len;
		if (c->line == 1 && len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
			/* a UTF-8 byte order mark (spreadsheet exports) is not data */
			c->cur += 3;
			c->cur_len -= 3;
		}
		if (csv_parse(&p, c->cur, c->cur_len, field_cb, row_cb, c) != c->cur_len &&
		    !c->status) {
			int show = c->cur_len > LINE_SHOW_MAX ? LINE_SHOW_MAX : (int)c->cur_len;

			while (show > 0 && (c->cur[show - 1] == '\n' || c->cur[show - 1] == '\r'))
				show--;
			ibc_error("csv: %s:%zu: malformed CSV (%s): '%.*s'", c->path, c->line,
				  csv_strerror(csv_error(&p)), show, c->cur);
			c->status = IBC_ERR_PROTO;
		}
	}
	if (!c->status && ferror(fp)) {
		ibc_error("csv: %s: read failed: %s", c->path, strerror(errno));
		c->status = IBC_ERR_IO;
	}
	if (!c->status && !c->done && csv_fini(&p, field_cb, row_cb, c) != 0 && !c->status) {
		ibc_error("csv: %s:%zu: file ends inside a quoted field (truncated?)", c->path,
			  c->rec_line);
		c->status = IBC_ERR_PROTO;
	}
	csv_free(&p);
	free(line);
	return c->status;
}

int ibc_csv_read(const char *path, struct ibc_csv_table **out)
{
	struct parse_ctx c = { .path = path };
	struct ibc_csv_table *t;
	FILE *fp;
	int status;

	*out = NULL;
	fp = fopen(path, "r");
	if (!fp) {
		ibc_error("csv: cannot open %s: %s", path, strerror(errno));
		return errno == ENOENT ? IBC_ERR_NOTFOUND : IBC_ERR_IO;
	}
	status = parse_stream(fp, &c);
	fclose(fp);
	if (status)
		goto err_free_cells;
	if (c.nrows == 0 || c.ncols == 0) {
		ibc_error("csv: %s: no header row", path);
		status = IBC_ERR_PROTO;
		goto err_free_cells;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		ibc_error("csv: %s: out of memory", path);
		status = IBC_ERR_NOMEM;
		goto err_free_cells;
	}
	t->nrows = c.nrows;
	t->ncols = c.ncols;
	t->cells = c.cells;
	*out = t;
	return IBC_OK;

err_free_cells:
	parse_ctx_cells_free(&c);
	return status;
}

int ibc_csv_column(const struct ibc_csv_table *t, const char *name)
{
	if (!t || !name)
		return -1;
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->cells[i], name) == 0)
			return (int)i;
	return -1;
}

const char *ibc_csv_cell(const struct ibc_csv_table *t, size_t row, const char *column)
{
	int col = ibc_csv_column(t, column);

	if (col < 0 || row + 1 >= t->nrows)
		return NULL;
	return t->cells[(row + 1) * t->ncols + (size_t)col];
}

void ibc_csv_table_free(struct ibc_csv_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

/* ------------------------------------------------------------ writing ---- */

static int needs_quotes(const char *s, size_t len, size_t ncols)
{
	if (len == 0)
		return ncols == 1; /* a lone empty field would be a blank line */
	if (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t')
		return 1;
	return strpbrk(s, ",\"\r\n") != NULL;
}

static int row_reserve(struct ibc_csv_writer *w, size_t need)
{
	char *row;
	size_t cap;

	if (need <= w->row_cap)
		return IBC_OK;
	cap = w->row_cap ? w->row_cap : 256;
	while (cap < need)
		cap *= 2;
	row = realloc(w->row, cap);
	if (!row) {
		ibc_error("csv: %s: out of memory for a row", w->path);
		return IBC_ERR_NOMEM;
	}
	w->row = row;
	w->row_cap = cap;
	return IBC_OK;
}

/* Formats one record into w->row and writes it with one fwrite + fflush, so a
 * killed process leaves whole rows only (as far as one write() allows). */
static int record_write(struct ibc_csv_writer *w, const char *const *fields)
{
	size_t used = 0;

	for (size_t i = 0; i < w->ncols; i++) {
		const char *f = fields[i] ? fields[i] : "";
		size_t len = strlen(f), n;

		if (needs_quotes(f, len, w->ncols)) {
			n = csv_write(NULL, 0, f, len);
			if (row_reserve(w, used + n + 2))
				return IBC_ERR_NOMEM;
			csv_write(w->row + used, n, f, len);
		} else {
			n = len;
			if (row_reserve(w, used + n + 2))
				return IBC_ERR_NOMEM;
			memcpy(w->row + used, f, len);
		}
		used += n;
		w->row[used++] = i + 1 < w->ncols ? ',' : '\n';
	}
	if (fwrite(w->row, 1, used, w->fp) != used || fflush(w->fp) != 0) {
		ibc_error("csv: %s: write failed: %s", w->path, strerror(errno));
		return IBC_ERR_IO;
	}
	return IBC_OK;
}

/* For append: IBC_OK when path does not exist or is empty (*fresh = 1), or
 * when its header equals columns (*fresh = 0). */
static int header_check(const char *path, const char *const *columns, size_t ncols, int *fresh)
{
	struct parse_ctx c = { .path = path, .max_rows = 1 };
	FILE *fp;
	long size;
	int status, last;

	*fresh = 1;
	fp = fopen(path, "r");
	if (!fp) {
		if (errno == ENOENT)
			return IBC_OK;
		ibc_error("csv: cannot open %s: %s", path, strerror(errno));
		return IBC_ERR_IO;
	}
	if (fseek(fp, 0, SEEK_END) != 0 || (size = ftell(fp)) < 0) {
		ibc_error("csv: %s: cannot seek: %s", path, strerror(errno));
		status = IBC_ERR_IO;
		goto err_close;
	}
	if (size == 0) {
		fclose(fp);
		return IBC_OK;
	}
	*fresh = 0;
	if (fseek(fp, -1, SEEK_END) != 0 || (last = fgetc(fp)) == EOF) {
		ibc_error("csv: %s: cannot read: %s", path, strerror(errno));
		status = IBC_ERR_IO;
		goto err_close;
	}
	if (last != '\n') {
		ibc_error("csv: %s: does not end with a newline (a partial row?); not appending",
			  path);
		status = IBC_ERR_PROTO;
		goto err_close;
	}
	rewind(fp);
	status = parse_stream(fp, &c);
	if (status)
		goto err_free_cells;
	if (c.nrows != 1 || c.ncols != ncols) {
		ibc_error("csv: %s: existing header has %zu columns, expected %zu; not appending",
			  path, c.ncols, ncols);
		status = IBC_ERR_INVAL;
		goto err_free_cells;
	}
	for (size_t i = 0; i < ncols; i++) {
		if (strcmp(c.cells[i], columns[i]) != 0) {
			ibc_error("csv: %s: existing header column %zu is '%s', expected '%s'; "
				  "not appending", path, i + 1, c.cells[i], columns[i]);
			status = IBC_ERR_INVAL;
			goto err_free_cells;
		}
	}
	parse_ctx_cells_free(&c);
	fclose(fp);
	return IBC_OK;

err_free_cells:
	parse_ctx_cells_free(&c);
err_close:
	fclose(fp);
	return status;
}

int ibc_csv_writer_open(const char *path, const char *const *columns, size_t ncols,
			int append, struct ibc_csv_writer **out)
{
	struct ibc_csv_writer *w;
	int fresh = 1, status;

	*out = NULL;
	if (!path || !columns || ncols == 0) {
		ibc_error("csv: writer needs a path and at least one column");
		return IBC_ERR_INVAL;
	}
	for (size_t i = 0; i < ncols; i++) {
		if (!columns[i] || !*columns[i]) {
			ibc_error("csv: %s: column %zu has no name", path, i + 1);
			return IBC_ERR_INVAL;
		}
	}
	if (append) {
		status = header_check(path, columns, ncols, &fresh);
		if (status)
			return status;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		ibc_error("csv: %s: out of memory", path);
		status = IBC_ERR_NOMEM;
		goto err_free_writer;
	}
	w->ncols = ncols;
	w->fp = fopen(path, fresh ? "w" : "a");
	if (!w->fp) {
		ibc_error("csv: cannot open %s for writing: %s", path, strerror(errno));
		status = errno == ENOENT ? IBC_ERR_NOTFOUND : IBC_ERR_IO;
		goto err_free_writer;
	}
	if (fresh) {
		status = record_write(w, columns);
		if (status)
			goto err_close_file;
	}
	*out = w;
	return IBC_OK;

err_close_file:
	fclose(w->fp);
err_free_writer:
	if (w)
		free(w->path);
	free(w);
	return status;
}

int ibc_csv_writer_row(struct ibc_csv_writer *w, const char *const *fields)
{
	if (!w || !fields) {
		ibc_error("csv: row needs a writer and fields");
		return IBC_ERR_INVAL;
	}
	return record_write(w, fields);
}

int ibc_csv_writer_close(struct ibc_csv_writer *w)
{
	int status = IBC_OK;

	if (!w)
		return IBC_OK;
	if (fclose(w->fp) != 0) {
		ibc_error("csv: %s: close failed: %s", w->path, strerror(errno));
		status = IBC_ERR_IO;
	}
	free(w->row);
	free(w->path);
	free(w);
	return status;
}

const char *ibc_csv_extra_get(const char *extra, const char *key, char *buf, size_t cap)
{
	size_t kl = strlen(key);
	const char *p = extra;

	while (p != NULL && *p) {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, ";");

			snprintf(buf, cap, "%.*s", (int)n, p + kl + 1);
			return buf;
		}
		p = strchr(p, ';');
		if (p)
			p++;
	}
	return NULL;
}

double ibc_csv_extra_num(const char *extra, const char *key)
{
	char b[64];

	return ibc_csv_extra_get(extra, key, b, sizeof(b)) != NULL && b[0] ? strtod(b, NULL) : NAN;
}

double ibc_csv_extra_first(const char *extra, const char *const *keys, int n, const char **as)
{
	int i;

	for (i = 0; i < n; i++) {
		double v = ibc_csv_extra_num(extra, keys[i]);

		if (isfinite(v) && v > 0) {
			*as = keys[i];
			return v;
		}
	}
	*as = NULL;
	return NAN;
}

double ibc_csv_num(const struct ibc_csv_table *t, size_t row, const char *column)
{
	const char *c = ibc_csv_cell(t, row, column);

	return c != NULL && *c ? strtod(c, NULL) : NAN;
}

const char *ibc_csv_str(const struct ibc_csv_table *t, size_t row, const char *column)
{
	const char *c = ibc_csv_cell(t, row, column);

	return c != NULL ? c : "";
}

size_t ibc_csv_size(const struct ibc_csv_table *t, size_t row, const char *column)
{
	double v = ibc_csv_num(t, row, column);

	return isfinite(v) && v >= 0 && v < 0x1p63 ? (size_t)v : SIZE_MAX;
}

int ibc_csv_int(const struct ibc_csv_table *t, size_t row, const char *column)
{
	double v = ibc_csv_num(t, row, column);

	return isfinite(v) && v >= 0 && v <= INT_MAX ? (int)v : -1;
}

int ibc_csv_num_strict(const struct ibc_csv_table *t, size_t row, const char *column, double *out)
{
	return ibc_csv_num_text(ibc_csv_cell(t, row, column), out);
}

int ibc_csv_num_text(const char *c, double *out)
{
	char *end;
	double v;

	if (c == NULL || *c == '\0')
		return IBC_ERR_NOTFOUND;
	/* strtod skips leading blanks and reads "inf" and "nan": neither is a number here */
	if (!(*c == '-' || *c == '+' || *c == '.' || (*c >= '0' && *c <= '9')))
		return IBC_ERR_PROTO;
	v = strtod(c, &end);
	if (end == c || *end != '\0' || !isfinite(v))
		return IBC_ERR_PROTO;
	*out = v;
	return IBC_OK;
}
