/* SPDX-License-Identifier: MIT */
/* The C family's lexical rules that the normalizer (on a file as written)
 * and the token matcher (on normalized text) must agree on: what an
 * identifier character is and where a raw string literal ends. */
#ifndef AP_LEX_C_H
#define AP_LEX_C_H

#include <stdbool.h>
#include <stddef.h>

/* Letters, digits, '_', '$' (a GNU extension) and every non-ASCII byte
 * (UTF-8 in identifiers). */
extern const bool ap_c_ident_chars[256];

static inline bool ap_c_ident_char(unsigned char c)
{
	return ap_c_ident_chars[c];
}

/* Whether the '"' at s[i] follows the R of a raw string prefix (R, u8R, uR,
 * UR, LR) that is an identifier of its own. */
bool ap_c_raw_prefix(const char *s, size_t i);

/* End of the raw string R"delim( ... )delim" whose '"' is at s[i]: past its
 * closing quote, n when it is not closed, 0 when the delimiter is not valid
 * (longer than 16 characters, or holding a space, '(' ... ) so that this is
 * no raw string). */
size_t ap_c_raw_end(const char *s, size_t i, size_t n);

#endif
