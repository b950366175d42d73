/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/lang/python/python-int.h"

/* --- Reader helpers ------------------------------------------------------- */

static bool is_keyword(const tok *t)
{
	return t->kind == T_NAME && t->code != 0;
}

/* --- Statements that may run one of several ways -------------------------- */

/* A statement whose arms are the ways it may run (an if's arms, a loop's body
 * and else, a try's body and handlers, a match's cases): each arm's bindings
 * lie from its start to the next arm's, and may_skip adds a way that runs no
 * arm. Once it is read, a name that the ways leave bound differently (or
 * bound one way and unbound another) is bound UNKNOWN after it: which way
 * Python takes is not known, and a guess is never an answer. */
struct arms {
	size_t mark;   /* the bindings before the statement */
	size_t *start; /* where each arm's bindings begin */
	size_t n, cap;
	bool may_skip;
	unsigned line;
	const char *what; /* "the `if`": in the reason */
	/* a match's: its subject, whether an earlier case certainly matched,
	 * whether one may have */
	struct ap_py_subject subject;
	bool decided, open;
};

/* Each arms_begin has its arms_end. */
static void arms_begin(struct parser *p, struct arms *a, const char *what)
{
	p->arms_depth++;
	memset(a, 0, sizeof *a);
	a->mark = p->m->nbindings;
	a->line = p->t.line;
	a->what = what;
}

static void arm_begin(struct parser *p, struct arms *a)
{
	ap_xgrow((void **)&a->start, &a->cap, a->n + 1, sizeof *a->start);
	a->start[a->n++] = p->m->nbindings;
}

/* Whether bindings i and j (SIZE_MAX: unbound) leave a name holding the same. */
static bool same_binding(const ap_py_module *m, size_t i, size_t j)
{
	const ap_py_binding *a, *b;

	if (i != SIZE_MAX && m->bindings[i].kind == AP_PY_BIND_DEL)
		i = SIZE_MAX;
	if (j != SIZE_MAX && m->bindings[j].kind == AP_PY_BIND_DEL)
		j = SIZE_MAX;
	if (i == j)
		return true;
	if (i == SIZE_MAX || j == SIZE_MAX)
		return false;
	a = &m->bindings[i];
	b = &m->bindings[j];
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case AP_PY_BIND_FROM:
		return strcmp(a->module, b->module) == 0 && strcmp(a->target, b->target) == 0;
	case AP_PY_BIND_IMPORT:
	case AP_PY_BIND_SUBMODULE:
		return strcmp(a->module, b->module) == 0;
	case AP_PY_BIND_ALIAS:
		return strcmp(a->target, b->target) == 0;
	default:
		return false;
	}
}

