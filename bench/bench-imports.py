# SPDX-License-Identifier: MIT
"""Whole-process time of `aiter-probe scan` over trees of star imports that
once took time exponential in their size, each resolved once a (module,
name) now: TREE (copied) with a chain of 40 modules appended to its
aiter/__init__.py, each star-importing the next and the package back, the
last defining `chained` (every shipped pack and a python-export of
`chained`); and 12 modules star-importing one another (a pack of two
python-export rules, one name found, one absent). Prints the medians beside
that of the scan of TREE as it is.

usage: bench-imports.py AITER_PROBE DATADIR TREE [RUNS]"""
import os
import shutil
import sys
import tempfile

import interleave

probe, datadir, tree = sys.argv[1:4]
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 50
env = dict(os.environ, AITER_PROBE_DATADIR=datadir)
work = tempfile.mkdtemp(prefix="bench-imports.")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


try:
    chain = os.path.join(work, "chain")
    shutil.copytree(tree, chain)
    with open(os.path.join(chain, "aiter", "__init__.py"), "a") as f:
        f.write("\nfrom .chain0 import *\n")
    for i in range(40):
        write(os.path.join(chain, "aiter", f"chain{i}.py"),
              f"from .chain{i + 1} import *\nfrom aiter import *\n")
    write(os.path.join(chain, "aiter", "chain40.py"), "def chained(x):\n    pass\nfrom aiter import *\n")
    chained = os.path.join(work, "chained.yaml")
    write(chained, "rules:\n  - {id: chained, python-export: chained, from: aiter}\n")

    ring = os.path.join(work, "ring")
    write(os.path.join(ring, "aiter", "__init__.py"), "from .m0 import *\n")
    for i in range(12):
        write(os.path.join(ring, "aiter", f"m{i}.py"),
              "".join(f"from .m{k} import *\n" for k in range(12) if k != i)
              + ("def found(x):\n    pass\n" if i == 7 else ""))
    pack = os.path.join(work, "ring.yaml")
    write(pack, "rules:\n  - {id: found, python-export: found, from: aiter}\n"
                "  - {id: absent, python-export: absent, from: aiter}\n")

    scan = [probe, "scan", "--no-launch", "--format", "json", "--aiter-root"]
    commands = {
        "TREE as it is": scan + [tree],
        "TREE + chain of 40": scan + [chain, "--rules", chained],
        "ring of 12": scan + [ring, "--no-default-rules", "--rules", pack],
    }
    med = interleave.medians(commands, env, runs)
    print(f"tree: {tree}   runs: {runs} each, interleaved")
    for name, m in med.items():
        print(f"  {name:20s} median {m * 1e3:8.2f} ms")
finally:
    shutil.rmtree(work)
