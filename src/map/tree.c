/*
 * The "tree" mapper: places the processes of any weighted pattern on the
 * machine tree so that sum(weight x cost of the level where the endpoints
 * meet) is low. Two methods, both sparse (memory O(nprocs + edges)):
 *
 *   topdown   recursive partitioning with exact capacities: the processes of
 *             a unit are split among its children by recursive bisection of
 *             the children list, each bisection a multilevel Fiduccia-
 *             Mattheyses split whose sides get exactly the leaves of their
 *             children (tree_bisect.c);
 *   bottomup  TreeMatch (Mercier & Jeannot, EuroMPI'11, section 3.3): from
 *             the leaves up, processes are grouped into the units of each
 *             level keeping as much weight inside as possible, then the
 *             groups into the units above (tree_bottomup.c).
 *
 * "tree" runs both and keeps the cheapest (on a Cartesian grid it is the
 * cart mapper instead: tree_best.c); "tree:topdown" and "tree:bottomup"
 * run one.
 * When there are fewer processes than leaves, the leaves used are chosen
 * first so that as few units as possible are opened at every level (whole
 * nodes filled before a partial one). The result is never worse than the
 * launch placement under the weighted cost.
 */
#include "machine/machine_internal.h"
#include "map/map_internal.h"
#include "map/tree_internal.h"
#include "pattern/pattern_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { TREE_BEST, TREE_TOPDOWN, TREE_BOTTOMUP };

/* ---- the leaves in use ------------------------------------------------- */

typedef struct child {
    int cap, unit;
} child_t;

/* Largest capacity first, then unit order. */
static int compare_child(const void *a, const void *b)
{
    const child_t *x = a, *y = b;
    if (x->cap != y->cap)
        return x->cap > y->cap ? -1 : 1;
    return (x->unit > y->unit) - (x->unit < y->unit);
}

/*
 * Mark `count` leaves of unit u of level l (-1: the whole machine) in use:
 * whole children, largest first, while they fit, then the remainder inside
 * the smallest child that can hold it. So as few units as possible are
 * opened at every level and at most one of them is partly used.
 */
static int choose_in(const mpitopo_machine_t *m, int l, int u, int count, unsigned char *use)
{
    int lo = l < 0 ? 0 : m->first[l][u], hi = l < 0 ? m->nleaves : m->first[l][u + 1];
    if (count == hi - lo) {
        memset(use + lo, 1, (size_t)count);
        return MPITOPO_SUCCESS;
    }
    int a = m->unit[l + 1][lo], b = m->unit[l + 1][hi - 1] + 1;
    child_t *c = mpitopo__malloc_array((size_t)(b - a), sizeof *c);
    if (!c)
        return MPITOPO_NOMEM("the children of a unit");
    for (int k = a; k < b; k++)
        c[k - a] = (child_t){m->first[l + 1][k + 1] - m->first[l + 1][k], k};
    qsort(c, (size_t)(b - a), sizeof *c, compare_child);
    int rest = -1;
    for (int i = 0; i < b - a; i++) {
        if (c[i].cap <= count) {
            memset(use + m->first[l + 1][c[i].unit], 1, (size_t)c[i].cap);
            count -= c[i].cap;
            c[i].cap = 0;
        } else if (c[i].cap > 0) {
            rest = i; /* sorted by size: the last one seen is the smallest */
        }
    }
    int unit = count > 0 && rest >= 0 ? c[rest].unit : -1;
    mpitopo__free(c);
    return unit >= 0 ? choose_in(m, l + 1, unit, count, use) : MPITOPO_SUCCESS;
}

static void ttree_free(mpitopo__ttree_t *t)
{
    mpitopo__free(t->slot_leaf);
    for (int l = 0; l < t->nlevels; l++) {
        mpitopo__free(t->first[l]);
        mpitopo__free(t->unit[l]);
    }
}

