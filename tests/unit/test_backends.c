/* The optional mapper backends "scotch" and "metis": every test runs on
 * each backend this build has and is skipped for the others. */
#include "unit.h"

#include "backend_case.h"

static const char *const backends[] = {"scotch", "metis"};
#define NBACKENDS 2

static int have(const char *name)
{
    const mpitopo_mapper_t *m;
    return mpitopo_mapper_find(name, &m) == MPITOPO_SUCCESS;
}

/* Skip the test when no backend is built. */
static void need_some_backend(void)
{
    if (!have("scotch") && !have("metis"))
        skip();
}

static mpitopo_machine_t *machine(const char *desc)
{
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_string(desc, &m));
    return m;
}

static mpitopo_pattern_t *pattern(const char *desc)
{
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_from_string(desc, &p));
    return p;
}

static int nprocs_of(const mpitopo_pattern_t *p)
{
    int n;
    OK(mpitopo_pattern_nprocs(p, &n));
    return n;
}

/* Map with `name`, check the placement, return the metrics. */
static void map_and_measure(const char *name, const mpitopo_machine_t *m, const mpitopo_pattern_t *p,
                            mpitopo_weight_t weight, int *leaf, mpitopo_metrics_t *met)
{
    mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
    opt.weight = weight;
    OK(mpitopo_map(name, m, p, &opt, leaf, NULL));
    OK(mpitopo_mapping_check(m, nprocs_of(p), leaf));
    OK(mpitopo_metrics_compute(m, p, leaf, weight, met));
}

/* Rings of 8 whose members are spread: ring r is {r, r+8, r+16, ...}. */
static mpitopo_pattern_t *spread_rings(int nrings)
{
    int n = 8 * nrings, src[512], dst[512];
    for (int r = 0; r < nrings; r++)
        for (int k = 0; k < 8; k++) {
            src[r * 8 + k] = r + nrings * k;
            dst[r * 8 + k] = r + nrings * ((k + 1) % 8);
        }
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(n, n, src, dst, NULL, NULL, &p));
    return p;
}

static void test_valid_and_exact(void **state)
{
    (void)state;
    need_some_backend();
    const char *pats[] = {"cart:8x4", "cart:4x4x2:moore=1", "random:32:0.25:3", "ring:32:8", "complete:32"};
    mpitopo_machine_t *m = machine("node:4 socket:2 core:4");
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
            mpitopo_pattern_t *p = pattern(pats[i]);
            int leaf[32];
            mpitopo_metrics_t met;
            map_and_measure(backends[b], m, p, MPITOPO_WEIGHT_BYTES, leaf, &met);
            mpitopo_pattern_destroy(&p);
        }
    }
    mpitopo_machine_destroy(&m);
}

static void test_rings_stay_on_node(void **state)
{
    (void)state;
    need_some_backend();
    mpitopo_machine_t *m = machine("node:8 core:8");
    mpitopo_pattern_t *p = spread_rings(8);
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        int leaf[64];
        mpitopo_metrics_t met;
        OK(mpitopo_metrics_compute(m, p, NULL, MPITOPO_WEIGHT_BYTES, &met));
        assert_int_equal(met.levels[0].edges_crossing, 64); /* block: every ring edge leaves its node */
        map_and_measure(backends[b], m, p, MPITOPO_WEIGHT_BYTES, leaf, &met);
        if (met.levels[0].edges_crossing != 0)
            fail_msg("%s: %lld ring edges off-node", backends[b], (long long)met.levels[0].edges_crossing);
    }
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

static void test_fewer_procs_than_leaves(void **state)
{
    (void)state;
    need_some_backend();
    mpitopo_machine_t *m = machine("node:4 socket:2 core:4");
    mpitopo_pattern_t *p = pattern("ring:20:5");
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        int leaf[20];
        mpitopo_metrics_t met;
        map_and_measure(backends[b], m, p, MPITOPO_WEIGHT_BYTES, leaf, &met);
        /* The first 20 leaves are the ones used (documented policy). */
        for (int i = 0; i < 20; i++)
            assert_true(leaf[i] < 20);
    }
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

/* Nodes of 3, 5, 2 and 6 cores; four cliques of 6, 5, 3 and 2 processes
 * (interleaved in rank order) fit them exactly: no edge needs to leave a
 * node. METIS's k-way with target weights finds that. Scotch bipartitions
 * the architecture first ({3,5} | {2,6}) and may send {6,2} to the {3,5}
 * half, which then costs 14 edges: it must still beat the block placement. */
