#!/bin/sh
# SPDX-License-Identifier: MIT
# csv: rows of a table meeting 'where' conditions, with 'capture' columns
# (BOM, CRLF, quoted fields, a column's default), comparisons of captures
# over rows, a missing column or a bad quote as an error; and what its
# loader refuses.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/csv"
mkdir -p "$TREE/hsa/gfx950/mla" "$TREE/hsa/gfx942/mla"
# CRLF, a UTF-8 BOM, quoted fields (a comma and a line end inside quotes, a
# doubled quote), no causal column.
printf '\357\273\277qType,kvType,Gqa,ps,qSeqLen,prefill,lse,"knl_name"\r\nbf16,bf16,16,1,1,0,1,"k, q1"\r\n"bf16",bf16,16,1,"2",0,1,k2\r\nbf16,bf16,128,1,4,0,1,"k ""wide""\r\nsecond line"\r\nbf16,bf16,16.0,1,8,0,1,k8\r\nbf16,bf16,16,1,4,0,0,k4\r\n' >"$TREE/hsa/gfx950/mla/mla_asm.csv"
printf 'qType,kvType,Gqa,ps,qSeqLen,prefill,causal,knl_name\nbf16,bf16,16,1,1,0,1,k1\n' >"$TREE/hsa/gfx942/mla/mla_asm.csv"
printf 'a,b\n1,"x\n2,3\n' >"$TREE/hsa/unterminated.csv"
pack csv <<'EOF'
rules:
  - id: csv.all
    file: hsa/gfx950/mla/mla_asm.csv
    csv:
      where:
        qType: bf16
        Gqa: 16
        causal: {eq: 1, missing: 1}
        ps: {in: [1]}
        lse: {ne: 0}
        qSeqLen: {ge: 1}
      capture: {qlen: qSeqLen, kernel: knl_name}
    collect: all
  - id: csv.first
    file: hsa/gfx950/mla/mla_asm.csv
    csv:
      where: {Gqa: {gt: 15.5}, qSeqLen: {lt: 8}}
      capture: {qlen: qSeqLen}
  - id: csv.none
    file: hsa/gfx950/mla/mla_asm.csv
    csv: {where: {qType: fp8}}
  - id: csv.text_ge
    file: hsa/gfx950/mla/mla_asm.csv
    csv: {where: {qType: {ge: 1}}}
  - id: csv.no_where_column
    file: hsa/gfx942/mla/mla_asm.csv
    csv: {where: {ps: 1, lse: 1}}
  - id: csv.no_capture_column
    file: hsa/gfx942/mla/mla_asm.csv
    csv: {where: {ps: 1}, capture: {qlen: qlen}}
  - id: csv.missing_default_fails
    file: hsa/gfx942/mla/mla_asm.csv
    csv: {where: {lse: {eq: 1, missing: 0}}}
  - id: csv.unterminated
    file: hsa/unterminated.csv
    csv: {where: {a: 1}}
  - id: csv.every_row
    file: hsa/gfx942/mla/mla_asm.csv
    csv: {}
  - id: csv.capture_default
    file: hsa/gfx950/mla/mla_asm.csv
    csv:
      where: {qSeqLen: {le: 2}}
      capture: {qlen: {column: qSeqLen}, causal: {column: causal, missing: 1}}
    collect: all
  - id: csv.capture_default_present
    file: hsa/gfx942/mla/mla_asm.csv
    csv: {capture: {causal: {column: causal, missing: 0}}}
  - id: csv.capture_no_default
    file: hsa/gfx950/mla/mla_asm.csv
    csv: {capture: {causal: {column: causal}}}
probes:
  - id: q4
    requires: {capture: csv.all, name: qlen, eq: 4}
  - id: q8
    requires: {capture: csv.all, name: qlen, eq: 8}
  - id: lse942
    requires: csv.no_where_column
EOF

case_ "csv: BOM, CRLF, quoted fields, a missing column read as its default"
scan "$TREE" csv
expect_rc 0
rule csv.all status matched
lines csv.all "[2, 3, 6]"
caps csv.all qlen "['1', '2', '8']"
caps csv.all kernel "['k, q1', 'k2', 'k8']"
lines csv.first "[2]"
rule csv.none status unmatched
rule csv.text_ge status unmatched
lines csv.every_row "[2]"

case_ "csv: a capture with 'missing' takes it where the table has no such column, the column where it has"
caps csv.capture_default qlen "['1', '2']"
caps csv.capture_default causal "['1', '1']"
caps csv.capture_default_present causal "['1']"
rule csv.capture_no_default reason "the table has no column 'causal' (named in 'capture'; its columns: qType, kvType, Gqa, ps, qSeqLen, prefill, lse, knl_name)"

