/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/manifest-read.h"
#include "core/mla-route.h"
#include "engine/report/explain.h"
#include "engine/kind.h"
#include "engine/manifest.h"
#include "engine/mla-plans.h"
#include "engine/reader.h"
#include "core/text.h"

/* A rule that collects every match may report thousands; an account shows
 * the first few and says how many there were. */
#define EVIDENCE_SHOWN 8
/* A source line is shown up to this many bytes, as the manifest keeps it. */
#define LINE_MAX_BYTES 4096

const char **ap_ruleset_ids(const ap_ruleset *rs, bool probes, bool rules, size_t *n)
{
	const char **ids = ap_xcalloc(rs->nprobes + rs->nrules + 1, sizeof *ids);
	size_t i, k = 0;

	for (i = 0; probes && i < rs->nprobes; i++)
		ids[k++] = rs->probes[i].id;
	for (i = 0; rules && i < rs->nrules; i++)
		ids[k++] = rs->rules[i].id;
	*n = k;
	return ids;
}

static json_t *loc_json(const ap_loc *loc)
{
	return json_pack("{s:o, s:i}", "file", ap_json_text(loc->file), "line", (json_int_t)loc->line);
}

static json_t *paths_json(const ap_rule *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->npaths; i++)
		json_array_append_new(a, ap_json_text(r->paths[i]));
	return a;
}

/* --- list ------------------------------------------------------------------ */

/* A requires expression as one line of YAML flow text. */
static void expr_text(ap_buf *b, const ap_expr *e)
{
	size_t i;

	switch (e->kind) {
	case AP_EXPR_REF:
		ap_buf_puts(b, e->ref);
		break;
	case AP_EXPR_ALL:
	case AP_EXPR_ANY:
		ap_buf_puts(b, e->kind == AP_EXPR_ALL ? "{all: [" : "{any: [");
		for (i = 0; i < e->nkids; i++) {
			if (i > 0)
				ap_buf_puts(b, ", ");
			expr_text(b, e->kids[i]);
		}
		ap_buf_puts(b, "]}");
		break;
	case AP_EXPR_NOT:
		ap_buf_puts(b, "{not: ");
		expr_text(b, e->kids[0]);
		ap_buf_putc(b, '}');
		break;
	case AP_EXPR_CAPTURE:
		ap_buf_printf(b, "{capture: %s, name: %s, %s: ", e->ref, e->capture,
		              ap_cmp_op_key(e->op));
		if (e->numeric)
			ap_buf_printf(b, "%lld}", e->num);
		else
			ap_buf_printf(b, "\"%s\"}", e->text);
		break;
	}
}

static char *requires_text(const ap_expr *e)
{
	ap_buf b = AP_BUF_INIT;

	expr_text(&b, e);
	return ap_buf_detach(&b);
}

static json_t *rule_entry(const ap_rule *r)
{
	json_t *j = json_pack("{s:o, s:o, s:s, s:o, s:o}", "id", ap_json_text(r->id), "description",
	                      ap_json_text(r->description), "kind", r->kind->key, "files",
	                      paths_json(r), "looks_for", ap_json_text(r->spec));

	json_object_update_new(j, loc_json(&r->loc));
	return j;
}

static json_t *probe_entry(const ap_probe *p, bool definition)
{
	json_t *j = json_pack("{s:o, s:o}", "id", ap_json_text(p->id), "description",
	                      ap_json_text(p->description));

	if (definition) {
		char *req = requires_text(p->requires);
		json_object_set_new(j, "requires", ap_json_text(req));
		json_object_set_new(j, "launch", json_boolean(p->launch != NULL));
		free(req);
	} else {
		json_object_set_new(j, "fallback", ap_json_text(p->fallback));
	}
	json_object_update_new(j, loc_json(&p->loc));
	return j;
}

