#!/bin/sh
# SPDX-License-Identifier: MIT
# The engine with the real launcher on the GPUs of this node: a passing
# cross-check on every GPU at once, and a kernel that faults, hangs or
# overflows undersized metadata on one GPU recorded as that GPU's failure,
# with the scan finishing and the other GPUs unaffected. Skips (77) without
# a GPU build or a GPU.
. "$AP_SRCDIR/tests/lib.sh"
LAUNCHER="$AP_BUILDDIR/aiter-probe-launcher"
SAMPLE="$AP_SRCDIR/sample/aiter-root"
CAP='j["capabilities"]["mla.decode.native_h24"]'

if [ ! -x "$LAUNCHER" ]; then
	echo "SKIP: no $LAUNCHER: built without a GPU compiler (configure --with-gpu)"
	exit 77
fi
ngpu=$("$LAUNCHER" --list | "${PYTHON3:-python3}" -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))')
if [ "${ngpu:-0}" -eq 0 ]; then
	echo "SKIP: $("$LAUNCHER" --list)"
	exit 77
fi
last=$((ngpu - 1))
echo "GPUs: $ngpu"

case_ "cross-check passes on every GPU"
probe scan --aiter-root "$SAMPLE" --format json
expect_rc 0
expect_json 'len(j["devices"])' "$ngpu"
expect_json "$CAP[\"launch\"][\"status\"]" passed
expect_json "len($CAP[\"launch\"][\"results\"])" "$ngpu"
expect_json "$CAP[\"supported\"]" True
expect_json '[p["verified"] for p in j["plans"]["mla_heads"] if p["heads"] == 24]' "[True]"
# Not an AMD node with AITER: our reference kernel is the one that ran.
expect_json "($CAP[\"launch\"][\"kernel\"], j[\"launchers\"][\"reference\"][\"status\"])" "('reference', 'available')"
expect_json "[r['kernel'] for r in $CAP['launch']['results']] == ['reference'] * $ngpu" True
json_get "[(r['device']['index'], r['device']['name'], r['checks']['reference']['max_abs_err'], r['checks']['padded_vs_native']['max_abs_diff'], r['timings_us']) for r in $CAP['launch']['results']]"

case_ "a faulting kernel on GPU $last is that GPU's error"
AITER_PROBE_LAUNCH_INJECT=fault@$last probe scan --aiter-root "$SAMPLE" --format json
expect_rc 0
expect_json "$CAP[\"launch\"][\"results\"][$last][\"status\"] in ('failed', 'error')" True
expect_json "$CAP[\"supported\"]" False
[ "$ngpu" -gt 1 ] && expect_json "$CAP[\"launch\"][\"results\"][0][\"status\"]" passed
json_get "$CAP['launch']['results'][$last]['error']"

case_ "a hanging kernel on GPU $last is killed at the timeout"
AITER_PROBE_LAUNCH_INJECT=hang@$last probe scan --aiter-root "$SAMPLE" --format json --launch-timeout 30
expect_rc 0
expect_json "$CAP[\"launch\"][\"results\"][$last][\"error\"].startswith('timed out after 30 s')" True
[ "$ngpu" -gt 1 ] && expect_json "$CAP[\"launch\"][\"results\"][0][\"status\"]" passed

case_ "undersized metadata is caught by the canaries"
AITER_PROBE_LAUNCH_INJECT=undersize-metadata probe scan --aiter-root "$SAMPLE" --format json
expect_rc 0
expect_json "$CAP[\"launch\"][\"status\"]" failed
expect_json "all(not r['checks']['canaries']['passed'] for r in $CAP['launch']['results'])" True
json_get "$CAP['launch']['results'][0]['checks']['canaries']['detail']"

finish
