#!/bin/sh
# SPDX-License-Identifier: MIT
# The target interpreter's facts in the Python kinds: CPython agrees with
# every condition the reader decides; --python and --python-version, what
# they refuse; version, platform and try/except ImportError conditions in a
# tree; the facts asked once and only when needed, a module absent answering
# those under it, a try no answer depends on left undecided; the manifest's
# python;
# verify and check --manifest with another interpreter; interpreters that
# fail, hang, flood or print what is no answer.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

case_ "CPython gives every condition the reader decides the reader's value"
"${PYTHON3:-python3}" "$AP_SRCDIR/tests/kinds/python-conditions.py" \
	"$AP_SRCDIR/tests/unit/python-conditions.txt" >"$TMP/cpython" 2>&1 ||
	{ fail "CPython disagrees"; sed 's/^/  /' "$TMP/cpython" >&2; }

# stand_in NAME VERSION PLATFORM OS_NAME FOUND...: an interpreter that
# answers the facts script with those facts (its own path as
# sys.executable) once started, then "found" for each module named on its
# stdin that is among those given, else "absent"; each start ("start"), and
# each question (the module), is logged in $TMP/NAME.log.
mkdir -p "$TMP/bin"
stand_in() {
	name=$1 version=$2 platform=$3 os_name=$4
	shift 4
	{
		echo '#!/bin/sh'
		echo "echo start >>'$TMP/$name.log'"
		echo "printf 'aiter-probe-facts-1\\n%s\\n%s\\n%s\\n%s\\n' \"\$0\" '$version' '$platform' '$os_name'"
		echo 'while read -r module; do'
		echo "    echo \"\$module\" >>'$TMP/$name.log'"
		echo '    case "$module" in'
		for m in "$@"; do echo "    $m) echo found ;;"; done
		echo '    *) echo absent ;;'
		echo '    esac'
		echo 'done'
	} >"$TMP/bin/$name"
	chmod +x "$TMP/bin/$name"
	: >"$TMP/$name.log"
}
stand_in py312 "3 12 3 final 0" linux posix triton triton.language
stand_in py39 "3 9 18 final 0" linux posix
stand_in win311 "3 11 9 final 0" win32 nt

TREE="$TMP/tree"
mkdir -p "$TREE/aiter/ops/fast"
touch "$TREE/aiter/__init__.py" "$TREE/aiter/ops/__init__.py"
printf 'def tiles(q):\n    return q\n' >"$TREE/aiter/ops/fast/__init__.py"
cat >"$TREE/aiter/mla.py" <<'EOF'
import os
import sys

if sys.version_info >= (3, 10):
    def decode(q, k, causal=True):
        return q
else:
    def decode(q, k):
        return q

if sys.platform.startswith("linux") and os.name == "posix":
    def launch(q, stream=None):
        return q
else:
    def launch(q):
        return q

try:
    import triton
    from triton.language import tl
except ImportError:
    def kernel(q):
        return q
else:
    def kernel(q, fast=True):
        return q

try:
    from .ops.fast import tiles
    from .ops.slow import tiles_fallback
except ImportError:
    def tiles(q, fallback=True):
        return q
EOF
cat >"$TREE/aiter/plain.py" <<'EOF'
import sys

if __name__ == "__main__":
    def main(argv=None):
        pass

def main(argv):
    pass
EOF
pack facts <<'EOF'
rules:
  - id: decode.causal
    file: aiter/mla.py
    python-def: decode
    params: [causal]
  - id: launch.stream
    file: aiter/mla.py
    python-def: launch
    params: [stream]
  - id: kernel.fast
    file: aiter/mla.py
    python-def: kernel
    params: [fast]
  - id: tiles.fallback
    file: aiter/mla.py
    python-def: tiles
    params: [fallback]
EOF
pack plain <<'EOF'
rules:
  - id: main.required
    file: aiter/plain.py
    python-def: main
    binds: {positional: 0}
EOF

scan_facts() {
	probe scan --aiter-root "$TREE" --no-launch --no-default-rules --rules "$TMP/facts.yaml" \
		--format json "$@"
}

