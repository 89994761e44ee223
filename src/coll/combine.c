/*
 * Message combining, phase 2 (Alg. 6.3): the rounds of one allgather or
 * alltoall from the cached pattern. For every pattern round t, in order:
 *   round A (only if the process paired in t): swap data with the friend;
 *   round B: build and send the combined messages, receive those of t;
 * then one round of direct messages, then one round of unpacks.
 * Combined data travels packed (MPI_BYTE), so a block is its type
 * signature's size; the packed form of a homogeneous MPI is that size.
 *
 * Tags (the round-tagged protocol): operation number s on the communicator
 * gets tags base(s) .. base(s) + 2R, R the largest pattern round: base for
 * direct messages, base + 2t - 1 for the swap of round t, base + 2t for
 * its combined messages. Graph tags of the linear schedule are 0, so the
 * two never meet; W = 32766 / (2R + 1) operations may overlap before
 * numbers repeat.
 *
 * The v and w forms do not combine: a process would need its friend's
 * per-destination counts (and types) for every call, an extra exchange
 * per call that a nonblocking call cannot wait for; they run linear.
 */
#include "coll/combine.h"

#include <limits.h>

typedef struct builder {
    mpitopo_request_t r;
    const mpitopo__nbr_t *n;
    const side_t *send, *recv;
    int me, alltoall;
    int sb, rb;         /* send and receive block bytes */
    int base;           /* first tag of this operation */
    int k, round;       /* next op, current round */
    MPI_Aint off;       /* temporary buffer used so far */
    mpitopo__op_t *unp; /* the unpacks of the last round */
    int nunp;
} builder_t;

static void close_round(builder_t *b)
{
    b->r->round_start[++b->round] = b->k;
}

static void add(builder_t *b, mpitopo__op_t o)
{
    b->r->ops[b->k++] = o;
}

static void add_msg(builder_t *b, int kind, MPI_Aint off, int bytes, int peer, int tag)
{
    add(b, (mpitopo__op_t){.count = bytes, .type = MPI_BYTE, .peer = peer, .tag = tag,
                           .kind = kind, .in_tmp = 1, .tmp_off = off});
}

static void add_pack(builder_t *b, int slot, MPI_Aint off)
{
    add(b, (mpitopo__op_t){.buf = mpitopo__slot_buf(b->send, slot),
                           .count = mpitopo__slot_count(b->send, slot),
                           .type = mpitopo__slot_type(b->send, slot), .kind = MPITOPO__OP_PACK,
                           .tmp_off = off, .tmp_bytes = b->sb});
}

/* Pack the blocks of every edge to q, in edge order, at off; returns the
 * bytes used. */
static MPI_Aint pack_blocks(builder_t *b, int q, MPI_Aint off)
{
    MPI_Aint at = off;
    for (int d = 0; d < b->n->outdegree; d++)
        if (b->n->destinations[d] == q) {
            add_pack(b, d, at);
            at += b->sb;
        }
    return at - off;
}

static int tag_swap(const builder_t *b, int t)
{
    return b->base + 2 * t - 1;
}

static int tag_comb(const builder_t *b, int t)
{
    return b->base + 2 * t;
}

/* Allgather: [block of min(me, f) | block of max] built in place: ours is
 * packed into its half, the friend's is received into the other. */
static void step_allgather(builder_t *b, const mpitopo__comb_step_t *s)
{
    MPI_Aint c = b->off, mine = c + (b->me < s->f ? 0 : b->sb);
    MPI_Aint theirs = c + (b->me < s->f ? b->sb : 0);
    b->off += 2 * (MPI_Aint)b->sb;
    add_pack(b, 0, mine);
    add_msg(b, MPITOPO__OP_RECV, theirs, b->sb, s->f, tag_swap(b, s->t));
    add_msg(b, MPITOPO__OP_SEND, mine, b->sb, s->f, tag_swap(b, s->t));
    close_round(b);
    for (int i = s->on_lo; i < s->on_hi; i++)
        add_msg(b, MPITOPO__OP_SEND, c, 2 * b->sb, s->cn[i], tag_comb(b, s->t));
}

/* Alltoall: we hand the friend our blocks for the neighbours it serves
 * and get its blocks for ours; each combined message is
 * [blocks of min(me, f) for q | blocks of max for q]. */
