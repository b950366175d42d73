/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"
#include "core/mla-route.h"
#include "engine/kind.h"
#include "engine/reader.h"
#include "engine/rules.h"
#include "engine/lang/yaml-node.h"

/* Limits that keep a hostile or broken pack from costing more than a few tens
 * of megabytes or recursing deeply: real packs are a few kilobytes. */
#define PACK_MAX_BYTES ((size_t)4 << 20)
#define ID_MAX_LEN 128

/* --- The rule set, with a private id index. ------------------------------ */

/* One namespace for rule and probe ids: a probe may require either. The
 * index maps an id to 2 * index + (1 for a probe). */
typedef struct id_slot {
	bool probe;
	size_t index;
} id_slot;

typedef struct ruleset_impl {
	ap_ruleset pub; /* first, so the public pointer is the private one */
	ap_map *ids;
} ruleset_impl;

static ruleset_impl *impl_of(ap_ruleset *rs)
{
	return (ruleset_impl *)((char *)rs - offsetof(ruleset_impl, pub));
}

static const ap_map *ids_of(const ap_ruleset *rs)
{
	return ((const ruleset_impl *)((const char *)rs - offsetof(ruleset_impl, pub)))->ids;
}

/* Where id is defined: *out filled and true, or false. */
static bool id_lookup(const ap_ruleset *rs, const char *id, id_slot *out)
{
	size_t v = ap_map_get_str(ids_of(rs), id);

	if (v == AP_MAP_ABSENT)
		return false;
	out->probe = v & 1;
	out->index = v >> 1;
	return true;
}

static void id_index_put(ruleset_impl *ri, const char *id, bool probe, size_t index)
{
	ap_xok(ap_map_put_str(ri->ids, id, 2 * index + probe));
}

/* After probes were reordered or a failed file rolled back. */
static void id_index_rebuild(ruleset_impl *ri)
{
	const ap_ruleset *rs = &ri->pub;

	ap_map_clear(ri->ids);
	for (size_t i = 0; i < rs->nrules; i++)
		id_index_put(ri, rs->rules[i].id, false, i);
	for (size_t i = 0; i < rs->nprobes; i++)
		id_index_put(ri, rs->probes[i].id, true, i);
}

int ap_ruleset_new(ap_ruleset **out)
{
	ruleset_impl *ri = ap_xcalloc(1, sizeof *ri);
	ri->ids = ap_xnonnull(ap_map_new());
	*out = &ri->pub;
	return 0;
}

static void rule_clear(ap_rule *r)
{
	free(r->id);
	free(r->description);
	for (size_t i = 0; i < r->npaths; i++)
		free(r->paths[i]);
	free(r->paths);
	free(r->pattern);
	free(r->spec);
	ap_kind_free_state(r->kind, r->state);
	memset(r, 0, sizeof *r);
}

static void expr_free(ap_expr *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; i < e->nkids; i++)
		expr_free(e->kids[i]);
	free(e->kids);
	free(e->ref);
	free(e->capture);
	free(e->text);
	free(e);
}

static void launch_free(ap_launch_spec *l)
{
	if (l == NULL)
		return;
	free(l->kernel);
	free(l);
}

static void probe_clear(ap_probe *p)
{
	free(p->id);
	free(p->description);
	free(p->fallback);
	expr_free(p->requires);
	launch_free(p->launch);
	memset(p, 0, sizeof *p);
}

/* Drops everything past the given counts: what a failed file had added. */
static void ruleset_truncate(ap_ruleset *rs, size_t nrules, size_t nprobes, size_t nsigs,
                             size_t nfiles)
{
	while (rs->nsigs > nsigs)
		ap_sigspec_clear(&rs->sigs[--rs->nsigs]);
	while (rs->nrules > nrules)
		rule_clear(&rs->rules[--rs->nrules]);
	while (rs->nprobes > nprobes)
		probe_clear(&rs->probes[--rs->nprobes]);
	while (rs->nfiles > nfiles)
		free(rs->files[--rs->nfiles]);
	id_index_rebuild(impl_of(rs));
}

void ap_ruleset_free(ap_ruleset *rs)
{
	ruleset_impl *ri;

	if (rs == NULL)
		return;
	ri = impl_of(rs);
	for (size_t i = 0; i < rs->nrules; i++)
		rule_clear(&rs->rules[i]);
	free(rs->rules);
	for (size_t i = 0; i < rs->nprobes; i++)
		probe_clear(&rs->probes[i]);
	free(rs->probes);
	for (size_t i = 0; i < rs->nsigs; i++)
		ap_sigspec_clear(&rs->sigs[i]);
	free(rs->sigs);
	for (size_t i = 0; i < rs->nfiles; i++)
		free(rs->files[i]);
	free(rs->files);
	ap_map_free(ri->ids);
	free(ri);
}

const ap_rule *ap_ruleset_find_rule(const ap_ruleset *rs, const char *id)
{
	id_slot s;
	return id_lookup(rs, id, &s) && !s.probe ? &rs->rules[s.index] : NULL;
}

const ap_probe *ap_ruleset_find_probe(const ap_ruleset *rs, const char *id)
{
	id_slot s;
	return id_lookup(rs, id, &s) && s.probe ? &rs->probes[s.index] : NULL;
}

ap_kind_rule ap_rule_view(const ap_rule *r)
{
	return (ap_kind_rule){
		.paths = r->paths,
		.npaths = r->npaths,
		.lang = r->lang,
		.ws = r->ws,
		.collect = r->collect,
		.pattern = r->pattern,
	};
}

/* --- Positions. --------------------------------------------------------- */

typedef struct loader {
	ap_ruleset *rs;
	const char *file; /* owned by rs->files */
} loader;

static ap_loc loc_of(const loader *ld, const ap_ynode *n)
{
	return (ap_loc){.file = ld->file, .line = n->line, .col = n->col};
}

/* --- Rules. --------------------------------------------------------------- */

