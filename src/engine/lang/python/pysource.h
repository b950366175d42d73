/* SPDX-License-Identifier: MIT */
/* What the Python rule kinds share: modules parsed once per file (and set
 * of names read as false), names resolved through imports as Python binds
 * them on a default import, and calls bound to a def's signature. Every file
 * it reads goes through the confined reader, so it is an input. */
#ifndef AP_PYSOURCE_H
#define AP_PYSOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/kind.h"
#include "engine/match.h"
#include "engine/lang/python/python.h"
#include "engine/reader.h"
#include "engine/lang/yaml-node.h"

/* Names whose value on a default import is false (`assume_false:`). */
/* The key of a conf with no names assumed false. */
#define AP_PYCONF_PLAIN "python"

typedef struct ap_pyconf {
	char **false_names; /* NULL-terminated */
	size_t nfalse;
	char *key;          /* what a module parsed under it is kept as */
} ap_pyconf;

int ap_pyconf_load(const char *pack, const ap_yfield *assume_false, ap_pyconf *c);
void ap_pyconf_free(ap_pyconf *c);

/* f parsed (f readable), or NULL with *error (borrowed: a syntax error). */
const ap_py_module *ap_pysource_module(ap_reader *r, const ap_file *f, const ap_pyconf *c,
                                       const char **error);

/* The def of a rule naming file alternatives and, for each, the def's name
 * (names[0] for all when nnames is 1): the first file that exists and
 * defines it, as importing it binds the name ("Cls.m": as getattr finds m
 * on the class it binds to Cls). Sets run->res's status to MISSING (no file
 * exists), ERROR (the first existing file that does not define it cannot be
 * read or parsed), UNKNOWN (the first existing file binds the name, or the
 * class of "Cls.m", so that only a run decides) or UNMATCHED (none defines
 * it), with the reason, and returns NULL; or returns the def, res->file its
 * file and *file the file read. *view is NULL, or (the def returned) a copy
 * with the signature a call meets, to free with ap_pydef_view_free. */
const ap_py_def *ap_pysource_pick_def(ap_kind_run *run, char *const *names, size_t nnames,
                                      const ap_pyconf *c, const ap_file **file,
                                      ap_py_def **view);

/* Reads the def names of a rule: one, or one per file alternative. */
int ap_pysource_names_load(const ap_kind_load *l, const char *what, const ap_ynode *n,
                           char ***names, size_t *count);

/* Whether s is identifiers (non-ASCII ones too, as in Python) joined by
 * dots: a module name, or a dotted attribute. */
bool ap_py_dotted_name(const char *s);

/* A match at line of f, its text the line's. */
ap_match *ap_pysource_match(ap_kind_run *run, const ap_file *f, unsigned line);

/* A call's shape: positional arguments and keyword names. */
typedef struct ap_pycall {
	bool given;
	long positional;
	char **keywords;
	size_t nkeywords;
} ap_pycall;

/* What a def must satisfy (`params`, `binds`), and what it captures
 * (`params`: the signature; `param_at: K`: the K-th positional parameter). */
typedef struct ap_pydef_check {
	char **params;
	size_t nparams;
	ap_pycall call;
	long param_at; /* 0: none */
} ap_pydef_check;

/* The options python-def and python-export take, in this order. */
#define AP_PYDEF_OPTIONS "params", "binds", "param_at", "assume_false"
#define AP_PYDEF_NOPTIONS 4

/* Reads opts[0..2] (params, binds, param_at). */
int ap_pydef_check_load(const char *pack, const ap_yfield *opts, ap_pydef_check *c);
void ap_pydef_check_free(ap_pydef_check *c);
/* Whether c asks anything of a def's parameters (params, binds, param_at). */
bool ap_pydef_check_asks(const ap_pydef_check *c);
/* Whether d satisfies c; NULL when it does, else why not (caller frees). */
char *ap_pydef_check_refusal(const ap_pydef_check *c, const ap_py_def *d);
/* Adds the captures of d to m. */
void ap_pydef_capture(const ap_pydef_check *c, const ap_py_def *d, ap_match *m);

/* A def's parameters as Python writes them: "q, k, /, v=…, *args, c, **kw". */
char *ap_py_signature(const ap_py_def *d);

/* A copy of d to change, with its own parameters and qualname (that one,
 * from malloc, or NULL for a copy of d's). */
ap_py_def *ap_pydef_view(const ap_py_def *d, char *qualname);
void ap_pydef_view_free(ap_py_def *v);
/* What `functools.partial(d, ARGS)` meets a call with, as inspect.signature
 * gives it (Python 3.11): the positional parameters the arguments bind by
 * position taken out, one bound by keyword given a default and made
 * keyword-only with every later one (*args taken out). NULL with *why when
 * the arguments do not bind to d as Signature.bind_partial binds them (a
 * keyword naming a positional-only parameter included); qualname (from
 * malloc) is the view's either way. */
ap_py_def *ap_pydef_partial(const ap_py_def *d, const ap_py_args *args, char *qualname,
                            char **why);
/* What getattr on the class gives for d, a classmethod: the method bound to
 * the class, without its first parameter (a first *args stays); NULL when d
 * has no parameter the class can bind to. */
ap_py_def *ap_pydef_bound_method(const ap_py_def *d);

