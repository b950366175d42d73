#!/bin/sh
# SPDX-License-Identifier: MIT
# scan --save: the manifest for the scanned tree at its default place, the
# folder made when missing, refusals, and the environment that names it.
. "$AP_SRCDIR/tests/lib.sh"
SAMPLE="$AP_SRCDIR/sample/aiter-root"
ROOT=$(cd "$SAMPLE" && pwd -P)
NAME=aiter-$(printf %s "$ROOT" | sha256sum | cut -c1-16).json
unset AITER_PROBE_MANIFEST AITER_PROBE_MANIFEST_DIR XDG_CACHE_HOME

case_ "--save writes the file for the tree, making the folder"
AITER_PROBE_MANIFEST_DIR="$TMP/a/b" probe scan --aiter-root "$SAMPLE" --no-launch --save
expect_rc 0
expect_out "$TMP/a/b/$NAME"
[ ! -s "$TMP/err" ] || fail "stderr: $(cat "$TMP/err")"
[ "$(stat -c %a "$TMP/a") $(stat -c %a "$TMP/a/b")" = "755 755" ] || fail "folder modes"
"${PYTHON3:-python3}" -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["aiter"]["root"] == sys.argv[2]' \
	"$TMP/a/b/$NAME" "$ROOT" || fail "not the manifest of $ROOT"

case_ "--save again replaces it; --format still prints"
AITER_PROBE_MANIFEST_DIR="$TMP/a/b" probe scan --aiter-root "$SAMPLE/." --no-launch --save --format json
expect_rc 0
expect_json 'j["aiter"]["root"]' "$ROOT"
[ "$(ls "$TMP/a/b")" = "$NAME" ] || fail "one file per tree: $(ls "$TMP/a/b")"

case_ "the XDG cache, then HOME"
XDG_CACHE_HOME="$TMP/xdg" probe scan --aiter-root "$SAMPLE" --no-launch --save
expect_out "$TMP/xdg/aiter-probe/$NAME"
XDG_CACHE_HOME=relative HOME="$TMP/home" probe scan --aiter-root "$SAMPLE" --no-launch --save
expect_out "$TMP/home/.cache/aiter-probe/$NAME"

case_ "no folder to save in"
(unset HOME; probe scan --aiter-root "$SAMPLE" --no-launch --save; echo "$rc" >"$TMP/rc")
rc=$(cat "$TMP/rc")
expect_rc 2
expect_err "aiter-probe: no folder for saved manifests: set AITER_PROBE_MANIFEST_DIR, XDG_CACHE_HOME or HOME"

# save_elsewhere NAME=VALUE: scan --save from another working directory with
# that variable set (a relative folder would land there).
mkdir "$TMP/cwd"
save_elsewhere() {
	(cd "$TMP/cwd" && export "$1" && probe scan --aiter-root "$SAMPLE" --no-launch --save
	 echo "$rc" >"$TMP/rc")
	rc=$(cat "$TMP/rc")
}

case_ "a relative AITER_PROBE_MANIFEST_DIR"
save_elsewhere AITER_PROBE_MANIFEST_DIR=rel
expect_rc 2
expect_err "aiter-probe: AITER_PROBE_MANIFEST_DIR must be an absolute path, not 'rel'"
[ ! -e "$TMP/cwd/rel" ] || fail "saved under the working directory"
AITER_PROBE_MANIFEST_DIR=$(printf 'rel\033[31m') probe scan --aiter-root "$SAMPLE" --no-launch --save
expect_rc 2
expect_err "aiter-probe: AITER_PROBE_MANIFEST_DIR must be an absolute path, not 'rel\x1b[31m'"

case_ "a relative HOME is none"
save_elsewhere HOME=relhome
expect_rc 2
expect_err "aiter-probe: no folder for saved manifests: set AITER_PROBE_MANIFEST_DIR, XDG_CACHE_HOME or HOME"
[ ! -e "$TMP/cwd/relhome" ] || fail "saved under the working directory"

