/*
 * The linear schedule of the neighbourhood collectives: one round in which
 * every receive and every send is posted at once, as MPI libraries do. The
 * five operations differ only in how a buffer is cut into per-neighbour
 * blocks, so each side (send, receive) is described once by a
 * `side_t` (coll_internal.h) and the schedule is built from the two.
 * Also the entry points of the five operations, which choose between this
 * schedule and message combining (combine.c; rule at choose()).
 */
#include "coll/combine.h"

#include <stdint.h>

static const char *mode_count_name(int send, side_mode_t mode)
{
    int scalar = mode == SIDE_SAME || mode == SIDE_BLOCK;
    return send ? (scalar ? "sendcount" : "sendcounts") : (scalar ? "recvcount" : "recvcounts");
}

static int check_arrays(const side_t *s, int degree, const char *func)
{
    if (s->mode != SIDE_V && s->mode != SIDE_W)
        return MPITOPO_SUCCESS;
    const void *displs = s->mode == SIDE_V ? (const void *)s->displs : (const void *)s->bdispls;
    const char *missing = !s->counts                          ? s->count_name
                          : !displs                           ? s->displs_name
                          : s->mode == SIDE_W && !s->types    ? s->type_name
                                                              : NULL;
    if (degree > 0 && missing)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s = NULL with degree %d", missing,
                                 degree);
    return MPITOPO_SUCCESS;
}

/* A NULL buffer can only be right with a derived datatype of absolute
 * addresses (MPI_BOTTOM); with a predefined one it is a mistake. */
static int check_slot(const side_t *s, int i, const char *func)
{
    int count = mpitopo__slot_count(s, i);
    MPI_Datatype t = mpitopo__slot_type(s, i);
    int vec = s->mode == SIDE_V || s->mode == SIDE_W;
    if (count < 0)
        return vec ? mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s[%d] = %d must be >= 0",
                                       s->count_name, i, count)
                   : mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s = %d must be >= 0",
                                       s->count_name, count);
    if (t == MPI_DATATYPE_NULL)
        return s->mode == SIDE_W
                   ? mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s[%d] = MPI_DATATYPE_NULL",
                                       s->type_name, i)
                   : mpitopo__error_at(MPITOPO_ERR_ARG, func, "%s = MPI_DATATYPE_NULL",
                                       s->type_name);
    if (s->buf || count == 0)
        return MPITOPO_SUCCESS;
    int ni, na, nd, combiner, rc = PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    if (combiner != MPI_COMBINER_NAMED)
        return MPITOPO_SUCCESS;
    return vec ? mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                   "%s = NULL with %s[%d] = %d of a predefined datatype",
                                   s->buf_name, s->count_name, i, count)
               : mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                   "%s = NULL with %s = %d of a predefined datatype",
                                   s->buf_name, s->count_name, count);
}

/* Validate one side against its degree and compute the extent it needs. */
static int check_side(side_t *s, int degree, const char *func)
{
    if (s->buf == MPI_IN_PLACE)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                 "%s = MPI_IN_PLACE is not allowed in neighbourhood collectives",
                                 s->buf_name);
    int rc = check_arrays(s, degree, func);
    int slots = s->mode == SIDE_SAME && degree > 0 ? 1 : degree;
    for (int i = 0; i < slots && rc == MPITOPO_SUCCESS; i++)
        rc = check_slot(s, i, func);
    if (rc != MPITOPO_SUCCESS || degree == 0 || s->mode == SIDE_W)
        return rc;
    MPI_Aint lb;
    rc = PMPI_Type_get_extent(s->type, &lb, &s->extent);
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result(func, rc);
}

static int count_peers(const int *list, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += list[i] != MPI_PROC_NULL;
    return k;
}

/*
 * Who a schedule talks to: the neighbour lists of the communicator, or
 * (mpitopo_cart_shift_xchg) one source and one destination. self_copy:
 * messages to the calling process itself become local copies.
 */
typedef struct plan {
    int indeg, outdeg;
    const int *src, *dst;
    int shift;     /* tags: MPITOPO__TAG_SHIFT, else the neighbour tags */
    int self_copy;
} plan_t;

/* How a call runs: the values of `blocking` of the foundation, plus one. */
enum { FORM_NONBLOCKING = 0, FORM_BLOCKING = 1, FORM_PERSISTENT = 2 };

static plan_t plan_of(const mpitopo__nbr_t *n, int self_copy)
{
    return (plan_t){n->indegree, n->outdegree, n->sources, n->destinations, 0, self_copy};
}

static int send_tag(const mpitopo__nbr_t *n, const plan_t *p, int k)
{
    return p->shift ? MPITOPO__TAG_SHIFT : mpitopo__nbr_send_tag(n, k);
}

