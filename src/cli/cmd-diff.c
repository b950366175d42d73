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
#include "engine/report/explain.h"
#include "engine/report/sarif.h"
#include "engine/rules.h"
#include "core/text.h"

static int cmd_diff_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_diff = {
	.name = "diff",
	.summary = "compare two manifests: capabilities gained, lost, changed",
	.usage =
	"Usage: aiter-probe diff OLD NEW [--format text|json|sarif]\n"
	"                        [--fail-on lost|changed|any] [--color[=WHEN]]\n"
	"                        [--rules PATH]... [--no-default-rules]\n"
	"Compare two manifests: capabilities gained, lost and changed (supported\n"
	"flag, launch status per device), rule status changes, case tables (the\n"
	"capture tuples of a rule's matches, e.g. the reducer's head counts) and\n"
	"values (a rule with one tuple on each side: a signature's parameters as a\n"
	"list, a bound as a number that rose or fell).\n\n"
	"Options:\n"
	"  --format FORMAT      what to print: text (the default, fitted to $COLUMNS\n"
	"                       or the terminal, else 80 columns), json (the report)\n"
	"                       or sarif (SARIF 2.1.0 for code scanning: each\n"
	"                       difference located in NEW's tree, OLD's place as a\n"
	"                       related location; lost is an error, other changes,\n"
	"                       removed cases and lost values warnings, newly\n"
	"                       matched rules, added cases and gained values notes)\n"
	"  --color[=WHEN]       paint the text: auto (the default: on a terminal,\n"
	"                       unless NO_COLOR is set or TERM=dumb), always (bare\n"
	"                       --color) or never\n"
	"  --rules PATH         a rule pack file or folder whose descriptions the\n"
	"                       SARIF rules carry; repeatable (the installed packs\n"
	"                       are read too)\n"
	"  --no-default-rules   do not read the installed packs\n"
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

/* The packs' account of their ids, for the SARIF rules' descriptions (none
 * with --no-default-rules alone); AP_EXIT_ERROR after printing why they do
 * not load. */
static int describe(const struct ap_scan_cli *o, json_t **described)
{
	ap_ruleset *rs = NULL;
	int rc;

	/* --no-default-rules alone: no descriptions, which the log says. */
	if (o->no_default_rules && o->nrules == 0)
		return AP_EXIT_OK;
	rc = ap_cli_load_rules(&rs, o->rules, o->nrules, o->no_default_rules);

	if (rc == AP_EXIT_OK)
		*described = ap_list_build(rs, AP_LIST_RULES | AP_LIST_CAPABILITIES);
	ap_ruleset_free(rs);
	return rc;
}

static int cmd_diff_exec(int argc, char **argv)
{
	const struct ap_cmd *cmd = &ap_cmd_diff;
	const char *format = "text", *fail_on = NULL, *paths[2], *v;
	struct ap_scan_cli o = {0};
	size_t npaths = 0;
	json_t *old = NULL, *new = NULL, *report, *sarif, *described = NULL;
	ap_diff_class cls = AP_DIFF_ANY;
	int i, r, rc, json_out = 0, sarif_out, operands_only = 0;

	for (i = 1; i < argc; i++) {
		ap_cli_arg_kind kind = ap_cli_arg(argv[i], &operands_only);

		if (kind == AP_ARG_END)
			continue;
		if (kind == AP_ARG_HELP) {
			ap_scan_cli_free(&o);
			return ap_cli_print_help(cmd, stdout);
		}
		if (kind == AP_ARG_OPERAND) {
			if (npaths == 2) {
				ap_scan_cli_free(&o);
				return ap_cli_unexpected(cmd, argv[i]);
			}
			paths[npaths++] = argv[i];
			continue;
		}
		if ((r = ap_cli_value(cmd, "--format", argc, argv, &i, &v)) > 0)
			format = v;
		else if (r == 0 && (r = ap_cli_value(cmd, "--fail-on", argc, argv, &i, &v)) > 0)
			fail_on = v;
		else if (r == 0 && (r = ap_cli_color_option(cmd, argv, &i)) == 0) {
			const char *arg = argv[i];

			r = ap_scan_cli_option(cmd, &o, argc, argv, &i);
			if (r == 0 || (r > 0 && ap_scan_cli_reads_tree(&o))) {
				ap_scan_cli_free(&o);
				return ap_cli_unknown_option(cmd, arg);
			}
		}
		if (r < 0) {
			ap_scan_cli_free(&o);
			return AP_EXIT_ERROR;
		}
	}
	rc = AP_EXIT_ERROR;
	if (npaths != 2) {
		rc = ap_cli_usage_error(cmd, "needs two manifests, OLD and NEW");
		goto out;
	}
	sarif_out = strcmp(format, "sarif") == 0;
	if (!sarif_out && strcmp(format, "text") != 0 && !(json_out = strcmp(format, "json") == 0)) {
		rc = ap_cli_usage_error(cmd, "--format takes text, json or sarif, not '%s'", format);
		goto out;
	}
	if (fail_on != NULL && ap_diff_class_parse(fail_on, &cls) < 0) {
		rc = ap_cli_usage_error(cmd, "--fail-on takes lost, changed or any, not '%s'",
		                        fail_on);
		goto out;
	}
	if ((rc = load(paths[0], &old)) != AP_EXIT_OK || (rc = load(paths[1], &new)) != AP_EXIT_OK)
		goto out;
	if (sarif_out && (rc = describe(&o, &described)) != AP_EXIT_OK)
		goto out;
	report = ap_diff_manifests(old, paths[0], new, paths[1]);
	if (sarif_out) {
		sarif = ap_sarif_from_diff(report, old, new, described);
		ap_cli_print_json(sarif);
		json_decref(sarif);
	} else if (json_out) {
		ap_cli_print_json(report);
	} else {
		/* Values from the trees (captures, reasons, paths) never reach a
		 * terminal raw. */
		json_t *safe = ap_json_for_terminal(report);
		ap_diff_print_text(safe, stdout, ap_cli_color(stdout), ap_text_width(stdout));
		json_decref(safe);
	}
	rc = fail_on != NULL && ap_diff_has(report, cls) ? AP_EXIT_FAIL : AP_EXIT_OK;
	json_decref(report);
out:
	json_decref(described);
	json_decref(old);
	json_decref(new);
	ap_scan_cli_free(&o);
	return rc;
}
