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
 *
 * The HOPS pattern (combine.h) has a schedule of its own, for all five
 * operations, at "The HOPS pattern" below.
 */
#include "coll/neighbor/combine.h"

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

static void recv_combined(builder_t *b, const mpitopo__comb_recv_t *v)
{
    int lo = v->s < v->f ? v->s : v->f, hi = v->s < v->f ? v->f : v->s;
    MPI_Aint r = b->off;
    MPI_Aint bytes = b->alltoall ? (MPI_Aint)(mpitopo__combine_edges_from(b->n, lo) + mpitopo__combine_edges_from(b->n, hi)) * b->rb
                                 : 2 * (MPI_Aint)b->rb;
    b->off += bytes;
    add_msg(b, MPITOPO__OP_RECV, r, (int)bytes, v->s, tag_comb(b, v->t));
    MPI_Aint part = unpack_origin(b, lo, r);
    unpack_origin(b, hi, r + part);
}

/* The direct round: every edge that combining does not carry (self
 * edges included), user buffers in place. */
static void direct_round(builder_t *b, int send_comb, int recv_comb)
{
    const mpitopo__nbr_t *n = b->n;
    const struct mpitopo__comb *c = n->comb;
    for (int i = 0; i < n->indegree; i++) {
        int s = n->sources[i];
        if (s != MPI_PROC_NULL && (s == b->me || !recv_comb || !mpitopo__combine_in_recvs(c, s)))
            add(b, (mpitopo__op_t){MPITOPO__SLOT(b->recv, i),
                                   .count = mpitopo__slot_count(b->recv, i),
                                   .type = mpitopo__slot_type(b->recv, i), .peer = s,
                                   .tag = b->base, .kind = MPITOPO__OP_RECV});
    }
    for (int d = 0; d < n->outdegree; d++) {
        int q = n->destinations[d];
        if (q != MPI_PROC_NULL && (q == b->me || !send_comb || !mpitopo__combine_in_steps(c, q)))
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
        return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, v->func,
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
        return MPITOPO_FAIL_AS(total <= INT_MAX ? MPITOPO_ERR_NOMEM : MPITOPO_ERR_ARG, v->func,
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
        return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, v->func,
                                 "the %zu-byte combined message from rank %d (round %d) does "
                                 "not hold the %d parts expected (do the counts agree?)",
                                 m->len, e->s, e->t, e->nparts);
    for (int j = 0; j < e->n; j++) {
        mpitopo__op_t *u = &r->ops[e->first + j];
        int p = v->part[e->u + j], slot = v->slot[e->u + j];
        MPI_Aint got = v->offs[p + 1] - v->offs[p];
        if (got != u->tmp_bytes)
            return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, v->func,
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
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
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

/* ---- The HOPS pattern (combine.h) ----
 *
 * One path for all five operations: every hop message is [one int per
 * part: its byte size | the parts, packed, back to back], as the v and w
 * forms of PAIRS, since a process forwards blocks of sizes it cannot know
 * (allgatherv, alltoallv/w; for allgather and alltoall the header costs 4
 * bytes a block). Parts of a hop message: allgather(v), one per distinct
 * origin of its items (one block serves every destination it travels
 * towards: it arrives once at each holder, in the hop of the highest
 * digit of holder - origin); alltoall(v,w), one per edge, items in order,
 * an item's edges in its origin's edge order.
 *
 * Rounds: round 0 packs our blocks and exchanges the self edges; round h
 * (0..nhops-1) runs hstep(h), which parses the message of hop h - 1 and
 * assembles that of hop h, sends it to me + 2^h and receives hop h's from
 * me - 2^h (empty messages are not sent: both ends know them from the
 * pattern); round nhops runs hstep(nhops), which parses the last message
 * and checks and aims the unpacks, then the unpacks. Tags: base for self
 * edges, base + 1 + h for hop h.
 */

typedef struct hsrc {
    int g, j; /* part j of the message received in hop g; g < 0: our own block j */
} hsrc_t;

typedef struct hmsg {
    int nparts, first; /* sent: ctx->src[first ..]; received: ctx->offs[first ..] (nparts + 1) */
    int buf;           /* its growable buffer */
    int op;            /* sent: the send step */
} hmsg_t;

typedef struct hctx {
    const char *func, *count_name;
    int nhops;
    hmsg_t *out, *in;   /* nhops each */
    hsrc_t *src;        /* parts of the messages sent */
    MPI_Aint *offs;     /* part bounds of the messages received */
    MPI_Aint *own_at;   /* our blocks (one per out-edge; allgather(v): [0]), packed in tmp */
    int *own_bytes;
    int block;          /* allgather, alltoall: bytes of every block (known to all
                           processes with an edge), else -1 */
    hsrc_t *usrc;       /* source part of every unpack */
    int *uslot, nunp, ufirst; /* receive slots; the unpacks are ops[ufirst ..] */
} hctx_t;

static void hctx_free(void *p)
{
    hctx_t *h = p;
    if (!h)
        return;
    mpitopo__free(h->out);
    mpitopo__free(h->src);
    mpitopo__free(h->offs);
    mpitopo__free(h->own_at);
    mpitopo__free(h->own_bytes);
    mpitopo__free(h->usrc);
    mpitopo__free(h->uslot);
    mpitopo__free(h);
}

/* Parts of a hop message of n items. */
static int hparts(const int *items, int n, int gather)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        m += gather ? (i == 0 || items[3 * i] != items[3 * i - 3]) : items[3 * i + 2];
    return m;
}

/* First part of item (o, q) (allgather(v): of origin o) in a hop message;
 * -1 when absent. */
static int hpart_of(const int *items, int n, int gather, int o, int q)
{
    for (int i = 0, j = 0; i < n; i++) {
        int first = gather ? (i == 0 || items[3 * i] != items[3 * i - 3]) : 0;
        if (gather && first)
            j++;
        if (items[3 * i] == o && (gather || items[3 * i + 1] == q))
            return gather ? j - 1 : j;
        j += gather ? 0 : items[3 * i + 2];
    }
    return -1;
}

/* The hop in which blocks of origin o reach the calling process: the
 * highest binary digit of (me - o) mod P. */
static int harrival(int me, int o, int size)
{
    long long d = ((long long)me - o + size) % size;
    int g = -1;
    while (d) {
        d >>= 1;
        g++;
    }
    return g;
}

static hctx_t *hctx_new(const mpitopo__nbr_t *n, const struct mpitopo__comb *c, int gather,
                        const char *func, const char *count_name)
{
    hctx_t *h = mpitopo__calloc(1, sizeof *h);
    if (!h)
        return NULL;
    size_t so = 1, si = 1, out = (size_t)n->outdegree + 1, in = (size_t)n->indegree + 1;
    for (int k = 0; k < c->nhops; k++) {
        so += (size_t)hparts(c->hops[k].send, c->hops[k].nsend, gather);
        si += (size_t)hparts(c->hops[k].recv, c->hops[k].nrecv, gather) + 1;
    }
    h->func = func;
    h->count_name = count_name;
    h->nhops = c->nhops;
    h->out = mpitopo__calloc(2 * (size_t)c->nhops + 1, sizeof *h->out);
    h->in = h->out ? h->out + c->nhops : NULL;
    h->src = mpitopo__malloc_array(so, sizeof *h->src);
    h->offs = mpitopo__malloc_array(si, sizeof *h->offs);
    h->own_at = mpitopo__malloc_array(out, sizeof *h->own_at);
    h->own_bytes = mpitopo__malloc_array(out, sizeof *h->own_bytes);
    h->usrc = mpitopo__malloc_array(in, sizeof *h->usrc);
    h->uslot = mpitopo__malloc_array(in, sizeof *h->uslot);
    if (!h->out || !h->src || !h->offs || !h->own_at || !h->own_bytes || !h->usrc ||
        !h->uslot) {
        hctx_free(h);
        return NULL;
    }
    return h;
}

static MPI_Aint hsize(const hctx_t *h, hsrc_t s)
{
    if (s.g < 0)
        return h->own_bytes[s.j];
    const MPI_Aint *o = h->offs + h->in[s.g].first + s.j;
    return o[1] - o[0];
}

static const char *hdata(mpitopo_request_t r, const hctx_t *h, hsrc_t s)
{
    if (s.g < 0)
        return r->tmp + h->own_at[s.j];
    return r->bufs[h->in[s.g].buf - 1].p + h->offs[h->in[s.g].first + s.j];
}

/* The message of hop k, into its buffer; aims its send step. */
static int hassemble(mpitopo_request_t r, hctx_t *h, int k)
{
    const hmsg_t *m = &h->out[k];
    long long total = (long long)m->nparts * (long long)sizeof(int);
    for (int j = 0; j < m->nparts; j++)
        total += hsize(h, h->src[m->first + j]);
    mpitopo__rbuf_t *o = total <= INT_MAX ? mpitopo__request_buf(r, m->buf, (size_t)total) : NULL;
    if (!o)
        return MPITOPO_FAIL_AS(total <= INT_MAX ? MPITOPO_ERR_NOMEM : MPITOPO_ERR_ARG, h->func,
                                 "cannot combine %lld bytes in hop %d (use the linear "
                                 "schedule)",
                                 total, k);
    char *hd = o->p, *d = o->p + (size_t)m->nparts * sizeof(int);
    for (int j = 0; j < m->nparts; j++) {
        hsrc_t s = h->src[m->first + j];
        int bytes = (int)hsize(h, s);
        memcpy(hd + (size_t)j * sizeof(int), &bytes, sizeof(int));
        memcpy(d, hdata(r, h, s), (size_t)bytes);
        d += bytes;
    }
    o->len = (size_t)total;
    mpitopo__op_t *send = &r->ops[m->op];
    send->buf_id = m->buf;
    send->in_tmp = 1;
    send->tmp_off = 0;
    send->count = (int)total;
    return MPITOPO_SUCCESS;
}

/* Check every block that arrived for us against its receive slot and aim
 * its unpack. */
static int haim(mpitopo_request_t r, hctx_t *h)
{
    for (int u = 0; u < h->nunp; u++) {
        mpitopo__op_t *op = &r->ops[h->ufirst + u];
        MPI_Aint got = hsize(h, h->usrc[u]);
        if (got != op->tmp_bytes)
            return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, h->func,
                                     "receive block %d: %ld bytes arrived (combined), but "
                                     "%s[%d] = %d elements hold %d bytes",
                                     h->uslot[u], (long)got, h->count_name, h->uslot[u],
                                     op->count, op->tmp_bytes);
        op->buf_id = h->in[h->usrc[u].g].buf;
        op->tmp_off = h->offs[h->in[h->usrc[u].g].first + h->usrc[u].j];
    }
    return MPITOPO_SUCCESS;
}

/* Runtime step of round k: parse hop k - 1's message, then assemble hop
 * k's (k < nhops) or aim the unpacks (k == nhops). */
static int hstep(mpitopo_request_t r, int k)
{
    hctx_t *h = r->ctx;
    const hmsg_t *m = k > 0 ? &h->in[k - 1] : NULL;
    if (m && m->nparts > 0) {
        const mpitopo__rbuf_t *b = &r->bufs[m->buf - 1];
        if (!mpitopo__parts_parse(b->p, b->len, m->nparts, h->offs + m->first))
            return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, h->func,
                                     "the %zu-byte combined message of hop %d does not hold "
                                     "the %d blocks expected (do the counts agree?)",
                                     b->len, k - 1, m->nparts);
    }
    if (k == h->nhops)
        return haim(r, h);
    return h->out[k].nparts > 0 ? hassemble(r, h, k) : MPITOPO_SUCCESS;
}

