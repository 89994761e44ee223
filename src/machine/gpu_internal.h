/* GPU trees and the congestion-based greedy of thesis Alg. 5.1, shared by
 * the GPU-tree constructors, the MAGC mapper and the GPU metrics. */
#ifndef MPITOPO_GPU_INTERNAL_H
#define MPITOPO_GPU_INTERNAL_H

#include "core/internal.h"
#include <mpitopo/network.h>
#include <mpitopo/gpu.h>

/*
 * A tree of processing elements (GPUs or cores) with a bandwidth on every
 * link. Vertex 0 is the root; parent[v] < v for every other vertex, so a
 * pass over vertices in decreasing order visits children before parents.
 * The link of vertex v (v > 0) joins v to parent[v] and carries bw[v]
 * (GB/s; INFINITY for a link that never congests). The PEs are leaves,
 * pe_vertex[i] the vertex of PE i, numbered in tree (depth-first) order.
 */
typedef struct mpitopo__ptree {
    int nvert;
    int npe;
    int *parent;    /* nvert, parent[0] = -1 */
    int *depth;     /* nvert, depth[0] = 0 */
    double *bw;     /* nvert, bw[0] unused */
    int *pe_vertex; /* npe */
} mpitopo__ptree_t;

struct mpitopo_gpus {
    mpitopo__ptree_t tree;
    char **vname; /* nvert names (kind of each vertex: "package", "gpu"...) */
    char *desc;   /* the description string when built from one, else NULL */
};

int mpitopo__ptree_alloc(mpitopo__ptree_t *t, int nvert, int npe);
void mpitopo__ptree_free(mpitopo__ptree_t *t);
/* Fills depth[] from parent[] (parent[v] < v), checks the PE vertices are
 * leaves. */
int mpitopo__ptree_finish(mpitopo__ptree_t *t);

/* A GPU tree from its parts (takes ownership of vname on success and on
 * failure). */
int mpitopo__gpus_new(mpitopo__ptree_t *tree, char **vname, const char *desc,
                      mpitopo_gpus_t **gpus);

/* mpitopo_gpus_from_hwloc(), NVLink ignored when nvlink is 0 ("pcie:FILE"). */
int mpitopo__gpus_from_hwloc_opt(const char *xml_path, int nvlink, mpitopo_gpus_t **gpus);

/*
 * Alg. 5.1 on one node: n processes (0..n-1, ties to the lowest), a
 * symmetric volume matrix vol (n x n, vol[i*n+j] = c_ij + c_ji, zero
 * diagonal), the tree t with npe >= n PEs. pe_of[i] receives the PE of
 * process i. off: NULL (the thesis's algorithm), or each process's
 * inter-node volume, which then loads the path from its PE to the root.
 * sum_ties: 0 (the thesis: ties to the lowest PE) or 1 (ties to the least
 * added congestion first). Returns MPITOPO_SUCCESS or MPITOPO_ERR_NOMEM.
 */
int mpitopo__alg51(const mpitopo__ptree_t *t, int n, const double *vol, const double *off,
                   int sum_ties, int *pe_of);
/* The best of Alg. 5.1's variants (off NULL or not, sum_ties 0 or 1; see
 * alg51.c) by mpitopo__node_mc(), the thesis's own on ties, then (with
 * refine_swaps) a local search on it by exchanges of processes and of
 * subtrees (lexicographic: maximum congestion, links at it, sum of
 * load^2 / bandwidth), kept when no higher; *mc (may be NULL) its
 * congestion. */
int mpitopo__alg51_best(const mpitopo__ptree_t *t, int n, const double *vol, const double *off,
                        int refine_swaps, int *pe_of, double *mc);
/* Congestion of n processes on PEs pe_of: their traffic vol among
 * themselves, and off[i] (may be NULL) from PE i to the root; extra and
 * load are nvert work arrays. */
double mpitopo__node_mc(const mpitopo__ptree_t *t, int n, const double *vol, const double *off,
                        const int *pe_of, double *extra, double *load);

/* Max over links of load / bandwidth for n processes on PEs pe_of[] with
 * the volumes vol (as above), plus extra[v] already on link v (may be
 * NULL). */
double mpitopo__ptree_mc(const mpitopo__ptree_t *t, int n, const double *vol, const int *pe_of,
                         const double *extra, double *load);

/* mpitopo_map_gpu(), with each phase's time in seconds in times[3] (may
 * be NULL): phase 1 (nodes), 2 (cores), 3 (GPUs), summed over nodes. */
int mpitopo__map_gpu_timed(const char *spec, const mpitopo_machine_t *machine,
                           const mpitopo_network_t *network, const int *end_node,
                           const mpitopo_gpus_t *gpus, const mpitopo_pattern_t *cpu_pattern,
                           const mpitopo_pattern_t *gpu_pattern,
                           const mpitopo_map_options_t *options, int *leaf_of_proc,
                           int *gpu_of_proc, double *times);

/*
 * A lower bound on the GPU-tree maximum congestion of mpitopo_gpu_metrics()
 * (bytes / GB/s) over every mapping of gpu_pattern's processes to the
 * machine's nodes and their GPUs (proof, precondition and method in
 * gpu_bound.c). scope: TREE when nprocs = nodes x GPUs per node (every link
 * of the tree counts; valid for every mapping with one process per GPU),
 * LEAVES when there are fewer processes (the GPU links only; valid for
 * every mapping where no GPU holds two processes), NONE when there are
 * more (some GPU is shared; mc 0, no claim). exact: 1 when every term is
 * the exact minimum cut of its subtree size (the bound itself may still be
 * out of reach: the subtrees' minima need not fit together); 0 when some
 * level used a weaker valid bound because its search exceeded budget
 * (subsets or connected sets visited per size; <= 0: a default of about
 * 0.2 s). leaf_mc: the GPU links' part, always exact.
 */
typedef enum mpitopo__bound_scope {
    MPITOPO__BOUND_NONE,
    MPITOPO__BOUND_LEAVES,
    MPITOPO__BOUND_TREE
} mpitopo__bound_scope_t;

typedef struct mpitopo__gpu_bound {
    double mc;
    double leaf_mc;
    mpitopo__bound_scope_t scope;
    int exact;
} mpitopo__gpu_bound_t;

int mpitopo__gpu_bound(const mpitopo_machine_t *machine, const mpitopo_gpus_t *gpus,
                       const mpitopo_pattern_t *gpu_pattern, double budget,
                       mpitopo__gpu_bound_t *bound);

#endif
