#!/bin/sh
# The command line: usage, exit statuses and the exact messages of scan and
# check, AITER root discovery, and the atomic manifest write.
. "$AP_SRCDIR/tests/lib.sh"
FIX="$AP_SRCDIR/tests/fixtures"

case_ "no command"
probe
expect_rc 2
expect_err_has "Usage: aiter-probe COMMAND [OPTION]..."

case_ "--help"
probe --help
expect_rc 0
expect_out_has "  scan      check the rules against an AITER tree and write the capability manifest"

case_ "--version"
probe --version
expect_rc 0
expect_out "aiter-probe $("$AP" --version | cut -d' ' -f2)"
grep -qE '^aiter-probe [0-9]+\.[0-9]+\.[0-9]+$' "$TMP/out" || fail "version format"

case_ "unknown command"
probe frobnicate
expect_rc 2
expect_err "aiter-probe: unknown command 'frobnicate'; try 'aiter-probe --help'"

case_ "scan --help"
probe scan --help
expect_rc 0
expect_out_has "Usage: aiter-probe scan [OPTION]..."

case_ "check --help"
probe check --help
expect_rc 0
expect_out_has "Usage: aiter-probe check --require CAP[,CAP...] [OPTION]..."

case_ "unknown option"
probe scan --bogus
expect_rc 2
expect_err "aiter-probe scan: unknown argument '--bogus'
Try 'aiter-probe scan --help'."

case_ "option without its value"
probe scan --aiter-root
expect_rc 2
expect_err "aiter-probe scan: option '--aiter-root' needs a value
Try 'aiter-probe scan --help'."

case_ "bad --format"
probe scan --aiter-root "$FIX/h24-native" --format yaml
expect_rc 2
expect_err "aiter-probe scan: --format takes text or json, not 'yaml'
Try 'aiter-probe scan --help'."

case_ "bad --devices"
probe scan --aiter-root "$FIX/h24-native" --devices 0,x
expect_rc 2
expect_err "aiter-probe scan: --devices takes 'all' or indices like 0,1, not '0,x'
Try 'aiter-probe scan --help'."

case_ "bad --launch-timeout"
probe scan --aiter-root "$FIX/h24-native" --launch-timeout=-3
expect_rc 2
expect_err "aiter-probe scan: option '--launch-timeout' needs a positive number, not '-3'
Try 'aiter-probe scan --help'."

case_ "--max-file-size is a whole number of bytes"
for size in 0.5 1e30 0; do
	probe scan --aiter-root "$FIX/h24-native" --no-launch --max-file-size "$size"
	expect_rc 2
	expect_err "aiter-probe scan: option '--max-file-size' needs a whole number of bytes from 1 to 1099511627776, not '$size'
Try 'aiter-probe scan --help'."
done

case_ "root discovery: nothing given, aiter not installed"
mkdir -p "$TMP/bin"
printf '#!/bin/sh\nexit 0\n' >"$TMP/bin/python-none"
chmod +x "$TMP/bin/python-none"
AITER_PROBE_PYTHON="$TMP/bin/python-none" probe scan --no-launch --format json
expect_rc 2
expect_err "aiter-probe: no AITER tree given: use --aiter-root DIR or set AITER_META_DIR (the aiter Python package is not installed for $TMP/bin/python-none)"

case_ "root discovery: python cannot be run"
AITER_PROBE_PYTHON="$TMP/bin/no-such-python" probe scan --no-launch --format json
expect_rc 2
expect_err "aiter-probe: cannot look for the aiter package: $TMP/bin/no-such-python: No such file or directory"

case_ "root discovery: installed wheel with aiter_meta beside the package"
mkdir -p "$TMP/site/aiter" "$TMP/site/aiter_meta"
cp -R "$FIX/h24-native/csrc" "$TMP/site/aiter_meta/"
printf '#!/bin/sh\necho %s/site/aiter\n' "$TMP" >"$TMP/bin/python-wheel"
chmod +x "$TMP/bin/python-wheel"
AITER_PROBE_PYTHON="$TMP/bin/python-wheel" probe scan --no-launch --format json
expect_rc 0
expect_json 'j["aiter"]["root"]' "$TMP/site/aiter_meta"
expect_json 'j["capabilities"]["mla.decode.native_h24"]["supported"]' True

