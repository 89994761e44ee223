/*
 * An unmodified MPI program (MPI only; dlsym for the shim's counter) that
 * calls the five neighbourhood collectives, blocking and nonblocking, on a
 * Cartesian communicator with periodic dimensions of size 4, 2 and 1, a
 * non-periodic ring (MPI_PROC_NULL ends), a graph with self and duplicate
 * edges and a dist-graph with duplicate edges, and checks every received
 * element against what the neighbour lists imply.
 *
 *   shim_neighbor_c routed|passed
 *
 * routed: the shim must have taken every call on a topology communicator,
 * blocking and nonblocking (mpitopo_shim_neighbor_calls() counts them; the
 * nonblocking ones complete in one MPI_Waitall with two requests of the
 * program's own), a negative count must come back as MPI_ERR_ARG through
 * the communicator's error handler, and the Cartesian blocks must land as
 * the MPI-4.0 erratum says (block k of the sender in slot k^1), duplicate
 * edges in posting order. passed: no call taken (the counter, when the
 * shim is loaded, stays 0); where one process sends several blocks to another
 * (degenerate dimensions, duplicate edges) any of them may land in any of
 * their slots, as MPI libraries differ there. Prints "PASS shim_neighbor" on rank 0;
 * every failure prints a "FAIL shim_neighbor" line and the exit code is 1.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <mpi.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEG 8
#define SLOT 4 /* ints per receive slot: counts are 1..3, so gaps remain */
#define UNTOUCHED (-1)

/* The neighbour lists of every process of one communicator. */
typedef struct {
    const char *name;
    MPI_Comm comm;
    int is_cart;
    int size, rank;
    int (*lists)[2 * MAXDEG + 2]; /* per rank: indeg, outdeg, sources, destinations */
} topo_t;

static int failures;
static int world_rank;

static void fail(const topo_t *t, const char *op, const char *what)
{
    failures++;
    printf("FAIL shim_neighbor: rank %d, %s on %s: %s\n", world_rank, op, t->name, what);
}

static const int *sources(const topo_t *t, int r) { return &t->lists[r][2]; }
static const int *dests(const topo_t *t, int r) { return &t->lists[r][2 + MAXDEG]; }
static int indeg(const topo_t *t, int r) { return t->lists[r][0]; }
static int outdeg(const topo_t *t, int r) { return t->lists[r][1]; }

/* This process's lists as MPI defines them, then everyone's. */
static void topo_init(topo_t *t, const char *name, MPI_Comm comm)
{
    int kind, mine[2 * MAXDEG + 2] = {0};
    t->name = name;
    t->comm = comm;
    MPI_Comm_size(comm, &t->size);
    MPI_Comm_rank(comm, &t->rank);
    MPI_Topo_test(comm, &kind);
    t->is_cart = kind == MPI_CART;
    if (kind == MPI_CART) {
        int nd;
        MPI_Cartdim_get(comm, &nd);
        mine[0] = mine[1] = 2 * nd;
        for (int d = 0; d < nd; d++) {
            MPI_Cart_shift(comm, d, 1, &mine[2 + 2 * d], &mine[3 + 2 * d]);
            mine[2 + MAXDEG + 2 * d] = mine[2 + 2 * d];
            mine[3 + MAXDEG + 2 * d] = mine[3 + 2 * d];
        }
    } else if (kind == MPI_GRAPH) {
        MPI_Graph_neighbors_count(comm, t->rank, &mine[0]);
        mine[1] = mine[0];
        MPI_Graph_neighbors(comm, t->rank, MAXDEG, &mine[2]);
        memcpy(&mine[2 + MAXDEG], &mine[2], sizeof(int) * MAXDEG);
    } else {
        int w;
        MPI_Dist_graph_neighbors_count(comm, &mine[0], &mine[1], &w);
        MPI_Dist_graph_neighbors(comm, MAXDEG, &mine[2], MPI_UNWEIGHTED, MAXDEG,
                                 &mine[2 + MAXDEG], MPI_UNWEIGHTED);
    }
    t->lists = malloc(sizeof *t->lists * (size_t)t->size);
    MPI_Allgather(mine, 2 * MAXDEG + 2, MPI_INT, t->lists, 2 * MAXDEG + 2, MPI_INT, comm);
}

/* Which block of which sender lands in slot m, by MPI's matching in
 * posting order (one tag per pair of processes): the j-th edge from p to
 * us takes p's block at its j-th edge to us. Returns the block, -1 for
 * MPI_PROC_NULL. */
