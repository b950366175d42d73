#!/bin/sh
# SPDX-License-Identifier: MIT
# The Python reader (python/aiter_probe/), with the python3 configure found.
: "${AP_SRCDIR:?run through make check}"
PY=${PYTHON3:-python3}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 6))' 2>/dev/null; then
	echo "skipped: no python3 (3.6 or later) at '$PY'"
	exit 77
fi
exec "$PY" "$AP_SRCDIR/tests/python/test_reader.py"
