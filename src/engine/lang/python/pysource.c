/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/lang/python/pysource.h"
#include "engine/lang/space.h"
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

/* --- Options and parsed modules ------------------------------------------- */

/* A rule's names, spelt as the reader spells those it reads. */
static void normalize_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ap_py_name_normalize(&v[i]);
}

int ap_pyconf_load(const char *pack, const ap_yfield *assume_false, ap_pyconf *c)
{
	ap_buf key = AP_BUF_INIT;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;

	memset(c, 0, sizeof *c);
	if (assume_false->key != NULL)
		rc = ap_y_strings(pack, assume_false->val, "assume_false", &names, &n);
	if (rc == 0)
		normalize_names(names, n);
	c->false_names = ap_xcalloc(n + 1, sizeof *c->false_names);
	for (size_t i = 0; i < n; i++)
		c->false_names[i] = names[i];
	free(names);
	c->nfalse = n;
	ap_buf_puts(&key, "python");
	for (size_t i = 0; i < n; i++)
		ap_buf_printf(&key, "%c%s", i ? ',' : ':', c->false_names[i]);
	c->key = ap_buf_detach(&key);
	return rc;
}

void ap_pyconf_free(ap_pyconf *c)
{
	for (size_t i = 0; i < c->nfalse; i++)
		free(c->false_names[i]);
	free(c->false_names);
	free(c->key);
	memset(c, 0, sizeof *c);
}

/* What a parse found of whether a module its try statements import is
 * found: the parse holds only where each is still so. */
struct assumed {
	char *written; /* as the import wrote it */
	int found;
};

struct parsed {
	ap_py_module *m;
	char *error;
	struct assumed *assumed;
	size_t nassumed;
};

static void parsed_free(void *p)
{
	struct parsed *x = p;

	ap_py_module_free(x->m);
	free(x->error);
	for (size_t i = 0; i < x->nassumed; i++)
		free(x->assumed[i].written);
	free(x->assumed);
	free(x);
}

/* The file of the module (dotted) as Python's finder picks it: the package
 * NAME/__init__.py before the module NAME.py beside it; NULL when neither
 * is there, else *package says which. */
static const ap_file *module_file(ap_reader *r, const char *name, bool *package)
{
	char *base = ap_xstrdup(name);
	const ap_file *found = NULL;

	for (char *p = base; *p; p++)
		if (*p == '.')
			*p = '/';
	for (int pkg = 1; pkg >= 0 && found == NULL; pkg--) {
		char *path = ap_xasprintf(pkg ? "%s/__init__.py" : "%s.py", base);
		const ap_file *f = ap_reader_get(r, path);
		free(path);
		if (f->status != AP_FILE_MISSING) {
			found = f;
			*package = pkg;
		}
	}
	free(base);
	return found;
}

/* The dotted name of the module at path ("aiter/ops/x.py": "aiter.ops.x",
 * *package false; "aiter/ops/__init__.py": "aiter.ops", true). */
static char *module_of_path(const char *path, bool *package)
{
	size_t len = strlen(path);
	char *name;

	if (len > 3 && strcmp(path + len - 3, ".py") == 0)
		len -= 3;
	*package = len >= 9 && strncmp(path + len - 9, "/__init__", 9) == 0;
	if (*package)
		len -= 9;
	name = ap_xstrndup(path, len);
	for (char *p = name; *p; p++)
		if (*p == '/')
			*p = '.';
	return name;
}

/* The absolute name of an import written in the module `of` (a package
 * when package); NULL when its dots lead above the top. */
static char *absolute_import(const char *of, bool package, const char *written)
{
	size_t dots = strspn(written, ".");
	char *base, *out;

	if (dots == 0)
		return ap_xstrdup(written);
	base = ap_xstrdup(of);
	/* A module's package is its parent; a package is its own. */
	for (size_t k = package ? 1 : 0; k < dots; k++) {
		char *dot = strrchr(base, '.');
		if (dot == NULL) {
			free(base);
			return NULL;
		}
		*dot = '\0';
	}
	out = written[dots] ? ap_xasprintf("%s.%s", base, written + dots) : ap_xstrdup(base);
	free(base);
	return out;
}

