#!/bin/sh
# SPDX-License-Identifier: MIT
# The docs as a reader meets them: README.md stays a front page (under 400
# lines), every relative link in README.md and doc/*.md leads to a file that
# exists (and a heading there, for a #fragment), and the C API's page names
# every function include/aiter-probe.h declares.
. "$AP_SRCDIR/tests/lib.sh"

case_ "README.md is under 400 lines"
n=$(wc -l <"$AP_SRCDIR/README.md")
[ "$n" -lt 400 ] || fail "README.md has $n lines; the reference goes under doc/"

case_ "relative links in README.md and doc/*.md resolve"
"${PYTHON3:-python3}" - "$AP_SRCDIR" >"$TMP/links" <<'PY' || fail "$(cat "$TMP/links")"
import os, re, sys
top = sys.argv[1]

def slug(heading):
    # GitHub's anchor for a heading: lower case, punctuation dropped.
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")

def anchors(path):
    text = re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(), flags=re.S)
    return {slug(m) for m in re.findall(r"^#+ +(.*)$", text, flags=re.M)}

bad = []
files = ["README.md"] + ["doc/" + f for f in sorted(os.listdir(os.path.join(top, "doc"))) if f.endswith(".md")]
for name in files:
    path = os.path.join(top, name)
    text = re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            bad.append("%s: link to %s: no such file" % (name, target))
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            bad.append("%s: link to %s: no such heading there" % (name, target))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

case_ "libaiter-probe(3) names every function of include/aiter-probe.h"
page="$AP_BUILDDIR/doc/libaiter-probe.3"
[ -s "$page" ] || fail "no $page"
# A declaration: a line that does not start with a space, a tab or a comment.
grep -v '^[[:space:]/*]' "$AP_SRCDIR/include/aiter-probe.h" |
	grep -oE '\baiter_probe_[a-z0-9_]+\(' | tr -d '(' | sort -u >"$TMP/functions"
[ -s "$TMP/functions" ] || fail "no function found in include/aiter-probe.h"
sed 's/\\f[BIRP]//g; s/\\e/\\/g' "$page" >"$TMP/page"
while read -r f; do
	grep -qw -- "$f" "$TMP/page" ||
		fail "$f (include/aiter-probe.h) is not in libaiter-probe(3): name it in doc/capi.md"
done <"$TMP/functions"

finish
