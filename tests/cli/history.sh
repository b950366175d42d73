#!/bin/sh
# SPDX-License-Identifier: MIT
# history: builds a small git repository that mimics AITER's reducer, then
# checks the exact changes reported over ranges of it (text and JSON), which
# commits are evaluated, and the errors.
. "$AP_SRCDIR/tests/lib.sh"

REPO="$TMP/aiter"
PACK="$TMP/pack.yaml"

# A fixed identity, dates and configuration, so every run builds the same
# commits and the dates in the report are known.
export HOME="$TMP" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=Tester GIT_AUTHOR_EMAIL=tester@example.com
export GIT_COMMITTER_NAME=Tester GIT_COMMITTER_EMAIL=tester@example.com
day=0

# commit SUBJECT: commits everything staged, one day after the last commit,
# and keeps its id in $id.
commit() {
	day=$((day + 1))
	GIT_AUTHOR_DATE="@$((1709280000 + day * 86400)) +0200" \
	GIT_COMMITTER_DATE="@$((1709280000 + day * 86400)) +0200" \
		git -C "$REPO" commit -q -m "$1"
	id=$(git -C "$REPO" rev-parse HEAD)
}

# reducer CASE...: a reducer source with one dispatch case per "HEADS DIM".
reducer() {
	printf '// the reducer\n#define MLA_REDUCE_CASE_EF(NUM_HEAD, H, HEAD_DIM, D, ...) \\\n'
	printf '    if (heads == H && dim == D) { run<H, D>(); }\n\nvoid dispatch(int heads, int dim)\n{\n'
	for c in "$@"; do
		set -- $c
		printf '    MLA_REDUCE_CASE_EF(NUM_HEAD, %s, HEAD_DIM, %s, ...)\n' "$1" "$2"
	done
	printf '}\n'
}

cat >"$PACK" <<'EOF'
rules:
  - id: mla.reduce.native_h24_d512
    file: [csrc/kernels/mla/reduce.cu, csrc/kernels/mla_reduce.cu]
    normalize: strip-whitespace
    literal: "MLA_REDUCE_CASE_EF(NUM_HEAD,24,HEAD_DIM,512,"
  - id: mla.reduce.cases
    file: [csrc/kernels/mla/reduce.cu, csrc/kernels/mla_reduce.cu]
    normalize: strip-whitespace
    regex: 'MLA_REDUCE_CASE_EF\(NUM_HEAD,(?<heads>\d+),HEAD_DIM,(?<dim>\d+),'
    collect: all
probes:
  - id: mla.decode.native_h24
    requires: mla.reduce.native_h24_d512
EOF

git init -q -b main "$REPO"
mkdir -p "$REPO/csrc/kernels/mla"
reducer "16 512" "32 512" >"$REPO/csrc/kernels/mla/reduce.cu"
echo "notes" >"$REPO/README.md"
git -C "$REPO" add -A
commit "Add the reducer"
c1=$id
reducer "16 512" "24 512" "32 512" >"$REPO/csrc/kernels/mla/reduce.cu"
git -C "$REPO" add -A
commit "Add the 24x512 case"
c2=$id
echo "more notes" >>"$REPO/README.md"
git -C "$REPO" add -A
commit "Touch the readme"
c3=$id
git -C "$REPO" mv csrc/kernels/mla/reduce.cu csrc/kernels/mla_reduce.cu
commit "Move the reducer"
c4=$id
reducer "16 512" "32 512" >"$REPO/csrc/kernels/mla_reduce.cu"
git -C "$REPO" add -A
commit "Drop the 24x512 case"
c5=$id
git -C "$REPO" checkout -q -b side
reducer "16 512" "24 512" "32 512" >"$REPO/csrc/kernels/mla_reduce.cu"
git -C "$REPO" add -A
commit "Restore the 24x512 case"
c6=$id
git -C "$REPO" checkout -q main
echo "even more notes" >>"$REPO/README.md"
git -C "$REPO" add -A
commit "Touch the readme again"
c7=$id
day=$((day + 1))
GIT_AUTHOR_DATE="@$((1709280000 + day * 86400)) +0200" \
GIT_COMMITTER_DATE="@$((1709280000 + day * 86400)) +0200" \
	git -C "$REPO" merge -q --no-ff -m "Merge side" side
