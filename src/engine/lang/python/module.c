/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/python/python-int.h"

/* --- Reader helpers ------------------------------------------------------- */

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
	return ap_py_arena_strndup(p->mod, p->s + t->off, t->len);
}

/* The scratch string into the arena; scratch emptied. */
static char *scratch_str(struct parser *p)
{
	char *r = ap_py_arena_strndup(p->mod, p->scratch.len ? p->scratch.data : "",
	                              p->scratch.len);

	p->scratch.len = 0;
	return r;
}

/* What the statements of a try body read so far show of how it ends. */
enum try_outcome {
	TRY_RUNS,    /* to its end: every import was found, nothing else may raise */
	TRY_FAILS,   /* with ModuleNotFoundError, at an import not found */
	TRY_UNKNOWN, /* a statement may raise, or an import may not be found */
};

struct ctx {
	const char *prefix; /* NULL at module level; "Cls." in a class body */
	bool live;          /* the arm is taken on a default import, or may be */
	bool in_except;     /* in an except handler not known to run */
	/* the module-level try whose body this is, at the body's own level
	 * (not in blocks nested in it); NULL elsewhere */
	enum try_outcome *trying;
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
	return t->kind == T_OP && ap_py_augassign_code(t->code);
}

static void collect_start(struct parser *p, struct collector *k, const struct ctx *bind,
                          bool keep)
{
	memset(k, 0, sizeof *k);
	k->bind = bind;
	k->keep = keep;
	k->whole = ap_py_is_word(p, &p->t, "__all__") || ap_py_is_kw(&p->t, KW_IMPORT) ||
	           ap_py_is_kw(&p->t, KW_FROM);
	p->sn = 0;
}

