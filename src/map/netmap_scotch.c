/*
 * Mapper "scotchnet": Scotch's static mapping onto the network (one of
 * LibTopoMap's strategies, a comparator of the thesis, ch. 3). The target
 * architecture is a decomposition-defined one (SCOTCH_archBuild0) built
 * from a graph of the nodes in use: complete, each edge weighted by the
 * route cost between its nodes (netmap_common.c; integers, a quarter hop
 * apart), each node weighted by its slots. Built over the end nodes alone,
 * no switch is ever a target, and the distances Scotch sees are those of
 * the routes, not of some shortest path the routing does not take. The
 * part graph (parts weighted by their size, edges by bytes) is mapped onto
 * it in a context of its own (one thread, deterministic), then made one
 * part per node: each part keeps its node if it is the first there of the
 * node's size, the others go, in part order, to the free node of their
 * size nearest to the one Scotch gave them. The complete graph limits this
 * mapper to MPITOPO__NETMAP_SCOTCH_MAX nodes in use.
 */
#include "map/netmap_internal.h"

#ifdef MPITOPO_HAVE_SCOTCH

#include <math.h>
#include <stdint.h>
#include <scotch.h>

/* a complete graph of this many nodes has a million arcs */
#define MPITOPO__NETMAP_SCOTCH_MAX 1024

/* Scotch's own message goes to SCOTCH_errorPrint, which scotch.c defines
 * and keeps for the scotch mapper: here only the call is named. */
static int failed(const char *call)
{
    return MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "scotchnet: %s failed", call);
}

/* Route costs in quarter hops, at least 1 between distinct nodes. */
static SCOTCH_Num int_dist(const mpitopo__netmap_t *nm, int n, int m)
{
    double d = floor(4 * mpitopo__netmap_dist(nm, n, m) + 0.5);
    return (SCOTCH_Num)(d < 1 ? 1 : d);
}

/* A context of its own for Scotch: one thread, deterministic, a fixed
 * seed, so every process of a job and every run map alike (as the scotch
 * mapper); g bound to it as *bound. */
static int deterministic_context(SCOTCH_Context *ctx, SCOTCH_Graph *g, SCOTCH_Graph *bound)
{
    SCOTCH_contextRandomClone(ctx);
    SCOTCH_contextRandomSeed(ctx, 1);
    if (SCOTCH_contextThreadSpawn(ctx, 1, NULL) != 0 ||
        SCOTCH_contextOptionSetNum(ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1) != 0)
        return failed("the Scotch context");
    if (SCOTCH_contextBindGraph(ctx, g, bound) != 0)
        return failed("SCOTCH_contextBindGraph");
    return MPITOPO_SUCCESS;
}

