/*
 * The linear schedule of mpitopo's neighbourhood collectives against the
 * MPI library's own MPI_Neighbor_* / MPI_Ineighbor_*, byte for byte, on
 * Cartesian communicators (1-D to 4-D, periodic or not, periodic
 * dimensions of size 1 and 2), graph and dist-graph communicators (random,
 * with duplicate and self edges and zero-degree processes). Receive
 * buffers have gaps and reversed displacements, and start filled with a
 * sentinel, so a write to the wrong place or to an MPI_PROC_NULL slot shows.
 * On Cartesian communicators every block is also checked against what the
 * neighbour sent (block k^1 of the neighbour lands in block k: the MPI-4.0
 * erratum); where a periodic dimension has size 1 or 2 that is the only
 * check of the alltoall family, since MPI libraries differ there.
 * Also: the neighbour queries against MPI_Cart_shift, MPI_Graph_neighbors
 * and MPI_Dist_graph_neighbors, and bad input (no topology, MPI_IN_PLACE,
 * NULL buffers, negative counts, a count mismatch between neighbours).
 */
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL (-1)

enum { AG, AGV, A2A, A2AV, A2AW, NOPS };
static const char *op_name[NOPS] = {"allgather", "allgatherv", "alltoall", "alltoallv",
                                    "alltoallw"};

static int wrank, wsize;

/* Content of element e of the block `rank` sends in its slot `slot`. */
static int value(int rank, int slot, int e)
{
    return rank * 100000 + slot * 100 + e;
}

/* Elements sent by src to dst in the v and w variants: 0..3, the same on
 * both sides (and for every duplicate of the edge). */
static int pair_count(int src, int dst)
{
    return (src * 7 + dst * 3) % 4;
}

static int ag_count(int rank)
{
    return 1 + rank % 3;
}

/* One side of one operation: per-slot counts, displacements (ints) and,
 * for alltoallw, types (strided vectors in odd receive slots). */
typedef struct side {
    int n, total, *counts, *displs, *elems, *stride;
    MPI_Aint *bdispls;
    MPI_Datatype *types;
    int *buf;
} side_t;

static void side_alloc(side_t *s, int n)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    /* MPICH 4.0's MPI_Ineighbor_alltoallw reads its arrays as if sized by
     * the communicator (the trap mpitopo avoids): pad them for the
     * reference calls; mpitopo itself reads only the first n entries. */
    size_t m = (size_t)(n > wsize ? n : wsize);
    s->counts = calloc(m, sizeof(int));
    s->displs = calloc(m, sizeof(int));
    s->elems = calloc(m, sizeof(int));
    s->stride = calloc(m, sizeof(int));
    s->bdispls = calloc(m, sizeof(MPI_Aint));
    s->types = calloc(m, sizeof(MPI_Datatype));
    for (size_t i = 0; i < m; i++)
        s->types[i] = MPI_INT;
}

/* Lay slots out in reverse order with a one-int gap before each. */
static void side_layout(side_t *s)
{
    int at = 1;
    for (int i = s->n - 1; i >= 0; i--) {
        s->displs[i] = at;
        s->bdispls[i] = (MPI_Aint)at * (MPI_Aint)sizeof(int);
        at += (s->elems[i] ? (s->elems[i] - 1) * s->stride[i] + 1 : 0) + 1;
    }
    s->total = at;
    s->buf = malloc((size_t)at * sizeof(int));
    for (int i = 0; i < at; i++)
        s->buf[i] = SENTINEL;
}

static void side_free(side_t *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->types[i] != MPI_INT && s->types[i] != MPI_DATATYPE_NULL)
            MPI_Type_free(&s->types[i]);
    free(s->counts);
    free(s->displs);
    free(s->elems);
    free(s->stride);
    free(s->bdispls);
    free(s->types);
    free(s->buf);
}

/* The topology communicator under test and its lists (from MPI). */
typedef struct topo {
    MPI_Comm comm;
    char label[96];
    int cart, ambiguous; /* Cartesian; a periodic dimension of size <= 2 */
    int skip_a2a;        /* see mpich_duplicates */
    int skip_a2aw;       /* see run_all */
    int rank, indeg, outdeg, *src, *dst;
} topo_t;

/* The sides of the v and w operations for this process (allgatherv has
 * one send block, whatever the out-degree). */
