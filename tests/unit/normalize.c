/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "engine/lang/normalize.h"

static ap_text text;

static int teardown(void **state)
{
	ap_text_free(&text);
	return 0;
}

static const char *norm_n(const char *src, size_t len, ap_lang lang, ap_ws ws)
{
	ap_text_free(&text);
	assert_int_equal(ap_normalize(&text, src, len, lang, ws), 0);
	assert_int_equal(text.s[text.len], '\0');
	assert_int_equal(text.map[text.len], len);
	for (size_t i = 0; i + 1 < text.len; i++)
		assert_true(text.map[i] < text.map[i + 1] ||
		            (text.map[i] == text.map[i + 1] && (unsigned char)text.s[i] >= 0x80));
	return text.s;
}

static const char *norm(const char *src, ap_lang lang, ap_ws ws)
{
	return norm_n(src, strlen(src), lang, ws);
}

/* The original line where needle (in the normalized text) starts. */
static unsigned line_of(const char *needle, const char **line, size_t *len)
{
	const char *hit = strstr(text.s, needle);
	unsigned n;

	assert_non_null(hit);
	n = ap_text_line(&text, (size_t)(hit - text.s));
	ap_text_line_span(&text, n, line, len);
	return n;
}

static void assert_line(const char *needle, unsigned want_line, const char *want_text)
{
	const char *line;
	size_t len;

	assert_int_equal(line_of(needle, &line, &len), want_line);
	assert_int_equal(len, strlen(want_text));
	assert_memory_equal(line, want_text, len);
}

static void test_c_continuation(void **state)
{
	const char *src = "#define CASE(h) \\\n    if (n == h) \\\n        run<h>();\nint y;\n";

	assert_string_equal(norm(src, AP_LANG_C, AP_WS_KEEP),
	                    "#define CASE(h)     if (n == h)         run<h>();\nint y;\n");
	assert_string_equal(norm(src, AP_LANG_C, AP_WS_STRIP), "#defineCASE(h)if(n==h)run<h>();inty;");
	/* Backslash-CRLF joins too. */
	assert_string_equal(norm("A \\\r\n B\r\nC", AP_LANG_C, AP_WS_KEEP), "A  B\nC");
	/* A backslash not before a line end stays. */
	assert_string_equal(norm("a \\ b\\", AP_LANG_C, AP_WS_KEEP), "a \\ b\\");
	/* Plain text does not join. */
	assert_string_equal(norm("a\\\nb", AP_LANG_TEXT, AP_WS_KEEP), "a\\\nb");
}

static void test_c_comments(void **state)
{
	assert_string_equal(norm("a = 1; // num_heads == 24\nb", AP_LANG_C, AP_WS_KEEP),
	                    "a = 1;  \nb");
	/* A comment becomes one space in keep mode, nothing in strip mode. */
	assert_string_equal(norm("int/*x*/y", AP_LANG_C, AP_WS_KEEP), "int y");
	assert_string_equal(norm("int/*x*/y", AP_LANG_C, AP_WS_STRIP), "inty");
	assert_string_equal(norm("a /* 1\n2\n3 */ b", AP_LANG_C, AP_WS_KEEP), "a   b");
	/* A // comment continued by a backslash swallows the next line. */
	assert_string_equal(norm("a // c \\\n still\nb", AP_LANG_C, AP_WS_KEEP), "a  \nb");
	/* Unterminated block comment runs to the end. */
	assert_string_equal(norm("x /* open", AP_LANG_C, AP_WS_KEEP), "x  ");
	/* Division is not a comment. */
	assert_string_equal(norm("a / b /= c", AP_LANG_C, AP_WS_KEEP), "a / b /= c");
	/* TEXT keeps comment-looking text. */
	assert_string_equal(norm("a // b", AP_LANG_TEXT, AP_WS_KEEP), "a // b");
}

