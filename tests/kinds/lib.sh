# SPDX-License-Identifier: MIT
# Shared by the rule kinds' tests (tests/kinds/*.sh), sourced after
# tests/lib.sh: a pack written into $TMP, scanned alone over a tree, and
# assertions on the rules and capabilities of the manifest. Packs and trees
# are written into $TMP by each script; none of them is AITER code.

# pack NAME: the pack $TMP/NAME.yaml, from stdin.
pack() { cat >"$TMP/$1.yaml"; }

# scan TREE PACK: scans TREE with that pack alone, JSON on stdout.
scan() {
	probe scan --aiter-root "$1" --no-launch --no-default-rules --rules "$TMP/$2.yaml" --format json
}

# scan_with_probes TREE PACK PROBES: the same with the pack $TMP/PROBES.yaml
# too, whose probes require PACK's rules.
scan_with_probes() {
	probe scan --aiter-root "$1" --no-launch --no-default-rules --rules "$TMP/$2.yaml" \
		--rules "$TMP/$3.yaml" --format json
}

# refused PACK WHERE: loading the pack fails with "PACK:WHERE" (line:column:
# message), exit 2, nothing on stdout.
refused() {
	mkdir -p "$TMP/empty"
	scan "$TMP/empty" "$1"
	expect_rc 2
	expect_err "aiter-probe: $TMP/$1.yaml:$2"
	expect_no_out
}

# rule ID KEY VALUE: the manifest's rules[ID][KEY] prints as VALUE.
rule() { expect_json "j['rules']['$1']['$2']" "$3"; }

# lines ID: the lines of the rule's matches; caps ID NAME: that capture of each.
lines() { expect_json "[m['line'] for m in j['rules']['$1']['matches']]" "$2"; }
caps() { expect_json "[m['captures'].get('$2') for m in j['rules']['$1']['matches']]" "$3"; }

cap() { expect_json "j['capabilities']['$1']['supported']" "$2"; }
cap_reason() { expect_json "j['capabilities']['$1']['reason']" "$2"; }