case_ "--python: the version, platform and imports of that interpreter decide"
scan_facts --python "$TMP/bin/py312"
expect_rc 0
rule decode.causal status matched
rule launch.stream status matched
rule kernel.fast status matched
rule tiles.fallback status matched
expect_json 'j["python"]' "{'executable': '$TMP/bin/py312', 'version': '3.12.3', 'releaselevel': 'final', 'platform': 'linux', 'os_name': 'posix', 'finds': {'triton': True, 'triton.language': True}}"

case_ "the facts are asked once a scan, each module once, and only what is needed"
expect_json "open('$TMP/py312.log').read().split()" "['start', 'triton', 'triton.language']"
: >"$TMP/py312.log"
probe scan --aiter-root "$TREE" --no-launch --no-default-rules --rules "$TMP/plain.yaml" \
	--format json --python "$TMP/bin/py312"
expect_rc 0
rule main.required status unmatched
expect_json '"python" in j' False
[ ! -s "$TMP/py312.log" ] || fail "the interpreter ran for a scan that needs none of its facts"

case_ "the in-tree imports of a try are looked up in the tree, and are inputs"
scan_facts --python "$TMP/bin/py312"
expect_json "[i['path'] for i in j['inputs'] if 'ops' in i['path']]" "['aiter/ops/fast/__init__.py', 'aiter/ops/slow/__init__.py', 'aiter/ops/slow.py', 'aiter/ops/slow/', 'aiter/ops/']"

case_ "a try the answer does not depend on is not decided: its imports are neither read nor asked"
mkdir -p "$TMP/lazy/aiter"
cat >"$TMP/lazy/aiter/__init__.py" <<'EOF'
from .core import run
try:
    import triton
    from .heavy import extra
except ImportError:
    extra = None
EOF
printf 'def run(q, stream=None):\n    return q\n' >"$TMP/lazy/aiter/core.py"
printf 'from .deeper import extra\n' >"$TMP/lazy/aiter/heavy.py"
printf 'def extra():\n    pass\n' >"$TMP/lazy/aiter/deeper.py"
pack lazy <<'EOF'
rules:
  - id: run.stream
    python-export: run
    from: aiter
    params: [stream]
EOF
: >"$TMP/py312.log"
probe scan --aiter-root "$TMP/lazy" --no-launch --no-default-rules --rules "$TMP/lazy.yaml" \
	--format json --python "$TMP/bin/py312"
expect_rc 0
rule run.stream status matched
expect_json "[i['path'] for i in j['inputs'] if i['sha256']]" "['aiter/__init__.py', 'aiter/core.py']"
expect_json '"python" in j' False
[ ! -s "$TMP/py312.log" ] || fail "the interpreter was asked what no answer needs"
pack lazy <<'EOF'
rules:
  - id: extra.def
    python-export: extra
    from: aiter
EOF
probe scan --aiter-root "$TMP/lazy" --no-launch --no-default-rules --rules "$TMP/lazy.yaml" \
	--format json --python "$TMP/bin/py312"
expect_rc 0
rule extra.def status matched
expect_json "[i['path'] for i in j['inputs'] if i['sha256']]" "['aiter/__init__.py', 'aiter/heavy.py', 'aiter/deeper.py']"
expect_json 'j["python"]["finds"]' "{'triton': True}"

case_ "another interpreter: other arms"
scan_facts --python "$TMP/bin/py39"
expect_rc 0
rule decode.causal status unmatched
rule decode.causal reason "decode has no parameter 'causal'"
rule kernel.fast status unmatched
expect_json 'j["python"]["finds"]' "{'triton': False}"
scan_facts --python "$TMP/bin/win311"
rule launch.stream status unmatched
expect_json 'j["python"]["platform"]' win32

case_ "--python-version: the version alone; the platform and outside imports are not known"
scan_facts --python-version 3.9
expect_rc 0
rule decode.causal status unmatched
expect_json 'j["python"]' "{'executable': None, 'version': '3.9'}"
scan_facts --python-version 3.12.1
expect_json 'j["python"]' "{'executable': None, 'version': '3.12.1'}"
rule decode.causal status matched

