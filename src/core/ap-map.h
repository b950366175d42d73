/* SPDX-License-Identifier: MIT */
/* The one hash table: byte-string keys (copied in) to indexes. Rule ids,
 * the reader's paths and history's object-id tuples all go through it. */
#ifndef AP_MAP_H
#define AP_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "core/ap-util.h"

#define AP_MAP_ABSENT SIZE_MAX

typedef struct ap_map ap_map;

/* NULL with the error set when memory runs out. */
ap_map *ap_map_new(void);
void ap_map_free(ap_map *m);
/* Forgets every key. */
void ap_map_clear(ap_map *m);
/* The value under key, or AP_MAP_ABSENT. */
size_t ap_map_get(const ap_map *m, const void *key, size_t len);
size_t ap_map_get_str(const ap_map *m, const char *key);
/* Sets key's value (val must not be AP_MAP_ABSENT). AP_OK, or AP_ENOMEM with
 * the map as it was. */
AP_CHECKED int ap_map_put(ap_map *m, const void *key, size_t len, size_t val);
AP_CHECKED int ap_map_put_str(ap_map *m, const char *key, size_t val);
size_t ap_map_count(const ap_map *m);

#endif
