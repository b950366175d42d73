/* The capability manifest (schema aiter-probe.manifest/1): built from a scan,
 * written atomically, and printed as text for people. */
#ifndef AP_MANIFEST_H
#define AP_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine.h"
#include "reader.h"
#include "rules.h"

#define AP_MANIFEST_SCHEMA "aiter-probe.manifest/1"
/* How the manifest, and every JSON report on stdout, is written. */
#define AP_MANIFEST_JSON_FLAGS (JSON_INDENT(2) | JSON_ENSURE_ASCII)

typedef struct ap_aiter_info {
	const char *root;       /* absolute */
	const char *meta;       /* absolute: where csrc/ and hsa/ are read */
	const char *version;    /* NULL when the tree does not tell */
	const char *git_commit; /* NULL when the root is not a git work tree */
} ap_aiter_info;

/* A JSON string of s, or null when s is NULL. JSON holds only Unicode text,
 * and a source line, a capture or a commit subject need not be UTF-8: each
 * byte that is not part of valid UTF-8 becomes U+FFFD, so that the value is
 * kept instead of being dropped from the document. */
json_t *ap_json_text(const char *s);

/* devices: a JSON array (borrowed, may be empty). */
json_t *ap_manifest_build(const ap_scan *scan, const ap_reader *r,
                          const ap_aiter_info *aiter, const json_t *devices);

/* The MLA head routing table implied by a scan's capabilities. */
json_t *ap_manifest_mla_plans(const ap_scan *scan);

/* Writes m to path through a temporary file in the same folder and a
 * rename, so readers see the old manifest or the new one, never a part. */
int ap_manifest_write(const json_t *m, const char *path);

/* A table for people: capabilities, then rules. color: ANSI colours. */
void ap_manifest_print_text(const json_t *m, FILE *to, bool color);

#endif
