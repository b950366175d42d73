#!/bin/sh
# SPDX-License-Identifier: MIT
# One account of each command's options: every option that 'CMD --help'
# lists is named in the man page's section for CMD (doc/aiter-probe.1.in,
# ".SS CMD"), and every option the section lists as an item (.TP) is one
# that --help lists, for every command the tool's --help lists. -h/--help,
# the same everywhere, is told once under Arguments.
. "$AP_SRCDIR/tests/lib.sh"
MAN_IN="$AP_SRCDIR/doc/aiter-probe.1.in"

probe --help
expect_rc 0
commands=$(sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' "$TMP/out")
[ -n "$commands" ] || fail "--help lists no command"

for cmd in $commands; do
	[ "$cmd" = help ] && continue
	probe "$cmd" --help
	expect_rc 0
	# The long options that begin a line of the Options: section.
	sed -n '/^Options:$/,/^$/p' "$TMP/out" |
		sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' |
		grep -vx -- --help | sort -u >"$TMP/help-$cmd"
	awk -v c=".SS $cmd" '/^\.S[SH] / { s = ($0 == c); next } s' "$MAN_IN" |
		sed 's/\\-/-/g' >"$TMP/man-$cmd"
	# An item's tag: the line after .TP.
	awk 'p { print } { p = /^\.TP/ }' "$TMP/man-$cmd" |
		grep -oE -- '--[a-z][a-z-]*' | sort -u >"$TMP/items-$cmd"

	case_ "$cmd: the man page names every option of --help"
	[ -s "$TMP/man-$cmd" ] || fail "doc/aiter-probe.1.in has no section .SS $cmd"
	while read -r option; do
		grep -qE -- "$option([^a-z-]|\$)" "$TMP/man-$cmd" ||
			fail "'aiter-probe $cmd --help' lists $option, which the man page's section $cmd does not name"
	done <"$TMP/help-$cmd"

	case_ "$cmd: --help lists every option of the man page's items"
	while read -r option; do
		grep -qxF -- "$option" "$TMP/help-$cmd" ||
			fail "the man page's section $cmd has an item for $option, which 'aiter-probe $cmd --help' does not list"
	done <"$TMP/items-$cmd"
done

finish
