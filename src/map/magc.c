/*
 * MAGC (S. H. Mirsadeghi, PhD thesis, Queen's University 2017, section
 * 5.3.2, the three phases of Fig. 5.4; mapping algorithms 5.3.3):
 * processes to nodes, to cores, and GPUs to processes, from C_cpu and C_gpu.
 *
 *  phase 1  processes to nodes from C_cpu + C_gpu (strategy1/2: C_cpu), by
 *           ptram under a network, else by the tree mapper, whose node-level
 *           partition is kept (each node's set of processes);
 *  phase 2  per node, its processes to its cores by Alg. 5.1 over C_cpu on
 *           the tree of the machine's levels below "node" (a level of cost c
 *           has links of bandwidth 1/c; cost 0: never congested), or Scotch;
 *  phase 3  per node, its GPUs to its processes by Alg. 5.1 over C_gpu on
 *           the GPU tree, or Scotch; strategy2 and gpu-default use the
 *           default assignment (local rank mod GPUs per node).
 *
 * A GPU index is local to the process's node by construction. Guards:
 * phase 3 keeps a node's default assignment unless the mapper's one lowers
 * that node's GPU-tree maximum congestion (its processes' traffic among
 * themselves plus their inter-node traffic up to the node's root). Alg.
 * 5.1 runs as the thesis states it and in three variants (inter-node
 * traffic loaded on the way to the root, ties by added congestion; see
 * alg51.c); the one of least congestion by that measure is kept, the
 * thesis's on ties, then improved by a local search of process and
 * subtree exchanges (alg51.c's refine()), in phase 2 as in phase 3. A node
 * with more processes than GPUs gets the default assignment (GPUs shared,
 * said at verbose level 1). With options->never_worse, the result must be
 * no worse than gpu-default on both patterns (GPU-tree maximum congestion
 * of C_gpu, machine cost of C_cpu), else the launch placement with the
 * mapper's GPUs or gpu-default is kept (never_worse() below).
 */
#include "machine/gpu_internal.h"
#include "machine/machine_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* LAUNCH_GPUS: the launch placement (as gpu-default) with MAGC's phase 3,
 * a candidate of the never-worse guard. */
typedef enum how { MAGC, STRATEGY1, STRATEGY2, GPU_DEFAULT, LAUNCH_GPUS } how_t;

typedef struct ctx {
    const mpitopo_machine_t *m;
    const mpitopo_gpus_t *gpus;
    const mpitopo_pattern_t *cpu, *gpu;
    mpitopo_weight_t weight;
    int scotch;
    int nprocs, nnodes;
    int *node_of;    /* nprocs */
    int *node_start; /* nnodes + 1: the node's processes are procs[start..] */
    int *procs;      /* nprocs, grouped by node, ascending within a node */
    int *local;      /* nprocs: index of the process within its node */
} ctx_t;

/* CPU time of the calling thread: the mapping is sequential, and on a
 * shared machine this is less disturbed than the wall time. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double weight_of(mpitopo_weight_t w, double bytes, double msgs)
{
    return w == MPITOPO_WEIGHT_BYTES ? bytes : w == MPITOPO_WEIGHT_MESSAGES ? msgs : 1.0;
}

/* ---- phase 1 ----------------------------------------------------------- */

