/*
 * Progress and lifetime of neighbourhood operations, under the schedule
 * MPITOPO_NEIGHBOR names (testlist):
 *   - two operations in flight on two communicators, completed in opposite
 *     orders by the even and the odd processes (a wait on one must move the
 *     other communicator's rounds on), nonblocking and persistent;
 *   - MPI_Comm_free between the nonblocking call and its wait, on a
 *     dist-graph ring, with and without an earlier blocking call: the data
 *     must arrive and nothing may crash or leak;
 *   - the schedule cache: blocking calls with other buffers each time, and
 *     calls in which one process alone changes its receive datatype or
 *     displacements (the cached schedule must not serve them: the new
 *     layout must be honoured), and, under one-round schedules, a receive
 *     count too small, which must fail with MPI_ERR_TRUNCATE there;
 *   - steady state: after a warm-up, blocking and nonblocking calls make
 *     no allocation through the library's allocation hook.
 */
#include "common/nbrtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- two communicators, opposite orders ---- */

static void fill_send(int *s, int n, int tag)
{
    for (int i = 0; i < n; i++)
        s[i] = tag * 100000 + nt_rank * 100 + i;
}

/* Receive block i of an allgather of one int on g holds src[i]'s value. */
static void check_allgather(const nt_graph_t *g, const int *r, int tag, const char *how)
{
    for (int i = 0; i < g->indeg; i++) {
        int want = g->src[i] == MPI_PROC_NULL ? -1 : tag * 100000 + g->src[i] * 100;
        if (!MT_CHECK(r[i] == want, "%s: block %d from %d is %d, expected %d", how, i,
                      g->src[i], r[i], want))
            return;
    }
}

static void opposite_orders(nt_graph_t *g, int persistent)
{
    const char *how = persistent ? "two communicators, persistent" : "two communicators";
    int s[2], *r[2];
    mpitopo_request_t q[2] = {MPITOPO_REQUEST_NULL, MPITOPO_REQUEST_NULL};
    for (int c = 0; c < 2; c++) {
        r[c] = malloc(sizeof(int) * (size_t)(g[c].indeg + 1));
        for (int i = 0; i < g[c].indeg; i++)
            r[c][i] = -1;
    }
    for (int run = 0; run < (persistent ? 3 : 1); run++) {
        for (int c = 0; c < 2; c++) {
            fill_send(&s[c], 1, c + 1 + 10 * run);
            int rc = persistent && run > 0
                         ? mpitopo_start(&q[c])
                     : persistent ? mpitopo_neighbor_allgather_init(&s[c], 1, MPI_INT, r[c], 1, MPI_INT,
                                                                    g[c].comm, MPI_INFO_NULL, &q[c])
                                  : mpitopo_ineighbor_allgather(&s[c], 1, MPI_INT, r[c], 1, MPI_INT,
                                                                g[c].comm, &q[c]);
            if (persistent && run == 0 && rc == MPITOPO_SUCCESS)
                rc = mpitopo_start(&q[c]);
            MT_CHECK(rc == MPITOPO_SUCCESS, "%s: start %d: %s", how, c, mpitopo_last_error());
        }
        int first = nt_rank % 2;
        for (int k = 0; k < 2; k++) {
            int c = k == 0 ? first : 1 - first;
            MT_CHECK(mpitopo_wait(&q[c]) == MPITOPO_SUCCESS, "%s: wait %d: %s", how, c,
                     mpitopo_last_error());
        }
        for (int c = 0; c < 2; c++)
            check_allgather(&g[c], r[c], c + 1 + 10 * run, how);
    }
    for (int c = 0; persistent && c < 2; c++)
        mpitopo_request_free(&q[c]);
    free(r[0]);
    free(r[1]);
}

/* ---- freeing the communicator with an operation in flight ---- */

static MPI_Comm ring(void)
{
    int left = (nt_rank + nt_size - 1) % nt_size, right = (nt_rank + 1) % nt_size;
    int src[2] = {left, right}, dst[2] = {left, right};
    MPI_Comm c;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &c);
    return c;
}

static void free_in_flight(int blocking_first)
{
    const char *how = blocking_first ? "free in flight after a blocking call" : "free in flight";
    int left = (nt_rank + nt_size - 1) % nt_size, right = (nt_rank + 1) % nt_size;
    MPI_Comm c = ring();
    int s[2], r[2] = {-1, -1};
    if (blocking_first) {
        fill_send(s, 2, 7);
        MT_CHECK(mpitopo_neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, c) == MPITOPO_SUCCESS,
                 "%s: blocking call: %s", how, mpitopo_last_error());
    }
    fill_send(s, 2, 3);
    mpitopo_request_t q;
    int rc = mpitopo_ineighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, c, &q);
    if (!MT_CHECK(rc == MPITOPO_SUCCESS, "%s: call: %s", how, mpitopo_last_error()))
        return;
    MPI_Comm_free(&c);
    MT_CHECK(mpitopo_wait(&q) == MPITOPO_SUCCESS, "%s: wait: %s", how, mpitopo_last_error());
    /* Block 0 comes from the left, which sent its block 1 (to its right). */
    MT_CHECK(r[0] == 300000 + left * 100 + 1 && r[1] == 300000 + right * 100,
             "%s: received %d %d", how, r[0], r[1]);
}

