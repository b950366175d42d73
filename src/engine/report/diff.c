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

/* The match holding a rule's only tuple, when its matches give exactly one
 * (a value: a signature, a bound), else NULL (a table, or nothing captured). */
static const json_t *single_match(const json_t *rule, const json_t *set)
{
	const json_t *match;
	size_t i;

	if (json_object_size(set) != 1)
		return NULL;
	json_array_foreach(json_object_get(rule, "matches"), i, match)
		if (json_object_size(json_object_get(match, "captures")) > 0)
			return match;
	return NULL;
}

/* Only rules in both manifests: a rule that came or went is a rule change.
 * A rule with one tuple on each side is a value, compared by diff_value. */
static json_t *diff_case(const char *id, const json_t *old_rule, const json_t *new_rule)
{
	json_t *old_set, *new_set, *added, *removed, *d = NULL;

	if (old_rule == NULL || new_rule == NULL)
		return NULL;
	old_set = case_set(old_rule);
	new_set = case_set(new_rule);
	if (single_match(old_rule, old_set) != NULL && single_match(new_rule, new_set) != NULL) {
		json_decref(old_set);
		json_decref(new_set);
		return NULL;
	}
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

/* The entries of a signature capture, "a, b=…, *, c" (ap_py_signature). */
static json_t *list_entries(const char *value)
{
	json_t *out = json_array();
	const char *p = value;

	while (*p != '\0') {
		size_t n = strcspn(p, ",");

		json_array_append_new(out, json_stringn(p, n));
		p += n;
		p += strspn(p, ", ");
	}
	return out;
}

static bool has_entry(const json_t *list, const char *entry)
{
	const json_t *e;
	size_t i;

	json_array_foreach(list, i, e)
		if (strcmp(json_string_value(e), entry) == 0)
			return true;
	return false;
}

/* a's entries that b lacks, in a's order. */
static json_t *entries_minus(const json_t *a, const json_t *b)
{
	json_t *out = json_array();
	const json_t *e;
	size_t i;

	json_array_foreach(a, i, e)
		if (!has_entry(b, json_string_value(e)))
			json_array_append(out, (json_t *)e);
	return out;
}

/* Whether the entries both lists hold come in the same order in each. */
static bool same_order(const json_t *a, const json_t *b)
{
	size_t i = 0, j = 0;

	for (;;) {
		while (i < json_array_size(a) && !has_entry(b, json_string_value(json_array_get(a, i))))
			i++;
		while (j < json_array_size(b) && !has_entry(a, json_string_value(json_array_get(b, j))))
			j++;
		if (i == json_array_size(a) || j == json_array_size(b))
			return i == json_array_size(a) && j == json_array_size(b);
		if (strcmp(json_string_value(json_array_get(a, i++)),
		           json_string_value(json_array_get(b, j++))) != 0)
			return false;
	}
}

/* A whole decimal number (a bound, a count), into *n. */
static bool as_number(const char *s, long long *n)
{
	char *end;

	if (s == NULL || s[0] == '\0' || strspn(s + (s[0] == '-'), "0123456789") !=
	                                     strlen(s + (s[0] == '-')) || strlen(s) > 18)
		return false;
	*n = strtoll(s, &end, 10);
	return *end == '\0';
}

/* One capture of a value, before and after: "gained" (a signature whose
 * every entry is still there in its order, a number that rose), "lost" (an
 * entry gone, a number that fell) or "changed" (anything else, a capture
 * that appeared or went). */
static json_t *diff_capture(const char *name, const char *was, const char *is)
{
	json_t *c = json_pack("{s:s, s:o, s:o}", "name", name, "before", ap_json_text(was), "after",
	                      ap_json_text(is));
	const char *change = "changed";
	long long a, b;

	if (was != NULL && is != NULL && strcmp(name, "params") == 0) {
		json_t *old_list = list_entries(was), *new_list = list_entries(is);
		json_t *added = entries_minus(new_list, old_list);
		json_t *removed = entries_minus(old_list, new_list);

		change = json_array_size(removed) > 0       ? "lost"
		         : same_order(old_list, new_list) ? "gained"
		                                          : "changed";
		json_object_set_new(c, "added", added);
		json_object_set_new(c, "removed", removed);
		json_decref(old_list);
		json_decref(new_list);
	} else if (as_number(was, &a) && as_number(is, &b)) {
		change = b > a ? "gained" : "lost";
	}
	json_object_set_new(c, "change", json_string(change));
	return c;
}

/* A rule with one tuple on each side, when they differ: each capture that
 * differs, and the worst of their changes (lost, changed, gained). */
static json_t *diff_value(const char *id, const json_t *old_rule, const json_t *new_rule)
{
	json_t *old_set, *new_set, *captures, *d = NULL;
	const json_t *old_match, *new_match, *old_caps, *new_caps, *v;
	const char *name, *change = "gained";
	char *before, *after;
	size_t i;

	if (old_rule == NULL || new_rule == NULL)
		return NULL;
	old_set = case_set(old_rule);
	new_set = case_set(new_rule);
	old_match = single_match(old_rule, old_set);
	new_match = single_match(new_rule, new_set);
	json_decref(old_set);
	json_decref(new_set);
	if (old_match == NULL || new_match == NULL)
		return NULL;
	before = ap_diff_case_tuple(old_match);
	after = ap_diff_case_tuple(new_match);
	if (strcmp(before, after) != 0) {
		old_caps = json_object_get(old_match, "captures");
		new_caps = json_object_get(new_match, "captures");
		captures = json_array();
		json_object_foreach((json_t *)old_caps, name, v) {
			const char *is = string_at(new_caps, name);
			if (!same_string(json_string_value(v), is))
				json_array_append_new(captures,
				                      diff_capture(name, json_string_value(v), is));
		}
		json_object_foreach((json_t *)new_caps, name, v)
			if (json_object_get(old_caps, name) == NULL)
				json_array_append_new(captures,
				                      diff_capture(name, NULL, json_string_value(v)));
		json_array_foreach(captures, i, v) {
			const char *c = string_at(v, "change");
			bool worse = strcmp(c, "lost") == 0 ||
			             (strcmp(c, "changed") == 0 && strcmp(change, "lost") != 0);
			if (worse)
				change = c;
		}
		d = json_pack("{s:s, s:s, s:s, s:s, s:o}", "rule", id, "change", change, "before",
		              before, "after", after, "captures", captures);
	}
	free(before);
	free(after);
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
	json_t *values = diff_each(old_rules, new_rules, diff_value);
	size_t changed = json_array_size(caps) + json_array_size(rules);

	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I, s:I}}",
	                 "old", describe_side(old, old_name), "new", describe_side(new, new_name),
	                 "capabilities", caps, "rules", rules, "cases", cases, "values", values,
	                 "summary", "lost", (json_int_t)count_change(caps, "lost"),
	                 "changed", (json_int_t)changed,
	                 "differences",
	                 (json_int_t)(changed + json_array_size(cases) + json_array_size(values)));
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

