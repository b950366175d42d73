#!/bin/sh
# SPDX-License-Identifier: MIT
# python-def: a def's signature read from the source (behind decorators),
# params, binds and param_at, Class.method, file alternatives with one name
# each; and what its loader refuses.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/py"
mkdir -p "$TREE/aiter/ops"
# compile_ops wraps the def with functools.wraps, as AITER's does: the
# signature is the def's.
cat >"$TREE/aiter/jit.py" <<'EOF'
import functools


def compile_ops(name, fc_name=None):
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        return wrapper
    return decorator
EOF
cat >"$TREE/aiter/mla.py" <<'EOF'
from .jit import compile_ops


@compile_ops(
    "module_mla",
    fc_name="mla_decode_fwd",
)
def mla_decode_fwd(q, kv, o, max_seqlen_q, sm_scale=None, *, causal=True, q_scale=None):
    # kv_scale is in a comment only, and "return_lse" in a string
    note = "return_lse"
    return o


class Planner:
    def plan(self, num_heads, /, page_size=1, **kw):
        return None


def only_positional(a, b, /):
    return a
EOF
pack pydef <<'EOF'
rules:
  - id: def.match
    file: aiter/mla.py
    python-def: mla_decode_fwd
    params: [q_scale, causal]
    binds: {positional: 4, keywords: [sm_scale, causal]}
    param_at: 4
  - id: def.comment_param
    file: aiter/mla.py
    python-def: mla_decode_fwd
    params: [kv_scale]
  - id: def.string_param
    file: aiter/mla.py
    python-def: mla_decode_fwd
    params: [return_lse]
  - id: def.too_many
    file: aiter/mla.py
    python-def: mla_decode_fwd
    binds: {positional: 6}
  - id: def.kwonly_by_position
    file: aiter/mla.py
    python-def: mla_decode_fwd
    binds: {positional: 4, keywords: [q]}
  - id: def.unbound
    file: aiter/mla.py
    python-def: mla_decode_fwd
    binds: {positional: 3}
  - id: def.method
    file: aiter/mla.py
    python-def: Planner.plan
    binds: {positional: 2, keywords: [page_size, anything]}
    param_at: 2
  - id: def.method_not_module_level
    file: aiter/mla.py
    python-def: plan
  - id: def.posonly_keyword
    file: aiter/mla.py
    python-def: only_positional
    binds: {positional: 1, keywords: [b]}
  - id: def.none
    file: aiter/mla.py
    python-def: mla_prefill_fwd
  - id: def.alternatives
    file: [aiter/nope.py, aiter/ops/old.py, aiter/mla.py]
    python-def: [f, g, mla_decode_fwd]
  - id: def.missing
    file: [aiter/nope.py, aiter/nope2.py]
    python-def: f
  - id: def.after_lone_cr
    file: aiter/cr.py
    python-def: scaled
    params: [scale]
EOF
printf 'def f():\n    pass\n' >"$TREE/aiter/ops/old.py"
# A comment ending in a lone CR, which CPython reads as a line end: the def
# after it, on line 6, is the one that binds.
printf 'def scaled(q):\n    return q\n\n\n# old: def scaled(q)\rdef scaled(z, scale=1.0):\n    return z\n' \
	>"$TREE/aiter/cr.py"

case_ "python-def: the def behind a decorator with arguments, params, binds, param_at"
scan "$TREE" pydef
expect_rc 0
rule def.match status matched
lines def.match "[8]"
caps def.match params "['q, kv, o, max_seqlen_q, sm_scale=…, *, causal=…, q_scale=…']"
caps def.match param "['max_seqlen_q']"

case_ "python-def: a name in a comment or a string is no parameter"
rule def.comment_param status unmatched
rule def.comment_param reason "mla_decode_fwd has no parameter 'kv_scale'"
rule def.string_param reason "mla_decode_fwd has no parameter 'return_lse'"

