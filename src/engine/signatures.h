/* SPDX-License-Identifier: MIT */
/* The manifest's `signatures`: for each module a pack names (`signatures:`
 * at a pack's top level), every public name importing it binds, resolved as
 * `from MODULE import NAME` binds it, with the parameters a call of it meets
 * (core/signature.h writes them), or unknown and why: so that a backend asks
 * about its own calls, not only those a pack names. */
#ifndef AP_SIGNATURES_H
#define AP_SIGNATURES_H

#include <jansson.h>

#include "engine/reader.h"
#include "engine/rules.h"

/* Callables one scan records, over all modules; names past it are counted
 * in the module's `left_out`. */
#define AP_SIG_MAX_CALLABLES 4096
/* A reason is cut to this many bytes. */
#define AP_SIG_MAX_REASON 512

/* The `signatures` object for rs's modules, read through r (every file read
 * an input); NULL when no pack names one. */
json_t *ap_signatures_collect(const ap_ruleset *rs, ap_reader *r);

#endif
