# SPDX-License-Identifier: MIT
"""vLLM's ROCm AITER MLA backend (vllm/v1/attention/backends/mla/
rocm_aiter_mla.py), its probes answered by aiter-probe.

Laid out as vLLM's file is: the module-level probes first, then
AiterMLAHelper (head validity and padding), then the implementation class
whose decode pads the query, runs the kernel and crops the output. Each
probe keeps vLLM's name and replaces its body, one by one (the rows of
BACKENDS.md):

    _aiter_mla_native_h24_reducer_supported   V1  reads reduce.cu
    _aiter_mla_native_h24_metadata_supported  V2  reads v1_2_device.cuh
    _aiter_mla_native_h24_supported           V1 + V2
    _aiter_mla_natively_supported             V2  the planner's predicate
                                                  per arch and dtypes
    AiterMLAHelper.get_actual_mla_num_heads,  V3  ceil to 16, repeat or tile
      get_mla_padded_q, get_mla_unpadded_o        per call
    _fp8_mla_prefill_supported                V4  gfx950 + try-import
    _fp8_mla_prefill_num_heads_supported      V5  num_heads % 16 == 0
    _gluon_mla_decode_supported               V6  two try-imports
    _gluon_mla_max_bh16_heads                 V7  a regex over getsource
    _segmented_mla_decode_supported           V8  gfx950 + import
    asm_lse_ps_kernel_qlen                    V10, V11  the constant {1, 4}

Arch gates (on_gfx950) stay vLLM's: the caller passes the arch where AITER
decides by it. Padding is by index tensors made once per head count and
device (AiterMLAHelper.padding), never a Python list per step: the query
is gathered with index_select (into a buffer made before CUDA graph
capture, when the decoder has one), the output is a strided view. Tensors
are torch's or numpy's.
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
    tests). The padding made from the one before is dropped."""
    global _BACKEND
    _BACKEND = backend
    AiterMLAHelper._paddings.clear()


# --- the probes, one by one ---------------------------------------------------


def _aiter_mla_native_h24_reducer_supported():
    return aiter_backend().mla_reducer_24_heads_512()


def _aiter_mla_native_h24_metadata_supported():
    return aiter_backend().mla_planner_24_heads()


def _aiter_mla_native_h24_supported():
    return aiter_backend().mla_decode_native_24_heads()


def _aiter_mla_natively_supported(arch, q_dtype, kv_dtype, num_heads, max_seqlen_q):
    """The planner's own rule for this arch and dtypes: True, False, or None
    when the tree cannot tell (then vLLM's padding applies). Answered by
    Backend.native_heads where the package has it."""
    backend = aiter_backend()
    if not hasattr(backend, "native_heads"):
        return None
    return backend.native_heads(arch, q_dtype, kv_dtype, num_heads, max_seqlen_q)


def _fp8_mla_prefill_supported(arch):
    """FP8 persistent ASM MLA prefill: vLLM's gfx950 gate, then the tree's
    answer (its entries exist and bind vLLM's calls)."""
    return arch.split(":")[0] == "gfx950" and aiter_backend().mla_prefill_fp8_persistent()


def _fp8_mla_prefill_num_heads_supported(num_heads, v_head_dim=128):
    """The FP8 prefill's reducer has this head count at v_head_dim (vLLM's
    num_heads % 16 == 0, which v0.1.20's reducer contradicts at 80 and 112)."""
    backend = aiter_backend()
    if hasattr(backend, "reducer_heads"):
        heads = backend.reducer_heads(v_head_dim)
        return heads is not None and num_heads in heads
    return (num_heads, v_head_dim) in backend.reducer_cases()


def _gluon_mla_decode_supported():
    """A Gluon MLA decode entry exists and takes small head counts."""
    return aiter_backend().gluon_mla_decode_small_heads()


def _gluon_mla_max_bh16_heads():
    return aiter_backend().gluon_mla_decode_max_heads()


def _segmented_mla_decode_supported(arch):
    """The DCP verify's segmented decode: vLLM's gfx950 gate, then the tree's
    answer (the Triton decode binds vLLM's call)."""
    return arch.split(":")[0] == "gfx950" and aiter_backend().mla_decode_segmented()


def asm_lse_ps_kernel_qlen(arch, causal=True):
    """The query lengths the persistent ASM decode with an LSE has a kernel
    for on arch (vLLM's constant {1, 4})."""
    return aiter_backend().ps_lse_qlens(arch, causal)


# --- padding: index tensors made once ----------------------------------------


class _Ops:
    """What padding needs of an array library, for torch tensors and numpy
    arrays alike."""

    @staticmethod
    def index(values, like):
        """values as an index on like's device (int64)."""
        module = type(like).__module__.split(".")[0]
        if module == "torch":
            import torch
            return torch.tensor(values, dtype=torch.int64, device=like.device)
        import numpy
        return numpy.asarray(values, dtype=numpy.int64)

    @staticmethod
    def gather_heads(x, index, out=None):
        """x[:, index] (heads are dim 1), contiguous, into out when given."""
        if type(x).__module__.split(".")[0] == "torch":
            import torch
            return torch.index_select(x, 1, index, out=out)
        import numpy
        return numpy.take(x, index, axis=1, out=out)


