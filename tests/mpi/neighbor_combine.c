/*
 * The message-combining schedule (thesis ch. 6) of mpitopo's neighbourhood
 * collectives. On dist-graph communicators built to have common
 * neighbourhoods (dense random digraphs with duplicate and self edges and a
 * zero-degree process, a periodic 2-D Moore neighbourhood, which on small
 * grids is full of duplicates) and a dense symmetric graph communicator:
 * every operation in every form (blocking, nonblocking, persistent), with
 * the schedule chosen by the _init info key ("linear", "combine", "auto")
 * and by MPITOPO_NEIGHBOR, checked against the data each neighbour sent
 * (the k-th edge from s to us carries s's block of its k-th edge to us) and
 * byte for byte against MPI_Neighbor_* (not alltoall with duplicate edges
 * under MPICH 4.0, which delivers them in reverse order). Blocks of 4 B to
 * 2 KiB (above the 1 KiB limit of "auto").
 *
 * Then the point of combining: one alltoall under "combine" must send
 * fewer messages in total than under "linear" (the library's internal
 * counter), so a silent fall back to linear fails the test.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal (src/coll/coll_internal.h): messages the schedules of comm sent. */
int mpitopo__coll_sends(MPI_Comm comm, long long *sends);

enum { AG, AGV, A2A, A2AV, A2AW, NOPS };
static const char *op_name[NOPS] = {"allgather", "allgatherv", "alltoall", "alltoallv",
                                    "alltoallw"};
enum { BLOCKING, NONBLOCKING, PERSISTENT, NFORMS };
static const char *form_name[NFORMS] = {"blocking", "nonblocking", "persistent"};

static int wrank, wsize;

typedef struct graph {
    char label[64];
    MPI_Comm comm;
    int indeg, outdeg, *src, *dst;
    int **out_of; /* out_of[s]: destinations of every process, MPI's order */
    int *outdeg_of;
    int dups;
} graph_t;

static int value(int rank, int slot, int e)
{
    return rank * 100000 + slot * 1000 + e;
}

/* Slot of s's k-th edge to `to`. */
static int kth_slot(const graph_t *g, int s, int to, int k)
{
    for (int j = 0; j < g->outdeg_of[s]; j++)
        if (g->out_of[s][j] == to && k-- == 0)
            return j;
    return -1;
}

/* The block expected in receive slot i: from src[i], on its k-th edge to
 * us (k = earlier slots with the same source). */
static int expected(const graph_t *g, int op, int i, int e)
{
    int s = g->src[i], k = 0;
    for (int j = 0; j < i; j++)
        k += g->src[j] == s;
    int all = op == AG || op == AGV;
    return value(s, all ? 0 : kth_slot(g, s, wrank, k), e);
}

typedef struct bufs {
    int cnt, *send, *recv, *ref;
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Aint *sb, *rb;
    MPI_Datatype *st, *rt;
} bufs_t;

/* Receive blocks in reverse slot order, so a slot mix-up shows. */
static void bufs_make(bufs_t *b, const graph_t *g, int op, int cnt)
{
    int all = op == AG || op == AGV, ns = all ? 1 : g->outdeg;
    b->cnt = cnt;
    b->send = malloc((size_t)(ns * cnt + 1) * sizeof(int));
    b->recv = malloc((size_t)(g->indeg * cnt + 1) * sizeof(int));
    b->ref = malloc((size_t)(g->indeg * cnt + 1) * sizeof(int));
    b->scounts = malloc((size_t)(g->outdeg + 1) * sizeof(int));
    b->sdispls = malloc((size_t)(g->outdeg + 1) * sizeof(int));
    b->rcounts = malloc((size_t)(g->indeg + 1) * sizeof(int));
    b->rdispls = malloc((size_t)(g->indeg + 1) * sizeof(int));
    b->sb = malloc((size_t)(g->outdeg + 1) * sizeof(MPI_Aint));
    b->rb = malloc((size_t)(g->indeg + 1) * sizeof(MPI_Aint));
    b->st = malloc((size_t)(g->outdeg + 1) * sizeof(MPI_Datatype));
    b->rt = malloc((size_t)(g->indeg + 1) * sizeof(MPI_Datatype));
    for (int j = 0; j < ns; j++)
        for (int e = 0; e < cnt; e++)
            b->send[j * cnt + e] = value(wrank, j, e);
    for (int j = 0; j < g->outdeg; j++) {
        b->scounts[j] = cnt;
        b->sdispls[j] = j * cnt;
        b->sb[j] = (MPI_Aint)j * cnt * (MPI_Aint)sizeof(int);
        b->st[j] = MPI_INT;
    }
    for (int i = 0; i < g->indeg; i++) {
        b->rcounts[i] = cnt;
        b->rdispls[i] = (g->indeg - 1 - i) * cnt;
        b->rb[i] = (MPI_Aint)b->rdispls[i] * (MPI_Aint)sizeof(int);
        b->rt[i] = MPI_INT;
    }
}

