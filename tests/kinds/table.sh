#!/bin/sh
# SPDX-License-Identifier: MIT
# What every kind of the kind table (src/engine/kind.c) needs besides its
# file, checked against the table itself (tests/kinds/kind-table): its row in
# doc/rules.md's table of kinds, naming each of its options; its name in
# the man page's DESCRIPTION; its row in aiter-probe-rules(5); its tests, a
# case_ "KEY: ..." in a script of tests/kinds/ that Makefile.am runs. The
# docs are written by hand: this names what is missing.
. "$AP_SRCDIR/tests/lib.sh"
RULES_MD="$AP_SRCDIR/doc/rules.md"
MAN_IN="$AP_SRCDIR/doc/aiter-probe.1.in"
KINDS="$TMP/kinds"

case_ "the kind table lists its kinds"
"$AP_BUILDDIR/tests/kinds/kind-table" >"$KINDS" || fail "kind-table failed"
[ -s "$KINDS" ] || fail "kind-table listed no kind"
cut -d' ' -f1 "$KINDS" >"$TMP/keys"

# doc/rules.md's table of kinds: the rows under its header, up to the first line
# that is no row.
awk '/^\| key \| value \| other keys \| matches \|$/ { t = 1; next }
	t && !/^\|/ { exit }
	t' "$RULES_MD" >"$TMP/readme-rows"

case_ "doc/rules.md: a row for each kind, naming each of its options"
while read -r key options; do
	row=$(grep -F "| \`$key\` |" "$TMP/readme-rows")
	if [ -z "$row" ]; then
		fail "kind '$key' has no row in doc/rules.md's table of kinds (| key | value | other keys | matches |)"
		continue
	fi
	for option in $options; do
		case $row in
		*"\`$option\`"*) ;;
		*) fail "doc/rules.md's row for kind '$key' does not name its option '$option'" ;;
		esac
	done
done <"$KINDS"

case_ "doc/rules.md: no row for a key that is no kind"
sed -n 's/^| `\([^`]*\)` |.*/\1/p' "$TMP/readme-rows" >"$TMP/readme-keys"
while read -r key; do
	grep -qxF "$key" "$TMP/keys" ||
		fail "doc/rules.md's table of kinds has a row for '$key', which the kind table lacks"
done <"$TMP/readme-keys"

case_ "aiter-probe-rules(5), written from doc/rules.md, names each kind"
# A cell of its table of kinds, as doc/md2man.py writes a key: in bold, on a
# line of its own.
page="$AP_BUILDDIR/doc/aiter-probe-rules.5"
[ -s "$page" ] || fail "no $page"
while read -r key options; do
	grep -qxF "\\fB$(printf %s "$key" | sed 's/-/\\-/g')\\fR" "$page" ||
		fail "kind '$key' has no row in aiter-probe-rules(5)"
done <"$KINDS"

case_ "the man page's DESCRIPTION names each kind in bold"
# The first word of each bold line (.B, .BR, .RB), as roff writes it.
awk '/^\.SH / { d = ($0 == ".SH DESCRIPTION"); next }
	d && /^\.(B|BR|RB) / { sub(/^\.[A-Z]+ /, ""); sub(/^\( /, ""); split($0, w, " "); print w[1] }' \
	"$MAN_IN" | sed 's/\\-/-/g; s/[:,;)]*$//' >"$TMP/man-words"
while read -r key options; do
	grep -qxF "$key" "$TMP/man-words" ||
		fail "kind '$key' is not named in doc/aiter-probe.1.in's DESCRIPTION (.B $key, a '-' written '\\-')"
done <"$KINDS"

case_ "each kind has tests in tests/kinds/, run by make check"
# Makefile.am's TESTS_SH, one script a line.
awk '/^TESTS_SH =/ { t = 1; next } t { print $1 } t && !/\\$/ { exit }' \
	"$AP_SRCDIR/Makefile.am" >"$TMP/tests-sh"
while read -r key options; do
	tested=
	for script in $(grep -lF "case_ \"$key: " "$AP_SRCDIR"/tests/kinds/*.sh); do
		grep -qxF "tests/kinds/${script##*/}" "$TMP/tests-sh" && tested=1
	done
	[ -n "$tested" ] ||
		fail "kind '$key' has no tests: no case_ \"$key: ...\" in a script of tests/kinds/ that Makefile.am's TESTS_SH lists"
done <"$KINDS"

finish
