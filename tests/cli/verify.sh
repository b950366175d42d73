#!/bin/sh
# SPDX-License-Identifier: MIT
# aiter-probe verify: fresh, changed, vanished, appeared, a tampered input
# path, a missing root, bad manifests; and how long a verify takes.
. "$AP_SRCDIR/tests/lib.sh"
MAN="$AP_SRCDIR/tests/manifests"
set -e

# expect_quiet out|err: the command printed nothing there.
expect_quiet() {
	[ ! -s "$TMP/$1" ] || { fail "$1 is not empty"; sed 's/^/  /' "$TMP/$1" >&2; }
}

# A writable copy of the tree the test manifests describe, and a manifest
# (from $1) whose aiter.root points at it.
fresh_copy() {
	rm -rf "$TMP/tree"
	cp -R "$MAN/tree" "$TMP/tree"
	chmod -R u+w "$TMP/tree"
	sed "s|\"root\": \"/opt/aiter\"|\"root\": \"$TMP/tree\"|" "$MAN/$1" >"$TMP/m.json"
}
RED=csrc/kernels/mla/reduce.cu
META=csrc/kernels/mla/metadata/v1_2_device.cuh

case_ "fresh"
fresh_copy good.json
probe verify "$TMP/m.json"
expect_rc 0
expect_out "$TMP/m.json: fresh (3 inputs under $TMP/tree)"
expect_quiet err

case_ "changed (same size)"
sed 's/NUM_HEAD, 32,/NUM_HEAD, 48,/' "$MAN/tree/$RED" >"$TMP/tree/$RED"
probe verify "$TMP/m.json"
expect_rc 1
expect_out "$TMP/m.json: stale (1 of 3 inputs differ under $TMP/tree)
  changed  $RED"

case_ "--color paints the verdict and each change"
probe verify "$TMP/m.json" --color
expect_rc 1
expect_out "$(printf '%s: \033[31mstale\033[0m (1 of 3 inputs differ under %s)\n  \033[31mchanged \033[0m %s' "$TMP/m.json" "$TMP/tree" "$RED")"
probe verify "$TMP/m.json" --color=never
expect_out "$TMP/m.json: stale (1 of 3 inputs differ under $TMP/tree)
  changed  $RED"
probe verify "$TMP/m.json" --color=bright
expect_rc 2
expect_err "aiter-probe verify: --color takes auto, always or never, not 'bright'
Try 'aiter-probe verify --help'."
fresh_copy good.json
probe verify --color=always "$TMP/m.json"
expect_rc 0
expect_out "$(printf '%s: \033[32mfresh\033[0m (3 inputs under %s)' "$TMP/m.json" "$TMP/tree")"

case_ "changed (other size)"
fresh_copy good.json
echo "// one more line" >>"$TMP/tree/$META"
probe verify "$TMP/m.json"
expect_rc 1
expect_out_has "  changed  $META"

case_ "vanished"
fresh_copy good.json
rm "$TMP/tree/$RED"
probe verify "$TMP/m.json"
expect_rc 1
expect_out "$TMP/m.json: stale (1 of 3 inputs differ under $TMP/tree)
  vanished $RED"

case_ "appeared (recorded absent)"
fresh_copy good.json
echo "// a new reducer" >"$TMP/tree/csrc/kernels/mla/reduce_v2.cu"
probe verify "$TMP/m.json"
expect_rc 1
expect_out "$TMP/m.json: stale (1 of 3 inputs differ under $TMP/tree)
  appeared csrc/kernels/mla/reduce_v2.cu"

case_ "a symlink leading out of the root"
fresh_copy good.json
cp "$TMP/tree/$META" "$TMP/outside.cuh"
ln -sf "$TMP/outside.cuh" "$TMP/tree/$META"
probe verify "$TMP/m.json"
expect_rc 1
expect_out_has "  changed  $META"

