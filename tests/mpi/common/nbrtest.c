#include "nbrtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal (src/coll/coll_internal.h): messages the schedules of comm sent. */
int mpitopo__coll_sends(MPI_Comm comm, long long *sends);

const char *const nt_op_name[NOPS] = {"allgather", "allgatherv", "alltoall", "alltoallv",
                                      "alltoallw"};
const char *const nt_form_name[NFORMS] = {"blocking", "nonblocking", "persistent"};

int nt_rank, nt_size, nt_gen, nt_vary;
static MPI_Datatype strided; /* two ints, stride 2, extent 4 ints */

void nt_begin(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &nt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nt_size);
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
    MPI_Type_create_resized(pair, 0, 4 * (MPI_Aint)sizeof(int), &strided);
    MPI_Type_commit(&strided);
    MPI_Type_free(&pair);
}

void nt_end(void)
{
    MPI_Type_free(&strided);
}

static int *ints(int n)
{
    return malloc((size_t)(n + 1) * sizeof(int));
}

/* ---- Graphs ---- */

/* Out lists of every process from a global edge list (ea -> eb). */
static void lists_from_edges(nt_graph_t *g, const int *ea, const int *eb, int ne)
{
    g->out_of = calloc((size_t)nt_size, sizeof(int *));
    g->outdeg_of = calloc((size_t)nt_size, sizeof(int));
    for (int v = 0; v < nt_size; v++)
        g->out_of[v] = ints(ne);
    for (int i = 0; i < ne; i++)
        g->out_of[ea[i]][g->outdeg_of[ea[i]]++] = eb[i];
}

static int has_dups(const int *l, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (l[i] == l[j])
                return 1;
    return 0;
}

static void find_dups(nt_graph_t *g)
{
    int any = has_dups(g->src, g->indeg) || has_dups(g->dst, g->outdeg);
    MPI_Allreduce(&any, &g->dups, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}

void nt_stencil_graph(nt_graph_t *g, int ndims, const int *dims, const char *stencil)
{
    *g = (nt_graph_t){0};
    snprintf(g->label, sizeof g->label, "%s stencil on %d-D", stencil, ndims);
    g->cart = g->stencil = 1;
    int periods[4] = {1, 1, 1, 1};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart);
    MT_CHECK_RC(mpitopo_cart_stencil_create(cart, stencil, MPI_INFO_NULL, &g->comm));
    MPI_Comm_free(&cart);
    MT_CHECK_RC(mpitopo_comm_neighbors_count(g->comm, &g->indeg, &g->outdeg));
    g->src = ints(g->indeg);
    g->dst = ints(g->outdeg);
    MT_CHECK_RC(mpitopo_comm_neighbors(g->comm, g->indeg, g->src, g->outdeg, g->dst));
    g->out_of = calloc((size_t)nt_size, sizeof(int *));
    g->outdeg_of = calloc((size_t)nt_size, sizeof(int));
    find_dups(g);
}

void nt_graph_free(nt_graph_t *g)
{
    for (int v = 0; v < nt_size; v++)
        free(g->out_of[v]);
    free(g->out_of);
    free(g->outdeg_of);
    free(g->src);
    free(g->dst);
    MPI_Comm_free(&g->comm);
}

/* The adjacent dist-graph of an edge list, in edge-list order. */
static void dist_graph(nt_graph_t *g, const int *ea, const int *eb, int ne)
{
    g->src = ints(ne);
    g->dst = ints(ne);
    g->indeg = g->outdeg = 0;
    for (int i = 0; i < ne; i++) {
        if (eb[i] == nt_rank)
            g->src[g->indeg++] = ea[i];
        if (ea[i] == nt_rank)
            g->dst[g->outdeg++] = eb[i];
    }
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, g->indeg, g->src, MPI_UNWEIGHTED, g->outdeg,
                                   g->dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g->comm);
    lists_from_edges(g, ea, eb, ne);
    find_dups(g);
}

