/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <git2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/evaluate.h"
#include "engine/report/history.h"
#include "engine/manifest.h"

/* As many as Linux follows before ELOOP. */
#define MAX_SYMLINK_HOPS 40
/* PATH_MAX: a longer symlink target is no path. */
#define SYMLINK_TARGET_MAX 4096

/* Where a path leads in a tree. Together with the object id this decides
 * everything a rule can see of the path, so it keys the verdict cache. */
typedef enum {
	FOUND_MISSING,
	FOUND_BLOB,
	FOUND_FOLDER,
	FOUND_SUBMODULE,
	FOUND_IN_SUBMODULE,
	FOUND_OUTSIDE,
	FOUND_LOOP,
} found_kind;

typedef struct found {
	found_kind kind;
	git_oid oid; /* the blob, folder or submodule commit; zero otherwise */
} found;

static int git_fail(const char *what)
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

	/* A symlink's target is a path: a blob longer than any is not read. */
	if (git_repository_odb(&odb, repo) < 0)
		return git_fail("reading a symlink");
	rc = git_odb_read_header(&size, &type, odb, git_tree_entry_id(e));
	git_odb_free(odb);
	if (rc < 0)
		return git_fail("reading a symlink");
	if (size > SYMLINK_TARGET_MAX) {
		*out = NULL;
		return 0;
	}
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(e)) < 0)
		return git_fail("reading a symlink");
	*out = ap_xstrndup(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	return 0;
}

/* Follows rel from root the way the file system follows a path, symlinks
 * included (relative to the folder holding them), but never out of root. */