static void test_c_literals(void **state)
{
	assert_string_equal(norm("s = \"// not /* a */ comment\"; // real\n", AP_LANG_C, AP_WS_KEEP),
	                    "s = \"// not /* a */ comment\";  \n");
	assert_string_equal(norm("c = '\"'; /* x */ d = '\\''; // e\n", AP_LANG_C, AP_WS_KEEP),
	                    "c = '\"';   d = '\\'';  \n");
	assert_string_equal(norm("\"a\\\"b // c\" x // y", AP_LANG_C, AP_WS_KEEP),
	                    "\"a\\\"b // c\" x  ");
	/* Raw strings end at )delim" only. */
	assert_string_equal(norm("R\"x(a )\" // b)x\" // c", AP_LANG_C, AP_WS_KEEP),
	                    "R\"x(a )\" // b)x\"  ");
	assert_string_equal(norm("u8R\"(/*)\"/**/;", AP_LANG_C, AP_WS_KEEP), "u8R\"(/*)\" ;");
	/* A delimiter has at most 16 characters: with 17 the literal is an
	 * ordinary, unterminated one, ending at its line end. */
	assert_string_equal(norm("R\"0123456789abcdef(x\n// y\n)0123456789abcdef\"",
	                         AP_LANG_C, AP_WS_KEEP),
	                    "R\"0123456789abcdef(x\n// y\n)0123456789abcdef\"");
	assert_string_equal(norm("R\"0123456789abcdefg(x\n// y\n)0123456789abcdefg\"",
	                         AP_LANG_C, AP_WS_KEEP),
	                    "R\"0123456789abcdefg(x\n \n)0123456789abcdefg\"");
	/* An identifier ending in R is no raw-string prefix. */
	assert_string_equal(norm("FOR\"(\" // c", AP_LANG_C, AP_WS_KEEP), "FOR\"(\"  ");
	/* An unterminated literal ends at its line end. */
	assert_string_equal(norm("s = \"abc\nint x; // c\n", AP_LANG_C, AP_WS_KEEP),
	                    "s = \"abc\nint x;  \n");
	/* Digit separators do not open a character literal. */
	assert_string_equal(norm("x = 1'000'000; c = 'a'; // q\n", AP_LANG_C, AP_WS_KEEP),
	                    "x = 1'000'000; c = 'a';  \n");
	/* A continuation inside a literal is joined. */
	assert_string_equal(norm("\"ab\\\ncd\" // x", AP_LANG_C, AP_WS_KEEP), "\"abcd\"  ");
	/* Strip mode strips inside literals too, as vLLM's split() does. */
	assert_string_equal(norm("f(\"a b\")", AP_LANG_C, AP_WS_STRIP), "f(\"ab\")");
}

static void test_c_if0(void **state)
{
	assert_string_equal(norm("a\n#if 0\nb\n#endif\nc\n", AP_LANG_C, AP_WS_KEEP), "a\n\nc\n");
	/* Nested conditionals inside the dropped block. */
	assert_string_equal(norm("#if 0\n#if 1\nx\n#else\ny\n#endif\nz\n#endif\nw\n", AP_LANG_C,
	                         AP_WS_KEEP),
	                    "\nw\n");
	assert_string_equal(norm("#if 0\n#ifdef A\n#elif B\n#endif\n#endif\nw\n", AP_LANG_C,
	                         AP_WS_KEEP),
	                    "\nw\n");
	/* The #else branch of an #if 0 is kept; the directive lines go. */
	assert_string_equal(norm("#if 0\nold\n#else\nnew\n#endif\n", AP_LANG_C, AP_WS_KEEP),
	                    "\nnew\n#endif\n");
	assert_string_equal(norm("#if 0\nold\n#elif X\nnew\n#endif\n", AP_LANG_C, AP_WS_KEEP),
	                    "\nnew\n#endif\n");
	/* Spaces around the '#' and a trailing comment. */
	assert_string_equal(norm("k\n  #  if 0 // off\nx\n # endif\ny", AP_LANG_C, AP_WS_KEEP),
	                    "k\n\ny");
	assert_string_equal(norm("#if\t0\r\nx\r\n#endif\r\ny", AP_LANG_C, AP_WS_KEEP), "\ny");
	/* Not #if 0. */
	assert_string_equal(norm("#if 0x1\nx\n#endif\n", AP_LANG_C, AP_WS_KEEP),
	                    "#if 0x1\nx\n#endif\n");
	assert_string_equal(norm("#if 00\nx\n#endif\n", AP_LANG_C, AP_WS_KEEP),
	                    "#if 00\nx\n#endif\n");
	assert_string_equal(norm("#if 10\nx\n#endif\n", AP_LANG_C, AP_WS_KEEP),
	                    "#if 10\nx\n#endif\n");
	/* A comment inside the block hides an #endif. */
	assert_string_equal(norm("#if 0\n/*\n#endif\n*/\nx\n#endif\ny\n", AP_LANG_C, AP_WS_KEEP),
	                    "\ny\n");
	/* A continued line is no directive start. */
	assert_string_equal(norm("#if 0\nx \\\n#endif\n#endif\ny\n", AP_LANG_C, AP_WS_KEEP),
	                    "\ny\n");
	/* The #endif line's comment running on past the line end. */
	assert_string_equal(norm("#if 0\nx\n#endif /* a\nb */ y\nz\n", AP_LANG_C, AP_WS_KEEP),
	                    "  y\nz\n");
	/* Never closed: dropped to the end. */
	assert_string_equal(norm("a\n#if 0\nb\n", AP_LANG_C, AP_WS_KEEP), "a\n");
	/* Strip mode too. */
	assert_string_equal(norm("a\n#if 0\nb\n#endif\nc\n", AP_LANG_C, AP_WS_STRIP), "ac");
	/* Python and text have no preprocessor. */
	assert_string_equal(norm("#if 0\nx\n#endif\n", AP_LANG_TEXT, AP_WS_KEEP),
	                    "#if 0\nx\n#endif\n");
}

