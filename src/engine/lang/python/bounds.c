/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-map.h"
#include "engine/lang/python/python-int.h"

/* ap_py_def_bound reads a def's body again, one logical line at a time,
 * with the lexer alone: the statement reader skimmed it. Two passes over
 * it: the first collects the function's local names (what Python's
 * compiler makes local), the second follows the blocks, telling which
 * statements every call may run, which run only where a condition that is
 * the same on every call holds, and which never run, and judges the
 * comparisons on the way. */

/* A token of the logical line being read. */
typedef struct btok {
	uint32_t off, len, line;
	uint8_t kind, code;
	uint8_t depth; /* brackets open around it; an opener or closer counts those outside */
	bool skip;     /* in a lambda's body or a comprehension: another scope */
} btok;

/* How a statement is reached: in another scope (a nested def or class),
 * never, only where a condition the same on every call holds (which the
 * reader cannot decide), or on some call. */
enum reach { R_SCOPE, R_DEAD, R_FIXED, R_RUNS };

/* What an R_FIXED statement depends on: a condition's source. */
typedef struct cause {
	enum { CA_NONE, CA_COND, CA_IMPORT } kind;
	uint32_t off, end; /* the condition (the except clause) in the source */
	unsigned line;
} cause;

/* A block: the statements at one indentation inside a compound statement. */
typedef struct frame {
	uint32_t col;
	uint8_t reach;
	bool ended; /* a return, raise, break or continue ended it */
	cause why;  /* R_FIXED */
	/* The compound statement last read at this level, for the arms after it. */
	enum { CH_NONE, CH_IF, CH_LOOP, CH_TRY } chain;
	bool taken;   /* CH_IF: an earlier arm is certainly taken */
	cause unsure; /* CH_IF, CH_TRY: why the later arms are R_FIXED (kind CA_NONE: they are not) */
} frame;

/* A candidate bound: cls -1 below LLONG_MIN, 0 v itself, 1 above LLONG_MAX. */
typedef struct bval {
	int cls;
	long long v;
} bval;

typedef struct best {
	bool have;
	bval val;
	unsigned line;
	char text[96]; /* the comparison, as written */
	char why[200];  /* R_FIXED: what it depends on */
} best;

typedef struct walk {
	const ap_py_module *m;
	const ap_py_def *d;
	const char *s;
	size_t i, n;
	unsigned line;
	uint32_t first_col;
	bool first;
	const char *name;
	size_t nlen;
	const char *const *false_names;

	btok *t; /* the logical line */
	size_t nt, cap;
	uint32_t col;

	ap_map *locals;  /* names the body binds (pass 1) */
	ap_map *globals; /* names it declares global */
	bool collecting;

	frame *fr;
	size_t nfr, frcap;
	/* what a header line opens for the next, deeper line */
	uint8_t next_reach;
	cause next_why;

	best runs, fixed;
} walk;

/* --- Reading logical lines ------------------------------------------------- */

static uint32_t indent_col(const char *s, size_t *i, size_t n)
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
}

/* Reads the next logical line into w->t; false at the end of the body. The
 * body parsed, so its brackets balance and nest at most AP_PY_MAX_DEPTH deep. */
static bool next_line(walk *w)
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
			w->col = indent_col(s, &i, n);
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
	return true;
}

static bool is_op(const btok *t, unsigned code)
{
	return t->kind == T_OP && t->code == code;
}

static bool is_kw(const btok *t, unsigned code)
{
	return t->kind == T_NAME && t->code == code;
}

static bool is_opener(const btok *t)
{
	return is_op(t, '(') || is_op(t, '[') || is_op(t, '{');
}

static bool is_closer(const btok *t)
{
	return is_op(t, ')') || is_op(t, ']') || is_op(t, '}');
}

static bool is_word(const walk *w, const btok *t, const char *word)
{
	size_t len = strlen(word);
	return t->kind == T_NAME && t->len == len && memcmp(w->s + t->off, word, len) == 0;
}

/* Whether the name token t is the name asked for, as CPython binds it:
 * NFKC when it is not ASCII. */
