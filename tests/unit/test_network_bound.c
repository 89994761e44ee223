/* Unit tests of mpitopo_network_bound(): the bounds are at or below the MC
 * and hop-bytes of every registered mapper and of random placements on
 * small networks and patterns (every leaf used, and fewer processes than
 * leaves), equal the brute-force optimum on tiny cases, and reach 0.4 of
 * block's MC on the 2-D weighted halo of issue 17 (32x32, GPC, 8 per
 * node); sub-communicator all-to-alls get their group bound; non-Cartesian
 * patterns give found = 0; bad arguments fail. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "net_test_util.h"

#include <math.h>

#define STAR15                                                                                  \
    "offsets=1,0,0;-1,0,0;0,1,0;0,-1,0;0,0,1;0,0,-1;1,1,1;1,1,-1;1,-1,1;1,-1,-1;-1,1,1;-1,1,-1;" \
    "-1,-1,1;-1,-1,-1"

/* |a - b| <= tol, naming both. */
#define assert_near(a, b, tol)                                                          \
    do {                                                                                \
        double a_ = (a), b_ = (b);                                                      \
        if (!(fabs(a_ - b_) <= (tol)))                                                  \
            fail_msg("%s = %.12g, expected %s = %.12g", #a, a_, #b, b_);                \
    } while (0)

static mpitopo_pattern_t *pattern_of(const char *desc)
{
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_from_string(desc, &p));
    return p;
}

/* The bound must not exceed the metrics of this mapping (leaf of proc). */
static void check_below(const mpitopo_network_bound_t *lb, const mpitopo_network_t *net,
                        const mpitopo_machine_t *m, const mpitopo_pattern_t *pat, const int *leaf,
                        const char *what, const char *netdesc, const char *pdesc)
{
    mpitopo_network_metrics_t r = metrics_of(net, m, pat, leaf, NULL);
    if (lb->max_congestion > r.max_congestion * (1 + 1e-9) + 1e-9)
        fail_msg("%s, %s on %s: bound MC %g above the mapping's %g", what, pdesc, netdesc,
                 lb->max_congestion, r.max_congestion);
    if (lb->hop_bytes > r.hop_bytes * (1 + 1e-9) + 1e-9)
        fail_msg("%s, %s on %s: bound hop-bytes %g above the mapping's %g", what, pdesc, netdesc,
                 lb->hop_bytes, r.hop_bytes);
}

/* A random placement: nprocs distinct leaves out of nleaves. */
static void random_leaves(int nleaves, int nprocs, uint64_t *seed, int *leaf)
{
    int *all = malloc((size_t)nleaves * sizeof *all);
    for (int i = 0; i < nleaves; i++)
        all[i] = i;
    for (int i = nleaves - 1; i > 0; i--) {
        int j = (int)(lcg(seed) % (uint64_t)(i + 1)), t = all[i];
        all[i] = all[j];
        all[j] = t;
    }
    memcpy(leaf, all, (size_t)nprocs * sizeof *leaf);
    free(all);
}

/* Every registered mapper that applies, and random placements. */
static void check_case(const char *netdesc, int nodes, int per_node, const char *pdesc)
{
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string(netdesc, &net));
    char inside[32];
    snprintf(inside, sizeof inside, "core:%d", per_node);
    mpitopo_machine_t *m = net_machine(net, nodes, inside);
    mpitopo_pattern_t *pat = pattern_of(pdesc);
    int nprocs, is_cart = 0;
    mpitopo_pattern_nprocs(pat, &nprocs);
    mpitopo_pattern_cart_info(pat, &is_cart, NULL, NULL, NULL);
    mpitopo_network_bound_t lb;
    OK(mpitopo_network_bound(net, m, NULL, pat, &lb));
    assert_true(lb.found);
    assert_true(lb.max_congestion >= lb.injection && lb.max_congestion >= lb.group);
    int *leaf = malloc((size_t)nprocs * sizeof *leaf);
    for (int i = 0; i < mpitopo_mapper_count(); i++) {
        const mpitopo_mapper_t *mp = mpitopo_mapper_at(i);
        if (mp->needs_cart && !is_cart)
            continue;
        int rc = mpitopo_map_network(mp->name, m, net, NULL, pat, NULL, leaf, NULL);
        if (rc != MPITOPO_SUCCESS)
            continue; /* a mapper that refuses this case (say, a grid it cannot tile) */
        check_below(&lb, net, m, pat, leaf, mp->name, netdesc, pdesc);
    }
    uint64_t seed = (uint64_t)nodes * 977 + (uint64_t)nprocs;
    for (int r = 0; r < (UNIT_SANITIZED ? 10 : 50); r++) {
        random_leaves(nodes * per_node, nprocs, &seed, leaf);
        check_below(&lb, net, m, pat, leaf, "random", netdesc, pdesc);
    }
    free(leaf);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

