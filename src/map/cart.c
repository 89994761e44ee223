/*
 * The "cart" mapper: places a Cartesian grid on the machine level by level,
 * generalising the two-level factorisation of Gropp (EuroMPI'18, section
 * 2.1) to every level of the hierarchy and to any stencil.
 *
 * Box path. When every level's units hold the same number of used leaves,
 * the grid is tiled by nested boxes, one box shape per level: the node box
 * is the best box of mpitopo__cart_boxes (so the node level reaches the
 * best-box bound), the boxes of the levels above are multiples of the level
 * below that minimise their own cut, and those below divide the level above.
 * A node box whose chain cannot be completed is replaced by the next best.
 *
 * Bisection path, for everything else (a prime factor of the node size that
 * divides no dimension, uneven nodes, a partial last node, fewer grid points
 * than leaves): recursive coordinate bisection with exact capacities. The
 * children of a unit are split into two halves, the points are cut across
 * the dimension where a cut is cheapest (long extent, light stencil weight),
 * the first half gets exactly its capacity, and so on down to the leaves.
 * Nodes then hold near-boxes: compact, never an error.
 *
 * Either way the result competes with strip tilings and the library's
 * other mappers (block, rr, the tree mapper's methods, METIS and Scotch on
 * small grids) under the weighted cost, ties broken by the most off-node
 * weight of one node, so cart is never worse than tree; the winner is
 * compared with the launch placement (the identity of the grid) and the
 * cheaper one is returned, so the mapper alone is never worse than the
 * identity under the weighted cost.
 */
#include "machine/machine_internal.h"
#include "map/cart_internal.h"
#include "map/map_internal.h"
#include "metrics/metrics_internal.h"
#include "pattern/pattern_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Node boxes tried, best first, before giving up on the box path. */
#define NODE_BOXES_TRIED 64

typedef struct cart_map {
    const mpitopo_machine_t *m;
    const mpitopo__cart_t *c;
    mpitopo_weight_t weight;
    int nprocs;
    int nused;                           /* leaves used: the first nprocs in leaf order */
    double dim_weight[MPITOPO_MAX_DIMS]; /* stencil weight along each dimension */
} cart_map_t;

/* A grid of points to place: the processes themselves, or node boxes. */
typedef struct grid {
    int ndims;
    int dims[MPITOPO_MAX_DIMS];
    int64_t npoints;
    double weight[MPITOPO_MAX_DIMS]; /* cost of cutting one unit of face across each dimension */
} grid_t;

static void coords_in(const int *dims, int ndims, int64_t p, int *x)
{
    for (int i = ndims - 1; i >= 0; i--) {
        x[i] = (int)(p % dims[i]);
        p /= dims[i];
    }
}

static int64_t index_in(const int *dims, int ndims, const int *x)
{
    int64_t p = 0;
    for (int i = 0; i < ndims; i++)
        p = p * dims[i] + x[i];
    return p;
}

/* ---- box path ---------------------------------------------------------- */

/* Leaves per unit of every level from `from` down, when all units among
 * the first nused leaves are full and equal; 0 when they are not. */
static int uniform_sizes(const cart_map_t *cm, int from, long long *size)
{
    const mpitopo_machine_t *m = cm->m;
    for (int l = from; l < m->nlevels; l++) {
        const int *first = m->first[l];
        long long s = first[1] - first[0];
        if (s < 1 || cm->nused % s != 0)
            return 0;
        for (int u = 1; u < m->nunits[l] && first[u] < cm->nused; u++)
            if (first[u + 1] - first[u] != s)
                return 0;
        size[l] = s;
    }
    return 1;
}

/* Best box of `size` points with lower | box | upper (either may be NULL):
 * 1 when one exists, 0 when not, or a negative error. */
static int best_box(const cart_map_t *cm, const int *lower, const int *upper, long long size, int *box)
{
    mpitopo__box_list_t list;
    if (mpitopo__cart_boxes(cm->c, lower, upper, size, cm->weight, 1, &list) != MPITOPO_SUCCESS)
        return MPITOPO_ERR_NOMEM;
    int found = list.count > 0;
    if (found)
        memcpy(box, list.boxes, (size_t)cm->c->ndims * sizeof *box);
    mpitopo__box_list_free(&list);
    return found;
}

