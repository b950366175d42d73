/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/lang/python/pysource.h"
#include "engine/pytarget.h"

/* Import chains deeper than this are refused (AITER's are a few levels). */
#define RESOLVE_MAX_DEPTH 64
/* Bindings one resolution may visit. Each (module, name) is resolved once,
 * so a tree's imports are walked about once a name; only star imports that
 * lead back to one another defeat that, and this bounds them (a tree is
 * untrusted input: its time must be too). */
#define RESOLVE_MAX_VISITS 20000

/* --- Options and parsed modules ------------------------------------------- */

int ap_pyconf_load(const char *pack, const ap_yfield *assume_false, ap_pyconf *c)
{
	ap_buf key = AP_BUF_INIT;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;

	memset(c, 0, sizeof *c);
	if (assume_false->key != NULL)
		rc = ap_y_strings(pack, assume_false->val, "assume_false", &names, &n);
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
		if (ap_py_parse(&p->m, f->data, f->len, &opt) < 0)
			p->error = ap_xstrdup(ap_error_last());
		ap_reader_keep(r, f, c->key, p, parsed_free);
	}
	*error = p->error;
	return p->m;
}

int ap_pysource_names_load(const ap_kind_load *l, const char *what, const ap_ynode *n,
                           char ***names, size_t *count)
{
	int rc = ap_y_strings(l->pack, n, what, names, count);

	if (rc == 0 && *count > 1 && *count != l->rule->npaths)
		rc = ap_y_fail(l->pack, n,
		               "'%s' lists %zu names for %zu files: give one name, or one per file",
		               what, *count, l->rule->npaths);
	return rc;
}

ap_match *ap_pysource_match(ap_kind_run *run, const ap_file *f, unsigned line)
{
	/* A rule has a match or two: the line is found by counting, without
	 * normalizing the whole file for its line table. */
	const char *s = f->data;
	size_t n = f->len, at = 0;

	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		at = 3;
	/* Lines end as the parser numbered them: at LF, CRLF or a lone CR. */
	for (unsigned k = 1; k < line && (at = ap_py_line_end(s, at, n)) < n; k++)
		at += at + 1 < n && s[at] == '\r' && s[at + 1] == '\n' ? 2 : 1;
	return ap_match_add_text(&run->res->matches, line, s + at, ap_py_line_end(s, at, n) - at);
}

const ap_py_def *ap_pysource_pick_def(ap_kind_run *run, char *const *names, size_t nnames,
                                      const ap_pyconf *c, const ap_file **file)
{
	const ap_kind_rule *rule = run->rule;
	ap_rule_result *res = run->res;
	ap_buf tried = AP_BUF_INIT;

	*file = NULL;
	for (size_t i = 0; i < rule->npaths; i++) {
		const char *name = names[nnames > 1 ? i : 0];
		const ap_file *f = ap_reader_get(run->reader, rule->paths[i]);
		const ap_py_module *m;
		const ap_py_def *d;
		const char *error;

		if (f->status == AP_FILE_MISSING)
			continue;
		if (res->file == NULL)
			res->file = f->path;
		if (f->status != AP_FILE_OK) {
			res->file = f->path;
			ap_rule_set_error(res, "%s", f->reason);
			ap_buf_free(&tried);
			return NULL;
		}
		m = ap_pysource_module(run->reader, f, c, &error);
		if (m == NULL) {
			res->file = f->path;
			ap_rule_set_error(res, "%s", error);
			ap_buf_free(&tried);
			return NULL;
		}
		d = ap_py_find_def(m, name);
		if (d != NULL) {
			res->file = f->path;
			*file = f;
			ap_buf_free(&tried);
			return d;
		}
		ap_buf_printf(&tried, "%sno def %s in %s", tried.len ? ", " : "", name, f->path);
	}
	if (tried.len == 0) {
		res->status = AP_RULE_MISSING;
		res->reason = ap_kind_missing_reason(rule);
	} else {
		res->status = AP_RULE_UNMATCHED;
		res->reason = ap_buf_detach(&tried);
	}
	ap_buf_free(&tried);
	return NULL;
}