static void test_irregular_tree(void **state)
{
    (void)state;
    need_some_backend();
    const char *names[] = {"node", "core"};
    int sizes[4] = {3, 5, 2, 6}, paths[32], k = 0;
    for (int node = 0; node < 4; node++)
        for (int c = 0; c < sizes[node]; c++) {
            paths[2 * k] = node;
            paths[2 * k++ + 1] = c;
        }
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_paths(2, names, NULL, 16, paths, &m, NULL));
    int clique_of[16], csize[4] = {6, 5, 3, 2}, fill[4] = {0}, c = 0;
    for (int i = 0; i < 16; i++) {
        while (fill[c] == csize[c])
            c = (c + 1) % 4;
        clique_of[i] = c;
        fill[c]++;
        c = (c + 1) % 4;
    }
    int src[256], dst[256], ne = 0;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            if (i != j && clique_of[i] == clique_of[j]) {
                src[ne] = i;
                dst[ne++] = j;
            }
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(16, ne, src, dst, NULL, NULL, &p));
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        int leaf[16];
        mpitopo_metrics_t met;
        OK(mpitopo_metrics_compute(m, p, NULL, MPITOPO_WEIGHT_BYTES, &met));
        int64_t block = met.levels[0].edges_crossing;
        map_and_measure(backends[b], m, p, MPITOPO_WEIGHT_BYTES, leaf, &met);
        int64_t limit = strcmp(backends[b], "metis") == 0 ? 0 : block / 2;
        if (met.levels[0].edges_crossing > limit)
            fail_msg("%s: %lld clique edges off-node (block: %lld)", backends[b],
                     (long long)met.levels[0].edges_crossing, (long long)block);
    }
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

/* Three levels of uneven arities (switches of 2 and 1 nodes; nodes of 4, 3
 * and 6 cores), partly filled: every placement is valid, on the first
 * nprocs leaves, for random graphs of several seeds. */
static void test_irregular_partial(void **state)
{
    (void)state;
    need_some_backend();
    const char *names[] = {"switch", "node", "core"};
    int shape[3][2] = {{0, 4}, {0, 3}, {1, 6}}, paths[39], k = 0;
    for (int node = 0; node < 3; node++)
        for (int c = 0; c < shape[node][1]; c++) {
            paths[3 * k] = shape[node][0];
            paths[3 * k + 1] = node;
            paths[3 * k++ + 2] = c;
        }
    mpitopo_machine_t *m = NULL;
    OK(mpitopo_machine_from_paths(3, names, NULL, 13, paths, &m, NULL));
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        for (int n = 2; n <= 13; n++)
            for (int seed = 1; seed <= 4; seed++) {
                char desc[64];
                snprintf(desc, sizeof desc, "random:%d:0.4:%d", n, seed);
                mpitopo_pattern_t *p = pattern(desc);
                int leaf[13];
                mpitopo_metrics_t met;
                map_and_measure(backends[b], m, p, MPITOPO_WEIGHT_BYTES, leaf, &met);
                for (int i = 0; i < n; i++)
                    assert_true(leaf[i] < n);
                mpitopo_pattern_destroy(&p);
            }
    }
    mpitopo_machine_destroy(&m);
}

/* Levels of arity 1 (a switch of one node, a node of one socket): Scotch
 * died of SIGFPE in SCOTCH_graphMap on an inner one with every leaf used.
 * Rings of 4 must each stay on one switch. */
static void test_arity_one_levels(void **state)
{
    (void)state;
    need_some_backend();
    static const char *const machines[] = {
        "switch:2 node:1 core:4", "switch:2 node:2 socket:1 core:2", "switch:2 node:1 socket:1 core:4",
        "switch:1 node:2 core:4", "node:2 core:4 hw:1",
    };
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        for (size_t k = 0; k < sizeof machines / sizeof *machines; k++) {
            mpitopo_machine_t *m = machine(machines[k]);
            const char *pats[] = {"ring:8:4", "cart:2x4:moore=1", "ring:7:4"};
            for (int i = 0; i < 3; i++) {
                mpitopo_pattern_t *p = pattern(pats[i]);
                int leaf[8];
                mpitopo_metrics_t met;
                map_and_measure(backends[b], m, p, MPITOPO_WEIGHT_BYTES, leaf, &met);
                if (i != 1 && met.levels[0].edges_crossing != 0)
                    fail_msg("%s, %s on %s: %lld edges cross the top level", backends[b], pats[i], machines[k],
                             (long long)met.levels[0].edges_crossing);
                mpitopo_pattern_destroy(&p);
            }
            mpitopo_machine_destroy(&m);
        }
    }
}

