/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/match.h"

/* --- Results -------------------------------------------------------------- */

static void match_clear(ap_match *m)
{
	for (size_t k = 0; k < m->ncaps; k++) {
		free(m->caps[k].name);
		free(m->caps[k].value);
	}
	free(m->caps);
	free(m->text);
	memset(m, 0, sizeof *m);
}

ap_match *ap_match_add_text(ap_match_list *out, unsigned line, const char *text, size_t len)
{
	ap_match *m;

	if (out->n >= AP_MATCH_MAX) {
		out->over++;
		match_clear(&out->spare);
		return &out->spare;
	}
	ap_xgrow((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v);
	m = &out->v[out->n++];
	memset(m, 0, sizeof *m);
	m->line = line;
	if (len > AP_MATCH_TEXT_MAX) {
		/* Cut at a character boundary, and say so. */
		size_t cut = AP_MATCH_TEXT_MAX;
		while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80)
			cut--;
		m->text = ap_xasprintf("%.*s…", (int)cut, text);
	} else {
		m->text = ap_xstrndup(text, len);
	}
	return m;
}

ap_match *ap_match_add_line(ap_match_list *out, const ap_text *t, unsigned line)
{
	const char *text = "";
	size_t len = 0;

	if (out->n < AP_MATCH_MAX)
		ap_text_line_span(t, line, &text, &len);
	return ap_match_add_text(out, line, text, len);
}

ap_match *ap_match_add(ap_match_list *out, const ap_text *t, size_t off)
{
	return ap_match_add_line(out, t, out->n < AP_MATCH_MAX ? ap_text_line(t, off) : 0);
}

void ap_match_capture(ap_match *m, const char *name, const char *value, size_t len)
{
	ap_capture *c;

	m->caps = ap_xrealloc(m->caps, (m->ncaps + 1) * sizeof *m->caps);
	c = &m->caps[m->ncaps++];
	c->name = ap_xstrdup(name);
	c->value = ap_xstrndup(value, len);
}

/* The bytes of s as the manifest writes it, at most (JSON_ENSURE_ASCII). */
static size_t json_text_bytes(const char *s)
{
	size_t n = 2;

	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
		n += *p == '"' || *p == '\\' ? 2 : *p < 0x20 || *p >= 0x7F ? 6 : 1;
	return n;
}

/* A match's keys, braces and indentation in the manifest, and a capture's. */
#define MATCH_FRAME 120
#define CAPTURE_FRAME 24

size_t ap_match_json_bytes(const ap_match_list *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++) {
		const ap_match *m = &l->v[i];
		n += MATCH_FRAME + json_text_bytes(m->text);
		for (size_t k = 0; k < m->ncaps; k++)
			n += CAPTURE_FRAME + json_text_bytes(m->caps[k].name) +
			     json_text_bytes(m->caps[k].value);
	}
	return n;
}

void ap_match_list_copy(ap_match_list *to, const ap_match_list *from)
{
	memset(to, 0, sizeof *to);
	to->v = ap_xcalloc(from->n ? from->n : 1, sizeof *to->v);
	to->n = to->cap = from->n;
	to->over = from->over;
	for (size_t i = 0; i < from->n; i++) {
		const ap_match *m = &from->v[i];
		ap_match *c = &to->v[i];

		c->line = m->line;
		c->text = m->text ? ap_xstrdup(m->text) : NULL;
		c->ncaps = m->ncaps;
		c->caps = m->ncaps ? ap_xcalloc(m->ncaps, sizeof *c->caps) : NULL;
		for (size_t k = 0; k < m->ncaps; k++) {
			c->caps[k].name = ap_xstrdup(m->caps[k].name);
			c->caps[k].value = ap_xstrdup(m->caps[k].value);
		}
	}
}

void ap_match_list_free(ap_match_list *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++)
		match_clear(&l->v[i]);
	match_clear(&l->spare);
	free(l->v);
	memset(l, 0, sizeof *l);
}
