/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-map.h"
#include "core/ap-util.h"
#include "core/signature.h"
#include "engine/lang/python/pypath.h"
#include "engine/lang/python/pysource.h"
#include "engine/manifest.h"
#include "engine/lang/yaml-node.h"
#include "engine/signatures.h"

/* Star imports followed from a module when listing the names it may bind
 * (AITER's __init__ reaches about 50 modules, none deeper than 2). */
#define STAR_MAX_MODULES 512
#define STAR_MAX_DEPTH 16

int ap_sigspec_load(const char *file, const ap_ynode *n, ap_sigspec *out)
{
	static const char *const keys[] = {"module", "assume_false"};
	ap_yfield f[2];
	int rc;

	memset(out, 0, sizeof *out);
	out->conf = ap_xcalloc(1, sizeof *out->conf);
	if ((rc = ap_y_need_map(file, n, "an entry of 'signatures'")) < 0 ||
	    (rc = ap_y_fields(file, n, "an entry of 'signatures'", keys, 2, f)) < 0 ||
	    (rc = ap_y_need_field(file, n, "an entry of 'signatures'", "module", &f[0])) < 0 ||
	    (rc = ap_y_string(file, f[0].val, "module", &out->module)) < 0)
		return rc;
	for (const char *s = out->module;;) {
		const char *dot = strchr(s, '.');
		size_t len = dot ? (size_t)(dot - s) : strlen(s);
		if (!ap_py_is_identifier(s, len))
			return ap_y_fail(file, f[0].val, "'module' must be a module name (a.b.c), not '%s'",
			                 out->module);
		if (dot == NULL)
			break;
		s = dot + 1;
	}
	ap_py_name_normalize(&out->module);
	return ap_pyconf_load(file, &f[1], out->conf);
}

void ap_sigspec_clear(ap_sigspec *s)
{
	free(s->module);
	if (s->conf != NULL)
		ap_pyconf_free(s->conf);
	free(s->conf);
	memset(s, 0, sizeof *s);
}

/* --- The names a module may bind ------------------------------------------ */

struct names {
	char **v;
	size_t n, cap;
	ap_map *seen;     /* names in v */
	ap_map *modules;  /* modules whose names were listed */
};

static void add_name(struct names *ns, const char *name)
{
	/* `from M import *` takes no name beginning with '_' (nor does a
	 * backend call one) */
	if (name == NULL || name[0] == '_' || ap_map_get_str(ns->seen, name) != AP_MAP_ABSENT)
		return;
	ap_xok(ap_map_put_str(ns->seen, name, ns->n));
	ap_xgrow((void **)&ns->v, &ns->cap, ns->n + 1, sizeof *ns->v);
	ns->v[ns->n++] = ap_xstrdup(name);
}

/* Whether b binds a name from outside the package top (an import of
 * `torch`, `from typing import Optional`): no callable of the tree. */
static bool from_outside(const ap_py_binding *b, const char *top)
{
	size_t len = strlen(top);

	if (b->kind == AP_PY_BIND_IMPORT)
		return true;
	return b->kind == AP_PY_BIND_FROM && b->module[0] != '.' &&
	       !(strncmp(b->module, top, len) == 0 && (b->module[len] == '\0' || b->module[len] == '.'));
}

/* Every name module may bind, for the resolver to decide each: its
 * bindings (at depth 0, or through a star import of a module without a
 * readable __all__; those of an import from outside the package left out)
 * and its __all__, and so for the modules it star-imports. */
