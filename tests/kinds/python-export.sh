#!/bin/sh
# SPDX-License-Identifier: MIT
# python-export: what `from PACKAGE import NAME` binds, followed through star
# imports, aliases, try bodies and the arms that assume_false and conditions
# CPython knows (if TYPE_CHECKING:) leave, and why a name bound otherwise is
# no def; and what its loader refuses.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/export"
mkdir -p "$TREE/aiter/ops" "$TREE/aiter/jit"
printf 'from . import gradlib\n' >"$TREE/aiter/ops/__init__.py"
cat >"$TREE/aiter/__init__.py" <<'EOF'
import os

AITER_TRITON_ONLY = os.getenv("AITER_TRITON_ONLY", "0") == "1"
AITER_AOT_IMPORT = os.getenv("AITER_AOT_IMPORT", "0") == "1"

if AITER_TRITON_ONLY:
    from .ops.triton import triton_only_op
elif AITER_AOT_IMPORT:
    from .ops.aot import aot_only_op
else:
    from .ops.gemm import *
    from .ops.gradlib import *
    from .ops.moe import topk_softmax as topk_softmax
    from .ops.moe import Router

try:
    from .ops.comms import all_reduce_fused
except ImportError:
    def handler_only_op(x):
        return x
EOF
cat >"$TREE/aiter/ops/gemm.py" <<'EOF'
__all__ = ["gemm_a8w8"]


def gemm_a8w8(a, b):
    return a


def hipb_mm(a, b):
    return a
EOF
cat >"$TREE/aiter/ops/gradlib.py" <<'EOF'
def hipb_mm(a, b, solution_index, bias=None):
    return a


def _private(a):
    return a
EOF
cat >"$TREE/aiter/ops/moe.py" <<'EOF'
def _topk_softmax_impl(w, idx, gating, renorm, num_shared_experts=0):
    return w


topk_softmax = _topk_softmax_impl


class Router:
    pass
EOF
for m in triton aot comms; do
	printf 'def %s(x):\n    return x\n' "$(case $m in triton) echo triton_only_op ;; aot) echo aot_only_op ;; comms) echo all_reduce_fused ;; esac)" >"$TREE/aiter/ops/$m.py"
done
pack export <<'EOF'
rules:
  - id: ex.star_all
    python-export: hipb_mm
    from: aiter
    params: [solution_index]
    assume_false: [AITER_TRITON_ONLY, AITER_AOT_IMPORT]
  - id: ex.alias
    python-export: topk_softmax
    from: aiter
    params: [num_shared_experts]
    binds: {positional: 4}
    param_at: 4
    assume_false: [AITER_TRITON_ONLY, AITER_AOT_IMPORT]
  - id: ex.try_body
    python-export: all_reduce_fused
    from: aiter
    assume_false: [AITER_TRITON_ONLY, AITER_AOT_IMPORT]
  - id: ex.except_only
    python-export: handler_only_op
    from: aiter
    assume_false: [AITER_TRITON_ONLY, AITER_AOT_IMPORT]
  - id: ex.dead_arm
    python-export: triton_only_op
    from: aiter
    assume_false: [AITER_TRITON_ONLY, AITER_AOT_IMPORT]
  - id: ex.unknown_condition
    python-export: aot_only_op
    from: aiter
    assume_false: [AITER_TRITON_ONLY]
  - id: ex.private
    python-export: _private
    from: aiter
  - id: ex.class
    python-export: Router
    from: aiter
    assume_false: [AITER_TRITON_ONLY, AITER_AOT_IMPORT]
  - id: ex.value
    python-export: AITER_TRITON_ONLY
    from: aiter
  - id: ex.module
    python-export: os
    from: aiter
  - id: ex.submodule
    python-export: gradlib
    from: aiter.ops
  - id: ex.nomodule
    python-export: f
    from: aiter.nope
  - id: ex.params_fail
    python-export: hipb_mm
    from: aiter
    params: [out_dtype]
    assume_false: [AITER_TRITON_ONLY, AITER_AOT_IMPORT]
EOF

