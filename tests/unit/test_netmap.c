/* Unit tests of the network-aware comparators (LibTopoMap's algorithms:
 * greedy, rcm, rb, scotchnet): validity, determinism, the registry's hybrid
 * never-worse guard, greedy and the RCM order by hand, exact halves of the
 * bisection, errors without a network, and their metrics on the GPC model
 * beside block, tree and ptram. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "map/netmap_internal.h"
#include "net_test_util.h"

#include <stdio.h>
#include <time.h>

/* ---- helpers ------------------------------------------------------------ */

static int nspecs(const char **specs)
{
    static const char *const all[] = {"greedy", "rcm", "rb", "scotchnet"};
    int n = 0;
    const mpitopo_mapper_t *mp;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (mpitopo_mapper_find(all[i], &mp) == MPITOPO_SUCCESS)
            specs[n++] = all[i];
    return n;
}

/* ---- validity, determinism, the guard ----------------------------------- */

static void check_cases(const char *netdesc, int nodes, const char *inside, int per_node, int short_by)
{
    const char *specs[4];
    int ns = nspecs(specs);
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string(netdesc, &net));
    mpitopo_machine_t *m = net_machine(net, nodes, inside);
    int nprocs = per_node * nodes - short_by;
    int *a = malloc((size_t)nprocs * sizeof *a), *b = malloc((size_t)nprocs * sizeof *b);
    int *launch = malloc((size_t)nprocs * sizeof *launch);
    int seeds = UNIT_SANITIZED ? 2 : 4;
    for (int s = 0; s < seeds; s++) {
        mpitopo_pattern_t *pat = random_pattern(nprocs, s % 2 ? 0.03 : 0.1, (uint64_t)(7 * s + nodes));
        OK(mpitopo_placement(m, nprocs, s % 2 ? "random:3" : "block", launch));
        mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
        opt.launch = launch;
        mpitopo_network_metrics_t lm = metrics_of(net, m, pat, launch, NULL);
        for (int k = 0; k < ns; k++) {
            OK(mpitopo_map_network(specs[k], m, net, NULL, pat, &opt, a, NULL));
            OK(mpitopo_map_network(specs[k], m, net, NULL, pat, &opt, b, NULL));
            OK(mpitopo_mapping_check(m, nprocs, a));
            if (memcmp(a, b, (size_t)nprocs * sizeof *a) != 0)
                fail_msg("%s on %s: two runs differ", specs[k], netdesc);
            /* the first nprocs leaves, as every mapper fills them */
            for (int p = 0; p < nprocs; p++)
                assert_true(a[p] < nprocs);
            int kept;
            opt.never_worse = 1;
            OK(mpitopo_map_network(specs[k], m, net, NULL, pat, &opt, b, &kept));
            opt.never_worse = 0;
            mpitopo_network_metrics_t r = metrics_of(net, m, pat, b, NULL);
            if (!(r.hybrid <= lm.hybrid))
                fail_msg("%s never_worse on %s seed %d: hybrid %g above the launch's %g", specs[k], netdesc, s,
                         r.hybrid, lm.hybrid);
            if (kept)
                assert_memory_equal(b, launch, (size_t)nprocs * sizeof *b);
            else
                assert_true(r.hybrid < lm.hybrid);
        }
        mpitopo_pattern_destroy(&pat);
    }
    free(a);
    free(b);
    free(launch);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

static void test_valid_deterministic_never_worse(void **state)
{
    (void)state;
    check_cases("torus:4x4", 16, "socket:2 core:2", 4, 0);
    check_cases("ktree:4,2", 16, "socket:2 core:2", 4, 0);
    check_cases("dragonfly:2,4,2", 16, "socket:2 core:2", 4, 0);
    /* a last node partly filled: its part only goes to a node of its size */
    check_cases("torus:4x4", 16, "core:4", 4, 3);
    check_cases("ktree:4,2", 16, "core:3", 3, 1);
    /* fewer nodes in use than end nodes */
    check_cases("dragonfly:2,4,2", 10, "core:2", 2, 0);
}

static void test_gpc_128_nodes_guard(void **state)
{
    (void)state;
    const char *specs[4];
    int ns = nspecs(specs);
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("gpc", &net));
    mpitopo_machine_t *m = net_machine(net, 128, "core:8");
    mpitopo_pattern_t *pat = NULL;
    OK(mpitopo_pattern_from_string("cart:32x32:weights=3,1", &pat));
    int *leaf = malloc(1024 * sizeof *leaf), *block = malloc(1024 * sizeof *block);
    OK(mpitopo_placement(m, 1024, "block", block));
    mpitopo_network_metrics_t bm = metrics_of(net, m, pat, block, NULL);
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.never_worse = 1;
    for (int k = 0; k < ns; k++) {
        OK(mpitopo_map_network(specs[k], m, net, NULL, pat, &opt, leaf, NULL));
        OK(mpitopo_mapping_check(m, 1024, leaf));
        assert_true(metrics_of(net, m, pat, leaf, NULL).hybrid <= bm.hybrid);
    }
    free(leaf);
    free(block);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

