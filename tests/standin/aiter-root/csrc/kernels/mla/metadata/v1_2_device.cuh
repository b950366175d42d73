// Fixture: a planner with a branch of its own for 24 heads.
#pragma once
#include <cstdint>

inline int32_t plan_launch_heads(int32_t num_heads, int32_t seqlen_qo)
{
    if(num_heads == 16 || num_heads == 128)
        return num_heads;
    if(num_heads == 24)
    {
        // one 32-row tile holds the 24 heads of a query position
        return 24;
    }
    return (num_heads % 16 == 0) ? 16 * seqlen_qo : -1;
}