void nt_random_graph(nt_graph_t *g, unsigned seed, int keep)
{
    int m = 3 * nt_size * nt_size + 8, ne = 0, *ea = ints(m), *eb = ints(m);
    srand(seed);
    for (int a = 0; a < nt_size; a++)
        for (int b = 0; b < nt_size; b++) {
            int r = rand() % 10;
            if (r >= keep || (nt_size > 2 && (a == 1 || b == 1)))
                continue;
            ea[ne] = a;
            eb[ne++] = b;
            if (r == 0) { /* a duplicate, not adjacent in the lists */
                ea[ne] = a;
                eb[ne++] = (b + 1) % nt_size;
                ea[ne] = a;
                eb[ne++] = b;
            }
        }
    *g = (nt_graph_t){0};
    snprintf(g->label, sizeof g->label, "random digraph seed %u density 0.%d", seed, keep);
    dist_graph(g, ea, eb, ne);
    free(ea);
    free(eb);
}

/* Small tori repeat neighbours. */
void nt_moore_graph(nt_graph_t *g)
{
    int dims[2] = {0, 0};
    MPI_Dims_create(nt_size, 2, dims);
    int ne = 0, *ea = ints(9 * nt_size), *eb = ints(9 * nt_size);
    for (int v = 0; v < nt_size; v++)
        for (int dx = -1; dx <= 1; dx++)
            for (int dy = -1; dy <= 1; dy++) {
                if (!dx && !dy)
                    continue;
                int x = (v / dims[1] + dx + dims[0]) % dims[0];
                int y = (v % dims[1] + dy + dims[1]) % dims[1];
                ea[ne] = v;
                eb[ne++] = x * dims[1] + y;
            }
    *g = (nt_graph_t){0};
    snprintf(g->label, sizeof g->label, "Moore %dx%d", dims[0], dims[1]);
    dist_graph(g, ea, eb, ne);
    free(ea);
    free(eb);
}

void nt_dense_graph(nt_graph_t *g)
{
    int m = nt_size * nt_size, ne = 0;
    int *index = ints(nt_size), *edges = ints(m), *ea = ints(m), *eb = ints(m);
    for (int a = 0; a < nt_size; a++) {
        for (int b = 0; b < nt_size; b++)
            if (a && b && (a != b || a == nt_size - 1)) {
                ea[ne] = a;
                eb[ne] = b;
                edges[ne++] = b;
            }
        index[a] = ne;
    }
    *g = (nt_graph_t){0};
    snprintf(g->label, sizeof g->label, "dense graph");
    MPI_Graph_create(MPI_COMM_WORLD, nt_size, index, edges, 0, &g->comm);
    MPI_Graph_neighbors_count(g->comm, nt_rank, &g->indeg);
    g->outdeg = g->indeg;
    g->src = ints(g->indeg);
    g->dst = ints(g->indeg);
    MPI_Graph_neighbors(g->comm, nt_rank, g->indeg, g->src);
    memcpy(g->dst, g->src, (size_t)g->indeg * sizeof(int));
    lists_from_edges(g, ea, eb, ne);
    find_dups(g);
    free(index);
    free(edges);
    free(ea);
    free(eb);
}

/* MPI's order: blocks -1, +1 per dimension. */
void nt_cart_graph(nt_graph_t *g, int ndims, const int *dims, const int *periods)
{
    *g = (nt_graph_t){0};
    int n = snprintf(g->label, sizeof g->label, "cart");
    for (int d = 0; d < ndims; d++)
        n += snprintf(g->label + n, sizeof g->label - (size_t)n, " %d%s", dims[d],
                      periods[d] ? "p" : "");
    g->cart = 1;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &g->comm);
    g->indeg = g->outdeg = 2 * ndims;
    g->src = ints(g->indeg);
    g->dst = ints(g->indeg);
    for (int d = 0; d < ndims; d++) {
        MPI_Cart_shift(g->comm, d, 1, &g->src[2 * d], &g->src[2 * d + 1]);
        g->dst[2 * d] = g->src[2 * d];
        g->dst[2 * d + 1] = g->src[2 * d + 1];
    }
    g->out_of = calloc((size_t)nt_size, sizeof(int *));
    g->outdeg_of = calloc((size_t)nt_size, sizeof(int));
    find_dups(g);
}

/* ---- What every edge carries ---- */

static int value(int rank, int slot, int e)
{
    return rank * 1000000 + slot * 3000 + e + nt_gen * 7;
}

/* Ints on the edge of s's send slot j (allgatherv: its one block):
 * varying, some zero; alltoallw sends pairs (the strided type). */
static int edge_ints(int op, int s, int j, int cnt)
{
    int n = cnt;
    if (nt_vary && (op == AGV || op == A2AV || op == A2AW))
        n = (s * 5 + j * 3) % 4 == 1 ? 0 : cnt + (s + 2 * j) % 3;
    return op == A2AW ? 2 * n : n;
}

