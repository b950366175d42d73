/* SPDX-License-Identifier: MIT */
/* "Did you mean": the known ids nearest to one that is not known, so that a
 * typo in a capability or rule id is answered with the id meant. */
#ifndef AP_SUGGEST_H
#define AP_SUGGEST_H

#include <stddef.h>

#include "core/ap-util.h"

#define AP_SUGGEST_MAX 3

/* Fills near[] with up to AP_SUGGEST_MAX of the n known ids nearest to word,
 * nearest first, and returns how many. An id is near when its edit distance
 * (insertions, deletions, substitutions, swaps of neighbours) is at most a
 * third of word's length (at least 2), or when it has every dotted component
 * of word but the last ("mla.decode." for "mla.decode.native_h42"). Ranked
 * by distance, then by the dotted components shared from the start, then by
 * byte order. */
size_t ap_suggest_nearest(const char *word, const char *const *known, size_t n,
                          const char *near[AP_SUGGEST_MAX]);

/* "; nearest: a, b" for the ids nearest to word, or "" when none (the
 * caller frees): the tail of an "unknown ..." message. NULL with the error
 * set when memory runs out. */
AP_CHECKED char *ap_suggest_tail(const char *word, const char *const *known, size_t n);

#endif
