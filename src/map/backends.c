/* What the Scotch and METIS mappers share: the symmetrised integer graph both
 * libraries take, and the balance repair that turns their nearly balanced
 * results into placements with exact capacities. Plain C, no library
 * headers, so it builds whether or not the backends are available. */
#include "machine/machine_internal.h"
#include "map/map_internal.h"
#include "pattern/pattern_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void mpitopo__bk_graph_free(mpitopo__bk_graph_t *g)
{
    mpitopo__free(g->xadj);
    mpitopo__free(g->adj);
    mpitopo__free(g->wgt);
    memset(g, 0, sizeof *g);
}

/* Both directions of every non-self edge, unmerged: row p of (off, adj, w)
 * holds the arcs p -> q and, for every edge q -> p, the arc p -> q again. */
static int gather_arcs(const mpitopo_pattern_t *pt, mpitopo_weight_t weight, int64_t *off, int *adj, double *w)
{
    int n = pt->nprocs;
    int64_t *pos = mpitopo__malloc_array((size_t)n, sizeof *pos);
    if (!pos)
        return MPITOPO_NOMEM("the arc cursors");
    memcpy(pos, off, (size_t)n * sizeof *pos);
    for (int p = 0; p < n; p++) {
        for (int64_t e = pt->offs[p]; e < pt->offs[p + 1]; e++) {
            int q = pt->dst[e];
            if (q == p)
                continue;
            double x = mpitopo_edge_weight(weight, pt->bytes[e], pt->msgs[e]);
            adj[pos[p]] = q;
            w[pos[p]++] = x;
            adj[pos[q]] = p;
            w[pos[q]++] = x;
        }
    }
    mpitopo__free(pos);
    return MPITOPO_SUCCESS;
}

/* Merge the repeated arcs of every row in place (rows only shrink, so the
 * write position never passes the read position); xadj gets the new rows.
 * where[q] remembers the slot of q in the row being merged: slots of earlier
 * rows lie below the row's start, so no reset is needed between rows. */
static int merge_rows(int n, const int64_t *off, int *adj, double *w, int *xadj)
{
    int *where = mpitopo__malloc_array((size_t)n, sizeof *where);
    if (!where)
        return MPITOPO_NOMEM("the merge slots");
    for (int q = 0; q < n; q++)
        where[q] = -1;
    int k = 0;
    for (int p = 0; p < n; p++) {
        int start = k;
        xadj[p] = start;
        for (int64_t e = off[p]; e < off[p + 1]; e++) {
            int q = adj[e];
            if (where[q] >= start) {
                w[where[q]] += w[e];
                continue;
            }
            where[q] = k;
            adj[k] = q;
            w[k++] = w[e];
        }
    }
    xadj[n] = k;
    mpitopo__free(where);
    return MPITOPO_SUCCESS;
}

/*
 * Integer weights whose total stays within budget: the partitioners add
 * weights (times distances, for Scotch) in 32-bit integers. Integral weights
 * that fit are kept as they are; otherwise they are scaled so the total is
 * about the budget. Every arc weighs at least 1: an edge of the pattern is
 * communication, and both libraries want positive weights.
 */
static int integer_weights(mpitopo__bk_graph_t *g, const double *w, long long budget)
{
    int narcs = g->xadj[g->n];
    double total = 0;
    int integral = 1;
    for (int i = 0; i < narcs; i++) {
        total += w[i];
        integral &= w[i] == floor(w[i]);
    }
    if (budget < 2LL * narcs)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, "mpitopo_map", "%d arcs are too many for the 32-bit weights of the "
                                                 "partitioning library (at most %lld)", narcs, budget / 2);
    double room = (double)(budget - narcs);
    double scale = total > 0 ? room / total : 1.0;
    if (integral && scale >= 1.0)
        scale = 1.0;
    g->wgt = mpitopo__malloc_array((size_t)narcs > 0 ? (size_t)narcs : 1, sizeof *g->wgt);
    if (!g->wgt)
        return MPITOPO_NOMEM("the integer edge weights");
    for (int i = 0; i < narcs; i++) {
        long long x = llround(w[i] * scale);
        g->wgt[i] = x < 1 ? 1 : (int)x;
    }
    return MPITOPO_SUCCESS;
}

static int count_arcs(const mpitopo_pattern_t *pt, int64_t *off)
{
    int n = pt->nprocs;
    for (int p = 0; p < n; p++)
        for (int64_t e = pt->offs[p]; e < pt->offs[p + 1]; e++)
            if (pt->dst[e] != p) {
                off[p + 1]++;
                off[pt->dst[e] + 1]++;
            }
    for (int p = 0; p < n; p++)
        off[p + 1] += off[p];
    if (off[n] > INT_MAX)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, "mpitopo_map", "%lld arcs exceed the 32-bit indices of the "
                                                 "partitioning library", (long long)off[n]);
    return MPITOPO_SUCCESS;
}

