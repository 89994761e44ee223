/*
 * Mapper "rcm": reverse Cuthill-McKee (one of LibTopoMap's strategies,
 * Hoefler and Snir, ICS 2011; a comparator of the thesis, ch. 3). The part
 * graph of netmap_common.c and the network are both put in RCM order and
 * the i-th part goes to the first free node of its size from the i-th
 * place of the network's order on. The network's graph, over the nodes in
 * use, links every node to its nearest ones (those at its least route
 * cost): the links of a torus or mesh, the nodes under one switch of a
 * fat tree. Where that graph falls apart (a fat tree's switches), the
 * order goes on from the unvisited node nearest to the last one ordered, so
 * that consecutive nodes stay close. Deterministic.
 */
#include "map/netmap_internal.h"

#include <math.h>

/* u -- v when v is at u's least cost from u or u at v's from v. */
static int network_graph(const mpitopo__netmap_t *nm, int64_t **off, int **adj)
{
    int nn = nm->nn;
    double *dmin = mpitopo__malloc_array((size_t)nn, sizeof *dmin);
    *off = mpitopo__calloc((size_t)nn + 1, sizeof **off);
    *adj = NULL;
    if (!dmin || !*off) {
        mpitopo__free(dmin);
        return MPITOPO_NOMEM("the network's graph");
    }
    for (int u = 0; u < nn; u++) {
        dmin[u] = INFINITY;
        for (int v = 0; v < nn; v++)
            if (v != u && mpitopo__netmap_dist(nm, u, v) < dmin[u])
                dmin[u] = mpitopo__netmap_dist(nm, u, v);
    }
    /* two passes: count, then fill */
    for (int pass = 0; pass < 2; pass++) {
        for (int u = 0; u < nn; u++) {
            int64_t at = (*off)[u];
            for (int v = 0; v < nn; v++) {
                double d = mpitopo__netmap_dist(nm, u, v);
                if (v == u || (d > dmin[u] && d > dmin[v]))
                    continue;
                if (pass)
                    (*adj)[at++] = v;
                else
                    (*off)[u + 1]++;
            }
        }
        if (!pass) {
            for (int u = 0; u < nn; u++)
                (*off)[u + 1] += (*off)[u];
            *adj = mpitopo__malloc_array((size_t)((*off)[nn] > 0 ? (*off)[nn] : 1), sizeof **adj);
            if (!*adj) {
                mpitopo__free(dmin);
                return MPITOPO_NOMEM("the network's graph");
            }
        }
    }
    mpitopo__free(dmin);
    return MPITOPO_SUCCESS;
}

static int nearest_unvisited(void *ctx, int last, const unsigned char *visited)
{
    const mpitopo__netmap_t *nm = ctx;
    int best = -1;
    for (int v = 0; v < nm->nn; v++)
        if (!visited[v] && (best < 0 || mpitopo__netmap_dist(nm, last, v) < mpitopo__netmap_dist(nm, last, best)))
            best = v;
    return best;
}

static int rcm_place(const mpitopo__netmap_t *nm, int *node_of)
{
    int nn = nm->nn;
    int *porder = mpitopo__malloc_array((size_t)nn, sizeof *porder);
    int *norder = mpitopo__malloc_array((size_t)nn, sizeof *norder);
    unsigned char *taken = mpitopo__calloc((size_t)nn, 1);
    int64_t *off = NULL;
    int *adj = NULL;
    int rc = porder && norder && taken ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the orders");
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__netmap_rcm(nn, nm->goff, nm->gadj, NULL, NULL, porder);
    if (rc == MPITOPO_SUCCESS)
        rc = network_graph(nm, &off, &adj);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__netmap_rcm(nn, off, adj, nearest_unvisited, (void *)nm, norder);
    /* the i-th part onto the first free node of its size from place i on
     * (then from the start): sizes differ only on a last, partly filled node */
    for (int i = 0; rc == MPITOPO_SUCCESS && i < nn; i++) {
        int a = porder[i], n = -1;
        for (int j = 0; j < nn && n < 0; j++) {
            int c = norder[(i + j) % nn];
            if (!taken[c] && nm->cap[c] == nm->cap[a])
                n = c;
        }
        if (n < 0) {
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, "mpitopo_map", "rcm: no free node for part %d", a);
            break;
        }
        taken[n] = 1;
        node_of[a] = n;
    }
    mpitopo__free(porder);
    mpitopo__free(norder);
    mpitopo__free(taken);
    mpitopo__free(off);
    mpitopo__free(adj);
    return rc;
}

int mpitopo__map_netrcm(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern, const char *args,
                        const mpitopo_map_options_t *options, const mpitopo__map_net_t *net, int *leaf_of_proc)
{
    (void)args;
    return mpitopo__netmap_run("rcm", rcm_place, machine, pattern, options, net, leaf_of_proc);
}
