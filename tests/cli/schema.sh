#!/bin/sh
# SPDX-License-Identifier: MIT
# Every manifest under tests/manifests/ and tests/golden/, and manifests the
# built tool writes, validated against schema/manifest-v1.schema.json with a
# real validator (python3-jsonschema). Files named invalid-*.json must fail.
# Uses /usr/bin/python3 on purpose: that is where Debian's python3-jsonschema
# is installed (a python3 earlier on PATH may lack it).
: "${AP_SRCDIR:?run through make check}"
PY=${AP_SCHEMA_PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import jsonschema; jsonschema.Draft202012Validator' 2>/dev/null; then
	echo "skipped: $PY cannot import jsonschema with draft 2020-12 (install python3-jsonschema)"
	exit 77
fi
set -e
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aiter-probe-schema.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# Manifests written by this build: the test tree and the bundled sample.
if [ -n "${AP_BUILDDIR:-}" ] && [ -x "$AP_BUILDDIR/aiter-probe" ]; then
	for tree in "$AP_SRCDIR/tests/manifests/tree" "$AP_SRCDIR/sample/aiter-root"; do
		[ -d "$tree" ] || continue
		AITER_PROBE_DATADIR="$AP_SRCDIR" "$AP_BUILDDIR/aiter-probe" scan --aiter-root "$tree" \
			--no-launch -o "$TMP/scanned-$(basename "$tree").json" --format json >/dev/null
	done
fi

exec "$PY" - "$AP_SRCDIR" "$TMP" <<'PYEOF'
import glob, json, os, sys
import jsonschema

srcdir, scanned = sys.argv[1], sys.argv[2]
with open(os.path.join(srcdir, "schema", "manifest-v1.schema.json")) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

files = []
for folder in ("tests/manifests", "tests/golden"):
    files += sorted(glob.glob(os.path.join(srcdir, folder, "**", "*.json"), recursive=True))
files += sorted(glob.glob(os.path.join(scanned, "*.json")))
failures = 0

def problems(doc):
    return sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))

for path in files:
    name = os.path.relpath(path, srcdir) if path.startswith(srcdir) else os.path.basename(path)
    expect_valid = not os.path.basename(path).startswith("invalid-")
    try:
        with open(path) as f:
            doc = json.load(f)
        # Golden manifests mask the machine's absolute root (tests/cli/golden.sh).
        if isinstance(doc, dict) and doc.get("aiter", {}).get("root") == "/@ROOT@":
            root = os.path.join(srcdir, "tests", "fixtures",
                                os.path.basename(path)[:-len(".json")])
            doc["aiter"]["root"] = root
            doc["aiter"]["meta"] = doc["aiter"]["meta"].replace("/@ROOT@", root, 1)
        errors = problems(doc)
        why = "; ".join("%s: %s" % ("/".join(map(str, e.absolute_path)) or "(top)", e.message)
                        for e in errors[:3])
    except ValueError as e:
        errors, why = [e], "not JSON: %s" % e
    if bool(errors) == expect_valid:
        failures += 1
        print("FAIL %s: %s" % (name, why if errors else "valid, but expected to be refused"))
    else:
        print("ok   %s%s" % (name, "" if expect_valid else " (refused: %s)" % why))

# The schema is not a rubber stamp: edits of a valid manifest it must refuse.
with open(os.path.join(srcdir, "tests", "manifests", "good.json")) as f:
    good = json.load(f)
edits = [
    ("'..' input path", lambda d: d["inputs"][1].__setitem__("path", "csrc/../../etc/passwd")),
    ("absolute input path", lambda d: d["inputs"][1].__setitem__("path", "/etc/passwd")),
    ("upper-case sha256", lambda d: d["inputs"][1].__setitem__("sha256", "A" * 64)),
    ("bytes without sha256", lambda d: d["inputs"][1].__setitem__("sha256", None)),
    ("unknown rule status", lambda d: d["rules"]["mla.reduce.cases"].__setitem__("status", "maybe")),
    ("matched without matches", lambda d: d["rules"]["mla.reduce.cases"].__setitem__("matches", [])),
    ("missing without reason", lambda d: d["rules"]["mla.reduce.cases"].update(status="missing", matches=[])),
    ("number capture", lambda d: d["rules"]["mla.reduce.cases"]["matches"][0]["captures"].__setitem__("heads", 16)),
    ("unknown launch status", lambda d: d["capabilities"]["mla.decode.native_h24"]["launch"].__setitem__("status", "ok")),
    ("unknown pad mode", lambda d: d["plans"]["mla_heads"][0].__setitem__("mode", "pad")),
    ("127 plan rows", lambda d: d["plans"]["mla_heads"].pop()),
    ("newer schema", lambda d: d.__setitem__("schema", "aiter-probe.manifest/2")),
    ("no devices", lambda d: d.pop("devices")),
    ("unknown top-level key", lambda d: d.__setitem__("extra", 1)),
    ("relative root", lambda d: d["aiter"].__setitem__("root", "opt/aiter")),
    ("empty host", lambda d: d.__setitem__("host", "")),
    ("number host", lambda d: d.__setitem__("host", 17)),
]
for what, edit in edits:
    doc = json.loads(json.dumps(good))
    edit(doc)
    if not problems(doc):
        failures += 1
        print("FAIL the schema accepts: %s" % what)
    else:
        print("ok   refuses %s" % what)

print("%d file(s) checked, %d failure(s)" % (len(files), failures))
sys.exit(1 if failures else 0)
PYEOF