class MLAHeadPadding:
    """How num_heads query heads run as the decode's launch heads: the
    index tensors of the padding, made once per device, and the crop of
    the output, a strided view (the real heads of a padded launch are
    evenly spaced: every r-th when repeated, the first num_heads when
    tiled)."""

    def __init__(self, num_heads, backend):
        self.num_heads = num_heads
        self.launch_heads, self.mode = backend.mla_launch_heads(num_heads)
        self.reason = backend.why("mla_launch_heads", num_heads)
        self._pad = backend.mla_pad_index(num_heads)
        unpad = backend.mla_unpad_index(num_heads)
        self._crop = None
        if unpad is not None:
            step = unpad[1] - unpad[0] if len(unpad) > 1 else 1
            if list(range(unpad[0], unpad[0] + step * len(unpad), step)) != unpad:
                raise ValueError("%d heads: the real heads %s are not evenly spaced"
                                 % (num_heads, unpad))
            self._crop = slice(unpad[0], unpad[-1] + 1, step)
        self._index = {}  # device -> the padding's index tensor

    def index_on(self, like):
        """The padding's index tensor on like's device, made on first use
        (before CUDA graph capture: the decoder asks at construction)."""
        key = str(getattr(like, "device", "cpu"))
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = _Ops.index(self._pad, like)
        return index

    def pad(self, q, out=None):
        """q [tokens, num_heads, dim] as the launch heads, contiguous (the
        ASM decode reads it packed); q itself when no padding is needed."""
        if self._pad is None:
            return q
        return _Ops.gather_heads(q, self.index_on(q), out=out)

    def unpad(self, o):
        """The real heads of o [tokens, launch_heads, ...]: a view."""
        return o if self._crop is None else o[:, self._crop]


class AiterMLAHelper:
    """vLLM's AiterMLAHelper: head validity and padding, over the tree's
    launch plan (plans.mla_heads)."""

    _AITER_MIN_MLA_HEADS = 16
    _AITER_MAX_PADDED_MLA_HEADS = 128
    _paddings = {}  # num_heads -> MLAHeadPadding

    @staticmethod
    def check_num_heads_validity(num_heads):
        assert AiterMLAHelper.is_valid_num_heads(num_heads), (
            "ROCm AITER MLA takes 1 to %d heads, or a multiple of %d, not %d; try "
            "adjusting tensor_parallel_size" % (AiterMLAHelper._AITER_MAX_PADDED_MLA_HEADS,
                                               AiterMLAHelper._AITER_MIN_MLA_HEADS, num_heads))

    @staticmethod
    def is_valid_num_heads(num_heads):
        return num_heads > 0 and (num_heads <= AiterMLAHelper._AITER_MAX_PADDED_MLA_HEADS
                                  or num_heads % AiterMLAHelper._AITER_MIN_MLA_HEADS == 0)

    @staticmethod
    def padding(num_heads):
        """The MLAHeadPadding of num_heads, made once."""
        padding = AiterMLAHelper._paddings.get(num_heads)
        if padding is None:
            padding = MLAHeadPadding(num_heads, aiter_backend())
            AiterMLAHelper._paddings[num_heads] = padding
        return padding

    @staticmethod
    def get_actual_mla_num_heads(num_heads):
        return AiterMLAHelper.padding(num_heads).launch_heads

    @staticmethod
    def get_mla_padded_q(num_heads, q):
        return AiterMLAHelper.padding(num_heads).pad(q)

    @staticmethod
    def get_mla_unpadded_o(num_heads, o):
        return AiterMLAHelper.padding(num_heads).unpad(o)

    @staticmethod
    def get_mla_unpadded_lse(num_heads, lse):
        return AiterMLAHelper.padding(num_heads).unpad(lse)


class AiterMLADecode:
    """The decode half of vLLM's AiterMLAImpl: constructed once per layer
    with its head count, it checks the count, makes the padding's index
    tensor on the device, and, given max_tokens, the padded-query buffer a
    CUDA graph replays into; forward_mqa pads, runs decode_fn (AITER's
    mla_decode_fwd in vLLM; any per-head function in tests) and crops."""

    def __init__(self, num_heads, decode_fn, like=None, max_tokens=None):
        AiterMLAHelper.check_num_heads_validity(num_heads)
        self.num_heads = num_heads
        self.padding = AiterMLAHelper.padding(num_heads)
        self.decode_fn = decode_fn
        self._buffer = None
        if like is not None and self.padding.mode != "none":
            self.padding.index_on(like)
            if max_tokens is not None:
                shape = (max_tokens, self.padding.launch_heads) + tuple(like.shape[2:])
                self._buffer = _empty_like(like, shape)

    def forward_mqa(self, q, *args, **kwargs):
        """decode_fn over q [tokens, num_heads, dim] padded to the launch
        heads, its output cropped back to num_heads (a view)."""
        out = None
        if self._buffer is not None and q.shape[0] <= self._buffer.shape[0]:
            out = self._buffer[:q.shape[0]]
        return self.padding.unpad(self.decode_fn(self.padding.pad(q, out=out), *args, **kwargs))


def _empty_like(like, shape):
    if type(like).__module__.split(".")[0] == "torch":
        import torch
        return torch.empty(shape, dtype=like.dtype, device=like.device)
    import numpy
    return numpy.empty(shape, dtype=like.dtype)
