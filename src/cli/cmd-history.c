/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "cli/cmd.h"
#include "engine/report/history.h"
#include "engine/manifest.h"
#include "engine/rules.h"
#include "core/text.h"

#define PROGRESS_WIDTH 30

static const char usage[] =
	"Usage: aiter-probe history --git AITER_GIT_DIR REV_RANGE [OPTION]...\n"
	"Evaluate the rules on every commit of a range of AITER's git history, read\n"
	"from the object database (nothing is checked out), and report each commit\n"
	"where a rule's verdict or captures, or a capability, changed.\n"
	"\n"
	"REV_RANGE is read as git reads it: A..B (the commits after A up to B),\n"
	"A...B (the commits on either side since their merge base), or one revision\n"
	"(its whole history). Each commit is compared with its first parent.\n"
	"Launches never run: capabilities are decided by their static rules.\n"
	"\n"
	"Options:\n"
	"  --git DIR              the AITER repository (bare, or a work tree's top)\n"
	"  --rules PATH           load this rule pack too (a file or a folder);\n"
	"                         repeatable\n"
	"  --no-default-rules     do not load the installed packs\n"
	"  --python PATH          the python3 that will run the server, whose facts\n"
	"                         the tree's conditions read (default\n"
	"                         $AITER_PROBE_PYTHON, else python3)\n"
	"  --python-version X.Y   its version alone, instead\n"
	"  --format text|json     the report's format (default text)\n"
	"  --color[=WHEN]         paint the text: auto (the default: on a terminal,\n"
	"                         unless NO_COLOR or TERM=dumb), always (a bare\n"
	"                         --color) or never\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: 0 done, 2 usage or input error.\n";

static int history_exec(int argc, char **argv);

const struct ap_cmd ap_cmd_history = {
	.name = "history",
	.summary = "report where rule verdicts changed over a git range",
	.usage = usage,
	.exec = history_exec,
};

/* --- Progress on a terminal ---------------------------------------------- */

typedef struct progress {
	bool drawn;
	size_t last_filled;
	size_t last_done;
} progress;

static void draw_progress(void *ctx, size_t done, size_t total)
{
	progress *p = ctx;
	size_t filled = total ? done * PROGRESS_WIDTH / total : PROGRESS_WIDTH, i;

	/* Redraw when the bar grows or every 64 commits, not on every commit. */
	if (p->drawn && filled == p->last_filled && done - p->last_done < 64 && done != total)
		return;
	fputs("\r[", stderr);
	for (i = 0; i < PROGRESS_WIDTH; i++)
		fputc(i < filled ? '#' : '.', stderr);
	fprintf(stderr, "] %zu/%zu commits", done, total);
	fflush(stderr);
	p->drawn = true;
	p->last_filled = filled;
	p->last_done = done;
}

static void clear_progress(progress *p)
{
	if (p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->drawn = false;
	}
}

/* --- Text report -------------------------------------------------------- */

/* Paints, wraps and fits the report as scan does. */
typedef struct report_text {
	FILE *to;
	bool color;
	int width;
} report_text;

static void put_capture(ap_buf *b, const json_t *capture)
{
	const char *name;
	const json_t *value;
	bool first = true;

	json_object_foreach((json_t *)capture, name, value) {
		ap_buf_printf(b, "%s%s=%s", first ? "" : " ", name, json_string_value(value));
		first = false;
	}
}

/* "supported", or a rule's status, painted, with its captures when
 * with_captures: "matched [heads=16 dim=512]" for one tuple, "matched (3
 * cases)" for more (the caller prints them grouped). */
static void put_state(ap_buf *b, const report_text *rt, const json_t *state, bool with_captures)
{
	const char *word = json_is_boolean(state)
	                           ? (json_is_true(state) ? "supported" : "unsupported")
	                           : json_string_value(json_object_get(state, "status"));
	const json_t *captures = json_object_get(state, "captures");
	size_t n = json_array_size(captures);

	ap_buf_printf(b, "%s%s%s", ap_text_paint(rt->color, ap_text_hue(word)), word,
	              ap_text_paint(rt->color, AP_TEXT_RESET));
	if (!with_captures || n == 0)
		return;
	if (n > 1) {
		ap_buf_printf(b, " (%zu" AP_TEXT_JOIN "cases)", n);
		return;
	}
	ap_buf_puts(b, " [");
	put_capture(b, json_array_get(captures, 0));
	ap_buf_putc(b, ']');
}

