/* Baseline placements: what resource managers do at launch (block,
 * round-robin over nodes, random) and the identity (keep the launch). */
#include "machine/machine_internal.h"
#include "map/map_internal.h"

#include <string.h>

int mpitopo__place_block(const mpitopo_machine_t *machine, int nprocs, int *leaf_of_proc)
{
    (void)machine;
    for (int p = 0; p < nprocs; p++)
        leaf_of_proc[p] = p;
    return MPITOPO_SUCCESS;
}

/*
 * Round-robin over compute nodes: round k gives the k-th leaf of every node
 * that still has one, in node order. With equal nodes, process p lands on
 * node p mod nnodes, as "--map-by node" launches do. Nodes that are full are
 * dropped from the active list, so the whole walk is O(nleaves + nnodes).
 */
int mpitopo__place_rr(const mpitopo_machine_t *machine, int nprocs, int *leaf_of_proc)
{
    int lvl = machine->node_level;
    if (lvl < 0)
        return mpitopo__place_block(machine, nprocs, leaf_of_proc);
    int nnodes = machine->nunits[lvl];
    const int *first = machine->first[lvl];
    int *active = mpitopo__malloc_array((size_t)nnodes, sizeof *active);
    if (!active)
        return MPITOPO_NOMEM("the active node list");
    for (int u = 0; u < nnodes; u++)
        active[u] = u;
    int nactive = nnodes, p = 0;
    for (int round = 0; p < nprocs && nactive > 0; round++) {
        int kept = 0;
        for (int i = 0; i < nactive && p < nprocs; i++) {
            int u = active[i];
            if (first[u] + round >= first[u + 1])
                continue;
            leaf_of_proc[p++] = first[u] + round;
            active[kept++] = u;
        }
        nactive = kept;
    }
    mpitopo__free(active);
    return MPITOPO_SUCCESS;
}

/* A uniformly random sequence of distinct leaves (partial Fisher-Yates). */
int mpitopo__place_random(const mpitopo_machine_t *machine, int nprocs, uint64_t seed,
                          int *leaf_of_proc)
{
    int n = machine->nleaves;
    int *leaves = mpitopo__malloc_array((size_t)n, sizeof *leaves);
    if (!leaves)
        return MPITOPO_NOMEM("the leaf shuffle");
    for (int i = 0; i < n; i++)
        leaves[i] = i;
    mpitopo__rng_t rng;
    mpitopo__rng_seed(&rng, seed);
    for (int i = 0; i < nprocs; i++) {
        int j = i + (int)mpitopo__rng_below(&rng, (uint64_t)(n - i));
        int t = leaves[i];
        leaves[i] = leaves[j];
        leaves[j] = t;
        leaf_of_proc[i] = leaves[i];
    }
    mpitopo__free(leaves);
    return MPITOPO_SUCCESS;
}

static int pattern_size(const mpitopo_pattern_t *pattern)
{
    int n = 0;
    mpitopo_pattern_nprocs(pattern, &n);
    return n;
}

int mpitopo__map_identity(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                          const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc)
{
    (void)args;
    int n = pattern_size(pattern);
    if (options && options->launch) {
        memcpy(leaf_of_proc, options->launch, (size_t)n * sizeof *leaf_of_proc);
        return MPITOPO_SUCCESS;
    }
    return mpitopo__place_block(machine, n, leaf_of_proc);
}

int mpitopo__map_block(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                       const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc)
{
    (void)args;
    (void)options;
    return mpitopo__place_block(machine, pattern_size(pattern), leaf_of_proc);
}

int mpitopo__map_rr(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                    const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc)
{
    (void)args;
    (void)options;
    return mpitopo__place_rr(machine, pattern_size(pattern), leaf_of_proc);
}

int mpitopo__parse_seed(const char *s, uint64_t *seed)
{
    long long v;
    if (mpitopo__parse_long(s, strlen(s), 0, INT64_MAX, &v) != 0)
        return -1;
    *seed = (uint64_t)v;
    return 0;
}

/* "random" takes the options' seed, "random:SEED" its own; "random:" with
 * nothing after the colon is an error, as in mpitopo_placement. */
int mpitopo__map_random(const mpitopo_machine_t *machine, const mpitopo_pattern_t *pattern,
                        const char *args, const mpitopo_map_options_t *options, int *leaf_of_proc)
{
    uint64_t seed = options ? options->seed : 1;
    if (args && mpitopo__parse_seed(args, &seed) != 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map", "random:SEED: SEED = \"%.64s\" is not an integer in "
                                               "[0, 2^63-1]", args);
    return mpitopo__place_random(machine, pattern_size(pattern), seed, leaf_of_proc);
}
