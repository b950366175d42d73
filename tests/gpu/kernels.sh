#!/bin/sh
# SPDX-License-Identifier: MIT
# GPU tests of aiter-probe-launcher: padded/native equality for every head
# count 1..128, the float64 reference, canaries catching undersized metadata,
# and faults and hangs reported as failures. Skips (77) without a GPU build or
# a GPU. AP_LAUNCHER overrides the launcher under test.
set -u

LAUNCHER=${AP_LAUNCHER:-${AP_BUILDDIR:-.}/aiter-probe-launcher}
PY=${PYTHON3:-python3}
failures=0

if [ ! -x "$LAUNCHER" ]; then
	echo "SKIP: no $LAUNCHER: aiter-probe was built without a GPU compiler (configure --with-gpu)"
	exit 77
fi
if ! "$PY" -c 'import json' 2>/dev/null; then
	echo "SKIP: no python3 to read the launcher's JSON"
	exit 77
fi

list=$("$LAUNCHER" --list)
reason=$(printf '%s' "$list" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
if not d["devices"]:
    print(d.get("reason", "no reason given"))')
if [ -n "$reason" ]; then
	echo "SKIP: $reason"
	exit 77
fi
echo "devices: $list"

# expect NAME EXIT-STATUS PYTHON-CONDITION -- LAUNCHER-ARGS...
# The condition sees the launcher's JSON as d.
expect() {
	name=$1 want_rc=$2 cond=$3
	shift 4
	out=$("$LAUNCHER" "$@" 2>/dev/null)
	rc=$?
	if [ "$rc" -ne "$want_rc" ]; then
		echo "FAIL: $name: exit status $rc, expected $want_rc: $out"
		failures=$((failures + 1))
		return
	fi
	if ! printf '%s' "$out" | "$PY" -c "
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if ($cond) else 1)"; then
		echo "FAIL: $name: $out"
		failures=$((failures + 1))
		return
	fi
	echo "ok: $name: $out"
}

passed='d["status"] == "passed" and d["checks"]["reference"]["passed"] and d["checks"]["padded_vs_native"]["passed"] and d["checks"]["canaries"]["passed"] and "error" not in d'
exact='d["checks"]["padded_vs_native"]["exact"] and d["checks"]["padded_vs_native"]["max_abs_diff"] == 0 and d["checks"]["padded_vs_native"]["elements_differing"] == 0'
# padding across a 32-head block boundary splits the KV differently
close='not d["checks"]["padded_vs_native"]["exact"] and d["checks"]["padded_vs_native"]["max_abs_diff"] <= d["checks"]["padded_vs_native"]["tolerance"]'

# every head count, padded to the next multiple of 16 as a backend routes it
# (multiples of 16 to the next one, 128 alone), over page sizes 1, 16 and 64
h=1
while [ "$h" -le 128 ]; do
	if [ $((h % 16)) -ne 0 ]; then
		pad=$(((h + 15) / 16 * 16))
	elif [ "$h" -lt 128 ]; then
		pad=$((h + 16))
	else
		pad=128
	fi
	case $((h % 3)) in 0) ps=1 ;; 1) ps=16 ;; *) ps=64 ;; esac
	if [ "$pad" -ne "$h" ]; then
		same=$exact
		if [ $(((h + 31) / 32)) -ne $(((pad + 31) / 32)) ]; then
			same=$close
		fi
		expect "heads $h -> $pad, page size $ps" 0 "$passed and $same" -- \
			--device 0 --kernel mla_decode --heads "$h" --pad-to "$pad" --head-dim 512 \
			--rope 64 --batch 3 --context 1100 --page-size "$ps"
	else
		expect "heads $h native, page size $ps" 0 "$passed" -- \
			--device 0 --kernel mla_decode --heads "$h" --head-dim 512 --rope 64 \
			--batch 3 --context 1100 --page-size "$ps"
	fi
	h=$((h + 1))
done

# the probe's own launch, and longer sequences against the reference
expect "heads 24 -> 32, launcher defaults" 0 "$passed and $exact" -- \
	--device 0 --kernel mla_decode --heads 24 --pad-to 32 --head-dim 512 --rope 64
expect "heads 128, context 8192, page size 1" 0 "$passed" -- \
	--device 0 --kernel mla_decode --heads 128 --head-dim 512 --rope 64 --batch 4 \
	--context 8192 --page-size 1
expect "heads 1 -> 16 repeat-interleave, batch 33" 0 "$passed and $exact and d[\"mode\"] == \"repeat-interleave\"" -- \
	--device 0 --kernel mla_decode --heads 1 --pad-to 16 --batch 33 --context 300

# metadata sized for the real heads, launched padded; and sized for half
# the heads of a native launch: the canaries must catch both
canary_caught='d["status"] == "failed" and not d["checks"]["canaries"]["passed"] and "partial_out rear guard overwritten" in d["checks"]["canaries"]["detail"] and d["error"].startswith("canaries: ")'
expect "undersized metadata, heads 24 -> 32" 1 "$canary_caught" -- \
	--device 0 --kernel mla_decode --heads 24 --pad-to 32 --inject undersize-metadata
expect "undersized metadata, heads 64 native" 1 "$canary_caught" -- \
	--device 0 --kernel mla_decode --heads 64 --inject undersize-metadata

expect "injected fault" 3 'd["status"] == "failed" and d["error"].startswith("GPU error in native launch: ") and "illegal" in d["error"]' -- \
	--device 0 --kernel mla_decode --heads 24 --pad-to 32 --inject fault

# a hang never prints: the engine's timeout kills it; the GPU must then work
timeout -s KILL 15 "$LAUNCHER" --device 0 --kernel mla_decode --heads 16 --inject hang \
	>/dev/null 2>&1
rc=$?
if [ "$rc" -ne 137 ]; then
	echo "FAIL: injected hang: exit status $rc, expected to be killed (137)"
	failures=$((failures + 1))
else
	echo "ok: injected hang: killed after 15 s"
fi
expect "a launch after the killed hang" 0 "$passed" -- \
	--device 0 --kernel mla_decode --heads 16

expect "usage: unknown kernel" 2 'd["error"] == "usage: unknown kernel '"'"'nope'"'"' (known: mla_decode)"' -- \
	--device 0 --kernel nope --heads 16
expect "usage: head dim" 2 'd["error"].startswith("usage: mla_decode is compiled for head dim 512")' -- \
	--device 0 --kernel mla_decode --heads 16 --head-dim 128

echo "$failures failures"
[ "$failures" -eq 0 ]