case_ "python-export: a star import whose __all__ leaves the name out, then a module without __all__"
scan "$TREE" export
expect_rc 0
rule ex.star_all status matched
rule ex.star_all file aiter/ops/gradlib.py
lines ex.star_all "[1]"

case_ "python-export: an alias of a def, with params, binds and param_at"
rule ex.alias status matched
rule ex.alias file aiter/ops/moe.py
caps ex.alias param "['renorm']"

case_ "python-export: a try body binds, an except handler does not"
rule ex.try_body status matched
rule ex.try_body file aiter/ops/comms.py
rule ex.except_only status unmatched
rule ex.except_only reason "aiter does not export handler_only_op"
rule ex.except_only file aiter/__init__.py

case_ "python-export: only the else arm of if/elif on assume_false names counts"
rule ex.dead_arm status unmatched
rule ex.dead_arm reason "aiter does not export triton_only_op"

case_ "python-export: a name bound in one arm of a condition not known is unknown"
rule ex.unknown_condition status unknown
rule ex.unknown_condition reason "what aiter binds to aot_only_op is not known without running it: it is bound differently by the ways the \`if\` at line 6 may run"
rule ex.unknown_condition file aiter/__init__.py

case_ "python-export: what is bound but no def"
rule ex.private reason "aiter does not export _private"
rule ex.class status unmatched
rule ex.class reason "aiter exports Router, but it is a class, not a def"
rule ex.class file aiter/ops/moe.py
rule ex.value reason "aiter exports AITER_TRITON_ONLY, but it is a value, not a def"
rule ex.module reason "aiter exports os, but it is a module, not a def"
rule ex.submodule reason "aiter.ops exports gradlib, but it is a module, not a def"
rule ex.nomodule status missing
rule ex.nomodule reason "no module aiter.nope in the tree"
rule ex.nomodule file aiter/nope/__init__.py
rule ex.params_fail reason "hipb_mm has no parameter 'out_dtype'"

case_ "python-export: a package is imported before the module of its name beside it"
mkdir "$TREE/aiter/ops/gradlib"
printf 'def hipb_mm(a, b):\n    return a\n' >"$TREE/aiter/ops/gradlib/__init__.py"
scan "$TREE" export
expect_rc 0
rule ex.star_all status unmatched
rule ex.star_all file aiter/ops/gradlib/__init__.py
rule ex.star_all reason "hipb_mm has no parameter 'solution_index'"
expect_json "[i['path'] for i in j['inputs']].count('aiter/ops/gradlib.py')" 0
rm -r "$TREE/aiter/ops/gradlib"

case_ "python-export: a capability over a rule that found no file names no '(null)' file"
printf 'probes:\n  - id: p\n    requires: ex.except_only\n' >"$TMP/export-probe.yaml"
scan_with_probes "$TREE" export export-probe
expect_rc 0
cap p False
cap_reason p "rule ex.except_only did not match: aiter does not export handler_only_op"

# A package whose stubs for type checkers, under `if TYPE_CHECKING:`, come
# after the real import: on import only the real one and the else arm bind.
TYPED="$TMP/typed"
mkdir -p "$TYPED/aiter"
cat >"$TYPED/aiter/__init__.py" <<'EOF'
import typing
from typing import TYPE_CHECKING

from .ops import fwd

if TYPE_CHECKING:
    from .stubs import fwd, stub_only
else:
    from .runtime import runtime_only
if not typing.TYPE_CHECKING:
    from .runtime import runtime_two
EOF
printf 'def fwd(q, k, v, scale=None):\n    return q\n' >"$TYPED/aiter/ops.py"
printf 'def fwd(q, *, lse=False): ...\ndef stub_only(x): ...\n' >"$TYPED/aiter/stubs.py"
printf 'def runtime_only(x):\n    return x\ndef runtime_two(x):\n    return x\n' >"$TYPED/aiter/runtime.py"
pack typed <<'EOF'
rules:
  - id: ty.real
    python-export: fwd
    from: aiter
    params: [scale]
  - id: ty.stub_param
    python-export: fwd
    from: aiter
    params: [lse]
  - id: ty.stub_only
    python-export: stub_only
    from: aiter
  - id: ty.else
    python-export: runtime_only
    from: aiter
  - id: ty.not
    python-export: runtime_two
    from: aiter