case_ "python-def: calls that do not bind, and why"
rule def.too_many status unmatched
rule def.too_many reason "a call of mla_decode_fwd with 6 positionals does not bind: it takes at most 5 positional arguments"
rule def.kwonly_by_position reason "a call of mla_decode_fwd with 4 positionals and its keywords does not bind: 'q' given both by position and by keyword"
rule def.unbound reason "a call of mla_decode_fwd with 3 positionals does not bind: required parameter 'max_seqlen_q' left unbound"
rule def.posonly_keyword reason "a call of only_positional with 1 positional and its keywords does not bind: 'b' is positional-only, given by keyword"

case_ "python-def: Class.method, which is no module-level def"
rule def.method status matched
lines def.method "[15]"
caps def.method param "['num_heads']"
caps def.method params "['self, num_heads, /, page_size=…, **kw']"
rule def.method_not_module_level status unmatched
rule def.method_not_module_level reason "no def plan in aiter/mla.py"

case_ "python-def: a comment ends at a lone CR; the redefinition after it binds, at CPython's line"
rule def.after_lone_cr status matched
lines def.after_lone_cr "[6]"
expect_json "[m['text'] for m in j['rules']['def.after_lone_cr']['matches']]" "['def scaled(z, scale=1.0):']"

case_ "python-def: no such def; one name per file alternative; every file absent"
rule def.none status unmatched
rule def.none reason "no def mla_prefill_fwd in aiter/mla.py"
rule def.alternatives status matched
rule def.alternatives file aiter/mla.py
rule def.missing status missing
rule def.missing reason "none of the files exists: aiter/nope.py, aiter/nope2.py"

# A stub for type checkers after the real def, with another signature: the
# module binds the real def, as `if TYPE_CHECKING:` is false on import.
cat >"$TREE/aiter/typed.py" <<'EOF'
from typing import TYPE_CHECKING


def fwd(q, k, v, scale=None):
    return q


if TYPE_CHECKING:
    def fwd(q, k, v, *, scale: float = 1.0, lse: bool = False): ...
    def stub_only(x): ...
else:
    def runtime_only(x):
        return x
EOF
pack pytyped <<'EOF'
rules:
  - id: typed.real
    file: aiter/typed.py
    python-def: fwd
  - id: typed.stub_param
    file: aiter/typed.py
    python-def: fwd
    params: [lse]
  - id: typed.stub_only
    file: aiter/typed.py
    python-def: stub_only
  - id: typed.else
    file: aiter/typed.py
    python-def: runtime_only
EOF

case_ "python-def: under 'if TYPE_CHECKING:' nothing is bound; the 'else:' arm is"
scan "$TREE" pytyped
expect_rc 0
rule typed.real status matched
lines typed.real "[4]"
caps typed.real params "['q, k, v, scale=…']"
rule typed.stub_param status unmatched
rule typed.stub_param reason "fwd has no parameter 'lse'"
rule typed.stub_only status unmatched
rule typed.stub_only reason "no def stub_only in aiter/typed.py"
rule typed.else status matched
lines typed.else "[12]"

# The edits of issue 19, each after a def without `causal`: what Python
# binds has no `causal` either way, or only a run tells.
EDITS="$TMP/edits"
mkdir -p "$EDITS/aiter"
: >"$EDITS/aiter/__init__.py"
base='def mla_decode_fwd(q, kv, o, sm_scale=None):\n    return o\n'
printf "$base"'\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    def mla_decode_fwd(q, kv, o, sm_scale=None, causal=False): ...\n' \
	>"$EDITS/aiter/stub.py"
printf "$base"'\n_legacy = mla_decode_fwd\ndef mla_decode_fwd(q, kv, o, sm_scale=None, causal=False):\n    return o\nmla_decode_fwd = _legacy\n' \
	>"$EDITS/aiter/rebound.py"
