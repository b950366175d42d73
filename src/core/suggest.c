/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"
#include "core/suggest.h"

/* Ids are at most 128 bytes; a longer word is no typo of one. */
#define WORD_MAX 256

/* Optimal string alignment distance: Levenshtein plus swapped neighbours,
 * the commonest typo ("h42" for "h24" is two). lb is at most WORD_MAX, so
 * the rows fit on the stack and the distance cannot fail. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t rows[3 * (WORD_MAX + 1)];
	size_t *prev2 = rows, *prev = rows + lb + 1, *cur = rows + 2 * (lb + 1), *t;
	size_t i, j;

	memset(rows, 0, 3 * (lb + 1) * sizeof *rows);
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t best = prev[j - 1] + cost;
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

/* How many dotted components a and b share from the start. */
static size_t shared_components(const char *a, const char *b)
{
	size_t n = 0, i = 0;

	for (;; i++) {
		if (a[i] != b[i])
			return n;
		if (a[i] == '\0')
			return n + 1;
		if (a[i] == '.')
			n++;
	}
}

static size_t components(const char *s)
{
	size_t n = 1;

	for (; *s != '\0'; s++)
		n += *s == '.';
	return n;
}

typedef struct candidate {
	const char *id;
	size_t distance;
	size_t shared;
} candidate;

/* Whether x ranks before y. */
static int ranks_before(const candidate *x, const candidate *y)
{
	if (x->distance != y->distance)
		return x->distance < y->distance;
	if (x->shared != y->shared)
		return x->shared > y->shared;
	return strcmp(x->id, y->id) < 0;
}

size_t ap_suggest_nearest(const char *word, const char *const *known, size_t n,
                          const char *near[AP_SUGGEST_MAX])
{
	size_t lw = strlen(word), parts = components(word), limit = lw / 3 < 2 ? 2 : lw / 3;
	candidate best[AP_SUGGEST_MAX];
	size_t nbest = 0, i, k;

	if (lw == 0 || lw > WORD_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		candidate c = {.id = known[i]};
		size_t lk = strlen(known[i]);

		if (strcmp(word, known[i]) == 0)
			continue;
		c.shared = shared_components(word, known[i]);
		c.distance = lk > WORD_MAX ? WORD_MAX : edit_distance(word, lw, known[i], lk);
		if (c.distance > limit && (parts < 2 || c.shared < parts - 1))
			continue;
		for (k = nbest; k > 0 && ranks_before(&c, &best[k - 1]); k--)
			if (k < AP_SUGGEST_MAX)
				best[k] = best[k - 1];
		if (k < AP_SUGGEST_MAX) {
			best[k] = c;
			if (nbest < AP_SUGGEST_MAX)
				nbest++;
		}
	}
	for (i = 0; i < nbest; i++)
		near[i] = best[i].id;
	return nbest;
}

char *ap_suggest_tail(const char *word, const char *const *known, size_t n)
{
	const char *near[AP_SUGGEST_MAX];
	size_t count = ap_suggest_nearest(word, known, n, near), i;
	ap_buf b = AP_BUF_INIT;

	for (i = 0; i < count; i++) {
		if (ap_buf_try_printf(&b, "%s%s", i == 0 ? "; nearest: " : ", ", near[i]) < 0) {
			ap_buf_free(&b);
			return NULL;
		}
	}
	return ap_buf_try_detach(&b);
}
