/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-map.h"
#include "core/ap-util.h"
#include "core/confine.h"
#include "engine/report/diff.h"
#include "engine/manifest.h"
#include "engine/report/sarif.h"

#define SARIF_SCHEMA \
	"https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#define BASE_ID "%SRCROOT%"
/* The meta folder (csrc/, hsa/) when it lies outside the root. */
#define META_BASE_ID "AITERMETA"
/* Versioned: a change to what goes into it is a new key, so alerts made by
 * older logs are not matched against a different reading. */
#define FINGERPRINT_KEY "aiterProbeDifference/v1"

typedef struct {
	const json_t *old;
	/* Where the meta folder's paths are: under the root with this prefix
	 * ("" when it is the root, "aiter_meta/" in a wheel), or, NULL, under
	 * META_BASE_ID. */
	char *meta_prefix;
	json_t *rules;   /* reportingDescriptor objects, in order of first use */
	json_t *indices; /* SARIF rule id -> its index in rules */
	json_t *results;
} sarif_log;

static const char *string_at(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static const char *or_absent(const char *s)
{
	return s != NULL ? s : "absent";
}

/* Everything but unreserved characters and '/' percent-encoded: a valid URI
 * path whatever a file is called. */
static void put_uri_path(ap_buf *b, const char *path)
{
	static const char keep[] = "-._~/";
	const unsigned char *p;

	for (p = (const unsigned char *)path; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr(keep, *p) != NULL)
			ap_buf_putc(b, (char)*p);
		else
			ap_buf_printf(b, "%%%02X", *p);
	}
}

static json_t *uri_text(const char *prefix, const char *path, const char *suffix)
{
	ap_buf b = AP_BUF_INIT;
	json_t *s;

	ap_buf_puts(&b, prefix);
	put_uri_path(&b, path);
	ap_buf_puts(&b, suffix);
	s = json_string(b.data);
	ap_buf_free(&b);
	return s;
}

/* line 0: the file only. NULL for a path the reader would refuse (absolute,
 * empty, a ".." component): a tampered manifest must not have a viewer open a
 * file outside OLD's tree. A path of the meta folder is located where that
 * folder is, as the reader read it. */
static json_t *location(const sarif_log *log, const char *file, json_int_t line)
{
	bool meta = ap_path_in_meta(file);
	const char *base = meta && log->meta_prefix == NULL ? META_BASE_ID : BASE_ID;
	char *path = ap_xasprintf("%s%s", meta && log->meta_prefix != NULL ? log->meta_prefix : "",
	                          file);
	json_t *physical;

	if (ap_path_refusal(file) != NULL || ap_path_refusal(path) != NULL) {
		free(path);
		return NULL;
	}
	physical = json_pack("{s:{s:o, s:s}}", "artifactLocation", "uri", uri_text("", path, ""),
	                     "uriBaseId", base);
	free(path);
	if (line > 0)
		json_object_set_new(physical, "region", json_pack("{s:I}", "startLine", line));
	return json_pack("{s:o}", "physicalLocation", physical);
}

/* A capability's evidence item, "FILE:LINE"; a line number out of range
 * locates the file only, as does an item without ":LINE". NULL without a
 * usable file. */
static json_t *evidence_location(const sarif_log *log, const char *item)
{
	const char *colon = strrchr(item, ':');
	size_t flen = strlen(item);
	unsigned long line = 0;
	char *file;
	json_t *loc;

	if (colon != NULL && colon[1] != '\0' &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		flen = (size_t)(colon - item);
		errno = 0;
		line = strtoul(colon + 1, NULL, 10);
		if (errno != 0 || line > INT32_MAX)
			line = 0;
	}
	file = ap_xstrndup(item, flen);
	loc = location(log, file, (json_int_t)line);
	free(file);
	return loc;
}

static json_int_t match_line(const json_t *match)
{
	json_int_t line = json_integer_value(json_object_get(match, "line"));

	return line > 0 && line <= INT32_MAX ? line : 0;
}