case_ "a symlink inside the root is followed"
fresh_copy good.json
mv "$TMP/tree/$META" "$TMP/tree/planner.cuh"
ln -s ../../../../planner.cuh "$TMP/tree/$META"
probe verify "$TMP/m.json"
expect_rc 0

case_ "stale manifest: every kind at once"
fresh_copy stale.json
rm "$TMP/tree/$RED"
echo "// a new reducer" >"$TMP/tree/csrc/kernels/mla/reduce_v2.cu"
probe verify "$TMP/m.json"
expect_rc 1
expect_out "$TMP/m.json: stale (3 of 3 inputs differ under $TMP/tree)
  appeared csrc/kernels/mla/reduce_v2.cu
  vanished $RED
  changed  $META"

for bad in "/etc/passwd:absolute path" "csrc/../../etc/passwd:'..' component" \
	"..:'..' component"; do
	path=${bad%%:*}
	why=${bad#*:}
	case_ "tampered path $path"
	fresh_copy good.json
	sed "s|\"path\": \"$RED\"|\"path\": \"$path\"|" "$TMP/m.json" >"$TMP/t.json"
	probe verify "$TMP/t.json"
	expect_rc 2
	expect_quiet out
	expect_err "aiter-probe: $TMP/t.json: inputs[1].path '$path' is refused: $why"
done

case_ "missing root"
sed "s|\"root\": \"/opt/aiter\"|\"root\": \"$TMP/nowhere\"|" "$MAN/good.json" >"$TMP/t.json"
probe verify "$TMP/t.json"
expect_rc 2
expect_err "aiter-probe: $TMP/t.json: aiter root '$TMP/nowhere': No such file or directory"

case_ "truncated manifest"
probe verify "$MAN/invalid-truncated.json"
expect_rc 2
expect_err "aiter-probe: $MAN/invalid-truncated.json:5:16: premature end of input near '\"'"

case_ "newer schema"
probe verify "$MAN/invalid-newer-schema.json"
expect_rc 2
expect_err "aiter-probe: $MAN/invalid-newer-schema.json: schema 'aiter-probe.manifest/2' is newer than this reader understands (aiter-probe.manifest/1)"

case_ "usage"
probe verify
expect_rc 2
expect_err "aiter-probe verify: needs a MANIFEST
Try 'aiter-probe verify --help'."
probe verify a.json b.json
expect_rc 2
expect_err_has "aiter-probe verify: unexpected argument 'b.json'"
probe verify --quick a.json
expect_rc 2
expect_err_has "aiter-probe verify: unknown option '--quick'"

case_ "a scanned manifest is fresh, then stale"
fresh_copy good.json
probe scan --aiter-root "$TMP/tree" --no-launch -o "$TMP/scanned.json" --format json
expect_rc 0
probe verify "$TMP/scanned.json"
expect_rc 0
printf '\n' >>"$TMP/tree/$RED"
probe verify "$TMP/scanned.json"
expect_rc 1
expect_out_has "  changed  $RED"

case_ "a file over the size cap is hashed, so verify can check it"
fresh_copy good.json
bytes=$(wc -c <"$TMP/tree/$RED" | tr -d ' ')
probe scan --aiter-root "$TMP/tree" --no-launch --max-file-size 300 --format json
expect_rc 0
expect_json 'j["rules"]["mla.reduce.cases"]["reason"]' "larger than the 300-byte cap ($bytes bytes)"
expect_json '[(i["sha256"] is not None, i["bytes"]) for i in j["inputs"] if i["path"] == "'$RED'"]' \
	"[(True, $bytes)]"
cp "$TMP/out" "$TMP/scanned.json"
probe verify "$TMP/scanned.json"
expect_rc 0
expect_out_has "$TMP/scanned.json: fresh ("
sed 's/NUM_HEAD, 32,/NUM_HEAD, 48,/' "$MAN/tree/$RED" >"$TMP/tree/$RED"
probe verify "$TMP/scanned.json"
expect_rc 1
expect_out_has "  changed  $RED"

finish
