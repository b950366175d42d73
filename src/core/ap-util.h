/* SPDX-License-Identifier: MIT */
/* Allocation that never returns NULL and a growable byte buffer. Running out
 * of memory ends the process with a message: no caller could do better. */
#ifndef AP_UTIL_H
#define AP_UTIL_H

#include <stdarg.h>
#include <stddef.h>

void *ap_xmalloc(size_t n);
void *ap_xcalloc(size_t n, size_t size);
void *ap_xrealloc(void *p, size_t n);
/* Grows *p (an array of *cap elements of size elem) so that it holds need. */
void ap_xgrow(void **p, size_t *cap, size_t need, size_t elem);
char *ap_xstrdup(const char *s);
char *ap_xstrndup(const char *s, size_t n);
/* qsort's comparison of two char * by strcmp (byte order). */
int ap_cmp_strs(const void *a, const void *b);

char *ap_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

typedef struct ap_buf {
	char *data; /* NUL-terminated whenever len > 0 */
	size_t len;
	size_t cap;
} ap_buf;

#define AP_BUF_INIT {NULL, 0, 0}

void ap_buf_append(ap_buf *b, const void *data, size_t len);
void ap_buf_puts(ap_buf *b, const char *s);
void ap_buf_putc(ap_buf *b, char c);
void ap_buf_printf(ap_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the bytes to the caller ("" when empty) and resets the buffer. */
char *ap_buf_detach(ap_buf *b);
void ap_buf_free(ap_buf *b);

#endif
