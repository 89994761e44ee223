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
 * The v and w forms run again with per-edge counts that vary (zeros
 * included), and alltoallw always mixes MPI_INT blocks with blocks of a
 * strided vector type, on either side independently; persistent requests
 * run twice, with new data the second time; three nonblocking v/w calls
 * overlap and complete out of order; and receive counts one too large
 * must fail cleanly (MPI_ERR_TRUNCATE) where a block arrives combined.
 *
 * Then the point of combining: one alltoall, alltoallv, alltoallw and
 * allgatherv under "combine" must send fewer messages in total than under
 * "linear" (the library's internal counter), so a silent fall back to
 * linear fails the test.
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
static int gen;              /* data generation: a restarted request sends new data */
static int vary;             /* v and w forms: per-edge counts vary */
static MPI_Datatype strided; /* two ints, stride 2, extent 4 ints */

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
    return rank * 1000000 + slot * 3000 + e + gen * 7;
}

/* Ints on the edge of s's send slot j (allgatherv: its one block):
 * varying, some zero; alltoallw sends pairs (the strided type). */
static int edge_ints(int op, int s, int j, int cnt)
{
    int n = cnt;
    if (vary && (op == AGV || op == A2AV || op == A2AW))
        n = (s * 5 + j * 3) % 4 == 1 ? 0 : cnt + (s + 2 * j) % 3;
    return op == A2AW ? 2 * n : n;
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
    int op, cnt, scount, *send, *recv, *ref;
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Aint *sb, *rb;
    MPI_Datatype *st, *rt;
    int ns, sints, rints;   /* send slots, ints of the send and receive buffers */
    int *sn, *sstride;      /* ints and stride of every send block */
    int *rn, *rstride;      /* and of every receive block */
} bufs_t;

static int *ints(int n)
{
    return malloc((size_t)(n + 1) * sizeof(int));
}

/* (Re)fill the send blocks with generation gen's values. */
static void bufs_fill(bufs_t *b)
{
    for (int j = 0; j < b->ns; j++)
        for (int e = 0; e < b->sn[j]; e++)
            b->send[b->sdispls[j] + e * b->sstride[j]] = value(wrank, j, e);
}

/* Receive blocks in reverse slot order, so a slot mix-up shows (scalar
 * forms: in order); alltoallw: odd blocks of the strided type (send side:
 * odd rank + slot), which needs twice the room. */
