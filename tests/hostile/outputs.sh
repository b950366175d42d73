#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile outputs: -o onto something that is not a regular file, stdout on a
# full device, a signal in the middle of the manifest write, a bad
# SOURCE_DATE_EPOCH, and control bytes from the tree or its git history on a
# terminal. Every run is bounded in time (timeout 20) and memory (ulimit -v in
# a subshell), so that a regression fails instead of hanging.
. "$AP_SRCDIR/tests/lib.sh"
FIX="$AP_SRCDIR/tests/fixtures"
ESC=$(printf '\033')
BEL=$(printf '\007')
TITLE="${ESC}]0;title${BEL}${ESC}[2J"
MSG_FULL="aiter-probe: writing to stdout: No space left on device"
MSG_EPOCH="aiter-probe: SOURCE_DATE_EPOCH must be a whole number of seconds from 0 to 253402300799, not"

# bounded OUT ARGS...: as probe, with stdout into OUT, under the bounds.
bounded() {
	out=$1
	shift
	case $- in *e*) errexit=1 ;; *) errexit= ;; esac
	set +e
	(
		ulimit -v "$AP_VMEM" 2>/dev/null
		exec timeout 20 ${AP_WRAPPER:-} "$AP" "$@"
	) >"$out" 2>"$TMP/err"
	rc=$?
	[ -z "$errexit" ] || set -e
}

bprobe() { bounded "$TMP/out" "$@"; }

# no_temp_left DIR NAME: no .NAME.XXXXXX beside NAME.
no_temp_left() {
	left=$(find "$1" -maxdepth 1 -name ".$2.*")
	[ -z "$left" ] || { fail "temporary file left behind: $left"; rm -f $left; }
}

expect_no_raw_controls() {
	if grep -q "[$ESC$BEL]" "$TMP/out"; then
		fail "raw control bytes on stdout"
		sed 's/^/  stdout: /' "$TMP/out" | cat -A >&2
	fi
}

TREE="--aiter-root $FIX/h24-native --no-launch"
SCAN="scan $TREE"

# --- 1. -o onto what is not a regular file ----------------------------------

case_ "-o onto a FIFO is refused, the FIFO kept"
mkfifo "$TMP/fifo"
bprobe $SCAN -o "$TMP/fifo"
expect_rc 2
expect_err "aiter-probe: cannot write the manifest to $TMP/fifo: not a regular file"
expect_no_out
[ -p "$TMP/fifo" ] || fail "the FIFO was replaced"
no_temp_left "$TMP" fifo

case_ "-o onto a folder is refused, the folder kept"
mkdir "$TMP/folder"
bprobe $SCAN -o "$TMP/folder"
expect_rc 2
expect_err "aiter-probe: cannot write the manifest to $TMP/folder: not a regular file"
[ -d "$TMP/folder" ] && [ -z "$(ls -A "$TMP/folder")" ] || fail "the folder was touched"
no_temp_left "$TMP" folder

case_ "-o onto a socket is refused"
if "${PYTHON3:-python3}" -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
	"$TMP/sock" 2>/dev/null; then
	bprobe $SCAN -o "$TMP/sock"
	expect_rc 2
	expect_err "aiter-probe: cannot write the manifest to $TMP/sock: not a regular file"
	[ -S "$TMP/sock" ] || fail "the socket was replaced"
	no_temp_left "$TMP" sock
else
	echo "SKIP [$current]: cannot make a socket" >&2
fi

case_ "-o onto a symlink is refused, even to a regular file"
echo '{"old": true}' >"$TMP/real.json"
ln -s real.json "$TMP/link.json"
ln -s fifo "$TMP/link-fifo"
bprobe $SCAN -o "$TMP/link.json"
expect_rc 2
expect_err "aiter-probe: cannot write the manifest to $TMP/link.json: is a symlink"
[ -L "$TMP/link.json" ] && [ "$(cat "$TMP/real.json")" = '{"old": true}' ] || fail "followed the link"
bprobe $SCAN -o "$TMP/link-fifo"
expect_rc 2
expect_err "aiter-probe: cannot write the manifest to $TMP/link-fifo: is a symlink"
no_temp_left "$TMP" link.json
no_temp_left "$TMP" link-fifo

