/* SPDX-License-Identifier: MIT */
/* A static reader of Python source, for rule kinds that ask what a module
 * defines without importing it: signatures, module-level bindings, __all__,
 * string literals and the bounds a function body puts on a name. It reads
 * statements at module and class-body level and only tokens inside function
 * bodies. Input is untrusted: it is read in linear time, nesting is capped and
 * nothing past len is read. */
#ifndef AP_PYTHON_H
#define AP_PYTHON_H

#include <stdbool.h>
#include <stddef.h>

#include "core/signature.h"

/* Brackets and indented blocks together may nest this deep. */
#define AP_PY_MAX_DEPTH 200

/* A parameter's kind is the one the manifest's signatures record
 * (core/signature.h), under the reader's names. */
typedef ap_sig_kind ap_py_param_kind;
#define AP_PY_POSONLY AP_SIG_POSONLY
#define AP_PY_POS AP_SIG_POS
#define AP_PY_VARARGS AP_SIG_VARARGS
#define AP_PY_KWONLY AP_SIG_KWONLY
#define AP_PY_VARKW AP_SIG_VARKW

typedef struct ap_py_param {
	char *name;
	ap_py_param_kind kind;
	bool has_default;
} ap_py_param;

/* A decorator as written ("compile_ops", "torch.compile", or "a decorator
 * expression" for any other form); called: applied with arguments,
 * `@compile_ops("m")`. */
typedef struct ap_py_decorator {
	const char *name;
	bool called;
} ap_py_decorator;

/* In a class body, the builtin decorator that is a def's outermost: what
 * getattr on the class gives is then no plain function. */
typedef enum {
	AP_PY_FUNCTION,
	AP_PY_CLASSMETHOD, /* a method bound to the class: no first parameter */
	AP_PY_STATICMETHOD,
	AP_PY_PROPERTY, /* @property, or @p.setter of a property p: no def */
} ap_py_method_kind;

/* The builtin's name ("classmethod", "staticmethod", "property"); NULL for
 * AP_PY_FUNCTION. */
const char *ap_py_method_name(ap_py_method_kind kind);

typedef struct ap_py_def {
	/* "f", or "Cls.m" for a def directly in a class body ("A.B.m" in a nested
	 * class); defs inside function bodies are not read at all. A lambda
	 * bound to a name is a def of that name. */
	char *qualname;
	unsigned line; /* line of the `def` keyword (not of its decorators), or of `lambda` */
	/* in order; `self` included; bare `*` and `/` markers are not params but set kinds */
	ap_py_param *params;
	size_t nparams;
	/* false for a def in an arm not taken on import (see ap_py_options): it binds nothing */
	bool live;
	/* in a block that may not run on import (an arm of a condition not known, a
	 * loop, a try that may stop early or its handlers): a method defined there
	 * may not exist */
	bool maybe;
	/* `async def`: calling it gives a coroutine, never what it returns */
	bool is_async;
	/* The decorators that may bind the name to something other than the def,
	 * from the top one (applied last) down; none when there is no decorator,
	 * or only ones known to keep the function and its signature:
	 * functools.lru_cache and cache, typing.final. In a class body the
	 * outermost, when it is classmethod, staticmethod or property, is
	 * method's instead. */
	const struct ap_py_decorator *decorators;
	size_t ndecorators;
	ap_py_method_kind method;
	/* `NAME = lambda ...: ...`: its body is an expression, not read */
	bool lambda;
	/* the body (the statements after the header's ':') in the module's copy of the source */
	size_t body_off;
	size_t body_end;
	unsigned body_line;
} ap_py_def;

