/*
 * Collective-aware rank reordering (Mirsadeghi's thesis, ch. 4; issue 19):
 * the distance model, the search for the closest free leaf, and the four
 * heuristics RDMH, RMH, BBMH and BGMH, plus their mappers rdmh, rmh, bbmh
 * and bgmh.
 *
 * Distances (mpitopo__coll_distance). Ordinal, from the machine tree and,
 * across nodes, the network:
 *   - 0: the same leaf;
 *   - nlevels - l when the paths of the two leaves part at level l: with
 *     "node:N socket:2 core:8" two cores of one socket are 1 apart, of two
 *     sockets of one node 2, of two nodes 3; a "switch" level above the
 *     nodes adds one more step;
 *   - with a network (and a node level): two leaves on different nodes are
 *     (nlevels - node_level) + hops apart, hops the channels of the route
 *     between the end nodes of their nodes (0 when both nodes sit on one end
 *     node); the levels above the nodes then play no part. Every pair inside
 *     a node stays closer than any pair across nodes.
 *
 * The closest free leaf (the thesis's find_closest_to, an O(p) scan there).
 * The candidates are the leaves that hold the p ranks: a reordering only
 * permutes the processes among them. Every unit of every level keeps its
 * count of free candidates and a cursor on its lowest free one (candidates
 * are only ever taken, so the cursor only moves forward). Inside the tree
 * the distance grows with the level where two leaves part, so the closest
 * free leaf to a reference is in the deepest unit above the reference that
 * still has one, and all its free leaves outside the (exhausted) child are
 * equally close: its lowest free leaf is the answer, the lowest leaf among
 * the closest, as the thesis's scan with lowest-leaf ties would find. Across
 * nodes under a network the node is the free one fewest hops away, ties to
 * the lowest node (whose leaves are the lowest): found by a scan of the
 * nodes that still have free leaves, cached per reference node; since free
 * nodes only disappear, the cached node stays the answer while it has a free
 * leaf, and a rescan can stop at the first node as close as the cached one
 * was, or as close as any two nodes can be (two hops in a fat tree). Cost: O(nlevels) per placement plus the cross-node scans, which only
 * happen when the reference's whole node is taken.
 */
#include "map/collmap.h"

#include "machine/machine_internal.h"
#include "map/map_internal.h"
#include "network/network_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Routes up to this long are measured in a buffer on the stack. */
#define STACK_ROUTE 256

static int uses_network(const mpitopo__coll_dist_t *d)
{
    return d->network && d->machine->node_level >= 0;
}

static int end_of(const mpitopo__coll_dist_t *d, int node_unit)
{
    return d->end_node ? d->end_node[node_unit] : node_unit;
}

/* Channels of the route between two end nodes of a torus or mesh, without
 * building it: dimension-order routing takes, in every dimension, the
 * shorter way round (a torus) or the straight one (a mesh). */
static int grid_hops(const mpitopo_network_t *net, int a, int b)
{
    int hops = 0;
    for (int i = 0; i < net->ndims; i++) {
        int64_t k = net->dims[i], ca = a / net->stride[i] % k, cb = b / net->stride[i] % k;
        int64_t fwd = (cb - ca + k) % k;
        hops += (int)(net->torus ? (fwd <= k - fwd ? fwd : k - fwd) : (ca < cb ? cb - ca : ca - cb));
    }
    return hops;
}

int mpitopo__coll_distance(const mpitopo__coll_dist_t *d, int leaf_a, int leaf_b)
{
    const mpitopo_machine_t *m = d->machine;
    if (leaf_a == leaf_b)
        return 0;
    int l = mpitopo__meet(m, leaf_a, leaf_b);
    if (!uses_network(d) || l > m->node_level)
        return m->nlevels - l;
    int ea = end_of(d, m->unit[m->node_level][leaf_a]), eb = end_of(d, m->unit[m->node_level][leaf_b]);
    int base = m->nlevels - m->node_level;
    if (ea == eb)
        return base;
    if (d->network->kind == MPITOPO__NET_GRID)
        return base + grid_hops(d->network, ea, eb);
    int64_t stack[STACK_ROUTE];
    int64_t *ch = d->network->max_route <= STACK_ROUTE
                      ? stack
                      : mpitopo__malloc_array((size_t)d->network->max_route, sizeof *ch);
    if (!ch) /* out of memory: the longest route stands for this one */
        return base + d->network->max_route;
    int hops = mpitopo__network_route(d->network, ea, eb, ch);
    if (ch != stack)
        mpitopo__free(ch);
    return base + hops;
}

