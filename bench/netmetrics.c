/*
 * netmetrics: time and memory of the network metrics (issue 16).
 *
 * For each case (a pattern, a network, processes per end node, a placement)
 * it times mpitopo_network_evaluate() (every process placed at once) and the
 * incremental path the mappers use (mpitopo_network_load_create(), then
 * mpitopo_network_load_place() for every process in rank order, then
 * mpitopo_network_load_metrics()): the median of --reps runs of the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID, which other processes on a
 * shared machine disturb less) and of the wall time (CLOCK_MONOTONIC),
 * and the peak memory the library holds during
 * one run beyond what it held before (the pattern and the network, built
 * once, are not counted): every allocation goes through a counting
 * allocator (mpitopo_set_allocator()), so the figure is exact bytes, not
 * resident pages. Both paths must give the same metrics; a difference is
 * reported and fails the run.
 *
 * Placements: "block", rank p on end node p / ppn; "random", the P slots
 * (ppn per end node on the first P / ppn end nodes) shuffled with a fixed
 * seed. The targets of issue 16: a 4,096-process mapping on the GPC model
 * under 50 ms; 65,536 processes on a fat tree under 1 s, memory
 * O(P + E + links). A last table times route look-ups (random pairs of end
 * nodes, CPU time), whose cost should follow the route length.
 *
 *   netmetrics [--reps N] [--quick]
 *
 * --quick runs the GPC cases only, 3 repetitions. No MPI needed.
 */
#define _GNU_SOURCE
#define MPITOPO_NO_MPI
#include <mpitopo.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- counting allocator ------------------------------------------------- */

/* Each block carries its size in a header of 16 bytes (keeps alignment). */
#define HDR 16
static size_t live_bytes, peak_bytes;

static void *count_malloc(size_t n)
{
    unsigned char *p = malloc(n + HDR);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof n);
    live_bytes += n;
    if (live_bytes > peak_bytes)
        peak_bytes = live_bytes;
    return p + HDR;
}

static void *count_calloc(size_t c, size_t n)
{
    if (n && c > (SIZE_MAX - HDR) / n)
        return NULL;
    void *p = count_malloc(c * n);
    if (p)
        memset(p, 0, c * n);
    return p;
}

static void count_free(void *q)
{
    if (!q)
        return;
    unsigned char *p = (unsigned char *)q - HDR;
    size_t n;
    memcpy(&n, p, sizeof n);
    live_bytes -= n;
    free(p);
}

static void *count_realloc(void *q, size_t n)
{
    if (!q)
        return count_malloc(n);
    unsigned char *p = (unsigned char *)q - HDR;
    size_t old;
    memcpy(&old, p, sizeof old);
    unsigned char *r = realloc(p, n + HDR);
    if (!r)
        return NULL;
    memcpy(r, &n, sizeof n);
    live_bytes = live_bytes - old + n;
    if (live_bytes > peak_bytes)
        peak_bytes = live_bytes;
    return r + HDR;
}

/* ---- helpers ------------------------------------------------------------ */

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* Wall and CPU seconds of one timed run. */
typedef struct times {
    double wall, cpu;
} times_t;

static times_t start_times(void)
{
    return (times_t){now(), clock_s(CLOCK_THREAD_CPUTIME_ID)};
}

static times_t since(times_t t0)
{
    return (times_t){now() - t0.wall, clock_s(CLOCK_THREAD_CPUTIME_ID) - t0.cpu};
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* splitmix64: a fixed stream for the shuffles and the route pairs. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "netmetrics: %s: %s (%s)\n", what, mpitopo_err_name(rc), mpitopo_last_error());
    exit(1);
}

/* Two metric sets agree (summation order may differ between the paths). */
static int same_metrics(const mpitopo_network_metrics_t *a, const mpitopo_network_metrics_t *b)
{
    const double x[6] = {a->hop_bytes, a->dilation, a->max_congestion, a->nzca, a->nzcv, a->hybrid};
    const double y[6] = {b->hop_bytes, b->dilation, b->max_congestion, b->nzca, b->nzcv, b->hybrid};
    for (int i = 0; i < 6; i++)
        if (fabs(x[i] - y[i]) > 1e-9 * fmax(1.0, fabs(x[i])))
            return 0;
    return a->busy_channels == b->busy_channels;
}

/* ---- the cases ---------------------------------------------------------- */

#define STAR3D_15                                                                              \
    "offsets=1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1;1,1,1;1,1,-1;1,-1,1;1,-1,-1;-1,1,1;-1,1,-1;" \
    "-1,-1,1;-1,-1,-1"

