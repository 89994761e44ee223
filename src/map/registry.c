/* The mapper table and the generic driver every mapper runs under: argument
 * checks, result validation (metrics/check.c) and the never-worse guard
 * (guard.c). */
#include "machine/machine_internal.h"
#include "map/map_internal.h"
#include "map/netmap_internal.h"
#include "map/ptram_internal.h"

#include <stdio.h>
#include <string.h>

/* takes_args: whether "name:args" is accepted; map_net, for the mappers
 * that read the network (then map is NULL). */
static const struct entry {
    mpitopo_mapper_t info;
    mpitopo__map_fn map;
    int takes_args;
    mpitopo__map_net_fn map_net;
} mappers[] = {
    {{"identity", "keep the launch placement (what MPI implementations do today)", 0}, mpitopo__map_identity, 0, NULL},
    {{"block", "process p on leaf p: nodes filled one after the other", 0}, mpitopo__map_block, 0, NULL},
    {{"rr", "round-robin over compute nodes, like --map-by node", 0}, mpitopo__map_rr, 0, NULL},
    {{"random", "uniformly random placement; random:SEED (default: the options' seed)", 0}, mpitopo__map_random, 1, NULL},
    {{"cart", "Cartesian grids: cheapest of box, strip and bisection tilings (and the graph mappers on small grids)", 1},
     mpitopo__map_cart, 0, NULL},
    {{"tree", "any pattern: best of top-down exact-capacity bisection + FM and bottom-up TreeMatch grouping; "
              "tree:topdown, tree:bottomup run one", 0}, mpitopo__map_tree, 1, NULL},
    {{"ptram", "needs a network (--network): topology- and routing-aware mapping (thesis ch. 3), parts per node "
               "placed greedily and swapped to lower hop-bytes + congestion, the lowest MC of several starts; "
               "ptram:w=1,1,1,1:k=8:rounds=10:part=auto|scotch|tree|none[:blind][:norm][:strict]", 0},
     NULL, 1, mpitopo__map_ptram},
    {{"greedy", "needs a network (--network): Hoefler & Snir's greedy (LibTopoMap), parts per node, the heaviest "
                "first onto the free node closest to its placed neighbours", 0}, NULL, 0, mpitopo__map_netgreedy},
    {{"rcm", "needs a network (--network): reverse Cuthill-McKee order of the parts onto that of the nodes "
             "(LibTopoMap)", 0}, NULL, 0, mpitopo__map_netrcm},
    {{"rb", "needs a network (--network): recursive bisection of the parts and the nodes together (LibTopoMap)", 0},
     NULL, 0, mpitopo__map_netrb},
    {{"rdmh", "collective-aware (thesis ch. 4): the launch placement reordered for recursive doubling "
              "(allgather, allreduce; power-of-two process counts); network-aware with --network", 0},
     NULL, 0, mpitopo__map_rdmh},
    {{"rmh", "collective-aware (thesis ch. 4): the launch placement reordered for a ring (ring allgather)", 0},
     NULL, 0, mpitopo__map_rmh},
    {{"bbmh", "collective-aware (thesis ch. 4): the launch placement reordered for a binomial broadcast from 0", 0},
     NULL, 0, mpitopo__map_bbmh},
    {{"bgmh", "collective-aware (thesis ch. 4): the launch placement reordered for a binomial gather to 0", 0},
     NULL, 0, mpitopo__map_bgmh},
#ifdef MPITOPO_HAVE_SCOTCH
    {{"scotchnet", "needs a network (--network): Scotch mapping of the parts onto the network's nodes as a target "
                   "architecture, then one part per node", 0}, NULL, 0, mpitopo__map_netscotch},
#endif
#ifdef MPITOPO_HAVE_SCOTCH
    {{"scotch", "Scotch static mapping onto the machine tree (tleaf), then exact-capacity repair", 0},
     mpitopo__map_scotch, 0, NULL},
#endif
#ifdef MPITOPO_HAVE_METIS
    {{"metis", "METIS k-way per level of the machine tree, then exact-capacity repair", 0}, mpitopo__map_metis, 0, NULL},
#endif
};
#define NMAPPERS ((int)(sizeof mappers / sizeof mappers[0]))

int mpitopo_mapper_count(void)
{
    return NMAPPERS;
}

const mpitopo_mapper_t *mpitopo_mapper_at(int index)
{
    return index >= 0 && index < NMAPPERS ? &mappers[index].info : NULL;
}

static int find_mapper(const char *name, size_t len, const struct entry **out)
{
    for (int i = 0; i < NMAPPERS; i++) {
        if (strlen(mappers[i].info.name) == len && memcmp(mappers[i].info.name, name, len) == 0) {
            *out = &mappers[i];
            return MPITOPO_SUCCESS;
        }
    }
    char known[256] = "";
    for (int i = 0; i < NMAPPERS; i++) {
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", mappers[i].info.name);
    }
    return MPITOPO_FAIL_AS(MPITOPO_ERR_NOT_FOUND, "mpitopo_mapper_find", "name = \"%.*s\": no such mapper (known: %s)",
                          (int)len, name, known);
}

int mpitopo_mapper_find(const char *name, const mpitopo_mapper_t **mapper)
{
    if (!name || !mapper)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !name ? "name" : "mapper");
    const struct entry *e;
    int rc = find_mapper(name, strlen(name), &e);
    if (rc == MPITOPO_SUCCESS)
        *mapper = &e->info;
    return rc;
}

