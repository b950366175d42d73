# SPDX-License-Identifier: MIT
"""vLLM's two MLA probes, re-implemented for the side-by-side benchmarks:
read AITER's source, drop every whitespace character, look for a literal.
A script (bench-scan.py runs it whole) or a module (bench-in-process.py
calls native_h24 in the process)."""
import os
import sys


def probe(root, rel, needle):
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            src = f.read()
    except OSError:
        return False
    return "".join(needle.split()) in "".join(src.split())


def native_h24(root):
    return probe(root, "csrc/kernels/mla/reduce.cu",
                 "MLA_REDUCE_CASE_EF(NUM_HEAD,24,HEAD_DIM,512,") and \
        probe(root, "csrc/kernels/mla/metadata/v1_2_device.cuh", "num_heads==24")


if __name__ == "__main__":
    print("native_h24" if native_h24(sys.argv[1]) else "padded")
