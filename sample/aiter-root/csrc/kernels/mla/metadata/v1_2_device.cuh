// SPDX-License-Identifier: MIT
// Sample MLA metadata planner (v1.2): how a head count reaches the decode kernel.
#pragma once

#include <cstdint>
#include <stdexcept>

struct MlaLaunchPlan
{
    int32_t launch_heads; // heads the decode kernel is launched with
    int32_t fold;         // query positions folded into one 16-head tile
};

// Head counts with a decode kernel of their own: no padding, no folding.
inline bool mla_v1_2_native(int32_t num_heads, bool kv_is_fp8)
{
    return (num_heads == 16) || (num_heads == 24) || (num_heads == 32) ||
           ((num_heads == 128) && kv_is_fp8);
}

inline MlaLaunchPlan mla_v1_2_plan(int32_t num_heads, bool kv_is_fp8)
{
    if(mla_v1_2_native(num_heads, kv_is_fp8))
        return {num_heads, 1};
    if(num_heads % 16 == 0)
        return {16, num_heads / 16};
    throw std::invalid_argument("mla metadata v1.2: unsupported number of heads");
}
