/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/confine.h"
#include "core/verify.h"

const char *ap_input_change_name(ap_input_change change)
{
	switch (change) {
	case AP_INPUT_CHANGED:
		return "changed";
	case AP_INPUT_VANISHED:
		return "vanished";
	case AP_INPUT_APPEARED:
		return "appeared";
	case AP_INPUT_UNVERIFIABLE:
		return "unverifiable";
	}
	return "?";
}

/* What is at an input's path now. */
typedef enum { NOW_ABSENT, NOW_OTHER, NOW_FILE } now_kind;

typedef struct input_now {
	now_kind kind;
	const char *seen; /* the class of what is there (ap_seen_of) */
	unsigned char sha256[AP_SHA256_SIZE];
	off_t bytes;
	bool hashed;
} input_now;

/* Memory running out is no class of what is at a path: it fails the check. */
static int no_memory(const char *name, const char *rel)
{
	ap_error_set("%s: input '%s': out of memory", name, rel);
	return AP_ENOMEM;
}

/* A folder's listing, hashed as the reader hashed it. */
static int look_at_listing(const char *name, const char *root, const char *rel, input_now *now)
{
	char *text;
	size_t len;
	int err;
	ap_confined_kind kind = ap_list_under(root, rel, &text, &len, &err);

	if (kind == AP_CONFINED_ERRNO && err == ENOMEM)
		return no_memory(name, rel);
	if (kind != AP_CONFINED_FOLDER) {
		now->kind = kind == AP_CONFINED_MISSING ? NOW_ABSENT : NOW_OTHER;
		now->seen = ap_seen_of(kind, err);
		return AP_OK;
	}
	ap_sha256_buf(text, len, now->sha256);
	free(text);
	now->kind = NOW_FILE;
	now->seen = "file";
	now->bytes = (off_t)len;
	now->hashed = true;
	return AP_OK;
}

/* Resolves the path first so that a symlink leading outside the root is
 * reported, never read; what cannot be read is classed as the reader
 * classes it, so that an unchanged unreadable input verifies fresh.
 * want_bytes >= 0 skips hashing a file whose size already tells it
 * changed. */
static int look_at(const char *name, const char *root, const char *rel, long long want_bytes,
                   input_now *now)
{
	ap_confined c;
	ap_confined_kind kind;
	int err = 0;

	memset(now, 0, sizeof *now);
	if (rel[strlen(rel) - 1] == '/')
		return look_at_listing(name, root, rel, now);
	kind = ap_open_under(root, rel, &c);
	if (kind == AP_CONFINED_ERRNO && c.err == ENOMEM)
		return no_memory(name, rel);
	now->seen = ap_seen_of(kind, c.err);
	if (kind == AP_CONFINED_OUTSIDE)
		free(c.target);
	if (kind != AP_CONFINED_FILE) {
		now->kind = kind == AP_CONFINED_MISSING ? NOW_ABSENT : NOW_OTHER;
		return AP_OK;
	}
	now->kind = NOW_FILE;
	now->bytes = c.st.st_size;
	if ((uintmax_t)c.st.st_size > AP_HASH_MAX_BYTES)
		now->seen = "over-hash-cap";
	else if (want_bytes < 0 || (off_t)want_bytes == c.st.st_size)
		err = ap_sha256_fd(c.fd, now->sha256, NULL);
	now->hashed = err == 0 && strcmp(now->seen, "file") == 0 &&
	              (want_bytes < 0 || (off_t)want_bytes == c.st.st_size);
	close(c.fd);
	if (err < 0) {
		ap_error_set("%s: input '%s': %s", name, rel, strerror(-err));
		return AP_EIO;
	}
	return AP_OK;
}

static bool same_digest(const char *hex, const unsigned char digest[AP_SHA256_SIZE])
{
	char now_hex[2 * AP_SHA256_SIZE + 1];

	ap_sha256_hex(digest, now_hex);
	return strcmp(hex, now_hex) == 0;
}

static int add_stale(ap_verify_result *res, const char *path, ap_input_change change)
{
	if (ap_grow((void **)&res->stale, &res->stale_cap, res->nstale + 1, sizeof *res->stale) < 0)
		return AP_ENOMEM;
	res->stale[res->nstale].path = path;
	res->stale[res->nstale].change = change;
	res->nstale++;
	return AP_OK;
}

