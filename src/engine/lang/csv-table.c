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
	/* the file's line of each line of s, when s is a table with its comments
	 * dropped (NULL: s is the file) */
	const unsigned *line_of;
	size_t nlines;
} parser;

/* The file's line number of line n of the text being parsed. */
static unsigned file_line(const parser *p, unsigned n)
{
	return p->line_of != NULL && n >= 1 && n <= p->nlines ? p->line_of[n - 1] : n;
}

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
	ap_error_set("line %u: NUL byte", file_line(p, p->line));
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
			ap_error_set("line %u: unterminated quoted field", file_line(p, qline));
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
		ap_error_set("line %u: unexpected character after a closing quote",
		             file_line(p, p->line));
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
			ap_error_set("line %u: more than %u columns", file_line(p, line), AP_CSV_MAX_COLS);
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
		ap_error_set("line %u: duplicate column '%s'", file_line(p, line),
		             p->pool.data + p->fields[dup]);
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
			ap_error_set("line %u: more than %u rows", file_line(p, p->line), AP_CSV_MAX_ROWS);
			return AP_ELIMIT;
		}
		ap_xgrow((void **)&p->rows, &p->rows_cap, p->nrows + 1, sizeof *p->rows);
		r = &p->rows[p->nrows];
		r->line = file_line(p, p->line);
		r->first = p->nfields;
		rc = read_row(p, t->ncols, false, &r->nfields);
		if (rc < 0)
			return rc;
		p->nrows++;
	}
	return 0;
}

static int parse_text(ap_csv **out, const char *data, size_t len, const unsigned *line_of,
                      size_t nlines)
{
	ap_csv *t = ap_xcalloc(1, sizeof *t);
	parser p = {.s = data, .len = len, .line = 1, .line_of = line_of, .nlines = nlines};
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

int ap_csv_parse(ap_csv **out, const char *data, size_t len)
{
	return parse_text(out, data, len, NULL, 0);
}

/* --- Comments as hsa/codegen.py drops them --------------------------------
 *
 * codegen opens a table as UTF-8 text (a BOM skipped, CRLF and a lone CR
 * read as LF), removes each block from the first remaining slash-star to
 * the next star-slash after it (the rest of the text when there is none;
 * the text around a removed block joins, and quotes do not matter), then
 * cuts the text into lines as str.splitlines does (at LF and at VT, FF,
 * FS, GS, RS, NEL, LS and PS, which stay in their line), drops each line
 * whose text, leading whitespace stripped, starts with //, # or ;, and cuts
 * the others at the first //, # or ; (a ; only after a space or tab, a //
 * not after a colon) outside double quotes, trailing whitespace stripped
 * (a line that ended at anything but LF loses that end with it). pandas
 * reads what is left. */

/* The length of the code point at s[i] when it is a line boundary of
 * str.splitlines other than LF (no CR is left), else 0. */
static size_t split_at(const unsigned char *s, size_t i, size_t n)
{
	if (s[i] == 0x0b || s[i] == 0x0c || (s[i] >= 0x1c && s[i] <= 0x1e))
		return 1;
	if (i + 1 < n && s[i] == 0xc2 && s[i + 1] == 0x85)
		return 2;
	if (i + 2 < n && s[i] == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))
		return 3;
	return 0;
}

/* Whether the code point c (of len bytes at s) is whitespace to str.strip. */
static bool is_space_cp(const unsigned char *s, size_t len)
{
	if (len == 1)
		return (s[0] >= 0x09 && s[0] <= 0x0d) || (s[0] >= 0x1c && s[0] <= 0x20);
	if (len == 2)
		return s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0);
	if (len != 3)
		return false;
	if (s[0] == 0xe1)
		return s[1] == 0x9a && s[2] == 0x80;
	if (s[0] == 0xe2 && s[1] == 0x80)
		return s[2] <= 0x8a || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf;
	if (s[0] == 0xe2)
		return s[1] == 0x81 && s[2] == 0x9f;
	return s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80;
}

static size_t cp_len(unsigned char c)
{
	return c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
}

/* The end of s[a, e) with trailing whitespace stripped (s valid UTF-8). */
static size_t rstrip(const unsigned char *s, size_t a, size_t e)
{
	while (e > a) {
		size_t k = e - 1;
		while (k > a && (s[k] & 0xc0) == 0x80 && e - k < 4)
			k--;
		if (!is_space_cp(s + k, e - k))
			break;
		e = k;
	}
	return e;
}

/* Where a line's text s[a, e) ends once its comment is cut. */
static size_t comment_cut(const unsigned char *s, size_t a, size_t e)
{
	bool quoted = false;

	for (size_t i = a; i < e; i++) {
		unsigned char c = s[i];
		if (c == '"') {
			if (quoted && i + 1 < e && s[i + 1] == '"')
				i++;
			else
				quoted = !quoted;
			continue;
		}
		if (quoted)
			continue;
		if (c == '/' && i + 1 < e && s[i + 1] == '/') {
			if (i > a && s[i - 1] == ':') {
				i++;
				continue;
			}
			return rstrip(s, a, i);
		}
		if (c == '#' || (c == ';' && i > a && (s[i - 1] == ' ' || s[i - 1] == '\t')))
			return rstrip(s, a, i);
	}
	return e;
}

