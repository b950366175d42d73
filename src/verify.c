#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ap-error.h"
#include "ap-util.h"
#include "confine.h"
#include "verify.h"

const char *ap_input_change_name(ap_input_change change)
{
	switch (change) {
	case AP_INPUT_CHANGED:
		return "changed";
	case AP_INPUT_VANISHED:
		return "vanished";
	case AP_INPUT_APPEARED:
		return "appeared";
	}
	return "?";
}

/* What is at an input's path now. */
typedef enum { NOW_ABSENT, NOW_OUTSIDE, NOW_NOT_FILE, NOW_FILE } now_kind;

typedef struct input_now {
	now_kind kind;
	unsigned char sha256[AP_SHA256_SIZE];
	off_t bytes;
} input_now;

/* Resolves the path first so that a symlink leading outside the root is
 * reported, never read. want_bytes >= 0 skips hashing a file whose size
 * already tells it changed. */
/* A folder's listing, hashed as the reader hashed it. */
static int look_at_listing(const char *name, const char *root, const char *rel, input_now *now)
{
	char *text;
	size_t len;
	int err;

	switch (ap_list_under(root, rel, &text, &len, &err)) {
	case AP_CONFINED_FOLDER:
		break;
	case AP_CONFINED_MISSING:
		now->kind = NOW_ABSENT;
		return AP_OK;
	case AP_CONFINED_ERRNO:
		if (err == EFBIG) {
			now->kind = NOW_NOT_FILE;
			return AP_OK;
		}
		ap_error_set("%s: input '%s': %s", name, rel, strerror(err));
		return AP_EIO;
	default:
		now->kind = NOW_NOT_FILE;
		return AP_OK;
	}
	ap_sha256_buf(text, len, now->sha256);
	free(text);
	now->kind = NOW_FILE;
	now->bytes = (off_t)len;
	return AP_OK;
}

static int look_at(const char *name, const char *root, const char *rel, long long want_bytes,
                   input_now *now)
{
	ap_confined c;
	int err = 0;

	if (rel[strlen(rel) - 1] == '/')
		return look_at_listing(name, root, rel, now);
	switch (ap_open_under(root, rel, &c)) {
	case AP_CONFINED_FILE:
		break;
	case AP_CONFINED_MISSING:
		now->kind = NOW_ABSENT;
		return AP_OK;
	case AP_CONFINED_OUTSIDE:
		free(c.target);
		now->kind = NOW_OUTSIDE;
		return AP_OK;
	case AP_CONFINED_FOLDER:
	case AP_CONFINED_NOT_FILE:
		now->kind = NOW_NOT_FILE;
		return AP_OK;
	case AP_CONFINED_ERRNO:
		ap_error_set("%s: input '%s': %s", name, rel, strerror(c.err));
		return AP_EIO;
	}
	now->kind = NOW_FILE;
	now->bytes = c.st.st_size;
	if (want_bytes < 0 || (off_t)want_bytes == c.st.st_size)
		err = ap_sha256_fd(c.fd, now->sha256, NULL);
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

static void add_stale(ap_verify_result *res, const char *path, ap_input_change change)
{
	ap_xgrow((void **)&res->stale, &res->stale_cap, res->nstale + 1, sizeof *res->stale);
	res->stale[res->nstale].path = path;
	res->stale[res->nstale].change = change;
	res->nstale++;
}

static int verify_input(const char *name, const char *root, const char *meta,
                        const json_t *input, size_t index,
                        ap_verify_result *res)
{
	const char *path = json_string_value(json_object_get(input, "path"));
	const char *sha = json_string_value(json_object_get(input, "sha256"));
	const json_t *bytes = json_object_get(input, "bytes");
	const char *refusal = ap_path_refusal(path);
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
	if (sha == NULL) {
		/* No bytes were read: the file was absent, or refused unread (a
		 * symlink leading out of the root, not a regular file). Only a file
		 * the reader would now read makes a difference. */
		if (now.kind == NOW_FILE)
			add_stale(res, path, AP_INPUT_APPEARED);
	} else if (now.kind == NOW_ABSENT) {
		add_stale(res, path, AP_INPUT_VANISHED);
	} else if (now.kind != NOW_FILE ||
	           (json_is_integer(bytes) && json_integer_value(bytes) != (json_int_t)now.bytes) ||
	           !same_digest(sha, now.sha256)) {
		add_stale(res, path, AP_INPUT_CHANGED);
	}
	return AP_OK;
}

/* The canonical path of a manifest's folder, or NULL with a message. */
static char *canonical_folder(const char *name, const char *what, const char *dir)
{
	struct stat st;
	char *real = realpath(dir, NULL);

	if (real == NULL || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		ap_error_set("%s: %s '%s': %s", name, what, dir,
		             real == NULL ? strerror(errno) : "not a folder");
		free(real);
		return NULL;
	}
	return real;
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
	root = canonical_folder(name, "aiter root", res->root);
	if (root == NULL)
		return AP_EINPUT;
	meta_root = canonical_folder(name, "aiter meta folder", meta != NULL ? meta : res->root);
	if (meta_root == NULL) {
		free(root);
		return AP_EINPUT;
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

	for (i = 0; i < res->nstale; i++)
		ap_buf_printf(&b, "%s%s %s", i > 0 ? ", " : "", res->stale[i].path,
		              ap_input_change_name(res->stale[i].change));
	return ap_buf_detach(&b);
}

void ap_verify_result_free(ap_verify_result *res)
{
	free(res->stale);
	res->stale = NULL;
	res->nstale = res->stale_cap = 0;
}
