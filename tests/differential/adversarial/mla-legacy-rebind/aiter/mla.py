def _legacy(q, kv_buffer, o, qo_indptr, kv_indptr, sm_scale=None):
    return o


def mla_decode_fwd(q, kv_buffer, o, qo_indptr, kv_indptr, sm_scale=None, causal=False):
    return o


mla_decode_fwd = _legacy