# Run only when the refusals above hold: as root, a tool that renames over
# /dev/null would take the machine's /dev/null away (put back below).
case_ "-o onto /dev/null is refused, /dev/null stays a character device"
if [ "$failures" -eq 0 ] && [ -c /dev/null ]; then
	bprobe $SCAN -o /dev/null
	expect_rc 2
	expect_err "aiter-probe: cannot write the manifest to /dev/null: not a regular file"
	if ! test -c /dev/null; then
		fail "/dev/null is no longer a character device"
		[ "$(id -u)" != 0 ] || { rm -f /dev/null && mknod -m 0666 /dev/null c 1 3; }
	fi
	no_temp_left /dev null
else
	echo "SKIP [$current]: an earlier refusal failed, or no /dev/null" >&2
fi

case_ "-o: a new manifest is 0666 less the umask, a replaced one keeps its mode"
(ulimit -v "$AP_VMEM" 2>/dev/null; umask 027 && exec timeout 20 ${AP_WRAPPER:-} "$AP" $SCAN -o "$TMP/new.json") 2>"$TMP/err"
[ "$(stat -c %a "$TMP/new.json")" = 640 ] || fail "new manifest mode $(stat -c %a "$TMP/new.json")"
echo '{}' >"$TMP/kept.json"
chmod 0604 "$TMP/kept.json"
(ulimit -v "$AP_VMEM" 2>/dev/null; umask 077 && exec timeout 20 ${AP_WRAPPER:-} "$AP" $SCAN -o "$TMP/kept.json") 2>"$TMP/err"
[ "$(stat -c %a "$TMP/kept.json")" = 604 ] || fail "replaced manifest mode $(stat -c %a "$TMP/kept.json")"
grep -q '"schema": "aiter-probe.manifest/1"' "$TMP/kept.json" || fail "not replaced"

case_ "-o: never writable by group or others (the readers would not trust it), whatever the umask or the replaced mode"
(ulimit -v "$AP_VMEM" 2>/dev/null; umask 000 && exec timeout 20 ${AP_WRAPPER:-} "$AP" $SCAN -o "$TMP/open.json") 2>"$TMP/err"
[ "$(stat -c %a "$TMP/open.json")" = 644 ] || fail "new manifest mode $(stat -c %a "$TMP/open.json")"
chmod 0666 "$TMP/open.json"
(ulimit -v "$AP_VMEM" 2>/dev/null; exec timeout 20 ${AP_WRAPPER:-} "$AP" $SCAN -o "$TMP/open.json") 2>"$TMP/err"
[ "$(stat -c %a "$TMP/open.json")" = 644 ] || fail "replaced manifest mode $(stat -c %a "$TMP/open.json")"

# --- 2. stdout on a full device ---------------------------------------------

if [ -c /dev/full ]; then
	bprobe $SCAN -o "$TMP/m.json"
	expect_rc 0
	cp -R "$FIX/h24-native" "$TMP/stale-tree"
	bprobe scan --aiter-root "$TMP/stale-tree" --no-launch -o "$TMP/stale.json"
	echo "// edited" >>"$TMP/stale-tree/csrc/kernels/mla/reduce.cu"
	for args in "--help" "--version" "scan --help" "check --help" "verify --help" \
		"diff --help" "history --help" "$SCAN --format text" "$SCAN --format json" \
		"verify $TMP/m.json" "verify $TMP/stale.json" "diff $TMP/m.json $TMP/stale.json" \
		"diff $TMP/m.json $TMP/m.json --format json" \
		"check --require mla.decode.native_h24 --manifest $TMP/m.json" \
		"check --require mla.decode.native_h24 $TREE --format json"; do
		case_ "stdout on /dev/full: $args"
		bounded /dev/full $args
		expect_rc 2
		expect_err "$MSG_FULL"
	done
else
	echo "SKIP [stdout on /dev/full]: no /dev/full" >&2
fi

# --- 3. a signal during the manifest write ------------------------------------

