/* SPDX-License-Identifier: MIT */
/* The def a python-def or python-bound rule names: what importing its file
 * binds to the name, or for "Cls.m" what getattr finds on the class it binds
 * to Cls, read from the members its class body binds (a classmethod bound to
 * the class, a property no def, a name it does not bind inherited from its
 * bases, or not bound). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/python/pypath.h"
#include "engine/lang/python/pysource.h"

ap_match *ap_pysource_match(ap_kind_run *run, const ap_file *f, unsigned line)
{
	/* A rule has a match or two: the line is found by counting, without
	 * normalizing the whole file for its line table. */
	const char *s = f->data;
	size_t n = f->len, at = 0;

	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		at = 3;
	/* Lines end as the parser numbered them: at LF, CRLF or a lone CR. */
	at = ap_py_line_start(s, at, n, line);
	return ap_match_add_text(&run->res->matches, line, s + at, ap_py_line_end(s, at, n) - at);
}

/* The last member name of the class bound by cls in m, or NULL. */
static const ap_py_binding *last_member(const ap_py_module *m, const ap_py_binding *cls,
                                        const char *name)
{
	for (size_t i = m->nmembers; i-- > 0;) {
		const ap_py_binding *b = &m->members[i];
		if (b->class_line == cls->line && b->name != NULL && strcmp(b->name, name) == 0)
			return b;
	}
	return NULL;
}

/* Whether the builtin decorator of d (classmethod, staticmethod, property)
 * is what its name holds in m, the module of f: the reader saw no binding of
 * it before the class (module.c), and no star import may bind it. */
static bool builtin_holds(ap_reader *r, const ap_pyconf *c, const ap_file *f,
                          const ap_py_module *m, const ap_py_def *d)
{
	bool star = false, missing, holds;
	char *mod;
	ap_pyref ref;

	for (size_t i = 0; i < m->nbindings; i++)
		star |= m->bindings[i].kind == AP_PY_BIND_STAR;
	if (d->method == AP_PY_FUNCTION || !star)
		return true;
	if ((mod = ap_pypath_importable(f->path)) == NULL)
		return false;
	ap_pysource_resolve(r, c, mod, ap_py_method_name(d->method), &ref, &missing);
	holds = ref.kind == AP_PYREF_UNBOUND;
	ap_pyref_free(&ref);
	free(mod);
	return holds;
}

/* What getattr on the class gives for its member b, the def d: out. */
static void method(const ap_py_binding *b, const ap_py_def *d, const char *qualname,
                   bool builtin, ap_pyref *out)
{
	out->line = d->line;
	if (!builtin) {
		out->kind = AP_PYREF_UNKNOWN;
		out->why = ap_xasprintf("%s (line %u) is decorated with @%s, and a star import may "
		                        "bind that name", qualname, d->line, ap_py_method_name(d->method));
	} else if (d->ndecorators > 0) {
		out->kind = AP_PYREF_UNKNOWN;
		out->why = ap_xasprintf("%s (line %u) is decorated with @%s%s, which may bind it to "
		                        "something else", qualname, d->line, d->decorators[0].name,
		                        d->decorators[0].called ? "(...)" : "");
	} else if (d->method == AP_PY_PROPERTY) {
		out->kind = AP_PYREF_VALUE;
		out->why = ap_xasprintf("a property, at line %u", b->line);
	} else if (d->method == AP_PY_CLASSMETHOD) {
		out->view = ap_pydef_bound_method(d);
		out->kind = out->view != NULL ? AP_PYREF_DEF : AP_PYREF_VALUE;
		out->def = out->view;
		if (out->view == NULL)
			out->why = ap_xasprintf("a classmethod at line %u with no parameter to bind the "
			                        "class to", b->line);
	} else {
		out->kind = AP_PYREF_DEF;
		out->def = d;
	}
}

/* out, the class the first part of name binds to, as getattr on it finds
 * the other parts. */
