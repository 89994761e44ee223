/*
 * An unmodified MPI program (MPI only; dlsym for the shim's counter) that
 * completes nonblocking neighbourhood collectives with every kind of MPI
 * completion call, and runs the MPI-4 persistent ones (when mpi.h has
 * them), on a dist-graph where rank r sends to r+1, r+2, r+3 (mod p) and
 * receives from r-1, r-2, r-3 (p >= 4: no duplicate edges, so every block
 * has one place to land whichever MPI or schedule delivers it):
 *   MPI_Wait, MPI_Wait on the program's own request that a neighbour
 *   answers only after the collective (the shim must progress it meanwhile),
 *   MPI_Test loops, MPI_Waitall mixed with the program's own
 *   MPI_Isend / MPI_Irecv, MPI_Waitany and MPI_Testsome over such a mix,
 *   MPI_Testall, MPI_Request_get_status, 40 at once with MPI_Waitsome;
 *   MPI_Neighbor_*_init started with
 *   MPI_Start and MPI_Startall several times with new data, completed
 *   with MPI_Wait / MPI_Waitall, freed with MPI_Request_free.
 * Every received element is checked on every rank, and completed requests
 * must be MPI_REQUEST_NULL (nonblocking) or stay allocated (persistent).
 *
 *   shim_neighbor_req routed|passed
 *
 * routed: the shim's counter (mpitopo_shim_neighbor_calls) must equal the
 * number of nonblocking and _init calls made, and a bad argument and
 * MPI_Cancel must raise errors through the communicator's handler;
 * passed: the counter is 0. Prints
 * "PASS shim_neighbor_req" on rank 0, else "FAIL shim_neighbor_req" lines;
 * exit code 1 on failure.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <mpi.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG 3
#define N 2 /* ints per block */

static int rank, size, failures;
static long calls_made; /* nonblocking and _init neighbourhood calls */
static MPI_Comm graph;

static void fail(const char *test, const char *what)
{
    failures++;
    printf("FAIL shim_neighbor_req: rank %d, %s: %s\n", rank, test, what);
}

static int src_of(int i) { return (rank - 1 - i + size) % size; }
static int value(int sender, int block, int iter, int e)
{
    return sender * 100000 + block * 1000 + iter * 10 + e;
}

/* One exchange's buffers: alltoall sends block j to destination j,
 * allgather the same block (block 0) to all. */
typedef struct {
    int send[DEG * N], recv[DEG * N];
} xbuf_t;

static void fill(xbuf_t *b, int alltoall, int iter)
{
    for (int j = 0; j < DEG; j++)
        for (int e = 0; e < N; e++)
            b->send[j * N + e] = value(rank, alltoall ? j : 0, iter, e);
    for (int i = 0; i < DEG * N; i++)
        b->recv[i] = -1;
}

/* Source i (at r - 1 - i) sent us its block i (we are its destination i). */
static void check(const char *test, const xbuf_t *b, int alltoall, int iter)
{
    for (int i = 0; i < DEG; i++)
        for (int e = 0; e < N; e++)
            if (b->recv[i * N + e] != value(src_of(i), alltoall ? i : 0, iter, e)) {
                char what[128];
                snprintf(what, sizeof what, "block %d element %d is %d, expected %d", i, e,
                         b->recv[i * N + e], value(src_of(i), alltoall ? i : 0, iter, e));
                fail(test, what);
                return;
            }
}

static void start(xbuf_t *b, int alltoall, MPI_Request *r)
{
    calls_made++;
    if (alltoall)
        MPI_Ineighbor_alltoall(b->send, N, MPI_INT, b->recv, N, MPI_INT, graph, r);
    else
        MPI_Ineighbor_allgather(b->send, N, MPI_INT, b->recv, N, MPI_INT, graph, r);
}

static void test_wait(void)
{
    xbuf_t b;
    MPI_Request r;
    MPI_Status st;
    fill(&b, 1, 1);
    start(&b, 1, &r);
    MPI_Wait(&r, &st);
    if (r != MPI_REQUEST_NULL)
        fail("MPI_Wait", "request not MPI_REQUEST_NULL");
    check("MPI_Wait", &b, 1, 1);
}

/* A wait on the program's own request while a routed collective is in
 * flight: even ranks wait for a message that their right neighbour sends
 * only after its own collective has completed, which (under a schedule of
 * several rounds) needs the even rank's later rounds: the shim's MPI_Wait
 * must move the collective on while it waits. */
