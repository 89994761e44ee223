/*
 * Persistent neighbourhood collectives (mpitopo_neighbor_*_init, start,
 * startall, wait, test, free): many runs of one request with new buffer
 * contents each time, compared with MPI_Neighbor_* (and, where the MPI has
 * them, MPI-4's MPI_Neighbor_*_init) on Cartesian, graph and dist-graph
 * communicators. Periodic dimensions have size >= 3 here: sizes 1 and 2
 * are where MPI libraries differ (neighbor_linear covers them). Then a
 * stress test: 20 nonblocking alltoalls in flight on a fresh communicator
 * (so its private communicator is still being made), completed in reverse
 * order, checked against the data each neighbour sent.
 */
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

enum { AG, AGV, A2A, A2AV, A2AW, NOPS };
static const char *op_name[NOPS] = {"allgather", "allgatherv", "alltoall", "alltoallv",
                                    "alltoallw"};
#define CNT 3
#define RUNS 6

typedef struct bufs {
    int deg_in, deg_out;
    int *send, *recv, *ref, *ref4;
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Aint *sb, *rb;
    MPI_Datatype *st, *rt;
} bufs_t;

/* Blocks of CNT ints; receive blocks laid out in reverse with a gap. */
static void bufs_make(bufs_t *b, int in, int out)
{
    b->deg_in = in;
    b->deg_out = out;
    size_t nin = (size_t)in + 1, nout = (size_t)out + 1, rlen = (size_t)(CNT + 1) * nin;
    b->send = calloc((size_t)CNT * nout, sizeof(int));
    b->recv = calloc(rlen, sizeof(int));
    b->ref = calloc(rlen, sizeof(int));
    b->ref4 = calloc(rlen, sizeof(int));
    b->scounts = calloc(nout, sizeof(int));
    b->sdispls = calloc(nout, sizeof(int));
    b->rcounts = calloc(nin, sizeof(int));
    b->rdispls = calloc(nin, sizeof(int));
    b->sb = calloc(nout, sizeof(MPI_Aint));
    b->rb = calloc(nin, sizeof(MPI_Aint));
    b->st = calloc(nout, sizeof(MPI_Datatype));
    b->rt = calloc(nin, sizeof(MPI_Datatype));
    for (int j = 0; j < out; j++) {
        b->scounts[j] = CNT;
        b->sdispls[j] = j * CNT;
        b->sb[j] = (MPI_Aint)j * CNT * (MPI_Aint)sizeof(int);
        b->st[j] = MPI_INT;
    }
    for (int i = 0; i < in; i++) {
        b->rcounts[i] = CNT;
        b->rdispls[i] = (in - 1 - i) * (CNT + 1) + 1;
        b->rb[i] = (MPI_Aint)b->rdispls[i] * (MPI_Aint)sizeof(int);
        b->rt[i] = MPI_INT;
    }
}

static void bufs_free(bufs_t *b)
{
    void *p[] = {b->send, b->recv, b->ref, b->ref4, b->scounts, b->sdispls, b->rcounts,
                 b->rdispls, b->sb, b->rb, b->st, b->rt};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        free(p[i]);
}

/* New contents for run `run`: sends and all receive buffers (sentinels). */
static void bufs_fill(bufs_t *b, int rank, int run)
{
    for (int i = 0; i < CNT * (b->deg_out + 1); i++)
        b->send[i] = run * 1000000 + rank * 1000 + i;
    for (int i = 0; i < (CNT + 1) * (b->deg_in + 1); i++)
        b->recv[i] = b->ref[i] = b->ref4[i] = -1 - run;
}

static int rlen(const bufs_t *b)
{
    return (CNT + 1) * (b->deg_in + 1);
}

static int mine_init(int op, bufs_t *b, MPI_Comm c, mpitopo_request_t *q)
{
    switch (op) {
    case AG:
        return mpitopo_neighbor_allgather_init(b->send, CNT, MPI_INT, b->recv, CNT, MPI_INT, c,
                                               MPI_INFO_NULL, q);
    case AGV:
        return mpitopo_neighbor_allgatherv_init(b->send, CNT, MPI_INT, b->recv, b->rcounts,
                                                b->rdispls, MPI_INT, c, MPI_INFO_NULL, q);
    case A2A:
        return mpitopo_neighbor_alltoall_init(b->send, CNT, MPI_INT, b->recv, CNT, MPI_INT, c,
                                              MPI_INFO_NULL, q);
    case A2AV:
        return mpitopo_neighbor_alltoallv_init(b->send, b->scounts, b->sdispls, MPI_INT, b->recv,
                                               b->rcounts, b->rdispls, MPI_INT, c, MPI_INFO_NULL,
                                               q);
    default:
        return mpitopo_neighbor_alltoallw_init(b->send, b->scounts, b->sb, b->st, b->recv,
                                               b->rcounts, b->rb, b->rt, c, MPI_INFO_NULL, q);
    }
}

