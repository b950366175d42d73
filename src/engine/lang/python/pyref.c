/* SPDX-License-Identifier: MIT */
/* What a name resolves to (ap_pyref): its kinds in words, its copies, and
 * what wraps a def: a functools.partial of it (the signature a call then
 * meets), a decorator of the tree (what its body gives back). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/lang/space.h"
#include "engine/reader.h"
#include "engine/lang/python/python-int.h"
#include "engine/lang/python/pysource.h"

const char *ap_pyref_kind_name(ap_pyref_kind kind)
{
	static const char *const names[] = {"a def", "a class", "a module", "a value",
	                                    "imported from outside", "not bound",
	                                    "not readable", "not known without running it"};
	return names[kind];
}

void ap_pyref_free(ap_pyref *ref)
{
	free(ref->why);
	free(ref->module);
	ap_pydef_view_free(ref->view);
	free(ref->partial_args.keywords);
	memset(ref, 0, sizeof *ref);
}

void ap_pyref_copy(ap_pyref *to, const ap_pyref *from)
{
	*to = *from;
	to->why = from->why ? ap_xstrdup(from->why) : NULL;
	to->module = from->module ? ap_xstrdup(from->module) : NULL;
	if (from->view != NULL)
		to->def = to->view = ap_pydef_view(from->view, NULL);
	if (from->partial_args.keywords != NULL) {
		size_t size = (from->partial_args.nkeywords + 1) * sizeof *to->partial_args.keywords;
		to->partial_args.keywords = memcpy(ap_xmalloc(size), from->partial_args.keywords, size);
	}
}

void ap_py_args_add(ap_py_args *all, const ap_py_args *more)
{
	all->keywords = ap_xrealloc(all->keywords,
	                            (all->nkeywords + more->nkeywords + 1) * sizeof *all->keywords);
	for (size_t k = 0; k < more->nkeywords; k++) {
		size_t j = 0;
		while (j < all->nkeywords && strcmp(all->keywords[j], more->keywords[k]) != 0)
			j++;
		if (j == all->nkeywords)
			all->keywords[all->nkeywords++] = more->keywords[k];
	}
	all->positional += more->positional;
}

void ap_pyref_partial(ap_pyref *out, const ap_py_binding *b, const ap_py_args *args)
{
	ap_py_args all = {0};
	const ap_py_def *base;
	char *why, *qualname;
	ap_py_def *v;

	/* a partial of a function whose parameters are not read: one still,
	 * as partial checks no argument until it is called */
	if (out->kind == AP_PYREF_ERROR || out->kind == AP_PYREF_UNKNOWN || out->nosig)
		return;
	if (out->kind != AP_PYREF_DEF) {
		why = ap_xasprintf("it is bound at line %u to functools.partial of %s, which is %s",
		                   b->line, b->target, ap_pyref_kind_name(out->kind));
		ap_pyref_free(out);
		out->kind = AP_PYREF_UNKNOWN;
		out->why = why;
		return;
	}
	/* partial(partial(f, 1), 2) is partial(f, 1, 2) */
	base = out->partial_of != NULL ? out->partial_of : out->def;
	ap_py_args_add(&all, &out->partial_args);
	ap_py_args_add(&all, args);
	qualname = ap_xasprintf("%s (functools.partial of %s)", b->name, base->qualname);
	v = ap_pydef_partial(base, &all, qualname, &why);
	if (v == NULL) {
		char *unbound = ap_xasprintf("the arguments of the functools.partial at line %u do "
		                             "not bind to %s: %s", b->line, base->qualname, why);
		ap_pyref_free(out);
		out->kind = AP_PYREF_UNKNOWN;
		out->why = unbound;
		free(all.keywords);
		free(why);
		return;
	}
	ap_pydef_view_free(out->view);
	free(out->partial_args.keywords);
	out->def = out->view = v;
	out->partial_of = base;
	out->partial_args = all;
}

/* --- Decorators ---------------------------------------------------------- */

/* The first tokens of d's body, up to max (comments end the reading: such a
 * body is not one of the forms read here); their number. */
static size_t body_tokens(const ap_py_module *m, const ap_py_def *d, const char **toks,
                          size_t *len, size_t max)
{
	const char *s = m->src;
	size_t i = d->body_off, n = d->body_end, k = 0;

	while (i < n) {
		size_t e;
		if (ap_is_space_byte((unsigned char)s[i])) {
			i++;
			continue;
		}
		if (s[i] == '#' || s[i] == '\\' || k == max)
			return max + 1;
		e = ap_py_token_end(s, i, n);
		toks[k] = s + i;
		len[k++] = e - i;
		i = e;
	}
	return k;
}

