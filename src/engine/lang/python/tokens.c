/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/python/python-int.h"

void ap_py_fail(struct parser *p, int code, unsigned line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (p->dead)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ap_error_set("line %u: %s", line, msg);
	p->err = code;
	p->dead = true;
	p->t.kind = T_END;
}

static void set_tok(struct parser *p, tok *t, uint8_t kind, size_t off, size_t len)
{
	t->kind = kind;
	t->off = (uint32_t)off;
	t->len = (uint32_t)len;
	t->line = p->line;
	t->depth = (uint8_t)p->nbracket;
	t->code = 0;
	t->plain = true;
}

static bool too_deep(struct parser *p)
{
	if (p->nindent - 1 + p->nbracket < AP_PY_MAX_DEPTH)
		return false;
	ap_py_fail(p, AP_ELIMIT, p->line, "nesting deeper than %d levels", AP_PY_MAX_DEPTH);
	return true;
}

/* The number of spaces s starts with, s in the module's copy of the source
 * (the NULs after it end the count). */
static size_t leading_spaces(const char *s)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* Eight bytes at a time: the first that is no space is the lowest
	 * nonzero byte of w. */
	size_t k = 0;
	for (;;) {
		uint64_t w;
		memcpy(&w, s + k, 8);
		w ^= 0x2020202020202020ULL;
		if (w != 0)
			return k + (size_t)__builtin_ctzll(w) / 8;
		k += 8;
	}
#else
	size_t k = 0;
	while (s[k] == ' ')
		k++;
	return k;
#endif
}

static void tab_error(struct parser *p)
{
	ap_py_fail(p, AP_EINPUT, p->line, "inconsistent use of tabs and spaces in indentation");
}

bool ap_py_indentation(struct parser *p, tok *t)
{
	const char *s = p->s;
	size_t n = p->n;
	size_t i, col, alt;
	uint32_t top;

	for (;;) {
		i = p->pos + leading_spaces(s + p->pos);
		col = alt = i - p->pos;
		for (; i < n; i++) {
			if (s[i] == ' ') {
				col++;
				alt++;
			} else if (s[i] == '\t') {
				col = (col / 8 + 1) * 8;
				alt++;
			} else if (s[i] == '\f') {
				col = alt = 0;
			} else if (s[i] != '\r') {
				break;
			}
		}
		if (i < n && s[i] == '#') {
			const char *nl = memchr(s + i, '\n', n - i);
			i = nl ? (size_t)(nl - s) : n;
		}
		if (i >= n || s[i] != '\n')
			break;
		p->pos = i + 1;
		p->line++;
	}
	/* Columns past 32 bits (a line of billions of tabs) all read as one;
	 * alt is never past col. */
	if (col > UINT32_MAX) {
		col = UINT32_MAX;
		if (alt > UINT32_MAX)
			alt = UINT32_MAX;
	}
	p->at_bol = false;
	p->pos = i;
	if (i >= n)
		return false;
	top = p->indent[p->nindent - 1];
	if (col == top) {
		if (alt != p->altindent[p->nindent - 1])
			tab_error(p);
		return false;
	}
	if (col > top) {
		if (alt <= p->altindent[p->nindent - 1]) {
			tab_error(p);
			return false;
		}
		if (too_deep(p))
			return false;
		p->altindent[p->nindent] = (uint32_t)alt;
		p->indent[p->nindent++] = (uint32_t)col;
		set_tok(p, t, T_INDENT, i, 0);
		return true;
	}
	while (p->nindent > 1 && p->indent[p->nindent - 1] > col) {
		p->nindent--;
		p->dedents++;
	}
	if (p->indent[p->nindent - 1] != col) {
		ap_py_fail(p, AP_EINPUT, p->line,
		           "unindent does not match any outer indentation level");
		return false;
	}
	if (p->altindent[p->nindent - 1] != alt) {
		tab_error(p);
		return false;
	}
	p->dedents--;
	set_tok(p, t, T_DEDENT, i, 0);
	return true;
}

/* Pushes the opener c. */
static bool open_bracket(struct parser *p, char c)
{
	if (too_deep(p))
		return false;
	p->bracket[p->nbracket] = c;
	p->bracket_line[p->nbracket++] = p->line;
	return true;
}

/* Pops the opener of the closer c. */
static bool close_bracket(struct parser *p, char c)
{
	char o = c == ')' ? '(' : c == ']' ? '[' : '{';

	if (p->nbracket == 0) {
		ap_py_fail(p, AP_EINPUT, p->line, "unbalanced '%c'", c);
		return false;
	}
	if (p->bracket[p->nbracket - 1] != o) {
		ap_py_fail(p, AP_EINPUT, p->line, "mismatched '%c' for '%c' of line %u", c,
		     p->bracket[p->nbracket - 1], p->bracket_line[p->nbracket - 1]);
		return false;
	}
	p->nbracket--;
	return true;
}

