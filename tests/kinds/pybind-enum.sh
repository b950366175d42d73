#!/bin/sh
# SPDX-License-Identifier: MIT
# pybind-enum: the members of a pybind11 enum chain in C++ (py:: and
# pybind11::, native_enum, chains in macros split by continuations, with
# comments, conditional arms between calls), not a .value( in a comment, a
# string or an #if 0 block; chains that do not parse expose nothing; what
# its loader refuses; a hostile file finishes under the suite's bounds.
. "$AP_SRCDIR/tests/lib.sh"
. "$AP_SRCDIR/tests/kinds/lib.sh"

TREE="$TMP/cxx"
mkdir -p "$TREE/csrc/include" "$TREE/csrc/other"
cat >"$TREE/csrc/include/bind.hpp" <<'EOF'
#pragma once
// pybind11::enum_<Pretend>(m, "Shade").value("Dark", Pretend::Dark);
#define SHAPES_BIND                                        \
    pybind11::enum_<Shape>(m, "Shape")                     \
        .value("Circle", Shape::Circle) /* round */        \
        .value( "Square" , geo :: Shape :: Square )        \
        .export_values();                                  \
    py::enum_<geo::Shade>(m, "Shade", py::arithmetic())    \
        .value("Light", geo::Shade::Light)                 \
        .def("__str__", [](geo::Shade s) {                 \
            return ".value(\"Dim\", geo::Shade::Dim)"; })  \
        .value("Mid", static_cast<geo::Shade>(1));
