/*
 * Node IDs of an HHC virtual topology as the calls take them: the check of
 * an ID (its node, or an error naming the argument), and the communicator
 * (tree or cube) and rank of the hop between neighbouring nodes. Shared by
 * the queries (hhc.c), the routed messages (hhc_route.c) and the
 * collectives (hhc_coll.c).
 */
#include "hhc/hhc_internal.h"
#include "network/network_internal.h"

int mpitopo__hhc_check_id(const mpitopo_hhc_t *h, const char *func, const char *name, long long id,
                          int *node)
{
    *node = -1; /* defined on every return */
    if (!h)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "hhc = NULL");
    *node = mpitopo__hhc_node_of_id(h->dim, (int64_t)id);
    if (*node < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                               "%s = %#llx names no node of the %d-HHC (%d nibbles, each below 1000 "
                               "or 1000 for a centre, the top one below %d)",
                               name, id, h->dim, mpitopo__hhc_levels(h->dim),
                               1 << mpitopo__hhc_cube_dim(h->dim, mpitopo__hhc_levels(h->dim)));
    return MPITOPO_SUCCESS;
}

/* The communicator and rank of the hop from node a to its neighbour b. */
void mpitopo__hhc_hop(int dim, int a, int b, int *which, int *rank)
{
    int qa, qb;
    int pa = mpitopo__hhc_parent(dim, a, &qa), pb = mpitopo__hhc_parent(dim, b, &qb);
    if (pa >= 0 && pa == pb) {
        *which = MPITOPO_HHC_CUBE;
        *rank = qb;
    } else {
        *which = MPITOPO_HHC_TREE;
        *rank = b;
    }
}