case_ "root discovery: development install, sources in the package's parent"
mkdir -p "$TMP/dev/aiter"
cp -R "$FIX/h24-missing/csrc" "$TMP/dev/"
printf '#!/bin/sh\necho %s/dev/aiter\n' "$TMP" >"$TMP/bin/python-dev"
chmod +x "$TMP/bin/python-dev"
AITER_PROBE_PYTHON="$TMP/bin/python-dev" probe scan --no-launch --format json
expect_rc 0
expect_json 'j["aiter"]["root"]' "$TMP/dev"

case_ "root discovery: package found but no sources"
mkdir -p "$TMP/bare/aiter"
printf '#!/bin/sh\necho %s/bare/aiter\n' "$TMP" >"$TMP/bin/python-bare"
chmod +x "$TMP/bin/python-bare"
AITER_PROBE_PYTHON="$TMP/bin/python-bare" probe scan --no-launch --format json
expect_rc 2
expect_err "aiter-probe: found the aiter package at $TMP/bare/aiter, but neither $TMP/bare/aiter_meta nor $TMP/bare holds csrc/; use --aiter-root DIR or set AITER_META_DIR"

case_ "root discovery: AITER_META_DIR wins over the package"
AITER_META_DIR="$FIX/h24-missing" AITER_PROBE_PYTHON="$TMP/bin/python-wheel" \
	probe scan --no-launch --format json
expect_rc 0
expect_json 'j["capabilities"]["mla.decode.native_h24"]["supported"]' False

case_ "root discovery: --aiter-root wins over AITER_META_DIR"
AITER_META_DIR="$FIX/h24-missing" probe scan --aiter-root "$FIX/h24-native" --no-launch --format json
expect_rc 0
expect_json 'j["capabilities"]["mla.decode.native_h24"]["supported"]' True

case_ "the commit of a git work tree, loose, packed and linked"
if command -v git >/dev/null; then
	cp -R "$FIX/h24-native" "$TMP/repo"
	git -C "$TMP/repo" init -q
	git -C "$TMP/repo" add .
	git -C "$TMP/repo" -c user.name=t -c user.email=t@t commit -qm one
	head=$(git -C "$TMP/repo" rev-parse HEAD)
	probe scan --aiter-root "$TMP/repo" --no-launch --format json
	expect_json 'j["aiter"]["git_commit"]' "$head"
	git -C "$TMP/repo" pack-refs --all
	probe scan --aiter-root "$TMP/repo" --no-launch --format json
	expect_json 'j["aiter"]["git_commit"]' "$head"
	git -C "$TMP/repo" worktree add -q "$TMP/linked" 2>/dev/null
	probe scan --aiter-root "$TMP/linked" --no-launch --format json
	expect_json 'j["aiter"]["git_commit"]' "$head"
	git -C "$TMP/repo" checkout -q --detach
	probe scan --aiter-root "$TMP/repo" --no-launch --format json
	expect_json 'j["aiter"]["git_commit"]' "$head"
	probe scan --aiter-root "$TMP/repo/csrc" --no-launch --format json
	expect_json 'j["aiter"]["git_commit"]' None
else
	echo "SKIP [$current]: git is not installed" >&2
fi

case_ "no rule packs installed"
AITER_PROBE_DATADIR="$TMP/empty" probe scan --aiter-root "$FIX/h24-native" --no-launch
expect_rc 2
expect_err "aiter-probe: no rule packs in $TMP/empty (set AITER_PROBE_DATADIR, or pass --rules PATH)"

case_ "a bad regex in an extra pack: file:line:column, exit 2"
printf 'rules:\n  - id: bad\n    file: a.cu\n    regex: "x(y"\n' >"$TMP/bad.yaml"
probe scan --aiter-root "$FIX/h24-native" --no-launch --rules "$TMP/bad.yaml"
expect_rc 2
expect_err "aiter-probe: $TMP/bad.yaml:4:16: invalid regex: missing closing parenthesis"

case_ "a pack whose probe requires an unknown rule"
printf 'probes:\n  - id: p\n    requires: {all: [mla.reduce.cases, nope]}\n' >"$TMP/unknown.yaml"
probe check --require p --aiter-root "$FIX/h24-native" --no-launch --rules "$TMP/unknown.yaml"
expect_rc 2
expect_err "aiter-probe: $TMP/unknown.yaml:3:40: unknown rule or probe 'nope'"

