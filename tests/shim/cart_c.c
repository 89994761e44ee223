/*
 * A plain MPI program, unaware of mpitopo (the shim test runs it as is):
 * a 2-D periodic Cartesian communicator over MPI_COMM_WORLD, with reorder.
 *   shim_cart_c [DIM0 DIM1 [REORDER]]   (DIM0 = 0: dims from MPI_Dims_create)
 * It checks that the communicator is a valid Cartesian one (MPI_Topo_test,
 * MPI_Cart_get, the MPI_Cart_coords / MPI_Cart_rank round trip,
 * MPI_Cart_shift, a halo exchange) and rank 0 prints, for check_cart:
 *   dims D0 D1
 *   world_of_cart W0 W1 ...     world rank of every cart rank
 *   cart_map R0 R1 ...          MPI_Cart_map's new rank of every world rank
 *   valid
 * or "FAIL cart_c: why" (exit status 1).
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char why[256];

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond) && !why[0])                                                                \
            snprintf(why, sizeof why, __VA_ARGS__);                                            \
    } while (0)

/* The rank at coords + delta in dimension d, periodic. */
static int shifted(MPI_Comm cart, const int dims[2], const int coords[2], int d, int delta)
{
    int c[2] = {coords[0], coords[1]}, r = -1;
    c[d] = ((c[d] + delta) % dims[d] + dims[d]) % dims[d];
    MPI_Cart_rank(cart, c, &r);
    return r;
}

static void check_cart(MPI_Comm cart, const int dims[2], const int *world_of_cart)
{
    int topo = -1, nd = -1, gdims[2], gper[2], coords[2], rank, size;
    MPI_Topo_test(cart, &topo);
    CHECK(topo == MPI_CART, "MPI_Topo_test gives %d, not MPI_CART", topo);
    MPI_Cartdim_get(cart, &nd);
    CHECK(nd == 2, "MPI_Cartdim_get gives %d", nd);
    MPI_Comm_rank(cart, &rank);
    MPI_Comm_size(cart, &size);
    CHECK(size == dims[0] * dims[1], "cart size %d for dims %dx%d", size, dims[0], dims[1]);
    MPI_Cart_get(cart, 2, gdims, gper, coords);
    CHECK(gdims[0] == dims[0] && gdims[1] == dims[1] && gper[0] && gper[1],
          "MPI_Cart_get gives dims %dx%d periods %d,%d", gdims[0], gdims[1], gper[0], gper[1]);
    for (int r = 0; r < size; r++) {
        int c[2], back = -1;
        MPI_Cart_coords(cart, r, 2, c);
        MPI_Cart_rank(cart, c, &back);
        CHECK(back == r, "cart rank %d -> coords (%d,%d) -> rank %d", r, c[0], c[1], back);
    }
    /* Shifts agree with the coordinates, and messages really go there. */
    for (int d = 0; d < 2; d++) {
        int src, dst, got = -1;
        MPI_Cart_shift(cart, d, 1, &src, &dst);
        CHECK(src == shifted(cart, dims, coords, d, -1) && dst == shifted(cart, dims, coords, d, 1),
              "MPI_Cart_shift(%d) gives %d,%d at rank %d", d, src, dst, rank);
        int me = world_of_cart[rank];
        MPI_Sendrecv(&me, 1, MPI_INT, dst, d, &got, 1, MPI_INT, src, d, cart, MPI_STATUS_IGNORE);
        CHECK(got == world_of_cart[src], "dim %d: received world rank %d from cart rank %d, not %d",
              d, got, src, world_of_cart[src]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wrank, wsize, dims[2] = {0, 0}, periods[2] = {1, 1}, reorder = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (argc >= 3) {
        dims[0] = atoi(argv[1]);
        dims[1] = atoi(argv[2]);
    }
    if (argc >= 4)
        reorder = atoi(argv[3]);
    if (dims[0] == 0)
        MPI_Dims_create(wsize, 2, dims);

    MPI_Comm cart = MPI_COMM_NULL;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &cart);
    int crank = -1, newrank = -1;
    if (cart != MPI_COMM_NULL)
        MPI_Comm_rank(cart, &crank);
    MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &newrank);

    int *cart_of_world = malloc((size_t)wsize * sizeof(int));
    int *map_of_world = malloc((size_t)wsize * sizeof(int));
    int *world_of_cart = malloc((size_t)wsize * sizeof(int));
    MPI_Allgather(&crank, 1, MPI_INT, cart_of_world, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgather(&newrank, 1, MPI_INT, map_of_world, 1, MPI_INT, MPI_COMM_WORLD);
    for (int w = 0; w < wsize; w++)
        world_of_cart[w] = -1;
    for (int w = 0; w < wsize; w++)
        if (cart_of_world[w] >= 0 && cart_of_world[w] < wsize)
            world_of_cart[cart_of_world[w]] = w;
    CHECK(cart != MPI_COMM_NULL, "MPI_Cart_create gave MPI_COMM_NULL on world rank %d", wrank);
    if (cart != MPI_COMM_NULL)
        check_cart(cart, dims, world_of_cart);

    /* One verdict: the message of the lowest failing rank. */
    int failed = why[0] ? wrank : wsize, first;
    MPI_Allreduce(&failed, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first < wsize && first != 0) {
        if (wrank == first)
            MPI_Send(why, sizeof why, MPI_CHAR, 0, 99, MPI_COMM_WORLD);
        if (wrank == 0)
            MPI_Recv(why, sizeof why, MPI_CHAR, first, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (wrank == 0) {
        printf("dims %d %d\nworld_of_cart", dims[0], dims[1]);
        for (int c = 0; c < wsize; c++)
            printf(" %d", world_of_cart[c]);
        printf("\ncart_map");
        for (int w = 0; w < wsize; w++)
            printf(" %d", map_of_world[w]);
        printf("\n");
        if (first < wsize)
            printf("FAIL cart_c: world rank %d: %s\n", first, why);
        else
            printf("valid\n");
        fflush(stdout);
    }
    if (cart != MPI_COMM_NULL)
        MPI_Comm_free(&cart);
    free(cart_of_world);
    free(map_of_world);
    free(world_of_cart);
    MPI_Finalize();
    return first < wsize;
}
