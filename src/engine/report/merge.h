/* SPDX-License-Identifier: MIT */
/* A fleet's manifests merged into one summary: which nodes have each
 * capability, which lack it, and which AITER trees the nodes hold. Manifests
 * are added one at a time and not kept, so that thousands of nodes cost the
 * summary's size, not the manifests'. */
#ifndef AP_MERGE_H
#define AP_MERGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* The ranges a printed list of nodes keeps by default ("node-[0001-0042]"
 * is one), and the most --max-ranges may ask; the nodes past them are
 * counted, not named. The summary itself keeps every range. */
#define AP_MERGE_DEFAULT_RANGES 8
#define AP_MERGE_MAX_RANGES 100000

/* The distinct capability ids a merge holds: a manifest that would take it
 * past them is not merged (AP_MERGE_SKIPPED). The shipped packs define 15;
 * each id costs the summary about 2 KB, and a 44 MB manifest of nothing but
 * ids holds 400,000. */
#define AP_MERGE_MAX_CAPABILITIES 50000

typedef struct ap_merge ap_merge;

ap_merge *ap_merge_new(void);
void ap_merge_free(ap_merge *mg);

/* ap_merge_add_file's answer for a file not merged: one the reader refuses
 * (unreadable, no manifest, truncated) or with too many new capability ids
 * (AP_MERGE_MAX_CAPABILITIES), kept with the reader's message for
 * the report's "unreadable" (the message is also ap_error_last()). */
#define AP_MERGE_SKIPPED 1

/* Reads the manifest at path (ap_manifest_read_file) and adds its node: its
 * "host", else the file's name less ".json". AP_OK; AP_MERGE_SKIPPED; a node
 * added before refuses the manifest, AP_EINPUT: "b.json: node 'n1' is also
 * the node of a.json" (a summary that counted it twice would be wrong);
 * AP_ENOMEM from the reader. */
int ap_merge_add_file(ap_merge *mg, const char *path);

/* The nodes merged, and the files not merged (AP_MERGE_SKIPPED). */
size_t ap_merge_nodes(const ap_merge *mg);
size_t ap_merge_skipped(const ap_merge *mg);

/* The summary (schema in doc/merge.md): "nodes",
 * "differ", "capabilities" by id, "trees" (the most nodes first),
 * "manifests" (each node's file and age) and "unreadable". Each list of
 * nodes keeps its first max_ranges ranges (0: every one); join writes the
 * ranges of one family as items of about 40 bytes, for text. */
json_t *ap_merge_report(const ap_merge *mg, size_t max_ranges, bool join);

/* Whether the nodes differ: a capability not in one state (supported,
 * lacking, not probed) on every node, or more than one AITER tree. */
bool ap_merge_differ(const ap_merge *mg);

/* The report for people, fitted to width columns. */
void ap_merge_print_text(const json_t *report, FILE *to, bool color, int width);

#endif
