#!/bin/sh
# SPDX-License-Identifier: MIT
# What every kind's loader refuses alike (exit 2, the exact
# file:line:column: message): a common key that does not apply to the
# kind (file, collect, language, normalize), and capture comparisons in a
# probe's requires that are malformed or name no rule.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

pack glob_file <<'EOF'
rules:
  - id: r
    file: a.py
    glob: "a/*.py"
EOF
pack def_collect <<'EOF'
rules:
  - id: r
    file: a.py
    python-def: f
    collect: all
EOF
pack export_file <<'EOF'
rules:
  - id: r
    file: aiter/__init__.py
    python-export: f
    from: aiter
EOF
pack export_collect <<'EOF'
rules:
  - id: r
    python-export: f
    from: aiter
    collect: all
EOF
pack version_file <<'EOF'
rules:
  - id: r
    file: aiter/_version.py
    version: ">=1"
EOF
pack bound_normalize <<'EOF'
rules:
  - id: r
    file: a.py
    python-bound: n
    def: f
    normalize: strip-whitespace
EOF
pack csv_language <<'EOF'
rules:
  - id: r
    file: a.csv
    language: c
    csv: {where: {ps: 1}}
EOF
pack cmp_two_ops <<'EOF'
rules:
  - id: r
    file: a.py
    regex: "(?<n>\\d+)"
probes:
  - id: p
    requires: {capture: r, name: n, ge: 1, le: 3}
EOF
pack cmp_ge_text <<'EOF'
rules:
  - id: r
    file: a.py
    regex: "(?<n>\\d+)"
probes:
  - id: p
    requires: {capture: r, name: n, ge: text}
EOF
pack cmp_probe <<'EOF'
rules:
  - id: r
    file: a.py
    regex: "(?<n>\\d+)"
probes:
  - id: q
    requires: r
  - id: p
    requires: {all: [r, {capture: q, name: n, eq: 1}]}
EOF
pack cmp_unknown <<'EOF'
rules:
  - id: r
    file: a.py
    regex: "(?<n>\\d+)"
probes:
  - id: p
    requires: {capture: nope, name: n, eq: 1}
EOF

case_ "refused: 'file' on a glob rule"
refused glob_file "3:5: 'file' does not apply to a 'glob' rule: it names no file"
case_ "refused: 'collect' on a python-def rule"
refused def_collect "5:5: 'collect' does not apply to a 'python-def' rule: it reports one answer"
case_ "refused: 'file' and 'collect' where a kind takes none"
refused export_file "3:5: 'file' does not apply to a 'python-export' rule: it names no file"
refused export_collect "5:5: 'collect' does not apply to a 'python-export' rule: it reports one answer"
refused version_file "3:5: 'file' does not apply to a 'version' rule: it names no file"
refused bound_normalize "6:5: 'normalize' does not apply to a 'python-bound' rule: it does not match text"
case_ "refused: 'language' on a csv rule"
refused csv_language "4:5: 'language' does not apply to a 'csv' rule: it does not match text"
case_ "refused: a capture comparison with two operators"
refused cmp_two_ops "7:44: both 'ge' and 'le' given: a capture comparison has exactly one operator (combine comparisons with 'all')"
case_ "refused: 'ge' with text"
refused cmp_ge_text "7:41: 'ge' compares numbers: it needs an integer, not text"
case_ "refused when the packs are finished: a capture comparison naming a probe"
refused cmp_probe "9:25: 'capture' must name a rule, and 'q' is a probe"
case_ "refused when the packs are finished: a capture comparison naming an unknown rule"
refused cmp_unknown "7:15: unknown rule or probe 'nope'"

finish
