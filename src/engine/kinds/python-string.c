/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/lang/python/pysource.h"

/* `python-string`: a string literal in code (not a comment, not a
 * docstring) that contains a text, as an environment variable's name
 * read with os.environ.get("AITER_SITUV2_A4W4"). */

static const ap_pyconf no_conf = {.key = "python"};

static int pystring_load(const ap_kind_load *l, void **state)
{
	char *text;
	int rc = ap_y_string(l->pack, l->arg, "python-string", &text);

	*state = NULL;
	if (rc < 0)
		return rc;
	if (text[0] == '\0') {
		free(text);
		return ap_y_fail(l->pack, l->arg, "'python-string' must not be empty");
	}
	*state = text;
	return 0;
}

static void pystring_run(const void *state, ap_kind_run *run)
{
	const char *needle = state;
	const char *error;
	const ap_py_module *m = ap_pysource_module(run->reader, run->file, &no_conf, &error);

	if (m == NULL) {
		ap_rule_set_error(run->res, "%s", error);
		return;
	}
	for (size_t i = 0; i < m->nstrings; i++) {
		if (strstr(m->strings[i].value, needle) == NULL)
			continue;
		ap_pysource_match(run, run->file, m->strings[i].line);
		if (run->rule->collect == AP_COLLECT_FIRST || run->res->matches.over)
			break;
	}
	run->res->status = run->res->matches.n > 0 ? AP_RULE_MATCHED : AP_RULE_UNMATCHED;
}

const ap_kind ap_kind_python_string = {
	.key = "python-string",
	.flags = AP_KIND_FILE | AP_KIND_COLLECT,
	.load = pystring_load,
	.run = pystring_run,
	.free = free,
};