static void members(ap_reader *r, const ap_pyconf *c, const char *name, ap_pyref *out)
{
	size_t at = strcspn(name, ".");

	while (out->kind == AP_PYREF_CLASS && name[at] == '.') {
		const ap_py_binding *cls = out->binding, *b;
		const char *part = name + at + 1, *error;
		const ap_py_module *m = ap_pysource_module(r, out->file, c, &error);
		char *qualname;

		if (m == NULL) {
			out->kind = AP_PYREF_ERROR;
			out->why = ap_xstrdup(error);
			return;
		}
		at += 1 + strcspn(part, ".");
		qualname = ap_xstrndup(name, at);
		b = last_member(m, cls, qualname + (part - name));
		if (cls->decorator != NULL) {
			out->kind = AP_PYREF_UNKNOWN;
			out->why = ap_xasprintf("%.*s (line %u) is decorated with @%s, which may bind it "
			                        "to something else", (int)(part - name - 1), name,
			                        cls->line, cls->decorator);
		} else if (b == NULL || b->kind == AP_PY_BIND_DEL) {
			out->kind = cls->inherits ? AP_PYREF_UNKNOWN : AP_PYREF_UNBOUND;
			if (cls->inherits)
				out->why = ap_xasprintf("%.*s (line %u) may inherit it from its bases",
				                        (int)(part - name - 1), name, cls->line);
		} else if (b->maybe) {
			out->kind = AP_PYREF_UNKNOWN;
			out->why = ap_xasprintf("%s (line %u) is defined in a block that may not run on "
			                        "import", qualname, b->line);
		} else if (b->kind == AP_PY_BIND_UNKNOWN) {
			out->kind = AP_PYREF_UNKNOWN;
			out->why = ap_xstrdup(b->why);
		} else if (b->kind == AP_PY_BIND_CLASS) {
			out->binding = b;
			out->line = b->line;
		} else if (b->kind == AP_PY_BIND_DEF) {
			const ap_py_def *d = &m->defs[b->def_index];
			method(b, d, qualname, builtin_holds(r, c, out->file, m, d), out);
		} else if (b->kind == AP_PY_BIND_OTHER || b->kind == AP_PY_BIND_IMPORT) {
			out->kind = AP_PYREF_VALUE;
			out->line = b->line;
		} else {
			/* an alias, an import or a partial in a class body: the name it
			 * reads is the class body's, then the module's */
			out->kind = AP_PYREF_UNKNOWN;
			out->why = ap_xasprintf("%s (line %u) is bound to what a name holds in the class "
			                        "body, which is not followed", qualname, b->line);
		}
		free(qualname);
	}
	if (name[at] != '\0' && out->kind != AP_PYREF_ERROR && out->kind != AP_PYREF_UNKNOWN) {
		/* getattr on what is no class is not read: not a def */
		ap_pyref_kind kind = out->kind;
		ap_pyref_free(out);
		out->kind = AP_PYREF_UNBOUND;
		if (kind != AP_PYREF_UNBOUND)
			out->why = ap_xasprintf("%.*s is %s, not a class", (int)at, name,
			                        ap_pyref_kind_name(kind));
	}
}

void ap_pysource_attr(ap_reader *r, const ap_pyconf *c, const ap_file *f, const ap_py_module *m,
                      const char *mod, const char *name, ap_pyref *out)
{
	char *top = ap_xstrndup(name, strcspn(name, "."));
	bool missing;

	if (mod != NULL) {
		ap_pysource_resolve(r, c, mod, top, out, &missing);
	} else {
		/* a file no import names: its own class, unless only a run tells;
		 * what an import or another name binds is not followed */
		const ap_py_binding *b = ap_py_lookup(m, top);
		memset(out, 0, sizeof *out);
		out->file = f;
		out->binding = b;
		if (b == NULL || b->kind == AP_PY_BIND_DEL) {
			out->kind = AP_PYREF_UNBOUND;
		} else if (b->kind == AP_PY_BIND_CLASS) {
			out->kind = AP_PYREF_CLASS;
		} else if (b->kind == AP_PY_BIND_DEF || b->kind == AP_PY_BIND_OTHER) {
			out->kind = b->kind == AP_PY_BIND_DEF ? AP_PYREF_DEF : AP_PYREF_VALUE;
		} else {
			out->kind = AP_PYREF_UNKNOWN;
			out->why = b->kind == AP_PY_BIND_UNKNOWN
			                   ? ap_xstrdup(b->why)
			                   : ap_xasprintf("%s is bound at line %u by what the reader "
			                                  "follows only in a module an import names", top,
			                                  b->line);
		}
	}
	free(top);
	members(r, c, name, out);
}

