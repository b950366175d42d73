/* SPDX-License-Identifier: MIT */
/* The signatures of a manifest (scan --signatures) through the C API:
 * aiter_probe_manifest_signature and _binds on the calls fixture's golden
 * manifest and on its scan in process, and the manifests the reader refuses. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "aiter-probe.h"

#define GOLDEN AP_SRCDIR "/tests/golden/calls-signatures.json"
#define PLAIN AP_SRCDIR "/tests/golden/calls.json"

static aiter_probe_manifest *open_ok(const char *path)
{
	aiter_probe_manifest *m = NULL;

	assert_int_equal(aiter_probe_manifest_open(&m, path, 0), AITER_PROBE_OK);
	return m;
}

static int binds(const aiter_probe_manifest *m, const char *q, size_t pos, const char *kw,
                 char *why, size_t len)
{
	const char *v[8];
	size_t n = 0;
	char buf[256];

	snprintf(buf, sizeof buf, "%s", kw);
	for (char *t = strtok(buf, ","); t != NULL && n < 8; t = strtok(NULL, ","))
		v[n++] = t;
	return aiter_probe_manifest_binds(m, q, pos, v, n, why, len);
}

static void test_answers(void **state)
{
	aiter_probe_manifest *m = open_ok(GOLDEN);
	const char *params, *reason;
	char why[AITER_PROBE_WHY_BYTES];

	(void)state;
	assert_int_equal(aiter_probe_manifest_signature(m, "aiter.fused_moe.fused_topk", &params,
	                                                &reason), 1);
	assert_string_equal(params, "hidden_states, gating_output, topk, renormalize, /, "
	                            "topk_ids=\xe2\x80\xa6");
	assert_null(reason);
	assert_int_equal(aiter_probe_manifest_signature(m, "aiter.mla:mla_decode_fwd", &params,
	                                                NULL), 1);
	assert_int_equal(binds(m, "aiter.mla.mla_decode_fwd", 8, "sm_scale,logit_cap", why,
	                       sizeof why), 1);
	assert_int_equal(binds(m, "aiter.mla.mla_decode_fwd", 8, "sm_scale,causal", why,
	                       sizeof why), 0);
	assert_string_equal(why, "no parameter 'causal' (and no **kwargs)");
	assert_int_equal(binds(m, "aiter.mla.mla_decode_fwd", 7, "", why, sizeof why), 0);
	assert_string_equal(why, "required parameter 'max_seqlen_q' left unbound");
	assert_int_equal(binds(m, "aiter.fused_moe.fused_moe", 24, "", why, sizeof why), 0);
	assert_string_equal(why, "it takes at most 23 positional arguments");
	assert_int_equal(binds(m, "aiter.paged_attention", 2, "v,k", why, sizeof why), 1);
	assert_int_equal(binds(m, "aiter.fused_moe.fused_topk", 3, "renormalize", why, sizeof why),
	                 0);
	assert_string_equal(why, "'renormalize' is positional-only, given by keyword");
	assert_int_equal(binds(m, "aiter.pa_raw", 5, "dtype", why, sizeof why), 0);
	assert_string_equal(why, "'dtype' given both by position and by keyword");
	assert_int_equal(binds(m, "aiter.pa_varargs", 30, "x", NULL, 0), 1);
	/* a short buffer gets the reason's start */
	assert_int_equal(binds(m, "aiter.pa_raw", 5, "dtype", why, 6), 0);
	assert_string_equal(why, "'dtyp");
	aiter_probe_manifest_free(m);
}

static void test_cannot_tell(void **state)
{
	aiter_probe_manifest *m = open_ok(GOLDEN), *plain = open_ok(PLAIN);
	const char *params = "x", *reason = NULL;
	char why[AITER_PROBE_WHY_BYTES];

	(void)state;
	assert_int_equal(aiter_probe_manifest_signature(m, "aiter.PagedParams", &params, &reason),
	                 0);
	assert_null(params);
	assert_string_equal(reason, "a class: what calling it binds is its metaclass's, __new__'s "
	                            "and __init__'s, which are not read");
	assert_int_equal(binds(m, "aiter.all_gather", 0, "", why, sizeof why), AITER_PROBE_UNKNOWN);
	assert_string_equal(why, "bound to a value, which may be callable or not; only a run tells");
	assert_string_equal(aiter_probe_last_error(), "aiter.all_gather: cannot tell: bound to a "
	                                              "value, which may be callable or not; only a "
	                                              "run tells");
	assert_int_equal(binds(m, "aiter.moe_sum", 2, "", why, sizeof why), AITER_PROBE_UNKNOWN);
	assert_string_equal(why, "no callable of that name recorded (not bound there, a module, a "
	                         "name imported from outside the tree, or past the scan's cap)");
	assert_int_equal(binds(m, "aiter.ops.triton.gluon.mla_gluon.mla_gluon", 0, "", why,
	                       sizeof why), AITER_PROBE_UNKNOWN);
	assert_string_equal(why, "no such module in the tree");
	assert_int_equal(binds(m, "aiter.nowhere.f", 0, "", why, sizeof why), AITER_PROBE_UNKNOWN);
	assert_string_equal(why, "the manifest records no signatures of that module");
	assert_int_equal(binds(m, "mla_decode_fwd", 0, "", why, sizeof why), AITER_PROBE_UNKNOWN);
	assert_string_equal(why, "a name must follow its module: aiter.mla.mla_decode_fwd, or "
	                         "aiter.mla:mla_decode_fwd");
	assert_int_equal(binds(plain, "aiter.mla.mla_decode_fwd", 8, "", why, sizeof why),
	                 AITER_PROBE_UNKNOWN);
	assert_string_equal(why, "the manifest records no signatures (scanned without "
	                         "--signatures)");
	aiter_probe_manifest_free(m);
	aiter_probe_manifest_free(plain);
}