static int sum_patterns(const mpitopo_pattern_t *pa, const mpitopo_pattern_t *pb,
                        mpitopo_pattern_t **sum)
{
    int n;
    int64_t ea, eb;
    mpitopo_pattern_nprocs(pa, &n);
    mpitopo_pattern_nedges(pa, &ea);
    mpitopo_pattern_nedges(pb, &eb);
    size_t ne = (size_t)(ea + eb);
    int *src = mpitopo__malloc_array(ne ? ne : 1, sizeof *src);
    int *dst = mpitopo__malloc_array(ne ? ne : 1, sizeof *dst);
    double *by = mpitopo__malloc_array(ne ? ne : 1, sizeof *by);
    double *ms = mpitopo__malloc_array(ne ? ne : 1, sizeof *ms);
    int rc = src && dst && by && ms ? MPITOPO_SUCCESS : MPITOPO_NOMEM("C_cpu + C_gpu");
    size_t e = 0;
    for (int k = 0; k < 2 && !rc; k++)
        for (int p = 0; p < n; p++) {
            int deg;
            const int *d;
            const double *b, *m;
            mpitopo_pattern_out_edges(k ? pb : pa, p, &deg, &d, &b, &m);
            for (int i = 0; i < deg; i++, e++) {
                src[e] = p;
                dst[e] = d[i];
                by[e] = b[i];
                ms[e] = m[i];
            }
        }
    if (!rc)
        rc = mpitopo_pattern_create(n, (int64_t)e, src, dst, by, ms, sum);
    mpitopo__free(src);
    mpitopo__free(dst);
    mpitopo__free(by);
    mpitopo__free(ms);
    return rc;
}

/* Phase 1: leaf_of_proc from ptram (network) or tree; only each process's
 * node is kept from it. */
static int phase1(const ctx_t *c, how_t how, const mpitopo_network_t *net, const int *end_node,
                  const mpitopo_map_options_t *opt, int *leaf)
{
    mpitopo_pattern_t *sum = NULL;
    const mpitopo_pattern_t *p1 = c->cpu;
    int rc = MPITOPO_SUCCESS;
    if (how == MAGC) {
        rc = sum_patterns(c->cpu, c->gpu, &sum);
        p1 = sum;
    }
    if (!rc)
        rc = net ? mpitopo_map_network("ptram", c->m, net, end_node, p1, opt, leaf, NULL)
                 : mpitopo_map("tree", c->m, p1, opt, leaf, NULL);
    mpitopo_pattern_destroy(&sum);
    return rc;
}

/* Groups the processes by the node of their leaf. */
static int group_by_node(ctx_t *c, const int *leaf)
{
    int nn = c->nnodes;
    c->node_start = mpitopo__calloc((size_t)nn + 1, sizeof *c->node_start);
    if (!c->node_start)
        return MPITOPO_NOMEM("the nodes' processes");
    for (int p = 0; p < c->nprocs; p++) {
        c->node_of[p] = mpitopo__node_of(c->m, leaf[p]);
        c->node_start[c->node_of[p] + 1]++;
    }
    for (int v = 0; v < nn; v++)
        c->node_start[v + 1] += c->node_start[v];
    int *fill = mpitopo__malloc_array((size_t)nn + 1, sizeof *fill);
    if (!fill)
        return MPITOPO_NOMEM("the nodes' processes");
    memcpy(fill, c->node_start, ((size_t)nn + 1) * sizeof *fill);
    for (int p = 0; p < c->nprocs; p++) {
        int v = c->node_of[p];
        c->local[p] = fill[v] - c->node_start[v];
        c->procs[fill[v]++] = p;
    }
    mpitopo__free(fill);
    return MPITOPO_SUCCESS;
}

/* Each process's traffic with processes of other nodes, both directions,
 * by the mapping weight: one pass over the edges. */
static int offnode_volumes(const ctx_t *c, const mpitopo_pattern_t *pat, double **off_out)
{
    double *off = mpitopo__calloc((size_t)c->nprocs + 1, sizeof *off);
    if (!off)
        return MPITOPO_NOMEM("the inter-node volumes");
    for (int p = 0; p < c->nprocs; p++) {
        int deg;
        const int *dst;
        const double *by, *ms;
        mpitopo_pattern_out_edges(pat, p, &deg, &dst, &by, &ms);
        for (int e = 0; e < deg; e++)
            if (c->node_of[dst[e]] != c->node_of[p]) {
                double x = weight_of(c->weight, by[e], ms[e]);
                off[p] += x;
                off[dst[e]] += x;
            }
    }
    *off_out = off;
    return MPITOPO_SUCCESS;
}

/* Symmetric volumes among the k processes of node v (vol[i][j] = c_ij +
 * c_ji by the mapping weight), and off[i] = all_off of the node's i-th
 * process. */
