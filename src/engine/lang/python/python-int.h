/* SPDX-License-Identifier: MIT */
/* What the parts of the Python reader share; python.h is its interface.
 *
 * The reader is a streaming tokenizer (INDENT/DEDENT as in CPython's) under
 * a statement reader that descends only into module-level compound statements
 * and class bodies: every level of its recursion consumed an INDENT, so it
 * recurses at most AP_PY_MAX_DEPTH deep. Function bodies are skimmed (skim:
 * most of their tokens are passed over, as the tokenizer would read them, and
 * never made current), and read again from the source when a bound is asked
 * for; so are the parts of parameters past their names (ap_py_params_tail). A
 * failure is sticky: the tokenizer hands out only T_END afterwards, so every
 * loop of the reader ends without checking for errors on its own.
 *
 * The reader works on the module's copy of the source, which SRC_PAD NULs
 * follow: the fast scans stop at the first without a bound check, and read
 * ahead into them, never into the caller's bytes. The strings and parameter
 * arrays of a module live in one arena (struct module).
 *
 * lex.c reads one token from bytes, tokens.c makes the token stream (lines,
 * indentation, brackets, errors), skim.c passes over function bodies and the
 * tails of parameters, cond.c tells the value of a condition on import,
 * module.c reads the statements into the module, assign.c what an assignment
 * binds (a name, a lambda, a functools.partial) and all.c what statements do
 * to __all__, bind.c records the bindings and defs they make and reads the
 * import statements, bounds.c reads a def's body again for ap_py_def_bound;
 * arena.c holds the module's memory. Each calls only those named before it
 * in lex.c, arena.c, tokens.c, skim.c, cond.c, all.c, bind.c, assign.c,
 * module.c; bounds.c calls lex.c and tokens.c. */
#ifndef AP_PYTHON_INT_H
#define AP_PYTHON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/lang/python/python.h"

/* --- Tokens (lex.c) ------------------------------------------------------- */

/* T_CUT stands for tokens a statement did not keep (see PART_KEEP). */
enum { T_END, T_NEWLINE, T_INDENT, T_DEDENT, T_NAME, T_NUMBER, T_STRING, T_OP, T_CUT };

/* Offsets fit 32 bits since ap_py_parse turns away inputs of 4 GiB. */
typedef struct tok {
	uint32_t off;
	uint32_t len;
	uint32_t line;
	uint8_t kind;
	uint8_t code;  /* T_OP: the operator's code; T_NAME: the keyword's, 0 for others */
	uint8_t depth; /* brackets open around it; an opener or closer counts those outside */
	/* T_STRING: a str constant (no b or f prefix); T_NAME: ASCII (one that
	 * is not is read through ap_py_name, as CPython reads it) */
	bool plain;
} tok;

/* The bytes CPython's tokenizer takes into a name: ASCII letters, digits
 * and '_' (ID_ASCII), and every byte from 0x80 on (ID_OTHER), which makes
 * a name to check and normalize. The fast paths read ASCII names with
 * ID_ASCII alone and leave the others to lex_next. */
enum { ID_ASCII = 1, ID_OTHER = 2 };
extern const uint8_t ap_py_ident_chars[256];

/* What the tokenizer does with a byte: C_OP (0) is an operator or any other
 * byte alone. */
enum { C_OP, C_SPACE, C_NL, C_HASH, C_BSLASH, C_NAME, C_DIGIT, C_QUOTE, C_DOT };

extern const uint8_t ap_py_byte_class[256];

static inline bool ap_py_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

unsigned ap_py_count_lines(const char *s, size_t len);

/* Operators of more than one byte have codes from 128 on; one of one byte
 * is coded by the byte itself. */
enum {
	OP_POW_ASSIGN = 128, OP_FLOORDIV_ASSIGN, OP_RSHIFT_ASSIGN, OP_LSHIFT_ASSIGN, OP_ELLIPSIS,
	OP_POW, OP_FLOORDIV, OP_EQ, OP_NE, OP_LE, OP_GE, OP_LSHIFT, OP_RSHIFT, OP_ARROW, OP_WALRUS,
	OP_ADD_ASSIGN, OP_SUB_ASSIGN, OP_MUL_ASSIGN, OP_DIV_ASSIGN, OP_MOD_ASSIGN, OP_AND_ASSIGN,
	OP_OR_ASSIGN, OP_XOR_ASSIGN, OP_MATMUL_ASSIGN, OP_END
};

