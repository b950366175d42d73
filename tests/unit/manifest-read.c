/* SPDX-License-Identifier: MIT */
/* The manifest loader: what it accepts, and the exact message for each thing
 * it refuses. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/json-text.h"
#include "core/manifest-read.h"

#define MANIFESTS AP_SRCDIR "/tests/manifests/"

static void test_good(void **state)
{
	json_t *m;

	assert_int_equal(ap_manifest_read_file(MANIFESTS "good.json", &m), AP_OK);
	assert_string_equal(json_string_value(json_object_get(json_object_get(m, "aiter"), "root")),
	                    "/opt/aiter");
	assert_int_equal(json_array_size(json_object_get(m, "inputs")), 3);
	assert_int_equal(json_array_size(json_object_get(json_object_get(m, "plans"), "mla_heads")),
	                 128);
	json_decref(m);
}

static void expect_refusal(const char *path, int code, const char *message)
{
	json_t *m = (json_t *)1;

	assert_int_equal(ap_manifest_read_file(path, &m), code);
	assert_null(m);
	assert_string_equal(ap_error_last(), message);
}

static void test_truncated(void **state)
{
	expect_refusal(MANIFESTS "invalid-truncated.json", AP_EINPUT,
	               MANIFESTS "invalid-truncated.json:5:16: premature end of input near '\"'");
}

static void test_newer_schema(void **state)
{
	expect_refusal(MANIFESTS "invalid-newer-schema.json", AP_EINPUT,
	               MANIFESTS "invalid-newer-schema.json: schema 'aiter-probe.manifest/2' is "
	                         "newer than this reader understands (aiter-probe.manifest/1)");
}

static void test_missing_file(void **state)
{
	expect_refusal(MANIFESTS "nowhere.json", AP_EIO,
	               MANIFESTS "nowhere.json: No such file or directory");
}

/* A folder of this test's own: /tmp is writable by others, so no manifest
 * there is trusted (core/trust.h). */
static char scratch[] = "/tmp/ap-test-manifest-XXXXXX";

/* Writes text to a temporary file; returns its path (caller frees, unlinks). */
static char *temp_file(const char *text)
{
	char *path = ap_xasprintf("%s/m-XXXXXX", scratch);
	int fd = mkstemp(path);
	size_t len = strlen(text);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

static void expect_text_refused(const char *text, const char *message)
{
	char *path = temp_file(text);
	char *want = ap_xasprintf("%s%s", path, message);

	expect_refusal(path, AP_EINPUT, want);
	free(want);
	unlink(path);
	free(path);
}

static void test_not_json(void **state)
{
	expect_text_refused("", ":1: '[' or '{' expected near end of file");
	expect_text_refused("[1, 2]\n", ": not a manifest: the top level is not a JSON object");
	expect_text_refused("{\"schema\": \"aiter-probe.manifest/1\",\n \"schema\": \"x\"}",
	                    ":2:9: duplicate object key near '\"schema\"'");
	expect_text_refused("{} trailing", ":1:11: end of file expected near 'trailing'");
}

/* What the Python reader's json would take, or recurse on, is refused first,
 * with the words and position python/aiter_probe/__init__.py gives too. */
static void test_refused_before_parsing(void **state)
{
	ap_buf deep = AP_BUF_INIT;
	size_t i;

	for (i = 0; i < 100000; i++)
		ap_buf_putc(&deep, '[');
	expect_text_refused(deep.data, ":1:65: more than 64 nested arrays and objects");
	ap_buf_free(&deep);
	for (i = 0; i < 100000; i++)
		ap_buf_puts(&deep, "{\"a\": ");
	expect_text_refused(deep.data, ":1:385: more than 64 nested arrays and objects");
	ap_buf_free(&deep);
	/* 64 levels are read, and brackets in strings are text. */
	for (i = 0; i < 64; i++)
		ap_buf_putc(&deep, '[');
	for (i = 0; i < 64; i++)
		ap_buf_putc(&deep, ']');
	expect_text_refused(deep.data, ": not a manifest: the top level is not a JSON object");
	ap_buf_free(&deep);
	expect_text_refused("[\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"]",
	                    ": not a manifest: the top level is not a JSON object");

	expect_text_refused("{\"a\": \"x\\u0000\"}", ":1:9: \\u0000 is not allowed in a string");
	expect_text_refused("{\"a\": \"\\ud800\"}", ":1:8: unpaired surrogate '\\ud800' in a string");
	expect_text_refused("{\"a\": \"\\uDBFF\\u0041\"}",
	                    ":1:8: unpaired surrogate '\\uDBFF' in a string");
	expect_text_refused("{\"a\": \"\\ud83d\\ude00\\udc00\"}",
	                    ":1:20: unpaired surrogate '\\udc00' in a string");
	expect_text_refused("{\"a\": NaN}", ":1:7: 'NaN' is not JSON");
	expect_text_refused("{\"a\": -Infinity}", ":1:8: 'Infinity' is not JSON");
	expect_text_refused("{\"a\": 9223372036854775808}", ":1:7: number out of range");
	expect_text_refused("{\"a\": -9223372036854775809}", ":1:7: number out of range");
	expect_text_refused("{\"a\": 1e400}", ":1:7: number out of range");
	/* Columns count characters, é one. */
	expect_text_refused("{\"a\":\n  \"\xc3\xa9\", \"b\": [NaN]}", ":2:14: 'NaN' is not JSON");
	/* In range: parsed, and the manifest checks go on. */
	expect_text_refused("{\"a\": -9223372036854775808, \"b\": 1e-400, \"c\": \"\\ud83d\\ude00\"}",
	                    ": missing key 'schema'");
}

