#!/bin/sh
# SPDX-License-Identifier: MIT
# explain: the account of a capability or a rule (golden text at 80 columns
# on the sample tree and on fixtures), its JSON, --manifest, and every error
# with its exact message. Run from the source tree with AITER_PROBE_DATADIR=.
# so that pack paths read the same wherever the tree is.
. "$AP_SRCDIR/tests/lib.sh"
cd "$AP_SRCDIR" || exit 1
export AITER_PROBE_DATADIR=. COLUMNS=80
EXP=tests/expected

# golden NAME: stdout is tests/expected/NAME (AP_UPDATE_GOLDEN=1 rewrites it).
golden() {
	if [ -n "${AP_UPDATE_GOLDEN:-}" ]; then
		cp "$TMP/out" "$EXP/$1"
	else
		diff -u "$EXP/$1" "$TMP/out" >&2 || fail "stdout differs from $EXP/$1"
	fi
}

case_ "explain --help"
probe explain --help
expect_rc 0
expect_out_has "Usage: aiter-probe explain [OPTION]... CAP|RULE"

case_ "explain: a capability on the sample tree"
probe explain mla.decode.native_h24 --aiter-root sample/aiter-root --no-launch
expect_rc 0
golden explain-sample-h24.txt

case_ "explain: captures and a capability that is not supported"
probe explain mla.gluon_decode.small_heads --aiter-root sample/aiter-root --no-launch
expect_rc 0
golden explain-sample-gluon.txt

case_ "explain: the plan row and the fallback when unsupported"
probe explain mla.decode.native_h24 --aiter-root tests/fixtures/h24-missing --no-launch
expect_rc 0
golden explain-h24-missing.txt

case_ "explain: a rule and the capabilities that require it"
probe explain mla.metadata.native_h24 --aiter-root tests/fixtures/h24-missing --no-launch
expect_rc 0
golden explain-rule.txt

case_ "explain: json"
probe explain mla.decode.native_h24 --aiter-root tests/fixtures/h24-missing --no-launch --format json
expect_rc 0
expect_json 'j["supported"]' False
expect_json 'j["requires"]["holds"]' no
expect_json '[k["holds"] for k in j["requires"]["all"]]' "['no', 'yes']"
expect_json 'j["requires"]["all"][1]["evidence"][0]["line"]' 7
expect_json 'j["requires"]["all"][1]["evidence"][0]["from"]' tree
expect_json 'j["requires"]["all"][0]["kind"]' regex
expect_json 'j["plan"]["launch_heads"]' 32
expect_json 'j["plan"]["mode"]' tile-slice
expect_json 'j["consequence"].startswith("24 heads launch 32 (tile-slice); vLLM pads")' True
expect_json 'j["defined_at"]' "{'file': './probes/mla.yaml', 'line': 9}"

case_ "explain: a rule as json"
probe explain mla.reduce.native_h24_d512 --aiter-root tests/fixtures/h24-missing --no-launch --format json
expect_rc 0
expect_json 'j["status"]' unmatched
expect_json 'j["required_by"]' "[{'capability': 'mla.decode.native_h24', 'supported': False, 'verdict': 'unsupported'}]"

case_ "explain --manifest: the same account as a scan"
probe explain mla.decode.native_h24 --aiter-root tests/fixtures/h24-missing --no-launch
cp "$TMP/out" "$TMP/scanned"
cp -R tests/fixtures/h24-missing "$TMP/tree"
probe scan --aiter-root "$TMP/tree" --no-launch -o "$TMP/m.json"
probe explain mla.decode.native_h24 --manifest "$TMP/m.json"
expect_rc 0
diff -u "$TMP/scanned" "$TMP/out" >&2 || fail "explain --manifest differs from a scan's"

case_ "explain --manifest: a line the tree does not have shows the manifest's text"
"${PYTHON3:-python3}" - "$TMP/m.json" "$TMP/m2.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
match = m["rules"]["mla.metadata.native_h24"]["matches"][0]
match["line"], match["text"] = 9999, "as the manifest has it"
json.dump(m, open(sys.argv[2], "w"))
PY
probe explain mla.metadata.native_h24 --manifest "$TMP/m2.json" --format json
expect_rc 0
expect_json 'j["evidence"]' "[{'file': 'csrc/kernels/mla/metadata/v1_2_device.cuh', 'line': 9999, 'text': 'as the manifest has it', 'from': 'manifest'}]"
probe explain mla.metadata.native_h24 --manifest "$TMP/m2.json"
expect_out_has "  csrc/kernels/mla/metadata/v1_2_device.cuh:9999: as the manifest has it"

