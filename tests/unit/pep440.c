/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/pep440.h"

static void assert_normalizes(const char *in, const char *want)
{
	ap_pep440 v;
	char *s;

	assert_int_equal(ap_pep440_parse(&v, in), 0);
	s = ap_pep440_str(&v);
	assert_string_equal(s, want);
	free(s);
}

static void test_normalize(void **state)
{
	(void)state;
	assert_normalizes("0.1.20", "0.1.20");
	assert_normalizes("0.1.20.post1", "0.1.20.post1");
	assert_normalizes("0.1.10.dev123+g1234abc", "0.1.10.dev123+g1234abc");
	assert_normalizes("1.0-post1", "1.0.post1");
	assert_normalizes("1.0.post.1", "1.0.post1");
	assert_normalizes("1.0_POST_1", "1.0.post1");
	assert_normalizes("1.0post", "1.0.post0");
	assert_normalizes("1.0-r1", "1.0.post1");
	assert_normalizes("1.0rev2", "1.0.post2");
	assert_normalizes("1.0-1", "1.0.post1");
	assert_normalizes("v1-0", "1.post0");
	assert_normalizes("1.0rc1", "1.0rc1");
	assert_normalizes("1.0c1", "1.0rc1");
	assert_normalizes("1.0.pre1", "1.0rc1");
	assert_normalizes("1.0-preview-2", "1.0rc2");
	assert_normalizes("1.0alpha1", "1.0a1");
	assert_normalizes("1.0.BETA", "1.0b0");
	assert_normalizes("1.0a", "1.0a0");
	assert_normalizes("1.0a.", "1.0a0");
	assert_normalizes("1.0.dev", "1.0.dev0");
	assert_normalizes("1.0-DEV_3", "1.0.dev3");
	assert_normalizes("v1.0", "1.0");
	assert_normalizes("V1.0", "1.0");
	assert_normalizes(" \t1.0\n ", "1.0");
	assert_normalizes("0!1.0", "1.0");
	assert_normalizes("2!01.002", "2!1.2");
	assert_normalizes("1.0a1-1.dev2", "1.0a1.post1.dev2");
	assert_normalizes("1.0+Ubuntu-1_007.x", "1.0+ubuntu.1.7.x");
	assert_normalizes("1.0+0.00.0a", "1.0+0.0.0a");
	assert_normalizes("18446744073709551615", "18446744073709551615");
	assert_normalizes("1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16",
	                  "1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16");
}

static void assert_bad_version(const char *in, size_t off, const char *why)
{
	char *message = ap_xasprintf("invalid version '%s' at offset %zu: %s", in, off, why);
	ap_pep440 v;

	assert_int_equal(ap_pep440_parse(&v, in), AP_EINPUT);
	assert_string_equal(ap_error_last(), message);
	free(message);
}

static void test_parse_errors(void **state)
{
	char local[200];

	(void)state;
	/* The message in full, then through the helper. */
	assert_int_equal(ap_pep440_parse(&(ap_pep440){0}, "1.0-"), AP_EINPUT);
	assert_string_equal(ap_error_last(),
	                    "invalid version '1.0-' at offset 3: unexpected character");
	assert_bad_version("", 0, "expected a release number");
	assert_bad_version("  ", 2, "expected a release number");
	assert_bad_version("abc", 0, "expected a release number");
	assert_bad_version("v", 1, "expected a release number");
	assert_bad_version("1!", 2, "expected a release number");
	assert_bad_version("1.0-", 3, "unexpected character");
	assert_bad_version("1.", 1, "unexpected character");
	assert_bad_version("1..0", 1, "unexpected character");
	assert_bad_version("1.0 a1", 4, "unexpected character");
	assert_bad_version("1.0.*", 3, "unexpected character");
	assert_bad_version("1.0ab", 4, "unexpected character");
	assert_bad_version("1.0+", 3, "expected a local version segment");
	assert_bad_version("1.0+a.", 5, "unexpected character");
	/* Past the limits that PEP 440 does not have. */
	assert_bad_version("1.18446744073709551616", 2, "number too large");
	assert_bad_version("1.0a99999999999999999999", 4, "number too large");
	assert_bad_version("1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17", 39,
	                   "more than 16 release numbers");
	strcpy(local, "1+");
	memset(local + 2, 'a', 128);
	local[130] = '\0';
	assert_int_equal(ap_pep440_parse(&(ap_pep440){0}, local), AP_EINPUT);
	assert_non_null(
		strstr(ap_error_last(), "' at offset 1: local version longer than 127 bytes"));
	local[129] = '\0';
	assert_int_equal(ap_pep440_parse(&(ap_pep440){0}, local), 0);
	/* Bytes past ASCII are no letters. */
	assert_bad_version("1.0\xc3\xa9", 3, "unexpected character");
}

