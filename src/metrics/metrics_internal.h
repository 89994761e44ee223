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

/*
 * Box shapes for Cartesian patterns: every box b with lower_i | b_i,
 * b_i | upper_i, b_i | dims_i and prod(b) = size (lower, upper NULL: 1 and
 * dims), ranked by the weight of the pattern's edges that cross box
 * boundaries when identical boxes tile the grid. The `keep` best are
 * returned, sorted by cut (count may be 0: no such box); overflow is set
 * when the enumeration stopped at its cap of 10^6 shapes, so better boxes
 * may exist. The caller frees with mpitopo__box_list_free.
 */
struct mpitopo__cart;
typedef struct mpitopo__box_list {
    int count;
    int overflow;
    int *boxes; /* count x ndims */
    double *cut;
} mpitopo__box_list_t;

int mpitopo__cart_boxes(const struct mpitopo__cart *cart, const int *lower, const int *upper, long long size,
                        mpitopo_weight_t weight, int keep, mpitopo__box_list_t *list);
void mpitopo__box_list_free(mpitopo__box_list_t *list);

#endif
