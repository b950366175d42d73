/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && !defined(AP_PY_NO_SIMD)
#include <emmintrin.h>
#endif

#include "core/ap-error.h"
#include "engine/lang/python/python-int.h"

/* The start of the token that holds s[q], lexing from b on: b <= q is a
 * token boundary (or between tokens), and s[b, q) holds only names, numbers
 * and operators (no space, string, comment or line end). The last space
 * before q, if any, is a boundary too: lexing starts there. s is the
 * module's copy, with its NULs. */
static size_t token_start(const char *s, size_t n, size_t b, size_t q)
{
	size_t k = q, e;
	uint8_t code;

	while (k > b && ap_py_byte_class[(unsigned char)s[k - 1]] != C_SPACE)
		k--;
	while (k < q) {
		switch (ap_py_byte_class[(unsigned char)s[k]]) {
		case C_NAME:
			for (e = k + 1; ap_py_ident_chars[(unsigned char)s[e]]; e++)
				;
			/* A prefix and its string. */
			if (e == q && e - k <= 2 && (s[q] == '"' || s[q] == '\'') &&
			    ap_py_string_prefix(s, k, e) != 0)
				return k;
			break;
		case C_DOT:
			if (!ap_py_is_digit(s[k + 1])) {
				e = ap_py_lex_punct(s, k, n, &code);
				break;
			}
			/* fallthrough */
		case C_DIGIT:
			e = ap_py_lex_number(s, k, n);
			break;
		default:
			e = ap_py_lex_punct(s, k, n, &code);
			break;
		}
		if (e > q)
			return k;
		k = e;
	}
	return q;
}

/* The bytes that skim's reading of the middle of a statement stops at: the
 * NUL after the source (and any in it), line ends, comments, strings,
 * backslashes, brackets, ';', and bytes that are not ASCII (in a name,
 * which CPython checks; elsewhere in code, an error). */
#if !defined(__SSE2__) || defined(AP_PY_NO_SIMD)
static const bool mid_stops[256] = {
	['\0'] = true, ['\n'] = true, ['#'] = true, ['"'] = true, ['\''] = true, ['\\'] = true,
	['('] = true, [')'] = true, ['['] = true, [']'] = true, ['{'] = true, ['}'] = true,
	[';'] = true, [0x80 ... 0xff] = true,
};
#endif

/* Where mid_next looks: a bit for each byte of s[base, base + 64) that is
 * in mid_stops. */
struct mid_window {
	size_t base;
	uint64_t mask;
};

#if defined(__SSE2__) && !defined(AP_PY_NO_SIMD)
/* The bits of s[0, 16) in mid_stops: ( and ) are c | 1 == ')', [ and { are
 * c | 0x20 == '{', ] and } are c | 0x20 == '}', " and # are c | 1 == '#';
 * the bytes from 0x80 on have their top bit, which the mask takes. */
static inline uint64_t mid_bits16(const char *s)
{
	const __m128i one = _mm_set1_epi8(1), x20 = _mm_set1_epi8(0x20);
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
	__m128i v1 = _mm_or_si128(v, one), v20 = _mm_or_si128(v, x20);
	__m128i m = _mm_or_si128(
		_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_setzero_si128()),
		                          _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
		             _mm_or_si128(_mm_cmpeq_epi8(v1, _mm_set1_epi8('#')),
		                          _mm_cmpeq_epi8(v, _mm_set1_epi8('\'')))),
		_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')),
		                          _mm_cmpeq_epi8(v1, _mm_set1_epi8(')'))),
		             _mm_or_si128(_mm_cmpeq_epi8(v20, _mm_set1_epi8('{')),
		                          _mm_or_si128(_mm_cmpeq_epi8(v20, _mm_set1_epi8('}')),
		                                       _mm_cmpeq_epi8(v, _mm_set1_epi8(';'))))));
	return (uint64_t)(unsigned)_mm_movemask_epi8(_mm_or_si128(m, v));
}

static inline uint64_t mid_bits64(const char *s)
{
	return mid_bits16(s) | mid_bits16(s + 16) << 16 | mid_bits16(s + 32) << 32 |
	       mid_bits16(s + 48) << 48;
}
#endif

/* The first byte of mid_stops from s[i] on (there is one: the NUL at s[n]).
 * With SSE2 the bits of 64 bytes at a time, kept in w for the next call. */
