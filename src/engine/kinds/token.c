/* SPDX-License-Identifier: MIT */
#include "config.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/lang/lex-c.h"
#include "engine/lang/python/python.h"

/* `token`: a sequence of tokens of the text's language. */

typedef struct tok {
	size_t off;
	size_t len;
} tok;

typedef struct tok_seq {
	const char *text; /* what the offsets are in: the pattern, as the language reads it */
	tok *v;
	size_t n;
} tok_seq;

struct token {
	char *pattern;
	size_t pattern_len;
	/* the pattern with its Python names NFKC-normalized, as the normalizer
	 * leaves those of a Python file */
	char *pattern_py;
	/* the pattern split by each lexer (C also serves TEXT) */
	tok_seq toks_c;
	tok_seq toks_py;
};

/* First occurrence of needle (m >= 1 bytes) in hay. The token matcher looks
 * for its first token again after every candidate, and a common identifier
 * makes for many candidates: glibc's memmem pays a set-up on each call, so
 * with SSE2 the search tests the needle's first and last bytes sixteen
 * positions at a time and compares only where both agree. */
static const char *find_bytes(const char *hay, size_t n, const char *needle, size_t m)
{
#ifdef __SSE2__
	if (m >= 2) {
		const __m128i first = _mm_set1_epi8(needle[0]);
		const __m128i last = _mm_set1_epi8(needle[m - 1]);
		size_t i = 0;

		for (; i + m - 1 + 16 <= n; i += 16) {
			__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(hay + i));
			__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(hay + i + m - 1));
			unsigned mask = (unsigned)_mm_movemask_epi8(
				_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last)));
			while (mask) {
				unsigned bit = (unsigned)__builtin_ctz(mask);
				if (memcmp(hay + i + bit + 1, needle + 1, m - 2) == 0)
					return hay + i + bit;
				mask &= mask - 1;
			}
		}
		hay += i;
		n -= i;
	}
#endif
	return memmem(hay, n, needle, m);
}

/* Token boundaries in normalized text (no comments left): Python's are the
 * Python reader's lexer's; the C family's, enough for a matcher, are here,
 * with the identifier and raw-string rules the normalizer shares:
 * identifiers, numbers, string and character literals as single tokens,
 * punctuators by longest match, any other byte alone. */

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_char(unsigned char c)
{
	return ap_c_ident_char(c);
}

static bool is_ident_start(unsigned char c)
{
	return is_ident_char(c) && !is_digit(c);
}

static const char *const c_puncts[] = {
	"<<=", ">>=", "...", "->*", "<=>", "->", "++", "--", "<<", ">>", "<=", ">=", "==",
	"!=",  "&&",  "||",  "*=",  "/=",  "%=", "+=", "-=", "&=", "^=", "|=", "##", "::",
	".*",  NULL,
};

/* Longest match; the list holds the three-byte operators first. */
static size_t lex_punct(const char *s, size_t i, size_t n)
{
	char d = i + 1 < n ? s[i + 1] : '\0';
	char e = i + 2 < n ? s[i + 2] : '\0';

	/* Most bytes start no operator longer than one byte. */
	if (strchr("<>.-+=!&|*/%^#:", s[i]) == NULL || d == '\0')
		return i + 1;
	for (const char *const *p = c_puncts; *p; p++) {
		if ((*p)[0] != s[i] || (*p)[1] != d)
			continue;
		if ((*p)[2] == '\0')
			return i + 2;
		if ((*p)[2] == e)
			return i + 3;
	}
	return i + 1;
}

/* A pp-number: digits, letters, '.', a sign after an exponent letter, and a
 * digit separator ('), so 1e-5, 0x1p+3, 1'000 and 24u are one token each. */
static size_t lex_number(const char *s, size_t i, size_t n)
{
	i++;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		if (is_ident_char(c) || c == '.') {
			i++;
		} else if ((c == '+' || c == '-') && strchr("eEpP", s[i - 1]) != NULL) {
			i++;
		} else if (c == '\'' && i + 1 < n && is_ident_char((unsigned char)s[i + 1])) {
			i++;
		} else {
			break;
		}
	}
	return i;
}

