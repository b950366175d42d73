/* SPDX-License-Identifier: MIT */
/* In-process throughput of the normalizer and the three matchers on a large
 * synthetic C-like input: bench-match [MiB] [runs]. Prints figures only. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/match.h"
#include "engine/lang/normalize.h"

#define MAX_RUNS 32

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Dispatch-table code much like a kernel library's: macros with
 * continuations, comments of both kinds, an #if 0 block, string literals,
 * num_heads comparisons that are near misses of the ones looked for. */
static char *make_input(size_t want, size_t *len)
{
	ap_buf b = AP_BUF_INIT;
	unsigned seed = 12345;
	unsigned k = 0;

	while (b.len < want) {
		unsigned heads = 1 + (seed = seed * 1103515245u + 12345u) % 200;
		if (heads == 24)
			heads = 240;
		ap_buf_printf(&b,
		              "#define REDUCE_CASE_%u(NUM_HEAD, HEAD_DIM, ...)        \\\n"
		              "    if (num_heads == %u && head_dim == %u) {          \\\n"
		              "        launch_reduce<%u, %u>(__VA_ARGS__);            \\\n"
		              "    }\n"
		              "// case %u: dispatch for %u heads (see num_heads == 24 below)\n"
		              "/* The planner splits the work per head group;\n"
		              " * each group covers %u query heads. */\n"
		              "static int plan_%u(int num_heads, const char *why)\n"
		              "{\n"
		              "\tint tiles = num_heads * %u + 0x%x; /* rounded up */\n"
		              "\tif (tiles > %u)\n"
		              "\t\treturn report(\"too many tiles // for %%d heads\", tiles);\n"
		              "\treturn my_num_heads == %u ? tiles : -1;\n"
		              "}\n",
		              k, heads, 64u << (k % 4), heads, 64u << (k % 4), k, heads, heads % 16 + 1,
		              k, heads % 7 + 1, k & 0xffff, 1000 + heads, heads);
		if (k % 64 == 0)
			ap_buf_printf(&b, "#if 0\nMLA_REDUCE_CASE_EF(NUM_HEAD, 24, HEAD_DIM, 512, old)\n"
			                  "#endif\n");
		k++;
	}
	ap_buf_puts(&b, "#define MLA_REDUCE_CASE_EF(NUM_HEAD, HEAD_DIM, ...) \\\n"
	                "    MLA_REDUCE_CASE_EF(NUM_HEAD, 24, HEAD_DIM, 512, __VA_ARGS__)\n"
	                "if (num_heads == 24) { plan_native(); }\n");
	*len = b.len;
	return ap_buf_detach(&b);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a;
	double y = *(const double *)b;
	return (x > y) - (x < y);
}

struct figure {
	const char *name;
	double t[MAX_RUNS];
};

static void report(const struct figure *f, int runs, size_t bytes)
{
	double s[MAX_RUNS];
	double mb = (double)bytes / 1e6;

	memcpy(s, f->t, sizeof s);
	qsort(s, (size_t)runs, sizeof s[0], cmp_double);
	printf("%-44s best %8.0f MB/s   median %8.0f MB/s\n", f->name, mb / s[0],
	       mb / s[runs / 2]);
}

static ap_matcher *compile(const char *kind, const char *pattern)
{
	ap_matcher *m;
	size_t off;

	if (ap_matcher_new(&m, kind, pattern, AP_WS_KEEP, &off) < 0) {
		fprintf(stderr, "bench-match: %s\n", ap_error_last());
		exit(1);
	}
	return m;
}

static size_t match_all(const ap_matcher *m, const ap_text *t)
{
	ap_match_list l = {0};
	size_t n;

	if (ap_matcher_run(m, t, AP_COLLECT_ALL, &l) < 0) {
		fprintf(stderr, "bench-match: %s\n", ap_error_last());
		exit(1);
	}
	n = l.n;
	ap_match_list_free(&l);
	return n;
}

static void normalize(ap_text *t, const char *in, size_t len, ap_ws ws)
{
	if (ap_normalize(t, in, len, AP_LANG_C, ws) < 0) {
		fprintf(stderr, "bench-match: %s\n", ap_error_last());
		exit(1);
	}
}

