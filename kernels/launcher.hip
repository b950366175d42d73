/* SPDX-License-Identifier: MIT */
/* aiter-probe-launcher: runs one kernel cross-check on one GPU and prints
 * one JSON object (the contract is in src/engine/launch.h). The engine runs it as a
 * child process under a timeout, so a fault or a hang here costs the engine
 * nothing but this device's result. Needs only the GPU runtime and libc. */
#include <hip/hip_runtime.h>

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "core/ap-error.h"
#include "core/ap-util.h"
}
#include "mla-decode.h"
#include "mla-inputs.h"

enum { EXIT_PASSED = 0, EXIT_CHECK = 1, EXIT_USAGE = 2, EXIT_GPU = 3 };

/* Rows of the output checked against the double-precision reference. */
enum { REFERENCE_ROWS = 64 };
/* Timed repetitions of each launch, after one untimed warm-up. */
enum { TIMED_REPS = 5 };
static const size_t GUARD_MIN = 64 * 1024;
static const unsigned char CANARY = 0xa5;
static const uint64_t SEED = 0x61697465722d7072ull;

struct options {
	bool list;
	int device;
	const char *kernel;
	int heads, pad_to, head_dim, rope, batch, context, page_size;
	const char *inject;
};

struct result {
	ap_buf device;  /* the "device" object */
	ap_buf checks;  /* members of "checks" */
	ap_buf canary_trouble;
	int guards_checked;
	double tolerance;      /* of the reference check */
	double native_us, padded_us;
	char *error;
	int exit_code;
};

static void json_str(ap_buf *b, const char *s)
{
	ap_buf_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			ap_buf_printf(b, "\\%c", *p);
		else if (*p == '\n')
			ap_buf_puts(b, "\\n");
		else if (*p < 0x20 || *p == 0x7f)
			ap_buf_printf(b, "\\u%04x", *p);
		else
			ap_buf_putc(b, (char)*p);
	}
	ap_buf_putc(b, '"');
}

static void json_num(ap_buf *b, double v)
{
	if (isfinite(v))
		ap_buf_printf(b, "%.9g", v);
	else
		ap_buf_puts(b, "null");
}

static void json_bool(ap_buf *b, bool v)
{
	ap_buf_puts(b, v ? "true" : "false");
}

static const char *backend_name(void)
{
#ifdef AP_HIP_CUDA
	return "cuda";
#else
	return "hip";
#endif
}

/* Records a failure; the first message is the one reported, the worst exit
 * status wins. */
static void fail(result *res, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(result *res, int code, const char *fmt, ...)
{
	if (!res->error) {
		va_list ap;
		char msg[1024];
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		res->error = ap_xstrdup(msg);
	}
	if (code > res->exit_code)
		res->exit_code = code;
}

#define GPU_TRY(res, call, what)                                                            \
	do {                                                                                \
		hipError_t e_ = (call);                                                     \
		if (e_ != hipSuccess) {                                                     \
			fail(res, EXIT_GPU, "GPU error in %s: %s", what, hipGetErrorString(e_)); \
			return -1;                                                          \
		}                                                                           \
	} while (0)

static void device_arch(const hipDeviceProp_t *p, char *arch, size_t n)
{
#ifdef AP_HIP_CUDA
	snprintf(arch, n, "sm_%d%d", p->major, p->minor);
#else
	snprintf(arch, n, "%.*s", (int)strcspn(p->gcnArchName, ":"), p->gcnArchName);
#endif
}

/* Why hipGetDeviceCount or hipGetDeviceProperties found no device. A
 * machine without a GPU has no device or no driver, and the runtime's words
 * for the latter ("CUDA driver version is insufficient for CUDA runtime
 * version") would send people looking for a driver upgrade; they are kept
 * only for other failures, where they are the news. */
static const char *no_devices_reason(hipError_t e)
{
	static char reason[256];

	if (e == hipErrorNoDevice)
		return "no GPU found";
	if (e == hipErrorInsufficientDriver)
		return "no GPU found (no GPU driver, or one older than this runtime)";
	snprintf(reason, sizeof(reason), "no usable GPU: %s", hipGetErrorString(e));
	return reason;
}

static int list_devices(void)
{
	ap_buf b = AP_BUF_INIT;
	int count = 0;
	hipError_t e = hipGetDeviceCount(&count);

	ap_buf_puts(&b, "{\"backend\": ");
	json_str(&b, backend_name());
	ap_buf_puts(&b, ", \"devices\": [");
	for (int i = 0; e == hipSuccess && i < count; i++) {
		hipDeviceProp_t p;
		char arch[64];
		e = hipGetDeviceProperties(&p, i);
		if (e != hipSuccess)
			break;
		device_arch(&p, arch, sizeof(arch));
		ap_buf_printf(&b, "%s{\"index\": %d, \"name\": ", i ? ", " : "", i);
		json_str(&b, p.name);
		ap_buf_puts(&b, ", \"arch\": ");
		json_str(&b, arch);
		ap_buf_printf(&b, ", \"compute_units\": %d}", p.multiProcessorCount);
	}
	if (e != hipSuccess) {
		b.len = 0;
		ap_buf_puts(&b, "{\"backend\": ");
		json_str(&b, backend_name());
		ap_buf_puts(&b, ", \"devices\": [], \"reason\": ");
		json_str(&b, no_devices_reason(e));
		ap_buf_putc(&b, '}');
	} else if (count == 0) {
		ap_buf_puts(&b, "], \"reason\": \"no GPU found\"}");
	} else {
		ap_buf_puts(&b, "]}");
	}
	puts(b.data);
	ap_buf_free(&b);
	return EXIT_PASSED;
}

/* ---- guarded device buffers -------------------------------------------- */

/* [front guard][bytes][rear guard], guards filled with CANARY; the rear
 * guard reaches as far as the launch could address (`reach` bytes from the
 * start), so an overflow of an undersized buffer lands in it, not beyond. */
struct guarded {
	const char *name;
	unsigned char *base;
	size_t bytes, front, rear;
};

static void *gdata(const guarded *g)
{
	return g->base + g->front;
}

static int guarded_alloc(result *res, guarded *g, const char *name, size_t bytes, size_t reach)
{
	g->name = name;
	g->bytes = bytes;
	g->front = GUARD_MIN;
	g->rear = reach > bytes + GUARD_MIN ? (reach - bytes + 255) / 256 * 256 : GUARD_MIN;
	GPU_TRY(res, hipMalloc((void **)&g->base, g->front + g->bytes + g->rear), "allocation");
	GPU_TRY(res, hipMemset(g->base, CANARY, g->front + g->bytes + g->rear), "allocation");
	return 0;
}

static void guarded_free(guarded *g)
{
	if (g->base)
		(void)hipFree(g->base);
	g->base = NULL;
}

static size_t first_changed(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY)
			return i;
	return n;
}

