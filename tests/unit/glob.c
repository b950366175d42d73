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
#include "engine/lang/glob-pattern.h"

static ap_glob *compile(const char *pattern)
{
	ap_glob *g;
	size_t off = 12345;

	assert_int_equal(ap_glob_new(&g, pattern, &off), 0);
	assert_int_equal(off, 12345);
	return g;
}

static bool matches(const char *pattern, const char *path)
{
	ap_glob *g = compile(pattern);
	bool m = ap_glob_match(g, path);

	ap_glob_free(g);
	return m;
}

struct case_ {
	const char *pattern;
	const char *path;
	bool want;
};

static void run_cases(const struct case_ *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (matches(c[i].pattern, c[i].path) != c[i].want)
			fail_msg("'%s' against '%s': expected %s", c[i].path, c[i].pattern,
			         c[i].want ? "a match" : "none");
}

static void test_segments(void **state)
{
	ap_glob *g = compile("aiter/configs/**/kimik3_*_tuned_fmoe.csv");

	(void)state;
	assert_int_equal(ap_glob_nsegments(g), 4);
	assert_int_equal(ap_glob_segment_kind(g, 0), AP_GLOB_LITERAL);
	assert_string_equal(ap_glob_segment_text(g, 0), "aiter");
	assert_int_equal(ap_glob_segment_kind(g, 1), AP_GLOB_LITERAL);
	assert_string_equal(ap_glob_segment_text(g, 1), "configs");
	assert_int_equal(ap_glob_segment_kind(g, 2), AP_GLOB_ANY_DEPTH);
	assert_string_equal(ap_glob_segment_text(g, 2), "**");
	assert_int_equal(ap_glob_segment_kind(g, 3), AP_GLOB_PATTERN);
	assert_string_equal(ap_glob_segment_text(g, 3), "kimik3_*_tuned_fmoe.csv");

	assert_true(ap_glob_segment_match(g, 0, "aiter"));
	assert_false(ap_glob_segment_match(g, 0, "aiter2"));
	assert_true(ap_glob_segment_match(g, 2, "model_configs"));
	assert_false(ap_glob_segment_match(g, 2, ".git"));
	assert_true(ap_glob_segment_match(g, 3, "kimik3_a4w4_tuned_fmoe.csv"));
	assert_false(ap_glob_segment_match(g, 3, "kimik3_a4w4_tuned_fmoe.csv.bak"));
	/* Not names. */
	assert_false(ap_glob_segment_match(g, 2, ""));
	assert_false(ap_glob_segment_match(g, 2, "."));
	assert_false(ap_glob_segment_match(g, 2, ".."));
	assert_false(ap_glob_segment_match(g, 2, "a/b"));
	ap_glob_free(g);

	/* Set brackets make a pattern; other punctuation is literal. */
	g = compile("a]b/x\\y/[ab]/c?/*");
	assert_int_equal(ap_glob_segment_kind(g, 0), AP_GLOB_LITERAL);
	assert_int_equal(ap_glob_segment_kind(g, 1), AP_GLOB_LITERAL);
	assert_int_equal(ap_glob_segment_kind(g, 2), AP_GLOB_PATTERN);
	assert_int_equal(ap_glob_segment_kind(g, 3), AP_GLOB_PATTERN);
	assert_int_equal(ap_glob_segment_kind(g, 4), AP_GLOB_PATTERN);
	ap_glob_free(g);
}

