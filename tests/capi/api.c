/* SPDX-License-Identifier: MIT */
/* The C API, through the shared library's exported symbols only. */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aiter-probe.h"

#define MANIFESTS AP_SRCDIR "/tests/manifests/"

static aiter_probe_manifest *open_ok(const char *path, unsigned flags)
{
	aiter_probe_manifest *m = NULL;

	assert_int_equal(aiter_probe_manifest_open(&m, path, flags), AITER_PROBE_OK);
	assert_non_null(m);
	return m;
}

static void expect_open_fails(const char *path, unsigned flags, int code, const char *message)
{
	aiter_probe_manifest *m = (aiter_probe_manifest *)1;

	assert_int_equal(aiter_probe_manifest_open(&m, path, flags), code);
	assert_null(m);
	assert_string_equal(aiter_probe_last_error(), message);
}

static void test_version(void **state)
{
	assert_string_equal(aiter_probe_version(), PACKAGE_VERSION);
}

static void test_supported(void **state)
{
	aiter_probe_manifest *good = open_ok(MANIFESTS "good.json", 0);
	aiter_probe_manifest *second = open_ok(MANIFESTS "second.json", 0);

	assert_int_equal(aiter_probe_manifest_supported(good, "mla.decode.native_h24"), 1);
	assert_int_equal(aiter_probe_manifest_supported(good, "mla.decode.native_h16"), 1);
	assert_int_equal(aiter_probe_manifest_supported(second, "mla.decode.native_h24"), 0);
	assert_int_equal(aiter_probe_manifest_supported(good, "mla.decode.native_h25"), -1);
	assert_string_equal(aiter_probe_last_error(), "unknown capability 'mla.decode.native_h25'");
	aiter_probe_manifest_free(good);
	aiter_probe_manifest_free(second);
	aiter_probe_manifest_free(NULL);
}

static void test_capabilities(void **state)
{
	aiter_probe_manifest *good = open_ok(MANIFESTS "good.json", 0);
	aiter_probe_manifest *second = open_ok(MANIFESTS "second.json", 0);
	const char *status = "", *reason = "";

	assert_int_equal(aiter_probe_manifest_capability_count(good), 2);
	assert_string_equal(aiter_probe_manifest_capability_id(good, 0), "mla.decode.native_h16");
	assert_string_equal(aiter_probe_manifest_capability_id(good, 1), "mla.decode.native_h24");
	assert_null(aiter_probe_manifest_capability_id(good, 2));
	assert_string_equal(aiter_probe_last_error(), "the manifest has 2 capabilities, no capability 2");

	assert_string_equal(aiter_probe_manifest_capability_reason(good, "mla.decode.native_h24"),
	                    "all of mla.reduce.native_h24_d512, mla.metadata.native_h24 hold");
	assert_string_equal(aiter_probe_manifest_capability_reason(second, "mla.decode.native_h24"),
	                    "rule mla.reduce.native_h24_d512 is unmatched");
	assert_null(aiter_probe_manifest_capability_reason(good, "mla.nope"));
	assert_string_equal(aiter_probe_last_error(), "unknown capability 'mla.nope'");

	assert_int_equal(aiter_probe_manifest_capability_evidence_count(good, "mla.decode.native_h24"),
	                 2);
	assert_string_equal(aiter_probe_manifest_capability_evidence(good, "mla.decode.native_h24", 0),
	                    "csrc/kernels/mla/reduce.cu:10");
	assert_string_equal(aiter_probe_manifest_capability_evidence(good, "mla.decode.native_h24", 1),
	                    "csrc/kernels/mla/metadata/v1_2_device.cuh:6");
	assert_null(aiter_probe_manifest_capability_evidence(good, "mla.decode.native_h24", 2));
	assert_string_equal(aiter_probe_last_error(),
	                    "capability 'mla.decode.native_h24' has 2 evidence entries, no entry 2");
	assert_int_equal(aiter_probe_manifest_capability_evidence_count(good, "mla.nope"), 0);
	assert_string_equal(aiter_probe_last_error(), "unknown capability 'mla.nope'");
	assert_null(aiter_probe_manifest_capability_evidence(good, "mla.nope", 0));
	assert_string_equal(aiter_probe_last_error(), "unknown capability 'mla.nope'");

	assert_int_equal(aiter_probe_manifest_capability_launch(good, "mla.decode.native_h24", &status,
	                                                        &reason), 1);
	assert_string_equal(status, "passed");
	assert_string_equal(reason, "passed on 1 of 1 devices");
	assert_int_equal(aiter_probe_manifest_capability_launch(second, "mla.decode.native_h24",
	                                                        &status, NULL), 1);
	assert_string_equal(status, "failed");
	assert_int_equal(aiter_probe_manifest_capability_launch(good, "mla.decode.native_h16", &status,
	                                                        &reason), 0);
	assert_null(status);
	assert_null(reason);
	status = reason = "";
	assert_int_equal(aiter_probe_manifest_capability_launch(good, "mla.nope", &status, &reason),
	                 AITER_PROBE_UNKNOWN);
	assert_null(status);
	assert_null(reason);
	assert_string_equal(aiter_probe_last_error(), "unknown capability 'mla.nope'");
	aiter_probe_manifest_free(good);
	aiter_probe_manifest_free(second);
}

