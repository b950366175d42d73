/* SPDX-License-Identifier: MIT */
/* Modules parsed once per file, with what their try statements asked of
 * the tree and the target interpreter, and names resolved through imports
 * as Python binds them on a default import. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/lang/python/pypath.h"
#include "engine/lang/python/pyresolve-int.h"
#include "engine/pytarget.h"

/* Import chains deeper than this are refused (AITER's are a few levels). */
#define RESOLVE_MAX_DEPTH 64
/* Names one chain of aliases in a module may pass through (`a = b`, `b = c`). */
#define RESOLVE_MAX_ALIASES 1000
/* Bindings one resolution may visit. Each (module, name) is resolved once,
 * so this is about the bindings of the modules a name's imports reach
 * (AITER's: under a thousand); it bounds a tree made to reach many (a tree
 * is untrusted input: its time must be bounded too). */
#define RESOLVE_MAX_VISITS 20000

/* --- Parsed modules ------------------------------------------------------ */

/* What a parse found of whether a module its try statements import is
 * found (or a name from it): the parse holds only where each is still so. */
struct assumed {
	char *written; /* as the import wrote it */
	char *name;    /* NULL: the module itself */
	int found;
};

struct parsed {
	ap_py_module *m;
	char *error;
	struct assumed *assumed;
	size_t nassumed;
	size_t unasked; /* imports left unasked (ap_reader_tries_unasked) */
};

static void parsed_free(void *p)
{
	struct parsed *x = p;

	ap_py_module_free(x->m);
	free(x->error);
	for (size_t i = 0; i < x->nassumed; i++) {
		free(x->assumed[i].written);
		free(x->assumed[i].name);
	}
	free(x->assumed);
	free(x);
}

/* Parses a try's from-import may lead to, one inside another, before its
 * names are not known: each parse's names share one resolution's budget,
 * this bounds their nesting. */
#define NAMES_MAX_NESTING 16

static bool fails_on_import(struct resolver *rs, const char *module, const ap_py_module *running);
static void reading_top(struct resolver *rs, const ap_py_module *so_far);

/* A parse's questions to the tree and to the interpreter that will import
 * it (the reader's), about the file f. */
struct asking {
	ap_reader *r;
	const ap_pyconf *c;
	const ap_file *f;
	struct parsed *into; /* the parse's record of its answers; NULL: none */
	struct resolver *rs; /* the names asked resolved; NULL until one is */
	const struct busy *chain; /* f, and the files being read around it */
	const ap_py_module *running; /* f's bindings so far, when known */
};

/* The resolver of a's questions about the tree's modules (module's tree);
 * NULL past NAMES_MAX_NESTING parses one inside another. */
static struct resolver *asked_resolver(struct asking *a, const char *module)
{
	size_t nested = 0;

	for (const struct busy *b = a->chain; b != NULL; b = b->outer)
		nested++;
	if (nested > NAMES_MAX_NESTING)
		return NULL;
	bool package;
	char *of;

	if (a->rs == NULL)
		a->rs = ap_pyres_new(a->r, a->c, module, a->chain);
	of = ap_pypath_module(a->f->path, &package);
	reading_top(a->rs, package && strchr(of, '.') == NULL ? a->running : NULL);
	free(of);
	return a->rs;
}

/* Whether `from module import name` (module of the tree, found) gets name:
 * what the module binds to it, else its submodule of that name. */
static int name_found(struct asking *a, const char *module, const char *name)
{
	ap_pyref ref;
	bool missing;
	int found;

	if (asked_resolver(a, module) == NULL)
		return -1;
	if (fails_on_import(a->rs, module, a->running))
		return 0;
	ap_pyres_top(a->rs, module, name, &ref, &missing);
	if (missing) {
		/* a namespace package: only its submodules */
		char *sub = ap_xasprintf("%s.%s", module, name);
		found = ap_pypath_in_tree(a->r, sub);
		free(sub);
	} else {
		found = ref.kind == AP_PYREF_UNBOUND                            ? 0
		        : ref.kind == AP_PYREF_ERROR || ref.kind == AP_PYREF_UNKNOWN ||
		                          ref.perhaps                           ? -1
		                                                                : 1;
	}
	ap_pyref_free(&ref);
	return found;
}

/* Outside the tree, a name from a module found is taken as bound: only
 * importing the module would tell. */
static int import_found(struct asking *a, const char *written, const char *what)
{
	bool package, inside;
	char *of = ap_pypath_module(a->f->path, &package);
	char *name = ap_pypath_absolute(of, package, written);
	struct ap_pytarget *t = ap_reader_python(a->r);
	int found = -1;

	if (name != NULL) {
		size_t top = strcspn(of, ".");
		inside = strncmp(name, of, top) == 0 && (name[top] == '\0' || name[top] == '.');
		if (what != NULL)
			found = !inside                ? 1
			        : strcmp(name, of) == 0 ? AP_PY_IMPORT_SELF
			                                : name_found(a, name, what);
		else
			found = inside      ? ap_pypath_in_tree(a->r, name)
			        : t != NULL ? ap_pytarget_finds(t, name)
			                    : -1;
		if (what == NULL && inside && found == 1 && asked_resolver(a, name) != NULL &&
		    fails_on_import(a->rs, name, a->running))
			found = 0;
	}
	free(of);
	free(name);
	return found;
}

static int can_import(void *ctx, const char *written, const char *name, const ap_py_module *so_far)
{
	struct asking *a = ctx;
	struct parsed *p = a->into;
	int found;

	if (ap_reader_tries_unasked(a->r)) {
		p->unasked++;
		return -1;
	}
	a->running = so_far;
	found = import_found(a, written, name);

	p->assumed = ap_xrealloc(p->assumed, (p->nassumed + 1) * sizeof *p->assumed);
	p->assumed[p->nassumed++] =
	        (struct assumed){ap_xstrdup(written), name ? ap_xstrdup(name) : NULL, found};
	return found;
}

static const ap_py_facts *facts(void *ctx, unsigned need)
{
	const struct asking *a = ctx;
	struct ap_pytarget *t = ap_reader_python(a->r);

	return t != NULL ? ap_pytarget_facts(t, need) : NULL;
}

/* Whether a parse kept (maybe of the same bytes at another path, or in
 * another commit) found what f in r would find. */
static bool still_holds(ap_reader *r, const ap_pyconf *c, const struct busy *chain,
                        const struct parsed *p)
{
	struct asking a = {r, c, chain->f, NULL, NULL, chain, p->m};
	bool holds = true;

	for (size_t i = 0; i < p->nassumed && holds; i++)
		holds = import_found(&a, p->assumed[i].written, p->assumed[i].name) == p->assumed[i].found;
	ap_pyres_free(a.rs);
	return holds;
}

/* Marks a parse held for f in r: one made for it, or kept and checked once;
 * kept with this reader alone, as the checking is. The mark, and a parse
 * kept under a second key, are freed by their owners. */
static char held_mark;
static void owned_elsewhere(void *p)
{
	(void)p;
}

/* Whether c's names assumed false can be in f: the parser reads them only
 * as names the module's own text spells, and a non-ASCII byte may spell one
 * that NFKC normalises to it. */
static bool names_false_in(const ap_file *f, const ap_pyconf *c)
{
	for (size_t i = 0; i < f->len; i++)
		if ((unsigned char)f->data[i] >= 0x80)
			return true;
	for (size_t i = 0; i < c->nfalse; i++)
		if (memmem(f->data, f->len, c->false_names[i], strlen(c->false_names[i])) != NULL)
			return true;
	return false;
}

