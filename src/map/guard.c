/*
 * Launch placements (block, rr, random:SEED) and the never-worse guard: a
 * mapper's result that does not cost strictly less than the launch
 * placement, under the weighted cost or (with a network) the hybrid metric,
 * is replaced by it. Every mapper that the MPI layer runs ends here.
 */
#include "machine/machine_internal.h"
#include "map/map_internal.h"

#include <string.h>

int mpitopo_placement(const mpitopo_machine_t *machine, int nprocs, const char *spec, int *leaf_of_proc)
{
    if (!machine || !spec || !leaf_of_proc)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "%s is NULL", !machine ? "machine" : !spec ? "spec" : "leaf_of_proc");
    if (nprocs < 0 || nprocs > machine->nleaves)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "nprocs = %d must be in [0, %d] (leaves of the machine)",
                            nprocs, machine->nleaves);
    if (strcmp(spec, "block") == 0)
        return mpitopo__place_block(machine, nprocs, leaf_of_proc);
    if (strcmp(spec, "rr") == 0)
        return mpitopo__place_rr(machine, nprocs, leaf_of_proc);
    uint64_t seed;
    if (strncmp(spec, "random:", 7) == 0 && mpitopo__parse_seed(spec + 7, &seed) == 0)
        return mpitopo__place_random(machine, nprocs, seed, leaf_of_proc);
    return MPITOPO_FAIL(MPITOPO_ERR_PARSE, "spec = \"%.64s\": expected block, rr or random:SEED (SEED an integer in "
                                           "[0, 2^63-1])", spec);
}

int mpitopo__keep_launch_unless_cheaper(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                       const mpitopo_map_options_t *options, int nprocs, int *leaf_of_proc, int *kept)
{
    int *launch = mpitopo__malloc_array((size_t)nprocs, sizeof *launch);
    if (!launch)
        return MPITOPO_NOMEM("the launch placement");
    if (options->launch)
        memcpy(launch, options->launch, (size_t)nprocs * sizeof *launch);
    else
        mpitopo__place_block(machine, nprocs, launch);
    double before = 0, after = 0;
    int rc = mpitopo_metrics_cost(machine, pattern, launch, options->weight, &before);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_metrics_cost(machine, pattern, leaf_of_proc, options->weight, &after);
    if (rc == MPITOPO_SUCCESS && !(after < before)) {
        memcpy(leaf_of_proc, launch, (size_t)nprocs * sizeof *launch);
        *kept = 1;
        mpitopo__log(2, "mapping cost %g does not beat the launch placement's %g: launch kept", after, before);
    }
    mpitopo__free(launch);
    return rc;
}

int mpitopo__keep_launch_unless_hybrid_lower(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                                             const mpitopo_map_options_t *options, const mpitopo__map_net_t *net,
                                             int nprocs, int *leaf_of_proc, int *kept)
{
    int *launch = mpitopo__malloc_array((size_t)nprocs, sizeof *launch);
    int *ends = mpitopo__malloc_array((size_t)nprocs, sizeof *ends);
    int rc = launch && ends ? MPITOPO_SUCCESS : MPITOPO_NOMEM("the launch placement");
    if (rc == MPITOPO_SUCCESS && options->launch)
        memcpy(launch, options->launch, (size_t)nprocs * sizeof *launch);
    else if (rc == MPITOPO_SUCCESS)
        rc = mpitopo__place_block(machine, nprocs, launch);
    mpitopo_network_metrics_t before, after;
    const int *maps[2] = {launch, leaf_of_proc};
    mpitopo_network_metrics_t *out[2] = {&before, &after};
    for (int i = 0; i < 2 && rc == MPITOPO_SUCCESS; i++) {
        for (int p = 0; p < nprocs; p++) {
            int u = mpitopo__node_of(machine, maps[i][p]);
            ends[p] = net->end_node ? net->end_node[u] : u;
        }
        rc = mpitopo_network_evaluate(net->network, pattern, ends, NULL, NULL, out[i]);
    }
    if (rc == MPITOPO_SUCCESS && !(after.hybrid < before.hybrid)) {
        memcpy(leaf_of_proc, launch, (size_t)nprocs * sizeof *launch);
        *kept = 1;
        mpitopo__log(2, "mapping hybrid metric %g does not beat the launch placement's %g: launch kept", after.hybrid,
                     before.hybrid);
    }
    mpitopo__free(launch);
    mpitopo__free(ends);
    return rc;
}
