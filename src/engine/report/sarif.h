/* SPDX-License-Identifier: MIT */
/* A diff report as a SARIF 2.1.0 log, for code scanning (GitHub, GitLab):
 * the analysis is of NEW (the commit under review), so every difference is
 * located in NEW's tree, with OLD's place as a related location.
 *
 * One result per capability lost, gained or changed, per rule whose status
 * changed, per value and per case-table tuple removed or added. SARIF rules
 * are the manifest's ids, "capability/ID" and "rule/ID", described from the
 * loaded packs (an id they lack says so). Levels follow --fail-on:
 *   error    a capability lost (what --fail-on lost fails on);
 *   warning  a capability otherwise changed, a rule's status changed, a case
 *            removed, a value lost or changed;
 *   note     a capability gained, a rule now matched, a case added, a value
 *            gained.
 * Every result has a location (code scanning refuses a whole log holding
 * one without): NEW's evidence, match or file, where NEW's scan read that
 * file (line 1 when the line is not known there); else aiter/__init__.py
 * (see add_fallback). Paths are relative to the base id %SRCROOT%, which
 * originalUriBaseIds maps to NEW's aiter.root, OLD's to OLDROOT; a path
 * that would leave the tree (ap_path_refusal) is no location. */
#ifndef AP_SARIF_H
#define AP_SARIF_H

#include <jansson.h>

/* report is ap_diff_manifests(old, ..., new, ...); old and new as the reader
 * accepts them (their roots and meta folders absolute); described is
 * ap_list_build's rules and capabilities, or NULL. */
json_t *ap_sarif_from_diff(const json_t *report, const json_t *old, const json_t *new,
                           const json_t *described);

#endif
