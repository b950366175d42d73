/* SPDX-License-Identifier: MIT */
/* Differences between two manifests, for a CI gate on AITER upgrades.
 *
 * Classes, each contained in the next:
 *   lost     a capability supported in OLD is unsupported or absent in NEW;
 *   changed  a capability's verdict changed (appeared, disappeared, its
 *            supported flag, unsupported to unknown or back, its launch
 *            status or a device's launch status)
 *            or a rule's status changed (or the rule appeared/disappeared);
 *   any      anything reported at all: the above, case-table differences
 *            (the capture tuples of a rule's matches, compared as sets) and
 *            value differences (a rule whose matches give one tuple on each
 *            side: its captures compared one by one, a signature's entries
 *            as a list, a number as rising or falling). */
#ifndef AP_DIFF_H
#define AP_DIFF_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

typedef enum { AP_DIFF_LOST, AP_DIFF_CHANGED, AP_DIFF_ANY } ap_diff_class;

/* The report, as `aiter-probe diff --format json` prints it: {"old", "new",
 * "capabilities", "rules", "cases", "values", "summary": {"lost", "changed",
 * "differences"}}. A value is {"rule", "change", "before", "after" (the
 * tuples), "captures": [{"name", "change", "before", "after"}, and for a
 * signature (the capture "params") "added", "removed"]}; its change is
 * "gained" (every entry kept in its order, a number that rose), "lost" (an
 * entry gone, a number that fell) or "changed", the worst of its captures'. old and new were loaded by ap_manifest_read_file; the
 * names are recorded as given. */
json_t *ap_diff_manifests(const json_t *old, const char *old_name, const json_t *new,
                          const char *new_name);

/* A match's case tuple as the report's "cases" write it, "heads=24
 * head_dim=512" (captures in the manifest's order); NULL when the match
 * captured nothing. The caller frees it. */
char *ap_diff_case_tuple(const json_t *match);

/* A capability's before or after in the report: "supported",
 * "unsupported", "unknown" (unsupported for want of a decision; see
 * ap_manifest_cap_verdict) or "absent" (null). */
const char *ap_diff_state_word(const json_t *state);

/* Whether the report holds a difference of the class. */
bool ap_diff_has(const json_t *report, ap_diff_class cls);
/* Parses "lost", "changed" or "any"; negative when it is none of them. */
int ap_diff_class_parse(const char *word, ap_diff_class *cls);

/* The report for people (each value already escaped for a terminal), fitted
 * to width columns (ap_text_wrap), painted when color. */
void ap_diff_print_text(const json_t *report, FILE *to, bool color, int width);

#endif
