/* The "tree" mapper: valid placements, the brute-force optimum on tiny
 * cases, the cart mapper's optimum on grids, the rings of Mercier & Jeannot
 * kept inside nodes, irregular machines, fewer processes than leaves, both
 * weights, and no leak on allocation failure. */
#include "unit.h"

#include <stdio.h>

static const char *const modes[] = {"tree", "tree:topdown", "tree:bottomup"};
#define NMODES 3

static double cost_of(const mpitopo_machine_t *m, const mpitopo_pattern_t *p, const int *map, mpitopo_weight_t w)
{
    double c;
    OK(mpitopo_metrics_cost(m, p, map, w, &c));
    return c;
}

/* Map with `spec` from `launch` (a placement spec) and check the result is
 * a placement no costlier than the launch; returns its cost. */
static double map_checked(const char *spec, const mpitopo_machine_t *m, const mpitopo_pattern_t *p,
                          const char *launch, mpitopo_weight_t w, int *map)
{
    int n;
    OK(mpitopo_pattern_nprocs(p, &n));
    int *start = malloc(sizeof(int) * (size_t)n);
    OK(mpitopo_placement(m, n, launch, start));
    mpitopo_map_options_t o = MPITOPO_MAP_OPTIONS_INIT;
    o.weight = w;
    o.launch = start;
    OK(mpitopo_map(spec, m, p, &o, map, NULL));
    OK(mpitopo_mapping_check(m, n, map));
    double c = cost_of(m, p, map, w);
    assert_true(c <= cost_of(m, p, start, w));
    free(start);
    return c;
}

/* Smallest cost over every placement of n processes on the n leaves. */
static void permute(const mpitopo_machine_t *m, const mpitopo_pattern_t *p, int *map, int k, int n, double *best)
{
    if (k == n) {
        double c = cost_of(m, p, map, MPITOPO_WEIGHT_BYTES);
        *best = c < *best ? c : *best;
        return;
    }
    for (int i = k; i < n; i++) {
        int t = map[k];
        map[k] = map[i];
        map[i] = t;
        permute(m, p, map, k + 1, n, best);
        map[i] = map[k];
        map[k] = t;
    }
}

/* A random weighted pattern: about `per` out-edges per process, bytes in
 * [1, 100], some self edges and duplicates among them. */
static mpitopo_pattern_t *weighted(int n, int per, unsigned seed)
{
    int ne = n * per;
    int *src = malloc(sizeof(int) * (size_t)ne), *dst = malloc(sizeof(int) * (size_t)ne);
    double *bytes = malloc(sizeof(double) * (size_t)ne);
    srand(seed);
    for (int e = 0; e < ne; e++) {
        src[e] = e / per;
        dst[e] = rand() % n;
        bytes[e] = 1 + rand() % 100;
    }
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(n, ne, src, dst, bytes, NULL, &p));
    free(src);
    free(dst);
    free(bytes);
    return p;
}

/* Two-level machines: the exact optimum. Deeper ones, where the levels'
 * costs trade against each other: within 2 % of it, and exact on most. */
static void test_brute_force(void **state)
{
    (void)state;
    const char *machines[] = {"node:2 core:4", "switch:2 node:2 core:2", "node:2@10 socket:2@3 core:2@1"};
    for (int mi = 0; mi < 3; mi++) {
        mpitopo_machine_t *m = NULL;
        OK(mpitopo_machine_from_string(machines[mi], &m));
        int exact = 0;
        for (unsigned seed = 1; seed <= 10; seed++) {
            mpitopo_pattern_t *p = weighted(8, 2, seed);
            int map[8], leaves[8];
            for (int i = 0; i < 8; i++)
                leaves[i] = i;
            double best = 1e300;
            permute(m, p, leaves, 0, 8, &best);
            double c = map_checked("tree", m, p, "rr", MPITOPO_WEIGHT_BYTES, map);
            exact += c <= best;
            if (c > (mi == 0 ? best : 1.02 * best))
                fail_msg("%s, seed %u: tree costs %g, optimum %g", machines[mi], seed, c, best);
            mpitopo_pattern_destroy(&p);
        }
        assert_true(exact >= 8);
        mpitopo_machine_destroy(&m);
    }
}

