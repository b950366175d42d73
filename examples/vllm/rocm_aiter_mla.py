# SPDX-License-Identifier: MIT
"""vLLM's ROCm AITER MLA head routing, answered by the aiter-probe manifest.

vLLM's MLA backend (vllm/v1/attention/backends/mla/rocm_aiter_mla.py) decides
native 24-head decode by reading AITER's kernel sources at run time, and pads
every other head count to a multiple of 16. These are the names it uses for
that, with bodies that ask one aiter_probe Backend instead, so the answers
come from the scan of the AITER this interpreter imports (or, without a
manifest, are vLLM's own padding). Arch gates (on_gfx950) stay vLLM's.

Index lists come from the manifest's plan: `q[:, index]` pads (made
contiguous, as the ASM decode needs) and `o[:, index]` crops (a view: the
real heads are evenly spaced). Tensors are torch's or numpy's.
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


def _aiter_mla_native_h24_reducer_supported():
    return aiter_backend().mla_reducer_24_heads_512()


def _aiter_mla_native_h24_metadata_supported():
    return aiter_backend().mla_planner_24_heads()


def _aiter_mla_native_h24_supported():
    return aiter_backend().mla_decode_native_24_heads()


def _fp8_mla_prefill_supported():
    """The AITER half; vLLM also requires gfx950."""
    return aiter_backend().mla_prefill_fp8_persistent()


def _segmented_mla_decode_supported():
    """The AITER half; vLLM also requires the Gluon build (gfx950)."""
    return aiter_backend().mla_decode_segmented()


def _gluon_mla_max_bh16_heads():
    return aiter_backend().gluon_mla_decode_max_heads()


def _as_slice(index):
    """An evenly spaced index list as a slice (a view, no copy)."""
    step = index[1] - index[0] if len(index) > 1 else 1
    if step > 0 and all(b - a == step for a, b in zip(index, index[1:])):
        return slice(index[0], index[-1] + 1, step)
    return index


class AiterMLAHelper:
    _AITER_MIN_MLA_HEADS = 16
    _AITER_MAX_PADDED_MLA_HEADS = 128

    @staticmethod
    def is_valid_num_heads(num_heads):
        return num_heads > 0 and (num_heads <= AiterMLAHelper._AITER_MAX_PADDED_MLA_HEADS
                                  or num_heads % AiterMLAHelper._AITER_MIN_MLA_HEADS == 0)

    @staticmethod
    def get_actual_mla_num_heads(num_heads):
        return aiter_backend().mla_launch_heads(num_heads)[0]

    @staticmethod
    def get_mla_padded_q(num_heads, q):
        index = aiter_backend().mla_pad_index(num_heads)
        if index is None:
            return q
        # The ASM decode reads q packed as [tokens, launch heads, head dim].
        padded = q[:, index]
        contiguous = getattr(padded, "contiguous", None)  # torch; numpy copies
        return contiguous() if contiguous is not None else padded.copy(order="C")

    @staticmethod
    def get_mla_unpadded_o(num_heads, o):
        return AiterMLAHelper._get_mla_unpadded_heads(num_heads, o)

    @staticmethod
    def get_mla_unpadded_lse(num_heads, lse):
        return AiterMLAHelper._get_mla_unpadded_heads(num_heads, lse)

    @staticmethod
    def _get_mla_unpadded_heads(num_heads, tensor):
        index = aiter_backend().mla_unpad_index(num_heads)
        return tensor if index is None else tensor[:, _as_slice(index)]
