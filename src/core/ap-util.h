/* SPDX-License-Identifier: MIT */
/* Allocation and a growable byte buffer, in two forms. The core (what
 * libaiter-probe.so runs in a server's process) uses the checked ones: they
 * return NULL or AP_ENOMEM with the message set ("out of memory (asked for
 * 24 bytes)"), and every caller fails upward. The engine and the CLI use the
 * ap_x* ones, and the buffer functions without "try", which end the process
 * with that message instead: a scan has nothing better to do. */
#ifndef AP_UTIL_H
#define AP_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define AP_CHECKED __attribute__((warn_unused_result))

AP_CHECKED void *ap_malloc(size_t n);
AP_CHECKED void *ap_calloc(size_t n, size_t size);
/* *p is left as it was when this fails. */
AP_CHECKED void *ap_realloc(void *p, size_t n);
/* Grows *p (an array of *cap elements of size elem) so that it holds need;
 * AP_OK, or AP_ENOMEM with *p and *cap as they were. */
AP_CHECKED int ap_grow(void **p, size_t *cap, size_t need, size_t elem);
AP_CHECKED char *ap_strdup(const char *s);
AP_CHECKED char *ap_strndup(const char *s, size_t n);
AP_CHECKED char *ap_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What the engine and the CLI put around a checked function: p, or when it
 * is NULL the end of the process with the thread's message (the one the
 * checked function set), as "aiter-probe: out of memory (asked for 24
 * bytes)". ap_xok does the same for a code: AP_OK or AP_ENOMEM. */
void *ap_xnonnull(void *p);
void ap_xok(int rc);
/* Where they jump instead, in this thread, until the call that sets the
 * previous point again (at NULL: none): longjmp(*at, 1), with the message
 * kept. What the interrupted work held stays allocated; the caller must not
 * touch what it was building. Returns the point it replaces. */
jmp_buf *ap_oom_catch(jmp_buf *at);
/* Whether this thread is inside an ap_oom_catch. */
bool ap_oom_catching(void);

void *ap_xmalloc(size_t n);
void *ap_xcalloc(size_t n, size_t size);
void *ap_xrealloc(void *p, size_t n);
void ap_xgrow(void **p, size_t *cap, size_t need, size_t elem);
char *ap_xstrdup(const char *s);
char *ap_xstrndup(const char *s, size_t n);
/* ap_xasprintf and ap_buf_printf are macros: a variadic function cannot
 * hand its arguments on. */
#define ap_xasprintf(...) ((char *)ap_xnonnull(ap_asprintf(__VA_ARGS__)))

/* qsort's comparison of two char * by strcmp (byte order). */
int ap_cmp_strs(const void *a, const void *b);

typedef struct ap_buf {
	char *data; /* NUL-terminated whenever len > 0 */
	size_t len;
	size_t cap;
} ap_buf;

#define AP_BUF_INIT {NULL, 0, 0}

/* AP_OK, or AP_ENOMEM with the buffer as it was. */
AP_CHECKED int ap_buf_try_append(ap_buf *b, const void *data, size_t len);
AP_CHECKED int ap_buf_try_puts(ap_buf *b, const char *s);
AP_CHECKED int ap_buf_try_printf(ap_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Hands the bytes to the caller ("" when empty) and resets the buffer; NULL,
 * the buffer kept, when "" cannot be allocated. */
AP_CHECKED char *ap_buf_try_detach(ap_buf *b);

void ap_buf_append(ap_buf *b, const void *data, size_t len);
void ap_buf_puts(ap_buf *b, const char *s);
void ap_buf_putc(ap_buf *b, char c);
#define ap_buf_printf(b, ...) ap_xok(ap_buf_try_printf(b, __VA_ARGS__))
char *ap_buf_detach(ap_buf *b);

void ap_buf_free(ap_buf *b);

#endif
