/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "cli/cmd.h"
#include "engine/report/merge.h"
#include "core/text.h"

static int cmd_merge_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_merge = {
	.name = "merge",
	.summary = "a fleet's manifests in one summary: capabilities and trees by node",
	.usage =
	"Usage: aiter-probe merge [OPTION]... MANIFEST...\n"
	"Merge the manifests of many nodes: for each capability, how many nodes have\n"
	"it and which lack it or did not probe it; the groups of nodes whose AITER\n"
	"trees differ (by a digest of their inputs' paths and sha256), with each\n"
	"group's AITER version. A node is its manifest's host, else the file's name\n"
	"less '.json'; two manifests of one node are refused. A file that is no\n"
	"manifest (unreadable, empty, truncated) is named and left out; the others\n"
	"are merged. Lists of nodes are written as host ranges\n"
	"(node-[0001-0042,0050]), then 'and N more'; the JSON lists every range,\n"
	"and each node's manifest with its age.\n\n"
	"Options:\n"
	"  --format text|json  what to print (default text)\n"
	"  --max-ranges N      ranges of nodes each list keeps (text: default 8;\n"
	"                      json: default every one; at most 100000)\n"
	"  --fail-on-differ    exit 1 when the nodes differ: a capability some have\n"
	"                      and others lack or did not probe, or several trees\n"
	"  --color[=WHEN]      colour the text: auto (default), always, never\n"
	"  --                  every later argument is a manifest\n"
	"  -h, --help          show this help\n\n"
	"Exit status: 0 merged, 1 the nodes differ (with --fail-on-differ), 2 usage\n"
	"or input error (a node given twice, no manifest merged at all), 3 merged\n"
	"but some file was not (each named on stderr and in the summary).\n",
	.exec = cmd_merge_exec,
};

/* 1 with *out set, or -1 after a usage error. */
static int parse_ranges(const char *text, size_t *out)
{
	size_t n = 0;
	const char *p;

	for (p = text; *p >= '0' && *p <= '9' && n <= AP_MERGE_MAX_RANGES; p++)
		n = n * 10 + (size_t)(*p - '0');
	if (p == text || *p != '\0' || n == 0 || n > AP_MERGE_MAX_RANGES) {
		ap_cli_usage_error(&ap_cmd_merge, "--max-ranges needs a whole number from 1 to %d, "
		                   "not '%s'", AP_MERGE_MAX_RANGES, text);
		return -1;
	}
	*out = n;
	return 1;
}

static int cmd_merge_exec(int argc, char **argv)
{
	const char *format = NULL, *v;
	char **paths = ap_xcalloc((size_t)argc, sizeof *paths);
	size_t npaths = 0, k;
	size_t max_ranges = 0;
	int i, r, json_out = 0, fail_on_differ = 0, operands_only = 0, rc = AP_EXIT_OK;
	ap_merge *mg;
	json_t *report;

	for (i = 1; i < argc; i++) {
		ap_cli_arg_kind kind = ap_cli_arg(argv[i], &operands_only);

		if (kind == AP_ARG_END)
			continue;
		if (kind == AP_ARG_OPERAND) {
			paths[npaths++] = argv[i];
			continue;
		}
		if (kind == AP_ARG_HELP) {
			free(paths);
			return ap_cli_print_help(&ap_cmd_merge, stdout);
		}
		if (strcmp(argv[i], "--fail-on-differ") == 0) {
			fail_on_differ = 1;
			continue;
		}
		if ((r = ap_cli_value(&ap_cmd_merge, "--format", argc, argv, &i, &v)) > 0)
			format = v;
		else if (r == 0 &&
		         (r = ap_cli_value(&ap_cmd_merge, "--max-ranges", argc, argv, &i, &v)) > 0)
			r = parse_ranges(v, &max_ranges);
		else if (r == 0)
			r = ap_cli_color_option(&ap_cmd_merge, argv, &i);
		if (r == 0) {
			ap_cli_unknown_option(&ap_cmd_merge, argv[i]);
			r = -1;
		}
		if (r < 0) {
			free(paths);
			return AP_EXIT_ERROR;
		}
	}
	if (format != NULL && (json_out = ap_cli_format_is_json(&ap_cmd_merge, format)) < 0) {
		free(paths);
		return AP_EXIT_ERROR;
	}
	if (npaths == 0) {
		free(paths);
		return ap_cli_usage_error(&ap_cmd_merge, "needs at least one MANIFEST");
	}
	mg = ap_merge_new();
	for (k = 0; k < npaths; k++) {
		r = ap_merge_add_file(mg, paths[k]);
		if (r == AP_MERGE_SKIPPED)
			ap_cli_fail("%s", ap_error_last());
		if (r < 0) {
			rc = ap_cli_fail("%s", ap_error_last());
			goto out;
		}
	}
	if (ap_merge_nodes(mg) == 0) {
		rc = ap_cli_fail("nothing to merge: no file given is a manifest it could read");
		goto out;
	}
	if (max_ranges == 0 && !json_out)
		max_ranges = AP_MERGE_DEFAULT_RANGES;
	report = ap_merge_report(mg, max_ranges, !json_out);
	if (json_out)
		ap_cli_print_json(report);
	else
		ap_merge_print_text(report, stdout, ap_cli_color(stdout), ap_text_width(stdout));
	json_decref(report);
	if (ap_merge_skipped(mg) > 0)
		rc = AP_EXIT_PARTIAL;
	else if (fail_on_differ && ap_merge_differ(mg))
		rc = AP_EXIT_FAIL;
out:
	ap_merge_free(mg);
	free(paths);
	return rc;
}
