/* SPDX-License-Identifier: MIT */
/* The one per-platform seam of the kernels: matrix-unit tiles, shared-memory
 * copies and warp shuffles. Everything above this header is the same HIP
 * source on AMD and NVIDIA.
 *
 * A tile product is D(16x16) += A(16x16) B(16x16), bf16 in, f32 accumulate:
 * MFMA 16x16x16 bf16 on AMD CDNA, two mma.sync m16n8k16 on NVIDIA. The lane
 * layout of a fragment is the platform's; kernels reach accumulator elements
 * only through ap_frag_c_row/col, and know the warp width only as AP_WARP. */
#ifndef AP_MMA_H
#define AP_MMA_H

#include <hip/hip_runtime.h>
#include <stdint.h>

#if defined(AP_HIP_CUDA)

/* NVIDIA: 32-lane warps, 8 a block (16 would cap registers at 128 a thread
 * and spill the q fragments); 227 KB of shared memory holds two 64-token KV
 * tiles, one loading while the other is used (smaller tiles in more stages
 * measured slower: more barriers per token). */
constexpr int AP_WARP = 32;
constexpr int AP_THREADS = 256;
constexpr int AP_KV_TILE = 64;
constexpr int AP_KV_STAGES = 2;
constexpr int AP_FRAG_C = 8;

struct ap_frag_a {
	uint32_t r[4];
};
struct ap_frag_b {
	uint32_t r[4]; /* n 0-7 (k 0-7, k 8-15), then n 8-15 */
};
struct ap_frag_c {
	float v[AP_FRAG_C];
};

__device__ __forceinline__ int ap_lane(void)
{
	return threadIdx.x % AP_WARP;
}

__device__ __forceinline__ int ap_frag_c_row(int i)
{
	return ap_lane() / 4 + 8 * ((i % 4) / 2);
}

__device__ __forceinline__ int ap_frag_c_col(int i)
{
	return 8 * (i / 4) + 2 * (ap_lane() % 4) + i % 2;
}

__device__ __forceinline__ void ap_ldsm_x4(uint32_t r[4], const uint16_t *p)
{
	uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
	             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

__device__ __forceinline__ void ap_ldsm_x4_trans(uint32_t r[4], const uint16_t *p)
{
	uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
	             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

/* A[m][k] at p[m * ld + k] (shared memory, rows 16-byte aligned). */
__device__ __forceinline__ void ap_load_a(ap_frag_a &a, const uint16_t *p, int ld)
{
	int l = ap_lane();
	ap_ldsm_x4(a.r, p + (l % 8 + 8 * ((l / 8) % 2)) * ld + 8 * (l / 16));
}

/* B[k][n] at p[n * ld + k]: the rows of a K tile. */
__device__ __forceinline__ void ap_load_b_nk(ap_frag_b &b, const uint16_t *p, int ld)
{
	int l = ap_lane();
	ap_ldsm_x4(b.r, p + (l % 8 + 8 * (l / 16)) * ld + 8 * ((l / 8) % 2));
}

/* B[k][n] at p[k * ld + n]: the rows of a V tile. */
__device__ __forceinline__ void ap_load_b_kn(ap_frag_b &b, const uint16_t *p, int ld)
{
	int l = ap_lane();
	ap_ldsm_x4_trans(b.r, p + (l % 8 + 8 * ((l / 8) % 2)) * ld + 8 * (l / 16));
}

__device__ __forceinline__ void ap_mma(ap_frag_c &c, const ap_frag_a &a, const ap_frag_b &b)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
	             "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
	             : "+f"(c.v[0]), "+f"(c.v[1]), "+f"(c.v[2]), "+f"(c.v[3])
	             : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
	             "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
	             : "+f"(c.v[4]), "+f"(c.v[5]), "+f"(c.v[6]), "+f"(c.v[7])
	             : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[2]), "r"(b.r[3]));
}

/* D to a row-major f32 tile at p[row * ld + col]: column pairs as one
 * 8-byte store (ld a multiple of 8 keeps them conflict-free). */
__device__ __forceinline__ void ap_store_c(float *p, int ld, const ap_frag_c &c)
{
#pragma unroll
	for (int i = 0; i < AP_FRAG_C; i += 2)
		*(float2 *)(p + ap_frag_c_row(i) * ld + ap_frag_c_col(i)) = make_float2(c.v[i], c.v[i + 1]);
}