/* ---- the free candidates ------------------------------------------------- */

/* The p candidate leaves sorted, as compact indexes k = 0..p-1 (the
 * candidates of a unit are a contiguous range of k); per level l >= top
 * and unit u the free count and the cursor on the lowest free k. */
typedef struct finder {
    const mpitopo__coll_dist_t *d;
    const mpitopo_machine_t *m;
    int p, top, net;
    int *leaf; /* k -> leaf */
    int *rank; /* k -> old rank */
    unsigned char *used;
    int *count[MPITOPO_MAX_LEVELS];
    int *low[MPITOPO_MAX_LEVELS];
    int glow; /* cursor over all candidates (no network: above level 0) */
    /* With a network: node units with free candidates as a list in
     * increasing order, and per node the cached closest one. */
    int *next, *prev, head;
    int *best, *best_hops;
    int64_t *route;
    int lb; /* no free node can be fewer hops away (see route_floor) */
    /* A fat tree: hops grow with the group level where two end nodes part,
     * so the closest node is found as in the machine tree. Levels 0..ngl-2
     * are the network's group levels, ngl-1 the end node itself; per level
     * gof[u] is node unit u's group, gcount the group's free leaves, its
     * units (increasing) members[gfirst[g] .. gfirst[g+1]) and gcur the
     * cursor on the lowest one with free leaves. */
    int ngl;
    int *gof[MPITOPO_MAX_LEVELS], *gcount[MPITOPO_MAX_LEVELS], *gfirst[MPITOPO_MAX_LEVELS];
    int *gcur[MPITOPO_MAX_LEVELS], *members[MPITOPO_MAX_LEVELS];
    /* A torus or mesh whose node units sit on distinct end nodes: the unit
     * on each end node (-1: none), and per dimension the largest distance
     * and its suffix sums; the closest node is searched shell by shell of
     * hops around the reference (see closest_grid). */
    int *unit_of_end;
    int maxd[MPITOPO_MAX_DIMS + 1], reach[MPITOPO_MAX_DIMS + 1];
} finder_t;

struct pair {
    int leaf, rank;
};

static int by_leaf(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    return (x->leaf > y->leaf) - (x->leaf < y->leaf);
}

static void finder_free(finder_t *f)
{
    mpitopo__free(f->leaf);
    mpitopo__free(f->rank);
    mpitopo__free(f->used);
    for (int l = 0; l < MPITOPO_MAX_LEVELS; l++) {
        mpitopo__free(f->count[l]);
        mpitopo__free(f->low[l]);
    }
    mpitopo__free(f->next);
    mpitopo__free(f->prev);
    mpitopo__free(f->best);
    mpitopo__free(f->best_hops);
    mpitopo__free(f->route);
    mpitopo__free(f->unit_of_end);
    for (int j = 0; j < MPITOPO_MAX_LEVELS; j++) {
        mpitopo__free(f->gof[j]);
        mpitopo__free(f->gcount[j]);
        mpitopo__free(f->gfirst[j]);
        mpitopo__free(f->gcur[j]);
        mpitopo__free(f->members[j]);
    }
}

/* The fewest hops between two distinct end nodes, by the kind of network:
 * two in a fat tree or dragonfly (the nodes hang off switches or routers:
 * up one channel, down one), one in the direct networks (and fabrics, which
 * may join two nodes by one cable). Node units sharing an end node are 0
 * apart: then 0. A scan for the closest free node stops at the first one
 * this close. */
static int route_floor(const finder_t *f)
{
    const mpitopo_network_t *net = f->d->network;
    if (f->d->end_node) {
        unsigned char *seen = mpitopo__calloc((size_t)net->nnodes, 1);
        if (!seen)
            return -1;
        int shared = 0, nn = f->m->nunits[f->m->node_level];
        for (int u = 0; u < nn && !shared; u++)
            shared = seen[f->d->end_node[u]]++ != 0;
        mpitopo__free(seen);
        if (shared)
            return 0;
    }
    return net->kind == MPITOPO__NET_FATTREE || net->kind == MPITOPO__NET_DRAGONFLY ? 2 : 1;
}

