#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8

#include <pcre2.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ap-error.h"
#include "ap-util.h"
#include "match.h"

/* Regex budget. The match limit bounds the backtracking steps of one search
 * (all start positions together); ten million steps take well under a second
 * and leave ordinary patterns over a 16 MiB file far from the limit, while a
 * catastrophic pattern such as (a+)+$ reaches it quickly. The depth limit
 * bounds the interpreter's backtracking depth (the JIT is bounded by its stack
 * instead), the heap limit the memory the interpreter may take for it. */
#define REGEX_MATCH_LIMIT 10000000u
#define REGEX_DEPTH_LIMIT 100000u
#define REGEX_HEAP_LIMIT_KIB (256u * 1024u)
#define REGEX_JIT_STACK_START (32u * 1024u)
#define REGEX_JIT_STACK_MAX (8u * 1024u * 1024u)

/* Patterns are compiled as bytes, without PCRE2_UTF: AITER's sources are
 * mostly ASCII and a file need not be valid UTF-8, which PCRE2_UTF would
 * require of every subject. A non-ASCII character in a pattern matches its
 * UTF-8 bytes literally; '.' matches one byte. */

typedef struct tok {
	size_t off;
	size_t len;
} tok;

typedef struct tok_seq {
	tok *v;
	size_t n;
} tok_seq;

struct ap_matcher {
	ap_match_kind kind;
	char *pattern;
	size_t pattern_len;
	/* literal: the needle with whitespace removed, for strip-mode texts */
	char *stripped;
	size_t stripped_len;
	/* token: the pattern split by each lexer (C also serves TEXT) */
	tok_seq toks_c;
	tok_seq toks_py;
	/* regex */
	pcre2_code *code;
	bool jit;
};

const char *ap_match_kind_name(ap_match_kind kind)
{
	switch (kind) {
	case AP_MATCH_LITERAL:
		return "literal";
	case AP_MATCH_TOKEN:
		return "token";
	case AP_MATCH_REGEX:
		return "regex";
	}
	return "?";
}

/* --- Results -------------------------------------------------------------- */

