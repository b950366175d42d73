/* SPDX-License-Identifier: MIT */
/* What an assignment binds, on the statement in sv: each target, and what
 * each gets where the statement tells it: a bare name (an alias, looked up
 * as the bindings before the statement leave it, since CPython evaluates the
 * value before it binds any target), a lambda (a def, its signature read from
 * its parameters), functools.partial of a name (with its arguments), what a
 * call returns (unknown), or another value. Tuple and list targets take the
 * items of a tuple or list display of as many items one by one, as CPython
 * unpacks them (`a, b = b, a` swaps). A walrus binds as an assignment. A
 * write into globals() binds what only a run tells. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/lang/python/python-int.h"

/* The first index from i before b whose token lies outside depth d (a closer
 * of the brackets around), or at depth d is the operator code, not within a
 * lambda's parameters (`lambda a, b=1: ...` holds ',' and '='); b when none. */
static size_t item_end(const struct parser *p, size_t i, size_t b, unsigned d, unsigned code)
{
	unsigned lambdas = 0;

	for (; i < b; i++) {
		const tok *t = &p->sv[i];
		if (t->depth < d)
			return i;
		if (t->depth != d)
			continue;
		if (ap_py_is_kw(t, KW_LAMBDA))
			lambdas++;
		else if (lambdas > 0 && ap_py_is_op(t, ':'))
			lambdas--;
		else if (lambdas == 0 && ap_py_is_op(t, code))
			return i;
	}
	return b;
}

/* Whether sv[a, b) holds the keyword kw at depth d. */
static bool holds_kw(const struct parser *p, size_t a, size_t b, unsigned d, unsigned kw)
{
	for (size_t i = a; i < b; i++)
		if (p->sv[i].depth == d && ap_py_is_kw(&p->sv[i], kw))
			return true;
	return false;
}

/* Takes off parentheses around sv[*a, *b) that make no tuple: `(f)` is f. */
static void unwrap(const struct parser *p, size_t *a, size_t *b, unsigned *d)
{
	while (ap_py_parenthesised(p, *a, *b) && item_end(p, *a + 1, *b - 1, *d + 1, ',') == *b - 1) {
		(*a)++;
		(*b)--;
		(*d)++;
	}
}

/* Whether sv[a, b) is a call: a dotted name, or another call, then one
 * parenthesised argument list closing at b. */