static void list_names(ap_reader *r, const ap_pyconf *c, const char *top, const char *module,
                       unsigned depth, struct names *ns)
{
	bool package;
	const ap_file *f;
	const ap_py_module *m;
	const char *error;
	bool all_only;

	if (depth > STAR_MAX_DEPTH || ap_map_count(ns->modules) >= STAR_MAX_MODULES ||
	    ap_map_get_str(ns->modules, module) != AP_MAP_ABSENT)
		return;
	ap_xok(ap_map_put_str(ns->modules, module, 0));
	if ((f = ap_pypath_file(r, module, &package)) == NULL ||
	    (m = ap_pysource_module(r, f, c, &error)) == NULL)
		return;
	/* a star import takes __all__ alone when there is one */
	all_only = depth > 0 && m->has_all && m->nall_refs == 0;
	for (size_t i = 0; i < m->nall; i++)
		add_name(ns, m->all[i]);
	for (size_t i = 0; i < m->nbindings; i++) {
		const ap_py_binding *b = &m->bindings[i];
		if (b->kind == AP_PY_BIND_STAR && b->module != NULL &&
		    strcmp(b->module, AP_PY_NAMESPACE_WRITE) != 0) {
			char *to = ap_pypath_absolute(module, package, b->module);
			if (to != NULL)
				list_names(r, c, top, to, depth + 1, ns);
			free(to);
		} else if (!all_only && b->kind != AP_PY_BIND_DEL && !from_outside(b, top)) {
			add_name(ns, b->name);
		}
	}
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --- One module's callables ---------------------------------------------- */

static json_t *unknown_entry(const char *why)
{
	size_t len = strlen(why);
	char *cut;
	json_t *v;

	if (len <= AP_SIG_MAX_REASON)
		return json_pack("{s:o}", "unknown", ap_json_text(why));
	cut = ap_xstrndup(why, AP_SIG_MAX_REASON);
	v = json_pack("{s:o}", "unknown", ap_json_text(cut));
	free(cut);
	return v;
}

/* What ref, resolved from `from MODULE import NAME`, says of calling it;
 * NULL for what is no callable of the tree (a module, a name from outside
 * the tree, an unbound one). */
static json_t *entry_of(const ap_pyref *ref)
{
	json_t *e = NULL;
	char *params;

	switch (ref->kind) {
	case AP_PYREF_DEF:
		if (ref->nosig) {
			e = unknown_entry(ref->why);
			break;
		}
		params = ap_py_signature(ref->def);
		if (ref->def->nparams > AP_SIG_MAX_PARAMS)
			e = unknown_entry("it has more parameters than a manifest records");
		else if (strlen(params) > AP_SIG_MAX_BYTES)
			e = unknown_entry("its parameters are longer than a manifest records");
		else
			e = json_pack("{s:o}", "params", ap_json_text(params));
		free(params);
		if (ref->def->is_async)
			json_object_set_new(e, "async", json_true());
		break;
	case AP_PYREF_CLASS:
		e = unknown_entry("a class: what calling it binds is its metaclass's, __new__'s and "
		                  "__init__'s, which are not read");
		break;
	case AP_PYREF_VALUE: {
		char *why = ap_xasprintf("bound to a value%s%s%s, which may be callable or not; only a "
		                         "run tells", ref->why ? " (" : "", ref->why ? ref->why : "",
		                         ref->why ? ")" : "");
		e = unknown_entry(why);
		free(why);
		break;
	}
	case AP_PYREF_UNKNOWN:
	case AP_PYREF_ERROR:
		e = unknown_entry(ref->why != NULL ? ref->why : "not known without running it");
		break;
	case AP_PYREF_MODULE:
	case AP_PYREF_EXTERNAL:
	case AP_PYREF_UNBOUND:
		return NULL;
	}
	if (ref->file != NULL)
		json_object_set_new(e, "file", ap_json_text(ref->file->path));
	if (ref->line > 0 || ref->def != NULL)
		json_object_set_new(e, "line",
		                    json_integer(ref->def != NULL ? ref->def->line : ref->line));
	return e;
}

static json_t *module_entry(const ap_sigspec *s, ap_reader *r, size_t *budget)
{
	struct names ns = {.seen = ap_xnonnull(ap_map_new()), .modules = ap_xnonnull(ap_map_new())};
	json_t *callables = json_object(), *out;
	bool package, missing;
	const ap_file *f = ap_pypath_file(r, s->module, &package);
	size_t left_out = 0;
	char *top;
	ap_pyresolver *resolver;

	if (f == NULL) {
		out = json_pack("{s:n, s:o, s:s}", "file", "callables", callables, "reason",
		                "no such module in the tree");
		goto done;
	}
	top = ap_xstrndup(s->module, strcspn(s->module, "."));
	list_names(r, s->conf, top, s->module, 0, &ns);
	free(top);
	qsort(ns.v, ns.n, sizeof *ns.v, cmp_names);
	resolver = ap_pyresolver_new(r, s->conf, s->module);
	for (size_t i = 0; i < ns.n; i++) {
		ap_pyref ref;
		json_t *e;

		if (*budget == 0) {
			left_out++;
			continue;
		}
		ap_pyresolver_resolve(resolver, s->module, ns.v[i], &ref, &missing);
		if ((e = entry_of(&ref)) != NULL) {
			json_object_set_new(callables, ns.v[i], e);
			(*budget)--;
		}
		ap_pyref_free(&ref);
	}
	ap_pyresolver_free(resolver);
	out = json_pack("{s:o, s:o}", "file", ap_json_text(f->path), "callables", callables);
	if (left_out > 0)
		json_object_set_new(out, "left_out", json_integer((json_int_t)left_out));
done:
	for (size_t i = 0; i < ns.n; i++)
		free(ns.v[i]);
	free(ns.v);
	ap_map_free(ns.seen);
	ap_map_free(ns.modules);
	return out;
}

json_t *ap_signatures_collect(const ap_ruleset *rs, ap_reader *r)
{
	size_t budget = AP_SIG_MAX_CALLABLES;
	json_t *all;

	if (rs->nsigs == 0)
		return NULL;
	all = json_object();
	for (size_t i = 0; i < rs->nsigs; i++)
		json_object_set_new(all, rs->sigs[i].module, module_entry(&rs->sigs[i], r, &budget));
	return all;
}
