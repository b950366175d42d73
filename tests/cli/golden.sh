#!/bin/sh
# Golden manifests: every fixture tree under tests/fixtures/ is scanned with
# the shipped rule packs, and the manifest must equal tests/golden/<tree>.json
# once the machine-dependent values (the absolute root, the tool version) are
# masked; each is scanned with --host named after its tree, not the machine
# (and calls with --signatures too, as calls-signatures.json).
# AP_UPDATE_GOLDEN=1 rewrites the golden files instead.
. "$AP_SRCDIR/tests/lib.sh"

mask() {
	"${PYTHON3:-python3}" - "$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
root = m["aiter"]["root"]
if m["aiter"]["meta"].startswith(root):
    m["aiter"]["meta"] = "/@ROOT@" + m["aiter"]["meta"][len(root):]
m["aiter"]["root"] = "/@ROOT@"
m["tool"]["version"] = "@VERSION@"
print(json.dumps(m, indent=2))
PY
}

for tree in "$AP_SRCDIR"/tests/fixtures/*/; do
	name=$(basename "$tree")
	case_ "golden $name"
	probe scan --aiter-root "$tree" --no-launch --host "$name" --format json
	expect_rc 0
	mask "$TMP/out" >"$TMP/$name.json" || { fail "not JSON"; continue; }
	golden="$AP_SRCDIR/tests/golden/$name.json"
	if [ "${AP_UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$TMP/$name.json" "$golden"
	elif [ ! -f "$golden" ]; then
		fail "no golden manifest $golden (make update-golden)"
	else
		diff -u "$golden" "$TMP/$name.json" >&2 || fail "manifest differs from $golden"
	fi
done

# With --signatures: the public callables of the modules rules/signatures.yaml
# names (the fixture laid out for them).
case_ "golden calls --signatures"
probe scan --aiter-root "$AP_SRCDIR/tests/fixtures/calls" --no-launch --host calls --signatures \
	--format json
expect_rc 0
mask "$TMP/out" >"$TMP/calls-signatures.json" || fail "not JSON"
golden="$AP_SRCDIR/tests/golden/calls-signatures.json"
if [ "${AP_UPDATE_GOLDEN:-}" = 1 ]; then
	cp "$TMP/calls-signatures.json" "$golden"
else
	diff -u "$golden" "$TMP/calls-signatures.json" >&2 || fail "manifest differs from $golden"
fi
finish
