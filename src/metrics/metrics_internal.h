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

/*
 * A true lower bound on the weight that leaves (and on the weight that
 * enters) any set of `size` processes of a Cartesian pattern, wherever the
 * set lies in the grid: the edge-isoperimetric bound of nodebound.c for one
 * set (unit steps only), or for groups that talk all-to-all (sub-
 * communicator all-to-all) the bound of their group sizes if higher. With max_size > 0, `size` is ignored and *bound is
 * instead the least such bound per process over set sizes 1..max_size
 * (min over j of G(j) / j), for occupancies a mapping chooses. Returns 1
 * when the pattern is Cartesian, else 0 with *bound = 0 (no bound known).
 */
int mpitopo__cart_set_bound(const mpitopo_pattern_t *pattern, mpitopo_weight_t weight, int size,
                            int max_size, double *bound);

#endif
