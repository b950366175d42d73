/* SPDX-License-Identifier: MIT */
/* The git source of history: paths looked up in a tree built here with
 * libgit2, symlinks followed only inside it, folders, submodules and
 * oversized blobs refused with the reader's wording. */
#include "config.h"

#include <errno.h>
#include <git2.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/source-git.h"
#include "tmptree.h"
#include "engine/reader.h"

typedef struct fixture {
	char *dir;
	git_repository *repo;
	git_tree *tree;
} fixture;

static git_oid blob(git_repository *repo, const char *text)
{
	git_oid id;

	assert_int_equal(git_blob_create_from_buffer(&id, repo, text, strlen(text)), 0);
	return id;
}

/* A tree of (name, mode, id) entries, ended by a NULL name. */
static git_oid tree(git_repository *repo, ...)
{
	git_treebuilder *b;
	const char *name;
	git_oid id;
	va_list ap;

	assert_int_equal(git_treebuilder_new(&b, repo, NULL), 0);
	va_start(ap, repo);
	while ((name = va_arg(ap, const char *)) != NULL) {
		git_filemode_t mode = (git_filemode_t)va_arg(ap, int);
		git_oid entry = va_arg(ap, git_oid);

		assert_int_equal(git_treebuilder_insert(NULL, b, name, &entry, mode), 0);
	}
	va_end(ap);
	assert_int_equal(git_treebuilder_write(&id, b), 0);
	git_treebuilder_free(b);
	return id;
}

#define FILE_(name, repo, text) name, GIT_FILEMODE_BLOB, blob(repo, text)
#define LINK_(name, repo, target) name, GIT_FILEMODE_LINK, blob(repo, target)

/* csrc/kernels/mla/{reduce.cu, link.cu -> reduce.cu}
 * csrc/kernels/up.cu -> mla/../mla/reduce.cu
 * csrc/alias -> kernels/mla
 * csrc/{escape.cu -> ../../x, abs.cu -> /etc/passwd, loop1 <-> loop2}
 * 3rdparty/ck: a submodule; big.txt: 10 bytes */
static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	git_oid mla, kernels, csrc, third, root, sub;

	git_libgit2_init();
	f->dir = tt_mkdtemp("ap-git-source");
	assert_int_equal(git_repository_init(&f->repo, f->dir, 1), 0);
	memset(&sub, 0xab, sizeof sub);
	mla = tree(f->repo, FILE_("reduce.cu", f->repo, "MLA_REDUCE_CASE_EF(24)\n"),
	           LINK_("link.cu", f->repo, "reduce.cu"), NULL);
	kernels = tree(f->repo, "mla", GIT_FILEMODE_TREE, mla,
	               LINK_("up.cu", f->repo, "mla/../mla/reduce.cu"), NULL);
	csrc = tree(f->repo, "kernels", GIT_FILEMODE_TREE, kernels,
	            LINK_("alias", f->repo, "kernels/mla"),
	            LINK_("escape.cu", f->repo, "../../x"),
	            LINK_("abs.cu", f->repo, "/etc/passwd"),
	            LINK_("loop1", f->repo, "loop2"), LINK_("loop2", f->repo, "loop1"), NULL);
	third = tree(f->repo, "ck", GIT_FILEMODE_COMMIT, sub, NULL);
	root = tree(f->repo, "csrc", GIT_FILEMODE_TREE, csrc, "3rdparty", GIT_FILEMODE_TREE, third,
	            FILE_("big.txt", f->repo, "0123456789"), NULL);
	assert_int_equal(git_tree_lookup(&f->tree, f->repo, &root), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	git_tree_free(f->tree);
	git_repository_free(f->repo);
	tt_remove(f->dir);
	free(f->dir);
	free(f);
	git_libgit2_shutdown();
	return 0;
}

typedef struct loaded {
	ap_file_status status;
	char *data;
	size_t len;
	char *reason;
} loaded;

static loaded load(fixture *f, const char *rel, size_t max_bytes)
{
	loaded l = {0};
	ap_file file = {.path = (char *)rel};
	void *ctx;

	assert_int_equal(ap_git_source_new(&ctx, f->repo, f->tree), 0);
	l.status = ap_git_source_ops.load(ctx, &file, max_bytes, &l.data, &l.len, &l.reason);
	ap_git_source_ops.free(ctx);
	return l;
}

