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

# SARIF: the golden log, checked for structure as code scanning reads it.
SARIF_CHECK="$AP_SRCDIR/tests/cli/sarif-check.py"
# sarif_ok: stdout is a SARIF log of the expected structure.
sarif_ok() {
	"${PYTHON3:-python3}" "$SARIF_CHECK" "$TMP/out" "$@" >"$TMP/check" ||
		{ fail "$(cat "$TMP/check")"; return 0; }
}

case_ "sarif report"
probe diff good.json second.json --format sarif
expect_rc 0
diff -u "$EXP/diff-good-second.sarif" "$TMP/out" >&2 || fail "sarif report differs"
expect_quiet err
sarif_ok
cp "$TMP/out" "$TMP/good-second.sarif"

case_ "sarif --fail-on lost"
probe diff good.json second.json --format=sarif --fail-on lost
expect_rc 1
cmp -s "$TMP/out" "$TMP/good-second.sarif" || fail "the log differs with --fail-on"

case_ "sarif reversed: the gain, the rule and the case are notes, at NEW's lines"
probe diff second.json good.json --format sarif --fail-on changed
expect_rc 1
sarif_ok
expect_json '[(r["ruleId"], r["level"], r["properties"]["change"]) for r in j["runs"][0]["results"]]' \
	"[('capability/mla.decode.native_h24', 'note', 'gained'), ('rule/mla.reduce.native_h24_d512', 'note', 'changed'), ('rule/mla.reduce.cases', 'note', 'added')]"
expect_json '[r["message"]["text"] for r in j["runs"][0]["results"][1:]]' \
	"['changed: rule mla.reduce.native_h24_d512: unmatched -> matched (in csrc/kernels/mla/reduce.cu)', 'gained: case heads=24 head_dim=512 of rule mla.reduce.cases (at csrc/kernels/mla/reduce.cu:10)']"
expect_json '[[(l["physicalLocation"]["artifactLocation"]["uri"], l["physicalLocation"]["region"]["startLine"]) for l in r["locations"]] for r in j["runs"][0]["results"]]' \
	"[[('csrc/kernels/mla/reduce.cu', 10), ('csrc/kernels/mla/metadata/v1_2_device.cuh', 6)], [('csrc/kernels/mla/reduce.cu', 10)], [('csrc/kernels/mla/reduce.cu', 10)]]"
expect_json 'j["runs"][0]["properties"]["analyzed"]' new

if [ -w /dev/full ]; then
	case_ "sarif to a full disk"
	set +e
	"$AP" diff good.json second.json --format sarif >/dev/full 2>"$TMP/err"
	rc=$?
	set -e
	expect_rc 2
	expect_err "aiter-probe: writing to stdout: No space left on device"
fi

case_ "sarif identical manifests"
probe diff good.json good.json --format sarif --fail-on any
expect_rc 0
sarif_ok
expect_json '(j["runs"][0]["tool"]["driver"]["rules"], j["runs"][0]["results"])' "([], [])"

# Variants of OLD written for the locations: a rule whose file was missing,
# a capability with no evidence, a name that needs escaping, lines moved.
"${PYTHON3:-python3}" - good.json second.json "$TMP" <<'PYEOF'
import copy, json, sys
good, second = (json.load(open(p)) for p in sys.argv[1:3])
out = sys.argv[3]
def write(name, doc):
    with open(out + "/" + name, "w") as f:
        json.dump(doc, f, indent=1)
m = copy.deepcopy(good)
m["capabilities"]["mla.decode.native_h24"]["evidence"] = []
m["rules"]["mla.reduce.native_h24_d512"]["matches"] = []
m["rules"]["mla.reduce.native_h24_d512"]["status"] = "missing"
write("unlocated.json", m)
m = copy.deepcopy(good)
del m["rules"]["mla.reduce.native_h24_d512"]
write("no-rule.json", m)
m = copy.deepcopy(good)
m["aiter"]["root"] = "/srv/my aiter/100%"
m["capabilities"]["mla.decode.native_h24"]["evidence"] = ["csrc/mla/r\u00e9duce #2.cu:7", "csrc/mla/plain.cu",
    ":5", "", "csrc/a.cu:0", "csrc/b.cu:99999999999999999999999", "csrc/c.cu:7x", "c:/d.cu:3"]