static int resolve(found *out, git_repository *repo, const git_tree *root, const char *rel)
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
			out->kind = FOUND_FOLDER;
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
				out->kind = FOUND_OUTSIDE;
				break;
			}
			git_tree_free(dirs[--ndirs]);
			continue;
		}
		name = ap_xstrndup(name, len);
		e = git_tree_entry_byname(cur, name);
		free(name);
		if (e == NULL) {
			out->kind = FOUND_MISSING;
			break;
		}
		switch (git_tree_entry_filemode(e)) {
		case GIT_FILEMODE_LINK: {
			char *target, *rest;

			if (++hops > MAX_SYMLINK_HOPS) {
				out->kind = FOUND_LOOP;
				goto done;
			}
			rc = read_link(&target, repo, e);
			if (rc < 0)
				goto done;
			if (target == NULL) {
				out->kind = FOUND_LOOP;
				goto done;
			}
			if (target[0] == '/') {
				free(target);
				out->kind = FOUND_OUTSIDE;
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
				rc = git_fail("reading a folder");
				goto done;
			}
			ndirs++;
			continue;
		case GIT_FILEMODE_COMMIT:
			pos += strspn(todo + pos, "/");
			out->kind = todo[pos] ? FOUND_IN_SUBMODULE : FOUND_SUBMODULE;
			git_oid_cpy(&out->oid, git_tree_entry_id(e));
			goto done;
		default:
			pos += strspn(todo + pos, "/");
			if (todo[pos]) {
				/* a file used as a folder */
				out->kind = FOUND_MISSING;
				goto done;
			}
			out->kind = FOUND_BLOB;
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

/* A blob as read once: its bytes and digest, for the commits after. */
struct blob {
	char *data;
	size_t len;
	unsigned char sha256[AP_SHA256_SIZE];
};

static void blob_free(void *p)
{
	struct blob *b = p;

	free(b->data);
	free(b);
}

static ap_file_status read_blob_odb(git_source *src, const git_oid *oid, size_t max_bytes,
                                    char **data, size_t *len, char **reason);

/* Through the blob cache: a blob read for an earlier commit is copied, its
 * digest with it. */
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
		ap_sha256_buf(*data, *len, b->sha256);
		ap_derived_cache_put(src->blobs, key, sizeof key, b, blob_free);
	} else {
		*len = b->len;
		*data = ap_xmalloc(b->len + 1);
		memcpy(*data, b->data, b->len + 1);
	}
	memcpy(file->sha256, b->sha256, sizeof b->sha256);
	file->hashed = true;
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
	git_fail("reading a blob");
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
		git_fail("reading a folder");
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
	found f;

	if (resolve(&f, src->repo, src->tree, file->path) < 0) {
		*reason = ap_xstrdup(ap_error_last());
		return AP_FILE_ERROR;
	}
	if (listing && f.kind == FOUND_FOLDER)
		return list_tree(src, &f.oid, data, len, reason);
	if (listing && f.kind == FOUND_MISSING) {
		*reason = ap_xstrdup("no such folder");
		return AP_FILE_MISSING;
	}
	if (listing) {
		*reason = ap_xstrdup("not a folder");
		return AP_FILE_ERROR;
	}
	switch (f.kind) {
	case FOUND_BLOB:
		return read_blob(src, file, &f.oid, max_bytes, data, len, reason);
	case FOUND_MISSING:
		*reason = ap_xstrdup("no such file");
		return AP_FILE_MISSING;
	case FOUND_FOLDER:
		*reason = ap_xstrdup("is a folder");
		break;
	case FOUND_SUBMODULE:
		*reason = ap_xstrdup("is a submodule");
		break;
	case FOUND_IN_SUBMODULE:
		*reason = ap_xstrdup("is inside a submodule");
		break;
	case FOUND_OUTSIDE:
		*reason = ap_xstrdup("symlink resolves outside the AITER root");
		break;
	case FOUND_LOOP:
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
		return git_fail("keeping a tree");
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

/* --- The walk ----------------------------------------------------------- */

/* The verdicts of one set of file versions: a JSON array of rule states and
 * one of capability booleans, both in the rule set's order. */
typedef struct verdict {
	json_t *rules;
	json_t *caps;
	size_t set; /* the pathset of its evaluation */
} verdict;

/* The paths one evaluation looked up (read, or found absent), sorted: the
 * verdict depends on nothing else of the tree. */
typedef struct pathset {
	char **paths;
	size_t n;
} pathset;

typedef struct history {
	const ap_ruleset *rs;
	git_repository *repo;
	size_t max_bytes;
	pathset *sets;   /* every distinct pathset of an evaluation, newest last */
	size_t nsets;
	size_t sets_cap;
	ap_map *set_ids;  /* a pathset's paths, joined -> index into sets */
	ap_map *by_files; /* pathset index and what its paths resolve to -> verdict */
	ap_map *by_commit;/* commit id -> verdict */
	ap_derived_cache *cache; /* blobs and parsed modules of the last evaluation */
	verdict *verdicts;
	size_t nverdicts;
	size_t verdicts_cap;
} history;

/* The pathset of what reader looked up, added to the known ones if new. */
static size_t record_pathset(history *h, const ap_reader *reader)
{
	size_t n = ap_reader_count(reader);
	char **paths = ap_xcalloc(n ? n : 1, sizeof *paths);
	ap_buf joined = AP_BUF_INIT;
	size_t id;

	for (size_t i = 0; i < n; i++)
		paths[i] = ap_xstrdup(ap_reader_at(reader, i)->path);
	qsort(paths, n, sizeof *paths, ap_cmp_strs);
	for (size_t i = 0; i < n; i++)
		ap_buf_append(&joined, paths[i], strlen(paths[i]) + 1);
	id = ap_map_get(h->set_ids, joined.data ? joined.data : "", joined.len);
	if (id != AP_MAP_ABSENT) {
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
	} else {
		id = h->nsets;
		ap_xgrow((void **)&h->sets, &h->sets_cap, h->nsets + 1, sizeof *h->sets);
		h->sets[h->nsets++] = (pathset){paths, n};
		ap_xok(ap_map_put(h->set_ids, joined.data ? joined.data : "", joined.len, id));
	}
	ap_buf_free(&joined);
	return id;
}

/* The key of pathset set in tree: its index, then where each path leads. */
static int files_key(history *h, git_tree *tree, size_t set, ap_buf *key)
{
	const pathset *ps = &h->sets[set];

	key->len = 0;
	ap_buf_append(key, &set, sizeof set);
	for (size_t i = 0; i < ps->n; i++) {
		found f;
		unsigned char kind;
		int rc = resolve(&f, h->repo, tree, ps->paths[i]);

		if (rc < 0)
			return rc;
		kind = (unsigned char)f.kind;
		ap_buf_append(key, &kind, 1);
		ap_buf_append(key, f.oid.id, GIT_OID_RAWSZ);
	}
	return 0;
}

/* A rule's state as history compares it: the status and the distinct
 * tuples of named captures of the matches that have any, in the order first
 * matched (a case the source lists twice is one case, as in diff; line
 * numbers move with every edit, so they are not part of it). */
static json_t *rule_state(const ap_rule_result *res)
{
	json_t *captures = json_array();
	ap_map *seen = ap_xnonnull(ap_map_new());
	ap_buf key = AP_BUF_INIT;
	size_t i, j;

	for (i = 0; i < res->matches.n; i++) {
		const ap_match *m = &res->matches.v[i];
		json_t *one;

		if (m->ncaps == 0)
			continue;
		key.len = 0;
		for (j = 0; j < m->ncaps; j++) {
			ap_buf_append(&key, m->caps[j].name, strlen(m->caps[j].name) + 1);
			ap_buf_append(&key, m->caps[j].value, strlen(m->caps[j].value) + 1);
		}
		if (ap_map_get(seen, key.data, key.len) != AP_MAP_ABSENT)
			continue;
		ap_xok(ap_map_put(seen, key.data, key.len, i));
		one = json_object();
		for (j = 0; j < m->ncaps; j++)
			json_object_set_new(one, m->caps[j].name, ap_json_text(m->caps[j].value));
		json_array_append_new(captures, one);
	}
	ap_buf_free(&key);
	ap_map_free(seen);
	return json_pack("{s:s, s:o}", "status", ap_rule_status_name(res->status), "captures",
	                 captures);
}

/* Whether two rule states are the same: the status, and the captures as
 * sets (each state's tuples are distinct, so equal counts and one side
 * within the other is equality; the order found is no change). */
static bool same_rule_state(const json_t *a, const json_t *b)
{
	const json_t *ca = json_object_get(a, "captures"), *cb = json_object_get(b, "captures");
	const json_t *one;
	size_t i, j;

	if (!json_equal(json_object_get(a, "status"), json_object_get(b, "status")) ||
	    json_array_size(ca) != json_array_size(cb))
		return false;
	if (json_equal(ca, cb))
		return true;
	json_array_foreach(ca, i, one) {
		for (j = 0; j < json_array_size(cb); j++)
			if (json_equal(one, json_array_get(cb, j)))
				break;
		if (j == json_array_size(cb))
			return false;
	}
	return true;
}

static int evaluate(history *h, git_tree *tree, const git_oid *commit, verdict *out, size_t *set)
{
	char hex[GIT_OID_HEXSZ + 1];
	ap_reader *reader;
	ap_scan *scan;
	size_t i;
	int rc;

	git_oid_tostr(hex, sizeof hex, commit);
	rc = ap_reader_new_git(&reader, h->repo, tree, hex, h->max_bytes, h->cache);
	if (rc < 0)
		return rc;
	rc = ap_scan_run(&scan, h->rs, reader, NULL); /* history never launches */
	if (rc < 0) {
		ap_reader_free(reader);
		ap_error_prefix("commit %s", hex);
		return rc;
	}
	out->rules = json_array();
	out->caps = json_array();
	for (i = 0; i < scan->nrules; i++)
		json_array_append_new(out->rules, rule_state(&scan->rules[i]));
	for (i = 0; i < scan->ncaps; i++)
		json_array_append_new(out->caps, json_boolean(scan->caps[i].supported));
	ap_scan_free(scan);
	*set = record_pathset(h, reader);
	ap_reader_free(reader);
	ap_derived_cache_sweep(h->cache);
	return 0;
}

/* The verdict of a commit: looked up by commit; else reused from an
 * evaluation whose every looked-up path leads to the same object here (of
 * the pathsets of the parent's verdict, hint, and of the last evaluation:
 * what the rules read depends on what the files say, so only a pathset seen
 * near this commit is worth resolving); else evaluated. */
static int verdict_of(history *h, git_commit *commit, size_t hint, size_t *out)
{
	const git_oid *id = git_commit_id(commit);
	size_t sets[2] = {AP_MAP_ABSENT, AP_MAP_ABSENT};
	ap_buf key = AP_BUF_INIT;
	git_tree *tree;
	int rc = 0;

	*out = ap_map_get(h->by_commit, id->id, GIT_OID_RAWSZ);
	if (*out != AP_MAP_ABSENT)
		return 0;
	if (git_commit_tree(&tree, commit) < 0)
		return git_fail("reading a commit's tree");
	if (hint != AP_MAP_ABSENT)
		sets[0] = h->verdicts[hint].set;
	if (h->nverdicts > 0 && h->verdicts[h->nverdicts - 1].set != sets[0])
		sets[1] = h->verdicts[h->nverdicts - 1].set;
	for (size_t k = 0; k < 2 && *out == AP_MAP_ABSENT; k++) {
		if (sets[k] == AP_MAP_ABSENT)
			continue;
		rc = files_key(h, tree, sets[k], &key);
		if (rc < 0)
			goto done;
		*out = ap_map_get(h->by_files, key.data, key.len);
	}
	if (*out == AP_MAP_ABSENT) {
		size_t set;

		ap_xgrow((void **)&h->verdicts, &h->verdicts_cap, h->nverdicts + 1,
		         sizeof *h->verdicts);
		rc = evaluate(h, tree, id, &h->verdicts[h->nverdicts], &set);
		if (rc < 0)
			goto done;
		h->verdicts[h->nverdicts].set = set;
		*out = h->nverdicts++;
		rc = files_key(h, tree, set, &key);
		if (rc < 0)
			goto done;
		ap_xok(ap_map_put(h->by_files, key.data, key.len, *out));
	}
	ap_xok(ap_map_put(h->by_commit, id->id, GIT_OID_RAWSZ, *out));
done:
	ap_buf_free(&key);
	git_tree_free(tree);
	return rc;
}

/* --- Revisions ---------------------------------------------------------- */

/* The commit rev names (an empty rev is HEAD, as in "A.."). */
/* Whether rev is a reference whose object cannot be read (a truncated or
 * missing pack): the repository is corrupt, which "unknown revision" would
 * hide. Sets the message when it is. A dangling symbolic ref (HEAD of an
 * empty repository) is no corruption. */
static bool corrupt_ref(git_repository *repo, const char *rev)
{
	git_reference *ref, *resolved;
	char hex[GIT_OID_HEXSZ + 1];
	bool corrupt = false;

	if (git_reference_dwim(&ref, repo, rev) < 0)
		return false;
	if (git_reference_resolve(&resolved, ref) == 0) {
		git_object *obj;
		const git_oid *id = git_reference_target(resolved);

		if (git_object_lookup(&obj, repo, id, GIT_OBJECT_ANY) == 0) {
			git_object_free(obj);
		} else {
			git_oid_tostr(hex, sizeof hex, id);
			corrupt = true;
			ap_error_set("the repository is corrupt: '%s' names %s, which cannot be read",
			             rev, hex);
		}
		git_reference_free(resolved);
	}
	git_reference_free(ref);
	return corrupt;
}

static int resolve_commit(git_oid *out, git_repository *repo, const char *rev)
{
	git_object *obj, *commit;
	int rc;

	/* Before revparse, whose failure on an unreadable object leaks. */
	if (corrupt_ref(repo, rev[0] ? rev : "HEAD"))
		return AP_EINPUT;
	rc = git_revparse_single(&obj, repo, rev[0] ? rev : "HEAD");
	if (rc == GIT_ENOTFOUND || rc == GIT_EAMBIGUOUS) {
		ap_error_set("%s revision '%s'", rc == GIT_EAMBIGUOUS ? "ambiguous" : "unknown",
		             rev[0] ? rev : "HEAD");
		return AP_EINPUT;
	}
	if (rc < 0) {
		const git_error *e = git_error_last();

		ap_error_set("invalid revision '%s': %s", rev,
		             e && e->message ? e->message : "unknown libgit2 error");
		return AP_EINPUT;
	}
	rc = git_object_peel(&commit, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc < 0) {
		ap_error_set("'%s' does not name a commit", rev);
		return AP_EINPUT;
	}
	git_oid_cpy(out, git_object_id(commit));
	git_object_free(commit);
	return 0;
}

/* Hides from walk the merge bases of a and b ("A...B"). */
static int hide_merge_bases(git_revwalk *walk, git_repository *repo, const git_oid *a,
                            const git_oid *b)
{
	git_oidarray bases = {NULL, 0};
	size_t i;
	int rc = git_merge_bases(&bases, repo, a, b);

	if (rc == GIT_ENOTFOUND) /* unrelated histories: nothing in common */
		return 0;
	if (rc < 0)
		return git_fail("finding the merge base");
	for (i = 0; rc == 0 && i < bases.count; i++)
		if (git_revwalk_hide(walk, &bases.ids[i]) < 0)
			rc = git_fail("walking");
	git_oidarray_dispose(&bases);
	return rc;
}

/* Pushes what range means onto walk, as git rev-list reads it: "A..B",
 * "A...B" (either side empty meaning HEAD) or one revision. */
static int push_range(git_revwalk *walk, git_repository *repo, const char *range)
{
	const char *dots = strstr(range, "..");
	bool symmetric = dots && dots[2] == '.';
	git_oid from, to;
	char *left;
	int rc;

	if (dots == NULL) {
		rc = resolve_commit(&to, repo, range);
		if (rc == 0 && git_revwalk_push(walk, &to) < 0)
			rc = git_fail("walking");
		return rc;
	}
	left = ap_xstrndup(range, (size_t)(dots - range));
	rc = resolve_commit(&from, repo, left);
	free(left);
	if (rc == 0)
		rc = resolve_commit(&to, repo, dots + (symmetric ? 3 : 2));
	if (rc < 0)
		return rc;
	if (git_revwalk_push(walk, &to) < 0 ||
	    (symmetric ? git_revwalk_push(walk, &from) : git_revwalk_hide(walk, &from)) < 0)
		return git_fail("walking");
	return symmetric ? hide_merge_bases(walk, repo, &from, &to) : 0;
}

static int list_commits(git_oid **out, size_t *n, git_repository *repo, const char *range)
{
	git_revwalk *walk;
	size_t cap = 0;
	git_oid id;
	int rc;

	*out = NULL;
	*n = 0;
	if (git_revwalk_new(&walk, repo) < 0)
		return git_fail("walking");
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME | GIT_SORT_REVERSE);
	rc = push_range(walk, repo, range);
	if (rc == 0) {
		while ((rc = git_revwalk_next(&id, walk)) == 0) {
			ap_xgrow((void **)out, &cap, *n + 1, sizeof **out);
			git_oid_cpy(&(*out)[(*n)++], &id);
		}
		rc = rc == GIT_ITEROVER ? 0 : git_fail("walking");
	}
	git_revwalk_free(walk);
	return rc;
}

/* --- The report ---------------------------------------------------------- */

/* The committer's time in ISO 8601, in the committer's own offset. */
static void format_date(char out[32], const git_time *when)
{
	time_t local = (time_t)(when->time + (git_time_t)when->offset * 60);
	int off = when->offset < 0 ? -when->offset : when->offset;
	struct tm tm;

	gmtime_r(&local, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + strlen(out), 32 - strlen(out), "%c%02d:%02d", when->offset < 0 ? '-' : '+',
	         off / 60, off % 60);
}

/* Sets commit, date and subject of c on obj. */
static void describe_commit(json_t *obj, git_commit *c)
{
	char hex[GIT_OID_HEXSZ + 1], date[32];
	const char *subject = git_commit_summary(c);

	git_oid_tostr(hex, sizeof hex, git_commit_id(c));
	format_date(date, &git_commit_committer(c)->when);
	json_object_set_new(obj, "commit", json_string(hex));
	json_object_set_new(obj, "date", json_string(date));
	json_object_set_new(obj, "subject", ap_json_text(subject ? subject : ""));
}

static json_t *initial_state(const history *h, const verdict *v, git_commit *c)
{
	json_t *obj = json_object(), *rules = json_object(), *caps = json_object();
	size_t i;

	describe_commit(obj, c);
	for (i = 0; i < h->rs->nrules; i++)
		json_object_set(rules, h->rs->rules[i].id, json_array_get(v->rules, i));
	for (i = 0; i < h->rs->nprobes; i++)
		json_object_set(caps, h->rs->probes[i].id, json_array_get(v->caps, i));
	json_object_set_new(obj, "rules", rules);
	json_object_set_new(obj, "capabilities", caps);
	return obj;
}

static void add_change(json_t *changes, const char *id, const char *kind, git_commit *c,
                       json_t *before, json_t *after)
{
	json_t *change = json_pack("{s:s, s:s}", "id", id, "kind", kind);

	describe_commit(change, c);
	json_object_set(change, "before", before);
	json_object_set(change, "after", after);
	json_array_append_new(changes, change);
}

static void compare(const history *h, json_t *changes, const verdict *before,
                    const verdict *after, git_commit *c)
{
	size_t i;

	for (i = 0; i < h->rs->nrules; i++) {
		json_t *b = json_array_get(before->rules, i), *a = json_array_get(after->rules, i);

		if (!same_rule_state(b, a))
			add_change(changes, h->rs->rules[i].id, "rule", c, b, a);
	}
	for (i = 0; i < h->rs->nprobes; i++) {
		json_t *b = json_array_get(before->caps, i), *a = json_array_get(after->caps, i);

		if (!json_equal(b, a))
			add_change(changes, h->rs->probes[i].id, "capability", c, b, a);
	}
}

/* Handles one commit of the walk: its verdict, compared with its first
 * parent's. The first commit also sets the initial state: its parent's when
 * it has one (so "A..B" reports what the commits after A changed), else its
 * own. */
static int visit(history *h, json_t *report, git_commit *c, bool first)
{
	git_commit *parent = NULL;
	size_t mine, theirs = AP_MAP_ABSENT;
	int rc = 0;

	if (git_commit_parentcount(c) > 0) {
		if (git_commit_parent(&parent, c, 0) < 0)
			return git_fail("reading a parent commit");
		rc = verdict_of(h, parent, AP_MAP_ABSENT, &theirs);
	}
	if (rc == 0)
		rc = verdict_of(h, c, theirs, &mine);
	if (rc == 0 && parent != NULL)
		compare(h, json_object_get(report, "changes"), &h->verdicts[theirs],
		        &h->verdicts[mine], c);
	if (rc == 0 && first)
		json_object_set_new(report, "initial",
		                    parent ? initial_state(h, &h->verdicts[theirs], parent)
		                           : initial_state(h, &h->verdicts[mine], c));
	git_commit_free(parent);
	return rc;
}

static int walk(history *h, json_t *report, const char *range, const ap_history_opts *opts)
{
	git_oid *ids;
	size_t n, i;
	int rc = list_commits(&ids, &n, h->repo, range);

	for (i = 0; rc == 0 && i < n; i++) {
		git_commit *c;

		if (git_commit_lookup(&c, h->repo, &ids[i]) < 0) {
			rc = git_fail("reading a commit");
			break;
		}
		rc = visit(h, report, c, i == 0);
		git_commit_free(c);
		if (opts && opts->progress)
			opts->progress(opts->progress_ctx, i + 1, n);
	}
	json_object_set_new(report, "commits", json_integer((json_int_t)n));
	free(ids);
	return rc;
}

static void history_free(history *h)
{
	size_t i;

	for (i = 0; i < h->nverdicts; i++) {
		json_decref(h->verdicts[i].rules);
		json_decref(h->verdicts[i].caps);
	}
	free(h->verdicts);
	for (i = 0; i < h->nsets; i++) {
		for (size_t j = 0; j < h->sets[i].n; j++)
			free(h->sets[i].paths[j]);
		free(h->sets[i].paths);
	}
	free(h->sets);
	ap_map_free(h->set_ids);
	ap_map_free(h->by_files);
	ap_map_free(h->by_commit);
	ap_derived_cache_free(h->cache);
	git_repository_free(h->repo);
}

/* The repository at git_dir itself (a bare one, or a work tree's top),
 * never one found by searching the folders above. */
static int open_repository(git_repository **out, const char *git_dir)
{
	struct stat st;

	/* A path that is not there is told as such, not as "not a repository". */
	if (stat(git_dir, &st) != 0) {
		ap_error_set("%s: %s", git_dir, strerror(errno));
		return AP_EINPUT;
	}
	if (git_repository_open_ext(out, git_dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		ap_error_set("not a git repository: %s", git_dir);
		return AP_EINPUT;
	}
	if (git_repository_is_shallow(*out) == 1) {
		/* libgit2 cannot walk past the missing parents */
		ap_error_set("%s is a shallow clone; history needs every commit "
		             "(git fetch --unshallow)", git_dir);
		git_repository_free(*out);
		*out = NULL;
		return AP_EINPUT;
	}
	return 0;
}

int ap_history_run(json_t **out, const ap_ruleset *rs, const char *git_dir, const char *range,
                   const ap_history_opts *opts)
{
	history h = {.rs = rs};
	json_t *report;
	int rc;

	*out = NULL;
	h.max_bytes = opts && opts->max_bytes ? opts->max_bytes : AP_READER_DEFAULT_MAX_BYTES;
	git_libgit2_init();
	rc = open_repository(&h.repo, git_dir);
	if (rc < 0) {
		git_libgit2_shutdown();
		return rc;
	}
	h.set_ids = ap_xnonnull(ap_map_new());
	h.by_files = ap_xnonnull(ap_map_new());
	h.by_commit = ap_xnonnull(ap_map_new());
	h.cache = ap_derived_cache_new();
	report = json_pack("{s:s, s:i, s:i, s:n, s:[]}", "range", range, "commits", 0,
	                   "evaluated", 0, "initial", "changes");
	rc = walk(&h, report, range, opts);
	json_object_set_new(report, "evaluated", json_integer((json_int_t)h.nverdicts));
	history_free(&h);
	git_libgit2_shutdown();
	if (rc < 0) {
		json_decref(report);
		return rc;
	}
	*out = report;
	return 0;
}
