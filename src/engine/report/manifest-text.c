/* SPDX-License-Identifier: MIT */
/* The manifest as text for people: fitted to the width, long values wrapped
 * with a hanging indent, and a rule's case table grouped (see doc/usage.md,
 * "Text output"). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-map.h"
#include "core/ap-util.h"
#include "core/manifest-read.h"
#include "engine/launch.h"
#include "engine/manifest.h"
#include "core/text.h"

/* Columns of the labels the values hang from. */
#define BLOCK 6 /* a capability's or rule's detail lines */

static const char *string_at(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* Writes label (from column BLOCK) and then value wrapped under itself. */
static void print_labelled(FILE *to, const char *label, const char *value, int width)
{
	int col = BLOCK + ap_text_columns(label) + 1;

	fprintf(to, "%*s%s ", BLOCK, "", label);
	ap_text_wrap(to, value, col, col, width);
}

/* A detail line under a capability or rule, wrapped. */
static void print_detail(FILE *to, const char *text, int width)
{
	fprintf(to, "%*s", BLOCK, "");
	ap_text_wrap(to, text, BLOCK, BLOCK + 4, width);
}

static int cmp_lines(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* "hsa/x.csv:924-946" or "x.py:12, 40-44, 90": the lines of matches, sorted,
 * runs of consecutive lines as ranges. */
static void put_lines(ap_buf *b, const char *file, const json_t *matches)
{
	size_t n = json_array_size(matches), i, k = 0;
	long long *lines = ap_xcalloc(n ? n : 1, sizeof *lines);
	const json_t *match;

	json_array_foreach(matches, i, match)
		lines[k++] = json_integer_value(json_object_get(match, "line"));
	qsort(lines, n, sizeof *lines, cmp_lines);
	ap_buf_puts(b, file != NULL ? file : "line");
	ap_buf_putc(b, file != NULL ? ':' : ' ');
	for (i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && lines[j + 1] <= lines[j] + 1)
			j++;
		ap_buf_printf(b, "%s%lld", i ? ", " : "", lines[i]);
		if (lines[j] != lines[i])
			ap_buf_printf(b, "-%lld", lines[j]);
		i = j + 1;
	}
	free(lines);
}

/* --- Case tables --------------------------------------------------------- */

/* The distinct capture tuples of a rule's matches: names in first-seen
 * order, each tuple a value per name ("" where a match lacks the name). */
typedef struct cases {
	const char **names;
	size_t nnames;
	const char **values; /* ntuples rows of nnames */
	size_t ntuples;
} cases;

static size_t name_index(cases *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nnames; i++)
		if (strcmp(c->names[i], name) == 0)
			return i;
	return SIZE_MAX;
}

/* Joins a tuple's values but column skip (SIZE_MAX: none), each ended by
 * NUL, as a key for ap_map. */
static void tuple_key(ap_buf *key, const cases *c, const char **row, size_t skip)
{
	key->len = 0;
	for (size_t i = 0; i < c->nnames; i++)
		if (i != skip)
			ap_buf_append(key, row[i], strlen(row[i]) + 1);
}

/* From items, each a match (its "captures") or, with field NULL, a captures
 * object itself. */
static const json_t *captures_of(const json_t *item, const char *field)
{
	return field != NULL ? json_object_get(item, field) : item;
}

static void cases_collect(cases *c, const json_t *matches, const char *field)
{
	const json_t *match;
	ap_map *seen = ap_xnonnull(ap_map_new());
	ap_buf key = AP_BUF_INIT;
	const char **row = NULL;
	size_t i, cap = 0;

	memset(c, 0, sizeof *c);
	json_array_foreach(matches, i, match) {
		const char *name;
		json_t *value;

		json_object_foreach((json_t *)captures_of(match, field), name, value)
			if (name_index(c, name) == SIZE_MAX) {
				c->names = ap_xrealloc(c->names, (c->nnames + 1) * sizeof *c->names);
				c->names[c->nnames++] = name;
			}
	}
	row = ap_xcalloc(c->nnames ? c->nnames : 1, sizeof *row);
	json_array_foreach(matches, i, match) {
		const json_t *captures = captures_of(match, field);

		if (json_object_size(captures) == 0)
			continue;
		for (size_t k = 0; k < c->nnames; k++) {
			const char *v = json_string_value(json_object_get(captures, c->names[k]));
			row[k] = v != NULL ? v : "";
		}
		tuple_key(&key, c, row, SIZE_MAX);
		if (ap_map_get(seen, key.data, key.len) != AP_MAP_ABSENT)
			continue;
		ap_xok(ap_map_put(seen, key.data, key.len, c->ntuples));
		ap_xgrow((void **)&c->values, &cap, (c->ntuples + 1) * c->nnames, sizeof *c->values);
		memcpy(c->values + c->ntuples * c->nnames, row, c->nnames * sizeof *row);
		c->ntuples++;
	}
	free(row);
	ap_buf_free(&key);
	ap_map_free(seen);
}

static void cases_free(cases *c)
{
	free(c->names);
	free(c->values);
}

