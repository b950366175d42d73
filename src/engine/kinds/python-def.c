/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/lang/python/pysource.h"

/* `python-def`: a function's signature in a Python module, read from the
 * source (decorators such as AITER's @compile_ops, which hide it from
 * inspect.signature, do not hide it here):
 *
 *   file: aiter/mla.py
 *   python-def: mla_decode_fwd        # or Class.method; one per file alternative
 *   params: [q_scale, kv_scale]       # all present
 *   binds: {positional: 8, keywords: [sm_scale, causal]}
 *   param_at: 7                       # capture `param`: the 7th positional parameter
 *
 * A match is the def's line, with the capture `params` (its signature). */

struct pydef {
	char **names;
	size_t nnames;
	ap_pydef_check check;
	ap_pyconf conf;
};

static const char *const pydef_options[] = {AP_PYDEF_OPTIONS, NULL};

static void pydef_free(void *state)
{
	struct pydef *p = state;

	if (p == NULL)
		return;
	ap_y_strings_free(p->names, p->nnames);
	ap_pydef_check_free(&p->check);
	ap_pyconf_free(&p->conf);
	free(p);
}

static int pydef_load(const ap_kind_load *l, void **state)
{
	struct pydef *p = ap_xcalloc(1, sizeof *p);
	int rc;

	*state = p;
	if ((rc = ap_pysource_names_load(l, "python-def", l->arg, &p->names, &p->nnames)) < 0 ||
	    (rc = ap_pydef_check_load(l->pack, l->opts, &p->check)) < 0)
		return rc;
	return ap_pyconf_load(l->pack, &l->opts[3], &p->conf);
}

static void pydef_run(const void *state, ap_kind_run *run)
{
	const struct pydef *p = state;
	ap_rule_result *res = run->res;
	const ap_file *f;
	ap_py_def *view;
	const ap_py_def *d = ap_pysource_pick_def(run, p->names, p->nnames, &p->conf, &f, &view);
	char *why;

	if (d == NULL)
		return;
	why = ap_pydef_check_refusal(&p->check, d);
	if (why != NULL) {
		res->status = AP_RULE_UNMATCHED;
		res->reason = why;
	} else {
		ap_pydef_capture(&p->check, d, ap_pysource_match(run, f, d->line));
		res->status = AP_RULE_MATCHED;
	}
	ap_pydef_view_free(view);
}

const ap_kind ap_kind_python_def = {
	.key = "python-def",
	.options = pydef_options,
	.flags = AP_KIND_PICKS_FILE,
	.load = pydef_load,
	.run = pydef_run,
	.free = pydef_free,
};
