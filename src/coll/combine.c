/*
 * Message combining, phase 2 (Alg. 6.3): the rounds of one neighbourhood
 * collective (all five) from the cached pattern. For every pattern round
 * t, in order:
 *   round A (only if the process paired in t): swap data with the friend;
 *   round B: build and send the combined messages, receive those of t;
 * then one round of direct messages, then one round of unpacks.
 * Combined data travels packed (MPI_BYTE), so a block is its type
 * signature's size; the packed form of a homogeneous MPI is that size.
 *
 * Tags (the round-tagged protocol): every operation gets 2R + 1 tags of its
 * own from mpitopo__nbr_tags, R the largest pattern round: base for
 * direct messages, base + 2t - 1 for the swap of round t, base + 2t for
 * its combined messages. Graph tags of the linear schedule are 0, so the
 * two never meet; about 32766 / (2R + 1) operations may overlap before
 * numbers repeat.
 *
 * The v and w forms: a process forwarding its friend's blocks does not
 * know their sizes (the friend's counts and types), so their messages
 * carry a header of part sizes: the swap message is received at whatever
 * size it has (MPITOPO__OP_RECV_ANY) and a runtime step (MPITOPO__OP_CALL)
 * assembles the combined messages from it; final receivers check every
 * part against their own recvcounts and recvtypes before unpacking
 * (MPI_ERR_TRUNCATE otherwise). Layout at "The v and w forms" below. Both
 * sides always combine (auto: see mpitopo__combine_build).
 */
#include "coll/combine.h"

#include <limits.h>
#include <string.h>

struct vctx;

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
    /* The v and w forms only: */
    struct vctx *v;     /* the request's runtime state (req->ctx) */
    int *sbv, *rbv;     /* bytes of every send and receive slot */
    int nbufs;          /* growable buffers used so far */
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

static void add_pack_bytes(builder_t *b, int slot, MPI_Aint off, int bytes)
{
    add(b, (mpitopo__op_t){MPITOPO__SLOT(b->send, slot),
                           .count = mpitopo__slot_count(b->send, slot),
                           .type = mpitopo__slot_type(b->send, slot), .kind = MPITOPO__OP_PACK,
                           .tmp_off = off, .tmp_bytes = bytes});
}

