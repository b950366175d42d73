/* SPDX-License-Identifier: MIT */
/* The git source of history: paths looked up in a tree built here with
 * libgit2, symlinks followed only inside it, folders, submodules and
 * oversized blobs refused with the reader's wording; and history's reuse of
 * rules' answers held to the reader's budget. */
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
#include "engine/report/history.h"
#include "engine/rules.h"

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

/* Five 40-byte files, f1.txt to f5.txt, f1's next to last byte last. */
static git_oid five_files(git_repository *repo, char last)
{
	char one[41], first[41];

	memset(one, 'x', 39);
	one[39] = '\n';
	one[40] = '\0';
	memcpy(first, one, sizeof one);
	first[38] = last;
	return tree(repo, FILE_("f1.txt", repo, first), FILE_("f2.txt", repo, one),
	            FILE_("f3.txt", repo, one), FILE_("f4.txt", repo, one),
	            FILE_("f5.txt", repo, one), NULL);
}

static int no_start(void *ctx, const char *range, size_t commits)
{
	(void)ctx, (void)range, (void)commits;
	return 0;
}

static int no_initial(void *ctx, const json_t *initial)
{
	(void)ctx, (void)initial;
	return 0;
}

static int keep_id(void *ctx, const json_t *change)
{
	json_array_append_new(ctx, json_copy(json_object_get(change, "id")));
	return 0;
}

/* With a 64-byte cap the reader holds 1,024 bytes a scan: the rules on f1
 * to f4 take about 250 each (the file and its text), and the fifth's is
 * refused. A commit changing f1 alone runs f1's rule and recalls the next
 * three; f5's rule, run again, would fit now, where a full scan would
 * refuse it: the commit is scanned whole again, and only f1's rule
 * changes. */
static void test_history_budget(void **state)
{
	static const char pack[] = "rules:\n"
	                           "  - {id: r1, file: f1.txt, literal: \"xA\"}\n"
	                           "  - {id: r2, file: f2.txt, literal: \"xA\"}\n"
	                           "  - {id: r3, file: f3.txt, literal: \"xA\"}\n"
	                           "  - {id: r4, file: f4.txt, literal: \"xA\"}\n"
	                           "  - {id: r5, file: f5.txt, literal: \"xA\"}\n";
	fixture *f = *state;
	ap_history_opts opts = {.max_bytes = 64, .python_version = "3.11"};
	json_t *changes = json_array();
	ap_history_sink sink = {no_start, no_initial, keep_id, changes};
	git_signature *sig;
	git_tree *t1, *t2;
	git_commit *c1;
	git_oid id1, id2, root1 = five_files(f->repo, 'x'), root2 = five_files(f->repo, 'A');
	ap_ruleset *rs;
	size_t evaluated;

	assert_int_equal(ap_ruleset_new(&rs), 0);
	assert_int_equal(ap_ruleset_load_buffer(rs, "pack.yaml", pack, strlen(pack)), 0);
	assert_int_equal(ap_ruleset_finish(rs), 0);
	assert_int_equal(git_signature_new(&sig, "T", "t@example.com", 1709280000, 0), 0);
	assert_int_equal(git_tree_lookup(&t1, f->repo, &root1), 0);
	assert_int_equal(git_tree_lookup(&t2, f->repo, &root2), 0);
	assert_int_equal(git_commit_create_v(&id1, f->repo, "HEAD", sig, sig, NULL, "one", t1, 0), 0);
	assert_int_equal(git_commit_lookup(&c1, f->repo, &id1), 0);
	assert_int_equal(git_commit_create_v(&id2, f->repo, "HEAD", sig, sig, NULL, "two", t2, 1, c1),
	                 0);
	assert_int_equal(ap_history_run(rs, f->dir, "HEAD", &opts, &sink, &evaluated), 0);
	assert_int_equal(evaluated, 2);
	assert_int_equal(json_array_size(changes), 1);
	assert_string_equal(json_string_value(json_array_get(changes, 0)), "r1");
	json_decref(changes);
	git_commit_free(c1);
	git_tree_free(t1);
	git_tree_free(t2);
	git_signature_free(sig);
	ap_ruleset_free(rs);
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
		cmocka_unit_test(test_history_budget),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
