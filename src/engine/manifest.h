/* SPDX-License-Identifier: MIT */
/* The capability manifest (schema aiter-probe.manifest/1): built from a scan,
 * written atomically, and printed as text for people. */
#ifndef AP_MANIFEST_H
#define AP_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "engine/evaluate.h"
#include "engine/reader.h"
#include "engine/rules.h"
#include "core/manifest-format.h"
#include "core/text.h"

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

/* python: the manifest's "python" (borrowed; ap_pytarget_json), NULL when
 * no answer depended on the interpreter. devices: a JSON array (borrowed,
 * may be empty). host: the node's name for "host" (1 to
 * AP_MANIFEST_HOST_MAX bytes); NULL: this machine's host name, null when it
 * has none. */
json_t *ap_manifest_build(const ap_scan *scan, const ap_reader *r, const ap_aiter_info *aiter,
                          const json_t *python, const json_t *devices, const char *host);

/* m as the manifest's text, a newline after it, appended to out: AP_OK; or
 * AP_ELIMIT (out freed) with the message set when it would pass
 * AP_MANIFEST_MAX_BYTES, the most its readers load: "the manifest would be
 * 70 MiB, more than the 64 MiB its readers accept", never holding more than
 * that. The rules' match budgets (engine/match.h) keep a scan's well under;
 * this is the last guard, before writing to a file or stdout. */
int ap_manifest_dump(const json_t *m, ap_buf *out);

/* The largest SOURCE_DATE_EPOCH: 9999-12-31T23:59:59Z. */
#define AP_SOURCE_DATE_MAX 253402300799ULL

/* Reads a SOURCE_DATE_EPOCH value (text may be NULL): 0 when NULL or empty
 * (not set; *t untouched), 1 with *t set for a whole number of seconds from
 * 0 to AP_SOURCE_DATE_MAX written in digits only, -1 for anything else. */
int ap_manifest_source_date(const char *text, time_t *t);

/* Writes m to path through a temporary file in the same folder and a
 * rename, so readers see the old manifest or the new one, never a part.
 * Only a regular file may stand at path: a symlink, folder, device, FIFO or
 * socket is refused (AP_EINPUT) and left as it is. The temporary file has
 * the manifest's mode from the start (the replaced file's, else 0666 less
 * the umask) and is removed when SIGINT, SIGTERM or SIGHUP ends the write. */
int ap_manifest_write(const json_t *m, const char *path);

/* A copy of j for text output: every string and object key passed through
 * ap_terminal_text. Values without controls are shared, not copied. */
json_t *ap_json_for_terminal(const json_t *j);

/* A table for people: capabilities, then rules, fitted to width columns
 * (src/engine/report/manifest-text.c; the layout is in doc/usage.md, "Text output"). color:
 * ANSI colours. Every value from the tree is escaped with ap_terminal_text. */
void ap_manifest_print_text(const json_t *m, FILE *to, bool color, int width);
/* The distinct tuples of captures (an array of {name: value} objects,
 * escaped for a terminal) grouped as that text prints a case table, one line
 * a group from column col. */
void ap_manifest_print_cases(FILE *to, const json_t *captures, int col, int width);

#endif
