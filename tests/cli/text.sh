#!/bin/sh
# SPDX-License-Identifier: MIT
# scan's text for people: goldens at fixed widths (the sample and a fixture
# tree), the grouping of case tables, no line past the width but for a word
# that cannot be broken, colour on and off, and --color's usage error.
# AP_UPDATE_GOLDEN=1 rewrites the goldens instead.
. "$AP_SRCDIR/tests/lib.sh"

# scan_text TREE COLUMNS [OPTION]...: scan's text at that width.
scan_text() {
	_root=$1 _cols=$2
	shift 2
	export COLUMNS="$_cols"
	probe scan --aiter-root "$_root" --no-launch --format text "$@"
	unset COLUMNS
}

# body: stdout from "Capabilities" on (the first lines name the absolute
# root, which depends on the checkout, and wrap with its length).
body() { sed -n '/^Capabilities/,$p'; }

for tree in sample/aiter-root tests/fixtures/traps; do
	for cols in 60 80 200; do
		name=$(basename "$(dirname "$tree")")-$(basename "$tree")-$cols.txt
		case_ "text of $tree at $cols columns"
		scan_text "$AP_SRCDIR/$tree" "$cols"
		expect_rc 0
		# The root as the scan records it: canonical (make distcheck's
		# source folder is reached through ..). The header wraps with the
		# root's length, so it is read as one run of words.
		root=$(cd "$AP_SRCDIR/$tree" && pwd -P)
		header=$(sed '/^Capabilities/,$d' "$TMP/out" | tr -s ' \n' '  ')
		case "$header" in
		"AITER $root (version "*) ;;
		*) fail "header: $header" ;;
		esac
		body <"$TMP/out" >"$TMP/$name"
		golden="$AP_SRCDIR/tests/expected/scan-$name"
		if [ "${AP_UPDATE_GOLDEN:-}" = 1 ]; then
			cp "$TMP/$name" "$golden"
		else
			diff -u "$golden" "$TMP/$name" >&2 || fail "text differs from $golden"
		fi
		[ -z "$(over_width "$cols")" ] || fail "lines past $cols columns: $(over_width "$cols")"
	done
done

case_ "no COLUMNS and no terminal: 80 columns"
probe scan --aiter-root "$AP_SRCDIR/sample/aiter-root" --no-launch --format text
body <"$TMP/out" | diff -u "$AP_SRCDIR/tests/expected/scan-sample-aiter-root-80.txt" - >&2 ||
	fail "not the 80-column text"

# A case table of three captures: values out of order, repeated, one
# missing a capture, one with a space.
TREE="$TMP/tree"
mkdir -p "$TREE/csrc"
cat >"$TREE/csrc/cases.cu" <<'CU'
CASE(bf16, 32, 512)
CASE(bf16, 16, 512)
CASE(bf16, 128, 512)
CASE(bf16, 16, 512)
CASE(fp8, 16, 512)
CASE(fp8, 8, 128)
CASE(bf16, 64, 128)
CASE(bf16, 16, 128)
CU
cat >"$TREE/csrc/one.cu" <<'CU'
ONE(a b)
ONE(a b)
TWO(x)
THREE(x)
CU
cat >"$TMP/pack.yaml" <<'YAML'
rules:
  - id: cases.three
    file: csrc/cases.cu
    regex: 'CASE\((?<dtype>\w+), (?<heads>\d+), (?<head_dim>\d+)\)'
    collect: all
  - id: cases.one
    file: csrc/one.cu
    regex: '(?:ONE|TWO)\((?<arg>[^)]*)\)'
    collect: all
  - id: cases.optional
    file: csrc/one.cu
    regex: '(?<kind>ONE|TWO|THREE)\((?:(?<arg>x)|[^)]*)\)'
    collect: all
  - id: cases.none
    file: csrc/one.cu
    regex: 'nothing here'
  - id: cases.glob
    glob: 'csrc/*.hip'
YAML

case_ "a case table: grouped by all captures but the listed one"
export COLUMNS=60
probe scan --aiter-root "$TREE" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format text
unset COLUMNS
expect_rc 0
body <"$TMP/out" >"$TMP/cases"
cp "$TMP/cases" "$TMP/out"
expect_out "Capabilities
Rules
  matched     cases.three
      csrc/cases.cu:1-8 (7 cases)
      dtype bf16, head_dim 128: heads 16 64
      dtype bf16, head_dim 512: heads 16 32 128
      dtype fp8, head_dim 128: heads 8
      dtype fp8, head_dim 512: heads 16
  matched     cases.one
      csrc/one.cu:1-3 (2 cases)
      arg \"a b\" x
  matched     cases.optional
      csrc/one.cu:1-4 (3 cases)
      arg \"\": kind ONE
      arg x: kind THREE TWO
  unmatched   cases.none
      no match in csrc/one.cu
  unmatched   cases.glob
      no match
Devices: none"

