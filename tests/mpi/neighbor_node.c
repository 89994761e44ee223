/*
 * The node-aware aggregation schedule ("node") of mpitopo's neighbourhood
 * collectives: one message per pair of nodes, then a scatter in the node.
 * Under MPITOPO_NEIGHBOR=node (blocking, nonblocking) and the _init info
 * key mpitopo_neighbor=node (persistent, two runs), every operation on
 * dense random dist-graphs (duplicate and self edges, a zero-degree
 * process), a graph communicator whose rank 0 (a node leader) has no
 * neighbour, and Cartesian communicators (periodic dimensions of size 1
 * and 2, open ones with MPI_PROC_NULL): byte for byte against
 * MPI_Neighbor_* (not alltoall with duplicate edges under MPICH 4.0, which
 * delivers them in reverse order) and against the data each neighbour sent;
 * Cartesian ones against mpitopo's linear schedule, which follows the MPI-4
 * erratum where MPI libraries differ. The v and w forms run linear under
 * "node" and must still be right.
 *
 * Then the point: with several nodes (emulated, or MPICH's cliques), one
 * alltoall and one allgather on a dense random graph send fewer messages
 * in total under "node" than under "linear" (the library's counter).
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

static int wrank, wsize, nnodes;

typedef struct graph {
    char label[64];
    MPI_Comm comm;
    int indeg, outdeg, *src, *dst;
    int **out_of; /* out_of[s]: destinations of every process, MPI's order */
    int *outdeg_of;
    int dups;
    int cart; /* Cartesian: compare with mpitopo's linear schedule (erratum) */
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

/* The reference: MPI's own operation, or (Cartesian) mpitopo's linear
 * schedule, persistent, into b->ref. */
static int linear_ref(const graph_t *g, int op, bufs_t *b)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", "linear");
    int *keep = b->recv;
    b->recv = b->ref;
    int rc = call(g, op, PERSISTENT, b, info);
    b->recv = keep;
    MPI_Info_free(&info);
    return rc;
}

static void check_one(const graph_t *g, int op, int form, int cnt, MPI_Info info,
                      const char *how)
{
    bufs_t b;
    bufs_make(&b, g, op, cnt);
    memset(b.recv, 0xff, (size_t)(g->indeg * cnt + 1) * sizeof(int));
    memset(b.ref, 0xfe, (size_t)(g->indeg * cnt + 1) * sizeof(int));
    if (!MT_CHECK_RC(call(g, op, form, &b, info)))
        goto out;
    int skip_ref = !g->cart && ((op == A2A && g->dups && mt_is_mpich()) ||
                                (op == A2AW && mt_is_mpich()));
    int rc = skip_ref ? MPITOPO_SUCCESS : g->cart ? linear_ref(g, op, &b) : reference(g, op, &b);
    if (!skip_ref && MT_CHECK_RC(rc))
        for (int i = 0; i < g->indeg; i++)
            if (g->src[i] != MPI_PROC_NULL &&
                !MT_CHECK(!memcmp(b.recv + recv_at(&b, op, i), b.ref + recv_at(&b, op, i),
                                  (size_t)cnt * sizeof(int)),
                          "%s: %s %s (%s), %d ints: block %d differs from the reference",
                          g->label, op_name[op], form_name[form], how, cnt, i))
                goto out;
    for (int i = 0; !g->cart && i < g->indeg; i++)
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
    static const int cnts[] = {1, 5, 513};
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", "node");
    for (int op = 0; op < NOPS; op++)
        for (int c = 0; c < 3; c++)
            check_one(g, op, PERSISTENT, cnts[c], info, "info node");
    MPI_Info_free(&info);
    /* 5 ints only persistent: the tests run at 16 ranks under MPICH. */
    for (int op = 0; op < NOPS; op++)
        for (int form = BLOCKING; form <= NONBLOCKING; form++)
            for (int c = 0; c < 3; c += 2)
                check_one(g, op, form, cnts[c], MPI_INFO_NULL, "environment");
}

/* Messages sent by one persistent run of op under sched, summed over all
 * processes. */
static long long sends_of(const graph_t *g, int op, const char *sched)
{
    bufs_t b;
    bufs_make(&b, g, op, 1);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", sched);
    long long before = 0, after = 0, mine, total = 0;
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    MT_CHECK_RC(init(g, op, &b, info, &q));
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
    static const int ops[] = {A2A, AG};
    for (int j = 0; j < 2; j++) {
        long long lin = sends_of(g, ops[j], "linear"), node = sends_of(g, ops[j], "node");
        if (wrank == 0)
            printf("# %s, %d nodes: one %s sends %lld messages linear, %lld node-aware\n",
                   g->label, nnodes, op_name[ops[j]], lin, node);
        MT_CHECK(node < lin, "%s: %s under node sent %lld messages, linear %lld: no saving",
                 g->label, op_name[ops[j]], node, lin);
    }
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
    if (counting && nnodes > 1 && wsize >= 6)
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

/* A Cartesian communicator in MPI's order: blocks -1, +1 per dimension. */
static void cart_case(int ndims, const int *dims, const int *periods)
{
    graph_t g = {0};
    int n = snprintf(g.label, sizeof g.label, "cart");
    for (int d = 0; d < ndims; d++)
        n += snprintf(g.label + n, sizeof g.label - (size_t)n, " %d%s", dims[d],
                      periods[d] ? "p" : "");
    g.cart = 1;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &g.comm);
    g.indeg = g.outdeg = 2 * ndims;
    g.src = malloc((size_t)(g.indeg + 1) * sizeof(int));
    g.dst = malloc((size_t)(g.indeg + 1) * sizeof(int));
    for (int d = 0; d < ndims; d++) {
        MPI_Cart_shift(g.comm, d, 1, &g.src[2 * d], &g.src[2 * d + 1]);
        g.dst[2 * d] = g.src[2 * d];
        g.dst[2 * d + 1] = g.src[2 * d + 1];
    }
    g.out_of = calloc((size_t)wsize, sizeof(int *));
    g.outdeg_of = calloc((size_t)wsize, sizeof(int));
    finish_graph(&g, 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const mpitopo_nodeinfo_t *ni;
    if (MT_CHECK_RC(mpitopo_comm_nodeinfo(MPI_COMM_WORLD, &ni)))
        nnodes = ni->nnodes;
    random_case(3);
    random_case(8);
    moore_case();
    graph_case();
    int ring = wsize, ring_p = 1;
    cart_case(1, &ring, &ring_p);
    int d2[2] = {1, wsize}, p2[2] = {1, 0};
    cart_case(2, d2, p2);
    if (wsize % 2 == 0) {
        int d3[3] = {2, 1, wsize / 2}, p3[3] = {1, 1, 0};
        cart_case(3, d3, p3);
        int d4[2] = {wsize / 2, 2}, p4[2] = {1, 1};
        cart_case(2, d4, p4);
    }
    int code = mt_finish("neighbor_node");
    MPI_Finalize();
    return code;
}