static bool is_call(const struct parser *p, size_t a, size_t b)
{
	const tok *v = p->sv;
	size_t i = a;

	if (b - a < 3 || !ap_py_is_ident(&v[a]) || !ap_py_is_op(&v[b - 1], ')') || ap_py_cut(p, a, b))
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

/* --- Writes into the namespace ------------------------------------------- */

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
 * which makes X what an import of the module gets. In a class body these
 * write the module's namespace too, but for `vars()["NAME"]`, the class's
 * member. */
static bool namespace_write(struct parser *p, const struct ctx *c, size_t a, size_t b)
{
	const tok *v = p->sv;
	const char *key = NULL, *what = "globals() is written";
	size_t at, len = 0;
	ap_py_binding *bd;
	bool entry = own_module_entry(p, a, b);
	struct ctx top = *c;

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
	if (key == NULL || !ap_py_is_word(p, &v[a], "vars"))
		top.prefix = NULL;
	p->scratch.len = 0;
	ap_buf_printf(&p->scratch, "%s at line %u%s", what, v[a].line,
	              key != NULL || entry ? "" : " under a name only a run tells");
	if (key != NULL) {
		bd = ap_py_bind(p, &top, AP_PY_BIND_UNKNOWN, ap_py_arena_strndup(p->mod, key, len),
		                v[a].line);
	} else {
		bd = ap_py_bind(p, &top, AP_PY_BIND_STAR, NULL, v[a].line);
		bd->module = AP_PY_NAMESPACE_WRITE;
	}
	bd->why = ap_py_scratch_str(p);
	return true;
}

/* --- Lambdas -------------------------------------------------------------- */

/* Reads the parameters of the lambda at sv[k] into p->pv (*np of them), as
 * a def's: `/`, `*`, `*args`, `**kw`, defaults. The index of the ':' that
 * ends them, or b when they do not end before b as parameters do. */
static size_t lambda_params(struct parser *p, size_t k, size_t b, size_t *np)
{
	unsigned d = p->sv[k].depth;
	bool kwonly = false;
	size_t i = k + 1;

	*np = 0;
	for (;;) {
		const tok *v = p->sv;
		unsigned lambdas = 0;
		size_t e = i, len;
		ap_py_param *pa;

		/* The segment ends at ',' or ':' at depth d; a default may hold a
		 * lambda with its own. */
		for (; e < b && v[e].depth >= d; e++) {
			if (v[e].depth != d)
				continue;
			if (ap_py_is_kw(&v[e], KW_LAMBDA))
				lambdas++;
			else if (lambdas > 0 && ap_py_is_op(&v[e], ':'))
				lambdas--;
			else if (lambdas == 0 && (ap_py_is_op(&v[e], ':') || ap_py_is_op(&v[e], ',')))
				break;
		}
		if (e >= b || v[e].depth < d)
			return b;
		len = e - i;
		if (len == 1 && ap_py_is_op(&v[i], '/')) {
			for (size_t j = 0; j < *np; j++)
				p->pv[j].kind = AP_PY_POSONLY;
		} else if (len == 1 && ap_py_is_op(&v[i], '*')) {
			kwonly = true;
		} else if (len > 0) {
			/* 1: *args, 2: **kw; the name after the one token */
			int stars = ap_py_is_op(&v[i], '*') ? 1 : ap_py_is_op(&v[i], OP_POW) ? 2 : 0;
			size_t at = i + (stars > 0);
			if (at >= e || !ap_py_is_ident(&v[at]) ||
			    (e > at + 1 && (stars > 0 || !ap_py_is_op(&v[at + 1], '='))))
				return b;
			pa = ap_py_param_new(p, (*np)++);
			pa->name = ap_py_tok_str(p, &v[at]);
			pa->has_default = stars == 0 && e - i > 1;
			pa->kind = stars == 1 ? AP_PY_VARARGS
			           : stars == 2 ? AP_PY_VARKW
			           : kwonly ? AP_PY_KWONLY
			                    : AP_PY_POS;
			kwonly |= stars == 1;
		}
		if (ap_py_is_op(&v[e], ':'))
			return e;
		i = e + 1;
	}
}

/* Whether sv[a, b) at depth d is one lambda, its parameters read (*np). */
static bool is_lambda(struct parser *p, size_t a, size_t b, unsigned d, size_t *np)
{
	size_t colon;

	if (!ap_py_is_kw(&p->sv[a], KW_LAMBDA) || ap_py_cut(p, a, b))
		return false;
	colon = lambda_params(p, a, b, np);
	return colon < b && item_end(p, colon + 1, b, d, ',') == b;
}

/* --- functools.partial ---------------------------------------------------- */

/* Whether `functools` (which 0) has been bound only by `import functools`,
 * or `partial` (1) only by `from functools import partial`: then, but for
 * what a star import binds (see ap_py_args), the name holds what that
 * import binds, whichever arm of a statement bound it. Each binding is
 * checked once, the answer kept. */
static bool only_as(struct parser *p, int which)
{
	static const char *const names[] = {"functools", "partial"};
	struct only_as *o = &p->functools_as[which];
	size_t last = ap_map_get_str(p->last_of, names[which]);

	if (last == AP_MAP_ABSENT)
		return false;
	for (size_t i = last; !o->other && i != SIZE_MAX && i >= o->upto; i = p->prev_same[i]) {
		const ap_py_binding *b = &p->m->bindings[i];
		o->other = which == 0 ? b->kind != AP_PY_BIND_IMPORT || strcmp(b->module, "functools") != 0
		                      : b->kind != AP_PY_BIND_FROM || strcmp(b->module, "functools") != 0 ||
		                                strcmp(b->target, "partial") != 0;
	}
	o->upto = last + 1;
	return !o->other;
}

/* sv[a, b) as `functools.partial(NAME, ...)`, the arguments after NAME
 * plain positional ones or keywords (no `*` or `**`): binding bi takes it,
 * NAME looked up before value_at. False when it is not that. */
static bool take_partial(struct parser *p, const struct ctx *c, size_t bi, size_t a, size_t b,
                         size_t value_at)
{
	const tok *v = p->sv;
	size_t open = a + 1, i, e, nkw = 0;
	ap_py_args *args;
	ap_py_binding *to;
	unsigned d;

	if (b - a >= 4 && ap_py_is_word(p, &v[a], "functools") && ap_py_is_op(&v[a + 1], '.') &&
	    ap_py_is_word(p, &v[a + 2], "partial") && c->prefix == NULL && only_as(p, 0))
		open = a + 3;
	else if (!(ap_py_is_word(p, &v[a], "partial") && c->prefix == NULL && only_as(p, 1)))
		return false;
	if (!ap_py_is_op(&v[open], '(') || ap_py_closer(p, open, b) != b - 1 || ap_py_cut(p, a, b))
		return false;
	d = v[open].depth + 1;
	e = item_end(p, open + 1, b - 1, d, ',');
	if (e != open + 2 || !ap_py_is_ident(&v[open + 1]))
		return false;
	for (i = e + 1; i < b - 1; i = e + 1) {
		e = item_end(p, i, b - 1, d, ',');
		if (e == i || ap_py_is_op(&v[i], '*') || ap_py_is_op(&v[i], OP_POW))
			return false;
		nkw += ap_py_is_ident(&v[i]) && i + 1 < e && ap_py_is_op(&v[i + 1], '=');
	}
	args = ap_py_arena_alloc(p->mod, sizeof *args);
	memset(args, 0, sizeof *args);
	args->callee = open == a + 3 ? "functools" : "partial";
	args->after_star = p->nstars > 0;
	if (nkw > 0)
		args->keywords = ap_py_arena_alloc(p->mod, nkw * sizeof *args->keywords);
	for (i = open + 3; i < b - 1; i = e + 1) {
		e = item_end(p, i, b - 1, d, ',');
		if (ap_py_is_ident(&v[i]) && i + 1 < e && ap_py_is_op(&v[i + 1], '='))
			args->keywords[args->nkeywords++] = ap_py_tok_str(p, &v[i]);
		else
			args->positional++;
	}
	to = &ap_py_bindings(p, c, &e)[bi];
	to->kind = AP_PY_BIND_PARTIAL;
	to->target = ap_py_tok_str(p, &v[open + 1]);
	to->args = args;
	to->value_at = value_at;
	return true;
}

/* --- Values and targets --------------------------------------------------- */

/* Binding bi of c's (of the name token name) takes the value sv[a, b) at
 * depth d, whose names are looked up before binding value_at. */
static void take_value(struct parser *p, const struct ctx *c, const tok *name, size_t bi,
                       size_t a, size_t b, unsigned d, size_t value_at)
{
	const tok *v = p->sv;
	ap_py_binding *to;
	size_t n, np;

	unwrap(p, &a, &b, &d);
	/* `x = (y := f)` binds x to what y gets */
	while (b - a > 2 && ap_py_is_ident(&v[a]) && ap_py_is_op(&v[a + 1], OP_WALRUS)) {
		a += 2;
		unwrap(p, &a, &b, &d);
	}
	/* a value missing (`x =`, a syntax error) reads no token past it */
	if (a >= b)
		return;
	if (b - a == 1 && ap_py_is_ident(&v[a])) {
		to = &ap_py_bindings(p, c, &n)[bi];
		to->kind = AP_PY_BIND_ALIAS;
		to->target = ap_py_tok_str(p, &v[a]);
		to->value_at = value_at;
	} else if (is_lambda(p, a, b, d, &np)) {
		size_t di = ap_py_def_new(p, c, name, v[a].line);
		p->m->defs[di].lambda = true;
		ap_py_def_params(p, di, np);
		to = &ap_py_bindings(p, c, &n)[bi];
		to->kind = AP_PY_BIND_DEF;
		to->def_index = di;
	} else if (take_partial(p, c, bi, a, b, value_at)) {
		return;
	} else if (is_call(p, a, b)) {
		/* a factory, a decorator applied by hand: what a call returns is
		 * known only by running it */
		p->scratch.len = 0;
		ap_buf_printf(&p->scratch, "it is bound to what the call at line %u returns", v[a].line);
		to = &ap_py_bindings(p, c, &n)[bi];
		to->kind = AP_PY_BIND_UNKNOWN;
		to->why = ap_py_scratch_str(p);
	} else if (ap_py_cut(p, a, b) &&
	           (ap_py_is_kw(&v[a], KW_LAMBDA) ||
	            (ap_py_is_ident(&v[a]) && b - a > 1 &&
	             (ap_py_is_op(&v[a + 1], '(') || ap_py_is_op(&v[a + 1], '.'))))) {
		/* a lambda or a call, its end not kept */
		to = &ap_py_bindings(p, c, &n)[bi];
		to->kind = AP_PY_BIND_UNKNOWN;
		to->why = "it is bound to a value too long to read";
	}
}

/* The items of the sequence sv[*a, *b) at depth *d: a tuple display (bare
 * commas, or in parentheses) or a list display, whose range and depth then
 * become the items'. 0 when it is none (a comprehension, a starred item, no
 * comma and no brackets), or lost tokens. */
static size_t items(const struct parser *p, size_t *a, size_t *b, unsigned *d)
{
	const tok *v = p->sv;
	bool comma = false;
	size_t n = 0;

	if (ap_py_cut(p, *a, *b))
		return 0;
	if (*b - *a >= 2 && (ap_py_is_op(&v[*a], '(') || ap_py_is_op(&v[*a], '[')) &&
	    ap_py_closer(p, *a, *b) == *b - 1) {
		comma = true;
		(*a)++;
		(*b)--;
		(*d)++;
	}
	for (size_t i = *a, e; i < *b; i = e + 1) {
		e = item_end(p, i, *b, *d, ',');
		if (e == i || ap_py_is_op(&v[i], '*') || holds_kw(p, i, e, *d, KW_FOR))
			return 0;
		comma |= e < *b;
		n++;
	}
	return comma ? n : 0;
}

/* Binds the targets sv[a, b) (at depth d) to the value sv[va, vb) (at vd),
 * the value's names looked up before binding value_at. Recursion follows the
 * brackets, AP_PY_MAX_DEPTH at most. */
static void bind_pair(struct parser *p, const struct ctx *c, size_t a, size_t b, unsigned d,
                      size_t va, size_t vb, unsigned vd, size_t value_at)
{
	const tok *v = p->sv;
	size_t n, vn;

	unwrap(p, &a, &b, &d);
	if (b - a == 1 && ap_py_is_ident(&v[a])) {
		ap_py_add_binding(p, c, AP_PY_BIND_OTHER, &v[a]);
		ap_py_bindings(p, c, &n);
		take_value(p, c, &v[a], n - 1, va, vb, vd, value_at);
		return;
	}
	/* `[a] = (f)` unpacks f */
	unwrap(p, &va, &vb, &vd);
	{
		size_t ta = a, tb = b, ia = va, ib = vb;
		unsigned td = d, id = vd;
		n = items(p, &ta, &tb, &td);
		vn = n > 0 ? items(p, &ia, &ib, &id) : 0;
		if (n == 0 || vn != n) {
			ap_py_bind_names(p, c, a, b, d, AP_PY_BIND_OTHER);
			return;
		}
		for (size_t te, ve; ta < tb; ta = te + 1, ia = ve + 1) {
			te = item_end(p, ta, tb, td, ',');
			ve = item_end(p, ia, ib, id, ',');
			bind_pair(p, c, ta, te, td, ia, ve, id, value_at);
		}
	}
}

void ap_py_bind_names(struct parser *p, const struct ctx *c, size_t a, size_t b, unsigned d,
                      ap_py_bind_kind kind)
{
	const tok *v = p->sv;

	if (ap_py_cut(p, a, b))
		return;
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
			ap_py_bind_names(p, c, a + 1, e - 1, d + 1, kind);
		}
		a = e + 1;
	}
}