c8=$(git -C "$REPO" rev-parse HEAD)
git -C "$REPO" checkout -q -b reorder "$c2"
reducer "24 512" "16 512" "32 512" >"$REPO/csrc/kernels/mla/reduce.cu"
git -C "$REPO" add -A
commit "Put the 24x512 case first"
c9=$id
# reducer_commit SUBJECT CASE...: the reducer with these cases, committed.
reducer_commit() {
	subject=$1
	shift
	reducer "$@" >"$REPO/csrc/kernels/mla/reduce.cu"
	git -C "$REPO" add -A
	commit "$subject"
}
reducer_commit "List the 16x512 case four times" "16 512" "16 512" "24 512" "16 512" "16 512" "32 512"
c10=$id
reducer_commit "Drop the 24x512 case, keep the repeats" "16 512" "32 512" "16 512" "16 512" "16 512"
c11=$id
reducer_commit "List the 16x512 case once" "16 512" "32 512"
c12=$id
git -C "$REPO" checkout -q main

expect_no_err() { [ ! -s "$TMP/err" ] || { fail "stderr not empty"; sed 's/^/  stderr: /' "$TMP/err" >&2; }; }
expect_no_out() { [ ! -s "$TMP/out" ] || fail "stdout not empty"; }
short() { printf '%.12s' "$1"; }
history() { probe history --no-default-rules --rules "$PACK" --git "$REPO" "$@"; }

# Full ids in the ranges make long lines: wide enough not to wrap them.
export COLUMNS=200

case_ "whole history, text"
history main
expect_rc 0
expect_out "history of main: 8 commits
initial state at $(short "$c1") 2024-03-02T10:00:00+02:00 Add the reducer
  rule        mla.reduce.native_h24_d512  unmatched
  rule        mla.reduce.cases            matched (2 cases)
              dim 512: heads 16 32
  capability  mla.decode.native_h24       unsupported
changes:
$(short "$c2") 2024-03-03T10:00:00+02:00 Add the 24x512 case
  rule        mla.reduce.native_h24_d512  unmatched -> matched
  rule        mla.reduce.cases            matched -> matched
      + heads=24 dim=512
  capability  mla.decode.native_h24       unsupported -> supported
$(short "$c5") 2024-03-06T10:00:00+02:00 Drop the 24x512 case
  rule        mla.reduce.native_h24_d512  matched -> unmatched
  rule        mla.reduce.cases            matched -> matched
      - heads=24 dim=512
  capability  mla.decode.native_h24       supported -> unsupported
$(short "$c6") 2024-03-07T10:00:00+02:00 Restore the 24x512 case
  rule        mla.reduce.native_h24_d512  unmatched -> matched
  rule        mla.reduce.cases            matched -> matched
      + heads=24 dim=512
  capability  mla.decode.native_h24       unsupported -> supported
$(short "$c8") 2024-03-09T10:00:00+02:00 Merge side
  rule        mla.reduce.native_h24_d512  unmatched -> matched
  rule        mla.reduce.cases            matched -> matched
      + heads=24 dim=512
  capability  mla.decode.native_h24       unsupported -> supported
8 commits, 4 evaluated"
expect_no_err

# change KIND ID COMMIT DAY SUBJECT BEFORE AFTER: one change as JSON.
change() {
	printf '{"id": "%s", "kind": "%s", "commit": "%s", "date": "2024-03-%02dT10:00:00+02:00", "subject": "%s", "before": %s, "after": %s}' \
		"$2" "$1" "$3" "$4" "$5" "$6" "$7"
}
NO24='{"status": "unmatched", "captures": []}'
H24='{"status": "matched", "captures": []}'
CASES2='{"status": "matched", "captures": [{"heads": "16", "dim": "512"}, {"heads": "32", "dim": "512"}]}'
CASES3='{"status": "matched", "captures": [{"heads": "16", "dim": "512"}, {"heads": "24", "dim": "512"}, {"heads": "32", "dim": "512"}]}'
gained() {
	change rule mla.reduce.native_h24_d512 "$1" "$2" "$3" "$NO24" "$H24"; echo ,
	change rule mla.reduce.cases "$1" "$2" "$3" "$CASES2" "$CASES3"; echo ,
	change capability mla.decode.native_h24 "$1" "$2" "$3" false true
}
lost() {
	change rule mla.reduce.native_h24_d512 "$1" "$2" "$3" "$H24" "$NO24"; echo ,
	change rule mla.reduce.cases "$1" "$2" "$3" "$CASES3" "$CASES2"; echo ,
	change capability mla.decode.native_h24 "$1" "$2" "$3" true false
}