printf 'def mla_decode_fwd(q, kv, o, sm_scale=None, causal=False):\n    return o\n# old\rdef mla_decode_fwd(q, kv, o, sm_scale=None):\n    return o\n' \
	>"$EDITS/aiter/cr.py"
printf 'def mla_decode_fwd(q, kv, o, causal=False):\n    return o\ndel mla_decode_fwd\nfrom .old import mla_decode_fwd\n' \
	>"$EDITS/aiter/deleted.py"
printf "$base" >"$EDITS/aiter/old.py"
cat >"$EDITS/aiter/ways.py" <<'EOF'
import os
import functools
if os.environ.get("X"):
    def by_env(q, causal): pass
else:
    def by_env(q): pass
try:
    import torch
except ImportError:
    torch = None
def impl(q, causal): pass
partial = functools.partial(impl, 1)
def deco(f):
    return f
@deco
def decorated(q, causal): pass
def other(f):
    return print
@other
def replaced(q, causal): pass
class K:
    if os.environ.get("X"):
        def m(self, causal): pass
made = impl(1, 2)
EOF
pack edits <<'EOF'
rules:
  - {id: stub, file: aiter/stub.py, python-def: mla_decode_fwd, params: [causal]}
  - {id: rebound, file: aiter/rebound.py, python-def: mla_decode_fwd, params: [causal]}
  - {id: cr, file: aiter/cr.py, python-def: mla_decode_fwd, params: [causal]}
  - {id: deleted, file: aiter/deleted.py, python-def: mla_decode_fwd, params: [causal]}
  - {id: by_env, file: aiter/ways.py, python-def: by_env, params: [causal]}
  - {id: partial, file: aiter/ways.py, python-def: partial, params: [causal]}
  - {id: made, file: aiter/ways.py, python-def: made}
  - {id: decorated, file: aiter/ways.py, python-def: decorated}
  - {id: replaced, file: aiter/ways.py, python-def: replaced}
  - {id: method, file: aiter/ways.py, python-def: K.m}
EOF

case_ "python-def: the stub, rebinding, lone CR and del edits of a def answer no"
scan "$EDITS" edits
expect_rc 0
rule stub status unmatched
rule rebound status unmatched
rule rebound reason "mla_decode_fwd has no parameter 'causal'"
rule cr status unmatched
rule deleted status unmatched
rule deleted file aiter/old.py

case_ "python-def: what only a run decides is unknown, with why"
rule by_env status unknown
rule by_env reason "what aiter/ways.py binds to by_env is not known without running it: it is bound differently by the ways the \`if\` at line 3 may run"
rule made reason "what aiter/ways.py binds to made is not known without running it: it is bound to what the call at line 24 returns"
rule replaced reason "what aiter/ways.py binds to replaced is not known without running it: replaced (line 20) is decorated with @other, which may bind it to something else"
rule method reason "what aiter/ways.py binds to K.m is not known without running it: K.m (line 23) is defined in a block that may not run on import"

case_ "python-def: functools.partial(impl, 1) takes out what it binds"
rule partial status matched
caps partial params "['causal']"

case_ "python-def: a decorator of the tree that returns what it is given keeps the def"
rule decorated status matched
lines decorated "[16]"

# Decorators apply from the bottom up, each as the module binds its name
# where the def is: one returning None makes the name None, whatever gives
# it back above; one rebound later is the one before the def; an async def
# gives a coroutine.
cat >"$EDITS/aiter/stack.py" <<'EOF'
def _ident(fn):
    return fn
def _drop(fn):
    return None
@_ident
@_drop
def dropped(q, causal): pass
@_drop
@_ident
def dropped_first(q, causal): pass
@_ident
@_ident
def kept(q, causal): pass
def later(fn):
    return None
@later
def before_rebinding(q, causal): pass
def later(fn):
    return fn
async def _coro(fn):
    return fn
@_coro
def coroutine(q, causal): pass
def _box(fn):
    return [fn]
