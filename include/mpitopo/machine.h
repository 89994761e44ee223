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

/*
 * The machine model: a tree of levels from the top of the network down to
 * the cores. Level 0 is the topmost level below the whole machine (e.g.
 * "switch"), level nlevels-1 is the leaf level (e.g. "core"): its units are
 * the leaves, the slots a process can sit on. Leaves are numbered in tree
 * order, so the leaves of any unit are a contiguous range.
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
 */
typedef struct mpitopo_machine mpitopo_machine_t;

#define MPITOPO_MAX_LEVELS 16
#define MPITOPO_MAX_NAME 32

/*
 * Build a regular machine from a synthetic description:
 *
 *   desc  := level ( sep level )*
 *   level := name ":" arity [ "@" cost ]
 *   sep   := one or more blanks (space, tab, newline) or commas
 *   name  := letter ( letter | digit | "_" | "-" )*   at most 31 characters, unique
 *   arity := integer >= 1
 *   cost  := non-negative decimal number
 *
 * e.g. "switch:4 node:16 socket:2 core:8" or
 * "switch:4@100 node:16@40 socket:2@10 core:8@1". Either every level has a
 * cost or none has; without costs, level l costs nlevels - l (1 for the leaf
 * level, one more per level up). At most MPITOPO_MAX_LEVELS levels and
 * 2^31-1 leaves.
 * Errors: MPITOPO_ERR_ARG (NULL pointers), MPITOPO_ERR_PARSE (message names
 * the offending text and its 1-based column), MPITOPO_ERR_RANGE (more than
 * MPITOPO_MAX_LEVELS levels, an arity or a number of leaves above 2^31-1),
 * MPITOPO_ERR_NOMEM. On any error *machine is set to NULL (this holds for
 * every constructor below).
 */
MPITOPO_API int mpitopo_machine_from_string(const char *desc, mpitopo_machine_t **machine);

/*
 * Build an irregular machine from explicit leaf paths: entry i has labels
 * paths[i * nlevels + l] (>= 0) for l = 0..nlevels-1. Two entries share a
 * unit of level l when their labels agree on levels 0..l; labels need only be
 * distinct among siblings, and need not be contiguous. Entries may come in
 * any order (round-robin or scattered launches): leaves are numbered in
 * lexicographic order of the paths, and leaf_of_entry[i] (optional, nentries
 * ints, caller-allocated) receives the leaf given to entry i. Two entries
 * with the same full path are an error. names has nlevels level names;
 * costs is NULL (default costs as above) or nlevels costs.
 * Use it for last nodes partly filled, nodes with different numbers of
 * processes, and the machine of an MPI job (one entry per process).
 * Time O(nentries * nlevels); entries out of path order add a radix sort
 * (one linear pass per byte of label in use on each level).
 * Errors: MPITOPO_ERR_ARG (nlevels < 1, NULL, invalid or repeated names,
 * negative or non-finite costs, nentries < 1, negative labels, two entries
 * with the same path: the message names both), MPITOPO_ERR_RANGE (nlevels >
 * MPITOPO_MAX_LEVELS), MPITOPO_ERR_NOMEM. leaf_of_entry is written only on
 * success.
 */
MPITOPO_API int mpitopo_machine_from_paths(int nlevels, const char *const *names,
                                           const double *costs, int nentries, const int *paths,
                                           mpitopo_machine_t **machine, int *leaf_of_entry);

