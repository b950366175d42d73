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

/* ap_py_def_bound follows a def's body as CPython runs it, for the values of
 * one name. The integer literals the body compares the name with cut the
 * integers into regions (below the first, each literal, between two, above
 * the last), and a set of values is a set of regions: every comparison of
 * the name with a literal is exact on them. Each point of the body holds
 * two sets: the values that reach it on some call whatever the reader
 * cannot decide (lo), and those that may (hi). A condition splits them: a
 * comparison exactly; one on the call's other arguments both ways (on some
 * call each); one the reader cannot decide (module state, an import, a
 * local computed from the name) both ways in hi, and in lo only what every
 * way lets through. What reaches a return, or the end, is what a call
 * returns with; the bound is the top of it, and it is known when lo and hi
 * agree on it. Two passes: the first collects the body's local names, the
 * literals, and the locals that hold only literals; the second follows. */

/* --- Flows --------------------------------------------------------------------- */

static flow flow_on(rset lo, rset hi)
{
	flow f;

	memset(&f, 0, sizeof f);
	f.fall[LO] = lo;
	f.fall[HI] = hi;
	return f;
}

static rset *comp(flow *f, int k, int side)
{
	rset *c[] = {f->fall, f->acc, f->brk, f->cont};
	return &c[k][side];
}

static const rset *ccomp(const flow *f, int k, int side)
{
	return comp((flow *)f, k, side);
}

/* Whether no value gets anywhere (in the regions m). */
static bool dead_in(const flow *f, rset m)
{
	for (int k = 0; k < 4; k++)
		if (!rs_empty(rs_and(*ccomp(f, k, HI), m)))
			return false;
	return true;
}

/* Where A (the arm a verdict c sends values to) and R (the way past it)
 * send the values together: exact regions take one, the others both: in hi either way, in
 * lo only what both let through (a value returned one way and on the other
 * goes on). Where what decides is the call's other arguments or the same on
 * every call (b, uf), the calls (or worlds) where it goes one way for all
 * those values are no calls at all when they reject every value, and count
 * for nothing. *lost: lo dropped what hi kept. */
static void combine(walk *w, const cls *c, const flow *A, const tvals *Atv,
                    const flow *R, const tvals *Rtv, flow *out, tvals *otv, bool *lost)
{
	const bflow *bf = w->flow;
	rset exact = rs_or(c->t, c->f);
	const struct {
		rset m;
		cause why;
		bool worlds;
	} parts[] = {
		{c->b, c->bc, true},
		{c->uf, c->u, true},
		{c->un, c->u, false},
	};
	flow o;
	tvals ot;
	bool lossy = false;

	memset(&o, 0, sizeof o);
	for (int k = 0; k < 4; k++) {
		*comp(&o, k, HI) = rs_or(*ccomp(A, k, HI), *ccomp(R, k, HI));
		*comp(&o, k, LO) = rs_and(rs_or(*ccomp(A, k, LO), *ccomp(R, k, LO)), exact);
	}
	o.why = A->why.kind != CA_NONE ? A->why : R->why;
	for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
		rset m = parts[p].m, x[4];
		const flow *only = NULL;
		bool part_lost = false;
		if (rs_empty(m))
			continue;
		if (parts[p].worlds && dead_in(R, rs_or(m, c->f)) && dead_in(A, c->t))
			only = A;
		else if (parts[p].worlds && dead_in(A, rs_or(m, c->t)) && dead_in(R, c->f))
			only = R;
		if (only != NULL) {
			for (int k = 0; k < 4; k++)
				*comp(&o, k, LO) = rs_or(*comp(&o, k, LO), rs_and(*ccomp(only, k, LO), m));
			continue;
		}
		for (int k = 0; k < 4; k++)
			x[k] = rs_and(rs_and(*ccomp(A, k, LO), *ccomp(R, k, LO)), m);
		x[X_FALL] = rs_or(x[X_FALL],
		                  rs_and(rs_or(rs_and(A->fall[LO], R->acc[LO]),
		                               rs_and(A->acc[LO], R->fall[LO])),
		                         m));
		for (int k = 0; k < 4; k++) {
			rset had = rs_and(rs_or(*ccomp(A, k, LO), *ccomp(R, k, LO)), m);
			part_lost |= !rs_eq(had, x[k]);
			*comp(&o, k, LO) = rs_or(*comp(&o, k, LO), x[k]);
		}
		if (part_lost && parts[p].why.kind != CA_NONE)
			o.why = parts[p].why;
		lossy |= part_lost;
	}
	memset(&ot, 0, sizeof ot);
	for (size_t tr = 0; tr < bf->ntrack; tr++) {
		rset diff = rs_none(), u = rs_or(c->uf, c->un);
		for (size_t v = 0; v < MAX_TV; v++) {
			ot.may[tr][v] = rs_or(rs_and(Atv->may[tr][v], A->fall[HI]),
			                      rs_and(Rtv->may[tr][v], R->fall[HI]));
			diff = rs_or(diff, rs_xor(Atv->may[tr][v], Rtv->may[tr][v]));
		}
		ot.unsure[tr] = rs_or(rs_or(rs_and(Atv->unsure[tr], A->fall[HI]),
		                            rs_and(Rtv->unsure[tr], R->fall[HI])),
		                      rs_and(rs_and(diff, u), rs_and(A->fall[HI], R->fall[HI])));
	}
	*out = o;
	*otv = ot;
	if (lost != NULL)
		*lost = lossy;
}