static void add_pack(builder_t *b, int slot, MPI_Aint off)
{
    add_pack_bytes(b, slot, off, b->sb);
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
        b->unp[b->nunp++] = (mpitopo__op_t){MPITOPO__SLOT(b->recv, i),
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

void mpitopo__combine_messages(const mpitopo__nbr_t *n, const struct mpitopo__comb *c, int me,
                               int *combined, int *linear)
{
    int comb = c->nrecv, lin = 0;
    for (int i = 0; i < c->nsteps; i++)
        comb += 2 + c->steps[i].on_hi - c->steps[i].on_lo; /* swap both ways, combined sends */
    for (int i = 0; i < n->indegree; i++) {
        int s = n->sources[i];
        lin += s != MPI_PROC_NULL;
        comb += s != MPI_PROC_NULL && (s == me || !in_recvs(c, s));
    }
    for (int d = 0; d < n->outdegree; d++) {
        int q = n->destinations[d];
        lin += q != MPI_PROC_NULL;
        comb += q != MPI_PROC_NULL && (q == me || !in_steps(c, q));
    }
    *combined = comb;
    *linear = lin;
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
            add(b, (mpitopo__op_t){MPITOPO__SLOT(b->recv, i),
                                   .count = mpitopo__slot_count(b->recv, i),
                                   .type = mpitopo__slot_type(b->recv, i), .peer = s,
                                   .tag = b->base, .kind = MPITOPO__OP_RECV});
    }
    for (int d = 0; d < n->outdegree; d++) {
        int q = n->destinations[d];
        if (q != MPI_PROC_NULL && (q == b->me || !send_comb || !in_steps(c, q)))
            add(b, (mpitopo__op_t){MPITOPO__SLOT(b->send, d),
                                   .count = mpitopo__slot_count(b->send, d),
                                   .type = mpitopo__slot_type(b->send, d), .peer = q,
                                   .tag = b->base, .kind = MPITOPO__OP_SEND});
    }
    close_round(b);
}

/* ---- The v and w forms ----
 *
 * Message layout: a header of one int per part (its byte size, in the
 * agreed order), then the parts, packed, back to back. The swap message
 * carries our parts for the neighbours the friend serves (allgatherv: our
 * one block), in cn order, each neighbour's in our edge order; a combined
 * message to q carries the parts of min(me, f) for q, then those of max
 * (allgatherv: one block of each). Sizes of our own parts are known when
 * the schedule is built; the friend's arrive with its swap message, which
 * is received with MPITOPO__OP_RECV_ANY; a runtime step (vcombine) then
 * assembles the combined messages in a growable buffer and sets the sizes
 * of their sends. The final receiver knows every part's size from its
 * recvcounts and recvtypes: vunpack checks the header against them before
 * any unpack runs. */

typedef struct vserve {
    int mine, theirs; /* parts of the process and of its friend for this neighbour */
    int sizes;        /* ctx->sizes[sizes .. sizes + mine): byte sizes of ours */
    MPI_Aint at;      /* ours, packed in tmp */
    int bytes;        /* their total */
    int send;         /* op of the combined message */
} vserve_t;

typedef struct vstep {
    int t, f, me_first;  /* me_first: our parts go first (me < f) */
    int y, o;            /* buffers: the friend's swap message, our combined messages */
    int first, n;        /* served neighbours: ctx->serve[first .. first + n) */
    int theirs;          /* parts in the friend's swap message */
} vstep_t;

typedef struct vrecv {
    int t, s, buf; /* the combined message from s in round t, in buffer buf */
    int nparts;    /* parts in its header */
    int first, n;  /* its unpacks: ops[first .. first + n) */
    int u;         /* their slots and parts: ctx->slot[u ..], ctx->part[u ..] */
} vrecv_t;

typedef struct vctx {
    const char *func, *count_name;
    int gather;           /* allgatherv: one block per origin */
    int *sizes, nsizes;   /* byte sizes of our parts (headers we send) */
    int *slot, *part, nu; /* receive slot and header part of every unpack */
    MPI_Aint *offs;       /* scratch: part offsets of one received message */
    vstep_t *steps;
    int nsteps;
    vserve_t *serve;
    int nserve;
    vrecv_t *recvs;
    int nrecv;
} vctx_t;

static void vctx_free(void *p)
{
    vctx_t *v = p;
    if (!v)
        return;
    mpitopo__free(v->sizes);
    mpitopo__free(v->slot);
    mpitopo__free(v->offs);
    mpitopo__free(v->steps);
    mpitopo__free(v->serve);
    mpitopo__free(v->recvs);
    mpitopo__free(v);
}

static vctx_t *vctx_new(const mpitopo__nbr_t *n, const char *func, const char *count_name,
                        int gather)
{
    const struct mpitopo__comb *c = n->comb;
    vctx_t *v = mpitopo__calloc(1, sizeof *v);
    if (!v)
        return NULL;
    size_t in = (size_t)n->indegree + 1, out = (size_t)n->outdegree + 1;
    v->func = func;
    v->count_name = count_name;
    v->gather = gather;
    v->sizes = mpitopo__malloc_array(out + 2 * (size_t)c->nsteps, sizeof(int));
    v->slot = mpitopo__malloc_array(2 * in, sizeof(int));
    /* Parts of a message: those of a combined message are our in-edges;
     * those of a swap message the friend's edges to whom we serve. */
    size_t parts = in;
    for (int i = 0; i < c->nsteps; i++) {
        size_t m = 1;
        for (int j = c->steps[i].on_lo; j < c->steps[i].on_hi; j++)
            m += (size_t)c->steps[i].theirs[j];
        parts = m > parts ? m : parts;
    }
    v->offs = mpitopo__malloc_array(parts + 2, sizeof(MPI_Aint));
    v->steps = mpitopo__malloc_array((size_t)c->nsteps + 1, sizeof *v->steps);
    size_t served = 1;
    for (int i = 0; i < c->nsteps; i++)
        served += (size_t)(c->steps[i].on_hi - c->steps[i].on_lo);
    v->serve = mpitopo__malloc_array(served, sizeof *v->serve);
    v->recvs = mpitopo__malloc_array((size_t)c->nrecv + 1, sizeof *v->recvs);
    if (!v->sizes || !v->slot || !v->offs || !v->steps || !v->serve || !v->recvs) {
        vctx_free(v);
        return NULL;
    }
    v->part = v->slot + in;
    return v;
}

/* The parts of one origin for one neighbour: sizes into the header at
 * *h, data at *d; both advance. */
static void put_parts(char **h, char **d, const void *sizes, int n, const char *data,
                      size_t bytes)
{
    memcpy(*h, sizes, (size_t)n * sizeof(int));
    memcpy(*d, data, bytes);
    *h += (size_t)n * sizeof(int);
    *d += bytes;
}

/* Runtime step of round B of step `arg`: the combined messages. */
static int vcombine(mpitopo_request_t r, int arg)
{
    vctx_t *v = r->ctx;
    const vstep_t *st = &v->steps[arg];
    const mpitopo__rbuf_t *y = &r->bufs[st->y - 1];
    if (!mpitopo__parts_parse(y->p, y->len, st->theirs, v->offs))
        return mpitopo__error_at(MPI_ERR_TRUNCATE, v->func,
                                 "the %zu-byte message of combining friend rank %d (round %d) "
                                 "does not hold the %d parts expected",
                                 y->len, st->f, st->t, st->theirs);
    long long total = 0;
    for (int i = 0; i < (v->gather && st->n > 0 ? 1 : st->n); i++) {
        const vserve_t *e = &v->serve[st->first + i];
        total += (long long)(e->mine + e->theirs) * (long long)sizeof(int) + e->bytes;
    }
    total += (long long)y->len - (long long)st->theirs * (long long)sizeof(int);
    mpitopo__rbuf_t *o = total <= INT_MAX ? mpitopo__request_buf(r, st->o, (size_t)total) : NULL;
    if (!o)
        return mpitopo__error_at(total <= INT_MAX ? MPITOPO_ERR_NOMEM : MPITOPO_ERR_ARG, v->func,
                                 "cannot combine %lld bytes in round %d (use the linear "
                                 "schedule)",
                                 total, st->t);
    MPI_Aint at = 0;
    int j = 0; /* first part of the friend's for the neighbour */
    for (int i = 0; i < st->n; i++) {
        const vserve_t *e = &v->serve[st->first + i];
        mpitopo__op_t *send = &r->ops[e->send];
        if (v->gather && i > 0) { /* allgatherv: one message for all */
            *send = (mpitopo__op_t){.buf_id = st->o, .in_tmp = 1, .tmp_off = 0,
                                    .count = r->ops[v->serve[st->first].send].count,
                                    .type = MPI_BYTE, .kind = MPITOPO__OP_SEND,
                                    .peer = send->peer, .tag = send->tag};
            continue;
        }
        /* [sizes of min(me, f) | sizes of max | parts of min | parts of max] */
        size_t tb = (size_t)(v->offs[j + e->theirs] - v->offs[j]);
        int hn = e->mine + e->theirs;
        char *h = o->p + at, *d = h + (size_t)hn * sizeof(int);
        const char *their_sizes = y->p + (size_t)j * sizeof(int), *theirs = y->p + v->offs[j];
        if (!st->me_first)
            put_parts(&h, &d, their_sizes, e->theirs, theirs, tb);
        put_parts(&h, &d, v->sizes + e->sizes, e->mine, r->tmp + e->at, (size_t)e->bytes);
        if (st->me_first)
            put_parts(&h, &d, their_sizes, e->theirs, theirs, tb);
        send->buf_id = st->o;
        send->tmp_off = at;
        send->count = (int)((size_t)hn * sizeof(int) + (size_t)e->bytes + tb);
        at += send->count;
        j += e->theirs;
    }
    o->len = (size_t)at;
    return MPITOPO_SUCCESS;
}

/* Runtime step of the last round: check the combined message of receive
 * `arg` against what our receive slots hold, then aim its unpacks. */
static int vunpack(mpitopo_request_t r, int arg)
{
    vctx_t *v = r->ctx;
    const vrecv_t *e = &v->recvs[arg];
    const mpitopo__rbuf_t *m = &r->bufs[e->buf - 1];
    if (!mpitopo__parts_parse(m->p, m->len, e->nparts, v->offs))
        return mpitopo__error_at(MPI_ERR_TRUNCATE, v->func,
                                 "the %zu-byte combined message from rank %d (round %d) does "
                                 "not hold the %d parts expected (do the counts agree?)",
                                 m->len, e->s, e->t, e->nparts);
    for (int j = 0; j < e->n; j++) {
        mpitopo__op_t *u = &r->ops[e->first + j];
        int p = v->part[e->u + j], slot = v->slot[e->u + j];
        MPI_Aint got = v->offs[p + 1] - v->offs[p];
        if (got != u->tmp_bytes)
            return mpitopo__error_at(MPI_ERR_TRUNCATE, v->func,
                                     "receive block %d: %ld bytes arrived (combined, via rank "
                                     "%d), but %s[%d] = %d elements hold %d bytes",
                                     slot, (long)got, e->s, v->count_name, slot, u->count,
                                     u->tmp_bytes);
        u->buf_id = e->buf;
        u->tmp_off = v->offs[p];
    }
    return MPITOPO_SUCCESS;
}

/* The v/w form of step_allgather and step_alltoall. */
static void vstep(builder_t *b, const mpitopo__comb_step_t *s)
{
    vctx_t *v = b->v;
    const mpitopo__nbr_t *n = b->n;
    int lo = s->on_lo == 0 ? s->on_hi : 0, hi = s->on_lo == 0 ? s->k : s->on_lo;
    vstep_t *st = &v->steps[v->nsteps];
    *st = (vstep_t){.t = s->t, .f = s->f, .me_first = b->me < s->f, .y = ++b->nbufs,
                    .o = ++b->nbufs, .first = v->nserve, .n = s->on_hi - s->on_lo};
    /* Round A: [our sizes | our parts] for the neighbours f serves. */
    int h = v->nsizes;
    if (v->gather)
        v->sizes[v->nsizes++] = b->sbv[0];
    for (int i = lo; i < hi && !v->gather; i++)
        for (int d = 0; d < n->outdegree; d++)
            if (n->destinations[d] == s->cn[i])
                v->sizes[v->nsizes++] = b->sbv[d];
    int np = v->nsizes - h;
    MPI_Aint x = b->off, at = x + (MPI_Aint)np * (MPI_Aint)sizeof(int);
    add(b, (mpitopo__op_t){.buf = v->sizes + h, .count = np * (int)sizeof(int), .type = MPI_BYTE,
                           .kind = MPITOPO__OP_PACK, .tmp_off = x,
                           .tmp_bytes = np * (int)sizeof(int)});
    MPI_Aint data = at;
    if (v->gather) {
        add_pack_bytes(b, 0, at, b->sbv[0]);
        at += b->sbv[0];
    }
    for (int i = lo; i < hi && !v->gather; i++)
        for (int d = 0; d < n->outdegree; d++)
            if (n->destinations[d] == s->cn[i]) {
                add_pack_bytes(b, d, at, b->sbv[d]);
                at += b->sbv[d];
            }
    b->off = at;
    add(b, (mpitopo__op_t){.type = MPI_BYTE, .peer = s->f, .tag = tag_swap(b, s->t),
                           .kind = MPITOPO__OP_RECV_ANY, .buf_id = st->y});
    add_msg(b, MPITOPO__OP_SEND, x, (int)(at - x), s->f, tag_swap(b, s->t));
    close_round(b);
    /* Round B: our parts for the neighbours we serve, then vcombine. */
    st->theirs = 0;
    for (int i = s->on_lo; i < s->on_hi; i++) {
        vserve_t *e = &v->serve[v->nserve++];
        *e = (vserve_t){.theirs = v->gather ? 1 : s->theirs[i], .sizes = v->nsizes,
                        .at = b->off};
        if (v->gather) {
            *e = (vserve_t){.mine = 1, .theirs = 1, .sizes = h, .at = data,
                            .bytes = b->sbv[0]};
        } else {
            for (int d = 0; d < n->outdegree; d++)
                if (n->destinations[d] == s->cn[i]) {
                    v->sizes[v->nsizes++] = b->sbv[d];
                    add_pack_bytes(b, d, b->off, b->sbv[d]);
                    b->off += b->sbv[d];
                    e->mine++;
                }
            e->bytes = (int)(b->off - e->at);
        }
        st->theirs += v->gather ? 0 : e->theirs;
    }
    if (v->gather)
        st->theirs = 1;
    add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_CALL, .call = vcombine,
                           .arg = v->nsteps++});
    for (int i = 0; i < st->n; i++) {
        v->serve[st->first + i].send = b->k;
        add_msg(b, MPITOPO__OP_SEND, 0, 0, s->cn[s->on_lo + i], tag_comb(b, s->t));
    }
}

