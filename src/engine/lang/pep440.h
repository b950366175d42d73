/* SPDX-License-Identifier: MIT */
/* PEP 440 versions and version specifiers, with the semantics of Python's
 * `packaging` library (Version, SpecifierSet.contains with prereleases=None),
 * so that a rule's "aiter >= 0.1.10" means what it means to Python tools.
 *
 * Pre-releases. A version is a pre-release when it has a pre-release part
 * (a, b, rc) or a dev part. A specifier set admits pre-releases only when one
 * of its clauses names one with ==, ===, >=, <= or ~= (">=0.2rc1",
 * "==0.1.10.dev0"); the empty set admits none. Otherwise a pre-release matches
 * nothing, not even "!=1.0".
 *
 * AITER's checkouts. setuptools_scm names a checkout past the tag 0.1.9
 * "0.1.10.dev123+g1234abc": a dev release, hence a pre-release, of the next
 * version. As in packaging, ">=0.1.9", "<0.2" and "==0.1.*" do not match it;
 * ">=0.1.10.dev0" does, and so does ">=0.1.10.dev0, <0.2" (one clause names a
 * pre-release, which admits them to all). The local part (+g1234abc) counts
 * only for "==" and "!=" with a local part in the specifier.
 *
 * Other rules, all packaging's:
 * - "<V" excludes the pre-releases of V's release unless V is a pre-release;
 * - ">V" excludes the post-releases of V's release unless V is a post-release,
 *   and every version of V's release with a local part;
 * - "~=V.N" needs at least two release numbers and means ">=V.N, ==V.*";
 * - "==V.*" and "!=V.*" compare the epoch and the release numbers, padded
 *   with zeros, up to V's length: "==1.0.*" matches 1, 1.0.3 and 1.0.post1;
 * - "===S" compares the version's normalized text with S, ignoring case.
 * Numbers are limited to 64 bits, the release to AP_PEP440_RELEASE_MAX numbers
 * and the local part to AP_PEP440_LOCAL_MAX bytes: longer ones are refused. */
#ifndef AP_PEP440_H
#define AP_PEP440_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AP_PEP440_RELEASE_MAX 16
#define AP_PEP440_LOCAL_MAX 127

typedef enum {
	AP_PEP440_PRE_NONE,
	AP_PEP440_PRE_A,
	AP_PEP440_PRE_B,
	AP_PEP440_PRE_RC,
} ap_pep440_pre;

/* A parsed version, normalized: a value, with nothing to free. */
typedef struct ap_pep440 {
	uint64_t epoch;
	uint64_t release[AP_PEP440_RELEASE_MAX];
	unsigned nrelease; /* at least 1; trailing zeros kept, as written */
	ap_pep440_pre pre;
	uint64_t pre_n;
	bool has_post;
	uint64_t post;
	bool has_dev;
	uint64_t dev;
	/* Lowercase, '.'-separated, numeric segments without leading zeros;
	 * "" when there is none. */
	char local[AP_PEP440_LOCAL_MAX + 1];
} ap_pep440;

/* Parses s, normalizing as PEP 440 does: case, an optional 'v', the spellings
 * and separators of pre, post and dev parts (1.0-post1, 1.0.post.1, 1.0c1,
 * 1.0alpha1, 1.0-1 as a post-release), whitespace around it. On a bad version
 * returns AP_EINPUT with a message naming the offset. */
int ap_pep440_parse(ap_pep440 *v, const char *s);
/* Negative, zero or positive as a sorts before, with or after b. Trailing zeros
 * of the release do not count (1.0 == 1.0.0), the local part does (1.0 <
 * 1.0+local). */
int ap_pep440_cmp(const ap_pep440 *a, const ap_pep440 *b);
/* The normalized text ("1.0rc1.post2.dev3+ubuntu.1"); the caller frees it. */
char *ap_pep440_str(const ap_pep440 *v);
bool ap_pep440_is_prerelease(const ap_pep440 *v);

/* A specifier set such as ">=0.1.10, !=0.1.12.*, <0.2": clauses separated by
 * commas, all of which must hold; empty clauses are skipped. */
typedef struct ap_pep440_spec ap_pep440_spec;

/* On a bad specifier returns AP_EINPUT with the message in ap_error, such as
 * "invalid version specifier at offset 3: expected an operator", and the byte
 * offset in *err_offset (which may be NULL). */
int ap_pep440_spec_new(ap_pep440_spec **out, const char *text, size_t *err_offset);
void ap_pep440_spec_free(ap_pep440_spec *s);
bool ap_pep440_spec_match(const ap_pep440_spec *s, const ap_pep440 *v);

#endif