/* Whether f parses under c as under no names assumed false
 * (names_false_in), told once for its bytes, in the cache a history's
 * commits share: a mark, not the parse, so that a sweep dropping the parse
 * leaves nothing pointing at it. */
static char plain_mark, own_mark;
static bool parses_plain(ap_reader *r, const ap_file *f, const ap_pyconf *c)
{
	char *k = ap_xasprintf("%s/plain", c->key);
	const char *mark = ap_reader_derived(r, f, k);

	if (mark == NULL) {
		mark = names_false_in(f, c) ? &own_mark : &plain_mark;
		ap_reader_keep(r, f, k, (void *)mark, 0, owned_elsewhere);
	}
	free(k);
	return mark == &plain_mark;
}

/* f parsed, as ap_pysource_module, read while the files of outer are. A
 * module none of c's false names can be in parses as it does with none, so
 * it is kept once for every c (AITER's top package names them; the modules
 * under it do not); what its imports found is checked per c as for a parse
 * of the same bytes elsewhere. A parse that leaves its tries' imports
 * unasked is kept under keys of its own. */
static const ap_py_module *module_in(ap_reader *r, const ap_file *f, const ap_pyconf *c,
                                     const struct busy *outer, const char **error)
{
	const char *mode = ap_reader_tries_unasked(r) ? "/unasked" : "";
	char *own = ap_xasprintf("%s%s", c->key, mode);
	char *plain = NULL;
	char *held = ap_xasprintf("%s/held", own);
	struct parsed *p = ap_reader_derived(r, f, own);
	const char *key = own;
	struct busy here = {f, outer};
	int rc;

	if (p == NULL && c->nfalse > 0 && parses_plain(r, f, c)) {
		key = plain = ap_xasprintf("%s%s", AP_PYCONF_PLAIN, mode);
		p = ap_reader_derived(r, f, key);
	}
	for (const struct busy *b = outer; b != NULL; b = b->outer) {
		if (b->f == f) {
			/* only a run tells how much of it is bound by then */
			*error = "it is imported again while it is read";
			p = NULL;
			goto out;
		}
	}
	if (p != NULL && ap_reader_derived(r, f, held) == NULL && !still_holds(r, c, &here, p)) {
		p = NULL;
		key = own;
	}
	if (p == NULL) {
		struct asking a = {r, c, f, NULL, NULL, &here, NULL};
		ap_py_options opt = {.false_names = (const char *const *)c->false_names,
		                     .facts = facts, .can_import = can_import, .ctx = &a};
		p = a.into = ap_xcalloc(1, sizeof *p);
		rc = ap_py_parse(&p->m, f->data, f->len, &opt);
		ap_pyres_free(a.rs);
		if (rc < 0)
			p->error = ap_xstrdup(ap_error_last());
		if (rc >= 0 && ap_reader_charge(r, ap_py_module_bytes(p->m), "parsing it") < 0) {
			/* another scan, with room left, may parse it */
			ap_py_module_free(p->m);
			p->m = NULL;
			p->error = ap_xstrdup(ap_error_last());
			ap_reader_keep_here(r, f, key, p, parsed_free);
		} else {
			/* a syntax error too: the same bytes fail alike */
			ap_reader_keep(r, f, key, p, p->m ? ap_py_module_bytes(p->m) : 0, parsed_free);
		}
	}
	if (ap_reader_derived(r, f, held) == NULL) {
		ap_reader_keep_here(r, f, held, &held_mark, owned_elsewhere);
		/* found under c's key from now on, the text not searched again */
		if (key != own)
			ap_reader_keep_here(r, f, own, p, owned_elsewhere);
	}
	if (p->unasked > 0)
		ap_reader_count_unasked(r);
	*error = p->error;
out:
	free(own);
	free(plain);
	free(held);
	return p != NULL ? p->m : NULL;
}

const ap_py_module *ap_pysource_module(ap_reader *r, const ap_file *f, const ap_pyconf *c,
                                       const char **error)
{
	return module_in(r, f, c, NULL, error);
}

/* --- Resolving names through imports -------------------------------------- */

static void pyref_set(ap_pyref *ref, ap_pyref_kind kind, char *why)
{
	ap_pyref_free(ref);
	ref->kind = kind;
	ref->why = why;
}

static void reading_top(struct resolver *rs, const ap_py_module *so_far)
{
	rs->top_reading = so_far;
}

static void remember(struct resolver *rs, const ap_buf *key, const ap_pyref *ref, bool missing)
{
	struct resolved *d;

	ap_xgrow((void **)&rs->done, &rs->done_cap, rs->ndone + 1, sizeof *rs->done);
	d = &rs->done[rs->ndone];
	ap_pyref_copy(&d->ref, ref);
	d->missing = missing;
	ap_xok(ap_map_put(rs->known, key->data, key->len, rs->ndone++));
}


/* AITER's aiter/ops/triton/__init__.py (since v0.1.12) puts a finder first on
 * sys.meta_path that imports aiter.ops.triton.OLD as aiter.ops.triton.NEW for
 * each "OLD": "NEW" of its _BACKWARD_COMPAT_MAP (modules moved into
 * subpackages), before any other finder looks for OLD, and that gives way to
 * them when NEW cannot be imported; its module __getattr__ does the same for
 * `from aiter.ops.triton import OLD`. Its children are found so where the
 * package binds both the map and the finder. */
#define COMPAT_PACKAGE "ops.triton"
#define COMPAT_MAX_REDIRECTS 8

/* What the compat map of the package fd makes of its child: 0 nothing, 1
 * *to (the new name, relative to the package), -1 not known (out says why). */
static int compat_child(struct found *fd, const char *child, const char **to, ap_pyref *out)
{
	int r = ap_pycompat_child(&fd->compat, fd->mod.m, fd->mod.file->path, child, to);

	if (r < 0)
		pyref_set(out, AP_PYREF_UNKNOWN,
		          ap_xasprintf("which module %s.%s is depends on a redirect of old module "
		                       "paths: %s",
		                       fd->name, child, fd->compat.why));
	return r;
}

/* The module name as AITER's compat finder imports it: NULL when it does
 * not redirect it (or *kind FAILED with out set). */
static char *compat_redirect(struct resolver *rs, const char *name, int *kind, ap_pyref *out)
{
	const char *dot = strrchr(name, '.'), *to;
	size_t tlen = strlen(rs->top);
	struct module pkg;
	ap_pyref ignored = {0};
	char *moved;
	int r;

	if (dot == NULL || (size_t)(dot - name) != tlen + 1 + strlen(COMPAT_PACKAGE) ||
	    strncmp(name, rs->top, tlen) != 0 || name[tlen] != '.' ||
	    strncmp(name + tlen + 1, COMPAT_PACKAGE, strlen(COMPAT_PACKAGE)) != 0)
		return NULL;
	moved = ap_xstrndup(name, (size_t)(dot - name));
	r = ap_pyres_find(rs, moved, &pkg, &ignored);
	ap_pyref_free(&ignored);
	if (r != FOUND || !pkg.package ||
	    (r = compat_child(rs->found[ap_map_get_str(rs->modules, moved)], dot + 1, &to, out)) ==
	            0) {
		free(moved);
		return NULL;
	}
	/* an old name may redirect to another, which CPython's finder follows
	 * until one leads back (RecursionError) */
	if (r > 0 && rs->redirects >= COMPAT_MAX_REDIRECTS) {
		pyref_set(out, AP_PYREF_UNKNOWN,
		          ap_xasprintf("%s.%s: old module paths redirect to one another more "
		                       "than %d deep",
		                       moved, dot + 1, COMPAT_MAX_REDIRECTS));
		r = -1;
	}
	if (r < 0) {
		*kind = FAILED;
		free(moved);
		return NULL;
	}
	name = moved;
	moved = ap_xasprintf("%s.%s", name, to);
	free((char *)name);
	return moved;
}