/* The arm of a's that binding i lies in. */
static size_t arm_of(const struct arms *a, size_t i)
{
	size_t lo = 0, hi = a->n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->start[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void arms_end(struct parser *p, const struct ctx *c, struct arms *a)
{
	ap_py_module *m = p->m;
	size_t end = m->nbindings, ways = a->n + a->may_skip, mark;

	p->arms_depth--;
	if (c->prefix != NULL || !c->live || ways < 2 || end == a->mark ||
	    p->arms_depth >= AP_PY_MAX_WAYS_DEPTH) {
		free(a->start);
		return;
	}
	/* What the first header binds (`if (x := f()):`) is bound every way. */
	mark = a->start[0];
	/* Each name from its first binding in the statement, along the next
	 * bindings of the same name: the last of each arm is what that way
	 * leaves. Every binding is visited once, and names in the order of
	 * their first bindings. */
	for (size_t i = mark; i < end; i++) {
		ap_py_binding *b = &m->bindings[i];
		size_t pre = p->prev_same[i], outcome = SIZE_MAX, arms = 0, last = i;
		bool differ = false;

		if (b->name == NULL) {
			/* What a star import that may not run binds may or may not be bound. */
			if (b->kind == AP_PY_BIND_STAR && b->why == NULL) {
				p->scratch.len = 0;
				ap_buf_printf(&p->scratch, "the star import at line %u may not run, as "
				              "%s at line %u may run another way", b->line, a->what,
				              a->line);
				b->why = ap_py_scratch_str(p);
			}
			continue;
		}
		if (pre != SIZE_MAX && pre >= mark)
			continue;
		for (size_t j = i; j < end; j = p->next_same[j]) {
			size_t arm = arm_of(a, j), next = p->next_same[j];
			last = j;
			if (next < end && arm_of(a, next) == arm)
				continue;
			/* j is the last binding of the name in its arm. */
			if (arms++ == 0)
				outcome = j;
			else if (!same_binding(m, outcome, j))
				differ = true;
		}
		if (arms < ways && !same_binding(m, outcome, pre))
			differ = true;
		/* Where the name's last binding is already UNKNOWN, a lookup finds it. */
		if (differ && m->bindings[last].kind != AP_PY_BIND_UNKNOWN) {
			char *name = b->name;
			p->scratch.len = 0;
			ap_buf_printf(&p->scratch, "it is bound differently by the ways %s at line %u "
			              "may run", a->what, a->line);
			ap_py_bind(p, c, AP_PY_BIND_UNKNOWN, name, a->line)->why = ap_py_scratch_str(p);
		}
	}
	free(a->start);
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

	if (k->bind != NULL && ap_py_is_op(&t, OP_WALRUS) && ap_py_is_ident(&k->prev))
		ap_py_add_binding(p, k->bind, AP_PY_BIND_OTHER, &k->prev);
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
static void bind_names(struct parser *p, const struct ctx *c, size_t a, size_t b, unsigned d,
                       ap_py_bind_kind kind)
{
	const tok *v = p->sv;

	while (a < b) {
		size_t e = a;
		while (e < b && !(v[e].depth == d && ap_py_is_op(&v[e], ',')))
			e++;
		if (e - a == 1 && ap_py_is_ident(&v[a])) {
			ap_py_add_binding(p, c, kind, &v[a]);
		} else if (e - a == 2 && ap_py_is_op(&v[a], '*') && ap_py_is_ident(&v[a + 1])) {
			ap_py_add_binding(p, c, kind, &v[a + 1]);
		} else if (e - a >= 2 && (ap_py_is_op(&v[a], '(') || ap_py_is_op(&v[a], '[')) &&
		           ap_py_closer(p, a, e) == e - 1) {
			bind_names(p, c, a + 1, e - 1, d + 1, kind);
		}
		a = e + 1;
	}
}

static void bind_targets(struct parser *p, const struct ctx *c, size_t a, size_t b, unsigned d)
{
	if (!cut(p, a, b))
		bind_names(p, c, a, b, d, AP_PY_BIND_OTHER);
}

/* --- Module-level simple statements --------------------------------------- */

/* Whether sv[a, b) is a call: a dotted name, or another call, then one
 * parenthesised argument list closing at b. */
static bool is_call(const struct parser *p, size_t a, size_t b)
{
	const tok *v = p->sv;
	size_t i = a;

	if (b - a < 3 || !ap_py_is_ident(&v[a]) || !ap_py_is_op(&v[b - 1], ')') || cut(p, a, b))
		return false;
	i++;
	while (i + 1 < b && ap_py_is_op(&v[i], '.') && v[i + 1].kind == T_NAME)
		i += 2;
	while (i < b && ap_py_is_op(&v[i], '(')) {
		size_t e = ap_py_closer(p, i, b);
		if (e == (size_t)-1)
			return false;
		if (e == b - 1)
			return true;
		i = e + 1;
	}
	return false;
}

/* Whether sv[a, b) starts with `globals()` or `vars()` (the module's
 * namespace at its top level) and then tail (`[`, `.`), after which *at is. */
static bool namespace_call(const struct parser *p, size_t a, size_t b, unsigned tail, size_t *at)
{
	const tok *v = p->sv;

	*at = a + 4;
	return b - a >= 4 && (ap_py_is_word(p, &v[a], "globals") || ap_py_is_word(p, &v[a], "vars")) &&
	       ap_py_is_op(&v[a + 1], '(') && ap_py_is_op(&v[a + 2], ')') &&
	       ap_py_is_op(&v[a + 3], tail);
}

/* Whether sv[a, b) is `X.modules[__name__]`: sys.modules' entry of the
 * module, which an import of it gets. */
static bool own_module_entry(const struct parser *p, size_t a, size_t b)
{
	const tok *v = p->sv;

	return b - a == 6 && v[a].kind == T_NAME && ap_py_is_op(&v[a + 1], '.') &&
	       ap_py_is_word(p, &v[a + 2], "modules") && ap_py_is_op(&v[a + 3], '[') &&
	       ap_py_is_word(p, &v[a + 4], "__name__") && ap_py_is_op(&v[a + 5], ']');
}

/* A write into the module's namespace that binds a name no statement
 * spells: `globals()["NAME"] = ...` binds NAME to what only a run tells;
 * under a key that is no str literal of an ASCII name, or through
 * `globals().update(...)`, any name may be rebound, which a STAR binding
 * of AP_PY_NAMESPACE_WRITE stands for; so may `sys.modules[__name__] = X`,
 * which makes X what an import of the module gets. */
static bool namespace_write(struct parser *p, const struct ctx *c, size_t a, size_t b)
{
	const tok *v = p->sv;
	const char *key = NULL, *what = "globals() is written";
	size_t at, len = 0;
	ap_py_binding *bd;

	bool entry = own_module_entry(p, a, b);

	if (entry) {
		what = "the module replaces itself in sys.modules";
	} else if (namespace_call(p, a, b, '[', &at)) {
		if (ap_py_closer(p, a + 3, b) != b - 1)
			return false;
		if (b - at == 2 && v[at].kind == T_STRING && v[at].plain)
			key = ap_py_string_body(p, &v[at], &len);
		/* a key not ASCII is no name NFKC leaves as it is */
		for (size_t i = 0; key != NULL && i < len; i++)
			if ((unsigned char)key[i] >= 0x80 || key[i] == '\\')
				key = NULL;
		if (key != NULL && !ap_py_is_identifier(key, len))
			key = NULL;
	} else if (!namespace_call(p, a, b, '.', &at) || at >= b ||
	           !(ap_py_is_word(p, &v[at], "update") || ap_py_is_word(p, &v[at], "setdefault") ||
	             ap_py_is_word(p, &v[at], "__setitem__"))) {
		return false;
	}
	p->scratch.len = 0;
	ap_buf_printf(&p->scratch, "%s at line %u%s", what, v[a].line,
	              key != NULL || entry ? "" : " under a name only a run tells");
	if (key != NULL) {
		bd = ap_py_bind(p, c, AP_PY_BIND_UNKNOWN, ap_py_arena_strndup(p->mod, key, len), v[a].line);
	} else {
		bd = ap_py_bind(p, c, AP_PY_BIND_STAR, NULL, v[a].line);
		bd->module = AP_PY_NAMESPACE_WRITE;
	}
	bd->why = ap_py_scratch_str(p);
	return true;
}

/* Binds the target sv[a, b) of an assignment whose value is sv[va, n):
 * a single name is an ALIAS when the value is a bare name. */
static void assign_target(struct parser *p, const struct ctx *c, size_t a, size_t b, size_t va)
{
	const tok *v = p->sv;
	size_t n = p->sn;

	if (namespace_write(p, c, a, b))
		return;
	if (b - a != 1 || !ap_py_is_ident(&v[a])) {
		bind_targets(p, c, a, b, 0);
		return;
	}
	if (ap_py_is_word(p, &v[a], "__all__"))
		ap_py_all_assign(p, c->maybe, va, n, 0, false);
	if (n - va == 1 && ap_py_is_ident(&v[va])) {
		ap_py_add_binding(p, c, AP_PY_BIND_ALIAS, &v[a])->target = ap_py_tok_str(p, &v[va]);
	} else if (va < n && ap_py_is_kw(&v[va], KW_LAMBDA)) {
		ap_py_add_binding(p, c, AP_PY_BIND_UNKNOWN, &v[a])->why = "it is bound to a lambda";
	} else if (is_call(p, va, n)) {
		/* functools.partial(f, ...), a factory, a decorator applied by hand:
		 * what a call returns is known only by running it. */
		p->scratch.len = 0;
		ap_buf_printf(&p->scratch, "it is bound to what the call at line %u returns",
		              v[va].line);
		ap_py_add_binding(p, c, AP_PY_BIND_UNKNOWN, &v[a])->why = ap_py_scratch_str(p);
	} else {
		ap_py_add_binding(p, c, AP_PY_BIND_OTHER, &v[a]);
	}
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


/* The module-level defs the statement calls by name. */
static void calls(struct parser *p, const struct ctx *c)
{
	const ap_py_module *m = p->m;

	for (size_t i = 0; i + 1 < p->sn; i++) {
		const tok *t = &p->sv[i];
		const struct globals *g;
		size_t at, di;
		if (!ap_py_is_ident(t) || !ap_py_is_op(&p->sv[i + 1], '(') ||
		    (i > 0 && ap_py_is_op(&p->sv[i - 1], '.')))
			continue;
		at = t->plain ? ap_map_get(p->last_of, p->s + t->off, t->len)
		              : ap_map_get_str(p->last_of, ap_py_tok_str(p, t));
		if (at == AP_MAP_ABSENT || m->bindings[at].kind != AP_PY_BIND_DEF)
			continue;
		di = m->bindings[at].def_index;
		g = ap_py_def_globals(p, di);
		for (size_t k = 0; k < g->n; k++) {
			/* A call of a module-level def at import runs it: what it declares
			 * `global` may be rebound. Once is enough while it stays so. */
			size_t last = ap_map_get_str(p->last_of, g->names[k]);
			if (last != AP_MAP_ABSENT && m->bindings[last].kind == AP_PY_BIND_UNKNOWN)
				continue;
			p->scratch.len = 0;
			ap_buf_printf(&p->scratch, "it may be rebound by the call of %s at line %u, "
			              "which declares it global", m->defs[di].qualname, t->line);
			ap_py_bind(p, c, AP_PY_BIND_UNKNOWN, g->names[k], t->line)->why = ap_py_scratch_str(p);
		}
	}
}

static void simple_stmt(struct parser *p, const struct ctx *c)
{
	const tok *v = p->sv;
	size_t n = p->sn;
	unsigned lambdas = 0;

	calls(p, c);

	if (ap_py_is_kw(&v[0], KW_IMPORT)) {
		ap_py_import_stmt(p, c);
		return;
	}
	if (ap_py_is_kw(&v[0], KW_FROM)) {
		ap_py_from_stmt(p, c);
		return;
	}
	if (ap_py_is_kw(&v[0], KW_DEL)) {
		ap_py_all_del(p, c->maybe);
		if (!cut(p, 1, n))
			bind_names(p, c, 1, n, 0, AP_PY_BIND_DEL);
		return;
	}
	/* global, return, pass, assert ... bind nothing. */
	if (is_keyword(&v[0])) {
		return;
	}
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
			if (i == 1 && ap_py_is_ident(&v[0])) {
				if (ap_py_is_word(p, &v[0], "__all__")) {
					if (ap_py_is_op(&v[i], OP_ADD_ASSIGN))
						ap_py_all_assign(p, c->maybe, i + 1, n, 0, true);
					else
						ap_py_all_unreadable(p, v[0].line, c->maybe);
				}
				ap_py_add_binding(p, c, AP_PY_BIND_OTHER, &v[0]);
			}
			return;
		}
	}
	if (!namespace_write(p, c, 0, n))
		ap_py_all_method(p, c->maybe);
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

/* The block of a line ending in ':' that no keyword introduced: a match,
 * whose cases are the ways it may run, or a case of it. */
static void block(struct parser *p, const struct ctx *c, const tok *first)
{
	struct arms *outer = p->match_arms, a;

	if (outer != NULL && ap_py_is_word(p, first, "case")) {
		struct ctx arm = *c;
		bool read = c->prefix == NULL && c->live && p->sn >= 2;
		size_t capture = SIZE_MAX;
		enum cond m = read ? ap_py_case_matches(p, &outer->subject, 1, p->sn - 1, &capture)
		                   : COND_UNKNOWN;
		/* The first case that matches runs, and no other. */
		arm.live = c->live && !outer->decided && m != COND_FALSE;
		arm.maybe = c->maybe || outer->open || m != COND_TRUE;
		outer->open |= m == COND_UNKNOWN;
		outer->decided |= m == COND_TRUE;
		if (arm.live) {
			arm_begin(p, outer);
			if (capture != SIZE_MAX)
				ap_py_add_binding(p, &arm, AP_PY_BIND_OTHER, &p->sv[capture]);
		}
		p->match_arms = NULL;
		suite(p, &arm, false);
		p->match_arms = outer;
		return;
	}
	if (!ap_py_is_word(p, first, "match")) {
		p->match_arms = NULL;
		suite(p, c, false);
		p->match_arms = outer;
		return;
	}
	arms_begin(p, &a, "the `match`");
	a.line = first->line;
	if (c->prefix == NULL && c->live && p->sn >= 2)
		ap_py_subject(p, 1, p->sn - 1, &a.subject);
	p->match_arms = &a;
	suite(p, c, false);
	p->match_arms = outer;
	/* No case may match. */
	a.may_skip = !a.decided;
	arms_end(p, c, &a);
}

/* Simple statements up to the end of the line. A line ending in ':' that no
 * keyword introduced (match, case) heads a block, read like any other. */
static void simple_line(struct parser *p, const struct ctx *c, bool doc, bool one_line)
{
	bool analyze = c->prefix == NULL && c->live;
	struct ctx nested;

	for (;;) {
		size_t mark = ap_py_string_mark(p);
		struct ap_py_doc d = {0};
		bool header, inline_case = false;
		tok last = {0}, first = p->t;
		size_t count = 0;
		unsigned lambdas = 0;
		struct collector k;
		/* a case of the match being read, whose block may follow its ':' on
		 * the line (`case 1: f = g`) */
		bool is_case = p->match_arms != NULL && !one_line && ap_py_is_word(p, &first, "case");

		p->breaks += ap_py_is_kw(&first, KW_BREAK);
		p->continues += ap_py_is_kw(&first, KW_CONTINUE);

		/* After a try body's import that fails, nothing after it runs. */
		analyze &= c->trying == NULL || *c->trying != TRY_FAILS;
		collect_start(p, &k, analyze ? c : NULL, analyze);
		while (p->t.kind != T_NEWLINE && p->t.kind != T_END &&
		       !(p->t.depth == 0 && ap_py_is_op(&p->t, ';'))) {
			doc = doc && ap_py_doc_step(&d, &p->t);
			last = p->t;
			count++;
			collect(p, &k);
			ap_py_advance(p);
			if (!is_case || last.depth != 0)
				continue;
			if (ap_py_is_kw(&last, KW_LAMBDA)) {
				lambdas++;
			} else if (ap_py_is_op(&last, ':')) {
				if (lambdas == 0) {
					inline_case = p->t.kind != T_NEWLINE;
					break;
				}
				lambdas--;
			}
		}
		header = inline_case || (!one_line && p->t.kind == T_NEWLINE && count > 0 &&
		                         last.depth == 0 && ap_py_is_op(&last, ':'));
		if (doc && ap_py_doc_is(&d))
			ap_py_drop_strings(p, mark);
		doc = false;
		if (analyze && count > 0 && !header) {
			simple_stmt(p, c);
			if (c->trying != NULL && *c->trying == TRY_RUNS &&
			    !ap_py_is_kw(&p->sv[0], KW_IMPORT) && !ap_py_is_kw(&p->sv[0], KW_FROM) &&
			    !ap_py_cannot_raise(p))
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
			block(p, c, &first);
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
				pa->name = ap_py_tok_str(p, &name);
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
	size_t plen = c->prefix ? strlen(c->prefix) : 0, tlen = strlen(tail), len;
	ap_buf b = AP_BUF_INIT;
	const char *s = ap_py_name(p, name, &b, &len);
	char *q = ap_py_arena_alloc(p->mod, plen + len + tlen + 1);

	if (plen > 0)
		memcpy(q, c->prefix, plen);
	memcpy(q + plen, s, len);
	memcpy(q + plen + len, tail, tlen + 1);
	ap_buf_free(&b);
	return q;
}

/* line: of `def`, or of the `async` before it (CPython's lineno). */
static void def_stmt(struct parser *p, const struct ctx *c, unsigned line, bool is_async)
{
	ap_py_module *m = p->m;
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
	d->maybe = c->maybe;
	d->is_async = is_async;
	if (p->ndecorators > 0) {
		ap_py_decorator *dv = ap_py_arena_alloc(p->mod, p->ndecorators * sizeof *dv);
		memcpy(dv, p->decorators, p->ndecorators * sizeof *dv);
		d->decorators = dv;
		d->ndecorators = p->ndecorators;
	}
	p->ndecorators = 0;
	params(p, di);
	/* The return annotation, up to the ':'. */
	if (!collect_header(p, NULL, false))
		return;
	if (c->prefix == NULL && c->live)
		ap_py_add_binding(p, c, AP_PY_BIND_DEF, &name)->def_index = di;
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
		ap_py_add_binding(p, c, AP_PY_BIND_CLASS, &name);
	prefix = qualname(p, c, &name, ".");
	in.prefix = prefix;
	suite(p, &in, true);
}

static void if_stmt(struct parser *p, const struct ctx *c)
{
	bool decided = false; /* an earlier arm is certainly taken */
	bool open = false;    /* an earlier arm may be taken */
	struct arms a;

	arms_begin(p, &a, "the `if`");
	for (;;) {
		struct ctx arm = *c;
		bool is_else = ap_py_is_kw(&p->t, KW_ELSE);
		enum cond cond = is_else ? COND_TRUE : COND_UNKNOWN;

		if (!collect_header(p, c->prefix == NULL && c->live && !decided ? c : NULL, true))
			break;
		if (!is_else)
			cond = ap_py_condition(p, 1, p->sn);
		arm.live = c->live && !decided && cond != COND_FALSE;
		arm.maybe = c->maybe || open || cond != COND_TRUE;
		open |= cond == COND_UNKNOWN;
		if (arm.live)
			arm_begin(p, &a);
		suite(p, &arm, false);
		decided |= cond == COND_TRUE;
		if (is_else || !(ap_py_is_kw(&p->t, KW_ELIF) || ap_py_is_kw(&p->t, KW_ELSE)))
			break;
	}
	a.may_skip = !decided;
	arms_end(p, c, &a);
}

/* for, while, with and try, with the arms that may follow them. A with
 * block runs; a loop's body (and a for's target) may run or not, its else
 * after it. A try's body runs to its end (its handlers do not run), or fails
 * at an import the target cannot find (what follows it does not run, and the
 * first handler that catches ModuleNotFoundError runs after what ran), or
 * either way as far as the reader can tell: then its handlers and else are
 * ways it may run. Its finally runs whichever way the rest went. A `with
 * contextlib.suppress(...)` body is a try body whose one handler is empty:
 * an import it suppresses that fails ends the body there, and one that may
 * fail (or a statement that may raise) leaves the rest of the body a way it
 * may not run. */
static void compound_stmt(struct parser *p, const struct ctx *c)
{
	bool is_for = ap_py_is_kw(&p->t, KW_FOR);
	bool is_with = ap_py_is_kw(&p->t, KW_WITH);
	bool is_try = ap_py_is_kw(&p->t, KW_TRY);
	bool binds = c->prefix == NULL && c->live, ended = false;
	/* Of a try (or a suppress) that binds, how its body ends; of any other
	 * compound statement, each arm may run. */
	enum try_outcome outcome = is_try && binds ? TRY_RUNS : TRY_UNKNOWN;
	enum cond suppresses = COND_FALSE;
	bool failed, caught = false, suppress;
	struct ctx body = *c;
	const tok *v;
	struct arms a;
	/* how many times a loop's body runs (-1: not known), and the break and
	 * continue statements before it */
	long long runs = -1;
	unsigned breaks = p->breaks, continues = p->continues;
	ap_py_bind_kind last;
	size_t item;

	arms_begin(p, &a, is_try    ? "the `try`"
	                  : is_with ? "the `with contextlib.suppress`"
	                  : is_for  ? "the `for` loop"
	                            : "the `while` loop");
	a.may_skip = !is_try && !is_with;
	if (!collect_header(p, binds ? c : NULL, binds)) {
		a.may_skip = false;
		arms_end(p, c, &a);
		return;
	}
	suppress = is_with && binds && ap_py_suppress(p, 1, p->sn, &suppresses);
	if (suppress)
		outcome = TRY_RUNS;
	v = p->sv;
	if (binds && is_for) {
		size_t e = 1;
		while (e < p->sn && !(v[e].depth == 0 && ap_py_is_kw(&v[e], KW_IN)))
			e++;
		/* A name the loop binds holds its last item, whatever the body
		 * does: bound every way where the body runs, not at all where it
		 * never does. Other targets bind as the body may run. */
		if (e == 2 && ap_py_is_ident(&v[1]))
			runs = ap_py_iterations(p, e + 1, p->sn, &last, &item);
		if (runs > 0) {
			ap_py_binding *t = ap_py_add_binding(p, c, last, &v[1]);
			if (last == AP_PY_BIND_ALIAS) {
				t->target = ap_py_tok_str(p, &v[item]);
			} else if (last == AP_PY_BIND_UNKNOWN) {
				p->scratch.len = 0;
				ap_buf_printf(&p->scratch, "it is bound to the last item of the `for` loop "
				              "at line %u", v[0].line);
				t->why = ap_py_scratch_str(p);
			}
		}
		arm_begin(p, &a);
		if (runs < 0)
			bind_targets(p, c, 1, e, 0);
	} else {
		if (binds && !is_try && !is_with && ap_py_condition(p, 1, p->sn) == COND_FALSE)
			runs = 0; /* while False: */
		if (!is_with || suppress)
			arm_begin(p, &a);
	}
	if (binds && is_with) {
		/* with (a as b, c as d): the items are in the parentheses. */
		size_t i = 1, b = p->sn;
		unsigned d = 0;
		if (ap_py_parenthesised(p, i, b)) {
			for (size_t k = i + 1; k + 1 < b && d == 0; k++)
				if (v[k].depth == 1 && ap_py_is_kw(&v[k], KW_AS))
					d = 1;
			if (d == 1)
				i++, b--;
		}
		while (i < b) {
			size_t e = i, as = b;
			while (e < b && !(v[e].depth == d && ap_py_is_op(&v[e], ','))) {
				if (as == b && v[e].depth == d && ap_py_is_kw(&v[e], KW_AS))
					as = e;
				e++;
			}
			if (as < e)
				bind_targets(p, c, as + 1, e, d);
			i = e + 1;
		}
	}
	/* A loop's body may not run, a try's may stop at any statement: a
	 * method defined there may not exist. */
	body.maybe = c->maybe || !is_with || suppress;
	body.live &= runs != 0;
	if ((is_try && binds) || suppress) {
		body.trying = &outcome;
		body.try_maybe = c->maybe;
	}
	suite(p, &body, false);
	failed = outcome == TRY_FAILS;
	/* the body stopped where the reader cannot tell, or raised past it
	 * (the module then binds nothing that matters) */
	if (suppress)
		a.may_skip = outcome == TRY_UNKNOWN || (failed && suppresses != COND_TRUE);
	/* A body that runs to its end once, or more times alike: as an `if
	 * True:` */
	if (runs >= 1 && p->breaks == breaks && p->continues == continues &&
	    (runs == 1 || ap_py_runs_alike(p, a.start[0])))
		a.may_skip = false;
	for (;;) {
		struct ctx arm = *c;
		bool is_except = is_try && ap_py_is_kw(&p->t, KW_EXCEPT);
		bool is_else = ap_py_is_kw(&p->t, KW_ELSE);
		bool is_finally = is_try && ap_py_is_kw(&p->t, KW_FINALLY);
		/* the arm runs after what ran before it, not instead */
		bool after = false;
		if (!is_except && !is_else && !is_finally)
			break;
		if (!collect_header(p, NULL, is_except && outcome == TRY_FAILS && !caught))
			break;
		if (is_except && outcome == TRY_RUNS) {
			arm.live = false;
		} else if (is_except && outcome == TRY_FAILS) {
			enum cond catches = caught ? COND_FALSE : ap_py_catches_import(p, 1, p->sn);
			arm.live &= catches != COND_FALSE;
			after = catches == COND_TRUE;
			/* a handler that may or may not catch it: the rest as before */
			if (catches == COND_UNKNOWN)
				outcome = TRY_UNKNOWN;
			caught |= catches == COND_TRUE;
		} else if (is_try && is_else) {
			arm.live &= !failed;
			after = outcome == TRY_RUNS;
		} else if (is_else) {
			/* a loop's else runs once the loop ends, unless a break ends it */
			after = p->breaks == breaks;
		}
		if ((is_finally || (is_else && !is_try && after)) && !ended) {
			arms_end(p, c, &a);
			ended = true;
		} else if (!ended && arm.live && !after) {
			arm_begin(p, &a);
		}
		arm.maybe = c->maybe || !(is_finally || after);
		suite(p, &arm, false);
	}
	if (!ended)
		arms_end(p, c, &a);
}

/* Decorators that return the function they are given, or a wrapper that
 * keeps its signature (__wrapped__) and takes what it takes. */
static bool keeps_function(const char *name, bool in_class)
{
	static const char *const keep[] = {"functools.lru_cache", "lru_cache", "functools.cache",
	                                   "cache", "typing.final", "final", NULL};

	for (const char *const *k = keep; *k; k++)
		if (strcmp(name, *k) == 0)
			return true;
	return in_class && (strcmp(name, "staticmethod") == 0 || strcmp(name, "classmethod") == 0);
}

/* One decorator line, from its '@': a decorator that may bind something
 * else is kept for the def that follows. */
static void decorator_line(struct parser *p, const struct ctx *c)
{
	bool dotted = false, called = false, simple, keeps;

	ap_py_advance(p);
	p->scratch.len = 0;
	while (p->t.kind == T_NAME) {
		ap_py_scratch_name(p, &p->t);
		dotted = true;
		ap_py_advance(p);
		if (!ap_py_is_op(&p->t, '.'))
			break;
		ap_buf_putc(&p->scratch, '.');
		ap_py_advance(p);
	}
	if (dotted && ap_py_is_op(&p->t, '(')) {
		unsigned depth = p->t.depth;
		called = true;
		do
			ap_py_advance(p);
		while (p->t.kind != T_END && !(p->t.depth == depth && ap_py_is_op(&p->t, ')')));
		ap_py_advance(p);
	}
	simple = dotted && p->t.kind == T_NEWLINE;
	if (!simple) {
		p->scratch.len = 0;
		ap_buf_puts(&p->scratch, "a decorator expression");
	}
	while (p->t.kind != T_NEWLINE && p->t.kind != T_END)
		ap_py_advance(p);
	ap_py_advance(p);
	/* lru_cache(maxsize=...) is the one of them called with arguments. */
	keeps = simple && keeps_function(p->scratch.data, c->prefix != NULL) &&
	        (!called || strstr(p->scratch.data, "lru_cache") != NULL);
	if (!keeps) {
		ap_xgrow((void **)&p->decorators, &p->decorators_cap, p->ndecorators + 1,
		         sizeof *p->decorators);
		p->decorators[p->ndecorators].name = ap_py_scratch_str(p);
		p->decorators[p->ndecorators++].called = called;
	}
	p->scratch.len = 0;
}

static void statement(struct parser *p, const struct ctx *c, bool doc)
{
	struct ctx nested;
	unsigned line;
	bool is_async;

	p->ndecorators = 0;
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
		while (ap_py_is_op(&p->t, '@'))
			decorator_line(p, c);
		if (p->t.kind == T_INDENT || p->t.kind == T_DEDENT)
			return;
	}
	line = p->t.line;
	is_async = ap_py_is_kw(&p->t, KW_ASYNC);
	if (is_async) {
		ap_py_advance(p);
		if (!ap_py_is_kw(&p->t, KW_DEF) && !ap_py_is_kw(&p->t, KW_FOR) &&
		    !ap_py_is_kw(&p->t, KW_WITH)) {
			simple_line(p, c, false, false);
			return;
		}
	}
	if (ap_py_is_kw(&p->t, KW_DEF))
		def_stmt(p, c, line, is_async);
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
	free(m->all_refs);
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
	p->last_of = ap_xnonnull(ap_map_new());
	p->submodules = ap_xnonnull(ap_map_new());
	p->opt = opt;
	if (len >= 3 && memcmp(src, "\xef\xbb\xbf", 3) == 0)
		p->pos = 3;
	ap_py_advance(p);
	statements(p, &top, false, true);
	m->has_all = p->all_state == ALL_KNOWN;
	if (!m->has_all) {
		m->nall = 0;
		m->nall_refs = 0;
	}
	rc = p->err;
	free(p->sv);
	free(p->decorators);
	free(p->prev_same);
	free(p->next_same);
	for (size_t i = 0; i < p->nglobals; i++)
		free(p->globals[i].names);
	free(p->globals);
	ap_map_free(p->last_of);
	ap_map_free(p->submodules);
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

const ap_py_binding *ap_py_lookup(const ap_py_module *m, const char *name)
{
	for (size_t i = m->nbindings; i-- > 0;) {
		const ap_py_binding *b = &m->bindings[i];
		if (b->name != NULL && strcmp(b->name, name) == 0)
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