static void test_order(void **state)
{
	/* PEP 440's own example of the order, with local versions and epochs. */
	static const char *const sorted[] = {
		"1.0.dev456",
		"1.0a1",
		"1.0a2.dev456",
		"1.0a12.dev456",
		"1.0a12",
		"1.0b1.dev456",
		"1.0b2",
		"1.0b2.post345.dev456",
		"1.0b2.post345",
		"1.0rc1.dev456",
		"1.0rc1",
		"1.0",
		"1.0+abc.5",
		"1.0+abc.7",
		"1.0+5",
		"1.0+10",
		"1.0.post456.dev34",
		"1.0.post456",
		"1.0.15",
		"1.1.dev1",
		"1.1",
		"2",
		"1!0.1",
	};
	size_t n = sizeof sorted / sizeof *sorted;
	ap_pep440 a, b;

	(void)state;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			int c;

			assert_int_equal(ap_pep440_parse(&a, sorted[i]), 0);
			assert_int_equal(ap_pep440_parse(&b, sorted[j]), 0);
			c = ap_pep440_cmp(&a, &b);
			assert_int_equal((c > 0) - (c < 0), (i > j) - (i < j));
		}
	/* Trailing zeros do not count; the local part does. */
	assert_int_equal(ap_pep440_parse(&a, "1.0"), 0);
	assert_int_equal(ap_pep440_parse(&b, "1.0.0.0"), 0);
	assert_int_equal(ap_pep440_cmp(&a, &b), 0);
	assert_int_equal(ap_pep440_parse(&b, "1.0+a"), 0);
	assert_true(ap_pep440_cmp(&a, &b) < 0);
	/* A local word sorts before a local number, a shorter local first. */
	assert_int_equal(ap_pep440_parse(&a, "1.0+abc"), 0);
	assert_int_equal(ap_pep440_parse(&b, "1.0+abc.1"), 0);
	assert_true(ap_pep440_cmp(&a, &b) < 0);
	assert_int_equal(ap_pep440_parse(&a, "1.0+9"), 0);
	assert_int_equal(ap_pep440_parse(&b, "1.0+0010"), 0);
	assert_true(ap_pep440_cmp(&a, &b) < 0);
	/* 64-bit numbers compare as numbers. */
	assert_int_equal(ap_pep440_parse(&a, "9223372036854775808"), 0);
	assert_int_equal(ap_pep440_parse(&b, "18446744073709551615"), 0);
	assert_true(ap_pep440_cmp(&a, &b) < 0);
}

static void test_prerelease(void **state)
{
	ap_pep440 v;

	(void)state;
	assert_int_equal(ap_pep440_parse(&v, "0.1.10.dev123+g1234abc"), 0);
	assert_true(ap_pep440_is_prerelease(&v));
	assert_int_equal(ap_pep440_parse(&v, "1.0.post1.dev0"), 0);
	assert_true(ap_pep440_is_prerelease(&v));
	assert_int_equal(ap_pep440_parse(&v, "1.0rc1"), 0);
	assert_true(ap_pep440_is_prerelease(&v));
	assert_int_equal(ap_pep440_parse(&v, "0.1.20.post1"), 0);
	assert_false(ap_pep440_is_prerelease(&v));
	assert_int_equal(ap_pep440_parse(&v, "1.0+local"), 0);
	assert_false(ap_pep440_is_prerelease(&v));
}

static bool matches(const char *spec, const char *version)
{
	ap_pep440_spec *s;
	ap_pep440 v;
	size_t off = 12345;
	bool m;

	assert_int_equal(ap_pep440_spec_new(&s, spec, &off), 0);
	assert_int_equal(off, 12345);
	assert_int_equal(ap_pep440_parse(&v, version), 0);
	m = ap_pep440_spec_match(s, &v);
	ap_pep440_spec_free(s);
	return m;
}

