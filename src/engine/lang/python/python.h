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

/* Brackets and indented blocks together may nest this deep. */
#define AP_PY_MAX_DEPTH 200

typedef enum {
	AP_PY_POSONLY, /* before a `/` */
	AP_PY_POS,
	AP_PY_VARARGS, /* *args */
	AP_PY_KWONLY,  /* after `*` or *args */
	AP_PY_VARKW,   /* **kwargs */
} ap_py_param_kind;

typedef struct ap_py_param {
	char *name;
	ap_py_param_kind kind;
	bool has_default;
} ap_py_param;

typedef struct ap_py_def {
	/* "f", or "Cls.m" for a def directly in a class body ("A.B.m" in a nested
	 * class); defs inside function bodies are not read at all */
	char *qualname;
	unsigned line; /* line of the `def` keyword (not of its decorators) */
	/* in order; `self` included; bare `*` and `/` markers are not params but set kinds */
	ap_py_param *params;
	size_t nparams;
	/* false for a def in an arm not taken on import (see ap_py_options): it binds nothing */
	bool live;
	/* the body (the statements after the header's ':') in the module's copy of the source */
	size_t body_off;
	size_t body_end;
	unsigned body_line;
} ap_py_def;

typedef enum {
	AP_PY_BIND_DEF,    /* def NAME (also async def); def_index set */
	AP_PY_BIND_CLASS,  /* class NAME */
	AP_PY_BIND_ALIAS,  /* NAME = OTHER (or NAME: T = OTHER), OTHER a bare name; target OTHER */
	AP_PY_BIND_FROM,   /* from MODULE import TARGET as NAME (NAME = TARGET without `as`) */
	AP_PY_BIND_STAR,   /* from MODULE import * (name NULL) */
	AP_PY_BIND_IMPORT, /* import a.b.c (binds a) / import a.b as c (binds c); module "a.b.c" */
	/* any other binding of NAME at module level: assignment (tuple targets, augmented,
	 * annotated with a value), for target, with ... as NAME, NAME := value. `global`,
	 * `del`, `except ... as NAME` and a bare annotation `NAME: int` bind nothing here. */
	AP_PY_BIND_OTHER,
	/* NAME's binding at this point cannot be known without running the module
	 * (bound in an arm of a condition the reader cannot decide, by a decorator
	 * that may return anything, ...): `why` says so in words. A lookup that
	 * reaches it answers unknown, never a guess. */
	AP_PY_BIND_UNKNOWN,
} ap_py_bind_kind;

typedef struct ap_py_binding {
	ap_py_bind_kind kind;
	char *name;       /* the module-level name bound; NULL for STAR */
	char *module;     /* FROM, STAR, IMPORT: as written, leading dots kept: "..x", ".", "a.b" */
	char *target;     /* FROM: the imported name; ALIAS: the right-hand name */
	size_t def_index; /* DEF: index into defs */
	const char *why;  /* UNKNOWN: in words, e.g. "bound only where `sys.argv` is true" */
	unsigned line;    /* line of the token naming the binding (of `*` for STAR) */
	/* the statement is inside an `except` handler (at any depth of module-level
	 * compound statements) that is not known to run or not: a fallback. A
	 * handler known not to run binds nothing; one known to run (its try's
	 * import is not found) binds as any statement does. */
	bool in_except;
} ap_py_binding;

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
 * 1 it is found, 0 no (ModuleNotFoundError), -1 not known. */
typedef int (*ap_py_can_import_fn)(void *ctx, const char *module);

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
	 * handlers do not. A from-import's names are taken as bound once its
	 * module is found. Anything else, or NULL: every arm counts, the
	 * handlers' bindings in_except. */
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
	/* __all__ = [...] or (...) (or a bare tuple, or literals joined by +) of string
	 * literals; `__all__ += [...]`, `__all__.extend([...])`, `__all__.append("x")` add.
	 * When __all__ is given anything else (a comprehension, a call, a name), has_all is
	 * false and nall 0 until a later readable assignment: a star import then falls back to
	 * the public names, the conservative reading. */
	char **all;
	size_t nall;
	bool has_all;
	/* string literals in code anywhere in the file, in order: not comments, not docstrings
	 * (the first statement of the module, of a class or def body when it is a lone str
	 * expression, implicitly concatenated or not; a b"" or f"" one is no docstring) */
	ap_py_string *strings;
	size_t nstrings;
	/* a copy of the source, a lone CR in it made LF, for ap_py_def_bound */
	char *src;
	size_t src_len;
} ap_py_module;

/* Parses src (len bytes, need not be NUL-terminated, may hold NUL bytes and invalid UTF-8,
 * a UTF-8 BOM, CRLF; a lone CR ends a line, as in CPython, and lines are numbered so).
 * Returns 0 and sets *out, or AP_EINPUT (a syntax error) or AP_ELIMIT (nesting deeper
 * than AP_PY_MAX_DEPTH, input of 4 GiB or more) with one message "line N: ..." and
 * *out NULL. */
int ap_py_parse(ap_py_module **out, const char *src, size_t len, const ap_py_options *opt);
void ap_py_module_free(ap_py_module *m);

/* The last binding of name (the one a `from MOD import name` sees); NULL when none.
 * Bindings inside except handlers are skipped when skip_except. */
const ap_py_binding *ap_py_lookup(const ap_py_module *m, const char *name, bool skip_except);

/* The live def with this qualname that binds last ("f" or "Cls.m"); NULL when none. */
const ap_py_def *ap_py_find_def(const ap_py_module *m, const char *qualname);

/* Largest upper bound the def's body puts on name through comparisons with integer
 * literals: `name <= N` gives N, `name < N` gives N - 1, mirrored `N >= name` gives N,
 * `N > name` N - 1; in chained comparisons (`1 <= nhead <= 96` gives 96) each pair of
 * neighbours is judged alone. Only a bare `name` operand counts: not `x.name`,
 * `name.shape`, `name[0]`, `f(name)`, `-name` or `name + 1 <= 4`. Integer literals:
 * decimal, hex, octal, binary, underscores; negative via unary minus. Comments and
 * strings never count. *found false and *bound 0 when there is none; *line is the line
 * of the comparison operator giving the bound (the first, on a tie). */
void ap_py_def_bound(const ap_py_module *m, const ap_py_def *d, const char *name,
                     long long *bound, unsigned *line, bool *found);

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

#endif
