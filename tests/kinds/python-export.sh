#!/bin/sh
# SPDX-License-Identifier: MIT
# Rule kinds, one by one: a match and a non-match, captures and `collect: all`
# where the kind allows it; every refusal when a pack loads (exit 2, the exact
# file:line:column: message); every run-time failure, which makes the rule an
# error (or leaves it unmatched) in the manifest while the scan goes on and the
# other rules still report; and verify over glob listings and followed imports.
# Packs and trees are written into $TMP here; none of them is AITER code.
. "$AP_SRCDIR/tests/lib.sh"

# pack NAME: the pack $TMP/NAME.yaml, from stdin.
pack() { cat >"$TMP/$1.yaml"; }

# scan TREE PACK: scans TREE with that pack alone, JSON on stdout.
scan() {
	probe scan --aiter-root "$1" --no-launch --no-default-rules --rules "$TMP/$2.yaml" --format json
}

# refused PACK WHERE: loading the pack fails with "PACK:WHERE" (line:column:
# message), exit 2, nothing on stdout.
refused() {
	scan "$TMP/empty" "$1"
	expect_rc 2
	expect_err "aiter-probe: $TMP/$1.yaml:$2"
	expect_no_out
}

# rule ID KEY VALUE: the manifest's rules[ID][KEY] prints as VALUE.
rule() { expect_json "j['rules']['$1']['$2']" "$3"; }

# lines ID: the lines of the rule's matches; caps ID NAME: that capture of each.
lines() { expect_json "[m['line'] for m in j['rules']['$1']['matches']]" "$2"; }
caps() { expect_json "[m['captures'].get('$2') for m in j['rules']['$1']['matches']]" "$3"; }

cap() { expect_json "j['capabilities']['$1']['supported']" "$2"; }
cap_reason() { expect_json "j['capabilities']['$1']['reason']" "$2"; }

mkdir -p "$TMP/empty"

# --- Text kinds: literal, token, regex ---------------------------------------
T="$TMP/text"
mkdir -p "$T/csrc"
cat >"$T/csrc/a.cu" <<'EOF'
// num_heads == 24 in a comment
if (num_heads == 16) {}
if (num_heads==24) { x = "num_heads == 24"; }
if (my_num_heads == 24) {}
MLA_CASE(NUM_HEAD, 24, HEAD_DIM, 512)
MLA_CASE(NUM_HEAD, 128, HEAD_DIM, 64)
EOF
pack text <<'EOF'
rules:
  - id: lit.first
    file: csrc/a.cu
    literal: "num_heads"
  - id: lit.all
    file: csrc/a.cu
    literal: "num_heads"
    collect: all
  - id: lit.none
    file: csrc/a.cu
    literal: "num_heads == 32"
  - id: tok.first
    file: csrc/a.cu
    token: "num_heads == 24"
  - id: tok.all
    file: [csrc/nope.cu, csrc/a.cu]
    token: "num_heads == 24"
    collect: all
  - id: tok.none
    file: csrc/a.cu
    token: "num_heads == 32"
  - id: re.caps
    file: csrc/a.cu
    regex: 'MLA_CASE\(\w+, (?<heads>\d+), \w+, (?<dim>\d+)\)'
    collect: all
  - id: re.none
    file: csrc/a.cu
    regex: 'MLA_CASE\(\w+, 24, \w+, 128\)'
EOF

case_ "literal: first match, every match (strings are text, comments are not), no match"
scan "$T" text
expect_rc 0
rule lit.first status matched
lines lit.first "[2]"
lines lit.all "[2, 3, 3, 4]"
rule lit.none status unmatched
rule lit.none file csrc/a.cu

case_ "token: spacing does not matter, a longer identifier or a string is no match"
lines tok.first "[3]"
lines tok.all "[3]"
rule tok.all file csrc/a.cu
rule tok.none status unmatched

case_ "regex: named groups are captures, collect: all"
lines re.caps "[5, 6]"
caps re.caps heads "['24', '128']"
caps re.caps dim "['512', '64']"
rule re.none status unmatched

# --- python-def --------------------------------------------------------------
P="$TMP/py"
mkdir -p "$P/aiter/ops"
cat >"$P/aiter/mla.py" <<'EOF'
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
EOF
printf 'def f():\n    pass\n' >"$P/aiter/ops/old.py"

case_ "python-def: the def behind a decorator with arguments, params, binds, param_at"
scan "$P" pydef
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

