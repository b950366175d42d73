/* SPDX-License-Identifier: MIT */
/* The C API's saved manifests (aiter_probe_manifest_for_root,
 * aiter_probe_manifest_default_path), through the shared library's exported
 * symbols only. */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "aiter-probe.h"

#define MANIFESTS AP_SRCDIR "/tests/manifests/"

/* A scratch folder with a copy of the tree the test manifests describe
 * (tree/), the manifests good.json and stale.json pointed at it, and
 * AITER_PROBE_MANIFEST_DIR set to saved/ beneath it. */
struct scratch {
	char dir[PATH_MAX];
	char *tree;
	char *saved;
};

/* Formatted strings, freed by teardown. */
static char *kept[64];
static size_t nkept;

static const char *str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static const char *str(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	assert_true(vasprintf(&s, fmt, ap) >= 0);
	va_end(ap);
	assert_true(nkept < sizeof kept / sizeof *kept);
	return kept[nkept++] = s;
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;

	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static int setup(void **state)
{
	struct scratch *s = calloc(1, sizeof *s);
	char tmpl[] = "/tmp/ap-test-api-saved-XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	/* Canonical, as a scan records the root. */
	assert_non_null(realpath(tmpl, s->dir));
	s->tree = (char *)str("%s/tree", s->dir);
	s->saved = (char *)str("%s/saved", s->dir);
	sh("cp -R '%s/tree' '%s/tree' && chmod -R u+w '%s' && mkdir '%s'", MANIFESTS, s->dir,
	   s->dir, s->saved);
	sh("for m in good stale; do sed 's|\"root\": \"/opt/aiter\"|\"root\": \"%s\"|' "
	   "'%s'$m.json >'%s'/$m.json; done",
	   s->tree, MANIFESTS, s->dir);
	setenv("AITER_PROBE_MANIFEST_DIR", s->saved, 1);
	unsetenv("AITER_PROBE_MANIFEST");
	unsetenv("AITER_META_DIR");
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct scratch *s = *state;

	sh("rm -rf '%s'", s->dir);
	free(s);
	while (nkept > 0)
		free(kept[--nkept]);
	return 0;
}

static char *saved_path(const char *root)
{
	char *path = NULL;

	assert_int_equal(aiter_probe_manifest_default_path(root, &path), 0);
	assert_non_null(path);
	return path;
}

static void expect_refused(const char *root, int code, const char *message)
{
	aiter_probe_manifest *m = (aiter_probe_manifest *)1;
	const char *reason = NULL;

	assert_int_equal(aiter_probe_manifest_for_root(&m, root, &reason), code);
	assert_null(m);
	assert_string_equal(reason, message);
	assert_string_equal(aiter_probe_last_error(), message);
}

/* The name is the first 16 hex digits of the sha256 of the canonical root;
 * the Python twin (tests/python/test_backend.py) pins the same name for "/". */
static void test_default_path(void **state)
{
	struct scratch *s = *state;
	char *path = saved_path("/"), *a, *b;

	assert_string_equal(path, str("%s/aiter-8a5edab282632443.json", s->saved));
	free(path);

	a = saved_path(s->tree);
	b = saved_path(str("%s/./tree/", s->dir));
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), strlen(s->saved) + strlen("/aiter-0123456789abcdef.json"));
	free(b);
	b = saved_path(s->dir);
	assert_string_not_equal(a, b);
	free(a);
	free(b);

	setenv("AITER_PROBE_MANIFEST_DIR", "", 1);
	setenv("XDG_CACHE_HOME", "/xdg/", 1);
	path = saved_path("/");
	assert_string_equal(path, "/xdg//aiter-probe/aiter-8a5edab282632443.json");
	free(path);
	/* A relative XDG_CACHE_HOME is not one (the XDG specification). */
	setenv("XDG_CACHE_HOME", "cache", 1);
	setenv("HOME", "/home/u", 1);
	path = saved_path("/");
	assert_string_equal(path, "/home/u/.cache/aiter-probe/aiter-8a5edab282632443.json");
	free(path);
	unsetenv("XDG_CACHE_HOME");
	/* A relative HOME is none either: it would move with the working
	 * directory. */
	setenv("HOME", "relhome", 1);
	path = (char *)1;
	assert_int_equal(aiter_probe_manifest_default_path("/", &path), -1);
	assert_null(path);
	unsetenv("HOME");
	path = (char *)1;
	assert_int_equal(aiter_probe_manifest_default_path("/", &path), -1);
	assert_null(path);
	assert_string_equal(aiter_probe_last_error(), "no folder for saved manifests: set "
	                    "AITER_PROBE_MANIFEST_DIR, XDG_CACHE_HOME or HOME");
	expect_refused(s->tree, AITER_PROBE_ERROR, "no folder for saved manifests: set "
	               "AITER_PROBE_MANIFEST_DIR, XDG_CACHE_HOME or HOME");
	/* A relative folder would be another one in each working directory. */
	setenv("AITER_PROBE_MANIFEST_DIR", "rel", 1);
	path = (char *)1;
	assert_int_equal(aiter_probe_manifest_default_path("/", &path), -1);
	assert_null(path);
	assert_string_equal(aiter_probe_last_error(),
	                    "AITER_PROBE_MANIFEST_DIR must be an absolute path, not 'rel'");
	expect_refused(s->tree, AITER_PROBE_ERROR,
	               "AITER_PROBE_MANIFEST_DIR must be an absolute path, not 'rel'");
	setenv("AITER_PROBE_MANIFEST_DIR", s->saved, 1);

	path = (char *)1;
	assert_int_equal(aiter_probe_manifest_default_path("/nowhere/at/all", &path), -1);
	assert_null(path);
	assert_string_equal(aiter_probe_last_error(),
	                    "AITER root '/nowhere/at/all': No such file or directory");
}