json_t *ap_list_build(const ap_ruleset *rs, unsigned what)
{
	json_t *doc = json_object();
	size_t i;

	if (what & AP_LIST_RULES) {
		json_t *a = json_array();
		for (i = 0; i < rs->nrules; i++)
			json_array_append_new(a, rule_entry(&rs->rules[i]));
		json_object_set_new(doc, "rules", a);
	}
	if (what & AP_LIST_PROBES) {
		json_t *a = json_array();
		for (i = 0; i < rs->nprobes; i++)
			json_array_append_new(a, probe_entry(&rs->probes[i], true));
		json_object_set_new(doc, "probes", a);
	}
	if (what & AP_LIST_CAPABILITIES) {
		json_t *a = json_array();
		for (i = 0; i < rs->nprobes; i++)
			json_array_append_new(a, probe_entry(&rs->probes[i], false));
		json_object_set_new(doc, "capabilities", a);
	}
	return doc;
}

/* Writes s (from a pack or a tree) escaped for a terminal and wrapped. */
static void wrap_safe(FILE *to, const char *s, int col, int indent, int width)
{
	char *safe = ap_xnonnull(ap_terminal_text(s, strlen(s)));

	ap_text_wrap(to, safe, col, indent, width);
	free(safe);
}

/* "  LABEL: text" wrapped under the label's indent plus four. */
static void field(FILE *to, int indent, const char *label, const char *text, int width)
{
	char *line;

	if (text == NULL)
		return;
	line = ap_xasprintf("%s%s%s", label ? label : "", label ? ": " : "", text);
	fprintf(to, "%*s", indent, "");
	wrap_safe(to, line, indent, indent + 4, width);
	free(line);
}

static const char *str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static char *where_text(const json_t *entry)
{
	return ap_xasprintf("%s:%lld", str(entry, "file"),
	                    (long long)json_integer_value(json_object_get(entry, "line")));
}

/* A description's first sentence: up to the first ". " that does not end
 * "e.g." or "i.e." (the rules' descriptions go on to say what they replace). */
static char *first_sentence(const char *desc)
{
	const char *p;

	if (desc == NULL)
		return ap_xstrdup("(no description)");
	for (p = strstr(desc, ". "); p != NULL; p = strstr(p + 1, ". "))
		if (p - desc < 3 || (strncmp(p - 3, "e.g", 3) != 0 && strncmp(p - 3, "i.e", 3) != 0))
			return ap_xstrndup(desc, (size_t)(p - desc) + 1);
	return ap_xstrdup(desc);
}

/* One section: each id with the pack line defining it, and its description
 * and the rest indented below, so that long ids fit a narrow terminal; the
 * JSON has the whole description and what each rule looks for. */
static void list_section(FILE *to, const char *name, const json_t *a, bool color, int width)
{
	size_t i;
	json_t *e;

	fprintf(to, "%s%s (%zu):%s\n", ap_text_paint(color, AP_TEXT_BOLD), name, json_array_size(a),
	        ap_text_paint(color, AP_TEXT_RESET));
	json_array_foreach(a, i, e) {
		char *summary = first_sentence(str(e, "description"));
		char *where = where_text(e);
		char *id = ap_xnonnull(ap_terminal_text(str(e, "id"), strlen(str(e, "id"))));
		char *safe_where = ap_xnonnull(ap_terminal_text(where, strlen(where)));
		/* Painted after escaping: the colour is ours, not the pack's. */
		char *head = ap_xasprintf("%s%s%s (%s)", ap_text_paint(color, AP_TEXT_BOLD), id,
		                          ap_text_paint(color, AP_TEXT_RESET), safe_where);

		fputs("  ", to);
		ap_text_wrap(to, head, 2, 6, width);
		free(id);
		free(safe_where);
		field(to, 6, NULL, summary, width);
		field(to, 6, "requires", str(e, "requires"), width);
		field(to, 6, "fallback", str(e, "fallback"), width);
		free(summary);
		free(head);
		free(where);
	}
}

void ap_list_print_text(const json_t *list, FILE *to, bool color, int width)
{
	static const char *const sections[] = {"capabilities", "probes", "rules"};
	bool first = true;

	for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
		const json_t *a = json_object_get(list, sections[i]);
		if (a == NULL)
			continue;
		if (!first)
			fputc('\n', to);
		list_section(to, sections[i], a, color, width);
		first = false;
	}
}