typedef enum {
	AP_PY_BIND_DEF,    /* def NAME (also async def, NAME = lambda ...); def_index set */
	AP_PY_BIND_CLASS,  /* class NAME */
	/* NAME = OTHER (or NAME: T = OTHER, or the pair NAME, OTHER in `a, b = c, d`),
	 * OTHER a bare name; target OTHER, as the bindings before value_at leave it */
	AP_PY_BIND_ALIAS,
	AP_PY_BIND_FROM,   /* from MODULE import TARGET as NAME (NAME = TARGET without `as`) */
	/* from MODULE import * (name NULL); MODULE AP_PY_NAMESPACE_WRITE: a write
	 * into globals() under a name only a run tells (why says where) */
	AP_PY_BIND_STAR,
	AP_PY_BIND_IMPORT, /* import a.b.c (binds a) / import a.b as c (binds c); module "a.b.c" */
	/* any other binding of NAME at module level: assignment (tuple targets, augmented,
	 * annotated with a value), for target, with ... as NAME, NAME := value. `global`,
	 * `del`, `except ... as NAME` and a bare annotation `NAME: int` bind nothing here. */
	AP_PY_BIND_OTHER,
	/* del NAME, or the end of an `except ... as NAME:` handler (at its
	 * line): unbound from here on */
	AP_PY_BIND_DEL,
	/* from .SUB import x (or from .SUB.y import x) in what may be a package's
	 * __init__: loading the submodule SUB binds it as the package's attribute
	 * SUB, over what the name held, before x is bound; only the module's first
	 * such import of SUB is recorded, as a later one loads nothing. Not a binding
	 * in a module that is no package's __init__. module is ".SUB". */
	AP_PY_BIND_SUBMODULE,
	/* NAME's binding at this point cannot be known without running the module
	 * (bound in an arm of a condition the reader cannot decide, by a decorator
	 * that may return anything, ...): `why` says so in words. A lookup that
	 * reaches it answers unknown, never a guess. */
	AP_PY_BIND_UNKNOWN,
	/* NAME = functools.partial(TARGET, ...) (or partial(...) after `from
	 * functools import partial`), TARGET a bare name as the bindings before
	 * value_at leave it; args what the partial gives it */
	AP_PY_BIND_PARTIAL,
} ap_py_bind_kind;

#define AP_PY_NAMESPACE_WRITE "globals()"

/* The arguments a functools.partial gives its function: positional ones, and
 * the names of keyword ones; the name it is called by ("functools", or
 * "partial"), bound only by `import functools` (`from functools import
 * partial`) so far, and whether a star import came before, which may have
 * bound it too. */
typedef struct ap_py_args {
	unsigned positional;
	char **keywords;
	size_t nkeywords;
	const char *callee;
	bool after_star;
} ap_py_args;

typedef struct ap_py_binding {
	ap_py_bind_kind kind;
	/* CLASS: whether its header names bases or keywords (a name its body
	 * does not bind may be inherited) */
	bool inherits;
	/* whether the statement binding it may not run on import (an arm of a
	 * condition not known, a loop, a try body past a statement that may
	 * raise): an import there may load its module or not, and a member may
	 * not exist */
	bool maybe;
	unsigned line;    /* line of the token naming the binding (of `*` for STAR) */
	/* members: the line of the name of the class whose body binds it */
	unsigned class_line;
	char *name;       /* the module-level name bound; NULL for STAR */
	char *module;     /* FROM, STAR, IMPORT: as written, leading dots kept: "..x", ".", "a.b" */
	char *target;     /* FROM: the imported name; ALIAS, PARTIAL: the value's name */
	union {
		size_t def_index; /* DEF: index into defs */
		size_t value_at;  /* ALIAS, PARTIAL: where the value's name is read (see there) */
	};
	union {
		const ap_py_args *args; /* PARTIAL */
		/* CLASS: the first decorator that may bind it to something else,
		 * as written; NULL: none */
		const char *decorator;
	};
	const char *why;  /* UNKNOWN: in words, e.g. "bound only where `sys.argv` is true" */
} ap_py_binding;

/* A part of __all__ that another module's __all__ makes: `x.__all__` or `x.y.__all__`
 * (attr: x.y is a module), or a name bound to one (`from .x import __all__ as _x`, then
 * `__all__ = _x + [...]`; `from .x import __all__` itself). What the name is bound to
 * is what the module's bindings before index upto say. */
