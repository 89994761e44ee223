/*
 * The cost of a collective algorithm in a given rank order under the
 * distance model of collmap.c: what the MPI layer compares to keep the
 * original order when a reordering does not pay (never worse), and to
 * choose between the flat and the hierarchical allgather.
 *
 * A message of m bytes between leaves at distance d costs
 *     t(d, m) = d + w * c * m / 1024
 * (0 for d = 0): one unit of latency per unit of distance, and a per-byte
 * cost (a KiB costs one unit per unit of w) that grows with w and with c,
 * the number of messages of the same stage that leave the same unit at the
 * same level (the unit of the level where the two leaves part, around the
 * source; for a message between nodes always the node's link): they share
 * that unit's way out. w is the distance, except between nodes of a
 * machine without a network, where it stops at the distance of two nodes
 * under one switch: the levels above the node (leaf switches, racks) add
 * latency, but their links are taken to carry what their nodes send (full
 * bisection), so a byte costs the same to any other node; with a network
 * the hop count stands for the links a route shares and stays in w. So a
 * ring over ranks cyclic over nodes, where every message leaves its node,
 * pays for the node's link being shared, and a reordered one that leaves
 * each node once does not; and recursive doubling cyclic over the nodes
 * of a full-bisection fat tree costs what RDMH's order costs (the same
 * stages cross switches, in another order), so RDMH's order, which needs
 * the initComm exchange on top, is not kept there (SimGrid, 1,024 ranks:
 * it was 5-15 % slower). A stage costs its slowest message (the Hockney
 * model's max over a stage, with distances and this contention), the
 * algorithm the sum of its stages. Stages, on new ranks:
 *   - allgather RD (p a power of two): stage s = 0..log2(p)-1, i <-> i ^ 2^s
 *     carrying 2^s blocks;
 *   - allreduce RD: the same pairs, the whole buffer at every stage;
 *   - allgather ring: p - 1 identical stages, i -> i + 1 (mod p), one block;
 *   - allgather Bruck (any p): stage k = 0..ceil(log2 p)-1, i -> i - 2^k
 *     (mod p) carrying min(2^k, p - 2^k) blocks;
 *   - binomial bcast from 0: one stage per mask m = 2^k < p, r -> r + m for
 *     r a multiple of 2m with r + m < p, the whole buffer;
 *   - binomial gather to 0: the same edges up the tree, r + m -> r carrying
 *     the min(m, p - r - m) blocks of the subtree of r + m;
 *   - linear gather to 0 (bcast from 0): r -> 0 with one block (0 -> r with
 *     the whole buffer) for every r > 0, handled by the root one after the
 *     other: the sum of t(d, m) with c = 1 (Hockney's (p - 1)(alpha +
 *     m beta)), the intra-node steps of the linear hierarchical allgather.
 * Time O(stages x p x levels) plus the distances.
 */
#include "map/collmap.h"

#include "machine/machine_internal.h"

#include <math.h>

typedef struct cost_ctx {
    const mpitopo__coll_dist_t *d;
    const int *leaf_of_rank;
    const int *old_of_new;
    int *count[MPITOPO_MAX_LEVELS]; /* messages of the stage leaving each unit */
} cost_ctx_t;

/* One stage: n messages src[i] -> dst[i] (new ranks) of bytes[i]. */
typedef struct stage {
    int n;
    int *src, *dst;
    double *bytes;
    int *exit, *level; /* per message: the unit it leaves (-1: none) and its level */
} stage_t;

static int leaf_of_new(const cost_ctx_t *c, int j)
{
    return c->leaf_of_rank[c->old_of_new ? c->old_of_new[j] : j];
}

/* The level whose unit around the source a message leaves, and that unit;
 * -1 for a message to the same leaf. */
static int exit_unit(const cost_ctx_t *c, int a, int b, int *level)
{
    const mpitopo_machine_t *m = c->d->machine;
    int la = leaf_of_new(c, a), lb = leaf_of_new(c, b);
    if (la == lb)
        return -1;
    int l = mpitopo__meet(m, la, lb);
    if (m->node_level >= 0 && l < m->node_level)
        l = m->node_level;
    *level = l;
    return m->unit[l][la];
}