write("escaped.json", m)
m = copy.deepcopy(good)
m["aiter"]["root"] = "/srv/moved"
for rule in m["rules"].values():
    for match in rule["matches"]:
        match["line"] += 100
m["capabilities"]["mla.decode.native_h24"]["evidence"] = ["csrc/kernels/mla/reduce.cu:110", "csrc/kernels/mla/metadata/v1_2_device.cuh:106"]
write("moved.json", m)
m["aiter"]["root"] = "aiter"
write("relative.json", m)
m = copy.deepcopy(good)
m["capabilities"]["mla.decode.native_h24"]["evidence"] = ["/etc/passwd:1", "../../../etc/passwd:1",
    "csrc/../../../etc/passwd:2", "csrc/kernels/..:3", "//etc/passwd", "csrc/kernels/mla/reduce.cu:10"]
m["rules"]["mla.reduce.native_h24_d512"]["file"] = "/etc/passwd"
m["rules"]["mla.reduce.cases"]["file"] = "../../../etc/passwd"
write("outside.json", m)
m = copy.deepcopy(good)
cases = m["rules"]["mla.reduce.cases"]["matches"]
cases.append(dict(cases[2], line=30))
write("repeated.json", m)
m = copy.deepcopy(good)
del m["rules"]["mla.reduce.cases"]["matches"][1:]
write("one-case.json", m)
PYEOF

case_ "a relative root is refused: its inputs would move with the working directory"
probe diff "$TMP/relative.json" second.json --format sarif
expect_rc 2
expect_err "aiter-probe: $TMP/relative.json: 'aiter.root' must be an absolute path, not 'aiter'"
expect_no_out

case_ "sarif: a rule without a line in NEW is at line 1 of its file there, OLD's place related"
probe diff "$TMP/unlocated.json" second.json --format sarif
expect_rc 0
sarif_ok
expect_json '[(r["ruleId"], [l["physicalLocation"] for l in r["locations"]], "relatedLocations" in r) for r in j["runs"][0]["results"][:2]]' \
	"[('capability/mla.decode.native_h24', [{'artifactLocation': {'uri': 'csrc/kernels/mla/metadata/v1_2_device.cuh', 'uriBaseId': '%SRCROOT%'}, 'region': {'startLine': 6}}], False), ('rule/mla.reduce.native_h24_d512', [{'artifactLocation': {'uri': 'csrc/kernels/mla/reduce.cu', 'uriBaseId': '%SRCROOT%'}, 'region': {'startLine': 1}}], True)]"
expect_json 'j["runs"][0]["results"][1]["message"]["text"]' \
	"changed: rule mla.reduce.native_h24_d512: missing -> unmatched (in csrc/kernels/mla/reduce.cu)"
# The checker refuses a result without a location, as code scanning does.
"${PYTHON3:-python3}" -c 'import json, sys
j = json.load(open(sys.argv[1])); del j["runs"][0]["results"][0]["locations"]
json.dump(j, open(sys.argv[1], "w"))' "$TMP/out"
"${PYTHON3:-python3}" "$SARIF_CHECK" "$TMP/out" >"$TMP/check" && fail "the check passed a result without a location"
grep -qF "results[0]: no location" "$TMP/check" || fail "check said: $(cat "$TMP/check")"

case_ "sarif: a file NEW lacks puts the result on aiter/__init__.py, else NEW's first file read"
"${PYTHON3:-python3}" - second.json "$TMP" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["rules"]["mla.reduce.native_h24_d512"].update(status="missing", file=None, matches=[])
m["capabilities"]["mla.decode.native_h24"]["evidence"] = []
for i in m["inputs"]:
    if i["path"] == "csrc/kernels/mla/reduce.cu":
        i.update(sha256=None, bytes=None, seen="absent")