static void test_rule_ids(void **state)
{
	aiter_probe_manifest *m = open_ok(MANIFESTS "good.json", 0);
	static const char *const ids[] = {"mla.reduce.native_h16_d512", "mla.reduce.native_h24_d512",
	                                  "mla.metadata.native_h24", "mla.reduce.cases"};
	size_t i;

	assert_int_equal(aiter_probe_manifest_rule_count(m), 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(aiter_probe_manifest_rule_id(m, i), ids[i]);
	assert_null(aiter_probe_manifest_rule_id(m, 4));
	assert_string_equal(aiter_probe_last_error(), "the manifest has 4 rules, no rule 4");
	assert_null(aiter_probe_manifest_rule_id(m, (size_t)-1));
	aiter_probe_manifest_free(m);
}

/* A rule that ends unknown: never a match, and the capability it leaves
 * unknown not supported, its reason saying so. */
static void test_unknown_rule(void **state)
{
	aiter_probe_manifest *m = open_ok(MANIFESTS "unknown.json", 0);

	assert_string_equal(aiter_probe_manifest_rule_status(m, "mla.metadata.native_h24"),
	                    "unknown");
	assert_int_equal(aiter_probe_manifest_rule_matches(m, "mla.metadata.native_h24"), 0);
	assert_int_equal(aiter_probe_manifest_supported(m, "mla.decode.native_h24"), 0);
	assert_string_equal(aiter_probe_manifest_capability_reason(m, "mla.decode.native_h24"),
	                    "unknown, so unsupported: rule mla.metadata.native_h24 is unknown: "
	                    "csrc/kernels/mla/metadata/v1_2_device.cuh: the branch is under "
	                    "`#if MLA_HEADS_24`, which only the build defines");
	aiter_probe_manifest_free(m);
}

static void test_rules(void **state)
{
	aiter_probe_manifest *m = open_ok(MANIFESTS "good.json", 0);
	static const char *const heads[] = {"16", "16", "24", "32", "64"};
	static const char *const dims[] = {"128", "512", "512", "512", "512"};
	size_t i;

	assert_string_equal(aiter_probe_manifest_rule_status(m, "mla.reduce.native_h24_d512"),
	                    "matched");
	assert_null(aiter_probe_manifest_rule_status(m, "mla.nope"));
	assert_string_equal(aiter_probe_last_error(), "unknown rule 'mla.nope'");
	assert_int_equal(aiter_probe_manifest_rule_matches(m, "mla.reduce.cases"), 5);
	assert_int_equal(aiter_probe_manifest_rule_matches(m, "mla.nope"), 0);
	assert_string_equal(aiter_probe_last_error(), "unknown rule 'mla.nope'");
	for (i = 0; i < 5; i++) {
		assert_string_equal(aiter_probe_manifest_rule_capture(m, "mla.reduce.cases", i, "heads"),
		                    heads[i]);
		assert_string_equal(
			aiter_probe_manifest_rule_capture(m, "mla.reduce.cases", i, "head_dim"), dims[i]);
	}
	assert_null(aiter_probe_manifest_rule_capture(m, "mla.reduce.cases", 5, "heads"));
	assert_string_equal(aiter_probe_last_error(),
	                    "rule 'mla.reduce.cases' has 5 matches, no match 5");
	assert_null(aiter_probe_manifest_rule_capture(m, "mla.reduce.cases", 0, "rope"));
	assert_string_equal(aiter_probe_last_error(),
	                    "rule 'mla.reduce.cases' match 0 has no capture 'rope'");
	assert_null(aiter_probe_manifest_rule_capture(m, "mla.nope", 0, "heads"));
	assert_string_equal(aiter_probe_last_error(), "unknown rule 'mla.nope'");
	aiter_probe_manifest_free(m);
}

static void expect_plan(const aiter_probe_manifest *m, int heads, int launch, const char *mode,
                        int verified)
{
	const char *got_mode = NULL;
	int got_launch = -1, got_verified = -1;

	assert_int_equal(aiter_probe_manifest_mla_heads(m, heads, &got_launch, &got_mode,
	                                                &got_verified), 0);
	assert_int_equal(got_launch, launch);
	assert_string_equal(got_mode, mode);
	assert_int_equal(got_verified, verified);
}

/* Which kernel ran the launch and proved the plan row: recorded since AITER's
 * own kernels can run the cross-check; absent from manifests before that. */
static void test_kernels(void **state)
{
	aiter_probe_manifest *kernels = open_ok(MANIFESTS "kernels.json", 0);
	aiter_probe_manifest *good = open_ok(MANIFESTS "good.json", 0);

	(void)state;
	assert_string_equal(aiter_probe_manifest_capability_launch_kernel(kernels,
	                                                                  "mla.decode.native_h24"),
	                    "aiter");
	assert_string_equal(aiter_probe_manifest_mla_heads_kernel(kernels, 24), "aiter");
	assert_null(aiter_probe_manifest_mla_heads_kernel(kernels, 23));
	assert_null(aiter_probe_manifest_mla_heads_kernel(kernels, 129));
	assert_null(aiter_probe_manifest_capability_launch_kernel(kernels, "mla.decode.native_h16"));
	assert_null(aiter_probe_manifest_capability_launch_kernel(good, "mla.decode.native_h24"));
	assert_null(aiter_probe_manifest_mla_heads_kernel(good, 24));
	assert_null(aiter_probe_manifest_capability_launch_kernel(good, "mla.nope"));
	assert_null(aiter_probe_manifest_capability_launch_kernel(NULL, "mla.nope"));
	assert_string_equal(aiter_probe_last_error(),
	                    "aiter_probe_manifest_capability_launch_kernel: m is NULL");
	aiter_probe_manifest_free(kernels);
	aiter_probe_manifest_free(good);
}

static void test_mla_heads(void **state)
{
	aiter_probe_manifest *good = open_ok(MANIFESTS "good.json", 0);
	aiter_probe_manifest *second = open_ok(MANIFESTS "second.json", 0);
	int launch = 0;

	expect_plan(good, 24, 24, "none", 1);
	expect_plan(second, 24, 32, "tile-slice", 0);
	expect_plan(good, 1, 16, "repeat-interleave", 0);
	expect_plan(good, 8, 16, "repeat-interleave", 0);
	expect_plan(good, 100, 112, "tile-slice", 0);
	expect_plan(good, 128, 128, "none", 0);
	assert_int_equal(aiter_probe_manifest_mla_heads(good, 48, &launch, NULL, NULL), 0);
	assert_int_equal(launch, 48);
	assert_int_equal(aiter_probe_manifest_mla_heads(good, 129, NULL, NULL, NULL), -1);
	assert_string_equal(aiter_probe_last_error(), "plans.mla_heads has no row for 129 heads");
	assert_int_equal(aiter_probe_manifest_mla_heads(good, 0, NULL, NULL, NULL), -1);
	assert_string_equal(aiter_probe_last_error(), "plans.mla_heads has no row for 0 heads");
	aiter_probe_manifest_free(good);
	aiter_probe_manifest_free(second);
}

static void expect_row(const aiter_probe_manifest *m, size_t i, int heads, int launch,
                       const char *mode, int verified)
{
	const char *got_mode = NULL;
	int got_heads = -1, got_launch = -1, got_verified = -1;

	assert_int_equal(aiter_probe_manifest_mla_plan_row(m, i, &got_heads, &got_launch, &got_mode,
	                                                   &got_verified), AITER_PROBE_OK);
	assert_int_equal(got_heads, heads);
	assert_int_equal(got_launch, launch);
	assert_string_equal(got_mode, mode);
	assert_int_equal(got_verified, verified);
}

static void test_mla_plan_rows(void **state)
{
	aiter_probe_manifest *good = open_ok(MANIFESTS "good.json", 0);
	aiter_probe_manifest *second = open_ok(MANIFESTS "second.json", 0);
	int heads = -1;

	assert_int_equal(aiter_probe_manifest_mla_plan_count(good), 128);
	expect_row(good, 0, 1, 16, "repeat-interleave", 0);
	expect_row(good, 2, 3, 16, "tile-slice", 0);
	expect_row(good, 23, 24, 24, "none", 1);
	expect_row(second, 23, 24, 32, "tile-slice", 0);
	expect_row(good, 127, 128, 128, "none", 0);
	assert_int_equal(aiter_probe_manifest_mla_plan_row(good, 5, &heads, NULL, NULL, NULL),
	                 AITER_PROBE_OK);
	assert_int_equal(heads, 6);
	assert_int_equal(aiter_probe_manifest_mla_plan_row(good, 128, NULL, NULL, NULL, NULL),
	                 AITER_PROBE_UNKNOWN);
	assert_string_equal(aiter_probe_last_error(), "plans.mla_heads has 128 rows, no row 128");
	aiter_probe_manifest_free(good);
	aiter_probe_manifest_free(second);
}

static void expect_maps(const aiter_probe_manifest *m, int heads, const int *pad, int launch,
                        const int *unpad)
{
	int got_pad[AITER_PROBE_MLA_MAX_HEADS], got_unpad[AITER_PROBE_MLA_MAX_HEADS];

	assert_int_equal(aiter_probe_manifest_mla_head_maps(m, heads, got_pad, (size_t)launch,
	                                                    got_unpad, (size_t)heads), AITER_PROBE_OK);
	assert_memory_equal(got_pad, pad, (size_t)launch * sizeof *pad);
	assert_memory_equal(got_unpad, unpad, (size_t)heads * sizeof *unpad);
}

static void test_mla_head_maps(void **state)
{
	aiter_probe_manifest *good = open_ok(MANIFESTS "good.json", 0);
	aiter_probe_manifest *second = open_ok(MANIFESTS "second.json", 0);
	static const int pad8[16] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7};
	static const int unpad8[8] = {0, 2, 4, 6, 8, 10, 12, 14};
	int pad24[32], unpad24[24], buf[AITER_PROBE_MLA_MAX_HEADS];
	int i;

	expect_maps(good, 8, pad8, 16, unpad8);
	for (i = 0; i < 32; i++)
		pad24[i] = i % 24;
	for (i = 0; i < 24; i++)
		unpad24[i] = i;
	expect_maps(second, 24, pad24, 32, unpad24);
	expect_maps(good, 24, unpad24, 24, unpad24);
	assert_int_equal(aiter_probe_manifest_mla_head_maps(good, 24, NULL, 0, NULL, 0), AITER_PROBE_OK);

	for (i = 0; i < AITER_PROBE_MLA_MAX_HEADS; i++)
		buf[i] = -7;
	assert_int_equal(aiter_probe_manifest_mla_head_maps(second, 24, buf, 31, NULL, 0),
	                 AITER_PROBE_SHORT_BUFFER);
	assert_string_equal(aiter_probe_last_error(),
	                    "plans.mla_heads: 24 heads as 32: pad_source holds 31 entries, needs 32");
	assert_int_equal(aiter_probe_manifest_mla_head_maps(second, 24, buf, 32, buf + 32, 23),
	                 AITER_PROBE_SHORT_BUFFER);
	assert_string_equal(aiter_probe_last_error(),
	                    "plans.mla_heads: 24 heads as 32: unpad holds 23 entries, needs 24");
	/* A refused call writes nothing. */
	for (i = 0; i < AITER_PROBE_MLA_MAX_HEADS; i++)
		assert_int_equal(buf[i], -7);
	assert_int_equal(aiter_probe_manifest_mla_head_maps(good, 129, buf, 128, NULL, 0),
	                 AITER_PROBE_UNKNOWN);
	assert_string_equal(aiter_probe_last_error(), "plans.mla_heads has no row for 129 heads");
	assert_int_equal(aiter_probe_manifest_mla_head_maps(good, 0, NULL, 0, NULL, 0),
	                 AITER_PROBE_UNKNOWN);
	assert_string_equal(aiter_probe_last_error(), "plans.mla_heads has no row for 0 heads");
	aiter_probe_manifest_free(good);
	aiter_probe_manifest_free(second);
}

