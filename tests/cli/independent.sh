#!/bin/sh
# SPDX-License-Identifier: MIT
# The verdicts on every fixture tree and the sample equal an independent
# reading (bench/aiter-tags.py's own C lexer), lines included, so the golden
# manifests are not only the tool agreeing with itself.
. "$AP_SRCDIR/tests/lib.sh"
set -- --probe "$AP" --datadir "$AP_SRCDIR" --lines
for tree in "$AP_SRCDIR"/tests/fixtures/*/ "$AP_SRCDIR/sample/aiter-root"; do
	set -- "$@" --tree "$tree"
done
case_ "independent reading"
"${PYTHON3:-python3}" "$AP_SRCDIR/bench/aiter-tags.py" "$@" >"$TMP/out" 2>"$TMP/err" || {
	cat "$TMP/out" "$TMP/err" >&2
	fail "aiter-probe and the independent reading disagree"
}
finish
