/*
 * Reordering quality of mpitopo_cart_create on the nodes the test expects
 * (mt_node_keys: MPITOPO_EMULATE, MPICH's fake nodes, else one host), for
 * grids chosen by the number of processes, all from MPI_COMM_WORLD with
 * reorder = 1 and a star stencil of radius 1:
 *  - when every node holds the same number of processes and the grid can be
 *    tiled by boxes of one node (mpitopo_cart_box_bound finds a box), the
 *    off-node partners per process and the off-node traffic are at most
 *    those of the best box: grid neighbours share a node as much as they can;
 *  - the never-worse guard: either the original order (world ranks 0..P-1,
 *    P = prod(dims), as reorder = 0 gives), or a weighted cost on the
 *    machine of MPI_COMM_WORLD strictly lower than that order's;
 *  - with fewer grid points than processes, unless the original order is
 *    kept, whole nodes stay in: no node is split when some nodes add up to
 *    prod(dims), at most one otherwise;
 *  - mpitopo_cart_map gives every process its rank in the grid;
 *  - mpitopo_comm_nodeinfo on the new communicator sees the expected nodes.
 */
#include "mpitest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A grid: dims like "8x8", periods one letter per dimension (p or o), and
 * the number of processes it is meant for (0: any, dims "N" = the size). */
struct grid {
    const char *dims;
    const char *periods;
    int for_size;
};

static const struct grid grids[] = {
    {"N", "p", 0},
    {"8x8", "pp", 64}, {"8x8", "oo", 64}, {"4x4x4", "ppp", 64}, {"2x4x8", "pop", 64},
    {"6x8", "pp", 64},
    {"8x2", "pp", 16}, {"2x4", "pp", 16}, {"3x4", "po", 16}, {"4x4", "oo", 16},
    {"4x4", "pp", 16}, {"2x2x4", "ppp", 16}, {"2x2x2x2", "pppp", 16},
    {"2x7", "pp", 14}, {"3x4", "pp", 14}, {"2x2x3", "ppo", 14},
    {"3x4", "pp", 13}, {"2x6", "op", 13}, {"4x3", "pp", 13},
    {"2x3", "pp", 7}, {"2x2", "pp", 7}, {"5", "o", 7},
    {"2x2", "pp", 4}, {"3", "p", 4},
    {"N", "o", 0},
};

static int parse_grid(const struct grid *g, int size, int *dims, int *periods)
{
    int n = 0;
    if (!strcmp(g->dims, "N")) {
        dims[n++] = size;
    } else {
        const char *p = g->dims;
        while (*p && n < MPITOPO_MAX_DIMS) {
            char *end;
            dims[n++] = (int)strtol(p, &end, 10);
            p = *end == 'x' ? end + 1 : end;
        }
    }
    for (int d = 0; d < n; d++)
        periods[d] = g->periods[d] == 'p';
    return n;
}

/* Whether some of the node sizes add up to exactly target. */
static int subset_sum(const int *sizes, int n, int target)
{
    char *can = calloc((size_t)target + 1, 1);
    can[0] = 1;
    for (int i = 0; i < n; i++)
        for (int t = target; t >= sizes[i]; t--)
            can[t] |= can[t - sizes[i]];
    int ok = can[target];
    free(can);
    return ok;
}

/* Distinct off-node partners per process (senders and receivers) and the
 * off-node bytes of the pattern, with process p on node node[p]. */
static void offnode(const mpitopo_pattern_t *pat, const int *node, double *partners_avg,
                    double *bytes)
{
    int n;
    mpitopo_pattern_nprocs(pat, &n);
    char *adj = calloc((size_t)n * (size_t)n, 1);
    *bytes = 0;
    for (int p = 0; p < n; p++) {
        int deg;
        const int *dst;
        const double *b;
        mpitopo_pattern_out_edges(pat, p, &deg, &dst, &b, NULL);
        for (int e = 0; e < deg; e++) {
            if (dst[e] == p || node[p] == node[dst[e]])
                continue;
            *bytes += b[e];
            adj[(size_t)p * n + dst[e]] = adj[(size_t)dst[e] * n + p] = 1;
        }
    }
    long total = 0;
    for (size_t i = 0; i < (size_t)n * n; i++)
        total += adj[i];
    *partners_avg = (double)total / n;
    free(adj);
}

static int at_most(double a, double b)
{
    return a <= b + 1e-9 * (1 + fabs(b));
}

