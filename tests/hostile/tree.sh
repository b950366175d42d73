#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile trees: what a scanned tree (anyone's wheel) may hold must not make
# the tool read outside the root, block, grow without bound or lie about
# freshness. Each run is bounded in time and memory, so that a regression
# fails instead of hanging the suite.
. "$AP_SRCDIR/tests/lib.sh"

pack() {
	printf '%s\n' "$@" >"$TMP/pack.yaml"
}

case_ "a symlink loop is recorded as seen, and verifies fresh while it stays"
TREE="$TMP/loop"
mkdir -p "$TREE/csrc"
ln -s loop2.cu "$TREE/csrc/loop1.cu"
ln -s loop1.cu "$TREE/csrc/loop2.cu"
pack "rules:" "  - {id: r, file: csrc/loop1.cu, literal: x}"
bounded scan --aiter-root "$TREE" --no-default-rules --rules "$TMP/pack.yaml" --no-launch -o "$TMP/loop.json"
expect_rc 0
bounded verify "$TMP/loop.json"
expect_rc 0
rm "$TREE/csrc/loop1.cu"
echo x >"$TREE/csrc/loop1.cu"
bounded verify "$TMP/loop.json"
expect_rc 1
expect_out "$TMP/loop.json: stale (1 of 2 inputs differ under $TREE)
  appeared csrc/loop1.cu"

case_ "the manifest records what an unread input was"
rm "$TREE/csrc/loop1.cu"
ln -s loop2.cu "$TREE/csrc/loop1.cu"
mkdir -p "$TREE/csrc/dir.cu"
mkfifo "$TREE/csrc/fifo.cu"
ln -s /etc/hostname "$TREE/csrc/out.cu"
long=$(printf 'n%.0s' $(seq 1 300))
pack "rules:" "  - {id: loop, file: csrc/loop1.cu, literal: x}" \
	"  - {id: dir, file: csrc/dir.cu, literal: x}" \
	"  - {id: fifo, file: csrc/fifo.cu, literal: x}" \
	"  - {id: out, file: csrc/out.cu, literal: x}" \
	"  - {id: long, file: csrc/$long.cu, literal: x}" \
	"  - {id: none, file: csrc/none.cu, literal: x}"
bounded scan --aiter-root "$TREE" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json '[(i["path"][:12], i["seen"]) for i in j["inputs"] if i["path"].startswith("csrc/")]' \
	"[('csrc/loop1.c', 'loop'), ('csrc/dir.cu', 'folder'), ('csrc/fifo.cu', 'not-file'), ('csrc/out.cu', 'outside'), ('csrc/nnnnnnn', 'too-long'), ('csrc/none.cu', 'absent')]"
cp "$TMP/out" "$TMP/seen.json"
bounded verify "$TMP/seen.json"
expect_rc 0
rm "$TREE/csrc/fifo.cu"
mkdir "$TREE/csrc/fifo.cu"
bounded verify "$TMP/seen.json"
expect_rc 1
expect_out "$TMP/seen.json: stale (1 of 7 inputs differ under $TREE)
  changed  csrc/fifo.cu"

case_ "a file over the hashing cap is unverifiable, not read"
TREE="$TMP/big"
mkdir -p "$TREE/csrc"
truncate -s 2G "$TREE/csrc/big.cu"
pack "rules:" "  - {id: r, file: csrc/big.cu, literal: x}"
bounded scan --aiter-root "$TREE" --no-default-rules --rules "$TMP/pack.yaml" --no-launch -o "$TMP/big.json"
expect_rc 0
"${PYTHON3:-python3}" -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["rules"]["r"]["reason"]); print(m["inputs"][0])' "$TMP/big.json" >"$TMP/out"
expect_out "larger than the 16777216-byte cap (2147483648 bytes), and than the 1073741824-byte hashing cap: unverifiable
{'path': 'csrc/big.cu', 'sha256': None, 'bytes': None, 'seen': 'over-hash-cap'}"
bounded verify "$TMP/big.json"
expect_rc 1
expect_out "$TMP/big.json: stale (1 of 2 inputs differ under $TREE)
  unverifiable csrc/big.cu"