static __attribute__((noinline)) void lex_next(struct parser *p, tok *t)
{
	const char *s = p->s;
	size_t n = p->n;
	size_t i;

	if (p->dead) {
		set_tok(p, t, T_END, n, 0);
		return;
	}
	if (p->dedents > 0) {
		p->dedents--;
		set_tok(p, t, T_DEDENT, p->pos, 0);
		return;
	}
	if (p->at_bol && ap_py_indentation(p, t))
		return;
	if (p->dead)
		goto dead;
	i = p->pos;
	while (i < n) {
		char c = s[i];
		uint8_t kind, code;
		bool plain;
		int bad;
		size_t e;

		switch (ap_py_byte_class[(unsigned char)c]) {
		case C_SPACE:
			i++;
			continue;
		case C_HASH: {
			const char *nl = memchr(s + i, '\n', n - i);
			i = nl ? (size_t)(nl - s) : n;
			continue;
		}
		case C_BSLASH: {
			size_t j = i + 1 < n && s[i + 1] == '\r' ? i + 2 : i + 1;
			if (j >= n) {
				i = n;
				continue;
			}
			if (s[j] != '\n') {
				ap_py_fail(p, AP_EINPUT, p->line,
				     "unexpected character after line continuation character");
				goto dead;
			}
			i = j + 1;
			p->line++;
			continue;
		}
		case C_NL:
			i++;
			if (p->nbracket > 0) {
				p->line++;
				continue;
			}
			p->pos = i;
			if (!p->line_has_tokens) {
				/* A line of nothing but a continuation. */
				p->line++;
				p->at_bol = true;
				if (ap_py_indentation(p, t))
					return;
				if (p->dead)
					goto dead;
				i = p->pos;
				continue;
			}
			set_tok(p, t, T_NEWLINE, i - 1, 0);
			p->line++;
			p->at_bol = true;
			p->line_has_tokens = false;
			return;
		default:
			break;
		}
		e = ap_py_lex_token(s, i, n, &kind, &code, &plain, &bad);
		if (bad == STR_TOO_DEEP) {
			ap_py_fail(p, AP_ELIMIT, p->line, "nesting deeper than %d levels",
			     AP_PY_MAX_DEPTH);
			goto dead;
		}
		if (bad != STR_OK) {
			ap_py_fail(p, AP_EINPUT, p->line,
			     bad == STR_UNTERMINATED_TRIPLE ? "unterminated triple-quoted string"
			                                    : "unterminated string");
			goto dead;
		}
		if (kind == T_NAME && !plain) {
			char why[64];
			if (ap_py_name_error(s + i, e - i, why, sizeof why) != NULL) {
				ap_py_fail(p, AP_EINPUT, p->line, "%s", why);
				goto dead;
			}
		}
		/* An opener's depth is the one outside it, and so is a closer's. */
		if (kind == T_OP && (code == ')' || code == ']' || code == '}') &&
		    !close_bracket(p, c))
			goto dead;
		t->kind = kind;
		t->off = (uint32_t)i;
		t->len = (uint32_t)(e - i);
		t->line = p->line;
		t->depth = (uint8_t)p->nbracket;
		t->code = code;
		t->plain = plain;
		if (kind == T_OP && (code == '(' || code == '[' || code == '{') &&
		    !open_bracket(p, c))
			goto dead;
		p->pos = e;
		p->line_has_tokens = true;
		if (kind == T_STRING)
			p->line += ap_py_count_lines(s + i, e - i);
		return;
	}
	p->pos = i;
	if (p->nbracket > 0) {
		ap_py_fail(p, AP_EINPUT, p->bracket_line[p->nbracket - 1], "unbalanced '%c'",
		     p->bracket[p->nbracket - 1]);
		set_tok(p, t, T_END, n, 0);
	} else if (p->line_has_tokens) {
		p->line_has_tokens = false;
		set_tok(p, t, T_NEWLINE, n, 0);
	} else if (p->nindent > 1) {
		p->nindent--;
		set_tok(p, t, T_DEDENT, n, 0);
	} else {
		set_tok(p, t, T_END, n, 0);
	}
	return;
dead:
	set_tok(p, t, T_END, n, 0);
}

