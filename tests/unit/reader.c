/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/reader.h"
#include "tmptree.h"

/* Each test gets a fresh folder holding the AITER root "root" and a file
 * "outside.txt" next to it, for symlinks that escape. Symlinks are made
 * here at run time rather than shipped. */
struct tree {
	char *base;
	char *root;
	ap_reader *r;
};

static int setup(void **state)
{
	struct tree *t = ap_xcalloc(1, sizeof *t);

	t->base = tt_mkdtemp("ap-reader");
	t->root = ap_xasprintf("%s/root", t->base);
	tt_mkdir(t->base, "root");
	tt_mkdir(t->base, "root/csrc");
	tt_mkdir(t->base, "root/dir");
	tt_put_s(t->base, "root/csrc/reduce.cu", "MLA_REDUCE_CASE_EF(NUM_HEAD, 24,\r\n");
	tt_put_s(t->base, "root/ops.py", "\xef\xbb\xbfx = 1  # note\n");
	tt_put_s(t->base, "outside.txt", "secret\n");
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tree *t = *state;

	ap_reader_free(t->r);
	tt_remove(t->base);
	free(t->base);
	free(t->root);
	free(t);
	return 0;
}

static ap_reader *open_root(struct tree *t, size_t max_bytes)
{
	ap_reader_free(t->r);
	assert_int_equal(ap_reader_new_fs(&t->r, t->root, NULL, max_bytes), 0);
	return t->r;
}

static void assert_file(const ap_file *f, ap_file_status status, const char *reason)
{
	assert_non_null(f);
	assert_int_equal(f->status, status);
	if (reason == NULL) {
		assert_null(f->reason);
		assert_non_null(f->data);
	} else {
		assert_non_null(f->reason);
		assert_string_equal(f->reason, reason);
		assert_null(f->data);
	}
}

static void test_ok_and_root(void **state)
{
	struct tree *t = *state;
	ap_reader *r = open_root(t, AP_READER_DEFAULT_MAX_BYTES);
	const ap_file *f = ap_reader_get(r, "csrc/reduce.cu");

	assert_string_equal(ap_reader_root(r), t->root);
	assert_file(f, AP_FILE_OK, NULL);
	assert_string_equal(f->path, "csrc/reduce.cu");
	assert_int_equal(f->len, 34);
	assert_memory_equal(f->data, "MLA_REDUCE_CASE_EF(NUM_HEAD, 24,\r\n", 34);
	assert_true(f->hashed);
	/* A "./" component resolves as usual. */
	assert_file(ap_reader_get(r, "./ops.py"), AP_FILE_OK, NULL);
}

static void test_root_errors(void **state)
{
	struct tree *t = *state;
	ap_reader *r = NULL;
	char *missing = ap_xasprintf("%s/nope", t->base);
	char *file = ap_xasprintf("%s/outside.txt", t->base);
	char *msg;

	assert_int_equal(ap_reader_new_fs(&r, missing, NULL, 100), AP_EINPUT);
	assert_null(r);
	msg = ap_xasprintf("AITER root '%s': No such file or directory", missing);
	assert_string_equal(ap_error_last(), msg);
	free(msg);
	assert_int_equal(ap_reader_new_fs(&r, file, NULL, 100), AP_EINPUT);
	msg = ap_xasprintf("AITER root '%s' is not a folder", file);
	assert_string_equal(ap_error_last(), msg);
	free(msg);
	free(missing);
	free(file);
}

static void test_missing_and_folder(void **state)
{
	struct tree *t = *state;
	ap_reader *r = open_root(t, AP_READER_DEFAULT_MAX_BYTES);

	assert_file(ap_reader_get(r, "csrc/nope.cu"), AP_FILE_MISSING, "no such file");
	assert_file(ap_reader_get(r, "nodir/x.cu"), AP_FILE_MISSING, "no such file");
	assert_file(ap_reader_get(r, "csrc/reduce.cu/x"), AP_FILE_MISSING, "no such file");
	assert_false(ap_reader_get(r, "csrc/nope.cu")->hashed);
	assert_file(ap_reader_get(r, "dir"), AP_FILE_ERROR, "is a folder");
	assert_file(ap_reader_get(r, "csrc"), AP_FILE_ERROR, "is a folder");
	assert_false(ap_reader_get(r, "dir")->hashed);
}

