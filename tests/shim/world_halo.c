/*
 * A plain MPI program that breaks MPI's rule on reordering (MPI-4.1
 * section 8.5.4) the way real programs do: it creates a periodic 2-D
 * Cartesian communicator with reorder = 1, reads the grid from it as if
 * its ranks were those of MPI_COMM_WORLD (MPI_Cart_coords of its world
 * rank, MPI_Cart_get, MPI_Cart_shift, MPI_Cart_rank of grid cells), frees
 * it, and exchanges halos on MPI_COMM_WORLD with those ranks. Correct when
 * the new communicator has MPI's ranks; once renumbered, the coordinates
 * disagree (and the exchange would pair the wrong processes).
 *   shim_world_halo [DIM0 DIM1]   (default 8 2)
 * Checks: MPI_Cart_get's coordinates equal MPI_Cart_coords of the world
 * rank (agreed by every process before the exchange, so a renumbering
 * fails here instead of hanging), MPI_Cart_shift agrees with MPI_Cart_rank,
 * and every halo received holds the cell id of the neighbour it mirrors.
 * Rank 0 prints "PASS world_halo" or "FAIL world_halo: why" (exit 1).
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static char why[256];

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond) && !why[0])                                                                \
            snprintf(why, sizeof why, __VA_ARGS__);                                            \
    } while (0)

/* Whether any process failed; rank 0 prints the first reason it knows. */
static int any_failed(int wrank)
{
    int mine = why[0] != 0, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int first = mine ? wrank : -1, who = -1;
    MPI_Allreduce(&first, &who, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && who != 0) {
        if (wrank == who)
            MPI_Send(why, sizeof why, MPI_CHAR, 0, 99, MPI_COMM_WORLD);
        if (wrank == 0)
            MPI_Recv(why, sizeof why, MPI_CHAR, who, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (any && wrank == 0)
        printf("FAIL world_halo: world rank %d: %s\n", who, why);
    return any;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wrank, wsize, dims[2] = {8, 2}, periods[2] = {1, 1};
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (argc >= 3) {
        dims[0] = atoi(argv[1]);
        dims[1] = atoi(argv[2]);
    }
    if (dims[0] * dims[1] != wsize) {
        if (wrank == 0)
            printf("FAIL world_halo: %dx%d is not %d processes\n", dims[0], dims[1], wsize);
        MPI_Finalize();
        return 1;
    }

    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
    int coords[2], got[2], gdims[2], gper[2], src[2], dst[2];
    MPI_Cart_coords(cart, wrank, 2, coords); /* the world rank used as a cart rank */
    MPI_Cart_get(cart, 2, gdims, gper, got);
    CHECK(got[0] == coords[0] && got[1] == coords[1],
          "MPI_Cart_get gives (%d,%d), MPI_Cart_coords of the world rank (%d,%d)", got[0], got[1],
          coords[0], coords[1]);
    for (int d = 0; d < 2; d++) {
        int c[2] = {coords[0], coords[1]}, down = -1, up = -1;
        MPI_Cart_shift(cart, d, 1, &src[d], &dst[d]);
        c[d] = (coords[d] + dims[d] - 1) % dims[d];
        MPI_Cart_rank(cart, c, &down);
        c[d] = (coords[d] + 1) % dims[d];
        MPI_Cart_rank(cart, c, &up);
        CHECK(src[d] == down && dst[d] == up, "MPI_Cart_shift(%d) gives %d,%d, MPI_Cart_rank %d,%d",
              d, src[d], dst[d], down, up);
    }
    MPI_Comm_free(&cart);
    if (any_failed(wrank)) {
        MPI_Finalize();
        return 1;
    }

    /* The halo exchange on MPI_COMM_WORLD: my cell id to both neighbours
     * of each dimension, theirs back. */
    int me = coords[0] * dims[1] + coords[1], halo[4] = {-1, -1, -1, -1};
    MPI_Request req[8];
    for (int d = 0; d < 2; d++) {
        MPI_Irecv(&halo[2 * d], 1, MPI_INT, src[d], d, MPI_COMM_WORLD, &req[4 * d]);
        MPI_Irecv(&halo[2 * d + 1], 1, MPI_INT, dst[d], 10 + d, MPI_COMM_WORLD, &req[4 * d + 1]);
        MPI_Isend(&me, 1, MPI_INT, dst[d], d, MPI_COMM_WORLD, &req[4 * d + 2]);
        MPI_Isend(&me, 1, MPI_INT, src[d], 10 + d, MPI_COMM_WORLD, &req[4 * d + 3]);
    }
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    for (int d = 0; d < 2; d++)
        for (int s = 0; s < 2; s++) {
            int c[2] = {coords[0], coords[1]};
            c[d] = (coords[d] + (s ? 1 : dims[d] - 1)) % dims[d];
            int want = c[0] * dims[1] + c[1];
            CHECK(halo[2 * d + s] == want, "dim %d %s halo holds cell %d, not %d", d,
                  s ? "upper" : "lower", halo[2 * d + s], want);
        }
    int failed = any_failed(wrank);
    if (!failed && wrank == 0)
        printf("PASS world_halo: %dx%d\n", dims[0], dims[1]);
    MPI_Finalize();
    return failed;
}
