/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as a rule pack. Loading must either
 * succeed or fail with a message; finishing must resolve or refuse the
 * references. Nothing may crash, leak or hang. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "core/ap-error.h"
#include "engine/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ap_ruleset *rs;

	if (ap_ruleset_new(&rs) < 0)
		__builtin_trap();
	if (ap_ruleset_load_buffer(rs, "fuzz.yaml", (const char *)data, size) == 0)
		ap_ruleset_finish(rs);
	ap_ruleset_free(rs);
	ap_error_clear();
	return 0;
}
