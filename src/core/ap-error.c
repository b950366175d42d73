/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/ap-error.h"

/* Thread-local so that a consumer calling the C API from several threads sees
 * its own failure, as aiter_probe_last_error() promises. */
static __thread char last[4096];

static void vset(const char *prefix, const char *fmt, va_list ap)
{
	size_t n = 0;
	if (prefix != NULL)
		n = (size_t)snprintf(last, sizeof last, "%s", prefix);
	if (n < sizeof last)
		vsnprintf(last + n, sizeof last - n, fmt, ap);
}

void ap_error_set(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(NULL, fmt, ap);
	va_end(ap);
}

void ap_error_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
{
	char where[1024];
	va_list ap;

	if (line > 0 && col > 0)
		snprintf(where, sizeof where, "%s:%u:%u: ", file, line, col);
	else if (line > 0)
		snprintf(where, sizeof where, "%s:%u: ", file, line);
	else
		snprintf(where, sizeof where, "%s: ", file);
	va_start(ap, fmt);
	vset(where, fmt, ap);
	va_end(ap);
}

void ap_error_prefix(const char *fmt, ...)
{
	char old[sizeof last];
	size_t n;
	va_list ap;

	memcpy(old, last, sizeof old);
	va_start(ap, fmt);
	n = (size_t)vsnprintf(last, sizeof last, fmt, ap);
	va_end(ap);
	if (n < sizeof last)
		snprintf(last + n, sizeof last - n, ": %s", old);
}

const char *ap_error_last(void)
{
	return last[0] != '\0' ? last : "no error";
}

void ap_error_clear(void)
{
	last[0] = '\0';
}
