__all__ = ["get_mla_metadata_v1", "mla_reduce_v1"]


def compile_ops(name, fc_name=None):
    def wrap(fn):
        return fn
    return wrap


@compile_ops("module_mla_metadata")
def get_mla_metadata_v1(
    seqlens_qo_indptr, seqlens_kv_indptr, num_heads_per_head_k, num_heads_k, is_causal,
    work_metadata_ptrs, work_info_set, work_indptr, reduce_indptr, reduce_final_map,
    reduce_partial_map, split_params, page_size=1, kv_granularity=16, max_seqlen_qo=-1,
    uni_seqlen_qo=-1, fast_mode=True, dtype_q=None, dtype_kv=None,
):
    ...


@compile_ops("module_mla_reduce")
def mla_reduce_v1(partial_output, partial_lse, reduce_indptr, reduce_final_map,
                  reduce_partial_map, final_output, final_lse=None):
    # an older reducer: no num_kv_splits, so vLLM's 9-positional call fails
    ...