/* A quoted literal from its opening quote; an unterminated one ends at the
 * end of its line. */
static size_t lex_quoted(const char *s, size_t i, size_t n)
{
	char q = s[i];
	size_t j = i + 1;

	if (q == '"' && ap_c_raw_prefix(s, i)) {
		size_t end = ap_c_raw_end(s, i, n);
		if (end)
			return end;
	}
	while (j < n) {
		char c = s[j];
		if (c == '\\') {
			/* An escaped line end still ends the line's literal, so
			 * that no token spans lines. */
			if (j + 1 < n && s[j + 1] == '\n')
				return j + 1;
			j += 2;
			continue;
		}
		if (c == q)
			return j + 1;
		if (c == '\n')
			return j;
		j++;
	}
	return n;
}

/* Whether the identifier s[a, b) is a string prefix (u8, u, U, L, each
 * optionally followed by R, or R alone). */
static bool string_prefix(const char *s, size_t a, size_t b)
{
	size_t len = b - a;

	if (len == 0 || len > 3)
		return false;
	if (s[b - 1] == 'R')
		len--;
	return len == 0 || (len == 1 && strchr("LuU", s[a]) != NULL) ||
	       (len == 2 && s[a] == 'u' && s[a + 1] == '8');
}

/* End of the token starting at i (s[i] is not whitespace). */
static size_t lex_token(const char *s, size_t i, size_t n, ap_lang lang)
{
	unsigned char c = (unsigned char)s[i];

	if (lang == AP_LANG_PYTHON)
		return ap_py_token_end(s, i, n);
	if (is_ident_start(c)) {
		size_t j = i + 1;
		while (j < n && is_ident_char((unsigned char)s[j]))
			j++;
		if (j < n && (s[j] == '"' || s[j] == '\'') && string_prefix(s, i, j))
			return lex_quoted(s, j, n);
		return j;
	}
	if (is_digit(c) || (c == '.' && i + 1 < n && is_digit((unsigned char)s[i + 1])))
		return lex_number(s, i, n);
	if (c == '"' || c == '\'')
		return lex_quoted(s, i, n);
	return lex_punct(s, i, n);
}

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && ap_is_space_byte((unsigned char)s[i]))
		i++;
	return i;
}

static void tokenize(tok_seq *seq, const char *s, size_t n, ap_lang lang)
{
	size_t cap = 0;
	size_t i = skip_ws(s, 0, n);

	seq->text = s;
	seq->v = NULL;
	seq->n = 0;
	while (i < n) {
		size_t e = lex_token(s, i, n, lang);
		ap_xgrow((void **)&seq->v, &cap, seq->n + 1, sizeof *seq->v);
		seq->v[seq->n].off = i;
		seq->v[seq->n].len = e - i;
		seq->n++;
		i = skip_ws(s, e, n);
	}
}

/* Whether the tokens from i on are the pattern's; *end is past the last. */
static bool tokens_at(const struct token *m, const tok_seq *seq, const ap_text *t, ap_lang lang,
                      size_t i, size_t *end)
{
	for (size_t k = 0; k < seq->n; k++) {
		size_t e;
		if (k > 0)
			i = skip_ws(t->s, i, t->len);
		if (i >= t->len)
			return false;
		e = lex_token(t->s, i, t->len, lang);
		if (e - i != seq->v[k].len || memcmp(t->s + i, seq->text + seq->v[k].off, e - i) != 0)
			return false;
		i = e;
	}
	*end = i;
	return true;
}

/* What a candidate for the start of a match must look like, judged on the
 * bytes around it before any lexing. */
struct token_anchor {
	const char *first; /* the first token's bytes */
	size_t len;
	bool word_first; /* it begins with an identifier character */
	bool word_token; /* it is made of them */
	int next;        /* the second token's first byte; -1: no second token */
};

