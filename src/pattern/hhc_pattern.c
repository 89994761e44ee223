/*
 * The HHC's links as a communication pattern ("hhc:D"): process i is end
 * node i of the network "hhc:D" (src/network/hhc.c), and every link of the
 * network is a pair of edges of weight 1 (one message of one byte each
 * way): the k-cube links between the leaves of every cube and the links
 * between each leaf and its centre. Evaluating it on the network itself
 * (mpitopo eval --pattern hhc:5 --network hhc:5) gives one hop per edge.
 */
#include "network/network_internal.h"
#include "pattern/pattern_internal.h"

/* Above this the pattern (5 edges a node) outgrows any use it could have. */
#define HHC_PATTERN_MAX_DIM 24

int mpitopo__hhc_pattern(int D, mpitopo_pattern_t **pattern)
{
    static const char *const fn = "mpitopo_pattern_from_string";
    if (D < 1 || D > HHC_PATTERN_MAX_DIM)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, fn, "hhc:%d: the dimension must be in [1, %d]", D,
                               HHC_PATTERN_MAX_DIM);
    int n = mpitopo__hhc_nnodes(D);
    mpitopo__coo_t coo;
    mpitopo__coo_init(&coo, 0, fn);
    int rc = mpitopo__coo_reserve(&coo, (int64_t)n * 6);
    for (int v = 0; rc == MPITOPO_SUCCESS && v < n; v++) {
        int q, centre = mpitopo__hhc_parent(D, v, &q);
        if (centre < 0)
            continue; /* the top centre: its links are its leaves' */
        int k = mpitopo__hhc_cube_dim(D, mpitopo__hhc_level(D, v) + 1);
        rc = mpitopo__coo_push(&coo, v, centre, 1, 1);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo__coo_push(&coo, centre, v, 1, 1);
        for (int e = 0; rc == MPITOPO_SUCCESS && e < k; e++)
            rc = mpitopo__coo_push(&coo, v, mpitopo__hhc_child(D, centre, q ^ 1 << e), 1, 1);
    }
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__coo_free(&coo);
        return rc;
    }
    return mpitopo__pattern_from_coo(n, &coo, pattern);
}