/* The reportingDescriptor's index, added on first use. */
static size_t rule_index(sarif_log *log, const char *kind, const char *id, const json_t *rule)
{
	char *sarif_id = ap_xasprintf("%s/%s", kind, id);
	const json_t *known = json_object_get(log->indices, sarif_id);
	const char *file = string_at(rule, "file");
	size_t index;
	char *text;

	if (known != NULL) {
		free(sarif_id);
		return (size_t)json_integer_value(known);
	}
	/* A manifest describes nothing: say what the id is and where it reads. */
	if (strcmp(kind, "capability") == 0)
		text = ap_xasprintf("AITER capability %s, as aiter-probe's probes decide it", id);
	else if (file != NULL)
		text = ap_xasprintf("aiter-probe rule %s, read in %s", id, file);
	else
		text = ap_xasprintf("aiter-probe rule %s", id);
	index = json_array_size(log->rules);
	json_array_append_new(log->rules,
	                      json_pack("{s:s, s:{s:s}, s:{s:s}}", "id", sarif_id,
	                                "shortDescription", "text", text, "defaultConfiguration",
	                                "level",
	                                strcmp(kind, "capability") == 0 ? "error" : "warning"));
	json_object_set_new(log->indices, sarif_id, json_integer((json_int_t)index));
	free(text);
	free(sarif_id);
	return index;
}

/* Stable across runs: the difference's identity, never its line. */
static json_t *fingerprint(const char *kind, const char *id, const char *change,
                           const char *tuple)
{
	unsigned char digest[AP_SHA256_SIZE];
	char hex[2 * AP_SHA256_SIZE + 1];
	char *key = ap_xasprintf("%s/%s\n%s\n%s", kind, id, change, tuple != NULL ? tuple : "");

	ap_sha256_buf(key, strlen(key), digest);
	ap_sha256_hex(digest, hex);
	free(key);
	return json_pack("{s:s}", FINGERPRINT_KEY, hex);
}

/* fail_on: the narrowest --fail-on class that counts the difference. */
static void add_result(sarif_log *log, const char *kind, const char *id, const json_t *rule,
                       const char *level, const char *change, const char *fail_on,
                       const char *tuple, ap_buf *message, json_t *locations)
{
	size_t index = rule_index(log, kind, id, rule);
	json_t *r = json_pack("{s:s, s:I, s:s, s:{s:s}}", "ruleId",
	                      string_at(json_array_get(log->rules, index), "id"), "ruleIndex",
	                      (json_int_t)index, "level", level, "message", "text", message->data);

	if (json_array_size(locations) > 0)
		json_object_set(r, "locations", locations);
	json_decref(locations);
	json_object_set_new(r, "partialFingerprints", fingerprint(kind, id, change, tuple));
	json_object_set_new(r, "properties",
	                    json_pack("{s:s, s:s}", "change", change, "failOn", fail_on));
	json_array_append_new(log->results, r);
	ap_buf_free(message);
}

static void capability_result(sarif_log *log, const json_t *d)
{
	const char *id = string_at(d, "id");
	const char *change = string_at(d, "change");
	const json_t *before = json_object_get(d, "before");
	const json_t *after = json_object_get(d, "after");
	const json_t *old_cap = json_object_get(json_object_get(log->old, "capabilities"), id);
	const char *was_launch = string_at(before, "launch");
	const char *is_launch = string_at(after, "launch");
	const json_t *item, *dev;
	json_t *locations = json_array();
	ap_buf msg = AP_BUF_INIT;
	size_t i;
	bool lost = strcmp(change, "lost") == 0;

	if (strcmp(change, "gained") == 0) {
		json_decref(locations);
		return;
	}
	ap_buf_printf(&msg, "%s: capability %s: %s -> %s", change, id, ap_diff_state_word(before),
	              ap_diff_state_word(after));
	if (!json_is_null(after) && !json_is_true(json_object_get(after, "supported")))
		ap_buf_printf(&msg, " (%s)", string_at(after, "reason"));
	if ((was_launch == NULL) != (is_launch == NULL) ||
	    (was_launch != NULL && strcmp(was_launch, is_launch) != 0))
		ap_buf_printf(&msg, "; launch %s -> %s", was_launch != NULL ? was_launch : "none",
		              is_launch != NULL ? is_launch : "none");
	json_array_foreach(json_object_get(d, "devices"), i, dev) {
		const char *name = string_at(dev, "name");
		ap_buf_printf(&msg, "; device %" JSON_INTEGER_FORMAT "%s%s%s %s -> %s",
		              json_integer_value(json_object_get(dev, "index")), name != NULL ? " (" : "",
		              name != NULL ? name : "", name != NULL ? ")" : "",
		              or_absent(string_at(dev, "before")), or_absent(string_at(dev, "after")));
	}
	json_array_foreach(json_object_get(old_cap, "evidence"), i, item) {
		json_t *loc = json_is_string(item) ? evidence_location(log, json_string_value(item)) : NULL;
		if (loc != NULL)
			json_array_append_new(locations, loc);
	}
	add_result(log, "capability", id, NULL, lost ? "error" : "warning", change,
	           lost ? "lost" : "changed", NULL, &msg, locations);
}

