// SPDX-License-Identifier: MIT
// Sample MLA split-KV reducer: the dispatch shape of AITER's, not its kernels.

#include <cstdint>
#include <stdexcept>
#include <string>

template <int32_t kHeads, int32_t kHeadDim, int32_t kMaxSplits>
void launch_mla_reduce(const float* partial_lse, const void* partial_out, void* out,
                       int32_t batch);

// Fewer splits per head fit in registers; more spill to LDS.
#define MLA_REDUCE_CASE(HEADS_C, DIM_C, SPLITS, ...)           \
    if((SPLITS) <= 4)                                          \
        launch_mla_reduce<HEADS_C, DIM_C, 4>(__VA_ARGS__);     \
    else                                                       \
        launch_mla_reduce<HEADS_C, DIM_C, 64>(__VA_ARGS__);

#define MLA_REDUCE_CASE_IF(HEADS, HEADS_C, DIM, DIM_C, SPLITS, NAME, ...) \
    if(((HEADS) == (HEADS_C)) && ((DIM) == (DIM_C)))                      \
    {                                                                     \
        MLA_REDUCE_CASE(HEADS_C, DIM_C, SPLITS, __VA_ARGS__)              \
    }

#define MLA_REDUCE_CASE_EF(HEADS, HEADS_C, DIM, DIM_C, SPLITS, NAME, ...) \
    else MLA_REDUCE_CASE_IF(HEADS, HEADS_C, DIM, DIM_C, SPLITS, NAME, __VA_ARGS__)

#define MLA_REDUCE_ERROR(HEADS, DIM, NAME)                                 \
    else throw std::invalid_argument(std::string(NAME) + ": no case for " + \
                                     std::to_string(HEADS) + " heads x " +  \
                                     std::to_string(DIM));

#define MLA_REDUCE_ROUTER(NUM_HEAD, HEAD_DIM, SPLITS, NAME, ...)                \
    MLA_REDUCE_CASE_IF(NUM_HEAD, 16, HEAD_DIM, 128, SPLITS, NAME, __VA_ARGS__)  \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 16, HEAD_DIM, 512, SPLITS, NAME, __VA_ARGS__)  \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 24, HEAD_DIM, 512, SPLITS, NAME, __VA_ARGS__)  \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 32, HEAD_DIM, 512, SPLITS, NAME, __VA_ARGS__)  \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 64, HEAD_DIM, 512, SPLITS, NAME, __VA_ARGS__)  \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 128, HEAD_DIM, 512, SPLITS, NAME, __VA_ARGS__) \
    MLA_REDUCE_ERROR(NUM_HEAD, HEAD_DIM, NAME)

void mla_reduce(const float* partial_lse, const void* partial_out, void* out, int32_t batch,
                int32_t num_heads, int32_t head_dim, int32_t max_splits)
{
    MLA_REDUCE_ROUTER(num_heads, head_dim, max_splits, "mla_reduce",
                      partial_lse, partial_out, out, batch)
}
