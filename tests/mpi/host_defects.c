/*
 * The table of known host-MPI defects (src/coll/neighbor/defects.c): each row shown
 * natively, and cured through mpitopo's auto (which never hands the call to
 * the host MPI where a row matches).
 *
 *   - MPICH 4.0.2 MPI_Neighbor_alltoallw on a one-way dist graph (rank 0
 *     sends one int to ranks 1 and 2, which send nothing; MPI_DATATYPE_NULL
 *     in the unused slots) leaves the receivers' buffers unchanged;
 *   - MPICH 4.0.2 MPI_Neighbor_allgather does not report a truncated
 *     receive (rc 0); mpitopo reports MPI_ERR_TRUNCATE.
 *
 * Where the table says the host has the defect, the native call must show
 * it (else the row is stale); elsewhere the native call must be right. The
 * call through mpitopo must be right everywhere. 3 processes.
 */
#include "mpitest.h"

#include <stdio.h>
#include <string.h>

/* Internal (src/coll/coll_internal.h, defects.c): the row matching the
 * host MPI for an operation on comm (by its neighbour lists), or NULL. */
const char *mpitopo__test_host_defect(MPI_Comm comm, int op);
const char *mpitopo__host_name(void);

enum { OPK_ALLGATHER = 0, OPK_ALLTOALLW = 4 };

static int wrank;

static void alltoallw(MPI_Comm g, int native, int *got)
{
    int one = 1, sc[2] = {1, 1}, rc[1] = {1};
    MPI_Aint sd[2] = {0, 0}, rd[1] = {0};
    MPI_Datatype st[2] = {MPI_INT, MPI_INT}, rt[1] = {MPI_INT};
    int in, out, w;
    MPI_Dist_graph_neighbors_count(g, &in, &out, &w);
    *got = -1;
    if (native)
        MPI_Neighbor_alltoallw(&one, sc, sd, st, got, rc, rd, rt, g);
    else
        MT_CHECK_RC(mpitopo_neighbor_alltoallw(&one, sc, sd, st, got, rc, rd, rt, g));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) {
        MT_CHECK(0, "needs 3 processes");
        return mt_finish("host_defects");
    }
    /* The one-way graph: 0 -> 1, 0 -> 2. */
    int dst[2] = {1, 2}, src[1] = {0};
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, wrank == 0 ? 0 : 1, src, MPI_UNWEIGHTED,
                                   wrank == 0 ? 2 : 0, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    const char *row = mpitopo__test_host_defect(g, OPK_ALLTOALLW);
    int got;
    alltoallw(g, 1, &got);
    if (wrank != 0) {
        if (row)
            MT_CHECK(got == -1, "%s: the table says \"%s\" but the int arrived (stale row?)",
                     mpitopo__host_name(), row);
        else
            MT_CHECK(got == 1, "%s: native alltoallw delivered %d, not 1 (a defect missing from "
                               "the table)", mpitopo__host_name(), got);
    }
    if (wrank == 0)
        printf("# %s alltoallw one-way: %s\n", mpitopo__host_name(),
               row ? "defect shown natively" : "native call right");
    alltoallw(g, 0, &got);
    if (wrank != 0)
        MT_CHECK(got == 1, "through mpitopo: alltoallw delivered %d, not 1", got);

    /* Truncation: a ring, each sends 2 ints, receivers expect 1. */
    int nb[2] = {(wrank + 1) % 3, (wrank + 2) % 3};
    MPI_Comm r;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, MPI_UNWEIGHTED, 2, nb, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &r);
    MPI_Comm_set_errhandler(r, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* MPICH: Testall of the yield layer */
    row = mpitopo__test_host_defect(r, OPK_ALLGATHER);
    int two[2] = {wrank, wrank}, recv[8];
    int rc = MPI_Neighbor_allgather(two, 2, MPI_INT, recv, 1, MPI_INT, r), cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    if (row)
        MT_CHECK(cls == MPI_SUCCESS, "%s: the table says \"%s\" but MPI reported class %d",
                 mpitopo__host_name(), row, cls);
    if (wrank == 0)
        printf("# %s allgather truncation natively: class %d (%s)\n", mpitopo__host_name(), cls,
               row ? "defect shown" : "not in the table");
    rc = mpitopo_neighbor_allgather(two, 2, MPI_INT, recv, 1, MPI_INT, r);
    cls = MPI_SUCCESS;
    if (rc > 0)
        MPI_Error_class(rc, &cls);
    /* Where the row matches, a schedule of mpitopo runs and says
     * MPI_ERR_TRUNCATE; elsewhere the host may run and report its own
     * class (Open MPI 4.1: MPI_ERR_OTHER), never success. */
    if (row)
        MT_CHECK(cls == MPI_ERR_TRUNCATE, "through mpitopo: a truncated allgather returned %d "
                                          "(class %d), not MPI_ERR_TRUNCATE", rc, cls);
    else
        MT_CHECK(rc != MPI_SUCCESS, "through mpitopo: a truncated allgather returned success");
    MPI_Comm_free(&r);
    MPI_Comm_free(&g);
    int res = mt_finish("host_defects");
    MPI_Finalize();
    return res;
}