case_ "the default is \$AITER_PROBE_PYTHON, else python3 on PATH"
: >"$TMP/py39.log"
AITER_PROBE_PYTHON="$TMP/bin/py39" scan_facts
expect_rc 0
rule decode.causal status unmatched
[ -s "$TMP/py39.log" ] || fail "AITER_PROBE_PYTHON was not asked"
mkdir -p "$TMP/path"
cp "$TMP/bin/py312" "$TMP/path/python3"
PATH="$TMP/path:$PATH" scan_facts
expect_json 'j["python"]["executable"]' "$TMP/path/python3"

case_ "usage errors: --python and --python-version"
scan_facts --python "$TMP/nope"
expect_rc 2
expect_no_out
expect_err "aiter-probe scan: --python: $TMP/nope: No such file or directory
Try 'aiter-probe scan --help'."
scan_facts --python "$TMP"
expect_rc 2
expect_err "aiter-probe scan: --python: $TMP: not a regular file
Try 'aiter-probe scan --help'."
printf 'x\n' >"$TMP/notexec"
chmod 0644 "$TMP/notexec"
if [ "$(id -u)" != 0 ]; then
	scan_facts --python "$TMP/notexec"
	expect_rc 2
	expect_err "aiter-probe scan: --python: $TMP/notexec: Permission denied
Try 'aiter-probe scan --help'."
fi
PATH=/nonexistent scan_facts --python python3.99
expect_rc 2
expect_err "aiter-probe scan: --python: python3.99: not found in PATH
Try 'aiter-probe scan --help'."
scan_facts --python ""
expect_rc 2
expect_err "aiter-probe scan: --python: '' names no interpreter
Try 'aiter-probe scan --help'."
for bad in 3 3. .12 3.x 3.12.1.4 3.12- 12345.1 "" " 3.12" 3.-1 +3.12; do
	scan_facts --python-version "$bad"
	expect_rc 2
	expect_err "aiter-probe scan: --python-version takes X.Y or X.Y.Z (such as 3.12), not '$bad'
Try 'aiter-probe scan --help'."
done
scan_facts --python "$TMP/bin/py312" --python-version 3.12
expect_rc 2
expect_err "aiter-probe scan: --python and --python-version cannot both be given
Try 'aiter-probe scan --help'."
probe check --require x --python-version 3.12 --python "$TMP/bin/py312"
expect_rc 2
expect_err "aiter-probe check: --python and --python-version cannot both be given
Try 'aiter-probe check --help'."

case_ "an interpreter that cannot be run, when its facts are needed"
PATH=/nonexistent scan_facts
expect_rc 2
expect_no_out
# Under valgrind the child that cannot exec the interpreter exits 127 instead
# of reporting exec's error: the same refusal, in other words.
if [ -z "${AP_WRAPPER:-}" ]; then
	expect_err "aiter-probe: cannot ask python3 for its facts: No such file or directory (name the interpreter that will run the server with --python PATH, or its version with --python-version X.Y)"
else
	expect_err "aiter-probe: cannot ask python3 for its facts: python3 exited with status 127 without a result (name the interpreter that will run the server with --python PATH, or its version with --python-version X.Y)"
fi

