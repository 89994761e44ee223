/*
 * The undirected weighted graph of a pattern (mpitopo__tgraph_t, CSR):
 * w(u, v) = w(u -> v) + w(v -> u) under a weight, self edges dropped,
 * parallel edges merged. What the graph mappers partition (map/tree*.c)
 * and what the GPU bound cuts (metrics/gpu_bound.c).
 */
#include "pattern/pattern_internal.h"

#include <string.h>

int mpitopo__tgraph_alloc(mpitopo__tgraph_t *g, int n, int64_t nadj)
{
    size_t na = (size_t)(nadj > 0 ? nadj : 1);
    *g = (mpitopo__tgraph_t){.n = n};
    g->offs = mpitopo__calloc((size_t)n + 1, sizeof *g->offs);
    g->adj = mpitopo__malloc_array(na, sizeof *g->adj);
    g->w = mpitopo__malloc_array(na, sizeof *g->w);
    g->vw = mpitopo__malloc_array((size_t)(n > 0 ? n : 1), sizeof *g->vw);
    if (!g->offs || !g->adj || !g->w || !g->vw) {
        mpitopo__tgraph_free(g);
        return MPITOPO_NOMEM("a process graph");
    }
    for (int v = 0; v < n; v++)
        g->vw[v] = 1;
    return MPITOPO_SUCCESS;
}

void mpitopo__tgraph_free(mpitopo__tgraph_t *g)
{
    mpitopo__free(g->offs);
    mpitopo__free(g->adj);
    mpitopo__free(g->w);
    mpitopo__free(g->vw);
    *g = (mpitopo__tgraph_t){0};
}

/* Merge the duplicates of every row in place (pos[u] is where u went in
 * the current row when >= the row's start) and drop zero weights. */
static void merge_rows(mpitopo__tgraph_t *g, int64_t *pos)
{
    int64_t out = 0;
    for (int v = 0; v < g->n; v++)
        pos[v] = -1;
    for (int v = 0; v < g->n; v++) {
        int64_t lo = g->offs[v], hi = g->offs[v + 1], row = out;
        g->offs[v] = row;
        for (int64_t e = lo; e < hi; e++) {
            int u = g->adj[e];
            if (pos[u] >= row) {
                g->w[pos[u]] += g->w[e];
                continue;
            }
            pos[u] = out;
            g->adj[out] = u;
            g->w[out++] = g->w[e];
        }
        int64_t kept = row;
        for (int64_t e = row; e < out; e++)
            if (g->w[e] > 0) {
                g->adj[kept] = g->adj[e];
                g->w[kept++] = g->w[e];
            }
        out = kept;
    }
    g->offs[g->n] = out;
}

/* The undirected graph of the pattern: w(u, v) = w(u -> v) + w(v -> u)
 * under `weight`; self edges cost nothing wherever they go and are left out. */
int mpitopo__tgraph_build(const mpitopo_pattern_t *pat, mpitopo_weight_t weight, mpitopo__tgraph_t *g)
{
    int n = pat->nprocs;
    int64_t *cursor = mpitopo__malloc_array((size_t)n + 1, sizeof *cursor);
    int rc = cursor ? mpitopo__tgraph_alloc(g, n, 2 * pat->nedges) : MPITOPO_NOMEM("the graph cursors");
    if (rc != MPITOPO_SUCCESS)
        goto cleanup;
    for (int p = 0; p < n; p++)
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++)
            if (pat->dst[e] != p) {
                g->offs[p + 1]++;
                g->offs[pat->dst[e] + 1]++;
            }
    for (int p = 0; p < n; p++)
        g->offs[p + 1] += g->offs[p];
    memcpy(cursor, g->offs, ((size_t)n + 1) * sizeof *cursor);
    for (int p = 0; p < n; p++)
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++) {
            int q = pat->dst[e];
            double w = mpitopo_edge_weight(weight, pat->bytes[e], pat->msgs[e]);
            if (q == p)
                continue;
            g->adj[cursor[p]] = q;
            g->w[cursor[p]++] = w;
            g->adj[cursor[q]] = p;
            g->w[cursor[q]++] = w;
        }
    merge_rows(g, cursor);
cleanup:
    mpitopo__free(cursor);
    return rc;
}
