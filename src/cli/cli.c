/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/confine.h"
#include "cli/cmd.h"
#include "core/manifest-read.h"
#include "engine/manifest.h"
#include "engine/pytarget.h"
#include "engine/rules.h"
#include "engine/scan.h"
#include "core/text.h"
#include "core/verify.h"

int ap_cli_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("aiter-probe: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return AP_EXIT_ERROR;
}

int ap_cli_usage_error(const struct ap_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "aiter-probe %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'aiter-probe %s --help'.\n", cmd->name);
	return AP_EXIT_ERROR;
}

static ap_color_mode color_mode = AP_COLOR_AUTO;

int ap_cli_color(FILE *to)
{
	return ap_text_color(to, color_mode);
}

int ap_cli_color_option(const struct ap_cmd *cmd, char **argv, int *i)
{
	const char *arg = argv[*i];

	if (strcmp(arg, "--color") == 0) {
		color_mode = AP_COLOR_ALWAYS;
		return 1;
	}
	if (strncmp(arg, "--color=", 8) != 0)
		return 0;
	if (ap_color_mode_parse(arg + 8, &color_mode) < 0) {
		ap_cli_usage_error(cmd, "--color takes auto, always or never, not '%s'", arg + 8);
		return -1;
	}
	return 1;
}

int ap_cli_print_help(const struct ap_cmd *cmd, FILE *to)
{
	fputs(cmd->usage, to);
	return to == stdout ? ap_cli_stdout_done(AP_EXIT_OK) : AP_EXIT_OK;
}

int ap_cli_stdout_done(int rc)
{
	/* A write that failed earlier left its errno: stdio keeps only the
	 * error flag, and a flush of what is left fails the same way. */
	int err = errno;

	if (fflush(stdout) != 0)
		err = errno;
	else if (!ferror(stdout))
		return rc;
	clearerr(stdout);
	return ap_cli_fail("writing to stdout: %s", strerror(err ? err : EIO));
}

/* A scan keeps to its end the few megabytes it reads and parses. Taken a
 * 4 KiB page per fault, the kernel's side of that was a sixth of a scan's
 * time (doc/benchmarks.md); a heap reserved at once and advised for
 * transparent huge pages takes it in a few faults. Big buffers come from
 * that heap too, not from mappings of their own, and none of it is given
 * back before exit. Only where the heap is glibc's brk: under valgrind or
 * a sanitizer the break does not move and nothing is advised. */
#define HEAP_RESERVE ((size_t)32 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