/* Complete the chain of boxes around box[anchor]: levels from `top` up to
 * the anchor get the cheapest multiples of the level below, levels below
 * the cheapest divisors of the level above. 1 when every level has a box. */
static int complete_chain(const cart_map_t *cm, const long long *size, int top, int anchor, int *box)
{
    int nd = cm->c->ndims, nl = cm->m->nlevels, found = 1;
    for (int l = anchor - 1; l >= top && found == 1; l--)
        found = best_box(cm, box + (size_t)(l + 1) * nd, NULL, size[l], box + (size_t)l * nd);
    for (int l = anchor + 1; l < nl && found == 1; l++)
        found = best_box(cm, NULL, box + (size_t)(l - 1) * nd, size[l], box + (size_t)l * nd);
    return found;
}

/* From `unit` of `level`, descend the chain to the leaf of the point at x:
 * at each level the row-major index of its box inside the parent box picks
 * the child unit. */
static int descend(const cart_map_t *cm, const int *box, int level, int unit, const int *x)
{
    const mpitopo_machine_t *m = cm->m;
    int nd = cm->c->ndims;
    for (int l = level + 1; l < m->nlevels; l++) {
        const int *b = box + (size_t)l * nd, *parent = box + (size_t)(l - 1) * nd;
        int child = 0;
        for (int i = 0; i < nd; i++)
            child = child * (parent[i] / b[i]) + (x[i] % parent[i]) / b[i];
        unit = m->unit[l][m->first[l - 1][unit]] + child;
    }
    return unit;
}

/* Leaf of process p when the chain covers every level. */
static int leaf_in_chain(const cart_map_t *cm, const int *box, int64_t p)
{
    const mpitopo__cart_t *c = cm->c;
    int x[MPITOPO_MAX_DIMS], top = 0;
    coords_in(c->dims, c->ndims, p, x);
    for (int i = 0; i < c->ndims; i++)
        top = top * (c->dims[i] / box[i]) + x[i] / box[i];
    return descend(cm, box, 0, top, x);
}

/* ---- bisection path ---------------------------------------------------- */

/* Recursive coordinate bisection of the points of a grid over the units of
 * the machine down to level `last`: unit_of[point] receives a unit of that
 * level. Capacities count the used units of level `last`. */
typedef struct bisect {
    const cart_map_t *cm;
    const grid_t *g;
    int last;
    int *unit_of;
    struct keyed { int64_t key; int64_t p; } *keyed; /* scratch for sorting */
} bisect_t;

static int compare_keyed(const void *a, const void *b)
{
    int64_t ka = ((const struct keyed *)a)->key, kb = ((const struct keyed *)b)->key;
    return ka < kb ? -1 : ka > kb;
}

/* Sort the points by their coordinate along d, then row-major over the
 * other dimensions, so that a partial slab stays compact. */
static void sort_points(bisect_t *bs, int64_t *pts, int64_t n, int d)
{
    const grid_t *g = bs->g;
    int x[MPITOPO_MAX_DIMS];
    for (int64_t k = 0; k < n; k++) {
        coords_in(g->dims, g->ndims, pts[k], x);
        int64_t rest = 0;
        for (int i = 0; i < g->ndims; i++)
            if (i != d)
                rest = rest * g->dims[i] + x[i];
        bs->keyed[k].key = (int64_t)x[d] * (g->npoints / g->dims[d] + 1) + rest;
        bs->keyed[k].p = pts[k];
    }
    qsort(bs->keyed, (size_t)n, sizeof *bs->keyed, compare_keyed);
    for (int64_t k = 0; k < n; k++)
        pts[k] = bs->keyed[k].p;
}

/* The dimension to cut the points across: the one whose cut plane carries
 * the least weight, i.e. the largest extent per unit of weight. */