/* A fat tree's groups over the node units (see finder_t). Its route between
 * two end nodes climbs to their lowest common switch level and back, 2 x
 * that level channels, and the groups are the subtrees of those levels, so
 * fewer hops is a deeper common group. */
static int finder_groups_init(finder_t *f)
{
    const mpitopo_network_t *net = f->d->network;
    int levels = 0, nn = f->m->nunits[f->m->node_level], nl = f->m->node_level;
    mpitopo_network_group_levels(net, &levels);
    if (levels + 1 > MPITOPO_MAX_LEVELS)
        return MPITOPO_SUCCESS; /* not expected: the scan does it then */
    f->ngl = levels + 1;
    for (int j = 0; j < f->ngl; j++) {
        f->gof[j] = mpitopo__malloc_array((size_t)nn, sizeof *f->gof[j]);
        f->gcount[j] = mpitopo__calloc((size_t)net->nnodes, sizeof *f->gcount[j]);
        f->gfirst[j] = mpitopo__calloc((size_t)net->nnodes + 1, sizeof *f->gfirst[j]);
        f->gcur[j] = mpitopo__malloc_array((size_t)net->nnodes, sizeof *f->gcur[j]);
        f->members[j] = mpitopo__malloc_array((size_t)nn, sizeof *f->members[j]);
        if (!f->gof[j] || !f->gcount[j] || !f->gfirst[j] || !f->gcur[j] || !f->members[j])
            return MPITOPO_NOMEM("the fat tree's groups");
        for (int u = 0; u < nn; u++) {
            int64_t g = end_of(f->d, u);
            if (j < levels)
                mpitopo_network_group(net, j, (int)g, &g, NULL);
            f->gof[j][u] = (int)g; /* labels d / size: below nnodes */
            f->gfirst[j][g + 1]++;
            f->gcount[j][g] += f->count[nl][u];
        }
        for (int g = 0; g < net->nnodes; g++) {
            f->gfirst[j][g + 1] += f->gfirst[j][g];
            f->gcur[j][g] = f->gfirst[j][g];
        }
        for (int u = 0; u < nn; u++)
            f->members[j][f->gcur[j][f->gof[j][u]]++] = u;
        for (int g = 0; g < net->nnodes; g++)
            f->gcur[j][g] = f->gfirst[j][g];
    }
    return MPITOPO_SUCCESS;
}

/* A torus or mesh: the unit on each end node, when no two share one (else
 * the scan does it). */
static int finder_grid_init(finder_t *f)
{
    const mpitopo_network_t *net = f->d->network;
    int nn = f->m->nunits[f->m->node_level];
    f->unit_of_end = mpitopo__malloc_array((size_t)net->nnodes, sizeof *f->unit_of_end);
    if (!f->unit_of_end)
        return MPITOPO_NOMEM("the units of the end nodes");
    for (int e = 0; e < net->nnodes; e++)
        f->unit_of_end[e] = -1;
    for (int u = 0; u < nn; u++) {
        if (f->unit_of_end[end_of(f->d, u)] >= 0) {
            mpitopo__free(f->unit_of_end);
            f->unit_of_end = NULL;
            return MPITOPO_SUCCESS;
        }
        f->unit_of_end[end_of(f->d, u)] = u;
    }
    f->reach[net->ndims] = 0;
    for (int i = net->ndims - 1; i >= 0; i--) {
        f->maxd[i] = net->torus ? net->dims[i] / 2 : net->dims[i] - 1;
        f->reach[i] = f->reach[i + 1] + f->maxd[i];
    }
    return MPITOPO_SUCCESS;
}

