#!/bin/sh
# SPDX-License-Identifier: MIT
# python-bound: the upper bound a def's body puts on a name, captured as a
# number, and comparisons of that capture in a probe's requires; and what
# its loader refuses.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/gluon"
mkdir -p "$TREE/aiter/ops/triton/gluon"
cat >"$TREE/aiter/ops/triton/gluon/mla_decode_gluon.py" <<'EOF'
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
scan "$TREE" pybound
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

# A parameter spelt otherwise in the body (NFKC, as CPython binds both) is
# the same name, and so is the rule's.
cat >"$TREE/aiter/uni.py" <<'EOF'
def ｄecode(ｎhead):
    assert nhead <= 96
    return nhead
EOF
pack pyuni <<'EOF'
rules:
  - id: uni.bound
    file: aiter/uni.py
    python-bound: ｎhead
    def: decode
EOF

case_ "python-bound: names NFKC-normalized as CPython binds them, in the source and in the rule"
scan "$TREE" pyuni
expect_rc 0
rule uni.bound status matched
lines uni.bound "[2]"
caps uni.bound bound "['96']"

# The path a call runs: parentheses, other scopes, dead arms, and an arm
# chosen by module state that the reader cannot decide.
PATHS="$TMP/paths"
mkdir -p "$PATHS/aiter"
cat >"$PATHS/aiter/heads.py" <<'EOF'
from typing import TYPE_CHECKING

USE_WIDE = read_env()


def parenthesised(nhead):
    assert (nhead) <= (128)


def other_scopes(q):
    _, nhead = q.shape
    check = lambda nhead: nhead <= 4096
    wide = [h for h in range(9) if nhead <= 2048]

    def helper():
        return nhead <= 1024

    if TYPE_CHECKING:
        assert nhead <= 512
    if nhead in (64, 128):
        return q
        assert nhead <= 256
    elif 1 <= nhead <= 96:
        return q
    raise AssertionError(nhead)


def by_module_state(nhead):
    if USE_WIDE:
        assert nhead <= 128
    else:
        assert nhead <= 16


def past_64_bits(nhead):
    assert nhead <= 0x1_0000_0000_0000_0000


as_lambda = lambda q, nhead: nhead <= 8 or q
EOF
pack paths <<'EOF'
rules:
  - id: b.parens
    file: aiter/heads.py
    python-bound: nhead
    def: parenthesised
  - id: b.scopes
    file: aiter/heads.py
    python-bound: nhead
    def: other_scopes
  - id: b.module_state
    file: aiter/heads.py
    python-bound: nhead
    def: by_module_state
  - id: b.module_state_false
    file: aiter/heads.py
    python-bound: nhead
    def: by_module_state
    assume_false: [USE_WIDE]
  - id: b.huge
    file: aiter/heads.py
    python-bound: nhead
    def: past_64_bits
  - id: b.lambda
    file: aiter/heads.py
    python-bound: nhead
    def: as_lambda
probes:
  - id: wide_heads
    requires: {capture: b.module_state, name: bound, ge: 15}
EOF

case_ "python-bound: parentheses, nested scopes and dead arms do not count; module state makes it unknown"
scan "$PATHS" paths
expect_rc 0
caps b.parens bound "['128']"
lines b.scopes "[23]"
caps b.scopes bound "['96']"
rule b.module_state status unknown
rule b.module_state reason "by_module_state: whether \`nhead <= 128\` (line 30) runs depends on \`USE_WIDE\` at line 29, the same on every call, which the reader cannot decide"
expect_json "j['rules']['b.module_state']['matches']" "[]"
caps b.module_state_false bound "['16']"
caps b.huge bound "['18446744073709551616']"
lines b.huge "[36]"
rule b.lambda status unknown
rule b.lambda reason "as_lambda: it is a lambda (line 39), whose body is not read"
cap wide_heads False
cap_reason wide_heads "unknown, so unsupported: rule b.module_state is unknown: aiter/heads.py: by_module_state: whether \`nhead <= 128\` (line 30) runs depends on \`USE_WIDE\` at line 29, the same on every call, which the reader cannot decide"

# The guards CPython enforces, in every form: a comparison bounds the name
# only where a way past it rejects values.
GUARDS="$TMP/guards"
mkdir -p "$GUARDS/aiter"
cat >"$GUARDS/aiter/guards.py" <<'EOF'
def raise_gt(q, nhead):
    if nhead > 96:
        raise ValueError("too many heads")
    return q


def raise_ge(q, nhead):
    if (nhead) >= 97:
        raise ValueError


def raise_not(q, nhead):
    if not nhead <= 96:
        raise ValueError


def elif_guard(q, nhead):
    if nhead in (1, 2):
        pass
    elif nhead > 96:
        raise ValueError
    return q


def return_guard(q, nhead):
    if nhead <= 96:
        return q
    raise ValueError


def no_reject(q, nhead):
    if nhead <= 96:
        q = q * 2
    return q


def least(q, nhead):
    assert nhead <= 512
    assert nhead < 97


def huge(q, nhead):
    if nhead > 100000000000000000000:
        raise OverflowError


def opaque(q, nhead):
    assert nhead <= MAX_HEADS


def call(q, nhead):
    torch._assert(nhead <= 96, "heads")


def per_call(q, nhead, kv):
    if kv.dtype == "fp8":
        assert nhead <= 16
EOF
{
	echo "rules:"
	for d in raise_gt raise_ge raise_not elif_guard return_guard no_reject least huge opaque call \
		per_call; do
		printf '  - id: g.%s\n    file: aiter/guards.py\n    python-bound: nhead\n    def: %s\n' \
			"$d" "$d"
	done
	cat <<'EOF'
probes:
  - id: huge_ge
    requires: {capture: g.huge, name: bound, ge: 15}
  - id: huge_lt
    requires: {capture: g.huge, name: bound, lt: 100}
EOF
} | pack guards

case_ "python-bound: a raise under a comparison, in an elif, after a return guard; no bound where nothing rejects"
scan "$GUARDS" guards
expect_rc 0
for d in raise_gt raise_ge raise_not elif_guard return_guard least; do
	caps "g.$d" bound "['96']"
done
lines g.raise_gt "[2]"
lines g.raise_ge "[8]"
lines g.elif_guard "[20]"
lines g.return_guard "[26]"
lines g.least "[39]"
caps g.no_reject bound "['0']"
lines g.no_reject "[31]"

case_ "python-bound: a bound past 64 bits is captured in decimal and compares as the number it is"
caps g.huge bound "['100000000000000000000']"
cap huge_ge True
cap_reason huge_ge "rule g.huge has bound >= 15"
cap huge_lt False
cap_reason huge_lt "rule g.huge has no bound < 100 (it has 100000000000000000000)"

case_ "python-bound: what the reader cannot read where it rejects is unknown"
rule g.opaque status unknown
rule g.opaque reason "opaque: the bound depends on \`nhead <= MAX_HEADS\` at line 48, which the reader cannot evaluate for each value"
rule g.call status unknown
rule g.call reason "call: a comparison of nhead at line 52 goes to \`torch._assert(...)\`, which may raise on it"
rule g.per_call status unknown
rule g.per_call reason "per_call: whether \`nhead <= 16\` (line 57) runs depends on \`kv.dtype == \"fp8\"\` at line 56, which varies from call to call"

pack no_def <<'EOF'
rules:
  - id: r
    file: a.py
    python-bound: nhead
EOF

case_ "refused: python-bound without 'def'"
refused no_def "2:5: missing required key 'def' in rule"

finish