/* The send slot of src[i] whose block lands in our receive slot i: the
 * k-th edge from s to us (k = earlier slots with the same source) is s's
 * k-th edge to us; Cartesian, k^1. Allgather(v): slot 0. -1 for
 * MPI_PROC_NULL. */
static int sender_slot(const nt_graph_t *g, int op, int i)
{
    int s = g->src[i], k = 0;
    if (s == MPI_PROC_NULL)
        return -1;
    if (op == AG || op == AGV)
        return 0;
    if (g->stencil)
        return i;
    if (g->cart)
        return i ^ 1;
    for (int j = 0; j < i; j++)
        k += g->src[j] == s;
    for (int j = 0; j < g->outdeg_of[s]; j++)
        if (g->out_of[s][j] == nt_rank && k-- == 0)
            return j;
    return -1;
}

static int expected(const nt_graph_t *g, int op, int i, int e)
{
    return value(g->src[i], sender_slot(g, op, i), e);
}

/* ---- Buffers ---- */

void nt_bufs_fill(nt_bufs_t *b)
{
    for (int j = 0; j < b->ns; j++)
        for (int e = 0; e < b->sn[j]; e++)
            b->send[b->sdispls[j] + e * b->sstride[j]] = value(nt_rank, j, e);
}

/* Scalar forms: receive blocks in slot order; alltoallw: odd blocks of
 * the strided type (send side: odd rank + slot), which needs twice the
 * room. */
void nt_bufs_make(nt_bufs_t *b, const nt_graph_t *g, int op, int cnt)
{
    int all = op == AG || op == AGV, scalar = op == AG || op == A2A;
    b->op = op;
    b->cnt = cnt;
    b->ns = all ? (g->outdeg > 0) : g->outdeg;
    b->scounts = ints(g->outdeg);
    b->sdispls = ints(g->outdeg);
    b->sn = ints(g->outdeg);
    b->sstride = ints(g->outdeg);
    b->rcounts = ints(g->indeg);
    b->rdispls = ints(g->indeg);
    b->rn = ints(g->indeg);
    b->rstride = ints(g->indeg);
    b->sb = malloc((size_t)(g->outdeg + 1) * sizeof(MPI_Aint));
    b->rb = malloc((size_t)(g->indeg + 1) * sizeof(MPI_Aint));
    b->st = malloc((size_t)(g->outdeg + 1) * sizeof(MPI_Datatype));
    b->rt = malloc((size_t)(g->indeg + 1) * sizeof(MPI_Datatype));
    b->sints = 0;
    for (int j = 0; j < g->outdeg; j++) {
        int n = edge_ints(op, nt_rank, all ? 0 : j, cnt);
        int st = op == A2AW && (nt_rank + j) % 2 ? 2 : 1;
        b->sn[j] = n;
        b->sstride[j] = st;
        b->scounts[j] = n / st;
        b->st[j] = st == 2 ? strided : MPI_INT;
        b->sdispls[j] = all ? 0 : b->sints;
        b->sb[j] = (MPI_Aint)b->sdispls[j] * (MPI_Aint)sizeof(int);
        b->sints += all ? (j == 0 ? n : 0) : n * st;
    }
    b->scount = b->ns ? b->sn[0] : edge_ints(op, nt_rank, 0, cnt);
    b->send = ints(b->sints);
    for (int e = 0; e < b->sints; e++)
        b->send[e] = -1;
    nt_bufs_fill(b);
    b->rints = 0;
    for (int i = g->indeg - 1; i >= 0; i--) {
        int j = sender_slot(g, op, i);
        int n = edge_ints(op, j < 0 ? nt_rank : g->src[i], j < 0 ? 0 : j, cnt);
        int st = op == A2AW && i % 2 ? 2 : 1;
        b->rn[i] = n;
        b->rstride[i] = st;
        b->rcounts[i] = n / st;
        b->rt[i] = st == 2 ? strided : MPI_INT;
        b->rdispls[i] = scalar ? i * cnt : b->rints;
        b->rb[i] = (MPI_Aint)b->rdispls[i] * (MPI_Aint)sizeof(int);
        b->rints += n * st;
    }
    b->recv = ints(b->rints);
    b->ref = ints(b->rints);
    memset(b->ref, 0xff, (size_t)(b->rints + 1) * sizeof(int));
}