/* Values rejected: none get anywhere. */
static flow flow_none(void)
{
	return flow_on(rs_none(), rs_none());
}

/* --- Frames and arms ----------------------------------------------------------- */

static frame *top(walk *w)
{
	return &w->flow->fr[w->flow->nfr - 1];
}

static cctx ctx_of(const frame *f, rset live, const tvals *tv)
{
	cctx cx = {live, tv, f->doubt.kind != CA_NONE};
	return cx;
}

static bool live(const frame *f)
{
	return !rs_empty(f->st.fall[HI]);
}

/* The block the header opens: entered by the values e, in doubt for why. */
static void open_block(walk *w, const frame *f, int kind, flow e, const tvals *tv, cause why)
{
	bflow *bf = w->flow;
	frame *n = &bf->next;

	memset(n, 0, sizeof *n);
	n->kind = (uint8_t)kind;
	n->st = e;
	n->tv = *tv;
	n->doubt = f->doubt.kind != CA_NONE ? f->doubt : why;
	n->scope_off = f->scope_off;
	n->scope_len = f->scope_len;
	n->in_class = f->in_class;
	bf->next_set = true;
}

static arm *push_arm(walk *w, const cls *c)
{
	bflow *bf = w->flow;
	arm *a;

	if (bf->narms == MAX_ARMS) {
		bc_fail(w, "more than %d arms of compound statements are open at once", MAX_ARMS);
		return NULL;
	}
	ap_xgrow((void **)&bf->arms, &bf->caparms, bf->narms + 1, sizeof *bf->arms);
	a = &bf->arms[bf->narms++];
	memset(a, 0, sizeof *a);
	a->c = *c;
	return a;
}

/* The cause of the regions the verdict c leaves undecided among live ones. */
static cause doubt_of(const cls *c, rset live)
{
	cause none = {0};

	if (!rs_empty(rs_and(rs_or(c->uf, c->un), live)))
		return c->u;
	if (!rs_empty(rs_and(c->b, live)))
		return c->bc;
	return none;
}

/* Whether c tells live values apart by their value. */
static bool splits(const cls *c, rset live)
{
	return (!rs_empty(rs_and(c->t, live)) && !rs_empty(rs_and(c->f, live))) ||
	       !rs_empty(rs_and(c->un, live));
}

/* An arm of f's chain under c, taking from f->rest what c may send it. */
static void arm_under(walk *w, frame *f, const cls *c)
{
	rset in = rs_or(rs_or(c->t, c->b), rs_or(c->uf, c->un));
	rset on = rs_or(rs_or(c->f, c->b), rs_or(c->uf, c->un));
	rset entry = f->rest.fall[HI];

	cause d = doubt_of(c, rs_and(entry, in));

	if (push_arm(w, c) == NULL)
		return;
	f->ndep |= splits(c, entry);
	open_block(w, f, FK_BLOCK, flow_on(rs_and(f->rest.fall[LO], in), rs_and(entry, in)),
	           &f->rest_tv, d.kind != CA_NONE ? d : f->rest_doubt);
	if (f->rest_doubt.kind == CA_NONE)
		f->rest_doubt = doubt_of(c, rs_and(entry, on));
	f->rest.fall[LO] = rs_and(f->rest.fall[LO], on);
	f->rest.fall[HI] = rs_and(entry, on);
}

/* Starts a chain at f: its values go to the chain until it ends. */
static void start_chain(walk *w, frame *f, int chain)
{
	bflow *bf = w->flow;

	f->chain = (uint8_t)chain;
	f->arm0 = bf->narms;
	f->eff0 = bf->neff;
	f->ndep = f->has_else = f->has_finally = false;
	f->nhandlers = 0;
	memset(&f->rest_doubt, 0, sizeof f->rest_doubt);
	f->rest = flow_on(f->st.fall[LO], f->st.fall[HI]);
	f->rest_tv = f->tv;
	f->st.fall[LO] = f->st.fall[HI] = rs_none();
}

/* The locals f's chain bound, as its arms left them where they join: each
 * depends on the name where one arm leaves it so, where a way past the
 * arms kept what it was before (unless every way runs an arm: every), and
 * everywhere when the chain tells values apart by the name (ndep). */
static void merge_taint(walk *w, frame *f, bool every, bool ndep)
{
	bflow *bf = w->flow;
	size_t narms = bf->narms - f->arm0;
	struct {
		uint32_t off, len, arms, last;
		uint8_t st;
	} *m = NULL;
	size_t nm = 0, cap = 0;

	ap_map_clear(bf->merge);
	for (size_t k = f->eff0; k < bf->neff; k++) {
		const struct eff *e = &bf->eff[k];
		size_t at = ap_map_get(bf->merge, w->s + e->off, e->len);
		if (at == AP_MAP_ABSENT) {
			ap_xgrow((void **)&m, &cap, nm + 1, sizeof *m);
			m[nm].off = e->off;
			m[nm].len = e->len;
			m[nm].arms = 0;
			m[nm].last = UINT32_MAX;
			m[nm].st = 0;
			ap_xok(ap_map_put(bf->merge, w->s + e->off, e->len, nm));
			at = nm++;
		}
		m[at].st |= e->st;
		if (m[at].last != e->arm) {
			m[at].last = e->arm;
			m[at].arms++;
		}
	}
	bf->neff = f->eff0;
	for (size_t k = 0; k < nm; k++) {
		uint8_t st = m[k].st | ndep;
		if (!(every && m[k].arms == narms))
			st |= bc_taint_of(w, m[k].off, m[k].len);
		bc_set_taint(w, m[k].off, m[k].len, st);
	}
	free(m);
}

