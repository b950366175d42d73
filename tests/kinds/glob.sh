#!/bin/sh
# SPDX-License-Identifier: MIT
# glob: files by pattern (** at any depth, sets, lists of patterns), never
# through a symlink or a hidden folder; and what its loader refuses.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/glob"
mkdir -p "$TREE/aiter/configs/model_configs/deep" "$TMP/outside"
echo 'token,kernelName1' >"$TREE/aiter/configs/kimik3_a4w4_tuned_fmoe.csv"
echo 'token,kernelName1' >"$TREE/aiter/configs/model_configs/deep/kimik3_a4w4_tuned_fmoe.csv"
echo 'token,kernelName1' >"$TREE/aiter/configs/model_configs/a8w8_tuned_gemm.csv"
echo 'token,kernelName1' >"$TMP/outside/outside_tuned_fmoe.csv"
ln -s "$TMP/outside" "$TREE/aiter/configs/linked"
ln -s "$TMP/outside/outside_tuned_fmoe.csv" "$TREE/aiter/configs/model_configs/link_tuned_fmoe.csv"
pack glob <<'EOF'
rules:
  - id: glob.any_depth
    glob: aiter/configs/**/kimik3_a4w4_tuned_fmoe.csv
    collect: all
  - id: glob.first
    glob: aiter/configs/**/*_tuned_*.csv
  - id: glob.list
    glob: [aiter/nope/*.csv, "aiter/configs/model_configs/a?w[0-9]_*.csv"]
    collect: all
  - id: glob.none
    glob: aiter/configs/**/kimik4_*.csv
  - id: glob.through_symlink_star
    glob: aiter/configs/*/outside_tuned_fmoe.csv
  - id: glob.through_symlink_any
    glob: aiter/configs/**/*_fmoe.csv
    collect: all
  - id: glob.through_symlink_literal
    glob: aiter/configs/linked/*.csv
  - id: glob.still_reports
    glob: aiter/configs/*.csv
EOF

case_ "glob: ** spans any depth (zero included); sets and ?; a list of patterns"
scan "$TREE" glob
expect_rc 0
rule glob.any_depth status matched
caps glob.any_depth path "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv', 'aiter/configs/model_configs/deep/kimik3_a4w4_tuned_fmoe.csv']"
rule glob.any_depth file aiter/configs/kimik3_a4w4_tuned_fmoe.csv
caps glob.first path "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv']"
caps glob.list path "['aiter/configs/model_configs/a8w8_tuned_gemm.csv']"
rule glob.none status unmatched

case_ "glob: a symlink is not followed, nothing outside the root is read or listed"
rule glob.through_symlink_star status unmatched
rule glob.through_symlink_any status matched
caps glob.through_symlink_any path "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv', 'aiter/configs/model_configs/deep/kimik3_a4w4_tuned_fmoe.csv']"
rule glob.through_symlink_literal status error
rule glob.through_symlink_literal reason "aiter/configs/linked/: not a folder, or a symlink (a listing follows none)"
rule glob.still_reports status matched
expect_json "[i['path'] for i in j['inputs'] if 'outside' in i['path'] or i['path'].startswith('/') or '..' in i['path']]" "[]"
expect_json "[i['path'] for i in j['inputs'] if 'linked' in i['path']]" "['aiter/configs/linked/']"
expect_json "[i['sha256'] for i in j['inputs'] if i['path'] == 'aiter/configs/linked/']" "[None]"

case_ "glob: ** goes through no hidden folder (as src/engine/lang/glob-pattern.h says)"
mkdir -p "$TREE/aiter/configs/.hidden"
echo 'token,kernelName1' >"$TREE/aiter/configs/.hidden/kimik3_a4w4_tuned_fmoe.csv"
echo 'token,kernelName1' >"$TREE/aiter/configs/.kimik3_a4w4_tuned_fmoe.csv"
scan "$TREE" glob
expect_rc 0
expect_json "[m['captures']['path'] for m in j['rules']['glob.first']['matches']]" "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv']"
expect_json "[m['captures']['path'] for m in j['rules']['glob.any_depth']['matches']]" "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv', 'aiter/configs/model_configs/deep/kimik3_a4w4_tuned_fmoe.csv']"
rule glob.still_reports status matched
caps glob.still_reports path "['aiter/configs/kimik3_a4w4_tuned_fmoe.csv']"

case_ "glob: a capability over a rule that found no file names no '(null)' file"
printf 'probes:\n  - id: p\n    requires: glob.none\n' >"$TMP/glob-probe.yaml"
scan_with_probes "$TREE" glob glob-probe
expect_rc 0
cap p False
expect_json "'(null)' in j['capabilities']['p']['reason']" False

# 64 folders deep is the walk's limit: a file there is found, one a folder
# further is an error naming the limit, the pattern and the folder, never
# unmatched.
at64=$(printf 'd/%.0s' $(seq 64))
mkdir -p "$TMP/deep64/$at64" "$TMP/deep65/${at64}d"
echo x >"$TMP/deep64/${at64}f.csv"
echo x >"$TMP/deep65/${at64}d/f.csv"
pack glob_deep <<'EOF'
rules:
  - id: deep
    glob: "**/*.csv"
EOF

case_ "glob: a file 64 folders deep is found"
scan "$TMP/deep64" glob_deep
expect_rc 0
rule deep status matched
rule deep file "${at64}f.csv"

case_ "glob: deeper than 64 folders is an error, not unmatched"
scan "$TMP/deep65" glob_deep
expect_rc 0
rule deep status error
rule deep reason "glob '**/*.csv' goes deeper than 64 folders (at ${at64}d/)"

pack glob_empty_seg <<'EOF'
rules:
  - id: r
    glob: a//b
EOF
pack glob_abs <<'EOF'
rules:
  - id: r
    glob: /abs
EOF
pack glob_stars <<'EOF'
rules:
  - id: r
    glob: [ok/*.py, "a**b"]
EOF

case_ "refused: invalid globs"
refused glob_empty_seg "3:13: invalid glob: invalid glob pattern at offset 2: empty segment"
refused glob_abs "3:11: invalid glob: invalid glob pattern at offset 0: absolute pattern"
refused glob_stars "3:23: invalid glob: invalid glob pattern at offset 1: '**' must be a whole segment"

finish
