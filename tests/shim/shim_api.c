/*
 * The shim's behaviour, in a program linked with libmpitopo_shim:
 *   shim_api api     with MPITOPO_EMULATE giving at least two nodes:
 *                    interception, pass-through to MPI (reorder = 0, a
 *                    topology on comm, intercommunicator, MPI_COMM_NULL),
 *                    MPI_Dims_create as MPITOPO_DIMS says, error classes,
 *                    the communicator's error handler, and the Fortran
 *                    entry points called from C (an absent f08 ierror);
 *                    the same for the graph and dist-graph calls;
 *   shim_api envfail with a bad MPITOPO_EMULATE: every process gets
 *                    MPI_ERR_OTHER, through the error handler;
 *   shim_api kept    without MPITOPO_REORDER=job: reorder = 1 keeps MPI's
 *                    ranks (C and Fortran entries), MPI_Cart_map and
 *                    MPI_Graph_map are MPI's own; the info key
 *                    mpitopo_reorder = job on comm_old or in a dist-graph's
 *                    info renumbers;
 *   (api, under MPITOPO_REORDER=job, also checks that mpitopo_reorder =
 *   launch on comm_old keeps MPI's ranks.)
 *   shim_api fatal   an error under MPI_ERRORS_ARE_FATAL: MPI aborts the
 *                    program after the shim printed mpitopo's message (the
 *                    test expects that message and no "survived" line).
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Fortran bindings of the shim, as a Fortran compiler calls them. */
void mpi_cart_create_f08_(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                          MPI_Fint *);
void mpi_dims_create_(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
void mpi_dist_graph_create_adjacent_(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                     MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                     MPI_Fint *);
void mpi_graph_create_f08_(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                           MPI_Fint *);

static int error_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

#define CHECK_CLASS(rc, want, what)                                                            \
    MT_CHECK(error_class(rc) == (want), "%s returned %d (class %d), expected class %s (%d)",     \
             (what), (rc), error_class(rc), #want, (want))

static int handler_calls, handler_code;

static void count_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

/* MPI_Dims_create agrees with what MPITOPO_DIMS asks for. */
static void check_dims(void)
{
    static const int cases[][4] = {
        {0, 2, 0, 0}, {0, 3, 0, 0}, {12, 2, 0, 0}, {24, 3, 0, 0}, {0, 2, 1, 0}, {36, 3, 0, 3}};
    const char *mode = mt_getenv("MPITOPO_DIMS");
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int n = cases[k][0] ? cases[k][0] : size, nd = cases[k][1];
        int got[3] = {cases[k][2], 0, cases[k][3]}, want[3] = {cases[k][2], 0, cases[k][3]};
        int rc = MPI_Dims_create(n, nd, got), wrc;
        if (!mode)
            wrc = PMPI_Dims_create(n, nd, want);
        else if (!strcmp(mode, "nodes") && n == size)
            wrc = mpitopo_comm_dims_create(MPI_COMM_WORLD, nd, want);
        else
            wrc = mpitopo_dims_create(n, nd, want);
        MT_CHECK(rc == MPI_SUCCESS && wrc == 0, "MPI_Dims_create(%d, %d) returned %d (want %d)", n,
                 nd, rc, wrc);
        for (int i = 0; i < nd; i++)
            MT_CHECK(got[i] == want[i], "MPI_Dims_create(%d, %d): dims[%d] = %d, expected %d (%s)",
                     n, nd, i, got[i], want[i], mode ? mode : "MPI's own");
    }
    /* 7 processes cannot have a first dimension of 2: MPI_ERR_DIMS. */
    int bad[2] = {2, 0};
    CHECK_CLASS(MPI_Dims_create(7, 2, bad), MPI_ERR_DIMS, "MPI_Dims_create(7, {2, 0})");
    MPI_Fint fn = 7, fnd = 2, fdims[2] = {2, 0}, ierr = MPI_SUCCESS;
    mpi_dims_create_(&fn, &fnd, fdims, &ierr);
    CHECK_CLASS(ierr, MPI_ERR_DIMS, "mpi_dims_create_(7, {2, 0})");
}

/* A ring over world with reorder: mpitopo reorders it (the emulated nodes
 * are round-robin, so the identity is bad); MPI_Cart_map agrees; reorder =
 * 0 and a communicator with a topology go to MPI, which keeps the order. */
static void check_interception(MPI_Comm world)
{
    int size, rank, periods[1] = {1};
    MPI_Comm_size(world, &size);
    MPI_Comm_rank(world, &rank);
    int dims[1] = {size};
    MPI_Comm ring = MPI_COMM_NULL, plain = MPI_COMM_NULL, again = MPI_COMM_NULL;
    if (!MT_CHECK(MPI_Cart_create(world, 1, dims, periods, 1, &ring) == MPI_SUCCESS,
                  "MPI_Cart_create(reorder = 1) failed"))
        return;
    int *w = mt_world_ranks(ring), moved = 0, ring_rank, mapped = -1, topo = -1;
    for (int r = 0; r < size; r++)
        moved += w[r] != r;
    free(w);
    MT_CHECK(moved > 0, "MPI_Cart_create(reorder = 1) kept the identity: not intercepted?");
    MPI_Comm_rank(ring, &ring_rank);
    MPI_Cart_map(world, 1, dims, periods, &mapped);
    MT_CHECK(mapped == ring_rank, "MPI_Cart_map gives %d, MPI_Cart_create %d", mapped, ring_rank);

    MPI_Cart_create(world, 1, dims, periods, 0, &plain);
    MPI_Comm_rank(plain, &mapped);
    MT_CHECK(mapped == rank, "MPI_Cart_create(reorder = 0) moved rank %d to %d", rank, mapped);

    /* ring has a topology: MPI's own MPI_Cart_create, ranks as in ring;
     * MPI_Cart_map is still mpitopo's (a topology on comm is allowed). */
    MT_CHECK(MPI_Cart_create(ring, 1, dims, periods, 1, &again) == MPI_SUCCESS,
             "MPI_Cart_create on a Cartesian communicator failed");
    MPI_Topo_test(again, &topo);
    MT_CHECK(topo == MPI_CART, "MPI_Topo_test gives %d", topo);
    MPI_Comm_rank(again, &mapped);
    MT_CHECK(mapped == ring_rank, "a Cartesian communicator was reordered again (%d -> %d)",
             ring_rank, mapped);
    MT_CHECK(MPI_Cart_map(ring, 1, dims, periods, &mapped) == MPI_SUCCESS,
             "MPI_Cart_map on a Cartesian communicator failed");

    /* The f08 entry point with its optional ierror absent. */
    MPI_Fint fw = MPI_Comm_c2f(world), fnd = 1, fdims[1] = {size}, fper[1] = {1}, fre = 1, fnew;
    mpi_cart_create_f08_(&fw, &fnd, fdims, fper, &fre, &fnew, NULL);
    MPI_Comm fring = MPI_Comm_f2c(fnew);
    MPI_Comm_rank(fring, &mapped);
    MT_CHECK(mapped == ring_rank, "mpi_cart_create_f08_ gives rank %d, MPI_Cart_create %d", mapped,
             ring_rank);
    MPI_Comm_free(&fring);
    MPI_Comm_free(&again);
    MPI_Comm_free(&plain);
    MPI_Comm_free(&ring);
}

/* Errors: the MPI class, and the communicator's error handler called once
 * with the code that is returned. */
static void check_errors(MPI_Comm world)
{
    int size, periods[2] = {1, 1};
    MPI_Comm_size(world, &size);
    MPI_Comm comm, out = MPI_COMM_NULL;
    MPI_Comm_dup(world, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int zero[2] = {0, size}, big[2] = {size, 2}, one[1] = {1};
    CHECK_CLASS(MPI_Cart_create(comm, 2, zero, periods, 1, &out), MPI_ERR_DIMS, "dims {0, size}");
    CHECK_CLASS(MPI_Cart_create(comm, 2, big, periods, 1, &out), MPI_ERR_ARG, "dims {size, 2}");
    CHECK_CLASS(MPI_Cart_create(comm, -1, zero, periods, 1, &out), MPI_ERR_DIMS, "ndims -1");
    int newrank;
    CHECK_CLASS(MPI_Cart_map(comm, 2, big, periods, &newrank), MPI_ERR_ARG, "MPI_Cart_map {size, 2}");
    /* MPI's own errors: MPI_COMM_NULL (world's handler returns too). */
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_NULL, 1, one, periods, 1, &out), MPI_ERR_COMM,
                "MPI_COMM_NULL");

    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    MPI_Errhandler_free(&eh);
    int rc = MPI_Cart_create(comm, 2, zero, periods, 1, &out);
    MT_CHECK(handler_calls == 1 && handler_code == rc,
             "error handler called %d times with %d; MPI_Cart_create returned %d", handler_calls,
             handler_code, rc);
    MPI_Comm_free(&comm);

    /* An intercommunicator: MPI's own error. */
    int rank;
    MPI_Comm_rank(world, &rank);
    if (size >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(world, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, world, rank % 2 ? 0 : 1, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        CHECK_CLASS(MPI_Cart_create(inter, 1, one, periods, 1, &out), MPI_ERR_COMM,
                    "an intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
}

/* Rings of 4 consecutive ranks: on round-robin nodes the world order has
 * every ring across nodes, so reorder = 1 must move processes. */
static int ring_next(int v) { return v - v % 4 + (v % 4 + 1) % 4; }
static int ring_prev(int v) { return v - v % 4 + (v % 4 + 3) % 4; }

static int moved(MPI_Comm comm)
{
    int size, n = 0, *w = mt_world_ranks(comm);
    MPI_Comm_size(comm, &size);
    for (int r = 0; r < size; r++)
        n += w[r] != r;
    free(w);
    return n;
}

/* The graph calls are intercepted (reordered), reorder = 0 goes to MPI,
 * MPI_Graph_map agrees with MPI_Graph_create, and the Fortran entries give
 * the C result (the f08 one with its optional ierror absent). */
static void check_graph_interception(MPI_Comm world)
{
    int size, rank;
    MPI_Comm_size(world, &size);
    MPI_Comm_rank(world, &rank);
    if (size % 4 != 0)
        return;
    int nb[2] = {ring_prev(rank), ring_next(rank)}, rank_in;
    MPI_Comm g = MPI_COMM_NULL, plain = MPI_COMM_NULL;
    MPI_Dist_graph_create_adjacent(world, 2, nb, MPI_UNWEIGHTED, 2, nb, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 1, &g);
    MT_CHECK(g != MPI_COMM_NULL && moved(g) > 0,
             "MPI_Dist_graph_create_adjacent(reorder = 1) kept the world order: not intercepted?");
    MPI_Dist_graph_create_adjacent(world, 2, nb, MPI_UNWEIGHTED, 2, nb, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &plain);
    MT_CHECK(plain != MPI_COMM_NULL && moved(plain) == 0,
             "MPI_Dist_graph_create_adjacent(reorder = 0) moved processes");

    int *index = malloc((size_t)size * sizeof(int)), *edges = malloc((size_t)2 * size * sizeof(int));
    for (int v = 0; v < size; v++) {
        index[v] = 2 * (v + 1);
        edges[2 * v] = ring_next(v);
        edges[2 * v + 1] = ring_prev(v);
    }
    MPI_Comm gr = MPI_COMM_NULL, fgr;
    int mapped = -1, grank = -1;
    MPI_Graph_create(world, size, index, edges, 1, &gr);
    MT_CHECK(gr != MPI_COMM_NULL && moved(gr) > 0, "MPI_Graph_create(reorder = 1) kept the order");
    MPI_Graph_map(world, size, index, edges, &mapped);
    if (gr != MPI_COMM_NULL)
        MPI_Comm_rank(gr, &grank);
    MT_CHECK(mapped == grank, "MPI_Graph_map gives %d, MPI_Graph_create %d", mapped, grank);

    MPI_Fint fw = MPI_Comm_c2f(world), fn = size, fre = 1, fnew;
    mpi_graph_create_f08_(&fw, &fn, index, edges, &fre, &fnew, NULL);
    fgr = MPI_Comm_f2c(fnew);
    MPI_Comm_rank(fgr, &rank_in);
    MT_CHECK(rank_in == grank, "mpi_graph_create_f08_ gives rank %d, MPI_Graph_create %d", rank_in,
             grank);
    MPI_Comm_free(&fgr);
    free(index);
    free(edges);
    if (gr != MPI_COMM_NULL)
        MPI_Comm_free(&gr);
    if (plain != MPI_COMM_NULL)
        MPI_Comm_free(&plain);
    if (g != MPI_COMM_NULL)
        MPI_Comm_free(&g);
}

/* Bad graphs with reorder = 1: MPI_ERR_ARG on every process, through the
 * error handler, never a crash. */
static void check_graph_errors(MPI_Comm world)
{
    int size, rank, newrank;
    MPI_Comm_size(world, &size);
    MPI_Comm_rank(world, &rank);
    MPI_Comm comm, out = MPI_COMM_NULL;
    MPI_Comm_dup(world, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int bad[1] = {size}, neg[1] = {-1}, one[1] = {1}, me[1] = {rank}, w1[1] = {5};
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(comm, 1, bad, MPI_UNWEIGHTED, 0, NULL,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &out),
                MPI_ERR_ARG, "MPI_Dist_graph_create_adjacent with source = size");
    /* Only rank 0 is wrong: every process still fails, none hangs. */
    const int *dst = rank == 0 ? neg : me;
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(comm, 0, NULL, MPI_UNWEIGHTED, 1, dst,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &out),
                MPI_ERR_ARG, "MPI_Dist_graph_create_adjacent with destination -1 on rank 0");
    CHECK_CLASS(MPI_Dist_graph_create(comm, 1, me, one, bad, MPI_UNWEIGHTED, MPI_INFO_NULL, 1,
                                      &out),
                MPI_ERR_ARG, "MPI_Dist_graph_create with destination = size");
    /* Weights on even ranks, MPI_UNWEIGHTED on odd ones. */
    CHECK_CLASS(MPI_Dist_graph_create(comm, 1, me, one, me, rank % 2 ? MPI_UNWEIGHTED : w1,
                                      MPI_INFO_NULL, 1, &out),
                MPI_ERR_ARG, "MPI_Dist_graph_create with weights on some processes only");
    int index[2] = {1, 2}, edges[2] = {1, size + 5};
    CHECK_CLASS(MPI_Graph_create(comm, 2, index, edges, 1, &out), MPI_ERR_ARG,
                "MPI_Graph_create with an edge to size + 5");
    CHECK_CLASS(MPI_Graph_map(comm, 2, index, edges, &newrank), MPI_ERR_ARG,
                "MPI_Graph_map with an edge to size + 5");
    MT_CHECK(out == MPI_COMM_NULL, "a communicator was returned on failure");

    /* The Fortran binding reports through ierror. */
    MPI_Fint fc = MPI_Comm_c2f(comm), fin = 1, fout = 0, fre = 1, finfo = MPI_Info_c2f(MPI_INFO_NULL);
    MPI_Fint fsrc[1] = {size}, fw[1] = {1}, fnew = -1, ierr = MPI_SUCCESS;
    mpi_dist_graph_create_adjacent_(&fc, &fin, fsrc, fw, &fout, fsrc, fw, &finfo, &fre, &fnew,
                                    &ierr);
    CHECK_CLASS(ierr, MPI_ERR_ARG, "mpi_dist_graph_create_adjacent_ with source = size");

    /* The handler is called once, with the code that is returned. */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    MPI_Errhandler_free(&eh);
    handler_calls = 0;
    int rc = MPI_Graph_create(comm, 2, index, edges, 1, &out);
    MT_CHECK(handler_calls == 1 && handler_code == rc,
             "error handler called %d times with %d; MPI_Graph_create returned %d", handler_calls,
             handler_code, rc);
    MPI_Comm_free(&comm);

    /* An intercommunicator goes to MPI, which reports its own error. */
    if (size >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(world, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, world, rank % 2 ? 0 : 1, 8, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        CHECK_CLASS(MPI_Dist_graph_create_adjacent(inter, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &out),
                    MPI_ERR_COMM, "MPI_Dist_graph_create_adjacent on an intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
}

/* A duplicate of world carrying mpitopo_reorder = value (MPI_Comm_set_info:
 * the shim keeps the key on every MPI). */
static MPI_Comm dup_with_reorder(MPI_Comm world, const char *value)
{
    MPI_Comm dup;
    MPI_Info info;
    MPI_Comm_dup(world, &dup);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_reorder", value);
    MPI_Comm_set_info(dup, info);
    MPI_Info_free(&info);
    return dup;
}

/* The ring of check_interception on comm: how many processes moved. */
static int ring_moved(MPI_Comm comm, int *ring_rank)
{
    int size, periods[1] = {1};
    MPI_Comm_size(comm, &size);
    int dims[1] = {size}, n = -1;
    MPI_Comm ring = MPI_COMM_NULL;
    if (MPI_Cart_create(comm, 1, dims, periods, 1, &ring) != MPI_SUCCESS || ring == MPI_COMM_NULL)
        return -1;
    n = moved(ring);
    MPI_Comm_rank(ring, ring_rank);
    MPI_Comm_free(&ring);
    return n;
}

/* Under MPITOPO_REORDER=job, mpitopo_reorder = launch on comm_old keeps
 * MPI's ranks. */
static void check_info_keeps(MPI_Comm world)
{
    MPI_Comm dup = dup_with_reorder(world, "launch");
    int r;
    MT_CHECK(ring_moved(dup, &r) == 0, "mpitopo_reorder = launch on comm_old: ranks moved");
    MPI_Comm_free(&dup);
}

/* Without MPITOPO_REORDER=job: reorder = 1 keeps MPI's ranks, the maps are
 * MPI's own, and the info key asks for renumbering. */
static void check_kept(MPI_Comm world)
{
    int size, rank, periods[1] = {1}, r = -1, mine = -1, mpis = -1;
    MPI_Comm_size(world, &size);
    MPI_Comm_rank(world, &rank);
    int dims[1] = {size};
    MT_CHECK(ring_moved(world, &r) == 0 && r == rank, "MPI_Cart_create(reorder = 1) moved ranks");
    MPI_Cart_map(world, 1, dims, periods, &mine);
    PMPI_Cart_map(world, 1, dims, periods, &mpis);
    MT_CHECK(mine == mpis, "MPI_Cart_map gives %d, MPI's own %d", mine, mpis);

    MPI_Fint fw = MPI_Comm_c2f(world), fnd = 1, fdims[1] = {size}, fper[1] = {1}, fre = 1, fnew;
    mpi_cart_create_f08_(&fw, &fnd, fdims, fper, &fre, &fnew, NULL);
    MPI_Comm fring = MPI_Comm_f2c(fnew);
    MPI_Comm_rank(fring, &r);
    MT_CHECK(r == rank, "mpi_cart_create_f08_(reorder) moved rank %d to %d", rank, r);
    MPI_Comm_free(&fring);

    if (size % 4 == 0) {
        int nb[2] = {ring_prev(rank), ring_next(rank)};
        MPI_Comm g = MPI_COMM_NULL, gr = MPI_COMM_NULL;
        MPI_Dist_graph_create_adjacent(world, 2, nb, MPI_UNWEIGHTED, 2, nb, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 1, &g);
        MT_CHECK(g != MPI_COMM_NULL && moved(g) == 0,
                 "MPI_Dist_graph_create_adjacent(reorder = 1) moved processes");
        int *index = malloc((size_t)size * sizeof(int)), *edges = malloc((size_t)2 * size * sizeof(int));
        for (int v = 0; v < size; v++) {
            index[v] = 2 * (v + 1);
            edges[2 * v] = ring_next(v);
            edges[2 * v + 1] = ring_prev(v);
        }
        MPI_Graph_create(world, size, index, edges, 1, &gr);
        MT_CHECK(gr != MPI_COMM_NULL && moved(gr) == 0, "MPI_Graph_create(reorder = 1) moved processes");
        MPI_Graph_map(world, size, index, edges, &mine);
        PMPI_Graph_map(world, size, index, edges, &mpis);
        MT_CHECK(mine == mpis, "MPI_Graph_map gives %d, MPI's own %d", mine, mpis);
        if (gr != MPI_COMM_NULL)
            MPI_Comm_free(&gr);
        if (g != MPI_COMM_NULL)
            MPI_Comm_free(&g);

        /* The info of the call asks for it. */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpitopo_reorder", "job");
        MPI_Dist_graph_create_adjacent(world, 2, nb, MPI_UNWEIGHTED, 2, nb, MPI_UNWEIGHTED, info, 1,
                                       &g);
        MPI_Info_free(&info);
        MT_CHECK(g != MPI_COMM_NULL && moved(g) > 0,
                 "MPI_Dist_graph_create_adjacent with info mpitopo_reorder = job kept the order");
        if (g != MPI_COMM_NULL)
            MPI_Comm_free(&g);
        free(index);
        free(edges);
    }

    /* comm_old's key asks for it: renumbered, and MPI_Cart_map agrees. */
    MPI_Comm dup = dup_with_reorder(world, "job");
    MT_CHECK(ring_moved(dup, &r) > 0, "mpitopo_reorder = job on comm_old kept the order");
    MPI_Cart_map(dup, 1, dims, periods, &mine);
    MT_CHECK(mine == r, "MPI_Cart_map on comm_old with mpitopo_reorder = job gives %d, not %d", mine, r);
    MPI_Comm_free(&dup);
}

/* A bad MPITOPO_EMULATE: MPI_ERR_OTHER everywhere, through the handler. */
static void check_env_failure(MPI_Comm world)
{
    int size, periods[1] = {1}, newrank;
    MPI_Comm_size(world, &size);
    int dims[1] = {size};
    MPI_Comm out = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Cart_create(world, 1, dims, periods, 1, &out), MPI_ERR_OTHER,
                "MPI_Cart_create with a bad MPITOPO_EMULATE");
    CHECK_CLASS(MPI_Cart_map(world, 1, dims, periods, &newrank), MPI_ERR_OTHER,
                "MPI_Cart_map with a bad MPITOPO_EMULATE");
    int self[1];
    MPI_Comm_rank(world, self);
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(world, 1, self, MPI_UNWEIGHTED, 1, self,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &out),
                MPI_ERR_OTHER, "MPI_Dist_graph_create_adjacent with a bad MPITOPO_EMULATE");
    MT_CHECK(out == MPI_COMM_NULL, "a communicator was returned on failure");
    MT_CHECK(MPI_Cart_create(world, 1, dims, periods, 0, &out) == MPI_SUCCESS,
             "MPI_Cart_create(reorder = 0) should not need the emulation");
    if (out != MPI_COMM_NULL)
        MPI_Comm_free(&out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "api";
    if (!strcmp(mode, "fatal")) {
        int size, dims[2] = {0, 0}, periods[2] = {1, 1};
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        dims[1] = size;
        MPI_Comm out;
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &out);
        printf("survived an error under MPI_ERRORS_ARE_FATAL\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (!strcmp(mode, "envfail")) {
        check_env_failure(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "kept")) {
        check_kept(MPI_COMM_WORLD);
    } else {
        check_dims();
        check_interception(MPI_COMM_WORLD);
        check_errors(MPI_COMM_WORLD);
        check_graph_interception(MPI_COMM_WORLD);
        check_graph_errors(MPI_COMM_WORLD);
        check_info_keeps(MPI_COMM_WORLD);
    }
    int rc = mt_finish(!strcmp(mode, "envfail") ? "shim_api.envfail" : "shim_api");
    MPI_Finalize();
    return rc;
}