static inline bool ap_py_augassign_code(unsigned code)
{
	return code <= OP_LSHIFT_ASSIGN ? code >= OP_POW_ASSIGN : code >= OP_ADD_ASSIGN;
}

/* Longest match; *code the operator's code. */
size_t ap_py_lex_punct(const char *s, size_t i, size_t n, uint8_t *code);
size_t ap_py_lex_number(const char *s, size_t i, size_t n);

enum {
	KW_FALSE = 1, KW_NONE, KW_TRUE, KW_AND, KW_AS, KW_ASSERT, KW_ASYNC, KW_AWAIT, KW_BREAK,
	KW_CLASS, KW_CONTINUE, KW_DEF, KW_DEL, KW_ELIF, KW_ELSE, KW_EXCEPT, KW_FINALLY, KW_FOR,
	KW_FROM, KW_GLOBAL, KW_IF, KW_IMPORT, KW_IN, KW_IS, KW_LAMBDA, KW_NONLOCAL, KW_NOT, KW_OR,
	KW_PASS, KW_RAISE, KW_RETURN, KW_TRY, KW_WHILE, KW_WITH, KW_YIELD, KW_END
};

/* The keyword code of the name s[0, len), 0 for other names. */
uint8_t ap_py_keyword(const char *s, size_t len);

/* How a string literal ends: *bad says it did not. */
enum { STR_OK, STR_UNTERMINATED, STR_UNTERMINATED_TRIPLE, STR_TOO_DEEP };

/* A string without replacement fields, from its opening quote. */
size_t ap_py_lex_string(const char *s, size_t i, size_t n, int *bad);

enum { PFX_STRING = 1, PFX_RAW = 2, PFX_BYTES = 4, PFX_F = 8 };

/* Whether s[a, b) is a string prefix: r, u, b, f, rb, br, fr, rf in any case;
 * PFX_STRING and what the prefix says, or 0. */
unsigned ap_py_string_prefix(const char *s, size_t a, size_t b);

/* An f-string from its opening quote. */
size_t ap_py_lex_fstring(const char *s, size_t i, size_t n, bool raw, int *bad);

/* Why CPython turns the name s[0, len) away, its bytes not all ASCII: not
 * UTF-8, or a character that may not start or continue an identifier (PEP
 * 3131); CPython's message, in buf. NULL for an identifier. */
const char *ap_py_name_error(const char *s, size_t len, char *buf, size_t size);

/* The identifier s[0, len) as CPython binds it (NFKC-normalised) into out,
 * NUL-terminated; bytes that are not UTF-8 are copied as they are. */
void ap_py_name_nfkc(const char *s, size_t len, ap_buf *out);

/* End of the token at s[i] (not whitespace); *kind its kind, *plain whether a
 * string is a str or a name ASCII, *bad as the string readers'. Inlined: the tokenizer, the
 * skimmer and the bounds each read tokens with it in their inner loops. */
