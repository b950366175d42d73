/* SPDX-License-Identifier: MIT */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8

#include <pcre2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/kind.h"

/* `regex`: a PCRE2 pattern; named groups become captures. */

struct regex {
	pcre2_code *code;
	bool jit;
};

/* Regex budget. The match limit bounds the backtracking steps of one search
 * (all start positions together); ten million steps take well under a second
 * and leave ordinary patterns over a 16 MiB file far from the limit, while a
 * catastrophic pattern such as (a+)+$ reaches it quickly. The depth limit
 * bounds the interpreter's backtracking depth (the JIT is bounded by its stack
 * instead), the heap limit the memory the interpreter may take for it. */
#define REGEX_MATCH_LIMIT 10000000u
#define REGEX_DEPTH_LIMIT 100000u
#define REGEX_HEAP_LIMIT_KIB (256u * 1024u)
#define REGEX_JIT_STACK_START (32u * 1024u)
#define REGEX_JIT_STACK_MAX (8u * 1024u * 1024u)
/* The match limit holds for one search; collecting every match runs one
 * search per match, and a pattern that spends nearly the limit before each
 * of many matches would run for hours on a large file. The searches of one
 * run therefore share a CPU time budget, checked between searches: ordinary
 * patterns take milliseconds for a 16 MiB file, far from it. */
#define REGEX_RUN_CPU_SECONDS 1u

/* Patterns are compiled as bytes, without PCRE2_UTF: AITER's sources are
 * mostly ASCII and a file need not be valid UTF-8, which PCRE2_UTF would
 * require of every subject. A non-ASCII character in a pattern matches its
 * UTF-8 bytes literally; '.' matches one byte. */

static void *pcre2_alloc(PCRE2_SIZE n, void *unused)
{
	return ap_xmalloc(n);
}

static void pcre2_release(void *p, void *unused)
{
	free(p);
}

