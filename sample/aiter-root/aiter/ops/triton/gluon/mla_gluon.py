def mla_gluon(q_nope, q_pe, kv_c, o, page_table, seq_info, sm_scale, k_pe=None,
              kv_pe_offset=0, use_2d_view=False, kv_scale=None, min_kv_seq_len=1,
              return_lse=False):
    nhead = q_nope.shape[1]
    if nhead in (64, 128):
        pass
    elif 1 <= nhead <= 16:
        pass
    else:
        raise ValueError("nhead must be <= 128")