static inline size_t mid_next(const char *s, size_t i, struct mid_window *w)
{
#if defined(__SSE2__) && !defined(AP_PY_NO_SIMD)
	uint64_t m;

	if (i - w->base >= 64) {
		w->base = i;
		w->mask = mid_bits64(s + i);
	}
	m = w->mask >> (i - w->base);
	if (m != 0)
		return i + (size_t)__builtin_ctzll(m);
	do {
		w->base += 64;
		w->mask = mid_bits64(s + w->base);
	} while (w->mask == 0);
	return w->base + (size_t)__builtin_ctzll(w->mask);
#else
	/* Four bytes at a time. */
	(void)w;
	while (!(mid_stops[(unsigned char)s[i]] | mid_stops[(unsigned char)s[i + 1]] |
	         mid_stops[(unsigned char)s[i + 2]] | mid_stops[(unsigned char)s[i + 3]]))
		i += 4;
	while (!mid_stops[(unsigned char)s[i]])
		i++;
	return i;
#endif
}

/* The bytes that ap_py_params_tail stops at: mid_stops, ',', '=' and the
 * 'l' of a lambda (in the scalar version any 'l'). */
#if !defined(__SSE2__) || defined(AP_PY_NO_SIMD)
static const bool tail_stops[256] = {
	['\0'] = true, ['\n'] = true, ['#'] = true, ['"'] = true, ['\''] = true, ['\\'] = true,
	['('] = true, [')'] = true, ['['] = true, [']'] = true, ['{'] = true, ['}'] = true,
	[';'] = true, [','] = true, ['='] = true, ['l'] = true, [0x80 ... 0xff] = true,
};
#endif

/* The first byte from s[i] on that ap_py_params_tail stops at (there is
 * one: the NUL at s[n]). */
static inline size_t tail_scan(const char *s, size_t i)
{
#if defined(__SSE2__) && !defined(AP_PY_NO_SIMD)
	/* mid_stops' bits, ',', '=', and an 'l' with an 'a' one and five bytes
	 * on: sixteen bytes at a time. */
	for (;;) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i a1 = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 1));
		__m128i a5 = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 5));
		__m128i lam = _mm_and_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('l')),
		                            _mm_and_si128(_mm_cmpeq_epi8(a1, _mm_set1_epi8('a')),
		                                          _mm_cmpeq_epi8(a5, _mm_set1_epi8('a'))));
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')),
		                                      _mm_cmpeq_epi8(v, _mm_set1_epi8('='))),
		                         lam);
		uint64_t mask = mid_bits16(s + i) | (unsigned)_mm_movemask_epi8(m);
		if (mask != 0)
			return i + (size_t)__builtin_ctzll(mask);
		i += 16;
	}
#else
	while (!tail_stops[(unsigned char)s[i]])
		i++;
	return i;
#endif
}

/* Moves p->pos, in a parameter list whose '(' has depth depth, over the
 * tokens after the current one that params() would only count. It is called
 * once a segment can take no name, '/' or '*' any more and no lambda is
 * open, when what still counts is a ',' or '=' at depth + 1, a lambda there
 * and the closing ')'. A ',' there it reads itself and returns true; an '='
 * there sets *has_default when has_name. It stops (returning false) at the
 * first byte of a token that may be the ')' or a lambda, of a string (for
 * ap_py_advance to record), of a name that is not ASCII (for lex_next to
 * check), or of anything unusual (an error, the end of input), for
 * ap_py_advance to read from there; what it passes over it reads as lex_next
 * would, keeping lines and brackets. bound is a token boundary: the end of a
 * token a stop byte ends (not a deeper '=', which may end "==" or "<=");
 * token_start finds where the token holding an '=', a quote, "lambda" or a
 * byte that is not ASCII begins. */
