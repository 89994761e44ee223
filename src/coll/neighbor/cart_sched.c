/*
 * Stencils on Cartesian grids, and the dimension-wise schedule of the
 * neighbourhood collectives on them.
 *
 * mpitopo_cart_stencil_create turns a Cartesian communicator and a Moore
 * or star stencil into a dist-graph communicator and caches the grid on it
 * (an attribute; MPI_Comm_dup copies it, as the topology is copied). The
 * schedule then moves every block to its destination one dimension at a
 * time: in round k (k = 0 .. d-1) a block travelling by offset o moves by
 * o_k along dimension k, so a process sends at most 2R messages per round,
 * one to each process at distance 1..R along dimension k, each carrying
 * every block that moves that far that way — d rounds of at most 2R
 * messages instead of (2R+1)^d - 1 messages for a Moore neighbourhood.
 *
 * Who sends what is computed locally, without communicating: both ends of
 * a message enumerate its blocks from the sender's coordinates. In round
 * k, the message from s to s + delta e_k carries, for each offset j in
 * stencil order with o_j[k] = delta, the block of origin
 * y = s - (o_j[0..k-1], 0, ...), if y is on the grid and its destination
 * y + o_j too (so nothing travels towards a place off an open border).
 * alltoall moves one block per offset. allgather sends one block per
 * origin: offsets that agree on o[0..k] share it in round k (the classic
 * halo exchange with corners: a 2-D Moore allgather of radius 1 sends 4
 * messages, 1 + 1 + 3 + 3 blocks).
 *
 * Every message is packed: a process packs its own blocks (MPI_Pack) and
 * moves received ones into the message of the next round, then unpacks
 * what arrived for itself after the last round. For allgather and
 * alltoall block sizes are those of the two sides (equal at both ends, as
 * MPI requires), so the whole layout is fixed when the schedule is built.
 * allgatherv, alltoallv and alltoallw move the same blocks in the same
 * messages (allgatherv one per origin, as allgather), but a process
 * forwarding a block does not know its size (the origin's counts and
 * types): their messages carry a header of block sizes, are received at
 * whatever size they have (MPITOPO__OP_RECV_ANY) and assembled by a
 * runtime step once the previous round's data is in, as message combining
 * does; see "The v and w forms" below.
 *
 * The schedule needs every offset to reach a distinct process: periodic
 * dimensions of at least 2R + 1 processes (shorter ones fold two offsets
 * onto one process, where MPI's matching order, not geometry, decides
 * which block lands where). Otherwise the collectives run linear.
 */
#include "coll/coll_internal.h"
#include "pattern/pattern_internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct mpitopo__stencil {
    int ndims, radius, star;
    int k;            /* offsets */
    int distinct;     /* every offset reaches a distinct process */
    int *dims, *periods, *coords;
    int *off;         /* k * ndims: offset j at off + j * ndims */
    int *out_slot;    /* k: send block of offset j, -1 off the grid */
    int *in_slot;     /* k: receive block of offset j, -1 off the grid */
};


void mpitopo__stencil_class(const struct mpitopo__stencil *s, char *out, size_t len)
{
    snprintf(out, len, "stencil:%dd:r%d:%s", s->ndims, s->radius, s->star ? "star" : "moore");
}

/* ---- The stencil ---- */

static struct mpitopo__stencil *stencil_alloc(int ndims, int k)
{
    size_t ints = 3 * (size_t)ndims + (size_t)k * ndims + 2 * (size_t)k + 1;
    struct mpitopo__stencil *s = mpitopo__calloc(1, sizeof *s + ints * sizeof(int));
    if (!s)
        return NULL;
    int *p = (int *)(s + 1);
    s->ndims = ndims;
    s->k = k;
    s->dims = p;
    s->periods = p + ndims;
    s->coords = p + 2 * ndims;
    s->off = p + 3 * ndims;
    s->out_slot = s->off + (size_t)k * ndims;
    s->in_slot = s->out_slot + k;
    return s;
}

static size_t stencil_bytes(const struct mpitopo__stencil *s)
{
    return sizeof *s +
           (3 * (size_t)s->ndims + (size_t)s->k * s->ndims + 2 * (size_t)s->k + 1) * sizeof(int);
}

static struct mpitopo__stencil *stencil_copy(const struct mpitopo__stencil *from)
{
    struct mpitopo__stencil *s = stencil_alloc(from->ndims, from->k);
    if (!s)
        return NULL;
    int *p = s->dims;
    memcpy(s, from, stencil_bytes(from));
    ptrdiff_t shift = p - from->dims;
    s->dims += shift;
    s->periods += shift;
    s->coords += shift;
    s->off += shift;
    s->out_slot += shift;
    s->in_slot += shift;
    return s;
}

void mpitopo__stencil_free(struct mpitopo__stencil *s)
{
    mpitopo__free(s);
}

/* v wrapped onto the grid in place; 0 when it leaves an open dimension. */
static int on_grid(const struct mpitopo__stencil *s, int *v)
{
    for (int d = 0; d < s->ndims; d++) {
        if (v[d] >= 0 && v[d] < s->dims[d])
            continue;
        if (!s->periods[d])
            return 0;
        v[d] = (v[d] % s->dims[d] + s->dims[d]) % s->dims[d];
    }
    return 1;
}

/* Row-major rank of grid coordinates v (MPI's Cartesian numbering). */
static int rank_of(const struct mpitopo__stencil *s, const int *v)
{
    int r = 0;
    for (int d = 0; d < s->ndims; d++)
        r = r * s->dims[d] + v[d];
    return r;
}