case_ "a case table at 30 columns: the hanging indent cut to 8"
export COLUMNS=30
probe scan --aiter-root "$TREE" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format text
unset COLUMNS
expect_rc 0
sed -n '/cases.three/,/cases.one/p' "$TMP/out" >"$TMP/cases"
cp "$TMP/cases" "$TMP/out"
expect_out "  matched     cases.three
      csrc/cases.cu:1-8 (7
          cases)
      dtype bf16, head_dim
        128: heads 16 64
      dtype bf16, head_dim
        512: heads 16 32 128
      dtype fp8, head_dim 128:
        heads 8
      dtype fp8, head_dim 512:
        heads 16
  matched     cases.one"

# Colour: the status words painted, nothing else.
G=$(printf '\033[32m') R=$(printf '\033[31m') Y=$(printf '\033[33m') B=$(printf '\033[1m') N=$(printf '\033[0m')
ESC=$(printf '\033')
for opt in --color --color=always; do
	case_ "$opt: painted"
	scan_text "$AP_SRCDIR/sample/aiter-root" 80 "$opt"
	expect_rc 0
	expect_out_has "${B}Capabilities$N"
	expect_out_has "  ${G}supported  $N mla.decode.native_h24"
	expect_out_has "  ${R}unsupported$N mla.decode_fwd.causal"
	expect_out_has "  ${Y}unmatched  $N mla.decode_fwd.params.causal"
	expect_out_has "  ${R}missing    $N mla.triton_decode_fwd.binds_segmented"
	# the same text once the colours are taken out
	sed "s/$ESC\[[0-9;]*m//g" "$TMP/out" | body |
		diff -u "$AP_SRCDIR/tests/expected/scan-sample-aiter-root-80.txt" - >&2 ||
		fail "the painted text is not the plain one"
done

for opt in --color=never --color=auto; do
	case_ "$opt on a pipe: plain"
	scan_text "$AP_SRCDIR/sample/aiter-root" 80 "$opt"
	expect_rc 0
	grep -q "$ESC" "$TMP/out" && fail "colour codes in the text"
done

case_ "the last --color wins"
scan_text "$AP_SRCDIR/sample/aiter-root" 80 --color --color=never
grep -q "$ESC" "$TMP/out" && fail "colour codes in the text"

# On a terminal (script(1) gives one): auto paints, unless TERM=dumb or
# NO_COLOR is set; always paints even then.
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
	# on_tty ENV... -- OPTION...: scan's text through a pseudo-terminal.
	on_tty() {
		env_args=
		while [ "$1" != -- ]; do env_args="$env_args $1"; shift; done
		shift
		script -qec "env $env_args AITER_PROBE_DATADIR='$AP_SRCDIR' '$AP' scan \
			--aiter-root '$AP_SRCDIR/sample/aiter-root' --no-launch $*" /dev/null \
			>"$TMP/out" 2>"$TMP/err" </dev/null
	}
	case_ "auto on a terminal: painted"
	on_tty TERM=xterm -- --color=auto
	grep -qF "${G}supported" "$TMP/out" || fail "not painted"
	case_ "auto on a terminal, TERM=dumb: plain"
	on_tty TERM=dumb --
	grep -q "$ESC" "$TMP/out" && fail "colour codes with TERM=dumb"
	case_ "auto on a terminal, NO_COLOR: plain"
	on_tty TERM=xterm NO_COLOR=1 -- --color=auto
	grep -q "$ESC" "$TMP/out" && fail "colour codes with NO_COLOR"
	case_ "always on a terminal, TERM=dumb: painted"
	on_tty TERM=dumb -- --color=always
	grep -qF "${G}supported" "$TMP/out" || fail "not painted"
else
	echo "# no script(1): the terminal cases are left to tests/unit/text"
fi

case_ "--color's value"
probe scan --aiter-root "$AP_SRCDIR/sample/aiter-root" --no-launch --color=yes
expect_rc 2
expect_err "aiter-probe scan: --color takes auto, always or never, not 'yes'
Try 'aiter-probe scan --help'."
expect_no_out() { [ ! -s "$TMP/out" ] || fail "stdout not empty"; }
expect_no_out
probe scan --aiter-root "$AP_SRCDIR/sample/aiter-root" --no-launch --color=
expect_rc 2
expect_err "aiter-probe scan: --color takes auto, always or never, not ''
Try 'aiter-probe scan --help'."
# An optional value comes only after '=': the next word is an operand.
probe scan --aiter-root "$AP_SRCDIR/sample/aiter-root" --no-launch --color always
expect_rc 2
expect_err "aiter-probe scan: unexpected argument 'always'
Try 'aiter-probe scan --help'."
probe scan --aiter-root "$AP_SRCDIR/sample/aiter-root" --no-launch --colour
expect_rc 2
expect_err "aiter-probe scan: unknown option '--colour'
Try 'aiter-probe scan --help'."

finish