static void look_up_file(struct resolver *rs, struct found *fd)
{
	struct module *mod = &fd->mod;
	const char *error;

	mod->file = ap_pypath_file(rs->r, fd->name, &mod->package);
	mod->name = fd->name;
	if (mod->file == NULL)
		return;
	fd->failed = AP_PYREF_ERROR;
	if (mod->file->status != AP_FILE_OK) {
		fd->why = ap_xasprintf("%s: %s", mod->file->path, mod->file->reason);
		return;
	}
	mod->m = module_in(rs->r, mod->file, rs->c, rs->chain, &error);
	if (mod->m == NULL)
		fd->why = ap_xasprintf("%s: %s", mod->file->path, error);
	else
		fd->failed = 0;
}

static struct found *look_up_module(struct resolver *rs, const char *name)
{
	struct found *fd = ap_xcalloc(1, sizeof *fd);
	ap_pyref why = {0};
	int kind = FOUND;
	char *moved = compat_redirect(rs, name, &kind, &why);

	fd->name = ap_xstrdup(name);
	if (kind == FAILED) {
		fd->failed = why.kind;
		fd->why = why.why;
		return fd;
	}
	if (moved != NULL) {
		struct module nm;
		rs->redirects++;
		kind = ap_pyres_find(rs, moved, &nm, &why);
		rs->redirects--;
		if (kind != MISSING) {
			/* the new module's own entry holds its name */
			fd->mod = nm;
			fd->failed = why.kind;
			fd->why = why.why;
			free(moved);
			return fd;
		}
		ap_pyref_free(&why);
		free(moved);
	}
	look_up_file(rs, fd);
	return fd;
}

/* The module's file as Python's finder picks it: the package
 * NAME/__init__.py before the module NAME.py beside it. FOUND, MISSING
 * (neither exists), or FAILED with out set (ERROR: one cannot be read or
 * parsed; UNKNOWN: which one it is cannot be known). */
int ap_pyres_find(struct resolver *rs, const char *name, struct module *mod, ap_pyref *out)
{
	size_t at = ap_map_get_str(rs->modules, name);
	struct found *fd;

	if (at == AP_MAP_ABSENT) {
		fd = look_up_module(rs, name);
		ap_xgrow((void **)&rs->found, &rs->found_cap, rs->nfound + 1, sizeof *rs->found);
		ap_xok(ap_map_put_str(rs->modules, name, rs->nfound));
		rs->found[rs->nfound++] = fd;
	} else {
		fd = rs->found[at];
	}
	*mod = fd->mod;
	if (fd->failed != 0) {
		pyref_set(out, fd->failed, ap_xstrdup(fd->why));
		return FAILED;
	}
	return mod->file != NULL ? FOUND : MISSING;
}

/* The absolute name of a module imported as written from mod; NULL when it
 * lies outside the package tree. */
static char *absolute(const struct resolver *rs, const struct module *mod, const char *written)
{
	size_t len = strcspn(written, ".");

	if (len > 0 && (strlen(rs->top) != len || strncmp(written, rs->top, len) != 0))
		return NULL;
	return ap_pypath_absolute(mod->name, mod->package, written);
}

/* Whether the interpreter can import the top package at all (pyfails.c),
 * once a resolution; while the top is the module being read, from its
 * bindings so far. */
static bool top_importable(void *ctx)
{
	struct resolver *rs = ctx;
	const ap_py_module *m = rs->top_reading;
	struct module top;
	ap_pyref err = {0};
	int importable;

	if (rs->importable != 0)
		return rs->importable > 0;
	if (m == NULL && ap_pyres_find(rs, rs->top, &top, &err) == FOUND)
		m = top.m;
	ap_pyref_free(&err);
	importable = m != NULL ? ap_pyfails_top(rs->r, rs->top, m) : -1;
	/* the top's bindings so far grow while it is read */
	if (rs->top_reading == NULL)
		rs->importable = importable;
	return importable > 0;
}

/* Whether importing module (of the tree, found) fails for certain with
 * ModuleNotFoundError: one of its own module-level imports that runs
 * whatever the conditions (in no block that may not run) is of a module
 * that is not there (ap_pyfails). The modules it imports are not read
 * for this in turn (that would ask the interpreter about every module they
 * import, where no answer needs it), nor is what else may raise, as for
 * any module found; one that cannot be read is not known to fail. Kept per
 * resolution, under a key no module name starts. */
static bool fails_on_import(struct resolver *rs, const char *module, const ap_py_module *running)
{
	struct ap_pyfails q = {rs->r, rs->top, running, top_importable, rs};
	ap_buf key = AP_BUF_INIT;
	struct module mod;
	ap_pyref err = {0};
	bool fails = false;
	size_t at;

	ap_buf_putc(&key, '\2');
	ap_buf_puts(&key, module);
	at = ap_map_get(rs->loaded, key.data, key.len);
	if (at != AP_MAP_ABSENT) {
		ap_buf_free(&key);
		return at == 2;
	}
	if (ap_pyres_find(rs, module, &mod, &err) == FOUND) {
		rs->visits += mod.m->nbindings;
		fails = ap_pyfails(&q, mod.name, mod.package, mod.m);
	}
	ap_pyref_free(&err);
	ap_xok(ap_map_put(rs->loaded, key.data, key.len, fails ? 2 : 1));
	ap_buf_free(&key);
	return fails;
}

static void resolve_in(struct resolver *rs, const char *module, const char *name, unsigned depth,
                       ap_pyref *out, bool *missing);
static void resolve_binding(struct resolver *rs, const struct module *mod, const char *name,
                            size_t upto, unsigned depth, ap_pyref *out);

/* What `from target import name` binds: what target binds to name, else
 * its submodule of that name (which the import then imports). */
/* `from target import name` of a name target does not bind: a module-level
 * __getattr__ (PEP 562) answers for it, so what it gets is unknown (a star
 * import without __all__ never asks it). AITER's compat map's __getattr__
 * is read with the map. */
static void getattr_unknown(struct resolver *rs, const char *target, const char *name,
                            ap_pyref *out)
{
	struct module mod;
	ap_pyref err = {0};
	const ap_py_binding *b;

	if (ap_pyres_find(rs, target, &mod, &err) != FOUND || ap_py_lookup(mod.m, AP_PYCOMPAT_MAP) != NULL ||
	    (b = ap_py_lookup(mod.m, "__getattr__")) == NULL || b->kind == AP_PY_BIND_DEL) {
		ap_pyref_free(&err);
		return;
	}
	pyref_set(out, AP_PYREF_UNKNOWN,
	          ap_xasprintf("%s is not bound in %s, whose __getattr__ (line %u) answers for it",
	                       name, mod.file->path, b->line));
	out->file = mod.file;
	out->line = b->line;
}

