/* SPDX-License-Identifier: MIT */
/* libFuzzer target: normalize a text and run a matcher over it.
 *
 * Input layout: byte 0 picks the language (bits 0-1), the whitespace mode
 * (bit 2) and the matcher kind (bits 3-4, 3 reads as regex); byte 1 is the
 * pattern's length; then the pattern (up to its first NUL, as a rule's
 * pattern is a C string), then the text. Every matcher is run in both
 * collect modes: a pathological regex must end through its match limits. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/match.h"
#include "engine/lang/normalize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const ap_lang langs[4] = {AP_LANG_AUTO, AP_LANG_TEXT, AP_LANG_C, AP_LANG_PYTHON};
static const char *const kinds[4] = {"literal", "token", "regex", "regex"};

/* The offset map must lead back into the original in order, or lines would
 * be reported out of place. */
static void check_map(const ap_text *t)
{
	for (size_t i = 0; i < t->len; i++)
		if (t->map[i] >= t->orig_len || t->map[i] > t->map[i + 1])
			__builtin_trap();
	if (t->map[t->len] != t->orig_len)
		__builtin_trap();
}

static void run_both(const ap_matcher *m, const ap_text *t)
{
	static const ap_collect collects[2] = {AP_COLLECT_FIRST, AP_COLLECT_ALL};

	for (size_t k = 0; k < 2; k++) {
		ap_match_list found = {NULL, 0, 0};
		ap_matcher_run(m, t, collects[k], &found);
		for (size_t i = 0; i < found.n; i++)
			if (found.v[i].line < 1 || found.v[i].line > t->nlines)
				__builtin_trap();
		ap_match_list_free(&found);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ap_lang lang;
	ap_ws ws;
	const char *kind;
	size_t plen;
	char *pattern;
	ap_matcher *m;
	ap_text t;

	if (size < 2)
		return 0;
	lang = langs[data[0] & 3];
	ws = (data[0] & 4) ? AP_WS_STRIP : AP_WS_KEEP;
	kind = kinds[(data[0] >> 3) & 3];
	plen = data[1];
	if (plen > size - 2)
		plen = size - 2;
	pattern = ap_xstrndup((const char *)data + 2, plen);
	if (ap_normalize(&t, (const char *)data + 2 + plen, size - 2 - plen, lang, ws) < 0)
		__builtin_trap();
	check_map(&t);
	if (ap_matcher_new(&m, kind, pattern, ws, NULL) == 0) {
		run_both(m, &t);
		ap_matcher_free(m);
	}
	ap_text_free(&t);
	free(pattern);
	ap_error_clear();
	return 0;
}