/* 16 bytes global -> shared without a register round trip; zeros when
 * !valid (src must still be a valid address). */
__device__ __forceinline__ void ap_copy16_async(uint16_t *dst, const uint16_t *src, bool valid)
{
	uint32_t s = (uint32_t)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
	             :: "r"(s), "l"(src), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void ap_copy_commit(void)
{
	asm volatile("cp.async.commit_group;");
}

/* Waits until at most `pending` of this thread's newest copy groups are
 * still in flight. */
template <int pending> __device__ __forceinline__ void ap_copy_wait(void)
{
	asm volatile("cp.async.wait_group %0;" :: "n"(pending) : "memory");
}

__device__ __forceinline__ float ap_shfl_xor(float v, int mask)
{
	return __shfl_xor_sync(0xffffffffu, v, mask);
}

/* Orders shared-memory accesses among the lanes of a warp. */
__device__ __forceinline__ void ap_warp_sync(void)
{
	__syncwarp();
}

#else /* AMD CDNA */

/* AMD: 64-lane wavefronts; 64 KB of LDS holds q and one 16-token KV tile. */
constexpr int AP_WARP = 64;
constexpr int AP_THREADS = 256;
constexpr int AP_KV_TILE = 16;
constexpr int AP_KV_STAGES = 1;
constexpr int AP_FRAG_C = 4;

typedef short ap_bf16x4 __attribute__((__vector_size__(4 * sizeof(short))));
typedef float ap_f32x4 __attribute__((__vector_size__(4 * sizeof(float))));

struct ap_frag_a {
	ap_bf16x4 v;
};
struct ap_frag_b {
	ap_bf16x4 v;
};
struct ap_frag_c {
	ap_f32x4 v;
};

__device__ __forceinline__ int ap_lane(void)
{
	return threadIdx.x % AP_WARP;
}

__device__ __forceinline__ int ap_frag_c_row(int i)
{
	return 4 * (ap_lane() / 16) + i;
}

__device__ __forceinline__ int ap_frag_c_col(int i)
{
	(void)i;
	return ap_lane() % 16;
}

/* A[m][k] at p[m * ld + k]: lane holds row lane%16, k 4*(lane/16)..+3. */
__device__ __forceinline__ void ap_load_a(ap_frag_a &a, const uint16_t *p, int ld)
{
	int l = ap_lane();
	a.v = *(const ap_bf16x4 *)(p + (l % 16) * ld + 4 * (l / 16));
}

/* B[k][n] at p[n * ld + k]: lane holds column lane%16, k 4*(lane/16)..+3. */
__device__ __forceinline__ void ap_load_b_nk(ap_frag_b &b, const uint16_t *p, int ld)
{
	int l = ap_lane();
	b.v = *(const ap_bf16x4 *)(p + (l % 16) * ld + 4 * (l / 16));
}

/* B[k][n] at p[k * ld + n]. */
__device__ __forceinline__ void ap_load_b_kn(ap_frag_b &b, const uint16_t *p, int ld)
{
	int l = ap_lane();
	for (int j = 0; j < 4; j++)
		b.v[j] = (short)p[(4 * (l / 16) + j) * ld + l % 16];
}

__device__ __forceinline__ void ap_mma(ap_frag_c &c, const ap_frag_a &a, const ap_frag_b &b)
{
	c.v = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a.v, b.v, c.v, 0, 0, 0);
}

/* D to a row-major f32 tile at p[row * ld + col]. */
__device__ __forceinline__ void ap_store_c(float *p, int ld, const ap_frag_c &c)
{
	for (int i = 0; i < AP_FRAG_C; i++)
		p[ap_frag_c_row(i) * ld + ap_frag_c_col(i)] = c.v[i];
}

__device__ __forceinline__ void ap_copy16_async(uint16_t *dst, const uint16_t *src, bool valid)
{
	*(uint4 *)dst = valid ? *(const uint4 *)src : make_uint4(0, 0, 0, 0);
}

__device__ __forceinline__ void ap_copy_commit(void)
{
}

template <int pending> __device__ __forceinline__ void ap_copy_wait(void)
{
}

__device__ __forceinline__ float ap_shfl_xor(float v, int mask)
{
	return __shfl_xor(v, mask);
}

/* A wavefront's lanes run in lockstep: nothing to order. */
__device__ __forceinline__ void ap_warp_sync(void)
{
}

#endif

#endif