/* --- The plan and the fallback ---------------------------------------------- */

char *ap_explain_consequence(const ap_probe *p, const json_t *manifest)
{
	const json_t *row = ap_mla_plan_of(p, manifest);
	char *plan = row != NULL ? ap_mla_plan_text(row) : NULL, *out;

	if (plan == NULL)
		return p->fallback != NULL ? ap_xstrdup(p->fallback) : NULL;
	if (p->fallback == NULL)
		return plan;
	out = ap_xasprintf("%s; %s", plan, p->fallback);
	free(plan);
	return out;
}

/* --- explain ---------------------------------------------------------------- */

typedef enum { HOLDS_NO, HOLDS_YES, HOLDS_UNKNOWN } holds;

static const char *const holds_names[] = {"no", "yes", "unknown"};

typedef struct account {
	const ap_ruleset *rs;
	const json_t *manifest;
	ap_reader *reader; /* NULL when the tree cannot be read */
} account;

static void account_open(account *a, const ap_ruleset *rs, const json_t *manifest)
{
	const json_t *aiter = json_object_get(manifest, "aiter");
	const char *root = str(aiter, "root");

	a->rs = rs;
	a->manifest = manifest;
	a->reader = NULL;
	if (root != NULL &&
	    ap_reader_new_fs(&a->reader, root, str(aiter, "meta"), AP_READER_DEFAULT_MAX_BYTES) < 0)
		a->reader = NULL;
}

/* Line `line` (1-based) of path, read beneath the root; NULL when it cannot be. */
static char *tree_line(account *a, const char *path, long long line)
{
	const ap_file *f;
	const char *p, *end, *eol;
	long long n = 1;

	if (a->reader == NULL || line < 1 || ap_path_refusal(path) != NULL)
		return NULL;
	f = ap_reader_get(a->reader, path);
	if (f->status != AP_FILE_OK)
		return NULL;
	p = f->data;
	end = f->data + f->len;
	while (n < line) {
		p = memchr(p, '\n', (size_t)(end - p));
		if (p == NULL)
			return NULL;
		p++;
		n++;
	}
	eol = memchr(p, '\n', (size_t)(end - p));
	if (eol == NULL)
		eol = end;
	if (eol > p && eol[-1] == '\r')
		eol--;
	return ap_xstrndup(p, (size_t)(eol - p) > LINE_MAX_BYTES ? LINE_MAX_BYTES : (size_t)(eol - p));
}

static holds rule_holds(const json_t *res)
{
	const char *status = str(res, "status");

	if (status != NULL && strcmp(status, "matched") == 0)
		return HOLDS_YES;
	if (status != NULL && strcmp(status, "unmatched") == 0)
		return HOLDS_NO;
	return HOLDS_UNKNOWN;
}

/* One match as evidence: where, and the line as the tree has it now. */
static json_t *evidence_json(account *a, const char *file, const json_t *match)
{
	long long line = json_integer_value(json_object_get(match, "line"));
	char *text = file != NULL ? tree_line(a, file, line) : NULL;
	json_t *e = json_pack("{s:o, s:I}", "file", ap_json_text(file), "line", (json_int_t)line);

	if (text != NULL) {
		json_object_set_new(e, "text", ap_json_text(text));
		json_object_set_new(e, "from", json_string("tree"));
	} else {
		json_object_set(e, "text", json_object_get(match, "text"));
		json_object_set_new(e, "from", json_string("manifest"));
	}
	free(text);
	if (json_object_size(json_object_get(match, "captures")) > 0)
		json_object_set(e, "captures", json_object_get(match, "captures"));
	return e;
}