static bool is_name(const walk *w, const btok *t)
{
	const char *s = w->s + t->off;
	ap_buf b = AP_BUF_INIT;
	bool ascii = true, eq;

	for (size_t k = 0; k < t->len && ascii; k++)
		ascii = (unsigned char)s[k] < 0x80;
	if (ascii)
		return t->len == w->nlen && memcmp(s, w->name, w->nlen) == 0;
	ap_py_name_nfkc(s, t->len, &b);
	eq = b.len == w->nlen && memcmp(b.data, w->name, w->nlen) == 0;
	ap_buf_free(&b);
	return eq;
}

/* A name that is not a keyword. */
static bool is_ident(const btok *t)
{
	return t->kind == T_NAME && t->code == 0;
}

/* The closer of the opener at a (the line's brackets balance). */
static size_t closer_of(const walk *w, size_t a)
{
	size_t k = a + 1;

	while (k < w->nt && !(is_closer(&w->t[k]) && w->t[k].depth == w->t[a].depth))
		k++;
	return k;
}

/* Marks what runs in another scope: a comprehension's brackets (a `for` at
 * their own level) and a lambda's parameters and body. */
static void mark_scopes(walk *w)
{
	size_t stack[AP_PY_MAX_DEPTH + 1];
	bool comp[AP_PY_MAX_DEPTH + 1];
	size_t ns = 0;

	for (size_t k = 0; k < w->nt; k++) {
		btok *t = &w->t[k];
		if (is_opener(t) && ns <= AP_PY_MAX_DEPTH) {
			stack[ns] = k;
			comp[ns++] = false;
		} else if (is_kw(t, KW_FOR) && ns > 0 && t->depth == w->t[stack[ns - 1]].depth + 1) {
			comp[ns - 1] = true;
		} else if (is_closer(t) && ns > 0) {
			ns--;
			if (comp[ns])
				for (size_t j = stack[ns]; j <= k; j++)
					w->t[j].skip = true;
		}
	}
	for (size_t k = 0; k < w->nt; k++) {
		unsigned d = w->t[k].depth, colons = 0, lambdas = 1;
		size_t j;
		if (!is_kw(&w->t[k], KW_LAMBDA) || w->t[k].skip)
			continue;
		/* Its parameters end at its colon (a lambda among its defaults has its own). */
		for (j = k + 1; j < w->nt && colons < lambdas; j++) {
			if (w->t[j].depth != d)
				continue;
			if (is_kw(&w->t[j], KW_LAMBDA))
				lambdas++;
			else if (is_op(&w->t[j], ':'))
				colons++;
		}
		/* Its body ends where the expression around it goes on. */
		for (; j < w->nt; j++) {
			const btok *e = &w->t[j];
			if (e->depth < d || (is_closer(e) && e->depth == d - 1))
				break;
			if (e->depth == d && (is_op(e, ',') || is_op(e, ':') || is_op(e, ';') ||
			                      is_op(e, '=') || is_kw(e, KW_FOR) || is_kw(e, KW_ASYNC)))
				break;
		}
		for (size_t x = k; x < j; x++)
			w->t[x].skip = true;
	}
}

/* The colon ending a compound statement's header that starts at a, or nt. */
static size_t header_colon(const walk *w, size_t a)
{
	for (size_t k = a; k < w->nt; k++)
		if (w->t[k].depth == 0 && !w->t[k].skip && is_op(&w->t[k], ':'))
			return k;
	return w->nt;
}

/* The end of the simple statement starting at a: its `;` or b. */
static size_t stmt_end(const walk *w, size_t a, size_t b)
{
	while (a < b && !(w->t[a].depth == 0 && is_op(&w->t[a], ';')))
		a++;
	return a;
}

/* --- Local names (pass 1) --------------------------------------------------- */

static void add_name(walk *w, ap_map *to, const btok *t)
{
	ap_xok(ap_map_put(to, w->s + t->off, t->len, 1));
}

static bool is_local(const walk *w, const btok *t)
{
	return ap_map_get(w->locals, w->s + t->off, t->len) != AP_MAP_ABSENT &&
	       ap_map_get(w->globals, w->s + t->off, t->len) == AP_MAP_ABSENT;
}

/* The names a target list in [a, b) binds: bare names, in tuples and lists,
 * starred or not; not attributes, subscripts or what a call or subscript holds. */
