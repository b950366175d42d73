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
#include <yaml.h>

#include "ap-error.h"
#include "ap-util.h"
#include "reader.h"
#include "rules.h"

/* Limits that keep a hostile or broken pack from costing more than a few tens
 * of megabytes or recursing deeply: real packs are a few kilobytes. */
#define PACK_MAX_BYTES ((size_t)4 << 20)
#define PACK_MAX_NODES 250000
#define PACK_MAX_DEPTH 64
#define ID_MAX_LEN 128

/* --- The rule set, with a private id index. ------------------------------ */

/* One namespace for rule and probe ids: a probe may require either. */
typedef struct id_slot {
	const char *id; /* NULL: empty slot */
	bool probe;
	size_t index;
} id_slot;

typedef struct ruleset_impl {
	ap_ruleset pub; /* first, so the public pointer is the private one */
	id_slot *slots;
	size_t nslots; /* a power of two, at least twice nused */
	size_t nused;
} ruleset_impl;

static ruleset_impl *impl_of(ap_ruleset *rs)
{
	return (ruleset_impl *)((char *)rs - offsetof(ruleset_impl, pub));
}

static const ruleset_impl *const_impl_of(const ap_ruleset *rs)
{
	return (const ruleset_impl *)((const char *)rs - offsetof(ruleset_impl, pub));
}

static size_t id_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3u;
	return (size_t)h;
}

/* The slot holding id, or the empty slot where it would go. */
static id_slot *id_probe_slot(id_slot *slots, size_t nslots, const char *id)
{
	size_t i = id_hash(id) & (nslots - 1);
	while (slots[i].id != NULL && strcmp(slots[i].id, id) != 0)
		i = (i + 1) & (nslots - 1);
	return &slots[i];
}

static const id_slot *id_lookup(const ap_ruleset *rs, const char *id)
{
	const ruleset_impl *ri = const_impl_of(rs);
	const id_slot *s;

	if (ri->nslots == 0)
		return NULL;
	s = id_probe_slot(ri->slots, ri->nslots, id);
	return s->id != NULL ? s : NULL;
}

static void id_index_reset(ruleset_impl *ri, size_t nslots)
{
	free(ri->slots);
	ri->slots = ap_xcalloc(nslots, sizeof *ri->slots);
	ri->nslots = nslots;
	ri->nused = 0;
}

static void id_index_put(ruleset_impl *ri, const char *id, bool probe, size_t index)
{
	id_slot *s;

	if (2 * (ri->nused + 1) > ri->nslots) {
		id_slot *old = ri->slots;
		size_t nold = ri->nslots;

		ri->slots = NULL;
		id_index_reset(ri, nold ? 2 * nold : 64);
		for (size_t i = 0; i < nold; i++)
			if (old[i].id != NULL)
				id_index_put(ri, old[i].id, old[i].probe, old[i].index);
		free(old);
	}
	s = id_probe_slot(ri->slots, ri->nslots, id);
	if (s->id == NULL)
		ri->nused++;
	s->id = id;
	s->probe = probe;
	s->index = index;
}

/* After probes were reordered or a failed file rolled back. */
static void id_index_rebuild(ruleset_impl *ri)
{
	const ap_ruleset *rs = &ri->pub;

	id_index_reset(ri, ri->nslots ? ri->nslots : 64);
	for (size_t i = 0; i < rs->nrules; i++)
		id_index_put(ri, rs->rules[i].id, false, i);
	for (size_t i = 0; i < rs->nprobes; i++)
		id_index_put(ri, rs->probes[i].id, true, i);
}

int ap_ruleset_new(ap_ruleset **out)
{
	ruleset_impl *ri = ap_xcalloc(1, sizeof *ri);
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
	ap_matcher_free(r->matcher);
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
	expr_free(p->requires);
	launch_free(p->launch);
	memset(p, 0, sizeof *p);
}

/* Drops everything past the given counts: what a failed file had added. */
static void ruleset_truncate(ap_ruleset *rs, size_t nrules, size_t nprobes, size_t nfiles)
{
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
	for (size_t i = 0; i < rs->nfiles; i++)
		free(rs->files[i]);
	free(rs->files);
	free(ri->slots);
	free(ri);
}

const ap_rule *ap_ruleset_find_rule(const ap_ruleset *rs, const char *id)
{
	const id_slot *s = id_lookup(rs, id);
	return s != NULL && !s->probe ? &rs->rules[s->index] : NULL;
}

const ap_probe *ap_ruleset_find_probe(const ap_ruleset *rs, const char *id)
{
	const id_slot *s = id_lookup(rs, id);
	return s != NULL && s->probe ? &rs->probes[s->index] : NULL;
}

/* --- YAML into a small tree with positions. ------------------------------ */

typedef enum { Y_SCALAR, Y_SEQ, Y_MAP } ykind;

typedef struct ynode {
	ykind kind;
	yaml_scalar_style_t style;
	unsigned line, col;         /* 1-based start */
	unsigned end_line, end_col; /* 1-based, just past the end */
	char *s;                    /* scalar value (may hold NUL bytes) */
	size_t len;
	struct ynode **kids;        /* a mapping holds key, value, key, value, ... */
	size_t nkids;
	size_t cap;
} ynode;

