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
 * what arrived for itself after the last round. Block sizes are those of
 * the two sides (equal at both ends, as MPI requires), so the schedule
 * covers allgather and alltoall; the v and w forms run linear (an
 * intermediate process would need the counts of blocks it only forwards).
 *
 * The schedule needs every offset to reach a distinct process: periodic
 * dimensions of at least 2R + 1 processes (shorter ones fold two offsets
 * onto one process, where MPI's matching order, not geometry, decides
 * which block lands where). Otherwise the collectives run linear.
 */
#include "coll/coll_internal.h"

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

/* Largest number of offsets a stencil may have. */
#define MAX_OFFSETS (1 << 20)

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
                : mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for a stencil");
}

/* ---- mpitopo_cart_stencil_create ---- */

static int parse_stencil(const char *text, int *star, int *radius, const char *func)
{
    const char *colon = text ? strchr(text, ':') : NULL;
    long long r;
    if (!text)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func, "stencil = NULL");
    if (colon && (size_t)(colon - text) == 5 && !strncmp(text, "moore", 5))
        *star = 0;
    else if (colon && (size_t)(colon - text) == 4 && !strncmp(text, "star", 4))
        *star = 1;
    else
        return mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                 "stencil = \"%s\" is not moore:R or star:R", text);
    if (mpitopo__parse_long(colon + 1, strlen(colon + 1), 1, 1 << 20, &r) != 0)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                 "stencil = \"%s\": the radius must be an integer >= 1", text);
    *radius = (int)r;
    return MPITOPO_SUCCESS;
}