static int recv_tag(const mpitopo__nbr_t *n, const plan_t *p, int k)
{
    return p->shift ? MPITOPO__TAG_SHIFT : mpitopo__nbr_recv_tag(n, k);
}

/*
 * pair[k]: the receive slot that the block of send slot k lands in when
 * slot k goes to the calling process itself (else -1); taken[i]: receive
 * slot i is filled that way. Which slot is the one a message would match:
 * a Cartesian block k lands in block k^1 (the tags); otherwise the j-th
 * send to self matches the j-th receive from self (non-overtaking).
 * Returns the number of pairs.
 */
static int pair_self(const mpitopo__nbr_t *n, const plan_t *p, int self, int *pair, int *taken)
{
    int npairs = 0, next = 0;
    for (int i = 0; i < p->indeg; i++)
        taken[i] = 0;
    for (int k = 0; k < p->outdeg; k++) {
        pair[k] = -1;
        if (!p->self_copy || p->dst[k] != self)
            continue;
        int i = -1;
        if (n->kind == MPI_CART && !p->shift)
            i = (k ^ 1) < p->indeg && p->src[k ^ 1] == self ? k ^ 1 : -1;
        else {
            while (next < p->indeg && p->src[next] != self)
                next++;
            i = next < p->indeg ? next++ : -1;
        }
        if (i >= 0) {
            pair[k] = i;
            taken[i] = 1;
            npairs++;
        }
    }
    return npairs;
}

/* The pack of send slot k and the unpack into receive slot i, checked as
 * a message would be: the sent signature must fit the receive. */
static int fill_copy(mpitopo_request_t r, int at, int k, int i, MPI_Aint *off, const side_t *send,
                     const side_t *recv, const char *func)
{
    int scount = mpitopo__slot_count(send, k), rcount = mpitopo__slot_count(recv, i), bytes, ssize, rsize;
    MPI_Datatype stype = mpitopo__slot_type(send, k), rtype = mpitopo__slot_type(recv, i);
    int rc = PMPI_Pack_size(scount, stype, MPI_COMM_SELF, &bytes);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_size(stype, &ssize);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_size(rtype, &rsize);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    long long sent = (long long)scount * ssize, room = (long long)rcount * rsize;
    if (sent > room || (rsize > 0 && sent % rsize) || (rsize == 0 && sent > 0))
        return mpitopo__error_at(MPI_ERR_TRUNCATE, func,
                                 "send block %d to self is %lld bytes; receive block %d holds "
                                 "%lld bytes of %d-byte elements",
                                 k, sent, i, room, rsize);
    r->ops[at] = (mpitopo__op_t){MPITOPO__SLOT(send, k), .count = scount, .type = stype,
                                 .kind = MPITOPO__OP_PACK, .tmp_off = *off, .tmp_bytes = bytes};
    int ucount = rsize > 0 ? (int)(sent / rsize) : 0;
    r->ops[r->nops - 1 - (at)] = (mpitopo__op_t){MPITOPO__SLOT(recv, i), .count = ucount,
                                                  .type = rtype, .kind = MPITOPO__OP_UNPACK,
                                                  .tmp_off = *off, .tmp_bytes = bytes};
    *off += bytes;
    return MPITOPO_SUCCESS;
}

static mpitopo__op_t message(const side_t *side, int i, int peer, int tag, int kind)
{
    return (mpitopo__op_t){MPITOPO__SLOT(side, i), .count = mpitopo__slot_count(side, i),
                           .type = mpitopo__slot_type(side, i), .peer = peer, .tag = tag, .kind = kind};
}

/*
 * Round 0: packs of the blocks to self, then receives, then sends (every
 * message at once, as MPI libraries do; MPI_PROC_NULL gets nothing).
 * Round 1, when there are blocks to self: their unpacks, stored from the
 * end of ops (in reverse, which does not matter: they touch distinct
 * blocks). Unpacking only after the messages complete is the shape of a
 * combining schedule, which forwards what it received.
 */
static int fill(mpitopo_request_t r, const plan_t *p, const int *pair, const int *taken,
                int npairs, const side_t *send, const side_t *recv, const char *func)
{
    const mpitopo__nbr_t *n = r->nbr;
    int k = 0;
    MPI_Aint off = 0;
    for (int s = 0; s < p->outdeg; s++)
        if (pair[s] >= 0) {
            int rc = fill_copy(r, k++, s, pair[s], &off, send, recv, func);
            if (rc != MPITOPO_SUCCESS)
                return rc;
        }
    for (int i = 0; i < p->indeg; i++)
        if (p->src[i] != MPI_PROC_NULL && !taken[i])
            r->ops[k++] = message(recv, i, p->src[i], recv_tag(n, p, i), MPITOPO__OP_RECV);
    for (int s = 0; s < p->outdeg; s++)
        if (p->dst[s] != MPI_PROC_NULL && pair[s] < 0)
            r->ops[k++] = message(send, s, p->dst[s], send_tag(n, p, s), MPITOPO__OP_SEND);
    r->round_start[0] = 0;
    r->round_start[1] = k;
    if (npairs > 0)
        r->round_start[2] = k + npairs;
    return npairs > 0 ? mpitopo__request_alloc_tmp(r, (size_t)off) : MPITOPO_SUCCESS;
}

