/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"

static void *out_of_memory(size_t n)
{
	ap_error_set("out of memory (asked for %zu bytes)", n);
	return NULL;
}

void *ap_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	return p != NULL ? p : out_of_memory(n);
}

void *ap_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	return p != NULL ? p : out_of_memory(n * size);
}

void *ap_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	return q != NULL ? q : out_of_memory(n);
}

int ap_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *q;

	if (need <= *cap)
		return AP_OK;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		/* Doubling past half the address space would wrap to 0 and spin. */
		if (ncap > ((size_t)-1) / 2)
			break;
		ncap *= 2;
	}
	if (ncap < need || ncap > ((size_t)-1) / elem) {
		out_of_memory((size_t)-1);
		return AP_ENOMEM;
	}
	q = ap_realloc(*p, ncap * elem);
	if (q == NULL)
		return AP_ENOMEM;
	*p = q;
	*cap = ncap;
	return AP_OK;
}

char *ap_strdup(const char *s)
{
	return ap_strndup(s, strlen(s));
}

char *ap_strndup(const char *s, size_t n)
{
	char *d = ap_malloc(n + 1);

	if (d != NULL) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* Most of the engine's formats join strings (paths, module names, cache
 * keys: "%s.%s", "%s/held"), thousands a scan; vsnprintf sets up a stream
 * and formats twice for each. A format of text and %s only is joined here,
 * as glibc's printf would write it; 0 when fmt has another conversion. */
static int buf_join(ap_buf *b, const char *fmt, va_list ap, int *rc)
{
	const char *p;
	size_t n = 0;
	va_list cp;
	char *at;

	for (p = fmt; *p; p++)
		if (*p == '%' && *++p != 's')
			return 0;
	va_copy(cp, ap);
	for (p = fmt; *p; p++) {
		if (*p != '%') {
			n++;
			continue;
		}
		p++;
		const char *arg = va_arg(cp, const char *);
		n += strlen(arg != NULL ? arg : "(null)");
	}
	va_end(cp);
	if (n > INT_MAX) {
		ap_error_set("out of memory (formatting '%s': %s)", fmt, strerror(EOVERFLOW));
		*rc = AP_ENOMEM;
		return 1;
	}
	if (ap_grow((void **)&b->data, &b->cap, b->len + n + 1, 1) < 0) {
		*rc = AP_ENOMEM;
		return 1;
	}
	at = b->data + b->len;
	for (p = fmt; *p; p++) {
		if (*p != '%') {
			*at++ = *p;
			continue;
		}
		p++;
		const char *arg = va_arg(ap, const char *);
		size_t len = strlen(arg != NULL ? arg : (arg = "(null)"));
		memcpy(at, arg, len);
		at += len;
	}
	*at = '\0';
	b->len += n;
	*rc = AP_OK;
	return 1;
}

static int buf_vprintf(ap_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	if (buf_join(b, fmt, ap, &n))
		return n;
	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	/* Only output past INT_MAX bytes gets here, which no buffer holds. */
	if (n < 0) {
		ap_error_set("out of memory (formatting '%s': %s)", fmt, strerror(errno));
		return AP_ENOMEM;
	}
	if (ap_grow((void **)&b->data, &b->cap, b->len + (size_t)n + 1, 1) < 0)
		return AP_ENOMEM;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return AP_OK;
}

char *ap_asprintf(const char *fmt, ...)
{
	ap_buf b = AP_BUF_INIT;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vprintf(&b, fmt, ap);
	va_end(ap);
	return rc == AP_OK ? b.data : NULL;
}

int ap_buf_try_append(ap_buf *b, const void *data, size_t len)
{
	if (ap_grow((void **)&b->data, &b->cap, b->len + len + 1, 1) < 0)
		return AP_ENOMEM;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return AP_OK;
}

int ap_buf_try_puts(ap_buf *b, const char *s)
{
	return ap_buf_try_append(b, s, strlen(s));
}

int ap_buf_try_printf(ap_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

char *ap_buf_try_detach(ap_buf *b)
{
	char *s = b->data ? b->data : ap_strdup("");

	if (s != NULL) {
		b->data = NULL;
		b->len = b->cap = 0;
	}
	return s;
}

void ap_buf_free(ap_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* --- The aborting forms: each is its checked twin and this. -------------- */

/* The innermost ap_oom_catch of this thread: the engine run inside the
 * C API (aiter_probe_scan) must not end the caller's process. */
static __thread jmp_buf *oom_catch;

jmp_buf *ap_oom_catch(jmp_buf *at)
{
	jmp_buf *outer = oom_catch;

	oom_catch = at;
	return outer;
}

bool ap_oom_catching(void)
{
	return oom_catch != NULL;
}

static _Noreturn void die(void)
{
	if (oom_catch != NULL)
		longjmp(*oom_catch, 1);
	fprintf(stderr, "aiter-probe: %s\n", ap_error_last());
	abort();
}

void *ap_xnonnull(void *p)
{
	if (p == NULL)
		die();
	return p;
}

void ap_xok(int rc)
{
	if (rc < 0)
		die();
}

void *ap_xmalloc(size_t n)
{
	return ap_xnonnull(ap_malloc(n));
}

void *ap_xcalloc(size_t n, size_t size)
{
	return ap_xnonnull(ap_calloc(n, size));
}

void *ap_xrealloc(void *p, size_t n)
{
	return ap_xnonnull(ap_realloc(p, n));
}

void ap_xgrow(void **p, size_t *cap, size_t need, size_t elem)
{
	ap_xok(ap_grow(p, cap, need, elem));
}

char *ap_xstrdup(const char *s)
{
	return ap_xnonnull(ap_strdup(s));
}

char *ap_xstrndup(const char *s, size_t n)
{
	return ap_xnonnull(ap_strndup(s, n));
}

void ap_buf_append(ap_buf *b, const void *data, size_t len)
{
	ap_xok(ap_buf_try_append(b, data, len));
}

void ap_buf_puts(ap_buf *b, const char *s)
{
	ap_xok(ap_buf_try_puts(b, s));
}

void ap_buf_putc(ap_buf *b, char c)
{
	ap_xok(ap_buf_try_append(b, &c, 1));
}

char *ap_buf_detach(ap_buf *b)
{
	return ap_xnonnull(ap_buf_try_detach(b));
}

int ap_cmp_strs(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}