/* PCRE2's allocations go through ap_xmalloc, so they never fail. */
static pcre2_general_context *general_context(void)
{
	return pcre2_general_context_create(pcre2_alloc, pcre2_release, NULL);
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int regex_failure(int rc)
{
	PCRE2_UCHAR msg[256];

	switch (rc) {
	case PCRE2_ERROR_MATCHLIMIT:
		ap_error_set("regex exceeded its match limit (%u steps)", REGEX_MATCH_LIMIT);
		return AP_ELIMIT;
	case PCRE2_ERROR_DEPTHLIMIT:
		ap_error_set("regex exceeded its depth limit (%u)", REGEX_DEPTH_LIMIT);
		return AP_ELIMIT;
	case PCRE2_ERROR_HEAPLIMIT:
		ap_error_set("regex exceeded its heap limit (%u KiB)", REGEX_HEAP_LIMIT_KIB);
		return AP_ELIMIT;
	case PCRE2_ERROR_JIT_STACKLIMIT:
		ap_error_set("regex exceeded its JIT stack limit (%u bytes)", REGEX_JIT_STACK_MAX);
		return AP_ELIMIT;
	default:
		pcre2_get_error_message(rc, msg, sizeof msg);
		ap_error_set("regex match failed: %s", (const char *)msg);
		return AP_EINTERNAL;
	}
}

struct name_entry {
	unsigned group;
	const char *name;
};

static int by_group(const void *a, const void *b)
{
	const struct name_entry *x = a;
	const struct name_entry *y = b;
	return (x->group > y->group) - (x->group < y->group);
}

/* The named groups in group-number order (PCRE2's table is by name). */
static struct name_entry *named_groups(const pcre2_code *code, size_t *count)
{
	uint32_t n = 0;
	uint32_t entry_size = 0;
	PCRE2_SPTR table = NULL;
	struct name_entry *v;

	pcre2_pattern_info(code, PCRE2_INFO_NAMECOUNT, &n);
	*count = n;
	if (n == 0)
		return NULL;
	pcre2_pattern_info(code, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
	pcre2_pattern_info(code, PCRE2_INFO_NAMETABLE, &table);
	v = ap_xcalloc(n, sizeof *v);
	for (uint32_t k = 0; k < n; k++) {
		PCRE2_SPTR e = table + (size_t)k * entry_size;
		v[k].group = ((unsigned)e[0] << 8) | e[1];
		v[k].name = (const char *)(e + 2);
	}
	qsort(v, n, sizeof *v, by_group);
	return v;
}

static void add_captures(ap_match *mt, const ap_text *t, const PCRE2_SIZE *ov, uint32_t ngroups,
                         const struct name_entry *names, size_t nnames)
{
	for (size_t k = 0; k < nnames; k++) {
		unsigned g = names[k].group;
		if (g >= ngroups || ov[2 * g] == PCRE2_UNSET)
			continue;
		ap_match_capture(mt, names[k].name, t->s + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
	}
}

static int regex_run(const void *state, const ap_text *t, ap_collect collect, ap_match_list *out)
{
	const struct regex *m = state;
	pcre2_general_context *gctx = general_context();
	pcre2_match_context *mctx = pcre2_match_context_create(gctx);
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(m->code, gctx);
	pcre2_jit_stack *stack = NULL;
	PCRE2_SPTR subject = (PCRE2_SPTR)t->s;
	size_t nnames;
	struct name_entry *names = named_groups(m->code, &nnames);
	PCRE2_SIZE start = 0;
	uint32_t opts = 0;
	int ret = 0;
	double started = cpu_seconds();

	pcre2_set_match_limit(mctx, REGEX_MATCH_LIMIT);
	pcre2_set_depth_limit(mctx, REGEX_DEPTH_LIMIT);
	pcre2_set_heap_limit(mctx, REGEX_HEAP_LIMIT_KIB);
	if (m->jit) {
		/* NULL (no memory for it): the JIT's small default stack serves. */
		stack = pcre2_jit_stack_create(REGEX_JIT_STACK_START, REGEX_JIT_STACK_MAX, gctx);
		if (stack != NULL)
			pcre2_jit_stack_assign(mctx, NULL, stack);
	}
	for (;;) {
		int rc = pcre2_match(m->code, subject, t->len, start, opts, md, mctx);
		PCRE2_SIZE *ov;
		ap_match *mt;
		if (rc == PCRE2_ERROR_NOMATCH) {
			/* After an empty match, a non-empty one at the same place
			 * was not found: move on by one byte. */
			if (opts == 0 || start >= t->len)
				break;
			start++;
			opts = 0;
			continue;
		}
		if (rc < 0) {
			ret = regex_failure(rc);
			break;
		}
		ov = pcre2_get_ovector_pointer(md);
		mt = ap_match_add(out, t, ov[0]);
		add_captures(mt, t, ov, pcre2_get_ovector_count(md), names, nnames);
		if (collect == AP_COLLECT_FIRST || out->over)
			break;
		start = ov[1];
		opts = ov[0] == ov[1] ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0;
		if (cpu_seconds() - started > REGEX_RUN_CPU_SECONDS) {
			ap_error_set("regex exceeded its time limit (%u s of CPU for all its "
			             "matches in a file)", REGEX_RUN_CPU_SECONDS);
			ret = AP_ELIMIT;
			break;
		}
	}
	free(names);
	pcre2_match_data_free(md);
	pcre2_jit_stack_free(stack);
	pcre2_match_context_free(mctx);
	pcre2_general_context_free(gctx);
	return ret;
}


static int regex_compile(void **state, const char *pattern, ap_ws ws, size_t *err_offset)
{
	struct regex *m = ap_xcalloc(1, sizeof *m);
	pcre2_general_context *gctx = general_context();
	pcre2_compile_context *cctx = pcre2_compile_context_create(gctx);
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE erroff;
	int errcode;

	(void)ws;
	*state = m;
	m->code = pcre2_compile((PCRE2_SPTR)pattern, strlen(pattern), 0, &errcode, &erroff, cctx);
	pcre2_compile_context_free(cctx);
	pcre2_general_context_free(gctx);
	if (m->code == NULL) {
		pcre2_get_error_message(errcode, msg, sizeof msg);
		ap_error_set("%s", (const char *)msg);
		*err_offset = erroff;
		return AP_EINPUT;
	}
	/* Without JIT support (or when it cannot compile this pattern) the
	 * interpreter runs it, under the same limits. */
	m->jit = pcre2_jit_compile(m->code, PCRE2_JIT_COMPLETE) == 0;
	return 0;
}

static void regex_free(void *state)
{
	struct regex *m = state;

	if (m == NULL)
		return;
	pcre2_code_free(m->code);
	free(m);
}

static const ap_text_ops regex_ops = {
	.what = "regex",
	.compile = regex_compile,
	.run = regex_run,
	.free = regex_free,
	.offset_errors = true,
};

const ap_kind ap_kind_regex = {
	.key = "regex",
	.flags = AP_KIND_FILE | AP_KIND_TEXT | AP_KIND_COLLECT,
	.text = &regex_ops,
};
