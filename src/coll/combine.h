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

struct mpitopo__comb {
    int nsteps;
    mpitopo__comb_step_t *steps; /* ascending t */
    int nrecv;
    mpitopo__comb_recv_t *recvs; /* ascending t */
    int rounds;                  /* largest round of any process */
    /* Messages (sends and receives) of the busiest process, with both
     * sides combined and under the linear schedule: what auto weighs
     * (mpitopo__combine_pays). */
    int max_combined, max_linear;
};

/* Messages (sends plus receives) that the calling process, rank me, sends
 * and receives in one operation with both sides combined (*combined) and
 * under the linear schedule (*linear), from the pattern c of n. */
void mpitopo__combine_messages(const mpitopo__nbr_t *n, const struct mpitopo__comb *c, int me,
                               int *combined, int *linear);

#endif
