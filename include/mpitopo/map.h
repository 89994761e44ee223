#ifndef MPITOPO_MAP_H
#define MPITOPO_MAP_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/map.h>
#endif

#include <mpitopo/export.h>
#include <mpitopo/network.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup mpitopo_mapping Mappings and grid dimensions
 * @ingroup mpitopo
 * @brief Mappers, launch placements and the dimensions of Cartesian grids.
 *
 * A mapping places the nprocs processes of a pattern on distinct leaves of
 * a machine: leaf_of_proc[p] is the leaf of process p. When
 * nprocs == nleaves it is a permutation. Every mapper has the same
 * interface and is checked by the same metric code.
 *
 * The functions of this page make no MPI call.
 * @threadsafe On distinct objects, and for concurrent reads of one machine
 * or pattern.
 * @{
 */

/** @brief Options shared by every mapper; start from #MPITOPO_MAP_OPTIONS_INIT. */
typedef struct mpitopo_map_options {
    mpitopo_weight_t weight; /**< which edge weight to optimise */
    uint64_t seed;           /**< for randomised mappers */
    const int *launch;       /**< where processes sit now (nprocs leaves), NULL = block */
    int never_worse;         /**< keep `launch` when the result's weighted cost is not lower */
} mpitopo_map_options_t;
/** @brief Default options: bytes, seed 1, block launch, no never-worse guard.
 * @hideinitializer */
#define MPITOPO_MAP_OPTIONS_INIT {MPITOPO_WEIGHT_BYTES, 1, NULL, 0}

/** @brief A registered mapper, as listed by mpitopo_mapper_at(). Mappers run
 * only through mpitopo_map(), which checks their arguments and their result. */
typedef struct mpitopo_mapper {
    const char *name;    /**< "block", "rr", ... */
    const char *summary; /**< one line for --help */
    int needs_cart;      /**< 1: only for patterns from mpitopo_pattern_cart() */
} mpitopo_mapper_t;

/**
 * @brief Number of registered mappers.
 * @return the number of mappers, listed by mpitopo_mapper_at() in
 *         registration order.
 */
MPITOPO_API int mpitopo_mapper_count(void);
/**
 * @brief A registered mapper, in registration order.
 * @param[in] index 0..mpitopo_mapper_count()-1
 * @return the mapper (static, never freed), or NULL when index is out of range.
 */
MPITOPO_API const mpitopo_mapper_t *mpitopo_mapper_at(int index);
/**
 * @brief Look a mapper up by name.
 * @param[in] name the mapper's name
 * @param[out] mapper the mapper (static, never freed)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_NOT_FOUND no such mapper (the message lists the known names)
 */
MPITOPO_API int mpitopo_mapper_find(const char *name, const mpitopo_mapper_t **mapper);

/**
 * @brief Run a mapper, then check its result.
 *
 * Runs the mapper given by `spec` ("name" or "name:args"), then checks that
 * the result places every process on a distinct valid leaf. With
 * options->never_worse, the launch placement is kept when the result does
 * not lower the weighted cost. Requires nprocs <= nleaves.
 * @param[in] spec the mapper: "name" or "name:args"
 * @param[in] machine the machine
 * @param[in] pattern the pattern of nprocs processes
 * @param[in] options the options, or NULL for #MPITOPO_MAP_OPTIONS_INIT
 * @param[out] leaf_of_proc nprocs ints, caller-allocated: the mapping;
 *             unspecified on error
 * @param[out] kept_launch 1 when the launch placement was kept by the
 *             never-worse guard, else 0; may be NULL
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers, more processes than leaves, an
 *         invalid launch or weight in options, an argument given to a
 *         mapper that takes none
 * @retval MPITOPO_ERR_NOT_FOUND unknown mapper
 * @retval MPITOPO_ERR_RANGE a leaf out of range (in options->launch)
 * @retval MPITOPO_ERR_INTERNAL the mapper returned an invalid mapping
 * @retval MPITOPO_ERR_NOMEM out of memory
 * @return also whatever the mapper returns (e.g. #MPITOPO_ERR_PARSE for bad
 *         mapper arguments).
 */
MPITOPO_API int mpitopo_map(const char *spec, const mpitopo_machine_t *machine,
                            const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                            int *leaf_of_proc, int *kept_launch);

/**
 * @brief Run a mapper on a machine under a network, then check its result.
 *
 * As mpitopo_map(), with the network above the machine's nodes: node unit u
 * of the machine sits on end node end_node[u] (end_node NULL: on end node
 * u). Network-aware mappers (those whose summary says so in
 * mpitopo_mapper_at()) place processes by the network's routes and
 * congestion; the others ignore the network. mpitopo_map() is this
 * function without a network, where network-aware mappers fail with
 * #MPITOPO_ERR_ARG.
 * @param[in] spec the mapper: "name" or "name:args"
 * @param[in] machine the machine
 * @param[in] network the network
 * @param[in] end_node the end node of every node unit of machine (distinct),
 *            or NULL for unit u on end node u
 * @param[in] pattern the pattern of nprocs processes
 * @param[in] options the options, or NULL for #MPITOPO_MAP_OPTIONS_INIT
 * @param[out] leaf_of_proc nprocs ints, caller-allocated: the mapping;
 *             unspecified on error
 * @param[out] kept_launch 1 when the launch placement was kept by the
 *             never-worse guard, else 0; may be NULL
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL network, and the errors of mpitopo_map()
 * @retval MPITOPO_ERR_RANGE more nodes than end nodes, an end node out of
 *         range
 * @retval MPITOPO_ERR_* those of mpitopo_map()
 * @local
 */
MPITOPO_API int mpitopo_map_network(const char *spec, const mpitopo_machine_t *machine,
                                    const mpitopo_network_t *network, const int *end_node,
                                    const mpitopo_pattern_t *pattern,
                                    const mpitopo_map_options_t *options, int *leaf_of_proc,
                                    int *kept_launch);

/**
 * @brief Check that a mapping places processes on distinct leaves of a machine.
 * @param[in] machine the machine
 * @param[in] nprocs number of processes, in [0, nleaves]
 * @param[in] leaf_of_proc nprocs leaves
 * @retval MPITOPO_SUCCESS the mapping is valid
 * @retval MPITOPO_ERR_ARG NULL pointers, nprocs outside [0, nleaves], two
 *         processes on one leaf (the message names the first offending
 *         process)
 * @retval MPITOPO_ERR_RANGE a leaf out of range (the message names the
 *         first offending process)
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_mapping_check(const mpitopo_machine_t *machine, int nprocs,
                                      const int *leaf_of_proc);

/**
 * @brief Launch placements, as a resource manager would place ranks.
 *
 * @verbatim
   "block"        rank p on leaf p (fills node after node);
   "rr"           round-robin over compute nodes: round k gives the k-th leaf
                  of every node that still has one, in node order, so with
                  equal nodes rank p lands on node p mod nnodes; full nodes
                  drop out of later rounds;
   "random:SEED"  a uniformly random set of distinct leaves.
   @endverbatim
 * These are also registered as the mappers "block", "rr" and "random";
 * the mapper "identity" keeps options->launch.
 * @param[in] machine the machine
 * @param[in] nprocs number of processes, in [0, nleaves]
 * @param[in] spec "block", "rr" or "random:SEED"
 * @param[out] leaf_of_proc nprocs ints, caller-allocated: the placement;
 *             unspecified on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers, nprocs outside [0, nleaves]
 * @retval MPITOPO_ERR_PARSE a placement spec that is not block, rr or random:SEED
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_placement(const mpitopo_machine_t *machine, int nprocs, const char *spec,
                                  int *leaf_of_proc);

/**
 * @brief Dimensions of a Cartesian grid, as MPI_Dims_create should compute them.
 *
 * The entries of dims that are 0 on input are filled so that prod(dims) ==
 * nprocs and the filled entries are as balanced as possible (smallest
 * max - min, then smallest max), in non-increasing order; non-zero entries
 * are kept. Exact for every nprocs up to 2^31 - 1.
 * @param[in] nprocs number of processes, >= 1
 * @param[in] ndims number of dimensions, 0..#MPITOPO_MAX_DIMS
 * @param[in,out] dims ndims entries: 0 to be filled, or fixed (>= 1);
 *                unchanged on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG nprocs < 1, ndims < 0 or > #MPITOPO_MAX_DIMS, dims
 *         NULL with ndims > 0, or a negative entry (the message names it)
 * @retval MPITOPO_ERR_RANGE the product of the non-zero entries does not
 *         divide nprocs (or every entry is fixed and the product differs)
 */
MPITOPO_API int mpitopo_dims_create(int nprocs, int ndims, int *dims);

/**
 * @brief Node-aware dimensions: like mpitopo_dims_create(), but the grid cut
 * into nodes of procs_per_node processes cuts the fewest edges.
 *
 * For nprocs processes in nodes of procs_per_node (which must divide
 * nprocs), choose the factorisation whose best node box (a box of
 * procs_per_node processes tiling the grid) cuts the fewest edges of a star
 * stencil of radius 1 with the given periods. Only factorisations at most
 * twice as unbalanced (max/min of the filled entries) as the most balanced
 * one are considered, so the grid stays usable for the application; ties go
 * to the more balanced (then lexicographically smaller). 576 processes, 36
 * per node, 3-D: 12x8x6 where MPI gives 9x8x8, with node box 3x2x6 when all
 * dimensions are periodic (a box spanning a periodic dimension cuts nothing
 * there) and 3x4x3 when they are open. When procs_per_node does not divide
 * nprocs the result is mpitopo_dims_create()'s and node_box is all zeros
 * (when it divides, a box always exists).
 * @param[in] nprocs number of processes, >= 1
 * @param[in] procs_per_node processes per node, >= 1
 * @param[in] ndims number of dimensions, 0..#MPITOPO_MAX_DIMS
 * @param[in,out] dims as for mpitopo_dims_create()
 * @param[in] periods ndims flags, or NULL for all periodic
 * @param[out] node_box ndims entries, may be NULL: the node box
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG those of mpitopo_dims_create(); procs_per_node < 1
 * @retval MPITOPO_ERR_RANGE as mpitopo_dims_create()
 * @retval MPITOPO_ERR_NOMEM out of memory (one work area of about 60 KB)
 */
MPITOPO_API int mpitopo_dims_create_nodes(int nprocs, int procs_per_node, int ndims, int *dims,
                                          const int *periods, int *node_box);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_MAP_H */