/* Whether c may start a match, given that s[c] and s[c + len - 1] are the
 * first token's first and last bytes (and c + len <= n; s[n] is the text's
 * NUL): an identifier or number does not run into the token from either
 * side (it would take it in); the second token's first byte follows,
 * whitespace skipped; the bytes between the first and last are the token's.
 * The cheap tests that turn most candidates down come first, combined
 * without branches, since which one does is anyone's guess. */
static inline bool anchor_at(const struct token_anchor *a, const char *s, size_t n, size_t c)
{
	size_t j = c + a->len;
	unsigned char before = c > 0 ? (unsigned char)s[c - 1] : ' ';
	unsigned char after = (unsigned char)s[j];

	if ((a->word_first & is_ident_char(before)) | (a->word_token & is_ident_char(after)))
		return false;
	if (a->next >= 0) {
		if (ap_is_space_byte(after))
			j = skip_ws(s, j, n);
		if (j >= n || (unsigned char)s[j] != a->next)
			return false;
	}
	return a->len <= 2 || memcmp(s + c + 1, a->first + 1, a->len - 2) == 0;
}

#ifdef __SSE2__
/* Bit k set where p[k] is first's byte and p[k + m - 1] last's, k < 16. */
static inline uint32_t pair_mask(const char *p, size_t m, __m128i first, __m128i last)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(p + m - 1));
	return (uint32_t)_mm_movemask_epi8(
		_mm_and_si128(_mm_cmpeq_epi8(x, first), _mm_cmpeq_epi8(y, last)));
}
#endif

/* The first candidate at or after pos, or SIZE_MAX. Common identifiers make
 * for a candidate every few dozen bytes, so with SSE2 the search tests the
 * first token's first and last bytes 32 positions at a time and judges
 * the positions where both agree without leaving the loop. */
static size_t next_candidate(const struct token_anchor *a, const char *s, size_t n, size_t pos)
{
	size_t m = a->len;
	size_t i = pos;

#ifdef __SSE2__
	const __m128i first = _mm_set1_epi8(a->first[0]);
	const __m128i last = _mm_set1_epi8(a->first[m - 1]);

	for (; i + m - 1 + 32 <= n; i += 32) {
		uint32_t mask = pair_mask(s + i, m, first, last) |
		                pair_mask(s + i + 16, m, first, last) << 16;
		while (mask) {
			size_t c = i + (unsigned)__builtin_ctz(mask);
			if (anchor_at(a, s, n, c))
				return c;
			mask &= mask - 1;
		}
	}
#endif
	while (i + m <= n) {
		const char *hit = find_bytes(s + i, n - i, a->first, m);
		size_t c;
		if (hit == NULL)
			break;
		c = (size_t)(hit - s);
		if (anchor_at(a, s, n, c))
			return c;
		i = c + 1;
	}
	return SIZE_MAX;
}

/* Whether the bytes of the pattern's tokens follow one another from c, with
 * whitespace between them skipped: what a match needs, checked without
 * lexing, so that most candidates are turned down for a few compares. The
 * first token's bytes are known to be at c. */
static bool token_bytes_at(const struct token *m, const tok_seq *seq, const ap_text *t, size_t c)
{
	size_t i = c + seq->v[0].len;

	for (size_t k = 1; k < seq->n; k++) {
		size_t len = seq->v[k].len;
		i = skip_ws(t->s, i, t->len);
		if (t->len - i < len || memcmp(t->s + i, seq->text + seq->v[k].off, len) != 0)
			return false;
		i += len;
	}
	return true;
}

/* The byte sequences where a token that spans a line end may begin: a C++
 * raw string; in Python a triple-quoted string, or a quoted one whose line
 * end is escaped. Every other token ends on its line once comments are gone
 * and continuations joined. */
static const char *const c_spanners[] = {"R\"", NULL};
static const char *const py_spanners[] = {"'''", "\"\"\"", "\\\n", NULL};

