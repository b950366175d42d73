/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/glob-pattern.h"

typedef struct seg {
	ap_glob_seg_kind kind;
	char *text;
	size_t len;
} seg;

struct ap_glob {
	char *pattern;
	seg *v;
	size_t n;
};

/* Walks the set at p[0] == '[' in a NUL-terminated segment: returns its length
 * with the brackets, or 0 when it has no ']'; *hit says whether c is in it
 * (negation applied) and *reversed is the offset of a reversed range, or 0.
 * The one walk serves compiling and matching, so that both read a set alike. */
static size_t walk_set(const char *p, unsigned char c, bool *hit, size_t *reversed)
{
	size_t k = 1;
	bool negated = p[k] == '!';
	bool in = false;

	*reversed = 0;
	k += negated;
	/* A ']' right after the opening is a member. */
	for (bool first = true; first || p[k] != ']'; first = false) {
		unsigned char lo = (unsigned char)p[k];
		unsigned char hi = lo;

		if (lo == '\0')
			return 0;
		if (p[k + 1] == '-' && p[k + 2] != ']' && p[k + 2] != '\0') {
			hi = (unsigned char)p[k + 2];
			if (lo > hi && *reversed == 0)
				*reversed = k;
			k += 3;
		} else {
			k++;
		}
		in = in || (lo <= c && c <= hi);
	}
	*hit = in != negated;
	return k + 1;
}

/* '*' matches any run: on a mismatch the last star takes one more byte and
 * the rest starts over, which is enough (an earlier star never needs more,
 * the last one being able to take anything), so the time is at most the
 * product of the lengths, never exponential. */
static bool pattern_match(const char *p, const char *name, size_t n)
{
	size_t pi = 0;
	size_t ni = 0;
	size_t star_p = SIZE_MAX;
	size_t star_n = 0;

	/* A hidden name needs a literal '.' first. */
	if (name[0] == '.' && p[0] != '.')
		return false;
	while (ni < n) {
		if (p[pi] == '*') {
			star_p = ++pi;
			star_n = ni;
			continue;
		}
		if (p[pi] != '\0') {
			size_t len = 1;
			size_t reversed;
			bool ok;

			if (p[pi] == '?')
				ok = true;
			else if (p[pi] == '[')
				len = walk_set(p + pi, (unsigned char)name[ni], &ok, &reversed);
			else
				ok = p[pi] == name[ni];
			if (ok) {
				pi += len;
				ni++;
				continue;
			}
		}
		if (star_p == SIZE_MAX)
			return false;
		pi = star_p;
		ni = ++star_n;
	}
	while (p[pi] == '*')
		pi++;
	return p[pi] == '\0';
}

