#ifndef MPITOPO_METRICS_INTERNAL_H
#define MPITOPO_METRICS_INTERNAL_H

#include "core/internal.h"

/*
 * Partner and crossing counts of a pattern when process p sits on node
 * node_of_proc[p]: distinct partners (union of out- and in-neighbours, self
 * excluded) on the same node and on other nodes, and the number and weight
 * of directed edges between different nodes. O(nprocs + edges) time and
 * memory. Shared by the metrics and the best-box bound.
 */
typedef struct mpitopo__node_traffic {
    mpitopo_stat_t onnode_partners;
    mpitopo_stat_t offnode_partners;
    int64_t offnode_edges;
    double offnode_weight;
} mpitopo__node_traffic_t;

int mpitopo__node_traffic(const mpitopo_pattern_t *pattern, const int *node_of_proc,
                          mpitopo_weight_t weight, mpitopo__node_traffic_t *out);

#endif
