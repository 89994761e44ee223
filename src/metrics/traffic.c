/* Traffic of a mapping across the node boundary: on- and off-node partner
 * counts and the off-node edges and weight (mpitopo__node_traffic), what
 * the level metrics (metrics.c) and the box bound (boxbound.c) share. */
#include "metrics/metrics_internal.h"
#include "pattern/pattern_internal.h"

#include <string.h>

static void stat_add(mpitopo_stat_t *s, double v, int first)
{
    if (first || v < s->min)
        s->min = v;
    if (first || v > s->max)
        s->max = v;
    s->avg += v;
}

/* In-neighbours of every process (transposed CSR, sources only). */
static int transpose(const mpitopo_pattern_t *pat, int64_t **offs_out, int **src_out)
{
    int n = pat->nprocs;
    int64_t *offs = mpitopo__calloc((size_t)n + 1, sizeof *offs);
    int *src = mpitopo__malloc_array((size_t)pat->nedges, sizeof *src);
    if (!offs || !src) {
        mpitopo__free(offs);
        mpitopo__free(src);
        return MPITOPO_NOMEM("the transposed pattern");
    }
    for (int64_t e = 0; e < pat->nedges; e++)
        offs[pat->dst[e] + 1]++;
    for (int p = 0; p < n; p++)
        offs[p + 1] += offs[p];
    for (int p = 0; p < n; p++)
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++)
            src[offs[pat->dst[e]]++] = p;
    for (int p = n; p > 0; p--)
        offs[p] = offs[p - 1];
    offs[0] = 0;
    *offs_out = offs;
    *src_out = src;
    return MPITOPO_SUCCESS;
}

/* Count the distinct partners of p on and off its node; `stamp` marks the
 * partners already seen for p (stamp[q] == p + 1). */
static void count_partners(const mpitopo_pattern_t *pat, const int64_t *toffs, const int *tsrc,
                           const int *node_of_proc, int p, int *stamp, int *on, int *off)
{
    *on = *off = 0;
    for (int pass = 0; pass < 2; pass++) {
        int64_t lo = pass ? toffs[p] : pat->offs[p], hi = pass ? toffs[p + 1] : pat->offs[p + 1];
        const int *peers = pass ? tsrc : pat->dst;
        for (int64_t e = lo; e < hi; e++) {
            int q = peers[e];
            if (q == p || stamp[q] == p + 1)
                continue;
            stamp[q] = p + 1;
            if (node_of_proc[q] == node_of_proc[p])
                (*on)++;
            else
                (*off)++;
        }
    }
}

int mpitopo__node_traffic(const mpitopo_pattern_t *pat, const int *node_of_proc, mpitopo_weight_t weight,
                          mpitopo__node_traffic_t *out)
{
    int64_t *toffs = NULL;
    int *tsrc = NULL;
    int *stamp = mpitopo__calloc((size_t)pat->nprocs, sizeof *stamp);
    int rc = stamp ? transpose(pat, &toffs, &tsrc) : MPITOPO_NOMEM("the partner stamps");
    if (rc != MPITOPO_SUCCESS)
        goto cleanup;
    memset(out, 0, sizeof *out);
    for (int p = 0; p < pat->nprocs; p++) {
        int on, off;
        count_partners(pat, toffs, tsrc, node_of_proc, p, stamp, &on, &off);
        stat_add(&out->onnode_partners, on, p == 0);
        stat_add(&out->offnode_partners, off, p == 0);
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++) {
            if (node_of_proc[pat->dst[e]] != node_of_proc[p]) {
                out->offnode_edges++;
                out->offnode_weight += mpitopo_edge_weight(weight, pat->bytes[e], pat->msgs[e]);
            }
        }
    }
    if (pat->nprocs > 0) {
        out->onnode_partners.avg /= pat->nprocs;
        out->offnode_partners.avg /= pat->nprocs;
    }
cleanup:
    mpitopo__free(stamp);
    mpitopo__free(toffs);
    mpitopo__free(tsrc);
    return rc;
}
