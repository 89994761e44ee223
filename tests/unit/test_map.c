/* Launch placements, the mapper driver, the never-worse guard and keeping
 * rank 0 on its process. */
#include "unit.h"
#include "map/map_internal.h"

#include <math.h>

static int count_on_node(const mpitopo_machine_t *m, const int *map, int n, int node)
{
    int node_level, c = 0;
    mpitopo_machine_node_level(m, &node_level);
    for (int p = 0; p < n; p++) {
        int u;
        OK(mpitopo_machine_unit_of(m, node_level, map[p], &u));
        c += u == node;
    }
    return c;
}

static void test_block_and_rr(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string("node:4 core:3", &m));
    int map[12];
    OK(mpitopo_placement(m, 12, "block", map));
    for (int p = 0; p < 12; p++)
        assert_int_equal(map[p], p);
    OK(mpitopo_placement(m, 12, "rr", map));
    for (int p = 0; p < 12; p++) {
        int node;
        OK(mpitopo_machine_unit_of(m, 0, map[p], &node));
        assert_int_equal(node, p % 4);
    }
    OK(mpitopo_mapping_check(m, 12, map));
    /* Fewer processes than leaves: rr still spreads them. */
    OK(mpitopo_placement(m, 6, "rr", map));
    assert_int_equal(count_on_node(m, map, 6, 0), 2);
    assert_int_equal(count_on_node(m, map, 6, 3), 1);
    mpitopo_machine_destroy(&m);
}

static void test_rr_uneven(void **state)
{
    (void)state;
    /* Nodes of 1, 4 and 2 leaves: rr skips full nodes. */
    const char *names[] = {"node", "core"};
    int paths[] = {0, 0, 1, 0, 1, 1, 1, 2, 1, 3, 2, 0, 2, 1};
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_paths(2, names, NULL, 7, paths, &m, NULL));
    int map[7];
    OK(mpitopo_placement(m, 7, "rr", map));
    OK(mpitopo_mapping_check(m, 7, map));
    int expect_node[7] = {0, 1, 2, 1, 2, 1, 1};
    for (int p = 0; p < 7; p++) {
        int node;
        OK(mpitopo_machine_unit_of(m, 0, map[p], &node));
        assert_int_equal(node, expect_node[p]);
    }
    mpitopo_machine_destroy(&m);
}

static void test_random(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string("node:8 core:8", &m));
    int a[64], b[64], c[40];
    OK(mpitopo_placement(m, 64, "random:5", a));
    OK(mpitopo_placement(m, 64, "random:5", b));
    assert_memory_equal(a, b, sizeof a);
    OK(mpitopo_mapping_check(m, 64, a));
    OK(mpitopo_placement(m, 64, "random:6", b));
    assert_memory_not_equal(a, b, sizeof a);
    OK(mpitopo_placement(m, 40, "random:6", c));
    OK(mpitopo_mapping_check(m, 40, c));
    FAILS(mpitopo_placement(m, 64, "random:x", a), MPITOPO_ERR_PARSE, "random:x");
    FAILS(mpitopo_placement(m, 64, "cyclic", a), MPITOPO_ERR_PARSE, "cyclic");
    FAILS(mpitopo_placement(m, 65, "block", a), MPITOPO_ERR_ARG, "nprocs = 65");
    mpitopo_machine_destroy(&m);
}

static void test_registry(void **state)
{
    (void)state;
    assert_true(mpitopo_mapper_count() >= 4);
    const mpitopo_mapper_t *mp;
    OK(mpitopo_mapper_find("rr", &mp));
    assert_string_equal(mp->name, "rr");
    FAILS(mpitopo_mapper_find("nope", &mp), MPITOPO_ERR_NOT_FOUND, "known: identity, block, rr, random");
    assert_null(mpitopo_mapper_at(-1));
    assert_null(mpitopo_mapper_at(mpitopo_mapper_count()));
    for (int i = 0; i < mpitopo_mapper_count(); i++)
        assert_non_null(mpitopo_mapper_at(i)->summary);
}