/* Round 0's copies: our blocks that travel (not to ourselves), packed. */
static void hpack_own(builder_t *b, hctx_t *h, int gather)
{
    const mpitopo__nbr_t *n = b->n;
    for (int d = 0; d < n->outdegree; d++) {
        int q = n->destinations[d];
        if (q == MPI_PROC_NULL || q == b->me)
            continue;
        int j = gather ? 0 : d;
        h->own_at[j] = b->off;
        h->own_bytes[j] = b->sbv[j];
        add_pack_bytes(b, j, b->off, b->sbv[j]);
        b->off += b->sbv[j];
        if (gather)
            return;
    }
}

/* The parts of the message of hop k and where each comes from. */
static int hsources(builder_t *b, hctx_t *h, int k, int gather, int *at)
{
    const struct mpitopo__comb *c = b->n->comb;
    const mpitopo__comb_hop_t *e = &c->hops[k];
    int size = 0, rc = PMPI_Comm_size(b->n->user_comm, &size);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(h->func, rc);
    h->out[k].first = *at;
    for (int i = 0; i < e->nsend; i++) {
        int o = e->send[3 * i], q = e->send[3 * i + 1], m = e->send[3 * i + 2];
        if (gather && i > 0 && o == e->send[3 * i - 3])
            continue;
        if (o == b->me) { /* our edges to q, in edge order */
            for (int d = 0, x = 0; d < b->n->outdegree && x < (gather ? 1 : m); d++)
                if (b->n->destinations[d] == q) {
                    h->src[(*at)++] = (hsrc_t){-1, gather ? 0 : d};
                    x++;
                }
            continue;
        }
        int g = harrival(b->me, o, size);
        int j = g >= 0 && g < k ? hpart_of(c->hops[g].recv, c->hops[g].nrecv, gather, o, q) : -1;
        if (j < 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, h->func,
                                     "combining pattern: the block of rank %d for rank %d "
                                     "never reached rank %d",
                                     o, q, b->me);
        for (int x = 0; x < (gather ? 1 : m); x++)
            h->src[(*at)++] = (hsrc_t){g, j + x};
    }
    h->out[k].nparts = *at - h->out[k].first;
    return MPITOPO_SUCCESS;
}

