#ifndef MPITOPO_METRICS_H
#define MPITOPO_METRICS_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/metrics.h>
#endif

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* min, max and average of a per-process or per-unit quantity. */
typedef struct mpitopo_stat {
    double min, max, avg;
} mpitopo_stat_t;

/*
 * Traffic crossing one level of the machine. A directed edge p -> q crosses
 * level l when the leaves of p and q lie in different units of level l; it
 * is charged to the unit holding its source (what leaves that unit).
 */
typedef struct mpitopo_level_metrics {
    char name[MPITOPO_MAX_NAME];
    int nunits;
    int64_t edges_crossing;        /* number of edges crossing the level */
    double weight_crossing;        /* their total weight */
    int64_t max_edges_per_unit;    /* most crossing edges leaving one unit */
    double avg_edges_per_unit;     /* edges_crossing / nunits */
    double max_weight_per_unit;
    double avg_weight_per_unit;
} mpitopo_level_metrics_t;

/* Best-box bound for Cartesian patterns (see mpitopo_cart_box_bound). */
typedef struct mpitopo_box_bound {
    int found;                   /* 0: no box tiling exists, other fields unset */
    int ndims;
    int box[MPITOPO_MAX_DIMS];   /* side lengths of the best box */
    int64_t offnode_edges;       /* edges crossing the node level, whole grid */
    double offnode_weight;       /* their weight */
    double offnode_partners_avg; /* distinct off-node partners per process, averaged */
} mpitopo_box_bound_t;

typedef struct mpitopo_metrics {
    int nprocs;
    int nlevels;
    mpitopo_level_metrics_t levels[MPITOPO_MAX_LEVELS];
    /* Distinct communication partners of each process (union of the
     * processes it sends to and receives from, itself excluded), split by
     * whether the partner is on the same compute node: Table 3 of Gropp,
     * EuroMPI'18. */
    mpitopo_stat_t onnode_partners;
    mpitopo_stat_t offnode_partners;
    /* Sum over edges of weight * cost(meet level). */
    double cost;
    mpitopo_weight_t weight;
    /* For Cartesian patterns when every leaf holds a process and all
     * compute nodes have the same number of leaves; found = 0 otherwise. */
    mpitopo_box_bound_t box_bound;
} mpitopo_metrics_t;

/*
 * Evaluate a mapping (leaf_of_proc, nprocs entries; NULL = block placement)
 * of `pattern` on `machine` under `weight`. Time O(nprocs * nlevels + edges),
 * memory O(nprocs + nunits).
 */
int mpitopo_metrics_compute(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                            const int *leaf_of_proc, mpitopo_weight_t weight,
                            mpitopo_metrics_t *metrics);

/* Errors of both: MPITOPO_ERR_ARG (NULL pointers, an unknown weight, more
 * processes than leaves, or leaf_of_proc placing two processes on one leaf;
 * the message names the first offending process), MPITOPO_ERR_RANGE (a leaf
 * out of range), MPITOPO_ERR_NOMEM. */

/* Only the weighted cost (what the never-worse guard compares). */
int mpitopo_metrics_cost(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                         const int *leaf_of_proc, mpitopo_weight_t weight, double *cost);

/*
 * Best-box bound on off-node traffic of a Cartesian pattern when every
 * compute node holds procs_per_node processes: the minimum, over all box
 * shapes b with prod(b) = procs_per_node and b_i dividing dims_i, of the
 * traffic crossing node boundaries when the grid is tiled by such boxes.
 * This is what a node-aware Cartesian mapping of boxes can reach, a lower
 * bound over box tilings only: other shapes (a 3x4 open grid in nodes of 4
 * split into 1.5-wide strips, say) can do better. found = 0 when no
 * such tiling exists (a prime factor of procs_per_node divides no remaining
 * dimension, or prod(dims) is not a multiple of procs_per_node), and also
 * when there are more than a million box shapes to try (grids of very many
 * tiny dimensions). Time O(shapes * offsets * ndims + nprocs + edges).
 * Errors: MPITOPO_ERR_ARG (NULL pointers, a pattern not made by
 * mpitopo_pattern_cart, procs_per_node < 1, an unknown weight),
 * MPITOPO_ERR_NOMEM.
 */
int mpitopo_cart_box_bound(const mpitopo_pattern_t *cart_pattern, int procs_per_node,
                           mpitopo_weight_t weight, mpitopo_box_bound_t *bound);

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_METRICS_H */
