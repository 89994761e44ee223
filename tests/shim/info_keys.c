/*
 * The shim keeps mpitopo's info keys on every MPI (issue 15): MPICH drops
 * the info keys it does not know, so MPI_Comm_set_info(comm,
 * {mpitopo_neighbor: ...}) had no effect there. Linked with
 * libmpitopo_shim, run with MPITOPO_NEIGHBOR=linear (the neighbourhood
 * collectives routed to mpitopo), a key is seen to take by its effect: a
 * bad mpitopo_neighbor value makes MPI_Neighbor_allgather fail, a good one
 * makes it work. Covered: the info of MPI_Dist_graph_create_adjacent (MPI's
 * own constructor, reorder = 0), MPI_Comm_set_info after a call,
 * MPI_Comm_dup copying the keys, MPI_Comm_dup_with_info replacing them, and
 * the Fortran MPI_COMM_SET_INFO called from C.
 */
#include "mpitest.h"

#include <stdio.h>
#include <string.h>

long mpitopo_shim_neighbor_calls(void);
void mpi_comm_set_info_(MPI_Fint *, MPI_Fint *, MPI_Fint *);

static int rank, size;

static MPI_Info info_of(const char *value)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (value)
        MPI_Info_set(info, "mpitopo_neighbor", value);
    return info;
}

/* One routed allgather on the ring: fails when `fails`, else delivers. */
static void expect(MPI_Comm g, int fails, const char *label)
{
    int mine = rank, got = -1;
    long before = mpitopo_shim_neighbor_calls();
    int rc = MPI_Neighbor_allgather(&mine, 1, MPI_INT, &got, 1, MPI_INT, g);
    MT_CHECK(mpitopo_shim_neighbor_calls() == before + 1, "%s: the call was not routed to mpitopo", label);
    if (fails) {
        MT_CHECK(rc != MPI_SUCCESS, "%s: MPI_Neighbor_allgather succeeded despite mpitopo_neighbor = bogus",
                 label);
        return;
    }
    if (MT_CHECK(rc == MPI_SUCCESS, "%s: MPI_Neighbor_allgather returned %d", label, rc))
        MT_CHECK(got == (rank + size - 1) % size, "%s: got %d, expected %d", label, got, (rank + size - 1) % size);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info bogus = info_of("bogus"), linear = info_of("linear"), none = info_of(NULL);
    int src = (rank + size - 1) % size, dst = (rank + 1) % size;
    MPI_Comm g, d;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED, bogus, 0,
                                   &g);
    expect(g, 1, "the info of MPI_Dist_graph_create_adjacent");
    MT_CHECK(MPI_Comm_set_info(g, linear) == MPI_SUCCESS, "MPI_Comm_set_info failed");
    expect(g, 0, "MPI_Comm_set_info linear");
    MPI_Comm_set_info(g, bogus);
    expect(g, 1, "MPI_Comm_set_info bogus");
    MPI_Comm_dup(g, &d);
    expect(d, 1, "MPI_Comm_dup copies the keys");
    MPI_Comm_free(&d);
    MT_CHECK(MPI_Comm_dup_with_info(g, none, &d) == MPI_SUCCESS, "MPI_Comm_dup_with_info failed");
    expect(d, 0, "MPI_Comm_dup_with_info without the key");
    MPI_Comm_free(&d);
    MPI_Fint fg = MPI_Comm_c2f(g), fi = MPI_Info_c2f(linear), ierr = -1;
    mpi_comm_set_info_(&fg, &fi, &ierr);
    MT_CHECK(ierr == MPI_SUCCESS, "mpi_comm_set_info_ returned %d", (int)ierr);
    expect(g, 0, "the Fortran MPI_COMM_SET_INFO");
    MPI_Comm_free(&g);
    MPI_Info_free(&bogus);
    MPI_Info_free(&linear);
    MPI_Info_free(&none);
    int rc = mt_finish("shim_info_keys");
    MPI_Finalize();
    return rc;
}