static void test_wildcards(void **state)
{
	static const struct case_ cases[] = {
		{"hsa/gfx950/mla/mla_asm.csv", "hsa/gfx950/mla/mla_asm.csv", true},
		{"hsa/gfx950/mla/mla_asm.csv", "hsa/gfx950/mla/mla_asm.csv2", false},
		{"hsa/gfx950/mla/mla_asm.csv", "hsa/gfx950/mla", false},
		{"hsa/gfx950/mla", "hsa/gfx950/mla/mla_asm.csv", false},
		{"hsa/*/mla/mla_asm.csv", "hsa/gfx942/mla/mla_asm.csv", true},
		{"hsa/*/mla/mla_asm.csv", "hsa/gfx942/x/mla/mla_asm.csv", false},
		{"hsa/gfx9?\?/mla/*.co", "hsa/gfx950/mla/mla_a16w16.co", true},
		{"hsa/gfx9?\?/mla/*.co", "hsa/gfx90a1/mla/mla_a16w16.co", false},
		{"*", "", false},
		{"*", "a", true},
		{"a*", "a", true},
		{"*a", "a", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyyca", false},
		{"a*b*c", "acb", false},
		{"*.csv", "a.csv.csv", true},
		{"*x*", "aaa", false},
		{"?", "ab", false},
		{"??", "ab", true},
		{"a?c", "a/c", false},
		{"[abc]", "b", true},
		{"[abc]", "d", false},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[!a]", "b", true},
		{"[!a]", "a", false},
		{"[!a-z]*", "Config", true},
		{"[!a-z]*", "config", false},
		{"[]]", "]", true},
		{"[!]]", "]", false},
		{"[!]]", "a", true},
		{"[-a]", "-", true},
		{"[a-]", "-", true},
		{"[*]", "*", true},
		{"[*]", "a", false},
		{"[?]", "?", true},
		{"x\\y", "x\\y", true},
		{"gfx9[0-4][0-9]", "gfx942", true},
		{"gfx9[0-4][0-9]", "gfx950", false},
		/* Bytes past ASCII are bytes. */
		{"caf?", "caf\xc3\xa9", false},
		{"caf??", "caf\xc3\xa9", true},
		{"[\xc3][\xa9]", "\xc3\xa9", true},
	};

	(void)state;
	run_cases(cases, sizeof cases / sizeof *cases);
}

static void test_any_depth(void **state)
{
	static const struct case_ cases[] = {
		{"aiter/configs/**/kimik3_a4w4_tuned_fmoe.csv",
		 "aiter/configs/kimik3_a4w4_tuned_fmoe.csv", true},
		{"aiter/configs/**/kimik3_a4w4_tuned_fmoe.csv",
		 "aiter/configs/model_configs/kimik3_a4w4_tuned_fmoe.csv", true},
		{"aiter/configs/**/kimik3_a4w4_tuned_fmoe.csv",
		 "aiter/configs/a/b/c/kimik3_a4w4_tuned_fmoe.csv", true},
		{"aiter/configs/**/kimik3_a4w4_tuned_fmoe.csv", "aiter/kimik3_a4w4_tuned_fmoe.csv",
		 false},
		{"**", "a", true},
		{"**", "a/b/c", true},
		{"**/x", "x", true},
		{"**/x", "a/b/x", true},
		{"**/x", "a/b/x/y", false},
		{"a/**", "a", true},
		{"a/**", "a/b/c", true},
		{"a/**", "b/c", false},
		{"a/**/b/**/c", "a/b/c", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/c/b", false},
		{"**/**", "a/b", true},
		{"**/*.py", "a/b/c.py", true},
		{"**/*.py", "c.py", true},
		{"**/*.py", "a/b/c.pyc", false},
		/* ** then a pattern that the ** could also take. */
		{"**/a/*", "a/a/a/a", true},
		{"**/a/b", "a/a/b/a/b", true},
		{"**/a/b", "a/a/b/a/c", false},
	};

	(void)state;
	run_cases(cases, sizeof cases / sizeof *cases);
}

static void test_hidden(void **state)
{
	static const struct case_ cases[] = {
		{"*", ".git", false},
		{"?git", ".git", false},
		{"[.]git", ".git", false},
		{"[!a]git", ".git", false},
		{"*.py", ".py", false},
		{".*", ".git", true},
		{".git", ".git", true},
		{".g*", ".git", true},
		{"a*", "a.b", true},
		{"*.*", "a.b", true},
		{"**/x.py", ".git/x.py", false},
		{"**/x.py", "a/.git/x.py", false},
		{"**/*", "a/.env", false},
		{"a/**", "a/.hidden", false},
		{"a/**", "a/b/.hidden", false},
		{".git/**/x.py", ".git/a/x.py", true},
		{"**/.git/**", "a/.git/b", true},
		{"*/x", ".github/x", false},
		{".*/x", ".github/x", true},
	};

	(void)state;
	run_cases(cases, sizeof cases / sizeof *cases);
}

static void test_unclean_paths(void **state)
{
	static const char *const paths[] = {
		"", "/a", "a//b", "a/", "./a", "a/./b", "a/..", "../a", "/",
	};
	ap_glob *all = compile("**");
	ap_glob *star = compile("*/*");

	(void)state;
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		assert_false(ap_glob_match(all, paths[i]));
		assert_false(ap_glob_match(star, paths[i]));
	}
	assert_true(ap_glob_match(all, "a/b"));
	assert_true(ap_glob_match(star, "a/b"));
	assert_false(ap_glob_match(all, "..a/b.."));
	assert_true(ap_glob_match(star, "a../b.."));
	ap_glob_free(all);
	ap_glob_free(star);
}

static void assert_bad(const char *pattern, size_t off, const char *message)
{
	ap_glob *g = (ap_glob *)1;
	size_t got = SIZE_MAX;

	assert_int_equal(ap_glob_new(&g, pattern, &got), AP_EINPUT);
	assert_null(g);
	assert_int_equal(got, off);
	assert_string_equal(ap_error_last(), message);
	/* The offset is optional. */
	assert_int_equal(ap_glob_new(&g, pattern, NULL), AP_EINPUT);
}

static void test_errors(void **state)
{
	(void)state;
	assert_bad("", 0, "invalid glob pattern at offset 0: empty pattern");
	assert_bad("/etc/passwd", 0, "invalid glob pattern at offset 0: absolute pattern");
	assert_bad("a//b", 2, "invalid glob pattern at offset 2: empty segment");
	assert_bad("a/b/", 4, "invalid glob pattern at offset 4: empty segment");
	assert_bad("./a", 0, "invalid glob pattern at offset 0: '.' segment");
	assert_bad("a/../b", 2, "invalid glob pattern at offset 2: '..' segment");
	assert_bad("a**b", 1, "invalid glob pattern at offset 1: '**' must be a whole segment");
	assert_bad("x/***", 2, "invalid glob pattern at offset 2: '**' must be a whole segment");
	assert_bad("x/**.py", 2, "invalid glob pattern at offset 2: '**' must be a whole segment");
	assert_bad("x/a[bc", 3, "invalid glob pattern at offset 3: unterminated '['");
	assert_bad("x/[]", 2, "invalid glob pattern at offset 2: unterminated '['");
	assert_bad("x/[!]", 2, "invalid glob pattern at offset 2: unterminated '['");
	/* A set does not span segments. */
	assert_bad("a[/]b", 1, "invalid glob pattern at offset 1: unterminated '['");
	assert_bad("x/a[z-a]", 4, "invalid glob pattern at offset 4: reversed range");
	assert_bad("x/[!ab9-0]", 6, "invalid glob pattern at offset 6: reversed range");
	/* Stars inside a set are members, not "**". */
	assert_true(matches("x/[**]", "x/*"));
}

/* A naive recursive matcher, exponential but plainly right, to check the
 * linear one against on small inputs. */
static bool ref_seg(const char *p, const char *name, bool start)
{
	if (start && name[0] == '.' && p[0] != '.')
		return false;
	if (*p == '\0')
		return *name == '\0';
	if (*p == '*')
		return ref_seg(p + 1, name, false) ||
		       (*name != '\0' && ref_seg(p, name + 1, false));
	if (*name == '\0')
		return false;
	if (*p == '?')
		return ref_seg(p + 1, name + 1, false);
	if (*p == '[') {
		/* The test's sets are "[ab]" and "[!ab]". */
		bool neg = p[1] == '!';
		const char *set = p + 1 + neg;
		bool in = name[0] == set[0] || name[0] == set[1];
		return in != neg && ref_seg(set + 3, name + 1, false);
	}
	return *p == *name && ref_seg(p + 1, name + 1, false);
}

static bool ref_path(char **pat, size_t np, char **path, size_t nq)
{
	if (np == 0)
		return nq == 0;
	if (strcmp(pat[0], "**") == 0)
		return ref_path(pat + 1, np - 1, path, nq) ||
		       (nq > 0 && path[0][0] != '.' && ref_path(pat, np, path + 1, nq - 1));
	if (nq == 0)
		return false;
	if (strchr(pat[0], '*') || strchr(pat[0], '?') || strchr(pat[0], '['))
		return ref_seg(pat[0], path[0], true) &&
		       ref_path(pat + 1, np - 1, path + 1, nq - 1);
	return strcmp(pat[0], path[0]) == 0 && ref_path(pat + 1, np - 1, path + 1, nq - 1);
}

static unsigned seed = 2024;

static unsigned rnd(unsigned n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 16) % n;
}