static void test_symlinks(void **state)
{
	struct tree *t = *state;
	ap_reader *r;
	char *want;

	tt_link(t->base, "../outside.txt", "root/escape.cu");
	tt_link(t->base, "csrc/reduce.cu", "root/inside.cu");
	tt_link(t->base, "..", "root/up");
	tt_link(t->base, "../nowhere.txt", "root/dangling.cu");
	r = open_root(t, AP_READER_DEFAULT_MAX_BYTES);

	want = ap_xasprintf("symlink resolves outside the AITER root (%s/outside.txt)", t->base);
	assert_file(ap_reader_get(r, "escape.cu"), AP_FILE_ERROR, want);
	assert_false(ap_reader_get(r, "escape.cu")->hashed);
	/* Through a linked folder too. */
	assert_file(ap_reader_get(r, "up/outside.txt"), AP_FILE_ERROR, want);
	free(want);
	/* Back inside through the linked folder is fine. */
	assert_file(ap_reader_get(r, "up/root/ops.py"), AP_FILE_OK, NULL);
	assert_file(ap_reader_get(r, "inside.cu"), AP_FILE_OK, NULL);
	assert_int_equal(ap_reader_get(r, "inside.cu")->len, 34);
	assert_file(ap_reader_get(r, "dangling.cu"), AP_FILE_MISSING, "no such file");
}

static void test_root_through_symlink(void **state)
{
	struct tree *t = *state;
	char *alias = ap_xasprintf("%s/alias", t->base);
	ap_reader *r = NULL;

	tt_link(t->base, "root", "alias");
	assert_int_equal(ap_reader_new_fs(&r, alias, NULL, 100), 0);
	/* The root is canonical, so files under it are not "outside". */
	assert_string_equal(ap_reader_root(r), t->root);
	assert_file(ap_reader_get(r, "ops.py"), AP_FILE_OK, NULL);
	ap_reader_free(r);
	free(alias);
}

static void test_size_cap(void **state)
{
	struct tree *t = *state;
	/* sha256 of "0123456789A" */
	static const unsigned char eleven_sha256[32] = {
		0xbf, 0x6e, 0xdd, 0xc8, 0xfa, 0x80, 0x92, 0x6f, 0x7d, 0xb6, 0xda,
		0xc2, 0x04, 0xae, 0xec, 0xf2, 0x06, 0xbc, 0x86, 0xeb, 0x7a, 0x7e,
		0x29, 0x49, 0x3c, 0x06, 0xdc, 0x25, 0xa4, 0x75, 0x9b, 0x65,
	};
	ap_reader *r;
	const ap_file *f;

	tt_put_s(t->base, "root/ten.txt", "0123456789");
	tt_put_s(t->base, "root/eleven.txt", "0123456789A");
	r = open_root(t, 10);
	assert_file(ap_reader_get(r, "ten.txt"), AP_FILE_OK, NULL);
	assert_file(ap_reader_get(r, "eleven.txt"), AP_FILE_ERROR,
	            "larger than the 10-byte cap (11 bytes)");
	/* Not loaded, but hashed (streamed) so that a manifest can tell
	 * whether it changed. */
	f = ap_reader_get(r, "eleven.txt");
	assert_true(f->hashed);
	assert_int_equal(f->len, 11);
	assert_memory_equal(f->sha256, eleven_sha256, 32);
	assert_file(ap_reader_get(r, "csrc/reduce.cu"), AP_FILE_ERROR,
	            "larger than the 10-byte cap (34 bytes)");
	assert_int_equal(ap_reader_get(r, "csrc/reduce.cu")->len, 34);
}

static void test_binary(void **state)
{
	struct tree *t = *state;
	ap_reader *r;
	const ap_file *f;

	tt_put(t->base, "root/blob.co", "ELF\0\1\2", 6);
	r = open_root(t, AP_READER_DEFAULT_MAX_BYTES);
	f = ap_reader_get(r, "blob.co");
	assert_file(f, AP_FILE_ERROR, "binary file (NUL byte at offset 3)");
	/* It was read, so it is hashed and its size known. */
	assert_true(f->hashed);
	assert_int_equal(f->len, 6);
	assert_null(ap_reader_text(r, f, AP_LANG_AUTO, AP_WS_KEEP));
	assert_string_equal(ap_error_last(), "blob.co: binary file (NUL byte at offset 3)");
}

