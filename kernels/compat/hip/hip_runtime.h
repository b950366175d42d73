/* SPDX-License-Identifier: MIT */
/* Stands in for ROCm's header when the HIP sources are built with nvcc. */
#include "../../hip-cuda.h"
