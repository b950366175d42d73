#!/bin/sh
# SPDX-License-Identifier: MIT
# Whole-process time of `aiter-probe history` over a git range with every
# shipped pack, against a shell loop doing the same reading with git: one
# `git show COMMIT:PATH` per commit and path the packs name, whitespace
# stripped and grepped for the two literals vLLM looks for. Runs interleaved,
# both held to two cores (taskset) when the machine has more; prints each
# run, the medians and their ratio.
#
# usage: bench/bench-history.sh AITER_PROBE DATADIR GIT_DIR [RANGE [RUNS]]
#   AITER_PROBE  the built tool; DATADIR holds rules/ and probes/ (the source tree)
#   GIT_DIR      an AITER repository (a bare mirror is fine); RANGE defaults to HEAD
set -eu

if [ $# -lt 3 ]; then
	sed -n '/^# usage:/,/^#   GIT_DIR/s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
probe=$1 datadir=$2 git_dir=$3 range=${4:-HEAD} runs=${5:-3}
export AITER_PROBE_DATADIR="$datadir"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-history.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

pin=
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -gt 2 ]; then
	pin="taskset -c 0,1"
fi

# The paths the packs name, every alternative: a scan of a tree with an
# empty aiter package (a folder with none would be no AITER tree) asks for
# each of them and lists them all as inputs.
mkdir -p "$TMP/empty/aiter"
: >"$TMP/empty/aiter/__init__.py"
"$probe" scan --aiter-root "$TMP/empty" --no-launch --format json >"$TMP/scan.json"
paths=$("${PYTHON3:-python3}" -c '
import json, sys
print(" ".join(i["path"] for i in json.load(open(sys.argv[1]))["inputs"]))' "$TMP/scan.json")
commits=$(git -C "$git_dir" rev-list --count "$range")

cat >"$TMP/loop.sh" <<'EOF'
# git show per commit and path, then vLLM's whitespace strip and the literals
git_dir=$1 range=$2
shift 2
for c in $(git -C "$git_dir" rev-list "$range"); do
	for p in "$@"; do
		git -C "$git_dir" show "$c:$p" 2>/dev/null | tr -d ' \t\r\n\f\v' |
			grep -c -F -e 'MLA_REDUCE_CASE_EF(NUM_HEAD,24,HEAD_DIM,512,' -e 'num_heads==24' ||
			true
	done
done
EOF

now() { date +%s.%N; }
# timed FILE COMMAND...: appends the seconds COMMAND took to FILE.
timed() {
	out=$1
	shift
	t0=$(now)
	$pin "$@" >/dev/null
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >>"$out"
}
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "range: $range of $git_dir ($commits commits)"
echo "paths: $paths"
echo "cores: $([ -n "$pin" ] && echo "2 (taskset -c 0,1)" || echo "$(nproc) (all)")   runs: $runs each, interleaved"
"$probe" history --git "$git_dir" "$range" >/dev/null # warm the page cache
: >"$TMP/probe.t"
: >"$TMP/loop.t"
i=1
while [ "$i" -le "$runs" ]; do
	timed "$TMP/probe.t" "$probe" history --git "$git_dir" "$range" --format json
	# shellcheck disable=SC2086
	timed "$TMP/loop.t" sh "$TMP/loop.sh" "$git_dir" "$range" $paths
	printf '  run %d: aiter-probe history %.3f s, git show loop %.3f s\n' "$i" \
		"$(tail -n 1 "$TMP/probe.t")" "$(tail -n 1 "$TMP/loop.t")"
	i=$((i + 1))
done
mp=$(median "$TMP/probe.t")
ml=$(median "$TMP/loop.t")
echo "median: aiter-probe history $mp s, git show loop $ml s"
awk -v p="$mp" -v l="$ml" 'BEGIN { printf "ratio (git show loop / aiter-probe): %.0fx\n", l / p }'
