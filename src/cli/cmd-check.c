/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/manifest-read.h"
#include "cli/cmd.h"
#include "engine/report/explain.h"
#include "engine/manifest.h"
#include "engine/rules.h"
#include "core/suggest.h"
#include "core/text.h"

static int cmd_check_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_check = {
	.name = "check",
	.summary = "go or no-go: are these capabilities supported here?",
	.usage =
	"Usage: aiter-probe check --require CAP[,CAP...] [--prefer CAP[,CAP...]]\n"
	"                         [OPTION]...\n"
	"Scan the AITER tree (as 'scan' does), or read a manifest, and tell whether\n"
	"every required capability is supported, with the reason for each; and\n"
	"what the deployment loses for each preferred one that is not.\n\n"
	"Options:\n"
	"  --require CAP[,CAP...]  what the server cannot run without; repeatable\n"
	"  --prefer CAP[,CAP...]   what it runs better with: reported with what the\n"
	"                          backend does instead, never a no-go; repeatable\n"
	"  --manifest FILE         answer from FILE instead of scanning, once its\n"
	"                          inputs are re-hashed and found unchanged (--rules\n"
	"                          and --no-default-rules still name the packs whose\n"
	"                          fallbacks --prefer reports)\n"
	"  --format text|json      what to print (default text)\n"
	"  -q, --quiet             print nothing on stdout: the exit status answers\n"
	"  --color[=WHEN]          colour the verdicts: auto (default), always, never\n"
	"  -h, --help              show this help\n"
	"  and every option of 'aiter-probe scan' except -o, --save, --host and\n"
	"  --format\n\n"
	"At least one --require or --prefer is needed; a check of preferences only\n"
	"is go whatever they say. A capability named twice is reported once, as\n"
	"required when it is named both ways.\n\n"
	"A capability is supported, unsupported, or unknown: nothing could decide\n"
	"it (a file absent or unreadable, or what AITER binds known only by running\n"
	"it). Unknown is never supported: a required one is a no-go.\n\n"
	"Exit status: 0 every required capability supported, 1 some not supported\n"
	"(unsupported or unknown), 2 usage or input error (a capability id no probe\n"
	"defines, or a stale manifest).\n",
	.exec = cmd_check_exec,
};

typedef struct wanted {
	char **ids;
	bool *required; /* else preferred */
	size_t n;
	size_t cap;
} wanted;

static ssize_t wanted_find(const wanted *w, const char *id, size_t len)
{
	for (size_t i = 0; i < w->n; i++)
		if (strlen(w->ids[i]) == len && memcmp(w->ids[i], id, len) == 0)
			return (ssize_t)i;
	return -1;
}

/* Each id of a comma list, once; required wins over preferred. false for an
 * empty id ("", "a,,b", "a,"): an unset variable in a script would otherwise
 * require nothing and answer go. */
static bool wanted_add(wanted *w, const char *list, bool required)
{
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");
		ssize_t at;
		if (len == 0)
			return false;
		if ((at = wanted_find(w, p, len)) >= 0) {
			w->required[at] |= required;
		} else {
			ap_xgrow((void **)&w->ids, &w->cap, w->n + 1, sizeof *w->ids);
			w->required = ap_xrealloc(w->required, w->cap * sizeof *w->required);
			w->required[w->n] = required;
			w->ids[w->n++] = ap_xstrndup(p, len);
		}
		p += len;
		if (*p == '\0')
			return true;
		p++;
	}
}

static int empty_id(const struct ap_cmd *cmd, const char *option, const char *list)
{
	char *safe = ap_xnonnull(ap_terminal_text(list, strlen(list)));

	ap_cli_usage_error(cmd, "%s takes capability ids separated by commas, not '%s' (an "
	                   "empty id)", option, safe);
	free(safe);
	return -1;
}

static void wanted_free(wanted *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->ids[i]);
	free(w->ids);
	free(w->required);
}

/* One verdict, wrapped to the width: the id, the reason from the tree and the
 * consequence from a pack, with their control bytes escaped. */