case_ "python-def: no such def; one name per file alternative; every file absent"
rule def.none status unmatched
rule def.none reason "no def mla_prefill_fwd in aiter/mla.py"
rule def.alternatives status matched
rule def.alternatives file aiter/mla.py
rule def.missing status missing
rule def.missing reason "none of the files exists: aiter/nope.py, aiter/nope2.py"

# --- python-export -----------------------------------------------------------
E="$TMP/export"
mkdir -p "$E/aiter/ops" "$E/aiter/jit"
printf 'from . import gradlib\n' >"$E/aiter/ops/__init__.py"
cat >"$E/aiter/__init__.py" <<'EOF'
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
cat >"$E/aiter/ops/gemm.py" <<'EOF'
__all__ = ["gemm_a8w8"]


def gemm_a8w8(a, b):
    return a


def hipb_mm(a, b):
    return a
EOF
cat >"$E/aiter/ops/gradlib.py" <<'EOF'
def hipb_mm(a, b, solution_index, bias=None):
    return a


def _private(a):
    return a
EOF
cat >"$E/aiter/ops/moe.py" <<'EOF'
def _topk_softmax_impl(w, idx, gating, renorm, num_shared_experts=0):
    return w


topk_softmax = _topk_softmax_impl


class Router:
    pass
EOF
for m in triton aot comms; do
	printf 'def %s(x):\n    return x\n' "$(case $m in triton) echo triton_only_op ;; aot) echo aot_only_op ;; comms) echo all_reduce_fused ;; esac)" >"$E/aiter/ops/$m.py"
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
EOF

case_ "python-export: a star import whose __all__ leaves the name out, then a module without __all__"
scan "$E" export
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
rule ex.unknown_condition status matched
rule ex.unknown_condition file aiter/ops/aot.py

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
mkdir "$E/aiter/ops/gradlib"
printf 'def hipb_mm(a, b):\n    return a\n' >"$E/aiter/ops/gradlib/__init__.py"
scan "$E" export
expect_rc 0
rule ex.star_all status unmatched
rule ex.star_all file aiter/ops/gradlib/__init__.py
rule ex.star_all reason "hipb_mm has no parameter 'solution_index'"
expect_json "[i['path'] for i in j['inputs']].count('aiter/ops/gradlib.py')" 0
rm -r "$E/aiter/ops/gradlib"

# --- python-string -----------------------------------------------------------
cat >"$P/aiter/fused_moe.py" <<'EOF'
"""Module docstring: AITER_SITUV2_A4W4 here is no code."""
import os

# AITER_SITUV2_A4W4 in a comment
_SITUV2 = os.environ.get("AITER_SITUV2_A4W4", "0") == "1"


def fused_moe(x):
    """AITER_SITUV2_A4W4 in a docstring."""
    return os.getenv('AITER_SITUV2_A4W4') or x
EOF
pack pystring <<'EOF'
rules:
  - id: str.first
    file: aiter/fused_moe.py
    python-string: AITER_SITUV2_A4W4
  - id: str.all
    file: aiter/fused_moe.py
    python-string: SITUV2
    collect: all
  - id: str.none
    file: aiter/fused_moe.py
    python-string: AITER_SITUV3
  - id: str.docstring_only
    file: aiter/mla.py
    python-string: AITER_SITUV2_A4W4
EOF

case_ "python-string: string literals in code, not comments or docstrings"
scan "$P" pystring
expect_rc 0
rule str.first status matched
lines str.first "[5]"
lines str.all "[5, 10]"
rule str.none status unmatched
rule str.docstring_only status unmatched

# --- python-bound ------------------------------------------------------------
G="$TMP/gluon"
mkdir -p "$G/aiter/ops/triton/gluon"
cat >"$G/aiter/ops/triton/gluon/mla_decode_gluon.py" <<'EOF'
def _helper(nhead):
    return nhead <= 512


def mla_decode_gluon(q, o, nhead=None):
    # nhead <= 256 in a comment
    text = "nhead <= 1024"
    if nhead in (64, 128):
        return o
    elif 1 <= nhead <= 48:
        return o
    assert 16 > nhead or nhead == 64
    return o


def unbounded(nhead):
    return nhead + 1
EOF
pack pybound <<'EOF'
rules:
  - id: bound.alternatives
    file:
      - aiter/ops/triton/gluon/mla_gluon.py
      - aiter/ops/triton/gluon/mla_decode_gluon.py
    python-bound: nhead
    def: [mla_gluon, mla_decode_gluon]
    capture: heads
  - id: bound.default_capture
    file: aiter/ops/triton/gluon/mla_decode_gluon.py
    python-bound: nhead
    def: mla_decode_gluon
  - id: bound.zero
    file: aiter/ops/triton/gluon/mla_decode_gluon.py
    python-bound: nhead
    def: unbounded
  - id: bound.nodef
    file: aiter/ops/triton/gluon/mla_decode_gluon.py
    python-bound: nhead
    def: mla_gluon
  - id: bound.nofile
    file: aiter/ops/triton/gluon/mla_gluon.py
    python-bound: nhead
    def: mla_gluon
