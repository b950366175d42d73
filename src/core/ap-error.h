/* SPDX-License-Identifier: MIT */
/* Error reporting shared by the engine: every failing function returns a
 * negative code and leaves exactly one message, with its context, here. */
#ifndef AP_ERROR_H
#define AP_ERROR_H

#include <stdarg.h>

enum {
	AP_OK = 0,
	AP_EINPUT = -1,    /* the user's input is wrong: rules, flags, manifests (exit 2) */
	AP_EIO = -2,       /* the system refused: open, read, write, rename (exit 2) */
	AP_ELIMIT = -3,    /* a configured limit stopped the work (regex budget, size cap) */
	AP_EINTERNAL = -4, /* a bug or an unexpected library failure */
	AP_ENOMEM = -5,    /* an allocation failed: the message says what was being done */
};

/* Replaces the message. */
void ap_error_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Replaces the message with "file:line:column: message" (line/column 1-based,
 * omitted when 0). */
void ap_error_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Puts context in front of the current message: "context: message". */
void ap_error_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *ap_error_last(void);
void ap_error_clear(void);

#endif
