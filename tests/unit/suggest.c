/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/suggest.h"

static const char *const known[] = {
	"mla.decode.native_h24", "mla.metadata.native_h24", "mla.decode_fwd.causal",
	"mla.decode_fwd.fp8_scales", "mla.decode_fwd.return_lse", "vllm.calls_bind",
	"aiter.hipb_mm",
};
#define NKNOWN (sizeof known / sizeof known[0])

static void expect_tail(const char *word, const char *tail)
{
	char *got = ap_suggest_tail(word, known, NKNOWN);

	assert_string_equal(got, tail);
	free(got);
}

static void test_swapped_digits(void **state)
{
	(void)state;
	expect_tail("mla.decode.native_h42",
	            "; nearest: mla.decode.native_h24, mla.metadata.native_h24");
}

static void test_shared_prefix_ranks_ties(void **state)
{
	(void)state;
	/* all three share mla.decode_fwd.; causal is nearest by distance */
	expect_tail("mla.decode_fwd.casual",
	            "; nearest: mla.decode_fwd.causal, mla.decode_fwd.fp8_scales, "
	            "mla.decode_fwd.return_lse");
}

static void test_none_near(void **state)
{
	(void)state;
	expect_tail("zzz", "");
	expect_tail("", "");
}

static void test_at_most_three_and_not_itself(void **state)
{
	const char *near[AP_SUGGEST_MAX];
	size_t n;

	(void)state;
	n = ap_suggest_nearest("mla.decode_fwd.causal", known, NKNOWN, near);
	assert_int_equal(n, 2);
	assert_string_equal(near[0], "mla.decode_fwd.fp8_scales");
	assert_string_equal(near[1], "mla.decode_fwd.return_lse");
	n = ap_suggest_nearest("vllm.calls_binds", known, NKNOWN, near);
	assert_int_equal(n, 1);
	assert_string_equal(near[0], "vllm.calls_bind");
}

static void test_long_word(void **state)
{
	char word[1000];

	(void)state;
	memset(word, 'a', sizeof word - 1);
	word[sizeof word - 1] = '\0';
	expect_tail(word, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swapped_digits),
		cmocka_unit_test(test_shared_prefix_ranks_ties),
		cmocka_unit_test(test_none_near),
		cmocka_unit_test(test_at_most_three_and_not_itself),
		cmocka_unit_test(test_long_word),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
