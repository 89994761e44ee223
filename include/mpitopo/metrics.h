#ifndef MPITOPO_METRICS_H
#define MPITOPO_METRICS_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/metrics.h>
#endif

#include <mpitopo/export.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup mpitopo_metrics Metrics of a mapping
 * @ingroup mpitopo
 * @brief What a mapping costs: traffic per machine level, partners, bounds.
 *
 * The functions of this page make no MPI call.
 * @threadsafe On distinct objects, and for concurrent reads of one machine
 * or pattern.
 * @{
 */

/** @brief min, max and average of a per-process or per-unit quantity. */
typedef struct mpitopo_stat {
    double min; /**< smallest value */
    double max; /**< largest value */
    double avg; /**< average */
} mpitopo_stat_t;

/**
 * @brief Traffic crossing one level of the machine.
 *
 * A directed edge p -> q crosses level l when the leaves of p and q lie in
 * different units of level l; it is charged to the unit holding its source
 * (what leaves that unit).
 */
typedef struct mpitopo_level_metrics {
    char name[MPITOPO_MAX_NAME];   /**< name of the level */
    int nunits;                    /**< number of units of the level */
    int64_t edges_crossing;        /**< number of edges crossing the level */
    double weight_crossing;        /**< their total weight */
    int64_t max_edges_per_unit;    /**< most crossing edges leaving one unit */
    double avg_edges_per_unit;     /**< edges_crossing / nunits */
    double max_weight_per_unit;    /**< most crossing weight leaving one unit */
    double avg_weight_per_unit;    /**< weight_crossing / nunits */
} mpitopo_level_metrics_t;

/** @brief Best box tiling of a Cartesian pattern (see mpitopo_cart_box_bound()):
 * what tiling the grid by one box shape gives.
 *
 * Not a bound: other tilings can do better (mpitopo_node_bound_t is the
 * bound). */
typedef struct mpitopo_box_bound {
    int found;                   /**< 0: no box tiling exists, other fields unset */
    int ndims;                   /**< number of dimensions of the grid */
    int box[MPITOPO_MAX_DIMS];   /**< side lengths of the best box */
    int64_t offnode_edges;       /**< edges crossing the node level, whole grid */
    double offnode_weight;       /**< their weight */
    double offnode_partners_avg; /**< distinct off-node partners per process, averaged */
} mpitopo_box_bound_t;

/** @brief True lower bound on the traffic crossing the node level of a
 * Cartesian pattern, over every mapping (see mpitopo_cart_node_bound()). */
typedef struct mpitopo_node_bound {
    int found;              /**< 0: not Cartesian or no node level, other fields 0 */
    int64_t offnode_edges;  /**< no mapping has fewer directed off-node edges */
    double offnode_weight;  /**< nor less off-node weight */
} mpitopo_node_bound_t;

/** @brief The metrics of a mapping (mpitopo_metrics_compute()). */
typedef struct mpitopo_metrics {
    int nprocs;  /**< number of processes */
    int nlevels; /**< number of levels of the machine, entries of levels */
    mpitopo_level_metrics_t levels[MPITOPO_MAX_LEVELS]; /**< traffic crossing each level */
    /** Distinct communication partners of each process (union of the
     * processes it sends to and receives from, itself excluded) on the same
     * compute node: Table 3 of Gropp, EuroMPI'18. */
    mpitopo_stat_t onnode_partners;
    /** Distinct communication partners of each process on other compute
     * nodes (as onnode_partners). */
    mpitopo_stat_t offnode_partners;
    /** Sum over edges of weight * cost(meet level). */
    double cost;
    mpitopo_weight_t weight; /**< the weight the metrics were computed under */
    /** The best box tiling, for Cartesian patterns when every leaf holds a
     * process and all compute nodes have the same number of leaves;
     * found = 0 otherwise. Its historical name says bound; it is not one. */
    mpitopo_box_bound_t box_bound;
    /** The true lower bound of the node level, for Cartesian patterns on a
     * machine with a node level; found = 0 otherwise. */
    mpitopo_node_bound_t lower_bound;
} mpitopo_metrics_t;

/**
 * @brief Evaluate a mapping of a pattern on a machine.
 *
 * Time O(nprocs * nlevels + edges), memory O(nprocs + nunits).
 * @param[in] machine the machine
 * @param[in] pattern the pattern of nprocs processes
 * @param[in] leaf_of_proc nprocs leaves, or NULL for the block placement
 * @param[in] weight the weight the traffic and cost are measured in
 * @param[out] metrics the metrics
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers, an unknown weight, more processes
 *         than leaves, or leaf_of_proc placing two processes on one leaf
 *         (the message names the first offending process)
 * @retval MPITOPO_ERR_RANGE a leaf out of range
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_metrics_compute(const mpitopo_machine_t *machine,
                                        const mpitopo_pattern_t *pattern, const int *leaf_of_proc,
                                        mpitopo_weight_t weight, mpitopo_metrics_t *metrics);

/**
 * @brief Only the weighted cost of a mapping (what the never-worse guard
 * compares): the sum over edges of weight * cost(meet level).
 * @param[in] machine the machine
 * @param[in] pattern the pattern of nprocs processes
 * @param[in] leaf_of_proc nprocs leaves, or NULL for the block placement
 * @param[in] weight the weight
 * @param[out] cost the weighted cost
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG as mpitopo_metrics_compute()
 * @retval MPITOPO_ERR_RANGE a leaf out of range
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_metrics_cost(const mpitopo_machine_t *machine,
                                     const mpitopo_pattern_t *pattern, const int *leaf_of_proc,
                                     mpitopo_weight_t weight, double *cost);

/**
 * @brief Best box tiling of a Cartesian pattern when every compute node
 * holds procs_per_node processes.
 *
 * The minimum, over all box shapes b with prod(b) = procs_per_node and b_i
 * dividing dims_i, of the traffic crossing node boundaries when the grid is
 * tiled by such boxes. This is what a mapping of boxes reaches; it is no
 * bound: other tilings (strips that wrap from one row to the next, a 3x4
 * open grid in nodes of 4 split into 1.5-wide strips) can do better, and
 * the cart mapper tries them. The function keeps its historical name.
 * found = 0 when no such tiling exists (a prime factor of procs_per_node
 * divides no remaining dimension, or prod(dims) is not a multiple of
 * procs_per_node), and also when there are more than a million box shapes
 * to try (grids of very many tiny dimensions).
 * Time O(shapes * offsets * ndims + nprocs + edges).
 * @param[in] cart_pattern a pattern made by mpitopo_pattern_cart()
 * @param[in] procs_per_node processes per compute node, >= 1
 * @param[in] weight the weight of the traffic
 * @param[out] bound the best tiling
 * @retval MPITOPO_SUCCESS on success (also when found = 0)
 * @retval MPITOPO_ERR_ARG NULL pointers, a pattern not made by
 *         mpitopo_pattern_cart(), procs_per_node < 1, an unknown weight
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_cart_box_bound(const mpitopo_pattern_t *cart_pattern, int procs_per_node,
                                       mpitopo_weight_t weight, mpitopo_box_bound_t *bound);

/**
 * @brief True lower bound on the traffic crossing the node level when a
 * Cartesian pattern is mapped on a machine by any mapping.
 *
 * The edge-isoperimetric bound of the grid. A node holding k points meets,
 * per dimension i, a_i lines along i with prod a_i >= k^(d-1)
 * (Loomis-Whitney), and each line it shares with another node costs it at
 * least the weight of the stencil's unit steps along i
 * (src/metrics/nodebound.c proves it). Only unit steps count, so on Moore
 * or long-range stencils the bound is valid but weaker. Every leaf used:
 * each node its own size; fewer processes than leaves: the least cost per
 * process over node sizes. found = 0 on a machine without a node level.
 * Time O(nnodes) plus a small enumeration per node size.
 * @param[in] machine the machine
 * @param[in] cart_pattern a pattern made by mpitopo_pattern_cart()
 * @param[in] weight the weight of the traffic
 * @param[out] bound the bound
 * @retval MPITOPO_SUCCESS on success (also when found = 0)
 * @retval MPITOPO_ERR_ARG NULL pointers, a pattern not made by
 *         mpitopo_pattern_cart(), an unknown weight, more processes than
 *         leaves
 */
MPITOPO_API int mpitopo_cart_node_bound(const mpitopo_machine_t *machine,
                                        const mpitopo_pattern_t *cart_pattern,
                                        mpitopo_weight_t weight, mpitopo_node_bound_t *bound);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_METRICS_H */