static int block_in_order(const topo_t *t, int m)
{
    int p = sources(t, t->rank)[m], j = 0;
    if (p == MPI_PROC_NULL)
        return -1;
    for (int i = 0; i < m; i++)
        j += sources(t, t->rank)[i] == p;
    for (int k = 0; k < outdeg(t, p); k++)
        if (dests(t, p)[k] == t->rank && j-- == 0)
            return k;
    return -2; /* the lists do not match: the test itself is wrong */
}

/* The block by direction (the MPI-4.0 erratum): slot m from the sender's
 * block m^1 in a Cartesian communicator, else as posted. */
static int block_by_rule(const topo_t *t, int m)
{
    if (t->is_cart)
        return sources(t, t->rank)[m] == MPI_PROC_NULL ? -1 : m ^ 1;
    return block_in_order(t, m);
}

static int value(int p, int k, int e) { return p * 10000 + k * 100 + e; }
/* The same for both directions of a Cartesian dimension (k / 2), so that
 * MPI's own, delivering a degenerate dimension in posting order, meets
 * the receive counts the erratum order implies. */
static int count_of(int p, int k) { return 1 + (p + k / 2) % 3; }

enum op { ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW, NOPS };
static const char *const op_names[NOPS] = {"allgather", "allgatherv", "alltoall", "alltoallv",
                                           "alltoallw"};

/* Ints per block: the fixed count of allgather and alltoall (whose blocks
 * are contiguous), else a slot with room for a gap. */
static int stride(enum op op) { return op == ALLGATHER || op == ALLTOALL ? 2 : SLOT; }

/* Receive slot m starts at this int: alltoallw fills the slots backwards,
 * so byte displacements are really used. */
static int slot_start(const topo_t *t, enum op op, int m)
{
    return stride(op) * (op == ALLTOALLW ? indeg(t, t->rank) - 1 - m : m);
}

/* Fill exp with what mpitopo must leave in the receive buffer. */
static void expected(const topo_t *t, enum op op, int *exp)
{
    int in = indeg(t, t->rank);
    for (int i = 0; i < stride(op) * in; i++)
        exp[i] = UNTOUCHED;
    for (int m = 0; m < in; m++) {
        int p = sources(t, t->rank)[m], k = block_by_rule(t, m);
        if (k == -1)
            continue;
        if (op == ALLGATHER || op == ALLGATHERV)
            k = 0; /* every destination gets the same block */
        int n = op == ALLGATHER || op == ALLTOALL ? 2 : count_of(p, k);
        for (int e = 0; e < n; e++)
            exp[slot_start(t, op, m) + e] = k < 0 ? -999 : value(p, k, e);
    }
}

/* Everything op needs, built from this process's lists. */
typedef struct {
    int send[SLOT * MAXDEG], recv[SLOT * MAXDEG];
    int scounts[MAXDEG], sdispls[MAXDEG], rcounts[MAXDEG], rdispls[MAXDEG];
    MPI_Aint sbytes[MAXDEG], rbytes[MAXDEG];
    MPI_Datatype types[MAXDEG];
} args_t;

static void args_init(const topo_t *t, enum op op, args_t *a)
{
    int me = t->rank;
    for (int k = 0; k < outdeg(t, me); k++) {
        int n = op == ALLGATHER || op == ALLTOALL ? 2 : count_of(me, k);
        a->scounts[k] = n;
        a->sdispls[k] = stride(op) * k;
        a->sbytes[k] = (MPI_Aint)(stride(op) * k * (int)sizeof(int));
        for (int e = 0; e < stride(op); e++)
            a->send[stride(op) * k + e] =
                value(me, op == ALLGATHER || op == ALLGATHERV ? 0 : k, e);
    }
    for (int m = 0; m < indeg(t, me); m++) {
        int p = sources(t, me)[m], k = block_by_rule(t, m);
        a->rcounts[m] = p == MPI_PROC_NULL ? 0 : op == ALLGATHERV ? count_of(p, 0)
                                                                  : count_of(p, k < 0 ? 0 : k);
        a->rdispls[m] = slot_start(t, op, m);
        a->rbytes[m] = (MPI_Aint)(slot_start(t, op, m) * sizeof(int));
    }
    for (int i = 0; i < MAXDEG; i++)
        a->types[i] = MPI_INT;
    for (int i = 0; i < SLOT * MAXDEG; i++)
        a->recv[i] = UNTOUCHED;
}

