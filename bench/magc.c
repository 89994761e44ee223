/*
 * magc: GPU-cluster mapping quality and time (issue 20; thesis ch. 5).
 *
 * For each cluster (a machine of the job's slots, one core per GPU, and
 * the GPU tree of every node) and each of the nine CPU-pattern x
 * GPU-pattern combinations of 2-D, 3-D and COL (plain, then weighted: 3x
 * larger messages along the first dimension of the 2-D and 3-D stencils),
 * 64 processes, 1 MiB messages: every strategy (gpu-default, strategy1,
 * strategy2, magc:scotch when built with Scotch, magc) from the block
 * launch, with
 *   GPU MC  max over GPU-tree links of bytes / bandwidth, in ms
 *           (mpitopo_gpu_metrics());
 *   GPU HB  GPU hop-bytes, MiB x links;
 *   CPU off the CPU traffic leaving the busiest node, MiB, and
 *   CPU cost  the machine cost of C_cpu (both mpitopo_metrics_compute());
 *   bound   a lower bound on the GPU MC of every mapping (mpitopo__gpu_bound(),
 *           src/metrics/gpu_bound.c; '*' when some level's term is not the exact
 *           minimum), in ms;
 *   time    per phase (nodes, cores, GPUs), ms, the smallest of --reps.
 * A row "magc+nw" is magc with options.never_worse (as mpitopo_gpu_map()
 * runs it: no worse than the default on GPU MC and on CPU cost). After each
 * cluster a summary: default, magc, magc+nw and the bound per case.
 * Then the time of magc at --big-nodes x 16 GPUs (16 processes per node,
 * 3-D 7-point stencils on both sides).
 *
 *   magc [--dgx2 FILE] [--reps N] [--big-nodes N] [--only A|B|DGX2]
 */
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include "machine/gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef MAGC_DGX2
#define MAGC_DGX2 "tests/data/hwloc/nvidiaDGX2.xml"
#endif

