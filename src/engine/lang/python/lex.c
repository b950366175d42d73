/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && !defined(AP_PY_NO_SIMD)
#include <emmintrin.h>
#endif

#include <unictype.h>
#include <uninorm.h>
#include <unistr.h>

#include "core/ap-error.h"
#include "engine/lang/python/python-int.h"

const uint8_t ap_py_ident_chars[256] = {
	['0' ... '9'] = ID_ASCII, ['A' ... 'Z'] = ID_ASCII, ['_'] = ID_ASCII,
	['a' ... 'z'] = ID_ASCII, [0x80 ... 0xff] = ID_OTHER,
};

const uint8_t ap_py_byte_class[256] = {
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

static bool is_ident_start(char c)
{
	return ap_py_ident_chars[(unsigned char)c] && !ap_py_is_digit(c);
}

unsigned ap_py_count_lines(const char *s, size_t len)
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

size_t ap_py_line_end(const char *s, size_t i, size_t n)
{
	const char *lf = memchr(s + i, '\n', n - i);
	size_t e = lf ? (size_t)(lf - s) : n;
	const char *cr = memchr(s + i, '\r', e - i);

	return cr ? (size_t)(cr - s) : e;
}

size_t ap_py_line_start(const char *s, size_t at, size_t n, unsigned line)
{
	unsigned k = 1;

	/* A match's line is found from the file's start, some thousand lines
	 * for each of a scan's matches: 64 bytes with no CR are counted at
	 * once, and the rest a byte at a time. */
	while (k < line && at < n) {
#if defined(__SSE2__) && !defined(AP_PY_NO_SIMD)
		if (at + 64 <= n) {
			const __m128i nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
			__m128i lfs = _mm_setzero_si128(), crs = _mm_setzero_si128();

			for (int b = 0; b < 64; b += 16) {
				__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + at + b));
				/* Each LF's compare is -1: subtracted, a count per byte. */
				lfs = _mm_sub_epi8(lfs, _mm_cmpeq_epi8(v, nl));
				crs = _mm_or_si128(crs, _mm_cmpeq_epi8(v, cr));
			}
			if (_mm_movemask_epi8(crs) == 0) {
				/* Summed by SAD: baseline x86-64 has no popcnt. */
				const __m128i sums = _mm_sad_epu8(lfs, _mm_setzero_si128());
				unsigned c = (unsigned)_mm_cvtsi128_si32(sums) +
				             (unsigned)_mm_extract_epi16(sums, 4);

				if (k + c < line) {
					k += c;
					at += 64;
					continue;
				}
			}
		}
#endif
		if (s[at] == '\n') {
			k++;
		} else if (s[at] == '\r') {
			k++;
			at += at + 1 < n && s[at + 1] == '\n';
		}
		at++;
	}
	return at < n ? at : n;
}

size_t ap_py_lex_punct(const char *s, size_t i, size_t n, uint8_t *code)
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
	while (i < n &&
	       (ap_py_is_digit(s[i]) || (s[i] == '_' && i + 1 < n && ap_py_is_digit(s[i + 1]))))
		i++;
	return i;
}

size_t ap_py_lex_number(const char *s, size_t i, size_t n)
{
	if (s[i] == '0' && i + 1 < n && strchr("xXoObB", s[i + 1]) != NULL && s[i + 1] != '\0') {
		i += 2;
		while (i < n &&
		       ap_py_ident_chars[(unsigned char)s[i]] == ID_ASCII)
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
		if (k < n && ap_py_is_digit(s[k]))
			i = lex_digits(s, k, n);
	}
	if (i < n && (s[i] == 'j' || s[i] == 'J'))
		i++;
	return i;
}

/* By length, then by the first byte, then one comparison. */
uint8_t ap_py_keyword(const char *s, size_t len)
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

size_t ap_py_lex_string(const char *s, size_t i, size_t n, int *bad)
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
		} else {
			/* A line end (LF, CR or CRLF): not triple-quoted, or SB_EOL
			 * would not have stopped here. */
			*bad = STR_UNTERMINATED;
			return j;
		}
		j++;
	}
	*bad = triple ? STR_UNTERMINATED_TRIPLE : STR_UNTERMINATED;
	return n;
}

unsigned ap_py_string_prefix(const char *s, size_t a, size_t b)
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

/* Python 3.12 reads the expressions in replacement fields as code, so they
 * may hold strings with the same quote, comments and line ends; this reads
 * them so too, older f-strings being read the same either way. The frames
 * are a stack, not recursion. */
