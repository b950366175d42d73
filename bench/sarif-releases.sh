#!/bin/sh
# SPDX-License-Identifier: MIT
# sarif-releases.sh GIT_DIR [OUTDIR]: the SARIF log `aiter-probe diff` writes
# for every consecutive pair of AITER releases (the v* tags of GIT_DIR that
# are releases, vX.Y.Z and vX.Y.Z.postN, in version order; rc, dev and other
# tags left out), upgrade and downgrade, validated as GitHub code scanning
# would take it:
#   - Microsoft's SARIF multitool (npm: @microsoft/sarif-multitool) with its
#     GitHub rules and the SARIF ones (--rule-kind "Gh;Ghas;Sarif"): no
#     error, no warning;
#   - tests/cli/sarif-check.py (the structure, a location on
#     every result);
#   - every result's locations in NEW: a file NEW's tree has, a line it has.
# Each tag is exported with git archive and scanned with --no-launch.
# Prints one line per pair and a total; exit status 0 when every log
# passes, 1 when one does not, 2 on an error, 77 when the multitool is not
# installed.
#
# AITER_PROBE: the binary (default: B/aiter-probe, else aiter-probe on PATH);
# AITER_PROBE_DATADIR: the packs (default: this source tree);
# SARIF_MULTITOOL: the multitool's executable (default: the one
# `npm install @microsoft/sarif-multitool` put under ./node_modules, found
# through node). Not part of `make check`: it needs AITER's history and the
# multitool (about 100 MB).
set -u

die() {
	echo "sarif-releases.sh: $*" >&2
	exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	die "usage: sarif-releases.sh GIT_DIR [OUTDIR]"
fi
git_dir=$1
src=$(cd "$(dirname "$0")/.." && pwd -P)
probe=${AITER_PROBE:-}
if [ -z "$probe" ]; then
	if [ -x "$src/B/aiter-probe" ]; then probe=$src/B/aiter-probe; else probe=aiter-probe; fi
fi
export AITER_PROBE_DATADIR="${AITER_PROBE_DATADIR:-$src}"
py=${PYTHON3:-python3}
tool=${SARIF_MULTITOOL:-}
if [ -z "$tool" ]; then
	# The npm package's bin.js runs the binary through a shell, which would
	# split "Gh;Ghas;Sarif" at the semicolons: run the binary itself.
	tool=$(node -p 'require("@microsoft/sarif-multitool")' 2>/dev/null) || tool=
fi
if [ -z "$tool" ] || [ ! -x "$tool" ]; then
	echo "sarif-releases.sh: no SARIF multitool (npm install @microsoft/sarif-multitool, or set SARIF_MULTITOOL)" >&2
	exit 77
fi
git --git-dir="$git_dir" rev-parse --git-dir >/dev/null 2>&1 || die "not a git directory: $git_dir"
out=${2:-$(mktemp -d)}
mkdir -p "$out" || die "cannot make $out"
out=$(cd "$out" && pwd -P)

tags=$(git --git-dir="$git_dir" tag -l 'v*' | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+(\.post[0-9]+)?$' |
	sort -V)
[ -n "$tags" ] || die "no release tags in $git_dir"
for tag in $tags; do
	mkdir -p "$out/$tag" || die "cannot make $out/$tag"
	git --git-dir="$git_dir" archive "$tag" | tar -x -C "$out/$tag" || die "cannot export $tag"
	"$probe" scan --aiter-root "$out/$tag" --no-launch -o "$out/$tag.json" ||
		die "cannot scan $tag"
done

# check_log LOG NEW_TREE: the multitool's findings and our own checks, on
# one line; 0 when there are none.
check_log() {
	rm -f "$1.validation"
	"$tool" validate --rule-kind "Gh;Ghas;Sarif" -o "$1.validation" "$1" >"$1.out" 2>&1 ||
		{ echo "multitool failed: $(tail -n 1 "$1.out")"; return 1; }
	"$py" "$src/tests/cli/sarif-check.py" "$1" >"$1.check" ||
		{ cat "$1.check"; return 1; }
	"$py" - "$1" "$1.validation" <<'PYEOF'
import json, os, sys
from urllib.parse import unquote
log = json.load(open(sys.argv[1]))
found = json.load(open(sys.argv[2]))["runs"][0]["results"]
bad = ["%s %s" % (r["ruleId"], r.get("level", "warning")) for r in found
       if r.get("level", "warning") in ("error", "warning")]
run = log["runs"][0]
bases = run.get("originalUriBaseIds", {})
for i, r in enumerate(run["results"]):
    for loc in r["locations"]:
        phys = loc["physicalLocation"]
        art = phys["artifactLocation"]
        if art["uriBaseId"] not in ("%SRCROOT%", "AITERMETA"):
            bad.append("results[%d]: located outside NEW (%s)" % (i, art["uriBaseId"]))
            continue
        path = unquote(bases[art["uriBaseId"]]["uri"][len("file://"):] + art["uri"])
        try:
            with open(path, "rb") as f:
                lines = f.read().count(b"\n") + 1
        except OSError:
            bad.append("results[%d]: NEW has no %s" % (i, art["uri"]))
            continue
        if phys["region"]["startLine"] > lines:
            bad.append("results[%d]: %s has no line %d" % (i, art["uri"], phys["region"]["startLine"]))
print("%d results, %s" % (len(run["results"]), "; ".join(sorted(set(bad))) or "ok"))
sys.exit(1 if bad else 0)
PYEOF
}

pairs=0
failed=0
prev=
for tag in $tags; do
	if [ -n "$prev" ]; then
		for pair in "$prev $tag" "$tag $prev"; do
			# shellcheck disable=SC2086 # two words on purpose
			set -- $pair
			log="$out/$1..$2.sarif"
			"$probe" diff "$out/$1.json" "$out/$2.json" --format sarif >"$log" ||
				die "diff $1 $2 failed"
			pairs=$((pairs + 1))
			if line=$(check_log "$log"); then
				echo "$1 -> $2: $line"
			else
				echo "$1 -> $2: FAIL $line"
				failed=$((failed + 1))
			fi
		done
	fi
	prev=$tag
done
echo "$pairs logs, $failed failed (outputs in $out)"
[ "$failed" -eq 0 ]
