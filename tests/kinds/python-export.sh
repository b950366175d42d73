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
rule ex.except_only file None

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

finish
