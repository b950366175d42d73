/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/csv-table.h"

static ap_csv *table;

static int teardown(void **state)
{
	(void)state;
	ap_csv_free(table);
	table = NULL;
	return 0;
}

static bool stripped;

/* Parses len bytes from a copy of exactly that size, without a terminator,
 * so that the sanitizers catch a read past the end; as codegen reads a
 * kernel table when codegen. */
static int parse_as(const char *s, size_t len, bool codegen)
{
	char *copy = ap_xmalloc(len ? len : 1);
	int rc;

	memcpy(copy, s, len);
	ap_csv_free(table);
	table = NULL;
	stripped = false;
	rc = codegen ? ap_csv_parse_codegen(&table, copy, len, &stripped)
	             : ap_csv_parse(&table, copy, len);
	free(copy);
	if (rc < 0)
		assert_null(table);
	return rc;
}

static int parse_n(const char *s, size_t len)
{
	return parse_as(s, len, false);
}

static int parse(const char *s)
{
	return parse_n(s, strlen(s));
}

static void assert_fails(const char *s, size_t len, int code, const char *message)
{
	assert_int_equal(parse_n(s, len), code);
	assert_string_equal(ap_error_last(), message);
}

/* For a literal, whose NUL bytes count. */
#define FAILS(lit, code, message) assert_fails(lit, sizeof lit - 1, code, message)

static void test_mla_table(void **state)
{
	(void)state;
	assert_int_equal(parse("qType,kvType,Gqa,ps,qSeqLen,prefill,causal,lse,knl_name,co_name\n"
	                       "bf16,bf16,16,1,4,0,1,1,_ZN5aiter3mlaE,mla_a16w16.co\n"
	                       "fp8,fp8,128,0,1,0,0,0,_ZN5aiter4mla8E,mla_a8w8.co\n"),
	                 0);
	assert_int_equal(ap_csv_ncols(table), 10);
	assert_int_equal(ap_csv_nrows(table), 2);
	assert_string_equal(ap_csv_col_name(table, 0), "qType");
	assert_string_equal(ap_csv_col_name(table, 9), "co_name");
	assert_null(ap_csv_col_name(table, 10));
	assert_int_equal(ap_csv_col(table, "qType"), 0);
	assert_int_equal(ap_csv_col(table, "Gqa"), 2);
	assert_int_equal(ap_csv_col(table, "knl_name"), 8);
	assert_int_equal(ap_csv_col(table, "co_name"), 9);
	assert_int_equal(ap_csv_col(table, "gqa"), -1);
	assert_int_equal(ap_csv_col(table, ""), -1);
	assert_int_equal(ap_csv_row_line(table, 0), 2);
	assert_int_equal(ap_csv_row_line(table, 1), 3);
	assert_int_equal(ap_csv_row_line(table, 2), 0);
	assert_string_equal(ap_csv_field(table, 0, 8), "_ZN5aiter3mlaE");
	assert_string_equal(ap_csv_field(table, 1, 2), "128");
	assert_string_equal(ap_csv_field(table, 1, 9), "mla_a8w8.co");
	assert_null(ap_csv_field(table, 1, 10));
	assert_null(ap_csv_field(table, 2, 0));
}

static void test_header_only(void **state)
{
	(void)state;
	assert_int_equal(parse("a,b"), 0);
	assert_int_equal(ap_csv_ncols(table), 2);
	assert_int_equal(ap_csv_nrows(table), 0);
	assert_null(ap_csv_field(table, 0, 0));
}

