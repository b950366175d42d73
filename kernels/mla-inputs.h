/* SPDX-License-Identifier: MIT */
/* Host-side inputs shared by the launcher and the benchmark: a seeded
 * generator, bf16 conversion, and AITER-style page tables whose pages are
 * scattered through the cache the way a serving backend's allocator leaves
 * them. */
#ifndef AP_MLA_INPUTS_H
#define AP_MLA_INPUTS_H

#include <stdint.h>
#include <string.h>

static inline uint64_t ap_splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline float ap_uniform(uint64_t *state, float lo, float hi)
{
	return lo + (hi - lo) * (float)(ap_splitmix(state) >> 40) * (1.0f / 16777216.0f);
}

static inline uint16_t ap_f2bf(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return 0x7fc0;
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline float ap_bf2f(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Pages for seq_lens[0..batch): kv_indptr[batch + 1], last_page_lens[batch]
 * and kv_indices[total] (total = kv_indptr[batch]), drawn without repeats
 * from a cache of `pages` pages (at least total). Returns total. */
static inline int ap_make_page_table(const int32_t *seq_lens, int batch, int page_size, int pages,
                                     uint64_t seed, int32_t *kv_indptr, int32_t *last_page_lens,
                                     int32_t *kv_indices, int32_t *scratch_pages)
{
	kv_indptr[0] = 0;
	for (int b = 0; b < batch; b++) {
		int n = (seq_lens[b] + page_size - 1) / page_size;
		kv_indptr[b + 1] = kv_indptr[b] + n;
		last_page_lens[b] = n == 0 ? 0 : seq_lens[b] - (n - 1) * page_size;
	}
	for (int i = 0; i < pages; i++)
		scratch_pages[i] = i;
	for (int i = pages - 1; i > 0; i--) {
		int j = (int)(ap_splitmix(&seed) % (uint64_t)(i + 1));
		int32_t t = scratch_pages[i];
		scratch_pages[i] = scratch_pages[j];
		scratch_pages[j] = t;
	}
	memcpy(kv_indices, scratch_pages, sizeof(int32_t) * (size_t)kv_indptr[batch]);
	return kv_indptr[batch];
}

#endif
