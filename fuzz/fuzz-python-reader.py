#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Mutation fuzzing of the Python manifest reader (python/aiter_probe/),
standard library only: manifests from the seed folder, mutated (bytes
flipped, cut, spliced; JSON values replaced by other types, nested deep,
numbers pushed past their ranges) must load or raise ManifestError, never
any other exception; and the C reader (`aiter-probe verify`) must accept
exactly the ones the Python reader accepts.

    fuzz-python-reader.py AITER_PROBE SEED_DIR SECONDS

Exit status 1 with the failing input saved beside the seeds on a finding."""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import aiter_probe  # noqa: E402

probe, seeds, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
docs = []
for name in sorted(os.listdir(seeds)):
    with open(os.path.join(seeds, name), "rb") as f:
        docs.append(f.read())
rng = random.Random(1)
ODD = [None, True, 0, -1, 2 ** 63, 2 ** 64, 1e308, "", "x" * 300, [], {}, [[[]]], "\u00e9"]


def mutate_json(doc):
    try:
        v = json.loads(doc)
    except ValueError:
        return doc
    path = []
    node = v
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if not path:
        return doc
    parent, key = path[-1]
    choice = rng.random()
    if choice < 0.6:
        parent[key] = rng.choice(ODD)
    elif choice < 0.8:
        parent[key] = "\x00deep"
    elif isinstance(parent, dict):
        del parent[key]
    depth = rng.choice([10, 70, 5000])
    text = json.dumps(v).replace('"\\u0000deep"', "[" * depth + "0" + "]" * depth)
    return text.encode("utf-8", "surrogatepass")


def mutate_bytes(doc):
    b = bytearray(doc)
    for _ in range(rng.randint(1, 8)):
        op = rng.random()
        if op < 0.4 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op < 0.7 and b:
            del b[rng.randrange(len(b)):][:rng.randint(1, 64)]
        else:
            other = rng.choice(docs)
            at = rng.randrange(len(other) + 1)
            b[rng.randrange(len(b) + 1):0] = other[at:at + rng.randint(1, 64)]
    return bytes(b)


end = time.time() + seconds
runs = 0
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "m.json")
    while time.time() < end:
        doc = rng.choice(docs)
        data = mutate_json(doc) if rng.random() < 0.6 else mutate_bytes(doc)
        with open(path, "wb") as f:
            f.write(data)
        runs += 1
        try:
            aiter_probe.load(path)
            ok = True
        except aiter_probe.ManifestError:
            ok = False
        except Exception as e:  # a finding
            saved = os.path.join(seeds, "..", "python-reader-crash-%d.json" % runs)
            with open(saved, "wb") as f:
                f.write(data)
            print("finding: %s: %r (input saved as %s)" % (type(e).__name__, e, saved))
            sys.exit(1)
        # Freshness aside (the tree may not exist), the C reader must agree
        # on whether the manifest is one: exit 2 is a refusal.
        if runs % 10 == 0:
            rc = subprocess.run([probe, "verify", path], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL).returncode
            if ok != (rc != 2) and not (ok and rc == 2 and not os.path.isdir(
                    json.loads(data)["aiter"]["root"])):
                saved = os.path.join(seeds, "..", "python-reader-disagree-%d.json" % runs)
                with open(saved, "wb") as f:
                    f.write(data)
                print("finding: the readers disagree (Python %s, C exit %d; saved as %s)"
                      % ("accepts" if ok else "refuses", rc, saved))
                sys.exit(1)
print("%d inputs, no finding" % runs)