/* The network part: the list of node units with candidates, the caches. */
static int finder_net_init(finder_t *f)
{
    const mpitopo_machine_t *m = f->m;
    int nn = m->nunits[m->node_level];
    f->next = mpitopo__malloc_array((size_t)nn, sizeof *f->next);
    f->prev = mpitopo__malloc_array((size_t)nn, sizeof *f->prev);
    f->best = mpitopo__malloc_array((size_t)nn, sizeof *f->best);
    f->best_hops = mpitopo__malloc_array((size_t)nn, sizeof *f->best_hops);
    f->route = mpitopo__malloc_array((size_t)(f->d->network->max_route > 0 ? f->d->network->max_route : 1),
                                     sizeof *f->route);
    if (!f->next || !f->prev || !f->best || !f->best_hops || !f->route)
        return MPITOPO_NOMEM("the free node list");
    if ((f->lb = route_floor(f)) < 0)
        return MPITOPO_NOMEM("the end node bitmap");
    int last = -1;
    f->head = -1;
    for (int k = 0; k < f->p; k++) {
        int u = m->unit[m->node_level][f->leaf[k]];
        if (u == last)
            continue;
        f->best[u] = -1;
        f->prev[u] = last;
        f->next[u] = -1;
        if (last >= 0)
            f->next[last] = u;
        else
            f->head = u;
        last = u;
    }
    if (f->d->network->kind == MPITOPO__NET_FATTREE)
        return finder_groups_init(f);
    return f->d->network->kind == MPITOPO__NET_GRID ? finder_grid_init(f) : MPITOPO_SUCCESS;
}

static int finder_init(finder_t *f, const mpitopo__coll_dist_t *d, int p, const int *leaf_of_rank)
{
    const mpitopo_machine_t *m = d->machine;
    memset(f, 0, sizeof *f);
    f->d = d;
    f->m = m;
    f->p = p;
    f->net = uses_network(d);
    f->top = f->net ? m->node_level : 0;
    struct pair *pairs = mpitopo__malloc_array((size_t)p, sizeof *pairs);
    f->leaf = mpitopo__malloc_array((size_t)p, sizeof *f->leaf);
    f->rank = mpitopo__malloc_array((size_t)p, sizeof *f->rank);
    f->used = mpitopo__calloc((size_t)p, 1);
    if (!pairs || !f->leaf || !f->rank || !f->used) {
        mpitopo__free(pairs);
        return MPITOPO_NOMEM("the candidate leaves");
    }
    for (int r = 0; r < p; r++) {
        if (leaf_of_rank[r] < 0 || leaf_of_rank[r] >= m->nleaves) {
            mpitopo__free(pairs);
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo__coll_order", "leaf_of_rank[%d] = %d is not in [0, %d)",
                                   r, leaf_of_rank[r], m->nleaves);
        }
        pairs[r] = (struct pair){leaf_of_rank[r], r};
    }
    qsort(pairs, (size_t)p, sizeof *pairs, by_leaf);
    for (int k = 0; k < p; k++) {
        if (k > 0 && pairs[k].leaf == pairs[k - 1].leaf) {
            int leaf = pairs[k].leaf, a = pairs[k - 1].rank, b = pairs[k].rank;
            mpitopo__free(pairs);
            return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo__coll_order",
                                   "leaf_of_rank[%d] = leaf_of_rank[%d] = %d: ranks must sit on distinct leaves",
                                   a < b ? a : b, a < b ? b : a, leaf);
        }
        f->leaf[k] = pairs[k].leaf;
        f->rank[k] = pairs[k].rank;
    }
    mpitopo__free(pairs);
    for (int l = f->top; l < m->nlevels; l++) {
        f->count[l] = mpitopo__calloc((size_t)m->nunits[l], sizeof *f->count[l]);
        f->low[l] = mpitopo__malloc_array((size_t)m->nunits[l], sizeof *f->low[l]);
        if (!f->count[l] || !f->low[l])
            return MPITOPO_NOMEM("the free counts");
        for (int k = p - 1; k >= 0; k--) { /* downwards: low ends on each unit's first candidate */
            int u = m->unit[l][f->leaf[k]];
            f->count[l][u]++;
            f->low[l][u] = k;
        }
    }
    return f->net ? finder_net_init(f) : MPITOPO_SUCCESS;
}