/* ---- the schedule cache ---- */

static void other_buffers(const nt_graph_t *g)
{
    enum { CALLS = 6 };
    int in = g->indeg, out = g->outdeg;
    for (int k = 0; k < CALLS; k++) {
        /* Fresh buffers every call, of sizes that move the allocator on. */
        int *s = malloc(sizeof(int) * (size_t)(out + k + 1));
        int *r = malloc(sizeof(int) * (size_t)(in + k + 1));
        fill_send(s, out, 20 + k);
        for (int i = 0; i < in; i++)
            r[i] = -1;
        MT_CHECK(mpitopo_neighbor_allgather(s, 1, MPI_INT, r, 1, MPI_INT, g->comm) ==
                     MPITOPO_SUCCESS,
                 "%s: other buffers, call %d: %s", g->label, k, mpitopo_last_error());
        check_allgather(g, r, 20 + k, g->label);
        free(s);
        free(r);
    }
}

/* Which of src[i]'s send blocks lands in our receive slot i (MPI's rule
 * for duplicate edges: the j-th edge from s carries s's j-th block to us). */
static int block_from(const nt_graph_t *g, int i)
{
    int s = g->src[i], before = 0;
    for (int t = 0; t < i; t++)
        before += g->src[t] == s;
    for (int j = 0, seen = 0; j < g->outdeg_of[s]; j++)
        if (g->out_of[s][j] == nt_rank && seen++ == before)
            return j;
    return -1;
}

/* Alltoall of 2-int blocks, twice (the schedule is cached), then rank 0
 * alone receives into a vector type (the same two ints, one apart), and
 * alltoallv in which rank 0 alone reverses its receive displacements: the
 * signatures still match, the layouts differ, so a cached schedule that
 * served these calls would put the data in the wrong places. Cartesian
 * slot rules differ: there only the calls are made. */
static void changed_layout(const nt_graph_t *g)
{
    int in = g->indeg, out = g->outdeg;
    int *s = malloc(sizeof(int) * (size_t)(2 * out + 1)), *r = malloc(sizeof(int) * (size_t)(3 * in + 1));
    int *sc = malloc(sizeof(int) * (size_t)(2 * (in + out) + 2)), *sd = sc + out + 1;
    int *rc_ = sd + out, *rd = rc_ + in + 1;
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int call = 0; call < 6; call++) {
        int changed = call % 3 == 2 && nt_rank == 0, v = call >= 3, stride = changed && !v ? 3 : 2;
        for (int i = 0; i < 2 * out; i++)
            s[i] = 1000 * nt_rank + i + 7 * call;
        for (int i = 0; i < 3 * in; i++)
            r[i] = -1;
        for (int i = 0; i < out; i++) {
            sc[i] = 2;
            sd[i] = 2 * i;
        }
        for (int i = 0; i < in; i++) {
            rc_[i] = 2;
            rd[i] = changed ? 2 * (in - 1 - i) : 2 * i;
        }
        int rc = v ? mpitopo_neighbor_alltoallv(s, sc, sd, MPI_INT, r, rc_, rd, MPI_INT, g->comm)
                   : mpitopo_neighbor_alltoall(s, 2, MPI_INT, r, changed ? 1 : 2, changed ? vec : MPI_INT,
                                               g->comm);
        if (!MT_CHECK(rc == MPITOPO_SUCCESS, "%s: changed layout, call %d: %s", g->label, call,
                      mpitopo_last_error()))
            break;
        /* MPICH's own calls (MPITOPO_NEIGHBOR=mpi) match duplicate edges in
         * another order. */
        const char *sched = mt_getenv("MPITOPO_NEIGHBOR");
        int other_order = g->dups && mt_is_mpich() && sched && strcmp(sched, "mpi") == 0;
        for (int i = 0; i < in && !g->cart && !other_order; i++) {
            if (g->src[i] == MPI_PROC_NULL)
                continue;
            int want = 1000 * g->src[i] + 2 * block_from(g, i) + 7 * call;
            int at = v ? rd[i] : stride * i, step = changed && !v ? 2 : 1;
            if (!MT_CHECK(r[at] == want && r[at + step] == want + 1,
                          "%s: changed layout, call %d (%s): block %d holds %d %d, expected %d %d",
                          g->label, call, changed ? "changed here" : "unchanged", i, r[at],
                          r[at + step], want, want + 1))
                break;
        }
    }
    MPI_Type_free(&vec);
    free(s);
    free(r);
    free(sc);
}

