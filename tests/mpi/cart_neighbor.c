/*
 * Neighbourhood collectives on the communicators of mpitopo_cart_create:
 * reordered (reorder = 1, and mpitopo_cart_create_x with a Moore stencil,
 * which must not change MPI's star neighbourhood) and not (reorder = 0).
 * Every process sends its grid coordinates, and with MPI_Neighbor_alltoall
 * (blocking and MPI_Ineighbor_alltoall) also the slot; each receive block
 * must hold the coordinates of the neighbour MPI_Cart_shift names, the
 * blocks of MPI_PROC_NULL neighbours stay untouched. The same data arrives
 * by grid position whatever the order of the processes.
 */
#include "mpitest.h"

#include <stdio.h>
#include <string.h>

#define MAXD 4
#define BLOCK (MAXD + 1)
#define UNTOUCHED (-7)

/* Fewer grids and no Moore variant where a run would take over ten seconds:
 * MPICH above 4 processes (it busy-waits inside communicator creation) and
 * 64 Open MPI processes. */
static int small;

/* The expected coordinates of neighbour slot k (2d: -1 along d, 2d+1: +1),
 * or 0 for MPI_PROC_NULL. */
static int neighbour_coords(int ndims, const int *dims, const int *periods, const int *mine,
                            int k, int *out)
{
    memcpy(out, mine, (size_t)ndims * sizeof *out);
    int d = k / 2, c = mine[d] + (k % 2 ? 1 : -1);
    if (c < 0 || c >= dims[d]) {
        if (!periods[d])
            return 0;
        c = (c + dims[d]) % dims[d];
    }
    out[d] = c;
    return 1;
}

static void check_blocks(int ndims, const int *dims, const int *periods, const int *mine,
                         const int *recv, int alltoall, const char *label)
{
    for (int k = 0; k < 2 * ndims; k++) {
        int want[MAXD], exists = neighbour_coords(ndims, dims, periods, mine, k, want);
        const int *b = recv + k * BLOCK;
        if (!exists) {
            int ok = 1;
            for (int i = 0; i < BLOCK; i++)
                ok &= b[i] == UNTOUCHED;
            MT_CHECK(ok, "%s: slot %d (MPI_PROC_NULL) was written", label, k);
            continue;
        }
        /* Alltoall: the block the neighbour sent towards me, slot k ^ 1 in
         * general; when one process is my neighbour in several slots (periodic
         * dimensions of size 1 or 2), MPI libraries differ in which of its
         * blocks for me lands where. */
        int back[MAXD], t = b[ndims];
        int slot_ok = !alltoall ? t == -1
                                : t >= 0 && t < 2 * ndims &&
                                      neighbour_coords(ndims, dims, periods, want, t, back) &&
                                      !memcmp(back, mine, (size_t)ndims * sizeof *back);
        if (!MT_CHECK(!memcmp(b, want, (size_t)ndims * sizeof *b) && slot_ok,
                      "%s: slot %d holds coordinates (%d,%d,..) tag %d; expected (%d,%d,..) "
                      "from the neighbour, tag %d", label, k, b[0], ndims > 1 ? b[1] : 0,
                      t, want[0], ndims > 1 ? want[1] : 0, alltoall ? k ^ 1 : -1))
            return;
    }
}