static void test_crlf_bom(void **state)
{
	const char *line;
	size_t len;

	assert_string_equal(norm("a\r\nb\r\n", AP_LANG_TEXT, AP_WS_KEEP), "a\nb\n");
	assert_string_equal(norm("a\rb", AP_LANG_TEXT, AP_WS_KEEP), "a\rb");
	assert_string_equal(norm("a\r\nb // c\r\nd", AP_LANG_C, AP_WS_KEEP), "a\nb  \nd");
	assert_string_equal(norm("x = 1 # c\r\ny", AP_LANG_PYTHON, AP_WS_KEEP), "x = 1  \ny");

	norm("ab\r\ncd\r\n", AP_LANG_TEXT, AP_WS_KEEP);
	assert_int_equal(text.nlines, 2);
	assert_line("cd", 2, "cd");
	assert_line("ab", 1, "ab");

	assert_string_equal(norm("\xef\xbb\xbfint x;\nint y;", AP_LANG_C, AP_WS_KEEP),
	                    "int x;\nint y;");
	assert_int_equal(text.map[0], 3);
	assert_line("int x", 1, "int x;");
	assert_line("int y", 2, "int y;");
	/* A BOM-looking sequence later on is ordinary text. */
	assert_string_equal(norm("a\xef\xbb\xbf", AP_LANG_TEXT, AP_WS_KEEP), "a\xef\xbb\xbf");

	norm("", AP_LANG_C, AP_WS_KEEP);
	assert_int_equal(text.len, 0);
	assert_int_equal(ap_text_line(&text, 0), 1);
	ap_text_line_span(&text, 1, &line, &len);
	assert_int_equal(len, 0);
}

static void test_python(void **state)
{
	const char *src = "x = 1  # num_heads == 24\n"
	                  "s = '# not'\n"
	                  "t = \"\"\"doc # no\n\"\"\" # yes\n"
	                  "u = r'\\'' # c\n"
	                  "v = b\"\\\"#\" + f'{a}#' # d\n";

	assert_string_equal(norm(src, AP_LANG_PYTHON, AP_WS_KEEP),
	                    "x = 1   \n"
	                    "s = '# not'\n"
	                    "t = \"\"\"doc # no\n\"\"\"  \n"
	                    "u = r'\\''  \n"
	                    "v = b\"\\\"#\" + f'{a}#'  \n");
	assert_string_equal(norm("a = '''x\n'# y'''#z\nb", AP_LANG_PYTHON, AP_WS_STRIP),
	                    "a='''x'#y'''b");
	/* Unterminated single-quoted string ends at the line end. */
	assert_string_equal(norm("s = 'abc\n# c\nd", AP_LANG_PYTHON, AP_WS_KEEP), "s = 'abc\n \nd");
	/* A lone CR ends a line, as CPython reads it: the comment ends there,
	 * the CR reads as LF, and the line table counts it. */
	assert_string_equal(norm("# c\rdef f(): pass\r", AP_LANG_PYTHON, AP_WS_KEEP),
	                    " \ndef f(): pass\n");
	assert_int_equal(text.nlines, 2);
	assert_line("def f", 2, "def f(): pass");
	assert_string_equal(norm("s = '''a\rb'''\r\nt = 'x\ry'\r", AP_LANG_PYTHON, AP_WS_KEEP),
	                    "s = '''a\nb'''\nt = 'x\ny'\n");
	assert_int_equal(text.nlines, 4);
	assert_line("'''a", 1, "s = '''a");
	assert_line("t =", 3, "t = 'x");
	assert_line("y'", 4, "y'");
	assert_string_equal(norm("x = 1 # c\ry = 2", AP_LANG_PYTHON, AP_WS_STRIP), "x=1y=2");
	/* C comments mean nothing in Python. */
	assert_string_equal(norm("a // b /* c */", AP_LANG_PYTHON, AP_WS_KEEP), "a // b /* c */");
}

