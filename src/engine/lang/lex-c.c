/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <string.h>

#include "engine/lang/lex-c.h"
#include "engine/lang/space.h"

const bool ap_c_ident_chars[256] = {
	['$'] = true, ['0' ... '9'] = true, ['A' ... 'Z'] = true,
	['_'] = true, ['a' ... 'z'] = true, [0x80 ... 0xff] = true,
};

bool ap_c_raw_prefix(const char *s, size_t i)
{
	size_t p;

	if (i == 0 || s[i - 1] != 'R')
		return false;
	p = i - 1;
	if (p >= 2 && s[p - 2] == 'u' && s[p - 1] == '8')
		p -= 2;
	else if (p >= 1 && (s[p - 1] == 'L' || s[p - 1] == 'u' || s[p - 1] == 'U'))
		p -= 1;
	return p == 0 || !ap_c_ident_char((unsigned char)s[p - 1]);
}

size_t ap_c_raw_end(const char *s, size_t i, size_t n)
{
	char close[1 + 16 + 1];
	size_t d = i + 1;
	const char *hit;

	/* A delimiter is at most 16 characters; a longer one is no raw string
	 * (and would not fit close). */
	while (d < n && d - (i + 1) < 16 && s[d] != '(') {
		if (s[d] == ')' || s[d] == '\\' || s[d] == '"' || ap_is_space_byte((unsigned char)s[d]))
			return 0;
		d++;
	}
	if (d >= n || s[d] != '(')
		return 0;
	close[0] = ')';
	memcpy(close + 1, s + i + 1, d - (i + 1));
	close[d - i] = '"';
	hit = memmem(s + d + 1, n - d - 1, close, d - i + 1);
	return hit ? (size_t)(hit - s) + d - i + 1 : n;
}
