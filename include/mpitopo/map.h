#ifndef MPITOPO_MAP_H
#define MPITOPO_MAP_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/map.h>
#endif

#include <mpitopo/export.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Mappings. A mapping places the nprocs processes of a pattern on distinct
 * leaves of a machine: leaf_of_proc[p] is the leaf of process p. When
 * nprocs == nleaves it is a permutation. Every mapper has the same
 * interface and is checked by the same metric code.
 */

/* Options shared by every mapper; start from MPITOPO_MAP_OPTIONS_INIT. */
typedef struct mpitopo_map_options {
    mpitopo_weight_t weight; /* which edge weight to optimise */
    uint64_t seed;           /* for randomised mappers */
    const int *launch;       /* where processes sit now (nprocs leaves), NULL = block */
    int never_worse;         /* keep `launch` when the result's weighted cost is not lower */
} mpitopo_map_options_t;
#define MPITOPO_MAP_OPTIONS_INIT {MPITOPO_WEIGHT_BYTES, 1, NULL, 0}

/* A registered mapper, as listed by mpitopo_mapper_at. Mappers run only
 * through mpitopo_map, which checks their arguments and their result. */
typedef struct mpitopo_mapper {
    const char *name;    /* "block", "rr", ... */
    const char *summary; /* one line for --help */
    int needs_cart;      /* 1: only for patterns from mpitopo_pattern_cart */
} mpitopo_mapper_t;

/* The registered mappers, in registration order. */
MPITOPO_API int mpitopo_mapper_count(void);
MPITOPO_API const mpitopo_mapper_t *mpitopo_mapper_at(int index);
/* Look a mapper up by name; MPITOPO_ERR_NOT_FOUND lists the known names. */
MPITOPO_API int mpitopo_mapper_find(const char *name, const mpitopo_mapper_t **mapper);

/*
 * Run the mapper given by `spec` ("name" or "name:args"), then check that the
 * result places every process on a distinct valid leaf. With
 * options->never_worse, the launch placement is kept when the result does not
 * lower the weighted cost; *kept_launch (may be NULL) tells whether it was.
 * Requires nprocs <= nleaves.
 */
MPITOPO_API int mpitopo_map(const char *spec, const mpitopo_machine_t *machine,
                            const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                            int *leaf_of_proc, int *kept_launch);

/* Check that leaf_of_proc places nprocs processes on distinct leaves of
 * machine; the error message names the first offending process. */
MPITOPO_API int mpitopo_mapping_check(const mpitopo_machine_t *machine, int nprocs,
                                      const int *leaf_of_proc);

/*
 * Launch placements, as a resource manager would place ranks:
 *   "block"        rank p on leaf p (fills node after node);
 *   "rr"           round-robin over compute nodes: round k gives the k-th leaf
 *                  of every node that still has one, in node order, so with
 *                  equal nodes rank p lands on node p mod nnodes; full nodes
 *                  drop out of later rounds;
 *   "random:SEED"  a uniformly random set of distinct leaves.
 * These are also registered as the mappers "block", "rr" and "random";
 * the mapper "identity" keeps options->launch.
 */
MPITOPO_API int mpitopo_placement(const mpitopo_machine_t *machine, int nprocs, const char *spec,
                                  int *leaf_of_proc);
/* Errors of the functions above: MPITOPO_ERR_ARG (NULL pointers, nprocs
 * outside [0, nleaves], an invalid launch or weight in options, an argument
 * given to a mapper that takes none), MPITOPO_ERR_PARSE (a placement spec
 * that is not block, rr or random:SEED), MPITOPO_ERR_NOT_FOUND (unknown
 * mapper), MPITOPO_ERR_RANGE (a leaf out of range), MPITOPO_ERR_NOMEM, and
 * whatever a mapper returns. On error leaf_of_proc is unspecified. */


/*
 * Dimensions of a Cartesian grid, as MPI_Dims_create should compute them:
 * the entries of dims that are 0 on input are filled so that prod(dims) ==
 * nprocs and the filled entries are as balanced as possible (smallest
 * max - min, then smallest max), in non-increasing order; non-zero entries
 * are kept. Exact for every nprocs up to 2^31 - 1.
 * Errors: MPITOPO_ERR_ARG for nprocs < 1, ndims < 0 or > MPITOPO_MAX_DIMS,
 * dims NULL with ndims > 0, or a negative entry (message names it);
 * MPITOPO_ERR_RANGE when the product of the non-zero entries does not
 * divide nprocs (or every entry is fixed and the product differs). On
 * error dims is unchanged.
 */
MPITOPO_API int mpitopo_dims_create(int nprocs, int ndims, int *dims);

/*
 * Node-aware dimensions: like mpitopo_dims_create, but for nprocs processes
 * in nodes of procs_per_node (which must divide nprocs), choose the
 * factorisation whose best node box (a box of procs_per_node processes
 * tiling the grid) cuts the fewest edges of a star stencil of radius 1 with
 * the given periods (NULL: all periodic). Only factorisations at most twice
 * as unbalanced (max/min of the filled entries) as the most balanced one are
 * considered, so the grid stays usable for the application; ties go to the
 * more balanced (then lexicographically smaller). 576 processes, 36 per
 * node, 3-D: 12x8x6 where MPI gives 9x8x8, with node box 3x2x6 when all
 * dimensions are periodic (a box spanning a periodic dimension cuts nothing
 * there) and 3x4x3 when they are open. node_box (ndims entries, may be
 * NULL) receives the box. When procs_per_node does not divide nprocs the
 * result is mpitopo_dims_create's and node_box is all zeros (when it
 * divides, a box always exists).
 * Errors: those of mpitopo_dims_create; MPITOPO_ERR_ARG for
 * procs_per_node < 1; MPITOPO_ERR_NOMEM (one work area of about 60 KB).
 */
MPITOPO_API int mpitopo_dims_create_nodes(int nprocs, int procs_per_node, int ndims, int *dims,
                                          const int *periods, int *node_box);

#ifdef __cplusplus
}
#endif
#endif /* MPITOPO_MAP_H */