static void node_volumes(const ctx_t *c, const mpitopo_pattern_t *pat, const double *all_off,
                         int v, double *vol, double *off)
{
    int first = c->node_start[v], k = c->node_start[v + 1] - first;
    memset(vol, 0, (size_t)k * (size_t)k * sizeof *vol);
    for (int i = 0; i < k; i++) {
        int p = c->procs[first + i], deg;
        const int *dst;
        const double *by, *ms;
        off[i] = all_off[p];
        mpitopo_pattern_out_edges(pat, p, &deg, &dst, &by, &ms);
        for (int e = 0; e < deg; e++) {
            int q = dst[e];
            if (q == p || c->node_of[q] != v)
                continue;
            double x = weight_of(c->weight, by[e], ms[e]);
            vol[(size_t)i * (size_t)k + (size_t)c->local[q]] += x;
            vol[(size_t)c->local[q] * (size_t)k + (size_t)i] += x;
        }
    }
}

/* ---- the trees of phases 2 and 3 ---------------------------------------- */

/* The tree of node v's leaves: one vertex per unit of every level below
 * "node", links of bandwidth 1/cost of their level. */
static int cpu_tree(const mpitopo_machine_t *m, int v, mpitopo__ptree_t *t, int *first_leaf)
{
    int nl = m->node_level, first = m->first[nl][v], count = m->first[nl][v + 1] - first;
    int nvert = 1;
    for (int l = nl + 1; l < m->nlevels; l++)
        nvert += m->unit[l][first + count - 1] - m->unit[l][first] + 1;
    int rc = mpitopo__ptree_alloc(t, nvert, count);
    if (rc)
        return rc;
    int base_up = 0, base = 1;
    for (int l = nl + 1; l < m->nlevels; l++) {
        int u0 = m->unit[l][first], nu = m->unit[l][first + count - 1] - u0 + 1;
        double bw = m->cost[l] > 0 ? 1.0 / m->cost[l] : INFINITY;
        for (int leaf = first; leaf < first + count; leaf++) {
            int x = base + m->unit[l][leaf] - u0;
            t->parent[x] = l == nl + 1 ? 0 : base_up + m->unit[l - 1][leaf] - m->unit[l - 1][first];
            t->bw[x] = bw;
            if (l == m->nlevels - 1)
                t->pe_vertex[leaf - first] = x;
        }
        base_up = base;
        base += nu;
    }
    if (nl == m->nlevels - 1) { /* one leaf per node: the node itself */
        mpitopo__ptree_free(t);
        return MPITOPO_FAIL(MPITOPO_ERR_INTERNAL, "no level below node");
    }
    *first_leaf = first;
    return mpitopo__ptree_finish(t);
}

/* A machine of the PE tree's levels for Scotch (tree-leaf target): PE i's
 * path of vertex labels, padded to the deepest PE; the cost of meeting at
 * depth j is 2 sum over deeper levels of 1/(the level's slowest link). */
static int tree_machine(const mpitopo__ptree_t *t, mpitopo_machine_t **m, int *leaf_of_pe)
{
    int depth = 0;
    for (int i = 0; i < t->npe; i++)
        depth = t->depth[t->pe_vertex[i]] > depth ? t->depth[t->pe_vertex[i]] : depth;
    if (depth > MPITOPO_MAX_LEVELS)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "a PE tree of %d levels for Scotch", depth);
    double inv[MPITOPO_MAX_LEVELS] = {0}, cost[MPITOPO_MAX_LEVELS];
    char names[MPITOPO_MAX_LEVELS][16];
    const char *np[MPITOPO_MAX_LEVELS];
    for (int v = 1; v < t->nvert; v++)
        if (1.0 / t->bw[v] > inv[t->depth[v] - 1])
            inv[t->depth[v] - 1] = 1.0 / t->bw[v];
    double below = 0;
    for (int j = depth - 1; j >= 0; j--) {
        below += 2 * inv[j];
        cost[j] = below;
        snprintf(names[j], sizeof names[j], "t%d", j);
        np[j] = names[j];
    }
    int *paths = mpitopo__calloc((size_t)t->npe * (size_t)depth, sizeof *paths);
    if (!paths)
        return MPITOPO_NOMEM("a PE tree's paths");
    /* Levels below a shallow PE keep label 0: a single child each. */
    for (int i = 0; i < t->npe; i++)
        for (int x = t->pe_vertex[i]; x > 0; x = t->parent[x])
            paths[(size_t)i * (size_t)depth + (size_t)(t->depth[x] - 1)] = x;
    int rc = mpitopo_machine_from_paths(depth, np, cost, t->npe, paths, m, leaf_of_pe);
    mpitopo__free(paths);
    return rc;
}

