#!/bin/sh
# SPDX-License-Identifier: MIT
# aiter-probe diff: the exact text and JSON reports, the --fail-on classes
# and exit statuses, refusals of bad input, and a diff of two scanned trees
# that differ in one reducer case.
. "$AP_SRCDIR/tests/lib.sh"
MAN="$AP_SRCDIR/tests/manifests"
EXP="$AP_SRCDIR/tests/expected"
set -e

# expect_quiet out|err: the command printed nothing there.
expect_quiet() {
	[ ! -s "$TMP/$1" ] || { fail "$1 is not empty"; sed 's/^/  /' "$TMP/$1" >&2; }
}
# The reports name the manifests as given: run from their folder.
cd "$MAN"

case_ "text report"
probe diff good.json second.json
expect_rc 0
diff -u "$EXP/diff-good-second.txt" "$TMP/out" >&2 || fail "text report differs"
expect_quiet err

case_ "json report"
probe diff good.json second.json --format json
expect_rc 0
diff -u "$EXP/diff-good-second.json" "$TMP/out" >&2 || fail "json report differs"

case_ "reversed: gained and an added case"
probe diff second.json good.json --format=json
expect_rc 0
expect_json 'j["capabilities"][0]["change"]' gained
expect_json 'j["cases"][0]["added"]' "['heads=24 head_dim=512']"
expect_json 'j["summary"]' "{'lost': 0, 'changed': 2, 'differences': 3}"

case_ "identical manifests"
probe diff good.json good.json --fail-on any
expect_rc 0
expect_out "old: good.json (aiter 0.1.5)
new: good.json (aiter 0.1.5)

no differences"

# --fail-on: 1 exactly when the class is present.
for spec in "good.json second.json lost 1" "good.json second.json changed 1" \
	"good.json second.json any 1" "second.json good.json lost 0" \
	"second.json good.json changed 1" "good.json good.json any 0"; do
	set -- $spec
	case_ "--fail-on $3: $1 -> $2"
	probe diff "$1" "$2" --fail-on "$3"
	expect_rc "$4"
done

# Only a case table differs: "any" fails, "changed" does not.
sed 's/"head_dim": "128"/"head_dim": "256"/' good.json >"$TMP/cases-only.json"
case_ "case table only"
probe diff good.json "$TMP/cases-only.json" --fail-on changed
expect_rc 0
expect_out_has "    - heads=16 head_dim=128"
expect_out_has "    + heads=16 head_dim=256"
expect_out_has "summary: 0 lost, 0 changed, 1 in all"
probe diff good.json "$TMP/cases-only.json" --fail-on any
expect_rc 1

# A capability that disappears while unsupported is a change, not a loss.
sed 's/"mla.decode.native_h24"/"mla.decode.renamed"/' second.json >"$TMP/renamed.json"
case_ "unsupported capability removed"
probe diff second.json "$TMP/renamed.json" --fail-on lost
expect_rc 0
expect_out_has "  changed  mla.decode.native_h24: unsupported -> absent"
expect_out_has "  changed  mla.decode.renamed: absent -> unsupported"

case_ "truncated manifest"
probe diff good.json invalid-truncated.json --fail-on any
expect_rc 2
expect_quiet out
expect_err "aiter-probe: invalid-truncated.json:5:16: premature end of input near '\"'"

case_ "newer schema"
probe diff invalid-newer-schema.json good.json
expect_rc 2
expect_err "aiter-probe: invalid-newer-schema.json: schema 'aiter-probe.manifest/2' is newer than this reader understands (aiter-probe.manifest/1)"

case_ "missing manifest"
probe diff good.json nowhere.json
expect_rc 2
expect_err "aiter-probe: nowhere.json: No such file or directory"

case_ "missing key"
grep -v '"root"' good.json >"$TMP/no-root.json"
probe diff good.json "$TMP/no-root.json"
expect_rc 2
expect_err "aiter-probe: $TMP/no-root.json: missing key 'aiter.root'"

case_ "bad --fail-on"
probe diff good.json second.json --fail-on some
expect_rc 2
expect_err "aiter-probe diff: --fail-on takes lost, changed or any, not 'some'
Try 'aiter-probe diff --help'."

case_ "bad --format"
probe diff good.json second.json --format yaml
expect_rc 2
expect_err "aiter-probe diff: --format takes text, json or sarif, not 'yaml'
Try 'aiter-probe diff --help'."

case_ "one manifest"
probe diff good.json
expect_rc 2
expect_err_has "aiter-probe diff: needs two manifests, OLD and NEW"

case_ "three manifests"
probe diff good.json second.json stale.json
expect_rc 2
expect_err_has "aiter-probe diff: unexpected argument 'stale.json'"

case_ "--help"
probe diff --help
expect_rc 0
expect_out_has "Usage: aiter-probe diff OLD NEW [--format text|json|sarif]"

# Two trees that differ in one reducer case, scanned by the tool itself.
case_ "scanned trees"
cp -R "$MAN/tree" "$TMP/a"
cp -R "$MAN/tree" "$TMP/b"
chmod -R u+w "$TMP/a" "$TMP/b"
grep -v 'NUM_HEAD, 24,' "$MAN/tree/csrc/kernels/mla/reduce.cu" >"$TMP/b/csrc/kernels/mla/reduce.cu"
cd "$TMP"
probe scan --aiter-root a --no-launch -o a.json --format json
expect_rc 0
probe scan --aiter-root b --no-launch -o b.json --format json
expect_rc 0
probe diff a.json b.json --format json --fail-on lost
expect_rc 1
expect_json '[(c["id"], c["change"]) for c in j["capabilities"]]' "[('mla.decode.native_h24', 'lost')]"
expect_json '[(r["id"], r["before"], r["after"]) for r in j["rules"]]' "[('mla.reduce.native_h24_d512', 'matched', 'unmatched')]"
expect_json 'j["cases"]' "[{'rule': 'mla.reduce.cases', 'added': [], 'removed': ['heads=24 head_dim=512']}]"
expect_json 'j["summary"]' "{'lost': 1, 'changed': 2, 'differences': 3}"

finish