static void from_import(struct resolver *rs, const char *target, const char *name,
                        unsigned depth, ap_pyref *out)
{
	struct module sm;
	bool missing;
	char *sub;

	resolve_in(rs, target, name, depth, out, &missing);
	if (out->kind != AP_PYREF_UNBOUND)
		return;
	ap_pyref_free(out);
	sub = ap_xasprintf("%s.%s", target, name);
	switch (ap_pyres_find(rs, sub, &sm, out)) {
	case FOUND:
		out->kind = AP_PYREF_MODULE;
		out->module = sub;
		return;
	case MISSING:
		out->kind = AP_PYREF_UNBOUND;
		getattr_unknown(rs, target, name, out);
		break;
	}
	free(sub);
}

/* What the decorators of the def in out (mod's binding at upto) make of it,
 * applied from the bottom up, each name as mod binds it before the def: the
 * def still (each gives back what it is given, or a wrapper that keeps its
 * signature), a function of a decorator's own (nosig: one returns a def of
 * its body, and those above keep what they are given), None (one returns
 * None, and those above give back what they are given), or UNKNOWN at the
 * first whose result the reader cannot tell. */
static void decorated(struct resolver *rs, const struct module *mod, size_t upto, unsigned depth,
                      ap_pyref *out)
{
	const ap_py_def *def = out->def;
	const ap_py_decorator *dec = NULL, *none = NULL, *own = NULL;

	for (size_t k = def->ndecorators; k-- > 0;) {
		ap_pydeco does = AP_PYDECO_OTHER;
		ap_pyref ref = {0};

		dec = &def->decorators[k];
		if (strchr(dec->name, '.') == NULL && strcmp(dec->name, "a decorator expression") != 0) {
			resolve_binding(rs, mod, dec->name, upto, depth + 1, &ref);
			if (ref.kind == AP_PYREF_DEF && !ref.nosig && ref.file != NULL &&
			    ref.file->status == AP_FILE_OK) {
				const char *error;
				const ap_py_module *dm = module_in(rs->r, ref.file, rs->c, rs->chain, &error);
				if (dm != NULL)
					does = ap_pydeco_does(rs->r, ref.file, dm, ref.def, dec->called);
			}
		}
		ap_pyref_free(&ref);
		if (does == AP_PYDECO_NONE) {
			none = dec;
		} else if (does == AP_PYDECO_OWN_DEF) {
			/* whatever it was given */
			own = dec;
			none = NULL;
		} else if (does == AP_PYDECO_OTHER || (none != NULL && does != AP_PYDECO_RETURNS_IT)) {
			break;
		}
		dec = NULL;
	}
	if (dec == NULL && none == NULL) {
		if (own != NULL) {
			out->nosig = true;
			out->why = ap_xasprintf("%s (line %u) is decorated with @%s%s, which binds it to "
			                        "a function of its own whose parameters are not read",
			                        def->qualname, def->line, own->name,
			                        own->called ? "(...)" : "");
		}
		return;
	}
	out->def = NULL;
	if (dec == NULL) {
		out->kind = AP_PYREF_VALUE;
		out->why = ap_xasprintf("%s (line %u) is decorated with @%s, which returns None",
		                        def->qualname, def->line, none->name);
		return;
	}
	out->kind = AP_PYREF_UNKNOWN;
	out->why = ap_xasprintf("%s (line %u) is decorated with @%s%s, which may bind it to "
	                        "something else", def->qualname, def->line, dec->name,
	                        dec->called ? "(...)" : "");
}


/* A star import's answer, and that of a name's membership of __all__. */
enum { STAR_NO, STAR_YES, STAR_UNSURE, STAR_FAILED };

/* The module whose __all__ the part ref of mod's __all__ is: FOUND, or
 * FAILED with out set (ERROR, or UNKNOWN: not a module the reader can
 * follow). */
static int ref_module(struct resolver *rs, const struct module *mod, const ap_py_all_ref *ref,
                      unsigned depth, struct module *other, ap_pyref *out)
{
	const char *path = ref->name, *dot;
	char *at = NULL;
	ap_pyref r = {0};
	int verdict = FAILED;

	if (!ref->attr) {
		/* a name bound to another module's __all__ */
		const ap_py_binding *b = NULL;
		const char *name = ref->name;
		for (size_t i = ref->upto, aliases = 0; i-- > 0 && aliases <= RESOLVE_MAX_ALIASES;) {
			b = &mod->m->bindings[i];
			if (b->name == NULL || strcmp(b->name, name) != 0) {
				b = NULL;
				continue;
			}
			if (b->kind != AP_PY_BIND_ALIAS)
				break;
			name = b->target;
			i = b->value_at;
			aliases++;
			b = NULL;
		}
		if (b != NULL && b->kind == AP_PY_BIND_FROM && strcmp(b->target, "__all__") == 0)
			at = absolute(rs, mod, b->module);
		if (at == NULL)
			pyref_set(out, AP_PYREF_UNKNOWN,
			          ap_xasprintf("%s: line %u: its __all__ takes %s, which is no "
			                       "module's __all__ the reader can follow",
			                       mod->file->path, ref->line, ref->name));
	} else {
		/* NAME.SUB....__all__: a module, its submodules */
		dot = strchr(path, '.');
		at = ap_xstrndup(path, dot ? (size_t)(dot - path) : strlen(path));
		resolve_binding(rs, mod, at, ref->upto, depth + 1, &r);
		free(at);
		at = NULL;
		while (r.kind == AP_PYREF_MODULE && r.module != NULL && dot != NULL) {
			const char *next = strchr(dot + 1, '.');
			char *part = ap_xstrndup(dot + 1, next ? (size_t)(next - dot - 1) : strlen(dot + 1));
			char *in = r.module;
			r.module = NULL;
			ap_pyref_free(&r);
			from_import(rs, in, part, depth + 1, &r);
			free(in);
			free(part);
			dot = next;
		}
		if (r.kind == AP_PYREF_ERROR) {
			*out = r;
			return FAILED;
		}
		if (r.kind == AP_PYREF_MODULE && r.module != NULL) {
			at = r.module;
			r.module = NULL;
		} else {
			pyref_set(out, AP_PYREF_UNKNOWN,
			          ap_xasprintf("%s: line %u: its __all__ takes %s.__all__, and %s is "
			                       "%s, no module of the tree",
			                       mod->file->path, ref->line, ref->name, ref->name,
			                       r.kind == AP_PYREF_UNKNOWN ? "not known"
			                                                  : ap_pyref_kind_name(r.kind)));
		}
		ap_pyref_free(&r);
	}
	if (at == NULL)
		return FAILED;
	if ((verdict = ap_pyres_find(rs, at, other, out)) == MISSING) {
		pyref_set(out, AP_PYREF_UNKNOWN,
		          ap_xasprintf("%s: line %u: its __all__ takes that of %s, which is not in "
		                       "the tree",
		                       mod->file->path, ref->line, at));
		verdict = FAILED;
	}
	free(at);
	return verdict;
}

/* Whether name is in the __all__ of mod (which has one readable): STAR_YES,
 * STAR_NO, or STAR_UNSURE / STAR_FAILED with out set. Kept per (module,
 * name) as resolutions are, under a key no module name starts. */
