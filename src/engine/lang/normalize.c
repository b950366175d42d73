/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/lex-c.h"
#include "engine/lang/normalize.h"
#include "engine/lang/python/python.h"

/* Whitespace removed by AP_WS_STRIP is exactly what Python's str.split()
 * (no argument) splits on, so that the result equals vLLM's
 * "".join(src.split()) on a file Python decodes as UTF-8: the ASCII bytes
 * \t \n \v \f \r, space and \x1c-\x1f, and the UTF-8 encodings of the other
 * characters for which str.isspace() is true: U+0085, U+00A0, U+1680,
 * U+2000-U+200A, U+2028, U+2029, U+202F, U+205F and U+3000. In valid UTF-8
 * those byte sequences can only be those characters; a file that is not
 * valid UTF-8 makes vLLM's probe raise, so there is no answer to agree with. */

/* Zero bytes after the text's NUL: vector code reading past the end (the
 * PCRE2 JIT's scans do, within an aligned block) then reads defined bytes. */
#define SCAN_PAD 64

/* What the main loop does with a byte: copy it, drop it (whitespace in strip
 * mode), or stop and let the language's handler look at it. */
enum { K_COPY = 0, K_DROP = 1, K_SPECIAL = 2 };

struct norm {
	const unsigned char *src;
	size_t n;
	char *out;
	uint32_t *map;
	size_t o;
	size_t cap; /* what out and map hold, their padding aside */
	ap_ws ws;
	unsigned char kind[256];
	unsigned skip;         /* depth of the #if 0 being dropped; 0: emitting */
	bool skip_ends_at_eol; /* its #endif or #else was seen: emit again after this line */
	bool cr_ends_line;     /* Python: a lone CR is a line end, as CPython reads it */
};

/* Length of the UTF-8 encoded Unicode space at i, or 0. */
static size_t unicode_space_len(const unsigned char *s, size_t i, size_t n)
{
	if (s[i] == 0xc2)
		return i + 1 < n && (s[i + 1] == 0x85 || s[i + 1] == 0xa0) ? 2 : 0;
	if (i + 2 >= n)
		return 0;
	if (s[i] == 0xe1)
		return s[i + 1] == 0x9a && s[i + 2] == 0x80 ? 3 : 0;
	if (s[i] == 0xe3)
		return s[i + 1] == 0x80 && s[i + 2] == 0x80 ? 3 : 0;
	if (s[i] != 0xe2)
		return 0;
	if (s[i + 1] == 0x80)
		return s[i + 2] <= 0x8a || s[i + 2] == 0xa8 || s[i + 2] == 0xa9 || s[i + 2] == 0xaf ?
		               3 : 0;
	return s[i + 1] == 0x81 && s[i + 2] == 0x9f ? 3 : 0;
}

static void emit_byte(struct norm *nm, unsigned char c, size_t at)
{
	if (nm->skip)
		return;
	nm->out[nm->o] = (char)c;
	nm->map[nm->o] = (uint32_t)at;
	nm->o++;
}

/* A comment stands for one space in keep mode, so that the tokens on either
 * side of it do not merge. */
static void emit_comment(struct norm *nm, size_t at)
{
	if (nm->ws == AP_WS_KEEP)
		emit_byte(nm, ' ', at);
}

/* Copies src[a, b) where any byte may occur (literals): whitespace dropped in
 * strip mode, the CR of a CRLF dropped in keep mode (a lone CR, in Python,
 * made LF). */
static void emit_span(struct norm *nm, size_t a, size_t b)
{
	const unsigned char *s = nm->src;

	if (nm->skip)
		return;
	for (size_t k = a; k < b; k++) {
		unsigned char c = s[k];
		if (nm->ws == AP_WS_STRIP) {
			size_t ul;
			if (ap_is_space_byte(c))
				continue;
			if (c >= 0xc2 && (ul = unicode_space_len(s, k, nm->n)) != 0) {
				k += ul - 1;
				continue;
			}
		} else if (c == '\r' && k + 1 < nm->n && s[k + 1] == '\n') {
			continue;
		} else if (c == '\r' && nm->cr_ends_line) {
			c = '\n';
		}
		nm->out[nm->o] = (char)c;
		nm->map[nm->o] = (uint32_t)k;
		nm->o++;
	}
}

