/* Layout of a machine, shared with the mappers and metrics. */
#ifndef MPITOPO_MACHINE_INTERNAL_H
#define MPITOPO_MACHINE_INTERNAL_H

#include "core/internal.h"

/*
 * Units of every level are numbered in leaf order, so the leaves of unit u
 * of level l are first[l][u] .. first[l][u+1]-1. The last level's units are
 * the leaves themselves (unit[nlevels-1][leaf] == leaf).
 */
struct mpitopo_machine {
    int nlevels;
    int nleaves;
    int node_level; /* index of the level named "node", -1 if none */
    char name[MPITOPO_MAX_LEVELS][MPITOPO_MAX_NAME];
    double cost[MPITOPO_MAX_LEVELS];
    int nunits[MPITOPO_MAX_LEVELS];
    int *unit[MPITOPO_MAX_LEVELS];  /* unit[l][leaf], nleaves entries */
    int *first[MPITOPO_MAX_LEVELS]; /* first[l][u], nunits[l] + 1 entries */
};

/* The most PUs a synthetic hwloc description may ask for (the product of
 * its arities), checked before hwloc sees it: hwloc's synthetic backend
 * inserts objects in time quadratic in their number (4,096 PUs under one
 * package take seconds, 65,536 minutes), and real nodes stay well below
 * (2 x 192 cores x 2 threads = 768). NUMA nodes attached with "[numa]"
 * count against the same limit, separately. */
#define MPITOPO__SYNTHETIC_MAX_PUS 4096
/* Indexes given in an explicit "indexes=" list of a synthetic description
 * must be below this: every cpuset and nodeset is a bitmap as long as the
 * largest index (4294967295 made hwloc crash). */
#define MPITOPO__SYNTHETIC_MAX_INDEX 65536

/* Level at which the paths of leaves a and b part; nlevels when a == b.
 * No argument checks: for the hot loops of mappers and metrics. */
static inline int mpitopo__meet(const mpitopo_machine_t *m, int a, int b)
{
    if (a == b)
        return m->nlevels;
    for (int l = 0; l < m->nlevels; l++)
        if (m->unit[l][a] != m->unit[l][b])
            return l;
    return m->nlevels;
}

static inline double mpitopo__cost(const mpitopo_machine_t *m, int a, int b)
{
    int l = mpitopo__meet(m, a, b);
    return l < m->nlevels ? m->cost[l] : 0.0;
}

/* Unit of the node level holding leaf (0 when the machine has no node level). */
static inline int mpitopo__node_of(const mpitopo_machine_t *m, int leaf)
{
    return m->node_level < 0 ? 0 : m->unit[m->node_level][leaf];
}

#endif
