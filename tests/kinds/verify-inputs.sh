#!/bin/sh
# SPDX-License-Identifier: MIT
# verify over the inputs kinds record beyond the files they read: the
# folders a glob lists and the modules an import leads to, fresh until
# one of them changes.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/verify"
MANIFEST="$TMP/w.json"
mkdir -p "$TREE/aiter/configs/a" "$TREE/aiter/ops"
echo 'token' >"$TREE/aiter/configs/a/one_tuned.csv"
printf 'from .ops.impl import *\n' >"$TREE/aiter/__init__.py"
printf 'def f(a, b):\n    return a\n' >"$TREE/aiter/ops/impl.py"
pack verify <<'EOF'
rules:
  - id: g
    glob: aiter/configs/**/*_tuned.csv
    collect: all
  - id: e
    python-export: f
    from: aiter
    params: [b]
EOF
probe scan --aiter-root "$TREE" --no-launch --no-default-rules --rules "$TMP/verify.yaml" -o "$MANIFEST"

case_ "verify: a manifest with a glob rule is fresh"
expect_rc 0
probe verify "$MANIFEST"
expect_rc 0
expect_out "$MANIFEST: fresh (7 inputs under $TREE)"

case_ "verify: a file matching the pattern added in a listed folder makes it stale"
echo 'token' >"$TREE/aiter/configs/a/two_tuned.csv"
probe verify "$MANIFEST"
expect_rc 1
expect_out "$MANIFEST: stale (1 of 7 inputs differ under $TREE)
  changed  aiter/configs/a/"
rm "$TREE/aiter/configs/a/two_tuned.csv"
probe verify "$MANIFEST"
expect_rc 0

case_ "verify: a new folder where ** looks makes it stale"
mkdir "$TREE/aiter/configs/b"
probe verify "$MANIFEST"
expect_rc 1
expect_out "$MANIFEST: stale (1 of 7 inputs differ under $TREE)
  changed  aiter/configs/"
rmdir "$TREE/aiter/configs/b"

case_ "verify: the module a star import leads to changes"
printf 'def f(a):\n    return a\n' >"$TREE/aiter/ops/impl.py"
probe verify "$MANIFEST"
expect_rc 1
expect_out "$MANIFEST: stale (1 of 7 inputs differ under $TREE)
  changed  aiter/ops/impl.py"

case_ "verify: a module beside its package is not on the import path"
printf 'def f(a, b):\n    return a\n' >"$TREE/aiter/ops/impl.py"
probe verify "$MANIFEST"
expect_rc 0
# Python's finder takes the package aiter/ before aiter.py.
echo 'f = None' >"$TREE/aiter.py"
probe verify "$MANIFEST"
expect_rc 0
expect_out "$MANIFEST: fresh (7 inputs under $TREE)"
rm "$TREE/aiter.py"

case_ "verify: a package recorded absent on the import path appears"
mkdir "$TREE/aiter/ops/impl"
echo 'f = None' >"$TREE/aiter/ops/impl/__init__.py"
probe verify "$MANIFEST"
expect_rc 1
expect_out "$MANIFEST: stale (1 of 7 inputs differ under $TREE)
  appeared aiter/ops/impl/__init__.py"

finish
