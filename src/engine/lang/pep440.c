/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/lang/pep440.h"

#define XSTR(x) STR(x)
#define STR(x) #x
#define TOO_LONG "local version longer than " XSTR(AP_PEP440_LOCAL_MAX) " bytes"

/* The longest normalized text: epoch, release, pre, post, dev and local parts
 * at their limits, and the terminator. */
#define STR_MAX (21 + AP_PEP440_RELEASE_MAX * 21 + 22 + 25 + 24 + 1 + AP_PEP440_LOCAL_MAX + 1)

/* --- Parsing ---------------------------------------------------------------- */

/* Python's str.strip() and \s for the ASCII range. */
static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

static bool is_sep(char c)
{
	return c == '-' || c == '_' || c == '.';
}

/* On an overflow leaves *i at the number's first digit. */
static const char *read_number(const char *s, size_t *i, uint64_t *out)
{
	uint64_t n = 0;
	size_t j = *i;

	for (; is_digit(s[j]); j++) {
		unsigned d = (unsigned)(s[j] - '0');

		if (n > (UINT64_MAX - d) / 10)
			return "number too large";
		n = n * 10 + d;
	}
	*out = n;
	*i = j;
	return NULL;
}

typedef struct word {
	const char *text;
	int kind;
} word;

/* A word that overlaps a shorter one comes first: the grammar is a regex
 * that backtracks, and the longer word is the only reading that can go on. */
static const word pre_words[] = {
	{"alpha", AP_PEP440_PRE_A}, {"beta", AP_PEP440_PRE_B}, {"preview", AP_PEP440_PRE_RC},
	{"pre", AP_PEP440_PRE_RC},  {"rc", AP_PEP440_PRE_RC},  {"a", AP_PEP440_PRE_A},
	{"b", AP_PEP440_PRE_B},     {"c", AP_PEP440_PRE_RC},
};
static const word post_words[] = {{"post", 1}, {"rev", 1}, {"r", 1}};
static const word dev_words[] = {{"dev", 1}};

/* An optional part: a separator, one of the words, a separator, a number (0
 * when absent). Returns the word's kind, or 0 with *i unchanged when the part
 * is not there. */
static int read_part(const char *s, size_t *i, const word *words, size_t nwords, uint64_t *n,
                     const char **why)
{
	size_t j = *i + is_sep(s[*i]);

	for (size_t k = 0; k < nwords; k++) {
		size_t len = strlen(words[k].text);

		if (strncasecmp(s + j, words[k].text, len) != 0)
			continue;
		j += len;
		j += is_sep(s[j]);
		*n = 0;
		*why = read_number(s, &j, n);
		*i = j;
		return words[k].kind;
	}
	return 0;
}

/* Normalizes the local part after the '+' at s[*i]: lowercase, '.' between
 * segments, numeric segments without their leading zeros. */
static const char *read_local(ap_pep440 *v, const char *s, size_t *i)
{
	size_t j = *i + 1;
	size_t len = 0;

	if (!is_alnum(s[j]))
		return "expected a local version segment";
	for (;;) {
		size_t seg = len;
		bool numeric = true;

		for (; is_alnum(s[j]); j++) {
			if (len == AP_PEP440_LOCAL_MAX)
				return TOO_LONG;
			numeric = numeric && is_digit(s[j]);
			v->local[len++] = (char)(is_digit(s[j]) ? s[j] : s[j] | 0x20);
		}
		if (numeric) {
			size_t z = seg;

			while (z + 1 < len && v->local[z] == '0')
				z++;
			memmove(v->local + seg, v->local + z, len - z);
			len -= z - seg;
		}
		if (!(is_sep(s[j]) && is_alnum(s[j + 1])))
			break;
		if (len == AP_PEP440_LOCAL_MAX)
			return TOO_LONG;
		v->local[len++] = '.';
		j++;
	}
	v->local[len] = '\0';
	*i = j;
	return NULL;
}

/* Reads a version at s[*i] as far as PEP 440's grammar goes and leaves *i
 * after it; on an error returns the reason, *i at the offending byte. With
 * wildcard non-NULL, ".*" may follow the release (and end the version). */