static size_t split(char *s, char **out)
{
	size_t n = 0;

	for (char *t; (t = strsep(&s, "/")) != NULL;)
		out[n++] = t;
	return n;
}

static void test_against_reference(void **state)
{
	static const char *const pat_tokens[] = {"a", "b", ".", "*", "*", "?", "[ab]", "[!ab]"};
	static const char *const path_chars = "ab.";
	size_t agree_true = 0;

	(void)state;
	for (int r = 0; r < 20000; r++) {
		char pat[128] = "";
		char path[64] = "";
		char pat_copy[128];
		char path_copy[64];
		char *ps[32];
		char *qs[32];
		size_t np = 1 + rnd(4);
		size_t nq = 1 + rnd(5);
		ap_glob *g;
		size_t off;
		bool want;
		bool got;

		for (size_t k = 0; k < np; k++) {
			if (k)
				strcat(pat, "/");
			if (rnd(4) == 0) {
				strcat(pat, "**");
				continue;
			}
			for (unsigned t = 0, nt = 1 + rnd(4); t < nt; t++)
				strcat(pat, pat_tokens[rnd(8)]);
		}
		for (size_t k = 0; k < nq; k++) {
			size_t len = strlen(path);

			if (k)
				path[len++] = '/';
			for (unsigned t = 0, nt = 1 + rnd(3); t < nt; t++)
				path[len++] = path_chars[rnd(3)];
			path[len] = '\0';
		}
		if (ap_glob_new(&g, pat, &off) < 0)
			continue; /* "**" glued to a star, or a "." segment */
		strcpy(pat_copy, pat);
		strcpy(path_copy, path);
		np = split(pat_copy, ps);
		nq = split(path_copy, qs);
		want = true;
		for (size_t k = 0; k < nq; k++)
			want = want && strcmp(qs[k], ".") != 0 && strcmp(qs[k], "..") != 0;
		want = want && ref_path(ps, np, qs, nq);
		got = ap_glob_match(g, path);
		if (got != want)
			fail_msg("'%s' against '%s': reference says %d", path, pat, want);
		agree_true += want;
		ap_glob_free(g);
	}
	assert_true(agree_true > 500);
}