typedef struct ap_py_all_ref {
	const char *name; /* "x" or "x.y", as written */
	bool attr;        /* NAME.__all__; else NAME's own value */
	size_t upto;
	unsigned line;
} ap_py_all_ref;

typedef struct ap_py_string {
	char *value; /* the source text between the quotes, escapes not decoded */
	unsigned line;
} ap_py_string;

/* What the interpreter that will import the module reports; a field it has
 * not been asked is unset (nversion 0, strings NULL), and a condition that
 * needs it is unknown. */
typedef struct ap_py_facts {
	int major, minor, micro;   /* sys.version_info[:3] */
	/* how many of major, minor, micro are known: 0, 2 (only X.Y was given) or 3 */
	unsigned nversion;
	const char *releaselevel;  /* sys.version_info.releaselevel: "final", "beta", ... */
	const char *platform;      /* sys.platform: "linux" */
	const char *os_name;       /* os.name: "posix" */
} ap_py_facts;

/* The facts a condition is about to read (ap_py_options.facts' need). */
enum { AP_PY_FACT_VERSION = 1, AP_PY_FACT_PLATFORM = 2, AP_PY_FACT_OS_NAME = 4 };

/* Whether `import MODULE` (as written: leading dots for a relative import,
 * level dots counted in the string) succeeds in the target interpreter:
 * 1 it is found, 0 no (ModuleNotFoundError), -1 not known. With name, of a
 * MODULE found: whether `from MODULE import NAME` gets NAME (bound there, or
 * its submodule), as above, or AP_PY_IMPORT_SELF: MODULE is the module being
 * read, which the reader answers for from what it bound so far. so_far:
 * the module being read, with the bindings it made before the import (the
 * modules it imported where nothing may skip the import were found, or it
 * would not run on). */
struct ap_py_module;
typedef int (*ap_py_can_import_fn)(void *ctx, const char *module, const char *name,
                                   const struct ap_py_module *so_far);
#define AP_PY_IMPORT_SELF 2

typedef struct ap_py_options {
	/* Module-level names whose value on a default import is false (e.g. flags read from
	 * environment variables that are unset): `if NAME:` / `elif NAME:` takes only the
	 * other arms, `if not NAME:` only its body (parentheses around either allowed). So
	 * do, whatever the options, the conditions CPython knows: False, None, 0, and
	 * TYPE_CHECKING when every module-level binding of it so far is `from typing import
	 * TYPE_CHECKING` (typing.TYPE_CHECKING when every one of typing is `import typing`),
	 * and no star import from another module came before; True and 1 take only the body;
	 * `__name__ == "__main__"` is false; comparisons of sys.version_info (whole, [K],
	 * [:K], .major ...), sys.platform (==, in, .startswith) and os.name with literals
	 * take the facts, when sys and os are bound as typing must be; and, or and not
	 * combine them in three-valued logic (cond.c). Any other condition is unknown:
	 * every arm counts. NULL-terminated; may be NULL. */
	const char *const *false_names;
	/* The target interpreter's facts, asked only when a condition needs one
	 * (sys.version_info, sys.platform, os.name; need says which, as
	 * AP_PY_FACT_* bits): the call may start that interpreter, once per
	 * scan. NULL, or NULL returned: every such condition is unknown. */
	const ap_py_facts *(*facts)(void *ctx, unsigned need);
	/* For a module-level `try:` whose body is imports (and statements that
	 * cannot raise: pass, NAME = constant): every import found, the body runs
	 * and its handlers do not; one not found ends the body there and the
	 * first handler catching ModuleNotFoundError runs (bare, ImportError,
	 * ModuleNotFoundError, Exception, BaseException), else and later
	 * handlers do not. A from-import's names are asked one by one after its
	 * module (an import that fails at a name has bound the names before
	 * it). Anything else, or NULL: the body and each handler are ways the
	 * try may run. */
	ap_py_can_import_fn can_import;
	void *ctx; /* for facts and can_import */
} ap_py_options;

