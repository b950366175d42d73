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
#include "engine/discover.h"
#include "engine/evaluate.h"
#include "engine/launch.h"
#include "engine/manifest.h"
#include "core/manifest-path.h"
#include "engine/reader.h"
#include "engine/rules.h"
#include "core/text.h"

static int cmd_scan_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_scan = {
	.name = "scan",
	.summary = "check the rules against an AITER tree and write the capability manifest",
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
	"  --devices all|LIST     the GPUs to cross-check on, e.g. 0,1 (default all)\n"
	"  --launch-timeout SECS  time limit of one launch (default 120)\n"
	"  --max-file-size BYTES  refuse larger files (default 16777216)\n"
	"  --host NAME            the node's name in the manifest (default: the host\n"
	"                         name; in a pod, pass the node's)\n"
	"  -h, --help             show this help\n\n"
	"Exit status: 0 written, 2 usage or input error.\n",
	.exec = cmd_scan_exec,
};

static int parse_positive(const struct ap_cmd *cmd, const char *name, const char *text,
                          double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0' || !(v > 0)) {
		ap_cli_usage_error(cmd, "option '%s' needs a positive number, not '%s'", name, text);
		return -1;
	}
	*out = v;
	return 1;
}

/* Far above any source file, and low enough that the reader's buffer
 * arithmetic (cap + 1, doubling) cannot overflow. */
#define MAX_FILE_SIZE_LIMIT ((size_t)1 << 40)

/* A whole number of bytes: a fraction or an exponent would be truncated into
 * another cap than the one asked for. */
static int parse_bytes(const struct ap_cmd *cmd, const char *name, const char *text, size_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || errno != 0 || *end != '\0' || v == 0 ||
	    v > MAX_FILE_SIZE_LIMIT) {
		ap_cli_usage_error(cmd,
		                   "option '%s' needs a whole number of bytes from 1 to %zu, not '%s'",
		                   name, MAX_FILE_SIZE_LIMIT, text);
		return -1;
	}
	*out = (size_t)v;
	return 1;
}

static int valid_device_list(const char *list)
{
	const char *p = list;

	if (strcmp(list, "all") == 0)
		return 1;
	for (;;) {
		if (*p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '\0')
			return 1;
		if (*p++ != ',')
			return 0;
	}
}

int ap_scan_cli_option(const struct ap_cmd *cmd, struct ap_scan_cli *o, int argc, char **argv,
                       int *i)
{
	const char *v;
	double number;
	int r;

	if ((r = ap_cli_value(cmd, "--aiter-root", argc, argv, i, &v)) != 0) {
		o->aiter_root = v;
		return r;
	}
	if ((r = ap_cli_value(cmd, "--rules", argc, argv, i, &v)) != 0) {
		if (r > 0) {
			o->rules = ap_xrealloc(o->rules, (o->nrules + 1) * sizeof *o->rules);
			o->rules[o->nrules++] = (char *)v;
		}
		return r;
	}
	if ((r = ap_cli_value(cmd, "--devices", argc, argv, i, &v)) != 0) {
		if (r > 0 && !valid_device_list(v)) {
			ap_cli_usage_error(cmd, "--devices takes 'all' or indices like 0,1, not '%s'", v);
			return -1;
		}
		o->devices = v;
		return r;
	}
	if ((r = ap_cli_value(cmd, "--launch-timeout", argc, argv, i, &v)) != 0) {
		if (r > 0 && (r = parse_positive(cmd, "--launch-timeout", v, &number)) > 0)
			o->launch_timeout = number;
		return r;
	}
	if ((r = ap_cli_value(cmd, "--max-file-size", argc, argv, i, &v)) != 0) {
		if (r > 0)
			r = parse_bytes(cmd, "--max-file-size", v, &o->max_file_size);
		return r;
	}
	if (strcmp(argv[*i], "--no-default-rules") == 0) {
		o->no_default_rules = 1;
		return 1;
	}
	if (strcmp(argv[*i], "--no-launch") == 0) {
		o->no_launch = 1;
		return 1;
	}
	return 0;
}

void ap_scan_cli_free(struct ap_scan_cli *o)
{
	free(o->rules);
	o->rules = NULL;
	o->nrules = 0;
}

/* Keeps the devices --devices names; an index that does not exist is an error. */
static json_t *select_devices(json_t *all, const char *list, char **reason)
{
	json_t *chosen;
	const char *p = list;

	if (list == NULL || strcmp(list, "all") == 0)
		return json_incref(all);
	chosen = json_array();
	while (*p != '\0') {
		long want = strtol(p, (char **)&p, 10);
		json_t *dev;
		size_t i;
		int found = 0;

		json_array_foreach(all, i, dev) {
			if (json_integer_value(json_object_get(dev, "index")) == want) {
				json_array_append(chosen, dev);
				found = 1;
			}
		}
		if (!found) {
			json_decref(chosen);
			*reason = ap_xasprintf("--devices names GPU %ld, but %zu GPU(s) were found%s%s",
			                       want, json_array_size(all), *reason ? ": " : "",
			                       *reason ? *reason : "");
			return NULL;
		}
		if (*p == ',')
			p++;
	}
	return chosen;
}