/* t(d, m) of message i of st, with `shared` messages sharing its way out. */
static double msg_cost(const cost_ctx_t *c, const stage_t *st, int i, int shared)
{
    const mpitopo_machine_t *m = c->d->machine;
    int la = leaf_of_new(c, st->src[i]), lb = leaf_of_new(c, st->dst[i]);
    double dist = mpitopo__coll_distance(c->d, la, lb), w = dist;
    if (!c->d->network && m->node_level >= 0 && mpitopo__meet(m, la, lb) < m->node_level)
        w = m->nlevels - m->node_level;
    return dist + w * shared * st->bytes[i] / 1024.0;
}

static double stage_cost(cost_ctx_t *c, const stage_t *st)
{
    for (int i = 0; i < st->n; i++) {
        st->exit[i] = exit_unit(c, st->src[i], st->dst[i], &st->level[i]);
        if (st->exit[i] >= 0)
            c->count[st->level[i]][st->exit[i]]++;
    }
    double worst = 0;
    for (int i = 0; i < st->n; i++)
        if (st->exit[i] >= 0)
            worst = fmax(worst, msg_cost(c, st, i, c->count[st->level[i]][st->exit[i]]));
    for (int i = 0; i < st->n; i++)
        if (st->exit[i] >= 0)
            c->count[st->level[i]][st->exit[i]] = 0;
    return worst;
}

/* A linear step: the root handles the stage's messages one after another. */
static double linear_cost(const cost_ctx_t *c, const stage_t *st)
{
    double total = 0;
    for (int i = 0; i < st->n; i++)
        if (leaf_of_new(c, st->src[i]) != leaf_of_new(c, st->dst[i]))
            total += msg_cost(c, st, i, 1);
    return total;
}

static void add(stage_t *st, long long a, long long b, double bytes)
{
    st->src[st->n] = (int)a;
    st->dst[st->n] = (int)b;
    st->bytes[st->n++] = bytes;
}

/* The algorithm's stages one after the other, summed. */
static double algorithm_cost(cost_ctx_t *c, mpitopo__coll_alg_t alg, int p, double block, stage_t *st)
{
    double total = 0;
    if (alg == MPITOPO__COLL_ALG_ALLGATHER_RING) { /* p - 1 identical stages */
        st->n = 0;
        for (long long i = 0; i < p && p > 1; i++)
            add(st, i, (i + 1) % p, block);
        return stage_cost(c, st) * (p - 1);
    }
    if (alg == MPITOPO__COLL_ALG_GATHER_LINEAR || alg == MPITOPO__COLL_ALG_BCAST_LINEAR) {
        st->n = 0;
        for (long long r = 1; r < p; r++)
            if (alg == MPITOPO__COLL_ALG_GATHER_LINEAR)
                add(st, r, 0, block);
            else
                add(st, 0, r, block);
        return linear_cost(c, st);
    }
    for (long long k = 1; k < p; k *= 2) {
        st->n = 0;
        switch (alg) {
        case MPITOPO__COLL_ALG_ALLGATHER_RD:
        case MPITOPO__COLL_ALG_ALLREDUCE_RD:
            for (long long i = 0; i < p; i++)
                add(st, i, i ^ k, alg == MPITOPO__COLL_ALG_ALLREDUCE_RD ? block : block * (double)k);
            break;
        case MPITOPO__COLL_ALG_ALLGATHER_BRUCK:
            for (long long i = 0; i < p; i++)
                add(st, i, (i - k + p) % p, block * (double)(k < p - k ? k : p - k));
            break;
        case MPITOPO__COLL_ALG_BCAST_BINOMIAL:
            for (long long r = 0; r + k < p; r += 2 * k)
                add(st, r, r + k, block);
            break;
        default: /* gather: up the same tree with the subtree's blocks */
            for (long long r = 0; r + k < p; r += 2 * k)
                add(st, r + k, r, block * (double)(k < p - r - k ? k : p - r - k));
            break;
        }
        total += stage_cost(c, st);
    }
    return total;
}