static void bind_targets(walk *w, size_t a, size_t b)
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
		if (is_opener(t) && prev != NULL &&
		    (is_ident(prev) || is_closer(prev) || prev->kind == T_STRING)) {
			trailer = t->depth + 1u;
			continue;
		}
		if (t->depth == 0 && is_op(t, ':'))
			return; /* an annotation follows */
		if (is_ident(t) && !(prev != NULL && is_op(prev, '.')) &&
		    !(next != NULL && (is_op(next, '.') || is_op(next, '(') || is_op(next, '['))))
			add_name(w, w->locals, t);
	}
}

/* The name each item of an import binds: `import a.b` binds a, `from m
 * import a` a, and `x as y` y. */
static void bind_imports(walk *w, size_t a, size_t b, bool from)
{
	while (a < b) {
		size_t e = a;
		const btok *bound = NULL;
		while (e < b && !(is_op(&w->t[e], ',') && w->t[e].depth <= 1))
			e++;
		for (size_t j = a; j < e; j++) {
			const btok *t = &w->t[j];
			if (is_kw(t, KW_AS)) {
				bound = j + 1 < e ? &w->t[j + 1] : NULL;
				break;
			}
			if (is_ident(t) && (from || bound == NULL))
				bound = t;
		}
		if (bound != NULL && is_ident(bound))
			add_name(w, w->locals, bound);
		a = e + 1;
	}
}

static void collect_simple(walk *w, size_t a, size_t b)
{
	const btok *t = &w->t[a];
	size_t seg = a;

	if (is_kw(t, KW_GLOBAL) || is_kw(t, KW_NONLOCAL)) {
		for (size_t k = a + 1; k < b; k++)
			if (is_ident(&w->t[k]))
				add_name(w, w->globals, &w->t[k]);
		return;
	}
	if (is_kw(t, KW_IMPORT)) {
		bind_imports(w, a + 1, b, false);
		return;
	}
	if (is_kw(t, KW_FROM)) {
		for (size_t k = a + 1; k < b; k++)
			if (is_kw(&w->t[k], KW_IMPORT)) {
				bind_imports(w, k + 1, b, true);
				break;
			}
		return;
	}
	if (is_kw(t, KW_DEL)) {
		bind_targets(w, a + 1, b);
		return;
	}
	if (b - a >= 2 && is_ident(t) && is_op(&w->t[a + 1], ':'))
		add_name(w, w->locals, t); /* NAME: annotation, local even without a value */
	for (size_t k = a; k < b; k++) {
		const btok *e = &w->t[k];
		if (e->depth != 0 || e->skip)
			continue;
		if (is_op(e, '=')) {
			bind_targets(w, seg, k);
			seg = k + 1;
		} else if (ap_py_augassign_code(e->code) && e->kind == T_OP) {
			bind_targets(w, seg, k);
			return;
		}
	}
}

/* Names bound in a header: for targets, `as` targets, the def or class name. */
static void collect_header(walk *w, size_t a, size_t hc)
{
	const btok *t = &w->t[a];

	if (is_kw(t, KW_FOR)) {
		size_t k = a + 1;
		while (k < hc && !(w->t[k].depth == 0 && is_kw(&w->t[k], KW_IN)))
			k++;
		bind_targets(w, a + 1, k);
	} else if (is_kw(t, KW_DEF) || is_kw(t, KW_CLASS)) {
		if (a + 1 < hc && is_ident(&w->t[a + 1]))
			add_name(w, w->locals, &w->t[a + 1]);
	} else if (is_kw(t, KW_WITH) || is_kw(t, KW_EXCEPT)) {
		for (size_t k = a + 1; k + 1 < hc; k++) {
			if (!is_kw(&w->t[k], KW_AS) || w->t[k].depth > 1)
				continue;
			size_t e = k + 1;
			while (e < hc && !(w->t[e].depth <= w->t[k].depth &&
			                   (is_op(&w->t[e], ',') || is_closer(&w->t[e]))))
				e++;
			bind_targets(w, k + 1, e);
		}
	}
}

/* Walrus targets anywhere in the line outside other scopes. */
static void collect_walrus(walk *w)
{
	for (size_t k = 1; k < w->nt; k++)
		if (is_op(&w->t[k], OP_WALRUS) && !w->t[k].skip && is_ident(&w->t[k - 1]))
			add_name(w, w->locals, &w->t[k - 1]);
}

/* --- Conditions ------------------------------------------------------------ */

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