#if 0
py::enum_<Shape>(m, "Shape").value("Hexagon", Shape::Hexagon);
#endif
#define MODES_BIND py::native_enum<Mode>(m, "Mode", "enum.IntEnum").value("Fast", Mode::Fast)
void bind_more(py::module_ &m)
{
    MODES_BIND.finalize();
    py::enum_<Level>(m, "Level")
        .value("Low", Level::Low)
#ifdef WITH_HIGH
        .value("High", Level::High)
#endif
        .export_values();
    py::enum_<Torn>(m, "Torn")
        .value("A", Torn::A
        ;
    py::enum_<After>(m, "After").value("Z", After::Z);
    py::enum_<Open>(m, "Open").value("X", Open::X)
}
EOF
cat >"$TREE/csrc/other/bind.cpp" <<'EOF'
pybind11::enum_<Shape>(m, "Shape").value("Oval", Shape::Oval);
EOF
pack enums <<'EOF'
rules:
  - id: shape.all
    file: csrc/include/bind.hpp
    pybind-enum: Shape
    collect: all
  - id: shape.first
    file: csrc/include/bind.hpp
    pybind-enum: Shape
  - id: shade.all
    file: csrc/include/bind.hpp
    pybind-enum: Shade
    collect: all
  - id: shade.dim
    file: csrc/include/bind.hpp
    pybind-enum: Shade
    value: Dim
  - id: shape.hexagon
    file: csrc/include/bind.hpp
    pybind-enum: Shape
    value: Hexagon
  - id: shape.square
    file: csrc/include/bind.hpp
    pybind-enum: Shape
    value: Square
  - id: mode.all
    file: csrc/include/bind.hpp
    pybind-enum: Mode
    collect: all
  - id: level.all
    file: csrc/include/bind.hpp
    pybind-enum: Level
    collect: all
  - id: torn
    file: csrc/include/bind.hpp
    pybind-enum: Torn
  - id: after
    file: csrc/include/bind.hpp
    pybind-enum: After
  - id: open
    file: csrc/include/bind.hpp
    pybind-enum: Open
  - id: pretend
    file: csrc/include/bind.hpp
    pybind-enum: Pretend
  - id: alternatives
    file: [csrc/include/absent.hpp, csrc/other/bind.cpp, csrc/include/bind.hpp]
    pybind-enum: Shape
    collect: all
  - id: absent
    file: [csrc/include/absent.hpp, csrc/include/gone.hpp]
    pybind-enum: Shape
probes:
  - id: has_square
    requires: {capture: shape.all, name: value, eq: Square}
  - id: has_triangle
    requires: {capture: shape.all, name: value, eq: Triangle}
EOF

case_ "pybind-enum: every member of a chain, with captures enum, value and member"
scan "$TREE" enums
expect_rc 0
rule shape.all status matched
lines shape.all "[5, 6]"
caps shape.all enum "['Shape', 'Shape']"
caps shape.all value "['Circle', 'Square']"
caps shape.all member "['Shape::Circle', 'geo::Shape::Square']"

case_ "pybind-enum: collect: first is the first member"
lines shape.first "[5]"
caps shape.first value "['Circle']"

case_ "pybind-enum: value: matches only when that member is exposed"
rule shape.square status matched
lines shape.square "[6]"
caps shape.square member "['geo::Shape::Square']"
rule shape.hexagon status unmatched
rule shape.hexagon reason "enum 'Shape' has no value 'Hexagon' (it has Circle, Square)"

case_ "pybind-enum: two chains for two enums, py:: and pybind11::, extra arguments and calls"
lines shade.all "[9, 12]"
caps shade.all value "['Light', 'Mid']"
caps shade.all member "['geo::Shade::Light', 'static_cast<geo::Shade>(1)']"

case_ "pybind-enum: a member in a comment, a string or an #if 0 block does not count"
rule shade.dim status unmatched
rule shade.dim reason "enum 'Shade' has no value 'Dim' (it has Light, Mid)"
rule pretend status unmatched
rule pretend reason "no pybind11 enum is named 'Pretend'"

case_ "pybind-enum: native_enum; a chain ends with its #define"
lines mode.all "[16]"
caps mode.all member "['Mode::Fast']"

case_ "pybind-enum: the calls of every arm of a conditional between calls count"
caps level.all value "['Low', 'High']"
lines level.all "[21, 23]"

case_ "pybind-enum: a chain that does not parse exposes nothing; the next one counts"
rule torn status unmatched
rule torn reason "the chain of enum 'Torn' at line 26 does not parse: its brackets do not balance"
rule after status matched
lines after "[29]"
rule open status unmatched
rule open reason "the chain of enum 'Open' at line 30 does not parse: no ';' ends it"

case_ "pybind-enum: the first file alternative that exists is read; none: missing"
rule alternatives file csrc/other/bind.cpp
lines alternatives "[1]"
caps alternatives value "['Oval']"
rule absent status missing

case_ "pybind-enum: captures compared in probes"
cap has_square True
cap has_triangle False

# A hostile file: 100,000 calls opened and never closed, then 100,000 lines
# of members with no ';', then one chain of 100,000 members on one line.
HOSTILE="$TMP/hostile"
mkdir -p "$HOSTILE/csrc"
"${PYTHON3:-python3}" - "$HOSTILE/csrc" <<'EOF'
import sys
d = sys.argv[1]
with open(d + "/open.hpp", "w") as f:
    f.write('py::enum_<E>(m, "E")' + '.value(' * 100000 + '\n')
with open(d + "/lines.hpp", "w") as f:
    f.write('py::enum_<E>(m, "E")\n' + '    .value("v", E::v)\n' * 100000)
with open(d + "/wide.hpp", "w") as f:
    f.write('py::enum_<E>(m, "E")' + '.value("v", E::v)' * 100000 + ';\n')
EOF
pack hostile <<'EOF'
rules:
  - id: open
    file: csrc/open.hpp
    pybind-enum: E
    collect: all
  - id: lines
    file: csrc/lines.hpp
    pybind-enum: E
    collect: all
  - id: wide
    file: csrc/wide.hpp
    pybind-enum: E
    value: v
EOF

case_ "pybind-enum: a hostile file finishes within the suite's time and memory bounds"
if [ -n "${AP_WRAPPER:-}" ]; then
	timeout "$AP_TIME" $AP_WRAPPER "$AP" scan --aiter-root "$HOSTILE" --no-launch \
		--no-default-rules --rules "$TMP/hostile.yaml" --format json
else
	(ulimit -v "$AP_VMEM"; exec timeout "$AP_TIME" "$AP" scan --aiter-root "$HOSTILE" --no-launch \
		--no-default-rules --rules "$TMP/hostile.yaml" --format json)
fi >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 0
rule open status unmatched
rule open reason "the chain of enum 'E' at line 1 does not parse: its brackets nest too deeply"
rule lines reason "the chain of enum 'E' at line 1 does not parse: no ';' ends it"
rule wide status matched
lines wide "[1]"

pack not_string <<'EOF'
rules:
  - id: r
    file: a.hpp
    pybind-enum: [Shape]
EOF
pack empty <<'EOF'
rules:
  - id: r
    file: a.hpp
    pybind-enum: ""
EOF
pack dotted <<'EOF'
rules:
  - id: r
    file: a.hpp
    pybind-enum: aiter.Shape
EOF
pack digit <<'EOF'
rules:
  - id: r
    file: a.hpp
    pybind-enum: 2Shape
EOF
pack value_map <<'EOF'
rules:
  - id: r
    file: a.hpp
    pybind-enum: Shape
    value: {name: Circle}
EOF
pack value_empty <<'EOF'
rules:
  - id: r
    file: a.hpp
    pybind-enum: Shape
    value: ''
EOF
pack value_call <<'EOF'
rules:
  - id: r
    file: a.hpp
    pybind-enum: Shape
    value: Shape::Circle
EOF
pack unknown_option <<'EOF'
rules:
  - id: r
    file: a.hpp
    pybind-enum: Shape
    values: Circle
EOF
pack no_file <<'EOF'
rules:
  - id: r
    pybind-enum: Shape
EOF
pack language <<'EOF'
rules:
  - id: r
    file: a.hpp
    language: c
    pybind-enum: Shape
EOF
pack normalize <<'EOF'
rules:
  - id: r
    file: a.hpp
    pybind-enum: Shape
    normalize: strip-whitespace
EOF
pack collect_bad <<'EOF'
rules:
  - id: r
    file: a.hpp
    pybind-enum: Shape
    collect: every
EOF

case_ "pybind-enum: refused: a name that is not a string"
refused not_string "4:18: 'pybind-enum' must be a string, not a sequence"
case_ "pybind-enum: refused: an empty name"
refused empty "4:18: 'pybind-enum' must not be empty"
case_ "pybind-enum: refused: a name that is no Python name"
refused dotted "4:18: 'pybind-enum' must be a Python name (ASCII letters, digits and '_', not starting with a digit), not 'aiter.Shape'"
refused digit "4:18: 'pybind-enum' must be a Python name (ASCII letters, digits and '_', not starting with a digit), not '2Shape'"
case_ "pybind-enum: refused: a 'value' that is not a string, empty or no Python name"
refused value_map "5:12: 'value' must be a string, not a mapping"
refused value_empty "5:12: 'value' must not be empty"
refused value_call "5:12: 'value' must be a Python name (ASCII letters, digits and '_', not starting with a digit), not 'Shape::Circle'"
case_ "pybind-enum: refused: an unknown option"
refused unknown_option "5:5: unknown key 'values' in rule (allowed: id, description, file, language, normalize, collect, pybind-enum, value)"
case_ "pybind-enum: refused: no 'file'"
refused no_file "2:5: missing required key 'file' in rule"
case_ "pybind-enum: refused: 'language' and 'normalize'"
refused language "4:5: 'language' does not apply to a 'pybind-enum' rule: it does not match text"
refused normalize "5:5: 'normalize' does not apply to a 'pybind-enum' rule: it does not match text"
case_ "pybind-enum: refused: a 'collect' that is neither first nor all"
refused collect_bad "5:14: 'collect' must be one of first, all, not 'every'"

finish