/* Number of offsets of the stencil, or -1 above MAX_OFFSETS. */
static long long count_offsets(int ndims, int star, int radius)
{
    if (star)
        return 2LL * ndims * radius <= MAX_OFFSETS ? 2LL * ndims * radius : -1;
    long long n = 1;
    for (int d = 0; d < ndims; d++)
        if ((n *= 2LL * radius + 1) > MAX_OFFSETS + 1LL)
            return -1;
    return n - 1;
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

int mpitopo_cart_stencil_create(MPI_Comm cart, const char *stencil, MPI_Info info,
                                MPI_Comm *newcomm)
{
    const char *func = __func__;
    int star = 0, radius = 0, kind = MPI_UNDEFINED, ndims = 0, key;
    if (!newcomm)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func, "newcomm = NULL");
    *newcomm = MPI_COMM_NULL;
    int rc = parse_stencil(stencil, &star, &radius, func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__check_mpi(func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__check_intracomm(cart, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    rc = PMPI_Topo_test(cart, &kind);
    if (rc == MPI_SUCCESS && kind != MPI_CART)
        return mpitopo__error_at(MPI_ERR_TOPOLOGY, func,
                                 "cart is not a Cartesian communicator (MPI_Topo_test gives %d)",
                                 kind);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Cartdim_get(cart, &ndims);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    if (ndims > MPITOPO_MAX_DIMS)
        return mpitopo__error_at(MPITOPO_ERR_UNSUPPORTED, func,
                                 "cart has %d dimensions; stencils support at most %d", ndims,
                                 MPITOPO_MAX_DIMS);
    long long k = count_offsets(ndims, star, radius);
    if (k < 0)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                 "stencil = \"%s\" on %d dimensions has more than %d offsets",
                                 stencil, ndims, MAX_OFFSETS);
    struct mpitopo__stencil *s = stencil_alloc(ndims, (int)k);
    int *lists = mpitopo__malloc_array(2 * (size_t)k + 1, sizeof(int));
    if (!s || !lists) {
        mpitopo__free(s);
        mpitopo__free(lists);
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for %lld offsets", k);
    }
    s->star = star;
    s->radius = radius;
    rc = ndims > 0 ? PMPI_Cart_get(cart, ndims, s->dims, s->periods, s->coords) : MPI_SUCCESS;
    int in = 0, out = 0;
    if (rc == MPI_SUCCESS) {
        list_offsets(s);
        place(s, lists, lists + k, &in, &out);
        rc = mpitopo_dist_graph_create_adjacent(cart, in, lists, MPI_UNWEIGHTED, out, lists + k,
                                                MPI_UNWEIGHTED, info, 0, newcomm);
    } else {
        rc = mpitopo__mpi_result(func, rc);
    }
    mpitopo__free(lists);
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
                     ndims, k,
                     s->distinct ? "" : " (a periodic dimension is shorter than 2R + 1: "
                                        "the collectives run linear)");
    return MPITOPO_SUCCESS;
}

/* ---- The schedule ---- */

int mpitopo__cart_applies(const mpitopo__nbr_t *n, mpitopo__opkind_t op)
{
    return n->stencil && n->stencil->distinct &&
           (op == MPITOPO__OPK_ALLGATHER || op == MPITOPO__OPK_ALLTOALL);
}

/* Messages per process: 2R per dimension against one per offset. */
int mpitopo__cart_gains(const mpitopo__nbr_t *n)
{
    const struct mpitopo__stencil *s = n->stencil;
    return s && 2LL * s->radius * s->ndims < s->k;
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
    add(b, (mpitopo__op_t){.buf = mpitopo__slot_buf(b->send, slot),
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

static void recv_item(builder_t *b, int j, int pos, void *ctx)
{
    const recv_ctx_t *c = ctx;
    const struct mpitopo__stencil *s = b->s;
    int d = s->ndims;
    MPI_Aint at = c->at + (MPI_Aint)pos * b->rb;
    if (b->alltoall) {
        b->loc[j] = at;
        return;
    }
    const int *o = s->off + (size_t)j * d;
    for (int i = j; i < s->k; i++)
        if (!memcmp(s->off + (size_t)i * d, o, sizeof(int) * (size_t)(c->k + 1)))
            b->loc[i] = at;
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
        add(b, (mpitopo__op_t){.buf = mpitopo__slot_buf(b->recv, i),
                               .count = mpitopo__slot_count(b->recv, i),
                               .type = mpitopo__slot_type(b->recv, i),
                               .kind = MPITOPO__OP_UNPACK, .tmp_off = b->loc[j],
                               .tmp_bytes = b->rb});
    }
    b->r->round_start[++b->round] = b->nops;
}

static int block_bytes(const side_t *side, int *bytes, const char *func)
{
    int size, rc = PMPI_Type_size(side->type, &size);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    long long v = (long long)size * side->count;
    if (v > INT_MAX / MAX_OFFSETS)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                 "%s = %d of %d-byte elements is too large to forward (use the "
                                 "linear schedule)",
                                 side->count_name, side->count, size);
    *bytes = (int)v;
    return MPITOPO_SUCCESS;
}

int mpitopo__cart_build(mpitopo__nbr_t *n, const side_t *send, const side_t *recv,
                        mpitopo_request_t *out, const char *func)
{
    const struct mpitopo__stencil *s = n->stencil;
    builder_t b = {.s = s, .send = send, .recv = recv, .alltoall = send->mode == SIDE_BLOCK};
    int rc = block_bytes(send, &b.sb, func);
    if (rc == MPITOPO_SUCCESS)
        rc = block_bytes(recv, &b.rb, func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__nbr_tags(n, s->ndims > 0 ? s->ndims : 1, &b.base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    /* Per round, per distance: a message each way and a copy per offset. */
    long long nops = (long long)s->ndims * 2 * s->radius * (s->k + 2) + s->k + 1;
    if (nops > INT_MAX)
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "schedule too large");
    b.loc = mpitopo__malloc_array((size_t)s->k + 1, sizeof *b.loc);
    b.mark = mpitopo__malloc_array((size_t)s->k + 1, sizeof *b.mark);
    b.r = b.loc && b.mark ? mpitopo__request_new(n, (int)nops, s->ndims + 1) : NULL;
    if (!b.r) {
        mpitopo__free(b.loc);
        mpitopo__free(b.mark);
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for %lld steps", nops);
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
