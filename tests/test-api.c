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
	aiter_probe_manifest_free(good);
	aiter_probe_manifest_free(second);
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
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_mla_heads),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_verify_fresh),
		cmocka_unit_test(test_errors_per_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