struct case_ {
	const char *spec;
	const char *version;
	bool want;
};

static void run_cases(const struct case_ *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (matches(c[i].spec, c[i].version) != c[i].want)
			fail_msg("'%s' against '%s': expected %s", c[i].version, c[i].spec,
			         c[i].want ? "a match" : "none");
}

static void test_aiter_versions(void **state)
{
	static const struct case_ cases[] = {
		{">=0.1.10, !=0.1.12.*, <0.2", "0.1.10", true},
		{">=0.1.10, !=0.1.12.*, <0.2", "0.1.12", false},
		{">=0.1.10, !=0.1.12.*, <0.2", "0.1.12.post1", false},
		{">=0.1.10, !=0.1.12.*, <0.2", "0.1.20.post1", true},
		{">=0.1.10, !=0.1.12.*, <0.2", "0.2", false},
		{">=0.1.10, !=0.1.12.*, <0.2", "0.1.9", false},
		/* A checkout's dev version is a pre-release of the next one. */
		{">=0.1.9", "0.1.10.dev123+g1234abc", false},
		{"<0.2", "0.1.10.dev123+g1234abc", false},
		{"==0.1.*", "0.1.10.dev123+g1234abc", false},
		{">=0.1.10.dev0", "0.1.10.dev123+g1234abc", true},
		{">=0.1.10.dev0, <0.2", "0.1.10.dev123+g1234abc", true},
		{">=0.1.10.dev0", "0.1.10.dev123", true},
		{">=0.1.10.dev124", "0.1.10.dev123+g1234abc", false},
		{"==0.1.10.dev123", "0.1.10.dev123+g1234abc", true},
		{"==0.1.10.dev123+g1234abc", "0.1.10.dev123+g1234abc", true},
		{"==0.1.10.dev123+g1234abd", "0.1.10.dev123+g1234abc", false},
		{"<0.1.11.dev0", "0.1.10.dev123+g1234abc", false},
		{">=0.1.20", "0.1.20.post1", true},
		{"==0.1.20", "0.1.20.post1", false},
		{"~=0.1.20", "0.1.21", true},
		{"~=0.1.20", "0.2.0", false},
	};

	(void)state;
	run_cases(cases, sizeof cases / sizeof *cases);
}

