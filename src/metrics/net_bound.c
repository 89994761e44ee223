/*
 * True lower bounds on the max congestion (MC) and the hop-bytes of every
 * mapping of a pattern onto a network (mpitopo_network_bound()).
 *
 * Setting. Node u of the machine sits on end node end_node[u]; a mapping
 * puts each process on a leaf, so node u holds at most size_u processes,
 * exactly size_u when every leaf is used. A "group" is a set A of the job's
 * end nodes: one node (the injection level), or the job's nodes of one
 * group of a network group level (a switch subtree, a dragonfly group...;
 * only the job's nodes in it count, so a partly used switch is a smaller
 * group). B is the job's other nodes. T(s) is a lower bound on the bytes
 * that leave (and on those that enter) any set of s processes of the
 * pattern (mpitopo__cart_set_bound(): the grid's edge-isoperimetric bound,
 * unit steps only, or the group bound of sub-communicator all-to-alls;
 * 0 for non-Cartesian patterns).
 *
 * Cuts. Every byte from A to B follows the route of its pair of end nodes.
 * C_out(A) is made of one channel per route a -> b (a in A, b in B): its
 * first channel that no route between two nodes of A uses (its first
 * channel if there is none). Every route from A to B then crosses C_out(A),
 * so the channels of C_out(A) carry together at least the bytes A sends to
 * B, and since load_c <= MC * cap_c for each of them,
 *     MC >= out(A) / cap(C_out(A)).
 * The same with C_in(A), the last such channel of each route b -> a, and
 * the bytes A receives. Which channel is picked only decides how tight the
 * cut is, never whether it is one: in a fat tree it is the group's uplinks
 * (or downlinks) that its routes use, for one node its own link.
 *
 * MC bound. Every leaf used: group A holds exactly s_A = sum of its nodes'
 * sizes, so out(A), in(A) >= T(s_A) and MC >= max over groups of
 * T(s_A) / min(cap(C_out(A)), cap(C_in(A))). Fewer processes than leaves:
 * the occupancy is the mapping's choice; still sum_A out(A) >=
 * nprocs * r with r = min over 1 <= j <= the largest group's leaves of
 * T(j) / j, and summing load_c <= MC * cap_c over the cuts (a channel in
 * several cuts counted as often) gives MC >= nprocs * r / sum_A cap(C_out(A))
 * (and the same with C_in). The bound is the largest over the levels.
 *
 * Hop-bytes bound. Number the levels from the node level (0) to the
 * coarsest group level; H_l is the shortest route between two of the
 * job's nodes in different groups of level l, and H'_l = max over j <= l of
 * H_j (the groups nest, so a pair in different groups of level l is in
 * different groups of every finer level, and its route is at least H'_l
 * long). A byte whose coarsest crossed level is L crosses at least
 * H'_L = sum over l <= L of (H'_l - H'_(l-1)) channels, so
 *     hop-bytes >= sum over l of (H'_l - H'_(l-1)) * X_l
 * with X_l the bytes crossing level l, X_l >= sum_A T(s_A) (every leaf
 * used) or nprocs * r (otherwise).
 */
#include "machine/machine_internal.h"
#include "metrics/metrics_internal.h"
#include "network/network_internal.h"
#include "pattern/pattern_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* Scratch of one computation: channel stamps, one route, the job's nodes. */
typedef struct nb_work {
    const mpitopo_network_t *net;
    const mpitopo_pattern_t *pat;
    int nnodes;          /* the machine's nodes */
    const int *end;      /* their end nodes */
    const int *size;     /* their leaves */
    int64_t *stamp;      /* nchannels: the group whose intra routes use it */
    int64_t *picked;     /* nchannels: the group (x2, +1 for in) that cut with it */
    int64_t *route;
    int *member;         /* the nodes of the current group */
    int full;            /* every leaf holds a process */
    int nprocs;
} nb_work_t;

/* The route of two of the job's nodes. */
static int nb_route(nb_work_t *w, int a, int b)
{
    return mpitopo__network_route(w->net, w->end[a], w->end[b], w->route);
}

/* The cut capacities of the group of `count` nodes in w->member (group
 * number g, distinct for every group of every level), with `outside` its
 * complement's flags; *hops gets the shortest route leaving the group. */
