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
/* OLD's root and meta folder, for the related locations. */
#define OLD_BASE_ID "OLDROOT"
#define OLD_META_BASE_ID "OLDMETA"
/* Versioned: a change to what goes into it is a new key, so alerts made by
 * older logs are not matched against a different reading. */
#define FINGERPRINT_KEY "aiterProbeDifference/v1"

/* One side's paths: OLD's are related locations, NEW's the results'. */
typedef struct {
	const json_t *m;
	const char *base_id;      /* its root */
	const char *meta_base_id; /* its meta folder, when outside the root */
	/* Where the meta folder's paths are: under the root with this prefix
	 * ("" when it is the root, "aiter_meta/" in a wheel), or, NULL, under
	 * meta_base_id. */
	char *meta_prefix;
	json_t *read; /* the inputs the scan read (a hash recorded): path -> true */
} side;

typedef struct {
	side old, new;
	const json_t *described; /* ap_list_build's rules and capabilities, or NULL */
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

/* A place in one side's tree, at line (1 when the line is not known: code
 * scanning wants a region). NULL for a path the reader would refuse
 * (absolute, empty, a ".." component): a tampered manifest must not have a
 * viewer open a file outside the tree. A path of the meta folder is located
 * where that folder is, as the reader read it. */
static json_t *location(const side *sd, const char *file, json_int_t line)
{
	bool meta = ap_path_in_meta(file);
	const char *base = meta && sd->meta_prefix == NULL ? sd->meta_base_id : sd->base_id;
	char *path = ap_xasprintf("%s%s", meta && sd->meta_prefix != NULL ? sd->meta_prefix : "",
	                          file);
	json_t *physical;

	if (ap_path_refusal(file) != NULL || ap_path_refusal(path) != NULL) {
		free(path);
		return NULL;
	}
	physical = json_pack("{s:{s:o, s:s}, s:{s:I}}", "artifactLocation", "uri",
	                     uri_text("", path, ""), "uriBaseId", base, "region", "startLine",
	                     line > 0 ? line : 1);
	free(path);
	return json_pack("{s:o}", "physicalLocation", physical);
}

static bool side_read(const side *sd, const char *file)
{
	return file != NULL && json_object_get(sd->read, file) != NULL;
}

/* Appends the place to locations, once, when there is one; whether there
 * is. */
static bool add_place(json_t *locations, const side *sd, const char *file, json_int_t line)
{
	json_t *loc = file != NULL && file[0] != '\0' ? location(sd, file, line) : NULL;
	const json_t *had;
	size_t i;

	if (loc == NULL)
		return false;
	json_array_foreach(locations, i, had)
		if (json_equal((json_t *)had, loc)) {
			json_decref(loc);
			return true;
		}
	return json_array_append_new(locations, loc) == 0;
}

/* A pack file as the help names it: its folder and name ("rules/mla.yaml"),
 * not where this machine keeps it. */
static const char *pack_name(const char *path)
{
	const char *p = path + strlen(path), *cut = path;
	int slashes = 0;

	while (p > path && slashes < 2)
		if (*--p == '/' && ++slashes == 2)
			cut = p + 1;
	return cut;
}

/* A place in NEW, only where NEW's scan read the file. */
static bool add_new(json_t *locations, const sarif_log *log, const char *file, json_int_t line)
{
	return side_read(&log->new, file) && add_place(locations, &log->new, file, line);
}

/* A capability's evidence item, "FILE:LINE", into *file (the caller's) and
 * *line (0 when out of range or absent); false for an item not a string. */
static bool split_evidence(const json_t *evidence, char **file, json_int_t *line)
{
	const char *item = json_string_value(evidence);
	const char *colon;
	size_t flen;
	unsigned long n = 0;

	if (item == NULL)
		return false;
	colon = strrchr(item, ':');
	flen = strlen(item);

	if (colon != NULL && colon[1] != '\0' &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		flen = (size_t)(colon - item);
		errno = 0;
		n = strtoul(colon + 1, NULL, 10);
		if (errno != 0 || n > INT32_MAX)
			n = 0;
	}
	*file = ap_xstrndup(item, flen);
	*line = (json_int_t)n;
	return true;
}

static json_int_t match_line(const json_t *match)
{
	json_int_t line = json_integer_value(json_object_get(match, "line"));

	return line > 0 && line <= INT32_MAX ? line : 0;
}

/* The packs' entry for id in their section ("rules", "capabilities"), or
 * NULL. */
static const json_t *described(const sarif_log *log, const char *section, const char *id)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(log->described, section), i, e)
		if (strcmp(string_at(e, "id"), id) == 0)
			return e;
	return NULL;
}