void nt_bufs_free(nt_bufs_t *b)
{
    void *arrays[] = {b->sn, b->sstride, b->rn, b->rstride, b->send, b->recv, b->ref,
                      b->scounts, b->sdispls, b->rcounts, b->rdispls, b->sb, b->rb, b->st,
                      b->rt};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        free(arrays[i]);
}

/* Where element e of receive block i lands. */
static int recv_at(const nt_bufs_t *b, int i, int e)
{
    return b->rdispls[i] + e * b->rstride[i];
}

/* ---- The operations ---- */

static int mpi_reference(const nt_graph_t *g, int op, nt_bufs_t *b)
{
    int *r = b->ref, c = b->cnt;
    switch (op) {
    case AG:
        return MPI_Neighbor_allgather(b->send, c, MPI_INT, r, c, MPI_INT, g->comm);
    case AGV:
        return MPI_Neighbor_allgatherv(b->send, b->scount, MPI_INT, r, b->rcounts, b->rdispls,
                                       MPI_INT, g->comm);
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

int nt_init_op(const nt_graph_t *g, int op, nt_bufs_t *b, MPI_Info info, mpitopo_request_t *q)
{
    int *r = b->recv, c = b->cnt;
    switch (op) {
    case AG:
        return mpitopo_neighbor_allgather_init(b->send, c, MPI_INT, r, c, MPI_INT, g->comm, info,
                                               q);
    case AGV:
        return mpitopo_neighbor_allgatherv_init(b->send, b->scount, MPI_INT, r, b->rcounts,
                                                b->rdispls, MPI_INT, g->comm, info, q);
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

int nt_start_or_run(const nt_graph_t *g, int op, nt_bufs_t *b, mpitopo_request_t *q, int nb)
{
    int *r = b->recv, c = b->cnt;
    switch (op * 2 + nb) {
    case AG * 2:
        return mpitopo_neighbor_allgather(b->send, c, MPI_INT, r, c, MPI_INT, g->comm);
    case AG * 2 + 1:
        return mpitopo_ineighbor_allgather(b->send, c, MPI_INT, r, c, MPI_INT, g->comm, q);
    case AGV * 2:
        return mpitopo_neighbor_allgatherv(b->send, b->scount, MPI_INT, r, b->rcounts,
                                           b->rdispls, MPI_INT, g->comm);
    case AGV * 2 + 1:
        return mpitopo_ineighbor_allgatherv(b->send, b->scount, MPI_INT, r, b->rcounts,
                                            b->rdispls, MPI_INT, g->comm, q);
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

int nt_call(const nt_graph_t *g, int op, int form, nt_bufs_t *b, MPI_Info info)
{
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    if (form != PERSISTENT) {
        int rc = nt_start_or_run(g, op, b, &q, form == NONBLOCKING);
        return rc == MPITOPO_SUCCESS && form == NONBLOCKING ? mpitopo_wait(&q) : rc;
    }
    int rc = nt_init_op(g, op, b, info, &q);
    for (int run = 0; run < 2 && rc == MPITOPO_SUCCESS; run++) {
        nt_gen = run;
        nt_bufs_fill(b);
        memset(b->recv, 0xff, (size_t)(b->rints + 1) * sizeof(int));
        rc = mpitopo_start(&q);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_wait(&q);
    }
    if (q != MPITOPO_REQUEST_NULL)
        mpitopo_request_free(&q);
    return rc;
}

/* mpitopo's linear schedule (one persistent run, on the data b holds),
 * into b->ref. */
static int linear_reference(const nt_graph_t *g, int op, nt_bufs_t *b)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", "linear");
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    int *keep = b->recv;
    b->recv = b->ref;
    int rc = nt_init_op(g, op, b, info, &q);
    b->recv = keep;
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_start(&q);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_wait(&q);
    if (q != MPITOPO_REQUEST_NULL)
        mpitopo_request_free(&q);
    MPI_Info_free(&info);
    return rc;
}

/* Not alltoall with duplicate edges under MPICH 4.0, which delivers them
 * in reverse order, nor alltoallw there. */
void nt_verify(const nt_graph_t *g, int op, int form, nt_bufs_t *b, const char *how)
{
    const char *v = nt_vary ? ", varying counts" : "";
    int skip_ref = !g->cart && ((op == A2A && g->dups && mt_is_mpich()) ||
                                (op == A2AW && mt_is_mpich()));
    int rc = skip_ref ? MPITOPO_SUCCESS
                      : g->cart ? linear_reference(g, op, b) : mpi_reference(g, op, b);
    if (!skip_ref && MT_CHECK_RC(rc))
        for (int i = 0; i < g->indeg; i++)
            for (int e = 0; g->src[i] != MPI_PROC_NULL && e < b->rn[i]; e++)
                if (!MT_CHECK(b->recv[recv_at(b, i, e)] == b->ref[recv_at(b, i, e)],
                              "%s: %s %s (%s%s), %d ints: block %d element %d differs from "
                              "the reference",
                              g->label, nt_op_name[op], nt_form_name[form], how, v, b->cnt, i,
                              e))
                    return;
    for (int i = 0; (!g->cart || g->stencil) && i < g->indeg; i++)
        for (int e = 0; e < b->rn[i]; e++)
            if (!MT_CHECK(b->recv[recv_at(b, i, e)] == expected(g, op, i, e),
                          "%s: %s %s (%s%s), %d ints: block %d element %d = %d, want %d",
                          g->label, nt_op_name[op], nt_form_name[form], how, v, b->cnt, i, e,
                          b->recv[recv_at(b, i, e)], expected(g, op, i, e)))
                return;
}

void nt_check_one(const nt_graph_t *g, int op, int form, int cnt, MPI_Info info,
                  const char *how)
{
    nt_bufs_t b;
    nt_bufs_make(&b, g, op, cnt);
    memset(b.recv, 0xff, (size_t)(b.rints + 1) * sizeof(int));
    if (MT_CHECK_RC(nt_call(g, op, form, &b, info)))
        nt_verify(g, op, form, &b, how);
    nt_gen = 0;
    nt_bufs_free(&b);
}

long long nt_sends_of(const nt_graph_t *g, int op, const char *sched)
{
    nt_bufs_t b;
    nt_bufs_make(&b, g, op, 1);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", sched);
    long long before = 0, after = 0, mine, total = 0;
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    MT_CHECK_RC(nt_init_op(g, op, &b, info, &q));
    MT_CHECK_RC(mpitopo__coll_sends(g->comm, &before));
    MT_CHECK_RC(mpitopo_start(&q));
    MT_CHECK_RC(mpitopo_wait(&q));
    MT_CHECK_RC(mpitopo__coll_sends(g->comm, &after));
    mpitopo_request_free(&q);
    MPI_Info_free(&info);
    nt_bufs_free(&b);
    mine = after - before;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

void nt_check_truncate(const nt_graph_t *g, const char *sched, int delta, const int *change)
{
    nt_bufs_t b;
    nt_bufs_make(&b, g, A2AV, 3);
    for (int i = 0; i < g->indeg; i++)
        if ((!change || change[i]) && b.rcounts[i] + delta >= 0)
            b.rcounts[i] += delta;
    free(b.recv);
    b.recv = ints(b.rints + (delta > 0 ? delta : 0) * g->indeg); /* room for larger counts */
    for (int i = g->indeg - 1, at = 0; i >= 0; i--, at += b.rcounts[i + 1])
        b.rdispls[i] = at;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", sched);
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    int rc = nt_init_op(g, A2AV, &b, info, &q), cls = MPI_SUCCESS, any = 0, mine;
    if (MT_CHECK_RC(rc)) {
        rc = mpitopo_start(&q);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_wait(&q);
        if (rc != MPITOPO_SUCCESS)
            MPI_Error_class(rc, &cls);
        MT_CHECK(rc == MPITOPO_SUCCESS || cls == MPI_ERR_TRUNCATE,
                 "%s: receive counts off by %d under %s: error %d (%s), want MPI_ERR_TRUNCATE",
                 g->label, delta, sched, rc, mpitopo_last_error());
        if (rc != MPITOPO_SUCCESS && nt_rank == 0)
            printf("# %s: %s\n", g->label, mpitopo_last_error());
    }
    mine = cls == MPI_ERR_TRUNCATE;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MT_CHECK(any, "%s: no process saw a truncated block under %s", g->label, sched);
    if (q != MPITOPO_REQUEST_NULL)
        mpitopo_request_free(&q);
    MPI_Info_free(&info);
    nt_bufs_free(&b);
}
