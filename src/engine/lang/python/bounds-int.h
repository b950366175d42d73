/* SPDX-License-Identifier: MIT */
#ifndef AP_PY_BOUNDS_INT_H
#define AP_PY_BOUNDS_INT_H

/* Shared by the two halves of ap_py_def_bound: bounds-read.c reads a def's
 * body again, one logical line at a time, with the lexer alone (tokens,
 * other scopes, the names the body binds, integers of any length up to
 * 256 bits, conditions CPython decides before the call); bounds.c follows
 * the blocks as CPython runs them and tells which values of the name a
 * call returns with. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ap-map.h"
#include "engine/lang/python/python-int.h"

/* A token of the logical line being read. */
typedef struct btok {
	uint32_t off, len, line;
	uint8_t kind, code;
	uint8_t depth; /* brackets open around it; an opener or closer counts those outside */
	bool skip;     /* in a lambda's body or a comprehension: another scope */
	bool call;     /* inside the brackets of a call or a subscript */
} btok;

/* --- Integers ---------------------------------------------------------------- */

/* Literals are compared exactly up to 256 bits; one more limb keeps N + 1 in range. */
#define BN_BITS 256
#define BN_LIMBS (BN_BITS / 32 + 1)

typedef struct bnum {
	bool neg; /* never for 0 */
	uint32_t d[BN_LIMBS]; /* the magnitude, least significant limb first */
} bnum;

/* The integer literal s[0, len) (decimal, hex, octal, binary, underscores):
 * 1 and *out when it is below 2^256, 2 when it is not, 0 for any other number. */
int bn_literal(const char *s, size_t len, bnum *out);
int bn_cmp(const bnum *a, const bnum *b);
/* *a += delta (1 or -1). */
void bn_step(bnum *a, int delta);
/* Decimal, with a sign when negative; out holds AP_PY_BOUND_DIGITS bytes. */
void bn_text(const bnum *a, char *out);

/* --- The walk ---------------------------------------------------------------- */

typedef struct bflow bflow;
typedef struct walk walk;

/* Told each bare name a statement binds: [lit_a, lit_b) the literal of a
 * plain `NAME = LITERAL` (one target, one int, str, True, False or None),
 * lit_a SIZE_MAX for any other binding. */
typedef void (*br_bind_fn)(walk *w, const btok *name, size_t lit_a, size_t lit_b);

struct walk {
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

	ap_map *locals;  /* names the body binds, and the parameters (pass 1) */
	ap_map *globals; /* names it declares global or nonlocal */

	br_bind_fn bind; /* pass 1's */
	bflow *flow;     /* bounds.c's state */
};

/* Reads the next logical line into w->t (scopes marked); false at the end of the body. */
bool br_next_line(walk *w);
uint32_t br_indent_col(const char *s, size_t *i, size_t n);

static inline bool br_op(const btok *t, unsigned code)
{
	return t->kind == T_OP && t->code == code;
}

static inline bool br_kw(const btok *t, unsigned code)
{
	return t->kind == T_NAME && t->code == code;
}

static inline bool br_opener(const btok *t)
{
	return br_op(t, '(') || br_op(t, '[') || br_op(t, '{');
}

static inline bool br_closer(const btok *t)
{
	return br_op(t, ')') || br_op(t, ']') || br_op(t, '}');
}

/* A name that is not a keyword. */
static inline bool br_ident(const btok *t)
{
	return t->kind == T_NAME && t->code == 0;
}