/* Where the token matcher knows the lexer's token boundaries. */
struct token_scan {
	const ap_text *t;
	ap_lang lang;
	const char *const *spanners;
	size_t boundary; /* a token boundary, outside any literal */
	/* No line-spanning sequence begins in [clear_from, clear_to). */
	size_t clear_from;
	size_t clear_to;
};

/* Whether no line-spanning sequence begins in [boundary, line), where line
 * starts a line. The text is searched only up to the line, and once over a
 * run, so that a match early in a long text does not pay for the rest. An
 * occurrence cannot straddle a line start (its line end would have to be its
 * last byte, which only the escaped line end's is, and that one ends before
 * the line), so searching the span finds every one that begins in it. */
static bool no_spanner_before(struct token_scan *sc, size_t line)
{
	const char *s = sc->t->s;
	size_t from = sc->boundary;

	if (sc->clear_from <= from && from <= sc->clear_to)
		from = sc->clear_to;
	else
		sc->clear_from = sc->clear_to = from;
	if (from >= line)
		return true;
	for (size_t k = 0; sc->spanners[k]; k++)
		if (find_bytes(s + from, line - from, sc->spanners[k], strlen(sc->spanners[k])))
			return false;
	sc->clear_to = line;
	return true;
}

/* Whether a token starts at c (c >= boundary, s[c] not whitespace). The lexer
 * resumes from the boundary, or from c's line start when no token can span
 * into that line: a line start after a token boundary with no line-spanning
 * sequence between them is a token boundary too. Leaves the boundary at c,
 * or past the token that c lies inside. */
static bool token_starts_at(struct token_scan *sc, size_t c)
{
	const ap_text *t = sc->t;
	size_t k, e;

	if (c > sc->boundary) {
		const char *nl = memrchr(t->s + sc->boundary, '\n', c - sc->boundary);
		if (nl != NULL && no_spanner_before(sc, (size_t)(nl - t->s) + 1))
			sc->boundary = (size_t)(nl - t->s) + 1;
	}
	k = skip_ws(t->s, sc->boundary, t->len);
	e = k;
	while (k < c) {
		e = lex_token(t->s, k, t->len, sc->lang);
		if (e > c)
			break;
		k = skip_ws(t->s, e, t->len);
	}
	if (k != c) {
		sc->boundary = e;
		return false;
	}
	sc->boundary = c;
	return true;
}

/* Candidates come from a search for the first token's bytes. Most are turned
 * down by their neighbouring bytes (inside a longer identifier or number) or
 * by the bytes after them; the rest are lexed as the pattern's tokens, and
 * only a candidate that would match is checked to start a token at all (not
 * inside a literal), which needs the lexer from a known token boundary. */
static int token_run(const void *state, const ap_text *t, ap_collect collect, ap_match_list *out)
{
	const struct token *m = state;
	ap_lang lang = t->lang == AP_LANG_PYTHON ? AP_LANG_PYTHON : AP_LANG_C;
	const tok_seq *seq = lang == AP_LANG_PYTHON ? &m->toks_py : &m->toks_c;
	const char *first = seq->text + seq->v[0].off;
	struct token_anchor anchor = {
		.first = first,
		.len = seq->v[0].len,
		.word_first = is_ident_char((unsigned char)first[0]),
		.next = seq->n > 1 ? (unsigned char)seq->text[seq->v[1].off] : -1,
	};
	struct token_scan sc = {
		.t = t,
		.lang = lang,
		.spanners = lang == AP_LANG_PYTHON ? py_spanners : c_spanners,
	};
	size_t pos = 0; /* where the next candidate is looked for */

	anchor.word_token = anchor.word_first;
	for (size_t k = 1; k < anchor.len; k++)
		anchor.word_token = anchor.word_token && is_ident_char((unsigned char)first[k]);
	while (pos < t->len) {
		size_t c = next_candidate(&anchor, t->s, t->len, pos);
		size_t end;
		if (c == SIZE_MAX)
			break;
		pos = c + 1;
		if (!token_bytes_at(m, seq, t, c) || !tokens_at(m, seq, t, lang, c, &end))
			continue;
		if (!token_starts_at(&sc, c)) {
			pos = sc.boundary;
			continue;
		}
		ap_match_add(out, t, c);
		if (collect == AP_COLLECT_FIRST || out->over)
			break;
		sc.boundary = pos = end;
	}
	return 0;
}

