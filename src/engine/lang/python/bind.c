/* SPDX-License-Identifier: MIT */
/* What the statement readers (module.c, assign.c) record in the module: its
 * bindings (module-level ones, with each name's earlier and later ones, and
 * class bodies' members, by class and name), its defs and their
 * parameters; and the import statements: what each binds, and where a try
 * body's imports end it. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-map.h"
#include "core/ap-util.h"
#include "engine/lang/python/python-int.h"

/* A name that is not ASCII as CPython binds it (see ap_py_name), in the
 * arena. */
static __attribute__((noinline)) char *normal_name(const struct parser *p, const tok *t)
{
	ap_buf b = AP_BUF_INIT;
	size_t len;
	const char *s = ap_py_name(p, t, &b, &len);
	char *r = ap_py_arena_strndup(p->mod, s, len);

	ap_buf_free(&b);
	return r;
}

char *ap_py_tok_str(const struct parser *p, const tok *t)
{
	if (t->plain)
		return ap_py_arena_strndup(p->mod, p->s + t->off, t->len);
	return normal_name(p, t);
}

void ap_py_scratch_name(struct parser *p, const tok *t)
{
	ap_buf b = AP_BUF_INIT;
	size_t len;
	const char *s = ap_py_name(p, t, &b, &len);

	ap_buf_append(&p->scratch, s, len);
	ap_buf_free(&b);
}

/* The key of a member in p->member_of, in p->key: its class's line, then
 * its name[0, len). */
static void member_key(struct parser *p, unsigned class_line, const char *name, size_t len)
{
	p->key.len = 0;
	ap_buf_append(&p->key, &class_line, sizeof class_line);
	ap_buf_append(&p->key, name, len);
}

/* A member: class bodies bind no module-level name, and a statement that
 * may run more than one way there is told by maybe. */
static ap_py_binding *bind_member(struct parser *p, const struct ctx *c, ap_py_binding *b)
{
	ap_py_module *m = p->m;

	ap_xgrow((void **)&m->members, &p->members_cap, m->nmembers + 1, sizeof *m->members);
	m->members[m->nmembers] = *b;
	b = &m->members[m->nmembers++];
	b->class_line = c->class_line;
	b->maybe = c->maybe;
	if (b->name != NULL) {
		member_key(p, c->class_line, b->name, strlen(b->name));
		ap_xok(ap_map_put(p->member_of, p->key.data, p->key.len, m->nmembers - 1));
	}
	return b;
}

ap_py_binding *ap_py_bind(struct parser *p, const struct ctx *c, ap_py_bind_kind kind,
                          char *name, unsigned line)
{
	ap_py_module *m = p->m;
	ap_py_binding *b, one = {.kind = kind, .name = name, .line = line};
	size_t i = m->nbindings, cap = p->bindings_cap;

	/* a try body runs for certain up to its first statement that may not */
	one.maybe = c->maybe && !(c->trying != NULL && *c->trying == TRY_RUNS && !c->try_maybe);
	if (p->arms_depth > AP_PY_MAX_WAYS_DEPTH && kind != AP_PY_BIND_UNKNOWN) {
		if (name != NULL)
			one.kind = AP_PY_BIND_UNKNOWN;
		one.why = "it is bound in statements that may run more than one way, "
		          "nested more than " AP_PY_STR(AP_PY_MAX_WAYS_DEPTH) " deep";
	}
	if (c->prefix != NULL)
		return bind_member(p, c, &one);
	ap_xgrow((void **)&m->bindings, &p->bindings_cap, i + 1, sizeof *m->bindings);
	if (p->bindings_cap != cap) {
		p->prev_same = ap_xrealloc(p->prev_same, p->bindings_cap * sizeof *p->prev_same);
		p->next_same = ap_xrealloc(p->next_same, p->bindings_cap * sizeof *p->next_same);
	}
	b = &m->bindings[m->nbindings++];
	*b = one;
	p->prev_same[i] = p->next_same[i] = SIZE_MAX;
	p->nstars += kind == AP_PY_BIND_STAR;
	if (name != NULL) {
		size_t prev = ap_map_get_str(p->last_of, name);
		p->prev_same[i] = prev;
		if (prev != AP_MAP_ABSENT)
			p->next_same[prev] = i;
		ap_xok(ap_map_put_str(p->last_of, name, i));
	}
	return b;
}

