/* The thesis's chapter-5 setups shared by the GPU unit tests (test_gpu.c,
 * test_gpu_bound.c): clusters A and B (their GPU trees and the job's
 * slots) and the 2-D, 3-D and COL patterns of 64 processes, 1 MiB
 * messages, plain or weighted (3x along the first dimension). */
#ifndef MPITOPO_TEST_GPU_THESIS_H
#define MPITOPO_TEST_GPU_THESIS_H

#include "unit.h"

#define CLUSTER_A "package:2@38,switch:2@16,board:2@16,gpu:2@16"
#define CLUSTER_B "package:2@38,switch:2@16,gpu:2@16"

/* kind 0: 2-D, 1: 3-D, 2: COL. */
static inline mpitopo_pattern_t *thesis_pattern(int kind, int weighted)
{
    static const char *const plain[] = {"cart:8x8:bytes=1048576", "cart:4x4x4:bytes=1048576",
                                        "alltoall:4x4x4:1,0,0:bytes=1048576"};
    static const char *const heavy[] = {"cart:8x8:weights=3,1:bytes=1048576",
                                        "cart:4x4x4:weights=3,1,1:bytes=1048576",
                                        "alltoall:4x4x4:1,0,0:bytes=1048576"};
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_from_string(weighted ? heavy[kind] : plain[kind], &p));
    return p;
}

#endif
