/* Shared by the files of the "ptram" mapper (ptram.c, ptram_load.c) and its
 * unit tests: the incremental hybrid metric and the mapper's parameters. */
#ifndef MPITOPO_PTRAM_INTERNAL_H
#define MPITOPO_PTRAM_INTERNAL_H

#include "core/internal.h"
#include "map/map_internal.h"

/*
 * Channel loads of a partial mapping with the running sums the hybrid
 * metric needs, so that a candidate move is scored in O(|delta| log C)
 * instead of O(C): per channel its load (bytes) and the number of
 * communicating pairs crossing it (a load is 0 exactly when that count is,
 * whatever the rounding), the sum and the sum of squares of the
 * congestions of the loaded channels and their number (NZCA, NZCV), the
 * hop-bytes and dilation, and a max segment tree over the congestions (MC,
 * which loads going down during the refinement must not break).
 *
 * A candidate is staged as a delta (pairs added or removed), scored with
 * mpitopo__pload_delta_hybrid(), then either committed or cleared.
 */
typedef struct mpitopo__pload {
    const mpitopo_network_t *net;
    int64_t nch, size;   /* channels; leaves of the segment tree (a power of 2) */
    int max_route;
    double *cap;         /* capacity per channel */
    double cap_min, cap_max;
    double *load;        /* bytes per channel */
    int64_t *npairs;     /* pairs crossing each channel */
    double *tree;        /* 2 * size: tree[size + c] = congestion of c, inner nodes the max */
    double hop_bytes, dilation, s1, s2;
    int64_t nz;
    double w[4];         /* hybrid weights */
    double ref[4];       /* normaliser of each term (1: none) */
    /* the staged delta */
    double *dload;
    int64_t *dpairs;
    int64_t *touched;
    int64_t ntouched;
    unsigned char *mark;
    double dhop_bytes, ddilation;
    int64_t *route;      /* room for one route */
    /* the staged delta kept by mpitopo__pload_keep */
    double *kept_load;
    int64_t *kept_pairs;
    int64_t nkept;
    double kept_sums[2];
} mpitopo__pload_t;

/* An empty structure (nothing placed) with hybrid weights w (NULL: 1,1,1,1)
 * and normaliser ref (NULL: none; a term whose reference is 0 is not
 * divided, as in mpitopo_network_evaluate). */
int mpitopo__pload_init(mpitopo__pload_t *pl, const mpitopo_network_t *net, const double *w,
                        const mpitopo_network_metrics_t *ref);
void mpitopo__pload_free(mpitopo__pload_t *pl);

/* Stage the traffic src -> dst (end nodes) of `pairs` communicating pairs
 * carrying `bytes`, added (sign +1) or removed (-1). Nothing when src == dst. */
void mpitopo__pload_stage(mpitopo__pload_t *pl, int src, int dst, double bytes, int64_t pairs, int sign);
/* The same along a route already known (len channels). */
void mpitopo__pload_stage_route(mpitopo__pload_t *pl, const int64_t *route, int len, double bytes, int64_t pairs,
                                int sign);

/* The hybrid metric with the staged delta applied (the structure is left
 * as it was). */
double mpitopo__pload_delta_hybrid(mpitopo__pload_t *pl);
/* A lower bound of the hybrid metric when traffic is only added (the
 * greedy step), its hop-bytes delta dhop_bytes summed in the order
 * mpitopo__pload_stage_route would sum it (then the bound holds in
 * floating point too):
 * dhop_bytes > 0 over routes of `hops` channels in all; NZCA and NZCV are
 * bounded too (ptram_load.c says how). */
double mpitopo__pload_add_floor(const mpitopo__pload_t *pl, double dhop_bytes, int64_t hops);
/* All the metrics with the staged delta applied. */
void mpitopo__pload_delta_metrics(mpitopo__pload_t *pl, mpitopo_network_metrics_t *m);

/* Apply the staged delta; clear it. */
void mpitopo__pload_commit(mpitopo__pload_t *pl);

