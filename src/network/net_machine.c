/* A machine whose levels above the nodes are a network's group levels. */
#include "network/network_internal.h"

#include <string.h>

#define NM_FN "mpitopo_network_machine"

int mpitopo_network_machine(const mpitopo_network_t *network, const mpitopo_machine_t *machine,
                            const int *end_node, mpitopo_machine_t **out, int *leaf_map)
{
    if (!out)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, NM_FN, "out is NULL");
    *out = NULL;
    if (!network || !machine)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, NM_FN, "%s is NULL",
                               !network ? "network" : "machine");
    int nlev, node_level, nleaves, ngroups, nnodes = 1, rc;
    mpitopo_machine_nlevels(machine, &nlev);
    mpitopo_machine_node_level(machine, &node_level);
    mpitopo_machine_nleaves(machine, &nleaves);
    mpitopo_network_group_levels(network, &ngroups);
    if (node_level >= 0)
        mpitopo_machine_level(machine, node_level, NULL, NULL, &nnodes, NULL, NULL);
    /* Without a node level, the whole machine is one node below a new one. */
    int inner = node_level >= 0 ? nlev - node_level : nlev + 1;
    int nl = ngroups + inner;
    if (nl > MPITOPO_MAX_LEVELS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, NM_FN,
                               "%d group levels + %d node levels exceed %d", ngroups, inner,
                               MPITOPO_MAX_LEVELS);
    if (nnodes > network->nnodes)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, NM_FN,
                               "the machine has %d nodes, the network only %d end nodes", nnodes,
                               network->nnodes);
    const char *names[MPITOPO_MAX_LEVELS];
    double costs[MPITOPO_MAX_LEVELS];
    int default_costs = 1;
    for (int l = 0; l < nlev; l++) {
        double c;
        mpitopo_machine_level(machine, l, NULL, &c, NULL, NULL, NULL);
        default_costs = default_costs && c == (double)(nlev - l);
    }
    for (int l = 0; l < inner; l++) {
        int ml = node_level >= 0 ? node_level + l : l - 1; /* -1: the new node level */
        if (ml < 0) {
            names[ngroups] = "node";
            costs[ngroups] = nlev + 1.0;
            continue;
        }
        mpitopo_machine_level(machine, ml, &names[ngroups + l], &costs[ngroups + l], NULL, NULL,
                              NULL);
    }
    for (int l = 0; l < ngroups; l++) {
        int64_t g;
        mpitopo_network_group(network, l, 0, &g, &names[l]);
        costs[l] = costs[ngroups] + (ngroups - l);
    }
    int *paths = mpitopo__malloc_array((size_t)nleaves * (size_t)nl, sizeof *paths);
    char *used = mpitopo__calloc((size_t)network->nnodes, 1);
    int *owner = mpitopo__malloc_array((size_t)network->nnodes, sizeof *owner);
    if (!paths || !used || !owner) {
        rc = MPITOPO_NOMEM("the paths of the leaves");
        goto cleanup;
    }
    for (int u = 0; end_node && u < nnodes; u++) {
        int e = end_node[u];
        if (e < 0 || e >= network->nnodes) {
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_RANGE, NM_FN, "end_node[%d] = %d is not in [0, %d)",
                                 u, e, network->nnodes);
            goto cleanup;
        }
        if (used[e]) {
            rc = MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, NM_FN,
                                 "end_node[%d] = end_node[%d] = %d: two nodes on one end node",
                                 owner[e], u, e);
            goto cleanup;
        }
        used[e] = 1;
        owner[e] = u;
    }
    for (int leaf = 0; leaf < nleaves; leaf++) {
        int *p = paths + (size_t)leaf * nl, u = 0;
        if (node_level >= 0)
            mpitopo_machine_unit_of(machine, node_level, leaf, &u);
        int e = end_node ? end_node[u] : u;
        for (int l = 0; l < ngroups; l++) {
            int64_t g;
            mpitopo_network_group(network, l, e, &g, NULL);
            p[l] = (int)g;
        }
        /* The node's label is its end node, so the order of the leaves
         * follows the network; the inner labels are the machine's units. */
        p[ngroups] = e;
        for (int l = 1; l < inner; l++) {
            int ml = node_level >= 0 ? node_level + l : l - 1;
            mpitopo_machine_unit_of(machine, ml, leaf, &p[ngroups + l]);
        }
    }
    rc = mpitopo_machine_from_paths(nl, names, default_costs ? NULL : costs, nleaves, paths, out,
                                    leaf_map);
cleanup:
    mpitopo__free(paths);
    mpitopo__free(used);
    mpitopo__free(owner);
    return rc;
}