/* Scotch's placement of k processes (volumes vol) on the PEs of t. */
static int scotch_on_tree(const mpitopo__ptree_t *t, int k, const double *vol, uint64_t seed,
                          int *pe_of)
{
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *pat = NULL;
    int *leaf_of_pe = mpitopo__malloc_array((size_t)t->npe, sizeof *leaf_of_pe);
    int *pe_of_leaf = mpitopo__malloc_array((size_t)t->npe, sizeof *pe_of_leaf);
    int *src = mpitopo__malloc_array((size_t)k * (size_t)k + 1, sizeof *src);
    int *dst = mpitopo__malloc_array((size_t)k * (size_t)k + 1, sizeof *dst);
    double *w = mpitopo__malloc_array((size_t)k * (size_t)k + 1, sizeof *w);
    int *leaf = mpitopo__malloc_array((size_t)k + 1, sizeof *leaf);
    int rc = leaf_of_pe && pe_of_leaf && src && dst && w && leaf ? MPITOPO_SUCCESS
                                                                  : MPITOPO_NOMEM("Scotch's input");
    if (!rc)
        rc = tree_machine(t, &m, leaf_of_pe);
    int64_t ne = 0;
    for (int i = 0; i < k && !rc; i++)
        for (int j = i + 1; j < k; j++)
            if (vol[(size_t)i * (size_t)k + (size_t)j] > 0) {
                src[ne] = i;
                dst[ne] = j;
                w[ne++] = vol[(size_t)i * (size_t)k + (size_t)j];
            }
    if (!rc)
        rc = mpitopo_pattern_create(k, ne, src, dst, w, w, &pat);
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.seed = seed;
    if (!rc)
        rc = mpitopo_map("scotch", m, pat, &opt, leaf, NULL);
    if (!rc) {
        for (int i = 0; i < t->npe; i++)
            pe_of_leaf[leaf_of_pe[i]] = i;
        for (int i = 0; i < k; i++)
            pe_of[i] = pe_of_leaf[leaf[i]];
    }
    mpitopo_machine_destroy(&m);
    mpitopo_pattern_destroy(&pat);
    mpitopo__free(leaf_of_pe);
    mpitopo__free(pe_of_leaf);
    mpitopo__free(src);
    mpitopo__free(dst);
    mpitopo__free(w);
    mpitopo__free(leaf);
    return rc;
}

static int map_on_tree(const ctx_t *c, const mpitopo__ptree_t *t, int k, const double *vol,
                       const double *off, uint64_t seed, int *pe_of)
{
    if (k == 0)
        return MPITOPO_SUCCESS;
    return c->scotch ? scotch_on_tree(t, k, vol, seed, pe_of)
                     : mpitopo__alg51_best(t, k, vol, off, 1, pe_of, NULL);
}

/* ---- phases 2 and 3 ------------------------------------------------------ */

