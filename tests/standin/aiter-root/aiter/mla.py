# SPDX-License-Identifier: MIT
"""The stand-in's MLA decode: softmax(q k^T * sm_scale) v over each sequence's
pages, in float32 with numpy, written into o as bfloat16."""
import os
import signal
import time

import numpy as np

from ._standin import told


def mla_decode_fwd(
    q,
    kv_buffer,
    o,
    qo_indptr,
    kv_indptr,
    kv_indices,
    kv_last_page_lens,
    max_seqlen_q,
    page_size=1,
    nhead_kv=1,
    sm_scale=None,
    logit_cap=0.0,
    num_kv_splits=None,
    num_kv_splits_indptr=None,
    work_meta_data=None,
    work_indptr=None,
    work_info_set=None,
    reduce_indptr=None,
    reduce_final_map=None,
    reduce_partial_map=None,
    q_scale=None,
    kv_scale=None,
    intra_batch_mode=False,
    return_logits=False,
    return_lse=False,
    g_kv_indptr=None,
    cp_world_size=1,
    cp_rank=0,
    causal=True,
):
    device = q.device.index
    if told("raise", device):
        raise RuntimeError("stand-in: kernel launch failed (hipErrorLaunchFailure)")
    if told("hang", device):
        while True:
            time.sleep(60)
    if told("crash", device):
        os.kill(os.getpid(), signal.SIGSEGV)
    total, heads, dv = o.shape
    if work_meta_data is not None:
        planned = int(work_meta_data.numpy_values()[0])
        if planned != heads:
            raise RuntimeError("stand-in: metadata planned for %d heads, launched with %d"
                               % (planned, heads))
    qv = q.numpy_values()
    pages = kv_buffer.numpy_values()
    qk = pages.shape[-1]
    scale = sm_scale if sm_scale is not None else 1.0 / qk ** 0.5
    flat = pages.reshape(-1, qk)
    indptr = kv_indptr.numpy_values()
    indices = kv_indices.numpy_values()
    last = kv_last_page_lens.numpy_values()
    out = np.empty((total, heads, dv), dtype=np.float32)
    for b in range(total):
        ids = indices[indptr[b]:indptr[b + 1]]
        slots = (ids[:, None] * page_size + np.arange(page_size)[None, :]).reshape(-1)
        n = (len(ids) - 1) * page_size + int(last[b])
        k = flat[slots[:n]]
        s = qv[b] @ k.T * scale
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out[b] = (p @ k[:, :dv]) / p.sum(axis=1, keepdims=True)
    if told("wrong", device):
        out += 0.25
    o.store(out)
    if told("overflow", device):
        past = np.lib.stride_tricks.as_strided(o._a.reshape(-1), shape=(o.numel() + 512,))
        past[o.numel():] = 0x4242
    return None, None
