/* SPDX-License-Identifier: MIT */
/* Bytes as a Python module (the reader of the python-* kinds) and as a
 * table (csv), and as aiter/_version.py: parsed, then asked what the kinds
 * ask of them. Any input must parse or fail with a message, in linear time,
 * reading nothing past its end. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "engine/lang/csv-table.h"
#include "engine/evaluate.h"
#include "engine/lang/python/python.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const false_names[] = {"AITER_TRITON_ONLY", "AITER_AOT_IMPORT", NULL};
	const ap_py_options opt = {.false_names = false_names};
	/* An exact-size copy, so that ASan sees a read past the end. */
	char *src = malloc(size ? size : 1);
	ap_py_module *m;
	ap_csv *t;
	unsigned line;

	memcpy(src, data, size);
	if (ap_py_parse(&m, src, size, &opt) == 0) {
		for (size_t i = 0; i < m->ndefs; i++) {
			ap_py_bound bound;
			ap_py_def_bound(m, &m->defs[i], "nhead", false_names, &bound);
			(void)ap_py_find_def(m, m->defs[i].qualname);
		}
		for (size_t i = 0; i < m->nbindings; i++)
			if (m->bindings[i].name != NULL)
				(void)ap_py_lookup(m, m->bindings[i].name);
		ap_py_module_free(m);
	} else if (ap_error_last()[0] == '\0') {
		__builtin_trap();
	}
	for (size_t i = 0; i < size;) {
		size_t e = ap_py_token_end(src, i, size);
		if (e <= i || e > size)
			__builtin_trap();
		i = e;
		while (i < size && (src[i] == ' ' || src[i] == '\n'))
			i++;
	}
	if (ap_csv_parse(&t, src, size) == 0)
		ap_csv_free(t);
	free(ap_version_in(src, size, &line));
	free(src);
	ap_error_clear();
	return 0;
}
