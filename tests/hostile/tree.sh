#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile trees: what a scanned tree (anyone's wheel) may hold must not make
# the tool read outside the root, block, grow without bound or lie about
# freshness. Each run is bounded in time and memory, so that a regression
# fails instead of hanging the suite.
. "$AP_SRCDIR/tests/lib.sh"

# bounded ARGS...: probe under the suite's time and memory bounds
# (tests/lib.sh: 20 s and 1 GB of address space for a plain build).
bounded() {
	case $- in *e*) errexit=1 ;; *) errexit= ;; esac
	set +e
	if [ -n "${AP_WRAPPER:-}" ]; then
		timeout "$AP_TIME" $AP_WRAPPER "$AP" "$@"
	else
		(ulimit -v "$AP_VMEM"; timeout "$AP_TIME" "$AP" "$@")
	fi >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ -z "$errexit" ] || set -e
}

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
	while [ $i -lt 200 ]; do
		bounded scan --aiter-root "$TREE/root" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
		grep -q '"status": "matched"' "$TMP/out" && seen=$((seen + 1))
		i=$((i + 1))
	done
	kill $swapper 2>/dev/null
	wait $swapper 2>/dev/null
	[ $seen = 0 ] || fail "$seen of 200 scans read the outside file"
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

case_ "star imports that fan out resolve in time; ones that loop back hit the resolver's budget"
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
# Two modules a layer, each star-importing both of the next, the last layer
# importing the first again: a loop, which no result can be kept across.
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
bounded scan --aiter-root "$T" --no-default-rules --rules "$TMP/pack.yaml" --no-launch --format json
expect_rc 0
expect_json '[(j["rules"][r]["status"], j["rules"][r].get("reason")) for r in ("found", "none")]' \
	"[('error', 'imports too entangled: more than 20000 bindings visited'), ('error', 'imports too entangled: more than 20000 bindings visited')]"

finish
