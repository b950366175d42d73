/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/yaml-node.h"

/* Limits that keep a hostile or broken pack from costing more than a few tens
 * of megabytes or recursing deeply: real packs are a few kilobytes. */
#define PACK_MAX_NODES 250000
#define PACK_MAX_DEPTH 64

/* --- YAML into a small tree with positions. ------------------------------ */

typedef struct yparse {
	const char *file;
	const char *text;
	size_t len;
	yaml_parser_t parser;
	size_t nnodes;
} yparse;

void ap_ynode_free(ap_ynode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		ap_ynode_free(n->kids[i]);
	free(n->kids);
	free(n->s);
	free(n);
}

static int vfail(const char *file, unsigned line, unsigned col, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static int vfail(const char *file, unsigned line, unsigned col, const char *fmt, va_list ap)
{
	char msg[2048];

	vsnprintf(msg, sizeof msg, fmt, ap);
	ap_error_at(file, line, col, "%s", msg);
	return AP_EINPUT;
}

int ap_y_fail(const char *file, const ap_ynode *n, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(file, n->line, n->col, fmt, ap);
	va_end(ap);
	return rc;
}

int ap_y_fail_lc(const char *file, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(file, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

static int fail_mark(const yparse *ld, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_mark(const yparse *ld, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(ld->file, (unsigned)mark.line + 1, (unsigned)mark.column + 1, fmt, ap);
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

static int parser_error(const yparse *ld)
{
	const yaml_parser_t *p = &ld->parser;

	if (p->error == YAML_MEMORY_ERROR) {
		ap_error_set("%s: out of memory while parsing YAML", ld->file);
		return AP_ENOMEM;
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
		return ap_y_fail_lc(ld->file, line, (unsigned)utf8_chars(ld->text + line_start, off - line_start) + 1,
		               "not UTF-8 text: %s (0x%X)", p->problem, (unsigned)p->problem_value);
	}
	if (p->context != NULL)
		return fail_mark(ld, p->problem_mark, "%s (%s at %zu:%zu)", p->problem, p->context,
		                 p->context_mark.line + 1, p->context_mark.column + 1);
	return fail_mark(ld, p->problem_mark, "%s", p->problem != NULL ? p->problem : "YAML error");
}

static int next_event(yparse *ld, yaml_event_t *ev)
{
	return yaml_parser_parse(&ld->parser, ev) ? 0 : parser_error(ld);
}

static ap_ynode *ynode_new(ap_ykind kind, yaml_mark_t start)
{
	ap_ynode *n = ap_xcalloc(1, sizeof *n);
	n->kind = kind;
	n->line = (unsigned)start.line + 1;
	n->col = (unsigned)start.column + 1;
	return n;
}

/* Refuses what a rule pack has no use for and what could make a small file
 * expensive: aliases (the "billion laughs"), and with them anchors; tags. */
static int check_node_event(const yparse *ld, const yaml_event_t *ev, unsigned depth)
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
static int read_node(yparse *ld, const yaml_event_t *ev, unsigned depth, ap_ynode **out)
{
	yaml_event_type_t end;
	ap_ynode *n;
	int rc;

	rc = check_node_event(ld, ev, depth);
	if (rc < 0)
		return rc;
	ld->nnodes++;
	if (ev->type == YAML_SCALAR_EVENT) {
		n = ynode_new(AP_Y_SCALAR, ev->start_mark);
		n->style = ev->data.scalar.style;
		n->end_line = (unsigned)ev->end_mark.line + 1;
		n->end_col = (unsigned)ev->end_mark.column + 1;
		n->s = ap_xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		n->len = ev->data.scalar.length;
		*out = n;
		return 0;
	}
	if (ev->type == YAML_SEQUENCE_START_EVENT) {
		n = ynode_new(AP_Y_SEQ, ev->start_mark);
		end = YAML_SEQUENCE_END_EVENT;
	} else {
		n = ynode_new(AP_Y_MAP, ev->start_mark);
		end = YAML_MAPPING_END_EVENT;
	}
	for (;;) {
		yaml_event_t kid_ev;
		ap_ynode *kid;

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
	ap_ynode_free(n);
	return rc;
}

static int expect_event(yparse *ld, yaml_event_type_t type)
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
static int read_document(yparse *ld, ap_ynode **root)
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
		ap_ynode_free(*root);
		*root = NULL;
	}
	return rc;
}


int ap_yaml_parse(ap_ynode **root, const char *file, const char *text, size_t len)
{
	yparse ld = {.file = file, .text = text, .len = len};
	int rc;

	*root = NULL;
	if (!yaml_parser_initialize(&ld.parser)) {
		ap_error_set("%s: out of memory starting the YAML parser", file);
		return AP_ENOMEM;
	}
	/* UTF-8 only: a UTF-16 file is refused instead of guessed at. */
	yaml_parser_set_encoding(&ld.parser, YAML_UTF8_ENCODING);
	yaml_parser_set_input_string(&ld.parser, (const unsigned char *)text, len);
	rc = read_document(&ld, root);
	yaml_parser_delete(&ld.parser);
	return rc;
}

/* --- Typed access to the tree. ------------------------------------------- */

bool ap_y_is_null(const ap_ynode *n)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};

	if (n->kind != AP_Y_SCALAR || n->style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
		if (strcmp(n->s, nulls[i]) == 0)
			return true;
	return false;
}

bool ap_y_is_string(const ap_ynode *n)
{
	return n->kind == AP_Y_SCALAR && !ap_y_is_null(n);
}

/* What a value is, for "must be X, not Y" messages about strings. */
const char *ap_y_kind_name(const ap_ynode *n)
{
	if (n->kind == AP_Y_MAP)
		return "a mapping";
	if (n->kind == AP_Y_SEQ)
		return "a sequence";
	return ap_y_is_null(n) ? "null" : "a string";
}

/* Fills fields[i] for names[i]; refuses unknown and duplicate keys. */
int ap_y_fields(const char *file, const ap_ynode *map, const char *what,
                       const char *const names[], size_t nnames, ap_yfield *fields)
{
	memset(fields, 0, nnames * sizeof *fields);
	for (size_t k = 0; k + 1 < map->nkids; k += 2) {
		const ap_ynode *key = map->kids[k];
		size_t i;

		if (!ap_y_is_string(key))
			return ap_y_fail(file, key, "keys must be strings, not %s", ap_y_kind_name(key));
		if (memchr(key->s, '\0', key->len) != NULL)
			return ap_y_fail(file, key, "keys must not contain a NUL byte");
		for (i = 0; i < nnames && strcmp(key->s, names[i]) != 0; i++)
			;
		if (i == nnames) {
			ap_buf allowed = AP_BUF_INIT;
			int rc;

			for (size_t j = 0; j < nnames; j++)
				ap_buf_printf(&allowed, "%s%s", j ? ", " : "", names[j]);
			rc = ap_y_fail(file, key, "unknown key '%s' in %s (allowed: %s)", key->s, what,
			             allowed.data);
			ap_buf_free(&allowed);
			return rc;
		}
		if (fields[i].key != NULL)
			return ap_y_fail(file, key, "duplicate key '%s' (first at %s:%u:%u)", key->s, file,
			               fields[i].key->line, fields[i].key->col);
		fields[i].key = key;
		fields[i].val = map->kids[k + 1];
	}
	return 0;
}

int ap_y_need_field(const char *file, const ap_ynode *map, const char *what, const char *name,
                      const ap_yfield *f)
{
	if (f->key == NULL)
		return ap_y_fail(file, map, "missing required key '%s' in %s", name, what);
	return 0;
}

int ap_y_need_map(const char *file, const ap_ynode *n, const char *what)
{
	if (n->kind != AP_Y_MAP)
		return ap_y_fail(file, n, "%s must be a mapping, not %s", what, ap_y_kind_name(n));
	return 0;
}

/* A string value: any scalar but null, without NUL bytes (a C string). */
int ap_y_string(const char *file, const ap_ynode *n, const char *name, char **out)
{
	if (!ap_y_is_string(n))
		return ap_y_fail(file, n, "'%s' must be a string, not %s", name, ap_y_kind_name(n));
	if (memchr(n->s, '\0', n->len) != NULL)
		return ap_y_fail(file, n, "'%s' must not contain a NUL byte", name);
	*out = ap_xstrdup(n->s);
	return 0;
}

int ap_y_choice(const char *file, const ap_ynode *n, const char *name,
                        const char *const choices[], size_t nchoices, const char *choices_text,
                        size_t *out)
{
	if (n->kind == AP_Y_SCALAR && !ap_y_is_null(n)) {
		for (size_t i = 0; i < nchoices; i++) {
			if (strcmp(n->s, choices[i]) == 0) {
				*out = i;
				return 0;
			}
		}
		return ap_y_fail(file, n, "'%s' must be one of %s, not '%s'", name, choices_text, n->s);
	}
	return ap_y_fail(file, n, "'%s' must be one of %s, not %s", name, choices_text, ap_y_kind_name(n));
}

/* A plain decimal integer in [min, max]. */
int ap_y_int(const char *file, const ap_ynode *n, const char *name, long min, long max,
                     long *out)
{
	const char *p;
	char *end;
	long v;

	if (n->kind != AP_Y_SCALAR || ap_y_is_null(n))
		return ap_y_fail(file, n, "'%s' must be an integer, not %s", name, ap_y_kind_name(n));
	if (n->style != YAML_PLAIN_SCALAR_STYLE)
		return ap_y_fail(file, n, "'%s' must be an integer, not a quoted string", name);
	p = n->s + (n->s[0] == '+' || n->s[0] == '-');
	if (*p == '\0' || strspn(p, "0123456789") != n->len - (size_t)(p - n->s))
		return ap_y_fail(file, n, "'%s' must be an integer, not '%s'", name, n->s);
	errno = 0;
	v = strtol(n->s, &end, 10);
	if (errno == ERANGE || v < min || v > max)
		return ap_y_fail(file, n, "'%s' must be from %ld to %ld, not %s", name, min, max, n->s);
	*out = v;
	return 0;
}

/* A positive decimal number of seconds, at most max. */
int ap_y_seconds(const char *file, const ap_ynode *n, const char *name, double max,
                         double *out)
{
	size_t digits;
	double v;

	if (n->kind != AP_Y_SCALAR || ap_y_is_null(n))
		return ap_y_fail(file, n, "'%s' must be a number of seconds, not %s", name, ap_y_kind_name(n));
	digits = strspn(n->s, "0123456789");
	if (n->s[digits] == '.')
		digits += 1 + strspn(n->s + digits + 1, "0123456789");
	if (n->style != YAML_PLAIN_SCALAR_STYLE || digits == 0 || digits != n->len ||
	    strcmp(n->s, ".") == 0)
		return ap_y_fail(file, n, "'%s' must be a number of seconds, not '%s'", name, n->s);
	v = strtod(n->s, NULL);
	if (!(v > 0 && v <= max))
		return ap_y_fail(file, n, "'%s' must be more than 0 and at most %g, not %s", name, max,
		               n->s);
	*out = v;
	return 0;
}

static bool node_before(const ap_ynode *a, const ap_ynode *b)
{
	return a->line < b->line || (a->line == b->line && a->col < b->col);
}

/* The later in the file of the fields present among fields[0..n), when more
 * than one is: the one to blame for a conflict. */
const ap_yfield *ap_y_second_present(const ap_yfield *fields, size_t n, const ap_yfield **first)
{
	const ap_yfield *a = NULL;
	const ap_yfield *b = NULL;

	for (size_t i = 0; i < n; i++) {
		if (fields[i].key == NULL)
			continue;
		if (a == NULL) {
			a = &fields[i];
		} else if (b == NULL) {
			b = &fields[i];
			if (node_before(b->key, a->key)) {
				const ap_yfield *t = a;
				a = b;
				b = t;
			}
		}
	}
	*first = a;
	return b;
}


/* The 1-based column of byte off of scalar n, when the scalar is written on
 * one line exactly as its value reads (no escapes, no folding); else 0. */
unsigned ap_y_scalar_byte_col(const ap_ynode *n, size_t off)
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

/* One string, or a non-empty sequence of them. */
int ap_y_strings(const char *file, const ap_ynode *n, const char *name, char ***out, size_t *count)
{
	size_t k;
	int rc = 0;

	*out = NULL;
	*count = 0;
	if (n->kind == AP_Y_SCALAR && !ap_y_is_null(n)) {
		*out = ap_xcalloc(1, sizeof **out);
		*count = 1;
		return ap_y_string(file, n, name, &(*out)[0]);
	}
	if (n->kind != AP_Y_SEQ)
		return ap_y_fail(file, n, "'%s' must be a string or a sequence of strings, not %s",
		                 name, ap_y_kind_name(n));
	if (n->nkids == 0)
		return ap_y_fail(file, n, "'%s' must not be an empty sequence", name);
	*out = ap_xcalloc(n->nkids, sizeof **out);
	for (k = 0; k < n->nkids && rc == 0; k++) {
		rc = ap_y_string(file, n->kids[k], name, &(*out)[k]);
		*count = k + 1;
	}
	return rc;
}

void ap_y_strings_free(char **v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(v[k]);
	free(v);
}
