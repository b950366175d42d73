/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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

#include "core/ap-util.h"
#include "core/confine.h"
#include "tmptree.h"

/* A fresh folder holding the root "root" and "outside.txt" next to it. */
struct tree {
	char *base;
	char *root;
};

static char *in(const struct tree *t, const char *rel)
{
	return ap_xasprintf("%s/%s", t->base, rel);
}

static int setup(void **state)
{
	struct tree *t = ap_xcalloc(1, sizeof *t);

	t->base = tt_mkdtemp("ap-confine");
	t->root = in(t, "root");
	tt_mkdir(t->base, "root");
	tt_mkdir(t->base, "root/dir");
	tt_put(t->base, "root/dir/a.cu", "abc", 3);
	tt_put(t->base, "outside.txt", "secret\n", 7);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tree *t = *state;

	tt_remove(t->base);
	free(t->base);
	free(t->root);
	free(t);
	return 0;
}

static void test_path_under(void **state)
{
	(void)state;
	assert_true(ap_path_under("/opt/aiter", "/opt/aiter"));
	assert_true(ap_path_under("/opt/aiter", "/opt/aiter/csrc/x.cu"));
	/* A sibling sharing the prefix is outside. */
	assert_false(ap_path_under("/opt/aiter", "/opt/aiter2/x.cu"));
	assert_false(ap_path_under("/opt/aiter", "/opt"));
	assert_true(ap_path_under("/", "/etc/passwd"));
}

static void test_open_kinds(void **state)
{
	struct tree *t = *state;
	char *fifo = in(t, "root/pipe");
	char *want;
	ap_confined c;

	assert_int_equal(ap_open_under(t->root, "dir/a.cu", &c), AP_CONFINED_FILE);
	assert_true(c.fd >= 0);
	assert_int_equal(c.st.st_size, 3);
	close(c.fd);
	/* A symlink inside the root is followed, also through "..". */
	tt_link(t->base, "dir/a.cu", "root/inside.cu");
	assert_int_equal(ap_open_under(t->root, "inside.cu", &c), AP_CONFINED_FILE);
	close(c.fd);
	tt_link(t->base, "..", "root/up");
	assert_int_equal(ap_open_under(t->root, "up/root/dir/a.cu", &c), AP_CONFINED_FILE);
	close(c.fd);

	assert_int_equal(ap_open_under(t->root, "nope.cu", &c), AP_CONFINED_MISSING);
	assert_int_equal(c.fd, -1);
	/* A path through a file is missing too (ENOTDIR). */
	assert_int_equal(ap_open_under(t->root, "dir/a.cu/b", &c), AP_CONFINED_MISSING);

	tt_link(t->base, "../outside.txt", "root/escape.cu");
	assert_int_equal(ap_open_under(t->root, "escape.cu", &c), AP_CONFINED_OUTSIDE);
	want = in(t, "outside.txt");
	assert_string_equal(c.target, want);
	free(c.target);
	assert_int_equal(ap_open_under(t->root, "up/outside.txt", &c), AP_CONFINED_OUTSIDE);
	assert_string_equal(c.target, want);
	free(c.target);
	free(want);

	assert_int_equal(ap_open_under(t->root, "dir", &c), AP_CONFINED_FOLDER);
	assert_int_equal(c.fd, -1);
	/* A FIFO neither blocks nor counts as a file. */
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(ap_open_under(t->root, "pipe", &c), AP_CONFINED_NOT_FILE);
	assert_int_equal(c.fd, -1);
	free(fifo);
}

static void test_open_errno(void **state)
{
	struct tree *t = *state;
	ap_confined c;

	tt_link(t->base, "loop", "root/loop");
	assert_int_equal(ap_open_under(t->root, "loop", &c), AP_CONFINED_ERRNO);
	assert_int_equal(c.err, ELOOP);
	assert_int_equal(c.fd, -1);
}

/* A listing's text, or the kind it failed with as "!<kind>". */
static char *listed(ap_under *u, const char *rel)
{
	char *text;
	size_t len;
	int err;
	ap_confined_kind kind = ap_under_list(u, rel, &text, &len, &err);

	if (kind != AP_CONFINED_FOLDER)
		return ap_xasprintf("!%d", (int)kind);
	assert_int_equal(strlen(text), len);
	return text;
}

static void assert_under_file(ap_under *u, const char *rel, off_t size)
{
	ap_confined c;

	assert_int_equal(ap_under_open(u, rel, &c), AP_CONFINED_FILE);
	assert_int_equal(c.st.st_size, size);
	close(c.fd);
}

/* Through a reader's kept folders, whatever their number, a path opens as
 * ap_open_under opens it, the second time (from kept folders) too. */
