# SPDX-License-Identifier: MIT
"""AITER's launcher: the GPU cross-check run on AITER's own kernels.

The scan runs it as a child process, one per GPU, under the same time limit
and process-group kill as the reference launcher (aiter-probe-launcher), with
the interpreter that will import AITER, and reads one JSON object from its
stdout (the contract is in src/engine/launch.h):

    python3 -m aiter_probe.launch --list --aiter-root ROOT [--meta META]
    python3 -m aiter_probe.launch --device N --kernel mla_decode --heads H
        [--pad-to P] [--head-dim 512] [--rope 64] [--batch B] [--context C]
        [--page-size S] --aiter-root ROOT [--meta META] --calls JSON

For mla_decode it runs AITER's persistent MLA decode as vLLM calls it:
get_mla_metadata_info_v1 and get_mla_metadata_v1 sized for the launch head
count, then mla_decode_fwd with that metadata (which runs AITER's reducer),
natively at H heads and padded to P, checked against a float64 reference on
sampled rows, with guard regions around every buffer it allocates. --calls
is what the scan read of the tag's signatures (the rules vllm.calls_bind.*):
a call the tag's source does not bind is never made; the result is then
`skipped` with the reason. Standard library, torch and the scanned aiter only.
"""

import argparse
import json
import os
import random
import sys
import time
import traceback
from typing import Any

if __name__ == "__main__" and __package__ in (None, ""):
    # Run as a file: its own folder must not shadow what aiter and torch
    # import; the folder above it holds only this package.
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        sys.path[0] = os.path.dirname(here)
    __package__ = "aiter_probe"  # pylint: disable=redefined-builtin

from aiter_probe import _pad_mode  # noqa: E402  (one routing, as the readers')

REFERENCE_ROWS = 64
TIMED_REPS = 5
GUARD_BYTES = 64 * 1024
CANARY = 0xA5
SEED = 0x61697465722D7072
HEAD_DIM = 512
ROPE_DIM = 64
MAX_HEADS = 128
# What vLLM passes mla_decode_fwd for the persistent decode: without these
# keywords the tag has no persistent decode to check.
PERSISTENT = ("work_meta_data", "work_indptr", "work_info_set", "reduce_indptr",
              "reduce_final_map", "reduce_partial_map")
CALLS = ("get_mla_metadata_info_v1", "get_mla_metadata_v1", "mla_decode_fwd")


class Skip(Exception):
    """AITER's kernel cannot be run here: the static verdict stands."""


class Failed(Exception):
    """AITER's kernel ran, or was called, and did not do what the check needs."""


def _why(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, text[0]) if text and text[0] else type(e).__name__


def _finite(x: "float | None") -> "float | None":
    """JSON has no NaN or infinity: such a figure is null."""
    return x if x is not None and abs(x) != float("inf") and x == x else None