static int cheapest_dim(const grid_t *g, const int64_t *pts, int64_t n)
{
    int lo[MPITOPO_MAX_DIMS], hi[MPITOPO_MAX_DIMS], x[MPITOPO_MAX_DIMS];
    for (int i = 0; i < g->ndims; i++) {
        lo[i] = g->dims[i];
        hi[i] = -1;
    }
    for (int64_t k = 0; k < n; k++) {
        coords_in(g->dims, g->ndims, pts[k], x);
        for (int i = 0; i < g->ndims; i++) {
            lo[i] = x[i] < lo[i] ? x[i] : lo[i];
            hi[i] = x[i] > hi[i] ? x[i] : hi[i];
        }
    }
    int best = 0;
    double best_score = -1;
    for (int i = 0; i < g->ndims; i++) {
        int extent = hi[i] - lo[i] + 1;
        if (extent < 2)
            continue;
        /* A plane across i cuts about n / extent points' faces along i. */
        double score = g->weight[i] > 0 ? extent / g->weight[i] : 1e300;
        if (score > best_score) {
            best_score = score;
            best = i;
        }
    }
    return best;
}

/* Used units of level `last` inside unit `unit` of `level`. */
static int capacity(const bisect_t *bs, int level, int unit)
{
    const mpitopo_machine_t *m = bs->cm->m;
    int a = m->first[level][unit], b = m->first[level][unit + 1];
    if (a >= bs->cm->nused)
        return 0;
    b = b < bs->cm->nused ? b : bs->cm->nused;
    return m->unit[bs->last][b - 1] - m->unit[bs->last][a] + 1;
}

static int bisect_unit(bisect_t *bs, int64_t *pts, int64_t n, int level, int unit);

/* Give the n points to the children [a, b) of a unit of level `level`,
 * whose capacities are cap[]: split the children in two halves of nearly
 * equal capacity and the points accordingly, then recurse. */
static int bisect_children(bisect_t *bs, int64_t *pts, int64_t n, int level, int a, int b, const int *cap)
{
    if (n == 0)
        return MPITOPO_SUCCESS;
    if (b - a == 1)
        return bisect_unit(bs, pts, n, level, a);
    long long total = 0, half = 0;
    for (int k = a; k < b; k++)
        total += cap[k - a];
    int mid = a;
    while (mid < b - 1 && 2 * (half + cap[mid - a]) <= total)
        half += cap[mid++ - a];
    if (mid == a)
        half += cap[mid++ - a];
    sort_points(bs, pts, n, cheapest_dim(bs->g, pts, n));
    int rc = bisect_children(bs, pts, half, level, a, mid, cap);
    if (rc == MPITOPO_SUCCESS)
        rc = bisect_children(bs, pts + half, n - half, level, mid, b, cap + (mid - a));
    return rc;
}

/* Place n points (as many as the unit's capacity) in unit `unit` of
 * `level` (-1: the whole machine). */
static int bisect_unit(bisect_t *bs, int64_t *pts, int64_t n, int level, int unit)
{
    const mpitopo_machine_t *m = bs->cm->m;
    if (level == bs->last) {
        bs->unit_of[pts[0]] = unit;
        return MPITOPO_SUCCESS;
    }
    int child_level = level + 1;
    int a = level < 0 ? 0 : m->unit[child_level][m->first[level][unit]];
    int b = level < 0 ? m->nunits[0] : m->unit[child_level][m->first[level][unit + 1] - 1] + 1;
    int *cap = mpitopo__malloc_array((size_t)(b - a), sizeof *cap);
    if (!cap)
        return MPITOPO_NOMEM("the unit capacities");
    int nchildren = 0;
    for (int k = a; k < b; k++) {
        cap[k - a] = capacity(bs, child_level, k);
        if (cap[k - a] > 0)
            nchildren = k - a + 1;
    }
    int rc = bisect_children(bs, pts, n, child_level, a, a + nchildren, cap);
    mpitopo__free(cap);
    return rc;
}

