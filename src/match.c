#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ap-error.h"
#include "ap-util.h"
#include "kind.h"
#include "match.h"

/* --- Results -------------------------------------------------------------- */

ap_match *ap_match_add_text(ap_match_list *out, unsigned line, const char *text, size_t len)
{
	ap_match *m;

	ap_xgrow((void **)&out->v, &out->cap, out->n + 1, sizeof *out->v);
	m = &out->v[out->n++];
	memset(m, 0, sizeof *m);
	m->line = line;
	m->text = ap_xstrndup(text, len);
	return m;
}

ap_match *ap_match_add_line(ap_match_list *out, const ap_text *t, unsigned line)
{
	const char *text;
	size_t len;

	ap_text_line_span(t, line, &text, &len);
	return ap_match_add_text(out, line, text, len);
}

ap_match *ap_match_add(ap_match_list *out, const ap_text *t, size_t off)
{
	return ap_match_add_line(out, t, ap_text_line(t, off));
}

void ap_match_capture(ap_match *m, const char *name, const char *value, size_t len)
{
	ap_capture *c;

	m->caps = ap_xrealloc(m->caps, (m->ncaps + 1) * sizeof *m->caps);
	c = &m->caps[m->ncaps++];
	c->name = ap_xstrdup(name);
	c->value = ap_xstrndup(value, len);
}

void ap_match_list_free(ap_match_list *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++) {
		for (size_t k = 0; k < l->v[i].ncaps; k++) {
			free(l->v[i].caps[k].name);
			free(l->v[i].caps[k].value);
		}
		free(l->v[i].caps);
		free(l->v[i].text);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
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
	void *state;
	int rc;

	*out = NULL;
	if (k == NULL || k->text == NULL) {
		ap_error_set("'%s' is not a text kind", kind);
		return AP_EINTERNAL;
	}
	rc = k->text->compile(&state, pattern, ws, &off);
	if (err_offset != NULL)
		*err_offset = off;
	if (rc < 0)
		return rc;
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
