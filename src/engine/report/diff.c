/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "core/manifest-read.h"
#include "engine/report/diff.h"
#include "core/text.h"
#include "engine/manifest.h"

/* The keys of two objects, sorted and without repeats (borrowed strings),
 * so a report reads the same whatever order the manifests wrote. */
static const char **union_keys(const json_t *a, const json_t *b, size_t *n)
{
	const char **keys = ap_xcalloc(json_object_size(a) + json_object_size(b) + 1, sizeof *keys);
	const char *key;
	json_t *v;
	size_t count = 0, i, kept = 0;

	json_object_foreach((json_t *)a, key, v)
		keys[count++] = key;
	json_object_foreach((json_t *)b, key, v)
		if (json_object_get(a, key) == NULL)
			keys[count++] = key;
	qsort(keys, count, sizeof *keys, ap_cmp_strs);
	for (i = 0; i < count; i++)
		if (kept == 0 || strcmp(keys[kept - 1], keys[i]) != 0)
			keys[kept++] = keys[i];
	*n = kept;
	return keys;
}

static const char *string_at(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static bool same_string(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool is_supported(const json_t *cap)
{
	return cap != NULL && json_is_true(json_object_get(cap, "supported"));
}

static const char *launch_status(const json_t *cap)
{
	return string_at(json_object_get(cap, "launch"), "status");
}

static const json_t *launch_results(const json_t *cap)
{
	return json_object_get(json_object_get(cap, "launch"), "results");
}

/* A launch result names its device; one without falls back to its position. */
static json_int_t device_index(const json_t *result, size_t pos)
{
	const json_t *index = json_object_get(json_object_get(result, "device"), "index");
	return json_is_integer(index) ? json_integer_value(index) : (json_int_t)pos;
}

static const json_t *result_for_device(const json_t *results, json_int_t index)
{
	const json_t *result;
	size_t i;

	json_array_foreach(results, i, result)
		if (device_index(result, i) == index)
			return result;
	return NULL;
}

static void add_device_change(json_t *changes, json_int_t index, const json_t *before,
                              const json_t *after)
{
	const char *was = string_at(before, "status");
	const char *is = string_at(after, "status");
	const char *name = string_at(json_object_get(after != NULL ? after : before, "device"),
	                             "name");

	if (same_string(was, is))
		return;
	json_array_append_new(changes, json_pack("{s:I, s:o, s:o, s:o}", "index", index, "name",
	                                         ap_json_text(name), "before",
	                                         ap_json_text(was), "after",
	                                         ap_json_text(is)));
}

/* Per-device launch statuses that differ: OLD's devices first, then those
 * only NEW has. */
static json_t *device_changes(const json_t *old_cap, const json_t *new_cap)
{
	const json_t *old_results = launch_results(old_cap);
	const json_t *new_results = launch_results(new_cap);
	const json_t *result;
	json_t *changes = json_array();
	size_t i;

	json_array_foreach(old_results, i, result) {
		json_int_t index = device_index(result, i);
		add_device_change(changes, index, result, result_for_device(new_results, index));
	}
	json_array_foreach(new_results, i, result) {
		json_int_t index = device_index(result, i);
		if (result_for_device(old_results, index) == NULL)
			add_device_change(changes, index, NULL, result);
	}
	return changes;
}

static json_t *cap_state(const json_t *cap)
{
	if (cap == NULL)
		return json_null();
	return json_pack("{s:b, s:o, s:o}", "supported", is_supported(cap), "launch",
	                 ap_json_text(launch_status(cap)), "reason",
	                 ap_json_text(string_at(cap, "reason")));
}

static json_t *diff_capability(const char *id, const json_t *old_cap, const json_t *new_cap)
{
	json_t *devices = device_changes(old_cap, new_cap);
	const char *change;

	if (is_supported(old_cap) && !is_supported(new_cap))
		change = "lost";
	else if (!is_supported(old_cap) && is_supported(new_cap))
		change = "gained";
	else if ((old_cap == NULL) != (new_cap == NULL) ||
	         strcmp(ap_manifest_cap_verdict(old_cap), ap_manifest_cap_verdict(new_cap)) != 0 ||
	         !same_string(launch_status(old_cap), launch_status(new_cap)) ||
	         json_array_size(devices) > 0)
		change = "changed";
	else {
		json_decref(devices);
		return NULL;
	}
	return json_pack("{s:s, s:s, s:o, s:o, s:o}", "id", id, "change", change, "before",
	                 cap_state(old_cap), "after", cap_state(new_cap), "devices", devices);
}

static json_t *diff_rule(const char *id, const json_t *old_rule, const json_t *new_rule)
{
	const char *was = string_at(old_rule, "status");
	const char *is = string_at(new_rule, "status");

	if (same_string(was, is))
		return NULL;
	return json_pack("{s:s, s:o, s:o}", "id", id, "before", ap_json_text(was), "after",
	                 ap_json_text(is));
}

char *ap_diff_case_tuple(const json_t *match)
{
	const json_t *captures = json_object_get(match, "captures");
	const char *name;
	json_t *value;
	ap_buf tuple = AP_BUF_INIT;

	if (json_object_size(captures) == 0)
		return NULL;
	json_object_foreach((json_t *)captures, name, value) {
		if (tuple.len > 0)
			ap_buf_putc(&tuple, ' ');
		ap_buf_printf(&tuple, "%s=", name);
		ap_xok(ap_text_word(&tuple, json_string_value(value)));
	}
	return ap_buf_detach(&tuple);
}

/* The capture tuples of a rule's matches as an ordered set (an object whose
 * keys keep the manifest's order). Empty when no match captured anything:
 * such a rule has no case table. */
static json_t *case_set(const json_t *rule)
{
	json_t *set = json_object();
	const json_t *match;
	size_t i;

	json_array_foreach(json_object_get(rule, "matches"), i, match) {
		char *tuple = ap_diff_case_tuple(match);

		if (tuple != NULL)
			json_object_set_new(set, tuple, json_true());
		free(tuple);
	}
	return set;
}

static json_t *set_minus(const json_t *a, const json_t *b)
{
	json_t *out = json_array();
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)a, key, v)
		if (json_object_get(b, key) == NULL)
			json_array_append_new(out, json_string(key));
	return out;
}

