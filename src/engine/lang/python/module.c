/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && !defined(AP_PY_NO_SIMD)
#include <emmintrin.h>
#endif

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/python/python.h"

/* The reader is a streaming tokenizer (INDENT/DEDENT as in CPython's) under
 * a statement reader that descends only into module-level compound statements
 * and class bodies: every level of its recursion consumed an INDENT, so it
 * recurses at most AP_PY_MAX_DEPTH deep. Function bodies are skimmed (skim:
 * most of their tokens are passed over, as the tokenizer would read them, and
 * never made current), and read again from the source when a bound is asked
 * for; so are the parts of parameters past their names (params_tail). A
 * failure is sticky: the tokenizer hands out only T_END afterwards, so every
 * loop of the reader ends without checking for errors on its own.
 *
 * The reader works on the module's copy of the source, which SRC_PAD NULs
 * follow: the fast scans stop at the first without a bound check, and read
 * ahead into them, never into the caller's bytes. The strings and parameter
 * arrays of a module live in one arena (struct module). */

/* --- Tokens --------------------------------------------------------------- */

/* T_CUT stands for tokens a statement did not keep (see PART_KEEP). */
enum { T_END, T_NEWLINE, T_INDENT, T_DEDENT, T_NAME, T_NUMBER, T_STRING, T_OP, T_CUT };

/* Offsets fit 32 bits since ap_py_parse turns away inputs of 4 GiB. */
typedef struct tok {
	uint32_t off;
	uint32_t len;
	uint32_t line;
	uint8_t kind;
	uint8_t code;  /* T_OP: the operator's code; T_NAME: the keyword's, 0 for others */
	uint8_t depth; /* brackets open around it; an opener or closer counts those outside */
	bool plain;    /* T_STRING: a str constant (no b or f prefix) */
} tok;

static const bool ident_chars[256] = {
	['0' ... '9'] = true, ['A' ... 'Z'] = true, ['_'] = true,
	['a' ... 'z'] = true, [0x80 ... 0xff] = true,
};

/* What the tokenizer does with a byte: C_OP (0) is an operator or any other
 * byte alone. */
enum { C_OP, C_SPACE, C_NL, C_HASH, C_BSLASH, C_NAME, C_DIGIT, C_QUOTE, C_DOT };

static const uint8_t byte_class[256] = {
	[' '] = C_SPACE, ['\t'] = C_SPACE, ['\f'] = C_SPACE, ['\r'] = C_SPACE,
	['\n'] = C_NL, ['#'] = C_HASH, ['\\'] = C_BSLASH,
	['A' ... 'Z'] = C_NAME, ['_'] = C_NAME, ['a' ... 'z'] = C_NAME, [0x80 ... 0xff] = C_NAME,
	['0' ... '9'] = C_DIGIT, ['"'] = C_QUOTE, ['\''] = C_QUOTE, ['.'] = C_DOT,
};

/* The bytes a string body stops at: its quote, a backslash, a line end. */
enum { SB_BSLASH = 1, SB_DQ = 2, SB_SQ = 4, SB_EOL = 8 };

static const uint8_t string_stops[256] = {
	['\\'] = SB_BSLASH, ['"'] = SB_DQ, ['\''] = SB_SQ, ['\n'] = SB_EOL, ['\r'] = SB_EOL,
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_start(char c)
{
	return ident_chars[(unsigned char)c] && !is_digit(c);
}

static unsigned count_lines(const char *s, size_t len)
{
	unsigned k = 0;

	/* Most strings are short: memchr's call would cost more than it saves. */
	if (len <= 32) {
		for (size_t i = 0; i < len; i++)
			k += s[i] == '\n';
		return k;
	}
	for (const char *q = s; (q = memchr(q, '\n', len - (size_t)(q - s))) != NULL; q++)
		k++;
	return k;
}

/* Operators of more than one byte have codes from 128 on; one of one byte
 * is coded by the byte itself. */
enum {
	OP_POW_ASSIGN = 128, OP_FLOORDIV_ASSIGN, OP_RSHIFT_ASSIGN, OP_LSHIFT_ASSIGN, OP_ELLIPSIS,
	OP_POW, OP_FLOORDIV, OP_EQ, OP_NE, OP_LE, OP_GE, OP_LSHIFT, OP_RSHIFT, OP_ARROW, OP_WALRUS,
	OP_ADD_ASSIGN, OP_SUB_ASSIGN, OP_MUL_ASSIGN, OP_DIV_ASSIGN, OP_MOD_ASSIGN, OP_AND_ASSIGN,
	OP_OR_ASSIGN, OP_XOR_ASSIGN, OP_MATMUL_ASSIGN, OP_END
};

static bool augassign_code(unsigned code)
{
	return code <= OP_LSHIFT_ASSIGN ? code >= OP_POW_ASSIGN : code >= OP_ADD_ASSIGN;
}

/* Longest match; *code the operator's code. */
static size_t lex_punct(const char *s, size_t i, size_t n, uint8_t *code)
{
	char c = s[i];
	char d = i + 1 < n ? s[i + 1] : '\0';
	char e = i + 2 < n ? s[i + 2] : '\0';
	uint8_t two = 0, three = 0; /* the code with d, and with d and e */

	*code = (uint8_t)c;
	switch (c) {
	case '*':
		if (d == '*') {
			two = OP_POW;
			three = e == '=' ? OP_POW_ASSIGN : 0;
		} else if (d == '=') {
			two = OP_MUL_ASSIGN;
		}
		break;
	case '/':
		if (d == '/') {
			two = OP_FLOORDIV;
			three = e == '=' ? OP_FLOORDIV_ASSIGN : 0;
		} else if (d == '=') {
			two = OP_DIV_ASSIGN;
		}
		break;
	case '>':
		if (d == '>') {
			two = OP_RSHIFT;
			three = e == '=' ? OP_RSHIFT_ASSIGN : 0;
		} else if (d == '=') {
			two = OP_GE;
		}
		break;
	case '<':
		if (d == '<') {
			two = OP_LSHIFT;
			three = e == '=' ? OP_LSHIFT_ASSIGN : 0;
		} else if (d == '=') {
			two = OP_LE;
		}
		break;
	case '.':
		three = d == '.' && e == '.' ? OP_ELLIPSIS : 0;
		break;
	case '-':
		two = d == '>' ? OP_ARROW : d == '=' ? OP_SUB_ASSIGN : 0;
		break;
	case '=':
		two = d == '=' ? OP_EQ : 0;
		break;
	case '!':
		two = d == '=' ? OP_NE : 0;
		break;
	case ':':
		two = d == '=' ? OP_WALRUS : 0;
		break;
	case '+':
		two = d == '=' ? OP_ADD_ASSIGN : 0;
		break;
	case '%':
		two = d == '=' ? OP_MOD_ASSIGN : 0;
		break;
	case '&':
		two = d == '=' ? OP_AND_ASSIGN : 0;
		break;
	case '|':
		two = d == '=' ? OP_OR_ASSIGN : 0;
		break;
	case '^':
		two = d == '=' ? OP_XOR_ASSIGN : 0;
		break;
	case '@':
		two = d == '=' ? OP_MATMUL_ASSIGN : 0;
		break;
	default:
		break;
	}
	if (three != 0) {
		*code = three;
		return i + 3;
	}
	if (two != 0) {
		*code = two;
		return i + 2;
	}
	return i + 1;
}

/* Digits with single underscores between them, as Python writes 1_000. */
static size_t lex_digits(const char *s, size_t i, size_t n)
{
	while (i < n && (is_digit(s[i]) || (s[i] == '_' && i + 1 < n && is_digit(s[i + 1]))))
		i++;
	return i;
}

static size_t lex_number(const char *s, size_t i, size_t n)
{
	if (s[i] == '0' && i + 1 < n && strchr("xXoObB", s[i + 1]) != NULL && s[i + 1] != '\0') {
		i += 2;
		while (i < n && (ident_chars[(unsigned char)s[i]] && (unsigned char)s[i] < 0x80))
			i++;
		return i;
	}
	i = lex_digits(s, i, n);
	if (i < n && s[i] == '.')
		i = lex_digits(s, i + 1, n);
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t k = i + 1;
		if (k < n && (s[k] == '+' || s[k] == '-'))
			k++;
		if (k < n && is_digit(s[k]))
			i = lex_digits(s, k, n);
	}
	if (i < n && (s[i] == 'j' || s[i] == 'J'))
		i++;
	return i;
}