/* The value of an integer literal: 1 when it fits 64 bits (*v), 2 when it
 * does not, 0 for any other number. */
static int int_literal(const char *s, size_t len, unsigned long long *v)
{
	unsigned base = 10;
	size_t i = 0;
	bool digits = false, huge = false;

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
		else if (base == 16 && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (unsigned)((c | 0x20) - 'a' + 10);
		else
			return 0;
		if (d >= base)
			return 0;
		if (!huge && *v > (~0ULL - d) / base)
			huge = true;
		if (!huge)
			*v = *v * base + d;
		digits = true;
	}
	return !digits ? 0 : huge ? 2 : 1;
}

enum bcond { C_FALSE, C_TRUE, C_VARIES, C_FIXED };

/* [a, b) without parentheses around all of it. */
static void unwrap(const walk *w, size_t *a, size_t *b)
{
	while (*b - *a >= 3 && is_op(&w->t[*a], '(') && closer_of(w, *a) == *b - 1) {
		(*a)++;
		(*b)--;
	}
}

/* What decides the condition [a, b): a value CPython knows (constants,
 * TYPE_CHECKING, __name__, the names read as false), a local name (it may
 * differ from call to call), or nothing of the call's (the same on every call). */
static enum bcond condition(const walk *w, size_t a, size_t b)
{
	bool neg = false;
	enum bcond c = C_FIXED;
	unsigned long long v;

	unwrap(w, &a, &b);
	if (b - a >= 2 && is_kw(&w->t[a], KW_NOT)) {
		neg = true;
		a++;
		unwrap(w, &a, &b);
	}
	for (size_t k = a; k < b; k++) {
		const btok *t = &w->t[k];
		if (t->skip || !is_ident(t) || (k > a && is_op(&w->t[k - 1], '.')) ||
		    (t->depth > 0 && k + 1 < b && is_op(&w->t[k + 1], '=')))
			continue;
		if (is_local(w, t))
			return C_VARIES;
	}
	if (b - a == 1) {
		const btok *t = &w->t[a];
		int lit = t->kind == T_NUMBER ? int_literal(w->s + t->off, t->len, &v) : 0;
		if (is_kw(t, KW_FALSE) || is_kw(t, KW_NONE) || (lit == 1 && v == 0))
			c = C_FALSE;
		else if (is_kw(t, KW_TRUE) || lit == 2 || (lit == 1 && v != 0))
			c = C_TRUE;
		else if (is_word(w, t, "TYPE_CHECKING") && typing_bound(w->m, "TYPE_CHECKING", true))
			c = C_FALSE;
		for (const char *const *f = w->false_names; f != NULL && *f != NULL; f++)
			if (is_word(w, t, *f))
				c = C_FALSE;
	} else if (b - a == 3 && is_word(w, &w->t[a], "typing") && is_op(&w->t[a + 1], '.') &&
	           is_word(w, &w->t[a + 2], "TYPE_CHECKING") && typing_bound(w->m, "typing", false)) {
		c = C_FALSE;
	} else if (b - a == 3 && is_op(&w->t[a + 1], OP_EQ)) {
		/* __name__ is never "__main__" in an imported module. */
		const btok *x = &w->t[a], *y = &w->t[a + 2];
		if ((is_word(w, x, "__name__") && y->kind == T_STRING) ||
		    (is_word(w, y, "__name__") && x->kind == T_STRING)) {
			const btok *str = x->kind == T_STRING ? x : y;
			if ((str->len == 10 && (memcmp(w->s + str->off, "'__main__'", 10) == 0 ||
			                        memcmp(w->s + str->off, "\"__main__\"", 10) == 0)))
				c = C_FALSE;
		}
	}
	if (neg && (c == C_FALSE || c == C_TRUE))
		c = c == C_FALSE ? C_TRUE : C_FALSE;
	return c;
}

/* --- Comparisons ----------------------------------------------------------- */

/* An operand of interest: the bare name, an integer literal, or neither. */
enum { O_OTHER, O_NAME, O_INT };

typedef struct operand {
	int what;
	int lit;                /* O_INT: int_literal's answer */
	unsigned long long mag; /* O_INT: the magnitude */
	bool neg;
	size_t first, last;     /* its tokens */
} operand;