const char *ap_py_name(const struct parser *p, const tok *t, ap_buf *buf, size_t *len)
{
	if (t->plain) {
		*len = t->len;
		return p->s + t->off;
	}
	ap_py_name_nfkc(p->s + t->off, t->len, buf);
	*len = buf->len;
	return buf->data;
}

const char *ap_py_string_body(const struct parser *p, const tok *t, size_t *len)
{
	const char *s = p->s + t->off;
	size_t plen = 0, q;

	while (s[plen] != '"' && s[plen] != '\'')
		plen++;
	q = t->len - plen >= 6 && s[plen + 1] == s[plen] && s[plen + 2] == s[plen] ? 3 : 1;
	*len = t->len - plen - 2 * q;
	return s + plen + q;
}

void ap_py_record_string(struct parser *p, const tok *t)
{
	ap_py_module *m = p->m;
	size_t len;
	const char *body = ap_py_string_body(p, t, &len);

	ap_xgrow((void **)&m->strings, &p->strings_cap, m->nstrings + 1, sizeof *m->strings);
	m->strings[m->nstrings].value = ap_py_arena_strndup(p->mod, body, len);
	m->strings[m->nstrings].line = t->line;
	m->nstrings++;
}

/* Names and operators in the middle of a line are read here, as lex_next
 * would read them; the rest is lex_next's. */
void ap_py_advance(struct parser *p)
{
	const char *s = p->s; /* NULs follow s[n]: see ap_py_parse */
	size_t i = p->pos, j;
	tok *t = &p->t;
	uint8_t code;

	if (p->dead || p->at_bol || p->dedents > 0)
		goto slow;
	for (;;) {
		while (s[i] == ' ')
			i++;
		if (s[i] == '\n' && p->nbracket > 0) {
			i++;
			p->line++;
		} else if (s[i] == '#') {
			const char *nl = memchr(s + i, '\n', p->n - i);
			i = nl ? (size_t)(nl - s) : p->n;
		} else if (ap_py_byte_class[(unsigned char)s[i]] == C_SPACE) {
			i++;
		} else {
			break;
		}
	}
	p->pos = i;
	switch (ap_py_byte_class[(unsigned char)s[i]]) {
	case C_NAME:
		for (j = i + 1; ap_py_ident_chars[(unsigned char)s[j]] == ID_ASCII; j++)
			;
		/* A prefix, or a name that is not ASCII, to check. */
		if ((j - i <= 2 && (s[j] == '"' || s[j] == '\'')) ||
		    ((unsigned char)s[i] | (unsigned char)s[j]) >= 0x80)
			goto slow;
		code = ap_py_keyword(s + i, j - i);
		t->kind = T_NAME;
		break;
	case C_OP:
		if (i >= p->n)
			goto slow;
		switch (s[i]) {
		case '(':
		case '[':
		case '{':
			if (p->nindent - 1 + p->nbracket >= AP_PY_MAX_DEPTH)
				goto slow;
			t->depth = (uint8_t)p->nbracket;
			p->bracket[p->nbracket] = s[i];
			p->bracket_line[p->nbracket++] = p->line;
			j = i + 1;
			code = (uint8_t)s[i];
			t->kind = T_OP;
			goto op;
		case ')':
		case ']':
		case '}':
			if (p->nbracket == 0 ||
			    p->bracket[p->nbracket - 1] !=
			            (s[i] == ')' ? '(' : s[i] == ']' ? '[' : '{'))
				goto slow;
			p->nbracket--;
			j = i + 1;
			code = (uint8_t)s[i];
			break;
		default:
			j = ap_py_lex_punct(s, i, p->n, &code);
			break;
		}
		t->kind = T_OP;
		break;
	default:
		goto slow;
	}
	t->depth = (uint8_t)p->nbracket;
op:
	t->code = code;
	t->off = (uint32_t)i;
	t->len = (uint32_t)(j - i);
	t->line = p->line;
	t->plain = true;
	p->pos = j;
	p->line_has_tokens = true;
	return;
slow:
	lex_next(p, t);
	if (t->kind == T_STRING)
		ap_py_record_string(p, t);
}

size_t ap_py_string_mark(const struct parser *p)
{
	return p->m->nstrings - (p->t.kind == T_STRING);
}

void ap_py_drop_strings(struct parser *p, size_t mark)
{
	if (p->m->nstrings > mark)
		p->m->nstrings = mark;
}

bool ap_py_name_is(const struct parser *p, const tok *t, const char *w)
{
	ap_buf b = AP_BUF_INIT;
	size_t len;
	const char *s = ap_py_name(p, t, &b, &len);
	bool eq = len == strlen(w) && memcmp(s, w, len) == 0;

	ap_buf_free(&b);
	return eq;
}