bool br_word(const walk *w, const btok *t, const char *word);
/* Whether the name token t is the name asked for, as CPython binds it (NFKC). */
bool br_is_name(const walk *w, const btok *t);
/* Whether t is a read of the name: the name, not an attribute or a keyword argument. */
bool br_reads_name(const walk *w, size_t k);
bool br_is_local(const walk *w, const btok *t);
/* The closer of the opener at a (the line's brackets balance). */
size_t br_closer_of(const walk *w, size_t a);
/* The colon ending a compound statement's header that starts at a, or nt. */
size_t br_header_colon(const walk *w, size_t a);
/* The end of the simple statement starting at a: its `;` or b. */
size_t br_stmt_end(const walk *w, size_t a, size_t b);
/* [a, b) without parentheses around all of it (not a tuple's). */
void br_unwrap(const walk *w, size_t *a, size_t *b);
/* Whether [a, b), an opener to its closer, holds a comma at its own level. */
bool br_has_comma(const walk *w, size_t a, size_t b);
/* The source s[off, end), its spaces squeezed, at most cap - 1 bytes. */
void br_text(const walk *w, size_t off, size_t end, char *out, size_t cap);
/* The same for the tokens [a, b). */
void br_tokens_text(const walk *w, size_t a, size_t b, char *out, size_t cap);

/* The integer [a, b): signs, parentheses and one integer literal; 1 and *v
 * when below 2^256, 2 past, 0 when it is no integer literal. */
int br_int(const walk *w, size_t a, size_t b, bnum *v);

/* What CPython decides of the condition [a, b) that reads no local name
 * before the call: false (False, None, 0, TYPE_CHECKING and
 * typing.TYPE_CHECKING as the module binds them, `__name__ ==
 * "__main__"`, a name in false_names), true (their `not`, True, a number
 * other than 0), or nothing (the same on every call, not known). */
enum bconst { BC_FALSE, BC_TRUE, BC_FIXED };
enum bconst br_const(const walk *w, size_t a, size_t b);

/* Pass 1: the names the statement [a, b) binds, into w->locals, each told
 * w->bind. */
void br_collect_simple(walk *w, size_t a, size_t b);
/* Names bound in a compound statement's header [a, hc): for targets, `as`
 * targets, the def or class name. */
void br_collect_header(walk *w, size_t a, size_t hc);
/* Walrus targets anywhere in the line outside other scopes. */
void br_collect_walrus(walk *w);
/* Calls fn for each bare name the target list [a, b) binds. */
void br_targets(walk *w, size_t a, size_t b, br_bind_fn fn);

/* --- Following the body (bounds.c, bounds-cond.c) ------------------------- */

#define MAX_LITS 127  /* distinct literals: 2 * 127 + 1 regions, 4 words */
#define RS_WORDS 4
#define MAX_TRACK 4   /* locals followed by value */
#define MAX_TV 4      /* their values; the first is "not bound yet" */
#define MAX_ARMS 1024 /* arms of compound statements open at once */

typedef struct rset {
	uint64_t w[RS_WORDS];
} rset;

static inline rset rs_or(rset a, rset b)
{
	for (size_t k = 0; k < RS_WORDS; k++)
		a.w[k] |= b.w[k];
	return a;
}

static inline rset rs_and(rset a, rset b)
{
	for (size_t k = 0; k < RS_WORDS; k++)
		a.w[k] &= b.w[k];
	return a;
}

static inline rset rs_minus(rset a, rset b)
{
	for (size_t k = 0; k < RS_WORDS; k++)
		a.w[k] &= ~b.w[k];
	return a;
}

static inline rset rs_xor(rset a, rset b)
{
	for (size_t k = 0; k < RS_WORDS; k++)
		a.w[k] ^= b.w[k];
	return a;
}

static inline bool rs_empty(rset a)
{
	for (size_t k = 0; k < RS_WORDS; k++)
		if (a.w[k] != 0)
			return false;
	return true;
}

static inline bool rs_eq(rset a, rset b)
{
	return rs_empty(rs_xor(a, b));
}

static inline bool rs_has(rset a, size_t r)
{
	return (a.w[r / 64] >> (r % 64)) & 1;
}

static inline rset rs_none(void)
{
	rset r = {{0}};
	return r;
}

/* Regions lo..hi, both included. */
static inline rset rs_range(size_t lo, size_t hi)
{
	rset r = rs_none();
	for (size_t k = lo; k <= hi; k++)
		r.w[k / 64] |= 1ULL << (k % 64);
	return r;
}