/* The unpacks of what arrived for us in hop g: allgather(v), the block of
 * origin o into every slot of o; alltoall(v,w), o's j-th edge to us into
 * our j-th slot from o (the graph must list the same edges at both ends). */
static int hunpacks(builder_t *b, hctx_t *h, int g, int gather)
{
    const mpitopo__comb_hop_t *e = &b->n->comb->hops[g];
    for (int i = 0; i < e->nrecv; i++) {
        int o = e->recv[3 * i], m = e->recv[3 * i + 2];
        if (e->recv[3 * i + 1] != b->me) /* one item (o, me) at most */
            continue;
        int j = hpart_of(e->recv, e->nrecv, gather, o, b->me), x = 0;
        if (!gather && mpitopo__combine_edges_from(b->n, o) != m)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, h->func,
                                     "rank %d lists %d edges to rank %d, which lists %d from it",
                                     o, m, b->me, mpitopo__combine_edges_from(b->n, o));
        for (int s = 0; s < b->n->indegree; s++) {
            if (b->n->sources[s] != o)
                continue;
            h->usrc[h->nunp] = (hsrc_t){g, gather ? j : j + x++};
            h->uslot[h->nunp++] = s;
            b->unp[b->nunp++] = (mpitopo__op_t){MPITOPO__SLOT(b->recv, s),
                                                .count = mpitopo__slot_count(b->recv, s),
                                                .type = mpitopo__slot_type(b->recv, s),
                                                .kind = MPITOPO__OP_UNPACK,
                                                .tmp_bytes = b->rbv[s]};
        }
    }
    return MPITOPO_SUCCESS;
}