/* Unpacks of the slots from origin x: header part `part` (allgatherv)
 * or the next part each. */
static void vunpacks_from(builder_t *b, int x, int *part)
{
    vctx_t *v = b->v;
    for (int i = 0; i < b->n->indegree; i++) {
        if (b->n->sources[i] != x)
            continue;
        v->slot[v->nu] = i;
        v->part[v->nu++] = v->gather ? *part : (*part)++;
        b->unp[b->nunp++] = (mpitopo__op_t){MPITOPO__SLOT(b->recv, i),
                                            .count = mpitopo__slot_count(b->recv, i),
                                            .type = mpitopo__slot_type(b->recv, i),
                                            .kind = MPITOPO__OP_UNPACK,
                                            .tmp_bytes = b->rbv[i]};
    }
    *part += v->gather;
}

/* The v/w form of recv_combined: receive any size now, check and unpack
 * in the last round (first is an index into b->unp until fill fixes it). */
static void vrecv_combined(builder_t *b, const mpitopo__comb_recv_t *c)
{
    vctx_t *v = b->v;
    int lo = c->s < c->f ? c->s : c->f, hi = c->s < c->f ? c->f : c->s, part = 0;
    vrecv_t *e = &v->recvs[v->nrecv];
    *e = (vrecv_t){.t = c->t, .s = c->s, .buf = ++b->nbufs, .u = v->nu};
    add(b, (mpitopo__op_t){.type = MPI_BYTE, .peer = c->s, .tag = tag_comb(b, c->t),
                           .kind = MPITOPO__OP_RECV_ANY, .buf_id = e->buf});
    b->unp[b->nunp++] = (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_CALL,
                                        .call = vunpack, .arg = v->nrecv++};
    e->first = b->nunp;
    vunpacks_from(b, lo, &part);
    vunpacks_from(b, hi, &part);
    e->n = b->nunp - e->first;
    e->nparts = part;
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
            if (b->v)
                vstep(b, &c->steps[si]);
            else if (b->alltoall)
                step_alltoall(b, &c->steps[si]);
            else
                step_allgather(b, &c->steps[si]);
            si++;
        }
        for (; ri < nr && c->recvs[ri].t == t; ri++)
            if (b->v)
                vrecv_combined(b, &c->recvs[ri]);
            else
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