EOF

case_ "python-export: what only 'if TYPE_CHECKING:' imports is not exported; its 'else:' is"
scan "$TYPED" typed
expect_rc 0
rule ty.real status matched
rule ty.real file aiter/ops.py
rule ty.stub_param status unmatched
rule ty.stub_param reason "fwd has no parameter 'lse'"
rule ty.stub_only status unmatched
rule ty.stub_only reason "aiter does not export stub_only"
rule ty.else status matched
rule ty.else file aiter/runtime.py
rule ty.not status matched
rule ty.not file aiter/runtime.py
expect_json "[i['path'] for i in j['inputs']].count('aiter/stubs.py')" 0

# What CPython binds for names that are not ASCII: their NFKC forms, so
# `from .ｏps import ﬁnd as ｇet` binds get from aiter/ops.py's find; a rule
# spelling them so names the same.
UNI="$TMP/uni"
mkdir -p "$UNI/aiter"
printf 'from .\357\275\217ps import \357\254\201nd as \357\275\207et\n' >"$UNI/aiter/__init__.py"
printf 'def \357\254\201nd(\357\254\202ag):\n    return \357\254\202ag\n' >"$UNI/aiter/ops.py"
pack pyuni <<'EOF'
rules:
  - id: uni.get
    python-export: get
    from: aiter
    params: [flag]
  - id: uni.rule_side
    python-export: ｇet
    from: ａiter
  - id: uni.find
    python-export: find
    from: aiter.ops
EOF

case_ "python-export: names NFKC-normalized as CPython binds them, in the source and in the rule"
scan "$UNI" pyuni
expect_rc 0
rule uni.get status matched
rule uni.get file aiter/ops.py
lines uni.get "[1]"
rule uni.rule_side status matched
rule uni.find status matched

# __all__ as CPython evaluates it: other modules' __all__ joined, a name
# removed, a comprehension, a submodule named; one that cannot be read, and
# a module __getattr__ that may make any name.
ALL="$TMP/all"
mkdir -p "$ALL/aiter/ops/pkg"
cat >"$ALL/aiter/__init__.py" <<'EOF'
from .ops.joined import *
from .ops.unreadable import *
from .ops.pkg import *
from .ops.trimmed import *
EOF
: >"$ALL/aiter/ops/__init__.py"
cat >"$ALL/aiter/ops/joined.py" <<'EOF'
from . import first
from .second import __all__ as _second
from .first import *
from .second import *

__all__ = first.__all__ + _second + ["own"]


def own(x):
    return x


def hidden(x):
    return x
EOF
printf '__all__ = ["from_first"]\n\n\ndef from_first(a, b):\n    return a\n' >"$ALL/aiter/ops/first.py"
printf '__all__ = [n for n in ("from_second",)]\n\n\ndef from_second(a):\n    return a\n' \
	>"$ALL/aiter/ops/second.py"
cat >"$ALL/aiter/ops/unreadable.py" <<'EOF'
import os

__all__ = [n for n in dir() if not n.startswith("_")]


def maybe(x):
    return x
EOF
printf '__all__ = ["sub", "pkg_op"]\n\n\ndef pkg_op(x):\n    return x\n' >"$ALL/aiter/ops/pkg/__init__.py"
printf 'def s(x):\n    return x\n' >"$ALL/aiter/ops/pkg/sub.py"
cat >"$ALL/aiter/ops/trimmed.py" <<'EOF'
__all__ = ("kept", "dropped")
__all__ = list(__all__)
__all__.remove("dropped")


def kept(x):
    return x


def dropped(x):
    return x
EOF
cat >"$ALL/aiter/ops/lazy.py" <<'EOF'
_NAMES = {"lazy_op": ".impl"}
__all__ = list(_NAMES)


def __getattr__(name):
    if name in _NAMES:
        return lambda x: x
    raise AttributeError(name)
