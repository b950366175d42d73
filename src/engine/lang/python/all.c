/* SPDX-License-Identifier: MIT */
/* __all__ as CPython evaluates it at module level: what a star import of
 * the module takes, or why the reader cannot tell. */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/python/python-int.h"

/* __all__ is read as CPython evaluates it, on the sequence types it allows:
 * list + tuple raises TypeError, a tuple has no append, remove of a name it
 * lacks raises ValueError. Where the reader cannot follow (a call it does not
 * know, a name whose value it does not have, an operation that raises), the
 * module's __all__ is unknown with why, and a star import from it then answers
 * unknown for what it might export (the resolver's star_binds). */

static void all_unknown(struct parser *p, unsigned line, const char *why)
{
	p->m->nall = 0;
	p->m->nall_refs = 0;
	p->m->all_why = why;
	p->m->all_line = line;
	p->all_state = ALL_UNKNOWN;
}

/* Whether __all__ holds what the reader read; unbound, the statement at
 * line raises NameError, with unbound as the why. */
static bool all_known(struct parser *p, unsigned line, const char *unbound)
{
	if (p->all_state == ALL_NONE)
		all_unknown(p, line, unbound);
	return p->all_state == ALL_KNOWN;
}

/* A module-level binding of name so far (builtins such as `list` may be
 * rebound; a star import is taken not to rebind them). */
static bool bound_so_far(const struct parser *p, const char *name)
{
	for (size_t i = 0; i < p->m->nbindings; i++)
		if (p->m->bindings[i].name != NULL && strcmp(p->m->bindings[i].name, name) == 0)
			return true;
	return false;
}

/* Adjacent str literals sv[a, b) joined, appended as a name. A backslash is
 * an escape CPython decodes (or, raw, no name getattr finds): not read. */
static bool all_strings(struct parser *p, size_t a, size_t b)
{
	const tok *v = p->sv;
	ap_py_module *m = p->m;

	if (a == b)
		return false;
	p->scratch.len = 0;
	for (size_t k = a; k < b; k++) {
		size_t len;
		const char *body;
		if (!ap_py_plain_str(p, &v[k], &body, &len))
			return false;
		ap_buf_append(&p->scratch, body, len);
	}
	ap_xgrow((void **)&m->all, &p->all_cap, m->nall + 1, sizeof *m->all);
	m->all[m->nall++] = ap_py_scratch_str(p);
	return true;
}

static void all_ref(struct parser *p, size_t a, size_t b, bool attr)
{
	ap_py_module *m = p->m;
	ap_py_all_ref *r;

	p->scratch.len = 0;
	for (size_t k = a; k < b; k++)
		ap_buf_append(&p->scratch, p->s + p->sv[k].off, p->sv[k].len);
	ap_xgrow((void **)&m->all_refs, &p->all_refs_cap, m->nall_refs + 1, sizeof *m->all_refs);
	r = &m->all_refs[m->nall_refs++];
	r->name = ap_py_scratch_str(p);
	r->attr = attr;
	r->upto = m->nbindings;
	r->line = p->sv[a].line;
}

/* __all__ as it was before the statement, appended again (`__all__ + [...]`). */
static void all_self(struct parser *p)
{
	ap_py_module *m = p->m;

	for (size_t i = 0; i < p->all_base; i++) {
		ap_xgrow((void **)&m->all, &p->all_cap, m->nall + 1, sizeof *m->all);
		m->all[m->nall++] = m->all[i];
	}
	for (size_t i = 0; i < p->all_rbase; i++) {
		ap_xgrow((void **)&m->all_refs, &p->all_refs_cap, m->nall_refs + 1,
		         sizeof *m->all_refs);
		m->all_refs[m->nall_refs++] = m->all_refs[i];
	}
}

#define ALLT_BAD (-1)

static int all_expr(struct parser *p, size_t a, size_t b, unsigned d);

static bool has_kw(const struct parser *p, size_t a, size_t b, unsigned d, unsigned kw)
{
	for (size_t k = a; k < b; k++)
		if (p->sv[k].depth == d && ap_py_is_kw(&p->sv[k], kw))
			return true;
	return false;
}

