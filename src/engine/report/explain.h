/* SPDX-License-Identifier: MIT */
/* Accounts for people and CI: what the loaded packs define (list), and why a
 * capability or rule came out as it did (explain), read from a manifest (a
 * scan's, or a fresh one) and the rule set that defines it. Each account is
 * built as JSON; the text is printed from that JSON, so both say the same. */
#ifndef AP_EXPLAIN_H
#define AP_EXPLAIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine/rules.h"

/* The ids the rule set defines, probes and/or rules, in load order (the
 * array is the caller's, the ids the rule set's): what ap_suggest_tail
 * picks the nearest from. */
const char **ap_ruleset_ids(const ap_ruleset *rs, bool probes, bool rules, size_t *n);

enum {
	AP_LIST_RULES = 1u << 0,
	AP_LIST_PROBES = 1u << 1,
	AP_LIST_CAPABILITIES = 1u << 2,
};

/* {"rules": [...], "probes": [...], "capabilities": [...]}, the sections
 * `what` asks for: each entry's id, description, pack file and line; a rule's
 * kind, files and what it looks for; a probe's requires (as one line of YAML
 * flow text) and launch; a capability's fallback. */
json_t *ap_list_build(const ap_ruleset *rs, unsigned what);
/* The list for a terminal width columns wide; color: section names and ids
 * in bold. */
void ap_list_print_text(const json_t *list, FILE *to, bool color, int width);

/* What a backend is left with when p is unsupported: the plan row and the
 * fallback, joined by "; "; NULL when neither is known. */
char *ap_explain_consequence(const ap_probe *p, const json_t *manifest);

/* The account of capability p, which manifest must hold (AP_EINPUT
 * otherwise): its verdict, the requires tree with each node's value and
 * each rule's status, what it looked for and its evidence, the launch, the
 * plan row and the fallback. Evidence lines are read again beneath the
 * manifest's aiter.root (and meta) through the confined reader; where that
 * fails, the manifest's match text is shown ("from": "manifest"). */
int ap_explain_capability(const ap_ruleset *rs, const ap_probe *p, const json_t *manifest,
                          json_t **out);
/* The account of rule r, with the capabilities that require it. */
int ap_explain_rule(const ap_ruleset *rs, const ap_rule *r, const json_t *manifest, json_t **out);
/* The routing of p's MLA decode (p has a launch) at `heads` real heads per
 * rank, from the manifest's plans.mla_heads row for them: the capability's
 * verdict, the launch head count and padding mode, whether a launch on this
 * node verified it and with which kernel, the fallback (when the capability
 * is about these heads and they are padded) and the cost of the padding.
 * AP_EINPUT when the manifest lacks the capability or the row. */
int ap_explain_heads(const ap_probe *p, const json_t *manifest, int heads, json_t **out);
/* That account for a terminal, as ap_explain_print_text prints the others. */
void ap_explain_heads_print_text(const json_t *doc, FILE *to, bool color, int width);
/* Either account, for a terminal width columns wide (color: ANSI). Every
 * value from a tree or a pack is escaped with ap_terminal_text. */
void ap_explain_print_text(const json_t *doc, FILE *to, bool color, int width);

#endif