/* ---- The attribute ---- */

static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;
static int stencil_keyval = MPI_KEYVAL_INVALID;
static int cleanup_keyval = MPI_KEYVAL_INVALID;

static int copy_cb(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    struct mpitopo__stencil *s = stencil_copy(in);
    *(void **)out = s;
    *flag = s != NULL;
    return s ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int delete_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    mpitopo__stencil_free(value);
    return MPI_SUCCESS;
}

/* At MPI_Finalize (our attribute on MPI_COMM_SELF goes first): free the
 * keyvals. */
static int cleanup_cb(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)value;
    (void)extra;
    pthread_mutex_lock(&key_lock);
    if (stencil_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&stencil_keyval);
    int k = keyval;
    PMPI_Comm_free_keyval(&k);
    cleanup_keyval = MPI_KEYVAL_INVALID;
    pthread_mutex_unlock(&key_lock);
    return MPI_SUCCESS;
}

static int keyval(int *out)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&key_lock);
    if (cleanup_keyval == MPI_KEYVAL_INVALID) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cleanup_cb, &cleanup_keyval, NULL);
        if (rc == MPI_SUCCESS && (rc = PMPI_Comm_set_attr(MPI_COMM_SELF, cleanup_keyval, NULL)))
            PMPI_Comm_free_keyval(&cleanup_keyval);
        if (rc != MPI_SUCCESS)
            cleanup_keyval = MPI_KEYVAL_INVALID;
    }
    if (rc == MPI_SUCCESS && stencil_keyval == MPI_KEYVAL_INVALID)
        rc = PMPI_Comm_create_keyval(copy_cb, delete_cb, &stencil_keyval, NULL);
    *out = stencil_keyval;
    pthread_mutex_unlock(&key_lock);
    return rc;
}

int mpitopo__stencil_of(MPI_Comm comm, struct mpitopo__stencil **out, const char *func)
{
    *out = NULL;
    pthread_mutex_lock(&key_lock);
    int k = stencil_keyval;
    pthread_mutex_unlock(&key_lock);
    if (k == MPI_KEYVAL_INVALID)
        return MPI_SUCCESS; /* no stencil was ever made */
    struct mpitopo__stencil *s = NULL;
    int found = 0, rc = PMPI_Comm_get_attr(comm, k, &s, &found);
    if (rc != MPI_SUCCESS || !found)
        return rc;
    *out = stencil_copy(s);
    return *out ? MPI_SUCCESS
                : MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a stencil");
}

/* ---- mpitopo_cart_stencil_create ---- */

static int parse_stencil(const char *text, int *star, int *radius, const char *func)
{
    long long r;
    int moore;
    if (!text)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "stencil = NULL");
    int bad = mpitopo__stencil_parse(text, strlen(text), &moore, &r);
    if (bad == -1)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "stencil = \"%s\" is not moore=R or star=R",
                               text);
    if (bad || r < 1 || r > 1 << 20)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                                 "stencil = \"%s\": the radius must be an integer >= 1", text);
    *star = !moore;
    *radius = (int)r;
    return MPITOPO_SUCCESS;
}

/* The offsets in lexicographic order, dimension 0 slowest. */
static void list_offsets(struct mpitopo__stencil *s)
{
    int d = s->ndims, r = s->radius, j = 0, v[MPITOPO_MAX_DIMS];
    if (s->star) {
        /* Lexicographic: along dimension 0 negative ones first, ..., then
         * along the last dimension, then positive ones in reverse. */
        for (int e = 0; e < d; e++)
            for (int x = -r; x <= -1; x++, j++)
                for (int f = 0; f < d; f++)
                    s->off[j * d + f] = f == e ? x : 0;
        for (int e = d - 1; e >= 0; e--)
            for (int x = 1; x <= r; x++, j++)
                for (int f = 0; f < d; f++)
                    s->off[j * d + f] = f == e ? x : 0;
        return;
    }
    for (int f = 0; f < d; f++)
        v[f] = -r;
    for (;;) {
        int zero = 1;
        for (int f = 0; f < d; f++)
            zero &= v[f] == 0;
        if (!zero) {
            memcpy(s->off + (size_t)j * d, v, sizeof(int) * (size_t)d);
            j++;
        }
        int f = d - 1;
        while (f >= 0 && v[f] == r)
            v[f--] = -r;
        if (f < 0)
            break;
        v[f]++;
    }
}

/* Slots of the present offsets, the lists of the dist-graph, and whether
 * offsets reach distinct processes. */
static void place(struct mpitopo__stencil *s, int *sources, int *dests, int *in, int *out)
{
    int v[MPITOPO_MAX_DIMS], d = s->ndims;
    *in = *out = 0;
    for (int j = 0; j < s->k; j++) {
        const int *o = s->off + (size_t)j * d;
        for (int f = 0; f < d; f++)
            v[f] = s->coords[f] + o[f];
        s->out_slot[j] = on_grid(s, v) ? (*out)++ : -1;
        if (s->out_slot[j] >= 0)
            dests[s->out_slot[j]] = rank_of(s, v);
        for (int f = 0; f < d; f++)
            v[f] = s->coords[f] - o[f];
        s->in_slot[j] = on_grid(s, v) ? (*in)++ : -1;
        if (s->in_slot[j] >= 0)
            sources[s->in_slot[j]] = rank_of(s, v);
    }
    s->distinct = 1;
    for (int f = 0; f < d; f++)
        if (s->periods[f] && s->dims[f] < 2 * s->radius + 1)
            s->distinct = 0;
}