static inline __attribute__((always_inline)) size_t
ap_py_lex_token(const char *s, size_t i, size_t n, uint8_t *kind, uint8_t *code, bool *plain,
                int *bad)
{
	char c = s[i];

	*bad = STR_OK;
	*plain = true;
	*code = 0;
	switch (ap_py_byte_class[(unsigned char)c]) {
	case C_NAME: {
		size_t j = i + 1;
		unsigned pfx;
		while (j < n && ap_py_ident_chars[(unsigned char)s[j]] == ID_ASCII)
			j++;
		if ((unsigned char)c >= 0x80 || (j < n && (unsigned char)s[j] >= 0x80)) {
			*plain = false;
			while (j < n && ap_py_ident_chars[(unsigned char)s[j]])
				j++;
		}
		/* Prefixes are at most two bytes. */
		if (j - i <= 2 && j < n && (s[j] == '"' || s[j] == '\'') &&
		    (pfx = ap_py_string_prefix(s, i, j)) != 0) {
			*kind = T_STRING;
			*plain = !(pfx & (PFX_BYTES | PFX_F));
			if (pfx & PFX_F)
				return ap_py_lex_fstring(s, j, n, (pfx & PFX_RAW) != 0, bad);
			return ap_py_lex_string(s, j, n, bad);
		}
		*kind = T_NAME;
		/* Keywords are ASCII: CPython matches them before normalizing, so
		 * a fullwidth `ｄｅｆ` is the name `def`. */
		*code = ap_py_keyword(s + i, j - i);
		return j;
	}
	case C_DOT:
		if (!(i + 1 < n && ap_py_is_digit(s[i + 1])))
			break;
		/* fallthrough */
	case C_DIGIT:
		*kind = T_NUMBER;
		return ap_py_lex_number(s, i, n);
	case C_QUOTE:
		*kind = T_STRING;
		return ap_py_lex_string(s, i, n, bad);
	default:
		break;
	}
	*kind = T_OP;
	return ap_py_lex_punct(s, i, n, code);
}

/* --- Memory (arena.c) ----------------------------------------------------- */

struct chunk;

/* The module with what ap_py_module_free needs beyond it. */
struct module {
	ap_py_module pub;
	struct chunk *arena;
	size_t arena_bytes; /* its chunks' sizes */
};

void *ap_py_arena_alloc(struct module *mod, size_t size);
char *ap_py_arena_strndup(struct module *mod, const char *s, size_t len);
/* Frees the arena's chunks, and with them every string and parameter array. */
void ap_py_arena_free(struct module *mod);

/* --- Tokenizer (tokens.c) ------------------------------------------------- */

struct parser {
	const char *s;
	size_t n;
	size_t pos;
	unsigned line;
	bool at_bol;          /* at the start of a logical line: indentation comes next */
	bool line_has_tokens; /* since the last NEWLINE */
	bool dead;            /* a failure was reported */
	unsigned dedents;     /* DEDENT tokens still to hand out */
	uint32_t indent[AP_PY_MAX_DEPTH + 1];
	/* each level's column with a tab as one space: CPython's check that
	 * tabs and spaces agree */
	uint32_t altindent[AP_PY_MAX_DEPTH + 1];
	size_t nindent;
	char bracket[AP_PY_MAX_DEPTH];
	unsigned bracket_line[AP_PY_MAX_DEPTH];
	size_t nbracket;

	tok t; /* the current token */
	ap_py_module *m;
	struct module *mod; /* m's arena */
	ap_buf scratch;     /* a string being put together */
	ap_py_param *pv;    /* the parameters of the def being read */
	size_t pcap;
	const char *const *false_names;
	const ap_py_options *opt; /* NULL: none given */
	int err;
	/* the tokens of the statement or header being read */
	tok *sv;
	size_t sn;
	size_t scap;
	size_t defs_cap, bindings_cap, members_cap, all_cap, all_refs_cap, strings_cap;
	/* For each binding, the ones of the same name before and after it
	 * (SIZE_MAX: none), and each module-level name's last binding: what a statement that may
	 * run one of several ways finds its names held before it. */
	size_t *prev_same, *next_same;
	struct ap_map *last_of;
	/* the first SUBMODULE binding of each name, so that one is recorded */
	struct ap_map *submodules;
	/* each member's last binding, by the class's line and the name (key) */
	struct ap_map *member_of;
	ap_buf key;
	size_t nstars; /* module-level star imports so far */
	/* the walrus bindings of the statement being collected: the binding and
	 * the index of its `:=` in sv, so that its value is read once it is */
	struct walrus {
		size_t binding, at;
	} *walrus;
	size_t nwalrus, walrus_cap;
	/* whether `functools` (0) and `partial` (1) were bound only as `import
	 * functools` and `from functools import partial` up to a binding */
	struct only_as {
		size_t upto;
		bool other;
	} functools_as[2];
	/* the decorators of the def or class that follows that may change what
	 * it binds, as written, from the top */
	ap_py_decorator *decorators;
	size_t ndecorators, decorators_cap;
	/* the first that wraps what it is given (lru_cache): a class's decorator */
	const char *wrapping;
	ap_py_method_kind method; /* in a class body: the builtin outermost on it */
	/* the `match` statement whose block is being read: its cases are its arms */
	struct arms *match_arms;
	/* statements that may run more than one way around the one being read */
	unsigned arms_depth;
	/* `break` and `continue` statements read so far: whether a loop's body
	 * holds one */
	unsigned breaks, continues;
	/* per def, the names its body declares `global`, once asked */
	struct globals {
		bool read;
		char **names;
		size_t n;
	} *globals;
	size_t nglobals;
	enum { ALL_NONE, ALL_KNOWN, ALL_UNKNOWN } all_state;
	/* what __all__ holds while ALL_KNOWN: list, tuple, set, or another module's (any) */
	enum { ALLT_LIST, ALLT_TUPLE, ALLT_SET, ALLT_ANY } all_type;
	/* __all__'s names and refs before the statement being read */
	size_t all_base, all_rbase;
};