/* Takes the current token into the statement being collected. */
static void collect(struct parser *p, struct collector *k)
{
	tok t = p->t;

	if (k->bind != NULL && ap_py_is_op(&t, OP_WALRUS) && is_ident(&k->prev))
		add_binding(p, k->bind, AP_PY_BIND_OTHER, &k->prev);
	k->prev = t;
	if (!k->keep)
		return;
	if (t.depth == 0 && (ap_py_is_op(&t, '=') || ap_py_is_op(&t, ':') || is_augassign(&t) ||
	                     ap_py_is_kw(&t, KW_IN) || ap_py_is_kw(&t, KW_AS))) {
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
			ap_py_fail(p, AP_EINPUT, p->t.line, "expected ':'");
			return false;
		}
		if (p->t.depth == depth && ap_py_is_kw(&p->t, KW_LAMBDA)) {
			lambdas++;
		} else if (p->t.depth == depth && ap_py_is_op(&p->t, ':')) {
			if (lambdas == 0) {
				ap_py_advance(p);
				return true;
			}
			lambdas--;
		}
		collect(p, &k);
		ap_py_advance(p);
	}
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
		while (e < b && !(v[e].depth == d && ap_py_is_op(&v[e], ',')))
			e++;
		if (e - a == 1 && is_ident(&v[a])) {
			add_binding(p, c, AP_PY_BIND_OTHER, &v[a]);
		} else if (e - a == 2 && ap_py_is_op(&v[a], '*') && is_ident(&v[a + 1])) {
			add_binding(p, c, AP_PY_BIND_OTHER, &v[a + 1]);
		} else if (e - a >= 2 && (ap_py_is_op(&v[a], '(') || ap_py_is_op(&v[a], '[')) &&
		           ap_py_closer(p, a, e) == e - 1) {
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

/* In a try body whose end is still to be told, whether the import of module
 * (as written) is found: false when it is not, and the body ends there. */
static bool try_import(struct parser *p, const struct ctx *c, const char *module)
{
	const ap_py_options *o = p->opt;
	int found;

	if (c->trying == NULL || *c->trying != TRY_RUNS)
		return true;
	found = o != NULL && o->can_import != NULL ? o->can_import(o->ctx, module) : -1;
	if (found == 0)
		*c->trying = TRY_FAILS;
	else if (found < 0)
		*c->trying = TRY_UNKNOWN;
	return found != 0;
}

/* Whether the statement in sv cannot raise: pass, a str, or names bound to
 * one constant (`HAVE_X = True`). */
static bool cannot_raise(const struct parser *p)
{
	const tok *v = p->sv;
	size_t n = p->sn;
	const tok *last = &v[n - 1];

	if (n == 1)
		return ap_py_is_kw(last, KW_PASS) || (last->kind == T_STRING && last->plain);
	if (n % 2 == 0 || !(last->kind == T_NUMBER || last->kind == T_STRING ||
	                    ap_py_is_kw(last, KW_TRUE) || ap_py_is_kw(last, KW_FALSE) ||
	                    ap_py_is_kw(last, KW_NONE)))
		return false;
	for (size_t i = 0; i + 1 < n; i += 2)
		if (!is_ident(&v[i]) || !ap_py_is_op(&v[i + 1], '='))
			return false;
	return true;
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
			if (i + 1 >= n || !ap_py_is_op(&v[i], '.') || v[i + 1].kind != T_NAME)
				break;
			ap_buf_putc(&p->scratch, '.');
			i++;
		}
		if (i + 1 < n && ap_py_is_kw(&v[i], KW_AS) && v[i + 1].kind == T_NAME) {
			bound = &v[i + 1];
			i += 2;
		}
		if (!try_import(p, c, p->scratch.data))
			return;
		b = add_binding(p, c, AP_PY_BIND_IMPORT, bound);
		b->module = scratch_str(p);
		if (i >= n || !ap_py_is_op(&v[i], ','))
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
	for (; i < n && !ap_py_is_kw(&v[i], KW_IMPORT); i++)
		ap_buf_append(&p->scratch, p->s + v[i].off, v[i].len);
	module = scratch_str(p);
	i++;
	if (!try_import(p, c, module))
		return;
	if (i < n && ap_py_is_op(&v[i], '*')) {
		add_binding(p, c, AP_PY_BIND_STAR, &v[i])->module = module;
		return;
	}
	if (i < n && ap_py_is_op(&v[i], '('))
		i++;
	while (i < n && v[i].kind == T_NAME) {
		const tok *target = &v[i], *bound = &v[i];
		ap_py_binding *b;
		i++;
		if (i + 1 < n && ap_py_is_kw(&v[i], KW_AS) && v[i + 1].kind == T_NAME) {
			bound = &v[i + 1];
			i += 2;
		}
		b = add_binding(p, c, AP_PY_BIND_FROM, bound);
		/* The bindings of one statement share the arena's copy. */
		b->module = module;
		b->target = tok_str(p, target);
		if (i >= n || !ap_py_is_op(&v[i], ','))
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
				const char *body = ap_py_string_body(p, &v[k], &len);
				ap_buf_append(&p->scratch, body, len);
			}
			ap_xgrow((void **)&m->all, &p->all_cap, m->nall + 1, sizeof *m->all);
			m->all[m->nall++] = scratch_str(p);
		}
		count++;
		if (a == b)
			break;
		if (!ap_py_is_op(&v[a], ',') || v[a].depth != d)
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
		bool tuple = ap_py_is_op(&v[a], '(');
		if (!tuple && !ap_py_is_op(&v[a], '['))
			return false;
		e = ap_py_closer(p, a, b);
		if (e == (size_t)-1 || !str_elems(p, a + 1, e, d + 1, tuple, take))
			return false;
		a = e + 1;
		if (a == b)
			return true;
		if (a + 1 >= b || !ap_py_is_op(&v[a], '+'))
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

	if (n < 5 || !ap_py_is_word(p, &v[0], "__all__") || !ap_py_is_op(&v[1], '.') ||
	    !ap_py_is_op(&v[3], '(') || ap_py_closer(p, 3, n) != n - 1)
		return;
	extend = ap_py_is_word(p, &v[2], "extend");
	if (!extend && !ap_py_is_word(p, &v[2], "append"))
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
	if (ap_py_is_word(p, &v[a], "__all__"))
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
		if (ap_py_is_kw(t, KW_LAMBDA))
			lambdas++;
		else if (lambdas > 0 && ap_py_is_op(t, ':'))
			lambdas--;
		else if (lambdas == 0 && ap_py_is_op(t, '='))
			return i;
	}
	return p->sn;
}