bool ap_py_params_tail(struct parser *p, unsigned depth, bool has_name, bool *has_default)
{
	const char *s = p->s; /* NULs follow s[n]: see ap_py_parse */
	size_t n = p->n, i = p->pos, bound = i, j;
	size_t top = depth + 1;

	if (p->dead || p->at_bol || p->dedents > 0 || p->nbracket < top)
		return false;
	for (;;) {
		i = tail_scan(s, i);
		switch (s[i]) {
		case '\0':
			if (i >= n)
				goto out;
			i++;
			bound = i;
			break;
		case '\n':
			i++;
			p->line++;
			bound = i;
			break;
		case '#': {
			const char *nl = memchr(s + i, '\n', n - i);
			i = nl ? (size_t)(nl - s) : n;
			bound = i;
			break;
		}
		case '\\':
			j = s[i + 1] == '\r' ? i + 2 : i + 1;
			if (j >= n || s[j] != '\n')
				goto out;
			i = j + 1;
			p->line++;
			bound = i;
			break;
		case '(':
		case '[':
		case '{':
			if (p->nindent - 1 + p->nbracket >= AP_PY_MAX_DEPTH)
				goto out;
			p->bracket[p->nbracket] = s[i];
			p->bracket_line[p->nbracket++] = p->line;
			i++;
			bound = i;
			break;
		case ')':
		case ']':
		case '}': {
			char c = s[i];
			if (p->nbracket == top ||
			    p->bracket[p->nbracket - 1] != (c == ')' ? '(' : c == ']' ? '[' : '{'))
				goto out;
			p->nbracket--;
			i++;
			bound = i;
			break;
		}
		case ';':
			i++;
			bound = i;
			break;
		case ',':
			i++;
			if (p->nbracket == top) {
				/* The segment's end, read here. */
				p->pos = i;
				p->line_has_tokens = true;
				return true;
			}
			bound = i;
			break;
		case '=':
			if (p->nbracket == top) {
				/* A default's '=', or one of "==", "<=", "+=" ... */
				size_t k = token_start(s, n, bound, i);
				uint8_t code;
				size_t e = ap_py_lex_punct(s, k, n, &code);
				if (code == '=')
					*has_default |= has_name;
				i = bound = e;
				break;
			}
			i++;
			break;
		case '"':
		case '\'':
			i = token_start(s, n, bound, i);
			goto out;
		default: /* an 'l', or a byte that is not ASCII */
			if ((unsigned char)s[i] >= 0x80) {
				i = token_start(s, n, bound, i);
				goto out;
			}
			if (p->nbracket == top && memcmp(s + i, "lambda", 6) == 0) {
				/* The name or number holding it, passed over whole
				 * unless it is the keyword. */
				size_t k = token_start(s, n, bound, i), e;
				uint8_t kind, code;
				bool plain;
				int bad;
				e = ap_py_lex_token(s, k, n, &kind, &code, &plain, &bad);
				if (kind == T_NAME && code == KW_LAMBDA)
					goto out;
				i = bound = e;
				break;
			}
			i++;
			break;
		}
	}
out:
	p->pos = i;
	return false;
}

/* Where ap_py_skip_body stands in the statements of a function body, for
 * the docstrings of the defs and classes nested in it. */
struct body_state {
	enum { S_STMT, S_MID, S_HEADER, S_COLON, S_INDENT, S_DOC } state;
	unsigned lambdas;     /* S_HEADER: lambdas whose ':' is still to come */
	size_t mark;          /* S_DOC: the first string of the statement */
	struct ap_py_doc doc; /* S_DOC: its tokens so far */
};

static void enter_doc(struct body_state *b, size_t mark)
{
	b->state = S_DOC;
	b->mark = mark;
	b->doc = (struct ap_py_doc){0};
}

/* Moves b over the token t: the current one, or one skim read without
 * making it current (no string, line end or indentation). */
static inline __attribute__((always_inline)) void body_step(struct parser *p,
                                                            struct body_state *b, const tok *t)
{
	bool ends = t->kind == T_NEWLINE || (t->depth == 0 && ap_py_is_op(t, ';'));