static void setup(const topo_t *t, int op, side_t *s, side_t *r)
{
    side_alloc(s, op == AGV ? t->outdeg > 0 : t->outdeg);
    side_alloc(r, t->indeg);
    for (int i = 0; i < s->n; i++) {
        int c = op == AGV ? ag_count(t->rank)
                : t->dst[i] == MPI_PROC_NULL ? 2 : pair_count(t->rank, t->dst[i]);
        s->counts[i] = s->elems[i] = c;
        s->stride[i] = 1;
        s->types[i] = MPI_INT;
    }
    for (int k = 0; k < t->indeg; k++) {
        int from = t->src[k];
        int c = from == MPI_PROC_NULL ? 2 : op == AGV ? ag_count(from) : pair_count(from, t->rank);
        r->counts[k] = r->elems[k] = c;
        r->stride[k] = 1;
        r->types[k] = MPI_INT;
        if (op == A2AW && k % 2) {
            MPI_Type_vector(c, 1, 2, MPI_INT, &r->types[k]);
            MPI_Type_commit(&r->types[k]);
            r->counts[k] = 1;
            r->stride[k] = 2;
        }
    }
    side_layout(s);
    side_layout(r);
}

/* Allgather needs one recvcount for every neighbour: use the neighbourhood
 * only where all sources send the same count; here, simply 1 element. */
static void setup_scalar(const topo_t *t, int op, side_t *s, side_t *r)
{
    side_alloc(s, t->outdeg);
    side_alloc(r, t->indeg);
    int c = op == AG ? 1 : 3;
    int sn = op == AG ? 1 : t->outdeg;
    s->total = sn * c;
    r->total = t->indeg * c;
    for (int i = 0; i < t->outdeg; i++) {
        s->counts[i] = s->elems[i] = c;
        s->displs[i] = op == AG ? 0 : i * c;
        s->stride[i] = 1;
        s->types[i] = MPI_INT;
    }
    for (int k = 0; k < t->indeg; k++) {
        r->counts[k] = r->elems[k] = c;
        r->displs[k] = k * c;
        r->stride[k] = 1;
        r->types[k] = MPI_INT;
    }
    s->buf = malloc((size_t)(s->total > 0 ? s->total : 1) * sizeof(int));
    r->buf = malloc((size_t)(r->total > 0 ? r->total : 1) * sizeof(int));
    for (int i = 0; i < r->total; i++)
        r->buf[i] = SENTINEL;
}

static void fill_send(const topo_t *t, int op, side_t *s)
{
    int slots = op == AG || op == AGV ? (s->n > 0) : s->n;
    for (int i = 0; i < slots; i++)
        for (int e = 0; e < s->elems[i]; e++)
            s->buf[s->displs[i] + e] = value(t->rank, op == AG || op == AGV ? 0 : i, e);
}

static void make_sides(const topo_t *t, int op, side_t *s, side_t *r)
{
    if (op == AG || op == A2A)
        setup_scalar(t, op, s, r);
    else
        setup(t, op, s, r);
    fill_send(t, op, s);
}