static int check_map_args(const char *spec, const mpitopo_machine_t *machine,
                          const mpitopo_pattern_t *pattern, const int *leaf_of_proc, int *nprocs)
{
    if (!spec || !machine || !pattern || !leaf_of_proc)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map", "%s is NULL",
                              !spec ? "spec" : !machine ? "machine" : !pattern ? "pattern" : "leaf_of_proc");
    mpitopo_pattern_nprocs(pattern, nprocs);
    if (*nprocs > machine->nleaves)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map", "the pattern has %d processes but the machine only %d leaves",
                              *nprocs, machine->nleaves);
    return MPITOPO_SUCCESS;
}

static int map_impl(const char *spec, const mpitopo_machine_t *machine, const mpitopo__map_net_t *net,
                    const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                    int *leaf_of_proc, int *kept_launch)
{
    int nprocs = 0, kept = 0;
    int rc = check_map_args(spec, machine, pattern, leaf_of_proc, &nprocs);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    mpitopo_map_options_t defaults = MPITOPO_MAP_OPTIONS_INIT;
    if (!options)
        options = &defaults;
    if (options->launch && (rc = mpitopo_mapping_check(machine, nprocs, options->launch)) != MPITOPO_SUCCESS)
        return MPITOPO_FAIL_CONTEXT(rc, "mpitopo_map: options->launch is not a valid placement");
    if ((int)options->weight < MPITOPO_WEIGHT_BYTES || options->weight > MPITOPO_WEIGHT_UNIT)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map", "options->weight = %d is not a mpitopo_weight_t",
                              (int)options->weight);
    const char *colon = strchr(spec, ':');
    size_t namelen = colon ? (size_t)(colon - spec) : strlen(spec);
    const struct entry *mapper;
    if ((rc = find_mapper(spec, namelen, &mapper)) != MPITOPO_SUCCESS)
        return rc;
    if (colon && !mapper->takes_args)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map", "spec = \"%.64s\": mapper '%s' takes no argument", spec,
                              mapper->info.name);
    rc = mapper->map_net ? mapper->map_net(machine, pattern, colon ? colon + 1 : NULL, options, net, leaf_of_proc)
                         : mapper->map(machine, pattern, colon ? colon + 1 : NULL, options, leaf_of_proc);
    if (rc != MPITOPO_SUCCESS)
        return rc;
    rc = mpitopo_mapping_check(machine, nprocs, leaf_of_proc);
    if (rc == MPITOPO_ERR_NOMEM)
        return rc;
    if (rc != MPITOPO_SUCCESS)
        return MPITOPO_FAIL_CONTEXT(MPITOPO_ERR_INTERNAL, "mpitopo_map: mapper '%s' returned an invalid mapping",
                                      mapper->info.name);
    if (options->never_worse && mapper->map_net && net->network && nprocs > 0)
        rc = mpitopo__keep_launch_unless_hybrid_lower(machine, pattern, options, net, nprocs, leaf_of_proc,
                                                      &kept);
    else if (options->never_worse)
        rc = mpitopo__keep_launch_unless_cheaper(machine, pattern, options, nprocs, leaf_of_proc, &kept);
    if (kept_launch)
        *kept_launch = kept;
    return rc;
}

int mpitopo_map(const char *spec, const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                const mpitopo_map_options_t *options, int *leaf_of_proc, int *kept_launch)
{
    const mpitopo__map_net_t none = {NULL, NULL};
    return map_impl(spec, machine, &none, pattern, options, leaf_of_proc, kept_launch);
}

int mpitopo_map_network(const char *spec, const mpitopo_machine_t *machine, const mpitopo_network_t *network,
                        const int *end_node, const mpitopo_pattern_t *pattern, const mpitopo_map_options_t *options,
                        int *leaf_of_proc, int *kept_launch)
{
    if (!network)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "network is NULL");
    if (machine) {
        int node_level, nnodes = 1, nend;
        mpitopo_machine_node_level(machine, &node_level);
        if (node_level >= 0)
            mpitopo_machine_level(machine, node_level, NULL, NULL, &nnodes, NULL, NULL);
        mpitopo_network_size(network, &nend, NULL, NULL);
        if (!end_node && nnodes > nend)
            return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "the machine has %d nodes, the network only %d end nodes", nnodes,
                                nend);
        for (int u = 0; end_node && u < nnodes; u++)
            if (end_node[u] < 0 || end_node[u] >= nend)
                return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "end_node[%d] = %d is not in [0, %d)", u, end_node[u], nend);
    }
    const mpitopo__map_net_t net = {network, end_node};
    return map_impl(spec, machine, &net, pattern, options, leaf_of_proc, kept_launch);
}

/* A mapper's arguments are checked by the mapper itself, so the one way to
 * check a spec without a real problem is to run it on the smallest one:
 * one process, one leaf (under a one-node network, for the mappers that
 * need one). Callers that take a spec long before mapping (an info key)
 * use this to report a bad one as theirs. */
int mpitopo__map_check_spec(const char *spec)
{
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    mpitopo_network_t *net = NULL;
    int leaf, rc = mpitopo_machine_from_string("node:1 core:1", &m);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_pattern_from_string("cart:1", &p);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_network_from_string("mesh:1", &net);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_map_network(spec, m, net, NULL, p, NULL, &leaf, NULL);
    mpitopo_network_destroy(&net);
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
    return rc;
}