/* Why values may take a way the reader cannot tell. */
enum { CA_NONE, CA_FIXED, CA_IMPORT, CA_VALUE, CA_CALL, CA_LOOP, CA_TRY, CA_WITH, CA_BIG };

typedef struct cause {
	uint8_t kind;
	uint32_t off, end; /* its source */
	unsigned line;
} cause;

/* A condition's verdict on each region: true, false, either way from call to
 * call (b), one way the reader cannot tell and the same on every call (uf),
 * one way per value the reader cannot tell (un). A partition. */
typedef struct cls {
	rset t, f, b, uf, un;
	cause u, bc; /* the first uf or un part's, the first b part's */
} cls;

enum { LO, HI };

/* Where the values at a point of a block go: on, returned, out of the loop
 * by break or continue; rejected values are in none. */
typedef struct flow {
	rset fall[2], acc[2], brk[2], cont[2];
	cause why; /* the first way lo lost values hi kept */
} flow;

/* For each followed local, the regions where it may hold each of its values. */
typedef struct tvals {
	rset may[MAX_TRACK][MAX_TV];
	rset unsure[MAX_TRACK]; /* regions where which one depends on what the reader cannot tell */
} tvals;

/* A literal a followed local is compared with or bound to. */
enum { TL_STR, TL_INT, TL_TRUE, TL_FALSE, TL_NONE };

typedef struct tlit {
	uint8_t kind;
	uint32_t off, len; /* TL_STR: its characters */
	bnum n;            /* TL_INT */
} tlit;

typedef struct cand {
	uint32_t off, len;
	bool ok;
	size_t nvals;
	tlit vals[MAX_TV - 1];
	int track;
} cand;

/* An arm of a compound statement: its condition, and once read, where
 * the values that entered it went. */
typedef struct arm {
	cls c;
	flow res;
	tvals tv;
} arm;

enum { FK_BLOCK, FK_CLASS, FK_SCOPE, FK_MATCH, FK_ORPHAN };
enum { CH_NONE, CH_IF, CH_LOOP, CH_TRY, CH_WITH, CH_MATCH, CH_CASE, CH_CLASS };

typedef struct frame {
	uint32_t col;
	uint8_t kind;
	flow st;
	tvals tv;
	cause doubt; /* why values may run this block only in some worlds (kind CA_NONE: not so) */
	uint32_t scope_off, scope_len; /* FK_SCOPE: the def's name */
	bool scope_reads;              /* FK_SCOPE: its body reads the name */
	bool in_class;                 /* in a class body: bindings are its attributes */
	bool subj_name;                /* FK_MATCH: the subject is the name */
	cls subj;                      /* FK_MATCH otherwise: a refutable pattern's verdict */
	/* the compound statement in progress at this level */
	uint8_t chain;
	bool ndep, has_else, has_finally, try_lost;
	size_t arm0, eff0, j0, nhandlers; /* j0: the journal when the block began */
	flow rest;    /* IF, CASE: the values no arm took yet; others: the entry */
	tvals rest_tv;
	flow mid;     /* LOOP: after the body, for its else; TRY: before finally */
	tvals mid_tv;
	cls loopc;
	cause with_why;
	cause rest_doubt; /* IF, CASE: why the values no arm took yet may be others */
} frame;

typedef struct seen {
	unsigned line;
	uint32_t off, end;
} seen;

struct bflow {
	bnum lits[MAX_LITS];
	size_t nlits;
	bool too_many;
	seen first[MAX_LITS], doubted[MAX_LITS];
	size_t nreg;
	rset all, single;

	cand *cands;
	size_t ncands, capc;
	ap_map *cand_of; /* name -> index + 1; 0 for a parameter */
	size_t ntrack, track_cand[MAX_TRACK];
	bool generator, pass1;
	uint8_t p1_flags;

