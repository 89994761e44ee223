/*
 * Schedules of the global collectives over point-to-point messages, run by
 * the schedule engine (request.c) on the communicator of an order
 * (gcoll_order.c). Allgather and gather move blocks packed as bytes in the
 * request's temporary buffer (slot k: the block of index k; any datatype,
 * packed with MPI_Pack on the way in and unpacked with MPI_Unpack on the way
 * out); broadcast moves the user's typed buffer; allreduce combines typed
 * buffers with MPI_Reduce_local.
 *
 * Output order (thesis 4.2.3): "initcomm" sends each process's block to the
 * process whose logical rank equals its place in the output before the
 * algorithm (one message each way), so the output is one contiguous range;
 * "endshfl" unpacks every slot to its place at the end. Ring stores every
 * block at its place as it arrives.
 */
#include "coll/global/gcoll_internal.h"

#include <limits.h>
#include <string.h>

/* ---- A growable list of steps, cut into rounds ---- */

typedef struct sb {
    mpitopo__op_t *ops;
    int n, cap;
    int *rs; /* round starts */
    int nr, rcap;
    int nomem;
} sb_t;

static void sb_op(sb_t *b, mpitopo__op_t o)
{
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        mpitopo__op_t *ops = mpitopo__realloc_array(b->ops, (size_t)cap, sizeof *ops);
        if (!ops) {
            b->nomem = 1;
            return;
        }
        b->ops = ops;
        b->cap = cap;
    }
    b->ops[b->n++] = o;
}

/* Start a new round (the steps added next belong to it). */
static void sb_round(sb_t *b)
{
    if (b->nr + 1 >= b->rcap) {
        int cap = b->rcap ? 2 * b->rcap : 16;
        int *rs = mpitopo__realloc_array(b->rs, (size_t)cap, sizeof *rs);
        if (!rs) {
            b->nomem = 1;
            return;
        }
        b->rs = rs;
        b->rcap = cap;
    }
    b->rs[b->nr++] = b->n;
}

static void sb_free(sb_t *b)
{
    mpitopo__free(b->ops);
    mpitopo__free(b->rs);
}

/* The request of the steps, with tmp bytes of temporary buffer. */
static int sb_finish(sb_t *b, mpitopo__nbr_t *nbr, size_t tmp, int tag_base, int tag_span,
                     mpitopo_request_t *out, const char *func)
{
    if (b->nomem) {
        sb_free(b);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a schedule");
    }
    mpitopo_request_t r = mpitopo__request_new(nbr, b->n, b->nr);
    int rc = r ? mpitopo__request_alloc_tmp(r, tmp) : MPITOPO_ERR_NOMEM;
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(r);
        sb_free(b);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for a schedule of %d steps",
                               b->n);
    }
    if (b->n > 0)
        memcpy(r->ops, b->ops, (size_t)b->n * sizeof *b->ops);
    for (int i = 0; i < b->nr; i++)
        r->round_start[i] = b->rs[i];
    r->round_start[b->nr] = b->n;
    r->tag_base = tag_base;
    r->tag_span = tag_span;
    sb_free(b);
    *out = r;
    return MPITOPO_SUCCESS;
}

static mpitopo__op_t msg_tmp(int kind, int peer, int tag, MPI_Aint off, long long bytes)
{
    return (mpitopo__op_t){.kind = kind, .peer = peer, .tag = tag, .in_tmp = 1, .tmp_off = off,
                           .count = (int)bytes, .type = MPI_BYTE};
}

static mpitopo__op_t pack(const void *buf, int count, MPI_Datatype type, MPI_Aint off,
                          long long bytes)
{
    return (mpitopo__op_t){.kind = MPITOPO__OP_PACK, .buf = (void *)(uintptr_t)buf, .count = count,
                           .type = type, .tmp_off = off, .tmp_bytes = (int)bytes};
}

static mpitopo__op_t unpack(void *buf, int count, MPI_Datatype type, MPI_Aint off, long long bytes)
{
    return (mpitopo__op_t){.kind = MPITOPO__OP_UNPACK, .buf = buf, .count = count, .type = type,
                           .tmp_off = off, .tmp_bytes = (int)bytes};
}