/* Start (or run, when req is NULL) op with MPI (ref) or mpitopo. */
static int call(const topo_t *t, int op, int mine, side_t *s, side_t *r, MPI_Request *mreq,
                mpitopo_request_t *req)
{
    MPI_Comm c = t->comm;
    /* Zero-degree processes pass NULL arrays to mpitopo (side_alloc made
     * them non-NULL; Open MPI 4.1 rejects NULL ones). */
    int sn = s->n || !mine, rn = r->n || !mine;
    const int *sc = sn ? s->counts : NULL, *sd = sn ? s->displs : NULL;
    const int *rc = rn ? r->counts : NULL, *rd = rn ? r->displs : NULL;
    const MPI_Aint *sb = sn ? s->bdispls : NULL, *rb = rn ? r->bdispls : NULL;
    const MPI_Datatype *st = sn ? s->types : NULL, *rt = rn ? r->types : NULL;
    int scount = s->n ? s->counts[0] : 0, rcount = op == AG ? 1 : 3;
    if (op == AG && mine && !req)
        return mpitopo_neighbor_allgather(s->buf, 1, MPI_INT, r->buf, rcount, MPI_INT, c);
    if (op == AG && mine)
        return mpitopo_ineighbor_allgather(s->buf, 1, MPI_INT, r->buf, rcount, MPI_INT, c, req);
    if (op == AG)
        return mreq ? MPI_Ineighbor_allgather(s->buf, 1, MPI_INT, r->buf, rcount, MPI_INT, c, mreq)
                    : MPI_Neighbor_allgather(s->buf, 1, MPI_INT, r->buf, rcount, MPI_INT, c);
    if (op == A2A && mine)
        return req ? mpitopo_ineighbor_alltoall(s->buf, 3, MPI_INT, r->buf, 3, MPI_INT, c, req)
                   : mpitopo_neighbor_alltoall(s->buf, 3, MPI_INT, r->buf, 3, MPI_INT, c);
    if (op == A2A)
        return mreq ? MPI_Ineighbor_alltoall(s->buf, 3, MPI_INT, r->buf, 3, MPI_INT, c, mreq)
                    : MPI_Neighbor_alltoall(s->buf, 3, MPI_INT, r->buf, 3, MPI_INT, c);
    int *sbuf = s->buf + (s->n && op == AGV ? s->displs[0] : 0);
    if (op == AGV && mine)
        return req ? mpitopo_ineighbor_allgatherv(sbuf, scount, MPI_INT, r->buf, rc, rd, MPI_INT,
                                                  c, req)
                   : mpitopo_neighbor_allgatherv(sbuf, scount, MPI_INT, r->buf, rc, rd, MPI_INT,
                                                 c);
    if (op == AGV)
        return mreq ? MPI_Ineighbor_allgatherv(sbuf, scount, MPI_INT, r->buf, rc, rd, MPI_INT, c,
                                               mreq)
                    : MPI_Neighbor_allgatherv(sbuf, scount, MPI_INT, r->buf, rc, rd, MPI_INT, c);
    if (op == A2AV && mine)
        return req ? mpitopo_ineighbor_alltoallv(s->buf, sc, sd, MPI_INT, r->buf, rc, rd, MPI_INT,
                                                 c, req)
                   : mpitopo_neighbor_alltoallv(s->buf, sc, sd, MPI_INT, r->buf, rc, rd, MPI_INT,
                                                c);
    if (op == A2AV)
        return mreq ? MPI_Ineighbor_alltoallv(s->buf, sc, sd, MPI_INT, r->buf, rc, rd, MPI_INT, c,
                                              mreq)
                    : MPI_Neighbor_alltoallv(s->buf, sc, sd, MPI_INT, r->buf, rc, rd, MPI_INT, c);
    if (mine)
        return req ? mpitopo_ineighbor_alltoallw(s->buf, sc, sb, st, r->buf, rc, rb, rt, c, req)
                   : mpitopo_neighbor_alltoallw(s->buf, sc, sb, st, r->buf, rc, rb, rt, c);
    return mreq ? MPI_Ineighbor_alltoallw(s->buf, sc, sb, st, r->buf, rc, rb, rt, c, mreq)
                : MPI_Neighbor_alltoallw(s->buf, sc, sb, st, r->buf, rc, rb, rt, c);
}

/* Cartesian: block k holds what neighbour src[k] sent in its slot k^1. */
static void check_cart(const topo_t *t, int op, const side_t *r, const char *what)
{
    for (int k = 0; k < t->indeg; k++) {
        int from = t->src[k], slot = op == AG || op == AGV ? 0 : k ^ 1;
        for (int e = 0; e < r->elems[k]; e++) {
            int got = r->buf[r->displs[k] + e * r->stride[k]];
            int want = from == MPI_PROC_NULL ? SENTINEL : value(from, slot, e);
            if (!MT_CHECK(got == want, "%s: %s %s: block %d element %d = %d, expected %d",
                          t->label, op_name[op], what, k, e, got, want))
                return;
        }
    }
}

