#!/bin/sh
# SPDX-License-Identifier: MIT
# python-string: string literals in code that contain a text, not comments
# or docstrings.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/py"
mkdir -p "$TREE/aiter"
cat >"$TREE/aiter/mla.py" <<'EOF'
def mla_decode_fwd(q):
    """AITER_SITUV2_A4W4 in a docstring only."""
    return q


def parenthesised():
    ("AITER_SITUV2_A4W4 in a docstring in parentheses"
     " is a docstring too")


def tuple_():
    ("AITER_SITUV2_A4W4 in a tuple",)
EOF
cat >"$TREE/aiter/fused_moe.py" <<'EOF'
"""Module docstring: AITER_SITUV2_A4W4 here is no code."""
import os

# AITER_SITUV2_A4W4 in a comment
_SITUV2 = os.environ.get("AITER_SITUV2_A4W4", "0") == "1"


def fused_moe(x):
    """AITER_SITUV2_A4W4 in a docstring."""
    return os.getenv('AITER_SITUV2_A4W4') or x
EOF
pack pystring <<'EOF'
rules:
  - id: str.first
    file: aiter/fused_moe.py
    python-string: AITER_SITUV2_A4W4
  - id: str.all
    file: aiter/fused_moe.py
    python-string: SITUV2
    collect: all
  - id: str.none
    file: aiter/fused_moe.py
    python-string: AITER_SITUV3
  - id: str.docstring_only
    file: aiter/mla.py
    python-string: AITER_SITUV2_A4W4
    collect: all
EOF

case_ "python-string: string literals in code, not comments or docstrings"
scan "$TREE" pystring
expect_rc 0
rule str.first status matched
lines str.first "[5]"
lines str.all "[5, 10]"
rule str.none status unmatched

case_ "python-string: a str literal in parentheses is a docstring too; in a tuple it is none"
lines str.docstring_only "[12]"

finish
