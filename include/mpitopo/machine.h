#ifndef MPITOPO_MACHINE_H
#define MPITOPO_MACHINE_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/machine.h>
#endif

#include <mpitopo/export.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup mpitopo_machine Machine model
 * @ingroup mpitopo
 * @brief The machine model: a tree of levels from the network down to the cores.
 *
 * A tree of levels from the top of the network down to the cores. Level 0
 * is the topmost level below the whole machine (e.g. "switch"), level
 * nlevels-1 is the leaf level (e.g. "core"): its units are the leaves, the
 * slots a process can sit on. Leaves are numbered in tree order, so the
 * leaves of any unit are a contiguous range.
 *
 * Every level has a name, an arity and a cost. cost[l] is the cost of a
 * message between two leaves that lie in the same unit of level l-1 (the
 * whole machine for l = 0) but in different units of level l: their lowest
 * common ancestor sits directly above level l, and l is the level at which
 * their paths part (the "meet level" below). For "switch:4 node:16 socket:2
 * core:8" with costs 100:40:10:1, two cores of one socket cost 1, two sockets
 * of one node 10, two nodes of one switch 40, two switches 100.
 *
 * The level named "node" is the compute node (what MPI_COMM_TYPE_SHARED
 * splits by). hwloc's "NUMANode" is not a compute node; hwloc's Package is
 * called "socket" here.
 *
 * Memory and time of every constructor and query are linear in the number of
 * leaves (a few int arrays per level).
 *
 * The functions of this page make no MPI call.
 * @threadsafe On distinct machines, and for concurrent queries of one machine.
 * @{
 */

/** @brief A machine (opaque): made by the mpitopo_machine_from_* constructors,
 * released by mpitopo_machine_destroy(). */
typedef struct mpitopo_machine mpitopo_machine_t;

/** @brief Most levels of a machine. */
#define MPITOPO_MAX_LEVELS 16
/** @brief Size of a level name, terminating NUL included (names have at most 31 characters). */
#define MPITOPO_MAX_NAME 32

/**
 * @brief Build a regular machine from a synthetic description.
 *
 * @verbatim
   desc  := level ( sep level )*
   level := name ":" arity [ "@" cost ]
   sep   := one or more blanks (space, tab, newline) or commas
   name  := letter ( letter | digit | "_" | "-" )*   at most 31 characters, unique
   arity := integer >= 1
   cost  := non-negative decimal number
   @endverbatim
 * e.g. "switch:4 node:16 socket:2 core:8" or
 * "switch:4@100 node:16@40 socket:2@10 core:8@1". Either every level has a
 * cost or none has; without costs, level l costs nlevels - l (1 for the leaf
 * level, one more per level up). At most #MPITOPO_MAX_LEVELS levels and
 * 2^31-1 leaves.
 *
 * @param[in] desc the description
 * @param[out] machine the new machine, owned by the caller; set to NULL on
 *             any error (this holds for every constructor below)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_PARSE a malformed description (the message names the
 *         offending text and its 1-based column)
 * @retval MPITOPO_ERR_RANGE more than #MPITOPO_MAX_LEVELS levels, an arity or
 *         a number of leaves above 2^31-1
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_machine_from_string(const char *desc, mpitopo_machine_t **machine);

/**
 * @brief Build an irregular machine from explicit leaf paths.
 *
 * Entry i has labels paths[i * nlevels + l] (>= 0) for l = 0..nlevels-1. Two
 * entries share a unit of level l when their labels agree on levels 0..l;
 * labels need only be distinct among siblings, and need not be contiguous.
 * Entries may come in any order (round-robin or scattered launches): leaves
 * are numbered in lexicographic order of the paths, and leaf_of_entry[i]
 * receives the leaf given to entry i. Two entries with the same full path
 * are an error.
 *
 * Use it for last nodes partly filled, nodes with different numbers of
 * processes, and the machine of an MPI job (one entry per process).
 * Time O(nentries * nlevels); entries out of path order add a radix sort
 * (one linear pass per byte of label in use on each level).
 *
 * @param[in] nlevels number of levels, 1..#MPITOPO_MAX_LEVELS
 * @param[in] names nlevels level names
 * @param[in] costs NULL (default costs, as for mpitopo_machine_from_string())
 *            or nlevels costs
 * @param[in] nentries number of entries (leaves), >= 1
 * @param[in] paths nentries * nlevels labels, entry after entry
 * @param[out] machine the new machine, owned by the caller; NULL on error
 * @param[out] leaf_of_entry optional (NULL), nentries ints, caller-allocated:
 *             the leaf of every entry; written only on success
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG nlevels < 1, NULL, invalid or repeated names,
 *         negative or non-finite costs, nentries < 1, negative labels, two
 *         entries with the same path (the message names both)
 * @retval MPITOPO_ERR_RANGE nlevels > #MPITOPO_MAX_LEVELS
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_machine_from_paths(int nlevels, const char *const *names,
                                           const double *costs, int nentries, const int *paths,
                                           mpitopo_machine_t **machine, int *leaf_of_entry);

/**
 * @brief Build a machine from a description of the levels above the nodes
 * and from hwloc inside them.
 *
 * The levels above (and including) the compute node come from the
 * description `above` (its last level must be named "node", e.g.
 * "switch:4 node:16" or "node:8"), the levels inside a node from hwloc:
 * packages become level "socket", cores level "core" (the leaves); levels
 * with a single child everywhere are kept. A topology without Core objects
 * uses its PUs as cores; cores outside any package form one socket. Every
 * node of `above` gets the same interior, which need not be regular
 * (packages with different numbers of cores).
 *
 * Inner levels get default costs (over all levels) unless `above` gives
 * costs, in which case inner levels cost 1 (core) and 2 (socket) and the
 * levels of `above` keep theirs.
 *
 * @param[in] above description of the levels down to "node", as for
 *            mpitopo_machine_from_string()
 * @param[in] source the node topology: NULL or "" for this machine,
 *            "synthetic:<hwloc synthetic description>" (e.g.
 *            "synthetic:package:2 core:8 pu:2"; a description that stops
 *            above the PUs, like "package:2 core:8", gets one PU per core),
 *            or the path of an hwloc XML file
 * @param[out] machine the new machine, owned by the caller; NULL on error
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL pointers
 * @retval MPITOPO_ERR_PARSE as mpitopo_machine_from_string() (reported for
 *         `above`); also when the last level of `above` is not "node" or
 *         another of its levels is named "socket" or "core"
 * @retval MPITOPO_ERR_RANGE the levels or leaves exceed the limits; a
 *         synthetic source that asks for more than 4096 PUs (the product of
 *         its arities) or attached NUMA nodes, or gives an explicit index
 *         of 65536 or more (checked before hwloc sees it)
 * @retval MPITOPO_ERR_HWLOC hwloc cannot load `source`
 * @retval MPITOPO_ERR_NOMEM out of memory
 */
MPITOPO_API int mpitopo_machine_from_hwloc(const char *above, const char *source,
                                           mpitopo_machine_t **machine);

/**
 * @brief Release a machine.
 * @param[in,out] machine the handle; accepts NULL and `*machine` == NULL;
 *                `*machine` is set to NULL
 */
MPITOPO_API void mpitopo_machine_destroy(mpitopo_machine_t **machine);

/**
 * @brief Replace the level costs.
 * @param[in,out] machine the machine
 * @param[in] ncosts number of costs, == nlevels
 * @param[in] costs ncosts finite, non-negative values (copied)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG otherwise (NULL pointers, a wrong count, a
 *         negative or non-finite cost), leaving the costs unchanged
 */
MPITOPO_API int mpitopo_machine_set_costs(mpitopo_machine_t *machine, int ncosts,
                                          const double *costs);

/*
 * Queries. Each returns MPITOPO_SUCCESS, MPITOPO_ERR_ARG (NULL machine or
 * NULL out pointer; only mpitopo_machine_level accepts NULL out pointers) or
 * MPITOPO_ERR_RANGE (a level, unit or leaf index out of range).
 */

/**
 * @brief Number of leaves.
 * @param[in] machine the machine
 * @param[out] nleaves the number of leaves
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL machine or NULL out pointer
 */
MPITOPO_API int mpitopo_machine_nleaves(const mpitopo_machine_t *machine, int *nleaves);
/**
 * @brief Number of levels.
 * @param[in] machine the machine
 * @param[out] nlevels the number of levels
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL machine or NULL out pointer
 */
MPITOPO_API int mpitopo_machine_nlevels(const mpitopo_machine_t *machine, int *nlevels);
/**
 * @brief The level named "node".
 * @param[in] machine the machine
 * @param[out] level the index of the level named "node", or -1 when the
 *             machine has none (then every leaf is on one node)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL machine or NULL out pointer
 */
MPITOPO_API int mpitopo_machine_node_level(const mpitopo_machine_t *machine, int *level);
/**
 * @brief Name, cost, number of units, and the smallest and largest arity of
 * a level.
 *
 * The arity is the number of children per unit of the level above; for
 * level 0 the number of its units. Time O(units of the level above). Every
 * out-pointer may be NULL (the only query that accepts NULL out pointers).
 * @param[in] machine the machine
 * @param[in] level the level, 0..nlevels-1
 * @param[out] name its name (owned by the machine), or NULL
 * @param[out] cost its cost, or NULL
 * @param[out] nunits its number of units, or NULL
 * @param[out] min_arity its smallest arity, or NULL
 * @param[out] max_arity its largest arity, or NULL
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL machine
 * @retval MPITOPO_ERR_RANGE level out of range
 */
MPITOPO_API int mpitopo_machine_level(const mpitopo_machine_t *machine, int level,
                                      const char **name, double *cost, int *nunits, int *min_arity,
                                      int *max_arity);
/**
 * @brief The unit of a level holding a leaf.
 * @param[in] machine the machine
 * @param[in] level the level, 0..nlevels-1
 * @param[in] leaf the leaf, 0..nleaves-1
 * @param[out] unit index (0..nunits-1, in leaf order) of the unit of `level`
 *             holding `leaf`
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL machine or NULL out pointer
 * @retval MPITOPO_ERR_RANGE level or leaf out of range
 */
MPITOPO_API int mpitopo_machine_unit_of(const mpitopo_machine_t *machine, int level, int leaf,
                                        int *unit);
/**
 * @brief Leaves of a unit: first leaf and count (they are contiguous).
 * @param[in] machine the machine
 * @param[in] level the level, 0..nlevels-1
 * @param[in] unit the unit of `level`, 0..nunits-1
 * @param[out] first its first leaf
 * @param[out] count its number of leaves
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL machine or NULL out pointer
 * @retval MPITOPO_ERR_RANGE level or unit out of range
 */
MPITOPO_API int mpitopo_machine_unit_leaves(const mpitopo_machine_t *machine, int level, int unit,
                                            int *first, int *count);
/**
 * @brief The level at which the paths of two leaves part (the meet level).
 * @param[in] machine the machine
 * @param[in] a a leaf
 * @param[in] b a leaf
 * @param[out] level the meet level of a and b; nlevels when a == b
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL machine or NULL out pointer
 * @retval MPITOPO_ERR_RANGE a leaf out of range
 */
MPITOPO_API int mpitopo_machine_meet_level(const mpitopo_machine_t *machine, int a, int b,
                                           int *level);
/**
 * @brief Cost between two leaves: cost[meet level], 0 when a == b.
 * @param[in] machine the machine
 * @param[in] a a leaf
 * @param[in] b a leaf
 * @param[out] cost the cost
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL machine or NULL out pointer
 * @retval MPITOPO_ERR_RANGE a leaf out of range
 */
MPITOPO_API int mpitopo_machine_cost(const mpitopo_machine_t *machine, int a, int b, double *cost);
/**
 * @brief One-line description of a machine.
 *
 * The synthetic string when the machine is regular
 * (mpitopo_machine_from_string() of it rebuilds the same machine), otherwise
 * level names with arity ranges, e.g. "node:4 core:[3..4] (15 leaves)".
 * Every level carries "@cost" when the costs differ from the defaults.
 * @param[in] machine the machine
 * @param[out] buf the description, truncated to size-1 characters; must not
 *             be NULL
 * @param[in] size size of buf (0: nothing written)
 * @retval MPITOPO_SUCCESS on success
 * @retval MPITOPO_ERR_ARG NULL machine or buf
 * @retval MPITOPO_ERR_RANGE the description was truncated
 */
MPITOPO_API int mpitopo_machine_describe(const mpitopo_machine_t *machine, char *buf, size_t size);

/** @} */

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_MACHINE_H */
