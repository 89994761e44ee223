/*
 * A lower bound on the GPU-tree maximum congestion (MC) of
 * mpitopo_gpu_metrics() that holds for every mapping of the processes to
 * nodes and GPUs: no mapper can go below it under that cost model, so a
 * mapper that reaches it is optimal.
 *
 * Precondition and proof. Let every (node, GPU) slot hold exactly one
 * process: nprocs = nodes x GPUs per node and no GPU shared (scope TREE).
 * Take a link, from vertex v of one node's tree to v's parent, with s GPUs
 * below v and bandwidth b. The processes on those GPUs form a set S of
 * exactly s processes. mpitopo_gpu_metrics() loads a message p -> q (both
 * directions are messages) on the links of its path: up from p's GPU to
 * the lowest common ancestor and down to q's GPU on one node, up to the
 * node's root and down from the other node's root across nodes. With p in
 * S and q outside S, the path leaves v's subtree (q's GPU is outside it,
 * or on another node), so it crosses v's link; likewise from q to p; with
 * both in S the lowest common ancestor is v or below and the link is not
 * crossed. So the link's load is exactly cut(S) = the bytes between S and
 * the other processes, both ways, and
 *
 *     MC >= cut(S) / b >= min over s-subsets T of cut(T) / b.
 *
 * The maximum over the links of these terms bounds MC from below whatever
 * the mapping (phase 1 included: T ranges over all processes). cut(T) =
 * cut(complement of T), so the minimum over s-subsets is the one over
 * (nprocs - s)-subsets. A valid lower bound of the minimum keeps the
 * inequality, which is what the fallbacks below give.
 *
 * The GPU links (s = 1) carry each process's whole traffic deg(p): the i
 * processes of largest traffic sit on i distinct GPUs, one of which has a
 * link no faster than the i-th fastest of all GPU links, so MC >=
 * deg_i / bw_i for every i (both sorted in decreasing order); always
 * exact. This needs only that no GPU holds two processes (a shared GPU
 * carries none of the traffic between its processes), so it is also the
 * bound (scope LEAVES) when there are fewer processes than GPUs; with more
 * processes than GPUs some GPU must be shared and no bound is claimed
 * (scope NONE, mc 0).
 *
 * The minimum s-subset cut (NP-hard in general) is computed per distinct
 * s, s' = min(s, nprocs - s): 0, exactly, when whole connected components
 * of the traffic graph make up s' processes; else
 *  1. exactly, by enumerating the C(nprocs, s') subsets with the cut kept
 *     incrementally, when C(nprocs, s') is within the budget;
 *  2. else from connected pieces: the components C_i of the traffic graph
 *     induced by T are not joined by any traffic, so cut(T) = sum cut(C_i)
 *     >= sum c[|C_i|], c[t] the least cut of a connected t-set; the least
 *     sum over the ways of writing s' as a sum of sizes (a knapsack over
 *     c[]) is a lower bound, and exact when that least sum is c[s'] alone
 *     (a connected s'-set reaches it). The connected sets are enumerated
 *     once each (Wernicke's ESU), within the budget;
 *  3. else a relaxation: cut(T) = sum_{v in T} deg(v) - 2 W(T), W the
 *     traffic inside T, and 2 W(T) = sum_{v in T} (traffic of v to T) <=
 *     sum_{v in T} top_{s-1}(v), the s - 1 heaviest edges of v; so
 *     cut(T) >= the sum of the s smallest deg(v) - top_{s-1}(v). Cheap,
 *     valid, weak on regular stencils (often 0). The larger of 2 and 3 is
 *     kept when both are at hand.
 * Levels whose links never congest (infinite bandwidth) add nothing, nor
 * are searched the sizes whose term cannot raise the bound: when the cut
 * of some actual s-set (greedy growths, blocks of consecutive processes)
 * over the slowest link above s GPUs is no higher than the bound so far,
 * the minimum is no higher either.
 */
#include "machine/gpu_internal.h"
#include "machine/machine_internal.h"
#include "pattern/pattern_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Subsets or connected sets visited per subset size: about 0.2 s. */
#define DEFAULT_BUDGET 4e6
/* Beyond this s' the enumerations are never attempted. */
#define ENUM_MAX 64

