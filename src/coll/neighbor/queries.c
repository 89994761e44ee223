/*
 * The public neighbour queries (T. Hoefler, F. Lorenzen, D. Gregor, A.
 * Lumsdaine, "Topological Collectives for MPI-2", section 2.2): the
 * canonical lists every schedule uses (engine/neighbors.c), read through the
 * neighbourhood collectives' entry of the communicator, so a query and a
 * later collective share one entry. Also the internal queries the tests
 * make of an entry (messages sent, the tuner's state, host defects).
 */
#include "coll/coll_internal.h"

int mpitopo_comm_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree)
{
    mpitopo__nbr_t *n;
    int rc = mpitopo__nbr_get(comm, __func__, &n);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (indegree)
        *indegree = n->indegree;
    if (outdegree)
        *outdegree = n->outdegree;
    return MPITOPO_SUCCESS;
}

/* Check that list (degree entries) can be copied into out (max entries). */
static int check_list(int degree, int max, const int *out, const char *what, const char *maxname)
{
    if (max < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_comm_neighbors", "%s = %d must be >= 0",
                                 maxname, max);
    if (max > 0 && degree > 0 && !out)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_comm_neighbors",
                                 "%s = NULL with %s = %d and degree %d", what, maxname, max,
                                 degree);
    return MPITOPO_SUCCESS;
}

static void copy_list(const int *list, int degree, int max, int *out)
{
    for (int i = 0; i < max && i < degree; i++)
        out[i] = list[i];
}

int mpitopo_comm_neighbors(MPI_Comm comm, int maxindegree, int sources[], int maxoutdegree,
                           int destinations[])
{
    mpitopo__nbr_t *n;
    int rc = mpitopo__nbr_get(comm, __func__, &n);
    if (rc == MPITOPO_SUCCESS)
        rc = check_list(n->indegree, maxindegree, sources, "sources", "maxindegree");
    if (rc == MPITOPO_SUCCESS)
        rc = check_list(n->outdegree, maxoutdegree, destinations, "destinations", "maxoutdegree");
    if (rc != MPITOPO_SUCCESS)
        return rc;
    copy_list(n->sources, n->indegree, maxindegree, sources);
    copy_list(n->destinations, n->outdegree, maxoutdegree, destinations);
    return MPITOPO_SUCCESS;
}

int mpitopo__coll_sends(MPI_Comm comm, long long *sends)
{
    mpitopo__nbr_t *n;
    int rc = mpitopo__nbr_get(comm, __func__, &n);
    if (rc == MPITOPO_SUCCESS)
        *sends = n->sends;
    return rc;
}

int mpitopo__tune_state(MPI_Comm comm, int op, long long sb, long long rb, int *explored,
                        int *decided, int *sched, int *source)
{
    mpitopo__nbr_t *n;
    int rc = mpitopo__nbr_get(comm, __func__, &n);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    return mpitopo__tune_entry_state(n->tune, op, sb, rb, explored, decided, sched, source);
}

/* For tests/mpi/host_defects.c: the row for op on comm's lists. */
const char *mpitopo__test_host_defect(MPI_Comm comm, int op)
{
    mpitopo__nbr_t *n;
    if (op < 0 || op >= MPITOPO__OPK_COUNT || mpitopo__nbr_get(comm, __func__, &n) != MPITOPO_SUCCESS)
        return NULL;
    return mpitopo__host_defect(n, (mpitopo__opkind_t)op);
}
