#!/bin/sh
# SPDX-License-Identifier: MIT
# list: what the loaded packs define (golden text at 80 columns), its JSON,
# the selector, fitting a narrow terminal, the probe key 'fallback' as the
# loader checks it, and every error with its exact message.
. "$AP_SRCDIR/tests/lib.sh"
cd "$AP_SRCDIR" || exit 1
export AITER_PROBE_DATADIR=. COLUMNS=80
EXP=tests/expected

case_ "list --help"
probe list --help
expect_rc 0
expect_out_has "Usage: aiter-probe list [OPTION]... [capabilities|probes|rules]"

case_ "the tool's --help names list and explain"
probe --help
expect_out_has "  list      the capabilities, probes and rules the loaded packs define"
expect_out_has "  explain   why is a capability (or a rule) supported or not, and what then?"

case_ "list: probes and rules"
probe list
expect_rc 0
expect_out_has "probes (49):"
expect_out_has "rules (109):"
grep -q "^capabilities" "$TMP/out" && fail "capabilities listed without asking"

case_ "list capabilities: golden"
probe list capabilities
expect_rc 0
if [ -n "${AP_UPDATE_GOLDEN:-}" ]; then cp "$TMP/out" "$EXP/list-capabilities.txt"; fi
diff -u "$EXP/list-capabilities.txt" "$TMP/out" >&2 || fail "stdout differs from the golden"

case_ "list --color: section names and ids in bold, the text as without"
probe list capabilities --color
expect_rc 0
expect_out_has "$(printf '\033[1mcapabilities (49):\033[0m')"
expect_out_has "$(printf '  \033[1mmla.decode.native_h24\033[0m (./probes/mla.yaml:9)')"
sed 's/\x1b\[[0-9]*m//g' "$TMP/out" | diff -u "$EXP/list-capabilities.txt" - >&2 ||
	fail "painted text differs from the golden"
probe list --color=never capabilities
diff -u "$EXP/list-capabilities.txt" "$TMP/out" >&2 || fail "--color=never painted"
probe list --color=loud
expect_rc 2
expect_err "aiter-probe list: --color takes auto, always or never, not 'loud'
Try 'aiter-probe list --help'."

case_ "list rules: the first sentence of each description"
probe list rules
expect_rc 0
grep -q "^rules (109):$" "$TMP/out" || fail "no rules header"
grep -A1 "^  mla.decode_fwd.params.fp8_scales " "$TMP/out" >"$TMP/entry"
printf '%s\n' "  mla.decode_fwd.params.fp8_scales (./rules/mla.yaml:63)" \
	"      aiter.mla.mla_decode_fwd takes q_scale and kv_scale." | diff -u - "$TMP/entry" >&2 ||
	fail "rule entry differs"

case_ "list: json, one section"
probe list probes --format json
expect_rc 0
expect_json 'sorted(j)' "['probes']"
expect_json 'j["probes"][0]["id"]' mla.decode.native_h24
expect_json 'j["probes"][0]["requires"]' "{all: [mla.reduce.native_h24_d512, mla.metadata.native_h24]}"
expect_json 'j["probes"][0]["launch"]' True
expect_json 'j["probes"][0]["file"]' ./probes/mla.yaml
expect_json 'j["probes"][0]["line"]' 9

case_ "list capabilities: json has every shipped fallback"
probe list capabilities --format json
expect_rc 0
expect_json 'len(j["capabilities"])' 49
expect_json '[c["id"] for c in j["capabilities"] if not c["fallback"]]' "[]"

case_ "list: rules as json"
probe list rules --format json
expect_rc 0
expect_json '[r for r in j["rules"] if r["id"] == "mla.metadata.native_h24"][0]["looks_for"]' "token: 'num_heads == 24'"
expect_json '[r for r in j["rules"] if r["id"] == "mla.metadata.native_h24"][0]["kind"]' token