/* The descriptor's texts: what the packs say of the id, or, for an id no
 * loaded pack defines, what it is and where it reads. */
static void describe(const sarif_log *log, const char *kind, const char *id, const json_t *rule,
                     ap_buf *short_text, ap_buf *full, ap_buf *help)
{
	bool cap = strcmp(kind, "capability") == 0;
	const json_t *e = described(log, cap ? "capabilities" : "rules", id);
	const char *file = string_at(rule, "file");
	const char *desc = string_at(e, "description");
	const json_t *f;
	size_t i;

	if (cap)
		ap_buf_printf(short_text, "AITER capability %s, as aiter-probe's probes decide it", id);
	else if (file != NULL)
		ap_buf_printf(short_text, "aiter-probe rule %s, read in %s", id, file);
	else
		ap_buf_printf(short_text, "aiter-probe rule %s", id);
	if (e == NULL) {
		ap_buf_printf(full, "%s. No loaded rule pack defines it.", short_text->data);
		ap_buf_printf(help, "%s. `aiter-probe list %s` shows what the loaded packs define; "
		              "`aiter-probe explain %s --manifest MANIFEST` with the packs that "
		              "made the manifest tells why it came out as it did.",
		              short_text->data, cap ? "capabilities" : "rules", id);
		return;
	}
	ap_buf_puts(full, desc != NULL ? desc : short_text->data);
	ap_buf_puts(help, desc != NULL ? desc : short_text->data);
	if (cap && string_at(e, "fallback") != NULL)
		ap_buf_printf(help, "\n\nWhen it is unsupported: %s", string_at(e, "fallback"));
	if (!cap) {
		ap_buf_printf(help, "\n\nA %s rule on", string_at(e, "kind"));
		json_array_foreach(json_object_get(e, "files"), i, f)
			ap_buf_printf(help, "%s %s", i > 0 ? "," : "", json_string_value(f));
		if (string_at(e, "looks_for") != NULL)
			ap_buf_printf(help, "; it looks for %s", string_at(e, "looks_for"));
		ap_buf_putc(help, '.');
	}
	ap_buf_printf(help, "\n\nDefined in %s, line %" JSON_INTEGER_FORMAT ".",
	              pack_name(string_at(e, "file")),
	              json_integer_value(json_object_get(e, "line")));
}