/* The followed locals of the values m, from src, into dst. */
static void tv_add(const bflow *bf, tvals *dst, const tvals *src, rset m)
{
	for (size_t tr = 0; tr < bf->ntrack; tr++) {
		for (size_t v = 0; v < MAX_TV; v++)
			dst->may[tr][v] = rs_or(dst->may[tr][v], rs_and(src->may[tr][v], m));
		dst->unsure[tr] = rs_or(dst->unsure[tr], rs_and(src->unsure[tr], m));
	}
}

/* The values after a loop's body, by its normal end (fall) or a break
 * (brk); a loop binds no followed local, so a break leaves them as they were. */
static void loop_end(walk *w, frame *f, flow *n, tvals *ntv)
{
	const arm *body = &w->flow->arms[f->arm0];
	rset on = rs_or(rs_or(f->loopc.f, f->loopc.b), rs_or(f->loopc.uf, f->loopc.un));
	flow a = body->res, r;

	for (int s = LO; s <= HI; s++) {
		a.fall[s] = rs_minus(rs_or(body->res.fall[s], body->res.cont[s]), f->loopc.t);
		a.cont[s] = rs_none();
	}
	r = flow_on(rs_and(f->rest.fall[LO], on), rs_and(f->rest.fall[HI], on));
	combine(w, &f->loopc, &a, &body->tv, &r, &f->rest_tv, n, ntv, NULL);
	tv_add(w->flow, ntv, &f->rest_tv, n->brk[HI]);
}

/* The values after a try's body (and else) and its handlers, before finally. */
static void try_end(walk *w, frame *f, flow *m, tvals *mtv, bool *lost)
{
	const bflow *bf = w->flow;
	const arm *body = &bf->arms[f->arm0];
	flow alt = body->res;
	tvals tv = body->tv;

	*lost = false;
	if (f->has_else) {
		const arm *e = &bf->arms[f->arm0 + 1 + f->nhandlers];
		alt.fall[LO] = e->res.fall[LO];
		alt.fall[HI] = e->res.fall[HI];
		for (int k = X_ACC; k <= X_CONT; k++)
			for (int s = LO; s <= HI; s++)
				*comp(&alt, k, s) = rs_or(*comp(&alt, k, s), *ccomp(&e->res, k, s));
		if (alt.why.kind == CA_NONE)
			alt.why = e->res.why;
		tv = e->tv;
	}
	for (size_t h = 0; h < f->nhandlers; h++) {
		const arm *a = &bf->arms[f->arm0 + 1 + h];
		bool l;
		combine(w, &a->c, &a->res, &a->tv, &alt, &tv, &alt, &tv, &l);
		*lost |= l;
	}
	*m = alt;
	*mtv = tv;
}

/* Ends the compound statement in progress at f: its values go on at f. */
static void finish_chain(walk *w, frame *f)
{
	bflow *bf = w->flow;
	flow r;
	tvals rtv;
	bool lost = false, every = false;
	size_t n = bf->narms - f->arm0;
	arm *arms;

	if (f->chain == CH_NONE)
		return;
	if (n == 0 || bf->bad) {
		/* An arm failed to open: nothing more is read. */
		f->chain = CH_NONE;
		bf->narms = f->arm0;
		bf->neff = f->eff0;
		return;
	}
	arms = bf->arms + f->arm0;
	switch (f->chain) {
	case CH_IF:
	case CH_CASE: {
		size_t k = n;
		if (f->has_else) {
			r = arms[--k].res;
			rtv = arms[k].tv;
		} else {
			r = f->rest;
			rtv = f->rest_tv;
		}
		while (k-- > 0)
			combine(w, &arms[k].c, &arms[k].res, &arms[k].tv, &r, &rtv, &r, &rtv,
			        NULL);
		lost = f->ndep;
		every = f->has_else;
		break;
	}
	case CH_LOOP:
		if (f->has_else) {
			const arm *e = &arms[1];
			r = e->res;
			for (int s = LO; s <= HI; s++) {
				r.fall[s] = rs_or(r.fall[s], f->mid.brk[s]);
				r.acc[s] = rs_or(r.acc[s], f->mid.acc[s]);
			}
			rtv = e->tv;
			tv_add(bf, &rtv, &f->mid_tv, f->mid.brk[HI]);
		} else {
			loop_end(w, f, &r, &rtv);
			for (int s = LO; s <= HI; s++) {
				r.fall[s] = rs_or(r.fall[s], r.brk[s]);
				r.brk[s] = rs_none();
			}
		}
		lost = splits(&f->loopc, f->rest.fall[HI]);
		break;
	case CH_TRY:
		if (f->has_finally) {
			const arm *fin = &arms[n - 1];
			r = fin->res;
			for (int k = X_ACC; k <= X_CONT; k++)
				for (int s = LO; s <= HI; s++)
					*comp(&r, k, s) = rs_or(*comp(&r, k, s), *comp(&f->mid, k, s));
			if (r.why.kind == CA_NONE)
				r.why = f->mid.why;
			rtv = fin->tv;
			lost = f->try_lost;
		} else {
			try_end(w, f, &r, &rtv, &lost);
		}
		break;
	case CH_WITH: {
		cls c = bc_cls_one(bf, K_UF, f->with_why);
		combine(w, &c, &arms[0].res, &arms[0].tv, &f->rest, &f->rest_tv, &r, &rtv,
		        &lost);
		break;
	}
	default: /* CH_MATCH, CH_CLASS: the block's own */
		r = arms[0].res;
		rtv = arms[0].tv;
		every = true;
		break;
	}
	merge_taint(w, f, every, lost);
	for (int k = 0; k < 4; k++)
		for (int s = LO; s <= HI; s++)
			*comp(&f->st, k, s) = k == X_FALL ? *comp(&r, k, s)
			                                  : rs_or(*comp(&f->st, k, s), *comp(&r, k, s));
	if (f->st.why.kind == CA_NONE)
		f->st.why = r.why;
	f->tv = rtv;
	f->chain = CH_NONE;
	bf->narms = f->arm0;
}

