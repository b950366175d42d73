/* SPDX-License-Identifier: MIT */
/* YAML read into a small tree that keeps every node's position, and typed
 * access to it whose every refusal names file, line and column. The rule
 * loader and each rule kind read their keys through it. */
#ifndef AP_YAML_NODE_H
#define AP_YAML_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

typedef enum { AP_Y_SCALAR, AP_Y_SEQ, AP_Y_MAP } ap_ykind;

typedef struct ap_ynode {
	ap_ykind kind;
	yaml_scalar_style_t style;
	unsigned line, col;         /* 1-based start */
	unsigned end_line, end_col; /* 1-based, just past the end */
	char *s;                    /* scalar value (may hold NUL bytes) */
	size_t len;
	struct ap_ynode **kids;     /* a mapping holds key, value, key, value, ... */
	size_t nkids;
	size_t cap;
} ap_ynode;

/* The one document of text (NULL *root when the stream is empty). Aliases,
 * anchors and tags are refused, and so is a tree over the node or depth
 * limits. */
int ap_yaml_parse(ap_ynode **root, const char *file, const char *text, size_t len);
void ap_ynode_free(ap_ynode *n);

/* Set "file:line:column: message" at n and return AP_EINPUT. */
int ap_y_fail(const char *file, const ap_ynode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ap_y_fail_lc(const char *file, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

bool ap_y_is_null(const ap_ynode *n);
bool ap_y_is_string(const ap_ynode *n);
/* What a value is, for "must be X, not Y" messages. */
const char *ap_y_kind_name(const ap_ynode *n);

/* A key of a known mapping and the value found for it. */
typedef struct ap_yfield {
	const ap_ynode *key; /* NULL: absent */
	const ap_ynode *val;
} ap_yfield;

/* Fills fields[i] for names[i]; refuses unknown and duplicate keys. */
int ap_y_fields(const char *file, const ap_ynode *map, const char *what, const char *const names[],
                size_t nnames, ap_yfield *fields);
int ap_y_need_field(const char *file, const ap_ynode *map, const char *what, const char *name,
                    const ap_yfield *f);
int ap_y_need_map(const char *file, const ap_ynode *n, const char *what);
/* Any scalar but null, without NUL bytes (a C string). */
int ap_y_string(const char *file, const ap_ynode *n, const char *name, char **out);
/* A string or a non-empty sequence of strings; free with ap_y_strings_free. */
int ap_y_strings(const char *file, const ap_ynode *n, const char *name, char ***out,
                 size_t *count);
void ap_y_strings_free(char **v, size_t n);
int ap_y_choice(const char *file, const ap_ynode *n, const char *name, const char *const choices[],
                size_t nchoices, const char *choices_text, size_t *out);
/* A plain decimal integer in [min, max]. */
int ap_y_int(const char *file, const ap_ynode *n, const char *name, long min, long max, long *out);
/* A positive decimal number of seconds, at most max. */
int ap_y_seconds(const char *file, const ap_ynode *n, const char *name, double max, double *out);
/* The later in the file of the fields present among fields[0..n), when more
 * than one is (the one to blame for a conflict); *first the earlier. */
const ap_yfield *ap_y_second_present(const ap_yfield *fields, size_t n, const ap_yfield **first);
/* The 1-based column of byte off of scalar n, when it is written on one line
 * exactly as its value reads (no escapes, no folding); else 0. */
unsigned ap_y_scalar_byte_col(const ap_ynode *n, size_t off);

#endif
