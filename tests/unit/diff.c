/* SPDX-License-Identifier: MIT */
/* Manifest differences: classes, capability states, per-device launch
 * changes, case tables, and the text report. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "engine/report/diff.h"
#include "core/manifest-read.h"

#define MANIFESTS AP_SRCDIR "/tests/manifests/"

static json_t *load(const char *name)
{
	char path[512];
	json_t *m;

	snprintf(path, sizeof path, MANIFESTS "%s", name);
	assert_int_equal(ap_manifest_read_file(path, &m), AP_OK);
	return m;
}

static json_t *cap_of(json_t *m, const char *id)
{
	return json_object_get(json_object_get(m, "capabilities"), id);
}

/* The report's JSON text in compact form, for exact comparisons. */
static char *compact(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static void assert_json(const json_t *v, const char *want)
{
	char *got = compact(v);
	assert_string_equal(got, want);
	free(got);
}

static void test_good_vs_second(void **state)
{
	json_t *old = load("good.json"), *new = load("second.json");
	json_t *r = ap_diff_manifests(old, "old.json", new, "new.json");

	assert_json(json_object_get(r, "summary"), "{\"lost\":1,\"changed\":2,\"differences\":3}");
	assert_json(json_object_get(r, "rules"),
	            "[{\"id\":\"mla.reduce.native_h24_d512\",\"before\":\"matched\","
	            "\"after\":\"unmatched\"}]");
	assert_json(json_object_get(r, "cases"),
	            "[{\"rule\":\"mla.reduce.cases\",\"added\":[],"
	            "\"removed\":[\"heads=24 head_dim=512\"]}]");
	assert_json(json_object_get(json_array_get(json_object_get(r, "capabilities"), 0),
	                            "devices"),
	            "[{\"index\":0,\"name\":\"NVIDIA H200\",\"before\":\"passed\","
	            "\"after\":\"failed\"}]");
	assert_true(ap_diff_has(r, AP_DIFF_LOST));
	assert_true(ap_diff_has(r, AP_DIFF_CHANGED));
	assert_true(ap_diff_has(r, AP_DIFF_ANY));
	json_decref(r);

	r = ap_diff_manifests(new, "new.json", old, "old.json");
	assert_false(ap_diff_has(r, AP_DIFF_LOST));
	assert_true(ap_diff_has(r, AP_DIFF_CHANGED));
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(r, "capabilities"), 0), "change")),
		"gained");
	json_decref(r);
	json_decref(old);
	json_decref(new);
}

static void test_identical(void **state)
{
	json_t *m = load("good.json");
	json_t *r = ap_diff_manifests(m, "a", m, "b");

	assert_json(json_object_get(r, "summary"), "{\"lost\":0,\"changed\":0,\"differences\":0}");
	assert_false(ap_diff_has(r, AP_DIFF_ANY));
	json_decref(r);
	json_decref(m);
}

/* Launch changes with the supported flag unchanged: "changed", with each
 * device that came, went or changed. */
static void test_launch_devices(void **state)
{
	json_t *old = load("good.json");
	json_t *new = json_deep_copy(old);
	json_t *results = json_object_get(json_object_get(cap_of(new, "mla.decode.native_h24"),
	                                                  "launch"), "results");
	json_t *r;

	json_array_append_new(results, json_pack("{s:{s:i, s:s, s:s}, s:s}", "device", "index", 1,
	                                         "name", "NVIDIA H200", "arch", "sm_90",
	                                         "status", "error"));
	r = ap_diff_manifests(old, "a", new, "b");
	assert_json(json_object_get(r, "capabilities"),
	            "[{\"id\":\"mla.decode.native_h24\",\"change\":\"changed\","
	            "\"before\":{\"supported\":true,\"launch\":\"passed\",\"reason\":"
	            "\"all of mla.reduce.native_h24_d512, mla.metadata.native_h24 hold\"},"
	            "\"after\":{\"supported\":true,\"launch\":\"passed\",\"reason\":"
	            "\"all of mla.reduce.native_h24_d512, mla.metadata.native_h24 hold\"},"
	            "\"devices\":[{\"index\":1,\"name\":\"NVIDIA H200\",\"before\":null,"
	            "\"after\":\"error\"}]}]");
	assert_false(ap_diff_has(r, AP_DIFF_LOST));
	assert_true(ap_diff_has(r, AP_DIFF_CHANGED));
	json_decref(r);

	/* The overall status alone. */
	json_decref(new);
	new = json_deep_copy(old);
	json_object_set_new(json_object_get(cap_of(new, "mla.decode.native_h24"), "launch"),
	                    "status", json_string("skipped"));
	r = ap_diff_manifests(old, "a", new, "b");
	assert_json(json_object_get(json_array_get(json_object_get(r, "capabilities"), 0),
	                            "after"),
	            "{\"supported\":true,\"launch\":\"skipped\",\"reason\":"
	            "\"all of mla.reduce.native_h24_d512, mla.metadata.native_h24 hold\"}");
	json_decref(r);
	json_decref(new);
	json_decref(old);
}