void ap_cli_heap_setup(void)
{
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
	uintptr_t base, top;
	void *first;

	mallopt(M_MMAP_THRESHOLD, (int)HEAP_RESERVE);
	mallopt(M_TRIM_THRESHOLD, (int)HEAP_RESERVE);
	mallopt(M_TOP_PAD, (int)HEAP_RESERVE);
	base = ((uintptr_t)sbrk(0) + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if ((first = malloc(1)) == NULL)
		return;
	top = (uintptr_t)sbrk(0) & ~(HUGE_PAGE - 1);
	if (top > base)
		madvise((void *)base, top - base, MADV_HUGEPAGE);
	free(first);
#endif
}

int ap_cli_value(const struct ap_cmd *cmd, const char *name, int argc, char **argv, int *i,
                 const char **value)
{
	size_t n = strlen(name);
	int is_short = n == 2 && name[0] == '-' && name[1] != '-';

	if (strncmp(argv[*i], name, n) != 0)
		return 0;
	/* getopt's convention: the value of a short option may follow it in
	 * the same argument (-oFILE); a long one's after '='. */
	if (is_short && argv[*i][n] != '\0') {
		*value = argv[*i] + n;
		return 1;
	}
	if (argv[*i][n] == '=') {
		*value = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		ap_cli_usage_error(cmd, "option '%s' needs a value", name);
		return -1;
	}
	*value = argv[++*i];
	return 1;
}

ap_cli_arg_kind ap_cli_arg(const char *arg, int *operands_only)
{
	if (*operands_only || arg[0] != '-' || arg[1] == '\0')
		return AP_ARG_OPERAND;
	if (strcmp(arg, "--") == 0) {
		*operands_only = 1;
		return AP_ARG_END;
	}
	if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
		return AP_ARG_HELP;
	return AP_ARG_OPTION;
}

int ap_cli_unknown_option(const struct ap_cmd *cmd, const char *arg)
{
	return ap_cli_usage_error(cmd, "unknown option '%s'", arg);
}

int ap_cli_unexpected(const struct ap_cmd *cmd, const char *arg)
{
	return ap_cli_usage_error(cmd, "unexpected argument '%s'", arg);
}


int ap_cli_load_rules(struct ap_ruleset **out, char *const *extra, size_t nextra, int no_defaults)
{
	if (ap_scan_load_rules(out, NULL, (const char *const *)extra, nextra, no_defaults) < 0)
		return ap_cli_fail("%s", ap_error_last());
	return AP_EXIT_OK;
}

int ap_cli_format_is_json(const struct ap_cmd *cmd, const char *format)
{
	if (strcmp(format, "json") == 0)
		return 1;
	if (strcmp(format, "text") == 0)
		return 0;
	ap_cli_usage_error(cmd, "--format takes text or json, not '%s'", format);
	return -1;
}

void ap_cli_print_json(const json_t *doc)
{
	json_dumpf(doc, stdout, AP_MANIFEST_JSON_FLAGS);
	fputc('\n', stdout);
}

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

/* A whole number of bytes: a fraction or an exponent would be truncated into
 * another cap than the one asked for. */
static int parse_bytes(const struct ap_cmd *cmd, const char *name, const char *text, size_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (text[0] < '0' || text[0] > '9' || errno != 0 || *end != '\0' || v == 0 ||
	    v > AP_SCAN_MAX_FILE_SIZE_LIMIT) {
		ap_cli_usage_error(cmd,
		                   "option '%s' needs a whole number of bytes from 1 to %zu, not '%s'",
		                   name, AP_SCAN_MAX_FILE_SIZE_LIMIT, text);
		return -1;
	}
	*out = (size_t)v;
	return 1;
}

int ap_cli_python_option(const struct ap_cmd *cmd, const char **python, const char **version,
                         int argc, char **argv, int *i)
{
	const char *v;
	char *why;
	int r;

	if ((r = ap_cli_value(cmd, "--python", argc, argv, i, &v)) > 0) {
		if ((why = ap_pytarget_refusal(v)) != NULL) {
			ap_cli_usage_error(cmd, "--python: %s", why);
			free(why);
			return -1;
		}
		*python = v;
	} else if (r == 0 && (r = ap_cli_value(cmd, "--python-version", argc, argv, i, &v)) > 0) {
		if (!ap_pytarget_version_valid(v)) {
			ap_cli_usage_error(cmd, "--python-version takes X.Y or X.Y.Z (such as 3.12), "
			                   "not '%s'", v);
			return -1;
		}
		*version = v;
	}
	if (r > 0 && *python != NULL && *version != NULL) {
		ap_cli_usage_error(cmd, "--python and --python-version cannot both be given");
		return -1;
	}
	return r;
}

int ap_scan_cli_option(const struct ap_cmd *cmd, struct ap_scan_cli *o, int argc, char **argv,
                       int *i)
{
	const char *v;
	double number;
	int r;

	if ((r = ap_cli_python_option(cmd, &o->python, &o->python_version, argc, argv, i)) != 0)
		return r;

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
		if (r > 0 && !ap_scan_devices_valid(v)) {
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
	if (strcmp(argv[*i], "--signatures") == 0) {
		o->signatures = 1;
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


int ap_scan_cli_run(const struct ap_scan_cli *o, ap_ruleset **rs, json_t **manifest)
{
	const ap_scan_request req = {
		.aiter_root = o->aiter_root,
		.python = o->python,
		.python_version = o->python_version,
		.rules = (const char *const *)o->rules,
		.nrules = o->nrules,
		.no_default_rules = o->no_default_rules,
		.no_launch = o->no_launch,
		.signatures = o->signatures,
		.devices = o->devices,
		.launch_timeout = o->launch_timeout,
		.max_file_size = o->max_file_size,
		.host = o->host,
	};

	if (ap_scan_tree(&req, rs, manifest) < 0)
		return ap_cli_fail("%s", ap_error_last());
	return AP_EXIT_OK;
}

int ap_scan_cli_reads_tree(const struct ap_scan_cli *o)
{
	return o->aiter_root != NULL || o->no_launch || o->signatures || o->devices != NULL ||
	       o->launch_timeout != 0 || o->max_file_size != 0 || o->python != NULL ||
	       o->python_version != NULL;
}

int ap_cli_python_changes(const json_t *manifest, const char *python, const char *version,
                          char ***lines, size_t *n)
{
	const json_t *recorded = json_object_get(manifest, "python");
	const char *executable = json_string_value(json_object_get(recorded, "executable"));
	ap_pytarget *t;
	int rc = AP_EXIT_OK;

	*lines = NULL;
	*n = 0;
	/* Facts given as a version alone were not asked of anything. */
	if (!json_is_object(recorded) || (python == NULL && version == NULL && executable == NULL))
		return AP_EXIT_OK;
	if (ap_pytarget_check_env() < 0)
		return ap_cli_fail("%s", ap_error_last());
	t = ap_pytarget_new(python != NULL || version != NULL ? python : executable, version);
	if (ap_pytarget_compare(t, recorded, lines, n) < 0)
		rc = ap_cli_fail("%s", ap_error_last());
	ap_pytarget_free(t);
	return rc;
}

void ap_cli_lines_free(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

/* A manifest answers only while it still describes its tree, and the
 * interpreter it was made for (that one, asked again) still gives the
 * facts its answers depended on. */
int ap_cli_read_fresh_manifest(const char *path, json_t **manifest)
{
	ap_verify_result res = AP_VERIFY_RESULT_INIT;
	char **changes = NULL;
	size_t nchanges = 0;
	int rc = AP_EXIT_OK;

	if (ap_manifest_read_file(path, manifest) < 0)
		return ap_cli_fail("%s", ap_error_last());
	if (ap_verify_manifest(*manifest, path, &res) < 0) {
		rc = ap_cli_fail("%s", ap_error_last());
	} else if (res.nstale > 0) {
		char *what = ap_xnonnull(ap_verify_describe(&res));
		rc = ap_cli_fail("%s is stale (%s): run 'aiter-probe scan' again", path, what);
		free(what);
	} else if ((rc = ap_cli_python_changes(*manifest, NULL, NULL, &changes, &nchanges)) ==
	                   AP_EXIT_OK &&
	           nchanges > 0) {
		rc = ap_cli_fail("%s is stale (the interpreter's %s): run 'aiter-probe scan' again",
		                 path, changes[0]);
	}
	ap_cli_lines_free(changes, nchanges);
	ap_verify_result_free(&res);
	return rc;
}