struct world {
    int rank, size;
    int *node;                 /* expected node of every world rank */
    mpitopo_machine_t *machine; /* mpitopo_comm_machine of the world */
    int *leaf;                 /* its leaf of every world rank */
};

/* Quality of the grid of c, whose processes are the world ranks w[]. */
static void check_quality(const struct world *W, int ndims, const int *dims, const int *periods,
                          int prod, const int *w, const char *label)
{
    mpitopo_pattern_t *pat = NULL;
    if (!MT_CHECK_RC(mpitopo_pattern_cart(ndims, dims, periods, NULL, &pat)))
        return;
    int *node = malloc((size_t)prod * sizeof *node), *lf = malloc((size_t)prod * sizeof *lf);
    int ppn = 0, uniform = 1;
    for (int p = 0; p < prod; p++) {
        node[p] = W->node[w[p]];
        lf[p] = W->leaf[w[p]];
    }
    /* Node sizes in the world. */
    for (int a = 0; a < W->size; a++) {
        int k = 0;
        for (int b = 0; b < W->size; b++)
            k += W->node[b] == W->node[a];
        if (!ppn)
            ppn = k;
        uniform &= k == ppn;
    }
    double partners, bytes;
    offnode(pat, node, &partners, &bytes);
    mpitopo_box_bound_t bound;
    if (uniform && MT_CHECK_RC(mpitopo_cart_box_bound(pat, ppn, MPITOPO_WEIGHT_BYTES, &bound)) &&
        bound.found) {
        /* At least as good as tiling by the best box (which other layouts
         * sometimes beat, e.g. 3x4 in nodes of 4). */
        MT_CHECK(at_most(partners, bound.offnode_partners_avg),
                 "%s: off-node partners avg %.4f, best box (%d per node) gives %.4f", label,
                 partners, ppn, bound.offnode_partners_avg);
        MT_CHECK(at_most(bytes, bound.offnode_weight),
                 "%s: off-node bytes %.1f, best box (%d per node) gives %.1f", label, bytes, ppn,
                 bound.offnode_weight);
    }
    int identity = 1;
    for (int p = 0; p < prod; p++)
        identity &= w[p] == p;
    double cost = 0, id_cost = 0;
    if (!identity &&
        MT_CHECK_RC(mpitopo_metrics_cost(W->machine, pat, lf, MPITOPO_WEIGHT_BYTES, &cost)) &&
        MT_CHECK_RC(mpitopo_metrics_cost(W->machine, pat, W->leaf, MPITOPO_WEIGHT_BYTES,
                                         &id_cost)))
        MT_CHECK(cost < id_cost - 1e-12 * id_cost,
                 "%s: reordered with cost %g, the original order costs %g (the never-worse "
                 "guard keeps the order unless the cost drops)", label, cost, id_cost);
    free(node);
    free(lf);
    mpitopo_pattern_destroy(&pat);
}

/* With prod < size: which nodes are split between in and out. */
static void check_whole_nodes(const struct world *W, int prod, const int *in_of_world,
                              const char *label)
{
    int *sizes = calloc((size_t)W->size, sizeof *sizes), nnodes = 0, split = 0;
    int *seen = calloc((size_t)W->size, sizeof *seen);
    char kept[256] = "";
    size_t used = 0;
    for (int a = 0; a < W->size; a++) {
        if (seen[a])
            continue;
        int k = 0, nin = 0;
        for (int b = a; b < W->size; b++)
            if (W->node[b] == W->node[a]) {
                seen[b] = 1;
                k++;
                nin += in_of_world[b];
            }
        sizes[nnodes++] = k;
        split += nin > 0 && nin < k;
        if (used < sizeof kept)
            used += (size_t)snprintf(kept + used, sizeof kept - used, " %d/%d", nin, k);
    }
    int possible = subset_sum(sizes, nnodes, prod);
    MT_CHECK(split <= (possible ? 0 : 1),
             "%s: %d nodes split between the grid and the processes left out (%s); "
             "in grid/node size:%s", label, split,
             possible ? "whole nodes make prod(dims)" : "at most one may be", kept);
    free(sizes);
    free(seen);
}

