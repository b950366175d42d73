# SPDX-License-Identifier: MIT
"""SGLang's MLA reducer head table, answered by the aiter-probe manifest.

SGLang's AITER backend (python/sglang/srt/layers/attention/aiter_backend.py)
keeps _MLA_REDUCE_V1_HEADS, a copy of one AITER commit's reducer dispatch
table ({head dim: head counts}), and picks the FP8 prefill head count from
it. A copy goes stale both ways: heads it lists that an older reducer lacks
abort the process inside the kernel, heads added later are padded for
nothing. Here the table is the reducer's own cases as the scan read them
(Backend.reducer_cases); without a manifest it is empty, so FP8 prefill
falls back to flash_attn_varlen_func rather than guess.
"""

from aiter_probe.backend import for_this_process

_BACKEND = None


def aiter_backend():
    """The process's Backend, made on first use (the manifest is read once)."""
    global _BACKEND
    if _BACKEND is None:
        _BACKEND = for_this_process()
    return _BACKEND


def use_backend(backend):
    """Answers from this Backend from now on (a server that makes its own;
    tests)."""
    global _BACKEND
    _BACKEND = backend


def mla_reduce_v1_heads():
    """SGLang's _MLA_REDUCE_V1_HEADS: {v_head_dim: frozenset of head counts}
    the reducer dispatches."""
    table = {}
    for heads, head_dim in aiter_backend().reducer_cases():
        table.setdefault(head_dim, set()).add(heads)
    return {head_dim: frozenset(heads) for head_dim, heads in table.items()}


def _fp8_prefill_num_head(num_head, num_kv_head, v_head_dim):
    """The head count FP8 prefill runs num_head heads at, or None for the
    flash_attn_varlen_func fallback: num_head when the reducer has it, else
    (at GQA ratio 1 only: padding moves q and k/v together) the smallest
    larger count it has."""
    heads = mla_reduce_v1_heads().get(v_head_dim)
    if not heads:
        return None
    if num_head in heads:
        return num_head
    if num_head != num_kv_head:
        return None
    larger = [h for h in heads if h > num_head]
    return min(larger) if larger else None


# --- The other census rows SGLang decides by probing (BACKENDS.md S1, S12, S13,
# S15), each one capability of rules/sglang.yaml.

def aiter_backend_importable():
    """S1: every name of aiter_backend.py's module-top try-import gives a def
    (today the import fails or half-succeeds at server start)."""
    return aiter_backend().supported("sglang.aiter_backend")


def _aiter_fused_moe_supports_no_combine():
    """S12: moe_runner/aiter.py's inspect.signature probe of fused_moe."""
    return aiter_backend().supported("fused_moe.no_combine")


def aiter_moe_enums_present():
    """S13: aiter.ActivationType and aiter.QuantType have every member the MoE
    runner takes by name (getattr today, an AttributeError when one lacks)."""
    return aiter_backend().supported("sglang.moe_enums")