json.dump(m, open(sys.argv[2] + "/no-reduce.json", "w"))
m["inputs"].append({"path": "aiter/__init__.py", "sha256": "0" * 64, "bytes": 1})
json.dump(m, open(sys.argv[2] + "/no-reduce-init.json", "w"))
for i in m["inputs"]:
    i.update(sha256=None, bytes=None, seen="absent")
json.dump(m, open(sys.argv[2] + "/no-inputs.json", "w"))
PYEOF
for spec in "no-reduce csrc/kernels/mla/metadata/v1_2_device.cuh" "no-reduce-init aiter/__init__.py" \
	"no-inputs aiter/__init__.py"; do
	set -- $spec
	probe diff good.json "$TMP/$1.json" --format sarif
	expect_rc 0
	sarif_ok
	expect_json '[(l["physicalLocation"]["artifactLocation"]["uri"], l["physicalLocation"]["region"]["startLine"]) for l in j["runs"][0]["results"][1]["locations"]]' \
		"[('$2', 1)]"
	expect_json '[l["physicalLocation"]["artifactLocation"]["uri"] for l in j["runs"][0]["results"][1]["relatedLocations"]]' \
		"['csrc/kernels/mla/reduce.cu']"
done

case_ "sarif: a rule absent from OLD is located at NEW's file"
probe diff "$TMP/no-rule.json" second.json --format sarif
expect_rc 0
sarif_ok
expect_json '[(r["ruleId"], r["level"], [l["physicalLocation"]["artifactLocation"]["uri"] for l in r["locations"]], "relatedLocations" in r, r["message"]["text"]) for r in j["runs"][0]["results"] if r["ruleId"].startswith("rule/mla.reduce.native")]' \
	"[('rule/mla.reduce.native_h24_d512', 'warning', ['csrc/kernels/mla/reduce.cu'], False, 'changed: rule mla.reduce.native_h24_d512: absent -> unmatched')]"
expect_json '[r["shortDescription"]["text"] for r in j["runs"][0]["tool"]["driver"]["rules"] if r["id"] == "rule/mla.reduce.native_h24_d512"]' \
	"['aiter-probe rule mla.reduce.native_h24_d512, read in csrc/kernels/mla/reduce.cu']"

case_ "sarif: rules described from the packs, or said to be in none"
probe diff good.json second.json --format sarif --no-default-rules
expect_rc 0
sarif_ok
expect_json '[r["fullDescription"]["text"] for r in j["runs"][0]["tool"]["driver"]["rules"]][:1]' \
	"[\"AITER capability mla.decode.native_h24, as aiter-probe's probes decide it. No loaded rule pack defines it.\"]"
probe diff good.json second.json --format sarif
expect_json '[(r["name"], r["fullDescription"]["text"], r["help"]["text"].split("\n\n")[1:]) for r in j["runs"][0]["tool"]["driver"]["rules"]][:1]' \
	"[('mla.decode.native_h24', 'MLA decode runs 24 heads (head dim 512) without padding to 32', ['When it is unsupported: vLLM pads the 24 query heads to 32 and slices the output (correct, slower); SGLang pads or takes another decode path.', 'Defined in probes/mla.yaml, line 9.'])]"
expect_json 'j["runs"][0]["tool"]["driver"]["informationUri"]' "https://github.com/aiter-probe/aiter-probe"

case_ "sarif: packs that do not load"
AITER_PROBE_DATADIR="$TMP/no-packs" probe diff good.json second.json --format sarif
expect_rc 2
expect_err "aiter-probe: no rule packs in $TMP/no-packs (set AITER_PROBE_DATADIR, or pass --rules PATH)"
expect_no_out
case_ "diff: --aiter-root is no diff option"
probe diff good.json second.json --aiter-root .
expect_rc 2
expect_err "aiter-probe diff: unknown option '--aiter-root'
Try 'aiter-probe diff --help'."