/* ---- by hand ------------------------------------------------------------ */

/*
 * greedy on a 1-D mesh of 4 nodes, one process per node, the path
 * 3 -5- 0 -4- 2 -3- 1 (bytes each way). Process 0 is the heaviest (9): it
 * goes to the most central node, 1 (node 2 ties; the lower index). Then
 * 3 (5 bytes to the placed ones) to node 0 or 2 (cost 5 both, equally near
 * node 1: node 0), 2 (4 bytes) to node 2 (cost 4, node 3 would cost 8),
 * 1 to node 3. Every pair of neighbours is one hop apart: hop-bytes
 * 2 x (5 + 4 + 3) = 24, where block pays 2 x (5x3 + 4x2 + 3x1) = 52.
 */
static void test_greedy_by_hand(void **state)
{
    (void)state;
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("mesh:4", &net));
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string("node:4 core:1", &m));
    const int src[] = {3, 0, 0, 2, 2, 1}, dst[] = {0, 3, 2, 0, 1, 2};
    const double bytes[] = {5, 5, 4, 4, 3, 3};
    mpitopo_pattern_t *pat = NULL;
    OK(mpitopo_pattern_create(4, 6, src, dst, bytes, NULL, &pat));
    int leaf[4], block[4];
    OK(mpitopo_map_network("greedy", m, net, NULL, pat, NULL, leaf, NULL));
    const int want[4] = {1, 3, 2, 0};
    assert_memory_equal(leaf, want, sizeof want);
    OK(mpitopo_placement(m, 4, "block", block));
    assert_true(metrics_of(net, m, pat, leaf, NULL).hop_bytes == 24);
    assert_true(metrics_of(net, m, pat, block, NULL).hop_bytes == 52);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

/*
 * RCM of the graph 0-1, 0-2, 1-3, 2-3, 3-4, 4-5 (degrees 2 2 2 3 2 1):
 * the search starts at 5 (least degree); its BFS ends at 0, whose BFS is
 * no deeper, so 5 is the pseudo-peripheral vertex. Cuthill-McKee: 5, 4, 3,
 * then 3's neighbours 1 and 2 (degree 2 both, by index), then 0 (from 1);
 * reversed: 0 2 1 3 4 5. With a second component {6, 7} the search goes
 * on there (least degree 1, the lower index 6): CM 5 4 3 1 2 0 6 7.
 */
static void test_rcm_by_hand(void **state)
{
    (void)state;
    const int edges[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}, {4, 5}, {6, 7}};
    int n = 8, ne = 7;
    int64_t off[9] = {0};
    int adj[14], at[8];
    for (int e = 0; e < ne; e++) {
        off[edges[e][0] + 1]++;
        off[edges[e][1] + 1]++;
    }
    for (int v = 0; v < n; v++) {
        off[v + 1] += off[v];
        at[v] = (int)off[v];
    }
    for (int e = 0; e < ne; e++) {
        adj[at[edges[e][0]]++] = edges[e][1];
        adj[at[edges[e][1]]++] = edges[e][0];
    }
    int order[8];
    OK(mpitopo__netmap_rcm(6, off, adj, NULL, NULL, order));
    const int want6[6] = {0, 2, 1, 3, 4, 5};
    assert_memory_equal(order, want6, sizeof want6);
    OK(mpitopo__netmap_rcm(8, off, adj, NULL, NULL, order));
    const int want8[8] = {7, 6, 0, 2, 1, 3, 4, 5};
    assert_memory_equal(order, want8, sizeof want8);
}

/*
 * Exact halves: ktree:4,2 has 16 end nodes, 4 under each leaf switch; 2
 * processes a node, 32 processes in 4 cliques of 8 (ranks scattered by a
 * permutation). Halving the nodes keeps switches whole and halving the
 * parts keeps cliques whole only if both halves are exact (8 nodes, 8
 * parts, then 4 and 4): every clique ends under one leaf switch, no byte
 * goes above them. Also with a last node of 1 process (31 processes, the
 * clique of rank 30 one short): sizes still match, mapping valid.
 */