typedef uint32_t u32x4 __attribute__((vector_size(16)));

/* map[o, o + len) = at, at + 1, ...: four at a time with GNU vectors, which
 * compile to SIMD where there is some and to plain code elsewhere. */
static void fill_map(uint32_t *map, size_t len, uint32_t at)
{
	u32x4 v = {at, at + 1, at + 2, at + 3};
	const u32x4 step = {4, 4, 4, 4};
	size_t k = 0;

	for (; k + 4 <= len; k += 4) {
		memcpy(map + k, &v, sizeof v);
		v += step;
	}
	for (; k < len; k++)
		map[k] = at + (uint32_t)k;
}

/* The hot loop: copies ordinary bytes until one needs a handler. In keep
 * mode nothing is dropped on the way, so runs are copied whole; in strip
 * mode each byte is stored and the output position advances only past the
 * ones kept, which has no branch to mispredict. */
static size_t run_plain(struct norm *nm, size_t i)
{
	const unsigned char *s = nm->src;
	const unsigned char *kind = nm->kind;
	size_t n = nm->n;
	char *out = nm->out;
	uint32_t *map = nm->map;
	size_t o = nm->o;
	size_t a = i;

	if (nm->skip || nm->ws == AP_WS_KEEP) {
		while (i + 4 <= n && kind[s[i]] != K_SPECIAL && kind[s[i + 1]] != K_SPECIAL &&
		       kind[s[i + 2]] != K_SPECIAL && kind[s[i + 3]] != K_SPECIAL)
			i += 4;
		while (i < n && kind[s[i]] != K_SPECIAL)
			i++;
		if (!nm->skip) {
			memcpy(out + o, s + a, i - a);
			fill_map(map + o, i - a, (uint32_t)a);
			nm->o = o + (i - a);
		}
		return i;
	}
	while (i < n) {
		unsigned char c = s[i];
		unsigned k = kind[c];
		if (k == K_SPECIAL)
			break;
		out[o] = (char)c;
		map[o] = (uint32_t)i;
		o += k == K_COPY;
		i++;
	}
	nm->o = o;
	return i;
}

/* Bytes every language treats alike: CR (keep mode: a CRLF's dropped, a lone
 * one kept, as LF in Python) and the lead bytes of Unicode spaces (strip
 * mode). Returns the next position. */
static size_t handle_common(struct norm *nm, size_t i)
{
	const unsigned char *s = nm->src;
	size_t ul;

	if (s[i] == '\r') {
		if (!(i + 1 < nm->n && s[i + 1] == '\n'))
			emit_byte(nm, nm->cr_ends_line ? '\n' : '\r', i);
		return i + 1;
	}
	if (nm->ws == AP_WS_STRIP && (ul = unicode_space_len(s, i, nm->n)) != 0)
		return i + ul;
	emit_byte(nm, s[i], i);
	return i + 1;
}

/* Length of a backslash-newline (or backslash-CRLF) at i, or 0. */
static size_t splice_len(const unsigned char *s, size_t i, size_t n)
{
	if (s[i] != '\\' || i + 1 >= n)
		return 0;
	if (s[i + 1] == '\n')
		return 2;
	if (s[i + 1] == '\r' && i + 2 < n && s[i + 2] == '\n')
		return 3;
	return 0;
}

/* --- C, C++, CUDA, HIP ------------------------------------------------- */

static bool word_is(const unsigned char *w, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(w, lit, len) == 0;
}

