#!/bin/sh
# SPDX-License-Identifier: MIT
# A rule that ends `unknown` (what the file binds is known only by running
# it) through every command that reads a manifest: check treats it as a
# no-go and says so, explain shows it unknown, diff and SARIF report going
# unknown as a loss and coming back as a gain, and the Python reader agrees.
# No shipped kind answers unknown on a real tree yet, so the manifest is a
# scan's with one rule made unknown by hand, as the scan writes one
# (tests/unit/evaluate.c checks the scan's side).
. "$AP_SRCDIR/tests/lib.sh"
export COLUMNS=80
cd "$TMP" || exit 1

mkdir -p tree/aiter
printf 'def mla_decode_fwd(q, kv_buffer, o, causal=False):\n    pass\n' >tree/aiter/mla.py
cat >pack.yaml <<'EOF'
rules:
  - id: mla.decode_fwd.params.causal
    description: aiter.mla.mla_decode_fwd takes causal.
    file: aiter/mla.py
    python-def: mla_decode_fwd
    params: [causal]
  - id: mla.decode_fwd.params.return_lse
    file: aiter/mla.py
    python-def: mla_decode_fwd
    params: [return_lse]
probes:
  - id: mla.decode_fwd.causal
    description: MLA decode takes causal.
    requires: mla.decode_fwd.params.causal
    fallback: vLLM decodes without causal.
  - id: mla.decode_fwd.return_lse
    requires: mla.decode_fwd.params.return_lse
EOF
PACK="--no-default-rules --rules pack.yaml"
WHY="what aiter.mla binds to mla_decode_fwd is not known without running it: defined in an arm of \`if _flag():\`, which only a run decides"
REASON="unknown, so unsupported: rule mla.decode_fwd.params.causal is unknown: aiter/mla.py: $WHY"

# known.json: the scan; unknown.json: the same with the causal rule unknown,
# and its capability as the scan then words it (its inputs unchanged, so
# still fresh).
probe scan --aiter-root tree --no-launch $PACK -o known.json
[ "$rc" = 0 ] || { cat "$TMP/err" >&2; exit 1; }
"${PYTHON3:-python3}" - "$WHY" "$REASON" <<'EOF'
import json, sys
m = json.load(open("known.json"))
m["rules"]["mla.decode_fwd.params.causal"] = {
    "status": "unknown", "file": "aiter/mla.py", "matches": [], "reason": sys.argv[1]}
m["capabilities"]["mla.decode_fwd.causal"] = {
    "supported": False, "reason": sys.argv[2], "evidence": []}
json.dump(m, open("unknown.json", "w"), indent=2)
EOF

case_ "the manifest is valid, and both readers take it"
"${PYTHON3:-python3}" - "$AP_SRCDIR" <<'EOF' || fail "the schema or the Python reader refuses it"
import json, sys
sys.path.insert(0, sys.argv[1] + "/python")
import aiter_probe
m = aiter_probe.load("unknown.json", verify_fresh=True)
assert m.rule_status("mla.decode_fwd.params.causal") == "unknown"
assert m.supported("mla.decode_fwd.causal") is False
assert m.verdict("mla.decode_fwd.causal") == "unknown"
assert m.verdict("mla.decode_fwd.return_lse") == "unsupported"
try:
    import jsonschema
except ImportError:
    sys.exit(0)
schema = json.load(open(sys.argv[1] + "/schema/manifest-v1.schema.json"))
jsonschema.validate(json.load(open("unknown.json")), schema)
bad = json.load(open("unknown.json"))
del bad["rules"]["mla.decode_fwd.params.causal"]["reason"]
try:
    jsonschema.validate(bad, schema)
except jsonschema.ValidationError:
    pass
else:
    sys.exit("an unknown rule without a reason passed the schema")
EOF
probe verify unknown.json
expect_rc 0

