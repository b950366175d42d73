/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/python/pypath.h"
#include "engine/lang/python/pysource.h"

/* --- Options ------------------------------------------------------------- */

/* A rule's names, spelt as the reader spells those it reads. */
static void normalize_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ap_py_name_normalize(&v[i]);
}

int ap_pyconf_load(const char *pack, const ap_yfield *assume_false, ap_pyconf *c)
{
	ap_buf key = AP_BUF_INIT;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;

	memset(c, 0, sizeof *c);
	if (assume_false->key != NULL)
		rc = ap_y_strings(pack, assume_false->val, "assume_false", &names, &n);
	if (rc == 0)
		normalize_names(names, n);
	c->false_names = ap_xcalloc(n + 1, sizeof *c->false_names);
	for (size_t i = 0; i < n; i++)
		c->false_names[i] = names[i];
	free(names);
	c->nfalse = n;
	ap_buf_puts(&key, "python");
	for (size_t i = 0; i < n; i++)
		ap_buf_printf(&key, "%c%s", i ? ',' : ':', c->false_names[i]);
	c->key = ap_buf_detach(&key);
	return rc;
}

void ap_pyconf_free(ap_pyconf *c)
{
	for (size_t i = 0; i < c->nfalse; i++)
		free(c->false_names[i]);
	free(c->false_names);
	free(c->key);
	memset(c, 0, sizeof *c);
}

/* --- The def a rule names -------------------------------------------------- */

int ap_pysource_names_load(const ap_kind_load *l, const char *what, const ap_ynode *n,
                           char ***names, size_t *count)
{
	int rc = ap_y_strings(l->pack, n, what, names, count);

	if (rc == 0)
		normalize_names(*names, *count);
	if (rc == 0 && *count > 1 && *count != l->rule->npaths)
		rc = ap_y_fail(l->pack, n,
		               "'%s' lists %zu names for %zu files: give one name, or one per file",
		               what, *count, l->rule->npaths);
	return rc;
}

ap_match *ap_pysource_match(ap_kind_run *run, const ap_file *f, unsigned line)
{
	/* A rule has a match or two: the line is found by counting, without
	 * normalizing the whole file for its line table. */
	const char *s = f->data;
	size_t n = f->len, at = 0;

	if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		at = 3;
	/* Lines end as the parser numbered them: at LF, CRLF or a lone CR. */
	for (unsigned k = 1; k < line && (at = ap_py_line_end(s, at, n)) < n; k++)
		at += at + 1 < n && s[at] == '\r' && s[at + 1] == '\n' ? 2 : 1;
	return ap_match_add_text(&run->res->matches, line, s + at, ap_py_line_end(s, at, n) - at);
}

/* The binding import leaves to the first component of qualname when only a
 * run decides it, else NULL: then no def found in the file is what Python
 * binds. */
static const ap_py_binding *unknown_binding(const ap_py_module *m, const char *qualname)
{
	char *top = ap_xstrndup(qualname, strcspn(qualname, "."));
	const ap_py_binding *b = ap_py_lookup(m, top);

	free(top);
	return b != NULL && b->kind == AP_PY_BIND_UNKNOWN ? b : NULL;
}

