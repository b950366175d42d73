/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/mla-route.h"

static int round16(int h)
{
	return (h + 15) / 16 * 16;
}

static void test_pad_mode_names(void **state)
{
	(void)state;
	assert_string_equal(ap_pad_mode_name(AP_PAD_NONE), "none");
	assert_string_equal(ap_pad_mode_name(AP_PAD_REPEAT_INTERLEAVE), "repeat-interleave");
	assert_string_equal(ap_pad_mode_name(AP_PAD_TILE_SLICE), "tile-slice");
}

static void test_launch_heads_every_count(void **state)
{
	(void)state;
	for (int h = 1; h <= AP_MLA_MAX_HEADS; h++) {
		ap_pad_mode mode;
		assert_int_equal(ap_mla_launch_heads(h, true, &mode), h);
		assert_int_equal(mode, AP_PAD_NONE);

		int launch = ap_mla_launch_heads(h, false, &mode);
		if (h % 16 == 0) {
			assert_int_equal(launch, h);
			assert_int_equal(mode, AP_PAD_NONE);
		} else {
			assert_int_equal(launch, round16(h));
			assert_int_equal(mode, 16 % h == 0 ? AP_PAD_REPEAT_INTERLEAVE : AP_PAD_TILE_SLICE);
		}
	}
	ap_pad_mode mode;
	for (int h = 1; h <= AP_MLA_MAX_HEADS; h++)
		assert_true(ap_mla_same_split(h, ap_mla_launch_heads(h, false, &mode)));
	assert_true(ap_mla_same_split(16, 32));
	assert_false(ap_mla_same_split(32, 48));
	assert_false(ap_mla_same_split(96, 112));
	assert_int_equal(ap_mla_launch_heads(24, false, &mode), 32);
	assert_int_equal(mode, AP_PAD_TILE_SLICE);
	assert_int_equal(ap_mla_launch_heads(4, false, &mode), 16);
	assert_int_equal(mode, AP_PAD_REPEAT_INTERLEAVE);
}

static void test_launch_heads_rejects(void **state)
{
	ap_pad_mode mode;
	(void)state;
	assert_int_equal(ap_mla_launch_heads(0, false, &mode), AP_EINPUT);
	assert_string_equal(ap_error_last(), "head count 0 is outside 1..128");
	assert_int_equal(ap_mla_launch_heads(129, true, &mode), AP_EINPUT);
	assert_string_equal(ap_error_last(), "head count 129 is outside 1..128");
	assert_int_equal(ap_mla_pad_mode(24, 16, &mode), AP_EINPUT);
	assert_string_equal(ap_error_last(), "cannot run 24 heads as 16: head counts must be 1..128 "
	                                     "and the launch count at least the real one");
}

/* Every real head feeds at least one launch head, and the output read back
 * for real head h is that of a launch head fed by h. */
static void check_maps(int heads, int launch)
{
	ap_pad_mode mode;
	int pad[AP_MLA_MAX_HEADS], unpad[AP_MLA_MAX_HEADS], fed[AP_MLA_MAX_HEADS] = {0};

	assert_int_equal(ap_mla_pad_mode(heads, launch, &mode), AP_OK);
	ap_mla_head_maps(heads, launch, mode, pad, unpad);
	for (int j = 0; j < launch; j++) {
		assert_in_range(pad[j], 0, heads - 1);
		fed[pad[j]]++;
		switch (mode) {
		case AP_PAD_NONE:
			assert_int_equal(pad[j], j);
			break;
		case AP_PAD_REPEAT_INTERLEAVE:
			assert_int_equal(pad[j], j / (launch / heads));
			break;
		case AP_PAD_TILE_SLICE:
			assert_int_equal(pad[j], j % heads);
			break;
		}
	}
	for (int h = 0; h < heads; h++) {
		assert_true(fed[h] > 0);
		assert_in_range(unpad[h], 0, launch - 1);
		assert_int_equal(pad[unpad[h]], h);
		if (mode == AP_PAD_REPEAT_INTERLEAVE) {
			assert_int_equal(unpad[h], h * (launch / heads));
			assert_int_equal(fed[h], launch / heads);
		} else {
			assert_int_equal(unpad[h], h);
		}
	}
}

static void test_pad_maps_every_count(void **state)
{
	(void)state;
	for (int h = 1; h <= AP_MLA_MAX_HEADS; h++) {
		ap_pad_mode mode;
		check_maps(h, h);
		check_maps(h, ap_mla_launch_heads(h, false, &mode));
		if (round16(h) + 16 <= AP_MLA_MAX_HEADS)
			check_maps(h, round16(h) + 16);
	}
}

/* A caller that needs one map passes NULL for the other. */
static void test_head_maps_one_side(void **state)
{
	int pad[16], unpad[8];
	(void)state;
	ap_mla_head_maps(8, 16, AP_PAD_REPEAT_INTERLEAVE, pad, NULL);
	assert_int_equal(pad[15], 7);
	ap_mla_head_maps(8, 16, AP_PAD_REPEAT_INTERLEAVE, NULL, unpad);
	assert_int_equal(unpad[7], 14);
}

static void test_head_tiles(void **state)
{
	(void)state;
	assert_int_equal(ap_mla_head_tiles(1), 1);
	assert_int_equal(ap_mla_head_tiles(AP_MLA_HEADS_PER_BLOCK), 1);
	assert_int_equal(ap_mla_head_tiles(AP_MLA_HEADS_PER_BLOCK + 1), 2);
	assert_int_equal(ap_mla_head_tiles(AP_MLA_MAX_HEADS), AP_MLA_MAX_HEADS / AP_MLA_HEADS_PER_BLOCK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pad_mode_names),
		cmocka_unit_test(test_launch_heads_every_count),
		cmocka_unit_test(test_launch_heads_rejects),
		cmocka_unit_test(test_pad_maps_every_count),
		cmocka_unit_test(test_head_maps_one_side),
		cmocka_unit_test(test_head_tiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