/* Place every point of g on a used unit of level `last`. */
static int bisect_grid(const cart_map_t *cm, const grid_t *g, int last, int *unit_of)
{
    size_t n = (size_t)(g->npoints > 0 ? g->npoints : 1);
    int64_t *pts = mpitopo__malloc_array(n, sizeof *pts);
    bisect_t bs = {.cm = cm, .g = g, .last = last, .unit_of = unit_of,
                   .keyed = mpitopo__malloc_array(n, sizeof *bs.keyed)};
    int rc = pts && bs.keyed ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the point list");
    for (int64_t p = 0; rc == MPITOPO_SUCCESS && p < g->npoints; p++)
        pts[p] = p;
    if (rc == MPITOPO_SUCCESS)
        rc = bisect_unit(&bs, pts, g->npoints, -1, 0);
    mpitopo__free(pts);
    mpitopo__free(bs.keyed);
    return rc;
}

static int map_bisect(const cart_map_t *cm, int *leaf_of_proc)
{
    grid_t g = {.ndims = cm->c->ndims, .npoints = cm->nprocs};
    memcpy(g.dims, cm->c->dims, sizeof g.dims);
    memcpy(g.weight, cm->dim_weight, sizeof g.weight);
    return bisect_grid(cm, &g, cm->m->nlevels - 1, leaf_of_proc);
}

/* ---- the two combined -------------------------------------------------- */

/*
 * Nodes (and everything below) uniform, levels above not (a partial
 * switch, say): the grid of node boxes is bisected over the levels above
 * the node, and each node box is descended by the chain below it. The node
 * level still gets its best box.
 */
static int map_node_boxes(const cart_map_t *cm, const long long *size, int *box, int *leaf_of_proc)
{
    const mpitopo__cart_t *c = cm->c;
    int node = cm->m->node_level, nd = c->ndims;
    const int *nb = box + (size_t)node * nd;
    grid_t g = {.ndims = nd, .npoints = cm->nprocs / size[node]};
    for (int i = 0; i < nd; i++) {
        g.dims[i] = c->dims[i] / nb[i];
        /* One cell's face across i holds prod(nb) / nb[i] points. */
        g.weight[i] = cm->dim_weight[i] * ((double)size[node] / nb[i]);
    }
    int *node_of_cell = mpitopo__malloc_array((size_t)g.npoints, sizeof *node_of_cell);
    if (!node_of_cell)
        return MPITOPO_NOMEM("the node of every box");
    int rc = bisect_grid(cm, &g, node, node_of_cell);
    for (int64_t p = 0; rc == MPITOPO_SUCCESS && p < cm->nprocs; p++) {
        int x[MPITOPO_MAX_DIMS], cell[MPITOPO_MAX_DIMS];
        coords_in(c->dims, nd, p, x);
        for (int i = 0; i < nd; i++)
            cell[i] = x[i] / nb[i];
        leaf_of_proc[p] = descend(cm, box, node, node_of_cell[index_in(g.dims, nd, cell)], x);
    }
    mpitopo__free(node_of_cell);
    return rc;
}

/* Returns 1 and fills leaf_of_proc when the node level can be tiled by
 * boxes, 0 when not, or a negative error. */
static int map_boxes(const cart_map_t *cm, int *leaf_of_proc)
{
    const mpitopo_machine_t *m = cm->m;
    long long size[MPITOPO_MAX_LEVELS];
    int anchor = m->node_level >= 0 ? m->node_level : 0, nd = cm->c->ndims;
    if (cm->nused != cm->nprocs || !uniform_sizes(cm, anchor, size))
        return 0;
    int all_uniform = uniform_sizes(cm, 0, size);
    mpitopo__box_list_t nodes;
    int rc = mpitopo__cart_boxes(cm->c, NULL, NULL, size[anchor], cm->weight, NODE_BOXES_TRIED, &nodes);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    int *box = mpitopo__malloc_array((size_t)m->nlevels * (nd > 0 ? nd : 1), sizeof *box);
    int found = box ? 0 : MPITOPO_NOMEM("the box chain");
    /* The best node box whose chain below completes; the chain above too
     * when the levels above are uniform, else bisection above the nodes. */
    for (int k = 0; k < nodes.count && found == 0; k++) {
        memcpy(box + (size_t)anchor * nd, nodes.boxes + (size_t)k * nd, (size_t)nd * sizeof *box);
        if (all_uniform && (found = complete_chain(cm, size, 0, anchor, box)) == 0)
            all_uniform = 0;
        if (!all_uniform)
            found = complete_chain(cm, size, anchor, anchor, box);
    }
    if (found == 1 && all_uniform) {
        for (int p = 0; p < cm->nprocs; p++)
            leaf_of_proc[p] = leaf_in_chain(cm, box, p);
    } else if (found == 1) {
        rc = map_node_boxes(cm, size, box, leaf_of_proc);
        found = rc == MPITOPO_SUCCESS ? 1 : rc;
    }
    if (found == 1)
        mpitopo__log(2, "cart mapper: node boxes of %lld processes%s", size[anchor],
                     all_uniform ? "" : ", bisection above the nodes");
    mpitopo__free(box);
    mpitopo__box_list_free(&nodes);
    return found;
}