# alive PID: running and not yet a zombie (kill -0 succeeds on a zombie).
alive() {
	if [ -r "/proc/$1/stat" ]; then
		read -r _ _ state _ <"/proc/$1/stat" 2>/dev/null || return 1
		[ "$state" != Z ]
	else
		kill -0 "$1" 2>/dev/null
	fi
}

# Under valgrind the 40 MB manifest takes far longer than the time bound and
# valgrind delivers signals only at its own safe points: run natively only.
case_ "SIGINT, SIGTERM, SIGHUP during the write leave no temporary file"
if [ -n "${AP_WRAPPER:-}" ]; then
	echo "SKIP [$current]: under $AP_WRAPPER (too slow for the bound, signals deferred)" >&2
else
	# 8 rules collecting the 10000 long lines of one file: a ~40 MB manifest,
	# whose write lasts long enough for the temporary file to be seen.
	mkdir -p "$TMP/big"
	"${PYTHON3:-python3}" -c 'import sys
with open(sys.argv[1], "w") as f:
    for i in range(10000):
        f.write("x = \"v%07d%s\";\n" % (i, "0" * 200))' "$TMP/big/a.c"
	{
		echo "rules:"
		for i in 1 2 3 4 5 6 7 8; do
			printf '  - id: r%d\n    file: a.c\n    regex: "x = \\"(?<v>[^\\"]*)\\""\n    collect: all\n' $i
		done
	} >"$TMP/big.yaml"
	caught=0
	for sig in TERM INT HUP TERM INT HUP; do
		dir="$TMP/sig"
		rm -rf "$dir"
		mkdir "$dir"
		# timeout runs the tool with SIGINT back to its default (a background
		# job of a script starts with it ignored) and passes the signal on.
		(
			ulimit -v "$AP_VMEM" 2>/dev/null
			exec timeout 20 "$AP" scan --aiter-root "$TMP/big" --no-launch --no-default-rules \
				--rules "$TMP/big.yaml" -o "$dir/m.json"
		) >/dev/null 2>"$TMP/err" &
		pid=$!
		seen=
		while [ -z "$seen" ] && alive "$pid"; do
			for f in "$dir"/.m.json.*; do [ -e "$f" ] && seen=1; done
		done
		kill -"$sig" "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		st=$?
		case $st in
		0) ;;
		129 | 130 | 143) [ -z "$seen" ] || caught=$((caught + 1)) ;;
		*) fail "SIG$sig: exit status $st"; sed 's/^/  stderr: /' "$TMP/err" >&2 ;;
		esac
		no_temp_left "$dir" m.json
		if [ -e "$dir/m.json" ]; then
			"${PYTHON3:-python3}" -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/m.json" \
				|| fail "SIG$sig: a partial manifest"
		fi
	done
	echo "[$current]: $caught of 6 signals landed while the temporary file existed" >&2
fi

# --- 4. SOURCE_DATE_EPOCH ------------------------------------------------------

for epoch in -1 abc 253402300800 5x " 5" +5 0x10 99999999999999999999999; do
	case_ "SOURCE_DATE_EPOCH='$epoch' is refused before scanning"
	SOURCE_DATE_EPOCH="$epoch" bprobe scan --aiter-root "$TMP/no-such-tree" --no-launch --format json
	expect_rc 2
	expect_err "$MSG_EPOCH '$epoch'"
	expect_no_out
	SOURCE_DATE_EPOCH="$epoch" bprobe check --require mla.decode.native_h24 $TREE
	expect_rc 2
	expect_err "$MSG_EPOCH '$epoch'"
done

case_ "SOURCE_DATE_EPOCH at its bounds, and empty (not set)"
SOURCE_DATE_EPOCH=253402300799 bprobe $SCAN --format json
expect_rc 0
expect_json 'j["generated"]' "9999-12-31T23:59:59Z"
SOURCE_DATE_EPOCH=0 bprobe $SCAN --format json
expect_json 'j["generated"]' "1970-01-01T00:00:00Z"
SOURCE_DATE_EPOCH= bprobe $SCAN --format json
expect_rc 0
json_get 'j["generated"]' | grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' \
	|| fail "generated is '$(json_get 'j["generated"]')'"

# --- 5. control bytes on a terminal ------------------------------------------