/*
 * Build a machine whose levels above (and including) the compute node come
 * from the description `above` (its last level must be named "node", e.g.
 * "switch:4 node:16" or "node:8"), and whose levels inside a node come from
 * hwloc: packages become level "socket", cores level "core" (the leaves);
 * levels with a single child everywhere are kept. `source` selects the node
 * topology: NULL or "" for this machine, "synthetic:<hwloc synthetic
 * description>" (e.g. "synthetic:package:2 core:8 pu:2"; a description that
 * stops above the PUs, like "package:2 core:8", gets one PU per core), or the
 * path of an hwloc XML file. A topology without Core objects uses its PUs as
 * cores; cores outside any package form one socket. Every node of `above`
 * gets the same interior, which need not be regular (packages with different
 * numbers of cores).
 * Inner levels get default costs (over all levels) unless `above` gives
 * costs, in which case inner levels cost 1 (core) and 2 (socket) and the
 * levels of `above` keep theirs.
 * Errors as above (reported for `above`), MPITOPO_ERR_PARSE when the last
 * level of `above` is not "node" or another of its levels is named "socket"
 * or "core", MPITOPO_ERR_RANGE when the levels or leaves exceed the limits,
 * and MPITOPO_ERR_HWLOC when hwloc cannot load `source`.
 */
MPITOPO_API int mpitopo_machine_from_hwloc(const char *above, const char *source,
                                           mpitopo_machine_t **machine);

/* Release a machine; accepts NULL and *machine == NULL; sets *machine to NULL. */
MPITOPO_API void mpitopo_machine_destroy(mpitopo_machine_t **machine);

/* Replace the level costs (ncosts == nlevels finite, non-negative values);
 * MPITOPO_ERR_ARG otherwise, leaving the costs unchanged. */
MPITOPO_API int mpitopo_machine_set_costs(mpitopo_machine_t *machine, int ncosts,
                                          const double *costs);

/* Queries. Each returns MPITOPO_SUCCESS, MPITOPO_ERR_ARG (NULL machine or
 * NULL out pointer; only level() accepts NULL out pointers) or
 * MPITOPO_ERR_RANGE (a level, unit or leaf index out of range). */
MPITOPO_API int mpitopo_machine_nleaves(const mpitopo_machine_t *machine, int *nleaves);
MPITOPO_API int mpitopo_machine_nlevels(const mpitopo_machine_t *machine, int *nlevels);
/* The level named "node", or -1 when the machine has none (then every leaf
 * is on one node). */
MPITOPO_API int mpitopo_machine_node_level(const mpitopo_machine_t *machine, int *level);
/* Name (owned by the machine), cost, number of units, and the smallest and
 * largest arity (children per unit of the level above; for level 0 the
 * number of its units) of a level. Time O(units of the level above). */
MPITOPO_API int mpitopo_machine_level(const mpitopo_machine_t *machine, int level,
                                      const char **name, double *cost, int *nunits, int *min_arity,
                                      int *max_arity);
/* Index (0..nunits-1, in leaf order) of the unit of `level` holding `leaf`. */
MPITOPO_API int mpitopo_machine_unit_of(const mpitopo_machine_t *machine, int level, int leaf,
                                        int *unit);
/* Leaves of unit `unit` of `level`: first leaf and count (contiguous). */
MPITOPO_API int mpitopo_machine_unit_leaves(const mpitopo_machine_t *machine, int level, int unit,
                                            int *first, int *count);
/* The level at which the paths of leaves a and b part (see above); nlevels
 * when a == b. */
MPITOPO_API int mpitopo_machine_meet_level(const mpitopo_machine_t *machine, int a, int b,
                                           int *level);
/* Cost between leaves a and b: cost[meet level], 0 when a == b. */
MPITOPO_API int mpitopo_machine_cost(const mpitopo_machine_t *machine, int a, int b, double *cost);
/* One-line description: the synthetic string when the machine is regular
 * (mpitopo_machine_from_string of it rebuilds the same machine), otherwise
 * level names with arity ranges, e.g. "node:4 core:[3..4] (15 leaves)".
 * Every level carries "@cost" when the costs differ from the defaults.
 * buf must not be NULL. Truncates to size-1 characters; returns
 * MPITOPO_ERR_RANGE if truncated (size 0: nothing written). */
MPITOPO_API int mpitopo_machine_describe(const mpitopo_machine_t *machine, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_MACHINE_H */
