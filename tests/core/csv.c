/* CSV: round-trips of awkward fields, append mode, interrupted writers,
 * malformed files and the strict number reader. */
#include "core/csv.h"
#include "core/log.h"
#include "core/status.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static const char *path_in(const char *name)
{
	static char buf[4][128];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static int file_put(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		return -1;
	fputs(text, fp);
	return fclose(fp);
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static char *first_line(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");

	buf[0] = '\0';
	if (!fp)
		return buf;
	if (fgets(buf, (int)len, fp))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(fp);
	return buf;
}

#define NROWS 6
static const char *const cols[] = { "name", "value, with comma", "note" };
static const char *const rows[NROWS][3] = {
	{ "comma", "a,b,c", "trailing," },
	{ "quotes", "say \"hi\"", "\"" },
	{ "newline", "line1\nline2", "crlf\r\nend" },
	{ "", "empty first", "" },
	{ "  lead", "trail  ", " " },
	{ "utf8 h\xc3\xa9llo \xe2\x9c\x93", "\xe6\x97\xa5\xe6\x9c\xac", "tab\tin" },
};

static void round_trip(void)
{
	const char *p = path_in("rt.csv");
	struct ibc_csv_writer *w;
	struct ibc_csv_table *t = NULL;
	const char *nulls[3] = { "nulls", NULL, NULL };
	char line[256];
	int ok = 1;

	tap_is_int(ibc_csv_writer_open(p, cols, 3, 0, &w), IBC_OK, "writer open");
	for (int r = 0; r < NROWS; r++)
		if (ibc_csv_writer_row(w, rows[r]))
			ok = 0;
	tap_ok(ok, "wrote %d awkward rows", NROWS);
	tap_is_int(ibc_csv_writer_row(w, nulls), IBC_OK, "row with NULL fields");
	tap_is_int(ibc_csv_writer_close(w), IBC_OK, "writer close");
	tap_is_str(first_line(p, line, sizeof(line)), "name,\"value, with comma\",note",
		   "header quoted only where needed");

	if (!tap_is_int(ibc_csv_read(p, &t), IBC_OK, "read back")) {
		tap_skip(8, "read failed");
		return;
	}
	tap_is_int((long long)t->nrows, NROWS + 2, "row count (header + rows)");
	tap_is_int((long long)t->ncols, 3, "column count");
	for (int c = 0; c < 3; c++)
		if (strcmp(t->cells[c], cols[c]) != 0)
			ok = 0;
	tap_ok(ok, "header cells round-trip");
	for (int r = 0; r < NROWS; r++)
		for (int c = 0; c < 3; c++)
			if (strcmp(t->cells[(size_t)(r + 1) * 3 + (size_t)c], rows[r][c]) != 0) {
				tap_diag("row %d col %d: got '%s' want '%s'", r, c,
					 t->cells[(size_t)(r + 1) * 3 + (size_t)c], rows[r][c]);
				ok = 0;
			}
	tap_ok(ok, "every awkward field round-trips (commas, quotes, newlines, empty, "
		   "spaces, UTF-8)");
	tap_is_str(ibc_csv_cell(t, NROWS, "value, with comma"), "", "NULL field reads as empty");
	tap_is_int(ibc_csv_column(t, "note"), 2, "column lookup");
	tap_is_int(ibc_csv_column(t, "nope"), -1, "unknown column is -1");
	tap_ok(ibc_csv_cell(t, NROWS + 1, "note") == NULL && ibc_csv_cell(t, 0, "nope") == NULL,
	       "cell out of range is NULL");
	ibc_csv_table_free(t);
}

static void one_column(void)
{
	const char *p = path_in("one.csv");
	const char *const col[] = { "only" };
	const char *const a[] = { "x" }, *const e[] = { "" }, *const b[] = { "y" };
	struct ibc_csv_writer *w;
	struct ibc_csv_table *t = NULL;

	ibc_csv_writer_open(p, col, 1, 0, &w);
	ibc_csv_writer_row(w, a);
	ibc_csv_writer_row(w, e);
	ibc_csv_writer_row(w, b);
	ibc_csv_writer_close(w);
	if (!tap_is_int(ibc_csv_read(p, &t), IBC_OK, "one column: read back")) {
		tap_skip(1, "read failed");
		return;
	}
	tap_ok(t->nrows == 4 && strcmp(ibc_csv_cell(t, 1, "only"), "") == 0 &&
		       strcmp(ibc_csv_cell(t, 2, "only"), "y") == 0,
	       "one column: an empty field is not lost as a blank line");
	ibc_csv_table_free(t);
}

static void append_mode(void)
{
	const char *p = path_in("app.csv");
	const char *fresh = path_in("fresh.csv");
	const char *const other[] = { "name", "value", "note" };
	struct ibc_csv_writer *w = NULL;
	struct ibc_csv_table *t = NULL;
	long size;

	ibc_csv_writer_open(p, cols, 3, 0, &w);
	ibc_csv_writer_row(w, rows[0]);
	ibc_csv_writer_close(w);

	tap_is_int(ibc_csv_writer_open(p, cols, 3, 1, &w), IBC_OK, "append: same header opens");
	ibc_csv_writer_row(w, rows[1]);
	ibc_csv_writer_row(w, rows[2]);
	ibc_csv_writer_close(w);
	if (tap_is_int(ibc_csv_read(p, &t), IBC_OK, "append: read back")) {
		tap_ok(t->nrows == 4 && strcmp(ibc_csv_cell(t, 0, "name"), "comma") == 0 &&
			       strcmp(ibc_csv_cell(t, 2, "value, with comma"), "line1\nline2") == 0,
		       "append: one header, old rows kept, new rows after them");
		ibc_csv_table_free(t);
	} else {
		tap_skip(1, "read failed");
	}

	size = file_size(p);
	w = NULL;
	tap_is_int(ibc_csv_writer_open(p, other, 3, 1, &w), IBC_ERR_INVAL,
		   "append: different header refused");
	tap_ok(w == NULL && file_size(p) == size, "append: refused file left untouched");
	tap_is_int(ibc_csv_writer_open(p, other, 2, 1, &w), IBC_ERR_INVAL,
		   "append: different column count refused");

	tap_is_int(ibc_csv_writer_open(fresh, cols, 3, 1, &w), IBC_OK,
		   "append: a missing file is created");
	ibc_csv_writer_row(w, rows[0]);
	ibc_csv_writer_close(w);
	if (tap_is_int(ibc_csv_read(fresh, &t), IBC_OK, "append: new file read back")) {
		tap_is_int((long long)t->nrows, 2, "append: new file has header + 1 row");
		ibc_csv_table_free(t);
	} else {
		tap_skip(1, "read failed");
	}

	file_put(p, "name,\"value, with comma\",note\n1,2,3"); /* partial last row */
	tap_is_int(ibc_csv_writer_open(p, cols, 3, 1, &w), IBC_ERR_PROTO,
		   "append: a file ending in a partial row is refused");
}

/* A writer killed mid-run leaves a valid file holding every finished row. */
static void interrupted(void)
{
	const char *p = path_in("killed.csv");
	struct ibc_csv_table *t = NULL;
	int st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct ibc_csv_writer *w;

		if (ibc_csv_writer_open(p, cols, 3, 0, &w))
			_exit(1);
		for (int r = 0; r < 3; r++)
			ibc_csv_writer_row(w, rows[r]);
		_exit(0); /* no close, no stdio flush at exit */
	}
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "interrupted writer exited");
	if (tap_is_int(ibc_csv_read(p, &t), IBC_OK, "interrupted: file is valid CSV")) {
		tap_is_int((long long)t->nrows, 4, "interrupted: every finished row is there");
		ibc_csv_table_free(t);
	} else {
		tap_skip(1, "read failed");
	}
}