int mpitopo__bk_graph_build(const mpitopo_pattern_t *pattern, mpitopo_weight_t weight, long long budget,
                            mpitopo__bk_graph_t *g)
{
    int n = pattern->nprocs;
    memset(g, 0, sizeof *g);
    g->n = n;
    double *w = NULL;
    int64_t *off = mpitopo__calloc((size_t)n + 1, sizeof *off);
    if (!off)
        return MPITOPO_NOMEM("the arc offsets");
    int rc = count_arcs(pattern, off);
    if (rc != MPITOPO_SUCCESS)
        goto cleanup;
    size_t narcs = off[n] > 0 ? (size_t)off[n] : 1;
    g->xadj = mpitopo__malloc_array((size_t)n + 1, sizeof *g->xadj);
    g->adj = mpitopo__malloc_array(narcs, sizeof *g->adj);
    w = mpitopo__malloc_array(narcs, sizeof *w);
    if (!g->xadj || !g->adj || !w) {
        rc = MPITOPO_NOMEM("the symmetrised graph");
        goto cleanup;
    }
    if ((rc = gather_arcs(pattern, weight, off, g->adj, w)) != MPITOPO_SUCCESS)
        goto cleanup;
    if ((rc = merge_rows(n, off, g->adj, w, g->xadj)) != MPITOPO_SUCCESS)
        goto cleanup;
    rc = integer_weights(g, w, budget);
cleanup:
    mpitopo__free(off);
    mpitopo__free(w);
    if (rc != MPITOPO_SUCCESS)
        mpitopo__bk_graph_free(g);
    return rc;
}

/* ---- balance repair ----------------------------------------------------- */

int mpitopo__bk_capacity(const mpitopo_machine_t *m, int nprocs, int level, int unit)
{
    int lo = m->first[level][unit], hi = m->first[level][unit + 1];
    if (hi > nprocs)
        hi = nprocs;
    return hi > lo ? hi - lo : 0;
}

typedef struct repair {
    const mpitopo_machine_t *m;
    const mpitopo__bk_graph_t *g;
    int nprocs, level;
    int *leaf;        /* per process, the leaf standing for its unit */
    int *count;       /* processes per unit of the level */
    int *cursor;      /* per parent unit: no underfull child below it */
    long long *acc;   /* weight from one process to each unit, zero between uses */
    int *touched;     /* units with a non-zero acc */
} repair_t;

static int unit_of(const repair_t *r, int p)
{
    return r->m->unit[r->level][r->leaf[p]];
}

static int parent_of(const repair_t *r, int u)
{
    return r->level == 0 ? 0 : r->m->unit[r->level - 1][r->m->first[r->level][u]];
}

static int underfull(const repair_t *r, int u)
{
    return r->count[u] < mpitopo__bk_capacity(r->m, r->nprocs, r->level, u);
}

/* The first underfull child of parent `par`. Units only fill up during a
 * repair (processes leave overfull units only), so the cursor only moves
 * forward. There is always one while a sibling is overfull: the parent's
 * count is exact. */
static int first_underfull(repair_t *r, int par)
{
    while (!underfull(r, r->cursor[par]))
        r->cursor[par]++;
    return r->cursor[par];
}

/* Best underfull sibling for process p (in unit a): the one p sends the most
 * weight to; *gain is that weight minus the weight p keeps inside a. */
static int best_target(repair_t *r, int p, long long *gain)
{
    int a = unit_of(r, p), par = parent_of(r, a), ntouched = 0;
    long long inside = 0;
    for (int e = r->g->xadj[p]; e < r->g->xadj[p + 1]; e++) {
        int b = unit_of(r, r->g->adj[e]);
        if (b == a) {
            inside += r->g->wgt[e];
        } else if (parent_of(r, b) == par && underfull(r, b)) {
            if (r->acc[b] == 0)
                r->touched[ntouched++] = b;
            r->acc[b] += r->g->wgt[e];
        }
    }
    int best = -1;
    for (int i = 0; i < ntouched; i++) {
        int b = r->touched[i];
        if (best < 0 || r->acc[b] > r->acc[best] || (r->acc[b] == r->acc[best] && b < best))
            best = b;
    }
    long long out = best >= 0 ? r->acc[best] : 0;
    for (int i = 0; i < ntouched; i++)
        r->acc[r->touched[i]] = 0;
    if (best < 0)
        best = first_underfull(r, par);
    *gain = out - inside;
    return best;
}

typedef struct candidate {
    long long gain;
    int proc;
} candidate_t;

