/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/signature.h"

#define DEFAULT_MARK "=\xe2\x80\xa6" /* "=…" */

/* A name as the text may hold one: no separator, marker or space in it. */
static bool plain_name(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (strchr(" ,=*/()\t\n\r", s[i]) != NULL || s[i] == '\0')
			return false;
	return true;
}

int ap_sig_parse(const char *text, ap_sig_param *out, size_t cap, size_t *n, char *why,
                 size_t whylen)
{
	ap_sig_kind kind = AP_SIG_POS;
	bool slash = false, varkw = false;
	const char *s = text;

	*n = 0;
	if (*s == '\0')
		return 0;
	for (;;) {
		const char *end = strstr(s, ", ");
		size_t len = end != NULL ? (size_t)(end - s) : strlen(s);
		ap_sig_param p = {.kind = kind};

		if (varkw) {
			snprintf(why, whylen, "a parameter after **%.*s", (int)out[*n - 1].len,
			         out[*n - 1].name);
			return -1;
		}
		if (len == 1 && *s == '/') {
			if (slash || kind != AP_SIG_POS || *n == 0) {
				snprintf(why, whylen, "a '/' that follows no positional parameter");
				return -1;
			}
			slash = true;
			for (size_t i = 0; i < *n; i++)
				out[i].kind = AP_SIG_POSONLY;
		} else if (len == 1 && *s == '*') {
			if (kind != AP_SIG_POS || end == NULL) {
				snprintf(why, whylen, "a bare '*' with no keyword-only parameter after it");
				return -1;
			}
			kind = AP_SIG_KWONLY;
		} else {
			if (len >= 2 && s[0] == '*' && s[1] == '*')
				p.kind = AP_SIG_VARKW, s += 2, len -= 2, varkw = true;
			else if (len >= 1 && s[0] == '*') {
				if (kind != AP_SIG_POS) {
					snprintf(why, whylen, "a second '*'");
					return -1;
				}
				p.kind = AP_SIG_VARARGS, s++, len--, kind = AP_SIG_KWONLY;
			}
			if (p.kind != AP_SIG_VARARGS && p.kind != AP_SIG_VARKW &&
			    len > strlen(DEFAULT_MARK) &&
			    memcmp(s + len - strlen(DEFAULT_MARK), DEFAULT_MARK, strlen(DEFAULT_MARK)) == 0)
				p.has_default = true, len -= strlen(DEFAULT_MARK);
			if (!plain_name(s, len)) {
				snprintf(why, whylen, "'%.*s' is no parameter", (int)(len > 64 ? 64 : len), s);
				return -1;
			}
			if (*n == cap) {
				snprintf(why, whylen, "more than %zu parameters", cap);
				return -1;
			}
			p.name = s;
			p.len = len;
			out[(*n)++] = p;
		}
		if (end == NULL)
			return 0;
		s = end + 2;
	}
}

static const ap_sig_param *named(const ap_sig_param *p, size_t n, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < n; i++)
		if (p[i].len == len && memcmp(p[i].name, name, len) == 0)
			return &p[i];
	return NULL;
}

static bool positional_kind(ap_sig_kind k)
{
	return k == AP_SIG_POSONLY || k == AP_SIG_POS;
}

/* Names in reasons are cut here, so that any reason fits AP_SIG_WHY_BYTES. */
#define NAME_MAX_SHOWN 200

bool ap_sig_binds(const ap_sig_param *p, size_t n, size_t positional, const char *const *kw,
                  size_t nkw, bool *bound, char *why, size_t whylen)
{
	bool varargs = false, varkw = false;
	size_t npos = 0, given = 0;

	for (size_t i = 0; i < n; i++) {
		varargs |= p[i].kind == AP_SIG_VARARGS;
		varkw |= p[i].kind == AP_SIG_VARKW;
		npos += positional_kind(p[i].kind);
		bound[i] = false;
	}
	if (positional > npos && !varargs) {
		snprintf(why, whylen, "it takes at most %zu positional arguments", npos);
		return false;
	}
	for (size_t i = 0; i < n && given < positional; i++)
		if (positional_kind(p[i].kind))
			bound[i] = true, given++;
	for (size_t k = 0; k < nkw; k++) {
		const ap_sig_param *q = named(p, n, kw[k]);
		size_t i = q ? (size_t)(q - p) : 0;
		int shown = NAME_MAX_SHOWN;

		if (q == NULL || q->kind == AP_SIG_VARARGS || q->kind == AP_SIG_VARKW ||
		    (q->kind == AP_SIG_POSONLY && !bound[i])) {
			/* **kwargs takes it, positional-only names included */
			if (varkw)
				continue;
			if (q != NULL && q->kind == AP_SIG_POSONLY)
				snprintf(why, whylen, "'%.*s' is positional-only, given by keyword", shown,
				         kw[k]);
			else
				snprintf(why, whylen, "no parameter '%.*s' (and no **kwargs)", shown, kw[k]);
			return false;
		} else if (bound[i]) {
			if (q->kind == AP_SIG_POSONLY && varkw)
				continue;
			snprintf(why, whylen, "'%.*s' given both by position and by keyword", shown, kw[k]);
			return false;
		}
		bound[i] = true;
	}
	for (size_t i = 0; i < n; i++) {
		if (!bound[i] && !p[i].has_default && p[i].kind != AP_SIG_VARARGS &&
		    p[i].kind != AP_SIG_VARKW) {
			snprintf(why, whylen, "required parameter '%.*s' left unbound",
			         (int)(p[i].len > NAME_MAX_SHOWN ? NAME_MAX_SHOWN : p[i].len), p[i].name);
			return false;
		}
	}
	return true;
}
