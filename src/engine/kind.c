/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/kind.h"

/* The kinds, one line each (kinds/python-def.c defines ap_kind_python_def,
 * and so on). The loader lists their keys in this order in its messages. */
#define KINDS(X) \
	X(literal) \
	X(token) \
	X(regex) \
	X(python_def) \
	X(python_export) \
	X(python_string) \
	X(python_bound) \
	X(csv) \
	X(glob) \
	X(version) \
	X(pybind_enum) \
	X(python_attr) \
	/* the end of the list: a kind added last is one line too */

#define KIND_DECLARE(name) extern const ap_kind ap_kind_##name;
#define KIND_ENTRY(name) &ap_kind_##name,
KINDS(KIND_DECLARE)
const ap_kind *const ap_kinds[] = {KINDS(KIND_ENTRY)};
const size_t ap_nkinds = sizeof ap_kinds / sizeof ap_kinds[0];

const ap_kind *ap_kind_find(const char *key)
{
	for (size_t i = 0; i < ap_nkinds; i++)
		if (strcmp(ap_kinds[i]->key, key) == 0)
			return ap_kinds[i];
	return NULL;
}

size_t ap_kind_noptions(const ap_kind *k)
{
	size_t n = 0;

	while (k->options != NULL && k->options[n] != NULL)
		n++;
	return n;
}

const char *ap_rule_status_name(ap_rule_status s)
{
	switch (s) {
	case AP_RULE_MATCHED:
		return "matched";
	case AP_RULE_UNMATCHED:
		return "unmatched";
	case AP_RULE_MISSING:
		return "missing";
	case AP_RULE_ERROR:
		return "error";
	case AP_RULE_UNKNOWN:
		return "unknown";
	}
	return "error";
}

/* --- Text kinds: the pattern is the key's value. --------------------------- */

/* The language a rule's text is read as: its own, or its files' when they
 * all have the same; AUTO when that is not known before the files are. */
static ap_lang rule_language(const ap_kind_rule *rule)
{
	ap_lang lang = rule->lang;

	for (size_t i = 0; lang == AP_LANG_AUTO && i < rule->npaths; i++) {
		ap_lang this = ap_lang_for_path(rule->paths[i]);
		if (i > 0 && this != ap_lang_for_path(rule->paths[0]))
			return AP_LANG_AUTO;
		if (i + 1 == rule->npaths)
			lang = this;
	}
	return lang;
}

static int text_load(const ap_kind *k, const ap_kind_load *l, void **state)
{
	const ap_text_ops *ops = k->text;
	const ap_ynode *pattern = l->arg;
	size_t off = 0;
	unsigned col;
	char *text;
	char *why;
	int rc;

	*state = NULL;
	rc = ap_y_string(l->pack, pattern, k->key, &text);
	if (rc < 0)
		return rc;
	if (text[0] == '\0') {
		free(text);
		return ap_y_fail(l->pack, pattern, "'%s' must not be empty", k->key);
	}
	if (ops->needs_whitespace && l->rule->ws == AP_WS_STRIP) {
		free(text);
		return ap_y_fail(l->pack, l->normalize->val,
		                 "'%s' cannot be used with 'normalize: strip-whitespace': tokens are "
		                 "told apart by the whitespace between them",
		                 k->key);
	}
	rc = ops->compile(state, text, l->rule->ws, &off);
	free(text);
	if (rc == 0 && ops->refusal != NULL) {
		const char *never = ops->refusal(*state, rule_language(l->rule));
		if (never != NULL) {
			ap_error_set("%s", never);
			rc = AP_EINPUT;
		}
	}
	if (rc == 0)
		return 0;
	ops->free(*state);
	*state = NULL;
	why = ap_xstrdup(ap_error_last());
	if (rc != AP_EINPUT)
		ap_y_fail(l->pack, pattern, "cannot compile the %s: %s", ops->what, why);
	else if (!ops->offset_errors)
		rc = ap_y_fail(l->pack, pattern, "invalid %s: %s", ops->what, why);
	else if ((col = ap_y_scalar_byte_col(pattern, off)) != 0)
		rc = ap_y_fail_lc(l->pack, pattern->line, col, "invalid %s: %s", ops->what, why);
	else
		rc = ap_y_fail(l->pack, pattern, "invalid %s at offset %zu: %s", ops->what, off, why);
	free(why);
	return rc;
}

static void text_run(const ap_kind *k, const void *state, ap_kind_run *run)
{
	const ap_kind_rule *rule = run->rule;
	ap_rule_result *res = run->res;
	ap_lang lang = rule->lang == AP_LANG_AUTO ? ap_lang_for_path(run->file->path) : rule->lang;
	const ap_text *text = ap_reader_text(run->reader, run->file, lang, rule->ws);

	if (text == NULL || k->text->run(state, text, rule->collect, &res->matches) < 0) {
		ap_rule_set_error(res, "%s", ap_error_last());
		return;
	}
	res->status = res->matches.n > 0 ? AP_RULE_MATCHED : AP_RULE_UNMATCHED;
}

int ap_kind_load_rule(const ap_kind *k, const ap_kind_load *l, void **state)
{
	return k->text != NULL ? text_load(k, l, state) : k->load(l, state);
}

void ap_kind_run_rule(const ap_kind *k, const void *state, ap_kind_run *run)
{
	if (k->text != NULL)
		text_run(k, state, run);
	else
		k->run(state, run);
}

void ap_kind_free_state(const ap_kind *k, void *state)
{
	if (k == NULL || state == NULL)
		return;
	if (k->text != NULL)
		k->text->free(state);
	else
		k->free(state);
}

/* --- A text kind on its own ------------------------------------------------ */

struct ap_matcher {
	const ap_text_ops *ops;
	void *state;
};

int ap_matcher_new(ap_matcher **out, const char *kind, const char *pattern, ap_ws ws,
                   size_t *err_offset)
{
	const ap_kind *k = ap_kind_find(kind);
	size_t off = 0;
	void *state = NULL;
	int rc;

	*out = NULL;
	if (k == NULL || k->text == NULL) {
		ap_error_set("'%s' is not a text kind", kind);
		return AP_EINTERNAL;
	}
	rc = k->text->compile(&state, pattern, ws, &off);
	if (err_offset != NULL)
		*err_offset = off;
	if (rc < 0) {
		k->text->free(state);
		return rc;
	}
	*out = ap_xcalloc(1, sizeof **out);
	(*out)->ops = k->text;
	(*out)->state = state;
	return 0;
}

int ap_matcher_run(const ap_matcher *m, const ap_text *t, ap_collect collect, ap_match_list *out)
{
	return m->ops->run(m->state, t, collect, out);
}

void ap_matcher_free(ap_matcher *m)
{
	if (m == NULL)
		return;
	m->ops->free(m->state);
	free(m);
}