/* The capture a grouped table lists: the one whose removal leaves the fewest
 * distinct rest-tuples (groups), the first such in capture order. */
static size_t listed_capture(const cases *c)
{
	size_t best = 0, best_groups = SIZE_MAX;
	ap_buf key = AP_BUF_INIT;

	for (size_t skip = 0; skip < c->nnames; skip++) {
		ap_map *groups = ap_xnonnull(ap_map_new());

		for (size_t t = 0; t < c->ntuples; t++) {
			tuple_key(&key, c, c->values + t * c->nnames, skip);
			ap_xok(ap_map_put(groups, key.data ? key.data : "", key.len, t));
		}
		if (ap_map_count(groups) < best_groups) {
			best_groups = ap_map_count(groups);
			best = skip;
		}
		ap_map_free(groups);
	}
	ap_buf_free(&key);
	return best;
}

/* Values as people order them: whole numbers by value, before any other
 * value; the rest by bytes. */
static int value_cmp(const char *a, const char *b)
{
	char *ea, *eb;
	long long na = strtoll(a, &ea, 10), nb = strtoll(b, &eb, 10);
	bool a_num = *a != '\0' && *ea == '\0', b_num = *b != '\0' && *eb == '\0';

	if (a_num && b_num && na != nb)
		return na < nb ? -1 : 1;
	if (a_num != b_num)
		return a_num ? -1 : 1;
	return strcmp(a, b);
}

typedef struct sorting {
	const cases *c;
	size_t listed;
} sorting;

/* Tuples by their group (the other captures, in capture order), then by
 * the listed value. */
static int row_cmp(const void *pa, const void *pb, void *ctx)
{
	const sorting *s = ctx;
	const char *const *a = s->c->values + *(const size_t *)pa * s->c->nnames;
	const char *const *b = s->c->values + *(const size_t *)pb * s->c->nnames;
	int r;

	for (size_t i = 0; i < s->c->nnames; i++)
		if (i != s->listed && (r = value_cmp(a[i], b[i])) != 0)
			return r;
	return value_cmp(a[s->listed], b[s->listed]);
}

/* One line a group from column col: "head_dim 512: heads 16 24 32 64 128",
 * the listed values wrapped under the first of them. */
static void print_groups(FILE *to, const cases *c, int col, int width)
{
	size_t listed = listed_capture(c), t;
	size_t *order = ap_xcalloc(c->ntuples, sizeof *order);
	ap_buf line = AP_BUF_INIT;
	int hang = col;

	for (t = 0; t < c->ntuples; t++)
		order[t] = t;
	qsort_r(order, c->ntuples, sizeof *order, row_cmp, &(sorting){c, listed});
	for (t = 0; t < c->ntuples; t++) {
		const char **row = c->values + order[t] * c->nnames;
		const char **prev = t ? c->values + order[t - 1] * c->nnames : NULL;
		bool same_group = prev != NULL;

		/* tuples are distinct: one of a group differs in the listed value */
		for (size_t i = 0; same_group && i < c->nnames; i++)
			same_group = i == listed || strcmp(row[i], prev[i]) == 0;
		if (!same_group) {
			const char *sep = "";

			if (line.len > 0) {
				fprintf(to, "%*s", col, "");
				ap_text_wrap(to, line.data, col, hang, width);
			}
			line.len = 0;
			for (size_t i = 0; i < c->nnames; i++) {
				if (i == listed)
					continue;
				ap_buf_printf(&line, "%s%s ", sep, c->names[i]);
				ap_xok(ap_text_word(&line, row[i]));
				sep = ", ";
			}
			if (line.len > 0)
				ap_buf_puts(&line, ": ");
			ap_buf_printf(&line, "%s ", c->names[listed]);
			hang = col + ap_text_columns(line.data);
		} else {
			ap_buf_putc(&line, ' ');
		}
		ap_xok(ap_text_word(&line, row[listed]));
	}
	if (line.len > 0) {
		fprintf(to, "%*s", col, "");
		ap_text_wrap(to, line.data, col, hang, width);
	}
	ap_buf_free(&line);
	free(order);
}

void ap_manifest_print_cases(FILE *to, const json_t *captures, int col, int width)
{
	cases c;

	cases_collect(&c, captures, NULL);
	if (c.ntuples > 0)
		print_groups(to, &c, col, width);
	cases_free(&c);
}

/* A matched rule: where it matched, and its captures; a case table (two or
 * more distinct capture tuples) grouped, one line a group. */
static void print_matches(FILE *to, const json_t *rule, int width)
{
	const json_t *matches = json_object_get(rule, "matches");
	ap_buf line = AP_BUF_INIT;
	cases c;

	cases_collect(&c, matches, "captures");
	put_lines(&line, string_at(rule, "file"), matches);
	if (c.ntuples == 1) {
		const char *sep = " (";

		for (size_t i = 0; i < c.nnames; i++) {
			ap_buf_printf(&line, "%s%s=%s", sep, c.names[i], c.values[i]);
			sep = " ";
		}
		ap_buf_putc(&line, ')');
	} else if (c.ntuples > 1) {
		ap_buf_printf(&line, " (%zu cases)", c.ntuples);
	}
	print_detail(to, line.data, width);
	if (c.ntuples > 1)
		print_groups(to, &c, BLOCK, width);
	ap_buf_free(&line);
	cases_free(&c);
}

