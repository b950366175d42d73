#!/bin/sh
# SPDX-License-Identifier: MIT
# The saved manifest of this interpreter's AITER, the backend adapter, and the
# vLLM and SGLang examples over it, with the python3 configure found. The
# examples' array cases need numpy (python3-numpy) and run with torch too,
# on the GPU when torch sees one; outside make check:
#   AP_SRCDIR=$PWD AP_BUILDDIR=$PWD sh tests/python/backend.sh
: "${AP_SRCDIR:?run through make check}"
PY=${PYTHON3:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 6))' 2>/dev/null; then
	echo "skipped: no python3 (3.6 or later) at '$PY'"
	exit 77
fi
"$PY" -c 'import numpy' 2>/dev/null ||
	echo "note: no numpy for $PY: the examples' array cases are skipped (install python3-numpy)"
rc=0
for t in tests/python/test_backend.py tests/python/test_calls.py \
	examples/vllm/test_rocm_aiter_mla.py \
	examples/sglang/test_aiter_backend.py; do
	echo "== $t"
	"$PY" "$AP_SRCDIR/$t" || rc=1
done
exit $rc
