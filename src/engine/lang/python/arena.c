/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "engine/lang/python/python-int.h"

/* Every string and parameter array of a module lies in its arena: chunks
 * that only grow, freed together with the module. What a reading drops (a
 * docstring, an __all__ given anew) stays there till then, no more than the
 * source holds. */
struct chunk {
	struct chunk *next;
	size_t size, used;
	_Alignas(max_align_t) char data[];
};

void *ap_py_arena_alloc(struct module *mod, size_t size)
{
	struct chunk *c = mod->arena;
	void *r;

	size = (size + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
	if (c == NULL || c->size - c->used < size) {
		size_t want = c ? c->size * 2 : 1024 + mod->pub.src_len / 8;
		if (want < size)
			want = size;
		c = ap_xmalloc(offsetof(struct chunk, data) + want);
		mod->arena_bytes += offsetof(struct chunk, data) + want;
		c->next = mod->arena;
		c->size = want;
		c->used = 0;
		mod->arena = c;
	}
	r = c->data + c->used;
	c->used += size;
	return r;
}

char *ap_py_arena_strndup(struct module *mod, const char *s, size_t len)
{
	char *d = ap_py_arena_alloc(mod, len + 1);

	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

void ap_py_arena_free(struct module *mod)
{
	while (mod->arena != NULL) {
		struct chunk *c = mod->arena;
		mod->arena = c->next;
		free(c);
	}
}

size_t ap_py_module_bytes(const ap_py_module *m)
{
	const struct module *mod = (const struct module *)m;

	return sizeof *mod + m->src_len + SRC_PAD + mod->arena_bytes +
	       m->ndefs * sizeof *m->defs + m->nbindings * sizeof *m->bindings +
	       m->nmembers * sizeof *m->members +
	       m->nall * sizeof *m->all + m->nall_refs * sizeof *m->all_refs +
	       m->nstrings * sizeof *m->strings;
}

char *ap_py_scratch_str(struct parser *p)
{
	char *r = ap_py_arena_strndup(p->mod, p->scratch.len ? p->scratch.data : "",
	                              p->scratch.len);

	p->scratch.len = 0;
	return r;
}
