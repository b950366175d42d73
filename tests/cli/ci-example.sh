#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/ci: aiter-change.sh on fixture trees of a change under review
# (pr-base, and heads that drop a case or add one), its exit statuses and
# outputs, the SARIF log it writes, the Code Quality report made from that
# for GitLab, and that both CI files parse as YAML.
. "$AP_SRCDIR/tests/lib.sh"
FIX="$AP_SRCDIR/tests/fixtures"
CI="$AP_SRCDIR/examples/ci"
PY=${PYTHON3:-python3}
export AITER_PROBE="$AP"
unset AITER_CHANGE_FAIL_ON
set -e

# change ARGS...: runs the script as CI does, like probe.
change() {
	set +e
	sh "$CI/aiter-change.sh" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	set -e
}
# sarif EXPR EXPECTED: a Python expression over the log (j) is EXPECTED.
sarif() {
	got=$("$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$TMP/o/aiter-probe.sarif" "$1") || { fail "cannot evaluate $1"; return 0; }
	[ "$got" = "$2" ] || fail "$1 is '$got', expected '$2'"
}
sarif_ok() {
	"$PY" "$AP_SRCDIR/tests/cli/sarif-check.py" "$TMP/o/aiter-probe.sarif" >"$TMP/check" ||
		fail "$(cat "$TMP/check")"
}
expect_quiet_err() { [ ! -s "$TMP/err" ] || fail "stderr: $(cat "$TMP/err")"; }
base=$(cd "$FIX/pr-base" && pwd -P)
head=$(cd "$FIX/pr-drop-h24" && pwd -P)

case_ "a change that drops 24 x 512"
change "$FIX/pr-base" "$FIX/pr-drop-h24" "$TMP/o"
expect_rc 1
expect_err "aiter-change.sh: the change has differences of class 'lost' (see above)"
expect_out_has "  lost     mla.decode.native_h24: supported -> unsupported"
expect_out_has "    - heads=24 head_dim=512"
expect_out_has "summary: 1 lost, 2 changed, 3 in all"
cmp -s "$TMP/out" "$TMP/o/diff.txt" || fail "diff.txt is not what was printed"
for f in base.json head.json; do
	[ -s "$TMP/o/$f" ] || fail "no $f"
done
sarif_ok
# An analysis of the head: located there, the base's lines related.
sarif 'j["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]' "file://$head/"
sarif 'j["runs"][0]["originalUriBaseIds"]["OLDROOT"]["uri"]' "file://$base/"
sarif '[(r["ruleId"], r["level"], [(l["physicalLocation"]["artifactLocation"]["uri"], l["physicalLocation"]["region"]["startLine"]) for l in r["locations"]]) for r in j["runs"][0]["results"]]' \
	"[('capability/mla.decode.native_h24', 'error', [('csrc/kernels/mla/reduce.cu', 1), ('csrc/kernels/mla/metadata/v1_2_device.cuh', 1)]), ('rule/mla.reduce.native_h24_d512', 'warning', [('csrc/kernels/mla/reduce.cu', 1)]), ('rule/mla.reduce.cases', 'warning', [('csrc/kernels/mla/reduce.cu', 14)])]"
sarif '[[(l["physicalLocation"]["artifactLocation"]["uri"], l["physicalLocation"]["region"]["startLine"]) for l in r["relatedLocations"]] for r in j["runs"][0]["results"]]' \
	"[[('csrc/kernels/mla/reduce.cu', 15), ('csrc/kernels/mla/metadata/v1_2_device.cuh', 7)], [('csrc/kernels/mla/reduce.cu', 15)], [('csrc/kernels/mla/reduce.cu', 15)]]"
sarif 'j["runs"][0]["results"][2]["message"]["text"]' \
	"lost: case heads=24 head_dim=512 of rule mla.reduce.cases (was at csrc/kernels/mla/reduce.cu:15)"
cp "$TMP/o/aiter-probe.sarif" "$TMP/drop.sarif"

case_ "a change that adds 48 x 512 and drops nothing"
change "$FIX/pr-base" "$FIX/pr-add-h48" "$TMP/o"
expect_rc 0
expect_quiet_err
expect_out_has "    + heads=48 head_dim=512"
sarif_ok
sarif '[(r["level"], r["message"]["text"], r["locations"][0]["physicalLocation"]) for r in j["runs"][0]["results"]]' \
	"[('note', 'gained: case heads=48 head_dim=512 of rule mla.reduce.cases (at csrc/kernels/mla/reduce.cu:15)', {'artifactLocation': {'uri': 'csrc/kernels/mla/reduce.cu', 'uriBaseId': '%SRCROOT%'}, 'region': {'startLine': 15}})]"

case_ "the same change with AITER_CHANGE_FAIL_ON=any"
AITER_CHANGE_FAIL_ON=any change "$FIX/pr-base" "$FIX/pr-add-h48" "$TMP/o"
expect_rc 1
expect_err "aiter-change.sh: the change has differences of class 'any' (see above)"

# The GitLab job on the default branch: the tree against itself, an empty
# Code Quality report for merge requests to compare with.
case_ "no change"
change "$FIX/pr-base" "$FIX/pr-base" "$TMP/o"
expect_rc 0
expect_out_has "no differences"
sarif 'len(j["runs"][0]["results"])' 0
set +e
"$PY" "$CI/sarif-to-codequality.py" "$TMP/o/aiter-probe.sarif" >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
expect_rc 0
expect_out "[]"

case_ "usage"
change "$FIX/pr-base" "$FIX/pr-base"
expect_rc 2
expect_err "aiter-change.sh: usage: aiter-change.sh BASE_TREE HEAD_TREE OUTDIR"