case_ "sarif: URIs percent-encoded, evidence without a file or a usable line"
probe diff "$TMP/escaped.json" second.json --format sarif
expect_rc 0
sarif_ok
expect_json 'j["runs"][0]["originalUriBaseIds"]["OLDROOT"]["uri"]' "file:///srv/my%20aiter/100%25/"
expect_json '[(l["physicalLocation"]["artifactLocation"]["uri"], l["physicalLocation"].get("region")) for l in j["runs"][0]["results"][0]["relatedLocations"]]' \
	"[('csrc/mla/r%C3%A9duce%20%232.cu', {'startLine': 7}), ('csrc/mla/plain.cu', {'startLine': 1}), ('csrc/a.cu', {'startLine': 1}), ('csrc/b.cu', {'startLine': 1}), ('csrc/c.cu%3A7x', {'startLine': 1}), ('c%3A/d.cu', {'startLine': 3})]"

case_ "sarif: fingerprints do not move with the lines, nor with the root"
probe diff "$TMP/moved.json" second.json --format sarif
expect_rc 0
sarif_ok
expect_json 'j["runs"][0]["originalUriBaseIds"]["OLDROOT"]["uri"]' "file:///srv/moved/"
expect_json '[l["physicalLocation"]["region"]["startLine"] for r in j["runs"][0]["results"] for l in r["relatedLocations"]]' \
	"[110, 106, 110, 110]"
json_get '[r["partialFingerprints"] for r in j["runs"][0]["results"]]' >"$TMP/fp-moved"
cp "$TMP/good-second.sarif" "$TMP/out"
json_get '[r["partialFingerprints"] for r in j["runs"][0]["results"]]' >"$TMP/fp-good"
cmp -s "$TMP/fp-good" "$TMP/fp-moved" || fail "fingerprints moved with the lines"
expect_json 'len(set(v for r in j["runs"][0]["results"] for v in r["partialFingerprints"].values()))' 3

case_ "sarif: no related location outside OLD's tree (absolute, '..'), the message still names the file"
probe diff "$TMP/outside.json" second.json --format sarif
expect_rc 0
sarif_ok
expect_json '[(r["ruleId"], [(l["physicalLocation"]["artifactLocation"]["uri"], l["physicalLocation"].get("region")) for l in r.get("relatedLocations", [])]) for r in j["runs"][0]["results"]]' \
	"[('capability/mla.decode.native_h24', [('csrc/kernels/mla/reduce.cu', {'startLine': 10})]), ('rule/mla.reduce.native_h24_d512', []), ('rule/mla.reduce.cases', [])]"
expect_json '[r["message"]["text"] for r in j["runs"][0]["results"][1:]]' \
	"['changed: rule mla.reduce.native_h24_d512: matched -> unmatched (was at /etc/passwd:10)', 'lost: case heads=24 head_dim=512 of rule mla.reduce.cases (was at ../../../etc/passwd:10)']"

# Every removed case at its own match, the first when a tuple repeats.
case_ "sarif: removed cases at their lines"
probe diff "$TMP/repeated.json" "$TMP/one-case.json" --format sarif --fail-on any
expect_rc 1
sarif_ok
expect_json '[(r["message"]["text"], [l["physicalLocation"]["region"]["startLine"] for l in r["relatedLocations"]]) for r in j["runs"][0]["results"]]' \
	"[('lost: case heads=16 head_dim=512 of rule mla.reduce.cases (was at csrc/kernels/mla/reduce.cu:9)', [9]), ('lost: case heads=24 head_dim=512 of rule mla.reduce.cases (was at csrc/kernels/mla/reduce.cu:10)', [10]), ('lost: case heads=32 head_dim=512 of rule mla.reduce.cases (was at csrc/kernels/mla/reduce.cu:11)', [11]), ('lost: case heads=64 head_dim=512 of rule mla.reduce.cases (was at csrc/kernels/mla/reduce.cu:12)', [12])]"