static int id_value(const loader *ld, const ap_ynode *n, char **out)
{
	const ap_ruleset *rs = ld->rs;
	id_slot dup;
	const ap_loc *first;
	char *id;
	int rc;

	rc = ap_y_string(ld->file, n, "id", &id);
	if (rc < 0)
		return rc;
	if (strlen(id) > ID_MAX_LEN) {
		rc = ap_y_fail(ld->file, n, "id '%.*s...' is longer than %d characters", 32, id, ID_MAX_LEN);
	} else if (strchr(".-", id[0]) != NULL ||
	           strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
	                   strlen(id)) {
		rc = ap_y_fail(ld->file, n,
		             "invalid id '%s': use letters, digits, '_', '.' and '-', "
		             "starting with a letter, digit or '_'",
		             id);
	} else if (id_lookup(rs, id, &dup)) {
		first = dup.probe ? &rs->probes[dup.index].loc : &rs->rules[dup.index].loc;
		rc = ap_y_fail(ld->file, n, "duplicate id '%s' (first defined at %s:%u:%u)", id, first->file,
		             first->line, first->col);
	}
	if (rc < 0) {
		free(id);
		return rc;
	}
	*out = id;
	return 0;
}

static int path_value(const loader *ld, const ap_ynode *n, ap_rule *r, size_t *paths_cap)
{
	const char *why;
	char *path;
	int rc;

	rc = ap_y_string(ld->file, n, "file", &path);
	if (rc < 0)
		return rc;
	why = ap_path_refusal(path);
	if (why != NULL) {
		rc = ap_y_fail(ld->file, n, "path '%s' refused: %s", path, why);
		free(path);
		return rc;
	}
	ap_xgrow((void **)&r->paths, paths_cap, r->npaths + 1, sizeof *r->paths);
	r->paths[r->npaths++] = path;
	return 0;
}

static int file_value(const loader *ld, const ap_ynode *n, ap_rule *r)
{
	size_t paths_cap = 0;
	int rc = 0;

	if (n->kind == AP_Y_SCALAR && !ap_y_is_null(n))
		return path_value(ld, n, r, &paths_cap);
	if (n->kind != AP_Y_SEQ)
		return ap_y_fail(ld->file, n, "'file' must be a path or a sequence of paths, not %s",
		               ap_y_kind_name(n));
	if (n->nkids == 0)
		return ap_y_fail(ld->file, n, "'file' must not be an empty sequence");
	for (size_t i = 0; i < n->nkids && rc == 0; i++)
		rc = path_value(ld, n->kids[i], r, &paths_cap);
	return rc;
}

enum {
	RULE_ID,
	RULE_DESCRIPTION,
	RULE_FILE,
	RULE_LANGUAGE,
	RULE_NORMALIZE,
	RULE_COLLECT,
	RULE_NCOMMON
};

static const char *const common_keys[RULE_NCOMMON] = {
	"id", "description", "file", "language", "normalize", "collect",
};

static const char *const ws_names[] = {"keep", "strip-whitespace"};
static const ap_ws ws_values[] = {AP_WS_KEEP, AP_WS_STRIP};
static const char *const collect_names[] = {"first", "all"};
static const ap_collect collect_values[] = {AP_COLLECT_FIRST, AP_COLLECT_ALL};

/* "'a', 'b' or 'c'" */
static char *kind_keys_text(void)
{
	ap_buf b = AP_BUF_INIT;

	for (size_t i = 0; i < ap_nkinds; i++)
		ap_buf_printf(&b, "%s'%s'", i == 0 ? "" : i + 1 == ap_nkinds ? " or " : ", ",
		              ap_kinds[i]->key);
	return ap_buf_detach(&b);
}

/* The kind the rule names by its key: exactly one. */
static int rule_kind(const loader *ld, const ap_ynode *map, const ap_kind **out)
{
	const ap_ynode *first = NULL;
	char *keys;
	int rc;

	*out = NULL;
	for (size_t k = 0; k + 1 < map->nkids; k += 2) {
		const ap_ynode *key = map->kids[k];
		const ap_kind *kind;

		if (!ap_y_is_string(key) || (kind = ap_kind_find(key->s)) == NULL)
			continue;
		if (*out != NULL) {
			keys = kind_keys_text();
			rc = ap_y_fail(ld->file, key,
			               "both '%s' and '%s' given: a rule has exactly one of %s",
			               first->s, key->s, keys);
			free(keys);
			return rc;
		}
		*out = kind;
		first = key;
	}
	if (*out != NULL)
		return 0;
	/* A misspelt kind key is told as an unknown key. */
	{
		const char **names = ap_xcalloc(RULE_NCOMMON + ap_nkinds, sizeof *names);
		ap_yfield *f = ap_xcalloc(RULE_NCOMMON + ap_nkinds, sizeof *f);

		memcpy(names, common_keys, sizeof common_keys);
		for (size_t i = 0; i < ap_nkinds; i++)
			names[RULE_NCOMMON + i] = ap_kinds[i]->key;
		rc = ap_y_fields(ld->file, map, "rule", names, RULE_NCOMMON + ap_nkinds, f);
		free(f);
		free(names);
		if (rc < 0)
			return rc;
	}
	keys = kind_keys_text();
	rc = ap_y_fail(ld->file, map, "missing one of %s in rule", keys);
	free(keys);
	return rc;
}

/* The keys a rule of kind k may have: the common ones, its key, its options. */
static const char **rule_keys(const ap_kind *k, size_t *n)
{
	size_t nopt = ap_kind_noptions(k);
	const char **names = ap_xcalloc(RULE_NCOMMON + 1 + nopt, sizeof *names);

	memcpy(names, common_keys, sizeof common_keys);
	names[RULE_NCOMMON] = k->key;
	for (size_t i = 0; i < nopt; i++)
		names[RULE_NCOMMON + 1 + i] = k->options[i];
	*n = RULE_NCOMMON + 1 + nopt;
	return names;
}