case_ "csv: capture comparisons over rows"
cap q4 False
cap_reason q4 "rule csv.all has no qlen == 4 (it has 8)"
cap q8 True

case_ "csv: a table without a named column is an error, the scan goes on"
rule csv.no_where_column status error
rule csv.no_where_column reason "the table has no column 'lse' (named in 'where'; its columns: qType, kvType, Gqa, ps, qSeqLen, prefill, causal, knl_name)"
rule csv.no_capture_column reason "the table has no column 'qlen' (named in 'capture'; its columns: qType, kvType, Gqa, ps, qSeqLen, prefill, causal, knl_name)"
rule csv.missing_default_fails status unmatched
cap lse942 False
cap_reason lse942 "unknown, so unsupported: rule csv.no_where_column could not be checked: hsa/gfx942/mla/mla_asm.csv: the table has no column 'lse' (named in 'where'; its columns: qType, kvType, Gqa, ps, qSeqLen, prefill, causal, knl_name)"

case_ "csv: an unterminated quote is an error naming its line"
rule csv.unterminated status error
rule csv.unterminated reason "line 2: unterminated quoted field"
rule csv.unterminated file hsa/unterminated.csv

pack bad_op <<'EOF'
rules:
  - id: r
    file: a.csv
    csv:
      where: {ps: {eqq: 1}}
EOF
pack two_ops <<'EOF'
rules:
  - id: r
    file: a.csv
    csv:
      where: {ps: {eq: 1, ne: 2}}
EOF
pack lt_text <<'EOF'
rules:
  - id: r
    file: a.csv
    csv:
      where: {ps: {lt: abc}}
EOF
pack in_empty <<'EOF'
rules:
  - id: r
    file: a.csv
    csv:
      where: {ps: {in: []}}
EOF
pack no_op <<'EOF'
rules:
  - id: r
    file: a.csv
    csv:
      where: {ps: {missing: 1}}
EOF
pack cap_no_column <<'EOF'
rules:
  - id: r
    file: a.csv
    csv: {capture: {q: {missing: 1}}}
EOF
pack cap_key <<'EOF'
rules:
  - id: r
    file: a.csv
    csv: {capture: {q: {column: qSeqLen, default: 1}}}
EOF
pack csv_seq <<'EOF'
rules:
  - id: r
    file: a.csv
    csv: [ps]
EOF
pack csv_key <<'EOF'
rules:
  - id: r
    file: a.csv
    csv: {where: {ps: 1}, capturee: {q: qSeqLen}}
EOF

case_ "refused: a 'where' operator that is none of eq/ne/lt/le/gt/ge/in"
refused bad_op "5:20: unknown key 'eqq' in a 'where' condition (allowed: eq, ne, lt, le, gt, ge, in, missing)"
case_ "refused: two operators in one 'where' condition"
refused two_ops "5:27: both 'eq' and 'ne' given: a 'where' condition has one operator"
case_ "refused: 'lt' with a non-number"
refused lt_text "5:24: 'lt' compares numbers, and 'abc' is not one"
case_ "refused: 'in' empty"
refused in_empty "5:24: 'in' must be a non-empty sequence of values"
case_ "refused: a 'where' condition without an operator"
refused no_op "5:19: a 'where' condition needs one of 'eq', 'ne', 'lt', 'le', 'gt', 'ge' or 'in'"
case_ "refused: a capture mapping without 'column', or with a key it does not take"
refused cap_no_column "4:24: a capture needs its 'column'"
refused cap_key "4:42: unknown key 'default' in a capture (allowed: column, missing)"
case_ "refused: 'csv' not a mapping"
refused csv_seq "4:10: 'csv' must be a mapping, not a sequence"
case_ "refused: an unknown key in 'csv'"
refused csv_key "4:27: unknown key 'capturee' in 'csv' (allowed: where, capture)"

# Comments in kernel tables, as each tree's hsa/codegen.py reads them: from
# v0.1.12 it drops them before pandas reads the table, before that pandas
# reads every line. The codegen files here are stand-ins of our own.
TABLE='// SPDX-License-Identifier: MIT
// Copyright line
qType,kvType,Gqa,ps,qSeqLen,knl_name
bf16,bf16,16,1,4,k4 // built
# bf16,bf16,16,1,2,k2
/* retired:
bf16,bf16,16,1,8,k8
*/
bf16,bf16,16,1,1,k1   ; last
'
for t in strips reads_all no_codegen; do
	mkdir -p "$TMP/$t/hsa/gfx950/mla" "$TMP/$t/aiter/configs"
	printf '%s' "$TABLE" >"$TMP/$t/hsa/gfx950/mla/mla_asm.csv"
	printf 'M,N\n# 1,2\n3,4\n' >"$TMP/$t/aiter/configs/tuned.csv"