static void test_operators(void **state)
{
	static const struct case_ cases[] = {
		{"==1.0", "1.0.0", true},
		{"==1.0", "1.0+local", true},
		{"==1.0+local", "1.0", false},
		{"==1.0+LOCAL", "1.0+local", true},
		{"!=1.0", "1.0+local", false},
		{"!=1.0+other", "1.0+local", true},
		{"!=1.0", "1.1", true},
		{"<=1.0", "1.0+local", true},
		{">=1.0", "1.0+local", true},
		{"<1.0", "0.9", true},
		{"<1.0", "1.0", false},
		/* <V excludes V's pre-releases, even when they are admitted... */
		{"<1.0, >=0.9a1", "1.0a1", false},
		{"<1.0, >=0.9a1", "0.9.1rc1", true},
		{"<1.0.post1, >=0.9a1", "1.0a1", false},
		/* ... unless V is one. */
		{"<1.0rc1, >=0.1a1", "1.0a1", true},
		{"<1.0rc1, >=0.1a1", "1.0.dev1", true},
		{">1.0", "1.0.1", true},
		{">1.0", "1.0", false},
		{">1.0", "1.0.post1", false},
		{">1.0", "1.0+local", false},
		{">1.0", "1.0.post1+local", false},
		{">1.0.post1", "1.0.post2", true},
		{">1.0.post1", "1.0.post2+local", false},
		{">1.0rc1", "1.0", true},
		{">1.0", "1.1+local", true},
		{"~=2.2", "2.3", true},
		{"~=2.2", "3.0", false},
		{"~=2.2.0", "2.2.5", true},
		{"~=2.2.0", "2.3", false},
		{"~=2.2.post3", "2.2.post4", true},
		{"~=2.2.post3", "2.2", false},
		{"~=1.4.5a4", "1.4.5", true},
		{"~=1.4.5a4", "1.4.5a5", true},
		{"~=1.4.5a4", "1.5", false},
		{"~=1!2.2", "1!2.3", true},
		{"~=1!2.2", "2.3", false},
		{"==1.0.*", "1", true},
		{"==1.0.*", "1.0.3", true},
		{"==1.0.*", "1.0.post1", true},
		{"==1.0.*", "1.1", false},
		{"==1.0.*", "1.0a1", false},
		{"==1.0.*, >=1.0a1", "1.0a1", true},
		{"==1.1.*", "1.10", false},
		{"==1.0.0.*", "1", true},
		{"!=1.0.*", "1.0.5", false},
		{"!=1.0.*", "1.1", true},
		/* packaging 23.0 matches this one, padding past the epoch; later
		 * releases compare the epoch first, as PEP 440 says. */
		{"==0.*", "1!0.5", false},
		{"==1!0.*", "1!0.5", true},
		{"===1.0", "1.0", true},
		{"===1.0", "1.0.0", false},
		{"===1.0", "v1.0", true},
		{"===1.0+LOCAL", "1.0+local", true},
		{"===1.0", "1.0+local", false},
		{"===1.0rc1", "1.0rc1", true},
		/* packaging raises here, parsing the text for its pre-release rule. */
		{"===foo", "1.0", false},
		/* Spelling and spaces do not matter. */
		{"  >= v1.0-ALPHA-1 ,, <2  ", "1.0a1", true},
		{">=1.0c1", "1.0rc1", true},
		{"==1.0-1", "1.0.post1", true},
	};

	(void)state;
	run_cases(cases, sizeof cases / sizeof *cases);
}

static void test_prerelease_admission(void **state)
{
	static const struct case_ cases[] = {
		/* The empty set admits no pre-release. */
		{"", "1.0", true},
		{"", "1.0rc1", false},
		{" , ", "1.0.dev1", false},
		{"!=1.0", "1.1a1", false},
		{">=1.0", "1.1a1", false},
		/* Clauses with ==, ===, >=, <= and ~= naming one admit them to all. */
		{">=1.0rc1", "1.1a1", true},
		{">=1.0, <=2.0b1", "1.1a1", true},
		{"~=1.0b1", "1.1a1", true},
		{"==1.1a1", "1.1a1", true},
		{"===1.1a1", "1.1a1", true},
		{">=1.0, !=1.5, ==1.*, <=2.dev0", "1.1a1", true},
		/* Others do not. */
		{">1.0a1", "1.1a1", false},
		{"<2.0a1", "1.1a1", false},
		{"!=1.0a1", "1.1a1", false},
		{"==1.*", "1.1a1", false},
		/* Nor does text that is no version. */
		{"===rc", "1.1a1", false},
	};

	(void)state;
	run_cases(cases, sizeof cases / sizeof *cases);
}

static void assert_bad_spec(const char *text, size_t off, const char *why)
{
	char *message = ap_xasprintf("invalid version specifier at offset %zu: %s", off, why);
	ap_pep440_spec *s = (ap_pep440_spec *)1;
	size_t got = SIZE_MAX;

	assert_int_equal(ap_pep440_spec_new(&s, text, &got), AP_EINPUT);
	assert_null(s);
	assert_int_equal(got, off);
	assert_string_equal(ap_error_last(), message);
	free(message);
	/* The offset is optional. */
	assert_int_equal(ap_pep440_spec_new(&s, text, NULL), AP_EINPUT);
}