static void push_frame(walk *w, uint32_t col)
{
	bflow *bf = w->flow;
	frame *f;

	ap_xgrow((void **)&bf->fr, &bf->capfr, bf->nfr + 1, sizeof *bf->fr);
	f = &bf->fr[bf->nfr++];
	if (bf->next_set) {
		*f = bf->next;
	} else {
		/* Indented with no header before it: no values run it. */
		memset(f, 0, sizeof *f);
		f->kind = FK_ORPHAN;
	}
	f->col = col;
	f->chain = CH_NONE;
	f->j0 = bf->njrn;
	bf->next_set = false;
}

static void pop_frame(walk *w)
{
	bflow *bf = w->flow;
	frame *f = top(w), *p;

	finish_chain(w, f);
	bf->nfr--;
	p = top(w);
	/* What the arm left, for where the arms join; then the state before it. */
	for (size_t k = f->j0; k < bf->njrn; k++) {
		const struct jent *j = &bf->jrn[k];
		ap_xgrow((void **)&bf->eff, &bf->capeff, bf->neff + 1, sizeof *bf->eff);
		bf->eff[bf->neff].off = j->off;
		bf->eff[bf->neff].len = j->len;
		bf->eff[bf->neff].arm = (uint32_t)(bf->narms - p->arm0);
		bf->eff[bf->neff++].st = bc_taint_of(w, j->off, j->len);
	}
	while (bf->njrn > f->j0) {
		const struct jent *j = &bf->jrn[--bf->njrn];
		ap_xok(ap_map_put(bf->taint, w->s + j->off, j->len, j->old));
	}
	if (f->kind == FK_SCOPE) {
		if (p->kind == FK_SCOPE)
			p->scope_reads |= f->scope_reads;
		else if (f->scope_reads)
			bc_set_taint(w, f->scope_off, f->scope_len, 1);
		return;
	}
	if (f->kind == FK_ORPHAN || p->chain == CH_NONE || bf->narms == p->arm0)
		return;
	bf->arms[bf->narms - 1].res = f->st;
	bf->arms[bf->narms - 1].tv = f->tv;
}

/* --- Statements ------------------------------------------------------------------ */

/* Whether t can start an operand: nothing of an expression before it. */
static bool before_operand(const walk *w, size_t k)
{
	const btok *t;

	if (k == SIZE_MAX)
		return true;
	t = &w->t[k];
	if (t->kind == T_NAME)
		return t->code != 0 && t->code != KW_TRUE && t->code != KW_FALSE &&
		       t->code != KW_NONE && t->code != KW_AWAIT;
	if (t->kind != T_OP)
		return false;
	return br_opener(t) || br_op(t, ',') || br_op(t, ':') || br_op(t, ';') || br_op(t, '=') ||
	       br_op(t, OP_WALRUS) || br_op(t, '<') || br_op(t, '>') || br_op(t, OP_LE) ||
	       br_op(t, OP_GE) || br_op(t, OP_EQ) || br_op(t, OP_NE) || ap_py_augassign_code(t->code);
}

/* Whether t ends an operand: nothing of an expression after it. */
static bool after_operand(const walk *w, size_t k)
{
	const btok *t;

	if (k >= w->nt)
		return true;
	t = &w->t[k];
	if (t->kind == T_NAME)
		return t->code != 0 && t->code != KW_TRUE && t->code != KW_FALSE && t->code != KW_NONE;
	return br_closer(t) || (!br_opener(t) && before_operand(w, k));
}

static bool is_cmp(const walk *w, size_t k)
{
	size_t len;
	return k < w->nt && bc_cmp_code(w, k, w->nt, &len) != 0;
}

/* Whether the name at k is a whole operand of a comparison: `nhead <= 4`,
 * `4 > (nhead)`, `nhead in x`, not `nhead + 1 <= 4` nor `f(nhead) < 2`. */
static bool compared_name(const walk *w, size_t k)
{
	size_t lp = 0, rp = 0, m, before, after;

	while (k >= lp + 1 && br_op(&w->t[k - lp - 1], '('))
		lp++;
	while (k + rp + 1 < w->nt && br_op(&w->t[k + rp + 1], ')'))
		rp++;
	m = lp < rp ? lp : rp;
	/* f(nhead): the call's parentheses are no grouping. */
	while (m > 0 && k - m >= 1 && !before_operand(w, k - m - 1) && br_op(&w->t[k - m], '('))
		m--;
	before = k >= m + 1 ? k - m - 1 : SIZE_MAX;
	after = k + m + 1;
	if (is_cmp(w, after) && before_operand(w, before))
		return true;
	if (before == SIZE_MAX)
		return false;
	/* `x not in nhead`, `x is not nhead`: the operator's last token. */
	return (is_cmp(w, before) || br_kw(&w->t[before], KW_IN) || br_kw(&w->t[before], KW_NOT)) &&
	       after_operand(w, after);
}

