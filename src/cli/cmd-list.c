/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <string.h>

#include "cli/cmd.h"
#include "engine/report/explain.h"
#include "engine/rules.h"
#include "core/text.h"

static int cmd_list_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_list = {
	.name = "list",
	.summary = "the capabilities, probes and rules the loaded packs define",
	.usage =
	"Usage: aiter-probe list [OPTION]... [capabilities|probes|rules]\n"
	"List what the loaded rule packs define, as 'scan' loads them: each id, its\n"
	"description and the pack file and line that define it. capabilities: the\n"
	"ids to --require, with what a backend does when one is unsupported;\n"
	"probes: how each is decided (requires, launch); rules: each rule's kind,\n"
	"files and what it looks for. Without a selector: probes and rules.\n\n"
	"Options:\n"
	"  --rules PATH          a rule pack file or folder to load too; repeatable\n"
	"  --no-default-rules    do not load the installed packs\n"
	"  --format FORMAT       what to print: text (the default), json, or ids (each\n"
	"                        id alone on a line, for scripts and completion)\n"
	"  --color[=WHEN]        paint the text: auto (the default: on a terminal,\n"
	"                        unless NO_COLOR is set or TERM=dumb), always (bare\n"
	"                        --color) or never\n"
	"  -h, --help            show this help\n\n"
	"Exit status: 0 listed, 2 usage or input error (a pack that does not load).\n",
	.exec = cmd_list_exec,
};

static int selector(const char *word, unsigned *what)
{
	static const struct {
		const char *name;
		unsigned what;
	} names[] = {
		{"capabilities", AP_LIST_CAPABILITIES},
		{"probes", AP_LIST_PROBES},
		{"rules", AP_LIST_RULES},
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(word, names[i].name) == 0) {
			*what = names[i].what;
			return 0;
		}
	return -1;
}

/* The ids of every section of doc, in its order, one a line. */
static void print_ids(const json_t *doc)
{
	const char *section;
	json_t *entries, *entry;
	size_t i;

	json_object_foreach((json_t *)doc, section, entries)
		json_array_foreach(entries, i, entry)
			puts(json_string_value(json_object_get(entry, "id")));
}

static int cmd_list_exec(int argc, char **argv)
{
	const struct ap_cmd *cmd = &ap_cmd_list;
	struct ap_scan_cli o = {0};
	const char *format = "text", *word = NULL, *v;
	unsigned what = AP_LIST_PROBES | AP_LIST_RULES;
	ap_ruleset *rs = NULL;
	int i, r, rc, ids_out, json_out = 0, operands_only = 0;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		ap_cli_arg_kind kind = ap_cli_arg(arg, &operands_only);

		if (kind == AP_ARG_END)
			continue;
		if (kind == AP_ARG_HELP) {
			rc = ap_cli_print_help(cmd, stdout);
			goto out;
		}
		if (kind == AP_ARG_OPERAND) {
			if (word != NULL) {
				rc = ap_cli_unexpected(cmd, arg);
				goto out;
			}
			word = arg;
			continue;
		}
		r = ap_scan_cli_option(cmd, &o, argc, argv, &i);
		if (r > 0 && ap_scan_cli_reads_tree(&o)) {
			rc = ap_cli_unknown_option(cmd, arg);
			goto out;
		}
		if (r == 0 && (r = ap_cli_value(cmd, "--format", argc, argv, &i, &v)) > 0)
			format = v;
		if (r == 0)
			r = ap_cli_color_option(cmd, argv, &i);
		if (r < 0) {
			rc = AP_EXIT_ERROR;
			goto out;
		}
		if (r == 0) {
			rc = ap_cli_unknown_option(cmd, arg);
			goto out;
		}
	}
	if (word != NULL && selector(word, &what) < 0) {
		rc = ap_cli_usage_error(cmd, "list takes capabilities, probes or rules, not '%s'",
		                        word);
		goto out;
	}
	ids_out = strcmp(format, "ids") == 0;
	if (!ids_out && strcmp(format, "text") != 0 && !(json_out = strcmp(format, "json") == 0)) {
		rc = ap_cli_usage_error(cmd, "--format takes text, json or ids, not '%s'", format);
		goto out;
	}
	rc = ap_cli_load_rules(&rs, o.rules, o.nrules, o.no_default_rules);
	if (rc == AP_EXIT_OK) {
		json_t *doc = ap_list_build(rs, what);
		if (ids_out)
			print_ids(doc);
		else if (json_out)
			ap_cli_print_json(doc);
		else
			ap_list_print_text(doc, stdout, ap_cli_color(stdout), ap_text_width(stdout));
		json_decref(doc);
	}
out:
	ap_ruleset_free(rs);
	ap_scan_cli_free(&o);
	return rc;
}