/* The reference: MPI's blocking call into ref. */
static int reference(int op, bufs_t *b, MPI_Comm c)
{
    switch (op) {
    case AG:
        return MPI_Neighbor_allgather(b->send, CNT, MPI_INT, b->ref, CNT, MPI_INT, c);
    case AGV:
        return MPI_Neighbor_allgatherv(b->send, CNT, MPI_INT, b->ref, b->rcounts, b->rdispls,
                                       MPI_INT, c);
    case A2A:
        return MPI_Neighbor_alltoall(b->send, CNT, MPI_INT, b->ref, CNT, MPI_INT, c);
    case A2AV:
        return MPI_Neighbor_alltoallv(b->send, b->scounts, b->sdispls, MPI_INT, b->ref,
                                      b->rcounts, b->rdispls, MPI_INT, c);
    default:
        return MPI_Neighbor_alltoallw(b->send, b->scounts, b->sb, b->st, b->ref, b->rcounts,
                                      b->rb, b->rt, c);
    }
}

#if MPI_VERSION >= 4
/* MPI-4's own persistent form, into ref4. */
static int mpi_init(int op, bufs_t *b, MPI_Comm c, MPI_Request *q)
{
    switch (op) {
    case AG:
        return MPI_Neighbor_allgather_init(b->send, CNT, MPI_INT, b->ref4, CNT, MPI_INT, c,
                                           MPI_INFO_NULL, q);
    case AGV:
        return MPI_Neighbor_allgatherv_init(b->send, CNT, MPI_INT, b->ref4, b->rcounts,
                                            b->rdispls, MPI_INT, c, MPI_INFO_NULL, q);
    case A2A:
        return MPI_Neighbor_alltoall_init(b->send, CNT, MPI_INT, b->ref4, CNT, MPI_INT, c,
                                          MPI_INFO_NULL, q);
    case A2AV:
        return MPI_Neighbor_alltoallv_init(b->send, b->scounts, b->sdispls, MPI_INT, b->ref4,
                                           b->rcounts, b->rdispls, MPI_INT, c, MPI_INFO_NULL, q);
    default:
        return MPI_Neighbor_alltoallw_init(b->send, b->scounts, b->sb, b->st, b->ref4,
                                           b->rcounts, b->rb, b->rt, c, MPI_INFO_NULL, q);
    }
}
#endif

/* RUNS starts of one persistent request, alternating wait, test loops and
 * startall, each compared with MPI. */
static void check_op(int op, MPI_Comm c, const char *label)
{
    int rank, in, out;
    MPI_Comm_rank(c, &rank);
    if (!MT_CHECK_RC(mpitopo_comm_neighbors_count(c, &in, &out)))
        return;
    bufs_t b;
    bufs_make(&b, in, out);
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    int ok = MT_CHECK_RC(mine_init(op, &b, c, &q));
#if MPI_VERSION >= 4
    MPI_Request q4 = MPI_REQUEST_NULL;
    ok = ok && MT_CHECK(mpi_init(op, &b, c, &q4) == MPI_SUCCESS, "MPI %s_init", op_name[op]);
#endif
    for (int run = 0; ok && run < RUNS; run++) {
        bufs_fill(&b, rank, run);
        ok = MT_CHECK_RC(run % 3 == 2 ? mpitopo_startall(1, &q) : mpitopo_start(&q));
        int flag = 0;
        while (ok && run % 2 && !flag)
            ok = MT_CHECK_RC(mpitopo_test(&q, &flag));
        ok = ok && MT_CHECK_RC(mpitopo_wait(&q));
        ok = ok && MT_CHECK(q != MPITOPO_REQUEST_NULL, "%s: persistent request released", label);
        ok = ok && MT_CHECK(reference(op, &b, c) == MPI_SUCCESS, "MPI %s", op_name[op]);
        ok = ok && MT_CHECK(!memcmp(b.recv, b.ref, (size_t)rlen(&b) * sizeof(int)),
                            "%s: %s run %d differs from MPI_Neighbor_%s", label, op_name[op],
                            run, op_name[op]);
#if MPI_VERSION >= 4
        ok = ok && MT_CHECK(MPI_Start(&q4) == MPI_SUCCESS && MPI_Wait(&q4, MPI_STATUS_IGNORE) ==
                                                                 MPI_SUCCESS,
                            "MPI persistent %s", op_name[op]);
        ok = ok && MT_CHECK(!memcmp(b.recv, b.ref4, (size_t)rlen(&b) * sizeof(int)),
                            "%s: %s run %d differs from MPI_Neighbor_%s_init", label,
                            op_name[op], run, op_name[op]);
#endif
    }
    MT_CHECK_RC(mpitopo_request_free(&q));
    MT_CHECK(q == MPITOPO_REQUEST_NULL, "request_free left the handle set");
#if MPI_VERSION >= 4
    if (q4 != MPI_REQUEST_NULL)
        MPI_Request_free(&q4);
#endif
    bufs_free(&b);
}

