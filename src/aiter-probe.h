/* SPDX-License-Identifier: MIT */
/* aiter-probe: read capability manifests from C and C++.
 *
 *	aiter_probe_manifest *m;
 *	if (aiter_probe_manifest_open(&m, "manifest.json", AITER_PROBE_VERIFY_FRESH) != 0) {
 *		fprintf(stderr, "%s\n", aiter_probe_last_error());
 *		return -1;
 *	}
 *	if (aiter_probe_manifest_supported(m, "mla.decode.native_h24") == 1)
 *		...
 *	aiter_probe_manifest_free(m);
 *
 * Strings returned by the accessors belong to the manifest and stay valid
 * until aiter_probe_manifest_free. A manifest may be read from several
 * threads at once; errors are kept per thread. Link with
 * `pkg-config --libs aiter-probe`. */
#ifndef AITER_PROBE_H
#define AITER_PROBE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH". */
const char *aiter_probe_version(void);

/* A loaded manifest (schema aiter-probe.manifest/1). */
typedef struct aiter_probe_manifest aiter_probe_manifest;

/* aiter_probe_manifest_open flags. */
#define AITER_PROBE_VERIFY_FRESH 0x1u /* re-hash the recorded inputs; refuse a stale manifest */

/* aiter_probe_manifest_open results. */
#define AITER_PROBE_OK 0
#define AITER_PROBE_ERROR (-1) /* unreadable, not JSON, other schema, missing keys, bad flags */
#define AITER_PROBE_STALE (-2) /* VERIFY_FRESH: an input changed, vanished or appeared */

/* Loads the manifest at path into *out. Returns AITER_PROBE_OK, or another
 * result with *out NULL and aiter_probe_last_error() saying why, e.g.
 * "m.json: schema 'aiter-probe.manifest/2' is newer than this reader
 * understands (aiter-probe.manifest/1)" or
 * "m.json: stale: csrc/kernels/mla/reduce.cu changed". */
int aiter_probe_manifest_open(aiter_probe_manifest **out, const char *path, unsigned flags);

/* 1 supported, 0 not supported, -1 no such capability in the manifest. */
int aiter_probe_manifest_supported(const aiter_probe_manifest *m, const char *capability);

/* "matched", "unmatched", "missing" or "error"; NULL for an unknown rule. */
const char *aiter_probe_manifest_rule_status(const aiter_probe_manifest *m, const char *rule_id);

/* How many matches the rule recorded (0 for an unknown rule). */
size_t aiter_probe_manifest_rule_matches(const aiter_probe_manifest *m, const char *rule_id);

/* The named capture of the rule's match number `match` (from 0), or NULL when
 * the rule, the match or the capture does not exist. */
const char *aiter_probe_manifest_rule_capture(const aiter_probe_manifest *m, const char *rule_id,
                                              size_t match, const char *name);

/* The MLA head routing for `heads` query heads (plans.mla_heads): the head
 * count to launch with, the padding mode ("none", "repeat-interleave",
 * "tile-slice") and whether a launch on the scanning node proved it (1/0).
 * Any output pointer may be NULL. Returns 0, or -1 when the plan has no row
 * for heads. */
int aiter_probe_manifest_mla_heads(const aiter_probe_manifest *m, int heads, int *launch_heads,
                                   const char **mode, int *verified);

void aiter_probe_manifest_free(aiter_probe_manifest *m);

/* Why the last failing call of this thread failed ("no error" when none). */
const char *aiter_probe_last_error(void);

/* --- The manifest saved for one AITER tree (aiter-probe scan --save) ------ */

/* aiter_probe_manifest_for_root: no manifest where one was looked for. */
#define AITER_PROBE_MISSING (-3)

/* *path (free() it) = where `aiter-probe scan --save` writes the manifest of
 * the AITER tree at aiter_root (the folder holding the aiter package, or a
 * checkout): aiter-<16 hex digits of the sha256 of its canonical path>.json
 * in $AITER_PROBE_MANIFEST_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/aiter-probe.
 * Returns 0, or -1 with *path NULL and aiter_probe_last_error() saying why. */
int aiter_probe_manifest_default_path(const char *aiter_root, char **path);

/* Loads the manifest for the AITER tree the caller will load, at aiter_root:
 * $AITER_PROBE_MANIFEST when set, else the one `aiter-probe scan --save`
 * wrote for that tree. It is accepted only when its aiter.root is that tree
 * and its inputs are fresh (AITER_PROBE_VERIFY_FRESH). Returns AITER_PROBE_OK,
 * or, with *out NULL and the reason in aiter_probe_last_error() (and in
 * *reason, when reason is not NULL, valid until this thread's next failing
 * call): AITER_PROBE_MISSING "no manifest at P: run 'aiter-probe scan --save'",
 * AITER_PROBE_STALE "P is stale: aiter/mla.py changed: run 'aiter-probe scan
 * --save'", AITER_PROBE_ERROR "P was made for /a/site-packages, not
 * /b/site-packages", or the manifest's own error. */
int aiter_probe_manifest_for_root(aiter_probe_manifest **out, const char *aiter_root,
                                  const char **reason);

#ifdef __cplusplus
}
#endif

#endif