/* Self edges, user buffers in place (round 0). */
static void hself(builder_t *b)
{
    const mpitopo__nbr_t *n = b->n;
    for (int i = 0; i < n->indegree; i++)
        if (n->sources[i] == b->me)
            add(b, (mpitopo__op_t){MPITOPO__SLOT(b->recv, i),
                                   .count = mpitopo__slot_count(b->recv, i),
                                   .type = mpitopo__slot_type(b->recv, i), .peer = b->me,
                                   .tag = b->base, .kind = MPITOPO__OP_RECV});
    for (int d = 0; d < n->outdegree; d++)
        if (n->destinations[d] == b->me)
            add(b, (mpitopo__op_t){MPITOPO__SLOT(b->send, d),
                                   .count = mpitopo__slot_count(b->send, d),
                                   .type = mpitopo__slot_type(b->send, d), .peer = b->me,
                                   .tag = b->base, .kind = MPITOPO__OP_SEND});
}

/* Bytes of a received hop message when every block has h->block bytes. */
static int hmsg_bytes(const hctx_t *h, const hmsg_t *m)
{
    return m->nparts * ((int)sizeof(int) + h->block);
}

/* Received hop messages of known size: their buffers, sized once. */
static int hsize_bufs(mpitopo_request_t r, const hctx_t *h)
{
    for (int k = 0; h->block >= 0 && k < h->nhops; k++) {
        if (h->in[k].nparts == 0)
            continue;
        size_t bytes = (size_t)hmsg_bytes(h, &h->in[k]);
        mpitopo__rbuf_t *m = mpitopo__request_buf(r, h->in[k].buf, bytes);
        if (!m)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, h->func,
                                     "out of memory for a %zu-byte message", bytes);
        m->len = bytes;
    }
    return MPITOPO_SUCCESS;
}