/* --- Calls and signatures -------------------------------------------------- */

static int call_load(const char *pack, const ap_ynode *n, ap_pycall *call)
{
	static const char *const keys[] = {"positional", "keywords"};
	ap_yfield f[2];
	int rc;

	call->given = true;
	if ((rc = ap_y_need_map(pack, n, "'binds'")) < 0 ||
	    (rc = ap_y_fields(pack, n, "'binds'", keys, 2, f)) < 0)
		return rc;
	if (f[0].key != NULL &&
	    (rc = ap_y_int(pack, f[0].val, "positional", 0, 255, &call->positional)) < 0)
		return rc;
	if (f[1].key != NULL)
		rc = ap_y_strings(pack, f[1].val, "keywords", &call->keywords, &call->nkeywords);
	return rc;
}

int ap_pydef_check_load(const char *pack, const ap_yfield *opts, ap_pydef_check *c)
{
	int rc = 0;

	memset(c, 0, sizeof *c);
	if (opts[0].key != NULL &&
	    (rc = ap_y_strings(pack, opts[0].val, "params", &c->params, &c->nparams)) < 0)
		return rc;
	if (opts[1].key != NULL && (rc = call_load(pack, opts[1].val, &c->call)) < 0)
		return rc;
	if (opts[2].key != NULL)
		rc = ap_y_int(pack, opts[2].val, "param_at", 1, 255, &c->param_at);
	return rc;
}

void ap_pydef_check_free(ap_pydef_check *c)
{
	ap_y_strings_free(c->params, c->nparams);
	ap_y_strings_free(c->call.keywords, c->call.nkeywords);
	memset(c, 0, sizeof *c);
}

static const ap_py_param *param_named(const ap_py_def *d, const char *name)
{
	for (size_t i = 0; i < d->nparams; i++)
		if (strcmp(d->params[i].name, name) == 0)
			return &d->params[i];
	return NULL;
}

static bool positional_kind(ap_py_param_kind k)
{
	return k == AP_PY_POSONLY || k == AP_PY_POS;
}

/* Python's binding of a call to a signature (inspect.Signature.bind): NULL
 * when it binds, else why not. */
static char *bind_refusal(const ap_py_def *d, const ap_pycall *call)
{
	bool *bound = ap_xcalloc(d->nparams + 1, sizeof *bound);
	bool varargs = false, varkw = false;
	size_t npos = 0, given = 0;
	char *why = NULL;

	for (size_t i = 0; i < d->nparams; i++) {
		varargs |= d->params[i].kind == AP_PY_VARARGS;
		varkw |= d->params[i].kind == AP_PY_VARKW;
		npos += positional_kind(d->params[i].kind);
	}
	if ((size_t)call->positional > npos && !varargs) {
		why = ap_xasprintf("it takes at most %zu positional arguments", npos);
		goto done;
	}
	for (size_t i = 0; i < d->nparams && given < (size_t)call->positional; i++)
		if (positional_kind(d->params[i].kind))
			bound[i] = true, given++;
	for (size_t k = 0; k < call->nkeywords && why == NULL; k++) {
		const char *kw = call->keywords[k];
		const ap_py_param *p = param_named(d, kw);
		size_t i = p ? (size_t)(p - d->params) : 0;

		if (p == NULL || p->kind == AP_PY_VARARGS || p->kind == AP_PY_VARKW ||
		    (p->kind == AP_PY_POSONLY && !bound[i])) {
			/* **kwargs takes it, positional-only names included */
			if (!varkw)
				why = p != NULL && p->kind == AP_PY_POSONLY
				              ? ap_xasprintf("'%s' is positional-only, given by keyword", kw)
				              : ap_xasprintf("no parameter '%s' (and no **kwargs)", kw);
		} else if (bound[i]) {
			why = p->kind == AP_PY_POSONLY && varkw
			              ? NULL
			              : ap_xasprintf("'%s' given both by position and by keyword", kw);
		} else {
			bound[i] = true;
		}
	}
	for (size_t i = 0; i < d->nparams && why == NULL; i++) {
		const ap_py_param *p = &d->params[i];
		if (!bound[i] && !p->has_default && p->kind != AP_PY_VARARGS && p->kind != AP_PY_VARKW)
			why = ap_xasprintf("required parameter '%s' left unbound", p->name);
	}
done:
	free(bound);
	return why;
}