/* Before an operand: what cannot continue an expression into it. */
static bool starts_operand(const walk *w, size_t k, size_t a)
{
	const btok *t;

	if (k < a || k == SIZE_MAX)
		return true;
	t = &w->t[k];
	if (t->kind == T_NAME)
		return t->code != 0 && t->code != KW_AWAIT && t->code != KW_FALSE &&
		       t->code != KW_NONE && t->code != KW_TRUE;
	if (t->kind != T_OP)
		return false;
	switch (t->code) {
	case '(':
	case '[':
	case '{':
	case ',':
	case ':':
	case ';':
	case '=':
	case '<':
	case '>':
	case OP_LE:
	case OP_GE:
	case OP_EQ:
	case OP_NE:
	case OP_WALRUS:
	case OP_ARROW:
		return true;
	default:
		return ap_py_augassign_code(t->code);
	}
}

/* After an operand: what cannot continue it (a trailer, a binary operator). */
static bool ends_operand(const walk *w, size_t k, size_t b)
{
	const btok *t;

	if (k >= b)
		return true;
	t = &w->t[k];
	return is_closer(t) || (!is_opener(t) && starts_operand(w, k, 0));
}

static bool is_sign(const btok *t)
{
	return is_op(t, '-') || is_op(t, '+');
}

static operand signed_atom(const walk *w, size_t k, size_t b, size_t *after);

/* The atom at k (a name, a number, or one in parentheses), read forwards;
 * *after is the token after it. */
static operand atom(const walk *w, size_t k, size_t b, size_t *after)
{
	operand o = {O_OTHER, 0, 0, false, k, k};
	const btok *t = &w->t[k];

	*after = k + 1;
	if (is_op(t, '(')) {
		size_t c = closer_of(w, k), inner_after;
		operand in;
		*after = c + 1;
		if (c + 1 > b || c == k + 1)
			return o;
		in = signed_atom(w, k + 1, c, &inner_after);
		if (inner_after != c)
			return o;
		in.first = k;
		in.last = c;
		return in;
	}
	if (t->kind == T_NAME && is_name(w, t))
		o.what = O_NAME;
	else if (t->kind == T_NUMBER && (o.lit = int_literal(w->s + t->off, t->len, &o.mag)) != 0)
		o.what = O_INT;
	return o;
}

/* Unary signs, then an atom, from k up to b: a name after a sign is no bare name. */
static operand signed_atom(const walk *w, size_t k, size_t b, size_t *after)
{
	operand o = {O_OTHER, 0, 0, false, k, k};
	size_t j = k;
	bool neg = false;

	while (j < b && is_sign(&w->t[j])) {
		neg ^= is_op(&w->t[j], '-');
		j++;
	}
	*after = b;
	if (j >= b)
		return o;
	o = atom(w, j, b, after);
	if (o.what == O_NAME && j > k)
		o.what = O_OTHER;
	o.neg ^= neg;
	o.first = k;
	return o;
}

/* The operand after the comparison at k, up to b. */
static operand right_operand(const walk *w, size_t k, size_t b)
{
	operand bad = {O_OTHER, 0, 0, false, k, k}, o;
	size_t after;

	o = signed_atom(w, k + 1, b, &after);
	if (after > b || !ends_operand(w, after, b))
		return bad;
	return o;
}

/* The operand before the comparison at k, back to a. */
static operand left_operand(const walk *w, size_t k, size_t a)
{
	operand bad = {O_OTHER, 0, 0, false, k, k}, o;
	size_t start, after;
	bool neg = false;

	if (k == 0 || k - 1 < a)
		return bad;
	start = k - 1;
	if (is_op(&w->t[start], ')')) {
		while (start > a && !(is_op(&w->t[start], '(') && w->t[start].depth == w->t[k - 1].depth))
			start--;
	}
	o = atom(w, start, k, &after);
	if (after != k)
		return bad;
	while (start > a && is_sign(&w->t[start - 1]) && starts_operand(w, start - 2, a)) {
		neg ^= is_op(&w->t[start - 1], '-');
		start--;
	}
	if (!starts_operand(w, start - 1, a) || (o.what == O_NAME && start < o.first))
		return bad;
	o.neg ^= neg;
	o.first = start;
	o.last = k - 1;
	return o;
}