/* Run op with mpitopo and with MPI, blocking or not, and compare. */
static void compare(const topo_t *t, int op, int nonblocking)
{
    side_t s, r, s2, r2;
    make_sides(t, op, &s, &r);
    make_sides(t, op, &s2, &r2);
    const char *what = nonblocking ? "nonblocking" : "blocking";
    mpitopo_request_t req = MPITOPO_REQUEST_NULL;
    MPI_Request mreq = MPI_REQUEST_NULL;
    int rc = call(t, op, 1, &s, &r, NULL, nonblocking ? &req : NULL);
    MT_CHECK(rc == MPITOPO_SUCCESS, "%s: mpitopo %s %s: %s", t->label, op_name[op], what,
             mpitopo_last_error());
    /* The datatypes may go as soon as the starting call returns. */
    if (nonblocking) {
        for (int k = 0; k < r.n; k++)
            if (r.types[k] != MPI_INT)
                MPI_Type_free(&r.types[k]);
        int flag = 0;
        for (int i = 0; i < 3 && rc == MPITOPO_SUCCESS && !flag; i++)
            rc = mpitopo_test(&req, &flag);
        if (rc == MPITOPO_SUCCESS && !flag)
            rc = mpitopo_wait(&req);
        MT_CHECK(rc == MPITOPO_SUCCESS && req == MPITOPO_REQUEST_NULL, "%s: %s %s completion: %s",
                 t->label, op_name[op], what, mpitopo_last_error());
        for (int k = 0; k < r.n; k++) /* the reference call needs them again */
            if (k % 2 && op == A2AW) {
                MPI_Type_vector(r.elems[k], 1, 2, MPI_INT, &r.types[k]);
                MPI_Type_commit(&r.types[k]);
            }
    }
    MPI_Datatype *rt = r2.types;
    r2.types = r.types; /* same receive types for the reference */
    int mpi_nb = nonblocking;
    rc = t->skip_a2aw && op == A2AW ? MPI_SUCCESS
                                    : call(t, op, 0, &s2, &r2, mpi_nb ? &mreq : NULL, NULL);
    if (mpi_nb && rc == MPI_SUCCESS && mreq != MPI_REQUEST_NULL)
        rc = MPI_Wait(&mreq, MPI_STATUS_IGNORE);
    r2.types = rt;
    MT_CHECK(rc == MPI_SUCCESS, "%s: MPI %s %s failed: %d", t->label, op_name[op], what, rc);
    if (t->cart)
        check_cart(t, op, &r, what);
    if (!(t->ambiguous && op >= A2A) && !(t->skip_a2a && op == A2A) && !(t->skip_a2aw && op == A2AW) && r.total)
        MT_CHECK(!memcmp(r.buf, r2.buf, (size_t)r.total * sizeof(int)),
                 "%s: %s %s: receive buffer differs from MPI's", t->label, op_name[op], what);
    side_free(&s);
    side_free(&r);
    side_free(&s2);
    side_free(&r2);
}

/* Several nonblocking operations in flight at once, completed in reverse. */
static void overlap(const topo_t *t)
{
    side_t s[NOPS], r[NOPS], s2[NOPS], r2[NOPS];
    mpitopo_request_t req[NOPS];
    for (int op = 0; op < NOPS; op++) {
        make_sides(t, op, &s[op], &r[op]);
        make_sides(t, op, &s2[op], &r2[op]);
        int rc = call(t, op, 1, &s[op], &r[op], NULL, &req[op]);
        MT_CHECK(rc == MPITOPO_SUCCESS, "%s: overlapping %s: %s", t->label, op_name[op],
                 mpitopo_last_error());
    }
    for (int op = NOPS - 1; op >= 0; op--)
        MT_CHECK_RC(mpitopo_wait(&req[op]));
    for (int op = 0; op < NOPS; op++) {
        MPI_Datatype *rt = r2[op].types;
        r2[op].types = r[op].types;
        if (!(t->skip_a2aw && op == A2AW))
            MT_CHECK(call(t, op, 0, &s2[op], &r2[op], NULL, NULL) == MPI_SUCCESS, "MPI %s",
                     op_name[op]);
        r2[op].types = rt;
        if (!(t->ambiguous && op >= A2A) && !(t->skip_a2a && op == A2A) && !(t->skip_a2aw && op == A2AW) && r[op].total)
            MT_CHECK(!memcmp(r[op].buf, r2[op].buf, (size_t)r[op].total * sizeof(int)),
                     "%s: overlapping %s differs from MPI's", t->label, op_name[op]);
        side_free(&s[op]);
        side_free(&r[op]);
        side_free(&s2[op]);
        side_free(&r2[op]);
    }
}