static void test_spec_errors(void **state)
{
	ap_pep440_spec *s;

	(void)state;
	/* The message in full, then through the helper. */
	assert_int_equal(ap_pep440_spec_new(&s, "<2,x", NULL), AP_EINPUT);
	assert_string_equal(ap_error_last(),
	                    "invalid version specifier at offset 3: expected an operator");
	assert_bad_spec("1.0", 0, "expected an operator");
	assert_bad_spec(">=1.0, 2", 7, "expected an operator");
	assert_bad_spec("  =1.0", 2, "expected an operator");
	assert_bad_spec("=>1.0", 0, "expected an operator");
	assert_bad_spec(">=", 2, "expected a version");
	assert_bad_spec(">= ,<2", 3, "expected a version");
	assert_bad_spec("==x", 2, "expected a version");
	assert_bad_spec("===", 3, "expected a version");
	assert_bad_spec("==v", 3, "expected a release number");
	assert_bad_spec("<=1.0 2", 6, "unexpected character");
	assert_bad_spec(">1.0-", 4, "unexpected character");
	assert_bad_spec("===1.0;x", 6, "unexpected character");
	assert_bad_spec("===1.0 x", 7, "unexpected character");
	assert_bad_spec("==1.0a1.*", 7, "unexpected character");
	assert_bad_spec("==1.*.1", 5, "unexpected character");
	assert_bad_spec(">=1.0.*", 5, "'.*' is allowed only with == and !=");
	assert_bad_spec("~=1.0.*", 5, "'.*' is allowed only with == and !=");
	assert_bad_spec("<1.0+local", 4, "a local version is allowed only with == and !=");
	assert_bad_spec("~=1.0+local", 5, "a local version is allowed only with == and !=");
	assert_bad_spec(">=1.0, ~= 1", 10, "'~=' needs at least two release numbers");
	assert_bad_spec("~=1!2", 2, "'~=' needs at least two release numbers");
	assert_bad_spec("==1.99999999999999999999", 4, "number too large");
	assert_bad_spec("==1.0+", 5, "expected a local version segment");
}

/* Long inputs take linear time and fixed memory per clause. */
static void test_long_inputs(void **state)
{
	ap_buf b = AP_BUF_INIT;
	ap_pep440_spec *s;
	ap_pep440 v;

	(void)state;
	for (int i = 0; i < 20000; i++)
		ap_buf_printf(&b, "%s!=0.%d.*", i ? ", " : "", i + 1);
	assert_int_equal(ap_pep440_spec_new(&s, b.data, NULL), 0);
	assert_int_equal(ap_pep440_parse(&v, "0.0.1"), 0);
	assert_true(ap_pep440_spec_match(s, &v));
	assert_int_equal(ap_pep440_parse(&v, "0.19999.1"), 0);
	assert_false(ap_pep440_spec_match(s, &v));
	ap_pep440_spec_free(s);
	ap_buf_free(&b);

	for (int i = 0; i < 100000; i++)
		ap_buf_putc(&b, '0');
	assert_int_equal(ap_pep440_parse(&v, b.data), 0);
	assert_int_equal(v.release[0], 0);
	ap_buf_free(&b);
}

/* Any text either fails with a message or parses to a version whose
 * normalized text parses back to itself; specifiers never crash. */
static void test_random_text(void **state)
{
	static const char alphabet[] = "0123456789.-_+!*vVaAbcrRpostdevlhE ~=<>,";
	unsigned seed = 99;
	size_t parsed = 0;

	(void)state;
	for (int r = 0; r < 50000; r++) {
		char text[24];
		size_t len = (size_t)(r % 23);
		ap_pep440 v;
		ap_pep440 w;
		ap_pep440_spec *s;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			text[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
		}
		text[len] = '\0';
		if (ap_pep440_parse(&v, text) == 0) {
			char *norm = ap_pep440_str(&v);
			char *again;

			assert_int_equal(ap_pep440_parse(&w, norm), 0);
			again = ap_pep440_str(&w);
			assert_string_equal(again, norm);
			assert_int_equal(ap_pep440_cmp(&v, &w), 0);
			free(again);
			free(norm);
			parsed++;
		} else {
			assert_non_null(strstr(ap_error_last(), "invalid version '"));
		}
		if (ap_pep440_spec_new(&s, text, NULL) == 0) {
			assert_int_equal(ap_pep440_parse(&v, "0.1.10"), 0);
			ap_pep440_spec_match(s, &v);
			ap_pep440_spec_free(s);
		}
	}
	assert_true(parsed > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_prerelease),
		cmocka_unit_test(test_aiter_versions),
		cmocka_unit_test(test_operators),
		cmocka_unit_test(test_prerelease_admission),
		cmocka_unit_test(test_spec_errors),
		cmocka_unit_test(test_long_inputs),
		cmocka_unit_test(test_random_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