static int all_holds(struct resolver *rs, const struct module *mod, const char *name,
                     unsigned depth, ap_pyref *out)
{
	const ap_py_module *m = mod->m;
	ap_buf key = AP_BUF_INIT;
	int verdict = STAR_NO;
	size_t at;

	for (size_t i = 0; i < m->nall; i++)
		if (strcmp(m->all[i], name) == 0)
			return STAR_YES;
	if (m->nall_refs == 0)
		return STAR_NO;
	ap_buf_putc(&key, '\1');
	ap_buf_append(&key, mod->name, strlen(mod->name) + 1);
	ap_buf_puts(&key, name);
	at = ap_map_get(rs->known, key.data, key.len);
	if (at != AP_MAP_ABSENT) {
		ap_pyref_copy(out, &rs->done[at].ref);
		ap_buf_free(&key);
		return out->kind == AP_PYREF_VALUE     ? STAR_YES
		       : out->kind == AP_PYREF_UNBOUND ? STAR_NO
		       : out->kind == AP_PYREF_ERROR   ? STAR_FAILED
		                                       : STAR_UNSURE;
	}
	at = ap_map_get(rs->active, key.data, key.len);
	if ((at != AP_MAP_ABSENT && at != 0) || depth > RESOLVE_MAX_DEPTH) {
		pyref_set(out, AP_PYREF_UNKNOWN,
		          ap_xasprintf("%s: its __all__ takes other modules' __all__ that lead back "
		                       "to it, or nest deeper than %d modules",
		                       mod->file->path, RESOLVE_MAX_DEPTH));
		ap_buf_free(&key);
		return STAR_UNSURE;
	}
	ap_xok(ap_map_put(rs->active, key.data, key.len, 1));
	for (size_t i = 0; i < m->nall_refs && verdict != STAR_YES && verdict != STAR_FAILED; i++) {
		struct module other;
		ap_pyref r = {0};
		int v = ref_module(rs, mod, &m->all_refs[i], depth, &other, &r);

		if (v == FAILED) {
			v = r.kind == AP_PYREF_ERROR ? STAR_FAILED : STAR_UNSURE;
		} else if (other.m->has_all) {
			v = all_holds(rs, &other, name, depth + 1, &r);
		} else {
			v = STAR_UNSURE;
			pyref_set(&r, AP_PYREF_UNKNOWN,
			          other.m->all_why != NULL
			                  ? ap_xasprintf("%s: line %u: its __all__ takes that of %s, "
			                                 "which cannot be read (%s: line %u: %s)",
			                                 mod->file->path, m->all_refs[i].line,
			                                 other.name, other.file->path,
			                                 other.m->all_line, other.m->all_why)
			                  : ap_xasprintf("%s: line %u: its __all__ takes that of %s, "
			                                 "which has none (AttributeError)",
			                                 mod->file->path, m->all_refs[i].line,
			                                 other.name));
		}
		if (v == STAR_YES || v == STAR_FAILED || (v == STAR_UNSURE && verdict == STAR_NO)) {
			ap_pyref_free(out);
			*out = r;
			verdict = v;
		} else {
			ap_pyref_free(&r);
		}
	}
	ap_xok(ap_map_put(rs->active, key.data, key.len, 0));
	if (verdict == STAR_YES || verdict == STAR_NO)
		pyref_set(out, verdict == STAR_YES ? AP_PYREF_VALUE : AP_PYREF_UNBOUND, NULL);
	remember(rs, &key, out, false);
	ap_buf_free(&key);
	if (verdict == STAR_YES || verdict == STAR_NO)
		ap_pyref_free(out);
	return verdict;
}

/* Whether `from module import *` binds name: in its __all__, or (without
 * one) a public name it binds. A module that cannot be read or parsed
 * fails (an unreadable module must not read as one that binds nothing);
 * an __all__ that cannot be read leaves unsure every name the module might
 * export: all those but the ones it certainly lacks, since a name in __all__
 * that the module lacks makes the star import raise AttributeError (unless
 * a module __getattr__ makes it, or it is a submodule, which the import
 * then imports). Sets out for STAR_UNSURE and STAR_FAILED. */
static int star_binds(struct resolver *rs, const char *module, const char *name, unsigned depth,
                      ap_pyref *out)
{
	struct module mod, sm;
	ap_pyref ref = {0};
	bool missing;
	int verdict;
	char *sub;

	switch (ap_pyres_find(rs, module, &mod, out)) {
	case MISSING:
		return STAR_NO;
	case FAILED:
		return out->kind == AP_PYREF_ERROR ? STAR_FAILED : STAR_UNSURE;
	}
	if (mod.m->has_all) {
		if ((verdict = all_holds(rs, &mod, name, depth + 1, &ref)) != STAR_UNSURE) {
			*out = ref;
			return verdict;
		}
	} else if (mod.m->all_why == NULL) {
		if (name[0] == '_')
			return STAR_NO;
		resolve_in(rs, module, name, depth + 1, &ref, &missing);
		verdict = ref.kind == AP_PYREF_UNBOUND ? STAR_NO
		          : ref.kind == AP_PYREF_ERROR ? STAR_FAILED
		          : ref.perhaps                ? STAR_UNSURE
		                                       : STAR_YES;
		if (verdict == STAR_UNSURE)
			pyref_set(&ref, AP_PYREF_UNKNOWN,
			          ap_xasprintf("%s may bind it: %s", mod.file->path, ref.why));
		if (verdict == STAR_FAILED || verdict == STAR_UNSURE)
			*out = ref;
		else
			ap_pyref_free(&ref);
		return verdict;
	} else {
		ref.kind = AP_PYREF_UNKNOWN;
		ref.why = ap_xasprintf("%s: line %u: its __all__ cannot be read: %s", mod.file->path,
		                       mod.m->all_line, mod.m->all_why);
	}
	/* unsure whether __all__ holds name: not if the module lacks it */
	*out = ref;
	memset(&ref, 0, sizeof ref);
	if (ap_py_lookup(mod.m, "__getattr__") != NULL)
		return STAR_UNSURE;
	resolve_in(rs, module, name, depth + 1, &ref, &missing);
	verdict = ref.kind == AP_PYREF_UNBOUND ? STAR_NO
	          : ref.kind == AP_PYREF_ERROR ? STAR_FAILED
	                                       : STAR_UNSURE;
	if (verdict == STAR_FAILED) {
		ap_pyref_free(out);
		*out = ref;
		return verdict;
	}
	ap_pyref_free(&ref);
	if (verdict == STAR_NO) {
		sub = ap_xasprintf("%s.%s", module, name);
		verdict = ap_pyres_find(rs, sub, &sm, &ref) == MISSING ? STAR_NO : STAR_UNSURE;
		ap_pyref_free(&ref);
		free(sub);
	}
	if (verdict == STAR_NO)
		ap_pyref_free(out);
	return verdict;
}

/* `from MOD import name` in MOD itself (`from . import name` in a package's
 * __init__): what MOD bound to name before the import at index at, else its
 * submodule of that name, which the import then imports. */
static void self_from(struct resolver *rs, const struct module *mod, const char *name, size_t at,
                      unsigned depth, ap_pyref *out)
{
	ap_pyref_free(out);
	resolve_binding(rs, mod, name, at, depth + 1, out);
	if (out->kind == AP_PYREF_UNBOUND) {
		char *sub = ap_xasprintf("%s.%s", mod->name, name);
		struct module sm;
		if (ap_pyres_find(rs, sub, &sm, out) == FOUND) {
			out->kind = AP_PYREF_MODULE;
			out->module = sub;
			sub = NULL;
		}
		free(sub);
	}
}

