#!/bin/sh
# SPDX-License-Identifier: MIT
# The Python reader against CPython (tests/differential/run.py): 300
# generated packages and the hand-written adversarial set, each answer
# compared with what CPython binds on import; every disagreement must be
# listed in tests/differential/known.txt, and unknowns stay under its
# limits. Under valgrind, 20 packages (the list covers a prefix too).
. "$AP_SRCDIR/tests/lib.sh"
PY=${PYTHON3:-python3}
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 8))' 2>/dev/null ||
	{ echo "skipped: no python3 (3.8 or later) at '$PY'"; exit 77; }
packages=300
[ -z "${AP_WRAPPER:-}" ] || packages=20
"$PY" "$AP_SRCDIR/tests/differential/run.py" --tool "$AP" --packages "$packages" \
	--wrapper "${AP_WRAPPER:-}"