static ap_match *add_match(ap_match_list *out, const ap_text *t, size_t off)
{
	ap_match *m;
	const char *line;
	size_t line_len;

	ap_xgrow((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v);
	m = &out->v[out->n++];
	memset(m, 0, sizeof *m);
	m->line = ap_text_line(t, off);
	ap_text_line_span(t, m->line, &line, &line_len);
	m->text = ap_xstrndup(line, line_len);
	return m;
}

void ap_match_list_free(ap_match_list *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++) {
		for (size_t k = 0; k < l->v[i].ncaps; k++) {
			free(l->v[i].caps[k].name);
			free(l->v[i].caps[k].value);
		}
		free(l->v[i].caps);
		free(l->v[i].text);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* --- Literal -------------------------------------------------------------- */

static bool is_ws_byte(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

static int run_literal(const ap_matcher *m, const ap_text *t, ap_collect collect,
                       ap_match_list *out)
{
	/* A strip-mode text holds no whitespace, so the needle loses its own,
	 * as vLLM's probe strips both sides. */
	const char *needle = t->ws == AP_WS_STRIP ? m->stripped : m->pattern;
	size_t nlen = t->ws == AP_WS_STRIP ? m->stripped_len : m->pattern_len;
	size_t pos = 0;

	if (nlen == 0) {
		/* Python: "" in s is true; report it once. */
		add_match(out, t, 0);
		return 0;
	}
	while (pos + nlen <= t->len) {
		const char *hit = memmem(t->s + pos, t->len - pos, needle, nlen);
		if (hit == NULL)
			break;
		add_match(out, t, (size_t)(hit - t->s));
		if (collect == AP_COLLECT_FIRST)
			break;
		pos = (size_t)(hit - t->s) + nlen;
	}
	return 0;
}

/* --- Token ---------------------------------------------------------------- */

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

/* A small lexer, enough to find token boundaries in normalized text (no
 * comments left): identifiers, numbers, string and character literals as
 * single tokens, punctuators by longest match, any other byte alone. */

static bool is_ident_start(unsigned char c)
{
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_char(unsigned char c)
{
	return is_ident_start(c) || is_digit(c);
}

static const char *const c_puncts[] = {
	"<<=", ">>=", "...", "->*", "<=>", "->", "++", "--", "<<", ">>", "<=", ">=", "==",
	"!=",  "&&",  "||",  "*=",  "/=",  "%=", "+=", "-=", "&=", "^=", "|=", "##", "::",
	".*",  NULL,
};

static const char *const py_puncts[] = {
	"**=", "//=", ">>=", "<<=", "...", "**", "//", "==", "!=", "<=", ">=", "<<", ">>", "->",
	":=",  "+=",  "-=",  "*=",  "/=",  "%=", "&=", "|=", "^=", "@=", NULL,
};

/* Longest match; the lists hold the three-byte operators first. */
static size_t lex_punct(const char *s, size_t i, size_t n, ap_lang lang)
{
	const char *const *list = lang == AP_LANG_PYTHON ? py_puncts : c_puncts;
	char d = i + 1 < n ? s[i + 1] : '\0';
	char e = i + 2 < n ? s[i + 2] : '\0';

	/* Most bytes start no operator longer than one byte. */
	if (strchr("<>.-+=!&|*/%^#:@", s[i]) == NULL || d == '\0')
		return i + 1;
	for (const char *const *p = list; *p; p++) {
		if ((*p)[0] != s[i] || (*p)[1] != d)
			continue;
		if ((*p)[2] == '\0')
			return i + 2;
		if ((*p)[2] == e)
			return i + 3;
	}
	return i + 1;
}

/* A pp-number: digits, letters, '.', a sign after an exponent letter, and in
 * C a digit separator ('), so 1e-5, 0x1p+3, 1'000 and 24u are one token each. */
static size_t lex_number(const char *s, size_t i, size_t n, ap_lang lang)
{
	i++;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		if (is_ident_char(c) || c == '.') {
			i++;
		} else if ((c == '+' || c == '-') && strchr("eEpP", s[i - 1]) != NULL) {
			i++;
		} else if (c == '\'' && lang != AP_LANG_PYTHON && i + 1 < n &&
		           is_ident_char((unsigned char)s[i + 1])) {
			i++;
		} else {
			break;
		}
	}
	return i;
}

/* A quoted literal from its opening quote; unterminated ones end at the end
 * of the line (Python's triple-quoted ones at the end of the text). */
static size_t lex_quoted(const char *s, size_t i, size_t n, ap_lang lang, bool raw_c)
{
	char q = s[i];
	bool triple = lang == AP_LANG_PYTHON && i + 2 < n && s[i + 1] == q && s[i + 2] == q;
	size_t j;

	if (raw_c) {
		char close[1 + 16 + 1];
		size_t d = i + 1;
		const char *hit;
		while (d < n && d - (i + 1) <= 16 && s[d] != '(' && s[d] != '"' && s[d] != '\n')
			d++;
		if (d < n && s[d] == '(' && d - (i + 1) <= 16) {
			close[0] = ')';
			memcpy(close + 1, s + i + 1, d - (i + 1));
			close[d - i] = '"';
			hit = memmem(s + d + 1, n - d - 1, close, d - i + 1);
			return hit ? (size_t)(hit - s) + d - i + 1 : n;
		}
	}
	j = i + (triple ? 3 : 1);
	while (j < n) {
		char c = s[j];
		if (c == '\\') {
			/* Outside Python an escaped line end still ends the
			 * line's literal, so that no token spans lines. */
			if (lang != AP_LANG_PYTHON && j + 1 < n && s[j + 1] == '\n')
				return j + 1;
			j += 2;
			continue;
		}
		if (c == q) {
			if (!triple)
				return j + 1;
			if (j + 2 < n && s[j + 1] == q && s[j + 2] == q)
				return j + 3;
		} else if (c == '\n' && !triple) {
			return j;
		}
		j++;
	}
	return n;
}

/* Whether the identifier s[a, b) is a string prefix of the language; *raw
 * says it makes a C++ raw string. */
static bool string_prefix(const char *s, size_t a, size_t b, ap_lang lang, bool *raw)
{
	size_t len = b - a;

	*raw = false;
	if (len == 0 || len > 3)
		return false;
	if (lang == AP_LANG_PYTHON) {
		for (size_t k = a; k < b; k++)
			if (strchr("rRbBfFuU", s[k]) == NULL)
				return false;
		return true;
	}
	*raw = s[b - 1] == 'R';
	if (*raw)
		len--;
	return len == 0 || (len == 1 && strchr("LuU", s[a]) != NULL) ||
	       (len == 2 && s[a] == 'u' && s[a + 1] == '8');
}

/* End of the token starting at i (s[i] is not whitespace). */
static size_t lex_token(const char *s, size_t i, size_t n, ap_lang lang)
{
	unsigned char c = (unsigned char)s[i];

	if (is_ident_start(c)) {
		size_t j = i + 1;
		bool raw;
		while (j < n && is_ident_char((unsigned char)s[j]))
			j++;
		if (j < n && (s[j] == '"' || s[j] == '\'') && string_prefix(s, i, j, lang, &raw))
			return lex_quoted(s, j, n, lang, raw && s[j] == '"');
		return j;
	}
	if (is_digit(c) || (c == '.' && i + 1 < n && is_digit((unsigned char)s[i + 1])))
		return lex_number(s, i, n, lang);
	if (c == '"' || c == '\'')
		return lex_quoted(s, i, n, lang, false);
	return lex_punct(s, i, n, lang);
}

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && is_ws_byte((unsigned char)s[i]))
		i++;
	return i;
}

static void tokenize(tok_seq *seq, const char *s, size_t n, ap_lang lang)
{
	size_t cap = 0;
	size_t i = skip_ws(s, 0, n);

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
static bool tokens_at(const ap_matcher *m, const tok_seq *seq, const ap_text *t, ap_lang lang,
                      size_t i, size_t *end)
{
	for (size_t k = 0; k < seq->n; k++) {
		size_t e;
		if (k > 0)
			i = skip_ws(t->s, i, t->len);
		if (i >= t->len)
			return false;
		e = lex_token(t->s, i, t->len, lang);
		if (e - i != seq->v[k].len || memcmp(t->s + i, m->pattern + seq->v[k].off, e - i) != 0)
			return false;
		i = e;
	}
	*end = i;
	return true;
}

/* Candidates come from memmem on the first token's text; each is kept only if
 * it starts a token, which the lexer decides from a known token boundary
 * before it. In C and plain text no token spans a line once continuations
 * are joined and comments are gone (raw strings aside), so the line start is
 * such a boundary; otherwise lexing resumes from the last boundary reached. */
static int run_token(const ap_matcher *m, const ap_text *t, ap_collect collect,
                     ap_match_list *out)
{
	ap_lang lang = t->lang == AP_LANG_PYTHON ? AP_LANG_PYTHON : AP_LANG_C;
	const tok_seq *seq = lang == AP_LANG_PYTHON ? &m->toks_py : &m->toks_c;
	const char *first = m->pattern + seq->v[0].off;
	size_t first_len = seq->v[0].len;
	bool line_sync = lang != AP_LANG_PYTHON && find_bytes(t->s, t->len, "R\"", 2) == NULL;
	bool ident_first = is_ident_start((unsigned char)first[0]);
	bool ident_token = ident_first;
	size_t boundary = 0; /* a token boundary outside any literal */
	size_t pos = 0;      /* where the next candidate is looked for */

	for (size_t k = 1; k < first_len; k++)
		ident_token = ident_token && is_ident_char((unsigned char)first[k]);

	while (pos < t->len) {
		const char *hit = find_bytes(t->s + pos, t->len - pos, first, first_len);
		size_t c, k, e, end;
		if (hit == NULL)
			break;
		c = (size_t)(hit - t->s);
		/* Inside an identifier or number, or followed by more of an
		 * identifier: no token of the pattern's starts here, no need to
		 * lex. */
		if ((ident_first && c > 0 && is_ident_char((unsigned char)t->s[c - 1])) ||
		    (ident_token && c + first_len < t->len &&
		     is_ident_char((unsigned char)t->s[c + first_len]))) {
			pos = c + 1;
			continue;
		}
		if (line_sync && c > boundary) {
			const char *nl = memrchr(t->s + boundary, '\n', c - boundary);
			if (nl != NULL)
				boundary = (size_t)(nl - t->s) + 1;
		}
		k = skip_ws(t->s, boundary, t->len);
		e = k;
		while (k < c) {
			e = lex_token(t->s, k, t->len, lang);
			if (e > c)
				break;
			k = skip_ws(t->s, e, t->len);
		}
		if (k != c) {
			/* c lies inside the token [k, e): no token starts there. */
			boundary = e;
			pos = e;
			continue;
		}
		boundary = c;
		if (tokens_at(m, seq, t, lang, c, &end)) {
			add_match(out, t, c);
			if (collect == AP_COLLECT_FIRST)
				break;
			boundary = pos = end;
		} else {
			boundary = pos = lex_token(t->s, c, t->len, lang);
		}
	}
	return 0;
}

/* --- Regex ---------------------------------------------------------------- */

static void *pcre2_alloc(PCRE2_SIZE n, void *unused)
{
	return ap_xmalloc(n);
}

static void pcre2_release(void *p, void *unused)
{
	free(p);
}

/* PCRE2's allocations go through ap_xmalloc, so they never fail. */
static pcre2_general_context *general_context(void)
{
	return pcre2_general_context_create(pcre2_alloc, pcre2_release, NULL);
}

static int regex_failure(int rc)
{
	PCRE2_UCHAR msg[256];

	switch (rc) {
	case PCRE2_ERROR_MATCHLIMIT:
		ap_error_set("regex exceeded its match limit (%u steps)", REGEX_MATCH_LIMIT);
		return AP_ELIMIT;
	case PCRE2_ERROR_DEPTHLIMIT:
		ap_error_set("regex exceeded its depth limit (%u)", REGEX_DEPTH_LIMIT);
		return AP_ELIMIT;
	case PCRE2_ERROR_HEAPLIMIT:
		ap_error_set("regex exceeded its heap limit (%u KiB)", REGEX_HEAP_LIMIT_KIB);
		return AP_ELIMIT;
	case PCRE2_ERROR_JIT_STACKLIMIT:
		ap_error_set("regex exceeded its JIT stack limit (%u bytes)", REGEX_JIT_STACK_MAX);
		return AP_ELIMIT;
	default:
		pcre2_get_error_message(rc, msg, sizeof msg);
		ap_error_set("regex match failed: %s", (const char *)msg);
		return AP_EINTERNAL;
	}
}

struct name_entry {
	unsigned group;
	const char *name;
};

static int by_group(const void *a, const void *b)
{
	const struct name_entry *x = a;
	const struct name_entry *y = b;
	return (x->group > y->group) - (x->group < y->group);
}

/* The named groups in group-number order (PCRE2's table is by name). */
static struct name_entry *named_groups(const pcre2_code *code, size_t *count)
{
	uint32_t n = 0;
	uint32_t entry_size = 0;
	PCRE2_SPTR table = NULL;
	struct name_entry *v;

	pcre2_pattern_info(code, PCRE2_INFO_NAMECOUNT, &n);
	*count = n;
	if (n == 0)
		return NULL;
	pcre2_pattern_info(code, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
	pcre2_pattern_info(code, PCRE2_INFO_NAMETABLE, &table);
	v = ap_xcalloc(n, sizeof *v);
	for (uint32_t k = 0; k < n; k++) {
		PCRE2_SPTR e = table + (size_t)k * entry_size;
		v[k].group = ((unsigned)e[0] << 8) | e[1];
		v[k].name = (const char *)(e + 2);
	}
	qsort(v, n, sizeof *v, by_group);
	return v;
}

static void add_captures(ap_match *mt, const ap_text *t, const PCRE2_SIZE *ov, uint32_t ngroups,
                         const struct name_entry *names, size_t nnames)
{
	for (size_t k = 0; k < nnames; k++) {
		unsigned g = names[k].group;
		ap_capture *c;
		if (g >= ngroups || ov[2 * g] == PCRE2_UNSET)
			continue;
		mt->caps = ap_xrealloc(mt->caps, (mt->ncaps + 1) * sizeof *mt->caps);
		c = &mt->caps[mt->ncaps++];
		c->name = ap_xstrdup(names[k].name);
		c->value = ap_xstrndup(t->s + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
	}
}

static int run_regex(const ap_matcher *m, const ap_text *t, ap_collect collect,
                     ap_match_list *out)
{
	pcre2_general_context *gctx = general_context();
	pcre2_match_context *mctx = pcre2_match_context_create(gctx);
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(m->code, gctx);
	pcre2_jit_stack *stack = NULL;
	PCRE2_SPTR subject = (PCRE2_SPTR)t->s;
	size_t nnames;
	struct name_entry *names = named_groups(m->code, &nnames);
	PCRE2_SIZE start = 0;
	uint32_t opts = 0;
	int ret = 0;

	pcre2_set_match_limit(mctx, REGEX_MATCH_LIMIT);
	pcre2_set_depth_limit(mctx, REGEX_DEPTH_LIMIT);
	pcre2_set_heap_limit(mctx, REGEX_HEAP_LIMIT_KIB);
	if (m->jit) {
		/* NULL (no memory for it): the JIT's small default stack serves. */
		stack = pcre2_jit_stack_create(REGEX_JIT_STACK_START, REGEX_JIT_STACK_MAX, gctx);
		if (stack != NULL)
			pcre2_jit_stack_assign(mctx, NULL, stack);
	}
	for (;;) {
		int rc = pcre2_match(m->code, subject, t->len, start, opts, md, mctx);
		PCRE2_SIZE *ov;
		ap_match *mt;
		if (rc == PCRE2_ERROR_NOMATCH) {
			/* After an empty match, a non-empty one at the same place
			 * was not found: move on by one byte. */
			if (opts == 0 || start >= t->len)
				break;
			start++;
			opts = 0;
			continue;
		}
		if (rc < 0) {
			ret = regex_failure(rc);
			break;
		}
		ov = pcre2_get_ovector_pointer(md);
		mt = add_match(out, t, ov[0]);
		add_captures(mt, t, ov, pcre2_get_ovector_count(md), names, nnames);
		if (collect == AP_COLLECT_FIRST)
			break;
		start = ov[1];
		opts = ov[0] == ov[1] ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0;
	}
	free(names);
	pcre2_match_data_free(md);
	pcre2_jit_stack_free(stack);
	pcre2_match_context_free(mctx);
	pcre2_general_context_free(gctx);
	return ret;
}

/* --- Matchers ------------------------------------------------------------- */

static int compile_regex(ap_matcher *m, size_t *err_offset)
{
	int errcode;
	PCRE2_SIZE erroff;
	PCRE2_UCHAR msg[256];

	pcre2_general_context *gctx = general_context();
	pcre2_compile_context *cctx = pcre2_compile_context_create(gctx);

	m->code = pcre2_compile((PCRE2_SPTR)m->pattern, m->pattern_len, 0, &errcode, &erroff, cctx);
	pcre2_compile_context_free(cctx);
	pcre2_general_context_free(gctx);
	if (m->code == NULL) {
		pcre2_get_error_message(errcode, msg, sizeof msg);
		ap_error_set("%s", (const char *)msg);
		*err_offset = erroff;
		return AP_EINPUT;
	}
	/* Without JIT support (or when it cannot compile this pattern) the
	 * interpreter runs it, under the same limits. */
	m->jit = pcre2_jit_compile(m->code, PCRE2_JIT_COMPLETE) == 0;
	return 0;
}

int ap_matcher_new(ap_matcher **out, ap_match_kind kind, const char *pattern, ap_lang lang,
                   size_t *err_offset)
{
	ap_matcher *m = ap_xcalloc(1, sizeof *m);
	int rc = 0;

	*out = NULL;
	if (err_offset)
		*err_offset = 0;
	else
		err_offset = &(size_t){0};
	m->kind = kind;
	m->pattern = ap_xstrdup(pattern);
	m->pattern_len = strlen(pattern);
	switch (kind) {
	case AP_MATCH_LITERAL:
		if (m->pattern_len == 0) {
			ap_error_set("empty literal");
			rc = AP_EINPUT;
			break;
		}
		m->stripped = ap_xmalloc(m->pattern_len + 1);
		for (size_t k = 0; k < m->pattern_len; k++)
			if (!is_ws_byte((unsigned char)pattern[k]))
				m->stripped[m->stripped_len++] = pattern[k];
		m->stripped[m->stripped_len] = '\0';
		break;
	case AP_MATCH_TOKEN:
		/* Split by both lexers: the text's language picks at run time,
		 * so a rule whose language is decided per file needs no other
		 * compilation. */
		tokenize(&m->toks_c, m->pattern, m->pattern_len, AP_LANG_C);
		tokenize(&m->toks_py, m->pattern, m->pattern_len, AP_LANG_PYTHON);
		if (m->toks_c.n == 0) {
			ap_error_set("token pattern has no tokens");
			rc = AP_EINPUT;
		}
		break;
	case AP_MATCH_REGEX:
		rc = compile_regex(m, err_offset);
		break;
	default:
		ap_error_set("unknown matcher kind %d", (int)kind);
		rc = AP_EINTERNAL;
		break;
	}
	if (rc < 0) {
		ap_matcher_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int ap_matcher_run(const ap_matcher *m, const ap_text *t, ap_collect collect, ap_match_list *out)
{
	switch (m->kind) {
	case AP_MATCH_LITERAL:
		return run_literal(m, t, collect, out);
	case AP_MATCH_TOKEN:
		return run_token(m, t, collect, out);
	case AP_MATCH_REGEX:
		return run_regex(m, t, collect, out);
	}
	ap_error_set("unknown matcher kind %d", (int)m->kind);
	return AP_EINTERNAL;
}

void ap_matcher_free(ap_matcher *m)
{
	if (m == NULL)
		return;
	free(m->pattern);
	free(m->stripped);
	free(m->toks_c.v);
	free(m->toks_py.v);
	pcre2_code_free(m->code);
	free(m);
}