/* --- Submodules loaded ---------------------------------------------------- */


/* Whether module is want or inside it. */
static bool within(const char *module, const char *want)
{
	size_t n = strlen(want);

	return strncmp(module, want, n) == 0 && (module[n] == '\0' || module[n] == '.');
}

static bool is_import(const ap_py_binding *b)
{
	return b->kind == AP_PY_BIND_IMPORT || b->kind == AP_PY_BIND_FROM ||
	       b->kind == AP_PY_BIND_STAR || b->kind == AP_PY_BIND_SUBMODULE;
}

static int loads(struct resolver *rs, const char *module, const char *want, unsigned depth);

/* What binding at of mod loads of want: its module (then a from-import's
 * name as that module's submodule, unless the module binds it, which only
 * mod itself knows for certain, from what it bound before). */
static int binding_loads(struct resolver *rs, const struct module *mod, size_t at,
                         const char *want, unsigned depth)
{
	const ap_py_binding *b = &mod->m->bindings[at];
	char *t, *sub;
	int r;

	rs->visits++;
	if (!is_import(b))
		return LOADS_NO;
	if (depth > RESOLVE_MAX_DEPTH || rs->visits > RESOLVE_MAX_VISITS)
		return LOADS_PERHAPS;
	if ((t = absolute(rs, mod, b->module)) == NULL)
		return LOADS_NO;
	r = loads(rs, t, want, depth + 1);
	if (r != LOADS_YES && b->kind == AP_PY_BIND_FROM) {
		sub = ap_xasprintf("%s.%s", t, b->target);
		int s = loads(rs, sub, want, depth + 1), before = LOADS_PERHAPS;
		if (strcmp(t, mod->name) == 0) {
			ap_pyref ref = {0};
			resolve_binding(rs, mod, b->target, at, depth + 1, &ref);
			before = ref.kind == AP_PYREF_UNBOUND ? LOADS_YES : LOADS_PERHAPS;
			ap_pyref_free(&ref);
		}
		if (s != LOADS_NO)
			r = s == LOADS_YES && before == LOADS_YES ? LOADS_YES : LOADS_PERHAPS;
		free(sub);
	}
	free(t);
	return r == LOADS_YES && b->maybe ? LOADS_PERHAPS : r;
}

static int either(int a, int b)
{
	return a == LOADS_YES || b == LOADS_YES ? LOADS_YES : a != LOADS_NO ? a : b;
}

/* What module's own statements load of want (each kept per resolution). A
 * module being run loads nothing more when imported again: what it loads
 * counts where its run began. */
int ap_pyres_body_loads(struct resolver *rs, const char *module, const char *want, unsigned depth)
{
	ap_buf key = AP_BUF_INIT;
	struct module mod;
	ap_pyref err = {0};
	size_t at;
	int r = LOADS_NO;

	ap_buf_append(&key, module, strlen(module) + 1);
	ap_buf_puts(&key, want);
	at = ap_map_get(rs->loaded, key.data, key.len);
	if (at != AP_MAP_ABSENT) {
		ap_buf_free(&key);
		return at == 0 ? LOADS_NO : (int)at - 1;
	}
	ap_xok(ap_map_put(rs->loaded, key.data, key.len, 0));
	switch (ap_pyres_find(rs, module, &mod, &err)) {
	case FOUND:
		for (size_t i = 0; i < mod.m->nbindings && r != LOADS_YES; i++)
			r = either(r, binding_loads(rs, &mod, i, want, depth));
		break;
	case FAILED:
		r = LOADS_PERHAPS;
		break;
	}
	ap_pyref_free(&err);
	ap_xok(ap_map_put(rs->loaded, key.data, key.len, (size_t)r + 1));
	ap_buf_free(&key);
	return r;
}

/* What importing module (absolute) loads of want: its parents' statements
 * run first, then its own. */
static int loads(struct resolver *rs, const char *module, const char *want, unsigned depth)
{
	int r = LOADS_NO;

	if (within(module, want))
		return LOADS_YES;
	if (!within(module, rs->top))
		return LOADS_NO;
	for (const char *dot = strchr(module, '.'); r != LOADS_YES; dot = strchr(dot + 1, '.')) {
		char *step = dot != NULL ? ap_xstrndup(module, (size_t)(dot - module)) : NULL;
		r = either(r, ap_pyres_body_loads(rs, step != NULL ? step : module, want, depth));
		free(step);
		if (dot == NULL)
			break;
	}
	return r;
}

/* The first binding of mod (a package, being run: it loads nothing more
 * when imported again) before upto that may load its submodule sub
 * (SIZE_MAX: none), and whether it does for certain. */
static size_t first_load(struct resolver *rs, const struct module *mod, const char *sub,
                         size_t upto, unsigned depth, bool *sure)
{
	ap_buf key = AP_BUF_INIT;

	ap_buf_append(&key, mod->name, strlen(mod->name) + 1);
	ap_buf_puts(&key, sub);
	ap_xok(ap_map_put(rs->loaded, key.data, key.len, 0));
	ap_buf_free(&key);
	for (size_t i = 0; i < upto; i++) {
		int r = binding_loads(rs, mod, i, sub, depth);
		if (r != LOADS_NO) {
			*sure = r == LOADS_YES;
			return i;
		}
	}
	return SIZE_MAX;
}

/* A walk's name as a submodule of the package walked. */
struct loading {
	bool asked;
	char *sub;    /* the submodule, when there is one */
	size_t first; /* the first binding that may load it */
	bool sure;    /* and does */
};

enum { LOAD_NONE, LOAD_DECIDED, LOAD_SKIP };

static void walk(struct resolver *rs, const struct module *mod, const char *name, size_t upto,
                 unsigned depth, ap_pyref *out, const ap_py_binding **outside,
                 struct loading *ld);

/* Whether name, which the loads from ld->first up to at (r: what at loads)
 * may or may not make its submodule, is that submodule or unbound either
 * way: no binding of it there, and at loads it for certain, or before them
 * it is unbound (out UNBOUND: a from-import of it then imports the
 * submodule) or that submodule (out MODULE). */
static bool same_either_way(struct resolver *rs, const struct module *mod, const char *name,
                            size_t at, int r, unsigned depth, const struct loading *ld,
                            ap_pyref *out)
{
	const ap_py_binding *outside = NULL;
	struct loading none = {.asked = true};
	bool same;

	/* at itself binds no name (the walk asked) */
	for (size_t i = ld->first; i < at; i++) {
		const ap_py_binding *b = &mod->m->bindings[i];
		if (b->kind == AP_PY_BIND_STAR ||
		    (b->name != NULL && strcmp(b->name, name) == 0 && b->kind != AP_PY_BIND_SUBMODULE))
			return false;
	}
	if (r == LOADS_YES) {
		out->kind = AP_PYREF_MODULE;
		return true;
	}
	/* no load before the first */
	walk(rs, mod, name, ld->first, depth + 1, out, &outside, &none);
	free(none.sub);
	same = outside == NULL &&
	       (out->kind == AP_PYREF_UNBOUND || (out->kind == AP_PYREF_MODULE && out->module != NULL &&
	                                          strcmp(out->module, ld->sub) == 0));
	if (!same)
		ap_pyref_free(out);
	return same;
}

