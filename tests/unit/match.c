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
#include "engine/kind.h"
#include "engine/match.h"
#include "engine/lang/normalize.h"

struct fixture {
	ap_text text;
	ap_matcher *m;
	ap_match_list l;
};

static struct fixture fx;

static int teardown(void **state)
{
	ap_text_free(&fx.text);
	ap_matcher_free(fx.m);
	ap_match_list_free(&fx.l);
	memset(&fx, 0, sizeof fx);
	return 0;
}

/* Normalizes src, compiles pattern and runs it; returns the run's code. */
static int run(const char *src, ap_lang lang, ap_ws ws, const char *kind, const char *pattern,
               ap_collect collect)
{
	size_t off;

	teardown(NULL);
	assert_int_equal(ap_normalize(&fx.text, src, strlen(src), lang, ws), 0);
	assert_int_equal(ap_matcher_new(&fx.m, kind, pattern, ws, &off), 0);
	return ap_matcher_run(fx.m, &fx.text, collect, &fx.l);
}

static void assert_match(size_t i, unsigned line, const char *text)
{
	assert_true(i < fx.l.n);
	assert_int_equal(fx.l.v[i].line, line);
	assert_string_equal(fx.l.v[i].text, text);
}

static void test_literal(void **state)
{
	assert_int_equal(run("foo bar\nfoo foofoo\n", AP_LANG_TEXT, AP_WS_KEEP, "literal", "foo",
	                     AP_COLLECT_ALL),
	                 0);
	assert_int_equal(fx.l.n, 4);
	assert_match(0, 1, "foo bar");
	assert_match(1, 2, "foo foofoo");
	assert_match(3, 2, "foo foofoo");

	run("foo bar\nfoo\n", AP_LANG_TEXT, AP_WS_KEEP, "literal", "foo", AP_COLLECT_FIRST);
	assert_int_equal(fx.l.n, 1);
	assert_int_equal(fx.l.v[0].ncaps, 0);

	/* Non-overlapping. */
	run("aaaaa", AP_LANG_TEXT, AP_WS_KEEP, "literal", "aa", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 2);

	run("nothing here", AP_LANG_TEXT, AP_WS_KEEP, "literal", "there", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);
}