/* A key the kind has no use for is refused rather than ignored. */
static int refuse_key(const loader *ld, const ap_yfield *f, const ap_kind *k, const char *why)
{
	if (f->key == NULL)
		return 0;
	return ap_y_fail(ld->file, f->key, "'%s' does not apply to a '%s' rule: %s", f->key->s,
	                 k->key, why);
}

static int rule_common(const loader *ld, const ap_ynode *map, const ap_yfield *f,
                       const ap_kind *k, ap_rule *r)
{
	const char *lang_names[16];
	char langs_text[128] = "";
	size_t choice;
	int rc;

	if ((rc = ap_y_need_field(ld->file, map, "rule", "id", &f[RULE_ID])) < 0 ||
	    (rc = id_value(ld, f[RULE_ID].val, &r->id)) < 0)
		return rc;
	r->loc = loc_of(ld, f[RULE_ID].val);
	if (f[RULE_DESCRIPTION].key != NULL &&
	    (rc = ap_y_string(ld->file, f[RULE_DESCRIPTION].val, "description", &r->description)) < 0)
		return rc;
	if (k->flags & (AP_KIND_FILE | AP_KIND_PICKS_FILE)) {
		if ((rc = ap_y_need_field(ld->file, map, "rule", "file", &f[RULE_FILE])) < 0 ||
		    (rc = file_value(ld, f[RULE_FILE].val, r)) < 0)
			return rc;
	} else if ((rc = refuse_key(ld, &f[RULE_FILE], k, "it names no file")) < 0) {
		return rc;
	}
	r->lang = AP_LANG_AUTO;
	r->ws = AP_WS_KEEP;
	if (!(k->flags & AP_KIND_TEXT)) {
		if ((rc = refuse_key(ld, &f[RULE_LANGUAGE], k, "it does not match text")) < 0 ||
		    (rc = refuse_key(ld, &f[RULE_NORMALIZE], k, "it does not match text")) < 0)
			return rc;
	}
	if (f[RULE_LANGUAGE].key != NULL) {
		for (size_t i = 0; i < ap_nlangs; i++) {
			lang_names[i] = ap_langs[i].name;
			snprintf(langs_text + strlen(langs_text), sizeof langs_text - strlen(langs_text),
			         "%s%s", i ? ", " : "", ap_langs[i].name);
		}
		rc = ap_y_choice(ld->file, f[RULE_LANGUAGE].val, "language", lang_names, ap_nlangs,
		                 langs_text, &choice);
		if (rc < 0)
			return rc;
		r->lang = ap_langs[choice].lang;
	}
	if (f[RULE_NORMALIZE].key != NULL) {
		rc = ap_y_choice(ld->file, f[RULE_NORMALIZE].val, "normalize", ws_names, 2,
		                 "keep, strip-whitespace", &choice);
		if (rc < 0)
			return rc;
		r->ws = ws_values[choice];
	}
	r->collect = AP_COLLECT_FIRST;
	if (!(k->flags & AP_KIND_COLLECT) &&
	    (rc = refuse_key(ld, &f[RULE_COLLECT], k, "it reports one answer")) < 0)
		return rc;
	if (f[RULE_COLLECT].key != NULL) {
		rc = ap_y_choice(ld->file, f[RULE_COLLECT].val, "collect", collect_names, 2,
		                 "first, all", &choice);
		if (rc < 0)
			return rc;
		r->collect = collect_values[choice];
	}
	return 0;
}

/* A scalar as YAML flow text: plain when nothing in it could be read as
 * syntax, single-quoted (backslashes as they are, so a regex reads as
 * written) unless it holds a control byte, else double-quoted. */
static void flow_scalar(ap_buf *b, const ap_ynode *n)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                            "0123456789_.-/*+()<>=";
	bool controls = false;
	size_t i;

	if (n->len > 0 && strspn(n->s, plain) == n->len) {
		ap_buf_append(b, n->s, n->len);
		return;
	}
	for (i = 0; i < n->len; i++)
		controls |= (unsigned char)n->s[i] < 0x20 || n->s[i] == 0x7f;
	ap_buf_putc(b, controls ? '"' : '\'');
	for (i = 0; i < n->len; i++) {
		unsigned char c = (unsigned char)n->s[i];
		if (!controls)
			ap_buf_puts(b, c == '\'' ? "''" : (char[]){(char)c, '\0'});
		else if (c == '"' || c == '\\')
			ap_buf_printf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			ap_buf_printf(b, "\\x%02x", c);
		else
			ap_buf_putc(b, (char)c);
	}
	ap_buf_putc(b, controls ? '"' : '\'');
}

static void flow_node(ap_buf *b, const ap_ynode *n)
{
	size_t k;

	switch (n->kind) {
	case AP_Y_SCALAR:
		flow_scalar(b, n);
		break;
	case AP_Y_SEQ:
		ap_buf_putc(b, '[');
		for (k = 0; k < n->nkids; k++) {
			if (k > 0)
				ap_buf_puts(b, ", ");
			flow_node(b, n->kids[k]);
		}
		ap_buf_putc(b, ']');
		break;
	case AP_Y_MAP:
		ap_buf_putc(b, '{');
		for (k = 0; k + 1 < n->nkids; k += 2) {
			if (k > 0)
				ap_buf_puts(b, ", ");
			flow_node(b, n->kids[k]);
			ap_buf_puts(b, ": ");
			flow_node(b, n->kids[k + 1]);
		}
		ap_buf_putc(b, '}');
		break;
	}
}

/* The rule's keys that say what it looks for, in the pack's order. */
static char *rule_spec(const ap_ynode *map)
{
	ap_buf b = AP_BUF_INIT;

	for (size_t k = 0; k + 1 < map->nkids; k += 2) {
		const char *key = map->kids[k]->s;
		if (strcmp(key, "id") == 0 || strcmp(key, "description") == 0 ||
		    strcmp(key, "file") == 0)
			continue;
		if (b.len > 0)
			ap_buf_puts(&b, ", ");
		flow_node(&b, map->kids[k]);
		ap_buf_puts(&b, ": ");
		flow_node(&b, map->kids[k + 1]);
	}
	return ap_buf_detach(&b);
}

