#!/bin/sh
# SPDX-License-Identifier: MIT
# The manifest's host (scan --host, else the host name) and aiter-probe merge:
# manifests of fixture trees scanned as three nodes, merged into golden text
# and JSON; node names as host ranges; the error paths.
. "$AP_SRCDIR/tests/lib.sh"
FIX="$AP_SRCDIR/tests/fixtures"
EXP="$AP_SRCDIR/tests/expected"
export COLUMNS=80

# scan_as HOST TREE: the manifest of fixture TREE as node HOST, in $TMP/m/HOST.json.
scan_as() {
	mkdir -p "$TMP/m"
	probe scan --aiter-root "$FIX/$2" --no-launch --host "$1" -o "$TMP/m/$1.json"
	[ "$rc" = 0 ] || fail "scan of $2 as $1: exit status $rc"
}

# golden NAME: stdout equals tests/expected/NAME (AP_UPDATE_GOLDEN=1 writes it).
golden() {
	if [ "${AP_UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$TMP/out" "$EXP/$1"
	else
		diff -u "$EXP/$1" "$TMP/out" >&2 || fail "differs from tests/expected/$1"
	fi
}

case_ "scan --host"
scan_as node-01 h24-native
probe verify "$TMP/m/node-01.json"
expect_rc 0
"${PYTHON3:-python3}" -c 'import json,sys; print(json.load(open(sys.argv[1]))["host"])' \
	"$TMP/m/node-01.json" >"$TMP/out"
expect_out "node-01"

case_ "scan without --host: the host name"
probe scan --aiter-root "$FIX/h24-native" --no-launch --format json
expect_rc 0
expect_json 'j["host"]' "$("${PYTHON3:-python3}" -c 'import socket; print(socket.gethostname())')"

case_ "scan --host with no name"
probe scan --aiter-root "$FIX/h24-native" --no-launch --host=
expect_rc 2
expect_err "aiter-probe scan: --host needs a name of 1 to 255 bytes
Try 'aiter-probe scan --help'."

case_ "scan --host too long"
probe scan --aiter-root "$FIX/h24-native" --no-launch --host "$(printf '%0256d' 0)"
expect_rc 2
expect_err "aiter-probe scan: --host needs a name of 1 to 255 bytes
Try 'aiter-probe scan --help'."

scan_as node-02 h24-native
scan_as node-03 h24-missing
scan_as node-10 traps
NODES="$TMP/m"

case_ "merge: text"
probe merge "$NODES/node-01.json" "$NODES/node-02.json" "$NODES/node-03.json" "$NODES/node-10.json"
expect_rc 0
golden merge-fixtures.txt

case_ "merge: json, in another order"
probe merge --format json "$NODES/node-10.json" "$NODES/node-03.json" "$NODES/node-02.json" "$NODES/node-01.json"
expect_rc 0
sed "s|$TMP/|TMP/|" "$TMP/out" >"$TMP/out.json" && mv "$TMP/out.json" "$TMP/out"
golden merge-fixtures.json

case_ "merge --fail-on-differ: the nodes differ"
probe merge --fail-on-differ "$NODES/node-01.json" "$NODES/node-03.json"
expect_rc 1
expect_out_has "2 nodes, 2 AITER trees; 1 of 49 capabilities differs across nodes"

case_ "merge --fail-on-differ: one tree on every node"
probe merge --fail-on-differ --color=never "$NODES/node-01.json" "$NODES/node-02.json"
expect_rc 0
expect_out_has "2 nodes, 1 AITER tree; no capability of 49 differs across nodes"
expect_out_has "AITER unknown  2 nodes: node-[01-02]"

case_ "merge --color: only the counts and titles are painted"
probe merge --color "$NODES/node-01.json" "$NODES/node-03.json"
expect_rc 0
expect_out_has "$(printf '  mla.decode.native_h24  \033[33m1 of 2\033[0m')"

case_ "merge: no host, the file's name"
probe merge --format json "$AP_SRCDIR/tests/manifests/good.json" -- "$AP_SRCDIR/tests/manifests/second.json"
expect_rc 0
expect_json 'j["trees"][0]["nodes"]["nodes"] + j["trees"][1]["nodes"]["nodes"]' "['good', 'second']"

case_ "merge: capabilities some nodes did not probe"
probe merge --format json "$AP_SRCDIR/tests/manifests/good.json" "$NODES/node-01.json"
expect_rc 0
expect_json 'j["capabilities"]["mla.decode.native_h16"]["unprobed"]' "{'count': 1, 'nodes': ['node-01'], 'omitted': 0}"
expect_json 'j["capabilities"]["aiter.hipb_mm"]["unprobed"]' "{'count': 1, 'nodes': ['good'], 'omitted': 0}"
expect_json 'j["capabilities"]["aiter.hipb_mm"]["lacking"]["nodes"]' "['node-01']"
expect_json 'j["differing_capabilities"]' 49

case_ "merge: one node twice"
cp "$NODES/node-01.json" "$TMP/copy.json"
probe merge "$NODES/node-01.json" "$NODES/node-03.json" "$TMP/copy.json"
expect_rc 2
expect_no_out
expect_err "aiter-probe: $TMP/copy.json: node 'node-01' is also the node of $NODES/node-01.json"

case_ "merge: a manifest named by its file and another by its host"
cp "$AP_SRCDIR/tests/manifests/good.json" "$TMP/node-01.json"
probe merge "$NODES/node-01.json" "$TMP/node-01.json"
expect_rc 2
expect_err "aiter-probe: $TMP/node-01.json: node 'node-01' is also the node of $NODES/node-01.json"

NOTHING="aiter-probe: nothing to merge: no file given is a manifest it could read"

case_ "merge: not a manifest, among good ones: the rest merged, exit 3"
NEWER="$AP_SRCDIR/tests/manifests/invalid-newer-schema.json"
probe merge "$NODES/node-01.json" "$NEWER"
expect_rc 3
sed -n 1,2p "$TMP/out" | tr -s ' \n' '  ' >"$TMP/head"
[ "$(cat "$TMP/head")" = "1 node, 1 AITER tree; no capability of 49 differs across nodes; 1 manifest not merged " ] ||
	fail "summary: $(cat "$TMP/head")"
expect_out_has "Not merged (no node counted for them):
  $NEWER: schema"
expect_err "aiter-probe: $NEWER: schema 'aiter-probe.manifest/2' is newer than this reader understands (aiter-probe.manifest/1)"

case_ "merge: a file that is not there"
probe merge "$TMP/none.json"
expect_rc 2
expect_no_out
expect_err "aiter-probe: $TMP/none.json: No such file or directory
$NOTHING"

case_ "merge: a bad host"
sed 's/"host": "node-01"/"host": ""/' "$NODES/node-01.json" >"$TMP/bad-host.json"
probe merge "$TMP/bad-host.json"
expect_rc 2
expect_err "aiter-probe: $TMP/bad-host.json: 'host' must be a name of 1 to 255 bytes, not 0
$NOTHING"

# One empty and one truncated manifest among three good ones: the summary of
# the good ones, each bad file named on stderr and in the summary, exit 3
# (before --fail-on-differ's 1).
: >"$TMP/empty.json"
head -n 3 "$NODES/node-02.json" >"$TMP/cut.json"
case_ "merge: an empty and a truncated manifest among good ones, text"
probe merge --fail-on-differ "$NODES/node-01.json" "$TMP/empty.json" "$NODES/node-03.json" \
	"$TMP/cut.json" "$NODES/node-10.json"
expect_rc 3
expect_out_has "3 nodes, 3 AITER trees; 1 of 49 capabilities differs across nodes; 2 manifests"
expect_out_has "    lacking: node-[03,10]"
# (the lines as one: where they wrap depends on $TMP's length)
sed -n '/^Not merged/,$p' "$TMP/out" | tr -s ' \n' '  ' >"$TMP/tail"
[ "$(cat "$TMP/tail")" = "Not merged (no node counted for them): $TMP/empty.json:1: '[' or '{' expected near end of file $TMP/cut.json:4: string or '}' expected near end of file " ] ||
	fail "the files not merged: $(cat "$TMP/tail")"
expect_err "aiter-probe: $TMP/empty.json:1: '[' or '{' expected near end of file
aiter-probe: $TMP/cut.json:4: string or '}' expected near end of file"

case_ "merge: an empty and a truncated manifest among good ones, json"
probe merge --format json "$NODES/node-01.json" "$TMP/empty.json" "$NODES/node-03.json" \
	"$TMP/cut.json" "$NODES/node-10.json"
expect_rc 3
expect_json 'j["nodes"], [u["file"] for u in j["unreadable"]]' "(3, ['$TMP/empty.json', '$TMP/cut.json'])"
expect_json '[m["node"] for m in j["manifests"]]' "['node-01', 'node-03', 'node-10']"

case_ "merge: only bad files"
probe merge "$TMP/empty.json" "$TMP/cut.json"
expect_rc 2
expect_no_out
expect_err_has "$NOTHING"

case_ "merge --format json: each node's manifest and its age"
"${PYTHON3:-python3}" - "$NODES/node-03.json" "$TMP/old.json" "$TMP/odd-date.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["host"], m["generated"] = "old", "2026-11-30T23:59:59Z"
json.dump(m, open(sys.argv[2], "w"))
m["host"], m["generated"] = "odd", "yesterday"
json.dump(m, open(sys.argv[3], "w"))
PY
SOURCE_DATE_EPOCH=1796169600 probe merge --format json "$TMP/old.json" "$TMP/odd-date.json" \
	"$NODES/node-01.json"
expect_rc 0
expect_json '[(m["node"], m["generated"], m["age_s"]) for m in j["manifests"]]' "[('node-01', '1970-01-01T00:00:00Z', 1796169600), ('odd', 'yesterday', None), ('old', '2026-11-30T23:59:59Z', 86401)]"

case_ "merge: no manifest"
probe merge --format json
expect_rc 2
expect_err "aiter-probe merge: needs at least one MANIFEST
Try 'aiter-probe merge --help'."

case_ "merge: unknown option"
probe merge --nodes "$NODES/node-01.json"
expect_rc 2
expect_err "aiter-probe merge: unknown option '--nodes'
Try 'aiter-probe merge --help'."

case_ "merge: after -- a manifest may start with '-'"
cp "$NODES/node-01.json" "$TMP/-n.json"
(cd "$TMP" && "$AP" merge -- -n.json >"$TMP/out" 2>"$TMP/err"); rc=$?
expect_rc 0
expect_out_has "1 node, 1 AITER tree"

case_ "merge: bad --format, --max-ranges, --color"
probe merge --format yaml "$NODES/node-01.json"
expect_rc 2
expect_err "aiter-probe merge: --format takes text or json, not 'yaml'
Try 'aiter-probe merge --help'."
probe merge --max-ranges 0 "$NODES/node-01.json"
expect_rc 2
expect_err "aiter-probe merge: --max-ranges needs a whole number from 1 to 100000, not '0'
Try 'aiter-probe merge --help'."
probe merge --color=sometimes "$NODES/node-01.json"
expect_rc 2
expect_err "aiter-probe merge: --color takes auto, always or never, not 'sometimes'
Try 'aiter-probe merge --help'."

# Host ranges: the same manifest as many nodes, named in a shuffled order.
mkdir -p "$TMP/fleet"
for n in 7 3 12 1 2 10 9 11 5 4 8 6 0042 0040 0041 0007 login; do
	sed "s/\"host\": \"node-01\"/\"host\": \"gpu-$n.rack\"/" "$NODES/node-01.json" >"$TMP/fleet/$n.json"
done
case_ "merge: host ranges, any order, by width"
probe merge "$TMP/fleet/"*.json
expect_rc 0
expect_out_has "AITER unknown  17 nodes: gpu-[1-9].rack, gpu-[10-12].rack,"
expect_out_has "    gpu-[0007,0040-0042].rack, gpu-login.rack"

case_ "merge: a name between two ranges joins them; one before a range widens it"
FLEET="$TMP/fleet"
probe merge --format json "$FLEET/5.json" "$FLEET/3.json" "$FLEET/9.json" "$FLEET/4.json" "$FLEET/2.json" "$FLEET/7.json"
expect_rc 0
expect_json 'j["trees"][0]["nodes"]["nodes"]' "['gpu-[2-5].rack', 'gpu-7.rack', 'gpu-9.rack']"

mkdir -p "$TMP/odd"
for n in 01 03 05 07 09 11 13 15 17 19 21 23 25 27 29; do
	sed "s/\"host\": \"node-01\"/\"host\": \"n$n\"/" "$NODES/node-01.json" >"$TMP/odd/$n.json"
done
case_ "merge: many ranges of one family make several items in the text"
probe merge --max-ranges 20 "$TMP/odd/"*.json
expect_rc 0
expect_out_has "  586f8a44c336  AITER unknown  15 nodes:
    n[01,03,05,07,09,11,13,15,17,19,21,23,25,27], n29"

case_ "merge --format json: every range of every list, one string each, past 8"
probe merge --format json "$TMP/odd/"*.json
expect_rc 0
expect_json 'j["trees"][0]["nodes"]' "{'count': 15, 'nodes': ['n01', 'n03', 'n05', 'n07', 'n09', 'n11', 'n13', 'n15', 'n17', 'n19', 'n21', 'n23', 'n25', 'n27', 'n29'], 'omitted': 0}"

# The ranges kept are the first in the sorted order, whatever order the
# files came in: width 1, then 2, then 4.
case_ "merge --max-ranges: the rest counted"
probe merge --max-ranges 2 --format json "$TMP/fleet/"*.json
expect_rc 0
expect_json 'j["trees"][0]["nodes"]' "{'count': 17, 'nodes': ['gpu-[1-9].rack', 'gpu-[10-12].rack'], 'omitted': 5}"
probe merge --max-ranges 2 "$TMP/fleet/"*.json
expect_out_has "  586f8a44c336  AITER unknown  17 nodes: gpu-[1-9].rack, gpu-[10-12].rack,
    and 5 more"
# A fleet at 60 columns: the titles wrapped, a tree's long version and
# commit on lines of their own, "and 12 more" kept whole, no line past the
# width. Every fourth node on the other tree, one that did not probe
# aiter.hipb_mm.
mkdir -p "$TMP/rack"
"${PYTHON3:-python3}" - "$NODES" "$TMP/rack" <<'PY'
import json, sys
src, out = sys.argv[1:3]
native = json.load(open(src + "/node-01.json"))
missing = json.load(open(src + "/node-03.json"))
for n in range(1, 15):
    m = json.loads(json.dumps(missing if n % 4 == 0 else native))
    m["host"] = "mi300x-rack-east-007-node-%03d" % (2 * n)
    m["aiter"]["version"] = "0.1.20.dev5+g1a2b3c4d"
    m["aiter"]["git_commit"] = "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
    if n == 5:
        del m["capabilities"]["aiter.hipb_mm"]
    json.dump(m, open("%s/%02d.json" % (out, n), "w"))
PY
case_ "merge: text at 60 columns"
export COLUMNS=60
probe merge --max-ranges 2 "$TMP/rack/"*.json "$NODES/node-10.json"
expect_rc 0
golden merge-rack-60.txt
[ -z "$(over_width 60)" ] || fail "lines past 60 columns: $(over_width 60)"

# Every string of a manifest is escaped in the text: the commit (shown whole,
# not being a git id), the version, the node and a capability's id.
"${PYTHON3:-python3}" - "$NODES/node-01.json" "$TMP/evil.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["host"] = "evil\u001b[2J\u009b"
m["aiter"]["version"] = "0.1\u001b[31m"
m["aiter"]["git_commit"] = "\u001b]0;PWN\u0007\u001b[2J"
m["capabilities"]["x\u001b[1m"] = m["capabilities"]["aiter.hipb_mm"]
json.dump(m, open(sys.argv[2], "w"))
PY
case_ "merge: control bytes from a manifest escaped"
probe merge "$TMP/evil.json" "$NODES/node-03.json"
expect_rc 0
LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]\\|\302[\200-\237]')" "$TMP/out" &&
	fail "a control byte in the text"
sed -n '/^Capabilities that differ/,/^$/p; /^AITER trees/,$p' "$TMP/out" >"$TMP/parts"
cp "$TMP/parts" "$TMP/out"
expect_out 'Capabilities that differ (how many nodes have each):
  mla.decode.native_h24  1 of 2
    lacking: node-03
  x\x1b[1m  0 of 2
    lacking: evil\x1b[2J\xc2\x9b
    not probed: node-03

AITER trees (by the digest of their inputs, the most nodes
    first):
  a822526e3eac  AITER 0.1\x1b[31m
    (commit \x1b]0;PWN\x07\x1b[2J)
    1 node: evil\x1b[2J\xc2\x9b
  cc69b5953ef0  AITER unknown  1 node: node-03'
finish