static void test_literal_strip(void **state)
{
	const char *src = "#define X \\\n"
	                  "  MLA_REDUCE_CASE_EF(NUM_HEAD, 24, // heads\n"
	                  "                     HEAD_DIM, 512, 1)\n"
	                  "#if 0\n"
	                  "MLA_REDUCE_CASE_EF(NUM_HEAD,16,HEAD_DIM,512,\n"
	                  "#endif\n";

	/* vLLM's needle, without whitespace. */
	run(src, AP_LANG_C, AP_WS_STRIP, "literal", "MLA_REDUCE_CASE_EF(NUM_HEAD,24,HEAD_DIM,512,",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 2, "  MLA_REDUCE_CASE_EF(NUM_HEAD, 24, // heads");
	/* A needle written with spaces loses them against a stripped text. */
	run(src, AP_LANG_C, AP_WS_STRIP, "literal", "NUM_HEAD, 24, HEAD_DIM, 512",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	/* ... but not against a kept one. */
	run(src, AP_LANG_C, AP_WS_KEEP, "literal", "NUM_HEAD,24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);
	/* The #if 0 block is gone. */
	run(src, AP_LANG_C, AP_WS_STRIP, "literal", "NUM_HEAD,16", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);
	/* Only whitespace would match everywhere: refused. */
	teardown(NULL);
	assert_int_equal(ap_matcher_new(&fx.m, "literal", " \t", AP_WS_STRIP, NULL), AP_EINPUT);
	assert_string_equal(ap_error_last(),
	                    "only whitespace, which 'normalize: strip-whitespace' removes");
}

static void test_token_boundaries(void **state)
{
	const char *src = "if (num_heads == 240) a();\n"       /* 1: longer number */
	                  "if (my_num_heads == 24) b();\n"     /* 2: longer identifier */
	                  "s = \"num_heads == 24\";\n"         /* 3: inside a string */
	                  "// num_heads == 24\n"               /* 4: inside a comment */
	                  "x = num_heads == 24u;\n"            /* 5: suffix */
	                  "x = num_heads == 24.5;\n"           /* 6: fraction */
	                  "x = num_heads === 24;\n"            /* 7: == then = */
	                  "c = 'n'; y = num_heads_2 == 24;\n"  /* 8: longer identifier */
	                  "if (num_heads==24) native();\n"     /* 9: yes */
	                  "if (num_heads\n"                    /* 10: yes, across lines */
	                  "    == 24 && x) go();\n"
	                  "R\"(num_heads == 24)\";\n";         /* 12: raw string */

	run(src, AP_LANG_C, AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 2);
	assert_match(0, 9, "if (num_heads==24) native();");
	assert_match(1, 10, "if (num_heads");

	run(src, AP_LANG_C, AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_FIRST);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 9, "if (num_heads==24) native();");

	/* A string literal is one token, matched whole. */
	run(src, AP_LANG_C, AP_WS_KEEP, "token", "s = \"num_heads == 24\"", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 3, "s = \"num_heads == 24\";");
	run(src, AP_LANG_C, AP_WS_KEEP, "token", "\"num_heads", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);

	/* Punctuators by longest match. */
	run("a->b; a - > c; x<<=2; y < <= 3;", AP_LANG_C, AP_WS_KEEP, "token", "a -> b",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	run("a->b; a - > c; x<<=2; y < <= 3;", AP_LANG_C, AP_WS_KEEP, "token", "<<=",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	/* Numbers: exponents, hex, separators are single tokens. */
	run("eps = 1e-5; h = 0x1F; n = 1'000; m = 1e - 5;", AP_LANG_C, AP_WS_KEEP, "token",
	    "1e-5", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	run("eps = 1e-5; h = 0x1F; n = 1'000;", AP_LANG_C, AP_WS_KEEP, "token", "1",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);
	run("eps = 1e-5; h = 0x1F; n = 1'000;", AP_LANG_C, AP_WS_KEEP, "token", "n = 1'000",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	/* A prefixed literal is one token. */
	run("L\"wide\" u8\"x\" L \"y\"", AP_LANG_C, AP_WS_KEEP, "token", "\"y\"",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
}

static void test_token_python(void **state)
{
	const char *src = "x = '''\nnum_heads == 24\n'''\n"
	                  "y = f\"num_heads == 24\"  # num_heads == 24\n"
	                  "if num_heads == 24:\n"
	                  "    z = a // 2  # floor\n";

	run(src, AP_LANG_PYTHON, AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 5, "if num_heads == 24:");
	/* // is one operator in Python. */
	run(src, AP_LANG_PYTHON, AP_WS_KEEP, "token", "a // 2", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	run(src, AP_LANG_PYTHON, AP_WS_KEEP, "token", "a / / 2", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);
}

static void test_token_many_candidates(void **state)
{
	ap_buf b = AP_BUF_INIT;
	char *src;

	/* Many near misses on one long line, then the real one. */
	for (int i = 0; i < 2000; i++)
		ap_buf_printf(&b, "my_num_heads == 24; num_heads == 24%d; \"num_heads == 24\"; ", i);
	ap_buf_puts(&b, "\nnum_heads == 24\n");
	src = ap_buf_detach(&b);
	run(src, AP_LANG_C, AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_int_equal(fx.l.v[0].line, 2);
	run(src, AP_LANG_PYTHON, AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_int_equal(fx.l.v[0].line, 2);
	teardown(NULL);
	free(src);
}

/* The token search judges candidates by their neighbouring bytes and lexes
 * only from a line start where no literal can span into the line. */
static void test_token_candidate_edges(void **state)
{
	ap_buf b = AP_BUF_INIT;
	char *src;

	/* At the very start and the very end of the text. */
	run("num_heads == 24", AP_LANG_C, AP_WS_KEEP, "token", "num_heads == 24",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 1, "num_heads == 24");
	run("num_heads", AP_LANG_C, AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);
	run("num_heads ==", AP_LANG_C, AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);
	for (int i = 0; i < 20; i++)
		ap_buf_printf(&b, "int v%d = num_heads * %d;\n", i, i);
	ap_buf_puts(&b, "num_heads == 24");
	src = ap_buf_detach(&b);
	run(src, AP_LANG_C, AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 21, "num_heads == 24");
	run(src, AP_LANG_C, AP_WS_KEEP, "token", "num_heads == 2", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);
	free(src);

	/* Right after a string literal that holds the first token. */
	run("s = \"num_heads\"; num_heads == 24;\n\"num_heads == 24\"num_heads == 24\n", AP_LANG_C,
	    AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 2);
	assert_match(0, 1, "s = \"num_heads\"; num_heads == 24;");
	assert_match(1, 2, "\"num_heads == 24\"num_heads == 24");

	/* After an identifier character, no token starts. */
	run("xnum_heads == 24; $num_heads == 24; 9num_heads == 24; \xc3\xa9num_heads == 24;",
	    AP_LANG_C, AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);
	run("f(124 ); f(x24 ); f(1.24 ); f(24 );", AP_LANG_C, AP_WS_KEEP, "token", "24 )",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);

	/* Digit separators and character literals. */
	run("n = 1'24; m = 0x1'24'00;", AP_LANG_C, AP_WS_KEEP, "token", "24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 0);
	run("c = '24';\nd = 24;", AP_LANG_C, AP_WS_KEEP, "token", "24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 2, "d = 24;");

	/* A raw string spans lines: its lines are no place to resume lexing. */
	run("s = R\"x(\nnum_heads == 24 )\"\nnum_heads == 24\n)x\";\nnum_heads == 24\n", AP_LANG_C,
	    AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 5, "num_heads == 24");
	/* R" inside a character literal starts no raw string. */
	run("c = 'R\"';\nnum_heads == 24\n", AP_LANG_C, AP_WS_KEEP, "token", "num_heads == 24",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 2, "num_heads == 24");
}

static void test_token_python_spans(void **state)
{
	/* A triple-quoted string over several lines, then the real one. */
	run("x = f\"\"\"\nnum_heads == 24\n\"\"\"; y = '''\nnum_heads == 24'''\nnum_heads == 24\n",
	    AP_LANG_PYTHON, AP_WS_KEEP, "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 5, "num_heads == 24");
	/* An escaped line end keeps a quoted string open. */
	run("s = 'a\\\nnum_heads == 24'\nnum_heads == 24\n", AP_LANG_PYTHON, AP_WS_KEEP,
	    "token", "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 3, "num_heads == 24");
	/* Outside a string it joins lines and hides nothing. */
	run("ok = a and \\\nnum_heads == 24\n", AP_LANG_PYTHON, AP_WS_KEEP, "token",
	    "num_heads == 24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 2, "num_heads == 24");
	/* A raw string's backslash escapes its quote all the same. */
	run("p = r'\\'num_heads == 24'\nnum_heads == 24\n", AP_LANG_PYTHON, AP_WS_KEEP,
	    "token", "num_heads == 24", AP_COLLECT_FIRST);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 2, "num_heads == 24");
	/* No digit separator in Python: '24' after a number is a string. */
	run("n = 1'24'\nm = 24\n", AP_LANG_PYTHON, AP_WS_KEEP, "token", "24", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_match(0, 2, "m = 24");
}

static void test_token_empty(void **state)
{
	ap_matcher *m = NULL;
	size_t off = 99;

	assert_int_equal(ap_matcher_new(&m, "token", " \t\n", AP_WS_KEEP, &off), AP_EINPUT);
	assert_null(m);
	assert_int_equal(off, 0);
	assert_string_equal(ap_error_last(), "token pattern has no tokens");
	assert_int_equal(ap_matcher_new(&m, "literal", "", AP_WS_KEEP, &off), AP_EINPUT);
	assert_string_equal(ap_error_last(), "empty literal");
}

static void assert_cap(size_t i, size_t k, const char *name, const char *value)
{
	assert_true(k < fx.l.v[i].ncaps);
	assert_string_equal(fx.l.v[i].caps[k].name, name);
	assert_string_equal(fx.l.v[i].caps[k].value, value);
}

static void test_regex_captures(void **state)
{
	const char *src = "// MLA_REDUCE_CASE_EF(NUM_HEAD, 99, HEAD_DIM, 1,\n"
	                  "MLA_REDUCE_CASE_EF(NUM_HEAD, 24, HEAD_DIM, 512, a)\n"
	                  "MLA_REDUCE_CASE_EF(NUM_HEAD, 16,\n"
	                  "                   HEAD_DIM, 128, b)\n";

	run(src, AP_LANG_C, AP_WS_STRIP, "regex",
	    "MLA_REDUCE_CASE_EF\\(NUM_HEAD,(?<heads>\\d+),HEAD_DIM,(?<head_dim>\\d+)", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 2);
	assert_match(0, 2, "MLA_REDUCE_CASE_EF(NUM_HEAD, 24, HEAD_DIM, 512, a)");
	assert_int_equal(fx.l.v[0].ncaps, 2);
	assert_cap(0, 0, "heads", "24");
	assert_cap(0, 1, "head_dim", "512");
	assert_match(1, 3, "MLA_REDUCE_CASE_EF(NUM_HEAD, 16,");
	assert_cap(1, 0, "heads", "16");
	assert_cap(1, 1, "head_dim", "128");

	run(src, AP_LANG_C, AP_WS_STRIP, "regex", "NUM_HEAD,(?<heads>\\d+)", AP_COLLECT_FIRST);
	assert_int_equal(fx.l.n, 1);
	assert_cap(0, 0, "heads", "24");

	/* Captures come in group order, not name order. */
	run("xy", AP_LANG_TEXT, AP_WS_KEEP, "regex", "(?<zeta>x)(y)(?<alpha>y)?", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_int_equal(fx.l.v[0].ncaps, 1);
	assert_cap(0, 0, "zeta", "x");
	run("xyz", AP_LANG_TEXT, AP_WS_KEEP, "regex", "(?<zeta>x)(?<alpha>y)(?<mid>z)",
	    AP_COLLECT_ALL);
	assert_int_equal(fx.l.v[0].ncaps, 3);
	assert_cap(0, 0, "zeta", "x");
	assert_cap(0, 1, "alpha", "y");
	assert_cap(0, 2, "mid", "z");
	/* An unset optional group is left out. */
	run("b", AP_LANG_TEXT, AP_WS_KEEP, "regex", "(?<x>a)?b", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	assert_int_equal(fx.l.v[0].ncaps, 0);
	/* An empty capture is kept. */
	run("ab", AP_LANG_TEXT, AP_WS_KEEP, "regex", "a(?<e>x*)b", AP_COLLECT_ALL);
	assert_int_equal(fx.l.v[0].ncaps, 1);
	assert_cap(0, 0, "e", "");
}

static void test_regex_empty_matches(void **state)
{
	/* As Python's re.findall('a*', 'baaac'): '', 'aaa', '', ''. */
	assert_int_equal(run("baaac", AP_LANG_TEXT, AP_WS_KEEP, "regex", "a*", AP_COLLECT_ALL),
	                 0);
	assert_int_equal(fx.l.n, 4);
	run("abc", AP_LANG_TEXT, AP_WS_KEEP, "regex", "x*", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 4);
	run("", AP_LANG_TEXT, AP_WS_KEEP, "regex", "x*", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 1);
	run("a\nb\n", AP_LANG_TEXT, AP_WS_KEEP, "regex", "(?m)^", AP_COLLECT_ALL);
	assert_int_equal(fx.l.n, 2);
	assert_match(1, 2, "b");
}

static void test_regex_limit(void **state)
{
	char *src = ap_xmalloc(5002);
	struct timespec t0, t1;
	double secs;

	memset(src, 'a', 5000);
	src[5000] = 'b';
	src[5001] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(run(src, AP_LANG_TEXT, AP_WS_KEEP, "regex", "(a+)+$", AP_COLLECT_ALL),
	                 AP_ELIMIT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	assert_true(secs < 10.0);
	assert_string_equal(ap_error_last(), "regex exceeded its match limit (10000000 steps)");
	assert_int_equal(fx.l.n, 0);
	free(src);
}

/* Each search stays under the match limit, but spends nearly all of it
 * before finding its match; collecting every match must still end. */
static void test_regex_run_time_limit(void **state)
{
	static const char segment[] = "aaaaaaaaaaaaaaaaaaaaax"; /* 21 a's */
	size_t seg_len = strlen(segment);
	size_t nseg = 1000;
	char *src = ap_xmalloc(nseg * seg_len + 1);
	struct timespec t0, t1;
	double secs;

	for (size_t k = 0; k < nseg; k++)
		memcpy(src + k * seg_len, segment, seg_len);
	src[nseg * seg_len] = '\0';
	assert_int_equal(run(src, AP_LANG_TEXT, AP_WS_KEEP, "regex", "(?:a+)+b|x",
	                     AP_COLLECT_FIRST),
	                 0);
	assert_int_equal(fx.l.n, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(run(src, AP_LANG_TEXT, AP_WS_KEEP, "regex", "(?:a+)+b|x",
	                     AP_COLLECT_ALL),
	                 AP_ELIMIT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	assert_true(secs < 10.0);
	assert_string_equal(ap_error_last(),
	                    "regex exceeded its time limit (1 s of CPU for all its matches in a file)");
	assert_true(fx.l.n < nseg);
	free(src);
}

static void test_regex_compile_error(void **state)
{
	ap_matcher *m = NULL;
	size_t off = 0;

	assert_int_equal(ap_matcher_new(&m, "regex", "NUM_HEAD,(\\d+", AP_WS_KEEP, &off),
	                 AP_EINPUT);
	assert_null(m);
	assert_string_equal(ap_error_last(), "missing closing parenthesis");
	assert_int_equal(off, 13);
	assert_int_equal(ap_matcher_new(&m, "regex", "a{2,1}", AP_WS_KEEP, &off), AP_EINPUT);
	assert_string_equal(ap_error_last(), "numbers out of order in {} quantifier");
	assert_int_equal(off, 5);
	assert_int_equal(ap_matcher_new(&m, "regex", "(?<1x>a)", AP_WS_KEEP, &off), AP_EINPUT);
	assert_int_equal(off, 3);
}

static void test_kind_table(void **state)
{
	ap_matcher *m;

	for (size_t i = 0; i < ap_nkinds; i++)
		assert_ptr_equal(ap_kind_find(ap_kinds[i]->key), ap_kinds[i]);
	assert_null(ap_kind_find("Literal"));
	assert_int_equal(ap_matcher_new(&m, "nope", "x", AP_WS_KEEP, NULL), AP_EINTERNAL);
	assert_string_equal(ap_error_last(), "'nope' is not a text kind");
}

/* --- vLLM compatibility ---------------------------------------------------- */

/* What Python's str.isspace() says of an ASCII character, written down from
 * the Python documentation: the six classic ones and the four separators. */
static bool py_ascii_space(char c)
{
	return strchr(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f", c) != NULL && c != '\0';
}

/* The reference: needle_stripped in "".join(src.split()). */
static bool vllm_contains(const char *src, const char *needle)
{
	char *s = ap_xstrdup(src);
	char *nd = ap_xstrdup(needle);
	char *w = s;
	bool found;

	for (const char *r = src; *r; r++)
		if (!py_ascii_space(*r))
			*w++ = *r;
	*w = '\0';
	w = nd;
	for (const char *r = needle; *r; r++)
		if (!py_ascii_space(*r))
			*w++ = *r;
	*w = '\0';
	found = strstr(s, nd) != NULL;
	free(s);
	free(nd);
	return found;
}

static unsigned rnd_state = 20240611;

static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 1664525u + 1013904223u;
	return (rnd_state >> 8) % n;
}

static void random_text(char *buf, size_t len, const char *alphabet)
{
	size_t na = strlen(alphabet);

	for (size_t i = 0; i < len; i++)
		buf[i] = alphabet[rnd((unsigned)na)];
	buf[len] = '\0';
}

static void compat_round(const char *alphabet, ap_lang lang, int rounds)
{
	char src[301];
	char needle[24];
	size_t agree_true = 0;

	for (int r = 0; r < rounds; r++) {
		size_t len = 1 + rnd(300);
		size_t nlen = 1 + rnd(12);
		bool want;
		random_text(src, len, alphabet);
		if (rnd(2)) {
			/* A piece of the source, so that many needles are found. */
			size_t at = rnd((unsigned)(len - (nlen < len ? nlen : len) + 1));
			memcpy(needle, src + at, nlen < len ? nlen : len);
			needle[nlen < len ? nlen : len] = '\0';
		} else {
			random_text(needle, nlen, alphabet);
		}
		/* A needle of whitespace only ("" in s) is refused when loaded. */
		if (strspn(needle, " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f") == strlen(needle))
			continue;
		want = vllm_contains(src, needle);
		run(src, lang, AP_WS_STRIP, "literal", needle, AP_COLLECT_FIRST);
		assert_int_equal(fx.l.n != 0, want);
		agree_true += want;
	}
	/* The rounds exercised both answers. */
	assert_true(agree_true > (size_t)rounds / 10);
	assert_true(agree_true < (size_t)rounds);
}

static void test_vllm_compat_text(void **state)
{
	/* Plain ASCII with every whitespace byte str.split() knows. */
	compat_round("ab \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f(),=_0124#/*\"'", AP_LANG_TEXT, 3000);
	compat_round("ab \n", AP_LANG_TEXT, 2000);
}

static void test_vllm_compat_c(void **state)
{
	/* Plain C-like source: no comments or literals, so the language rules
	 * have nothing to remove. */
	compat_round("ab \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f(),=_0124<>", AP_LANG_C, 3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_literal, teardown),
		cmocka_unit_test_teardown(test_literal_strip, teardown),
		cmocka_unit_test_teardown(test_token_boundaries, teardown),
		cmocka_unit_test_teardown(test_token_python, teardown),
		cmocka_unit_test_teardown(test_token_many_candidates, teardown),
		cmocka_unit_test_teardown(test_token_candidate_edges, teardown),
		cmocka_unit_test_teardown(test_token_python_spans, teardown),
		cmocka_unit_test(test_token_empty),
		cmocka_unit_test_teardown(test_regex_captures, teardown),
		cmocka_unit_test_teardown(test_regex_empty_matches, teardown),
		cmocka_unit_test_teardown(test_regex_limit, teardown),
		cmocka_unit_test_teardown(test_regex_run_time_limit, teardown),
		cmocka_unit_test(test_regex_compile_error),
		cmocka_unit_test(test_kind_table),
		cmocka_unit_test_teardown(test_vllm_compat_text, teardown),
		cmocka_unit_test_teardown(test_vllm_compat_c, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
