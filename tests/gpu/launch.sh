#!/bin/sh
# SPDX-License-Identifier: MIT
# The engine's side of kernel launches, with a stand-in launcher
# (tests/gpu/fake-launcher): results per device, a failed check, a crash, a hang,
# garbage output, several GPUs at once, device selection, and no GPU at all.
. "$AP_SRCDIR/tests/lib.sh"
FIX="$AP_SRCDIR/tests/fixtures"
export AITER_PROBE_LAUNCHER="$AP_SRCDIR/tests/gpu/fake-launcher"
CAP='j["capabilities"]["mla.decode.native_h24"]'

case_ "two GPUs, both pass"
probe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json 'len(j["devices"])' 2
expect_json "$CAP[\"supported\"]" True
expect_json "$CAP[\"launch\"][\"status\"]" passed
expect_json "[r[\"device\"][\"index\"] for r in $CAP[\"launch\"][\"results\"]]" "[0, 1]"
expect_json '[p["verified"] for p in j["plans"]["mla_heads"] if p["heads"] == 24]' "[True]"
# No aiter package in the tree: AITER's launcher cannot run, ours did.
expect_json "[r[\"kernel\"] for r in $CAP[\"launch\"][\"results\"]]" "['reference', 'reference']"
expect_json "($CAP[\"launch\"][\"kernel\"], j[\"launchers\"][\"aiter\"][\"status\"])" "('reference', 'unavailable')"
expect_json '[p["kernel"] for p in j["plans"]["mla_heads"] if p["heads"] == 24]' "['reference']"
expect_json '[p["verified"] for p in j["plans"]["mla_heads"] if p["heads"] == 23]' "[False]"
expect_json '[(p["launch_heads"], p["mode"]) for p in j["plans"]["mla_heads"] if p["heads"] == 24]' "[(24, 'none')]"

case_ "a failed check on one GPU makes the capability unsupported"
FAKE_MODE_1=fail probe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json "$CAP[\"supported\"]" False
expect_json "$CAP[\"launch\"][\"status\"]" failed
expect_json "$CAP[\"launch\"][\"results\"][0][\"status\"]" passed
expect_json "$CAP[\"launch\"][\"results\"][1][\"status\"]" failed
expect_json "$CAP[\"reason\"].split('; but ')[1]" "launch failed on device 1 (Fake GPU 1): canary overwritten after the partial-output buffer"
expect_json '[(p["launch_heads"], p["mode"]) for p in j["plans"]["mla_heads"] if p["heads"] == 24]' "[(32, 'tile-slice')]"

case_ "a crashing launcher is recorded; the other GPU is unaffected"
FAKE_MODE_0=crash probe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json "$CAP[\"launch\"][\"status\"]" error
expect_json "$CAP[\"launch\"][\"results\"][0][\"error\"]" "launcher killed by signal 11 (Segmentation fault): kernel fault: illegal memory access"
expect_json "$CAP[\"launch\"][\"results\"][1][\"status\"]" passed
expect_json "$CAP[\"supported\"]" False

case_ "a hanging launcher is killed at the timeout"
start=$(date +%s)
FAKE_MODE_1=hang probe scan --aiter-root "$FIX/h24-native" --format json --launch-timeout 1
expect_rc 0
[ $(($(date +%s) - start)) -lt 30 ] || fail "the hang was not cut short"
expect_json "$CAP[\"launch\"][\"results\"][1][\"error\"]" "timed out after 1 s (killed)"
expect_json "$CAP[\"launch\"][\"results\"][0][\"status\"]" passed
expect_json "$CAP[\"supported\"]" False

case_ "AITER_PROBE_LAUNCH_INJECT=MODE@INDEX reaches that device only"
AITER_PROBE_LAUNCH_INJECT=fault@1 probe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json "$CAP[\"launch\"][\"results\"][0][\"status\"]" passed
expect_json "$CAP[\"launch\"][\"results\"][1][\"error\"]" "launcher killed by signal 11 (Segmentation fault): kernel fault: illegal memory access"

case_ "AITER_PROBE_LAUNCH_INJECT=MODE reaches every device"
AITER_PROBE_LAUNCH_INJECT=undersize-metadata probe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json "[r[\"status\"] for r in $CAP[\"launch\"][\"results\"]]" "['failed', 'failed']"

case_ "a launcher that closes its output and hangs is still killed"
start=$(date +%s)
FAKE_MODE_0=mute-hang probe scan --aiter-root "$FIX/h24-native" --format json --launch-timeout 1
expect_rc 0
[ $(($(date +%s) - start)) -lt 15 ] || fail "the hang was not cut short"
expect_json "$CAP[\"launch\"][\"results\"][0][\"error\"]" "timed out after 1 s (killed)"
expect_json "$CAP[\"launch\"][\"results\"][1][\"status\"]" passed

case_ "a process outside the launcher's group holding its output does not hold the scan"
start=$(date +%s)
FAKE_MODE_1=orphan probe scan --aiter-root "$FIX/h24-native" --format json --launch-timeout 1
expect_rc 0
[ $(($(date +%s) - start)) -lt 15 ] || fail "the scan waited for the orphan"
expect_json "$CAP[\"launch\"][\"results\"][1][\"status\"]" passed
expect_json "$CAP[\"launch\"][\"results\"][0][\"status\"]" passed

case_ "garbage and silence from the launcher"
FAKE_MODE_0=garbage FAKE_MODE_1=silent probe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json "$CAP[\"launch\"][\"results\"][0][\"error\"]" "launcher exited with status 0 without a result"
expect_json "$CAP[\"launch\"][\"results\"][1][\"error\"]" "launcher exited with status 3 without a result"

case_ "--devices picks GPUs"
probe scan --aiter-root "$FIX/h24-native" --format json --devices 1
expect_rc 0
expect_json "[r[\"device\"][\"index\"] for r in $CAP[\"launch\"][\"results\"]]" "[1]"
expect_json 'len(j["devices"])' 2

case_ "--devices names a GPU that is not there"
probe scan --aiter-root "$FIX/h24-native" --format json --devices 0,5
expect_rc 2
expect_err "aiter-probe: --devices names GPU 5, but 2 GPU(s) were found"

case_ "--devices with --no-launch: no GPU looked for, none named missing"
FAKE_GPUS=0 probe scan --aiter-root "$FIX/h24-native" --format json --devices 0 --no-launch
expect_rc 0
expect_json "$CAP[\"launch\"][\"reason\"]" "launches disabled (--no-launch)"
expect_json 'j["devices"]' "[]"

case_ "no GPU: launches skipped with the launcher's reason"
FAKE_GPUS=0 probe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json "$CAP[\"launch\"][\"status\"]" skipped
expect_json "$CAP[\"launch\"][\"reason\"]" "no CUDA device (fake)"
expect_json "$CAP[\"supported\"]" True
expect_json 'j["devices"]' "[]"

case_ "--no-launch"
probe scan --aiter-root "$FIX/h24-native" --format json --no-launch
expect_rc 0
expect_json "$CAP[\"launch\"][\"reason\"]" "launches disabled (--no-launch)"

case_ "a launcher that cannot be run"
AITER_PROBE_LAUNCHER="$TMP/none" probe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json "$CAP[\"launch\"][\"status\"]" skipped
expect_json "$CAP[\"launch\"][\"reason\"]" "cannot run the launcher $TMP/none: No such file or directory"

finish
