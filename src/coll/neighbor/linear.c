/*
 * The linear schedule of the neighbourhood collectives: one round in which
 * every receive and every send is posted at once, as MPI libraries do. The
 * five operations differ only in how a buffer is cut into per-neighbour
 * blocks, so each side (send, receive) is described once by a
 * `side_t` (coll_internal.h) and the schedule is built from the two. The
 * entry points of the operations are in collectives.c, the choice of a
 * schedule in select.c.
 */
#include "coll/coll_internal.h"

#include <stdint.h>

static int count_peers(const int *list, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += list[i] != MPI_PROC_NULL;
    return k;
}

mpitopo__plan_t mpitopo__plan_of(const mpitopo__nbr_t *n, int self_copy)
{
    return (mpitopo__plan_t){n->indegree, n->outdegree, n->sources, n->destinations, 0, self_copy};
}

static int send_tag(const mpitopo__nbr_t *n, const mpitopo__plan_t *p, int k)
{
    return p->shift ? MPITOPO__TAG_SHIFT : mpitopo__nbr_send_tag(n, k);
}

static int recv_tag(const mpitopo__nbr_t *n, const mpitopo__plan_t *p, int k)
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
static int pair_self(const mpitopo__nbr_t *n, const mpitopo__plan_t *p, int self, int *pair, int *taken)
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
        return MPITOPO_FAIL_AS(MPI_ERR_TRUNCATE, func,
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
static int fill(mpitopo_request_t r, const mpitopo__plan_t *p, const int *pair, const int *taken,
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

int mpitopo__linear_build(mpitopo__nbr_t *n, const mpitopo__plan_t *p, const side_t *send,
                          const side_t *recv, mpitopo_request_t *out, const char *func)
{
    int self = MPI_PROC_NULL, rc = MPI_SUCCESS;
    if (p->self_copy)
        rc = PMPI_Comm_rank(n->user_comm, &self);
    if (rc != MPI_SUCCESS)
        return mpitopo__mpi_result(func, rc);
    int *pair = mpitopo__malloc_array((size_t)(p->indeg + p->outdeg + 1), sizeof(int));
    if (!pair)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d neighbours",
                                 p->indeg + p->outdeg);
    int *taken = pair + p->outdeg;
    int npairs = pair_self(n, p, self, pair, taken);
    int nops = count_peers(p->src, p->indeg) + count_peers(p->dst, p->outdeg);
    mpitopo_request_t r = mpitopo__request_new(n, nops, npairs > 0 ? 2 : 1);
    rc = r ? fill(r, p, pair, taken, npairs, send, recv, func)
           : MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, func, "out of memory for %d messages", nops);
    mpitopo__free(pair);
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__request_release(r);
        return rc;
    }
    *out = r;
    return MPITOPO_SUCCESS;
}

static int build(mpitopo__nbr_t *n, mpitopo__opkind_t op, const side_t *send, const side_t *recv,
                 const mpitopo__choice_t *c, mpitopo_request_t *out, const char *func)
{
    (void)op;
    (void)c;
    mpitopo__plan_t p = mpitopo__plan_of(n, 0);
    return mpitopo__linear_build(n, &p, send, recv, out, func);
}

const mpitopo__sched_ops_t mpitopo__linear_ops = {.build = build};
