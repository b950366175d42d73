#!/bin/sh
# SPDX-License-Identifier: MIT
# The Python package as pip installs it: with its engine (setup.py: the C
# sources built into aiter_probe/libaiter-probe.so, the packs as package
# data), built offline into a wheel and installed into a fresh venv (only
# pip there), installed from the source folder with the interpreter's
# setuptools (the build reused: the engine is compiled once a run),
# imported from elsewhere with no path tricks; the scan in process equal to
# the command's, and `python -m aiter_probe` on a manifest of the sample tree.
. "$AP_SRCDIR/tests/lib.sh"
PY=${PYTHON3:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_NO_CACHE_DIR=1
unset PYTHONPATH PYTHONHOME PIP_INDEX_URL PIP_FIND_LINKS

"$PY" -c 'import venv, ensurepip' 2>/dev/null ||
	{ echo "skipped: $PY has no venv with ensurepip (Debian: python3-venv)"; exit 77; }
"$PY" -m pip --version >/dev/null 2>&1 ||
	{ echo "skipped: $PY has no pip (Debian: python3-pip)"; exit 77; }
"$PY" -c 'import setuptools, wheel' 2>/dev/null ||
	{ echo "skipped: $PY lacks setuptools or wheel to build with (Debian: python3-setuptools python3-wheel)"; exit 77; }

# pyrun VENV ARGS...: the venv's python, isolated (-I: no PYTHON* variables,
# no script or current folder on sys.path), from a folder outside the source
# tree, with the packs it installed (not the source tree's, which the tests'
# AITER_PROBE_DATADIR names for the command); like probe, $rc, $TMP/out and
# $TMP/err.
mkdir "$TMP/elsewhere"
expect_no_err() { [ ! -s "$TMP/err" ] || { fail "unexpected stderr"; sed 's/^/  /' "$TMP/err" >&2; }; }
pyrun() {
	venv=$1
	shift
	rc=0
	(unset AITER_PROBE_DATADIR AITER_PROBE_LIBRARY; cd "$TMP/elsewhere" &&
		"$venv/bin/python" -I "$@") >"$TMP/out" 2>"$TMP/err" || rc=$?
}

# A writable copy of what setup.py reads: under distcheck the source tree
# is read-only, and the build writes beside pyproject.toml; python/ and the
# C sources it builds, beside each other as in the tree.
mkdir "$TMP/src"
for f in python src include rules probes Makefile.am configure.ac; do
	cp -RL "$AP_SRCDIR/$f" "$TMP/src/$f" || fail "copy $f"
done
chmod -R u+w "$TMP/src"
version=$("$AP" --version | sed -n '1s/^aiter-probe //p')
platform=$("$PY" -c 'import sysconfig; print(sysconfig.get_platform().replace("-", "_").replace(".", "_"))')

case_ "wheel, built offline, for any Python 3 of this platform"
"$PY" -m pip wheel --no-build-isolation --no-deps --no-index --no-cache-dir -w "$TMP/dist" \
	"$TMP/src/python" >"$TMP/build.log" 2>&1 ||
	{ fail "pip wheel failed"; sed 's/^/  /' "$TMP/build.log" >&2; }
wheel="$TMP/dist/aiter_probe-$version-py3-none-$platform.whl"
[ -f "$wheel" ] || fail "no $wheel (the tool says $version): $(ls "$TMP/dist")"

case_ "the wheel in a fresh venv"
"$PY" -m venv "$TMP/venv" || fail "venv"
"$TMP/venv/bin/python" -m pip install --no-index "$wheel" >"$TMP/install.log" 2>&1 ||
	{ fail "pip install of the wheel failed"; sed 's/^/  /' "$TMP/install.log" >&2; }

case_ "the source folder with the interpreter's setuptools, as doc/python.md says"
"$PY" -m venv --system-site-packages "$TMP/venv-src" || fail "venv --system-site-packages"
(cd "$TMP/src" && "$TMP/venv-src/bin/python" -m pip install --no-build-isolation --no-index \
	./python) >"$TMP/install-src.log" 2>&1 ||
	{ fail "pip install --no-build-isolation failed"; sed 's/^/  /' "$TMP/install-src.log" >&2; }

# Every module of the package folder, the licence, the engine and every
# shipped pack are installed.
modules=$("$PY" -c 'import os, sys
src = sys.argv[1]
print(sorted(["LICENSE", "libaiter-probe.so", "py.typed"]
             + [f for f in os.listdir(os.path.join(src, "python", "aiter_probe")) if f.endswith(".py")]))
print(sorted(d + "/" + f for d in ("rules", "probes") for f in os.listdir(os.path.join(src, d))))' \
	"$AP_SRCDIR")
for v in venv venv-src; do
	case_ "$v: imported from its site-packages, the tool's version, its engine and packs"
	pyrun "$TMP/$v" -c 'import aiter_probe, importlib.metadata as md, os, sys
print(os.path.relpath(aiter_probe.__file__, sys.prefix))
print(aiter_probe.__version__)
m = md.metadata("aiter-probe")
print(m["Name"], m["Version"], m["License"])
files = [str(f) for f in md.files("aiter-probe")]
print(sorted(os.path.basename(f) for f in files if f.endswith((".py", "LICENSE", ".so", "py.typed"))))
print(sorted(f.split("aiter_probe/data/")[1] for f in files if "aiter_probe/data/" in f))'
	expect_rc 0
	pyver=$("$TMP/$v/bin/python" -c 'import sys; print("python%d.%d" % sys.version_info[:2])')
	expect_out "lib/$pyver/site-packages/aiter_probe/__init__.py
$version
aiter-probe $version MIT
$modules"

	case_ "$v: the engine loads by ctypes, the tool's version, only the C API exported"
	pyrun "$TMP/$v" -c 'import ctypes, os, sys
from aiter_probe import engine
path = engine.library_path()
print(os.path.relpath(path, sys.prefix))
lib = ctypes.CDLL(path)
lib.aiter_probe_version.restype = ctypes.c_char_p
print(lib.aiter_probe_version().decode())'
	expect_rc 0
	expect_out "lib/$pyver/site-packages/aiter_probe/libaiter-probe.so
$version"
	so="$TMP/$v/lib/$pyver/site-packages/aiter_probe/libaiter-probe.so"
	if command -v nm >/dev/null; then
		other=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^aiter_probe_')
		[ -z "$other" ] || fail "exported beside the C API: $other"
	fi
done

# A manifest of a copy of the sample tree, and the tool's own verdicts.
cp -R "$AP_SRCDIR/sample/aiter-root" "$TMP/tree" && chmod -R u+w "$TMP/tree"
MANIFEST="$TMP/m.json"
probe scan --aiter-root "$TMP/tree" --no-launch -o "$MANIFEST"
[ "$rc" = 0 ] || { fail "scan: exit $rc"; cat "$TMP/err" >&2; }
tree_real=$(cd "$TMP/tree" && pwd -P)

for v in venv venv-src; do
	case_ "$v: the scan in process with the installed packs, as the command's"
	pyrun "$TMP/$v" -c 'import json, sys
from aiter_probe.engine import scan_tree
m = scan_tree(sys.argv[1])
with open(sys.argv[2]) as f:
    want = json.load(f)
print(m.path)
for key in ("aiter", "python", "inputs", "rules", "capabilities", "plans"):
    if m.data.get(key) != want.get(key):
        print("differs:", key)' "$TMP/tree" "$MANIFEST"
	expect_rc 0
	expect_out "the scan of $TMP/tree"
done

# No saved manifest anywhere: for_this_process scans the tree it imports.
export AITER_PROBE_MANIFEST_DIR="$TMP/saved"
unset AITER_PROBE_MANIFEST
for v in venv venv-src; do
	case_ "$v: for_this_process with no manifest answers as the command's scan, every capability"
	pyrun "$TMP/$v" -c 'import json, sys
sys.path.insert(0, sys.argv[1])
import aiter_probe
from aiter_probe.backend import Backend, for_this_process, _CAPABILITIES, _RULES
b = for_this_process()
want = aiter_probe.load(sys.argv[2])
print(b.reason, b.manifest.path)
for cap in want.data["capabilities"]:
    if b.manifest.data["capabilities"][cap] != want.data["capabilities"][cap]:
        print("differs:", cap)
cli = Backend(want)
for name in list(_CAPABILITIES) + list(_RULES) + ["gluon_mla_decode_max_heads", "reducer_cases",
                                                  "mla_decode_fwd_keywords"]:
    if getattr(b, name)() != getattr(cli, name)():
        print("differs:", name)
if [b.mla_launch_heads(h) for h in range(1, 129)] != [cli.mla_launch_heads(h) for h in range(1, 129)]:
    print("differs: mla_launch_heads")' "$TMP/tree" "$MANIFEST"
	expect_rc 0
	expect_out "None the scan of $tree_real"
	expect_no_err
done

case_ "for_this_process, the engine cannot load and no manifest: conservative, one warning"
rc=0
(cd "$TMP/elsewhere" && AITER_PROBE_LIBRARY="$TMP/none.so" "$TMP/venv/bin/python" -I -c 'import sys
sys.path.insert(0, sys.argv[1])
from aiter_probe.backend import for_this_process
b = for_this_process()
print(b.mla_decode_native_24_heads(), b.mla_launch_heads(24))
for_this_process()' "$TMP/tree") >"$TMP/out" 2>"$TMP/err" || rc=$?
expect_rc 0
expect_out "False (32, 'tile-slice')"
root_hash=$("$PY" -c 'import hashlib, os, sys
print(hashlib.sha256(os.fsencode(os.path.realpath(sys.argv[1]))).hexdigest()[:16])' "$TMP/tree")
expect_err "no AITER capability manifest, so every AITER decision takes the conservative answer: no manifest at $TMP/saved/aiter-$root_hash.json: run 'aiter-probe scan --save'; and cannot load the engine $TMP/none.so: $TMP/none.so: cannot open shared object file: No such file or directory"

case_ "an engine that cannot load: its error"
rc=0
(cd "$TMP/elsewhere" && AITER_PROBE_LIBRARY="$TMP/none.so" "$TMP/venv/bin/python" -I -c 'import sys
from aiter_probe.engine import EngineError, scan_tree
try:
    scan_tree(sys.argv[1])
except EngineError as e:
    print(e)' "$TMP/tree") >"$TMP/out" 2>"$TMP/err" || rc=$?
expect_rc 0
expect_out "cannot load the engine $TMP/none.so: $TMP/none.so: cannot open shared object file: No such file or directory"
all=$("$PY" -c 'import json, sys; print(",".join(json.load(open(sys.argv[1]))["capabilities"]))' "$MANIFEST")
# check wraps to the width; the module prints one line per verdict.
COLUMNS=10000 probe check --manifest "$MANIFEST" --require "$all"
cp "$TMP/out" "$TMP/check.out"

case_ "-m aiter_probe MANIFEST: every capability, as check prints them"
pyrun "$TMP/venv" -m aiter_probe "$MANIFEST"
expect_rc 1
diff -u "$TMP/check.out" "$TMP/out" >&2 || fail "differs from aiter-probe check"
expect_no_err

case_ "-m aiter_probe MANIFEST CAP: supported"
pyrun "$TMP/venv" -m aiter_probe "$MANIFEST" mla.decode_fwd.fp8_scales aiter.hipb_mm
expect_rc 0
expect_out "supported   mla.decode_fwd.fp8_scales: rule mla.decode_fwd.params.fp8_scales matched in aiter/mla.py
supported   aiter.hipb_mm: rule export.hipb_mm matched in aiter/ops/gradlib.py
go: every required capability is supported"

case_ "-m aiter_probe MANIFEST CAP: one unsupported"
pyrun "$TMP/venv" -m aiter_probe "$MANIFEST" aiter.hipb_mm mla.decode_fwd.causal
expect_rc 1
expect_out "supported   aiter.hipb_mm: rule export.hipb_mm matched in aiter/ops/gradlib.py
unsupported mla.decode_fwd.causal: rule mla.decode_fwd.params.causal did not match: mla_decode_fwd has no parameter 'causal'
no-go: some required capability is not supported"

case_ "control bytes escaped as check escapes them"
"$PY" -c 'import json, sys
m = json.load(open(sys.argv[1]))
m["capabilities"]["aiter.hipb_mm"]["reason"] = "a\x1b[31mb\u0085c\td\ne"
json.dump(m, open(sys.argv[2], "w"))' "$MANIFEST" "$TMP/ctl.json"
COLUMNS=10000 probe check --manifest "$TMP/ctl.json" --require aiter.hipb_mm
cp "$TMP/out" "$TMP/check.out"
pyrun "$TMP/venv" -m aiter_probe "$TMP/ctl.json" aiter.hipb_mm
expect_rc 0
expect_out "$(printf 'supported   aiter.hipb_mm: a\\x1b[31mb\\xc2\\x85c\td\\x0ae')
go: every required capability is supported"
diff -u "$TMP/check.out" "$TMP/out" >&2 || fail "differs from aiter-probe check"

case_ "stdout lost"
if [ -w /dev/full ]; then
	rc=0
	(cd "$TMP/elsewhere" && "$TMP/venv/bin/python" -I -m aiter_probe "$MANIFEST") >/dev/full 2>"$TMP/err" || rc=$?
	expect_rc 2
	expect_err "aiter_probe: writing to stdout: No space left on device"
fi
rc=0
(cd "$TMP/elsewhere" && "$TMP/venv/bin/python" -I -m aiter_probe "$MANIFEST") >&- 2>"$TMP/err" || rc=$?
expect_rc 2
expect_err "aiter_probe: writing to stdout: Bad file descriptor"

case_ "inputs re-hashed by default: fresh"
pyrun "$TMP/venv-src" -m aiter_probe "$MANIFEST" aiter.hipb_mm
expect_rc 0
expect_out_has "go: every required capability is supported"

case_ "unknown capability"
pyrun "$TMP/venv" -m aiter_probe "$MANIFEST" aiter.hipb_mm no.such
expect_rc 2
expect_no_out
expect_err "aiter_probe: $MANIFEST: unknown capability 'no.such'"

case_ "unknown capability: the nearest known ids"
pyrun "$TMP/venv" -m aiter_probe "$MANIFEST" aiter.hipb_nm
expect_rc 2
expect_err "aiter_probe: $MANIFEST: unknown capability 'aiter.hipb_nm'; nearest: aiter.hipb_mm, aiter.scaled_mm_gemms, aiter.sampling.top_k_top_p"

case_ "unknown capability: the nearest are the tool's, in its order"
for word in mla.decode_fwd.fp8_scale mla.nope mla.decode mla.decode.native_h42 \
	mla.decode.native_h24.x aiter.qr fused_moe.gate vllm x; do
	probe check --manifest "$MANIFEST" --require "$word"
	want=$(sed -n 's/.*; nearest: //p' "$TMP/err")
	pyrun "$TMP/venv" -m aiter_probe "$MANIFEST" "$word"
	expect_rc 2
	got=$(sed -n 's/.*; nearest: //p' "$TMP/err")
	[ "$got" = "$want" ] || fail "$word: nearest '$got', the tool's '$want'"
done

case_ "unknown capability: bytes that are not UTF-8 come back as given"
word=$(printf 'mla.decode.native_h2\377')
pyrun "$TMP/venv" -m aiter_probe "$MANIFEST" "$word"
expect_rc 2
expect_err "aiter_probe: $MANIFEST: unknown capability '$word'; nearest: mla.decode.native_h24"

case_ "a rule's id is no capability"
pyrun "$TMP/venv" -m aiter_probe "$MANIFEST" mla.reduce.cases
expect_rc 2
expect_err "aiter_probe: $MANIFEST: 'mla.reduce.cases' is a rule, not a capability"

case_ "a capability named twice is answered once"
pyrun "$TMP/venv" -m aiter_probe "$MANIFEST" aiter.hipb_mm aiter.hipb_mm
expect_rc 0
[ "$(grep -c 'aiter.hipb_mm' "$TMP/out")" = 1 ] || fail "named twice: $(cat "$TMP/out")"

case_ "unreadable manifest"
pyrun "$TMP/venv" -m aiter_probe "$TMP/none.json"
expect_rc 2
expect_no_out
expect_err "aiter_probe: $TMP/none.json: No such file or directory"

case_ "newer schema: the reader's message"
pyrun "$TMP/venv" -m aiter_probe "$AP_SRCDIR/tests/manifests/invalid-newer-schema.json"
expect_rc 2
expect_no_out
expect_err "aiter_probe: $AP_SRCDIR/tests/manifests/invalid-newer-schema.json: schema 'aiter-probe.manifest/2' is newer than this reader understands (aiter-probe.manifest/1)"

case_ "inputs re-hashed by default: stale is an error, as check --manifest"
echo '// changed' >>"$TMP/tree/csrc/kernels/mla/reduce.cu"
pyrun "$TMP/venv" -m aiter_probe "$MANIFEST" aiter.hipb_mm
expect_rc 2
expect_no_out
expect_err "aiter_probe: $MANIFEST: stale: csrc/kernels/mla/reduce.cu changed; run 'aiter-probe scan' again"

case_ "--no-verify: a stale manifest still answers"
pyrun "$TMP/venv" -m aiter_probe --no-verify "$MANIFEST" aiter.hipb_mm
expect_rc 0

case_ "--help"
pyrun "$TMP/venv" -m aiter_probe --help
expect_rc 0
expect_out_has "usage: python3 -m aiter_probe [--no-verify] MANIFEST [CAP...]"
expect_out_has "Exit status: 0 all supported, 1 some not supported (unsupported or unknown), 2"
expect_out_has "usage or input error (an unreadable or stale manifest, an unknown capability)."

case_ "no manifest"
pyrun "$TMP/venv" -m aiter_probe
expect_rc 2
expect_err "usage: python3 -m aiter_probe [--no-verify] MANIFEST [CAP...]
aiter_probe: error: the following arguments are required: MANIFEST"

finish