/* How the text is written: painted or not, and the columns to fit. */
typedef struct {
	FILE *to;
	bool color;
	int width;
} text_out;

static const char *or_word(const char *s, const char *word)
{
	return s != NULL ? s : word;
}

/* A change word's colour: lost red, gained green, the rest yellow. */
static const char *change_hue(const char *change)
{
	if (strcmp(change, "lost") == 0 || strcmp(change, "removed") == 0)
		return AP_TEXT_RED;
	if (strcmp(change, "gained") == 0 || strcmp(change, "added") == 0)
		return AP_TEXT_GREEN;
	return AP_TEXT_YELLOW;
}

static void put_painted(ap_buf *b, const text_out *t, const char *hue, const char *word)
{
	ap_buf_printf(b, "%s%s%s", ap_text_paint(t->color, hue), word,
	              ap_text_paint(t->color, AP_TEXT_RESET));
}

/* "WAS -> IS", each state painted as a verdict, joined so the arrow never
 * starts a line. */
static void put_transition(ap_buf *b, const text_out *t, const char *was, const char *is)
{
	put_painted(b, t, ap_text_hue(was), was);
	ap_buf_puts(b, AP_TEXT_JOIN "->" AP_TEXT_JOIN);
	put_painted(b, t, ap_text_hue(is), is);
}