int mpitopo__combine_supports(mpitopo__opkind_t op)
{
    return op >= MPITOPO__OPK_ALLGATHER && op < MPITOPO__OPK_COUNT;
}

int mpitopo__combine_usable(const mpitopo__nbr_t *n)
{
    return n->comb && 2 * n->comb->rounds + 1 <= 32766 - 2 * n->outdegree;
}

/*
 * The rule of auto. A small message costs about the same CPU time to send
 * or receive as it takes to cross the network (LogGP: o and L of the same
 * order), so an operation's latency is about the busiest process's
 * messages plus one network latency per round: linear has one round,
 * combining 2R + 1. Combining pays when that sum is smaller; it needs
 * neighbourhoods that overlap a lot (3-D Moore), and loses on sparse
 * random graphs and 2-D Moore radius 1, where few messages are saved and
 * the rounds cost more (bench/RESULTS.md section 8).
 */
int mpitopo__combine_pays(const mpitopo__nbr_t *n)
{
    const struct mpitopo__comb *c = n->comb;
    return c && c->max_combined + 2 * c->rounds + 1 < c->max_linear + 1;
}

/* Upper bounds: a pack and a move per edge and step, messages per edge,
 * plus five per step (v/w: header, swap messages, runtime step) and two
 * per receive (v/w: its runtime step); rounds: two per step, one per
 * receive, two more. */
