// A small stand-in for a split-KV reducer: the test manifests describe this tree.
#define REDUCE_CASE(NUM_HEAD_V, HEAD_DIM_V) \
    case (NUM_HEAD_V) * 1024 + (HEAD_DIM_V): launch_reduce<NUM_HEAD_V, HEAD_DIM_V>(); break;

void dispatch_reduce(int num_heads, int head_dim)
{
    switch (num_heads * 1024 + head_dim) {
    MLA_REDUCE_CASE_EF(NUM_HEAD, 16, HEAD_DIM, 128, REDUCE_CASE)
    MLA_REDUCE_CASE_EF(NUM_HEAD, 16, HEAD_DIM, 512, REDUCE_CASE)
    MLA_REDUCE_CASE_EF(NUM_HEAD, 24, HEAD_DIM, 512, REDUCE_CASE)
    MLA_REDUCE_CASE_EF(NUM_HEAD, 32, HEAD_DIM, 512, REDUCE_CASE)
    MLA_REDUCE_CASE_EF(NUM_HEAD, 64, HEAD_DIM, 512, REDUCE_CASE)
    default: fail_unsupported(num_heads, head_dim);
    }
}
