# SPDX-License-Identifier: MIT
"""From `import aiter_probe` to the first answer, with no manifest anywhere:
each run a fresh interpreter that imports aiter_probe.backend, calls
for_this_process() (find the aiter it would import, scan it in process
through the engine, every shipped pack, launches off) and asks
native_h24(), timing itself from before the import. Side by side, in the
same kind of process: vLLM's two MLA probes (bench/vllm-probe.py's, read
the sources and strip whitespace; its module loaded first, as vLLM's is
imported before it asks), and both again with the standard
library modules the package uses already imported, as in a server that
has imported torch; and the import of those modules alone (how fast this
machine is at it now). Prints the medians of RUNS runs, interleaved.

usage: bench-in-process.py [--python PY] [--library SO --datadir DIR] TREE [RUNS]
  PY: an interpreter with aiter_probe installed (a venv's); without it, this
      one with the source tree's python/ on its path, which needs --library
      (the build's .libs/libaiter-probe.so) and --datadir (the source tree)."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1].split("\n")[0])
ap.add_argument("--python")
ap.add_argument("--library")
ap.add_argument("--datadir")
ap.add_argument("tree")
ap.add_argument("runs", nargs="?", type=int, default=100)
args = ap.parse_args()
if args.python is None and (args.library is None or args.datadir is None):
    ap.error("without --python, --library and --datadir are needed")
tree = os.path.abspath(args.tree)

# The standard library modules the package imports on the way to an answer,
# which a server has imported long before it asks (torch imports them), and
# logging, which a server has too.
USED = "import ctypes, errno, hashlib, importlib.util, json, math, re, stat, threading\n"
STDLIB = USED + "import logging\n"
BASELINE = """import time
t = time.perf_counter()
%sprint("%%.3f" %% ((time.perf_counter() - t) * 1e3))
""" % USED
ADAPTER = """import time
t = time.perf_counter()
from aiter_probe.backend import for_this_process
b = for_this_process()
answer = b.mla_decode_native_24_heads()
ms = (time.perf_counter() - t) * 1e3
assert b.manifest is not None, b.reason
print("%.3f" % ms)
"""
# vLLM's probes are in a module the server has imported: only the calls count.
VLLM = """import runpy, time
native_h24 = runpy.run_path(%r)["native_h24"]
t = time.perf_counter()
answer = native_h24(%r)
print("%%.3f" %% ((time.perf_counter() - t) * 1e3))
""" % (os.path.join(here, "vllm-probe.py"), tree)
commands = {
    "aiter_probe, fresh interpreter": ADAPTER,
    "aiter_probe, stdlib imported": STDLIB + ADAPTER,
    "vLLM probes, fresh interpreter": VLLM,
    "vLLM probes, stdlib imported": STDLIB + VLLM,
    "its stdlib modules alone, fresh": BASELINE,
}

with tempfile.TemporaryDirectory(prefix="ap-bench-") as empty:
    # The modules' bytecode cached as an installed package's is (the source
    # tree may be read-only): the warm-up run writes it.
    env = dict(os.environ, AITER_PROBE_MANIFEST_DIR=empty, PYTHONPATH=tree,
               PYTHONPYCACHEPREFIX=os.path.join(empty, "pycache"))
    for name in ("AITER_PROBE_MANIFEST", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    python = args.python or sys.executable
    if args.python is None:
        env.update(PYTHONPATH=os.path.join(here, "..", "python") + os.pathsep + tree,
                   AITER_PROBE_LIBRARY=os.path.abspath(args.library),
                   AITER_PROBE_DATADIR=os.path.abspath(args.datadir))
    times = {name: [] for name in commands}
    for _ in range(args.runs + 1):  # the first warms the page cache
        for name, script in commands.items():
            out = subprocess.run([python, "-c", script], env=env, check=True,
                                 stdout=subprocess.PIPE, universal_newlines=True).stdout
            times[name].append(float(out))
print("tree: %s   runs: %d each, interleaved; no saved manifest" % (tree, args.runs))
print("import to first answer (native_h24), in the process:")
for name, ts in times.items():
    print("  %-32s median %7.2f ms" % (name, statistics.median(ts[1:])))