# Values: rules with one tuple a side, compared capture by capture.
"${PYTHON3:-python3}" - good.json "$TMP" <<'PYEOF'
import copy, json, sys
good = json.load(open(sys.argv[1]))
def with_values(sig, heads, shrink):
    m = copy.deepcopy(good)
    def rule(params, line):
        return {"status": "matched", "file": "aiter/mla.py",
                "matches": [{"line": line, "text": "def f(", "captures": params}]}
    m["rules"]["v.sig"] = rule({"params": sig}, 3)
    m["rules"]["v.bound"] = rule({"heads": heads}, 5)
    m["rules"]["v.shrink"] = rule({"params": shrink}, 7)
    m["inputs"].append({"path": "aiter/mla.py", "sha256": "0" * 64, "bytes": 10})
    return m
json.dump(with_values("q, kv, o", "16", "q, kv, o"), open(sys.argv[2] + "/v-old.json", "w"))
json.dump(with_values("q, kv, o, shared_w1=\u2026, shared_w2=\u2026, a_rather_long_parameter_name=\u2026",
                      "96", "q, o"), open(sys.argv[2] + "/v-new.json", "w"))
PYEOF

case_ "values: a signature that gains parameters and a rising bound are gains, a lost parameter a loss"
export COLUMNS=60
probe diff "$TMP/v-old.json" "$TMP/v-new.json" --fail-on changed
unset COLUMNS
expect_rc 0
expect_out "old: $TMP/v-old.json (aiter 0.1.5)
new: $TMP/v-new.json (aiter 0.1.5)

values (rules with one match on each side):
  gained   v.bound: heads 16 -> 96
  lost     v.shrink: params - kv
  gained   v.sig: params + shared_w1=…, shared_w2=…,
           a_rather_long_parameter_name=…

summary: 0 lost, 0 changed, 3 in all"
[ -z "$(over_width 60)" ] || fail "lines over 60 columns: $(over_width 60)"
probe diff "$TMP/v-old.json" "$TMP/v-new.json" --format json --fail-on any
expect_rc 1
expect_json '[(v["rule"], v["change"], [(c["name"], c["change"], c.get("added"), c.get("removed")) for c in v["captures"]]) for v in j["values"]]' \
	"[('v.bound', 'gained', [('heads', 'gained', None, None)]), ('v.shrink', 'lost', [('params', 'lost', [], ['kv'])]), ('v.sig', 'gained', [('params', 'gained', ['shared_w1=…', 'shared_w2=…', 'a_rather_long_parameter_name=…'], [])])]"
expect_json 'j["cases"]' "[]"
probe diff "$TMP/v-old.json" "$TMP/v-new.json" --format sarif
expect_rc 0
sarif_ok
expect_json '[(r["ruleId"], r["level"], r["properties"]["change"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in j["runs"][0]["results"]]' \
	"[('rule/v.bound', 'note', 'gained', 5), ('rule/v.shrink', 'warning', 'lost', 7), ('rule/v.sig', 'note', 'gained', 3)]"
expect_json 'j["runs"][0]["results"][0]["message"]["text"]' "gained: rule v.bound: heads 16 -> 96 (was at aiter/mla.py:5)"

case_ "values: a reordered signature is a change, a falling bound a loss"
"${PYTHON3:-python3}" - "$TMP/v-old.json" "$TMP" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["rules"]["v.sig"]["matches"][0]["captures"]["params"] = "kv, q, o"
m["rules"]["v.bound"]["matches"][0]["captures"]["heads"] = "8"
json.dump(m, open(sys.argv[2] + "/v-reordered.json", "w"))
PYEOF
probe diff "$TMP/v-old.json" "$TMP/v-reordered.json"
expect_rc 0
expect_out_has "  lost     v.bound: heads 16 -> 8"
expect_out_has "  changed  v.sig: params reordered"