static int verify_input(const char *name, const char *root, const char *meta,
                        const json_t *input, size_t index,
                        ap_verify_result *res)
{
	const char *path = json_string_value(json_object_get(input, "path"));
	const char *sha = json_string_value(json_object_get(input, "sha256"));
	const json_t *bytes = json_object_get(input, "bytes");
	const char *refusal = ap_path_refusal(path);
	const char *seen;
	input_now now;
	int rc;

	if (refusal != NULL) {
		ap_error_set("%s: inputs[%zu].path '%s' is refused: %s", name, index, path, refusal);
		return AP_EINPUT;
	}
	rc = look_at(name, ap_path_in_meta(path) ? meta : root, path,
	             sha != NULL && json_is_integer(bytes) ? json_integer_value(bytes) : -1, &now);
	if (rc < 0)
		return rc;
	seen = json_string_value(json_object_get(input, "seen"));
	if (sha == NULL && seen != NULL && strcmp(seen, "over-hash-cap") == 0) {
		/* Never hashed: nothing can show it unchanged. */
		rc = add_stale(res, path, AP_INPUT_UNVERIFIABLE);
	} else if (sha == NULL && seen != NULL) {
		/* What the scan could not read must still be what it was. */
		if (now.kind == NOW_FILE && strcmp(now.seen, "file") == 0)
			rc = add_stale(res, path, AP_INPUT_APPEARED);
		else if (strcmp(now.seen, seen) != 0)
			rc = add_stale(res, path, AP_INPUT_CHANGED);
	} else if (sha == NULL) {
		/* A manifest of an earlier version: no bytes were read (absent, or
		 * refused unread), and only a file the reader would now read makes
		 * a difference. */
		if (now.kind == NOW_FILE)
			rc = add_stale(res, path, AP_INPUT_APPEARED);
	} else if (now.kind == NOW_ABSENT) {
		rc = add_stale(res, path, AP_INPUT_VANISHED);
	} else if (now.kind != NOW_FILE || strcmp(now.seen, "file") != 0 ||
	           (json_is_integer(bytes) && json_integer_value(bytes) != (json_int_t)now.bytes) ||
	           !now.hashed || !same_digest(sha, now.sha256)) {
		rc = add_stale(res, path, AP_INPUT_CHANGED);
	}
	return rc < 0 ? no_memory(name, path) : AP_OK;
}

/* *real = the canonical path of a manifest's folder; AP_OK, or AP_EINPUT or
 * AP_ENOMEM with a message. */
static int canonical_folder(const char *name, const char *what, const char *dir, char **real)
{
	int err;

	if ((*real = ap_real_folder(dir)) != NULL)
		return AP_OK;
	err = errno;
	if (err == ENOMEM) {
		ap_error_set("%s: %s '%s': out of memory", name, what, dir);
		return AP_ENOMEM;
	}
	ap_error_set("%s: %s '%s': %s", name, what, dir,
	             err == ENOTDIR ? "not a folder" : strerror(err));
	return AP_EINPUT;
}

int ap_verify_manifest(const json_t *m, const char *name, ap_verify_result *res)
{
	const json_t *aiter = json_object_get(m, "aiter");
	const json_t *inputs = json_object_get(m, "inputs");
	const json_t *input;
	const char *meta = json_string_value(json_object_get(aiter, "meta"));
	char *root, *meta_root;
	size_t i;
	int rc = AP_OK;

	res->root = json_string_value(json_object_get(aiter, "root"));
	res->ninputs = json_array_size(inputs);
	if ((rc = canonical_folder(name, "aiter root", res->root, &root)) < 0)
		return rc;
	rc = canonical_folder(name, "aiter meta folder", meta != NULL ? meta : res->root,
	                      &meta_root);
	if (rc < 0) {
		free(root);
		return rc;
	}
	json_array_foreach(inputs, i, input) {
		rc = verify_input(name, root, meta_root, input, i, res);
		if (rc < 0)
			break;
	}
	free(root);
	free(meta_root);
	return rc;
}

char *ap_verify_describe(const ap_verify_result *res)
{
	ap_buf b = AP_BUF_INIT;
	size_t i;

	for (i = 0; i < res->nstale; i++) {
		if (ap_buf_try_printf(&b, "%s%s %s", i > 0 ? ", " : "", res->stale[i].path,
		                      ap_input_change_name(res->stale[i].change)) < 0) {
			ap_buf_free(&b);
			return NULL;
		}
	}
	return ap_buf_try_detach(&b);
}

void ap_verify_result_free(ap_verify_result *res)
{
	free(res->stale);
	res->stale = NULL;
	res->nstale = res->stale_cap = 0;
}
