/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <git2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/reader.h"
#include "engine/source-git.h"

/* As many as Linux follows before ELOOP. */
#define MAX_SYMLINK_HOPS 40
/* PATH_MAX: a longer symlink target is no path. */
#define SYMLINK_TARGET_MAX 4096

int ap_git_fail(const char *what)
{
	const git_error *e = git_error_last();

	ap_error_set("%s: %s", what, e && e->message ? e->message : "unknown libgit2 error");
	return AP_EIO;
}

/* The target of a symlink entry, as a string. */
static int read_link(char **out, git_repository *repo, const git_tree_entry *e)
{
	git_blob *blob;
	git_odb *odb;
	git_object_t type;
	size_t size;
	int rc;

	*out = NULL;
	/* A symlink's target is a path: a blob longer than any is not read. */
	if (git_repository_odb(&odb, repo) < 0)
		return ap_git_fail("reading a symlink");
	rc = git_odb_read_header(&size, &type, odb, git_tree_entry_id(e));
	git_odb_free(odb);
	if (rc < 0)
		return ap_git_fail("reading a symlink");
	if (size > SYMLINK_TARGET_MAX)
		return 0;
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(e)) < 0)
		return ap_git_fail("reading a symlink");
	*out = ap_xstrndup(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	return 0;
}

int ap_git_resolve(ap_git_found *out, git_repository *repo, const git_tree *root, const char *rel)
{
	git_tree **dirs = NULL; /* the folders walked into; root below them */
	size_t ndirs = 0, dirs_cap = 0, pos = 0;
	char *todo = ap_xstrdup(rel);
	unsigned hops = 0;
	int rc = 0;

	memset(out, 0, sizeof *out);
	for (;;) {
		const git_tree *cur = ndirs ? dirs[ndirs - 1] : root;
		const git_tree_entry *e;
		size_t len;
		char *name;

		pos += strspn(todo + pos, "/");
		if (todo[pos] == '\0') {
			out->kind = AP_GIT_FOLDER;
			git_oid_cpy(&out->oid, git_tree_id(cur));
			break;
		}
		len = strcspn(todo + pos, "/");
		name = todo + pos;
		pos += len;
		if (len == 1 && name[0] == '.')
			continue;
		if (len == 2 && name[0] == '.' && name[1] == '.') {
			if (ndirs == 0) {
				out->kind = AP_GIT_OUTSIDE;
				break;
			}
			git_tree_free(dirs[--ndirs]);
			continue;
		}
		name = ap_xstrndup(name, len);
		e = git_tree_entry_byname(cur, name);
		free(name);
		if (e == NULL) {
			out->kind = AP_GIT_MISSING;
			break;
		}
		switch (git_tree_entry_filemode(e)) {
		case GIT_FILEMODE_LINK: {
			char *target, *rest;

			if (++hops > MAX_SYMLINK_HOPS) {
				out->kind = AP_GIT_LOOP;
				goto done;
			}
			rc = read_link(&target, repo, e);
			if (rc < 0)
				goto done;
			if (target == NULL) {
				out->kind = AP_GIT_LOOP;
				goto done;
			}
			if (target[0] == '/') {
				free(target);
				out->kind = AP_GIT_OUTSIDE;
				goto done;
			}
			rest = ap_xasprintf("%s/%s", target, todo + pos);
			free(target);
			free(todo);
			todo = rest;
			pos = 0;
			continue;
		}
		case GIT_FILEMODE_TREE:
			ap_xgrow((void **)&dirs, &dirs_cap, ndirs + 1, sizeof *dirs);
			if (git_tree_lookup(&dirs[ndirs], repo, git_tree_entry_id(e)) < 0) {
				rc = ap_git_fail("reading a folder");
				goto done;
			}
			ndirs++;
			continue;
		case GIT_FILEMODE_COMMIT:
			pos += strspn(todo + pos, "/");
			out->kind = todo[pos] ? AP_GIT_IN_SUBMODULE : AP_GIT_SUBMODULE;
			git_oid_cpy(&out->oid, git_tree_entry_id(e));
			goto done;
		default:
			pos += strspn(todo + pos, "/");
			if (todo[pos]) {
				/* a file used as a folder */
				out->kind = AP_GIT_MISSING;
				goto done;
			}
			out->kind = AP_GIT_BLOB;
			git_oid_cpy(&out->oid, git_tree_entry_id(e));
			goto done;
		}
	}
done:
	while (ndirs)
		git_tree_free(dirs[--ndirs]);
	free(dirs);
	free(todo);
	return rc;
}

