# SPDX-License-Identifier: MIT
"""Whole-process time and peak RSS of `aiter-probe merge` over a generated
fleet: the manifest of one scan of TREE copied for NODES nodes (host
gpu-00001 on), every 100th node with another AITER tree (one input's digest
and the version changed) and one capability lost. Text and JSON: median wall
and CPU time, the largest peak RSS (through GNU time).

usage: bench-merge.py AITER_PROBE DATADIR TREE [NODES] [RUNS]"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

probe, datadir, tree = sys.argv[1:4]
nodes = int(sys.argv[4]) if len(sys.argv) > 4 else 10000
runs = int(sys.argv[5]) if len(sys.argv) > 5 else 5
env = dict(os.environ, AITER_PROBE_DATADIR=datadir)
TIME = "/usr/bin/time"
if not os.access(TIME, os.X_OK):
    sys.exit("bench-merge.py needs GNU time at %s for the peak RSS" % TIME)
base = json.loads(subprocess.run([probe, "scan", "--aiter-root", tree, "--no-launch",
                                  "--format", "json"], env=env, check=True,
                                 capture_output=True).stdout)
hashed = [i for i, x in enumerate(base["inputs"]) if x["sha256"] is not None]
supported = [c for c, v in base["capabilities"].items() if v["supported"]]
lost = supported[0] if supported else None

with tempfile.TemporaryDirectory(prefix="ap-bench-merge-") as tmp:
    usage = os.path.join(tmp, "usage")
    paths = []
    for n in range(1, nodes + 1):
        m = json.loads(json.dumps(base)) if n % 100 == 0 else base
        m["host"] = "gpu-%05d" % n
        if n % 100 == 0:
            if hashed:
                m["inputs"][hashed[0]]["sha256"] = "%064x" % (n // 100 % 3)
            m["aiter"]["version"] = "0.1.19"
            if lost:
                m["capabilities"][lost]["supported"] = False
        path = os.path.join(tmp, "gpu-%05d.json" % n)
        with open(path, "w") as f:
            json.dump(m, f, indent=2)
        paths.append(path)
    size = sum(os.path.getsize(p) for p in paths)
    print("%d manifests, %.1f MB in all" % (nodes, size / 1e6))
    for fmt in ("text", "json"):
        cmd = [probe, "merge", "--format", fmt] + paths
        out = subprocess.run(cmd, env=env, check=True, capture_output=True).stdout
        times, cpu, rss = [], [], []
        for _ in range(runs):
            # GNU time's child is forked from it, not from this Python, whose
            # pages a child's peak RSS would count (they survive the exec).
            t = time.perf_counter()
            subprocess.run([TIME, "-f", "%U %S %M", "-o", usage] + cmd, env=env, check=True,
                           stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t)
            with open(usage) as f:
                user, system, peak = f.read().split()[-3:]
            cpu.append(float(user) + float(system))
            rss.append(int(peak))
        print("merge --format %s: median %.3f s wall, %.2f s CPU (%d runs), peak RSS %.1f MB, "
              "%d lines out" % (fmt, statistics.median(times), statistics.median(cpu), runs,
                                max(rss) / 1024, out.count(b"\n")))
        if fmt == "text":
            sys.stdout.write(out.decode())