/* The callee of the trailer opening at k, for messages. */
static void callee(const walk *w, size_t k, char *out, size_t cap)
{
	size_t a = k;

	while (a > 0 && (br_ident(&w->t[a - 1]) || br_op(&w->t[a - 1], '.')))
		a--;
	br_tokens_text(w, a, k, out, cap);
}

/* A comparison of the name that goes to a call or a subscript in [a, b) may
 * make it raise: the reader cannot tell, so the bound is unknown. */
static void check_calls(walk *w, size_t a, size_t b)
{
	for (size_t k = a; k < b; k++) {
		char text[64];
		size_t o = k;
		if (!w->t[k].call || !br_reads_name(w, k) || !compared_name(w, k))
			continue;
		while (o > 0 && !(br_opener(&w->t[o]) && w->t[o].depth + 1 == w->t[k].depth))
			o--;
		callee(w, o, text, sizeof text);
		bc_fail(w, "a comparison of %s at line %u goes to `%s(...)`, which may raise on it",
		        w->name, w->t[k].line, text);
		return;
	}
}

/* An expression statement where a comparison of the name decides whether a
 * call runs (`nhead <= 16 or fail()`): what the call does is not known. */
static void check_expression(walk *w, size_t a, size_t b)
{
	size_t call = SIZE_MAX;
	bool cmp = false;

	for (size_t k = a; k < b; k++) {
		const btok *t = &w->t[k];
		if (t->skip)
			continue;
		if (br_op(t, '(') && k > a &&
		    (br_ident(&w->t[k - 1]) || br_closer(&w->t[k - 1])) && call == SIZE_MAX)
			call = k;
		cmp |= br_reads_name(w, k) && compared_name(w, k);
	}
	if (cmp && call != SIZE_MAX) {
		char text[64];
		callee(w, call, text, sizeof text);
		bc_fail(w, "a comparison of %s at line %u decides whether `%s(...)` runs, which may raise",
		        w->name, w->t[a].line, text);
	}
}

/* Pass 2's w->bind: a name bound by the statement being read. */
static void on_target(walk *w, const btok *t, size_t la, size_t lb)
{
	bflow *bf = w->flow;
	frame *f = top(w);
	int tr;

	if (f->in_class || !live(f))
		return; /* a class body binds attributes */
	if (br_is_name(w, t)) {
		if (bf->rhs_aug || bf->rhs_reads == RD_VALUE)
			bc_fail(w, "%s is bound again at line %u from its own value", w->name, t->line);
		else if (!rs_eq(f->st.fall[LO], bf->all) || !rs_eq(f->st.fall[HI], bf->all))
			bc_fail(w, "%s is bound again at line %u, after comparisons of it", w->name, t->line);
		return;
	}
	if ((tr = bc_track_of(w, t)) >= 0) {
		const cand *c = &bf->cands[bf->track_cand[tr]];
		tlit v;
		size_t k = 0;
		if (la != SIZE_MAX && bc_tlit_of(w, la, lb, &v))
			while (k < c->nvals && !bc_tlit_eq(w, &c->vals[k], &v))
				k++;
		for (size_t j = 0; j < MAX_TV; j++)
			f->tv.may[tr][j] = rs_minus(f->tv.may[tr][j], f->st.fall[HI]);
		if (k < c->nvals)
			f->tv.may[tr][k + 1] = rs_or(f->tv.may[tr][k + 1], f->st.fall[HI]);
		f->tv.unsure[tr] = rs_minus(f->tv.unsure[tr], f->st.fall[HI]);
		return;
	}
	bc_set_taint(w, t->off, t->len, bf->rhs_reads == RD_VALUE || (bf->rhs_aug && bc_tainted(w, t)));
}

/* The bindings of [a, b) as br_collect_* finds them, their value reading
 * so; aug: an augmented assignment. */
static void bindings(walk *w, int rd, bool aug)
{
	w->flow->rhs_reads = rd;
	w->flow->rhs_aug = aug;
}

static void apply_assert(walk *w, frame *f, const cls *c)
{
	rset in = rs_or(rs_or(c->t, c->b), rs_or(c->uf, c->un));
	flow a = flow_on(rs_and(f->st.fall[LO], in), rs_and(f->st.fall[HI], in)), r = flow_none(), o;
	tvals tv;

	combine(w, c, &a, &f->tv, &r, &f->tv, &o, &tv, NULL);
	f->st.fall[LO] = o.fall[LO];
	f->st.fall[HI] = o.fall[HI];
	f->tv = tv;
	if (f->st.why.kind == CA_NONE)
		f->st.why = o.why;
}

/* The values at f go to s (acc, brk or cont) and on no further. */
static void leave(frame *f, rset *s)
{
	s[LO] = rs_or(s[LO], f->st.fall[LO]);
	s[HI] = rs_or(s[HI], f->st.fall[HI]);
	f->st.fall[LO] = f->st.fall[HI] = rs_none();
}

