#!/bin/sh
# SPDX-License-Identifier: MIT
# Run-time failures across the Python kinds: a file Python cannot parse makes
# each rule that reads it an error naming the line (or unknown through a
# star import), while the scan goes on and the other rules still report.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/broken"
mkdir -p "$TREE/aiter/ops" "$TREE/hsa"
printf 'def ok():\n    pass\n  x = 1\n' >"$TREE/aiter/broken.py"
printf 'from .broken import ok\nfrom .ops.fine import *\n' >"$TREE/aiter/__init__.py"
printf 'def fine(a):\n    return a\n' >"$TREE/aiter/ops/fine.py"
pack broken <<'EOF'
rules:
  - id: br.def
    file: aiter/broken.py
    python-def: ok
  - id: br.string
    file: aiter/broken.py
    python-string: x
  - id: br.bound
    file: aiter/broken.py
    python-bound: n
    def: ok
  - id: br.export
    python-export: ok
    from: aiter
  - id: br.export_other
    python-export: fine
    from: aiter
  - id: br.still_reports
    file: aiter/ops/fine.py
    python-def: fine
probes:
  - id: p
    requires: br.def
EOF

case_ "an unparsable Python file: an error naming the line, the other rules still report"
scan "$TREE" broken
expect_rc 0
for id in br.def br.string br.bound; do
	rule $id status error
	rule $id file aiter/broken.py
	rule $id reason "line 3: unindent does not match any outer indentation level"
done
rule br.export status error
rule br.export reason "aiter/broken.py: line 3: unindent does not match any outer indentation level"
rule br.still_reports status matched
rule br.export file aiter/__init__.py
cap p False
cap_reason p "unknown, so unsupported: rule br.def could not be checked: aiter/broken.py: line 3: unindent does not match any outer indentation level"

case_ "a capability over an error with no file names no '(null)' file"
printf 'probes:\n  - id: q\n    requires: br.export\n' >"$TMP/broken-probe.yaml"
scan_with_probes "$TREE" broken broken-probe
expect_rc 0
cap q False
expect_json "'(null)' in j['capabilities']['q']['reason']" False

case_ "an unparsable module reached by a star import is unknown, not 'not exported'"
printf 'from .broken import *\n' >"$TREE/aiter/__init__.py"
pack broken_star <<'EOF'
rules:
  - id: br.star
    python-export: ok
    from: aiter
probes:
  - id: not_exported
    requires: {not: br.star}
EOF
scan "$TREE" broken_star
expect_rc 0
expect_json "j['rules']['br.star']['status']" error
expect_json "j['capabilities']['not_exported']['supported']" False

finish
