def mla_decode_fwd(q, kv_buffer, o, qo_indptr, kv_indptr, kv_indices, kv_last_page_lens,
                   max_seqlen_q, sm_scale=None, logit_cap=0.0, num_kv_splits=None,
                   q_scale=None, kv_scale=None, return_lse=False):
    """Decode. (A docstring that mentions causal does not make it a parameter.)"""
    ...