static void test_random_never_worse(void **state)
{
    (void)state;
    const char *machines[] = {"node:8 core:8", "switch:2 node:4 socket:2 core:4", "node:5 core:13"};
    for (int mi = 0; mi < 3; mi++) {
        mpitopo_machine_t *m = NULL;
        OK(mpitopo_machine_from_string(machines[mi], &m));
        int nl;
        OK(mpitopo_machine_nleaves(m, &nl));
        mpitopo_pattern_t *p = weighted(nl, 4, 7 + (unsigned)mi);
        int *map = malloc(sizeof(int) * (size_t)nl);
        for (int k = 0; k < NMODES; k++) {
            map_checked(modes[k], m, p, "block", MPITOPO_WEIGHT_BYTES, map);
            map_checked(modes[k], m, p, "rr", MPITOPO_WEIGHT_MESSAGES, map);
        }
        mpitopo_pattern_destroy(&p);
        free(map);
        mpitopo_machine_destroy(&m);
    }
}

static void test_cart_patterns(void **state)
{
    (void)state;
    const char *cases[][2] = {{"node:64 core:16", "cart:32x32"},
                              {"switch:4 node:16 socket:2 core:8", "cart:32x32"},
                              {"node:16 core:16", "cart:4x8x8:moore=1"},
                              {"node:15 core:7", "cart:10x10"}};
    for (int i = 0; i < 4; i++) {
        mpitopo_machine_t *m = NULL;
        mpitopo_pattern_t *p = NULL;
        OK(mpitopo_machine_from_string(cases[i][0], &m));
        OK(mpitopo_pattern_from_string(cases[i][1], &p));
        int n;
        OK(mpitopo_pattern_nprocs(p, &n));
        int *map = malloc(sizeof(int) * (size_t)n);
        double cart = map_checked("cart", m, p, "block", MPITOPO_WEIGHT_BYTES, map);
        double tree = map_checked("tree", m, p, "block", MPITOPO_WEIGHT_BYTES, map);
        if (tree > cart)
            fail_msg("%s on %s: tree %g > cart %g", cases[i][1], cases[i][0], tree, cart);
        /* As a plain graph, top-down alone still beats the launch. */
        double block;
        OK(mpitopo_placement(m, n, "block", map));
        block = cost_of(m, p, map, MPITOPO_WEIGHT_BYTES);
        double td = map_checked("tree:topdown", m, p, "block", MPITOPO_WEIGHT_BYTES, map);
        assert_true(td <= block);
        free(map);
        mpitopo_pattern_destroy(&p);
        mpitopo_machine_destroy(&m);
    }
}

/* Number of edges whose endpoints sit on different nodes. */
static int offnode_edges(const mpitopo_machine_t *m, const mpitopo_pattern_t *p, const int *map)
{
    mpitopo_metrics_t mt;
    int node_level;
    OK(mpitopo_metrics_compute(m, p, map, MPITOPO_WEIGHT_UNIT, &mt));
    OK(mpitopo_machine_node_level(m, &node_level));
    int64_t off = 0;
    for (int l = 0; l <= node_level; l++)
        off += mt.levels[l].edges_crossing;
    return (int)off;
}

static void test_rings(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_machine_from_string("node:8 core:8", &m));
    OK(mpitopo_pattern_from_string("ring:64:8", &p));
    const char *launches[] = {"block", "rr"};
    int map[64];
    for (int k = 0; k < NMODES; k++)
        for (int li = 0; li < 2; li++) {
            map_checked(modes[k], m, p, launches[li], MPITOPO_WEIGHT_BYTES, map);
            assert_int_equal(offnode_edges(m, p, map), 0);
        }
    /* Rings interleaved over the ranks: ring r holds ranks r, r + 8, ... */
    int src[64], dst[64];
    for (int i = 0; i < 64; i++) {
        src[i] = i;
        dst[i] = (i + 8) % 64;
    }
    mpitopo_pattern_t *inter = NULL;
    OK(mpitopo_pattern_create(64, 64, src, dst, NULL, NULL, &inter));
    for (int k = 0; k < NMODES; k++) {
        map_checked(modes[k], m, inter, "block", MPITOPO_WEIGHT_MESSAGES, map);
        assert_int_equal(offnode_edges(m, inter, map), 0);
    }
    mpitopo_pattern_destroy(&inter);
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