static int log2floor(int p)
{
    int k = 0;
    while ((1 << (k + 1)) <= p && k < 30)
        k++;
    return k;
}

static int tags(mpitopo__nbr_t *n, int span, int *base, const char *func)
{
    return mpitopo__nbr_tags(n, span, base, func);
}

/* ---- Allgather ---- */

/*
 * The block of this process goes to slot `slot` of tmp (B bytes). initcomm
 * (and a block whose place differs from my logical rank): it is packed
 * into the staging area after the p slots, sent to the process of logical
 * rank place, and the block of logical rank me's place is received.
 * Round already open.
 */
static void init_exchange(sb_t *b, const gview_t *v, const gblock_t *in, long long B, int tag)
{
    int place = gv_old(v, v->me); /* where my block belongs: logical rank `place` */
    MPI_Aint stage = (MPI_Aint)v->p * B;
    if (place == v->me) {
        sb_op(b, pack(in->buf, in->count, in->type, (MPI_Aint)v->me * B, B));
        return;
    }
    sb_op(b, pack(in->buf, in->count, in->type, stage, B));
    sb_op(b, msg_tmp(MPITOPO__OP_RECV, gv_peer(v, gv_logical(v, v->me)), tag,
                     (MPI_Aint)v->me * B, B));
    sb_op(b, msg_tmp(MPITOPO__OP_SEND, gv_peer(v, place), tag, stage, B));
}