# expect_json_doc JSON: stdout is this JSON document (compared as values).
expect_json_doc() {
	printf '%s\n' "$1" >"$TMP/expected.json"
	"${PYTHON3:-python3}" -c '
import json, sys
got, want = (json.load(open(p)) for p in sys.argv[1:])
if got != want:
    print("got:  " + json.dumps(got, sort_keys=True), file=sys.stderr)
    print("want: " + json.dumps(want, sort_keys=True), file=sys.stderr)
    sys.exit(1)' "$TMP/out" "$TMP/expected.json" || fail "JSON differs"
}

case_ "whole history, JSON"
history main --format json
expect_rc 0
expect_json_doc "{\"range\": \"main\", \"commits\": 8, \"evaluated\": 4,
  \"initial\": {\"commit\": \"$c1\", \"date\": \"2024-03-02T10:00:00+02:00\",
    \"subject\": \"Add the reducer\",
    \"rules\": {\"mla.reduce.native_h24_d512\": $NO24, \"mla.reduce.cases\": $CASES2},
    \"capabilities\": {\"mla.decode.native_h24\": false}},
  \"changes\": [$(gained "$c2" 3 "Add the 24x512 case"), $(lost "$c5" 6 "Drop the 24x512 case"),
    $(gained "$c6" 7 "Restore the 24x512 case"), $(gained "$c8" 9 "Merge side")]}"
expect_no_err

case_ "A..B: the initial state is A's, a change in the first commit counts"
history "$c1..$c3" --format json
expect_rc 0
expect_json 'j["commits"], j["evaluated"], j["initial"]["commit"]' "(2, 2, '$c1')"
expect_json '[(c["commit"], c["id"]) for c in j["changes"]]' \
	"[('$c2', 'mla.reduce.native_h24_d512'), ('$c2', 'mla.reduce.cases'), ('$c2', 'mla.decode.native_h24')]"

case_ "commits that do not change the rules' files are not evaluated"
history "$c2..$c4" --format json
expect_rc 0
# c3 reuses c2's verdict (same files); c4 moves the file: evaluated, no change
expect_json 'j["commits"], j["evaluated"], j["changes"]' "(2, 2, [])"

case_ "a merge is compared with its first parent"
history "$c7..$c8"
expect_rc 0
expect_out_has "history of $c7..$c8: 2 commits"
expect_out_has "2 commits, 2 evaluated"
expect_out_has "$(short "$c6") 2024-03-07T10:00:00+02:00 Restore the 24x512 case"
expect_out_has "$(short "$c8") 2024-03-09T10:00:00+02:00 Merge side"

case_ "captures are a set: another order or a repeat is no change"
export COLUMNS=80
history "$(short "$c2")..$(short "$c10")"
expect_rc 0
expect_out "history of $(short "$c2")..$(short "$c10"): 2 commits
initial state at $(short "$c2") 2024-03-03T10:00:00+02:00 Add the 24x512 case
  rule        mla.reduce.native_h24_d512  matched
  rule        mla.reduce.cases            matched (3 cases)
              dim 512: heads 16 24 32
  capability  mla.decode.native_h24       supported
no changes
2 commits, 3 evaluated"
expect_no_err
# four times and then once: one case throughout; a case lost is reported
history "$c10..$c12" --format json
expect_rc 0
expect_json '[(c["commit"][:12], c["id"], c["after"]) for c in j["changes"]]' \
	"[('$(short "$c11")', 'mla.reduce.native_h24_d512', {'status': 'unmatched', 'captures': []}), ('$(short "$c11")', 'mla.reduce.cases', {'status': 'matched', 'captures': [{'heads': '16', 'dim': '512'}, {'heads': '32', 'dim': '512'}]}), ('$(short "$c11")', 'mla.decode.native_h24', False)]"
expect_json 'j["initial"]["rules"]["mla.reduce.cases"]["captures"]' \
	"[{'heads': '16', 'dim': '512'}, {'heads': '24', 'dim': '512'}, {'heads': '32', 'dim': '512'}]"
export COLUMNS=200

case_ "text at 60 columns, coloured"
export COLUMNS=60
history "$(short "$c10")..$(short "$c11")" --color
expect_rc 0
G=$(printf '\033[32m') R=$(printf '\033[31m') Y=$(printf '\033[33m') N=$(printf '\033[0m')
expect_out "history of $(short "$c10")..$(short "$c11"): 1 commit
initial state at $(short "$c10") 2024-03-11T10:00:00+02:00 List
    the 16x512 case four times
  rule        mla.reduce.native_h24_d512  ${G}matched$N
  rule        mla.reduce.cases            ${G}matched$N (3 cases)
              dim 512: heads 16 24 32
  capability  mla.decode.native_h24       ${G}supported$N