static void test_line_ends(void **state)
{
	(void)state;
	/* BOM, CRLF, a lone CR and LF, and a last line without an end. */
	assert_int_equal(parse("\xef\xbb\xbf"
	                       "a,b\r\n1,2\r3,4\n5,6"),
	                 0);
	assert_string_equal(ap_csv_col_name(table, 0), "a");
	assert_int_equal(ap_csv_nrows(table), 3);
	assert_int_equal(ap_csv_row_line(table, 0), 2);
	assert_int_equal(ap_csv_row_line(table, 1), 3);
	assert_int_equal(ap_csv_row_line(table, 2), 4);
	assert_string_equal(ap_csv_field(table, 0, 1), "2");
	assert_string_equal(ap_csv_field(table, 1, 1), "4");
	assert_string_equal(ap_csv_field(table, 2, 1), "6");

	/* CR CR LF is two line ends. */
	assert_int_equal(parse("a\r\r\nx\r\n"), 0);
	assert_int_equal(ap_csv_nrows(table), 1);
	assert_int_equal(ap_csv_row_line(table, 0), 3);
	assert_string_equal(ap_csv_field(table, 0, 0), "x");

	/* A BOM only where it starts the data. */
	assert_int_equal(parse("a\n\xef\xbb\xbfx\n"), 0);
	assert_string_equal(ap_csv_field(table, 0, 0), "\xef\xbb\xbfx");
}

static void test_quoted(void **state)
{
	(void)state;
	assert_int_equal(parse("name,value\n"
	                       "\"a,b\",\"say \"\"hi\"\"\"\n"
	                       "\"two\nlines\",\"crlf\r\ninside\"\n"
	                       "\"cr\rinside\",x\n"
	                       "last,\"\"\n"),
	                 0);
	assert_int_equal(ap_csv_nrows(table), 4);
	assert_string_equal(ap_csv_field(table, 0, 0), "a,b");
	assert_string_equal(ap_csv_field(table, 0, 1), "say \"hi\"");
	assert_int_equal(ap_csv_row_line(table, 1), 3);
	assert_string_equal(ap_csv_field(table, 1, 0), "two\nlines");
	assert_string_equal(ap_csv_field(table, 1, 1), "crlf\r\ninside");
	/* The row after a quoted line break starts on the right line. */
	assert_int_equal(ap_csv_row_line(table, 2), 6);
	assert_string_equal(ap_csv_field(table, 2, 0), "cr\rinside");
	assert_int_equal(ap_csv_row_line(table, 3), 8);
	assert_string_equal(ap_csv_field(table, 3, 1), "");

	/* "" alone, and a doubled quote right after the opening one. */
	assert_int_equal(parse("a,b\n\"\"\"x\",\"\"\"\"\n"), 0);
	assert_string_equal(ap_csv_field(table, 0, 0), "\"x");
	assert_string_equal(ap_csv_field(table, 0, 1), "\"");

	/* A quote inside an unquoted field is an ordinary character. */
	assert_int_equal(parse("a,b\nsay \"hi\",x\"\"y\n"), 0);
	assert_string_equal(ap_csv_field(table, 0, 0), "say \"hi\"");
	assert_string_equal(ap_csv_field(table, 0, 1), "x\"\"y");
}

static void test_trimming(void **state)
{
	(void)state;
	assert_int_equal(parse(" qType ,\t\" kvType \"\t, Gqa\n"
	                       "  bf16 , \" padded \" ,\t16\t\n"
	                       "in side, \"\" ,\n"),
	                 0);
	/* Header names are trimmed even when quoted. */
	assert_string_equal(ap_csv_col_name(table, 0), "qType");
	assert_string_equal(ap_csv_col_name(table, 1), "kvType");
	assert_int_equal(ap_csv_col(table, "Gqa"), 2);
	/* Unquoted fields are trimmed; quoted ones are kept exactly. */
	assert_string_equal(ap_csv_field(table, 0, 0), "bf16");
	assert_string_equal(ap_csv_field(table, 0, 1), " padded ");
	assert_string_equal(ap_csv_field(table, 0, 2), "16");
	assert_string_equal(ap_csv_field(table, 1, 0), "in side");
	assert_string_equal(ap_csv_field(table, 1, 1), "");
	assert_string_equal(ap_csv_field(table, 1, 2), "");
}