case_ "explain --manifest: a launch without a reason"
"${PYTHON3:-python3}" - "$TMP/m.json" "$TMP/m3.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["capabilities"]["mla.decode.native_h24"]["launch"] = {"status": "passed", "results": []}
json.dump(m, open(sys.argv[2], "w"))
PY
probe explain mla.decode.native_h24 --manifest "$TMP/m3.json"
expect_rc 0
grep -qx "launch: passed" "$TMP/out" || fail "no line 'launch: passed'"
! grep -F "(null)" "$TMP/out" >&2 || fail "(null) printed"

case_ "explain --manifest --rules: packs name what the manifest holds"
probe explain mla.decode.native_h24 --manifest "$TMP/m.json" --no-default-rules --rules rules --rules probes
expect_rc 0
expect_out_has "plan: 24 heads launch 32 (tile-slice)"

case_ "explain --manifest: a capability the manifest lacks"
printf 'probes:\n  - id: extra.cap\n    requires: mla.reduce.cases\n' >"$TMP/extra.yaml"
probe explain extra.cap --manifest "$TMP/m.json" --rules "$TMP/extra.yaml"
expect_rc 2
expect_err "aiter-probe: the manifest has no capability 'extra.cap' (it was scanned without the probe that defines it)"

case_ "explain --manifest: stale"
echo "// edited" >>"$TMP/tree/csrc/kernels/mla/reduce.cu"
probe explain mla.decode.native_h24 --manifest "$TMP/m.json"
expect_rc 2
expect_err "aiter-probe: $TMP/m.json is stale (csrc/kernels/mla/reduce.cu changed): run 'aiter-probe scan' again"

case_ "explain --manifest with scan options"
probe explain mla.decode.native_h24 --manifest "$TMP/m.json" --no-launch
expect_rc 2
expect_err "aiter-probe explain: --manifest reads a manifest; scan options do not apply to it
Try 'aiter-probe explain --help'."

case_ "explain --heads: padded, with the fallback and its cost"
probe explain mla.decode.native_h24 --heads 24 --aiter-root tests/fixtures/h24-missing --no-launch
expect_rc 0
golden explain-heads-24.txt

case_ "explain --heads: native on a tree that has it"
probe explain mla.decode.native_h24 --heads 24 --aiter-root sample/aiter-root --no-launch
expect_rc 0
expect_out "mla.decode.native_h24 at 24 heads per rank: supported
  routing: launch 24 (native: passed through, no padding)
  verified: no (no launch of 24 heads passed on this node)
  cost: none (no padded heads)"

case_ "explain --heads: another head count, repeat-interleave, no fallback"
probe explain mla.decode.native_h24 --heads 8 --aiter-root tests/fixtures/h24-missing --no-launch
expect_rc 0
expect_out "mla.decode.native_h24 (24 heads) at 8 heads per rank: unsupported
  routing: launch 16 (repeat-interleave: each query head repeated 2 times, the
      output read strided)
  verified: no (no launch of 8 heads passed on this node)
  cost: 16/8 = 2.00x the heads' work (8 padded heads computed and dropped), in
      the same 1 stage-1 block per KV range as 8 heads"

case_ "explain --heads: json"
probe explain mla.decode.native_h24 --heads 24 --aiter-root tests/fixtures/h24-missing --no-launch --format json
expect_rc 0
expect_json '[j[k] for k in ("heads", "capability_heads", "launch_heads", "mode", "verified", "kernel")]' "[24, 24, 32, 'tile-slice', False, None]"
expect_json 'j["verdict"]' unsupported
expect_json 'j["fallback"].startswith("vLLM pads the 24 query heads to 32")' True
expect_json 'j["cost"]' "{'work_ratio': 1.3333333333333333, 'padded_heads': 8, 'head_tiles': 1}"

cp -R tests/fixtures/h24-missing "$TMP/htree"
probe scan --aiter-root "$TMP/htree" --no-launch -o "$TMP/h.json"
"${PYTHON3:-python3}" - "$TMP/h.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
row = m["plans"]["mla_heads"][23]
row["verified"], row["kernel"] = True, "aiter"
json.dump(m, open(sys.argv[1][:-5] + "-verified.json", "w"))
m["plans"]["mla_heads"] = [r for r in m["plans"]["mla_heads"] if r["heads"] != 20]
json.dump(m, open(sys.argv[1][:-5] + "-no20.json", "w"))
del m["plans"]
json.dump(m, open(sys.argv[1][:-5] + "-noplans.json", "w"))
PY