#define CHECK(call)                                                                           \
    do {                                                                                      \
        int rc_ = (call);                                                                     \
        if (rc_) {                                                                            \
            fprintf(stderr, "%s: %s\n", #call, mpitopo_last_error());                       \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

typedef struct cluster {
    const char *name, *machine, *gpus;
} cluster_t;

static const char *const pat_name[] = {"2D", "3D", "COL"};

static mpitopo_pattern_t *pattern(int kind, int weighted, int big)
{
    char d[128];
    const char *b = ":bytes=1048576";
    if (kind == 0)
        snprintf(d, sizeof d, "cart:%s%s%s", big ? "64x64" : "8x8", weighted ? ":weights=3,1" : "",
                 b);
    else if (kind == 1)
        snprintf(d, sizeof d, "cart:%s%s%s", big ? "16x16x16" : "4x4x4",
                 weighted ? ":weights=3,1,1" : "", b);
    else
        snprintf(d, sizeof d, "alltoall:%s:1,0,0%s", big ? "16x16x16" : "4x4x4", b);
    mpitopo_pattern_t *p = NULL;
    CHECK(mpitopo_pattern_from_string(d, &p));
    return p;
}

static double ms(double s)
{
    return 1e3 * s;
}

typedef struct result {
    double mc, hb, cpu_off, cpu_cost, t[3];
} result_t;

static result_t run(const char *spec, const mpitopo_machine_t *m, const mpitopo_gpus_t *g,
                    const mpitopo_pattern_t *cpu, const mpitopo_pattern_t *gpu, int reps,
                    const mpitopo_map_options_t *opt)
{
    int n;
    mpitopo_pattern_nprocs(cpu, &n);
    int *leaf = malloc((size_t)n * sizeof *leaf), *dev = malloc((size_t)n * sizeof *dev);
    result_t r = {0};
    for (int k = 0; k < reps; k++) {
        double t[3];
        CHECK(mpitopo__map_gpu_timed(spec, m, NULL, NULL, g, cpu, gpu, opt, leaf, dev, t));
        for (int i = 0; i < 3; i++)
            if (k == 0 || t[i] < r.t[i])
                r.t[i] = t[i];
    }
    CHECK(mpitopo_gpu_metrics(m, g, gpu, leaf, dev, &r.mc, &r.hb));
    r.mc /= 1e6; /* bytes / (GB/s) -> ms */
    r.hb /= 1048576.0;
    mpitopo_metrics_t mt;
    CHECK(mpitopo_metrics_compute(m, cpu, leaf, MPITOPO_WEIGHT_BYTES, &mt));
    int nl;
    CHECK(mpitopo_machine_node_level(m, &nl));
    r.cpu_off = mt.levels[nl].max_weight_per_unit / 1048576.0;
    r.cpu_cost = mt.cost / 1048576.0;
    free(leaf);
    free(dev);
    return r;
}

/* CPU time of this thread, s. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct summary {
    char name[16];
    double def, magc, nw, bound, cost_def, cost_magc, cost_nw, bound_ms;
    int exact;
} summary_t;

static void one_cluster(const cluster_t *c, int reps)
{
    mpitopo_machine_t *m = NULL;
    mpitopo_gpus_t *g = NULL;
    CHECK(mpitopo_machine_from_string(c->machine, &m));
    CHECK(mpitopo_gpus_load(c->gpus, &g));
    char desc[4096];
    mpitopo_gpus_describe(g, desc, sizeof desc);
    const char *specs[6];
    int ns = 0;
    specs[ns++] = "gpu-default";
    specs[ns++] = "strategy1";
    specs[ns++] = "strategy2";
    const mpitopo_mapper_t *mp;
    if (mpitopo_mapper_find("scotch", &mp) == MPITOPO_SUCCESS)
        specs[ns++] = "magc:scotch";
    specs[ns++] = "magc";
    specs[ns++] = "magc+nw";
    mpitopo_map_options_t nw = MPITOPO_MAP_OPTIONS_INIT;
    nw.never_worse = 1;
    summary_t sum[17];
    int nsum = 0;
    printf("\n### %s: machine `%s`, GPUs `%s`\n\n", c->name, c->machine, c->gpus);
    printf("GPU tree: `%s`\n\n", desc);
    printf("| CPU-GPU | mapper | GPU MC ms | bound ms | GPU HB MiB | CPU off-node max MiB |"
           " CPU cost | t1 ms | t2 ms | t3 ms |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (int w = 0; w < 2; w++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                if (w && a == 2 && b == 2)
                    continue; /* COL has no weighted variant */
                mpitopo_pattern_t *cpu = pattern(a, w, 0), *gpu = pattern(b, w, 0);
                summary_t *su = &sum[nsum++];
                snprintf(su->name, sizeof su->name, "%s%s-%s%s", pat_name[a], w && a < 2 ? "W" : "",
                         pat_name[b], w && b < 2 ? "W" : "");
                mpitopo__gpu_bound_t bd;
                double t0 = cpu_now();
                CHECK(mpitopo__gpu_bound(m, g, gpu, 0, &bd));
                su->bound_ms = ms(cpu_now() - t0);
                su->bound = bd.mc / 1e6;
                su->exact = bd.exact && bd.scope == MPITOPO__BOUND_TREE;
                for (int s = 0; s < ns; s++) {
                    int guarded = !strcmp(specs[s], "magc+nw");
                    result_t r = run(guarded ? "magc" : specs[s], m, g, cpu, gpu, reps,
                                     guarded ? &nw : NULL);
                    printf("| %s | %s | %.3f | %.3f%s | %.0f | %.0f | %.0f | %.3f | %.3f | %.3f |\n",
                           su->name, specs[s], r.mc, su->bound, su->exact ? "" : "*", r.hb,
                           r.cpu_off, r.cpu_cost, ms(r.t[0]), ms(r.t[1]), ms(r.t[2]));
                    if (s == 0)
                        su->def = r.mc, su->cost_def = r.cpu_cost;
                    else if (!strcmp(specs[s], "magc"))
                        su->magc = r.mc, su->cost_magc = r.cpu_cost;
                    else if (guarded)
                        su->nw = r.mc, su->cost_nw = r.cpu_cost;
                }
                mpitopo_pattern_destroy(&cpu);
                mpitopo_pattern_destroy(&gpu);
            }
    printf("\n#### %s in short: GPU MC (ms) of default, magc, magc+nw and the lower bound\n\n",
           c->name);
    printf("| CPU-GPU | default | magc | magc+nw | bound | magc optimal | CPU cost default → magc"
           " → magc+nw | bound ms |\n|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < nsum; i++) {
        const summary_t *su = &sum[i];
        int opt = su->magc <= su->bound * (1 + 1e-9);
        printf("| %s | %.3f | %.3f | %.3f | %.3f%s | %s | %.0f → %.0f → %.0f | %.2f |\n", su->name,
               su->def, su->magc, su->nw, su->bound, su->exact ? "" : "*", opt ? "yes" : "",
               su->cost_def, su->cost_magc, su->cost_nw, su->bound_ms);
    }
    mpitopo_gpus_destroy(&g);
    mpitopo_machine_destroy(&m);
}

static void big(int nodes, int reps)
{
    char md[128];
    snprintf(md, sizeof md, "node:%d socket:2 core:8", nodes);
    mpitopo_machine_t *m = NULL;
    mpitopo_gpus_t *g = NULL;
    CHECK(mpitopo_machine_from_string(md, &m));
    CHECK(mpitopo_gpus_from_string("package:2@38,switch:2@16,board:2@16,gpu:2@16", &g));
    int n = nodes * 16, dims[3] = {0, 0, 0};
    CHECK(mpitopo_dims_create(n, 3, dims));
    char pd[128];
    snprintf(pd, sizeof pd, "cart:%dx%dx%d:bytes=1048576", dims[0], dims[1], dims[2]);
    mpitopo_pattern_t *p = NULL;
    CHECK(mpitopo_pattern_from_string(pd, &p));
    printf("\n### Time at %d processes (`%s`, cluster A's GPUs, `%s` on both sides)\n\n", n, md,
           pd);
    printf("| mapper | t1 ms | t2 ms | t3 ms | total ms |\n|---|---|---|---|---|\n");
    const char *specs[] = {"magc", "magc:scotch", "strategy1"};
    for (int s = 0; s < 3; s++) {
        const mpitopo_mapper_t *mp;
        if (s == 1 && mpitopo_mapper_find("scotch", &mp) != MPITOPO_SUCCESS)
            continue;
        result_t r = run(specs[s], m, g, p, p, reps, NULL);
        printf("| %s | %.2f | %.2f | %.2f | %.2f |\n", specs[s], ms(r.t[0]), ms(r.t[1]),
               ms(r.t[2]), ms(r.t[0] + r.t[1] + r.t[2]));
    }
    mpitopo_pattern_destroy(&p);
    mpitopo_gpus_destroy(&g);
    mpitopo_machine_destroy(&m);
}

int main(int argc, char **argv)
{
    const char *dgx2 = MAGC_DGX2, *only = NULL;
    int reps = 5, big_nodes = 256;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dgx2") && i + 1 < argc)
            dgx2 = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--big-nodes") && i + 1 < argc)
            big_nodes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: magc [--dgx2 FILE] [--reps N] [--big-nodes N] [--only NAME]\n");
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    char pcie[1024];
    snprintf(pcie, sizeof pcie, "pcie:%s", dgx2);
    const cluster_t clusters[] = {
        {"A", "node:4 socket:2 core:8", "package:2@38,switch:2@16,board:2@16,gpu:2@16"},
        {"B", "node:8 socket:2 core:4", "package:2@38,switch:2@16,gpu:2@16"},
        {"DGX2-PCIe", "node:4 socket:2 core:8", pcie},
        {"DGX2-NVSwitch", "node:4 socket:2 core:8", dgx2},
    };
    for (size_t i = 0; i < sizeof clusters / sizeof clusters[0]; i++)
        if (!only || !strncmp(clusters[i].name, only, strlen(only)))
            one_cluster(&clusters[i], reps);
    if (big_nodes > 0 && (!only || !strcmp(only, "big")))
        big(big_nodes, reps);
    return 0;
}