/* This process's view of a stencil creation, before the agreement. */
typedef struct stencil_request {
    int star, radius, ndims;
    long long k;                  /* offsets */
    struct mpitopo__stencil *s;   /* allocated for k offsets */
    int *lists;                   /* 2k + 1 ints */
} stencil_request_t;

/* The local checks (that may fail on some processes only) and the
 * allocations, whose failure is agreed on like a bad argument. */
static int stencil_prepare(MPI_Comm cart, const char *stencil, MPI_Comm *newcomm, stencil_request_t *q,
                           const char *func)
{
    int kind = MPI_UNDEFINED;
    if (!newcomm)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "newcomm = NULL");
    int rc = parse_stencil(stencil, &q->star, &q->radius, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if ((rc = PMPI_Topo_test(cart, &kind)) != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    if (kind != MPI_CART)
        return MPITOPO_FAIL_AS(MPI_ERR_TOPOLOGY, func,
                                 "cart is not a Cartesian communicator (MPI_Topo_test gives %d)", kind);
    if ((rc = PMPI_Cartdim_get(cart, &q->ndims)) != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    if (q->ndims > MPITOPO_MAX_DIMS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, func,
                                 "cart has %d dimensions; stencils support at most %d", q->ndims,
                                 MPITOPO_MAX_DIMS);
    if ((rc = mpitopo__stencil_check(func, "stencil", stencil, q->ndims, !q->star, q->radius)) !=
        MPITOPO_SUCCESS)
        return rc;
    q->k = mpitopo__stencil_offsets(q->ndims, !q->star, q->radius);
    q->s = stencil_alloc(q->ndims, (int)q->k);
    q->lists = mpitopo__malloc_array(2 * (size_t)q->k + 1, sizeof(int));
    if (!q->s || !q->lists)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %lld offsets", q->k);
    q->s->star = q->star;
    q->s->radius = q->radius;
    return MPITOPO_SUCCESS;
}

/* Every process checks its own arguments, then one allreduce
 * (mpitopo__agree) makes them fail together, or agree on the stencil. */
static int stencil_agree(MPI_Comm cart, const char *stencil, MPI_Comm *newcomm, stencil_request_t *q,
                         const char *func)
{
    int rc = mpitopo__check_mpi(func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__check_intracomm(cart, func);
    mpitopo__agree_t a = {.func = func, .comm = cart};
    if (rc == MPITOPO_SUCCESS)
        rc = PMPI_Comm_rank(cart, &a.rank);
    if (rc != MPITOPO_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    int local = stencil_prepare(cart, stencil, newcomm, q, func);
    mpitopo__agree_arg(&a, "stencil (the kind: star 1, moore 0)", q->star);
    mpitopo__agree_arg(&a, "stencil (the radius)", q->radius);
    return mpitopo__agree(&a, local);
}

int mpitopo_cart_stencil_create(MPI_Comm cart, const char *stencil, MPI_Info info,
                                MPI_Comm *newcomm)
{
    const char *func = __func__;
    int key;
    stencil_request_t q = {0};
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    int rc = stencil_agree(cart, stencil, newcomm, &q, func);
    struct mpitopo__stencil *s = q.s;
    long long k = q.k;
    if (rc == MPITOPO_SUCCESS)
        rc = q.ndims > 0 ? PMPI_Cart_get(cart, q.ndims, s->dims, s->periods, s->coords) : MPI_SUCCESS;
    int in = 0, out = 0;
    if (rc == MPI_SUCCESS) {
        list_offsets(s);
        place(s, q.lists, q.lists + k, &in, &out);
        rc = mpitopo_dist_graph_create_adjacent(cart, in, q.lists, MPI_UNWEIGHTED, out, q.lists + k,
                                                MPI_UNWEIGHTED, info, 0, newcomm);
    } else {
        rc = mpitopo__mpi_result(func, rc);
    }
    mpitopo__free(q.lists);
    if (rc == MPITOPO_SUCCESS) {
        rc = keyval(&key);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Comm_set_attr(*newcomm, key, s);
        if (rc != MPI_SUCCESS) {
            rc = mpitopo__mpi_result(func, rc);
            PMPI_Comm_free(newcomm);
        }
    }
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__stencil_free(s);
        return rc;
    }
    if (mpitopo__verbose() >= 2)
        mpitopo__log(2, "cart_stencil_create: %s on %d dimensions, %lld offsets%s", stencil,
                     q.ndims, k,
                     s->distinct ? "" : " (a periodic dimension is shorter than 2R + 1: "
                                        "the collectives run linear)");
    return MPITOPO_SUCCESS;
}

/* ---- The schedule ---- */

int mpitopo__cart_applies(const mpitopo__nbr_t *n, mpitopo__opkind_t op)
{
    return n->stencil && n->stencil->distinct && op >= MPITOPO__OPK_ALLGATHER &&
           op < MPITOPO__OPK_COUNT;
}

/* Messages per process: 2R per dimension against one per offset. */
int mpitopo__cart_gains(const mpitopo__nbr_t *n)
{
    const struct mpitopo__stencil *s = n->stencil;
    return s && 2LL * s->radius * s->ndims < s->k;
}

void mpitopo__cart_cost(const mpitopo__nbr_t *n, int alltoall, int *offsets, int *rounds,
                        int *messages, double *blocks)
{
    const struct mpitopo__stencil *s = n->stencil;
    *offsets = s->k;
    *rounds = s->ndims;
    *messages = 4 * s->radius * s->ndims;
    *blocks = 0;
    for (int j = 0; j < s->k; j++) {
        int nz = 0;
        for (int i = 0; i < s->ndims; i++)
            nz += s->off[(size_t)j * s->ndims + i] != 0;
        *blocks += alltoall ? nz : 1;
    }
}

typedef struct builder {
    mpitopo_request_t r;
    const struct mpitopo__stencil *s;
    const side_t *send, *recv;
    int alltoall;
    int sb, rb;       /* block bytes of the two sides */
    int base;         /* tag of round 0 */
    int nops, round;
    MPI_Aint off;     /* temporary buffer used so far */
    MPI_Aint *loc;    /* k: where the block for offset j is held, -1: user buffer */
    int *mark;        /* k: scratch */
    /* The v and w forms only: */
    struct vctx *v;   /* the request's runtime state (req->ctx) */
    struct vwhere *vloc; /* k: where the block for offset j is held */
    int *sbv, *rbv;   /* bytes of every send and receive slot */
    int nbufs;        /* growable buffers used so far */
} builder_t;

static void add(builder_t *b, mpitopo__op_t o)
{
    b->r->ops[b->nops++] = o;
}

/*
 * The blocks of the message that the process at `from` sends in round k to
 * the one at distance delta along dimension k: calls item(b, j, ...) for
 * each, j the first offset of the block in stencil order (for allgather,
 * the block serves every offset with the same o[0..k]; mark[] flags those
 * whose class was taken).
 */
typedef void item_fn(builder_t *b, int j, int pos, void *ctx);

static int items(builder_t *b, const int *from, int k, int delta, item_fn *fn, void *ctx)
{
    const struct mpitopo__stencil *s = b->s;
    int d = s->ndims, y[MPITOPO_MAX_DIMS], z[MPITOPO_MAX_DIMS], pos = 0;
    for (int j = 0; j < s->k; j++)
        b->mark[j] = 0;
    for (int j = 0; j < s->k; j++) {
        const int *o = s->off + (size_t)j * d;
        if (o[k] != delta || b->mark[j])
            continue;
        /* The offsets this block serves: j alone, or (allgather) every
         * later one with the same o[0..k]. It travels if its origin is on
         * the grid and one of their destinations is. */
        for (int f = 0; f < d; f++)
            y[f] = from[f] - (f < k ? o[f] : 0);
        if (!on_grid(s, y))
            continue;
        int useful = 0;
        for (int i = j; i < s->k; i++) {
            const int *p = s->off + (size_t)i * d;
            if (i != j && (!b->alltoall ? memcmp(p, o, sizeof(int) * (size_t)(k + 1)) : 1))
                continue;
            if (!b->alltoall)
                b->mark[i] = 1;
            for (int f = 0; f < d; f++)
                z[f] = y[f] + p[f];
            useful |= on_grid(s, z);
        }
        if (useful)
            fn(b, j, pos++, ctx);
    }
    return pos;
}

/* Sender side: put the block of offset j into the message at ctx. */
static void pack_item(builder_t *b, int j, int pos, void *ctx)
{
    MPI_Aint at = *(MPI_Aint *)ctx + (MPI_Aint)pos * b->sb;
    if (b->loc[j] >= 0) {
        add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_MOVE, .tmp_off = at,
                               .tmp_bytes = b->sb, .src_off = b->loc[j]});
        return;
    }
    int slot = b->alltoall ? b->s->out_slot[j] : 0;
    add(b, (mpitopo__op_t){MPITOPO__SLOT(b->send, slot),
                           .count = mpitopo__slot_count(b->send, slot),
                           .type = mpitopo__slot_type(b->send, slot), .kind = MPITOPO__OP_PACK,
                           .tmp_off = at, .tmp_bytes = b->sb});
}

/* Receiver side: the block of offset j (and, for allgather, of every
 * offset sharing o[0..k]) now sits at ctx + pos blocks. */
typedef struct recv_ctx {
    MPI_Aint at;
    int k;
} recv_ctx_t;

/* Whether offset i is served by the block of offset j after round k
 * (alltoall: i == j; allgather: o_i and o_j agree on o[0..k]). */
static int served(const builder_t *b, int j, int i, int k)
{
    int d = b->s->ndims;
    if (b->alltoall || i == j)
        return i == j;
    return !memcmp(b->s->off + (size_t)i * d, b->s->off + (size_t)j * d,
                   sizeof(int) * (size_t)(k + 1));
}

static void recv_item(builder_t *b, int j, int pos, void *ctx)
{
    const recv_ctx_t *c = ctx;
    for (int i = j; i < b->s->k; i++)
        if (served(b, j, i, c->k))
            b->loc[i] = c->at + (MPI_Aint)pos * b->rb;
}

static void count_item(builder_t *b, int j, int pos, void *ctx)
{
    (void)b;
    (void)j;
    (void)pos;
    (void)ctx;
}

/* Round k: the packs and moves of the outgoing messages, the receives,
 * the sends. Receives are entered after the packs: recv_item updates loc,
 * which the packs of this round must still see as it was. */
static void round_k(builder_t *b, int k)
{
    const struct mpitopo__stencil *s = b->s;
    int d = s->ndims, r = s->radius, me[MPITOPO_MAX_DIMS], peer[MPITOPO_MAX_DIMS];
    int tag = b->base + k;
    memcpy(me, s->coords, sizeof(int) * (size_t)d);
    for (int delta = -r; delta <= r; delta++) {
        if (delta == 0)
            continue;
        memcpy(peer, me, sizeof(int) * (size_t)d);
        peer[k] += delta;
        if (!on_grid(s, peer))
            continue;
        MPI_Aint at = b->off;
        int m = items(b, me, k, delta, pack_item, &at);
        if (m == 0)
            continue;
        b->off += (MPI_Aint)m * b->sb;
        add(b, (mpitopo__op_t){.count = m * b->sb, .type = MPI_BYTE, .peer = rank_of(s, peer),
                               .tag = tag, .kind = MPITOPO__OP_SEND, .in_tmp = 1,
                               .tmp_off = at});
    }
    for (int delta = -r; delta <= r; delta++) {
        if (delta == 0)
            continue;
        memcpy(peer, me, sizeof(int) * (size_t)d);
        peer[k] -= delta;
        if (!on_grid(s, peer))
            continue;
        recv_ctx_t c = {b->off, k};
        int m = items(b, peer, k, delta, count_item, NULL);
        if (m == 0)
            continue;
        items(b, peer, k, delta, recv_item, &c);
        b->off += (MPI_Aint)m * b->rb;
        add(b, (mpitopo__op_t){.count = m * b->rb, .type = MPI_BYTE, .peer = rank_of(s, peer),
                               .tag = tag, .kind = MPITOPO__OP_RECV, .in_tmp = 1,
                               .tmp_off = c.at});
    }
    b->r->round_start[++b->round] = b->nops;
}

/* After the last round: every block of a present source is here. */
static void unpacks(builder_t *b)
{
    const struct mpitopo__stencil *s = b->s;
    for (int j = 0; j < s->k; j++) {
        int i = s->in_slot[j];
        if (i < 0)
            continue;
        add(b, (mpitopo__op_t){MPITOPO__SLOT(b->recv, i),
                               .count = mpitopo__slot_count(b->recv, i),
                               .type = mpitopo__slot_type(b->recv, i),
                               .kind = MPITOPO__OP_UNPACK, .tmp_off = b->loc[j],
                               .tmp_bytes = b->rb});
    }
    b->r->round_start[++b->round] = b->nops;
}

/* Bytes of one block of side; a message carries at most k of them
 * (k offsets), which must fit an int. */
static int block_bytes(const side_t *side, int k, int *bytes, const char *func)
{
    int size, rc = PMPI_Type_size(side->type, &size);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    long long v = (long long)size * side->count;
    if (v > INT_MAX / (k > 0 ? k : 1))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, func,
                                 "%s = %d of %d-byte elements: a message of %d such blocks "
                                 "is too large to forward (use the linear schedule)",
                                 side->count_name, side->count, size, k);
    *bytes = (int)v;
    return MPITOPO_SUCCESS;
}

