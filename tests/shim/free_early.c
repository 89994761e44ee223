/*
 * The guard of renumbering on request: a program creates a topology
 * communicator with reorder = 1, reads ranks from it, and frees it before
 * any communication on it, as programs that then exchange on
 * MPI_COMM_WORLD with those ranks do (tests/shim/world_halo.c is the whole
 * program). Under the shim with MPITOPO_REORDER=job rank 0 of the freed
 * communicator must print one warning; by default (MPI's ranks kept), and
 * when the program took the group or communicated on the communicator,
 * none. The program itself never exchanges with the ranks it read, so it
 * always ends; it says whether the ranks were renumbered.
 *   shim_free_early cart|dist|group|used
 *     cart   MPI_Cart_create (periodic (size/2) x 2), MPI_Cart_shift, free
 *     dist   MPI_Dist_graph_create_adjacent of the ring rank +- 1, neighbours read, free
 *     group  cart, with MPI_Comm_group taken before the free
 *     used   cart, with one MPI_Sendrecv along dimension 0 before the free
 * Rank 0 prints "free_early MODE: done (renumbered: yes|no)".
 */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "cart";
    int wrank, wsize, newrank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm c = MPI_COMM_NULL;
    if (strcmp(mode, "dist") == 0) {
        int nb[2] = {(wrank + wsize - 1) % wsize, (wrank + 1) % wsize}, got[2], gotw[2];
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, MPI_UNWEIGHTED, 2, nb, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                       1, &c);
        MPI_Dist_graph_neighbors(c, 2, got, MPI_UNWEIGHTED, 2, gotw, MPI_UNWEIGHTED);
    } else {
        int dims[2] = {wsize / 2, 2}, periods[2] = {1, 1}, src, dst; /* an even count */
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c);
        MPI_Cart_shift(c, 0, 1, &src, &dst);
        if (strcmp(mode, "group") == 0) {
            MPI_Group g;
            MPI_Comm_group(c, &g);
            MPI_Group_free(&g);
        } else if (strcmp(mode, "used") == 0) {
            int out = wrank, in = -1;
            MPI_Sendrecv(&out, 1, MPI_INT, dst, 0, &in, 1, MPI_INT, src, 0, c, MPI_STATUS_IGNORE);
        }
    }
    MPI_Comm_rank(c, &newrank);
    MPI_Comm_free(&c);
    int differs = newrank != wrank, any = 0;
    MPI_Allreduce(&differs, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("free_early %s: done (renumbered: %s)\n", mode, any ? "yes" : "no");
    MPI_Finalize();
    return 0;
}