static void print_verdict(bool color, int width, const char *word, bool required, const char *id,
                          const char *reason, const char *consequence)
{
	char *line = ap_xasprintf("%s%s: %s", id, required ? "" : " (preferred)",
	                          reason ? reason : "");
	char *safe = ap_xnonnull(ap_terminal_text(line, strlen(line)));

	printf("%s%-11s%s ", ap_text_paint(color, ap_text_hue(word)), word,
	       ap_text_paint(color, AP_TEXT_RESET));
	ap_text_wrap(stdout, safe, 12, 12, width);
	if (consequence != NULL) {
		char *safe_c = ap_xnonnull(ap_terminal_text(consequence, strlen(consequence)));
		char *what = ap_xasprintf("instead: %s", safe_c);
		fputs("            ", stdout);
		ap_text_wrap(stdout, what, 12, 21, width);
		free(what);
		free(safe_c);
	}
	free(line);
	free(safe);
}

/* The known capability ids of a manifest, for the nearest to an unknown one.
 * A scan's manifest holds every loaded probe; one read from a file holds
 * what its scan loaded, which the message says. A rule's id is no typo:
 * the message says what check takes instead. */
static int unknown_capability(const json_t *manifest, const char *id, const char *from)
{
	const json_t *caps = json_object_get(manifest, "capabilities");
	const char **known = ap_xcalloc(json_object_size(caps) + 1, sizeof *known);
	const char *key;
	json_t *v;
	size_t n = 0;
	char *tail, *safe;

	json_object_foreach((json_t *)caps, key, v)
		known[n++] = key;
	tail = ap_xnonnull(ap_suggest_tail(id, known, n));
	safe = ap_xnonnull(ap_terminal_text(id, strlen(id)));
	if (json_object_get(json_object_get(manifest, "rules"), id) != NULL) {
		ap_cli_fail("'%s' is a rule, not a capability: --require and --prefer take the ids "
		            "'aiter-probe list capabilities' prints ('aiter-probe explain %s' "
		            "shows the rule)", safe, safe);
	} else if (from != NULL) {
		char *safe_from = ap_xnonnull(ap_terminal_text(from, strlen(from)));
		ap_cli_fail("unknown capability '%s' (not in %s: its scan loaded no probe defining "
		            "it)%s", safe, safe_from, tail);
		free(safe_from);
	} else {
		ap_cli_fail("unknown capability '%s' (not defined by any loaded probe)%s", safe, tail);
	}
	free(safe);
	free(tail);
	free(known);
	return AP_EXIT_ERROR;
}

typedef struct report_opts {
	bool json;
	bool quiet;
	const char *from; /* the manifest read, or NULL after a scan */
	const ap_ruleset *rs; /* NULL: consequences unknown (quiet) */
} report_opts;

static char *consequence_of(const report_opts *ro, const json_t *manifest, const char *id)
{
	const ap_probe *p = ro->rs != NULL ? ap_ruleset_find_probe(ro->rs, id) : NULL;

	return p != NULL ? ap_explain_consequence(p, manifest) : NULL;
}

/* unsupported and unknown count the required capabilities of each verdict:
 * an unknown one is a no-go too, and the line says which kind stopped it. */
static const char *verdict_line(size_t unsupported, size_t unknown, size_t nrequired,
                                size_t lost)
{
	if (unsupported > 0 && unknown > 0)
		return "no-go: some required capability is not supported, and some is unknown "
		       "(unknown is never a go)";
	if (unsupported > 0)
		return "no-go: some required capability is not supported";
	if (unknown > 0)
		return "no-go: some required capability is unknown (unknown is never a go)";
	if (nrequired == 0)
		return lost > 0 ? "go: nothing is required; some preferred capability is not supported"
		                : "go: nothing is required; every preferred capability is supported";
	return lost > 0 ? "go: every required capability is supported; some preferred one is not"
	                : "go: every required capability is supported";
}

