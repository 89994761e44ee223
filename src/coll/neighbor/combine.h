/* Message combining: the pattern (combine_pattern.c) that the schedule
 * builder (combine.c) turns into rounds. Private to src/coll. */
#ifndef MPITOPO_COLL_COMBINE_H
#define MPITOPO_COLL_COMBINE_H

#include "coll/coll_internal.h"

/*
 * A combining step of the calling process: in round t it swaps data with
 * friend f, then sends the combined message to cn[on_lo..on_hi) (its
 * onloaded common out-neighbours; f serves the others). cn ascending, k
 * entries; mine[i] / theirs[i]: how many edges the process / f has to
 * cn[i] (duplicate edges: alltoall carries that many blocks).
 */
typedef struct mpitopo__comb_step {
    int t, f, k, on_lo, on_hi;
    int *cn, *mine, *theirs; /* one allocation, cn first */
} mpitopo__comb_step_t;

/* In round t a combined message arrives from s with the data of s and f. */
typedef struct mpitopo__comb_recv {
    int t, s, f;
} mpitopo__comb_recv_t;

/*
 * The two patterns. PAIRS: the thesis's (Alg. 6.1-6.2), pairs of friends
 * swap their data and each serves half of their common out-neighbours,
 * one pairing per round. HOPS: every block travels along the binary
 * digits of (destination - origin) mod P, lowest digit first: in hop h
 * (0..nhops-1) each process sends one message to me + 2^h and receives
 * one from me - 2^h (mod P), carrying every block that must cross that
 * digit; a block for several destinations (allgather) travels once per
 * branch. Busiest process: at most 2 * ceil(log2 P) messages in
 * ceil(log2 P) rounds, whatever the degree; chosen on dense graphs,
 * where its cost is at most half of linear's (choose_mode in
 * combine_pattern.c).
 */
enum { MPITOPO__COMB_PAIRS = 0, MPITOPO__COMB_HOPS = 1 };

/* One hop of the HOPS pattern: the items the calling process sends to
 * me + 2^h and receives from me - 2^h, 3 ints each (origin, destination,
 * edges from origin to destination), ascending by (origin, destination);
 * the receiver's list is the sender's. An item reaching its destination
 * is not forwarded again. */
typedef struct mpitopo__comb_hop {
    int nsend, nrecv;
    int *send, *recv; /* one allocation, send first */
} mpitopo__comb_hop_t;

struct mpitopo__comb {
    int mode;                    /* MPITOPO__COMB_PAIRS or _HOPS */
    int nhops;                   /* HOPS: ceil(log2 P) */
    mpitopo__comb_hop_t *hops;   /* HOPS: nhops */
    int nsteps;
    mpitopo__comb_step_t *steps; /* ascending t */
    int nrecv;
    mpitopo__comb_recv_t *recvs; /* ascending t */
    /* PAIRS: largest round of any process; the schedule has 2 * rounds
     * + 1 tag rounds. HOPS: (nhops + 1) / 2, so that 2 * rounds + 1 tags
     * cover its nhops + 1 rounds and a model charging 2 * rounds + 1
     * latencies overestimates it by at most two. */
    int rounds;
    /* Messages (sends and receives) of the busiest process, with both
     * sides combined and under the linear schedule: what auto weighs
     * (mpitopo__combine_pays). */
    int max_combined, max_linear;
    /* Blocks (alltoall: one per edge crossed, sends and receives) of the
     * busiest process combined and linear: the bandwidth term. Combining
     * moves blocks more than once (PAIRS: swap and combined message;
     * HOPS: about log2(P) / 2 hops each). */
    long long max_blocks_combined, max_blocks_linear;
    /* Some process has a duplicate or self edge (the selection code keeps
     * such communicators off the host MPI, whose delivery may differ). */
    int any_duplicates;
};

/* In-edges of n from process x (duplicates counted). */
static inline int mpitopo__combine_edges_from(const mpitopo__nbr_t *n, int x)
{
    int m = 0;
    for (int i = 0; i < n->indegree; i++)
        m += n->sources[i] == x;
    return m;
}

/* Whether q is the partner of some combining step of c (it then receives
 * combined messages). */
static inline int mpitopo__combine_in_steps(const struct mpitopo__comb *c, int q)
{
    for (int i = 0; i < c->nsteps; i++)
        for (int j = 0; j < c->steps[i].k; j++)
            if (c->steps[i].cn[j] == q)
                return 1;
    return 0;
}

/* Whether s sends the calling process a combined message in c. */
static inline int mpitopo__combine_in_recvs(const struct mpitopo__comb *c, int s)
{
    for (int i = 0; i < c->nrecv; i++)
        if (c->recvs[i].s == s || c->recvs[i].f == s)
            return 1;
    return 0;
}

/* Messages (sends plus receives) that the calling process, rank me, sends
 * and receives in one operation with both sides combined (*combined) and
 * under the linear schedule (*linear), from the pattern c of n. */
void mpitopo__combine_messages(const mpitopo__nbr_t *n, const struct mpitopo__comb *c, int me,
                               int *combined, int *linear);

/* The same for blocks (alltoall counting: one per edge). */
void mpitopo__combine_blocks(const mpitopo__nbr_t *n, const struct mpitopo__comb *c, int me,
                             long long *combined, long long *linear);

#endif