static void test_blank_lines(void **state)
{
	(void)state;
	assert_int_equal(parse("\n \t\r\n"
	                       "a,b\n"
	                       "\n"
	                       "1,2\n"
	                       "   \n"
	                       "\r\n"
	                       "3,4\n"
	                       "\n\n"),
	                 0);
	assert_int_equal(ap_csv_nrows(table), 2);
	assert_int_equal(ap_csv_row_line(table, 0), 5);
	assert_int_equal(ap_csv_row_line(table, 1), 8);
	assert_string_equal(ap_csv_field(table, 1, 0), "3");
	/* A row of one empty quoted field is not blank. */
	assert_int_equal(parse("a\n\"\"\n"), 0);
	assert_int_equal(ap_csv_nrows(table), 1);
	assert_string_equal(ap_csv_field(table, 0, 0), "");
}

static void test_ragged_rows(void **state)
{
	(void)state;
	assert_int_equal(parse("a,b,c\n"
	                       "1,2,3,4,\"5\"\n"
	                       "1\n"
	                       "1,\n"
	                       "1,2,3,\n"),
	                 0);
	assert_int_equal(ap_csv_nrows(table), 4);
	assert_string_equal(ap_csv_field(table, 0, 2), "3");
	assert_null(ap_csv_field(table, 0, 3));
	assert_string_equal(ap_csv_field(table, 1, 0), "1");
	assert_null(ap_csv_field(table, 1, 1));
	assert_null(ap_csv_field(table, 1, 2));
	assert_string_equal(ap_csv_field(table, 2, 1), "");
	assert_null(ap_csv_field(table, 2, 2));
	assert_string_equal(ap_csv_field(table, 3, 2), "3");
	/* The rows after the ragged ones are where they were. */
	assert_int_equal(ap_csv_row_line(table, 3), 5);
}

static void test_header_names(void **state)
{
	(void)state;
	/* pandas writes an empty name for its index column. */
	assert_int_equal(parse(",M,N,K\n0,1,2,3\n"), 0);
	assert_int_equal(ap_csv_col(table, ""), 0);
	assert_int_equal(ap_csv_col(table, "K"), 3);
	assert_string_equal(ap_csv_field(table, 0, 0), "0");

	/* Lookups agree with a linear search over many names. */
	{
		ap_buf b = AP_BUF_INIT;
		for (int i = 0; i < 500; i++)
			ap_buf_printf(&b, "%scol%d", i ? "," : "", (i * 7919) % 500);
		ap_buf_putc(&b, '\n');
		assert_int_equal(parse(b.data), 0);
		ap_buf_free(&b);
		for (size_t c = 0; c < 500; c++)
			assert_int_equal(ap_csv_col(table, ap_csv_col_name(table, c)), (long)c);
		assert_int_equal(ap_csv_col(table, "col500"), -1);
		assert_int_equal(ap_csv_col(table, "col"), -1);
	}
}

static void test_errors(void **state)
{
	(void)state;
	FAILS("", AP_EINPUT, "empty table: no header row");
	FAILS("\xef\xbb\xbf", AP_EINPUT, "empty table: no header row");
	FAILS("\n  \r\n\t\n", AP_EINPUT, "empty table: no header row");

	FAILS("a,b\n1,\"open\n\n", AP_EINPUT, "line 2: unterminated quoted field");
	FAILS("\"a", AP_EINPUT, "line 1: unterminated quoted field");
	/* A doubled quote at the very end does not close the field. */
	FAILS("a\n\"x\"\"", AP_EINPUT, "line 2: unterminated quoted field");

	FAILS("a,b\n\"x\"y,2\n", AP_EINPUT,
	             "line 2: unexpected character after a closing quote");
	FAILS("a,b\n\"two\nlines\" z,2\n", AP_EINPUT,
	             "line 3: unexpected character after a closing quote");
	FAILS("\"a\"\"\"b\n", AP_EINPUT,
	             "line 1: unexpected character after a closing quote");

	FAILS("a,b,a\n", AP_EINPUT, "line 1: duplicate column 'a'");
	/* The first repeat in file order, on the header's own line. */
	FAILS("\n\nz,y,x,y,z\n", AP_EINPUT, "line 3: duplicate column 'y'");
	/* Names are compared trimmed. */
	FAILS("a, \"a\"\n", AP_EINPUT, "line 1: duplicate column 'a'");
	FAILS(",x,\n", AP_EINPUT, "line 1: duplicate column ''");

	FAILS("a,b\n1,2\n3,\0\n", AP_EINPUT, "line 3: NUL byte");
	FAILS("a\0b\n", AP_EINPUT, "line 1: NUL byte");
	FAILS("a\n\"x\ny\0\"\n", AP_EINPUT, "line 3: NUL byte");
	FAILS("a\n\"x\" \0\n", AP_EINPUT, "line 2: NUL byte");
	/* Even in a field past the header's count. */
	FAILS("a\n1,2,\0\n", AP_EINPUT, "line 2: NUL byte");
}

