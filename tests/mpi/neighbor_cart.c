/*
 * Stencil communicators (mpitopo_cart_stencil_create) and the Cartesian
 * dimension-wise schedule. On grids of 1 to 4 dimensions, periodic, open
 * and mixed, Moore and star stencils of radius 1 and 2 (some with periodic
 * dimensions shorter than 2R + 1, where the collectives must fall back),
 * and a grid smaller than the world:
 *   - the lists are those the header promises (destination j at
 *     coords + o_j, source j at coords - o_j, offsets off the grid skipped),
 *     computed here independently;
 *   - allgather and alltoall, blocking, nonblocking (two overlapping calls
 *     completed in opposite orders on even and odd processes) and persistent (restarted with new data),
 *     deliver the data each neighbour sent and agree byte for byte with
 *     MPI_Neighbor_* on the same communicator, with derived datatypes on
 *     either side and blocks below and above the 1 KiB "auto" limit;
 *   - the schedule that ran is the one asked for: under "cart" (or "auto"
 *     with small blocks) a Moore stencil of distinct offsets sends at most
 *     2R messages per dimension, fewer than its neighbours; under "linear"
 *     one per neighbour (internal message counter); a duplicate of the
 *     communicator keeps the stencil;
 *   - allgatherv, alltoallv and alltoallw in the same three forms, with
 *     counts that vary per neighbour (zeros included), receive blocks in
 *     reverse slot order with gaps, and alltoallw mixing MPI_INT, MPI_UNSIGNED
 *     and a strided type on either side: the data each neighbour sent, and
 *     byte for byte what MPI_Neighbor_*v/w give; under the dimension-wise
 *     schedule they send exactly the messages allgather and alltoall send;
 *   - receive counts smaller than what a neighbour sends fail with
 *     MPI_ERR_TRUNCATE at every process expecting a non-empty block (and
 *     nowhere else), naming the block, without hanging;
 *   - bad arguments.
 * The schedule comes from MPITOPO_NEIGHBOR (testlist) and, for the
 * persistent form, from the _init info key.
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal (src/coll/coll_internal.h): messages the schedules of comm sent. */
int mpitopo__coll_sends(MPI_Comm comm, long long *sends);

static int wrank, wsize;

typedef struct grid {
    char label[96];
    int ndims, dims[4], periods[4], radius, star;
    MPI_Comm cart, comm;
    int me, coords[4];
    int k, *off;     /* offsets, k * ndims */
    int indeg, outdeg, *src, *dst;
    int distinct;
} grid_t;

static int value(int rank, int slot, int e)
{
    return rank * 100000 + slot * 1000 + e;
}

/* The stencil's offsets, lexicographic with dimension 0 slowest. */
static void make_offsets(grid_t *g)
{
    int d = g->ndims, r = g->radius, v[4], total = 1;
    for (int f = 0; f < d; f++)
        total *= 2 * r + 1;
    g->off = malloc(sizeof(int) * (size_t)(total * d + 1));
    g->k = 0;
    for (int x = 0; x < total; x++) {
        int nonzero = 0;
        for (int f = d - 1, q = x; f >= 0; f--, q /= 2 * r + 1)
            v[f] = q % (2 * r + 1) - r;
        for (int f = 0; f < d; f++)
            nonzero += v[f] != 0;
        if (nonzero == 0 || (g->star && nonzero > 1))
            continue;
        memcpy(g->off + g->k * d, v, sizeof(int) * (size_t)d);
        g->k++;
    }
}

static int shifted(const grid_t *g, const int *coords, int j, int sign)
{
    int v[4];
    for (int f = 0; f < g->ndims; f++)
        v[f] = coords[f] + sign * g->off[j * g->ndims + f];
    return mt_cart_rank_of(g->ndims, g->dims, g->periods, v);
}

/* Send slot of offset j at the process with these coordinates. */
static int out_slot(const grid_t *g, const int *coords, int j)
{
    int slot = 0;
    for (int i = 0; i < j; i++)
        slot += shifted(g, coords, i, 1) != MPI_PROC_NULL;
    return slot;
}

static int setup(grid_t *g, MPI_Info info)
{
    int n = 1;
    for (int f = 0; f < g->ndims; f++)
        n *= g->dims[f];
    MPI_Cart_create(MPI_COMM_WORLD, g->ndims, g->dims, g->periods, 0, &g->cart);
    g->comm = MPI_COMM_NULL;
    if (g->cart == MPI_COMM_NULL)
        return 0;
    make_offsets(g);
    MPI_Comm_rank(g->cart, &g->me);
    MPI_Cart_coords(g->cart, g->me, g->ndims, g->coords);
    char st[32];
    snprintf(st, sizeof st, "%s:%d", g->star ? "star" : "moore", g->radius);
    if (!MT_CHECK_RC(mpitopo_cart_stencil_create(g->cart, st, info, &g->comm)))
        return 0;
    g->src = malloc(sizeof(int) * (size_t)(g->k + 1));
    g->dst = malloc(sizeof(int) * (size_t)(g->k + 1));
    g->indeg = g->outdeg = 0;
    for (int j = 0; j < g->k; j++) {
        int d = shifted(g, g->coords, j, 1), s = shifted(g, g->coords, j, -1);
        if (d != MPI_PROC_NULL)
            g->dst[g->outdeg++] = d;
        if (s != MPI_PROC_NULL)
            g->src[g->indeg++] = s;
    }
    g->distinct = 1;
    for (int f = 0; f < g->ndims; f++)
        if (g->periods[f] && g->dims[f] < 2 * g->radius + 1)
            g->distinct = 0;
    (void)n;
    return 1;
}