@_ident
@_box
def boxed(q, causal): pass
EOF
pack stack <<'EOF'
rules:
  - {id: dropped, file: aiter/stack.py, python-def: dropped}
  - {id: dropped_first, file: aiter/stack.py, python-def: dropped_first}
  - {id: kept, file: aiter/stack.py, python-def: kept, params: [causal]}
  - {id: before_rebinding, file: aiter/stack.py, python-def: before_rebinding}
  - {id: coroutine, file: aiter/stack.py, python-def: coroutine}
  - {id: boxed, file: aiter/stack.py, python-def: boxed}
  - {id: dropped_export, python-export: dropped, from: aiter.stack}
EOF

case_ "python-def: stacked decorators from the bottom up, each as bound before the def"
scan "$EDITS" stack
expect_rc 0
rule dropped reason "aiter/stack.py binds dropped to a value, not a def (dropped (line 7) is decorated with @_drop, which returns None)"
rule dropped_first reason "aiter/stack.py binds dropped_first to a value, not a def (dropped_first (line 10) is decorated with @_drop, which returns None)"
rule kept status matched
lines kept "[13]"
rule before_rebinding reason "aiter/stack.py binds before_rebinding to a value, not a def (before_rebinding (line 17) is decorated with @later, which returns None)"
rule coroutine reason "what aiter/stack.py binds to coroutine is not known without running it: coroutine (line 23) is decorated with @_coro, which may bind it to something else"
rule boxed reason "what aiter/stack.py binds to boxed is not known without running it: boxed (line 28) is decorated with @_box, which may bind it to something else"
rule dropped_export reason "aiter.stack exports dropped, but it is a value, not a def (dropped (line 7) is decorated with @_drop, which returns None)"

# A decorator whose every way out returns a def of its own body (AITER's
# @torch_compile_guard(...) factory, whose wrappers take (*args, **kwargs)):
# a function, whose parameters are not read. Near misses (a way out that
# falls through to None, a def rebound or defined only in a branch, a
# nonlocal, a generator, a decorated inner def, a factory whose decorator
# falls through) may bind anything.
cat >"$EDITS/aiter/own.py" <<'EOF'
def guard(mutates_args="unknown", gen_fake=None):
    def decorator(func):
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)

        try:
            import torch
        except ImportError:
            return wrapper
        if hasattr(torch.ops.aiter, func.__name__): return wrapper

        def wrapper_custom(*args, **kwargs):
            return wrapper(*args, **kwargs)

        return wrapper_custom

    return decorator
def own(fn):
    def inner(*a, **k):
        return fn(*a, **k)
    return inner
def falls(fn):
    def w(*a):
        return fn(*a)
    if fn:
        return w
def rebound(fn):
    def w(*a):
        return fn(*a)
    w = 3
    return w
def branch(fn):
    if fn:
        def w(*a):
            return fn(*a)
    return w
def swaps(fn):
    def w(*a):
        return fn(*a)
    def s():
        nonlocal w
        w = 5
    s()
    return w
def gen(fn):
    def w(*a):
        return fn(*a)
    yield w
def _drop(fn):
    return None
def inner_dropped(fn):
    @_drop
    def w(*a):
        return fn(*a)
    return w
def factory_falls(label):
    def deco(fn):
        def w(*a):
            return fn(*a)
        if label:
            return w
    return deco
@guard(mutates_args=[], gen_fake=lambda *a, **k: None)
def guarded(x, weight, epsilon):
    return x
@own
def owned(x, causal=False):
    return x