/* ---- fewer points than leaves ----------------------------------------- */

/* Largest table of the node subset sum, in bits. */
#define SUBSET_BITS (1L << 27)

/*
 * Nodes whose sizes add up to exactly nprocs, the earliest ones first
 * (subset sum, then a greedy walk from node 0), so that a grid smaller than
 * the machine leaves no node split. chosen[u] = 1 for the nodes taken.
 * Returns 1 when such a set exists and is not simply the first nodes.
 */
static int whole_nodes(const mpitopo_machine_t *m, int nprocs, unsigned char *chosen, int *error)
{
    int lvl = m->node_level, n = m->nunits[lvl];
    const int *first = m->first[lvl];
    int prefix = 0;
    for (int u = 0; u < n && first[u + 1] <= nprocs; u++)
        prefix = first[u + 1];
    if (prefix == nprocs || (long)n * (nprocs + 1) > SUBSET_BITS)
        return 0;
    /* can[u][t]: nodes u..n-1 can make t processes. */
    size_t row = (size_t)nprocs + 1;
    unsigned char *can = mpitopo__calloc((size_t)(n + 1) * row, 1);
    if (!can) {
        *error = MPITOPO_NOMEM("the node subset table");
        return 0;
    }
    can[(size_t)n * row] = 1;
    for (int u = n - 1; u >= 0; u--) {
        int s = first[u + 1] - first[u];
        for (int t = 0; t <= nprocs; t++)
            can[u * row + t] = can[(u + 1) * row + t] || (t >= s && can[(u + 1) * row + t - s]);
    }
    int found = can[nprocs];
    for (int u = 0, t = nprocs; found && u < n; u++) {
        int s = first[u + 1] - first[u];
        chosen[u] = t >= s && can[(u + 1) * row + t - s];
        t -= chosen[u] ? s : 0;
    }
    mpitopo__free(can);
    return found;
}

/* The machine restricted to the chosen nodes; orig[leaf of sub] = leaf of m. */
static int restrict_to(const mpitopo_machine_t *m, const unsigned char *chosen, int nprocs,
                       mpitopo_machine_t **sub, int **orig)
{
    int nl = m->nlevels, k = 0;
    int *paths = mpitopo__malloc_array((size_t)nprocs * nl, sizeof *paths);
    int *leaves = mpitopo__malloc_array((size_t)nprocs, sizeof *leaves);
    int *entry_leaf = mpitopo__malloc_array((size_t)nprocs, sizeof *entry_leaf);
    *orig = mpitopo__malloc_array((size_t)nprocs, sizeof **orig);
    int rc = paths && leaves && entry_leaf && *orig ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the chosen nodes");
    const char *names[MPITOPO_MAX_LEVELS];
    for (int l = 0; l < nl; l++)
        names[l] = m->name[l];
    for (int leaf = 0; rc == MPITOPO_SUCCESS && leaf < m->nleaves; leaf++) {
        if (!chosen[m->unit[m->node_level][leaf]])
            continue;
        for (int l = 0; l < nl; l++)
            paths[(size_t)k * nl + l] = m->unit[l][leaf];
        leaves[k++] = leaf;
    }
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_machine_from_paths(nl, names, m->cost, nprocs, paths, sub, entry_leaf);
    for (int e = 0; rc == MPITOPO_SUCCESS && e < nprocs; e++)
        (*orig)[entry_leaf[e]] = leaves[e];
    if (rc != MPITOPO_SUCCESS) {
        mpitopo__free(*orig);
        *orig = NULL;
    }
    mpitopo__free(paths);
    mpitopo__free(leaves);
    mpitopo__free(entry_leaf);
    return rc;
}