# bad NAME SCRIPT: an interpreter whose every run is SCRIPT.
bad() {
	printf '#!/bin/sh\n%s\n' "$2" >"$TMP/bin/$1"
	chmod +x "$TMP/bin/$1"
}
hint="(name the interpreter that will run the server with --python PATH, or its version with --python-version X.Y)"
for case in "no answer|echo hello" \
	"a version that is no number|printf 'aiter-probe-facts-1\n/x\n3 a 3 final 0\nlinux\nposix\n'" \
	"a signed version|printf 'aiter-probe-facts-1\n/x\n3 -12 3 final 0\nlinux\nposix\n'" \
	"a leading zero|printf 'aiter-probe-facts-1\n/x\n3 012 3 final 0\nlinux\nposix\n'" \
	"two blanks|printf 'aiter-probe-facts-1\n/x\n3  12 3 final 0\nlinux\nposix\n'" \
	"more after the serial|printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0 1\nlinux\nposix\n'" \
	"another magic line|printf 'aiter-probe-facts-2\n/x\n3 12 3 final 0\nlinux\nposix\n'" \
	"an unknown release level|printf 'aiter-probe-facts-1\n/x\n3 12 3 gamma 0\nlinux\nposix\n'" \
	"a platform with a space|printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0\nlin ux\nposix\n'" \
	"a line too many|printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0\nlinux\nposix\nmore\n'" \
	"no last newline|printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0\nlinux\nposix'" \
	"a control byte|printf 'aiter-probe-facts-1\n/x\033\n3 12 3 final 0\nlinux\nposix\n'" \
	"a NUL|printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0\nlinux\000\nposix\n'"; do
	what=${case%%|*}
	bad garbage "${case#*|}"
	case_ "an interpreter whose facts are not as they must be: $what"
	scan_facts --python "$TMP/bin/garbage"
	expect_rc 2
	expect_no_out
	expect_err "aiter-probe: cannot ask $TMP/bin/garbage for its facts: it printed what is no answer $hint"
done

case_ "an interpreter that fails"
bad fails 'echo broken >&2; exit 3'
scan_facts --python "$TMP/bin/fails"
expect_rc 2
expect_err "aiter-probe: cannot ask $TMP/bin/fails for its facts: $TMP/bin/fails exited with status 3 without a result: broken $hint"

case_ "an interpreter that hangs is killed at its time limit"
bad hangs 'exec sleep 100'
start=$(date +%s)
AITER_PROBE_PYTHON_TIMEOUT=1 scan_facts --python "$TMP/bin/hangs"
took=$(($(date +%s) - start))
expect_rc 2
expect_err "aiter-probe: cannot ask $TMP/bin/hangs for its facts: timed out after 1 s (killed) $hint"
[ "$took" -lt 10 ] || fail "took $took s"

case_ "an interpreter that floods its output"
bad floods 'head -c 2000000 /dev/zero | tr "\\000" y'
scan_facts --python "$TMP/bin/floods"
expect_rc 2
expect_err "aiter-probe: cannot ask $TMP/bin/floods for its facts: $TMP/bin/floods wrote more than 1048576 bytes $hint"

case_ "an interpreter that answers the facts but not where it finds modules"
bad half "printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0\nlinux\nposix\n'; while read -r m; do echo maybe; done"
scan_facts --python "$TMP/bin/half"
expect_rc 2
expect_err "aiter-probe: cannot ask $TMP/bin/half where it finds modules: it printed what is no answer $hint"

case_ "an interpreter whose find answer holds a NUL"
bad nul "printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0\nlinux\nposix\n'; while read -r m; do printf 'found\n\000x'; done"
scan_facts --python "$TMP/bin/nul"
expect_rc 2
expect_err "aiter-probe: cannot ask $TMP/bin/nul where it finds modules: it printed what is no answer $hint"

case_ "a time limit that is no positive number"
for bad in soon 0 -1 1e9 nan; do
	AITER_PROBE_PYTHON_TIMEOUT=$bad scan_facts --python "$TMP/bin/py312"
	expect_rc 2
	expect_no_out
	expect_err "aiter-probe: AITER_PROBE_PYTHON_TIMEOUT must be a positive number of seconds, not '$bad'"
done

case_ "find_spec that raises: the import is not known, and nothing is refused"
bad raises "printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0\nlinux\nposix\n'; while read -r m; do echo error; done"
scan_facts --python "$TMP/bin/raises"
expect_rc 0
expect_json '"finds" in j["python"]' False

case_ "a module absent answers the modules under it, one found those above it: one run each"
# CPython itself, each start and each module asked logged, each before
# CPython reads it (tee may write its file after the answer, and the scan,
# done, ends the run first)
{
	echo '#!/bin/sh'
	echo "echo start >>'$TMP/logged.log'"
	echo "while IFS= read -r m; do echo \"\$m\" >>'$TMP/logged.log'; echo \"\$m\"; done |"
	echo "    '${PYTHON3:-python3}' \"\$@\""
} >"$TMP/bin/logged"
chmod +x "$TMP/bin/logged"
mkdir -p "$TMP/implied/aiter"
touch "$TMP/implied/aiter/__init__.py"
cat >"$TMP/implied/aiter/opt.py" <<'EOF'
try:
    import aiter_probe_nowhere.language.extra
