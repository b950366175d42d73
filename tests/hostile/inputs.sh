#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile inputs at the command line: children (the launcher, the Python that
# locates aiter) that flood their output or leave something holding it open;
# FIFOs, folders and devices given or found as rule packs; rule sets that
# define nothing; manifests that nest deeply or carry out-of-range plans and
# non-object devices; manifests that are FIFOs, devices or past the size cap.
# Every case runs in a subshell under `timeout 20` and
# `ulimit -v 1000000` (tests/lib.sh's AP_VMEM), so that a regression fails instead of hanging or
# eating the machine.
. "$AP_SRCDIR/tests/lib.sh"
FIX="$AP_SRCDIR/tests/fixtures"
CAP='j["capabilities"]["mla.decode.native_h24"]'
PY=${PYTHON3:-python3}

# hprobe ARGS...: as probe (tests/lib.sh), bounded in time and memory; the
# time it took in $took (seconds).
hprobe() {
	case $- in *e*) errexit=1 ;; *) errexit= ;; esac
	set +e
	started=$(date +%s)
	(
		ulimit -v "$AP_VMEM" || exit 125
		exec timeout 20 ${AP_WRAPPER:-} "$AP" "$@"
	) >"$TMP/out" 2>"$TMP/err" </dev/null
	rc=$?
	took=$(($(date +%s) - started))
	[ -z "$errexit" ] || set -e
}

# quick LIMIT: the last hprobe took less than LIMIT seconds.
quick() {
	[ "$took" -lt "$1" ] || fail "took $took s, expected less than $1 s"
}

# Processes the stand-ins leave behind note their pids here; they are ended
# at the exit, by pid.
PIDS="$TMP/pids"
: >"$PIDS"
cleanup() {
	while read -r pid; do
		kill "$pid" 2>/dev/null
	done <"$PIDS"
	rm -rf "$TMP"
}
trap cleanup EXIT

# gone PID: the process is not running (exited, or a zombie not yet reaped).
gone() {
	i=0
	while [ $i -lt 20 ]; do
		state=$(ps -o stat= -p "$1" 2>/dev/null)
		case $state in '' | Z*) return 0 ;; esac
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

mkdir -p "$TMP/bin"
DEVICE='{"index": 0, "name": "Fake GPU 0", "arch": "sm_90", "compute_units": 132}'
RESULT='{"status": "passed", "checks": {}}'

# stand_in NAME LIST RUN: a launcher; LIST and RUN are the shell lines run
# for --list and for a launch.
stand_in() {
	cat >"$TMP/bin/$1" <<EOF
#!/bin/sh
if [ "\$1" = "--list" ]; then
	$2
	exit 0
fi
$3
EOF
	chmod +x "$TMP/bin/$1"
}

LIST="echo '{\"backend\": \"cuda\", \"devices\": [$DEVICE]}'"

# --- 1. Children. ----------------------------------------------------------

case_ "a launcher that floods its output is cut off at 1 MiB"
stand_in flood-run "$LIST" "exec yes '$RESULT'"
AITER_PROBE_LAUNCHER="$TMP/bin/flood-run" hprobe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
quick 15
expect_json "$CAP[\"launch\"][\"results\"][0][\"status\"]" error
expect_json "$CAP[\"launch\"][\"results\"][0][\"error\"]" "launcher wrote more than 1048576 bytes"
expect_json "$CAP[\"supported\"]" False

case_ "a launcher that writes more than 1 MiB and exits 0 gives no answer"
stand_in big-run "$LIST" "yes '$RESULT' | head -c 2000000; exit 0"
AITER_PROBE_LAUNCHER="$TMP/bin/big-run" hprobe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json "$CAP[\"launch\"][\"results\"][0][\"error\"]" "launcher wrote more than 1048576 bytes"

case_ "a launcher whose device list floods"
stand_in flood-list "exec yes '$DEVICE'" "echo '$RESULT'"
AITER_PROBE_LAUNCHER="$TMP/bin/flood-list" hprobe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
quick 15
expect_json 'j["devices"]' "[]"
expect_json "$CAP[\"launch\"][\"status\"]" skipped
expect_json "$CAP[\"launch\"][\"reason\"]" "listing devices failed: launcher wrote more than 1048576 bytes"

