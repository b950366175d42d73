# SPDX-License-Identifier: MIT
"""The source tree keeps the architecture its folders tell (doc/development.md):
which folder may include which, no cycle in the include graph
between headers nor in the call graph between files (read from the built
objects with nm), no command calling another's functions, no GPU header in
the engine, no YAML in the launcher, and no file under src/ over 1,500 lines.

Usage: layout.py SRCDIR BUILDDIR. Prints each breach and exits 1."""
import os
import re
import subprocess
import sys

SRC, BUILD = sys.argv[1], sys.argv[2]
MAX_LINES = 1500
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# What each folder may include, by the prefix of the included path (as
# written: relative to src/, or a kernels/ header by name).
ALLOWED = [
    ("src/core/", ("core/",)),
    ("src/engine/", ("core/", "engine/")),
    ("src/capi/", ("core/", "engine/", "capi/")),
    ("src/cli/", ("core/", "engine/", "cli/")),
    ("kernels/", ("core/",)),
]
GPU_HEADERS = ("hip/", "hip_runtime", "cuda", "hip-cuda.h", "mma.h", "mla-decode.h")
PUBLIC = "aiter-probe.h"

breaches = []


def sources():
    for top in ("src", "kernels", "include"):
        for d, _, files in os.walk(os.path.join(SRC, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h", ".hip")):
                    p = os.path.join(d, f)
                    yield os.path.relpath(p, SRC), p


def resolve(rel, inc):
    """The repository path an include names, or None (config.h, system)."""
    for cand in (os.path.join(os.path.dirname(rel), inc), os.path.join("src", inc),
                 os.path.join("kernels", inc), os.path.join("include", inc)):
        if os.path.isfile(os.path.join(SRC, cand)):
            return os.path.normpath(cand)
    return None


includes = {}
for rel, path in sources():
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if rel.startswith("src/") and text.count("\n") > MAX_LINES:
        breaches.append(f"{rel}: {text.count(chr(10))} lines, over {MAX_LINES}")
    incs = INCLUDE.findall(text)
    includes[rel] = [r for r in (resolve(rel, i) for i in incs) if r]
    for inc in incs:
        if inc == "config.h" or inc.startswith("../"):
            continue
        for folder, allowed in ALLOWED:
            if not rel.startswith(folder):
                continue
            local = resolve(rel, inc)
            if inc == PUBLIC:
                ok = folder in ("src/capi/",)
            elif folder == "kernels/":
                ok = inc.startswith(allowed) or (local or "").startswith("kernels/")
            else:
                ok = inc.startswith(allowed)
            if not ok:
                breaches.append(f"{rel}: includes \"{inc}\", which {folder} may not")
        if rel.startswith("src/") and inc.startswith(GPU_HEADERS):
            breaches.append(f"{rel}: includes the GPU header \"{inc}\"")
    if rel.startswith("kernels/") and re.search(r"<yaml\.h>|engine/rules\.h", text):
        breaches.append(f"{rel}: the launcher reads no YAML")


def cycles(graph):
    """The strongly connected components of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


for comp in cycles({k: set(v) for k, v in includes.items()}):
    breaches.append("include cycle: " + ", ".join(comp))
# A file and its header are one unit: x.c including y.h while y.c includes
# x.h is a circle between the two units.
units = {}
for rel, incs in includes.items():
    units.setdefault(os.path.splitext(rel)[0], set()).update(
        os.path.splitext(i)[0] for i in incs if os.path.splitext(i)[0] != os.path.splitext(rel)[0])
for comp in cycles(units):
    breaches.append("include cycle between units: " + ", ".join(comp))

# The call graph: each object's undefined symbols, owned by the file that
# defines them. Object names are "<target>-<source>.o" (automake), the
# target canonical (no '-').
defined, wanted = {}, {}
for d, _, files in os.walk(BUILD):
    for f in files:
        if not f.endswith(".o") or "-" not in f:
            continue
        path = os.path.join(d, f)
        folder = os.path.relpath(d, BUILD).replace("/.libs", "").replace(".libs", ".")
        source = os.path.normpath(os.path.join(folder, f.split("-", 1)[1][:-2] + ".c"))
        # An object whose source is gone is a leftover of an earlier build.
        if not source.startswith(("src/", "kernels/")) or \
                not os.path.isfile(os.path.join(SRC, source)):
            continue
        out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRG":
                defined.setdefault(source, set()).add(parts[2])
            elif len(parts) == 2 and parts[0] == "U":
                wanted.setdefault(source, set()).add(parts[1])
if not defined:
    breaches.append(f"no objects under {BUILD}: build first")
owner = {}
for source, symbols in defined.items():
    for s in symbols:
        owner.setdefault(s, source)
calls = {}
for source, symbols in wanted.items():
    for s in symbols:
        o = owner.get(s)
        if o is not None and o != source:
            calls.setdefault(source, set()).add(o)
for comp in cycles(calls):
    breaches.append("call cycle: " + ", ".join(comp))
for source, callees in sorted(calls.items()):
    if os.path.basename(source).startswith("cmd-"):
        for o in sorted(callees):
            if os.path.basename(o).startswith("cmd-"):
                breaches.append(f"{source}: calls {o} (commands call the engine, not each "
                                "other)")

for b in breaches:
    print(b)
sys.exit(1 if breaches else 0)