/* The target: the complete graph of the nodes in use. */
static int build_target(const mpitopo__netmap_t *nm, SCOTCH_Arch *arch, SCOTCH_Num *maxdist)
{
    int nn = nm->nn;
    size_t na = (size_t)nn * (size_t)(nn - 1);
    SCOTCH_Num *vert = mpitopo__malloc_array((size_t)nn + 1, sizeof *vert);
    SCOTCH_Num *velo = mpitopo__malloc_array((size_t)nn, sizeof *velo);
    SCOTCH_Num *list = mpitopo__malloc_array((size_t)nn, sizeof *list);
    SCOTCH_Num *edge = mpitopo__malloc_array(na ? na : 1, sizeof *edge);
    SCOTCH_Num *edlo = mpitopo__malloc_array(na ? na : 1, sizeof *edlo);
    SCOTCH_Graph g, bound;
    SCOTCH_Strat strat;
    SCOTCH_Context ctx;
    int have_g = 0, have_bound = 0, have_strat = 0, have_ctx = 0;
    int rc = vert && velo && list && edge && edlo ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the target graph");
    *maxdist = 1;
    size_t at = 0;
    for (int n = 0; rc == MPITOPO_SUCCESS && n < nn; n++) {
        vert[n] = (SCOTCH_Num)at;
        velo[n] = nm->cap[n];
        list[n] = n;
        for (int m = 0; m < nn; m++)
            if (m != n) {
                edge[at] = m;
                edlo[at] = int_dist(nm, n, m);
                *maxdist = edlo[at] > *maxdist ? edlo[at] : *maxdist;
                at++;
            }
    }
    if (rc == MPITOPO_SUCCESS) {
        vert[nn] = (SCOTCH_Num)at;
        have_g = SCOTCH_graphInit(&g) == 0;
        have_bound = SCOTCH_graphInit(&bound) == 0;
        have_strat = SCOTCH_stratInit(&strat) == 0;
        have_ctx = SCOTCH_contextInit(&ctx) == 0;
        if (!have_g || !have_bound || !have_strat || !have_ctx)
            rc = failed("initialisation");
    }
    if (rc == MPITOPO_SUCCESS &&
        SCOTCH_graphBuild(&g, 0, nn, vert, NULL, velo, NULL, (SCOTCH_Num)at, edge, edlo) != 0)
        rc = failed("SCOTCH_graphBuild (target)");
    /* archBuild0 bipartitions the target with the context of the graph it
     * is given: with the default one (threads, a seed from the clock in
     * Debian's build) two runs gave different targets, and MC 0.25 or 0.5
     * on the 1,024-process torus all-to-all. */
    if (rc == MPITOPO_SUCCESS)
        rc = deterministic_context(&ctx, &g, &bound);
    if (rc == MPITOPO_SUCCESS && SCOTCH_archBuild0(arch, &bound, nn, list, &strat) != 0)
        rc = failed("SCOTCH_archBuild0");
    if (have_bound)
        SCOTCH_graphExit(&bound);
    if (have_ctx)
        SCOTCH_contextExit(&ctx);
    if (have_g)
        SCOTCH_graphExit(&g);
    if (have_strat)
        SCOTCH_stratExit(&strat);
    void *arrays[] = {vert, velo, list, edge, edlo};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        mpitopo__free(arrays[i]);
    return rc;
}

/* The part graph with integer weights: bytes scaled so that their total
 * times the largest distance stays within 2^30 (Scotch sums products of
 * the two in 32 bits), at least 1 each. */
static int map_parts(const mpitopo__netmap_t *nm, const SCOTCH_Arch *arch, SCOTCH_Num maxdist, SCOTCH_Num *term)
{
    int nn = nm->nn;
    int64_t na = nm->goff[nn];
    SCOTCH_Num *vert = mpitopo__malloc_array((size_t)nn + 1, sizeof *vert);
    SCOTCH_Num *velo = mpitopo__malloc_array((size_t)nn, sizeof *velo);
    SCOTCH_Num *edge = mpitopo__malloc_array((size_t)(na ? na : 1), sizeof *edge);
    SCOTCH_Num *edlo = mpitopo__malloc_array((size_t)(na ? na : 1), sizeof *edlo);
    SCOTCH_Graph graph, bound;
    SCOTCH_Strat strat;
    SCOTCH_Context ctx;
    int have_graph = SCOTCH_graphInit(&graph) == 0, have_bound = SCOTCH_graphInit(&bound) == 0;
    int have_strat = SCOTCH_stratInit(&strat) == 0, have_ctx = SCOTCH_contextInit(&ctx) == 0;
    int rc = vert && velo && edge && edlo ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the part graph for Scotch");
    if (rc == MPITOPO_SUCCESS && (!have_graph || !have_bound || !have_strat || !have_ctx))
        rc = failed("initialisation");
    double total = 0;
    for (int64_t e = 0; e < na; e++)
        total += nm->gw[e];
    double scale = total > 0 ? (double)(1 << 30) / (double)maxdist / total : 1;
    for (int a = 0; rc == MPITOPO_SUCCESS && a <= nn; a++) {
        vert[a] = (SCOTCH_Num)nm->goff[a];
        if (a < nn)
            velo[a] = nm->cap[a];
    }
    for (int64_t e = 0; rc == MPITOPO_SUCCESS && e < na; e++) {
        double w = floor(nm->gw[e] * scale + 0.5);
        edge[e] = nm->gadj[e];
        edlo[e] = (SCOTCH_Num)(w < 1 ? 1 : w);
    }
    if (rc == MPITOPO_SUCCESS && SCOTCH_graphBuild(&graph, 0, nn, vert, NULL, velo, NULL, (SCOTCH_Num)na, edge, edlo))
        rc = failed("SCOTCH_graphBuild");
    if (rc == MPITOPO_SUCCESS)
        rc = deterministic_context(&ctx, &graph, &bound);
    if (rc == MPITOPO_SUCCESS && SCOTCH_stratGraphMapBuild(&strat, SCOTCH_STRATDEFAULT, nn, 0.01) != 0)
        rc = failed("SCOTCH_stratGraphMapBuild");
    if (rc == MPITOPO_SUCCESS && SCOTCH_graphMap(&bound, arch, &strat, term) != 0)
        rc = failed("SCOTCH_graphMap");
    if (have_bound)
        SCOTCH_graphExit(&bound);
    if (have_ctx)
        SCOTCH_contextExit(&ctx);
    if (have_strat)
        SCOTCH_stratExit(&strat);
    if (have_graph)
        SCOTCH_graphExit(&graph);
    void *arrays[] = {vert, velo, edge, edlo};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        mpitopo__free(arrays[i]);
    return rc;
}