/* What a decorator's body gives back, read from its tokens alone (defs
 * inside function bodies are not parsed): the defs nested at its own level,
 * its returns there, and whether each return gives one of those defs. */
#define DECO_MAX_DEFS 64
#define DECO_MAX_RETURNS 64
#define DECO_MAX_NAMES 4096
#define DECO_MAX_NEST 32

struct deco_token {
	size_t off, len;
};

struct deco_def {
	struct deco_token name;
	size_t body, end; /* its block: after the header's ':', to where it ends */
	bool top;         /* at the body's first column, with no decorator of its own */
	bool one_param;   /* its parameters are `(NAME)` */
};

struct deco_body {
	struct deco_def defs[DECO_MAX_DEFS];
	size_t ndefs;
	struct deco_token returns[DECO_MAX_RETURNS];
	size_t nreturns;
	/* the other names at its own level (attributes not counted) */
	struct deco_token *names;
	size_t nnames;
	bool bad;          /* a form not read here */
	bool ends_in_return; /* its last statement at the first column is a return */
};

/* A name's first byte, as the lexer classes it. */
static bool is_name_start(unsigned char c)
{
	return ap_py_byte_class[c] == C_NAME;
}

static bool tok_is(const char *t, size_t len, const char *w)
{
	return len == strlen(w) && memcmp(t, w, len) == 0;
}

/* Adds the name at s[off, off + len) to b's own names: false (b bad) past
 * the most read. */
static bool add_name(struct deco_body *b, size_t *cap, size_t off, size_t len)
{
	if (b->nnames == DECO_MAX_NAMES) {
		b->bad = true;
		return false;
	}
	if (b->nnames == *cap) {
		*cap = *cap ? 2 * *cap : 32;
		b->names = ap_xrealloc(b->names, *cap * sizeof *b->names);
	}
	b->names[b->nnames++] = (struct deco_token){off, len};
	return true;
}

/* Reads s[off, end), a def's body whose first statement is on a line of
 * its own. Returns outside the nested defs and classes are its own; a
 * return must be `return NAME` alone in its statement; `yield` and
 * `global` there, `nonlocal` anywhere (which may rebind a name it
 * returns) are not read, nor is indentation with tabs. */