char *ap_pydef_check_refusal(const ap_pydef_check *c, const ap_py_def *d)
{
	for (size_t i = 0; i < c->nparams; i++) {
		const ap_py_param *p = param_named(d, c->params[i]);
		if (p == NULL || p->kind == AP_PY_VARARGS || p->kind == AP_PY_VARKW)
			return ap_xasprintf("%s has no parameter '%s'", d->qualname, c->params[i]);
	}
	if (c->call.given) {
		char *why = bind_refusal(d, &c->call);
		if (why != NULL) {
			char *full = ap_xasprintf("a call of %s with %ld positional%s%s does not bind: %s",
			                          d->qualname, c->call.positional,
			                          c->call.positional == 1 ? "" : "s",
			                          c->call.nkeywords ? " and its keywords" : "", why);
			free(why);
			return full;
		}
	}
	return NULL;
}

char *ap_py_signature(const ap_py_def *d)
{
	ap_buf b = AP_BUF_INIT;
	bool star = false;

	for (size_t i = 0; i < d->nparams; i++) {
		const ap_py_param *p = &d->params[i];
		bool last_posonly = p->kind == AP_PY_POSONLY &&
		                    (i + 1 == d->nparams || d->params[i + 1].kind != AP_PY_POSONLY);

		if (p->kind == AP_PY_KWONLY && !star)
			ap_buf_puts(&b, b.len ? ", *" : "*");
		star |= p->kind == AP_PY_VARARGS || p->kind == AP_PY_KWONLY;
		ap_buf_printf(&b, "%s%s%s%s", b.len ? ", " : "",
		              p->kind == AP_PY_VARARGS ? "*" : p->kind == AP_PY_VARKW ? "**" : "",
		              p->name, p->has_default ? "=…" : "");
		if (last_posonly)
			ap_buf_puts(&b, ", /");
	}
	return ap_buf_detach(&b);
}

void ap_pydef_capture(const ap_pydef_check *c, const ap_py_def *d, ap_match *m)
{
	char *sig = ap_py_signature(d);

	ap_match_capture(m, "params", sig, strlen(sig));
	free(sig);
	if (c->param_at > 0) {
		long k = 0;
		for (size_t i = 0; i < d->nparams; i++) {
			if (positional_kind(d->params[i].kind) && ++k == c->param_at) {
				ap_match_capture(m, "param", d->params[i].name, strlen(d->params[i].name));
				break;
			}
		}
	}
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
	memset(ref, 0, sizeof *ref);
}

/* A (module, name) resolved, kept for the rest of the resolution. */
struct resolved {
	ap_pyref ref;
	bool missing;
};

struct resolver {
	ap_reader *r;
	const ap_pyconf *c;
	const char *top;  /* the package tree: modules under this top-level name */
	/* (module, name) being resolved, to its depth + 1 (0: no longer): a cycle
	 * binds nothing */
	ap_map *active;
	/* The least depth a cycle led back to since the resolution at hand began
	 * (UINT_MAX: none): a result cut short by a cycle through an outer
	 * resolution holds only inside that one, and is not kept. */
	unsigned cut;
	ap_map *known;    /* (module, name) resolved -> index into done */
	struct resolved *done;
	size_t ndone, done_cap;
	ap_map *modules;  /* module name -> index into found */
	struct found **found;
	size_t nfound, found_cap;
	size_t visits;
};

struct module {
	const char *name; /* dotted; the resolver's */
	bool package;     /* an __init__.py */
	const ap_file *file;
	const ap_py_module *m;
};

/* A module name as the finder found it, once per resolution. */
struct found {
	struct module mod; /* file NULL: no such module */
	char *name;
	char *why;         /* the module cannot be read or parsed: why */
};

