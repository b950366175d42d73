/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/lang/python/bounds-int.h"

/* What bounds.c's flow reads: the regions the literals cut, a condition's
 * verdict on each, the locals that depend on the name or hold literals;
 * pass 1; and the bound from where the values went. */

/* --- Literals and regions --------------------------------------------------- */

static void lit_add(bflow *bf, const bnum *v)
{
	size_t lo = 0, hi = bf->nlits;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = bn_cmp(&bf->lits[mid], v);
		if (c == 0)
			return;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (bf->nlits == MAX_LITS) {
		bf->too_many = true;
		return;
	}
	memmove(&bf->lits[lo + 1], &bf->lits[lo], (bf->nlits - lo) * sizeof bf->lits[0]);
	bf->lits[lo] = *v;
	bf->nlits++;
}

static long lit_index(const bflow *bf, const bnum *v)
{
	size_t lo = 0, hi = bf->nlits;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = bn_cmp(&bf->lits[mid], v);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Region 2i + 1 is literal i; region 2i the values below it and above
 * literal i - 1 (none when they are neighbours); region 2k those above all. */
static void regions(bflow *bf)
{
	bf->nreg = 2 * bf->nlits + 1;
	bf->all = rs_range(0, bf->nreg - 1);
	bf->single = rs_none();
	for (size_t i = 0; i < bf->nlits; i++) {
		bf->single = rs_or(bf->single, rs_range(2 * i + 1, 2 * i + 1));
		if (i == 0)
			continue;
		bnum x = bf->lits[i - 1];
		bn_step(&x, 1);
		if (bn_cmp(&x, &bf->lits[i]) == 0) {
			bf->all = rs_minus(bf->all, rs_range(2 * i, 2 * i));
			continue;
		}
		bn_step(&x, 1);
		if (bn_cmp(&x, &bf->lits[i]) == 0)
			bf->single = rs_or(bf->single, rs_range(2 * i, 2 * i));
	}
}

/* The values `name OP literal i` holds for. */
static rset compare_set(const bflow *bf, unsigned op, size_t i)
{
	size_t p = 2 * i + 1, top = bf->nreg - 1;
	rset r;

	switch (op) {
	case OP_LE:
		r = rs_range(0, p);
		break;
	case '<':
		r = rs_range(0, p - 1);
		break;
	case OP_GE:
		r = rs_range(p, top);
		break;
	case '>':
		r = rs_range(p + 1, top);
		break;
	case OP_EQ:
		r = rs_range(p, p);
		break;
	default: /* OP_NE */
		r = rs_minus(bf->all, rs_range(p, p));
		break;
	}
	return rs_and(r, bf->all);
}

/* --- Verdicts -------------------------------------------------------------------- */

cls bc_cls_one(const bflow *bf, int k, cause why)
{
	cls c;

	memset(&c, 0, sizeof c);
	switch (k) {
	case K_T:
		c.t = bf->all;
		break;
	case K_F:
		c.f = bf->all;
		break;
	case K_B:
		c.b = bf->all;
		c.bc = why;
		break;
	case K_UF:
		c.uf = bf->all;
		c.u = why;
		break;
	default:
		c.un = bf->all;
		c.u = why;
		break;
	}
	return c;
}

static cls cls_exact(const bflow *bf, rset sat)
{
	cls c;

	memset(&c, 0, sizeof c);
	c.t = rs_and(sat, bf->all);
	c.f = rs_minus(bf->all, sat);
	return c;
}

static cls cls_not(cls c)
{
	rset t = c.t;
	c.t = c.f;
	c.f = t;
	return c;
}

/* The undecided rest of x AND y or x OR y: the worst of the two. */
static void cls_rest(const bflow *bf, cls *r, const cls *x, const cls *y)
{
	rset rest = rs_minus(bf->all, rs_or(r->t, r->f));
	r->un = rs_and(rest, rs_or(x->un, y->un));
	rest = rs_minus(rest, r->un);
	r->uf = rs_and(rest, rs_or(x->uf, y->uf));
	r->b = rs_minus(rest, r->uf);
	r->u = x->u.kind != CA_NONE ? x->u : y->u;
	r->bc = x->bc.kind != CA_NONE ? x->bc : y->bc;
}

cls bc_cls_and(const bflow *bf, const cls *x, const cls *y)
{
	cls r;

	r.f = rs_or(x->f, y->f);
	r.t = rs_and(x->t, y->t);
	cls_rest(bf, &r, x, y);
	return r;
}

static cls cls_or(const bflow *bf, const cls *x, const cls *y)
{
	cls r;

	r.t = rs_or(x->t, y->t);
	r.f = rs_and(x->f, y->f);
	cls_rest(bf, &r, x, y);
	return r;
}

/* --- Failing, taint, followed locals ------------------------------------------ */

void bc_fail(walk *w, const char *fmt, ...)
{
	bflow *bf = w->flow;
	va_list ap;

	if (bf->bad)
		return;
	bf->bad = true;
	va_start(ap, fmt);
	vsnprintf(bf->why, sizeof bf->why, fmt, ap);
	va_end(ap);
}

cause bc_cause_of(const walk *w, int kind, size_t a, size_t b)
{
	cause c = {(uint8_t)kind, w->t[a].off, w->t[b - 1].off + w->t[b - 1].len, w->t[a].line};
	return c;
}

uint8_t bc_taint_of(const walk *w, uint32_t off, uint32_t len)
{
	return ap_map_get(w->flow->taint, w->s + off, len) == 1;
}

bool bc_tainted(const walk *w, const btok *t)
{
	return bc_taint_of(w, t->off, t->len);
}

void bc_set_taint(walk *w, uint32_t off, uint32_t len, uint8_t st)
{
	bflow *bf = w->flow;
	uint8_t old = bc_taint_of(w, off, len);

	/* Journaled even when unchanged: where the arms join, what an arm bound counts. */
	ap_xgrow((void **)&bf->jrn, &bf->capjrn, bf->njrn + 1, sizeof *bf->jrn);
	bf->jrn[bf->njrn].off = off;
	bf->jrn[bf->njrn].len = len;
	bf->jrn[bf->njrn++].old = old;
	ap_xok(ap_map_put(bf->taint, w->s + off, len, st));
}

int bc_track_of(const walk *w, const btok *t)
{
	const bflow *bf = w->flow;
	size_t k;

	if (bf->ntrack == 0 || !br_ident(t))
		return -1;
	k = ap_map_get(bf->cand_of, w->s + t->off, t->len);
	return k == AP_MAP_ABSENT || k == 0 ? -1 : bf->cands[k - 1].track;
}

/* Whether the followed local holds the same values in every live region. */
static bool uniform(int tr, rset live, const tvals *tv)
{
	if (!rs_empty(rs_and(tv->unsure[tr], live)))
		return false;
	for (size_t v = 0; v < MAX_TV; v++) {
		rset in = rs_and(tv->may[tr][v], live);
		if (!rs_empty(in) && !rs_eq(in, live))
			return false;
	}
	return true;
}

/* A literal a followed local may hold: a str without prefix or escapes, an
 * int, True, False, None. */
bool bc_tlit_of(const walk *w, size_t a, size_t b, tlit *out)
{
	const btok *t = &w->t[a];

	memset(out, 0, sizeof *out);
	if (b == a + 1 && t->kind == T_STRING) {
		const char *s = w->s + t->off;
		if (t->len < 2 || (s[0] != '\'' && s[0] != '"') ||
		    (t->len >= 6 && s[1] == s[0] && s[2] == s[0]) || memchr(s, '\\', t->len) != NULL)
			return false;
		out->kind = TL_STR;
		out->off = t->off + 1;
		out->len = t->len - 2;
		return true;
	}
	if (b == a + 1 && (br_kw(t, KW_TRUE) || br_kw(t, KW_FALSE) || br_kw(t, KW_NONE))) {
		out->kind = br_kw(t, KW_TRUE) ? TL_TRUE : br_kw(t, KW_FALSE) ? TL_FALSE : TL_NONE;
		return true;
	}
	out->kind = TL_INT;
	return br_int(w, a, b, &out->n) == 1;
}

/* == as CPython compares them (True == 1). */
bool bc_tlit_eq(const walk *w, const tlit *x, const tlit *y)
{
	tlit a = *x, b = *y;

	for (tlit *p = &a; p != NULL; p = p == &a ? &b : NULL)
		if (p->kind == TL_TRUE || p->kind == TL_FALSE) {
			memset(&p->n, 0, sizeof p->n);
			p->n.d[0] = p->kind == TL_TRUE;
			p->kind = TL_INT;
		}
	if (a.kind != b.kind)
		return false;
	if (a.kind == TL_STR)
		return a.len == b.len && memcmp(w->s + a.off, w->s + b.off, a.len) == 0;
	return a.kind != TL_INT || bn_cmp(&a.n, &b.n) == 0;
}

static bool tlit_true(const tlit *x)
{
	bnum zero;

	memset(&zero, 0, sizeof zero);
	return x->kind == TL_TRUE || (x->kind == TL_STR && x->len > 0) ||
	       (x->kind == TL_INT && bn_cmp(&x->n, &zero) != 0);
}

/* --- Reading conditions ------------------------------------------------------- */

/* The read at k of a name, not an attribute or a keyword argument. */
static bool is_read(const walk *w, size_t k)
{
	const btok *t = &w->t[k];
	return br_ident(t) && !(k > 0 && br_op(&w->t[k - 1], '.')) &&
	       !(t->call && k + 1 < w->nt && br_op(&w->t[k + 1], '='));
}

/* What [a, b) reads: the name or what depends on it, other locals, or neither. */
int bc_reads(const walk *w, size_t a, size_t b, const cctx *cx)
{
	int r = RD_NONE;

	for (size_t k = a; k < b; k++) {
		const btok *t = &w->t[k];
		int tr;
		if (!is_read(w, k))
			continue;
		if (br_reads_name(w, k) || bc_tainted(w, t))
			return RD_VALUE;
		if ((tr = bc_track_of(w, t)) >= 0) {
			if (!uniform(tr, cx->live, cx->tv))
				return RD_VALUE;
			r = RD_LOCAL;
		} else if (br_is_local(w, t)) {
			r = RD_LOCAL;
		}
	}
	return r;
}

/* The verdict on [a, b) from what it reads. */
static cls by_reads(walk *w, size_t a, size_t b, const cctx *cx)
{
	const bflow *bf = w->flow;

	switch (bc_reads(w, a, b, cx)) {
	case RD_VALUE:
		return bc_cls_one(bf, K_UN, bc_cause_of(w, CA_VALUE, a, b));
	case RD_LOCAL:
		return bc_cls_one(bf, K_B, bc_cause_of(w, CA_CALL, a, b));
	default:
		switch (br_const(w, a, b)) {
		case BC_FALSE:
			return bc_cls_one(bf, K_F, bc_cause_of(w, CA_NONE, a, b));
		case BC_TRUE:
			return bc_cls_one(bf, K_T, bc_cause_of(w, CA_NONE, a, b));
		default:
			return bc_cls_one(bf, K_UF, bc_cause_of(w, CA_FIXED, a, b));
		}
	}
}

/* The literal i seen in a comparison on the path [a, b). */
static void saw(walk *w, size_t i, size_t a, size_t b, const cctx *cx)
{
	bflow *bf = w->flow;
	seen s = {w->t[a].line, w->t[a].off, w->t[b - 1].off + w->t[b - 1].len};

	if (bf->pass1 || rs_empty(cx->live))
		return;
	if (bf->first[i].line == 0)
		bf->first[i] = s;
	if (cx->doubt && bf->doubted[i].line == 0)
		bf->doubted[i] = s;
}

/* The values where the integer [a, b) compares so with the name: pass 1
 * notes the literal. *big when it is past 256 bits. */
static bool int_set(walk *w, unsigned op, size_t a, size_t b, size_t pa, size_t pb,
                    const cctx *cx, rset *out, bool *big)
{
	bflow *bf = w->flow;
	bnum v;
	int lit = br_int(w, a, b, &v);
	long i;

	*big = lit == 2;
	if (lit != 1)
		return false;
	if (bf->pass1) {
		lit_add(bf, &v);
		*out = rs_none();
		return true;
	}
	if ((i = lit_index(bf, &v)) < 0)
		return false;
	saw(w, (size_t)i, pa, pb, cx);
	*out = compare_set(bf, op, (size_t)i);
	return true;
}

/* The values in the display [a, b) of integer literals: (), (1,), [1, 2], {1, 2}. */
static bool in_set(walk *w, size_t a, size_t b, size_t pa, size_t pb, const cctx *cx, rset *out)
{
	size_t k;
	bool big;

	*out = rs_none();
	if (b < a + 2 || !br_opener(&w->t[a]) || br_closer_of(w, a) != b - 1)
		return false;
	if (br_op(&w->t[a], '(') && b > a + 2 && !br_has_comma(w, a, b))
		return false; /* (64) is an int */
	for (k = a + 1; k + 1 < b;) {
		size_t e = k;
		rset one;
		while (e + 1 < b && !(br_op(&w->t[e], ',') && w->t[e].depth == w->t[a].depth + 1))
			e++;
		if (e > k) {
			if (!int_set(w, OP_EQ, k, e, pa, pb, cx, &one, &big))
				return false;
			*out = rs_or(*out, one);
		}
		k = e + 1;
	}
	return true;
}

/* The verdict of a followed local tr compared with literals: == (or in),
 * `is None`, or truth (lits NULL, n 0: truth; n SIZE_MAX: is None). */
static cls tracked(walk *w, int tr, const tlit *lits, size_t n, bool negate, const cctx *cx)
{
	const bflow *bf = w->flow;
	const cand *c = &bf->cands[bf->track_cand[tr]];
	rset in = rs_none(), out = rs_none(), unb = cx->tv->may[tr][0];
	cls r;

	for (size_t v = 0; v < c->nvals; v++) {
		bool match = false;
		if (n == SIZE_MAX)
			match = c->vals[v].kind == TL_NONE;
		else if (lits == NULL)
			match = tlit_true(&c->vals[v]);
		for (size_t j = 0; lits != NULL && j < n && !match; j++)
			match = bc_tlit_eq(w, &c->vals[v], &lits[j]);
		if (match)
			in = rs_or(in, cx->tv->may[tr][v + 1]);
		else
			out = rs_or(out, cx->tv->may[tr][v + 1]);
	}
	memset(&r, 0, sizeof r);
	r.t = rs_and(rs_minus(rs_minus(in, out), unb), bf->all);
	r.f = rs_and(rs_minus(rs_minus(out, in), unb), bf->all);
	{
		rset mixed = rs_minus(bf->all, rs_or(r.t, r.f));
		r.un = rs_and(mixed, rs_or(cx->tv->unsure[tr], unb));
		r.b = rs_minus(mixed, r.un);
	}
	return negate ? cls_not(r) : r;
}

/* Comparison operators as their own codes (`not in`, `is not` two tokens). */
enum { C_IN = 256, C_NOTIN, C_IS, C_ISNOT };

/* The comparison operator at k, its code, *len its tokens; 0 if none. */
unsigned bc_cmp_code(const walk *w, size_t k, size_t b, size_t *len)
{
	const btok *t = &w->t[k];

	*len = 1;
	if (t->kind == T_OP && (t->code == '<' || t->code == '>' || t->code == OP_LE ||
	                        t->code == OP_GE || t->code == OP_EQ || t->code == OP_NE))
		return t->code;
	if (br_kw(t, KW_IN))
		return C_IN;
	if (br_kw(t, KW_NOT) && k + 1 < b && br_kw(&w->t[k + 1], KW_IN)) {
		*len = 2;
		return C_NOTIN;
	}
	if (br_kw(t, KW_IS)) {
		bool not = k + 1 < b && br_kw(&w->t[k + 1], KW_NOT);
		*len = 1 + not;
		return not ? C_ISNOT : C_IS;
	}
	return 0;
}

/* The same at depth d, in this scope. */
static unsigned cmp_op(const walk *w, size_t k, size_t b, unsigned d, size_t *len)
{
	*len = 1;
	return w->t[k].depth != d || w->t[k].skip ? 0 : bc_cmp_code(w, k, b, len);
}

static unsigned mirror(unsigned op)
{
	switch (op) {
	case '<':
		return '>';
	case '>':
		return '<';
	case OP_LE:
		return OP_GE;
	case OP_GE:
		return OP_LE;
	case OP_EQ:
	case OP_NE:
		return op;
	default:
		return 0;
	}
}

/* A lone operand: the name, or a followed local. */
bool bc_lone(const walk *w, size_t *a, size_t *b, bool name)
{
	br_unwrap(w, a, b);
	if (*b != *a + 1)
		return false;
	return name ? br_reads_name(w, *a) : bc_track_of(w, &w->t[*a]) >= 0;
}

/* The name OP [oa, ob), the whole [pa, pb). */
static cls name_pair(walk *w, unsigned op, size_t oa, size_t ob, size_t pa, size_t pb,
                     const cctx *cx)
{
	const bflow *bf = w->flow;
	bool none, big;
	rset set;

	br_unwrap(w, &oa, &ob);
	none = ob == oa + 1 && br_kw(&w->t[oa], KW_NONE);
	if (op != 0 && op < C_IN && int_set(w, op, oa, ob, pa, pb, cx, &set, &big))
		return cls_exact(bf, set);
	if (op != 0 && op < C_IN && big)
		return bc_cls_one(bf, K_UN, bc_cause_of(w, CA_BIG, pa, pb));
	if ((op == C_IN || op == C_NOTIN) && in_set(w, oa, ob, pa, pb, cx, &set)) {
		cls c = cls_exact(bf, set);
		return op == C_IN ? c : cls_not(c);
	}
	/* An int is never None. */
	if (none && (op == C_IS || op == OP_EQ))
		return bc_cls_one(bf, K_F, bc_cause_of(w, CA_NONE, pa, pb));
	if (none && (op == C_ISNOT || op == OP_NE))
		return bc_cls_one(bf, K_T, bc_cause_of(w, CA_NONE, pa, pb));
	return bc_cls_one(bf, K_UN, bc_cause_of(w, CA_VALUE, pa, pb));
}

/* The followed local tr OP [oa, ob), or by what [pa, pb) reads. */
static cls local_pair(walk *w, int tr, unsigned op, size_t oa, size_t ob, size_t pa, size_t pb,
                      const cctx *cx)
{
	tlit lits[16];
	size_t n = 0;
	bool ok = true;

	br_unwrap(w, &oa, &ob);
	if ((op == C_IS || op == C_ISNOT) && ob == oa + 1 && br_kw(&w->t[oa], KW_NONE))
		return tracked(w, tr, NULL, SIZE_MAX, op == C_ISNOT, cx);
	if ((op == OP_EQ || op == OP_NE) && bc_tlit_of(w, oa, ob, &lits[0]))
		return tracked(w, tr, lits, 1, op == OP_NE, cx);
	if ((op == C_IN || op == C_NOTIN) && br_opener(&w->t[oa]) && br_closer_of(w, oa) == ob - 1) {
		for (size_t k = oa + 1; k + 1 < ob && ok;) {
			size_t e = k;
			while (e + 1 < ob && !(br_op(&w->t[e], ',') && w->t[e].depth == w->t[oa].depth + 1))
				e++;
			ok = e == k || (n < 16 && bc_tlit_of(w, k, e, &lits[n++]));
			k = e + 1;
		}
		if (ok)
			return tracked(w, tr, lits, n, op == C_NOTIN, cx);
	}
	return by_reads(w, pa, pb, cx);
}

/* One comparison of a chain, [la, lb) OP [ra, rb). */
static cls pair(walk *w, size_t la, size_t lb, unsigned op, size_t ra, size_t rb, const cctx *cx)
{
	size_t xa = la, xb = lb, ya = ra, yb = rb;
	bnum x, y;

	if (op != 0 && op < C_IN && br_int(w, la, lb, &x) == 1 && br_int(w, ra, rb, &y) == 1) {
		int d = bn_cmp(&x, &y);
		bool holds = op == '<' ? d < 0 : op == '>' ? d > 0 : op == OP_LE ? d <= 0
		           : op == OP_GE ? d >= 0 : op == OP_EQ ? d == 0 : d != 0;
		return bc_cls_one(w->flow, holds ? K_T : K_F, bc_cause_of(w, CA_NONE, la, rb));
	}

	if (bc_lone(w, &xa, &xb, true))
		return name_pair(w, op, ra, rb, la, rb, cx);
	if (bc_lone(w, &ya, &yb, true))
		return name_pair(w, mirror(op), la, lb, la, rb, cx);
	xa = la, xb = lb, ya = ra, yb = rb;
	if (bc_lone(w, &xa, &xb, false))
		return local_pair(w, bc_track_of(w, &w->t[xa]), op, ra, rb, la, rb, cx);
	if (bc_lone(w, &ya, &yb, false) && mirror(op) != 0)
		return local_pair(w, bc_track_of(w, &w->t[ya]), op, la, lb, la, rb, cx);
	return by_reads(w, la, rb, cx);
}

/* A comparison chain, or one operand: [a, b) at depth d. */
static cls comparison(walk *w, size_t a, size_t b, const cctx *cx)
{
	const bflow *bf = w->flow;
	unsigned d = w->t[a].depth, op = 0;
	size_t start = a, len, x = a, xb = b;
	cls c = bc_cls_one(bf, K_T, bc_cause_of(w, CA_NONE, a, b));
	bool any = false;

	for (size_t k = a; k < b; k++) {
		unsigned next = cmp_op(w, k, b, d, &len);
		if (next == 0 || k == a)
			continue;
		if (any) {
			cls p = pair(w, x, xb, op, start, k, cx);
			c = bc_cls_and(bf, &c, &p);
		}
		x = start;
		xb = k;
		op = next;
		start = k + len;
		k += len - 1;
		any = true;
	}
	if (any) {
		cls p = pair(w, x, xb, op, start, b, cx);
		return bc_cls_and(bf, &c, &p);
	}
	if (bc_lone(w, &x, &xb, true)) {
		/* The name alone: true when not 0. */
		bnum zero;
		long i;
		memset(&zero, 0, sizeof zero);
		if (bf->pass1) {
			lit_add(w->flow, &zero);
			return c;
		}
		if ((i = lit_index(bf, &zero)) >= 0)
			return cls_exact(bf, compare_set(bf, OP_NE, (size_t)i));
	}
	x = a, xb = b;
	if (bc_lone(w, &x, &xb, false))
		return tracked(w, bc_track_of(w, &w->t[x]), NULL, 0, false, cx);
	return by_reads(w, a, b, cx);
}

/* [a, b) split at the keyword kw at its own level, each part read and joined. */
static bool split(walk *w, size_t a, size_t b, unsigned kw, const cctx *cx, cls *out)
{
	const bflow *bf = w->flow;
	unsigned d = w->t[a].depth;
	size_t start = a;
	bool any = false;

	for (size_t k = a; k <= b; k++) {
		cls part;
		if (k < b && !(br_kw(&w->t[k], kw) && w->t[k].depth == d && !w->t[k].skip))
			continue;
		if (k == b && !any)
			return false;
		part = start < k ? bc_cond(w, start, k, cx) : by_reads(w, a, b, cx);
		if (!any)
			*out = part;
		else
			*out = kw == KW_OR ? cls_or(bf, out, &part) : bc_cls_and(bf, out, &part);
		any = true;
		start = k + 1;
	}
	return true;
}

/* The verdict of the condition [a, b) on each region. */
cls bc_cond(walk *w, size_t a, size_t b, const cctx *cx)
{
	const bflow *bf = w->flow;
	bool neg = false;
	cls c;

	while (b > a && br_op(&w->t[a], '(') && br_closer_of(w, a) == b - 1) {
		/* A tuple is true unless empty; its parentheses are no grouping. */
		if (b == a + 2 || br_has_comma(w, a, b))
			return bc_cls_one(bf, b == a + 2 ? K_F : K_T, (cause){0});
		a++;
		b--;
	}
	if (b <= a)
		return bc_cls_one(bf, K_T, (cause){0});
	for (size_t k = a; k < b; k++) {
		const btok *t = &w->t[k];
		if (t->depth == w->t[a].depth && !t->skip &&
		    (br_kw(t, KW_IF) || br_kw(t, KW_LAMBDA) || br_op(t, OP_WALRUS)))
			return by_reads(w, a, b, cx);
	}
	if (split(w, a, b, KW_OR, cx, &c) || split(w, a, b, KW_AND, cx, &c))
		return c;
	/* not binds tighter than and and or: the rest is a comparison. */
	while (b > a + 1 && br_kw(&w->t[a], KW_NOT)) {
		neg = !neg;
		a++;
	}
	c = a < b && br_op(&w->t[a], '(') && br_closer_of(w, a) == b - 1 ? bc_cond(w, a, b, cx)
	                                                                   : comparison(w, a, b, cx);
	return neg ? cls_not(c) : c;
}

int bc_header_kind(const walk *w, const frame *f, size_t a)
{
	static const struct {
		unsigned kw;
		int h;
	} kws[] = {{KW_IF, H_IF},         {KW_ELIF, H_ELIF},       {KW_ELSE, H_ELSE},
	           {KW_WHILE, H_WHILE},   {KW_FOR, H_FOR},         {KW_TRY, H_TRY},
	           {KW_EXCEPT, H_EXCEPT}, {KW_FINALLY, H_FINALLY}, {KW_WITH, H_WITH},
	           {KW_DEF, H_DEF},       {KW_CLASS, H_CLASS}};
	const btok *t = &w->t[a], *last = &w->t[w->nt - 1];

	for (size_t k = 0; k < sizeof kws / sizeof kws[0]; k++)
		if (br_kw(t, kws[k].kw))
			return kws[k].h;
	/* match and case are keywords only in a header: a line ending in its colon. */
	if (w->nt > a + 2 && br_op(last, ':') && last->depth == 0 && !last->skip) {
		if (br_word(w, t, "match"))
			return H_MATCH;
		if (br_word(w, t, "case") && f->kind == FK_MATCH)
			return H_CASE;
	}
	return H_SIMPLE;
}


/* A case pattern [a, b) of f's match. */
cls bc_pattern(walk *w, const frame *f, size_t a, size_t b, const cctx *cx)
{
	const bflow *bf = w->flow;
	rset set = rs_none(), one;
	bool big;

	if (b == a + 1 && br_ident(&w->t[a]))
		return bc_cls_one(bf, K_T, (cause){0}); /* `_` or a capture */
	if (!f->subj_name)
		return f->subj;
	for (size_t k = a; k < b;) {
		size_t e = k;
		while (e < b && !(br_op(&w->t[e], '|') && w->t[e].depth == w->t[a].depth))
			e++;
		if (!int_set(w, OP_EQ, k, e, a, b, cx, &one, &big))
			return bc_cls_one(bf, K_UN, bc_cause_of(w, CA_VALUE, a, b));
		set = rs_or(set, one);
		k = e + 1;
	}
	return cls_exact(bf, set);
}


/* --- Pass 1: locals, literals, locals holding literals ---------------------- */

enum { P1_SCOPE = 1, P1_CLASS = 2, P1_LOOP = 4, P1_MATCH = 8 };

/* Pass 1's w->bind: a local a literal may be followed for. */
static void p1_bind(walk *w, const btok *t, size_t la, size_t lb)
{
	bflow *bf = w->flow;
	size_t k = ap_map_get(bf->cand_of, w->s + t->off, t->len);
	cand *c;
	tlit v;

	if (k == AP_MAP_ABSENT) {
		ap_xgrow((void **)&bf->cands, &bf->capc, bf->ncands + 1, sizeof *bf->cands);
		c = &bf->cands[bf->ncands++];
		memset(c, 0, sizeof *c);
		c->off = t->off;
		c->len = t->len;
		c->ok = true;
		c->track = -1;
		ap_xok(ap_map_put(bf->cand_of, w->s + t->off, t->len, bf->ncands));
	} else if (k == 0) {
		return; /* a parameter */
	} else {
		c = &bf->cands[k - 1];
	}
	if (!c->ok)
		return;
	if (la == SIZE_MAX || (bf->p1_flags & P1_LOOP) || !bc_tlit_of(w, la, lb, &v)) {
		c->ok = false;
		return;
	}
	for (size_t j = 0; j < c->nvals; j++)
		if (bc_tlit_eq(w, &c->vals[j], &v))
			return;
	if (c->nvals == MAX_TV - 1)
		c->ok = false;
	else
		c->vals[c->nvals++] = v;
}

static void p1_simple(walk *w, size_t a, size_t b, uint8_t fl)
{
	cctx cx = {rs_none(), NULL, false};

	if (br_kw(&w->t[a], KW_ASSERT)) {
		size_t e = a + 1;
		while (e < b && !(w->t[e].depth == 0 && !w->t[e].skip && br_op(&w->t[e], ',')))
			e++;
		bc_cond(w, a + 1, e, &cx);
	}
	if (!(fl & P1_CLASS))
		br_collect_simple(w, a, b);
}

struct p1frame {
	uint32_t col;
	uint8_t flags;
};

void bc_pass1(walk *w)
{
	bflow *bf = w->flow;
	struct p1frame *st = NULL;
	size_t nst = 0, cap = 0;
	uint8_t next = 0;
	cctx cx = {rs_none(), NULL, false};

	bf->pass1 = true;
	w->bind = p1_bind;
	for (bool first = true; br_next_line(w); first = false) {
		uint8_t fl;
		size_t a = 0, hc;
		frame mf;
		int h;
		if (first || w->col > st[nst - 1].col) {
			ap_xgrow((void **)&st, &cap, nst + 1, sizeof *st);
			st[nst].col = w->col;
			st[nst++].flags = first ? 0 : next;
		}
		while (nst > 1 && w->col < st[nst - 1].col)
			nst--;
		fl = st[nst - 1].flags;
		next = fl & (P1_SCOPE | P1_CLASS | P1_LOOP);
		bf->p1_flags = fl;
		if (fl & P1_SCOPE)
			continue;
		for (size_t k = 0; k < w->nt; k++)
			bf->generator |= !(fl & P1_CLASS) && br_kw(&w->t[k], KW_YIELD) && !w->t[k].skip;
		if (!(fl & P1_CLASS))
			br_collect_walrus(w);
		if (br_kw(&w->t[0], KW_ASYNC) && w->nt > 1)
			a = 1;
		memset(&mf, 0, sizeof mf);
		mf.kind = (fl & P1_MATCH) ? FK_MATCH : FK_BLOCK;
		mf.subj_name = true;
		h = bc_header_kind(w, &mf, a);
		if (h == H_SIMPLE) {
			for (size_t b = 0; b < w->nt;) {
				size_t e = br_stmt_end(w, b, w->nt);
				if (b < e)
					p1_simple(w, b, e, fl);
				b = e + 1;
			}
			continue;
		}
		hc = br_header_colon(w, a);
		next &= ~P1_MATCH;
		switch (h) {
		case H_DEF:
		case H_CLASS:
			if (!(fl & P1_CLASS))
				br_collect_header(w, a, hc);
			next = h == H_DEF ? P1_SCOPE : (uint8_t)(P1_CLASS | (fl & P1_LOOP));
			break;
		case H_IF:
		case H_ELIF:
			bc_cond(w, a + 1, hc, &cx);
			break;
		case H_WHILE:
			bc_cond(w, a + 1, hc, &cx);
			next |= P1_LOOP;
			break;
		case H_FOR:
			bf->p1_flags |= P1_LOOP;
			br_collect_header(w, a, hc);
			next |= P1_LOOP;
			break;
		case H_WITH:
		case H_EXCEPT:
			if (!(fl & P1_CLASS))
				br_collect_header(w, a, hc);
			break;
		case H_MATCH: {
			size_t sa = a + 1, sb = hc;
			if (bc_lone(w, &sa, &sb, true))
				next |= P1_MATCH;
			break;
		}
		case H_CASE: {
			size_t g = a + 1;
			while (g < hc && !(w->t[g].depth == 0 && !w->t[g].skip && br_kw(&w->t[g], KW_IF)))
				g++;
			bc_pattern(w, &mf, a + 1, g, &cx);
			if (g + 1 < hc)
				bc_cond(w, g + 1, hc, &cx);
			break;
		}
		default:
			break;
		}
		bf->p1_flags = next;
		if (hc + 1 < w->nt && !(next & P1_SCOPE))
			for (size_t b = hc + 1; b < w->nt;) {
				size_t e = br_stmt_end(w, b, w->nt);
				if (b < e)
					p1_simple(w, b, e, next);
				b = e + 1;
			}
	}
	free(st);
	bf->pass1 = false;
}

/* What pass 1 found decides what pass 2 follows. */
void bc_after_pass1(walk *w)
{
	bflow *bf = w->flow;

	for (size_t k = 0; k < bf->ncands; k++) {
		cand *c = &bf->cands[k];
		const btok t = {c->off, c->len, 0, T_NAME, 0, 0, false, false};
		if (!c->ok || !br_is_local(w, &t) || br_is_name(w, &t) || bf->ntrack == MAX_TRACK)
			continue;
		c->track = (int)bf->ntrack;
		bf->track_cand[bf->ntrack++] = k;
	}
	regions(bf);
}

/* --- The answer ---------------------------------------------------------------- */

enum { BK_NONE, BK_VALUE, BK_EMPTY, BK_POINTS };

typedef struct bres {
	int kind;
	size_t region; /* BK_VALUE: the top of the values */
} bres;

/* The top of the values x: the highest range of them (values a single
 * literal lets through alone above a range do not count); none when x has
 * no top, empty, or points (only single values, several). */
static bres bound_of(const bflow *bf, rset x)
{
	bres r = {BK_EMPTY, 0};
	size_t nruns = 0, last = 0, multi = SIZE_MAX, len = 0;
	bool in = false, run_multi = false;

	for (size_t reg = 0; reg < bf->nreg; reg++) {
		if (!rs_has(bf->all, reg))
			continue; /* no values: the values on either side are neighbours */
		if (!rs_has(x, reg)) {
			in = false;
			continue;
		}
		if (!in) {
			in = true;
			len = 0;
			run_multi = false;
			nruns++;
		}
		len++;
		run_multi |= len > 1 || !rs_has(bf->single, reg);
		last = reg;
		if (run_multi)
			multi = reg;
	}
	if (nruns == 0)
		return r;
	if (rs_has(x, bf->nreg - 1))
		r.kind = BK_NONE;
	else if (multi != SIZE_MAX || nruns == 1)
		r.kind = BK_VALUE, r.region = multi != SIZE_MAX ? multi : last;
	else
		r.kind = BK_POINTS;
	return r;
}

/* The greatest value of region reg (not the last). */
static void region_top(const bflow *bf, size_t reg, char *out)
{
	bnum v = bf->lits[reg / 2];

	if (reg % 2 == 0)
		bn_step(&v, -1);
	bn_text(&v, out);
}

static void cause_words(const walk *w, const cause *c, char *out, size_t cap)
{
	char text[64];
	const char *tail;

	br_text(w, c->off, c->end, text, sizeof text);
	switch (c->kind) {
	case CA_IMPORT:
		tail = "taken only where an import fails";
		break;
	case CA_VALUE:
		tail = "which the reader cannot evaluate for each value";
		break;
	case CA_CALL:
		tail = "which varies from call to call";
		break;
	case CA_LOOP:
		tail = "a loop that may run no time";
		break;
	case CA_TRY:
		tail = "taken only where the try body raises";
		break;
	case CA_WITH:
		tail = "whose context manager may swallow an exception";
		break;
	case CA_BIG:
		tail = "an integer past 256 bits";
		break;
	default:
		tail = "the same on every call, which the reader cannot decide";
		break;
	}
	snprintf(out, cap, "`%s` at line %u, %s", text, c->line, tail);
}

void bc_answer(walk *w, ap_py_bound *out)
{
	const bflow *bf = w->flow;
	const flow *body = &bf->fr[0].st;
	bres lo = bound_of(bf, rs_or(body->acc[LO], body->fall[LO]));
	bres hi = bound_of(bf, rs_or(body->acc[HI], body->fall[HI]));
	char why[240];

	out->line = w->d->line;
	if (lo.kind == hi.kind && (lo.kind != BK_VALUE || lo.region == hi.region)) {
		if (lo.kind == BK_NONE) {
			out->kind = AP_PY_BOUND_NONE;
		} else if (lo.kind == BK_VALUE) {
			out->kind = AP_PY_BOUND_FOUND;
			region_top(bf, lo.region, out->value);
			if (bf->first[lo.region / 2].line != 0)
				out->line = bf->first[lo.region / 2].line;
		} else if (lo.kind == BK_EMPTY) {
			out->kind = AP_PY_BOUND_UNKNOWN;
			snprintf(out->why, sizeof out->why, "no call returns: every path raises");
		} else {
			rset x = rs_or(body->acc[LO], body->fall[LO]);
			size_t n = 0, len = 0;
			out->kind = AP_PY_BOUND_UNKNOWN;
			len = (size_t)snprintf(out->why, sizeof out->why,
			                       "it returns only for single values of %s (", w->name);
			for (size_t reg = 1; reg < bf->nreg && len < 200; reg += 2)
				if (rs_has(x, reg)) {
					char v[AP_PY_BOUND_DIGITS];
					region_top(bf, reg, v);
					len += (size_t)snprintf(out->why + len, sizeof out->why - len, "%s%s",
					                        n++ ? ", " : "", v);
				}
			snprintf(out->why + len, sizeof out->why - len, "), not a range");
		}
		return;
	}
	out->kind = AP_PY_BOUND_UNKNOWN;
	if (body->why.kind != CA_NONE)
		cause_words(w, &body->why, why, sizeof why);
	else
		snprintf(why, sizeof why, "what the reader cannot decide");
	for (int side = HI; side >= LO; side--) {
		const bres *b = side == HI ? &hi : &lo;
		const seen *s;
		char text[96];
		if (b->kind != BK_VALUE || bf->doubted[b->region / 2].line == 0)
			continue;
		s = &bf->doubted[b->region / 2];
		br_text(w, s->off, s->end, text, sizeof text);
		out->line = s->line;
		snprintf(out->why, sizeof out->why, "whether `%s` (line %u) runs depends on %s", text,
		         s->line, why);
		return;
	}
	snprintf(out->why, sizeof out->why, "the bound depends on %s", why);
}