static bool is_dots(const char *name, size_t n)
{
	return (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.');
}

/* name is n bytes without '/', neither empty nor "." nor "..". */
static bool seg_match(const seg *s, const char *name, size_t n)
{
	switch (s->kind) {
	case AP_GLOB_LITERAL:
		return n == s->len && memcmp(name, s->text, n) == 0;
	case AP_GLOB_ANY_DEPTH:
		return name[0] != '.';
	case AP_GLOB_PATTERN:
		return pattern_match(s->text, name, n);
	}
	return false;
}

static int glob_error(size_t *err_offset, size_t off, const char *why)
{
	ap_error_set("invalid glob pattern at offset %zu: %s", off, why);
	if (err_offset != NULL)
		*err_offset = off;
	return AP_EINPUT;
}

/* Classifies the segment text at s (NUL-terminated, at offset base of the
 * pattern). */
static int compile_segment(seg *s, size_t base, size_t *err_offset)
{
	const char *t = s->text;

	if (is_dots(t, s->len))
		return glob_error(err_offset, base, s->len == 1 ? "'.' segment" : "'..' segment");
	if (strcmp(t, "**") == 0) {
		s->kind = AP_GLOB_ANY_DEPTH;
		return 0;
	}
	s->kind = AP_GLOB_LITERAL;
	for (size_t j = 0; j < s->len; j++) {
		bool hit;
		size_t len;
		size_t reversed;

		switch (t[j]) {
		case '*':
			if (t[j + 1] == '*')
				return glob_error(err_offset, base + j,
				                  "'**' must be a whole segment");
			s->kind = AP_GLOB_PATTERN;
			break;
		case '?':
			s->kind = AP_GLOB_PATTERN;
			break;
		case '[':
			len = walk_set(t + j, 0, &hit, &reversed);
			if (len == 0)
				return glob_error(err_offset, base + j, "unterminated '['");
			if (reversed != 0)
				return glob_error(err_offset, base + j + reversed,
				                  "reversed range");
			s->kind = AP_GLOB_PATTERN;
			j += len - 1;
			break;
		}
	}
	return 0;
}

int ap_glob_new(ap_glob **out, const char *pattern, size_t *err_offset)
{
	ap_glob *g;
	size_t cap = 0;
	size_t i = 0;

	*out = NULL;
	if (pattern[0] == '\0')
		return glob_error(err_offset, 0, "empty pattern");
	if (pattern[0] == '/')
		return glob_error(err_offset, 0, "absolute pattern");
	g = ap_xcalloc(1, sizeof *g);
	g->pattern = ap_xstrdup(pattern);
	for (;;) {
		size_t len = strcspn(pattern + i, "/");
		seg *s;
		int rc;

		if (len == 0) {
			ap_glob_free(g);
			return glob_error(err_offset, i, "empty segment");
		}
		ap_xgrow((void **)&g->v, &cap, g->n + 1, sizeof *g->v);
		s = &g->v[g->n++];
		s->text = ap_xstrndup(pattern + i, len);
		s->len = len;
		rc = compile_segment(s, i, err_offset);
		if (rc < 0) {
			ap_glob_free(g);
			return rc;
		}
		i += len;
		if (pattern[i] == '\0')
			break;
		i++;
	}
	*out = g;
	return 0;
}

void ap_glob_free(ap_glob *g)
{
	if (g == NULL)
		return;
	for (size_t k = 0; k < g->n; k++)
		free(g->v[k].text);
	free(g->v);
	free(g->pattern);
	free(g);
}

/* States before which a "**" stands are also reached without it. */
static void close_states(const ap_glob *g, bool *state)
{
	for (size_t k = 0; k < g->n; k++)
		if (state[k] && g->v[k].kind == AP_GLOB_ANY_DEPTH)
			state[k + 1] = true;
}

/* The pattern as an automaton whose state k means "segments before k are
 * matched": every state is followed at once, so "**" after "**" costs no
 * backtracking and the time is the path's segments times the pattern's. */
bool ap_glob_match(const ap_glob *g, const char *path)
{
	bool *cur = ap_xcalloc(2 * (g->n + 1), sizeof *cur);
	bool *next = cur + g->n + 1;
	const char *p = path;
	bool live = true;
	bool result;

	cur[0] = true;
	close_states(g, cur);
	for (;;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || is_dots(p, n)) {
			live = false;
			break;
		}
		memset(next, 0, (g->n + 1) * sizeof *next);
		live = false;
		for (size_t k = 0; k < g->n; k++) {
			if (!cur[k] || !seg_match(&g->v[k], p, n))
				continue;
			next[g->v[k].kind == AP_GLOB_ANY_DEPTH ? k : k + 1] = true;
			live = true;
		}
		close_states(g, next);
		memcpy(cur, next, (g->n + 1) * sizeof *cur);
		if (!live || p[n] == '\0')
			break;
		p += n + 1;
	}
	result = live && cur[g->n];
	free(cur);
	return result;
}

const char *ap_glob_pattern(const ap_glob *g)
{
	return g->pattern;
}

size_t ap_glob_nsegments(const ap_glob *g)
{
	return g->n;
}

ap_glob_seg_kind ap_glob_segment_kind(const ap_glob *g, size_t k)
{
	return g->v[k].kind;
}

const char *ap_glob_segment_text(const ap_glob *g, size_t k)
{
	return g->v[k].text;
}

bool ap_glob_segment_match(const ap_glob *g, size_t k, const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || is_dots(name, n) || memchr(name, '/', n) != NULL)
		return false;
	return seg_match(&g->v[k], name, n);
}
