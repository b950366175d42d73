/* SPDX-License-Identifier: MIT */
/* Host entry points of the MLA decode kernels (kernels/mla-decode.hip), for
 * the launcher and the benchmark. Every pointer is device memory; bf16 is
 * carried as its 16 bits. Calls queue work on the default stream and return
 * the launch status; errors inside a kernel surface at the next sync. */
#ifndef AP_MLA_DECODE_H
#define AP_MLA_DECODE_H

#include <hip/hip_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "mla-plan.h"

typedef struct ap_mla_args {
	const uint16_t *q;              /* [batch][heads][576] */
	const uint16_t *kv;             /* [pages][page_size][576], shared by all heads */
	const int32_t *kv_indptr;       /* [batch + 1]: sequence b owns pages kv_indices[indptr[b]..] */
	const int32_t *kv_indices;
	int page_size;
	float scale;                    /* softmax scale */
	int batch;
	/* from ap_mla_plan_fill, planned for `heads` of ap_mla_decode */
	int blocks;
	const int32_t *work_indptr;
	const ap_mla_work *work;
	const int32_t *reduce_indptr;
	float *partial_out;             /* [partials][heads][512] */
	float *partial_lse;             /* [partials][heads], log2 domain */
	uint16_t *out;                  /* [batch][heads][512] */
} ap_mla_args;

/* Stage 1 (split-KV partials) and the reducer, compiled for heads 1..128. */
hipError_t ap_mla_decode(int heads, const ap_mla_args *a);

/* q_pad[b][j] = q[b][map[j]] for j < launch_heads. */
hipError_t ap_mla_pad_q(const uint16_t *q, uint16_t *q_pad, const int32_t *map, int batch,
                        int heads, int launch_heads);
/* out[b][h] = out_pad[b][map[h]] for h < heads. */
hipError_t ap_mla_unpad_out(const uint16_t *out_pad, uint16_t *out, const int32_t *map,
                            int batch, int heads, int launch_heads);

/* Uniform values in [lo, hi), a pure function of (seed, index). */
hipError_t ap_fill_uniform_bf16(uint16_t *p, size_t n, uint64_t seed, float lo, float hi);

/* For the engine's tests: a kernel that writes to an unmapped address, and
 * one that spins until its process is killed (bounded at about 2^40 clock
 * cycles so a forgotten one cannot hold a shared GPU for ever). */
hipError_t ap_inject_fault(void);
hipError_t ap_inject_hang(void);

#endif
