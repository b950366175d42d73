/* SPDX-License-Identifier: MIT */
/* The tree's modules as Python's finder finds them (pypath.c), for the
 * parts of the Python kinds' sources (pysource.c, pyresolve.c). */
#ifndef AP_PYPATH_H
#define AP_PYPATH_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/lang/python/python.h"
#include "engine/reader.h"

/* The file of the module (dotted) as Python's finder picks it: the package
 * NAME/__init__.py before the module NAME.py beside it; NULL when neither
 * is there, else *package says which. */
const ap_file *ap_pypath_file(ap_reader *r, const char *name, bool *package);

/* The dotted name of the module at path ("aiter/ops/x.py": "aiter.ops.x",
 * *package false; "aiter/ops/__init__.py": "aiter.ops", true). */
char *ap_pypath_module(const char *path, bool *package);

/* The absolute name of an import written in the module `of` (a package
 * when package); NULL when its dots lead above the top. */
char *ap_pypath_absolute(const char *of, bool package, const char *written);

/* Whether the module (dotted, of the tree) is there (1) or not (0): its
 * package or file, or a folder of its name (a namespace package, unless a
 * module file beside it is taken first: found either way); without either,
 * a file of its name that another loader takes (an extension module,
 * bytecode), which the parent's listing shows, is not known (-1). */
int ap_pypath_in_tree(ap_reader *r, const char *name);

/* The dotted name of the module a file under the root is ("aiter/mla.py":
 * "aiter.mla", "aiter/__init__.py": "aiter"); NULL when no import names it
 * (a part of it no ASCII name). */
char *ap_pypath_importable(const char *path);

/* AITER's _BACKWARD_COMPAT_MAP, as read: each old module name (relative to
 * its package) and the new one. */
#define AP_PYCOMPAT_MAP "_BACKWARD_COMPAT_MAP"
struct ap_pycompat {
	struct ap_pycompat_entry {
		char *old, *new;
	} *v;
	size_t n, cap;
};

/* Reads `_BACKWARD_COMPAT_MAP = {"old": "new", ...}` at its binding b in m
 * into map: false when it is no dict of str literals. */
bool ap_pycompat_read(const ap_py_module *m, const ap_py_binding *b, struct ap_pycompat *map);

/* A package's compat map as a resolution reads it, once: state 0 not read,
 * 1 read (map), -1 not readable (why). */
struct ap_pycompat_state {
	int state;
	struct ap_pycompat map;
	char *why;
};

/* What the compat map of the package m (at path) makes of its child, where
 * the package binds both the map and the finder: 0 nothing, 1 *to (the new
 * name, relative to the package), -1 not known (cm->why says why). */
int ap_pycompat_child(struct ap_pycompat_state *cm, const ap_py_module *m, const char *path,
                      const char *child, const char **to);
void ap_pycompat_state_free(struct ap_pycompat_state *cm);

/* Whether a module of the tree fails on import for certain (pyfails.c), as a
 * question from the tree whose top-level package is top asks it: running,
 * the module that imports it, with its bindings so far (NULL: none known);
 * top_importable, whether the interpreter can import the top package at all
 * (ap_pyfails_top, kept by the caller). */
struct ap_pyfails {
	ap_reader *r;
	const char *top;
	const ap_py_module *running;
	bool (*top_importable)(void *ctx);
	void *ctx;
};

/* Whether importing the module name (a package when package), m as parsed,
 * raises ModuleNotFoundError for certain: one of its own module-level
 * imports that runs whatever the conditions (in no block that may not run)
 * is of a module missing from the tree, or from outside of a top-level name
 * the interpreter does not find, unless it is of the standard library, the
 * running module imported it already where nothing could skip that (it
 * runs: that one was found), or the interpreter cannot import the top
 * package at all. */
bool ap_pyfails(const struct ap_pyfails *q, const char *name, bool package,
                const ap_py_module *m);

/* Whether the interpreter finds every module from outside that the top
 * package's bindings m import where nothing may skip the import (1, else
 * -1): one that does not cannot import the package at all (it is not the
 * server's), and what it finds tells nothing of the package's optional
 * imports. */
int ap_pyfails_top(ap_reader *r, const char *top, const ap_py_module *m);

#endif
