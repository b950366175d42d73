#!/bin/sh
# SPDX-License-Identifier: MIT
# aiter-change.sh BASE_TREE HEAD_TREE OUTDIR: what a change to AITER does to
# the capabilities aiter-probe reads, for a CI job on a pull or merge request.
# Scans both trees (static rules only: a CI runner has no GPU to launch on),
# prints the difference, and writes into OUTDIR:
#   base.json, head.json   the two manifests
#   diff.txt               the difference as printed
#   aiter-probe.sarif      the difference as SARIF 2.1.0, an analysis of
#                          HEAD_TREE: located there, BASE_TREE's lines as
#                          related locations (upload it to code scanning)
# Exit status: 0 nothing of the --fail-on class (AITER_CHANGE_FAIL_ON: lost,
# the default, changed or any), 1 the change has some, 2 usage or input error.
# AITER_PROBE names the binary (default: aiter-probe on PATH).
set -u

die() {
	echo "aiter-change.sh: $*" >&2
	exit 2
}

[ $# -eq 3 ] || die "usage: aiter-change.sh BASE_TREE HEAD_TREE OUTDIR"
probe=${AITER_PROBE:-aiter-probe}
fail_on=${AITER_CHANGE_FAIL_ON:-lost}
# Before the scans: a typo in the gate is an error at once, not after them.
case $fail_on in
lost | changed | any) ;;
*) die "AITER_CHANGE_FAIL_ON takes lost, changed or any, not '$fail_on'" ;;
esac
# Absolute roots: the manifest records them, and the SARIF log maps its
# base ids to them as file:// URIs.
base=$(cd "$1" 2>/dev/null && pwd -P) || die "no such tree: $1"
head=$(cd "$2" 2>/dev/null && pwd -P) || die "no such tree: $2"
mkdir -p "$3" || die "cannot make $3"
out=$(cd "$3" && pwd -P) || die "cannot enter $3"

"$probe" scan --aiter-root "$base" --no-launch -o "$out/base.json" || exit 2
"$probe" scan --aiter-root "$head" --no-launch -o "$out/head.json" || exit 2
"$probe" diff "$out/base.json" "$out/head.json" >"$out/diff.txt" || exit 2
cat "$out/diff.txt"
# The gate's status comes from the same run that writes the log.
"$probe" diff "$out/base.json" "$out/head.json" --format sarif --fail-on "$fail_on" \
	>"$out/aiter-probe.sarif"
status=$?
case $status in
0) ;;
1) echo "aiter-change.sh: the change has differences of class '$fail_on' (see above)" >&2 ;;
*) exit 2 ;;
esac
exit "$status"