static void teardown(grid_t *g)
{
    if (g->comm != MPI_COMM_NULL)
        MPI_Comm_free(&g->comm);
    if (g->cart != MPI_COMM_NULL) {
        MPI_Comm_free(&g->cart);
        free(g->off);
        free(g->src);
        free(g->dst);
    }
}

static void check_lists(const grid_t *g)
{
    int in, out, w;
    MPI_Dist_graph_neighbors_count(g->comm, &in, &out, &w);
    if (!MT_CHECK(in == g->indeg && out == g->outdeg, "%s: degrees %d/%d, expected %d/%d",
                  g->label, in, out, g->indeg, g->outdeg))
        return;
    int *s = malloc(sizeof(int) * (size_t)(in + 1)), *d = malloc(sizeof(int) * (size_t)(out + 1));
    MPI_Dist_graph_neighbors(g->comm, in, s, MPI_UNWEIGHTED, out, d, MPI_UNWEIGHTED);
    for (int i = 0; i < in; i++)
        MT_CHECK(s[i] == g->src[i], "%s: source %d is %d, expected %d", g->label, i, s[i],
                 g->src[i]);
    for (int i = 0; i < out; i++)
        MT_CHECK(d[i] == g->dst[i], "%s: destination %d is %d, expected %d", g->label, i, d[i],
                 g->dst[i]);
    int in2 = -1, out2 = -1;
    MT_CHECK_RC(mpitopo_comm_neighbors_count(g->comm, &in2, &out2));
    MT_CHECK(in2 == in && out2 == out, "%s: mpitopo_comm_neighbors_count %d/%d", g->label, in2,
             out2);
    free(s);
    free(d);
}

enum { AG, A2A };

/*
 * One operation's buffers: cnt ints per block. The send side of allgather
 * is a strided vector (every other int of a 2*cnt array); the receive side
 * of alltoall is one contiguous type of cnt ints per block.
 */
typedef struct op {
    int kind, cnt, round;
    int *send, *recv, *ref;
    MPI_Datatype stype, rtype;
    int scount, rcount;
} op_t;

/*
 * MPICH 4.0 only: derived datatypes are left out. After the linear
 * schedule's blocking calls with a derived type on the 4-D radius-2 grid,
 * a persistent request's duplicate (MPI_Type_dup, or a contiguous type
 * over it) of a fresh derived type packed garbage in the next case, while
 * the same program without the duplicate, and Open MPI, pass; a plain MPI
 * reproduction was not found. Open MPI runs cover derived types.
 */
static int named_only;

static void op_make(op_t *o, const grid_t *g, int kind, int cnt)
{
    o->kind = kind;
    o->cnt = cnt;
    int ns = kind == AG ? 2 * cnt : g->outdeg * cnt;
    o->send = malloc(sizeof(int) * (size_t)(ns + 1));
    o->recv = malloc(sizeof(int) * (size_t)(g->indeg * cnt + 1));
    o->ref = malloc(sizeof(int) * (size_t)(g->indeg * cnt + 1));
    if (named_only) {
        o->stype = o->rtype = MPI_INT;
        o->scount = o->rcount = cnt;
    } else if (kind == AG) {
        MPI_Type_vector(cnt, 1, 2, MPI_INT, &o->stype);
        MPI_Type_commit(&o->stype);
        o->scount = 1;
        o->rtype = MPI_INT;
        o->rcount = cnt;
    } else {
        o->stype = MPI_INT;
        o->scount = cnt;
        MPI_Type_contiguous(cnt, MPI_INT, &o->rtype);
        MPI_Type_commit(&o->rtype);
        o->rcount = 1;
    }
}

/* New data for run `round` (persistent requests restart with it). */
static void op_fill(op_t *o, const grid_t *g, int round)
{
    o->round = round;
    if (o->kind == AG)
        for (int e = 0; e < o->cnt; e++) {
            int at = named_only ? e : 2 * e;
            o->send[at] = value(g->me, round, e);
            if (!named_only)
                o->send[2 * e + 1] = -7;
        }
    else
        for (int j = 0; j < g->outdeg; j++)
            for (int e = 0; e < o->cnt; e++)
                o->send[j * o->cnt + e] = value(g->me, 10 * round + j, e);
    for (int i = 0; i < g->indeg * o->cnt; i++)
        o->recv[i] = o->ref[i] = -1;
}

static void op_free(op_t *o)
{
    if (named_only)
        ;
    else if (o->kind == AG)
        MPI_Type_free(&o->stype);
    else
        MPI_Type_free(&o->rtype);
    free(o->send);
    free(o->recv);
    free(o->ref);
}