/* --- Sections ------------------------------------------------------------ */

static void print_title(FILE *to, bool color, const char *title)
{
	fprintf(to, "%s%s%s\n", ap_text_paint(color, AP_TEXT_BOLD), title,
	        ap_text_paint(color, AP_TEXT_RESET));
}

/* "  supported   id": the word painted, the id wrapped after it. */
static void print_head(FILE *to, bool color, const char *word, const char *id, int width)
{
	fprintf(to, "  %s%-11s%s ", ap_text_paint(color, ap_text_hue(word)), word,
	        ap_text_paint(color, AP_TEXT_RESET));
	ap_text_wrap(to, id, 14, 14, width);
}

static void print_capabilities(const json_t *m, FILE *to, bool color, int width)
{
	const char *id;
	json_t *cap;

	print_title(to, color, "Capabilities");
	json_object_foreach(json_object_get(m, "capabilities"), id, cap) {
		json_t *evidence = json_object_get(cap, "evidence");
		json_t *launch = json_object_get(cap, "launch");
		json_t *item;
		size_t i;

		print_head(to, color, ap_manifest_cap_verdict(cap), id, width);
		print_labelled(to, "why:", string_at(cap, "reason"), width);
		if (json_array_size(evidence) > 0) {
			ap_buf list = AP_BUF_INIT;

			json_array_foreach(evidence, i, item)
				ap_buf_printf(&list, "%s%s", i ? ", " : "", json_string_value(item));
			print_labelled(to, "evidence:", list.data, width);
			ap_buf_free(&list);
		}
		if (launch != NULL) {
			char *text = ap_launch_text(launch);

			print_labelled(to, "launch:", text, width);
			free(text);
		}
	}
}

static void print_rules(const json_t *m, FILE *to, bool color, int width)
{
	const char *id;
	json_t *rule;

	print_title(to, color, "Rules");
	json_object_foreach(json_object_get(m, "rules"), id, rule) {
		const char *status = string_at(rule, "status");
		const char *reason = string_at(rule, "reason");
		const char *file = string_at(rule, "file");
		print_head(to, color, status, id, width);
		if (reason != NULL) {
			print_detail(to, reason, width);
		} else if (strcmp(status, "unmatched") == 0) {
			char *text = file != NULL ? ap_xasprintf("no match in %s", file)
			                          : ap_xstrdup("no match");

			print_detail(to, text, width);
			free(text);
		} else if (strcmp(status, "matched") == 0) {
			print_matches(to, rule, width);
		} else if (file != NULL) {
			/* unknown, missing or error with no reason (a manifest only a
			 * hand wrote): never a match, whatever matches it lists */
			print_detail(to, file, width);
		}
	}
}

static void print_devices(const json_t *m, FILE *to, int width)
{
	json_t *dev;
	size_t i;

	if (json_array_size(json_object_get(m, "devices")) == 0) {
		fputs("Devices: none\n", to);
		return;
	}
	fputs("Devices:\n", to);
	json_array_foreach(json_object_get(m, "devices"), i, dev) {
		const char *name = string_at(dev, "name"), *arch = string_at(dev, "arch");
		char *text = ap_xasprintf("%lld: %s (%s)",
		                          (long long)json_integer_value(json_object_get(dev, "index")),
		                          name ? name : "?", arch ? arch : "?");

		fputs("  ", to);
		ap_text_wrap(to, text, 2, 4, width);
		free(text);
	}
}

/* Which kernels could run the cross-checks, and why not. */
static void print_launchers(const json_t *m, FILE *to, int width)
{
	static const char *const which[][2] = {{"aiter", "AITER's kernel"},
	                                       {"reference", "reference kernel"}};
	size_t i;

	for (i = 0; i < sizeof which / sizeof which[0]; i++) {
		char *line = ap_launchers_text(json_object_get(m, "launchers"), which[i][0]);
		char *text = line != NULL ? ap_xasprintf("%s: %s", which[i][1], line) : NULL;

		if (i == 0 && text != NULL)
			fputs("Launchers:\n", to);
		if (text != NULL) {
			fputs("  ", to);
			ap_text_wrap(to, text, 2, 4, width);
		}
		free(line);
		free(text);
	}
}

void ap_manifest_print_text(const json_t *manifest, FILE *to, bool color, int width)
{
	json_t *m = ap_json_for_terminal(manifest);
	json_t *aiter = json_object_get(m, "aiter");
	const char *version = string_at(aiter, "version");
	const char *commit = string_at(aiter, "git_commit");
	char *head = ap_xasprintf("AITER %s (version %s, commit %.12s)", string_at(aiter, "root"),
	                          version ? version : "unknown", commit ? commit : "unknown");

	ap_text_wrap(to, head, 0, 4, width);
	free(head);
	print_capabilities(m, to, color, width);
	print_rules(m, to, color, width);
	print_devices(m, to, width);
	print_launchers(m, to, width);
	json_decref(m);
}
