#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/route-heads, the C API example: what it prints for a manifest
# where 24 heads run natively, one where they are padded, and a bad one.
. "$AP_SRCDIR/tests/lib.sh"
MAN="$AP_SRCDIR/tests/manifests"
EXAMPLE="$AP_BUILDDIR/examples/route-heads"
set -e

route() {
	set +e
	${AP_WRAPPER:-} "$EXAMPLE" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	set -e
}

case_ "native"
route "$MAN/good.json"
expect_rc 0
expect_out "mla.decode.native_h24: supported
24 heads: launch 24 heads, mode none, verified on this node"

case_ "padded"
route "$MAN/second.json"
expect_rc 0
expect_out "mla.decode.native_h24: not supported
24 heads: launch 32 heads, mode tile-slice"

case_ "newer schema"
route "$MAN/invalid-newer-schema.json"
expect_rc 2
expect_err "route-heads: $MAN/invalid-newer-schema.json: schema 'aiter-probe.manifest/2' is newer than this reader understands (aiter-probe.manifest/1)"

case_ "truncated"
route "$MAN/invalid-truncated.json"
expect_rc 2
expect_err "route-heads: $MAN/invalid-truncated.json:5:16: premature end of input near '\"'"

finish
