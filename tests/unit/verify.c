/* SPDX-License-Identifier: MIT */
/* Freshness: every way an input can differ, and the refusals that keep a
 * tampered manifest from reading outside the root. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/verify.h"

#define SHA_HELLO "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

struct tree {
	char root[64];
	json_t *manifest;
};

static char *at(const struct tree *t, const char *rel)
{
	return ap_xasprintf("%s/%s", t->root, rel);
}

static void put(const struct tree *t, const char *rel, const char *text)
{
	char *path = at(t, rel);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

/* A tree with hello.txt ("hello\n"), sub/empty.txt, and no later.txt, and
 * the manifest inputs recording exactly that. */
static int setup(void **state)
{
	struct tree *t = ap_xcalloc(1, sizeof *t);
	char *sub;

	strcpy(t->root, "/tmp/ap-test-verify-XXXXXX");
	assert_non_null(mkdtemp(t->root));
	sub = at(t, "sub");
	assert_int_equal(mkdir(sub, 0755), 0);
	free(sub);
	put(t, "hello.txt", "hello\n");
	put(t, "sub/empty.txt", "");
	t->manifest = json_pack("{s:{s:s}, s:[{s:s, s:s, s:i}, {s:s, s:s, s:i}, {s:s, s:n, s:n}]}",
	                        "aiter", "root", t->root, "inputs",
	                        "path", "hello.txt", "sha256", SHA_HELLO, "bytes", 6,
	                        "path", "sub/empty.txt", "sha256", SHA_EMPTY, "bytes", 0,
	                        "path", "later.txt", "sha256", "bytes");
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tree *t = *state;

	run("rm -rf '%s'", t->root);
	json_decref(t->manifest);
	free(t);
	return 0;
}

/* Runs verify and returns the description of what is stale ("" when fresh). */
static char *verify(const struct tree *t)
{
	ap_verify_result res = AP_VERIFY_RESULT_INIT;
	char *which;

	assert_int_equal(ap_verify_manifest(t->manifest, "m.json", &res), AP_OK);
	assert_int_equal(res.ninputs, 3);
	assert_string_equal(res.root, t->root);
	which = ap_verify_describe(&res);
	ap_verify_result_free(&res);
	return which;
}

static void expect_stale(const struct tree *t, const char *want)
{
	char *which = verify(t);
	assert_string_equal(which, want);
	free(which);
}

static void test_fresh(void **state)
{
	expect_stale(*state, "");
}

static void test_changed_same_size(void **state)
{
	put(*state, "hello.txt", "jello\n");
	expect_stale(*state, "hello.txt changed");
}

static void test_changed_size(void **state)
{
	put(*state, "sub/empty.txt", "x");
	expect_stale(*state, "sub/empty.txt changed");
}

static void test_vanished_and_appeared(void **state)
{
	struct tree *t = *state;
	char *path = at(t, "hello.txt");

	assert_int_equal(unlink(path), 0);
	free(path);
	put(t, "later.txt", "new\n");
	expect_stale(t, "hello.txt vanished, later.txt appeared");
}

/* A folder where a parent folder was: the input vanished. */
static void test_parent_is_a_file(void **state)
{
	struct tree *t = *state;

	run("rm -rf '%s/sub' && touch '%s/sub'", t->root, t->root);
	expect_stale(t, "sub/empty.txt vanished");
}

static void test_not_a_file(void **state)
{
	struct tree *t = *state;

	run("rm '%s/hello.txt' && mkdir '%s/hello.txt'", t->root, t->root);
	/* A FIFO must not block the check. */
	run("rm '%s/sub/empty.txt' && mkfifo '%s/sub/empty.txt'", t->root, t->root);
	expect_stale(t, "hello.txt changed, sub/empty.txt changed");
}

static void test_symlinks(void **state)
{
	struct tree *t = *state;

	/* Inside the root: followed, and fresh. */
	run("mv '%s/hello.txt' '%s/sub/real.txt' && ln -s sub/real.txt '%s/hello.txt'", t->root,
	    t->root, t->root);
	expect_stale(t, "");
	/* Outside: never read, reported as changed. */
	run("cp '%s/sub/real.txt' '%s.outside' && ln -sf '%s.outside' '%s/hello.txt'", t->root,
	    t->root, t->root, t->root);
	expect_stale(t, "hello.txt changed");
	run("rm -f '%s.outside'", t->root);
}

static void expect_error(const struct tree *t, int code, const char *message)
{
	ap_verify_result res = AP_VERIFY_RESULT_INIT;

	assert_int_equal(ap_verify_manifest(t->manifest, "m.json", &res), code);
	assert_string_equal(ap_error_last(), message);
	ap_verify_result_free(&res);
}

/* Where the scan read nothing, only a readable file makes a difference: the
 * reader would refuse a folder or a symlink out of the root, as before. */
static void test_nothing_read(void **state)
{
	struct tree *t = *state;

	run("mkdir '%s/later.txt'", t->root);
	expect_stale(t, "");
	run("rmdir '%s/later.txt' && touch '%s.outside' && ln -s '%s.outside' '%s/later.txt'",
	    t->root, t->root, t->root, t->root);
	expect_stale(t, "");
	run("rm '%s/later.txt' '%s.outside' && ln -s sub/empty.txt '%s/later.txt'", t->root, t->root,
	    t->root);
	expect_stale(t, "later.txt appeared");
}

static void test_tampered_paths(void **state)
{
	static const struct {
		const char *path;
		const char *message;
	} cases[] = {
		{"/etc/passwd", "m.json: inputs[1].path '/etc/passwd' is refused: absolute path"},
		{"../x", "m.json: inputs[1].path '../x' is refused: '..' component"},
		{"sub/../../x", "m.json: inputs[1].path 'sub/../../x' is refused: '..' component"},
		{"", "m.json: inputs[1].path '' is refused: empty path"},
	};
	struct tree *t = *state;
	json_t *input = json_array_get(json_object_get(t->manifest, "inputs"), 1);
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_object_set_new(input, "path", json_string(cases[i].path));
		expect_error(t, AP_EINPUT, cases[i].message);
	}
}

static void test_root(void **state)
{
	struct tree *t = *state;
	json_t *aiter = json_object_get(t->manifest, "aiter");
	char *file, *msg;

	json_object_set_new(aiter, "root", json_string("/nonexistent/aiter"));
	expect_error(t, AP_EINPUT,
	             "m.json: aiter root '/nonexistent/aiter': No such file or directory");
	file = at(t, "hello.txt");
	json_object_set_new(aiter, "root", json_string(file));
	free(file);
	msg = ap_xasprintf("m.json: aiter root '%s/hello.txt': not a folder", t->root);
	expect_error(t, AP_EINPUT, msg);
	free(msg);
}

static void test_change_names(void **state)
{
	assert_string_equal(ap_input_change_name(AP_INPUT_CHANGED), "changed");
	assert_string_equal(ap_input_change_name(AP_INPUT_VANISHED), "vanished");
	assert_string_equal(ap_input_change_name(AP_INPUT_APPEARED), "appeared");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changed_same_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changed_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vanished_and_appeared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parent_is_a_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tampered_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root, setup, teardown),
		cmocka_unit_test(test_change_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
