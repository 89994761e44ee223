/* mpitopo_network_evaluate against a reference that adds every pair in
 * rank order through the public route look-up: the route cache and the
 * node-by-node order of the evaluation must not change a single bit. */
#include "unit.h"

#include <math.h>

/* The metrics as load.c computes them, pairs added in rank order. */
static void reference(const mpitopo_network_t *net, const mpitopo_pattern_t *pat,
                      const int *mapping, mpitopo_network_metrics_t *m)
{
    int n, nnodes, maxr;
    int64_t nch;
    OK(mpitopo_pattern_nprocs(pat, &n));
    OK(mpitopo_network_size(net, &nnodes, &nch, &maxr));
    double *load = calloc((size_t)nch, sizeof *load);
    int64_t *route = malloc(((size_t)maxr + 1) * sizeof *route);
    assert_non_null(load);
    assert_non_null(route);
    double hop_bytes = 0, dilation = 0;
    for (int p = 0; p < n; p++) {
        int deg, len;
        const int *dst;
        const double *bytes;
        OK(mpitopo_pattern_out_edges(pat, p, &deg, &dst, &bytes, NULL));
        for (int e = 0; e < deg; e++) {
            if (dst[e] == p || !(bytes[e] > 0) || mapping[p] == mapping[dst[e]])
                continue;
            OK(mpitopo_network_route(net, mapping[p], mapping[dst[e]], maxr, route, &len));
            for (int i = 0; i < len; i++)
                load[route[i]] += bytes[e];
            hop_bytes += bytes[e] * len;
            dilation += len;
        }
    }
    double sum = 0, max = 0, var = 0;
    int64_t nz = 0;
    for (int64_t c = 0; c < nch; c++)
        if (load[c] > 0) {
            double cap;
            OK(mpitopo_network_channel(net, c, &cap, NULL, 0));
            sum += load[c] / cap;
            max = fmax(max, load[c] / cap);
            nz++;
        }
    double avg = nz ? sum / (double)nz : 0.0;
    for (int64_t c = 0; c < nch; c++)
        if (load[c] > 0) {
            double cap;
            OK(mpitopo_network_channel(net, c, &cap, NULL, 0));
            var += (load[c] / cap - avg) * (load[c] / cap - avg);
        }
    memset(m, 0, sizeof *m);
    m->hop_bytes = hop_bytes;
    m->dilation = dilation;
    m->max_congestion = max;
    m->nzca = avg;
    m->nzcv = nz ? var / (double)nz : 0.0;
    m->busy_channels = nz;
    m->hybrid = 0;
    m->hybrid += m->hop_bytes;
    m->hybrid += m->max_congestion;
    m->hybrid += m->nzca;
    m->hybrid += m->nzcv;
    free(load);
    free(route);
}

static void assert_same_metrics(const char *what, const mpitopo_network_metrics_t *a,
                                const mpitopo_network_metrics_t *b)
{
    const double x[6] = {a->hop_bytes, a->dilation, a->max_congestion, a->nzca, a->nzcv, a->hybrid};
    const double y[6] = {b->hop_bytes, b->dilation, b->max_congestion, b->nzca, b->nzcv, b->hybrid};
    for (int i = 0; i < 6; i++)
        if (memcmp(&x[i], &y[i], sizeof x[i]) != 0)
            fail_msg("%s: metric %d is %.17g, the reference %.17g", what, i, x[i], y[i]);
    assert_int_equal(a->busy_channels, b->busy_channels);
}

/* Placements of n processes, ppn per node: block, round robin over the
 * nodes used, and the slots shuffled. */
static void placement(int kind, int n, int ppn, unsigned seed, int *mapping)
{
    int nodes = (n + ppn - 1) / ppn;
    for (int p = 0; p < n; p++)
        mapping[p] = kind == 0 ? p / ppn : kind == 1 ? p % nodes : p;
    if (kind == 2) {
        for (int p = n - 1; p > 0; p--) {
            seed = seed * 1103515245u + 12345u;
            int q = (int)((seed >> 8) % (unsigned)(p + 1)), t = mapping[p];
            mapping[p] = mapping[q];
            mapping[q] = t;
        }
        for (int p = 0; p < n; p++)
            mapping[p] /= ppn;
    }
}