/* Supported and absent: lost; unsupported and absent: changed, not lost. */
static void test_presence(void **state)
{
	json_t *old = load("good.json"), *second = load("second.json");
	json_t *new = json_deep_copy(old);
	json_t *r;

	json_object_del(json_object_get(new, "capabilities"), "mla.decode.native_h16");
	json_object_del(json_object_get(new, "rules"), "mla.reduce.native_h16_d512");
	r = ap_diff_manifests(old, "a", new, "b");
	assert_json(json_object_get(json_array_get(json_object_get(r, "capabilities"), 0),
	                            "after"),
	            "null");
	assert_json(json_object_get(r, "rules"),
	            "[{\"id\":\"mla.reduce.native_h16_d512\",\"before\":\"matched\",\"after\":null}]");
	assert_json(json_object_get(r, "summary"), "{\"lost\":1,\"changed\":2,\"differences\":2}");
	json_decref(r);
	json_decref(new);

	new = json_deep_copy(second);
	json_object_del(json_object_get(new, "capabilities"), "mla.decode.native_h24");
	r = ap_diff_manifests(second, "a", new, "b");
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(r, "capabilities"), 0), "change")),
		"changed");
	assert_false(ap_diff_has(r, AP_DIFF_LOST));
	assert_true(ap_diff_has(r, AP_DIFF_CHANGED));
	json_decref(r);
	json_decref(new);
	json_decref(second);
	json_decref(old);
}

/* Case tables are sets: order and repeats do not matter; values that could
 * be misread are quoted. */
static void test_case_sets(void **state)
{
	json_t *old = load("good.json");
	json_t *new = json_deep_copy(old);
	json_t *matches = json_object_get(json_object_get(json_object_get(new, "rules"),
	                                                  "mla.reduce.cases"), "matches");
	json_t *r;

	json_array_append(matches, json_array_get(matches, 0));
	json_array_remove(matches, 0);
	json_array_append(matches, json_array_get(matches, 1));
	r = ap_diff_manifests(old, "a", new, "b");
	assert_false(ap_diff_has(r, AP_DIFF_ANY));
	json_decref(r);

	json_array_append_new(matches, json_pack("{s:i, s:s, s:{s:s, s:s}}", "line", 99, "text",
	                                         "x", "captures", "heads", "4 8", "head_dim", ""));
	r = ap_diff_manifests(old, "a", new, "b");
	assert_json(json_object_get(r, "cases"),
	            "[{\"rule\":\"mla.reduce.cases\",\"added\":[\"heads=\\\"4 8\\\" "
	            "head_dim=\\\"\\\"\"],\"removed\":[]}]");
	assert_false(ap_diff_has(r, AP_DIFF_CHANGED));
	assert_true(ap_diff_has(r, AP_DIFF_ANY));
	json_decref(r);
	json_decref(new);
	json_decref(old);
}

/* A rule gone unknown, and the capability it leaves unknown: lost, and said
 * so in words; unsupported to unknown is a change, not a loss; coming back is
 * a gain. */