/* Where `from MODULE import NAME` leads, resolved statically. */
typedef enum {
	AP_PYREF_DEF,      /* a def: file and def set */
	AP_PYREF_CLASS,
	AP_PYREF_MODULE,   /* a module or package */
	AP_PYREF_VALUE,    /* bound some other way (an assignment) */
	AP_PYREF_EXTERNAL, /* imported from outside the package tree */
	AP_PYREF_UNBOUND,  /* the module does not bind it */
	AP_PYREF_ERROR,    /* a file on the way cannot be read or parsed: why */
	AP_PYREF_UNKNOWN,  /* what it is bound to is known only by running: why */
} ap_pyref_kind;

typedef struct ap_pyref {
	ap_pyref_kind kind;
	const ap_file *file;   /* where it is defined (DEF, CLASS, VALUE) */
	const ap_py_def *def;  /* DEF */
	/* DEF: NULL, or a copy of the def with the signature a call meets (a
	 * functools.partial's, a classmethod's), owned; def is it */
	ap_py_def *view;
	/* DEF, a functools.partial's view: the def it is of, and the arguments
	 * of the partials over it, flattened as functools.partial flattens a
	 * partial of a partial (keywords from malloc, their names borrowed) */
	const ap_py_def *partial_of;
	ap_py_args partial_args;
	const ap_py_binding *binding; /* CLASS: the class statement's binding */
	unsigned line;         /* of the definition */
	char *why;             /* ERROR, EXTERNAL, UNKNOWN: in words; others: what it is, or NULL */
	char *module;          /* MODULE: its dotted name when it is in the tree, else NULL */
	/* DEF: bound to a function of the decorator's own, not the def
	 * (AP_PYDECO_OWN_DEF): callable, what a call binds not known (why says
	 * so); def is the decorated def, for where it is */
	bool nosig;
	/* EXTERNAL: bound so only perhaps (by a star import from outside the
	 * tree), else not bound or bound to another value: no def either way */
	bool perhaps;
} ap_pyref;

/* Resolves name in module (dotted, "aiter" or "aiter.ops.x") as `from module
 * import name` binds it (a submodule of that name where the module binds
 * none); the module itself missing is UNBOUND with *missing set. Each
 * (module, name) on the way is resolved once; nesting, aliases and the
 * bindings visited are bounded, each an ERROR that gives its figure. */
void ap_pysource_resolve(ap_reader *r, const ap_pyconf *c, const char *module, const char *name,
                         ap_pyref *out, bool *missing);

/* Many names of one package resolved as ap_pysource_resolve resolves each,
 * sharing what the resolutions learn of the tree's modules and names (what
 * each (module, name) binds, what importing a module loads): the scan's
 * `signatures`, which resolve every public name of a package. */
typedef struct ap_pyresolver ap_pyresolver;
ap_pyresolver *ap_pyresolver_new(ap_reader *r, const ap_pyconf *c, const char *module);
void ap_pyresolver_resolve(ap_pyresolver *p, const char *module, const char *name,
                           ap_pyref *out, bool *missing);
void ap_pyresolver_free(ap_pyresolver *p);

/* What a resolved name holds (pyref.c). */
void ap_pyref_free(ap_pyref *ref);
const char *ap_pyref_kind_name(ap_pyref_kind kind);
/* ref, a copy of what the reader holds: its strings and view its own. */
void ap_pyref_copy(ap_pyref *to, const ap_pyref *from);
/* Appends the arguments of more to all's (keywords from malloc), a keyword
 * given again once (the later value is the one a partial keeps). */
void ap_py_args_add(ap_py_args *all, const ap_py_args *more);
/* out as `NAME = functools.partial(out, ...)`, binding b, leaves it, the
 * partial's arguments args (b's, with those of the partials over out,
 * flattened): a DEF's view with the signature inspect.signature gives, or
 * UNKNOWN where out is no def or the arguments do not bind. */
void ap_pyref_partial(ap_pyref *out, const ap_py_binding *b, const ap_py_args *args);

/* What a decorator of the tree, the def d of m, does with what it is given
 * (called: `@d(...)`, what its call returns does), read from its body: an
 * async def gives a coroutine (OTHER). */
typedef enum {
	AP_PYDECO_OTHER,
	AP_PYDECO_RETURNS_IT, /* `return FN`, or a factory of `def INNER(FN): return FN` */
	AP_PYDECO_WRAPS,      /* a functools.wraps wrapper: the def's signature */
	AP_PYDECO_NONE,       /* `return None`, `return` or `pass` */
	/* every way out but a raise returns a def nested in its body (for a
	 * factory, in that of the decorator it returns): a function whose
	 * parameters are not read, as with AITER's @torch_compile_guard(...),
	 * whose wrappers take (*args, **kwargs) and hand them on to the def or
	 * to the op it registers under torch.ops.aiter */
	AP_PYDECO_OWN_DEF,
} ap_pydeco;
/* Bytes of a decorator's body read at most: a longer one is OTHER. */
#define AP_PYDECO_MAX_BODY (64 * 1024)
/* d is of m, the module of f; the answer is kept with f's bytes in r. */
ap_pydeco ap_pydeco_does(ap_reader *r, const ap_file *f, const ap_py_module *m,
                         const ap_py_def *d, bool called);

/* What importing file f (module m; mod its dotted name, or NULL when no
 * import names it) binds to the dotted name (Cls.m, A.B.m), read as getattr
 * on the class: a def (a classmethod's view), a property (a VALUE), or
 * UNKNOWN where the class may be replaced by its decorator, the name may be
 * inherited from its bases or be bound in a block that may not run. */
void ap_pysource_attr(ap_reader *r, const ap_pyconf *c, const ap_file *f, const ap_py_module *m,
                      const char *mod, const char *name, ap_pyref *out);

#endif