static void take(finder_t *f, int k)
{
    const mpitopo_machine_t *m = f->m;
    f->used[k] = 1;
    for (int l = f->top; l < m->nlevels; l++)
        f->count[l][m->unit[l][f->leaf[k]]]--;
    if (f->net) {
        int u = m->unit[m->node_level][f->leaf[k]];
        for (int j = 0; j < f->ngl; j++)
            f->gcount[j][f->gof[j][u]]--;
        if (f->count[m->node_level][u] == 0) { /* unlink the exhausted node */
            if (f->prev[u] >= 0)
                f->next[f->prev[u]] = f->next[u];
            else
                f->head = f->next[u];
            if (f->next[u] >= 0)
                f->prev[f->next[u]] = f->prev[u];
        }
    }
}

static int lowest_free(finder_t *f, int l, int u)
{
    int k = f->low[l][u];
    while (f->used[k])
        k++;
    f->low[l][u] = k;
    return k;
}

/* The free node fewest hops from node unit u (which has none left), ties to
 * the lowest: the cached one while it has free leaves, else a scan of the
 * free nodes in increasing order that stops at the first one no farther
 * than the cached distance or the floor (nothing free can be closer). */
/* The lowest unit with free leaves on an end node exactly rem hops from
 * `node` counting dimensions i.. only (node's coordinates there are the
 * reference's), into *best. */
static void grid_shell(const finder_t *f, int i, int rem, int64_t node, int *best)
{
    const mpitopo_network_t *net = f->d->network;
    if (rem > f->reach[i])
        return;
    if (i == net->ndims) {
        int v = f->unit_of_end[node];
        if (v >= 0 && f->count[f->m->node_level][v] > 0 && (*best < 0 || v < *best))
            *best = v;
        return;
    }
    int64_t k = net->dims[i], st = net->stride[i], c = node / st % k;
    for (int t = 0; t <= rem && t <= f->maxd[i]; t++) {
        int64_t up = net->torus ? (c + t) % k : c + t, down = net->torus ? (c - t + k) % k : c - t;
        if (up < k)
            grid_shell(f, i + 1, rem - t, node + (up - c) * st, best);
        if (t > 0 && down >= 0 && down != up)
            grid_shell(f, i + 1, rem - t, node + (down - c) * st, best);
    }
}

/* The free node fewest hops from u in a torus or mesh, lowest on ties: the
 * shells of 1, 2, .. hops around u's end node (from the cached distance:
 * nothing free is closer), each whole, until one holds a free node. */
static int closest_grid(finder_t *f, int u)
{
    int eu = end_of(f->d, u);
    for (int r = f->best[u] >= 0 ? f->best_hops[u] : 1; r <= f->reach[0]; r++) {
        int best = -1;
        grid_shell(f, 0, r, eu, &best);
        if (best >= 0) {
            f->best[u] = best;
            f->best_hops[u] = r;
            return best;
        }
    }
    return -1; /* not reached: a free node exists */
}

static int closest_node(finder_t *f, int u)
{
    const mpitopo_machine_t *m = f->m;
    int nl = m->node_level;
    for (int j = f->ngl - 1; j >= 0; j--) {
        int g = f->gof[j][u];
        if (f->gcount[j][g] > 0) {
            int c = f->gcur[j][g];
            while (f->count[nl][f->members[j][c]] == 0)
                c++;
            f->gcur[j][g] = c;
            return f->members[j][c];
        }
    }
    if (f->ngl > 0)
        return f->head; /* parts at the top: the lowest free node */
    if (f->best[u] >= 0 && f->count[nl][f->best[u]] > 0)
        return f->best[u];
    if (f->unit_of_end)
        return closest_grid(f, u);
    int bound = f->best[u] >= 0 && f->best_hops[u] > f->lb ? f->best_hops[u] : f->lb;
    int eu = end_of(f->d, u), bestv = -1, besth = INT_MAX;
    for (int v = f->head; v >= 0; v = f->next[v]) {
        int ev = end_of(f->d, v);
        int h = ev == eu                                    ? 0
                : f->d->network->kind == MPITOPO__NET_GRID ? grid_hops(f->d->network, eu, ev)
                                                            : mpitopo__network_route(f->d->network, eu, ev, f->route);
        if (h < besth) {
            besth = h;
            bestv = v;
            if (h <= bound)
                break;
        }
    }
    f->best[u] = bestv;
    f->best_hops[u] = besth;
    return bestv;
}

/* The free candidate closest to candidate ref (taken), lowest leaf on ties;
 * at least one is free. */
