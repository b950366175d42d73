/* SPDX-License-Identifier: MIT */
/* The one manifest loader every consumer shares (diff, verify, the C API):
 * it parses the JSON, refuses any schema but aiter-probe.manifest/1, and
 * checks the keys and types consumers rely on, so they can then trust them. */
#ifndef AP_MANIFEST_READ_H
#define AP_MANIFEST_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/mla-route.h"

/* Loads the manifest at path into *out (the caller's reference). Messages
 * name the path: "m.json:5:16: premature end of input near '\"'",
 * "m.json: schema 'aiter-probe.manifest/2' is newer than this reader
 * understands (aiter-probe.manifest/1)", "m.json: missing key 'aiter.root'".
 * AP_EIO when the file cannot be read, AP_EINPUT when it is no manifest v1,
 * AP_ENOMEM ("m.json: out of memory while parsing") when memory runs out. */
int ap_manifest_read_file(const char *path, json_t **out);

/* A capability's verdict in words (cap: an entry of "capabilities", or a
 * state holding its "supported" and "reason"): "supported"; "unknown" when it
 * is unsupported because nothing could decide it (its reason begins
 * AP_CAP_UNKNOWN_PREFIX: input absent or unreadable, or a rule `unknown`);
 * else "unsupported". */
const char *ap_manifest_cap_verdict(const json_t *cap);

/* The rows of plans.mla_heads in a manifest m that ap_manifest_read_file
 * loaded (or a scan built): how many; row i, NULL with the message past the
 * end; the first row for `heads`, NULL with the message when there is none.
 * The rows are m's, as it has them. */
size_t ap_manifest_mla_plan_count(const json_t *m);
const json_t *ap_manifest_mla_plan_at(const json_t *m, size_t i);
const json_t *ap_manifest_mla_plan_for(const json_t *m, int heads);

/* What such a row says. Its counts are in 1..AP_MLA_MAX_HEADS, launch_heads
 * at least heads, and its mode the one ap_mla_pad_mode gives for them: the
 * loader refused any other row. */
typedef struct ap_mla_plan_row {
	int heads;
	int launch_heads;
	ap_pad_mode mode;
	bool verified;
	const char *kernel; /* "aiter" or "reference" when verified; NULL in older manifests */
} ap_mla_plan_row;
void ap_manifest_mla_plan_read(const json_t *row, ap_mla_plan_row *out);

#endif