/* Drop the staged delta. */
void mpitopo__pload_clear(mpitopo__pload_t *pl);

/* Remember the staged delta; rewind: back to it, as if what was staged
 * since had not been (so that deltas sharing a first part stage it once;
 * every channel then sums its terms in the same order as when staged
 * whole, so the scores agree bit for bit). */
void mpitopo__pload_keep(mpitopo__pload_t *pl);
void mpitopo__pload_rewind(mpitopo__pload_t *pl);

/* The metrics of what is committed (O(1); hybrid with the structure's
 * weights and normaliser). */
void mpitopo__pload_metrics(const mpitopo__pload_t *pl, mpitopo_network_metrics_t *m);

/* The most congested channel, the lowest numbered on a tie; -1 when no
 * channel carries traffic. */
int64_t mpitopo__pload_hottest(const mpitopo__pload_t *pl);

/* Recompute the running sums from the loads (O(C)): after many removals,
 * so that rounding does not pile up. */
void mpitopo__pload_resum(mpitopo__pload_t *pl);

/* The staged delta as a sparse list, for the parallel greedy (the winner
 * of a step sends it, the other leaders stage it): the touched channels in
 * the order they were touched, their load and pair deltas, and the
 * hop-bytes and dilation deltas (sums[0], sums[1]). Importing what was
 * exported into a structure holding the same loads stages exactly the same
 * delta, so commits agree bit for bit. */
int64_t mpitopo__pload_delta_size(const mpitopo__pload_t *pl);
void mpitopo__pload_delta_export(const mpitopo__pload_t *pl, int64_t *channel, double *dload, int64_t *dpairs,
                                 double *sums);
void mpitopo__pload_delta_import(mpitopo__pload_t *pl, int64_t n, const int64_t *channel, const double *dload,
                                 const int64_t *dpairs, const double *sums);

/* How processes are grouped before the greedy placement. */
enum { MPITOPO__PTRAM_PART_AUTO, MPITOPO__PTRAM_PART_TREE, MPITOPO__PTRAM_PART_SCOTCH,
       MPITOPO__PTRAM_PART_NONE };

/* Called after every greedy step and every refinement swap (tests):
 * proc_node[p] is the end node of process p, -1 while not placed; pl the
 * structure, with nothing staged. */
typedef void (*mpitopo__ptram_check_fn)(void *ctx, const mpitopo__pload_t *pl, const int *proc_node);

/*
 * The greedy step (Alg. 3.1) in pieces that the serial loop (ptram.c) and
 * the parallel one (src/mpi/ptram_par.c, one leader per node) share, so
 * that both score a candidate with the same code. The items and their
 * directed graph without the traffic inside an item (out-edges ooff/odst/
 * obytes/opairs, in-edges the transpose), the nodes in use with their
 * slots and end nodes, and the placement so far (node_of: -1 while not
 * placed; fill: items per node).
 */
typedef struct mpitopo__ptram_items {
    int ni, nn, exact;   /* exact: one item per node, of the node's size */
    const int *isize, *cap, *end;
    const int64_t *ooff, *ioff;
    const int *odst, *isrc;
    const double *obytes, *ibytes;
    const int64_t *opairs, *ipairs;
    int *node_of, *fill;
} mpitopo__ptram_items_t;

/* The route from node n to node m (nodes in use, n != m), *len channels;
 * valid until the next call. */
typedef const int64_t *(*mpitopo__ptram_route_fn)(void *ctx, int n, int m, int *len);

/* Stage the traffic of item a on node n with every placed item but `skip`
 * (-1: none), added (sign +1) or removed (-1). */
void mpitopo__ptram_stage_item(const mpitopo__ptram_items_t *it, mpitopo__pload_t *pl, mpitopo__ptram_route_fn route,
                               void *ctx, int a, int n, int skip, int sign);