/* The symmetric traffic graph, vol(p, q) = bytes p -> q + bytes q -> p
 * (the tree mapper's undirected graph), and each vertex's traffic. */
typedef struct graph {
    mpitopo__tgraph_t t;
    double *deg;
} graph_t;

static void graph_free(graph_t *g)
{
    mpitopo__tgraph_free(&g->t);
    mpitopo__free(g->deg);
}

static int graph_build(const mpitopo_pattern_t *pat, graph_t *g)
{
    g->deg = NULL;
    int rc = mpitopo__tgraph_build(pat, MPITOPO_WEIGHT_BYTES, &g->t);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    g->deg = mpitopo__calloc((size_t)g->t.n + 1, sizeof *g->deg);
    if (!g->deg) {
        graph_free(g);
        return MPITOPO_NOMEM("the traffic graph of the GPU bound");
    }
    for (int v = 0; v < g->t.n; v++)
        for (int64_t e = g->t.offs[v]; e < g->t.offs[v + 1]; e++)
            g->deg[v] += g->t.w[e];
    return MPITOPO_SUCCESS;
}

/* ---- the minimum s-subset cut ------------------------------------------- */

typedef struct search {
    const graph_t *g;
    int s;
    double *inw;   /* n: traffic between v and the current set */
    int *insub;    /* n */
    int *near;     /* n: members of the current set adjacent to v */
    int *buf;      /* s x n: the extension sets of ESU, one per depth */
    double *c;     /* s + 1: least cut of a connected t-set */
    double best;   /* least cut of an s-subset (enumeration 1) */
    double count, budget;
    int aborted;
} search_t;

static void add_vertex(search_t *x, int u, int sign)
{
    const graph_t *g = x->g;
    x->insub[u] = sign > 0;
    for (int64_t e = g->t.offs[u]; e < g->t.offs[u + 1]; e++) {
        x->inw[g->t.adj[e]] += sign * g->t.w[e];
        x->near[g->t.adj[e]] += sign;
    }
}

/* Enumeration 1: every s-subset of {from..n-1} added to the current k. */
static void combos(search_t *x, int from, int k, double cut)
{
    if (k == x->s) {
        if (cut < x->best)
            x->best = cut;
        return;
    }
    for (int u = from; u <= x->g->t.n - (x->s - k); u++) {
        double c = cut + x->g->deg[u] - 2 * x->inw[u];
        add_vertex(x, u, +1);
        combos(x, u + 1, k + 1, c);
        add_vertex(x, u, -1);
    }
}

/* Enumeration 2 (ESU): the connected sets whose least vertex is root,
 * each once; the current set has size vertices and cut cut, ext[0..next)
 * its extension (neighbours above root not yet taken). */
static void esu(search_t *x, int root, const int *ext, int next, int size, double cut)
{
    if (x->aborted)
        return;
    if (++x->count > x->budget) {
        x->aborted = 1;
        return;
    }
    if (cut < x->c[size])
        x->c[size] = cut;
    if (size == x->s)
        return;
    const graph_t *g = x->g;
    int *mine = x->buf + (size_t)size * (size_t)g->t.n;
    for (int i = 0; i < next && !x->aborted; i++) {
        int w = ext[i], m = 0;
        for (int k = i + 1; k < next; k++)
            mine[m++] = ext[k];
        /* w's exclusive neighbours: neither in the set nor next to it. */
        for (int64_t e = g->t.offs[w]; e < g->t.offs[w + 1]; e++) {
            int u = g->t.adj[e];
            if (u > root && !x->insub[u] && x->near[u] == 0)
                mine[m++] = u;
        }
        double c = cut + g->deg[w] - 2 * x->inw[w];
        add_vertex(x, w, +1);
        esu(x, root, mine, m, size + 1, c);
        add_vertex(x, w, -1);
    }
}