static bool has_comma(const struct parser *p, size_t a, size_t b, unsigned d)
{
	for (size_t k = a; k < b; k++)
		if (p->sv[k].depth == d && ap_py_is_op(&p->sv[k], ','))
			return true;
	return false;
}

/* The elements sv[a, b) at depth d of a list, tuple or set display: str
 * literals and starred sequences; a tuple needs a comma unless empty, as
 * ("x") is a str. */
static bool all_elems(struct parser *p, size_t a, size_t b, unsigned d, bool tuple)
{
	const tok *v = p->sv;
	size_t count = 0, commas = 0;

	while (a < b) {
		size_t e = a;
		while (e < b && !(v[e].depth == d && ap_py_is_op(&v[e], ',')))
			e++;
		if (e > a && ap_py_is_op(&v[a], '*')) {
			if (all_expr(p, a + 1, e, d) == ALLT_BAD)
				return false;
		} else if (!all_strings(p, a, e)) {
			return false;
		}
		count++;
		if (e == b)
			break;
		commas++;
		a = e + 1;
	}
	return !tuple || count == 0 || commas > 0;
}

static bool same_name(const struct parser *p, const tok *x, const tok *y)
{
	return ap_py_is_ident(x) && ap_py_is_ident(y) && x->len == y->len &&
	       memcmp(p->s + x->off, p->s + y->off, x->len) == 0;
}

/* Whether the name passes the filter sv[a, b) at depth d of a
 * comprehension whose variable is at var: `VAR == "s"`, `!=`, `VAR in` or
 * `not in` a tuple or list of str literals, `VAR.startswith("s")`, each
 * alone or after `not`; -1 when it is none of these. */
static int all_filter(const struct parser *p, size_t a, size_t b, unsigned d, const tok *var,
                      const char *name)
{
	const tok *v = p->sv;
	const char *s;
	size_t len, n = strlen(name);
	bool negated = false, in = false, found = false;

	if (a < b && ap_py_is_kw(&v[a], KW_NOT)) {
		negated = true;
		a++;
	}
	if (b - a == 6 && same_name(p, &v[a], var) && ap_py_is_op(&v[a + 1], '.') &&
	    ap_py_is_word(p, &v[a + 2], "startswith") && ap_py_is_op(&v[a + 3], '(') &&
	    ap_py_plain_str(p, &v[a + 4], &s, &len) && ap_py_is_op(&v[a + 5], ')'))
		return (len <= n && memcmp(name, s, len) == 0) != negated;
	if (b - a < 3 || !same_name(p, &v[a], var))
		return -1;
	if (b - a == 3 && (ap_py_is_op(&v[a + 1], OP_EQ) || ap_py_is_op(&v[a + 1], OP_NE)) &&
	    ap_py_plain_str(p, &v[a + 2], &s, &len))
		return ((len == n && memcmp(name, s, len) == 0) == ap_py_is_op(&v[a + 1], OP_EQ)) !=
		       negated;
	a++;
	if (ap_py_is_kw(&v[a], KW_NOT) && a + 1 < b && ap_py_is_kw(&v[a + 1], KW_IN)) {
		in = true;
		negated = !negated;
		a += 2;
	} else if (ap_py_is_kw(&v[a], KW_IN)) {
		in = true;
		a++;
	}
	if (!in || b - a < 2 || !(ap_py_is_op(&v[a], '(') || ap_py_is_op(&v[a], '[')) ||
	    ap_py_closer(p, a, b) != b - 1)
		return -1;
	for (size_t k = a + 1; k < b - 1; k += 2) {
		if (!ap_py_plain_str(p, &v[k], &s, &len) || v[k].depth != d + 1 ||
		    (k + 1 < b - 1 && !ap_py_is_op(&v[k + 1], ',')))
			return -1;
		found |= len == n && memcmp(name, s, len) == 0;
	}
	return found != negated;
}