/* Whether s[a, e), leading whitespace stripped, starts a comment line. */
static bool comment_line(const unsigned char *s, size_t a, size_t e)
{
	for (size_t k; a < e && a + (k = cp_len(s[a])) <= e && is_space_cp(s + a, k);)
		a += k;
	return a < e && (s[a] == '#' || s[a] == ';' || (s[a] == '/' && a + 1 < e && s[a + 1] == '/'));
}

/* The offset of the first byte that is not UTF-8 as Python decodes it, or n. */
static size_t utf8_end(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t k = cp_len(c), j;
		unsigned long cp;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c < 0xc2 || c > 0xf4 || i + k > n)
			return i;
		cp = c & (0x3f >> (k - 1));
		for (j = 1; j < k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return i;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
			return i;
		i += k;
	}
	return n;
}

/* Where the text after a removed block resumes: its offset in the output,
 * and the file's line there. */
typedef struct resume {
	size_t off;
	unsigned line;
} resume;

/* Universal newlines and block comments: s[0, n) into out, with where the
 * lines of out resume after each block. */
static bool drop_blocks(const unsigned char *s, size_t n, ap_buf *out, resume **rs, size_t *nrs)
{
	size_t cap = 0;
	unsigned line = 1;
	bool in = false, removed = false;
	unsigned char prev = 0;

	ap_xgrow((void **)rs, &cap, 1, sizeof **rs);
	(*rs)[0] = (resume){0, 1};
	*nrs = 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c == '\r' && i + 1 < n && s[i + 1] == '\n')
			continue;
		if (c == '\r')
			c = '\n';
		if (in) {
			if (prev == '*' && c == '/') {
				in = false;
				ap_xgrow((void **)rs, &cap, *nrs + 1, sizeof **rs);
				(*rs)[(*nrs)++] = (resume){out->len, line};
			}
			prev = c;
		} else {
			ap_buf_putc(out, (char)c);
			if (out->len >= 2 && memcmp(out->data + out->len - 2, "/*", 2) == 0) {
				out->len -= 2;
				in = removed = true;
				prev = 0;
			}
		}
		if (c == '\n')
			line++;
	}
	return removed;
}

/* The file's line of bytes of the text drop_blocks made, read in order. */
typedef struct liner {
	const resume *rs;
	size_t nrs, next, pos;
	unsigned line;
} liner;

static unsigned line_at(liner *l, const char *a, size_t x)
{
	for (;;) {
		while (l->next < l->nrs && l->rs[l->next].off <= l->pos)
			l->line = l->rs[l->next++].line;
		if (l->pos >= x)
			return l->line;
		if (a[l->pos++] == '\n')
			l->line++;
	}
}

/* Appends a[from, to) to out, noting the file's line of each line it starts. */
static void emit(ap_buf *out, const char *a, size_t from, size_t to, liner *l, unsigned **line_of,
                 size_t *nlines, size_t *cap)
{
	for (size_t x = from; x < to; x++) {
		if (out->len == 0 || out->data[out->len - 1] == '\n') {
			ap_xgrow((void **)line_of, cap, *nlines + 1, sizeof **line_of);
			(*line_of)[(*nlines)++] = line_at(l, a, x);
		}
		ap_buf_putc(out, a[x]);
	}
}

int ap_csv_parse_codegen(ap_csv **out, const char *data, size_t len, bool *stripped)
{
	const unsigned char *s = (const unsigned char *)data;
	ap_buf a = AP_BUF_INIT, text = AP_BUF_INIT;
	resume *rs = NULL;
	unsigned *line_of = NULL;
	size_t nrs, nlines = 0, cap = 0, bad, i = 0;
	liner l;
	int rc;

	*out = NULL;
	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3, len -= 3;
	if ((bad = utf8_end(s, len)) < len) {
		unsigned line = 1;
		for (size_t k = 0; k < bad; k++)
			line += s[k] == '\n' || (s[k] == '\r' && !(k + 1 < len && s[k + 1] == '\n'));
		ap_error_set("line %u: not UTF-8, which hsa/codegen.py cannot decode", line);
		return AP_EINPUT;
	}
	*stripped = drop_blocks(s, len, &a, &rs, &nrs);
	l = (liner){rs, nrs, 0, 0, 1};
	while (i < a.len) {
		const unsigned char *u = (const unsigned char *)a.data;
		size_t e = i, sep = 0, body_end, keep;
		while (e < a.len && u[e] != '\n' && (sep = split_at(u, e, a.len)) == 0)
			e++;
		/* The line is [i, e + its boundary); only an LF is set apart from its text. */
		if (e < a.len && u[e] == '\n') {
			body_end = e;
			e++;
		} else {
			e += sep;
			body_end = e;
		}
		if (comment_line(u, i, body_end)) {
			*stripped = true;
		} else {
			keep = comment_cut(u, i, body_end);
			*stripped |= keep < body_end;
			emit(&text, a.data, i, keep, &l, &line_of, &nlines, &cap);
			if (body_end < e)
				emit(&text, a.data, body_end, e, &l, &line_of, &nlines, &cap);
		}
		i = e;
	}
	rc = parse_text(out, text.data != NULL ? text.data : "", text.len, line_of, nlines);
	ap_buf_free(&a);
	ap_buf_free(&text);
	free(rs);
	free(line_of);
	return rc;
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