/* One part per node of its size, each as near Scotch's choice as free. */
static int one_per_node(const mpitopo__netmap_t *nm, const SCOTCH_Num *term, int *node_of)
{
    int nn = nm->nn;
    unsigned char *taken = mpitopo__calloc((size_t)nn, 1);
    if (!taken)
        return MPITOPO_NOMEM("the nodes taken");
    for (int a = 0; a < nn; a++) {
        int n = term[a] >= 0 && term[a] < nn ? (int)term[a] : 0;
        node_of[a] = !taken[n] && nm->cap[n] == nm->cap[a] ? n : -1;
        if (node_of[a] >= 0)
            taken[n] = 1;
    }
    int rc = MPITOPO_SUCCESS;
    for (int a = 0; a < nn && rc == MPITOPO_SUCCESS; a++) {
        if (node_of[a] >= 0)
            continue;
        int want = term[a] >= 0 && term[a] < nn ? (int)term[a] : 0, best = -1;
        for (int n = 0; n < nn; n++)
            if (!taken[n] && nm->cap[n] == nm->cap[a] &&
                (best < 0 || mpitopo__netmap_dist(nm, want, n) < mpitopo__netmap_dist(nm, want, best)))
                best = n;
        if (best < 0)
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "scotchnet: no free node for part %d", a);
        else
            taken[node_of[a] = best] = 1;
    }
    mpitopo__free(taken);
    return rc;
}

static int scotch_place(const mpitopo__netmap_t *nm, int *node_of)
{
    if (nm->nn > MPITOPO__NETMAP_SCOTCH_MAX)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, "mpitopo_map", "scotchnet maps onto at most %d nodes, the "
                               "processes fill %d", MPITOPO__NETMAP_SCOTCH_MAX, nm->nn);
    if (nm->nn == 1) {
        node_of[0] = 0;
        return MPITOPO_SUCCESS;
    }
    SCOTCH_Arch arch;
    SCOTCH_Num maxdist;
    SCOTCH_Num *term = mpitopo__malloc_array((size_t)nm->nn, sizeof *term);
    if (!term || SCOTCH_archInit(&arch) != 0) {
        mpitopo__free(term);
        return term ? failed("SCOTCH_archInit") : MPITOPO_NOMEM("the parts' nodes");
    }
    int rc = build_target(nm, &arch, &maxdist);
    if (rc == MPITOPO_SUCCESS)
        rc = map_parts(nm, &arch, maxdist, term);
    if (rc == MPITOPO_SUCCESS)
        rc = one_per_node(nm, term, node_of);
    SCOTCH_archExit(&arch);
    mpitopo__free(term);
    return rc;
}

int mpitopo__map_netscotch(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                           const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    (void)args;
    return mpitopo__netmap_run("scotchnet", scotch_place, machine, pattern, options, net, leaf_of_proc);
}

#else
/* ISO C wants something in a translation unit. */
typedef int mpitopo__netmap_scotch_unused;
#endif
