#!/bin/sh
# SPDX-License-Identifier: MIT
# For every command the tool's --help lists: 'help CMD' prints what
# 'CMD --help' prints, the help keeps one layout (options indented two
# spaces, what continues a line at 8 or more, no line over 80 columns, no
# tab), and an unknown option is the same usage error everywhere.
. "$AP_SRCDIR/tests/lib.sh"

# help_layout FILE: the lines of FILE that break the layout.
help_layout() {
	"${PYTHON3:-python3}" -c '
import re, sys
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    line = line.rstrip("\n")
    if len(line) > 80 or "\t" in line or re.match(r"^( | {3,7})[^ ]", line):
        print("%d: %s" % (n, line))' "$1"
}

probe --help
expect_rc 0
commands=$(sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' "$TMP/out")
[ -n "$commands" ] || fail "--help lists no command"
cp "$TMP/out" "$TMP/tool-help"

case_ "the tool's --help"
bad=$(help_layout "$TMP/tool-help")
[ -z "$bad" ] || fail "layout: $bad"

case_ "help alone is the tool's --help"
probe help
expect_rc 0
diff -u "$TMP/tool-help" "$TMP/out" >&2 || fail "help differs from --help"

for cmd in $commands; do
	case_ "$cmd --help"
	probe "$cmd" --help
	expect_rc 0
	[ ! -s "$TMP/err" ] || fail "stderr: $(cat "$TMP/err")"
	head -1 "$TMP/out" | grep -q "^Usage: aiter-probe $cmd" || fail "first line: $(head -1 "$TMP/out")"
	grep -q '^Options:$' "$TMP/out" || fail "no Options: section"
	grep -q '^  -h, --help  *show this help$' "$TMP/out" || fail "no -h, --help line"
	grep -q '^Exit status: ' "$TMP/out" || fail "no Exit status: paragraph"
	bad=$(help_layout "$TMP/out")
	[ -z "$bad" ] || fail "layout: $bad"
	cp "$TMP/out" "$TMP/help-$cmd"

	case_ "help $cmd is $cmd --help"
	probe help "$cmd"
	expect_rc 0
	diff -u "$TMP/help-$cmd" "$TMP/out" >&2 || fail "help $cmd differs from $cmd --help"

	case_ "$cmd -h is $cmd --help"
	probe "$cmd" -h
	expect_rc 0
	diff -u "$TMP/help-$cmd" "$TMP/out" >&2 || fail "$cmd -h differs from $cmd --help"

	case_ "$cmd --bogus"
	probe "$cmd" --bogus
	expect_rc 2
	expect_no_out
	expect_err "aiter-probe $cmd: unknown option '--bogus'
Try 'aiter-probe $cmd --help'."
done

case_ "help of an unknown command"
probe help frobnicate
expect_rc 2
expect_no_out
expect_err "aiter-probe help: unknown command 'frobnicate'
Try 'aiter-probe help --help'."

case_ "help takes one command"
probe help scan check
expect_rc 2
expect_err "aiter-probe help: unexpected argument 'check'
Try 'aiter-probe help --help'."

finish