/* Number the units of every level among the slots in use. */
static int ttree_levels(const mpitopo_machine_t *m, mpitopo__ttree_t *t)
{
    for (int l = 0; l < t->nlevels; l++) {
        t->unit[l] = mpitopo__malloc_array((size_t)t->n, sizeof *t->unit[l]);
        t->first[l] = mpitopo__malloc_array((size_t)t->n + 1, sizeof *t->first[l]);
        if (!t->unit[l] || !t->first[l])
            return MPITOPO_NOMEM("the units in use");
        int k = -1;
        for (int s = 0; s < t->n; s++) {
            if (s == 0 || m->unit[l][t->slot_leaf[s]] != m->unit[l][t->slot_leaf[s - 1]])
                t->first[l][++k] = s;
            t->unit[l][s] = k;
        }
        t->nunits[l] = k + 1;
        t->first[l][k + 1] = t->n;
    }
    return MPITOPO_SUCCESS;
}

static int ttree_build(const mpitopo_machine_t *m, int nprocs, mpitopo__ttree_t *t)
{
    *t = (mpitopo__ttree_t){.nlevels = m->nlevels, .n = nprocs};
    unsigned char *use = mpitopo__calloc((size_t)m->nleaves, 1);
    t->slot_leaf = mpitopo__malloc_array((size_t)nprocs, sizeof *t->slot_leaf);
    int rc = use && t->slot_leaf ? choose_in(m, -1, 0, nprocs, use) : MPITOPO_NOMEM("the leaves in use");
    for (int leaf = 0, s = 0; rc == MPITOPO_SUCCESS && leaf < m->nleaves; leaf++)
        if (use[leaf])
            t->slot_leaf[s++] = leaf;
    if (rc == MPITOPO_SUCCESS)
        rc = ttree_levels(m, t);
    mpitopo__free(use);
    return rc;
}

/* ---- top-down ---------------------------------------------------------- */

typedef struct topdown {
    const mpitopo__tgraph_t *g;
    const mpitopo__ttree_t *t;
    uint64_t seed;
    int nsplits;
    int *slot_of;     /* result: slot of every process */
    int *local;       /* index of a process in the current subgraph */
    int *stamp;       /* stamp[p] == current: p is in the current subgraph */
    int *tmp;         /* scratch for reordering a segment */
    unsigned char *side;
} topdown_t;

/* The subgraph induced by the nv processes of verts (unit weights). */
static int extract(topdown_t *td, const int *verts, int nv, mpitopo__tgraph_t *sub)
{
    const mpitopo__tgraph_t *g = td->g;
    int id = ++td->nsplits;
    int64_t nadj = 0;
    for (int i = 0; i < nv; i++) {
        td->stamp[verts[i]] = id;
        td->local[verts[i]] = i;
    }
    for (int i = 0; i < nv; i++)
        for (int64_t e = g->offs[verts[i]]; e < g->offs[verts[i] + 1]; e++)
            nadj += td->stamp[g->adj[e]] == id;
    int rc = mpitopo__tgraph_alloc(sub, nv, nadj);
    for (int i = 0; rc == MPITOPO_SUCCESS && i < nv; i++) {
        int64_t k = sub->offs[i];
        for (int64_t e = g->offs[verts[i]]; e < g->offs[verts[i] + 1]; e++)
            if (td->stamp[g->adj[e]] == id) {
                sub->adj[k] = td->local[g->adj[e]];
                sub->w[k++] = g->w[e];
            }
        sub->offs[i + 1] = k;
    }
    return rc;
}

/* Reorder verts so that its first na processes are the best na to keep
 * together apart from the others. */
static int bisect_segment(topdown_t *td, int *verts, int nv, int na)
{
    mpitopo__tgraph_t sub;
    int rc = extract(td, verts, nv, &sub);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__tree_bisect(&sub, na, td->seed + 0x9e3779b97f4a7c15ULL * (uint64_t)td->nsplits, td->side);
    if (rc == MPITOPO_SUCCESS) {
        int a = 0, b = na;
        for (int i = 0; i < nv; i++)
            td->tmp[td->side[i] == 0 ? a++ : b++] = verts[i];
        memcpy(verts, td->tmp, (size_t)nv * sizeof *verts);
    }
    mpitopo__tgraph_free(&sub);
    return rc;
}

