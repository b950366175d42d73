def mla_decode_fwd(q, kv_buffer, o, qo_indptr, kv_indptr, sm_scale=None, causal=False):
    return o


# the old signature is back until the kernel landsdef mla_decode_fwd(q, kv_buffer, o, qo_indptr, kv_indptr, sm_scale=None):
    return o