static void group_cut(nb_work_t *w, int64_t g, int count, const char *outside, double *cap_out,
                      double *cap_in, int *hops)
{
    for (int x = 0; x < count; x++)
        for (int y = 0; y < count; y++) {
            if (x == y)
                continue;
            int len = nb_route(w, w->member[x], w->member[y]);
            for (int i = 0; i < len; i++)
                w->stamp[w->route[i]] = g;
        }
    *cap_out = *cap_in = 0;
    for (int x = 0; x < count; x++)
        for (int b = 0; b < w->nnodes; b++) {
            if (!outside[b])
                continue;
            for (int dir = 0; dir < 2; dir++) {
                int len = dir ? nb_route(w, b, w->member[x]) : nb_route(w, w->member[x], b);
                if (len == 0)
                    continue;
                *hops = len < *hops ? len : *hops;
                int at = dir ? len - 1 : 0;
                for (int i = 0; i < len; i++) {
                    int k = dir ? len - 1 - i : i;
                    if (w->stamp[w->route[k]] != g) {
                        at = k;
                        break;
                    }
                }
                int64_t c = w->route[at];
                if (w->picked[c] != 2 * g + dir) {
                    w->picked[c] = 2 * g + dir;
                    *(dir ? cap_in : cap_out) += mpitopo__network_capacity(w->net, c);
                }
            }
        }
}

/* What one level gives: its MC bound, the bytes it surely carries across
 * and its shortest crossing route (INT_MAX when no route crosses). label[u]
 * is the group of node u at this level; g0 numbers its groups apart from
 * every other level's. */
static int level_bound(nb_work_t *w, const int64_t *label, int64_t g0, double rate, double *mc,
                       double *crossing, int *hops)
{
    char *outside = mpitopo__malloc_array((size_t)w->nnodes, 1);
    char *done = mpitopo__calloc((size_t)w->nnodes, 1);
    if (!outside || !done) {
        mpitopo__free(outside);
        mpitopo__free(done);
        return MPITOPO_NOMEM("the groups of a level");
    }
    double sum_out = 0, sum_in = 0;
    *mc = *crossing = 0;
    *hops = INT_MAX;
    int64_t g = g0;
    for (int u = 0; u < w->nnodes; u++) {
        if (done[u])
            continue;
        int count = 0, s = 0;
        for (int v = u; v < w->nnodes; v++)
            if (!done[v] && label[v] == label[u]) {
                done[v] = 1;
                w->member[count++] = v;
                s += w->size[v];
            }
        if (count == w->nnodes)
            break; /* one group holds the job: nothing crosses */
        for (int v = 0; v < w->nnodes; v++)
            outside[v] = label[v] != label[u];
        double cap_out, cap_in;
        group_cut(w, ++g, count, outside, &cap_out, &cap_in, hops);
        sum_out += cap_out;
        sum_in += cap_in;
        if (w->full) {
            double t;
            mpitopo__cart_set_bound(w->pat, MPITOPO_WEIGHT_BYTES, s, 0, &t);
            *crossing += t;
            if (cap_out > 0)
                *mc = fmax(*mc, t / cap_out);
            if (cap_in > 0)
                *mc = fmax(*mc, t / cap_in);
        }
    }
    if (!w->full && sum_out > 0 && sum_in > 0) {
        *crossing = w->nprocs * rate;
        *mc = *crossing / fmin(sum_out, sum_in);
    }
    mpitopo__free(outside);
    mpitopo__free(done);
    return MPITOPO_SUCCESS;
}

static int check_args(const mpitopo_network_t *network, const mpitopo_machine_t *machine,
                      const int *end_node, const mpitopo_pattern_t *pattern,
                      const mpitopo_network_bound_t *bound)
{
    if (!network || !machine || !pattern || !bound)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL",
                            !network ? "network" : !machine ? "machine" : !pattern ? "pattern" : "bound");
    if (pattern->nprocs > machine->nleaves)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "the pattern has %d processes but the machine only %d leaves",
                            pattern->nprocs, machine->nleaves);
    int nnodes = machine->node_level < 0 ? 1 : machine->nunits[machine->node_level];
    if (!end_node && nnodes > network->nnodes)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "the machine has %d nodes but the network only %d end nodes",
                            nnodes, network->nnodes);
    for (int u = 0; end_node && u < nnodes; u++)
        if (end_node[u] < 0 || end_node[u] >= network->nnodes)
            return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "end_node[%d] = %d is not in [0, %d)", u, end_node[u],
                                network->nnodes);
    return MPITOPO_SUCCESS;
}

/* Fill the bound once the scratch is ready: the node level, then the
 * network's group levels from the finest up. */
