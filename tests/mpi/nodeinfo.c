/*
 * mpitopo_comm_nodeinfo on MPI_COMM_WORLD, its duplicates, a split
 * subcommunicator (ranks reversed), a node communicator and MPI_COMM_SELF,
 * with and without MPITOPO_EMULATE. Every rank checks its own view against
 * the nodes expected from the launch (mt_node_keys). With MT_LEAK_DUP set,
 * a duplicate is never queried nor freed: finalize must still release the
 * cache (Open MPI then keeps the keyval for that communicator, so valgrind
 * runs should leave MT_LEAK_DUP unset).
 */
#include "mpitest.h"

#include <stdlib.h>

/* Expected nodes of the processes of comm, numbered by lowest rank in comm. */
static int *expected_nodes(MPI_Comm comm, const int *keys, int *nnodes)
{
    int size;
    MPI_Comm_size(comm, &size);
    int *w = mt_world_ranks(comm), *node = malloc((size_t)size * sizeof *node);
    *nnodes = 0;
    for (int i = 0; i < size; i++) {
        node[i] = -1;
        for (int j = 0; j < i && node[i] < 0; j++)
            if (keys[w[j]] == keys[w[i]])
                node[i] = node[j];
        if (node[i] < 0)
            node[i] = (*nnodes)++;
    }
    free(w);
    return node;
}

/* The members of sub, as ranks of comm, must be `want` (n of them, in order). */
static void check_members(MPI_Comm sub, MPI_Comm comm, const int *want, int n, const char *what)
{
    int size;
    MPI_Comm_size(sub, &size);
    if (!MT_CHECK(size == n, "%s has %d processes, expected %d", what, size, n))
        return;
    int *in = mt_ranks_in(sub, comm);
    for (int i = 0; i < n; i++)
        MT_CHECK(in[i] == want[i], "%s: member %d is rank %d of comm, expected %d", what, i,
                 in[i], want[i]);
    free(in);
}

static const mpitopo_nodeinfo_t *check_comm(MPI_Comm comm, const int *keys, const char *label)
{
    int rank, size, nnodes;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const mpitopo_nodeinfo_t *ni = NULL;
    if (!MT_CHECK_RC(mpitopo_comm_nodeinfo(comm, &ni)))
        return NULL;
    int *node = expected_nodes(comm, keys, &nnodes);
    int *mates = malloc((size_t)size * sizeof *mates);
    int *leaders = malloc((size_t)size * sizeof *leaders);
    int nmates = 0, nleaders = 0, lo = size, hi = 0, local_rank = -1;
    for (int n = 0; n < nnodes; n++) {
        int count = 0;
        for (int i = 0; i < size; i++)
            if (node[i] == n) {
                if (count++ == 0)
                    leaders[nleaders++] = i;
                if (n == node[rank]) {
                    if (i == rank)
                        local_rank = nmates;
                    mates[nmates++] = i;
                }
            }
        lo = count < lo ? count : lo;
        hi = count > hi ? count : hi;
    }
    MT_CHECK(ni->node == node[rank], "%s: node %d, expected %d", label, ni->node, node[rank]);
    MT_CHECK(ni->nnodes == nnodes, "%s: nnodes %d, expected %d", label, ni->nnodes, nnodes);
    MT_CHECK(ni->local_rank == local_rank && ni->local_size == nmates,
             "%s: local rank/size %d/%d, expected %d/%d", label, ni->local_rank, ni->local_size,
             local_rank, nmates);
    MT_CHECK(ni->min_local_size == lo && ni->max_local_size == hi,
             "%s: local sizes %d..%d, expected %d..%d", label, ni->min_local_size,
             ni->max_local_size, lo, hi);
    MT_CHECK(ni->emulated == (mt_getenv("MPITOPO_EMULATE") != NULL), "%s: emulated = %d", label,
             ni->emulated);
    check_members(ni->node_comm, comm, mates, nmates, "node_comm");
    if (MT_CHECK((ni->leader_comm != MPI_COMM_NULL) == (local_rank == 0),
                 "%s: leader_comm %s on local rank %d", label,
                 ni->leader_comm == MPI_COMM_NULL ? "null" : "set", local_rank) &&
        ni->leader_comm != MPI_COMM_NULL)
        check_members(ni->leader_comm, comm, leaders, nleaders, "leader_comm");
    const mpitopo_nodeinfo_t *again = NULL;
    MT_CHECK_RC(mpitopo_comm_nodeinfo(comm, &again));
    MT_CHECK(again == ni, "%s: second call returned another pointer", label);
    free(node);
    free(mates);
    free(leaders);
    return ni;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *keys = mt_node_keys();
    const mpitopo_nodeinfo_t *world = check_comm(MPI_COMM_WORLD, keys, "world");

    /* Duplicates share the cache, even when made before the first query. */
    MPI_Comm dup, dupdup, unqueried, leaked, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_dup(dup, &dupdup);
    MPI_Comm_dup(dup, &unqueried);
    if (mt_getenv("MT_LEAK_DUP"))
        MPI_Comm_dup(dup, &leaked);
    const mpitopo_nodeinfo_t *d1 = NULL, *d2 = NULL;
    MT_CHECK_RC(mpitopo_comm_nodeinfo(dup, &d1));
    MT_CHECK_RC(mpitopo_comm_nodeinfo(dupdup, &d2));
    MT_CHECK(d1 == world && d2 == world, "duplicates do not share the cache");

    /* A subcommunicator with its ranks reversed gets its own numbering. */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split);
    const mpitopo_nodeinfo_t *s = check_comm(split, keys, "split");
    MT_CHECK(s && s != world, "split shares the cache of world");

    /* Freeing the duplicates leaves the shared entry alive. */
    MPI_Comm_free(&dup);
    MPI_Comm_free(&unqueried);
    if (world) {
        MT_CHECK(world->nnodes >= 1, "world's entry damaged after freeing duplicates");
        MPI_Barrier(world->node_comm);
        /* node_comm can have its own cache: one node. */
        const mpitopo_nodeinfo_t *inner = NULL;
        if (MT_CHECK_RC(mpitopo_comm_nodeinfo(world->node_comm, &inner)))
            MT_CHECK(inner->nnodes == 1 && inner->local_size == world->local_size &&
                         inner->local_rank == world->local_rank,
                     "node_comm's own info: %d nodes, local %d/%d", inner->nnodes,
                     inner->local_rank, inner->local_size);
    }
    MPI_Comm_free(&split);

    /* MPI_COMM_SELF: its cache is released before our finalize hook runs. */
    const mpitopo_nodeinfo_t *self = NULL;
    if (MT_CHECK_RC(mpitopo_comm_nodeinfo(MPI_COMM_SELF, &self)))
        MT_CHECK(self->nnodes == 1 && self->local_size == 1 && self->node == 0 &&
                     self->leader_comm != MPI_COMM_NULL,
                 "MPI_COMM_SELF: %d nodes, local size %d", self->nnodes, self->local_size);
    /* dupdup stays (and leaked, never queried): finalize releases their shares. */
    free(keys);
    int rc = mt_finish("nodeinfo");
    MPI_Finalize();
    return rc;
}