/* In keep mode a Python name that is not ASCII reads as CPython binds it,
 * NFKC-normalized; strings, comments and what is no name stay as written,
 * and strip mode is vLLM's text, byte for byte. */
static void test_python_names(void **state)
{
	/* ﬁnd(cafe\u0301, ｘ) + '\ufb01' # ﬁ, then a name NFKC makes longer */
	const char *src = "\xef\xac\x81nd(cafe\xcc\x81, \xef\xbd\x98) + '\xef\xac\x81' # \xef\xac\x81\n"
	                  "y\xef\xb7\xb4 = 1 \xe2\x86\x92 x\xc2\xa0z\n";

	assert_string_equal(norm(src, AP_LANG_PYTHON, AP_WS_KEEP),
	                    "find(caf\xc3\xa9, x) + '\xef\xac\x81'  \n"
	                    "y\xd9\x85\xd8\xad\xd9\x85\xd8\xaf = 1 "
	                    "\xe2\x86\x92 x\xc2\xa0z\n");
	assert_line("find", 1, "\xef\xac\x81nd(cafe\xcc\x81, \xef\xbd\x98) + '\xef\xac\x81' # \xef\xac\x81");
	assert_line("caf", 1, "\xef\xac\x81nd(cafe\xcc\x81, \xef\xbd\x98) + '\xef\xac\x81' # \xef\xac\x81");
	assert_line(" = 1", 2, "y\xef\xb7\xb4 = 1 \xe2\x86\x92 x\xc2\xa0z");
	assert_int_equal(text.map[0], 0);
	assert_int_equal(text.map[4], 5);
	assert_string_equal(norm("\xef\xac\x81nd = 1\n", AP_LANG_PYTHON, AP_WS_STRIP),
	                    "\xef\xac\x81nd=1");
	/* A name made longer at the end of the file grows the text. */
	assert_string_equal(norm("\xef\xb7\xb4", AP_LANG_PYTHON, AP_WS_KEEP),
	                    "\xd9\x85\xd8\xad\xd9\x85\xd8\xaf");
	assert_int_equal(text.map[7], 2);
}

static void test_strip_whitespace_set(void **state)
{
	/* Every character Python's str.isspace() accepts, in UTF-8. */
	static const char src[] = "a\tb\nc\vd\fe\rf g\x1ch\x1di\x1ej\x1fk"
	                          "\xc2\x85l\xc2\xa0m\xe1\x9a\x80n\xe2\x80\x80o\xe2\x80\x8ap"
	                          "\xe2\x80\xa8q\xe2\x80\xa9r\xe2\x80\xafs\xe2\x81\x9ft\xe3\x80\x80u";

	assert_string_equal(norm_n(src, sizeof src - 1, AP_LANG_TEXT, AP_WS_STRIP),
	                    "abcdefghijklmnopqrstu");
	/* Look-alikes that are not whitespace stay: U+200B, U+00A9, U+2081. */
	assert_string_equal(norm("a\xe2\x80\x8b b\xc2\xa9 c\xe2\x82\x81", AP_LANG_TEXT, AP_WS_STRIP),
	                    "a\xe2\x80\x8b" "b\xc2\xa9" "c\xe2\x82\x81");
	/* A truncated sequence at the end is kept as it is. */
	assert_string_equal(norm("a \xe2\x80", AP_LANG_TEXT, AP_WS_STRIP), "a\xe2\x80");
	/* Keep mode leaves all of them. */
	assert_string_equal(norm("a\xc2\xa0 b", AP_LANG_TEXT, AP_WS_KEEP), "a\xc2\xa0 b");
}