static int rule_fields(const loader *ld, const ap_ynode *map, ap_rule *r)
{
	const ap_kind *k;
	const char **names;
	ap_yfield *f;
	size_t n;
	int rc;

	if ((rc = rule_kind(ld, map, &k)) < 0)
		return rc;
	names = rule_keys(k, &n);
	f = ap_xcalloc(n, sizeof *f);
	rc = ap_y_fields(ld->file, map, "rule", names, n, f);
	if (rc == 0)
		rc = rule_common(ld, map, f, k, r);
	if (rc == 0) {
		ap_kind_load l = {
			.pack = ld->file,
			.map = map,
			.arg = f[RULE_NCOMMON].val,
			.opts = f + RULE_NCOMMON + 1,
			.normalize = &f[RULE_NORMALIZE],
		};
		ap_kind_rule view;

		r->kind = k;
		if (ap_y_is_string(l.arg) && memchr(l.arg->s, '\0', l.arg->len) == NULL)
			r->pattern = ap_xstrdup(l.arg->s);
		r->spec = rule_spec(map);
		view = ap_rule_view(r);
		l.rule = &view;
		rc = ap_kind_load_rule(k, &l, &r->state);
	}
	free(f);
	free(names);
	return rc;
}

static int load_rule(const loader *ld, const ap_ynode *map)
{
	ap_ruleset *rs = ld->rs;
	ap_rule r = {0};
	int rc;

	if ((rc = ap_y_need_map(ld->file, map, "a rule")) < 0)
		return rc;
	rc = rule_fields(ld, map, &r);
	if (rc < 0) {
		rule_clear(&r);
		return rc;
	}
	ap_xgrow((void **)&rs->rules, &rs->rules_cap, rs->nrules + 1, sizeof *rs->rules);
	rs->rules[rs->nrules] = r;
	id_index_put(impl_of(rs), rs->rules[rs->nrules].id, false, rs->nrules);
	rs->nrules++;
	return 0;
}

/* --- Probes. -------------------------------------------------------------- */

static const char *const expr_keys[] = {"all", "any", "not"};

/* In ap_cmp_op order. */
static const char *const cmp_keys[] = {"eq", "ne", "lt", "le", "gt", "ge"};
#define NCMP (sizeof cmp_keys / sizeof cmp_keys[0])

const char *ap_cmp_op_key(ap_cmp_op op)
{
	return cmp_keys[op];
}

const char *ap_cmp_op_name(ap_cmp_op op)
{
	static const char *const symbols[] = {"==", "!=", "<", "<=", ">", ">="};
	return symbols[op];
}

bool ap_expr_capture_holds(const ap_expr *e, const char *value)
{
	long long n;
	int c;
	char *end;

	if (e->numeric) {
		errno = 0;
		n = strtoll(value, &end, 10);
		if (*value == '\0' || *end != '\0')
			return false;
		/* A whole number past 64 bits (python-bound captures bounds of any
		 * size) lies beyond every number a rule can give. */
		c = errno == ERANGE ? (n < 0 ? -1 : 1) : (n > e->num) - (n < e->num);
	} else {
		c = strcmp(value, e->text);
	}
	switch (e->op) {
	case AP_CMP_EQ:
		return c == 0;
	case AP_CMP_NE:
		return c != 0;
	case AP_CMP_LT:
		return c < 0;
	case AP_CMP_LE:
		return c <= 0;
	case AP_CMP_GT:
		return c > 0;
	case AP_CMP_GE:
		return c >= 0;
	}
	return false;
}

/* {capture: RULE, name: NAME, OP: VALUE}: a rule's capture compared. */
static int capture_value(const loader *ld, const ap_ynode *n, ap_expr *e)
{
	static const char *const keys[] = {"capture", "name", "eq", "ne", "lt", "le", "gt", "ge"};
	ap_yfield f[8];
	const ap_yfield *first, *second;
	const ap_ynode *v;
	long num;
	int rc;

	e->kind = AP_EXPR_CAPTURE;
	if ((rc = ap_y_fields(ld->file, n, "a capture comparison", keys, 8, f)) < 0 ||
	    (rc = ap_y_string(ld->file, f[0].val, "capture", &e->ref)) < 0 ||
	    (rc = ap_y_need_field(ld->file, n, "a capture comparison", "name", &f[1])) < 0 ||
	    (rc = ap_y_string(ld->file, f[1].val, "name", &e->capture)) < 0)
		return rc;
	second = ap_y_second_present(f + 2, NCMP, &first);
	if (first == NULL)
		return ap_y_fail(ld->file, n,
		                 "a capture comparison needs one of 'eq', 'ne', 'lt', 'le', 'gt' or 'ge'");
	if (second != NULL)
		return ap_y_fail(ld->file, second->key,
		                 "both '%s' and '%s' given: a capture comparison has exactly one "
		                 "operator (combine comparisons with 'all')",
		                 first->key->s, second->key->s);
	e->op = (ap_cmp_op)(first - (f + 2));
	v = first->val;
	if (v->kind == AP_Y_SCALAR && v->style == YAML_PLAIN_SCALAR_STYLE &&
	    strspn(v->s + (v->s[0] == '-'), "0123456789") == v->len - (v->s[0] == '-') &&
	    v->len > (size_t)(v->s[0] == '-')) {
		if ((rc = ap_y_int(ld->file, v, first->key->s, LONG_MIN, LONG_MAX, &num)) < 0)
			return rc;
		e->numeric = true;
		e->num = num;
		return 0;
	}
	if (e->op != AP_CMP_EQ && e->op != AP_CMP_NE)
		return ap_y_fail(ld->file, v, "'%s' compares numbers: it needs an integer, not %s",
		                 first->key->s, ap_y_is_string(v) ? "text" : ap_y_kind_name(v));
	return ap_y_string(ld->file, v, first->key->s, &e->text);
}