/* Run op, blocking or with MPI_Ineighbor_* completed by one MPI_Waitall
 * together with a message of the program's own. */
static int run(const topo_t *t, enum op op, int blocking, args_t *a)
{
    MPI_Request r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Request *q = blocking ? NULL : &r[0];
    int own_out = 7, own_in = 0, rc = MPI_SUCCESS;
    MPI_Comm c = t->comm;
    switch (op) {
    case ALLGATHER:
        rc = q ? MPI_Ineighbor_allgather(a->send, 2, MPI_INT, a->recv, 2, MPI_INT, c, q)
               : MPI_Neighbor_allgather(a->send, 2, MPI_INT, a->recv, 2, MPI_INT, c);
        break;
    case ALLGATHERV:
        rc = q ? MPI_Ineighbor_allgatherv(a->send, count_of(t->rank, 0), MPI_INT, a->recv,
                                          a->rcounts, a->rdispls, MPI_INT, c, q)
               : MPI_Neighbor_allgatherv(a->send, count_of(t->rank, 0), MPI_INT, a->recv,
                                         a->rcounts, a->rdispls, MPI_INT, c);
        break;
    case ALLTOALL:
        rc = q ? MPI_Ineighbor_alltoall(a->send, 2, MPI_INT, a->recv, 2, MPI_INT, c, q)
               : MPI_Neighbor_alltoall(a->send, 2, MPI_INT, a->recv, 2, MPI_INT, c);
        break;
    case ALLTOALLV:
        rc = q ? MPI_Ineighbor_alltoallv(a->send, a->scounts, a->sdispls, MPI_INT, a->recv,
                                         a->rcounts, a->rdispls, MPI_INT, c, q)
               : MPI_Neighbor_alltoallv(a->send, a->scounts, a->sdispls, MPI_INT, a->recv,
                                        a->rcounts, a->rdispls, MPI_INT, c);
        break;
    default:
        rc = q ? MPI_Ineighbor_alltoallw(a->send, a->scounts, a->sbytes, a->types, a->recv,
                                         a->rcounts, a->rbytes, a->types, c, q)
               : MPI_Neighbor_alltoallw(a->send, a->scounts, a->sbytes, a->types, a->recv,
                                        a->rcounts, a->rbytes, a->types, c);
        break;
    }
    if (rc != MPI_SUCCESS || blocking)
        return rc;
    MPI_Irecv(&own_in, 1, MPI_INT, t->rank, 99, c, &r[1]);
    MPI_Isend(&own_out, 1, MPI_INT, t->rank, 99, c, &r[2]);
    rc = MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    return rc == MPI_SUCCESS && own_in != 7 ? MPI_ERR_OTHER : rc;
}

/* Whether slot m holds block k of its source p, as op delivers it. */
static int slot_holds(const topo_t *t, enum op op, const int *recv, int m, int k)
{
    int p = sources(t, t->rank)[m], at = slot_start(t, op, m);
    if (op == ALLGATHER || op == ALLGATHERV)
        k = 0; /* every destination gets the same block */
    int n = op == ALLGATHER || op == ALLTOALL ? 2 : count_of(p, k);
    for (int e = 0; e < stride(op); e++) {
        int want = e >= n ? UNTOUCHED : value(p, k, e);
        if (recv[at + e] != want)
            return 0;
    }
    return 1;
}

/* MPI's own: the standard leaves open which of several messages between
 * one pair of processes lands where (periodic dimensions of size 1 or 2,
 * duplicate edges; MPICH 4.0 and Open MPI 4.1 differ), so slot m may hold
 * any block its source addresses to us. */
static int loosely_right(const topo_t *t, enum op op, const int *recv)
{
    for (int m = 0; m < indeg(t, t->rank); m++) {
        int p = sources(t, t->rank)[m], ok = 0;
        if (p == MPI_PROC_NULL) {
            for (int e = 0; e < stride(op); e++)
                ok += recv[slot_start(t, op, m) + e] == UNTOUCHED;
            ok = ok == stride(op);
        }
        for (int k = 0; p != MPI_PROC_NULL && k < outdeg(t, p) && !ok; k++)
            ok = dests(t, p)[k] == t->rank && slot_holds(t, op, recv, m, k);
        if (!ok)
            return 0;
    }
    return 1;
}