def _under(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def import_aiter(root: str, meta: str) -> "tuple[Any, Any]":
    """(torch, aiter) as the server would import them, the scanned tree's aiter
    first on the path; Skip with the reason when either cannot be had."""
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except BaseException as e:  # noqa: B902 (an import may raise anything)
        raise Skip("the python (%s) cannot import torch: %s" % (sys.executable, _why(e)))
    hip = getattr(getattr(torch, "version", None), "hip", None)
    if not hip:
        raise Skip("torch %s is not a ROCm build (torch.version.hip is not set): AITER runs "
                   "on AMD GPUs only" % getattr(torch, "__version__", "?"))
    if meta and os.path.realpath(meta) != os.path.realpath(root):
        os.environ.setdefault("AITER_META_DIR", meta)
    sys.path.insert(0, root)
    try:
        import aiter  # pylint: disable=import-outside-toplevel
    except BaseException as e:  # noqa: B902
        raise Skip("the python (%s) cannot import aiter from %s: %s" % (sys.executable, root,
                                                                        _why(e)))
    where = getattr(aiter, "__file__", None) or ""
    if not _under(where, os.path.join(root, "aiter")):
        raise Skip("the python imports aiter from %s, not from the scanned root %s"
                   % (where or "a namespace package", root))
    return torch, aiter


def device_of(torch: Any, index: int, meta: str) -> "tuple[dict, str | None]":
    """The device's {index, name, arch, compute_units}, and why AITER cannot run
    on it (None when it can): AITER's MLA kernels are per arch, in hsa/ARCH/mla."""
    props = torch.cuda.get_device_properties(index)
    arch = str(getattr(props, "gcnArchName", "") or "").split(":")[0]
    dev = {"index": index, "name": str(props.name), "arch": arch or "unknown",
           "compute_units": int(props.multi_processor_count)}
    if not arch:
        return dev, "torch names no gfx arch for this GPU"
    if not os.path.isdir(os.path.join(meta, "hsa", arch, "mla")):
        return dev, ("AITER has no MLA kernels for %s here (no hsa/%s/mla in %s)"
                     % (arch, arch, meta))
    return dev, None


def list_devices(args: argparse.Namespace) -> dict:
    answer = {"backend": "aiter", "devices": []}
    try:
        torch, aiter = import_aiter(args.aiter_root, args.meta)
        count = torch.cuda.device_count()
    except Skip as e:
        answer["reason"] = str(e)
        return answer
    except Exception as e:  # noqa: B902 (a runtime that cannot count its GPUs)
        answer["reason"] = "torch cannot list the GPUs: %s" % _why(e)
        return answer
    answer["torch"] = str(torch.__version__)
    answer["aiter"] = {"file": aiter.__file__,
                       "version": str(getattr(aiter, "__version__", "") or "") or None}
    for i in range(count):
        dev, why = device_of(torch, i, args.meta)
        if why is not None:
            dev["unusable"] = why
        answer["devices"].append(dev)
    if count == 0:
        answer["reason"] = "torch finds no GPU"
    return answer


def parameters(params: str) -> "set[str]":
    """The parameter names of a signature as the engine writes it
    ("a, b=…, *, c=…, **kw"); "**" marks a **kwargs."""
    names, depth, part = set(), 0, ""
    for ch in params + ",":
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            name = part.split("=")[0].split(":")[0].strip()
            if name.startswith("**"):
                names.add("**")
            elif name not in ("", "*", "/"):
                names.add(name.lstrip("*"))
            part = ""
        else:
            part += ch
    return names


def read_calls(text: str) -> "dict[str, set[str]]":
    """{call: parameter names} from --calls; Skip naming the first call the
    tag's source does not bind."""
    try:
        calls = json.loads(text)
    except ValueError as e:
        raise Skip("--calls is not JSON: %s" % e)
    found = {}
    for name in CALLS:
        call = calls.get(name) if isinstance(calls, dict) else None
        if not isinstance(call, dict):
            raise Skip("the scan read no signature of %s" % name)
        if call.get("status") != "matched" or not isinstance(call.get("params"), str):
            raise Skip("vLLM's %s call does not bind at this tag (rule %s: %s)"
                       % (name, call.get("rule", "?"), call.get("reason") or call.get("status")))
        found[name] = parameters(call["params"])
    lacking = [k for k in PERSISTENT if k not in found["mla_decode_fwd"] and
               "**" not in found["mla_decode_fwd"]]
    if lacking:
        raise Skip("mla_decode_fwd at this tag takes no %s: it has no persistent decode"
                   % ", ".join(lacking))
    return found


def keywords(params: "set[str]", wanted: dict) -> dict:
    """The keywords of wanted the signature takes (vLLM's calls pass them all;
    an older tag's signature takes fewer, and a call must bind)."""
    return {k: v for k, v in wanted.items() if k in params or "**" in params}


class Guards:
    """Buffers with CANARY bytes on both sides, cut from one byte allocation,
    so that a write past either end lands in a guard, where it is seen."""

    def __init__(self, torch: Any, device: Any) -> None:
        self.torch, self.device, self.regions, self.trouble = torch, device, [], []
        self.checked = 0

    def alloc(self, name: str, shape: Any, dtype: Any, fill: "int | None" = None) -> Any:
        torch = self.torch
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
        count = 1
        for n in shape:
            count *= int(n)
        size = torch.empty((0,), dtype=dtype, device=self.device).element_size()
        nbytes = count * size
        rear = GUARD_BYTES + (-nbytes) % 256
        raw = torch.empty((GUARD_BYTES + nbytes + rear,), dtype=torch.uint8, device=self.device)
        raw.fill_(CANARY)
        body = raw[GUARD_BYTES:GUARD_BYTES + nbytes]
        if fill is not None:
            body.fill_(fill)
        self.regions.append((name, raw, nbytes))
        return body.view(dtype).view(shape)

    def check(self, launch: str) -> None:
        """Checks the regions allocated since the last check, for launch."""
        for name, raw, nbytes in self.regions[self.checked:]:
            front = raw[:GUARD_BYTES].ne(CANARY).nonzero()
            rear = raw[GUARD_BYTES + nbytes:].ne(CANARY).nonzero()
            if front.numel():
                self.trouble.append("%s launch: %s front guard overwritten %d bytes before "
                                    "the start" % (launch, name,
                                                   GUARD_BYTES - int(front[0].item())))
            if rear.numel():
                self.trouble.append("%s launch: %s rear guard overwritten from byte %d past "
                                    "the end (buffer of %d bytes)"
                                    % (launch, name, int(rear[0].item()), nbytes))
        self.checked = len(self.regions)


def make_inputs(torch: Any, args: argparse.Namespace, device: Any) -> dict:
    """Sequence lengths fall from context to about half of it, off the page
    grid; pages are shuffled; q spans +-6 so the softmax is peaked."""
    rng = random.Random(SEED)
    lens = [max(1, args.context - b * (args.context // (2 * args.batch)) - b % 7)
            for b in range(args.batch)]
    per = [(n + args.page_size - 1) // args.page_size for n in lens]
    pages = sum(per) + args.batch
    order = list(range(pages))
    rng.shuffle(order)
    indptr, indices, last = [0], [], []
    for n, p in zip(lens, per):
        indices.extend(order[indptr[-1]:indptr[-1] + p])
        indptr.append(indptr[-1] + p)
        last.append(n - (p - 1) * args.page_size)
    gen = torch.Generator(device=device)
    gen.manual_seed(SEED & 0x7FFFFFFF)
    qk = HEAD_DIM + ROPE_DIM
    i32 = torch.int32
    return {
        "lens": lens,
        "q": (torch.rand((args.batch, args.heads, qk), generator=gen, device=device) * 12 - 6)
        .to(torch.bfloat16),
        "kv": (torch.rand((pages, args.page_size, 1, qk), generator=gen, device=device) * 2 - 1)
        .to(torch.bfloat16),
        "qo_indptr": torch.arange(args.batch + 1, dtype=i32, device=device),
        "kv_indptr": torch.tensor(indptr, dtype=i32, device=device),
        "kv_indices": torch.tensor(indices, dtype=i32, device=device),
        "last": torch.tensor(last, dtype=i32, device=device),
        "scale": 1.0 / float(qk) ** 0.5,
    }


def pad_maps(heads: int, launch: int) -> tuple:
    """(pad_source, unpad) as plans.mla_heads routes heads as launch."""
    mode = _pad_mode(heads, launch)
    if mode == "none":
        return mode, None, None
    if mode == "repeat-interleave":
        step = launch // heads
        return mode, [j // step for j in range(launch)], list(range(0, launch, step))
    return mode, [j % heads for j in range(launch)], list(range(heads))


def run_path(torch: Any, aiter: Any, calls: dict, args: argparse.Namespace, inp: dict,
             guards: Guards, label: str, launch_heads: int, device: Any) -> tuple:
    """One launch as vLLM makes it: metadata sized for launch_heads, then the
    decode. Returns (the real heads' output, microseconds per launch)."""
    bf16 = torch.bfloat16
    try:
        info = aiter.get_mla_metadata_info_v1(
            args.batch, 1, launch_heads, bf16, bf16,
            **keywords(calls["get_mla_metadata_info_v1"], {"is_sparse": False, "fast_mode": True}))
    except Exception as e:  # noqa: B902 (AITER refusing the head count is the news)
        raise Failed("%s launch: get_mla_metadata_info_v1 for %d heads raised %s"
                     % (label, launch_heads, _why(e)))
    names = ("work_meta_data", "work_indptr", "work_info_set", "reduce_indptr",
             "reduce_final_map", "reduce_partial_map")
    try:
        meta = {n: guards.alloc(n, shape, dtype) for n, (shape, dtype) in zip(names, info)}
    except (TypeError, ValueError) as e:
        raise Failed("%s launch: get_mla_metadata_info_v1 gave no six (shape, dtype) pairs: %s"
                     % (label, _why(e)))
    try:
        aiter.get_mla_metadata_v1(
            inp["qo_indptr"], inp["kv_indptr"], inp["last"], launch_heads, 1, True,
            meta["work_meta_data"], meta["work_info_set"], meta["work_indptr"],
            meta["reduce_indptr"], meta["reduce_final_map"], meta["reduce_partial_map"],
            **keywords(calls["get_mla_metadata_v1"], {
                "page_size": args.page_size, "kv_granularity": max(args.page_size, 16),
                "max_seqlen_qo": 1, "uni_seqlen_qo": 1, "fast_mode": True,
                "dtype_q": bf16, "dtype_kv": bf16}))
    except Exception as e:  # noqa: B902
        raise Failed("%s launch: get_mla_metadata_v1 for %d heads raised %s"
                     % (label, launch_heads, _why(e)))
    mode, pad, unpad = pad_maps(args.heads, launch_heads)
    q = inp["q"]
    if pad is not None:
        q = q.index_select(1, torch.tensor(pad, dtype=torch.int64, device=device)).contiguous()
    out = guards.alloc("out", (args.batch, launch_heads, HEAD_DIM), bf16, fill=0xFF)
    kw = keywords(calls["mla_decode_fwd"], {"page_size": args.page_size, "nhead_kv": 1,
                                            "sm_scale": inp["scale"], "logit_cap": 0.0,
                                            "causal": True})
    kw.update({k: meta[k] for k in names})
    elapsed = 0.0
    try:
        for rep in range(TIMED_REPS + 1):
            torch.cuda.synchronize()
            start = time.perf_counter()
            aiter.mla_decode_fwd(q, inp["kv"], out, inp["qo_indptr"], inp["kv_indptr"],
                                 inp["kv_indices"], inp["last"], 1, **kw)
            torch.cuda.synchronize()
            if rep:
                elapsed += time.perf_counter() - start
    except Exception as e:  # noqa: B902
        raise Failed("%s launch: mla_decode_fwd at %d heads raised %s"
                     % (label, launch_heads, _why(e)))
    guards.check(label)
    if unpad is not None:
        out = out.index_select(1, torch.tensor(unpad, dtype=torch.int64, device=device))
    return out, mode, elapsed / TIMED_REPS * 1e6


def check_reference(torch: Any, inp: dict, args: argparse.Namespace, native: Any) -> tuple:
    """Native output against float64 on sampled rows (always the first and the
    last); tolerance as the reference launcher's: 2^-7 max|ref| + 2^-10."""
    total = args.batch * args.heads
    count = min(total, REFERENCE_ROWS)
    rng = random.Random(SEED ^ 0x5EED)
    rows = [0 if i == 0 else total - 1 if i == count - 1 else i if count == total
            else rng.randrange(total) for i in range(count)]
    kv = inp["kv"].reshape(-1, HEAD_DIM + ROPE_DIM)
    indptr, indices = inp["kv_indptr"].tolist(), inp["kv_indices"].tolist()
    max_err, max_ref, nan, keys = 0.0, 0.0, False, {}
    for row in rows:
        b, h = divmod(row, args.heads)
        if b not in keys:
            slots = [p * args.page_size + s for p in indices[indptr[b]:indptr[b + 1]]
                     for s in range(args.page_size)][:inp["lens"][b]]
            keys[b] = kv.index_select(0, torch.tensor(slots, dtype=torch.int64,
                                                      device=kv.device)).double()
        k = keys[b]
        s = (k @ inp["q"][b, h].double()) * inp["scale"]
        p = (s - s.max()).exp()
        ref = (p @ k[:, :HEAD_DIM]) / p.sum()
        got = native[b, h].double()
        if bool(torch.isnan(got).any().item()):
            nan = True
        else:
            max_err = max(max_err, float((got - ref).abs().max().item()))
        max_ref = max(max_ref, float(ref.abs().max().item()))
    tol = max_ref / 128.0 + 1.0 / 1024.0
    passed = not nan and max_err <= tol
    check = {"passed": passed, "max_abs_err": None if nan else _finite(max_err),
             "tolerance": _finite(tol), "rows": count}
    if nan:
        return check, tol, "reference: the native output has NaN (unwritten or overflowed)"
    if not passed:
        return check, tol, ("reference: max abs error %.6g exceeds the tolerance %.6g"
                            % (max_err, tol))
    return check, tol, None


def check_padded(torch: Any, native: Any, padded: Any, tol: float) -> tuple:
    """AITER plans each head count on its own, so the padded launch may split
    the KV otherwise than the native one: within the reference tolerance."""
    if padded is None:
        return {"passed": True, "max_abs_diff": None,
                "detail": "no padded launch: the launch head count is the real one"}, None
    a, b = native.double(), padded.double()
    differ = int(a.ne(b).sum().item())
    diff = (a - b).abs()
    worst = float("inf") if bool(torch.isnan(diff).any().item()) else float(diff.max().item())
    passed = worst <= tol
    check = {"passed": passed, "max_abs_diff": _finite(worst),
             "elements_differing": differ, "exact": False, "tolerance": _finite(tol)}
    if not passed:
        return check, ("padded_vs_native: max abs difference %.6g exceeds the tolerance %.6g"
                       % (worst, tol))
    return check, None


def run_launch(args: argparse.Namespace, result: dict) -> None:
    torch, aiter = import_aiter(args.aiter_root, args.meta)
    result["torch"] = str(torch.__version__)
    result["aiter"] = {"file": aiter.__file__,
                       "version": str(getattr(aiter, "__version__", "") or "") or None}
    calls = read_calls(args.calls)
    if args.device >= torch.cuda.device_count():
        raise Skip("torch finds no GPU %d (%d found)" % (args.device, torch.cuda.device_count()))
    dev, why = device_of(torch, args.device, args.meta)
    result["device"] = {k: dev[k] for k in ("index", "name", "arch")}
    if why is not None:
        raise Skip(why)
    torch.cuda.set_device(args.device)
    device = torch.device("cuda", args.device)
    inp = make_inputs(torch, args, device)
    guards = Guards(torch, device)
    launch_heads = args.pad_to if args.pad_to > args.heads else args.heads
    native, _, result["timings_us"]["native"] = run_path(
        torch, aiter, calls, args, inp, guards, "native", args.heads, device)
    padded = None
    if launch_heads != args.heads:
        padded, _, result["timings_us"]["padded"] = run_path(
            torch, aiter, calls, args, inp, guards, "padded", launch_heads, device)
    torch.cuda.synchronize()
    errors = []
    checks = result["checks"]
    if guards.trouble:
        checks["canaries"] = {"passed": False, "detail": "; ".join(guards.trouble)}
        errors.append("canaries: " + checks["canaries"]["detail"])
    else:
        checks["canaries"] = {"passed": True, "detail": "%d guard regions intact around the "
                              "buffers of %s" % (2 * len(guards.regions),
                                                 ", ".join(sorted({r[0] for r in guards.regions})))}
    checks["reference"], tol, err = check_reference(torch, inp, args, native)
    errors.append(err)
    checks["padded_vs_native"], err = check_padded(torch, native, padded, tol)
    errors.append(err)
    errors = [e for e in errors if e]
    if errors:
        raise Failed(errors[0])


def main(argv: "list[str] | None" = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m aiter_probe.launch",
                                description="Run AITER's own MLA decode as the GPU cross-check.")
    p.add_argument("--list", action="store_true")
    p.add_argument("--device", type=int, default=-1)
    p.add_argument("--kernel")
    for name, default in (("heads", 0), ("pad-to", 0), ("head-dim", HEAD_DIM), ("rope", ROPE_DIM),
                          ("batch", 8), ("context", 2048), ("page-size", 1)):
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--aiter-root")
    p.add_argument("--meta")
    p.add_argument("--calls", default="{}")
    args = p.parse_args(argv)
    if not args.aiter_root:
        p.error("--aiter-root is required")
    args.aiter_root = os.path.abspath(args.aiter_root)
    args.meta = os.path.abspath(args.meta or args.aiter_root)
    if args.list:
        print(json.dumps(list_devices(args)))
        return 0
    launch_heads = args.pad_to if args.pad_to > args.heads else args.heads
    result = {"device": {"index": args.device}, "status": "passed", "kernel": "aiter",
              "op": args.kernel, "heads": args.heads, "pad_to": args.pad_to,
              "launch_heads": launch_heads, "mode": "none", "batch": args.batch,
              "context": args.context, "page_size": args.page_size, "checks": {},
              "timings_us": {"native": None, "padded": None}}
    usage = None
    if args.device < 0 or args.kernel is None or not 1 <= args.heads <= MAX_HEADS:
        usage = "--device, --kernel and --heads (1..%d) are required" % MAX_HEADS
    elif args.kernel != "mla_decode":
        usage = "unknown kernel '%s' (known: mla_decode)" % args.kernel
    elif args.head_dim != HEAD_DIM or args.rope != ROPE_DIM:
        usage = ("mla_decode is AITER's for head dim %d and rope %d, not %d and %d"
                 % (HEAD_DIM, ROPE_DIM, args.head_dim, args.rope))
    elif args.pad_to and not args.heads <= args.pad_to <= MAX_HEADS:
        usage = "--pad-to %d is not in %d..%d" % (args.pad_to, args.heads, MAX_HEADS)
    elif min(args.batch, args.context, args.page_size) < 1:
        usage = "--batch, --context and --page-size must be at least 1"
    if usage is not None:
        result.update(status="failed", error="usage: " + usage)
        print(json.dumps(result))
        return 2
    result["mode"] = _pad_mode(args.heads, launch_heads)
    code = 0
    try:
        run_launch(args, result)
    except Skip as e:
        result.update(status="skipped", reason=str(e))
    except Failed as e:
        result.update(status="failed", error=str(e))
        code = 1
    except Exception as e:  # noqa: B902 (torch's own errors: the GPU's news)
        traceback.print_exc(file=sys.stderr)
        result.update(status="failed", error="error on the GPU: " + _why(e))
        code = 3
    print(json.dumps(result, allow_nan=False))
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
