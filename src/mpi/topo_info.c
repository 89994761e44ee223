/*
 * What the topology constructors (Cartesian and graph) share: the info keys
 * that choose the mapper, the meaning of the weights and whether to reorder
 * (the debug switch that compares arguments across processes is agree.c's).
 */
#include "map/map_internal.h"
#include "core/env.h"
#include "mpi/mpi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mpitopo__info_get(const char *func, MPI_Info info, const char *key, char *value, int len, int *found)
{
    int vlen = 0, rc;
    *found = 0;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    /* MPICH fails MPI_Info_get (through the error handler) on a value
     * longer than the buffer, where Open MPI truncates it: ask first. */
    if ((rc = PMPI_Info_get_valuelen(info, key, &vlen, found)) != MPI_SUCCESS || !*found)
        return rc;
    if (vlen >= len) {
        *found = 0;
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "info %s is %d characters long; at most %d are read", key,
                                 vlen, len - 1);
    }
    return PMPI_Info_get(info, key, len - 1, value, found);
}

/* "keep" or "move" (MPITOPO_RANK0, info mpitopo_rank0): 1 for move, 0 for
 * keep, -1 otherwise. */
static int rank0_word(const char *v)
{
    return strcmp(v, "move") == 0 ? 1 : strcmp(v, "keep") == 0 ? 0 : -1;
}

int mpitopo__topo_options_read(const char *func, MPI_Info info, mpitopo__topo_options_t *o)
{
    char v[256];
    int found, rc;
    const char *env = mpitopo__getenv(MPITOPO_ENV_RANK0);
    if (env && *env) {
        if (rank0_word(env) < 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, func, "MPITOPO_RANK0 = \"%.64s\": expected keep or move",
                                     env);
        o->rank0_move = rank0_word(env);
    }
    if ((rc = mpitopo__info_get(func, info, "mpitopo_rank0", v, sizeof v, &found)) != MPI_SUCCESS)
        return rc;
    if (found) {
        if (rank0_word(v) < 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, func, "info mpitopo_rank0 = \"%s\": expected keep or move",
                                     v);
        o->rank0_move = rank0_word(v);
    }
    if ((rc = mpitopo__info_get(func, info, "mpitopo_mapper", v, sizeof v, &found)) != MPI_SUCCESS)
        return rc;
    if (found) {
        if (strlen(v) >= sizeof o->mapper)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, func, "info mpitopo_mapper = \"%.64s...\": too long", v);
        if ((rc = mpitopo__map_check_spec(v)) == MPITOPO_ERR_NOMEM)
            return rc;
        if (rc != MPITOPO_SUCCESS)
            return MPITOPO_FAIL_RESTATE(MPITOPO_ERR_PARSE, func, "info mpitopo_mapper = \"%s\"", v);
        memcpy(o->mapper, v, strlen(v) + 1); /* fits: checked above */
        o->mapper_set = 1;
    }
    if ((rc = mpitopo__info_get(func, info, "mpitopo_weights", v, sizeof v, &found)) != MPI_SUCCESS)
        return rc;
    if (found && mpitopo_weight_from_string(v, &o->weight) != MPITOPO_SUCCESS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, func,
                                 "info mpitopo_weights = \"%s\": expected bytes, messages or unit", v);
    if ((rc = mpitopo__info_get(func, info, "mpitopo_reorder", v, sizeof v, &found)) != MPI_SUCCESS)
        return rc;
    if (found) {
        /* job, launch and off are the shim's words (MPITOPO_REORDER): job
         * lets the constructor reorder, the others keep the order. */
        if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcmp(v, "launch") == 0 ||
            strcmp(v, "off") == 0)
            o->reorder = 0;
        else if (strcmp(v, "true") != 0 && strcmp(v, "1") != 0 && strcmp(v, "job") != 0)
            return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, func,
                                     "info mpitopo_reorder = \"%s\": expected true, false, job, launch or off",
                                     v);
    }
    return MPITOPO_SUCCESS;
}

int mpitopo__map_on_comm(const mpitopo_network_t *net, const int *end_node, const char *spec,
                         const mpitopo_machine_t *m, const mpitopo_pattern_t *pattern,
                         const mpitopo_map_options_t *opt, int *mapped, int *kept)
{
    if (net)
        return mpitopo_map_network(spec, m, net, end_node, pattern, opt, mapped, kept);
    return mpitopo_map(spec, m, pattern, opt, mapped, kept);
}