static void test_unreadable(void **state)
{
	struct tree *t = *state;
	char *path = ap_xasprintf("%s/root/locked.cu", t->base);
	ap_reader *r;

	if (geteuid() == 0) {
		/* Root reads a mode-000 file anyway: no EACCES to observe. */
		free(path);
		skip();
	}
	tt_put_s(t->base, "root/locked.cu", "x\n");
	assert_int_equal(chmod(path, 0), 0);
	r = open_root(t, AP_READER_DEFAULT_MAX_BYTES);
	assert_file(ap_reader_get(r, "locked.cu"), AP_FILE_ERROR, "Permission denied");
	assert_false(ap_reader_get(r, "locked.cu")->hashed);
	free(path);
}

static void test_refused_paths(void **state)
{
	struct tree *t = *state;
	ap_reader *r = open_root(t, AP_READER_DEFAULT_MAX_BYTES);

	assert_null(ap_path_refusal("csrc/kernels/mla/reduce.cu"));
	assert_null(ap_path_refusal("./a"));
	assert_null(ap_path_refusal("a/..b/c.."));
	assert_string_equal(ap_path_refusal(""), "empty path");
	assert_string_equal(ap_path_refusal("/etc/passwd"), "absolute path");
	assert_string_equal(ap_path_refusal("../x"), "'..' component");
	assert_string_equal(ap_path_refusal("a/../b"), "'..' component");
	assert_string_equal(ap_path_refusal("a/.."), "'..' component");
	assert_string_equal(ap_path_refusal(".."), "'..' component");
	assert_file(ap_reader_get(r, "../outside.txt"), AP_FILE_ERROR, "path refused: '..' component");
	assert_file(ap_reader_get(r, "/etc/passwd"), AP_FILE_ERROR, "path refused: absolute path");
}

/* A source that counts its loads, to see that each file is read once. */
struct counting {
	unsigned loads;
};

static ap_file_status count_load(void *ctx, ap_file *f, size_t max_bytes, char **data,
                                 size_t *len, char **reason)
{
	struct counting *c = ctx;
	const char *rel = f->path;

	c->loads++;
	if (strcmp(rel, "gone") == 0) {
		*reason = ap_xstrdup("no such file");
		return AP_FILE_MISSING;
	}
	if (strcmp(rel, "big") == 0) {
		/* A source that ignores the cap: the reader still applies it. */
		*data = ap_xstrdup("0123456789abcdef");
		*len = 16;
		return AP_FILE_OK;
	}
	*data = ap_xstrdup("abc");
	*len = 3;
	return AP_FILE_OK;
}

static void count_free(void *ctx)
{
	free(ctx);
}

static const ap_source_ops counting_ops = {count_load, count_free};