/* Prints, one a line, the capture tuples of from that to lacks ("- ...",
 * red) or, with sign '+', those of to that from lacks (green). A rule
 * state's tuples are distinct, so this is a set difference. */
static void print_missing(const report_text *rt, char sign, const json_t *from, const json_t *to)
{
	json_t *missing = ap_history_captures_missing(from, to);
	const json_t *one;
	size_t i;

	json_array_foreach(missing, i, one) {
		ap_buf line = AP_BUF_INIT;

		ap_buf_append(&line, "", 0);
		put_capture(&line, one);
		fprintf(rt->to, "      %s%c%s ",
		        ap_text_paint(rt->color, sign == '+' ? AP_TEXT_GREEN : AP_TEXT_RED), sign,
		        ap_text_paint(rt->color, AP_TEXT_RESET));
		ap_text_wrap(rt->to, line.data, 8, 8, rt->width);
		ap_buf_free(&line);
	}
	json_decref(missing);
}

/* A rule's captures before and after, as what was added and removed. */
static void print_capture_changes(const report_text *rt, const json_t *before,
                                  const json_t *after)
{
	const json_t *b = json_object_get(before, "captures"), *a = json_object_get(after, "captures");

	if (!json_is_array(b))
		return;
	print_missing(rt, '+', a, b);
	print_missing(rt, '-', b, a);
}

/* "PREFIX<short id> <date> <subject>", wrapped. */
static void print_commit(const report_text *rt, const char *prefix, const json_t *obj)
{
	char *line = ap_xasprintf("%s%.12s %s %s", prefix,
	                          json_string_value(json_object_get(obj, "commit")),
	                          json_string_value(json_object_get(obj, "date")),
	                          json_string_value(json_object_get(obj, "subject")));

	ap_text_wrap(rt->to, line, 0, 4, rt->width);
	free(line);
}

/* "  rule        ID  STATE": the state wrapped under itself, or, when that
 * leaves it less than half the width, under the id; it starts under the id
 * when its first word does not fit after it. */
static void print_row(const report_text *rt, const char *kind, int width, const char *id,
                      const char *state)
{
	char *lead = ap_xasprintf("  %-10s  %-*s  ", kind, width, id);
	int col = ap_text_columns(lead);

	ap_text_wrap_after(rt->to, lead, state, col <= rt->width / 2 ? col : 14, rt->width);
	free(lead);
}

/* The widest id of the rule set: every id a report can name. */
static int id_width(const ap_ruleset *rs)
{
	size_t width = 0, i;

	for (i = 0; i < rs->nrules; i++)
		width = strlen(rs->rules[i].id) > width ? strlen(rs->rules[i].id) : width;
	for (i = 0; i < rs->nprobes; i++)
		width = strlen(rs->probes[i].id) > width ? strlen(rs->probes[i].id) : width;
	return (int)width;
}

static void print_initial(const report_text *rt, const json_t *initial, int width)
{
	static const char *const sections[] = {"rules", "capabilities"};
	static const char *const kinds[] = {"rule", "capability"};
	const char *id;
	json_t *state;

	print_commit(rt, "initial state at ", initial);
	for (size_t k = 0; k < 2; k++)
		json_object_foreach(json_object_get(initial, sections[k]), id, state) {
			ap_buf b = AP_BUF_INIT;

			put_state(&b, rt, state, true);
			print_row(rt, kinds[k], width, id, b.data);
			ap_buf_free(&b);
			if (json_array_size(json_object_get(state, "captures")) > 1)
				ap_manifest_print_cases(rt->to, json_object_get(state, "captures"), 14,
				                        rt->width);
		}
}

/* --- The report as it comes ---------------------------------------------- */

/* What the sink keeps between callbacks: for the text, the id column's
 * width and the last commit printed (its changes go under it); for both,
 * how many changes came. Nothing of a change outlives its callback. */
typedef struct stream {
	report_text rt;
	progress *bar; /* cleared before a piece is written: a terminal shows both */
	bool json;
	int width;
	size_t commits, changes;
	bool initial;
	char last_commit[41];
} stream;