/* Whether any path the rules asked for was there. None, with the shipped
 * packs among the rules, means the folder is no AITER tree (the package
 * folder itself, an empty one), whose manifest would only say "unsupported"
 * everywhere; what a pack of one's own finds missing is its own answer. */
static bool found_any(const json_t *inputs)
{
	const json_t *input;
	size_t i;

	json_array_foreach(inputs, i, input) {
		const char *seen = json_string_value(json_object_get(input, "seen"));
		if (seen == NULL || strcmp(seen, "absent") != 0)
			return true;
	}
	return false;
}

static int not_a_tree(const ap_aiter_info *info, size_t asked, json_t **manifest)
{
	char *root = ap_xnonnull(ap_terminal_text(info->root, strlen(info->root)));
	char *meta = ap_xnonnull(ap_terminal_text(info->meta, strlen(info->meta)));

	if (strcmp(info->root, info->meta) == 0)
		ap_cli_fail("%s is not an AITER tree: none of the %zu paths the rules read is there "
		            "(the root is the folder that holds the aiter package, or a checkout)",
		            root, asked);
	else
		ap_cli_fail("%s (meta folder %s) is not an AITER tree: none of the %zu paths the "
		            "rules read is there", root, meta, asked);
	free(root);
	free(meta);
	json_decref(*manifest);
	*manifest = NULL;
	return AP_EXIT_ERROR;
}

static int build_manifest(const struct ap_scan_cli *o, ap_ruleset *rs, ap_reader *r,
                          json_t **manifest)
{
	ap_launch_opts lopts = {
		.devices = o->devices,
		.timeout_s = o->launch_timeout,
		.inject = getenv("AITER_PROBE_LAUNCH_INJECT"),
	};
	ap_scan_launch launch = {.opts = &lopts};
	ap_aiter_info info = {.root = ap_reader_root(r), .meta = ap_reader_meta(r)};
	char *reason = NULL, *version, *commit;
	int rc = AP_EXIT_OK;
	json_t *all = json_array(), *devs, *inputs;
	ap_scan *scan;

	if (o->no_launch) {
		launch.skip_reason = "launches disabled (--no-launch)";
	} else {
		json_decref(all);
		all = ap_launch_devices(&lopts, &reason);
		if (json_array_size(all) == 0)
			launch.skip_reason = reason;
	}
	/* Without launches no GPU is looked for, so --devices picks none. */
	devs = o->no_launch ? json_incref(all) : select_devices(all, o->devices, &reason);
	if (devs == NULL) {
		ap_cli_fail("%s", reason);
		free(reason);
		json_decref(all);
		return AP_EXIT_ERROR;
	}
	launch.devs = devs;
	ap_scan_run(&scan, rs, r, &launch);
	version = ap_aiter_version(r);
	commit = ap_discover_git_commit(info.root);
	info.version = version;
	info.git_commit = commit;
	*manifest = ap_manifest_build(scan, r, &info, all, o->host);
	ap_scan_free(scan);
	inputs = json_object_get(*manifest, "inputs");
	if (!o->no_default_rules && json_array_size(inputs) > 0 && !found_any(inputs))
		rc = not_a_tree(&info, json_array_size(inputs), manifest);
	free(version);
	free(commit);
	free(reason);
	json_decref(devs);
	json_decref(all);
	return rc;
}

int ap_scan_cli_run(const struct ap_scan_cli *o, ap_ruleset **rs, json_t **manifest)
{
	ap_reader *r = NULL;
	ap_tree_location loc;
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	time_t when;
	int rc;

	/* Before the scan: a bad value would otherwise surface as a wrong
	 * "generated" only after all the work. */
	if (ap_manifest_source_date(epoch, &when) < 0)
		return ap_cli_fail("SOURCE_DATE_EPOCH must be a whole number of seconds from 0 to "
		                   "%llu, not '%s'", AP_SOURCE_DATE_MAX, epoch);
	if (ap_discover_tree(o->aiter_root, &loc) < 0)
		return ap_cli_fail("%s", ap_error_last());
	if (ap_reader_new_fs(&r, loc.root, loc.meta,
	                     o->max_file_size ? o->max_file_size : AP_READER_DEFAULT_MAX_BYTES) < 0) {
		rc = ap_cli_fail("AITER root from %s: %s", loc.how, ap_error_last());
		goto out;
	}
	rc = *rs != NULL ? AP_EXIT_OK
	                 : ap_cli_load_rules(rs, o->rules, o->nrules, o->no_default_rules);
	if (rc == AP_EXIT_OK)
		rc = build_manifest(o, *rs, r, manifest);
out:
	ap_reader_free(r);
	ap_discover_free(&loc);
	return rc;
}

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
	if (json_out == 1)
		ap_cli_print_json(manifest);
	else if (json_out == 0)
		ap_manifest_print_text(manifest, stdout, ap_cli_color(stdout), ap_text_width(stdout));
	rc = ap_cli_stdout_done(rc);
out:
	ap_ruleset_free(rs);
	free(saved);
	json_decref(manifest);
	ap_scan_cli_free(&o);
	return rc;
}
