/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/mla-route.h"
#include "cli/cmd.h"
#include "engine/report/explain.h"
#include "engine/manifest.h"
#include "engine/rules.h"
#include "core/suggest.h"
#include "core/text.h"

static int cmd_explain_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_explain = {
	.name = "explain",
	.summary = "why is a capability (or a rule) supported or not, and what then?",
	.usage =
	"Usage: aiter-probe explain [OPTION]... CAP|RULE\n"
	"Scan the AITER tree (as 'check' does), or read a manifest, and explain one\n"
	"capability: its description, the requires tree with each rule's status,\n"
	"what it looked for and the source lines it found, the GPU cross-check, the\n"
	"MLA plan row and what a backend does when it is unsupported. Given a rule\n"
	"id, the same for that rule, and the capabilities that require it.\n\n"
	"Options:\n"
	"  --manifest FILE     explain FILE instead of scanning, once its inputs are\n"
	"                      re-hashed and found unchanged (--rules and\n"
	"                      --no-default-rules still name the packs that define\n"
	"                      what it holds)\n"
	"  --heads N           for an MLA decode capability: how N heads per rank\n"
	"                      (1..128) route on this tree, whether a launch verified\n"
	"                      it, the fallback and what the padding costs\n"
	"  --format text|json  what to print (default text)\n"
	"  --color[=WHEN]      colour the verdicts: auto (default), always, never\n"
	"  -h, --help          show this help\n"
	"  and every option of 'aiter-probe scan' except -o, --save, --host and\n"
	"  --format\n\n"
	"Exit status: 0 explained (whatever the verdict: 'check' answers go or\n"
	"no-go), 2 usage or input error (an unknown id, or a stale manifest).\n",
	.exec = cmd_explain_exec,
};

/* --heads' value: digits only, 1..AP_MLA_MAX_HEADS; -1 otherwise. */
static int heads_value(const char *text)
{
	int n = 0;

	if (*text == '\0' || strspn(text, "0123456789") != strlen(text) || strlen(text) > 3)
		return -1;
	for (; *text != '\0'; text++)
		n = n * 10 + (*text - '0');
	return n >= 1 && n <= AP_MLA_MAX_HEADS ? n : -1;
}

/* --heads answers only for a capability whose launch runs the MLA decode. */
static int check_mla(const ap_ruleset *rs, const char *id, const ap_probe *probe)
{
	ap_buf names = AP_BUF_INIT;
	char *safe;

	if (probe != NULL && probe->launch != NULL)
		return AP_EXIT_OK;
	for (size_t i = 0; i < rs->nprobes; i++)
		if (rs->probes[i].launch != NULL)
			ap_buf_printf(&names, "%s%s", names.len > 0 ? ", " : "", rs->probes[i].id);
	safe = ap_xnonnull(ap_terminal_text(id, strlen(id)));
	ap_cli_fail("--heads needs an MLA decode capability (one with a launch: %s), not '%s'",
	            names.len > 0 ? names.data : "none loaded", safe);
	free(safe);
	ap_buf_free(&names);
	return AP_EXIT_ERROR;
}

/* The probe or rule named id, or an error naming the nearest ids. */
static int find_id(const ap_ruleset *rs, const char *id, const ap_probe **probe,
                   const ap_rule **rule)
{
	const char **known;
	char *tail, *safe;
	size_t n;

	*probe = ap_ruleset_find_probe(rs, id);
	*rule = ap_ruleset_find_rule(rs, id);
	if (*probe != NULL || *rule != NULL)
		return AP_EXIT_OK;
	known = ap_ruleset_ids(rs, true, true, &n);
	tail = ap_xnonnull(ap_suggest_tail(id, known, n));
	safe = ap_xnonnull(ap_terminal_text(id, strlen(id)));
	ap_cli_fail("unknown capability or rule '%s' (not defined by any loaded pack)%s", safe, tail);
	free(safe);
	free(tail);
	free(known);
	return AP_EXIT_ERROR;
}

static int explain(const ap_ruleset *rs, const ap_probe *probe, const ap_rule *rule,
                   const json_t *manifest, int heads, int json_out)
{
	json_t *doc;
	int r;

	r = heads > 0       ? ap_explain_heads(probe, manifest, heads, &doc)
	    : probe != NULL ? ap_explain_capability(rs, probe, manifest, &doc)
	                    : ap_explain_rule(rs, rule, manifest, &doc);
	if (r < 0)
		return ap_cli_fail("%s", ap_error_last());
	if (json_out)
		ap_cli_print_json(doc);
	else if (heads > 0)
		ap_explain_heads_print_text(doc, stdout, ap_cli_color(stdout), ap_text_width(stdout));
	else
		ap_explain_print_text(doc, stdout, ap_cli_color(stdout), ap_text_width(stdout));
	json_decref(doc);
	return AP_EXIT_OK;
}

static int cmd_explain_exec(int argc, char **argv)
{
	const struct ap_cmd *cmd = &ap_cmd_explain;
	struct ap_scan_cli o = {0};
	const char *format = "text", *from = NULL, *id = NULL, *heads_text = NULL, *v;
	json_t *manifest = NULL;
	ap_ruleset *rs = NULL;
	const ap_probe *probe;
	const ap_rule *rule;
	int i, r, rc, json_out, heads = 0, operands_only = 0;

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
			if (id != NULL) {
				rc = ap_cli_unexpected(cmd, arg);
				goto out;
			}
			id = arg;
			continue;
		}
		r = ap_scan_cli_option(cmd, &o, argc, argv, &i);
		if (r == 0 && (r = ap_cli_value(cmd, "--format", argc, argv, &i, &v)) > 0)
			format = v;
		if (r == 0 && (r = ap_cli_value(cmd, "--manifest", argc, argv, &i, &v)) > 0)
			from = v;
		if (r == 0 && (r = ap_cli_value(cmd, "--heads", argc, argv, &i, &v)) > 0)
			heads_text = v;
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
	if (id == NULL) {
		rc = ap_cli_usage_error(cmd, "a capability or rule id is needed");
		goto out;
	}
	if ((json_out = ap_cli_format_is_json(cmd, format)) < 0) {
		rc = AP_EXIT_ERROR;
		goto out;
	}
	if (heads_text != NULL && (heads = heads_value(heads_text)) < 0) {
		char *safe = ap_xnonnull(ap_terminal_text(heads_text, strlen(heads_text)));
		rc = ap_cli_usage_error(cmd, "--heads takes a head count from 1 to %d, not '%s'",
		                        AP_MLA_MAX_HEADS, safe);
		free(safe);
		goto out;
	}
	if (from != NULL && ap_scan_cli_reads_tree(&o)) {
		rc = ap_cli_usage_error(cmd, "--manifest reads a manifest; scan options do not apply "
		                        "to it");
		goto out;
	}
	/* The id is looked up before the scan, so a typo costs no scan. */
	rc = ap_cli_load_rules(&rs, o.rules, o.nrules, o.no_default_rules);
	if (rc == AP_EXIT_OK)
		rc = find_id(rs, id, &probe, &rule);
	if (rc == AP_EXIT_OK && heads > 0)
		rc = check_mla(rs, id, probe);
	if (rc == AP_EXIT_OK)
		rc = from != NULL ? ap_cli_read_fresh_manifest(from, &manifest)
		                  : ap_scan_cli_run(&o, &rs, &manifest);
	if (rc == AP_EXIT_OK)
		rc = explain(rs, probe, rule, manifest, heads, json_out);
out:
	ap_ruleset_free(rs);
	json_decref(manifest);
	ap_scan_cli_free(&o);
	return rc;
}
