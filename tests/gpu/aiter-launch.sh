#!/bin/sh
# SPDX-License-Identifier: MIT
# AITER's launcher (python/aiter_probe/launch.py) driven by the scan, on the
# stand-in aiter and torch of tests/standin (numpy, on the CPU: nothing here
# ran on an AMD GPU): native and padded launches of AITER's calls recorded as
# kernel "aiter", each failure mode with its reason, the reference where
# AITER's kernel cannot run, and the static verdict standing where nothing
# ran. The reference launcher is tests/gpu/fake-launcher.
. "$AP_SRCDIR/tests/lib.sh"
# By its path, as the scan names the python it ran in its reasons.
PY=$(command -v "${PYTHON3:-python3}") || PY=${PYTHON3:-python3}
"$PY" -c 'import numpy' 2>/dev/null ||
	{ echo "SKIP: $PY has no numpy (python3-numpy), which the stand-in torch needs"; exit 77; }
# The stand-in aiter over h24-native's csrc/ (24-head decode statically supported).
cp -R "$AP_SRCDIR/tests/standin/aiter-root" "$TMP/aiter-root"
cp -R "$AP_SRCDIR/tests/fixtures/h24-native/csrc" "$TMP/aiter-root/"
chmod -R u+w "$TMP/aiter-root"
ROOT=$(cd "$TMP/aiter-root" && pwd -P)
export AITER_PROBE_LAUNCHER="$AP_SRCDIR/tests/gpu/fake-launcher"
export PYTHONPATH="$AP_SRCDIR/tests/standin"
export FAKE_GPUS=0
CAP='j["capabilities"]["mla.decode.native_h24"]'
R0="$CAP[\"launch\"][\"results\"][0]"
scan() { probe scan --aiter-root "$ROOT" --python "$PY" --format json --host t "$@"; }

case_ "AITER's kernel, native at 24 heads and padded to 32"
scan
expect_rc 0
expect_json 'j["launchers"]["aiter"]["status"]' available
expect_json 'j["launchers"]["aiter"]["devices"]' "[0]"
expect_json 'j["launchers"]["aiter"]["torch"]' "0.0+aiter-probe-stand-in"
expect_json 'j["launchers"]["reference"]["reason"]' "no CUDA device (fake)"
expect_json 'j["devices"][0]["name"]' "aiter-probe stand-in (CPU) 0"
expect_json "$CAP[\"supported\"]" True
expect_json "$CAP[\"launch\"][\"status\"]" passed
expect_json "$CAP[\"launch\"][\"kernel\"]" aiter
expect_json "($R0[\"kernel\"], $R0[\"op\"], $R0[\"launch_heads\"], $R0[\"mode\"])" "('aiter', 'mla_decode', 32, 'tile-slice')"
expect_json "[$R0[\"checks\"][k][\"passed\"] for k in ('reference', 'padded_vs_native', 'canaries')]" "[True, True, True]"
expect_json "$R0[\"checks\"][\"reference\"][\"rows\"]" 64
expect_json '[(p["verified"], p.get("kernel")) for p in j["plans"]["mla_heads"] if p["heads"] == 24]' "[(True, 'aiter')]"
expect_json '[p.get("kernel") for p in j["plans"]["mla_heads"] if p["heads"] == 23]' "[None]"

case_ "explain and text say which kernel proved it"
scan -o "$TMP/m.json"
expect_rc 0
probe explain mla.decode.native_h24 --manifest "$TMP/m.json"
expect_rc 0
grep -q "^launch: passed on AITER's kernel: every device passed$" "$TMP/out" || fail "explain: no launch line"
grep -q "verified on this node by AITER's kernel" "$TMP/out" || fail "explain: no plan line"
scan --format text
grep -q "AITER's kernel: available on GPU 0 ($PY)" "$TMP/out" || fail "text: no launchers line"
PYTHONPATH="$AP_SRCDIR/python" "$PY" -c '
import sys, aiter_probe
m = aiter_probe.load(sys.argv[1])
print(m.launch_kernel("mla.decode.native_h24"), m.verified_by(24))' "$TMP/m.json" >"$TMP/out" 2>&1
expect_out "aiter aiter"
if "$PY" -c 'import jsonschema' 2>/dev/null; then
	"$PY" -c 'import json, sys, jsonschema
jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))' \
		"$AP_SRCDIR/schema/manifest-v1.schema.json" "$TMP/m.json" || fail "the manifest is not the schema's"
fi

case_ "AITER refusing the head count fails the capability, with AITER's words"
AITER_STANDIN=reject=24 scan
expect_rc 0
expect_json "$CAP[\"supported\"]" False
expect_json "$R0[\"error\"]" "native launch: get_mla_metadata_info_v1 for 24 heads raised AssertionError: stand-in: num_head_qo=24 is not supported"
expect_json '[p["verified"] for p in j["plans"]["mla_heads"] if p["heads"] == 24]' "[False]"

case_ "a kernel that raises"
AITER_STANDIN=raise scan
expect_json "($R0[\"status\"], $R0[\"error\"])" "('failed', 'native launch: mla_decode_fwd at 24 heads raised RuntimeError: stand-in: kernel launch failed (hipErrorLaunchFailure)')"

case_ "a kernel that writes past its output is caught by the guards"
AITER_STANDIN=overflow scan
expect_json "$R0[\"error\"]" "canaries: native launch: out rear guard overwritten from byte 0 past the end (buffer of 196608 bytes); padded launch: out rear guard overwritten from byte 0 past the end (buffer of 262144 bytes)"
expect_json "$CAP[\"supported\"]" False

case_ "a wrong result fails the reference check"
AITER_STANDIN=wrong scan
expect_json "$R0[\"error\"].startswith('reference: max abs error 0.25')" True

case_ "a kernel that crashes"
AITER_STANDIN=crash scan
expect_json "($R0[\"status\"], $R0[\"kernel\"], $R0[\"error\"].split(':')[0])" "('error', 'aiter', 'AITER launcher killed by signal 11 (Segmentation fault)')"
expect_json "$CAP[\"supported\"]" False

case_ "a kernel that hangs is killed at the time limit"
start=$(date +%s)
AITER_STANDIN=hang scan --launch-timeout 5
expect_rc 0
[ $(($(date +%s) - start)) -lt 40 ] || fail "the hang was not cut short"
expect_json "$R0[\"error\"]" "timed out after 5 s (killed)"

case_ "one GPU's fault leaves the other's result"
AITER_STANDIN_GPUS=gfx942,gfx942 AITER_STANDIN=raise@1 scan
expect_json "[r[\"status\"] for r in $CAP[\"launch\"][\"results\"]]" "['passed', 'failed']"

case_ "a GPU AITER has no kernels for: skipped, the static verdict stands"
AITER_STANDIN_GPUS=gfx90a scan
expect_rc 0
expect_json 'j["launchers"]["aiter"]["status"]' unavailable
expect_json 'j["launchers"]["aiter"]["reason"]' "AITER has kernels for none of the GPUs"
expect_json "($R0[\"status\"], $R0[\"kernel\"], $R0[\"reason\"])" "('skipped', 'aiter', 'AITER has no MLA kernels for gfx90a here (no hsa/gfx90a/mla in $ROOT)')"
expect_json "($CAP[\"supported\"], $CAP[\"launch\"][\"status\"])" "(True, 'skipped')"
expect_json '"kernel" in '"$CAP"'["launch"]' False

case_ "where AITER's kernel cannot run, the reference kernel does"
FAKE_GPUS=1 AITER_STANDIN_GPUS=gfx90a scan
expect_json "($R0[\"kernel\"], $R0[\"status\"], $R0[\"aiter_skipped\"])" "('reference', 'passed', 'AITER has no MLA kernels for gfx90a here (no hsa/gfx90a/mla in $ROOT)')"
expect_json '[p.get("kernel") for p in j["plans"]["mla_heads"] if p["heads"] == 24]' "['reference']"