static void deco_read(const char *s, size_t off, size_t end, struct deco_body *b)
{
	size_t nest[DECO_MAX_NEST], nest_def[DECO_MAX_NEST], nnest = 0;
	size_t i = off, col0 = SIZE_MAX, col = 0, header = 0, names_cap = 0;
	struct deco_token prev = {0};
	bool bol = false, decorated = false;
	int brackets = 0;
	/* after `return`: 1 its name comes next, 2 then the statement's end;
	 * after `def`: 3 its name, 4 its header up to ':'; after `class`: 5
	 * its name, a binding like any other */
	int expect = 0;

	memset(b, 0, sizeof *b);
	while (i < end && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	if (i < end && s[i] != '\n' && s[i] != '#') {
		/* at its first statement: one on a line of its own */
		size_t ls = i;
		while (ls > 0 && s[ls - 1] == ' ')
			ls--;
		if (ls > 0 && s[ls - 1] != '\n') {
			b->bad = true;
			return;
		}
		i = ls;
		bol = true;
	}
	while (i < end && !b->bad) {
		unsigned char c = (unsigned char)s[i];
		bool line_first = false, own;
		size_t e;

		if (bol) {
			size_t ls = i;
			while (i < end && ap_is_space_byte((unsigned char)s[i]) && s[i] != '\n')
				i++;
			if (i == end)
				break;
			if (s[i] == '\n' || s[i] == '#') {
				/* a blank line, or a comment alone */
				while (i < end && s[i] != '\n')
					i++;
				i += i < end;
				continue;
			}
			for (size_t k = ls; k < i; k++)
				b->bad |= s[k] != ' ';
			col = i - ls;
			while (nnest > 0 && nest[nnest - 1] >= col) {
				nnest--;
				if (nest_def[nnest] != SIZE_MAX)
					b->defs[nest_def[nnest]].end = ls;
			}
			if (col0 == SIZE_MAX)
				col0 = col;
			b->bad |= col < col0;
			bol = false;
			line_first = true;
			c = (unsigned char)s[i];
		}
		if (c == '\n') {
			if (brackets == 0) {
				if (expect == 2)
					expect = 0;
				bol = true;
			}
			i++;
			continue;
		}
		if (c == '#') {
			while (i < end && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '\\' && i + 1 < end && s[i + 1] == '\n') {
			i += 2;
			continue;
		}
		if (ap_is_space_byte(c)) {
			i++;
			continue;
		}
		e = ap_py_token_end(s, i, end);
		if (e <= i || e > end) {
			b->bad = true;
			break;
		}
		own = nnest == 0;
		if (is_name_start(c)) {
			/* a name with bytes past ASCII: CPython binds it NFKC-normalised
			 * (ﬁ is fi), which is not done here; a string (a prefix and its
			 * quotes) may hold any */
			bool ascii = true, quoted = false;
			for (size_t k = i; k < e; k++) {
				ascii &= (unsigned char)s[k] < 0x80;
				quoted |= s[k] == '"' || s[k] == '\'';
			}
			if (!ascii && !quoted) {
				b->bad = true;
				break;
			}
		}
		if (c == '(' || c == '[' || c == '{')
			brackets++;
		else if ((c == ')' || c == ']' || c == '}') && --brackets < 0)
			b->bad = true;
		if (expect == 1) {
			if (!is_name_start(c) || b->nreturns == DECO_MAX_RETURNS) {
				b->bad = true;
				break;
			}
			b->returns[b->nreturns++] = (struct deco_token){i, e - i};
			expect = 2;
		} else if (expect == 2) {
			b->bad |= !(e - i == 1 && c == ';');
			expect = 0;
		} else if (expect == 5) {
			if (!add_name(b, &names_cap, i, e - i))
				break;
			expect = 0;
		} else if (expect == 3) {
			b->defs[b->ndefs - 1].name = (struct deco_token){i, e - i};
			expect = 4;
			header = 0;
		} else if (expect == 4) {
			struct deco_def *d = &b->defs[b->ndefs - 1];
			header++;
			if (brackets == 0 && c == ':' && e - i == 1) {
				d->one_param = d->one_param && header == 4;
				d->body = e;
				expect = 0;
			} else if (header == 2 && !is_name_start(c)) {
				d->one_param = false;
			}
		} else if (is_name_start(c)) {
			const char *t = s + i;
			size_t len = e - i;
			if (tok_is(t, len, "nonlocal") ||
			    (own && (tok_is(t, len, "yield") || tok_is(t, len, "global"))))
				b->bad = true;
			else if (own && tok_is(t, len, "return"))
				expect = 1;
			else if ((tok_is(t, len, "def") || tok_is(t, len, "class")) &&
			         (line_first || tok_is(s + prev.off, prev.len, "async"))) {
				if (nnest == DECO_MAX_NEST || (own && b->ndefs == DECO_MAX_DEFS)) {
					b->bad = true;
					break;
				}
				nest_def[nnest] = SIZE_MAX;
				if (own && tok_is(t, len, "def")) {
					nest_def[nnest] = b->ndefs;
					b->defs[b->ndefs++] = (struct deco_def){
					        .top = col == col0 && !decorated && line_first,
					        .one_param = true, .end = end};
					expect = 3;
				} else if (own) {
					expect = 5;
				}
				nest[nnest++] = col;
			} else if (own && !(prev.len == 1 && s[prev.off] == '.') &&
			           !add_name(b, &names_cap, i, len)) {
				break;
			}
		}
		if (line_first && own) {
			decorated = c == '@';
			if (col == col0)
				b->ends_in_return = expect == 1;
		}
		prev = (struct deco_token){i, e - i};
		i = e;
	}
	b->bad |= brackets != 0 || expect == 1 || expect >= 3;
}

static bool same(const char *s, struct deco_token a, struct deco_token b)
{
	return a.len == b.len && memcmp(s + a.off, s + b.off, a.len) == 0;
}

/* The def of b that its return k gives: the one def of its name at b's own
 * level, at its first column, before each of the returns of its name, which
 * no other statement of b's own level names (no assignment, del, class or
 * other binding may replace it); NULL when there is none. */
static const struct deco_def *returned_def(const char *s, const struct deco_body *b, size_t k)
{
	struct deco_token r = b->returns[k];
	const struct deco_def *d = NULL;
	size_t defs = 0;

	for (size_t j = 0; j < b->ndefs; j++) {
		if (!same(s, b->defs[j].name, r))
			continue;
		defs++;
		if (b->defs[j].top)
			d = &b->defs[j];
	}
	if (defs != 1)
		d = NULL;
	for (size_t j = 0; j < b->nreturns && d != NULL; j++)
		if (same(s, b->returns[j], r) && b->returns[j].off < d->name.off)
			d = NULL;
	for (size_t j = 0; j < b->nnames && d != NULL; j++)
		if (same(s, b->names[j], r))
			d = NULL;
	return d;
}

/* Whether every way out of the body s[off, end) but a raise returns a def
 * nested in it (a function object, whatever its parameters); with
 * inner_of_factory, each such def is itself a decorator (of one parameter)
 * that does so, each read once. */
static bool returns_own_defs(const char *s, size_t off, size_t end, bool inner_of_factory)
{
	struct deco_body b;
	bool ok, read[DECO_MAX_DEFS] = {false};

	deco_read(s, off, end, &b);
	ok = !b.bad && b.nreturns > 0 && b.ends_in_return;
	for (size_t k = 0; k < b.nreturns && ok; k++) {
		const struct deco_def *d = returned_def(s, &b, k);
		ok = d != NULL;
		if (ok && inner_of_factory && !read[d - b.defs]) {
			read[d - b.defs] = true;
			ok = d->one_param && returns_own_defs(s, d->body, d->end, false);
		}
	}
	free(b.names);
	return ok;
}

/* Whether the tokens of s[off, end) call `wraps(` (functools.wraps, as
 * written; not in a comment or a string, nor a longer name's tail). */
static bool calls_wraps(const char *s, size_t off, size_t end)
{
	bool named = false;

	for (size_t i = off; i < end;) {
		size_t e;
		if (ap_is_space_byte((unsigned char)s[i]) || s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == '#') {
			while (i < end && s[i] != '\n')
				i++;
			continue;
		}
		e = ap_py_token_end(s, i, end);
		if (e <= i)
			return false;
		if (named && e - i == 1 && s[i] == '(')
			return true;
		named = tok_is(s + i, e - i, "wraps");
		i = e;
	}
	return false;
}

static ap_pydeco deco_does(const ap_py_module *m, const ap_py_def *d, bool called)
{
	const char *t[11];
	size_t len[11], n;

	if (d->is_async)
		return AP_PYDECO_OTHER;
	/* A body that wraps what it returns with functools.wraps: a wrapper that
	 * takes what the def takes, whose signature is the def's. */
	if (calls_wraps(m->src, d->body_off, d->body_end))
		return AP_PYDECO_WRAPS;
	n = body_tokens(m, d, t, len, 10);
	if (!called) {
		/* `return FN` of its first parameter; `return None`, `return` or
		 * `pass`: None */
		if (n == 2 && d->nparams >= 1 && d->params[0].kind == AP_PY_POS &&
		    tok_is(t[0], len[0], "return") && tok_is(t[1], len[1], d->params[0].name))
			return AP_PYDECO_RETURNS_IT;
		if ((n == 2 && tok_is(t[0], len[0], "return") && tok_is(t[1], len[1], "None")) ||
		    (n == 1 && (tok_is(t[0], len[0], "return") || tok_is(t[0], len[0], "pass"))))
			return AP_PYDECO_NONE;
		return d->nparams == 1 && d->params[0].kind == AP_PY_POS && !d->lambda &&
		                       returns_own_defs(m->src, d->body_off, d->body_end, false)
		               ? AP_PYDECO_OWN_DEF
		               : AP_PYDECO_OTHER;
	}
	/* a factory: `def INNER(FN): return FN` then `return INNER` */
	if (n == 10 && tok_is(t[0], len[0], "def") && tok_is(t[2], len[2], "(") &&
	    tok_is(t[4], len[4], ")") && tok_is(t[5], len[5], ":") &&
	    tok_is(t[6], len[6], "return") && len[7] == len[3] &&
	    memcmp(t[7], t[3], len[3]) == 0 && tok_is(t[8], len[8], "return") &&
	    len[9] == len[1] && memcmp(t[9], t[1], len[1]) == 0)
		return AP_PYDECO_RETURNS_IT;
	return !d->lambda && returns_own_defs(m->src, d->body_off, d->body_end, true)
	               ? AP_PYDECO_OWN_DEF
	               : AP_PYDECO_OTHER;
}

ap_pydeco ap_pydeco_does(ap_reader *r, const ap_file *f, const ap_py_module *m,
                         const ap_py_def *d, bool called)
{
	char *key;
	ap_pydeco *held;

	/* A body past the bound is not read: each def under the decorator
	 * would read it again, and each read is linear in it. */
	if (d->body_end - d->body_off > AP_PYDECO_MAX_BODY)
		return AP_PYDECO_OTHER;

	/* the answer is the file's bytes': kept with them, for every def it
	 * decorates and every commit that has them */
	key = ap_xasprintf("pydeco/%zu/%d", d->body_off, called);
	held = ap_reader_derived(r, f, key);
	if (held == NULL) {
		held = ap_xmalloc(sizeof *held);
		/* a module that names __code__ may give the decorator another
		 * body (`deco.__code__ = ...`) */
		*held = memmem(m->src, m->src_len, "__code__", 8) != NULL ? AP_PYDECO_OTHER
		                                                         : deco_does(m, d, called);
		ap_reader_keep(r, f, key, held, sizeof *held, free);
	}
	free(key);
	return *held;
}