	for (;;) {
		switch (b->state) {
		case S_STMT:
			if (ap_py_is_kw(t, KW_DEF) || ap_py_is_kw(t, KW_CLASS)) {
				b->state = S_HEADER;
				b->lambdas = 0;
			} else if (!ends && t->kind != T_INDENT && t->kind != T_DEDENT &&
			           !ap_py_is_kw(t, KW_ASYNC)) {
				b->state = S_MID;
			}
			return;
		case S_MID:
			if (ends || t->kind == T_INDENT || t->kind == T_DEDENT)
				b->state = S_STMT;
			return;
		case S_HEADER:
			if (t->kind == T_NEWLINE) {
				b->state = S_STMT;
			} else if (t->depth == 0 && ap_py_is_kw(t, KW_LAMBDA)) {
				b->lambdas++;
			} else if (t->depth == 0 && ap_py_is_op(t, ':')) {
				if (b->lambdas == 0)
					b->state = S_COLON;
				else
					b->lambdas--;
			}
			return;
		case S_COLON:
			if (t->kind == T_NEWLINE) {
				b->state = S_INDENT;
				return;
			}
			enter_doc(b, p->m->nstrings - (t->kind == T_STRING));
			continue;
		case S_INDENT:
			if (t->kind == T_INDENT) {
				enter_doc(b, p->m->nstrings);
				return;
			}
			b->state = S_STMT;
			continue;
		case S_DOC:
			if (!ends && ap_py_doc_step(&b->doc, t))
				return;
			if (ends && ap_py_doc_is(&b->doc))
				ap_py_drop_strings(p, b->mark);
			/* Past the statement's first token, or at it. */
			b->state = b->doc.open > 0 || b->doc.strings ? S_MID : S_STMT;
			continue;
		}
	}
}

/* The keyword code of a name for body_step: def, class, async and lambda
 * only, 0 for other names. */
static uint8_t body_keyword(const char *s, size_t len)
{
	switch (len) {
	case 3:
		return memcmp(s, "def", 3) == 0 ? KW_DEF : 0;
	case 5:
		return memcmp(s, "class", 5) == 0 ? KW_CLASS : memcmp(s, "async", 5) == 0 ? KW_ASYNC : 0;
	case 6:
		return memcmp(s, "lambda", 6) == 0 ? KW_LAMBDA : 0;
	default:
		return 0;
	}
}



/* Reads the tokens of a def body after the current one, moving b over each,
 * until one that ap_py_skip_body must see itself (INDENT, DEDENT, T_END, or the
 * NEWLINE that ends a one-line body: block false), which it leaves current.
 * It reads most tokens itself as lex_next would have, without making them
 * current, and hands anything unusual (an error to report, the end of
 * input, a line of nothing but a continuation) to lex_next from the token's
 * first byte.
 *
 * A statement's first tokens are read one by one (names need no keyword
 * code beyond body_keyword's; an operator of several bytes passes as one
 * token per byte, but for ':=' and '...', which could start a number
 * otherwise: body_step moves the same over one "other" token as over
 * several). Once b is in S_MID, where only the statement's end counts, skim
 * jumps from one byte of mid_stops to the next: what lies between is names,
 * numbers, operators and spaces, none of which can fail, count or end the
 * statement. A quote there begins a string whose prefix, if any, is found
 * by reading the tokens since the last space or stop byte (a token boundary
 * either way) up to it. */