enum {
	KW_FALSE = 1, KW_NONE, KW_TRUE, KW_AND, KW_AS, KW_ASSERT, KW_ASYNC, KW_AWAIT, KW_BREAK,
	KW_CLASS, KW_CONTINUE, KW_DEF, KW_DEL, KW_ELIF, KW_ELSE, KW_EXCEPT, KW_FINALLY, KW_FOR,
	KW_FROM, KW_GLOBAL, KW_IF, KW_IMPORT, KW_IN, KW_IS, KW_LAMBDA, KW_NONLOCAL, KW_NOT, KW_OR,
	KW_PASS, KW_RAISE, KW_RETURN, KW_TRY, KW_WHILE, KW_WITH, KW_YIELD, KW_END
};

/* The keyword code of the name s[0, len), 0 for other names: by length,
 * then by the first byte, then one comparison. */
static uint8_t keyword(const char *s, size_t len)
{
#define KW(w, k) return memcmp(s, w, sizeof w - 1) == 0 ? (uint8_t)(k) : 0
	switch (len) {
	case 2:
		switch (s[0]) {
		case 'a':
			KW("as", KW_AS);
		case 'i':
			return s[1] == 'f' ? KW_IF : s[1] == 'n' ? KW_IN : s[1] == 's' ? KW_IS : 0;
		case 'o':
			KW("or", KW_OR);
		}
		return 0;
	case 3:
		switch (s[0]) {
		case 'a':
			KW("and", KW_AND);
		case 'd':
			if (s[1] == 'e' && s[2] == 'f')
				return KW_DEF;
			KW("del", KW_DEL);
		case 'f':
			KW("for", KW_FOR);
		case 'n':
			KW("not", KW_NOT);
		case 't':
			KW("try", KW_TRY);
		}
		return 0;
	case 4:
		switch (s[0]) {
		case 'N':
			KW("None", KW_NONE);
		case 'T':
			KW("True", KW_TRUE);
		case 'e':
			if (memcmp(s, "elif", 4) == 0)
				return KW_ELIF;
			KW("else", KW_ELSE);
		case 'f':
			KW("from", KW_FROM);
		case 'p':
			KW("pass", KW_PASS);
		case 'w':
			KW("with", KW_WITH);
		}
		return 0;
	case 5:
		switch (s[0]) {
		case 'F':
			KW("False", KW_FALSE);
		case 'a':
			if (memcmp(s, "async", 5) == 0)
				return KW_ASYNC;
			KW("await", KW_AWAIT);
		case 'b':
			KW("break", KW_BREAK);
		case 'c':
			KW("class", KW_CLASS);
		case 'r':
			KW("raise", KW_RAISE);
		case 'w':
			KW("while", KW_WHILE);
		case 'y':
			KW("yield", KW_YIELD);
		}
		return 0;
	case 6:
		switch (s[0]) {
		case 'a':
			KW("assert", KW_ASSERT);
		case 'e':
			KW("except", KW_EXCEPT);
		case 'g':
			KW("global", KW_GLOBAL);
		case 'i':
			KW("import", KW_IMPORT);
		case 'l':
			KW("lambda", KW_LAMBDA);
		case 'r':
			KW("return", KW_RETURN);
		}
		return 0;
	case 7:
		KW("finally", KW_FINALLY);
	case 8:
		if (s[0] == 'c')
			KW("continue", KW_CONTINUE);
		KW("nonlocal", KW_NONLOCAL);
	default:
		return 0;
	}
#undef KW
}

/* How a string literal ends: *bad says it did not. */
enum { STR_OK, STR_UNTERMINATED, STR_UNTERMINATED_TRIPLE, STR_TOO_DEEP };

/* Whether s[i] begins three of the same quote. */
static bool triple_at(const char *s, size_t i, size_t n)
{
	return i + 2 < n && s[i + 1] == s[i] && s[i + 2] == s[i];
}

/* Whether the backslash at s[i] escapes a CRLF. */
static bool escaped_crlf(const char *s, size_t i, size_t n)
{
	return i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n';
}

/* A string without replacement fields, from its opening quote. */
static size_t lex_string(const char *s, size_t i, size_t n, int *bad)
{
	char q = s[i];
	bool triple = triple_at(s, i, n);
	size_t j = i + (triple ? 3 : 1);
	unsigned stop = SB_BSLASH | (q == '"' ? SB_DQ : SB_SQ) | (triple ? 0 : SB_EOL);

	/* A triple-quoted string (a docstring, mostly) stops only at its quote
	 * and at backslashes: memchr finds the next quote at k (once: it stays
	 * the next till j passes it) and any backslash before it. */
	for (size_t k = 0; triple && j < n;) {
		const char *bs;
		if (k < j) {
			const char *at = memchr(s + j, q, n - j);
			if (at == NULL)
				break;
			k = (size_t)(at - s);
		}
		bs = memchr(s + j, '\\', k - j);
		if (bs != NULL) {
			j = (size_t)(bs - s);
			j += escaped_crlf(s, j, n) ? 3 : 2;
			continue;
		}
		if (k + 2 < n && s[k + 1] == q && s[k + 2] == q)
			return k + 3;
		j = k + 1;
	}
	for (;;) {
		char c;
		while (j < n && !(string_stops[(unsigned char)s[j]] & stop))
			j++;
		if (j >= n)
			break;
		c = s[j];
		if (c == '\\') {
			/* Even in a raw string a backslash keeps the next byte from closing it. */
			j += escaped_crlf(s, j, n) ? 3 : 2;
			continue;
		}
		if (c == q) {
			if (!triple)
				return j + 1;
			if (j + 2 < n && s[j + 1] == q && s[j + 2] == q)
				return j + 3;
		} else if (c == '\n' || (j + 1 < n && s[j + 1] == '\n')) {
			/* Not triple-quoted, or SB_EOL would not have stopped here. */
			*bad = STR_UNTERMINATED;
			return j;
		}
		j++;
	}
	*bad = triple ? STR_UNTERMINATED_TRIPLE : STR_UNTERMINATED;
	return n;
}

enum { PFX_STRING = 1, PFX_RAW = 2, PFX_BYTES = 4, PFX_F = 8 };

/* Whether s[a, b) is a string prefix: r, u, b, f, rb, br, fr, rf in any case;
 * PFX_STRING and what the prefix says, or 0. */
static unsigned string_prefix(const char *s, size_t a, size_t b)
{
	unsigned flags = PFX_STRING;
	bool u = false;

	if (b - a > 2)
		return 0;
	for (size_t k = a; k < b; k++) {
		unsigned f = 0;
		switch (s[k] | 0x20) {
		case 'r':
			f = PFX_RAW;
			break;
		case 'b':
			f = PFX_BYTES;
			break;
		case 'f':
			f = PFX_F;
			break;
		case 'u':
			u = true;
			break;
		default:
			return 0;
		}
		if (flags & f)
			return 0;
		flags |= f;
	}
	if (b - a == 2 && (!(flags & PFX_RAW) || u))
		return 0;
	return flags;
}

/* One level of an f-string being read: its literal text, a replacement
 * field's expression, or the field's format spec. */
struct fframe {
	enum { F_TEXT, F_EXPR, F_SPEC } kind;
	char q;          /* F_TEXT: the quote */
	bool triple;     /* F_TEXT */
	bool raw;        /* F_TEXT */
	size_t text;     /* the F_TEXT frame whose literal this is or is in */
	unsigned parens; /* F_EXPR: brackets open in it */
};

/* An f-string from its opening quote. Python 3.12 reads the expressions in
 * replacement fields as code, so they may hold strings with the same quote,
 * comments and line ends; this reads them so too, older f-strings being
 * read the same either way. The frames are a stack, not recursion. */
