/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "mla-plan.h"

struct lens {
	int batch;
	int cu;
	int32_t len[70];
};

static const struct lens cases[] = {
	{1, 132, {1}},
	{5, 7, {0, 1, 63, 64, 10000}},
	{3, 132, {0, 0, 0}},
	{4, 1, {100, 2000, 65, 129}},
	{8, 304, {2048, 1900, 1777, 1300, 999, 64, 65, 1}},
	{2, 3, {5, 7}},
};

static void plan_64x8192(struct lens *l)
{
	l->batch = 64;
	l->cu = 132;
	for (int b = 0; b < 64; b++)
		l->len[b] = 8192;
}

static void test_plan_sizes_every_launch_count(void **state)
{
	struct lens big;
	(void)state;
	plan_64x8192(&big);
	for (size_t c = 0; c <= sizeof(cases) / sizeof(cases[0]); c++) {
		const struct lens *l = c < sizeof(cases) / sizeof(cases[0]) ? &cases[c] : &big;
		int64_t tokens = 0;
		for (int b = 0; b < l->batch; b++)
			tokens += l->len[b];
		for (int heads = 1; heads <= AP_MLA_MAX_HEADS; heads++) {
			ap_mla_plan_size s;
			assert_int_equal(ap_mla_plan_size_for(&s, l->len, l->batch, l->cu, heads), AP_OK);
			int tiles = (heads + 31) / 32;
			assert_int_equal(s.head_tiles, tiles);
			assert_int_equal(s.launch_heads, heads);
			assert_int_equal(s.works, s.partials * tiles);
			assert_int_equal(s.blocks % tiles, 0);
			assert_true(s.blocks <= (l->cu >= tiles ? l->cu : tiles));
			assert_true(s.partials >= (tokens > 0 ? 1 : 0));
			assert_int_equal(s.split_tokens % AP_MLA_SPLIT_ALIGN, 0);
			assert_true((int64_t)s.split_tokens * (s.blocks / (tiles ? tiles : 1)) >= tokens);
			assert_int_equal(s.work_indptr_bytes, (size_t)(s.blocks + 1) * 4);
			assert_int_equal(s.work_bytes, (size_t)s.works * sizeof(ap_mla_work));
			assert_int_equal(s.reduce_indptr_bytes, (size_t)(l->batch + 1) * 4);
			assert_int_equal(s.partial_out_bytes, (size_t)s.partials * heads * 512 * 4);
			assert_int_equal(s.partial_lse_bytes, (size_t)s.partials * heads * 4);
		}
	}
}

/* Fills the plan and checks, for every head tile, that the splits cover
 * every KV token of every sequence exactly once, that each partial belongs
 * to its sequence's reduce range, and that no block walks more than
 * split_tokens tokens. */
static void check_cover(const struct lens *l, int heads)
{
	ap_mla_plan_size s;
	assert_int_equal(ap_mla_plan_size_for(&s, l->len, l->batch, l->cu, heads), AP_OK);
	int32_t *work_indptr = ap_xmalloc(s.work_indptr_bytes);
	ap_mla_work *work = ap_xmalloc(s.work_bytes + 1);
	int32_t *reduce_indptr = ap_xmalloc(s.reduce_indptr_bytes);
	assert_int_equal(ap_mla_plan_fill(&s, l->len, l->cu, work_indptr, work, reduce_indptr), AP_OK);

	assert_int_equal(work_indptr[0], 0);
	assert_int_equal(work_indptr[s.blocks], s.works);
	assert_int_equal(reduce_indptr[0], 0);
	assert_int_equal(reduce_indptr[l->batch], s.partials);
	for (int b = 0; b < l->batch; b++)
		assert_true(reduce_indptr[b + 1] >= reduce_indptr[b]);

	for (int t = 0; t < s.head_tiles; t++) {
		int *seen_partial = ap_xcalloc((size_t)s.partials + 1, sizeof(int));
		for (int b = 0; b < l->batch; b++) {
			uint8_t *covered = ap_xcalloc((size_t)l->len[b] + 1, 1);
			for (int blk = 0; blk < s.blocks; blk++) {
				for (int w = work_indptr[blk]; w < work_indptr[blk + 1]; w++) {
					const ap_mla_work *wk = &work[w];
					assert_int_equal(blk % s.head_tiles, wk->head_begin / 32);
					if (wk->batch != b || wk->head_begin != t * 32)
						continue;
					assert_true(wk->kv_begin < wk->kv_end);
					assert_in_range(wk->partial, reduce_indptr[b], reduce_indptr[b + 1] - 1);
					seen_partial[wk->partial]++;
					for (int32_t k = wk->kv_begin; k < wk->kv_end; k++) {
						assert_in_range(k, 0, l->len[b] - 1);
						covered[k]++;
					}
				}
			}
			for (int32_t k = 0; k < l->len[b]; k++)
				assert_int_equal(covered[k], 1);
			free(covered);
		}
		for (int p = 0; p < s.partials; p++)
			assert_int_equal(seen_partial[p], 1);
		free(seen_partial);
	}
	for (int blk = 0; blk < s.blocks; blk++) {
		int64_t walked = 0;
		assert_true(work_indptr[blk + 1] > work_indptr[blk]);
		for (int w = work_indptr[blk]; w < work_indptr[blk + 1]; w++)
			walked += work[w].kv_end - work[w].kv_begin;
		assert_true(walked <= s.split_tokens);
	}
	free(work_indptr);
	free(work);
	free(reduce_indptr);
}

