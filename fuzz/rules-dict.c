/* SPDX-License-Identifier: MIT */
/* Prints the part of fuzz-rules' dictionary that comes from the engine's
 * tables: every rule kind's key and every option the kind table accepts,
 * and every language name. `make fuzz` appends it to fuzz/rules-lang.dict,
 * so that a new kind or option reaches the fuzzer without an edit here. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "engine/kind.h"
#include "engine/lang/normalize.h"

/* Options several kinds share (def, capture, assume_false) are printed
 * once. */
static int printed_before(size_t kind, size_t opt)
{
	const char *name = ap_kinds[kind]->options[opt];

	for (size_t k = 0; k <= kind; k++)
		for (size_t o = 0; o < (k == kind ? opt : ap_kind_noptions(ap_kinds[k])); o++)
			if (strcmp(ap_kinds[k]->options[o], name) == 0)
				return 1;
	return 0;
}

int main(void)
{
	printf("# From the kind table (src/engine/kind.c) and the languages, by fuzz/rules-dict.\n");
	for (size_t k = 0; k < ap_nkinds; k++) {
		printf("\"%s: \"\n", ap_kinds[k]->key);
		for (size_t o = 0; o < ap_kind_noptions(ap_kinds[k]); o++)
			if (!printed_before(k, o))
				printf("\"%s: \"\n", ap_kinds[k]->options[o]);
	}
	for (size_t i = 0; i < ap_nlangs; i++)
		printf("\"%s\"\n", ap_langs[i].name);
	return ferror(stdout) || fflush(stdout) != 0;
}