case_ "list: after -- the selector"
probe list -- rules
expect_rc 0
expect_out_has "rules (109):"

case_ "list: fits a narrow terminal"
COLUMNS=40 probe list capabilities
expect_rc 0
[ -z "$(over_width 40)" ] || fail "lines past 40 columns: $(over_width 40)"

case_ "list --rules: an extra pack, with its own fallback"
printf 'probes:\n  - id: p\n    requires: r\n    fallback: Backends pad.\nrules:\n  - id: r\n    file: [a.c, b.c]\n    literal: x\n' >"$TMP/p.yaml"
probe list capabilities --no-default-rules --rules "$TMP/p.yaml"
expect_rc 0
expect_out "capabilities (1):
  p ($TMP/p.yaml:2)
      (no description)
      fallback: Backends pad."
probe list rules --no-default-rules --rules "$TMP/p.yaml" --format json
expect_json 'j["rules"][0]["looks_for"]' "literal: x"
expect_json 'j["rules"][0]["files"]' "['a.c', 'b.c']"

# fallback VALUE MESSAGE: a probe whose fallback is VALUE fails to load so.
fallback() {
	printf 'probes:\n  - id: p\n    requires: r\n    fallback: %s\nrules:\n  - id: r\n    file: a.c\n    literal: x\n' "$1" >"$TMP/f.yaml"
	probe list --no-default-rules --rules "$TMP/f.yaml"
	expect_rc 2
	expect_err "aiter-probe: $TMP/f.yaml:4:15: $2"
	expect_no_out
}

case_ "fallback: a list"
fallback '[a]' "'fallback' must be a string, not a sequence"
case_ "fallback: empty"
fallback '""' "'fallback' must be a sentence, not empty"
case_ "fallback: blank"
fallback '"  "' "'fallback' must be a sentence, not empty"
case_ "fallback: two lines"
fallback '"pads.\nslower."' "'fallback' must be one sentence on one line"
case_ "fallback: too long"
fallback "$(printf '%0241d' 0)" "'fallback' must be at most 240 bytes, not 241"

case_ "list: no packs"
probe list --no-default-rules
expect_rc 2
expect_err "aiter-probe: no rules and no probes: no rule pack (a .yaml or .yml file) was loaded"

case_ "list: unknown selector"
probe list caps
expect_rc 2
expect_err "aiter-probe list: list takes capabilities, probes or rules, not 'caps'
Try 'aiter-probe list --help'."

case_ "list: two selectors"
probe list rules probes
expect_rc 2
expect_err "aiter-probe list: unexpected argument 'probes'
Try 'aiter-probe list --help'."

case_ "list: a scan option"
probe list --aiter-root sample/aiter-root
expect_rc 2
expect_err "aiter-probe list: unknown option '--aiter-root'
Try 'aiter-probe list --help'."

case_ "list: unknown option"
probe list --bogus
expect_rc 2
expect_err "aiter-probe list: unknown option '--bogus'
Try 'aiter-probe list --help'."

case_ "list --format ids: the ids alone, as the JSON lists them"
probe list capabilities --format ids
expect_rc 0
cp "$TMP/out" "$TMP/ids"
probe list capabilities --format json
"${PYTHON3:-python3}" -c 'import json,sys; [print(c["id"]) for c in json.load(open(sys.argv[1]))["capabilities"]]' \
	"$TMP/out" | diff -u - "$TMP/ids" >&2 || fail "the ids differ from the JSON's"
grep -qx 'mla.decode.native_h24' "$TMP/ids" || fail "no mla.decode.native_h24"
probe list --format=ids
expect_rc 0
[ "$(wc -l <"$TMP/out")" -gt 0 ] || fail "no probe or rule ids"

case_ "list: bad --format"
probe list --format yaml
expect_rc 2
expect_err "aiter-probe list: --format takes text, json or ids, not 'yaml'
Try 'aiter-probe list --help'."

finish