static void test_rb_exact_halves(void **state)
{
    (void)state;
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("ktree:4,2", &net));
    int levels;
    OK(mpitopo_network_group_levels(net, &levels));
    assert_true(levels >= 1);
    mpitopo_machine_t *m = net_machine(net, 16, "core:2");
    for (int n = 32; n >= 31; n--) {
        int *src = malloc(64 * 8 * sizeof *src), *dst = malloc(64 * 8 * sizeof *dst), clique[32];
        double *bytes = malloc(64 * 8 * sizeof *bytes);
        for (int p = 0; p < 32; p++)
            clique[(p * 13 + 5) % 32] = p / 8;
        int64_t ne = 0;
        for (int p = 0; p < n; p++)
            for (int q = 0; q < n; q++)
                if (p != q && clique[p] == clique[q]) {
                    src[ne] = p;
                    dst[ne] = q;
                    bytes[ne++] = 10;
                }
        mpitopo_pattern_t *pat = NULL;
        OK(mpitopo_pattern_create(n, ne, src, dst, bytes, NULL, &pat));
        int leaf[32], ends[32];
        OK(mpitopo_map_network("rb", m, net, NULL, pat, NULL, leaf, NULL));
        OK(mpitopo_mapping_check(m, n, leaf));
        end_nodes(m, n, leaf, ends);
        int64_t group_of_clique[4] = {-1, -1, -1, -1};
        for (int p = 0; p < n; p++) {
            int64_t g;
            OK(mpitopo_network_group(net, levels - 1, ends[p], &g, NULL));
            if (group_of_clique[clique[p]] < 0)
                group_of_clique[clique[p]] = g;
            if (n == 32 && group_of_clique[clique[p]] != g)
                fail_msg("rb: clique %d spans switches %lld and %lld", clique[p],
                         (long long)group_of_clique[clique[p]], (long long)g);
        }
        free(src);
        free(dst);
        free(bytes);
        mpitopo_pattern_destroy(&pat);
    }
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

/* ---- bad input ---------------------------------------------------------- */

static void test_errors_and_edges(void **state)
{
    (void)state;
    const char *specs[4];
    int ns = nspecs(specs);
    assert_true(ns >= 3);
    mpitopo_machine_t *m = NULL, *one = NULL;
    mpitopo_pattern_t *pat = NULL;
    mpitopo_network_t *net = NULL;
    OK(mpitopo_machine_from_string("node:4 core:2", &m));
    OK(mpitopo_machine_from_string("socket:2 core:4", &one));
    OK(mpitopo_pattern_from_string("cart:8", &pat));
    OK(mpitopo_network_from_string("mesh:4", &net));
    int leaf[8];
    for (int k = 0; k < ns; k++) {
        char buf[64];
        const char *needle = buf;
        snprintf(buf, sizeof buf, "%s needs a network", specs[k]);
        FAILS(mpitopo_map(specs[k], m, pat, NULL, leaf, NULL), MPITOPO_ERR_ARG, needle);
        const mpitopo_mapper_t *mp;
        OK(mpitopo_mapper_find(specs[k], &mp));
        assert_true(strncmp(mp->summary, "needs a network", 15) == 0);
        char with_args[32];
        snprintf(with_args, sizeof with_args, "%s:x", specs[k]);
        FAILS(mpitopo_map_network(with_args, m, net, NULL, pat, NULL, leaf, NULL), MPITOPO_ERR_ARG, "no argument");
        /* one node: the inside only */
        OK(mpitopo_map_network(specs[k], one, net, NULL, pat, NULL, leaf, NULL));
        OK(mpitopo_mapping_check(one, 8, leaf));
        /* no traffic */
        mpitopo_pattern_t *quiet = random_pattern(8, 0, 1);
        OK(mpitopo_map_network(specs[k], m, net, NULL, quiet, NULL, leaf, NULL));
        OK(mpitopo_mapping_check(m, 8, leaf));
        mpitopo_pattern_destroy(&quiet);
        /* the end nodes given: nodes 0..3 on end nodes 3..0 */
        const int ends[4] = {3, 2, 1, 0};
        OK(mpitopo_map_network(specs[k], m, net, ends, pat, NULL, leaf, NULL));
        OK(mpitopo_mapping_check(m, 8, leaf));
        OK(mpitopo__map_check_spec(specs[k]));
    }
    mpitopo_network_destroy(&net);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
    mpitopo_machine_destroy(&one);
}

/* Allocation failures anywhere: MPITOPO_ERR_NOMEM, nothing leaked. */
typedef struct alloc_case {
    const char *spec;
    const mpitopo_machine_t *m;
    const mpitopo_network_t *net;
    const mpitopo_pattern_t *pat;
} alloc_case_t;

static int alloc_op(void *ctx)
{
    const alloc_case_t *c = ctx;
    int leaf[64];
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.never_worse = 1;
    return mpitopo_map_network(c->spec, c->m, c->net, NULL, c->pat, &opt, leaf, NULL);
}

static void test_alloc_failures(void **state)
{
    (void)state;
    const char *specs[4];
    int ns = nspecs(specs);
    /* small: every allocation of the whole run (the tree mapper's too) fails once */
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("torus:2x3", &net));
    mpitopo_machine_t *m = net_machine(net, 6, "socket:2 core:1");
    mpitopo_pattern_t *pat = random_pattern(12, 0.3, 3);
    for (int k = 0; k < ns; k++) {
        alloc_case_t c = {specs[k], m, net, pat};
        assert_true(unit_each_allocation_fails(specs[k], alloc_op, &c) > 10);
    }
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

