/*
 * The program of scripts/callpath/run.sh: a reordering
 * mpitopo_dist_graph_create_adjacent of a ring (both neighbours, weight 1)
 * on MPI_COMM_WORLD, recorded on rank 0 by hook.c.
 */
#include <mpitopo.h>

#include <stdio.h>

void callpath_start(void);
void callpath_stop(void);

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nb[2] = {(rank + size - 1) % size, (rank + 1) % size}, w[2] = {1, 1};
    MPI_Comm g = MPI_COMM_NULL;
    if (rank == 0)
        callpath_start();
    int rc = mpitopo_dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, w, 2, nb, w, MPI_INFO_NULL, 1, &g);
    if (rank == 0)
        callpath_stop();
    if (rc != MPITOPO_SUCCESS)
        fprintf(stderr, "rank %d: %s\n", rank, mpitopo_last_error());
    if (g != MPI_COMM_NULL)
        MPI_Comm_free(&g);
    MPI_Finalize();
    return rc != MPITOPO_SUCCESS;
}
