/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "cli/cmd.h"
#include "core/manifest-read.h"
#include "engine/manifest.h"
#include "core/text.h"
#include "core/verify.h"

static int cmd_verify_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_verify = {
	.name = "verify",
	.summary = "is a manifest still fresh? re-hash its inputs",
	.usage =
	"Usage: aiter-probe verify [--format text|json] [--python PATH] [--color[=WHEN]]\n"
	"                          [--] MANIFEST\n"
	"Re-hash every input the manifest records, under its recorded aiter.root.\n"
	"Where the scan read nothing (sha256 null), what was there (seen: absent,\n"
	"folder, ...) must be there still: a regular file in its place has appeared,\n"
	"anything else has changed. An input over the hashing cap is unverifiable.\n"
	"When answers depended on the interpreter (the manifest's python), it is\n"
	"asked again for the facts they read: they must be the same.\n"
	"Prints on stdout 'MANIFEST: fresh (N inputs under ROOT)', or\n"
	"'MANIFEST: stale (K of N inputs differ under ROOT)' followed by one line per\n"
	"input that changed, vanished, appeared or is unverifiable, and one per fact\n"
	"of the interpreter that differs. With --format json: one object, {root,\n"
	"fresh, inputs, stale: [{path, change}], python: [difference]}.\n\n"
	"Options:\n"
	"  --format text|json    what to print (default text)\n"
	"  --python PATH         the interpreter to ask (default: the one the\n"
	"                        manifest records)\n"
	"  --python-version X.Y  compare the version alone\n"
	"  --color[=WHEN]        paint the text: auto (the default: on a terminal,\n"
	"                        unless NO_COLOR is set or TERM=dumb), always (bare\n"
	"                        --color) or never\n"
	"  -h, --help            show this help\n\n"
	"Exit status: 0 fresh, 1 stale, 2 usage or input error (unreadable or\n"
	"invalid manifest, missing root, an input path that is absolute or has '..').\n",
	.exec = cmd_verify_exec,
};

/* For the terminal: the manifest's root and input paths come from the tree
 * and the manifest, and may hold control bytes. */
static char *safe(const char *s)
{
	return ap_xnonnull(ap_terminal_text(s, strlen(s)));
}

/* The interpreter's facts that differ (python), beside the inputs. */
struct python_changes {
	char **lines;
	size_t n;
};

/* A verdict or change word, painted as every command paints it. */
static void put_word(bool color, const char *word, int width)
{
	printf("%s%-*s%s", ap_text_paint(color, ap_text_hue(word)), width, word,
	       ap_text_paint(color, AP_TEXT_RESET));
}

static int report_text(const char *path, const ap_verify_result *res,
                       const struct python_changes *py)
{
	char *safe_path = safe(path), *safe_root = safe(res->root);
	bool color = ap_cli_color(stdout);
	size_t i;

	if (res->nstale == 0 && py->n == 0) {
		printf("%s: ", safe_path);
		put_word(color, "fresh", 0);
		printf(" (%zu input%s under %s)\n", res->ninputs, res->ninputs == 1 ? "" : "s",
		       safe_root);
		free(safe_path);
		free(safe_root);
		return AP_EXIT_OK;
	}
	printf("%s: ", safe_path);
	put_word(color, "stale", 0);
	printf(" (%zu of %zu inputs differ under %s%s)\n", res->nstale, res->ninputs, safe_root,
	       py->n ? "; so do the interpreter's facts" : "");
	for (i = 0; i < res->nstale; i++) {
		char *input = safe(res->stale[i].path);
		fputs("  ", stdout);
		put_word(color, ap_input_change_name(res->stale[i].change), 8);
		printf(" %s\n", input);
		free(input);
	}
	for (i = 0; i < py->n; i++) {
		char *line = safe(py->lines[i]);
		fputs("  ", stdout);
		put_word(color, "python", 8);
		printf(" %s\n", line);
		free(line);
	}
	free(safe_path);
	free(safe_root);
	return AP_EXIT_FAIL;
}

static int report_json(const ap_verify_result *res, const struct python_changes *py)
{
	json_t *stale = json_array(), *python = json_array();
	json_t *doc;
	size_t i;

	for (i = 0; i < res->nstale; i++)
		json_array_append_new(stale, json_pack("{s:s, s:s}", "path", res->stale[i].path,
		                                       "change",
		                                       ap_input_change_name(res->stale[i].change)));
	for (i = 0; i < py->n; i++)
		json_array_append_new(python, ap_json_text(py->lines[i]));
	/* Not the manifest's path: an argument need not be UTF-8, JSON must. */
	doc = json_pack("{s:s, s:b, s:I, s:o, s:o}", "root", res->root, "fresh",
	                res->nstale == 0 && py->n == 0, "inputs", (json_int_t)res->ninputs, "stale",
	                stale, "python", python);
	ap_cli_print_json(doc);
	json_decref(doc);
	return res->nstale == 0 && py->n == 0 ? AP_EXIT_OK : AP_EXIT_FAIL;
}

static int cmd_verify_exec(int argc, char **argv)
{
	ap_verify_result res = AP_VERIFY_RESULT_INIT;
	struct python_changes py = {NULL, 0};
	const char *path = NULL, *format = "text", *v, *python = NULL, *version = NULL;
	json_t *m;
	int i, r, rc, json_out, operands_only = 0;

	for (i = 1; i < argc; i++) {
		ap_cli_arg_kind kind = ap_cli_arg(argv[i], &operands_only);

		if (kind == AP_ARG_END)
			continue;
		if (kind == AP_ARG_HELP)
			return ap_cli_print_help(&ap_cmd_verify, stdout);
		if (kind == AP_ARG_OPERAND) {
			if (path != NULL)
				return ap_cli_unexpected(&ap_cmd_verify, argv[i]);
			path = argv[i];
			continue;
		}
		if ((r = ap_cli_value(&ap_cmd_verify, "--format", argc, argv, &i, &v)) > 0)
			format = v;
		if (r == 0)
			r = ap_cli_python_option(&ap_cmd_verify, &python, &version, argc, argv, &i);
		if (r == 0)
			r = ap_cli_color_option(&ap_cmd_verify, argv, &i);
		if (r == 0)
			return ap_cli_unknown_option(&ap_cmd_verify, argv[i]);
		if (r < 0)
			return AP_EXIT_ERROR;
	}
	if (path == NULL)
		return ap_cli_usage_error(&ap_cmd_verify, "needs a MANIFEST");
	if ((json_out = ap_cli_format_is_json(&ap_cmd_verify, format)) < 0)
		return AP_EXIT_ERROR;
	if (ap_manifest_read_file(path, &m) < 0)
		return ap_cli_fail("%s", ap_error_last());
	if (ap_verify_manifest(m, path, &res) < 0)
		rc = ap_cli_fail("%s", ap_error_last());
	else if ((rc = ap_cli_python_changes(m, python, version, &py.lines, &py.n)) == AP_EXIT_OK)
		rc = json_out ? report_json(&res, &py) : report_text(path, &res, &py);
	ap_cli_lines_free(py.lines, py.n);
	ap_verify_result_free(&res);
	json_decref(m);
	return rc;
}