/* A JSON value as ap_cli_print_json writes it, every line after the first
 * indented by depth levels, so that pieces written one by one make the
 * document it would have written whole (strings hold no raw newline). */
static void put_json(const json_t *v, int depth)
{
	char *text = json_dumps(v, AP_MANIFEST_JSON_FLAGS | JSON_ENCODE_ANY);
	const char *p = text, *nl;

	while ((nl = strchr(p, '\n')) != NULL) {
		fwrite(p, 1, (size_t)(nl + 1 - p), stdout);
		fprintf(stdout, "%*s", 2 * depth, "");
		p = nl + 1;
	}
	fputs(p, stdout);
	free(text);
}

static int on_start(void *ctx, const char *range, size_t commits)
{
	stream *st = ctx;
	json_t *r = json_string(range);

	st->commits = commits;
	if (st->json) {
		fputs("{\n  \"range\": ", stdout);
		put_json(r, 1);
		fprintf(stdout, ",\n  \"commits\": %zu,\n", commits);
	} else {
		json_t *safe = ap_json_for_terminal(r);
		char *head = ap_xasprintf("history of %s: %zu commit%s", json_string_value(safe),
		                          commits, commits == 1 ? "" : "s");
		ap_text_wrap(st->rt.to, head, 0, 4, st->rt.width);
		free(head);
		json_decref(safe);
	}
	json_decref(r);
	return 0;
}

static int on_initial(void *ctx, const json_t *initial)
{
	stream *st = ctx;

	clear_progress(st->bar);
	st->initial = true;
	if (st->json) {
		fputs("  \"initial\": ", stdout);
		put_json(initial, 1);
		fputs(",\n  \"changes\": [", stdout);
	} else {
		/* Subjects, captures and paths come from the repository: never
		 * raw control bytes on a terminal. */
		json_t *safe = ap_json_for_terminal(initial);
		print_initial(&st->rt, safe, st->width);
		json_decref(safe);
	}
	return 0;
}

static int on_change(void *ctx, const json_t *change)
{
	stream *st = ctx;
	const char *commit = json_string_value(json_object_get(change, "commit"));
	json_t *safe;
	ap_buf b = AP_BUF_INIT;

	clear_progress(st->bar);
	if (st->json) {
		fputs(st->changes++ > 0 ? ",\n    " : "\n    ", stdout);
		put_json(change, 2);
		return 0;
	}
	if (st->changes++ == 0)
		fputs("changes:\n", st->rt.to);
	safe = ap_json_for_terminal(change);
	if (strcmp(st->last_commit, commit) != 0)
		print_commit(&st->rt, "", safe);
	snprintf(st->last_commit, sizeof st->last_commit, "%s", commit);
	put_state(&b, &st->rt, json_object_get(safe, "before"), false);
	ap_buf_puts(&b, " -> ");
	put_state(&b, &st->rt, json_object_get(safe, "after"), false);
	print_row(&st->rt, json_string_value(json_object_get(safe, "kind")), st->width,
	          json_string_value(json_object_get(safe, "id")), b.data);
	ap_buf_free(&b);
	print_capture_changes(&st->rt, json_object_get(safe, "before"),
	                      json_object_get(safe, "after"));
	json_decref(safe);
	return 0;
}

/* The end of the report, once the walk is done. */
static void finish_stream(const stream *st, size_t evaluated)
{
	if (st->json) {
		if (!st->initial)
			fputs("  \"initial\": null,\n  \"changes\": [", stdout);
		fprintf(stdout, "%s],\n  \"evaluated\": %zu\n}\n", st->changes > 0 ? "\n  " : "",
		        evaluated);
		return;
	}
	if (st->changes == 0)
		fputs("no changes\n", st->rt.to);
	fprintf(st->rt.to, "%zu commit%s, %zu evaluated\n", st->commits,
	        st->commits == 1 ? "" : "s", evaluated);
}

/* --- The command -------------------------------------------------------- */

typedef struct history_args {
	const char *git_dir;
	const char *range;
	char **rules;
	size_t nrules;
	int no_default_rules;
	int json_out;
	const char *python, *python_version;
} history_args;

