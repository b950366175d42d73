/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-util.h"
#include "engine/kind.h"
#include "engine/lang/lex-c.h"

/* `pybind-enum`: the members a C++ source exposes to Python through a
 * pybind11 enum, as AITER's csrc/include/rocm_ops.hpp exposes QuantType:
 *
 *   file: csrc/include/rocm_ops.hpp
 *   pybind-enum: QuantType   # the Python name: the enum_'s name argument
 *   value: per_1x32          # optional: only that member
 *
 * A chain is py::enum_<T>(scope, "Name", ...) (pybind11::, native_enum
 * too) and the calls .f(...) after it, up to its ';' or the end of the
 * #define holding it: `import aiter` then has aiter.Name.member for exactly
 * each .value("member", T::x) of it. The text is the C normalizer's
 * (comments and #if 0 blocks gone, continuations joined), so a chain in a
 * macro reads as one line and a .value( in a comment or a string is no
 * call. A chain that does not parse exposes nothing: it would not compile.
 * One pass over the tokens, each read once, whatever the file holds. */

struct pyenum {
	char *name;
	char *value; /* NULL: every member */
};

static const char *const pyenum_options[] = {"value", NULL};

/* --- Tokens of normalized C++ ------------------------------------------- */

typedef enum {
	TK_END,
	TK_EOL,     /* the end of a directive's line */
	TK_NAME,    /* an identifier */
	TK_STRING,  /* a string literal without prefix */
	TK_LITERAL, /* a number, a character or prefixed string literal */
	TK_PUNCT,   /* one byte, or '::' */
} tk_kind;

struct tk {
	tk_kind kind;
	size_t off;
	size_t len;
};

struct lexer {
	const char *s;
	size_t n;
	size_t pos;
	bool line_start; /* only whitespace since the line began */
	bool directive;  /* the line is a preprocessor directive */
};

/* Past the literal whose quote is at s[i]; an unterminated one ends at its
 * line's end, as the normalizer ends it. */
static size_t quoted_end(const char *s, size_t n, size_t i)
{
	if (s[i] == '"' && ap_c_raw_prefix(s, i)) {
		size_t end = ap_c_raw_end(s, i, n);
		if (end != 0)
			return end;
	}
	for (size_t j = i + 1; j < n; j++) {
		if (s[j] == s[i])
			return j + 1;
		if (s[j] == '\n')
			return j;
		if (s[j] == '\\' && j + 1 < n && s[j + 1] != '\n')
			j++;
	}
	return n;
}

/* Past the pp-number at s[i], so that the digit separator of 1'000 starts
 * no character literal. */
static size_t number_end(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		bool sign = (c == '+' || c == '-') && strchr("eEpP", s[i - 1]) != NULL;
		bool separator = c == '\'' && i + 1 < n && ap_c_ident_char((unsigned char)s[i + 1]);
		if (!ap_c_ident_char(c) && c != '.' && !sign && !separator)
			break;
	}
	return i;
}

static bool literal_prefix(const char *w, size_t len)
{
	static const char *const prefixes[] = {"R", "L", "u", "U", "u8", "LR", "uR", "UR", "u8R"};

	for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++)
		if (strlen(prefixes[k]) == len && memcmp(prefixes[k], w, len) == 0)
			return true;
	return false;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void lex(struct lexer *lx, struct tk *t)
{
	const char *s = lx->s;
	size_t i = lx->pos, end;
	char c;

	for (; i < lx->n && (s[i] == '\n' || ap_is_space_byte((unsigned char)s[i])); i++) {
		if (s[i] != '\n')
			continue;
		lx->line_start = true;
		if (lx->directive) {
			lx->directive = false;
			*t = (struct tk){TK_EOL, i, 1};
			lx->pos = i + 1;
			return;
		}
	}
	if (i >= lx->n) {
		*t = (struct tk){TK_END, lx->n, 0};
		lx->pos = lx->n;
		return;
	}
	c = s[i];
	lx->directive |= lx->line_start && c == '#';
	lx->line_start = false;
	if (ap_c_ident_char((unsigned char)c) && !is_digit(c)) {
		for (end = i + 1; end < lx->n && ap_c_ident_char((unsigned char)s[end]); end++)
			;
		t->kind = TK_NAME;
		if (end < lx->n && (s[end] == '"' || s[end] == '\'') && literal_prefix(s + i, end - i)) {
			t->kind = TK_LITERAL;
			end = quoted_end(s, lx->n, end);
		}
	} else if (is_digit(c) || (c == '.' && i + 1 < lx->n && is_digit(s[i + 1]))) {
		t->kind = TK_LITERAL;
		end = number_end(s, lx->n, i);
	} else if (c == '"' || c == '\'') {
		t->kind = c == '"' ? TK_STRING : TK_LITERAL;
		end = quoted_end(s, lx->n, i);
	} else {
		t->kind = TK_PUNCT;
		end = i + (c == ':' && i + 1 < lx->n && s[i + 1] == ':' ? 2 : 1);
	}
	t->off = i;
	t->len = end - i;
	lx->pos = end;
}

