/* SPDX-License-Identifier: MIT */
/* The tree's modules as Python's finder finds them: their files, their
 * dotted names, relative imports made absolute, and the map of old module
 * names AITER's own finder reads. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/lang/python/pypath.h"

const ap_file *ap_pypath_file(ap_reader *r, const char *name, bool *package)
{
	char *base = ap_xstrdup(name);
	const ap_file *found = NULL;

	for (char *p = base; *p; p++)
		if (*p == '.')
			*p = '/';
	for (int pkg = 1; pkg >= 0 && found == NULL; pkg--) {
		char *path = ap_xasprintf(pkg ? "%s/__init__.py" : "%s.py", base);
		const ap_file *f = ap_reader_get(r, path);
		free(path);
		if (f->status != AP_FILE_MISSING) {
			found = f;
			*package = pkg;
		}
	}
	free(base);
	return found;
}

char *ap_pypath_module(const char *path, bool *package)
{
	size_t len = strlen(path);
	char *name;

	if (len > 3 && strcmp(path + len - 3, ".py") == 0)
		len -= 3;
	*package = len >= 9 && strncmp(path + len - 9, "/__init__", 9) == 0;
	if (*package)
		len -= 9;
	name = ap_xstrndup(path, len);
	for (char *p = name; *p; p++)
		if (*p == '/')
			*p = '.';
	return name;
}

char *ap_pypath_absolute(const char *of, bool package, const char *written)
{
	size_t dots = strspn(written, ".");
	char *base, *out;

	if (dots == 0)
		return ap_xstrdup(written);
	base = ap_xstrdup(of);
	/* A module's package is its parent; a package is its own. */
	for (size_t k = package ? 1 : 0; k < dots; k++) {
		char *dot = strrchr(base, '.');
		if (dot == NULL) {
			free(base);
			return NULL;
		}
		*dot = '\0';
	}
	out = written[dots] ? ap_xasprintf("%s.%s", base, written + dots) : ap_xstrdup(base);
	free(base);
	return out;
}

int ap_pypath_in_tree(ap_reader *r, const char *name)
{
	const char *last = strrchr(name, '.');
	char *base = ap_xstrdup(name), *folder;
	const ap_file *listing;
	size_t len;
	bool package;
	int found = 0;

	if (ap_pypath_file(r, name, &package) != NULL) {
		free(base);
		return 1;
	}
	for (char *p = base; *p; p++)
		if (*p == '.')
			*p = '/';
	folder = ap_xasprintf("%s/", base);
	listing = ap_reader_get(r, folder);
	free(folder);
	if (listing->status == AP_FILE_OK) {
		free(base);
		return 1;
	}
	last = last ? last + 1 : name;
	len = strlen(last);
	base[strlen(base) - len] = '\0';
	listing = ap_reader_get(r, base[0] ? base : "./");
	free(base);
	if (listing->status != AP_FILE_OK)
		return listing->status == AP_FILE_MISSING ? 0 : -1;
	for (const char *at = listing->data, *end = at + listing->len; at < end && found == 0;) {
		const char *nl = memchr(at, '\n', (size_t)(end - at));
		size_t n = nl ? (size_t)(nl - at) : (size_t)(end - at);
		if (n > len && strncmp(at, last, len) == 0 && at[len] == '.')
			found = -1;
		at += n + 1;
	}
	return found;
}

char *ap_pypath_importable(const char *path)
{
	size_t len = strlen(path);
	bool package, start = true;
	char *name;

	if (len < 4 || strcmp(path + len - 3, ".py") != 0)
		return NULL;
	name = ap_pypath_module(path, &package);
	for (const char *p = name; *p; p++) {
		bool ok = *p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		          (!start && *p >= '0' && *p <= '9') || (!start && *p == '.' && p[1] != '\0');
		start = *p == '.';
		if (!ok) {
			free(name);
			return NULL;
		}
	}
	return name;
}

/* The next token of s[0, n) from *i on, comments, line ends and line
 * continuations skipped (the map is a bracketed literal); its end, or n. */
static size_t compat_token(const char *s, size_t n, size_t *i)
{
	for (;;) {
		while (*i < n && strchr(" \t\f\r\n", s[*i]) != NULL && s[*i] != '\0')
			(*i)++;
		if (*i < n && s[*i] == '\\' && *i + 1 < n && (s[*i + 1] == '\n' || s[*i + 1] == '\r'))
			*i += 2;
		else if (*i < n && s[*i] == '#')
			*i = ap_py_line_end(s, *i, n);
		else
			return *i < n ? ap_py_token_end(s, *i, n) : n;
	}
}

