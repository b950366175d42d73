/* SPDX-License-Identifier: MIT */
/* libFuzzer target: bytes as a small AITER package, split into modules at
 * "#== PATH" lines (fuzz/fuzz-tree.h; the bytes before the first are
 * aiter/__init__.py), read from memory by the engine's reader. Every kind
 * that reads Python runs over it through the engine: the shipped packs, and
 * a pack made from what the modules themselves bind, so that import
 * resolution walks the input's own imports: each name a module binds
 * exported from that module and from its top package (python-export), each
 * def's signature and bounds (python-def, python-bound) and each module's
 * strings (python-string), with probes over them. The manifest of the
 * generated pack's scan must read back through the core's reader. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "core/confine.h"
#include "engine/lang/python/python.h"
#include "fuzz-tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Names and defs of one module given rules, exports and rules in all: a
 * scan stays quick however many names the input binds (one export may walk
 * the resolver's whole budget of bindings, some 100 ms under the
 * sanitizers). */
#define PER_MODULE 3
#define MAX_EXPORTS 6
#define MAX_RULES 48

typedef struct gen {
	ap_buf y;
	ap_buf probes;
	unsigned n;
	unsigned nexports;
} gen;

static bool is_identifier(const char *s, size_t len)
{
	if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* "aiter.ops.x" for aiter/ops/x.py and aiter/ops/x/__init__.py; NULL when a
 * part is not an identifier, as no import could name it. */
static char *module_name(const char *path)
{
	size_t len = strlen(path);
	char *name, *p;

	if (len < 3 || strcmp(path + len - 3, ".py") != 0)
		return NULL;
	name = ap_xstrndup(path, len - 3);
	len = strlen(name);
	if (len >= 9 && strcmp(name + len - 9, "/__init__") == 0)
		name[len - 9] = '\0';
	for (p = name;; p++) {
		size_t part = strcspn(p, "/");
		if (!is_identifier(p, part)) {
			free(name);
			return NULL;
		}
		p += part;
		if (*p == '\0')
			break;
		*p = '.';
	}
	return name;
}

/* The quoted forms of what a rule names, or false when one cannot be. */
static bool quote_all(char **out, const char *const *in, size_t n)
{
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		out[i] = fuzz_yaml_quote(in[i]);
		ok &= out[i] != NULL;
	}
	if (!ok)
		for (size_t i = 0; i < n; i++)
			free(out[i]);
	return ok;
}

static void export_rule(gen *g, const char *name, const char *from)
{
	char *q[2];

	if (g->n >= MAX_RULES || g->nexports >= MAX_EXPORTS || !is_identifier(name, strlen(name)) ||
	    !quote_all(q, (const char *[]){name, from}, 2))
		return;
	g->n++;
	g->nexports++;
	ap_buf_printf(&g->y, "  - id: r%u\n    python-export: %s\n    from: %s\n", g->n, q[0], q[1]);
	if (g->n % 2)
		ap_buf_puts(&g->y, "    assume_false: [AITER_TRITON_ONLY, AITER_AOT_IMPORT]\n");
	if (g->n % 3 == 0)
		ap_buf_printf(&g->y, "    binds: {positional: %u}\n    param_at: 1\n", g->n % 5);
	ap_buf_printf(&g->probes, "  - id: p%u\n    requires: {any: [r%u, {not: r%u}]}\n", g->n, g->n,
	              g->n);
	free(q[0]);
	free(q[1]);
}

/* python-def and python-bound on d, in path (and in other when it can be
 * read as an alternative). */