static void test_plan_covers_every_token(void **state)
{
	static const int heads[] = {1, 16, 24, 32, 33, 48, 64, 100, 128};
	struct lens big;
	(void)state;
	plan_64x8192(&big);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int h = 1; h <= AP_MLA_MAX_HEADS; h++)
			check_cover(&cases[c], h);
	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		check_cover(&big, heads[i]);
}

/* Head tiles of one KV range sit in neighbouring blocks, so the blocks that
 * read the same KV run together and share it through the cache. */
static void test_plan_neighbours_share_kv(void **state)
{
	struct lens big;
	ap_mla_plan_size s;
	(void)state;
	plan_64x8192(&big);
	assert_int_equal(ap_mla_plan_size_for(&s, big.len, big.batch, big.cu, 128), AP_OK);
	assert_int_equal(s.head_tiles, 4);
	assert_int_equal(s.blocks, 132);
	int32_t *work_indptr = ap_xmalloc(s.work_indptr_bytes);
	ap_mla_work *work = ap_xmalloc(s.work_bytes);
	int32_t *reduce_indptr = ap_xmalloc(s.reduce_indptr_bytes);
	assert_int_equal(ap_mla_plan_fill(&s, big.len, big.cu, work_indptr, work, reduce_indptr), AP_OK);
	for (int blk = 0; blk < s.blocks; blk += 4) {
		for (int t = 1; t < 4; t++) {
			const ap_mla_work *a = &work[work_indptr[blk]], *b = &work[work_indptr[blk + t]];
			assert_int_equal(work_indptr[blk + t + 1] - work_indptr[blk + t],
			                 work_indptr[blk + 1] - work_indptr[blk]);
			assert_int_equal(a->batch, b->batch);
			assert_int_equal(a->kv_begin, b->kv_begin);
			assert_int_equal(a->partial, b->partial);
			assert_int_equal(b->head_begin, 32 * t);
		}
	}
	free(work_indptr);
	free(work);
	free(reduce_indptr);
}

static void test_plan_rejects(void **state)
{
	ap_mla_plan_size s;
	int32_t lens[2] = {5, -1};
	(void)state;
	assert_int_equal(ap_mla_plan_size_for(&s, lens, 0, 132, 16), AP_EINPUT);
	assert_string_equal(ap_error_last(),
	                    "cannot plan MLA decode for batch 0 on 132 compute units with 16 heads");
	assert_int_equal(ap_mla_plan_size_for(&s, lens, 1, 0, 16), AP_EINPUT);
	assert_int_equal(ap_mla_plan_size_for(&s, lens, 1, 132, 129), AP_EINPUT);
	assert_string_equal(ap_error_last(),
	                    "cannot plan MLA decode for batch 1 on 132 compute units with 129 heads");
	assert_int_equal(ap_mla_plan_size_for(&s, lens, 2, 132, 16), AP_EINPUT);
	assert_string_equal(ap_error_last(), "sequence 1 has negative length -1");

	/* metadata sized for other inputs than it is filled for */
	int32_t work_indptr[8], reduce_indptr[2];
	ap_mla_work work[8];
	assert_int_equal(ap_mla_plan_size_for(&s, lens, 1, 4, 16), AP_OK);
	s.blocks = 3;
	assert_int_equal(ap_mla_plan_fill(&s, lens, 4, work_indptr, work, reduce_indptr), AP_EINPUT);
	assert_string_equal(ap_error_last(),
	                    "MLA plan size does not match its inputs (3 blocks planned, 1 needed)");
}

static void test_seq_lens(void **state)
{
	int32_t indptr[4] = {0, 3, 3, 4}, last[3] = {5, 0, 16}, lens[3];
	(void)state;
	assert_int_equal(ap_mla_seq_lens(indptr, last, 3, 16, lens), AP_OK);
	assert_int_equal(lens[0], 2 * 16 + 5);
	assert_int_equal(lens[1], 0);
	assert_int_equal(lens[2], 16);

	last[2] = 17;
	assert_int_equal(ap_mla_seq_lens(indptr, last, 3, 16, lens), AP_EINPUT);
	assert_string_equal(ap_error_last(), "sequence 2: 1 pages with 17 tokens in the last page "
	                                     "do not fit page size 16");
	last[2] = 1;
	last[1] = 1;
	assert_int_equal(ap_mla_seq_lens(indptr, last, 3, 16, lens), AP_EINPUT);
	assert_string_equal(ap_error_last(), "sequence 1: 0 pages with 1 tokens in the last page "
	                                     "do not fit page size 16");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_sizes_every_launch_count),
		cmocka_unit_test(test_plan_covers_every_token),
		cmocka_unit_test(test_plan_neighbours_share_kv),
		cmocka_unit_test(test_plan_rejects),
		cmocka_unit_test(test_seq_lens),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
