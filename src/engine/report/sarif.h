/* SPDX-License-Identifier: MIT */
/* A diff report as a SARIF 2.1.0 log, for code scanning (GitHub, GitLab):
 * every difference located where OLD's manifest saw it, so a change to AITER
 * that drops something is annotated on the line that held it.
 *
 * One result per lost or changed capability, per rule whose status changed
 * and per case-table tuple removed or added. SARIF rules are the manifest's
 * ids, "capability/ID" and "rule/ID". Levels follow --fail-on:
 *   error    a capability lost (what --fail-on lost fails on);
 *   warning  a capability otherwise changed, a rule's status changed, a case
 *            removed;
 *   note     a rule now matched, a case added.
 * A gained capability is no result: OLD holds no line that caused it (its
 * rules' changes and added cases are the results), and code scanning
 * refuses a whole log holding a result without a location. Locations come
 * from OLD's manifest (a capability's evidence, a rule's file and match
 * lines), relative to the base id %SRCROOT%, which originalUriBaseIds maps
 * to OLD's aiter.root when that is an absolute path. A result with a file
 * but no line is located at the file; one without a file has no location,
 * nor has a path that would leave the tree (ap_path_refusal). */
#ifndef AP_SARIF_H
#define AP_SARIF_H

#include <jansson.h>

/* report is ap_diff_manifests(old, ...); old is the OLD manifest as the
 * reader accepts it (its root and meta folder absolute). */
json_t *ap_sarif_from_diff(const json_t *report, const json_t *old);

#endif