/* What each neighbour sent (only where offsets reach distinct processes:
 * elsewhere MPI's matching order, not geometry, decides). */
static void check_sent(const grid_t *g, const op_t *o, const char *what)
{
    if (!g->distinct)
        return;
    int slot = 0, c[4];
    for (int j = 0; j < g->k; j++) {
        int s = shifted(g, g->coords, j, -1);
        if (s == MPI_PROC_NULL)
            continue;
        MPI_Cart_coords(g->cart, s, g->ndims, c);
        int block = o->kind == AG ? o->round : 10 * o->round + out_slot(g, c, j);
        for (int e = 0; e < o->cnt; e++) {
            int got = o->recv[slot * o->cnt + e];
            if (!MT_CHECK(got == value(s, block, e),
                          "%s %s: block %d (offset %d, from %d) element %d is %d, expected %d",
                          g->label, what, slot, j, s, e, got, value(s, block, e)))
                return;
        }
        slot++;
    }
}

/* MPI's own result, into ref. MPICH 4.0 delivers alltoall blocks of
 * duplicate edges in reverse order: no reference then. */
static int reference(const grid_t *g, op_t *o)
{
    if (o->kind == A2A && !g->distinct && mt_is_mpich())
        return 0;
    if (o->kind == AG)
        MPI_Neighbor_allgather(o->send, o->scount, o->stype, o->ref, o->rcount, o->rtype, g->comm);
    else
        MPI_Neighbor_alltoall(o->send, o->scount, o->stype, o->ref, o->rcount, o->rtype, g->comm);
    return 1;
}

static void check_ref(const grid_t *g, const op_t *o, const char *what)
{
    for (int i = 0; i < g->indeg * o->cnt; i++)
        if (!MT_CHECK(o->recv[i] == o->ref[i], "%s %s: int %d is %d, MPI gives %d", g->label,
                      what, i, o->recv[i], o->ref[i]))
            return;
}

static int start(const grid_t *g, op_t *o, mpitopo_request_t *req)
{
    if (o->kind == AG)
        return mpitopo_ineighbor_allgather(o->send, o->scount, o->stype, o->recv, o->rcount,
                                           o->rtype, g->comm, req);
    return mpitopo_ineighbor_alltoall(o->send, o->scount, o->stype, o->recv, o->rcount, o->rtype,
                                      g->comm, req);
}

static int blocking(const grid_t *g, op_t *o)
{
    if (o->kind == AG)
        return mpitopo_neighbor_allgather(o->send, o->scount, o->stype, o->recv, o->rcount,
                                          o->rtype, g->comm);
    return mpitopo_neighbor_alltoall(o->send, o->scount, o->stype, o->recv, o->rcount, o->rtype,
                                     g->comm);
}

static void verify(const grid_t *g, op_t *o, const char *what)
{
    op_t r = *o;
    check_sent(g, o, what);
    /* reference() writes ref only; recv stays as mpitopo left it. */
    if (reference(g, &r))
        check_ref(g, o, what);
}

/* Which schedule the environment asks for. */
static const char *env_sched(void)
{
    const char *v = mt_getenv("MPITOPO_NEIGHBOR");
    return v ? v : "auto";
}

/* Messages one blocking alltoall (or allgather) of cnt ints sends, by the
 * counter. */
static long long kind_sends_of(MPI_Comm comm, const grid_t *g, int kind, int cnt)
{
    long long before = 0, after = 0;
    op_t o;
    grid_t h = *g;
    h.comm = comm;
    op_make(&o, &h, kind, cnt);
    op_fill(&o, &h, 0);
    MT_CHECK_RC(mpitopo__coll_sends(comm, &before));
    MT_CHECK_RC(blocking(&h, &o));
    MT_CHECK_RC(mpitopo__coll_sends(comm, &after));
    op_free(&o);
    return after - before;
}

static long long sends_of(MPI_Comm comm, const grid_t *g, int cnt)
{
    return kind_sends_of(comm, g, A2A, cnt);
}

/* ---- allgatherv, alltoallv, alltoallw ---- */

enum { AGV = 2, A2AV, A2AW };
static const char *vname[] = {"allgather", "alltoall", "allgatherv", "alltoallv", "alltoallw"};

/* One int every other int (extent 2 ints): the derived type of the w form. */
static MPI_Datatype gapped;

/* Ints on the edge from s to its neighbour t: varying per neighbour, zeros
 * included; allgatherv, per origin. Alike for every edge between one pair
 * (duplicate edges where offsets fold onto one process get one size, so
 * MPI's own matching of them cannot truncate). */
static int vints(int kind, int s, int t)
{
    if (kind == AGV)
        return s % 3 == 1 ? 0 : 1 + s % 4;
    return (s + 3 * t) % 4 == 0 ? 0 : 1 + (s + t) % 3;
}

/* Alltoallw types of the edge s -> t: MPI_INT on both sides, MPI_UNSIGNED
 * on both, strided on the send side, strided on the receive side (MPICH:
 * named types only, see named_only). */