static void malformed(void)
{
	static const struct {
		const char *name, *text;
		int want;
	} cases[] = {
		{ "ragged (short row)", "a,b,c\n1,2,3\n4,5\n", IBC_ERR_PROTO },
		{ "ragged (long row)", "a,b\n1,2\n3,4,5\n", IBC_ERR_PROTO },
		{ "truncated inside quotes", "a,b\n1,\"unterminated\nstill\n", IBC_ERR_PROTO },
		{ "stray quote", "a,b\n1,x\"y\n", IBC_ERR_PROTO },
		{ "empty file", "", IBC_ERR_PROTO },
	};
	struct ibc_csv_table *t = NULL;
	const char *p = path_in("bad.csv");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		file_put(p, cases[i].text);
		t = (struct ibc_csv_table *)1;
		tap_is_int(ibc_csv_read(p, &t), cases[i].want, "rejected: %s", cases[i].name);
		tap_ok(t == NULL, "rejected: %s gives no table", cases[i].name);
	}
	tap_is_int(ibc_csv_read(path_in("missing.csv"), &t), IBC_ERR_NOTFOUND,
		   "missing file is NOTFOUND");

	/* foreign files: CRLF line ends, no final newline, quoted header */
	file_put(p, "a,\"b\"\r\n1,\"x\r\ny\"\r\n2,3");
	if (tap_is_int(ibc_csv_read(p, &t), IBC_OK, "CRLF file without final newline reads")) {
		tap_ok(t->nrows == 3 && strcmp(ibc_csv_cell(t, 0, "b"), "x\r\ny") == 0 &&
			       strcmp(ibc_csv_cell(t, 0, "a"), "1") == 0 &&
			       strcmp(ibc_csv_cell(t, 1, "b"), "3") == 0,
		       "CRLF file: cells without stray CR");
		ibc_csv_table_free(t);
	} else {
		tap_skip(1, "read failed");
	}

	file_put(p, "\xef\xbb\xbf" "a,b\n1,2\n");
	if (tap_is_int(ibc_csv_read(p, &t), IBC_OK, "file with a UTF-8 BOM reads")) {
		tap_is_int(ibc_csv_column(t, "a"), 0, "BOM is not part of the first column name");
		ibc_csv_table_free(t);
	} else {
		tap_skip(1, "read failed");
	}
}

