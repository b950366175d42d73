#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PyTorch eager peer of bench-mla: the same MLA decode shapes (batch 64,
q [64, H, 576] bf16, a paged KV cache [pages, page_size, 576] bf16 with
scattered pages, output [64, H, 512]) through einsum, gather and softmax, timed
the same way (median of 25 runs after 5 warm-up runs, CUDA events). KV GB/s
counts each KV byte once, as bench-mla does. Prints a Markdown table."""
import statistics
import sys

import torch

BATCH, DIM, LATENT, WARMUP, REPS = 64, 576, 512, 5, 25


def decode(q, kv_cache, block_table, scale):
    # gather each sequence's pages into [batch, context, 576]
    kv = kv_cache[block_table].reshape(q.shape[0], -1, DIM)
    scores = torch.einsum("bhd,btd->bht", q, kv).float() * scale
    p = torch.softmax(scores, dim=-1).to(q.dtype)
    return torch.einsum("bht,btd->bhd", p, kv[..., :LATENT])


def time_us(fn):
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    return statistics.median(times)


def main():
    if not torch.cuda.is_available():
        print("bench-mla-torch: no CUDA device", file=sys.stderr)
        return 77
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(7)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| heads | context | page size | eager time (us) | KV GB/s |")
    print("|---:|---:|---:|---:|---:|")
    for ctx in (8192, 32768):
        for ps in (1, 64):
            pages_per_seq = (ctx + ps - 1) // ps
            pages = BATCH * pages_per_seq + BATCH
            kv_cache = (torch.rand(pages, ps, DIM, device=dev, generator=gen) * 2 - 1).to(torch.bfloat16)
            block_table = torch.randperm(pages, device=dev, generator=gen)[: BATCH * pages_per_seq]
            block_table = block_table.view(BATCH, pages_per_seq)
            kv_bytes = BATCH * ctx * DIM * 2
            for heads in (16, 24, 32, 64, 128):
                q = ((torch.rand(BATCH, heads, DIM, device=dev, generator=gen) * 12 - 6)
                     .to(torch.bfloat16))
                us = time_us(lambda: decode(q, kv_cache, block_table, DIM ** -0.5))
                print(f"| {heads} | {ctx} | {ps} | {us:.1f} | {kv_bytes / (us * 1e3):.0f} |")
                del q
            del kv_cache, block_table
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