case_ "no such tree"
change "$FIX/pr-base" "$TMP/nowhere" "$TMP/o"
expect_rc 2
expect_err "aiter-change.sh: no such tree: $TMP/nowhere"

case_ "OUTDIR cannot be made"
: >"$TMP/a-file"
change "$FIX/pr-base" "$FIX/pr-base" "$TMP/a-file/o"
expect_rc 2
expect_err_has "aiter-change.sh: cannot make $TMP/a-file/o"

case_ "a bad AITER_CHANGE_FAIL_ON, refused before the scans"
AITER_CHANGE_FAIL_ON=some change "$FIX/pr-base" "$FIX/pr-drop-h24" "$TMP/bad"
expect_rc 2
expect_err "aiter-change.sh: AITER_CHANGE_FAIL_ON takes lost, changed or any, not 'some'"
[ ! -e "$TMP/bad" ] || fail "it went on to the scans"

case_ "a tree aiter-probe refuses"
AITER_PROBE_DATADIR="$TMP/no-packs" change "$FIX/pr-base" "$FIX/pr-drop-h24" "$TMP/o"
expect_rc 2
expect_err "aiter-probe: no rule packs in $TMP/no-packs (set AITER_PROBE_DATADIR, or pass --rules PATH)"

# GitLab: the Code Quality report made from the log.
case_ "code quality report"
set +e
"$PY" "$CI/sarif-to-codequality.py" "$TMP/drop.sarif" >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
expect_rc 0
expect_quiet_err
expect_json '[(f["check_name"], f["severity"], f["location"]) for f in j]' \
	"[('capability/mla.decode.native_h24', 'critical', {'path': 'csrc/kernels/mla/reduce.cu', 'lines': {'begin': 1}}), ('rule/mla.reduce.native_h24_d512', 'major', {'path': 'csrc/kernels/mla/reduce.cu', 'lines': {'begin': 1}}), ('rule/mla.reduce.cases', 'major', {'path': 'csrc/kernels/mla/reduce.cu', 'lines': {'begin': 14}})]"
expect_json 'len(set(f["fingerprint"] for f in j))' 3

case_ "code quality: an unlocated result is left out"
"$PY" - "$TMP/drop.sarif" "$TMP/unlocated.sarif" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
del j["runs"][0]["results"][0]["locations"]
json.dump(j, open(sys.argv[2], "w"))
PYEOF
set +e
"$PY" "$CI/sarif-to-codequality.py" "$TMP/unlocated.sarif" >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
expect_rc 0
expect_err "sarif-to-codequality.py: 1 result(s) without a location left out"
expect_json 'len(j)' 2

case_ "code quality: not a log"
set +e
"$PY" "$CI/sarif-to-codequality.py" "$TMP/o/base.json" >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
expect_rc 2
expect_err "sarif-to-codequality.py: $TMP/o/base.json: not a log aiter-probe wrote ('runs')"

# shellcheck (Debian's package) on the scripts CI runs; skipped without it.
case_ "shellcheck: the CI script"
if command -v shellcheck >/dev/null 2>&1; then
	shellcheck "$CI/aiter-change.sh" >"$TMP/out" 2>&1 || fail "shellcheck: $(head -n 5 "$TMP/out")"
else
	echo "skipped [$current]: no shellcheck"
fi

# The CI files parse, and run the script. PyYAML (bound to libyaml when
# built so) is the parser at hand; without it this case is skipped.
case_ "CI files parse as YAML"
if "$PY" -c 'import yaml' 2>/dev/null; then
	set +e
	"$PY" - "$CI/github-actions.yml" "$CI/gitlab-ci.yml" >"$TMP/out" 2>"$TMP/err" <<'PYEOF'
import sys, yaml
gh = yaml.safe_load(open(sys.argv[1]))
gl = yaml.safe_load(open(sys.argv[2]))
steps = gh["jobs"]["capabilities"]["steps"]
print(sorted(s["uses"].split("@")[0] for s in steps if "uses" in s))
print([s["run"] for s in steps if "aiter-change.sh" in s.get("run", "")])
print(gl["aiter-probe"]["artifacts"]["reports"], gl["aiter-probe"]["script"][-1])
upload = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif")][0]
print(upload["uses"], sorted(upload["with"]), [s.get("with", {}).get("path") for s in steps if s.get("uses", "").startswith("actions/checkout")])
print([r["if"] for r in gl["aiter-probe"]["rules"]])
PYEOF
	rc=$?
	set -e
	[ "$rc" = 0 ] || fail "YAML: $(tail -n 2 "$TMP/err")"
	expect_out "['actions/checkout', 'actions/checkout', 'actions/checkout', 'actions/upload-artifact', 'github/codeql-action/upload-sarif']
['sh .aiter-probe/src/examples/ci/aiter-change.sh .aiter-probe/base . .aiter-probe/out']
{'codequality': 'aiter-probe-out/gl-code-quality.json'} sh /opt/aiter-probe-src/examples/ci/aiter-change.sh /tmp/aiter-base \"\$CI_PROJECT_DIR\" aiter-probe-out
github/codeql-action/upload-sarif@v4 ['category', 'sarif_file'] [None, '.aiter-probe/base', '.aiter-probe/src']
['\$CI_PIPELINE_SOURCE == \"merge_request_event\"', '\$CI_COMMIT_BRANCH == \$CI_DEFAULT_BRANCH']"
else
	echo "skipped [$current]: $PY has no yaml module"
fi

finish