mkdir -p "$TMP/t1" "$TMP/t2"
printf 'const char *x = "%s";\n' "$TITLE" >"$TMP/t1/a.c"
printf 'const char *x = "%s";\n' "${ESC}[2Jother" >"$TMP/t2/a.c"
printf 'rules:\n  - id: r\n    file: a.c\n    regex: "x = \\"(?<v>[^\\"]*)\\""\n    collect: all\nprobes:\n  - id: p\n    requires: r\n' >"$TMP/esc.yaml"
OWN="--no-launch --no-default-rules --rules $TMP/esc.yaml"

case_ "scan text: a capture's control bytes are escaped, JSON keeps them"
bprobe scan --aiter-root "$TMP/t1" $OWN --format text
expect_rc 0
expect_out_has '      a.c:1 (v=\x1b]0;title\x07\x1b[2J)'
expect_no_raw_controls
bprobe scan --aiter-root "$TMP/t1" $OWN --format json
expect_json 'ascii(j["rules"]["r"]["matches"][0]["captures"]["v"])' "'\\x1b]0;title\\x07\\x1b[2J'"
expect_json 'ascii(j["rules"]["r"]["matches"][0]["text"])' "'const char *x = \"\\x1b]0;title\\x07\\x1b[2J\";'"

# U+202E (right-to-left override), U+2066 (left-to-right isolate), U+2069
# (pop isolate), U+200F (right-to-left mark) and U+061C (Arabic letter mark):
# each reorders what a terminal shows after it.
mkdir -p "$TMP/tbidi"
printf 'const char *x = "a\342\200\256b\342\201\246c\342\201\251d\342\200\217e\330\234f";\n' >"$TMP/tbidi/a.c"

case_ "scan and explain text: bidirectional controls are escaped, JSON keeps them"
bprobe scan --aiter-root "$TMP/tbidi" $OWN --format text
expect_rc 0
expect_out_has '      a.c:1 (v=a\xe2\x80\xaeb\xe2\x81\xa6c\xe2\x81\xa9d\xe2\x80\x8fe\xd8\x9cf)'
LC_ALL=C grep -q "$(printf '\342\200[\216\217\252-\256]\\|\342\201[\246-\251]\\|\330\234')" "$TMP/out" &&
	fail "a bidirectional control in the text"
bprobe explain r --aiter-root "$TMP/tbidi" $OWN
expect_rc 0
expect_out_has '      "a\xe2\x80\xaeb\xe2\x81\xa6c\xe2\x81\xa9d\xe2\x80\x8fe\xd8\x9cf";'
bprobe scan --aiter-root "$TMP/tbidi" $OWN --format json
expect_json 'ascii(j["rules"]["r"]["matches"][0]["captures"]["v"])' "'a\\u202eb\\u2066c\\u2069d\\u200fe\\u061cf'"

case_ "scan text: a newline in a value is escaped too"
nl="$TMP/nl
root"
mkdir -p "$nl"
cp "$TMP/t2/a.c" "$nl/"
# Wide enough that the header stays one line whatever $TMPDIR is.
export COLUMNS=1000
bprobe scan --aiter-root "$nl" $OWN --format text
unset COLUMNS
expect_rc 0
[ "$(head -n 1 "$TMP/out")" = "AITER $TMP/nl\\x0aroot (version unknown, commit unknown)" ] \
	|| fail "first line: $(head -n 1 "$TMP/out")"
bprobe scan --aiter-root "$nl" $OWN --format json
[ "$(json_get 'j["aiter"]["root"]')" = "$nl" ] || fail "JSON root changed"

case_ "scan and check text: a reason's control bytes are escaped"
mkdir -p "$TMP/t3"
printf 'x = "y";\n' >"$TMP/out${ESC}[2J.c"
ln -s "$TMP/out${ESC}[2J.c" "$TMP/t3/a.c"
export COLUMNS=1000 # the reason on one line
bprobe scan --aiter-root "$TMP/t3" $OWN --format text
unset COLUMNS
expect_rc 0
expect_out_has "      symlink resolves outside the AITER root ($TMP/out\\x1b[2J.c)"
expect_no_raw_controls
COLUMNS=10000 bprobe check --require p --aiter-root "$TMP/t3" $OWN
expect_rc 1
expect_out "unknown     p: unknown, so unsupported: rule r could not be checked: a.c: symlink resolves outside the AITER root ($TMP/out\\x1b[2J.c)
no-go: some required capability is unknown (unknown is never a go)"