static void test_under(void **state)
{
	static const size_t keeps[] = {0, 1, 2, 32};
	static const char *const listings[][2] = {
		{"dir/", "a.cu\nsub/\n"}, {"dir/", "a.cu\nsub/\n"}, {"./", "d/\ndir/\n"},
		{"alias/", "!4"},           {"none/", "!1"},
	};
	struct tree *t = *state;
	char *deep = ap_xstrdup(""), *want;
	ap_confined c;

	tt_mkdir(t->base, "root/dir/sub");
	tt_put(t->base, "root/dir/sub/b.py", "bb", 2);
	tt_link(t->base, "dir", "root/alias");
	tt_link(t->base, "../../outside.txt", "root/dir/escape.cu");
	/* Deeper than the folders a reader looks up by path. */
	for (int i = 0; i < 700; i++) {
		char *next = ap_xasprintf("%sd/", deep);
		free(deep);
		deep = next;
		want = ap_xasprintf("root/%s", deep);
		tt_mkdir(t->base, want);
		free(want);
	}
	want = ap_xasprintf("root/%sf", deep);
	tt_put(t->base, want, "f", 1);
	free(want);
	for (size_t k = 0; k < sizeof keeps / sizeof keeps[0]; k++) {
		ap_under *u = ap_under_new(t->root, keeps[k]);

		assert_non_null(u);
		for (int round = 0; round < 2; round++) {
			char *text, *f = ap_xasprintf("%sf", deep);

			assert_under_file(u, "dir/a.cu", 3);
			assert_under_file(u, "dir/sub/b.py", 2);
			assert_under_file(u, "alias/sub/b.py", 2);
			assert_under_file(u, "./dir//sub/b.py", 2);
			assert_under_file(u, f, 1);
			free(f);
			assert_int_equal(ap_under_open(u, "dir/sub/none.py", &c), AP_CONFINED_MISSING);
			assert_int_equal(c.err, ENOENT);
			assert_int_equal(ap_under_open(u, "none/x.py", &c), AP_CONFINED_MISSING);
			assert_int_equal(ap_under_open(u, "dir/a.cu/b", &c), AP_CONFINED_MISSING);
			assert_int_equal(c.err, ENOTDIR);
			assert_int_equal(ap_under_open(u, "dir/escape.cu", &c), AP_CONFINED_OUTSIDE);
			free(c.target);
			assert_int_equal(ap_under_open(u, "dir/sub", &c), AP_CONFINED_FOLDER);
			/* "dir/" twice: a listing does not share its position with a kept
			 * folder. A symlinked folder is not listed (NOT_FILE). */
			for (size_t l = 0; l < sizeof listings / sizeof listings[0]; l++) {
				text = listed(u, listings[l][0]);
				assert_string_equal(text, listings[l][1]);
				free(text);
			}
		}
		ap_under_free(u);
	}
	free(deep);
}

/* A folder kept is the folder that was opened: moved away and replaced by a
 * symlink to outside the root, it is still the one read, never the link. */
static void test_under_kept(void **state)
{
	struct tree *t = *state;
	ap_under *u = ap_under_new(t->root, 8);
	char *from = in(t, "root/dir"), *to = in(t, "root/moved");
	ap_confined c;

	tt_mkdir(t->base, "elsewhere");
	tt_put(t->base, "elsewhere/a.cu", "outside", 7);
	assert_under_file(u, "dir/a.cu", 3);
	assert_int_equal(rename(from, to), 0);
	tt_link(t->base, "../elsewhere", "root/dir");
	assert_under_file(u, "dir/a.cu", 3);
	assert_int_equal(ap_open_under(t->root, "dir/a.cu", &c), AP_CONFINED_OUTSIDE);
	free(c.target);
	ap_under_free(u);
	free(from);
	free(to);
}

static void test_sha256_fd(void **state)
{
	struct tree *t = *state;
	/* The FIPS 180-2 vector: a million 'a', many 64 KiB chunks. */
	static const unsigned char million_a[AP_SHA256_SIZE] = {
		0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7,
		0xe2, 0x84, 0xd7, 0x3e, 0x67, 0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97,
		0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0,
	};
	static const unsigned char empty[AP_SHA256_SIZE] = {
		0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4,
		0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b,
		0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
	};
	char *big = ap_xmalloc(1000000);
	unsigned char digest[AP_SHA256_SIZE];
	size_t bytes = 0;
	ap_confined c;

	memset(big, 'a', 1000000);
	tt_put(t->base, "root/big.bin", big, 1000000);
	free(big);
	tt_put(t->base, "root/empty", "", 0);
	assert_int_equal(ap_open_under(t->root, "big.bin", &c), AP_CONFINED_FILE);
	assert_int_equal(ap_sha256_fd(c.fd, digest, &bytes), 0);
	close(c.fd);
	assert_int_equal(bytes, 1000000);
	assert_memory_equal(digest, million_a, AP_SHA256_SIZE);
	assert_int_equal(ap_open_under(t->root, "empty", &c), AP_CONFINED_FILE);
	assert_int_equal(ap_sha256_fd(c.fd, digest, NULL), 0);
	close(c.fd);
	assert_memory_equal(digest, empty, AP_SHA256_SIZE);
	/* A closed descriptor is an error, not an empty file. */
	assert_int_equal(ap_sha256_fd(c.fd, digest, &bytes), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_under),
		cmocka_unit_test_setup_teardown(test_open_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errno, setup, teardown),
		cmocka_unit_test_setup_teardown(test_under, setup, teardown),
		cmocka_unit_test_setup_teardown(test_under_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sha256_fd, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