/* The schedule of plan p on n, not started. */
static int build(mpitopo__nbr_t *n, const plan_t *p, const side_t *send, const side_t *recv,
                 mpitopo_request_t *out, const char *func)
{
    int self = MPI_PROC_NULL, rc = MPI_SUCCESS;
    if (p->self_copy)
        rc = PMPI_Comm_rank(n->user_comm, &self);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    int *pair = mpitopo__malloc_array((size_t)(p->indeg + p->outdeg + 1), sizeof(int));
    if (!pair)
        return mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for %d neighbours",
                                 p->indeg + p->outdeg);
    int *taken = pair + p->outdeg;
    int npairs = pair_self(n, p, self, pair, taken);
    int nops = count_peers(p->src, p->indeg) + count_peers(p->dst, p->outdeg);
    mpitopo_request_t r = mpitopo__request_new(n, nops, npairs > 0 ? 2 : 1);
    rc = r ? fill(r, p, pair, taken, npairs, send, recv, func)
           : mpitopo__error_at(MPITOPO_ERR_NOMEM, func, "out of memory for %d messages", nops);
    mpitopo__free(pair);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(r);
        return rc;
    }
    *out = r;
    return MPITOPO_SUCCESS;
}

static int check_request(int form, mpitopo_request_t *request, const char *func)
{
    if (form != FORM_BLOCKING && !request)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func, "request = NULL");
    if (request)
        *request = MPITOPO_REQUEST_NULL;
    return MPITOPO_SUCCESS;
}

/* What runs: the linear schedule, combining (either side may stay
 * linear, see mpitopo__combine_build), or dimension-wise forwarding. */
typedef struct choice {
    mpitopo__sched_t sched; /* LINEAR, COMBINE or CART */
    int send_comb, recv_comb;
} choice_t;

static int build_any(mpitopo__nbr_t *n, const plan_t *p, const side_t *send, const side_t *recv,
                     const choice_t *c, mpitopo_request_t *out, const char *func)
{
    if (c->sched == MPITOPO__SCHED_COMBINE)
        return mpitopo__combine_build(n, send, recv, c->send_comb, c->recv_comb, out, func);
    if (c->sched == MPITOPO__SCHED_CART)
        return mpitopo__cart_build(n, send, recv, out, func);
    if (c->sched == MPITOPO__SCHED_NODE)
        return mpitopo__node_build(n, send, recv, out, func);
    return build(n, p, send, recv, out, func);
}

static int checked_nbr(side_t *send, side_t *recv, MPI_Comm comm, int form,
                       mpitopo_request_t *request, mpitopo__nbr_t **n, const char *func)
{
    int rc = check_request(form, request, func);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__nbr_get(comm, func, n);
    if (rc == MPITOPO_SUCCESS)
        rc = check_side(send, (*n)->outdegree, func);
    if (rc == MPITOPO_SUCCESS)
        rc = check_side(recv, (*n)->indegree, func);
    return rc;
}

static int side_bytes(const side_t *s, long long *bytes)
{
    int size, rc = PMPI_Type_size(s->type, &size);
    *bytes = (long long)size * s->count;
    return rc;
}

/* The blocks of one operation, for the cost model: block bytes of
 * allgather and alltoall (0 for the v and w forms, which have none that
 * every process shares). */
static int block_sizes(mpitopo__opkind_t op, const side_t *send, const side_t *recv,
                       long long *sb, long long *rb, const char *func)
{
    *sb = *rb = 0;
    int rc = MPI_SUCCESS;
    if (op == MPITOPO__OPK_ALLGATHER || op == MPITOPO__OPK_ALLTOALL) {
        rc = side_bytes(send, sb);
        if (rc == MPI_SUCCESS)
            rc = side_bytes(recv, rb);
    }
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result(func, rc);
}