static int sizes(const mpitopo__nbr_t *n, int *nops, int *nrounds)
{
    const struct mpitopo__comb *c = n->comb;
    long long ops = 4LL * n->outdegree + 2LL * n->indegree + 5LL * c->nsteps + 2LL * c->nrecv + 4;
    long long rounds = 2LL * c->nsteps + c->nrecv + 2;
    if (ops > INT_MAX || rounds > INT_MAX)
        return MPITOPO_ERR_NOMEM;
    *nops = (int)ops;
    *nrounds = (int)rounds;
    return MPITOPO_SUCCESS;
}

/* The v and w forms: slot sizes and the runtime state, handed to the
 * request (req->ctx) at once so that it is freed with it. */
static int vsetup(builder_t *b, const char *func)
{
    const mpitopo__nbr_t *n = b->n;
    b->sbv = mpitopo__malloc_array((size_t)(n->outdegree + n->indegree) + 1, sizeof(int));
    if (!b->sbv)
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for %d block sizes",
                                 n->outdegree + n->indegree);
    b->rbv = b->sbv + n->outdegree;
    int rc = mpitopo__slot_bytes(b->send, n->outdegree, b->sbv, "combine", func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__slot_bytes(b->recv, n->indegree, b->rbv, "combine", func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    b->v = vctx_new(n, func, b->recv->count_name, b->send->mode == SIDE_SAME);
    if (!b->v)
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for a combining state");
    b->r->ctx = b->v;
    b->r->ctx_free = vctx_free;
    return MPITOPO_SUCCESS;
}

static int fill(builder_t *b, int send_comb, int recv_comb, const char *func)
{
    size_t nunp = (size_t)b->n->indegree + (size_t)b->n->comb->nrecv + 1;
    b->unp = mpitopo__malloc_array(nunp, sizeof *b->unp);
    if (!b->unp)
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for %d unpacks",
                                 b->n->indegree);
    pattern_rounds(b, send_comb, recv_comb);
    direct_round(b, send_comb, recv_comb);
    for (int i = 0; b->v && i < b->v->nrecv; i++)
        b->v->recvs[i].first += b->k;
    for (int i = 0; i < b->nunp; i++)
        add(b, b->unp[i]);
    if (b->nunp > 0)
        close_round(b);
    mpitopo__free(b->unp);
    b->r->nops = b->k;
    b->r->nrounds = b->round;
    int rc = mpitopo__request_bufs(b->r, b->nbufs);
    return rc == MPITOPO_SUCCESS ? mpitopo__request_alloc_tmp(b->r, (size_t)b->off) : rc;
}