/*
 * Property: every mapper that takes any pattern maps every valid problem,
 * with a valid placement (mpitopo_map checks it), on the machines the
 * partitioning libraries stumble on (backend_case.h: arity-1 levels, one
 * node, one core, partial trees, odd costs) and patterns with self, repeated,
 * zero-weight or no edges. Scotch died of SIGFPE on a level of arity 1
 * (issue 15); the fuzz harness fuzz_backends runs the same cases from the
 * fuzzer's bytes.
 */
static void test_random_problems(void **state)
{
    (void)state;
    static const char *const mappers[] = {"identity", "block", "rr", "random", "tree", "scotch", "metis"};
    int ncases = UNIT_SANITIZED ? 150 : 600;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int c = 0; c < ncases; c++) {
        uint8_t bytes[200];
        for (size_t i = 0; i < sizeof bytes; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            bytes[i] = (uint8_t)(x >> 24);
        }
        mpitopo_machine_t *m = NULL;
        mpitopo_pattern_t *p = NULL;
        mpitopo_map_options_t opt;
        OK(bk_case(bytes, sizeof bytes, &m, &p, &opt));
        int leaf[BK_MAX_LEAVES];
        for (size_t k = 0; k < sizeof mappers / sizeof *mappers; k++) {
            if (!have(mappers[k]))
                continue;
            int rc = mpitopo_map(mappers[k], m, p, &opt, leaf, NULL);
            if (rc != MPITOPO_SUCCESS) {
                char desc[256];
                int n = nprocs_of(p);
                mpitopo_machine_describe(m, desc, sizeof desc);
                fail_msg("case %d, %s: %d processes on %s: %s", c, mappers[k], n, desc, mpitopo_last_error());
            }
        }
        mpitopo_pattern_destroy(&p);
        mpitopo_machine_destroy(&m);
    }
}

static void test_no_edges_and_tiny(void **state)
{
    (void)state;
    need_some_backend();
    mpitopo_machine_t *m = machine("node:2 core:4");
    mpitopo_machine_t *flat = machine("core:4");
    int selfs[3] = {0, 1, 2};
    mpitopo_pattern_t *empty = NULL, *self = NULL, *one = pattern("cart:1"), *two = pattern("ring:2:2");
    OK(mpitopo_pattern_create(7, 0, NULL, NULL, NULL, NULL, &empty));
    OK(mpitopo_pattern_create(3, 3, selfs, selfs, NULL, NULL, &self));
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        int leaf[8];
        mpitopo_metrics_t met;
        map_and_measure(backends[b], m, empty, MPITOPO_WEIGHT_BYTES, leaf, &met);
        map_and_measure(backends[b], m, self, MPITOPO_WEIGHT_BYTES, leaf, &met);
        map_and_measure(backends[b], m, one, MPITOPO_WEIGHT_BYTES, leaf, &met);
        assert_int_equal(leaf[0], 0);
        map_and_measure(backends[b], m, two, MPITOPO_WEIGHT_BYTES, leaf, &met);
        assert_int_equal(met.levels[0].edges_crossing, 0);
        map_and_measure(backends[b], flat, two, MPITOPO_WEIGHT_BYTES, leaf, &met);
    }
    mpitopo_pattern_destroy(&empty);
    mpitopo_pattern_destroy(&self);
    mpitopo_pattern_destroy(&one);
    mpitopo_pattern_destroy(&two);
    mpitopo_machine_destroy(&m);
    mpitopo_machine_destroy(&flat);
}

/* Four processes on two nodes of two: bytes say {0,2} {1,3}, messages say
 * {0,1} {2,3}. The weight chosen in the options decides. */