static void test_column_limit(void **state)
{
	ap_buf b = AP_BUF_INIT;

	(void)state;
	for (unsigned i = 0; i < AP_CSV_MAX_COLS; i++)
		ap_buf_printf(&b, "%sc%u", i ? "," : "", i);
	ap_buf_puts(&b, "\n1\n");
	assert_int_equal(parse(b.data), 0);
	assert_int_equal(ap_csv_ncols(table), AP_CSV_MAX_COLS);

	b.len -= 3;
	ap_buf_puts(&b, ",extra\n");
	assert_fails(b.data, b.len, AP_ELIMIT, "line 1: more than 4096 columns");
	ap_buf_free(&b);

	/* A data row's extra fields cost nothing and are no error. */
	for (unsigned i = 0; i < 100000; i++)
		ap_buf_puts(&b, i ? ",x" : "a\nx");
	assert_int_equal(parse(b.data), 0);
	assert_int_equal(ap_csv_nrows(table), 1);
	assert_string_equal(ap_csv_field(table, 0, 0), "x");
	ap_buf_free(&b);
}

static void test_row_limit(void **state)
{
	size_t len = 2 + 2 * (size_t)(AP_CSV_MAX_ROWS + 1);
	char *s = ap_xmalloc(len);

	(void)state;
	memcpy(s, "a\n", 2);
	for (size_t i = 2; i < len; i += 2)
		memcpy(s + i, "1\n", 2);
	assert_int_equal(parse_n(s, len - 2), 0);
	assert_int_equal(ap_csv_nrows(table), AP_CSV_MAX_ROWS);
	assert_int_equal(ap_csv_row_line(table, AP_CSV_MAX_ROWS - 1), AP_CSV_MAX_ROWS + 1);
	assert_fails(s, len, AP_ELIMIT, "line 1000002: more than 1000000 rows");
	free(s);
}

/* Time is linear in the input, whatever its shape. */
static void test_large_inputs(void **state)
{
	ap_buf b = AP_BUF_INIT;
	clock_t start = clock();

	(void)state;
	ap_buf_puts(&b, "a,b,c\n");
	for (int i = 0; i < 100000; i++)
		ap_buf_printf(&b, "%d,\"q\"\"%d\"\"\",  x y  \n", i, i);
	/* One quoted field of a million doubled quotes and line breaks. */
	ap_buf_putc(&b, '"');
	for (int i = 0; i < 500000; i++)
		ap_buf_puts(&b, i % 2 ? "\"\"" : "\n");
	ap_buf_puts(&b, "\",end\n");
	assert_int_equal(parse_n(b.data, b.len), 0);
	assert_int_equal(ap_csv_nrows(table), 100001);
	assert_string_equal(ap_csv_field(table, 99999, 1), "q\"99999\"");
	assert_string_equal(ap_csv_field(table, 99999, 2), "x y");
	assert_int_equal(strlen(ap_csv_field(table, 100000, 0)), 500000);
	assert_string_equal(ap_csv_field(table, 100000, 1), "end");
	assert_int_equal(ap_csv_row_line(table, 100000), 100002);
	ap_buf_free(&b);
	assert_true((double)(clock() - start) / CLOCKS_PER_SEC < 5.0);
}