int mpitopo__combine_build(mpitopo__nbr_t *n, const side_t *send, const side_t *recv,
                           int send_comb, int recv_comb, mpitopo_request_t *out,
                           const char *func)
{
    struct mpitopo__comb *c = n->comb;
    builder_t b = {.n = n, .send = send, .recv = recv, .alltoall = send->mode == SIDE_BLOCK};
    int vw = send->mode == SIDE_V || send->mode == SIDE_W || recv->mode == SIDE_V ||
             recv->mode == SIDE_W;
    int nops = 0, nrounds = 0, rc = PMPI_Comm_rank(n->user_comm, &b.me);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    if (!vw)
        rc = block_bytes(send, &b.sb, func);
    if (rc == MPITOPO_SUCCESS && !vw)
        rc = block_bytes(recv, &b.rb, func);
    if (rc == MPITOPO_SUCCESS && sizes(n, &nops, &nrounds) != MPITOPO_SUCCESS)
        rc = mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "schedule too large");
    if (rc != MPITOPO_SUCCESS)
        return rc;
    rc = mpitopo__nbr_tags(n, 2 * c->rounds + 1, &b.base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    b.r = mpitopo__request_new(n, nops, nrounds);
    if (!b.r)
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for %d steps", nops);
    /* The v and w forms combine both sides or neither: a process cannot
     * tell from its own counts what its neighbours decided (allgatherv's
     * send side has one size here, another at every receiver). */
    if (vw)
        send_comb = recv_comb = 1;
    rc = vw ? vsetup(&b, func) : MPITOPO_SUCCESS;
    if (rc == MPITOPO_SUCCESS)
        rc = fill(&b, send_comb, recv_comb, func);
    mpitopo__free(b.sbv);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(b.r);
        return rc;
    }
    *out = b.r;
    return MPITOPO_SUCCESS;
}