/* The reportingDescriptor's index, added on first use. */
static size_t rule_index(sarif_log *log, const char *kind, const char *id, const json_t *rule)
{
	char *sarif_id = ap_xasprintf("%s/%s", kind, id);
	const json_t *known = json_object_get(log->indices, sarif_id);
	ap_buf short_text = AP_BUF_INIT, full = AP_BUF_INIT, help = AP_BUF_INIT;
	size_t index;

	if (known != NULL) {
		free(sarif_id);
		return (size_t)json_integer_value(known);
	}
	describe(log, kind, id, rule, &short_text, &full, &help);
	index = json_array_size(log->rules);
	json_array_append_new(
	        log->rules,
	        json_pack("{s:s, s:s, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}", "id", sarif_id, "name",
	                  id, "shortDescription", "text", short_text.data, "fullDescription",
	                  "text", full.data, "help", "text", help.data, "defaultConfiguration",
	                  "level", strcmp(kind, "capability") == 0 ? "error" : "warning"));
	json_object_set_new(log->indices, sarif_id, json_integer((json_int_t)index));
	ap_buf_free(&short_text);
	ap_buf_free(&full);
	ap_buf_free(&help);
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

/* Where a result goes when NEW holds none of its files: aiter/__init__.py,
 * which every AITER tree has, else the first file NEW's scan read (in the
 * manifest's order), at line 1; aiter/__init__.py whatever NEW read, when it
 * read nothing (a hand-made manifest). */
static void add_fallback(json_t *locations, const sarif_log *log)
{
	static const char package[] = "aiter/__init__.py";
	const json_t *input;
	size_t i;

	if (add_new(locations, log, package, 1))
		return;
	json_array_foreach(json_object_get(log->new.m, "inputs"), i, input)
		if (add_new(locations, log, string_at(input, "path"), 1))
			return;
	add_place(locations, &log->new, package, 1);
}

/* What one result is: its rule, level, the change and the --fail-on class
 * (the narrowest that counts it), the difference ("capability", "rule",
 * "case", "value") and the identity its fingerprint hashes. */
typedef struct {
	const char *kind, *id;
	const json_t *rule; /* OLD's, else NEW's, or NULL */
	const char *level, *change, *fail_on, *difference, *identity;
} result_info;

/* locations are NEW's (the fallback when empty), related OLD's; each
 * related place gets an id and says it is OLD's. */
static void add_result(sarif_log *log, const result_info *ri, ap_buf *message,
                       json_t *locations, json_t *related)
{
	size_t index = rule_index(log, ri->kind, ri->id, ri->rule);
	json_t *r = json_pack("{s:s, s:I, s:s, s:{s:s}}", "ruleId",
	                      string_at(json_array_get(log->rules, index), "id"), "ruleIndex",
	                      (json_int_t)index, "level", ri->level, "message", "text",
	                      message->data);
	json_t *loc;
	size_t i;

	if (json_array_size(locations) == 0)
		add_fallback(locations, log);
	json_object_set_new(r, "locations", locations);
	json_array_foreach(related, i, loc) {
		json_object_set_new(loc, "id", json_integer((json_int_t)i + 1));
		json_object_set_new(loc, "message", json_pack("{s:s}", "text", "in OLD's tree"));
	}
	if (json_array_size(related) > 0)
		json_object_set(r, "relatedLocations", related);
	json_decref(related);
	json_object_set_new(r, "partialFingerprints",
	                    fingerprint(ri->kind, ri->id, ri->change, ri->identity));
	json_object_set_new(r, "properties",
	                    json_pack("{s:s, s:s, s:s}", "change", ri->change, "failOn",
	                              ri->fail_on, "difference", ri->difference));
	json_array_append_new(log->results, r);
	ap_buf_free(message);
}

/* Whether one of the locations is in the file (given unencoded: a path
 * needing no escapes compares as itself, one that needs them is a path
 * OLD and NEW both spell the same way only if encoded alike). */
static bool names_file(const json_t *locations, const char *file)
{
	const json_t *loc;
	json_t *uri = uri_text("", file, "");
	size_t i;
	bool found = false;

	json_array_foreach(locations, i, loc) {
		const json_t *art = json_object_get(json_object_get(loc, "physicalLocation"),
		                                    "artifactLocation");
		const char *had = string_at(art, "uri");
		size_t n = strlen(had), m = strlen(json_string_value(uri));
		/* A meta folder's prefix ("aiter_meta/") stands before the path. */
		if (n >= m && strcmp(had + n - m, json_string_value(uri)) == 0 &&
		    (n == m || had[n - m - 1] == '/'))
			found = true;
	}
	json_decref(uri);
	return found;
}

static void capability_result(sarif_log *log, const json_t *d)
{
	const char *id = string_at(d, "id");
	const char *change = string_at(d, "change");
	const json_t *before = json_object_get(d, "before");
	const json_t *after = json_object_get(d, "after");
	const json_t *old_cap = json_object_get(json_object_get(log->old.m, "capabilities"), id);
	const json_t *new_cap = json_object_get(json_object_get(log->new.m, "capabilities"), id);
	const char *was_launch = string_at(before, "launch");
	const char *is_launch = string_at(after, "launch");
	const json_t *item, *dev;
	json_t *locations = json_array(), *related = json_array();
	ap_buf msg = AP_BUF_INIT;
	char *file;
	json_int_t line;
	size_t i;
	bool lost = strcmp(change, "lost") == 0, gained = strcmp(change, "gained") == 0;
	result_info ri = {"capability", id, NULL, lost ? "error" : gained ? "note" : "warning",
	                  change, lost ? "lost" : "changed", "capability", NULL};

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
	/* NEW's evidence, and OLD's files NEW still has that it does not name,
	 * their lines unknown there (what a lost capability lost was there). */
	json_array_foreach(json_object_get(new_cap, "evidence"), i, item)
		if (split_evidence(item, &file, &line)) {
			add_new(locations, log, file, line);
			free(file);
		}
	json_array_foreach(json_object_get(old_cap, "evidence"), i, item)
		if (split_evidence(item, &file, &line)) {
			add_place(related, &log->old, file, line);
			if (!names_file(locations, file))
				add_new(locations, log, file, 1);
			free(file);
		}
	add_result(log, &ri, &msg, locations, related);
}

static const json_t *rule_of(const side *sd, const char *id)
{
	return json_object_get(json_object_get(sd->m, "rules"), id);
}

/* A rule's place in NEW: its file there at line (its first match's when
 * line is 0), else the file it read in OLD, else the files its pack names,
 * as far as NEW's scan read them. Nothing when NEW has none of them. */
static void rule_place_in_new(json_t *locations, const sarif_log *log, const char *id,
                              json_int_t line)
{
	const json_t *new_rule = rule_of(&log->new, id), *f;
	const json_t *first = json_array_get(json_object_get(new_rule, "matches"), 0);
	size_t i;

	if (add_new(locations, log, string_at(new_rule, "file"), line > 0 ? line : match_line(first)))
		return;
	if (add_new(locations, log, string_at(rule_of(&log->old, id), "file"), 1))
		return;
	json_array_foreach(json_object_get(described(log, "rules", id), "files"), i, f)
		if (add_new(locations, log, json_string_value(f), 1))
			return;
}

/* OLD's place for the rule (at match, else its first match), named in the
 * message too ("(was at FILE:LINE)", "(<where> FILE)"). */
static void rule_place_in_old(json_t *related, const sarif_log *log, const json_t *old_rule,
                              const json_t *match, ap_buf *msg, const char *where)
{
	const char *file = string_at(old_rule, "file");
	json_int_t line = match_line(match);

	if (file == NULL || file[0] == '\0')
		return;
	if (line > 0)
		ap_buf_printf(msg, " (was at %s:%" JSON_INTEGER_FORMAT ")", file, line);
	else
		ap_buf_printf(msg, " (%s %s)", where, file);
	add_place(related, &log->old, file, line);
}

static void rule_result(sarif_log *log, const json_t *d)
{
	const char *id = string_at(d, "id");
	const char *was = or_absent(string_at(d, "before")), *is = or_absent(string_at(d, "after"));
	const json_t *rule = rule_of(&log->old, id);
	json_t *locations = json_array(), *related = json_array();
	ap_buf msg = AP_BUF_INIT, transition = AP_BUF_INIT;
	result_info ri = {"rule", id, rule != NULL ? rule : rule_of(&log->new, id),
	                  strcmp(is, "matched") == 0 ? "note" : "warning", "changed", "changed",
	                  "rule", NULL};

	ap_buf_printf(&msg, "changed: rule %s: %s -> %s", id, was, is);
	ap_buf_printf(&transition, "%s -> %s", was, is);
	ri.identity = transition.data;
	rule_place_in_old(related, log, rule, json_array_get(json_object_get(rule, "matches"), 0),
	                  &msg, "in");
	rule_place_in_new(locations, log, id, 0);
	add_result(log, &ri, &msg, locations, related);
	ap_buf_free(&transition);
}

/* A rule's match per tuple, the first whose captures make it: built once
 * per rule, so a table of N cases costs N tuples, not N per case. */
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

static const json_t *match_of(const json_t *rule, ap_map *by_tuple, const char *tuple)
{
	size_t at = ap_map_get_str(by_tuple, tuple);

	return at != AP_MAP_ABSENT ? json_array_get(json_object_get(rule, "matches"), at) : NULL;
}

/* A removed case in NEW: where the table is now (the rule's first match);
 * an added one at its own match. */
static void case_results(sarif_log *log, const json_t *d)
{
	const char *id = string_at(d, "rule");
	const json_t *rule = rule_of(&log->old, id), *new_rule = rule_of(&log->new, id);
	ap_map *old_tuples = matches_by_tuple(rule), *new_tuples = matches_by_tuple(new_rule);
	const json_t *tuple;
	size_t i;

	json_array_foreach(json_object_get(d, "removed"), i, tuple) {
		const char *t = json_string_value(tuple);
		ap_buf msg = AP_BUF_INIT;
		json_t *locations = json_array(), *related = json_array();
		result_info ri = {"rule", id, rule, "warning", "removed", "any", "case", t};

		ap_buf_printf(&msg, "lost: case %s of rule %s", t, id);
		rule_place_in_old(related, log, rule, match_of(rule, old_tuples, t), &msg, "in");
		rule_place_in_new(locations, log, id, 0);
		add_result(log, &ri, &msg, locations, related);
	}
	json_array_foreach(json_object_get(d, "added"), i, tuple) {
		const char *t = json_string_value(tuple);
		ap_buf msg = AP_BUF_INIT;
		json_t *locations = json_array(), *related = json_array();
		result_info ri = {"rule", id, rule, "note", "added", "any", "case", t};
		json_int_t line = match_line(match_of(new_rule, new_tuples, t));

		ap_buf_printf(&msg, "gained: case %s of rule %s", t, id);
		if (line > 0)
			ap_buf_printf(&msg, " (at %s:%" JSON_INTEGER_FORMAT ")",
			              string_at(new_rule, "file"), line);
		rule_place_in_new(locations, log, id, line);
		add_result(log, &ri, &msg, locations, related);
	}
	ap_map_free(old_tuples);
	ap_map_free(new_tuples);
}

/* A value (one tuple each side) at NEW's match, OLD's as related. */
static void value_result(sarif_log *log, const json_t *d)
{
	const char *id = string_at(d, "rule"), *change = string_at(d, "change");
	const json_t *rule = rule_of(&log->old, id), *new_rule = rule_of(&log->new, id), *c;
	json_t *locations = json_array(), *related = json_array();
	ap_buf msg = AP_BUF_INIT, identity = AP_BUF_INIT;
	result_info ri = {"rule", id, rule, strcmp(change, "gained") == 0 ? "note" : "warning",
	                  change, "any", "value", NULL};
	size_t i;

	ap_buf_printf(&identity, "%s -> %s", string_at(d, "before"), string_at(d, "after"));
	ri.identity = identity.data;
	ap_buf_printf(&msg, "%s: rule %s:", change, id);
	json_array_foreach(json_object_get(d, "captures"), i, c) {
		const json_t *e;
		size_t k;

		ap_buf_printf(&msg, "%s %s", i > 0 ? ";" : "", string_at(c, "name"));
		if (json_object_get(c, "added") == NULL) {
			const char *was = string_at(c, "before"), *is = string_at(c, "after");

			ap_buf_printf(&msg, " %s -> %s", was != NULL ? was : "(none)",
			              is != NULL ? is : "(none)");
			continue;
		}
		json_array_foreach(json_object_get(c, "removed"), k, e)
			ap_buf_printf(&msg, "%s%s", k == 0 ? " - " : ", ", json_string_value(e));
		json_array_foreach(json_object_get(c, "added"), k, e)
			ap_buf_printf(&msg, "%s%s", k == 0 ? " + " : ", ", json_string_value(e));
	}
	rule_place_in_old(related, log, rule, json_array_get(json_object_get(rule, "matches"), 0),
	                  &msg, "in");
	rule_place_in_new(locations, log, id,
	                  match_line(json_array_get(json_object_get(new_rule, "matches"), 0)));
	add_result(log, &ri, &msg, locations, related);
	ap_buf_free(&identity);
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

/* A side of the diff: its bases, its meta folder's place, what it read. */
static void side_init(side *sd, const json_t *m, const char *base_id, const char *meta_base_id)
{
	const json_t *aiter = json_object_get(m, "aiter"), *input;
	size_t i;

	sd->m = m;
	sd->base_id = base_id;
	sd->meta_base_id = meta_base_id;
	sd->meta_prefix = meta_prefix(string_at(aiter, "root"), string_at(aiter, "meta"));
	sd->read = json_object();
	json_array_foreach(json_object_get(m, "inputs"), i, input)
		if (string_at(input, "path") != NULL && string_at(input, "sha256") != NULL)
			json_object_set_new(sd->read, string_at(input, "path"), json_true());
}

static void side_bases(const side *sd, json_t *bases, const char *tree)
{
	const json_t *aiter = json_object_get(sd->m, "aiter");
	char *what = ap_xasprintf("the %s AITER tree", tree);

	add_base(bases, sd->base_id, string_at(aiter, "root"), what);
	free(what);
	if (sd->meta_prefix == NULL) {
		what = ap_xasprintf("the %s AITER tree's meta folder (csrc/, hsa/)", tree);
		add_base(bases, sd->meta_base_id, string_at(aiter, "meta"), what);
		free(what);
	}
}

static void side_free(side *sd)
{
	free(sd->meta_prefix);
	json_decref(sd->read);
}

/* The commit analysed, when NEW's root is a git work tree: the local
 * repository as the scan saw it, mapped to the base id of NEW's root. */
static json_t *provenance(const json_t *new)
{
	const json_t *aiter = json_object_get(new, "aiter");
	const char *root = string_at(aiter, "root"), *commit = string_at(aiter, "git_commit");

	if (commit == NULL)
		return NULL;
	return json_pack("[{s:o, s:s, s:{s:s}}]", "repositoryUri",
	                 uri_text("file://", root, root[strlen(root) - 1] == '/' ? "" : "/"),
	                 "revisionId", commit, "mappedTo", "uriBaseId", BASE_ID);
}

json_t *ap_sarif_from_diff(const json_t *report, const json_t *old, const json_t *new,
                           const json_t *described)
{
	sarif_log log = {
		.described = described,
		.rules = json_array(),
		.indices = json_object(),
		.results = json_array(),
	};
	json_t *run, *driver, *bases = json_object(), *vcs;
	const json_t *d;
	size_t i;

	side_init(&log.new, new, BASE_ID, META_BASE_ID);
	side_init(&log.old, old, OLD_BASE_ID, OLD_META_BASE_ID);
	json_array_foreach(json_object_get(report, "capabilities"), i, d)
		capability_result(&log, d);
	json_array_foreach(json_object_get(report, "rules"), i, d)
		rule_result(&log, d);
	json_array_foreach(json_object_get(report, "values"), i, d)
		value_result(&log, d);
	json_array_foreach(json_object_get(report, "cases"), i, d)
		case_results(&log, d);
	json_decref(log.indices);

	driver = json_pack("{s:s, s:s, s:s, s:o}", "name", PACKAGE_NAME, "version", PACKAGE_VERSION,
	                   "informationUri", PACKAGE_URL, "rules", log.rules);
	run = json_pack("{s:{s:o}}", "tool", "driver", driver);
	side_bases(&log.new, bases, "NEW (analysed)");
	side_bases(&log.old, bases, "OLD");
	json_object_set_new(run, "originalUriBaseIds", bases);
	if ((vcs = provenance(new)) != NULL)
		json_object_set_new(run, "versionControlProvenance", vcs);
	side_free(&log.new);
	side_free(&log.old);
	json_object_set_new(run, "results", log.results);
	json_object_set_new(run, "properties",
	                    json_pack("{s:s, s:O, s:O, s:O}", "analyzed", "new", "old",
	                              json_object_get(report, "old"), "new",
	                              json_object_get(report, "new"), "summary",
	                              json_object_get(report, "summary")));
	return json_pack("{s:s, s:s, s:[o]}", "$schema", SARIF_SCHEMA, "version", "2.1.0", "runs",
	                 run);
}