static void skim(struct parser *p, struct body_state *b, bool block)
{
	const char *s = p->s; /* s[n] is a NUL: see ap_py_parse */
	size_t n = p->n, i = p->pos, j, k, bound;
	struct mid_window w = {SIZE_MAX - 64, 0};
	uint8_t kind, code, depth;
	bool plain;
	unsigned pfx;
	char c;

	if (p->dead || p->dedents > 0)
		goto generic;
	if (p->at_bol)
		goto bol;
next:
	if (b->state == S_MID)
		goto mid;
	while (s[i] == ' ')
		i++;
	if (i >= n)
		goto out;
	c = s[i];
	code = 0;
	plain = true;
	depth = (uint8_t)p->nbracket;
	switch (ap_py_byte_class[(unsigned char)c]) {
	case C_SPACE:
		i++;
		goto next;
	case C_HASH: {
		const char *nl = memchr(s + i, '\n', n - i);
		i = nl ? (size_t)(nl - s) : n;
		goto next;
	}
	case C_BSLASH:
		j = s[i + 1] == '\r' ? i + 2 : i + 1;
		if (j >= n || s[j] != '\n')
			goto out;
		i = j + 1;
		p->line++;
		goto next;
	case C_NL:
		if (p->nbracket == 0)
			goto newline;
		i++;
		p->line++;
		goto next;
	case C_NAME:
		j = i + 1;
		while (ap_py_ident_chars[(unsigned char)s[j]] == ID_ASCII)
			j++;
		if (((unsigned char)c | (unsigned char)s[j]) >= 0x80) /* a name to check: lex_next's */
			goto out;
		if (j - i <= 2 && (s[j] == '"' || s[j] == '\'') &&
		    (pfx = ap_py_string_prefix(s, i, j)) != 0)
			goto string;
		kind = T_NAME;
		code = body_keyword(s + i, j - i);
		i = j;
		break;
	case C_QUOTE:
		pfx = PFX_STRING;
		j = i;
		goto string;
	case C_DOT:
		if (ap_py_is_digit(s[i + 1])) {
			kind = T_NUMBER;
			i = ap_py_lex_number(s, i, n);
		} else {
			kind = T_OP;
			code = '.';
			i += s[i + 1] == '.' && i + 2 < n && s[i + 2] == '.' ? 3 : 1;
		}
		break;
	case C_DIGIT:
		kind = T_NUMBER;
		i = ap_py_lex_number(s, i, n);
		break;
	default:
		kind = T_OP;
		code = (uint8_t)c;
		if (c == '(' || c == '[' || c == '{') {
			if (p->nindent - 1 + p->nbracket >= AP_PY_MAX_DEPTH)
				goto out;
			p->bracket[p->nbracket] = c;
			p->bracket_line[p->nbracket++] = p->line;
		} else if (c == ')' || c == ']' || c == '}') {
			if (p->nbracket == 0 ||
			    p->bracket[p->nbracket - 1] != (c == ')' ? '(' : c == ']' ? '[' : '{'))
				goto out;
			depth = (uint8_t)--p->nbracket;
		} else if (c == ':' && s[i + 1] == '=') {
			code = OP_WALRUS;
			i++;
		}
		i++;
		break;
	}
token:
	/* The token read, in scalars: a tok written byte by byte and read back
	 * whole would stall the loads. */
	p->line_has_tokens = true;
	{
		tok t = {.kind = kind, .code = code, .depth = depth, .plain = plain};
		body_step(p, b, &t);
	}
	goto next;

string: /* from s[i], its quote at s[j], the prefix's flags pfx */
	{
		int bad = STR_OK;
		size_t e = pfx & PFX_F ? ap_py_lex_fstring(s, j, n, (pfx & PFX_RAW) != 0, &bad)
		                       : ap_py_lex_string(s, j, n, &bad);
		tok t;
		if (bad != STR_OK)
			goto out;
		t.kind = kind = T_STRING;
		t.off = (uint32_t)i;
		t.len = (uint32_t)(e - i);
		t.line = p->line;
		t.depth = depth = (uint8_t)p->nbracket;
		t.code = code = 0;
		t.plain = plain = !(pfx & (PFX_BYTES | PFX_F));
		p->line += ap_py_count_lines(s + i, e - i);
		ap_py_record_string(p, &t);
		i = e;
	}
	goto token;

newline: /* s[i] is a line end out of brackets */
	if (!block || !p->line_has_tokens)
		goto out;
	p->pos = i + 1;
	p->line++;
	p->at_bol = true;
	p->line_has_tokens = false;
	{
		tok t = {.kind = T_NEWLINE};
		body_step(p, b, &t);
	}
bol:
	if (ap_py_indentation(p, &p->t))
		return;
	if (p->dead)
		goto generic;
	i = p->pos;
	goto next;

mid:
	for (bound = i;; bound = i) {
		i = mid_next(s, i, &w);
		switch (s[i]) {
		case '\0':
			if (i >= n)
				goto out;
			i++;
			break;
		case '\n':
			if (p->nbracket == 0)
				goto newline;
			i++;
			p->line++;
			break;
		case '#': {
			const char *nl = memchr(s + i, '\n', n - i);
			i = nl ? (size_t)(nl - s) : n;
			break;
		}
		case '\\':
			j = s[i + 1] == '\r' ? i + 2 : i + 1;
			if (j >= n || s[j] != '\n')
				goto out;
			i = j + 1;
			p->line++;
			break;
		case '(':
		case '[':
		case '{':
			if (p->nindent - 1 + p->nbracket >= AP_PY_MAX_DEPTH)
				goto out;
			p->bracket[p->nbracket] = s[i];
			p->bracket_line[p->nbracket++] = p->line;
			i++;
			break;
		case ')':
		case ']':
		case '}':
			c = s[i];
			if (p->nbracket == 0 ||
			    p->bracket[p->nbracket - 1] != (c == ')' ? '(' : c == ']' ? '[' : '{'))
				goto out;
			p->nbracket--;
			i++;
			break;
		case ';':
			i++;
			if (p->nbracket > 0)
				break;
			kind = T_OP;
			code = ';';
			depth = 0;
			plain = true;
			goto token;
		default:
			/* Not ASCII: the name holding it, for lex_next to check. */
			if ((unsigned char)s[i] >= 0x80) {
				i = token_start(s, n, bound, i);
				goto out;
			}
			/* A quote at j: the token holding it starts at k, at j or at
			 * its prefix. */
			j = i;
			k = token_start(s, n, bound, j);
			pfx = k < j ? ap_py_string_prefix(s, k, j) : PFX_STRING;
			i = k;
			goto string;
		}
	}

out:
	p->pos = i;
generic:
	ap_py_advance(p);
}

