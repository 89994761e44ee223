/*
 * Swap refinement for the tree mapper, on the true weighted cost: the
 * top-down path minimises the weight crossing each level one level at a
 * time and the bottom-up path grows groups greedily, so neither sees the
 * trade-offs between levels of different costs. A pass tries, for every
 * process, swaps with processes that sit near its neighbours (every other
 * process when there are few) and applies each swap that lowers the cost.
 */
#include "map/tree_internal.h"

#include <stdlib.h>

#define ALL_PAIRS 64     /* up to this many processes, every pair is tried */
#define CANDIDATES 8     /* otherwise, swaps tried per process and pass */
#define PASSES 2         /* passes at most: more with every pair, one on large graphs */
#define LARGE 4096

typedef struct refine {
    const mpitopo__tgraph_t *g;
    const mpitopo__ttree_t *t;
    const double *cost; /* cost of every level */
    int *slot_of;
    int *proc_at; /* process in every slot */
} refine_t;

static double slot_cost(const refine_t *r, int a, int b)
{
    if (a == b)
        return 0;
    for (int l = 0; l < r->t->nlevels; l++)
        if (r->t->unit[l][a] != r->t->unit[l][b])
            return r->cost[l];
    return 0;
}

/* Change of cost when p moves to slot b, its edge to `other` left out
 * (the edge between two swapped processes keeps its cost). */
static double move_delta(const refine_t *r, int p, int b, int other)
{
    const mpitopo__tgraph_t *g = r->g;
    int a = r->slot_of[p];
    double d = 0;
    for (int64_t e = g->offs[p]; e < g->offs[p + 1]; e++) {
        int x = g->adj[e];
        if (x != other)
            d += g->w[e] * (slot_cost(r, b, r->slot_of[x]) - slot_cost(r, a, r->slot_of[x]));
    }
    return d;
}

/* Swap p and q when that lowers the cost; 1 when swapped. */
static int try_swap(refine_t *r, int p, int q)
{
    int a = r->slot_of[p], b = r->slot_of[q];
    if (p == q || r->t->unit[r->t->nlevels > 1 ? r->t->nlevels - 2 : 0][a] ==
                      r->t->unit[r->t->nlevels > 1 ? r->t->nlevels - 2 : 0][b])
        return 0;
    double d = move_delta(r, p, b, q) + move_delta(r, q, a, p);
    if (!(d < -1e-9 * (1 + (d < 0 ? -d : d))))
        return 0;
    r->slot_of[p] = b;
    r->slot_of[q] = a;
    r->proc_at[a] = q;
    r->proc_at[b] = p;
    return 1;
}

/* Swaps of p with the processes sharing the lowest unit above the leaves
 * with one of its neighbours, at most CANDIDATES of them. */
static int near_swaps(refine_t *r, int p)
{
    const mpitopo__tgraph_t *g = r->g;
    const mpitopo__ttree_t *t = r->t;
    int lvl = t->nlevels - 2, tried = 0, swapped = 0;
    for (int64_t e = g->offs[p]; e < g->offs[p + 1] && tried < CANDIDATES; e++) {
        int u = t->unit[lvl][r->slot_of[g->adj[e]]];
        for (int s = t->first[lvl][u]; s < t->first[lvl][u + 1] && tried < CANDIDATES; s++, tried++)
            swapped += try_swap(r, p, r->proc_at[s]);
    }
    return swapped;
}

int mpitopo__tree_refine(const mpitopo__tgraph_t *g, const mpitopo__ttree_t *t, const double *cost, int *slot_of)
{
    int n = g->n;
    if (t->nlevels < 2 || n < 2)
        return MPITOPO_SUCCESS;
    refine_t r = {g, t, cost, slot_of, mpitopo__malloc_array((size_t)n, sizeof(int))};
    if (!r.proc_at)
        return MPITOPO_NOMEM("the process of every slot");
    for (int p = 0; p < n; p++)
        r.proc_at[slot_of[p]] = p;
    int swapped = 1;
    int passes = n <= ALL_PAIRS ? 6 * PASSES : n <= LARGE ? PASSES : 1;
    for (int pass = 0; pass < passes && swapped; pass++) {
        swapped = 0;
        for (int p = 0; p < n; p++)
            if (n <= ALL_PAIRS)
                for (int q = p + 1; q < n; q++)
                    swapped += try_swap(&r, p, q);
            else
                swapped += near_swaps(&r, p);
    }
    mpitopo__free(r.proc_at);
    return MPITOPO_SUCCESS;
}
