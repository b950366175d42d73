#!/bin/sh
# SPDX-License-Identifier: MIT
# scan --signatures on trees made here: what is recorded, what is not, the
# cap of 4096 callables (left_out), a module the tree lacks, a scan without
# the option recording none, a pack's signatures: errors, and the manifest
# read back by verify and the Python reader. The calls fixture's manifest is
# a golden file (golden.sh); tests/python/test_calls.py checks the answers
# against real calls.
. "$AP_SRCDIR/tests/lib.sh"
cd "$TMP" || exit 1

mkdir -p tree/aiter/ops
printf 'def mla_decode_fwd(q, kv_buffer, o, causal=False):\n    pass\n' >tree/aiter/mla.py
cat >tree/aiter/__init__.py <<'PY'
import torch
from typing import Optional
from .ops.many import *
from . import mla
PY
"${PYTHON3:-python3}" -c '
for i in range(4100):
    print("def op%04d(x, /, y=1, *rest, z, **kw):\n    pass" % i)
print("def _hidden(x):\n    pass")' >tree/aiter/ops/many.py
cat >pack.yaml <<'YAML'
rules:
  - id: t.decode
    file: aiter/mla.py
    python-def: mla_decode_fwd
signatures:
  - module: aiter
  - module: aiter.mla
  - module: aiter.nowhere
YAML

case_ "scan --signatures: the cap, a missing module, what is left out"
probe scan --aiter-root tree --no-default-rules --rules pack.yaml --no-launch \
	--python-version 3.11 --signatures --format json
expect_rc 0
expect_json 'len(j["signatures"]["aiter"]["callables"])' 4096
# op4096 to op4099, and the submodule ops (past the cap, so not resolved)
expect_json 'j["signatures"]["aiter"]["left_out"]' 5
expect_json 'j["signatures"]["aiter"]["callables"]["op0000"]' \
	"{'params': 'x, /, y=…, *rest, z, **kw', 'file': 'aiter/ops/many.py', 'line': 1}"
expect_json '[n for n in j["signatures"]["aiter"]["callables"] if not n.startswith("op")]' '[]'
# the cap is over the scan: the modules after the one that reached it get none
expect_json 'j["signatures"]["aiter.mla"]' \
	"{'file': 'aiter/mla.py', 'callables': {}, 'left_out': 1}"
expect_json 'j["signatures"]["aiter.nowhere"]' \
	"{'file': None, 'callables': {}, 'reason': 'no such module in the tree'}"
cp "$TMP/out" capped.json

case_ "without --signatures none is recorded"
probe scan --aiter-root tree --no-default-rules --rules pack.yaml --no-launch \
	--python-version 3.11 --format json
expect_rc 0
expect_json '"signatures" in j' False

case_ "the manifest with signatures read back"
mkdir -m 700 saved
cp capped.json saved/m.json
probe verify saved/m.json
expect_rc 0
"${PYTHON3:-python3}" - "$AP_SRCDIR/python" saved/m.json <<'PY' || fail "the Python reader"
import sys
sys.path.insert(0, sys.argv[1])
import aiter_probe
from aiter_probe.signatures import Signatures
s = Signatures(aiter_probe.load(sys.argv[2]).data["signatures"])
assert s.binds("aiter.op0001", 1, ["z"]) == (True, None), s.binds("aiter.op0001", 1, ["z"])
assert s.binds("aiter.op0001", 1) == (False, "required parameter 'z' left unbound")
assert s.binds("aiter.op0001", 5, ["x", "z"]) == (True, None)  # **kw takes x
assert s.binds("aiter.op4099", 1, ["z"])[0] is None
PY

case_ "a pack's signatures: errors"
printf 'signatures:\n  - module: aiter\n  - module: aiter\n' >twice.yaml
probe scan --aiter-root tree --no-default-rules --rules twice.yaml --no-launch --signatures
expect_rc 2
expect_err "aiter-probe: twice.yaml:3:5: the signatures of aiter are already asked at twice.yaml:2:5"
printf 'signatures:\n  - module: 1aiter\n' >bad.yaml
probe scan --aiter-root tree --no-default-rules --rules bad.yaml --no-launch --signatures
expect_rc 2
expect_err "aiter-probe: bad.yaml:2:13: 'module' must be a module name (a.b.c), not '1aiter'"
finish
