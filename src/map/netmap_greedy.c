/*
 * Mapper "greedy": Hoefler and Snir's greedy heuristic (ICS 2011, one of
 * LibTopoMap's strategies and a comparator of the thesis, ch. 3) on the
 * parts of netmap_common.c. The heaviest part (most bytes with the others)
 * goes to the most central node (least summed distance to the nodes of its
 * size); then, repeatedly, the unplaced part with the heaviest connection to
 * the placed ones goes to the free node of its size closest to its placed
 * neighbours: least sum over them of bytes x route cost. Choices where the
 * paper leaves room: a part tied to no placed part (a disconnected graph)
 * is the heaviest one left and goes next to the last one placed; ties go to
 * the heavier part, then the lower index, and to the node nearer the last
 * placement, then the lower index. Deterministic; O(parts x nodes x degree).
 */
#include "map/netmap_internal.h"

#include <math.h>

static int pick_part(const mpitopo__netmap_t *nm, const unsigned char *placed, const double *conn)
{
    int best = -1;
    for (int a = 0; a < nm->nn; a++) {
        if (placed[a])
            continue;
        if (best < 0 || conn[a] > conn[best] || (conn[a] == conn[best] && nm->wsum[a] > nm->wsum[best]))
            best = a;
    }
    return best;
}

/* The free node of part a's size of least cost, `last` the node of the
 * previous placement (-1: none, then the most central node). */
static int pick_node(const mpitopo__netmap_t *nm, const int *node_of, const unsigned char *taken, int a, int last)
{
    int best = -1;
    double best_cost = INFINITY, best_tie = INFINITY;
    for (int n = 0; n < nm->nn; n++) {
        if (taken[n] || nm->cap[n] != nm->cap[a])
            continue;
        double cost = 0, tie = 0;
        if (last < 0) {
            for (int k = 0; k < nm->nn; k++)
                cost += nm->cap[k] == nm->cap[a] ? mpitopo__netmap_dist(nm, n, k) : 0;
        } else {
            for (int64_t e = nm->goff[a]; e < nm->goff[a + 1]; e++)
                if (node_of[nm->gadj[e]] >= 0)
                    cost += nm->gw[e] * mpitopo__netmap_dist(nm, n, node_of[nm->gadj[e]]);
            tie = mpitopo__netmap_dist(nm, n, last);
        }
        if (cost < best_cost || (cost == best_cost && tie < best_tie)) {
            best = n;
            best_cost = cost;
            best_tie = tie;
        }
    }
    return best;
}

static int greedy(const mpitopo__netmap_t *nm, int *node_of)
{
    int nn = nm->nn;
    unsigned char *placed = mpitopo__calloc((size_t)nn, 1), *taken = mpitopo__calloc((size_t)nn, 1);
    double *conn = mpitopo__calloc((size_t)nn, sizeof *conn);
    int rc = placed && taken && conn ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the greedy placement");
    for (int a = 0; a < nn; a++)
        node_of[a] = -1;
    for (int step = 0, last = -1; rc == MPITOPO_SUCCESS && step < nn; step++) {
        int a = pick_part(nm, placed, conn);
        int n = pick_node(nm, node_of, taken, a, last);
        if (n < 0) { /* parts and nodes have the same sizes: cannot happen */
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "greedy: no free node for part %d", a);
            break;
        }
        node_of[a] = last = n;
        placed[a] = taken[n] = 1;
        for (int64_t e = nm->goff[a]; e < nm->goff[a + 1]; e++)
            conn[nm->gadj[e]] += nm->gw[e];
    }
    mpitopo__free(placed);
    mpitopo__free(taken);
    mpitopo__free(conn);
    return rc;
}

int mpitopo__map_netgreedy(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                           const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    (void)args;
    return mpitopo__netmap_run("greedy", greedy, machine, pattern, options, net, leaf_of_proc);
}

int mpitopo__netgreedy_parts(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                             const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, const int *part,
                             int *leaf_of_proc)
{
    return mpitopo__netmap_run_parts("greedy", greedy, machine, pattern, options, net, part, leaf_of_proc);
}
