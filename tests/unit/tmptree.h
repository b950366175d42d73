/* SPDX-License-Identifier: MIT */
/* Temporary folders for the unit tests: made fresh, filled, removed whole. */
#ifndef AP_TEST_TREE_H
#define AP_TEST_TREE_H

#include <stddef.h>

/* A new folder under $TMPDIR (or /tmp), its path canonical. Caller frees. */
char *tt_mkdtemp(const char *prefix);
/* Writes base/rel with exactly these bytes. */
void tt_put(const char *base, const char *rel, const void *data, size_t len);
void tt_put_s(const char *base, const char *rel, const char *text);
void tt_mkdir(const char *base, const char *rel);
void tt_link(const char *base, const char *target, const char *rel);
/* Removes base and everything under it, unreadable entries included. */
void tt_remove(const char *base);

#endif