typedef struct ap_py_module {
	/* every def found, in source order (module-level and class methods, live or not) */
	ap_py_def *defs;
	size_t ndefs;
	/* module-level bindings in source order, from every live arm */
	ap_py_binding *bindings;
	size_t nbindings;
	/* the bindings of class bodies (members), in source order, from every
	 * live arm: def, class, assignment, del, import, as at module level, with
	 * class_line and maybe set; an arm that may not run is told by maybe,
	 * not by UNKNOWN bindings after it */
	ap_py_binding *members;
	size_t nmembers;
	/* __all__ as the module leaves it on import, where has_all: its str literals in order
	 * (`__all__ = [...]`, a tuple, literals joined by +, list/tuple/sorted/set() of them,
	 * `[n for n in ...]` over them; `+=`, extend and append add, remove and `del
	 * __all__[i]` / `[i:j]` take out, as the list methods do) and, in all_refs, other
	 * modules' __all__ spliced in, resolved by the import resolver. Statements in an
	 * except handler do not count (as no binding there does). When __all__ is given
	 * what the reader cannot evaluate (a call, a name it does not know, a method the
	 * list raises on), has_all is false and all_why says why, at all_line, until a
	 * later readable assignment; `del __all__` leaves none. */
	char **all;
	size_t nall;
	ap_py_all_ref *all_refs;
	size_t nall_refs;
	bool has_all;
	const char *all_why;
	unsigned all_line;
	/* string literals in code anywhere in the file, in order: not comments, not docstrings
	 * (the first statement of the module, of a class or def body when it is a lone str
	 * expression, implicitly concatenated or not, in parentheses or not: `("doc")`; a b""
	 * or f"" one, a tuple `("doc",)` or a call is no docstring) */
	ap_py_string *strings;
	size_t nstrings;
	/* a copy of the source, a lone CR in it made LF, for ap_py_def_bound */
	char *src;
	size_t src_len;
} ap_py_module;

/* Parses src (len bytes, need not be NUL-terminated, may hold NUL bytes and invalid UTF-8,
 * a UTF-8 BOM, CRLF; a lone CR ends a line, as in CPython, and lines are numbered so).
 * Names that are not ASCII are CPython's (PEP 3131): every name in the module (defs,
 * params, bindings, import paths) is NFKC-normalized, and one CPython's tokenizer refuses
 * (not UTF-8, a character no identifier holds) is a syntax error with its message.
 * Returns 0 and sets *out, or AP_EINPUT (a syntax error) or AP_ELIMIT (nesting deeper
 * than AP_PY_MAX_DEPTH, input of 4 GiB or more) with one message "line N: ..." and
 * *out NULL. */
int ap_py_parse(ap_py_module **out, const char *src, size_t len, const ap_py_options *opt);
void ap_py_module_free(ap_py_module *m);
/* The memory m holds, about: its copy of the source, strings, parameters and
 * arrays (at their length; they may have grown to twice that). */
size_t ap_py_module_bytes(const ap_py_module *m);

/* The last binding of name (the one a `from MOD import name` sees); NULL when none. */
const ap_py_binding *ap_py_lookup(const ap_py_module *m, const char *name);

/* The live def with this qualname that binds last ("f" or "Cls.m"); NULL when none. */
const ap_py_def *ap_py_find_def(const ap_py_module *m, const char *qualname);

/* What a def's body says of a name's upper bound (ap_py_def_bound). */
typedef enum {
	AP_PY_BOUND_NONE,    /* a call may return with any value, however large */
	AP_PY_BOUND_FOUND,   /* value */
	AP_PY_BOUND_UNKNOWN, /* it depends on what the reader cannot decide: why */
} ap_py_bound_kind;

/* Bounds are integer literals of up to 256 bits, so 78 digits and a sign. */
#define AP_PY_BOUND_DIGITS 80

