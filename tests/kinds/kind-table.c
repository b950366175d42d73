/* SPDX-License-Identifier: MIT */
/* kind-table: prints the kind table (src/engine/kind.c), one kind a line in
 * the table's order: its key, then its own options. What lists every kind in
 * the tests and checks (tests/kinds/table.sh) reads it here rather than
 * restating it. */
#include "config.h"

#include <stdio.h>

#include "engine/kind.h"

int main(void)
{
	for (size_t i = 0; i < ap_nkinds; i++) {
		const ap_kind *k = ap_kinds[i];

		fputs(k->key, stdout);
		for (size_t o = 0; o < ap_kind_noptions(k); o++)
			printf(" %s", k->options[o]);
		putchar('\n');
	}
	return fclose(stdout) == 0 ? 0 : 1;
}