static size_t lex_fstring(const char *s, size_t i, size_t n, bool raw, int *bad)
{
	struct fframe st[AP_PY_MAX_DEPTH];
	size_t top = 1;
	size_t j;

	st[0] = (struct fframe){F_TEXT, s[i], triple_at(s, i, n), raw, 0, 0};
	j = i + (st[0].triple ? 3 : 1);
	while (j < n) {
		struct fframe *f = &st[top - 1];
		const struct fframe *t = &st[f->text];
		char c = s[j];

		if (f->kind != F_EXPR) {
			if (c == '\\') {
				/* \{ and \} are no escapes; \N{...} is one outside raw strings. */
				if (j + 1 < n && (s[j + 1] == '{' || s[j + 1] == '}')) {
					j++;
				} else if (!t->raw && j + 2 < n && s[j + 1] == 'N' &&
				           s[j + 2] == '{') {
					const char *e = memchr(s + j, '}', n - j);
					j = e ? (size_t)(e - s) + 1 : n;
				} else {
					j += escaped_crlf(s, j, n) ? 3 : 2;
				}
				continue;
			}
			if (c == '{' && f->kind == F_TEXT && j + 1 < n && s[j + 1] == '{') {
				j += 2;
			} else if (c == '{') {
				if (top == AP_PY_MAX_DEPTH) {
					*bad = STR_TOO_DEEP;
					return j;
				}
				st[top++] = (struct fframe){F_EXPR, 0, false, false, f->text, 0};
				j++;
			} else if (c == '}') {
				/* A spec ends with its field; }} in text is a brace. */
				if (f->kind == F_SPEC)
					top -= 2;
				j += f->kind == F_TEXT && j + 1 < n && s[j + 1] == '}' ? 2 : 1;
			} else if (c == t->q && (!t->triple || triple_at(s, j, n))) {
				j += t->triple ? 3 : 1;
				top = f->text;
				if (top == 0)
					return j;
			} else if (c == '\n' && !t->triple) {
				*bad = STR_UNTERMINATED;
				return j;
			} else {
				j++;
			}
			continue;
		}
		if (is_ident_start(c)) {
			size_t k = j + 1;
			unsigned pfx;
			while (k < n && ident_chars[(unsigned char)s[k]])
				k++;
			if (k >= n || (s[k] != '"' && s[k] != '\'') ||
			    !((pfx = string_prefix(s, j, k)) & PFX_F)) {
				j = k;
				continue;
			}
			if (top == AP_PY_MAX_DEPTH) {
				*bad = STR_TOO_DEEP;
				return j;
			}
			st[top] = (struct fframe){F_TEXT, s[k], triple_at(s, k, n),
			                          (pfx & PFX_RAW) != 0, top, 0};
			j = k + (st[top].triple ? 3 : 1);
			top++;
		} else if (c == '"' || c == '\'') {
			j = lex_string(s, j, n, bad);
			if (*bad)
				return j;
		} else if (c == '#') {
			const char *e = memchr(s + j, '\n', n - j);
			j = e ? (size_t)(e - s) : n;
		} else if (c == '(' || c == '[' || c == '{') {
			f->parens++;
			j++;
		} else if ((c == ')' || c == ']' || c == '}') && f->parens > 0) {
			f->parens--;
			j++;
		} else if (c == '}') {
			top--;
			j++;
		} else if (c == ':' && f->parens == 0) {
			if (top == AP_PY_MAX_DEPTH) {
				*bad = STR_TOO_DEEP;
				return j;
			}
			st[top++] = (struct fframe){F_SPEC, 0, false, false, f->text, 0};
			j++;
		} else {
			j++;
		}
	}
	*bad = st[0].triple ? STR_UNTERMINATED_TRIPLE : STR_UNTERMINATED;
	return n;
}

/* End of the token at s[i] (not whitespace); *kind its kind, *plain whether a
 * string is a str, *bad as the string readers'. */
static inline __attribute__((always_inline)) size_t
lex_token(const char *s, size_t i, size_t n, uint8_t *kind, uint8_t *code, bool *plain, int *bad)
{
	char c = s[i];

	*bad = STR_OK;
	*plain = true;
	*code = 0;
	switch (byte_class[(unsigned char)c]) {
	case C_NAME: {
		size_t j = i + 1;
		unsigned pfx;
		while (j < n && ident_chars[(unsigned char)s[j]])
			j++;
		/* Prefixes are at most two bytes. */
		if (j - i <= 2 && j < n && (s[j] == '"' || s[j] == '\'') &&
		    (pfx = string_prefix(s, i, j)) != 0) {
			*kind = T_STRING;
			*plain = !(pfx & (PFX_BYTES | PFX_F));
			if (pfx & PFX_F)
				return lex_fstring(s, j, n, (pfx & PFX_RAW) != 0, bad);
			return lex_string(s, j, n, bad);
		}
		*kind = T_NAME;
		*code = keyword(s + i, j - i);
		return j;
	}
	case C_DOT:
		if (!(i + 1 < n && is_digit(s[i + 1])))
			break;
		/* fallthrough */
	case C_DIGIT:
		*kind = T_NUMBER;
		return lex_number(s, i, n);
	case C_QUOTE:
		*kind = T_STRING;
		return lex_string(s, i, n, bad);
	default:
		break;
	}
	*kind = T_OP;
	return lex_punct(s, i, n, code);
}

size_t ap_py_token_end(const char *s, size_t i, size_t n)
{
	uint8_t kind, code;
	bool plain;
	int bad;

	if (i >= n)
		return n;
	return lex_token(s, i, n, &kind, &code, &plain, &bad);
}

/* --- Memory ---------------------------------------------------------------- */

/* Every string and parameter array of a module lies in its arena: chunks
 * that only grow, freed together with the module. What a reading drops (a
 * docstring, an __all__ given anew) stays there till then, no more than the
 * source holds. */
struct chunk {
	struct chunk *next;
	size_t size, used;
	_Alignas(max_align_t) char data[];
};

/* The module with what ap_py_module_free needs beyond it. */
struct module {
	ap_py_module pub;
	struct chunk *arena;
};