static void test_below_every_mapping(void **state)
{
    (void)state;
    /* every leaf used */
    check_case("fattree:2;4,4;1,2;1,1", 16, 4, "cart:8x8");
    check_case("fattree:2;4,4;1,2;1,1", 16, 4, "cart:8x8:weights=3,1");
    check_case("fattree:2;4,4;1,2;1,1", 16, 4, "cart:8x8:open");
    check_case("fattree:3;4,2,2;1,2,1;1,1,2", 16, 4, "cart:4x4x4:" STAR15);
    check_case("ktree:2,3", 8, 4, "cart:4x8:weights=1,3");
    check_case("torus:4x4", 16, 2, "cart:8x4");
    check_case("mesh:2x4", 8, 4, "cart:4x8:open:weights=2,1");
    check_case("dragonfly:2,2,1", 12, 2, "cart:6x4");
    check_case("gpc", 16, 8, "cart:16x8:weights=3,1");
    check_case("fattree:2;4,4;1,2;1,1", 16, 4, "alltoall:8x8:1,0");
    check_case("ktree:2,3", 8, 4, "alltoall:4x2x4:1,0,1");
    check_case("torus:4x4", 16, 2, "alltoall:8x4:0,1");
    /* fewer processes than leaves: occupancy is the mapping's choice */
    check_case("fattree:2;4,4;1,2;1,1", 16, 4, "cart:6x8");
    check_case("torus:4x4", 16, 4, "cart:5x9:open");
    check_case("ktree:2,3", 8, 4, "cart:3x3x3");
    check_case("fattree:2;4,4;1,2;1,1", 16, 4, "alltoall:6x8:0,1");
}

/* The least MC and hop-bytes over every placement of the processes on
 * the nodes, at most per_node on each (the order inside a node changes
 * neither): a full search. */
typedef struct brute {
    const mpitopo_network_t *net;
    const mpitopo_pattern_t *pat;
    int nprocs, nodes, per_node;
    int *node_of, *fill;
    double best_mc, best_hb;
} brute_t;

static void brute_all(brute_t *b, int p)
{
    if (p == b->nprocs) {
        mpitopo_network_metrics_t r;
        OK(mpitopo_network_evaluate(b->net, b->pat, b->node_of, NULL, NULL, &r));
        b->best_mc = fmin(b->best_mc, r.max_congestion);
        b->best_hb = fmin(b->best_hb, r.hop_bytes);
        return;
    }
    for (int u = 0; u < b->nodes; u++) {
        if (b->fill[u] == b->per_node)
            continue;
        b->fill[u]++;
        b->node_of[p] = u;
        brute_all(b, p + 1);
        b->fill[u]--;
    }
}

static void check_exact(const char *netdesc, int nodes, int per_node, const char *pdesc, int equal)
{
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string(netdesc, &net));
    char inside[32];
    snprintf(inside, sizeof inside, "core:%d", per_node);
    mpitopo_machine_t *m = net_machine(net, nodes, inside);
    mpitopo_pattern_t *pat = pattern_of(pdesc);
    brute_t b = {.net = net, .pat = pat, .nodes = nodes, .per_node = per_node, .best_mc = HUGE_VAL,
                 .best_hb = HUGE_VAL};
    mpitopo_pattern_nprocs(pat, &b.nprocs);
    b.node_of = calloc((size_t)b.nprocs, sizeof *b.node_of);
    b.fill = calloc((size_t)nodes, sizeof *b.fill);
    brute_all(&b, 0);
    mpitopo_network_bound_t lb;
    OK(mpitopo_network_bound(net, m, NULL, pat, &lb));
    if (lb.max_congestion > b.best_mc * (1 + 1e-9) || lb.hop_bytes > b.best_hb * (1 + 1e-9))
        fail_msg("%s on %s: bound (MC %g, HB %g) above the optimum (%g, %g)", pdesc, netdesc,
                 lb.max_congestion, lb.hop_bytes, b.best_mc, b.best_hb);
    if (equal) {
        assert_near(lb.max_congestion, b.best_mc, 1e-9 * b.best_mc);
        assert_near(lb.hop_bytes, b.best_hb, 1e-9 * b.best_hb);
    }
    free(b.node_of);
    free(b.fill);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