/* Machine of nodes with the given numbers of cores (sockets of 2 when
 * `sockets`). */
static mpitopo_machine_t *uneven(const int *sizes, int nnodes, int sockets)
{
    const char *names[] = {"node", "socket", "core"};
    int nl = sockets ? 3 : 2, paths[3 * 64], k = 0;
    for (int node = 0; node < nnodes; node++)
        for (int c = 0; c < sizes[node]; c++) {
            paths[k++] = node;
            if (sockets)
                paths[k++] = c / 2;
            paths[k++] = sockets ? c % 2 : c;
        }
    const char *lvl[3] = {names[0], sockets ? names[1] : names[2], names[2]};
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_paths(nl, lvl, NULL, k / nl, paths, &m, NULL));
    return m;
}

/* Complete graphs on consecutive ranks of the given sizes. */
static mpitopo_pattern_t *cliques(const int *sizes, int count)
{
    int src[256], dst[256], ne = 0, base = 0;
    for (int c = 0; c < count; c++) {
        for (int i = 0; i < sizes[c]; i++)
            for (int j = 0; j < sizes[c]; j++)
                if (i != j) {
                    src[ne] = base + i;
                    dst[ne++] = base + j;
                }
        base += sizes[c];
    }
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(base, ne, src, dst, NULL, NULL, &p));
    return p;
}

static void test_irregular(void **state)
{
    (void)state;
    /* Nodes of 6, 2, 5 and 3 cores; cliques of 3, 6, 2 and 5 processes fit
     * them exactly, so nothing needs to leave a node. */
    int nodes[] = {6, 2, 5, 3}, groups[] = {3, 6, 2, 5};
    for (int sockets = 0; sockets < 2; sockets++) {
        mpitopo_machine_t *m = uneven(nodes, 4, sockets);
        mpitopo_pattern_t *p = cliques(groups, 4);
        int map[16];
        /* Greedy growth alone may split a clique; the two together may not. */
        for (int k = 0; k < NMODES; k++) {
            map_checked(modes[k], m, p, "rr", MPITOPO_WEIGHT_BYTES, map);
            if (k < 2)
                assert_int_equal(offnode_edges(m, p, map), 0);
        }
        mpitopo_pattern_destroy(&p);
        mpitopo_machine_destroy(&m);
    }
}

static void test_fewer_procs(void **state)
{
    (void)state;
    /* 4 rings of 4 on 8 nodes of 4: whole nodes, no ring edge off-node. */
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_machine_from_string("node:8 core:4", &m));
    OK(mpitopo_pattern_from_string("ring:16:4", &p));
    int map[16];
    for (int k = 0; k < NMODES; k++) {
        map_checked(modes[k], m, p, "rr", MPITOPO_WEIGHT_BYTES, map);
        assert_int_equal(offnode_edges(m, p, map), 0);
    }
    mpitopo_pattern_destroy(&p);
    /* 8 processes on nodes of 6, 2, 5 and 3: only whole nodes are used. */
    int nodes[] = {6, 2, 5, 3}, groups[] = {5, 3};
    mpitopo_machine_t *u = uneven(nodes, 4, 0);
    p = cliques(groups, 2);
    for (int k = 0; k < NMODES; k++) {
        map_checked(modes[k], u, p, "block", MPITOPO_WEIGHT_BYTES, map);
        int used[4] = {0};
        for (int i = 0; i < 8; i++) {
            int node;
            OK(mpitopo_machine_unit_of(u, 0, map[i], &node));
            used[node]++;
        }
        for (int node = 0; node < 4; node++)
            assert_true(used[node] == 0 || used[node] == nodes[node]);
    }
    /* One process, no edges, self edges only, disconnected pieces. */
    mpitopo_pattern_t *one = NULL, *none = NULL, *self = NULL;
    int s[3] = {0, 1, 2};
    OK(mpitopo_pattern_from_string("cart:1", &one));
    OK(mpitopo_pattern_create(7, 0, s, s, NULL, NULL, &none));
    OK(mpitopo_pattern_create(3, 3, s, s, NULL, NULL, &self));
    for (int k = 0; k < NMODES; k++) {
        map_checked(modes[k], m, one, "block", MPITOPO_WEIGHT_BYTES, map);
        map_checked(modes[k], u, none, "rr", MPITOPO_WEIGHT_BYTES, map);
        map_checked(modes[k], u, self, "rr", MPITOPO_WEIGHT_UNIT, map);
    }
    mpitopo_pattern_destroy(&one);
    mpitopo_pattern_destroy(&none);
    mpitopo_pattern_destroy(&self);
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&u);
    mpitopo_machine_destroy(&m);
}