static void expect_text(fixture *f, const char *rel, const char *text)
{
	loaded l = load(f, rel, 1024);

	assert_int_equal(l.status, AP_FILE_OK);
	assert_null(l.reason);
	assert_int_equal(l.len, strlen(text));
	assert_memory_equal(l.data, text, l.len);
	free(l.data);
}

static void expect_refused(fixture *f, const char *rel, ap_file_status status, const char *reason)
{
	loaded l = load(f, rel, 1024);

	assert_int_equal(l.status, status);
	assert_null(l.data);
	assert_string_equal(l.reason, reason);
	free(l.reason);
}

static void test_blob(void **state)
{
	expect_text(*state, "csrc/kernels/mla/reduce.cu", "MLA_REDUCE_CASE_EF(24)\n");
	expect_text(*state, "big.txt", "0123456789");
}

static void test_missing(void **state)
{
	expect_refused(*state, "csrc/kernels/mla/nope.cu", AP_FILE_MISSING, "no such file");
	expect_refused(*state, "nope/reduce.cu", AP_FILE_MISSING, "no such file");
	/* a file used as a folder */
	expect_refused(*state, "big.txt/x", AP_FILE_MISSING, "no such file");
}

static void test_folder(void **state)
{
	expect_refused(*state, "csrc/kernels", AP_FILE_ERROR, "is a folder");
	expect_refused(*state, "csrc/alias", AP_FILE_ERROR, "is a folder");
}

static void test_submodule(void **state)
{
	expect_refused(*state, "3rdparty/ck", AP_FILE_ERROR, "is a submodule");
	expect_refused(*state, "3rdparty/ck/include/ck.hpp", AP_FILE_ERROR, "is inside a submodule");
}

static void test_symlinks_inside(void **state)
{
	const char *text = "MLA_REDUCE_CASE_EF(24)\n";

	expect_text(*state, "csrc/kernels/mla/link.cu", text);
	expect_text(*state, "csrc/kernels/up.cu", text);
	expect_text(*state, "csrc/alias/reduce.cu", text);
	expect_text(*state, "csrc/alias/link.cu", text);
}

static void test_symlinks_outside(void **state)
{
	expect_refused(*state, "csrc/escape.cu", AP_FILE_ERROR,
	               "symlink resolves outside the AITER root");
	expect_refused(*state, "csrc/abs.cu", AP_FILE_ERROR,
	               "symlink resolves outside the AITER root");
	expect_refused(*state, "csrc/loop1", AP_FILE_ERROR, strerror(ELOOP));
}

static void test_size_cap(void **state)
{
	loaded l = load(*state, "big.txt", 9);

	assert_int_equal(l.status, AP_FILE_ERROR);
	assert_null(l.data);
	assert_string_equal(l.reason, "larger than the 9-byte cap (10 bytes)");
	free(l.reason);
	l = load(*state, "big.txt", 10);
	assert_int_equal(l.status, AP_FILE_OK);
	free(l.data);
}

static void test_reader(void **state)
{
	fixture *f = *state;
	const ap_file *a, *b;
	ap_reader *r;

	assert_int_equal(ap_reader_new_git(&r, f->repo, f->tree, "HEAD", 1024, NULL), 0);
	assert_string_equal(ap_reader_root(r), "HEAD");
	a = ap_reader_get(r, "csrc/kernels/mla/reduce.cu");
	assert_int_equal(a->status, AP_FILE_OK);
	assert_true(a->hashed);
	b = ap_reader_get(r, "csrc/kernels/mla/reduce.cu");
	assert_ptr_equal(a, b);
	a = ap_reader_get(r, "csrc/kernels");
	assert_int_equal(a->status, AP_FILE_ERROR);
	assert_string_equal(a->reason, "is a folder");
	assert_int_equal(ap_reader_count(r), 2);
	ap_reader_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blob),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_folder),
		cmocka_unit_test(test_submodule),
		cmocka_unit_test(test_symlinks_inside),
		cmocka_unit_test(test_symlinks_outside),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_reader),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
