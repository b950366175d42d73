/* SPDX-License-Identifier: MIT */
/* libFuzzer target: bytes as AITER's CSV tables, split into files at
 * "#== PATH" lines (fuzz/fuzz-tree.h; the bytes before the first are
 * hsa/gfx950/mla/mla_asm.csv), the comment markers AITER's tables may
 * carry among the dictionary's words (fuzz/csv.dict). Each table is parsed and
 * held to what csv-table.h promises; then the csv kind runs over the tree
 * through the engine: the shipped packs, and a pack made from each table's
 * own header and first row: conditions of every operator (eq, ne, lt, le,
 * gt, ge, in; missing for a column the table lacks) and captures of its
 * columns, collecting the first row and all rows, with probes comparing the
 * captures. The manifest of the generated pack's scan must read back
 * through the core's reader. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/confine.h"
#include "engine/lang/csv-table.h"
#include "fuzz-tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Tables and columns a generated pack reads: a scan stays quick. */
#define MAX_TABLES 4
#define MAX_COLS 8

static void fail(const char *what)
{
	fprintf(stderr, "fuzz-csv: %s\n", what);
	__builtin_trap();
}

/* Lines as the reader counts them: LF, CRLF and a lone CR each end one. */
static unsigned count_lines(const char *s, size_t len)
{
	unsigned n = 1;

	for (size_t i = 0; i < len; i++)
		if (s[i] == '\n' || (s[i] == '\r' && !(i + 1 < len && s[i + 1] == '\n')))
			n++;
	return n;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static void check_table(const ap_csv *t, const char *data, size_t len)
{
	size_t ncols = ap_csv_ncols(t);
	unsigned nlines = count_lines(data, len);
	unsigned last = 0;

	if (ncols == 0 || ncols > AP_CSV_MAX_COLS || ap_csv_col_name(t, ncols) != NULL)
		fail("a header of no columns, or too many");
	for (size_t c = 0; c < ncols; c++) {
		const char *name = ap_csv_col_name(t, c);
		size_t n = strlen(name);
		if (ap_csv_col(t, name) != (long)c)
			fail("a column is not found by its name");
		if (n > 0 && (blank(name[0]) || blank(name[n - 1])))
			fail("a header name kept its blanks");
	}
	if (ap_csv_nrows(t) > AP_CSV_MAX_ROWS)
		fail("more rows than the cap");
	for (size_t r = 0; r < ap_csv_nrows(t); r++) {
		unsigned line = ap_csv_row_line(t, r);
		bool ended = false;
		if (line <= last || line > nlines)
			fail("a row's line out of order or past the end");
		last = line;
		for (size_t c = 0; c < ncols; c++) {
			bool absent = ap_csv_field(t, r, c) == NULL;
			if (ended && !absent)
				fail("a field after a missing one");
			ended = absent;
		}
		if (ap_csv_field(t, r, ncols) != NULL)
			fail("a field past the header's columns");
	}
	if (ap_csv_row_line(t, ap_csv_nrows(t)) != 0 || ap_csv_field(t, ap_csv_nrows(t), 0) != NULL)
		fail("a row past the last");
}

/* As the csv kind reads a number (number_of in kinds/csv.c), so that a
 * generated comparison is one it takes. */
static bool is_number(const char *s)
{
	char *end;
	double v;

	if (*s == '\0' || blank(*s))
		return false;
	errno = 0;
	v = strtod(s, &end);
	return *end == '\0' && errno != ERANGE && isfinite(v) &&
	       strspn(s, "+-0123456789.eE") == strlen(s);
}

typedef struct gen {
	ap_buf y;
	ap_buf probes;
	unsigned n;
} gen;

/* One condition on a column, with operator k of ops: value is the first
 * row's field, quoted its YAML form. The first HOLDING_OPS hold for the
 * first row whatever its value: on text, which le and ge do not compare, eq
 * stands for them. */
static const char *const ops[] = {"eq", "le", "ge", "in", "ne", "lt", "gt"};
#define HOLDING_OPS 4
#define NOPS 7

static void condition(ap_buf *b, const char *col, const char *value, const char *quoted,
                      unsigned k)
{
	bool numeric = k == 1 || k == 2 || k == 5 || k == 6;

	if (k == 3)
		ap_buf_printf(b, "%s: {in: [%s, '0', 1.0]}, ", col, quoted);
	else if (!numeric || is_number(value))
		ap_buf_printf(b, "%s: {%s: %s}, ", col, ops[k], quoted);
	else if (k < HOLDING_OPS)
		ap_buf_printf(b, "%s: {eq: %s}, ", col, quoted);
	else
		ap_buf_printf(b, "%s: {%s: 1}, ", col, ops[k]);
}

/* A rule with a condition on each column (its operator turned by the
 * column, among the first nops) and the captures of each; returns its id. */
static unsigned where_rule(gen *g, const char *qpath, const ap_csv *t, unsigned turn,
                           unsigned nops, bool all)
{
	size_t ncols = ap_csv_ncols(t) < MAX_COLS ? ap_csv_ncols(t) : MAX_COLS;
	ap_buf where = AP_BUF_INIT, capture = AP_BUF_INIT;
	bool cap0 = false;

	for (size_t c = 0; c < ncols; c++) {
		const char *field = ap_csv_field(t, 0, c);
		char *col = fuzz_yaml_quote(ap_csv_col_name(t, c));
		char *value = fuzz_yaml_quote(field != NULL ? field : "1");

		if (col != NULL && value != NULL) {
			condition(&where, col, field != NULL ? field : "1", value,
			          (turn + (unsigned)c) % nops);
			ap_buf_printf(&capture, "c%zu: %s, ", c, col);
			cap0 |= c == 0;
		}
		free(col);
		free(value);
	}
	g->n++;
	ap_buf_printf(&g->y,
	              "  - id: r%u\n    file: %s\n    csv:\n      where: {%s'no such': {eq: 1, "
	              "missing: 1}}\n      capture: {%s}\n%s",
	              g->n, qpath, where.len ? where.data : "", capture.len ? capture.data : "",
	              all ? "    collect: all\n" : "");
	if (cap0)
		ap_buf_printf(&g->probes,
		              "  - id: p%u\n    requires: {all: [r%u, {capture: r%u, name: c0, ne: ''}]}\n",
		              g->n, g->n, g->n);
	ap_buf_free(&where);
	ap_buf_free(&capture);
	return g->n;
}

/* The rules of one table: one whose conditions the first row meets (every
 * condition is then evaluated), one with every operator; then rules on a
 * column the table lacks, with and without a value for it, and one on every
 * row. */
static void table_rules(gen *g, const char *path, const ap_csv *t, unsigned index)
{
	char *qpath = fuzz_yaml_quote(path);
	unsigned holding, turned;

	if (qpath == NULL || ap_path_refusal(path) != NULL || ap_csv_col(t, "no such") >= 0) {
		free(qpath);
		return;
	}
	holding = where_rule(g, qpath, t, index, HOLDING_OPS, index % 2);
	turned = where_rule(g, qpath, t, index, NOPS, true);
	ap_buf_printf(&g->probes, "  - id: p%u_%u\n    requires: {any: [r%u, {not: r%u}]}\n",
	              holding, turned, holding, turned);
	g->n++;
	ap_buf_printf(&g->y,
	              "  - id: r%u\n    file: [absent.csv, %s]\n    csv: {where: {'no such': 1}}\n",
	              g->n, qpath);
	g->n++;
	ap_buf_printf(&g->y, "  - id: r%u\n    file: %s\n    csv: {}\n    collect: all\n", g->n,
	              qpath);
	ap_buf_printf(&g->probes, "  - id: p%u\n    requires: {any: [r%u, {not: r%u}]}\n", g->n,
	              g->n - 1, g->n);
	free(qpath);
}

static void scan_generated(const fuzz_tree *t, ap_csv *const *tables)
{
	gen g = {AP_BUF_INIT, AP_BUF_INIT, 0};

	ap_buf_puts(&g.y, "version: 1\nrules:\n");
	for (size_t i = 0; i < t->n && i < MAX_TABLES; i++)
		if (tables[i] != NULL)
			table_rules(&g, t->files[i].path, tables[i], (unsigned)i);
	if (g.n > 0)
		fuzz_scan_generated(t, &g.y, &g.probes);
	ap_buf_free(&g.y);
	ap_buf_free(&g.probes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ap_csv *tables[MAX_TABLES] = {NULL};
	fuzz_tree t;
	ap_reader *r;

	fuzz_tree_split(&t, (const char *)data, size, "hsa/gfx950/mla/mla_asm.csv");
	for (size_t i = 0; i < t.n && i < MAX_TABLES; i++) {
		/* An exact-size copy, so that ASan sees a read past the end. */
		char *bytes = ap_xmalloc(t.files[i].len ? t.files[i].len : 1);
		memcpy(bytes, t.files[i].data, t.files[i].len);
		ap_error_clear();
		if (ap_csv_parse(&tables[i], bytes, t.files[i].len) == 0)
			check_table(tables[i], bytes, t.files[i].len);
		else if (ap_error_last()[0] == '\0')
			fail("a refusal without a message");
		free(bytes);
	}
	r = fuzz_tree_reader(&t);
	fuzz_scan(fuzz_shipped_packs(), r, false);
	ap_reader_free(r);
	scan_generated(&t, tables);
	for (size_t i = 0; i < MAX_TABLES; i++)
		ap_csv_free(tables[i]);
	fuzz_tree_free(&t);
	ap_error_clear();
	return 0;
}