/* --- The git source ------------------------------------------------------ */

typedef struct git_source {
	git_repository *repo;
	git_tree *tree;
	ap_derived_cache *blobs; /* NULL, or blobs read by earlier readers */
} git_source;

/* A blob as read once, for the commits after. */
struct blob {
	char *data;
	size_t len;
};

static void blob_free(void *p)
{
	struct blob *b = p;

	free(b->data);
	free(b);
}

static ap_file_status read_blob_odb(git_source *src, const git_oid *oid, size_t max_bytes,
                                    char **data, size_t *len, char **reason);

/* Through the blob cache: a blob read for an earlier commit is copied. The
 * file is known by the blob's id, which git has already computed: its
 * sha256 would be a second digest of the same bytes. */
static ap_file_status read_blob(git_source *src, ap_file *file, const git_oid *oid,
                                size_t max_bytes, char **data, size_t *len, char **reason)
{
	unsigned char key[1 + GIT_OID_RAWSZ] = {'b'};
	struct blob *b;
	ap_file_status st;

	if (src->blobs == NULL)
		return read_blob_odb(src, oid, max_bytes, data, len, reason);
	memcpy(key + 1, oid->id, GIT_OID_RAWSZ);
	b = ap_derived_cache_get(src->blobs, key, sizeof key);
	if (b == NULL) {
		st = read_blob_odb(src, oid, max_bytes, data, len, reason);
		if (st != AP_FILE_OK)
			return st;
		b = ap_xcalloc(1, sizeof *b);
		b->data = ap_xmalloc(*len + 1);
		memcpy(b->data, *data, *len + 1);
		b->len = *len;
		ap_derived_cache_put(src->blobs, key, sizeof key, b, b->len + sizeof *b, blob_free);
	} else {
		*len = b->len;
		*data = ap_xmalloc(b->len + 1);
		memcpy(*data, b->data, b->len + 1);
	}
	memcpy(file->id, oid->id, GIT_OID_RAWSZ);
	file->identified = true;
	file->len = b->len;
	return AP_FILE_OK;
}

static ap_file_status read_blob_odb(git_source *src, const git_oid *oid, size_t max_bytes,
                                    char **data, size_t *len, char **reason)
{
	git_odb *odb;
	git_blob *blob;
	git_object_t type;
	size_t size;
	int rc;

	if (git_repository_odb(&odb, src->repo) < 0)
		goto fail;
	rc = git_odb_read_header(&size, &type, odb, oid);
	git_odb_free(odb);
	if (rc < 0)
		goto fail;
	if (size > max_bytes) {
		*reason = ap_xasprintf("larger than the %zu-byte cap (%zu bytes)", max_bytes, size);
		return AP_FILE_ERROR;
	}
	if (git_blob_lookup(&blob, src->repo, oid) < 0)
		goto fail;
	*len = (size_t)git_blob_rawsize(blob);
	*data = ap_xmalloc(*len + 1);
	memcpy(*data, git_blob_rawcontent(blob), *len);
	(*data)[*len] = '\0';
	git_blob_free(blob);
	return AP_FILE_OK;
fail:
	ap_git_fail("reading a blob");
	*reason = ap_xstrdup(ap_error_last());
	return AP_FILE_ERROR;
}