/* Arbitrary bytes never crash the reader, with comments dropped or not, or
 * make it read past the data. */
static void test_random_bytes(void **state)
{
	static const char alphabet[] = {'a', ',', '"', '\n', '\r', ' ', '\t', '\0', 'b', '/', '*',
	                                '#', ';', ':', '\f', (char)0xc2, (char)0x85};
	char s[64];
	unsigned seed = 12345;

	(void)state;
	for (int r = 0; r < 40000; r++) {
		size_t len = (size_t)(r % 64);
		int rc;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			s[i] = alphabet[(seed >> 16) % sizeof alphabet];
		}
		rc = parse_as(s, len, r % 2);
		assert_true(rc == 0 || rc == AP_EINPUT);
		for (size_t row = 0; rc == 0 && row < ap_csv_nrows(table); row++) {
			assert_true(ap_csv_row_line(table, row) >= 1 &&
			            ap_csv_row_line(table, row) <= len + 1);
			for (size_t c = 0; c < ap_csv_ncols(table); c++) {
				const char *f = ap_csv_field(table, row, c);
				if (f != NULL)
					assert_true(strlen(f) < len);
			}
		}
	}
}

/* --- Comments as hsa/codegen.py drops them --------------------------------- */

#define CODEGEN(lit) parse_as(lit, sizeof lit - 1, true)

/* Row r's fields, joined by '|'. */
static void assert_row(size_t r, const char *want)
{
	ap_buf b = AP_BUF_INIT;

	for (size_t c = 0; c < ap_csv_ncols(table); c++) {
		const char *f = ap_csv_field(table, r, c);
		ap_buf_printf(&b, "%s%s", c ? "|" : "", f ? f : "(null)");
	}
	assert_string_equal(b.data ? b.data : "", want);
	ap_buf_free(&b);
}