static int phase2(const ctx_t *c, const mpitopo_map_options_t *opt, int *leaf)
{
    const mpitopo_machine_t *m = c->m;
    if (m->node_level == m->nlevels - 1)
        return MPITOPO_SUCCESS; /* a node is one leaf: nothing to place */
    int kmax = 0;
    for (int v = 0; v < c->nnodes; v++)
        if (c->node_start[v + 1] - c->node_start[v] > kmax)
            kmax = c->node_start[v + 1] - c->node_start[v];
    double *vol = mpitopo__malloc_array((size_t)kmax * (size_t)kmax + 1, sizeof *vol);
    double *off = mpitopo__malloc_array((size_t)kmax + 1, sizeof *off);
    int *pe_of = mpitopo__malloc_array((size_t)kmax + 1, sizeof *pe_of);
    double *all_off = NULL;
    int rc = vol && off && pe_of ? offnode_volumes(c, c->cpu, &all_off)
                                 : MPITOPO_NOMEM("phase 2 work arrays");
    for (int v = 0; v < c->nnodes && !rc; v++) {
        int k = c->node_start[v + 1] - c->node_start[v], first = 0;
        if (k == 0)
            continue;
        mpitopo__ptree_t t;
        rc = cpu_tree(m, v, &t, &first);
        if (rc)
            break;
        node_volumes(c, c->cpu, all_off, v, vol, off);
        rc = map_on_tree(c, &t, k, vol, off, opt->seed, pe_of);
        for (int i = 0; i < k && !rc; i++)
            leaf[c->procs[c->node_start[v] + i]] = first + pe_of[i];
        mpitopo__ptree_free(&t);
    }
    mpitopo__free(vol);
    mpitopo__free(off);
    mpitopo__free(pe_of);
    mpitopo__free(all_off);
    return rc;
}

static int phase3(const ctx_t *c, how_t how, const mpitopo_map_options_t *opt, int *gpu)
{
    const mpitopo__ptree_t *t = &c->gpus->tree;
    int g = t->npe;
    for (int p = 0; p < c->nprocs; p++)
        gpu[p] = c->local[p] % g; /* the default assignment */
    if (how == STRATEGY2 || how == GPU_DEFAULT)
        return MPITOPO_SUCCESS;
    size_t nv = (size_t)t->nvert;
    double *vol = mpitopo__malloc_array((size_t)g * (size_t)g + 1, sizeof *vol);
    double *off = mpitopo__malloc_array((size_t)g + 1, sizeof *off);
    double *extra = mpitopo__malloc_array(nv, sizeof *extra);
    double *load = mpitopo__malloc_array(nv, sizeof *load);
    int *pe_of = mpitopo__malloc_array((size_t)g + 1, sizeof *pe_of);
    int *def = mpitopo__malloc_array((size_t)g + 1, sizeof *def);
    double *all_off = NULL;
    int rc = vol && off && extra && load && pe_of && def ? offnode_volumes(c, c->gpu, &all_off)
                                                         : MPITOPO_NOMEM("phase 3 work arrays");
    int shared = 0, kept = 0;
    for (int v = 0; v < c->nnodes && !rc; v++) {
        int k = c->node_start[v + 1] - c->node_start[v];
        if (k > g) {
            shared++;
            mpitopo__log(1, "magc: node %d holds %d processes for %d GPUs: default GPU assignment"
                            " (local rank mod %d, GPUs shared)", v, k, g, g);
            continue;
        }
        if (k == 0)
            continue;
        node_volumes(c, c->gpu, all_off, v, vol, off);
        rc = map_on_tree(c, t, k, vol, off, opt->seed, pe_of);
        if (rc)
            break;
        for (int i = 0; i < k; i++)
            def[i] = i;
        double mc_map = mpitopo__node_mc(t, k, vol, off, pe_of, extra, load);
        double mc_def = mpitopo__node_mc(t, k, vol, off, def, extra, load);
        if (!(mc_map < mc_def)) {
            kept++;
            continue;
        }
        for (int i = 0; i < k; i++)
            gpu[c->procs[c->node_start[v] + i]] = pe_of[i];
    }
    if (!rc && (shared || kept))
        mpitopo__log(2, "magc: phase 3 kept the default GPU assignment on %d node(s) (not lower"
                        " in congestion) and on %d node(s) with more processes than GPUs", kept,
                     shared);
    mpitopo__free(vol);
    mpitopo__free(off);
    mpitopo__free(extra);
    mpitopo__free(load);
    mpitopo__free(pe_of);
    mpitopo__free(def);
    mpitopo__free(all_off);
    return rc;
}

/* ---- the entry ----------------------------------------------------------- */