/* A token pattern is matched against text without comments: one that
 * starts a comment of the language (a slash then a slash or a star, adjacent,
 * in C; a '#' in Python) never matches. Inside a string literal token they
 * are text. */
static const char *token_refusal(const void *state, ap_lang lang)
{
	const struct token *m = state;
	static const char why[] = "a comment in a token pattern never matches (comments are "
	                          "removed from the text first)";

	if (lang == AP_LANG_C) {
		for (size_t k = 0; k + 1 < m->toks_c.n; k++) {
			const tok *a = &m->toks_c.v[k], *b = &m->toks_c.v[k + 1];
			if (a->len == 1 && m->pattern[a->off] == '/' && b->off == a->off + 1 &&
			    (m->pattern[b->off] == '/' || m->pattern[b->off] == '*'))
				return why;
		}
	} else if (lang == AP_LANG_PYTHON) {
		for (size_t k = 0; k < m->toks_py.n; k++)
			if (m->pattern_py[m->toks_py.v[k].off] == '#')
				return why;
	}
	return NULL;
}

/* The pattern with each Python name NFKC-normalized (the only bytes the
 * Python normalizer changes in code that is no comment). */
static char *python_pattern(const char *p, size_t n)
{
	ap_buf b = AP_BUF_INIT;

	for (size_t i = 0, e; i < n; i = e) {
		if (ap_is_space_byte((unsigned char)p[i])) {
			e = i + 1;
			ap_buf_putc(&b, p[i]);
		} else if (e = ap_py_token_end(p, i, n), ap_py_is_identifier(p + i, e - i)) {
			char *name = ap_xstrndup(p + i, e - i);
			ap_py_name_normalize(&name);
			ap_buf_puts(&b, name);
			free(name);
		} else {
			ap_buf_append(&b, p + i, e - i);
		}
	}
	ap_buf_putc(&b, '\0');
	return ap_buf_detach(&b);
}

static int token_compile(void **state, const char *pattern, ap_ws ws, size_t *err_offset)
{
	struct token *m = ap_xcalloc(1, sizeof *m);

	(void)ws;
	(void)err_offset;
	m->pattern = ap_xstrdup(pattern);
	m->pattern_len = strlen(pattern);
	/* Split by both lexers: the text's language picks at run time, so a
	 * rule whose language is decided per file needs no other compilation. */
	tokenize(&m->toks_c, m->pattern, m->pattern_len, AP_LANG_C);
	m->pattern_py = python_pattern(m->pattern, m->pattern_len);
	tokenize(&m->toks_py, m->pattern_py, strlen(m->pattern_py), AP_LANG_PYTHON);
	*state = m;
	if (m->toks_c.n == 0) {
		ap_error_set("token pattern has no tokens");
		return AP_EINPUT;
	}
	return 0;
}

static void token_free(void *state)
{
	struct token *m = state;

	if (m == NULL)
		return;
	free(m->pattern);
	free(m->pattern_py);
	free(m->toks_c.v);
	free(m->toks_py.v);
	free(m);
}

static const ap_text_ops token_ops = {
	.what = "token pattern",
	.compile = token_compile,
	.run = token_run,
	.free = token_free,
	.needs_whitespace = true,
	.refusal = token_refusal,
};

const ap_kind ap_kind_token = {
	.key = "token",
	.flags = AP_KIND_FILE | AP_KIND_TEXT | AP_KIND_COLLECT,
	.text = &token_ops,
};