static double seconds_since(clock_t start)
{
	return (double)(clock() - start) / CLOCKS_PER_SEC;
}

static void test_no_blowup(void **state)
{
	ap_buf b = AP_BUF_INIT;
	ap_glob *g;
	clock_t start;
	char *name;
	char *path;

	(void)state;
	/* Stars against a long name that almost matches. */
	for (int i = 0; i < 100000; i++)
		ap_buf_putc(&b, 'a');
	name = ap_buf_detach(&b);
	g = compile("*a*a*a*a*a*a*a*a*b");
	start = clock();
	assert_false(ap_glob_match(g, name));
	assert_false(ap_glob_segment_match(g, 0, name));
	assert_true(seconds_since(start) < 0.5);
	ap_glob_free(g);
	free(name);

	/* "**" after "**" against a deep path, with and without a match. */
	for (int i = 0; i < 5000; i++)
		ap_buf_puts(&b, "d/");
	ap_buf_puts(&b, "y");
	path = ap_buf_detach(&b);
	g = compile("**/**/**/**/**/**/**/**/x");
	start = clock();
	assert_false(ap_glob_match(g, path));
	path[strlen(path) - 1] = 'x';
	assert_true(ap_glob_match(g, path));
	assert_true(seconds_since(start) < 0.5);
	ap_glob_free(g);

	/* "**" and patterns that both fit every segment. */
	g = compile("**/d*/**/?/**/[a-z]/**/*x");
	start = clock();
	assert_true(ap_glob_match(g, path));
	assert_true(seconds_since(start) < 0.5);
	ap_glob_free(g);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_wildcards),
		cmocka_unit_test(test_any_depth),
		cmocka_unit_test(test_hidden),
		cmocka_unit_test(test_unclean_paths),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_against_reference),
		cmocka_unit_test(test_no_blowup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