/* Every process sends 2-int blocks; rank 0 alone receives 1 int each. */
static void too_small(const nt_graph_t *g)
{
    int in = g->indeg, out = g->outdeg, any = 0;
    int *s = calloc((size_t)(2 * out + 1), sizeof(int)), *r = calloc((size_t)(2 * in + 1), sizeof(int));
    for (int i = 0; i < in; i++)
        any |= g->src[i] != MPI_PROC_NULL && g->src[i] != nt_rank;
    MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN);
    /* MPICH raises errors of MPI_Waitall on MPI_COMM_WORLD's handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int call = 0; call < 3; call++) {
        int rcount = call == 2 && nt_rank == 0 ? 1 : 2;
        int rc = mpitopo_neighbor_alltoall(s, 2, MPI_INT, r, rcount, MPI_INT, g->comm);
        int cls = MPI_SUCCESS;
        if (rc > 0)
            MPI_Error_class(rc, &cls);
        if (call == 2 && nt_rank == 0 && any)
            MT_CHECK(cls == MPI_ERR_TRUNCATE, "%s: recvcount 1 after 2: rc %d (class %d), "
                                              "expected MPI_ERR_TRUNCATE",
                     g->label, rc, cls);
        else if (call < 2)
            MT_CHECK(rc == MPITOPO_SUCCESS, "%s: call %d: %s", g->label, call, mpitopo_last_error());
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(s);
    free(r);
}

/* ---- no allocation in the steady state ---- */

static long allocations;
static void *count_malloc(size_t n) { allocations++; return malloc(n); }
static void *count_calloc(size_t c, size_t n) { allocations++; return calloc(c, n); }
static void *count_realloc(void *p, size_t n) { allocations++; return realloc(p, n); }

static void steady_state(const nt_graph_t *g)
{
    int in = g->indeg, out = g->outdeg;
    int *s = malloc(sizeof(int) * (size_t)(out + 1)), *r = malloc(sizeof(int) * (size_t)(in + 1));
    fill_send(s, out, 5);
    mpitopo_allocator_t a = {count_malloc, count_calloc, count_realloc, free};
    long counted[2] = {0, 0};
    for (int nb = 0; nb < 2; nb++) {
        /* The warm-up outlasts auto's measured selection (src/coll/neighbor/tune.c:
         * each candidate's untimed first run, then its timed trials). */
        for (int k = 0; k < 70; k++) {
            if (k == 60) {
                allocations = 0;
                mpitopo_set_allocator(&a);
            }
            mpitopo_request_t q;
            int rc = nb ? mpitopo_ineighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, g->comm, &q)
                        : mpitopo_neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, g->comm);
            if (nb && rc == MPITOPO_SUCCESS)
                rc = mpitopo_wait(&q);
            MT_CHECK(rc == MPITOPO_SUCCESS, "%s: steady call: %s", g->label, mpitopo_last_error());
        }
        mpitopo_set_allocator(NULL);
        counted[nb] = allocations;
    }
    MT_CHECK(counted[0] == 0 && counted[1] == 0,
             "%s: %ld allocations in 10 steady blocking calls, %ld in 10 nonblocking ones",
             g->label, counted[0], counted[1]);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    nt_begin();
    nt_graph_t g[2];
    int dims[2] = {3, nt_size / 3 > 0 ? nt_size / 3 : 1};
    if (nt_size % 3 == 0 && nt_size >= 9) {
        nt_stencil_graph(&g[0], 2, dims, "moore=1");
        nt_stencil_graph(&g[1], 2, dims, "moore=1");
    } else {
        nt_random_graph(&g[0], 11, 6);
        nt_random_graph(&g[1], 12, 6);
    }
    const char *trace = mt_getenv("MT_TRACE"), *sched = mt_getenv("MPITOPO_NEIGHBOR");
    /* A truncated block stops a multi-round schedule at that process,
     * and the blocks it was to forward never leave; Open MPI's own
     * neighbourhood collectives cancel their other messages on an error
     * and leave the neighbours waiting: only mpitopo's linear schedule is
     * asked to fail cleanly. */
    int single_round = sched && strcmp(sched, "linear") == 0;
#define STEP(x) do { if (trace) fprintf(stderr, "[%d] %s\n", nt_rank, #x); x; } while (0)
    STEP(opposite_orders(g, 0));
    STEP(opposite_orders(g, 1));
    STEP(free_in_flight(0));
    STEP(free_in_flight(1));
    nt_graph_t rnd, moore;
    nt_random_graph(&rnd, 5, 5);
    nt_moore_graph(&moore);
    nt_graph_t *all[] = {&g[0], &rnd, &moore};
    for (int k = 0; k < 3; k++) {
        STEP(other_buffers(all[k]));
        STEP(changed_layout(all[k]));
        STEP(steady_state(all[k]));
    }
    /* Last: an erroneous call leaves its communicator of no further use. */
    for (int k = 0; k < 3 && single_round; k++)
        STEP(too_small(all[k]));
    nt_graph_free(&moore);
    nt_graph_free(&rnd);
    nt_graph_free(&g[0]);
    nt_graph_free(&g[1]);
    nt_end();
    int rc = mt_finish("neighbor_progress");
    MPI_Finalize();
    return rc;
}