static int place_unit(topdown_t *td, int l, int k, int *verts, int nv);

/* Give the nv processes of verts to the units [a, b) of level l, exactly
 * as many as each holds, by halving the list of units. */
static int split_units(topdown_t *td, int l, int a, int b, int *verts, int nv)
{
    if (b - a == 1)
        return place_unit(td, l, a, verts, nv);
    const int *first = td->t->first[l];
    /* The cut point whose first half holds the closest to half the slots. */
    int mid = a + 1;
    for (int c = a + 2; c < b; c++)
        if (llabs(2LL * (first[c] - first[a]) - nv) < llabs(2LL * (first[mid] - first[a]) - nv))
            mid = c;
    int na = first[mid] - first[a];
    int rc = bisect_segment(td, verts, nv, na);
    if (rc == MPITOPO_SUCCESS)
        rc = split_units(td, l, a, mid, verts, na);
    if (rc == MPITOPO_SUCCESS)
        rc = split_units(td, l, mid, b, verts + na, nv - na);
    return rc;
}

/* Place the nv processes of verts (as many as its slots) in unit k of
 * level l (-1: the root). Below the last level with a choice, the order
 * does not matter: every two slots of a unit whose children are leaves
 * cost the same. */
static int place_unit(topdown_t *td, int l, int k, int *verts, int nv)
{
    const mpitopo__ttree_t *t = td->t;
    int a, b;
    if (l == t->nlevels - 1) {
        td->slot_of[verts[0]] = k;
        return MPITOPO_SUCCESS;
    }
    mpitopo__ttree_children(t, l, k, &a, &b);
    if (l + 1 == t->nlevels - 1) {
        for (int i = 0; i < nv; i++)
            td->slot_of[verts[i]] = a + i;
        return MPITOPO_SUCCESS;
    }
    return split_units(td, l + 1, a, b, verts, nv);
}

static int map_topdown(const mpitopo__tgraph_t *g, const mpitopo__ttree_t *t, uint64_t seed, int *slot_of)
{
    size_t n = (size_t)g->n;
    topdown_t td = {.g = g, .t = t, .seed = seed, .slot_of = slot_of};
    int *verts = mpitopo__malloc_array(n, sizeof *verts);
    td.local = mpitopo__malloc_array(n, sizeof *td.local);
    td.stamp = mpitopo__calloc(n, sizeof *td.stamp);
    td.tmp = mpitopo__malloc_array(n, sizeof *td.tmp);
    td.side = mpitopo__malloc(n);
    int rc = verts && td.local && td.stamp && td.tmp && td.side ? MPITOPO_SUCCESS
                                                                : MPITOPO_NOMEM("the top-down work arrays");
    for (int p = 0; rc == MPITOPO_SUCCESS && p < g->n; p++)
        verts[p] = p;
    if (rc == MPITOPO_SUCCESS)
        rc = place_unit(&td, -1, 0, verts, g->n);
    mpitopo__free(verts);
    mpitopo__free(td.local);
    mpitopo__free(td.stamp);
    mpitopo__free(td.tmp);
    mpitopo__free(td.side);
    return rc;
}

/* ---- driver ------------------------------------------------------------ */

static int parse_args(const char *args, int *mode)
{
    *mode = TREE_BEST;
    if (!args || strcmp(args, "best") == 0)
        return MPITOPO_SUCCESS;
    if (strcmp(args, "topdown") == 0)
        *mode = TREE_TOPDOWN;
    else if (strcmp(args, "bottomup") == 0)
        *mode = TREE_BOTTOMUP;
    else
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map", "mapper 'tree': argument \"%.64s\" is not "
                                               "best, topdown or bottomup", args);
    return MPITOPO_SUCCESS;
}