static int parse_spec(const char *spec, how_t *how, int *scotch)
{
    static const struct {
        const char *name;
        how_t how;
        int scotch;
    } specs[] = {{"magc", MAGC, 0},           {"magc:scotch", MAGC, 1},
                 {"strategy1", STRATEGY1, 0}, {"strategy2", STRATEGY2, 0},
                 {"gpu-default", GPU_DEFAULT, 0}};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        if (strcmp(spec, specs[i].name) == 0) {
            *how = specs[i].how;
            *scotch = specs[i].scotch;
            return MPITOPO_SUCCESS;
        }
    return MPITOPO_FAIL_AS(MPITOPO_ERR_NOT_FOUND, "mpitopo_map_gpu",
                           "spec = \"%s\": not a GPU mapping (magc, magc:scotch, strategy1,"
                           " strategy2, gpu-default)",
                           spec);
}

static int check_args(const char *spec, const mpitopo_machine_t *m, const mpitopo_gpus_t *gpus,
                      const mpitopo_pattern_t *cpu, const mpitopo_pattern_t *gpu,
                      const int *leaf, const int *gpu_of)
{
    const char *null = !spec ? "spec" : !m ? "machine" : !gpus ? "gpus" : !cpu ? "cpu_pattern"
                     : !gpu ? "gpu_pattern" : !leaf ? "leaf_of_proc" : !gpu_of ? "gpu_of_proc"
                                                                       : NULL;
    if (null)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map_gpu", "%s is NULL", null);
    int nc, ng;
    mpitopo_pattern_nprocs(cpu, &nc);
    mpitopo_pattern_nprocs(gpu, &ng);
    if (nc != ng)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map_gpu",
                               "cpu_pattern has %d processes and gpu_pattern %d: C_cpu and C_gpu"
                               " must be of one size",
                               nc, ng);
    if (m->node_level < 0)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map_gpu",
                               "the machine has no level named \"node\"");
    if (nc > m->nleaves)
        return MPITOPO_FAIL_AS(MPITOPO_ERR_ARG, "mpitopo_map_gpu",
                               "%d processes for %d leaves of the machine", nc, m->nleaves);
    return MPITOPO_SUCCESS;
}

static void ctx_free(ctx_t *c)
{
    mpitopo__free(c->node_of);
    mpitopo__free(c->node_start);
    mpitopo__free(c->procs);
    mpitopo__free(c->local);
}

/* One mapping; times[3] (may be NULL) receives each phase's seconds. */
static int run(ctx_t *c, how_t how, const mpitopo_network_t *net, const int *end_node,
               const mpitopo_map_options_t *opt, int *leaf, int *gpu, double *times)
{
    double t0 = now();
    int rc;
    int launch = how == GPU_DEFAULT || how == LAUNCH_GPUS;
    if (launch)
        rc = opt->launch ? mpitopo_mapping_check(c->m, c->nprocs, opt->launch)
                         : mpitopo_placement(c->m, c->nprocs, "block", leaf);
    else
        rc = phase1(c, how, net, end_node, opt, leaf);
    if (!rc && launch && opt->launch)
        memcpy(leaf, opt->launch, (size_t)c->nprocs * sizeof *leaf);
    if (!rc)
        rc = group_by_node(c, leaf);
    double t1 = now();
    if (!rc && !launch)
        rc = phase2(c, opt, leaf);
    double t2 = now();
    if (!rc)
        rc = phase3(c, how, opt, gpu);
    double t3 = now();
    if (times) {
        times[0] = t1 - t0;
        times[1] = t2 - t1;
        times[2] = t3 - t2;
    }
    return rc;
}