/* Binds the target sv[a, b) of an assignment whose value is sv[va, n). */
static void assign_target(struct parser *p, const struct ctx *c, size_t a, size_t b, size_t va,
                          size_t value_at)
{
	if (namespace_write(p, c, a, b))
		return;
	if (c->prefix == NULL && b - a == 1 && ap_py_is_word(p, &p->sv[a], "__all__"))
		ap_py_all_assign(p, c->maybe, va, p->sn, 0, false);
	bind_pair(p, c, a, b, 0, va, p->sn, 0, value_at);
}

void ap_py_assign_stmt(struct parser *p, const struct ctx *c)
{
	const tok *v = p->sv;
	size_t n = p->sn, value_at;
	unsigned lambdas = 0;

	/* The value is read before the first target is bound. */
	ap_py_bindings(p, c, &value_at);
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
			e = item_end(p, i + 1, n, 0, '=');
			if (e < n)
				assign_target(p, c, 0, i, e + 1, value_at);
			return;
		} else if (lambdas == 0 && ap_py_is_op(&v[i], '=')) {
			size_t last = i, a = 0, e;
			while ((e = item_end(p, last + 1, n, 0, '=')) < n)
				last = e;
			for (e = i; a < last; a = e + 1, e = item_end(p, e + 1, n, 0, '='))
				assign_target(p, c, a, e, last + 1, value_at);
			return;
		} else if (lambdas == 0 && ap_py_is_augassign(&v[i])) {
			if (i == 1 && ap_py_is_ident(&v[0])) {
				if (c->prefix == NULL && ap_py_is_word(p, &v[0], "__all__")) {
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
	if (!namespace_write(p, c, 0, n) && c->prefix == NULL)
		ap_py_all_method(p, c->maybe);
}

void ap_py_walrus_values(struct parser *p, const struct ctx *c)
{
	const tok *v = p->sv;
	size_t nw = p->nwalrus, lambda = p->sn;
	/* how many comprehensions hold each token, once one is seen */
	int *in = NULL;

	/* A walrus in a lambda's body binds in the lambda, and one in a
	 * comprehension only once its loop runs: those bind as before, their
	 * values not read. A `for` header's own keyword is at depth 0. */
	p->nwalrus = 0;
	for (size_t i = 0; i < p->sn && nw > 0; i++) {
		size_t open = i, close;
		if (ap_py_is_kw(&v[i], KW_LAMBDA) && lambda == p->sn)
			lambda = i;
		if (!ap_py_is_kw(&v[i], KW_FOR) || v[i].depth == 0)
			continue;
		while (open > 0 && v[open].depth >= v[i].depth)
			open--;
		close = ap_py_closer(p, open, p->sn);
		if (in == NULL)
			in = ap_xcalloc(p->sn + 1, sizeof *in);
		in[open]++;
		in[close == (size_t)-1 ? p->sn : close]--;
	}
	for (size_t i = 1; in != NULL && i <= p->sn; i++)
		in[i] += in[i - 1];
	for (size_t k = 0; k < nw && p->walrus[k].at < lambda; k++) {
		const struct walrus *w = &p->walrus[k];
		unsigned d = v[w->at].depth;
		if (in == NULL || in[w->at] == 0)
			take_value(p, c, &v[w->at - 1], w->binding, w->at + 1,
			           item_end(p, w->at + 1, p->sn, d, ','), d, w->binding);
	}
	free(in);
}