static void test_weight_choice(void **state)
{
    (void)state;
    need_some_backend();
    mpitopo_machine_t *m = machine("node:2 core:2");
    int src[4] = {0, 0, 1, 2}, dst[4] = {1, 2, 3, 3};
    double bytes[4] = {1, 100, 100, 1}, msgs[4] = {100, 1, 1, 100};
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(4, 4, src, dst, bytes, msgs, &p));
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        int leaf[4];
        mpitopo_metrics_t met;
        map_and_measure(backends[b], m, p, MPITOPO_WEIGHT_BYTES, leaf, &met);
        assert_int_equal(leaf[0] / 2, leaf[2] / 2);
        assert_int_equal(leaf[1] / 2, leaf[3] / 2);
        map_and_measure(backends[b], m, p, MPITOPO_WEIGHT_MESSAGES, leaf, &met);
        assert_int_equal(leaf[0] / 2, leaf[1] / 2);
        assert_int_equal(leaf[2] / 2, leaf[3] / 2);
    }
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

/* Huge and tiny weights are scaled into 32-bit integers, non-integer costs
 * too; the result stays a valid placement that keeps the heavy pairs. */
static void test_extreme_weights_and_costs(void **state)
{
    (void)state;
    need_some_backend();
    mpitopo_machine_t *m = machine("switch:2@7.5 node:2@2.25 core:2@0.5");
    int src[8] = {0, 1, 2, 3, 4, 5, 6, 7}, dst[8] = {4, 5, 6, 7, 1, 2, 3, 0};
    double bytes[8] = {1e300, 1e300, 1e300, 1e300, 1e-300, 1e-300, 1e-300, 1e-300};
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(8, 8, src, dst, bytes, NULL, &p));
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        int leaf[8];
        mpitopo_metrics_t met;
        map_and_measure(backends[b], m, p, MPITOPO_WEIGHT_BYTES, leaf, &met);
        for (int i = 0; i < 4; i++)
            assert_int_equal(leaf[i] / 2, leaf[i + 4] / 2);
    }
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

static void test_deterministic_and_never_worse(void **state)
{
    (void)state;
    need_some_backend();
    mpitopo_machine_t *m = machine("node:8 socket:2 core:4");
    mpitopo_pattern_t *p = pattern("random:64:0.1:11");
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        int a[64], c[64], kept = -1;
        mpitopo_map_options_t opt = MPITOPO_MAP_OPTIONS_INIT;
        opt.seed = 5;
        OK(mpitopo_map(backends[b], m, p, &opt, a, NULL));
        OK(mpitopo_map(backends[b], m, p, &opt, c, NULL));
        assert_memory_equal(a, c, sizeof a);
        opt.never_worse = 1;
        OK(mpitopo_map(backends[b], m, p, &opt, c, &kept));
        double mapped, block;
        OK(mpitopo_metrics_cost(m, p, c, opt.weight, &mapped));
        OK(mpitopo_metrics_cost(m, p, NULL, opt.weight, &block));
        assert_true(mapped <= block);
        assert_true(kept == 0 || kept == 1);
        FAILS(mpitopo_map(b == 0 ? "scotch:x" : "metis:x", m, p, &opt, c, NULL), MPITOPO_ERR_ARG, "takes no argument");
    }
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

typedef struct alloc_ctx {
    const char *name;
    mpitopo_machine_t *m;
    mpitopo_pattern_t *p;
} alloc_ctx_t;

static int map_once(void *arg)
{
    alloc_ctx_t *ctx = arg;
    int leaf[24];
    return mpitopo_map(ctx->name, ctx->m, ctx->p, NULL, leaf, NULL);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    need_some_backend();
    mpitopo_machine_t *m = machine("node:3 socket:2 core:4");
    mpitopo_pattern_t *p = pattern("random:20:0.3:2");
    for (int b = 0; b < NBACKENDS; b++) {
        if (!have(backends[b]))
            continue;
        alloc_ctx_t ctx = {backends[b], m, p};
        assert_true(unit_each_allocation_fails(backends[b], map_once, &ctx) > 5);
    }
    mpitopo_pattern_destroy(&p);
    mpitopo_machine_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_and_exact),
        cmocka_unit_test(test_rings_stay_on_node),
        cmocka_unit_test(test_fewer_procs_than_leaves),
        cmocka_unit_test(test_irregular_tree),
        cmocka_unit_test(test_irregular_partial),
        cmocka_unit_test(test_arity_one_levels),
        cmocka_unit_test(test_random_problems),
        cmocka_unit_test(test_no_edges_and_tiny),
        cmocka_unit_test(test_weight_choice),
        cmocka_unit_test(test_extreme_weights_and_costs),
        cmocka_unit_test(test_deterministic_and_never_worse),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
