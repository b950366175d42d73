/* SPDX-License-Identifier: MIT */
/* What every kind may call (declared in kind.h), apart from the table in
 * kind.c: the table calls the kinds, the kinds call this, and no call goes
 * back up. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/ap-util.h"
#include "engine/kind.h"

void ap_rule_set_error(ap_rule_result *res, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	free(res->reason);
	res->reason = msg != NULL ? msg : ap_xstrdup("out of memory");
	res->status = AP_RULE_ERROR;
}

/* The first candidate path that exists (readable or not) decides; a rule
 * whose every candidate is absent is missing. */
const ap_file *ap_kind_pick_file(ap_reader *r, const ap_kind_rule *rule)
{
	size_t i;

	for (i = 0; i < rule->npaths; i++) {
		const ap_file *f = ap_reader_get(r, rule->paths[i]);
		if (f->status != AP_FILE_MISSING)
			return f;
	}
	return NULL;
}

char *ap_kind_missing_reason(const ap_kind_rule *rule)
{
	ap_buf b = AP_BUF_INIT;
	size_t i;

	ap_buf_puts(&b, rule->npaths > 1 ? "none of the files exists: " : "no such file: ");
	for (i = 0; i < rule->npaths; i++)
		ap_buf_printf(&b, "%s%s", i ? ", " : "", rule->paths[i]);
	return ap_buf_detach(&b);
}