/* Whether item a may go on node n. */
int mpitopo__ptram_fits(const mpitopo__ptram_items_t *it, int a, int n);
/* The hybrid metric with item a placed on node n (nothing left staged). */
double mpitopo__ptram_score(const mpitopo__ptram_items_t *it, mpitopo__pload_t *pl, mpitopo__ptram_route_fn route,
                            void *ctx, int a, int n);
/* rest[a]: the traffic of item a both ways (conn, zeroed by the caller,
 * is its part with placed items: none yet). */
void mpitopo__ptram_greedy_init(const mpitopo__ptram_items_t *it, double *rest);
/* The next item of step `step`: the unplaced argmax of conn + rest / (step + 1). */
int mpitopo__ptram_greedy_next(const mpitopo__ptram_items_t *it, const double *conn, const double *rest, int step);
/* Item a was placed: its traffic moves from rest to conn of its peers. */
void mpitopo__ptram_greedy_placed(const mpitopo__ptram_items_t *it, double *conn, double *rest, int a);
/* The serial loop's choice among nodes lo..hi-1 scored h[n - lo] (fit[n -
 * lo]: whether item fits there): the lowest hybrid metric, the lowest node
 * on a tie, -1 when none fits. Applied to the winners of consecutive node
 * ranges (in order) it gives the winner of their union. */
int mpitopo__ptram_pick(int lo, int hi, const unsigned char *fit, const double *h, double *best);

/* Runs the whole greedy step in place of the serial loop (the parallel
 * driver): the items (nothing placed), pl the empty structure (its weights
 * and normaliser); order[s] and node[s] receive the item placed at step s
 * and its node, which the caller replays. */
typedef int (*mpitopo__ptram_greedy_fn)(void *ctx, const mpitopo__ptram_items_t *it, const mpitopo__pload_t *pl,
                                        int *order, int *node);

typedef struct mpitopo__ptram_params {
    double w[4];    /* hybrid weights, "w=" */
    int k;          /* refinement radius: the k nearest nodes, "k=" */
    int rounds;     /* refinement rounds at most, "rounds=" (0: greedy only) */
    int part;       /* MPITOPO__PTRAM_PART_*, "part=" */
    int blind;      /* routing-blind: hop-bytes only, no hot-channel filter, "blind" */
    int norm;       /* divide every term by the launch placement's, "norm" */
    int strict;     /* the thesis's method only: greedy, then per round the one swap
                       that lowers MC most (Alg. 3.2 as written), "strict" */
    int keep;       /* return the launch when not better (default 1; "nokeep" for tests) */
    mpitopo__ptram_check_fn check;
    void *check_ctx;
    mpitopo__ptram_greedy_fn greedy; /* NULL: the serial loop */
    void *greedy_ctx;
} mpitopo__ptram_params_t;

/* What a run did, for tests and benchmarks. */
typedef struct mpitopo__ptram_stats {
    int nparts, nnodes;
    double t_part, t_greedy, t_refine, t_total; /* seconds */
    double greedy_hybrid, final_hybrid, launch_hybrid;
    int swaps, rounds, kept_launch, zero_traffic;
    const char *start; /* the start that won ("greedy", "tree", "launch", "cart", "metis",
                          "hoefler-snir"; "launch" too when the launch was kept) */
} mpitopo__ptram_stats_t;

/* Parse "w=1,1,1,1:k=8:part=auto:rounds=10:blind:norm:strict" (args NULL: the
 * defaults). MPITOPO_ERR_PARSE names the argument and its value. */
int mpitopo__ptram_parse(const char *args, mpitopo__ptram_params_t *params);

/* The mapper with explicit parameters and statistics (stats may be NULL). */
int mpitopo__ptram_run(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                       const mpitopo_map_options_t *options, const mpitopo_network_t *network,
                       const int *end_node, const mpitopo__ptram_params_t *params, int *leaf_of_proc,
                       mpitopo__ptram_stats_t *stats);

/* The registered mapper (registry.c). */
int mpitopo__map_ptram(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                       const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc);

#endif
