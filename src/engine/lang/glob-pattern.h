/* SPDX-License-Identifier: MIT */
/* Glob patterns over relative paths of a source tree, such as
 * "hsa/gfx9??/mla/mla_*.co" or "aiter/configs/[a-m]*_tuned_*.csv".
 *
 * A pattern is '/'-separated segments, matched against the path's segments
 * one for one. In a segment, '*' matches any run of bytes (none included),
 * '?' one byte, "[abc]", "[a-z]" and "[!x]" one byte of the set or not of it
 * (']' first in the set is a member, '-' first or last too); there is no
 * escape character: "[*]" matches a '*'. Bytes are bytes: a UTF-8 character
 * outside ASCII is several of them for '?'. A whole segment "**" matches zero
 * or more segments: "aiter/configs/" "**" "/tuned_fmoe.csv" (one pattern,
 * written in pieces here for C's comments) matches aiter/configs/tuned_fmoe.csv
 * and aiter/configs/model_configs/tuned_fmoe.csv.
 *
 * Hidden names, as shells have it: a name that starts with '.' is matched
 * only by a segment that starts with a literal '.' (".git", ".*"), never by
 * '*', '?', a set, or "**", which goes through no hidden folder: "**" "/x.py"
 * does not match .git/x.py, where ".git/" "**" "/x.py" does.
 *
 * Matching takes time linear in the path for a given pattern (at worst the
 * product of the lengths of a segment and a name within one segment): no
 * backtracking blows up, whatever the stars. */
#ifndef AP_GLOB_H
#define AP_GLOB_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ap_glob ap_glob;

/* Refuses, with AP_EINPUT, a message "invalid glob pattern at offset N: ..."
 * and the offset in *err_offset (which may be NULL): an empty pattern, an
 * absolute one, an empty segment ("a//b", "a/"), a "." or ".." segment, "**"
 * with other characters in its segment ("a**b"), an unterminated '[', and a
 * reversed range ("[z-a]"). */
int ap_glob_new(ap_glob **out, const char *pattern, size_t *err_offset);
void ap_glob_free(ap_glob *g);
/* The pattern as written. */
const char *ap_glob_pattern(const ap_glob *g);
/* Whether the whole relative path matches. A path that is not a clean
 * relative one (empty, absolute, with an empty, "." or ".." segment, or a
 * trailing '/') matches nothing. */
bool ap_glob_match(const ap_glob *g, const char *path);

/* For a walker that lists folders only where needed. k < ap_glob_nsegments(g). */
size_t ap_glob_nsegments(const ap_glob *g);
/* Segment k: a literal, with no wildcard (the walker can look the name up
 * without listing the folder); "**"; or a pattern (list the folder and test
 * each name with ap_glob_segment_match). */
typedef enum { AP_GLOB_LITERAL, AP_GLOB_ANY_DEPTH, AP_GLOB_PATTERN } ap_glob_seg_kind;
ap_glob_seg_kind ap_glob_segment_kind(const ap_glob *g, size_t k);
/* The segment as written: the name itself for a literal. */
const char *ap_glob_segment_text(const ap_glob *g, size_t k);
/* Whether one name (no '/') matches segment k; for "**", whether the name is
 * one that "**" goes through: any but a hidden one. "", "." and ".." match
 * nothing. */
bool ap_glob_segment_match(const ap_glob *g, size_t k, const char *name);

#endif