@falls
def fell(x): pass
@rebound
def rebound_def(x): pass
@branch
def branched(x): pass
@swaps
def swapped(x): pass
@gen
def generated(x): pass
@inner_dropped
def dropped_inner(x): pass
@factory_falls("")
def factory_fell(x): pass
EOF
pack own <<'EOF'
rules:
  - {id: guarded, python-export: guarded, from: aiter.own}
  - {id: guarded_binds, python-export: guarded, from: aiter.own, binds: {positional: 3}}
  - {id: guarded_params, python-export: guarded, from: aiter.own, params: [epsilon]}
  - {id: guarded_def, file: aiter/own.py, python-def: guarded}
  - {id: owned, python-export: owned, from: aiter.own}
  - {id: fell, python-export: fell, from: aiter.own}
  - {id: rebound_def, python-export: rebound_def, from: aiter.own}
  - {id: branched, python-export: branched, from: aiter.own}
  - {id: swapped, python-export: swapped, from: aiter.own}
  - {id: generated, python-export: generated, from: aiter.own}
  - {id: dropped_inner, python-export: dropped_inner, from: aiter.own}
  - {id: factory_fell, python-export: factory_fell, from: aiter.own}
signatures:
  - module: aiter.own
EOF

case_ "python-export: a decorator that returns a def of its own binds a function whose parameters are not read"
probe scan --aiter-root "$EDITS" --no-launch --no-default-rules --rules "$TMP/own.yaml" \
	--signatures --format json
expect_rc 0
rule guarded status matched
lines guarded "[64]"
caps guarded params "[None]"
rule owned status matched
rule guarded_binds status unknown
rule guarded_binds reason "aiter.own exports guarded, a function whose parameters are not known without running it: guarded (line 64) is decorated with @guard(...), which binds it to a function of its own whose parameters are not read"
rule guarded_params status unknown
rule guarded_def reason "what aiter/own.py binds to guarded is not known without running it: guarded (line 64) is decorated with @guard(...), which binds it to a function of its own whose parameters are not read"
expect_json 'j["signatures"]["aiter.own"]["callables"]["guarded"]' \
	"{'unknown': 'guarded (line 64) is decorated with @guard(...), which binds it to a function of its own whose parameters are not read', 'file': 'aiter/own.py', 'line': 64}"

case_ "python-export: near misses of a decorator's own def are unknown"
for id in fell rebound_def branched swapped generated dropped_inner factory_fell; do
	rule $id status unknown
done
rule fell reason "what aiter.own binds to fell is not known without running it: fell (line 70) is decorated with @falls, which may bind it to something else"

# More near misses: the returned name rebound by a class or by another def
# of the decorator's body, a module that writes a function's __code__, a
# name CPython reads NFKC-normalised (ﬁ is fi), `wraps(` only in a comment,
# a string or a longer name.
cat >"$EDITS/aiter/own2.py" <<'EOF'
def classed(fn):
    def w(*a):
        return fn(*a)
    class w:
        pass
    return w
def twice(fn):
    def w(*a):
        return fn(*a)
    if fn:
        @staticmethod
        def w(*a): pass
    return w
def nfkc(fn):
    def ﬁ(*a):
        return fn(*a)
    fi = 5
    return ﬁ
def textual(fn):
    x = 1  # functools.wraps(fn)
    "wraps("
    return nowraps(5)
@textual
def by_text(x): pass
@classed
def by_class(x): pass
@twice
def by_twice(x): pass
@nfkc
def by_nfkc(x): pass
EOF
printf 'def own(fn):\n    def w(*a):\n        return fn(*a)\n    return w\nown.__code__ = (lambda fn: 5).__code__\n@own\ndef by_code(x): pass\n' \
	>"$EDITS/aiter/own3.py"
pack own2 <<'EOF'
rules:
  - {id: by_class, python-export: by_class, from: aiter.own2}
  - {id: by_twice, python-export: by_twice, from: aiter.own2}
  - {id: by_nfkc, python-export: by_nfkc, from: aiter.own2}
  - {id: by_code, python-export: by_code, from: aiter.own3}
  - {id: by_text, python-export: by_text, from: aiter.own2}
EOF
scan "$EDITS" own2
expect_rc 0
for id in by_class by_twice by_nfkc by_code by_text; do
	rule $id status unknown