static MPI_Datatype wtype(int s, int t, int send, int *stride)
{
    int c = (s + t) % 4;
    *stride = 1;
    if (c == 1)
        return MPI_UNSIGNED;
    if (named_only || c == 0 || c == (send ? 3 : 2))
        return MPI_INT;
    *stride = 2;
    return gapped;
}

typedef struct vop {
    int kind, round, scount;
    int *send, *recv, *ref, sints, rints;
    int *scounts, *sdispls, *sstride, *rcounts, *rdispls, *rstride;
    MPI_Aint *sb, *rb;
    MPI_Datatype *st, *rt;
} vop_t;

static int *ialloc(int n)
{
    return malloc(sizeof(int) * (size_t)(n + 1));
}

/* Blocks with a one-int gap after each; receive blocks in reverse slot
 * order, so a slot mix-up shows. */
static void vop_make(vop_t *o, const grid_t *g, int kind)
{
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->scounts = ialloc(g->outdeg);
    o->sdispls = ialloc(g->outdeg);
    o->sstride = ialloc(g->outdeg);
    o->rcounts = ialloc(g->indeg);
    o->rdispls = ialloc(g->indeg);
    o->rstride = ialloc(g->indeg);
    o->sb = malloc(sizeof(MPI_Aint) * (size_t)(g->outdeg + 1));
    o->rb = malloc(sizeof(MPI_Aint) * (size_t)(g->indeg + 1));
    o->st = malloc(sizeof(MPI_Datatype) * (size_t)(g->outdeg + 1));
    o->rt = malloc(sizeof(MPI_Datatype) * (size_t)(g->indeg + 1));
    o->scount = vints(AGV, g->me, 0);
    o->sints = kind == AGV ? o->scount + 1 : 0;
    for (int d = 0; d < g->outdeg && kind != AGV; d++) {
        o->st[d] = kind == A2AW ? wtype(g->me, g->dst[d], 1, &o->sstride[d]) : MPI_INT;
        o->sstride[d] = kind == A2AW ? o->sstride[d] : 1;
        o->scounts[d] = vints(kind, g->me, g->dst[d]);
        o->sdispls[d] = o->sints;
        o->sb[d] = (MPI_Aint)o->sints * (MPI_Aint)sizeof(int);
        o->sints += o->scounts[d] * o->sstride[d] + 1;
    }
    for (int i = g->indeg - 1; i >= 0; i--) {
        o->rt[i] = kind == A2AW ? wtype(g->src[i], g->me, 0, &o->rstride[i]) : MPI_INT;
        o->rstride[i] = kind == A2AW ? o->rstride[i] : 1;
        o->rcounts[i] = vints(kind, g->src[i], g->me);
        o->rdispls[i] = o->rints;
        o->rb[i] = (MPI_Aint)o->rints * (MPI_Aint)sizeof(int);
        o->rints += o->rcounts[i] * o->rstride[i] + 1;
    }
    o->send = ialloc(o->sints);
    o->recv = ialloc(o->rints);
    o->ref = ialloc(o->rints);
}

static void vop_fill(vop_t *o, const grid_t *g, int round)
{
    o->round = round;
    for (int i = 0; i < o->sints; i++)
        o->send[i] = -7;
    if (o->kind == AGV)
        for (int e = 0; e < o->scount; e++)
            o->send[e] = value(g->me, round, e);
    for (int d = 0; d < g->outdeg && o->kind != AGV; d++)
        for (int e = 0; e < o->scounts[d]; e++)
            o->send[o->sdispls[d] + e * o->sstride[d]] = value(g->me, 10 * round + d, e);
    for (int i = 0; i <= o->rints; i++)
        o->recv[i] = o->ref[i] = -1;
}

static void vop_free(vop_t *o)
{
    void *a[] = {o->send,    o->recv,    o->ref,     o->scounts, o->sdispls, o->sstride,
                 o->rcounts, o->rdispls, o->rstride, o->sb,      o->rb,      o->st,
                 o->rt};
    for (size_t i = 0; i < sizeof a / sizeof *a; i++)
        free(a[i]);
}

static int vblocking(const grid_t *g, vop_t *o)
{
    if (o->kind == AGV)
        return mpitopo_neighbor_allgatherv(o->send, o->scount, MPI_INT, o->recv, o->rcounts,
                                           o->rdispls, MPI_INT, g->comm);
    if (o->kind == A2AV)
        return mpitopo_neighbor_alltoallv(o->send, o->scounts, o->sdispls, MPI_INT, o->recv,
                                          o->rcounts, o->rdispls, MPI_INT, g->comm);
    return mpitopo_neighbor_alltoallw(o->send, o->scounts, o->sb, o->st, o->recv, o->rcounts,
                                      o->rb, o->rt, g->comm);
}

static int vstart(const grid_t *g, vop_t *o, mpitopo_request_t *q)
{
    if (o->kind == AGV)
        return mpitopo_ineighbor_allgatherv(o->send, o->scount, MPI_INT, o->recv, o->rcounts,
                                            o->rdispls, MPI_INT, g->comm, q);
    if (o->kind == A2AV)
        return mpitopo_ineighbor_alltoallv(o->send, o->scounts, o->sdispls, MPI_INT, o->recv,
                                           o->rcounts, o->rdispls, MPI_INT, g->comm, q);
    return mpitopo_ineighbor_alltoallw(o->send, o->scounts, o->sb, o->st, o->recv, o->rcounts,
                                       o->rb, o->rt, g->comm, q);
}

