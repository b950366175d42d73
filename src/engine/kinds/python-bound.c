/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/lang/python/pysource.h"

/* `python-bound`: the largest value of one of a function's names that a
 * call returns with, as its body's comparisons of the name with integer
 * literals decide (`assert 1 <= nhead <= 96`, `if nhead > 96: raise`) on
 * the path CPython runs (ap_py_def_bound), captured as a decimal number of
 * any size, 0 when the body has none; unknown when that depends on what
 * only a run knows:
 *
 *   file: [aiter/ops/triton/gluon/mla_gluon.py, aiter/ops/triton/gluon/mla_decode_gluon.py]
 *   python-bound: nhead
 *   def: [mla_gluon, mla_decode_gluon]   # one, or one per file alternative
 *   capture: heads                       # default: bound
 *
 * Matched when the def exists: at the comparison that gives the bound, or
 * at the def when there is none. */

struct pybound {
	char *name;
	char **defs;
	size_t ndefs;
	char *capture;
	ap_pyconf conf;
};

static const char *const pybound_options[] = {"def", "capture", "assume_false", NULL};

static void pybound_free(void *state)
{
	struct pybound *p = state;

	if (p == NULL)
		return;
	free(p->name);
	ap_y_strings_free(p->defs, p->ndefs);
	free(p->capture);
	ap_pyconf_free(&p->conf);
	free(p);
}

static int pybound_load(const ap_kind_load *l, void **state)
{
	struct pybound *p = ap_xcalloc(1, sizeof *p);
	int rc;

	*state = p;
	if ((rc = ap_y_string(l->pack, l->arg, "python-bound", &p->name)) < 0 ||
	    (rc = ap_y_need_field(l->pack, l->map, "rule", "def", &l->opts[0])) < 0 ||
	    (rc = ap_pysource_names_load(l, "def", l->opts[0].val, &p->defs, &p->ndefs)) < 0)
		return rc;
	ap_py_name_normalize(&p->name);
	if (l->opts[1].key != NULL)
		rc = ap_y_string(l->pack, l->opts[1].val, "capture", &p->capture);
	else
		p->capture = ap_xstrdup("bound");
	if (rc == 0)
		rc = ap_pyconf_load(l->pack, &l->opts[2], &p->conf);
	return rc;
}

static void pybound_run(const void *state, ap_kind_run *run)
{
	const struct pybound *p = state;
	const ap_file *f;
	ap_py_def *view;
	const ap_py_def *d = ap_pysource_pick_def(run, p->defs, p->ndefs, &p->conf, &f, &view);
	const char *error;
	ap_py_bound b;

	if (d == NULL)
		return;
	ap_py_def_bound(ap_pysource_module(run->reader, f, &p->conf, &error), d, p->name,
	                (const char *const *)p->conf.false_names, &b);
	if (b.kind == AP_PY_BOUND_UNKNOWN) {
		ap_rule_set_error(run->res, "%s: %s", d->qualname, b.why);
		run->res->status = AP_RULE_UNKNOWN;
		ap_pydef_view_free(view);
		return;
	}
	ap_match_capture(ap_pysource_match(run, f, b.kind == AP_PY_BOUND_FOUND ? b.line : d->line),
	                 p->capture, b.value, strlen(b.value));
	run->res->status = AP_RULE_MATCHED;
	ap_pydef_view_free(view);
}

const ap_kind ap_kind_python_bound = {
	.key = "python-bound",
	.options = pybound_options,
	.flags = AP_KIND_PICKS_FILE,
	.load = pybound_load,
	.run = pybound_run,
	.free = pybound_free,
};