static double binomial(int n, int k)
{
    double r = 1;
    for (int i = 1; i <= k; i++)
        r = r * (n - k + i) / i;
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_double_desc(const void *a, const void *b)
{
    return cmp_double(b, a);
}

/* Relaxation 3: the sum of the s smallest deg(v) - top_{s-1}(v). */
static int relaxation(const graph_t *g, int s, double *lb)
{
    int n = g->t.n, maxdeg = 0;
    for (int v = 0; v < n; v++)
        if (g->t.offs[v + 1] - g->t.offs[v] > maxdeg)
            maxdeg = (int)(g->t.offs[v + 1] - g->t.offs[v]);
    double *r = mpitopo__malloc_array((size_t)n + 1, sizeof *r);
    double *w = mpitopo__malloc_array((size_t)maxdeg + 1, sizeof *w);
    if (!r || !w) {
        mpitopo__free(r);
        mpitopo__free(w);
        return MPITOPO_NOMEM("the GPU bound's relaxation");
    }
    for (int v = 0; v < n; v++) {
        int d = (int)(g->t.offs[v + 1] - g->t.offs[v]);
        memcpy(w, g->t.w + g->t.offs[v], (size_t)d * sizeof *w);
        qsort(w, (size_t)d, sizeof *w, cmp_double_desc);
        double top = 0;
        for (int e = 0; e < d && e < s - 1; e++)
            top += w[e];
        r[v] = g->deg[v] - top > 0 ? g->deg[v] - top : 0;
    }
    qsort(r, (size_t)n, sizeof *r, cmp_double);
    double sum = 0;
    for (int i = 0; i < s && i < n; i++)
        sum += r[i];
    *lb = sum;
    mpitopo__free(r);
    mpitopo__free(w);
    return MPITOPO_SUCCESS;
}

/* Whether some union of whole connected components of the traffic graph
 * has exactly s processes (its cut is 0): a subset sum over their sizes. */
static int components_fit(const graph_t *g, int s, int *fit)
{
    int n = g->t.n;
    int *stack = mpitopo__malloc_array((size_t)n + 1, sizeof *stack);
    char *seen = mpitopo__calloc((size_t)n + 1, 1), *reach = mpitopo__calloc((size_t)s + 1, 1);
    if (!stack || !seen || !reach) {
        mpitopo__free(stack);
        mpitopo__free(seen);
        mpitopo__free(reach);
        return MPITOPO_NOMEM("the GPU bound's components");
    }
    reach[0] = 1;
    for (int v = 0; v < n; v++) {
        if (seen[v])
            continue;
        int top = 0, size = 0;
        stack[top++] = v;
        seen[v] = 1;
        while (top > 0) {
            int u = stack[--top];
            size++;
            for (int64_t e = g->t.offs[u]; e < g->t.offs[u + 1]; e++)
                if (!seen[g->t.adj[e]]) {
                    seen[g->t.adj[e]] = 1;
                    stack[top++] = g->t.adj[e];
                }
        }
        for (int t = s; t >= size; t--)
            reach[t] |= reach[t - size];
    }
    *fit = reach[s];
    mpitopo__free(stack);
    mpitopo__free(seen);
    mpitopo__free(reach);
    return MPITOPO_SUCCESS;
}

/* A lower bound *lb on the least cut of an s-subset; *exact 1 when it is
 * that least cut. */
static int min_cut(const graph_t *g, int s, double budget, double *lb, int *exact)
{
    int n = g->t.n;
    if (n - s < s)
        s = n - s;
    *lb = 0;
    *exact = 1;
    int fit = 0, rc = s > 0 ? components_fit(g, s, &fit) : MPITOPO_SUCCESS;
    if (rc || s <= 0 || fit)
        return rc; /* 0, exact */
    rc = relaxation(g, s, lb);
    if (rc)
        return rc;
    *exact = 0;
    if (s > ENUM_MAX)
        return MPITOPO_SUCCESS;
    search_t x = {.g = g, .s = s, .best = INFINITY, .budget = budget};
    x.inw = mpitopo__calloc((size_t)n, sizeof *x.inw);
    x.insub = mpitopo__calloc((size_t)n, sizeof *x.insub);
    x.near = mpitopo__calloc((size_t)n, sizeof *x.near);
    x.buf = mpitopo__malloc_array((size_t)s * (size_t)n, sizeof *x.buf);
    x.c = mpitopo__malloc_array((size_t)s + 1, sizeof *x.c);
    double *best = mpitopo__malloc_array((size_t)s + 1, sizeof *best);
    if (!x.inw || !x.insub || !x.near || !x.buf || !x.c || !best) {
        rc = MPITOPO_NOMEM("the GPU bound's search");
        goto done;
    }
    if (binomial(n, s) <= budget) {
        combos(&x, 0, 0, 0);
        *lb = x.best;
        *exact = 1;
        goto done;
    }
    for (int t = 0; t <= s; t++)
        x.c[t] = INFINITY;
    for (int v = 0; v < n && !x.aborted; v++) {
        int m = 0;
        for (int64_t e = g->t.offs[v]; e < g->t.offs[v + 1]; e++)
            if (g->t.adj[e] > v)
                x.buf[m++] = g->t.adj[e];
        add_vertex(&x, v, +1);
        esu(&x, v, x.buf, m, 1, g->deg[v]);
        add_vertex(&x, v, -1);
    }
    if (x.aborted)
        goto done; /* the relaxation stands */
    best[0] = 0;
    for (int t = 1; t <= s; t++) {
        best[t] = INFINITY;
        for (int a = 1; a <= t; a++)
            if (x.c[a] + best[t - a] < best[t])
                best[t] = x.c[a] + best[t - a];
    }
    *exact = best[s] == x.c[s];
    if (best[s] > *lb)
        *lb = best[s];
done:
    mpitopo__free(x.inw);
    mpitopo__free(x.insub);
    mpitopo__free(x.near);
    mpitopo__free(x.buf);
    mpitopo__free(x.c);
    mpitopo__free(best);
    return rc;
}

/* ---- the bound ------------------------------------------------------------ */

/* The GPU links: max over i of the i-th largest traffic over the i-th
 * fastest of the nodes x g GPU links. */
static int leaf_bound(const graph_t *g, const mpitopo__ptree_t *t, int nnodes, double *mc)
{
    size_t nl = (size_t)nnodes * (size_t)t->npe;
    double *deg = mpitopo__malloc_array((size_t)g->t.n + 1, sizeof *deg);
    double *bw = mpitopo__malloc_array(nl + 1, sizeof *bw);
    if (!deg || !bw) {
        mpitopo__free(deg);
        mpitopo__free(bw);
        return MPITOPO_NOMEM("the GPU bound's links");
    }
    memcpy(deg, g->deg, (size_t)g->t.n * sizeof *deg);
    for (size_t i = 0; i < nl; i++)
        bw[i] = t->bw[t->pe_vertex[i % (size_t)t->npe]];
    qsort(deg, (size_t)g->t.n, sizeof *deg, cmp_double_desc);
    qsort(bw, nl, sizeof *bw, cmp_double_desc);
    *mc = 0;
    for (int i = 0; i < g->t.n; i++)
        if (deg[i] / bw[i] > *mc)
            *mc = deg[i] / bw[i];
    mpitopo__free(deg);
    mpitopo__free(bw);
    return MPITOPO_SUCCESS;
}

/* The cut of an actual s-set, so at least the minimum: the least over
 * greedy growths (from up to 64 evenly spaced processes, each step adding
 * the neighbour of the set that raises its cut least, any process when
 * the set has none left) and blocks of s consecutive processes. */
static int some_cut(const graph_t *g, int s, double *upper)
{
    int n = g->t.n;
    search_t x = {.g = g};
    x.inw = mpitopo__calloc((size_t)n + 1, sizeof *x.inw);
    x.insub = mpitopo__calloc((size_t)n + 1, sizeof *x.insub);
    x.near = mpitopo__calloc((size_t)n + 1, sizeof *x.near);
    int *set = mpitopo__malloc_array((size_t)s + 1, sizeof *set);
    int rc = x.inw && x.insub && x.near && set ? MPITOPO_SUCCESS
                                               : MPITOPO_NOMEM("the GPU bound's greedy sets");
    double best = INFINITY;
    int starts = n < 64 ? n : 64;
    for (int k = 0; k < 2 * starts && !rc; k++) {
        int greedy = k < starts, first = greedy ? (int)((long long)k * n / starts)
                                                : (int)((long long)(k - starts) * n / starts);
        if (!greedy && first + s > n)
            continue;
        double cut = 0;
        for (int m = 0; m < s; m++) {
            int u = -1;
            double du = INFINITY;
            for (int i = 0; greedy && m > 0 && i < m; i++)
                for (int64_t e = g->t.offs[set[i]]; e < g->t.offs[set[i] + 1]; e++) {
                    int w = g->t.adj[e];
                    if (!x.insub[w] && g->deg[w] - 2 * x.inw[w] < du)
                        u = w, du = g->deg[w] - 2 * x.inw[w];
                }
            if (!greedy)
                u = first + m;
            else if (m == 0)
                u = first;
            for (int w = 0; u < 0 && w < n; w++)
                if (!x.insub[w])
                    u = w;
            cut += g->deg[u] - 2 * x.inw[u];
            set[m] = u;
            add_vertex(&x, u, +1);
        }
        best = cut < best ? cut : best;
        for (int m = 0; m < s; m++)
            add_vertex(&x, set[m], -1);
    }
    *upper = best;
    mpitopo__free(x.inw);
    mpitopo__free(x.insub);
    mpitopo__free(x.near);
    mpitopo__free(set);
    return rc;
}

/* The inner links: max over vertices v of the least cut of an s_v-subset
 * over v's bandwidth. Per distinct s, from the smallest, with bw(s) the
 * slowest link above s GPUs: a size whose term cannot raise the bound
 * found so far (the cut of some s-set, an upper bound of the minimum, over
 * bw(s) is no higher) is not searched; the bound, and whether it is the
 * maximum of exact terms, are the same without it. */
static int tree_bound(const graph_t *g, const mpitopo__ptree_t *t, double budget,
                      mpitopo__gpu_bound_t *b)
{
    int nv = t->nvert, npe = t->npe, rc = MPITOPO_SUCCESS;
    int *below = mpitopo__calloc((size_t)nv, sizeof *below);
    char *is_pe = mpitopo__calloc((size_t)nv, 1);
    double *slowest = mpitopo__malloc_array((size_t)npe + 1, sizeof *slowest);
    if (!below || !is_pe || !slowest)
        rc = MPITOPO_NOMEM("the GPU bound's tree");
    for (int i = 0; i < npe && !rc; i++) {
        is_pe[t->pe_vertex[i]] = 1;
        for (int x = t->pe_vertex[i]; x >= 0; x = t->parent[x])
            below[x]++;
    }
    for (int s = 0; s <= npe && !rc; s++)
        slowest[s] = INFINITY;
    for (int v = 1; v < nv && !rc; v++)
        if (!is_pe[v] && below[v] > 0 && t->bw[v] < slowest[below[v]])
            slowest[below[v]] = t->bw[v];
    for (int s = 1; s <= npe && !rc; s++) {
        double cut = 0;
        int exact = 0;
        if (isinf(slowest[s]) || (rc = some_cut(g, s, &cut)) || cut / slowest[s] <= b->mc)
            continue;
        rc = min_cut(g, s, budget, &cut, &exact);
        b->exact &= exact;
        if (!rc && cut / slowest[s] > b->mc)
            b->mc = cut / slowest[s];
    }
    mpitopo__free(below);
    mpitopo__free(is_pe);
    mpitopo__free(slowest);
    return rc;
}

int mpitopo__gpu_bound(const mpitopo_machine_t *machine, const mpitopo_gpus_t *gpus,
                       const mpitopo_pattern_t *gpu_pattern, double budget,
                       mpitopo__gpu_bound_t *bound)
{
    if (!machine || !gpus || !gpu_pattern || !bound)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL",
                            !machine ? "machine" : !gpus ? "gpus" : !gpu_pattern ? "gpu_pattern"
                                                                                  : "bound");
    if (machine->node_level < 0)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "the machine has no level named \"node\"");
    memset(bound, 0, sizeof *bound);
    const mpitopo__ptree_t *t = &gpus->tree;
    int n = 0, nnodes = machine->nunits[machine->node_level];
    mpitopo_pattern_nprocs(gpu_pattern, &n);
    long long slots = (long long)nnodes * t->npe;
    if (n > slots) {
        bound->scope = MPITOPO__BOUND_NONE;
        return MPITOPO_SUCCESS;
    }
    graph_t g;
    int rc = graph_build(gpu_pattern, &g);
    if (rc)
        return rc;
    rc = leaf_bound(&g, t, nnodes, &bound->leaf_mc);
    bound->mc = bound->leaf_mc;
    bound->exact = 1;
    bound->scope = n == slots ? MPITOPO__BOUND_TREE : MPITOPO__BOUND_LEAVES;
    if (!rc && n == slots)
        rc = tree_bound(&g, t, budget > 0 ? budget : DEFAULT_BUDGET, bound);
    graph_free(&g);
    return rc;
}
