/*
 * mpitopo_neighbor_xchg, _xchgv and mpitopo_cart_shift_xchg against their
 * point-to-point equivalents (MPI_Sendrecv for the shift; Isend/Irecv per
 * neighbour, in list order, for the exchanges) and hand-computed values,
 * on Cartesian communicators with periodic dimensions of size 1 (blocks to
 * self: the local-copy round of the engine) and open borders, and on a
 * dist-graph with self edges and duplicate edges.
 */
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

#define C 2

static int val(int rank, int slot, int e)
{
    return rank * 1000 + slot * 10 + e;
}

/* The exchange by hand: receive block i from sources[i] and send block j
 * to destinations[j]; on a Cartesian communicator with tags k^1 / k, as
 * MPI's collectives match, else tag 0 in order. */
static void by_hand(MPI_Comm c, int cart, const int *sb, int *rb, int in, const int *src,
                    int out, const int *dst)
{
    MPI_Request *q = malloc(((size_t)in + (size_t)out + 1) * sizeof *q);
    for (int i = 0; i < in; i++)
        MPI_Irecv(rb + i * C, C, MPI_INT, src[i], cart ? i ^ 1 : 0, c, &q[i]);
    for (int j = 0; j < out; j++)
        MPI_Isend(sb + j * C, C, MPI_INT, dst[j], cart ? j : 0, c, &q[in + j]);
    MPI_Waitall(in + out, q, MPI_STATUSES_IGNORE);
    free(q);
}

static void check_xchg(MPI_Comm c, int cart, const char *label)
{
    int rank, in, out;
    MPI_Comm_rank(c, &rank);
    MT_CHECK_RC(mpitopo_comm_neighbors_count(c, &in, &out));
    int *src = malloc(((size_t)in + 1) * sizeof(int)), *dst = malloc(((size_t)out + 1) * sizeof(int));
    MT_CHECK_RC(mpitopo_comm_neighbors(c, in, src, out, dst));
    int *sb = malloc(((size_t)out + 1) * C * sizeof(int));
    int *rb = malloc(((size_t)in + 1) * C * sizeof(int)), *rv = malloc(((size_t)in + 1) * C * sizeof(int));
    int *ref = malloc(((size_t)in + 1) * C * sizeof(int));
    int *sc = malloc(((size_t)out + 1) * sizeof(int)), *sd = malloc(((size_t)out + 1) * sizeof(int));
    int *rc = malloc(((size_t)in + 1) * sizeof(int)), *rd = malloc(((size_t)in + 1) * sizeof(int));
    for (int j = 0; j < out; j++) {
        sc[j] = C;
        sd[j] = (out - 1 - j) * C; /* reversed */
        for (int e = 0; e < C; e++)
            sb[j * C + e] = val(rank, j, e);
    }
    for (int i = 0; i < in * C; i++)
        rb[i] = rv[i] = ref[i] = -1;
    for (int i = 0; i < in; i++) {
        rc[i] = C;
        rd[i] = i * C;
    }
    MT_CHECK_RC(mpitopo_neighbor_xchg(sb, C, MPI_INT, rb, C, MPI_INT, c));
    by_hand(c, cart, sb, ref, in, src, out, dst);
    MT_CHECK(!memcmp(rb, ref, (size_t)in * C * sizeof(int)), "%s: xchg differs from by-hand",
             label);
    /* xchgv with reversed send blocks: block j sits at sd[j]. */
    int *sv = malloc(((size_t)out + 1) * C * sizeof(int));
    for (int j = 0; j < out; j++)
        memcpy(sv + sd[j], sb + j * C, C * sizeof(int));
    MT_CHECK_RC(mpitopo_neighbor_xchgv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, c));
    MT_CHECK(!memcmp(rv, ref, (size_t)in * C * sizeof(int)), "%s: xchgv differs from by-hand",
             label);
    /* By hand, on a Cartesian communicator: block k is block k^1 of src[k]. */
    for (int i = 0; cart && i < in; i++)
        for (int e = 0; e < C; e++) {
            int want = src[i] == MPI_PROC_NULL ? -1 : val(src[i], i ^ 1, e);
            MT_CHECK(rb[i * C + e] == want, "%s: block %d[%d] = %d, expected %d", label, i, e,
                     rb[i * C + e], want);
        }
    void *p[] = {src, dst, sb, rb, rv, ref, sc, sd, rc, rd, sv};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        free(p[i]);
}