/* ---- The v and w forms ----
 *
 * The same messages as allgather and alltoall, with the same blocks in the
 * same order, but a block's size is its origin's (sendcounts and
 * sendtypes), which a process forwarding it does not know. So a message
 * is a header of one int per block (its packed size, in the order both
 * ends enumerate the blocks) followed by the blocks, packed, back to back.
 *
 * Round 0 first packs our own blocks into tmp (their sizes are ours).
 * Every round k then starts with a runtime step (vstep) that parses the
 * messages of round k - 1 (received at whatever size they had, with
 * MPITOPO__OP_RECV_ANY), assembles round k's messages in a growable buffer
 * from our blocks and the parts of earlier messages, and sets the sizes
 * of their sends. The step of the last round checks every block against
 * the receive slot it lands in (MPI_ERR_TRUNCATE naming the slot and its
 * source otherwise) before any unpack runs, then aims the unpacks at it.
 * Forwarding processes check only that a header describes its message, so
 * counts that disagree fail at the final receivers, after every message
 * has moved: no process is left waiting for a message that never comes.
 */

/* Where a block is held: part `part` of received message `in`, or (in <
 * 0) our own block of send slot `part`, packed in tmp. */
typedef struct vwhere {
    int in;
    int part;
} vwhere_t;

typedef struct vout {
    int send;     /* op of the message */
    int first, n; /* its blocks: ctx->parts[first .. first + n) */
} vout_t;