/* The scratch of one evaluation: a stage of up to p messages and the
 * per-unit message counts of every level. */
static int scratch_open(cost_ctx_t *c, stage_t *st, int p)
{
    const mpitopo_machine_t *m = c->d->machine;
    *st = (stage_t){0,
                    mpitopo__malloc_array((size_t)p, sizeof(int)),
                    mpitopo__malloc_array((size_t)p, sizeof(int)),
                    mpitopo__malloc_array((size_t)p, sizeof(double)),
                    mpitopo__malloc_array((size_t)p, sizeof(int)),
                    mpitopo__malloc_array((size_t)p, sizeof(int))};
    int rc = st->src && st->dst && st->bytes && st->exit && st->level ? MPITOPO_SUCCESS : MPITOPO_NOMEM("a stage");
    for (int l = 0; l < m->nlevels && rc == MPITOPO_SUCCESS; l++)
        if (!(c->count[l] = mpitopo__calloc((size_t)m->nunits[l], sizeof *c->count[l])))
            rc = MPITOPO_NOMEM("the message counts");
    return rc;
}

static void scratch_close(cost_ctx_t *c, stage_t *st)
{
    for (int l = 0; l < c->d->machine->nlevels; l++)
        mpitopo__free(c->count[l]);
    mpitopo__free(st->src);
    mpitopo__free(st->dst);
    mpitopo__free(st->bytes);
    mpitopo__free(st->exit);
    mpitopo__free(st->level);
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
    if ((int)alg < MPITOPO__COLL_ALG_ALLGATHER_RD || alg > MPITOPO__COLL_ALG_BCAST_LINEAR)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "alg = %d is not an algorithm", (int)alg);
    cost_ctx_t c = {d, leaf_of_rank, old_of_new, {NULL}};
    stage_t st;
    int rc = scratch_open(&c, &st, p);
    if (rc == MPITOPO_SUCCESS)
        *cost = algorithm_cost(&c, alg, p, block_bytes, &st);
    scratch_close(&c, &st);
    return rc;
}

int mpitopo__coll_perm_cost(const mpitopo__coll_dist_t *d, int p, const int *leaf_of_rank, const int *old_of_new,
                            double block_bytes, double *cost)
{
    static const char *const fn = "mpitopo__coll_perm_cost";
    if (!d || !d->machine || !leaf_of_rank || !old_of_new || !cost)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "an argument is NULL");
    if (p < 1 || !(block_bytes >= 0) || isinf(block_bytes))
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "p = %d, block_bytes = %g", p, block_bytes);
    const mpitopo_machine_t *m = d->machine;
    cost_ctx_t c = {d, leaf_of_rank, old_of_new, {NULL}};
    stage_t st;
    int rc = scratch_open(&c, &st, p);
    int *new_of_old = mpitopo__malloc_array((size_t)p, sizeof(int));
    if (rc == MPITOPO_SUCCESS && !new_of_old)
        rc = MPITOPO_NOMEM("the inverse order");
    for (int r = 0; r < p && rc == MPITOPO_SUCCESS; r++) {
        if (old_of_new[r] < 0 || old_of_new[r] >= p || leaf_of_rank[old_of_new[r]] < 0 ||
            leaf_of_rank[old_of_new[r]] >= m->nleaves)
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "old_of_new[%d] = %d is not a rank with a leaf", r,
                                 old_of_new[r]);
        else
            new_of_old[old_of_new[r]] = r;
    }
    if (rc == MPITOPO_SUCCESS) {
        /* old rank j's block goes from the process now at new rank
         * new_of_old[j] to the process at new rank j */
        for (int j = 0; j < p; j++)
            if (new_of_old[j] != j)
                add(&st, new_of_old[j], j, block_bytes);
        *cost = stage_cost(&c, &st);
    }
    scratch_close(&c, &st);
    mpitopo__free(new_of_old);
    return rc;
}
