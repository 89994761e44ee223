/* Collective-aware rank reordering (thesis ch. 4, issue 19): the distances
 * between the leaves that hold a communicator's processes, the four
 * heuristics that reorder the ranks to fit one collective algorithm's
 * pattern (RDMH, RMH, BBMH, BGMH), and the cost of running an algorithm in a
 * given rank order under the same distance model. MPI-free: the MPI layer
 * (src/coll/) gathers where every rank sits and calls these; the mappers
 * rdmh, rmh, bbmh and bgmh (collmap.c) run them offline. */
#ifndef MPITOPO_MAP_COLLMAP_H
#define MPITOPO_MAP_COLLMAP_H

#include "core/internal.h" /* the public topic headers, machine.h and network.h among them */

typedef enum mpitopo__coll_heur {
    MPITOPO__COLL_RDMH, /* recursive doubling (p must be a power of two) */
    MPITOPO__COLL_RMH,  /* ring */
    MPITOPO__COLL_BBMH, /* binomial broadcast, root 0, smaller subtrees first */
    MPITOPO__COLL_BGMH  /* binomial gather, root 0, heaviest remaining edge */
} mpitopo__coll_heur_t;

/* Where the ranks are: a machine, optionally the network above its nodes and
 * the end node of each node unit (NULL = unit u on end node u). The distance
 * between two leaves is computed on demand, never stored as a matrix. */
typedef struct mpitopo__coll_dist {
    const mpitopo_machine_t *machine;
    const mpitopo_network_t *network; /* may be NULL */
    const int *end_node;              /* may be NULL */
} mpitopo__coll_dist_t;

/* Ordinal distance between two leaves (valid, not checked): 0 for the same
 * leaf; otherwise nlevels - l where l is the machine level at which their
 * paths part (1 = same unit of the level above the leaves, e.g. same
 * socket; nlevels = different units of the top level). With a network and
 * a node level, two leaves on different nodes are instead
 * (nlevels - node_level) + the hop count (channels) of the route between
 * the end nodes of their nodes, so every pair inside a node is closer than
 * any pair across nodes, and the levels above the nodes are replaced by the
 * network. */
int mpitopo__coll_distance(const mpitopo__coll_dist_t *d, int leaf_a, int leaf_b);

/* The heuristic's reordering: leaf_of_rank[r] is the (distinct) leaf where
 * old rank r sits; on return old_of_new[j] is the old rank that takes new
 * rank j; old_of_new[0] == 0 always. Each step places the next rank of the
 * heuristic's order on the free leaf (a leaf of leaf_of_rank not yet taken)
 * closest to its reference's, ties to the lowest leaf: deterministic, and
 * in O(p log p)-ish time (per-unit free counts over the machine tree, the
 * closest node by hops cached per node). MPITOPO_ERR_ARG for RDMH with p
 * not a power of two (the message says so), p < 1, NULL pointers, leaves
 * out of range or repeated; MPITOPO_ERR_NOMEM. */
int mpitopo__coll_order(mpitopo__coll_heur_t h, const mpitopo__coll_dist_t *d, int p, const int *leaf_of_rank,
                        int *old_of_new);

typedef enum mpitopo__coll_alg {
    MPITOPO__COLL_ALG_ALLGATHER_RD,
    MPITOPO__COLL_ALG_ALLGATHER_RING,
    MPITOPO__COLL_ALG_ALLGATHER_BRUCK,
    MPITOPO__COLL_ALG_BCAST_BINOMIAL,
    MPITOPO__COLL_ALG_GATHER_BINOMIAL,
    MPITOPO__COLL_ALG_ALLREDUCE_RD,
    MPITOPO__COLL_ALG_GATHER_LINEAR, /* every rank to 0 (hierarchical allgather, in a node) */
    MPITOPO__COLL_ALG_BCAST_LINEAR   /* 0 to every rank */
} mpitopo__coll_alg_t;

/* Cost of running algorithm `alg` with rank order old_of_new (NULL =
 * identity: new rank j is old rank j) under the distance model: the sum over
 * the algorithm's stages of the stage's slowest message, a message of m
 * bytes over distance d costing d + w * c * m / 1024 (one latency unit per
 * distance unit, and a per-byte cost that grows with w and with c, the
 * messages of the stage leaving the same unit as this one at the level
 * where its ends part, the node for a message between nodes; w = d, except
 * between the nodes of a machine without a network, where w is the
 * distance of two nodes under one switch: full bisection above the node;
 * 0 when d = 0). block_bytes is the bytes of one rank's block
 * (allgather, gather) or of the whole buffer (bcast, allreduce), >= 0.
 * The stages (new ranks; collmap_cost.c): RD, stage s: i <-> i ^ 2^s with
 * 2^s blocks (allreduce: the whole buffer); ring: p - 1 stages of i -> i+1
 * with one block; Bruck, stage k: i -> i - 2^k (mod p) with min(2^k,
 * p - 2^k) blocks; binomial bcast/gather with mask m = 2^k: r -> r + m
 * (r multiple of 2m), the gather carrying the subtree of r + m; linear
 * gather/bcast: the p - 1 messages to/from rank 0 one after another (the
 * sum of their costs with c = 1).
 * MPITOPO_ERR_ARG for RD with p not a power of two, bad arguments;
 * MPITOPO_ERR_NOMEM. Time O(stages x p x levels) plus the distances. */
int mpitopo__coll_cost(mpitopo__coll_alg_t alg, const mpitopo__coll_dist_t *d, int p, const int *leaf_of_rank,
                       const int *old_of_new, double block_bytes, double *cost);

/* The cost, in the same model, of the one exchange that puts the blocks in
 * the reordered communicator's order before the algorithm (initComm, thesis
 * 4.2.3): old rank j's block (block_bytes) from the process that now has
 * new rank new_of_old[j] to the one at new rank j, as one stage. The MPI
 * layer adds it to a reordered allgather (RD, Bruck) or gather before it
 * compares with the original order, which needs no such step. */
int mpitopo__coll_perm_cost(const mpitopo__coll_dist_t *d, int p, const int *leaf_of_rank, const int *old_of_new,
                            double block_bytes, double *cost);

#endif