static void test_refusals(void **state)
{
	aiter_probe_manifest *m = open_ok(GOLDEN);
	const char *twice[] = {"a", "a"}, *null_kw[] = {NULL};

	(void)state;
	assert_int_equal(aiter_probe_manifest_signature(NULL, "aiter.f", NULL, NULL),
	                 AITER_PROBE_INVALID);
	assert_string_equal(aiter_probe_last_error(), "aiter_probe_manifest_signature: m is NULL");
	assert_int_equal(aiter_probe_manifest_binds(m, NULL, 0, NULL, 0, NULL, 0),
	                 AITER_PROBE_INVALID);
	assert_string_equal(aiter_probe_last_error(), "aiter_probe_manifest_binds: qualname is NULL");
	assert_int_equal(aiter_probe_manifest_binds(m, "aiter.f", 0, NULL, 1, NULL, 0),
	                 AITER_PROBE_INVALID);
	assert_string_equal(aiter_probe_last_error(), "aiter_probe_manifest_binds: keywords is NULL");
	assert_int_equal(aiter_probe_manifest_binds(m, "aiter.f", 0, null_kw, 1, NULL, 0),
	                 AITER_PROBE_INVALID);
	assert_string_equal(aiter_probe_last_error(),
	                    "aiter_probe_manifest_binds: keywords[0] is NULL");
	assert_int_equal(aiter_probe_manifest_binds(m, "aiter.f", 0, twice, 2, NULL, 0),
	                 AITER_PROBE_INVALID);
	assert_string_equal(aiter_probe_last_error(),
	                    "aiter_probe_manifest_binds: keyword 'a' given twice");
	aiter_probe_manifest_free(m);
}

/* The golden manifest with one string replaced, as a file, opened. */
static void expect_refused(const char *from, const char *to, const char *message)
{
	char dir[] = "/tmp/ap-capi-sig-XXXXXX", path[64], *text, *at;
	aiter_probe_manifest *m = NULL;
	FILE *f = fopen(GOLDEN, "rb");
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + strlen(to) + 1);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	at = strstr(text, from);
	assert_non_null(at);
	memmove(at + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
	memcpy(at, to, strlen(to));
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/m.json", dir);
	f = fopen(path, "wb");
	fputs(text, f);
	fclose(f);
	free(text);
	assert_int_equal(aiter_probe_manifest_open(&m, path, 0), AITER_PROBE_ERROR);
	assert_null(m);
	assert_string_equal(aiter_probe_last_error() + strlen(path) + 2, message);
	unlink(path);
	rmdir(dir);
}

static void test_reader_refuses(void **state)
{
	(void)state;
	expect_refused("\"params\": \"q, k, /, v, *, scale=\\u2026, **extra\"",
	               "\"params\": \"q, k, /, v, *, scale=\\u2026, **extra, z\"",
	               "'signatures[\"aiter\"].callables[\"paged_attention\"].params' is no "
	               "parameter list: a parameter after **extra");
	expect_refused("\"params\": \"q, k, /, v, *, scale=\\u2026, **extra\"",
	               "\"params\": \"q k\"",
	               "'signatures[\"aiter\"].callables[\"paged_attention\"].params' is no "
	               "parameter list: 'q k' is no parameter");
	expect_refused("\"params\": \"q, k, /, v, *, scale=\\u2026, **extra\"",
	               "\"params\": \"q\", \"unknown\": \"x\"",
	               "'signatures[\"aiter\"].callables[\"paged_attention\"]' must have one of "
	               "'params' and 'unknown'");
	expect_refused("\"params\": \"q, k, /, v, *, scale=\\u2026, **extra\"", "\"params\": 3",
	               "'signatures[\"aiter\"].callables[\"paged_attention\"].params' must be a "
	               "string");
	/* the signatures' own "file", not a rule's before it */
	expect_refused("\"aiter\": {\n      \"file\": \"aiter/__init__.py\",",
	               "\"aiter\": {\n      \"file\": 1,",
	               "'signatures[\"aiter\"].file' must be a string or null");
	expect_refused("\"signatures\": {", "\"signatures\": {\"x\": [], ",
	               "'signatures[\"x\"]' must be an object");
}

static void test_scan_in_process(void **state)
{
	aiter_probe_scan_options o = AITER_PROBE_SCAN_OPTIONS_INIT;
	aiter_probe_manifest *m = NULL;
	char why[AITER_PROBE_WHY_BYTES];

	(void)state;
	o.aiter_root = AP_SRCDIR "/tests/fixtures/calls";
	o.datadir = AP_SRCDIR;
	o.python_version = "3.11";
	o.signatures = 1;
	assert_int_equal(aiter_probe_scan(&m, &o), AITER_PROBE_OK);
	assert_int_equal(binds(m, "aiter.topk_softmax", 5, "num_shared_experts", why, sizeof why),
	                 1);
	aiter_probe_manifest_free(m);
	/* a caller of version 3 has no such field: none recorded */
	o.version = 3;
	assert_int_equal(aiter_probe_scan(&m, &o), AITER_PROBE_OK);
	assert_int_equal(binds(m, "aiter.topk_softmax", 5, "", why, sizeof why),
	                 AITER_PROBE_UNKNOWN);
	aiter_probe_manifest_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_cannot_tell),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_reader_refuses),
		cmocka_unit_test(test_scan_in_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
