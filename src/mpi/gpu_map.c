/*
 * mpitopo_gpu_map (issue 20): the joint mapping of a GPU cluster (MAGC,
 * mpitopo_map_gpu) applied to a communicator: a reordered communicator and
 * the local GPU each process should select.
 *
 * Rank 0 computes and the others receive: the GPU description may come
 * from hwloc of rank 0's host (every node is assumed alike), which other
 * hosts might see differently, so only one process may read it; the
 * mapping itself is one mpitopo_map_gpu call, far cheaper than what the
 * others would save by computing it too. The cost is one allreduce (the
 * agreement on the arguments), the machine discovery on comm's first use,
 * one broadcast of rank 0's outcome, one scatter of (new rank, device)
 * pairs and the split.
 */
#include "core/env.h"
#include "machine/machine_internal.h"
#include "mpi/mpi_internal.h"
#include <mpitopo/gpu.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define GPU_DESC_MAX 4096

static const char *const func = "mpitopo_gpu_map";

/* What the caller asked for, the same on every process after agreement. */
typedef struct gpu_request {
    MPI_Comm comm;
    int rank, size;
    const mpitopo_pattern_t *cpu, *gpu;
    char desc[GPU_DESC_MAX]; /* info mpitopo_gpu, MPITOPO_GPU, or "" for hwloc */
    const char *desc_from;   /* "info mpitopo_gpu", "MPITOPO_GPU" or "hwloc" */
    char mapper[64];         /* info mpitopo_gpu_mapper, default "magc" */
    mpitopo_weight_t weight; /* info mpitopo_weights, default bytes */
} gpu_request_t;

/* Rank 0's outcome, broadcast. */
typedef struct outcome {
    int rc;     /* MPITOPO_SUCCESS or the error every process returns */
    int no_gpu; /* no GPU description and none found by hwloc: duplicate */
    char msg[MPITOPO__AGREE_MSG];
} outcome_t;

/* FNV-1a over the pattern's processes and out-edges (destinations, bytes,
 * messages), for the agreement. */
static uint32_t pattern_hash(const mpitopo_pattern_t *p)
{
    int n = 0;
    mpitopo_pattern_nprocs(p, &n);
    uint32_t h = mpitopo__hash(2166136261u, &n, sizeof n);
    for (int q = 0; q < n; q++) {
        int d = 0;
        const int *dst;
        const double *bytes, *msgs;
        mpitopo_pattern_out_edges(p, q, &d, &dst, &bytes, &msgs);
        h = mpitopo__hash(h, &d, sizeof d);
        if (d > 0) {
            h = mpitopo__hash(h, dst, (size_t)d * sizeof *dst);
            h = mpitopo__hash(h, bytes, (size_t)d * sizeof *bytes);
            h = mpitopo__hash(h, msgs, (size_t)d * sizeof *msgs);
        }
    }
    return h;
}

/* The local checks and the info keys; MPITOPO_SUCCESS or an error with its
 * message (to be agreed on). */
static int read_arguments(gpu_request_t *r, MPI_Info info, MPI_Comm *newcomm, int *device)
{
    int found = 0, rc;
    if (!newcomm || !device)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s = NULL", !newcomm ? "newcomm" : "device");
    if (!r->cpu || !r->gpu)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "%s = NULL", !r->cpu ? "cpu_pattern" : "gpu_pattern");
    int ncpu = 0, ngpu = 0;
    mpitopo_pattern_nprocs(r->cpu, &ncpu);
    mpitopo_pattern_nprocs(r->gpu, &ngpu);
    if (ncpu != r->size)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "cpu_pattern has %d processes but comm has %d", ncpu,
                               r->size);
    if (ngpu != ncpu)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func,
                               "gpu_pattern has %d processes but cpu_pattern has %d: both must describe the "
                               "processes of comm",
                               ngpu, ncpu);
    r->desc[0] = '\0';
    r->desc_from = "hwloc";
    if ((rc = mpitopo__info_get(func, info, "mpitopo_gpu", r->desc, sizeof r->desc, &found)) != MPI_SUCCESS)
        return rc;
    if (found) {
        r->desc_from = "info mpitopo_gpu";
    } else {
        const char *env = mpitopo__getenv(MPITOPO_ENV_GPU);
        if (env && *env) {
            if (strlen(env) >= sizeof r->desc)
                return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, func, "MPITOPO_GPU is %zu characters long; at most %d",
                                       strlen(env), GPU_DESC_MAX - 1);
            snprintf(r->desc, sizeof r->desc, "%s", env);
            r->desc_from = "MPITOPO_GPU";
        }
    }
    snprintf(r->mapper, sizeof r->mapper, "magc");
    if ((rc = mpitopo__info_get(func, info, "mpitopo_gpu_mapper", r->mapper, sizeof r->mapper, &found)) !=
        MPI_SUCCESS)
        return rc;
    if (!found)
        snprintf(r->mapper, sizeof r->mapper, "magc");
    char w[64];
    r->weight = MPITOPO_WEIGHT_BYTES;
    if ((rc = mpitopo__info_get(func, info, "mpitopo_weights", w, sizeof w, &found)) != MPI_SUCCESS)
        return rc;
    if (found && mpitopo_weight_from_string(w, &r->weight) != MPITOPO_SUCCESS)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, func, "info mpitopo_weights = \"%s\": expected bytes, "
                                                        "messages or unit", w);
    return MPITOPO_SUCCESS;
}

