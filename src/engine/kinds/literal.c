/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/kind.h"

/* `literal`: a substring of the normalized text. */

struct literal {
	char *pattern;
	size_t pattern_len;
	/* the needle with whitespace removed, for strip-mode texts */
	char *stripped;
	size_t stripped_len;
};

static int literal_compile(void **state, const char *pattern, ap_ws ws, size_t *err_offset)
{
	struct literal *m;
	size_t len = strlen(pattern);

	(void)err_offset;
	if (len == 0) {
		ap_error_set("empty literal");
		return AP_EINPUT;
	}
	m = ap_xcalloc(1, sizeof *m);
	m->pattern = ap_xstrdup(pattern);
	m->pattern_len = len;
	m->stripped = ap_xmalloc(len + 1);
	for (size_t k = 0; k < len; k++)
		if (!ap_is_space_byte((unsigned char)pattern[k]))
			m->stripped[m->stripped_len++] = pattern[k];
	m->stripped[m->stripped_len] = '\0';
	*state = m;
	/* It would match everywhere. */
	if (ws == AP_WS_STRIP && m->stripped_len == 0) {
		ap_error_set("only whitespace, which 'normalize: strip-whitespace' removes");
		return AP_EINPUT;
	}
	return 0;
}

static void literal_free(void *state)
{
	struct literal *m = state;

	if (m == NULL)
		return;
	free(m->pattern);
	free(m->stripped);
	free(m);
}

static int literal_run(const void *state, const ap_text *t, ap_collect collect, ap_match_list *out)
{
	const struct literal *m = state;
	/* A strip-mode text holds no whitespace, so the needle loses its own,
	 * as vLLM's probe strips both sides. */
	const char *needle = t->ws == AP_WS_STRIP ? m->stripped : m->pattern;
	size_t nlen = t->ws == AP_WS_STRIP ? m->stripped_len : m->pattern_len;
	size_t pos = 0;

	while (pos + nlen <= t->len) {
		const char *hit = memmem(t->s + pos, t->len - pos, needle, nlen);
		if (hit == NULL)
			break;
		ap_match_add(out, t, (size_t)(hit - t->s));
		if (collect == AP_COLLECT_FIRST || out->over)
			break;
		pos = (size_t)(hit - t->s) + nlen;
	}
	return 0;
}


static const ap_text_ops literal_ops = {
	.what = "literal",
	.compile = literal_compile,
	.run = literal_run,
	.free = literal_free,
};

const ap_kind ap_kind_literal = {
	.key = "literal",
	.flags = AP_KIND_FILE | AP_KIND_TEXT | AP_KIND_COLLECT,
	.text = &literal_ops,
};