case_ "--color paints the change words and the verdicts"
probe diff good.json second.json --color
expect_rc 0
expect_out_has "$(printf '  \033[31mlost    \033[0m mla.decode.native_h24: \033[32msupported\033[0m -> \033[31munsupported\033[0m')"
expect_out_has "$(printf '    \033[31m-\033[0m heads=24 head_dim=512')"
probe diff good.json second.json --color=never
expect_rc 0
cmp -s "$TMP/out" "$EXP/diff-good-second.txt" || fail "--color=never painted"
probe diff good.json second.json --color=sometimes
expect_rc 2
expect_err "aiter-probe diff: --color takes auto, always or never, not 'sometimes'
Try 'aiter-probe diff --help'."

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
probe diff a.json b.json --format sarif --fail-on lost
expect_rc 1
sarif_ok
expect_json 'j["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]' "file://$TMP/b/"
expect_json 'j["runs"][0]["originalUriBaseIds"]["OLDROOT"]["uri"]' "file://$TMP/a/"
expect_json '[(r["level"], r["message"]["text"]) for r in j["runs"][0]["results"]]' \
	"[('error', 'lost: capability mla.decode.native_h24: supported -> unsupported (rule mla.reduce.native_h24_d512 did not match in csrc/kernels/mla/reduce.cu)'), ('warning', 'changed: rule mla.reduce.native_h24_d512: matched -> unmatched (was at csrc/kernels/mla/reduce.cu:10)'), ('warning', 'lost: case heads=24 head_dim=512 of rule mla.reduce.cases (was at csrc/kernels/mla/reduce.cu:10)')]"

# Where a viewer opens each location: BASE + URI, for every result.
resolved() {
	"${PYTHON3:-python3}" -c '
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
for r in run["results"]:
    for l in r["locations"] + r.get("relatedLocations", []):
        a = l["physicalLocation"]["artifactLocation"]
        print(run["originalUriBaseIds"][a["uriBaseId"]]["uri"] + a["uri"])' "$TMP/out"
}

case_ "sarif: a wheel's csrc/ is located under aiter_meta/, where it was read"
cp -R "$AP_SRCDIR/tests/fixtures/wheel-layout" "$TMP/wheel"
chmod -R u+w "$TMP/wheel"
# The packs the wheel fixture models: a capability of the others is
# unsupported there and unknown on a missing tree, with no evidence in OLD to
# locate it by (doc/diff.md: SARIF).
set -- --no-default-rules
for pack in mla moe ops vllm-calls; do set -- "$@" --rules "$AP_SRCDIR/rules/$pack.yaml"; done
for pack in mla moe ops vllm; do set -- "$@" --rules "$AP_SRCDIR/probes/$pack.yaml"; done
probe scan --aiter-root "$TMP/wheel" --no-launch -o "$TMP/wheel.json" "$@"
expect_rc 0
probe scan --aiter-root "$AP_SRCDIR/tests/fixtures/h24-missing" --no-launch -o "$TMP/h24-missing.json" "$@"
expect_rc 0
probe diff "$TMP/wheel.json" "$TMP/h24-missing.json" --format sarif
expect_rc 0
sarif_ok
wheel=$(cd "$TMP/wheel" && pwd -P)
expect_json 'sorted(j["runs"][0]["originalUriBaseIds"])' "['%SRCROOT%', 'OLDROOT']"
expect_json 'sorted({l["physicalLocation"]["artifactLocation"]["uri"] for r in j["runs"][0]["results"] for l in r.get("relatedLocations", []) if "csrc/" in l["physicalLocation"]["artifactLocation"]["uri"]})[0]' \
	"aiter_meta/csrc/kernels/mla/metadata/v1_2_device.cuh"
for uri in $(resolved); do
	[ -f "${uri#file://}" ] || fail "no file at $uri"
done

