/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-util.h"

static void out_of_memory(size_t n)
{
	fprintf(stderr, "aiter-probe: out of memory (asked for %zu bytes)\n", n);
	abort();
}

void *ap_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		out_of_memory(n);
	return p;
}

void *ap_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		out_of_memory(n * size);
	return p;
}

void *ap_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		out_of_memory(n);
	return p;
}

void ap_xgrow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;

	if (need <= *cap)
		return;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		/* Doubling past half the address space would wrap to 0 and spin. */
		if (ncap > ((size_t)-1) / 2)
			out_of_memory((size_t)-1);
		ncap *= 2;
	}
	if (ncap > ((size_t)-1) / elem)
		out_of_memory((size_t)-1);
	*p = ap_xrealloc(*p, ncap * elem);
	*cap = ncap;
}

char *ap_xstrdup(const char *s)
{
	return ap_xstrndup(s, strlen(s));
}

char *ap_xstrndup(const char *s, size_t n)
{
	char *d = ap_xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *ap_xasprintf(const char *fmt, ...)
{
	ap_buf b = AP_BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	{
		va_list cp;
		int n;
		va_copy(cp, ap);
		n = vsnprintf(NULL, 0, fmt, cp);
		va_end(cp);
		ap_xgrow((void **)&b.data, &b.cap, (size_t)n + 1, 1);
		vsnprintf(b.data, (size_t)n + 1, fmt, ap);
		b.len = (size_t)n;
	}
	va_end(ap);
	return ap_buf_detach(&b);
}

void ap_buf_append(ap_buf *b, const void *data, size_t len)
{
	ap_xgrow((void **)&b->data, &b->cap, b->len + len + 1, 1);
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void ap_buf_puts(ap_buf *b, const char *s)
{
	ap_buf_append(b, s, strlen(s));
}

void ap_buf_putc(ap_buf *b, char c)
{
	ap_buf_append(b, &c, 1);
}

void ap_buf_printf(ap_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_list cp;
	int n;

	va_start(ap, fmt);
	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	ap_xgrow((void **)&b->data, &b->cap, b->len + (size_t)n + 1, 1);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	va_end(ap);
}

char *ap_buf_detach(ap_buf *b)
{
	char *s = b->data ? b->data : ap_xstrdup("");
	b->data = NULL;
	b->len = b->cap = 0;
	return s;
}

void ap_buf_free(ap_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int ap_cmp_strs(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}