typedef struct bcase {
    const char *name;    /* short name of the pattern */
    const char *pattern; /* its description */
    const char *network;
    int ppn;             /* processes per end node */
    int big;             /* left out by --quick */
} bcase_t;

static const bcase_t cases[] = {
    {"2-D 5-point", "cart:64x64", "gpc", 8, 0},
    {"3-D 15-point", "cart:16x16x16:" STAR3D_15, "gpc", 8, 0},
    {"all-to-all 1D", "alltoall:64x64:1,0", "gpc", 8, 0},
    {"all-to-all 2D", "alltoall:16x16x16:1,0,1", "gpc", 8, 0},
    {"2-D 5-point", "cart:256x256", "ktree:16,4", 1, 1},
    {"2-D 5-point", "cart:256x256", "ktree:16,4", 8, 1},
    {"3-D 15-point", "cart:64x32x32:" STAR3D_15, "ktree:16,4", 1, 1},
    {"3-D 15-point", "cart:64x32x32:" STAR3D_15, "ktree:16,4", 8, 1},
};

/* The placement: block, or the block slots shuffled. */
static void place(int n, int ppn, int random, int *mapping)
{
    for (int p = 0; p < n; p++)
        mapping[p] = p;
    if (random)
        for (int p = n - 1; p > 0; p--) {
            int q = (int)(rng_next() % (uint64_t)(p + 1)), t = mapping[p];
            mapping[p] = mapping[q];
            mapping[q] = t;
        }
    for (int p = 0; p < n; p++)
        mapping[p] /= ppn;
}

/* One evaluation; *peak gets the bytes it held at most beyond those before. */
static times_t run_evaluate(const mpitopo_network_t *net, const mpitopo_pattern_t *pat,
                            const int *mapping, mpitopo_network_metrics_t *m, size_t *peak)
{
    size_t before = live_bytes;
    peak_bytes = live_bytes;
    times_t t = start_times();
    int rc = mpitopo_network_evaluate(net, pat, mapping, NULL, NULL, m);
    t = since(t);
    if (rc)
        die("mpitopo_network_evaluate", rc);
    *peak = peak_bytes - before;
    return t;
}

/* The incremental path: create, place every process, metrics, destroy. */
static times_t run_incremental(const mpitopo_network_t *net, const mpitopo_pattern_t *pat,
                               const int *mapping, int n, mpitopo_network_metrics_t *m,
                               size_t *peak)
{
    size_t before = live_bytes;
    peak_bytes = live_bytes;
    times_t t = start_times();
    mpitopo_network_load_t *load = NULL;
    int rc = mpitopo_network_load_create(net, pat, &load);
    for (int p = 0; !rc && p < n; p++)
        rc = mpitopo_network_load_place(load, p, mapping[p]);
    if (!rc)
        rc = mpitopo_network_load_metrics(load, NULL, NULL, m);
    mpitopo_network_load_destroy(&load);
    t = since(t);
    if (rc)
        die("the incremental path", rc);
    *peak = peak_bytes - before;
    return t;
}

static void run_case(const bcase_t *c, int random, int reps)
{
    mpitopo_network_t *net = NULL;
    mpitopo_pattern_t *pat = NULL;
    int rc, n, nnodes;
    int64_t ne, nch;
    if ((rc = mpitopo_network_from_string(c->network, &net)))
        die(c->network, rc);
    if ((rc = mpitopo_pattern_from_string(c->pattern, &pat)))
        die(c->pattern, rc);
    mpitopo_pattern_nprocs(pat, &n);
    mpitopo_pattern_nedges(pat, &ne);
    mpitopo_network_size(net, &nnodes, &nch, NULL);
    if ((n + c->ppn - 1) / c->ppn > nnodes) {
        fprintf(stderr, "netmetrics: %s: %d processes do not fit on %d end nodes\n", c->pattern,
                n, nnodes);
        exit(1);
    }
    int *mapping = malloc((size_t)n * sizeof *mapping);
    /* Wall and CPU times of evaluate, then of the incremental path. */
    double *t[4];
    for (int k = 0; k < 4; k++)
        t[k] = malloc((size_t)reps * sizeof *t[k]);
    if (!mapping || !t[0] || !t[1] || !t[2] || !t[3]) {
        fprintf(stderr, "netmetrics: out of memory\n");
        exit(1);
    }
    place(n, c->ppn, random, mapping);
    mpitopo_network_metrics_t me, mi;
    size_t pe = 0, pi = 0;
    for (int r = 0; r < reps; r++) {
        times_t e = run_evaluate(net, pat, mapping, &me, &pe);
        times_t i = run_incremental(net, pat, mapping, n, &mi, &pi);
        t[0][r] = e.cpu;
        t[1][r] = e.wall;
        t[2][r] = i.cpu;
        t[3][r] = i.wall;
    }
    int agree = same_metrics(&me, &mi);
    double units = (double)n + (double)ne + (double)nch;
    printf("| %s | %s | %d | %d | %lld | %lld | %s | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | "
           "%.1f | %.1f | %s |\n",
           c->name, c->network, n, c->ppn, (long long)ne, (long long)nch,
           random ? "random" : "block", 1e3 * median(t[0], reps), 1e3 * median(t[1], reps),
           1e3 * median(t[2], reps), 1e3 * median(t[3], reps), (double)pe / 1048576.0,
           (double)pi / 1048576.0, (double)pe / units, (double)pi / units, agree ? "yes" : "NO");
    fflush(stdout);
    free(mapping);
    for (int k = 0; k < 4; k++)
        free(t[k]);
    mpitopo_pattern_destroy(&pat);
    mpitopo_network_destroy(&net);
    if (!agree) {
        fprintf(stderr, "netmetrics: %s on %s: the two paths disagree (MC %.17g vs %.17g)\n",
                c->pattern, c->network, me.max_congestion, mi.max_congestion);
        exit(1);
    }
}

