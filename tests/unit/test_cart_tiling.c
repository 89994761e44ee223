/* Issue 14: the cart mapper against non-box tilings, every other mapper,
 * and the true node-level lower bound. */
#include "unit.h"

#include <stdio.h>

/* Map with `spec` from a block launch (never worse) and return the metrics. */
static void map_with(const char *spec, const mpitopo_machine_t *m, const mpitopo_pattern_t *p,
                     mpitopo_weight_t w, mpitopo_metrics_t *met)
{
    int n;
    OK(mpitopo_pattern_nprocs(p, &n));
    int *map = malloc(sizeof(int) * (size_t)n);
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.weight = w;
    opt.never_worse = 1;
    OK(mpitopo_map(spec, m, p, &opt, map, NULL));
    OK(mpitopo_metrics_compute(m, p, map, w, met));
    free(map);
}

/* The six grids of the issue: directed off-node edges of a periodic star
 * stencil from a block launch, no more than the non-box tiling's figure. */
static void test_issue_cases(void **state)
{
    (void)state;
    static const struct {
        const char *machine, *pattern;
        int64_t box, tiling, ours, bound;
    } cases[] = {
        {"node:625 core:32", "cart:160x125", 41250, 15250, 15010, 15000},
        {"node:324 core:64", "cart:32x27x24", 51840, 33568, 31392, 31104},
        {"node:250 core:12", "cart:60x50", 4000, 3500, 3500, 3500},
        {"node:2500 core:12", "cart:40x30x25", 95000, 83096, 80000, 80000},
        {"node:128 core:36", "cart:18x16x16", 10240, 9216, 8640, 8448},
        {"node:171 core:24", "cart:64x64", 3626, 3456, 3416, 3414},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        mpitopo_machine_t *m = NULL;
        mpitopo_pattern_t *p = NULL;
        OK(mpitopo_machine_from_string(cases[k].machine, &m));
        OK(mpitopo_pattern_from_string(cases[k].pattern, &p));
        mpitopo_metrics_t met;
        map_with("cart", m, p, MPITOPO_WEIGHT_BYTES, &met);
        int64_t off = met.levels[0].edges_crossing;
        if (off > cases[k].tiling || off != cases[k].ours || met.lower_bound.offnode_edges != cases[k].bound)
            fail_msg("%s on %s: cart %lld (expected %lld, <= %lld), bound %lld (expected %lld)", cases[k].pattern,
                     cases[k].machine, (long long)off, (long long)cases[k].ours, (long long)cases[k].tiling,
                     (long long)met.lower_bound.offnode_edges, (long long)cases[k].bound);
        assert_true(met.lower_bound.found);
        if (met.box_bound.found)
            assert_int_equal(met.box_bound.offnode_edges, cases[k].box);
        mpitopo_pattern_destroy(&p);
        mpitopo_machine_destroy(&m);
    }
}

typedef struct rng {
    uint64_t s;
} rng_t;

static int pick(rng_t *rng, int n)
{
    rng->s ^= rng->s << 13;
    rng->s ^= rng->s >> 7;
    rng->s ^= rng->s << 17;
    return (int)(rng->s % (uint64_t)n);
}

/* A small random case: 1-3 dimensions, up to 60 points, nodes of 1-9, a
 * partly filled last node half of the time, star, Moore or weighted. */
static void make_case(rng_t *rng, char *machine, size_t msize, char *pattern, size_t psize)
{
    int ndims = 1 + pick(rng, 3), prod = 1, n;
    n = snprintf(pattern, psize, "cart:");
    for (int i = 0; i < ndims; i++) {
        int cap = 60 / prod < 9 ? 60 / prod : 9, d = 1 + pick(rng, cap > 1 ? cap : 1);
        prod *= d;
        n += snprintf(pattern + n, psize - (size_t)n, "%s%d", i ? "x" : "", d);
    }
    n += snprintf(pattern + n, psize - (size_t)n, ":periods=");
    for (int i = 0; i < ndims; i++)
        n += snprintf(pattern + n, psize - (size_t)n, "%s%d", i ? "," : "", pick(rng, 2));
    static const char *const stencils[] = {"", ":moore=1", ":star=2"};
    int st = pick(rng, 4);
    if (st < 3)
        snprintf(pattern + n, psize - (size_t)n, "%s", stencils[st]);
    else
        snprintf(pattern + n, psize - (size_t)n, ":weights=%s", ndims == 1 ? "3" : ndims == 2 ? "4,1" : "1,5,2");
    int ppn = 1 + pick(rng, 9), nodes = (prod + ppn - 1) / ppn;
    if (pick(rng, 2) && prod % ppn == 0 && ppn > 1)
        nodes++; /* a spare node: fewer processes than leaves */
    if (pick(rng, 4) == 0 && ppn % 2 == 0)
        snprintf(machine, msize, "node:%d socket:2 core:%d", nodes, ppn / 2);
    else
        snprintf(machine, msize, "node:%d core:%d", nodes, ppn);
}