static void def_rules(gen *g, const ap_py_def *d, const char *path, const char *other)
{
	/* The name AITER's entries bound, or a parameter of d's own. */
	const char *param = d->nparams > 0 && g->n % 2 ? d->params[0].name : "nhead";
	const char *kw = d->nparams > 1 ? d->params[d->nparams - 1].name : "causal";
	char *q[5];

	if (g->n + 2 > MAX_RULES ||
	    !quote_all(q, (const char *[]){d->qualname, path, param, kw, other ? other : path}, 5))
		return;
	g->n++;
	if (other != NULL)
		ap_buf_printf(&g->y, "  - id: r%u\n    file: [%s, %s]\n    python-def: [%s, %s]\n", g->n,
		              q[1], q[4], q[0], q[0]);
	else
		ap_buf_printf(&g->y, "  - id: r%u\n    file: %s\n    python-def: %s\n", g->n, q[1], q[0]);
	ap_buf_printf(&g->y,
	              "    params: [%s]\n    binds: {positional: %zu, keywords: [%s]}\n"
	              "    param_at: 1\n",
	              q[2], d->nparams / 2, q[3]);
	g->n++;
	ap_buf_printf(&g->y,
	              "  - id: r%u\n    file: %s\n    python-bound: %s\n    def: %s\n"
	              "    capture: heads\n",
	              g->n, q[1], q[2], q[0]);
	ap_buf_printf(&g->probes,
	              "  - id: p%u\n    requires: {all: [r%u, {capture: r%u, name: heads, le: 96}]}\n",
	              g->n, g->n - 1, g->n);
	for (size_t i = 0; i < 5; i++)
		free(q[i]);
}

static void string_rule(gen *g, const ap_py_module *m, const char *path)
{
	const char *needle = "AITER_";
	char *q[2];
	char *cut = NULL;

	for (size_t i = 0; i < m->nstrings; i++)
		if (m->strings[i].value[0] != '\0') {
			cut = ap_xstrndup(m->strings[i].value, 16);
			needle = cut;
			break;
		}
	if (g->n < MAX_RULES && quote_all(q, (const char *[]){needle, path}, 2)) {
		g->n++;
		ap_buf_printf(&g->y, "  - id: r%u\n    file: %s\n    python-string: %s\n%s", g->n, q[1],
		              q[0], g->n % 2 ? "    collect: all\n" : "");
		free(q[0]);
		free(q[1]);
	}
	free(cut);
}

static void module_rules(gen *g, const fuzz_tree *t, size_t i)
{
	const char *path = t->files[i].path;
	const char *other = i + 1 < t->n && ap_path_refusal(t->files[i + 1].path) == NULL
	                            ? t->files[i + 1].path
	                            : NULL;
	char *mod = module_name(path);
	char *top;
	ap_py_module *m;
	size_t k;

	if (ap_path_refusal(path) != NULL ||
	    ap_py_parse(&m, t->files[i].data, t->files[i].len, NULL) < 0) {
		free(mod);
		return;
	}
	for (k = 0; k < m->nbindings && k < PER_MODULE && mod != NULL; k++) {
		const char *name = m->bindings[k].name;
		if (name == NULL)
			continue;
		export_rule(g, name, mod);
		top = ap_xstrndup(mod, strcspn(mod, "."));
		if (strcmp(top, mod) != 0)
			export_rule(g, name, top);
		free(top);
	}
	for (k = 0; k < m->ndefs && k < PER_MODULE; k++)
		def_rules(g, &m->defs[k], path, other);
	string_rule(g, m, path);
	ap_py_module_free(m);
	free(mod);
}

static void scan_generated(const fuzz_tree *t, size_t size)
{
	gen g = {AP_BUF_INIT, AP_BUF_INIT, 0, 0};

	ap_buf_puts(&g.y, "version: 1\nrules:\n");
	/* From a module the input's size picks, so that every module of a tree
	 * larger than MAX_RULES allows gets rules of its own in some inputs. */
	for (size_t k = 0; k < t->n && g.n < MAX_RULES; k++)
		module_rules(&g, t, (k + size) % t->n);
	if (g.n > 0)
		fuzz_scan_generated(t, &g.y, &g.probes);
	ap_buf_free(&g.y);
	ap_buf_free(&g.probes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_tree t;
	ap_reader *r;

	fuzz_tree_split(&t, (const char *)data, size, "aiter/__init__.py");
	r = fuzz_tree_reader(&t);
	fuzz_scan(fuzz_shipped_packs(), r, false);
	ap_reader_free(r);
	scan_generated(&t, size);
	fuzz_tree_free(&t);
	ap_error_clear();
	return 0;
}
