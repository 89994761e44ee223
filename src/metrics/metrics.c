/* Metrics of a mapping: traffic crossing every machine level, on/off-node
 * partner counts, weighted cost. */
#include "machine/machine_internal.h"
#include "metrics/metrics_internal.h"
#include "pattern/pattern_internal.h"

#include <stdio.h>
#include <string.h>

static int check_args(const char *func, const mpitopo_machine_t *m, const mpitopo_pattern_t *pat,
                      const int *leaf_of_proc, mpitopo_weight_t weight, const void *out)
{
    if (!m || !pat || !out)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s is NULL", !m ? "machine" : !pat ? "pattern" : "the output");
    if ((int)weight < MPITOPO_WEIGHT_BYTES || weight > MPITOPO_WEIGHT_UNIT)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "weight = %d is not a mpitopo_weight_t", (int)weight);
    if (pat->nprocs > m->nleaves)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "the pattern has %d processes but the machine only %d leaves",
                               pat->nprocs, m->nleaves);
    if (leaf_of_proc) {
        int rc = mpitopo_mapping_check(m, pat->nprocs, leaf_of_proc);
        if (rc != MPITOPO_SUCCESS)
            return MPITOPO_FAIL_CONTEXT(rc, "%s", func);
    }
    return MPITOPO_SUCCESS;
}

static inline int leaf_of(const int *leaf_of_proc, int p)
{
    return leaf_of_proc ? leaf_of_proc[p] : p;
}

int mpitopo_metrics_cost(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat, const int *leaf_of_proc,
                         mpitopo_weight_t weight, double *cost)
{
    int rc = check_args(__func__, m, pat, leaf_of_proc, weight, cost);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    double sum = 0;
    for (int p = 0; p < pat->nprocs; p++) {
        int a = leaf_of(leaf_of_proc, p);
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++)
            sum += mpitopo_edge_weight(weight, pat->bytes[e], pat->msgs[e]) *
                   mpitopo__cost(m, a, leaf_of(leaf_of_proc, pat->dst[e]));
    }
    *cost = sum;
    return MPITOPO_SUCCESS;
}

/* Per-level crossing counts, charged to the source's unit, and the cost. */
static int level_traffic(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat, const int *leaf_of_proc,
                         mpitopo_weight_t weight, mpitopo_metrics_t *out)
{
    int64_t *edges[MPITOPO_MAX_LEVELS] = {0};
    double *wsum[MPITOPO_MAX_LEVELS] = {0};
    int rc = MPITOPO_SUCCESS;
    for (int l = 0; l < m->nlevels && rc == MPITOPO_SUCCESS; l++) {
        edges[l] = mpitopo__calloc((size_t)m->nunits[l], sizeof *edges[l]);
        wsum[l] = mpitopo__calloc((size_t)m->nunits[l], sizeof *wsum[l]);
        if (!edges[l] || !wsum[l])
            rc = MPITOPO_NOMEM("per-unit counters");
    }
    for (int p = 0; p < pat->nprocs && rc == MPITOPO_SUCCESS; p++) {
        int a = leaf_of(leaf_of_proc, p);
        for (int64_t e = pat->offs[p]; e < pat->offs[p + 1]; e++) {
            int b = leaf_of(leaf_of_proc, pat->dst[e]);
            double w = mpitopo_edge_weight(weight, pat->bytes[e], pat->msgs[e]);
            int meet = mpitopo__meet(m, a, b);
            if (meet < m->nlevels)
                out->cost += w * m->cost[meet];
            /* Units nest, so an edge crossing level `meet` crosses every level below. */
            for (int l = meet; l < m->nlevels; l++) {
                edges[l][m->unit[l][a]]++;
                wsum[l][m->unit[l][a]] += w;
            }
        }
    }
    for (int l = 0; l < m->nlevels && rc == MPITOPO_SUCCESS; l++) {
        mpitopo_level_metrics_t *lm = &out->levels[l];
        snprintf(lm->name, sizeof lm->name, "%s", m->name[l]);
        lm->nunits = m->nunits[l];
        for (int u = 0; u < m->nunits[l]; u++) {
            lm->edges_crossing += edges[l][u];
            lm->weight_crossing += wsum[l][u];
            if (edges[l][u] > lm->max_edges_per_unit)
                lm->max_edges_per_unit = edges[l][u];
            if (wsum[l][u] > lm->max_weight_per_unit)
                lm->max_weight_per_unit = wsum[l][u];
        }
        lm->avg_edges_per_unit = (double)lm->edges_crossing / lm->nunits;
        lm->avg_weight_per_unit = lm->weight_crossing / lm->nunits;
    }
    for (int l = 0; l < m->nlevels; l++) {
        mpitopo__free(edges[l]);
        mpitopo__free(wsum[l]);
    }
    return rc;
}

/* The best box tiling applies when every node is full and all nodes have one size. */
static int uniform_node_size(const mpitopo_machine_t *m, int nprocs)
{
    if (m->node_level < 0 || nprocs != m->nleaves)
        return 0;
    const int *first = m->first[m->node_level];
    int size = first[1] - first[0];
    for (int u = 1; u < m->nunits[m->node_level]; u++)
        if (first[u + 1] - first[u] != size)
            return 0;
    return size;
}

int mpitopo_metrics_compute(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat, const int *leaf_of_proc,
                            mpitopo_weight_t weight, mpitopo_metrics_t *out)
{
    int rc = check_args(__func__, m, pat, leaf_of_proc, weight, out);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    memset(out, 0, sizeof *out);
    out->nprocs = pat->nprocs;
    out->nlevels = m->nlevels;
    out->weight = weight;
    int *node_of_proc = mpitopo__malloc_array((size_t)pat->nprocs, sizeof *node_of_proc);
    if (!node_of_proc)
        return MPITOPO_NOMEM("the node of every process");
    for (int p = 0; p < pat->nprocs; p++)
        node_of_proc[p] = mpitopo__node_of(m, leaf_of(leaf_of_proc, p));
    mpitopo__node_traffic_t traffic;
    rc = mpitopo__node_traffic(pat, node_of_proc, weight, &traffic);
    mpitopo__free(node_of_proc);
    if (rc == MPITOPO_SUCCESS)
        rc = level_traffic(m, pat, leaf_of_proc, weight, out);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    out->onnode_partners = traffic.onnode_partners;
    out->offnode_partners = traffic.offnode_partners;
    int ppn = pat->cart ? uniform_node_size(m, pat->nprocs) : 0;
    if (ppn > 0)
        rc = mpitopo_cart_box_bound(pat, ppn, weight, &out->box_bound);
    if (rc == MPITOPO_SUCCESS && pat->cart)
        rc = mpitopo_cart_node_bound(m, pat, weight, &out->lower_bound);
    return rc;
}