/* What binding at of mod, a package, does to name by loading its submodule
 * of that name: LOAD_DECIDED with out set where the walk ends there (the
 * first load, or one that may be where it was loaded first), LOAD_SKIP for
 * a later load of it (the import binds nothing), LOAD_NONE otherwise. */
static int load_point(struct resolver *rs, const struct module *mod, const char *name, size_t at,
                      unsigned depth, struct loading *ld, ap_pyref *out)
{
	const ap_py_binding *b = &mod->m->bindings[at];
	struct module sm;
	bool sure;
	int r;

	if (!ld->asked) {
		ap_pyref err = {0};
		ld->asked = true;
		ld->sub = ap_xasprintf("%s.%s", mod->name, name);
		if (ap_pyres_find(rs, ld->sub, &sm, &err) == FOUND) {
			ld->first = first_load(rs, mod, ld->sub, at + 1, depth, &ld->sure);
		} else {
			free(ld->sub);
			ld->sub = NULL;
		}
		ap_pyref_free(&err);
	}
	if (ld->sub == NULL || at < ld->first)
		return LOAD_NONE;
	r = at == ld->first ? LOADS_YES : binding_loads(rs, mod, at, ld->sub, depth);
	if (r == LOADS_NO || (at > ld->first && ld->sure))
		return r != LOADS_NO && b->kind == AP_PY_BIND_SUBMODULE ? LOAD_SKIP : LOAD_NONE;
	sure = at == ld->first && ld->sure;
	ap_pyref_free(out);
	if (!sure && !same_either_way(rs, mod, name, at, at == ld->first ? LOADS_PERHAPS : r, depth,
	                              ld, out)) {
		pyref_set(out, AP_PYREF_UNKNOWN,
		          ap_xasprintf("it may be its submodule %s, which the import at line %u may "
		                       "load first", ld->sub, b->line));
	} else if (sure || out->kind == AP_PYREF_MODULE) {
		pyref_set(out, AP_PYREF_MODULE, NULL);
		out->module = ld->sub;
		ld->sub = NULL;
	}
	/* else unbound, or the submodule: a from-import of it imports that */
	out->file = mod->file;
	out->line = b->line;
	return LOAD_DECIDED;
}

/* The functools.partial bindings a walk went through, the outermost first. */
struct partials {
	const ap_py_binding **v;
	size_t n, cap;
};

/* Whether the name partial b is called by holds, before b, what the
 * module's one kind of binding of it binds, not what a star import does. */
static bool callee_holds(struct resolver *rs, const struct module *mod, const ap_py_binding *b,
                         unsigned depth)
{
	const char *callee = b->args->callee;
	ap_pyref ref = {0};
	bool holds;

	resolve_binding(rs, mod, callee, b->value_at, depth + 1, &ref);
	holds = ref.file == mod->file && !ref.perhaps &&
	        ref.kind == (strcmp(callee, "functools") == 0 ? AP_PYREF_MODULE : AP_PYREF_EXTERNAL);
	ap_pyref_free(&ref);
	return holds;
}

/* name as mod's bindings before index upto leave it, passing over star
 * imports from outside the tree (*outside: the last one passed, NULL when
 * none). An alias (`a = b`) or a partial of a name is followed in the same
 * walk, up to RESOLVE_MAX_ALIASES of them, from where its value is read;
 * pp keeps the partials. */
static void walk_bindings(struct resolver *rs, const struct module *mod, const char *name,
                          size_t upto, unsigned depth, ap_pyref *out,
                          const ap_py_binding **outside, struct loading *ld, struct partials *pp)
{
	const ap_py_module *m = mod->m;
	size_t aliases = 0;

	for (size_t i = upto; i-- > 0;) {
		const ap_py_binding *b = &m->bindings[i];
		bool named = b->name != NULL && strcmp(b->name, name) == 0;
		char *target;
		int star;

		rs->visits++;
		if (b->kind == AP_PY_BIND_STAR) {
			target = absolute(rs, mod, b->module);
			if (target == NULL) {
				if (*outside == NULL)
					*outside = b;
				continue;
			}
			star = star_binds(rs, target, name, depth, out);
			if (star == STAR_YES) {
				from_import(rs, target, name, depth + 1, out);
				if (b->why != NULL && out->kind != AP_PYREF_ERROR)
					pyref_set(out, AP_PYREF_UNKNOWN, ap_xstrdup(b->why));
			}
			free(target);
			if (star != STAR_NO)
				return;
		}
		/* what a statement binds to name comes after what it loads */
		if (mod->package && is_import(b) && (!named || b->kind == AP_PY_BIND_SUBMODULE)) {
			int l = load_point(rs, mod, name, i, depth, ld, out);
			if (l == LOAD_DECIDED)
				return;
			if (l == LOAD_SKIP)
				continue;
		}
		if (!named || (b->kind == AP_PY_BIND_SUBMODULE && !mod->package))
			continue;
		if (b->kind == AP_PY_BIND_ALIAS || b->kind == AP_PY_BIND_PARTIAL) {
			if (++aliases > RESOLVE_MAX_ALIASES) {
				pyref_set(out, AP_PYREF_ERROR,
				          ap_xasprintf("%s: line %u: names aliased more than %d deep",
				                       mod->file->path, b->line, RESOLVE_MAX_ALIASES));
				return;
			}
			if (b->kind == AP_PY_BIND_PARTIAL && b->args->after_star &&
			    !callee_holds(rs, mod, b, depth)) {
				pyref_set(out, AP_PYREF_UNKNOWN,
				          ap_xasprintf("it is bound at line %u to what functools.partial "
				                       "returns, and a star import before it may bind %s",
				                       b->line, b->args->callee));
				return;
			}
			if (b->kind == AP_PY_BIND_PARTIAL) {
				ap_xgrow((void **)&pp->v, &pp->cap, pp->n + 1, sizeof *pp->v);
				pp->v[pp->n++] = b;
			}
			name = b->target;
			/* the value is read before its statement binds */
			i = b->value_at;
			free(ld->sub);
			*ld = (struct loading){0};
			continue;
		}
		out->file = mod->file;
		out->line = b->line;
		switch (b->kind) {
		case AP_PY_BIND_DEF:
			out->kind = AP_PYREF_DEF;
			out->def = &m->defs[b->def_index];
			out->line = out->def->line;
			decorated(rs, mod, i, depth, out);
			return;
		case AP_PY_BIND_SUBMODULE: {
			struct module sm;
			/* No such submodule: the import raises, and nothing binds. */
			out->kind = AP_PYREF_UNBOUND;
			target = absolute(rs, mod, b->module);
			if (target == NULL)
				return;
			switch (ap_pyres_find(rs, target, &sm, out)) {
			case FOUND:
				out->kind = AP_PYREF_MODULE;
				out->module = target;
				return;
			case MISSING:
				out->kind = AP_PYREF_UNBOUND;
				break;
			}
			free(target);
			return;
		}
		case AP_PY_BIND_DEL:
			out->kind = AP_PYREF_UNBOUND;
			out->file = NULL;
			out->line = 0;
			return;
		case AP_PY_BIND_CLASS:
			out->kind = AP_PYREF_CLASS;
			out->binding = b;
			return;
		case AP_PY_BIND_FROM:
			target = absolute(rs, mod, b->module);
			if (target == NULL) {
				out->kind = AP_PYREF_EXTERNAL;
				out->why = ap_xasprintf("imported from %s", b->module);
				return;
			}
			if (strcmp(target, mod->name) == 0)
				self_from(rs, mod, b->target, i, depth, out);
			else
				from_import(rs, target, b->target, depth + 1, out);
			free(target);
			return;
		case AP_PY_BIND_IMPORT: {
			/* `import a.b` binds a; `import a.b as c` binds c to a.b */
			size_t first = strcspn(b->module, ".");
			out->kind = AP_PYREF_MODULE;
			target = strlen(name) == first && strncmp(name, b->module, first) == 0
			                 ? ap_xstrndup(b->module, first)
			                 : ap_xstrdup(b->module);
			out->module = absolute(rs, mod, target);
			free(target);
			return;
		}
		case AP_PY_BIND_ALIAS:
		case AP_PY_BIND_PARTIAL:
		case AP_PY_BIND_STAR:
		case AP_PY_BIND_OTHER:
			out->kind = AP_PYREF_VALUE;
			return;
		case AP_PY_BIND_UNKNOWN:
			out->kind = AP_PYREF_UNKNOWN;
			out->why = ap_xstrdup(b->why);
			return;
		}
	}
	out->kind = AP_PYREF_UNBOUND;
	out->file = NULL;
	out->line = 0;
}