/* At OLD's match, else at the rule's file ("(<where> FILE)" in the
 * message); nothing without a usable file, though the message still names
 * one the manifest gives. */
static json_t *rule_locations(const sarif_log *log, const json_t *old_rule,
                              const json_t *match, ap_buf *msg, const char *where)
{
	const char *file = string_at(old_rule, "file");
	json_int_t line = match_line(match);
	json_t *locations = json_array(), *loc;

	if (file == NULL || file[0] == '\0')
		return locations;
	if (line > 0)
		ap_buf_printf(msg, " (was at %s:%" JSON_INTEGER_FORMAT ")", file, line);
	else
		ap_buf_printf(msg, " (%s %s)", where, file);
	loc = location(log, file, line);
	if (loc != NULL)
		json_array_append_new(locations, loc);
	return locations;
}

static const json_t *old_rule(const sarif_log *log, const char *id)
{
	return json_object_get(json_object_get(log->old, "rules"), id);
}

static void rule_result(sarif_log *log, const json_t *d)
{
	const char *id = string_at(d, "id");
	const char *was = or_absent(string_at(d, "before")), *is = or_absent(string_at(d, "after"));
	const json_t *rule = old_rule(log, id);
	bool now_matched = strcmp(is, "matched") == 0;
	ap_buf msg = AP_BUF_INIT;
	json_t *locations;
	ap_buf transition = AP_BUF_INIT;

	ap_buf_printf(&msg, "changed: rule %s: %s -> %s", id, was, is);
	ap_buf_printf(&transition, "%s -> %s", was, is);
	locations = rule_locations(log, rule, json_array_get(json_object_get(rule, "matches"), 0), &msg,
	                           "in");
	add_result(log, "rule", id, rule, now_matched ? "note" : "warning", "changed", "changed",
	           transition.data, &msg, locations);
	ap_buf_free(&transition);
}

/* OLD's match per tuple, the first whose captures make it: built once per
 * rule, so a table of N cases costs N tuples, not N per removed case. */
static ap_map *matches_by_tuple(const json_t *rule)
{
	ap_map *by_tuple = ap_xnonnull(ap_map_new());
	const json_t *match;
	size_t i;

	json_array_foreach(json_object_get(rule, "matches"), i, match) {
		char *t = ap_diff_case_tuple(match);

		if (t != NULL && ap_map_get_str(by_tuple, t) == AP_MAP_ABSENT)
			ap_xok(ap_map_put_str(by_tuple, t, i));
		free(t);
	}
	return by_tuple;
}

static void case_results(sarif_log *log, const json_t *d)
{
	const char *id = string_at(d, "rule");
	const json_t *rule = old_rule(log, id);
	const json_t *matches = json_object_get(rule, "matches");
	ap_map *by_tuple = matches_by_tuple(rule);
	const json_t *tuple;
	size_t i;

	json_array_foreach(json_object_get(d, "removed"), i, tuple) {
		const char *t = json_string_value(tuple);
		size_t at = ap_map_get_str(by_tuple, t);
		const json_t *match = at != AP_MAP_ABSENT ? json_array_get(matches, at) : NULL;
		ap_buf msg = AP_BUF_INIT;
		json_t *locations;

		ap_buf_printf(&msg, "lost: case %s of rule %s", t, id);
		locations = rule_locations(log, rule, match, &msg, "in");
		add_result(log, "rule", id, rule, "warning", "removed", "any", t, &msg, locations);
	}
	ap_map_free(by_tuple);
	json_array_foreach(json_object_get(d, "added"), i, tuple) {
		const char *t = json_string_value(tuple);
		ap_buf msg = AP_BUF_INIT;
		json_t *locations;

		ap_buf_printf(&msg, "gained: case %s of rule %s", t, id);
		locations = rule_locations(log, rule, NULL, &msg, "not in OLD's");
		add_result(log, "rule", id, rule, "note", "added", "any", t, &msg, locations);
	}
}

