/* SPDX-License-Identifier: MIT */
/* What a name resolves to (ap_pyref): its kinds in words, its copies, and
 * what wraps a def: a functools.partial of it (the signature a call then
 * meets), a decorator of the tree (what its body gives back). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/lang/space.h"
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

	if (out->kind == AP_PYREF_ERROR || out->kind == AP_PYREF_UNKNOWN)
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
static size_t body_tokens(const ap_py_module *m, const ap_py_def *d, const char **tok,
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
		tok[k] = s + i;
		len[k++] = e - i;
		i = e;
	}
	return k;
}

static bool tok_is(const char *t, size_t len, const char *w)
{
	return len == strlen(w) && memcmp(t, w, len) == 0;
}

ap_pydeco ap_pydeco_does(const ap_py_module *m, const ap_py_def *d, bool called)
{
	const char *t[11];
	size_t len[11], n;

	if (d->is_async)
		return AP_PYDECO_OTHER;
	/* A body that wraps what it returns with functools.wraps: a wrapper that
	 * takes what the def takes, whose signature is the def's. */
	if (memmem(m->src + d->body_off, d->body_end - d->body_off, "wraps(", 6) != NULL)
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
		return AP_PYDECO_OTHER;
	}
	/* a factory: `def INNER(FN): return FN` then `return INNER` */
	return n == 10 && tok_is(t[0], len[0], "def") && tok_is(t[2], len[2], "(") &&
	                       tok_is(t[4], len[4], ")") && tok_is(t[5], len[5], ":") &&
	                       tok_is(t[6], len[6], "return") && len[7] == len[3] &&
	                       memcmp(t[7], t[3], len[3]) == 0 && tok_is(t[8], len[8], "return") &&
	                       len[9] == len[1] && memcmp(t[9], t[1], len[1]) == 0
	               ? AP_PYDECO_RETURNS_IT
	               : AP_PYDECO_OTHER;
}
