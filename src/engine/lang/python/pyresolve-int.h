/* SPDX-License-Identifier: MIT */
/* The resolution of names through imports (pyresolve.c), shared with what
 * a question asks after it (pylater.c). */
#ifndef AP_PYRESOLVE_INT_H
#define AP_PYRESOLVE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ap-map.h"
#include "engine/lang/python/pypath.h"
#include "engine/lang/python/pysource.h"

/* The files being parsed or checked, innermost first: a try's import asked
 * of a module leads to that module's parse, whose own questions may lead
 * back to one of these. On the stack, handed down (an out-of-memory jump
 * leaves nothing behind). */
struct busy {
	const ap_file *f;
	const struct busy *outer;
};

/* A (module, name) resolved, kept for the rest of the resolution. */
struct resolved {
	ap_pyref ref;
	bool missing;
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
	struct ap_pycompat_state compat; /* its compat map, read once a resolution */
};

struct resolver {
	ap_reader *r;
	const ap_pyconf *c;
	const struct busy *chain; /* the files being read around it (module_in) */
	char *top;        /* the package tree: modules under this top-level name */
	/* (module, name) being resolved -> 1 (0 once done): an import that leads
	 * back to one binds nothing on the way back */
	ap_map *active;
	ap_map *known;    /* (module, name) resolved -> index into done */
	struct resolved *done;
	size_t ndone, done_cap;
	ap_map *modules;  /* module name -> index into found */
	/* (module, submodule) -> what importing module loads of the submodule
	 * (LOADS_*, + 1; 0 while it is being told) */
	ap_map *loaded;
	struct found **found;
	size_t nfound, found_cap;
	unsigned redirects; /* compat redirects being looked up, one inside another */
	int importable; /* whether the interpreter finds what the top imports: 0 not asked, 1, -1 */
	/* the top package's bindings so far while it is the module being read */
	const ap_py_module *top_reading;
	size_t visits;
};

enum { FOUND, MISSING, FAILED };

/* Loading a submodule, by any import anywhere, binds it on its package,
 * over what the name held, once: what loads it (an import of it or of a
 * module inside it, of a module whose statements load it in turn) is told
 * here. */
enum { LOADS_NO, LOADS_YES, LOADS_PERHAPS };

/* A resolution of the tree of module's top-level package, read while the
 * files of chain are (NULL: none). */
struct resolver *ap_pyres_new(ap_reader *r, const ap_pyconf *c, const char *module,
                              const struct busy *chain);
void ap_pyres_free(struct resolver *rs);

/* `from module import name` (module of the package rs reads). */
void ap_pyres_top(struct resolver *rs, const char *module, const char *name, ap_pyref *out,
                  bool *missing);

/* The module's file as Python's finder picks it: FOUND, MISSING, or FAILED
 * with out set. */
int ap_pyres_find(struct resolver *rs, const char *name, struct module *mod, ap_pyref *out);

/* What module's own statements load of want (LOADS_*), kept per
 * resolution; a module being run loads nothing more when imported again. */
int ap_pyres_body_loads(struct resolver *rs, const char *module, const char *want,
                        unsigned depth);

#endif