static int closest(finder_t *f, int ref)
{
    const mpitopo_machine_t *m = f->m;
    int leaf = f->leaf[ref];
    for (int l = m->nlevels - 1; l >= f->top; l--) {
        int u = m->unit[l][leaf];
        if (f->count[l][u] > 0)
            return lowest_free(f, l, u);
    }
    if (f->net)
        return lowest_free(f, m->node_level, closest_node(f, m->unit[m->node_level][leaf]));
    while (f->used[f->glow])
        f->glow++;
    return f->glow;
}

/* ---- the heuristics ------------------------------------------------------- */

/* The state every heuristic shares: kof[new rank] = its candidate, -1 while
 * unplaced. */
typedef struct order {
    finder_t f;
    int *kof;
} order_t;

static void place_near(order_t *o, int new_rank, int ref_rank)
{
    int k = closest(&o->f, o->kof[ref_rank]);
    take(&o->f, k);
    o->kof[new_rank] = k;
}

/* Alg. 4.2: the last-stage partner of the reference first; the reference
 * moves to the rank just placed after two placements. Terminates for every
 * power of two (checked to 2^20); the guard only reports a broken promise. */
static int order_rd(order_t *o, int p)
{
    int ref = 0, i = p / 2, placed = 1, wrt_ref = 0;
    while (placed < p) {
        while (i > 0 && o->kof[ref ^ i] >= 0)
            i /= 2;
        if (i == 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo__coll_order", "RDMH stalled at p = %d", p);
        int new_rank = ref ^ i;
        place_near(o, new_rank, ref);
        placed++;
        if (++wrt_ref == 2) {
            ref = new_rank;
            i = p / 2;
            wrt_ref = 0;
        }
    }
    return MPITOPO_SUCCESS;
}

/* Alg. 4.3: each rank next to its ring predecessor. */
static int order_ring(order_t *o, int p)
{
    for (int r = 1; r < p; r++)
        place_near(o, r, r - 1);
    return MPITOPO_SUCCESS;
}

/* Alg. 4.4: depth-first over the binomial tree of root 0, the children r + i
 * of r (i = 1, 2, 4, .. while r AND i is 0 and r + i < p: the thesis's
 * i <= p/2 leaves ranks unplaced when p is not a power of two, this
 * condition covers any p), smaller subtrees first. Depth at most log2(p). */
static void binomial_dfs(order_t *o, int p, int r)
{
    for (long long i = 1; (r & i) == 0 && r + i < p; i *= 2) {
        place_near(o, (int)(r + i), r);
        binomial_dfs(o, p, (int)(r + i));
    }
}

/* Alg. 4.5: level by level from the largest power of two below p, each rank
 * of a snapshot of V (taken at the level's start) placing ref + i next to
 * itself; so the heavier (later, nearer the root) edges come first. */
static int order_gather(order_t *o, int p)
{
    int *v = mpitopo__malloc_array((size_t)p, sizeof *v);
    if (!v)
        return MPITOPO_NOMEM("the reference list V");
    int nv = 1;
    v[0] = 0;
    long long i = 1;
    while (i * 2 < p)
        i *= 2;
    for (; p > 1 && i > 0; i /= 2) {
        int snapshot = nv;
        for (int j = 0; j < snapshot; j++)
            if (v[j] + i < p) {
                place_near(o, (int)(v[j] + i), v[j]);
                v[nv++] = (int)(v[j] + i);
            }
    }
    mpitopo__free(v);
    return MPITOPO_SUCCESS;
}

int mpitopo__coll_order(mpitopo__coll_heur_t h, const mpitopo__coll_dist_t *d, int p, const int *leaf_of_rank,
                        int *old_of_new)
{
    static const char *const fn = "mpitopo__coll_order";
    if (!d || !d->machine || !leaf_of_rank || !old_of_new)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "%s is NULL",
                               !d ? "d" : !d->machine ? "d->machine" : !leaf_of_rank ? "leaf_of_rank" : "old_of_new");
    if (p < 1 || p > d->machine->nleaves)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "p = %d must be in [1, %d] (the machine's leaves)", p,
                               d->machine->nleaves);
    if ((int)h < MPITOPO__COLL_RDMH || h > MPITOPO__COLL_BGMH)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "h = %d is not a heuristic", (int)h);
    if (h == MPITOPO__COLL_RDMH && (p & (p - 1)) != 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn,
                               "p = %d: RDMH (recursive doubling) needs a power of two number of processes", p);
    if (d->network && d->machine->node_level >= 0) {
        int nn = d->machine->nunits[d->machine->node_level];
        for (int u = 0; u < nn; u++)
            if (end_of(d, u) < 0 || end_of(d, u) >= d->network->nnodes)
                return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, fn, "node %d is on end node %d, not in [0, %d)", u,
                                       end_of(d, u), d->network->nnodes);
    }
    order_t o;
    o.kof = mpitopo__malloc_array((size_t)p, sizeof *o.kof);
    int rc = o.kof ? finder_init(&o.f, d, p, leaf_of_rank) : MPITOPO_NOMEM("the order");
    if (rc == MPITOPO_SUCCESS) {
        for (int r = 0; r < p; r++)
            o.kof[r] = -1;
        int k0 = 0; /* rank 0 stays where it is */
        while (o.f.rank[k0] != 0)
            k0++;
        take(&o.f, k0);
        o.kof[0] = k0;
        switch (h) {
        case MPITOPO__COLL_RDMH: rc = order_rd(&o, p); break;
        case MPITOPO__COLL_RMH: rc = order_ring(&o, p); break;
        case MPITOPO__COLL_BBMH: binomial_dfs(&o, p, 0); break;
        default: rc = order_gather(&o, p); break;
        }
    }
    for (int j = 0; rc == MPITOPO_SUCCESS && j < p; j++)
        old_of_new[j] = o.f.rank[o.kof[j]];
    if (o.kof)
        finder_free(&o.f);
    mpitopo__free(o.kof);
    return rc;
}