static void check_queries(const topo_t *t)
{
    int in = -1, out = -1;
    if (!MT_CHECK_RC(mpitopo_comm_neighbors_count(t->comm, &in, &out)))
        return;
    MT_CHECK(in == t->indeg && out == t->outdeg, "%s: degrees %d,%d, MPI says %d,%d", t->label,
             in, out, t->indeg, t->outdeg);
    int *src = malloc((size_t)(in + 1) * sizeof(int)), *dst = malloc((size_t)(out + 1) * sizeof(int));
    if (MT_CHECK_RC(mpitopo_comm_neighbors(t->comm, in, src, out, dst)))
        MT_CHECK(!memcmp(src, t->src, (size_t)in * sizeof(int)) &&
                     !memcmp(dst, t->dst, (size_t)out * sizeof(int)),
                 "%s: neighbour lists differ from MPI's", t->label);
    free(src);
    free(dst);
}

/* MPICH 4.0's MPI_(I)neighbor_alltoall delivers the blocks of a duplicated
 * neighbour in reverse order (Open MPI, MPICH's other calls and mpitopo
 * match the k-th send with the k-th receive, MPI's non-overtaking order):
 * there, alltoall is not compared with MPI's. */
static int mpich_duplicates(const topo_t *t)
{
    if (t->cart || !mt_is_mpich())
        return 0;
    for (int i = 0; i < t->indeg; i++)
        for (int j = 0; j < i; j++)
            if (t->src[i] == t->src[j])
                return 1;
    for (int i = 0; i < t->outdeg; i++)
        for (int j = 0; j < i; j++)
            if (t->dst[i] == t->dst[j])
                return 1;
    return 0;
}

static void run_all(topo_t *t)
{
    if (t->comm == MPI_COMM_NULL)
        return;
    t->skip_a2a = mpich_duplicates(t);
    /* MPICH 4.0's MPI_(I)neighbor_alltoallw reads out of bounds (valgrind:
     * inside its own schedule) on graph and dist-graph communicators: no
     * reference there; Open MPI runs cover it. */
    t->skip_a2aw = !t->cart && mt_is_mpich();
    MPI_Comm_rank(t->comm, &t->rank);
    check_queries(t);
    /* The first call on the communicator is a nonblocking alltoallw whose
     * derived datatypes are freed before the private duplicate is ready. */
    for (int op = NOPS - 1; op >= 0; op--)
        compare(t, op, 1);
    for (int op = 0; op < NOPS; op++)
        compare(t, op, 0);
    overlap(t);
}

static void topo_free(topo_t *t)
{
    if (t->comm != MPI_COMM_NULL)
        MPI_Comm_free(&t->comm);
    free(t->src);
    free(t->dst);
}

static void cart_case(int ndims, const int *dims, const int *periods)
{
    topo_t t = {.cart = 1};
    int n = snprintf(t.label, sizeof t.label, "cart");
    int prod = 1;
    for (int d = 0; d < ndims; d++) {
        prod *= dims[d];
        n += snprintf(t.label + n, sizeof t.label - (size_t)n, "%s%d%s", d ? "x" : " ", dims[d],
                      periods[d] ? "p" : "");
        t.ambiguous |= periods[d] && dims[d] <= 2;
    }
    if (prod > wsize)
        return;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &t.comm);
    if (t.comm != MPI_COMM_NULL) {
        t.indeg = t.outdeg = 2 * ndims;
        t.src = malloc((size_t)(2 * ndims + 1) * sizeof(int));
        t.dst = malloc((size_t)(2 * ndims + 1) * sizeof(int));
        for (int d = 0; d < ndims; d++) {
            MPI_Cart_shift(t.comm, d, 1, &t.src[2 * d], &t.src[2 * d + 1]);
            t.dst[2 * d] = t.src[2 * d];
            t.dst[2 * d + 1] = t.src[2 * d + 1];
        }
    }
    run_all(&t);
    topo_free(&t);
}

