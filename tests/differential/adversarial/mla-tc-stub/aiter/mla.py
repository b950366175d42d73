from .jit import compile_ops


@compile_ops("module_mla")
def mla_decode_fwd(q, kv_buffer, o, qo_indptr, kv_indptr, sm_scale=None, logit_cap=0.0):
    return o


from typing import TYPE_CHECKING

if TYPE_CHECKING:
    def mla_decode_fwd(q, kv_buffer, o, qo_indptr, kv_indptr, sm_scale=None,
                       logit_cap=0.0, causal=False) -> None: ...