static void stmt(walk *w, frame *f, size_t a, size_t b)
{
	const btok *t = &w->t[a];
	cctx cx;
	size_t eq = SIZE_MAX, aug = SIZE_MAX;

	if (a >= b || !live(f))
		return;
	check_calls(w, a, b);
	cx = ctx_of(f, f->st.fall[HI], &f->tv);
	if (br_kw(t, KW_RETURN)) {
		leave(f, f->st.acc);
	} else if (br_kw(t, KW_RAISE)) {
		f->st.fall[LO] = f->st.fall[HI] = rs_none();
	} else if (br_kw(t, KW_BREAK)) {
		leave(f, f->st.brk);
	} else if (br_kw(t, KW_CONTINUE)) {
		leave(f, f->st.cont);
	} else if (br_kw(t, KW_ASSERT)) {
		size_t e = a + 1;
		cls c;
		while (e < b && !(w->t[e].depth == 0 && !w->t[e].skip && br_op(&w->t[e], ',')))
			e++;
		c = bc_cond(w, a + 1, e, &cx);
		apply_assert(w, f, &c);
	} else if (br_kw(t, KW_IMPORT) || br_kw(t, KW_FROM)) {
		bindings(w, RD_NONE, false);
		br_collect_simple(w, a, b);
	} else if (!(br_kw(t, KW_DEL) || br_kw(t, KW_GLOBAL) || br_kw(t, KW_NONLOCAL) ||
	             br_kw(t, KW_PASS))) {
		for (size_t k = a; k < b; k++) {
			const btok *e = &w->t[k];
			if (e->depth != 0 || e->skip || e->kind != T_OP)
				continue;
			if (e->code == '=')
				eq = k;
			else if (ap_py_augassign_code(e->code) && aug == SIZE_MAX)
				aug = k;
		}
		if (aug != SIZE_MAX) {
			bindings(w, bc_reads(w, aug + 1, b, &cx), true);
			br_collect_simple(w, a, b);
		} else if (eq != SIZE_MAX) {
			bindings(w, bc_reads(w, eq + 1, b, &cx), false);
			br_collect_simple(w, a, b);
		} else {
			check_expression(w, a, b);
		}
	}
}

static void simple_stmts(walk *w, size_t a, size_t b)
{
	frame *f = top(w);

	if (f->kind == FK_SCOPE) {
		for (size_t k = a; k < b; k++)
			f->scope_reads |= br_reads_name(w, k);
		return;
	}
	while (a < b && !w->flow->bad) {
		size_t e = br_stmt_end(w, a, b);
		stmt(w, f, a, e);
		a = e + 1;
	}
}

/* --- Compound statements ----------------------------------------------------------- */

static bool continues(const frame *f, int h)
{
	switch (f->chain) {
	case CH_IF:
		return (h == H_ELIF || h == H_ELSE) && !f->has_else;
	case CH_LOOP:
		return h == H_ELSE && !f->has_else;
	case CH_TRY:
		return !f->has_finally &&
		       (h == H_FINALLY || (!f->has_else && (h == H_EXCEPT || h == H_ELSE)));
	case CH_CASE:
		return h == H_CASE;
	default:
		return false;
	}
}

static bool names_import_error(const walk *w, size_t a, size_t b)
{
	for (size_t k = a; k < b; k++)
		if (br_word(w, &w->t[k], "ImportError") || br_word(w, &w->t[k], "ModuleNotFoundError"))
			return true;
	return false;
}

/* The verdict on what reads so (bc_reads): one way per value, per call, or
 * the same on every call, which the reader does not tell. */
static cls undecided(walk *w, int rd, cause why)
{
	return bc_cls_one(w->flow, rd == RD_VALUE ? K_UN : rd == RD_LOCAL ? K_B : K_UF, why);
}

