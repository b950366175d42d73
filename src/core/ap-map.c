/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "core/ap-util.h"

struct slot {
	char *key; /* NULL: empty */
	size_t len;
	uint64_t hash;
	size_t val;
};

struct ap_map {
	struct slot *slots;
	size_t cap; /* a power of two, at least twice n */
	size_t n;
};

static uint64_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	return h;
}

ap_map *ap_map_new(void)
{
	ap_map *m = ap_calloc(1, sizeof *m);

	if (m == NULL)
		return NULL;
	m->cap = 64;
	m->slots = ap_calloc(m->cap, sizeof *m->slots);
	if (m->slots == NULL) {
		free(m);
		return NULL;
	}
	return m;
}

void ap_map_clear(ap_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	memset(m->slots, 0, m->cap * sizeof *m->slots);
	m->n = 0;
}

void ap_map_free(ap_map *m)
{
	if (m == NULL)
		return;
	ap_map_clear(m);
	free(m->slots);
	free(m);
}

static struct slot *find(const ap_map *m, const void *key, size_t len, uint64_t h)
{
	size_t mask = m->cap - 1;

	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		struct slot *s = &m->slots[i];
		if (s->key == NULL ||
		    (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0))
			return s;
	}
}

size_t ap_map_get(const ap_map *m, const void *key, size_t len)
{
	const struct slot *s = find(m, key, len, hash_bytes(key, len));

	return s->key != NULL ? s->val : AP_MAP_ABSENT;
}

size_t ap_map_get_str(const ap_map *m, const char *key)
{
	return ap_map_get(m, key, strlen(key));
}

static int grow(ap_map *m)
{
	struct slot *old = m->slots;
	size_t nold = m->cap;
	struct slot *slots = ap_calloc(2 * nold, sizeof *slots);

	if (slots == NULL)
		return AP_ENOMEM;
	m->slots = slots;
	m->cap = 2 * nold;
	for (size_t i = 0; i < nold; i++)
		if (old[i].key != NULL)
			*find(m, old[i].key, old[i].len, old[i].hash) = old[i];
	free(old);
	return AP_OK;
}

int ap_map_put(ap_map *m, const void *key, size_t len, size_t val)
{
	uint64_t h = hash_bytes(key, len);
	struct slot *s = find(m, key, len, h);

	if (s->key == NULL) {
		/* Grown before the key goes in, so that a failure leaves the map
		 * as it was. */
		if (2 * (m->n + 1) > m->cap) {
			if (grow(m) < 0)
				return AP_ENOMEM;
			s = find(m, key, len, h);
		}
		if ((s->key = ap_malloc(len + 1)) == NULL)
			return AP_ENOMEM;
		memcpy(s->key, key, len);
		s->key[len] = '\0';
		s->len = len;
		s->hash = h;
		m->n++;
	}
	s->val = val;
	return AP_OK;
}

int ap_map_put_str(ap_map *m, const char *key, size_t val)
{
	return ap_map_put(m, key, strlen(key), val);
}

size_t ap_map_count(const ap_map *m)
{
	return m->n;
}