static struct found *look_up_module(struct resolver *rs, const char *name)
{
	struct found *fd = ap_xcalloc(1, sizeof *fd);
	struct module *mod = &fd->mod;
	const char *error;

	mod->file = module_file(rs->r, name, &mod->package);
	fd->name = ap_xstrdup(name);
	mod->name = fd->name;
	if (mod->file == NULL)
		return fd;
	if (mod->file->status != AP_FILE_OK) {
		fd->why = ap_xasprintf("%s: %s", mod->file->path, mod->file->reason);
		return fd;
	}
	mod->m = ap_pysource_module(rs->r, mod->file, rs->c, &error);
	if (mod->m == NULL)
		fd->why = ap_xasprintf("%s: %s", mod->file->path, error);
	return fd;
}

/* The module's file as Python's finder picks it: the package
 * NAME/__init__.py before the module NAME.py beside it. false when neither
 * exists; ERROR in out when one cannot be read or parsed. */
static bool find_module(struct resolver *rs, const char *name, struct module *mod, ap_pyref *out)
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
	if (fd->why != NULL) {
		out->kind = AP_PYREF_ERROR;
		out->why = ap_xstrdup(fd->why);
	}
	return mod->file != NULL;
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

/* Whether `from module import *` binds name: in its __all__, or (without
 * one) a public name it binds. A module that cannot be read or parsed makes
 * that unknown: false, with the error in *err (an unreadable module must not
 * read as one that binds nothing). */
static bool star_binds(struct resolver *rs, const char *module, const char *name, unsigned depth,
                       ap_pyref *err)
{
	struct module mod;
	ap_pyref ref = {0};
	bool yes = false, missing;

	if (!find_module(rs, module, &mod, &ref))
		return false;
	if (mod.m != NULL && mod.m->has_all) {
		for (size_t i = 0; i < mod.m->nall && !yes; i++)
			yes = strcmp(mod.m->all[i], name) == 0;
	} else if (mod.m != NULL && name[0] != '_') {
		resolve_in(rs, module, name, depth + 1, &ref, &missing);
		yes = ref.kind != AP_PYREF_UNBOUND && ref.kind != AP_PYREF_ERROR;
	}
	if (ref.kind == AP_PYREF_ERROR) {
		*err = ref;
		memset(&ref, 0, sizeof ref);
	}
	ap_pyref_free(&ref);
	return yes;
}