/* Keep `cand` in best when it is cheaper (or best is still empty). */
static int keep_cheaper(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat, mpitopo_weight_t weight,
                        const int *cand, int *best, double *best_cost, const char *what)
{
    double c;
    int rc = mpitopo_metrics_cost(m, pat, cand, weight, &c);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo__log(3, "tree mapper: %s costs %g", what, c);
    if (c < *best_cost) {
        *best_cost = c;
        memcpy(best, cand, (size_t)pat->nprocs * sizeof *best);
    }
    return MPITOPO_SUCCESS;
}

/* Run one method, refine it by swaps and turn its slots into leaves. */
static int run_method(int method, const mpitopo_machine_t *m, const mpitopo__tgraph_t *g,
                      const mpitopo__ttree_t *t, uint64_t seed, int *slot_of, int *leaf_of)
{
    int rc = method == TREE_TOPDOWN ? map_topdown(g, t, seed, slot_of)
                                    : mpitopo__tree_bottomup(g, t, slot_of);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__tree_refine(g, t, m->cost, slot_of);
    for (int p = 0; rc == MPITOPO_SUCCESS && p < g->n; p++)
        leaf_of[p] = t->slot_leaf[slot_of[p]];
    return rc;
}

/* Independent top-down runs (other seeds for coarsening and the initial
 * splits) while the graph is small: the bisection is a heuristic whose
 * result varies by a few percent with the seed, and small problems can
 * afford the best of several. Large ones get one run, to stay fast. */
static int topdown_trials(const mpitopo__tgraph_t *g)
{
    int64_t work = g->n + g->offs[g->n];
    return work <= 40000 ? 4 : work <= 400000 ? 2 : 1;
}

static int run_candidates(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat,
                          const mpitopo_map_options_t *opt, int mode, int *leaf_of_proc)
{
    size_t n = (size_t)pat->nprocs;
    mpitopo__tgraph_t g = {0};
    mpitopo__ttree_t t = {0};
    int *slot_of = mpitopo__malloc_array(n, sizeof *slot_of);
    int *cand = mpitopo__malloc_array(n, sizeof *cand);
    int rc = slot_of && cand ? mpitopo__tgraph_build(pat, opt->weight, &g) : MPITOPO_NOMEM("the candidate mappings");
    if (rc == MPITOPO_SUCCESS)
        rc = ttree_build(m, pat->nprocs, &t);
    double best = INFINITY;
    static const char *const names[] = {"best", "topdown", "bottomup"};
    int trials = rc == MPITOPO_SUCCESS ? topdown_trials(&g) : 0;
    for (int method = TREE_TOPDOWN; rc == MPITOPO_SUCCESS && method <= TREE_BOTTOMUP; method++)
        for (int k = 0; (mode == TREE_BEST || mode == method) && rc == MPITOPO_SUCCESS &&
                        k < (method == TREE_TOPDOWN ? trials : 1);
             k++) {
            rc = run_method(method, m, &g, &t, opt->seed + (uint64_t)k * 0x9e3779b97f4a7c15ull, slot_of, cand);
            if (rc == MPITOPO_SUCCESS)
                rc = keep_cheaper(m, pat, opt->weight, cand, leaf_of_proc, &best, names[method]);
        }
    ttree_free(&t);
    mpitopo__tgraph_free(&g);
    mpitopo__free(slot_of);
    mpitopo__free(cand);
    return rc;
}

int mpitopo__map_tree_methods(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                              const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc)
{
    int mode, kept = 0;
    int rc = parse_args(args, &mode);
    if (rc != MPITOPO_SUCCESS || pattern->nprocs == 0)
        return rc;
    rc = run_candidates(machine, pattern, options, mode, leaf_of_proc);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__keep_launch_unless_cheaper(machine, pattern, options, pattern->nprocs, leaf_of_proc, &kept);
    return rc;
}