/* What the statements of a try body read so far show of how it ends. */
enum try_outcome {
	TRY_RUNS,    /* to its end: every import was found, nothing else may raise */
	TRY_FAILS,   /* with ModuleNotFoundError, at an import not found */
	TRY_UNKNOWN, /* a statement may raise, or an import may not be found */
};

/* Where a statement is read. */
struct ctx {
	const char *prefix; /* NULL at module level; "Cls." in a class body */
	unsigned class_line; /* in a class body: the line of the class's name */
	bool live;          /* the arm is taken on a default import, or may be */
	/* the arm may not run (a condition not known, a loop, a handler): a
	 * method it defines may not exist */
	bool maybe;
	/* the module-level try whose body this is, at the body's own level
	 * (not in blocks nested in it); NULL elsewhere */
	enum try_outcome *trying;
	/* with trying: the try itself may not run */
	bool try_maybe;
};

/* Statements that may run more than one way (if, for, while, try, with,
 * match) nest this deep before what they bind is unknown outright: judging
 * the ways of each costs time in what it holds, so deeper nesting would make
 * a file's reading quadratic. */
#define AP_PY_MAX_WAYS_DEPTH 16
#define AP_PY_STR_(x) #x
#define AP_PY_STR(x) AP_PY_STR_(x)

/* NULs after the module's copy of the source: mid_next reads up to 63
 * bytes past one that is not in mid_stops, and the first NUL is; tail_scan
 * up to 20 past one that is not in tail_stops. */
#define SRC_PAD 64

/* Reports the first failure (with its line) and makes the tokenizer hand out
 * only T_END; later failures are not reported. */