static void cart_cases(void)
{
    int p1[4] = {1, 1, 1, 1}, p0[4] = {0, 0, 0, 0}, pm[4] = {1, 0, 1, 0};
    for (int nd = 1; nd <= 4; nd++) {
        int dims[4] = {0, 0, 0, 0};
        MPI_Dims_create(wsize, nd, dims);
        cart_case(nd, dims, p1);
        cart_case(nd, dims, p0);
        cart_case(nd, dims, pm);
    }
    int one[4] = {1, 1, 1, 1}, two[4] = {2, 1, 2, 1}, mix[4] = {2, 2, 1, 1};
    cart_case(1, one, p1);
    cart_case(1, two, p1);
    cart_case(2, two, p1);
    cart_case(4, two, p1);
    cart_case(4, mix, pm);
    cart_case(3, mix, p0);
    int line[1] = {wsize > 1 ? wsize - 1 : 1};
    cart_case(1, line, p1); /* the last process is left out */
}

/* A random symmetric multigraph, the same on every process: edges between
 * random pairs (both directions), some twice, some self loops; process 0
 * (and 2 when size > 4) has no edge. */
static void graph_case(unsigned seed)
{
    int m = 2 * wsize;
    int *ea = malloc((size_t)(m + 2) * sizeof(int)), *eb = malloc((size_t)(m + 2) * sizeof(int));
    int ne = 0;
    srand(seed);
    for (int i = 0; i < m; i++) {
        int a = rand() % wsize, b = rand() % wsize;
        if (a == 0 || b == 0 || (wsize > 4 && (a == 2 || b == 2)))
            continue;
        ea[ne] = a;
        eb[ne++] = b;
        if (i % 5 == 0) { /* a duplicate */
            ea[ne] = a;
            eb[ne++] = b;
        }
    }
    int *index = calloc((size_t)wsize, sizeof(int)), *edges = malloc((size_t)(2 * ne + 1) * sizeof(int));
    int *deg = calloc((size_t)wsize, sizeof(int));
    for (int i = 0; i < ne; i++) {
        deg[ea[i]]++;
        if (ea[i] != eb[i])
            deg[eb[i]]++;
    }
    for (int v = 0, acc = 0; v < wsize; v++)
        index[v] = acc += deg[v];
    int *fill = calloc((size_t)wsize, sizeof(int));
    for (int i = 0; i < ne; i++) {
        int a = ea[i], b = eb[i];
        edges[(a ? index[a - 1] : 0) + fill[a]++] = b;
        if (a != b)
            edges[(b ? index[b - 1] : 0) + fill[b]++] = a;
    }
    topo_t t = {0};
    snprintf(t.label, sizeof t.label, "graph seed %u", seed);
    MPI_Graph_create(MPI_COMM_WORLD, wsize, index, edges, 0, &t.comm);
    int r;
    MPI_Comm_rank(t.comm, &r);
    MPI_Graph_neighbors_count(t.comm, r, &t.indeg);
    t.outdeg = t.indeg;
    t.src = malloc((size_t)(t.indeg + 1) * sizeof(int));
    t.dst = malloc((size_t)(t.indeg + 1) * sizeof(int));
    MPI_Graph_neighbors(t.comm, r, t.indeg, t.src);
    memcpy(t.dst, t.src, (size_t)t.indeg * sizeof(int));
    run_all(&t);
    topo_free(&t);
    free(ea);
    free(eb);
    free(index);
    free(edges);
    free(deg);
    free(fill);
}

/* A random directed multigraph (duplicates, self edges; process 0 isolated),
 * as an adjacent dist-graph (weighted or not) or through MPI_Dist_graph_create
 * (each process names some of the edges, so MPI picks the list order). */