static void test_brute_force(void **state)
{
    (void)state;
    /* A ring of 8 on two switches of two nodes, one uplink each: pairs of
     * neighbours per node, halves per switch reach both bounds. */
    check_exact("fattree:2;2,2;1,1;1,1", 4, 2, "cart:8", 1);
    check_exact("fattree:2;2,2;1,1;1,1", 4, 2, "cart:4x2:weights=3,1", 1);
    check_exact("ktree:2,2", 4, 2, "cart:2x4", 1);
    /* all-to-all in columns of 4: a node's pair sends 2 x 2 */
    check_exact("fattree:2;2,2;1,1;1,1", 4, 2, "alltoall:4x2:1,0", 1);
    check_exact("torus:2x2", 4, 2, "cart:8:open", 0);
    /* fewer processes than leaves */
    check_exact("fattree:2;2,2;1,1;1,1", 4, 3, "cart:8", 0);
}

/* Issue 17's 2-D 5-point weighted halo at 1,024 processes on GPC: any set
 * of 8 sends at least 20 (a 4x2 tile), block's 1x8 strips 50 over one
 * link, so the bound is exactly 0.4 of block's MC (and ptram reaches it). */
static void test_issue17_weighted_halo(void **state)
{
    (void)state;
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("gpc", &net));
    mpitopo_machine_t *m = net_machine(net, 128, "core:8");
    mpitopo_pattern_t *pat = pattern_of("cart:32x32:weights=3,1");
    int *leaf = malloc(1024 * sizeof *leaf);
    for (int p = 0; p < 1024; p++)
        leaf[p] = p;
    mpitopo_network_metrics_t blk = metrics_of(net, m, pat, leaf, NULL);
    mpitopo_network_bound_t lb;
    OK(mpitopo_network_bound(net, m, NULL, pat, &lb));
    assert_true(lb.found);
    assert_near(blk.max_congestion, 50.0, 1e-9);
    assert_near(lb.injection, 20.0, 1e-9);
    assert_near(lb.max_congestion / blk.max_congestion, 0.4, 1e-9);
    assert_true(lb.hop_bytes <= blk.hop_bytes);
    free(leaf);
    mpitopo_pattern_destroy(&pat);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

static void test_not_cartesian_and_errors(void **state)
{
    (void)state;
    mpitopo_network_t *net = NULL;
    OK(mpitopo_network_from_string("ktree:2,2", &net));
    mpitopo_machine_t *m = net_machine(net, 4, "core:2");
    mpitopo_pattern_t *pat = random_pattern(8, 0.5, 3), *big = pattern_of("cart:3x3");
    mpitopo_network_bound_t lb;
    OK(mpitopo_network_bound(net, m, NULL, pat, &lb));
    assert_int_equal(lb.found, 0);
    assert_true(lb.max_congestion == 0 && lb.hop_bytes == 0 && lb.group_level == -1);
    FAILS(mpitopo_network_bound(NULL, m, NULL, pat, &lb), MPITOPO_ERR_ARG, "network");
    FAILS(mpitopo_network_bound(net, m, NULL, pat, NULL), MPITOPO_ERR_ARG, "bound");
    FAILS(mpitopo_network_bound(net, m, NULL, big, &lb), MPITOPO_ERR_ARG, "leaves");
    int ends[4] = {0, 1, 2, 4};
    FAILS(mpitopo_network_bound(net, m, ends, pat, &lb), MPITOPO_ERR_RANGE, "end_node[3]");
    mpitopo_pattern_destroy(&pat);
    mpitopo_pattern_destroy(&big);
    mpitopo_machine_destroy(&m);
    mpitopo_network_destroy(&net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_below_every_mapping),
        cmocka_unit_test(test_brute_force),
        cmocka_unit_test(test_issue17_weighted_halo),
        cmocka_unit_test(test_not_cartesian_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