/* One edit of good.json: at the object or array reached by `parent` (keys
 * and indices separated by '/'), set `key` to the JSON `value`, or delete it
 * when value is NULL. */
struct edit {
	const char *parent;
	const char *key;
	const char *value;
	const char *message; /* after "PATH: " */
};

static json_t *walk(json_t *doc, const char *parent)
{
	char *copy = ap_xstrdup(parent), *save = NULL, *part;

	for (part = strtok_r(copy, "/", &save); part != NULL; part = strtok_r(NULL, "/", &save))
		doc = json_is_array(doc) ? json_array_get(doc, strtoul(part, NULL, 10))
		                         : json_object_get(doc, part);
	free(copy);
	assert_non_null(doc);
	return doc;
}

static void apply_and_expect(const struct edit *e)
{
	json_t *doc = json_load_file(MANIFESTS "good.json", 0, NULL);
	json_t *at;
	char *text, *path, *want;

	assert_non_null(doc);
	at = walk(doc, e->parent);
	if (e->value == NULL) {
		assert_int_equal(json_object_del(at, e->key), 0);
	} else {
		json_t *v = json_loads(e->value, JSON_DECODE_ANY, NULL);
		assert_non_null(v);
		json_object_set_new(at, e->key, v);
	}
	text = json_dumps(doc, JSON_INDENT(1));
	path = temp_file(text);
	want = ap_xasprintf("%s: %s", path, e->message);
	expect_refusal(path, AP_EINPUT, want);
	unlink(path);
	free(want);
	free(path);
	free(text);
	json_decref(doc);
}