/* --- Chains --------------------------------------------------------------- */

/* Brackets nest at most this deep in a chain; deeper, it does not parse. */
#define MAX_DEPTH 256

struct member {
	size_t off;  /* the call's '.' in the text */
	struct tk name;
	char *cxx;   /* its second argument's tokens */
};

struct parser {
	struct lexer lx;
	struct tk cur;
	const char *why; /* why the chain being read does not parse */
	struct member *v;
	size_t n;
	size_t cap;
};

static void advance(struct parser *p)
{
	lex(&p->lx, &p->cur);
}

static bool punct(const struct parser *p, char c)
{
	return p->cur.kind == TK_PUNCT && p->cur.len == 1 && p->lx.s[p->cur.off] == c;
}

static bool name_is(const struct parser *p, const char *w)
{
	return p->cur.kind == TK_NAME && p->cur.len == strlen(w) &&
	       memcmp(p->lx.s + p->cur.off, w, p->cur.len) == 0;
}

static bool fail(struct parser *p, const char *why)
{
	p->why = why;
	return false;
}

/* Tokens joined as written, a space only where two words would merge. */
static void append_token(ap_buf *b, const struct parser *p)
{
	const char *s = p->lx.s + p->cur.off;

	if (b->len > 0 && ap_c_ident_char((unsigned char)b->data[b->len - 1]) &&
	    ap_c_ident_char((unsigned char)s[0]))
		ap_buf_putc(b, ' ');
	ap_buf_append(b, s, p->cur.len);
}

/* Past the group that the current token opens: '(', '[', '{', or the '<' of
 * template arguments, within which a '<' opens and a '>' closes (elsewhere
 * they compare). A ';' outside braces, the end of a directive or of the
 * text, a closer not of the innermost opener and too deep a nesting fail. */
static bool skip_group(struct parser *p, ap_buf *text)
{
	static const char pairs[] = "()[]{}<>";
	char open[MAX_DEPTH];
	size_t depth = 0, braces = 0;

	do {
		char c = p->cur.kind == TK_PUNCT && p->cur.len == 1 ? p->lx.s[p->cur.off] : '\0';
		const char *pair = c != '\0' ? strchr(pairs, c) : NULL;

		if (p->cur.kind == TK_END || p->cur.kind == TK_EOL || (c == ';' && braces == 0))
			return fail(p, "its brackets do not balance");
		if (pair != NULL && (pair - pairs) % 2 == 0 &&
		    (c != '<' || depth == 0 || open[depth - 1] == '<')) {
			if (depth == MAX_DEPTH)
				return fail(p, "its brackets nest too deeply");
			open[depth++] = c;
			braces += c == '{';
		} else if (pair != NULL && (pair - pairs) % 2 == 1 && (c != '>' || open[depth - 1] == '<')) {
			if (open[depth - 1] != pair[-1])
				return fail(p, "its brackets do not balance");
			depth--;
			braces -= c == '}';
		}
		if (text != NULL)
			append_token(text, p);
		advance(p);
	} while (depth > 0);
	return true;
}

/* Up to the ',' or ')' that ends the argument starting at the current token. */
static bool skip_arg(struct parser *p, ap_buf *text)
{
	while (!punct(p, ',') && !punct(p, ')')) {
		if (punct(p, '(') || punct(p, '[') || punct(p, '{')) {
			if (!skip_group(p, text))
				return false;
			continue;
		}
		if (p->cur.kind == TK_END || p->cur.kind == TK_EOL || punct(p, ';') || punct(p, ']') ||
		    punct(p, '}'))
			return fail(p, "its brackets do not balance");
		if (text != NULL)
			append_token(text, p);
		advance(p);
	}
	return true;
}

/* Past the argument list whose '(' is the current token: str[k] is argument
 * k (k < 2) when that is a string literal alone (else of kind TK_END), and
 * the tokens of argument 1 go to second when not NULL. */
static bool read_args(struct parser *p, struct tk str[2], ap_buf *second)
{
	str[0].kind = str[1].kind = TK_END;
	advance(p);
	if (punct(p, ')')) {
		advance(p);
		return true;
	}
	for (size_t k = 0;; k++) {
		ap_buf *text = k == 1 ? second : NULL;
		bool last;

		if (k < 2 && p->cur.kind == TK_STRING) {
			struct tk s = p->cur;
			if (text != NULL)
				append_token(text, p);
			advance(p);
			if (punct(p, ',') || punct(p, ')'))
				str[k] = s;
		}
		if (!skip_arg(p, text))
			return false;
		last = punct(p, ')');
		advance(p);
		if (last)
			return true;
	}
}