/* The rule's part of a leaf: its status, what it looked for, its evidence. */
static void rule_fields(account *a, json_t *node, const ap_rule *r, const json_t *res)
{
	const json_t *matches = json_object_get(res, "matches");
	const char *file = str(res, "file");
	json_t *ev = json_array();
	size_t i;
	json_t *m;

	json_object_set_new(node, "rule", ap_json_text(r->id));
	json_object_set_new(node, "status",
	                    ap_json_text(res != NULL ? str(res, "status") : "not in the manifest"));
	json_object_set_new(node, "kind", json_string(r->kind->key));
	json_object_set_new(node, "looks_for", ap_json_text(r->spec));
	json_object_set_new(node, "files", paths_json(r));
	json_object_set_new(node, "file", ap_json_text(file));
	if (str(res, "reason") != NULL)
		json_object_set(node, "reason", json_object_get(res, "reason"));
	json_array_foreach(matches, i, m) {
		if (i >= EVIDENCE_SHOWN)
			break;
		json_array_append_new(ev, evidence_json(a, file, m));
	}
	json_object_set_new(node, "evidence", ev);
	json_object_set_new(node, "matches", json_integer((json_int_t)json_array_size(matches)));
	json_object_set_new(node, "defined_at", loc_json(&r->loc));
}

static const json_t *manifest_rule(const account *a, const char *id)
{
	return json_object_get(json_object_get(a->manifest, "rules"), id);
}

static const json_t *manifest_cap(const account *a, const char *id)
{
	return json_object_get(json_object_get(a->manifest, "capabilities"), id);
}

static holds cap_holds(const json_t *cap)
{
	const char *verdict = ap_manifest_cap_verdict(cap);

	if (cap == NULL || strcmp(verdict, "unknown") == 0)
		return HOLDS_UNKNOWN;
	return strcmp(verdict, "supported") == 0 ? HOLDS_YES : HOLDS_NO;
}

static json_t *node_json(account *a, const ap_expr *e, holds *value);

static json_t *capture_node(account *a, const ap_expr *e, holds *value)
{
	const ap_rule *r = &a->rs->rules[e->ref_index];
	const json_t *res = manifest_rule(a, r->id);
	json_t *node = json_object(), *seen = json_array();
	size_t i;
	json_t *m;

	*value = rule_holds(res);
	if (*value == HOLDS_YES)
		*value = HOLDS_NO;
	json_array_foreach(json_object_get(res, "matches"), i, m) {
		const char *v = str(json_object_get(m, "captures"), e->capture);
		if (v == NULL)
			continue;
		if (json_array_size(seen) < EVIDENCE_SHOWN)
			json_array_append_new(seen, ap_json_text(v));
		if (rule_holds(res) == HOLDS_YES && ap_expr_capture_holds(e, v))
			*value = HOLDS_YES;
	}
	json_object_set_new(node, "capture", ap_json_text(e->capture));
	json_object_set_new(node, "op", json_string(ap_cmp_op_name(e->op)));
	json_object_set_new(node, "value", e->numeric ? json_integer(e->num) : ap_json_text(e->text));
	json_object_set_new(node, "seen", seen);
	rule_fields(a, node, r, res);
	return node;
}

static json_t *list_node(account *a, const ap_expr *e, holds *value)
{
	holds decisive = e->kind == AP_EXPR_ALL ? HOLDS_NO : HOLDS_YES;
	json_t *kids = json_array();

	*value = e->kind == AP_EXPR_ALL ? HOLDS_YES : HOLDS_NO;
	for (size_t i = 0; i < e->nkids; i++) {
		holds v;
		json_array_append_new(kids, node_json(a, e->kids[i], &v));
		if (v == decisive)
			*value = decisive;
		else if (v == HOLDS_UNKNOWN && *value != decisive)
			*value = HOLDS_UNKNOWN;
	}
	return json_pack("{s:o}", e->kind == AP_EXPR_ALL ? "all" : "any", kids);
}

