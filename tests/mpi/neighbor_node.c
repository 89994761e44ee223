/*
 * The node-aware aggregation schedule ("node") of mpitopo's neighbourhood
 * collectives: one message per pair of nodes, then a scatter in the node.
 * Under MPITOPO_NEIGHBOR=node (blocking, nonblocking) and the _init info
 * key mpitopo_neighbor=node (persistent, two runs, new data the second
 * time), every operation on dense random dist-graphs (duplicate and self
 * edges, a zero-degree process), a periodic Moore neighbourhood, a graph
 * communicator whose rank 0 (a node leader) has no neighbour, and
 * Cartesian communicators (periodic dimensions of size 1 and 2, open ones
 * with MPI_PROC_NULL): byte for byte against MPI_Neighbor_* (not alltoall
 * with duplicate edges under MPICH 4.0, which delivers them in reverse
 * order, nor alltoallw there) and against the data each neighbour sent;
 * Cartesian ones against mpitopo's linear schedule, which follows the
 * MPI-4 erratum where MPI libraries differ. The v and w forms run again
 * with per-edge counts that vary (zeros included), alltoallw mixing
 * MPI_INT blocks with a strided vector type on either side. Harness:
 * common/nbrtest.c.
 *
 * Then the point: with several nodes (emulated, or MPICH's cliques), one
 * call of each operation on a dense random graph sends fewer messages in
 * total under "node" than under "linear" (the library's counter), so a
 * silent fall back to linear fails; and alltoallv with receive counts one
 * too small on blocks from other nodes fails with MPI_ERR_TRUNCATE at the
 * receiver, without a hang.
 */
#include "nbrtest.h"

#include <stdio.h>
#include <stdlib.h>

static int nnodes;

static void check_all(const nt_graph_t *g)
{
    static const int cnts[] = {1, 5, 513};
    for (nt_vary = 0; nt_vary < 2; nt_vary++) {
        int op0 = nt_vary ? AGV : AG;
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpitopo_neighbor", "node");
        for (int op = op0; op < NOPS; op += nt_vary && op == AGV ? 2 : 1)
            for (int c = 0; c < 3; c++)
                nt_check_one(g, op, PERSISTENT, cnts[c], info, "info node");
        MPI_Info_free(&info);
        /* 5 ints only persistent: the tests run at 16 ranks under MPICH. */
        for (int op = op0; op < NOPS; op += nt_vary && op == AGV ? 2 : 1)
            for (int form = BLOCKING; form <= NONBLOCKING; form++)
                for (int c = 0; c < 3; c += 2)
                    nt_check_one(g, op, form, cnts[c], MPI_INFO_NULL, "environment");
    }
    nt_vary = 0;
}

static void check_fewer_messages(const nt_graph_t *g)
{
    for (int op = 0; op < NOPS; op++) {
        long long lin = nt_sends_of(g, op, "linear"), node = nt_sends_of(g, op, "node");
        if (nt_rank == 0)
            printf("# %s, %d nodes: one %s sends %lld messages linear, %lld node-aware\n",
                   g->label, nnodes, nt_op_name[op], lin, node);
        MT_CHECK(node < lin, "%s: %s under node sent %lld messages, linear %lld: no saving",
                 g->label, nt_op_name[op], node, lin);
    }
}

/* Receive counts one too small on the slots whose blocks come from other
 * nodes (through the leaders): the receiver must fail with
 * MPI_ERR_TRUNCATE. On-node edges keep their counts: an MPI error on one
 * of a leader's direct receives would stop it before it scatters (the
 * known limit in node.c). */
static void check_truncate(const nt_graph_t *g)
{
    int *node = mt_node_keys(), *change = malloc((size_t)(g->indeg + 1) * sizeof(int));
    for (int i = 0; i < g->indeg; i++)
        change[i] = g->src[i] != MPI_PROC_NULL && node[g->src[i]] != node[nt_rank];
    nt_check_truncate(g, "node", -1, change);
    free(change);
    free(node);
}

static void finish_graph(nt_graph_t *g, int counting)
{
    check_all(g);
    if (counting && nnodes > 1 && nt_size >= 6) {
        check_fewer_messages(g);
        check_truncate(g);
    }
    nt_graph_free(g);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    nt_begin();
    const mpitopo_nodeinfo_t *ni;
    if (MT_CHECK_RC(mpitopo_comm_nodeinfo(MPI_COMM_WORLD, &ni)))
        nnodes = ni->nnodes;
    nt_graph_t g;
    nt_random_graph(&g, 3, 7);
    finish_graph(&g, nt_size >= 6);
    nt_random_graph(&g, 8, 7);
    finish_graph(&g, nt_size >= 6);
    nt_moore_graph(&g);
    finish_graph(&g, nt_size >= 8);
    nt_dense_graph(&g);
    finish_graph(&g, nt_size >= 6);
    int ring = nt_size, ring_p = 1;
    nt_cart_graph(&g, 1, &ring, &ring_p);
    finish_graph(&g, 0);
    int d2[2] = {1, nt_size}, p2[2] = {1, 0};
    nt_cart_graph(&g, 2, d2, p2);
    finish_graph(&g, 0);
    if (nt_size % 2 == 0) {
        int d3[3] = {2, 1, nt_size / 2}, p3[3] = {1, 1, 0};
        nt_cart_graph(&g, 3, d3, p3);
        finish_graph(&g, 0);
        int d4[2] = {nt_size / 2, 2}, p4[2] = {1, 1};
        nt_cart_graph(&g, 2, d4, p4);
        finish_graph(&g, 0);
    }
    nt_end();
    int code = mt_finish("neighbor_node");
    MPI_Finalize();
    return code;
}