static void simple_stmt(struct parser *p, const struct ctx *c)
{
	const tok *v = p->sv;
	size_t n = p->sn;
	unsigned lambdas = 0;

	if (ap_py_is_kw(&v[0], KW_IMPORT)) {
		import_stmt(p, c);
		return;
	}
	if (ap_py_is_kw(&v[0], KW_FROM)) {
		from_stmt(p, c);
		return;
	}
	/* del, global, return, pass, assert ... bind nothing. */
	if (is_keyword(&v[0]))
		return;
	for (size_t i = 0; i < n; i++) {
		if (v[i].depth != 0)
			continue;
		if (ap_py_is_kw(&v[i], KW_LAMBDA)) {
			lambdas++;
		} else if (ap_py_is_op(&v[i], ':')) {
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
		} else if (lambdas == 0 && ap_py_is_op(&v[i], '=')) {
			size_t last = i, a = 0, e;
			while ((e = next_assign(p, last + 1)) < n)
				last = e;
			for (e = i; a < last; a = e + 1, e = next_assign(p, e + 1))
				assign_target(p, c, a, e, last + 1);
			return;
		} else if (lambdas == 0 && is_augassign(&v[i])) {
			if (i == 1 && is_ident(&v[0])) {
				if (ap_py_is_word(p, &v[0], "__all__")) {
					if (ap_py_is_op(&v[i], OP_ADD_ASSIGN)) {
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

/* Whether the statement starting at t is a simple statement (or a match,
 * which simple_line reads): not def, class, a decorator, async, if, for,
 * while, with or try. */
static bool simple_start(const tok *t)
{
	static const unsigned compound[] = {KW_DEF, KW_CLASS, KW_ASYNC, KW_IF,
	                                    KW_FOR, KW_WHILE, KW_WITH,  KW_TRY};

	if (ap_py_is_op(t, '@'))
		return false;
	for (size_t i = 0; i < sizeof compound / sizeof compound[0]; i++)
		if (ap_py_is_kw(t, compound[i]))
			return false;
	return true;
}

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
	struct ctx nested;

	for (;;) {
		size_t mark = ap_py_string_mark(p);
		bool strings_only = true, header;
		tok last = {0};
		size_t count = 0;
		struct collector k;

		/* After a try body's import that fails, nothing after it runs. */
		analyze &= c->trying == NULL || *c->trying != TRY_FAILS;
		collect_start(p, &k, analyze ? c : NULL, analyze);
		while (p->t.kind != T_NEWLINE && p->t.kind != T_END &&
		       !(p->t.depth == 0 && ap_py_is_op(&p->t, ';'))) {
			strings_only &= p->t.kind == T_STRING && p->t.plain;
			last = p->t;
			count++;
			collect(p, &k);
			ap_py_advance(p);
		}
		header = !one_line && p->t.kind == T_NEWLINE && count > 0 && last.depth == 0 &&
		         ap_py_is_op(&last, ':');
		if (doc && count > 0 && strings_only)
			ap_py_drop_strings(p, mark);
		doc = false;
		if (analyze && count > 0 && !header) {
			simple_stmt(p, c);
			if (c->trying != NULL && *c->trying == TRY_RUNS &&
			    !ap_py_is_kw(&p->sv[0], KW_IMPORT) && !ap_py_is_kw(&p->sv[0], KW_FROM) &&
			    !cannot_raise(p))
				*c->trying = TRY_UNKNOWN;
		}
		if (header) {
			/* match or case: a block that may raise */
			if (c->trying != NULL) {
				if (*c->trying == TRY_RUNS)
					*c->trying = TRY_UNKNOWN;
				nested = *c;
				nested.trying = NULL;
				nested.live &= analyze;
				c = &nested;
			}
			suite(p, c, false);
			return;
		}
		if (p->t.kind != T_OP) {
			if (p->t.kind == T_NEWLINE)
				ap_py_advance(p);
			return;
		}
		ap_py_advance(p);
		if (p->t.kind == T_NEWLINE) {
			ap_py_advance(p);
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
	ap_py_advance(p);
	if (p->t.kind != T_INDENT) {
		ap_py_fail(p, AP_EINPUT, p->t.line, "expected an indented block");
		return;
	}
	ap_py_advance(p);
	statements(p, c, true, doc);
}

static void statements(struct parser *p, const struct ctx *c, bool block, bool doc)
{
	for (;;) {
		if (p->t.kind == T_END)
			return;
		if (block && p->t.kind == T_DEDENT) {
			ap_py_advance(p);
			return;
		}
		if (p->t.kind == T_INDENT) {
			ap_py_fail(p, AP_EINPUT, p->t.line, "unexpected indent");
			return;
		}
		statement(p, c, doc);
		doc = false;
	}
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

	ap_py_advance(p);
	for (;;) {
		bool end = p->t.kind == T_END || (p->t.depth == depth && ap_py_is_op(&p->t, ')'));
		const tok *t = &p->t;

		if (!end && !(t->depth == depth + 1 && lambdas == 0 && ap_py_is_op(t, ','))) {
			if (t->depth == depth + 1) {
				if (ap_py_is_kw(t, KW_LAMBDA))
					lambdas++;
				else if (lambdas > 0 && ap_py_is_op(t, ':'))
					lambdas--;
				else if (lambdas == 0 && has_name && ap_py_is_op(t, '='))
					has_default = true;
			}
			if (k == 0 && ap_py_is_op(t, '/')) {
				slash = true;
			} else if (k == 0 && (ap_py_is_op(t, '*') || ap_py_is_op(t, OP_POW))) {
				stars = t->len;
			} else if (k == (stars > 0) && t->kind == T_NAME && !has_name) {
				name = *t;
				has_name = true;
			}
			k++;
			/* Past its start a segment's ',' (or the closing ')') is found
			 * faster: ap_py_params_tail says whether it read the ','. */
			if (lambdas > 0 || !(has_name || k > (size_t)(stars > 0)) ||
			    !ap_py_params_tail(p, depth, has_name, &has_default)) {
				ap_py_advance(p);
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
					d->params =
						ap_py_arena_alloc(p->mod, np * sizeof *d->params);
					memcpy(d->params, p->pv, np * sizeof *d->params);
				}
				d->nparams = np;
				break;
			}
			k = 0;
			stars = 0;
			slash = has_name = has_default = false;
			ap_py_advance(p);
		}
	}
	ap_py_advance(p);
}

/* The prefix of c, the name and then tail. */
static char *qualname(struct parser *p, const struct ctx *c, const tok *name,
                      const char *tail)
{
	size_t plen = c->prefix ? strlen(c->prefix) : 0, tlen = strlen(tail);
	char *q = ap_py_arena_alloc(p->mod, plen + name->len + tlen + 1);

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

	ap_py_advance(p);
	if (p->t.kind != T_NAME) {
		ap_py_fail(p, AP_EINPUT, p->t.line, "expected a name after 'def'");
		return;
	}
	name = p->t;
	ap_py_advance(p);
	if (ap_py_is_op(&p->t, '[')) {
		/* Type parameters (PEP 695). */
		unsigned depth = p->t.depth;
		do
			ap_py_advance(p);
		while (p->t.kind != T_END && !(p->t.depth == depth && ap_py_is_op(&p->t, ']')));
		ap_py_advance(p);
	}
	if (!ap_py_is_op(&p->t, '(')) {
		ap_py_fail(p, AP_EINPUT, p->t.line, "expected '(' after the name of a def");
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
	ap_py_skip_body(p, di);
}

static void class_stmt(struct parser *p, const struct ctx *c)
{
	struct ctx in = *c;
	char *prefix;
	tok name;

	ap_py_advance(p);
	if (p->t.kind != T_NAME) {
		ap_py_fail(p, AP_EINPUT, p->t.line, "expected a name after 'class'");
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

static void if_stmt(struct parser *p, const struct ctx *c)
{
	bool decided = false; /* an earlier arm is certainly taken */

	for (;;) {
		struct ctx arm = *c;
		bool is_else = ap_py_is_kw(&p->t, KW_ELSE);
		enum cond cond = is_else ? COND_TRUE : COND_UNKNOWN;

		if (!collect_header(p, c->prefix == NULL && c->live && !decided ? c : NULL, true))
			return;
		if (!is_else)
			cond = ap_py_condition(p, 1, p->sn);
		arm.live = c->live && !decided && cond != COND_FALSE;
		suite(p, &arm, false);
		decided |= cond == COND_TRUE;
		if (is_else || !(ap_py_is_kw(&p->t, KW_ELIF) || ap_py_is_kw(&p->t, KW_ELSE)))
			return;
	}
}

/* for, while, with and try, with the arms that may follow them. */
static void compound_stmt(struct parser *p, const struct ctx *c)
{
	bool is_for = ap_py_is_kw(&p->t, KW_FOR);
	bool is_with = ap_py_is_kw(&p->t, KW_WITH);
	bool is_try = ap_py_is_kw(&p->t, KW_TRY);
	bool binds = c->prefix == NULL && c->live;
	/* Of a try that binds, how its body ends; of any other compound
	 * statement, each arm may run. */
	enum try_outcome outcome = is_try && binds ? TRY_RUNS : TRY_UNKNOWN;
	bool failed, caught = false;
	const tok *v;

	if (!collect_header(p, binds ? c : NULL, binds))
		return;
	v = p->sv;
	if (binds && is_for) {
		size_t e = 1;
		while (e < p->sn && !(v[e].depth == 0 && ap_py_is_kw(&v[e], KW_IN)))
			e++;
		bind_targets(p, c, 1, e, 0);
	}
	if (binds && is_with) {
		/* with (a as b, c as d): the items are in the parentheses. */
		size_t a = 1, b = p->sn;
		unsigned d = 0;
		if (ap_py_parenthesised(p, a, b)) {
			for (size_t k = a + 1; k + 1 < b && d == 0; k++)
				if (v[k].depth == 1 && ap_py_is_kw(&v[k], KW_AS))
					d = 1;
			if (d == 1)
				a++, b--;
		}
		while (a < b) {
			size_t e = a, as = b;
			while (e < b && !(v[e].depth == d && ap_py_is_op(&v[e], ','))) {
				if (as == b && v[e].depth == d && ap_py_is_kw(&v[e], KW_AS))
					as = e;
				e++;
			}
			if (as < e)
				bind_targets(p, c, as + 1, e, d);
			a = e + 1;
		}
	}
	if (is_try && binds) {
		struct ctx body = *c;
		body.trying = &outcome;
		suite(p, &body, false);
	} else {
		suite(p, c, false);
	}
	failed = outcome == TRY_FAILS;
	for (;;) {
		struct ctx arm = *c;
		bool is_except = is_try && ap_py_is_kw(&p->t, KW_EXCEPT);
		bool is_else = ap_py_is_kw(&p->t, KW_ELSE);
		if (is_except)
			arm.in_except = true;
		else if (!is_else && !(is_try && ap_py_is_kw(&p->t, KW_FINALLY)))
			return;
		if (!collect_header(p, NULL, is_except && outcome == TRY_FAILS && !caught))
			return;
		/* Which arms run once the body has run to its end, or failed at an
		 * import: the first handler that catches ModuleNotFoundError, up
		 * to one that cannot be told; finally always. */
		if (is_except && outcome == TRY_RUNS) {
			arm.live = false;
		} else if (is_except && outcome == TRY_FAILS) {
			enum cond catches = caught ? COND_FALSE : ap_py_catches_import(p, 1, p->sn);
			arm.live &= catches != COND_FALSE;
			arm.in_except = catches == COND_UNKNOWN;
			/* a handler that may or may not catch it: the rest as before */
			if (catches == COND_UNKNOWN)
				outcome = TRY_UNKNOWN;
			caught |= catches == COND_TRUE;
		} else if (is_try && is_else && failed) {
			arm.live = false;
		}
		suite(p, &arm, false);
	}
}

static void statement(struct parser *p, const struct ctx *c, bool doc)
{
	struct ctx nested;

	/* In a try body, a statement after an import that failed does not run,
	 * and a compound one may raise: what blocks inside it do is not the
	 * body's to tell. Simple statements tell it in simple_line. */
	if (c->trying != NULL && (*c->trying == TRY_FAILS || !simple_start(&p->t))) {
		if (*c->trying == TRY_RUNS)
			*c->trying = TRY_UNKNOWN;
		nested = *c;
		nested.live &= *c->trying != TRY_FAILS;
		nested.trying = NULL;
		c = &nested;
	}
	if (ap_py_is_op(&p->t, '@')) {
		while (ap_py_is_op(&p->t, '@')) {
			while (p->t.kind != T_NEWLINE && p->t.kind != T_END)
				ap_py_advance(p);
			ap_py_advance(p);
		}
		if (p->t.kind == T_INDENT || p->t.kind == T_DEDENT)
			return;
	}
	if (ap_py_is_kw(&p->t, KW_ASYNC)) {
		ap_py_advance(p);
		if (!ap_py_is_kw(&p->t, KW_DEF) && !ap_py_is_kw(&p->t, KW_FOR) &&
		    !ap_py_is_kw(&p->t, KW_WITH)) {
			simple_line(p, c, false, false);
			return;
		}
	}
	if (ap_py_is_kw(&p->t, KW_DEF))
		def_stmt(p, c);
	else if (ap_py_is_kw(&p->t, KW_CLASS))
		class_stmt(p, c);
	else if (ap_py_is_kw(&p->t, KW_IF))
		if_stmt(p, c);
	else if (ap_py_is_kw(&p->t, KW_FOR) || ap_py_is_kw(&p->t, KW_WHILE) ||
	         ap_py_is_kw(&p->t, KW_WITH) || ap_py_is_kw(&p->t, KW_TRY))
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
	ap_py_arena_free(mod);
	free(m->defs);
	free(m->bindings);
	free(m->all);
	free(m->strings);
	free(m->src);
	free(mod);
}

int ap_py_parse(ap_py_module **out, const char *src, size_t len, const ap_py_options *opt)
{
	static const struct ctx top = {.live = true};
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
	/* CPython reads source with universal newlines: a lone CR ends a line
	 * as LF does, in comments, strings and continuations alike. The copy
	 * spells it LF, byte for byte, so offsets hold and every scan for LF
	 * (the lexer's, the skimmer's, SIMD or not) sees CPython's lines. */
	for (char *cr = m->src; (cr = memchr(cr, '\r', len - (size_t)(cr - m->src))) != NULL; cr++)
		if (cr[1] != '\n') /* at the end, cr[1] is the padding's NUL */
			*cr = '\n';
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
	p->opt = opt;
	if (len >= 3 && memcmp(src, "\xef\xbb\xbf", 3) == 0)
		p->pos = 3;
	ap_py_advance(p);
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