/* ---- the mappers ---------------------------------------------------------- */

/* New rank j goes where old rank old_of_new[j] was launched (options->launch,
 * block when NULL): the heuristic only permutes the processes among the
 * leaves they occupy. The pattern gives only the number of processes. */
static int map_coll(mpitopo__coll_heur_t h, const char *name, const mpitopo_machine_t *machine,
                    const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                    const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    int p = 0;
    mpitopo_pattern_nprocs(pattern, &p);
    if (p == 0)
        return MPITOPO_SUCCESS;
    int *launch = mpitopo__malloc_array((size_t)p, sizeof *launch);
    int *old_of_new = mpitopo__malloc_array((size_t)p, sizeof *old_of_new);
    int rc = launch && old_of_new ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the launch placement");
    if (rc == MPITOPO_SUCCESS && options->launch)
        memcpy(launch, options->launch, (size_t)p * sizeof *launch);
    else if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__place_block(machine, p, launch);
    const mpitopo__coll_dist_t d = {machine, net ? net->network : NULL, net ? net->end_node : NULL};
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__coll_order(h, &d, p, launch, old_of_new);
    if (rc != MPITOPO_SUCCESS && rc != MPITOPO_ERR_NOMEM)
        rc = MPITOPO_FAIL_CONTEXT(rc, "mpitopo_map: mapper '%s'", name);
    for (int j = 0; rc == MPITOPO_SUCCESS && j < p; j++)
        leaf_of_proc[j] = launch[old_of_new[j]];
    mpitopo__free(launch);
    mpitopo__free(old_of_new);
    return rc;
}

int mpitopo__map_rdmh(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                      const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    (void)args;
    return map_coll(MPITOPO__COLL_RDMH, "rdmh", machine, pattern, options, net, leaf_of_proc);
}

int mpitopo__map_rmh(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                     const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    (void)args;
    return map_coll(MPITOPO__COLL_RMH, "rmh", machine, pattern, options, net, leaf_of_proc);
}

int mpitopo__map_bbmh(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                      const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    (void)args;
    return map_coll(MPITOPO__COLL_BBMH, "bbmh", machine, pattern, options, net, leaf_of_proc);
}

int mpitopo__map_bgmh(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                      const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    (void)args;
    return map_coll(MPITOPO__COLL_BGMH, "bgmh", machine, pattern, options, net, leaf_of_proc);
}
