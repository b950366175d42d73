#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the fuzz targets' seed corpora from the repository's own files:
#   seeds.sh SRCDIR OUTDIR  ->  OUTDIR/rules, OUTDIR/text, OUTDIR/manifest,
#                               OUTDIR/python, OUTDIR/python-tree, OUTDIR/csv
# Text seeds are fuzz-text's layout: a mode byte, the pattern's length, the
# pattern (every literal, token and regex of the shipped packs), a fixture.
# Tree seeds are fuzz/fuzz-tree.h's: each file of a fixture tree (or the
# sample) after a line "#== PATH".
set -eu
src=$1
out=$2
rm -rf "$out"
mkdir -p "$out/rules" "$out/text" "$out/manifest" "$out/python" "$out/python-tree" "$out/csv"

n=0
for f in "$src"/rules/*.yaml "$src"/probes/*.yaml; do
	n=$((n + 1))
	cp "$f" "$out/rules/pack-$n.yaml"
done

n=0
for f in "$src"/tests/golden/*.json "$src"/tests/manifests/*.json; do
	n=$((n + 1))
	cp "$f" "$out/manifest/manifest-$n.json"
done

# One "kind pattern" line per matcher of the shipped packs (quoted on one
# line there), with the mode byte's kind bits: literal 0, token 1, regex 2.
patterns=$out/patterns
sed -n "s/^ *\\(literal\\|token\\|regex\\): *['\"]\\(.*\\)['\"] *\$/\\1 \\2/p" \
	"$src"/rules/*.yaml "$src"/probes/*.yaml >"$patterns"
n=0
for f in $(find "$src/tests/fixtures" "$src/sample" -type f \( -name '*.cu' -o -name '*.cuh' \) |
           LC_ALL=C sort); do
	while read -r kind pattern; do
		case $kind in
		literal) k=0 ;;
		token) k=1 ;;
		*) k=2 ;;
		esac
		# language C (2), keep; and for literals strip-whitespace too
		for ws in 0 4; do
			test "$ws" = 0 || test "$k" = 0 || continue
			n=$((n + 1))
			{
				printf "\\$(printf %03o $((2 | ws | k * 8)))"
				printf "\\$(printf %03o ${#pattern})"
				printf '%s' "$pattern"
				cat "$f"
			} >"$out/text/text-$n"
		done
	done <"$patterns"
done
rm -f "$patterns"

# Python modules and tables of the fixture trees and the sample.
n=0
for f in $(find "$src/tests/fixtures" "$src/sample" -type f \( -name '*.py' -o -name '*.csv' \) |
	LC_ALL=C sort); do
	n=$((n + 1))
	cp "$f" "$out/python/seed-$n"
done

# Each tree whole, and each of its tables alone (at the first path).
n=0
for tree in "$src"/tests/fixtures/*/ "$src"/sample/*/; do
	n=$((n + 1))
	for kind in python-tree:py csv:csv; do
		target=${kind%%:*}
		files=$(cd "$tree" && find . -type f -name "*.${kind#*:}" | sed 's|^\./||' | LC_ALL=C sort)
		test -n "$files" || continue
		for f in $files; do
			printf '#== %s\n' "$f"
			cat "$tree/$f"
		done >"$out/$target/tree-$n"
	done
done
n=0
for f in $(find "$src/tests/fixtures" "$src/sample" -type f -name '*.csv' | LC_ALL=C sort); do
	n=$((n + 1))
	cp "$f" "$out/csv/table-$n"
done