static void exchange(MPI_Comm c, int ndims, const int *dims, const int *periods,
                     const char *label)
{
    int rank, mine[MAXD], send[2 * MAXD * BLOCK], recv[2 * MAXD * BLOCK];
    MPI_Comm_rank(c, &rank);
    MPI_Cart_coords(c, rank, ndims, mine);
    char l[200];

    /* The star neighbourhood, in MPI_Cart_shift order: 2 * ndims slots. */
    for (int k = 0; k < 2 * ndims; k++) {
        int src, dst, want[MAXD];
        MPI_Cart_shift(c, k / 2, 1, &src, &dst);
        int nb = k % 2 ? dst : src, exists = neighbour_coords(ndims, dims, periods, mine, k, want);
        MT_CHECK(exists ? nb == mt_cart_rank_of(ndims, dims, periods, want) : nb == MPI_PROC_NULL,
                 "%s: neighbour %d is rank %d", label, k, nb);
    }

    /* Allgather: my coordinates, then -1. */
    for (int i = 0; i < BLOCK; i++)
        send[i] = i < ndims ? mine[i] : -1;
    for (int i = 0; i < 2 * MAXD * BLOCK; i++)
        recv[i] = UNTOUCHED;
    MPI_Neighbor_allgather(send, BLOCK, MPI_INT, recv, BLOCK, MPI_INT, c);
    snprintf(l, sizeof l, "%s MPI_Neighbor_allgather", label);
    check_blocks(ndims, dims, periods, mine, recv, 0, l);

    /* Alltoall, blocking then nonblocking: slot k carries (coordinates, k). */
    for (int nb = 0; nb <= 1; nb++) {
        for (int k = 0; k < 2 * ndims; k++)
            for (int i = 0; i < BLOCK; i++)
                send[k * BLOCK + i] = i < ndims ? mine[i] : k;
        for (int i = 0; i < 2 * MAXD * BLOCK; i++)
            recv[i] = UNTOUCHED;
        if (nb) {
            MPI_Request req;
            MPI_Ineighbor_alltoall(send, BLOCK, MPI_INT, recv, BLOCK, MPI_INT, c, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Neighbor_alltoall(send, BLOCK, MPI_INT, recv, BLOCK, MPI_INT, c);
        }
        snprintf(l, sizeof l, "%s MPI_%s", label, nb ? "Ineighbor_alltoall" : "Neighbor_alltoall");
        check_blocks(ndims, dims, periods, mine, recv, 1, l);
    }
}

/* One grid: reordered, reordered for a Moore stencil, and in order. */
static void check_grid(int ndims, const int *dims, const int *periods)
{
    char label[160];
    int used = snprintf(label, sizeof label, "grid ");
    for (int d = 0; d < ndims; d++)
        used += snprintf(label + used, sizeof label - (size_t)used, "%s%d%c", d ? "x" : "",
                         dims[d], periods[d] ? 'p' : 'o');
    for (int variant = 0; variant < 3; variant++) {
        MPI_Comm c = MPI_COMM_NULL;
        if (variant == 1 && small)
            continue;
        static const char *names[] = {"reorder=1", "moore=1 reorder=1", "reorder=0"};
        snprintf(label + used, sizeof label - (size_t)used, " %s", names[variant]);
        int rc = variant == 1 ? mpitopo_cart_create_x(MPI_COMM_WORLD, ndims, dims, periods, 1,
                                                      "moore=1", MPI_INFO_NULL, &c)
                              : mpitopo_cart_create(MPI_COMM_WORLD, ndims, dims, periods,
                                                    variant == 0, &c);
        if (!MT_CHECK_RC(rc))
            continue;
        if (c == MPI_COMM_NULL)
            continue;
        if (mt_cart_check(c, ndims, dims, periods, label))
            exchange(c, ndims, dims, periods, label);
        MPI_Comm_free(&c);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    small = mt_is_mpich() ? size > 4 : size > 16;

    int p1[1] = {1}, d1[1] = {size};
    if (!small)
        check_grid(1, d1, p1);
    int d2[2] = {0, 0}, p2[2] = {1, 0};
    MPI_Dims_create(size, 2, d2);
    check_grid(2, d2, p2);
    int d3[3] = {0, 0, 0}, p3[3] = {1, 1, 0};
    MPI_Dims_create(size, 3, d3);
    check_grid(3, d3, p3);
    int d4[4] = {0, 0, 0, 0}, p4[4] = {1, 1, 1, 1};
    MPI_Dims_create(size, 4, d4);
    if (!small)
        check_grid(4, d4, p4);
    /* Periodic dimensions of size 1 and 2. */
    int tiny[3] = {1, size % 2 ? size : size / 2, size % 2 ? 1 : 2}, ps[3] = {1, 0, 1};
    check_grid(3, tiny, ps);
    /* Fewer grid points than processes. */
    if (size > 2) {
        int left[2] = {(size - 1) / 2, 2}, pl[2] = {0, 1};
        check_grid(2, left, pl);
    }

    int rc = mt_finish("cart_neighbor");
    MPI_Finalize();
    return rc;
}