/* Whether the module (dotted, of the tree) is there: its package or file,
 * or a folder of its name (a namespace package, unless a module file beside
 * it is taken first: found either way); without either, a file of its name
 * that another loader takes (an extension module, bytecode), which the
 * parent's listing shows, is not known. */
static int in_tree(ap_reader *r, const char *name)
{
	const char *last = strrchr(name, '.');
	char *base = ap_xstrdup(name), *folder;
	const ap_file *listing;
	size_t len;
	bool package;
	int found = 0;

	if (module_file(r, name, &package) != NULL) {
		free(base);
		return 1;
	}
	for (char *p = base; *p; p++)
		if (*p == '.')
			*p = '/';
	folder = ap_xasprintf("%s/", base);
	listing = ap_reader_get(r, folder);
	free(folder);
	if (listing->status == AP_FILE_OK) {
		free(base);
		return 1;
	}
	last = last ? last + 1 : name;
	len = strlen(last);
	base[strlen(base) - len] = '\0';
	listing = ap_reader_get(r, base[0] ? base : "./");
	free(base);
	if (listing->status != AP_FILE_OK)
		return listing->status == AP_FILE_MISSING ? 0 : -1;
	for (const char *at = listing->data, *end = at + listing->len; at < end && found == 0;) {
		const char *nl = memchr(at, '\n', (size_t)(end - at));
		size_t n = nl ? (size_t)(nl - at) : (size_t)(end - at);
		if (n > len && strncmp(at, last, len) == 0 && at[len] == '.')
			found = -1;
		at += n + 1;
	}
	return found;
}

/* A parse's questions to the tree and to the interpreter that will import
 * it (the reader's), about the file f. */
struct asking {
	ap_reader *r;
	const ap_file *f;
	struct parsed *into; /* the parse's record of its answers; NULL: none */
};

static int import_found(const struct asking *a, const char *written)
{
	bool package, inside;
	char *of = module_of_path(a->f->path, &package), *name = absolute_import(of, package, written);
	struct ap_pytarget *t = ap_reader_python(a->r);
	int found = -1;

	if (name != NULL) {
		size_t top = strcspn(of, ".");
		inside = strncmp(name, of, top) == 0 && (name[top] == '\0' || name[top] == '.');
		found = inside ? in_tree(a->r, name) : t != NULL ? ap_pytarget_finds(t, name) : -1;
	}
	free(of);
	free(name);
	return found;
}