done
rule by_code reason "what aiter.own3 binds to by_code is not known without running it: by_code (line 7) is decorated with @own, which may bind it to something else"

# Names as CPython binds them (PEP 3131): `def ﬁnd` binds find, and a rule
# naming ﬁnd names it too; a def continued after `async \` is at the line
# of `async`; a character no name may hold is a syntax error.
cat >"$TREE/aiter/uni.py" <<'EOF'
def ﬁnd(ﬂag, *, ｋw=1):
    return ﬂag


class Ｃls:
    def ｍeth(self, café):
        return café


async \
    def later(x):
    return x
EOF
printf 'def f():\n    return 1 \342\206\222 2\n' >"$TREE/aiter/arrow.py"
pack pyuni <<'EOF'
rules:
  - id: uni.nfkc
    file: aiter/uni.py
    python-def: find
    params: [flag]
    binds: {positional: 1, keywords: [kw]}
  - id: uni.rule_side
    file: aiter/uni.py
    python-def: ﬁnd
    params: [ﬂag, ｋw]
  - id: uni.method
    file: aiter/uni.py
    python-def: Ｃls.meth
    param_at: 2
  - id: uni.async
    file: aiter/uni.py
    python-def: later
  - id: uni.invalid
    file: aiter/arrow.py
    python-def: f
EOF

case_ "python-def: names NFKC-normalized as CPython binds them, in the source and in the rule"
scan "$TREE" pyuni
expect_rc 0
rule uni.nfkc status matched
lines uni.nfkc "[1]"
caps uni.nfkc params "['flag, *, kw=…']"
rule uni.rule_side status matched
rule uni.method status matched
caps uni.method param "['café']"

case_ "python-def: a def continued after 'async \\' is at the line of async, CPython's lineno"
rule uni.async status matched
lines uni.async "[10]"

case_ "python-def: a character no name may hold is CPython's syntax error"
rule uni.invalid status error
rule uni.invalid reason "line 2: invalid character '→' (U+2192)"

# What importing a file binds, imports as CPython runs them: a star import
# from outside the tree may rebind a def, a write into globals() rebinds,
# and a submodule loaded by another module's import binds on its package.
mkdir -p "$TREE/aiter/pk"
cat >"$TREE/aiter/outside.py" <<'EOF'
def before(q, causal=False):
    return q

from torch_like import *

def after(q, causal=False):
    return q

globals()["after_written"] = after
EOF
cat >"$TREE/aiter/pk/__init__.py" <<'EOF'
def helpers(x):
    return x

from . import user
EOF
printf 'from .helpers import tool\n' >"$TREE/aiter/pk/user.py"
printf 'def tool(a):\n    return a\n' >"$TREE/aiter/pk/helpers.py"
pack pyimports <<'EOF'
rules:
  - {id: im.before, file: aiter/outside.py, python-def: before}
  - {id: im.after, file: aiter/outside.py, python-def: after, params: [causal]}
  - {id: im.nothing, file: aiter/outside.py, python-def: nothing}
  - {id: im.written, file: aiter/outside.py, python-def: after_written}
  - {id: im.loaded, file: aiter/pk/__init__.py, python-def: helpers}
EOF

case_ "python-def: a star import from outside the tree may rebind a def bound before it"
scan "$TREE" pyimports
expect_rc 0
rule im.before status unknown
rule im.before reason "what aiter/outside.py binds to before is not known without running it: \`from torch_like import *\` at line 4 may rebind it, from outside the tree (only importing torch_like tells what it binds)"
rule im.after status matched
rule im.nothing status unmatched
rule im.nothing reason "aiter/outside.py binds no def to nothing: \`from torch_like import *\` at line 4 may bind it from outside the tree, and what it held before is no def either"

case_ "python-def: globals()[\"NAME\"] = ... binds NAME to what only a run tells"
rule im.written reason "what aiter/outside.py binds to after_written is not known without running it: globals() is written at line 9"

