/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/lang/python/pypath.h"
#include "engine/lang/python/pysource.h"

/* `python-attr`: what `hasattr(Cls, name)` answers on the class that
 * importing the file binds to Cls, read from the class body as getattr
 * finds it (vLLM asks this of AITER's CustomAllreduce to tell its builds
 * apart). Every name listed must be there:
 *
 *   file: aiter/dist/device_communicators/custom_all_reduce.py
 *   python-attr: [CustomAllreduce.custom_all_gather, CustomAllreduce.should_custom_ag]
 *
 * Any binding counts (a def, a property, a value, a nested class), unlike
 * python-def, which wants a def. A match per name, at its line, captures
 * `attr` (the name) and `holds` (what it is bound to). */

struct pyattr {
	char **names;
	size_t nnames;
	ap_pyconf conf;
};

static const char *const pyattr_options[] = {"assume_false", NULL};

static void pyattr_free(void *state)
{
	struct pyattr *p = state;

	if (p == NULL)
		return;
	ap_y_strings_free(p->names, p->nnames);
	ap_pyconf_free(&p->conf);
	free(p);
}

static int pyattr_load(const ap_kind_load *l, void **state)
{
	struct pyattr *p = ap_xcalloc(1, sizeof *p);
	int rc;

	*state = p;
	if ((rc = ap_y_strings(l->pack, l->arg, "python-attr", &p->names, &p->nnames)) < 0)
		return rc;
	for (size_t i = 0; i < p->nnames; i++) {
		if (!ap_py_dotted_name(p->names[i]) || strchr(p->names[i], '.') == NULL)
			return ap_y_fail(l->pack, l->arg,
			                 "'python-attr' must name an attribute of a class (Cls.name), "
			                 "not '%s'", p->names[i]);
		ap_py_name_normalize(&p->names[i]);
	}
	return ap_pyconf_load(l->pack, &l->opts[0], &p->conf);
}

/* What hasattr answers for one name: 1 there, 0 not, -1 unknown (why set),
 * -2 an error (why set). */
static int one(ap_kind_run *run, const struct pyattr *p, const ap_file *f,
               const ap_py_module *m, const char *mod, const char *name, ap_buf *why)
{
	ap_pyref ref;
	int there;

	ap_pysource_attr(run->reader, &p->conf, f, m, mod, name, &ref);
	switch (ref.kind) {
	case AP_PYREF_DEF:
	case AP_PYREF_CLASS:
	case AP_PYREF_MODULE:
	case AP_PYREF_VALUE: {
		const ap_file *at = ref.file != NULL ? ref.file : f;
		ap_match *hit = ap_pysource_match(run, at, ref.line);
		const char *holds = ap_pyref_kind_name(ref.kind);
		ap_match_capture(hit, "attr", name, strlen(name));
		ap_match_capture(hit, "holds", holds, strlen(holds));
		there = 1;
		break;
	}
	case AP_PYREF_UNBOUND:
		/* a why: the first part is no class, whose attributes are not read */
		if (ref.why == NULL) {
			ap_buf_printf(why, "%s has no attribute %s", f->path, name);
			there = 0;
		} else {
			ap_buf_printf(why, "%s: %s: hasattr on it is not read", name, ref.why);
			there = -1;
		}
		break;
	case AP_PYREF_ERROR:
		ap_buf_printf(why, "%s", ref.why);
		there = -2;
		break;
	default:
		ap_buf_printf(why, "what %s binds to %s is not known without running it: %s", f->path,
		              name, ref.why != NULL ? ref.why : ap_pyref_kind_name(ref.kind));
		there = -1;
		break;
	}
	ap_pyref_free(&ref);
	return there;
}

static void pyattr_run(const void *state, ap_kind_run *run)
{
	const struct pyattr *p = state;
	ap_rule_result *res = run->res;
	const ap_file *f = run->file;
	const char *error;
	const ap_py_module *m = ap_pysource_module(run->reader, f, &p->conf, &error);
	ap_buf absent = AP_BUF_INIT, unknown = AP_BUF_INIT, failed = AP_BUF_INIT;
	char *mod;

	res->file = f->path;
	if (m == NULL) {
		ap_rule_set_error(res, "%s", error);
		return;
	}
	mod = ap_pypath_importable(f->path);
	for (size_t i = 0; i < p->nnames; i++) {
		ap_buf why = AP_BUF_INIT;
		int there = one(run, p, f, m, mod, p->names[i], &why);
		ap_buf *into = there == 0 ? &absent : there == -1 ? &unknown : &failed;
		if (there != 1 && (there != -2 || failed.len == 0))
			ap_buf_printf(into, "%s%s", into->len ? "; " : "", why.data);
		ap_buf_free(&why);
	}
	free(mod);
	if (failed.len > 0) {
		ap_rule_set_error(res, "%s", failed.data);
	} else if (absent.len > 0) {
		res->status = AP_RULE_UNMATCHED;
		res->reason = ap_buf_detach(&absent);
	} else if (unknown.len > 0) {
		res->status = AP_RULE_UNKNOWN;
		res->reason = ap_buf_detach(&unknown);
	} else {
		res->status = AP_RULE_MATCHED;
	}
	if (res->status != AP_RULE_MATCHED)
		ap_match_list_free(&res->matches); /* the names found do not make a match */
	ap_buf_free(&absent);
	ap_buf_free(&unknown);
	ap_buf_free(&failed);
}

const ap_kind ap_kind_python_attr = {
	.key = "python-attr",
	.options = pyattr_options,
	.flags = AP_KIND_FILE,
	.load = pyattr_load,
	.run = pyattr_run,
	.free = pyattr_free,
};