static void step_alltoall(builder_t *b, const mpitopo__comb_step_t *s)
{
    int lo = s->on_lo == 0 ? s->on_hi : 0, hi = s->on_lo == 0 ? s->k : s->on_lo;
    MPI_Aint x = b->off, y, ybytes = 0;
    for (int i = lo; i < hi; i++)
        b->off += pack_blocks(b, s->cn[i], b->off);
    y = b->off;
    for (int i = s->on_lo; i < s->on_hi; i++)
        ybytes += (MPI_Aint)s->theirs[i] * b->sb;
    b->off += ybytes;
    add_msg(b, MPITOPO__OP_RECV, y, (int)ybytes, s->f, tag_swap(b, s->t));
    add_msg(b, MPITOPO__OP_SEND, x, (int)(y - x), s->f, tag_swap(b, s->t));
    close_round(b);
    for (int i = s->on_lo; i < s->on_hi; i++) {
        MPI_Aint c = b->off, theirs = (MPI_Aint)s->theirs[i] * b->sb;
        MPI_Aint mine = (MPI_Aint)s->mine[i] * b->sb;
        MPI_Aint at_mine = b->me < s->f ? c : c + theirs;
        pack_blocks(b, s->cn[i], at_mine);
        add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_MOVE,
                               .tmp_off = b->me < s->f ? c + mine : c,
                               .tmp_bytes = (int)theirs, .src_off = y});
        y += theirs;
        b->off += mine + theirs;
        add_msg(b, MPITOPO__OP_SEND, c, (int)(mine + theirs), s->cn[i], tag_comb(b, s->t));
    }
}

/* Unpacks of the part of origin x at off: allgather, one block copied to
 * every slot of x; alltoall, the j-th block to the j-th slot of x.
 * Returns the bytes of the part. */
static MPI_Aint unpack_origin(builder_t *b, int x, MPI_Aint off)
{
    MPI_Aint at = off;
    for (int i = 0; i < b->n->indegree; i++) {
        if (b->n->sources[i] != x)
            continue;
        b->unp[b->nunp++] = (mpitopo__op_t){.buf = mpitopo__slot_buf(b->recv, i),
                                            .count = mpitopo__slot_count(b->recv, i),
                                            .type = mpitopo__slot_type(b->recv, i),
                                            .kind = MPITOPO__OP_UNPACK, .tmp_off = at,
                                            .tmp_bytes = b->rb};
        at += b->alltoall ? b->rb : 0;
    }
    return b->alltoall ? at - off : b->rb;
}

static int edges_from(const mpitopo__nbr_t *n, int x)
{
    int m = 0;
    for (int i = 0; i < n->indegree; i++)
        m += n->sources[i] == x;
    return m;
}

static void recv_combined(builder_t *b, const mpitopo__comb_recv_t *v)
{
    int lo = v->s < v->f ? v->s : v->f, hi = v->s < v->f ? v->f : v->s;
    MPI_Aint r = b->off;
    MPI_Aint bytes = b->alltoall ? (MPI_Aint)(edges_from(b->n, lo) + edges_from(b->n, hi)) * b->rb
                                 : 2 * (MPI_Aint)b->rb;
    b->off += bytes;
    add_msg(b, MPITOPO__OP_RECV, r, (int)bytes, v->s, tag_comb(b, v->t));
    MPI_Aint part = unpack_origin(b, lo, r);
    unpack_origin(b, hi, r + part);
}

static int in_steps(const struct mpitopo__comb *c, int q)
{
    for (int i = 0; i < c->nsteps; i++)
        for (int j = 0; j < c->steps[i].k; j++)
            if (c->steps[i].cn[j] == q)
                return 1;
    return 0;
}

static int in_recvs(const struct mpitopo__comb *c, int s)
{
    for (int i = 0; i < c->nrecv; i++)
        if (c->recvs[i].s == s || c->recvs[i].f == s)
            return 1;
    return 0;
}

/* The direct round: every edge that combining does not carry (self
 * edges included), user buffers in place. */
static void direct_round(builder_t *b, int send_comb, int recv_comb)
{
    const mpitopo__nbr_t *n = b->n;
    const struct mpitopo__comb *c = n->comb;
    for (int i = 0; i < n->indegree; i++) {
        int s = n->sources[i];
        if (s != MPI_PROC_NULL && (s == b->me || !recv_comb || !in_recvs(c, s)))
            add(b, (mpitopo__op_t){.buf = mpitopo__slot_buf(b->recv, i),
                                   .count = mpitopo__slot_count(b->recv, i),
                                   .type = mpitopo__slot_type(b->recv, i), .peer = s,
                                   .tag = b->base, .kind = MPITOPO__OP_RECV});
    }
    for (int d = 0; d < n->outdegree; d++) {
        int q = n->destinations[d];
        if (q != MPI_PROC_NULL && (q == b->me || !send_comb || !in_steps(c, q)))
            add(b, (mpitopo__op_t){.buf = mpitopo__slot_buf(b->send, d),
                                   .count = mpitopo__slot_count(b->send, d),
                                   .type = mpitopo__slot_type(b->send, d), .peer = q,
                                   .tag = b->base, .kind = MPITOPO__OP_SEND});
    }
    close_round(b);
}