static int compute(nb_work_t *w, int64_t *label, mpitopo_network_bound_t *bound)
{
    int nlevels = 0, rc = MPITOPO_SUCCESS, hmax = 0;
    mpitopo_network_group_levels(w->net, &nlevels);
    int largest = 0;
    for (int u = 0; u < w->nnodes; u++)
        largest = w->size[u] > largest ? w->size[u] : largest;
    for (int l = -1; l < nlevels && rc == MPITOPO_SUCCESS; l++) {
        int level = nlevels - 1 - l; /* group levels come top-down */
        for (int u = 0; u < w->nnodes; u++) {
            label[u] = u;
            if (l >= 0)
                mpitopo_network_group(w->net, level, w->end[u], &label[u], NULL);
        }
        /* The largest group, in leaves, for the per-process rate. */
        int cap = largest;
        for (int u = 0; l >= 0 && u < w->nnodes; u++) {
            int s = 0;
            for (int v = 0; v < w->nnodes; v++)
                s += label[v] == label[u] ? w->size[v] : 0;
            cap = s > cap ? s : cap;
        }
        double rate = 0, mc = 0, crossing = 0;
        int hops = INT_MAX;
        if (!w->full)
            mpitopo__cart_set_bound(w->pat, MPITOPO_WEIGHT_BYTES, 0, cap, &rate);
        rc = level_bound(w, label, (int64_t)(l + 1) * (w->nnodes + 1), rate, &mc, &crossing, &hops);
        if (rc != MPITOPO_SUCCESS || hops == INT_MAX)
            continue;
        if (hops > hmax) {
            bound->hop_bytes += (hops - hmax) * crossing;
            hmax = hops;
        }
        if (l < 0)
            bound->injection = mc;
        else if (mc > bound->group) {
            bound->group = mc;
            bound->group_level = level;
        }
    }
    bound->max_congestion = fmax(bound->injection, bound->group);
    return rc;
}

int mpitopo_network_bound(const mpitopo_network_t *network, const mpitopo_machine_t *machine,
                          const int *end_node, const mpitopo_pattern_t *pattern,
                          mpitopo_network_bound_t *bound)
{
    int rc = check_args(network, machine, end_node, pattern, bound);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    memset(bound, 0, sizeof *bound);
    bound->group_level = -1;
    double probe;
    bound->found = mpitopo__cart_set_bound(pattern, MPITOPO_WEIGHT_BYTES, 1, 0, &probe);
    if (!bound->found)
        return MPITOPO_SUCCESS;
    nb_work_t w = {.net = network, .pat = pattern, .nprocs = pattern->nprocs,
                   .full = pattern->nprocs == machine->nleaves};
    w.nnodes = machine->node_level < 0 ? 1 : machine->nunits[machine->node_level];
    size_t n = (size_t)w.nnodes, nch = (size_t)(network->nchannels ? network->nchannels : 1);
    int *ends = mpitopo__malloc_array(n, sizeof *ends), *sizes = mpitopo__malloc_array(n, sizeof *sizes);
    int64_t *label = mpitopo__malloc_array(n, sizeof *label);
    w.member = mpitopo__malloc_array(n, sizeof *w.member);
    w.stamp = mpitopo__malloc_array(nch, sizeof *w.stamp);
    w.picked = mpitopo__malloc_array(nch, sizeof *w.picked);
    w.route = mpitopo__malloc_array((size_t)network->max_route + 1, sizeof *w.route);
    if (!ends || !sizes || !label || !w.member || !w.stamp || !w.picked || !w.route) {
        rc = MPITOPO_NOMEM("the network bound");
        goto cleanup;
    }
    for (size_t c = 0; c < nch; c++)
        w.stamp[c] = w.picked[c] = -1;
    for (int u = 0; u < w.nnodes; u++) {
        ends[u] = end_node ? end_node[u] : u;
        sizes[u] = machine->node_level < 0 ? machine->nleaves
                                           : machine->first[machine->node_level][u + 1] -
                                                 machine->first[machine->node_level][u];
    }
    w.end = ends;
    w.size = sizes;
    rc = compute(&w, label, bound);
    if (rc != MPITOPO_SUCCESS)
        rc = MPITOPO_FAIL_RESTATE(rc, __func__, "network of %d end nodes", network->nnodes);
cleanup:
    mpitopo__free(ends);
    mpitopo__free(sizes);
    mpitopo__free(label);
    mpitopo__free(w.member);
    mpitopo__free(w.stamp);
    mpitopo__free(w.picked);
    mpitopo__free(w.route);
    return rc;
}