typedef struct vin {
    int buf;      /* growable buffer it is received into */
    int peer, round, nparts;
    int offs;     /* ctx->offs[offs .. offs + nparts]: part bounds once parsed */
} vin_t;

typedef struct vunp {
    int op, slot; /* the unpack and its receive slot */
    vwhere_t at;
} vunp_t;

typedef struct vctx {
    const char *func, *count_name;
    int ndims;
    MPI_Aint *own_off; /* by send slot: our block in tmp */
    int *own_bytes;
    vwhere_t *parts;
    int nparts;
    vout_t *out;
    int nout;
    vin_t *in;
    int nin;
    MPI_Aint *offs;
    int noffs;
    vunp_t *unp;
    int nunp;
    int *out_start, *in_start; /* ndims + 1: round k has out[out_start[k] ..
                                  out_start[k + 1]), likewise in */
    int *obuf;                 /* ndims: growable buffer of round k's messages */
} vctx_t;

static void vctx_free(void *p)
{
    vctx_t *v = p;
    if (!v)
        return;
    mpitopo__free(v->own_off);
    mpitopo__free(v->own_bytes);
    mpitopo__free(v->parts);
    mpitopo__free(v->out);
    mpitopo__free(v->in);
    mpitopo__free(v->offs);
    mpitopo__free(v->unp);
    mpitopo__free(v->out_start);
    mpitopo__free(v);
}

