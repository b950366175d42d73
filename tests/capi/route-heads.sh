#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/route-heads, the C API example: what it prints for a manifest
# where 24 heads run natively, one where they are padded (tile-slice), 8
# heads (repeat-interleave), a head count without a plan row, and bad ones.
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
expect_out "mla.decode.native_h24: supported, all of mla.reduce.native_h24_d512, mla.metadata.native_h24 hold
  evidence csrc/kernels/mla/reduce.cu:10
  evidence csrc/kernels/mla/metadata/v1_2_device.cuh:6
  launch passed: passed on 1 of 1 devices
24 heads: launch 24 heads, mode none, verified on this node
  q head of each launch head: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
  launch head of each output head: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23"

case_ "padded"
route "$MAN/second.json"
expect_rc 0
expect_out "mla.decode.native_h24: not supported, rule mla.reduce.native_h24_d512 is unmatched
  evidence csrc/kernels/mla/metadata/v1_2_device.cuh:6
  launch failed: failed on 1 of 1 devices
24 heads: launch 32 heads, mode tile-slice
  q head of each launch head: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 0 1 2 3 4 5 6 7
  launch head of each output head: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23"

case_ "repeat-interleave"
route "$MAN/good.json" 8
expect_rc 0
expect_out "mla.decode.native_h8: not in the manifest
8 heads: launch 16 heads, mode repeat-interleave
  q head of each launch head: 0 0 1 1 2 2 3 3 4 4 5 5 6 6 7 7
  launch head of each output head: 0 2 4 6 8 10 12 14"

case_ "no plan row"
route "$MAN/good.json" 129
expect_rc 2
expect_err "route-heads: plans.mla_heads has no row for 129 heads"

case_ "usage"
route "$MAN/good.json" x
expect_rc 2
expect_err "usage: $EXAMPLE MANIFEST [HEADS]"

case_ "newer schema"
route "$MAN/invalid-newer-schema.json"
expect_rc 2
expect_err "route-heads: $MAN/invalid-newer-schema.json: schema 'aiter-probe.manifest/2' is newer than this reader understands (aiter-probe.manifest/1)"

case_ "truncated"
route "$MAN/invalid-truncated.json"
expect_rc 2
expect_err "route-heads: $MAN/invalid-truncated.json:5:16: premature end of input near '\"'"

finish