/* `n for n in SEQ` at depth d, then any `if FILTER` (all_filter): each
 * element of SEQ that passes them, as it is. */
static bool all_comprehension(struct parser *p, size_t a, size_t b, unsigned d)
{
	const tok *v = p->sv;
	ap_py_module *m = p->m;
	size_t seq = b, start = m->nall, refs = m->nall_refs, kept;

	if (!(b - a >= 5 && same_name(p, &v[a], &v[a + 2]) && ap_py_is_kw(&v[a + 1], KW_FOR) &&
	      ap_py_is_kw(&v[a + 3], KW_IN)))
		return false;
	for (size_t k = a + 4; k < b && seq == b; k++)
		if (v[k].depth == d && ap_py_is_kw(&v[k], KW_IF))
			seq = k;
	if (all_expr(p, a + 4, seq, d) == ALLT_BAD)
		return false;
	if (seq == b)
		return true;
	/* another module's __all__ is not known here: nothing to filter */
	if (m->nall_refs != refs)
		return false;
	kept = start;
	for (size_t i = start; i < m->nall; i++) {
		int pass = 1;
		for (size_t f = seq; f < b && pass == 1;) {
			size_t e = f + 1;
			while (e < b && !(v[e].depth == d && ap_py_is_kw(&v[e], KW_IF)))
				e++;
			pass = all_filter(p, f + 1, e, d, &v[a], m->all[i]);
			f = e;
		}
		if (pass < 0)
			return false;
		if (pass == 1)
			m->all[kept++] = m->all[i];
	}
	m->nall = kept;
	return true;
}

/* One operand of `+` in __all__'s value: a display, a comprehension, a call of
 * list/tuple/sorted/set on one, another module's __all__, a name bound to
 * one, or __all__ itself. Its type, or ALLT_BAD. */
static int all_term(struct parser *p, size_t a, size_t b, unsigned d)
{
	static const struct {
		const char *name;
		int type;
	} calls[] = {{"list", ALLT_LIST}, {"tuple", ALLT_TUPLE}, {"sorted", ALLT_LIST},
	             {"set", ALLT_SET}};
	const tok *v = p->sv;
	size_t k;

	if (a >= b)
		return ALLT_BAD;
	if ((ap_py_is_op(&v[a], '[') || ap_py_is_op(&v[a], '(') || ap_py_is_op(&v[a], '{')) &&
	    ap_py_closer(p, a, b) == b - 1) {
		bool list = ap_py_is_op(&v[a], '['), set = ap_py_is_op(&v[a], '{');
		if (has_kw(p, a + 1, b - 1, d + 1, KW_FOR))
			/* a bare generator is no sequence a star import reads twice */
			return !set && !list ? ALLT_BAD
			       : all_comprehension(p, a + 1, b - 1, d + 1) ? (list ? ALLT_LIST
			                                                            : ALLT_SET)
			                                                   : ALLT_BAD;
		if (set) /* {} is a dict */
			return b - a > 2 && all_elems(p, a + 1, b - 1, d + 1, false) ? ALLT_SET
			                                                             : ALLT_BAD;
		if (list)
			return all_elems(p, a + 1, b - 1, d + 1, false) ? ALLT_LIST : ALLT_BAD;
		if (b - a == 2 || has_comma(p, a + 1, b - 1, d + 1))
			return all_elems(p, a + 1, b - 1, d + 1, true) ? ALLT_TUPLE : ALLT_BAD;
		return all_expr(p, a + 1, b - 1, d + 1);
	}
	if (!ap_py_is_ident(&v[a]))
		return ALLT_BAD;
	if (b - a >= 3 && ap_py_is_op(&v[a + 1], '(') && ap_py_closer(p, a + 1, b) == b - 1) {
		for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
			if (!ap_py_is_word(p, &v[a], calls[i].name) || bound_so_far(p, calls[i].name) ||
			    has_comma(p, a + 2, b - 1, d + 1))
				continue;
			if (has_kw(p, a + 2, b - 1, d + 1, KW_FOR))
				return all_comprehension(p, a + 2, b - 1, d + 1) ? calls[i].type
				                                                  : ALLT_BAD;
			return all_expr(p, a + 2, b - 1, d + 1) != ALLT_BAD ? calls[i].type : ALLT_BAD;
		}
		return ALLT_BAD;
	}
	/* NAME, or NAME.NAME... ending in __all__ */
	for (k = a + 1; k + 1 < b && ap_py_is_op(&v[k], '.') && ap_py_is_ident(&v[k + 1]); k += 2)
		;
	if (k != b)
		return ALLT_BAD;
	if (b - a == 1 && ap_py_is_word(p, &v[a], "__all__")) {
		if (p->all_state != ALL_KNOWN)
			return ALLT_BAD;
		all_self(p);
		return p->all_type;
	}
	if (b - a == 1) {
		all_ref(p, a, b, false);
		return ALLT_ANY;
	}
	if (!ap_py_is_word(p, &v[b - 1], "__all__"))
		return ALLT_BAD;
	all_ref(p, a, b - 2, true);
	return ALLT_ANY;
}

