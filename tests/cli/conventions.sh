#!/bin/sh
# SPDX-License-Identifier: MIT
# The argument conventions every command keeps: '--' ends the options, a
# short option takes its value glued on (-oFILE), '-o -' is stdout, one
# wording for unknown options and extra operands, verify --format json,
# and the bug-report address in --help.
. "$AP_SRCDIR/tests/lib.sh"
FIX="$AP_SRCDIR/tests/fixtures"
ROOT="$FIX/h24-native"

case_ "--help names where to report bugs"
probe --help
expect_rc 0
expect_out_has "Report bugs to <https://"

case_ "the man page names the files where this build installs them"
man="$AP_BUILDDIR/doc/aiter-probe.1"
grep -qF ".I $AP_PKGDATADIR/rules/" "$man" || fail "FILES lacks $AP_PKGDATADIR/rules/"
grep -qF ".I $AP_PKGLIBEXECDIR/aiter-probe-launcher" "$man" || fail "FILES lacks the launcher"
grep -q "^\.I /.*/bash-completion/completions/aiter-probe .*/zsh/site-functions/_aiter-probe$" "$man" ||
	fail "FILES lacks the completions"
! grep -n '@[a-zA-Z_]*@' "$man" >&2 || fail "unexpanded placeholders"
grep -qF ".UR https://" "$man" || fail "no bug-report address"
head -3 "$man" | grep -qF "\"aiter-probe $("$AP" --version | head -1 | cut -d' ' -f2)\"" \
	|| fail "the version in .TH is not the tool's"

case_ "the man pages are mandoc -T lint clean"
# .ci/install-deps installs mandoc; a machine without it says so here.
for page in "$man" "$AP_BUILDDIR/doc/aiter-probe-rules.5" "$AP_BUILDDIR/doc/aiter-probe-manifest.5" \
	"$AP_BUILDDIR/doc/libaiter-probe.3"; do
	[ -s "$page" ] || { fail "no $page"; continue; }
	if command -v mandoc >/dev/null 2>&1; then
		mandoc -T lint "$page" >"$TMP/lint" 2>&1 || fail "mandoc -T lint: $(cat "$TMP/lint")"
	else
		echo "no mandoc: the lint of ${page##*/} is not checked" >&2
	fi
done

case_ "scan -oFILE"
probe scan --aiter-root "$ROOT" --no-launch "-o$TMP/glued.json"
expect_rc 0
expect_no_out
[ -s "$TMP/glued.json" ] || fail "no manifest at $TMP/glued.json"

case_ "scan -o - writes the manifest to stdout, and only it"
cd "$TMP"
probe scan --aiter-root "$ROOT" --no-launch -o -
cd "$OLDPWD"
expect_rc 0
expect_json 'j["schema"]' "aiter-probe.manifest/1"
[ ! -e "$TMP/-" ] || fail "a file named '-' was written"

case_ "scan -o - --format json is the same"
probe scan --aiter-root "$ROOT" --no-launch -o - --format json
expect_rc 0
expect_json 'j["schema"]' "aiter-probe.manifest/1"

case_ "scan -o - --format text is refused"
probe scan --aiter-root "$ROOT" --no-launch -o - --format text
expect_rc 2
expect_err "aiter-probe scan: -o - writes the JSON manifest to stdout; --format text cannot go there too
Try 'aiter-probe scan --help'."

case_ "scan takes no operand"
probe scan --aiter-root "$ROOT" extra
expect_rc 2
expect_err "aiter-probe scan: unexpected argument 'extra'
Try 'aiter-probe scan --help'."

case_ "after -- an option is an operand"
probe scan --aiter-root "$ROOT" -- --no-launch
expect_rc 2
expect_err "aiter-probe scan: unexpected argument '--no-launch'
Try 'aiter-probe scan --help'."

mkdir "$TMP/tree"
cp -R "$ROOT/." "$TMP/tree/"
probe scan --aiter-root "$TMP/tree" --no-launch -o "$TMP/-dash.json"
expect_rc 0
probe verify --format json "$TMP/-dash.json"
n=$(json_get 'j["inputs"]')

case_ "verify -- MANIFEST whose name starts with a dash"
cd "$TMP"
probe verify -- -dash.json
cd "$OLDPWD"
expect_rc 0
expect_out "-dash.json: fresh ($n inputs under $TMP/tree)"

case_ "verify without -- takes -dash.json for an option"
cd "$TMP"
probe verify -dash.json
cd "$OLDPWD"
expect_rc 2
expect_err "aiter-probe verify: unknown option '-dash.json'
Try 'aiter-probe verify --help'."

case_ "verify: a second operand"
probe verify "$TMP/-dash.json" more.json
expect_rc 2
expect_err "aiter-probe verify: unexpected argument 'more.json'
Try 'aiter-probe verify --help'."

case_ "verify --format json, fresh"
probe verify --format json "$TMP/-dash.json"
expect_rc 0
expect_json 'j["fresh"], j["stale"], j["root"]' "(True, [], '$TMP/tree')"

case_ "verify --format json, stale"
echo '// changed' >>"$TMP/tree/csrc/kernels/mla/reduce.cu"
probe verify --format=json "$TMP/-dash.json"
expect_rc 1
expect_json 'j["fresh"], j["stale"]' "(False, [{'path': 'csrc/kernels/mla/reduce.cu', 'change': 'changed'}])"

case_ "verify --format yaml"
probe verify --format yaml "$TMP/-dash.json"
expect_rc 2
expect_err "aiter-probe verify: --format takes text or json, not 'yaml'
Try 'aiter-probe verify --help'."

case_ "diff -- with operands"
probe diff -- "$TMP/-dash.json" "$TMP/-dash.json"
expect_rc 0

case_ "diff unknown option"
probe diff --frob a b
expect_rc 2
expect_err "aiter-probe diff: unknown option '--frob'
Try 'aiter-probe diff --help'."

finish