ap_py_binding *ap_py_add_binding(struct parser *p, const struct ctx *c, ap_py_bind_kind kind,
                                 const tok *name)
{
	return ap_py_bind(p, c, kind, kind == AP_PY_BIND_STAR ? NULL : ap_py_tok_str(p, name),
	                  name->line);
}

const ap_py_binding *ap_py_member(struct parser *p, const struct ctx *c, const char *name,
                                  size_t len)
{
	size_t at;

	member_key(p, c->class_line, name, len);
	at = ap_map_get(p->member_of, p->key.data, p->key.len);
	return at == AP_MAP_ABSENT ? NULL : &p->m->members[at];
}

char *ap_py_qualname(struct parser *p, const struct ctx *c, const tok *name, const char *tail)
{
	size_t plen = c->prefix ? strlen(c->prefix) : 0, tlen = strlen(tail), len;
	ap_buf b = AP_BUF_INIT;
	const char *s = ap_py_name(p, name, &b, &len);
	char *q = ap_py_arena_alloc(p->mod, plen + len + tlen + 1);

	if (plen > 0)
		memcpy(q, c->prefix, plen);
	memcpy(q + plen, s, len);
	memcpy(q + plen + len, tail, tlen + 1);
	ap_buf_free(&b);
	return q;
}

size_t ap_py_def_new(struct parser *p, const struct ctx *c, const tok *name, unsigned line)
{
	ap_py_module *m = p->m;
	ap_py_def *d;

	ap_xgrow((void **)&m->defs, &p->defs_cap, m->ndefs + 1, sizeof *m->defs);
	d = &m->defs[m->ndefs];
	memset(d, 0, sizeof *d);
	d->qualname = ap_py_qualname(p, c, name, "");
	d->line = line;
	d->live = c->live;
	d->maybe = c->maybe;
	return m->ndefs++;
}

ap_py_param *ap_py_param_new(struct parser *p, size_t np)
{
	if (np == p->pcap)
		ap_xgrow((void **)&p->pv, &p->pcap, np + 1, sizeof *p->pv);
	return &p->pv[np];
}

void ap_py_def_params(struct parser *p, size_t di, size_t np)
{
	ap_py_def *d = &p->m->defs[di];

	if (np > 0) {
		d->params = ap_py_arena_alloc(p->mod, np * sizeof *d->params);
		memcpy(d->params, p->pv, np * sizeof *d->params);
	}
	d->nparams = np;
}

/* --- Imports ------------------------------------------------------------- */

static int ask_import(const struct parser *p, const char *module, const char *name)
{
	const ap_py_options *o = p->opt;

	return o != NULL && o->can_import != NULL ? o->can_import(o->ctx, module, name, p->m) : -1;
}

/* `from MODULE import name` where MODULE is the module being read: it gets
 * the submodule MODULE.name when there is one, else the name as bound so
 * far, which only a try at the top level knows for certain (an arm of a
 * statement around it may not have run), and which a star import before
 * may have bound. */
static int self_import(struct parser *p, const char *module, const char *name)
{
	const ap_py_module *m = p->m;
	size_t at = ap_map_get_str(p->last_of, name);
	int sub;

	p->scratch.len = 0;
	ap_buf_printf(&p->scratch, "%s%s%s", module, module[strspn(module, ".")] ? "." : "", name);
	if ((sub = ask_import(p, p->scratch.data, NULL)) == 1)
		return 1;
	if (at != AP_MAP_ABSENT && m->bindings[at].kind != AP_PY_BIND_DEL)
		return m->bindings[at].kind != AP_PY_BIND_UNKNOWN && p->arms_depth == 1 ? 1 : -1;
	for (size_t i = 0; i < m->nbindings; i++)
		if (m->bindings[i].kind == AP_PY_BIND_STAR)
			return -1;
	return p->arms_depth == 1 ? sub : -1;
}

/* In a try body whose end is still to be told, whether the import of module
 * (as written), or of its name, is found: false when it is not, and the body
 * ends there. */
static bool try_import(struct parser *p, const struct ctx *c, const char *module,
                       const char *name)
{
	int found;

	if (c->trying == NULL || *c->trying != TRY_RUNS)
		return true;
	found = ask_import(p, module, name);
	if (found == AP_PY_IMPORT_SELF)
		found = self_import(p, module, name);
	if (found == 0)
		*c->trying = TRY_FAILS;
	else if (found < 0)
		*c->trying = TRY_UNKNOWN;
	return found != 0;
}