static void bufs_free(bufs_t *b)
{
    free(b->send);
    free(b->recv);
    free(b->ref);
    free(b->scounts);
    free(b->sdispls);
    free(b->rcounts);
    free(b->rdispls);
    free(b->sb);
    free(b->rb);
    free(b->st);
    free(b->rt);
}

/* Scalar forms land block i at i * cnt; v and w forms at rdispls. */
static int recv_at(const bufs_t *b, int op, int i)
{
    return op == AG || op == A2A ? i * b->cnt : b->rdispls[i];
}

static int reference(const graph_t *g, int op, bufs_t *b)
{
    int *r = b->ref, c = b->cnt;
    switch (op) {
    case AG:
        return MPI_Neighbor_allgather(b->send, c, MPI_INT, r, c, MPI_INT, g->comm);
    case AGV:
        return MPI_Neighbor_allgatherv(b->send, c, MPI_INT, r, b->rcounts, b->rdispls, MPI_INT,
                                       g->comm);
    case A2A:
        return MPI_Neighbor_alltoall(b->send, c, MPI_INT, r, c, MPI_INT, g->comm);
    case A2AV:
        return MPI_Neighbor_alltoallv(b->send, b->scounts, b->sdispls, MPI_INT, r, b->rcounts,
                                      b->rdispls, MPI_INT, g->comm);
    default:
        return MPI_Neighbor_alltoallw(b->send, b->scounts, b->sb, b->st, r, b->rcounts, b->rb,
                                      b->rt, g->comm);
    }
}

static int init(const graph_t *g, int op, bufs_t *b, MPI_Info info, mpitopo_request_t *q)
{
    int *r = b->recv, c = b->cnt;
    switch (op) {
    case AG:
        return mpitopo_neighbor_allgather_init(b->send, c, MPI_INT, r, c, MPI_INT, g->comm, info,
                                               q);
    case AGV:
        return mpitopo_neighbor_allgatherv_init(b->send, c, MPI_INT, r, b->rcounts, b->rdispls,
                                                MPI_INT, g->comm, info, q);
    case A2A:
        return mpitopo_neighbor_alltoall_init(b->send, c, MPI_INT, r, c, MPI_INT, g->comm, info,
                                              q);
    case A2AV:
        return mpitopo_neighbor_alltoallv_init(b->send, b->scounts, b->sdispls, MPI_INT, r,
                                               b->rcounts, b->rdispls, MPI_INT, g->comm, info, q);
    default:
        return mpitopo_neighbor_alltoallw_init(b->send, b->scounts, b->sb, b->st, r, b->rcounts,
                                               b->rb, b->rt, g->comm, info, q);
    }
}