/* ---- the GPC comparison -------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Every mapper's metrics relative to block's (printed: the comparison
 * table of the report); each is valid and deterministic. */
static void gpc_table(const char *name, const char *pattern)
{
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("gpc", &net));
    mpitopo_machine_t *m = net_machine(net, 128, "core:8");
    mpitopo_pattern_t *pat = NULL;
    OK(mpitopo_pattern_from_string(pattern, &pat));
    int n;
    mpitopo_pattern_nprocs(pat, &n);
    int *leaf = malloc((size_t)n * sizeof *leaf), *again = malloc((size_t)n * sizeof *again);
    const char *specs[7] = {"block", "tree", "ptram"};
    int ns = 3 + nspecs(specs + 3);
    mpitopo_network_metrics_t b = {0};
    printf("gpc, %s, %d processes: metrics / block's\n%-10s %8s %8s %8s %8s %8s %8s\n", name, n, "mapper", "HB", "MC",
           "NZCA", "NZCV", "hybrid", "time s");
    for (int k = 0; k < ns; k++) {
        double t0 = now();
        OK(mpitopo_map_network(specs[k], m, net, NULL, pat, NULL, leaf, NULL));
        double t = now() - t0;
        OK(mpitopo_mapping_check(m, n, leaf));
        if (k >= 3) {
            OK(mpitopo_map_network(specs[k], m, net, NULL, pat, NULL, again, NULL));
            assert_memory_equal(leaf, again, (size_t)n * sizeof *leaf);
        }
        mpitopo_network_metrics_t r = metrics_of(net, m, pat, leaf, NULL);
        if (k == 0)
            b = r;
        printf("%-10s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f   (MC %g)\n", specs[k], r.hop_bytes / b.hop_bytes,
               r.max_congestion / b.max_congestion, r.nzca / b.nzca, r.nzcv / b.nzcv, r.hybrid / b.hybrid, t,
               r.max_congestion);
    }
    free(leaf);
    free(again);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

/* Scotch's global generator, when Scotch is linked in (weak: not otherwise). */
extern void SCOTCH_randomSeed(int seed) __attribute__((weak));
extern void SCOTCH_randomReset(void) __attribute__((weak));

/* scotchnet gives the same permutation twice, whatever state Scotch's
 * global generator is in: its target was built with that generator,
 * seeded from the clock and bipartitioned by threads, and two runs of the
 * 1,024-process torus all-to-all gave MC 0.25 and 0.5 of block's. */
static void test_scotchnet_deterministic(void **state)
{
    (void)state;
    const mpitopo_mapper_t *mp;
    if (mpitopo_mapper_find("scotchnet", &mp) != MPITOPO_SUCCESS)
        skip();
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("torus:4x4x4", &net));
    mpitopo_machine_t *m = net_machine(net, 64, "core:8");
    mpitopo_pattern_t *pat = NULL;
    OK(mpitopo_pattern_from_string("alltoall:16x32:1,0", &pat));
    int nprocs = 512;
    int *a = malloc((size_t)nprocs * sizeof *a), *b = malloc((size_t)nprocs * sizeof *b);
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    for (int round = 0; round < 3; round++) {
        if (SCOTCH_randomSeed && round > 0) {
            SCOTCH_randomSeed(1000 + round);
            SCOTCH_randomReset();
        }
        OK(mpitopo_map_network("scotchnet", m, net, NULL, pat, &opt, round ? b : a, NULL));
        OK(mpitopo_mapping_check(m, nprocs, round ? b : a));
        if (round > 0 && memcmp(a, b, (size_t)nprocs * sizeof *a) != 0)
            fail_msg("scotchnet: call %d differs from the first", round + 1);
    }
    free(a);
    free(b);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

static void test_gpc_tables(void **state)
{
    (void)state;
    gpc_table("2-D 5-point weighted 3,1", "cart:32x32:weights=3,1");
    if (!UNIT_SANITIZED)
        gpc_table("3-D 15-point", "cart:16x8x8:offsets=1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1;1,1,1;1,1,-1;1,-1,1;"
                                  "1,-1,-1;-1,1,1;-1,1,-1;-1,-1,1;-1,-1,-1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_deterministic_never_worse),
        cmocka_unit_test(test_gpc_128_nodes_guard),
        cmocka_unit_test(test_greedy_by_hand),
        cmocka_unit_test(test_rcm_by_hand),
        cmocka_unit_test(test_rb_exact_halves),
        cmocka_unit_test(test_errors_and_edges),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_scotchnet_deterministic),
        cmocka_unit_test(test_gpc_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