/* Every direction and displacements -3..3 against MPI_Sendrecv. */
static void check_shift(MPI_Comm c, int ndims, const char *label)
{
    int rank;
    MPI_Comm_rank(c, &rank);
    for (int d = 0; d < ndims; d++)
        for (int disp = -3; disp <= 3; disp++) {
            int s, t, sb[C], rb[C] = {-1, -1}, ref[C] = {-1, -1};
            MPI_Cart_shift(c, d, disp, &s, &t);
            for (int e = 0; e < C; e++)
                sb[e] = val(rank, disp + 3, e);
            MT_CHECK_RC(mpitopo_cart_shift_xchg(sb, C, MPI_INT, rb, C, MPI_INT, d, disp, c));
            MPI_Sendrecv(sb, C, MPI_INT, t, 5, ref, C, MPI_INT, s, 5, c, MPI_STATUS_IGNORE);
            MT_CHECK(!memcmp(rb, ref, sizeof rb), "%s: shift dim %d disp %d differs", label, d,
                     disp);
            for (int e = 0; e < C; e++) {
                int want = s == MPI_PROC_NULL ? -1 : val(s, disp + 3, e);
                MT_CHECK(rb[e] == want, "%s: shift dim %d disp %d: [%d] = %d, expected %d",
                         label, d, disp, e, rb[e], want);
            }
        }
}

static void check_errors(MPI_Comm cart, MPI_Comm graph)
{
    int b[C] = {0}, r[C];
    MT_CHECK(mpitopo_cart_shift_xchg(b, C, MPI_INT, r, C, MPI_INT, 0, 1, graph) == MPI_ERR_TOPOLOGY,
             "shift on a dist-graph");
    MT_CHECK(mpitopo_cart_shift_xchg(b, C, MPI_INT, r, C, MPI_INT, 7, 1, cart) == MPITOPO_ERR_ARG,
             "direction 7");
    MT_CHECK(mpitopo_neighbor_xchg(b, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD) ==
                 MPI_ERR_TOPOLOGY,
             "xchg without topology");
    MT_CHECK(mpitopo_cart_shift_xchg(b, 2, MPI_INT, r, 1, MPI_INT, 0, 0, cart) ==
                 MPI_ERR_TRUNCATE,
             "a block to self larger than its receive block");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* 3-D: size x 1 x 1 with the middle dimension periodic (blocks to self)
     * and the first open. */
    int dims[3] = {size, 1, 1}, periods[3] = {0, 1, 0};
    MPI_Comm cart, pcart, dist;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    int pd[2] = {0, 0}, pp[2] = {1, 1};
    MPI_Dims_create(size, 2, pd);
    MPI_Cart_create(MPI_COMM_WORLD, 2, pd, pp, 0, &pcart);
    /* Dist-graph: a self edge, a duplicate edge to rank+1, and rank-2. */
    int srcs[4], dsts[4], n = 0;
    int nb[4] = {0, 1, 1, 2};
    for (int k = 0; k < 4; k++) {
        dsts[n] = (rank + nb[k]) % size;
        srcs[n++] = (rank - nb[k] + size) % size;
    }
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, srcs, MPI_UNWEIGHTED, n, dsts,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist);
    check_xchg(cart, 1, "cart size x 1p x 1");
    check_xchg(pcart, 1, "cart periodic 2-D");
    check_xchg(dist, 0, "dist-graph self+dup");
    check_shift(cart, 3, "cart size x 1p x 1");
    check_shift(pcart, 2, "cart periodic 2-D");
    check_errors(cart, dist);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&pcart);
    MPI_Comm_free(&dist);
    int code = mt_finish("neighbor_xchg");
    MPI_Finalize();
    return code;
}