static void bufs_make(bufs_t *b, const graph_t *g, int op, int cnt)
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
        int n = edge_ints(op, wrank, all ? 0 : j, cnt);
        int st = op == A2AW && (wrank + j) % 2 ? 2 : 1;
        b->sn[j] = n;
        b->sstride[j] = st;
        b->scounts[j] = n / st;
        b->st[j] = st == 2 ? strided : MPI_INT;
        b->sdispls[j] = all ? 0 : b->sints;
        b->sb[j] = (MPI_Aint)b->sdispls[j] * (MPI_Aint)sizeof(int);
        b->sints += all ? (j == 0 ? n : 0) : n * st;
    }
    b->scount = b->ns ? b->sn[0] : edge_ints(op, wrank, 0, cnt);
    b->send = ints(b->sints);
    for (int e = 0; e < b->sints; e++)
        b->send[e] = -1;
    bufs_fill(b);
    b->rints = 0;
    for (int i = g->indeg - 1; i >= 0; i--) {
        int s = g->src[i], k = 0;
        for (int j = 0; j < i; j++)
            k += g->src[j] == s;
        int n = edge_ints(op, s, all ? 0 : kth_slot(g, s, wrank, k), cnt);
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

static void bufs_free(bufs_t *b)
{
    free(b->sn);
    free(b->sstride);
    free(b->rn);
    free(b->rstride);
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

/* Where element e of receive block i lands. */
static int recv_at(const bufs_t *b, int i, int e)
{
    return b->rdispls[i] + e * b->rstride[i];
}

static int reference(const graph_t *g, int op, bufs_t *b)
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

static int init(const graph_t *g, int op, bufs_t *b, MPI_Info info, mpitopo_request_t *q)
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

static int start_or_run(const graph_t *g, int op, bufs_t *b, mpitopo_request_t *q, int nb)
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

/* One call of op in `form`; persistent: two runs of one request, the
 * second with new data (generation 1; the caller resets gen). */
static int call(const graph_t *g, int op, int form, bufs_t *b, MPI_Info info)
{
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    if (form != PERSISTENT) {
        int rc = start_or_run(g, op, b, &q, form == NONBLOCKING);
        return rc == MPITOPO_SUCCESS && form == NONBLOCKING ? mpitopo_wait(&q) : rc;
    }
    int rc = init(g, op, b, info, &q);
    for (int run = 0; run < 2 && rc == MPITOPO_SUCCESS; run++) {
        gen = run;
        bufs_fill(b);
        memset(b->recv, 0xff, (size_t)(b->rints + 1) * sizeof(int));
        rc = mpitopo_start(&q);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_wait(&q);
    }
    if (q != MPITOPO_REQUEST_NULL)
        mpitopo_request_free(&q);
    return rc;
}

/* The received blocks of b against MPI's (run now on the same send
 * data) and against the data each neighbour sent. */
static void verify(const graph_t *g, int op, int form, bufs_t *b, const char *how)
{
    const char *v = vary ? ", varying counts" : "";
    int skip_ref = (op == A2A && g->dups && mt_is_mpich()) || (op == A2AW && mt_is_mpich());
    if (!skip_ref && MT_CHECK_RC(reference(g, op, b)))
        for (int i = 0; i < g->indeg; i++)
            for (int e = 0; e < b->rn[i]; e++)
                if (!MT_CHECK(b->recv[recv_at(b, i, e)] == b->ref[recv_at(b, i, e)],
                              "%s: %s %s (%s%s), %d ints: block %d element %d differs from "
                              "MPI's",
                              g->label, op_name[op], form_name[form], how, v, b->cnt, i, e))
                    return;
    for (int i = 0; i < g->indeg; i++)
        for (int e = 0; e < b->rn[i]; e++)
            if (!MT_CHECK(b->recv[recv_at(b, i, e)] == expected(g, op, i, e),
                          "%s: %s %s (%s%s), %d ints: block %d element %d = %d, want %d",
                          g->label, op_name[op], form_name[form], how, v, b->cnt, i, e,
                          b->recv[recv_at(b, i, e)], expected(g, op, i, e)))
                return;
}

static void check_one(const graph_t *g, int op, int form, int cnt, MPI_Info info,
                      const char *how)
{
    bufs_t b;
    bufs_make(&b, g, op, cnt);
    memset(b.recv, 0xff, (size_t)(b.rints + 1) * sizeof(int));
    if (MT_CHECK_RC(call(g, op, form, &b, info)))
        verify(g, op, form, &b, how);
    gen = 0;
    bufs_free(&b);
}

/* Overwrite the count, displacement and type arrays of b, saving them in
 * keep (restore: put them back): a started call must have copied them. */
static void clobber(bufs_t *b, bufs_t *k0, const graph_t *g, int restore)
{
    bufs_t keep = *k0;
    size_t so = (size_t)g->outdeg + 1, si = (size_t)g->indeg + 1;
    int **iv[4] = {&b->scounts, &b->sdispls, &b->rcounts, &b->rdispls};
    int **kv[4] = {&keep.scounts, &keep.sdispls, &keep.rcounts, &keep.rdispls};
    for (int k = 0; k < 4; k++) {
        size_t n = (k < 2 ? so : si) * sizeof(int);
        if (!restore) {
            *kv[k] = malloc(n);
            memcpy(*kv[k], *iv[k], n);
            memset(*iv[k], 0x7f, n);
        } else {
            memcpy(*iv[k], *kv[k], n);
            free(*kv[k]);
        }
    }
    if (!restore) {
        keep.sb = malloc(so * sizeof(MPI_Aint));
        keep.rb = malloc(si * sizeof(MPI_Aint));
        keep.st = malloc(so * sizeof(MPI_Datatype));
        keep.rt = malloc(si * sizeof(MPI_Datatype));
        memcpy(keep.sb, b->sb, so * sizeof(MPI_Aint));
        memcpy(keep.rb, b->rb, si * sizeof(MPI_Aint));
        memcpy(keep.st, b->st, so * sizeof(MPI_Datatype));
        memcpy(keep.rt, b->rt, si * sizeof(MPI_Datatype));
        for (size_t i = 0; i + 1 < so; i++)
            b->sb[i] = -1, b->st[i] = MPI_DATATYPE_NULL;
        for (size_t i = 0; i + 1 < si; i++)
            b->rb[i] = -1, b->rt[i] = MPI_DATATYPE_NULL;
        *k0 = keep;
        return;
    }
    memcpy(b->sb, keep.sb, so * sizeof(MPI_Aint));
    memcpy(b->rb, keep.rb, si * sizeof(MPI_Aint));
    memcpy(b->st, keep.st, so * sizeof(MPI_Datatype));
    memcpy(b->rt, keep.rt, si * sizeof(MPI_Datatype));
    free(keep.sb);
    free(keep.rb);
    free(keep.st);
    free(keep.rt);
}

/* Three nonblocking v/w calls (varying counts) in flight at once, their
 * argument arrays overwritten as soon as each has started, completed in
 * another order than started (the same on every process). */
static void check_overlap(const graph_t *g)
{
    static const int ops[3] = {A2AV, AGV, A2AW}, order[3] = {2, 0, 1};
    bufs_t b[3], keep[3];
    mpitopo_request_t q[3];
    vary = 1;
    for (int k = 0; k < 3; k++) {
        bufs_make(&b[k], g, ops[k], 3 + k);
        memset(b[k].recv, 0xff, (size_t)(b[k].rints + 1) * sizeof(int));
        MT_CHECK_RC(start_or_run(g, ops[k], &b[k], &q[k], 1));
        clobber(&b[k], &keep[k], g, 0);
    }
    for (int k = 0; k < 3; k++)
        MT_CHECK_RC(mpitopo_wait(&q[order[k]]));
    for (int k = 0; k < 3; k++)
        clobber(&b[k], &keep[k], g, 1);
    for (int k = 0; k < 3; k++) {
        verify(g, ops[k], NONBLOCKING, &b[k], "overlapping, out of order");
        bufs_free(&b[k]);
    }
    vary = 0;
}

static void check_all(const graph_t *g)
{
    static const char *const scheds[] = {"linear", "combine", "auto"};
    static const int cnts[] = {1, 5, 513};
    for (vary = 0; vary < 2; vary++) {
        int op0 = vary ? AGV : AG;
        for (int s = 0; s < 3; s++) {
            MPI_Info info;
            MPI_Info_create(&info);
            MPI_Info_set(info, "mpitopo_neighbor", scheds[s]);
            for (int op = op0; op < NOPS; op += vary && op == AGV ? 2 : 1)
                for (int c = 0; c < 3; c++)
                    check_one(g, op, PERSISTENT, cnts[c], info, scheds[s]);
            MPI_Info_free(&info);
        }
        for (int op = op0; op < NOPS; op += vary && op == AGV ? 2 : 1)
            for (int form = BLOCKING; form <= NONBLOCKING; form++)
                for (int c = 0; c < 3; c++)
                    check_one(g, op, form, cnts[c], MPI_INFO_NULL, "environment");
    }
    vary = 0;
    check_overlap(g);
}

/* Messages sent by one persistent run of op under sched, summed over
 * all processes. */
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
    static const int ops[4] = {A2A, A2AV, A2AW, AGV};
    for (int k = 0; k < 4; k++) {
        long long lin = sends_of(g, ops[k], "linear"), comb = sends_of(g, ops[k], "combine");
        if (wrank == 0)
            printf("# %s: one %s sends %lld messages linear, %lld combined\n", g->label,
                   op_name[ops[k]], lin, comb);
        MT_CHECK(comb < lin, "%s: %s combining sent %lld messages, linear %lld: no saving",
                 g->label, op_name[ops[k]], comb, lin);
    }
}

/* Receive counts one larger than sent: a block that arrives combined must
 * fail the call with MPI_ERR_TRUNCATE (direct ones are received as MPI
 * does, short); somewhere one must arrive combined. */
static void check_truncate(const graph_t *g)
{
    bufs_t b;
    bufs_make(&b, g, A2AV, 3);
    for (int i = 0; i < g->indeg; i++)
        b.rcounts[i]++;
    free(b.recv);
    b.recv = ints(b.rints + 2 * g->indeg); /* room for the larger counts */
    for (int i = g->indeg - 1, at = 0; i >= 0; i--, at += b.rcounts[i + 1])
        b.rdispls[i] = at;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", "combine");
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    int rc = init(g, A2AV, &b, info, &q), cls = MPI_SUCCESS, any = 0, mine;
    if (MT_CHECK_RC(rc)) {
        rc = mpitopo_start(&q);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_wait(&q);
        if (rc != MPITOPO_SUCCESS)
            MPI_Error_class(rc, &cls);
        MT_CHECK(rc == MPITOPO_SUCCESS || cls == MPI_ERR_TRUNCATE,
                 "%s: too small a combined block: error %d (%s), want MPI_ERR_TRUNCATE",
                 g->label, rc, mpitopo_last_error());
        if (rc != MPITOPO_SUCCESS && wrank == 0)
            printf("# %s: %s\n", g->label, mpitopo_last_error());
    }
    mine = cls == MPI_ERR_TRUNCATE;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MT_CHECK(any, "%s: no process saw a truncated combined block", g->label);
    if (q != MPITOPO_REQUEST_NULL)
        mpitopo_request_free(&q);
    MPI_Info_free(&info);
    bufs_free(&b);
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
    if (counting) {
        check_fewer_messages(g);
        check_truncate(g);
    }
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

/* Random digraph (density keep / 10), duplicates and self edges;
 * process 1 has no edge at all (when there are more than 2). */
static void random_case(unsigned seed, int keep, int counting)
{
    int m = 3 * wsize * wsize + 8, ne = 0;
    int *ea = malloc((size_t)m * sizeof(int)), *eb = malloc((size_t)m * sizeof(int));
    srand(seed);
    for (int a = 0; a < wsize; a++)
        for (int b = 0; b < wsize; b++) {
            int r = rand() % 10;
            if (r >= keep || (wsize > 2 && (a == 1 || b == 1)))
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
    snprintf(g.label, sizeof g.label, "random digraph seed %u density 0.%d", seed, keep);
    dist_graph(&g, ea, eb, ne);
    finish_graph(&g, counting);
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
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
    MPI_Type_create_resized(pair, 0, 4 * (MPI_Aint)sizeof(int), &strided);
    MPI_Type_commit(&strided);
    MPI_Type_free(&pair);
    /* Sparse graphs pair only under a low friendship threshold. */
    const char *theta = mt_getenv("MPITOPO_COMBINE_THRESHOLD");
    int low = theta && atoi(theta) <= 2;
    random_case(3, 7, wsize >= 6);
    random_case(8, 7, wsize >= 6);
    random_case(5, 3, low && wsize >= 6);
    moore_case();
    graph_case();
    MPI_Type_free(&strided);
    int code = mt_finish("neighbor_combine");
    MPI_Finalize();
    return code;
}