static int ctx_init(ctx_t *c, const mpitopo_machine_t *m, const mpitopo_gpus_t *gpus,
                    const mpitopo_pattern_t *cpu, const mpitopo_pattern_t *gpu,
                    const mpitopo_map_options_t *opt)
{
    memset(c, 0, sizeof *c);
    c->m = m;
    c->gpus = gpus;
    c->cpu = cpu;
    c->gpu = gpu;
    c->weight = opt->weight;
    mpitopo_pattern_nprocs(cpu, &c->nprocs);
    c->nnodes = m->nunits[m->node_level];
    size_t n = (size_t)c->nprocs + 1;
    c->node_of = mpitopo__malloc_array(n, sizeof *c->node_of);
    c->procs = mpitopo__malloc_array(n, sizeof *c->procs);
    c->local = mpitopo__malloc_array(n, sizeof *c->local);
    if (!c->node_of || !c->procs || !c->local) {
        ctx_free(c);
        return MPITOPO_NOMEM("the processes' nodes");
    }
    return MPITOPO_SUCCESS;
}

/* ---- never worse --------------------------------------------------------- */

typedef struct guard {
    const char *spec;
    how_t how;
    int scotch;
    const mpitopo_machine_t *m;
    const mpitopo_network_t *net;
    const int *end_node;
    const mpitopo_gpus_t *gpus;
    const mpitopo_pattern_t *cpu, *gpu;
    const mpitopo_map_options_t *opt;
} guard_t;

typedef struct cand {
    const char *what;
    int *leaf, *gpu;
    double gpu_mc, cpu_cost;
} cand_t;

/* a not above b, and a below b, up to the rounding of sums taken in
 * another order. */
static int not_above(double a, double b)
{
    return a <= b + 1e-12 * fabs(b);
}

static int below(double a, double b)
{
    return a < b - 1e-12 * fabs(b);
}

/* Measures x, after running how into it (a fresh context) when rerun. */
static int candidate(const guard_t *gd, int rerun, how_t how, cand_t *x)
{
    ctx_t c;
    int rc = MPITOPO_SUCCESS;
    if (rerun) {
        rc = ctx_init(&c, gd->m, gd->gpus, gd->cpu, gd->gpu, gd->opt);
        if (rc)
            return rc;
        c.scotch = gd->scotch;
        rc = run(&c, how, gd->net, gd->end_node, gd->opt, x->leaf, x->gpu, NULL);
        ctx_free(&c);
    }
    if (!rc)
        rc = mpitopo_gpu_metrics(gd->m, gd->gpus, gd->gpu, x->leaf, x->gpu, &x->gpu_mc, NULL);
    if (!rc)
        rc = mpitopo_metrics_cost(gd->m, gd->cpu, x->leaf, gd->opt->weight, &x->cpu_cost);
    return rc;
}

/* Neither x's GPU congestion nor its CPU cost is above def's. */
static int admissible(const cand_t *x, const cand_t *def)
{
    return not_above(x->gpu_mc, def->gpu_mc) && not_above(x->cpu_cost, def->cpu_cost);
}

/*
 * Never worse than the default (the launch, GPU = local rank mod g) on the
 * user's two patterns: the mapper's result is kept when neither its
 * GPU-tree maximum congestion (C_gpu) nor its machine cost of C_cpu is
 * above the default's. Otherwise the launch placement with the mapper's
 * phase 3 (its CPU cost is the default's, its GPU congestion at most the
 * default's since phase 3 keeps a node's default GPUs unless it lowers
 * that node's congestion: a GPU gain that needs no change of cores
 * survives) when it is lower than the default in GPU congestion, else the
 * default. The two costs are in different units and no time model weighs
 * them, so a trade (much less GPU congestion for a little more CPU cost)
 * is not taken: the guard promises "no worse", not "better on balance".
 * Comparing GPU congestion alone (as before) let the CPU cost double where
 * phases 1-2 moved C_cpu to costlier places.
 */