case_ "a path escaping the root is refused when the pack loads"
printf 'rules:\n  - id: esc\n    file: ../etc/passwd\n    literal: root\n' >"$TMP/esc.yaml"
probe scan --aiter-root "$FIX/h24-native" --no-launch --rules "$TMP/esc.yaml"
expect_rc 2
expect_err "aiter-probe: $TMP/esc.yaml:3:11: path '../etc/passwd' refused: '..' component"

case_ "--rules names nothing"
probe scan --aiter-root "$FIX/h24-native" --no-launch --rules "$TMP/nope.yaml"
expect_rc 2
expect_err "aiter-probe: $TMP/nope.yaml: No such file or directory"

case_ "a probe with its own packs only"
printf 'rules:\n  - id: r\n    file: [nope.cu, csrc/kernels/mla/reduce.cu]\n    token: "HEAD_DIM"\nprobes:\n  - id: p\n    requires: {not: r}\n' >"$TMP/own.yaml"
probe scan --aiter-root "$FIX/h24-native" --no-launch --no-default-rules --rules "$TMP/own.yaml" --format json
expect_rc 0
expect_json 'list(j["rules"])' "['r']"
expect_json 'j["rules"]["r"]["file"]' "csrc/kernels/mla/reduce.cu"
expect_json 'j["capabilities"]["p"]["supported"]' False
expect_json '[i["path"] for i in j["inputs"]]' "['nope.cu', 'csrc/kernels/mla/reduce.cu']"
expect_json '[i["sha256"] for i in j["inputs"]][0]' None

case_ "not over a missing file stays unsupported"
printf 'rules:\n  - id: r\n    file: nope.cu\n    token: "x"\nprobes:\n  - id: p\n    requires: {not: r}\n' >"$TMP/notmissing.yaml"
probe scan --aiter-root "$FIX/h24-native" --no-launch --no-default-rules --rules "$TMP/notmissing.yaml" --format json
expect_rc 0
expect_json 'j["capabilities"]["p"]["supported"]' False
expect_json 'j["capabilities"]["p"]["reason"]' "unknown, so unsupported: not (rule r: no such file: nope.cu)"

case_ "not over a probe left unknown by a missing file stays unsupported"
printf 'rules:\n  - id: r\n    file: nope.cu\n    token: "x"\nprobes:\n  - id: a\n    requires: r\n  - id: p\n    requires: {not: a}\n' >"$TMP/notprobe.yaml"
probe scan --aiter-root "$FIX/h24-native" --no-launch --no-default-rules --rules "$TMP/notprobe.yaml" --format json
expect_rc 0
expect_json 'j["capabilities"]["p"]["supported"]' False
expect_json 'j["capabilities"]["p"]["reason"]' "unknown, so unsupported: not (capability a is unsupported (unknown, so unsupported: rule r: no such file: nope.cu))"

case_ "a match on a line that is not UTF-8 keeps its text and captures"
mkdir -p "$TMP/latin1"
printf 'char *s = "caf\351"; /* \300\257 */\n' >"$TMP/latin1/a.c"
printf 'rules:\n  - id: r\n    file: a.c\n    regex: "(?<word>caf.)"\n' >"$TMP/latin1.yaml"
probe scan --aiter-root "$TMP/latin1" --no-launch --no-default-rules --rules "$TMP/latin1.yaml" --format json
expect_rc 0
expect_json 'j["rules"]["r"]["status"]' matched
expect_json 'ascii(j["rules"]["r"]["matches"])' "[{'line': 1, 'text': 'char *s = \"caf\\ufffd\"; /* \\ufffd\\ufffd */', 'captures': {'word': 'caf\\ufffd'}}]"

case_ "-o writes the manifest and nothing else"
probe scan --aiter-root "$FIX/h24-native" --no-launch -o "$TMP/m.json"
expect_rc 0
expect_no_out
"${PYTHON3:-python3}" -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/m.json" || fail "not JSON"
[ -z "$(find "$TMP" -maxdepth 1 -name '.m.json.*')" ] || fail "temporary file left behind"

case_ "-o into a missing folder leaves nothing behind"
probe scan --aiter-root "$FIX/h24-native" --no-launch -o "$TMP/nowhere/m.json"
expect_rc 2
expect_err_has "aiter-probe: $TMP/nowhere/m.json: cannot create a temporary file beside it: No such file or directory"