EOF
printf 'from .lazy import *\n' >"$ALL/aiter/ops/lazy_user.py"
pack all <<'EOF'
rules:
  - {id: al.first, python-export: from_first, from: aiter}
  - {id: al.second, python-export: from_second, from: aiter}
  - {id: al.own, python-export: own, from: aiter}
  - {id: al.hidden, python-export: hidden, from: aiter}
  - {id: al.maybe, python-export: maybe, from: aiter}
  - {id: al.nothing, python-export: nothing_here, from: aiter}
  - {id: al.sub, python-export: sub, from: aiter}
  - {id: al.kept, python-export: kept, from: aiter}
  - {id: al.dropped, python-export: dropped, from: aiter}
  - {id: al.lazy, python-export: lazy_op, from: aiter.ops.lazy_user}
  - {id: al.lazy_none, python-export: nothing_here, from: aiter.ops.lazy_user}
EOF

case_ "python-export: __all__ joined from other modules' __all__, with a name removed"
scan "$ALL" all
expect_rc 0
rule al.first file aiter/ops/first.py
rule al.second file aiter/ops/second.py
rule al.own file aiter/ops/joined.py
rule al.kept file aiter/ops/trimmed.py
expect_json "[j['rules'][r]['status'] for r in ('al.first', 'al.second', 'al.own', 'al.kept')]" \
	"['matched', 'matched', 'matched', 'matched']"
rule al.hidden reason "aiter does not export hidden"
rule al.dropped reason "aiter does not export dropped"
rule al.sub reason "aiter exports sub, but it is a module, not a def"

case_ "python-export: an __all__ that cannot be read leaves unknown what it may export"
rule al.maybe status unknown
rule al.maybe reason "what aiter binds to maybe is not known without running it: aiter/ops/unreadable.py: line 3: its __all__ cannot be read: it is not made of str literals in lists or tuples, other modules' __all__, comprehensions over them and list/tuple/sorted/set() of them"
# a name the module lacks is no export of it: an __all__ naming it would raise
rule al.nothing status unmatched
rule al.nothing reason "aiter does not export nothing_here"
# unless a module __getattr__ may make it
rule al.lazy status unknown
rule al.lazy reason "what aiter.ops.lazy_user binds to lazy_op is not known without running it: aiter/ops/lazy.py: line 2: its __all__ takes _NAMES, which is no module's __all__ the reader can follow"
rule al.lazy_none status unknown