/* A conditional directive between a chain's calls, skipped: the calls of
 * every arm count, as what the build defines is not known. Any other
 * directive there ends the chain. */
static bool skip_conditional(struct parser *p)
{
	static const char *const words[] = {"if",      "ifdef",    "ifndef", "elif",
	                                    "elifdef", "elifndef", "else",   "endif"};
	bool known = false;

	advance(p);
	for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
		known |= name_is(p, words[k]);
	if (!known)
		return false;
	while (p->cur.kind != TK_EOL && p->cur.kind != TK_END)
		advance(p);
	advance(p);
	return true;
}

/* The chain from the token after its enum_: template arguments, the
 * constructor's arguments (*name: the second, a string literal alone, or of
 * kind TK_END), then its calls up to its end, each .value in p's members. */
static bool read_chain(struct parser *p, bool in_define, struct tk *name)
{
	struct tk str[2];

	name->kind = TK_END;
	if (!punct(p, '<') || !skip_group(p, NULL) || !punct(p, '(') || !read_args(p, str, NULL))
		return false;
	*name = str[1];
	for (;;) {
		ap_buf cxx = AP_BUF_INIT;
		size_t dot = p->cur.off;
		bool value;

		if (punct(p, ';') || (in_define && p->cur.kind == TK_EOL))
			return true;
		if (!in_define && punct(p, '#') && p->lx.directive) {
			if (!skip_conditional(p))
				return fail(p, "no ';' ends it");
			continue;
		}
		if (!punct(p, '.'))
			return fail(p, "no ';' ends it");
		advance(p);
		value = name_is(p, "value");
		if (p->cur.kind != TK_NAME)
			return fail(p, "no ';' ends it");
		advance(p);
		if (!punct(p, '('))
			return fail(p, "no ';' ends it");
		if (!read_args(p, str, value ? &cxx : NULL)) {
			ap_buf_free(&cxx);
			return false;
		}
		if (value && str[0].kind == TK_STRING && cxx.len > 0) {
			ap_xgrow((void **)&p->v, &p->cap, p->n + 1, sizeof *p->v);
			p->v[p->n++] = (struct member){dot, str[0], ap_buf_detach(&cxx)};
		}
		ap_buf_free(&cxx);
	}
}

static void members_clear(struct parser *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].cxx);
	p->n = 0;
}

/* The text of a string literal token without escapes, closed. */
static bool plain_string(const char *s, const struct tk *t, const char **start, size_t *len)
{
	if (t->kind != TK_STRING || t->len < 2 || s[t->off + t->len - 1] != '"' ||
	    memchr(s + t->off + 1, '\\', t->len - 2) != NULL)
		return false;
	*start = s + t->off + 1;
	*len = t->len - 2;
	return true;
}

static bool string_is(const char *s, const struct tk *t, const char *want)
{
	const char *v;
	size_t len;

	return plain_string(s, t, &v, &len) && len == strlen(want) && memcmp(v, want, len) == 0;
}

/* What the chains of the rule's name showed, for an unmatched rule's
 * reason: bounded, whatever names a hostile file holds. */
#define VALUES_LISTED 32
#define NAME_LISTED 64

struct seen {
	size_t chains; /* those that parse */
	ap_buf values; /* their members' names, the first VALUES_LISTED */
	size_t nvalues;
	unsigned bad_line; /* the first that does not parse; 0: none */
	const char *bad_why;
};

/* The matches of a chain of the rule's name; false once the rule has all it
 * collects. */
static bool report(const struct pyenum *pe, const struct parser *p, const ap_text *t,
                   ap_kind_run *run, struct seen *sn)
{
	ap_match_list *out = &run->res->matches;

	sn->chains++;
	for (size_t i = 0; i < p->n; i++) {
		const char *v;
		size_t len;
		ap_match *m;

		if (!plain_string(t->s, &p->v[i].name, &v, &len))
			continue;
		if (sn->nvalues++ < VALUES_LISTED)
			ap_buf_printf(&sn->values, "%s%.*s%s", sn->values.len ? ", " : "",
			              (int)(len < NAME_LISTED ? len : NAME_LISTED), v,
			              len > NAME_LISTED ? "..." : "");
		if (pe->value != NULL && !string_is(t->s, &p->v[i].name, pe->value))
			continue;
		m = ap_match_add(out, t, p->v[i].off);
		ap_match_capture(m, "enum", pe->name, strlen(pe->name));
		ap_match_capture(m, "value", v, len);
		ap_match_capture(m, "member", p->v[i].cxx, strlen(p->v[i].cxx));
		if (run->rule->collect == AP_COLLECT_FIRST || out->over)
			return false;
	}
	return true;
}

