/* All-to-all inside the sub-communicators of a Cartesian grid (the
 * MPI_Cart_sub groups), the third microbenchmark of S. H. Mirsadeghi's
 * PhD thesis (Queen's University 2017), section 3.4.1. */
#include "pattern/pattern_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* The most offsets a stencil may have (mpitopo_pattern_cart's limit). */
#define MAX_OFFSETS (1 << 20)

/* Sizes and flags, checked as the caller gave them; *group is the number of
 * processes in one sub-communicator. */
static int check_args(int ndims, const int *dims, const int *remain_dims, double bytes,
                      int64_t *group)
{
    const char *const func = "mpitopo_pattern_subcomm_alltoall";
    if (ndims < 0 || ndims > MPITOPO_MAX_DIMS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "ndims = %d must be in [0, %d]", ndims,
                               MPITOPO_MAX_DIMS);
    if (ndims > 0 && !dims)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "dims must not be NULL when ndims = %d",
                               ndims);
    if (!(isfinite(bytes) && bytes >= 0))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "bytes = %g must be finite and >= 0", bytes);
    int64_t n = 1, g = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 1)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "dims[%d] = %d must be >= 1", i,
                                   dims[i]);
        n *= dims[i];
        if (n > INT_MAX)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, func,
                                   "dims[0..%d] hold more than %d processes", i, INT_MAX);
        if (!remain_dims || remain_dims[i])
            g *= dims[i];
    }
    if (g - 1 > MAX_OFFSETS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, func,
                               "a sub-communicator of %lld processes: more than %d peers (the "
                               "limit of every stencil)",
                               (long long)g, MAX_OFFSETS);
    *group = g;
    return MPITOPO_SUCCESS;
}

/* Every non-zero offset of the kept dimensions, each component in
 * [0, dims[i]) (an odometer, last dimension fastest): on a periodic grid
 * they reach every other member of the sub-communicator exactly once. */
static void fill_offsets(int ndims, const int *dims, const int *remain_dims, int noffsets,
                         int *offsets)
{
    int o[MPITOPO_MAX_DIMS] = {0};
    for (int k = 0; k < noffsets; k++) {
        int i = ndims - 1;
        for (; i >= 0; i--) {
            if (remain_dims && !remain_dims[i])
                continue;
            if (++o[i] < dims[i])
                break;
            o[i] = 0;
        }
        memcpy(offsets + (size_t)k * (size_t)ndims, o, (size_t)ndims * sizeof *o);
    }
}

int mpitopo_pattern_subcomm_alltoall(int ndims, const int *dims, const int *remain_dims,
                                     double bytes, mpitopo_pattern_t **pattern)
{
    if (!pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern must not be NULL");
    *pattern = NULL;
    int64_t group = 0;
    int rc = check_args(ndims, dims, remain_dims, bytes, &group);
    if (rc)
        return rc;
    int noffsets = (int)(group - 1);
    int *offsets = NULL;
    if (noffsets > 0) {
        offsets = mpitopo__malloc_array((size_t)noffsets * (size_t)ndims, sizeof *offsets);
        if (!offsets)
            return MPITOPO_NOMEM("the offsets");
        fill_offsets(ndims, dims, remain_dims, noffsets, offsets);
    }
    /* The grid is periodic so that the offsets wrap round inside each group;
     * the pattern then keeps the grid, and the Cartesian mappers and bounds
     * apply to it. */
    mpitopo_stencil_t s = {MPITOPO_STENCIL_OFFSETS, 0, noffsets, offsets, NULL, NULL, bytes};
    rc = mpitopo_pattern_cart(ndims, dims, NULL, &s, pattern);
    mpitopo__free(offsets);
    if (rc)
        return MPITOPO_FAIL_RESTATE(rc, __func__, "%d dimensions, groups of %lld", ndims,
                                    (long long)group);
    return MPITOPO_SUCCESS;
}
