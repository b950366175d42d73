/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdint.h>

#include "core/ap-error.h"
#include "mla-plan.h"

/* Called once per split, in sequence order; `share` is the block column
 * (one per share of the KV tokens, before multiplying by head tiles). */
typedef void (*split_fn)(void *ctx, int share, int batch, int32_t begin, int32_t end, int split);

/* Cuts the concatenated token stream of all sequences into shares of at
 * most `chunk` tokens, cutting a sequence wherever a share ends: every block
 * walks about the same number of tokens, however uneven the sequences are.
 * Returns the number of shares used; *splits gets the number of splits. */
static int walk_splits(const int32_t *seq_lens, int batch, int64_t chunk, split_fn fn, void *ctx,
                       int *splits)
{
	int share = 0, nsplits = 0;
	int64_t budget = chunk;

	for (int b = 0; b < batch; b++) {
		int32_t pos = 0;
		while (pos < seq_lens[b]) {
			int32_t piece = (int32_t)(seq_lens[b] - pos < budget ? seq_lens[b] - pos : budget);
			if (fn)
				fn(ctx, share, b, pos, pos + piece, nsplits);
			nsplits++;
			pos += piece;
			budget -= piece;
			if (budget == 0) {
				share++;
				budget = chunk;
			}
		}
	}
	*splits = nsplits;
	return budget < chunk ? share + 1 : share;
}

int ap_mla_plan_size_for(ap_mla_plan_size *size, const int32_t *seq_lens, int batch,
                         int compute_units, int launch_heads)
{
	if (batch < 1 || compute_units < 1 || launch_heads < 1 || launch_heads > AP_MLA_MAX_HEADS) {
		ap_error_set("cannot plan MLA decode for batch %d on %d compute units with %d heads",
		             batch, compute_units, launch_heads);
		return AP_EINPUT;
	}
	int64_t tokens = 0;
	for (int b = 0; b < batch; b++) {
		if (seq_lens[b] < 0) {
			ap_error_set("sequence %d has negative length %d", b, (int)seq_lens[b]);
			return AP_EINPUT;
		}
		tokens += seq_lens[b];
	}

	int tiles = ap_mla_head_tiles(launch_heads);
	int shares = compute_units / tiles > 0 ? compute_units / tiles : 1;
	int64_t chunk = (tokens + shares - 1) / shares;
	chunk = (chunk + AP_MLA_SPLIT_ALIGN - 1) / AP_MLA_SPLIT_ALIGN * AP_MLA_SPLIT_ALIGN;
	if (chunk == 0)
		chunk = AP_MLA_SPLIT_ALIGN;

	int splits;
	int used = walk_splits(seq_lens, batch, chunk, NULL, NULL, &splits);

	*size = (ap_mla_plan_size){
		.batch = batch,
		.launch_heads = launch_heads,
		.head_tiles = tiles,
		.blocks = used * tiles,
		.works = splits * tiles,
		.partials = splits,
		.split_tokens = (int)chunk,
	};
	size->work_indptr_bytes = (size_t)(size->blocks + 1) * sizeof(int32_t);
	size->work_bytes = (size_t)size->works * sizeof(ap_mla_work);
	size->reduce_indptr_bytes = (size_t)(batch + 1) * sizeof(int32_t);
	size->partial_out_bytes = (size_t)splits * launch_heads * AP_MLA_HEAD_DIM * sizeof(float);
	size->partial_lse_bytes = (size_t)splits * launch_heads * sizeof(float);
	return AP_OK;
}

struct fill_ctx {
	const ap_mla_plan_size *size;
	int32_t *work_indptr;
	ap_mla_work *work;
	int32_t *reduce_indptr;
	int share_first_split; /* the first split of the current share */
	int share;
};

static void count_split(void *opaque, int share, int batch, int32_t begin, int32_t end, int split)
{
	struct fill_ctx *c = opaque;

	(void)begin;
	(void)end;
	(void)split;
	for (int t = 0; t < c->size->head_tiles; t++)
		c->work_indptr[share * c->size->head_tiles + t + 1]++;
	c->reduce_indptr[batch + 1]++;
}

static void place_split(void *opaque, int share, int batch, int32_t begin, int32_t end, int split)
{
	struct fill_ctx *c = opaque;

	if (split == 0 || share != c->share) {
		c->share = share;
		c->share_first_split = split;
	}
	for (int t = 0; t < c->size->head_tiles; t++) {
		int block = share * c->size->head_tiles + t;
		c->work[c->work_indptr[block] + split - c->share_first_split] = (ap_mla_work){
			.batch = batch,
			.kv_begin = begin,
			.kv_end = end,
			.partial = split,
			.head_begin = t * AP_MLA_HEADS_PER_BLOCK,
		};
	}
}

int ap_mla_plan_fill(const ap_mla_plan_size *size, const int32_t *seq_lens, int compute_units,
                     int32_t *work_indptr, ap_mla_work *work, int32_t *reduce_indptr)
{
	ap_mla_plan_size check;
	int rc = ap_mla_plan_size_for(&check, seq_lens, size->batch, compute_units, size->launch_heads);
	if (rc < 0)
		return rc;
	if (check.blocks != size->blocks || check.works != size->works ||
	    check.partials != size->partials) {
		ap_error_set("MLA plan size does not match its inputs (%d blocks planned, %d needed)",
		             size->blocks, check.blocks);
		return AP_EINPUT;
	}

	struct fill_ctx c = {
		.size = size, .work_indptr = work_indptr, .work = work, .reduce_indptr = reduce_indptr,
	};
	int splits;
	for (int i = 0; i <= size->blocks; i++)
		work_indptr[i] = 0;
	for (int b = 0; b <= size->batch; b++)
		reduce_indptr[b] = 0;
	walk_splits(seq_lens, size->batch, size->split_tokens, count_split, &c, &splits);
	for (int i = 0; i < size->blocks; i++)
		work_indptr[i + 1] += work_indptr[i];
	for (int b = 0; b < size->batch; b++)
		reduce_indptr[b + 1] += reduce_indptr[b];
	walk_splits(seq_lens, size->batch, size->split_tokens, place_split, &c, &splits);
	return AP_OK;
}

int ap_mla_seq_lens(const int32_t *kv_indptr, const int32_t *last_page_lens, int batch,
                    int page_size, int32_t *seq_lens)
{
	for (int b = 0; b < batch; b++) {
		int64_t pages = (int64_t)kv_indptr[b + 1] - kv_indptr[b];
		int32_t last = last_page_lens[b];
		if (pages < 0 || (pages == 0 && last != 0) ||
		    (pages > 0 && (last < 1 || last > page_size))) {
			ap_error_set("sequence %d: %lld pages with %d tokens in the last page do not fit "
			             "page size %d", b, (long long)pages, (int)last, page_size);
			return AP_EINPUT;
		}
		int64_t len = pages == 0 ? 0 : (pages - 1) * page_size + last;
		if (len > INT32_MAX) {
			ap_error_set("sequence %d has %lld tokens, more than a plan can index", b,
			             (long long)len);
			return AP_EINPUT;
		}
		seq_lens[b] = (int32_t)len;
	}
	return AP_OK;
}