static int guarded_check(result *res, const guarded *g, const char *launch)
{
	unsigned char *front = (unsigned char *)ap_xmalloc(g->front);
	unsigned char *rear = (unsigned char *)ap_xmalloc(g->rear);
	hipError_t e = hipMemcpy(front, g->base, g->front, hipMemcpyDeviceToHost);
	if (e == hipSuccess)
		e = hipMemcpy(rear, g->base + g->front + g->bytes, g->rear, hipMemcpyDeviceToHost);
	if (e != hipSuccess) {
		free(front);
		free(rear);
		fail(res, EXIT_GPU, "GPU error in canary check: %s", hipGetErrorString(e));
		return -1;
	}
	size_t f = first_changed(front, g->front), r = first_changed(rear, g->rear);
	if (f < g->front)
		ap_buf_printf(&res->canary_trouble, "%s%s launch: %s front guard overwritten %zu bytes "
		              "before the start", res->canary_trouble.len ? "; " : "", launch, g->name,
		              g->front - f);
	if (r < g->rear)
		ap_buf_printf(&res->canary_trouble, "%s%s launch: %s rear guard overwritten from byte "
		              "%zu past the end (buffer of %zu bytes)",
		              res->canary_trouble.len ? "; " : "", launch, g->name, r, g->bytes);
	res->guards_checked += 2;
	free(front);
	free(rear);
	return 0;
}

/* ---- inputs -------------------------------------------------------------- */

struct inputs {
	int batch, heads, page_size, pages;
	float scale;
	int32_t *seq_lens, *kv_indptr, *kv_indices, *last_page_lens;
	uint16_t *q, *kv;                       /* host */
	uint16_t *d_q, *d_kv;                   /* device */
	int32_t *d_kv_indptr, *d_kv_indices;
};

/* Lengths fall from `context` to about half of it, off the page and tile
 * grid, so splits start and end mid-page and sequences differ in splits. */