case_ "FIFOs at .git, .git/HEAD and aiter/_version.py block nothing"
TREE="$TMP/fifos"
mkdir -p "$TREE/csrc" "$TREE/aiter"
mkfifo "$TREE/.git" "$TREE/aiter/_version.py"
pack "rules:" "  - {id: r, file: csrc/a.cu, literal: x}"
bounded scan --aiter-root "$TREE" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json 'j["aiter"]["version"], j["aiter"]["git_commit"]' "(None, None)"
rm "$TREE/.git"
mkdir -p "$TREE/.git"
mkfifo "$TREE/.git/HEAD"
bounded scan --aiter-root "$TREE" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json 'j["aiter"]["git_commit"]' None

case_ "one rule reports at most 10,000 matches, in bounded memory"
TREE="$TMP/many"
mkdir -p "$TREE/csrc"
head -c 16777200 /dev/zero | tr '\0' a >"$TREE/csrc/a.cu"
pack "rules:" "  - {id: r, file: csrc/a.cu, literal: a, collect: all}"
bounded scan --aiter-root "$TREE" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json 'j["rules"]["r"]["status"], j["rules"]["r"]["reason"], len(j["rules"]["r"]["matches"])' \
	"('error', 'matched more than 10000 times, the most a rule may report', 0)"

case_ "probes requiring probes twice over do not grow reasons exponentially"
{
	echo "rules:"
	echo "  - {id: r, file: none.cu, literal: x}"
	echo "probes:"
	echo "  - {id: p0, requires: r}"
	i=1
	while [ $i -le 30 ]; do
		echo "  - {id: p$i, requires: {all: [p$((i - 1)), {any: [p$((i - 1)), r]}]}}"
		i=$((i + 1))
	done
} >"$TMP/pack.yaml"
bounded scan --aiter-root "$TREE" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json 'max(len(c["reason"]) for c in j["capabilities"].values()) < 4200' True

case_ "a folder swapped for a symlink out of the root is never read through"
TREE="$TMP/race"
mkdir -p "$TREE/root/csrc" "$TREE/outside"
echo inside >"$TREE/root/csrc/a.cu"
echo secret >"$TREE/outside/a.cu"
ln -s "$TREE/outside" "$TREE/root/swap"
pack "rules:" "  - {id: r, file: csrc/a.cu, literal: secret}"
if "${PYTHON3:-python3}" -c 'import ctypes; ctypes.CDLL(None).renameat2' 2>/dev/null; then
	"${PYTHON3:-python3}" - "$TREE/root" <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b = (os.path.join(sys.argv[1], n).encode() for n in ("csrc", "swap"))
end = time.time() + 8
while time.time() < end:
    libc.renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE
PY
	swapper=$!
	i=0
	seen=0
	# Only scans while the swapper runs race it (under valgrind, a handful).
	while [ $i -lt 200 ] && kill -0 $swapper 2>/dev/null; do
		bounded scan --aiter-root "$TREE/root" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
		grep -q '"status": "matched"' "$TMP/out" && seen=$((seen + 1))
		i=$((i + 1))
	done
	kill $swapper 2>/dev/null
	wait $swapper 2>/dev/null
	[ $seen = 0 ] || fail "$seen of $i scans read the outside file"
else
	echo "SKIP [$current]: no renameat2 in the C library" >&2
fi