case_ "--save with -o"
probe scan --aiter-root "$SAMPLE" --no-launch --save -o "$TMP/m.json"
expect_rc 2
expect_err "aiter-probe scan: --save and -o both name where to write; give one
Try 'aiter-probe scan --help'."
[ ! -e "$TMP/m.json" ] || fail "wrote -o"

case_ "a symlink to a folder on the way is followed (a linked HOME)"
mkdir "$TMP/real"
ln -s "$TMP/real" "$TMP/link"
HOME="$TMP/link" probe scan --aiter-root "$SAMPLE" --no-launch --save
expect_rc 0
expect_out "$TMP/link/.cache/aiter-probe/$NAME"
[ -f "$TMP/real/.cache/aiter-probe/$NAME" ] || fail "not saved in the linked folder"

case_ "a dangling symlink on the way"
ln -s "$TMP/nowhere" "$TMP/dangling"
AITER_PROBE_MANIFEST_DIR="$TMP/dangling/m" probe scan --aiter-root "$SAMPLE" --no-launch --save
expect_rc 2
expect_err "aiter-probe: cannot save the manifest in $TMP/dangling/m: $TMP/dangling: No such file or directory"
[ ! -e "$TMP/nowhere" ] || fail "made the link's target"

case_ "a file on the way"
: >"$TMP/file"
AITER_PROBE_MANIFEST_DIR="$TMP/file/m" probe scan --aiter-root "$SAMPLE" --no-launch --save
expect_rc 2
expect_err "aiter-probe: cannot save the manifest in $TMP/file/m: $TMP/file is not a folder"

case_ "the manifest's place is a folder"
mkdir -p "$TMP/c/$NAME"
AITER_PROBE_MANIFEST_DIR="$TMP/c" probe scan --aiter-root "$SAMPLE" --no-launch --save
expect_rc 2
expect_err "aiter-probe: cannot write the manifest to $TMP/c/$NAME: not a regular file"

case_ "a folder it may not write"
if [ "$(id -u)" != 0 ]; then
	mkdir "$TMP/ro" && chmod 555 "$TMP/ro"
	AITER_PROBE_MANIFEST_DIR="$TMP/ro/m" probe scan --aiter-root "$SAMPLE" --no-launch --save
	expect_rc 2
	expect_err "aiter-probe: cannot save the manifest in $TMP/ro/m: $TMP/ro/m: Permission denied"
fi

case_ "a manifest folder others may write (a planted manifest would be trusted): refused"
mkdir -m 1777 "$TMP/shared"
AITER_PROBE_MANIFEST_DIR="$TMP/shared" probe scan --aiter-root "$SAMPLE" --no-launch --save
expect_rc 2
expect_err "aiter-probe: cannot save the manifest: $TMP/shared: not trusted: it is writable by others"
[ ! -e "$TMP/shared/$NAME" ] || fail "saved in a folder no reader trusts"

case_ "a manifest folder that is a symlink: refused (the readers refuse it)"
ln -s "$TMP/real" "$TMP/linked-dir"
AITER_PROBE_MANIFEST_DIR="$TMP/linked-dir" probe scan --aiter-root "$SAMPLE" --no-launch --save
expect_rc 2
expect_err "aiter-probe: cannot save the manifest: $TMP/linked-dir: not trusted: it is a symlink"

case_ "a folder it makes under a umask that leaves group write: made without it"
mask=$(umask)
umask 002
AITER_PROBE_MANIFEST_DIR="$TMP/g/m" probe scan --aiter-root "$SAMPLE" --no-launch --save
umask "$mask"
expect_rc 0
[ "$(stat -c %a "$TMP/g/m")" = 755 ] || fail "made $TMP/g/m with mode $(stat -c %a "$TMP/g/m")"
[ "$(stat -c %a "$TMP/g/m/$NAME")" = 644 ] || fail "wrote mode $(stat -c %a "$TMP/g/m/$NAME")"
probe verify "$TMP/g/m/$NAME"
expect_rc 0

case_ "scan --help names --save"
probe scan --help
expect_out_has "  --save                 write it where consumers find it: the file for this"
finish