size_t ap_py_lex_fstring(const char *s, size_t i, size_t n, bool raw, int *bad)
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
			} else if ((c == '\n' || c == '\r') && !t->triple) {
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
			while (k < n && ap_py_ident_chars[(unsigned char)s[k]])
				k++;
			if (k >= n || (s[k] != '"' && s[k] != '\'') ||
			    !((pfx = ap_py_string_prefix(s, j, k)) & PFX_F)) {
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
			j = ap_py_lex_string(s, j, n, bad);
			if (*bad)
				return j;
		} else if (c == '#') {
			j = ap_py_line_end(s, j, n);
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

/* --- Names that are not ASCII (PEP 3131) ---------------------------------- */

/* CPython's tokenizer takes any run of ASCII letters, digits, '_' and bytes
 * from 0x80 on as a name, then turns it away unless it is UTF-8 whose first
 * character is XID_Start or '_' and whose others are XID_Continue; the
 * message names the first character that is not, as CPython's does. */
const char *ap_py_name_error(const char *s, size_t len, char *buf, size_t size)
{
	const uint8_t *u = (const uint8_t *)s;

	for (size_t k = 0; k < len;) {
		ucs4_t c;
		int l = u8_mbtoucr(&c, u + k, len - k);
		if (l < 0) {
			snprintf(buf, size, "Non-UTF-8 code starting with '\\x%02x'", u[k]);
			return buf;
		}
		if (k == 0 ? !uc_is_property_xid_start(c) && c != '_'
		           : !uc_is_property_xid_continue(c)) {
			/* Python's str.isprintable(): not a control, format, surrogate,
			 * private-use, unassigned or separator character. */
			if (uc_is_general_category_withtable(
				    c, UC_CATEGORY_MASK_Cc | UC_CATEGORY_MASK_Cf | UC_CATEGORY_MASK_Cs |
				               UC_CATEGORY_MASK_Co | UC_CATEGORY_MASK_Cn |
				               UC_CATEGORY_MASK_Zl | UC_CATEGORY_MASK_Zp |
				               UC_CATEGORY_MASK_Zs))
				snprintf(buf, size, "invalid non-printable character U+%04X",
				         (unsigned)c);
			else
				snprintf(buf, size, "invalid character '%.*s' (U+%04X)", l, s + k,
				         (unsigned)c);
			return buf;
		}
		k += (size_t)l;
	}
	return NULL;
}

void ap_py_name_nfkc(const char *s, size_t len, ap_buf *out)
{
	size_t olen;
	uint8_t *r;

	out->len = 0;
	/* u8_normalize would read bytes that are not UTF-8 as U+FFFD; such a
	 * name (a rule's: the reader turns them away) is kept as it is. */
	if (u8_check((const uint8_t *)s, len) != NULL) {
		ap_buf_append(out, s, len);
	} else {
		r = u8_normalize(UNINORM_NFKC, (const uint8_t *)s, len, NULL, &olen);
		if (r == NULL) {
			ap_error_set("out of memory (normalizing a name of %zu bytes)", len);
			ap_xok(AP_ENOMEM);
		}
		ap_buf_append(out, r, olen);
		free(r);
	}
	ap_buf_putc(out, '\0');
	out->len--;
}

void ap_py_name_normalize(char **name)
{
	ap_buf b = AP_BUF_INIT;
	size_t len = strlen(*name);

	for (size_t k = 0; k < len; k++)
		if ((unsigned char)(*name)[k] >= 0x80) {
			ap_py_name_nfkc(*name, len, &b);
			free(*name);
			*name = ap_buf_detach(&b);
			return;
		}
}

bool ap_py_is_identifier(const char *s, size_t len)
{
	char why[64];
	bool ascii = true;

	if (len == 0 || ap_py_byte_class[(unsigned char)s[0]] != C_NAME)
		return false;
	for (size_t k = 0; k < len; k++) {
		if (!ap_py_ident_chars[(unsigned char)s[k]])
			return false;
		ascii &= (unsigned char)s[k] < 0x80;
	}
	return ascii || ap_py_name_error(s, len, why, sizeof why) == NULL;
}

size_t ap_py_token_end(const char *s, size_t i, size_t n)
{
	uint8_t kind, code;
	bool plain;
	int bad;

	if (i >= n)
		return n;
	return ap_py_lex_token(s, i, n, &kind, &code, &plain, &bad);
}
