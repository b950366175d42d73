/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
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
	ap_buf_puts(&key, AP_PYCONF_PLAIN);
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

/* Identifiers (non-ASCII ones too, as in Python) joined by dots. */
bool ap_py_dotted_name(const char *s)
{
	for (;;) {
		const char *dot = strchr(s, '.');
		size_t len = dot ? (size_t)(dot - s) : strlen(s);
		if (!ap_py_is_identifier(s, len))
			return false;
		if (dot == NULL)
			return true;
		s = dot + 1;
	}
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