case_ "a call the tag's source does not bind is never made: the reference checks instead"
cp -R "$ROOT" "$TMP/tree"
sed 's/^    causal=True,$//' "$ROOT/aiter/mla.py" >"$TMP/tree/aiter/mla.py"
FAKE_GPUS=1 probe scan --aiter-root "$TMP/tree" --python "$PY" --format json
expect_rc 0
expect_json "$R0[\"kernel\"]" reference
expect_json "$R0[\"aiter_skipped\"]" "vLLM's mla_decode_fwd call does not bind at this tag (rule vllm.calls_bind.mla_decode_fwd: a call of mla_decode_fwd with 8 positionals and its keywords does not bind: no parameter 'causal' (and no **kwargs))"

case_ "aiter that does not import: AITER's launcher unavailable, the reference runs"
printf 'import aiter_probe_no_such_dependency\n' >"$TMP/tree/aiter/_version.py"
FAKE_GPUS=1 probe scan --aiter-root "$TMP/tree" --python "$PY" --format json
expect_rc 0
expect_json 'j["launchers"]["aiter"]["reason"]' "the python ($PY) cannot import aiter from $TMP/tree: ModuleNotFoundError: No module named 'aiter_probe_no_such_dependency'"
expect_json "$R0[\"kernel\"]" reference

case_ "no torch: AITER's launcher unavailable, nothing claims an AMD run"
# -S: without site-packages, where this machine may have a torch of its own
printf '#!/bin/sh\nexec "%s" -S "$@"\n' "$PY" >"$TMP/bare-python"
chmod +x "$TMP/bare-python"
PYTHONPATH= probe scan --aiter-root "$ROOT" --python "$TMP/bare-python" --format json
expect_rc 0
expect_json 'j["launchers"]["aiter"]["reason"].split(": ", 1)[1]' "ModuleNotFoundError: No module named 'torch'"
expect_json "($CAP[\"supported\"], $CAP[\"launch\"][\"status\"], $CAP[\"launch\"][\"reason\"])" "(True, 'skipped', 'no CUDA device (fake)')"
expect_json 'j["devices"]' "[]"

case_ "torch that is no ROCm build (NVIDIA): the reference runs"
FAKE_GPUS=1 AITER_STANDIN_TORCH=cuda scan
expect_json 'j["launchers"]["aiter"]["reason"]' "torch 0.0+aiter-probe-stand-in is not a ROCm build (torch.version.hip is not set): AITER runs on AMD GPUs only"
expect_json "$R0[\"kernel\"]" reference

case_ "a python's version alone: AITER's launcher is not tried"
FAKE_GPUS=1 probe scan --aiter-root "$ROOT" --python-version 3.12 --format json
expect_rc 0
expect_json 'j["launchers"]["aiter"]["reason"]' "no interpreter to run it: the python's version or facts were given, not the python itself"
expect_json "$R0[\"kernel\"]" reference

case_ "--no-launch: no launchers"
scan --no-launch
expect_json '"launchers" in j' False

case_ "the launcher by hand: a call the engine read as not binding is skipped"
PYTHONPATH="$AP_SRCDIR/tests/standin" "$PY" "$AP_SRCDIR/python/aiter_probe/launch.py" --device 0 \
	--kernel mla_decode --heads 24 --aiter-root "$ROOT" \
	--calls '{"get_mla_metadata_info_v1": {"rule": "r", "status": "unmatched", "reason": "aiter does not export it"}}' >"$TMP/out"
expect_json '(j["status"], j["reason"])' "('skipped', \"vLLM's get_mla_metadata_info_v1 call does not bind at this tag (rule r: aiter does not export it)\")"
finish