/*
 * auto where the host MPI has neighbourhood collectives: the schedule the
 * cost model (select.c) predicts fastest, mpitopo's only where it beats
 * the host MPI's by the model's margin, else the host MPI's own call.
 *   cart: stencil communicators whose stencil forwards (Moore), blocks of
 *     at most MPITOPO__COMBINE_AUTO_BYTES (the v and w forms as small);
 *   combine: graph and dist-graph communicators; the pattern (made once,
 *     collectively, whatever the block size, so that every process takes
 *     part) gives the busiest process's messages, blocks and rounds. Where
 *     some process has a duplicate or self edge, the host MPI is never
 *     taken (MPICH delivers duplicate edges in another order than Open MPI
 *     and mpitopo): mpitopo's linear schedule stands in for it.
 * Every input is the same on every process (the stencil, the pattern's
 * maxima) or the block size, which the choice assumes every process
 * passes alike (as applications do: a HOPS pattern makes every process
 * forward for others, so neighbours agreeing is not enough).
 */
static int choose_auto(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb,
                       choice_t *c, const char *func)
{
    const mpitopo__model_t *m;
    int rc = mpitopo__model(&m, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    *c = (choice_t){MPITOPO__SCHED_MPI, 0, 0};
    double b = (double)(sb > rb ? sb : rb), keep = 1 - m->margin;
    int small = sb <= MPITOPO__COMBINE_AUTO_BYTES && rb <= MPITOPO__COMBINE_AUTO_BYTES;
    int alltoall = op != MPITOPO__OPK_ALLGATHER && op != MPITOPO__OPK_ALLGATHERV;
    if (mpitopo__cart_applies(n, op)) {
        int k, rounds, msgs;
        double blocks;
        mpitopo__cart_cost(n, alltoall, &k, &rounds, &msgs, &blocks);
        double host = mpitopo__model_time(m, 1, 2.0 * k, k * b);
        /* Forwarded blocks are copied as well as sent: twice the bytes. */
        double cart = mpitopo__model_time(m, rounds, msgs, 2 * blocks * b);
        if (small && mpitopo__cart_gains(n) && cart < keep * host)
            c->sched = MPITOPO__SCHED_CART;
        return MPITOPO_SUCCESS;
    }
    if (!mpitopo__combine_supports(op) || n->kind == MPI_CART)
        return MPITOPO_SUCCESS;
    rc = mpitopo__combine_pattern(n, func);
    if (rc != MPITOPO_SUCCESS || !n->comb)
        return rc;
    /* With a duplicate or self edge anywhere the alternative to combining
     * is mpitopo's linear schedule (as many messages as the host MPI's). */
    const struct mpitopo__comb *cb = n->comb;
    if (cb->any_duplicates)
        c->sched = MPITOPO__SCHED_LINEAR;
    if (!mpitopo__combine_usable(n) || !small)
        return MPITOPO_SUCCESS;
    /* Blocks the busiest process moves; combined ones are also copied. */
    double host = mpitopo__model_time(m, 1, cb->max_linear, (double)cb->max_blocks_linear * b);
    /* Dependent rounds of the schedule: one per hop, or a swap and a
     * combined send per pattern round plus the direct one. */
    double rounds = cb->mode == MPITOPO__COMB_HOPS ? cb->nhops + 1 : 2 * cb->rounds + 1;
    double comb = mpitopo__model_time(m, rounds, cb->max_combined,
                                      2.0 * (double)cb->max_blocks_combined * b);
    if (comb < keep * host)
        *c = (choice_t){MPITOPO__SCHED_COMBINE, 1, 1};
    return MPITOPO_SUCCESS;
}

/*
 * auto without the host MPI's neighbourhood collectives (SimGrid SMPI):
 *   cart: as above, when it sends fewer messages (Moore, not star);
 *   combine: only where the pattern saves enough messages to pay for its
 *     rounds (mpitopo__combine_pays), then each side only for blocks of
 *     at most MPITOPO__COMBINE_AUTO_BYTES (the thesis's gain is for small
 *     messages), the v and w forms whatever their sizes;
 *   else linear.
 */
static int choose_auto_p2p(mpitopo__nbr_t *n, mpitopo__opkind_t op, long long sb, long long rb,
                           choice_t *c, const char *func)
{
    int small = sb <= MPITOPO__COMBINE_AUTO_BYTES && rb <= MPITOPO__COMBINE_AUTO_BYTES;
    *c = (choice_t){MPITOPO__SCHED_LINEAR, 0, 0};
    if (mpitopo__cart_applies(n, op) && small && mpitopo__cart_gains(n)) {
        c->sched = MPITOPO__SCHED_CART;
        return MPITOPO_SUCCESS;
    }
    if (!mpitopo__combine_supports(op) || n->kind == MPI_CART)
        return MPITOPO_SUCCESS;
    int rc = mpitopo__combine_pattern(n, func);
    if (rc != MPITOPO_SUCCESS || !mpitopo__combine_usable(n) || !mpitopo__combine_pays(n))
        return rc;
    c->send_comb = sb <= MPITOPO__COMBINE_AUTO_BYTES;
    c->recv_comb = rb <= MPITOPO__COMBINE_AUTO_BYTES;
    if (c->send_comb || c->recv_comb)
        c->sched = MPITOPO__SCHED_COMBINE;
    return MPITOPO_SUCCESS;
}

/* Whether MPI's own operation may deliver differently from mpitopo's on
 * this communicator: a Cartesian one with a periodic dimension of size 1
 * or 2, where the -1 and +1 neighbours are one process and the MPI-4.0
 * erratum (which mpitopo follows) says which block lands where. The same
 * answer on every process (dims and periods are). */
static int host_may_differ(const mpitopo__nbr_t *n)
{
    for (int d = 0; n->kind == MPI_CART && d < n->indegree / 2; d++)
        if (n->sources[2 * d] != MPI_PROC_NULL && n->sources[2 * d] == n->sources[2 * d + 1])
            return 1;
    return 0;
}

/*
 * The schedule rule. A schedule asked for by name runs where it applies:
 *   mpi: the host MPI's own call (linear under SimGrid, which has none);
 *   node: all five operations; the plan is made on first use,
 *     collectively (node.c). Allgather and alltoall need one block size
 *     everywhere: where send and receive blocks differ, linear lets MPI
 *     report the mismatch (the v and w forms carry their sizes);
 *   cart: communicators made by mpitopo_cart_stencil_create whose stencil
 *     maps to distinct processes (mpitopo__cart_applies), all five;
 *   combine: graph and dist-graph communicators, all five, both sides;
 *   linear, or one that does not apply: mpitopo's linear schedule.
 * auto: choose_auto; choose_auto_p2p under SimGrid, or where the host MPI
 * may deliver otherwise (host_may_differ).
 */
static int choose(mpitopo__nbr_t *n, mpitopo__opkind_t op, mpitopo__sched_t req,
                  const side_t *send, const side_t *recv, choice_t *c, const char *func)
{
    *c = (choice_t){MPITOPO__SCHED_LINEAR, 0, 0};
    long long sb, rb;
    int rc = block_sizes(op, send, recv, &sb, &rb, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (req == MPITOPO__SCHED_AUTO)
        return mpitopo__host_available() && !host_may_differ(n)
                   ? choose_auto(n, op, sb, rb, c, func)
                   : choose_auto_p2p(n, op, sb, rb, c, func);
    if (req == MPITOPO__SCHED_MPI && mpitopo__host_available())
        c->sched = MPITOPO__SCHED_MPI;
    if (req == MPITOPO__SCHED_NODE && mpitopo__node_supports(op) && sb == rb) {
        rc = mpitopo__node_prepare(n, func);
        if (rc == MPITOPO_SUCCESS)
            c->sched = MPITOPO__SCHED_NODE;
    }
    if (req == MPITOPO__SCHED_CART && mpitopo__cart_applies(n, op))
        c->sched = MPITOPO__SCHED_CART;
    if (req == MPITOPO__SCHED_COMBINE && mpitopo__combine_supports(op) && n->kind != MPI_CART) {
        rc = mpitopo__combine_pattern(n, func);
        if (rc == MPITOPO_SUCCESS && mpitopo__combine_usable(n))
            *c = (choice_t){MPITOPO__SCHED_COMBINE, 1, 1};
    }
    return rc;
}

/* The private communicator is duplicated without blocking by the
 * nonblocking and persistent forms, so that neither blocks; every
 * schedule, the host MPI's call too, runs on it. Then c's schedule of
 * plan p (op: which host operation, for MPITOPO__SCHED_MPI), not started;
 * persistent requests keep their own datatype duplicates for all runs. */
static int build_for(mpitopo__nbr_t *n, const plan_t *p, const side_t *send, const side_t *recv,
                     const choice_t *c, mpitopo__opkind_t op, int form, mpitopo_request_t *out,
                     const char *func)
{
    int rc = mpitopo__nbr_private_comm(n, form == FORM_BLOCKING);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    mpitopo_request_t r = NULL;
    rc = c->sched == MPITOPO__SCHED_MPI ? mpitopo__host_build(n, op, send, recv, &r, func)
                                        : build_any(n, p, send, recv, c, &r, func);
    if (rc == MPITOPO_SUCCESS && form == FORM_PERSISTENT) {
        r->persistent = 1;
        rc = mpitopo__request_own_datatypes(r);
    }
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(r);
        return rc;
    }
    *out = r;
    return MPITOPO_SUCCESS;
}

/* A request that ran no step (the blocking host call): back to the cache
 * or released. */
static void unused(mpitopo_request_t r)
{
    if (r->entry)
        mpitopo__cache_put_back(r);
    else
        mpitopo__request_release(r);
}

/*
 * A new schedule for this call: choose, build (build_for), and
 * keep it in the cache (not persistent ones: each _init call owns its
 * request). A schedule that took more than one block of tags cannot be
 * given new ones and is not cached.
 */
static int make(mpitopo__nbr_t *n, mpitopo__opkind_t op, mpitopo__sched_t req, const side_t *send,
                const side_t *recv, int form, mpitopo_request_t *out, int *sched,
                const char *func)
{
    choice_t c;
    int rc = choose(n, op, req, send, recv, &c, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__sched_log(n, op, req, c.sched);
    int calls = n->tag_calls;
    plan_t p = plan_of(n, 0);
    mpitopo_request_t r;
    rc = build_for(n, &p, send, recv, &c, op, form, &r, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    if (n->tag_calls == calls + 1) {
        r->tag_base = n->last_tag_base;
        r->tag_span = n->last_tag_span;
    }
    if (form != FORM_PERSISTENT && n->tag_calls <= calls + 1)
        mpitopo__cache_put(n, op, req, send, recv, r, c.sched);
    *out = r;
    *sched = c.sched;
    return MPITOPO_SUCCESS;
}

/* Run r (cached or new; schedule sched) in its form. */
static int go(mpitopo__nbr_t *n, mpitopo_request_t r, int sched, mpitopo__opkind_t op,
              const side_t *send, const side_t *recv, int form, mpitopo_request_t *request,
              const char *func)
{
    if (sched == MPITOPO__SCHED_MPI && form == FORM_BLOCKING) {
        int rc = mpitopo__nbr_settle(n);
        if (rc == MPITOPO_SUCCESS)
            rc = mpitopo__host_run(n, op, send, recv);
        unused(r);
        return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result(func, rc);
    }
    if (form == FORM_PERSISTENT) {
        *request = r;
        return MPITOPO_SUCCESS;
    }
    int rc = mpitopo__request_start(r);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(r);
        return rc;
    }
    if (form == FORM_BLOCKING)
        return mpitopo__request_wait(&r, func);
    *request = r;
    return MPITOPO_SUCCESS;
}

/* A schedule of mpitopo's (the exchanges: never cached), built and run. */
static int launch(mpitopo__nbr_t *n, const plan_t *p, side_t *send, side_t *recv,
                  const choice_t *c, int form, mpitopo_request_t *request, const char *func)
{
    mpitopo_request_t r;
    int rc = build_for(n, p, send, recv, c, MPITOPO__OPK_ALLTOALL, form, &r, func);
    return rc == MPITOPO_SUCCESS
               ? go(n, r, c->sched, MPITOPO__OPK_ALLTOALL, send, recv, form, request, func)
               : rc;
}

/*
 * The neighbourhood collectives without a schedule choice (exchanges):
 * check, make sure the private communicator exists (or is being made),
 * build the linear schedule and start it (blocking: complete it too).
 */
static int run_x(side_t *send, side_t *recv, MPI_Comm comm, int form, int self_copy,
                 mpitopo_request_t *request, const char *func)
{
    mpitopo__nbr_t *n;
    int rc = checked_nbr(send, recv, comm, form, request, &n, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    plan_t p = plan_of(n, self_copy);
    choice_t c = {MPITOPO__SCHED_LINEAR, 0, 0};
    return launch(n, &p, send, recv, &c, form, request, func);
}

/* A handle that is neither MPI_INFO_NULL nor valid is an error; the key
 * "mpitopo_neighbor" chooses the schedule (mpitopo__sched_requested). */
static int check_info(MPI_Info info, const char *func)
{
    int nkeys, rc = info == MPI_INFO_NULL ? MPI_SUCCESS : PMPI_Info_get_nkeys(info, &nkeys);
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS
                             : mpitopo__error_at(MPITOPO_ERR_ARG, func, "info is not valid");
}

/*
 * The checks of an _init call. Only a communicator that cannot carry
 * neighbour lists fails at once (every process has the same); everything
 * else this process finds wrong, and the schedule it asks for, is agreed
 * on by every process (mpitopo__sched_agree), so that a process with a bad
 * argument or another schedule never leaves the others building theirs.
 */
static int persistent_checks(side_t *send, side_t *recv, MPI_Comm comm, mpitopo_request_t *request,
                             MPI_Info info, mpitopo__opkind_t op, mpitopo__nbr_t **n,
                             mpitopo__sched_t *req, const char *func)
{
    int local = check_request(FORM_PERSISTENT, request, func);
    int rc = mpitopo__nbr_get(comm, func, n);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    long long sb = 0, rb = 0;
    if (local == MPITOPO_SUCCESS)
        local = check_side(send, (*n)->outdegree, func);
    if (local == MPITOPO_SUCCESS)
        local = check_side(recv, (*n)->indegree, func);
    if (local == MPITOPO_SUCCESS)
        local = check_info(info, func);
    if (local == MPITOPO_SUCCESS)
        local = mpitopo__sched_requested(*n, info, req, func);
    if (local == MPITOPO_SUCCESS)
        local = block_sizes(op, send, recv, &sb, &rb, func);
    return mpitopo__sched_agree(*n, op, *req, sb, rb, local, func);
}

/* The five operations: check, take the cached schedule of an equal
 * earlier call or make one (info of an _init call first), run it. */
static int run(side_t *send, side_t *recv, MPI_Comm comm, int form, mpitopo_request_t *request,
               MPI_Info info, mpitopo__opkind_t op, const char *func)
{
    mpitopo__nbr_t *n;
    mpitopo__sched_t req = MPITOPO__SCHED_AUTO;
    int rc = form == FORM_PERSISTENT ? persistent_checks(send, recv, comm, request, info, op, &n, &req, func)
                                     : checked_nbr(send, recv, comm, form, request, &n, func);
    if (rc == MPITOPO_SUCCESS && form != FORM_PERSISTENT)
        rc = mpitopo__sched_requested(n, info, &req, func);
    mpitopo_request_t r = NULL;
    int sched = MPITOPO__SCHED_LINEAR;
    if (rc == MPITOPO_SUCCESS && form != FORM_PERSISTENT)
        rc = mpitopo__cache_get(n, op, req, send, recv, &r, &sched, func);
    if (rc == MPITOPO_SUCCESS && !r)
        rc = make(n, op, req, send, recv, form, &r, &sched, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    return go(n, r, sched, op, send, recv, form, request, func);
}

/* The sides of the five operations. */
static side_t side_scalar(int send, side_mode_t mode, const void *buf, int count,
                          MPI_Datatype type)
{
    return (side_t){.mode = mode, .which = send ? 1 : 2, .buf = buf, .count = count, .type = type,
                    .buf_name = send ? "sendbuf" : "recvbuf",
                    .count_name = mode_count_name(send, mode),
                    .type_name = send ? "sendtype" : "recvtype"};
}

static side_t side_v(int send, const void *buf, const int *counts, const int *displs,
                     MPI_Datatype type, const char *displs_name)
{
    return (side_t){.mode = SIDE_V, .which = send ? 1 : 2, .buf = buf, .counts = counts, .displs = displs,
                    .type = type, .buf_name = send ? "sendbuf" : "recvbuf",
                    .count_name = mode_count_name(send, SIDE_V), .displs_name = displs_name,
                    .type_name = send ? "sendtype" : "recvtype"};
}

static side_t side_w(int send, const void *buf, const int *counts, const MPI_Aint *displs,
                     const MPI_Datatype *types)
{
    return (side_t){.mode = SIDE_W, .which = send ? 1 : 2, .buf = buf, .counts = counts, .bdispls = displs,
                    .types = types, .buf_name = send ? "sendbuf" : "recvbuf",
                    .count_name = mode_count_name(send, SIDE_W),
                    .displs_name = send ? "sdispls" : "rdispls",
                    .type_name = send ? "sendtypes" : "recvtypes"};
}

static int allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, MPI_Comm comm, mpitopo_request_t *req, int form, MPI_Info info,
                     const char *func)
{
    side_t s = side_scalar(1, SIDE_SAME, sbuf, scount, stype);
    side_t r = side_scalar(0, SIDE_BLOCK, rbuf, rcount, rtype);
    return run(&s, &r, comm, form, req, info, MPITOPO__OPK_ALLGATHER, func);
}

static int allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm,
                      mpitopo_request_t *req, int form, MPI_Info info, const char *func)
{
    side_t s = side_scalar(1, SIDE_SAME, sbuf, scount, stype);
    side_t r = side_v(0, rbuf, rcounts, displs, rtype, "displs");
    return run(&s, &r, comm, form, req, info, MPITOPO__OPK_ALLGATHERV, func);
}

static int alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, MPI_Comm comm, mpitopo_request_t *req, int form, MPI_Info info,
                    const char *func)
{
    side_t s = side_scalar(1, SIDE_BLOCK, sbuf, scount, stype);
    side_t r = side_scalar(0, SIDE_BLOCK, rbuf, rcount, rtype);
    return run(&s, &r, comm, form, req, info, MPITOPO__OPK_ALLTOALL, func);
}

static int alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                     MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
                     MPI_Datatype rtype, MPI_Comm comm, mpitopo_request_t *req, int form, MPI_Info info,
                     const char *func)
{
    side_t s = side_v(1, sbuf, scounts, sdispls, stype, "sdispls");
    side_t r = side_v(0, rbuf, rcounts, rdispls, rtype, "rdispls");
    return run(&s, &r, comm, form, req, info, MPITOPO__OPK_ALLTOALLV, func);
}