bool ap_py_cannot_raise(const struct parser *p)
{
	const tok *v = p->sv;
	size_t n = p->sn;
	const tok *last = &v[n - 1];

	if (n == 1)
		return ap_py_is_kw(last, KW_PASS) || (last->kind == T_STRING && last->plain);
	if (n % 2 == 0 || !(last->kind == T_NUMBER || last->kind == T_STRING ||
	                    ap_py_is_kw(last, KW_TRUE) || ap_py_is_kw(last, KW_FALSE) ||
	                    ap_py_is_kw(last, KW_NONE)))
		return false;
	for (size_t i = 0; i + 1 < n; i += 2)
		if (!ap_py_is_ident(&v[i]) || !ap_py_is_op(&v[i + 1], '='))
			return false;
	return true;
}

void ap_py_import_stmt(struct parser *p, const struct ctx *c)
{
	const tok *v = p->sv;
	size_t i = 1, n = p->sn;

	while (i < n && v[i].kind == T_NAME) {
		const tok *bound = &v[i];
		ap_py_binding *b;

		p->scratch.len = 0;
		for (;;) {
			ap_py_scratch_name(p, &v[i]);
			i++;
			if (i + 1 >= n || !ap_py_is_op(&v[i], '.') || v[i + 1].kind != T_NAME)
				break;
			ap_buf_putc(&p->scratch, '.');
			i++;
		}
		if (i + 1 < n && ap_py_is_kw(&v[i], KW_AS) && v[i + 1].kind == T_NAME) {
			bound = &v[i + 1];
			i += 2;
		}
		if (!try_import(p, c, p->scratch.data, NULL))
			return;
		b = ap_py_add_binding(p, c, AP_PY_BIND_IMPORT, bound);
		b->module = ap_py_scratch_str(p);
		if (i >= n || !ap_py_is_op(&v[i], ','))
			break;
		i++;
	}
}

/* `from .SUB... import`: in a package's __init__, loading SUB binds it. */
static void submodule(struct parser *p, const struct ctx *c, const char *module, const tok *at)
{
	const char *sub = module + 1, *dot;
	ap_py_binding *b;

	if (module[0] != '.' || module[1] == '.' || module[1] == '\0')
		return;
	dot = strchr(sub, '.');
	p->scratch.len = 0;
	ap_buf_append(&p->scratch, sub, dot ? (size_t)(dot - sub) : strlen(sub));
	if (ap_map_get(p->submodules, p->scratch.data, p->scratch.len) != AP_MAP_ABSENT)
		return;
	ap_xok(ap_map_put(p->submodules, p->scratch.data, p->scratch.len, 0));
	b = ap_py_bind(p, c, AP_PY_BIND_SUBMODULE, ap_py_scratch_str(p), at->line);
	p->scratch.len = 0;
	ap_buf_printf(&p->scratch, ".%s", b->name);
	b->module = ap_py_scratch_str(p);
}

void ap_py_from_stmt(struct parser *p, const struct ctx *c)
{
	const tok *v = p->sv;
	size_t i = 1, n = p->sn;
	char *module;

	p->scratch.len = 0;
	for (; i < n && !ap_py_is_kw(&v[i], KW_IMPORT); i++)
		ap_py_scratch_name(p, &v[i]);
	module = ap_py_scratch_str(p);
	i++;
	/* a module not there (or failing) binds nothing on its package */
	if (!try_import(p, c, module, NULL))
		return;
	if (c->prefix == NULL)
		submodule(p, c, module, &v[1]);
	if (i < n && ap_py_is_op(&v[i], '*')) {
		ap_py_add_binding(p, c, AP_PY_BIND_STAR, &v[i])->module = module;
		return;
	}
	if (i < n && ap_py_is_op(&v[i], '('))
		i++;
	while (i < n && v[i].kind == T_NAME) {
		const tok *target = &v[i], *bound = &v[i];
		char *name = ap_py_tok_str(p, target);
		ap_py_binding *b;
		i++;
		if (i + 1 < n && ap_py_is_kw(&v[i], KW_AS) && v[i + 1].kind == T_NAME) {
			bound = &v[i + 1];
			i += 2;
		}
		if (!try_import(p, c, module, name))
			return;
		b = ap_py_add_binding(p, c, AP_PY_BIND_FROM, bound);
		/* The bindings of one statement share the arena's copy. */
		b->module = module;
		b->target = name;
		if (c->prefix == NULL && strcmp(b->name, "__all__") == 0)
			ap_py_all_imported(p, c->maybe, b);
		if (i >= n || !ap_py_is_op(&v[i], ','))
			break;
		i++;
	}
}
