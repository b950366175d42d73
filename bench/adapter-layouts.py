#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The adapter against the command line on real AITER laid out as it is
installed: for each git ref, the tree as a wheel installs it (site-packages
with aiter/ and aiter_meta/, install_mode "install") and as an editable
checkout (the repository root, install_mode "develop", with a stale
aiter_meta/csrc left beside it), no manifest anywhere. In a child python
whose path finds that aiter (never imported), for_this_process() scans in
process; `aiter-probe scan --aiter-root` scans the same root with the same
interpreter. Prints one row per (ref, layout): the meta folder each chose
and the capabilities whose verdict differs; exit 1 on any difference.

    AITER_PROBE_DATADIR=. bench/adapter-layouts.py --probe B/aiter-probe \\
        --library B/.libs/libaiter-probe.so GIT_DIR v0.1.19 v0.1.20 HEAD
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
META_DIRS = ("csrc", "hsa", "3rdparty", "gradlib")

CHILD = r"""
import json, sys
from aiter_probe.backend import for_this_process
b = for_this_process()
m = b.manifest
if m is None:
    print(json.dumps({"error": "no manifest: conservative answers"}))
    sys.exit(0)
print(json.dumps({"meta": m.data["aiter"].get("meta"), "root": m.data["aiter"]["root"],
                  "caps": {k: v["supported"] for k, v in m.data["capabilities"].items()}}))
"""


def export(git_dir, ref, dest):
    os.makedirs(dest)
    tar = subprocess.run(["git", "--git-dir", git_dir, "archive", "--format=tar", ref],
                         stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=tar, check=True)


def wheel(src, dest):
    """site-packages as AITER's wheel lays it out."""
    shutil.copytree(os.path.join(src, "aiter"), os.path.join(dest, "aiter"), symlinks=True)
    meta = os.path.join(dest, "aiter_meta")
    os.makedirs(meta)
    for d in META_DIRS:
        if os.path.isdir(os.path.join(src, d)):
            shutil.copytree(os.path.join(src, d), os.path.join(meta, d), symlinks=True)
    with open(os.path.join(dest, "aiter", "install_mode"), "w") as f:
        f.write("install")
    return dest, dest


def editable(src):
    """The checkout itself, pip install -e'd, with a stale aiter_meta/csrc."""
    with open(os.path.join(src, "aiter", "install_mode"), "w") as f:
        f.write("develop")
    stale = os.path.join(src, "aiter_meta", "csrc", "kernels", "mla")
    os.makedirs(stale)
    with open(os.path.join(stale, "reduce.cu"), "w") as f:
        f.write("// a leftover of an earlier build\n")
    return src, src


def adapter(path, args, python):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([path, os.path.join(HERE, "..", "python")]),
               AITER_PROBE_LIBRARY=os.path.abspath(args.library))
    env.pop("AITER_PROBE_MANIFEST", None)
    env["AITER_PROBE_MANIFEST_DIR"] = os.path.join(path, "no-manifests-here")
    out = subprocess.run([python, "-c", CHILD], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, timeout=600)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout)


def cli(root, args, python):
    out = subprocess.run([args.probe, "scan", "--aiter-root", root, "--no-launch",
                          "--python", python, "--format", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if out.returncode not in (0, 1):
        return {"error": out.stderr.strip()}
    m = json.loads(out.stdout)
    return {"meta": m["aiter"].get("meta"), "root": m["aiter"]["root"],
            "caps": {k: v["supported"] for k, v in m["capabilities"].items()}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--probe", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("git_dir")
    ap.add_argument("refs", nargs="+")
    args = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory(prefix="adapter-layouts.") as tmp:
        for ref in args.refs:
            for layout in ("wheel", "editable"):
                base = os.path.join(tmp, ref.replace("/", "_"), layout)
                src = os.path.join(base, "src")
                export(args.git_dir, ref, src)
                path, root = wheel(src, os.path.join(base, "site")) if layout == "wheel" \
                    else editable(src)
                a, c = adapter(path, args, args.python), cli(root, args, args.python)
                if "error" in a or "error" in c:
                    bad += 1
                    print(f"{ref:16} {layout:9} error: adapter {a.get('error')}, "
                          f"cli {c.get('error')}")
                    continue
                diff = sorted(k for k in set(a["caps"]) | set(c["caps"])
                              if a["caps"].get(k) != c["caps"].get(k))
                meta = os.path.relpath(a["meta"], root) if a["meta"] else "-"
                same_meta = a["meta"] == c["meta"]
                bad += bool(diff) or not same_meta
                print(f"{ref:16} {layout:9} meta {meta:10} {'same' if same_meta else 'DIFFERENT'}"
                      f" meta, {len(a['caps'])} capabilities, "
                      f"{len(diff)} differ{': ' + ', '.join(diff) if diff else ''}; "
                      f"{sum(a['caps'].values())} supported")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