/* The bound `name <= N` puts (strict: `name < N`): N, or N - 1. */
static bval bound_of(const operand *lit, bool strict)
{
	bval r = {0, 0};
	unsigned long long u;

	if (lit->lit == 2) {
		r.cls = lit->neg ? -1 : 1;
		return r;
	}
	if (!lit->neg) {
		if (strict && lit->mag == 0) {
			r.v = -1;
			return r;
		}
		u = lit->mag - strict;
		if (u > (unsigned long long)LLONG_MAX)
			r.cls = 1;
		else
			r.v = (long long)u;
		return r;
	}
	/* -(mag + strict) */
	if (lit->mag > (1ULL << 63) - strict) {
		r.cls = -1;
		return r;
	}
	u = lit->mag + strict;
	r.v = u == (1ULL << 63) ? LLONG_MIN : -(long long)u;
	return r;
}

static int bval_cmp(bval x, bval y)
{
	if (x.cls != y.cls)
		return x.cls < y.cls ? -1 : 1;
	return (x.v > y.v) - (x.v < y.v);
}

/* The source s[off, end), its spaces squeezed, at most cap - 1 bytes. */
static void source_text(const walk *w, size_t off, size_t end, char *out, size_t cap)
{
	const char *p = w->s + off, *stop = w->s + end;
	size_t n = 0;
	bool space = false;

	for (; p < stop && n + 4 < cap; p++) {
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

static cause cause_of(const walk *w, int kind, size_t a, size_t b)
{
	cause c = {kind, w->t[a].off, w->t[b].off + w->t[b].len, w->t[a].line};
	return c;
}

static void cause_text(const walk *w, const cause *c, char *out, size_t cap)
{
	char text[64];

	source_text(w, c->off, c->end, text, sizeof text);
	snprintf(out, cap,
	         c->kind == CA_IMPORT ? "`%s` at line %u, taken only where an import fails"
	                              : "`%s` at line %u, the same on every call, which the "
	                                "reader cannot decide",
	         text, c->line);
}

static void offer(walk *w, const operand *l, const operand *r, size_t op, uint8_t reach,
                  const cause *why)
{
	const operand *lit = l->what == O_INT ? l : r;
	bool strict = w->t[op].code == '<' || w->t[op].code == '>';
	bval v = bound_of(lit, strict);
	best *b = reach == R_RUNS ? &w->runs : &w->fixed;

	if (b->have && bval_cmp(v, b->val) <= 0)
		return;
	b->have = true;
	b->val = v;
	b->line = w->t[op].line;
	source_text(w, w->t[l->first].off, w->t[r->last].off + w->t[r->last].len, b->text,
	            sizeof b->text);
	if (reach == R_FIXED)
		cause_text(w, why, b->why, sizeof b->why);
}

/* Judges the comparisons in [a, b) of the line, reached so. */
static void judge(walk *w, size_t a, size_t b, uint8_t reach, const cause *why)
{
	if (reach <= R_DEAD)
		return;
	for (size_t k = a; k < b; k++) {
		const btok *t = &w->t[k];
		operand l, r;
		if (t->kind != T_OP || t->skip ||
		    !(t->code == '<' || t->code == OP_LE || t->code == '>' || t->code == OP_GE))
			continue;
		l = left_operand(w, k, a);
		r = right_operand(w, k, b);
		/* name <= N, name < N; N >= name, N > name */
		if ((t->code == '<' || t->code == OP_LE) ? l.what == O_NAME && r.what == O_INT
		                                         : l.what == O_INT && r.what == O_NAME)
			offer(w, &l, &r, k, reach, why);
	}
}

/* --- Blocks ---------------------------------------------------------------- */

static frame *top(walk *w)
{
	return &w->fr[w->nfr - 1];
}

static void push_frame(walk *w, uint32_t col, uint8_t reach, cause why)
{
	frame *f;

	ap_xgrow((void **)&w->fr, &w->frcap, w->nfr + 1, sizeof *w->fr);
	f = &w->fr[w->nfr++];
	memset(f, 0, sizeof *f);
	f->col = col;
	f->reach = reach;
	f->why = why;
}

/* Lowers *r to r2 (with its cause) when r2 is less. */
static void meet(uint8_t *r, cause *why, uint8_t r2, cause why2)
{
	if (r2 < *r) {
		*r = r2;
		*why = why2;
	}
}

static bool ends_block(const btok *t)
{
	return is_kw(t, KW_RETURN) || is_kw(t, KW_RAISE) || is_kw(t, KW_BREAK) ||
	       is_kw(t, KW_CONTINUE);
}

/* Simple statements in [a, b); *ended when one ends the block. */
static void simple_stmts(walk *w, size_t a, size_t b, uint8_t reach, const cause *why,
                         bool *ended)
{
	while (a < b) {
		size_t e = stmt_end(w, a, b);
		if (w->collecting)
			collect_simple(w, a, e);
		else
			judge(w, a, e, *ended ? R_DEAD : reach, why);
		if (a < e && ends_block(&w->t[a]))
			*ended = true;
		a = e + 1;
	}
}

static bool names_import_error(const walk *w, size_t a, size_t b)
{
	for (size_t k = a; k < b; k++)
		if (is_word(w, &w->t[k], "ImportError") || is_word(w, &w->t[k], "ModuleNotFoundError"))
			return true;
	return false;
}

/* The arms of an if: an arm after one certainly taken is dead; one after a
 * condition the reader cannot decide runs only where it is false. */
static void if_header(walk *w, frame *f, size_t a, size_t hc)
{
	const btok *t = &w->t[a];
	enum bcond c = C_TRUE;
	uint8_t at = w->next_reach;
	cause at_why = w->next_why;

	if (is_kw(t, KW_IF) || is_kw(t, KW_WHILE)) {
		f->chain = is_kw(t, KW_IF) ? CH_IF : CH_LOOP;
		f->taken = false;
		f->unsure.kind = CA_NONE;
	} else if (f->taken) {
		at = R_DEAD;
	} else if (f->unsure.kind != CA_NONE) {
		meet(&at, &at_why, R_FIXED, f->unsure);
	}
	if (!is_kw(t, KW_ELSE))
		c = condition(w, a + 1, hc);
	judge(w, a + 1, hc, at, &at_why);
	w->next_reach = at;
	w->next_why = at_why;
	if (c == C_FALSE) {
		w->next_reach = R_DEAD;
	} else if (c == C_FIXED) {
		cause cw = cause_of(w, CA_COND, a + 1, hc - 1);
		meet(&w->next_reach, &w->next_why, R_FIXED, cw);
		if (f->unsure.kind == CA_NONE)
			f->unsure = cw;
	} else if (c == C_TRUE && at > R_DEAD && f->chain == CH_IF) {
		f->taken = true;
	}
}

/* A compound statement's header, keyword at a and colon at hc: judges its
 * expressions and sets how its body is reached (w->next_reach, next_why). */
static void header(walk *w, frame *f, size_t a, size_t hc)
{
	const btok *t = &w->t[a];
	bool arm = is_kw(t, KW_ELIF) || is_kw(t, KW_ELSE);

	if (is_kw(t, KW_IF) || is_kw(t, KW_WHILE) || (arm && f->chain == CH_IF)) {
		if_header(w, f, a, hc);
		return;
	}
	if (is_kw(t, KW_EXCEPT) && names_import_error(w, a + 1, hc)) {
		cause cw = cause_of(w, CA_IMPORT, a, hc - 1);
		judge(w, a + 1, hc, w->next_reach, &w->next_why);
		meet(&w->next_reach, &w->next_why, R_FIXED, cw);
		if (f->chain == CH_TRY && f->unsure.kind == CA_NONE)
			f->unsure = cw;
		return;
	}
	judge(w, a + 1, hc, w->next_reach, &w->next_why);
	if (is_kw(t, KW_ELSE) && f->chain == CH_TRY && f->unsure.kind != CA_NONE)
		meet(&w->next_reach, &w->next_why, R_FIXED, f->unsure); /* try's else: no import failed */
	if (is_kw(t, KW_TRY)) {
		f->chain = CH_TRY;
		f->unsure.kind = CA_NONE;
	} else if (is_kw(t, KW_FOR)) {
		f->chain = CH_LOOP;
	} else if (is_kw(t, KW_WITH)) {
		f->chain = CH_NONE;
	}
}

static bool compound_keyword(const btok *t)
{
	return is_kw(t, KW_IF) || is_kw(t, KW_ELIF) || is_kw(t, KW_ELSE) || is_kw(t, KW_WHILE) ||
	       is_kw(t, KW_FOR) || is_kw(t, KW_TRY) || is_kw(t, KW_EXCEPT) ||
	       is_kw(t, KW_FINALLY) || is_kw(t, KW_WITH);
}

/* One logical line in the block f. */
static void line_in(walk *w, frame *f)
{
	size_t a = 0, hc;
	const btok *t;
	bool one_line_end = false;

	w->next_reach = f->ended && f->reach > R_DEAD ? R_DEAD : f->reach;
	w->next_why = f->why;
	if (w->next_reach == R_SCOPE)
		return;
	mark_scopes(w);
	if (w->collecting)
		collect_walrus(w);
	t = &w->t[0];
	if (is_kw(t, KW_ASYNC) && w->nt > 1)
		t = &w->t[a = 1];
	if (is_kw(t, KW_DEF) || is_kw(t, KW_CLASS)) {
		/* Another scope: neither its header nor its body is this function's path. */
		if (w->collecting)
			collect_header(w, a, w->nt);
		w->next_reach = R_SCOPE;
		f->chain = CH_NONE;
		return;
	}
	if (!compound_keyword(t)) {
		/* match and case headers open blocks reached as they are. */
		f->chain = CH_NONE;
		simple_stmts(w, 0, w->nt, w->next_reach, &w->next_why, &f->ended);
		return;
	}
	hc = header_colon(w, a);
	if (w->collecting)
		collect_header(w, a, hc);
	else
		header(w, f, a, hc);
	if (hc + 1 < w->nt)
		simple_stmts(w, hc + 1, w->nt, w->next_reach, &w->next_why, &one_line_end);
}

static void run_pass(walk *w, bool collecting)
{
	cause none = {CA_NONE, 0, 0, 0};

	w->collecting = collecting;
	w->i = w->d->body_off;
	w->line = w->d->body_line;
	w->first = true;
	w->nfr = 0;
	push_frame(w, 0, R_RUNS, none);
	for (bool first = true; next_line(w); first = false) {
		if (first)
			w->fr[0].col = w->col;
		else if (w->col > top(w)->col)
			push_frame(w, w->col, w->next_reach, w->next_why);
		while (w->nfr > 1 && w->col < top(w)->col)
			w->nfr--;
		line_in(w, top(w));
	}
}

void ap_py_def_bound(const ap_py_module *m, const ap_py_def *d, const char *name,
                     const char *const *false_names, ap_py_bound *out)
{
	walk w = {0};
	size_t ls = d->body_off;

	memset(out, 0, sizeof *out);
	if (d->lambda) {
		out->kind = AP_PY_BOUND_UNKNOWN;
		out->line = d->line;
		snprintf(out->why, sizeof out->why, "it is a lambda (line %u), whose body is not read",
		         d->line);
		return;
	}
	w.m = m;
	w.d = d;
	w.s = m->src;
	w.n = d->body_end;
	w.name = name;
	w.nlen = strlen(name);
	w.false_names = false_names;
	while (ls > 0 && m->src[ls - 1] != '\n')
		ls--;
	w.first_col = indent_col(m->src, &ls, d->body_off);
	w.locals = ap_xnonnull(ap_map_new());
	w.globals = ap_xnonnull(ap_map_new());
	for (size_t k = 0; k < d->nparams; k++)
		ap_xok(ap_map_put_str(w.locals, d->params[k].name, 1));
	run_pass(&w, true);
	run_pass(&w, false);

	if (w.fixed.have && (!w.runs.have || bval_cmp(w.fixed.val, w.runs.val) > 0)) {
		out->kind = AP_PY_BOUND_UNKNOWN;
		out->line = w.fixed.line;
		snprintf(out->why, sizeof out->why, "whether `%s` (line %u) runs depends on %s",
		         w.fixed.text, w.fixed.line, w.fixed.why);
	} else if (w.runs.have && w.runs.val.cls != 0) {
		out->kind = AP_PY_BOUND_UNKNOWN;
		out->line = w.runs.line;
		snprintf(out->why, sizeof out->why, "the bound of `%s` (line %u) is past 64 bits",
		         w.runs.text, w.runs.line);
	} else if (w.runs.have) {
		out->kind = AP_PY_BOUND_FOUND;
		out->value = w.runs.val.v;
		out->line = w.runs.line;
	}
	free(w.t);
	free(w.fr);
	ap_map_free(w.locals);
	ap_map_free(w.globals);
}
