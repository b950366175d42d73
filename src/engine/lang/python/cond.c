/* SPDX-License-Identifier: MIT */
/* The value on import of an `if` or `elif` condition, where a static
 * reading can tell it: CPython's constants, TYPE_CHECKING, the names the
 * options read as false, `__name__` against "__main__", and comparisons of
 * sys.version_info, sys.platform and os.name with literals, which take the
 * target interpreter's facts; combined with and, or and not in three-valued
 * logic (False and anything unknown is False). Anything else is unknown.
 * Alike, how many times a loop over a literal runs its body, whether the
 * body runs alike each time, and which case of a match on a literal or a
 * fact runs.
 *
 * The facts are asked only once a condition has the form that needs one and
 * its module names are bound as CPython binds them, so that a scan whose
 * conditions need none starts no interpreter. */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "core/ap-error.h"
#include "core/ap-map.h"
#include "engine/lang/python/python-int.h"

/* Longer tuple literals are not read (a version has five fields). */
#define MAX_ITEMS 8

/* A value a condition compares. */
struct val {
	enum { V_UNKNOWN, V_INT, V_STR, V_TUPLE, V_MODNAME } kind;
	long long i;
	const char *s; /* V_STR: the literal's body or the fact, not NUL-terminated */
	size_t len;
	/* V_TUPLE: items[0, n), each an integer or (is_str) a string; the
	 * first known of them are known */
	long long items[MAX_ITEMS];
	const char *strs[MAX_ITEMS];
	size_t lens[MAX_ITEMS];
	bool is_str[MAX_ITEMS];
	size_t n, known;
	bool strings; /* of strings only, at least one (str.startswith's prefixes) */
	bool list;    /* a list literal: never equal to a tuple */
};

static enum cond negate(enum cond c)
{
	return c == COND_UNKNOWN ? c : c == COND_TRUE ? COND_FALSE : COND_TRUE;
}

/* --- Names as the module binds them --------------------------------------- */

/* Whether the module-level name, as bound so far, certainly holds what one
 * statement binds: `import MODULE` (kind IMPORT; module "typing", "sys") or
 * `from MODULE import TARGET` (kind FROM). Every binding of it must be that
 * one, since which arm of an unknown condition bound it last is not known;
 * and no star import may have come from another module, as it could rebind
 * the name. Where the one binding is in an arm that may not have run, the
 * name is that or unbound, and unbound it raises NameError: the module does
 * not import at all, and nothing it would bind matters. */
static bool bound_as(const struct parser *p, const char *name, size_t len, ap_py_bind_kind kind,
                     const char *module, const char *target)
{
	const ap_py_module *m = p->m;
	bool bound = false;

	for (size_t i = 0; i < m->nbindings; i++) {
		const ap_py_binding *b = &m->bindings[i];
		if (b->kind == AP_PY_BIND_STAR && strcmp(b->module, module) != 0)
			return false;
		if (b->name == NULL || strncmp(b->name, name, len) != 0 || b->name[len] != '\0')
			continue;
		if (b->kind != kind || strcmp(b->module, module) != 0 ||
		    (target != NULL && strcmp(b->target, target) != 0))
			return false;
		bound = true;
	}
	return bound;
}

/* bound_as of the name token t, as CPython binds it (NFKC). */
static bool name_bound_as(const struct parser *p, const tok *t, ap_py_bind_kind kind,
                          const char *module, const char *target)
{
	ap_buf b = AP_BUF_INIT;
	const char *s;
	size_t len;
	bool r;

	if (t->kind != T_NAME || t->code != 0)
		return false;
	s = ap_py_name(p, t, &b, &len);
	r = bound_as(p, s, len, kind, module, target);
	ap_buf_free(&b);
	return r;
}

/* Whether the token is a name bound only by `import module` (or `import
 * module as NAME`). */
static bool module_name(const struct parser *p, const tok *t, const char *module)
{
	return name_bound_as(p, t, AP_PY_BIND_IMPORT, module, NULL);
}

/* Whether sv[a, b) names MODULE.ATTR: `sys.platform` after `import sys`,
 * or a bare name bound only by `from sys import platform` (as any name). */
static bool names_attr(const struct parser *p, size_t a, size_t b, const char *module,
                       const char *attr)
{
	const tok *v = p->sv;

	if (b - a == 3)
		return ap_py_is_op(&v[a + 1], '.') && ap_py_is_word(p, &v[a + 2], attr) &&
		       module_name(p, &v[a], module);
	return b - a == 1 && name_bound_as(p, &v[a], AP_PY_BIND_FROM, module, attr);
}