static int never_worse(const guard_t *gd, int *leaf, int *gpu)
{
    int n;
    mpitopo_pattern_nprocs(gd->cpu, &n);
    cand_t x[3] = {{"the mapping", leaf, gpu, 0, 0},
                   {"the launch placement with the mapper's GPUs", NULL, NULL, INFINITY, 0},
                   {"the launch placement and default GPUs", NULL, NULL, 0, 0}};
    int rc = MPITOPO_SUCCESS, pick = 0;
    for (int k = 1; k < 3; k++) {
        x[k].leaf = mpitopo__malloc_array((size_t)n + 1, sizeof *x[k].leaf);
        x[k].gpu = mpitopo__malloc_array((size_t)n + 1, sizeof *x[k].gpu);
        if (!x[k].leaf || !x[k].gpu)
            rc = MPITOPO_NOMEM("the never-worse comparison");
    }
    const cand_t *def = &x[2];
    if (!rc)
        rc = candidate(gd, 1, GPU_DEFAULT, &x[2]);
    if (!rc)
        rc = candidate(gd, 0, MAGC, &x[0]);
    if (!rc && !admissible(&x[0], def)) {
        /* strategy2's GPUs are the default's: no middle candidate. */
        if (gd->how != STRATEGY2)
            rc = candidate(gd, 1, LAUNCH_GPUS, &x[1]);
        pick = !rc && admissible(&x[1], def) && below(x[1].gpu_mc, def->gpu_mc) ? 1 : 2;
    }
    if (!rc && pick > 0) {
        mpitopo__log(1, "%s: GPU-tree congestion %g and CPU cost %g against the default's %g and %g:"
                        " %s kept (GPU congestion %g, CPU cost %g)", gd->spec, x[0].gpu_mc,
                     x[0].cpu_cost, def->gpu_mc, def->cpu_cost, x[pick].what, x[pick].gpu_mc,
                     x[pick].cpu_cost);
        memcpy(leaf, x[pick].leaf, (size_t)n * sizeof *leaf);
        memcpy(gpu, x[pick].gpu, (size_t)n * sizeof *gpu);
    }
    for (int k = 1; k < 3; k++) {
        mpitopo__free(x[k].leaf);
        mpitopo__free(x[k].gpu);
    }
    return rc;
}

int mpitopo__map_gpu_timed(const char *spec, const mpitopo_machine_t *machine,
                           const mpitopo_network_t *network, const int *end_node,
                           const mpitopo_gpus_t *gpus, const mpitopo_pattern_t *cpu_pattern,
                           const mpitopo_pattern_t *gpu_pattern,
                           const mpitopo_map_options_t *options, int *leaf_of_proc,
                           int *gpu_of_proc, double *times)
{
    int rc = check_args(spec, machine, gpus, cpu_pattern, gpu_pattern, leaf_of_proc, gpu_of_proc);
    how_t how = MAGC;
    int scotch = 0;
    if (!rc)
        rc = parse_spec(spec, &how, &scotch);
    const mpitopo_mapper_t *mp;
    if (!rc && scotch && mpitopo_mapper_find("scotch", &mp) != MPITOPO_SUCCESS)
        rc = MPITOPO_FAIL_AS(MPITOPO_ERR_UNSUPPORTED, "mpitopo_map_gpu",
                             "spec = \"%s\": this build has no Scotch", spec);
    if (rc)
        return rc;
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    if (options)
        opt = *options;
    ctx_t c;
    rc = ctx_init(&c, machine, gpus, cpu_pattern, gpu_pattern, &opt);
    if (rc)
        return rc;
    c.scotch = scotch;
    rc = run(&c, how, network, end_node, &opt, leaf_of_proc, gpu_of_proc, times);
    ctx_free(&c);
    if (rc || !opt.never_worse || how == GPU_DEFAULT)
        return rc;
    guard_t gd = {spec, how, scotch, machine, network, end_node, gpus, cpu_pattern, gpu_pattern, &opt};
    return never_worse(&gd, leaf_of_proc, gpu_of_proc);
}

int mpitopo_map_gpu(const char *spec, const mpitopo_machine_t *machine,
                    const mpitopo_network_t *network, const int *end_node,
                    const mpitopo_gpus_t *gpus, const mpitopo_pattern_t *cpu_pattern,
                    const mpitopo_pattern_t *gpu_pattern, const mpitopo_map_options_t *options,
                    int *leaf_of_proc, int *gpu_of_proc)
{
    return mpitopo__map_gpu_timed(spec, machine, network, end_node, gpus, cpu_pattern,
                                  gpu_pattern, options, leaf_of_proc, gpu_of_proc, NULL);
}