/* 20 ineighbor_alltoall in flight, completed in reverse order. On a
 * Cartesian communicator block k comes from sources[k]'s block k^1. */
static void stress(MPI_Comm c)
{
    enum { N = 20 };
    int rank, deg;
    MPI_Comm_rank(c, &rank);
    MT_CHECK_RC(mpitopo_comm_neighbors_count(c, &deg, NULL));
    int *src = malloc(((size_t)deg + 1) * sizeof(int));
    MT_CHECK_RC(mpitopo_comm_neighbors(c, deg, src, 0, NULL));
    int *sb = malloc((size_t)N * ((size_t)deg + 1) * sizeof(int));
    int *rb = malloc((size_t)N * ((size_t)deg + 1) * sizeof(int));
    mpitopo_request_t q[N];
    for (int n = 0; n < N; n++) {
        for (int k = 0; k < deg; k++) {
            sb[n * deg + k] = n * 1000000 + rank * 100 + k;
            rb[n * deg + k] = -1;
        }
        MT_CHECK_RC(mpitopo_ineighbor_alltoall(sb + n * deg, 1, MPI_INT, rb + n * deg, 1,
                                               MPI_INT, c, &q[n]));
    }
    for (int n = N - 1; n >= 0; n--)
        MT_CHECK_RC(mpitopo_wait(&q[n]));
    for (int n = 0; n < N; n++)
        for (int k = 0; k < deg; k++) {
            int want = src[k] == MPI_PROC_NULL ? -1 : n * 1000000 + src[k] * 100 + (k ^ 1);
            MT_CHECK(rb[n * deg + k] == want, "stress: call %d block %d = %d, expected %d", n, k,
                     rb[n * deg + k], want);
        }
    free(src);
    free(sb);
    free(rb);
}

static void all_ops(MPI_Comm c, const char *label, int with_w)
{
    for (int op = 0; op < NOPS; op++)
        if (op != A2AW || with_w)
            check_op(op, c, label);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int dims[2] = {0, 0}, periods[2];
    MPI_Dims_create(size, 2, dims);
    for (int d = 0; d < 2; d++)
        periods[d] = dims[d] >= 3;
    MPI_Comm cart, cart1, ring, dist;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    int d1 = size, p1 = 0;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 0, &cart1);
    all_ops(cart, "cart 2-D", 1);
    all_ops(cart1, "cart 1-D open", 1);

    /* Graph: a ring (one neighbour when size 2, none when size 1). */
    int *index = malloc((size_t)size * sizeof(int)), *edges = malloc(2 * (size_t)size * sizeof(int));
    int ne = 0;
    for (int r = 0; r < size; r++) {
        if (size > 1)
            edges[ne++] = (r + 1) % size;
        if (size > 2)
            edges[ne++] = (r + size - 1) % size;
        index[r] = ne;
    }
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &ring);
    all_ops(ring, "graph ring", 0);

    /* Dist-graph: out-edges to rank+1 and rank+3 (distinct when size > 3),
     * in-edges the matching ones; rank 0 has none either way when size > 1. */
    int srcs[2], dsts[2], nin = 0, nout = 0;
    for (int s = 1; s <= 3 && size > 3; s += 2) {
        dsts[nout++] = (rank + s) % size;
        srcs[nin++] = (rank - s + size) % size;
    }
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, srcs, MPI_UNWEIGHTED, nout, dsts,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist);
    all_ops(dist, "dist-graph", 0);

    MPI_Comm fresh;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &fresh);
    stress(fresh);
    stress(fresh);

    MPI_Comm comms[] = {cart, cart1, ring, dist, fresh};
    for (size_t i = 0; i < sizeof comms / sizeof *comms; i++)
        MPI_Comm_free(&comms[i]);
    free(index);
    free(edges);
    int code = mt_finish("neighbor_persistent");
    MPI_Finalize();
    return code;
}