/* *sub: NULL when the first nprocs leaves are the ones to use. */
static int choose_leaves(const mpitopo_machine_t *m, int nprocs, mpitopo_machine_t **sub, int **orig)
{
    *sub = NULL;
    *orig = NULL;
    if (nprocs >= m->nleaves || m->node_level < 0)
        return MPITOPO_SUCCESS;
    unsigned char *chosen = mpitopo__calloc((size_t)m->nunits[m->node_level], 1);
    if (!chosen)
        return MPITOPO_NOMEM("the chosen nodes");
    int rc = MPITOPO_SUCCESS;
    if (whole_nodes(m, nprocs, chosen, &rc))
        rc = restrict_to(m, chosen, nprocs, sub, orig);
    mpitopo__free(chosen);
    return rc;
}

static void stencil_weights(cart_map_t *cm)
{
    const mpitopo__cart_t *c = cm->c;
    for (int o = 0; o < c->noffsets; o++) {
        double w = mpitopo_edge_weight(cm->weight, c->offset_bytes[o], c->offset_msgs[o]);
        for (int i = 0; i < c->ndims; i++)
            if (c->offsets[(size_t)o * c->ndims + i] != 0)
                cm->dim_weight[i] += w;
    }
}

/* ---- choosing among the candidates ------------------------------------ */

/* Processes up to which METIS and Scotch run too (~0.05 s at 1,024
 * processes, 0.3 to 0.8 s at 16,384). The tree mapper's methods run at
 * every size, so that cart never does worse than tree (issue 28: 12x12x12
 * on nodes of 28, strips cut 3,854 edges, tree's top-down bisection 3,740);
 * they take what the tree mapper takes (0.1 s at 1,728 processes, 0.6 s at
 * 16,384), and nothing on two-level machines once a tiling is optimal. */
#define BACKEND_MAX_PROCS 1024
/* Strip tilings scored exactly for the node level, and for each other. */
#define STRIPS_AT_NODES 8
#define STRIPS_AT_OTHERS 2
#define STRIP_EDGES_FULL (1 << 20)

typedef struct chooser {
    const cart_map_t *cm;
    const mpitopo_machine_t *machine; /* the whole machine */
    const mpitopo_pattern_t *pat;
    const int *orig;                  /* leaf of cm->m -> leaf of machine, or NULL */
    double *scratch;                  /* one per node of machine */
    int *cand, *pos;
    int *best;                        /* the caller's leaf_of_proc */
    mpitopo__cart_score_t best_score, last_score; /* the best so far, the last offered */
    const char *best_name;
} chooser_t;

/* Keep ch->cand when it beats the best so far. */
static void offer(chooser_t *ch, const char *name)
{
    mpitopo__cart_score_t sc;
    mpitopo__cart_score(ch->machine, ch->pat, ch->cm->weight, ch->cand, ch->scratch, &sc);
    ch->last_score = sc;
    if (!mpitopo__cart_better(&sc, &ch->best_score))
        return;
    ch->best_score = sc;
    ch->best_name = name;
    memcpy(ch->best, ch->cand, (size_t)ch->pat->nprocs * sizeof *ch->best);
}

/* Walk strip s, fill consecutive leaves along the curve, offer that. */
static void offer_walk(chooser_t *ch, const mpitopo__strip_t *s)
{
    mpitopo__cart_strip_walk(ch->cm->c, s, ch->pos);
    for (int p = 0; p < ch->pat->nprocs; p++)
        ch->cand[p] = ch->orig ? ch->orig[ch->pos[p]] : ch->pos[p];
    offer(ch, s->mixed ? "mixed strips" : "strips");
}

/* Strip s, its mixed form, and both with the outer dimensions in reverse
 * order (where the snake turns, and so which bands meet, changes). */