static int start_or_run(const graph_t *g, int op, bufs_t *b, mpitopo_request_t *q, int nb)
{
    int *r = b->recv, c = b->cnt;
    switch (op * 2 + nb) {
    case AG * 2:
        return mpitopo_neighbor_allgather(b->send, c, MPI_INT, r, c, MPI_INT, g->comm);
    case AG * 2 + 1:
        return mpitopo_ineighbor_allgather(b->send, c, MPI_INT, r, c, MPI_INT, g->comm, q);
    case AGV * 2:
        return mpitopo_neighbor_allgatherv(b->send, c, MPI_INT, r, b->rcounts, b->rdispls,
                                           MPI_INT, g->comm);
    case AGV * 2 + 1:
        return mpitopo_ineighbor_allgatherv(b->send, c, MPI_INT, r, b->rcounts, b->rdispls,
                                            MPI_INT, g->comm, q);
    case A2A * 2:
        return mpitopo_neighbor_alltoall(b->send, c, MPI_INT, r, c, MPI_INT, g->comm);
    case A2A * 2 + 1:
        return mpitopo_ineighbor_alltoall(b->send, c, MPI_INT, r, c, MPI_INT, g->comm, q);
    case A2AV * 2:
        return mpitopo_neighbor_alltoallv(b->send, b->scounts, b->sdispls, MPI_INT, r,
                                          b->rcounts, b->rdispls, MPI_INT, g->comm);
    case A2AV * 2 + 1:
        return mpitopo_ineighbor_alltoallv(b->send, b->scounts, b->sdispls, MPI_INT, r,
                                           b->rcounts, b->rdispls, MPI_INT, g->comm, q);
    case A2AW * 2:
        return mpitopo_neighbor_alltoallw(b->send, b->scounts, b->sb, b->st, r, b->rcounts,
                                          b->rb, b->rt, g->comm);
    default:
        return mpitopo_ineighbor_alltoallw(b->send, b->scounts, b->sb, b->st, r, b->rcounts,
                                           b->rb, b->rt, g->comm, q);
    }
}

/* One call of op in `form`; persistent: two runs of one request. */
static int call(const graph_t *g, int op, int form, bufs_t *b, MPI_Info info)
{
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    if (form != PERSISTENT) {
        int rc = start_or_run(g, op, b, &q, form == NONBLOCKING);
        return rc == MPITOPO_SUCCESS && form == NONBLOCKING ? mpitopo_wait(&q) : rc;
    }
    int rc = init(g, op, b, info, &q);
    for (int run = 0; run < 2 && rc == MPITOPO_SUCCESS; run++) {
        memset(b->recv, 0xff, (size_t)(g->indeg * b->cnt + 1) * sizeof(int));
        rc = mpitopo_start(&q);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_wait(&q);
    }
    if (q != MPITOPO_REQUEST_NULL)
        mpitopo_request_free(&q);
    return rc;
}

static void check_one(const graph_t *g, int op, int form, int cnt, MPI_Info info,
                      const char *how)
{
    bufs_t b;
    bufs_make(&b, g, op, cnt);
    memset(b.recv, 0xff, (size_t)(g->indeg * cnt + 1) * sizeof(int));
    if (!MT_CHECK_RC(call(g, op, form, &b, info)))
        goto out;
    int skip_ref = (op == A2A && g->dups && mt_is_mpich()) || (op == A2AW && mt_is_mpich());
    if (!skip_ref && MT_CHECK_RC(reference(g, op, &b)))
        for (int i = 0; i < g->indeg; i++)
            if (!MT_CHECK(!memcmp(b.recv + recv_at(&b, op, i), b.ref + recv_at(&b, op, i),
                                  (size_t)cnt * sizeof(int)),
                          "%s: %s %s (%s), %d ints: block %d differs from MPI's", g->label,
                          op_name[op], form_name[form], how, cnt, i))
                goto out;
    for (int i = 0; i < g->indeg; i++)
        for (int e = 0; e < cnt; e++)
            if (!MT_CHECK(b.recv[recv_at(&b, op, i) + e] == expected(g, op, i, e),
                          "%s: %s %s (%s), %d ints: block %d element %d = %d, want %d",
                          g->label, op_name[op], form_name[form], how, cnt, i, e,
                          b.recv[recv_at(&b, op, i) + e], expected(g, op, i, e)))
                goto out;
out:
    bufs_free(&b);
}

