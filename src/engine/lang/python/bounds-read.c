/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/lang/python/bounds-int.h"

/* How bounds.c reads a def's body: logical lines of tokens, other scopes
 * marked, the names the body binds, integers, and what CPython decides
 * before any call. */

/* --- Reading logical lines ------------------------------------------------- */

uint32_t br_indent_col(const char *s, size_t *i, size_t n)
{
	uint32_t col = 0;

	for (; *i < n; (*i)++) {
		char c = s[*i];
		if (c == ' ')
			col++;
		else if (c == '\t')
			col = (col / 8 + 1) * 8;
		else if (c == '\f')
			col = 0;
		else if (c != '\r')
			break;
	}
	return col;
}

static void push_tok(walk *w, size_t off, size_t len, uint8_t kind, uint8_t code, unsigned depth)
{
	btok *t;

	ap_xgrow((void **)&w->t, &w->cap, w->nt + 1, sizeof *w->t);
	t = &w->t[w->nt++];
	t->off = (uint32_t)off;
	t->len = (uint32_t)len;
	t->line = w->line;
	t->kind = kind;
	t->code = code;
	t->depth = (uint8_t)depth;
	t->skip = false;
	t->call = false;
}

bool br_word(const walk *w, const btok *t, const char *word)
{
	size_t len = strlen(word);
	return t->kind == T_NAME && t->len == len && memcmp(w->s + t->off, word, len) == 0;
}

bool br_is_name(const walk *w, const btok *t)
{
	const char *s = w->s + t->off;
	ap_buf b = AP_BUF_INIT;
	bool ascii = true, eq;

	if (t->kind != T_NAME)
		return false;
	for (size_t k = 0; k < t->len && ascii; k++)
		ascii = (unsigned char)s[k] < 0x80;
	if (ascii)
		return t->len == w->nlen && memcmp(s, w->name, w->nlen) == 0;
	ap_py_name_nfkc(s, t->len, &b);
	eq = b.len == w->nlen && memcmp(b.data, w->name, w->nlen) == 0;
	ap_buf_free(&b);
	return eq;
}

bool br_reads_name(const walk *w, size_t k)
{
	const btok *t = &w->t[k];

	if (!br_is_name(w, t) || (k > 0 && br_op(&w->t[k - 1], '.')))
		return false;
	/* f(nhead=1): a keyword argument's name. */
	return !(t->call && k + 1 < w->nt && br_op(&w->t[k + 1], '='));
}

size_t br_closer_of(const walk *w, size_t a)
{
	size_t k = a + 1;

	while (k < w->nt && !(br_closer(&w->t[k]) && w->t[k].depth == w->t[a].depth))
		k++;
	return k;
}

/* Marks what runs in another scope: a comprehension's brackets (a `for` at
 * their own level) and a lambda's parameters and body; and what is inside
 * the brackets of a call or a subscript. */