static const struct edit edits[] = {
	{"", "schema", NULL, "missing key 'schema'"},
	{"", "schema", "1", "'schema' must be a string"},
	{"", "schema", "\"aiter-probe.manifest/10\"",
	 "schema 'aiter-probe.manifest/10' is newer than this reader understands "
	 "(aiter-probe.manifest/1)"},
	{"", "schema", "\"aiter-probe.manifest/0\"",
	 "schema 'aiter-probe.manifest/0' is not one this reader understands "
	 "(aiter-probe.manifest/1)"},
	{"", "schema", "\"aiter-probe.manifest/1.1\"",
	 "schema 'aiter-probe.manifest/1.1' is not one this reader understands "
	 "(aiter-probe.manifest/1)"},
	{"", "schema", "\"other.manifest/1\"",
	 "schema 'other.manifest/1' is not one this reader understands (aiter-probe.manifest/1)"},
	{"aiter", "root", NULL, "missing key 'aiter.root'"},
	{"aiter", "version", "3", "'aiter.version' must be a string or null"},
	{"", "inputs", "{}", "'inputs' must be an array"},
	{"inputs/0", "path", "null", "'inputs[0].path' must be a string"},
	{"inputs/1", "sha256", "\"7943BE0B47B0B66DF32A4253742CFA485683031BB96CFBF7F8660BFF6DB0ED36\"",
	 "'inputs[1].sha256' must be 64 lowercase hex digits or null"},
	{"inputs/1", "sha256", "\"7943be0b\"",
	 "'inputs[1].sha256' must be 64 lowercase hex digits or null"},
	{"inputs/1", "bytes", "\"703\"", "'inputs[1].bytes' must be an integer or null"},
	{"inputs/1", "bytes", "-1", "'inputs[1].bytes' must not be negative"},
	{"", "rules", "[]", "'rules' must be an object"},
	{"rules", "mla.reduce.cases", "true", "'rules[\"mla.reduce.cases\"]' must be an object"},
	{"rules/mla.reduce.cases", "status", "\"maybe\"",
	 "'rules[\"mla.reduce.cases\"].status' must be one of matched, unmatched, missing, error, unknown "
	 "(not 'maybe')"},
	{"rules/mla.reduce.cases", "file", "false",
	 "'rules[\"mla.reduce.cases\"].file' must be a string or null"},
	{"rules/mla.reduce.cases", "matches", "{}",
	 "'rules[\"mla.reduce.cases\"].matches' must be an array"},
	{"rules/mla.reduce.cases/matches/2", "line", NULL,
	 "missing key 'rules[\"mla.reduce.cases\"].matches[2].line'"},
	{"rules/mla.reduce.cases/matches/2/captures", "heads", "24",
	 "'rules[\"mla.reduce.cases\"].matches[2].captures.heads' must be a string"},
	{"capabilities/mla.decode.native_h24", "supported", "\"yes\"",
	 "'capabilities[\"mla.decode.native_h24\"].supported' must be true or false"},
	{"capabilities/mla.decode.native_h16", "reason", NULL,
	 "missing key 'capabilities[\"mla.decode.native_h16\"].reason'"},
	{"capabilities/mla.decode.native_h24/launch", "status", "\"crashed\"",
	 "'capabilities[\"mla.decode.native_h24\"].launch.status' must be one of passed, failed, "
	 "error, skipped (not 'crashed')"},
	{"capabilities/mla.decode.native_h24/launch/results/0", "kernel", "\"gpu\"",
	 "'capabilities[\"mla.decode.native_h24\"].launch.results[0].kernel' must be one of aiter, "
	 "reference (not 'gpu')"},
	{"capabilities/mla.decode.native_h24/launch", "kernel", "1",
	 "'capabilities[\"mla.decode.native_h24\"].launch.kernel' must be a string"},
	{"plans/mla_heads/23", "kernel", "\"ours\"",
	 "'plans.mla_heads[23].kernel' must be one of aiter, reference (not 'ours')"},
	{"capabilities/mla.decode.native_h24/launch/results/0", "status", NULL,
	 "missing key 'capabilities[\"mla.decode.native_h24\"].launch.results[0].status'"},
	{"", "plans", NULL, "missing key 'plans'"},
	{"plans", "mla_heads", "null", "'plans.mla_heads' must be an array"},
	{"plans/mla_heads/23", "mode", "\"pad\"",
	 "'plans.mla_heads[23].mode' must be one of none, repeat-interleave, tile-slice (not "
	 "'pad')"},
	{"plans/mla_heads/23", "verified", "1", "'plans.mla_heads[23].verified' must be true or false"},
	{"plans/mla_heads/0", "heads", "0",
	 "'plans.mla_heads[0]' must have heads and launch_heads of at least 1"},
	/* 2^40: a consumer's int would see 0. */
	{"plans/mla_heads/23", "launch_heads", "1099511627776",
	 "'plans.mla_heads[23]' must have heads and launch_heads of at most 128"},
	{"plans/mla_heads/0", "heads", "129",
	 "'plans.mla_heads[0]' must have heads and launch_heads of at most 128"},
	{"plans", "mla_heads", "[]", "'plans.mla_heads' must not be empty"},
	/* Rows no consumer can pad: fewer launch heads than heads, or a mode
	 * other than the planner's (ap_mla_pad_mode). */
	{"plans/mla_heads/23", "launch_heads", "16",
	 "'plans.mla_heads[23]' must have launch_heads of at least heads (24), not 16"},
	{"plans/mla_heads/7", "launch_heads", "8",
	 "'plans.mla_heads[7].mode' must be none for 8 heads as 8, as the planner pads (not "
	 "'repeat-interleave')"},
	{"plans/mla_heads/7", "mode", "\"tile-slice\"",
	 "'plans.mla_heads[7].mode' must be repeat-interleave for 8 heads as 16, as the planner "
	 "pads (not 'tile-slice')"},
	{"plans/mla_heads/2", "mode", "\"repeat-interleave\"",
	 "'plans.mla_heads[2].mode' must be tile-slice for 3 heads as 16, as the planner pads (not "
	 "'repeat-interleave')"},
	{"plans/mla_heads/23", "mode", "\"tile-slice\"",
	 "'plans.mla_heads[23].mode' must be none for 24 heads as 24, as the planner pads (not "
	 "'tile-slice')"},
	{"", "devices", "[1]", "'devices[0]' must be an object"},
	{"", "devices", "[{\"index\": 0}, \"gpu\"]", "'devices[1]' must be an object"},
	{"", "devices", "{}", "'devices' must be an array"},
	{"aiter", "root", "\"aiter\"", "'aiter.root' must be an absolute path, not 'aiter'"},
	{"aiter", "meta", "\"\\u001b[2J\"",
	 "'aiter.meta' must be an absolute path, not '\\x1b[2J'"},
	{"", "host", "17", "'host' must be a string or null"},
	{"", "host", "\"\"", "'host' must be a name of 1 to 255 bytes, not 0"},
	{"", "schema", "\"aiter-probe.manifest/+2\"",
	 "schema 'aiter-probe.manifest/+2' is not one this reader understands "
	 "(aiter-probe.manifest/1)"},
	{"", "schema", "\"aiter-probe.manifest/ 2\"",
	 "schema 'aiter-probe.manifest/ 2' is not one this reader understands "
	 "(aiter-probe.manifest/1)"},
};