/* Every row of both plans: each launch head reads a real head, each real
 * head's output is a launch head that read it. */
static void test_mla_head_maps_round_trip(void **state)
{
	static const char *const names[] = {MANIFESTS "good.json", MANIFESTS "second.json"};
	int pad[AITER_PROBE_MLA_MAX_HEADS], unpad[AITER_PROBE_MLA_MAX_HEADS];

	for (size_t n = 0; n < 2; n++) {
		aiter_probe_manifest *m = open_ok(names[n], 0);
		for (size_t i = 0; i < aiter_probe_manifest_mla_plan_count(m); i++) {
			int heads, launch;
			assert_int_equal(aiter_probe_manifest_mla_plan_row(m, i, &heads, &launch, NULL,
			                                                   NULL), AITER_PROBE_OK);
			assert_int_equal(aiter_probe_manifest_mla_head_maps(
						 m, heads, pad, AITER_PROBE_MLA_MAX_HEADS, unpad,
						 AITER_PROBE_MLA_MAX_HEADS), AITER_PROBE_OK);
			for (int j = 0; j < launch; j++)
				assert_in_range(pad[j], 0, heads - 1);
			for (int h = 0; h < heads; h++) {
				assert_in_range(unpad[h], 0, launch - 1);
				assert_int_equal(pad[unpad[h]], h);
			}
		}
		aiter_probe_manifest_free(m);
	}
}