changes:
$(short "$c11") 2024-03-12T10:00:00+02:00 Drop the 24x512 case,
    keep the repeats
  rule        mla.reduce.native_h24_d512  ${G}matched$N ->
              ${Y}unmatched$N
  rule        mla.reduce.cases            ${G}matched$N -> ${G}matched$N
      ${R}-$N heads=24 dim=512
  capability  mla.decode.native_h24       ${G}supported$N ->
              ${R}unsupported$N
1 commit, 2 evaluated"
expect_no_err
history "$c10..$c11" --color=never
expect_out_has "  rule        mla.reduce.cases            matched -> matched"
history "$c10..$c11" --color=auto
expect_out_has "  rule        mla.reduce.cases            matched -> matched"
history "$c10..$c11" --color=sometimes
expect_rc 2
expect_err "aiter-probe history: --color takes auto, always or never, not 'sometimes'
Try 'aiter-probe history --help'."
export COLUMNS=200

# Ids as long as AITER's (the state column past the width): each state
# starts under the id, "(3 cases)" kept whole, no line past the width.
sed 's/mla\.reduce\./mla.reduce_v1.dispatch_table./; s/native_h24$/native_h24_d512_bf16/' \
	"$PACK" >"$TMP/long.yaml"
case_ "text at 60 columns, ids too long for the state beside them"
export COLUMNS=60
probe history --no-default-rules --rules "$TMP/long.yaml" --git "$REPO" \
	"$(short "$c10")..$(short "$c11")"
expect_rc 0
expect_out "history of $(short "$c10")..$(short "$c11"): 1 commit
initial state at $(short "$c10") 2024-03-11T10:00:00+02:00 List
    the 16x512 case four times
  rule        mla.reduce_v1.dispatch_table.native_h24_d512
              matched
  rule        mla.reduce_v1.dispatch_table.cases
              matched (3 cases)
              dim 512: heads 16 24 32
  capability  mla.decode.native_h24_d512_bf16
              supported
changes:
$(short "$c11") 2024-03-12T10:00:00+02:00 Drop the 24x512 case,
    keep the repeats
  rule        mla.reduce_v1.dispatch_table.native_h24_d512
              matched -> unmatched
  rule        mla.reduce_v1.dispatch_table.cases
              matched -> matched
      - heads=24 dim=512
  capability  mla.decode.native_h24_d512_bf16
              supported -> unsupported
1 commit, 2 evaluated"
expect_no_err
[ -z "$(over_width 60)" ] || fail "lines past 60 columns: $(over_width 60)"
export COLUMNS=200

case_ "A...B: both sides since the merge base"
history "$c7...$c6" --format json
expect_rc 0
expect_json 'j["commits"], j["initial"]["commit"]' "(2, '$c5')"
expect_json 'sorted(set(c["commit"] for c in j["changes"]))' "['$c6']"

case_ "a range with no commits"
history "$c8..$c8"
expect_rc 0
expect_out "history of $c8..$c8: 0 commits
no changes
0 commits, 0 evaluated"
history "$c8..$c8" --format json
expect_rc 0
expect_json_doc "{\"range\": \"$c8..$c8\", \"commits\": 0, \"evaluated\": 0, \"initial\": null, \"changes\": []}"

case_ "unknown revision"
history "$c1..nope"
expect_rc 2
expect_err "aiter-probe: unknown revision 'nope'"
expect_no_out
history "nope"
expect_rc 2
expect_err "aiter-probe: unknown revision 'nope'"

history "nope...main"
expect_rc 2
expect_err "aiter-probe: unknown revision 'nope'"

case_ "a revision that is not a commit"
history "main^{tree}"
expect_rc 2
expect_err "aiter-probe: 'main^{tree}' does not name a commit"

case_ "an empty side is HEAD"
history "$c7.." --format json
expect_rc 0
expect_json 'j["commits"], j["range"]' "(2, '$c7..')"

case_ "not a git repository"
mkdir "$TMP/plain"
probe history --no-default-rules --rules "$PACK" --git "$TMP/plain" main
expect_rc 2
expect_err "aiter-probe: not a git repository: $TMP/plain"
probe history --no-default-rules --rules "$PACK" --git "$TMP/none" main
expect_rc 2
expect_err "aiter-probe: $TMP/none: No such file or directory"
probe history --no-default-rules --rules "$PACK" --git= main
expect_rc 2
expect_err "aiter-probe history: --git needs a repository's folder
Try 'aiter-probe history --help'."