static void mark_scopes(walk *w)
{
	size_t stack[AP_PY_MAX_DEPTH + 1];
	bool comp[AP_PY_MAX_DEPTH + 1];
	unsigned calls[AP_PY_MAX_DEPTH + 2]; /* trailers open at each level */
	size_t ns = 0;

	calls[0] = 0;
	for (size_t k = 0; k < w->nt; k++) {
		btok *t = &w->t[k];
		const btok *prev = k > 0 ? &w->t[k - 1] : NULL;
		t->call = calls[ns] > 0;
		if (br_opener(t) && ns <= AP_PY_MAX_DEPTH) {
			bool trailer = prev != NULL && !br_op(t, '{') &&
			               (br_ident(prev) || br_closer(prev) || prev->kind == T_STRING);
			stack[ns] = k;
			comp[ns++] = false;
			calls[ns] = calls[ns - 1] + trailer;
		} else if (br_kw(t, KW_FOR) && ns > 0 && t->depth == w->t[stack[ns - 1]].depth + 1) {
			comp[ns - 1] = true;
		} else if (br_closer(t) && ns > 0) {
			ns--;
			t->call = calls[ns] > 0;
			if (comp[ns])
				for (size_t j = stack[ns]; j <= k; j++)
					w->t[j].skip = true;
		}
	}
	for (size_t k = 0; k < w->nt; k++) {
		unsigned d = w->t[k].depth, colons = 0, lambdas = 1;
		size_t j;
		if (!br_kw(&w->t[k], KW_LAMBDA) || w->t[k].skip)
			continue;
		/* Its parameters end at its colon (a lambda among its defaults has its own). */
		for (j = k + 1; j < w->nt && colons < lambdas; j++) {
			if (w->t[j].depth != d)
				continue;
			if (br_kw(&w->t[j], KW_LAMBDA))
				lambdas++;
			else if (br_op(&w->t[j], ':'))
				colons++;
		}
		/* Its body ends where the expression around it goes on. */
		for (; j < w->nt; j++) {
			const btok *e = &w->t[j];
			if (e->depth < d || (br_closer(e) && e->depth == d - 1))
				break;
			if (e->depth == d && (br_op(e, ',') || br_op(e, ':') || br_op(e, ';') ||
			                      br_op(e, '=') || br_kw(e, KW_FOR) || br_kw(e, KW_ASYNC)))
				break;
		}
		for (size_t x = k; x < j; x++)
			w->t[x].skip = true;
	}
}

/* The body parsed, so its brackets balance and nest at most AP_PY_MAX_DEPTH deep. */
bool br_next_line(walk *w)
{
	const char *s = w->s;
	size_t i = w->i, n = w->n;
	unsigned depth = 0;

	w->nt = 0;
	for (;;) {
		if (w->first) {
			w->col = w->first_col;
			w->first = false;
		} else {
			w->col = br_indent_col(s, &i, n);
		}
		if (i < n && s[i] == '#') {
			const char *nl = memchr(s + i, '\n', n - i);
			i = nl ? (size_t)(nl - s) : n;
		}
		if (i >= n) {
			w->i = n;
			return false;
		}
		if (s[i] != '\n')
			break;
		i++;
		w->line++;
	}
	while (i < n) {
		char c = s[i];
		uint8_t kind, code;
		bool plain;
		int bad;
		size_t e;

		if (ap_py_byte_class[(unsigned char)c] == C_SPACE) {
			i++;
			continue;
		}
		if (c == '#') {
			const char *nl = memchr(s + i, '\n', n - i);
			i = nl ? (size_t)(nl - s) : n;
			continue;
		}
		if (c == '\\') {
			i += i + 1 < n && s[i + 1] == '\r' ? 3 : 2;
			w->line++;
			continue;
		}
		if (c == '\n') {
			i++;
			w->line++;
			if (depth == 0)
				break;
			continue;
		}
		e = ap_py_lex_token(s, i, n, &kind, &code, &plain, &bad);
		if (kind == T_OP && (code == ')' || code == ']' || code == '}') && depth > 0)
			depth--;
		push_tok(w, i, e - i, kind, code, depth);
		if (kind == T_OP && (code == '(' || code == '[' || code == '{'))
			depth++;
		if (kind == T_STRING)
			w->line += ap_py_count_lines(s + i, e - i);
		i = e;
	}
	w->i = i;
	mark_scopes(w);
	return true;
}

size_t br_header_colon(const walk *w, size_t a)
{
	for (size_t k = a; k < w->nt; k++)
		if (w->t[k].depth == 0 && !w->t[k].skip && br_op(&w->t[k], ':'))
			return k;
	return w->nt;
}

size_t br_stmt_end(const walk *w, size_t a, size_t b)
{
	while (a < b && !(w->t[a].depth == 0 && br_op(&w->t[a], ';')))
		a++;
	return a;
}