case_ "explain --heads --manifest: verified by AITER's kernel"
probe explain mla.decode.native_h24 --heads 24 --manifest "$TMP/h-verified.json"
expect_rc 0
expect_out_has "  verified: yes, by a launch on this node of AITER's kernel"

case_ "explain --heads --manifest: no plan row for the head count"
probe explain mla.decode.native_h24 --heads 20 --manifest "$TMP/h-no20.json"
expect_rc 2
expect_err "aiter-probe: plans.mla_heads has no row for 20 heads"
expect_no_out

case_ "explain --heads --manifest: a manifest without plans"
probe explain mla.decode.native_h24 --heads 24 --manifest "$TMP/h-noplans.json"
expect_rc 2
expect_err "aiter-probe: $TMP/h-noplans.json: missing key 'plans'"
expect_no_out

for bad in 0 129 x ''; do
	case_ "explain --heads '$bad': not a head count"
	probe explain mla.decode.native_h24 --heads "$bad" --aiter-root tests/fixtures/h24-missing --no-launch
	expect_rc 2
	expect_err "aiter-probe explain: --heads takes a head count from 1 to 128, not '$bad'
Try 'aiter-probe explain --help'."
	expect_no_out
done

for id in mla.decode_fwd.causal mla.metadata.native_h24; do
	case_ "explain --heads: $id is not an MLA decode capability"
	probe explain "$id" --heads 24 --aiter-root tests/fixtures/h24-missing --no-launch
	expect_rc 2
	expect_err "aiter-probe: --heads needs an MLA decode capability (one with a launch: mla.decode.native_h24), not '$id'"
	expect_no_out
done

case_ "explain: unknown id, with the nearest"
probe explain mla.decode.native_h42 --aiter-root sample/aiter-root --no-launch
expect_rc 2
expect_err "aiter-probe: unknown capability or rule 'mla.decode.native_h42' (not defined by any loaded pack); nearest: mla.decode.native_h24, mla.metadata.native_h24"
expect_no_out

case_ "explain: unknown id, nothing near"
probe explain zzz --aiter-root sample/aiter-root --no-launch
expect_rc 2
expect_err "aiter-probe: unknown capability or rule 'zzz' (not defined by any loaded pack)"

case_ "explain: after -- an argument is the id"
probe explain --aiter-root sample/aiter-root --no-launch -- --mla
expect_rc 2
expect_err "aiter-probe: unknown capability or rule '--mla' (not defined by any loaded pack)"

case_ "explain: no id"
probe explain --aiter-root sample/aiter-root
expect_rc 2
expect_err "aiter-probe explain: a capability or rule id is needed
Try 'aiter-probe explain --help'."

case_ "explain: two ids"
probe explain mla.decode.native_h24 aiter.hipb_mm
expect_rc 2
expect_err "aiter-probe explain: unexpected argument 'aiter.hipb_mm'
Try 'aiter-probe explain --help'."

case_ "explain: unknown option"
probe explain mla.decode.native_h24 --bogus
expect_rc 2
expect_err "aiter-probe explain: unknown option '--bogus'
Try 'aiter-probe explain --help'."

case_ "explain: bad --format"
probe explain mla.decode.native_h24 --format yaml
expect_rc 2
expect_err "aiter-probe explain: --format takes text or json, not 'yaml'
Try 'aiter-probe explain --help'."

case_ "explain: bad --color"
probe explain mla.decode.native_h24 --color=sometimes
expect_rc 2
expect_err "aiter-probe explain: --color takes auto, always or never, not 'sometimes'
Try 'aiter-probe explain --help'."

case_ "explain --color: verdicts painted"
probe explain aiter.hipb_mm --aiter-root sample/aiter-root --no-launch --color
expect_rc 0
head -1 "$TMP/out" | grep -q "$(printf 'aiter.hipb_mm: \033\\[3[12]m')" || fail "no colour on the verdict"

case_ "explain: a narrow terminal"
COLUMNS=40 probe explain mla.decode.native_h24 --aiter-root tests/fixtures/h24-missing --no-launch
expect_rc 0
# Only a word longer than the room (a path, the regex) may run past.
[ -z "$(over_width 40)" ] || fail "lines past 40 columns: $(over_width 40)"

finish
