# SPDX-License-Identifier: MIT
"""Whole-process time of `aiter-probe scan` (every shipped pack, no launch)
against vLLM's two probes in Python (bench/vllm-probe.py), and against a
Python process that does nothing but `ast.parse` the Python files the scan
read (the manifest's .py inputs), on the same tree, run interleaved. Prints
the medians and the ratios.

usage: bench-scan.py AITER_PROBE DATADIR TREE [RUNS]"""
import json
import os
import subprocess
import sys

import interleave

probe, datadir, tree = sys.argv[1:4]
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 200
here = os.path.dirname(os.path.abspath(__file__))
env = dict(os.environ, AITER_PROBE_DATADIR=datadir)
commands = {
    "aiter-probe scan": [probe, "scan", "--aiter-root", tree, "--no-launch",
                         "--format", "json"],
    "vLLM probes (python3)": [sys.executable, os.path.join(here, "vllm-probe.py"), tree],
    # the manifest's signatures of every public callable too
    "aiter-probe scan --signatures": [probe, "scan", "--aiter-root", tree, "--no-launch",
                                      "--signatures", "--format", "json"],
}
manifest = json.loads(subprocess.run(commands["aiter-probe scan"], env=env, check=True,
                                     capture_output=True).stdout)
meta = manifest["aiter"].get("meta", manifest["aiter"]["root"])
py_files = [os.path.join(manifest["aiter"]["root"], i["path"]) for i in manifest["inputs"]
            if i["path"].endswith(".py") and i["sha256"] is not None]
if py_files:
    commands["ast.parse of its .py inputs"] = [
        sys.executable, "-c",
        "import ast, sys\nfor p in sys.argv[1:]:\n    ast.parse(open(p, 'rb').read())\n",
    ] + py_files
med = interleave.medians(commands, env, runs)
print(f"tree: {tree}   runs: {runs} each, interleaved; {len(py_files)} Python files read")
for name, m in med.items():
    print(f"  {name:24s} median {m * 1e3:8.2f} ms")
for name in list(med)[1:]:
    print(f"  ratio ({name} / aiter-probe): {med[name] / med['aiter-probe scan']:.1f}x")