/* The compound statement's header, keyword at a and colon at hc, in f. */
static void header(walk *w, frame *f, int h, size_t a, size_t hc)
{
	bflow *bf = w->flow;
	cls c = bc_cls_one(bf, K_T, (cause){0});
	cctx cx;

	/* An arm with no statement of its own before it (a body the skimmer let
	 * through) opens no block that values run. */
	if ((h == H_ELIF && f->chain != CH_IF) ||
	    ((h == H_EXCEPT || h == H_FINALLY) && f->chain != CH_TRY))
		return;
	if (h != H_DEF && h != H_CLASS && (h == H_ELIF ? !rs_empty(f->rest.fall[HI]) : live(f)))
		check_calls(w, a + 1, hc);
	switch (h) {
	case H_IF:
	case H_ELIF:
		if (h == H_IF)
			start_chain(w, f, CH_IF);
		cx = ctx_of(f, f->rest.fall[HI], &f->rest_tv);
		c = bc_cond(w, a + 1, hc, &cx);
		arm_under(w, f, &c);
		return;
	case H_WHILE:
		start_chain(w, f, CH_LOOP);
		cx = ctx_of(f, f->rest.fall[HI], &f->rest_tv);
		f->loopc = bc_cond(w, a + 1, hc, &cx);
		break;
	case H_FOR: {
		size_t in = a + 1;
		int rd;
		while (in < hc && !(w->t[in].depth == 0 && br_kw(&w->t[in], KW_IN)))
			in++;
		cx = ctx_of(f, f->st.fall[HI], &f->tv);
		rd = in < hc ? bc_reads(w, in + 1, hc, &cx) : RD_VALUE;
		bindings(w, rd, false);
		br_collect_header(w, a, hc);
		start_chain(w, f, CH_LOOP);
		f->loopc = undecided(w, rd, bc_cause_of(w, CA_LOOP, a, hc));
		break;
	}
	case H_ELSE:
		if (f->chain == CH_LOOP) {
			loop_end(w, f, &f->mid, &f->mid_tv);
			f->has_else = true;
			if (push_arm(w, &c) != NULL)
				open_block(w, f, FK_BLOCK, flow_on(f->mid.fall[LO], f->mid.fall[HI]), &f->mid_tv,
				           (cause){0});
			return;
		}
		if (f->chain == CH_TRY) {
			/* It runs where no handler does. */
			const arm *body = &bf->arms[f->arm0];
			flow e = flow_on(body->res.fall[LO], body->res.fall[HI]);
			tvals tv = body->tv;
			cause why = f->nhandlers > 0 ? bf->arms[f->arm0 + 1].c.u : (cause){0};
			f->has_else = true;
			if (push_arm(w, &c) != NULL)
				open_block(w, f, FK_BLOCK, e, &tv, why);
			return;
		}
		if (f->chain == CH_IF) {
			f->has_else = true;
			if (push_arm(w, &c) != NULL)
				open_block(w, f, FK_BLOCK, f->rest, &f->rest_tv, f->rest_doubt);
			f->rest = flow_none();
		}
		return;
	case H_TRY:
		start_chain(w, f, CH_TRY);
		break;
	case H_EXCEPT: {
		cause why = bc_cause_of(w, names_import_error(w, a + 1, hc) ? CA_IMPORT : CA_TRY, a, hc);
		c = bc_cls_one(bf, K_UF, why);
		bindings(w, RD_NONE, false);
		br_collect_header(w, a, hc);
		f->nhandlers++;
		if (push_arm(w, &c) != NULL)
			open_block(w, f, FK_BLOCK, f->rest, &f->rest_tv, why);
		return;
	}
	case H_FINALLY:
		try_end(w, f, &f->mid, &f->mid_tv, &f->try_lost);
		f->has_finally = true;
		if (push_arm(w, &c) != NULL)
			open_block(w, f, FK_BLOCK, flow_on(f->mid.fall[LO], f->mid.fall[HI]), &f->mid_tv,
			           (cause){0});
		return;
	case H_WITH:
		cx = ctx_of(f, f->st.fall[HI], &f->tv);
		bindings(w, bc_reads(w, a + 1, hc, &cx), false);
		br_collect_header(w, a, hc);
		start_chain(w, f, CH_WITH);
		f->with_why = bc_cause_of(w, CA_WITH, a, hc);
		if (push_arm(w, &c) != NULL)
			open_block(w, f, FK_BLOCK, f->rest, &f->rest_tv, f->with_why);
		return;
	case H_DEF:
		bindings(w, RD_NONE, false);
		br_collect_header(w, a, hc);
		open_block(w, f, FK_SCOPE, flow_none(), &f->tv, (cause){0});
		bf->next.scope_off = a + 1 < hc ? w->t[a + 1].off : 0;
		bf->next.scope_len = a + 1 < hc ? w->t[a + 1].len : 0;
		for (size_t k = a + 1; k < hc; k++)
			bf->next.scope_reads |= br_reads_name(w, k);
		return;
	case H_CLASS:
		bindings(w, RD_NONE, false);
		br_collect_header(w, a, hc);
		start_chain(w, f, CH_CLASS);
		if (push_arm(w, &c) != NULL)
			open_block(w, f, FK_CLASS, f->rest, &f->rest_tv, (cause){0});
		bf->next.in_class = true;
		return;
	case H_MATCH: {
		size_t sa = a + 1, sb = hc;
		cx = ctx_of(f, f->st.fall[HI], &f->tv);
		start_chain(w, f, CH_MATCH);
		if (push_arm(w, &c) == NULL)
			return;
		open_block(w, f, FK_MATCH, f->rest, &f->rest_tv, (cause){0});
		bf->next.subj_name = bc_lone(w, &sa, &sb, true);
		if (!bf->next.subj_name) {
			int rd = bc_reads(w, a + 1, hc, &cx);
			int why = rd == RD_VALUE ? CA_VALUE : rd == RD_LOCAL ? CA_CALL : CA_FIXED;
			bf->next.subj = undecided(w, rd, bc_cause_of(w, why, a, hc));
		}
		return;
	}
	case H_CASE: {
		size_t g = a + 1;
		if (f->chain != CH_CASE)
			start_chain(w, f, CH_CASE);
		while (g < hc && !(w->t[g].depth == 0 && !w->t[g].skip && br_kw(&w->t[g], KW_IF)))
			g++;
		cx = ctx_of(f, f->rest.fall[HI], &f->rest_tv);
		c = bc_pattern(w, f, a + 1, g, &cx);
		if (g + 1 < hc) {
			cls gc = bc_cond(w, g + 1, hc, &cx);
			c = bc_cls_and(bf, &c, &gc);
		}
		if (g == a + 2 && br_ident(&w->t[a + 1])) {
			bindings(w, f->subj_name ? RD_VALUE : RD_LOCAL, false);
			on_target(w, &w->t[a + 1], SIZE_MAX, SIZE_MAX);
		}
		arm_under(w, f, &c);
		return;
	}
	default:
		return;
	}
	/* A loop or a try: one arm, entered by the values the header lets in. */
	{
		const cls *lc = h == H_TRY ? &c : &f->loopc;
		rset in = rs_or(rs_or(lc->t, lc->b), rs_or(lc->uf, lc->un));
		if (push_arm(w, lc) != NULL)
			open_block(w, f, FK_BLOCK,
			           flow_on(rs_and(f->rest.fall[LO], in), rs_and(f->rest.fall[HI], in)),
			           &f->rest_tv, doubt_of(lc, f->rest.fall[HI]));
	}
}

