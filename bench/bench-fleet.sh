#!/bin/sh
# SPDX-License-Identifier: MIT
# merge and history under load (issue 17): whole-process wall and CPU time
# and peak RSS (GNU time) of
#   - merge of 300 nodes, one of them a 44 MB manifest of 400,000 capability
#     ids (bench/gen-fleet.py hostile), text and JSON;
#   - merge of 2,000 nodes whose 30,000 capability ids all differ
#     (bench/gen-fleet.py distinct), text and JSON;
#   - history of 500 commits x 10,000 captures, every commit changing one
#     (bench/gen-history-repo.py), text and JSON, under ulimit -v 2 GiB.
# usage: bench/bench-fleet.sh AITER_PROBE DATADIR [TREE]
#   TREE: what the fleet's manifest is a scan of (default DATADIR/sample/aiter-root)
set -eu
if [ $# -lt 2 ]; then
	sed -n '/^# usage:/,/^#   TREE/s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
probe=$1 datadir=$2 tree=${3:-$2/sample/aiter-root}
PY=${PYTHON3:-python3}
export AITER_PROBE_DATADIR="$datadir"
[ -x /usr/bin/time ] || { echo "bench-fleet.sh needs GNU time at /usr/bin/time" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-fleet.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"

# run LABEL COMMAND...: one run, its figures on one line (exit status kept).
run() {
	label=$1
	shift
	/usr/bin/time -f "%e %U %S %M %x" -o "$TMP/usage" "$@" >/dev/null 2>"$TMP/err" || true
	tail -n 1 "$TMP/usage" | awk -v l="$label" \
		'{ printf "%s: %.2f s wall, %.2f s CPU, peak RSS %.0f MB, exit %s\n", l, $1, $2 + $3, $4 / 1024, $5 }'
}

"$probe" scan --aiter-root "$tree" --no-launch -o "$TMP/base.json"
"$PY" "$datadir/bench/gen-fleet.py" "$TMP/base.json" "$TMP/hostile" hostile 300 44
"$PY" "$datadir/bench/gen-fleet.py" "$TMP/base.json" "$TMP/distinct" distinct 2000
for fmt in text json; do
	run "merge --format $fmt, 300 nodes, one hostile" "$probe" merge --format "$fmt" "$TMP/hostile/"*.json
	run "merge --format $fmt, 2,000 nodes, distinct ids" "$probe" merge --format "$fmt" "$TMP/distinct/"*.json
done
"$PY" "$datadir/bench/gen-history-repo.py" "$TMP/h.git" 500 10000
for fmt in text json; do
	# shellcheck disable=SC3045 # dash and bash have ulimit -v
	(ulimit -v 2097152; run "history --format $fmt, 500 commits x 10,000 captures" \
		"$probe" history --git "$TMP/h.git" main --format "$fmt")
done
