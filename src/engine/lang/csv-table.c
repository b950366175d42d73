/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/csv-table.h"

typedef struct row {
	unsigned line;
	size_t first;   /* index in fields of the row's first field */
	size_t nfields; /* kept fields: at most the header's count */
} csv_row;

struct ap_csv {
	/* Every kept field, NUL-terminated, one after another: one allocation
	 * for the whole table rather than one per field. */
	char *pool;
	size_t *fields; /* offsets in pool: the header's names, then each row's fields */
	size_t ncols;
	csv_row *rows;
	size_t nrows;
	size_t *by_name; /* column indexes sorted by name, for ap_csv_col */
};

typedef struct parser {
	const char *s;
	size_t len;
	size_t i;
	unsigned line;
	ap_buf pool;
	size_t *fields;
	size_t nfields;
	size_t fields_cap;
	csv_row *rows;
	size_t nrows;
	size_t rows_cap;
} parser;

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_field_end(const parser *p)
{
	return p->i == p->len || p->s[p->i] == ',' || p->s[p->i] == '\n' || p->s[p->i] == '\r';
}

static void skip_blanks(parser *p)
{
	while (p->i < p->len && is_blank(p->s[p->i]))
		p->i++;
}

/* Consumes the line end at p->i, if any: CRLF is one. */
static void end_line(parser *p)
{
	if (p->i == p->len)
		return;
	if (p->s[p->i] == '\r' && p->i + 1 < p->len && p->s[p->i + 1] == '\n')
		p->i++;
	p->i++;
	p->line++;
}

static int nul_error(const parser *p)
{
	ap_error_set("line %u: NUL byte", p->line);
	return AP_EINPUT;
}

static void keep_field(parser *p, size_t off)
{
	ap_buf_putc(&p->pool, '\0');
	ap_xgrow((void **)&p->fields, &p->fields_cap, p->nfields + 1, sizeof *p->fields);
	p->fields[p->nfields++] = off;
}

/* Removes the spaces and tabs around the field that starts at off, the last
 * one in the pool, before its terminator is added. */
static void trim_last(parser *p, size_t off)
{
	size_t start = off;
	size_t end = p->pool.len;

	while (start < end && is_blank(p->pool.data[start]))
		start++;
	while (end > start && is_blank(p->pool.data[end - 1]))
		end--;
	memmove(p->pool.data + off, p->pool.data + start, end - start);
	p->pool.len = off + (end - start);
}

/* The opening quote is at p->i. */
static int read_quoted(parser *p, bool keep, bool trim)
{
	unsigned qline = p->line;
	size_t off = p->pool.len;
	size_t run;

	run = ++p->i;
	for (;;) {
		char c;

		if (p->i == p->len) {
			ap_error_set("line %u: unterminated quoted field", qline);
			return AP_EINPUT;
		}
		c = p->s[p->i];
		if (c == '"') {
			bool doubled = p->i + 1 < p->len && p->s[p->i + 1] == '"';

			/* The run ends with the first quote of a doubled one. */
			if (keep)
				ap_buf_append(&p->pool, p->s + run, p->i - run + doubled);
			p->i += 1 + doubled;
			if (!doubled)
				break;
			run = p->i;
			continue;
		}
		if (c == '\0')
			return nul_error(p);
		/* CR of CRLF is counted at its LF. */
		if (c == '\n' || (c == '\r' && !(p->i + 1 < p->len && p->s[p->i + 1] == '\n')))
			p->line++;
		p->i++;
	}
	skip_blanks(p);
	if (p->i < p->len && p->s[p->i] == '\0')
		return nul_error(p);
	if (!is_field_end(p)) {
		ap_error_set("line %u: unexpected character after a closing quote", p->line);
		return AP_EINPUT;
	}
	if (keep) {
		if (trim)
			trim_last(p, off);
		keep_field(p, off);
	}
	return 0;
}

/* Reads the field at p->i, leaving p->i at its separator, line end or the
 * end of the data. trim_quoted trims a quoted field too (header names). */
static int read_field(parser *p, bool keep, bool trim_quoted)
{
	size_t start;
	size_t end;
	size_t off;

	skip_blanks(p);
	if (p->i < p->len && p->s[p->i] == '"')
		return read_quoted(p, keep, trim_quoted);
	start = p->i;
	while (!is_field_end(p)) {
		if (p->s[p->i] == '\0')
			return nul_error(p);
		p->i++;
	}
	end = p->i;
	while (end > start && is_blank(p->s[end - 1]))
		end--;
	if (keep) {
		off = p->pool.len;
		ap_buf_append(&p->pool, p->s + start, end - start);
		keep_field(p, off);
	}
	return 0;
}

/* Reads the row at p->i and its line end, keeping its first keep_max fields;
 * *kept says how many it kept. The header may not have more than
 * AP_CSV_MAX_COLS fields; a data row's extra fields are dropped and cost
 * nothing. */