bool br_has_comma(const walk *w, size_t a, size_t b)
{
	for (size_t k = a + 1; k + 1 < b; k++)
		if (w->t[k].depth == w->t[a].depth + 1 && br_op(&w->t[k], ','))
			return true;
	return false;
}

void br_unwrap(const walk *w, size_t *a, size_t *b)
{
	while (*b - *a >= 3 && br_op(&w->t[*a], '(') && br_closer_of(w, *a) == *b - 1 &&
	       !br_has_comma(w, *a, *b)) {
		(*a)++;
		(*b)--;
	}
}

void br_text(const walk *w, size_t off, size_t end, char *out, size_t cap)
{
	const char *p = w->s + off, *stop = w->s + end;
	size_t n = 0;
	bool space = false;

	for (; p < stop && n + 5 < cap; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\\') {
			space = n > 0;
			continue;
		}
		if (space)
			out[n++] = ' ';
		space = false;
		out[n++] = *p;
	}
	if (p < stop) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
}

void br_tokens_text(const walk *w, size_t a, size_t b, char *out, size_t cap)
{
	if (a >= b) {
		*out = '\0';
		return;
	}
	br_text(w, w->t[a].off, w->t[b - 1].off + w->t[b - 1].len, out, cap);
}

/* --- Integers -------------------------------------------------------------- */

static bool bn_zero(const bnum *a)
{
	for (size_t k = 0; k < BN_LIMBS; k++)
		if (a->d[k] != 0)
			return false;
	return true;
}