static void test_for_root(void **state)
{
	struct scratch *s = *state;
	char *path = saved_path(s->tree);
	aiter_probe_manifest *m = NULL;
	const char *message;

	message = str("no manifest at %s: run 'aiter-probe scan --save'", path);
	expect_refused(s->tree, AITER_PROBE_MISSING, message);

	sh("cp '%s/good.json' '%s'", s->dir, path);
	assert_int_equal(aiter_probe_manifest_for_root(&m, s->tree, NULL), AITER_PROBE_OK);
	assert_non_null(m);
	assert_int_equal(aiter_probe_manifest_supported(m, "mla.decode.native_h24"), 1);
	/* A manifest found this way answers every call an opened one does. */
	assert_true(aiter_probe_manifest_capability_count(m) > 0);
	assert_non_null(aiter_probe_manifest_capability_id(m, 0));
	assert_true(aiter_probe_manifest_rule_count(m) > 0);
	aiter_probe_manifest_free(m);
	/* The root as the caller spells it: canonicalized first. */
	message = str("%s/../tree/", s->saved);
	assert_int_equal(aiter_probe_manifest_for_root(&m, message, NULL), AITER_PROBE_OK);
	aiter_probe_manifest_free(m);

	/* The same package over other sources is another AITER. */
	setenv("AITER_META_DIR", s->saved, 1);
	message = str("%s was made for the AITER sources in %s, not %s", path, s->tree, s->saved);
	expect_refused(s->tree, AITER_PROBE_ERROR, message);
	setenv("AITER_META_DIR", s->tree, 1);
	assert_int_equal(aiter_probe_manifest_for_root(&m, s->tree, NULL), AITER_PROBE_OK);
	aiter_probe_manifest_free(m);
	unsetenv("AITER_META_DIR");

	sh("cp '%s/stale.json' '%s'", s->dir, path);
	message = str("%s is stale: csrc/kernels/mla/metadata/v1_2_device.cuh changed: "
	         "run 'aiter-probe scan --save'", path);
	expect_refused(s->tree, AITER_PROBE_STALE, message);

	/* Made for another tree: never used for this one. */
	sh("cp '%sgood.json' '%s'", MANIFESTS, path);
	message = str("%s was made for /opt/aiter, not %s", path, s->tree);
	expect_refused(s->tree, AITER_PROBE_ERROR, message);

	sh("printf '{' >'%s'", path);
	message = str("%s:1:1: string or '}' expected near end of file", path);
	expect_refused(s->tree, AITER_PROBE_ERROR, message);

	expect_refused("/nowhere/at/all", AITER_PROBE_ERROR,
	               "AITER root '/nowhere/at/all': No such file or directory");
	assert_int_equal(aiter_probe_manifest_for_root(&m, NULL, &message), AITER_PROBE_INVALID);
	assert_null(m);
	assert_string_equal(message, "aiter_probe_manifest_for_root: aiter_root is NULL");
	assert_int_equal(aiter_probe_manifest_for_root(NULL, s->tree, NULL), AITER_PROBE_INVALID);
	assert_string_equal(aiter_probe_last_error(), "aiter_probe_manifest_for_root: out is NULL");
	assert_int_equal(aiter_probe_manifest_default_path(s->tree, NULL), AITER_PROBE_INVALID);
	assert_string_equal(aiter_probe_last_error(),
	                    "aiter_probe_manifest_default_path: path is NULL");
	free(path);
}

static void test_named_by_environment(void **state)
{
	struct scratch *s = *state;
	const char *named = str("%s/good.json", s->dir), *message;
	aiter_probe_manifest *m = NULL;

	setenv("AITER_PROBE_MANIFEST", named, 1);
	assert_int_equal(aiter_probe_manifest_for_root(&m, s->tree, NULL), AITER_PROBE_OK);
	aiter_probe_manifest_free(m);

	message = str("%s was made for %s, not %s", named, s->tree, s->dir);
	expect_refused(s->dir, AITER_PROBE_ERROR, message);

	named = str("%s/stale.json", s->dir);
	setenv("AITER_PROBE_MANIFEST", named, 1);
	message = str("%s is stale: csrc/kernels/mla/metadata/v1_2_device.cuh changed: "
	         "run 'aiter-probe scan -o %s'", named, named);
	expect_refused(s->tree, AITER_PROBE_STALE, message);

	named = str("%s/nowhere.json", s->dir);
	setenv("AITER_PROBE_MANIFEST", named, 1);
	message = str("no manifest at %s (AITER_PROBE_MANIFEST): run 'aiter-probe scan -o %s'", named,
	         named);
	expect_refused(s->tree, AITER_PROBE_MISSING, message);

	/* A FIFO would block a server's start: refused by its type, unopened. */
	named = str("%s/fifo.json", s->dir);
	assert_int_equal(mkfifo(named, 0600), 0);
	setenv("AITER_PROBE_MANIFEST", named, 1);
	expect_refused(s->tree, AITER_PROBE_ERROR, str("%s: not a regular file (a FIFO)", named));
	unlink(named);
	unsetenv("AITER_PROBE_MANIFEST");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_default_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_for_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_named_by_environment, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