static bool is_hspace(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

/* At the start of a line: tracks #if 0 blocks. A block is dropped from its
 * #if 0 line to the end of its #endif line; an #else or #elif of the #if 0
 * ends the drop after its own line, so the other branch is kept. */
static void c_directive(struct norm *nm, size_t i)
{
	const unsigned char *s = nm->src;
	size_t n = nm->n;
	size_t w;

	while (i < n && is_hspace(s[i]))
		i++;
	if (i >= n || s[i] != '#')
		return;
	i++;
	while (i < n && is_hspace(s[i]))
		i++;
	for (w = i; w < n && s[w] >= 'a' && s[w] <= 'z'; w++)
		;
	if (word_is(s + i, w - i, "if")) {
		size_t z = w;
		bool zero;
		while (z < n && is_hspace(s[z]))
			z++;
		zero = z > w && z < n && s[z] == '0' &&
		       (z + 1 >= n || ap_is_space_byte(s[z + 1]) || s[z + 1] == '/');
		if (nm->skip || zero)
			nm->skip++;
	} else if (word_is(s + i, w - i, "ifdef") || word_is(s + i, w - i, "ifndef")) {
		if (nm->skip)
			nm->skip++;
	} else if (word_is(s + i, w - i, "endif")) {
		if (nm->skip == 1)
			nm->skip_ends_at_eol = true;
		else if (nm->skip)
			nm->skip--;
	} else if (word_is(s + i, w - i, "else") || word_is(s + i, w - i, "elif") ||
	           word_is(s + i, w - i, "elifdef") || word_is(s + i, w - i, "elifndef")) {
		if (nm->skip == 1)
			nm->skip_ends_at_eol = true;
	}
}

static void end_skip_line(struct norm *nm)
{
	if (nm->skip_ends_at_eol) {
		nm->skip = 0;
		nm->skip_ends_at_eol = false;
	}
}

/* A // comment runs to the end of the line, continuations included. */
static size_t c_line_comment(struct norm *nm, size_t i)
{
	const unsigned char *s = nm->src;
	size_t n = nm->n;
	size_t j = i + 2;

	for (;;) {
		const unsigned char *nl = memchr(s + j, '\n', n - j);
		size_t e;
		if (nl == NULL) {
			j = n;
			break;
		}
		e = (size_t)(nl - s);
		if (e > i + 2 && s[e - 1] == '\\') {
			j = e + 1;
			continue;
		}
		if (e > i + 3 && s[e - 1] == '\r' && s[e - 2] == '\\') {
			j = e + 1;
			continue;
		}
		j = e;
		break;
	}
	emit_comment(nm, i);
	return j;
}

static size_t c_block_comment(struct norm *nm, size_t i)
{
	const unsigned char *s = nm->src;
	size_t n = nm->n;
	const unsigned char *close = memmem(s + i + 2, n - i - 2, "*/", 2);
	size_t end = close ? (size_t)(close - s) + 2 : n;

	/* An #endif line whose trailing comment runs on: the line ended inside. */
	if (nm->skip_ends_at_eol && memchr(s + i, '\n', end - i) != NULL)
		end_skip_line(nm);
	emit_comment(nm, i);
	return end;
}

/* A quoted literal, kept intact: escapes are skipped over, continuations
 * inside it are joined; an unterminated one ends at the end of its line. */
static size_t c_quoted(struct norm *nm, size_t i)
{
	const unsigned char *s = nm->src;
	size_t n = nm->n;
	unsigned char q = s[i];
	size_t seg = i;
	size_t j = i + 1;

	if (q == '"' && ap_c_raw_prefix((const char *)s, i)) {
		size_t end = ap_c_raw_end((const char *)s, i, n);
		if (end) {
			emit_span(nm, i, end);
			return end;
		}
	}
	while (j < n) {
		unsigned char c = s[j];
		size_t sl;
		if (c == q) {
			j++;
			break;
		}
		if (c == '\n' || (c == '\r' && j + 1 < n && s[j + 1] == '\n'))
			break;
		if (c != '\\') {
			j++;
			continue;
		}
		sl = splice_len(s, j, n);
		if (sl) {
			emit_span(nm, seg, j);
			j += sl;
			seg = j;
		} else {
			j += j + 1 < n && splice_len(s, j + 1, n) == 0 ? 2 : 1;
		}
	}
	emit_span(nm, seg, j);
	return j;
}

/* An apostrophe inside a number (1'000'000) is a digit separator, not the
 * start of a character literal. */
static bool c_digit_separator(const unsigned char *s, size_t i)
{
	size_t k = i;

	while (k > 0 && i - k < 256 && (ap_c_ident_char(s[k - 1]) || s[k - 1] == '.' || s[k - 1] == '\''))
		k--;
	if (k == i)
		return false;
	return (s[k] >= '0' && s[k] <= '9') ||
	       (s[k] == '.' && k + 1 < i && s[k + 1] >= '0' && s[k + 1] <= '9');
}

static size_t c_special(struct norm *nm, size_t i)
{
	const unsigned char *s = nm->src;
	size_t n = nm->n;
	size_t sl;

	switch (s[i]) {
	case '\n':
		end_skip_line(nm);
		if (nm->ws == AP_WS_KEEP)
			emit_byte(nm, '\n', i);
		c_directive(nm, i + 1);
		return i + 1;
	case '\\':
		sl = splice_len(s, i, n);
		if (sl)
			return i + sl;
		emit_byte(nm, '\\', i);
		return i + 1;
	case '/':
		if (i + 1 < n && s[i + 1] == '/')
			return c_line_comment(nm, i);
		if (i + 1 < n && s[i + 1] == '*')
			return c_block_comment(nm, i);
		emit_byte(nm, '/', i);
		return i + 1;
	case '\'':
		if (c_digit_separator(s, i)) {
			emit_byte(nm, '\'', i);
			return i + 1;
		}
		return c_quoted(nm, i);
	case '"':
		return c_quoted(nm, i);
	default:
		return handle_common(nm, i);
	}
}

/* --- Python ------------------------------------------------------------- */

static bool ascii_name_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* A name that is not ASCII, in code, in keep mode (strip mode is vLLM's
 * text, byte for byte): the NFKC form CPython binds, so that a token
 * pattern's `find` is the source's `ﬁnd`. From the name's first byte that is not ASCII, at i: the
 * bytes of it before i are in the output already, and are taken back. A
 * run that is no identifier (Python refuses the file) is copied. */
static size_t py_name(struct norm *nm, size_t i)
{
	const unsigned char *s = nm->src;
	size_t a = i, back = 0, e = ap_py_token_end((const char *)s, i, nm->n);
	char *name;
	size_t len;

	while (back < nm->o && a > 0 && ascii_name_byte(s[a - 1]) &&
	       nm->map[nm->o - back - 1] == a - 1)
		a--, back++;
	/* A name starts at no digit. */
	while (a < i && s[a] >= '0' && s[a] <= '9')
		a++, back--;
	if (!ap_py_is_identifier((const char *)s + a, e - a)) {
		memcpy(nm->out + nm->o, s + i, e - i);
		fill_map(nm->map + nm->o, e - i, (uint32_t)i);
		nm->o += e - i;
		return e;
	}
	name = ap_xstrndup((const char *)s + a, e - a);
	ap_py_name_normalize(&name);
	len = strlen(name);
	nm->o -= back;
	/* Only here does the output outgrow the input: room for the name and
	 * for the rest of the input, which no other step makes longer. */
	if (nm->o + len + (nm->n - e) > nm->cap) {
		nm->cap = nm->o + len + (nm->n - e);
		nm->out = ap_xrealloc(nm->out, nm->cap + 1 + SCAN_PAD);
		nm->map = ap_xrealloc(nm->map, (nm->cap + 1) * sizeof *nm->map);
	}
	memcpy(nm->out + nm->o, name, len);
	/* Byte k of the form at byte k of the name, the name's last past it. */
	for (size_t k = 0; k < len; k++)
		nm->map[nm->o + k] = (uint32_t)(a + (k < e - a ? k : e - a - 1));
	nm->o += len;
	free(name);
	return e;
}

/* A string literal, single- or triple-quoted, as the Python reader's lexer
 * ends it. Prefixes (r, b, f, u) need no care: even in a raw string a
 * backslash keeps the next quote from closing it, so the literal ends at the
 * same place either way. */
static size_t py_quoted(struct norm *nm, size_t i)
{
	size_t j = ap_py_token_end((const char *)nm->src, i, nm->n);

	emit_span(nm, i, j);
	return j;
}

static size_t py_special(struct norm *nm, size_t i)
{
	const unsigned char *s = nm->src;

	switch (s[i]) {
	case '#':
		emit_comment(nm, i);
		return ap_py_line_end((const char *)s, i, nm->n);
	case '\'':
	case '"':
		return py_quoted(nm, i);
	default:
		if (s[i] >= 0x80 && nm->ws == AP_WS_KEEP)
			return py_name(nm, i);
		return handle_common(nm, i);
	}
}

/* --- Driver ------------------------------------------------------------- */

static void init_kinds(struct norm *nm, ap_lang lang)
{
	memset(nm->kind, K_COPY, sizeof nm->kind);
	if (nm->ws == AP_WS_STRIP) {
		for (unsigned c = 0; c < 128; c++)
			if (ap_is_space_byte((unsigned char)c))
				nm->kind[c] = K_DROP;
		nm->kind[0xc2] = nm->kind[0xe1] = nm->kind[0xe2] = nm->kind[0xe3] = K_SPECIAL;
	} else {
		nm->kind['\r'] = K_SPECIAL;
	}
	if (lang == AP_LANG_C) {
		nm->kind['\n'] = nm->kind['\\'] = nm->kind['/'] = K_SPECIAL;
		nm->kind['\''] = nm->kind['"'] = K_SPECIAL;
	} else if (lang == AP_LANG_PYTHON) {
		nm->kind['#'] = nm->kind['\''] = nm->kind['"'] = K_SPECIAL;
		if (nm->ws == AP_WS_KEEP)
			memset(nm->kind + 0x80, K_SPECIAL, 0x80);
	}
}

static void find_lines(ap_text *t, size_t first)
{
	const char *s = t->orig;
	size_t n = t->orig_len;
	size_t cap = 0;
	size_t at = first;

	t->line_start = NULL;
	t->nlines = 0;
	for (;;) {
		size_t e; /* the line end's last byte, or n */
		ap_xgrow((void **)&t->line_start, &cap, t->nlines + 1, sizeof *t->line_start);
		t->line_start[t->nlines++] = (uint32_t)at;
		if (t->lang == AP_LANG_PYTHON) {
			e = ap_py_line_end(s, at, n);
			e += e + 1 < n && s[e] == '\r' && s[e + 1] == '\n';
		} else {
			const char *nl = memchr(s + at, '\n', n - at);
			e = nl ? (size_t)(nl - s) : n;
		}
		/* A final line ending does not open an empty last line. */
		if (e + 1 >= n)
			break;
		at = e + 1;
	}
}

int ap_normalize(ap_text *out, const char *orig, size_t orig_len, ap_lang lang, ap_ws ws)
{
	struct norm nm = {0};
	size_t i = 0;

	memset(out, 0, sizeof *out);
	if (orig_len >= UINT32_MAX) {
		ap_error_set("input of %zu bytes is larger than the 4 GiB the offset map can address",
		             orig_len);
		return AP_ELIMIT;
	}
	if (lang == AP_LANG_AUTO)
		lang = AP_LANG_TEXT;
	nm.src = (const unsigned char *)orig;
	nm.n = orig_len;
	nm.ws = ws;
	nm.cr_ends_line = lang == AP_LANG_PYTHON;
	/* Nothing grows but a Python name (py_name makes room): a comment (2
	 * bytes at least) becomes 1 space. */
	nm.cap = orig_len;
	nm.out = ap_xmalloc(orig_len + 1 + SCAN_PAD);
	nm.map = ap_xmalloc((orig_len + 1) * sizeof *nm.map);
	init_kinds(&nm, lang);

	if (orig_len >= 3 && memcmp(orig, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	if (lang == AP_LANG_C)
		c_directive(&nm, i);
	while (i < orig_len) {
		i = run_plain(&nm, i);
		if (i >= orig_len)
			break;
		if (lang == AP_LANG_C)
			i = c_special(&nm, i);
		else if (lang == AP_LANG_PYTHON)
			i = py_special(&nm, i);
		else
			i = handle_common(&nm, i);
	}
	memset(nm.out + nm.o, 0, 1 + SCAN_PAD);
	nm.map[nm.o] = (uint32_t)orig_len;

	/* Not shrunk: giving the tail back costs more than it saves, as
	 * malloc would then map fresh pages for the next file's buffers. */
	out->s = nm.out;
	out->map = nm.map;
	out->len = nm.o;
	out->orig = orig;
	out->orig_len = orig_len;
	out->lang = lang;
	out->ws = ws;
	find_lines(out, orig_len >= 3 && memcmp(orig, "\xef\xbb\xbf", 3) == 0 ? 3 : 0);
	return 0;
}

void ap_text_free(ap_text *t)
{
	if (t == NULL)
		return;
	free(t->s);
	free(t->map);
	free(t->line_start);
	memset(t, 0, sizeof *t);
}

unsigned ap_text_line(const ap_text *t, size_t off)
{
	uint32_t at;
	size_t lo = 0;
	size_t hi = t->nlines;

	if (off > t->len)
		off = t->len;
	at = t->map[off];
	/* The last line starting at or before at. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->line_start[mid] <= at)
			lo = mid;
		else
			hi = mid;
	}
	return (unsigned)lo + 1;
}

void ap_text_line_span(const ap_text *t, unsigned line, const char **start, size_t *len)
{
	size_t a, b;

	if (line == 0 || line > t->nlines) {
		*start = t->orig + t->orig_len;
		*len = 0;
		return;
	}
	a = t->line_start[line - 1];
	if (line < t->nlines) {
		b = t->line_start[line] - 1;
	} else {
		/* The last line holds no line end but, perhaps, the file's
		 * final one: no search, so that many matches on one long line
		 * cost no more than one. */
		b = t->orig_len;
		if (b > a && (t->orig[b - 1] == '\n' ||
		              (t->lang == AP_LANG_PYTHON && t->orig[b - 1] == '\r')))
			b--;
	}
	if (b > a && t->orig[b - 1] == '\r' && b < t->orig_len)
		b--;
	*start = t->orig + a;
	*len = b - a;
}

static const char *const c_suffixes[] = {"c",   "h",  "cc",  "cpp", "cxx", "hpp",
                                         "cu",  "cuh", "hip", "inc", NULL};
static const char *const python_suffixes[] = {"py", NULL};

const ap_lang_info ap_langs[] = {
	{AP_LANG_AUTO, "auto", NULL},
	{AP_LANG_C, "c", c_suffixes},
	{AP_LANG_PYTHON, "python", python_suffixes},
	{AP_LANG_TEXT, "text", NULL},
};
const size_t ap_nlangs = sizeof ap_langs / sizeof ap_langs[0];

ap_lang ap_lang_for_path(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (dot == NULL || dot == base)
		return AP_LANG_TEXT;
	dot++;
	for (size_t k = 0; k < ap_nlangs; k++)
		for (const char *const *s = ap_langs[k].suffixes; s && *s; s++)
			if (strcmp(dot, *s) == 0)
				return ap_langs[k].lang;
	return AP_LANG_TEXT;
}

const char *ap_lang_name(ap_lang lang)
{
	for (size_t k = 0; k < ap_nlangs; k++)
		if (ap_langs[k].lang == lang)
			return ap_langs[k].name;
	return "?";
}

const char *ap_ws_name(ap_ws ws)
{
	return ws == AP_WS_STRIP ? "strip-whitespace" : "keep";
}
