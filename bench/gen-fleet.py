# SPDX-License-Identifier: MIT
"""Writes fleets of manifests that load `aiter-probe merge` the way issue 17
found it slow, from one real manifest (a scan of a tree):

  hostile  NODES-1 copies of the manifest as nodes gpu-0001 on, and one more
           node (gpu-hostile) whose manifest is padded with distinct
           capability ids to about MB megabytes (default 44): every other
           node did not probe them.
  distinct NODES manifests whose capability ids are each prefixed with the
           node's number, so that no two nodes share an id (default 2,000
           nodes).

usage: gen-fleet.py MANIFEST OUTDIR hostile [NODES [MB]]
       gen-fleet.py MANIFEST OUTDIR distinct [NODES]
Prints the files written and their size."""
import json
import os
import sys


def main():
    if len(sys.argv) < 4 or sys.argv[3] not in ("hostile", "distinct"):
        sys.exit(__doc__)
    src, out, mode = sys.argv[1:4]
    base = json.load(open(src))
    os.makedirs(out, exist_ok=True)
    size = 0
    if mode == "hostile":
        nodes = int(sys.argv[4]) if len(sys.argv) > 4 else 300
        mb = float(sys.argv[5]) if len(sys.argv) > 5 else 44
        for n in range(1, nodes):
            base["host"] = "gpu-%04d" % n
            with open(os.path.join(out, "gpu-%04d.json" % n), "w") as f:
                json.dump(base, f, indent=2)
                size += f.tell()
        m = json.loads(json.dumps(base))
        m["host"] = "gpu-hostile"
        one = {"supported": False, "reason": "padding", "evidence": []}
        # One entry as it stands in the file: nested, indented, with its comma.
        each = (len(json.dumps({"c": {"hostile.cap.0000000": one, "x": 0}}, indent=2)) -
                len(json.dumps({"c": {"x": 0}}, indent=2)))
        caps = m["capabilities"]
        for i in range(int(mb * 1e6 / each)):
            caps["hostile.cap.%07d" % i] = one
        with open(os.path.join(out, "gpu-hostile.json"), "w") as f:
            json.dump(m, f, indent=2)
            big = f.tell()
        print("%d manifests, the hostile one %.1f MB with %d capabilities, %.1f MB in all"
              % (nodes, big / 1e6, len(caps), (size + big) / 1e6))
    else:
        nodes = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
        ncaps = 0
        for n in range(1, nodes + 1):
            m = dict(base)
            m["host"] = "gpu-%04d" % n
            m["capabilities"] = {"n%04d.%s" % (n, k): v for k, v in base["capabilities"].items()}
            ncaps += len(m["capabilities"])
            with open(os.path.join(out, "gpu-%04d.json" % n), "w") as f:
                json.dump(m, f, indent=2)
                size += f.tell()
        print("%d manifests, %d distinct capability ids, %.1f MB in all"
              % (nodes, ncaps, size / 1e6))


main()
