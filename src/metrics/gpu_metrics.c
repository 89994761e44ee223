/* Metrics of a GPU assignment over the nodes' GPU trees: maximum link
 * congestion (load / bandwidth) and hop-bytes. The CPU side of the same
 * mapping is mpitopo_metrics_compute()'s. */
#include "machine/gpu_internal.h"
#include "machine/machine_internal.h"

#include <string.h>

#define FAIL_GM(code, ...) MPITOPO_FAIL_AS((code), "mpitopo_gpu_metrics", __VA_ARGS__)

static int check(const mpitopo_machine_t *m, const mpitopo_gpus_t *gpus,
                 const mpitopo_pattern_t *pat, const int *leaf, const int *gpu, int *nprocs)
{
    const char *null = !m ? "machine" : !gpus ? "gpus" : !pat ? "gpu_pattern" : !leaf
                                                                    ? "leaf_of_proc"
                                                                : !gpu ? "gpu_of_proc" : NULL;
    if (null)
        return FAIL_GM(MPITOPO_ERR_ARG, "%s is NULL", null);
    if (m->node_level < 0)
        return FAIL_GM(MPITOPO_ERR_ARG, "the machine has no level named \"node\"");
    mpitopo_pattern_nprocs(pat, nprocs);
    for (int p = 0; p < *nprocs; p++) {
        if (leaf[p] < 0 || leaf[p] >= m->nleaves)
            return FAIL_GM(MPITOPO_ERR_RANGE, "leaf_of_proc[%d] = %d is outside [0, %d)", p,
                           leaf[p], m->nleaves);
        if (gpu[p] < 0 || gpu[p] >= gpus->tree.npe)
            return FAIL_GM(MPITOPO_ERR_RANGE, "gpu_of_proc[%d] = %d is outside [0, %d)", p,
                           gpu[p], gpus->tree.npe);
    }
    return MPITOPO_SUCCESS;
}

int mpitopo_gpu_metrics(const mpitopo_machine_t *machine, const mpitopo_gpus_t *gpus,
                        const mpitopo_pattern_t *gpu_pattern, const int *leaf_of_proc,
                        const int *gpu_of_proc, double *max_congestion, double *hop_bytes)
{
    int n = 0;
    int rc = check(machine, gpus, gpu_pattern, leaf_of_proc, gpu_of_proc, &n);
    if (rc)
        return rc;
    const mpitopo__ptree_t *t = &gpus->tree;
    size_t nv = (size_t)t->nvert, nn = (size_t)machine->nunits[machine->node_level];
    double *load = mpitopo__calloc(nn * nv, sizeof *load);
    if (!load)
        return MPITOPO_NOMEM("the GPU-tree link loads");
    double hb = 0;
    for (int p = 0; p < n; p++) {
        int deg;
        const int *dst;
        const double *by, *ms;
        mpitopo_pattern_out_edges(gpu_pattern, p, &deg, &dst, &by, &ms);
        size_t np = (size_t)mpitopo__node_of(machine, leaf_of_proc[p]);
        for (int e = 0; e < deg; e++) {
            int q = dst[e];
            double x = by[e];
            size_t nq = (size_t)mpitopo__node_of(machine, leaf_of_proc[q]);
            int a = t->pe_vertex[gpu_of_proc[p]], b = t->pe_vertex[gpu_of_proc[q]];
            if (q == p || x <= 0)
                continue;
            int hops = 0;
            if (np == nq) {
                while (a != b) {
                    int *v = t->depth[a] >= t->depth[b] ? &a : &b;
                    load[np * nv + (size_t)*v] += x;
                    *v = t->parent[*v];
                    hops++;
                }
            } else {
                for (; a > 0; a = t->parent[a], hops++)
                    load[np * nv + (size_t)a] += x;
                for (; b > 0; b = t->parent[b], hops++)
                    load[nq * nv + (size_t)b] += x;
                hops++; /* the network between the nodes */
            }
            hb += x * hops;
        }
    }
    double mc = 0;
    for (size_t u = 0; u < nn; u++)
        for (size_t v = 1; v < nv; v++)
            if (load[u * nv + v] / t->bw[v] > mc)
                mc = load[u * nv + v] / t->bw[v];
    mpitopo__free(load);
    if (max_congestion)
        *max_congestion = mc;
    if (hop_bytes)
        *hop_bytes = hb;
    return MPITOPO_SUCCESS;
}