/* The str literal s[a, e) without prefix or escapes, copied; NULL otherwise. */
static char *compat_string(const char *s, size_t a, size_t e)
{
	size_t q = e - a >= 6 && (memcmp(s + a, "'''", 3) == 0 || memcmp(s + a, "\"\"\"", 3) == 0)
	                   ? 3
	                   : 1;

	if (e - a < 2 * q || (s[a] != '\'' && s[a] != '"') || s[e - 1] != s[a] ||
	    memchr(s + a, '\\', e - a) != NULL)
		return NULL;
	return ap_xstrndup(s + a + q, e - a - 2 * q);
}

/* Whether the token s[i, e) is the one byte c. */
static bool compat_punct(const char *s, size_t i, size_t e, char c)
{
	return e == i + 1 && s[i] == c;
}

bool ap_pycompat_read(const ap_py_module *m, const ap_py_binding *b, struct ap_pycompat *cm)
{
	const char *s = m->src;
	size_t n = m->src_len, i = 0, e;

	for (unsigned line = 1; line < b->line && i < n; line++)
		i = ap_py_line_end(s, i, n) + 1;
	if (i == 0 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	e = compat_token(s, n, &i);
	if (e - i != strlen(AP_PYCOMPAT_MAP) || memcmp(s + i, AP_PYCOMPAT_MAP, e - i) != 0)
		return false;
	i = e;
	e = compat_token(s, n, &i);
	if (!compat_punct(s, i, e, '='))
		return false;
	i = e;
	e = compat_token(s, n, &i);
	if (!compat_punct(s, i, e, '{'))
		return false;
	for (;;) {
		struct ap_pycompat_entry en;
		i = e;
		e = compat_token(s, n, &i);
		if (compat_punct(s, i, e, '}'))
			return true;
		if ((en.old = compat_string(s, i, e)) == NULL)
			return false;
		i = e;
		e = compat_token(s, n, &i);
		en.new = NULL;
		if (compat_punct(s, i, e, ':')) {
			i = e;
			e = compat_token(s, n, &i);
			en.new = compat_string(s, i, e);
		}
		if (en.new == NULL) {
			free(en.old);
			return false;
		}
		ap_xgrow((void **)&cm->v, &cm->cap, cm->n + 1, sizeof *cm->v);
		cm->v[cm->n++] = en;
		i = e;
		e = compat_token(s, n, &i);
		if (compat_punct(s, i, e, '}'))
			return true;
		if (!compat_punct(s, i, e, ','))
			return false;
	}
}

#define COMPAT_FINDER "_backward_compat_find_spec"

int ap_pycompat_child(struct ap_pycompat_state *cm, const ap_py_module *m, const char *path,
                      const char *child, const char **to)
{
	const ap_py_binding *map, *finder;

	if (cm->state == 0) {
		map = ap_py_lookup(m, AP_PYCOMPAT_MAP);
		finder = ap_py_lookup(m, COMPAT_FINDER);
		cm->state = 1;
		if (map != NULL && finder != NULL && finder->kind == AP_PY_BIND_DEF) {
			if (map->kind == AP_PY_BIND_UNKNOWN)
				cm->why = ap_xasprintf("%s: line %u: %s", path, map->line, map->why);
			else if (map->kind != AP_PY_BIND_OTHER || !ap_pycompat_read(m, map, &cm->map))
				cm->why = ap_xasprintf("%s: line %u: the %s there is no dict of str "
				                       "literals the reader can read",
				                       path, map->line, AP_PYCOMPAT_MAP);
			cm->state = cm->why != NULL ? -1 : 1;
		}
	}
	if (cm->state < 0)
		return -1;
	/* a dict literal keeps the last of a key given twice */
	for (size_t i = cm->map.n; i-- > 0;) {
		if (strcmp(cm->map.v[i].old, child) == 0) {
			*to = cm->map.v[i].new;
			return 1;
		}
	}
	return 0;
}

void ap_pycompat_state_free(struct ap_pycompat_state *cm)
{
	for (size_t k = 0; k < cm->map.n; k++) {
		free(cm->map.v[k].old);
		free(cm->map.v[k].new);
	}
	free(cm->map.v);
	free(cm->why);
}