static void make_inputs(inputs *in, const options *o)
{
	uint64_t state = SEED;

	in->batch = o->batch;
	in->heads = o->heads;
	in->page_size = o->page_size;
	in->scale = 1.0f / sqrtf((float)AP_MLA_QK_DIM);
	in->seq_lens = (int32_t *)ap_xcalloc((size_t)o->batch, sizeof(int32_t));
	in->kv_indptr = (int32_t *)ap_xcalloc((size_t)o->batch + 1, sizeof(int32_t));
	in->last_page_lens = (int32_t *)ap_xcalloc((size_t)o->batch, sizeof(int32_t));
	int used = 0;
	for (int b = 0; b < o->batch; b++) {
		int len = o->context - b * (o->context / (2 * o->batch)) - b % 7;
		in->seq_lens[b] = len > 1 ? len : 1;
		used += (in->seq_lens[b] + o->page_size - 1) / o->page_size;
	}
	in->pages = used + o->batch;
	in->kv_indices = (int32_t *)ap_xcalloc((size_t)used, sizeof(int32_t));
	int32_t *scratch = (int32_t *)ap_xcalloc((size_t)in->pages, sizeof(int32_t));
	ap_make_page_table(in->seq_lens, o->batch, o->page_size, in->pages, SEED, in->kv_indptr,
	                   in->last_page_lens, in->kv_indices, scratch);
	free(scratch);

	/* q spans +-6 so that scores (std about 2) make the softmax peaked and
	 * the running max moves between tiles */
	size_t nq = (size_t)o->batch * o->heads * AP_MLA_QK_DIM;
	size_t nkv = (size_t)in->pages * o->page_size * AP_MLA_QK_DIM;
	in->q = (uint16_t *)ap_xmalloc(nq * 2);
	in->kv = (uint16_t *)ap_xmalloc(nkv * 2);
	for (size_t i = 0; i < nq; i++)
		in->q[i] = ap_f2bf(ap_uniform(&state, -6.f, 6.f));
	for (size_t i = 0; i < nkv; i++)
		in->kv[i] = ap_f2bf(ap_uniform(&state, -1.f, 1.f));
}

static int upload_inputs(result *res, inputs *in)
{
	size_t nq = (size_t)in->batch * in->heads * AP_MLA_QK_DIM * 2;
	size_t nkv = (size_t)in->pages * in->page_size * AP_MLA_QK_DIM * 2;
	size_t nind = (size_t)in->kv_indptr[in->batch] * sizeof(int32_t);

	GPU_TRY(res, hipMalloc((void **)&in->d_q, nq), "allocation");
	GPU_TRY(res, hipMalloc((void **)&in->d_kv, nkv), "allocation");
	GPU_TRY(res, hipMalloc((void **)&in->d_kv_indptr, (in->batch + 1) * sizeof(int32_t)),
	        "allocation");
	GPU_TRY(res, hipMalloc((void **)&in->d_kv_indices, nind), "allocation");
	GPU_TRY(res, hipMemcpy(in->d_q, in->q, nq, hipMemcpyHostToDevice), "upload");
	GPU_TRY(res, hipMemcpy(in->d_kv, in->kv, nkv, hipMemcpyHostToDevice), "upload");
	GPU_TRY(res, hipMemcpy(in->d_kv_indptr, in->kv_indptr, (in->batch + 1) * sizeof(int32_t),
	                       hipMemcpyHostToDevice), "upload");
	GPU_TRY(res, hipMemcpy(in->d_kv_indices, in->kv_indices, nind, hipMemcpyHostToDevice),
	        "upload");
	return 0;
}

/* ---- one launch path ------------------------------------------------------ */

struct launch_path {
	const char *label;          /* "native" or "padded" */
	int launch_heads;
	int plan_heads;             /* the heads the metadata is sized for */
	ap_pad_mode mode;
	int32_t *d_pad_map, *d_unpad_map;
	uint16_t *d_q_launch;       /* q as launched */
	guarded work_indptr, work, reduce_indptr, partial_out, partial_lse, out_launch;
	uint16_t *d_out;            /* [batch][heads][512], the real heads */
	ap_mla_plan_size size;
	int blocks;
};

static guarded *path_guards(launch_path *p, int i)
{
	guarded *all[] = {&p->work_indptr, &p->work, &p->reduce_indptr, &p->partial_out,
	                  &p->partial_lse, &p->out_launch};
	return i < 6 ? all[i] : NULL;
}

