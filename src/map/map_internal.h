/* Mapper registration: each algorithm file exposes its mapper functions here
 * and registry.c lists them. */
#ifndef MPITOPO_MAP_INTERNAL_H
#define MPITOPO_MAP_INTERNAL_H

#include "core/internal.h"

/*
 * The interface every mapping algorithm implements: fill leaf_of_proc
 * (nprocs entries) for the pattern on the machine. `args` is the text after
 * the first ':' of the mapper specification ("random:7" gives "7"), or NULL.
 * mpitopo_map has already checked the arguments (nprocs <= nleaves, options
 * non-NULL, launch valid) and checks the result. Returns MPITOPO_SUCCESS or
 * an error code with the message set.
 */
typedef int (*mpitopo__map_fn)(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                               const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc);

/* What network-aware mappers also get (mpitopo_map_network): the network
 * above the machine's nodes and the end node of each node unit (NULL: unit
 * u on end node u). network is NULL when the caller gave none
 * (mpitopo_map): such a mapper then fails with a message saying so. */
typedef struct mpitopo__map_net {
    const mpitopo_network_t *network;
    const int *end_node;
} mpitopo__map_net_t;
typedef int (*mpitopo__map_net_fn)(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                                   const char *args, const mpitopo_map_options_t *options,
                                   const mpitopo__map_net_t *net, int *leaf_of_proc);

int mpitopo__map_identity(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                          const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc);
int mpitopo__map_block(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                       const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc);
int mpitopo__map_rr(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                    const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc);
int mpitopo__map_random(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                        const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc);
int mpitopo__map_cart(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                      const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc);
/* The general mapper "tree" (tree_best.c): the cart mapper on a Cartesian
 * pattern when no method is named, else the tree's methods (tree.c). */
int mpitopo__map_tree(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                      const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc);
/* The tree's methods alone: args NULL or best (both, the cheaper kept),
 * topdown or bottomup; the never-worse guard applied. */
int mpitopo__map_tree_methods(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                              const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc);

/* The collective-aware reorderings (collmap.c, thesis ch. 4): the launch
 * placement permuted to fit recursive doubling, a ring, a binomial
 * broadcast or gather; network-aware when given one. */
int mpitopo__map_rdmh(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                      const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc);
int mpitopo__map_rmh(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                     const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc);
int mpitopo__map_bbmh(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                      const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc);
int mpitopo__map_bgmh(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                      const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc);

#ifdef MPITOPO_HAVE_SCOTCH
int mpitopo__map_scotch(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                        const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc);
#endif
#ifdef MPITOPO_HAVE_METIS
int mpitopo__map_metis(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                       const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc);
#endif

/* What the Scotch and METIS mappers share (backends.c). The graph is the
 * pattern made undirected: self edges dropped, u->v and v->u merged into
 * one arc each way carrying their summed weight, as 32-bit integers >= 1
 * scaled so that their total stays within `budget`. */
typedef struct mpitopo__bk_graph {
    int n;
    int *xadj; /* n + 1 */
    int *adj;  /* xadj[n] */
    int *wgt;  /* xadj[n] */
} mpitopo__bk_graph_t;
int mpitopo__bk_graph_build(const mpitopo_pattern_t *pattern, mpitopo_weight_t weight, long long budget,
                            mpitopo__bk_graph_t *g);
void mpitopo__bk_graph_free(mpitopo__bk_graph_t *g);
/* Leaves of unit `unit` of `level` among the first nprocs (the leaves the
 * backends fill). */
int mpitopo__bk_capacity(const mpitopo_machine_t *m, int nprocs, int level, int unit);
/* leaf[p] stands for p's unit at every level; when the counts of the units
 * of level-1 are exact, make those of `level` exact by moving processes
 * from overfull units to underfull siblings, best gain first. */
int mpitopo__bk_repair_level(const mpitopo_machine_t *m, const mpitopo__bk_graph_t *g, int nprocs, int level,
                             int *leaf);
/* With exact counts at the level above the leaves, give each process its
 * own leaf (in process order within each parent). */
int mpitopo__bk_assign_leaves(const mpitopo_machine_t *m, int nprocs, int *leaf);

/* The never-worse guard: replace leaf_of_proc by options->launch (block
 * when NULL) unless it costs strictly less under options->weight; *kept
 * says whether it was replaced. Used by mpitopo_map and by mappers that
 * promise never to be worse on their own. */
int mpitopo__keep_launch_unless_cheaper(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                                        const mpitopo_map_options_t *options, int nprocs, int *leaf_of_proc,
                                        int *kept);

/* Place the processes procs[0..np) (increasing) on the np leaves of node
 * unit u that are among the first nprocs: by the tree mapper on the levels
 * inside the node (built from the leaves' paths) and the traffic among these
 * processes, or in order when there is at most one such level. local has
 * an entry per process, all -1, and is left so; `what` names the arrays in
 * the message of an allocation failure. Shared by ptram and the network
 * comparators (netmap_common.c). */
int mpitopo__place_in_node(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat,
                           const mpitopo_map_options_t *options, int u, const int *procs, int np, int *local,
                           int *leaf_of_proc, const char *what);

/* The never-worse guard under a network (mpitopo_map_network, and the
 * parallel ptram in src/mpi/ptram_par.c): the hybrid metric (weights 1, no
 * normalisation) of leaf_of_proc against the launch's (options->launch,
 * block when NULL), node unit u on end node net->end_node[u] (u when
 * NULL); leaf_of_proc is replaced by the launch unless strictly better,
 * and *kept set then. */
int mpitopo__keep_launch_unless_hybrid_lower(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                                             const mpitopo_map_options_t *options, const mpitopo__map_net_t *net,
                                             int nprocs, int *leaf_of_proc, int *kept);

/* Check a mapper spec ("name" or "name:args") by running it on one
 * process; the error of mpitopo_map when it is bad. */
int mpitopo__map_check_spec(const char *spec);

/* SEED of "random:SEED", for the random mapper and mpitopo_placement alike:
 * a decimal integer in [0, 2^63-1], never empty. 0 or -1. */
int mpitopo__parse_seed(const char *s, uint64_t *seed);

/* Placements shared by the baseline mappers and mpitopo_placement. */
int mpitopo__place_block(const mpitopo_machine_t *machine, int nprocs, int *leaf_of_proc);
int mpitopo__place_rr(const mpitopo_machine_t *machine, int nprocs, int *leaf_of_proc);
int mpitopo__place_random(const mpitopo_machine_t *machine, int nprocs, uint64_t seed,
                          int *leaf_of_proc);

/* Rank 0 stays on its process (rank0.c): when mapped[0] (the leaf of role
 * 0 among n) is not launch[0] (the leaf of the process that was rank 0),
 * relabel equivalent units so that it is, if that leaves the weighted cost
 * unchanged; else, unless allow_move, pin it at the least cost among that
 * relabelling, an exchange of two roles and the launch placement. */
typedef struct mpitopo__rank0 {
    int moved;          /* rank 0 left its process (allow_move) */
    int costly;         /* keeping it cost something: cost_kept > cost_mapped */
    double cost_mapped; /* the mapper's cost */
    double cost_kept;   /* the cost of the mapping returned */
} mpitopo__rank0_t;
int mpitopo__map_keep_rank0(const mpitopo_machine_t *m, const mpitopo_pattern_t *pattern, mpitopo_weight_t weight,
                            int n, const int *launch, int allow_move, int *mapped, mpitopo__rank0_t *out);

#endif