/* The length of path without its trailing slashes ("/" counts as ""). */
static size_t trimmed(const char *path)
{
	size_t n = strlen(path);

	while (n > 0 && path[n - 1] == '/')
		n--;
	return n;
}

/* The meta folder's place under the root ("" for the root itself, the one
 * an older manifest without "meta" read; "a/b/" with every empty component
 * dropped), or NULL when it is outside the root. Both are absolute: the
 * reader refuses a manifest otherwise. */
static char *meta_prefix(const char *root, const char *meta)
{
	size_t n, m;
	ap_buf b = AP_BUF_INIT;
	const char *p;

	if (meta == NULL)
		return ap_xstrdup("");
	n = trimmed(root);
	m = trimmed(meta);
	if (strncmp(meta, root, n) != 0 || (m > n && meta[n] != '/') || m < n)
		return NULL;
	ap_buf_append(&b, "", 0);
	for (p = meta + n; p < meta + m;) {
		size_t len;

		/* meta[m - 1] is no '/': a component always ends by meta + m. */
		p += strspn(p, "/");
		len = strcspn(p, "/");
		ap_buf_printf(&b, "%.*s/", (int)len, p);
		p += len;
	}
	return ap_buf_detach(&b);
}

/* A base id's entry: the folder's file:// URI. */
static void add_base(json_t *bases, const char *id, const char *folder, const char *what)
{
	json_object_set_new(bases, id,
	                    json_pack("{s:o, s:{s:s}}", "uri",
	                              uri_text("file://", folder,
	                                       folder[strlen(folder) - 1] == '/' ? "" : "/"),
	                              "description", "text", what));
}

json_t *ap_sarif_from_diff(const json_t *report, const json_t *old)
{
	const json_t *aiter = json_object_get(old, "aiter");
	const char *root = string_at(aiter, "root"), *meta = string_at(aiter, "meta");
	sarif_log log = {
		.old = old,
		.meta_prefix = meta_prefix(root, meta),
		.rules = json_array(),
		.indices = json_object(),
		.results = json_array(),
	};
	json_t *run, *driver, *bases = json_object();
	const json_t *d;
	size_t i;

	json_array_foreach(json_object_get(report, "capabilities"), i, d)
		capability_result(&log, d);
	json_array_foreach(json_object_get(report, "rules"), i, d)
		rule_result(&log, d);
	json_array_foreach(json_object_get(report, "cases"), i, d)
		case_results(&log, d);
	json_decref(log.indices);

	driver = json_pack("{s:s, s:s, s:o}", "name", PACKAGE_NAME, "version", PACKAGE_VERSION,
	                   "rules", log.rules);
	run = json_pack("{s:{s:o}}", "tool", "driver", driver);
	add_base(bases, BASE_ID, root, "the OLD AITER tree");
	if (log.meta_prefix == NULL)
		add_base(bases, META_BASE_ID, meta, "the OLD AITER tree's meta folder (csrc/, hsa/)");
	json_object_set_new(run, "originalUriBaseIds", bases);
	free(log.meta_prefix);
	json_object_set_new(run, "results", log.results);
	json_object_set_new(run, "properties",
	                    json_pack("{s:O, s:O, s:O}", "old", json_object_get(report, "old"), "new",
	                              json_object_get(report, "new"), "summary",
	                              json_object_get(report, "summary")));
	return json_pack("{s:s, s:s, s:[o]}", "$schema", SARIF_SCHEMA, "version", "2.1.0", "runs",
	                 run);
}