/* Only rules in both manifests: a rule that came or went is a rule change. */
static json_t *diff_case(const char *id, const json_t *old_rule, const json_t *new_rule)
{
	json_t *old_set, *new_set, *added, *removed, *d = NULL;

	if (old_rule == NULL || new_rule == NULL)
		return NULL;
	old_set = case_set(old_rule);
	new_set = case_set(new_rule);
	added = set_minus(new_set, old_set);
	removed = set_minus(old_set, new_set);
	if (json_array_size(added) + json_array_size(removed) > 0) {
		d = json_pack("{s:s, s:o, s:o}", "rule", id, "added", added, "removed", removed);
	} else {
		json_decref(added);
		json_decref(removed);
	}
	json_decref(old_set);
	json_decref(new_set);
	return d;
}

/* The differences one() finds for every id of either object, in order. */
static json_t *diff_each(const json_t *old_by_id, const json_t *new_by_id,
                         json_t *(*one)(const char *, const json_t *, const json_t *))
{
	json_t *out = json_array();
	size_t n, i;
	const char **ids = union_keys(old_by_id, new_by_id, &n);

	for (i = 0; i < n; i++) {
		json_t *d = one(ids[i], json_object_get(old_by_id, ids[i]),
		                json_object_get(new_by_id, ids[i]));
		if (d != NULL)
			json_array_append_new(out, d);
	}
	free(ids);
	return out;
}

static json_t *describe_side(const json_t *m, const char *name)
{
	const json_t *aiter = json_object_get(m, "aiter");

	return json_pack("{s:o, s:o, s:o}", "path", ap_json_text(name), "aiter_version",
	                 ap_json_text(string_at(aiter, "version")), "git_commit",
	                 ap_json_text(string_at(aiter, "git_commit")));
}

static size_t count_change(const json_t *caps, const char *change)
{
	const json_t *cap;
	size_t i, n = 0;

	json_array_foreach(caps, i, cap)
		n += strcmp(string_at(cap, "change"), change) == 0;
	return n;
}

json_t *ap_diff_manifests(const json_t *old, const char *old_name, const json_t *new,
                          const char *new_name)
{
	const json_t *old_rules = json_object_get(old, "rules");
	const json_t *new_rules = json_object_get(new, "rules");
	json_t *caps = diff_each(json_object_get(old, "capabilities"),
	                         json_object_get(new, "capabilities"), diff_capability);
	json_t *rules = diff_each(old_rules, new_rules, diff_rule);
	json_t *cases = diff_each(old_rules, new_rules, diff_case);
	size_t changed = json_array_size(caps) + json_array_size(rules);

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I, s:I}}",
	                 "old", describe_side(old, old_name), "new", describe_side(new, new_name),
	                 "capabilities", caps, "rules", rules, "cases", cases, "summary",
	                 "lost", (json_int_t)count_change(caps, "lost"),
	                 "changed", (json_int_t)changed,
	                 "differences", (json_int_t)(changed + json_array_size(cases)));
}