except ImportError:
    def deep(q, fallback=True):
        return q

try:
    import aiter_probe_nowhere.experimental
except ImportError:
    def wide(q, fallback=True):
        return q

try:
    import json.decoder
except ImportError:
    pass
else:
    def decoder(q, stdlib=True):
        return q

try:
    import json
except ImportError:
    pass
else:
    def top(q, stdlib=True):
        return q
EOF
pack implied <<'EOF'
rules:
  - {id: deep, file: aiter/opt.py, python-def: deep, params: [fallback]}
  - {id: wide, file: aiter/opt.py, python-def: wide, params: [fallback]}
  - {id: decoder, file: aiter/opt.py, python-def: decoder, params: [stdlib]}
  - {id: top, file: aiter/opt.py, python-def: top, params: [stdlib]}
EOF
: >"$TMP/logged.log"
probe scan --aiter-root "$TMP/implied" --no-launch --no-default-rules --rules "$TMP/implied.yaml" \
	--format json --python "$TMP/bin/logged"
expect_rc 0
for id in deep wide decoder top; do rule $id status matched; done
expect_json 'j["python"]["finds"]' "{'aiter_probe_nowhere.language.extra': False, 'aiter_probe_nowhere.experimental': False, 'json.decoder': True, 'json': True}"
# one run for the facts and every module, asked only those not implied
expect_json "open('$TMP/logged.log').read().split()" "['start', 'aiter_probe_nowhere.language.extra', 'json.decoder']"

case_ "an interpreter that hangs mid-answer is killed at its time limit"
bad stalls "printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0\nlinux\nposix\n'; read -r m; printf fou; exec sleep 100"
start=$(date +%s)
AITER_PROBE_PYTHON_TIMEOUT=1 probe scan --aiter-root "$TMP/implied" --no-launch --no-default-rules \
	--rules "$TMP/implied.yaml" --format json --python "$TMP/bin/stalls"
took=$(($(date +%s) - start))
expect_rc 2
expect_no_out
expect_err "aiter-probe: cannot ask $TMP/bin/stalls where it finds modules: timed out after 1 s (killed) $hint"
[ "$took" -lt 10 ] || fail "took $took s"

case_ "an interpreter that dies after its first answer"
bad once "printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0\nlinux\nposix\n'; read -r m; echo absent 1; echo gone >&2; exit 4"
probe scan --aiter-root "$TMP/implied" --no-launch --no-default-rules --rules "$TMP/implied.yaml" \
	--format json --python "$TMP/bin/once"
expect_rc 2
expect_no_out
expect_err "aiter-probe: cannot ask $TMP/bin/once where it finds modules: $TMP/bin/once exited with status 4 without a result: gone $hint"

case_ "an absent answer that names more parts than the module has is no answer"
bad deeper "printf 'aiter-probe-facts-1\n/x\n3 12 3 final 0\nlinux\nposix\n'; while read -r m; do echo absent 3; done"
scan_facts --python "$TMP/bin/deeper"
expect_rc 2
expect_err "aiter-probe: cannot ask $TMP/bin/deeper where it finds modules: it printed what is no answer $hint"

# --- verify and check --manifest: the interpreter asked again -------------

probe scan --aiter-root "$TREE" --no-launch --no-default-rules --rules "$TMP/facts.yaml" \
	-o "$TMP/m.json" --python "$TMP/bin/py312"
expect_rc 0

case_ "verify: the interpreter the manifest records gives the same facts"
probe verify "$TMP/m.json"
expect_rc 0
expect_out_has "$TMP/m.json: fresh ("

