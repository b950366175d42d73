/* SPDX-License-Identifier: MIT */
/* Language-aware normalization with an offset map back to the original file,
 * so that a match found in normalized text is reported at its original line. */
#ifndef AP_NORMALIZE_H
#define AP_NORMALIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ASCII whitespace that AP_WS_STRIP removes, and that a pattern is
 * stripped of to match such text. */
#include "engine/lang/space.h"

typedef enum {
	AP_LANG_AUTO,   /* decided from the file name by ap_lang_for_path() */
	AP_LANG_TEXT,   /* no language rules: only BOM, CRLF and whitespace handling */
	AP_LANG_C,      /* C, C++, CUDA, HIP: continuations, comments, #if 0 */
	AP_LANG_PYTHON, /* comments */
} ap_lang;

typedef enum {
	AP_WS_KEEP,  /* whitespace as in the source (CR of CRLF dropped) */
	AP_WS_STRIP, /* every whitespace byte removed: vLLM's "".join(src.split()) */
} ap_ws;

typedef struct ap_text {
	char *s;              /* normalized text, NUL-terminated */
	size_t len;
	/* map[i]: offset in the original of byte i, never decreasing (a Python
	 * name's NFKC form may be longer than the name: its bytes past the
	 * name's length share the name's last); map[len] = orig_len */
	uint32_t *map;
	const char *orig;     /* borrowed: the original bytes */
	size_t orig_len;
	uint32_t *line_start; /* offset of each original line's first byte */
	size_t nlines;
	ap_lang lang;         /* the language applied (AUTO is read as TEXT) */
	ap_ws ws;             /* the whitespace mode applied */
} ap_text;

/* The languages a rule may name, with the file name suffixes that select
 * them under `language: auto`. */
typedef struct ap_lang_info {
	ap_lang lang;
	const char *name;
	const char *const *suffixes; /* NULL-terminated; NULL: none */
} ap_lang_info;

extern const ap_lang_info ap_langs[];
extern const size_t ap_nlangs;

ap_lang ap_lang_for_path(const char *path);
const char *ap_lang_name(ap_lang lang);

const char *ap_ws_name(ap_ws ws);

/* Normalizes orig (which must outlive out). Returns 0, or AP_ELIMIT when the
 * input is larger than the 4 GiB an offset map can address. */
int ap_normalize(ap_text *out, const char *orig, size_t orig_len, ap_lang lang, ap_ws ws);
void ap_text_free(ap_text *t);

/* 1-based line in the original of normalized offset off (off <= len). */
unsigned ap_text_line(const ap_text *t, size_t off);
/* The original text of a 1-based line, without its line ending. */
void ap_text_line_span(const ap_text *t, unsigned line, const char **start, size_t *len);

#endif
