/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <ftw.h>
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
#include "tmptree.h"

char *tt_mkdtemp(const char *prefix)
{
	const char *tmp = getenv("TMPDIR");
	char *tmpl = ap_xasprintf("%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
	char *real;

	assert_non_null(mkdtemp(tmpl));
	real = realpath(tmpl, NULL);
	free(tmpl);
	assert_non_null(real);
	return real;
}

void tt_put(const char *base, const char *rel, const void *data, size_t len)
{
	char *path = ap_xasprintf("%s/%s", base, rel);
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	free(path);
}

void tt_put_s(const char *base, const char *rel, const char *text)
{
	tt_put(base, rel, text, strlen(text));
}

void tt_mkdir(const char *base, const char *rel)
{
	char *path = ap_xasprintf("%s/%s", base, rel);
	assert_int_equal(mkdir(path, 0755), 0);
	free(path);
}

void tt_link(const char *base, const char *target, const char *rel)
{
	char *path = ap_xasprintf("%s/%s", base, rel);
	assert_int_equal(symlink(target, path), 0);
	free(path);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	/* A test may have taken its own permissions away. */
	chmod(path, 0700);
	return remove(path);
}

void tt_remove(const char *base)
{
	nftw(base, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