/* ibc_csv_num_strict: a finite number, or why not */
static void strict_numbers(void)
{
	static const struct {
		const char *cell;
		int want;
		double val;
	} cases[] = {
		{ "2.5", IBC_OK, 2.5 },       { "-3", IBC_OK, -3 },         { "1e-3", IBC_OK, 1e-3 },
		{ "0", IBC_OK, 0 },           { "", IBC_ERR_NOTFOUND, 0 },  { "abc", IBC_ERR_PROTO, 0 },
		{ "1.5x", IBC_ERR_PROTO, 0 }, { "inf", IBC_ERR_PROTO, 0 },  { "-inf", IBC_ERR_PROTO, 0 },
		{ "nan", IBC_ERR_PROTO, 0 },  { "1e999", IBC_ERR_PROTO, 0 }, { " 2", IBC_ERR_PROTO, 0 },
		{ "2 ", IBC_ERR_PROTO, 0 },   { "-", IBC_ERR_PROTO, 0 },
	};
	const char *p = path_in("num.csv");
	struct ibc_csv_table *t = NULL;
	FILE *fp = fopen(p, "w");
	size_t i;
	double v;

	if (fp == NULL)
		tap_bail_out("cannot write %s", p);
	fputs("x\n", fp);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		fprintf(fp, "\"%s\"\n", cases[i].cell);
	fclose(fp);
	if (!tap_is_int(ibc_csv_read(p, &t), IBC_OK, "strict: read the numbers")) {
		tap_skip(1, "read failed");
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = -42;
		tap_is_int(ibc_csv_num_strict(t, i, "x", &v), cases[i].want, "strict: '%s'", cases[i].cell);
		if (cases[i].want == IBC_OK)
			tap_is_double_within(v, cases[i].val, 0, "strict: '%s' is %g", cases[i].cell, cases[i].val);
		else
			tap_ok(v == -42, "strict: '%s' leaves *out alone", cases[i].cell);
	}
	tap_is_int(ibc_csv_num_strict(t, 0, "nope", &v), IBC_ERR_NOTFOUND, "strict: no such column");
	tap_is_int(ibc_csv_num_strict(t, 99, "x", &v), IBC_ERR_NOTFOUND, "strict: no such row");
	ibc_csv_table_free(t);
}

/* a number from a row's extra cell: the key's value, NAN when the key is
 * absent (a key that ends another's name is not it) or empty */
static void extra_numbers(void)
{
	const char *e = "kernel=rtt-1n;paper_us=0.6957;b2b_p50_us=0.4708;empty=;p=1";

	tap_is_double_within(ibc_csv_extra_num(e, "b2b_p50_us"), 0.4708, 1e-12, "extra_num: a key's value");
	tap_is_double_within(ibc_csv_extra_num(e, "p"), 1.0, 1e-12, "extra_num: the last key");
	tap_ok(isnan(ibc_csv_extra_num(e, "p50_us")), "extra_num: a key only inside another's name is absent");
	tap_ok(isnan(ibc_csv_extra_num(e, "empty")), "extra_num: an empty value is NAN");
	tap_ok(isnan(ibc_csv_extra_num("", "p")) && isnan(ibc_csv_extra_num(NULL, "p")),
	       "extra_num: an empty or missing cell is NAN");
}

/* the first of several keys that holds a time (> 0): the loop's median,
 * else its mean; a key absent, empty, 0 or negative is passed over */
static void extra_first(void)
{
	static const char *const loop[] = { "b2b_p50_us", "paper_us" };
	const char *as = "unset";
	double v;

	v = ibc_csv_extra_first("paper_us=0.6957;b2b_p50_us=0.4708", loop, 2, &as);
	tap_ok(v == 0.4708 && as == loop[0], "extra_first: the first key present (%g, %s)", v, as);
	v = ibc_csv_extra_first("paper_us=0.6957;b2b_p50_us=", loop, 2, &as);
	tap_ok(v == 0.6957 && as == loop[1], "extra_first: an empty first key falls to the second (%g)", v);
	v = ibc_csv_extra_first("paper_us=0.6957;b2b_p50_us=0", loop, 2, &as);
	tap_ok(v == 0.6957 && as == loop[1], "extra_first: a first key of 0 is no time (%g)", v);
	v = ibc_csv_extra_first("paper_us=-1;b2b_p50_us=nan", loop, 2, &as);
	tap_ok(isnan(v) && as == NULL, "extra_first: neither a time: NAN and no name");
	as = "unset";
	v = ibc_csv_extra_first(NULL, loop, 2, &as);
	tap_ok(isnan(v) && as == NULL, "extra_first: no cell: NAN and no name");
}

int main(void)
{
	char cmd[128];

	tap_plan_none();
	ibc_log_level_set(IBC_LOG_NONE); /* the rejected files log errors on purpose */
	snprintf(dir, sizeof(dir), "/tmp/ibc-csv-XXXXXX");
	if (!mkdtemp(dir))
		tap_bail_out("mkdtemp failed");

	round_trip();
	one_column();
	append_mode();
	interrupted();
	malformed();
	strict_numbers();
	extra_numbers();
	extra_first();

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	return tap_done();
}