/* The operands of `+` in sv[a, b) at depth d, as one sequence: both of one
 * type (a set has no +), or another module's. */
static int all_expr(struct parser *p, size_t a, size_t b, unsigned d)
{
	const tok *v = p->sv;
	int type = ALLT_BAD;

	for (size_t s = a, i = a; i <= b; i++) {
		int t;
		if (i < b && !(v[i].depth == d && ap_py_is_op(&v[i], '+')))
			continue;
		if ((t = all_term(p, s, i, d)) == ALLT_BAD)
			return ALLT_BAD;
		if (s == a)
			type = t;
		else if (type == ALLT_ANY || t == ALLT_ANY)
			type = type == ALLT_ANY ? t : type;
		else if (t != type || t == ALLT_SET)
			return ALLT_BAD;
		s = i + 1;
	}
	return type;
}

static const char all_maybe[] = "it is changed in a block that may not run on import";

static const char all_unreadable[] =
	"it is not made of str literals in lists or tuples, other modules' __all__, "
	"comprehensions over them and list/tuple/sorted/set() of them";

/* __all__ = sv[a, b), at depth d (add: `+=`, or extend). */
void ap_py_all_assign(struct parser *p, bool maybe, size_t a, size_t b, unsigned d,
                       bool add)
{
	ap_py_module *m = p->m;
	unsigned line = p->sv[0].line;
	int type;

	if (maybe) {
		all_unknown(p, line, all_maybe);
		return;
	}
	if (add && !all_known(p, line, "__all__ is added to before it is bound (NameError)"))
		return;
	p->all_base = m->nall;
	p->all_rbase = m->nall_refs;
	type = has_comma(p, a, b, d) ? (all_elems(p, a, b, d, true) ? ALLT_TUPLE : ALLT_BAD)
	                             : all_expr(p, a, b, d);
	if (type == ALLT_BAD) {
		all_unknown(p, line, all_unreadable);
		return;
	}
	if (add) {
		/* a list takes any sequence; a tuple only a tuple; a set no += */
		if ((p->all_type == ALLT_TUPLE && type != ALLT_TUPLE && type != ALLT_ANY) ||
		    p->all_type == ALLT_SET)
			all_unknown(p, line, "__all__ is added to what its type does not take "
			                     "(TypeError)");
		return;
	}
	/* the arrays are NULL until a first name or ref */
	m->nall -= p->all_base;
	if (m->nall > 0)
		memmove(m->all, m->all + p->all_base, m->nall * sizeof *m->all);
	m->nall_refs -= p->all_rbase;
	if (m->nall_refs > 0)
		memmove(m->all_refs, m->all_refs + p->all_rbase, m->nall_refs * sizeof *m->all_refs);
	p->all_state = ALL_KNOWN;
	p->all_type = type;
	m->all_why = NULL;
}