probes:
  - id: small_heads
    requires: {capture: bound.alternatives, name: heads, ge: 15}
  - id: many_heads
    requires: {capture: bound.alternatives, name: heads, ge: 64}
  - id: named_wrong
    requires: {capture: bound.alternatives, name: bound, ge: 1}
  - id: text_eq
    requires: {capture: bound.default_capture, name: bound, eq: "48"}
  - id: not_of_no_capture
    requires: {not: {capture: bound.nodef, name: bound, lt: 100}}
  - id: unknown_stays
    requires: {not: {capture: bound.nofile, name: bound, lt: 100}}
EOF

case_ "python-bound: 'in (...)' is no bound, '1 <= nhead <= 48' is; comments and strings never count"
scan "$G" pybound
expect_rc 0
rule bound.alternatives status matched
rule bound.alternatives file aiter/ops/triton/gluon/mla_decode_gluon.py
lines bound.alternatives "[10]"
caps bound.alternatives heads "['48']"
caps bound.default_capture bound "['48']"

case_ "python-bound: no comparison gives 0 at the def; no def is unmatched"
lines bound.zero "[16]"
caps bound.zero bound "['0']"
rule bound.nodef status unmatched
rule bound.nodef reason "no def mla_gluon in aiter/ops/triton/gluon/mla_decode_gluon.py"

case_ "capture comparisons in requires"
cap small_heads True
cap_reason small_heads "rule bound.alternatives has heads >= 15"
expect_json "j['capabilities']['small_heads']['evidence']" "['aiter/ops/triton/gluon/mla_decode_gluon.py:10']"
cap many_heads False
cap_reason many_heads "rule bound.alternatives has no heads >= 64 (it has 48)"
cap named_wrong False
cap_reason named_wrong "rule bound.alternatives captured no bound"
cap text_eq True
cap not_of_no_capture True
cap_reason not_of_no_capture "not (rule bound.nodef did not match: no def mla_gluon in aiter/ops/triton/gluon/mla_decode_gluon.py)"
rule bound.nofile status missing
cap unknown_stays False
cap_reason unknown_stays "unknown, so unsupported: not (rule bound.nofile: no such file: aiter/ops/triton/gluon/mla_gluon.py)"

# --- csv ---------------------------------------------------------------------
C="$TMP/csv"
mkdir -p "$C/hsa/gfx950/mla" "$C/hsa/gfx942/mla"
# CRLF, a UTF-8 BOM, quoted fields (a comma and a line end inside quotes, a
# doubled quote), no causal column.
printf '\357\273\277qType,kvType,Gqa,ps,qSeqLen,prefill,lse,"knl_name"\r\nbf16,bf16,16,1,1,0,1,"k, q1"\r\n"bf16",bf16,16,1,"2",0,1,k2\r\nbf16,bf16,128,1,4,0,1,"k ""wide""\r\nsecond line"\r\nbf16,bf16,16.0,1,8,0,1,k8\r\nbf16,bf16,16,1,4,0,0,k4\r\n' >"$C/hsa/gfx950/mla/mla_asm.csv"
printf 'qType,kvType,Gqa,ps,qSeqLen,prefill,causal,knl_name\nbf16,bf16,16,1,1,0,1,k1\n' >"$C/hsa/gfx942/mla/mla_asm.csv"
printf 'a,b\n1,"x\n2,3\n' >"$C/hsa/unterminated.csv"
pack csv <<'EOF'
rules:
  - id: csv.all
    file: hsa/gfx950/mla/mla_asm.csv
    csv:
      where:
        qType: bf16
        Gqa: 16
        causal: {eq: 1, missing: 1}
        ps: {in: [1]}
        lse: {ne: 0}
        qSeqLen: {ge: 1}
      capture: {qlen: qSeqLen, kernel: knl_name}
    collect: all
  - id: csv.first
    file: hsa/gfx950/mla/mla_asm.csv
    csv:
      where: {Gqa: {gt: 15.5}, qSeqLen: {lt: 8}}
      capture: {qlen: qSeqLen}
  - id: csv.none
    file: hsa/gfx950/mla/mla_asm.csv
    csv: {where: {qType: fp8}}
  - id: csv.text_ge
    file: hsa/gfx950/mla/mla_asm.csv
    csv: {where: {qType: {ge: 1}}}
  - id: csv.no_where_column
    file: hsa/gfx942/mla/mla_asm.csv
    csv: {where: {ps: 1, lse: 1}}
  - id: csv.no_capture_column
    file: hsa/gfx942/mla/mla_asm.csv
    csv: {where: {ps: 1}, capture: {qlen: qlen}}
  - id: csv.missing_default_fails
    file: hsa/gfx942/mla/mla_asm.csv
    csv: {where: {lse: {eq: 1, missing: 0}}}
  - id: csv.unterminated
    file: hsa/unterminated.csv
    csv: {where: {a: 1}}
  - id: csv.every_row
    file: hsa/gfx942/mla/mla_asm.csv
    csv: {}