case_ "verify: the same interpreter, upgraded"
cp "$TMP/bin/py312" "$TMP/py312.saved"
stand_in py312 "3 11 2 final 0" linux posix
probe verify "$TMP/m.json"
expect_rc 1
ninputs=$("${PYTHON3:-python3}" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["inputs"]))' "$TMP/m.json")
expect_out "$TMP/m.json: stale (0 of $ninputs inputs differ under $TREE; so do the interpreter's facts)
  python   version 3.12.3 when scanned, now 3.11.2
  python   finds triton: yes when scanned, now no
  python   finds triton.language: yes when scanned, now no"
probe verify --format json "$TMP/m.json"
expect_rc 1
expect_json 'j["fresh"]' False
expect_json 'j["stale"]' "[]"
expect_json 'j["python"]' "['version 3.12.3 when scanned, now 3.11.2', 'finds triton: yes when scanned, now no', 'finds triton.language: yes when scanned, now no']"

case_ "check --manifest refuses it"
probe check --manifest "$TMP/m.json" --require anything
expect_rc 2
expect_err "aiter-probe: $TMP/m.json is stale (the interpreter's version 3.12.3 when scanned, now 3.11.2): run 'aiter-probe scan' again"
cp "$TMP/py312.saved" "$TMP/bin/py312"

case_ "verify --python: another interpreter; --python-version: a version alone"
probe verify "$TMP/m.json" --python "$TMP/bin/win311"
expect_rc 1
expect_out_has "  python   version 3.12.3 when scanned, now 3.11.9"
expect_out_has "  python   platform linux when scanned, now win32"
expect_out_has "  python   os_name posix when scanned, now nt"
probe verify "$TMP/m.json" --python-version 3.12
expect_rc 0
probe verify "$TMP/m.json" --python-version 3.13
expect_rc 1
expect_out_has "  python   version 3.12.3 when scanned, now 3.13"
probe verify "$TMP/m.json" --python-version x
expect_rc 2
expect_err "aiter-probe verify: --python-version takes X.Y or X.Y.Z (such as 3.12), not 'x'
Try 'aiter-probe verify --help'."

case_ "verify: an interpreter recorded that cannot be asked now"
mv "$TMP/bin/py312" "$TMP/bin/py312.gone"
probe verify "$TMP/m.json"
expect_rc 2
expect_no_out
expect_err "aiter-probe: cannot ask $TMP/bin/py312 for its facts: No such file or directory"
mv "$TMP/bin/py312.gone" "$TMP/bin/py312"

case_ "verify: a manifest whose facts were given as a version is not asked again"
probe scan --aiter-root "$TREE" --no-launch --no-default-rules --rules "$TMP/facts.yaml" \
	-o "$TMP/v.json" --python-version 3.9
probe verify "$TMP/v.json"
expect_rc 0

case_ "the schema takes the manifests' python"
if /usr/bin/python3 -c 'import jsonschema; jsonschema.Draft202012Validator' 2>/dev/null; then
	/usr/bin/python3 -c 'import json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
for path in sys.argv[2:]:
    for e in v.iter_errors(json.load(open(path))):
        print(path, e.message)' "$AP_SRCDIR/schema/manifest-v1.schema.json" "$TMP/m.json" \
		"$TMP/v.json" >"$TMP/schema-errors"
	[ ! -s "$TMP/schema-errors" ] || { fail "not as the schema says"; cat "$TMP/schema-errors" >&2; }
fi

case_ "readers refuse a python that is not as the schema says"
"${PYTHON3:-python3}" -c 'import json, sys
m = json.load(open(sys.argv[1]))
m["python"]["finds"]["triton"] = "yes"
json.dump(m, open(sys.argv[2], "w"))' "$TMP/m.json" "$TMP/bad.json"
probe verify "$TMP/bad.json"
expect_rc 2
expect_err "aiter-probe: $TMP/bad.json: 'python.finds.triton' must be true or false"
"${PYTHON3:-python3}" -c 'import json, sys
m = json.load(open(sys.argv[1]))
del m["python"]["executable"]
json.dump(m, open(sys.argv[2], "w"))' "$TMP/m.json" "$TMP/bad.json"
probe verify "$TMP/bad.json"
expect_rc 2
expect_err "aiter-probe: $TMP/bad.json: missing key 'python.executable'"

finish