done
cat >"$TMP/strips/hsa/codegen.py" <<'EOF'
import pandas as pd


def _strip_csv_comments(content):
    return content


def read_csv_strip_comments(path):
    with open(path, encoding="utf-8-sig") as f:
        return pd.read_csv(_strip_csv_comments(f.read()))
EOF
cat >"$TMP/reads_all/hsa/codegen.py" <<'EOF'
import pandas as pd


def read(path):
    return pd.read_csv(path)
EOF
mkdir -p "$TMP/no_codegen_plain/hsa/gfx950/mla"
printf 'qType,Gqa\nbf16,16\n' >"$TMP/no_codegen_plain/hsa/gfx950/mla/mla_asm.csv"
pack comments <<'EOF'
rules:
  - id: kernels
    file: hsa/gfx950/mla/mla_asm.csv
    csv:
      where: {Gqa: 16}
      capture: {qlen: qSeqLen, qtype: qType}
    collect: all
  - id: kernels.none
    file: hsa/gfx950/mla/mla_asm.csv
    csv: {where: {Gqa: 16}}
    comments: none
  - id: kernels.strip
    file: hsa/gfx950/mla/mla_asm.csv
    csv:
      where: {Gqa: 16}
      capture: {qlen: qSeqLen}
    comments: strip
    collect: all
  - id: tuned
    file: aiter/configs/tuned.csv
    csv: {capture: {m: M}}
    collect: all
  - id: tuned.codegen
    file: aiter/configs/tuned.csv
    csv: {capture: {m: M}}
    comments: codegen
    collect: all
EOF

case_ "csv comments: a codegen that drops them (v0.1.12 on): a commented-out kernel is no kernel, a // SPDX first line no error"
scan "$TMP/strips" comments
expect_rc 0
rule kernels status matched
caps kernels qlen "['4', '1']"
lines kernels "[4, 9]"
expect_json "j['rules']['kernels']['matches'][1]['text']" "bf16,bf16,16,1,1,k1   ; last"
expect_json "sorted(i['path'] for i in j['inputs'] if i['sha256'])" "['aiter/configs/tuned.csv', 'hsa/codegen.py', 'hsa/gfx950/mla/mla_asm.csv']"
rule kernels.none status error
rule kernels.none reason "the table has no column 'Gqa' (named in 'where'; its columns: // SPDX-License-Identifier: MIT)"
caps kernels.strip qlen "['4', '1']"
caps tuned m "['# 1', '3']"
caps tuned.codegen m "['3']"

case_ "csv comments: a codegen that reads every line (before v0.1.12): the // SPDX line is the header, as its build fails on it"
scan "$TMP/reads_all" comments
expect_rc 0
rule kernels status error
rule kernels reason "the table has no column 'Gqa' (named in 'where'; its columns: // SPDX-License-Identifier: MIT)"
caps kernels.strip qlen "['4', '1']"
caps tuned.codegen m "['# 1', '3']"

case_ "csv comments: no codegen, and a table that reads otherwise with them dropped, is unknown"
scan "$TMP/no_codegen" comments
expect_rc 0
rule kernels status unknown
rule kernels reason "the table reads otherwise with its comments dropped (as hsa/codegen.py does from v0.1.12) and kept (before), and what this tree's codegen does is not known: hsa/codegen.py: no such file"
expect_json "j['rules']['kernels']['matches']" "[]"
rule kernels.none status error
caps kernels.strip qlen "['4', '1']"
caps tuned m "['# 1', '3']"
rule tuned.codegen status unknown

case_ "csv comments: no codegen and nothing a comment could change reads alike"
pack plain <<'EOF'
rules:
  - id: plain
    file: hsa/gfx950/mla/mla_asm.csv
    csv: {where: {Gqa: 16}, capture: {q: qType}}
EOF
scan "$TMP/no_codegen_plain" plain
expect_rc 0
caps plain q "['bf16']"

pack bad_comments <<'EOF'
rules:
  - id: r
    file: a.csv
    csv: {}
    comments: pandas
EOF
case_ "refused: 'comments' not one of codegen, strip or none"
refused bad_comments "5:15: 'comments' is one of codegen, strip or none"

finish