static json_t *node_json(account *a, const ap_expr *e, holds *value)
{
	json_t *node;

	switch (e->kind) {
	case AP_EXPR_CAPTURE:
		node = capture_node(a, e, value);
		break;
	case AP_EXPR_ALL:
	case AP_EXPR_ANY:
		node = list_node(a, e, value);
		break;
	case AP_EXPR_NOT: {
		holds v;
		node = json_pack("{s:o}", "not", node_json(a, e->kids[0], &v));
		*value = v == HOLDS_UNKNOWN ? HOLDS_UNKNOWN : v == HOLDS_YES ? HOLDS_NO : HOLDS_YES;
		break;
	}
	case AP_EXPR_REF:
	default:
		if (e->ref_probe) {
			const json_t *cap = manifest_cap(a, e->ref);
			node = json_pack("{s:o, s:b, s:o}", "capability", ap_json_text(e->ref),
			                 "supported", json_is_true(json_object_get(cap, "supported")),
			                 "reason", ap_json_text(str(cap, "reason")));
			*value = cap_holds(cap);
		} else {
			const json_t *res = manifest_rule(a, e->ref);
			node = json_object();
			rule_fields(a, node, &a->rs->rules[e->ref_index], res);
			*value = rule_holds(res);
		}
		break;
	}
	json_object_set_new(node, "holds", json_string(holds_names[*value]));
	return node;
}

/* The manifest's entry for p; NULL with the message when it has none. */
static const json_t *capability_of(const ap_probe *p, const json_t *manifest)
{
	const json_t *cap = json_object_get(json_object_get(manifest, "capabilities"), p->id);

	if (cap == NULL)
		ap_error_set("the manifest has no capability '%s' (it was scanned without the probe "
		             "that defines it)", p->id);
	return cap;
}

int ap_explain_capability(const ap_ruleset *rs, const ap_probe *p, const json_t *manifest,
                          json_t **out)
{
	const json_t *cap = capability_of(p, manifest);
	const json_t *row;
	account a;
	json_t *doc;
	holds v;
	char *consequence;

	if (cap == NULL)
		return AP_EINPUT;
	account_open(&a, rs, manifest);
	doc = json_pack("{s:o, s:o, s:b, s:s, s:o, s:o}", "capability", ap_json_text(p->id),
	                "description", ap_json_text(p->description), "supported",
	                json_is_true(json_object_get(cap, "supported")), "verdict",
	                ap_manifest_cap_verdict(cap), "reason", ap_json_text(str(cap, "reason")),
	                "defined_at", loc_json(&p->loc));
	json_object_set_new(doc, "requires", node_json(&a, p->requires, &v));
	if (json_object_get(cap, "launch") != NULL)
		json_object_set(doc, "launch", json_object_get(cap, "launch"));
	if ((row = ap_mla_plan_of(p, manifest)) != NULL)
		json_object_set(doc, "plan", (json_t *)row);
	json_object_set_new(doc, "fallback", ap_json_text(p->fallback));
	consequence = ap_explain_consequence(p, manifest);
	json_object_set_new(doc, "consequence", ap_json_text(consequence));
	free(consequence);
	ap_reader_free(a.reader);
	*out = doc;
	return AP_OK;
}

int ap_explain_heads(const ap_probe *p, const json_t *manifest, int heads, json_t **out)
{
	const json_t *cap = capability_of(p, manifest), *row;
	ap_mla_plan_row plan;
	json_t *doc;

	if (cap == NULL || (row = ap_manifest_mla_plan_for(manifest, heads)) == NULL)
		return AP_EINPUT;
	ap_manifest_mla_plan_read(row, &plan);
	doc = json_pack("{s:o, s:b, s:s, s:i, s:i, s:i, s:s, s:b, s:o}", "capability",
	                ap_json_text(p->id), "supported",
	                json_is_true(json_object_get(cap, "supported")), "verdict",
	                ap_manifest_cap_verdict(cap), "capability_heads", p->launch->heads, "heads",
	                heads, "launch_heads", plan.launch_heads, "mode",
	                ap_pad_mode_name(plan.mode), "verified", plan.verified, "kernel",
	                plan.kernel != NULL ? json_string(plan.kernel) : json_null());
	/* The pack's fallback speaks of the capability's own head count. */
	json_object_set_new(doc, "fallback", heads == p->launch->heads && plan.mode != AP_PAD_NONE
	                                             ? ap_json_text(p->fallback)
	                                             : json_null());
	json_object_set_new(doc, "cost",
	                    json_pack("{s:f, s:i, s:i}", "work_ratio",
	                              (double)plan.launch_heads / heads, "padded_heads",
	                              plan.launch_heads - heads, "head_tiles",
	                              ap_mla_head_tiles(plan.launch_heads)));
	*out = doc;
	return AP_OK;
}