static int read_row(parser *p, size_t keep_max, bool header, size_t *kept)
{
	unsigned line = p->line;
	size_t n = 0;
	int rc;

	for (;;) {
		if (header && n == AP_CSV_MAX_COLS) {
			ap_error_set("line %u: more than %u columns", line, AP_CSV_MAX_COLS);
			return AP_ELIMIT;
		}
		rc = read_field(p, n < keep_max, header);
		if (rc < 0)
			return rc;
		if (n < keep_max)
			n++;
		if (p->i == p->len || p->s[p->i] != ',')
			break;
		p->i++;
	}
	end_line(p);
	*kept = n;
	return 0;
}

/* Skips blank lines; false at the end of the data. */
static bool next_row(parser *p)
{
	for (;;) {
		size_t j = p->i;

		while (j < p->len && is_blank(p->s[j]))
			j++;
		if (j == p->len)
			return false;
		if (p->s[j] != '\n' && p->s[j] != '\r')
			return true;
		p->i = j;
		end_line(p);
	}
}

typedef struct named {
	const char *name;
	size_t col;
} named;

static int cmp_named(const void *a, const void *b)
{
	const named *x = a;
	const named *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	return x->col < y->col ? -1 : x->col > y->col;
}

/* Sorts the header's names for ap_csv_col, refusing a repeated one: sorting
 * finds repeats in n log n where comparing every pair would take n^2. */
static int index_header(ap_csv *t, const parser *p, unsigned line)
{
	named *v = ap_xmalloc(t->ncols * sizeof *v);
	size_t dup = SIZE_MAX;

	for (size_t c = 0; c < t->ncols; c++) {
		v[c].name = p->pool.data + p->fields[c];
		v[c].col = c;
	}
	qsort(v, t->ncols, sizeof *v, cmp_named);
	/* Report the first repeat in file order. */
	for (size_t k = 1; k < t->ncols; k++)
		if (strcmp(v[k - 1].name, v[k].name) == 0 && v[k].col < dup)
			dup = v[k].col;
	if (dup != SIZE_MAX) {
		ap_error_set("line %u: duplicate column '%s'", line, p->pool.data + p->fields[dup]);
		free(v);
		return AP_EINPUT;
	}
	t->by_name = ap_xmalloc(t->ncols * sizeof *t->by_name);
	for (size_t c = 0; c < t->ncols; c++)
		t->by_name[c] = v[c].col;
	free(v);
	return 0;
}

static int parse(ap_csv *t, parser *p)
{
	unsigned line;
	int rc;

	if (!next_row(p)) {
		ap_error_set("empty table: no header row");
		return AP_EINPUT;
	}
	line = p->line;
	rc = read_row(p, AP_CSV_MAX_COLS, true, &t->ncols);
	if (rc < 0)
		return rc;
	rc = index_header(t, p, line);
	if (rc < 0)
		return rc;
	while (next_row(p)) {
		csv_row *r;

		if (p->nrows == AP_CSV_MAX_ROWS) {
			ap_error_set("line %u: more than %u rows", p->line, AP_CSV_MAX_ROWS);
			return AP_ELIMIT;
		}
		ap_xgrow((void **)&p->rows, &p->rows_cap, p->nrows + 1, sizeof *p->rows);
		r = &p->rows[p->nrows];
		r->line = p->line;
		r->first = p->nfields;
		rc = read_row(p, t->ncols, false, &r->nfields);
		if (rc < 0)
			return rc;
		p->nrows++;
	}
	return 0;
}

int ap_csv_parse(ap_csv **out, const char *data, size_t len)
{
	ap_csv *t = ap_xcalloc(1, sizeof *t);
	parser p = {.s = data, .len = len, .line = 1};
	int rc;

	*out = NULL;
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0)
		p.i = 3;
	rc = parse(t, &p);
	t->pool = ap_buf_detach(&p.pool);
	t->fields = p.fields;
	t->rows = p.rows;
	t->nrows = p.nrows;
	if (rc < 0) {
		ap_csv_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void ap_csv_free(ap_csv *t)
{
	if (t == NULL)
		return;
	free(t->pool);
	free(t->fields);
	free(t->rows);
	free(t->by_name);
	free(t);
}

size_t ap_csv_ncols(const ap_csv *t)
{
	return t->ncols;
}

const char *ap_csv_col_name(const ap_csv *t, size_t col)
{
	return col < t->ncols ? t->pool + t->fields[col] : NULL;
}

long ap_csv_col(const ap_csv *t, const char *name)
{
	size_t lo = 0;
	size_t hi = t->ncols;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, t->pool + t->fields[t->by_name[mid]]);

		if (c == 0)
			return (long)t->by_name[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

size_t ap_csv_nrows(const ap_csv *t)
{
	return t->nrows;
}

unsigned ap_csv_row_line(const ap_csv *t, size_t row)
{
	return row < t->nrows ? t->rows[row].line : 0;
}

const char *ap_csv_field(const ap_csv *t, size_t row, size_t col)
{
	if (row >= t->nrows || col >= t->rows[row].nfields)
		return NULL;
	return t->pool + t->fields[t->rows[row].first + col];
}