static int vinit(const grid_t *g, vop_t *o, MPI_Info info, mpitopo_request_t *q)
{
    if (o->kind == AGV)
        return mpitopo_neighbor_allgatherv_init(o->send, o->scount, MPI_INT, o->recv,
                                                o->rcounts, o->rdispls, MPI_INT, g->comm, info,
                                                q);
    if (o->kind == A2AV)
        return mpitopo_neighbor_alltoallv_init(o->send, o->scounts, o->sdispls, MPI_INT,
                                               o->recv, o->rcounts, o->rdispls, MPI_INT, g->comm,
                                               info, q);
    return mpitopo_neighbor_alltoallw_init(o->send, o->scounts, o->sb, o->st, o->recv,
                                           o->rcounts, o->rb, o->rt, g->comm, info, q);
}

/* MPI's own operation into ref (not alltoallv/w where offsets fold onto
 * one process under MPICH, as in reference()). */
static int vreference(const grid_t *g, vop_t *o)
{
    if (o->kind != AGV && !g->distinct && mt_is_mpich())
        return 0;
    if (o->kind == AGV)
        MPI_Neighbor_allgatherv(o->send, o->scount, MPI_INT, o->ref, o->rcounts, o->rdispls,
                                MPI_INT, g->comm);
    else if (o->kind == A2AV)
        MPI_Neighbor_alltoallv(o->send, o->scounts, o->sdispls, MPI_INT, o->ref, o->rcounts,
                               o->rdispls, MPI_INT, g->comm);
    else
        MPI_Neighbor_alltoallw(o->send, o->scounts, o->sb, o->st, o->ref, o->rcounts, o->rb,
                               o->rt, g->comm);
    return 1;
}

/* The data each neighbour sent (distinct offsets only, as check_sent). */
static void vcheck_sent(const grid_t *g, const vop_t *o, const char *form)
{
    int slot = 0, c[4];
    for (int j = 0; j < g->k && g->distinct; j++) {
        int s = shifted(g, g->coords, j, -1);
        if (s == MPI_PROC_NULL)
            continue;
        MPI_Cart_coords(g->cart, s, g->ndims, c);
        int block = o->kind == AGV ? o->round : 10 * o->round + out_slot(g, c, j);
        for (int e = 0; e < o->rcounts[slot]; e++) {
            int got = o->recv[o->rdispls[slot] + e * o->rstride[slot]];
            if (!MT_CHECK(got == value(s, block, e),
                          "%s %s %s: block %d (offset %d, from %d) element %d is %d, expected "
                          "%d",
                          g->label, form, vname[o->kind], slot, j, s, e, got,
                          value(s, block, e)))
                return;
        }
        slot++;
    }
}

/* vcheck_sent, then the whole receive buffer, gaps included, against
 * MPI's (collective: every process gets here, failed or not). */
static void vverify(const grid_t *g, vop_t *o, const char *form)
{
    vcheck_sent(g, o, form);
    if (!vreference(g, o))
        return;
    for (int i = 0; i < o->rints; i++)
        if (!MT_CHECK(o->recv[i] == o->ref[i], "%s %s %s: int %d is %d, MPI gives %d", g->label,
                      form, vname[o->kind], i, o->recv[i], o->ref[i]))
            return;
}