case_ "a launcher that leaves a process holding its output: the answer is used at once"
stand_in linger-run "$LIST" "sleep 100 & echo \$! >>'$PIDS'; echo \$! >'$TMP/linger.pid'; echo '$RESULT'; exit 0"
AITER_PROBE_LAUNCHER="$TMP/bin/linger-run" hprobe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
quick 10
expect_json "$CAP[\"launch\"][\"results\"][0][\"status\"]" passed
expect_json "$CAP[\"launch\"][\"results\"][0][\"device\"][\"index\"]" 0
# What it left in its process group is killed.
gone "$(cat "$TMP/linger.pid")" || fail "the process the launcher left is still running"

case_ "... and in a session of its own"
stand_in orphan-run "$LIST" "setsid sleep 100 & echo \$! >>'$PIDS'; echo '$RESULT'; exit 0"
AITER_PROBE_LAUNCHER="$TMP/bin/orphan-run" hprobe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
quick 10
expect_json "$CAP[\"launch\"][\"results\"][0][\"status\"]" passed

case_ "a launcher that lists its devices and leaves a process holding its output"
stand_in linger-list "sleep 100 & echo \$! >>'$PIDS'; $LIST" "echo '$RESULT'"
AITER_PROBE_LAUNCHER="$TMP/bin/linger-list" hprobe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
quick 10
expect_json 'len(j["devices"])' 1
expect_json "$CAP[\"launch\"][\"results\"][0][\"status\"]" passed

case_ "a device list with an entry that is not an object"
stand_in bad-list "echo '{\"backend\": \"cuda\", \"devices\": [$DEVICE, 7]}'" "echo '$RESULT'"
AITER_PROBE_LAUNCHER="$TMP/bin/bad-list" hprobe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json 'j["devices"]' "[]"
expect_json "$CAP[\"launch\"][\"reason\"]" "the launcher's device list has an entry that is not an object with an integer \"index\" of 0 or more"

case_ "a launcher result whose device is not an object gets the listed one"
stand_in bad-device "$LIST" "echo '{\"status\": \"passed\", \"device\": \"gpu\"}'"
AITER_PROBE_LAUNCHER="$TMP/bin/bad-device" hprobe scan --aiter-root "$FIX/h24-native" --format json
expect_rc 0
expect_json "$CAP[\"launch\"][\"results\"][0][\"device\"][\"name\"]" "Fake GPU 0"

mkdir -p "$TMP/site/aiter" "$TMP/site/aiter_meta"
cp -R "$FIX/h24-native/csrc" "$TMP/site/aiter_meta/"

case_ "a Python that prints the package and leaves a process holding its output"
printf '#!/bin/sh\necho %s/site/aiter\nsleep 100 &\necho $! >>%s\n' "$TMP" "$PIDS" >"$TMP/bin/python-linger"
chmod +x "$TMP/bin/python-linger"
AITER_PROBE_PYTHON="$TMP/bin/python-linger" hprobe scan --no-launch --format json
expect_rc 0
quick 10
expect_json 'j["aiter"]["root"]' "$TMP/site"
expect_json "$CAP[\"supported\"]" True

case_ "a Python that floods its output"
printf '#!/bin/sh\nexec yes %s/site/aiter\n' "$TMP" >"$TMP/bin/python-flood"
chmod +x "$TMP/bin/python-flood"
AITER_PROBE_PYTHON="$TMP/bin/python-flood" hprobe scan --no-launch --format json
expect_rc 2
quick 15
expect_no_out
expect_err "aiter-probe: cannot look for the aiter package: $TMP/bin/python-flood wrote more than 1048576 bytes"

case_ "a Python that writes more than 1 MiB and exits 0"
printf '#!/bin/sh\nyes %s/site/aiter | head -c 2000000\nexit 0\n' "$TMP" >"$TMP/bin/python-big"
chmod +x "$TMP/bin/python-big"
AITER_PROBE_PYTHON="$TMP/bin/python-big" hprobe scan --no-launch --format json
expect_rc 2
expect_err "aiter-probe: cannot look for the aiter package: $TMP/bin/python-big wrote more than 1048576 bytes"

# --- 2. Rule packs that are not regular files. ----------------------------

PACK='rules:
  - id: own.reduce
    file: csrc/kernels/mla/reduce.cu
    token: "HEAD_DIM"