static int alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                     const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                     const MPI_Aint *rdispls, const MPI_Datatype *rtypes, MPI_Comm comm,
                     mpitopo_request_t *req, int form, MPI_Info info, const char *func)
{
    side_t s = side_w(1, sbuf, scounts, sdispls, stypes);
    side_t r = side_w(0, rbuf, rcounts, rdispls, rtypes);
    return run(&s, &r, comm, form, req, info, MPITOPO__OPK_ALLTOALLW, func);
}

int mpitopo_neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL, 1, MPI_INFO_NULL,
                     __func__);
}

int mpitopo_ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, mpitopo_request_t *request)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                     0, MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      NULL, 1, MPI_INFO_NULL, __func__);
}

int mpitopo_ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm,
                                 mpitopo_request_t *request)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      request, 0, MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL, 1, MPI_INFO_NULL,
                    __func__);
}

int mpitopo_ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, mpitopo_request_t *request)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, 0,
                    MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm, NULL, 1, MPI_INFO_NULL, __func__);
}

int mpitopo_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                mpitopo_request_t *request)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm, request, 0, MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                               const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                               void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, NULL, 1, MPI_INFO_NULL, __func__);
}

int mpitopo_ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm,
                                mpitopo_request_t *request)
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, request, 0, MPI_INFO_NULL, __func__);
}