static int plan_path(result *res, launch_path *p, const inputs *in, int compute_units)
{
	if (ap_mla_plan_size_for(&p->size, in->seq_lens, in->batch, compute_units, p->plan_heads) < 0) {
		fail(res, EXIT_USAGE, "%s", ap_error_last());
		return -1;
	}
	/* what a launch of launch_heads over this plan addresses */
	size_t reach_out = (size_t)p->size.partials * p->launch_heads * AP_MLA_HEAD_DIM * sizeof(float);
	size_t reach_lse = (size_t)p->size.partials * p->launch_heads * sizeof(float);
	int32_t *work_indptr = (int32_t *)ap_xmalloc(p->size.work_indptr_bytes);
	ap_mla_work *work = (ap_mla_work *)ap_xmalloc(p->size.work_bytes ? p->size.work_bytes : 1);
	int32_t *reduce_indptr = (int32_t *)ap_xmalloc(p->size.reduce_indptr_bytes);
	int rc = ap_mla_plan_fill(&p->size, in->seq_lens, compute_units, work_indptr, work,
	                          reduce_indptr);
	size_t out_bytes = (size_t)in->batch * p->launch_heads * AP_MLA_HEAD_DIM * 2;
	if (rc < 0) {
		fail(res, EXIT_USAGE, "%s", ap_error_last());
	} else if (guarded_alloc(res, &p->work_indptr, "work_indptr", p->size.work_indptr_bytes,
	                         0) < 0 ||
	           guarded_alloc(res, &p->work, "work", p->size.work_bytes, 0) < 0 ||
	           guarded_alloc(res, &p->reduce_indptr, "reduce_indptr", p->size.reduce_indptr_bytes,
	                         0) < 0 ||
	           guarded_alloc(res, &p->partial_out, "partial_out", p->size.partial_out_bytes,
	                         reach_out) < 0 ||
	           guarded_alloc(res, &p->partial_lse, "partial_lse", p->size.partial_lse_bytes,
	                         reach_lse) < 0 ||
	           guarded_alloc(res, &p->out_launch, "out", out_bytes, out_bytes) < 0) {
		rc = -1;
	} else {
		hipError_t e = hipMemcpy(gdata(&p->work_indptr), work_indptr, p->size.work_indptr_bytes,
		                         hipMemcpyHostToDevice);
		if (e == hipSuccess)
			e = hipMemcpy(gdata(&p->work), work, p->size.work_bytes, hipMemcpyHostToDevice);
		if (e == hipSuccess)
			e = hipMemcpy(gdata(&p->reduce_indptr), reduce_indptr, p->size.reduce_indptr_bytes,
			              hipMemcpyHostToDevice);
		/* unwritten output reads back as NaN */
		if (e == hipSuccess)
			e = hipMemset(gdata(&p->out_launch), 0xff, out_bytes);
		if (e != hipSuccess) {
			fail(res, EXIT_GPU, "GPU error in metadata upload: %s", hipGetErrorString(e));
			rc = -1;
		}
	}
	free(work_indptr);
	free(work);
	free(reduce_indptr);
	return rc;
}