static void test_map_driver(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_machine_from_string("node:4 core:4", &m));
    OK(mpitopo_pattern_rings(16, 4, &p));
    int rr[16], out[16], kept = -1;
    OK(mpitopo_placement(m, 16, "rr", rr));
    mpitopo_map_options_t o = MPITOPO_MAP_OPTIONS_INIT;
    o.launch = rr;
    OK(mpitopo_map("identity", m, p, &o, out, &kept));
    assert_memory_equal(out, rr, sizeof rr);
    assert_int_equal(kept, 0);
    /* Block beats rr for rings of one node's size; the guard lets it through. */
    o.never_worse = 1;
    OK(mpitopo_map("block", m, p, &o, out, &kept));
    assert_int_equal(kept, 0);
    for (int i = 0; i < 16; i++)
        assert_int_equal(out[i], i);
    /* From a block launch, random cannot beat it: the launch is kept. */
    o.launch = NULL;
    OK(mpitopo_map("random:3", m, p, &o, out, &kept));
    assert_int_equal(kept, 1);
    for (int i = 0; i < 16; i++)
        assert_int_equal(out[i], i);
    FAILS(mpitopo_map("random:-2", m, p, &o, out, NULL), MPITOPO_ERR_ARG, "SEED = \"-2\"");
    /* One parser for SEED: an empty one is refused by the mapper as by
     * mpitopo_placement, which shares it (issue 15). */
    FAILS(mpitopo_map("random:", m, p, &o, out, NULL), MPITOPO_ERR_ARG, "SEED = \"\"");
    FAILS(mpitopo_placement(m, 16, "random:", out), MPITOPO_ERR_PARSE, "random:SEED");
    FAILS(mpitopo_map("random: 3", m, p, &o, out, NULL), MPITOPO_ERR_ARG, "SEED = \" 3\"");
    FAILS(mpitopo_placement(m, 16, "random:9223372036854775808", out), MPITOPO_ERR_PARSE, "random:SEED");
    OK(mpitopo_placement(m, 16, "random:9223372036854775807", out));
    OK(mpitopo_map("random:9223372036854775807", m, p, &o, out, NULL));
    FAILS(mpitopo_map("block:zzz", m, p, &o, out, NULL), MPITOPO_ERR_ARG, "takes no argument");
    o.weight = (mpitopo_weight_t)7;
    FAILS(mpitopo_map("block", m, p, &o, out, NULL), MPITOPO_ERR_ARG, "options->weight = 7");
    o.weight = MPITOPO_WEIGHT_BYTES;
    FAILS(mpitopo_map("treematch", m, p, &o, out, NULL), MPITOPO_ERR_NOT_FOUND, "treematch");
    FAILS(mpitopo_map(NULL, m, p, &o, out, NULL), MPITOPO_ERR_ARG, "spec");
    int bad[16];
    memcpy(bad, rr, sizeof bad);
    bad[3] = bad[4];
    o.launch = bad;
    FAILS(mpitopo_map("block", m, p, &o, out, NULL), MPITOPO_ERR_ARG, "options->launch");
    mpitopo_pattern_t *big = NULL;
    OK(mpitopo_pattern_complete(17, &big));
    FAILS(mpitopo_map("block", m, big, NULL, out, NULL), MPITOPO_ERR_ARG, "17 processes");
    mpitopo_pattern_destroy(&big);
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

typedef struct map_run {
    mpitopo_machine_t *m;
    mpitopo_pattern_t *p;
} map_run_t;

static int run_map(void *ctx)
{
    map_run_t *r = ctx;
    mpitopo_map_options_t o = MPITOPO_MAP_OPTIONS_INIT;
    o.never_worse = 1;
    int out[16];
    return mpitopo_map("random:1", r->m, r->p, &o, out, NULL);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    map_run_t r = {NULL, NULL};
    OK(mpitopo_machine_from_string("node:4 core:4", &r.m));
    OK(mpitopo_pattern_rings(16, 4, &r.p));
    assert_true(unit_each_allocation_fails("mpitopo_map", run_map, &r) >= 3);
    mpitopo_pattern_destroy(&r.p);
    mpitopo_machine_destroy(&r.m);
}