static void dist_graph_case(unsigned seed, int adjacent, int weighted)
{
    int m = 3 * wsize, ne = 0;
    int *ea = malloc((size_t)(2 * m) * sizeof(int)), *eb = malloc((size_t)(2 * m) * sizeof(int));
    srand(seed);
    for (int i = 0; i < m; i++) {
        int a = rand() % wsize, b = i % 7 == 0 ? a : rand() % wsize;
        if (a == 0 || b == 0)
            continue;
        ea[ne] = a;
        eb[ne++] = b;
        if (i % 4 == 0) {
            ea[ne] = a;
            eb[ne++] = b;
        }
    }
    topo_t t = {0};
    snprintf(t.label, sizeof t.label, "dist-graph seed %u%s%s", seed,
             adjacent ? " adjacent" : " general", weighted ? " weighted" : "");
    int *in = malloc((size_t)(ne + 1) * sizeof(int)), *out = malloc((size_t)(ne + 1) * sizeof(int));
    int *w = malloc((size_t)(ne + 1) * sizeof(int)), nin = 0, nout = 0;
    for (int i = 0; i < ne; i++) {
        w[i] = 1 + i % 3;
        if (eb[i] == wrank)
            in[nin++] = ea[i];
        if (ea[i] == wrank)
            out[nout++] = eb[i];
    }
    if (adjacent) {
        const int *sw = weighted ? (nin ? w : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED;
        const int *dw = weighted ? (nout ? w : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in, sw, nout, out, dw, MPI_INFO_NULL,
                                       0, &t.comm);
    } else {
        /* Process p names the edges i with i % size == p. */
        int n = 0, *srcs = malloc((size_t)(ne + 1) * sizeof(int));
        int *degs = malloc((size_t)(ne + 1) * sizeof(int)), *dsts = malloc((size_t)(ne + 1) * sizeof(int));
        for (int i = wrank; i < ne; i += wsize) {
            srcs[n] = ea[i];
            degs[n] = 1;
            dsts[n++] = eb[i];
        }
        MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL,
                              0, &t.comm);
        free(srcs);
        free(degs);
        free(dsts);
    }
    int wt;
    MPI_Dist_graph_neighbors_count(t.comm, &t.indeg, &t.outdeg, &wt);
    t.src = malloc((size_t)(t.indeg + 1) * sizeof(int));
    t.dst = malloc((size_t)(t.outdeg + 1) * sizeof(int));
    int *sw = malloc((size_t)(t.indeg + 1) * sizeof(int)), *dw = malloc((size_t)(t.outdeg + 1) * sizeof(int));
    MPI_Dist_graph_neighbors(t.comm, t.indeg, t.src, sw, t.outdeg, t.dst, dw);
    run_all(&t);
    topo_free(&t);
    free(sw);
    free(dw);
    free(in);
    free(out);
    free(w);
    free(ea);
    free(eb);
}

static void expect_error(int rc, int want, const char *what, const char *mention)
{
    const char *msg = mpitopo_last_error();
    MT_CHECK(rc == want && strstr(msg, mention), "%s returned %d (%s), expected %d, message \"%s\" "
             "should mention \"%s\"", what, rc, mpitopo_err_name(rc), want, msg, mention);
}

