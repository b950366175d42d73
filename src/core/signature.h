/* SPDX-License-Identifier: MIT */
/* A Python callable's parameters as the manifest's `signatures` writes them
 * ("q, k, /, v=…, *args, c, **kw": the text inside inspect's parentheses,
 * every default written `…`), and whether a call of a given shape binds to
 * them as CPython binds it (inspect.Signature.bind). The scan's `binds`
 * checks and the readers' answers are this one function. Nothing here
 * allocates: a server asks it on its own calls. */
#ifndef AP_SIGNATURE_H
#define AP_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>

/* The most parameters a recorded signature has (CPython has no limit; the
 * scan records a longer one as unknown). */
#define AP_SIG_MAX_PARAMS 255
/* The longest recorded parameter text, in bytes. */
#define AP_SIG_MAX_BYTES 4096
/* Room for any reason ap_sig_binds gives. */
#define AP_SIG_WHY_BYTES 320

typedef enum {
	AP_SIG_POSONLY, /* before a `/` */
	AP_SIG_POS,
	AP_SIG_VARARGS, /* *args */
	AP_SIG_KWONLY,  /* after `*` or *args */
	AP_SIG_VARKW,   /* **kwargs */
} ap_sig_kind;

typedef struct ap_sig_param {
	const char *name; /* not NUL-terminated: len bytes */
	size_t len;
	ap_sig_kind kind;
	bool has_default;
} ap_sig_param;

/* Reads text (NUL-terminated) into out[0, cap): the parameters in order,
 * names pointing into text. 0 with *n set, or -1 with why (a sentence)
 * where text is no such list or holds more than cap parameters. */
int ap_sig_parse(const char *text, ap_sig_param *out, size_t cap, size_t *n, char *why,
                 size_t whylen);

/* Whether a call with `positional` positional arguments and the keyword
 * arguments kw (names, NUL-terminated, distinct) binds to p[0, n): true, or
 * false with why ("no parameter 'x' (and no **kwargs)"). scratch holds n
 * entries. */
bool ap_sig_binds(const ap_sig_param *p, size_t n, size_t positional, const char *const *kw,
                  size_t nkw, bool *scratch, char *why, size_t whylen);

#endif