int mpitopo_neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Info info, mpitopo_request_t *request)
{
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                     FORM_PERSISTENT, info, __func__);
}

int mpitopo_neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                     mpitopo_request_t *request)
{
    return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      request, FORM_PERSISTENT, info, __func__);
}

int mpitopo_neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, mpitopo_request_t *request)
{
    return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
                    FORM_PERSISTENT, info, __func__);
}

int mpitopo_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    mpitopo_request_t *request)
{
    return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm, request, FORM_PERSISTENT, info, __func__);
}

int mpitopo_neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                    void *recvbuf, const int recvcounts[],
                                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                    MPI_Comm comm, MPI_Info info, mpitopo_request_t *request)
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, request, FORM_PERSISTENT, info, __func__);
}

int mpitopo_neighbor_xchg(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    side_t s = side_scalar(1, SIDE_BLOCK, sendbuf, sendcount, sendtype);
    side_t r = side_scalar(0, SIDE_BLOCK, recvbuf, recvcount, recvtype);
    return run_x(&s, &r, comm, FORM_BLOCKING, 1, NULL, __func__);
}

int mpitopo_neighbor_xchgv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    side_t s = side_v(1, sendbuf, sendcounts, sdispls, sendtype, "sdispls");
    side_t r = side_v(0, recvbuf, recvcounts, rdispls, recvtype, "rdispls");
    return run_x(&s, &r, comm, FORM_BLOCKING, 1, NULL, __func__);
}

