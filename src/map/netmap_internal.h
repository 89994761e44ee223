/* Shared by the network-aware comparator mappers (LibTopoMap's algorithms,
 * thesis ch. 3: "greedy", "rcm", "rb", "scotchnet"; netmap_*.c) and their
 * unit tests: the parts, their graph, the nodes in use and the distances
 * between them, and the placement of each node's processes on its cores. */
#ifndef MPITOPO_NETMAP_INTERNAL_H
#define MPITOPO_NETMAP_INTERNAL_H

#include "core/internal.h"
#include "map/map_internal.h"

/* The most nodes in use the comparators take: they keep the distance of
 * every pair of nodes in use (4 bytes each, 64 MiB at this size). */
#define MPITOPO__NETMAP_MAX_NODES 4096

/*
 * The problem every comparator solves, as LibTopoMap does: the processes
 * partitioned into one part per node in use (part k exactly as large as
 * node k's slots: the first nprocs leaves, as every mapper fills them),
 * then the parts placed one per node, a part only on a node of its size.
 */
typedef struct mpitopo__netmap {
    const mpitopo_machine_t *m;
    const mpitopo_pattern_t *pat;
    const mpitopo_network_t *net;
    int nprocs, nn;      /* processes; nodes in use = parts */
    int *cap, *end;      /* per node in use: slots, end node */
    int *part;           /* part of every process */
    /* The part graph, undirected: bytes both ways summed, traffic inside
     * a part dropped; CSR, each row in the order its neighbours first appear. wsum[a]: a's total. */
    int64_t *goff;
    int *gadj;
    double *gw, *wsum;
    /* dist[n * nn + m]: the mean of the costs of the routes n -> m and
     * m -> n, a route costing the sum over its channels of the largest
     * capacity divided by the channel's (its hop count when all capacities
     * are equal). */
    float *dist;
} mpitopo__netmap_t;

/*
 * Set nm up for the mapper `name` (for messages): checks the network
 * (none: MPITOPO_ERR_ARG "<name> needs a network"), the nodes in use
 * (more than MPITOPO__NETMAP_MAX_NODES: MPITOPO_ERR_RANGE), partitions the
 * processes by the tree mapper on the flattened machine "node x slots",
 * builds the part graph and the distances; part (not NULL) gives the
 * parts instead (numbered like the nodes in use, each of its node's size:
 * ptram's own). *trivial is set (and nothing
 * else to do but mpitopo__netmap_free) when the answer needs no network:
 * no process, or a machine without a node level (then leaf_of_proc is
 * already the tree mapper's placement).
 */
int mpitopo__netmap_setup(mpitopo__netmap_t *nm, const char *name, const mpitopo_machine_t *machine,
                          const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                          const mpitopo__map_net_t *net, const int *part, int *leaf_of_proc, int *trivial);
void mpitopo__netmap_free(mpitopo__netmap_t *nm);

/* The distance between nodes in use n and m. */
static inline double mpitopo__netmap_dist(const mpitopo__netmap_t *nm, int n, int m)
{
    return (double)nm->dist[(size_t)n * (size_t)nm->nn + (size_t)m];
}

/* node_of_part is a placement (one part per node, of its size): the
 * leaves of every process, by the tree mapper on the levels inside each
 * node (in rank order when there is at most one). MPITOPO_ERR_INTERNAL when
 * node_of_part is not such a placement. */
int mpitopo__netmap_finish(const mpitopo__netmap_t *nm, const mpitopo_map_options_t *options,
                           const int *node_of_part, int *leaf_of_proc);

/* What each comparator does on its own: place the parts of nm one per
 * node of its size (node_of[part] = node in use). */
typedef int (*mpitopo__netmap_place_fn)(const mpitopo__netmap_t *nm, int *node_of);

/* The comparator `name` (for messages) whose parts go where place puts
 * them: mpitopo__netmap_setup, place, mpitopo__netmap_finish. Every
 * mpitopo__map_net* below is this with its own place. */
int mpitopo__netmap_run(const char *name, mpitopo__netmap_place_fn place, const mpitopo_machine_t *machine,
                        const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                        const mpitopo__map_net_t *net, int *leaf_of_proc);
/* The same from given parts (see mpitopo__netmap_setup). */
int mpitopo__netmap_run_parts(const char *name, mpitopo__netmap_place_fn place, const mpitopo_machine_t *machine,
                              const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                              const mpitopo__map_net_t *net, const int *part, int *leaf_of_proc);
/* Hoefler and Snir's greedy placement of given parts (ptram's start). */
int mpitopo__netgreedy_parts(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                             const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, const int *part,
                             int *leaf_of_proc);

/*
 * Reverse Cuthill-McKee order of the undirected graph (off, adj) of n
 * vertices (CSR, each edge both ways): per connected component a BFS
 * from a pseudo-peripheral vertex (George and Liu's search started at the
 * unvisited vertex of least degree, lowest index on ties) that visits the
 * unvisited neighbours of each vertex by increasing degree (then index);
 * the whole sequence reversed into order[0..n). next (NULL: the unvisited
 * vertex of least degree) picks where the search goes on after a component:
 * called with the last vertex visited and the visited flags, it returns
 * the unvisited vertex to start from (then no peripheral search is made).
 */
typedef int (*mpitopo__netmap_next_fn)(void *ctx, int last, const unsigned char *visited);
int mpitopo__netmap_rcm(int n, const int64_t *off, const int *adj, mpitopo__netmap_next_fn next, void *ctx,
                        int *order);

/* The registered mappers (registry.c). */
int mpitopo__map_netgreedy(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                           const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc);
int mpitopo__map_netrcm(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                        const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc);
int mpitopo__map_netrb(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                       const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc);
#ifdef MPITOPO_HAVE_SCOTCH
int mpitopo__map_netscotch(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                           const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc);
#endif

#endif