'
mkfifo "$TMP/fifo.yaml"

case_ "--rules names a FIFO"
hprobe scan --aiter-root "$FIX/h24-native" --no-launch --rules "$TMP/fifo.yaml"
expect_rc 2
quick 10
expect_no_out
expect_err "aiter-probe: $TMP/fifo.yaml: not a regular file"

case_ "--rules names a device"
hprobe scan --aiter-root "$FIX/h24-native" --no-launch --rules /dev/null
expect_rc 2
expect_err "aiter-probe: /dev/null: not a regular file"

for what in fifo folder device; do
	case_ "a rules folder holding a $what named *.yaml"
	dir="$TMP/packs-$what"
	mkdir -p "$dir"
	printf '%s' "$PACK" >"$dir/a.yaml"
	case $what in
	fifo) mkfifo "$dir/b.yaml" ;;
	folder) mkdir "$dir/b.yaml" ;;
	device) ln -s /dev/zero "$dir/b.yaml" ;;
	esac
	hprobe scan --aiter-root "$FIX/h24-native" --no-launch --no-default-rules --rules "$dir"
	expect_rc 2
	quick 10
	expect_err "aiter-probe: $dir/b.yaml: not a regular file"
done

case_ "a rules folder holding a FIFO named *.yml, given with a trailing slash"
mkdir -p "$TMP/packs-yml"
mkfifo "$TMP/packs-yml/c.yml"
hprobe check --require x --aiter-root "$FIX/h24-native" --no-launch --rules "$TMP/packs-yml/"
expect_rc 2
expect_err "aiter-probe: $TMP/packs-yml/c.yml: not a regular file"

case_ "hidden FIFOs and folders named *.yaml are still skipped"
mkdir -p "$TMP/packs-hidden"
printf '%s' "$PACK" >"$TMP/packs-hidden/a.yaml"
mkfifo "$TMP/packs-hidden/.b.yaml"
mkdir "$TMP/packs-hidden/.c.yaml"
hprobe scan --aiter-root "$FIX/h24-native" --no-launch --no-default-rules --rules "$TMP/packs-hidden" --format json
expect_rc 0
expect_json 'list(j["rules"])' "['own.reduce']"

# --- 3. Rule sets that define nothing. --------------------------------------

mkdir -p "$TMP/data-empty/rules" "$TMP/data-empty/probes"
mkdir -p "$TMP/data-none/rules" "$TMP/data-none/probes"
printf 'rules: []\n' >"$TMP/data-none/rules/a.yaml"
printf '# nothing yet\nprobes: []\n' >"$TMP/data-none/probes/b.yml"

case_ "empty rules/ and probes/ folders"
AITER_PROBE_DATADIR="$TMP/data-empty" hprobe scan --aiter-root "$FIX/h24-native" --no-launch
expect_rc 2
expect_no_out
expect_err "aiter-probe: no rules and no probes: no rule pack (a .yaml or .yml file) was loaded"

case_ "packs that define no rule and no probe"
AITER_PROBE_DATADIR="$TMP/data-none" hprobe scan --aiter-root "$FIX/h24-native" --no-launch
expect_rc 2
expect_err "aiter-probe: no rules and no probes: the 2 rule pack(s) loaded define none"

case_ "check, with only an empty folder of packs"
hprobe check --require mla.decode.native_h24 --aiter-root "$FIX/h24-native" --no-launch \
	--no-default-rules --rules "$TMP/data-empty/rules"
expect_rc 2
expect_err "aiter-probe: no rules and no probes: no rule pack (a .yaml or .yml file) was loaded"

case_ "an empty pack beside real ones is fine"
hprobe scan --aiter-root "$FIX/h24-native" --no-launch --rules "$TMP/data-none/rules" --format json
expect_rc 0
expect_json "$CAP[\"supported\"]" True

# --- 4. Manifests. -----------------------------------------------------------

GOOD="$AP_SRCDIR/tests/manifests/good.json"
# edit NAME EXPR: good.json with the Python statement EXPR applied to d.
edit() {
	"$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[3], "w"))' "$GOOD" "$2" "$TMP/$1.json"
}