/* Recursion is bounded: ap_yaml_parse refuses deep trees. */
static int expr_value(const loader *ld, const ap_ynode *n, ap_expr **out)
{
	const ap_yfield *first;
	const ap_yfield *second;
	ap_yfield f[3];
	ap_expr *e = ap_xcalloc(1, sizeof *e);
	int rc;

	e->loc = loc_of(ld, n);
	*out = e;
	if (n->kind == AP_Y_SCALAR && !ap_y_is_null(n)) {
		e->kind = AP_EXPR_REF;
		return ap_y_string(ld->file, n, "requires", &e->ref);
	}
	if (n->kind != AP_Y_MAP)
		return ap_y_fail(ld->file, n,
		               "an expression must be a rule or probe id, or a mapping with 'all', "
		               "'any', 'not' or 'capture', not %s",
		               ap_y_kind_name(n));
	for (size_t k = 0; k + 1 < n->nkids; k += 2)
		if (ap_y_is_string(n->kids[k]) && strcmp(n->kids[k]->s, "capture") == 0)
			return capture_value(ld, n, e);
	rc = ap_y_fields(ld->file, n, "an expression", expr_keys, 3, f);
	if (rc < 0)
		return rc;
	second = ap_y_second_present(f, 3, &first);
	if (first == NULL)
		return ap_y_fail(ld->file, n, "an expression mapping needs one of 'all', 'any' or 'not'");
	if (second != NULL)
		return ap_y_fail(ld->file, second->key,
		               "both '%s' and '%s' given: an expression mapping has exactly one of "
		               "'all', 'any' or 'not' (nest them to combine)",
		               first->key->s, second->key->s);
	e->kind = (ap_expr_kind)(AP_EXPR_ALL + (first - f));
	n = first->val;
	if (e->kind == AP_EXPR_NOT) {
		if (n->kind == AP_Y_SEQ)
			return ap_y_fail(ld->file, n, "'not' takes one expression, not a sequence");
		e->kids = ap_xcalloc(1, sizeof *e->kids);
		e->nkids = 1;
		return expr_value(ld, n, &e->kids[0]);
	}
	if (n->kind != AP_Y_SEQ)
		return ap_y_fail(ld->file, n, "'%s' must be a sequence of expressions, not %s", first->key->s,
		               ap_y_kind_name(n));
	if (n->nkids == 0)
		return ap_y_fail(ld->file, n, "'%s' must not be empty", first->key->s);
	e->kids = ap_xcalloc(n->nkids, sizeof *e->kids);
	for (size_t i = 0; i < n->nkids; i++) {
		e->nkids++;
		rc = expr_value(ld, n->kids[i], &e->kids[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

enum {
	LAUNCH_KERNEL,
	LAUNCH_HEADS,
	LAUNCH_PAD_TO,
	LAUNCH_HEAD_DIM,
	LAUNCH_ROPE,
	LAUNCH_BATCH,
	LAUNCH_CONTEXT,
	LAUNCH_PAGE_SIZE,
	LAUNCH_TIMEOUT,
	LAUNCH_NFIELDS
};

static const char *const launch_keys[LAUNCH_NFIELDS] = {
	"kernel", "heads", "pad_to", "head_dim", "rope", "batch", "context", "page_size", "timeout",
};

/* Integer launch parameters: the ap_yfield, its range, where it goes; 0 is kept
 * for an absent optional one (the launcher's default). */
static int launch_ints(const loader *ld, const ap_ynode *map, const ap_yfield *f, ap_launch_spec *l)
{
	const struct {
		int ap_yfield;
		bool required;
		long min, max;
		int *out;
	} ints[] = {
		{LAUNCH_HEADS, true, 1, AP_MLA_MAX_HEADS, &l->heads},
		{LAUNCH_PAD_TO, false, 0, AP_MLA_MAX_HEADS, &l->pad_to},
		{LAUNCH_HEAD_DIM, true, 1, 1024, &l->head_dim},
		{LAUNCH_ROPE, true, 0, 1024, &l->rope},
		{LAUNCH_BATCH, false, 1, 1024, &l->batch},
		{LAUNCH_CONTEXT, false, 1, 1 << 20, &l->context},
		{LAUNCH_PAGE_SIZE, false, 1, 1024, &l->page_size},
	};
	long v;
	int rc;

	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		const ap_yfield *fi = &f[ints[i].ap_yfield];
		const char *name = launch_keys[ints[i].ap_yfield];

		if (ints[i].required && (rc = ap_y_need_field(ld->file, map, "launch", name, fi)) < 0)
			return rc;
		if (fi->key == NULL)
			continue;
		rc = ap_y_int(ld->file, fi->val, name, ints[i].min, ints[i].max, &v);
		if (rc < 0)
			return rc;
		*ints[i].out = (int)v;
	}
	if (l->pad_to != 0 && l->pad_to < l->heads)
		return ap_y_fail(ld->file, f[LAUNCH_PAD_TO].val, "'pad_to' must be 0 or at least heads (%d), not %d",
		               l->heads, l->pad_to);
	if (l->pad_to % AP_MLA_HEAD_STEP != 0)
		return ap_y_fail(ld->file, f[LAUNCH_PAD_TO].val, "'pad_to' must be a multiple of %d, not %d",
		               AP_MLA_HEAD_STEP, l->pad_to);
	return 0;
}

static int launch_value(const loader *ld, const ap_ynode *map, ap_launch_spec **out)
{
	ap_yfield f[LAUNCH_NFIELDS];
	ap_launch_spec *l;
	int rc;

	if ((rc = ap_y_need_map(ld->file, map, "'launch'")) < 0 ||
	    (rc = ap_y_fields(ld->file, map, "launch", launch_keys, LAUNCH_NFIELDS, f)) < 0)
		return rc;
	l = ap_xcalloc(1, sizeof *l);
	*out = l;
	l->loc = loc_of(ld, map);
	if ((rc = ap_y_need_field(ld->file, map, "launch", "kernel", &f[LAUNCH_KERNEL])) < 0 ||
	    (rc = ap_y_string(ld->file, f[LAUNCH_KERNEL].val, "kernel", &l->kernel)) < 0)
		return rc;
	if (strcmp(l->kernel, "mla_decode") != 0)
		return ap_y_fail(ld->file, f[LAUNCH_KERNEL].val, "unknown kernel '%s' (known: mla_decode)",
		               l->kernel);
	rc = launch_ints(ld, map, f, l);
	if (rc == 0 && f[LAUNCH_TIMEOUT].key != NULL)
		rc = ap_y_seconds(ld->file, f[LAUNCH_TIMEOUT].val, "timeout", 86400, &l->timeout_s);
	return rc;
}

enum { PROBE_ID, PROBE_DESCRIPTION, PROBE_REQUIRES, PROBE_LAUNCH, PROBE_FALLBACK, PROBE_NFIELDS };

static const char *const probe_keys[PROBE_NFIELDS] = {
	"id", "description", "requires", "launch", "fallback",
};

/* Printed after "unsupported:" by check and explain, so one short line. */
#define FALLBACK_MAX 240

static int fallback_value(const loader *ld, const ap_ynode *n, char **out)
{
	int rc = ap_y_string(ld->file, n, "fallback", out);

	if (rc < 0)
		return rc;
	if (strspn(*out, " \t") == strlen(*out))
		return ap_y_fail(ld->file, n, "'fallback' must be a sentence, not empty");
	if (strpbrk(*out, "\r\n") != NULL)
		return ap_y_fail(ld->file, n, "'fallback' must be one sentence on one line");
	if (strlen(*out) > FALLBACK_MAX)
		return ap_y_fail(ld->file, n, "'fallback' must be at most %d bytes, not %zu",
		                 FALLBACK_MAX, strlen(*out));
	return 0;
}

static int probe_fields(const loader *ld, const ap_ynode *map, const ap_yfield *f, ap_probe *p)
{
	int rc;

	if ((rc = ap_y_need_field(ld->file, map, "probe", "id", &f[PROBE_ID])) < 0 ||
	    (rc = id_value(ld, f[PROBE_ID].val, &p->id)) < 0)
		return rc;
	p->loc = loc_of(ld, f[PROBE_ID].val);
	if (f[PROBE_DESCRIPTION].key != NULL &&
	    (rc = ap_y_string(ld->file, f[PROBE_DESCRIPTION].val, "description", &p->description)) < 0)
		return rc;
	if ((rc = ap_y_need_field(ld->file, map, "probe", "requires", &f[PROBE_REQUIRES])) < 0 ||
	    (rc = expr_value(ld, f[PROBE_REQUIRES].val, &p->requires)) < 0)
		return rc;
	if (f[PROBE_FALLBACK].key != NULL &&
	    (rc = fallback_value(ld, f[PROBE_FALLBACK].val, &p->fallback)) < 0)
		return rc;
	if (f[PROBE_LAUNCH].key != NULL)
		return launch_value(ld, f[PROBE_LAUNCH].val, &p->launch);
	return 0;
}

static int load_probe(const loader *ld, const ap_ynode *map)
{
	ap_ruleset *rs = ld->rs;
	ap_yfield f[PROBE_NFIELDS];
	ap_probe p = {0};
	int rc;

	if ((rc = ap_y_need_map(ld->file, map, "a probe")) < 0 ||
	    (rc = ap_y_fields(ld->file, map, "probe", probe_keys, PROBE_NFIELDS, f)) < 0)
		return rc;
	rc = probe_fields(ld, map, f, &p);
	if (rc < 0) {
		probe_clear(&p);
		return rc;
	}
	ap_xgrow((void **)&rs->probes, &rs->probes_cap, rs->nprobes + 1, sizeof *rs->probes);
	rs->probes[rs->nprobes] = p;
	id_index_put(impl_of(rs), rs->probes[rs->nprobes].id, true, rs->nprobes);
	rs->nprobes++;
	return 0;
}

/* --- Files. --------------------------------------------------------------- */

enum { TOP_VERSION, TOP_RULES, TOP_PROBES, TOP_SIGNATURES, TOP_NFIELDS };

static const char *const top_keys[TOP_NFIELDS] = {"version", "rules", "probes", "signatures"};

/* One module a pack asks the signatures of; each is recorded once. */
static int load_signature(const loader *ld, const ap_ynode *n)
{
	ap_ruleset *rs = ld->rs;
	ap_sigspec s;
	int rc = ap_sigspec_load(ld->file, n, &s);

	if (rc < 0) {
		ap_sigspec_clear(&s);
		return rc;
	}
	s.loc = (ap_loc){ld->file, n->line, n->col};
	for (size_t i = 0; i < rs->nsigs; i++) {
		if (strcmp(rs->sigs[i].module, s.module) == 0) {
			rc = ap_y_fail(ld->file, n, "the signatures of %s are already asked at %s:%u:%u",
			               s.module, rs->sigs[i].loc.file, rs->sigs[i].loc.line,
			               rs->sigs[i].loc.col);
			ap_sigspec_clear(&s);
			return rc;
		}
	}
	if (rs->nsigs == AP_SIG_MAX_MODULES) {
		ap_sigspec_clear(&s);
		return ap_y_fail(ld->file, n, "more than %d modules asked for their signatures",
		                 AP_SIG_MAX_MODULES);
	}
	ap_xgrow((void **)&rs->sigs, &rs->sigs_cap, rs->nsigs + 1, sizeof *rs->sigs);
	rs->sigs[rs->nsigs++] = s;
	return 0;
}

static int load_items(const loader *ld, const ap_yfield *f, int (*load_one)(const loader *,
                                                                         const ap_ynode *))
{
	const ap_ynode *seq = f->val;
	int rc = 0;

	if (f->key == NULL)
		return 0;
	if (seq->kind != AP_Y_SEQ)
		return ap_y_fail(ld->file, seq, "'%s' must be a sequence, not %s", f->key->s, ap_y_kind_name(seq));
	for (size_t i = 0; i < seq->nkids && rc == 0; i++)
		rc = load_one(ld, seq->kids[i]);
	return rc;
}

static int load_tree(const loader *ld, const ap_ynode *root)
{
	ap_yfield f[TOP_NFIELDS];
	long version;
	int rc;

	if (root == NULL || ap_y_is_null(root))
		return ap_y_fail_lc(ld->file, 1, 1, "empty rule pack: expected a mapping with 'rules' and/or 'probes'");
	if (root->kind != AP_Y_MAP)
		return ap_y_fail(ld->file, root,
		               "a rule pack must be a mapping with 'rules' and/or 'probes', not %s",
		               ap_y_kind_name(root));
	rc = ap_y_fields(ld->file, root, "the top-level mapping", top_keys, TOP_NFIELDS, f);
	if (rc < 0)
		return rc;
	if (f[TOP_RULES].key == NULL && f[TOP_PROBES].key == NULL && f[TOP_SIGNATURES].key == NULL)
		return ap_y_fail(ld->file, root, "missing 'rules' or 'probes' in the top-level mapping");
	if (f[TOP_VERSION].key != NULL) {
		rc = ap_y_int(ld->file, f[TOP_VERSION].val, "version", LONG_MIN, LONG_MAX, &version);
		if (rc < 0)
			return rc;
		if (version != 1)
			return ap_y_fail(ld->file, f[TOP_VERSION].val,
			               "unsupported version %ld (this aiter-probe reads version 1)",
			               version);
	}
	rc = load_items(ld, &f[TOP_RULES], load_rule);
	if (rc == 0)
		rc = load_items(ld, &f[TOP_PROBES], load_probe);
	if (rc == 0)
		rc = load_items(ld, &f[TOP_SIGNATURES], load_signature);
	return rc;
}

static int load_text(ap_ruleset *rs, const char *name, const char *yaml, size_t len)
{
	size_t nrules = rs->nrules;
	size_t nprobes = rs->nprobes;
	size_t nsigs = rs->nsigs;
	size_t nfiles = rs->nfiles;
	loader ld = {.rs = rs};
	ap_ynode *root = NULL;
	int rc;

	if (len > PACK_MAX_BYTES) {
		ap_error_set("%s: larger than %zu MiB, the limit for a rule pack", name,
		             PACK_MAX_BYTES >> 20);
		return AP_EINPUT;
	}
	ap_xgrow((void **)&rs->files, &rs->files_cap, rs->nfiles + 1, sizeof *rs->files);
	rs->files[rs->nfiles] = ap_xstrdup(name);
	ld.file = rs->files[rs->nfiles++];

	rc = ap_yaml_parse(&root, ld.file, yaml, len);
	if (rc == 0)
		rc = load_tree(&ld, root);
	ap_ynode_free(root);
	if (rc < 0)
		ruleset_truncate(rs, nrules, nprobes, nsigs, nfiles);
	return rc;
}

int ap_ruleset_load_buffer(ap_ruleset *rs, const char *name, const char *yaml, size_t len)
{
	return load_text(rs, name, yaml, len);
}

static int io_error(const char *path, int err)
{
	ap_error_set("%s: %s", path, strerror(err));
	return err == ENOENT || err == ENOTDIR ? AP_EINPUT : AP_EIO;
}

static int not_regular(const char *path)
{
	ap_error_set("%s: not a regular file", path);
	return AP_EINPUT;
}

/* A pack is a regular file: a FIFO would block the load for ever, a device
 * read without end. The type is looked at before opening (opening a device
 * can do things) and again on what was opened, non-blocking, in case the
 * path changed in between. */
static int load_file(ap_ruleset *rs, const char *path)
{
	char *data = NULL;
	size_t len = 0;
	size_t cap = 0;
	struct stat st;
	int fd;
	int rc = 0;

	if (stat(path, &st) != 0)
		return io_error(path, errno);
	if (!S_ISREG(st.st_mode))
		return not_regular(path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return io_error(path, errno);
	if (fstat(fd, &st) != 0)
		rc = io_error(path, errno);
	else if (!S_ISREG(st.st_mode))
		rc = not_regular(path);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	/* Read past the cap so an oversized pack is refused, also when it grows
	 * while it is read. */
	while (len <= PACK_MAX_BYTES) {
		ssize_t n;

		ap_xgrow((void **)&data, &cap, len + 65536, 1);
		n = read(fd, data + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = io_error(path, errno);
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (rc == 0)
		rc = load_text(rs, path, data, len);
	free(data);
	return rc;
}

static bool is_pack_name(const char *name)
{
	size_t len = strlen(name);

	if (name[0] == '.')
		return false;
	return (len > 5 && strcmp(name + len - 5, ".yaml") == 0) ||
	       (len > 4 && strcmp(name + len - 4, ".yml") == 0);
}

/* The folder's packs in strcmp order, so every machine loads them alike. */
static int load_dir(ap_ruleset *rs, const char *dir)
{
	const char *sep = dir[0] != '\0' && dir[strlen(dir) - 1] == '/' ? "" : "/";
	char **names = NULL;
	size_t nnames = 0;
	size_t names_cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = 0;

	if (d == NULL)
		return io_error(dir, errno);
	for (errno = 0; (de = readdir(d)) != NULL; errno = 0) {
		if (!is_pack_name(de->d_name))
			continue;
		ap_xgrow((void **)&names, &names_cap, nnames + 1, sizeof *names);
		names[nnames++] = ap_xasprintf("%s%s%s", dir, sep, de->d_name);
	}
	if (errno != 0)
		rc = io_error(dir, errno);
	closedir(d);
	if (nnames > 0)
		qsort(names, nnames, sizeof *names, ap_cmp_strs);
	/* A .yaml or .yml entry that is not a regular file (a folder, a FIFO, a
	 * device) is refused, not skipped: a pack that silently does not load
	 * checks nothing. */
	for (size_t i = 0; i < nnames && rc == 0; i++)
		rc = load_file(rs, names[i]);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	return rc;
}

int ap_ruleset_load_path(ap_ruleset *rs, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return io_error(path, errno);
	if (S_ISDIR(st.st_mode))
		return load_dir(rs, path);
	return load_file(rs, path);
}

/* --- Resolving and ordering. ---------------------------------------------- */

/* Points every reference at its rule or probe; with deps non-NULL, also
 * lists the probes e requires. */
static int resolve_expr(const ap_ruleset *rs, ap_expr *e, size_t **deps, size_t *ndeps,
                        size_t *deps_cap)
{
	id_slot s;
	int rc = 0;

	if (e->kind != AP_EXPR_REF && e->kind != AP_EXPR_CAPTURE) {
		for (size_t i = 0; i < e->nkids && rc == 0; i++)
			rc = resolve_expr(rs, e->kids[i], deps, ndeps, deps_cap);
		return rc;
	}
	if (!id_lookup(rs, e->ref, &s)) {
		ap_error_at(e->loc.file, e->loc.line, e->loc.col, "unknown rule or probe '%s'", e->ref);
		return AP_EINPUT;
	}
	if (e->kind == AP_EXPR_CAPTURE && s.probe) {
		ap_error_at(e->loc.file, e->loc.line, e->loc.col,
		            "'capture' must name a rule, and '%s' is a probe", e->ref);
		return AP_EINPUT;
	}
	e->ref_probe = s.probe;
	e->ref_index = s.index;
	if (s.probe && deps != NULL) {
		ap_xgrow((void **)deps, deps_cap, *ndeps + 1, sizeof **deps);
		(*deps)[(*ndeps)++] = s.index;
	}
	return 0;
}

typedef struct probe_deps {
	size_t *v;
	size_t n;
	size_t cap;
} probe_deps;

static int cycle_error(const ap_ruleset *rs, const size_t *stack, size_t from, size_t to)
{
	const ap_probe *first = &rs->probes[stack[from]];
	ap_buf path = AP_BUF_INIT;

	for (size_t i = from; i < to; i++)
		ap_buf_printf(&path, "%s -> ", rs->probes[stack[i]].id);
	ap_buf_puts(&path, first->id);
	ap_error_at(first->loc.file, first->loc.line, first->loc.col, "requires cycle: %s",
	            path.data);
	ap_buf_free(&path);
	return AP_EINPUT;
}

/* Depth-first, in load order, each probe emitted after the probes it
 * requires; iterative so a long chain of probes cannot exhaust the stack. */
static int order_probes(const ap_ruleset *rs, const probe_deps *deps, size_t *order)
{
	enum { WHITE, GREY, BLACK };
	size_t n = rs->nprobes;
	unsigned char *color = ap_xcalloc(n, 1);
	size_t *stack = ap_xcalloc(n, sizeof *stack);
	size_t *next = ap_xcalloc(n, sizeof *next); /* next dep to visit */
	size_t *depth = ap_xcalloc(n, sizeof *depth); /* where on the stack */
	size_t sp = 0;
	size_t norder = 0;
	int rc = 0;

	for (size_t root = 0; root < n && rc == 0; root++) {
		if (color[root] != WHITE)
			continue;
		color[root] = GREY;
		stack[sp++] = root;
		while (sp > 0 && rc == 0) {
			size_t p = stack[sp - 1];
			size_t q;

			if (next[p] == deps[p].n) {
				color[p] = BLACK;
				order[norder++] = p;
				sp--;
				continue;
			}
			q = deps[p].v[next[p]++];
			if (color[q] == GREY) {
				rc = cycle_error(rs, stack, depth[q], sp);
			} else if (color[q] == WHITE) {
				color[q] = GREY;
				depth[q] = sp;
				stack[sp++] = q;
			}
		}
	}
	free(color);
	free(stack);
	free(next);
	free(depth);
	return rc;
}

/* A set without a rule or a probe would run a scan that checks nothing and
 * looks like a pass. */
static int refuse_empty(const ap_ruleset *rs)
{
	if (rs->nrules > 0 || rs->nprobes > 0)
		return 0;
	if (rs->nfiles == 0)
		ap_error_set("no rules and no probes: no rule pack (a .yaml or .yml file) was loaded");
	else
		ap_error_set("no rules and no probes: the %zu rule pack(s) loaded define none",
		             rs->nfiles);
	return AP_EINPUT;
}

int ap_ruleset_finish(ap_ruleset *rs)
{
	size_t n = rs->nprobes;
	probe_deps *deps;
	size_t *order;
	int rc = refuse_empty(rs);

	if (rc != 0)
		return rc;
	deps = ap_xcalloc(n, sizeof *deps);
	order = ap_xcalloc(n, sizeof *order);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = resolve_expr(rs, rs->probes[i].requires, &deps[i].v, &deps[i].n, &deps[i].cap);
	if (rc == 0)
		rc = order_probes(rs, deps, order);
	if (rc == 0) {
		ap_probe *sorted = ap_xcalloc(n, sizeof *sorted);

		for (size_t i = 0; i < n; i++)
			sorted[i] = rs->probes[order[i]];
		if (n > 0)
			memcpy(rs->probes, sorted, n * sizeof *sorted);
		free(sorted);
		/* Indices moved: look every reference up again. */
		id_index_rebuild(impl_of(rs));
		for (size_t i = 0; i < n; i++)
			resolve_expr(rs, rs->probes[i].requires, NULL, NULL, NULL);
	}
	for (size_t i = 0; i < n; i++)
		free(deps[i].v);
	free(deps);
	free(order);
	return rc;
}