static void offer_strip(chooser_t *ch, mpitopo__strip_t s)
{
    for (int pass = 0; pass < 2 && (pass == 0 || s.nouter > 1); pass++) {
        if (pass == 1)
            for (int a = 0, b = s.nouter - 1; a < b; a++, b--) {
                int tmp = s.order[a];
                s.order[a] = s.order[b];
                s.order[b] = tmp;
            }
        s.mixed = 0;
        offer_walk(ch, &s);
        s.mixed = 1;
        if (mpitopo__cart_strip_mixable(ch->cm->c, &s))
            offer_walk(ch, &s);
    }
}

/* Strips sized for the units of every level above the leaves: each level
 * gets stretches of the curve, so the sizes tried matter at every level. */
static int offer_strips(chooser_t *ch)
{
    const mpitopo_machine_t *m = ch->cm->m;
    int last_size = 0, rc = MPITOPO_SUCCESS;
    for (int l = 0; l < m->nlevels - 1 && rc == MPITOPO_SUCCESS; l++) {
        int size = m->first[l][1] - m->first[l][0];
        size = size < ch->cm->nused ? size : ch->cm->nused;
        if (size < 2 || size == last_size)
            continue;
        last_size = size;
        mpitopo__strip_t *list;
        int count, keep = l == m->node_level ? STRIPS_AT_NODES : STRIPS_AT_OTHERS;
        /* Each walk costs a pass over the edges: fewer on big stencils. */
        if (ch->pat->nedges > STRIP_EDGES_FULL)
            keep = (keep + 1) / 2;
        rc = mpitopo__cart_strips(ch->cm->c, size, ch->cm->dim_weight, keep, &list, &count);
        for (int k = 0; rc == MPITOPO_SUCCESS && k < count; k++)
            offer_strip(ch, list[k]);
        mpitopo__free(list);
    }
    return rc;
}

/* The library's other mappers, as candidates: block and rr (cheap), the
 * tree mapper's own methods (not its "best", which is this mapper on a
 * grid), whose best is thus never cheaper than cart's, and METIS and
 * Scotch where they are fast enough (Scotch beats every tiling on some
 * small grids: 6x6 Moore on nodes of 8). */
static const struct other_mapper {
    const char *name, *args;
    mpitopo__map_fn fn;
    int max_procs;
} others[] = {
    /* Block fills the leaves in rank order: the launch of a grid written
     * for its machine, kept here whatever the launch was. */
    {"block", NULL, mpitopo__map_block, INT_MAX},
    /* Round-robin spreads a partial machine over every node, which can
     * give whole periodic lines to nodes (5x3 on nodes of 7: 5 each). */
    {"rr", NULL, mpitopo__map_rr, INT_MAX},
    {"tree:topdown", "topdown", mpitopo__map_tree_methods, INT_MAX},
    {"tree:bottomup", "bottomup", mpitopo__map_tree_methods, INT_MAX},
#ifdef MPITOPO_HAVE_METIS
    {"metis", NULL, mpitopo__map_metis, BACKEND_MAX_PROCS},
#endif
#ifdef MPITOPO_HAVE_SCOTCH
    {"scotch", NULL, mpitopo__map_scotch, BACKEND_MAX_PROCS},
#endif
};

/* On two levels the cost grows with the off-node weight alone (nodes cost
 * more than cores): at the lower bound nothing can do better. */
static int optimal(const chooser_t *ch)
{
    const mpitopo_machine_t *m = ch->machine;
    if (m->nlevels != 2 || m->node_level != 0 || m->cost[0] < m->cost[1])
        return 0;
    mpitopo_node_bound_t lb;
    if (mpitopo_cart_node_bound(m, ch->pat, ch->cm->weight, &lb) != MPITOPO_SUCCESS)
        return 0;
    double off = 0;
    for (int p = 0; p < ch->pat->nprocs; p++)
        for (int64_t e = ch->pat->offs[p]; e < ch->pat->offs[p + 1]; e++)
            if (mpitopo__node_of(m, ch->best[p]) != mpitopo__node_of(m, ch->best[ch->pat->dst[e]]))
                off += mpitopo_edge_weight(ch->cm->weight, ch->pat->bytes[e], ch->pat->msgs[e]);
    return lb.found && off <= lb.offnode_weight / (1 - 1e-12);
}