int mpitopo__map_from_launch(const mpitopo_nodeinfo_t *ni, const char *spec, const mpitopo_machine_t *m,
                             const mpitopo_pattern_t *pattern, mpitopo_weight_t weight, const int *leaf_of_rank,
                             int *mapped, int *kept)
{
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.weight = weight;
    opt.launch = leaf_of_rank; /* position p on the process of rank p */
    opt.never_worse = 1;
    *kept = 0;
    const mpitopo_network_t *net;
    const int *end_node;
    mpitopo__nodeinfo_network(ni, &net, &end_node);
    return mpitopo__map_on_comm(net, end_node, spec, m, pattern, &opt, mapped, kept);
}

void mpitopo__rank0_report(const char *func, const mpitopo__rank0_t *r0)
{
    if (r0->costly)
        mpitopo__log(1,
                     "%s: rank 0 kept on the process that was rank 0, at a cost: %.6g -> %.6g (+%.1f %%); "
                     "MPITOPO_RANK0=move (or info mpitopo_rank0=move) lets it move",
                     func, r0->cost_mapped, r0->cost_kept,
                     r0->cost_mapped > 0 ? 100.0 * (r0->cost_kept - r0->cost_mapped) / r0->cost_mapped : 0.0);
    else if (r0->moved)
        mpitopo__log(2, "%s: rank 0 moved to another process (MPITOPO_RANK0=move)", func);
}

int mpitopo__position_of(const int *mapped, int n, int leaf)
{
    for (int p = 0; p < n; p++)
        if (mapped[p] == leaf)
            return p;
    return MPI_UNDEFINED;
}

const char *mpitopo__graph_mapper(const mpitopo_network_t *net, const mpitopo__topo_options_t *o)
{
    if (o->mapper_set)
        return o->mapper;
    return net ? "ptram" : o->mapper;
}

/* The network metrics of a placement (leaves of m), its processes on the
 * end nodes of their nodes. */
static int network_metrics(const mpitopo_network_t *net, const int *end_node, const mpitopo_machine_t *m,
                           const mpitopo_pattern_t *pattern, const int *leaves, mpitopo_network_metrics_t *out)
{
    int nprocs, node_level, rc;
    mpitopo_pattern_nprocs(pattern, &nprocs);
    mpitopo_machine_node_level(m, &node_level);
    int *ends = mpitopo__malloc_array((size_t)nprocs + 1, sizeof *ends);
    if (!ends)
        return MPITOPO_NOMEM("the end nodes of the processes");
    for (int p = 0; p < nprocs; p++) {
        int unit = 0;
        if (node_level >= 0)
            mpitopo_machine_unit_of(m, node_level, leaves[p], &unit);
        ends[p] = end_node[unit];
    }
    rc = mpitopo_network_evaluate(net, pattern, ends, NULL, NULL, out);
    mpitopo__free(ends);
    return rc;
}

void mpitopo__network_report(const mpitopo_nodeinfo_t *ni, const mpitopo_machine_t *m,
                             const mpitopo_pattern_t *pattern, const int *launch, const int *mapped, char *buf,
                             size_t size)
{
    const mpitopo_network_t *net;
    const int *end_node;
    mpitopo_network_metrics_t a, b;
    buf[0] = '\0';
    mpitopo__nodeinfo_network(ni, &net, &end_node);
    if (net && network_metrics(net, end_node, m, pattern, launch, &a) == MPITOPO_SUCCESS &&
        network_metrics(net, end_node, m, pattern, mapped, &b) == MPITOPO_SUCCESS)
        snprintf(buf, size, "; network: hop-bytes %.6g -> %.6g, MC %.6g -> %.6g, hybrid %.6g -> %.6g",
                 a.hop_bytes, b.hop_bytes, a.max_congestion, b.max_congestion, a.hybrid, b.hybrid);
}

long long mpitopo__stencil_offsets(int ndims, int moore, long long radius)
{
    if (ndims <= 0 || radius <= 0)
        return 0;
    if (!moore)
        return radius <= MPITOPO_MAX_STENCIL_OFFSETS / (2LL * ndims) ? 2LL * ndims * radius : -1;
    if (radius > MPITOPO_MAX_STENCIL_OFFSETS)
        return -1;
    long long n = 1;
    for (int d = 0; d < ndims; d++)
        if ((n *= 2 * radius + 1) > MPITOPO_MAX_STENCIL_OFFSETS + 1LL)
            return -1;
    return n - 1;
}

int mpitopo__stencil_check(const char *func, const char *name, const char *stencil, int ndims, int moore,
                           long long radius)
{
    if (mpitopo__stencil_offsets(ndims, moore, radius) >= 0)
        return MPITOPO_SUCCESS;
    return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s = \"%s\" on %d dimensions has more than %d offsets",
                             name, stencil, ndims, MPITOPO_MAX_STENCIL_OFFSETS);
}