case_ "history on a repository with a truncated pack says it is corrupt"
if command -v git >/dev/null; then
	G="$TMP/corrupt"
	git init -q "$G"
	mkdir -p "$G/csrc"
	echo x >"$G/csrc/a.cu"
	git -C "$G" add .
	git -C "$G" -c user.name=t -c user.email=t@t commit -qm one
	git -C "$G" repack -adq
	head=$(git -C "$G" rev-parse HEAD)
	for p in "$G"/.git/objects/pack/*.pack; do truncate -s 40 "$p"; done
	bounded history --git "$G" HEAD
	expect_rc 2
	expect_err "aiter-probe: the repository is corrupt: 'HEAD' names $head, which cannot be read"
else
	echo "SKIP [$current]: git is not installed" >&2
fi

case_ "a token pattern that is only a comment is refused when the pack loads"
pack "rules:" "  - {id: r, file: a.cu, token: '// num_heads == 24'}"
bounded scan --aiter-root "$TMP/race/root" --no-default-rules --rules "$TMP/pack.yaml" --no-launch
expect_rc 2
expect_err "aiter-probe: $TMP/pack.yaml:2:32: invalid token pattern: a comment in a token pattern never matches (comments are removed from the text first)"
pack "rules:" "  - {id: r, file: a.cu, token: 's = \"http://x\"'}"
bounded scan --aiter-root "$TMP/race/root" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0

case_ "a symlink whose target is not UTF-8 keeps the rule's reason"
TREE="$TMP/nonutf8"
mkdir -p "$TREE/csrc"
bad=$(printf '%s/\377\376' "$TMP")
echo x >"$bad"
ln -s "$bad" "$TREE/csrc/a.cu"
pack "rules:" "  - {id: r, file: csrc/a.cu, literal: x}" "probes:" "  - {id: p, requires: r}"
bounded scan --aiter-root "$TREE" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json 'ascii(j["rules"]["r"]["reason"])' "'symlink resolves outside the AITER root ($TMP/\\ufffd\\ufffd)'"
expect_json '"outside the AITER root" in j["capabilities"]["p"]["reason"]' True

case_ "star imports that fan out, or loop back, resolve in bounded time"
# 30 modules, each star-importing the next ten times: walked naively, 10^29
# resolutions (found by fuzz/fuzz-python-tree.c).
T="$TMP/stars"
mkdir -p "$T/aiter"
echo 'from .m0 import *' >"$T/aiter/__init__.py"
i=0
while [ $i -lt 30 ]; do
	: >"$T/aiter/m$i.py"
	for k in 1 2 3 4 5 6 7 8 9 10; do echo "from .m$((i + 1)) import *" >>"$T/aiter/m$i.py"; done
	i=$((i + 1))
done
echo 'def mla_decode_fwd(q, k, v): pass' >"$T/aiter/m30.py"
pack "rules:" "  - {id: found, python-export: mla_decode_fwd, from: aiter}" \
	"  - {id: none, python-export: nothing_here, from: aiter}"
bounded scan --aiter-root "$T" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json '[j["rules"][r]["status"] for r in ("found", "none")]' "['matched', 'unmatched']"
expect_json 'j["rules"]["found"]["file"]' "aiter/m30.py"
# found_in TREE FILE: the rules found and none, scanned over TREE, find
# mla_decode_fwd in FILE and nothing_here nowhere.
found_in() {
	bounded scan --aiter-root "$1" --no-default-rules --rules "$TMP/pack.yaml" --no-launch \
		--format json
	expect_rc 0
	expect_json '[(j["rules"][r]["status"], j["rules"][r].get("file")) for r in ("found", "none")]' \
		"[('matched', '$2'), ('unmatched', 'aiter/__init__.py')]"
}
# Two modules a layer, each star-importing both of the next, the last layer
# importing the first again: a loop, resolved once for each (module, name).
T="$TMP/loop-stars"
mkdir -p "$T/aiter"
echo 'from .a0 import *' >"$T/aiter/__init__.py"
i=0
while [ $i -lt 25 ]; do
	for m in a b; do
		if [ $i -lt 24 ]; then
			printf 'from .a%d import *\nfrom .b%d import *\n' $((i + 1)) $((i + 1))
		else
			echo 'from .a0 import *'
		fi >"$T/aiter/$m$i.py"
	done
	i=$((i + 1))
done
echo 'def mla_decode_fwd(q, k, v): pass' >>"$T/aiter/b24.py"
found_in "$T" aiter/b24.py

# chain DIR N LAST: the package DIR/aiter star-imports c0, c0 c1, ..., the
# last one-line module cN holding the lines LAST.
chain() {
	mkdir -p "$1/aiter"
	echo 'from .c0 import *' >"$1/aiter/__init__.py"
	i=0
	while [ $i -lt "$2" ]; do
		echo "from .c$((i + 1)) import *" >"$1/aiter/c$i.py"
		i=$((i + 1))
	done
	printf '%b\n' "$3" >"$1/aiter/c$2.py"
}

case_ "a chain of 60 star imports whose last imports the package back resolves once a level"
# Each level was resolved twice, as its result was not kept across the
# cycle: 2^40 resolutions for 40 levels appended to AITER's tree.
chain "$TMP/chain" 60 'def mla_decode_fwd(q, k, v): pass\nfrom aiter import *'
found_in "$TMP/chain" aiter/c60.py
chain "$TMP/chain-deep" 70 'def mla_decode_fwd(q, k, v): pass'
bounded scan --aiter-root "$TMP/chain-deep" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json 'j["rules"]["found"]["status"], j["rules"]["found"]["reason"]' \
	"('error', 'imports nest deeper than 64 modules')"

case_ "a try's from-imports leading through 2,000 modules, or back, are read with bounded nesting"
# Each try's names are asked of the module they come from, whose own try's
# names lead on: past the nesting limit they are not known, and each parse
# is held once a scan.
T="$TMP/try-chain"
mkdir -p "$T/aiter"
printf 'try:\n    from .m0 import mla_decode_fwd\nexcept ImportError:\n    pass\n' >"$T/aiter/__init__.py"
awk -v dir="$T/aiter" 'BEGIN { for (i = 0; i < 2000; i++) {
	f = dir "/m" i ".py"
	printf "try:\n    from .m%d import mla_decode_fwd\nexcept ImportError:\n    pass\n", i + 1 >f
	print "def mla_decode_fwd(q, k, v): pass" >f
	close(f) } }'
printf 'try:\n    from . import m0\nexcept ImportError:\n    pass\n' >"$T/aiter/m2000.py"
found_in "$T" aiter/m0.py

case_ "12 modules star-importing one another resolve"
T="$TMP/mutual"
mkdir -p "$T/aiter"
echo 'from .m0 import *' >"$T/aiter/__init__.py"
for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
	for k in 0 1 2 3 4 5 6 7 8 9 10 11; do
		[ $i = $k ] || echo "from .m$k import *"
	done >"$T/aiter/m$i.py"
done
echo 'def mla_decode_fwd(q, k, v): pass' >>"$T/aiter/m7.py"
found_in "$T" aiter/m7.py

case_ "100,000 aliases in a chain are an error with the limit, not a deep recursion"
T="$TMP/aliases"
mkdir -p "$T/aiter"
awk 'BEGIN { print "def a0(q): pass"; for (i = 1; i <= 100000; i++) printf "a%d = a%d\n", i, i - 1 }' \
	>"$T/aiter/__init__.py"
pack "rules:" "  - {id: deep, python-export: a100000, from: aiter}" \
	"  - {id: short, python-export: a1000, from: aiter}"
bounded scan --aiter-root "$T" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json '[(j["rules"][r]["status"], j["rules"][r].get("reason")) for r in ("deep", "short")]' \
	"[('error', 'aiter/__init__.py: line 99001: names aliased more than 1000 deep'), ('matched', None)]"

# stars DIR N: DIR/aiter star-imports m0 ... m(N-1), each the file m0.py
# (written first) under another name (a hard link: read anew each time).
stars() {
	: >"$1/aiter/__init__.py"
	for i in $(seq 0 $(($2 - 1))); do
		echo "from .m$i import *" >>"$1/aiter/__init__.py"
		[ $i = 0 ] || ln "$1/aiter/m0.py" "$1/aiter/m$i.py"
	done
}

case_ "a name reaching more bindings than a resolution may visit is an error with the figure"
T="$TMP/visits"
mkdir -p "$T/aiter"
awk 'BEGIN { for (i = 0; i < 1000; i++) printf "x%d = 1\n", i }' >"$T/aiter/m0.py"
stars "$T" 30
pack "rules:" "  - {id: r, python-export: nothing_here, from: aiter}"
bounded scan --aiter-root "$T" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json 'j["rules"]["r"]["status"], j["rules"]["r"]["reason"]' \
	"('error', 'imports too entangled: more than 20000 bindings visited')"

case_ "4,096 defs under decorators that are long or return from many branches resolve in bounded time"
# Each def asks what its decorator returns: a body read once for all of
# them, and one past 64 KiB not read at all.
T="$TMP/decorated"
mkdir -p "$T/aiter"
"${PYTHON3:-python3}" - "$T/aiter" <<'PY'
import sys
d = sys.argv[1]
def guard(name, pad):
    lines = ["def %s(label=None):" % name, "    def decorator(func):"]
    for i in range(60):
        lines += ["        def w%d(*a, **k):" % i, "            return func(*a, **k)"]
    lines += ["        if label:"] + ["            pass  # " + "x" * 60] * pad
    lines += ["        if label == %d: return w%d" % (i, i) for i in range(60)]
    return lines + ["        return w0", "    return decorator"]
open(d + "/guard.py", "w").write("\n".join(guard("near", 700) + guard("past", 2000)) + "\n")
ops = ["from .guard import near, past"]
for i in range(4096):
    ops += ["@%s('x')" % ("near" if i % 2 else "past"), "def op%d(a, b):" % i, "    pass"]
open(d + "/ops.py", "w").write("\n".join(ops) + "\n")
open(d + "/__init__.py", "w").write("from .ops import *\n")
PY
printf 'rules:\n  - {id: near, python-export: op1, from: aiter}\n  - {id: past, python-export: op0, from: aiter}\nsignatures:\n  - module: aiter\n' \
	>"$TMP/pack.yaml"
bounded scan --aiter-root "$T" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --signatures \
	--format json
expect_rc 0
expect_json '[j["rules"][r]["status"] for r in ("near", "past")]' "['matched', 'unknown']"
expect_json 'len(j["signatures"]["aiter"]["callables"])' 4096

case_ "100 star-imported 16 MB modules stay within the scan's memory budget"
# 3.2 GB once: each module held twice (the file, the parsed copy).
T="$TMP/budget"
mkdir -p "$T/aiter"
{
	echo 'def g(): pass'
	head -c 16777000 /dev/zero | tr '\0' '#'
	echo
} >"$T/aiter/m0.py"
stars "$T" 100
pack "rules:" "  - {id: r, python-export: f, from: aiter}"
bounded scan --aiter-root "$T" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json 'j["rules"]["r"]["status"], j["rules"]["r"]["reason"].split(" (")[0]' \
	"('error', 'aiter/m92.py: parsing it would pass the 268435456-byte budget of what one scan holds')"
# a file read past the budget is an error too, and still an input with its digest
head -c 4000000 /dev/zero | tr '\0' '#' >"$T/aiter/late.py"
pack "rules:" "  - {id: r, python-export: f, from: aiter}" \
	"  - {id: late, python-export: f, from: aiter.late}"
bounded scan --aiter-root "$T" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json 'j["rules"]["late"]["status"], j["rules"]["late"]["reason"].split(" (")[0]' \
	"('error', 'aiter/late.py: reading it would pass the 268435456-byte budget of what one scan holds')"
expect_json '[(i["bytes"], i["sha256"][:8]) for i in j["inputs"] if i["path"] == "aiter/late.py"]' \
	"[(4000000, '$(head -c 4000000 /dev/zero | tr '\0' '#' | sha256sum | cut -c1-8)')]"

case_ "normalized texts count in the scan's memory budget"
T="$TMP/texts"
mkdir -p "$T/csrc"
head -c 16777000 /dev/zero | tr '\0' a >"$T/csrc/a0.cu"
for i in 1 2; do ln "$T/csrc/a0.cu" "$T/csrc/a$i.cu"; done
pack "rules:" "  - {id: r0, file: csrc/a0.cu, literal: b}" "  - {id: r1, file: csrc/a1.cu, literal: b}" \
	"  - {id: r2, file: csrc/a2.cu, literal: b}"
bounded scan --aiter-root "$T" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json '[(r["status"], (r.get("reason") or "").split(" (")[0]) for r in j["rules"].values()]' \
	"[('unmatched', ''), ('unmatched', ''), ('error', 'csrc/a2.cu: normalizing it would pass the 268435456-byte budget of what one scan holds')]"

finish