case_ "python-export: the __all__ fixture binds as CPython binds it"
# Every known verdict above, checked against what CPython imports.
if "${PYTHON3:-python3}" -c '' 2>/dev/null; then
	(cd "$ALL" && "${PYTHON3:-python3}" -c '
import inspect, aiter, aiter.ops.lazy_user as lazy
print([n for n in ("from_first", "from_second", "own", "kept", "pkg_op") if inspect.isfunction(getattr(aiter, n))],
      [n for n in ("hidden", "dropped", "nothing_here", "maybe") if hasattr(aiter, n)],
      inspect.ismodule(aiter.sub), hasattr(lazy, "lazy_op"))') >"$TMP/out" 2>&1
	expect_out "['from_first', 'from_second', 'own', 'kept', 'pkg_op'] [] True True"
else
	echo "SKIP [$current]: no python3" >&2
fi

# AITER's aiter/ops/triton/__init__.py redirects old module paths: a finder
# first on sys.meta_path imports each old name of _BACKWARD_COMPAT_MAP as the
# new one, and gives way to the other finders when that cannot be imported.
COMPAT="$TMP/compat"
mkdir -p "$COMPAT/aiter/ops/triton/attention" "$COMPAT/aiter/ops/triton/gemm/basic"
for d in ops ops/triton/attention ops/triton/gemm ops/triton/gemm/basic; do
	: >"$COMPAT/aiter/$d/__init__.py"
done
printf 'from .ops.triton.decode_attn import decode_fwd\n' >"$COMPAT/aiter/__init__.py"
cat >"$COMPAT/aiter/ops/triton/__init__.py" <<'EOF'
import importlib
import importlib.util
import sys
import types

__all__ = []

# Modules that moved into subpackages, by their old name.
_BACKWARD_COMPAT_MAP = {
    # attention
    "decode_attn": "attention.decode_attn",
    'gemm_old': 'gemm.basic.gemm_new',  # its old file is still there
    "stale": "gemm.basic.gone",
}


def __getattr__(name):
    if name not in _BACKWARD_COMPAT_MAP:
        raise AttributeError(name)
    return importlib.import_module(f"{__name__}.{_BACKWARD_COMPAT_MAP[name]}")


def _backward_compat_find_spec(fullname, path, target=None):
    head, _, tail = fullname.rpartition(".")
    if head != __name__ or tail not in _BACKWARD_COMPAT_MAP:
        return None
    moved = f"{__name__}.{_BACKWARD_COMPAT_MAP[tail]}"
    try:
        sys.modules[fullname] = importlib.import_module(moved)
    except ImportError:
        return None
    return importlib.util.find_spec(moved)


sys.meta_path.insert(0, types.SimpleNamespace(find_spec=_backward_compat_find_spec))
EOF
printf 'def helper(q, k):\n    return q\n' >"$COMPAT/aiter/ops/triton/common.py"
cat >"$COMPAT/aiter/ops/triton/attention/decode_attn.py" <<'EOF'
from ..common import helper as decode_helper


def decode_fwd(q, k, v, causal=False):
    return q
EOF
printf 'def gemm(a, b, bias=None):\n    return a\n' >"$COMPAT/aiter/ops/triton/gemm/basic/gemm_new.py"
printf 'def gemm(a, b):\n    return a\n' >"$COMPAT/aiter/ops/triton/gemm_old.py"
printf 'def gemm(a, b):\n    return a\n' >"$COMPAT/aiter/ops/triton/stale.py"
pack compat <<'EOF'
rules:
  - {id: cm.moved, python-export: decode_fwd, from: aiter.ops.triton.decode_attn, params: [causal]}
  - {id: cm.import, python-export: decode_fwd, from: aiter}
  - {id: cm.relative, python-export: decode_helper, from: aiter.ops.triton.decode_attn}
  - {id: cm.over_old, python-export: gemm, from: aiter.ops.triton.gemm_old, params: [bias]}
  - {id: cm.fallback, python-export: gemm, from: aiter.ops.triton.stale, params: [bias]}
  - {id: cm.attribute, python-export: decode_attn, from: aiter.ops.triton}
EOF

case_ "python-export: old module paths follow the package's _BACKWARD_COMPAT_MAP"
scan "$COMPAT" compat
expect_rc 0
rule cm.moved status matched
rule cm.moved file aiter/ops/triton/attention/decode_attn.py
rule cm.import status matched
rule cm.import file aiter/ops/triton/attention/decode_attn.py
# the new module's relative imports are relative to its new name
rule cm.relative file aiter/ops/triton/common.py
# the redirect comes before the old file
rule cm.over_old status matched
rule cm.over_old file aiter/ops/triton/gemm/basic/gemm_new.py
# a new module that is not there gives way to the old file
rule cm.fallback status unmatched
rule cm.fallback reason "gemm has no parameter 'bias'"
rule cm.fallback file aiter/ops/triton/stale.py
rule cm.attribute reason "aiter.ops.triton exports decode_attn, but it is a module, not a def"

case_ "python-export: the compat fixture binds as CPython binds it"
if "${PYTHON3:-python3}" -c '' 2>/dev/null; then
	(cd "$COMPAT" && "${PYTHON3:-python3}" -c '
import inspect, aiter
from aiter.ops.triton.gemm_old import gemm as over_old
from aiter.ops.triton.stale import gemm as fallback
from aiter.ops.triton import decode_attn
print(inspect.getsourcefile(aiter.decode_fwd).endswith("attention/decode_attn.py"),
      list(inspect.signature(over_old).parameters), list(inspect.signature(fallback).parameters),
      decode_attn.__name__)') >"$TMP/out" 2>&1
	expect_out "True ['a', 'b', 'bias'] ['a', 'b'] aiter.ops.triton.attention.decode_attn"
else
	echo "SKIP [$current]: no python3" >&2
fi

case_ "python-export: a compat map the reader cannot read leaves the old paths unknown"
sed -i 's/^_BACKWARD_COMPAT_MAP = {/_BACKWARD_COMPAT_MAP = dict(_OLD) or {/' \
	"$COMPAT/aiter/ops/triton/__init__.py"
scan "$COMPAT" compat
expect_rc 0
rule cm.moved status unknown
rule cm.moved reason "what aiter.ops.triton.decode_attn binds to decode_fwd is not known without running it: which module aiter.ops.triton.decode_attn is depends on a redirect of old module paths: aiter/ops/triton/__init__.py: line 9: the _BACKWARD_COMPAT_MAP there is no dict of str literals the reader can read"
# without its finder, the map redirects nothing
sed -i 's/^def _backward_compat_find_spec/def _find_spec/' "$COMPAT/aiter/ops/triton/__init__.py"
scan "$COMPAT" compat
expect_rc 0
rule cm.moved status missing
rule cm.over_old file aiter/ops/triton/gemm_old.py

# Imports as CPython runs them: an import that fails under
# contextlib.suppress skips the rest of its block; a star import from outside
# the tree may bind any name.
IMP="$TMP/imports"
mkdir -p "$IMP/aiter"
cat >"$IMP/aiter/__init__.py" <<'EOF'
import contextlib

with contextlib.suppress(ImportError):
    from .present import present_op
    from .missing_mod import gone
    def suppressed(x):
        return x
with contextlib.suppress(ImportError):
    from .present import present_op
    def maybe_run(x):
        return x
EOF
cat >>"$IMP/aiter/__init__.py" <<'EOF'
try:
    from . import present
except ImportError:
    present = None
EOF
printf 'def present_op(a):\n    return a\n' >"$IMP/aiter/present.py"
cat >"$IMP/aiter/tried.py" <<'EOF'
try:
    from . import zz_no_such_module
    def tried_body(x):
        return x
except ImportError:
    def tried_handler(x):
        return x
try:
    from .present import not_there
except ImportError:
    def missing_name(x, fallback=True):
        return x
EOF
cat >"$IMP/aiter/spaces.py" <<'EOF'
def before_namespace(x):
    return x
globals().update({})
globals()["written"] = lambda x: x
EOF
cat >"$IMP/aiter/outside.py" <<'EOF'
def local_op(x):
    return x

from extlib_outside import *

def after_star(x, y):
    return x
EOF
mkdir -p "$IMP/aiter/pk"
cat >"$IMP/aiter/pk/__init__.py" <<'EOF'
def helpers(x):
    return x
def mla(q):
    return q
def sub2(x):
    return x
def maybe_loaded(x):
    return x
from . import user
from . import mla
import aiter.pk.sub2
import os
if os.environ.get("AITER_PROBE_TEST_UNSET"):
    from . import lazy
EOF
printf 'from .helpers import tool\n' >"$IMP/aiter/pk/user.py"
printf 'def tool(a):\n    return a\n' >"$IMP/aiter/pk/helpers.py"
printf 'def f(q):\n    return q\n' >"$IMP/aiter/pk/mla.py"
printf 'X = 1\n' >"$IMP/aiter/pk/sub2.py"
printf 'from .maybe_loaded import y\n' >"$IMP/aiter/pk/lazy.py"
printf 'y = 1\n' >"$IMP/aiter/pk/maybe_loaded.py"
cat >"$IMP/aiter/swapped.py" <<'EOF'
import sys
def original(a):
    return a
class _Other:
    original = staticmethod(lambda a, causal=False: a)
sys.modules[__name__] = _Other
EOF
pack imports <<'EOF'
rules:
  - {id: im.before, python-export: present_op, from: aiter}
  - {id: im.skipped, python-export: suppressed, from: aiter}
  - {id: im.may_raise, python-export: maybe_run, from: aiter}
  - {id: im.rebound, python-export: local_op, from: aiter.outside}
  - {id: im.after, python-export: after_star, from: aiter.outside}
  - {id: im.perhaps, python-export: never_bound, from: aiter.outside}
  - {id: im.self, python-export: present, from: aiter}
  - {id: im.body, python-export: tried_body, from: aiter.tried}
  - {id: im.handler, python-export: tried_handler, from: aiter.tried}
  - {id: im.name, python-export: missing_name, from: aiter.tried, params: [fallback]}
  - {id: im.written, python-export: written, from: aiter.spaces}
  - {id: im.namespace, python-export: before_namespace, from: aiter.spaces}
  - {id: im.swapped, python-export: original, from: aiter.swapped}
  - {id: im.elsewhere, python-export: helpers, from: aiter.pk}
  - {id: im.bound_first, python-export: mla, from: aiter.pk}
  - {id: im.absolute, python-export: sub2, from: aiter.pk}
  - {id: im.maybe_loaded, python-export: maybe_loaded, from: aiter.pk}
EOF

case_ "python-export: an import failing under contextlib.suppress skips the rest of its block"
scan "$IMP" imports
expect_rc 0
rule im.before status matched
rule im.before file aiter/present.py
rule im.skipped reason "aiter does not export suppressed"
# a def may raise: the rest of the block may not run
rule im.may_raise status unknown
rule im.may_raise reason "what aiter binds to maybe_run is not known without running it: it is bound differently by the ways the \`with contextlib.suppress\` at line 8 may run"

case_ "python-export: a from-import in a try fails at a name its module neither binds nor has as a submodule"
rule im.self reason "aiter exports present, but it is a module, not a def"
rule im.body reason "aiter.tried does not export tried_body"
rule im.handler status matched
rule im.name status matched

case_ "python-export: a write into globals() binds what only a run tells"
rule im.written reason "what aiter.spaces binds to written is not known without running it: globals() is written at line 4"
rule im.namespace reason "what aiter.spaces binds to before_namespace is not known without running it: globals() is written at line 3 under a name only a run tells"

rule im.swapped reason "what aiter.swapped binds to original is not known without running it: the module replaces itself in sys.modules at line 6"

case_ "python-export: loading a submodule anywhere binds it on its package, once"
rule im.elsewhere reason "aiter.pk exports helpers, but it is a module, not a def"
# bound already: \`from . import mla\` takes the def, and loads nothing
rule im.bound_first status matched
rule im.absolute reason "aiter.pk exports sub2, but it is a module, not a def"
rule im.maybe_loaded status unknown
rule im.maybe_loaded reason "what aiter.pk binds to maybe_loaded is not known without running it: it may be its submodule aiter.pk.maybe_loaded, which the import at line 14 may load first"

case_ "python-export: a star import from outside the tree may rebind any name"
rule im.rebound status unknown
rule im.rebound reason "what aiter.outside binds to local_op is not known without running it: \`from extlib_outside import *\` at line 4 may rebind it, from outside the tree (only importing extlib_outside tells what it binds)"
rule im.after status matched
rule im.perhaps status unmatched
rule im.perhaps reason "aiter.outside binds no def to never_bound: \`from extlib_outside import *\` at line 4 may bind it from outside the tree, and what it held before is no def either"

case_ "python-export: the imports fixture binds as CPython binds it"
if "${PYTHON3:-python3}" -c '' 2>/dev/null; then
	(cd "$IMP" && "${PYTHON3:-python3}" -c '
import inspect, aiter, aiter.tried as t
print(inspect.getsourcefile(aiter.present_op).endswith("present.py"),
      hasattr(aiter, "suppressed"), hasattr(aiter, "maybe_run"), inspect.ismodule(aiter.present),
      hasattr(t, "tried_body"), hasattr(t, "tried_handler"), list(inspect.signature(t.missing_name).parameters))
import aiter.pk as pk
print(inspect.ismodule(pk.helpers), inspect.isfunction(pk.mla), inspect.ismodule(pk.sub2))') >"$TMP/out" 2>&1
	expect_out "True False True True False True ['x', 'fallback']
True True True"
else
	echo "SKIP [$current]: no python3" >&2
fi

# What a star import exports may be a partial or a lambda: their signatures
# are what a call meets, and a partial follows its def through an import.
PARTS="$TMP/parts"
mkdir -p "$PARTS/aiter/ops"
printf 'from .ops.fused import *\n' >"$PARTS/aiter/__init__.py"
: >"$PARTS/aiter/ops/__init__.py"
cat >"$PARTS/aiter/ops/impl.py" <<'EOF'
def fused_moe_impl(x, w1, w2, topk, *, block_m=64, activation="silu"):
    return x
EOF
cat >"$PARTS/aiter/ops/fused.py" <<'EOF'
import functools
from .impl import fused_moe_impl

__all__ = ["fused_moe", "fused_moe_gelu", "moe_sorting"]
fused_moe = fused_moe_impl
fused_moe_gelu = functools.partial(fused_moe_impl, activation="gelu")
moe_sorting = lambda topk_ids, num_experts, block_m=64: topk_ids
EOF
pack parts <<'EOF'
rules:
  - {id: p.gelu, python-export: fused_moe_gelu, from: aiter, binds: {positional: 4, keywords: [block_m]}}
  - {id: p.gelu_positional, python-export: fused_moe_gelu, from: aiter, binds: {positional: 5}}
  - {id: p.sorting, python-export: moe_sorting, from: aiter, params: [block_m], param_at: 2}
EOF

case_ "python-export: a functools.partial and a lambda exported by a star import"
scan "$PARTS" parts
expect_rc 0
rule p.gelu status matched
rule p.gelu file aiter/ops/impl.py
caps p.gelu params "['x, w1, w2, topk, *, block_m=…, activation=…']"
rule p.gelu_positional status unmatched
rule p.gelu_positional reason "a call of fused_moe_gelu (functools.partial of fused_moe_impl) with 5 positionals does not bind: it takes at most 4 positional arguments"
rule p.sorting status matched
caps p.sorting param "['num_experts']"
lines p.sorting "[7]"

case_ "python-export: the partial fixture binds as CPython binds it"
if "${PYTHON3:-python3}" -c '' 2>/dev/null; then
	(cd "$PARTS" && "${PYTHON3:-python3}" -c '
import inspect, aiter
print(inspect.signature(aiter.fused_moe_gelu), inspect.signature(aiter.moe_sorting))') >"$TMP/out" 2>&1
	expect_out "(x, w1, w2, topk, *, block_m=64, activation='gelu') (topk_ids, num_experts, block_m=64)"
else
	echo "SKIP [$current]: no python3" >&2
fi

pack no_from <<'EOF'
rules:
  - id: r
    python-export: f
EOF
pack bad_from <<'EOF'
rules:
  - id: r
    python-export: f
    from: a..b
EOF

case_ "refused: python-export without 'from'"
refused no_from "2:5: missing required key 'from' in rule"
case_ "refused: a 'from' that is no module name"
refused bad_from "4:11: 'from' must be a module name (a.b.c), not 'a..b'"
pack bad_name <<'EOF'
rules:
  - id: r
    python-export: a→b
    from: aiter
EOF
case_ "refused: a python-export that is no Python name"
refused bad_name "3:20: 'python-export' must be a name, not 'a→b'"

# `except E as NAME:` unbinds NAME when its handler ends: a def of that
# name before it is no more where the handler runs, unknown where it may.
EXC="$TMP/except-as"
mkdir -p "$EXC/aiter"
: >"$EXC/aiter/__init__.py"
printf 'def f(x): pass\ntry:\n    import zz_not_installed\nexcept ImportError as f:\n    pass\n' \
	>"$EXC/aiter/runs.py"
printf 'def f(x): pass\ntry:\n    x = int("1")\nexcept ValueError as f:\n    pass\n' >"$EXC/aiter/may.py"
printf 'def f(x): pass\ntry:\n    import os\nexcept ImportError as f:\n    pass\n' >"$EXC/aiter/never.py"
pack except_as <<'EOF'
rules:
  - {id: runs, python-export: f, from: aiter.runs}
  - {id: may, python-export: f, from: aiter.may}
  - {id: never, python-export: f, from: aiter.never}
EOF
case_ "python-export: the name of \`except ... as NAME\` is unbound when its handler ends"
scan "$EXC" except_as
expect_rc 0
rule runs reason "aiter.runs does not export f"
rule may reason "what aiter.may binds to f is not known without running it: it is bound differently by the ways the \`try\` at line 2 may run"
rule never status matched

finish