case_ "sarif: a meta folder outside the root has its own base"
"${PYTHON3:-python3}" - "$TMP/wheel.json" "$TMP" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["aiter"]["meta"] = "/srv/aiter meta"
json.dump(m, open(sys.argv[2] + "/outside-meta.json", "w"))
m["aiter"]["meta"] = m["aiter"]["root"] + "/../../etc"
json.dump(m, open(sys.argv[2] + "/climbing-meta.json", "w"))
# Hand-edited spellings of the same places.
root = m["aiter"]["root"]
for name, r, meta in (("slashes", root + "/", root + "//aiter_meta//"),
                      ("same", root + "/", root), ("relative-meta", root, "aiter_meta")):
    m["aiter"]["root"], m["aiter"]["meta"] = r, meta
    json.dump(m, open("%s/%s-meta.json" % (sys.argv[2], name), "w"))
PYEOF
probe diff "$TMP/outside-meta.json" "$TMP/h24-missing.json" --format sarif
expect_rc 0
sarif_ok
expect_json 'j["runs"][0]["originalUriBaseIds"]["OLDMETA"]["uri"]' "file:///srv/aiter%20meta/"
expect_json 'j["runs"][0]["originalUriBaseIds"]["OLDROOT"]["uri"]' "file://$wheel/"
expect_json 'sorted({(l["physicalLocation"]["artifactLocation"]["uriBaseId"], l["physicalLocation"]["artifactLocation"]["uri"].split("/")[0]) for r in j["runs"][0]["results"] for l in r.get("relatedLocations", [])})' \
	"[('OLDMETA', 'csrc'), ('OLDMETA', 'hsa'), ('OLDROOT', 'aiter')]"
# NEW's meta folder outside its root: NEW's locations under AITERMETA.
probe diff "$TMP/h24-missing.json" "$TMP/outside-meta.json" --format sarif
expect_rc 0
expect_json 'j["runs"][0]["originalUriBaseIds"]["AITERMETA"]["uri"]' "file:///srv/aiter%20meta/"
expect_json 'sorted({l["physicalLocation"]["artifactLocation"]["uriBaseId"] for r in j["runs"][0]["results"] for l in r["locations"]})' \
	"['%SRCROOT%', 'AITERMETA']"

case_ "sarif: the meta folder's place however the manifest spells it"
probe diff "$TMP/relative-meta-meta.json" "$TMP/h24-missing.json" --format sarif
expect_rc 2
expect_err "aiter-probe: $TMP/relative-meta-meta.json: 'aiter.meta' must be an absolute path, not 'aiter_meta'"
for name in slashes same; do
	probe diff "$TMP/$name-meta.json" "$TMP/h24-missing.json" --format sarif
	expect_rc 0
	sarif_ok
	json_get 'sorted(j["runs"][0].get("originalUriBaseIds", {}))' >"$TMP/bases"
	json_get 'sorted({l["physicalLocation"]["artifactLocation"]["uriBaseId"] + " " + "/".join(l["physicalLocation"]["artifactLocation"]["uri"].split("/")[:2]) for r in j["runs"][0]["results"] for l in r.get("relatedLocations", []) if "mla_asm" not in l["physicalLocation"]["artifactLocation"]["uri"] and "csrc" in l["physicalLocation"]["artifactLocation"]["uri"]})' >>"$TMP/bases"
	case $name in
	slashes) want="['%SRCROOT%', 'OLDROOT']
['OLDROOT aiter_meta/csrc']" ;;
	same) want="['%SRCROOT%', 'OLDROOT']
['OLDROOT csrc/kernels']" ;;
	esac
	[ "$(cat "$TMP/bases")" = "$want" ] || fail "$name: $(cat "$TMP/bases")"
done

case_ "sarif: a meta folder that climbs out of the root locates nothing there"
probe diff "$TMP/climbing-meta.json" "$TMP/h24-missing.json" --format sarif
expect_rc 0
sarif_ok
expect_json '[l["physicalLocation"]["artifactLocation"]["uri"] for r in j["runs"][0]["results"] for l in r.get("relatedLocations", []) if "csrc" in l["physicalLocation"]["artifactLocation"]["uri"]]' "[]"

finish