/* The pattern rounds, in order, merging our steps and our receives. */
static void pattern_rounds(builder_t *b, int send_comb, int recv_comb)
{
    const struct mpitopo__comb *c = b->n->comb;
    int si = 0, ri = 0, ns = send_comb ? c->nsteps : 0, nr = recv_comb ? c->nrecv : 0;
    while (si < ns || ri < nr) {
        int t = si < ns ? c->steps[si].t : INT_MAX;
        if (ri < nr && c->recvs[ri].t < t)
            t = c->recvs[ri].t;
        if (si < ns && c->steps[si].t == t) {
            if (b->alltoall)
                step_alltoall(b, &c->steps[si]);
            else
                step_allgather(b, &c->steps[si]);
            si++;
        }
        for (; ri < nr && c->recvs[ri].t == t; ri++)
            recv_combined(b, &c->recvs[ri]);
        close_round(b);
    }
}

static int block_bytes(const side_t *s, int *bytes, const char *func)
{
    int size, rc = PMPI_Type_size(s->type, &size);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    long long v = (long long)size * s->count;
    if (v > INT_MAX / 4)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                 "%s = %d of %d-byte elements is too large to combine (use "
                                 "the linear schedule)",
                                 s->count_name, s->count, size);
    *bytes = (int)v;
    return MPITOPO_SUCCESS;
}

int mpitopo__combine_usable(const mpitopo__nbr_t *n)
{
    return n->comb && 2 * n->comb->rounds + 1 <= 32766;
}

/* Upper bounds: a pack and a move per edge and step, messages per edge,
 * plus two per step; rounds: two per step, one per receive, two more. */
static int sizes(const mpitopo__nbr_t *n, int *nops, int *nrounds)
{
    const struct mpitopo__comb *c = n->comb;
    long long ops = 4LL * n->outdegree + 2LL * n->indegree + 3LL * c->nsteps + 4;
    long long rounds = 2LL * c->nsteps + c->nrecv + 2;
    if (ops > INT_MAX || rounds > INT_MAX)
        return MPITOPO_ERR_NOMEM;
    *nops = (int)ops;
    *nrounds = (int)rounds;
    return MPITOPO_SUCCESS;
}

static int fill(builder_t *b, int send_comb, int recv_comb, const char *func)
{
    b->unp = mpitopo__malloc_array((size_t)b->n->indegree + 1, sizeof *b->unp);
    if (!b->unp)
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for %d unpacks",
                                 b->n->indegree);
    pattern_rounds(b, send_comb, recv_comb);
    direct_round(b, send_comb, recv_comb);
    for (int i = 0; i < b->nunp; i++)
        add(b, b->unp[i]);
    if (b->nunp > 0)
        close_round(b);
    mpitopo__free(b->unp);
    b->r->nops = b->k;
    b->r->nrounds = b->round;
    return mpitopo__request_alloc_tmp(b->r, (size_t)b->off);
}

int mpitopo__combine_build(mpitopo__nbr_t *n, const side_t *send, const side_t *recv,
                           int send_comb, int recv_comb, mpitopo_request_t *out,
                           const char *func)
{
    struct mpitopo__comb *c = n->comb;
    builder_t b = {.n = n, .send = send, .recv = recv, .alltoall = send->mode == SIDE_BLOCK};
    int nops = 0, nrounds = 0, rc = PMPI_Comm_rank(n->user_comm, &b.me);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    rc = block_bytes(send, &b.sb, func);
    if (rc == MPITOPO_SUCCESS)
        rc = block_bytes(recv, &b.rb, func);
    if (rc == MPITOPO_SUCCESS && sizes(n, &nops, &nrounds) != MPITOPO_SUCCESS)
        rc = mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "schedule too large");
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int span = 2 * c->rounds + 1;
    b.base = 1 + (int)(c->seq++ % (unsigned)(32766 / span)) * span;
    b.r = mpitopo__request_new(n, nops, nrounds);
    if (!b.r)
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for %d steps", nops);
    rc = fill(&b, send_comb, recv_comb, func);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(b.r);
        return rc;
    }
    *out = b.r;
    return MPITOPO_SUCCESS;
}
