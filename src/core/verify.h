/* SPDX-License-Identifier: MIT */
/* Freshness: does a manifest still describe the tree it was made from?
 * Every recorded input is re-read under the recorded aiter.root and hashed;
 * where the scan read nothing (sha256 null: absent, or refused unread), no
 * regular file inside the root may have appeared. */
#ifndef AP_VERIFY_H
#define AP_VERIFY_H

#include <jansson.h>
#include <stddef.h>

typedef enum {
	AP_INPUT_CHANGED,  /* other bytes, not a regular file, or now outside the root */
	AP_INPUT_VANISHED, /* was read, is gone */
	AP_INPUT_APPEARED, /* nothing was read, now a regular file inside the root is there */
	AP_INPUT_UNVERIFIABLE, /* over the hashing cap when scanned: never shown unchanged */
} ap_input_change;

typedef struct ap_stale_input {
	const char *path; /* borrowed from the manifest */
	ap_input_change change;
} ap_stale_input;

typedef struct ap_verify_result {
	const char *root;      /* borrowed from the manifest */
	size_t ninputs;
	ap_stale_input *stale; /* in the manifest's input order */
	size_t nstale;
	size_t stale_cap;
} ap_verify_result;

#define AP_VERIFY_RESULT_INIT {NULL, 0, NULL, 0, 0}

const char *ap_input_change_name(ap_input_change change);

/* Checks every input of m (loaded by ap_manifest_read_file; name is used in
 * messages). AP_OK with res->nstale == 0 when fresh, > 0 when stale. Fails
 * with AP_EINPUT when the root is not a folder or an input path is absolute
 * or has a ".." component (a tampered manifest must not make us read outside
 * the root), AP_EIO when a present input cannot be read, AP_ENOMEM when
 * memory runs out. */
int ap_verify_manifest(const json_t *m, const char *name, ap_verify_result *res);
/* "a/b.cu changed, c.cuh vanished" (caller frees); NULL with the error set
 * when memory runs out. */
char *ap_verify_describe(const ap_verify_result *res);
void ap_verify_result_free(ap_verify_result *res);

#endif