static void bad_input(void)
{
    int buf[8] = {0}, rbuf[8];
    int in, out, src[2], dst[2];
    mpitopo_request_t req = MPITOPO_REQUEST_NULL;
    MPI_Comm w = MPI_COMM_WORLD, ring;
    expect_error(mpitopo_comm_neighbors_count(w, &in, &out), MPI_ERR_TOPOLOGY,
                 "neighbors_count(MPI_COMM_WORLD)", "comm");
    expect_error(mpitopo_comm_neighbors(w, 2, src, 2, dst), MPI_ERR_TOPOLOGY,
                 "neighbors(MPI_COMM_WORLD)", "topology");
    expect_error(mpitopo_neighbor_allgather(buf, 1, MPI_INT, rbuf, 1, MPI_INT, w),
                 MPI_ERR_TOPOLOGY, "allgather(MPI_COMM_WORLD)", "comm");
    expect_error(mpitopo_ineighbor_alltoall(buf, 1, MPI_INT, rbuf, 1, MPI_INT, w, &req),
                 MPI_ERR_TOPOLOGY, "ialltoall(MPI_COMM_WORLD)", "comm");
    MT_CHECK(req == MPITOPO_REQUEST_NULL, "request set after an error");
    expect_error(mpitopo_comm_neighbors_count(MPI_COMM_NULL, &in, &out), MPITOPO_ERR_ARG,
                 "neighbors_count(MPI_COMM_NULL)", "MPI_COMM_NULL");

    /* A periodic ring: every process has degree 2, so every process sees
     * the same error and nobody is left waiting. */
    int dims = wsize, period = 1;
    MPI_Cart_create(w, 1, &dims, &period, 0, &ring);
    expect_error(mpitopo_comm_neighbors(ring, -1, src, 2, dst), MPITOPO_ERR_ARG,
                 "neighbors(maxindegree -1)", "maxindegree = -1");
    expect_error(mpitopo_neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, rbuf, 1, MPI_INT, ring),
                 MPITOPO_ERR_ARG, "alltoall(MPI_IN_PLACE)", "sendbuf = MPI_IN_PLACE");
    expect_error(mpitopo_ineighbor_allgather(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, ring, &req),
                 MPITOPO_ERR_ARG, "iallgather(recvbuf MPI_IN_PLACE)", "recvbuf = MPI_IN_PLACE");
    expect_error(mpitopo_neighbor_allgather(NULL, 2, MPI_INT, rbuf, 2, MPI_INT, ring),
                 MPITOPO_ERR_ARG, "allgather(NULL sendbuf)", "sendbuf = NULL");
    expect_error(mpitopo_neighbor_alltoall(buf, -3, MPI_INT, rbuf, 1, MPI_INT, ring),
                 MPITOPO_ERR_ARG, "alltoall(sendcount -3)", "sendcount = -3");
    int counts[2] = {1, -1}, displs[2] = {0, 1};
    expect_error(mpitopo_neighbor_alltoallv(buf, counts, displs, MPI_INT, rbuf, counts, displs,
                                            MPI_INT, ring),
                 MPITOPO_ERR_ARG, "alltoallv(negative count)", "sendcounts[1] = -1");
    expect_error(mpitopo_neighbor_alltoallv(buf, NULL, displs, MPI_INT, rbuf, counts, displs,
                                            MPI_INT, ring),
                 MPITOPO_ERR_ARG, "alltoallv(NULL sendcounts)", "sendcounts = NULL");
    int two[2] = {1, 1};
    MPI_Aint bd[2] = {0, 4};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DATATYPE_NULL};
    expect_error(mpitopo_neighbor_alltoallw(buf, two, bd, ty, rbuf, two, bd, ty, ring),
                 MPITOPO_ERR_ARG, "alltoallw(MPI_DATATYPE_NULL)", "sendtypes[1] = MPI_DATATYPE_NULL");
    expect_error(mpitopo_neighbor_allgatherv(buf, 1, MPI_INT, NULL, two, displs, MPI_INT, ring),
                 MPITOPO_ERR_ARG, "allgatherv(NULL recvbuf)", "recvbuf = NULL");
    expect_error(mpitopo_wait(NULL), MPITOPO_ERR_ARG, "wait(NULL)", "request = NULL");
    MT_CHECK_RC(mpitopo_wait(&req)); /* the null request */
    /* A NULL buffer with zero counts is fine. */
    MT_CHECK_RC(mpitopo_neighbor_allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, ring));
    /* Every process sends 2 ints and expects 1: an MPI error, no hang. (On
     * one process Open MPI 4.1 does not report truncation of a message to
     * self, so only the absence of a hang is checked there.)
     * MPICH 4.0 raises errors of MPI_Waitall on MPI_COMM_WORLD's handler,
     * whatever the request's communicator: make it return them. */
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    int rc = mpitopo_neighbor_alltoall(buf, 2, MPI_INT, rbuf, 1, MPI_INT, ring);
    MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL);
    int cls = -1;
    if (rc > 0)
        MPI_Error_class(rc, &cls);
    /* mpitopo's schedules name the neighbour; auto may hand the call to
     * the host MPI, whose message is its own. */
    const char *sched = mt_getenv("MPITOPO_NEIGHBOR");
    int named = !sched || strcmp(sched, "auto") == 0 || strcmp(sched, "mpi") == 0 ||
                strstr(mpitopo_last_error(), "neighbour rank");
    /* MPICH's own neighbourhood collectives do not report it. */
    int host = !sched || strcmp(sched, "auto") == 0 || strcmp(sched, "mpi") == 0;
    if (wsize > 1 && !(host && mt_is_mpich() && rc == MPI_SUCCESS))
        MT_CHECK(cls == MPI_ERR_TRUNCATE && named,
                 "count mismatch: rc %d class %d, message \"%s\"", rc, cls, mpitopo_last_error());
    /* And the communicator still works. */
    MT_CHECK_RC(mpitopo_neighbor_alltoall(buf, 1, MPI_INT, rbuf, 1, MPI_INT, ring));
    MPI_Comm_free(&ring);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    cart_cases();
    graph_case(1);
    graph_case(7);
    dist_graph_case(3, 1, 0);
    dist_graph_case(5, 1, 1);
    dist_graph_case(11, 0, 0);
    bad_input();
    int code = mt_finish("neighbor_linear");
    MPI_Finalize();
    return code;
}