const ap_py_def *ap_pysource_pick_def(ap_kind_run *run, char *const *names, size_t nnames,
                                      const ap_pyconf *c, const ap_file **file)
{
	const ap_kind_rule *rule = run->rule;
	ap_rule_result *res = run->res;
	ap_buf tried = AP_BUF_INIT;

	*file = NULL;
	for (size_t i = 0; i < rule->npaths; i++) {
		const char *name = names[nnames > 1 ? i : 0];
		const ap_file *f = ap_reader_get(run->reader, rule->paths[i]);
		const ap_py_module *m;
		const ap_py_binding *b;
		const ap_py_def *d;
		const char *error;
		char *mod;

		if (f->status == AP_FILE_MISSING)
			continue;
		if (res->file == NULL)
			res->file = f->path;
		if (f->status != AP_FILE_OK) {
			res->file = f->path;
			ap_rule_set_error(res, "%s", f->reason);
			ap_buf_free(&tried);
			return NULL;
		}
		m = ap_pysource_module(run->reader, f, c, &error);
		if (m == NULL) {
			res->file = f->path;
			ap_rule_set_error(res, "%s", error);
			ap_buf_free(&tried);
			return NULL;
		}
		if (strchr(name, '.') == NULL && (mod = ap_pypath_importable(f->path)) != NULL) {
			/* What importing the file's module binds to the name. */
			ap_pyref ref;
			bool missing;
			ap_pysource_resolve(run->reader, c, mod, name, &ref, &missing);
			free(mod);
			d = ref.kind == AP_PYREF_DEF ? ref.def : NULL;
			if (d != NULL) {
				res->file = ref.file->path;
				*file = ref.file;
			} else if (ref.kind == AP_PYREF_ERROR) {
				res->file = ref.file ? ref.file->path : f->path;
				ap_rule_set_error(res, "%s", ref.why);
			} else if (ref.kind == AP_PYREF_UNKNOWN) {
				res->file = f->path;
				res->status = AP_RULE_UNKNOWN;
				res->reason = ap_xasprintf("what %s binds to %s is not known without "
				                           "running it: %s", f->path, name, ref.why);
			}
			if (d != NULL || ref.kind == AP_PYREF_ERROR || ref.kind == AP_PYREF_UNKNOWN) {
				ap_pyref_free(&ref);
				ap_buf_free(&tried);
				return d;
			}
			if (ref.kind == AP_PYREF_UNBOUND)
				ap_buf_printf(&tried, "%sno def %s in %s", tried.len ? ", " : "", name,
				              f->path);
			else if (ref.perhaps)
				ap_buf_printf(&tried, "%s%s binds no def to %s: %s", tried.len ? ", " : "",
				              f->path, name, ref.why);
			else
				ap_buf_printf(&tried, "%s%s binds %s to %s, not a def%s%s%s",
				              tried.len ? ", " : "", f->path, name,
				              ap_pyref_kind_name(ref.kind), ref.why ? " (" : "",
				              ref.why ? ref.why : "", ref.why ? ")" : "");
			ap_pyref_free(&ref);
			continue;
		}
		if ((b = unknown_binding(m, name)) != NULL) {
			res->file = f->path;
			res->status = AP_RULE_UNKNOWN;
			res->reason = ap_xasprintf("what %s binds to %s is not known without "
			                           "running it: %s", f->path, name, b->why);
			ap_buf_free(&tried);
			return NULL;
		}
		d = ap_py_find_def(m, name);
		if (d != NULL && d->maybe) {
			res->file = f->path;
			res->status = AP_RULE_UNKNOWN;
			res->reason = ap_xasprintf("%s (line %u) in %s is defined in a block that may not "
			                           "run on import", name, d->line, f->path);
			ap_buf_free(&tried);
			return NULL;
		}
		if (d != NULL && d->ndecorators > 0) {
			res->file = f->path;
			res->status = AP_RULE_UNKNOWN;
			res->reason = ap_xasprintf("%s (line %u) in %s is decorated with @%s%s, which may "
			                           "bind it to something else", name, d->line, f->path,
			                           d->decorators[0].name,
			                           d->decorators[0].called ? "(...)" : "");
			ap_buf_free(&tried);
			return NULL;
		}
		if (d != NULL) {
			res->file = f->path;
			*file = f;
			ap_buf_free(&tried);
			return d;
		}
		ap_buf_printf(&tried, "%sno def %s in %s", tried.len ? ", " : "", name, f->path);
	}
	if (tried.len == 0) {
		res->status = AP_RULE_MISSING;
		res->reason = ap_kind_missing_reason(rule);
	} else {
		res->status = AP_RULE_UNMATCHED;
		res->reason = ap_buf_detach(&tried);
	}
	ap_buf_free(&tried);
	return NULL;
}
