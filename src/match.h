/* Matchers run against normalized text: literal substring, token sequence and
 * PCRE2 regex with named captures. */
#ifndef AP_MATCH_H
#define AP_MATCH_H

#include <stddef.h>

#include "normalize.h"

typedef enum { AP_MATCH_LITERAL, AP_MATCH_TOKEN, AP_MATCH_REGEX } ap_match_kind;
typedef enum { AP_COLLECT_FIRST, AP_COLLECT_ALL } ap_collect;

typedef struct ap_capture {
	char *name;
	char *value; /* the exact captured bytes of the normalized text */
} ap_capture;

typedef struct ap_match {
	unsigned line; /* 1-based line in the original file where the match starts */
	char *text;    /* that original line, without its line ending */
	ap_capture *caps;
	size_t ncaps;
} ap_match;

typedef struct ap_match_list {
	ap_match *v;
	size_t n;
	size_t cap;
} ap_match_list;

typedef struct ap_matcher ap_matcher;

const char *ap_match_kind_name(ap_match_kind kind);

/* Compiles a pattern. lang tells the token matcher how to split the pattern
 * into tokens. On a bad pattern returns AP_EINPUT, sets *err_offset to the
 * byte offset in the pattern, and leaves PCRE2's own message in ap_error. */
int ap_matcher_new(ap_matcher **out, ap_match_kind kind, const char *pattern, ap_lang lang,
                   size_t *err_offset);
/* Appends the matches found in t to out (nothing when there are none).
 * Returns 0, or AP_ELIMIT with a message when a regex exceeds its match or
 * depth limit, so a pathological pattern fails instead of hanging. */
int ap_matcher_run(const ap_matcher *m, const ap_text *t, ap_collect collect, ap_match_list *out);
void ap_matcher_free(ap_matcher *m);

void ap_match_list_free(ap_match_list *l);

#endif
