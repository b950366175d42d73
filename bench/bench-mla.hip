/* SPDX-License-Identifier: MIT */
/* bench-mla: MLA decode time, KV bandwidth as a fraction of the same GPU's
 * device-to-device copy bandwidth (measured in the same run), and the
 * padded (24 -> 32 heads) over native (24) time ratio.
 *
 * For each context and page size: batch 64, every sequence `context` tokens,
 * pages scattered through the cache; for H in 16, 24, 32, 64, 128 the median
 * of at least 20 timed launches (stage 1 + reducer) after warm-up. KV GB/s
 * counts each KV byte once (batch x context x 576 x 2 bytes); copy GB/s
 * counts bytes read plus bytes written. Prints a Markdown table. */
#include <hip/hip_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "core/ap-error.h"
#include "core/ap-util.h"
}
#include "mla-decode.h"
#include "mla-inputs.h"

enum { BATCH = 64, WARMUP = 5, REPS = 25 };

#define CHECK(call)                                                                      \
	do {                                                                             \
		hipError_t e_ = (call);                                                  \
		if (e_ != hipSuccess) {                                                  \
			fprintf(stderr, "bench-mla: %s: %s\n", #call, hipGetErrorString(e_)); \
			exit(3);                                                         \
		}                                                                        \
	} while (0)

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

struct plan_dev {
	ap_mla_plan_size size;
	int32_t *work_indptr, *reduce_indptr;
	ap_mla_work *work;
	float *partial_out, *partial_lse;
};

static void plan_upload(plan_dev *p, const int32_t *seq_lens, int cu, int heads)
{
	if (ap_mla_plan_size_for(&p->size, seq_lens, BATCH, cu, heads) < 0) {
		fprintf(stderr, "bench-mla: %s\n", ap_error_last());
		exit(2);
	}
	int32_t *wi = (int32_t *)ap_xmalloc(p->size.work_indptr_bytes);
	ap_mla_work *w = (ap_mla_work *)ap_xmalloc(p->size.work_bytes);
	int32_t *ri = (int32_t *)ap_xmalloc(p->size.reduce_indptr_bytes);
	if (ap_mla_plan_fill(&p->size, seq_lens, cu, wi, w, ri) < 0) {
		fprintf(stderr, "bench-mla: %s\n", ap_error_last());
		exit(2);
	}
	CHECK(hipMalloc((void **)&p->work_indptr, p->size.work_indptr_bytes));
	CHECK(hipMalloc((void **)&p->work, p->size.work_bytes));
	CHECK(hipMalloc((void **)&p->reduce_indptr, p->size.reduce_indptr_bytes));
	CHECK(hipMalloc((void **)&p->partial_out, p->size.partial_out_bytes));
	CHECK(hipMalloc((void **)&p->partial_lse, p->size.partial_lse_bytes));
	CHECK(hipMemcpy(p->work_indptr, wi, p->size.work_indptr_bytes, hipMemcpyHostToDevice));
	CHECK(hipMemcpy(p->work, w, p->size.work_bytes, hipMemcpyHostToDevice));
	CHECK(hipMemcpy(p->reduce_indptr, ri, p->size.reduce_indptr_bytes, hipMemcpyHostToDevice));
	free(wi);
	free(w);
	free(ri);
}

static void plan_free(plan_dev *p)
{
	CHECK(hipFree(p->work_indptr));
	CHECK(hipFree(p->work));
	CHECK(hipFree(p->reduce_indptr));
	CHECK(hipFree(p->partial_out));
	CHECK(hipFree(p->partial_lse));
}

struct launch {
	int heads, launch_heads;
	ap_mla_args args;
	const uint16_t *q;            /* real heads */
	int32_t *pad_map, *unpad_map; /* NULL: native */
	uint16_t *out;                /* real heads, when padded */
};

static void run(const launch *l)
{
	if (l->pad_map)
		CHECK(ap_mla_pad_q(l->q, (uint16_t *)l->args.q, l->pad_map, BATCH, l->heads,
		                   l->launch_heads));
	CHECK(ap_mla_decode(l->launch_heads, &l->args));
	if (l->unpad_map)
		CHECK(ap_mla_unpad_out(l->args.out, l->out, l->unpad_map, BATCH, l->heads,
		                       l->launch_heads));
}

/* Median microseconds of REPS timed runs after WARMUP untimed ones. */
static float time_us(void (*fn)(const void *), const void *arg)
{
	hipEvent_t a, b;
	float t[REPS];

	CHECK(hipEventCreate(&a));
	CHECK(hipEventCreate(&b));
	for (int i = 0; i < WARMUP; i++)
		fn(arg);
	CHECK(hipDeviceSynchronize());
	for (int i = 0; i < REPS; i++) {
		CHECK(hipEventRecord(a, 0));
		fn(arg);
		CHECK(hipEventRecord(b, 0));
		CHECK(hipEventSynchronize(b));
		CHECK(hipEventElapsedTime(&t[i], a, b));
	}
	CHECK(hipEventDestroy(a));
	CHECK(hipEventDestroy(b));
	qsort(t, REPS, sizeof(float), cmp_float);
	return t[REPS / 2] * 1000.f;
}

static void run_launch(const void *l)
{
	run((const launch *)l);
}

struct copy_arg {
	void *dst;
	const void *src;
	size_t bytes;
};

static void run_copy(const void *arg)
{
	const copy_arg *c = (const copy_arg *)arg;
	CHECK(hipMemcpy(c->dst, c->src, c->bytes, hipMemcpyDeviceToDevice));
}

static void setup_launch(launch *l, int heads, int launch_heads, const uint16_t *q,
                         const uint16_t *kv, const int32_t *kv_indptr, const int32_t *kv_indices,
                         int page_size, const plan_dev *p)
{
	memset(l, 0, sizeof(*l));
	l->heads = heads;
	l->launch_heads = launch_heads;
	l->q = q;
	uint16_t *q_launch = (uint16_t *)q;
	uint16_t *out;
	CHECK(hipMalloc((void **)&out, (size_t)BATCH * launch_heads * AP_MLA_HEAD_DIM * 2));
	if (launch_heads != heads) {
		ap_pad_mode mode;
		int32_t pad[AP_MLA_MAX_HEADS], unpad[AP_MLA_MAX_HEADS];
		if (ap_mla_pad_mode(heads, launch_heads, &mode) < 0) {
			fprintf(stderr, "bench-mla: %s\n", ap_error_last());
			exit(2);
		}
		ap_mla_head_maps(heads, launch_heads, mode, pad, unpad);
		CHECK(hipMalloc((void **)&l->pad_map, sizeof(pad)));
		CHECK(hipMalloc((void **)&l->unpad_map, sizeof(unpad)));
		CHECK(hipMemcpy(l->pad_map, pad, sizeof(pad), hipMemcpyHostToDevice));
		CHECK(hipMemcpy(l->unpad_map, unpad, sizeof(unpad), hipMemcpyHostToDevice));
		CHECK(hipMalloc((void **)&q_launch,
		                (size_t)BATCH * launch_heads * AP_MLA_QK_DIM * 2));
		CHECK(hipMalloc((void **)&l->out, (size_t)BATCH * heads * AP_MLA_HEAD_DIM * 2));
	}
	l->args = (ap_mla_args){
		.q = q_launch, .kv = kv, .kv_indptr = kv_indptr, .kv_indices = kv_indices,
		.page_size = page_size, .scale = 1.0f / sqrtf((float)AP_MLA_QK_DIM), .batch = BATCH,
		.blocks = p->size.blocks, .work_indptr = p->work_indptr, .work = p->work,
		.reduce_indptr = p->reduce_indptr, .partial_out = p->partial_out,
		.partial_lse = p->partial_lse, .out = out,
	};
}

static void free_launch(launch *l)
{
	CHECK(hipFree(l->args.out));
	if (l->pad_map) {
		CHECK(hipFree(l->pad_map));
		CHECK(hipFree(l->unpad_map));
		CHECK(hipFree((void *)l->args.q));
		CHECK(hipFree(l->out));
	}
}

int main(void)
{
	static const int heads_list[] = {16, 24, 32, 64, 128};
	static const int contexts[] = {8192, 32768};
	static const int page_sizes[] = {1, 64};
	hipDeviceProp_t prop;

	CHECK(hipSetDevice(0));
	CHECK(hipGetDeviceProperties(&prop, 0));
	int cu = prop.multiProcessorCount;

	/* the copy ceiling: 2 GiB, several times any cache */
	copy_arg copy = {NULL, NULL, (size_t)2 << 30};
	CHECK(hipMalloc(&copy.dst, copy.bytes));
	CHECK(hipMalloc((void **)&copy.src, copy.bytes));
	CHECK(ap_fill_uniform_bf16((uint16_t *)copy.src, copy.bytes / 2, 1, -1.f, 1.f));
	float copy_us = time_us(run_copy, &copy);
	double copy_gbs = 2.0 * copy.bytes / (copy_us * 1e3);
	CHECK(hipFree(copy.dst));
	CHECK(hipFree((void *)copy.src));

	printf("device: %s, %d compute units; device-to-device copy of %zu MiB: %.1f us, "
	       "%.0f GB/s (read + write)\n", prop.name, cu, copy.bytes >> 20, copy_us, copy_gbs);
	printf("batch %d; median of %d runs after %d warm-up runs; stage 1 + reducer\n\n", BATCH,
	       REPS, WARMUP);
	printf("| heads | context | page size | time (us) | KV GB/s | of copy BW | padded / native |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|\n");

	for (size_t ci = 0; ci < sizeof(contexts) / sizeof(contexts[0]); ci++) {
		for (size_t pi = 0; pi < sizeof(page_sizes) / sizeof(page_sizes[0]); pi++) {
			int ctx = contexts[ci], ps = page_sizes[pi];
			int32_t seq_lens[BATCH], indptr[BATCH + 1], last[BATCH];
			for (int b = 0; b < BATCH; b++)
				seq_lens[b] = ctx;
			int pages = BATCH * ((ctx + ps - 1) / ps) + BATCH;
			int32_t *indices = (int32_t *)ap_xcalloc((size_t)pages, sizeof(int32_t));
			int32_t *scratch = (int32_t *)ap_xcalloc((size_t)pages, sizeof(int32_t));
			int used = ap_make_page_table(seq_lens, BATCH, ps, pages, 7 + ctx + ps, indptr, last,
			                              indices, scratch);
			free(scratch);

			uint16_t *kv, *q;
			int32_t *d_indptr, *d_indices;
			size_t kv_elems = (size_t)pages * ps * AP_MLA_QK_DIM;
			CHECK(hipMalloc((void **)&kv, kv_elems * 2));
			CHECK(ap_fill_uniform_bf16(kv, kv_elems, 2, -1.f, 1.f));
			CHECK(hipMalloc((void **)&d_indptr, sizeof(indptr)));
			CHECK(hipMalloc((void **)&d_indices, (size_t)used * sizeof(int32_t)));
			CHECK(hipMemcpy(d_indptr, indptr, sizeof(indptr), hipMemcpyHostToDevice));
			CHECK(hipMemcpy(d_indices, indices, (size_t)used * sizeof(int32_t),
			                hipMemcpyHostToDevice));
			free(indices);
			double kv_bytes = (double)BATCH * ctx * AP_MLA_QK_DIM * 2;

			for (size_t hi = 0; hi < sizeof(heads_list) / sizeof(heads_list[0]); hi++) {
				int heads = heads_list[hi];
				plan_dev plan;
				launch l;
				CHECK(hipMalloc((void **)&q, (size_t)BATCH * heads * AP_MLA_QK_DIM * 2));
				CHECK(ap_fill_uniform_bf16(q, (size_t)BATCH * heads * AP_MLA_QK_DIM, 3, -6.f,
				                           6.f));
				plan_upload(&plan, seq_lens, cu, heads);
				setup_launch(&l, heads, heads, q, kv, d_indptr, d_indices, ps, &plan);
				float us = time_us(run_launch, &l);
				double gbs = kv_bytes / (us * 1e3);
				printf("| %d | %d | %d | %.1f | %.0f | %.1f%% | |\n", heads, ctx, ps, us, gbs,
				       100.0 * gbs / copy_gbs);
				free_launch(&l);
				plan_free(&plan);

				if (heads == 24) {
					plan_upload(&plan, seq_lens, cu, 32);
					setup_launch(&l, 24, 32, q, kv, d_indptr, d_indices, ps, &plan);
					float pad_us = time_us(run_launch, &l);
					printf("| 24 -> 32 padded | %d | %d | %.1f | %.0f | %.1f%% | %.3f |\n", ctx,
					       ps, pad_us, kv_bytes / (pad_us * 1e3),
					       100.0 * kv_bytes / (pad_us * 1e3) / copy_gbs, pad_us / us);
					free_launch(&l);
					plan_free(&plan);
				}
				CHECK(hipFree(q));
			}
			CHECK(hipFree(kv));
			CHECK(hipFree(d_indptr));
			CHECK(hipFree(d_indices));
		}
	}
	return 0;
}