static void test_edits(void **state)
{
	size_t i;

	for (i = 0; i < sizeof edits / sizeof edits[0]; i++)
		apply_and_expect(&edits[i]);
}

/* Only a regular file is read, and only up to the cap: a FIFO would block,
 * /dev/zero read for ever (behind a symlink, it is not even looked at). */
static void test_not_regular_or_too_large(void **state)
{
	static const struct {
		const char *name; /* in the scratch folder; "" is the folder */
		const char *message;
	} cases[] = {
		{"/fifo.json", "not a regular file (a FIFO)"},
		{"/zero.json", "not trusted: it is a symlink"},
		{"", "not a regular file (a folder)"},
		{"/big.json", "larger than 64 MiB, the limit for a manifest"},
	};
	char *dir = ap_xasprintf("%s/d-XXXXXX", scratch);
	char *path, *want;
	size_t i;
	int fd;

	assert_non_null(mkdtemp(dir));
	path = ap_xasprintf("%s/fifo.json", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	free(path);
	path = ap_xasprintf("%s/zero.json", dir);
	assert_int_equal(symlink("/dev/zero", path), 0);
	free(path);
	path = ap_xasprintf("%s/big.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, ((off_t)64 << 20) + 1), 0);
	close(fd);
	free(path);

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		path = ap_xasprintf("%s%s", dir, cases[i].name);
		want = ap_xasprintf("%s: %s", path, cases[i].message);
		expect_refusal(path, AP_EINPUT, want);
		if (cases[i].name[0] != '\0')
			unlink(path);
		free(want);
		free(path);
	}
	rmdir(dir);
	free(dir);
	expect_refusal("/dev/zero", AP_EINPUT, "/dev/zero: not trusted: it is writable by others");
}

/* Gives what (path or its folder) mode, and expects path refused. */
static void chmod_and_expect(const char *what, mode_t mode, const char *path, const char *message)
{
	assert_int_equal(chmod(what, mode), 0);
	expect_refusal(path, AP_EINPUT, message);
}

/* A manifest is trusted only where no one but the reading user and root
 * could have written it, and only one that records inputs can be fresh. */
static void test_untrusted(void **state)
{
	json_t *doc = json_load_file(MANIFESTS "good.json", 0, NULL);
	char *text = json_dumps(doc, 0);
	char *dir = ap_xasprintf("%s/d-XXXXXX", scratch);
	char *path, *want, *link;
	json_t *m;

	assert_non_null(mkdtemp(dir));
	path = ap_xasprintf("%s/m.json", dir);
	link = ap_xasprintf("%s/link.json", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);

	want = ap_xasprintf("%s: not trusted: it is writable by its group", path);
	chmod_and_expect(path, 0664, path, want);
	free(want);
	want = ap_xasprintf("%s: not trusted: it is writable by others", path);
	chmod_and_expect(path, 0646, path, want);
	free(want);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(ap_manifest_read_file(path, &m), AP_OK);
	json_decref(m);

	want = ap_xasprintf("%s: not trusted: its folder %s is writable by others", path, dir);
	chmod_and_expect(dir, 01777, path, want);
	free(want);
	want = ap_xasprintf("%s: not trusted: its folder %s is writable by its group", path, dir);
	chmod_and_expect(dir, 0770, path, want);
	free(want);
	assert_int_equal(chmod(dir, 0700), 0);

	assert_int_equal(symlink("m.json", link), 0);
	want = ap_xasprintf("%s: not trusted: it is a symlink", link);
	expect_refusal(link, AP_EINPUT, want);
	free(want);
	unlink(link);

	/* Only root can give a file away. */
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, (gid_t)-1), 0);
		want = ap_xasprintf("%s: not trusted: it is owned by uid 65534, neither the reading "
		                    "user (uid 0) nor root", path);
		expect_refusal(path, AP_EINPUT, want);
		free(want);
		assert_int_equal(chown(path, 0, (gid_t)-1), 0);
	}
	unlink(path);
	free(path);
	free(text);

	json_object_set_new(doc, "inputs", json_array());
	text = json_dumps(doc, 0);
	path = temp_file(text);
	want = ap_xasprintf("%s: 'inputs' is empty: a manifest that records no input would be "
	                    "fresh for ever", path);
	expect_refusal(path, AP_EINPUT, want);
	free(want);
	unlink(path);
	free(path);
	free(text);
	rmdir(dir);
	free(dir);
	free(link);
	json_decref(doc);
}