/* One hop round: runtime step, send, receive. */
static void hround(builder_t *b, hctx_t *h, int k, int size)
{
    const mpitopo__comb_hop_t *e = &b->n->comb->hops[k];
    add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_CALL, .call = hstep, .arg = k});
    if (e->nsend > 0) {
        h->out[k].buf = ++b->nbufs;
        h->out[k].op = b->k;
        add_msg(b, MPITOPO__OP_SEND, 0, 0, (int)(((long long)b->me + (1LL << k)) % size),
                b->base + 1 + k);
    }
    int from = (int)(((long long)b->me - (1LL << k) % size + size) % size);
    if (e->nrecv > 0 && h->block >= 0) { /* size known: no probe (SMPI has none) */
        h->in[k].buf = ++b->nbufs;
        add(b, (mpitopo__op_t){.count = hmsg_bytes(h, &h->in[k]), .type = MPI_BYTE,
                               .peer = from, .tag = b->base + 1 + k, .kind = MPITOPO__OP_RECV,
                               .in_tmp = 1, .buf_id = h->in[k].buf});
    } else if (e->nrecv > 0) {
        h->in[k].buf = ++b->nbufs;
        add(b, (mpitopo__op_t){.type = MPI_BYTE,
                               .peer = from, .tag = b->base + 1 + k,
                               .kind = MPITOPO__OP_RECV_ANY,
                               .buf_id = h->in[k].buf});
    }
    close_round(b);
}

/* The whole HOPS schedule (sizes: mpitopo__combine_build). */
static int hfill(builder_t *b, int gather)
{
    const struct mpitopo__comb *c = b->n->comb;
    hctx_t *h = b->r->ctx;
    int size = 0, at = 0, rc = PMPI_Comm_size(b->n->user_comm, &size);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(h->func, rc);
    b->unp = mpitopo__malloc_array((size_t)b->n->indegree + 1, sizeof *b->unp);
    if (!b->unp)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, h->func, "out of memory for %d unpacks",
                                 b->n->indegree);
    for (int k = 0, p = 0; k < c->nhops; k++) {
        h->in[k].first = p;
        h->in[k].nparts = hparts(c->hops[k].recv, c->hops[k].nrecv, gather);
        p += h->in[k].nparts + 1;
    }
    hpack_own(b, h, gather);
    hself(b);
    for (int k = 0; k < c->nhops && rc == MPITOPO_SUCCESS; k++) {
        rc = hsources(b, h, k, gather, &at);
        if (rc == MPITOPO_SUCCESS)
            rc = hunpacks(b, h, k, gather);
        if (rc == MPITOPO_SUCCESS)
            hround(b, h, k, size);
    }
    if (rc == MPITOPO_SUCCESS) {
        add(b, (mpitopo__op_t){.type = MPI_BYTE, .kind = MPITOPO__OP_CALL, .call = hstep,
                               .arg = c->nhops});
        h->ufirst = b->k;
        for (int i = 0; i < b->nunp; i++)
            add(b, b->unp[i]);
        close_round(b);
    }
    mpitopo__free(b->unp);
    b->unp = NULL;
    if (rc != MPITOPO_SUCCESS)
        return rc;
    b->r->nops = b->k;
    b->r->nrounds = b->round;
    rc = mpitopo__request_bufs(b->r, b->nbufs);
    if (rc == MPITOPO_SUCCESS)
        rc = hsize_bufs(b->r, h);
    return rc == MPITOPO_SUCCESS ? mpitopo__request_alloc_tmp(b->r, (size_t)b->off) : rc;
}

/* The HOPS schedule of any of the five operations: slot sizes, the
 * runtime state (handed to the request at once, freed with it), the
 * rounds. Both sides always combine: every process forwards blocks of
 * others, so none may leave the pattern (send_comb and recv_comb do not
 * apply). */