probes:
  - id: q4
    requires: {capture: csv.all, name: qlen, eq: 4}
  - id: q8
    requires: {capture: csv.all, name: qlen, eq: 8}
  - id: lse942
    requires: csv.no_where_column
EOF

case_ "csv: BOM, CRLF, quoted fields, a missing column read as its default"
scan "$C" csv
expect_rc 0
rule csv.all status matched
lines csv.all "[2, 3, 6]"
caps csv.all qlen "['1', '2', '8']"
caps csv.all kernel "['k, q1', 'k2', 'k8']"
lines csv.first "[2]"
rule csv.none status unmatched
rule csv.text_ge status unmatched
lines csv.every_row "[2]"

case_ "csv: capture comparisons over rows"
cap q4 False
cap_reason q4 "rule csv.all has no qlen == 4 (it has 8)"
cap q8 True

case_ "csv: a table without a named column is an error, the scan goes on"
rule csv.no_where_column status error
rule csv.no_where_column reason "the table has no column 'lse' (named in 'where'; its columns: qType, kvType, Gqa, ps, qSeqLen, prefill, causal, knl_name)"
rule csv.no_capture_column reason "the table has no column 'qlen' (named in 'capture'; its columns: qType, kvType, Gqa, ps, qSeqLen, prefill, causal, knl_name)"
rule csv.missing_default_fails status unmatched
cap lse942 False
cap_reason lse942 "unknown, so unsupported: rule csv.no_where_column could not be checked: hsa/gfx942/mla/mla_asm.csv: the table has no column 'lse' (named in 'where'; its columns: qType, kvType, Gqa, ps, qSeqLen, prefill, causal, knl_name)"

case_ "csv: an unterminated quote is an error naming its line"
rule csv.unterminated status error
rule csv.unterminated reason "line 2: unterminated quoted field"
rule csv.unterminated file hsa/unterminated.csv

