/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/lang/python/pysource.h"

/* `python-export`: what `from PACKAGE import NAME` binds, resolved from the
 * sources as Python binds it on a default import (star imports and their
 * __all__, `import ... as`, aliases, module-level if/try: both arms of an
 * unknown condition, a name bound only in an `except` handler not counted,
 * the names in `assume_false` read as false). Matched when it resolves to a
 * def meeting the python-def conditions, at the def; a def a decorator binds
 * to a function of its own (ap_pyref.nosig) is a def for a rule with no
 * conditions, unknown for one with conditions:
 *
 *   python-export: mla_reduce_v1
 *   from: aiter
 *   binds: {positional: 9}
 *   assume_false: [AITER_TRITON_ONLY, AITER_AOT_IMPORT] */

struct pyexport {
	char *name;
	char *from;
	ap_pydef_check check;
	ap_pyconf conf;
};

static const char *const pyexport_options[] = {AP_PYDEF_OPTIONS, "from", NULL};

static void pyexport_free(void *state)
{
	struct pyexport *p = state;

	if (p == NULL)
		return;
	free(p->name);
	free(p->from);
	ap_pydef_check_free(&p->check);
	ap_pyconf_free(&p->conf);
	free(p);
}

static int pyexport_load(const ap_kind_load *l, void **state)
{
	struct pyexport *p = ap_xcalloc(1, sizeof *p);
	const ap_yfield *from = &l->opts[AP_PYDEF_NOPTIONS];
	int rc;

	*state = p;
	if ((rc = ap_y_string(l->pack, l->arg, "python-export", &p->name)) < 0 ||
	    (rc = ap_y_need_field(l->pack, l->map, "rule", "from", from)) < 0 ||
	    (rc = ap_y_string(l->pack, from->val, "from", &p->from)) < 0)
		return rc;
	if (!ap_py_dotted_name(p->from))
		return ap_y_fail(l->pack, from->val, "'from' must be a module name (a.b.c), not '%s'",
		                 p->from);
	if (!ap_py_dotted_name(p->name) || strchr(p->name, '.') != NULL)
		return ap_y_fail(l->pack, l->arg, "'python-export' must be a name, not '%s'", p->name);
	ap_py_name_normalize(&p->name);
	ap_py_name_normalize(&p->from);
	if ((rc = ap_pydef_check_load(l->pack, l->opts, &p->check)) < 0)
		return rc;
	return ap_pyconf_load(l->pack, &l->opts[3], &p->conf);
}

/* The file of module `from` (its __init__.py, else NAME.py), or where
 * Python's finder looks first when neither is there: a rule that resolves
 * to no file still has a place (SARIF locates it there). */
static const char *module_file(ap_reader *r, const char *from)
{
	char *base = ap_xstrdup(from), *path;
	const ap_file *f;

	for (char *c = base; *c != '\0'; c++)
		if (*c == '.')
			*c = '/';
	path = ap_xasprintf("%s/__init__.py", base);
	f = ap_reader_get(r, path);
	free(path);
	if (f->status == AP_FILE_MISSING) {
		path = ap_xasprintf("%s.py", base);
		if (ap_reader_get(r, path)->status != AP_FILE_MISSING)
			f = ap_reader_get(r, path);
		free(path);
	}
	free(base);
	return f->path;
}

static void pyexport_run(const void *state, ap_kind_run *run)
{
	const struct pyexport *p = state;
	ap_rule_result *res = run->res;
	ap_pyref ref;
	bool missing;
	char *why;

	ap_pysource_resolve(run->reader, &p->conf, p->from, p->name, &ref, &missing);
	if (ref.file != NULL)
		res->file = ref.file->path;
	if (res->file == NULL)
		res->file = module_file(run->reader, p->from);
	if (missing) {
		res->status = AP_RULE_MISSING;
		res->reason = ap_xasprintf("no module %s in the tree", p->from);
	} else if (ref.kind == AP_PYREF_ERROR) {
		ap_rule_set_error(res, "%s", ref.why);
	} else if (ref.kind == AP_PYREF_UNKNOWN) {
		res->status = AP_RULE_UNKNOWN;
		res->reason = ap_xasprintf("what %s binds to %s is not known without running it: %s",
		                           p->from, p->name, ref.why);
	} else if (ref.kind != AP_PYREF_DEF) {
		res->status = AP_RULE_UNMATCHED;
		if (ref.kind == AP_PYREF_UNBOUND)
			res->reason = ap_xasprintf("%s does not export %s", p->from, p->name);
		else if (ref.perhaps)
			res->reason = ap_xasprintf("%s binds no def to %s: %s", p->from, p->name,
			                           ref.why);
		else
			res->reason = ap_xasprintf("%s exports %s, but it is %s, not a def%s%s%s",
			                           p->from, p->name, ap_pyref_kind_name(ref.kind),
			                           ref.why ? " (" : "", ref.why ? ref.why : "",
			                           ref.why ? ")" : "");
	} else if (ref.nosig && ap_pydef_check_asks(&p->check)) {
		res->status = AP_RULE_UNKNOWN;
		res->reason = ap_xasprintf("%s exports %s, a function whose parameters are not "
		                           "known without running it: %s", p->from, p->name, ref.why);
	} else if (ref.nosig) {
		ap_pysource_match(run, ref.file, ref.def->line);
		res->status = AP_RULE_MATCHED;
	} else if ((why = ap_pydef_check_refusal(&p->check, ref.def)) != NULL) {
		res->status = AP_RULE_UNMATCHED;
		res->reason = why;
	} else {
		ap_pydef_capture(&p->check, ref.def, ap_pysource_match(run, ref.file, ref.def->line));
		res->status = AP_RULE_MATCHED;
	}
	ap_pyref_free(&ref);
}

const ap_kind ap_kind_python_export = {
	.key = "python-export",
	.options = pyexport_options,
	.load = pyexport_load,
	.run = pyexport_run,
	.free = pyexport_free,
};
