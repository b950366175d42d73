// Fixture: a reducer router in the one-line layout, 24 x 512 among its cases.
#include <cstdint>

#define MLA_REDUCE_CASE_IF(NUM_HEAD, NUM_HEAD_C, HEAD_DIM, HEAD_DIM_C, SPLITS, NAME, ...) \
    if(((NUM_HEAD) == (NUM_HEAD_C)) && ((HEAD_DIM) == (HEAD_DIM_C)))                    \
    {                                                                                   \
        run_reduce<NUM_HEAD_C, HEAD_DIM_C>(SPLITS, __VA_ARGS__);                        \
    }
#define MLA_REDUCE_CASE_EF(NUM_HEAD, NUM_HEAD_C, HEAD_DIM, HEAD_DIM_C, SPLITS, NAME, ...) \
    else MLA_REDUCE_CASE_IF(NUM_HEAD, NUM_HEAD_C, HEAD_DIM, HEAD_DIM_C, SPLITS, NAME, __VA_ARGS__)

#define MLA_REDUCE_ROUTER(NUM_HEAD, HEAD_DIM, SPLITS, NAME, ...)                \
    MLA_REDUCE_CASE_IF(NUM_HEAD, 1, HEAD_DIM, 128, SPLITS, NAME, __VA_ARGS__)   \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 8, HEAD_DIM, 512, SPLITS, NAME, __VA_ARGS__)   \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 16, HEAD_DIM, 512, SPLITS, NAME, __VA_ARGS__)  \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 24, HEAD_DIM, 512, SPLITS, NAME, __VA_ARGS__)  \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 32, HEAD_DIM, 512, SPLITS, NAME, __VA_ARGS__)  \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 64, HEAD_DIM, 64, SPLITS, NAME, __VA_ARGS__)   \
    MLA_REDUCE_CASE_EF(NUM_HEAD, 128, HEAD_DIM, 512, SPLITS, NAME, __VA_ARGS__) \
    else report_unsupported(NAME, NUM_HEAD, HEAD_DIM);

void reduce_entry(int32_t heads, int32_t dim, int32_t splits, void* args)
{
    MLA_REDUCE_ROUTER(heads, dim, splits, "reduce_entry", args)
}