/* good.json edited by a sed script, in dir; returns the manifest's path. */
static char *edited(const char *dir, const char *name, const char *script)
{
	char cmd[1024], *path = malloc(512);

	snprintf(path, 512, "%s/%s", dir, name);
	snprintf(cmd, sizeof cmd, "sed '%s' '%sgood.json' >'%s'", script, MANIFESTS, path);
	assert_int_equal(system(cmd), 0);
	return path;
}

/* What a manifest may hold that the scanner does not write: evidence that
 * is not a string, a launch with no reason. A row whose mode contradicts its
 * head counts, or one that launches fewer heads than it has, is refused when
 * opened, so head_maps never meets one. */
static void test_odd_manifests(void **state)
{
	char dir[] = "/tmp/ap-test-api-XXXXXX";
	char cmd[600], want[600];
	const char *status, *reason = "";
	aiter_probe_manifest *m;
	char *path;

	assert_non_null(mkdtemp(dir));
	path = edited(dir, "odd.json",
	              "s|\"csrc/kernels/mla/reduce.cu:9\"|9|; "
	              "s/\"reason\": \"passed on 1 of 1 devices\"/\"reason\": null/");
	m = open_ok(path, 0);
	assert_int_equal(aiter_probe_manifest_capability_evidence_count(m, "mla.decode.native_h16"), 1);
	assert_null(aiter_probe_manifest_capability_evidence(m, "mla.decode.native_h16", 0));
	assert_string_equal(aiter_probe_last_error(),
	                    "capability 'mla.decode.native_h16' evidence entry 0 is not a string");
	assert_int_equal(aiter_probe_manifest_capability_launch(m, "mla.decode.native_h24", &status,
	                                                        &reason), 1);
	assert_string_equal(status, "passed");
	assert_null(reason);
	aiter_probe_manifest_free(m);
	free(path);
	path = edited(dir, "mode.json",
	              "s/\"heads\": 8, \"launch_heads\": 16, \"mode\": \"repeat-interleave\"/"
	              "\"heads\": 8, \"launch_heads\": 16, \"mode\": \"tile-slice\"/");
	snprintf(want, sizeof want, "%s: 'plans.mla_heads[7].mode' must be repeat-interleave for 8 "
	         "heads as 16, as the planner pads (not 'tile-slice')", path);
	expect_open_fails(path, 0, AITER_PROBE_ERROR, want);
	free(path);
	path = edited(dir, "short.json", "s/\"heads\": 9, \"launch_heads\": 16/"
	                                 "\"heads\": 9, \"launch_heads\": 4/");
	snprintf(want, sizeof want, "%s: 'plans.mla_heads[8]' must have launch_heads of at least "
	         "heads (9), not 4", path);
	expect_open_fails(path, 0, AITER_PROBE_ERROR, want);
	free(path);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

#define EXPECT_NULL_REFUSED(call, result, message)                                                 \
	do {                                                                                       \
		assert_true((call) == (result));                                                   \
		assert_string_equal(aiter_probe_last_error(), message);                            \
	} while (0)

static void test_null_arguments(void **state)
{
	aiter_probe_manifest *m = open_ok(MANIFESTS "good.json", 0), *none = NULL;
	const char *status = "", *reason = "";
	int buf[1];

	EXPECT_NULL_REFUSED(aiter_probe_manifest_open(NULL, MANIFESTS "good.json", 0),
	                    AITER_PROBE_INVALID, "aiter_probe_manifest_open: out is NULL");
	none = (aiter_probe_manifest *)1;
	EXPECT_NULL_REFUSED(aiter_probe_manifest_open(&none, NULL, 0), AITER_PROBE_INVALID,
	                    "aiter_probe_manifest_open: path is NULL");
	assert_null(none);
	EXPECT_NULL_REFUSED(aiter_probe_manifest_supported(NULL, "x"), AITER_PROBE_INVALID,
	                    "aiter_probe_manifest_supported: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_supported(m, NULL), AITER_PROBE_INVALID,
	                    "aiter_probe_manifest_supported: capability is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_capability_count(NULL), 0,
	                    "aiter_probe_manifest_capability_count: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_capability_id(NULL, 0), NULL,
	                    "aiter_probe_manifest_capability_id: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_capability_reason(NULL, "x"), NULL,
	                    "aiter_probe_manifest_capability_reason: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_capability_reason(m, NULL), NULL,
	                    "aiter_probe_manifest_capability_reason: capability is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_capability_evidence_count(NULL, "x"), 0,
	                    "aiter_probe_manifest_capability_evidence_count: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_capability_evidence_count(m, NULL), 0,
	                    "aiter_probe_manifest_capability_evidence_count: capability is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_capability_evidence(NULL, "x", 0), NULL,
	                    "aiter_probe_manifest_capability_evidence: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_capability_evidence(m, NULL, 0), NULL,
	                    "aiter_probe_manifest_capability_evidence: capability is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_capability_launch(NULL, "x", &status, &reason),
	                    AITER_PROBE_INVALID, "aiter_probe_manifest_capability_launch: m is NULL");
	assert_null(status);
	assert_null(reason);
	EXPECT_NULL_REFUSED(aiter_probe_manifest_capability_launch(m, NULL, NULL, NULL),
	                    AITER_PROBE_INVALID,
	                    "aiter_probe_manifest_capability_launch: capability is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_rule_count(NULL), 0,
	                    "aiter_probe_manifest_rule_count: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_rule_id(NULL, 0), NULL,
	                    "aiter_probe_manifest_rule_id: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_rule_status(NULL, "x"), NULL,
	                    "aiter_probe_manifest_rule_status: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_rule_status(m, NULL), NULL,
	                    "aiter_probe_manifest_rule_status: rule_id is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_rule_matches(NULL, "x"), 0,
	                    "aiter_probe_manifest_rule_matches: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_rule_matches(m, NULL), 0,
	                    "aiter_probe_manifest_rule_matches: rule_id is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_rule_capture(NULL, "x", 0, "heads"), NULL,
	                    "aiter_probe_manifest_rule_capture: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_rule_capture(m, NULL, 0, "heads"), NULL,
	                    "aiter_probe_manifest_rule_capture: rule_id is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_rule_capture(m, "mla.reduce.cases", 0, NULL), NULL,
	                    "aiter_probe_manifest_rule_capture: name is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_mla_heads(NULL, 24, NULL, NULL, NULL),
	                    AITER_PROBE_INVALID, "aiter_probe_manifest_mla_heads: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_mla_plan_count(NULL), 0,
	                    "aiter_probe_manifest_mla_plan_count: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_mla_plan_row(NULL, 0, NULL, NULL, NULL, NULL),
	                    AITER_PROBE_INVALID, "aiter_probe_manifest_mla_plan_row: m is NULL");
	EXPECT_NULL_REFUSED(aiter_probe_manifest_mla_head_maps(NULL, 24, buf, 1, NULL, 0),
	                    AITER_PROBE_INVALID, "aiter_probe_manifest_mla_head_maps: m is NULL");
	aiter_probe_manifest_free(m);
}

static void test_refusals(void **state)
{
	expect_open_fails(MANIFESTS "invalid-truncated.json", 0, AITER_PROBE_ERROR,
	                  MANIFESTS "invalid-truncated.json:5:16: premature end of input near '\"'");
	expect_open_fails(MANIFESTS "invalid-newer-schema.json", 0, AITER_PROBE_ERROR,
	                  MANIFESTS "invalid-newer-schema.json: schema 'aiter-probe.manifest/2' is "
	                            "newer than this reader understands (aiter-probe.manifest/1)");
	expect_open_fails(MANIFESTS "nowhere.json", 0, AITER_PROBE_ERROR,
	                  MANIFESTS "nowhere.json: No such file or directory");
	/* Refused before it is opened: anyone may write it, and it has no end. */
	expect_open_fails("/dev/zero", 0, AITER_PROBE_ERROR,
	                  "/dev/zero: not trusted: it is writable by others");
	expect_open_fails(MANIFESTS "good.json", 0x4, AITER_PROBE_ERROR,
	                  MANIFESTS "good.json: unknown flags 0x4");
	expect_open_fails(MANIFESTS "good.json", AITER_PROBE_VERIFY_FRESH, AITER_PROBE_ERROR,
	                  MANIFESTS "good.json: aiter root '/opt/aiter': No such file or directory");
}

/* A copy of the tree the manifests describe, and the manifest `name` with
 * its root pointed at the copy; returns the manifest's path. */
static char *copy_with_root(const char *dir, const char *name)
{
	char cmd[1024], *path = malloc(512);

	snprintf(cmd, sizeof cmd,
	         "rm -rf '%s/tree' && cp -R '%s/tree' '%s/tree' && chmod -R u+w '%s' && "
	         "sed 's|\"root\": \"/opt/aiter\"|\"root\": \"%s/tree\"|' '%s%s' >'%s/%s'",
	         dir, MANIFESTS, dir, dir, dir, MANIFESTS, name, dir, name);
	assert_int_equal(system(cmd), 0);
	snprintf(path, 512, "%s/%s", dir, name);
	return path;
}

static void test_verify_fresh(void **state)
{
	char dir[] = "/tmp/ap-test-api-XXXXXX";
	char *good, *stale;
	char message[1024];

	assert_non_null(mkdtemp(dir));
	good = copy_with_root(dir, "good.json");
	stale = copy_with_root(dir, "stale.json");

	aiter_probe_manifest_free(open_ok(good, AITER_PROBE_VERIFY_FRESH));
	snprintf(message, sizeof message,
	         "%s: stale: csrc/kernels/mla/metadata/v1_2_device.cuh changed", stale);
	expect_open_fails(stale, AITER_PROBE_VERIFY_FRESH, AITER_PROBE_STALE, message);
	/* Without the flag a stale manifest still opens. */
	aiter_probe_manifest_free(open_ok(stale, 0));

	snprintf(message, sizeof message,
	         "rm %s/tree/csrc/kernels/mla/reduce.cu && touch %s/tree/csrc/kernels/mla/reduce_v2.cu",
	         dir, dir);
	assert_int_equal(system(message), 0);
	snprintf(message, sizeof message,
	         "%s: stale: csrc/kernels/mla/reduce_v2.cu appeared, csrc/kernels/mla/reduce.cu "
	         "vanished", good);
	expect_open_fails(good, AITER_PROBE_VERIFY_FRESH, AITER_PROBE_STALE, message);
	snprintf(message, sizeof message, "rm -rf '%s'", dir);
	assert_int_equal(system(message), 0);
	free(good);
	free(stale);
}

static void *error_in_thread(void *arg)
{
	return strdup(aiter_probe_last_error());
}

/* A failure in one thread is not another thread's error. */
static void test_errors_per_thread(void **state)
{
	aiter_probe_manifest *m = NULL;
	pthread_t t;
	void *seen;

	assert_int_not_equal(aiter_probe_manifest_open(&m, MANIFESTS "nowhere.json", 0), 0);
	assert_int_equal(pthread_create(&t, NULL, error_in_thread, NULL), 0);
	assert_int_equal(pthread_join(t, &seen), 0);
	assert_string_equal((const char *)seen, "no error");
	free(seen);
	assert_string_equal(aiter_probe_last_error(), MANIFESTS "nowhere.json: No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_supported),
		cmocka_unit_test(test_capabilities),
		cmocka_unit_test(test_rule_ids),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_unknown_rule),
		cmocka_unit_test(test_kernels),
		cmocka_unit_test(test_mla_heads),
		cmocka_unit_test(test_mla_plan_rows),
		cmocka_unit_test(test_mla_head_maps),
		cmocka_unit_test(test_mla_head_maps_round_trip),
		cmocka_unit_test(test_odd_manifests),
		cmocka_unit_test(test_null_arguments),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_verify_fresh),
		cmocka_unit_test(test_errors_per_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