case_ "python-def: a submodule another module's import loads binds on its package, over a def"
rule im.loaded status unmatched
rule im.loaded reason "aiter/pk/__init__.py binds helpers to a module, not a def"

# Callables that are no plain def, and what getattr finds on a class: each
# answer is what CPython's inspect.signature gives (checked against it).
CALLS="$TMP/calls"
mkdir -p "$CALLS/aiter"
: >"$CALLS/aiter/__init__.py"
cat >"$CALLS/aiter/calls.py" <<'EOF'
import functools
from functools import partial
from .other import *


def _impl(q, kv, causal=False, *, scale=1.0):
    return q


as_lambda = lambda q, causal=False, /, *rest, lse, **kw: q
[_first, by_list] = [0, (lambda zz, causal: zz)]
(by_walrus := lambda q, lse=False: q)
swapped, _impl2 = _impl, as_lambda
swapped, _impl2 = _impl2, swapped
bound_kv = functools.partial(_impl, 0, 0)
by_keyword = partial(_impl, kv=1)
twice = partial(bound_kv, causal=True)
raises = functools.partial(_impl, 1, q=2)


class Ops:
    @property
    def causal_op(self):
        return None

    @causal_op.setter
    def causal_op(self, value):
        pass

    @classmethod
    def make(cls, n, causal=False):
        return cls

    @staticmethod
    def static(q, causal):
        return q

    def run(self, q, causal=False):
        return q

    def run(self, q):
        return q

    lam = lambda self, causal: causal
    value = 3

    class Inner:
        @classmethod
        def deep(cls, *args):
            return args


class Derived(Ops):
    pass


def _register(cls):
    return cls


@_register
class Decorated:
    def run(self, causal):
        return causal


class Rebound:
    def run(self, causal):
        return causal


from .other import Rebound


def _pos(a, /, **kw):
    return a


by_posonly = partial(_pos, a=1)
chained = (_walrus := by_walrus)
flattened = partial(by_posonly, 2)
EOF
cat >"$CALLS/aiter/other.py" <<'EOF'
__all__ = ["Rebound"]


class Rebound:
    def run(self):
        return None
EOF
{
	echo 'rules:'
	for n in as_lambda by_list by_walrus swapped _impl2 bound_kv by_keyword twice raises \
		Ops.causal_op Ops.make Ops.static Ops.run Ops.lam Ops.value Ops.Inner.deep Ops.Inner \
		Derived.run Decorated.run Rebound.run by_posonly chained flattened; do
		echo "  - {id: $n, file: aiter/calls.py, python-def: $n}"
	done
	echo '  - {id: make_binds, file: aiter/calls.py, python-def: Ops.make, binds: {positional: 2}}'
	echo '  - {id: make_cls, file: aiter/calls.py, python-def: Ops.make, params: [cls]}'
} | pack calls

case_ "python-def: a lambda is a def, its signature read from it (assignment, list target, walrus)"
scan "$CALLS" calls
expect_rc 0
rule as_lambda status matched
lines as_lambda "[10]"
caps as_lambda params "['q, causal=…, /, *rest, lse, **kw']"
caps by_list params "['zz, causal']"
caps by_walrus params "['q, lse=…']"

case_ "python-def: a tuple assignment reads its values before it binds (a swap)"
caps swapped params "['q, causal=…, /, *rest, lse, **kw']"
caps _impl2 params "['q, kv, causal=…, *, scale=…']"

case_ "python-def: functools.partial's signature as inspect.signature gives it"
caps bound_kv params "['causal=…, *, scale=…']"
lines bound_kv "[6]"
caps by_keyword params "['q, *, kv=…, causal=…, scale=…']"
caps twice params "['*, causal=…, scale=…']"
rule by_posonly reason "what aiter/calls.py binds to by_posonly is not known without running it: the arguments of the functools.partial at line 79 do not bind to _pos: 'a' is positional-only, given by keyword"
caps chained params "['q, lse=…']"
# partial(partial(_pos, a=1), 2) is partial(_pos, 2, a=1): a=1 goes to **kw
caps flattened params "['**kw']"
rule raises status unknown
rule raises reason "what aiter/calls.py binds to raises is not known without running it: the arguments of the functools.partial at line 18 do not bind to _impl: 'q' given both by position and by keyword"