static void check_case(const char *netdesc, const char *patdesc, int ppn)
{
    mpitopo_network_t *net = NULL;
    mpitopo_pattern_t *pat = NULL;
    OK(mpitopo_network_from_string(netdesc, &net));
    OK(mpitopo_pattern_from_string(patdesc, &pat));
    int n, nnodes;
    OK(mpitopo_pattern_nprocs(pat, &n));
    OK(mpitopo_network_size(net, &nnodes, NULL, NULL));
    if ((n + ppn - 1) / ppn > nnodes) { /* does not fit */
        mpitopo_pattern_destroy(&pat);
        mpitopo_network_destroy(&net);
        return;
    }
    int *mapping = malloc((size_t)n * sizeof *mapping);
    assert_non_null(mapping);
    for (int kind = 0; kind < 3; kind++) {
        placement(kind, n, ppn, 7u + (unsigned)kind, mapping);
        mpitopo_network_metrics_t got, want;
        OK(mpitopo_network_evaluate(net, pat, mapping, NULL, NULL, &got));
        reference(net, pat, mapping, &want);
        char what[160];
        snprintf(what, sizeof what, "%s on %s, %d per node, placement %d", patdesc, netdesc, ppn,
                 kind);
        assert_same_metrics(what, &got, &want);
    }
    free(mapping);
    mpitopo_pattern_destroy(&pat);
    mpitopo_network_destroy(&net);
}

/* Integer bytes (the node-by-node order applies) and fractional ones (rank
 * order), several processes per node (the cache applies) and one (it does
 * not), and a long ring whose routes are too long to cache. Cases that do
 * not fit on a network's end nodes are skipped. */
static void evaluate_matches_rank_order(void **state)
{
    (void)state;
    static const char *const nets[] = {"gpc", "ktree:4,3", "torus:4x4x4", "mesh:4x5",
                                       "dragonfly:2,4,2", "fattree:2;4,4;1,2;1,2:cap=3"};
    static const char *const pats[] = {"cart:8x8", "cart:8x8:weights=1.1,3.7:bytes=0.3",
                                       "alltoall:4x4x4:1,0,1", "alltoall:8x8:1,0:bytes=2.5",
                                       "random:64:0.2:3"};
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
        for (size_t j = 0; j < sizeof pats / sizeof pats[0]; j++) {
            check_case(nets[i], pats[j], 4);
            check_case(nets[i], pats[j], 1);
        }
    check_case("torus:200", "alltoall:4x16:0,1", 1);
    check_case("torus:200", "alltoall:4x16:0,1:bytes=0.1", 2);
    check_case("gpc", "alltoall:16x8x8:1,0,1", 8);
}

/* Integer bytes whose sums could round (beyond 2^53): rank order. */
static void evaluate_huge_bytes(void **state)
{
    (void)state;
    check_case("ktree:4,2", "alltoall:4x4:1,1:bytes=1e15", 2);
    check_case("ktree:4,2", "alltoall:4x4:1,1:bytes=9007199254740993", 2);
}

typedef struct eval_ctx {
    mpitopo_network_t *net;
    mpitopo_pattern_t *pat;
    int *mapping;
} eval_ctx_t;

static int evaluate_once(void *p)
{
    eval_ctx_t *c = p;
    mpitopo_network_metrics_t m;
    return mpitopo_network_evaluate(c->net, c->pat, c->mapping, NULL, NULL, &m);
}

static void evaluate_allocation_failures(void **state)
{
    (void)state;
    eval_ctx_t c = {NULL, NULL, NULL};
    int mapping[64];
    OK(mpitopo_network_from_string("ktree:4,3", &c.net));
    OK(mpitopo_pattern_from_string("alltoall:8x8:1,0", &c.pat));
    placement(2, 64, 4, 1u, mapping);
    c.mapping = mapping;
    /* load structure, cache (marks, lengths, routes), node order */
    assert_true(unit_each_allocation_fails("evaluate", evaluate_once, &c) >= 6);
    mpitopo_pattern_destroy(&c.pat);
    mpitopo_network_destroy(&c.net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(evaluate_matches_rank_order),
        cmocka_unit_test(evaluate_huge_bytes),
        cmocka_unit_test(evaluate_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