typedef struct ap_py_bound {
	ap_py_bound_kind kind;
	char value[AP_PY_BOUND_DIGITS]; /* FOUND: in decimal; "0" otherwise */
	/* FOUND: the line of the comparison whose literal gives it (its first
	 * on the path); UNKNOWN: of what the reader cannot decide, or the def's */
	unsigned line;
	char why[384]; /* UNKNOWN: in words */
} ap_py_bound;

/* The largest value of name (NFKC, as the body's names are compared) that
 * a call of the def can return with, as the def's own statements decide it:
 * the comparisons of the bare name with integer literals (`<`, `<=`, `>`,
 * `>=`, `==`, `!=`, either side, parentheses and signs allowed, chained),
 * `in` and `not in` a display of integer literals, `is None`, and the name
 * alone (true when not 0), through `and`, `or` and `not`, in the conditions
 * of if, elif, while and assert and the patterns of a match on the name; a
 * path that ends in a raise rejects the values on it. Values an `==` or
 * `in` lets through alone above a range below them do not count (`if n in
 * (64, 128): ... elif 1 <= n <= 16: ... else: raise` gives 16).
 *
 * Only the def's own path counts: not a nested def, lambda or comprehension,
 * nor code that never runs (an arm whose condition CPython knows before the
 * call: False, None, 0, TYPE_CHECKING and typing.TYPE_CHECKING as the module
 * binds them, `__name__ == "__main__"`, the names in false_names, `not` of
 * each; what follows a return, raise, break or continue). A class body runs.
 * A condition on the call's other arguments goes either way from call to
 * call; one reading no local name is the same on every call; a local that
 * holds only literals is followed by value. UNKNOWN where the values a call
 * returns with depend on what the reader cannot decide (an arm chosen the
 * same way on every call, by an import's failure, a loop that may not run,
 * a `with` whose manager may swallow an exception, a comparison it cannot
 * read such as `nhead <= MAX`, a local computed from the name), where a
 * comparison of the name goes to a call, where the name is bound again after
 * it is compared, for a generator, and for a lambda (its body is not read).
 * false_names is NULL-terminated; may be NULL. */
void ap_py_def_bound(const ap_py_module *m, const ap_py_def *d, const char *name,
                     const char *const *false_names, ap_py_bound *out);

/* End of the Python token starting at s[i] (s[i] not whitespace, i < n), for a token
 * matcher working on comment-free text: identifiers (ASCII letters, digits, '_', and
 * non-ASCII bytes), numbers (1_000, 0x1F, 1e-5, 1j), strings with any prefix
 * r/b/f/u/rb/br/fr/rf in either case, single or triple quoted, escapes honoured,
 * unterminated single-quoted ones ending at the line end, triple-quoted ones at the
 * text's end, operators by longest match, any other byte alone. */
size_t ap_py_token_end(const char *s, size_t i, size_t n);

/* Where the line holding s[i] ends in s[0, n): the next LF or CR (a CRLF's CR, or a
 * lone CR, which CPython reads as a line end too), or n. */
size_t ap_py_line_end(const char *s, size_t i, size_t n);

/* Where the line `line` lines after the one that starts at s[at] starts
 * (line 1: at itself), lines ending as ap_py_line_end ends them, in s[0,
 * n); n when s has fewer. */
size_t ap_py_line_start(const char *s, size_t at, size_t n, unsigned line);

/* A name a rule gives ("find", "Cls.m", "a.b", a parameter's) spelt as the
 * reader spells the names it reads: CPython binds an identifier that is not
 * ASCII as its NFKC normal form (PEP 3131), so `def ﬁnd` binds "find", and
 * so does a rule's "ﬁnd" name it. *name (from malloc) is replaced by its
 * normal form; ASCII, and bytes that are not UTF-8, stay as they are. */
void ap_py_name_normalize(char **name);

/* Whether s[0, len) is one identifier as CPython reads one (keywords
 * included): ASCII letters, digits and '_', not starting with a digit, or
 * UTF-8 whose first character is XID_Start or '_' and whose others are
 * XID_Continue. */
bool ap_py_is_identifier(const char *s, size_t len);

#endif
