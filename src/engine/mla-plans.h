/* SPDX-License-Identifier: MIT */
/* The engine's MLA plans: plans.mla_heads built from a scan's capabilities
 * and launches, and the row a probe's launch reads, for explain and check.
 * The routing each row follows is the core's (core/mla-route.h). */
#ifndef AP_MLA_PLANS_H
#define AP_MLA_PLANS_H

#include <jansson.h>

#include "engine/evaluate.h"
#include "engine/rules.h"

/* plans.mla_heads: a row for each head count 1..AP_MLA_MAX_HEADS, native
 * where a supported capability's launch names the count, verified (with
 * the kernel that proved it) where such a launch passed on this node. */
json_t *ap_mla_plans_build(const ap_scan *scan);

/* The manifest's plans.mla_heads row for the head count of p's launch; NULL
 * when p has no launch or the plan no such row. */
const json_t *ap_mla_plan_of(const ap_probe *p, const json_t *manifest);

/* A row for people: "24 heads launch 32 (tile-slice)", with ", verified on
 * this node by AITER's kernel" (or "by the reference kernel") when a launch
 * proved it. */
char *ap_mla_plan_text(const json_t *row);

#endif