static void test_property(void **state)
{
    (void)state;
    const char *mappers[] = {"identity", "block", "rr", "random:5", "tree", "metis", "scotch"};
    int have[7];
    for (int k = 0; k < 7; k++) {
        const mpitopo_mapper_t *info;
        have[k] = mpitopo_mapper_find(mappers[k], &info) == MPITOPO_SUCCESS;
    }
    rng_t rng = {0x2545f4914f6cdd1dull};
    /* The issue asks for >= 1,000 cases; under ASan (about 5x slower) a
     * prefix of the same sequence keeps the suite fast. */
    int cases = UNIT_SANITIZED ? 400 : 1000;
    for (int c = 0; c < cases; c++) {
        char machine[96], pattern[96];
        make_case(&rng, machine, sizeof machine, pattern, sizeof pattern);
        mpitopo_machine_t *m = NULL;
        mpitopo_pattern_t *p = NULL;
        OK(mpitopo_machine_from_string(machine, &m));
        OK(mpitopo_pattern_from_string(pattern, &p));
        mpitopo_weight_t w = c % 2 ? MPITOPO_WEIGHT_BYTES : MPITOPO_WEIGHT_UNIT;
        mpitopo_metrics_t cart, other;
        map_with("cart", m, p, w, &cart);
        assert_true(cart.lower_bound.found);
        for (int k = -1; k < 7; k++) {
            const mpitopo_metrics_t *x = &cart;
            if (k >= 0 && !have[k])
                continue;
            if (k >= 0) {
                map_with(mappers[k], m, p, w, &other);
                x = &other;
                if (cart.cost > x->cost * (1 + 1e-12))
                    fail_msg("%s on %s: cart costs %g, %s %g", pattern, machine, cart.cost, mappers[k], x->cost);
            }
            if (x->levels[0].weight_crossing < cart.lower_bound.offnode_weight ||
                x->levels[0].edges_crossing < cart.lower_bound.offnode_edges)
                fail_msg("%s on %s: %s cuts %lld edges, weight %g, under the bound %lld, %g", pattern, machine,
                         k < 0 ? "cart" : mappers[k], (long long)x->levels[0].edges_crossing,
                         x->levels[0].weight_crossing, (long long)cart.lower_bound.offnode_edges,
                         cart.lower_bound.offnode_weight);
        }
        mpitopo_pattern_destroy(&p);
        mpitopo_machine_destroy(&m);
    }
}

typedef struct alloc_case {
    const char *machine, *pattern;
} alloc_case_t;

/* Map with cart, then compute the metrics (which run the lower bound). */
static int map_and_bound(void *ctx)
{
    const alloc_case_t *c = ctx;
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    int map[64];
    mpitopo_metrics_t met;
    mpitopo_node_bound_t lb;
    int rc = mpitopo_machine_from_string(c->machine, &m);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_pattern_from_string(c->pattern, &p);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_map("cart", m, p, NULL, map, NULL);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_metrics_compute(m, p, map, MPITOPO_WEIGHT_BYTES, &met);
    if (rc == MPITOPO_SUCCESS)
        rc = mpitopo_cart_node_bound(m, p, MPITOPO_WEIGHT_UNIT, &lb);
    if (rc == MPITOPO_SUCCESS && (!met.lower_bound.found || !lb.found))
        rc = MPITOPO_ERR_INTERNAL;
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
    return rc;
}

/* Every allocation of the strip path, the candidate choice and the lower
 * bound fails in turn: a clean MPITOPO_ERR_NOMEM, nothing leaked. */
static void test_allocation_failures(void **state)
{
    (void)state;
    static const alloc_case_t cases[] = {
        /* Strips reach the bound (100 edges): the graph mappers are skipped. */
        {"node:10 core:6", "cart:12x5"},
        /* Strips (90 edges, bound 84): tree and METIS run as candidates too. */
        {"node:7 core:9", "cart:9x7"},
        /* 25 processes on 28 leaves: strips, and the bound of a partial machine. */
        {"node:4 core:7", "cart:5x5:moore=1"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        alloc_case_t c = cases[k];
        OK(map_and_bound(&c));
        assert_true(unit_each_allocation_fails(c.pattern, map_and_bound, &c) > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_cases),
        cmocka_unit_test(test_property),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