static void check_all(const graph_t *g)
{
    static const char *const scheds[] = {"linear", "combine", "auto"};
    static const int cnts[] = {1, 5, 513};
    for (int s = 0; s < 3; s++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpitopo_neighbor", scheds[s]);
        for (int op = 0; op < NOPS; op++)
            for (int c = 0; c < 3; c++)
                check_one(g, op, PERSISTENT, cnts[c], info, scheds[s]);
        MPI_Info_free(&info);
    }
    for (int op = 0; op < NOPS; op++)
        for (int form = BLOCKING; form <= NONBLOCKING; form++)
            for (int c = 0; c < 3; c++)
                check_one(g, op, form, cnts[c], MPI_INFO_NULL, "environment");
}

/* Messages sent by one persistent alltoall run under sched, summed over
 * all processes. */
static long long sends_of(const graph_t *g, const char *sched)
{
    bufs_t b;
    bufs_make(&b, g, A2A, 1);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", sched);
    long long before = 0, after = 0, mine, total = 0;
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    MT_CHECK_RC(init(g, A2A, &b, info, &q));
    MT_CHECK_RC(mpitopo__coll_sends(g->comm, &before));
    MT_CHECK_RC(mpitopo_start(&q));
    MT_CHECK_RC(mpitopo_wait(&q));
    MT_CHECK_RC(mpitopo__coll_sends(g->comm, &after));
    mpitopo_request_free(&q);
    MPI_Info_free(&info);
    bufs_free(&b);
    mine = after - before;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

static void check_fewer_messages(const graph_t *g)
{
    long long lin = sends_of(g, "linear"), comb = sends_of(g, "combine");
    if (wrank == 0)
        printf("# %s: one alltoall sends %lld messages linear, %lld combined\n", g->label, lin,
               comb);
    MT_CHECK(comb < lin, "%s: combining sent %lld messages, linear %lld: no saving", g->label,
             comb, lin);
}

/* Out lists of every process from a global edge list (ea -> eb). */
static void lists_from_edges(graph_t *g, const int *ea, const int *eb, int ne)
{
    g->out_of = calloc((size_t)wsize, sizeof(int *));
    g->outdeg_of = calloc((size_t)wsize, sizeof(int));
    for (int v = 0; v < wsize; v++)
        g->out_of[v] = malloc((size_t)(ne + 1) * sizeof(int));
    for (int i = 0; i < ne; i++)
        g->out_of[ea[i]][g->outdeg_of[ea[i]]++] = eb[i];
}

static void graph_free(graph_t *g)
{
    for (int v = 0; v < wsize; v++)
        free(g->out_of[v]);
    free(g->out_of);
    free(g->outdeg_of);
    free(g->src);
    free(g->dst);
    MPI_Comm_free(&g->comm);
}

static int has_dups(const int *l, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (l[i] == l[j])
                return 1;
    return 0;
}

static void finish_graph(graph_t *g, int counting)
{
    int any = has_dups(g->src, g->indeg) || has_dups(g->dst, g->outdeg);
    MPI_Allreduce(&any, &g->dups, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    check_all(g);
    if (counting)
        check_fewer_messages(g);
    graph_free(g);
}

/* The adjacent dist-graph of an edge list, in edge-list order. */
static void dist_graph(graph_t *g, const int *ea, const int *eb, int ne)
{
    g->src = malloc((size_t)(ne + 1) * sizeof(int));
    g->dst = malloc((size_t)(ne + 1) * sizeof(int));
    g->indeg = g->outdeg = 0;
    for (int i = 0; i < ne; i++) {
        if (eb[i] == wrank)
            g->src[g->indeg++] = ea[i];
        if (ea[i] == wrank)
            g->dst[g->outdeg++] = eb[i];
    }
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, g->indeg, g->src, MPI_UNWEIGHTED, g->outdeg,
                                   g->dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g->comm);
    lists_from_edges(g, ea, eb, ne);
}

/* Dense random digraph (density ~0.7), duplicates and self edges; process
 * 1 has no edge at all (when there are more than 2). */
static void random_case(unsigned seed)
{
    int m = 3 * wsize * wsize + 8, ne = 0;
    int *ea = malloc((size_t)m * sizeof(int)), *eb = malloc((size_t)m * sizeof(int));
    srand(seed);
    for (int a = 0; a < wsize; a++)
        for (int b = 0; b < wsize; b++) {
            int r = rand() % 10;
            if (r >= 7 || (wsize > 2 && (a == 1 || b == 1)))
                continue;
            ea[ne] = a;
            eb[ne++] = b;
            if (r == 0) { /* a duplicate, not adjacent in the lists */
                ea[ne] = a;
                eb[ne++] = (b + 1) % wsize;
                ea[ne] = a;
                eb[ne++] = b;
            }
        }
    graph_t g = {0};
    snprintf(g.label, sizeof g.label, "random digraph seed %u", seed);
    dist_graph(&g, ea, eb, ne);
    finish_graph(&g, wsize >= 6);
    free(ea);
    free(eb);
}

/* Periodic 2-D Moore neighbourhood of radius 1 on an r x c torus (small
 * tori repeat neighbours). */
static void moore_case(void)
{
    int dims[2] = {0, 0};
    MPI_Dims_create(wsize, 2, dims);
    int ne = 0, *ea = malloc((size_t)(9 * wsize) * sizeof(int));
    int *eb = malloc((size_t)(9 * wsize) * sizeof(int));
    for (int v = 0; v < wsize; v++)
        for (int dx = -1; dx <= 1; dx++)
            for (int dy = -1; dy <= 1; dy++) {
                if (!dx && !dy)
                    continue;
                int x = (v / dims[1] + dx + dims[0]) % dims[0];
                int y = (v % dims[1] + dy + dims[1]) % dims[1];
                ea[ne] = v;
                eb[ne++] = x * dims[1] + y;
            }
    graph_t g = {0};
    snprintf(g.label, sizeof g.label, "Moore %dx%d", dims[0], dims[1]);
    dist_graph(&g, ea, eb, ne);
    finish_graph(&g, wsize >= 8);
    free(ea);
    free(eb);
}

/* A dense symmetric MPI_Graph: every pair of ranks but those involving
 * rank 0 (zero degree), plus a self loop at the last rank. */
static void graph_case(void)
{
    int *index = malloc((size_t)wsize * sizeof(int)), *edges = malloc((size_t)(wsize * wsize + 1) * sizeof(int));
    int *ea = malloc((size_t)(wsize * wsize + 1) * sizeof(int)), *eb = malloc((size_t)(wsize * wsize + 1) * sizeof(int));
    int ne = 0;
    for (int a = 0; a < wsize; a++) {
        for (int b = 0; b < wsize; b++)
            if (a && b && (a != b || a == wsize - 1)) {
                ea[ne] = a;
                eb[ne] = b;
                edges[ne++] = b;
            }
        index[a] = ne;
    }
    graph_t g = {0};
    snprintf(g.label, sizeof g.label, "dense graph");
    MPI_Graph_create(MPI_COMM_WORLD, wsize, index, edges, 0, &g.comm);
    MPI_Graph_neighbors_count(g.comm, wrank, &g.indeg);
    g.outdeg = g.indeg;
    g.src = malloc((size_t)(g.indeg + 1) * sizeof(int));
    g.dst = malloc((size_t)(g.indeg + 1) * sizeof(int));
    MPI_Graph_neighbors(g.comm, wrank, g.indeg, g.src);
    memcpy(g.dst, g.src, (size_t)g.indeg * sizeof(int));
    lists_from_edges(&g, ea, eb, ne);
    finish_graph(&g, wsize >= 6);
    free(index);
    free(edges);
    free(ea);
    free(eb);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    random_case(3);
    random_case(8);
    moore_case();
    graph_case();
    int code = mt_finish("neighbor_combine");
    MPI_Finalize();
    return code;
}