/* One logical line in the innermost block. */
static void line_in(walk *w)
{
	bflow *bf = w->flow;
	frame *f = top(w);
	size_t a = 0, hc;
	int h;

	if (br_kw(&w->t[0], KW_ASYNC) && w->nt > 1)
		a = 1;
	h = bc_header_kind(w, f, a);
	if (f->chain != CH_NONE && !continues(f, h))
		finish_chain(w, f);
	if (f->kind == FK_SCOPE || f->kind == FK_ORPHAN) {
		simple_stmts(w, 0, w->nt);
		if (h != H_SIMPLE)
			open_block(w, f, f->kind, flow_none(), &f->tv, (cause){0});
		return;
	}
	if (live(f)) {
		cctx cx = ctx_of(f, f->st.fall[HI], &f->tv);
		bindings(w, bc_reads(w, 0, w->nt, &cx), false);
		br_collect_walrus(w);
	}
	if (h == H_SIMPLE) {
		simple_stmts(w, 0, w->nt);
		return;
	}
	hc = br_header_colon(w, a);
	header(w, f, h, a, hc);
	if (hc + 1 < w->nt && !bf->bad) {
		push_frame(w, UINT32_MAX);
		simple_stmts(w, hc + 1, w->nt);
		pop_frame(w);
	}
}

/* --- Pass 2 ------------------------------------------------------------------- */

static void pass2(walk *w)
{
	bflow *bf = w->flow;
	frame *f;

	w->bind = on_target;
	ap_xgrow((void **)&bf->fr, &bf->capfr, 1, sizeof *bf->fr);
	f = &bf->fr[0];
	memset(f, 0, sizeof *f);
	bf->nfr = 1;
	f->st = flow_on(bf->all, bf->all);
	for (size_t tr = 0; tr < bf->ntrack; tr++)
		f->tv.may[tr][0] = bf->all;
	for (bool first = true; br_next_line(w) && !bf->bad; first = false) {
		if (first)
			f->col = w->col;
		else if (w->col > top(w)->col)
			push_frame(w, w->col);
		while (bf->nfr > 1 && w->col < top(w)->col)
			pop_frame(w);
		line_in(w);
	}
	while (bf->nfr > 1)
		pop_frame(w);
	finish_chain(w, &bf->fr[0]);
}

void ap_py_def_bound(const ap_py_module *m, const ap_py_def *d, const char *name,
                     const char *const *false_names, ap_py_bound *out)
{
	walk w = {0};
	bflow *bf;
	size_t ls = d->body_off;

	memset(out, 0, sizeof *out);
	strcpy(out->value, "0");
	if (d->lambda) {
		out->kind = AP_PY_BOUND_UNKNOWN;
		out->line = d->line;
		snprintf(out->why, sizeof out->why, "it is a lambda (line %u), whose body is not read",
		         d->line);
		return;
	}
	bf = ap_xcalloc(1, sizeof *bf);
	w.m = m;
	w.d = d;
	w.s = m->src;
	w.n = d->body_end;
	w.name = name;
	w.nlen = strlen(name);
	w.false_names = false_names;
	w.flow = bf;
	while (ls > 0 && m->src[ls - 1] != '\n')
		ls--;
	w.first_col = br_indent_col(m->src, &ls, d->body_off);
	w.locals = ap_xnonnull(ap_map_new());
	w.globals = ap_xnonnull(ap_map_new());
	bf->taint = ap_xnonnull(ap_map_new());
	bf->cand_of = ap_xnonnull(ap_map_new());
	bf->merge = ap_xnonnull(ap_map_new());
	for (size_t k = 0; k < d->nparams; k++) {
		ap_xok(ap_map_put_str(w.locals, d->params[k].name, 1));
		/* A parameter holds what the call passes. */
		ap_xok(ap_map_put_str(bf->cand_of, d->params[k].name, 0));
	}
	w.i = d->body_off;
	w.line = d->body_line;
	w.first = true;
	bc_pass1(&w);
	if (bf->generator)
		bc_fail(&w, "a generator: its body runs when it is iterated, not when it is called");
	else if (bf->too_many)
		bc_fail(&w, "it compares %s with more than %d values", name, MAX_LITS);
	if (!bf->bad) {
		bc_after_pass1(&w);
		w.i = d->body_off;
		w.line = d->body_line;
		w.first = true;
		pass2(&w);
	}
	if (bf->bad) {
		out->kind = AP_PY_BOUND_UNKNOWN;
		out->line = d->line;
		snprintf(out->why, sizeof out->why, "%s", bf->why);
	} else {
		bc_answer(&w, out);
	}
	free(w.t);
	free(bf->fr);
	free(bf->arms);
	free(bf->cands);
	free(bf->jrn);
	free(bf->eff);
	ap_map_free(bf->merge);
	ap_map_free(bf->taint);
	ap_map_free(bf->cand_of);
	ap_map_free(w.locals);
	ap_map_free(w.globals);
	free(bf);
}
