/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "core/json-text.h"

bool ap_json_number(const char *s, size_t len, double *out)
{
	/* glibc hands out its static C locale for this, allocating nothing. */
	locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	char *end;

	if (c == (locale_t)0)
		return false;
	*out = strtod_l(s, &end, c);
	freelocale(c);
	return end == s + len && len > 0;
}

typedef struct cursor {
	const unsigned char *s;
	size_t n, i;
	bool compare; /* false: only whether the text is JSON */
} cursor;

static bool at(const cursor *c, char ch)
{
	return c->i < c->n && c->s[c->i] == ch;
}

static bool at_digit(const cursor *c)
{
	return c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9';
}

/* Skips one digit or more; false when there is none. */
static bool digits(cursor *c)
{
	size_t start = c->i;

	while (at_digit(c))
		c->i++;
	return c->i > start;
}

static void skip_space(cursor *c)
{
	while (at(c, ' ') || at(c, '\t') || at(c, '\n') || at(c, '\r'))
		c->i++;
}

static long hex4(cursor *c)
{
	long v = 0;

	for (int k = 0; k < 4; k++, c->i++) {
		unsigned char h = c->i < c->n ? c->s[c->i] : 0;
		int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
		        : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* The bytes the escape after a backslash stands for, in UTF-8; 0 when it is
 * none. */
static size_t escape(cursor *c, unsigned char out[4])
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *short_escape;
	long code, low;

	if (c->i >= c->n)
		return 0;
	if (c->s[c->i] != 'u') {
		short_escape = c->s[c->i] != '\0' ? strchr(from, c->s[c->i]) : NULL;
		c->i++;
		if (short_escape == NULL)
			return 0;
		out[0] = (unsigned char)to[short_escape - from];
		return 1;
	}
	c->i++;
	if ((code = hex4(c)) < 0 || (code >= 0xDC00 && code <= 0xDFFF))
		return 0;
	if (code >= 0xD800 && code <= 0xDBFF) {
		if (!at(c, '\\') || c->i + 1 >= c->n || c->s[c->i + 1] != 'u')
			return 0;
		c->i += 2;
		if ((low = hex4(c)) < 0xDC00 || low > 0xDFFF)
			return 0;
		code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
	}
	if (code < 0x80) {
		out[0] = (unsigned char)code;
		return 1;
	}
	if (code < 0x800) {
		out[0] = (unsigned char)(0xC0 | code >> 6);
		out[1] = (unsigned char)(0x80 | (code & 0x3F));
		return 2;
	}
	if (code < 0x10000) {
		out[0] = (unsigned char)(0xE0 | code >> 12);
		out[1] = (unsigned char)(0x80 | (code >> 6 & 0x3F));
		out[2] = (unsigned char)(0x80 | (code & 0x3F));
		return 3;
	}
	out[0] = (unsigned char)(0xF0 | code >> 18);
	out[1] = (unsigned char)(0x80 | (code >> 12 & 0x3F));
	out[2] = (unsigned char)(0x80 | (code >> 6 & 0x3F));
	out[3] = (unsigned char)(0x80 | (code & 0x3F));
	return 4;
}

/* The string at c; when comparing, whether it is want (len bytes). */
static bool string_is(cursor *c, const char *want, size_t len)
{
	size_t matched = 0;

	if (!at(c, '"'))
		return false;
	for (c->i++; c->i < c->n;) {
		unsigned char ch = c->s[c->i++], bytes[4];
		size_t nbytes = 1;

		if (ch == '"')
			return !c->compare || matched == len;
		if (ch < 0x20)
			return false;
		bytes[0] = ch;
		if (ch == '\\' && (nbytes = escape(c, bytes)) == 0)
			return false;
		if (c->compare) {
			if (len - matched < nbytes || memcmp(want + matched, bytes, nbytes) != 0)
				return false;
			matched += nbytes;
		}
	}
	return false;
}

static bool number_is(cursor *c, const json_t *want)
{
	size_t start = c->i;
	bool real = false;
	double v;

	if (at(c, '-'))
		c->i++;
	/* No leading zero: "01" is two tokens, which JSON has no place for. */
	if (at(c, '0'))
		c->i++;
	else if (!digits(c))
		return false;
	if (at(c, '.')) {
		real = true;
		c->i++;
		if (!digits(c))
			return false;
	}
	if (at(c, 'e') || at(c, 'E')) {
		real = true;
		c->i++;
		if (at(c, '+') || at(c, '-'))
			c->i++;
		if (!digits(c))
			return false;
	}
	if (!c->compare)
		return true;
	/* The prescan kept integers to 64 bits, as jansson's are. */
	if (!real)
		return json_is_integer(want) &&
		       strtoll((const char *)c->s + start, NULL, 10) == json_integer_value(want);
	return json_is_real(want) &&
	       ap_json_number((const char *)c->s + start, c->i - start, &v) &&
	       v == json_real_value(want);
}

static bool word_is(cursor *c, const char *word, json_type type, const json_t *want)
{
	size_t len = strlen(word);

	if (c->n - c->i < len || memcmp(c->s + c->i, word, len) != 0)
		return false;
	c->i += len;
	return !c->compare || json_typeof(want) == type;
}

static bool value_is(cursor *c, const json_t *want);

static bool object_is(cursor *c, const json_t *want)
{
	void *it;

	if (c->compare && !json_is_object(want))
		return false;
	it = c->compare ? json_object_iter((json_t *)want) : NULL;
	c->i++;
	skip_space(c);
	if (at(c, '}')) {
		c->i++;
		return it == NULL;
	}
	for (;;) {
		const char *key = it != NULL ? json_object_iter_key(it) : NULL;

		if (c->compare && key == NULL)
			return false;
		skip_space(c);
		if (!string_is(c, key, key != NULL ? strlen(key) : 0))
			return false;
		skip_space(c);
		if (!at(c, ':'))
			return false;
		c->i++;
		if (!value_is(c, it != NULL ? json_object_iter_value(it) : NULL))
			return false;
		if (it != NULL)
			it = json_object_iter_next((json_t *)want, it);
		skip_space(c);
		if (at(c, '}')) {
			c->i++;
			return it == NULL;
		}
		if (!at(c, ','))
			return false;
		c->i++;
	}
}

static bool array_is(cursor *c, const json_t *want)
{
	size_t k = 0;

	if (c->compare && !json_is_array(want))
		return false;
	c->i++;
	skip_space(c);
	if (at(c, ']')) {
		c->i++;
		return !c->compare || json_array_size(want) == 0;
	}
	for (;; k++) {
		if (!value_is(c, c->compare ? json_array_get(want, k) : NULL))
			return false;
		skip_space(c);
		if (at(c, ']')) {
			c->i++;
			return !c->compare || json_array_size(want) == k + 1;
		}
		if (!at(c, ','))
			return false;
		c->i++;
	}
}

/* Recursion is bounded: the prescan refused more than 64 levels. */
static bool value_is(cursor *c, const json_t *want)
{
	if (c->compare && want == NULL)
		return false;
	skip_space(c);
	if (c->i >= c->n)
		return false;
	switch (c->s[c->i]) {
	case '{':
		return object_is(c, want);
	case '[':
		return array_is(c, want);
	case '"':
		if (c->compare && !json_is_string(want))
			return false;
		return string_is(c, json_string_value(want), json_string_length(want));
	case 't':
		return word_is(c, "true", JSON_TRUE, want);
	case 'f':
		return word_is(c, "false", JSON_FALSE, want);
	case 'n':
		return word_is(c, "null", JSON_NULL, want);
	default:
		return number_is(c, want);
	}
}

bool ap_json_text_is(const char *text, size_t len, const json_t *doc)
{
	cursor c = {(const unsigned char *)text, len, 0, doc != NULL};

	skip_space(&c);
	if (!at(&c, '{') && !at(&c, '['))
		return false;
	if (!value_is(&c, doc))
		return false;
	skip_space(&c);
	return c.i == c.n;
}
