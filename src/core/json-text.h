/* SPDX-License-Identifier: MIT */
/* JSON text read as jansson reads it, allocating nothing. jansson (2.14, and
 * its master) does not say when it ran out of memory while parsing: its lexer
 * drops a byte of a token when its buffer cannot grow (load.c: lex_save
 * ignores strbuffer_append_byte's failure), and its parser fails with
 * "invalid token", or with no message at all, when another allocation does.
 * The loader reads the text again here to tell a manifest from what running
 * out of memory made of it. */
#ifndef AP_JSON_TEXT_H
#define AP_JSON_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The number token s (len bytes, followed by a byte that is not part of
 * it) as a double, read with '.' for the decimal point whatever the locale,
 * as jansson reads it; false when not all of the token is a number. */
bool ap_json_number(const char *s, size_t len, double *out);

/* Whether text (len bytes, at most 64 arrays and objects deep) is one JSON
 * object or array, with only whitespace around it, whose every key and value
 * is doc's, in doc's order; with doc NULL, whether it is JSON at all (its
 * keys may repeat and its strings need not be UTF-8: jansson refuses those
 * itself, with its own messages). */
bool ap_json_text_is(const char *text, size_t len, const json_t *doc);

#endif