/* lead, then text wrapped after it, continued lines indent columns in. */
static void wrapped(const text_out *t, const char *lead, const char *text, int indent)
{
	ap_text_wrap_after(t->to, lead, text, indent, t->width);
}

static void print_side(const text_out *t, const char *label, const json_t *side)
{
	const char *version = string_at(side, "aiter_version");
	const char *commit = string_at(side, "git_commit");
	ap_buf b = AP_BUF_INIT;
	char *lead = ap_xasprintf("%s: ", label);

	ap_buf_printf(&b, "%s (aiter %s", string_at(side, "path"),
	              version != NULL ? version : "version unknown");
	if (commit != NULL)
		ap_buf_printf(&b, ", commit %.12s", commit);
	ap_buf_putc(&b, ')');
	wrapped(t, lead, b.data, 5);
	free(lead);
	ap_buf_free(&b);
}

const char *ap_diff_state_word(const json_t *state)
{
	if (json_is_null(state))
		return "absent";
	return ap_manifest_cap_verdict(state);
}

/* "  CHANGE   " painted, the lead of a capability's or a value's line. */
static char *change_lead(const text_out *t, const char *change)
{
	return ap_xasprintf("  %s%-8s%s ", ap_text_paint(t->color, change_hue(change)), change,
	                    ap_text_paint(t->color, AP_TEXT_RESET));
}

static void print_capability(const text_out *t, const json_t *d)
{
	const json_t *before = json_object_get(d, "before");
	const json_t *after = json_object_get(d, "after");
	const char *was_launch = string_at(before, "launch");
	const char *is_launch = string_at(after, "launch");
	char *lead = change_lead(t, string_at(d, "change"));
	ap_buf b = AP_BUF_INIT;
	const json_t *dev;
	size_t i;

	ap_buf_printf(&b, "%s:", string_at(d, "id"));
	ap_buf_putc(&b, ' ');
	put_transition(&b, t, ap_diff_state_word(before), ap_diff_state_word(after));
	wrapped(t, lead, b.data, 11);
	free(lead);
	if (!json_is_null(after) && !is_supported(after))
		wrapped(t, "           reason: ", string_at(after, "reason"), 13);
	if (!same_string(was_launch, is_launch)) {
		ap_buf_free(&b);
		put_transition(&b, t, or_word(was_launch, "none"), or_word(is_launch, "none"));
		wrapped(t, "           launch: ", b.data, 13);
	}
	json_array_foreach(json_object_get(d, "devices"), i, dev) {
		const char *name = string_at(dev, "name");
		char *dlead = ap_xasprintf("           device %" JSON_INTEGER_FORMAT "%s%s%s: ",
		                           json_integer_value(json_object_get(dev, "index")),
		                           name != NULL ? " (" : "", name != NULL ? name : "",
		                           name != NULL ? ")" : "");
		ap_buf_free(&b);
		put_transition(&b, t, or_word(string_at(dev, "before"), "absent"),
		               or_word(string_at(dev, "after"), "absent"));
		wrapped(t, dlead, b.data, 13);
		free(dlead);
	}
	ap_buf_free(&b);
}

static void print_tuples(const text_out *t, const json_t *tuples, const char *sign)
{
	char *lead = ap_xasprintf("    %s%s%s ", ap_text_paint(t->color, change_hue(
	                                                             *sign == '-' ? "lost" : "gained")),
	                          sign, ap_text_paint(t->color, AP_TEXT_RESET));
	const json_t *tuple;
	size_t i;

	json_array_foreach(tuples, i, tuple)
		wrapped(t, lead, json_string_value(tuple), 6);
	free(lead);
}

static void print_cases(const text_out *t, const json_t *d)
{
	fprintf(t->to, "  %s\n", string_at(d, "rule"));
	print_tuples(t, json_object_get(d, "removed"), "-");
	print_tuples(t, json_object_get(d, "added"), "+");
}

/* A signature's entries, "+ a, b - c": those NEW added, those it dropped. */
static void put_entries(ap_buf *b, const text_out *t, const json_t *entries, const char *sign)
{
	const json_t *e;
	size_t i;

	if (json_array_size(entries) == 0)
		return;
	ap_buf_putc(b, ' ');
	put_painted(b, t, change_hue(*sign == '-' ? "lost" : "gained"), sign);
	json_array_foreach(entries, i, e)
		ap_buf_printf(b, " %s%s", json_string_value(e),
		              i + 1 < json_array_size(entries) ? "," : "");
}

