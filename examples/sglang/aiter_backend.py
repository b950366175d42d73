# SPDX-License-Identifier: MIT
"""SGLang's AITER attention backend (python/sglang/srt/layers/attention/
aiter_backend.py), its AITER decisions answered by aiter-probe.

Laid out as SGLang's file is: what the module decides at import (the
reducer head table), then AiterAttnBackend, whose constructor checks and
pads the head count and whose decode pads the query, runs the kernel and
crops the output. Each decision keeps SGLang's name and replaces its
body, one by one (the rows of BACKENDS.md):

    mla_reduce_v1_heads (_MLA_REDUCE_V1_HEADS)  S6  a copy of one AITER
                                                    commit's table
    _fp8_prefill_num_head                       S6  that copy
      (check_fp8_prefill_num_head)
    _use_fp8_prefill_attn                       S5  env + arch: the arch
                                                    stays the caller's
    AiterAttnBackend._valid_heads               S2  {4, 8} or 16k <= 128
    AiterAttnBackend.num_head_padded,           S3  pad < 16 heads to 16
      head_repeat_factor
    AiterAttnBackend.gluon_decode_available     S11 try-import (the AITER
                                                    half)

A copy of a table goes stale both ways: heads it lists that an older
reducer lacks abort the process inside the kernel, heads added later are
padded for nothing. Here the table is the reducer's own cases as the scan
read them (Backend.reducer_cases); when the tree cannot tell it is empty,
so FP8 prefill falls back to flash_attn_varlen_func rather than guess.

The padding's index tensor is made once, in the constructor, on the
model's device, and the padded query is gathered into a buffer
init_cuda_graph_state makes (what graph capture replays), never built
from a Python list per step. Tensors are torch's or numpy's.
"""

from aiter_probe.backend import for_this_process

_BACKEND = None


def aiter_backend():
    """The process's Backend, made on first use (the tree is scanned once)."""
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


def _use_fp8_prefill_attn(arch, num_head, num_kv_head, v_head_dim):
    """FP8 prefill attention: SGLang's gfx95x gate (the caller's arch, as
    torch prints it), then a head count the tree's reducer runs."""
    return arch.split(":")[0].startswith("gfx95") and \
        _fp8_prefill_num_head(num_head, num_kv_head, v_head_dim) is not None


def _library(like):
    """torch or numpy, whichever like belongs to."""
    if type(like).__module__.split(".")[0] == "torch":
        import torch
        return torch
    import numpy
    return numpy


class AiterAttnBackend:
    """The MLA decode part of SGLang's AiterAttnBackend.

    num_head: the query heads per rank; like: a tensor on the model's
    device and dtype (the index tensor is made there); decode_fn: AITER's
    mla_decode_fwd in SGLang, any per-head function in tests."""

    def __init__(self, num_head, decode_fn, like=None):
        assert self._valid_heads(num_head), (
            "Aiter MLA takes 1 to 128 heads or a multiple of 16, not %d; try adjusting "
            "tensor_parallel_size" % num_head)
        backend = aiter_backend()
        self.num_head = num_head
        self.num_head_padded, self.pad_mode = backend.mla_launch_heads(num_head)
        self.need_pad_heads = self.num_head_padded != num_head
        # SGLang crops o_kernel[:, ::head_repeat_factor]: right for a repeat;
        # a tiled launch keeps its first num_head heads (factor 1).
        self.head_repeat_factor = self.num_head_padded // num_head \
            if self.pad_mode == "repeat-interleave" else 1
        self.decode_fn = decode_fn
        self._q_buffer = None
        self._pad_index = None
        if self.need_pad_heads and like is not None:
            self._pad_index = self._index_tensor(backend.mla_pad_index(num_head), like)

    @staticmethod
    def _valid_heads(num_head):
        """SGLang's _valid_heads: a head count the decode can be launched
        with, padded or not."""
        try:
            aiter_backend().mla_launch_heads(num_head)
        except (TypeError, ValueError):
            return False
        return True

    @staticmethod
    def _index_tensor(values, like):
        lib = _library(like)
        if lib.__name__ == "torch":
            return lib.tensor(values, dtype=lib.int64, device=like.device)
        return lib.asarray(values, dtype=lib.int64)

    @staticmethod
    def gluon_decode_available():
        """The AITER half of SGLang's _gluon_fn: a Gluon MLA decode entry that
        takes small head counts."""
        return aiter_backend().gluon_mla_decode_small_heads()

    def init_cuda_graph_state(self, max_bs, head_dim, like):
        """The padded-query buffer the captured graph gathers into, made once
        for max_bs tokens."""
        if not self.need_pad_heads:
            return
        if self._pad_index is None:
            self._pad_index = self._index_tensor(
                aiter_backend().mla_pad_index(self.num_head), like)
        lib = _library(like)
        shape = (max_bs, self.num_head_padded, head_dim)
        self._q_buffer = lib.empty(shape, dtype=like.dtype, **(
            {"device": like.device} if lib.__name__ == "torch" else {}))

    def _pad_q(self, q):
        if not self.need_pad_heads:
            return q
        if self._pad_index is None:
            self._pad_index = self._index_tensor(
                aiter_backend().mla_pad_index(self.num_head), q)
        out = None
        if self._q_buffer is not None and q.shape[0] <= self._q_buffer.shape[0]:
            out = self._q_buffer[:q.shape[0]]
        lib = _library(q)
        if lib.__name__ == "torch":
            return lib.index_select(q, 1, self._pad_index, out=out)
        return lib.take(q, self._pad_index, axis=1, out=out)

    def forward_decode(self, q, *args, **kwargs):
        """decode_fn over q [tokens, num_head, head_dim] padded to the launch
        heads; the real heads of its output, a view."""
        o_kernel = self.decode_fn(self._pad_q(q), *args, **kwargs)
        if not self.need_pad_heads:
            return o_kernel
        if self.pad_mode == "repeat-interleave":
            return o_kernel[:, ::self.head_repeat_factor]
        return o_kernel[:, :self.num_head]


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