/* Whether e names rule index `rule` anywhere. */
static bool expr_uses(const ap_expr *e, size_t rule)
{
	if ((e->kind == AP_EXPR_REF || e->kind == AP_EXPR_CAPTURE) && !e->ref_probe)
		return e->ref_index == rule;
	for (size_t i = 0; i < e->nkids; i++)
		if (expr_uses(e->kids[i], rule))
			return true;
	return false;
}

int ap_explain_rule(const ap_ruleset *rs, const ap_rule *r, const json_t *manifest, json_t **out)
{
	const json_t *res = json_object_get(json_object_get(manifest, "rules"), r->id);
	json_t *doc, *used = json_array();
	account a;
	size_t i, index = (size_t)(r - rs->rules);

	if (res == NULL) {
		json_decref(used);
		ap_error_set("the manifest has no rule '%s' (it was scanned without the pack that "
		             "defines it)", r->id);
		return AP_EINPUT;
	}
	account_open(&a, rs, manifest);
	doc = json_pack("{s:o}", "description", ap_json_text(r->description));
	rule_fields(&a, doc, r, res);
	for (i = 0; i < rs->nprobes; i++) {
		const json_t *cap = json_object_get(json_object_get(manifest, "capabilities"),
		                                    rs->probes[i].id);
		if (expr_uses(rs->probes[i].requires, index))
			json_array_append_new(used, json_pack("{s:o, s:b, s:s}", "capability",
			                                      ap_json_text(rs->probes[i].id), "supported",
			                                      json_is_true(json_object_get(cap, "supported")),
			                                      "verdict", ap_manifest_cap_verdict(cap)));
	}
	json_object_set_new(doc, "required_by", used);
	ap_reader_free(a.reader);
	*out = doc;
	return AP_OK;
}

/* --- explain as text ------------------------------------------------------ */

typedef struct painter {
	FILE *to;
	bool color;
	int width;
} painter;

/* "INDENT HEAD: WORD" with the verdict word painted; a head too long for
 * the width is wrapped, with the word on a line of its own below. */
static void head_line(const painter *pt, int indent, const char *head, const char *word)
{
	char *safe_head = ap_xnonnull(ap_terminal_text(head, strlen(head)));
	char *safe_word = ap_xnonnull(ap_terminal_text(word, strlen(word)));
	int cols = indent + (int)strlen(safe_head) + 2 + (int)strlen(safe_word);

	if (cols > pt->width) {
		char *text = ap_xasprintf("%s:", safe_head);
		fprintf(pt->to, "%*s", indent, "");
		ap_text_wrap(pt->to, text, indent, indent + 4, pt->width);
		fprintf(pt->to, "%*s", indent + 4, "");
		free(text);
	} else {
		fprintf(pt->to, "%*s%s: ", indent, "", safe_head);
	}
	if (pt->color)
		fprintf(pt->to, "%s%s%s\n", ap_text_hue(word), safe_word, AP_TEXT_RESET);
	else
		fprintf(pt->to, "%s\n", safe_word);
	free(safe_head);
	free(safe_word);
}

/* What the rule looked for (unless a capture leaf, which repeats a rule
 * shown beside it), where it is defined, and its evidence. */
