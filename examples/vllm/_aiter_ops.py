# SPDX-License-Identifier: MIT
"""vLLM's AITER op registry (vllm/_aiter_ops.py), its capability probes
answered by aiter-probe.

vLLM keeps one class, rocm_aiter_ops, whose class methods say which
keywords and ops the installed AITER has, each by an inspect.signature,
a hasattr or a trial call made on first use. Here each keeps vLLM's name
and asks the Backend instead, one by one (the rows of BACKENDS.md):

    _check_aiter_mla_fp8_support            V12  inspect.signature
    mla_decode_supports_non_causal          V13  inspect.signature
    mla_decode_fwd_binds                    V14  none today: the call shape
                                                 of the caller's revision
    mla_decode_supports_return_lse          V15  none today
    topk_softmax_supports_fused_sigmoid     V16  signature, then the schema
    fused_moe_supports_gate_mode            V17  inspect.signature
    dsv4_shared_expert_fused_moe_available  V18  getattr (the static half;
                                                 the per-M limits stay the
                                                 trial call's)
    qr_all_reduce_rmsnorm_available         V19  hasattr (the export)
    is_hipb_mm_available                    V23  hasattr(aiter, "hipb_mm")

What the tree cannot tell answers as vLLM would without the feature: the
call is made without the keyword, the op is not used.
"""

import rocm_aiter_mla

# vLLM's call of aiter.mla.mla_decode_fwd, as its _rocm_aiter_mla_decode_fwd_impl
# makes it: positional q, kv_buffer, o, qo_indptr, kv_indptr, kv_indices,
# kv_last_page_lens, max_seqlen_qo, then keywords.
MLA_DECODE_FWD_POSITIONAL = 8


class rocm_aiter_ops:  # noqa: N801: vLLM's name
    @classmethod
    def _backend(cls):
        return rocm_aiter_mla.aiter_backend()

    @classmethod
    def _check_aiter_mla_fp8_support(cls):
        return {"q_scale", "kv_scale"} <= cls._backend().mla_decode_fwd_keywords()

    @classmethod
    def mla_decode_supports_non_causal(cls):
        return "causal" in cls._backend().mla_decode_fwd_keywords()

    @classmethod
    def mla_decode_supports_return_lse(cls):
        return "return_lse" in cls._backend().mla_decode_fwd_keywords()

    @classmethod
    def mla_decode_fwd_binds(cls, keywords):
        """Whether vLLM's own call of aiter.mla.mla_decode_fwd, with these
        keywords, binds: True, False, or None when the tree cannot tell.
        Backend.binds answers for any call shape where the package has it;
        else only the optional keywords are known."""
        backend = cls._backend()
        if hasattr(backend, "binds"):
            return backend.binds("aiter.mla.mla_decode_fwd", MLA_DECODE_FWD_POSITIONAL,
                                 tuple(keywords))
        optional = {"q_scale", "kv_scale", "causal", "return_lse"}
        if not set(keywords) <= optional:
            return None
        return set(keywords) <= backend.mla_decode_fwd_keywords()

    @classmethod
    def topk_softmax_supports_fused_sigmoid(cls):
        return cls._backend().topk_softmax_shared_experts()

    @classmethod
    def fused_moe_supports_gate_mode(cls):
        return cls._backend().fused_moe_gate_mode()

    @classmethod
    def dsv4_shared_expert_fused_moe_available(cls):
        return cls._backend().fused_moe_dsv4_shared_expert()

    @classmethod
    def qr_all_reduce_rmsnorm_available(cls):
        return cls._backend().qr_all_reduce_rmsnorm()

    @classmethod
    def is_hipb_mm_available(cls):
        return cls._backend().hipb_mm()