static void run_vforms(const grid_t *g)
{
    char what[64];
    vop_t o[3];
    mpitopo_request_t r[3] = {MPITOPO_REQUEST_NULL, MPITOPO_REQUEST_NULL, MPITOPO_REQUEST_NULL};
    for (int i = 0; i < 3; i++)
        vop_make(&o[i], g, AGV + i);
    for (int i = 0; i < 3; i++) {
        vop_fill(&o[i], g, 1);
        MT_CHECK_RC(vblocking(g, &o[i]));
        vverify(g, &o[i], "blocking"); /* (collective: also after a failure) */
    }
    /* Three overlapping calls, completed in opposite orders on even and
     * odd processes. */
    for (int i = 0; i < 3; i++) {
        vop_fill(&o[i], g, 2);
        MT_CHECK_RC(vstart(g, &o[i], &r[i]));
    }
    for (int i = 0; i < 3; i++)
        MT_CHECK_RC(mpitopo_wait(&r[g->me % 2 ? 2 - i : i]));
    for (int i = 0; i < 3; i++)
        vverify(g, &o[i], "nonblocking");
    /* Persistent, restarted with new data. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", g->ndims % 2 ? "cart" : "auto");
    for (int i = 0; i < 3; i++)
        MT_CHECK_RC(vinit(g, &o[i], info, &r[i]));
    MPI_Info_free(&info);
    for (int run = 3; run < 6; run++) {
        for (int i = 0; i < 3; i++)
            vop_fill(&o[i], g, run);
        MT_CHECK_RC(mpitopo_startall(3, r));
        for (int i = 0; i < 3; i++)
            MT_CHECK_RC(mpitopo_wait(&r[i]));
        snprintf(what, sizeof what, "persistent run %d", run);
        for (int i = 0; i < 3; i++)
            vverify(g, &o[i], what);
    }
    for (int i = 0; i < 3; i++) {
        MT_CHECK_RC(mpitopo_request_free(&r[i]));
        vop_free(&o[i]);
    }
}

/* Messages one blocking call of kind sends, by the counter. */
static long long vsends_of(const grid_t *g, int kind)
{
    long long before = 0, after = 0;
    vop_t o;
    vop_make(&o, g, kind);
    vop_fill(&o, g, 0);
    MT_CHECK_RC(mpitopo__coll_sends(g->comm, &before));
    MT_CHECK_RC(vblocking(g, &o));
    MT_CHECK_RC(mpitopo__coll_sends(g->comm, &after));
    vop_free(&o);
    return after - before;
}

/*
 * Receive counts one smaller than what the neighbour sends, in every
 * non-empty slot, under the dimension-wise schedule (where it applies):
 * every block is forwarded in a message of block sizes, so a process
 * expecting a non-empty block must fail with MPI_ERR_TRUNCATE naming a
 * block, and the others must succeed; nobody hangs.
 */
static void check_truncate(const grid_t *g)
{
    if (!g->distinct)
        return;
    vop_t o;
    vop_make(&o, g, A2AV);
    vop_fill(&o, g, 1);
    int want = 0;
    for (int i = 0; i < g->indeg; i++)
        if (o.rcounts[i] > 0) {
            o.rcounts[i]--;
            want = 1;
        }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", "cart");
    mpitopo_request_t q = MPITOPO_REQUEST_NULL;
    int rc = vinit(g, &o, info, &q), cls = MPI_SUCCESS;
    MPI_Info_free(&info);
    if (MT_CHECK_RC(rc)) {
        rc = mpitopo_start(&q);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo_wait(&q);
        if (rc > 0) /* MPI codes are positive, mpitopo's negative */
            MPI_Error_class(rc, &cls);
        else if (rc != MPITOPO_SUCCESS)
            cls = rc; /* an mpitopo error: not what is wanted */
        if (want)
            MT_CHECK(cls == MPI_ERR_TRUNCATE && strstr(mpitopo_last_error(), "receive block"),
                     "%s: receive counts too small: error %d (%s), want MPI_ERR_TRUNCATE "
                     "naming the block",
                     g->label, rc, rc != MPITOPO_SUCCESS ? mpitopo_last_error() : "success");
        else
            MT_CHECK(rc == MPITOPO_SUCCESS, "%s: no block expected, error %d (%s)", g->label, rc,
                     mpitopo_last_error());
        if (want && g->me == 0)
            printf("# %s: %s\n", g->label, mpitopo_last_error());
    }
    if (q != MPITOPO_REQUEST_NULL)
        MT_CHECK_RC(mpitopo_request_free(&q));
    vop_free(&o);
}

static void check_schedule(const grid_t *g)
{
    const char *s = env_sched();
    int gains = 2 * g->radius * g->ndims < g->k;
    long long linear = 0, got = sends_of(g->comm, g, 2);
    linear = g->outdeg; /* self edges too: the collectives send them */
    /* auto runs the Cartesian schedule, or hands the call to the host MPI
     * (no message of mpitopo's) where its cost model says so, or (where
     * MPI's delivery may differ: periodic dimensions of size 1 or 2)
     * runs linear. */
    int cart_wanted = !strcmp(s, "cart") || (!strcmp(s, "auto") && got != 0 && got != linear);
    if (!strcmp(s, "auto") && g->distinct && gains)
        MT_CHECK(got == 0 || got <= 2LL * g->radius * g->ndims,
                 "%s: auto sent %lld messages: neither the host MPI's (0) nor the Cartesian "
                 "schedule's (at most %d)", g->label, got, 2 * g->radius * g->ndims);
    if (cart_wanted && g->distinct && (gains || !strcmp(s, "cart"))) {
        /* One message per process at distance 1..R along each dimension
         * that is on the grid: exactly 2Rd on a fully periodic grid. */
        int periodic = 1;
        for (int f = 0; f < g->ndims; f++)
            periodic &= g->periods[f] != 0;
        long long most = 2LL * g->radius * g->ndims;
        MT_CHECK(periodic ? got == most : got <= most && got <= g->outdeg,
                 "%s: schedule %s sent %lld messages for %d neighbours (%s %lld)", g->label, s,
                 got, g->outdeg, periodic ? "expected" : "at most", most);
        /* The v and w forms send the messages of allgather and alltoall. */
        long long ag = kind_sends_of(g->comm, g, AG, 2), agv = vsends_of(g, AGV);
        long long a2av = vsends_of(g, A2AV), a2aw = vsends_of(g, A2AW);
        MT_CHECK(agv == ag && (!periodic || ag == most),
                 "%s: schedule %s: allgatherv sent %lld messages, allgather %lld", g->label, s,
                 agv, ag);
        MT_CHECK(a2av == got && a2aw == got,
                 "%s: schedule %s: alltoallv and alltoallw sent %lld and %lld messages, "
                 "alltoall %lld",
                 g->label, s, a2av, a2aw, got);
        /* A duplicate keeps the stencil. */
        MPI_Comm dup;
        MPI_Comm_dup(g->comm, &dup);
        long long d = sends_of(dup, g, 2);
        MT_CHECK(d == got, "%s: the duplicate sent %lld messages, the original %lld", g->label,
                 d, got);
        MPI_Comm_free(&dup);
    } else if (!strcmp(s, "linear") || (!strcmp(s, "cart") && !g->distinct)) {
        /* (auto may combine where the Cartesian schedule does not apply) */
        MT_CHECK(got == linear, "%s: schedule %s sent %lld messages, linear sends %lld",
                 g->label, s, got, linear);
        for (int kind = AGV; kind <= A2AW; kind++) {
            long long v = vsends_of(g, kind);
            MT_CHECK(v == linear, "%s: schedule %s: %s sent %lld messages, linear sends %lld",
                     g->label, s, vname[kind], v, linear);
        }
    }
    /* Above 1 KiB, auto runs no forwarding schedule: the host MPI's (or,
     * where MPI's delivery may differ, linear). */
    if (!strcmp(s, "auto")) {
        long long big = sends_of(g->comm, g, 300);
        MT_CHECK(big == 0 || big == linear,
                 "%s: auto with 1200-byte blocks sent %lld messages, linear %lld", g->label, big,
                 linear);
    }
}

static void run_forms(const grid_t *g, int cnt)
{
    char what[64];
    op_t ag, a2a;
    op_make(&ag, g, AG, cnt);
    op_make(&a2a, g, A2A, cnt);
    /* Blocking. */
    for (int kind = AG; kind <= A2A; kind++) {
        op_t *o = kind == AG ? &ag : &a2a;
        op_fill(o, g, 1);
        snprintf(what, sizeof what, "blocking %s cnt %d", kind == AG ? "allgather" : "alltoall",
                 cnt);
        MT_CHECK_RC(blocking(g, o));
        verify(g, o, what); /* (collective: also after a failure) */
    }
    /* Two overlapping nonblocking calls, completed in opposite orders on
     * even and odd processes (a wait must move the other request on). */
    mpitopo_request_t r[2] = {MPITOPO_REQUEST_NULL, MPITOPO_REQUEST_NULL};
    op_fill(&ag, g, 2);
    op_fill(&a2a, g, 2);
    MT_CHECK_RC(start(g, &ag, &r[0]));
    MT_CHECK_RC(start(g, &a2a, &r[1]));
    MT_CHECK_RC(mpitopo_wait(&r[g->me % 2]));
    MT_CHECK_RC(mpitopo_wait(&r[1 - g->me % 2]));
    snprintf(what, sizeof what, "nonblocking allgather cnt %d", cnt);
    verify(g, &ag, what);
    snprintf(what, sizeof what, "nonblocking alltoall cnt %d", cnt);
    verify(g, &a2a, what);
    /* Persistent, schedule by info key, three runs with new data. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpitopo_neighbor", g->ndims % 2 ? "cart" : "auto");
    MT_CHECK_RC(mpitopo_neighbor_allgather_init(ag.send, ag.scount, ag.stype, ag.recv, ag.rcount,
                                                ag.rtype, g->comm, info, &r[0]));
    MT_CHECK_RC(mpitopo_neighbor_alltoall_init(a2a.send, a2a.scount, a2a.stype, a2a.recv,
                                               a2a.rcount, a2a.rtype, g->comm, info, &r[1]));
    MPI_Info_free(&info);
    for (int run = 3; run < 6; run++) { /* (every process runs them: no hang on failure) */
        op_fill(&ag, g, run);
        op_fill(&a2a, g, run);
        MT_CHECK_RC(mpitopo_startall(2, r));
        MT_CHECK_RC(mpitopo_wait(&r[0]));
        MT_CHECK_RC(mpitopo_wait(&r[1]));
        snprintf(what, sizeof what, "persistent run %d cnt %d", run, cnt);
        verify(g, &ag, what);
        verify(g, &a2a, what);
    }
    MT_CHECK_RC(mpitopo_request_free(&r[0]));
    MT_CHECK_RC(mpitopo_request_free(&r[1]));
    op_free(&ag);
    op_free(&a2a);
}