int mpitopo__gbuild_allgather(const gview_t *v, int alg, int order, const gblock_t *in,
                              const gblock_t *out, long long B, mpitopo_request_t *req,
                              const char *func)
{
    int p = v->p, me = v->me, base = 0, span;
    sb_t b = {0};
    int initcomm = order == MPITOPO__GO_INITCOMM && v->old_of_new;
    size_t tmp = (size_t)(p + 1) * (size_t)B;
    if (alg == MPITOPO__GA_RING) {
        span = 1;
        int rc = tags(v->nbr, span, &base, func);
        if (rc != MPITOPO_SUCCESS)
            return rc;
        sb_round(&b);
        sb_op(&b, pack(in->buf, in->count, in->type, (MPI_Aint)gv_old(v, me) * B, B));
        int next = gv_peer(v, (me + 1) % p), prev = gv_peer(v, (me - 1 + p) % p);
        for (int s = 0; s < p - 1; s++) {
            if (s > 0)
                sb_round(&b);
            int sblock = gv_old(v, (me - s + p) % p), rblock = gv_old(v, (me - s - 1 + p) % p);
            sb_op(&b, msg_tmp(MPITOPO__OP_RECV, prev, base, (MPI_Aint)rblock * B, B));
            sb_op(&b, msg_tmp(MPITOPO__OP_SEND, next, base, (MPI_Aint)sblock * B, B));
        }
        sb_round(&b);
        sb_op(&b, unpack(out->buf, p * out->count, out->type, 0, (long long)p * B));
        return sb_finish(&b, v->nbr, tmp, base, span, req, func);
    }
    int steps = p > 1 ? log2floor(p - 1) + 1 : 0;
    span = steps + 1;
    int rc = tags(v->nbr, span, &base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    sb_round(&b);
    if (alg == MPITOPO__GA_RD) {
        /* Slot k: the block of logical rank k (initcomm: of old rank k). */
        if (initcomm) {
            init_exchange(&b, v, in, B, base);
            sb_round(&b);
        } else
            sb_op(&b, pack(in->buf, in->count, in->type, (MPI_Aint)me * B, B));
        for (int k = 1, s = 1; k < p; k <<= 1, s++) {
            if (k > 1)
                sb_round(&b);
            int partner = me ^ k, mine = me & ~(k - 1), theirs = partner & ~(k - 1);
            sb_op(&b, msg_tmp(MPITOPO__OP_RECV, gv_peer(v, partner), base + s, (MPI_Aint)theirs * B,
                              (long long)k * B));
            sb_op(&b, msg_tmp(MPITOPO__OP_SEND, gv_peer(v, partner), base + s, (MPI_Aint)mine * B,
                              (long long)k * B));
        }
        sb_round(&b);
        if (initcomm || !v->old_of_new)
            /* Slot k is old rank k's block (no reordering: logical k is old k + shift = k). */
            sb_op(&b, unpack(out->buf, p * out->count, out->type, 0, (long long)p * B));
        else
            for (int k = 0; k < p; k++)
                sb_op(&b, unpack((char *)out->buf + (MPI_Aint)gv_old(v, k) * out->stride,
                                 out->count, out->type, (MPI_Aint)k * B, B));
        return sb_finish(&b, v->nbr, tmp, base, span, req, func);
    }
    /* Bruck: position i holds the block of logical rank (me + i) % p
     * (initcomm: of old rank (me + i) % p). */
    if (initcomm) {
        /* The block of old rank me lands at position 0. */
        int place = gv_old(v, me);
        MPI_Aint stage = (MPI_Aint)p * B;
        if (place == me)
            sb_op(&b, pack(in->buf, in->count, in->type, 0, B));
        else {
            sb_op(&b, pack(in->buf, in->count, in->type, stage, B));
            sb_op(&b, msg_tmp(MPITOPO__OP_RECV, gv_peer(v, gv_logical(v, me)), base, 0, B));
            sb_op(&b, msg_tmp(MPITOPO__OP_SEND, gv_peer(v, place), base, stage, B));
        }
        sb_round(&b);
    } else
        sb_op(&b, pack(in->buf, in->count, in->type, 0, B));
    for (int k = 1, s = 1; k < p; k <<= 1, s++) {
        if (k > 1)
            sb_round(&b);
        int cnt = k < p - k ? k : p - k;
        sb_op(&b, msg_tmp(MPITOPO__OP_RECV, gv_peer(v, (me + k) % p), base + s, (MPI_Aint)k * B,
                          (long long)cnt * B));
        sb_op(&b, msg_tmp(MPITOPO__OP_SEND, gv_peer(v, (me - k + p) % p), base + s, 0,
                          (long long)cnt * B));
    }
    sb_round(&b);
    if (initcomm || !v->old_of_new) {
        /* Positions 0..p-me-1 are blocks me..p-1, the rest 0..me-1. */
        sb_op(&b, unpack((char *)out->buf + (MPI_Aint)me * out->stride, (p - me) * out->count,
                         out->type, 0, (long long)(p - me) * B));
        if (me > 0)
            sb_op(&b, unpack(out->buf, me * out->count, out->type, (MPI_Aint)(p - me) * B,
                             (long long)me * B));
    } else
        for (int i = 0; i < p; i++)
            sb_op(&b, unpack((char *)out->buf + (MPI_Aint)gv_old(v, (me + i) % p) * out->stride,
                             out->count, out->type, (MPI_Aint)i * B, B));
    return sb_finish(&b, v->nbr, tmp, base, span, req, func);
}

/* ---- Allgather straight in the receive buffer ---- */

/* The copy of this process's block into its slot of the receive buffer
 * (a runtime step: the block may be of any datatype). */
typedef struct cctx {
    const void *buf;
    int count;
    MPI_Datatype type, owned;
    char *dst;
    int bytes;
} cctx_t;

static void cctx_free(void *p)
{
    cctx_t *c = p;
    if (c->owned != MPI_DATATYPE_NULL)
        PMPI_Type_free(&c->owned);
    mpitopo__free(c);
}

static int copy_in(mpitopo_request_t r, int arg)
{
    (void)arg;
    cctx_t *c = r->ctx;
    int pos = 0, rc = PMPI_Pack(c->buf, c->count, c->type, c->dst, c->bytes, &pos, MPI_COMM_SELF);
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result("MPI_Pack", rc);
}

static mpitopo__op_t msg_buf(int kind, int peer, int tag, char *buf, long long bytes)
{
    return (mpitopo__op_t){.kind = kind, .peer = peer, .tag = tag, .buf = buf, .count = (int)bytes,
                           .type = MPI_BYTE};
}

int mpitopo__gbuild_allgather_direct(const gview_t *v, int alg, int inplace, const gblock_t *in,
                                     char *rbuf, long long B, mpitopo_request_t *req,
                                     const char *func)
{
    int p = v->p, me = v->me, base, span = alg == MPITOPO__GA_RING ? 1 : (p > 1 ? log2floor(p - 1) + 2 : 1);
    int rc = tags(v->nbr, span, &base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    cctx_t *c = mpitopo__calloc(1, sizeof *c);
    if (!c)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for an allgather");
    c->owned = MPI_DATATYPE_NULL;
    c->buf = in->buf;
    c->count = in->count;
    c->type = in->type;
    c->bytes = (int)B;
    int ni, na, nd, comb;
    if (!inplace && PMPI_Type_get_envelope(in->type, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
        comb != MPI_COMBINER_NAMED) {
        rc = PMPI_Type_dup(in->type, &c->owned);
        if (rc != MPI_SUCCESS) {
            mpitopo__free(c);
            return mpitopo__mpi_result(func, rc);
        }
        c->type = c->owned;
    }
    mpitopo__op_t copy = {.kind = MPITOPO__OP_CALL, .call = copy_in, .type = MPI_BYTE};
    int place = gv_old(v, me); /* the slot of my block */
    sb_t b = {0};
    sb_round(&b);
    size_t tmp = 0;
    if (alg == MPITOPO__GA_RING) {
        /* Slots are old ranks: my block goes to slot place. */
        c->dst = rbuf + (MPI_Aint)place * B;
        if (!inplace)
            sb_op(&b, copy);
        int next = gv_peer(v, (me + 1) % p), prev = gv_peer(v, (me - 1 + p) % p);
        for (int st = 0; st < p - 1; st++) {
            if (st > 0)
                sb_round(&b);
            int sblock = gv_old(v, (me - st + p) % p), rblock = gv_old(v, (me - st - 1 + p) % p);
            sb_op(&b, msg_buf(MPITOPO__OP_RECV, prev, base, rbuf + (MPI_Aint)rblock * B, B));
            sb_op(&b, msg_buf(MPITOPO__OP_SEND, next, base, rbuf + (MPI_Aint)sblock * B, B));
        }
    } else {
        /* Recursive doubling on slots by logical rank, which initcomm (or
         * the original order) makes the old ranks' slots. */
        if (place == me) {
            c->dst = rbuf + (MPI_Aint)me * B;
            if (!inplace)
                sb_op(&b, copy);
        } else {
            char *from = rbuf + (MPI_Aint)place * B;
            if (!inplace) {
                tmp = (size_t)B;
                sb_op(&b, pack(in->buf, in->count, in->type, 0, B));
            }
            sb_op(&b, msg_buf(MPITOPO__OP_RECV, gv_peer(v, gv_logical(v, me)), base,
                              rbuf + (MPI_Aint)me * B, B));
            mpitopo__op_t snd = inplace ? msg_buf(MPITOPO__OP_SEND, gv_peer(v, place), base, from, B)
                                        : msg_tmp(MPITOPO__OP_SEND, gv_peer(v, place), base, 0, B);
            sb_op(&b, snd);
        }
        for (int k = 1, st = 1; k < p; k <<= 1, st++) {
            sb_round(&b);
            int partner = me ^ k, mine = me & ~(k - 1), theirs = partner & ~(k - 1);
            sb_op(&b, msg_buf(MPITOPO__OP_RECV, gv_peer(v, partner), base + st,
                              rbuf + (MPI_Aint)theirs * B, (long long)k * B));
            sb_op(&b, msg_buf(MPITOPO__OP_SEND, gv_peer(v, partner), base + st,
                              rbuf + (MPI_Aint)mine * B, (long long)k * B));
        }
    }
    mpitopo_request_t r;
    rc = sb_finish(&b, v->nbr, tmp, base, span, &r, func);
    if (rc != MPITOPO_SUCCESS) {
        cctx_free(c);
        return rc;
    }
    r->ctx = c;
    r->ctx_free = cctx_free;
    *req = r;
    return MPITOPO_SUCCESS;
}

/*
 * Hierarchical allgather on the duplicate of the user's communicator
 * (ranks are user ranks), on a plan (gcoll_order.c): the blocks of a node
 * gather at its leader (its lowest rank), linearly or along a binomial tree
 * over the node's gather order; the leaders exchange their nodes' blocks in
 * the leaders' order (recursive doubling when the number of nodes is a
 * power of two, else ring); each leader sends the whole result to its
 * node, linearly or along a binomial tree over the node's broadcast order.
 * tmp holds the nodes' areas in the leaders' order, each in its gather
 * order; the last round unpacks every slot to its rank (so the orders cost
 * no extra step).
 */
int mpitopo__gbuild_allgather_hier(mpitopo__nbr_t *nbr, const ghier_t *h, int p, int rank,
                                   int binomial, const gblock_t *in, const gblock_t *out,
                                   long long B, mpitopo_request_t *req, const char *func)
{
    int nn = h->nnodes, k = h->pos_of_rank[rank];
    const int *first = h->first, *slot = h->slot_rank;
    const int *mem = slot + first[k], *bmem = h->bslot + first[k];
    int L = first[k + 1] - first[k], l = 0, lb = 0;
    while (l < L && mem[l] != rank)
        l++;
    while (lb < L && bmem[lb] != rank)
        lb++;
    int leader = l == 0;
    int base, span = 3 + (nn > 1 ? log2floor(nn - 1) + 1 : 0);
    int rc = tags(nbr, span, &base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    sb_t b = {0};
    size_t tmp = (size_t)p * (size_t)B;
    MPI_Aint mine = (MPI_Aint)first[k] * B;
    /* Phase 1: gather to the leader. */
    sb_round(&b);
    sb_op(&b, pack(in->buf, in->count, in->type, mine + (MPI_Aint)l * B, B));
    if (!binomial) {
        if (leader)
            for (int j = 1; j < L; j++)
                sb_op(&b, msg_tmp(MPITOPO__OP_RECV, mem[j], base, mine + (MPI_Aint)j * B, B));
        else
            sb_op(&b, msg_tmp(MPITOPO__OP_SEND, mem[0], base, mine + (MPI_Aint)l * B, B));
    } else {
        /* Subtree of local index l: [l, l + min(lowbit(l), L - l)). */
        for (int i = 1; (l & i) == 0 && l + i < L; i <<= 1) {
            int c = l + i, sz = i < L - c ? i : L - c;
            sb_op(&b, msg_tmp(MPITOPO__OP_RECV, mem[c], base, mine + (MPI_Aint)c * B,
                              (long long)sz * B));
        }
        if (!leader) {
            int low = l & -l, sz = low < L - l ? low : L - l;
            sb_round(&b);
            sb_op(&b, msg_tmp(MPITOPO__OP_SEND, mem[l - low], base, mine + (MPI_Aint)l * B,
                              (long long)sz * B));
        }
    }
    /* Phase 2: leaders, by position. */
    if (leader && nn > 1) {
        if ((nn & (nn - 1)) == 0) {
            for (int d = 1, s = 1; d < nn; d <<= 1, s++) {
                sb_round(&b);
                int partner = k ^ d, m0 = k & ~(d - 1), t0 = partner & ~(d - 1);
                int lead = slot[first[partner]];
                sb_op(&b, msg_tmp(MPITOPO__OP_RECV, lead, base + s, (MPI_Aint)first[t0] * B,
                                  (long long)(first[t0 + d] - first[t0]) * B));
                sb_op(&b, msg_tmp(MPITOPO__OP_SEND, lead, base + s, (MPI_Aint)first[m0] * B,
                                  (long long)(first[m0 + d] - first[m0]) * B));
            }
        } else {
            int next = slot[first[(k + 1) % nn]], prev = slot[first[(k - 1 + nn) % nn]];
            for (int s = 0; s < nn - 1; s++) {
                sb_round(&b);
                int sn = (k - s + nn) % nn, rn = (k - s - 1 + nn) % nn;
                sb_op(&b, msg_tmp(MPITOPO__OP_RECV, prev, base + 1, (MPI_Aint)first[rn] * B,
                                  (long long)(first[rn + 1] - first[rn]) * B));
                sb_op(&b, msg_tmp(MPITOPO__OP_SEND, next, base + 1, (MPI_Aint)first[sn] * B,
                                  (long long)(first[sn + 1] - first[sn]) * B));
            }
        }
    }
    /* Phase 3: the whole result from the leader (bmem[0] is the leader too). */
    int t3 = base + span - 1;
    long long all = (long long)p * B;
    if (!binomial) {
        sb_round(&b);
        if (leader)
            for (int j = 1; j < L; j++)
                sb_op(&b, msg_tmp(MPITOPO__OP_SEND, bmem[j], t3, 0, all));
        else
            sb_op(&b, msg_tmp(MPITOPO__OP_RECV, bmem[0], t3, 0, all));
    } else {
        if (lb != 0) {
            sb_round(&b);
            sb_op(&b, msg_tmp(MPITOPO__OP_RECV, bmem[lb - (lb & -lb)], t3, 0, all));
        }
        int opened = 0;
        for (int i = 1; (lb & i) == 0 && lb + i < L; i <<= 1) {
            if (!opened)
                sb_round(&b);
            opened = 1;
            sb_op(&b, msg_tmp(MPITOPO__OP_SEND, bmem[lb + i], t3, 0, all));
        }
    }
    /* Out: slot j is rank slot[j]; runs of consecutive ranks unpack at once. */
    sb_round(&b);
    for (int j = 0; j < p;) {
        int e = j + 1;
        while (e < p && slot[e] == slot[e - 1] + 1)
            e++;
        sb_op(&b, unpack((char *)out->buf + (MPI_Aint)slot[j] * out->stride,
                         (e - j) * out->count, out->type, (MPI_Aint)j * B, (long long)(e - j) * B));
        j = e;
    }
    return sb_finish(&b, nbr, tmp, base, span, req, func);
}

/* ---- Broadcast ---- */

int mpitopo__gbuild_bcast(const gview_t *v, void *buf, int count, MPI_Datatype type,
                          mpitopo_request_t *req, const char *func)
{
    int p = v->p, me = v->me, base;
    int rc = tags(v->nbr, 1, &base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    sb_t b = {0};
    if (me != 0) {
        sb_round(&b);
        sb_op(&b, (mpitopo__op_t){.kind = MPITOPO__OP_RECV, .buf = buf, .count = count,
                                  .type = type, .peer = gv_peer(v, me - (me & -me)), .tag = base});
    }
    /* Children, the largest subtree first (it has the most to forward). */
    int top = 1;
    while ((me & top) == 0 && me + top < p)
        top <<= 1;
    int opened = 0;
    for (int i = top >> 1; i >= 1; i >>= 1)
        if (me + i < p && (me & i) == 0) {
            if (!opened)
                sb_round(&b);
            opened = 1;
            sb_op(&b, (mpitopo__op_t){.kind = MPITOPO__OP_SEND, .buf = buf, .count = count,
                                      .type = type, .peer = gv_peer(v, me + i), .tag = base});
        }
    return sb_finish(&b, v->nbr, 0, base, 1, req, func);
}

/* ---- Gather ---- */

int mpitopo__gbuild_gather(const gview_t *v, int order, const gblock_t *in, const gblock_t *out,
                           long long B, mpitopo_request_t *req, const char *func)
{
    int p = v->p, me = v->me, base;
    int initcomm = order == MPITOPO__GO_INITCOMM && v->old_of_new;
    int rc = tags(v->nbr, 2, &base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int low = me == 0 ? p : (me & -me), size = low < p - me ? low : p - me;
    /* Position i: logical rank me + i (initcomm: the block of old rank
     * (me + i + root) % p, root = shift of the rotation = old_of(0)). */
    sb_t b = {0};
    size_t tmp = (size_t)(size + 1) * (size_t)B;
    sb_round(&b);
    if (initcomm) {
        int root = gv_old(v, 0);
        int place = (gv_old(v, me) - root + p) % p; /* logical rank that keeps my block */
        if (place == me)
            sb_op(&b, pack(in->buf, in->count, in->type, 0, B));
        else {
            MPI_Aint stage = (MPI_Aint)size * B;
            sb_op(&b, pack(in->buf, in->count, in->type, stage, B));
            sb_op(&b, msg_tmp(MPITOPO__OP_RECV, gv_peer(v, gv_logical(v, (me + root) % p)), base,
                              0, B));
            sb_op(&b, msg_tmp(MPITOPO__OP_SEND, gv_peer(v, place), base, stage, B));
        }
        sb_round(&b);
    } else
        sb_op(&b, pack(in->buf, in->count, in->type, 0, B));
    for (int i = 1; i < size; i <<= 1) {
        int c = me + i, sz = i < p - c ? i : p - c;
        sb_op(&b, msg_tmp(MPITOPO__OP_RECV, gv_peer(v, c), base + 1, (MPI_Aint)i * B,
                          (long long)sz * B));
    }
    if (me != 0) {
        sb_round(&b);
        sb_op(&b, msg_tmp(MPITOPO__OP_SEND, gv_peer(v, me - low), base + 1, 0, (long long)size * B));
    } else {
        sb_round(&b);
        int root = gv_old(v, 0);
        if (initcomm || !v->old_of_new) {
            /* Position i is old rank (i + root) % p. */
            sb_op(&b, unpack((char *)out->buf + (MPI_Aint)root * out->stride,
                             (p - root) * out->count, out->type, 0, (long long)(p - root) * B));
            if (root > 0)
                sb_op(&b, unpack(out->buf, root * out->count, out->type,
                                 (MPI_Aint)(p - root) * B, (long long)root * B));
        } else
            for (int i = 0; i < p; i++)
                sb_op(&b, unpack((char *)out->buf + (MPI_Aint)gv_old(v, i) * out->stride,
                                 out->count, out->type, (MPI_Aint)i * B, B));
    }
    return sb_finish(&b, v->nbr, tmp, base, 2, req, func);
}

/* ---- Allreduce ---- */

typedef struct rctx {
    const void *sendbuf; /* NULL: in place */
    void *recvbuf;
    char *in;            /* received operand (count elements, lower bound applied) */
    char *scratch;       /* packed copy, count * size bytes */
    int scratch_bytes;
    int count;
    MPI_Datatype type, owned;
    MPI_Op op;
} rctx_t;

static void rctx_free(void *p)
{
    rctx_t *c = p;
    if (c->owned != MPI_DATATYPE_NULL)
        PMPI_Type_free(&c->owned);
    mpitopo__free(c);
}

/* Copy a typed buffer into recvbuf through the packed scratch area. */
static int typed_copy(rctx_t *c, const void *from)
{
    int pos = 0;
    int rc = PMPI_Pack(from, c->count, c->type, c->scratch, c->scratch_bytes, &pos, MPI_COMM_SELF);
    if (rc == MPI_SUCCESS) {
        int at = 0;
        rc = PMPI_Unpack(c->scratch, c->scratch_bytes, &at, c->recvbuf, c->count, c->type,
                         MPI_COMM_SELF);
    }
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result("MPI_Pack", rc);
}

/* arg 0: copy sendbuf in; 1: acc = in op acc (in from a lower rank, or
 * a commutative op); 2: acc = acc op in (in from a higher rank). */
static int reduce_step(mpitopo_request_t r, int arg)
{
    rctx_t *c = r->ctx;
    int rc;
    if (arg == 0)
        return c->sendbuf ? typed_copy(c, c->sendbuf) : MPITOPO_SUCCESS;
    if (arg == 1)
        rc = PMPI_Reduce_local(c->in, c->recvbuf, c->count, c->type, c->op);
    else {
        rc = PMPI_Reduce_local(c->recvbuf, c->in, c->count, c->type, c->op);
        if (rc == MPI_SUCCESS)
            return typed_copy(c, c->in);
    }
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result("MPI_Reduce_local", rc);
}

int mpitopo__gbuild_allreduce(const gview_t *v, const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype type, MPI_Op op, int commute, mpitopo_request_t *req,
                              const char *func)
{
    int p = v->p, me = v->me;
    MPI_Aint lb, extent, tlb, textent;
    int size, rc = PMPI_Type_get_extent(type, &lb, &extent);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_get_true_extent(type, &tlb, &textent);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_size(type, &size);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    int pp = 1 << log2floor(p), rem = p - pp;
    int steps = log2floor(pp);
    int base, span = steps + 2;
    rc = tags(v->nbr, span, &base, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    rctx_t *c = mpitopo__calloc(1, sizeof *c);
    if (!c)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for an allreduce");
    c->sendbuf = sendbuf == MPI_IN_PLACE ? NULL : sendbuf;
    c->recvbuf = recvbuf;
    c->count = count;
    c->type = type;
    c->owned = MPI_DATATYPE_NULL;
    c->op = op;
    long long span_bytes = count > 0 ? (long long)(count - 1) * extent + textent : 0;
    long long packed = (long long)count * size;
    if (span_bytes + packed > INT_MAX) {
        mpitopo__free(c);
        return MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, func,
                               "an allreduce of %lld bytes is too large", packed);
    }
    int ni, na, nd, comb;
    rc = PMPI_Type_get_envelope(type, &ni, &na, &nd, &comb);
    if (rc == MPI_SUCCESS && comb != MPI_COMBINER_NAMED) {
        rc = PMPI_Type_dup(type, &c->owned);
        c->type = c->owned;
    }
    if (rc != MPI_SUCCESS) {
        mpitopo__free(c);
        return mpitopo__mpi_result(func, rc);
    }
    c->scratch_bytes = (int)packed;
    sb_t b = {0};
    MPI_Aint in_off = 0, scratch_off = (MPI_Aint)span_bytes;
    mpitopo__op_t call = {.kind = MPITOPO__OP_CALL, .call = reduce_step, .type = MPI_BYTE};
    /* Round 0: copy in; fold the first 2 rem processes pairwise. */
    sb_round(&b);
    call.arg = 0;
    sb_op(&b, call);
    int w = -1; /* my rank among the pp processes of recursive doubling */
    if (me < 2 * rem) {
        if (me % 2 == 0)
            sb_op(&b, (mpitopo__op_t){.kind = MPITOPO__OP_SEND, .buf = recvbuf, .count = count,
                                      .type = c->type, .peer = gv_peer(v, me + 1), .tag = base});
        else {
            sb_op(&b, (mpitopo__op_t){.kind = MPITOPO__OP_RECV, .in_tmp = 1, .tmp_off = in_off,
                                      .count = count, .type = c->type, .peer = gv_peer(v, me - 1),
                                      .tag = base});
            w = me / 2;
        }
    } else
        w = me - rem;
    int pending = w >= 0 && me < 2 * rem; /* a fold to combine (from a lower rank) */
    int pending_arg = 1;
    for (int k = 1, s = 1; w >= 0 && k < pp; k <<= 1, s++) {
        sb_round(&b);
        if (pending) {
            call.arg = pending_arg;
            sb_op(&b, call);
        }
        int pw = w ^ k, partner = pw < rem ? 2 * pw + 1 : pw + rem;
        sb_op(&b, (mpitopo__op_t){.kind = MPITOPO__OP_RECV, .in_tmp = 1, .tmp_off = in_off,
                                  .count = count, .type = c->type, .peer = gv_peer(v, partner),
                                  .tag = base + s});
        sb_op(&b, (mpitopo__op_t){.kind = MPITOPO__OP_SEND, .buf = recvbuf, .count = count,
                                  .type = c->type, .peer = gv_peer(v, partner), .tag = base + s});
        pending = 1;
        pending_arg = commute || pw < w ? 1 : 2;
    }
    /* Last round: the last combination; unfold. */
    sb_round(&b);
    if (pending) {
        call.arg = pending_arg;
        sb_op(&b, call);
    }
    if (me < 2 * rem) {
        if (me % 2 == 1)
            sb_op(&b, (mpitopo__op_t){.kind = MPITOPO__OP_SEND, .buf = recvbuf, .count = count,
                                      .type = c->type, .peer = gv_peer(v, me - 1),
                                      .tag = base + span - 1});
        else
            sb_op(&b, (mpitopo__op_t){.kind = MPITOPO__OP_RECV, .buf = recvbuf, .count = count,
                                      .type = c->type, .peer = gv_peer(v, me + 1),
                                      .tag = base + span - 1});
    }
    mpitopo_request_t r;
    rc = sb_finish(&b, v->nbr, (size_t)(span_bytes + packed), base, span, &r, func);
    if (rc != MPITOPO_SUCCESS) {
        rctx_free(c);
        return rc;
    }
    /* The received operand lies at tmp - true lower bound, so that its
     * first element's data starts at tmp. */
    c->in = r->tmp - tlb + in_off;
    c->scratch = r->tmp + scratch_off;
    for (int i = 0; i < r->nops; i++)
        if (r->ops[i].in_tmp)
            r->ops[i].tmp_off = in_off - tlb;
    r->ctx = c;
    r->ctx_free = rctx_free;
    *req = r;
    return MPITOPO_SUCCESS;
}