static int can_import(void *ctx, const char *written)
{
	struct asking *a = ctx;
	int found = import_found(a, written);
	struct parsed *p = a->into;

	p->assumed = ap_xrealloc(p->assumed, (p->nassumed + 1) * sizeof *p->assumed);
	p->assumed[p->nassumed++] = (struct assumed){ap_xstrdup(written), found};
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
static bool still_holds(ap_reader *r, const ap_file *f, const struct parsed *p)
{
	const struct asking a = {r, f, NULL};

	for (size_t i = 0; i < p->nassumed; i++)
		if (import_found(&a, p->assumed[i].written) != p->assumed[i].found)
			return false;
	return true;
}

const ap_py_module *ap_pysource_module(ap_reader *r, const ap_file *f, const ap_pyconf *c,
                                       const char **error)
{
	struct parsed *p = ap_reader_derived(r, f, c->key);

	if (p == NULL || !still_holds(r, f, p)) {
		struct asking a = {r, f, NULL};
		ap_py_options opt = {.false_names = (const char *const *)c->false_names,
		                     .facts = facts, .can_import = can_import, .ctx = &a};
		p = a.into = ap_xcalloc(1, sizeof *p);
		if (ap_py_parse(&p->m, f->data, f->len, &opt) < 0) {
			p->error = ap_xstrdup(ap_error_last());
		} else if (ap_reader_charge(r, ap_py_module_bytes(p->m), "parsing it") < 0) {
			/* another scan, with room left, may parse it */
			ap_py_module_free(p->m);
			p->m = NULL;
			p->error = ap_xstrdup(ap_error_last());
			ap_reader_keep_here(r, f, c->key, p, parsed_free);
			*error = p->error;
			return NULL;
		}
		ap_reader_keep(r, f, c->key, p, parsed_free);
	}
	*error = p->error;
	return p->m;
}

int ap_pysource_names_load(const ap_kind_load *l, const char *what, const ap_ynode *n,
                           char ***names, size_t *count)
{
	int rc = ap_y_strings(l->pack, n, what, names, count);

	if (rc == 0)
		normalize_names(*names, *count);
	if (rc == 0 && *count > 1 && *count != l->rule->npaths)
		rc = ap_y_fail(l->pack, n,
		               "'%s' lists %zu names for %zu files: give one name, or one per file",
		               what, *count, l->rule->npaths);
	return rc;
}

char *ap_pysource_module_of(const char *path)
{
	size_t len = strlen(path);
	bool package, start = true;
	char *name;

	if (len < 4 || strcmp(path + len - 3, ".py") != 0)
		return NULL;
	name = module_of_path(path, &package);
	for (const char *p = name; *p; p++) {
		bool ok = *p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		          (!start && *p >= '0' && *p <= '9') || (!start && *p == '.' && p[1] != '\0');
		start = *p == '.';
		if (!ok) {
			free(name);
			return NULL;
		}
	}
	return name;
}

/* --- Resolving names through imports -------------------------------------- */

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

static void pyref_set(ap_pyref *ref, ap_pyref_kind kind, char *why)
{
	ap_pyref_free(ref);
	ref->kind = kind;
	ref->why = why;
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

/* A (module, name) resolved, kept for the rest of the resolution. */
struct resolved {
	ap_pyref ref;
	bool missing;
};

/* A package's _BACKWARD_COMPAT_MAP, read once a resolution (see compat_child). */
struct compat {
	int state; /* 0 not read; 1 read; -1 not readable: why */
	struct compat_entry {
		char *old, *new;
	} *v;
	size_t n, cap;
	char *why;
};

/* A module name as the finder found it, once per resolution. */
struct found {
	struct module {
		const char *name; /* dotted, as Python names it (after a compat redirect, the new one) */
		bool package;     /* an __init__.py */
		const ap_file *file;
		const ap_py_module *m;
	} mod;                  /* file NULL: no such module */
	char *name;
	/* ERROR (cannot be read or parsed) or UNKNOWN (which file it is), why says
	 * so; 0 (AP_PYREF_DEF, never a failure) when found or missing */
	ap_pyref_kind failed;
	char *why;
	struct compat compat;
};

struct resolver {
	ap_reader *r;
	const ap_pyconf *c;
	const char *top;  /* the package tree: modules under this top-level name */
	/* (module, name) being resolved -> 1 (0 once done): an import that leads
	 * back to one binds nothing on the way back */
	ap_map *active;
	ap_map *known;    /* (module, name) resolved -> index into done */
	struct resolved *done;
	size_t ndone, done_cap;
	ap_map *modules;  /* module name -> index into found */
	struct found **found;
	size_t nfound, found_cap;
	unsigned redirects; /* compat redirects being looked up, one inside another */
	size_t visits;
};

static void remember(struct resolver *rs, const ap_buf *key, const ap_pyref *ref, bool missing)
{
	struct resolved *d;

	ap_xgrow((void **)&rs->done, &rs->done_cap, rs->ndone + 1, sizeof *rs->done);
	d = &rs->done[rs->ndone];
	ap_pyref_copy(&d->ref, ref);
	d->missing = missing;
	ap_xok(ap_map_put(rs->known, key->data, key->len, rs->ndone++));
}

enum { FOUND, MISSING, FAILED };

static int find_module(struct resolver *rs, const char *name, struct module *mod, ap_pyref *out);

/* AITER's aiter/ops/triton/__init__.py (since v0.1.12) puts a finder first on
 * sys.meta_path that imports aiter.ops.triton.OLD as aiter.ops.triton.NEW for
 * each "OLD": "NEW" of its _BACKWARD_COMPAT_MAP (modules moved into
 * subpackages), before any other finder looks for OLD, and that gives way to
 * them when NEW cannot be imported; its module __getattr__ does the same for
 * `from aiter.ops.triton import OLD`. Its children are found so where the
 * package binds both the map and the finder. */
#define COMPAT_PACKAGE "ops.triton"
#define COMPAT_MAP "_BACKWARD_COMPAT_MAP"
#define COMPAT_FINDER "_backward_compat_find_spec"
#define COMPAT_MAX_REDIRECTS 8

/* The next token of s[0, n) from *i on, comments, line ends and line
 * continuations skipped (the map is a bracketed literal); its end, or n. */
static size_t compat_token(const char *s, size_t n, size_t *i)
{
	for (;;) {
		while (*i < n && strchr(" \t\f\r\n", s[*i]) != NULL && s[*i] != '\0')
			(*i)++;
		if (*i < n && s[*i] == '\\' && *i + 1 < n && (s[*i + 1] == '\n' || s[*i + 1] == '\r'))
			*i += 2;
		else if (*i < n && s[*i] == '#')
			*i = ap_py_line_end(s, *i, n);
		else
			return *i < n ? ap_py_token_end(s, *i, n) : n;
	}
}

/* The str literal s[a, e) without prefix or escapes, copied; NULL otherwise. */
static char *compat_string(const char *s, size_t a, size_t e)
{
	size_t q = e - a >= 6 && (memcmp(s + a, "'''", 3) == 0 || memcmp(s + a, "\"\"\"", 3) == 0)
	                   ? 3
	                   : 1;

	if (e - a < 2 * q || (s[a] != '\'' && s[a] != '"') || s[e - 1] != s[a] ||
	    memchr(s + a, '\\', e - a) != NULL)
		return NULL;
	return ap_xstrndup(s + a + q, e - a - 2 * q);
}

/* Whether the token s[i, e) is the one byte c. */
static bool compat_punct(const char *s, size_t i, size_t e, char c)
{
	return e == i + 1 && s[i] == c;
}

/* Reads `_BACKWARD_COMPAT_MAP = {"old": "new", ...}` at its binding b. */
static bool compat_read(const ap_py_module *m, const ap_py_binding *b, struct compat *cm)
{
	const char *s = m->src;
	size_t n = m->src_len, i = 0, e;

	for (unsigned line = 1; line < b->line && i < n; line++)
		i = ap_py_line_end(s, i, n) + 1;
	if (i == 0 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	e = compat_token(s, n, &i);
	if (e - i != strlen(COMPAT_MAP) || memcmp(s + i, COMPAT_MAP, e - i) != 0)
		return false;
	i = e;
	e = compat_token(s, n, &i);
	if (!compat_punct(s, i, e, '='))
		return false;
	i = e;
	e = compat_token(s, n, &i);
	if (!compat_punct(s, i, e, '{'))
		return false;
	for (;;) {
		struct compat_entry en;
		i = e;
		e = compat_token(s, n, &i);
		if (compat_punct(s, i, e, '}'))
			return true;
		if ((en.old = compat_string(s, i, e)) == NULL)
			return false;
		i = e;
		e = compat_token(s, n, &i);
		en.new = NULL;
		if (compat_punct(s, i, e, ':')) {
			i = e;
			e = compat_token(s, n, &i);
			en.new = compat_string(s, i, e);
		}
		if (en.new == NULL) {
			free(en.old);
			return false;
		}
		ap_xgrow((void **)&cm->v, &cm->cap, cm->n + 1, sizeof *cm->v);
		cm->v[cm->n++] = en;
		i = e;
		e = compat_token(s, n, &i);
		if (compat_punct(s, i, e, '}'))
			return true;
		if (!compat_punct(s, i, e, ','))
			return false;
	}
}

/* What the compat map of the package fd makes of its child: 0 nothing, 1
 * *to (the new name, relative to the package), -1 not known (out says why). */
static int compat_child(struct found *fd, const char *child, const char **to, ap_pyref *out)
{
	struct compat *cm = &fd->compat;
	const ap_py_module *m = fd->mod.m;
	const ap_py_binding *map, *finder;

	if (cm->state == 0) {
		map = ap_py_lookup(m, COMPAT_MAP);
		finder = ap_py_lookup(m, COMPAT_FINDER);
		cm->state = 1;
		if (map != NULL && finder != NULL && finder->kind == AP_PY_BIND_DEF) {
			if (map->kind == AP_PY_BIND_UNKNOWN)
				cm->why = ap_xasprintf("%s: line %u: %s", fd->mod.file->path, map->line,
				                       map->why);
			else if (map->kind != AP_PY_BIND_OTHER || !compat_read(m, map, cm))
				cm->why = ap_xasprintf("%s: line %u: the %s there is no dict of str "
				                       "literals the reader can read",
				                       fd->mod.file->path, map->line, COMPAT_MAP);
			cm->state = cm->why != NULL ? -1 : 1;
		}
	}
	if (cm->state < 0) {
		pyref_set(out, AP_PYREF_UNKNOWN,
		          ap_xasprintf("which module %s.%s is depends on a redirect of old module "
		                       "paths: %s",
		                       fd->name, child, cm->why));
		return -1;
	}
	/* a dict literal keeps the last of a key given twice */
	for (size_t i = cm->n; i-- > 0;) {
		if (strcmp(cm->v[i].old, child) == 0) {
			*to = cm->v[i].new;
			return 1;
		}
	}
	return 0;
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
	r = find_module(rs, moved, &pkg, &ignored);
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

	mod->file = module_file(rs->r, fd->name, &mod->package);
	mod->name = fd->name;
	if (mod->file == NULL)
		return;
	fd->failed = AP_PYREF_ERROR;
	if (mod->file->status != AP_FILE_OK) {
		fd->why = ap_xasprintf("%s: %s", mod->file->path, mod->file->reason);
		return;
	}
	mod->m = ap_pysource_module(rs->r, mod->file, rs->c, &error);
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
		kind = find_module(rs, moved, &nm, &why);
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
static int find_module(struct resolver *rs, const char *name, struct module *mod, ap_pyref *out)
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
	return absolute_import(mod->name, mod->package, written);
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

	if (find_module(rs, target, &mod, &err) != FOUND || ap_py_lookup(mod.m, COMPAT_MAP) != NULL ||
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
	switch (find_module(rs, sub, &sm, out)) {
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

/* Whether the decorator of the def in out, as mod binds it, keeps the
 * def's signature: one defined in the tree whose body wraps what it returns
 * with functools.wraps (a wrapper that takes what the def takes, whose
 * signature is the def's); otherwise out turns UNKNOWN. */
static void resolve_binding(struct resolver *rs, const struct module *mod, const char *name,
                            size_t upto, unsigned depth, ap_pyref *out);

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

/* Whether the decorator d gives back what it is given: its body is `return
 * FN` of its first parameter, or, applied with arguments (a factory), it is
 * `def INNER(FN): return FN` then `return INNER`. */
static bool returns_argument(const ap_py_module *m, const ap_py_def *d, bool called)
{
	const char *t[11];
	size_t len[11], n = body_tokens(m, d, t, len, 10);

	if (!called)
		return n == 2 && d->nparams >= 1 && d->params[0].kind == AP_PY_POS &&
		       tok_is(t[0], len[0], "return") && tok_is(t[1], len[1], d->params[0].name);
	return n == 10 && tok_is(t[0], len[0], "def") && tok_is(t[2], len[2], "(") &&
	       tok_is(t[4], len[4], ")") && tok_is(t[5], len[5], ":") &&
	       tok_is(t[6], len[6], "return") && len[7] == len[3] &&
	       memcmp(t[7], t[3], len[3]) == 0 && tok_is(t[8], len[8], "return") &&
	       len[9] == len[1] && memcmp(t[9], t[1], len[1]) == 0;
}

static void decorated(struct resolver *rs, const struct module *mod, unsigned depth, ap_pyref *out)
{
	const char *dec = out->def->decorator;
	ap_pyref ref = {0};
	bool keeps = false;

	if (dec == NULL)
		return;
	if (strchr(dec, '.') == NULL && strcmp(dec, "a decorator expression") != 0) {
		resolve_binding(rs, mod, dec, mod->m->nbindings, depth + 1, &ref);
		if (ref.kind == AP_PYREF_DEF && ref.file != NULL && ref.file->status == AP_FILE_OK) {
			const char *error;
			const ap_py_module *dm = ap_pysource_module(rs->r, ref.file, rs->c, &error);
			keeps = dm != NULL && (memmem(dm->src + ref.def->body_off,
			                              ref.def->body_end - ref.def->body_off, "wraps(",
			                              6) != NULL ||
			                       returns_argument(dm, ref.def, out->def->decorator_called));
		}
	}
	ap_pyref_free(&ref);
	if (keeps)
		return;
	out->kind = AP_PYREF_UNKNOWN;
	out->why = ap_xasprintf("%s (line %u) is decorated with @%s%s, which may bind it to "
	                        "something else", out->def->qualname, out->def->line, dec,
	                        out->def->decorator_called ? "(...)" : "");
	out->def = NULL;
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
	if ((verdict = find_module(rs, at, other, out)) == MISSING) {
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

	switch (find_module(rs, module, &mod, out)) {
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
		                                       : STAR_YES;
		if (verdict == STAR_FAILED)
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
		verdict = find_module(rs, sub, &sm, &ref) == MISSING ? STAR_NO : STAR_UNSURE;
		ap_pyref_free(&ref);
		free(sub);
	}
	if (verdict == STAR_NO)
		ap_pyref_free(out);
	return verdict;
}

/* The functools.partial bindings a walk went through, the outermost first. */
struct partials {
	const ap_py_binding **v;
	size_t n, cap;
};

/* Appends the keywords of more to all's, a name given again once (the
 * later value is the one a partial keeps). */
static void keywords_add(ap_py_args *all, const ap_py_args *more)
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

/* out as `NAME = functools.partial(out, ...)`, binding b, leaves it, the
 * partial's arguments args (b's, with those of partials in b's module it is
 * a partial of). */
static void partial_of(ap_pyref *out, const ap_py_binding *b, const ap_py_args *args)
{
	ap_py_args all = {0};
	const ap_py_def *base;
	char *why, *qualname;
	ap_py_def *v;

	if (out->kind == AP_PYREF_ERROR || out->kind == AP_PYREF_UNKNOWN)
		return;
	if (out->kind != AP_PYREF_DEF) {
		pyref_set(out, AP_PYREF_UNKNOWN,
		          ap_xasprintf("it is bound at line %u to functools.partial of %s, which is %s",
		                       b->line, b->target, ap_pyref_kind_name(out->kind)));
		return;
	}
	/* partial(partial(f, 1), 2) is partial(f, 1, 2) */
	base = out->partial_of != NULL ? out->partial_of : out->def;
	keywords_add(&all, &out->partial_args);
	keywords_add(&all, args);
	qualname = ap_xasprintf("%s (functools.partial of %s)", b->name, base->qualname);
	v = ap_pydef_partial(base, &all, qualname, &why);
	if (v == NULL) {
		pyref_set(out, AP_PYREF_UNKNOWN,
		          ap_xasprintf("the arguments of the functools.partial at line %u do not bind "
		                       "to %s: %s", b->line, base->qualname, why));
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

/* Whether the name partial b is called by holds, before b, what the
 * module's one kind of binding of it binds, not what a star import does. */
static bool callee_holds(struct resolver *rs, const struct module *mod, const ap_py_binding *b,
                         unsigned depth)
{
	const char *callee = b->args->callee;
	ap_pyref ref = {0};
	bool holds;

	resolve_binding(rs, mod, callee, b->value_at, depth + 1, &ref);
	holds = ref.file == mod->file && ref.kind == (strcmp(callee, "functools") == 0
	                                                      ? AP_PYREF_MODULE
	                                                      : AP_PYREF_EXTERNAL);
	ap_pyref_free(&ref);
	return holds;
}

/* name as mod's bindings before index upto leave it. An alias (`a = b`) or
 * a partial of a name is followed in the same walk, up to
 * RESOLVE_MAX_ALIASES of them; pp keeps the partials. */
static void resolve_walk(struct resolver *rs, const struct module *mod, const char *name,
                         size_t upto, unsigned depth, ap_pyref *out, struct partials *pp)
{
	const ap_py_module *m = mod->m;
	size_t aliases = 0;

	for (size_t i = upto; i-- > 0;) {
		const ap_py_binding *b = &m->bindings[i];
		char *target;
		int star;

		rs->visits++;
		if (b->kind == AP_PY_BIND_STAR) {
			target = absolute(rs, mod, b->module);
			star = target != NULL ? star_binds(rs, target, name, depth, out) : STAR_NO;
			if (star == STAR_YES) {
				from_import(rs, target, name, depth + 1, out);
				if (b->why != NULL && out->kind != AP_PYREF_ERROR)
					pyref_set(out, AP_PYREF_UNKNOWN, ap_xstrdup(b->why));
			}
			free(target);
			if (star != STAR_NO)
				return;
			continue;
		}
		if (b->name == NULL || strcmp(b->name, name) != 0)
			continue;
		if (b->kind == AP_PY_BIND_SUBMODULE && !mod->package)
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
			continue;
		}
		out->file = mod->file;
		out->line = b->line;
		switch (b->kind) {
		case AP_PY_BIND_DEF:
			out->kind = AP_PYREF_DEF;
			out->def = &m->defs[b->def_index];
			out->line = out->def->line;
			decorated(rs, mod, depth, out);
			return;
		case AP_PY_BIND_SUBMODULE: {
			struct module sm;
			/* No such submodule: the import raises, and nothing binds. */
			out->kind = AP_PYREF_UNBOUND;
			target = absolute(rs, mod, b->module);
			if (target == NULL)
				return;
			switch (find_module(rs, target, &sm, out)) {
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

static void resolve_binding(struct resolver *rs, const struct module *mod, const char *name,
                            size_t upto, unsigned depth, ap_pyref *out)
{
	struct partials pp = {0};

	resolve_walk(rs, mod, name, upto, depth, out, &pp);
	if (pp.n > 0) {
		/* functools.partial flattens a partial of a partial: the
		 * arguments of the innermost first */
		ap_py_args all = {0};
		for (size_t k = pp.n; k-- > 0;)
			keywords_add(&all, pp.v[k]->args);
		partial_of(out, pp.v[0], &all);
		free(all.keywords);
	}
	free(pp.v);
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
	switch (find_module(rs, module, &mod, out)) {
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

void ap_pysource_resolve(ap_reader *r, const ap_pyconf *c, const char *module, const char *name,
                         ap_pyref *out, bool *missing)
{
	char *top = ap_xstrndup(module, strcspn(module, "."));
	struct resolver rs = {.r = r, .c = c, .top = top, .active = ap_xnonnull(ap_map_new()),
	                      .known = ap_xnonnull(ap_map_new()),
	                      .modules = ap_xnonnull(ap_map_new())};

	resolve_in(&rs, module, name, 0, out, missing);
	if (out->kind == AP_PYREF_UNBOUND && !*missing) {
		ap_pyref_free(out);
		from_import(&rs, module, name, 0, out);
	}
	for (size_t i = 0; i < rs.ndone; i++)
		ap_pyref_free(&rs.done[i].ref);
	free(rs.done);
	ap_map_free(rs.known);
	for (size_t i = 0; i < rs.nfound; i++) {
		struct compat *cm = &rs.found[i]->compat;
		for (size_t k = 0; k < cm->n; k++) {
			free(cm->v[k].old);
			free(cm->v[k].new);
		}
		free(cm->v);
		free(cm->why);
		free(rs.found[i]->name);
		free(rs.found[i]->why);
		free(rs.found[i]);
	}
	free(rs.found);
	ap_map_free(rs.modules);
	ap_map_free(rs.active);
	free(top);
}