case_ "a shallow clone"
git clone -q --depth 2 "file://$REPO" "$TMP/shallow"
probe history --no-default-rules --rules "$PACK" --git "$TMP/shallow" main
expect_rc 2
expect_err "aiter-probe: $TMP/shallow is a shallow clone; history needs every commit (git fetch --unshallow)"

case_ "a bare repository"
git clone -q --bare "$REPO" "$TMP/bare.git"
probe history --no-default-rules --rules "$PACK" --git "$TMP/bare.git" main --format json
expect_rc 0
expect_json 'j["commits"], j["evaluated"], len(j["changes"])' "(8, 4, 12)"

case_ "usage errors"
probe history --no-default-rules --rules "$PACK" main
expect_rc 2
expect_err "aiter-probe history: --git AITER_GIT_DIR is needed
Try 'aiter-probe history --help'."
history
expect_rc 2
expect_err "aiter-probe history: REV_RANGE is needed
Try 'aiter-probe history --help'."
history main main
expect_rc 2
expect_err "aiter-probe history: unexpected argument 'main'
Try 'aiter-probe history --help'."
history main --format yaml
expect_rc 2
expect_err "aiter-probe history: --format takes text or json, not 'yaml'
Try 'aiter-probe history --help'."

case_ "no progress bar when stderr is not a terminal"
history main
expect_rc 0
expect_no_err

case_ "a progress bar on a terminal, cleared at the end"
if command -v script >/dev/null 2>&1 && [ -z "${AP_WRAPPER:-}" ]; then
	# script gives the tool a terminal; what it drew is in the typescript
	set +e
	script -qec "$AP history --no-default-rules --rules '$PACK' --git '$REPO' main >'$TMP/tty-out'" \
		"$TMP/typescript" >/dev/null 2>&1
	rc=$?
	set -e
	expect_rc 0
	grep -qF '########] 8/8 commits' "$TMP/typescript" || fail "no progress bar drawn"
	grep -qF "$(printf '\r\033[K')" "$TMP/typescript" || fail "progress bar not cleared"
	grep -q '#' "$TMP/tty-out" && fail "progress bar on stdout"
fi

case_ "a rule whose files did not change keeps its answer; one whose did, or whose absent file came, is run again"
# Two rules on two files: each commit changes one, and the first
# alternative of the second rule's file, absent at first, comes later.
REPO2="$TMP/two"
PACK2="$TMP/two.yaml"
cat >"$PACK2" <<'EOF2'
rules:
  - id: x.has_2
    file: x.cu
    literal: "X2"
  - id: y.has_2
    file: [a/y.cu, b/y.cu]
    literal: "Y2"
EOF2
git init -q -b main "$REPO2"
mkdir -p "$REPO2/a" "$REPO2/b"
echo X1 >"$REPO2/x.cu"
echo Y1 >"$REPO2/b/y.cu"
two_commit() {
	git -C "$REPO2" add -A
	saved=$REPO
	REPO=$REPO2
	commit "$1"
	REPO=$saved
}
# when ID: the commit's short id and date, as the report prints them.
when() { printf '%s %s' "$(short "$1")" "$(git -C "$REPO2" log -1 --format=%cI "$1")"; }
two_commit "One and one"
t1=$id
echo X2 >"$REPO2/x.cu"
two_commit "Two in x"
t2=$id
echo Y2 >"$REPO2/a/y.cu"
two_commit "Two in the first y"
t3=$id
echo Y2 >"$REPO2/b/y.cu"
two_commit "Two in the second y too"
echo X1 >"$REPO2/x.cu"
rm "$REPO2/a/y.cu"
echo Y1 >"$REPO2/b/y.cu"
two_commit "One and one again"
t5=$id
probe history --no-default-rules --rules "$PACK2" --git "$REPO2" main
expect_rc 0
expect_out "history of main: 5 commits
initial state at $(when "$t1") One and one
  rule        x.has_2  unmatched
  rule        y.has_2  unmatched
changes:
$(when "$t2") Two in x
  rule        x.has_2  unmatched -> matched
$(when "$t3") Two in the first y
  rule        y.has_2  unmatched -> matched
$(when "$t5") One and one again
  rule        x.has_2  matched -> unmatched
  rule        y.has_2  matched -> unmatched
5 commits, 4 evaluated"
expect_no_err

case_ "history --help"
probe history --help
expect_rc 0
expect_out_has "Usage: aiter-probe history --git AITER_GIT_DIR REV_RANGE [OPTION]..."

finish