const ap_py_def *ap_pysource_pick_def(ap_kind_run *run, char *const *names, size_t nnames,
                                      const ap_pyconf *c, const ap_file **file,
                                      ap_py_def **view)
{
	const ap_kind_rule *rule = run->rule;
	ap_rule_result *res = run->res;
	ap_buf tried = AP_BUF_INIT;

	*file = NULL;
	*view = NULL;
	for (size_t i = 0; i < rule->npaths; i++) {
		const char *name = names[nnames > 1 ? i : 0];
		const ap_file *f = ap_reader_get(run->reader, rule->paths[i]);
		const ap_py_module *m;
		const ap_py_binding *b;
		const ap_py_def *d;
		const char *error;
		char *mod;

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
		mod = ap_pypath_importable(f->path);
		if (mod != NULL || strchr(name, '.') != NULL) {
			/* What importing the file's module binds to the name. */
			ap_pyref ref;
			bool missing;
			if (strchr(name, '.') != NULL)
				ap_pysource_attr(run->reader, c, f, m, mod, name, &ref);
			else
				ap_pysource_resolve(run->reader, c, mod, name, &ref, &missing);
			free(mod);
			if (ref.kind == AP_PYREF_DEF && ref.nosig) {
				ref.kind = AP_PYREF_UNKNOWN;
				ref.def = NULL;
			}
			d = ref.kind == AP_PYREF_DEF ? ref.def : NULL;
			if (d != NULL) {
				res->file = ref.file->path;
				*file = ref.file;
				*view = ref.view;
				ref.view = NULL;
			} else if (ref.kind == AP_PYREF_ERROR) {
				res->file = ref.file ? ref.file->path : f->path;
				ap_rule_set_error(res, "%s", ref.why);
			} else if (ref.kind == AP_PYREF_UNKNOWN) {
				res->file = f->path;
				res->status = AP_RULE_UNKNOWN;
				res->reason = ap_xasprintf("what %s binds to %s is not known without "
				                           "running it: %s", f->path, name, ref.why);
			}
			if (d != NULL || ref.kind == AP_PYREF_ERROR || ref.kind == AP_PYREF_UNKNOWN) {
				ap_pyref_free(&ref);
				ap_buf_free(&tried);
				return d;
			}
			if (ref.kind == AP_PYREF_UNBOUND)
				ap_buf_printf(&tried, "%sno def %s in %s", tried.len ? ", " : "", name,
				              f->path);
			else if (ref.perhaps)
				ap_buf_printf(&tried, "%s%s binds no def to %s: %s", tried.len ? ", " : "",
				              f->path, name, ref.why);
			else
				ap_buf_printf(&tried, "%s%s binds %s to %s, not a def", tried.len ? ", " : "",
				              f->path, name, ap_pyref_kind_name(ref.kind));
			if (ref.why != NULL && !ref.perhaps)
				ap_buf_printf(&tried, " (%s)", ref.why);
			ap_pyref_free(&ref);
			continue;
		}
		/* A file no import names: its own last def of the name, unless
		 * only a run tells what it binds. */
		if ((b = ap_py_lookup(m, name)) != NULL && b->kind == AP_PY_BIND_UNKNOWN) {
			res->file = f->path;
			res->status = AP_RULE_UNKNOWN;
			res->reason = ap_xasprintf("what %s binds to %s is not known without "
			                           "running it: %s", f->path, name, b->why);
			ap_buf_free(&tried);
			return NULL;
		}
		d = ap_py_find_def(m, name);
		if (d != NULL && d->maybe) {
			res->file = f->path;
			res->status = AP_RULE_UNKNOWN;
			res->reason = ap_xasprintf("%s (line %u) in %s is defined in a block that may not "
			                           "run on import", name, d->line, f->path);
			ap_buf_free(&tried);
			return NULL;
		}
		if (d != NULL && d->ndecorators > 0) {
			res->file = f->path;
			res->status = AP_RULE_UNKNOWN;
			res->reason = ap_xasprintf("%s (line %u) in %s is decorated with @%s%s, which may "
			                           "bind it to something else", name, d->line, f->path,
			                           d->decorators[0].name,
			                           d->decorators[0].called ? "(...)" : "");
			ap_buf_free(&tried);
			return NULL;
		}
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