/* Bounds: a round sends and receives each offset's block at most once
 * and at most 2R messages each way. */
static vctx_t *vctx_new(const struct mpitopo__stencil *s, int outdeg, const char *func,
                        const char *count_name)
{
    vctx_t *v = mpitopo__calloc(1, sizeof *v);
    if (!v)
        return NULL;
    size_t d = (size_t)s->ndims, items = d * (size_t)s->k + 1, msgs = d * 2 * s->radius + 1;
    v->func = func;
    v->count_name = count_name;
    v->ndims = s->ndims;
    v->own_off = mpitopo__malloc_array((size_t)outdeg + 1, sizeof *v->own_off);
    v->own_bytes = mpitopo__malloc_array((size_t)outdeg + 1, sizeof *v->own_bytes);
    v->parts = mpitopo__malloc_array(items, sizeof *v->parts);
    v->out = mpitopo__malloc_array(msgs, sizeof *v->out);
    v->in = mpitopo__malloc_array(msgs, sizeof *v->in);
    v->offs = mpitopo__malloc_array(items + msgs, sizeof *v->offs);
    v->unp = mpitopo__malloc_array((size_t)s->k + 1, sizeof *v->unp);
    v->out_start = mpitopo__calloc(3 * d + 3, sizeof(int));
    if (!v->own_off || !v->own_bytes || !v->parts || !v->out || !v->in || !v->offs || !v->unp ||
        !v->out_start) {
        vctx_free(v);
        return NULL;
    }
    v->in_start = v->out_start + d + 1;
    v->obuf = v->in_start + d + 1;
    return v;
}

/* Where block w is held, and its bytes (its message must be parsed). */
static char *vpart(mpitopo_request_t r, const vctx_t *v, vwhere_t w, int *bytes)
{
    if (w.in < 0) {
        *bytes = v->own_bytes[w.part];
        return r->tmp + v->own_off[w.part];
    }
    const vin_t *e = &v->in[w.in];
    const MPI_Aint *o = v->offs + e->offs + w.part;
    *bytes = (int)(o[1] - o[0]);
    return r->bufs[e->buf - 1].p + o[0];
}

/* Round k's messages into growable buffer obuf[k]: sizes, then blocks. */
static int vassemble(mpitopo_request_t r, vctx_t *v, int k)
{
    long long total = 0;
    int bytes;
    if (v->obuf[k] == 0) /* nothing to send this round */
        return MPITOPO_SUCCESS;
    for (int i = v->out_start[k]; i < v->out_start[k + 1]; i++) {
        total += (long long)v->out[i].n * (long long)sizeof(int);
        for (int p = 0; p < v->out[i].n; p++) {
            vpart(r, v, v->parts[v->out[i].first + p], &bytes);
            total += bytes;
        }
    }
    mpitopo__rbuf_t *o = total <= INT_MAX ? mpitopo__request_buf(r, v->obuf[k], (size_t)total)
                                          : NULL;
    if (!o)
        return MPITOPO_FAIL_AS(total <= INT_MAX ? MPITOPO_ERR_NOMEM : MPITOPO_ERR_ARG, v->func,
                                 "cannot forward %lld bytes in round %d (use the linear "
                                 "schedule)",
                                 total, k);
    size_t at = 0;
    for (int i = v->out_start[k]; i < v->out_start[k + 1]; i++) {
        const vout_t *m = &v->out[i];
        char *h = o->p + at, *d = h + (size_t)m->n * sizeof(int);
        for (int p = 0; p < m->n; p++) {
            const char *src = vpart(r, v, v->parts[m->first + p], &bytes);
            memcpy(h + (size_t)p * sizeof(int), &bytes, sizeof bytes);
            memcpy(d, src, (size_t)bytes);
            d += bytes;
        }
        mpitopo__op_t *send = &r->ops[m->send];
        send->buf_id = v->obuf[k];
        send->tmp_off = (MPI_Aint)at;
        send->count = (int)(d - (o->p + at));
        at += (size_t)send->count;
    }
    o->len = at;
    return MPITOPO_SUCCESS;
}

/* The last round: check every block against its receive slot, then aim
 * the unpacks at it. */
static int vfinish(mpitopo_request_t r, vctx_t *v)
{
    for (int i = 0; i < v->nunp; i++) {
        const vunp_t *u = &v->unp[i];
        mpitopo__op_t *op = &r->ops[u->op];
        const vin_t *e = &v->in[u->at.in];
        int got;
        char *p = vpart(r, v, u->at, &got);
        int from = r->nbr->sources[u->slot];
        char via[48] = "";
        if (got != op->tmp_bytes && e->peer != from)
            snprintf(via, sizeof via, " (forwarded by rank %d)", e->peer);
        if (got != op->tmp_bytes)
            return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, v->func,
                                     "receive block %d: %d bytes arrived from rank %d%s, but "
                                     "%s[%d] = %d elements hold %d bytes",
                                     u->slot, got, from, via, v->count_name, u->slot, op->count,
                                     op->tmp_bytes);
        op->buf_id = e->buf;
        op->tmp_off = p - r->bufs[e->buf - 1].p;
    }
    return MPITOPO_SUCCESS;
}