/* strict: exactly as mpitopo delivers (erratum, then posting order). */
static void check_op(const topo_t *t, enum op op, int blocking, int strict)
{
    args_t a;
    int exp[SLOT * MAXDEG];
    size_t n = sizeof(int) * (size_t)(stride(op) * indeg(t, t->rank));
    char what[128];
    args_init(t, op, &a);
    expected(t, op, exp);
    snprintf(what, sizeof what, "%s (%s)", op_names[op], blocking ? "blocking" : "nonblocking");
    if (run(t, op, blocking, &a) != MPI_SUCCESS)
        fail(t, what, "error returned");
    else if (strict ? memcmp(a.recv, exp, n) != 0 : !loosely_right(t, op, a.recv))
        fail(t, what, "wrong data received");
}

/* The shim's counter, 0 when the shim is not loaded. */
static long routed_calls(void)
{
    long (*calls)(void);
    *(void **)&calls = dlsym(RTLD_DEFAULT, "mpitopo_shim_neighbor_calls");
    return calls ? calls() : 0;
}

static int handler_calls;
static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    handler_calls++;
}

/* routed: a negative count is MPI_ERR_ARG, raised through comm's handler. */
static void check_error(const topo_t *t)
{
    MPI_Errhandler eh;
    int buf[2 * MAXDEG], cls = MPI_SUCCESS;
    MPI_Comm_create_errhandler(count_errors, &eh);
    MPI_Comm_set_errhandler(t->comm, eh);
    int rc = MPI_Neighbor_allgather(buf, -1, MPI_INT, buf, 1, MPI_INT, t->comm);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_ARG || handler_calls != 1)
        fail(t, "allgather", "sendcount -1 is not MPI_ERR_ARG through the error handler");
    MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);
}

/* Graph: a ring with a self edge everywhere and a doubled edge between 4i
 * and 4i+1 (listed on both sides, so the graph stays symmetric). */
static MPI_Comm make_graph(int p)
{
    int index[64], edges[256], e = 0;
    for (int r = 0; r < p; r++) {
        edges[e++] = (r + p - 1) % p;
        edges[e++] = (r + 1) % p;
        edges[e++] = r;
        if (r % 4 == 0)
            edges[e++] = (r + 1) % p;
        if (r % 4 == 1)
            edges[e++] = (r + p - 1) % p;
        index[r] = e;
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, p, index, edges, 0, &g);
    return g;
}

static MPI_Comm make_dist_graph(int p, int r)
{
    int dst[3] = {(r + 1) % p, (r + 3) % p, (r + 1) % p};
    int src[3] = {(r + p - 1) % p, (r + p - 3) % p, (r + p - 1) % p};
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, src, MPI_UNWEIGHTED, 3, dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &g);
    return g;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p, strict = argc > 1 && strcmp(argv[1], "routed") == 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (p != 8 || argc != 2 || (!strict && strcmp(argv[1], "passed") != 0)) {
        if (world_rank == 0)
            printf("FAIL shim_neighbor: usage: 8 processes, routed|passed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    MPI_Comm comms[4];
    int dims3[3] = {4, 2, 1}, periods3[3] = {1, 1, 1}, dims1[1] = {8}, periods1[1] = {0};
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims3, periods3, 1, &comms[0]);
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, periods1, 0, &comms[1]);
    comms[2] = make_graph(p);
    comms[3] = make_dist_graph(p, world_rank);
    static const char *const names[4] = {"cart 4x2x1 periodic", "cart 8 open", "graph",
                                         "dist-graph"};
    topo_t t[4];
    for (int i = 0; i < 4; i++)
        topo_init(&t[i], names[i], comms[i]);

    long routed_expected = 0;
    for (int i = 0; i < 4; i++)
        for (int op = 0; op < NOPS; op++) {
            check_op(&t[i], (enum op)op, 1, strict);
            routed_expected++;
            check_op(&t[i], (enum op)op, 0, strict);
            routed_expected++;
        }
    if (strict) {
        check_error(&t[1]);
        routed_expected++;
    }

    long calls = routed_calls();
    if (calls != (strict ? routed_expected : 0)) {
        char what[96];
        snprintf(what, sizeof what, "the shim routed %ld calls, expected %ld", calls,
                 strict ? routed_expected : 0);
        fail(&t[0], "counter", what);
    }

    for (int i = 0; i < 4; i++) {
        free(t[i].lists);
        MPI_Comm_free(&comms[i]);
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0 && total == 0)
        printf("PASS shim_neighbor %s\n", argv[1]);
    MPI_Finalize();
    return total != 0;
}