typedef struct loader {
	ap_ruleset *rs;
	const char *file; /* owned by rs->files */
	const char *text;
	size_t len;
	yaml_parser_t parser;
	size_t nnodes;
} loader;

static void ynode_free(ynode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		ynode_free(n->kids[i]);
	free(n->kids);
	free(n->s);
	free(n);
}

static int vfail(const loader *ld, unsigned line, unsigned col, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static int vfail(const loader *ld, unsigned line, unsigned col, const char *fmt, va_list ap)
{
	char msg[2048];

	vsnprintf(msg, sizeof msg, fmt, ap);
	ap_error_at(ld->file, line, col, "%s", msg);
	return AP_EINPUT;
}

static int fail_at(const loader *ld, const ynode *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(const loader *ld, const ynode *n, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(ld, n->line, n->col, fmt, ap);
	va_end(ap);
	return rc;
}

static int fail_lc(const loader *ld, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_lc(const loader *ld, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(ld, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

static int fail_mark(const loader *ld, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_mark(const loader *ld, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(ld, (unsigned)mark.line + 1, (unsigned)mark.column + 1, fmt, ap);
	va_end(ap);
	return rc;
}

/* Characters (not bytes) in s[0..n): libyaml counts columns in characters. */
static size_t utf8_chars(const char *s, size_t n)
{
	size_t chars = 0;
	for (size_t i = 0; i < n; i++)
		chars += ((unsigned char)s[i] & 0xC0) != 0x80;
	return chars;
}

static int parser_error(const loader *ld)
{
	const yaml_parser_t *p = &ld->parser;

	if (p->error == YAML_MEMORY_ERROR) {
		ap_error_set("%s: out of memory while parsing YAML", ld->file);
		return AP_EINTERNAL;
	}
	if (p->error == YAML_READER_ERROR) {
		/* The reader gives a byte offset, not a mark. */
		size_t off = p->problem_offset < ld->len ? p->problem_offset : ld->len;
		size_t line_start = 0;
		unsigned line = 1;

		for (size_t i = 0; i < off; i++) {
			if (ld->text[i] == '\n') {
				line++;
				line_start = i + 1;
			}
		}
		return fail_lc(ld, line, (unsigned)utf8_chars(ld->text + line_start, off - line_start) + 1,
		               "not UTF-8 text: %s (0x%X)", p->problem, (unsigned)p->problem_value);
	}
	if (p->context != NULL)
		return fail_mark(ld, p->problem_mark, "%s (%s at %zu:%zu)", p->problem, p->context,
		                 p->context_mark.line + 1, p->context_mark.column + 1);
	return fail_mark(ld, p->problem_mark, "%s", p->problem != NULL ? p->problem : "YAML error");
}

static int next_event(loader *ld, yaml_event_t *ev)
{
	return yaml_parser_parse(&ld->parser, ev) ? 0 : parser_error(ld);
}

static ynode *ynode_new(ykind kind, yaml_mark_t start)
{
	ynode *n = ap_xcalloc(1, sizeof *n);
	n->kind = kind;
	n->line = (unsigned)start.line + 1;
	n->col = (unsigned)start.column + 1;
	return n;
}

/* Refuses what a rule pack has no use for and what could make a small file
 * expensive: aliases (the "billion laughs"), and with them anchors; tags. */
static int check_node_event(const loader *ld, const yaml_event_t *ev, unsigned depth)
{
	const yaml_char_t *anchor = NULL;
	const yaml_char_t *tag = NULL;

	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return fail_mark(ld, ev->start_mark, "YAML aliases (*%s) are not supported",
		                 (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		return fail_mark(ld, ev->start_mark, "unexpected YAML event");
	}
	if (anchor != NULL)
		return fail_mark(ld, ev->start_mark, "YAML anchors (&%s) are not supported",
		                 (const char *)anchor);
	if (tag != NULL)
		return fail_mark(ld, ev->start_mark, "YAML tags (%s) are not supported",
		                 (const char *)tag);
	if (depth > PACK_MAX_DEPTH)
		return fail_mark(ld, ev->start_mark, "nested deeper than %d levels", PACK_MAX_DEPTH);
	if (ld->nnodes >= PACK_MAX_NODES)
		return fail_mark(ld, ev->start_mark, "more than %d YAML nodes in one rule pack",
		                 PACK_MAX_NODES);
	return 0;
}

/* Builds the node that ev starts, consuming the events of its children.
 * Recursion is bounded by PACK_MAX_DEPTH. */
static int read_node(loader *ld, const yaml_event_t *ev, unsigned depth, ynode **out)
{
	yaml_event_type_t end;
	ynode *n;
	int rc;

	rc = check_node_event(ld, ev, depth);
	if (rc < 0)
		return rc;
	ld->nnodes++;
	if (ev->type == YAML_SCALAR_EVENT) {
		n = ynode_new(Y_SCALAR, ev->start_mark);
		n->style = ev->data.scalar.style;
		n->end_line = (unsigned)ev->end_mark.line + 1;
		n->end_col = (unsigned)ev->end_mark.column + 1;
		n->s = ap_xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		n->len = ev->data.scalar.length;
		*out = n;
		return 0;
	}
	if (ev->type == YAML_SEQUENCE_START_EVENT) {
		n = ynode_new(Y_SEQ, ev->start_mark);
		end = YAML_SEQUENCE_END_EVENT;
	} else {
		n = ynode_new(Y_MAP, ev->start_mark);
		end = YAML_MAPPING_END_EVENT;
	}
	for (;;) {
		yaml_event_t kid_ev;
		ynode *kid;

		rc = next_event(ld, &kid_ev);
		if (rc < 0)
			break;
		if (kid_ev.type == end) {
			yaml_event_delete(&kid_ev);
			*out = n;
			return 0;
		}
		rc = read_node(ld, &kid_ev, depth + 1, &kid);
		yaml_event_delete(&kid_ev);
		if (rc < 0)
			break;
		ap_xgrow((void **)&n->kids, &n->cap, n->nkids + 1, sizeof *n->kids);
		n->kids[n->nkids++] = kid;
	}
	ynode_free(n);
	return rc;
}

static int expect_event(loader *ld, yaml_event_type_t type)
{
	yaml_event_t ev;
	int rc = next_event(ld, &ev);

	if (rc < 0)
		return rc;
	if (ev.type != type)
		rc = fail_mark(ld, ev.start_mark, "unexpected YAML event");
	yaml_event_delete(&ev);
	return rc;
}

/* The one document of the file; *root is NULL when the stream is empty. */
static int read_document(loader *ld, ynode **root)
{
	yaml_event_t ev;
	int rc;

	*root = NULL;
	rc = expect_event(ld, YAML_STREAM_START_EVENT);
	if (rc < 0)
		return rc;
	rc = next_event(ld, &ev);
	if (rc < 0)
		return rc;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		return 0;
	}
	yaml_event_delete(&ev); /* the document start */
	rc = next_event(ld, &ev);
	if (rc < 0)
		return rc;
	rc = read_node(ld, &ev, 1, root);
	yaml_event_delete(&ev);
	if (rc == 0)
		rc = expect_event(ld, YAML_DOCUMENT_END_EVENT);
	if (rc == 0)
		rc = next_event(ld, &ev);
	if (rc == 0) {
		if (ev.type != YAML_STREAM_END_EVENT)
			rc = fail_mark(ld, ev.start_mark,
			               "a rule pack holds one YAML document; a second one starts here");
		yaml_event_delete(&ev);
	}
	if (rc < 0) {
		ynode_free(*root);
		*root = NULL;
	}
	return rc;
}

/* --- Typed access to the tree. ------------------------------------------- */

static bool is_null(const ynode *n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};

	if (n->kind != Y_SCALAR || n->style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
		if (strcmp(n->s, nulls[i]) == 0)
			return true;
	return false;
}

static bool is_string(const ynode *n)
{
	return n->kind == Y_SCALAR && !is_null(n);
}

/* What a value is, for "must be X, not Y" messages about strings. */
static const char *kind_name(const ynode *n)
{
	if (n->kind == Y_MAP)
		return "a mapping";
	if (n->kind == Y_SEQ)
		return "a sequence";
	return is_null(n) ? "null" : "a string";
}

/* A key of a known mapping and the value found for it. */
typedef struct field {
	const ynode *key; /* NULL: absent */
	const ynode *val;
} field;

/* Fills fields[i] for names[i]; refuses unknown and duplicate keys. */
static int read_fields(const loader *ld, const ynode *map, const char *what,
                       const char *const names[], size_t nnames, field *fields)
{
	memset(fields, 0, nnames * sizeof *fields);
	for (size_t k = 0; k + 1 < map->nkids; k += 2) {
		const ynode *key = map->kids[k];
		size_t i;

		if (!is_string(key))
			return fail_at(ld, key, "keys must be strings, not %s", kind_name(key));
		if (memchr(key->s, '\0', key->len) != NULL)
			return fail_at(ld, key, "keys must not contain a NUL byte");
		for (i = 0; i < nnames && strcmp(key->s, names[i]) != 0; i++)
			;
		if (i == nnames) {
			ap_buf allowed = AP_BUF_INIT;
			int rc;

			for (size_t j = 0; j < nnames; j++)
				ap_buf_printf(&allowed, "%s%s", j ? ", " : "", names[j]);
			rc = fail_at(ld, key, "unknown key '%s' in %s (allowed: %s)", key->s, what,
			             allowed.data);
			ap_buf_free(&allowed);
			return rc;
		}
		if (fields[i].key != NULL)
			return fail_at(ld, key, "duplicate key '%s' (first at %s:%u:%u)", key->s, ld->file,
			               fields[i].key->line, fields[i].key->col);
		fields[i].key = key;
		fields[i].val = map->kids[k + 1];
	}
	return 0;
}

static int need_field(const loader *ld, const ynode *map, const char *what, const char *name,
                      const field *f)
{
	if (f->key == NULL)
		return fail_at(ld, map, "missing required key '%s' in %s", name, what);
	return 0;
}

static int need_map(const loader *ld, const ynode *n, const char *what)
{
	if (n->kind != Y_MAP)
		return fail_at(ld, n, "%s must be a mapping, not %s", what, kind_name(n));
	return 0;
}

/* A string value: any scalar but null, without NUL bytes (a C string). */
static int string_value(const loader *ld, const ynode *n, const char *name, char **out)
{
	if (!is_string(n))
		return fail_at(ld, n, "'%s' must be a string, not %s", name, kind_name(n));
	if (memchr(n->s, '\0', n->len) != NULL)
		return fail_at(ld, n, "'%s' must not contain a NUL byte", name);
	*out = ap_xstrdup(n->s);
	return 0;
}

static int choice_value(const loader *ld, const ynode *n, const char *name,
                        const char *const choices[], size_t nchoices, const char *choices_text,
                        size_t *out)
{
	if (n->kind == Y_SCALAR && !is_null(n)) {
		for (size_t i = 0; i < nchoices; i++) {
			if (strcmp(n->s, choices[i]) == 0) {
				*out = i;
				return 0;
			}
		}
		return fail_at(ld, n, "'%s' must be one of %s, not '%s'", name, choices_text, n->s);
	}
	return fail_at(ld, n, "'%s' must be one of %s, not %s", name, choices_text, kind_name(n));
}

/* A plain decimal integer in [min, max]. */
static int int_value(const loader *ld, const ynode *n, const char *name, long min, long max,
                     long *out)
{
	const char *p;
	char *end;
	long v;

	if (n->kind != Y_SCALAR || is_null(n))
		return fail_at(ld, n, "'%s' must be an integer, not %s", name, kind_name(n));
	if (n->style != YAML_PLAIN_SCALAR_STYLE)
		return fail_at(ld, n, "'%s' must be an integer, not a quoted string", name);
	p = n->s + (n->s[0] == '+' || n->s[0] == '-');
	if (*p == '\0' || strspn(p, "0123456789") != n->len - (size_t)(p - n->s))
		return fail_at(ld, n, "'%s' must be an integer, not '%s'", name, n->s);
	errno = 0;
	v = strtol(n->s, &end, 10);
	if (errno == ERANGE || v < min || v > max)
		return fail_at(ld, n, "'%s' must be from %ld to %ld, not %s", name, min, max, n->s);
	*out = v;
	return 0;
}

/* A positive decimal number of seconds, at most max. */
static int seconds_value(const loader *ld, const ynode *n, const char *name, double max,
                         double *out)
{
	size_t digits;
	double v;

	if (n->kind != Y_SCALAR || is_null(n))
		return fail_at(ld, n, "'%s' must be a number of seconds, not %s", name, kind_name(n));
	digits = strspn(n->s, "0123456789");
	if (n->s[digits] == '.')
		digits += 1 + strspn(n->s + digits + 1, "0123456789");
	if (n->style != YAML_PLAIN_SCALAR_STYLE || digits == 0 || digits != n->len ||
	    strcmp(n->s, ".") == 0)
		return fail_at(ld, n, "'%s' must be a number of seconds, not '%s'", name, n->s);
	v = strtod(n->s, NULL);
	if (!(v > 0 && v <= max))
		return fail_at(ld, n, "'%s' must be more than 0 and at most %g, not %s", name, max,
		               n->s);
	*out = v;
	return 0;
}

static ap_loc loc_of(const loader *ld, const ynode *n)
{
	return (ap_loc){.file = ld->file, .line = n->line, .col = n->col};
}

static bool node_before(const ynode *a, const ynode *b)
{
	return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/* The later in the file of the fields present among fields[0..n), when more
 * than one is: the one to blame for a conflict. */
static const field *second_present(const field *fields, size_t n, const field **first)
{
	const field *a = NULL;
	const field *b = NULL;

	for (size_t i = 0; i < n; i++) {
		if (fields[i].key == NULL)
			continue;
		if (a == NULL) {
			a = &fields[i];
		} else if (b == NULL) {
			b = &fields[i];
			if (node_before(b->key, a->key)) {
				const field *t = a;
				a = b;
				b = t;
			}
		}
	}
	*first = a;
	return b;
}

/* --- Rules. --------------------------------------------------------------- */

static int id_value(const loader *ld, const ynode *n, char **out)
{
	const ap_ruleset *rs = ld->rs;
	const id_slot *dup;
	const ap_loc *first;
	char *id;
	int rc;

	rc = string_value(ld, n, "id", &id);
	if (rc < 0)
		return rc;
	if (strlen(id) > ID_MAX_LEN) {
		rc = fail_at(ld, n, "id '%.*s...' is longer than %d characters", 32, id, ID_MAX_LEN);
	} else if (strchr(".-", id[0]) != NULL ||
	           strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
	                   strlen(id)) {
		rc = fail_at(ld, n,
		             "invalid id '%s': use letters, digits, '_', '.' and '-', "
		             "starting with a letter, digit or '_'",
		             id);
	} else if ((dup = id_lookup(rs, id)) != NULL) {
		first = dup->probe ? &rs->probes[dup->index].loc : &rs->rules[dup->index].loc;
		rc = fail_at(ld, n, "duplicate id '%s' (first defined at %s:%u:%u)", id, first->file,
		             first->line, first->col);
	}
	if (rc < 0) {
		free(id);
		return rc;
	}
	*out = id;
	return 0;
}

static int path_value(const loader *ld, const ynode *n, ap_rule *r, size_t *paths_cap)
{
	const char *why;
	char *path;
	int rc;

	rc = string_value(ld, n, "file", &path);
	if (rc < 0)
		return rc;
	why = ap_path_refusal(path);
	if (why != NULL) {
		rc = fail_at(ld, n, "path '%s' refused: %s", path, why);
		free(path);
		return rc;
	}
	ap_xgrow((void **)&r->paths, paths_cap, r->npaths + 1, sizeof *r->paths);
	r->paths[r->npaths++] = path;
	return 0;
}

static int file_value(const loader *ld, const ynode *n, ap_rule *r)
{
	size_t paths_cap = 0;
	int rc = 0;

	if (n->kind == Y_SCALAR && !is_null(n))
		return path_value(ld, n, r, &paths_cap);
	if (n->kind != Y_SEQ)
		return fail_at(ld, n, "'file' must be a path or a sequence of paths, not %s",
		               kind_name(n));
	if (n->nkids == 0)
		return fail_at(ld, n, "'file' must not be an empty sequence");
	for (size_t i = 0; i < n->nkids && rc == 0; i++)
		rc = path_value(ld, n->kids[i], r, &paths_cap);
	return rc;
}

/* The 1-based column of byte off of scalar n, when the scalar is written on
 * one line exactly as its value reads (no escapes, no folding); else 0. */
static unsigned scalar_byte_col(const ynode *n, size_t off)
{
	unsigned quote;

	if (n->style == YAML_PLAIN_SCALAR_STYLE)
		quote = 0;
	else if (n->style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	         n->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		quote = 1;
	else
		return 0;
	if (off > n->len || n->end_line != n->line ||
	    n->end_col - n->col != utf8_chars(n->s, n->len) + 2 * quote)
		return 0;
	return n->col + quote + (unsigned)utf8_chars(n->s, off);
}

static int compile_rule(const loader *ld, ap_rule *r, const ynode *pattern)
{
	static const char *const what[] = {
		[AP_MATCH_LITERAL] = "literal",
		[AP_MATCH_TOKEN] = "token pattern",
		[AP_MATCH_REGEX] = "regex",
	};
	/* The matcher wants a concrete language for the pattern; with auto the
	 * file's language is not known before the file is read, so the pattern
	 * is compiled as C (the text's own language still applies at run time). */
	ap_lang lang = r->lang == AP_LANG_AUTO ? AP_LANG_C : r->lang;
	size_t off = 0;
	unsigned col;
	char *why;
	int rc;

	rc = ap_matcher_new(&r->matcher, r->kind, r->pattern, lang, &off);
	if (rc == 0)
		return 0;
	why = ap_xstrdup(ap_error_last());
	if (rc != AP_EINPUT) {
		fail_at(ld, pattern, "cannot compile the %s: %s", what[r->kind], why);
	} else if (r->kind != AP_MATCH_REGEX) {
		rc = fail_at(ld, pattern, "invalid %s: %s", what[r->kind], why);
	} else if ((col = scalar_byte_col(pattern, off)) != 0) {
		rc = fail_lc(ld, pattern->line, col, "invalid %s: %s", what[r->kind], why);
	} else {
		rc = fail_at(ld, pattern, "invalid %s at offset %zu: %s", what[r->kind], off, why);
	}
	free(why);
	return rc;
}

enum {
	RULE_ID,
	RULE_DESCRIPTION,
	RULE_FILE,
	RULE_LANGUAGE,
	RULE_NORMALIZE,
	RULE_LITERAL, /* the three matcher keys, in ap_match_kind order */
	RULE_TOKEN,
	RULE_REGEX,
	RULE_COLLECT,
	RULE_NFIELDS
};

static const char *const rule_keys[RULE_NFIELDS] = {
	"id", "description", "file", "language", "normalize", "literal", "token", "regex", "collect",
};

static const char *const lang_names[] = {"auto", "c", "python", "text"};
static const ap_lang lang_values[] = {AP_LANG_AUTO, AP_LANG_C, AP_LANG_PYTHON, AP_LANG_TEXT};
static const char *const ws_names[] = {"keep", "strip-whitespace"};
static const ap_ws ws_values[] = {AP_WS_KEEP, AP_WS_STRIP};
static const char *const collect_names[] = {"first", "all"};
static const ap_collect collect_values[] = {AP_COLLECT_FIRST, AP_COLLECT_ALL};

static int rule_matcher(const loader *ld, const ynode *map, const field *f, ap_rule *r)
{
	const field *first;
	const field *second = second_present(&f[RULE_LITERAL], 3, &first);
	const ynode *pattern;
	const char *key;
	int rc;

	if (first == NULL)
		return fail_at(ld, map, "missing one of 'literal', 'token' or 'regex' in rule");
	if (second != NULL)
		return fail_at(ld, second->key,
		               "both '%s' and '%s' given: a rule has exactly one of 'literal', "
		               "'token' or 'regex'",
		               first->key->s, second->key->s);
	r->kind = (ap_match_kind)(first - &f[RULE_LITERAL]);
	key = rule_keys[RULE_LITERAL + r->kind];
	pattern = first->val;
	rc = string_value(ld, pattern, key, &r->pattern);
	if (rc < 0)
		return rc;
	if (r->pattern[0] == '\0')
		return fail_at(ld, pattern, "'%s' must not be empty", key);
	/* It would match everywhere. */
	if (r->kind == AP_MATCH_LITERAL && r->ws == AP_WS_STRIP &&
	    strspn(r->pattern, " \t\n\v\f\r\x1c\x1d\x1e\x1f") == strlen(r->pattern))
		return fail_at(ld, pattern,
		               "'literal' is only whitespace, which 'normalize: strip-whitespace' "
		               "removes");
	if (r->kind == AP_MATCH_TOKEN && r->ws == AP_WS_STRIP)
		return fail_at(ld, f[RULE_NORMALIZE].val,
		               "'token' cannot be used with 'normalize: strip-whitespace': tokens are "
		               "told apart by the whitespace between them");
	return compile_rule(ld, r, pattern);
}

static int rule_fields(const loader *ld, const ynode *map, const field *f, ap_rule *r)
{
	size_t choice;
	int rc;

	if ((rc = need_field(ld, map, "rule", "id", &f[RULE_ID])) < 0 ||
	    (rc = id_value(ld, f[RULE_ID].val, &r->id)) < 0)
		return rc;
	r->loc = loc_of(ld, f[RULE_ID].val);
	if (f[RULE_DESCRIPTION].key != NULL &&
	    (rc = string_value(ld, f[RULE_DESCRIPTION].val, "description", &r->description)) < 0)
		return rc;
	if ((rc = need_field(ld, map, "rule", "file", &f[RULE_FILE])) < 0 ||
	    (rc = file_value(ld, f[RULE_FILE].val, r)) < 0)
		return rc;
	r->lang = AP_LANG_AUTO;
	if (f[RULE_LANGUAGE].key != NULL) {
		rc = choice_value(ld, f[RULE_LANGUAGE].val, "language", lang_names, 4,
		                  "auto, c, python, text", &choice);
		if (rc < 0)
			return rc;
		r->lang = lang_values[choice];
	}
	r->ws = AP_WS_KEEP;
	if (f[RULE_NORMALIZE].key != NULL) {
		rc = choice_value(ld, f[RULE_NORMALIZE].val, "normalize", ws_names, 2,
		                  "keep, strip-whitespace", &choice);
		if (rc < 0)
			return rc;
		r->ws = ws_values[choice];
	}
	r->collect = AP_COLLECT_FIRST;
	if (f[RULE_COLLECT].key != NULL) {
		rc = choice_value(ld, f[RULE_COLLECT].val, "collect", collect_names, 2, "first, all",
		                  &choice);
		if (rc < 0)
			return rc;
		r->collect = collect_values[choice];
	}
	return rule_matcher(ld, map, f, r);
}

static int load_rule(const loader *ld, const ynode *map)
{
	ap_ruleset *rs = ld->rs;
	field f[RULE_NFIELDS];
	ap_rule r = {0};
	int rc;

	if ((rc = need_map(ld, map, "a rule")) < 0 ||
	    (rc = read_fields(ld, map, "rule", rule_keys, RULE_NFIELDS, f)) < 0)
		return rc;
	rc = rule_fields(ld, map, f, &r);
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

/* Recursion is bounded: the tree is at most PACK_MAX_DEPTH deep. */
static int expr_value(const loader *ld, const ynode *n, ap_expr **out)
{
	const field *first;
	const field *second;
	field f[3];
	ap_expr *e = ap_xcalloc(1, sizeof *e);
	int rc;

	e->loc = loc_of(ld, n);
	*out = e;
	if (n->kind == Y_SCALAR && !is_null(n)) {
		e->kind = AP_EXPR_REF;
		return string_value(ld, n, "requires", &e->ref);
	}
	if (n->kind != Y_MAP)
		return fail_at(ld, n,
		               "an expression must be a rule or probe id, or a mapping with 'all', "
		               "'any' or 'not', not %s",
		               kind_name(n));
	rc = read_fields(ld, n, "an expression", expr_keys, 3, f);
	if (rc < 0)
		return rc;
	second = second_present(f, 3, &first);
	if (first == NULL)
		return fail_at(ld, n, "an expression mapping needs one of 'all', 'any' or 'not'");
	if (second != NULL)
		return fail_at(ld, second->key,
		               "both '%s' and '%s' given: an expression mapping has exactly one of "
		               "'all', 'any' or 'not' (nest them to combine)",
		               first->key->s, second->key->s);
	e->kind = (ap_expr_kind)(AP_EXPR_ALL + (first - f));
	n = first->val;
	if (e->kind == AP_EXPR_NOT) {
		if (n->kind == Y_SEQ)
			return fail_at(ld, n, "'not' takes one expression, not a sequence");
		e->kids = ap_xcalloc(1, sizeof *e->kids);
		e->nkids = 1;
		return expr_value(ld, n, &e->kids[0]);
	}
	if (n->kind != Y_SEQ)
		return fail_at(ld, n, "'%s' must be a sequence of expressions, not %s", first->key->s,
		               kind_name(n));
	if (n->nkids == 0)
		return fail_at(ld, n, "'%s' must not be empty", first->key->s);
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

/* Integer launch parameters: the field, its range, where it goes; 0 is kept
 * for an absent optional one (the launcher's default). */
static int launch_ints(const loader *ld, const ynode *map, const field *f, ap_launch_spec *l)
{
	const struct {
		int field;
		bool required;
		long min, max;
		int *out;
	} ints[] = {
		{LAUNCH_HEADS, true, 1, 128, &l->heads},
		{LAUNCH_PAD_TO, false, 0, 128, &l->pad_to},
		{LAUNCH_HEAD_DIM, true, 1, 1024, &l->head_dim},
		{LAUNCH_ROPE, true, 0, 1024, &l->rope},
		{LAUNCH_BATCH, false, 1, 1024, &l->batch},
		{LAUNCH_CONTEXT, false, 1, 1 << 20, &l->context},
		{LAUNCH_PAGE_SIZE, false, 1, 1024, &l->page_size},
	};
	long v;
	int rc;

	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		const field *fi = &f[ints[i].field];
		const char *name = launch_keys[ints[i].field];

		if (ints[i].required && (rc = need_field(ld, map, "launch", name, fi)) < 0)
			return rc;
		if (fi->key == NULL)
			continue;
		rc = int_value(ld, fi->val, name, ints[i].min, ints[i].max, &v);
		if (rc < 0)
			return rc;
		*ints[i].out = (int)v;
	}
	if (l->pad_to != 0 && l->pad_to < l->heads)
		return fail_at(ld, f[LAUNCH_PAD_TO].val, "'pad_to' must be 0 or at least heads (%d), not %d",
		               l->heads, l->pad_to);
	if (l->pad_to % 16 != 0)
		return fail_at(ld, f[LAUNCH_PAD_TO].val, "'pad_to' must be a multiple of 16, not %d",
		               l->pad_to);
	return 0;
}

static int launch_value(const loader *ld, const ynode *map, ap_launch_spec **out)
{
	field f[LAUNCH_NFIELDS];
	ap_launch_spec *l;
	int rc;

	if ((rc = need_map(ld, map, "'launch'")) < 0 ||
	    (rc = read_fields(ld, map, "launch", launch_keys, LAUNCH_NFIELDS, f)) < 0)
		return rc;
	l = ap_xcalloc(1, sizeof *l);
	*out = l;
	l->loc = loc_of(ld, map);
	if ((rc = need_field(ld, map, "launch", "kernel", &f[LAUNCH_KERNEL])) < 0 ||
	    (rc = string_value(ld, f[LAUNCH_KERNEL].val, "kernel", &l->kernel)) < 0)
		return rc;
	if (strcmp(l->kernel, "mla_decode") != 0)
		return fail_at(ld, f[LAUNCH_KERNEL].val, "unknown kernel '%s' (known: mla_decode)",
		               l->kernel);
	rc = launch_ints(ld, map, f, l);
	if (rc == 0 && f[LAUNCH_TIMEOUT].key != NULL)
		rc = seconds_value(ld, f[LAUNCH_TIMEOUT].val, "timeout", 86400, &l->timeout_s);
	return rc;
}

enum { PROBE_ID, PROBE_DESCRIPTION, PROBE_REQUIRES, PROBE_LAUNCH, PROBE_NFIELDS };

static const char *const probe_keys[PROBE_NFIELDS] = {"id", "description", "requires", "launch"};

static int probe_fields(const loader *ld, const ynode *map, const field *f, ap_probe *p)
{
	int rc;

	if ((rc = need_field(ld, map, "probe", "id", &f[PROBE_ID])) < 0 ||
	    (rc = id_value(ld, f[PROBE_ID].val, &p->id)) < 0)
		return rc;
	p->loc = loc_of(ld, f[PROBE_ID].val);
	if (f[PROBE_DESCRIPTION].key != NULL &&
	    (rc = string_value(ld, f[PROBE_DESCRIPTION].val, "description", &p->description)) < 0)
		return rc;
	if ((rc = need_field(ld, map, "probe", "requires", &f[PROBE_REQUIRES])) < 0 ||
	    (rc = expr_value(ld, f[PROBE_REQUIRES].val, &p->requires)) < 0)
		return rc;
	if (f[PROBE_LAUNCH].key != NULL)
		return launch_value(ld, f[PROBE_LAUNCH].val, &p->launch);
	return 0;
}

static int load_probe(const loader *ld, const ynode *map)
{
	ap_ruleset *rs = ld->rs;
	field f[PROBE_NFIELDS];
	ap_probe p = {0};
	int rc;

	if ((rc = need_map(ld, map, "a probe")) < 0 ||
	    (rc = read_fields(ld, map, "probe", probe_keys, PROBE_NFIELDS, f)) < 0)
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

enum { TOP_VERSION, TOP_RULES, TOP_PROBES, TOP_NFIELDS };

static const char *const top_keys[TOP_NFIELDS] = {"version", "rules", "probes"};

static int load_items(const loader *ld, const field *f, int (*load_one)(const loader *,
                                                                         const ynode *))
{
	const ynode *seq = f->val;
	int rc = 0;

	if (f->key == NULL)
		return 0;
	if (seq->kind != Y_SEQ)
		return fail_at(ld, seq, "'%s' must be a sequence, not %s", f->key->s, kind_name(seq));
	for (size_t i = 0; i < seq->nkids && rc == 0; i++)
		rc = load_one(ld, seq->kids[i]);
	return rc;
}

static int load_tree(const loader *ld, const ynode *root)
{
	field f[TOP_NFIELDS];
	long version;
	int rc;

	if (root == NULL || is_null(root))
		return fail_lc(ld, 1, 1, "empty rule pack: expected a mapping with 'rules' and/or 'probes'");
	if (root->kind != Y_MAP)
		return fail_at(ld, root,
		               "a rule pack must be a mapping with 'rules' and/or 'probes', not %s",
		               kind_name(root));
	rc = read_fields(ld, root, "the top-level mapping", top_keys, TOP_NFIELDS, f);
	if (rc < 0)
		return rc;
	if (f[TOP_RULES].key == NULL && f[TOP_PROBES].key == NULL)
		return fail_at(ld, root, "missing 'rules' or 'probes' in the top-level mapping");
	if (f[TOP_VERSION].key != NULL) {
		rc = int_value(ld, f[TOP_VERSION].val, "version", LONG_MIN, LONG_MAX, &version);
		if (rc < 0)
			return rc;
		if (version != 1)
			return fail_at(ld, f[TOP_VERSION].val,
			               "unsupported version %ld (this aiter-probe reads version 1)",
			               version);
	}
	rc = load_items(ld, &f[TOP_RULES], load_rule);
	if (rc == 0)
		rc = load_items(ld, &f[TOP_PROBES], load_probe);
	return rc;
}

static int load_text(ap_ruleset *rs, const char *name, const char *yaml, size_t len)
{
	size_t nrules = rs->nrules;
	size_t nprobes = rs->nprobes;
	size_t nfiles = rs->nfiles;
	loader ld = {.rs = rs, .text = yaml, .len = len};
	ynode *root = NULL;
	int rc;

	if (len > PACK_MAX_BYTES) {
		ap_error_set("%s: larger than %zu MiB, the limit for a rule pack", name,
		             PACK_MAX_BYTES >> 20);
		return AP_EINPUT;
	}
	ap_xgrow((void **)&rs->files, &rs->files_cap, rs->nfiles + 1, sizeof *rs->files);
	rs->files[rs->nfiles] = ap_xstrdup(name);
	ld.file = rs->files[rs->nfiles++];

	if (!yaml_parser_initialize(&ld.parser)) {
		ap_error_set("%s: cannot start the YAML parser", name);
		rc = AP_EINTERNAL;
	} else {
		/* UTF-8 only: a UTF-16 file is refused instead of guessed at. */
		yaml_parser_set_encoding(&ld.parser, YAML_UTF8_ENCODING);
		yaml_parser_set_input_string(&ld.parser, (const unsigned char *)yaml, len);
		rc = read_document(&ld, &root);
		yaml_parser_delete(&ld.parser);
	}
	if (rc == 0)
		rc = load_tree(&ld, root);
	ynode_free(root);
	if (rc < 0)
		ruleset_truncate(rs, nrules, nprobes, nfiles);
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

static int load_file(ap_ruleset *rs, const char *path)
{
	char *data = NULL;
	size_t len = 0;
	size_t cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return io_error(path, errno);
	/* Read past the cap so an oversized pack is refused, also when it is a
	 * pipe whose size stat cannot tell. */
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

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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
		qsort(names, nnames, sizeof *names, cmp_names);
	for (size_t i = 0; i < nnames && rc == 0; i++) {
		struct stat st;

		if (stat(names[i], &st) != 0)
			rc = io_error(names[i], errno);
		else if (S_ISREG(st.st_mode))
			rc = load_file(rs, names[i]);
	}
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
	const id_slot *s;
	int rc = 0;

	if (e->kind != AP_EXPR_REF) {
		for (size_t i = 0; i < e->nkids && rc == 0; i++)
			rc = resolve_expr(rs, e->kids[i], deps, ndeps, deps_cap);
		return rc;
	}
	s = id_lookup(rs, e->ref);
	if (s == NULL) {
		ap_error_at(e->loc.file, e->loc.line, e->loc.col, "unknown rule or probe '%s'", e->ref);
		return AP_EINPUT;
	}
	e->ref_probe = s->probe;
	e->ref_index = s->index;
	if (s->probe && deps != NULL) {
		ap_xgrow((void **)deps, deps_cap, *ndeps + 1, sizeof **deps);
		(*deps)[(*ndeps)++] = s->index;
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

int ap_ruleset_finish(ap_ruleset *rs)
{
	size_t n = rs->nprobes;
	probe_deps *deps = ap_xcalloc(n, sizeof *deps);
	size_t *order = ap_xcalloc(n, sizeof *order);
	int rc = 0;

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