static int shift_peers(const mpitopo__nbr_t *n, int direction, int disp, int *src, int *dst,
                       const char *func)
{
    if (n->kind != MPI_CART)
        return mpitopo__error_at(MPI_ERR_TOPOLOGY, func,
                                 "comm has a %s topology; a Cartesian communicator is required",
                                 n->kind == MPI_GRAPH ? "graph" : "dist-graph");
    int ndims = n->indegree / 2;
    if (direction < 0 || direction >= ndims)
        return mpitopo__error_at(MPITOPO_ERR_ARG, func,
                                 "direction = %d must be in [0, %d) (the number of dimensions)",
                                 direction, ndims);
    int rc = PMPI_Cart_shift(n->user_comm, direction, disp, src, dst);
    return rc == MPI_SUCCESS ? MPITOPO_SUCCESS : mpitopo__mpi_result(func, rc);
}

int mpitopo_cart_shift_xchg(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int direction,
                            int disp, MPI_Comm comm)
{
    const char *func = __func__;
    side_t s = side_scalar(1, SIDE_BLOCK, sendbuf, sendcount, sendtype);
    side_t r = side_scalar(0, SIDE_BLOCK, recvbuf, recvcount, recvtype);
    mpitopo__nbr_t *n;
    int src, dst, rc = mpitopo__nbr_get(comm, func, &n);
    if (rc == MPITOPO_SUCCESS)
        rc = shift_peers(n, direction, disp, &src, &dst, func);
    if (rc == MPITOPO_SUCCESS)
        rc = check_side(&s, 1, func);
    if (rc == MPITOPO_SUCCESS)
        rc = check_side(&r, 1, func);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    plan_t p = {1, 1, &src, &dst, 1, 1};
    choice_t c = {0, 0, 0};
    return launch(n, &p, &s, &r, &c, FORM_BLOCKING, NULL, func);
}
