/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ap-error.h"
#include "ap-util.h"
#include "cmd.h"
#include "manifest-read.h"
#include "manifest.h"
#include "verify.h"

static int cmd_check_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_check = {
	.name = "check",
	.summary = "go or no-go: are these capabilities supported here?",
	.usage =
	"Usage: aiter-probe check --require CAP[,CAP...] [OPTION]...\n"
	"Scan the AITER tree (as 'scan' does), or read a manifest, and tell whether\n"
	"every required capability is supported, with the reason for each.\n\n"
	"Options:\n"
	"  --require CAP[,CAP...]  the capabilities needed; repeatable\n"
	"  --manifest FILE         answer from FILE instead of scanning, once its\n"
	"                          inputs are re-hashed and found unchanged\n"
	"  --format text|json      what to print (default text)\n"
	"  and every option of 'aiter-probe scan' except -o and --format\n\n"
	"Exit status: 0 all supported, 1 some not supported, 2 usage or input error\n"
	"(an unknown capability, or a stale manifest, is an input error).\n",
	.exec = cmd_check_exec,
};

typedef struct required {
	char **ids;
	size_t n;
	size_t cap;
} required;

static void add_required(required *req, const char *list)
{
	const char *p = list;

	while (*p != '\0') {
		size_t len = strcspn(p, ",");
		if (len > 0) {
			ap_xgrow((void **)&req->ids, &req->cap, req->n + 1, sizeof *req->ids);
			req->ids[req->n++] = ap_xstrndup(p, len);
		}
		p += len;
		if (*p == ',')
			p++;
	}
}

static void required_free(required *req)
{
	size_t i;

	for (i = 0; i < req->n; i++)
		free(req->ids[i]);
	free(req->ids);
}

/* One text line; the id and the reason (from the tree, through the
 * manifest) with their control bytes escaped. */
static void print_verdict(int color, int ok, const char *id, const char *reason)
{
	char *safe_id = ap_terminal_text(id, strlen(id));
	char *safe_reason = ap_terminal_text(reason ? reason : "", reason ? strlen(reason) : 0);

	printf("%s%-11s%s %s: %s\n", color ? (ok ? "\033[32m" : "\033[31m") : "",
	       ok ? "supported" : "unsupported", color ? "\033[0m" : "", safe_id, safe_reason);
	free(safe_id);
	free(safe_reason);
}

static int report(const required *req, const json_t *manifest, int json_out)
{
	json_t *caps = json_object_get(manifest, "capabilities");
	json_t *answer = json_object();
	int color = !json_out && ap_cli_color(stdout);
	int all_ok = 1;
	size_t i;

	for (i = 0; i < req->n; i++)
		if (json_object_get(caps, req->ids[i]) == NULL) {
			json_decref(answer);
			return ap_cli_fail("unknown capability '%s' (not defined by any loaded probe)",
			                   req->ids[i]);
		}
	for (i = 0; i < req->n; i++) {
		json_t *cap = json_object_get(caps, req->ids[i]);
		int ok = json_is_true(json_object_get(cap, "supported"));
		const char *reason = json_string_value(json_object_get(cap, "reason"));

		all_ok &= ok;
		if (json_out) {
			json_object_set_new(answer, req->ids[i],
			                    json_pack("{s:b, s:s}", "supported", ok, "reason", reason));
			continue;
		}
		print_verdict(color, ok, req->ids[i], reason);
	}
	if (json_out) {
		json_t *doc = json_pack("{s:b, s:o}", "ok", all_ok, "capabilities", answer);
		ap_cli_print_json(doc);
		json_decref(doc);
	} else {
		json_decref(answer);
		printf("%s\n", all_ok ? "go: every required capability is supported"
		                      : "no-go: some required capability is not supported");
	}
	return all_ok ? AP_EXIT_OK : AP_EXIT_FAIL;
}

/* A manifest answers only while it still describes its tree. */
static int read_fresh_manifest(const char *path, json_t **manifest)
{
	ap_verify_result res = AP_VERIFY_RESULT_INIT;
	int rc = AP_EXIT_OK;

	if (ap_manifest_read_file(path, manifest) < 0)
		return ap_cli_fail("%s", ap_error_last());
	if (ap_verify_manifest(*manifest, path, &res) < 0) {
		rc = ap_cli_fail("%s", ap_error_last());
	} else if (res.nstale > 0) {
		char *what = ap_verify_describe(&res);
		rc = ap_cli_fail("%s is stale (%s): run 'aiter-probe scan' again", path, what);
		free(what);
	}
	ap_verify_result_free(&res);
	return rc;
}

static int cmd_check_exec(int argc, char **argv)
{
	struct ap_scan_cli o = {0};
	required req = {0};
	const char *format = "text", *from = NULL, *v;
	int scan_options = 0, json_out;
	json_t *manifest = NULL;
	int i, r, rc;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			rc = ap_cli_print_help(&ap_cmd_check, stdout);
			goto out;
		}
		if ((r = ap_scan_cli_option(&ap_cmd_check, &o, argc, argv, &i)) > 0)
			scan_options = 1;
		if (r == 0 && (r = ap_cli_value(&ap_cmd_check, "--require", argc, argv, &i, &v)) > 0)
			add_required(&req, v);
		if (r == 0 && (r = ap_cli_value(&ap_cmd_check, "--format", argc, argv, &i, &v)) > 0)
			format = v;
		if (r == 0 && (r = ap_cli_value(&ap_cmd_check, "--manifest", argc, argv, &i, &v)) > 0)
			from = v;
		if (r < 0) {
			rc = AP_EXIT_ERROR;
			goto out;
		}
		if (r == 0) {
			rc = ap_cli_usage_error(&ap_cmd_check, "unknown argument '%s'", argv[i]);
			goto out;
		}
	}
	if (req.n == 0) {
		rc = ap_cli_usage_error(&ap_cmd_check, "--require CAP is needed");
		goto out;
	}
	if ((json_out = ap_cli_format_is_json(&ap_cmd_check, format)) < 0) {
		rc = AP_EXIT_ERROR;
		goto out;
	}
	if (from != NULL && scan_options) {
		rc = ap_cli_usage_error(&ap_cmd_check, "--manifest reads a manifest; scan options do "
		                        "not apply to it");
		goto out;
	}
	rc = from != NULL ? read_fresh_manifest(from, &manifest) : ap_scan_cli_run(&o, &manifest);
	if (rc == AP_EXIT_OK)
		rc = report(&req, manifest, json_out);
out:
	json_decref(manifest);
	required_free(&req);
	ap_scan_cli_free(&o);
	return rc;
}