static void test_weights(void **state)
{
    (void)state;
    /* 0-1 and 2-3 carry the bytes, 0-2 and 1-3 the messages. */
    int src[] = {0, 1, 2, 3, 0, 2, 1, 3}, dst[] = {1, 0, 3, 2, 2, 0, 3, 1};
    double bytes[] = {100, 100, 100, 100, 1, 1, 1, 1}, msgs[] = {1, 1, 1, 1, 50, 50, 50, 50};
    mpitopo_machine_t *m = NULL;
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_machine_from_string("node:2 core:2", &m));
    OK(mpitopo_pattern_create(4, 8, src, dst, bytes, msgs, &p));
    for (int k = 0; k < NMODES; k++) {
        int map[4];
        map_checked(modes[k], m, p, "rr", MPITOPO_WEIGHT_BYTES, map);
        assert_int_equal(map[0] / 2, map[1] / 2);
        assert_int_equal(map[2] / 2, map[3] / 2);
        map_checked(modes[k], m, p, "block", MPITOPO_WEIGHT_MESSAGES, map);
        assert_int_equal(map[0] / 2, map[2] / 2);
        assert_int_equal(map[1] / 2, map[3] / 2);
    }
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

static void test_args_and_determinism(void **state)
{
    (void)state;
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string("switch:2 node:4 core:8", &m));
    mpitopo_pattern_t *p = weighted(64, 3, 99);
    int a[64], b[64];
    FAILS(mpitopo_map("tree:sideways", m, p, NULL, a, NULL), MPITOPO_ERR_ARG, "sideways");
    mpitopo_map_options_t o = MPITOPO_MAP_OPTIONS_INIT;
    o.seed = 5;
    OK(mpitopo_map("tree", m, p, &o, a, NULL));
    OK(mpitopo_map("tree", m, p, &o, b, NULL));
    assert_memory_equal(a, b, sizeof a);
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

typedef struct tree_run {
    mpitopo_machine_t *m;
    mpitopo_pattern_t *p;
    const char *spec;
} tree_run_t;

static int run_tree(void *ctx)
{
    tree_run_t *r = ctx;
    int out[128];
    return mpitopo_map(r->spec, r->m, r->p, NULL, out, NULL);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    int nodes[] = {6, 2, 5, 3};
    tree_run_t r = {uneven(nodes, 4, 1), weighted(12, 3, 3), "tree"};
    assert_true(unit_each_allocation_fails("tree, fewer processes", run_tree, &r) >= 10);
    mpitopo_pattern_destroy(&r.p);
    mpitopo_machine_destroy(&r.m);
    /* Large enough to coarsen, on a Cartesian grid (cart runs too). */
    OK(mpitopo_machine_from_string("switch:2 node:8 core:8", &r.m));
    OK(mpitopo_pattern_from_string("cart:16x8", &r.p));
    assert_true(unit_each_allocation_fails("tree, grid", run_tree, &r) >= 10);
    r.spec = "tree:bottomup";
    assert_true(unit_each_allocation_fails("tree:bottomup", run_tree, &r) >= 5);
    mpitopo_pattern_destroy(&r.p);
    mpitopo_machine_destroy(&r.m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_brute_force),  cmocka_unit_test(test_random_never_worse),
        cmocka_unit_test(test_cart_patterns), cmocka_unit_test(test_rings),
        cmocka_unit_test(test_irregular),    cmocka_unit_test(test_fewer_procs),
        cmocka_unit_test(test_weights),      cmocka_unit_test(test_args_and_determinism),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
