/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/kinds/version.h"
#include "engine/lang/pep440.h"

/* `version`: AITER's version, as its package states it, in a PEP 440
 * range (`version: ">=0.1.10, <0.2"`). */

#define VERSION_FILE "aiter/_version.py"

/* setuptools_scm writes `__version__ = version = '0.1.20'` or similar: the
 * first line that assigns __version__ or version a quoted string. *line is
 * its 1-based line. */
char *ap_version_in(const char *data, size_t len, unsigned *line)
{
	const char *p = data;
	const char *end = data + len;

	for (*line = 1; p < end; (*line)++) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *stop = eol ? eol : end;
		size_t n = (size_t)(stop - p);

		if ((n >= 11 && memcmp(p, "__version__", 11) == 0) ||
		    (n >= 7 && memcmp(p, "version", 7) == 0)) {
			const char *q = p;
			while (q < stop && *q != '\'' && *q != '"')
				q++;
			if (q < stop) {
				const char *close = memchr(q + 1, *q, (size_t)(stop - q - 1));
				if (close != NULL && close > q + 1)
					return ap_xstrndup(q + 1, (size_t)(close - q - 1));
			}
		}
		p = stop + 1;
	}
	return NULL;
}

char *ap_aiter_version(ap_reader *r)
{
	const ap_file *f = ap_reader_get(r, VERSION_FILE);
	unsigned line;

	return f->status == AP_FILE_OK ? ap_version_in(f->data, f->len, &line) : NULL;
}

static int version_load(const ap_kind_load *l, void **state)
{
	ap_pep440_spec *spec;
	char *text;
	size_t off = 0;
	unsigned col;
	int rc;

	*state = NULL;
	rc = ap_y_string(l->pack, l->arg, "version", &text);
	if (rc < 0)
		return rc;
	rc = ap_pep440_spec_new(&spec, text, &off);
	free(text);
	if (rc < 0) {
		char *why = ap_xstrdup(ap_error_last());
		if ((col = ap_y_scalar_byte_col(l->arg, off)) != 0)
			rc = ap_y_fail_lc(l->pack, l->arg->line, col, "%s", why);
		else
			rc = ap_y_fail(l->pack, l->arg, "%s", why);
		free(why);
		return rc;
	}
	*state = spec;
	return 0;
}

static void version_run(const void *state, ap_kind_run *run)
{
	ap_rule_result *res = run->res;
	const ap_file *f = ap_reader_get(run->reader, VERSION_FILE);
	const ap_text *t;
	ap_pep440 v;
	unsigned line;
	char *text;

	res->file = f->path;
	if (f->status == AP_FILE_MISSING) {
		res->status = AP_RULE_MISSING;
		res->reason = ap_xstrdup("no such file: " VERSION_FILE);
		return;
	}
	if (f->status != AP_FILE_OK) {
		ap_rule_set_error(res, "%s", f->reason);
		return;
	}
	text = ap_version_in(f->data, f->len, &line);
	if (text == NULL) {
		ap_rule_set_error(res, "%s states no version", VERSION_FILE);
		return;
	}
	if (ap_pep440_parse(&v, text) < 0) {
		ap_rule_set_error(res, "version '%s' is not a PEP 440 version", text);
		free(text);
		return;
	}
	if (!ap_pep440_spec_match(state, &v)) {
		res->status = AP_RULE_UNMATCHED;
		res->reason = ap_xasprintf("version %s is outside %s", text, run->rule->pattern);
		free(text);
		return;
	}
	t = ap_reader_text(run->reader, f, AP_LANG_TEXT, AP_WS_KEEP);
	if (t == NULL) {
		ap_rule_set_error(res, "%s", ap_error_last());
		free(text);
		return;
	}
	ap_match_capture(ap_match_add_line(&res->matches, t, line), "version", text, strlen(text));
	res->status = AP_RULE_MATCHED;
	free(text);
}

static void version_free(void *state)
{
	ap_pep440_spec_free(state);
}

const ap_kind ap_kind_version = {
	.key = "version",
	.load = version_load,
	.run = version_run,
	.free = version_free,
};