bool ap_diff_has(const json_t *report, ap_diff_class cls)
{
	static const char *const counts[] = {
		[AP_DIFF_LOST] = "lost", [AP_DIFF_CHANGED] = "changed", [AP_DIFF_ANY] = "differences",
	};
	const json_t *summary = json_object_get(report, "summary");

	return json_integer_value(json_object_get(summary, counts[cls])) > 0;
}

int ap_diff_class_parse(const char *word, ap_diff_class *cls)
{
	if (strcmp(word, "lost") == 0)
		*cls = AP_DIFF_LOST;
	else if (strcmp(word, "changed") == 0)
		*cls = AP_DIFF_CHANGED;
	else if (strcmp(word, "any") == 0)
		*cls = AP_DIFF_ANY;
	else
		return -1;
	return 0;
}

static void print_side(const char *label, const json_t *side, FILE *to)
{
	const char *version = string_at(side, "aiter_version");
	const char *commit = string_at(side, "git_commit");

	fprintf(to, "%s: %s (aiter %s", label, string_at(side, "path"),
	        version != NULL ? version : "version unknown");
	if (commit != NULL)
		fprintf(to, ", commit %.12s", commit);
	fputs(")\n", to);
}

const char *ap_diff_state_word(const json_t *state)
{
	if (json_is_null(state))
		return "absent";
	return ap_manifest_cap_verdict(state);
}

static const char *or_word(const char *s, const char *word)
{
	return s != NULL ? s : word;
}

static void print_capability(const json_t *d, FILE *to)
{
	const json_t *before = json_object_get(d, "before");
	const json_t *after = json_object_get(d, "after");
	const char *was_launch = string_at(before, "launch");
	const char *is_launch = string_at(after, "launch");
	const json_t *dev;
	size_t i;

	fprintf(to, "  %-8s %s: %s -> %s\n", string_at(d, "change"), string_at(d, "id"),
	        ap_diff_state_word(before), ap_diff_state_word(after));
	if (!json_is_null(after) && !is_supported(after))
		fprintf(to, "           reason: %s\n", string_at(after, "reason"));
	if (!same_string(was_launch, is_launch))
		fprintf(to, "           launch: %s -> %s\n", or_word(was_launch, "none"),
		        or_word(is_launch, "none"));
	json_array_foreach(json_object_get(d, "devices"), i, dev) {
		const char *name = string_at(dev, "name");
		fprintf(to, "           device %" JSON_INTEGER_FORMAT "%s%s%s: %s -> %s\n",
		        json_integer_value(json_object_get(dev, "index")), name != NULL ? " (" : "",
		        name != NULL ? name : "", name != NULL ? ")" : "",
		        or_word(string_at(dev, "before"), "absent"),
		        or_word(string_at(dev, "after"), "absent"));
	}
}

static void print_cases(const json_t *d, FILE *to)
{
	const json_t *tuple;
	size_t i;

	fprintf(to, "  %s\n", string_at(d, "rule"));
	json_array_foreach(json_object_get(d, "removed"), i, tuple)
		fprintf(to, "    - %s\n", json_string_value(tuple));
	json_array_foreach(json_object_get(d, "added"), i, tuple)
		fprintf(to, "    + %s\n", json_string_value(tuple));
}

void ap_diff_print_text(const json_t *report, FILE *to)
{
	const json_t *caps = json_object_get(report, "capabilities");
	const json_t *rules = json_object_get(report, "rules");
	const json_t *cases = json_object_get(report, "cases");
	const json_t *summary = json_object_get(report, "summary");
	const json_t *d;
	size_t i;

	print_side("old", json_object_get(report, "old"), to);
	print_side("new", json_object_get(report, "new"), to);
	if (!ap_diff_has(report, AP_DIFF_ANY)) {
		fputs("\nno differences\n", to);
		return;
	}
	if (json_array_size(caps) > 0)
		fputs("\ncapabilities:\n", to);
	json_array_foreach(caps, i, d)
		print_capability(d, to);
	if (json_array_size(rules) > 0)
		fputs("\nrules:\n", to);
	json_array_foreach(rules, i, d)
		fprintf(to, "  %s: %s -> %s\n", string_at(d, "id"),
		        or_word(string_at(d, "before"), "absent"),
		        or_word(string_at(d, "after"), "absent"));
	if (json_array_size(cases) > 0)
		fputs("\ncases (- only in old, + only in new):\n", to);
	json_array_foreach(cases, i, d)
		print_cases(d, to);
	fprintf(to,
	        "\nsummary: %" JSON_INTEGER_FORMAT " lost, %" JSON_INTEGER_FORMAT
	        " changed, %" JSON_INTEGER_FORMAT " in all\n",
	        json_integer_value(json_object_get(summary, "lost")),
	        json_integer_value(json_object_get(summary, "changed")),
	        json_integer_value(json_object_get(summary, "differences")));
}
