/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine/lang/python/python-int.h"

/* What ap_py_def_bound needs of a token. */
enum bclass {
	B_OTHER,
	B_LEFT,  /* ends an operand on its left: ( [ { */
	B_RIGHT, /* ends an operand on its right: ) ] } */
	B_BOTH,  /* ends one on either side: a line end, , : ; = a comparison, a keyword */
	B_NAME,  /* the name asked for */
	B_INT,
	B_MINUS,
};

struct btok {
	uint8_t cls;
	uint8_t cmp; /* 1 <=, 2 <, 3 >=, 4 > */
	unsigned long long mag; /* B_INT: the value */
	unsigned line;
};

/* The value of an integer literal; false for anything else and on overflow. */
static bool int_literal(const char *s, size_t len, unsigned long long *v)
{
	unsigned base = 10;
	size_t i = 0;
	bool digits = false;

	*v = 0;
	if (len > 2 && s[0] == '0' && strchr("xXoObB", s[1]) != NULL) {
		base = (s[1] | 0x20) == 'x' ? 16 : (s[1] | 0x20) == 'o' ? 8 : 2;
		i = 2;
	}
	for (; i < len; i++) {
		unsigned d;
		char c = s[i];
		if (c == '_')
			continue;
		if (ap_py_is_digit(c))
			d = (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (unsigned)((c | 0x20) - 'a' + 10);
		else
			return false;
		if (d >= base || *v > (~0ULL - d) / base)
			return false;
		*v = *v * base + d;
		digits = true;
	}
	return digits;
}

/* Whether the name token t[0, len) is name: as CPython binds it, NFKC when
 * it is not ASCII (plain false). */
static bool is_name(const char *t, size_t len, bool plain, const char *name, size_t nlen)
{
	ap_buf b = AP_BUF_INIT;
	bool eq;

	if (plain)
		return len == nlen && memcmp(t, name, len) == 0;
	ap_py_name_nfkc(t, len, &b);
	eq = b.len == nlen && memcmp(b.data, name, nlen) == 0;
	ap_buf_free(&b);
	return eq;
}

static struct btok classify(const char *t, size_t len, uint8_t kind, uint8_t code, bool plain,
                            unsigned line, const char *name, size_t nlen)
{
	struct btok b = {B_OTHER, 0, 0, line};

	if (kind == T_NAME) {
		if (is_name(t, len, plain, name, nlen))
			b.cls = B_NAME;
		else if (code != 0 && code != KW_AWAIT && code != KW_FALSE && code != KW_NONE &&
		         code != KW_TRUE)
			b.cls = B_BOTH;
	} else if (kind == T_NUMBER) {
		if (int_literal(t, len, &b.mag))
			b.cls = B_INT;
	} else if (kind == T_OP) {
		switch (code) {
		case '(':
		case '[':
		case '{':
			b.cls = B_LEFT;
			break;
		case ')':
		case ']':
		case '}':
			b.cls = B_RIGHT;
			break;
		case '-':
			b.cls = B_MINUS;
			break;
		case OP_LE:
		case '<':
		case OP_GE:
		case '>':
			b.cls = B_BOTH;
			b.cmp = code == OP_LE ? 1 : code == '<' ? 2 : code == OP_GE ? 3 : 4;
			break;
		case ',':
		case ':':
		case ';':
		case '=':
		case OP_WALRUS:
		case OP_ARROW:
		case OP_EQ:
		case OP_NE:
			b.cls = B_BOTH;
			break;
		default:
			if (ap_py_augassign_code(code))
				b.cls = B_BOTH;
		}
	}
	return b;
}

/* w[k] is the token k places back (1 the last); missing ones begin the body. */
static bool left_end(const struct btok *w, size_t have, size_t k)
{
	return k > have || w[k].cls == B_LEFT || w[k].cls == B_BOTH;
}

/* Offers the bound of a comparison with the literal [-]mag: itself when
 * inclusive, one less when strict. */
static void offer(unsigned long long mag, bool neg, bool inclusive, unsigned at,
                  long long *bound, unsigned *line, bool *found)
{
	long long v;

	if (mag > (unsigned long long)LLONG_MAX + neg)
		return;
	v = neg ? (long long)(0ULL - mag) : (long long)mag;
	if (!inclusive) {
		if (v == LLONG_MIN)
			return;
		v--;
	}
	if (!*found || v > *bound) {
		*bound = v;
		*line = at;
		*found = true;
	}
}

/* Judges the last tokens w[1..have] when the next one ends an operand. */
static void judge(const struct btok *w, size_t have, long long *bound, unsigned *line,
                  bool *found)
{
	/* name (<= | <) [-] INT */
	if (have >= 3 && w[1].cls == B_INT) {
		bool neg = w[2].cls == B_MINUS;
		size_t o = neg ? 3 : 2;
		if (have >= o + 1 && (w[o].cmp == 1 || w[o].cmp == 2) && w[o + 1].cls == B_NAME &&
		    left_end(w, have, o + 2))
			offer(w[1].mag, neg, w[o].cmp == 1, w[o].line, bound, line, found);
	}
	/* [-] INT (>= | >) name */
	if (have >= 3 && w[1].cls == B_NAME && (w[2].cmp == 3 || w[2].cmp == 4) &&
	    w[3].cls == B_INT) {
		bool neg = have >= 4 && w[4].cls == B_MINUS;
		if (left_end(w, have, neg ? 5 : 4))
			offer(w[3].mag, neg, w[2].cmp == 3, w[2].line, bound, line, found);
	}
}

void ap_py_def_bound(const ap_py_module *m, const ap_py_def *d, const char *name,
                     long long *bound, unsigned *line, bool *found)
{
	const char *s = m->src;
	size_t i = d->body_off, n = d->body_end, nlen = strlen(name);
	unsigned ln = d->body_line, depth = 0;
	struct btok w[6]; /* w[1] the last token, w[5] the fifth last */
	size_t have = 0;

	*bound = 0;
	*line = 0;
	*found = false;
	for (;;) {
		struct btok b = {B_BOTH, 0, 0, ln};
		bool last = i >= n;

		if (!last) {
			char c = s[i];
			if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
				i++;
				continue;
			}
			if (c == '#') {
				const char *nl = memchr(s + i, '\n', n - i);
				i = nl ? (size_t)(nl - s) : n;
				continue;
			}
			if (c == '\\') {
				/* The body parsed: a backslash out of strings joins lines. */
				i += i + 1 < n && s[i + 1] == '\r' ? 3 : 2;
				ln++;
				continue;
			}
			if (c == '\n') {
				i++;
				ln++;
				if (depth > 0)
					continue;
			} else {
				uint8_t kind, code;
				bool plain;
				int bad;
				size_t e = ap_py_lex_token(s, i, n, &kind, &code, &plain, &bad);
				b = classify(s + i, e - i, kind, code, plain, ln, name, nlen);
				if (b.cls == B_LEFT)
					depth++;
				else if (b.cls == B_RIGHT && depth > 0)
					depth--;
				if (kind == T_STRING)
					ln += ap_py_count_lines(s + i, e - i);
				i = e;
			}
		}
		if (b.cls == B_RIGHT || b.cls == B_BOTH)
			judge(w, have, bound, line, found);
		if (last)
			return;
		memmove(&w[2], &w[1], 4 * sizeof *w);
		w[1] = b;
		if (have < 5)
			have++;
	}
}