static void one_case(int ndims, const int *dims, const int *periods, int radius, int star)
{
    grid_t g;
    memset(&g, 0, sizeof g);
    g.ndims = ndims;
    g.radius = radius;
    g.star = star;
    int n = snprintf(g.label, sizeof g.label, "%s:%d on ", star ? "star" : "moore", radius);
    for (int f = 0; f < ndims; f++) {
        g.dims[f] = dims[f];
        g.periods[f] = periods[f];
        n += snprintf(g.label + n, sizeof g.label - (size_t)n, "%s%d%s", f ? "x" : "", dims[f],
                      periods[f] ? "p" : "");
    }
    if (setup(&g, MPI_INFO_NULL)) {
        check_lists(&g);
        run_forms(&g, 1);
        if (ndims <= 2) /* (above the "auto" limit; one size is enough deeper) */
            run_forms(&g, 300);
        if (ndims == 2) /* 4 KiB blocks: a message carries several */
            run_forms(&g, 1024);
        run_vforms(&g);
        check_truncate(&g);
        check_schedule(&g);
    }
    teardown(&g);
}

static void grids(void)
{
    int dims[4], periods[4];
    for (int ndims = 1; ndims <= 4; ndims++) {
        for (int f = 0; f < 4; f++)
            dims[f] = 0;
        MPI_Dims_create(wsize, ndims, dims);
        for (int mode = 0; mode < 3; mode++) {
            /* periodic, open, mixed */
            for (int f = 0; f < ndims; f++)
                periods[f] = mode == 0 ? 1 : mode == 1 ? 0 : f % 2 == 0;
            for (int radius = 1; radius <= 2; radius++) {
                if (ndims >= 3 && (mode == 2 || (radius == 2 && mode != 0)))
                    continue;
                one_case(ndims, dims, periods, radius, 0);
                if (ndims >= 2 && mode == 0)
                    one_case(ndims, dims, periods, radius, 1);
            }
        }
    }
    /* A grid of fewer processes than the world. */
    if (wsize > 2) {
        int d2[2] = {wsize - 1, 1}, p2[2] = {1, 0};
        one_case(2, d2, p2, 1, 0);
    }
}