static void *arena_alloc(struct module *mod, size_t size)
{
	struct chunk *c = mod->arena;
	void *r;

	size = (size + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
	if (c == NULL || c->size - c->used < size) {
		size_t want = c ? c->size * 2 : 1024 + mod->pub.src_len / 8;
		if (want < size)
			want = size;
		c = ap_xmalloc(offsetof(struct chunk, data) + want);
		c->next = mod->arena;
		c->size = want;
		c->used = 0;
		mod->arena = c;
	}
	r = c->data + c->used;
	c->used += size;
	return r;
}

static char *arena_strndup(struct module *mod, const char *s, size_t len)
{
	char *d = arena_alloc(mod, len + 1);

	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

/* --- Tokenizer ------------------------------------------------------------ */

struct parser {
	const char *s;
	size_t n;
	size_t pos;
	unsigned line;
	bool at_bol;          /* at the start of a logical line: indentation comes next */
	bool line_has_tokens; /* since the last NEWLINE */
	bool dead;            /* a failure was reported */
	unsigned dedents;     /* DEDENT tokens still to hand out */
	uint32_t indent[AP_PY_MAX_DEPTH + 1];
	size_t nindent;
	char bracket[AP_PY_MAX_DEPTH];
	unsigned bracket_line[AP_PY_MAX_DEPTH];
	size_t nbracket;

	tok t; /* the current token */
	ap_py_module *m;
	struct module *mod; /* m's arena */
	ap_buf scratch;     /* a string being put together */
	ap_py_param *pv;    /* the parameters of the def being read */
	size_t pcap;
	const char *const *false_names;
	int err;
	/* the tokens of the statement or header being read */
	tok *sv;
	size_t sn;
	size_t scap;
	size_t defs_cap, bindings_cap, all_cap, strings_cap;
	enum { ALL_NONE, ALL_KNOWN, ALL_UNKNOWN } all_state;
};

static void fail(struct parser *p, int code, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void fail(struct parser *p, int code, unsigned line, const char *fmt, ...)
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
	fail(p, AP_ELIMIT, p->line, "nesting deeper than %d levels", AP_PY_MAX_DEPTH);
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

/* Skips blank and comment-only lines and measures the indentation of the
 * next one (a tab advances to the next multiple of 8, as in CPython); true
 * when that made an INDENT or DEDENT in *t. */
static bool indentation(struct parser *p, tok *t)
{
	const char *s = p->s;
	size_t n = p->n;
	size_t i, col;

	for (;;) {
		i = p->pos + leading_spaces(s + p->pos);
		col = i - p->pos;
		for (; i < n; i++) {
			if (s[i] == ' ')
				col++;
			else if (s[i] == '\t')
				col = (col / 8 + 1) * 8;
			else if (s[i] == '\f')
				col = 0;
			else if (s[i] != '\r')
				break;
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
	/* Columns past 32 bits (a line of billions of tabs) all read as one. */
	if (col > UINT32_MAX)
		col = UINT32_MAX;
	p->at_bol = false;
	p->pos = i;
	if (i >= n || col == p->indent[p->nindent - 1])
		return false;
	if (col > p->indent[p->nindent - 1]) {
		if (too_deep(p))
			return false;
		p->indent[p->nindent++] = (uint32_t)col;
		set_tok(p, t, T_INDENT, i, 0);
		return true;
	}
	while (p->nindent > 1 && p->indent[p->nindent - 1] > col) {
		p->nindent--;
		p->dedents++;
	}
	if (p->indent[p->nindent - 1] != col) {
		fail(p, AP_EINPUT, p->line, "unindent does not match any outer indentation level");
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
		fail(p, AP_EINPUT, p->line, "unbalanced '%c'", c);
		return false;
	}
	if (p->bracket[p->nbracket - 1] != o) {
		fail(p, AP_EINPUT, p->line, "mismatched '%c' for '%c' of line %u", c,
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
	if (p->at_bol && indentation(p, t))
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

		switch (byte_class[(unsigned char)c]) {
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
				fail(p, AP_EINPUT, p->line,
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
				if (indentation(p, t))
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
		e = lex_token(s, i, n, &kind, &code, &plain, &bad);
		if (bad == STR_TOO_DEEP) {
			fail(p, AP_ELIMIT, p->line, "nesting deeper than %d levels",
			     AP_PY_MAX_DEPTH);
			goto dead;
		}
		if (bad != STR_OK) {
			fail(p, AP_EINPUT, p->line,
			     bad == STR_UNTERMINATED_TRIPLE ? "unterminated triple-quoted string"
			                                    : "unterminated string");
			goto dead;
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
			p->line += count_lines(s + i, e - i);
		return;
	}
	p->pos = i;
	if (p->nbracket > 0) {
		fail(p, AP_EINPUT, p->bracket_line[p->nbracket - 1], "unbalanced '%c'",
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

/* --- Reader helpers ------------------------------------------------------- */

/* The bytes of a (terminated) string token between its quotes. */
static const char *string_body(const struct parser *p, const tok *t, size_t *len)
{
	const char *s = p->s + t->off;
	size_t plen = 0, q;

	while (s[plen] != '"' && s[plen] != '\'')
		plen++;
	q = t->len - plen >= 6 && s[plen + 1] == s[plen] && s[plen + 2] == s[plen] ? 3 : 1;
	*len = t->len - plen - 2 * q;
	return s + plen + q;
}

static void record_string(struct parser *p, const tok *t)
{
	ap_py_module *m = p->m;
	size_t len;
	const char *body = string_body(p, t, &len);

	ap_xgrow((void **)&m->strings, &p->strings_cap, m->nstrings + 1, sizeof *m->strings);
	m->strings[m->nstrings].value = arena_strndup(p->mod, body, len);
	m->strings[m->nstrings].line = t->line;
	m->nstrings++;
}

/* The next token into p->t. Names and operators in the middle of a line are
 * read here, as lex_next would read them; the rest is lex_next's. */
static void advance(struct parser *p)
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
		} else if (byte_class[(unsigned char)s[i]] == C_SPACE) {
			i++;
		} else {
			break;
		}
	}
	p->pos = i;
	switch (byte_class[(unsigned char)s[i]]) {
	case C_NAME:
		for (j = i + 1; ident_chars[(unsigned char)s[j]]; j++)
			;
		if (j - i <= 2 && (s[j] == '"' || s[j] == '\''))
			goto slow;
		code = keyword(s + i, j - i);
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
			j = lex_punct(s, i, p->n, &code);
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
		record_string(p, t);
}

/* Where the strings of a statement starting at the current token begin. */
static size_t string_mark(const struct parser *p)
{
	return p->m->nstrings - (p->t.kind == T_STRING);
}

/* Drops the strings from mark on: they made a docstring. */
static void drop_strings(struct parser *p, size_t mark)
{
	if (p->m->nstrings > mark)
		p->m->nstrings = mark;
}

static bool is_op(const tok *t, unsigned code)
{
	return t->kind == T_OP && t->code == code;
}

static bool is_kw(const tok *t, unsigned code)
{
	return t->kind == T_NAME && t->code == code;
}

static bool is_word(const struct parser *p, const tok *t, const char *w)
{
	return t->kind == T_NAME && t->len == strlen(w) && memcmp(p->s + t->off, w, t->len) == 0;
}

static bool is_keyword(const tok *t)
{
	return t->kind == T_NAME && t->code != 0;
}

/* A name that an assignment can bind. */
static bool is_ident(const tok *t)
{
	return t->kind == T_NAME && t->code == 0;
}

static char *tok_str(const struct parser *p, const tok *t)
{
	return arena_strndup(p->mod, p->s + t->off, t->len);
}

/* The scratch string into the arena; scratch emptied. */
static char *scratch_str(struct parser *p)
{
	char *r = arena_strndup(p->mod, p->scratch.len ? p->scratch.data : "", p->scratch.len);

	p->scratch.len = 0;
	return r;
}

struct ctx {
	const char *prefix; /* NULL at module level; "Cls." in a class body */
	bool live;          /* the arm is taken on a default import, or may be */
	bool in_except;
};

static ap_py_binding *add_binding(struct parser *p, const struct ctx *c, ap_py_bind_kind kind,
                                  const tok *name)
{
	ap_py_module *m = p->m;
	ap_py_binding *b;

	ap_xgrow((void **)&m->bindings, &p->bindings_cap, m->nbindings + 1, sizeof *m->bindings);
	b = &m->bindings[m->nbindings++];
	memset(b, 0, sizeof *b);
	b->kind = kind;
	b->name = kind == AP_PY_BIND_STAR ? NULL : tok_str(p, name);
	b->line = name->line;
	b->in_except = c->in_except;
	return b;
}

/* Tokens are kept in p->sv for the reading of module-level statements, but
 * a part of one (between depth-0 '=', ':', augmented assignments, 'in' and
 * 'as') keeps at most PART_KEEP: a large data literal costs no memory. A cut
 * part is marked by a T_CUT token and binds nothing (no target list is that
 * long). Imports and statements on __all__, which can be long, keep all. */
#define PART_KEEP 4096

struct collector {
	const struct ctx *bind; /* binds the names before := here; NULL: none */
	bool keep;              /* keep the tokens */
	bool whole;             /* keep every token */
	bool cut;               /* the current part was cut */
	size_t part;            /* tokens kept of the current part */
	tok prev;
};

static bool is_augassign(const tok *t)
{
	return t->kind == T_OP && augassign_code(t->code);
}

static void collect_start(struct parser *p, struct collector *k, const struct ctx *bind,
                          bool keep)
{
	memset(k, 0, sizeof *k);
	k->bind = bind;
	k->keep = keep;
	k->whole = is_word(p, &p->t, "__all__") || is_kw(&p->t, KW_IMPORT) ||
	           is_kw(&p->t, KW_FROM);
	p->sn = 0;
}

/* Takes the current token into the statement being collected. */
static void collect(struct parser *p, struct collector *k)
{
	tok t = p->t;

	if (k->bind != NULL && is_op(&t, OP_WALRUS) && is_ident(&k->prev))
		add_binding(p, k->bind, AP_PY_BIND_OTHER, &k->prev);
	k->prev = t;
	if (!k->keep)
		return;
	if (t.depth == 0 && (is_op(&t, '=') || is_op(&t, ':') || is_augassign(&t) ||
	                     is_kw(&t, KW_IN) || is_kw(&t, KW_AS))) {
		k->part = 0;
		k->cut = false;
	} else if (k->part >= PART_KEEP && !k->whole) {
		if (k->cut)
			return;
		k->cut = true;
		t = (tok){.kind = T_CUT, .depth = t.depth};
	}
	k->part++;
	if (p->sn == p->scap)
		ap_xgrow((void **)&p->sv, &p->scap, p->sn + 1, sizeof *p->sv);
	p->sv[p->sn++] = t;
}

/* Whether sv[a, b) lost tokens to PART_KEEP. */
static bool cut(const struct parser *p, size_t a, size_t b)
{
	for (size_t i = a; i < b; i++)
		if (p->sv[i].kind == T_CUT)
			return true;
	return false;
}

/* Collects a compound statement's header, from its keyword (the current
 * token) to the ':' that ends it (consumed); the ':' of a lambda does not.
 * bind and keep as for the collector. */
static bool collect_header(struct parser *p, const struct ctx *bind, bool keep)
{
	struct collector k;
	unsigned lambdas = 0;
	unsigned depth = p->t.depth;

	collect_start(p, &k, bind, keep);
	for (;;) {
		if (p->t.kind == T_NEWLINE || p->t.kind == T_END) {
			fail(p, AP_EINPUT, p->t.line, "expected ':'");
			return false;
		}
		if (p->t.depth == depth && is_kw(&p->t, KW_LAMBDA)) {
			lambdas++;
		} else if (p->t.depth == depth && is_op(&p->t, ':')) {
			if (lambdas == 0) {
				advance(p);
				return true;
			}
			lambdas--;
		}
		collect(p, &k);
		advance(p);
	}
}

/* The index of the closer of the opener at v[i], or (size_t)-1 before b. */
static size_t closer(const struct parser *p, size_t i, size_t b)
{
	for (size_t k = i + 1; k < b; k++)
		if (p->sv[k].depth <= p->sv[i].depth)
			return k;
	return (size_t)-1;
}

/* --- Bindings ------------------------------------------------------------- */

/* Binds the names of the target list sv[a, b), whose top level has depth d:
 * names, starred names and bracketed target lists; attributes and subscripts
 * bind no name. Recursion follows the brackets, AP_PY_MAX_DEPTH at most. */
static void bind_names(struct parser *p, const struct ctx *c, size_t a, size_t b, unsigned d)
{
	const tok *v = p->sv;

	while (a < b) {
		size_t e = a;
		while (e < b && !(v[e].depth == d && is_op(&v[e], ',')))
			e++;
		if (e - a == 1 && is_ident(&v[a])) {
			add_binding(p, c, AP_PY_BIND_OTHER, &v[a]);
		} else if (e - a == 2 && is_op(&v[a], '*') && is_ident(&v[a + 1])) {
			add_binding(p, c, AP_PY_BIND_OTHER, &v[a + 1]);
		} else if (e - a >= 2 && (is_op(&v[a], '(') || is_op(&v[a], '[')) &&
		           closer(p, a, e) == e - 1) {
			bind_names(p, c, a + 1, e - 1, d + 1);
		}
		a = e + 1;
	}
}

static void bind_targets(struct parser *p, const struct ctx *c, size_t a, size_t b, unsigned d)
{
	if (!cut(p, a, b))
		bind_names(p, c, a, b, d);
}

static void import_stmt(struct parser *p, const struct ctx *c)
{
	const tok *v = p->sv;
	size_t i = 1, n = p->sn;

	while (i < n && v[i].kind == T_NAME) {
		const tok *bound = &v[i];
		ap_py_binding *b;

		p->scratch.len = 0;
		for (;;) {
			ap_buf_append(&p->scratch, p->s + v[i].off, v[i].len);
			i++;
			if (i + 1 >= n || !is_op(&v[i], '.') || v[i + 1].kind != T_NAME)
				break;
			ap_buf_putc(&p->scratch, '.');
			i++;
		}
		if (i + 1 < n && is_kw(&v[i], KW_AS) && v[i + 1].kind == T_NAME) {
			bound = &v[i + 1];
			i += 2;
		}
		b = add_binding(p, c, AP_PY_BIND_IMPORT, bound);
		b->module = scratch_str(p);
		if (i >= n || !is_op(&v[i], ','))
			break;
		i++;
	}
}

static void from_stmt(struct parser *p, const struct ctx *c)
{
	const tok *v = p->sv;
	size_t i = 1, n = p->sn;
	char *module;

	p->scratch.len = 0;
	for (; i < n && !is_kw(&v[i], KW_IMPORT); i++)
		ap_buf_append(&p->scratch, p->s + v[i].off, v[i].len);
	module = scratch_str(p);
	i++;
	if (i < n && is_op(&v[i], '*')) {
		add_binding(p, c, AP_PY_BIND_STAR, &v[i])->module = module;
		return;
	}
	if (i < n && is_op(&v[i], '('))
		i++;
	while (i < n && v[i].kind == T_NAME) {
		const tok *target = &v[i], *bound = &v[i];
		ap_py_binding *b;
		i++;
		if (i + 1 < n && is_kw(&v[i], KW_AS) && v[i + 1].kind == T_NAME) {
			bound = &v[i + 1];
			i += 2;
		}
		b = add_binding(p, c, AP_PY_BIND_FROM, bound);
		/* The bindings of one statement share the arena's copy. */
		b->module = module;
		b->target = tok_str(p, target);
		if (i >= n || !is_op(&v[i], ','))
			break;
		i++;
	}
}

/* --- __all__ -------------------------------------------------------------- */

static void clear_all(ap_py_module *m)
{
	m->nall = 0;
}

/* Whether sv[a, b) at depth d is a comma-separated list of str literals
 * (adjacent ones concatenated), appended to __all__ when take; a tuple needs
 * a comma unless empty, as ("x") is a string. */
static bool str_elems(struct parser *p, size_t a, size_t b, unsigned d, bool tuple, bool take)
{
	const tok *v = p->sv;
	size_t count = 0, commas = 0;

	while (a < b) {
		size_t g = a;
		while (a < b && v[a].kind == T_STRING && v[a].plain)
			a++;
		if (a == g)
			return false;
		if (take) {
			ap_py_module *m = p->m;
			p->scratch.len = 0;
			for (size_t k = g; k < a; k++) {
				size_t len;
				const char *body = string_body(p, &v[k], &len);
				ap_buf_append(&p->scratch, body, len);
			}
			ap_xgrow((void **)&m->all, &p->all_cap, m->nall + 1, sizeof *m->all);
			m->all[m->nall++] = scratch_str(p);
		}
		count++;
		if (a == b)
			break;
		if (!is_op(&v[a], ',') || v[a].depth != d)
			return false;
		commas++;
		a++;
	}
	return !tuple || count == 0 || commas > 0;
}

/* Whether sv[a, b) at depth d is a list or tuple literal of str literals, or
 * several joined by '+'; its names appended to __all__ when take. */
static bool str_list(struct parser *p, size_t a, size_t b, unsigned d, bool take)
{
	const tok *v = p->sv;

	if (a >= b)
		return false;
	if (v[a].kind == T_STRING)
		return str_elems(p, a, b, d, true, take);
	for (;;) {
		size_t e;
		bool tuple = is_op(&v[a], '(');
		if (!tuple && !is_op(&v[a], '['))
			return false;
		e = closer(p, a, b);
		if (e == (size_t)-1 || !str_elems(p, a + 1, e, d + 1, tuple, take))
			return false;
		a = e + 1;
		if (a == b)
			return true;
		if (a + 1 >= b || !is_op(&v[a], '+'))
			return false;
		a++;
	}
}

/* __all__ = sv[a, b) (add: += or extend). */
static void all_list(struct parser *p, size_t a, size_t b, unsigned d, bool add)
{
	if (add && p->all_state == ALL_UNKNOWN)
		return;
	if (!add)
		clear_all(p->m);
	if (str_list(p, a, b, d, false)) {
		str_list(p, a, b, d, true);
		p->all_state = ALL_KNOWN;
	} else {
		clear_all(p->m);
		p->all_state = ALL_UNKNOWN;
	}
}

/* __all__.extend(...) and __all__.append(...); other expressions leave it. */
static void all_call(struct parser *p)
{
	const tok *v = p->sv;
	size_t n = p->sn;
	bool extend, strings = n > 5;

	if (n < 5 || !is_word(p, &v[0], "__all__") || !is_op(&v[1], '.') ||
	    !is_op(&v[3], '(') || closer(p, 3, n) != n - 1)
		return;
	extend = is_word(p, &v[2], "extend");
	if (!extend && !is_word(p, &v[2], "append"))
		return;
	if (extend) {
		all_list(p, 4, n - 1, 1, true);
		return;
	}
	if (p->all_state == ALL_UNKNOWN)
		return;
	/* append takes one str: literals and nothing else. */
	for (size_t k = 4; k < n - 1; k++)
		strings &= v[k].kind == T_STRING && v[k].plain;
	if (strings) {
		str_elems(p, 4, n - 1, 1, false, true);
		p->all_state = ALL_KNOWN;
	} else {
		clear_all(p->m);
		p->all_state = ALL_UNKNOWN;
	}
}

/* --- Module-level simple statements --------------------------------------- */

/* Binds the target sv[a, b) of an assignment whose value is sv[va, n):
 * a single name is an ALIAS when the value is a bare name. */
static void assign_target(struct parser *p, const struct ctx *c, size_t a, size_t b, size_t va)
{
	const tok *v = p->sv;
	size_t n = p->sn;

	if (b - a != 1 || !is_ident(&v[a])) {
		bind_targets(p, c, a, b, 0);
		return;
	}
	if (is_word(p, &v[a], "__all__"))
		all_list(p, va, n, 0, false);
	if (n - va == 1 && is_ident(&v[va]))
		add_binding(p, c, AP_PY_BIND_ALIAS, &v[a])->target = tok_str(p, &v[va]);
	else
		add_binding(p, c, AP_PY_BIND_OTHER, &v[a]);
}

/* The index of the next '=' at depth 0 from i that is not a lambda's default;
 * n when none. */
static size_t next_assign(const struct parser *p, size_t i)
{
	unsigned lambdas = 0;

	for (; i < p->sn; i++) {
		const tok *t = &p->sv[i];
		if (t->depth != 0)
			continue;
		if (is_kw(t, KW_LAMBDA))
			lambdas++;
		else if (lambdas > 0 && is_op(t, ':'))
			lambdas--;
		else if (lambdas == 0 && is_op(t, '='))
			return i;
	}
	return p->sn;
}

static void simple_stmt(struct parser *p, const struct ctx *c)
{
	const tok *v = p->sv;
	size_t n = p->sn;
	unsigned lambdas = 0;

	if (is_kw(&v[0], KW_IMPORT)) {
		import_stmt(p, c);
		return;
	}
	if (is_kw(&v[0], KW_FROM)) {
		from_stmt(p, c);
		return;
	}
	/* del, global, return, pass, assert ... bind nothing. */
	if (is_keyword(&v[0]))
		return;
	for (size_t i = 0; i < n; i++) {
		if (v[i].depth != 0)
			continue;
		if (is_kw(&v[i], KW_LAMBDA)) {
			lambdas++;
		} else if (is_op(&v[i], ':')) {
			size_t e;
			if (lambdas > 0) {
				lambdas--;
				continue;
			}
			/* An annotation binds only with a value. */
			e = next_assign(p, i + 1);
			if (e < n)
				assign_target(p, c, 0, i, e + 1);
			return;
		} else if (lambdas == 0 && is_op(&v[i], '=')) {
			size_t last = i, a = 0, e;
			while ((e = next_assign(p, last + 1)) < n)
				last = e;
			for (e = i; a < last; a = e + 1, e = next_assign(p, e + 1))
				assign_target(p, c, a, e, last + 1);
			return;
		} else if (lambdas == 0 && is_augassign(&v[i])) {
			if (i == 1 && is_ident(&v[0])) {
				if (is_word(p, &v[0], "__all__")) {
					if (is_op(&v[i], OP_ADD_ASSIGN)) {
						all_list(p, i + 1, n, 0, true);
					} else {
						clear_all(p->m);
						p->all_state = ALL_UNKNOWN;
					}
				}
				add_binding(p, c, AP_PY_BIND_OTHER, &v[0]);
			}
			return;
		}
	}
	all_call(p);
}

/* --- Statements ----------------------------------------------------------- */

static void statements(struct parser *p, const struct ctx *c, bool block, bool doc);
static void statement(struct parser *p, const struct ctx *c, bool doc);

/* The suite after a header's ':': an indented block, or simple statements on
 * the header's line. doc: its first statement may be a docstring. */
static void suite(struct parser *p, const struct ctx *c, bool doc);

/* Simple statements up to the end of the line. A line ending in ':' that no
 * keyword introduced (match, case) heads a block, read like any other. */
static void simple_line(struct parser *p, const struct ctx *c, bool doc, bool one_line)
{
	bool analyze = c->prefix == NULL && c->live;

	for (;;) {
		size_t mark = string_mark(p);
		bool strings_only = true, header;
		tok last = {0};
		size_t count = 0;
		struct collector k;

		collect_start(p, &k, analyze ? c : NULL, analyze);
		while (p->t.kind != T_NEWLINE && p->t.kind != T_END &&
		       !(p->t.depth == 0 && is_op(&p->t, ';'))) {
			strings_only &= p->t.kind == T_STRING && p->t.plain;
			last = p->t;
			count++;
			collect(p, &k);
			advance(p);
		}
		header = !one_line && p->t.kind == T_NEWLINE && count > 0 && last.depth == 0 &&
		         is_op(&last, ':');
		if (doc && count > 0 && strings_only)
			drop_strings(p, mark);
		doc = false;
		if (analyze && count > 0 && !header)
			simple_stmt(p, c);
		if (header) {
			suite(p, c, false);
			return;
		}
		if (p->t.kind != T_OP) {
			if (p->t.kind == T_NEWLINE)
				advance(p);
			return;
		}
		advance(p);
		if (p->t.kind == T_NEWLINE) {
			advance(p);
			return;
		}
	}
}

static void suite(struct parser *p, const struct ctx *c, bool doc)
{
	if (p->t.kind != T_NEWLINE) {
		simple_line(p, c, doc, true);
		return;
	}
	advance(p);
	if (p->t.kind != T_INDENT) {
		fail(p, AP_EINPUT, p->t.line, "expected an indented block");
		return;
	}
	advance(p);
	statements(p, c, true, doc);
}

static void statements(struct parser *p, const struct ctx *c, bool block, bool doc)
{
	for (;;) {
		if (p->t.kind == T_END)
			return;
		if (block && p->t.kind == T_DEDENT) {
			advance(p);
			return;
		}
		if (p->t.kind == T_INDENT) {
			fail(p, AP_EINPUT, p->t.line, "unexpected indent");
			return;
		}
		statement(p, c, doc);
		doc = false;
	}
}

/* NULs after the module's copy of the source: mid_next reads up to 63
 * bytes past one that is not in mid_stops, and the first NUL is; tail_scan
 * up to 20 past one that is not in tail_stops. */
#define SRC_PAD 64

/* The start of the token that holds s[q], lexing from b on: b <= q is a
 * token boundary (or between tokens), and s[b, q) holds only names, numbers
 * and operators (no space, string, comment or line end). The last space
 * before q, if any, is a boundary too: lexing starts there. s is the
 * module's copy, with its NULs. */
static size_t token_start(const char *s, size_t n, size_t b, size_t q)
{
	size_t k = q, e;
	uint8_t code;

	while (k > b && byte_class[(unsigned char)s[k - 1]] != C_SPACE)
		k--;
	while (k < q) {
		switch (byte_class[(unsigned char)s[k]]) {
		case C_NAME:
			for (e = k + 1; ident_chars[(unsigned char)s[e]]; e++)
				;
			/* A prefix and its string. */
			if (e == q && e - k <= 2 && (s[q] == '"' || s[q] == '\'') &&
			    string_prefix(s, k, e) != 0)
				return k;
			break;
		case C_DOT:
			if (!is_digit(s[k + 1])) {
				e = lex_punct(s, k, n, &code);
				break;
			}
			/* fallthrough */
		case C_DIGIT:
			e = lex_number(s, k, n);
			break;
		default:
			e = lex_punct(s, k, n, &code);
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
 * backslashes, brackets and ';'. */
#if !defined(__SSE2__) || defined(AP_PY_NO_SIMD)
static const bool mid_stops[256] = {
	['\0'] = true, ['\n'] = true, ['#'] = true, ['"'] = true, ['\''] = true, ['\\'] = true,
	['('] = true, [')'] = true, ['['] = true, [']'] = true, ['{'] = true, ['}'] = true,
	[';'] = true,
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
 * c | 0x20 == '{', ] and } are c | 0x20 == '}', " and # are c | 1 == '#'. */
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
	return (uint64_t)(unsigned)_mm_movemask_epi8(m);
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

/* The bytes that params_tail stops at: mid_stops, ',', '=' and the 'l' of a
 * lambda (in the scalar version any 'l'). */
#if !defined(__SSE2__) || defined(AP_PY_NO_SIMD)
static const bool tail_stops[256] = {
	['\0'] = true, ['\n'] = true, ['#'] = true, ['"'] = true, ['\''] = true, ['\\'] = true,
	['('] = true, [')'] = true, ['['] = true, [']'] = true, ['{'] = true, ['}'] = true,
	[';'] = true, [','] = true, ['='] = true, ['l'] = true,
};
#endif

/* The first byte from s[i] on that params_tail stops at (there is one: the
 * NUL at s[n]). */
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
 * advance to record), or of anything unusual (an error, the end of input),
 * for advance to read from there; what it passes over it reads as lex_next
 * would, keeping lines and brackets. bound is a token boundary: the end of
 * a token a stop byte ends (not a deeper '=', which may end "==" or "<=");
 * token_start finds where the token holding an '=', a quote or "lambda"
 * begins. */
static bool params_tail(struct parser *p, unsigned depth, bool has_name, bool *has_default)
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
				size_t e = lex_punct(s, k, n, &code);
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
		default: /* an 'l' */
			if (p->nbracket == top && memcmp(s + i, "lambda", 6) == 0) {
				/* The name or number holding it, passed over whole
				 * unless it is the keyword. */
				size_t k = token_start(s, n, bound, i), e;
				uint8_t kind, code;
				bool plain;
				int bad;
				e = lex_token(s, k, n, &kind, &code, &plain, &bad);
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

/* A def's parameters, from its '(' (the current token) to the matching ')'. */
static void params(struct parser *p, size_t di)
{
	unsigned depth = p->t.depth;
	bool kwonly = false;
	/* the segment between commas: its tokens so far, its star, its name */
	size_t k = 0;
	int stars = 0;
	bool slash = false, has_name = false, has_default = false;
	tok name = {0};
	unsigned lambdas = 0;
	/* read into p->pv, then into the arena at their number */
	size_t np = 0;

	advance(p);
	for (;;) {
		bool end = p->t.kind == T_END || (p->t.depth == depth && is_op(&p->t, ')'));
		const tok *t = &p->t;

		if (!end && !(t->depth == depth + 1 && lambdas == 0 && is_op(t, ','))) {
			if (t->depth == depth + 1) {
				if (is_kw(t, KW_LAMBDA))
					lambdas++;
				else if (lambdas > 0 && is_op(t, ':'))
					lambdas--;
				else if (lambdas == 0 && has_name && is_op(t, '='))
					has_default = true;
			}
			if (k == 0 && is_op(t, '/')) {
				slash = true;
			} else if (k == 0 && (is_op(t, '*') || is_op(t, OP_POW))) {
				stars = t->len;
			} else if (k == (stars > 0) && t->kind == T_NAME && !has_name) {
				name = *t;
				has_name = true;
			}
			k++;
			/* Past its start a segment's ',' (or the closing ')') is found
			 * faster: params_tail says whether it read the ','. */
			if (lambdas > 0 || !(has_name || k > (size_t)(stars > 0)) ||
			    !params_tail(p, depth, has_name, &has_default)) {
				advance(p);
				continue;
			}
		}
		/* The segment ends at a ',' or at the end. */
		{
			if (has_name) {
				ap_py_param *pa;
				if (np == p->pcap)
					ap_xgrow((void **)&p->pv, &p->pcap, np + 1, sizeof *p->pv);
				pa = &p->pv[np++];
				pa->name = tok_str(p, &name);
				pa->has_default = has_default;
				pa->kind = stars == 1   ? AP_PY_VARARGS
				           : stars == 2 ? AP_PY_VARKW
				           : kwonly     ? AP_PY_KWONLY
				                        : AP_PY_POS;
			}
			if (stars == 1)
				kwonly = true;
			if (slash)
				for (size_t i = 0; i < np; i++)
					p->pv[i].kind = AP_PY_POSONLY;
			if (end) {
				ap_py_def *d = &p->m->defs[di];
				if (np > 0) {
					d->params = arena_alloc(p->mod, np * sizeof *d->params);
					memcpy(d->params, p->pv, np * sizeof *d->params);
				}
				d->nparams = np;
				break;
			}
			k = 0;
			stars = 0;
			slash = has_name = has_default = false;
			advance(p);
		}
	}
	advance(p);
}

/* Where skip_body stands in the statements of a function body, for the
 * docstrings of the defs and classes nested in it. */
struct body_state {
	enum { S_STMT, S_MID, S_HEADER, S_COLON, S_INDENT, S_DOC } state;
	unsigned lambdas; /* S_HEADER: lambdas whose ':' is still to come */
	size_t mark;      /* S_DOC: the first string of the statement */
	bool strings;     /* S_DOC: strings seen, and nothing else */
};

static void enter_doc(struct body_state *b, size_t mark)
{
	b->state = S_DOC;
	b->mark = mark;
	b->strings = false;
}

/* Moves b over the token t: the current one, or one skim read without
 * making it current (no string, line end or indentation). */
static inline __attribute__((always_inline)) void body_step(struct parser *p,
                                                            struct body_state *b, const tok *t)
{
	bool ends = t->kind == T_NEWLINE || (t->depth == 0 && is_op(t, ';'));

	for (;;) {
		switch (b->state) {
		case S_STMT:
			if (is_kw(t, KW_DEF) || is_kw(t, KW_CLASS)) {
				b->state = S_HEADER;
				b->lambdas = 0;
			} else if (!ends && t->kind != T_INDENT && t->kind != T_DEDENT &&
			           !is_kw(t, KW_ASYNC)) {
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
			} else if (t->depth == 0 && is_kw(t, KW_LAMBDA)) {
				b->lambdas++;
			} else if (t->depth == 0 && is_op(t, ':')) {
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
			if (t->kind == T_STRING && t->plain) {
				b->strings = true;
				return;
			}
			if (b->strings && ends)
				drop_strings(p, b->mark);
			b->state = b->strings ? S_MID : S_STMT;
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
 * until one that skip_body must see itself (INDENT, DEDENT, T_END, or the
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
	switch (byte_class[(unsigned char)c]) {
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
		while (ident_chars[(unsigned char)s[j]])
			j++;
		if (j - i <= 2 && (s[j] == '"' || s[j] == '\'') &&
		    (pfx = string_prefix(s, i, j)) != 0)
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
		if (is_digit(s[i + 1])) {
			kind = T_NUMBER;
			i = lex_number(s, i, n);
		} else {
			kind = T_OP;
			code = '.';
			i += s[i + 1] == '.' && i + 2 < n && s[i + 2] == '.' ? 3 : 1;
		}
		break;
	case C_DIGIT:
		kind = T_NUMBER;
		i = lex_number(s, i, n);
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
		size_t e = pfx & PFX_F ? lex_fstring(s, j, n, (pfx & PFX_RAW) != 0, &bad)
		                       : lex_string(s, j, n, &bad);
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
		p->line += count_lines(s + i, e - i);
		record_string(p, &t);
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
	if (indentation(p, &p->t))
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
			/* A quote at j: the token holding it starts at k, at j or at
			 * its prefix. */
			j = i;
			k = token_start(s, n, bound, j);
			pfx = k < j ? string_prefix(s, k, j) : PFX_STRING;
			i = k;
			goto string;
		}
	}

out:
	p->pos = i;
generic:
	advance(p);
}

/* Skips a def's body, recording where it lies and dropping the docstrings of
 * the def and of the defs and classes in it. */
static void skip_body(struct parser *p, size_t di)
{
	struct body_state b = {0};
	unsigned level = 0;
	size_t off, end;
	unsigned line;

	if (p->t.kind == T_NEWLINE) {
		advance(p);
		if (p->t.kind != T_INDENT) {
			fail(p, AP_EINPUT, p->t.line, "expected an indented block");
			return;
		}
		level = 1;
		advance(p);
	}
	enter_doc(&b, string_mark(p));
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
	if (b.state == S_DOC && b.strings)
		drop_strings(p, b.mark);
	if (p->t.kind != T_END)
		advance(p);
	p->m->defs[di].body_off = off;
	p->m->defs[di].body_end = end;
	p->m->defs[di].body_line = line;
}

/* The prefix of c, the name and then tail. */
static char *qualname(struct parser *p, const struct ctx *c, const tok *name,
                      const char *tail)
{
	size_t plen = c->prefix ? strlen(c->prefix) : 0, tlen = strlen(tail);
	char *q = arena_alloc(p->mod, plen + name->len + tlen + 1);

	if (plen > 0)
		memcpy(q, c->prefix, plen);
	memcpy(q + plen, p->s + name->off, name->len);
	memcpy(q + plen + name->len, tail, tlen + 1);
	return q;
}

static void def_stmt(struct parser *p, const struct ctx *c)
{
	ap_py_module *m = p->m;
	unsigned line = p->t.line;
	tok name;
	ap_py_def *d;
	size_t di;

	advance(p);
	if (p->t.kind != T_NAME) {
		fail(p, AP_EINPUT, p->t.line, "expected a name after 'def'");
		return;
	}
	name = p->t;
	advance(p);
	if (is_op(&p->t, '[')) {
		/* Type parameters (PEP 695). */
		unsigned depth = p->t.depth;
		do
			advance(p);
		while (p->t.kind != T_END && !(p->t.depth == depth && is_op(&p->t, ']')));
		advance(p);
	}
	if (!is_op(&p->t, '(')) {
		fail(p, AP_EINPUT, p->t.line, "expected '(' after the name of a def");
		return;
	}
	ap_xgrow((void **)&m->defs, &p->defs_cap, m->ndefs + 1, sizeof *m->defs);
	di = m->ndefs++;
	d = &m->defs[di];
	memset(d, 0, sizeof *d);
	d->qualname = qualname(p, c, &name, "");
	d->line = line;
	d->live = c->live;
	params(p, di);
	/* The return annotation, up to the ':'. */
	if (!collect_header(p, NULL, false))
		return;
	if (c->prefix == NULL && c->live)
		add_binding(p, c, AP_PY_BIND_DEF, &name)->def_index = di;
	skip_body(p, di);
}

static void class_stmt(struct parser *p, const struct ctx *c)
{
	struct ctx in = *c;
	char *prefix;
	tok name;

	advance(p);
	if (p->t.kind != T_NAME) {
		fail(p, AP_EINPUT, p->t.line, "expected a name after 'class'");
		return;
	}
	name = p->t;
	if (!collect_header(p, NULL, false))
		return;
	if (c->prefix == NULL && c->live)
		add_binding(p, c, AP_PY_BIND_CLASS, &name);
	prefix = qualname(p, c, &name, ".");
	in.prefix = prefix;
	suite(p, &in, true);
}

enum cond { COND_UNKNOWN, COND_FALSE, COND_TRUE };

/* Whether sv[a, b) is wrapped in one pair of parentheses. */
static bool parenthesised(const struct parser *p, size_t a, size_t b)
{
	return b - a >= 3 && is_op(&p->sv[a], '(') && closer(p, a, b) == b - 1;
}

static bool false_name(const struct parser *p, size_t a, size_t b)
{
	if (b - a != 1 || p->sv[a].kind != T_NAME || p->false_names == NULL)
		return false;
	for (const char *const *f = p->false_names; *f; f++)
		if (is_word(p, &p->sv[a], *f))
			return true;
	return false;
}

/* The value of the condition sv[1, sn) of an if or elif. */
static enum cond condition(const struct parser *p)
{
	size_t a = 1, b = p->sn;
	bool negated = false;

	while (parenthesised(p, a, b))
		a++, b--;
	if (b - a >= 2 && is_kw(&p->sv[a], KW_NOT)) {
		negated = true;
		a++;
		while (parenthesised(p, a, b))
			a++, b--;
	}
	if (!false_name(p, a, b))
		return COND_UNKNOWN;
	return negated ? COND_TRUE : COND_FALSE;
}

static void if_stmt(struct parser *p, const struct ctx *c)
{
	bool decided = false; /* an earlier arm is certainly taken */

	for (;;) {
		struct ctx arm = *c;
		bool is_else = is_kw(&p->t, KW_ELSE);
		enum cond cond = is_else ? COND_TRUE : COND_UNKNOWN;

		if (!collect_header(p, c->prefix == NULL && c->live && !decided ? c : NULL, true))
			return;
		if (!is_else)
			cond = condition(p);
		arm.live = c->live && !decided && cond != COND_FALSE;
		suite(p, &arm, false);
		decided |= cond == COND_TRUE;
		if (is_else || !(is_kw(&p->t, KW_ELIF) || is_kw(&p->t, KW_ELSE)))
			return;
	}
}

/* for, while, with and try, with the arms that may follow them. */
static void compound_stmt(struct parser *p, const struct ctx *c)
{
	bool is_for = is_kw(&p->t, KW_FOR);
	bool is_with = is_kw(&p->t, KW_WITH);
	bool is_try = is_kw(&p->t, KW_TRY);
	bool binds = c->prefix == NULL && c->live;
	const tok *v;

	if (!collect_header(p, binds ? c : NULL, binds))
		return;
	v = p->sv;
	if (binds && is_for) {
		size_t e = 1;
		while (e < p->sn && !(v[e].depth == 0 && is_kw(&v[e], KW_IN)))
			e++;
		bind_targets(p, c, 1, e, 0);
	}
	if (binds && is_with) {
		/* with (a as b, c as d): the items are in the parentheses. */
		size_t a = 1, b = p->sn;
		unsigned d = 0;
		if (parenthesised(p, a, b)) {
			for (size_t k = a + 1; k + 1 < b && d == 0; k++)
				if (v[k].depth == 1 && is_kw(&v[k], KW_AS))
					d = 1;
			if (d == 1)
				a++, b--;
		}
		while (a < b) {
			size_t e = a, as = b;
			while (e < b && !(v[e].depth == d && is_op(&v[e], ','))) {
				if (as == b && v[e].depth == d && is_kw(&v[e], KW_AS))
					as = e;
				e++;
			}
			if (as < e)
				bind_targets(p, c, as + 1, e, d);
			a = e + 1;
		}
	}
	suite(p, c, false);
	for (;;) {
		struct ctx arm = *c;
		if (is_try && is_kw(&p->t, KW_EXCEPT))
			arm.in_except = true;
		else if (!is_kw(&p->t, KW_ELSE) && !(is_try && is_kw(&p->t, KW_FINALLY)))
			return;
		if (!collect_header(p, NULL, false))
			return;
		suite(p, &arm, false);
	}
}

static void statement(struct parser *p, const struct ctx *c, bool doc)
{
	if (is_op(&p->t, '@')) {
		while (is_op(&p->t, '@')) {
			while (p->t.kind != T_NEWLINE && p->t.kind != T_END)
				advance(p);
			advance(p);
		}
		if (p->t.kind == T_INDENT || p->t.kind == T_DEDENT)
			return;
	}
	if (is_kw(&p->t, KW_ASYNC)) {
		advance(p);
		if (!is_kw(&p->t, KW_DEF) && !is_kw(&p->t, KW_FOR) &&
		    !is_kw(&p->t, KW_WITH)) {
			simple_line(p, c, false, false);
			return;
		}
	}
	if (is_kw(&p->t, KW_DEF))
		def_stmt(p, c);
	else if (is_kw(&p->t, KW_CLASS))
		class_stmt(p, c);
	else if (is_kw(&p->t, KW_IF))
		if_stmt(p, c);
	else if (is_kw(&p->t, KW_FOR) || is_kw(&p->t, KW_WHILE) ||
	         is_kw(&p->t, KW_WITH) || is_kw(&p->t, KW_TRY))
		compound_stmt(p, c);
	else
		simple_line(p, c, doc, false);
}

/* --- Entry points --------------------------------------------------------- */

void ap_py_module_free(ap_py_module *m)
{
	struct module *mod = (struct module *)m;

	if (m == NULL)
		return;
	/* Strings and parameter arrays lie in the arena. */
	while (mod->arena != NULL) {
		struct chunk *c = mod->arena;
		mod->arena = c->next;
		free(c);
	}
	free(m->defs);
	free(m->bindings);
	free(m->all);
	free(m->strings);
	free(m->src);
	free(mod);
}

int ap_py_parse(ap_py_module **out, const char *src, size_t len, const ap_py_options *opt)
{
	static const struct ctx top = {NULL, true, false};
	struct parser *p;
	struct module *mod;
	ap_py_module *m;
	int rc;

	*out = NULL;
	if (len > UINT32_MAX || len > SIZE_MAX - SRC_PAD) {
		ap_error_set("line 1: input of 4 GiB or more");
		return AP_ELIMIT;
	}
	mod = ap_xcalloc(1, sizeof *mod);
	m = &mod->pub;
	/* NULs after the copy end skim's scans without a bound check: none
	 * reads past them, and none reads past len on their account. */
	m->src = ap_xmalloc(len + SRC_PAD);
	if (len > 0)
		memcpy(m->src, src, len);
	memset(m->src + len, 0, SRC_PAD);
	m->src_len = len;
	/* The parser holds the bracket and indentation stacks: a few KiB, on the heap. */
	p = ap_xcalloc(1, sizeof *p);
	p->s = m->src;
	p->n = len;
	p->line = 1;
	p->at_bol = true;
	p->nindent = 1;
	p->m = m;
	p->mod = mod;
	p->false_names = opt ? opt->false_names : NULL;
	if (len >= 3 && memcmp(src, "\xef\xbb\xbf", 3) == 0)
		p->pos = 3;
	advance(p);
	statements(p, &top, false, true);
	m->has_all = p->all_state == ALL_KNOWN;
	if (!m->has_all)
		clear_all(m);
	rc = p->err;
	free(p->sv);
	free(p->pv);
	ap_buf_free(&p->scratch);
	free(p);
	if (rc < 0) {
		ap_py_module_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

const ap_py_binding *ap_py_lookup(const ap_py_module *m, const char *name, bool skip_except)
{
	for (size_t i = m->nbindings; i-- > 0;) {
		const ap_py_binding *b = &m->bindings[i];
		if (b->name != NULL && strcmp(b->name, name) == 0 && !(skip_except && b->in_except))
			return b;
	}
	return NULL;
}

const ap_py_def *ap_py_find_def(const ap_py_module *m, const char *qualname)
{
	for (size_t i = m->ndefs; i-- > 0;)
		if (m->defs[i].live && strcmp(m->defs[i].qualname, qualname) == 0)
			return &m->defs[i];
	return NULL;
}

/* --- Bounds --------------------------------------------------------------- */

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
		if (is_digit(c))
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

static struct btok classify(const char *t, size_t len, uint8_t kind, uint8_t code,
                            unsigned line, const char *name, size_t nlen)
{
	struct btok b = {B_OTHER, 0, 0, line};

	if (kind == T_NAME) {
		if (len == nlen && memcmp(t, name, len) == 0)
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
			if (augassign_code(code))
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
				size_t e = lex_token(s, i, n, &kind, &code, &plain, &bad);
				b = classify(s + i, e - i, kind, code, ln, name, nlen);
				if (b.cls == B_LEFT)
					depth++;
				else if (b.cls == B_RIGHT && depth > 0)
					depth--;
				if (kind == T_STRING)
					ln += count_lines(s + i, e - i);
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