static void test_codegen_comments(void **state)
{
	(void)state;
	/* A licence header, a commented-out kernel, comments after a row. */
	assert_int_equal(CODEGEN("// SPDX-License-Identifier: MIT\n"
	                         "// Copyright notice\n"
	                         "#\n"
	                         "qType,Gqa,knl_name\n"
	                         "bf16,16,k1 // the first\n"
	                         "# bf16,32,k2\n"
	                         "   ; fp8,64,k3\n"
	                         "\t// fp8,64,k4\n"
	                         "fp8,128,k5   # the last\n"),
	                 0);
	assert_true(stripped);
	assert_string_equal(ap_csv_col_name(table, 0), "qType");
	assert_int_equal(ap_csv_nrows(table), 2);
	assert_row(0, "bf16|16|k1");
	assert_int_equal(ap_csv_row_line(table, 0), 5);
	assert_row(1, "fp8|128|k5");
	assert_int_equal(ap_csv_row_line(table, 1), 9);

	/* Blocks, across lines and mid-row; rows keep the file's lines. */
	assert_int_equal(CODEGEN("/* a header\n"
	                         "   over lines */a,b\n"
	                         "1,/* mid */2\n"
	                         "/* kernels not built:\n"
	                         "3,4\n"
	                         "*/\n"
	                         "5,6/*\n"
	                         "*/7\n"
	                         "8,9\n"),
	                 0);
	assert_int_equal(ap_csv_nrows(table), 3);
	assert_row(0, "1|2");
	assert_int_equal(ap_csv_row_line(table, 0), 3);
	assert_row(1, "5|67");
	assert_int_equal(ap_csv_row_line(table, 1), 7);
	assert_row(2, "8|9");
	assert_int_equal(ap_csv_row_line(table, 2), 9);
	/* A block never closed takes the rest; one slash-star-slash is open. */
	assert_int_equal(CODEGEN("a,b\n1,2\n/*/ 3,4\n5,6\n"), 0);
	assert_int_equal(ap_csv_nrows(table), 1);
	/* The text around a removed block joins: slash, block, star opens
	 * another; a block's star-slash may start at its own star. */
	assert_int_equal(CODEGEN("a,b\n1,2//**/*x*/3\n"), 0);
	assert_row(0, "1|23");
	assert_int_equal(CODEGEN("a,b\n1,2/**/*x*/3\n"), 0);
	assert_row(0, "1|2*x*/3");
	/* Quotes: a comment mark inside them is text (not for blocks); a ; only
	 * after a space or tab, a // not after a colon. */
	assert_int_equal(CODEGEN("a,b,c\n"
	                         "\"x # y\",\"p \"\"// q\",3\n"
	                         "s;t,http://u,v ;w\n"
	                         "\"/* q\",r,\"*/\"\n"),
	                 0);
	assert_int_equal(ap_csv_nrows(table), 3);
	assert_row(0, "x # y|p \"// q|3");
	assert_row(1, "s;t|http://u|v");
	assert_row(2, "|(null)|(null)");
	/* CRLF and a lone CR are line ends; a form feed ends a line for
	 * splitlines but not its text, unless a comment is cut there. */
	assert_int_equal(CODEGEN("a,b\r\n# c\r\n1,2\r3,4 # x\f5,6\n"), 0);
	assert_int_equal(ap_csv_nrows(table), 2);
	assert_row(0, "1|2");
	assert_int_equal(ap_csv_row_line(table, 0), 3);
	assert_row(1, "3|45");
	assert_int_equal(CODEGEN("a,b\n1,\f2\n"), 0);
	assert_false(stripped);
	assert_row(0, "1|\f2");
	/* Unicode whitespace before a comment mark and before a cut. */
	assert_int_equal(CODEGEN("a,b\n\xc2\xa0\xe3\x80\x80# x\n1,2\xe2\x80\x83# y\n"), 0);
	assert_int_equal(ap_csv_nrows(table), 1);
	assert_row(0, "1|2");
	/* Nothing to drop: the same table, not stripped; a BOM is skipped. */
	assert_int_equal(CODEGEN("\xef\xbb\xbf" "a,b\n1,2\n"), 0);
	assert_false(stripped);
	assert_string_equal(ap_csv_col_name(table, 0), "a");
	/* Errors keep the file's lines. */
	assert_int_equal(CODEGEN("/*\n\n*/a,b\n\"1,2\n"), AP_EINPUT);
	assert_string_equal(ap_error_last(), "line 4: unterminated quoted field");
	assert_int_equal(CODEGEN("a,b\n1,2\n\xff\n"), AP_EINPUT);
	assert_string_equal(ap_error_last(), "line 3: not UTF-8, which hsa/codegen.py cannot decode");
	assert_int_equal(CODEGEN("a,b\n\xed\xa0\x80\n"), AP_EINPUT);
	assert_int_equal(CODEGEN("// only comments\n# here\n"), AP_EINPUT);
	assert_string_equal(ap_error_last(), "empty table: no header row");
	assert_int_equal(CODEGEN(""), AP_EINPUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_mla_table, teardown),
		cmocka_unit_test_teardown(test_header_only, teardown),
		cmocka_unit_test_teardown(test_line_ends, teardown),
		cmocka_unit_test_teardown(test_quoted, teardown),
		cmocka_unit_test_teardown(test_trimming, teardown),
		cmocka_unit_test_teardown(test_blank_lines, teardown),
		cmocka_unit_test_teardown(test_ragged_rows, teardown),
		cmocka_unit_test_teardown(test_header_names, teardown),
		cmocka_unit_test_teardown(test_errors, teardown),
		cmocka_unit_test_teardown(test_column_limit, teardown),
		cmocka_unit_test_teardown(test_row_limit, teardown),
		cmocka_unit_test_teardown(test_large_inputs, teardown),
		cmocka_unit_test_teardown(test_random_bytes, teardown),
		cmocka_unit_test_teardown(test_codegen_comments, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