static char *unmatched_reason(const struct pyenum *pe, const struct seen *sn)
{
	if (sn->chains > 0 && sn->nvalues == 0)
		return ap_xasprintf("enum '%s' has no values", pe->name);
	if (sn->chains > 0 && sn->nvalues > VALUES_LISTED)
		return ap_xasprintf("enum '%s' has no value '%s' (it has %s, and %zu more)", pe->name,
		                    pe->value, sn->values.data, sn->nvalues - VALUES_LISTED);
	if (sn->chains > 0)
		return ap_xasprintf("enum '%s' has no value '%s' (it has %s)", pe->name, pe->value,
		                    sn->values.data);
	if (sn->bad_line > 0)
		return ap_xasprintf("the chain of enum '%s' at line %u does not parse: %s", pe->name,
		                    sn->bad_line, sn->bad_why);
	return ap_xasprintf("no pybind11 enum is named '%s'", pe->name);
}

static void pyenum_run(const void *state, ap_kind_run *run)
{
	const struct pyenum *pe = state;
	ap_rule_result *res = run->res;
	const ap_text *t = ap_reader_text(run->reader, run->file, AP_LANG_C, AP_WS_KEEP);
	struct seen sn = {.values = AP_BUF_INIT};
	struct parser p = {0};
	bool going = true;

	if (t == NULL) {
		ap_rule_set_error(res, "%s", ap_error_last());
		return;
	}
	p.lx = (struct lexer){.s = t->s, .n = t->len, .line_start = true};
	advance(&p);
	while (going && p.cur.kind != TK_END) {
		size_t start = p.cur.off;
		struct tk name;
		bool in_define, ok;

		if (!name_is(&p, "py") && !name_is(&p, "pybind11")) {
			advance(&p);
			continue;
		}
		advance(&p);
		if (p.cur.kind != TK_PUNCT || p.cur.len != 2)
			continue;
		advance(&p);
		if (!name_is(&p, "enum_") && !name_is(&p, "native_enum"))
			continue;
		in_define = p.lx.directive;
		advance(&p);
		ok = read_chain(&p, in_define, &name);
		if (ok && string_is(t->s, &name, pe->name)) {
			going = report(pe, &p, t, run, &sn);
		} else if (string_is(t->s, &name, pe->name) && sn.bad_line == 0) {
			sn.bad_line = ap_text_line(t, start);
			sn.bad_why = p.why;
		}
		members_clear(&p);
		/* A chain that does not parse ends at a token that may begin the next. */
		if (ok)
			advance(&p);
	}
	members_clear(&p);
	free(p.v);
	res->status = res->matches.n > 0 ? AP_RULE_MATCHED : AP_RULE_UNMATCHED;
	if (res->matches.n == 0)
		res->reason = unmatched_reason(pe, &sn);
	ap_buf_free(&sn.values);
}

/* --- Loading -------------------------------------------------------------- */

/* ASCII only: a name `import aiter` exposes as an attribute, written as it
 * is in the C++ string literal. */
static bool python_name(const char *s)
{
	if (is_digit(s[0]))
		return false;
	for (; *s != '\0'; s++)
		if (*s != '_' && !is_digit(*s) && !(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z'))
			return false;
	return true;
}

static int name_option(const char *pack, const ap_ynode *n, const char *key, char **out)
{
	int rc = ap_y_string(pack, n, key, out);

	if (rc == 0 && **out == '\0')
		return ap_y_fail(pack, n, "'%s' must not be empty", key);
	if (rc == 0 && !python_name(*out))
		return ap_y_fail(pack, n,
		                 "'%s' must be a Python name (ASCII letters, digits and '_', not "
		                 "starting with a digit), not '%s'",
		                 key, *out);
	return rc;
}

static int pyenum_load(const ap_kind_load *l, void **state)
{
	struct pyenum *pe = ap_xcalloc(1, sizeof *pe);
	int rc;

	*state = pe;
	rc = name_option(l->pack, l->arg, "pybind-enum", &pe->name);
	if (rc == 0 && l->opts[0].key != NULL)
		rc = name_option(l->pack, l->opts[0].val, "value", &pe->value);
	return rc;
}

static void pyenum_free(void *state)
{
	struct pyenum *pe = state;

	if (pe == NULL)
		return;
	free(pe->name);
	free(pe->value);
	free(pe);
}

const ap_kind ap_kind_pybind_enum = {
	.key = "pybind-enum",
	.options = pyenum_options,
	.flags = AP_KIND_FILE | AP_KIND_COLLECT,
	.load = pyenum_load,
	.run = pyenum_run,
	.free = pyenum_free,
};