case_ "a manifest of 100000 nested arrays"
"$PY" -c 'import sys; sys.stdout.write("[" * 100000)' >"$TMP/deep.json"
hprobe verify "$TMP/deep.json"
expect_rc 2
expect_err "aiter-probe: $TMP/deep.json:1:65: more than 64 nested arrays and objects"
hprobe diff "$TMP/deep.json" "$GOOD"
expect_rc 2
expect_err "aiter-probe: $TMP/deep.json:1:65: more than 64 nested arrays and objects"

case_ "launch_heads 2^40"
edit huge 'd["plans"]["mla_heads"][23]["launch_heads"] = 2 ** 40'
hprobe verify "$TMP/huge.json"
expect_rc 2
expect_err "aiter-probe: $TMP/huge.json: 'plans.mla_heads[23]' must have heads and launch_heads of at most 128"

case_ "an empty plans.mla_heads"
edit noplan 'd["plans"]["mla_heads"] = []'
hprobe diff "$GOOD" "$TMP/noplan.json"
expect_rc 2
expect_err "aiter-probe: $TMP/noplan.json: 'plans.mla_heads' must not be empty"

case_ "a manifest that is a FIFO, for every command that reads one"
mkfifo "$TMP/m-fifo.json"
for cmd in "verify $TMP/m-fifo.json" "diff $TMP/m-fifo.json $GOOD" \
	"check --manifest $TMP/m-fifo.json --require mla.decode.native_h24" \
	"explain --manifest $TMP/m-fifo.json mla.decode.native_h24"; do
	# shellcheck disable=SC2086 # the words of one command
	hprobe $cmd
	expect_rc 2
	quick 10
	expect_no_out
	expect_err "aiter-probe: $TMP/m-fifo.json: not a regular file (a FIFO)"
done
# merge names it and merges the others (exit 3).
hprobe merge "$GOOD" "$TMP/m-fifo.json"
expect_rc 3
quick 10
expect_out_has "1 node, 1 AITER tree; no capability of 2 differs across nodes; 1 manifest"
expect_err "aiter-probe: $TMP/m-fifo.json: not a regular file (a FIFO)"

case_ "a manifest that is /dev/zero, or a symlink to it: refused before it is opened"
ln -s /dev/zero "$TMP/m-zero.json"
hprobe verify /dev/zero
expect_rc 2
quick 10
expect_err "aiter-probe: /dev/zero: not trusted: it is writable by others"
hprobe verify "$TMP/m-zero.json"
expect_rc 2
quick 10
expect_err "aiter-probe: $TMP/m-zero.json: not trusted: it is a symlink"

case_ "a manifest over 64 MiB"
: >"$TMP/m-big.json"
"$PY" -c 'import os, sys; os.truncate(sys.argv[1], (64 << 20) + 1)' "$TMP/m-big.json"
hprobe verify "$TMP/m-big.json"
expect_rc 2
quick 10
expect_err "aiter-probe: $TMP/m-big.json: larger than 64 MiB, the limit for a manifest"

case_ "plan rows no consumer can pad"
edit short 'd["plans"]["mla_heads"][23].update(heads=24, launch_heads=16, mode="tile-slice", verified=True)'
hprobe check --manifest "$TMP/short.json" --require mla.decode.native_h24
expect_rc 2
expect_err "aiter-probe: $TMP/short.json: 'plans.mla_heads[23]' must have launch_heads of at least heads (24), not 16"
edit mode 'd["plans"]["mla_heads"][7].update(heads=8, launch_heads=8, mode="repeat-interleave")'
hprobe explain --manifest "$TMP/mode.json" mla.decode.native_h24
expect_rc 2
expect_err "aiter-probe: $TMP/mode.json: 'plans.mla_heads[7].mode' must be none for 8 heads as 8, as the planner pads (not 'repeat-interleave')"

case_ "a device that is not an object"
edit nodev 'd["devices"].append("NVIDIA H200")'
hprobe verify "$TMP/nodev.json"
expect_rc 2
expect_err "aiter-probe: $TMP/nodev.json: 'devices[1]' must be an object"

case_ "a number past 64 bits"
edit big 'd["inputs"][1]["bytes"] = 10 ** 30'
hprobe verify "$TMP/big.json"
expect_rc 2
expect_err_has "$TMP/big.json:"
expect_err_has ": number out of range"

finish