/*
 * leaf_of_proc holds the box (or bisection) mapping, on the whole machine.
 * Score it, then the strip tilings, then the other mappers (the tree
 * mapper's methods at every size), and leave the cheapest in leaf_of_proc.
 */
static int choose_best(const cart_map_t *cm, const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                       const mpitopo_map_options_t *options, const int *orig, int *leaf_of_proc)
{
    int n = pattern->nprocs, nnodes = machine->node_level < 0 ? 1 : machine->nunits[machine->node_level];
    chooser_t ch = {.cm = cm, .machine = machine, .pat = pattern, .orig = orig, .best = leaf_of_proc,
                    .best_name = "boxes"};
    ch.scratch = mpitopo__malloc_array((size_t)nnodes, sizeof *ch.scratch);
    ch.cand = mpitopo__malloc_array((size_t)n, sizeof *ch.cand);
    ch.pos = mpitopo__malloc_array((size_t)n, sizeof *ch.pos);
    int rc = ch.scratch && ch.cand && ch.pos ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the candidate mappings");
    if (rc == MPITOPO_SUCCESS) {
        mpitopo__cart_score(machine, pattern, cm->weight, leaf_of_proc, ch.scratch, &ch.best_score);
        rc = offer_strips(&ch);
    }
    mpitopo__cart_score_t tiling = ch.best_score;
    const char *tiling_name = ch.best_name;
    for (size_t k = 0; k < sizeof others / sizeof *others && rc == MPITOPO_SUCCESS; k++) {
        if (n > others[k].max_procs || optimal(&ch))
            continue;
        rc = others[k].fn(machine, pattern, others[k].args, options, ch.cand);
        if (rc == MPITOPO_SUCCESS) {
            offer(&ch, others[k].name);
            mpitopo__log(3, "cart mapper: %s costs %g, most off-node of one node %g", others[k].name,
                         ch.last_score.cost, ch.last_score.max_offnode);
        }
    }
    if (rc == MPITOPO_SUCCESS)
        mpitopo__log(2, "cart mapper: %s chosen, cost %g, most off-node of one node %g (best tiling: %s, cost %g, "
                     "most off-node %g)", ch.best_name, ch.best_score.cost, ch.best_score.max_offnode, tiling_name,
                     tiling.cost, tiling.max_offnode);
    mpitopo__free(ch.scratch);
    mpitopo__free(ch.cand);
    mpitopo__free(ch.pos);
    return rc;
}

/* ---- driver ------------------------------------------------------------ */

int mpitopo__map_cart(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                      const mpitopo_map_options_t *options, int *leaf_of_proc)
{
    (void)args;
    if (!pattern->cart)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map", "mapper 'cart' needs a Cartesian pattern "
                                               "(made by mpitopo_pattern_cart or a cart: description)");
    mpitopo_machine_t *sub = NULL;
    int *orig = NULL;
    int rc = choose_leaves(machine, pattern->nprocs, &sub, &orig);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    cart_map_t cm = {.m = sub ? sub : machine, .c = pattern->cart, .weight = options->weight,
                     .nprocs = pattern->nprocs, .nused = pattern->nprocs};
    stencil_weights(&cm);
    rc = map_boxes(&cm, leaf_of_proc);
    if (rc == 0)
        rc = map_bisect(&cm, leaf_of_proc);
    else if (rc == 1)
        rc = MPITOPO_SUCCESS;
    for (int p = 0; sub && rc == MPITOPO_SUCCESS && p < cm.nprocs; p++)
        leaf_of_proc[p] = orig[leaf_of_proc[p]];
    if (rc == MPITOPO_SUCCESS)
        rc = choose_best(&cm, machine, pattern, options, orig, leaf_of_proc);
    int kept = 0;
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__keep_launch_unless_cheaper(machine, pattern, options, cm.nprocs, leaf_of_proc, &kept);
    mpitopo_machine_destroy(&sub);
    mpitopo__free(orig);
    return rc;
}
