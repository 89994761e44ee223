/* Shared by the files of the "tree" mapper (tree.c, tree_bisect.c,
 * tree_bottomup.c): the undirected process graph and the machine tree seen
 * through the leaves in use. */
#ifndef MPITOPO_TREE_INTERNAL_H
#define MPITOPO_TREE_INTERNAL_H

#include "core/internal.h"
#include "pattern/pattern_internal.h"

/*
 * The machine restricted to the slots the processes will fill: slot s sits
 * on leaf slot_leaf[s], slots in leaf order. Level l has nunits[l] units
 * (only those holding a slot); unit k holds slots first[l][k] ..
 * first[l][k+1]-1 and unit[l][s] is the unit of slot s. The last level's
 * units are the slots themselves.
 */
typedef struct mpitopo__ttree {
    int nlevels, n;
    int *slot_leaf;
    int nunits[MPITOPO_MAX_LEVELS];
    int *first[MPITOPO_MAX_LEVELS];
    int *unit[MPITOPO_MAX_LEVELS];
} mpitopo__ttree_t;

/* The children of unit k of level l (l = -1: the root) are the units
 * [*a, *b) of level l + 1. */
static inline void mpitopo__ttree_children(const mpitopo__ttree_t *t, int l, int k, int *a, int *b)
{
    if (l < 0) {
        *a = 0;
        *b = t->nunits[0];
        return;
    }
    *a = t->unit[l + 1][t->first[l][k]];
    *b = t->unit[l + 1][t->first[l][k + 1] - 1] + 1;
}

/* Indexed max-heap of vertices keyed by key[v] (gains, connections). */
typedef struct mpitopo__heap {
    int n;
    int *h;
    int *pos; /* index of v in h, -1 when absent */
    const double *key;
} mpitopo__heap_t;

static inline void mpitopo__heap_set(mpitopo__heap_t *hp, int i, int v)
{
    hp->h[i] = v;
    hp->pos[v] = i;
}

static inline void mpitopo__heap_up(mpitopo__heap_t *hp, int i)
{
    int v = hp->h[i];
    while (i > 0 && hp->key[hp->h[(i - 1) / 2]] < hp->key[v]) {
        mpitopo__heap_set(hp, i, hp->h[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    mpitopo__heap_set(hp, i, v);
}

static inline void mpitopo__heap_down(mpitopo__heap_t *hp, int i)
{
    int v = hp->h[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= hp->n)
            break;
        if (c + 1 < hp->n && hp->key[hp->h[c + 1]] > hp->key[hp->h[c]])
            c++;
        if (hp->key[hp->h[c]] <= hp->key[v])
            break;
        mpitopo__heap_set(hp, i, hp->h[c]);
        i = c;
    }
    mpitopo__heap_set(hp, i, v);
}

static inline void mpitopo__heap_push(mpitopo__heap_t *hp, int v)
{
    mpitopo__heap_set(hp, hp->n++, v);
    mpitopo__heap_up(hp, hp->n - 1);
}

static inline void mpitopo__heap_remove(mpitopo__heap_t *hp, int v)
{
    int i = hp->pos[v];
    hp->pos[v] = -1;
    if (i != --hp->n) {
        int last = hp->h[hp->n];
        mpitopo__heap_set(hp, i, last);
        mpitopo__heap_up(hp, i);
        mpitopo__heap_down(hp, hp->pos[last]);
    }
}

static inline void mpitopo__heap_clear(mpitopo__heap_t *hp)
{
    for (int i = 0; i < hp->n; i++)
        hp->pos[hp->h[i]] = -1;
    hp->n = 0;
}

/* Split g into side 0 of total vertex weight `target` and side 1 of the
 * rest, cutting little edge weight. Exact when every vertex weighs 1. */
int mpitopo__tree_bisect(const mpitopo__tgraph_t *g, int64_t target, uint64_t seed, unsigned char *side);

/* TreeMatch-style bottom-up grouping of the processes of g (one vertex per
 * process) into the units of t, level by level; slot_of_proc[p] receives
 * the slot of process p. */
int mpitopo__tree_bottomup(const mpitopo__tgraph_t *g, const mpitopo__ttree_t *t, int *slot_of_proc);

/* Swaps that lower sum(weight x cost[meet level]) of the slots in
 * slot_of (cost: the machine's cost of every level). */
int mpitopo__tree_refine(const mpitopo__tgraph_t *g, const mpitopo__ttree_t *t, const double *cost, int *slot_of);

#endif