case_ "check: a required unknown capability is a no-go, and says so"
probe check --require mla.decode_fwd.causal --manifest unknown.json
expect_rc 1
expect_out "unknown     mla.decode_fwd.causal: unknown, so unsupported: rule
            mla.decode_fwd.params.causal is unknown: aiter/mla.py: what
            aiter.mla binds to mla_decode_fwd is not known without running it:
            defined in an arm of \`if _flag():\`, which only a run decides
no-go: some required capability is unknown (unknown is never a go)"
expect_quiet_err() { [ ! -s "$TMP/err" ] || fail "stderr: $(cat "$TMP/err")"; }
expect_quiet_err

case_ "check: unknown and unsupported together"
probe check --require mla.decode_fwd.return_lse,mla.decode_fwd.causal --manifest unknown.json
expect_rc 1
expect_out "unsupported mla.decode_fwd.return_lse: rule mla.decode_fwd.params.return_lse did
            not match: mla_decode_fwd has no parameter 'return_lse'
unknown     mla.decode_fwd.causal: unknown, so unsupported: rule
            mla.decode_fwd.params.causal is unknown: aiter/mla.py: what
            aiter.mla binds to mla_decode_fwd is not known without running it:
            defined in an arm of \`if _flag():\`, which only a run decides
no-go: some required capability is not supported, and some is unknown (unknown
    is never a go)"

case_ "check: the same from a scan, and the known tree is a go"
probe check --require mla.decode_fwd.causal --aiter-root tree --no-launch $PACK
expect_rc 0
expect_out_has "go: every required capability is supported"

case_ "check: an unknown preference is reported with its fallback, and is a go"
probe check --prefer mla.decode_fwd.causal --manifest unknown.json $PACK
expect_rc 0
expect_out_has "unknown     mla.decode_fwd.causal (preferred): unknown, so unsupported:"
expect_out_has "            instead: vLLM decodes without causal."
expect_out_has "go: nothing is required; some preferred capability is not supported"

case_ "check --format json: the verdict word"
probe check --require mla.decode_fwd.causal --prefer mla.decode_fwd.return_lse --manifest unknown.json --format json
expect_rc 1
expect_json 'j["ok"]' False
expect_json 'j["capabilities"]["mla.decode_fwd.causal"]' "{'supported': False, 'verdict': 'unknown', 'reason': '$REASON'}"
expect_json 'j["preferred"]["mla.decode_fwd.return_lse"]["verdict"]' unsupported

case_ "check -q: the exit status alone"
probe check -q --require mla.decode_fwd.causal --manifest unknown.json
expect_rc 1
expect_no_out

case_ "python3 -m aiter_probe: as check"
(
	cd "$AP_SRCDIR/python" && PYTHONPATH=. "${PYTHON3:-python3}" -m aiter_probe \
		"$TMP/unknown.json" mla.decode_fwd.causal mla.decode_fwd.return_lse
) >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 1
expect_out "unknown     mla.decode_fwd.causal: $REASON
unsupported mla.decode_fwd.return_lse: rule mla.decode_fwd.params.return_lse did not match: mla_decode_fwd has no parameter 'return_lse'
no-go: some required capability is not supported, and some is unknown (unknown is never a go)"

case_ "explain: the capability, its tree unknown"
probe explain mla.decode_fwd.causal --manifest unknown.json $PACK
expect_rc 0
expect_out "mla.decode_fwd.causal: unknown
  MLA decode takes causal.
  defined at: pack.yaml:12
  reason: unknown, so unsupported: rule mla.decode_fwd.params.causal is unknown:
      aiter/mla.py: what aiter.mla binds to mla_decode_fwd is not known without
      running it: defined in an arm of \`if _flag():\`, which only a run decides
requires:
  rule mla.decode_fwd.params.causal: unknown
    looked for: python-def: mla_decode_fwd, params: [causal] in aiter/mla.py
    defined at: pack.yaml:2
    reason: what aiter.mla binds to mla_decode_fwd is not known without running
        it: defined in an arm of \`if _flag():\`, which only a run decides
when unsupported: vLLM decodes without causal."

case_ "explain: the rule, and the capability that requires it"
probe explain mla.decode_fwd.params.causal --manifest unknown.json $PACK
expect_rc 0
expect_out "rule mla.decode_fwd.params.causal: unknown
  aiter.mla.mla_decode_fwd takes causal.
  looked for: python-def: mla_decode_fwd, params: [causal] in aiter/mla.py
  defined at: pack.yaml:2
  reason: what aiter.mla binds to mla_decode_fwd is not known without running
      it: defined in an arm of \`if _flag():\`, which only a run decides
  required by mla.decode_fwd.causal: unknown"

case_ "explain --format json"
probe explain mla.decode_fwd.causal --manifest unknown.json $PACK --format json
expect_rc 0
expect_json 'j["supported"], j["verdict"]' "(False, 'unknown')"
expect_json 'j["requires"]["holds"], j["requires"]["status"]' "('unknown', 'unknown')"
expect_json 'j["requires"]["reason"]' "$WHY"
probe explain mla.decode_fwd.params.causal --manifest unknown.json $PACK --format json
expect_json 'j["status"], j["required_by"]' "('unknown', [{'capability': 'mla.decode_fwd.causal', 'supported': False, 'verdict': 'unknown'}])"

case_ "diff: matched -> unknown is a loss"
# Wide enough for the reason on one line (tests/cli/diff.sh wraps).
export COLUMNS=10000
probe diff known.json unknown.json --fail-on lost
unset COLUMNS
expect_rc 1
expect_out "old: known.json (aiter version unknown)
new: unknown.json (aiter version unknown)

capabilities:
  lost     mla.decode_fwd.causal: supported -> unknown
           reason: $REASON

rules:
  mla.decode_fwd.params.causal: matched -> unknown

cases (- only in old, + only in new):
  mla.decode_fwd.params.causal
    - params=\"q, kv_buffer, o, causal=…\"

summary: 1 lost, 2 changed, 3 in all"
probe diff known.json unknown.json --format json
expect_rc 0
expect_json 'j["rules"]' "[{'id': 'mla.decode_fwd.params.causal', 'before': 'matched', 'after': 'unknown'}]"
expect_json '[c["change"] for c in j["capabilities"]]' "['lost']"

case_ "diff: unknown -> matched is a gain"
probe diff unknown.json known.json --fail-on lost
expect_rc 0
expect_out_has "  gained   mla.decode_fwd.causal: unknown -> supported"
expect_out_has "  mla.decode_fwd.params.causal: unknown -> matched"

# unsupported.json: the causal rule a plain no, so that unknown and no differ.
"${PYTHON3:-python3}" - <<'EOF'
import json
m = json.load(open("known.json"))
m["rules"]["mla.decode_fwd.params.causal"] = {
    "status": "unmatched", "file": "aiter/mla.py", "matches": [],
    "reason": "it has no parameter 'causal'"}
m["capabilities"]["mla.decode_fwd.causal"] = {
    "supported": False, "evidence": [],
    "reason": "rule mla.decode_fwd.params.causal did not match: it has no parameter 'causal'"}
json.dump(m, open("unsupported.json", "w"), indent=2)
EOF

case_ "diff: unsupported -> unknown is a change, not a loss"
probe diff unsupported.json unknown.json --fail-on lost
expect_rc 0
expect_out_has "  changed  mla.decode_fwd.causal: unsupported -> unknown"
expect_out_has "  mla.decode_fwd.params.causal: unmatched -> unknown"
expect_out_has "summary: 0 lost, 2 changed, 2 in all"
probe diff unsupported.json unknown.json --fail-on changed
expect_rc 1

case_ "SARIF: going unknown is a loss and a warning, coming back a note"
probe diff known.json unknown.json --format sarif
expect_rc 0
"${PYTHON3:-python3}" "$AP_SRCDIR/tests/cli/sarif-check.py" "$TMP/out" >"$TMP/check" ||
	fail "$(cat "$TMP/check")"
expect_json '[(r["level"], r["message"]["text"]) for r in j["runs"][0]["results"]]' "[('error', 'lost: capability mla.decode_fwd.causal: supported -> unknown ($REASON)'), ('warning', 'changed: rule mla.decode_fwd.params.causal: matched -> unknown (was at aiter/mla.py:1)'), ('warning', 'lost: case params=\"q, kv_buffer, o, causal=…\" of rule mla.decode_fwd.params.causal (was at aiter/mla.py:1)')]"
probe diff unknown.json known.json --format sarif
expect_rc 0
expect_json '[(r["level"], r["message"]["text"]) for r in j["runs"][0]["results"] if r["ruleId"].startswith("rule/")][:1]' "[('note', 'changed: rule mla.decode_fwd.params.causal: unknown -> matched (in aiter/mla.py)')]"

finish