static int agree(gpu_request_t *r, int local)
{
    mpitopo__agree_t a = {.func = func, .comm = r->comm, .rank = r->rank};
    int ok = local == MPITOPO_SUCCESS;
    uint32_t hc = ok ? pattern_hash(r->cpu) : 0, hg = ok ? pattern_hash(r->gpu) : 0;
    mpitopo__agree_hash(&a, "cpu_pattern", &hc, sizeof hc);
    mpitopo__agree_hash(&a, "gpu_pattern", &hg, sizeof hg);
    mpitopo__agree_string(&a, "the GPU description (info mpitopo_gpu or MPITOPO_GPU)", ok ? r->desc : "");
    mpitopo__agree_string(&a, "info mpitopo_gpu_mapper", ok ? r->mapper : "");
    mpitopo__agree_arg(&a, "info mpitopo_weights", ok ? (int)r->weight : 0);
    return mpitopo__agree(&a, local);
}

/* Verbose level 1, rank 0: the default GPU assignment on the launch
 * against the result. */
static void report(const gpu_request_t *r, const mpitopo_machine_t *m, const mpitopo_network_t *net,
                   const int *end_node, const mpitopo_gpus_t *gpus, const mpitopo_map_options_t *opt,
                   const int *leaf, const int *gpu)
{
    int n = r->size;
    int *l0 = mpitopo__malloc_array((size_t)n + 1, sizeof *l0), *g0 = mpitopo__malloc_array((size_t)n + 1, sizeof *g0);
    mpitopo_metrics_t before, after;
    double mc0, hb0, mc1, hb1;
    int g = 0;
    mpitopo_gpus_count(gpus, &g);
    if (l0 && g0 &&
        mpitopo_map_gpu("gpu-default", m, net, end_node, gpus, r->cpu, r->gpu, opt, l0, g0) == MPITOPO_SUCCESS &&
        mpitopo_metrics_compute(m, r->cpu, l0, r->weight, &before) == MPITOPO_SUCCESS &&
        mpitopo_metrics_compute(m, r->cpu, leaf, r->weight, &after) == MPITOPO_SUCCESS &&
        mpitopo_gpu_metrics(m, gpus, r->gpu, l0, g0, &mc0, &hb0) == MPITOPO_SUCCESS &&
        mpitopo_gpu_metrics(m, gpus, r->gpu, leaf, gpu, &mc1, &hb1) == MPITOPO_SUCCESS)
        mpitopo__log(1,
                     "gpu_map %d ranks, %d GPUs per node (%s), %s: CPU cost %.3g -> %.3g, GPU-tree max "
                     "congestion %.6g -> %.6g, hop-bytes %.6g -> %.6g",
                     n, g, r->desc_from, r->mapper, before.cost, after.cost, mc0, mc1, hb0, hb1);
    mpitopo__free(l0);
    mpitopo__free(g0);
}

/* On rank 0: the GPUs, the mapping, and for every rank q of comm its new
 * rank and device in pairs[2q], pairs[2q + 1]. */