/* Runtime step of round k (k = ndims: the unpacks). */
static int vstep(mpitopo_request_t r, int k)
{
    vctx_t *v = r->ctx;
    for (int i = k > 0 ? v->in_start[k - 1] : 0; i < v->in_start[k]; i++) {
        const vin_t *e = &v->in[i];
        const mpitopo__rbuf_t *m = &r->bufs[e->buf - 1];
        if (!mpitopo__parts_parse(m->p, m->len, e->nparts, v->offs + e->offs))
            return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, v->func,
                                     "the %zu-byte message from rank %d (round %d) does not "
                                     "hold the %d blocks expected",
                                     m->len, e->peer, e->round, e->nparts);
    }
    return k == v->ndims ? vfinish(r, v) : vassemble(r, v, k);
}

/* Sender side: block j goes next into the message being listed. */
static void vsend_item(builder_t *b, int j, int pos, void *ctx)
{
    (void)pos;
    (void)ctx;
    struct vwhere w = b->vloc[j];
    if (w.in < 0)
        w.part = b->alltoall ? b->s->out_slot[j] : 0;
    b->v->parts[b->v->nparts++] = w;
}

/* Receiver side: block j (and the offsets it serves) is part pos of the
 * message being listed. */
static void vrecv_item(builder_t *b, int j, int pos, void *ctx)
{
    const int *c = ctx; /* {received message, round} */
    for (int i = j; i < b->s->k; i++)
        if (served(b, j, i, c[1]))
            b->vloc[i] = (vwhere_t){c[0], pos};
}

/* Round k: its runtime step, the sends, the receives. */
static void vround(builder_t *b, int k)
{
    const struct mpitopo__stencil *s = b->s;
    vctx_t *v = b->v;
    int d = s->ndims, r = s->radius, peer[MPITOPO_MAX_DIMS], tag = b->base + k;
    add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_CALL, .call = vstep, .arg = k});
    for (int delta = -r; delta <= r; delta++) {
        memcpy(peer, s->coords, sizeof(int) * (size_t)d);
        peer[k] += delta;
        if (delta == 0 || !on_grid(s, peer))
            continue;
        int first = v->nparts, m = items(b, s->coords, k, delta, vsend_item, NULL);
        if (m == 0)
            continue;
        v->out[v->nout++] = (vout_t){.send = b->nops, .first = first, .n = m};
        add(b, (mpitopo__op_t){.type = MPI_BYTE, .peer = rank_of(s, peer), .tag = tag,
                               .kind = MPITOPO__OP_SEND, .in_tmp = 1});
    }
    v->out_start[k + 1] = v->nout;
    v->obuf[k] = v->nout > v->out_start[k] ? ++b->nbufs : 0;
    for (int delta = -r; delta <= r; delta++) {
        memcpy(peer, s->coords, sizeof(int) * (size_t)d);
        peer[k] -= delta;
        if (delta == 0 || !on_grid(s, peer))
            continue;
        int m = items(b, peer, k, delta, count_item, NULL), c[2] = {v->nin, k};
        if (m == 0)
            continue;
        vin_t *e = &v->in[v->nin++];
        *e = (vin_t){.buf = ++b->nbufs, .peer = rank_of(s, peer), .round = k, .nparts = m,
                     .offs = v->noffs};
        v->noffs += m + 1;
        items(b, peer, k, delta, vrecv_item, c);
        add(b, (mpitopo__op_t){.type = MPI_BYTE, .peer = e->peer, .tag = tag,
                               .kind = MPITOPO__OP_RECV_ANY, .buf_id = e->buf});
    }
    v->in_start[k + 1] = v->nin;
    b->r->round_start[++b->round] = b->nops;
}

/* Round 0 begins with our own blocks, packed once into tmp. */
static void vown(builder_t *b, int slots)
{
    for (int i = 0; i < slots; i++) {
        b->v->own_off[i] = b->off;
        b->v->own_bytes[i] = b->sbv[i];
        add(b, (mpitopo__op_t){MPITOPO__SLOT(b->send, i),
                               .count = mpitopo__slot_count(b->send, i),
                               .type = mpitopo__slot_type(b->send, i),
                               .kind = MPITOPO__OP_PACK, .tmp_off = b->off,
                               .tmp_bytes = b->sbv[i]});
        b->off += b->sbv[i];
    }
}

/* The last round: the runtime step, then an unpack per receive slot. */
static void vunpacks(builder_t *b)
{
    const struct mpitopo__stencil *s = b->s;
    vctx_t *v = b->v;
    add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_CALL, .call = vstep,
                           .arg = s->ndims});
    for (int j = 0; j < s->k; j++) {
        int i = s->in_slot[j];
        if (i < 0)
            continue;
        v->unp[v->nunp++] = (vunp_t){.op = b->nops, .slot = i, .at = b->vloc[j]};
        add(b, (mpitopo__op_t){MPITOPO__SLOT(b->recv, i),
                               .count = mpitopo__slot_count(b->recv, i),
                               .type = mpitopo__slot_type(b->recv, i),
                               .kind = MPITOPO__OP_UNPACK, .tmp_bytes = b->rbv[i]});
    }
    b->r->round_start[++b->round] = b->nops;
}

/* Steps: our packs, per round a runtime step and 2R messages each way,
 * then a runtime step and an unpack per receive slot. */