static void print_rule_part(const painter *pt, int indent, const json_t *node, bool looked)
{
	const json_t *files = json_object_get(node, "files"), *ev = json_object_get(node, "evidence");
	json_int_t matches = json_integer_value(json_object_get(node, "matches"));
	ap_buf look = AP_BUF_INIT;
	size_t i;
	json_t *e;
	char *where = where_text(json_object_get(node, "defined_at"));

	ap_buf_printf(&look, "%s", str(node, "looks_for"));
	json_array_foreach(files, i, e)
		ap_buf_printf(&look, "%s%s", i == 0 ? " in " : " or ", json_string_value(e));
	if (looked) {
		field(pt->to, indent, "looked for", look.data, pt->width);
		field(pt->to, indent, "defined at", where, pt->width);
	}
	field(pt->to, indent, "reason", str(node, "reason"), pt->width);
	json_array_foreach(ev, i, e) {
		const char *text = str(e, "text");
		char *at = ap_xasprintf("%s:%lld", str(e, "file"),
		                        (long long)json_integer_value(json_object_get(e, "line")));
		field(pt->to, indent, at, text != NULL ? text + strspn(text, " \t") : "", pt->width);
		free(at);
	}
	if (matches > (json_int_t)json_array_size(ev)) {
		char *more = ap_xasprintf("... and %lld more matches",
		                          (long long)(matches - (json_int_t)json_array_size(ev)));
		field(pt->to, indent, NULL, more, pt->width);
		free(more);
	}
	free(where);
	ap_buf_free(&look);
}

static void print_node(const painter *pt, int indent, const json_t *node)
{
	const char *value = str(node, "holds");
	const json_t *kids;
	size_t i;
	json_t *k;
	char *head;

	if ((kids = json_object_get(node, "all")) != NULL ||
	    (kids = json_object_get(node, "any")) != NULL) {
		head_line(pt, indent, json_object_get(node, "all") ? "all" : "any", value);
		json_array_foreach(kids, i, k)
			print_node(pt, indent + 2, k);
	} else if ((k = json_object_get(node, "not")) != NULL) {
		head_line(pt, indent, "not", value);
		print_node(pt, indent + 2, k);
	} else if (json_object_get(node, "capability") != NULL) {
		head = ap_xasprintf("capability %s", str(node, "capability"));
		head_line(pt, indent, head, value);
		field(pt->to, indent + 2, "reason", str(node, "reason"), pt->width);
		free(head);
	} else if (json_object_get(node, "capture") != NULL) {
		const json_t *want = json_object_get(node, "value");
		ap_buf seen = AP_BUF_INIT;
		char *rhs = json_is_integer(want)
		                    ? ap_xasprintf("%lld", (long long)json_integer_value(want))
		                    : ap_xstrdup(json_string_value(want));
		head = ap_xasprintf("capture %s of rule %s %s %s", str(node, "capture"),
		                    str(node, "rule"), str(node, "op"), rhs);
		head_line(pt, indent, head, value);
		json_array_foreach(json_object_get(node, "seen"), i, k)
			ap_buf_printf(&seen, "%s%s", i > 0 ? ", " : "", json_string_value(k));
		field(pt->to, indent + 2, "rule status", str(node, "status"), pt->width);
		field(pt->to, indent + 2, "captured", seen.len > 0 ? seen.data : "nothing",
		      pt->width);
		print_rule_part(pt, indent + 2, node, false);
		ap_buf_free(&seen);
		free(rhs);
		free(head);
	} else {
		head = ap_xasprintf("rule %s", str(node, "rule"));
		head_line(pt, indent, head, str(node, "status"));
		print_rule_part(pt, indent + 2, node, true);
		free(head);
	}
}