static int by_gain(const void *x, const void *y)
{
    const candidate_t *a = x, *b = y;
    if (a->gain != b->gain)
        return a->gain > b->gain ? -1 : 1;
    return (a->proc > b->proc) - (a->proc < b->proc);
}

/* Move p to unit b. Its new leaf is the next free-looking one of b, so the
 * processes arriving in b spread over b's children. */
static void move(repair_t *r, int p, int b)
{
    r->count[unit_of(r, p)]--;
    int size = r->m->first[r->level][b + 1] - r->m->first[r->level][b];
    r->leaf[p] = r->m->first[r->level][b] + r->count[b] % size;
    r->count[b]++;
}

/* Candidates are all processes of overfull units, best gain first; each is
 * re-evaluated when its turn comes, as earlier moves fill targets. */
static int repair_pass(repair_t *r)
{
    int ncand = 0;
    for (int p = 0; p < r->nprocs; p++)
        ncand += r->count[unit_of(r, p)] > mpitopo__bk_capacity(r->m, r->nprocs, r->level, unit_of(r, p));
    if (ncand == 0)
        return MPITOPO_SUCCESS;
    candidate_t *cand = mpitopo__malloc_array((size_t)ncand, sizeof *cand);
    if (!cand)
        return MPITOPO_NOMEM("the repair candidates");
    int k = 0;
    for (int p = 0; p < r->nprocs; p++) {
        int a = unit_of(r, p);
        if (r->count[a] > mpitopo__bk_capacity(r->m, r->nprocs, r->level, a)) {
            cand[k].proc = p;
            best_target(r, p, &cand[k++].gain);
        }
    }
    qsort(cand, (size_t)ncand, sizeof *cand, by_gain);
    for (int i = 0; i < ncand; i++) {
        int p = cand[i].proc, a = unit_of(r, p);
        if (r->count[a] <= mpitopo__bk_capacity(r->m, r->nprocs, r->level, a))
            continue;
        long long gain;
        move(r, p, best_target(r, p, &gain));
    }
    mpitopo__free(cand);
    return MPITOPO_SUCCESS;
}

int mpitopo__bk_repair_level(const mpitopo_machine_t *m, const mpitopo__bk_graph_t *g, int nprocs, int level,
                             int *leaf)
{
    int nunits = m->nunits[level], nparents = level == 0 ? 1 : m->nunits[level - 1];
    repair_t r = {.m = m, .g = g, .nprocs = nprocs, .level = level, .leaf = leaf};
    r.count = mpitopo__calloc((size_t)nunits, sizeof *r.count);
    r.cursor = mpitopo__malloc_array((size_t)nparents, sizeof *r.cursor);
    r.acc = mpitopo__calloc((size_t)nunits, sizeof *r.acc);
    r.touched = mpitopo__malloc_array((size_t)nunits, sizeof *r.touched);
    int rc = MPITOPO_SUCCESS;
    if (!r.count || !r.cursor || !r.acc || !r.touched) {
        rc = MPITOPO_NOMEM("the repair counters");
        goto cleanup;
    }
    for (int par = 0; par < nparents; par++)
        r.cursor[par] = level == 0 ? 0 : m->unit[level][m->first[level - 1][par]];
    for (int p = 0; p < nprocs; p++)
        r.count[unit_of(&r, p)]++;
    rc = repair_pass(&r);
cleanup:
    mpitopo__free(r.count);
    mpitopo__free(r.cursor);
    mpitopo__free(r.acc);
    mpitopo__free(r.touched);
    return rc;
}

/* Leaves below one parent all cost the same to each other, so once the
 * parents' counts are exact, the processes of each parent take its leaves
 * in process order. */
int mpitopo__bk_assign_leaves(const mpitopo_machine_t *m, int nprocs, int *leaf)
{
    if (m->nlevels == 1) {
        for (int p = 0; p < nprocs; p++)
            leaf[p] = p;
        return MPITOPO_SUCCESS;
    }
    int top = m->nlevels - 2, nunits = m->nunits[top];
    int *next = mpitopo__malloc_array((size_t)nunits, sizeof *next);
    if (!next)
        return MPITOPO_NOMEM("the leaf cursors");
    for (int u = 0; u < nunits; u++)
        next[u] = m->first[top][u];
    int rc = MPITOPO_SUCCESS;
    for (int p = 0; p < nprocs && rc == MPITOPO_SUCCESS; p++) {
        int u = m->unit[top][leaf[p]];
        if (next[u] >= m->first[top][u + 1] || next[u] >= nprocs)
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "balance repair left unit %d of level '%s' overfull",
                                u, m->name[top]);
        else
            leaf[p] = next[u]++;
    }
    mpitopo__free(next);
    return rc;
}