enum { F_KEEP, F_STRIP, F_LIT, F_TOK, F_RE, F_COUNT };

/* One pass over pieces of the input as separate files (the tool's case:
 * each file normalized once, then matched), timing each step. */
static void one_run(const char *in, size_t len, size_t piece, ap_matcher *const m[3],
                    double t[F_COUNT], size_t found[3])
{
	memset(found, 0, 3 * sizeof found[0]);
	memset(t, 0, F_COUNT * sizeof t[0]);
	for (size_t at = 0; at < len;) {
		const char *nl;
		size_t end = at + piece < len ? at + piece : len;
		ap_text keep, strip;
		double t0;

		/* Files end at a line end, as source files do. */
		nl = end < len ? memchr(in + end, '\n', len - end) : NULL;
		end = nl ? (size_t)(nl - in) + 1 : len;
		t0 = now();
		normalize(&keep, in + at, end - at, AP_WS_KEEP);
		t[F_KEEP] += now() - t0;
		t0 = now();
		normalize(&strip, in + at, end - at, AP_WS_STRIP);
		t[F_STRIP] += now() - t0;
		t0 = now();
		found[0] += match_all(m[0], &strip);
		t[F_LIT] += now() - t0;
		t0 = now();
		found[1] += match_all(m[1], &keep);
		t[F_TOK] += now() - t0;
		t0 = now();
		found[2] += match_all(m[2], &keep);
		t[F_RE] += now() - t0;
		ap_text_free(&keep);
		ap_text_free(&strip);
		at = end;
	}
}

static void bench_layout(const char *title, const char *in, size_t len, size_t piece, int runs,
                         ap_matcher *const m[3])
{
	struct figure f[] = {
		{.name = "normalize c keep"},
		{.name = "normalize c strip-whitespace"},
		{.name = "literal (strip text)"},
		{.name = "token (keep text)"},
		{.name = "regex (keep text)"},
		{.name = "normalize strip + literal"},
		{.name = "normalize keep + token"},
		{.name = "normalize keep + regex"},
		{.name = "all: both normalizations + three matchers"},
	};
	size_t found[3];

	printf("\n%s\n", title);
	for (int r = 0; r < runs; r++) {
		double t[F_COUNT];
		one_run(in, len, piece, m, t, found);
		for (int k = 0; k < F_COUNT; k++)
			f[k].t[r] = t[k];
		f[5].t[r] = t[F_STRIP] + t[F_LIT];
		f[6].t[r] = t[F_KEEP] + t[F_TOK];
		f[7].t[r] = t[F_KEEP] + t[F_RE];
		f[8].t[r] = t[F_KEEP] + t[F_STRIP] + t[F_LIT] + t[F_TOK] + t[F_RE];
	}
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		report(&f[i], runs, len);
	printf("matches: literal %zu, token %zu, regex %zu\n", found[0], found[1], found[2]);
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	size_t len;
	char *in;
	ap_matcher *m[3];

	if (runs < 1 || runs > MAX_RUNS || mib == 0 || mib > 3072) {
		fprintf(stderr, "usage: bench-match [MiB 1..3072] [runs 1..%d]\n", MAX_RUNS);
		return 2;
	}
	m[0] = compile("literal", "MLA_REDUCE_CASE_EF(NUM_HEAD,24,HEAD_DIM,512,");
	m[1] = compile("token", "num_heads == 24");
	m[2] = compile("regex", "MLA_REDUCE_CASE_EF\\(NUM_HEAD,\\s*(?<heads>\\d+),"
	                       "\\s*HEAD_DIM,\\s*(?<head_dim>\\d+)");
	in = make_input(mib << 20, &len);
	printf("input: %.1f MB of synthetic C, %d runs, MB/s of input\n", (double)len / 1e6, runs);
	bench_layout("as 1 MiB files (the tool's case: buffers reused)", in, len, (size_t)1 << 20,
	             runs, m);
	bench_layout("as one text (first touch of every output page counted)", in, len, len, runs,
	             m);
	for (int k = 0; k < 3; k++)
		ap_matcher_free(m[k]);
	free(in);
	return 0;
}