case_ "python-def: Cls.m as getattr finds it: a classmethod bound, a property no def"
rule Ops.causal_op status unmatched
rule Ops.causal_op reason "aiter/calls.py binds Ops.causal_op to a value, not a def (a property, at line 27)"
caps Ops.make params "['n, causal=…']"
rule make_binds status matched
rule make_cls reason "Ops.make has no parameter 'cls'"
caps Ops.static params "['q, causal']"
caps Ops.run params "['self, q']"
lines Ops.run "[41]"
caps Ops.lam params "['self, causal']"
rule Ops.value reason "aiter/calls.py binds Ops.value to a value, not a def"
caps Ops.Inner.deep params "['*args']"
rule Ops.Inner reason "aiter/calls.py binds Ops.Inner to a class, not a def"

case_ "python-def: a name a class may inherit, or a decorated class, is unknown; a class rebound is the new one's"
rule Derived.run status unknown
rule Derived.run reason "what aiter/calls.py binds to Derived.run is not known without running it: Derived (line 53) may inherit it from its bases"
rule Decorated.run reason "what aiter/calls.py binds to Decorated.run is not known without running it: Decorated (line 62) is decorated with @_register, which may bind it to something else"
rule Rebound.run status matched
rule Rebound.run file aiter/other.py
caps Rebound.run params "['self']"

# A file no import names (a folder with a dash): its own class is read; one
# it imports is not followed.
mkdir -p "$CALLS/aiter/odd-dir"
printf 'from .x import C\nclass D:\n    @classmethod\n    def m(cls, a): pass\n' \
	>"$CALLS/aiter/odd-dir/y.py"
pack odd <<'EOF'
rules:
  - {id: imported, file: aiter/odd-dir/y.py, python-def: C.m}
  - {id: own, file: aiter/odd-dir/y.py, python-def: D.m}
EOF

case_ "python-def: Cls.m in a file no import names: its own class, not one it imports"
scan "$CALLS" odd
expect_rc 0
rule imported status unknown
rule imported reason "what aiter/odd-dir/y.py binds to C.m is not known without running it: C is bound at line 1 by what the reader follows only in a module an import names"
caps own params "['a']"

# Loops and star imports with callables: a loop's name target holds its
# last item, read where the loop starts; a star import from outside the tree
# may bind `partial`.
MIX="$TMP/mix"
mkdir -p "$MIX/aiter"
cat >"$MIX/aiter/__init__.py" <<'EOF'
from functools import partial
from extlib_outside import *


def _impl(q, kv):
    return q


def _other(x):
    return x


for last in (_other, _impl):
    pass
after_loop = last
via_star = partial(_impl, 1)
EOF
pack mix <<'EOF'
rules:
  - {id: after_loop, file: aiter/__init__.py, python-def: after_loop}
  - {id: via_star, file: aiter/__init__.py, python-def: via_star}
EOF

case_ "python-def: a loop's last item is read before the loop binds; a partial after a star import from outside is unknown"
scan "$MIX" mix
expect_rc 0
caps after_loop params "['q, kv']"
lines after_loop "[5]"
rule via_star status unknown
rule via_star reason "what aiter/__init__.py binds to via_star is not known without running it: it is bound at line 16 to what functools.partial returns, and a star import before it may bind partial"

pack def_names <<'EOF'
rules:
  - id: r
    file: [a.py, b.py, c.py]
    python-def: [f, g]
EOF

case_ "refused: python-def with 2 names for 3 files"
refused def_names "4:17: 'python-def' lists 2 names for 3 files: give one name, or one per file"

finish
