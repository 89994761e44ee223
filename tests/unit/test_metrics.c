/* Metrics against brute force, Table 3 of Gropp (EuroMPI'18), the best-box
 * bound against exhaustive tilings. */
#include "unit.h"

#include <math.h>

/* Naive unit comparison through the public API. */
static int naive_meet(const mpitopo_machine_t *m, int a, int b)
{
    int nlevels;
    mpitopo_machine_nlevels(m, &nlevels);
    for (int l = 0; l < nlevels; l++) {
        int ua, ub;
        mpitopo_machine_unit_of(m, l, a, &ua);
        mpitopo_machine_unit_of(m, l, b, &ub);
        if (ua != ub)
            return l;
    }
    return nlevels;
}

/* Recompute every metric with O(P^2) memory and compare. */
static void check_against_brute_force(const mpitopo_machine_t *m, const mpitopo_pattern_t *pat, const int *map,
                                      mpitopo_weight_t w)
{
    int n, nlevels, node_level;
    mpitopo_pattern_nprocs(pat, &n);
    mpitopo_machine_nlevels(m, &nlevels);
    mpitopo_machine_node_level(m, &node_level);
    mpitopo_metrics_t got;
    OK(mpitopo_metrics_compute(m, pat, map, w, &got));

    char *adj = calloc((size_t)n * n, 1);
    double cost = 0, wcross[MPITOPO_MAX_LEVELS] = {0};
    long long ecross[MPITOPO_MAX_LEVELS] = {0};
    for (int p = 0; p < n; p++) {
        int deg;
        const int *dst;
        const double *bytes, *msgs;
        OK(mpitopo_pattern_out_edges(pat, p, &deg, &dst, &bytes, &msgs));
        for (int i = 0; i < deg; i++) {
            int q = dst[i];
            double wt = w == MPITOPO_WEIGHT_BYTES ? bytes[i] : w == MPITOPO_WEIGHT_MESSAGES ? msgs[i] : 1;
            adj[(size_t)p * n + q] = adj[(size_t)q * n + p] = 1;
            double c;
            OK(mpitopo_machine_cost(m, map[p], map[q], &c));
            cost += wt * c;
            int meet = naive_meet(m, map[p], map[q]);
            for (int l = meet; l < nlevels; l++) {
                ecross[l]++;
                wcross[l] += wt;
            }
        }
    }
    double on_sum = 0, off_sum = 0, on_min = 1e300, off_min = 1e300, on_max = -1, off_max = -1;
    for (int p = 0; p < n; p++) {
        int on = 0, off = 0;
        for (int q = 0; q < n; q++) {
            if (q == p || !adj[(size_t)p * n + q])
                continue;
            int same = node_level < 0 || naive_meet(m, map[p], map[q]) > node_level;
            same ? on++ : off++;
        }
        on_sum += on, off_sum += off;
        on_min = fmin(on_min, on), off_min = fmin(off_min, off);
        on_max = fmax(on_max, on), off_max = fmax(off_max, off);
    }
    free(adj);
    assert_float_equal(got.cost, cost, 1e-9 * (1 + cost));
    assert_float_equal(got.onnode_partners.avg, on_sum / n, 1e-12);
    assert_float_equal(got.offnode_partners.avg, off_sum / n, 1e-12);
    assert_float_equal(got.onnode_partners.min, on_min, 0);
    assert_float_equal(got.offnode_partners.max, off_max, 0);
    assert_float_equal(got.onnode_partners.max, on_max, 0);
    assert_float_equal(got.offnode_partners.min, off_min, 0);
    for (int l = 0; l < nlevels; l++) {
        assert_int_equal(got.levels[l].edges_crossing, ecross[l]);
        assert_float_equal(got.levels[l].weight_crossing, wcross[l], 1e-9 * (1 + wcross[l]));
        assert_true(got.levels[l].max_edges_per_unit * got.levels[l].nunits >= got.levels[l].edges_crossing);
    }
}