static int report(const wanted *w, const json_t *manifest, const report_opts *ro)
{
	json_t *caps = json_object_get(manifest, "capabilities");
	json_t *required = json_object(), *preferred = json_object();
	bool color = !ro->json && ap_cli_color(stdout), all_ok = true;
	int width = ap_text_width(stdout);
	size_t i, nrequired = 0, lost = 0, unsupported = 0, unknown = 0;

	for (i = 0; i < w->n; i++)
		if (json_object_get(caps, w->ids[i]) == NULL) {
			json_decref(required);
			json_decref(preferred);
			return unknown_capability(manifest, w->ids[i], ro->from);
		}
	for (i = 0; i < w->n; i++) {
		json_t *cap = json_object_get(caps, w->ids[i]);
		bool ok = json_is_true(json_object_get(cap, "supported"));
		const char *verdict = ap_manifest_cap_verdict(cap);
		const char *reason = json_string_value(json_object_get(cap, "reason"));
		char *consequence = NULL;
		json_t *entry = json_pack("{s:b, s:s, s:o}", "supported", ok, "verdict", verdict,
		                          "reason", ap_json_text(reason));

		if (w->required[i]) {
			all_ok &= ok;
			nrequired++;
			unknown += strcmp(verdict, "unknown") == 0;
			unsupported += strcmp(verdict, "unsupported") == 0;
			json_object_set_new(required, w->ids[i], entry);
		} else {
			lost += !ok;
			if (!ok)
				consequence = consequence_of(ro, manifest, w->ids[i]);
			json_object_set_new(entry, "consequence", ap_json_text(consequence));
			json_object_set_new(preferred, w->ids[i], entry);
		}
		if (!ro->json && !ro->quiet)
			print_verdict(color, width, verdict, w->required[i], w->ids[i], reason,
			              consequence);
		free(consequence);
	}
	if (ro->quiet) {
		/* nothing on stdout: the exit status says it */
	} else if (ro->json) {
		json_t *doc = json_pack("{s:b, s:O, s:O}", "ok", all_ok, "capabilities", required,
		                        "preferred", preferred);
		ap_cli_print_json(doc);
		json_decref(doc);
	} else {
		ap_text_wrap(stdout, verdict_line(unsupported, unknown, nrequired, lost), 0, 4,
		             width);
	}
	json_decref(required);
	json_decref(preferred);
	return all_ok ? AP_EXIT_OK : AP_EXIT_FAIL;
}

static bool any_preferred(const wanted *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (!w->required[i])
			return true;
	return false;
}

static int cmd_check_exec(int argc, char **argv)
{
	const struct ap_cmd *cmd = &ap_cmd_check;
	struct ap_scan_cli o = {0};
	wanted w = {0};
	const char *format = "text", *from = NULL, *v;
	json_t *manifest = NULL;
	ap_ruleset *rs = NULL;
	report_opts ro = {0};
	int i, r, rc, json_out, operands_only = 0;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		ap_cli_arg_kind kind = ap_cli_arg(arg, &operands_only);

		if (kind == AP_ARG_END)
			continue;
		if (kind != AP_ARG_OPTION) {
			rc = kind == AP_ARG_HELP ? ap_cli_print_help(cmd, stdout)
			                         : ap_cli_unexpected(cmd, arg);
			goto out;
		}
		r = ap_scan_cli_option(cmd, &o, argc, argv, &i);
		if (r == 0 && (r = ap_cli_value(cmd, "--require", argc, argv, &i, &v)) > 0 &&
		    !wanted_add(&w, v, true))
			r = empty_id(cmd, "--require", v);
		if (r == 0 && (r = ap_cli_value(cmd, "--prefer", argc, argv, &i, &v)) > 0 &&
		    !wanted_add(&w, v, false))
			r = empty_id(cmd, "--prefer", v);
		if (r == 0 && (r = ap_cli_value(cmd, "--format", argc, argv, &i, &v)) > 0)
			format = v;
		if (r == 0 && (r = ap_cli_value(cmd, "--manifest", argc, argv, &i, &v)) > 0)
			from = v;
		if (r == 0 && (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0)) {
			ro.quiet = true;
			r = 1;
		}
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
	if (w.n == 0) {
		rc = ap_cli_usage_error(cmd, "--require CAP or --prefer CAP is needed");
		goto out;
	}
	if ((json_out = ap_cli_format_is_json(cmd, format)) < 0) {
		rc = AP_EXIT_ERROR;
		goto out;
	}
	ro.json = json_out == 1;
	ro.from = from;
	if (from != NULL && ap_scan_cli_reads_tree(&o)) {
		rc = ap_cli_usage_error(cmd, "--manifest reads a manifest; scan options do not apply "
		                        "to it");
		goto out;
	}
	rc = from != NULL ? ap_cli_read_fresh_manifest(from, &manifest)
	                  : ap_scan_cli_run(&o, &rs, &manifest);
	/* A preference unmet is told with what the backend does instead: the
	 * probe's fallback, from the packs (a scan's own, else read now). */
	if (rc == AP_EXIT_OK && !ro.quiet && any_preferred(&w)) {
		if (rs == NULL)
			rc = ap_cli_load_rules(&rs, o.rules, o.nrules, o.no_default_rules);
		ro.rs = rs;
	}
	if (rc == AP_EXIT_OK)
		rc = report(&w, manifest, &ro);
out:
	ap_ruleset_free(rs);
	json_decref(manifest);
	wanted_free(&w);
	ap_scan_cli_free(&o);
	return rc;
}