static const char *read_version(ap_pep440 *v, const char *s, size_t *i, bool *wildcard)
{
	const char *why = NULL;
	uint64_t first;

	memset(v, 0, sizeof *v);
	if ((s[*i] | 0x20) == 'v')
		(*i)++;
	if (!is_digit(s[*i]))
		return "expected a release number";
	if ((why = read_number(s, i, &first)) != NULL)
		return why;
	if (s[*i] == '!') {
		v->epoch = first;
		(*i)++;
		if (!is_digit(s[*i]))
			return "expected a release number";
		if ((why = read_number(s, i, &first)) != NULL)
			return why;
	}
	v->release[v->nrelease++] = first;
	while (s[*i] == '.' && is_digit(s[*i + 1])) {
		(*i)++;
		if (v->nrelease == AP_PEP440_RELEASE_MAX)
			return "more than " XSTR(AP_PEP440_RELEASE_MAX) " release numbers";
		if ((why = read_number(s, i, &v->release[v->nrelease++])) != NULL)
			return why;
	}
	if (wildcard != NULL) {
		*wildcard = s[*i] == '.' && s[*i + 1] == '*';
		if (*wildcard) {
			*i += 2;
			return NULL;
		}
	}
	v->pre = (ap_pep440_pre)read_part(s, i, pre_words, sizeof pre_words / sizeof *pre_words,
	                                  &v->pre_n, &why);
	if (why != NULL)
		return why;
	/* The implicit post-release, "1.0-1", only with a dash and a number. */
	if (s[*i] == '-' && is_digit(s[*i + 1])) {
		(*i)++;
		v->has_post = true;
		if ((why = read_number(s, i, &v->post)) != NULL)
			return why;
	} else {
		v->has_post = read_part(s, i, post_words, sizeof post_words / sizeof *post_words,
		                        &v->post, &why) != 0;
		if (why != NULL)
			return why;
	}
	v->has_dev = read_part(s, i, dev_words, 1, &v->dev, &why) != 0;
	if (why != NULL)
		return why;
	if (s[*i] == '+')
		return read_local(v, s, i);
	return NULL;
}

int ap_pep440_parse(ap_pep440 *v, const char *s)
{
	size_t i = 0;
	const char *why;

	while (is_space(s[i]))
		i++;
	why = read_version(v, s, &i, NULL);
	if (why == NULL) {
		while (is_space(s[i]))
			i++;
		if (s[i] != '\0')
			why = "unexpected character";
	}
	if (why != NULL) {
		ap_error_set("invalid version '%.*s' at offset %zu: %s", (int)strnlen(s, 80), s, i,
		             why);
		return AP_EINPUT;
	}
	return 0;
}

/* --- Comparing -------------------------------------------------------------- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_release(const ap_pep440 *a, const ap_pep440 *b)
{
	unsigned n = a->nrelease > b->nrelease ? a->nrelease : b->nrelease;

	for (unsigned k = 0; k < n; k++) {
		int c = cmp_u64(k < a->nrelease ? a->release[k] : 0,
		                k < b->nrelease ? b->release[k] : 0);
		if (c != 0)
			return c;
	}
	return 0;
}

/* packaging's sort key for the pre-release part: a dev release of a final
 * version (1.0.dev1) sorts before its pre-releases, a final one after them. */
static int pre_rank(const ap_pep440 *v)
{
	if (v->pre != AP_PEP440_PRE_NONE)
		return (int)v->pre;
	if (!v->has_post && v->has_dev)
		return AP_PEP440_PRE_NONE;
	return AP_PEP440_PRE_RC + 1;
}

/* Compares everything but the local part. */
static int cmp_public(const ap_pep440 *a, const ap_pep440 *b)
{
	int c;

	if ((c = cmp_u64(a->epoch, b->epoch)) != 0 || (c = cmp_release(a, b)) != 0)
		return c;
	if ((c = pre_rank(a) - pre_rank(b)) != 0)
		return c;
	if (a->pre != AP_PEP440_PRE_NONE && (c = cmp_u64(a->pre_n, b->pre_n)) != 0)
		return c;
	if ((c = (int)a->has_post - (int)b->has_post) != 0)
		return c;
	if (a->has_post && (c = cmp_u64(a->post, b->post)) != 0)
		return c;
	/* No dev part sorts after every dev part. */
	if ((c = (int)b->has_dev - (int)a->has_dev) != 0)
		return c;
	return a->has_dev ? cmp_u64(a->dev, b->dev) : 0;
}

/* Local parts segment by segment: numbers (without leading zeros, so the
 * longer is the larger) after words, words by their bytes, a prefix first. */
static int cmp_local(const char *a, const char *b)
{
	if (*a == '\0' || *b == '\0')
		return (*a != '\0') - (*b != '\0');
	for (;;) {
		size_t na = strcspn(a, ".");
		size_t nb = strcspn(b, ".");
		bool da = strspn(a, "0123456789") == na;
		bool db = strspn(b, "0123456789") == nb;
		int c;

		if (da != db)
			return da ? 1 : -1;
		if (da && na != nb)
			return na < nb ? -1 : 1;
		c = memcmp(a, b, na < nb ? na : nb);
		if (c == 0)
			c = (na > nb) - (na < nb);
		if (c != 0)
			return c < 0 ? -1 : 1;
		a += na;
		b += nb;
		if (*a == '\0' || *b == '\0')
			return (*a != '\0') - (*b != '\0');
		a++;
		b++;
	}
}

