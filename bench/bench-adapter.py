# SPDX-License-Identifier: MIT
"""What a serving backend pays at start for the saved manifest of its AITER:
in-process, the Python side (aiter_probe.for_installed_aiter: locate aiter
without importing it, load, check the root, verify every input; then a
Backend and all its decisions) and the C side (aiter_probe_manifest_for_root
through libaiter-probe, by ctypes), each run RUNS times; prints the medians.
The tree must have been scanned with `aiter-probe scan --save` under the same
AITER_PROBE_MANIFEST_DIR.

usage: bench-adapter.py LIBAITER_PROBE_SO TREE [RUNS]"""
import ctypes
import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
lib_path, tree = sys.argv[1:3]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 50
sys.path.insert(0, os.path.join(here, "..", "python"))
sys.path.insert(0, tree)

t0 = time.perf_counter()
import aiter_probe  # noqa: E402
from aiter_probe.backend import Backend  # noqa: E402
import_ms = (time.perf_counter() - t0) * 1e3

DECISIONS = ("mla_decode_native_24_heads", "mla_reducer_24_heads_512", "mla_planner_24_heads",
             "mla_prefill_fp8_persistent", "gluon_mla_decode_small_heads",
             "gluon_mla_decode_max_heads", "mla_decode_segmented",
             "mla_decode_fwd_keywords", "fused_moe_gate_mode", "fused_moe_dsv4_shared_expert",
             "topk_softmax_shared_experts", "hipb_mm", "qr_all_reduce_rmsnorm",
             "reducer_cases", "vllm_calls_bind")


def python_start():
    m, why = aiter_probe.for_installed_aiter()
    if m is None:
        sys.exit("no manifest: %s" % why)
    b = Backend(m)
    for name in DECISIONS:
        getattr(b, name)()
    for heads in range(1, 129):
        b.mla_pad_index(heads)
    return m


lib = ctypes.CDLL(lib_path)
lib.aiter_probe_manifest_for_root.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                              ctypes.POINTER(ctypes.c_char_p)]
lib.aiter_probe_manifest_free.argtypes = [ctypes.c_void_p]


def c_start():
    m, why = ctypes.c_void_p(), ctypes.c_char_p()
    if lib.aiter_probe_manifest_for_root(ctypes.byref(m), os.fsencode(tree),
                                         ctypes.byref(why)) != 0:
        sys.exit("no manifest: %s" % why.value.decode())
    lib.aiter_probe_manifest_free(m)


def median_ms(f):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


m = python_start()
print("tree %s: %d inputs, manifest %d bytes" % (tree, len(m.data["inputs"]),
                                                os.path.getsize(m.path)))
print("import aiter_probe + backend: %.1f ms (once)" % import_ms)
print("Python for_installed_aiter + Backend + every decision: %.2f ms (median of %d)"
      % (median_ms(python_start), runs))
print("C aiter_probe_manifest_for_root: %.2f ms (median of %d)" % (median_ms(c_start), runs))