static int map_on_root(const gpu_request_t *r, const mpitopo_nodeinfo_t *ni, const mpitopo_machine_t *m,
                       const int *leaf_of_rank, int *pairs, outcome_t *out)
{
    mpitopo_gpus_t *gpus = NULL;
    int rc = r->desc[0] ? mpitopo_gpus_load(r->desc, &gpus) : mpitopo_gpus_from_hwloc(NULL, &gpus);
    if (rc != MPITOPO_SUCCESS && !r->desc[0]) {
        /* No description and hwloc finds no GPU (or cannot look): the
         * documented fallback. */
        mpitopo__log(1, "gpu_map: no GPU description (info mpitopo_gpu, MPITOPO_GPU) and hwloc of this host "
                        "gives none (%s): newcomm is a duplicate of comm, device -1",
                     mpitopo_last_error());
        out->no_gpu = 1;
        return MPITOPO_SUCCESS;
    }
    if (rc != MPITOPO_SUCCESS)
        return MPITOPO_FAIL_RESTATE(rc, func, "%s = \"%.200s\"", r->desc_from, r->desc);
    const mpitopo_network_t *net = NULL;
    const int *end_node = NULL;
    mpitopo__nodeinfo_network(ni, &net, &end_node);
    int n = r->size;
    int *leaf = mpitopo__malloc_array((size_t)n + 1, sizeof *leaf);
    int *gpu = mpitopo__malloc_array((size_t)n + 1, sizeof *gpu);
    int *proc_at = mpitopo__malloc_array((size_t)m->nleaves + 1, sizeof *proc_at);
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.weight = r->weight;
    opt.launch = leaf_of_rank;
    opt.never_worse = 1;
    if (!leaf || !gpu || !proc_at)
        rc = MPITOPO_NOMEM("the mapping");
    else if ((rc = mpitopo_map_gpu(r->mapper, m, net, end_node, gpus, r->cpu, r->gpu, &opt, leaf, gpu)) !=
             MPITOPO_SUCCESS)
        rc = MPITOPO_FAIL_RESTATE(rc, func, "mapping with %s", r->mapper);
    if (rc == MPITOPO_SUCCESS) {
        for (int l = 0; l < m->nleaves; l++)
            proc_at[l] = -1;
        for (int p = 0; p < n; p++)
            proc_at[leaf[p]] = p;
        /* The process on leaf_of_rank[q] takes the role that sits there. */
        for (int q = 0; q < n && rc == MPITOPO_SUCCESS; q++) {
            int p = proc_at[leaf_of_rank[q]];
            if (p < 0)
                rc = MPITOPO_FAIL_AS(MPITOPO_ERR_INTERNAL, func, "no process mapped on the leaf %d of rank %d",
                                     leaf_of_rank[q], q);
            else
                pairs[2 * q] = p, pairs[2 * q + 1] = gpu[p];
        }
    }
    if (rc == MPITOPO_SUCCESS && mpitopo__verbose() >= 1)
        report(r, m, net, end_node, gpus, &opt, leaf, gpu);
    mpitopo__free(leaf);
    mpitopo__free(gpu);
    mpitopo__free(proc_at);
    mpitopo_gpus_destroy(&gpus);
    return rc;
}

static int gpu_map_impl(gpu_request_t *r, MPI_Info info, MPI_Comm *newcomm, int *device)
{
    int rc;
    if ((rc = mpitopo__check_mpi(func)) != MPITOPO_SUCCESS ||
        (rc = mpitopo__check_intracomm(r->comm, func)) != MPITOPO_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_rank(r->comm, &r->rank)) != MPI_SUCCESS ||
        (rc = PMPI_Comm_size(r->comm, &r->size)) != MPI_SUCCESS)
        return rc;
    int local = read_arguments(r, info, newcomm, device);
    int *pairs = NULL;
    if (local == MPITOPO_SUCCESS && r->rank == 0 &&
        !(pairs = mpitopo__malloc_array(2 * (size_t)r->size, sizeof *pairs)))
        local = MPITOPO_NOMEM("the new ranks");
    if ((rc = agree(r, local)) != MPITOPO_SUCCESS) {
        mpitopo__free(pairs);
        return rc;
    }
    const mpitopo_nodeinfo_t *ni = NULL;
    const mpitopo_machine_t *m = NULL;
    const int *leaf_of_rank = NULL;
    if ((rc = mpitopo__comm_machine_cached(r->comm, &ni, &m, &leaf_of_rank)) != MPITOPO_SUCCESS) {
        mpitopo__free(pairs);
        return rc;
    }
    outcome_t out;
    memset(&out, 0, sizeof out);
    if (r->rank == 0) {
        out.rc = map_on_root(r, ni, m, leaf_of_rank, pairs, &out);
        if (out.rc != MPITOPO_SUCCESS)
            snprintf(out.msg, sizeof out.msg, "%s", mpitopo_last_error());
    }
    rc = PMPI_Bcast(&out, (int)sizeof out, MPI_BYTE, 0, r->comm);
    int mine[2] = {r->rank, -1};
    if (rc == MPI_SUCCESS && out.rc == MPITOPO_SUCCESS && !out.no_gpu)
        rc = PMPI_Scatter(pairs, 2, MPI_INT, mine, 2, MPI_INT, 0, r->comm);
    mpitopo__free(pairs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (out.rc != MPITOPO_SUCCESS)
        return r->rank == 0 ? out.rc : MPITOPO_FAIL_MSG(out.rc, "%s", out.msg);
    rc = out.no_gpu ? PMPI_Comm_dup(r->comm, newcomm) : PMPI_Comm_split(r->comm, 0, mine[0], newcomm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (info != MPI_INFO_NULL && (rc = mpitopo__comm_info_set(*newcomm, info, func)) != MPITOPO_SUCCESS) {
        PMPI_Comm_free(newcomm);
        return rc;
    }
    *device = mine[1];
    return MPITOPO_SUCCESS;
}

int mpitopo_gpu_map(MPI_Comm comm, const mpitopo_pattern_t *cpu_pattern, const mpitopo_pattern_t *gpu_pattern,
                    MPI_Info info, MPI_Comm *newcomm, int *device)
{
    gpu_request_t r = {.comm = comm, .cpu = cpu_pattern, .gpu = gpu_pattern};
    return mpitopo__mpi_result(func, gpu_map_impl(&r, info, newcomm, device));
}