int ap_pep440_cmp(const ap_pep440 *a, const ap_pep440 *b)
{
	int c = cmp_public(a, b);

	return c != 0 ? c : cmp_local(a->local, b->local);
}

bool ap_pep440_is_prerelease(const ap_pep440 *v)
{
	return v->pre != AP_PEP440_PRE_NONE || v->has_dev;
}

static size_t format(const ap_pep440 *v, char *buf)
{
	static const char *const pre[] = {"", "a", "b", "rc"};
	int n = 0;

	if (v->epoch != 0)
		n += sprintf(buf + n, "%llu!", (unsigned long long)v->epoch);
	for (unsigned k = 0; k < v->nrelease; k++)
		n += sprintf(buf + n, "%s%llu", k ? "." : "", (unsigned long long)v->release[k]);
	if (v->pre != AP_PEP440_PRE_NONE)
		n += sprintf(buf + n, "%s%llu", pre[v->pre], (unsigned long long)v->pre_n);
	if (v->has_post)
		n += sprintf(buf + n, ".post%llu", (unsigned long long)v->post);
	if (v->has_dev)
		n += sprintf(buf + n, ".dev%llu", (unsigned long long)v->dev);
	if (v->local[0] != '\0')
		n += sprintf(buf + n, "+%s", v->local);
	return (size_t)n;
}

char *ap_pep440_str(const ap_pep440 *v)
{
	char buf[STR_MAX];

	format(v, buf);
	return ap_xstrdup(buf);
}

/* --- Specifiers ------------------------------------------------------------- */

typedef enum { OP_ARBITRARY, OP_COMPATIBLE, OP_EQ, OP_NE, OP_LE, OP_GE, OP_LT, OP_GT } op_kind;

/* "===" before "==", as the longer reading. */
static const word operators[] = {
	{"===", OP_ARBITRARY}, {"~=", OP_COMPATIBLE}, {"==", OP_EQ}, {"!=", OP_NE},
	{"<=", OP_LE},         {">=", OP_GE},         {"<", OP_LT},  {">", OP_GT},
};

typedef struct clause {
	op_kind op;
	bool wildcard;
	ap_pep440 v;
	char *text; /* the version text of "===" */
} clause;

struct ap_pep440_spec {
	clause *v;
	size_t n;
	size_t cap;
	/* packaging's SpecifierSet.prereleases: whether pre-releases may match. */
	bool prereleases;
};

/* The length of the operator at s, and its kind; 0 when there is none. */
static size_t read_operator(const char *s, op_kind *op)
{
	for (size_t k = 0; k < sizeof operators / sizeof *operators; k++) {
		size_t len = strlen(operators[k].text);

		if (strncmp(s, operators[k].text, len) == 0) {
			*op = (op_kind)operators[k].kind;
			return len;
		}
	}
	return 0;
}

/* Whether the clause names a pre-release in packaging's sense, which lets
 * pre-releases match the whole set. */
static bool names_prerelease(const clause *c)
{
	ap_pep440 v;
	size_t i = 0;

	switch (c->op) {
	case OP_ARBITRARY:
		/* packaging parses the text as a version; text that is none names
		 * no pre-release here (packaging raises). */
		return read_version(&v, c->text, &i, NULL) == NULL && c->text[i] == '\0' &&
		       ap_pep440_is_prerelease(&v);
	case OP_EQ:
	case OP_LE:
	case OP_GE:
	case OP_COMPATIBLE:
		return ap_pep440_is_prerelease(&c->v);
	default:
		return false;
	}
}

/* Reads the clause at text[*i] (past its leading spaces) up to its comma or
 * the end; on an error returns the reason, *i at the offending byte. */