/* `from M import __all__`: M's, whatever it is. */
void ap_py_all_imported(struct parser *p, bool maybe, const ap_py_binding *b)
{
	ap_py_module *m = p->m;
	ap_py_all_ref *r;

	if (maybe) {
		all_unknown(p, b->line, all_maybe);
		return;
	}
	m->nall = 0;
	m->nall_refs = 0;
	ap_xgrow((void **)&m->all_refs, &p->all_refs_cap, 1, sizeof *m->all_refs);
	r = &m->all_refs[m->nall_refs++];
	r->name = b->name;
	r->attr = false;
	r->upto = m->nbindings;
	r->line = b->line;
	p->all_state = ALL_KNOWN;
	p->all_type = ALLT_ANY;
	m->all_why = NULL;
}

/* A decimal integer literal sv[a, b), a unary minus allowed; larger ones
 * are clamped (they index nothing either way). */
static bool int_literal(const struct parser *p, size_t a, size_t b, long long *out)
{
	bool neg = b - a == 2 && ap_py_is_op(&p->sv[a], '-');
	const tok *t;
	long long x = 0;

	if (b - a != 1u + neg || (t = &p->sv[a + neg])->kind != T_NUMBER)
		return false;
	for (size_t k = 0; k < t->len; k++) {
		char ch = p->s[t->off + k];
		if (ch == '_')
			continue;
		if (!ap_py_is_digit(ch) || (k == 0 && ch == '0' && t->len > 1))
			return false;
		if (x < 1000000000000LL)
			x = x * 10 + (ch - '0');
	}
	*out = neg ? -x : x;
	return true;
}

/* Takes names [i, j) out of __all__. */
static void all_cut(ap_py_module *m, size_t i, size_t j)
{
	memmove(m->all + i, m->all + j, (m->nall - j) * sizeof *m->all);
	m->nall -= j - i;
}

/* Whether __all__'s names can be counted on for removing one: a list whose
 * every name is known. */
static bool all_removable(struct parser *p, unsigned line)
{
	if (p->all_type == ALLT_TUPLE) {
		all_unknown(p, line, "a name is taken out of __all__, a tuple (TypeError)");
		return false;
	}
	if (p->m->nall_refs > 0) {
		all_unknown(p, line, "a name is taken out of __all__ after another module's "
		                     "__all__ went in: which one goes is not known");
		return false;
	}
	return true;
}

/* `del __all__` and `del __all__[i]`, `del __all__[i:j]`: the targets of the
 * del statement sv[1, sn) that name __all__. */
void ap_py_all_del(struct parser *p, bool maybe)
{
	const tok *v = p->sv;
	ap_py_module *m = p->m;
	unsigned line = v[0].line;

	if (maybe) {
		all_unknown(p, line, all_maybe);
		return;
	}
	for (size_t a = 1; a < p->sn;) {
		size_t e = a, colon = 0;
		long long lo = 0, hi = (long long)m->nall, len = (long long)m->nall;
		while (e < p->sn && !(v[e].depth == 0 && ap_py_is_op(&v[e], ',')))
			e++;
		if (!ap_py_is_word(p, &v[a], "__all__")) {
			a = e + 1;
			continue;
		}
		if (e - a == 1) {
			m->nall = 0;
			m->nall_refs = 0;
			m->all_why = NULL;
			p->all_state = ALL_NONE;
			return;
		}
		if (!all_known(p, line, "__all__ is deleted from before it is bound (NameError)"))
			return;
		if (!ap_py_is_op(&v[a + 1], '[') || ap_py_closer(p, a + 1, e) != e - 1) {
			all_unknown(p, line, "a del of __all__ the reader cannot follow");
			return;
		}
		for (size_t k = a + 2; k + 1 < e; k++)
			if (v[k].depth == 1 && ap_py_is_op(&v[k], ':'))
				colon = colon ? (size_t)-1 : k;
		if (colon == (size_t)-1 ||
		    (colon == 0 && !int_literal(p, a + 2, e - 1, &lo)) ||
		    (colon != 0 && ((colon > a + 2 && !int_literal(p, a + 2, colon, &lo)) ||
		                    (colon + 1 < e - 1 && !int_literal(p, colon + 1, e - 1, &hi))))) {
			all_unknown(p, line, "a del of __all__ at an index that is no integer literal");
			return;
		}
		if (!all_removable(p, line))
			return;
		if (colon == 0) {
			if (lo < 0)
				lo += len;
			if (lo < 0 || lo >= len) {
				all_unknown(p, line, "a del of __all__ past its end (IndexError)");
				return;
			}
			hi = lo + 1;
		} else {
			lo = lo < 0 ? (lo + len < 0 ? 0 : lo + len) : (lo > len ? len : lo);
			hi = hi < 0 ? (hi + len < 0 ? 0 : hi + len) : (hi > len ? len : hi);
		}
		if (lo < hi)
			all_cut(m, (size_t)lo, (size_t)hi);
		a = e + 1;
	}
}

