/* SPDX-License-Identifier: MIT */
/* What the rest of `import TOP` does to a name a package's own run left:
 * the last step of a question's resolution (ap_pysource_resolve, and
 * ap_pyresolver_resolve for many names of one package). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/lang/python/pyresolve-int.h"

/* What module's own run loads of want, its parents being run (loading
 * nothing more when imported again, as when `import TOP` reaches it). */
static int own_loads(struct resolver *rs, const char *module, const char *want)
{
	ap_buf key = AP_BUF_INIT;

	for (const char *dot = strchr(module, '.'); dot != NULL; dot = strchr(dot + 1, '.')) {
		key.len = 0;
		ap_buf_append(&key, module, (size_t)(dot - module));
		ap_buf_putc(&key, '\0');
		ap_buf_puts(&key, want);
		ap_xok(ap_map_put(rs->loaded, key.data, key.len, 0));
	}
	ap_buf_free(&key);
	return ap_pyres_body_loads(rs, module, want, 0);
}

/* What the rest of `import TOP` does to name in module, a package below
 * the top that its own run left out as: its submodule of that name, loaded
 * first by an import that runs after the package's own statements (the
 * parent's `from .pkg.name import x`, or a module's imported later), binds
 * that submodule over it; where such an import may or may not run, name is
 * unknown, unless it is that submodule already. Fresh resolutions: the
 * walk marks the packages it walked as loading nothing more. */
static void loaded_later(ap_reader *r, const ap_pyconf *c, const char *module, const char *name,
                         ap_pyref *out)
{
	struct resolver *rs;
	struct module mod, sm;
	ap_pyref err = {0};
	char *sub;
	int later = LOADS_NO;

	if (strchr(module, '.') == NULL || out->kind == AP_PYREF_ERROR)
		return;
	rs = ap_pyres_new(r, c, module, NULL);
	sub = ap_xasprintf("%s.%s", module, name);
	if (ap_pyres_find(rs, module, &mod, &err) == FOUND && mod.package &&
	    ap_pyres_find(rs, sub, &sm, &err) == FOUND && own_loads(rs, module, sub) == LOADS_NO) {
		struct resolver *whole = ap_pyres_new(r, c, module, NULL);
		later = ap_pyres_body_loads(whole, whole->top, sub, 0);
		ap_pyres_free(whole);
	}
	ap_pyref_free(&err);
	if (later == LOADS_YES ||
	    (later == LOADS_PERHAPS && !(out->kind == AP_PYREF_MODULE && out->module != NULL &&
	                                 strcmp(out->module, sub) == 0))) {
		char *why = later == LOADS_YES
		                    ? NULL
		                    : ap_xasprintf("it may be its submodule %s, which importing %s "
		                                   "may load after %s ran",
		                                   sub, rs->top, mod.file->path);
		ap_pyref_free(out);
		out->kind = later == LOADS_YES ? AP_PYREF_MODULE : AP_PYREF_UNKNOWN;
		out->why = why;
		out->file = mod.file;
		if (later == LOADS_YES) {
			out->module = sub;
			sub = NULL;
		}
	}
	free(sub);
	ap_pyres_free(rs);
}

void ap_pysource_resolve(ap_reader *r, const ap_pyconf *c, const char *module, const char *name,
                         ap_pyref *out, bool *missing)
{
	struct resolver *rs = ap_pyres_new(r, c, module, NULL);

	ap_pyres_top(rs, module, name, out, missing);
	ap_pyres_free(rs);
	if (!*missing)
		loaded_later(r, c, module, name, out);
}

struct ap_pyresolver {
	struct resolver *rs;
};

ap_pyresolver *ap_pyresolver_new(ap_reader *r, const ap_pyconf *c, const char *module)
{
	ap_pyresolver *p = ap_xmalloc(sizeof *p);

	p->rs = ap_pyres_new(r, c, module, NULL);
	return p;
}

void ap_pyresolver_resolve(ap_pyresolver *p, const char *module, const char *name,
                           ap_pyref *out, bool *missing)
{
	/* each name its own budget, as ap_pysource_resolve gives it */
	p->rs->visits = 0;
	ap_pyres_top(p->rs, module, name, out, missing);
	if (!*missing)
		loaded_later(p->rs->r, p->rs->c, module, name, out);
}

void ap_pyresolver_free(ap_pyresolver *p)
{
	if (p == NULL)
		return;
	ap_pyres_free(p->rs);
	free(p);
}