static void test_brute_force_regular(void **state)
{
    (void)state;
    const char *machines[] = {"node:4 core:4", "switch:2 node:3 socket:2 core:2", "core:12", "node:12 core:1"};
    const char *patterns[] = {"random:12:0.3:5", "ring:12:3", "cart:3x4:moore=1", "cart:2x2x3:open", "complete:12"};
    for (size_t i = 0; i < sizeof machines / sizeof *machines; i++) {
        for (size_t j = 0; j < sizeof patterns / sizeof *patterns; j++) {
            mpitopo_machine_t *m = NULL;
            mpitopo_pattern_t *p = NULL;
            OK(mpitopo_machine_from_string(machines[i], &m));
            OK(mpitopo_pattern_from_string(patterns[j], &p));
            int nleaves, map[64];
            mpitopo_machine_nleaves(m, &nleaves);
            for (int seed = 0; seed < 4; seed++) {
                char spec[32];
                snprintf(spec, sizeof spec, "random:%d", seed);
                OK(mpitopo_placement(m, 12, seed ? spec : "block", map));
                for (int w = 0; w < 3; w++)
                    check_against_brute_force(m, p, map, (mpitopo_weight_t)w);
            }
            mpitopo_pattern_destroy(&p);
            mpitopo_machine_destroy(&m);
        }
    }
}

static void test_brute_force_irregular(void **state)
{
    (void)state;
    /* 3 nodes of 5, 2 and 4 processes, entries in scattered order. */
    const char *names[] = {"node", "core"};
    int paths[] = {2, 0, 0, 0, 1, 1, 0, 1, 2, 3, 0, 2, 1, 0, 2, 1, 0, 3, 2, 2, 0, 4};
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_paths(2, names, NULL, 11, paths, &m, NULL));
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_random(9, 0.4, 3, &p));
    int map[9];
    OK(mpitopo_placement(m, 9, "rr", map));
    check_against_brute_force(m, p, map, MPITOPO_WEIGHT_BYTES);
    OK(mpitopo_placement(m, 9, "random:11", map));
    check_against_brute_force(m, p, map, MPITOPO_WEIGHT_UNIT);
    mpitopo_metrics_t met;
    OK(mpitopo_metrics_compute(m, p, map, MPITOPO_WEIGHT_BYTES, &met));
    assert_int_equal(met.box_bound.found, 0);
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

/* Table 3 of Gropp, EuroMPI'18: MPI_Cart_create (identity) rows and the
 * node-aware rows, which the best-box bound reaches. */
static void check_table3(const char *pattern, double off_min, double off_max, double off_avg, double on_min,
                         double on_max, double on_avg, double box_off_avg)
{
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_machine_from_string("node:1024 core:16", &m));
    OK(mpitopo_pattern_from_string(pattern, &p));
    mpitopo_metrics_t met;
    OK(mpitopo_metrics_compute(m, p, NULL, MPITOPO_WEIGHT_BYTES, &met));
    assert_float_equal(met.offnode_partners.min, off_min, 0);
    assert_float_equal(met.offnode_partners.max, off_max, 0);
    assert_float_equal(met.offnode_partners.avg, off_avg, 1e-12);
    assert_float_equal(met.onnode_partners.min, on_min, 0);
    assert_float_equal(met.onnode_partners.max, on_max, 0);
    assert_float_equal(met.onnode_partners.avg, on_avg, 1e-12);
    assert_true(met.box_bound.found);
    assert_float_equal(met.box_bound.offnode_partners_avg, box_off_avg, 1e-12);
    assert_true(met.box_bound.offnode_edges <= met.levels[0].edges_crossing);
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

static void test_table3(void **state)
{
    (void)state;
    check_table3("cart:128x128", 2, 3, 2.125, 1, 2, 1.875, 1.0);
    check_table3("cart:16x32x32", 4, 5, 4.125, 1, 2, 1.875, 2.5);
}

