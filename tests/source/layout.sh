#!/bin/sh
# SPDX-License-Identifier: MIT
# The architecture the folders tell, checked on the sources and on the
# objects this build made: tests/source/layout.py says what it checks.
: "${AP_SRCDIR:?run through make check}"
PY=${PYTHON3:-python3}
if ! command -v nm >/dev/null 2>&1; then
	echo "skipped: no nm (binutils) to read the objects' symbols"
	exit 77
fi
exec "$PY" "$AP_SRCDIR/tests/source/layout.py" "$AP_SRCDIR" "$AP_BUILDDIR"