/* nodeinfo on the new communicator agrees with the expected nodes. */
static void check_nodeinfo(MPI_Comm c, const struct world *W, const int *w, int prod,
                           const char *label)
{
    const mpitopo_nodeinfo_t *ni;
    int *got = malloc((size_t)prod * sizeof *got);
    if (MT_CHECK_RC(mpitopo_comm_nodeinfo(c, &ni))) {
        MPI_Allgather(&ni->node, 1, MPI_INT, got, 1, MPI_INT, c);
        int ok = 1;
        for (int a = 0; ok && a < prod; a++)
            for (int b = 0; ok && b < prod; b++)
                ok = MT_CHECK((got[a] == got[b]) == (W->node[w[a]] == W->node[w[b]]),
                              "%s: nodeinfo puts grid ranks %d and %d on nodes %d, %d", label, a,
                              b, got[a], got[b]);
    }
    free(got);
}

static void check_grid(const struct world *W, const struct grid *g, int with_nodeinfo)
{
    int dims[MPITOPO_MAX_DIMS], periods[MPITOPO_MAX_DIMS];
    int ndims = parse_grid(g, W->size, dims, periods), prod = 1;
    for (int d = 0; d < ndims; d++)
        prod *= dims[d];
    char label[96];
    snprintf(label, sizeof label, "grid %s %s", g->dims, g->periods);
    if (!strcmp(g->dims, "N"))
        snprintf(label, sizeof label, "grid %d %s", W->size, g->periods);

    MPI_Comm c = MPI_COMM_NULL;
    if (!MT_CHECK_RC(mpitopo_cart_create(MPI_COMM_WORLD, ndims, dims, periods, 1, &c)))
        return;
    int newrank = -2, myrank = MPI_UNDEFINED, in = c != MPI_COMM_NULL;
    if (in)
        MPI_Comm_rank(c, &myrank);
    if (MT_CHECK_RC(mpitopo_cart_map(MPI_COMM_WORLD, ndims, dims, periods, &newrank)))
        MT_CHECK(newrank == myrank, "%s: mpitopo_cart_map gives %d, grid rank is %d", label,
                 newrank, myrank);
    /* World rank of every grid rank (-1: left out), everywhere. */
    int *world_of = malloc((size_t)W->size * sizeof *world_of);
    int *in_of_world = malloc((size_t)W->size * sizeof *in_of_world);
    MPI_Allgather(&myrank, 1, MPI_INT, in_of_world, 1, MPI_INT, MPI_COMM_WORLD);
    int nin = 0;
    for (int r = 0; r < W->size; r++)
        world_of[r] = -1;
    for (int r = 0; r < W->size; r++)
        if (in_of_world[r] != MPI_UNDEFINED) {
            nin++;
            if (in_of_world[r] >= 0 && in_of_world[r] < prod)
                world_of[in_of_world[r]] = r;
            in_of_world[r] = 1;
        } else {
            in_of_world[r] = 0;
        }
    int complete = nin == prod;
    for (int p = 0; p < prod; p++)
        complete &= world_of[p] >= 0;
    if (MT_CHECK(complete, "%s: %d processes in the grid, ranks not 0..%d", label, nin,
                 prod - 1)) {
        if (in)
            mt_cart_check(c, ndims, dims, periods, label);
        check_quality(W, ndims, dims, periods, prod, world_of, label);
        int identity = 1;
        for (int p = 0; p < prod; p++)
            identity &= world_of[p] == p;
        if (prod < W->size && !identity)
            check_whole_nodes(W, prod, in_of_world, label);
        if (in && with_nodeinfo)
            check_nodeinfo(c, W, world_of, prod, label);
    }
    free(world_of);
    free(in_of_world);
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct world W = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &W.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &W.size);
    W.node = mt_node_keys();
    W.leaf = malloc((size_t)W.size * sizeof *W.leaf);
    /* MPICH busy-waits inside communicator creation: above 4 processes, the
     * first five grids keep a run under ten seconds. */
    int max_grids = mt_is_mpich() && W.size > 4 ? 5 : 100, n = 0;
    if (MT_CHECK_RC(mpitopo_comm_machine(MPI_COMM_WORLD, &W.machine, W.leaf)))
        for (size_t i = 0; i < sizeof grids / sizeof *grids && n < max_grids; i++)
            if (grids[i].for_size == 0 || grids[i].for_size == W.size)
                check_grid(&W, &grids[i], n++ == 0);
    mpitopo_machine_destroy(&W.machine);
    free(W.leaf);
    free(W.node);
    int rc = mt_finish("cart_nodes");
    MPI_Finalize();
    return rc;
}