/* Exhaustive: tile with every box shape through an explicit mapping on a
 * node:N core:ppn machine and take the best. */
static double exhaustive_box(const char *pattern, int ppn, mpitopo_weight_t w, int *found)
{
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_from_string(pattern, &p));
    int n, ndims, dims[MPITOPO_MAX_DIMS], periods[MPITOPO_MAX_DIMS], is_cart;
    mpitopo_pattern_nprocs(p, &n);
    OK(mpitopo_pattern_cart_info(p, &is_cart, &ndims, dims, periods));
    char desc[64];
    snprintf(desc, sizeof desc, "node:%d core:%d", n / ppn, ppn);
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string(desc, &m));
    double best = INFINITY;
    *found = 0;
    int *map = malloc((size_t)n * sizeof *map), *fill = calloc((size_t)n, sizeof *fill);
    /* Box shapes of a 2-D or 3-D grid. */
    for (int b0 = 1; b0 <= dims[0]; b0++)
        for (int b1 = 1; b1 <= (ndims > 1 ? dims[1] : 1); b1++)
            for (int b2 = 1; b2 <= (ndims > 2 ? dims[2] : 1); b2++) {
                int b[3] = {b0, b1, b2};
                if (b0 * b1 * b2 != ppn)
                    continue;
                int ok = 1;
                for (int i = 0; i < ndims; i++)
                    ok &= dims[i] % b[i] == 0;
                if (!ok)
                    continue;
                memset(fill, 0, (size_t)n * sizeof *fill);
                for (int r = 0; r < n; r++) {
                    int c[3] = {0, 0, 0}, rest = r, node = 0;
                    for (int i = ndims - 1; i >= 0; i--)
                        c[i] = rest % dims[i], rest /= dims[i];
                    for (int i = 0; i < ndims; i++)
                        node = node * (dims[i] / b[i]) + c[i] / b[i];
                    map[r] = node * ppn + fill[node]++;
                }
                mpitopo_metrics_t met;
                OK(mpitopo_metrics_compute(m, p, map, w, &met));
                *found = 1;
                best = fmin(best, met.levels[0].weight_crossing);
            }
    free(map);
    free(fill);
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
    return best;
}