void ap_explain_print_text(const json_t *doc, FILE *to, bool color, int width)
{
	painter pt = {to, color, width};
	const json_t *launch = json_object_get(doc, "launch"), *plan = json_object_get(doc, "plan");
	const json_t *used = json_object_get(doc, "required_by");
	const char *desc = str(doc, "description");

	if (json_object_get(doc, "capability") == NULL) {
		size_t i;
		json_t *u;
		char *head = ap_xasprintf("rule %s", str(doc, "rule"));
		head_line(&pt, 0, head, str(doc, "status"));
		field(to, 2, NULL, desc, width);
		print_rule_part(&pt, 2, doc, true);
		json_array_foreach(used, i, u) {
			char *cap = ap_xasprintf("required by %s", str(u, "capability"));
			head_line(&pt, 2, cap, str(u, "verdict"));
			free(cap);
		}
		free(head);
		return;
	}
	head_line(&pt, 0, str(doc, "capability"), str(doc, "verdict"));
	field(to, 2, NULL, desc, width);
	{
		char *where = where_text(json_object_get(doc, "defined_at"));
		field(to, 2, "defined at", where, width);
		free(where);
	}
	field(to, 2, "reason", str(doc, "reason"), width);
	fputs("requires:\n", to);
	print_node(&pt, 2, json_object_get(doc, "requires"));
	if (launch != NULL) {
		char *line = ap_launch_text(launch);
		field(to, 0, "launch", line, width);
		free(line);
	}
	if (plan != NULL) {
		char *row = ap_mla_plan_text(plan);
		field(to, 0, "plan", row, width);
		free(row);
	}
	field(to, 0, "when unsupported", str(doc, "fallback"), width);
}

/* How mode runs heads real heads as launch of them, for people. */
static char *mode_text(const char *mode, int heads, int launch)
{
	if (strcmp(mode, "repeat-interleave") == 0)
		return ap_xasprintf("launch %d (repeat-interleave: each query head repeated %d times, "
		                    "the output read strided)", launch, launch / heads);
	if (strcmp(mode, "tile-slice") == 0)
		return ap_xasprintf("launch %d (tile-slice: the query heads tiled up to %d, the first "
		                    "%d outputs kept)", launch, launch, heads);
	return ap_xasprintf("launch %d (native: passed through, no padding)", launch);
}

void ap_explain_heads_print_text(const json_t *doc, FILE *to, bool color, int width)
{
	painter pt = {to, color, width};
	const json_t *cost = json_object_get(doc, "cost");
	const char *kernel = str(doc, "kernel");
	int heads = (int)json_integer_value(json_object_get(doc, "heads"));
	int launch = (int)json_integer_value(json_object_get(doc, "launch_heads"));
	int tiles = (int)json_integer_value(json_object_get(cost, "head_tiles"));
	int own = (int)json_integer_value(json_object_get(doc, "capability_heads"));
	/* The verdict is the capability's, about its own head count. */
	char *head = own == heads ? ap_xasprintf("%s at %d heads per rank", str(doc, "capability"),
	                                         heads)
	                          : ap_xasprintf("%s (%d heads) at %d heads per rank",
	                                         str(doc, "capability"), own, heads);
	char *routing = mode_text(str(doc, "mode"), heads, launch);
	char *verified = !json_is_true(json_object_get(doc, "verified"))
	                         ? ap_xasprintf("no (no launch of %d heads passed on this node)",
	                                        heads)
	                 : kernel == NULL ? ap_xstrdup("yes, by a launch on this node")
	                 : ap_xasprintf("yes, by a launch on this node of %s",
	                                strcmp(kernel, "aiter") == 0 ? "AITER's kernel"
	                                                             : "the reference kernel");
	char *price = launch == heads
	                      ? ap_xstrdup("none (no padded heads)")
	                      : ap_xasprintf("%d/%d = %.2fx the heads' work (%d padded heads "
	                                     "computed and dropped), in the same %d stage-1 block%s "
	                                     "per KV range as %d heads",
	                                     launch, heads,
	                                     json_real_value(json_object_get(cost, "work_ratio")),
	                                     launch - heads, tiles, tiles == 1 ? "" : "s", heads);

	head_line(&pt, 0, head, str(doc, "verdict"));
	field(to, 2, "routing", routing, width);
	field(to, 2, "verified", verified, width);
	field(to, 2, "fallback", str(doc, "fallback"), width);
	field(to, 2, "cost", price, width);
	free(price);
	free(verified);
	free(routing);
	free(head);
}