/* A capture's value, already escaped for the terminal: in double quotes
 * when empty or holding a space, so it reads as one. */
static void put_value(ap_buf *b, const char *value)
{
	bool quote = value[0] == '\0' || strchr(value, ' ') != NULL;

	ap_buf_printf(b, "%s%s%s", quote ? "\"" : "", value, quote ? "\"" : "");
}

static void print_value(const text_out *t, const json_t *d)
{
	char *lead = change_lead(t, string_at(d, "change"));
	ap_buf b = AP_BUF_INIT;
	const json_t *c;
	size_t i;

	ap_buf_printf(&b, "%s:", string_at(d, "rule"));
	json_array_foreach(json_object_get(d, "captures"), i, c) {
		const char *name = string_at(c, "name");
		const char *was = string_at(c, "before"), *is = string_at(c, "after");

		if (i > 0)
			ap_buf_putc(&b, ';');
		ap_buf_printf(&b, " %s", name);
		if (json_object_get(c, "added") != NULL) {
			put_entries(&b, t, json_object_get(c, "removed"), "-");
			put_entries(&b, t, json_object_get(c, "added"), "+");
			if (json_array_size(json_object_get(c, "removed")) +
			            json_array_size(json_object_get(c, "added")) ==
			    0)
				ap_buf_puts(&b, " reordered");
			continue;
		}
		ap_buf_putc(&b, ' ');
		if (was != NULL)
			put_value(&b, was);
		else
			ap_buf_puts(&b, "(none)");
		ap_buf_puts(&b, AP_TEXT_JOIN "->" AP_TEXT_JOIN);
		if (is != NULL)
			put_value(&b, is);
		else
			ap_buf_puts(&b, "(none)");
	}
	wrapped(t, lead, b.data, 11);
	free(lead);
	ap_buf_free(&b);
}

void ap_diff_print_text(const json_t *report, FILE *to, bool color, int width)
{
	const text_out t = {to, color, width};
	const json_t *caps = json_object_get(report, "capabilities");
	const json_t *rules = json_object_get(report, "rules");
	const json_t *cases = json_object_get(report, "cases");
	const json_t *values = json_object_get(report, "values");
	const json_t *summary = json_object_get(report, "summary");
	const json_t *d;
	ap_buf b = AP_BUF_INIT;
	size_t i;

	print_side(&t, "old", json_object_get(report, "old"));
	print_side(&t, "new", json_object_get(report, "new"));
	if (!ap_diff_has(report, AP_DIFF_ANY)) {
		fputs("\nno differences\n", to);
		return;
	}
	if (json_array_size(caps) > 0)
		fputs("\ncapabilities:\n", to);
	json_array_foreach(caps, i, d)
		print_capability(&t, d);
	if (json_array_size(rules) > 0)
		fputs("\nrules:\n", to);
	json_array_foreach(rules, i, d) {
		char *lead = ap_xasprintf("  %s: ", string_at(d, "id"));
		ap_buf_free(&b);
		put_transition(&b, &t, or_word(string_at(d, "before"), "absent"),
		               or_word(string_at(d, "after"), "absent"));
		wrapped(&t, lead, b.data, 4);
		free(lead);
	}
	ap_buf_free(&b);
	if (json_array_size(values) > 0)
		fputs("\nvalues (rules with one match on each side):\n", to);
	json_array_foreach(values, i, d)
		print_value(&t, d);
	if (json_array_size(cases) > 0)
		fputs("\ncases (- only in old, + only in new):\n", to);
	json_array_foreach(cases, i, d)
		print_cases(&t, d);
	fprintf(to,
	        "\nsummary: %" JSON_INTEGER_FORMAT " lost, %" JSON_INTEGER_FORMAT
	        " changed, %" JSON_INTEGER_FORMAT " in all\n",
	        json_integer_value(json_object_get(summary, "lost")),
	        json_integer_value(json_object_get(summary, "changed")),
	        json_integer_value(json_object_get(summary, "differences")));
}