static void test_offset_map_lines(void **state)
{
	const char *src = "/* line1\n"
	                  " line2\n"
	                  " line3 */\n"
	                  "#define M(x) \\\n"
	                  "  num_heads == 24 /* c */ \\\n"
	                  "  && head_dim == 512\n"
	                  "#if 0\n"
	                  "dead\n"
	                  "#endif\n"
	                  "int z; // tail\n";

	norm(src, AP_LANG_C, AP_WS_KEEP);
	assert_line("num_heads", 5, "  num_heads == 24 /* c */ \\");
	assert_line("head_dim", 6, "  && head_dim == 512");
	assert_line("#define", 4, "#define M(x) \\");
	assert_line("int z", 10, "int z; // tail");
	assert_null(strstr(text.s, "dead"));
	assert_int_equal(text.nlines, 10);

	norm(src, AP_LANG_C, AP_WS_STRIP);
	assert_line("num_heads==24", 5, "  num_heads == 24 /* c */ \\");
	assert_line("&&head_dim", 6, "  && head_dim == 512");
	assert_line("intz;", 10, "int z; // tail");
	/* The end of the text maps to the last line. */
	assert_int_equal(ap_text_line(&text, text.len), 10);
	assert_int_equal(ap_text_line(&text, text.len + 100), 10);
	{
		const char *line;
		size_t len;
		ap_text_line_span(&text, 11, &line, &len);
		assert_int_equal(len, 0);
	}
}

static void test_lang_names(void **state)
{
	static const char *const c_files[] = {"a.c",   "a.h",  "x/a.cc", "a.cpp", "a.cxx",
	                                      "a.hpp", "a.cu", "a.cuh",  "a.hip", "a.inc"};

	for (size_t i = 0; i < sizeof c_files / sizeof c_files[0]; i++)
		assert_int_equal(ap_lang_for_path(c_files[i]), AP_LANG_C);
	assert_int_equal(ap_lang_for_path("aiter/ops/mla.py"), AP_LANG_PYTHON);
	assert_int_equal(ap_lang_for_path("hsa/gfx942/mla/mla_asm.csv"), AP_LANG_TEXT);
	assert_int_equal(ap_lang_for_path("Makefile"), AP_LANG_TEXT);
	assert_int_equal(ap_lang_for_path("dir.c/README"), AP_LANG_TEXT);
	assert_int_equal(ap_lang_for_path(".cu"), AP_LANG_TEXT);
	assert_int_equal(ap_lang_for_path("a.CU"), AP_LANG_TEXT);
	assert_string_equal(ap_lang_name(AP_LANG_AUTO), "auto");
	assert_string_equal(ap_lang_name(AP_LANG_TEXT), "text");
	assert_string_equal(ap_lang_name(AP_LANG_C), "c");
	assert_string_equal(ap_lang_name(AP_LANG_PYTHON), "python");
	assert_string_equal(ap_ws_name(AP_WS_KEEP), "keep");
	assert_string_equal(ap_ws_name(AP_WS_STRIP), "strip-whitespace");
}

static void test_too_large(void **state)
{
	ap_text t;

	/* The length is refused before any byte is read. */
	assert_int_equal(ap_normalize(&t, "", (size_t)UINT32_MAX, AP_LANG_C, AP_WS_KEEP), AP_ELIMIT);
	assert_string_equal(ap_error_last(),
	                    "input of 4294967295 bytes is larger than the 4 GiB the offset map "
	                    "can address");
	ap_text_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_c_continuation, teardown),
		cmocka_unit_test_teardown(test_c_comments, teardown),
		cmocka_unit_test_teardown(test_c_literals, teardown),
		cmocka_unit_test_teardown(test_c_if0, teardown),
		cmocka_unit_test_teardown(test_crlf_bom, teardown),
		cmocka_unit_test_teardown(test_python, teardown),
		cmocka_unit_test_teardown(test_python_names, teardown),
		cmocka_unit_test_teardown(test_strip_whitespace_set, teardown),
		cmocka_unit_test_teardown(test_offset_map_lines, teardown),
		cmocka_unit_test(test_lang_names),
		cmocka_unit_test(test_too_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
