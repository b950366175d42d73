# SPDX-License-Identifier: MIT
"""The stand-in's MLA metadata: one work item per sequence, no KV split, the
head count it was planned for kept in work_metadata_ptrs[0], so a decode
launched with another head count is caught, as a real planner's buffers
sized for one head count and a launch with another would be."""
import torch

from .._standin import told


def get_mla_metadata_info_v1(
    batch_size,
    max_seqlen_qo,
    num_head_qo,
    q_dtype,
    kv_dtype,
    is_sparse,
    fast_mode=True,
    num_kv_splits=32,
    intra_batch_mode=False,
    max_split_per_batch=-1,
):
    rejected = told("reject")
    if rejected is not None and int(rejected) == num_head_qo:
        raise AssertionError("stand-in: num_head_qo=%d is not supported" % num_head_qo)
    tiles = batch_size * max_seqlen_qo
    return (
        ((2,), torch.uint64),
        ((batch_size + 1,), torch.int32),
        ((tiles, 8), torch.int32),
        ((tiles + 1,), torch.int32),
        ((tiles, 2), torch.int32),
        ((tiles,), torch.int32),
    )


def get_mla_metadata_v1(
    seqlens_qo_indptr,
    seqlens_kv_indptr,
    kv_last_page_lens,
    num_heads_per_head_k,
    num_heads_k,
    is_causal,
    work_metadata_ptrs,
    work_info_set,
    work_indptr,
    reduce_indptr,
    reduce_final_map,
    reduce_partial_map,
    page_size=1,
    kv_granularity=16,
    max_seqlen_qo=-1,
    uni_seqlen_qo=-1,
    fast_mode=True,
    topk=-1,
    max_split_per_batch=-1,
    intra_batch_mode=False,
    is_cp_round_robin=False,
    mla_version=0,
    dtype_q_nope=None,
    dtype_q_rope=None,
    dtype_kv_nope=None,
    dtype_kv_rope=None,
    dtype_q=None,
    dtype_kv=None,
):
    batch = seqlens_kv_indptr.numel() - 1
    kv = seqlens_kv_indptr.numpy_values()
    work_metadata_ptrs.store([num_heads_per_head_k * num_heads_k, batch])
    work_indptr.store(list(range(batch + 1)))
    info = [[b, -1, b, b + 1, int(kv[b]), int(kv[b + 1]), 0, 0] for b in range(batch)]
    work_info_set.store(info)
    reduce_indptr.store(list(range(batch + 1)))
    reduce_final_map.store([[b, b + 1] for b in range(batch)])
    reduce_partial_map.store(list(range(batch)))
