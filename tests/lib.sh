# SPDX-License-Identifier: MIT
# Shared by the command-line tests: run aiter-probe, then assert on its exit
# status, stdout and stderr. Sourced by every test script (tests/*/*.sh).
set -u

: "${AP_SRCDIR:?run through make check}"
: "${AP_BUILDDIR:?run through make check}"
AP="$AP_BUILDDIR/aiter-probe"
export AITER_PROBE_DATADIR="$AP_SRCDIR"
export SOURCE_DATE_EPOCH=0
unset AITER_META_DIR NO_COLOR COLUMNS AITER_PROBE_LAUNCHER AITER_PROBE_LAUNCH_INJECT AITER_PROBE_PYTHON

# The address-space bound of the hostile-input tests (ulimit -v, KiB):
# sanitizers and valgrind reserve far more address space than they use, so
# under them the time bound alone holds (the plain build holds the memory one).
# Their time bound (s) is the same, larger under either, which run the
# tool many times slower.
AP_VMEM=1000000
AP_TIME=20
[ -z "${AP_SAN:-}${AP_WRAPPER:-}" ] || { AP_VMEM=unlimited; AP_TIME=600; }

# The wrapper by its path, so that a test may run the tool under another PATH.
if [ -n "${AP_WRAPPER:-}" ]; then
	ap_wrapper_cmd=${AP_WRAPPER%% *}
	AP_WRAPPER="$(command -v "$ap_wrapper_cmd")${AP_WRAPPER#"$ap_wrapper_cmd"}"
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/aiter-probe-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0
current=

# probe ARGS...: runs the tool (under $AP_WRAPPER, e.g. valgrind) and keeps
# its exit status in $rc, its output in $TMP/out and $TMP/err. The tool hands
# history to its helper program by exec, which valgrind does not follow:
# under a wrapper, history runs the helper itself.
probe() {
	case $- in *e*) errexit=1 ;; *) errexit= ;; esac
	set +e
	if [ -n "${AP_WRAPPER:-}" ] && [ "${1:-}" = history ]; then
		shift
		$AP_WRAPPER "${AP%/*}/aiter-probe-history" "$@" >"$TMP/out" 2>"$TMP/err"
	else
		${AP_WRAPPER:-} "$AP" "$@" >"$TMP/out" 2>"$TMP/err"
	fi
	rc=$?
	[ -z "$errexit" ] || set -e
}

# bounded ARGS...: as probe, under the time and memory bounds above (a
# hostile test may define its own, for other outputs).
bounded() {
	case $- in *e*) errexit=1 ;; *) errexit= ;; esac
	set +e
	if [ -n "${AP_WRAPPER:-}" ]; then
		timeout "$AP_TIME" $AP_WRAPPER "$AP" "$@"
	else
		(ulimit -v "$AP_VMEM"; timeout "$AP_TIME" "$AP" "$@")
	fi >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ -z "$errexit" ] || set -e
}

fail() {
	echo "FAIL [$current]: $*" >&2
	failures=$((failures + 1))
}

case_() { current=$1; }

expect_rc() {
	[ "$rc" = "$1" ] || { fail "exit status $rc, expected $1"; sed 's/^/  stderr: /' "$TMP/err" >&2; }
}

# expect_err TEXT: stderr is exactly TEXT (one or more lines).
expect_err() {
	printf '%s\n' "$1" | diff -u - "$TMP/err" >&2 || fail "stderr differs"
}

expect_out() {
	printf '%s\n' "$1" | diff -u - "$TMP/out" >&2 || fail "stdout differs"
}

expect_no_out() {
	[ ! -s "$TMP/out" ] || { fail "unexpected stdout"; sed 's/^/  stdout: /' "$TMP/out" >&2; }
}

expect_out_has() {
	grep -qF -- "$1" "$TMP/out" || { fail "stdout lacks: $1"; sed 's/^/  stdout: /' "$TMP/out" >&2; }
}

expect_err_has() {
	grep -qF -- "$1" "$TMP/err" || { fail "stderr lacks: $1"; sed 's/^/  stderr: /' "$TMP/err" >&2; }
}

# json_get EXPR: evaluates a Python expression over the JSON on stdout (j).
json_get() {
	"${PYTHON3:-python3}" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$TMP/out" "$1"
}

expect_json() {
	local got
	got=$(json_get "$1") || { fail "cannot evaluate $1"; return; }
	[ "$got" = "$2" ] || fail "$1 is '$got', expected '$2'"
}

# over_width COLUMNS: the lines of stdout wider than COLUMNS (characters,
# not bytes) but for a word too long for any line, which the wrapper writes
# whole on a line of its own (after the indent). Empty when every line fits.
over_width() {
	"${PYTHON3:-python3}" -c '
import sys
width = int(sys.argv[1])
for line in open(sys.argv[2], encoding="utf-8"):
    line = line.rstrip("\n")
    if len(line) > width and " " in line.lstrip(" "):
        print(line)' "$1" "$TMP/out"
}

finish() {
	if [ "$failures" -gt 0 ]; then
		echo "$failures failure(s)" >&2
		exit 1
	fi
	exit 0
}