static int vfill(builder_t *b, const mpitopo__nbr_t *n, const char *func)
{
    const struct mpitopo__stencil *s = b->s;
    int rc = mpitopo__slot_bytes(b->send, n->outdegree, b->sbv, "cart", func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__slot_bytes(b->recv, n->indegree, b->rbv, "cart", func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    b->v = vctx_new(s, n->outdegree, func, b->recv->count_name);
    if (!b->v)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a schedule state");
    b->r->ctx = b->v;
    b->r->ctx_free = vctx_free;
    for (int j = 0; j < s->k; j++)
        b->vloc[j] = (vwhere_t){-1, 0};
    b->r->round_start[0] = 0;
    vown(b, b->alltoall ? n->outdegree : (n->outdegree > 0 ? 1 : 0));
    for (int k = 0; k < s->ndims; k++)
        vround(b, k);
    vunpacks(b);
    b->r->nops = b->nops;
    b->r->nrounds = b->round;
    rc = mpitopo__request_bufs(b->r, b->nbufs);
    return rc == MPITOPO_SUCCESS ? mpitopo__request_alloc_tmp(b->r, (size_t)b->off) : rc;
}

static int vbuild(mpitopo__nbr_t *n, const side_t *send, const side_t *recv,
                  mpitopo_request_t *out, const char *func)
{
    const struct mpitopo__stencil *s = n->stencil;
    builder_t b = {.s = s, .send = send, .recv = recv, .alltoall = send->mode != SIDE_SAME};
    int rc = mpitopo__nbr_tags(n, s->ndims > 0 ? s->ndims : 1, &b.base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    long long nops = (long long)s->ndims * (4LL * s->radius + 1) + 2LL * s->k + 3;
    if (nops > INT_MAX)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "schedule too large");
    b.vloc = mpitopo__malloc_array((size_t)s->k + 1, sizeof *b.vloc);
    b.mark = mpitopo__malloc_array((size_t)s->k + 1, sizeof *b.mark);
    b.sbv = mpitopo__malloc_array((size_t)n->outdegree + n->indegree + 1, sizeof(int));
    b.r = b.vloc && b.mark && b.sbv ? mpitopo__request_new(n, (int)nops, s->ndims + 1) : NULL;
    if (b.r) {
        b.rbv = b.sbv + n->outdegree;
        rc = vfill(&b, n, func);
    } else {
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %lld steps", nops);
    }
    mpitopo__free(b.vloc);
    mpitopo__free(b.mark);
    mpitopo__free(b.sbv);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(b.r);
        return rc;
    }
    *out = b.r;
    return MPITOPO_SUCCESS;
}

/* allgather and alltoall: every block size known, the layout fixed. */
static int fixed_build(mpitopo__nbr_t *n, const side_t *send, const side_t *recv,
                       mpitopo_request_t *out, const char *func)
{
    const struct mpitopo__stencil *s = n->stencil;
    builder_t b = {.s = s, .send = send, .recv = recv, .alltoall = send->mode == SIDE_BLOCK};
    int rc = block_bytes(send, s->k, &b.sb, func);
    if (rc == MPITOPO_SUCCESS)
        rc = block_bytes(recv, s->k, &b.rb, func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__nbr_tags(n, s->ndims > 0 ? s->ndims : 1, &b.base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    /* Per round, per distance: a message each way and a copy per offset. */
    long long nops = (long long)s->ndims * 2 * s->radius * (s->k + 2) + s->k + 1;
    if (nops > INT_MAX)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "schedule too large");
    b.loc = mpitopo__malloc_array((size_t)s->k + 1, sizeof *b.loc);
    b.mark = mpitopo__malloc_array((size_t)s->k + 1, sizeof *b.mark);
    b.r = b.loc && b.mark ? mpitopo__request_new(n, (int)nops, s->ndims + 1) : NULL;
    if (!b.r) {
        mpitopo__free(b.loc);
        mpitopo__free(b.mark);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %lld steps", nops);
    }
    for (int j = 0; j < s->k; j++)
        b.loc[j] = -1;
    b.r->round_start[0] = 0;
    for (int k = 0; k < s->ndims; k++)
        round_k(&b, k);
    unpacks(&b);
    b.r->nops = b.nops;
    b.r->nrounds = b.round;
    mpitopo__free(b.loc);
    mpitopo__free(b.mark);
    rc = mpitopo__request_alloc_tmp(b.r, (size_t)b.off);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(b.r);
        return rc;
    }
    *out = b.r;
    return MPITOPO_SUCCESS;
}

/* The table's build: the dimension-wise schedule, not started. */
static int build(mpitopo__nbr_t *n, mpitopo__opkind_t op, const side_t *send, const side_t *recv,
                 const mpitopo__choice_t *c, mpitopo_request_t *out, const char *func)
{
    (void)op;
    (void)c;
    if (send->mode == SIDE_V || send->mode == SIDE_W || recv->mode == SIDE_V ||
        recv->mode == SIDE_W)
        return vbuild(n, send, recv, out, func);
    return fixed_build(n, send, recv, out, func);
}

/* Asked for by name: stencil communicators (mpitopo__cart_applies), all
 * five operations, allgather and alltoall blocks that fit k at a time in
 * one message (every process of a periodic stencil communicates, so MPI
 * makes them pass the same sizes: the same answer everywhere). */
static int applies(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb, const char **why,
                   const char *func)
{
    (void)func;
    *why = NULL;
    if (!mpitopo__cart_applies(n, op))
        *why = "not a communicator of mpitopo_cart_stencil_create whose stencil reaches distinct processes";
    else if ((sb > rb ? sb : rb) > INT_MAX / (n->stencil->k > 0 ? n->stencil->k : 1))
        *why = "blocks too large to forward";
    return MPITOPO_SUCCESS;
}

static void free_state(mpitopo__nbr_t *n)
{
    mpitopo__stencil_free(n->stencil);
    n->stencil = NULL;
}

const mpitopo__sched_ops_t mpitopo__cart_ops = {
    .applies = applies, .build = build, .free_state = free_state};
