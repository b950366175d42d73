# SPDX-License-Identifier: MIT
"""GPU architectures and dtypes as AITER decides by them.

AITER compares its arch_id (get_gpu_arch(): the base architecture, "gfx950")
and asks whether a tensor is FP8; torch prints the architecture with its
target features (gcnArchName "gfx950:sramecc+:xnack-") and names dtypes its
own ways ("torch.bfloat16"). These functions take either and say what AITER
compares, or None with the reason; the MLA metadata planner's
natively_supported predicate is evaluated here from the condition the rule
mla.metadata.natively_supported reads in the tree."""

from __future__ import annotations

import re

from .mla_lookup import UNKNOWN, Unreadable, condition

# Annotations are strings (PEP 563), their names imported for type checkers
# only: typing costs a fresh interpreter as much as the answers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple  # noqa: F401

__all__ = ["base_arch", "dtype_class", "natively_supported"]

# gfx, then the family and stepping digits (hex: gfx90a, gfx1150); then, as
# torch and rocminfo print them, each target feature after a colon.
_ARCH = re.compile(r"(gfx[0-9]+[0-9a-f]*)((?::[A-Za-z0-9_-]+[+-]?)*)\Z")
# torch's dtype names (str(torch.bfloat16) is "torch.bfloat16") and the
# short ones vLLM and AITER write, by the class AITER's planner asks about:
# q_is_fp8 holds for float8_e4m3fnuz and float8_e4m3fn (at::ScalarType on
# older tags, AITER_DTYPE_fp8, the arch's e4m3, from v0.1.20).
_DTYPES = {
    "bf16": "bf16", "bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16",
    "fp8": "fp8", "float8_e4m3fnuz": "fp8", "float8_e4m3fn": "fp8",
    "fp8_e4m3fnuz": "fp8", "fp8_e4m3fn": "fp8",
}


def base_arch(arch: Any) -> Tuple[Optional[str], str]:
    """(the base architecture AITER compares, e.g. "gfx950", or None; the
    reason). Takes "gfx950", torch's gcnArchName "gfx950:sramecc+:xnack-"
    and rocminfo's "amdgcn-amd-amdhsa--gfx950:sramecc+:xnack-"."""
    if not isinstance(arch, str):
        return None, "the architecture must be a string such as 'gfx950', not %s" % (
            type(arch).__name__)
    text = arch.strip()
    if text.startswith("amdgcn-amd-amdhsa--"):
        text = text[len("amdgcn-amd-amdhsa--"):]
    m = _ARCH.match(text.lower()) if len(text) <= 128 else None
    if m is None:
        return None, "'%s' is not an AMD GPU architecture (gfx950, gfx950:sramecc+:xnack-)" % (
            arch[:128])
    return m.group(1), "%s is %s" % (arch, m.group(1)) if m.group(2) else m.group(1)


def dtype_class(dtype: Any) -> Tuple[Optional[str], str]:
    """(the dtype as AITER's MLA path tells them apart: "bf16", "fp16" or
    "fp8", or None; the reason). Takes a torch dtype (by its str()), its
    name with or without "torch.", or the short names."""
    text = str(dtype).strip()
    name = text[len("torch."):] if text.startswith("torch.") else text
    kind = _DTYPES.get(name.lower())
    if kind is None:
        return None, "dtype '%s' is none AITER's MLA planner tells apart (bf16, fp16, " \
            "float8_e4m3fnuz, float8_e4m3fn)" % text[:128]
    return kind, kind if kind == name else "%s is %s" % (text, kind)


def natively_supported(native: str, hk: Optional[str], arch: str, q_fp8: bool, kv_fp8: bool,
                       heads: int, qlen: int,
                       experimental: Optional[bool]) -> Tuple[Optional[bool], str]:
    """The planner's natively_supported (the heads it plans as they are,
    without folding them onto 16) for arch, FP8 q and kv, heads and qlen:
    (True, False or None, the reason). native is the predicate's condition,
    hk hk_mtp_experimental's (None: the tree defines none); experimental is
    AITER_ENABLE_EXPERIMENTAL as AITER reads it (None: not known, so an
    answer that depends on it is None)."""
    names = {"arch_id": arch, "q_is_fp8": int(q_fp8), "kv_is_fp8": int(kv_fp8),
             "num_heads": heads, "max_seqlen_qo": qlen}  # type: Dict[str, Any]
    try:
        if hk is not None:
            names["enable_experimental"] = UNKNOWN if experimental is None else int(experimental)
            names["hk_mtp_experimental"] = condition(hk, names)
        value = condition(native, names)
    except Unreadable as e:
        return None, "the planner's natively_supported cannot be read: %s" % e
    if value is UNKNOWN:
        return None, "the planner's natively_supported depends on AITER_ENABLE_EXPERIMENTAL " \
            "here (hk_mtp_experimental): pass experimental="
    return bool(value), "natively_supported is %s" % ("true" if value else "false")
