#!/bin/sh
# SPDX-License-Identifier: MIT
# The text kinds, literal, token and regex, over one C file: a match and a
# non-match each, every match with `collect: all`, a token never inside a
# longer identifier or a string, regex named groups as captures.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/text"
mkdir -p "$TREE/csrc"
cat >"$TREE/csrc/a.cu" <<'EOF'
// num_heads == 24 in a comment
if (num_heads == 16) {}
if (num_heads==24) { x = "num_heads == 24"; }
if (my_num_heads == 24) {}
MLA_CASE(NUM_HEAD, 24, HEAD_DIM, 512)
MLA_CASE(NUM_HEAD, 128, HEAD_DIM, 64)
EOF
pack text <<'EOF'
rules:
  - id: lit.first
    file: csrc/a.cu
    literal: "num_heads"
  - id: lit.all
    file: csrc/a.cu
    literal: "num_heads"
    collect: all
  - id: lit.none
    file: csrc/a.cu
    literal: "num_heads == 32"
  - id: tok.first
    file: csrc/a.cu
    token: "num_heads == 24"
  - id: tok.all
    file: [csrc/nope.cu, csrc/a.cu]
    token: "num_heads == 24"
    collect: all
  - id: tok.none
    file: csrc/a.cu
    token: "num_heads == 32"
  - id: re.caps
    file: csrc/a.cu
    regex: 'MLA_CASE\(\w+, (?<heads>\d+), \w+, (?<dim>\d+)\)'
    collect: all
  - id: re.none
    file: csrc/a.cu
    regex: 'MLA_CASE\(\w+, 24, \w+, 128\)'
EOF

case_ "literal: first match, every match (strings are text, comments are not), no match"
scan "$TREE" text
expect_rc 0
rule lit.first status matched
lines lit.first "[2]"
lines lit.all "[2, 3, 3, 4]"
rule lit.none status unmatched
rule lit.none file csrc/a.cu

case_ "token: spacing does not matter, a longer identifier or a string is no match"
lines tok.first "[3]"
lines tok.all "[3]"
rule tok.all file csrc/a.cu
rule tok.none status unmatched

case_ "regex: named groups are captures, collect: all"
lines re.caps "[5, 6]"
caps re.caps heads "['24', '128']"
caps re.caps dim "['512', '64']"
rule re.none status unmatched

# Python names as CPython binds them (NFKC): a token pattern's `find` is the
# source's `ﬁnd`, and its `ｆind` too; a string is as written. strip-whitespace
# is vLLM's text, byte for byte.
mkdir -p "$TREE/aiter"
cat >"$TREE/aiter/uni.py" <<'EOF'
x = 1
y = ﬁnd(café, "ﬁnd(")
EOF
pack pytext <<'EOF'
rules:
  - id: tok.nfkc
    file: aiter/uni.py
    token: "find(café"
  - id: tok.rule_side
    file: aiter/uni.py
    token: "= ｆind ("
  - id: tok.string
    file: aiter/uni.py
    token: '"ﬁnd("'
  - id: tok.not_string
    file: aiter/uni.py
    token: '"find("'
  - id: lit.keep
    file: aiter/uni.py
    literal: "find(café"
  - id: lit.strip
    file: aiter/uni.py
    literal: "=ﬁnd(café"
    normalize: strip-whitespace
EOF

case_ "token: Python names NFKC-normalized as CPython binds them, in the file and in the pattern"
scan "$TREE" pytext
expect_rc 0
lines tok.nfkc "[2]"
lines tok.rule_side "[2]"
lines tok.string "[2]"
rule tok.not_string status unmatched
lines lit.keep "[2]"
lines lit.strip "[2]"

finish