static int hbuild(builder_t *b, const char *func)
{
    const mpitopo__nbr_t *n = b->n;
    int gather = b->send->mode == SIDE_SAME;
    b->sbv = mpitopo__malloc_array((size_t)(n->outdegree + n->indegree) + 1, sizeof(int));
    if (!b->sbv)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d block sizes",
                                 n->outdegree + n->indegree);
    b->rbv = b->sbv + n->outdegree;
    int rc = mpitopo__slot_bytes(b->send, n->outdegree, b->sbv, "combine", func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__slot_bytes(b->recv, n->indegree, b->rbv, "combine", func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    hctx_t *h = hctx_new(n, n->comb, gather, func, b->recv->count_name);
    if (!h)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a combining state");
    /* Allgather and alltoall: blocks of one size wherever an edge joins
     * two processes (MPI's matching rule), so of the same size in a
     * connected graph; a process without edges has no size to trust. */
    int vw = b->send->mode == SIDE_V || b->send->mode == SIDE_W || b->recv->mode == SIDE_V ||
             b->recv->mode == SIDE_W;
    h->block = vw ? -1 : n->indegree > 0 ? b->rbv[0] : n->outdegree > 0 ? b->sbv[0] : -1;
    b->r->ctx = h;
    b->r->ctx_free = hctx_free;
    return hfill(b, gather);
}

/* Upper bounds: a pack and a move per edge and step, messages per edge,
 * plus five per step (v/w: header, swap messages, runtime step) and two
 * per receive (v/w: its runtime step); rounds: two per step, one per
 * receive, two more. */
static int sizes(const mpitopo__nbr_t *n, int *nops, int *nrounds)
{
    const struct mpitopo__comb *c = n->comb;
    if (c->mode == MPITOPO__COMB_HOPS) { /* HOPS: see hfill */
        *nops = 2 * (n->outdegree + n->indegree) + 3 * c->nhops + 4;
        *nrounds = c->nhops + 2;
        return MPITOPO_SUCCESS;
    }
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
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d block sizes",
                                 n->outdegree + n->indegree);
    b->rbv = b->sbv + n->outdegree;
    int rc = mpitopo__slot_bytes(b->send, n->outdegree, b->sbv, "combine", func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__slot_bytes(b->recv, n->indegree, b->rbv, "combine", func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    b->v = vctx_new(n, func, b->recv->count_name, b->send->mode == SIDE_SAME);
    if (!b->v)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a combining state");
    b->r->ctx = b->v;
    b->r->ctx_free = vctx_free;
    return MPITOPO_SUCCESS;
}

static int fill(builder_t *b, int send_comb, int recv_comb, const char *func)
{
    size_t nunp = (size_t)b->n->indegree + (size_t)b->n->comb->nrecv + 1;
    b->unp = mpitopo__malloc_array(nunp, sizeof *b->unp);
    if (!b->unp)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d unpacks",
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

static int finish_build(builder_t *b, int rc, mpitopo_request_t *out)
{
    mpitopo__free(b->sbv);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(b->r);
        return rc;
    }
    *out = b->r;
    return MPITOPO_SUCCESS;
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
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "schedule too large");
    if (rc != MPITOPO_SUCCESS)
        return rc;
    rc = mpitopo__nbr_tags(n, 2 * c->rounds + 1, &b.base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    b.r = mpitopo__request_new(n, nops, nrounds);
    if (!b.r)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d steps", nops);
    if (c->mode == MPITOPO__COMB_HOPS)
        return finish_build(&b, hbuild(&b, func), out);
    /* The v and w forms combine both sides or neither: a process cannot
     * tell from its own counts what its neighbours decided (allgatherv's
     * send side has one size here, another at every receiver). */
    if (vw)
        send_comb = recv_comb = 1;
    rc = vw ? vsetup(&b, func) : MPITOPO_SUCCESS;
    if (rc == MPITOPO_SUCCESS)
        rc = fill(&b, send_comb, recv_comb, func);
    return finish_build(&b, rc, out);
}

/* Asked for by name: graph and dist-graph communicators whose pattern
 * (made here, collectively) can run, all five operations, allgather and
 * alltoall blocks small enough to combine (processes that combine share
 * neighbours, which MPI makes pass the same sizes). */
static int applies(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb, const char **why,
                   const char *func)
{
    *why = "not a graph or dist-graph communicator";
    if (!mpitopo__combine_supports(op) || n->kind == MPI_CART)
        return MPITOPO_SUCCESS;
    int rc = mpitopo__combine_pattern(n, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    *why = !mpitopo__combine_usable(n)          ? "the combining pattern needs more tags than MPI gives"
           : (sb > rb ? sb : rb) > INT_MAX / 4 ? "blocks too large to combine"
                                               : NULL;
    return MPITOPO_SUCCESS;
}

static int build(mpitopo__nbr_t *n, mpitopo__opkind_t op, const side_t *send, const side_t *recv,
                 const mpitopo__choice_t *c, mpitopo_request_t *out, const char *func)
{
    (void)op;
    return mpitopo__combine_build(n, send, recv, c->send_comb, c->recv_comb, out, func);
}

static void free_state(mpitopo__nbr_t *n)
{
    mpitopo__combine_free(n->comb);
    n->comb = NULL;
}

const mpitopo__sched_ops_t mpitopo__combine_ops = {
    .applies = applies, .build = build, .free_state = free_state};
