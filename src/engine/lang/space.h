/* SPDX-License-Identifier: MIT */
/* The engine's one whitespace set, in a header of its own so that the C
 * lexer and the normalizer can both use it without including each other. */
#ifndef AP_SPACE_H
#define AP_SPACE_H

#include <stdbool.h>

/* The ASCII whitespace of Python's str.split(): \t \n \v \f \r, space and
 * \x1c-\x1f. The one whitespace set of the engine. */
static inline bool ap_is_space_byte(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

#endif
