/* SPDX-License-Identifier: MIT */
/* Matches: what a rule found, with the line of the original file and named
 * captures. Every kind reports through these. */
#ifndef AP_MATCH_H
#define AP_MATCH_H

#include <stddef.h>

#include "engine/lang/normalize.h"

typedef enum { AP_COLLECT_FIRST, AP_COLLECT_ALL } ap_collect;

typedef struct ap_capture {
	char *name;
	char *value; /* the exact captured bytes */
} ap_capture;

typedef struct ap_match {
	unsigned line; /* 1-based line in the original file where the match starts */
	char *text;    /* that original line, without its line ending */
	ap_capture *caps;
	size_t ncaps;
} ap_match;

/* A rule keeps at most this many matches (a kind stops at the next, which
 * over counts, and the rule is an error), and of each match's line at most
 * AP_MATCH_TEXT_MAX bytes: memory and time stay bounded whatever a tree
 * holds. */
#define AP_MATCH_MAX 10000
#define AP_MATCH_TEXT_MAX 4096

typedef struct ap_match_list {
	ap_match *v;
	size_t n;
	size_t cap;
	size_t over;   /* matches found past AP_MATCH_MAX, not kept: a kind stops there */
	ap_match spare; /* what a kind fills for those */
} ap_match_list;

/* A match at offset off of normalized text t. */
ap_match *ap_match_add(ap_match_list *out, const ap_text *t, size_t off);
/* A match at a 1-based line of t's original text. */
ap_match *ap_match_add_line(ap_match_list *out, const ap_text *t, unsigned line);
/* A match whose line and text the kind states itself. */
ap_match *ap_match_add_text(ap_match_list *out, unsigned line, const char *text, size_t len);
void ap_match_capture(ap_match *m, const char *name, const char *value, size_t len);

/* What a rule's matches may take of the manifest's JSON (an upper bound:
 * each byte outside printable ASCII as a six-byte \u escape, with the
 * indentation and keys), and the most a rule's, and all of a scan's, may
 * take: past either the rule is an error, so that the scan never writes a
 * manifest over the 64 MiB its readers accept. 10,000 matches of 90-byte
 * lines take about 2 MiB; 10,000 of a 4 KiB line of control bytes, 245. */
#define AP_MATCH_JSON_MAX ((size_t)16 << 20)
#define AP_MATCH_SCAN_JSON_MAX ((size_t)40 << 20)
size_t ap_match_json_bytes(const ap_match_list *l);
void ap_match_list_free(ap_match_list *l);
/* A deep copy of from's matches (its spare aside) into to. */
void ap_match_list_copy(ap_match_list *to, const ap_match_list *from);

#endif