/* ns per route look-up over random pairs of distinct end nodes. */
static void run_routes(const char *desc, int npairs)
{
    mpitopo_network_t *net = NULL;
    int rc = mpitopo_network_from_string(desc, &net), nnodes, maxr;
    if (rc)
        die(desc, rc);
    mpitopo_network_size(net, &nnodes, NULL, &maxr);
    int *pairs = malloc(2 * (size_t)npairs * sizeof *pairs);
    int64_t *route = malloc((size_t)maxr * sizeof *route);
    if (!pairs || !route) {
        fprintf(stderr, "netmetrics: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < npairs; i++) {
        pairs[2 * i] = (int)(rng_next() % (uint64_t)nnodes);
        pairs[2 * i + 1] = (int)((pairs[2 * i] + 1 + rng_next() % (uint64_t)(nnodes - 1)) %
                                 (uint64_t)nnodes);
    }
    long long hops = 0;
    double t = clock_s(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < npairs; i++) {
        int len = 0;
        if ((rc = mpitopo_network_route(net, pairs[2 * i], pairs[2 * i + 1], maxr, route, &len)))
            die("mpitopo_network_route", rc);
        hops += len;
    }
    t = clock_s(CLOCK_THREAD_CPUTIME_ID) - t;
    printf("| %s | %d | %d | %.2f | %.1f | %.2f |\n", desc, nnodes, maxr,
           (double)hops / npairs, 1e9 * t / npairs, 1e9 * t / (double)hops);
    free(pairs);
    free(route);
    mpitopo_network_destroy(&net);
}

int main(int argc, char **argv)
{
    int reps = 7, quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else {
            fprintf(stderr, "usage: netmetrics [--reps N] [--quick]\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 1;
        }
    }
    if (quick)
        reps = reps < 3 ? reps : 3;
    if (reps < 1) {
        fprintf(stderr, "netmetrics: --reps must be >= 1\n");
        return 1;
    }
    static const mpitopo_allocator_t counting = {count_malloc, count_calloc, count_realloc,
                                                 count_free};
    mpitopo_set_allocator(&counting);

    printf("Network metrics: median of %d runs, CPU and wall ms; peak library memory (MiB, and "
           "bytes per process + edge + channel)\n\n",
           reps);
    printf("| pattern | network | P | per node | edges | channels | placement | evaluate CPU "
           "ms | evaluate wall ms | incremental CPU ms | incremental wall ms | evaluate MiB | "
           "incremental MiB | evaluate B/unit | incremental B/unit | agree |\n");
    printf("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (quick && cases[k].big)
            continue;
        for (int random = 0; random <= 1; random++)
            run_case(&cases[k], random, reps);
    }
    printf("\nRoute look-ups, random pairs of distinct end nodes\n\n");
    printf("| network | end nodes | longest route | mean length | ns / route | ns / channel |\n");
    printf("|---|---:|---:|---:|---:|---:|\n");
    run_routes("gpc", quick ? 100000 : 1000000);
    run_routes("ktree:16,4", quick ? 100000 : 1000000);
    run_routes("torus:16x16x16", quick ? 100000 : 1000000);
    run_routes("dragonfly:4,8,4", quick ? 100000 : 1000000);
    return 0;
}