static void test_plain_wait(void)
{
    xbuf_t b;
    MPI_Request r, own = MPI_REQUEST_NULL;
    int token = -1, peer = rank % 2 ? rank - 1 : rank + 1;
    fill(&b, 1, 9);
    start(&b, 1, &r);
    if (rank % 2 == 0 && peer < size) {
        MPI_Irecv(&token, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &own);
        MPI_Wait(&own, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (token != peer)
            fail("MPI_Wait (own request)", "the token from the right neighbour is wrong");
    } else {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (rank % 2)
            MPI_Send(&rank, 1, MPI_INT, peer, 11, MPI_COMM_WORLD);
    }
    check("MPI_Wait (own request first)", &b, 1, 9);
}

static void test_test(void)
{
    xbuf_t b;
    MPI_Request r;
    int flag = 0, rounds = 0, got = 0;
    fill(&b, 0, 2);
    start(&b, 0, &r);
    while (!got && rounds++ < 100000000) {
        MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
        MPI_Test(&r, &got, MPI_STATUS_IGNORE);
        if (got && !flag && r != MPI_REQUEST_NULL)
            fail("MPI_Test", "completed but the request is not MPI_REQUEST_NULL");
    }
    if (!got)
        fail("MPI_Test", "never completed");
    /* A null request tests complete. */
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    if (!flag)
        fail("MPI_Test", "MPI_REQUEST_NULL not complete");
    check("MPI_Test", &b, 0, 2);
}

/* Two collectives and a message to ourselves (receive posted first). */
typedef struct {
    xbuf_t a, g;
    int own_in, own_out;
    MPI_Request r[4];
} mix_t;

static void mix_start(mix_t *m, int iter)
{
    fill(&m->a, 1, iter);
    fill(&m->g, 0, iter);
    m->own_in = -1;
    m->own_out = 4242 + iter;
    MPI_Irecv(&m->own_in, 1, MPI_INT, rank, 7, graph, &m->r[0]);
    start(&m->a, 1, &m->r[1]);
    start(&m->g, 0, &m->r[2]);
    MPI_Isend(&m->own_out, 1, MPI_INT, rank, 7, graph, &m->r[3]);
}

static void mix_check(const char *test, mix_t *m, int iter)
{
    for (int i = 0; i < 4; i++)
        if (m->r[i] != MPI_REQUEST_NULL)
            fail(test, "a completed request is not MPI_REQUEST_NULL");
    if (m->own_in != 4242 + iter)
        fail(test, "the program's own message is wrong");
    check(test, &m->a, 1, iter);
    check(test, &m->g, 0, iter);
}

static void test_waitall(void)
{
    mix_t m;
    MPI_Status st[4];
    mix_start(&m, 3);
    MPI_Waitall(4, m.r, st);
    if (st[0].MPI_SOURCE != rank || st[0].MPI_TAG != 7)
        fail("MPI_Waitall", "the status of the program's receive is wrong");
    mix_check("MPI_Waitall", &m, 3);
}

static void test_testall(void)
{
    mix_t m;
    int flag = 0;
    mix_start(&m, 4);
    while (!flag)
        MPI_Testall(4, m.r, &flag, MPI_STATUSES_IGNORE);
    mix_check("MPI_Testall", &m, 4);
}

static void test_waitany(void)
{
    mix_t m;
    int seen[4] = {0}, idx, n = 0;
    MPI_Status st;
    mix_start(&m, 5);
    for (;;) {
        MPI_Waitany(4, m.r, &idx, &st);
        if (idx == MPI_UNDEFINED)
            break;
        if (idx < 0 || idx >= 4 || seen[idx]++ || ++n > 4) {
            fail("MPI_Waitany", "bad or repeated index");
            break;
        }
        if (idx == 0 && (st.MPI_SOURCE != rank || st.MPI_TAG != 7))
            fail("MPI_Waitany", "the status of the program's receive is wrong");
    }
    if (n != 4)
        fail("MPI_Waitany", "not every request completed once");
    mix_check("MPI_Waitany", &m, 5);
}

static void test_testsome(void)
{
    mix_t m;
    int seen[4] = {0}, idx[4], out, n = 0, rounds = 0;
    MPI_Status st[4];
    mix_start(&m, 6);
    for (;;) {
        MPI_Testsome(4, m.r, &out, idx, st);
        if (out == MPI_UNDEFINED || ++rounds > 100000000)
            break;
        for (int k = 0; k < out; k++) {
            if (idx[k] < 0 || idx[k] >= 4 || seen[idx[k]]++) {
                fail("MPI_Testsome", "bad or repeated index");
                continue;
            }
            n++;
            if (idx[k] == 0 && (st[k].MPI_SOURCE != rank || st[k].MPI_TAG != 7))
                fail("MPI_Testsome", "the status of the program's receive is wrong");
        }
    }
    if (n != 4)
        fail("MPI_Testsome", "not every request completed once");
    mix_check("MPI_Testsome", &m, 6);
}

/* Many at once (the shim's table grows, its request arrays go to the
 * heap), completed in whatever order MPI_Waitsome finds them, then a few
 * by MPI_Wait from the end of the array. */
#define MANY 40
static void test_many(void)
{
    static xbuf_t b[MANY];
    MPI_Request r[MANY];
    int idx[MANY], done = 0, out;
    for (int i = 0; i < MANY; i++) {
        fill(&b[i], i % 2, 30 + i);
        start(&b[i], i % 2, &r[i]);
    }
    for (int i = MANY - 1; i >= MANY - 5; i--, done++)
        MPI_Wait(&r[i], MPI_STATUS_IGNORE);
    for (;;) {
        MPI_Waitsome(MANY, r, &out, idx, MPI_STATUSES_IGNORE);
        if (out == MPI_UNDEFINED)
            break;
        done += out;
    }
    if (done != MANY)
        fail("many", "not every request completed once");
    for (int i = 0; i < MANY; i++)
        check("many", &b[i], i % 2, 30 + i);
}

#if MPI_VERSION >= 4
/* Persistent alltoall and allgather, started 4 times with new data:
 * MPI_Start + MPI_Wait, then MPI_Startall + MPI_Waitall with a message of
 * the program's own. */
static void test_persistent(void)
{
    xbuf_t a, g;
    MPI_Request r[3];
    fill(&a, 1, 0);
    fill(&g, 0, 0);
    MPI_Neighbor_alltoall_init(a.send, N, MPI_INT, a.recv, N, MPI_INT, graph, MPI_INFO_NULL,
                               &r[0]);
    MPI_Neighbor_allgather_init(g.send, N, MPI_INT, g.recv, N, MPI_INT, graph, MPI_INFO_NULL,
                                &r[1]);
    calls_made += 2;
    for (int iter = 10; iter < 14; iter++) {
        int own_in = -1, own_out = iter;
        fill(&a, 1, iter);
        fill(&g, 0, iter);
        if (iter % 2 == 0) {
            MPI_Start(&r[0]);
            MPI_Start(&r[1]);
            MPI_Wait(&r[1], MPI_STATUS_IGNORE);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        } else {
            MPI_Startall(2, r);
            MPI_Irecv(&own_in, 1, MPI_INT, rank, 8, graph, &r[2]);
            MPI_Send(&own_out, 1, MPI_INT, rank, 8, graph);
            MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
            if (own_in != iter)
                fail("persistent", "the program's own message is wrong");
        }
        if (r[0] == MPI_REQUEST_NULL || r[1] == MPI_REQUEST_NULL)
            fail("persistent", "a persistent request was freed by its completion");
        check("persistent alltoall", &a, 1, iter);
        check("persistent allgather", &g, 0, iter);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    if (r[0] != MPI_REQUEST_NULL || r[1] != MPI_REQUEST_NULL)
        fail("persistent", "MPI_Request_free left a request");
}
#endif

static int handler_calls;
static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    handler_calls++;
}

/* routed only (MPI's own classes differ): a negative count is MPI_ERR_ARG
 * and MPI_Cancel of a routed collective MPI_ERR_REQUEST, both through the
 * communicator's error handler; the cancelled one still completes. */
static void test_errors(void)
{
    MPI_Errhandler eh;
    MPI_Request r = MPI_REQUEST_NULL;
    xbuf_t b;
    int cls = MPI_SUCCESS;
    MPI_Comm_create_errhandler(count_errors, &eh);
    MPI_Comm_set_errhandler(graph, eh);
    calls_made++;
    int rc = MPI_Ineighbor_allgather(b.send, -1, MPI_INT, b.recv, N, MPI_INT, graph, &r);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_ARG || handler_calls != 1 || r != MPI_REQUEST_NULL)
        fail("errors", "sendcount -1 is not MPI_ERR_ARG through the error handler");
    fill(&b, 1, 20);
    start(&b, 1, &r);
    rc = MPI_Cancel(&r);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_REQUEST || handler_calls != 2)
        fail("errors", "MPI_Cancel of a collective is not MPI_ERR_REQUEST");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    check("errors (after MPI_Cancel)", &b, 1, 20);
    MPI_Comm_set_errhandler(graph, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh);
}