case_ "diff text: a value's captures escaped, JSON exact"
bprobe scan --aiter-root "$TMP/t1" $OWN -o "$TMP/e1.json"
bprobe scan --aiter-root "$TMP/t2" $OWN -o "$TMP/e2.json"
bprobe diff "$TMP/e1.json" "$TMP/e2.json"
expect_rc 0
expect_out_has '  changed  r: v \x1b]0;title\x07\x1b[2J -> \x1b[2Jother'
expect_no_raw_controls
bprobe diff "$TMP/e1.json" "$TMP/e2.json" --format json
expect_json 'ascii(j["values"][0]["captures"][0]["before"])' "'\\x1b]0;title\\x07\\x1b[2J'"

# Two matches a side: a case table, its tuples compared as sets.
case_ "diff text: case tuples escaped, JSON exact"
for t in t1 t2; do
	mkdir -p "$TMP/${t}b"
	{ cat "$TMP/$t/a.c"; echo 'const char *x = "same";'; } >"$TMP/${t}b/a.c"
	bprobe scan --aiter-root "$TMP/${t}b" $OWN -o "$TMP/${t}b.json"
done
bprobe diff "$TMP/t1b.json" "$TMP/t2b.json"
expect_rc 0
expect_out_has '    - v=\x1b]0;title\x07\x1b[2J'
expect_out_has '    + v=\x1b[2Jother'
expect_no_raw_controls
bprobe diff "$TMP/t1b.json" "$TMP/t2b.json" --format json
expect_json 'ascii(j["cases"][0]["removed"])' "['v=\\x1b]0;title\\x07\\x1b[2J']"

case_ "verify text: a root with control bytes is escaped"
mkdir -p "$TMP/esc${ESC}[2Jtree"
cp "$TMP/t1/a.c" "$TMP/esc${ESC}[2Jtree/"
bprobe scan --aiter-root "$TMP/esc${ESC}[2Jtree" $OWN -o "$TMP/e3.json"
bprobe verify "$TMP/e3.json"
expect_rc 0
expect_out "$TMP/e3.json: fresh (2 inputs under $TMP/esc\\x1b[2Jtree)"

case_ "history text: a commit subject and captures escaped, JSON exact"
if command -v git >/dev/null; then
	export HOME="$TMP" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
	export GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@t
	export GIT_AUTHOR_DATE="@1709280000 +0000" GIT_COMMITTER_DATE="@1709280000 +0000"
	git init -q -b main "$TMP/repo"
	printf 'x = "plain";\n' >"$TMP/repo/a.c"
	git -C "$TMP/repo" add -A
	git -C "$TMP/repo" commit -qm "First"
	cp "$TMP/t1/a.c" "$TMP/repo/a.c"
	git -C "$TMP/repo" add -A
	git -C "$TMP/repo" commit -qm "Set $TITLE now"
	head=$(git -C "$TMP/repo" rev-parse --short=12 HEAD)
	bprobe history --git "$TMP/repo" main --no-default-rules --rules "$TMP/esc.yaml"
	expect_rc 0
	expect_out_has "$head 2024-03-01T08:00:00+00:00 Set \\x1b]0;title\\x07\\x1b[2J now"
	expect_out_has '      + v=\x1b]0;title\x07\x1b[2J'
	expect_no_raw_controls
	bprobe history --git "$TMP/repo" main --no-default-rules --rules "$TMP/esc.yaml" --format json
	expect_json 'ascii(j["changes"][0]["subject"])' "'Set \\x1b]0;title\\x07\\x1b[2J now'"
	if [ -c /dev/full ]; then
		bounded /dev/full history --git "$TMP/repo" main --no-default-rules --rules "$TMP/esc.yaml"
		expect_rc 2
		expect_err "$MSG_FULL"
	fi
else
	echo "SKIP [$current]: git is not installed" >&2
fi

finish
