# SPDX-License-Identifier: MIT
"""vLLM's two MLA probes, re-implemented for the side-by-side benchmark:
read AITER's source, drop every whitespace character, look for a literal."""
import os
import sys


def probe(root, rel, needle):
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            src = f.read()
    except OSError:
        return False
    return "".join(needle.split()) in "".join(src.split())


root = sys.argv[1]
reduce_ok = probe(root, "csrc/kernels/mla/reduce.cu",
                  "MLA_REDUCE_CASE_EF(NUM_HEAD,24,HEAD_DIM,512,")
meta_ok = probe(root, "csrc/kernels/mla/metadata/v1_2_device.cuh", "num_heads==24")
print("native_h24" if reduce_ok and meta_ok else "padded")