void ap_py_fail(struct parser *p, int code, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Skips blank and comment-only lines and measures the indentation of the
 * next one as CPython does: a tab advances to the next multiple of 8, a form
 * feed goes back to column 0, and a level must be the same with a tab
 * counted as one space (else the TabError); true when that made an INDENT or
 * DEDENT in *t. */
bool ap_py_indentation(struct parser *p, tok *t);

/* The next token into p->t; a string token is recorded in the module's
 * strings. */
void ap_py_advance(struct parser *p);

/* The name token t as CPython binds it: its bytes when ASCII, else their
 * NFKC form, put in *buf (a buffer the caller frees); *len its length. */
const char *ap_py_name(const struct parser *p, const tok *t, ap_buf *buf, size_t *len);

/* The bytes of a (terminated) string token between its quotes. */
const char *ap_py_string_body(const struct parser *p, const tok *t, size_t *len);

/* Whether t is a str literal without escapes (a backslash is one CPython
 * decodes, or, raw, one no name holds): its value is its body, *s. */
static inline bool ap_py_plain_str(const struct parser *p, const tok *t, const char **s,
                                   size_t *len)
{
	if (t->kind != T_STRING || !t->plain)
		return false;
	*s = ap_py_string_body(p, t, len);
	return memchr(*s, '\\', *len) == NULL;
}
void ap_py_record_string(struct parser *p, const tok *t);
/* Where the strings of a statement starting at the current token begin. */
size_t ap_py_string_mark(const struct parser *p);
/* Drops the strings from mark on: they made a docstring. */
void ap_py_drop_strings(struct parser *p, size_t mark);

static inline bool ap_py_is_op(const tok *t, unsigned code)
{
	return t->kind == T_OP && t->code == code;
}

static inline bool ap_py_is_kw(const tok *t, unsigned code)
{
	return t->kind == T_NAME && t->code == code;
}

/* Whether a statement's tokens so far may make a docstring: CPython's is the
 * first statement of a module, class or def when that is an expression of a
 * str constant, so str literals (implicitly concatenated or not) in any
 * number of parentheses: `("doc")` is one, `("doc",)` a tuple, `"a" ("b")`
 * a call. */
struct ap_py_doc {
	unsigned open;  /* '(' before the first string */
	unsigned shut;  /* ')' after the last */
	bool strings;   /* a string seen */
};

/* Takes t (not the statement's end) into d; false when the statement is no
 * docstring, and d then as it was. */
static inline bool ap_py_doc_step(struct ap_py_doc *d, const tok *t)
{
	if (!d->strings && ap_py_is_op(t, '('))
		d->open++;
	else if (d->shut == 0 && t->kind == T_STRING && t->plain)
		d->strings = true;
	else if (d->strings && d->shut < d->open && ap_py_is_op(t, ')'))
		d->shut++;
	else
		return false;
	return true;
}

/* Whether the statement, ended after the tokens d took, is a docstring. */
static inline bool ap_py_doc_is(const struct ap_py_doc *d)
{
	return d->strings && d->shut == d->open;
}

/* Whether the name token t, not ASCII, is w as CPython binds it (NFKC). */
bool ap_py_name_is(const struct parser *p, const tok *t, const char *w);

/* The statement's token t spelt exactly w (a name as CPython binds it). */
static inline bool ap_py_spelt(const struct parser *p, const tok *t, const char *w)
{
	if (t->kind == T_NAME && !t->plain)
		return ap_py_name_is(p, t, w);
	return t->len == strlen(w) && memcmp(p->s + t->off, w, t->len) == 0;
}

static inline bool ap_py_is_word(const struct parser *p, const tok *t, const char *w)
{
	return t->kind == T_NAME && ap_py_spelt(p, t, w);
}

/* The number literal spelt exactly w (`0`, not `00` or `0.0`). */
static inline bool ap_py_is_number(const struct parser *p, const tok *t, const char *w)
{
	return t->kind == T_NUMBER && ap_py_spelt(p, t, w);
}

/* The index of the closer of the opener at sv[i], or (size_t)-1 before b. */
static inline size_t ap_py_closer(const struct parser *p, size_t i, size_t b)
{
	for (size_t k = i + 1; k < b; k++)
		if (p->sv[k].depth <= p->sv[i].depth)
			return k;
	return (size_t)-1;
}

/* Whether sv[a, b) is wrapped in one pair of parentheses. */
static inline bool ap_py_parenthesised(const struct parser *p, size_t a, size_t b)
{
	return b - a >= 3 && ap_py_is_op(&p->sv[a], '(') && ap_py_closer(p, a, b) == b - 1;
}

/* A name that an assignment can bind. */
static inline bool ap_py_is_ident(const tok *t)
{
	return t->kind == T_NAME && t->code == 0;
}

/* Whether t is an augmented assignment's operator (`+=` ...). */
static inline bool ap_py_is_augassign(const tok *t)
{
	return t->kind == T_OP && ap_py_augassign_code(t->code);
}

/* The scratch string into the arena; scratch emptied (arena.c). */
char *ap_py_scratch_str(struct parser *p);

/* Whether sv[a, b) lost tokens to the statement reader's limit on a part. */
static inline bool ap_py_cut(const struct parser *p, size_t a, size_t b)
{
	for (size_t i = a; i < b; i++)
		if (p->sv[i].kind == T_CUT)
			return true;
	return false;
}

/* --- Bindings and defs (bind.c) ------------------------------------------ */

/* The name token t as CPython binds it, in the arena. */
char *ap_py_tok_str(const struct parser *p, const tok *t);
/* Appends the name token t to the scratch string. */
void ap_py_scratch_name(struct parser *p, const tok *t);
/* Appends a binding of name (NULL for STAR) at line: a module-level one, or
 * in a class body a member. */
ap_py_binding *ap_py_bind(struct parser *p, const struct ctx *c, ap_py_bind_kind kind,
                          char *name, unsigned line);
/* The same, of the name token name. */
ap_py_binding *ap_py_add_binding(struct parser *p, const struct ctx *c, ap_py_bind_kind kind,
                                 const tok *name);
/* The bindings a binding of c goes to (module or members), and their number. */
static inline ap_py_binding *ap_py_bindings(const struct parser *p, const struct ctx *c,
                                            size_t *n)
{
	*n = c->prefix == NULL ? p->m->nbindings : p->m->nmembers;
	return c->prefix == NULL ? p->m->bindings : p->m->members;
}
/* The member of c's class that binds name[0, len) last, or NULL. */
const ap_py_binding *ap_py_member(struct parser *p, const struct ctx *c, const char *name,
                                  size_t len);
/* The prefix of c, the name token name and then tail, in the arena. */
char *ap_py_qualname(struct parser *p, const struct ctx *c, const tok *name, const char *tail);
/* A new def of the name token name in c, at line; its index. */
size_t ap_py_def_new(struct parser *p, const struct ctx *c, const tok *name, unsigned line);
/* The np parameters read into p->pv become defs[di]'s. */
void ap_py_def_params(struct parser *p, size_t di, size_t np);
/* Room for one more parameter in p->pv past np; the new one. */
ap_py_param *ap_py_param_new(struct parser *p, size_t np);

/* --- Import statements (bind.c), on the statement in sv ------------------ */

/* `import ...` and `from ... import ...`, the statement in sv. */
void ap_py_import_stmt(struct parser *p, const struct ctx *c);
void ap_py_from_stmt(struct parser *p, const struct ctx *c);
/* Whether the statement in sv cannot raise: pass, a str, or names bound to
 * one constant (`HAVE_X = True`). */
bool ap_py_cannot_raise(const struct parser *p);

/* --- Assignments (assign.c), on the statement in sv ----------------------- */

/* Binds the names of the target list sv[a, b), whose top level has depth d,
 * as kind: names, starred names and bracketed target lists; attributes and
 * subscripts bind no name. Nothing when the list lost tokens. */
void ap_py_bind_names(struct parser *p, const struct ctx *c, size_t a, size_t b, unsigned d,
                      ap_py_bind_kind kind);
/* An assignment statement (plain, annotated, augmented) or an expression:
 * what it binds, and what it does to __all__. */
void ap_py_assign_stmt(struct parser *p, const struct ctx *c);
/* The values of the walrus bindings of the statement collected (p->walrus):
 * a lambda, a name or a partial bind as they do in an assignment. */
void ap_py_walrus_values(struct parser *p, const struct ctx *c);

/* --- __all__ (all.c), on the statement in sv; maybe: it is in a block that
 * may not run on import, so what it does to __all__ is not known. --------- */

/* __all__ = sv[a, b), at depth d (add: `+=`, or extend). */
void ap_py_all_assign(struct parser *p, bool maybe, size_t a, size_t b, unsigned d, bool add);
/* `from M import __all__`: M's, whatever it is. */
void ap_py_all_imported(struct parser *p, bool maybe, const ap_py_binding *b);
/* del __all__, del __all__[i], del __all__[i:j] */
void ap_py_all_del(struct parser *p, bool maybe);
/* __all__.extend(...), .append(...) and the other list methods */
void ap_py_all_method(struct parser *p, bool maybe);
/* __all__ given what the reader cannot evaluate */
void ap_py_all_unreadable(struct parser *p, unsigned line, bool maybe);

/* --- Skimmer (skim.c) ----------------------------------------------------- */

/* Moves p->pos over the tail of a parameter's segment, in a parameter list
 * whose '(' has depth depth; true when it read the segment's ','. */
bool ap_py_params_tail(struct parser *p, unsigned depth, bool has_name, bool *has_default);

/* The names the body of defs[di] declares `global` (in it or in a def
 * nested in it, NFKC-normalised), read once per def. */
const struct globals *ap_py_def_globals(struct parser *p, size_t di);

/* Skips a def's body (from the current token, after the header's ':'),
 * recording where it lies in defs[di] and dropping the docstrings of the def
 * and of the defs and classes in it. */
void ap_py_skip_body(struct parser *p, size_t di);

/* --- Conditions (cond.c) ------------------------------------------------- */

enum cond { COND_UNKNOWN, COND_FALSE, COND_TRUE };

/* The value on import of the expression sv[a, b) taken as a condition,
 * with the module's bindings so far and the target interpreter's facts
 * (asked of p->opt only when the expression needs one). */
enum cond ap_py_condition(const struct parser *p, size_t a, size_t b);

/* Whether the except handler whose header (after `except`) is sv[a, b)
 * catches the ModuleNotFoundError of an import not found: a bare except, or
 * builtins ImportError, ModuleNotFoundError, Exception or BaseException,
 * alone or in a tuple of builtins (COND_TRUE); builtins that are none of
 * these (COND_FALSE); anything else, `except*` included, is unknown. */
enum cond ap_py_catches_import(const struct parser *p, size_t a, size_t b);

/* Whether the items of a with statement, sv[a, b), call a `suppress`
 * (`X.suppress(...)`, `suppress(...)`); then *catches says whether it
 * suppresses the ModuleNotFoundError of an import not found: for the one
 * item of contextlib's (after `import contextlib`, or `suppress` bound only
 * by `from contextlib import suppress`; in parentheses or not) as
 * ap_py_catches_import tells it of a handler's exceptions (none given:
 * COND_FALSE), for any other not known. */
bool ap_py_suppress(const struct parser *p, size_t a, size_t b, enum cond *catches);

/* Whether a condition the reader decides may read the name of binding i:
 * one CPython provides (__name__, range, the exceptions a handler names),
 * TYPE_CHECKING, a name the options read as false, or one an earlier
 * binding imports (typing, sys, os under any name). */
bool ap_py_cond_input(const struct parser *p, size_t i);

/* Whether the bindings from index from on (a loop's body) leave the module
 * the same run twice as once: none deletes, and none reads a name the body
 * binds (an alias of it, a partial of it or the name it calls partial by, a
 * decorator of a def, a condition the reader decided; a star import binds
 * names not known here): each binds what it bound the first time. */
bool ap_py_runs_alike(const struct parser *p, size_t from);

/* How many times `for ... in` sv[a, b) runs its body: range(N) of the
 * builtin range, or a tuple or list literal (no starred item, no lambda);
 * -1 when the reader cannot tell. *last: what a name target then holds, the
 * last item: ALIAS of the name sv[*name], OTHER (a literal's value), or
 * UNKNOWN. */
long long ap_py_iterations(const struct parser *p, size_t a, size_t b, ap_py_bind_kind *last,
                           size_t *name);

/* A match subject as the reader knows it: a literal, or a fact of the
 * target interpreter (sys.platform ...). s points into the source or the
 * facts, which outlive the parse. */
struct ap_py_subject {
	enum { SUBJ_UNKNOWN, SUBJ_INT, SUBJ_STR, SUBJ_NONE, SUBJ_TRUE, SUBJ_FALSE } kind;
	long long i;
	const char *s;
	size_t len;
};

/* The subject sv[a, b) of a match. */
void ap_py_subject(const struct parser *p, size_t a, size_t b, struct ap_py_subject *out);

/* Whether the case pattern sv[a, b) (no guard) matches the subject: literal
 * patterns (== for numbers and strings, `is` for None, True and False),
 * `_`, a capture name (*capture its index, else SIZE_MAX) and `|` of
 * literals; anything else is unknown. */
enum cond ap_py_case_matches(const struct parser *p, const struct ap_py_subject *subj, size_t a,
                             size_t b, size_t *capture);

#endif