int bn_literal(const char *s, size_t len, bnum *out)
{
	unsigned base = 10;
	size_t i = 0;
	bool digits = false;

	memset(out, 0, sizeof *out);
	if (len > 2 && s[0] == '0' && strchr("xXoObB", s[1]) != NULL) {
		base = (s[1] | 0x20) == 'x' ? 16 : (s[1] | 0x20) == 'o' ? 8 : 2;
		i = 2;
	}
	for (; i < len; i++) {
		unsigned d;
		uint64_t carry;
		char c = s[i];
		if (c == '_')
			continue;
		if (ap_py_is_digit(c))
			d = (unsigned)(c - '0');
		else if (base == 16 && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (unsigned)((c | 0x20) - 'a' + 10);
		else
			return 0;
		if (d >= base)
			return 0;
		digits = true;
		carry = d;
		for (size_t k = 0; k < BN_LIMBS; k++) {
			uint64_t x = (uint64_t)out->d[k] * base + carry;
			out->d[k] = (uint32_t)x;
			carry = x >> 32;
		}
		/* Past 2^256: the rest of the literal is still read for its syntax. */
		if (carry != 0 || out->d[BN_LIMBS - 1] != 0) {
			for (i++; i < len; i++)
				if (!(s[i] == '_' || ap_py_is_digit(s[i]) ||
				      (base == 16 && (s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f')))
					return 0;
			return 2;
		}
	}
	return digits ? 1 : 0;
}

static int mag_cmp(const bnum *a, const bnum *b)
{
	for (size_t k = BN_LIMBS; k-- > 0;)
		if (a->d[k] != b->d[k])
			return a->d[k] < b->d[k] ? -1 : 1;
	return 0;
}

int bn_cmp(const bnum *a, const bnum *b)
{
	if (a->neg != b->neg)
		return a->neg ? -1 : 1;
	return a->neg ? -mag_cmp(a, b) : mag_cmp(a, b);
}

static void mag_inc(bnum *a)
{
	for (size_t k = 0; k < BN_LIMBS && ++a->d[k] == 0; k++)
		;
}

static void mag_dec(bnum *a) /* a is not 0 */
{
	for (size_t k = 0; k < BN_LIMBS && a->d[k]-- == 0; k++)
		;
}

void bn_step(bnum *a, int delta)
{
	if (bn_zero(a)) {
		a->d[0] = 1;
		a->neg = delta < 0;
	} else if (a->neg == (delta < 0)) {
		mag_inc(a);
	} else {
		mag_dec(a);
		if (bn_zero(a))
			a->neg = false;
	}
}

void bn_text(const bnum *a, char *out)
{
	bnum q = *a;
	char rev[BN_LIMBS * 9 + 9];
	size_t n = 0, o = 0;

	do {
		uint64_t r = 0;
		for (size_t k = BN_LIMBS; k-- > 0;) {
			uint64_t x = (r << 32) | q.d[k];
			q.d[k] = (uint32_t)(x / 1000000000u);
			r = x % 1000000000u;
		}
		for (int j = 0; j < 9; j++) {
			rev[n++] = (char)('0' + r % 10);
			r /= 10;
		}
	} while (!bn_zero(&q));
	while (n > 1 && rev[n - 1] == '0')
		n--;
	if (a->neg)
		out[o++] = '-';
	while (n > 0)
		out[o++] = rev[--n];
	out[o] = '\0';
}

int br_int(const walk *w, size_t a, size_t b, bnum *v)
{
	bool neg = false;
	int lit;

	while (a < b) {
		br_unwrap(w, &a, &b);
		if (!(br_op(&w->t[a], '-') || br_op(&w->t[a], '+')))
			break;
		neg ^= br_op(&w->t[a], '-');
		a++;
	}
	if (b != a + 1 || w->t[a].kind != T_NUMBER)
		return 0;
	lit = bn_literal(w->s + w->t[a].off, w->t[a].len, v);
	if (lit == 1 && !bn_zero(v))
		v->neg = neg;
	return lit;
}

/* --- What CPython decides before the call ------------------------------------ */

/* Whether every module-level binding of name is `from typing import name`
 * (as_from) or `import typing`, and no star import comes from elsewhere:
 * then the function, run after the import, sees typing's. */
static bool typing_bound(const ap_py_module *m, const char *name, bool as_from)
{
	bool bound = false;

	for (size_t i = 0; i < m->nbindings; i++) {
		const ap_py_binding *b = &m->bindings[i];
		if (b->kind == AP_PY_BIND_STAR && strcmp(b->module, "typing") != 0)
			return false;
		if (b->name == NULL || strcmp(b->name, name) != 0)
			continue;
		if (as_from ? b->kind != AP_PY_BIND_FROM || strcmp(b->target, name) != 0
		            : b->kind != AP_PY_BIND_IMPORT)
			return false;
		if (strcmp(b->module, "typing") != 0)
			return false;
		bound = true;
	}
	return bound;
}

enum bconst br_const(const walk *w, size_t a, size_t b)
{
	bool neg = false;
	enum bconst c = BC_FIXED;
	bnum v;

	br_unwrap(w, &a, &b);
	while (b - a >= 2 && br_kw(&w->t[a], KW_NOT)) {
		neg = !neg;
		a++;
		br_unwrap(w, &a, &b);
	}
	if (b - a == 1) {
		const btok *t = &w->t[a];
		int lit = t->kind == T_NUMBER ? bn_literal(w->s + t->off, t->len, &v) : 0;
		if (br_kw(t, KW_FALSE) || br_kw(t, KW_NONE) || (lit == 1 && bn_zero(&v)))
			c = BC_FALSE;
		else if (br_kw(t, KW_TRUE) || lit != 0)
			c = BC_TRUE;
		else if (br_word(w, t, "TYPE_CHECKING") && typing_bound(w->m, "TYPE_CHECKING", true))
			c = BC_FALSE;
		for (const char *const *f = w->false_names; f != NULL && *f != NULL; f++)
			if (br_word(w, t, *f))
				c = BC_FALSE;
	} else if (b - a == 3 && br_word(w, &w->t[a], "typing") && br_op(&w->t[a + 1], '.') &&
	           br_word(w, &w->t[a + 2], "TYPE_CHECKING") && typing_bound(w->m, "typing", false)) {
		c = BC_FALSE;
	} else if (b - a == 3 && br_op(&w->t[a + 1], OP_EQ)) {
		/* __name__ is never "__main__" in an imported module. */
		const btok *x = &w->t[a], *y = &w->t[a + 2];
		if ((br_word(w, x, "__name__") && y->kind == T_STRING) ||
		    (br_word(w, y, "__name__") && x->kind == T_STRING)) {
			const btok *str = x->kind == T_STRING ? x : y;
			if ((str->len == 10 && (memcmp(w->s + str->off, "'__main__'", 10) == 0 ||
			                        memcmp(w->s + str->off, "\"__main__\"", 10) == 0)))
				c = BC_FALSE;
		}
	}
	if (neg && c != BC_FIXED)
		c = c == BC_FALSE ? BC_TRUE : BC_FALSE;
	return c;
}

/* --- Local names (pass 1) --------------------------------------------------- */

/* The name t as CPython binds it: NFKC when it is not ASCII. */
static const char *name_key(const walk *w, const btok *t, ap_buf *b, size_t *len)
{
	const char *s = w->s + t->off;

	for (size_t k = 0; k < t->len; k++)
		if ((unsigned char)s[k] >= 0x80) {
			ap_py_name_nfkc(s, t->len, b);
			*len = b->len;
			return b->data;
		}
	*len = t->len;
	return s;
}

static void add_name(walk *w, ap_map *to, const btok *t)
{
	ap_buf b = AP_BUF_INIT;
	size_t len;
	const char *key = name_key(w, t, &b, &len);

	ap_xok(ap_map_put(to, key, len, 1));
	ap_buf_free(&b);
}

bool br_is_local(const walk *w, const btok *t)
{
	ap_buf b = AP_BUF_INIT;
	size_t len;
	const char *key = name_key(w, t, &b, &len);
	bool local = ap_map_get(w->locals, key, len) != AP_MAP_ABSENT &&
	             ap_map_get(w->globals, key, len) == AP_MAP_ABSENT;

	ap_buf_free(&b);
	return local;
}

void br_targets(walk *w, size_t a, size_t b, br_bind_fn fn)
{
	unsigned trailer = 0; /* depth from which brackets are a trailer's */

	for (size_t k = a; k < b; k++) {
		const btok *t = &w->t[k];
		const btok *prev = k > a ? &w->t[k - 1] : NULL;
		const btok *next = k + 1 < b ? &w->t[k + 1] : NULL;
		if (t->skip)
			continue;
		if (trailer > 0 && t->depth < trailer)
			trailer = 0;
		if (trailer > 0)
			continue;
		if (br_opener(t) && prev != NULL &&
		    (br_ident(prev) || br_closer(prev) || prev->kind == T_STRING)) {
			trailer = t->depth + 1u;
			continue;
		}
		if (t->depth == 0 && br_op(t, ':'))
			return; /* an annotation follows */
		if (br_ident(t) && !(prev != NULL && br_op(prev, '.')) &&
		    !(next != NULL && (br_op(next, '.') || br_op(next, '(') || br_op(next, '['))))
			fn(w, t, SIZE_MAX, SIZE_MAX);
	}
}

static void bind_local(walk *w, const btok *t, size_t lit_a, size_t lit_b)
{
	add_name(w, w->locals, t);
	w->bind(w, t, lit_a, lit_b);
}

/* The name each item of an import binds: `import a.b` binds a, `from m
 * import a` a, and `x as y` y. */
static void bind_imports(walk *w, size_t a, size_t b, bool from)
{
	while (a < b) {
		size_t e = a;
		const btok *bound = NULL;
		while (e < b && !(br_op(&w->t[e], ',') && w->t[e].depth <= 1))
			e++;
		for (size_t j = a; j < e; j++) {
			const btok *t = &w->t[j];
			if (br_kw(t, KW_AS)) {
				bound = j + 1 < e ? &w->t[j + 1] : NULL;
				break;
			}
			if (br_ident(t) && (from || bound == NULL))
				bound = t;
		}
		if (bound != NULL && br_ident(bound))
			bind_local(w, bound, SIZE_MAX, SIZE_MAX);
		a = e + 1;
	}
}

/* A literal `NAME = ...` may hold for a name bounds.c follows by value. */
static bool plain_literal(const walk *w, size_t k, size_t b)
{
	const btok *t = &w->t[k];
	bnum v;

	if (k + 1 == b)
		return t->kind == T_STRING || br_kw(t, KW_TRUE) || br_kw(t, KW_FALSE) ||
		       br_kw(t, KW_NONE) || (t->kind == T_NUMBER && br_int(w, k, b, &v) == 1);
	return br_int(w, k, b, &v) == 1;
}

void br_collect_simple(walk *w, size_t a, size_t b)
{
	const btok *t = &w->t[a];
	size_t seg = a;

	if (br_kw(t, KW_GLOBAL) || br_kw(t, KW_NONLOCAL)) {
		for (size_t k = a + 1; k < b; k++)
			if (br_ident(&w->t[k]))
				add_name(w, w->globals, &w->t[k]);
		return;
	}
	if (br_kw(t, KW_IMPORT)) {
		bind_imports(w, a + 1, b, false);
		return;
	}
	if (br_kw(t, KW_FROM)) {
		for (size_t k = a + 1; k < b; k++)
			if (br_kw(&w->t[k], KW_IMPORT)) {
				bind_imports(w, k + 1, b, true);
				break;
			}
		return;
	}
	if (br_kw(t, KW_DEL)) {
		br_targets(w, a + 1, b, bind_local);
		return;
	}
	if (b - a >= 3 && br_ident(t) && br_op(&w->t[a + 1], '=') && plain_literal(w, a + 2, b)) {
		bind_local(w, t, a + 2, b);
		return;
	}
	if (b - a >= 2 && br_ident(t) && br_op(&w->t[a + 1], ':'))
		bind_local(w, t, SIZE_MAX, SIZE_MAX); /* NAME: annotation, local even without a value */
	for (size_t k = a; k < b; k++) {
		const btok *e = &w->t[k];
		if (e->depth != 0 || e->skip)
			continue;
		if (br_op(e, '=')) {
			br_targets(w, seg, k, bind_local);
			seg = k + 1;
		} else if (ap_py_augassign_code(e->code) && e->kind == T_OP) {
			br_targets(w, seg, k, bind_local);
			return;
		}
	}
}

void br_collect_header(walk *w, size_t a, size_t hc)
{
	const btok *t = &w->t[a];

	if (br_kw(t, KW_FOR)) {
		size_t k = a + 1;
		while (k < hc && !(w->t[k].depth == 0 && br_kw(&w->t[k], KW_IN)))
			k++;
		br_targets(w, a + 1, k, bind_local);
	} else if (br_kw(t, KW_DEF) || br_kw(t, KW_CLASS)) {
		if (a + 1 < hc && br_ident(&w->t[a + 1]))
			bind_local(w, &w->t[a + 1], SIZE_MAX, SIZE_MAX);
	} else if (br_kw(t, KW_WITH) || br_kw(t, KW_EXCEPT)) {
		for (size_t k = a + 1; k + 1 < hc; k++) {
			if (!br_kw(&w->t[k], KW_AS) || w->t[k].depth > 1)
				continue;
			size_t e = k + 1;
			while (e < hc && !(w->t[e].depth <= w->t[k].depth &&
			                   (br_op(&w->t[e], ',') || br_closer(&w->t[e]))))
				e++;
			br_targets(w, k + 1, e, bind_local);
		}
	}
}

void br_collect_walrus(walk *w)
{
	for (size_t k = 1; k < w->nt; k++)
		if (br_op(&w->t[k], OP_WALRUS) && !w->t[k].skip && br_ident(&w->t[k - 1]))
			bind_local(w, &w->t[k - 1], SIZE_MAX, SIZE_MAX);
}