static void walk(struct resolver *rs, const struct module *mod, const char *name, size_t upto,
                 unsigned depth, ap_pyref *out, const ap_py_binding **outside,
                 struct loading *ld)
{
	struct partials pp = {0};

	walk_bindings(rs, mod, name, upto, depth, out, outside, ld, &pp);
	if (pp.n > 0) {
		/* functools.partial flattens a partial of a partial: the
		 * arguments of the innermost first */
		ap_py_args all = {0};
		for (size_t k = pp.n; k-- > 0;)
			ap_py_args_add(&all, pp.v[k]->args);
		ap_pyref_partial(out, pp.v[0], &all);
		free(all.keywords);
	}
	free(pp.v);
}

/* What a star import from outside the tree binds only importing that module
 * tells (its __all__, or its public names): any name, from outside. Where
 * what the name held before is no def either, the answer is the same both
 * ways: no def. A write into globals() under a name not known may bind
 * anything. */
static void resolve_binding(struct resolver *rs, const struct module *mod, const char *name,
                            size_t upto, unsigned depth, ap_pyref *out)
{
	const ap_py_binding *outside = NULL;
	struct loading ld = {0};

	walk(rs, mod, name, upto, depth, out, &outside, &ld);
	free(ld.sub);
	if (outside == NULL || out->kind == AP_PYREF_ERROR)
		return;
	if (strcmp(outside->module, AP_PY_NAMESPACE_WRITE) == 0) {
		/* any value, a def of the tree too */
		pyref_set(out, AP_PYREF_UNKNOWN, ap_xstrdup(outside->why));
	} else if (out->kind == AP_PYREF_UNBOUND || out->kind == AP_PYREF_VALUE ||
	           out->kind == AP_PYREF_EXTERNAL) {
		pyref_set(out, AP_PYREF_EXTERNAL,
		          ap_xasprintf("`from %s import *` at line %u may bind it from outside the "
		                       "tree, and what it held before is no def either",
		                       outside->module, outside->line));
		out->perhaps = true;
	} else {
		pyref_set(out, AP_PYREF_UNKNOWN,
		          ap_xasprintf("`from %s import *` at line %u may rebind it, from outside "
		                       "the tree (only importing %s tells what it binds)",
		                       outside->module, outside->line, outside->module));
	}
	out->file = mod->file;
	out->line = outside->line;
	out->def = NULL;
}

/* Every result is kept, a cycle's too: each (module, name) is resolved once
 * a resolution, so that star imports however entangled (a chain, modules
 * importing each other) take time linear in the bindings they reach. An
 * import that leads back to a (module, name) being resolved reads it as
 * binding nothing: in CPython the module imported again is then only partly
 * run, and binds no more than what came before the import. */
static void resolve_in(struct resolver *rs, const char *module, const char *name, unsigned depth,
                       ap_pyref *out, bool *missing)
{
	struct module mod;
	ap_buf key = AP_BUF_INIT;
	size_t at;

	memset(out, 0, sizeof *out);
	*missing = false;
	if (depth > RESOLVE_MAX_DEPTH || rs->visits > RESOLVE_MAX_VISITS) {
		out->kind = AP_PYREF_ERROR;
		out->why = depth > RESOLVE_MAX_DEPTH
		                   ? ap_xasprintf("imports nest deeper than %d modules",
		                                  RESOLVE_MAX_DEPTH)
		                   : ap_xasprintf("imports too entangled: more than %d bindings "
		                                  "visited",
		                                  RESOLVE_MAX_VISITS);
		return;
	}
	ap_buf_append(&key, module, strlen(module) + 1);
	ap_buf_puts(&key, name);
	at = ap_map_get(rs->active, key.data, key.len);
	if (at != AP_MAP_ABSENT && at != 0) {
		out->kind = AP_PYREF_UNBOUND;
		ap_buf_free(&key);
		return;
	}
	at = ap_map_get(rs->known, key.data, key.len);
	if (at != AP_MAP_ABSENT) {
		ap_pyref_copy(out, &rs->done[at].ref);
		*missing = rs->done[at].missing;
		ap_buf_free(&key);
		return;
	}
	switch (ap_pyres_find(rs, module, &mod, out)) {
	case MISSING:
		out->kind = AP_PYREF_UNBOUND;
		*missing = true;
		break;
	case FOUND:
		ap_xok(ap_map_put(rs->active, key.data, key.len, 1));
		resolve_binding(rs, &mod, name, mod.m->nbindings, depth, out);
		ap_xok(ap_map_put(rs->active, key.data, key.len, 0));
		break;
	}
	remember(rs, &key, out, *missing);
	ap_buf_free(&key);
}

struct resolver *ap_pyres_new(ap_reader *r, const ap_pyconf *c, const char *module,
                                     const struct busy *chain)
{
	struct resolver *rs = ap_xcalloc(1, sizeof *rs);

	rs->r = r;
	rs->c = c;
	rs->chain = chain;
	rs->top = ap_xstrndup(module, strcspn(module, "."));
	rs->active = ap_xnonnull(ap_map_new());
	rs->known = ap_xnonnull(ap_map_new());
	rs->modules = ap_xnonnull(ap_map_new());
	rs->loaded = ap_xnonnull(ap_map_new());
	return rs;
}

void ap_pyres_free(struct resolver *rs)
{
	if (rs == NULL)
		return;
	for (size_t i = 0; i < rs->ndone; i++)
		ap_pyref_free(&rs->done[i].ref);
	free(rs->done);
	ap_map_free(rs->known);
	for (size_t i = 0; i < rs->nfound; i++) {
		ap_pycompat_state_free(&rs->found[i]->compat);
		free(rs->found[i]->name);
		free(rs->found[i]->why);
		free(rs->found[i]);
	}
	free(rs->found);
	ap_map_free(rs->modules);
	ap_map_free(rs->loaded);
	ap_map_free(rs->active);
	free(rs->top);
	free(rs);
}

/* `from module import name` (module of the package rs reads). */
void ap_pyres_top(struct resolver *rs, const char *module, const char *name, ap_pyref *out,
                        bool *missing)
{
	resolve_in(rs, module, name, 0, out, missing);
	if (out->kind == AP_PYREF_UNBOUND && !*missing) {
		ap_pyref_free(out);
		from_import(rs, module, name, 0, out);
	}
}
