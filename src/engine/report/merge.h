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

/* The ranges a list of nodes keeps by default ("node-[0001-0042]" is one),
 * and the most it may keep; the nodes past them are counted, not named. */
#define AP_MERGE_DEFAULT_RANGES 8
#define AP_MERGE_MAX_RANGES 100000

typedef struct ap_merge ap_merge;

/* max_ranges: from 1 to AP_MERGE_MAX_RANGES, for each list of nodes. */
ap_merge *ap_merge_new(size_t max_ranges);
void ap_merge_free(ap_merge *mg);

/* Reads the manifest at path (ap_manifest_read_file) and adds its node: its
 * "host", else the file's name less ".json". A node added before refuses
 * the manifest: "b.json: node 'n1' is also the node of a.json". AP_EIO or
 * AP_EINPUT with the message set (it names path). */
int ap_merge_add_file(ap_merge *mg, const char *path);

/* The summary (schema in the README, "aiter-probe merge"): "nodes",
 * "differ", "capabilities" by id and "trees", the most nodes first. */
json_t *ap_merge_report(const ap_merge *mg);

/* Whether the nodes differ: a capability not in one state (supported,
 * lacking, not probed) on every node, or more than one AITER tree. */
bool ap_merge_differ(const ap_merge *mg);

/* The report for people, fitted to width columns. */
void ap_merge_print_text(const json_t *report, FILE *to, bool color, int width);

#endif
