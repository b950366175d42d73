/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "cli/cmd.h"
#include "engine/report/diff.h"
#include "core/manifest-read.h"
#include "engine/manifest.h"
#include "engine/report/sarif.h"

static int cmd_diff_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_diff = {
	.name = "diff",
	.summary = "compare two manifests: capabilities gained, lost, changed",
	.usage =
	"Usage: aiter-probe diff OLD NEW [--format text|json|sarif]\n"
	"                        [--fail-on lost|changed|any]\n"
	"Compare two manifests: capabilities gained, lost and changed (supported\n"
	"flag, launch status per device), rule status changes, and case tables\n"
	"(the capture tuples of a rule's matches, e.g. the reducer's head counts).\n\n"
	"Options:\n"
	"  --format FORMAT      what to print: text (the default), json (the report)\n"
	"                       or sarif (SARIF 2.1.0 for code scanning: each\n"
	"                       difference located at its file and line in OLD's\n"
	"                       tree; lost is an error, other changes and removed\n"
	"                       cases warnings, newly matched rules and added cases\n"
	"                       notes)\n"
	"  --fail-on CLASS      exit 1 when a difference of CLASS exists:\n"
	"                         lost     a capability supported in OLD is unsupported,\n"
	"                                  unknown or absent in NEW\n"
	"                         changed  a capability or rule verdict changed (lost\n"
	"                                  and gained included)\n"
	"                         any      any difference at all, case tables included\n"
	"  -h, --help           show this help\n\n"
	"Exit status: 0 no difference of the --fail-on class (always 0 without it),\n"
	"1 such a difference exists, 2 usage or input error.\n",
	.exec = cmd_diff_exec,
};

static int load(const char *path, json_t **out)
{
	if (ap_manifest_read_file(path, out) < 0)
		return ap_cli_fail("%s", ap_error_last());
	return AP_EXIT_OK;
}

static int cmd_diff_exec(int argc, char **argv)
{
	const char *format = "text", *fail_on = NULL, *paths[2], *v;
	size_t npaths = 0;
	json_t *old = NULL, *new = NULL, *report, *sarif;
	ap_diff_class cls = AP_DIFF_ANY;
	int i, r, rc, json_out = 0, sarif_out, operands_only = 0;

	for (i = 1; i < argc; i++) {
		ap_cli_arg_kind kind = ap_cli_arg(argv[i], &operands_only);

		if (kind == AP_ARG_END)
			continue;
		if (kind == AP_ARG_HELP)
			return ap_cli_print_help(&ap_cmd_diff, stdout);
		if (kind == AP_ARG_OPERAND) {
			if (npaths == 2)
				return ap_cli_unexpected(&ap_cmd_diff, argv[i]);
			paths[npaths++] = argv[i];
			continue;
		}
		if ((r = ap_cli_value(&ap_cmd_diff, "--format", argc, argv, &i, &v)) > 0)
			format = v;
		else if (r == 0 &&
		         (r = ap_cli_value(&ap_cmd_diff, "--fail-on", argc, argv, &i, &v)) > 0)
			fail_on = v;
		else if (r == 0)
			return ap_cli_unknown_option(&ap_cmd_diff, argv[i]);
		if (r < 0)
			return AP_EXIT_ERROR;
	}
	if (npaths != 2)
		return ap_cli_usage_error(&ap_cmd_diff, "needs two manifests, OLD and NEW");
	sarif_out = strcmp(format, "sarif") == 0;
	if (!sarif_out && strcmp(format, "text") != 0 && !(json_out = strcmp(format, "json") == 0))
		return ap_cli_usage_error(&ap_cmd_diff, "--format takes text, json or sarif, not '%s'",
		                          format);
	if (fail_on != NULL && ap_diff_class_parse(fail_on, &cls) < 0)
		return ap_cli_usage_error(&ap_cmd_diff, "--fail-on takes lost, changed or any, not '%s'",
		                          fail_on);
	if ((rc = load(paths[0], &old)) != AP_EXIT_OK || (rc = load(paths[1], &new)) != AP_EXIT_OK) {
		json_decref(old);
		return rc;
	}
	report = ap_diff_manifests(old, paths[0], new, paths[1]);
	if (sarif_out) {
		sarif = ap_sarif_from_diff(report, old);
		ap_cli_print_json(sarif);
		json_decref(sarif);
	} else if (json_out) {
		ap_cli_print_json(report);
	} else {
		/* Values from the trees (captures, reasons, paths) never reach a
		 * terminal raw. */
		json_t *safe = ap_json_for_terminal(report);
		ap_diff_print_text(safe, stdout);
		json_decref(safe);
	}
	rc = fail_on != NULL && ap_diff_has(report, cls) ? AP_EXIT_FAIL : AP_EXIT_OK;
	json_decref(report);
	json_decref(old);
	json_decref(new);
	return rc;
}
