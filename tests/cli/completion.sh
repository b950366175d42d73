#!/bin/sh
# SPDX-License-Identifier: MIT
# The shell completions: bash's, sourced in bash, completes a command, an
# option of a command (its own and, for check, scan's), an option's values
# and a capability id from its prefix (in a --require list too), as the
# tool's --help and 'list --format ids' give them; zsh's the same, where
# zsh is installed, under stand-ins for the completion system's builtins.
. "$AP_SRCDIR/tests/lib.sh"
BASH_COMPLETION="$AP_SRCDIR/completions/bash/aiter-probe"
ZSH_COMPLETION="$AP_SRCDIR/completions/zsh/_aiter-probe"

# complete WORD...: the words of the line, the last one being completed;
# prints COMPREPLY one a line in $TMP/out.
complete_() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_aiter_probe; printf "%s\n" "${COMPREPLY[@]}"' \
		complete "$BASH_COMPLETION" "$AP" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

if ! command -v bash >/dev/null 2>&1; then
	echo "SKIP: no bash" >&2
	finish
fi

case_ "bash: a command"
complete_ ex
expect_rc 0
expect_out "explain"

case_ "bash: every command"
complete_ ""
for cmd in scan check history diff verify list explain merge help --help --version; do
	grep -qx -- "$cmd" "$TMP/out" || fail "no $cmd"
done

case_ "bash: help's operand is a command"
complete_ help me
expect_out "merge"

case_ "bash: an option of the command"
complete_ scan --no-
expect_out "--no-default-rules
--no-launch"
complete_ diff --fail
expect_out "--fail-on"

case_ "bash: check takes scan's options but those that write"
complete_ check --aiter
expect_out "--aiter-root"
complete_ check --s
expect_out "--signatures"

case_ "bash: an option's values"
complete_ diff --format ""
expect_out "text
json
sarif"
complete_ list --color = al
expect_out "always"
complete_ list --color=al
expect_out "--color=always"

case_ "bash: a capability id from its prefix"
complete_ check --require mla.decode.native_h
expect_out "mla.decode.native_h24"
complete_ check --require "moe.x,mla.decode.native_h"
expect_out "moe.x,mla.decode.native_h24"
complete_ explain mla.decode.native_h
expect_out "mla.decode.native_h24"

case_ "bash: the ids of the packs on the line"
cat >"$TMP/pack.yaml" <<'YAML'
rules:
  - id: only.rule
    file: aiter/a.py
    python-def: f
    params: [x]
probes:
  - id: only.here
    requires: only.rule
YAML
complete_ check --no-default-rules --rules "$TMP/pack.yaml" --require only
expect_out "only.here"

if ! command -v zsh >/dev/null 2>&1; then
	echo "SKIP: zsh's completion: no zsh" >&2
	finish
fi

# zcomplete WORD...: as complete_, for zsh's, under stand-ins for the
# completion system's builtins that print what would be offered (matching
# PREFIX, after what compset moved to IPREFIX).
zcomplete() {
	zsh -fc 'compadd() {
			while (( $# )) && [[ $1 != -- ]]; do shift; done; shift
			local w; for w; do [[ $w == "$PREFIX"* ]] && print -r -- "$IPREFIX$w"; done
		}
		_describe() { local -a a; a=(${(P)4}); compadd -- ${a%%:*}; }
		compset() {
			case $2 in
			("*,") [[ $PREFIX != *,* ]] || { IPREFIX=${PREFIX%,*},; PREFIX=${PREFIX##*,}; } ;;
			("*=") IPREFIX=${PREFIX%%=*}=; PREFIX=${PREFIX#*=} ;;
			esac
		}
		words=("$@"); CURRENT=$#; PREFIX=$words[-1]; IPREFIX=; . "$0"' \
		"$ZSH_COMPLETION" "$AP" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

case_ "zsh: the completion parses"
zsh -n "$ZSH_COMPLETION" 2>"$TMP/err" || fail "$(cat "$TMP/err")"

case_ "zsh: a command, an option, a value, a capability id"
zcomplete ex
expect_out "explain"
zcomplete scan --no-
expect_out "--no-default-rules
--no-launch"
zcomplete check --aiter
expect_out "--aiter-root"
zcomplete list --color=al
expect_out "--color=always"
zcomplete check --require "moe.x,mla.decode.native_h"
expect_out "moe.x,mla.decode.native_h24"
zcomplete explain mla.decode.native_h
expect_out "mla.decode.native_h24"
zcomplete check --no-default-rules --rules "$TMP/pack.yaml" --require only
expect_out "only.here"

finish
