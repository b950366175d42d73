/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "cli/cmd.h"
#include "core/manifest-path.h"
#include "core/text.h"
#include "engine/manifest.h"
#include "engine/rules.h"

static int cmd_scan_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_scan = {
	.name = "scan",
	.summary = "check the rules against an AITER tree, write the capability manifest",
	.usage =
	"Usage: aiter-probe scan [OPTION]...\n"
	"Check every rule against an AITER tree, cross-check capabilities on the GPUs,\n"
	"and write the capability manifest.\n\n"
	"Options:\n"
	"  --aiter-root DIR       the AITER tree (default: $AITER_META_DIR, else the\n"
	"                         installed aiter Python package)\n"
	"  --rules PATH           also load this rule pack (file or folder); repeatable\n"
	"  --no-default-rules     do not load the installed rule packs\n"
	"  -o, --output FILE      write the JSON manifest to FILE (atomically); '-o -'\n"
	"                         writes it to stdout\n"
	"  --save                 write it where consumers find it: the file for this\n"
	"                         tree in $AITER_PROBE_MANIFEST_DIR, else\n"
	"                         ${XDG_CACHE_HOME:-$HOME/.cache}/aiter-probe\n"
	"  --format text|json     what to print on stdout (default: text on a terminal,\n"
	"                         else json; with -o, only when given)\n"
	"  --color[=WHEN]         paint the text: auto (the default: on a terminal,\n"
	"                         unless NO_COLOR or TERM=dumb), always (a bare\n"
	"                         --color) or never\n"
	"  --no-launch            skip the GPU cross-checks\n"
	"  --signatures           record the signatures of the public callables of the\n"
	"                         modules the packs name (`signatures:`), for\n"
	"                         backends that check their own calls\n"
	"  --devices all|LIST     the GPUs to cross-check on, e.g. 0,1 (default all)\n"
	"  --launch-timeout SECS  time limit of one launch (default 120)\n"
	"  --max-file-size BYTES  refuse larger files (default 16777216)\n"
	"  --python PATH          the python3 that will run the server, which finds\n"
	"                         the aiter package and gives the facts the tree's\n"
	"                         conditions need (version, platform, the modules it\n"
	"                         finds); default $AITER_PROBE_PYTHON, else python3\n"
	"  --python-version X.Y   its version alone, instead (nothing is run: the\n"
	"                         platform and the modules it finds are not known)\n"
	"  --host NAME            the node's name in the manifest (default: the host\n"
	"                         name; in a pod, pass the node's)\n"
	"  -h, --help             show this help\n\n"
	"Exit status: 0 written, 2 usage or input error.\n",
	.exec = cmd_scan_exec,
};

static int cmd_scan_exec(int argc, char **argv)
{
	struct ap_scan_cli o = {0};
	const char *output = NULL, *format = NULL, *v;
	json_t *manifest = NULL;
	ap_ruleset *rs = NULL;
	char *saved = NULL;
	int i, r, rc = AP_EXIT_OK, json_out = -1, operands_only = 0, save = 0;
	bool to_stdout;

	for (i = 1; i < argc; i++) {
		ap_cli_arg_kind kind = ap_cli_arg(argv[i], &operands_only);

		if (kind == AP_ARG_END)
			continue;
		if (kind != AP_ARG_OPTION) {
			rc = kind == AP_ARG_HELP ? ap_cli_print_help(&ap_cmd_scan, stdout)
			                         : ap_cli_unexpected(&ap_cmd_scan, argv[i]);
			goto out;
		}
		r = ap_scan_cli_option(&ap_cmd_scan, &o, argc, argv, &i);
		if (r == 0 && (r = ap_cli_value(&ap_cmd_scan, "-o", argc, argv, &i, &v)) > 0)
			output = v;
		if (r == 0 && (r = ap_cli_value(&ap_cmd_scan, "--output", argc, argv, &i, &v)) > 0)
			output = v;
		if (r == 0 && (r = ap_cli_value(&ap_cmd_scan, "--format", argc, argv, &i, &v)) > 0)
			format = v;
		if (r == 0 && (r = ap_cli_value(&ap_cmd_scan, "--host", argc, argv, &i, &o.host)) > 0 &&
		    (o.host[0] == '\0' || strlen(o.host) > AP_MANIFEST_HOST_MAX)) {
			ap_cli_usage_error(&ap_cmd_scan, "--host needs a name of 1 to %d bytes",
			                   AP_MANIFEST_HOST_MAX);
			r = -1;
		}
		if (r == 0 && strcmp(argv[i], "--save") == 0)
			r = save = 1;
		if (r == 0)
			r = ap_cli_color_option(&ap_cmd_scan, argv, &i);
		if (r == 0) {
			rc = ap_cli_unknown_option(&ap_cmd_scan, argv[i]);
			goto out;
		}
		if (r < 0) {
			rc = AP_EXIT_ERROR;
			goto out;
		}
	}
	if (format != NULL && (json_out = ap_cli_format_is_json(&ap_cmd_scan, format)) < 0) {
		rc = AP_EXIT_ERROR;
		goto out;
	}
	if (save && output != NULL) {
		rc = ap_cli_usage_error(&ap_cmd_scan, "--save and -o both name where to write; "
		                        "give one");
		goto out;
	}
	/* "-o -" is the manifest on stdout, and nothing else there. */
	to_stdout = output != NULL && strcmp(output, "-") == 0;
	if (to_stdout && json_out == 0) {
		rc = ap_cli_usage_error(&ap_cmd_scan, "-o - writes the JSON manifest to stdout; "
		                        "--format text cannot go there too");
		goto out;
	}
	rc = ap_scan_cli_run(&o, &rs, &manifest);
	if (rc != AP_EXIT_OK)
		goto out;
	if (save) {
		const char *root = json_string_value(json_object_get(json_object_get(manifest,
		                                                                     "aiter"),
		                                                     "root"));
		char *dir = ap_manifest_default_dir();

		if (dir == NULL || ap_manifest_dir_prepare(dir) < 0 ||
		    ap_manifest_default_path(root, &saved) < 0) {
			free(dir);
			rc = ap_cli_fail("%s", ap_error_last());
			goto out;
		}
		free(dir);
		output = saved;
	}
	if (to_stdout) {
		json_out = 1;
	} else if (output != NULL && ap_manifest_write(manifest, output) < 0) {
		rc = ap_cli_fail("%s", ap_error_last());
		goto out;
	}
	if (format == NULL && output == NULL)
		json_out = !isatty(STDOUT_FILENO);
	/* Where it went: the name is derived, not given. */
	if (format == NULL && saved != NULL)
		printf("%s\n", saved);
	if (json_out == 1) {
		ap_buf text = AP_BUF_INIT;
		if (ap_manifest_dump(manifest, &text) < 0) {
			rc = ap_cli_fail("%s", ap_error_last());
			goto out;
		}
		fwrite(text.data, 1, text.len, stdout);
		ap_buf_free(&text);
	} else if (json_out == 0)
		ap_manifest_print_text(manifest, stdout, ap_cli_color(stdout), ap_text_width(stdout));
	rc = ap_cli_stdout_done(rc);
out:
	ap_ruleset_free(rs);
	free(saved);
	json_decref(manifest);
	ap_scan_cli_free(&o);
	return rc;
}
