/* SPDX-License-Identifier: MIT */
/* Host-side work planning for MLA decode, plain C for the launcher and the
 * benchmark: the work and reduce metadata of a launch. How many heads a
 * launch has, and how they are padded, is the core's routing. */
#ifndef AP_MLA_PLAN_H
#define AP_MLA_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/mla-route.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The only shape the kernels are compiled for: 512 latent + 64 rope. */
#define AP_MLA_HEAD_DIM 512
#define AP_MLA_ROPE_DIM 64
#define AP_MLA_QK_DIM (AP_MLA_HEAD_DIM + AP_MLA_ROPE_DIM)

/* The tokens one block walks are a multiple of this (the kernels' KV tile). */
#define AP_MLA_SPLIT_ALIGN 64

/* One unit of stage-1 work: the KV tokens [kv_begin, kv_end) of sequence
 * `batch`, for the heads [head_begin, head_begin + AP_MLA_HEADS_PER_BLOCK),
 * written as partial number `partial`. */
typedef struct ap_mla_work {
	int32_t batch;
	int32_t kv_begin;
	int32_t kv_end;
	int32_t partial;
	int32_t head_begin;
} ap_mla_work;

/* What a plan needs, from ap_mla_plan_size. Stage 1 runs `blocks` blocks;
 * block i does work[work_indptr[i] .. work_indptr[i + 1]). The reducer
 * combines partials reduce_indptr[b] .. reduce_indptr[b + 1] of sequence b. */
typedef struct ap_mla_plan_size {
	int batch;
	int launch_heads;
	int head_tiles;      /* ceil(launch_heads / AP_MLA_HEADS_PER_BLOCK) */
	int blocks;
	int works;
	int partials;        /* splits over all sequences */
	int split_tokens;    /* the most KV tokens one block walks */
	size_t work_indptr_bytes;   /* (blocks + 1) int32 */
	size_t work_bytes;          /* works ap_mla_work */
	size_t reduce_indptr_bytes; /* (batch + 1) int32 */
	size_t partial_out_bytes;   /* partials x launch_heads x 512 float */
	size_t partial_lse_bytes;   /* partials x launch_heads float */
} ap_mla_plan_size;

/* Sizes the plan for sequences of seq_lens[0..batch) on compute_units
 * compute units and launch_heads heads. Negative AP_EINPUT on bad input. */
int ap_mla_plan_size_for(ap_mla_plan_size *size, const int32_t *seq_lens, int batch,
                         int compute_units, int launch_heads);

/* Fills the metadata arrays (sized as size says) for the same inputs. */
int ap_mla_plan_fill(const ap_mla_plan_size *size, const int32_t *seq_lens, int compute_units,
                     int32_t *work_indptr, ap_mla_work *work, int32_t *reduce_indptr);

/* Sequence lengths from AITER's paged layout: sequence b owns pages
 * kv_indptr[b] .. kv_indptr[b + 1], the last of them filled to
 * last_page_lens[b] (1..page_size). Negative AP_EINPUT when they disagree. */
int ap_mla_seq_lens(const int32_t *kv_indptr, const int32_t *last_page_lens, int batch,
                    int page_size, int32_t *seq_lens);

#ifdef __cplusplus
}
#endif

#endif