void ap_py_skip_body(struct parser *p, size_t di)
{
	struct body_state b = {0};
	unsigned level = 0;
	size_t off, end;
	unsigned line;

	if (p->t.kind == T_NEWLINE) {
		ap_py_advance(p);
		if (p->t.kind != T_INDENT) {
			ap_py_fail(p, AP_EINPUT, p->t.line, "expected an indented block");
			return;
		}
		level = 1;
		ap_py_advance(p);
	}
	enter_doc(&b, ap_py_string_mark(p));
	off = p->t.off;
	line = p->t.line;
	for (;;) {
		const tok *t = &p->t;
		/* A one-line body ends at its NEWLINE, a block at its DEDENT. */
		if (t->kind == T_END || (level == 0 && t->kind == T_NEWLINE))
			break;
		if (t->kind == T_INDENT)
			level++;
		else if (t->kind == T_DEDENT && --level == 0)
			break;
		body_step(p, &b, t);
		skim(p, &b, level > 0);
	}
	end = p->t.off;
	if (b.state == S_DOC && ap_py_doc_is(&b.doc))
		ap_py_drop_strings(p, b.mark);
	if (p->t.kind != T_END)
		ap_py_advance(p);
	p->m->defs[di].body_off = off;
	p->m->defs[di].body_end = end;
	p->m->defs[di].body_line = line;
}

const struct globals *ap_py_def_globals(struct parser *p, size_t di)
{
	const ap_py_def *d = &p->m->defs[di];
	const char *s = p->s;
	size_t i = d->body_off, n = d->body_end, cap = 0;
	bool names = false; /* in the names of a `global` statement */
	struct globals *g;

	if (di >= p->nglobals) {
		size_t old = p->nglobals;
		ap_xgrow((void **)&p->globals, &p->nglobals, di + 1, sizeof *p->globals);
		memset(p->globals + old, 0, (p->nglobals - old) * sizeof *p->globals);
	}
	g = &p->globals[di];
	if (g->read)
		return g;
	g->read = true;
	while (i < n) {
		uint8_t kind, code;
		bool plain;
		int bad;
		size_t e;

		if (s[i] == '#') {
			const char *nl = memchr(s + i, '\n', n - i);
			i = nl ? (size_t)(nl - s) : n;
			continue;
		}
		if (ap_py_byte_class[(unsigned char)s[i]] == C_SPACE || s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == '\n') {
			names = false;
			i++;
			continue;
		}
		e = ap_py_lex_token(s, i, n, &kind, &code, &plain, &bad);
		if (kind == T_NAME && code == KW_GLOBAL) {
			names = true;
		} else if (names && kind == T_NAME && code == 0) {
			/* `global ﬁnd` names the module's find, as the binding does */
			ap_buf b = AP_BUF_INIT;
			if (!plain)
				ap_py_name_nfkc(s + i, e - i, &b);
			ap_xgrow((void **)&g->names, &cap, g->n + 1, sizeof *g->names);
			g->names[g->n++] = plain ? ap_py_arena_strndup(p->mod, s + i, e - i)
			                         : ap_py_arena_strndup(p->mod, b.data, b.len);
			ap_buf_free(&b);
		} else if (!(kind == T_OP && code == ',')) {
			names = false;
		}
		i = e;
	}
	return g;
}