static int run_once(result *res, const launch_path *p, const inputs *in, const char *inject,
                    const char *what)
{
	ap_mla_args a = {
		.q = p->d_q_launch,
		.kv = in->d_kv,
		.kv_indptr = in->d_kv_indptr,
		.kv_indices = in->d_kv_indices,
		.page_size = in->page_size,
		.scale = in->scale,
		.batch = in->batch,
		.blocks = p->size.blocks,
		.work_indptr = (const int32_t *)gdata(&p->work_indptr),
		.work = (const ap_mla_work *)gdata(&p->work),
		.reduce_indptr = (const int32_t *)gdata(&p->reduce_indptr),
		.partial_out = (float *)gdata(&p->partial_out),
		.partial_lse = (float *)gdata(&p->partial_lse),
		.out = (uint16_t *)gdata(&p->out_launch),
	};
	if (p->d_pad_map)
		GPU_TRY(res, ap_mla_pad_q(in->d_q, p->d_q_launch, p->d_pad_map, in->batch, in->heads,
		                          p->launch_heads), what);
	GPU_TRY(res, ap_mla_decode(p->launch_heads, &a), what);
	if (p->d_unpad_map)
		GPU_TRY(res, ap_mla_unpad_out(a.out, p->d_out, p->d_unpad_map, in->batch, in->heads,
		                              p->launch_heads), what);
	if (inject && !strcmp(inject, "fault"))
		GPU_TRY(res, ap_inject_fault(), what);
	if (inject && !strcmp(inject, "hang")) {
		fprintf(stderr, "aiter-probe-launcher: launching a kernel that does not finish\n");
		GPU_TRY(res, ap_inject_hang(), what);
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Warm-up, then TIMED_REPS timed runs; the median in microseconds. */
static int time_path(result *res, launch_path *p, const inputs *in, const char *inject,
                     double *median_us)
{
	hipEvent_t start, stop;
	double t[TIMED_REPS];
	char what[64];

	snprintf(what, sizeof(what), "%s launch", p->label);
	if (run_once(res, p, in, inject, what) < 0)
		return -1;
	GPU_TRY(res, hipDeviceSynchronize(), what);
	GPU_TRY(res, hipEventCreate(&start), what);
	GPU_TRY(res, hipEventCreate(&stop), what);
	for (int i = 0; i < TIMED_REPS; i++) {
		float ms;
		GPU_TRY(res, hipEventRecord(start, 0), what);
		if (run_once(res, p, in, NULL, what) < 0)
			return -1;
		GPU_TRY(res, hipEventRecord(stop, 0), what);
		GPU_TRY(res, hipEventSynchronize(stop), what);
		GPU_TRY(res, hipEventElapsedTime(&ms, start, stop), what);
		t[i] = ms * 1000.0;
	}
	(void)hipEventDestroy(start);
	(void)hipEventDestroy(stop);
	qsort(t, TIMED_REPS, sizeof(double), cmp_double);
	*median_us = t[TIMED_REPS / 2];
	for (int i = 0; path_guards(p, i); i++)
		if (guarded_check(res, path_guards(p, i), p->label) < 0)
			return -1;
	return 0;
}

static int setup_path(result *res, launch_path *p, const inputs *in, int compute_units)
{
	size_t nq = (size_t)in->batch * p->launch_heads * AP_MLA_QK_DIM * 2;

	if (p->mode == AP_PAD_NONE) {
		p->d_q_launch = in->d_q;
	} else {
		int32_t *pad = (int32_t *)ap_xcalloc((size_t)p->launch_heads, sizeof(int32_t));
		int32_t *unpad = (int32_t *)ap_xcalloc((size_t)in->heads, sizeof(int32_t));
		ap_mla_head_maps(in->heads, p->launch_heads, p->mode, pad, unpad);
		hipError_t e = hipMalloc((void **)&p->d_pad_map, p->launch_heads * sizeof(int32_t));
		if (e == hipSuccess)
			e = hipMalloc((void **)&p->d_unpad_map, in->heads * sizeof(int32_t));
		if (e == hipSuccess)
			e = hipMemcpy(p->d_pad_map, pad, p->launch_heads * sizeof(int32_t),
			              hipMemcpyHostToDevice);
		if (e == hipSuccess)
			e = hipMemcpy(p->d_unpad_map, unpad, in->heads * sizeof(int32_t),
			              hipMemcpyHostToDevice);
		if (e == hipSuccess)
			e = hipMalloc((void **)&p->d_q_launch, nq);
		free(pad);
		free(unpad);
		GPU_TRY(res, e, "padding setup");
	}
	if (plan_path(res, p, in, compute_units) < 0)
		return -1;
	if (p->mode == AP_PAD_NONE) {
		p->d_out = (uint16_t *)gdata(&p->out_launch);
	} else {
		size_t bytes = (size_t)in->batch * in->heads * AP_MLA_HEAD_DIM * 2;
		GPU_TRY(res, hipMalloc((void **)&p->d_out, bytes), "padding setup");
		GPU_TRY(res, hipMemset(p->d_out, 0xff, bytes), "padding setup");
	}
	return 0;
}

static void free_path(launch_path *p)
{
	for (int i = 0; path_guards(p, i); i++)
		guarded_free(path_guards(p, i));
	if (p->mode != AP_PAD_NONE) {
		(void)hipFree(p->d_pad_map);
		(void)hipFree(p->d_unpad_map);
		(void)hipFree(p->d_q_launch);
		(void)hipFree(p->d_out);
	}
}

static int download_out(result *res, const launch_path *p, const inputs *in, uint16_t **host)
{
	size_t n = (size_t)in->batch * in->heads * AP_MLA_HEAD_DIM;
	*host = (uint16_t *)ap_xmalloc(n * 2);
	GPU_TRY(res, hipMemcpy(*host, p->d_out, n * 2, hipMemcpyDeviceToHost), "output download");
	return 0;
}

/* ---- checks ---------------------------------------------------------------- */

static void reference_row(const inputs *in, int b, int h, double *out)
{
	int len = in->seq_lens[b];
	const uint16_t *q = in->q + ((size_t)b * in->heads + h) * AP_MLA_QK_DIM;
	double *s = (double *)ap_xmalloc((size_t)len * sizeof(double));
	double mx = -INFINITY, sum = 0.0;

	for (int t = 0; t < len; t++) {
		int page = in->kv_indices[in->kv_indptr[b] + t / in->page_size];
		const uint16_t *k = in->kv + ((size_t)page * in->page_size + t % in->page_size) *
		                                 AP_MLA_QK_DIM;
		double dot = 0.0;
		for (int d = 0; d < AP_MLA_QK_DIM; d++)
			dot += (double)ap_bf2f(q[d]) * ap_bf2f(k[d]);
		s[t] = dot * in->scale;
		mx = fmax(mx, s[t]);
	}
	for (int d = 0; d < AP_MLA_HEAD_DIM; d++)
		out[d] = 0.0;
	for (int t = 0; t < len; t++) {
		int page = in->kv_indices[in->kv_indptr[b] + t / in->page_size];
		const uint16_t *v = in->kv + ((size_t)page * in->page_size + t % in->page_size) *
		                                 AP_MLA_QK_DIM;
		double p = exp(s[t] - mx);
		sum += p;
		for (int d = 0; d < AP_MLA_HEAD_DIM; d++)
			out[d] += p * ap_bf2f(v[d]);
	}
	for (int d = 0; d < AP_MLA_HEAD_DIM; d++)
		out[d] /= sum;
	free(s);
}

/* Native output against float64 on sampled rows (always the first and the
 * last row). Tolerance: bf16 rounding of P and of the output, 2^-7 of the
 * largest reference value plus 2^-10 (|V| <= 1). */
static void check_reference(result *res, const inputs *in, const uint16_t *out)
{
	int total = in->batch * in->heads;
	int rows = total < REFERENCE_ROWS ? total : REFERENCE_ROWS;
	uint64_t state = SEED ^ 0x5eedull;
	double ref[AP_MLA_HEAD_DIM], max_err = 0.0, max_ref = 0.0;
	bool nan = false;

	for (int i = 0; i < rows; i++) {
		int row = i == 0 ? 0 : i == rows - 1 ? total - 1
		        : rows == total ? i : (int)(ap_splitmix(&state) % (uint64_t)total);
		int b = row / in->heads, h = row % in->heads;
		reference_row(in, b, h, ref);
		for (int d = 0; d < AP_MLA_HEAD_DIM; d++) {
			double got = ap_bf2f(out[(size_t)row * AP_MLA_HEAD_DIM + d]);
			if (isnan(got))
				nan = true;
			max_err = fmax(max_err, fabs(got - ref[d]));
			max_ref = fmax(max_ref, fabs(ref[d]));
		}
	}
	double tol = max_ref / 128.0 + 1.0 / 1024.0;
	bool passed = !nan && max_err <= tol;
	res->tolerance = tol;
	ap_buf_printf(&res->checks, "%s\"reference\": {\"passed\": ", res->checks.len ? ", " : "");
	json_bool(&res->checks, passed);
	ap_buf_puts(&res->checks, ", \"max_abs_err\": ");
	json_num(&res->checks, nan ? NAN : max_err);
	ap_buf_puts(&res->checks, ", \"tolerance\": ");
	json_num(&res->checks, tol);
	ap_buf_printf(&res->checks, ", \"rows\": %d}", rows);
	if (nan)
		fail(res, EXIT_CHECK, "reference: the native output has NaN (unwritten or overflowed)");
	else if (!passed)
		fail(res, EXIT_CHECK, "reference: max abs error %.6g exceeds the tolerance %.6g",
		     max_err, tol);
}

/* The padded path's real heads against the native ones. When both plans
 * split the KV alike the per-head arithmetic is the same, so every bit must
 * be; otherwise the splits round differently and the reference tolerance
 * applies. */
static void check_padded(result *res, const inputs *in, int launch_heads, const uint16_t *native,
                         const uint16_t *padded)
{
	size_t n = (size_t)in->batch * in->heads * AP_MLA_HEAD_DIM, differ = 0;
	double max_diff = 0.0;

	ap_buf_printf(&res->checks, "%s\"padded_vs_native\": {\"passed\": ",
	              res->checks.len ? ", " : "");
	if (!padded) {
		ap_buf_puts(&res->checks, "true, \"max_abs_diff\": null, \"detail\": "
		                          "\"no padded launch: the launch head count is the real one\"}");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (native[i] == padded[i])
			continue;
		differ++;
		double d = fabs((double)ap_bf2f(native[i]) - ap_bf2f(padded[i]));
		max_diff = isnan(d) ? INFINITY : fmax(max_diff, d);
	}
	bool exact = ap_mla_same_split(in->heads, launch_heads);
	bool passed = exact ? differ == 0 : max_diff <= res->tolerance;
	json_bool(&res->checks, passed);
	ap_buf_puts(&res->checks, ", \"max_abs_diff\": ");
	json_num(&res->checks, max_diff);
	ap_buf_printf(&res->checks, ", \"elements_differing\": %zu, \"exact\": ", differ);
	json_bool(&res->checks, exact);
	if (!exact) {
		ap_buf_puts(&res->checks, ", \"tolerance\": ");
		json_num(&res->checks, res->tolerance);
	}
	ap_buf_putc(&res->checks, '}');
	if (!passed && exact)
		fail(res, EXIT_CHECK, "padded_vs_native: %zu of %zu output values differ (max abs "
		     "difference %.6g)", differ, n, max_diff);
	else if (!passed)
		fail(res, EXIT_CHECK, "padded_vs_native: max abs difference %.6g exceeds the tolerance "
		     "%.6g (the launches split the KV differently)", max_diff, res->tolerance);
}

static void check_canaries(result *res)
{
	bool passed = res->canary_trouble.len == 0;
	ap_buf_printf(&res->checks, "%s\"canaries\": {\"passed\": ", res->checks.len ? ", " : "");
	json_bool(&res->checks, passed);
	ap_buf_puts(&res->checks, ", \"detail\": ");
	if (passed) {
		char detail[160];
		snprintf(detail, sizeof(detail), "%d guard regions intact around work_indptr, work, "
		         "reduce_indptr, partial_out, partial_lse and out", res->guards_checked);
		json_str(&res->checks, detail);
	} else {
		json_str(&res->checks, res->canary_trouble.data);
		fail(res, EXIT_CHECK, "canaries: %s", res->canary_trouble.data);
	}
	ap_buf_putc(&res->checks, '}');
}

/* ---- the launch --------------------------------------------------------------- */

static int run_launch(result *res, const options *o)
{
	hipDeviceProp_t prop;
	char arch[64];
	int count = 0;

	ap_buf_printf(&res->device, "{\"index\": %d", o->device);
	GPU_TRY(res, hipGetDeviceCount(&count), "device query");
	if (o->device >= count) {
		fail(res, EXIT_GPU, "GPU error: no device %d (%d found)", o->device, count);
		return -1;
	}
	GPU_TRY(res, hipSetDevice(o->device), "device query");
	GPU_TRY(res, hipGetDeviceProperties(&prop, o->device), "device query");
	device_arch(&prop, arch, sizeof(arch));
	ap_buf_puts(&res->device, ", \"name\": ");
	json_str(&res->device, prop.name);
	ap_buf_puts(&res->device, ", \"arch\": ");
	json_str(&res->device, arch);

	inputs in = {};
	make_inputs(&in, o);
	if (upload_inputs(res, &in) < 0)
		return -1;

	bool undersize = o->inject && !strcmp(o->inject, "undersize-metadata");
	bool padded = o->pad_to > 0 && o->pad_to != o->heads;
	launch_path native = {}, pad = {};
	native.label = "native";
	native.launch_heads = o->heads;
	native.plan_heads = undersize && !padded ? o->heads / 2 : o->heads;
	native.mode = AP_PAD_NONE;
	pad.label = "padded";
	pad.launch_heads = o->pad_to;
	pad.plan_heads = undersize ? o->heads : o->pad_to;
	if (padded && ap_mla_pad_mode(o->heads, o->pad_to, &pad.mode) < 0) {
		fail(res, EXIT_USAGE, "%s", ap_error_last());
		return -1;
	}

	const char *native_inject = o->inject && strcmp(o->inject, "undersize-metadata") ? o->inject
	                                                                                  : NULL;
	if (setup_path(res, &native, &in, prop.multiProcessorCount) < 0 ||
	    time_path(res, &native, &in, native_inject, &res->native_us) < 0)
		return -1;
	if (padded && (setup_path(res, &pad, &in, prop.multiProcessorCount) < 0 ||
	               time_path(res, &pad, &in, NULL, &res->padded_us) < 0))
		return -1;

	uint16_t *native_out = NULL, *padded_out = NULL;
	if (download_out(res, &native, &in, &native_out) < 0 ||
	    (padded && download_out(res, &pad, &in, &padded_out) < 0)) {
		free(native_out);
		return -1;
	}
	/* canaries first: an overflow explains whatever the other checks see */
	check_canaries(res);
	check_reference(res, &in, native_out);
	check_padded(res, &in, o->pad_to, native_out, padded_out);
	free(native_out);
	free(padded_out);
	free_path(&native);
	if (padded)
		free_path(&pad);
	return 0;
}

static void print_result(result *res, const options *o)
{
	ap_buf b = AP_BUF_INIT;
	ap_pad_mode mode = AP_PAD_NONE;
	int launch_heads = o->pad_to > 0 ? o->pad_to : o->heads;

	if (launch_heads < o->heads || ap_mla_pad_mode(o->heads, launch_heads, &mode) < 0)
		launch_heads = o->heads;
	if (res->device.len == 0)
		ap_buf_printf(&res->device, "{\"index\": %d", o->device);
	ap_buf_puts(&b, "{\"device\": ");
	ap_buf_puts(&b, res->device.data);
	ap_buf_puts(&b, "}, \"status\": ");
	json_str(&b, res->exit_code == EXIT_PASSED ? "passed" : "failed");
	ap_buf_printf(&b, ", \"op\": \"mla_decode\", \"heads\": %d, \"pad_to\": %d, "
	              "\"launch_heads\": %d, \"mode\": ", o->heads, o->pad_to, launch_heads);
	json_str(&b, ap_pad_mode_name(mode));
	ap_buf_printf(&b, ", \"batch\": %d, \"context\": %d, \"page_size\": %d, \"checks\": {%s}",
	              o->batch, o->context, o->page_size, res->checks.len ? res->checks.data : "");
	ap_buf_puts(&b, ", \"timings_us\": {\"native\": ");
	json_num(&b, res->native_us);
	ap_buf_puts(&b, ", \"padded\": ");
	json_num(&b, res->padded_us);
	ap_buf_putc(&b, '}');
	if (res->error) {
		ap_buf_puts(&b, ", \"error\": ");
		json_str(&b, res->error);
	}
	ap_buf_putc(&b, '}');
	puts(b.data);
	fflush(stdout);
	ap_buf_free(&b);
}

/* ---- command line ----------------------------------------------------------- */

static const char usage_text[] =
	"usage: aiter-probe-launcher --list\n"
	"       aiter-probe-launcher --device N --kernel mla_decode --heads H [--pad-to P]\n"
	"                            [--head-dim 512] [--rope 64] [--batch B] [--context C]\n"
	"                            [--page-size S] [--inject fault|hang|undersize-metadata]\n";

static int usage_error(const options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const options *o, const char *fmt, ...)
{
	result res = {};
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "aiter-probe-launcher: %s\n%s", msg, usage_text);
	res.native_us = res.padded_us = NAN;
	fail(&res, EXIT_USAGE, "usage: %s", msg);
	print_result(&res, o);
	return EXIT_USAGE;
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"list", no_argument, NULL, 'l'},
		{"device", required_argument, NULL, 'd'},
		{"kernel", required_argument, NULL, 'k'},
		{"heads", required_argument, NULL, 'H'},
		{"pad-to", required_argument, NULL, 'p'},
		{"head-dim", required_argument, NULL, 'D'},
		{"rope", required_argument, NULL, 'r'},
		{"batch", required_argument, NULL, 'b'},
		{"context", required_argument, NULL, 'c'},
		{"page-size", required_argument, NULL, 's'},
		{"inject", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	options o = {};
	o.device = -1;
	o.head_dim = AP_MLA_HEAD_DIM;
	o.rope = AP_MLA_ROPE_DIM;
	o.batch = 8;
	o.context = 2048;
	o.page_size = 16;
	int c;
	struct { int lo, hi; int *dst; const char *name; } ranges[] = {
		{0, 1 << 20, &o.device, "--device"},
		{1, AP_MLA_MAX_HEADS, &o.heads, "--heads"},
		{0, AP_MLA_MAX_HEADS, &o.pad_to, "--pad-to"},
		{1, 1 << 16, &o.head_dim, "--head-dim"},
		{0, 1 << 16, &o.rope, "--rope"},
		{1, 1 << 16, &o.batch, "--batch"},
		{1, 1 << 22, &o.context, "--context"},
		{1, 1 << 16, &o.page_size, "--page-size"},
	};
	const char *range_opts = "dHpDrbcs";

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		const char *slot = c ? strchr(range_opts, c) : NULL;
		if (slot) {
			int i = (int)(slot - range_opts);
			if (!parse_int(optarg, ranges[i].lo, ranges[i].hi, ranges[i].dst))
				return usage_error(&o, "%s wants an integer in %d..%d, not '%s'",
				                   ranges[i].name, ranges[i].lo, ranges[i].hi, optarg);
			continue;
		}
		switch (c) {
		case 'l':
			o.list = true;
			break;
		case 'k':
			o.kernel = optarg;
			break;
		case 'i':
			o.inject = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return EXIT_PASSED;
		default:
			return usage_error(&o, "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(&o, "unexpected argument '%s'", argv[optind]);
	if (o.list)
		return list_devices();
	if (o.device < 0 || !o.kernel || !o.heads)
		return usage_error(&o, "--device, --kernel and --heads are required");
	if (strcmp(o.kernel, "mla_decode"))
		return usage_error(&o, "unknown kernel '%s' (known: mla_decode)", o.kernel);
	if (o.head_dim != AP_MLA_HEAD_DIM || o.rope != AP_MLA_ROPE_DIM)
		return usage_error(&o, "mla_decode is compiled for head dim %d and rope %d, not %d and %d",
		                   AP_MLA_HEAD_DIM, AP_MLA_ROPE_DIM, o.head_dim, o.rope);
	if (o.pad_to && o.pad_to < o.heads)
		return usage_error(&o, "--pad-to %d is less than --heads %d", o.pad_to, o.heads);
	if (o.inject && strcmp(o.inject, "fault") && strcmp(o.inject, "hang") &&
	    strcmp(o.inject, "undersize-metadata"))
		return usage_error(&o, "unknown --inject '%s' (fault, hang or undersize-metadata)",
		                   o.inject);
	if (o.inject && !strcmp(o.inject, "undersize-metadata") && o.heads == 1 &&
	    (o.pad_to == 0 || o.pad_to == 1))
		return usage_error(&o, "undersize-metadata needs more than one head or a padded launch");

	result res = {};
	res.native_us = res.padded_us = NAN;
	run_launch(&res, &o);
	print_result(&res, &o);
	return res.exit_code;
}