/* A random permutation of the leaves' first n (Fisher-Yates, LCG). */
static void random_mapping(uint64_t *x, int nleaves, int n, int *map)
{
    int *perm = malloc((size_t)nleaves * sizeof *perm);
    assert_non_null(perm);
    for (int i = 0; i < nleaves; i++)
        perm[i] = i;
    for (int i = nleaves - 1; i > 0; i--) {
        *x = *x * 6364136223846793005ull + 1442695040888963407ull;
        int j = (int)((*x >> 33) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    memcpy(map, perm, (size_t)n * sizeof *map);
    free(perm);
}

/* Rank 0 back on its process: on a symmetric machine by a relabelling
 * that never changes the cost (checked against the mapper's mapping for
 * many random mappings and patterns); on a machine with nodes of different
 * sizes it may cost, which is reported, and the result is never dearer
 * than the launch placement or the plain exchange of two roles. */
static void test_keep_rank0(void **state)
{
    (void)state;
    const char *machines[] = {"node:3 core:4", "switch:2 node:2 socket:2 core:3", "node:4 core:2"};
    uint64_t x = 42;
    for (int mi = 0; mi < 3; mi++) {
        mpitopo_machine_t *m = NULL;
        OK(mpitopo_machine_from_string(machines[mi], &m));
        int nl;
        OK(mpitopo_machine_nleaves(m, &nl));
        for (int trial = 0; trial < 40; trial++) {
            int n = trial % 2 ? nl : nl - 1; /* full, and one leaf free */
            mpitopo_pattern_t *pat = NULL;
            OK(mpitopo_pattern_random(n, 0.4, (uint64_t)trial + 1, &pat));
            int *launch = malloc((size_t)n * sizeof *launch), *map = malloc((size_t)n * sizeof *map);
            int *orig = malloc((size_t)n * sizeof *orig);
            random_mapping(&x, nl, n, launch);
            random_mapping(&x, nl, n, map);
            memcpy(orig, map, (size_t)n * sizeof *map);
            double before, after;
            OK(mpitopo_metrics_cost(m, pat, map, MPITOPO_WEIGHT_BYTES, &before));
            mpitopo__rank0_t r0;
            OK(mpitopo__map_keep_rank0(m, pat, MPITOPO_WEIGHT_BYTES, n, launch, 0, map, &r0));
            OK(mpitopo_mapping_check(m, n, map));
            assert_int_equal(map[0], launch[0]);
            OK(mpitopo_metrics_cost(m, pat, map, MPITOPO_WEIGHT_BYTES, &after));
            assert_false(r0.costly);
            assert_true(fabs(after - before) <= 1e-9 * fmax(1, before));
            /* move: left as the mapper made it */
            memcpy(map, orig, (size_t)n * sizeof *map);
            OK(mpitopo__map_keep_rank0(m, pat, MPITOPO_WEIGHT_BYTES, n, launch, 1, map, &r0));
            assert_memory_equal(map, orig, (size_t)n * sizeof *map);
            assert_int_equal(r0.moved, orig[0] != launch[0]);
            mpitopo_pattern_destroy(&pat);
            free(launch);
            free(map);
            free(orig);
        }
        mpitopo_machine_destroy(&m);
    }
    /* Nodes of 1 and 3 leaves, a ring of 4 mapped with role 0 on the big
     * node: no relabelling exists (the units differ in size), and pinning
     * it costs. Brute force over the 24 mappings with role 0 on leaf 0
     * gives the least cost of a pinned mapping; the result is no dearer
     * than the exchange and the launch, and reported as costly. */
    const char *names[] = {"node", "core"};
    int paths[] = {0, 0, 1, 0, 1, 1, 1, 2};
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_paths(2, names, NULL, 4, paths, &m, NULL));
    mpitopo_pattern_t *ring = NULL;
    OK(mpitopo_pattern_from_string("ring:4:4", &ring));
    int launch[4] = {0, 1, 2, 3}, map[4] = {1, 2, 3, 0}, swapped[4] = {0, 2, 3, 1};
    double c_launch, c_map, c_swap, c_kept;
    OK(mpitopo_metrics_cost(m, ring, launch, MPITOPO_WEIGHT_BYTES, &c_launch));
    OK(mpitopo_metrics_cost(m, ring, map, MPITOPO_WEIGHT_BYTES, &c_map));
    OK(mpitopo_metrics_cost(m, ring, swapped, MPITOPO_WEIGHT_BYTES, &c_swap));
    mpitopo__rank0_t r0;
    OK(mpitopo__map_keep_rank0(m, ring, MPITOPO_WEIGHT_BYTES, 4, launch, 0, map, &r0));
    assert_int_equal(map[0], 0);
    OK(mpitopo_mapping_check(m, 4, map));
    OK(mpitopo_metrics_cost(m, ring, map, MPITOPO_WEIGHT_BYTES, &c_kept));
    assert_true(c_kept <= c_launch && c_kept <= c_swap);
    assert_true(fabs(r0.cost_kept - c_kept) < 1e-9 && fabs(r0.cost_mapped - c_map) < 1e-9);
    assert_int_equal(r0.costly, c_kept > c_map + 1e-9);
    mpitopo_pattern_destroy(&ring);
    mpitopo_machine_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_and_rr), cmocka_unit_test(test_rr_uneven),  cmocka_unit_test(test_random),
        cmocka_unit_test(test_registry),     cmocka_unit_test(test_map_driver), cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_keep_rank0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