/* A folder's listing as ap_list_under writes it: files and folders only. */
static ap_file_status list_tree(git_source *src, const git_oid *oid, char **data, size_t *len,
                                char **reason)
{
	git_tree *tree;
	ap_buf out = AP_BUF_INIT;
	char **names;
	size_t n = 0, count;

	if (git_tree_lookup(&tree, src->repo, oid) < 0) {
		ap_git_fail("reading a folder");
		*reason = ap_xstrdup(ap_error_last());
		return AP_FILE_ERROR;
	}
	count = git_tree_entrycount(tree);
	if (count > AP_LISTING_MAX) {
		git_tree_free(tree);
		*reason = ap_xstrdup("more entries than a listing holds");
		return AP_FILE_ERROR;
	}
	names = ap_xcalloc(count ? count : 1, sizeof *names);
	for (size_t i = 0; i < count; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tree, i);
		git_filemode_t mode = git_tree_entry_filemode(e);

		if (mode == GIT_FILEMODE_BLOB || mode == GIT_FILEMODE_BLOB_EXECUTABLE)
			names[n++] = ap_xstrdup(git_tree_entry_name(e));
		else if (mode == GIT_FILEMODE_TREE)
			names[n++] = ap_xasprintf("%s/", git_tree_entry_name(e));
	}
	git_tree_free(tree);
	qsort(names, n, sizeof *names, ap_cmp_strs);
	for (size_t i = 0; i < n; i++) {
		ap_buf_printf(&out, "%s\n", names[i]);
		free(names[i]);
	}
	free(names);
	*len = out.len;
	*data = ap_buf_detach(&out);
	return AP_FILE_OK;
}

static ap_file_status git_source_load(void *ctx, ap_file *file, size_t max_bytes, char **data,
                                      size_t *len, char **reason)
{
	git_source *src = ctx;
	bool listing = file->path[strlen(file->path) - 1] == '/';
	ap_git_found f;

	if (ap_git_resolve(&f, src->repo, src->tree, file->path) < 0) {
		*reason = ap_xstrdup(ap_error_last());
		return AP_FILE_ERROR;
	}
	if (listing && f.kind == AP_GIT_FOLDER)
		return list_tree(src, &f.oid, data, len, reason);
	if (listing && f.kind == AP_GIT_MISSING) {
		*reason = ap_xstrdup("no such folder");
		return AP_FILE_MISSING;
	}
	if (listing) {
		*reason = ap_xstrdup("not a folder");
		return AP_FILE_ERROR;
	}
	switch (f.kind) {
	case AP_GIT_BLOB:
		return read_blob(src, file, &f.oid, max_bytes, data, len, reason);
	case AP_GIT_MISSING:
		*reason = ap_xstrdup("no such file");
		return AP_FILE_MISSING;
	case AP_GIT_FOLDER:
		*reason = ap_xstrdup("is a folder");
		break;
	case AP_GIT_SUBMODULE:
		*reason = ap_xstrdup("is a submodule");
		break;
	case AP_GIT_IN_SUBMODULE:
		*reason = ap_xstrdup("is inside a submodule");
		break;
	case AP_GIT_OUTSIDE:
		*reason = ap_xstrdup("symlink resolves outside the AITER root");
		break;
	case AP_GIT_LOOP:
		*reason = ap_xstrdup(strerror(ELOOP));
		break;
	}
	return AP_FILE_ERROR;
}

static void git_source_free(void *ctx)
{
	git_source *src = ctx;

	git_tree_free(src->tree);
	free(src);
}

const ap_source_ops ap_git_source_ops = {
	.load = git_source_load,
	.free = git_source_free,
};

int ap_git_source_new(void **ctx, git_repository *repo, const git_tree *tree)
{
	git_source *src = ap_xcalloc(1, sizeof *src);

	if (git_tree_dup(&src->tree, (git_tree *)tree) < 0) {
		free(src);
		return ap_git_fail("keeping a tree");
	}
	src->repo = repo;
	*ctx = src;
	return 0;
}

int ap_reader_new_git(ap_reader **out, git_repository *repo, const git_tree *tree,
                      const char *name, size_t max_bytes, ap_derived_cache *cache)
{
	void *ctx;
	int rc = ap_git_source_new(&ctx, repo, tree);

	if (rc < 0)
		return rc;
	((git_source *)ctx)->blobs = cache;
	rc = ap_reader_new(out, &ap_git_source_ops, ctx, name, max_bytes);
	if (rc == 0 && cache != NULL)
		ap_reader_share(*out, cache);
	return rc;
}