case_ "-o over an existing manifest replaces it whole"
echo '{"old": true}' >"$TMP/m2.json"
probe scan --aiter-root "$FIX/h24-native" --no-launch -o "$TMP/m2.json"
expect_rc 0
grep -q '"schema": "aiter-probe.manifest/1"' "$TMP/m2.json" || fail "not replaced"

case_ "text report"
probe scan --aiter-root "$FIX/h24-native" --no-launch --format text
expect_rc 0
expect_out_has "  supported   mla.decode.native_h24"
grep -q "$(printf '\033')" "$TMP/out" && fail "colour when stdout is not a terminal"

case_ "text report on a terminal: colour, unless NO_COLOR"
if command -v script >/dev/null 2>&1 && [ -z "${AP_WRAPPER:-}" ]; then
	script -qec "'$AP' scan --aiter-root '$FIX/h24-native' --no-launch" "$TMP/tty" >/dev/null 2>&1
	grep -qF "$(printf '\033[32msupported')" "$TMP/tty" || fail "no colour on a terminal"
	grep -qF '"schema"' "$TMP/tty" && fail "JSON on a terminal by default"
	NO_COLOR=1 script -qec "'$AP' scan --aiter-root '$FIX/h24-native' --no-launch" "$TMP/tty2" >/dev/null 2>&1
	grep -q "$(printf '\033')" "$TMP/tty2" && fail "colour with NO_COLOR set"
	grep -qF "supported   mla.decode.native_h24" "$TMP/tty2" || fail "no text report on a terminal"
else
	echo "SKIP [$current]: no script(1) to give the tool a terminal, or under valgrind" >&2
fi

case_ "check: supported"
probe check --require mla.decode.native_h24 --aiter-root "$FIX/h24-native" --no-launch
expect_rc 0
expect_out_has "go: every required capability is supported"

case_ "check: not supported"
probe check --require mla.decode.native_h24 --aiter-root "$FIX/h24-missing" --no-launch
expect_rc 1
expect_out_has "unsupported mla.decode.native_h24: "
expect_out_has "no-go: some required capability is not supported"

case_ "check: unknown capability"
probe check --require mla.decode.native_h24,mla.nope --aiter-root "$FIX/h24-native" --no-launch
expect_rc 2
expect_err "aiter-probe: unknown capability 'mla.nope' (not defined by any loaded probe)"

case_ "check: no --require"
probe check --aiter-root "$FIX/h24-native"
expect_rc 2
expect_err "aiter-probe check: --require CAP is needed
Try 'aiter-probe check --help'."

case_ "check: json"
probe check --require mla.decode.native_h24 --aiter-root "$FIX/h24-missing" --no-launch --format json
expect_rc 1
expect_json 'j["ok"]' False
expect_json 'j["capabilities"]["mla.decode.native_h24"]["supported"]' False

case_ "check --manifest: fresh"
cp -R "$FIX/h24-native" "$TMP/tree"
probe scan --aiter-root "$TMP/tree" --no-launch -o "$TMP/tree.json"
probe check --require mla.decode.native_h24 --manifest "$TMP/tree.json"
expect_rc 0
expect_out_has "supported   mla.decode.native_h24: "

case_ "check --manifest: stale"
echo "// edited" >>"$TMP/tree/csrc/kernels/mla/reduce.cu"
probe check --require mla.decode.native_h24 --manifest "$TMP/tree.json"
expect_rc 2
expect_err "aiter-probe: $TMP/tree.json is stale (csrc/kernels/mla/reduce.cu changed): run 'aiter-probe scan' again"

case_ "check --manifest with scan options"
probe check --require mla.decode.native_h24 --manifest "$TMP/tree.json" --no-launch
expect_rc 2
expect_err "aiter-probe check: --manifest reads a manifest; scan options do not apply to it
Try 'aiter-probe check --help'."

case_ "check --manifest: not a manifest"
echo '{"schema": "aiter-probe.manifest/1"' >"$TMP/cut.json"
probe check --require mla.decode.native_h24 --manifest "$TMP/cut.json"
expect_rc 2
expect_err_has "aiter-probe: $TMP/cut.json:"

finish