/* `__name__`, which no statement so far bound: the module's name, never
 * "__main__" on import. A star import binds it only through an __all__
 * naming it, which no module does. */
static bool dunder_name(const struct parser *p, size_t a, size_t b)
{
	const ap_py_module *m = p->m;

	if (b - a != 1 || !ap_py_is_word(p, &p->sv[a], "__name__"))
		return false;
	for (size_t i = 0; i < m->nbindings; i++)
		if (m->bindings[i].name != NULL && strcmp(m->bindings[i].name, "__name__") == 0)
			return false;
	return true;
}

/* --- Values --------------------------------------------------------------- */

static const ap_py_facts *facts(const struct parser *p, unsigned need)
{
	const ap_py_options *o = p->opt;

	return o != NULL && o->facts != NULL ? o->facts(o->ctx, need) : NULL;
}

static void set_str(struct val *v, const char *s)
{
	if (s == NULL)
		return;
	v->kind = V_STR;
	v->s = s;
	v->len = strlen(s);
}

/* A decimal integer literal as CPython reads it: digits, no leading zero
 * but in 0 itself, no underscores (not worth reading), at most 18 digits. */
static bool int_literal(const struct parser *p, const tok *t, long long *out)
{
	const char *s = p->s + t->off;
	long long n = 0;

	if (t->kind != T_NUMBER || t->len > 18 || (t->len > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < t->len; i++) {
		if (!ap_py_is_digit(s[i]))
			return false;
		n = n * 10 + (s[i] - '0');
	}
	*out = n;
	return true;
}

/* A tuple or list literal of integers and strings, sv[a, b) inside its
 * brackets (a tuple's own parentheses, if any, already taken off). */
static void seq_literal(const struct parser *p, size_t a, size_t b, struct val *v)
{
	const tok *t = p->sv;
	size_t n = 0;
	bool strs = true;

	while (a < b) {
		if (n == MAX_ITEMS)
			return;
		if (ap_py_plain_str(p, &t[a], &v->strs[n], &v->lens[n]))
			v->is_str[n] = true;
		else if (!int_literal(p, &t[a], &v->items[n]))
			return;
		strs &= v->is_str[n];
		n++;
		a++;
		if (a < b && !ap_py_is_op(&t[a], ','))
			return;
		a++;
	}
	v->kind = V_TUPLE;
	v->n = n;
	v->known = n;
	v->strings = strs && n > 0;
}

/* sys.version_info[:end] as a tuple (end 5: the whole). */
static void version_tuple(const struct parser *p, size_t end, struct val *v)
{
	const ap_py_facts *f = facts(p, AP_PY_FACT_VERSION);

	if (f == NULL || f->nversion < 2)
		return;
	v->kind = V_TUPLE;
	v->n = end < 5 ? end : 5;
	v->items[0] = f->major;
	v->items[1] = f->minor;
	v->items[2] = f->micro;
	v->is_str[3] = true;
	v->known = v->n < f->nversion ? v->n : f->nversion;
	if (v->n > 3 && f->releaselevel != NULL && v->known == 3) {
		v->strs[3] = f->releaselevel;
		v->lens[3] = strlen(f->releaselevel);
		v->known = 4;
	}
}

/* sys.version_info's field k: 0 to 2 integers, 3 the releaselevel. */
static void version_field(const struct parser *p, long long k, struct val *v)
{
	const ap_py_facts *f = facts(p, AP_PY_FACT_VERSION);

	if (f == NULL || k >= 4 || (k < 3 && (unsigned long long)k >= f->nversion))
		return;
	if (k == 3) {
		set_str(v, f->releaselevel);
		return;
	}
	v->kind = V_INT;
	v->i = k == 0 ? f->major : k == 1 ? f->minor : f->micro;
}

/* What follows sys.version_info: nothing, [K], [:K], [0:K] or .FIELD. */
static void version_value(const struct parser *p, size_t a, size_t b, struct val *v)
{
	static const char *const fields[] = {"major", "minor", "micro", "releaselevel"};
	const tok *t = p->sv;
	long long k;

	if (a == b) {
		version_tuple(p, 5, v);
		return;
	}
	if (b - a == 2 && ap_py_is_op(&t[a], '.')) {
		for (k = 0; k < 4; k++)
			if (ap_py_is_word(p, &t[a + 1], fields[k]))
				version_field(p, k, v);
		return;
	}
	if (!ap_py_is_op(&t[a], '[') || ap_py_closer(p, a, b) != b - 1)
		return;
	if (b - a == 3 && int_literal(p, &t[a + 1], &k))
		version_field(p, k, v);
	else if (b - a == 4 && ap_py_is_op(&t[a + 1], ':') && int_literal(p, &t[a + 2], &k))
		version_tuple(p, (size_t)(k < 5 ? k : 5), v);
	else if (b - a == 5 && ap_py_is_number(p, &t[a + 1], "0") && ap_py_is_op(&t[a + 2], ':') &&
	         int_literal(p, &t[a + 3], &k))
		version_tuple(p, (size_t)(k < 5 ? k : 5), v);
}

/* The length of the name at sv[a] that is sys.version_info (3 for
 * `sys . version_info`, 1 for a name from `from sys import version_info`),
 * or 0. */
static size_t version_name(const struct parser *p, size_t a, size_t b)
{
	if (b - a >= 3 && names_attr(p, a, a + 3, "sys", "version_info"))
		return 3;
	return b - a >= 1 && names_attr(p, a, a + 1, "sys", "version_info") ? 1 : 0;
}

static void value(const struct parser *p, size_t a, size_t b, struct val *v)
{
	const tok *t = p->sv;
	const ap_py_facts *f;
	size_t k;

	memset(v, 0, sizeof *v);
	while (ap_py_parenthesised(p, a, b))
		a++, b--;
	if (a >= b)
		return;
	if (b - a == 2 && ap_py_is_op(&t[a], '(') && ap_py_is_op(&t[a + 1], ')')) {
		seq_literal(p, a, a, v);
		return;
	}
	/* A bare tuple, once parentheses are off: a comma at its depth. */
	for (k = a; k < b; k++) {
		if (t[k].depth == t[a].depth && ap_py_is_op(&t[k], ',')) {
			seq_literal(p, a, b, v);
			return;
		}
	}
	if (ap_py_is_op(&t[a], '[') && ap_py_closer(p, a, b) == b - 1) {
		seq_literal(p, a + 1, b - 1, v);
		v->list = true;
		return;
	}
	if (b - a == 1) {
		if (int_literal(p, &t[a], &v->i))
			v->kind = V_INT;
		else if (ap_py_plain_str(p, &t[a], &v->s, &v->len))
			v->kind = V_STR;
		else if (dunder_name(p, a, b))
			v->kind = V_MODNAME;
	}
	if (v->kind != V_UNKNOWN)
		return;
	if ((k = version_name(p, a, b)) > 0)
		version_value(p, a + k, b, v);
	else if (names_attr(p, a, b, "sys", "platform") && (f = facts(p, AP_PY_FACT_PLATFORM)))
		set_str(v, f->platform);
	else if (names_attr(p, a, b, "os", "name") && (f = facts(p, AP_PY_FACT_OS_NAME)))
		set_str(v, f->os_name);
}

/* --- Comparisons ---------------------------------------------------------- */

enum cmp { CMP_LT, CMP_LE, CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_IN, CMP_NOT_IN, CMP_OTHER };

static enum cond from_order(enum cmp op, int order)
{
	bool r;

	switch (op) {
	case CMP_LT: r = order < 0; break;
	case CMP_LE: r = order <= 0; break;
	case CMP_EQ: r = order == 0; break;
	case CMP_NE: r = order != 0; break;
	case CMP_GT: r = order > 0; break;
	case CMP_GE: r = order >= 0; break;
	default: return COND_UNKNOWN;
	}
	return r ? COND_TRUE : COND_FALSE;
}

static int sign(long long d)
{
	return d < 0 ? -1 : d > 0;
}

/* str order: UTF-8 bytes sort as their code points do. */
static int bytes_order(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c != 0 ? sign(c) : sign((long long)alen - (long long)blen);
}

/* Tuples as CPython compares them: item by item up to the first that
 * differs, then by length. == and != need no item when the lengths differ
 * (the first item that differs, or the lengths, say unequal either way),
 * and an integer is unequal to a string; ordering them is a TypeError,
 * unknown as items not known are. A tuple and a list are never equal, and
 * not ordered. */
static enum cond tuples(enum cmp op, const struct val *l, const struct val *r)
{
	bool equality = op == CMP_EQ || op == CMP_NE;
	size_t n = l->n < r->n ? l->n : r->n;

	if (l->list != r->list)
		return equality ? from_order(op, 1) : COND_UNKNOWN;
	if (equality && l->n != r->n)
		return from_order(op, 1);
	for (size_t k = 0; k < n; k++) {
		int order;
		if (k >= l->known || k >= r->known)
			return COND_UNKNOWN;
		if (l->is_str[k] != r->is_str[k])
			return equality ? from_order(op, 1) : COND_UNKNOWN;
		order = !l->is_str[k] ? sign(l->items[k] - r->items[k])
		                      : bytes_order(l->strs[k], l->lens[k], r->strs[k], r->lens[k]);
		if (order != 0)
			return from_order(op, order);
	}
	return from_order(op, sign((long long)l->n - (long long)r->n));
}

static enum cond compare(enum cmp op, const struct val *l, const struct val *r)
{
	if (op == CMP_IN || op == CMP_NOT_IN) {
		enum cond c = COND_FALSE;
		/* a str is equal to no integer */
		if (l->kind != V_STR || r->kind != V_TUPLE)
			return COND_UNKNOWN;
		for (size_t k = 0; k < r->n; k++)
			if (r->is_str[k] && bytes_order(l->s, l->len, r->strs[k], r->lens[k]) == 0)
				c = COND_TRUE;
		return op == CMP_IN ? c : negate(c);
	}
	if (l->kind == V_MODNAME || r->kind == V_MODNAME) {
		const struct val *s = l->kind == V_MODNAME ? r : l;
		if ((op != CMP_EQ && op != CMP_NE) || s->kind != V_STR || s->len != 8 ||
		    memcmp(s->s, "__main__", 8) != 0)
			return COND_UNKNOWN;
		return from_order(op, 1);
	}
	if (l->kind != r->kind)
		return COND_UNKNOWN;
	switch (l->kind) {
	case V_INT:
		return from_order(op, sign(l->i - r->i));
	case V_STR:
		return from_order(op, bytes_order(l->s, l->len, r->s, r->len));
	case V_TUPLE:
		return tuples(op, l, r);
	default:
		return COND_UNKNOWN;
	}
}

/* The comparison operator at sv[k], its length in tokens in *len (0: none
 * there); `is` and `is not` are CMP_OTHER. */
static enum cmp comparison_op(const struct parser *p, size_t k, size_t b, size_t *len)
{
	static const struct {
		unsigned code;
		enum cmp op;
	} ops[] = {{'<', CMP_LT}, {OP_LE, CMP_LE}, {OP_EQ, CMP_EQ},
	           {OP_NE, CMP_NE}, {'>', CMP_GT}, {OP_GE, CMP_GE}};
	const tok *t = &p->sv[k];

	*len = 1;
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (ap_py_is_op(t, ops[i].code))
			return ops[i].op;
	if (ap_py_is_kw(t, KW_IN))
		return CMP_IN;
	if (ap_py_is_kw(t, KW_NOT) && k + 1 < b && ap_py_is_kw(&t[1], KW_IN)) {
		*len = 2;
		return CMP_NOT_IN;
	}
	if (ap_py_is_kw(t, KW_IS))
		return CMP_OTHER;
	*len = 0;
	return CMP_OTHER;
}

/* str.startswith on a value: `sys.platform.startswith("linux")`, or with a
 * tuple of prefixes; sv[a, b) is the whole call. */
static enum cond startswith(const struct parser *p, size_t a, size_t b)
{
	const tok *t = p->sv;
	struct val s, arg;
	size_t dot = b;

	for (size_t k = a; k + 2 < b; k++)
		if (t[k].depth == t[a].depth && ap_py_is_op(&t[k], '.') &&
		    ap_py_is_word(p, &t[k + 1], "startswith") && ap_py_is_op(&t[k + 2], '('))
			dot = k;
	if (dot == b || dot == a || ap_py_closer(p, dot + 2, b) != b - 1)
		return COND_UNKNOWN;
	value(p, dot + 3, b - 1, &arg);
	if (arg.kind == V_STR) {
		arg.strs[0] = arg.s;
		arg.lens[0] = arg.len;
		arg.n = 1;
	} else if (arg.kind != V_TUPLE || arg.list || !arg.strings) {
		return COND_UNKNOWN;
	}
	value(p, a, dot, &s);
	if (s.kind != V_STR)
		return COND_UNKNOWN;
	for (size_t k = 0; k < arg.n; k++)
		if (arg.lens[k] <= s.len && memcmp(s.s, arg.strs[k], arg.lens[k]) == 0)
			return COND_TRUE;
	return COND_FALSE;
}

/* --- Truth ---------------------------------------------------------------- */

static bool false_name(const struct parser *p, size_t a, size_t b)
{
	if (b - a != 1 || p->sv[a].kind != T_NAME || p->false_names == NULL)
		return false;
	for (const char *const *f = p->false_names; *f; f++)
		if (ap_py_is_word(p, &p->sv[a], *f))
			return true;
	return false;
}

/* The value of sv[a, b) when it is one CPython knows before running the
 * module: typing.TYPE_CHECKING is False on import, the constants are what
 * they say. */
static enum cond constant(const struct parser *p, size_t a, size_t b)
{
	const tok *v = p->sv + a;

	if (b - a == 3 && ap_py_is_op(&v[1], '.') && ap_py_is_word(p, &v[2], "TYPE_CHECKING") &&
	    module_name(p, &v[0], "typing"))
		return COND_FALSE;
	if (b - a != 1)
		return COND_UNKNOWN;
	if (ap_py_is_kw(v, KW_FALSE) || ap_py_is_kw(v, KW_NONE) || ap_py_is_number(p, v, "0"))
		return COND_FALSE;
	if (ap_py_is_kw(v, KW_TRUE) || ap_py_is_number(p, v, "1"))
		return COND_TRUE;
	if (name_bound_as(p, v, AP_PY_BIND_FROM, "typing", "TYPE_CHECKING"))
		return COND_FALSE;
	return COND_UNKNOWN;
}

static enum cond and3(enum cond a, enum cond b)
{
	if (a == COND_FALSE || b == COND_FALSE)
		return COND_FALSE;
	return a == COND_TRUE && b == COND_TRUE ? COND_TRUE : COND_UNKNOWN;
}

/* One operand alone, a comparison, or a chain of them: a < b < c is
 * a < b and b < c, with c read only when a < b is not false. */
static enum cond comparison(const struct parser *p, size_t a, size_t b)
{
	const tok *t = p->sv;
	unsigned d = t[a].depth;
	size_t start = a, k = a, len = 0;
	enum cmp op = CMP_OTHER, next = CMP_OTHER;
	bool left = false;
	enum cond c = COND_TRUE;
	struct val l, r;

	for (;;) {
		if (k < b) {
			next = t[k].depth == d ? comparison_op(p, k, b, &len) : CMP_OTHER;
			if (t[k].depth != d || len == 0) {
				k++;
				continue;
			}
			if (next == CMP_OTHER)
				return COND_UNKNOWN;
		}
		if (k == start)
			return COND_UNKNOWN;
		if (k == b && !left) {
			c = false_name(p, a, b) ? COND_FALSE : constant(p, a, b);
			return c != COND_UNKNOWN ? c : startswith(p, a, b);
		}
		value(p, start, k, left ? &r : &l);
		if (left) {
			c = and3(c, compare(op, &l, &r));
			if (c == COND_FALSE)
				return c;
			l = r;
		}
		if (k == b)
			return c;
		left = true;
		op = next;
		start = k = k + len;
	}
}

static enum cond truth(const struct parser *p, size_t a, size_t b);

/* sv[a, b) split at the keyword kw (and, or) at its depth, each part read
 * left to right until one decides: false for and, true for or. */
static bool split(const struct parser *p, size_t a, size_t b, unsigned kw, enum cond *out)
{
	const tok *t = p->sv;
	enum cond stop = kw == KW_AND ? COND_FALSE : COND_TRUE;
	bool unknown = false, found = false;
	size_t start = a;

	for (size_t k = a; k <= b; k++) {
		enum cond c;
		if (k < b && !(t[k].depth == t[a].depth && ap_py_is_kw(&t[k], kw)))
			continue;
		if (k == b && !found)
			return false;
		found = true;
		c = start < k ? truth(p, start, k) : COND_UNKNOWN;
		if (c == stop) {
			*out = stop;
			return true;
		}
		unknown |= c == COND_UNKNOWN;
		start = k + 1;
	}
	*out = unknown ? COND_UNKNOWN : negate(stop);
	return true;
}

/* The truth of sv[a, b). A run of `not` is read in a loop, so that only
 * brackets, which the tokenizer bounds, nest the calls. */
static enum cond truth(const struct parser *p, size_t a, size_t b)
{
	const tok *t = p->sv;
	bool negated = false;
	enum cond c;

	for (;;) {
		while (ap_py_parenthesised(p, a, b))
			a++, b--;
		if (a >= b)
			return COND_UNKNOWN;
		/* A conditional expression, a lambda or := at this depth is not read. */
		for (size_t k = a; k < b; k++)
			if (t[k].depth == t[a].depth &&
			    (ap_py_is_kw(&t[k], KW_IF) || ap_py_is_kw(&t[k], KW_LAMBDA) ||
			     ap_py_is_op(&t[k], OP_WALRUS)))
				return COND_UNKNOWN;
		if (split(p, a, b, KW_OR, &c) || split(p, a, b, KW_AND, &c))
			return negated ? negate(c) : c;
		if (!ap_py_is_kw(&t[a], KW_NOT))
			break;
		negated = !negated;
		a++;
	}
	c = comparison(p, a, b);
	return negated ? negate(c) : c;
}

/* --- Handlers ------------------------------------------------------------- */

/* Builtin exceptions that ModuleNotFoundError is, and some common ones it
 * is not. */
static const char *const catch_all[] = {"ModuleNotFoundError", "ImportError", "Exception",
                                        "BaseException"};
static const char *const catch_none[] = {
	"AttributeError",  "ValueError",        "TypeError",          "KeyError",
	"IndexError",      "LookupError",       "NameError",          "RuntimeError",
	"OSError",         "IOError",           "EnvironmentError",   "NotImplementedError",
	"AssertionError",  "ArithmeticError",   "ZeroDivisionError",  "OverflowError",
	"SyntaxError",     "SystemError",       "KeyboardInterrupt",  "SystemExit",
	"StopIteration",   "RecursionError",    "UnicodeError",       "UnicodeDecodeError",
	"FileNotFoundError", "PermissionError", "MemoryError",        "EOFError",
	"Warning",         "ImportWarning",     "DeprecationWarning", "UserWarning",
};

/* Whether the name at t is one of the n builtins in names, which the module
 * has not bound itself. */
static bool builtin_in(const struct parser *p, const tok *t, const char *const *names, size_t n)
{
	const ap_py_module *m = p->m;

	for (size_t i = 0; i < n; i++) {
		if (!ap_py_is_word(p, t, names[i]))
			continue;
		for (size_t k = 0; k < m->nbindings; k++)
			if (m->bindings[k].name != NULL && strcmp(m->bindings[k].name, names[i]) == 0)
				return false;
		return true;
	}
	return false;
}

enum cond ap_py_catches_import(const struct parser *p, size_t a, size_t b)
{
	const tok *t = p->sv;
	enum cond c = COND_FALSE;

	for (size_t k = a; k < b; k++)
		if (t[k].depth == 0 && ap_py_is_kw(&t[k], KW_AS))
			b = k;
	if (a == b)
		return COND_TRUE;
	while (ap_py_parenthesised(p, a, b))
		a++, b--;
	/* the names of a tuple, each evaluated before any is matched */
	for (size_t k = a; k < b; k += 2) {
		if (builtin_in(p, &t[k], catch_all, sizeof catch_all / sizeof *catch_all))
			c = COND_TRUE;
		else if (!builtin_in(p, &t[k], catch_none, sizeof catch_none / sizeof *catch_none))
			return COND_UNKNOWN;
		if (k + 1 < b && !ap_py_is_op(&t[k + 1], ','))
			return COND_UNKNOWN;
	}
	return c;
}

bool ap_py_suppress(const struct parser *p, size_t a, size_t b, enum cond *catches)
{
	const tok *v = p->sv;
	bool any = false;
	size_t k;

	for (k = a; k + 1 < b && !any; k++)
		any = ap_py_is_word(p, &v[k], "suppress") && ap_py_is_op(&v[k + 1], '(');
	if (!any)
		return false;
	/* another's suppress, contextlib's under a name rebound, or one among
	 * other items */
	*catches = COND_UNKNOWN;
	while (ap_py_parenthesised(p, a, b))
		a++, b--;
	for (k = a; k < b && !ap_py_is_op(&v[k], '('); k++)
		;
	if (k < b && ap_py_closer(p, k, b) == b - 1 && names_attr(p, a, k, "contextlib", "suppress"))
		/* suppress() suppresses nothing */
		*catches = k + 1 == b - 1 ? COND_FALSE : ap_py_catches_import(p, k + 1, b - 1);
	return true;
}

bool ap_py_cond_input(const struct parser *p, size_t i)
{
	static const char *const own[] = {"__name__", "range", "TYPE_CHECKING"};
	const ap_py_module *m = p->m;
	const char *name = m->bindings[i].name;

	for (size_t k = 0; k < sizeof own / sizeof *own; k++)
		if (strcmp(name, own[k]) == 0)
			return true;
	for (size_t k = 0; k < sizeof catch_all / sizeof *catch_all; k++)
		if (strcmp(name, catch_all[k]) == 0)
			return true;
	for (size_t k = 0; k < sizeof catch_none / sizeof *catch_none; k++)
		if (strcmp(name, catch_none[k]) == 0)
			return true;
	for (const char *const *f = p->false_names; f != NULL && *f; f++)
		if (strcmp(name, *f) == 0)
			return true;
	for (size_t j = p->prev_same[i]; j != SIZE_MAX; j = p->prev_same[j])
		if (m->bindings[j].kind == AP_PY_BIND_IMPORT || m->bindings[j].kind == AP_PY_BIND_FROM)
			return true;
	return false;
}

enum cond ap_py_condition(const struct parser *p, size_t a, size_t b)
{
	for (size_t k = a; k < b; k++)
		if (p->sv[k].kind == T_CUT)
			return COND_UNKNOWN;
	return truth(p, a, b);
}

/* --- Loops and match ------------------------------------------------------ */

long long ap_py_iterations(const struct parser *p, size_t a, size_t b, ap_py_bind_kind *last,
                           size_t *name)
{
	const tok *t = p->sv;
	long long n = 1, i;
	size_t item = a, e;
	bool list = false, comma = false;

	*last = AP_PY_BIND_OTHER;
	for (size_t k = a; k < b; k++)
		if (t[k].kind == T_CUT || ap_py_is_kw(&t[k], KW_LAMBDA))
			return -1;
	if (b - a == 4 && ap_py_is_word(p, &t[a], "range") && ap_py_is_op(&t[a + 1], '(') &&
	    ap_py_is_op(&t[a + 3], ')') && builtin_in(p, &t[a], (const char *const[]){"range"}, 1))
		return int_literal(p, &t[a + 2], &i) ? i : -1;
	if (b - a >= 2 && (ap_py_is_op(&t[a], '(') || ap_py_is_op(&t[a], '[')) &&
	    ap_py_closer(p, a, b) == b - 1) {
		if (b - a == 2)
			return 0;
		list = ap_py_is_op(&t[a], '[');
		item = ++a;
		b--;
	}
	/* the items between the commas at the literal's depth; (x) is no tuple */
	for (size_t k = a; k < b; k++) {
		if (t[k].depth != t[a].depth)
			continue;
		if (ap_py_is_op(&t[k], '*') || ap_py_is_op(&t[k], OP_POW))
			return -1;
		if (ap_py_is_op(&t[k], ',')) {
			comma = true;
			if (k + 1 < b) {
				n++;
				item = k + 1;
			}
		}
	}
	if (!comma && !list)
		return -1;
	/* what the last item is: a name's binding, a literal's value, else unknown */
	for (e = item; e < b && !(t[e].depth == t[item].depth && ap_py_is_op(&t[e], ',')); e++)
		;
	*name = item;
	if (e - item != 1)
		*last = AP_PY_BIND_UNKNOWN;
	else if (ap_py_is_ident(&t[item]))
		*last = AP_PY_BIND_ALIAS;
	else if (!(t[item].kind == T_NUMBER || t[item].kind == T_STRING ||
	           ap_py_is_kw(&t[item], KW_NONE) || ap_py_is_kw(&t[item], KW_TRUE) ||
	           ap_py_is_kw(&t[item], KW_FALSE)))
		*last = AP_PY_BIND_UNKNOWN;
	return n;
}

void ap_py_subject(const struct parser *p, size_t a, size_t b, struct ap_py_subject *out)
{
	struct val v;

	memset(out, 0, sizeof *out);
	for (size_t k = a; k < b; k++)
		if (p->sv[k].kind == T_CUT)
			return;
	while (ap_py_parenthesised(p, a, b))
		a++, b--;
	if (b - a == 1 && ap_py_is_kw(&p->sv[a], KW_NONE)) {
		out->kind = SUBJ_NONE;
		return;
	}
	if (b - a == 1 && (ap_py_is_kw(&p->sv[a], KW_TRUE) || ap_py_is_kw(&p->sv[a], KW_FALSE))) {
		out->kind = ap_py_is_kw(&p->sv[a], KW_TRUE) ? SUBJ_TRUE : SUBJ_FALSE;
		return;
	}
	value(p, a, b, &v);
	if (v.kind == V_INT) {
		out->kind = SUBJ_INT;
		out->i = v.i;
	} else if (v.kind == V_STR) {
		out->kind = SUBJ_STR;
		out->s = v.s;
		out->len = v.len;
	}
}

/* One literal or wildcard pattern sv[a, b). */
static enum cond one_pattern(const struct parser *p, const struct ap_py_subject *subj, size_t a,
                             size_t b, bool *capture)
{
	const tok *t = p->sv + a;
	const char *s;
	size_t len;
	long long i;
	bool neg = false;

	*capture = false;
	if (b - a == 1 && t->kind == T_NAME && t->code == 0) {
		/* `_`, or a capture name: matches whatever the subject */
		*capture = !ap_py_is_word(p, t, "_");
		return COND_TRUE;
	}
	if (subj->kind == SUBJ_UNKNOWN)
		return COND_UNKNOWN;
	if (b - a == 1 && (ap_py_is_kw(t, KW_NONE) || ap_py_is_kw(t, KW_TRUE) ||
	                   ap_py_is_kw(t, KW_FALSE)))
		return (ap_py_is_kw(t, KW_NONE)   ? subj->kind == SUBJ_NONE
		        : ap_py_is_kw(t, KW_TRUE) ? subj->kind == SUBJ_TRUE
		                                  : subj->kind == SUBJ_FALSE)
		               ? COND_TRUE
		               : COND_FALSE;
	if (b - a == 1 && ap_py_plain_str(p, t, &s, &len))
		return subj->kind == SUBJ_STR && subj->len == len && memcmp(subj->s, s, len) == 0
		               ? COND_TRUE
		               : COND_FALSE;
	if (b - a == 2 && ap_py_is_op(t, '-')) {
		neg = true;
		t++;
		a++;
	}
	if (b - a != 1 || !int_literal(p, t, &i))
		return COND_UNKNOWN;
	if (neg)
		i = -i;
	/* an int equals the bools it is (True == 1), never a str or None */
	switch (subj->kind) {
	case SUBJ_INT:
		return subj->i == i ? COND_TRUE : COND_FALSE;
	case SUBJ_TRUE:
	case SUBJ_FALSE:
		return (subj->kind == SUBJ_TRUE) == (i == 1) && (i == 0 || i == 1) ? COND_TRUE
		                                                                   : COND_FALSE;
	default:
		return COND_FALSE;
	}
}

enum cond ap_py_case_matches(const struct parser *p, const struct ap_py_subject *subj, size_t a,
                             size_t b, size_t *capture)
{
	const tok *t = p->sv;
	enum cond c = COND_FALSE;
	size_t start = a;
	bool alone = true;

	*capture = SIZE_MAX;
	for (size_t k = a; k < b; k++)
		if (t[k].kind == T_CUT || (t[k].depth == t[a].depth && ap_py_is_kw(&t[k], KW_IF)))
			return COND_UNKNOWN;
	for (size_t k = a; k <= b; k++) {
		enum cond one;
		bool cap;
		if (k < b && !(t[k].depth == t[a].depth && ap_py_is_op(&t[k], '|')))
			continue;
		alone &= k == b && start == a;
		if (start == k)
			return COND_UNKNOWN;
		one = one_pattern(p, subj, start, k, &cap);
		/* a name in an or-pattern: all of them must bind it */
		if (cap && !alone)
			return COND_UNKNOWN;
		if (cap)
			*capture = start;
		if (one == COND_TRUE)
			c = COND_TRUE;
		else if (one == COND_UNKNOWN && c != COND_TRUE)
			c = COND_UNKNOWN;
		start = k + 1;
	}
	return c;
}

bool ap_py_runs_alike(const struct parser *p, size_t from)
{
	const ap_py_module *m = p->m;
	ap_map *bound = ap_xnonnull(ap_map_new());
	bool alike = true;

	/* each name once, from its first binding in the body */
	for (size_t i = from; i < m->nbindings && alike; i++) {
		if (m->bindings[i].name == NULL ||
		    ap_map_get_str(bound, m->bindings[i].name) != AP_MAP_ABSENT)
			continue;
		ap_xok(ap_map_put_str(bound, m->bindings[i].name, 1));
		alike = !ap_py_cond_input(p, i);
	}
	for (size_t i = from; i < m->nbindings && alike; i++) {
		const ap_py_binding *b = &m->bindings[i];
		if (b->kind == AP_PY_BIND_DEL || b->kind == AP_PY_BIND_STAR)
			alike = false;
		else if (b->kind == AP_PY_BIND_ALIAS)
			alike = ap_map_get_str(bound, b->target) == AP_MAP_ABSENT;
		else if (b->kind == AP_PY_BIND_PARTIAL)
			alike = ap_map_get_str(bound, b->target) == AP_MAP_ABSENT &&
			        ap_map_get_str(bound, b->args->callee) == AP_MAP_ABSENT;
		else if (b->kind == AP_PY_BIND_DEF)
			for (size_t k = 0; k < m->defs[b->def_index].ndecorators && alike; k++) {
				const char *dec = m->defs[b->def_index].decorators[k].name;
				alike = ap_map_get(bound, dec, strcspn(dec, ".")) == AP_MAP_ABSENT;
			}
	}
	ap_map_free(bound);
	return alike;
}