static void test_read_once_and_sha256(void **state)
{
	struct counting *c = ap_xcalloc(1, sizeof *c);
	static const unsigned char abc_sha256[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
		0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
		0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	ap_reader *r;
	const ap_file *a, *b;
	char name[32];

	assert_int_equal(ap_reader_new(&r, &counting_ops, c, "git:v0.1.0", 10), 0);
	assert_string_equal(ap_reader_root(r), "git:v0.1.0");
	a = ap_reader_get(r, "x.cu");
	b = ap_reader_get(r, "x.cu");
	assert_ptr_equal(a, b);
	assert_file(a, AP_FILE_OK, NULL);
	assert_memory_equal(a->sha256, abc_sha256, 32);
	assert_file(ap_reader_get(r, "gone"), AP_FILE_MISSING, "no such file");
	assert_file(ap_reader_get(r, "gone"), AP_FILE_MISSING, "no such file");
	assert_file(ap_reader_get(r, "big"), AP_FILE_ERROR, "larger than the 10-byte cap (16 bytes)");
	assert_true(ap_reader_get(r, "big")->hashed);
	assert_int_equal(c->loads, 3);
	/* Enough files to grow the table; every one still found once. */
	for (int k = 0; k < 300; k++) {
		snprintf(name, sizeof name, "f%d.py", k);
		ap_reader_get(r, name);
	}
	for (int k = 0; k < 300; k++) {
		snprintf(name, sizeof name, "f%d.py", k);
		assert_string_equal(ap_reader_get(r, name)->path, name);
	}
	assert_int_equal(c->loads, 303);
	assert_int_equal(ap_reader_count(r), 303);
	assert_string_equal(ap_reader_at(r, 0)->path, "x.cu");
	assert_string_equal(ap_reader_at(r, 1)->path, "gone");
	assert_string_equal(ap_reader_at(r, 302)->path, "f299.py");
	assert_null(ap_reader_at(r, 303));
	ap_reader_free(r);
}

static void test_texts_cached(void **state)
{
	struct tree *t = *state;
	ap_reader *r = open_root(t, AP_READER_DEFAULT_MAX_BYTES);
	const ap_file *cu = ap_reader_get(r, "csrc/reduce.cu");
	const ap_file *py = ap_reader_get(r, "ops.py");
	const ap_text *k1, *k2, *s1, *c1;

	k1 = ap_reader_text(r, cu, AP_LANG_AUTO, AP_WS_KEEP);
	k2 = ap_reader_text(r, cu, AP_LANG_C, AP_WS_KEEP);
	s1 = ap_reader_text(r, cu, AP_LANG_AUTO, AP_WS_STRIP);
	c1 = ap_reader_text(r, cu, AP_LANG_TEXT, AP_WS_KEEP);
	assert_non_null(k1);
	assert_ptr_equal(k1, k2); /* auto is C for .cu */
	assert_ptr_not_equal(k1, s1);
	assert_ptr_not_equal(k1, c1);
	assert_string_equal(k1->s, "MLA_REDUCE_CASE_EF(NUM_HEAD, 24,\n");
	assert_string_equal(s1->s, "MLA_REDUCE_CASE_EF(NUM_HEAD,24,");
	assert_int_equal(k1->lang, AP_LANG_C);
	assert_int_equal(s1->ws, AP_WS_STRIP);
	/* BOM skipped, Python comment dropped. */
	assert_string_equal(ap_reader_text(r, py, AP_LANG_AUTO, AP_WS_KEEP)->s, "x = 1   \n");
	assert_ptr_equal(ap_reader_text(r, py, AP_LANG_PYTHON, AP_WS_KEEP),
	                 ap_reader_text(r, py, AP_LANG_AUTO, AP_WS_KEEP));
	assert_int_equal(ap_reader_count(r), 2);
}

static int freed;
static void free_counted(void *p)
{
	freed++;
	free(p);
}

static void put(ap_derived_cache *c, const char *key, size_t bytes)
{
	ap_derived_cache_put(c, key, strlen(key), ap_xstrdup(key), bytes, free_counted);
}

/* Past the cap, what readers before the last used is kept while it fits
 * three quarters of it, the most recent first; what the last used stays
 * whatever its size. */
static void test_derived_cache_cap(void **state)
{
	const size_t third = AP_DERIVED_CACHE_BYTES / 3;
	ap_derived_cache *c = ap_derived_cache_new();

	(void)state;
	freed = 0;
	put(c, "a", third);
	put(c, "b", third);
	put(c, "c", third);
	ap_derived_cache_sweep(c); /* all three were used: kept, past the cap */
	assert_int_equal(ap_derived_cache_count(c), 3);
	assert_non_null(ap_derived_cache_get(c, "a", 1));
	ap_derived_cache_sweep(c); /* a, then the older b fit; c does not */
	assert_int_equal(ap_derived_cache_count(c), 2);
	assert_int_equal(freed, 1);
	assert_null(ap_derived_cache_get(c, "c", 1));
	put(c, "d", 2 * AP_DERIVED_CACHE_BYTES);
	ap_derived_cache_sweep(c); /* d, used, is past the cap alone: a and b go */
	assert_int_equal(ap_derived_cache_count(c), 1);
	assert_null(ap_derived_cache_get(c, "b", 1));
	ap_derived_cache_sweep(c); /* d unused now */
	assert_int_equal(ap_derived_cache_count(c), 0);
	assert_int_equal(freed, 4);
	ap_derived_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ok_and_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_and_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_through_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_binary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_paths, setup, teardown),
		cmocka_unit_test(test_read_once_and_sha256),
		cmocka_unit_test_setup_teardown(test_texts_cached, setup, teardown),
		cmocka_unit_test(test_derived_cache_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