static void test_unknown(void **state)
{
	json_t *good = load("good.json"), *unknown = load("unknown.json");
	json_t *second = load("second.json");
	json_t *r = ap_diff_manifests(good, "good.json", unknown, "unknown.json");
	const json_t *cap = json_array_get(json_object_get(r, "capabilities"), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *to = open_memstream(&text, &len);

	assert_string_equal(json_string_value(json_object_get(cap, "change")), "lost");
	assert_string_equal(ap_diff_state_word(json_object_get(cap, "after")), "unknown");
	assert_json(json_object_get(r, "rules"),
	            "[{\"id\":\"mla.metadata.native_h24\",\"before\":\"matched\","
	            "\"after\":\"unknown\"}]");
	/* Wide enough for the reason on one line (tests/cli/diff.sh wraps). */
	ap_diff_print_text(r, to, false, 10000);
	fclose(to);
	assert_string_equal(text, "old: good.json (aiter 0.1.5)\n"
	                          "new: unknown.json (aiter 0.1.5)\n"
	                          "\n"
	                          "capabilities:\n"
	                          "  lost     mla.decode.native_h24: supported -> unknown\n"
	                          "           reason: unknown, so unsupported: rule "
	                          "mla.metadata.native_h24 is unknown: "
	                          "csrc/kernels/mla/metadata/v1_2_device.cuh: the branch is under "
	                          "`#if MLA_HEADS_24`, which only the build defines\n"
	                          "\n"
	                          "rules:\n"
	                          "  mla.metadata.native_h24: matched -> unknown\n"
	                          "\n"
	                          "summary: 1 lost, 2 changed, 2 in all\n");
	free(text);
	json_decref(r);

	r = ap_diff_manifests(unknown, "a", good, "b");
	cap = json_array_get(json_object_get(r, "capabilities"), 0);
	assert_string_equal(json_string_value(json_object_get(cap, "change")), "gained");
	assert_false(ap_diff_has(r, AP_DIFF_LOST));
	json_decref(r);

	/* second.json: the same capability a plain no (its launch failed too). */
	json_object_del(json_object_get(json_object_get(second, "capabilities"),
	                                 "mla.decode.native_h24"), "launch");
	json_object_del(json_object_get(json_object_get(unknown, "capabilities"),
	                                 "mla.decode.native_h24"), "launch");
	r = ap_diff_manifests(second, "a", unknown, "b");
	cap = json_array_get(json_object_get(r, "capabilities"), 0);
	assert_string_equal(json_string_value(json_object_get(cap, "id")), "mla.decode.native_h24");
	assert_string_equal(json_string_value(json_object_get(cap, "change")), "changed");
	assert_string_equal(ap_diff_state_word(json_object_get(cap, "before")), "unsupported");
	assert_string_equal(ap_diff_state_word(json_object_get(cap, "after")), "unknown");
	assert_false(ap_diff_has(r, AP_DIFF_LOST));
	json_decref(r);
	json_decref(second);
	json_decref(unknown);
	json_decref(good);
}

static void test_class_parse(void **state)
{
	ap_diff_class cls;

	assert_int_equal(ap_diff_class_parse("lost", &cls), 0);
	assert_int_equal(cls, AP_DIFF_LOST);
	assert_int_equal(ap_diff_class_parse("changed", &cls), 0);
	assert_int_equal(cls, AP_DIFF_CHANGED);
	assert_int_equal(ap_diff_class_parse("any", &cls), 0);
	assert_int_equal(cls, AP_DIFF_ANY);
	assert_true(ap_diff_class_parse("Lost", &cls) < 0);
	assert_true(ap_diff_class_parse("", &cls) < 0);
}

static void test_text(void **state)
{
	json_t *old = load("good.json");
	json_t *new = json_deep_copy(old);
	json_t *r;
	char *text = NULL;
	size_t len = 0;
	FILE *to = open_memstream(&text, &len);

	json_object_set_new(json_object_get(new, "aiter"), "git_commit",
	                    json_string("0123456789abcdef0123456789abcdef01234567"));
	json_object_set_new(json_object_get(new, "aiter"), "version", json_null());
	json_object_set_new(json_object_get(json_object_get(new, "rules"), "mla.metadata.native_h24"),
	                    "status", json_string("missing"));
	r = ap_diff_manifests(old, "a.json", new, "b.json");
	ap_diff_print_text(r, to, false, 80);
	fclose(to);
	assert_string_equal(text, "old: a.json (aiter 0.1.5)\n"
	                          "new: b.json (aiter version unknown, commit 0123456789ab)\n"
	                          "\n"
	                          "rules:\n"
	                          "  mla.metadata.native_h24: matched -> missing\n"
	                          "\n"
	                          "summary: 0 lost, 1 changed, 1 in all\n");
	free(text);
	json_decref(r);
	json_decref(new);
	json_decref(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_vs_second),
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_launch_devices),
		cmocka_unit_test(test_presence),
		cmocka_unit_test(test_case_sets),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_class_parse),
		cmocka_unit_test(test_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