	/* Locals whose value depends on the name's (1) or not (0): changes
	 * are journaled, undone when an arm ends, and what each arm left
	 * (effects) is merged where the arms join. */
	ap_map *taint;
	struct jent {
		uint32_t off, len;
		uint8_t old;
	} *jrn;
	struct eff {
		uint32_t off, len, arm;
		uint8_t st;
	} *eff;
	size_t njrn, capjrn, neff, capeff;
	ap_map *merge; /* finish_chain's, cleared each time */

	frame *fr;
	size_t nfr, capfr;
	arm *arms;
	size_t narms, caparms;
	bool next_set;
	frame next; /* the block a header opens */

	/* the assignment being read, for on_target */
	int rhs_reads;
	bool rhs_aug;

	bool bad;
	char why[384];
};

/* The parts of a verdict, for bc_cls_one. */
enum { K_T, K_F, K_B, K_UF, K_UN };

/* What an expression reads (bc_reads): neither the name nor other locals,
 * other locals only, or the name (or a local depending on it). */
enum { RD_NONE, RD_LOCAL, RD_VALUE };

/* A flow's parts, in order. */
enum { X_FALL, X_ACC, X_BRK, X_CONT };

/* What a logical line starts (bc_header_kind). */
enum {
	H_SIMPLE, H_IF, H_ELIF, H_ELSE, H_WHILE, H_FOR, H_TRY, H_EXCEPT, H_FINALLY, H_WITH, H_DEF,
	H_CLASS, H_MATCH, H_CASE
};

/* The state a condition is read in: the values live there, and the followed locals. */
typedef struct cctx {
	rset live;
	const tvals *tv;
	bool doubt; /* read only in some worlds */
} cctx;

/* --- bounds-cond.c ---------------------------------------------------------- */

/* The bound is unknown, for why (the first reason given stays). */
void bc_fail(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
cause bc_cause_of(const walk *w, int kind, size_t a, size_t b);
/* Whether the local at [off, off + len) depends on the name's value; set_taint
 * journals the change for the arm that makes it. */
uint8_t bc_taint_of(const walk *w, uint32_t off, uint32_t len);
bool bc_tainted(const walk *w, const btok *t);
void bc_set_taint(walk *w, uint32_t off, uint32_t len, uint8_t st);
/* The followed local t is, or -1. */
int bc_track_of(const walk *w, const btok *t);
/* A literal a followed local may hold: a str without prefix or escapes, an
 * int, True, False, None; == as CPython compares them (True == 1). */
bool bc_tlit_of(const walk *w, size_t a, size_t b, tlit *out);
bool bc_tlit_eq(const walk *w, const tlit *x, const tlit *y);
/* The verdict k on every region; x AND y. */
cls bc_cls_one(const bflow *bf, int k, cause why);
cls bc_cls_and(const bflow *bf, const cls *x, const cls *y);
/* The verdict of the condition [a, b) on each region (pass 1: notes its literals). */
cls bc_cond(walk *w, size_t a, size_t b, const cctx *cx);
/* Whether [a, b) (*a, *b unwrapped) is the name alone (name) or a followed local. */
bool bc_lone(const walk *w, size_t *a, size_t *b, bool name);
int bc_reads(const walk *w, size_t a, size_t b, const cctx *cx);
/* The comparison operator at k (`not in`, `is not`: *len 2), or 0. */
unsigned bc_cmp_code(const walk *w, size_t k, size_t b, size_t *len);
/* Pass 1 over the body: locals, literals, the locals holding literals; then
 * what pass 2 follows. */
void bc_pass1(walk *w);
void bc_after_pass1(walk *w);
/* The bound, from where pass 2 sent the values. */
void bc_answer(walk *w, ap_py_bound *out);
int bc_header_kind(const walk *w, const frame *f, size_t a);
/* The verdict of a case pattern [a, b) of the match block f. */
cls bc_pattern(walk *w, const frame *f, size_t a, size_t b, const cctx *cx);

#endif