/* Takes the option at argv[*i]: 1 taken, 0 not an option of ours, -1 after
 * a usage error. */
static int take_option(history_args *a, int argc, char **argv, int *i)
{
	const char *v;
	int r;

	if ((r = ap_cli_value(&ap_cmd_history, "--git", argc, argv, i, &v)) != 0) {
		if (r > 0 && v[0] == '\0') {
			ap_cli_usage_error(&ap_cmd_history, "--git needs a repository's folder");
			return -1;
		}
		a->git_dir = v;
		return r;
	}
	if ((r = ap_cli_value(&ap_cmd_history, "--rules", argc, argv, i, &v)) != 0) {
		if (r > 0) {
			a->rules = ap_xrealloc(a->rules, (a->nrules + 1) * sizeof *a->rules);
			a->rules[a->nrules++] = (char *)v;
		}
		return r;
	}
	if ((r = ap_cli_value(&ap_cmd_history, "--format", argc, argv, i, &v)) != 0) {
		if (r > 0 && (a->json_out = ap_cli_format_is_json(&ap_cmd_history, v)) < 0)
			return -1;
		return r;
	}
	if (strcmp(argv[*i], "--no-default-rules") == 0) {
		a->no_default_rules = 1;
		return 1;
	}
	if ((r = ap_cli_python_option(&ap_cmd_history, &a->python, &a->python_version, argc, argv,
	                              i)) != 0)
		return r;
	return ap_cli_color_option(&ap_cmd_history, argv, i);
}

/* Returns -1 when parsed, else the exit status (help or usage error). */
static int parse_args(history_args *a, int argc, char **argv)
{
	int i, r, operands_only = 0;

	a->json_out = 0;
	for (i = 1; i < argc; i++) {
		ap_cli_arg_kind kind = ap_cli_arg(argv[i], &operands_only);

		if (kind == AP_ARG_END)
			continue;
		if (kind == AP_ARG_HELP)
			return ap_cli_print_help(&ap_cmd_history, stdout);
		if (kind == AP_ARG_OPTION) {
			r = take_option(a, argc, argv, &i);
			if (r < 0)
				return AP_EXIT_ERROR;
			if (r == 0)
				return ap_cli_unknown_option(&ap_cmd_history, argv[i]);
			continue;
		}
		if (a->range != NULL)
			return ap_cli_unexpected(&ap_cmd_history, argv[i]);
		a->range = argv[i];
	}
	if (a->git_dir == NULL)
		return ap_cli_usage_error(&ap_cmd_history, "--git AITER_GIT_DIR is needed");
	if (a->range == NULL)
		return ap_cli_usage_error(&ap_cmd_history, "REV_RANGE is needed");
	return -1;
}

static int history_exec(int argc, char **argv)
{
	history_args a = {0};
	ap_history_opts opts = {0};
	progress bar = {0};
	ap_ruleset *rs = NULL;
	stream st = {{stdout, false, 0}, &bar, false, 0, 0, 0, false, ""};
	ap_history_sink sink = {on_start, on_initial, on_change, &st};
	size_t evaluated;
	int status = parse_args(&a, argc, argv);

	if (status >= 0)
		goto out;
	status = ap_cli_load_rules(&rs, a.rules, a.nrules, a.no_default_rules);
	if (status != AP_EXIT_OK)
		goto out;
	opts.python = a.python;
	opts.python_version = a.python_version;
	if (isatty(STDERR_FILENO)) {
		opts.progress = draw_progress;
		opts.progress_ctx = &bar;
	}
	st.json = a.json_out;
	st.width = id_width(rs);
	if (!st.json) {
		st.rt.color = ap_cli_color(stdout);
		st.rt.width = ap_text_width(stdout);
	}
	status = ap_history_run(rs, a.git_dir, a.range, &opts, &sink, &evaluated);
	clear_progress(&bar);
	if (status < 0) {
		/* What was written stays: a report cut short, with exit 2. */
		fflush(stdout);
		status = ap_cli_fail("%s", ap_error_last());
		goto out;
	}
	finish_stream(&st, evaluated);
	status = ap_cli_stdout_done(AP_EXIT_OK);
out:
	ap_ruleset_free(rs);
	free(a.rules);
	return status;
}