static long routed_calls(void)
{
    long (*calls)(void);
    *(void **)&calls = dlsym(RTLD_DEFAULT, "mpitopo_shim_neighbor_calls");
    return calls ? calls() : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int routed = argc == 2 && strcmp(argv[1], "routed") == 0;
    if (size < 4 || argc != 2 || (!routed && strcmp(argv[1], "passed") != 0)) {
        if (rank == 0)
            printf("FAIL shim_neighbor_req: usage: >= 4 processes, routed|passed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dst[DEG], src[DEG];
    for (int i = 0; i < DEG; i++) {
        dst[i] = (rank + 1 + i) % size;
        src[i] = src_of(i);
    }
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, DEG, src, MPI_UNWEIGHTED, DEG, dst,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);

    test_wait();
    test_plain_wait();
    test_test();
    test_waitall();
    test_testall();
    test_waitany();
    test_testsome();
    test_many();
#if MPI_VERSION >= 4
    test_persistent();
#endif
    if (routed)
        test_errors();

    long calls = routed_calls();
    if (calls != (routed ? calls_made : 0)) {
        char what[96];
        snprintf(what, sizeof what, "the shim routed %ld calls, expected %ld", calls,
                 routed ? calls_made : 0);
        fail("counter", what);
    }
    MPI_Comm_free(&graph);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("PASS shim_neighbor_req %s (%d processes%s)\n", argv[1], size,
               MPI_VERSION >= 4 ? ", persistent too" : "");
    MPI_Finalize();
    return total != 0;
}