static void errors(void)
{
    MPI_Comm c = MPI_COMM_NULL, cart;
    int dims[1] = {wsize}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    int rc = mpitopo_cart_stencil_create(MPI_COMM_WORLD, "moore=1", MPI_INFO_NULL, &c);
    MT_CHECK(rc == MPI_ERR_TOPOLOGY && c == MPI_COMM_NULL,
             "a communicator without topology gave %d (%s)", rc, mpitopo_last_error());
    const char *bad[] = {"moore=0", "hex=1", "moore", "star=x", "moore=1:2", "moore:0", "star:x", ""};
    for (int i = 0; i < (int)(sizeof bad / sizeof *bad); i++) {
        rc = mpitopo_cart_stencil_create(cart, bad[i], MPI_INFO_NULL, &c);
        MT_CHECK(rc == MPITOPO_ERR_ARG && strstr(mpitopo_last_error(), "stencil"),
                 "stencil \"%s\" gave %d (%s)", bad[i], rc, mpitopo_last_error());
    }
    rc = mpitopo_cart_stencil_create(cart, NULL, MPI_INFO_NULL, &c);
    MT_CHECK(rc == MPITOPO_ERR_ARG, "stencil NULL gave %d", rc);
    rc = mpitopo_cart_stencil_create(cart, "moore=1", MPI_INFO_NULL, NULL);
    MT_CHECK(rc == MPITOPO_ERR_ARG && strstr(mpitopo_last_error(), "newcomm"),
             "newcomm NULL gave %d (%s)", rc, mpitopo_last_error());
    /* The deprecated spelling "moore:R" (NEWS) gives the same neighbours. */
    MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
    int ra = mpitopo_cart_stencil_create(cart, "moore=1", MPI_INFO_NULL, &a);
    int rb = mpitopo_cart_stencil_create(cart, "moore:1", MPI_INFO_NULL, &b);
    MT_CHECK(ra == MPITOPO_SUCCESS && rb == MPITOPO_SUCCESS, "moore=1 gave %d, moore:1 %d", ra, rb);
    if (ra == MPITOPO_SUCCESS && rb == MPITOPO_SUCCESS) {
        int ia, oa, ib, ob, w;
        MPI_Dist_graph_neighbors_count(a, &ia, &oa, &w);
        MPI_Dist_graph_neighbors_count(b, &ib, &ob, &w);
        int same = ia == ib && oa == ob;
        int *na = malloc(sizeof(int) * (size_t)(ia + oa + 1)), *nb = malloc(sizeof(int) * (size_t)(ib + ob + 1));
        if (same && na && nb) {
            MPI_Dist_graph_neighbors(a, ia, na, MPI_UNWEIGHTED, oa, na + ia, MPI_UNWEIGHTED);
            MPI_Dist_graph_neighbors(b, ib, nb, MPI_UNWEIGHTED, ob, nb + ib, MPI_UNWEIGHTED);
            same = memcmp(na, nb, sizeof(int) * (size_t)(ia + oa)) == 0;
        }
        MT_CHECK(same, "moore:1 and moore=1 give different neighbours");
        free(na);
        free(nb);
    }
    if (a != MPI_COMM_NULL)
        MPI_Comm_free(&a);
    if (b != MPI_COMM_NULL)
        MPI_Comm_free(&b);
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    named_only = mt_is_mpich();
    MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &gapped);
    MPI_Type_commit(&gapped);
    errors();
    grids();
    MPI_Type_free(&gapped);
    int rc = mt_finish("neighbor_cart");
    MPI_Finalize();
    return rc;
}