/* name as mod's bindings before index upto leave it. */
static void resolve_binding(struct resolver *rs, const struct module *mod, const char *name,
                            size_t upto, unsigned depth, ap_pyref *out)
{
	const ap_py_module *m = mod->m;
	bool missing;

	for (size_t i = upto; i-- > 0;) {
		const ap_py_binding *b = &m->bindings[i];
		char *target;

		rs->visits++;
		if (b->in_except)
			continue;
		if (b->kind == AP_PY_BIND_STAR) {
			target = absolute(rs, mod, b->module);
			if (target != NULL && star_binds(rs, target, name, depth, out)) {
				resolve_in(rs, target, name, depth + 1, out, &missing);
				free(target);
				return;
			}
			free(target);
			if (out->kind == AP_PYREF_ERROR)
				return;
			continue;
		}
		if (b->name == NULL || strcmp(b->name, name) != 0)
			continue;
		out->file = mod->file;
		out->line = b->line;
		switch (b->kind) {
		case AP_PY_BIND_DEF:
			out->kind = AP_PYREF_DEF;
			out->def = &m->defs[b->def_index];
			out->line = out->def->line;
			return;
		case AP_PY_BIND_CLASS:
			out->kind = AP_PYREF_CLASS;
			return;
		case AP_PY_BIND_ALIAS:
			resolve_binding(rs, mod, b->target, i, depth + 1, out);
			return;
		case AP_PY_BIND_FROM: {
			char *sub;
			target = absolute(rs, mod, b->module);
			if (target == NULL) {
				out->kind = AP_PYREF_EXTERNAL;
				out->why = ap_xasprintf("imported from %s", b->module);
				return;
			}
			resolve_in(rs, target, b->target, depth + 1, out, &missing);
			if (out->kind == AP_PYREF_UNBOUND) {
				/* `from pkg import submodule` */
				struct module sm;
				ap_pyref_free(out);
				sub = ap_xasprintf("%s.%s", target, b->target);
				if (find_module(rs, sub, &sm, out) && out->kind != AP_PYREF_ERROR)
					out->kind = AP_PYREF_MODULE;
				else if (out->kind != AP_PYREF_ERROR)
					out->kind = AP_PYREF_UNBOUND;
				free(sub);
			}
			free(target);
			return;
		}
		case AP_PY_BIND_IMPORT:
			out->kind = AP_PYREF_MODULE;
			return;
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

static void remember(struct resolver *rs, const ap_buf *key, const ap_pyref *ref, bool missing)
{
	struct resolved *d;

	ap_xgrow((void **)&rs->done, &rs->done_cap, rs->ndone + 1, sizeof *rs->done);
	d = &rs->done[rs->ndone];
	d->ref = *ref;
	d->ref.why = ref->why ? ap_xstrdup(ref->why) : NULL;
	d->missing = missing;
	ap_xok(ap_map_put(rs->known, key->data, key->len, rs->ndone++));
}

static void resolve_in(struct resolver *rs, const char *module, const char *name, unsigned depth,
                       ap_pyref *out, bool *missing)
{
	struct module mod;
	ap_buf key = AP_BUF_INIT;
	unsigned outer_cut = rs->cut;
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
		/* Where it was asked decided: no result above it is kept. */
		rs->cut = 0;
		return;
	}
	ap_buf_append(&key, module, strlen(module) + 1);
	ap_buf_puts(&key, name);
	at = ap_map_get(rs->active, key.data, key.len);
	if (at != AP_MAP_ABSENT && at != 0) {
		out->kind = AP_PYREF_UNBOUND;
		if (at - 1 < rs->cut)
			rs->cut = (unsigned)(at - 1);
		ap_buf_free(&key);
		return;
	}
	at = ap_map_get(rs->known, key.data, key.len);
	if (at != AP_MAP_ABSENT) {
		*out = rs->done[at].ref;
		out->why = out->why ? ap_xstrdup(out->why) : NULL;
		*missing = rs->done[at].missing;
		ap_buf_free(&key);
		return;
	}
	rs->cut = UINT_MAX;
	if (!find_module(rs, module, &mod, out)) {
		out->kind = AP_PYREF_UNBOUND;
		*missing = true;
	} else if (out->kind != AP_PYREF_ERROR) {
		ap_xok(ap_map_put(rs->active, key.data, key.len, depth + 1));
		resolve_binding(rs, &mod, name, mod.m->nbindings, depth, out);
		ap_xok(ap_map_put(rs->active, key.data, key.len, 0));
	}
	if (rs->cut >= depth)
		remember(rs, &key, out, *missing);
	if (outer_cut < rs->cut)
		rs->cut = outer_cut;
	ap_buf_free(&key);
}

void ap_pysource_resolve(ap_reader *r, const ap_pyconf *c, const char *module, const char *name,
                         ap_pyref *out, bool *missing)
{
	char *top = ap_xstrndup(module, strcspn(module, "."));
	struct resolver rs = {.r = r, .c = c, .top = top, .active = ap_xnonnull(ap_map_new()),
	                      .cut = UINT_MAX, .known = ap_xnonnull(ap_map_new()),
	                      .modules = ap_xnonnull(ap_map_new())};

	resolve_in(&rs, module, name, 0, out, missing);
	for (size_t i = 0; i < rs.ndone; i++)
		free(rs.done[i].ref.why);
	free(rs.done);
	ap_map_free(rs.known);
	for (size_t i = 0; i < rs.nfound; i++) {
		free(rs.found[i]->name);
		free(rs.found[i]->why);
		free(rs.found[i]);
	}
	free(rs.found);
	ap_map_free(rs.modules);
	ap_map_free(rs.active);
	free(top);
}