# --- glob ----------------------------------------------------------------------
L="$TMP/glob"
mkdir -p "$L/aiter/configs/model_configs/deep" "$TMP/outside"
echo 'token,kernelName1' >"$L/aiter/configs/kimik3_a4w4_tuned_fmoe.csv"
echo 'token,kernelName1' >"$L/aiter/configs/model_configs/deep/kimik3_a4w4_tuned_fmoe.csv"
echo 'token,kernelName1' >"$L/aiter/configs/model_configs/a8w8_tuned_gemm.csv"
echo 'token,kernelName1' >"$TMP/outside/outside_tuned_fmoe.csv"
ln -s "$TMP/outside" "$L/aiter/configs/linked"
ln -s "$TMP/outside/outside_tuned_fmoe.csv" "$L/aiter/configs/model_configs/link_tuned_fmoe.csv"
pack glob <<'EOF'
rules:
  - id: glob.any_depth
    glob: aiter/configs/**/kimik3_a4w4_tuned_fmoe.csv
    collect: all
  - id: glob.first
    glob: aiter/configs/**/*_tuned_*.csv
  - id: glob.list
    glob: [aiter/nope/*.csv, "aiter/configs/model_configs/a?w[0-9]_*.csv"]
    collect: all
  - id: glob.none
    glob: aiter/configs/**/kimik4_*.csv
  - id: glob.through_symlink_star
    glob: aiter/configs/*/outside_tuned_fmoe.csv
  - id: glob.through_symlink_any
    glob: aiter/configs/**/*_fmoe.csv
    collect: all
  - id: glob.through_symlink_literal
    glob: aiter/configs/linked/*.csv
  - id: glob.still_reports
    glob: aiter/configs/*.csv
EOF

case_ "glob: ** spans any depth (zero included); sets and ?; a list of patterns"
scan "$L" glob
expect_rc 0
rule glob.any_depth status matched
caps glob.any_depth path "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv', 'aiter/configs/model_configs/deep/kimik3_a4w4_tuned_fmoe.csv']"
rule glob.any_depth file aiter/configs/kimik3_a4w4_tuned_fmoe.csv
caps glob.first path "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv']"
caps glob.list path "['aiter/configs/model_configs/a8w8_tuned_gemm.csv']"
rule glob.none status unmatched

case_ "glob: a symlink is not followed, nothing outside the root is read or listed"
rule glob.through_symlink_star status unmatched
rule glob.through_symlink_any status matched
caps glob.through_symlink_any path "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv', 'aiter/configs/model_configs/deep/kimik3_a4w4_tuned_fmoe.csv']"
rule glob.through_symlink_literal status error
rule glob.through_symlink_literal reason "aiter/configs/linked/: not a folder, or a symlink (a listing follows none)"
rule glob.still_reports status matched
expect_json "[i['path'] for i in j['inputs'] if 'outside' in i['path'] or i['path'].startswith('/') or '..' in i['path']]" "[]"
expect_json "[i['path'] for i in j['inputs'] if 'linked' in i['path']]" "['aiter/configs/linked/']"
expect_json "[i['sha256'] for i in j['inputs'] if i['path'] == 'aiter/configs/linked/']" "[None]"

case_ "glob: ** goes through no hidden folder (as src/engine/lang/glob-pattern.h says)"
mkdir -p "$L/aiter/configs/.hidden"
echo 'token,kernelName1' >"$L/aiter/configs/.hidden/kimik3_a4w4_tuned_fmoe.csv"
echo 'token,kernelName1' >"$L/aiter/configs/.kimik3_a4w4_tuned_fmoe.csv"
scan "$L" glob
expect_rc 0
expect_json "[m['captures']['path'] for m in j['rules']['glob.first']['matches']]" "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv']"
expect_json "[m['captures']['path'] for m in j['rules']['glob.any_depth']['matches']]" "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv', 'aiter/configs/model_configs/deep/kimik3_a4w4_tuned_fmoe.csv']"
rule glob.still_reports status matched
caps glob.still_reports path "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv']"

# --- version -------------------------------------------------------------------
V="$TMP/version"
mkdir -p "$V/aiter"
pack version <<'EOF'
rules:
  - id: ver.ge20
    version: ">=0.1.20"
  - id: ver.ge9
    version: ">=0.1.9"
  - id: ver.dev_allowed
    version: ">=0.1.10.dev1"
EOF

case_ "version: a post-release in a range"
printf "# file generated by setuptools-scm\n__version__ = version = '0.1.20.post1'\n__version_tuple__ = version_tuple = (0, 1, 20, 'post1')\n" >"$V/aiter/_version.py"
scan "$V" version
expect_rc 0
rule ver.ge20 status matched
lines ver.ge20 "[2]"
caps ver.ge20 version "['0.1.20.post1']"
expect_json "j['aiter']['version']" "0.1.20.post1"

case_ "version: a dev release is a pre-release, outside >=0.1.9 unless the range names one"
printf "__version__ = version = '0.1.10.dev3+gabc'\n" >"$V/aiter/_version.py"
scan "$V" version
expect_rc 0
rule ver.ge9 status unmatched
rule ver.ge9 reason "version 0.1.10.dev3+gabc is outside >=0.1.9"
rule ver.ge20 reason "version 0.1.10.dev3+gabc is outside >=0.1.20"
rule ver.dev_allowed status matched

case_ "version: the annotated layout of newer setuptools-scm"
printf 'TYPE_CHECKING = False\nversion: str\n__version__: str\n__version_tuple__: VERSION_TUPLE\nversion_tuple: VERSION_TUPLE\n\n__version__ = version = "0.1.21"\n' >"$V/aiter/_version.py"
scan "$V" version
expect_rc 0
lines ver.ge20 "[7]"
caps ver.ge20 version "['0.1.21']"

case_ "version: a file stating none is an error, one that is no PEP 440 version too"
printf '# version unknown\nVERSION_TUPLE = (0, 1)\n' >"$V/aiter/_version.py"
scan "$V" version
expect_rc 0
rule ver.ge20 status error
rule ver.ge20 reason "aiter/_version.py states no version"
printf "__version__ = 'nightly'\n" >"$V/aiter/_version.py"
scan "$V" version
rule ver.ge20 status error
rule ver.ge20 reason "version 'nightly' is not a PEP 440 version"

case_ "version: no file"
rm "$V/aiter/_version.py"
scan "$V" version
expect_rc 0
rule ver.ge20 status missing
rule ver.ge20 reason "no such file: aiter/_version.py"

# --- Run-time errors: the rule is an error, the scan goes on -----------------
B="$TMP/broken"
mkdir -p "$B/aiter/ops" "$B/hsa"
printf 'def ok():\n    pass\n  x = 1\n' >"$B/aiter/broken.py"
printf 'from .broken import ok\nfrom .ops.fine import *\n' >"$B/aiter/__init__.py"
printf 'def fine(a):\n    return a\n' >"$B/aiter/ops/fine.py"
pack broken <<'EOF'
rules:
  - id: br.def
    file: aiter/broken.py
    python-def: ok
  - id: br.string
    file: aiter/broken.py
    python-string: x
  - id: br.bound
    file: aiter/broken.py
    python-bound: n
    def: ok
  - id: br.export
    python-export: ok
    from: aiter
  - id: br.export_other
    python-export: fine
    from: aiter
  - id: br.still_reports
    file: aiter/ops/fine.py
    python-def: fine
probes:
  - id: p
    requires: br.def
EOF

case_ "an unparsable Python file: an error naming the line, the other rules still report"
scan "$B" broken
expect_rc 0
for id in br.def br.string br.bound; do
	rule $id status error
	rule $id file aiter/broken.py
	rule $id reason "line 3: unindent does not match any outer indentation level"
done
rule br.export status error
rule br.export reason "aiter/broken.py: line 3: unindent does not match any outer indentation level"
rule br.still_reports status matched
rule br.export file None
cap p False
cap_reason p "unknown, so unsupported: rule br.def could not be checked: aiter/broken.py: line 3: unindent does not match any outer indentation level"

case_ "a capability over an error with no file names no '(null)' file"
printf 'probes:\n  - id: q\n    requires: br.export\n' >"$TMP/broken-probe.yaml"
probe scan --aiter-root "$B" --no-launch --no-default-rules --rules "$TMP/broken.yaml" \
	--rules "$TMP/broken-probe.yaml" --format json
expect_rc 0
cap q False
expect_json "'(null)' in j['capabilities']['q']['reason']" False

case_ "an unparsable module reached by a star import is unknown, not 'not exported'"
printf 'from .broken import *\n' >"$B/aiter/__init__.py"
pack broken_star <<'EOF'
rules:
  - id: br.star
    python-export: ok
    from: aiter
probes:
  - id: not_exported
    requires: {not: br.star}
EOF
scan "$B" broken_star
expect_rc 0
expect_json "j['rules']['br.star']['status']" error
expect_json "j['capabilities']['not_exported']['supported']" False

case_ "a capability over a rule that found no file names no '(null)' file"
printf 'probes:\n  - id: p\n    requires: ex.except_only\n' >"$TMP/export-probe.yaml"
probe scan --aiter-root "$E" --no-launch --no-default-rules --rules "$TMP/export.yaml" \
	--rules "$TMP/export-probe.yaml" --format json
expect_rc 0
cap p False
cap_reason p "rule ex.except_only did not match: aiter does not export handler_only_op"
printf 'probes:\n  - id: p\n    requires: glob.none\n' >"$TMP/glob-probe.yaml"
probe scan --aiter-root "$L" --no-launch --no-default-rules --rules "$TMP/glob.yaml" \
	--rules "$TMP/glob-probe.yaml" --format json
expect_rc 0
cap p False
expect_json "'(null)' in j['capabilities']['p']['reason']" False

# --- Load-time refusals: exit 2, file:line:column: message --------------------
pack bad_op <<'EOF'
rules:
  - id: r
    file: a.csv
    csv:
      where: {ps: {eqq: 1}}
EOF
pack two_ops <<'EOF'
rules:
  - id: r
    file: a.csv
    csv:
      where: {ps: {eq: 1, ne: 2}}
EOF
pack lt_text <<'EOF'
rules:
  - id: r
    file: a.csv
    csv:
      where: {ps: {lt: abc}}
EOF
pack in_empty <<'EOF'
rules:
  - id: r
    file: a.csv
    csv:
      where: {ps: {in: []}}
EOF
pack no_op <<'EOF'
rules:
  - id: r
    file: a.csv
    csv:
      where: {ps: {missing: 1}}
EOF
pack csv_seq <<'EOF'
rules:
  - id: r
    file: a.csv
    csv: [ps]
EOF
pack csv_key <<'EOF'
rules:
  - id: r
    file: a.csv
    csv: {where: {ps: 1}, capturee: {q: qSeqLen}}
EOF
pack def_names <<'EOF'
rules:
  - id: r
    file: [a.py, b.py, c.py]
    python-def: [f, g]
EOF
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
pack no_def <<'EOF'
rules:
  - id: r
    file: a.py
    python-bound: nhead
EOF
pack glob_empty_seg <<'EOF'
rules:
  - id: r
    glob: a//b
EOF
pack glob_abs <<'EOF'
rules:
  - id: r
    glob: /abs
EOF
pack glob_stars <<'EOF'
rules:
  - id: r
    glob: [ok/*.py, "a**b"]
EOF
pack bad_spec <<'EOF'
rules:
  - id: r
    version: ">=0.1, <<2"
EOF
pack spec_no_op <<'EOF'
rules:
  - id: r
    version: "0.1.20"
EOF
pack glob_file <<'EOF'
rules:
  - id: r
    file: a.py
    glob: "a/*.py"
EOF
pack def_collect <<'EOF'
rules:
  - id: r
    file: a.py
    python-def: f
    collect: all
EOF
pack export_file <<'EOF'
rules:
  - id: r
    file: aiter/__init__.py
    python-export: f
    from: aiter
EOF
pack export_collect <<'EOF'
rules:
  - id: r
    python-export: f
    from: aiter
    collect: all
EOF
pack version_file <<'EOF'
rules:
  - id: r
    file: aiter/_version.py
    version: ">=1"
EOF
pack bound_normalize <<'EOF'
rules:
  - id: r
    file: a.py
    python-bound: n
    def: f
    normalize: strip-whitespace
EOF
pack csv_language <<'EOF'
rules:
  - id: r
    file: a.csv
    language: c
    csv: {where: {ps: 1}}
EOF
pack cmp_two_ops <<'EOF'
rules:
  - id: r
    file: a.py
    regex: "(?<n>\\d+)"
probes:
  - id: p
    requires: {capture: r, name: n, ge: 1, le: 3}
EOF
pack cmp_ge_text <<'EOF'
rules:
  - id: r
    file: a.py
    regex: "(?<n>\\d+)"
probes:
  - id: p
    requires: {capture: r, name: n, ge: text}
EOF
pack cmp_probe <<'EOF'
rules:
  - id: r
    file: a.py
    regex: "(?<n>\\d+)"
probes:
  - id: q
    requires: r
  - id: p
    requires: {all: [r, {capture: q, name: n, eq: 1}]}
EOF
pack cmp_unknown <<'EOF'
rules:
  - id: r
    file: a.py
    regex: "(?<n>\\d+)"
probes:
  - id: p
    requires: {capture: nope, name: n, eq: 1}
EOF

case_ "refused: a 'where' operator that is none of eq/ne/lt/le/gt/ge/in"
refused bad_op "5:20: unknown key 'eqq' in a 'where' condition (allowed: eq, ne, lt, le, gt, ge, in, missing)"
case_ "refused: two operators in one 'where' condition"
refused two_ops "5:27: both 'eq' and 'ne' given: a 'where' condition has one operator"
case_ "refused: 'lt' with a non-number"
refused lt_text "5:24: 'lt' compares numbers, and 'abc' is not one"
case_ "refused: 'in' empty"
refused in_empty "5:24: 'in' must be a non-empty sequence of values"
case_ "refused: a 'where' condition without an operator"
refused no_op "5:19: a 'where' condition needs one of 'eq', 'ne', 'lt', 'le', 'gt', 'ge' or 'in'"
case_ "refused: 'csv' not a mapping"
refused csv_seq "4:10: 'csv' must be a mapping, not a sequence"
case_ "refused: an unknown key in 'csv'"
refused csv_key "4:27: unknown key 'capturee' in 'csv' (allowed: where, capture)"
case_ "refused: python-def with 2 names for 3 files"
refused def_names "4:17: 'python-def' lists 2 names for 3 files: give one name, or one per file"
case_ "refused: python-export without 'from'"
refused no_from "2:5: missing required key 'from' in rule"
case_ "refused: a 'from' that is no module name"
refused bad_from "4:11: 'from' must be a module name (a.b.c), not 'a..b'"
case_ "refused: python-bound without 'def'"
refused no_def "2:5: missing required key 'def' in rule"
case_ "refused: invalid globs"
refused glob_empty_seg "3:13: invalid glob: invalid glob pattern at offset 2: empty segment"
refused glob_abs "3:11: invalid glob: invalid glob pattern at offset 0: absolute pattern"
refused glob_stars "3:23: invalid glob: invalid glob pattern at offset 1: '**' must be a whole segment"
case_ "refused: invalid version specifiers"
refused bad_spec "3:23: invalid version specifier at offset 8: expected a version"
refused spec_no_op "3:15: invalid version specifier at offset 0: expected an operator"
case_ "refused: 'file' on a glob rule"
refused glob_file "3:5: 'file' does not apply to a 'glob' rule: it names no file"
case_ "refused: 'collect' on a python-def rule"
refused def_collect "5:5: 'collect' does not apply to a 'python-def' rule: it reports one answer"
case_ "refused: 'file' and 'collect' where a kind takes none"
refused export_file "3:5: 'file' does not apply to a 'python-export' rule: it names no file"
refused export_collect "5:5: 'collect' does not apply to a 'python-export' rule: it reports one answer"
refused version_file "3:5: 'file' does not apply to a 'version' rule: it names no file"
refused bound_normalize "6:5: 'normalize' does not apply to a 'python-bound' rule: it does not match text"
case_ "refused: 'language' on a csv rule"
refused csv_language "4:5: 'language' does not apply to a 'csv' rule: it does not match text"
case_ "refused: a capture comparison with two operators"
refused cmp_two_ops "7:44: both 'ge' and 'le' given: a capture comparison has exactly one operator (combine comparisons with 'all')"
case_ "refused: 'ge' with text"
refused cmp_ge_text "7:41: 'ge' compares numbers: it needs an integer, not text"
case_ "refused when the packs are finished: a capture comparison naming a probe"
refused cmp_probe "9:25: 'capture' must name a rule, and 'q' is a probe"
case_ "refused when the packs are finished: a capture comparison naming an unknown rule"
refused cmp_unknown "7:15: unknown rule or probe 'nope'"

# --- verify: glob listings and followed imports --------------------------------
W="$TMP/verify"
mkdir -p "$W/aiter/configs/a" "$W/aiter/ops"
echo 'token' >"$W/aiter/configs/a/one_tuned.csv"
printf 'from .ops.impl import *\n' >"$W/aiter/__init__.py"
printf 'def f(a, b):\n    return a\n' >"$W/aiter/ops/impl.py"
pack verify <<'EOF'
rules:
  - id: g
    glob: aiter/configs/**/*_tuned.csv
    collect: all
  - id: e
    python-export: f
    from: aiter
    params: [b]
EOF
probe scan --aiter-root "$W" --no-launch --no-default-rules --rules "$TMP/verify.yaml" -o "$TMP/w.json"

case_ "verify: a manifest with a glob rule is fresh"
expect_rc 0
probe verify "$TMP/w.json"
expect_rc 0
expect_out "$TMP/w.json: fresh (7 inputs under $W)"

case_ "verify: a file matching the pattern added in a listed folder makes it stale"
echo 'token' >"$W/aiter/configs/a/two_tuned.csv"
probe verify "$TMP/w.json"
expect_rc 1
expect_out "$TMP/w.json: stale (1 of 7 inputs differ under $W)
  changed  aiter/configs/a/"
rm "$W/aiter/configs/a/two_tuned.csv"
probe verify "$TMP/w.json"
expect_rc 0

case_ "verify: a new folder where ** looks makes it stale"
mkdir "$W/aiter/configs/b"
probe verify "$TMP/w.json"
expect_rc 1
expect_out "$TMP/w.json: stale (1 of 7 inputs differ under $W)
  changed  aiter/configs/"
rmdir "$W/aiter/configs/b"

case_ "verify: the module a star import leads to changes"
printf 'def f(a):\n    return a\n' >"$W/aiter/ops/impl.py"
probe verify "$TMP/w.json"
expect_rc 1
expect_out "$TMP/w.json: stale (1 of 7 inputs differ under $W)
  changed  aiter/ops/impl.py"

case_ "verify: a module beside its package is not on the import path"
printf 'def f(a, b):\n    return a\n' >"$W/aiter/ops/impl.py"
probe verify "$TMP/w.json"
expect_rc 0
# Python's finder takes the package aiter/ before aiter.py.
echo 'f = None' >"$W/aiter.py"
probe verify "$TMP/w.json"
expect_rc 0
expect_out "$TMP/w.json: fresh (7 inputs under $W)"
rm "$W/aiter.py"

case_ "verify: a package recorded absent on the import path appears"
mkdir "$W/aiter/ops/impl"
echo 'f = None' >"$W/aiter/ops/impl/__init__.py"
probe verify "$TMP/w.json"
expect_rc 1
expect_out "$TMP/w.json: stale (1 of 7 inputs differ under $W)
  appeared aiter/ops/impl/__init__.py"

finish
