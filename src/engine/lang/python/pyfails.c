/* SPDX-License-Identifier: MIT */
/* Whether a module of the tree fails on import for certain, read from its
 * own module-level imports (not those of the modules it imports in turn,
 * which would ask the interpreter about every module they import, where no
 * answer needs it). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/lang/python/pypath.h"
#include "engine/pytarget.h"

/* Modules of the standard library that every CPython 3 from 3.8 on has:
 * found without asking. */
static const char *const stdlib_modules[] = {
	"abc", "argparse", "array", "ast", "asyncio", "base64", "bisect", "builtins",
	"collections", "contextlib", "copy", "csv", "ctypes", "dataclasses", "datetime", "enum",
	"errno", "functools", "gc", "glob", "hashlib", "heapq", "importlib", "inspect", "io",
	"itertools", "json", "logging", "math", "multiprocessing", "operator", "os", "pathlib",
	"pickle", "platform", "queue", "random", "re", "shutil", "signal", "socket", "string",
	"struct", "subprocess", "sys", "tempfile", "textwrap", "threading", "time", "traceback",
	"types", "typing", "unittest", "uuid", "warnings", "weakref",
};

static bool of_stdlib(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof stdlib_modules / sizeof *stdlib_modules; i++)
		if (strlen(stdlib_modules[i]) == len && strncmp(stdlib_modules[i], name, len) == 0)
			return true;
	return false;
}

/* Whether b is an import that runs whatever the conditions (in no block
 * that may not run), of a module: the top-level name top[0, len) when top. */
static bool sure_import(const ap_py_binding *b, const char *top, size_t len)
{
	if (b->maybe || b->module == NULL || strcmp(b->module, AP_PY_NAMESPACE_WRITE) == 0 ||
	    (b->kind != AP_PY_BIND_IMPORT && b->kind != AP_PY_BIND_FROM && b->kind != AP_PY_BIND_STAR))
		return false;
	return top == NULL || (strncmp(b->module, top, len) == 0 && strchr(".", b->module[len]));
}

int ap_pyfails_top(ap_reader *r, const char *top, const ap_py_module *m)
{
	struct ap_pytarget *t = ap_reader_python(r);
	int importable = t != NULL ? 1 : -1;

	for (size_t i = 0; importable > 0 && i < m->nbindings; i++) {
		const ap_py_binding *b = &m->bindings[i];
		size_t len = b->module != NULL ? strcspn(b->module, ".") : 0;
		char *name;
		if (!sure_import(b, NULL, 0) || len == 0 || of_stdlib(b->module, len) ||
		    (len == strlen(top) && strncmp(b->module, top, len) == 0))
			continue;
		name = ap_xstrndup(b->module, len);
		if (ap_pytarget_finds(t, name) == 0)
			importable = -1;
		free(name);
	}
	return importable;
}

/* Whether the import at binding b of the module of (a package when
 * package) is of a module that is not there. Outside the tree only the
 * top-level name is asked: importing a module may put its submodules in
 * sys.modules (os.path), where no finder finds them. */
static bool import_missing(const struct ap_pyfails *q, const char *of, bool package,
                           const ap_py_binding *b)
{
	size_t len = strcspn(b->module, ".");
	struct ap_pytarget *t;
	char *name;
	bool missing;

	if (len == 0 || (len == strlen(q->top) && strncmp(b->module, q->top, len) == 0)) {
		name = ap_pypath_absolute(of, package, b->module);
		/* above the top: not read here */
		missing = name != NULL && ap_pypath_in_tree(q->r, name) == 0;
		free(name);
		return missing;
	}
	for (size_t i = 0; q->running != NULL && i < q->running->nbindings; i++)
		if (sure_import(&q->running->bindings[i], b->module, len))
			return false;
	if (of_stdlib(b->module, len) || !q->top_importable(q->ctx))
		return false;
	name = ap_xstrndup(b->module, len);
	t = ap_reader_python(q->r);
	missing = t != NULL && ap_pytarget_finds(t, name) == 0;
	free(name);
	return missing;
}

bool ap_pyfails(const struct ap_pyfails *q, const char *name, bool package,
                const ap_py_module *m)
{
	for (size_t i = 0; i < m->nbindings; i++)
		if (sure_import(&m->bindings[i], NULL, 0) && import_missing(q, name, package, &m->bindings[i]))
			return true;
	return false;
}
