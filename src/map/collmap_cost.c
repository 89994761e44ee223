/*
 * The cost of a collective algorithm in a given rank order under the
 * distance model of collmap.c: what the MPI layer compares to keep the
 * original order when a reordering does not pay (never worse).
 *
 * A message of m bytes between leaves at distance d costs
 *     t(d, m) = d * (1 + m / 1024)
 * (0 for d = 0): one unit of latency per unit of distance, and a per-byte
 * cost that also grows with the distance, a KiB costing one latency unit
 * per distance unit. A stage costs its slowest message (the Hockney model's
 * max over a stage, now with distances), the algorithm the sum of its
 * stages. Contention inside a stage is not modelled. Stages, on new ranks:
 *   - allgather RD (p a power of two): stage s = 0..log2(p)-1, i <-> i ^ 2^s
 *     carrying 2^s blocks;
 *   - allreduce RD: the same pairs, the whole buffer at every stage;
 *   - allgather ring: p - 1 identical stages, i -> i + 1 (mod p), one block;
 *   - allgather Bruck (any p): stage k = 0..ceil(log2 p)-1, i -> i - 2^k
 *     (mod p) carrying min(2^k, p - 2^k) blocks;
 *   - binomial bcast from 0: one stage per mask m = 2^k < p, r -> r + m for
 *     r a multiple of 2m with r + m < p, the whole buffer;
 *   - binomial gather to 0: the same edges up the tree, r + m -> r carrying
 *     the min(m, p - r - m) blocks of the subtree of r + m.
 */
#include "map/collmap.h"

#include "machine/machine_internal.h"

#include <math.h>

typedef struct cost_ctx {
    const mpitopo__coll_dist_t *d;
    const int *leaf_of_rank;
    const int *old_of_new;
} cost_ctx_t;

static int leaf_of_new(const cost_ctx_t *c, int j)
{
    return c->leaf_of_rank[c->old_of_new ? c->old_of_new[j] : j];
}

static double msg(const cost_ctx_t *c, int a, int b, double bytes)
{
    double dist = mpitopo__coll_distance(c->d, leaf_of_new(c, a), leaf_of_new(c, b));
    return dist * (1.0 + bytes / 1024.0);
}

/* Recursive doubling: log2(p) stages of pairs i ^ 2^s, blocks(s) bytes. */
static double cost_rd(const cost_ctx_t *c, int p, double block, int allreduce)
{
    double total = 0;
    for (long long s = 1; s < p; s *= 2) {
        double bytes = allreduce ? block : block * (double)s, worst = 0;
        for (int i = 0; i < p; i++)
            if (i < (i ^ s))
                worst = fmax(worst, msg(c, i, (int)(i ^ s), bytes));
        total += worst;
    }
    return total;
}

static double cost_ring(const cost_ctx_t *c, int p, double block)
{
    double worst = 0;
    for (int i = 0; i < p && p > 1; i++)
        worst = fmax(worst, msg(c, i, (i + 1) % p, block));
    return worst * (p - 1);
}

static double cost_bruck(const cost_ctx_t *c, int p, double block)
{
    double total = 0;
    for (long long k = 1; k < p; k *= 2) {
        double blocks = (double)(k < p - k ? k : p - k), worst = 0;
        for (int i = 0; i < p; i++)
            worst = fmax(worst, msg(c, i, (int)((i - k + p) % p), block * blocks));
        total += worst;
    }
    return total;
}

static double cost_binomial(const cost_ctx_t *c, int p, double bytes, int gather)
{
    double total = 0;
    for (long long m = 1; m < p; m *= 2) {
        double worst = 0;
        for (long long r = 0; r + m < p; r += 2 * m) {
            double sub = (double)(m < p - r - m ? m : p - r - m);
            worst = fmax(worst, gather ? msg(c, (int)(r + m), (int)r, bytes * sub) : msg(c, (int)r, (int)(r + m), bytes));
        }
        total += worst;
    }
    return total;
}

int mpitopo__coll_cost(mpitopo__coll_alg_t alg, const mpitopo__coll_dist_t *d, int p, const int *leaf_of_rank,
                       const int *old_of_new, double block_bytes, double *cost)
{
    static const char *const fn = "mpitopo__coll_cost";
    if (!d || !d->machine || !leaf_of_rank || !cost)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "%s is NULL",
                               !d ? "d" : !d->machine ? "d->machine" : !leaf_of_rank ? "leaf_of_rank" : "cost");
    if (p < 1)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "p = %d must be >= 1", p);
    if (!(block_bytes >= 0) || isinf(block_bytes))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "block_bytes = %g must be finite and >= 0", block_bytes);
    if ((alg == MPITOPO__COLL_ALG_ALLGATHER_RD || alg == MPITOPO__COLL_ALG_ALLREDUCE_RD) && (p & (p - 1)) != 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "p = %d: recursive doubling needs a power of two", p);
    for (int r = 0; r < p; r++) {
        int j = old_of_new ? old_of_new[r] : r;
        if (j < 0 || j >= p)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "old_of_new[%d] = %d is not in [0, %d)", r, j, p);
        if (leaf_of_rank[j] < 0 || leaf_of_rank[j] >= d->machine->nleaves)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "leaf_of_rank[%d] = %d is not in [0, %d)", j,
                                   leaf_of_rank[j], d->machine->nleaves);
    }
    const cost_ctx_t c = {d, leaf_of_rank, old_of_new};
    switch (alg) {
    case MPITOPO__COLL_ALG_ALLGATHER_RD: *cost = cost_rd(&c, p, block_bytes, 0); break;
    case MPITOPO__COLL_ALG_ALLREDUCE_RD: *cost = cost_rd(&c, p, block_bytes, 1); break;
    case MPITOPO__COLL_ALG_ALLGATHER_RING: *cost = cost_ring(&c, p, block_bytes); break;
    case MPITOPO__COLL_ALG_ALLGATHER_BRUCK: *cost = cost_bruck(&c, p, block_bytes); break;
    case MPITOPO__COLL_ALG_BCAST_BINOMIAL: *cost = cost_binomial(&c, p, block_bytes, 0); break;
    case MPITOPO__COLL_ALG_GATHER_BINOMIAL: *cost = cost_binomial(&c, p, block_bytes, 1); break;
    default: return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "alg = %d is not an algorithm", (int)alg);
    }
    return MPITOPO_SUCCESS;
}