static const char *read_clause(clause *c, const char *text, size_t *i)
{
	size_t len = read_operator(text + *i, &c->op);
	size_t start;
	const char *why;

	if (len == 0)
		return "expected an operator";
	*i += len;
	while (is_space(text[*i]))
		(*i)++;
	start = *i;
	if (c->op == OP_ARBITRARY) {
		/* Anything up to a space, as packaging takes it, but for the ';'
		 * and ')' that its grammar keeps for markers. */
		for (; text[*i] != '\0' && text[*i] != ',' && !is_space(text[*i]); (*i)++)
			if (text[*i] == ';' || text[*i] == ')')
				return "unexpected character";
		if (*i == start)
			return "expected a version";
		c->text = ap_xstrndup(text + start, *i - start);
	} else {
		const char *plus;

		if (!is_digit(text[*i]) && (text[*i] | 0x20) != 'v')
			return "expected a version";
		why = read_version(&c->v, text, i, &c->wildcard);
		if (why != NULL)
			return why;
		if (c->wildcard && c->op != OP_EQ && c->op != OP_NE) {
			*i -= 2;
			return "'.*' is allowed only with == and !=";
		}
		plus = memchr(text + start, '+', *i - start);
		if (plus != NULL && c->op != OP_EQ && c->op != OP_NE) {
			*i = (size_t)(plus - text);
			return "a local version is allowed only with == and !=";
		}
		if (c->op == OP_COMPATIBLE && c->v.nrelease < 2) {
			*i = start;
			return "'~=' needs at least two release numbers";
		}
	}
	while (is_space(text[*i]))
		(*i)++;
	if (text[*i] != '\0' && text[*i] != ',')
		return "unexpected character";
	return NULL;
}

int ap_pep440_spec_new(ap_pep440_spec **out, const char *text, size_t *err_offset)
{
	ap_pep440_spec *s = ap_xcalloc(1, sizeof *s);
	size_t i = 0;

	*out = NULL;
	for (;;) {
		const char *why;
		clause *c;

		while (is_space(text[i]))
			i++;
		if (text[i] == '\0')
			break;
		/* packaging skips empty clauses. */
		if (text[i] == ',') {
			i++;
			continue;
		}
		ap_xgrow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v);
		c = &s->v[s->n++];
		memset(c, 0, sizeof *c);
		why = read_clause(c, text, &i);
		if (why != NULL) {
			ap_error_set("invalid version specifier at offset %zu: %s", i, why);
			if (err_offset != NULL)
				*err_offset = i;
			ap_pep440_spec_free(s);
			return AP_EINPUT;
		}
		s->prereleases = s->prereleases || names_prerelease(c);
	}
	*out = s;
	return 0;
}

void ap_pep440_spec_free(ap_pep440_spec *s)
{
	if (s == NULL)
		return;
	for (size_t k = 0; k < s->n; k++)
		free(s->v[k].text);
	free(s->v);
	free(s);
}

/* "==V.*": the epoch, and the release padded with zeros to V's length. */
static bool prefix_match(const ap_pep440 *v, const ap_pep440 *spec, unsigned n)
{
	if (v->epoch != spec->epoch)
		return false;
	for (unsigned k = 0; k < n; k++)
		if ((k < v->nrelease ? v->release[k] : 0) != spec->release[k])
			return false;
	return true;
}

/* Versions of one release, as packaging compares base_version. */
static bool same_base(const ap_pep440 *a, const ap_pep440 *b)
{
	return a->epoch == b->epoch && cmp_release(a, b) == 0;
}

static bool clause_match(const clause *c, const ap_pep440 *v)
{
	const ap_pep440 *sv = &c->v;
	char buf[STR_MAX];

	switch (c->op) {
	case OP_ARBITRARY:
		format(v, buf);
		return strcasecmp(buf, c->text) == 0;
	case OP_COMPATIBLE:
		return cmp_public(v, sv) >= 0 && prefix_match(v, sv, sv->nrelease - 1);
	case OP_EQ:
	case OP_NE:
		if (c->wildcard)
			return prefix_match(v, sv, sv->nrelease) == (c->op == OP_EQ);
		/* A local part counts only when the specifier has one. */
		if (sv->local[0] != '\0')
			return (ap_pep440_cmp(v, sv) == 0) == (c->op == OP_EQ);
		return (cmp_public(v, sv) == 0) == (c->op == OP_EQ);
	case OP_LE:
		return cmp_public(v, sv) <= 0;
	case OP_GE:
		return cmp_public(v, sv) >= 0;
	case OP_LT:
		/* <1.0 is not met by 1.0rc1, unless the bound is a pre-release. */
		return cmp_public(v, sv) < 0 && !(!ap_pep440_is_prerelease(sv) &&
		                                  ap_pep440_is_prerelease(v) && same_base(v, sv));
	case OP_GT:
		/* >1.0 is not met by 1.0.post1 (unless the bound is a post-release)
		 * nor by 1.0+local. */
		return ap_pep440_cmp(v, sv) > 0 &&
		       !(!sv->has_post && v->has_post && same_base(v, sv)) &&
		       !(v->local[0] != '\0' && same_base(v, sv));
	}
	return false;
}

bool ap_pep440_spec_match(const ap_pep440_spec *s, const ap_pep440 *v)
{
	if (ap_pep440_is_prerelease(v) && !s->prereleases)
		return false;
	for (size_t k = 0; k < s->n; k++)
		if (!clause_match(&s->v[k], v))
			return false;
	return true;
}