/* __all__.METHOD(...): the list methods that change which names it holds,
 * as the list does them; those that do not change them leave it. */
void ap_py_all_method(struct parser *p, bool maybe)
{
	static const char *const pure[] = {"count", "index", "copy", "sort", "reverse"};
	const tok *v = p->sv;
	ap_py_module *m = p->m;
	size_t n = p->sn;
	unsigned line = v[0].line;
	long long at;

	if (n < 5 || !ap_py_is_word(p, &v[0], "__all__") || !ap_py_is_op(&v[1], '.') ||
	    !ap_py_is_ident(&v[2]) || !ap_py_is_op(&v[3], '(') || ap_py_closer(p, 3, n) != n - 1)
		return;
	if (maybe) {
		all_unknown(p, line, all_maybe);
		return;
	}
	if (!all_known(p, line, "a method of __all__ is called before it is bound (NameError)"))
		return;
	for (size_t i = 0; i < sizeof pure / sizeof *pure; i++)
		if (ap_py_is_word(p, &v[2], pure[i]))
			return;
	if (p->all_type == ALLT_TUPLE || p->all_type == ALLT_SET) {
		all_unknown(p, line, "a method of __all__ its type lacks (AttributeError)");
		return;
	}
	if (ap_py_is_word(p, &v[2], "extend")) {
		if (has_comma(p, 4, n - 1, 1))
			all_unknown(p, line, "__all__.extend() of more than one argument (TypeError)");
		else
			ap_py_all_assign(p, maybe, 4, n - 1, 1, true);
	} else if (ap_py_is_word(p, &v[2], "append")) {
		if (!all_strings(p, 4, n - 1))
			all_unknown(p, line, "__all__.append() of what is no str literal");
	} else if (ap_py_is_word(p, &v[2], "insert")) {
		size_t comma = 4;
		while (comma < n - 1 && !(v[comma].depth == 1 && ap_py_is_op(&v[comma], ',')))
			comma++;
		if (comma == n - 1 || !int_literal(p, 4, comma, &at) ||
		    !all_strings(p, comma + 1, n - 1))
			all_unknown(p, line, "__all__.insert() of what is no str literal");
	} else if (ap_py_is_word(p, &v[2], "clear") && n == 5) {
		m->nall = 0;
		m->nall_refs = 0;
	} else if (ap_py_is_word(p, &v[2], "remove")) {
		size_t had = m->nall, i;
		if (!all_strings(p, 4, n - 1)) {
			all_unknown(p, line, "__all__.remove() of what is no str literal");
			return;
		}
		m->nall = had;
		if (!all_removable(p, line))
			return;
		for (i = 0; i < had && strcmp(m->all[i], m->all[had]) != 0; i++)
			;
		if (i == had)
			all_unknown(p, line, "__all__.remove() of a name it does not hold (ValueError)");
		else
			all_cut(m, i, i + 1);
	} else {
		all_unknown(p, line, "a method of __all__ the reader does not follow");
	}
}


void ap_py_all_unreadable(struct parser *p, unsigned line, bool maybe)
{
	all_unknown(p, line, maybe ? all_maybe : all_unreadable);
}
