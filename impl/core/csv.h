/* CSV through libcsv.  The writer emits a header and then one row per call,
 * flushed at once, so an interrupted run leaves a valid file holding every
 * finished row.  Fields with commas, quotes or newlines are quoted and read
 * back unchanged. */
#ifndef IBC_CORE_CSV_H
#define IBC_CORE_CSV_H

#include <stddef.h>

struct ibc_csv_writer;

/* Creates (truncates) path and writes the header of ncols columns.  With
 * append set and an existing file whose header matches, rows are appended. */
int ibc_csv_writer_open(const char *path, const char *const *columns, size_t ncols,
			int append, struct ibc_csv_writer **out);
/* Writes one row of exactly the writer's ncols fields (NULL = empty). */
int ibc_csv_writer_row(struct ibc_csv_writer *w, const char *const *fields);
int ibc_csv_writer_close(struct ibc_csv_writer *w);

/* A whole file in memory; row 0 is the header. */
struct ibc_csv_table {
	size_t nrows; /* including the header row */
	size_t ncols;
	char **cells; /* nrows * ncols, row-major, never NULL */
};

/* Reads path; every row must have the header's column count
 * (IBC_ERR_PROTO otherwise, with the line logged). */
int ibc_csv_read(const char *path, struct ibc_csv_table **out);
int ibc_csv_column(const struct ibc_csv_table *t, const char *name); /* index or -1 */
/* The cell of data row `row` (0 = first row after the header), or NULL. */
const char *ibc_csv_cell(const struct ibc_csv_table *t, size_t row, const char *column);
void ibc_csv_table_free(struct ibc_csv_table *t);
/* The number in a cell of data row `row`; NAN when the cell is empty or the
 * column absent. */
double ibc_csv_num(const struct ibc_csv_table *t, size_t row, const char *column);
/* The cell as text, "" when the row or the column is absent (never NULL). */
const char *ibc_csv_str(const struct ibc_csv_table *t, size_t row, const char *column);
/* The number in a cell as a count: SIZE_MAX (ibc_csv_size) or -1
 * (ibc_csv_int) when it is empty, absent, negative, not finite or too big
 * for the type (a cast of those would be undefined). */
size_t ibc_csv_size(const struct ibc_csv_table *t, size_t row, const char *column);
int ibc_csv_int(const struct ibc_csv_table *t, size_t row, const char *column);
/* The number in a cell, strictly: IBC_OK with *out set when the whole cell is
 * a finite number (no blanks, no trailing text); IBC_ERR_NOTFOUND when the
 * cell is empty or the row or column absent; IBC_ERR_PROTO when it is not a
 * finite number ("abc", "1.5x", "inf", "nan", "1e999").  *out is untouched
 * unless IBC_OK.  Logs nothing: the caller says which file and row. */
int ibc_csv_num_strict(const struct ibc_csv_table *t, size_t row, const char *column, double *out);
/* The same check of a text (e.g. a value of ibc_csv_extra_get): IBC_ERR_NOTFOUND for
 * NULL or empty, IBC_ERR_PROTO for anything but a finite number. */
int ibc_csv_num_text(const char *text, double *out);
/* The value of key in a results row's extra cell ("k=v;k=v"), copied into
 * buf; NULL when the key is absent. */
const char *ibc_csv_extra_get(const char *extra, const char *key, char *buf, size_t cap);
/* The value of key in an extra cell as a number, as ibc_csv_num reads a
 * cell: NAN when the key is absent or its value empty. */
double ibc_csv_extra_num(const char *extra, const char *key);
/* The first of keys[0..n) whose value in an extra cell is a time (finite and
 * > 0), *as naming it; NAN and *as = NULL when none is. */
double ibc_csv_extra_first(const char *extra, const char *const *keys, int n, const char **as);

#endif