static void test_box_bound_exhaustive(void **state)
{
    (void)state;
    struct { const char *pattern; int ppn; } cases[] = {
        {"cart:8x8", 4}, {"cart:8x8:open", 8}, {"cart:6x4:moore=1", 6}, {"cart:4x6x2", 4},
        {"cart:2x6:star=2", 4}, {"cart:2x2x4", 8}, {"cart:12x3:moore=2:open", 6},
        {"cart:4x4:offsets=1,0;0,1;2,1:bytes=3", 4}, {"cart:8x9:weights=5,1", 6}, {"cart:5x7", 5},
        {"cart:4x4:offsets=1,0;1,0;0,1:open", 4}, {"cart:3x4:offsets=3,0;0,1", 4}, {"cart:2x2x4:moore=1", 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        for (int w = 0; w < 3; w++) {
            int found;
            double best = exhaustive_box(cases[i].pattern, cases[i].ppn, (mpitopo_weight_t)w, &found);
            mpitopo_pattern_t *p = NULL;
            OK(mpitopo_pattern_from_string(cases[i].pattern, &p));
            mpitopo_box_bound_t bb;
            OK(mpitopo_cart_box_bound(p, cases[i].ppn, (mpitopo_weight_t)w, &bb));
            assert_int_equal(bb.found, found);
            if (found && fabs(bb.offnode_weight - best) > 1e-9)
                fail_msg("%s ppn %d weight %d: bound %g, exhaustive %g", cases[i].pattern, cases[i].ppn, w,
                         bb.offnode_weight, best);
            mpitopo_pattern_destroy(&p);
        }
    }
}

static void test_box_bound_none(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    mpitopo_box_bound_t bb;
    OK(mpitopo_pattern_from_string("cart:10x10", &p));
    OK(mpitopo_cart_box_bound(p, 7, MPITOPO_WEIGHT_BYTES, &bb)); /* 7 divides no side */
    assert_int_equal(bb.found, 0);
    OK(mpitopo_cart_box_bound(p, 100, MPITOPO_WEIGHT_BYTES, &bb)); /* one node: nothing off-node */
    assert_int_equal(bb.found, 1);
    assert_int_equal(bb.offnode_edges, 0);
    FAILS(mpitopo_cart_box_bound(p, 0, MPITOPO_WEIGHT_BYTES, &bb), MPITOPO_ERR_ARG, "procs_per_node = 0");
    mpitopo_pattern_t *r = NULL;
    OK(mpitopo_pattern_rings(10, 5, &r));
    FAILS(mpitopo_cart_box_bound(r, 5, MPITOPO_WEIGHT_BYTES, &bb), MPITOPO_ERR_ARG, "mpitopo_pattern_cart");
    mpitopo_pattern_destroy(&r);
    mpitopo_pattern_destroy(&p);
}

static void test_errors(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL, *big = NULL;
    OK(mpitopo_machine_from_string("node:2 core:2", &m));
    OK(mpitopo_pattern_rings(4, 2, &p));
    OK(mpitopo_pattern_rings(5, 5, &big));
    mpitopo_metrics_t met;
    int dup[4] = {0, 1, 1, 3}, out[4] = {0, 1, 2, 9};
    FAILS(mpitopo_metrics_compute(NULL, p, NULL, MPITOPO_WEIGHT_BYTES, &met), MPITOPO_ERR_ARG, "machine");
    FAILS(mpitopo_metrics_compute(m, p, dup, MPITOPO_WEIGHT_BYTES, &met), MPITOPO_ERR_ARG, "leaf_of_proc[2] = 1");
    FAILS(mpitopo_metrics_compute(m, p, out, MPITOPO_WEIGHT_BYTES, &met), MPITOPO_ERR_RANGE, "leaf_of_proc[3] = 9");
    FAILS(mpitopo_metrics_compute(m, p, NULL, (mpitopo_weight_t)7, &met), MPITOPO_ERR_ARG, "weight = 7");
    FAILS(mpitopo_metrics_compute(m, big, NULL, MPITOPO_WEIGHT_BYTES, &met), MPITOPO_ERR_ARG, "5 processes");
    double c;
    FAILS(mpitopo_metrics_cost(m, p, NULL, MPITOPO_WEIGHT_BYTES, NULL), MPITOPO_ERR_ARG, "output");
    OK(mpitopo_metrics_cost(m, p, NULL, MPITOPO_WEIGHT_BYTES, &c));
    assert_float_equal(c, 4, 0); /* 4 edges, all inside a node: each costs the core level's default 1 */
    mpitopo_pattern_destroy(&big);
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

typedef struct metrics_run {
    mpitopo_machine_t *m;
    mpitopo_pattern_t *p;
} metrics_run_t;

static int run_metrics(void *ctx)
{
    metrics_run_t *r = ctx;
    mpitopo_metrics_t met;
    return mpitopo_metrics_compute(r->m, r->p, NULL, MPITOPO_WEIGHT_BYTES, &met);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    metrics_run_t r = {NULL, NULL};
    OK(mpitopo_machine_from_string("node:4 core:4", &r.m));
    OK(mpitopo_pattern_from_string("cart:4x4", &r.p));
    assert_true(unit_each_allocation_fails("mpitopo_metrics_compute", run_metrics, &r) > 3);
    mpitopo_pattern_destroy(&r.p);
    mpitopo_machine_destroy(&r.m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_brute_force_regular), cmocka_unit_test(test_brute_force_irregular),
        cmocka_unit_test(test_table3),              cmocka_unit_test(test_box_bound_exhaustive),
        cmocka_unit_test(test_box_bound_none),      cmocka_unit_test(test_errors),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
