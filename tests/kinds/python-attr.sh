#!/bin/sh
# SPDX-License-Identifier: MIT
# python-attr: hasattr(Cls, name) on the class importing the file binds,
# read from its body: any binding counts (a def, a property, a value, a
# nested class); a name the class body does not bind is no attribute, unless
# its bases may give it or a run decides; and what its loader refuses.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/py"
mkdir -p "$TREE/aiter/dist"
: >"$TREE/aiter/__init__.py"
: >"$TREE/aiter/dist/__init__.py"
cat >"$TREE/aiter/dist/base.py" <<'EOF'
class Base:
    pass
EOF
cat >"$TREE/aiter/dist/comm.py" <<'EOF'
import os

from .base import Base


class Allreduce:
    MAX_SIZE = 1 << 20

    def __init__(self, group):
        self._pool = None

    def custom_all_gather(self, inp, dim=0):
        return inp

    @property
    def disabled(self):
        return False

    @staticmethod
    def build():
        return True

    class Options:
        fast = True

    if os.environ.get("WIDE"):
        def wide(self):
            return 1


class Derived(Base):
    def own(self):
        return 0


def helper():
    return 0
EOF
pack pyattr <<'EOF'
rules:
  - id: attr.all
    file: aiter/dist/comm.py
    python-attr: [Allreduce.custom_all_gather, Allreduce.disabled, Allreduce.MAX_SIZE,
                  Allreduce.build, Allreduce.Options, Allreduce.Options.fast]
  - id: attr.one
    file: aiter/dist/comm.py
    python-attr: Allreduce.custom_all_gather
  - id: attr.instance_only
    file: aiter/dist/comm.py
    python-attr: Allreduce._pool
  - id: attr.some_absent
    file: aiter/dist/comm.py
    python-attr: [Allreduce.custom_all_gather, Allreduce.should_custom_ag, Allreduce.fused]
  - id: attr.maybe
    file: aiter/dist/comm.py
    python-attr: Allreduce.wide
  - id: attr.absent_beats_unknown
    file: aiter/dist/comm.py
    python-attr: [Allreduce.wide, Allreduce.fused]
  - id: attr.inherited
    file: aiter/dist/comm.py
    python-attr: Derived.gather
  - id: attr.own_of_derived
    file: aiter/dist/comm.py
    python-attr: Derived.own
  - id: attr.not_a_class
    file: aiter/dist/comm.py
    python-attr: helper.x
  - id: attr.no_class
    file: aiter/dist/comm.py
    python-attr: Nothing.x
  - id: attr.alternatives
    file: [aiter/dist/old.py, aiter/dist/comm.py]
    python-attr: Allreduce.build
  - id: attr.missing
    file: aiter/dist/old.py
    python-attr: Allreduce.build
  - id: attr.syntax
    file: aiter/dist/broken.py
    python-attr: Allreduce.build
EOF
printf 'class Allreduce:\n    def build(self:\n' >"$TREE/aiter/dist/broken.py"

case_ "python-attr: defs, a property, a value, a staticmethod, a nested class and its value"
scan "$TREE" pyattr
expect_rc 0
rule attr.all status matched
lines attr.all "[12, 16, 7, 20, 23, 24]"
caps attr.all attr "['Allreduce.custom_all_gather', 'Allreduce.disabled', 'Allreduce.MAX_SIZE', 'Allreduce.build', 'Allreduce.Options', 'Allreduce.Options.fast']"
caps attr.all holds "['a def', 'a value', 'a value', 'a def', 'a class', 'a value']"
rule attr.one status matched
rule attr.one file aiter/dist/comm.py

case_ "python-attr: what only __init__ assigns is no attribute of the class"
rule attr.instance_only status unmatched
rule attr.instance_only reason "aiter/dist/comm.py has no attribute Allreduce._pool"

case_ "python-attr: every name must be there; those absent are named"
rule attr.some_absent status unmatched
rule attr.some_absent reason "aiter/dist/comm.py has no attribute Allreduce.should_custom_ag; aiter/dist/comm.py has no attribute Allreduce.fused"
expect_json "j['rules']['attr.some_absent']['matches']" "[]"

case_ "python-attr: bound in a block that may not run, or inherited from bases: unknown"
rule attr.maybe status unknown
rule attr.maybe reason "what aiter/dist/comm.py binds to Allreduce.wide is not known without running it: Allreduce.wide (line 27) is defined in a block that may not run on import"
rule attr.absent_beats_unknown status unmatched
rule attr.inherited status unknown
rule attr.inherited reason "what aiter/dist/comm.py binds to Derived.gather is not known without running it: Derived (line 31) may inherit it from its bases"
rule attr.own_of_derived status matched
lines attr.own_of_derived "[32]"

case_ "python-attr: a def is no class whose attributes are read; a name not bound"
rule attr.not_a_class status unknown
rule attr.not_a_class reason "helper.x: helper is a def, not a class: hasattr on it is not read"
rule attr.no_class status unmatched
rule attr.no_class reason "aiter/dist/comm.py has no attribute Nothing.x"

case_ "python-attr: file alternatives, every file absent, a file that does not parse"
rule attr.alternatives status matched
rule attr.alternatives file aiter/dist/comm.py
rule attr.missing status missing
rule attr.syntax status error
rule attr.syntax reason "line 2: unbalanced '('"

case_ "python-attr: the loader refuses a name without its class, and a name that is none"
pack pyattr_bare <<'EOF'
rules:
  - id: attr.bare
    file: aiter/dist/comm.py
    python-attr: custom_all_gather
EOF
refused pyattr_bare "4:18: 'python-attr' must name an attribute of a class (Cls.name), not 'custom_all_gather'"
pack pyattr_bad <<'EOF'
rules:
  - id: attr.bad
    file: aiter/dist/comm.py
    python-attr: [Allreduce.ok, "Allreduce.not ok"]
EOF
refused pyattr_bad "4:18: 'python-attr' must name an attribute of a class (Cls.name), not 'Allreduce.not ok'"
pack pyattr_opt <<'EOF'
rules:
  - id: attr.opt
    file: aiter/dist/comm.py
    python-attr: Allreduce.build
    params: [x]
EOF
mkdir -p "$TMP/empty"
scan "$TMP/empty" pyattr_opt
expect_rc 2
expect_no_out

finish