/* Keys a later v1 writer may add are ignored, so readers keep working. */
static void test_unknown_keys_ignored(void **state)
{
	json_t *doc = json_load_file(MANIFESTS "good.json", 0, NULL);
	char *text, *path;
	json_t *m;

	json_object_set_new(doc, "site", json_string("rack-3"));
	json_object_set_new(json_object_get(json_object_get(doc, "rules"), "mla.reduce.cases"),
	                    "elapsed_ms", json_integer(3));
	text = json_dumps(doc, 0);
	path = temp_file(text);
	assert_int_equal(ap_manifest_read_file(path, &m), AP_OK);
	json_decref(m);
	unlink(path);
	free(path);
	free(text);
	json_decref(doc);
}

/* The loader's second reading (core/json-text.h) agrees with jansson's on
 * every kind of value, and tells a tree that is not the text's. */
static void test_text_read_again(void **state)
{
	static const char *const same[] = {
		"{}", " [ ] ", "[0, -0, 12, -9223372036854775808, 9223372036854775807]",
		"[0.5, -1e-3, 2E+2, 1.0, 0.0039, 1e-400]", "[true, false, null]",
		"{\"a\": {\"b\": [\"\"]}, \"c\": \"d\"}",
		"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u00e9\\u20ac\\ud83d\\ude00\", \"\xc3\xa9\"]",
		"{\"\\u0041\": 1}\r\n",
	};
	static const char *const not_json[] = {
		"", "1", "\"a\"", "{\"a\":}", "[1,]", "{\"a\" 1}", "[01]", "[1.]", "[.5]",
		"[-]", "[1e]", "[tru]", "[truex]", "[\"\x01\"]", "[\"\\x\"]", "[\"\\u12\"]",
		"[\"\\udc00\"]", "[\"\\ud800\"]", "[] x", "[\"a]", "{\"a\":1", "[1 2]",
	};
	json_error_t err;

	(void)state;
	for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
		json_t *doc = json_loads(same[i], 0, &err);

		assert_non_null(doc);
		assert_true(ap_json_text_is(same[i], strlen(same[i]), doc));
		assert_true(ap_json_text_is(same[i], strlen(same[i]), NULL));
		json_decref(doc);
	}
	for (size_t i = 0; i < sizeof not_json / sizeof *not_json; i++) {
		assert_null(json_loads(not_json[i], 0, &err));
		assert_false(ap_json_text_is(not_json[i], strlen(not_json[i]), NULL));
	}
	/* Duplicate keys are JSON: jansson refuses them itself. */
	assert_true(ap_json_text_is("{\"a\": 1, \"a\": 2}", 16, NULL));

	/* What a lost byte, a lost member or another order makes of the text. */
	static const char *const differ[][2] = {
		{"{\"schema\": \"aiter-probe.manifest/1\"}", "{\"schema\": \"aiter-probe.mnifest/1\"}"},
		{"{\"a\": 1, \"b\": 2}", "{\"a\": 1}"},
		{"{\"a\": 1, \"b\": 2}", "{\"b\": 2, \"a\": 1}"},
		{"{\"ab\": 1}", "{\"a\": 1}"},
		{"[12345]", "[1234]"},
		{"[0.125]", "[0.12]"},
		{"[1, 2]", "[1]"},
		{"[1]", "[1.0]"},
		{"[true]", "[false]"},
		{"[\"a\"]", "[null]"},
	};
	for (size_t i = 0; i < sizeof differ / sizeof *differ; i++) {
		json_t *doc = json_loads(differ[i][1], 0, &err);

		assert_non_null(doc);
		assert_false(ap_json_text_is(differ[i][0], strlen(differ[i][0]), doc));
		json_decref(doc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_newer_schema),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_refused_before_parsing),
		cmocka_unit_test(test_edits),
		cmocka_unit_test(test_not_regular_or_too_large),
		cmocka_unit_test(test_untrusted),
		cmocka_unit_test(test_unknown_keys_ignored),
		cmocka_unit_test(test_text_read_again),
	};
	int failed;

	if (mkdtemp(scratch) == NULL) {
		perror(scratch);
		return 99;
	}
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(scratch);
	return failed;
}
