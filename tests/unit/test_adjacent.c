/* mpitopo_pattern_adjacent: the arguments of MPI_Dist_graph_create_adjacent
 * for one process of a pattern. */
#include "unit.h"

#include <limits.h>
#include <math.h>

typedef struct adj {
    int indeg, outdeg;
    int *src, *srcw, *dst, *dstw;
} adj_t;

static int adjacent(const mpitopo_pattern_t *p, int proc, mpitopo_weight_t w, adj_t *a)
{
    *a = (adj_t){-1, -1, NULL, NULL, NULL, NULL};
    return mpitopo_pattern_adjacent(p, proc, w, &a->indeg, &a->src, &a->srcw, &a->outdeg, &a->dst,
                                    &a->dstw);
}

static void adj_free(adj_t *a)
{
    mpitopo_free(a->src);
    mpitopo_free(a->srcw);
    mpitopo_free(a->dst);
    mpitopo_free(a->dstw);
    *a = (adj_t){0, 0, NULL, NULL, NULL, NULL};
}

static void assert_ints(const int *got, const int *want, int n)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("entry %d: got %d, want %d", i, got[i], want[i]);
}

/* 0 -> 1 (10 bytes, 2 msgs), 0 -> 2 (0.3 bytes, 1 msg), 2 -> 0 (5.5 bytes,
 * 3 msgs), 1 -> 1 (self, 7 bytes, 1 msg), 2 -> 1 given twice (4 + 4.4
 * bytes, 1 + 1 msgs: merged), 3 isolated. */
static mpitopo_pattern_t *small_pattern(void)
{
    static const int src[] = {0, 0, 2, 1, 2, 2};
    static const int dst[] = {1, 2, 0, 1, 1, 1};
    static const double bytes[] = {10, 0.3, 5.5, 7, 4, 4.4};
    static const double msgs[] = {2, 1, 3, 1, 1, 1};
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(4, 6, src, dst, bytes, msgs, &p));
    return p;
}

static void test_neighbours_and_weights(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = small_pattern();
    adj_t a;
    OK(adjacent(p, 0, MPITOPO_WEIGHT_BYTES, &a));
    assert_int_equal(a.indeg, 1);
    assert_int_equal(a.outdeg, 2);
    assert_ints(a.src, (int[]){2}, 1);
    assert_ints(a.srcw, (int[]){6}, 1); /* 5.5 rounds to nearest: 6 */
    assert_ints(a.dst, (int[]){1, 2}, 2);
    assert_ints(a.dstw, (int[]){10, 1}, 2); /* 0.3 rounds to 0, kept at 1 */
    adj_free(&a);

    /* The self edge is both a source and a destination; sources increase. */
    OK(adjacent(p, 1, MPITOPO_WEIGHT_BYTES, &a));
    assert_int_equal(a.indeg, 3);
    assert_ints(a.src, (int[]){0, 1, 2}, 3);
    assert_ints(a.srcw, (int[]){10, 7, 8}, 3); /* 8.4 -> 8 */
    assert_int_equal(a.outdeg, 1);
    assert_ints(a.dst, (int[]){1}, 1);
    assert_ints(a.dstw, (int[]){7}, 1);
    adj_free(&a);

    OK(adjacent(p, 1, MPITOPO_WEIGHT_MESSAGES, &a));
    assert_ints(a.srcw, (int[]){2, 1, 2}, 3);
    assert_ints(a.dstw, (int[]){1}, 1);
    adj_free(&a);

    OK(adjacent(p, 2, MPITOPO_WEIGHT_UNIT, &a));
    assert_int_equal(a.indeg, 1);
    assert_ints(a.src, (int[]){0}, 1);
    assert_ints(a.srcw, (int[]){1}, 1);
    assert_int_equal(a.outdeg, 2);
    assert_ints(a.dst, (int[]){0, 1}, 2);
    assert_ints(a.dstw, (int[]){1, 1}, 2);
    adj_free(&a);

    /* An isolated process: degrees 0, arrays NULL. */
    OK(adjacent(p, 3, MPITOPO_WEIGHT_BYTES, &a));
    assert_int_equal(a.indeg, 0);
    assert_int_equal(a.outdeg, 0);
    assert_null(a.src);
    assert_null(a.srcw);
    assert_null(a.dst);
    assert_null(a.dstw);
    mpitopo_pattern_destroy(&p);
}

/* The weights of all processes, seen from both ends of every edge, agree:
 * what MPI_Dist_graph_create_adjacent requires. */
static void test_both_ends_agree(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_random(40, 0.2, 11, &p));
    for (int s = 0; s < 40; s++) {
        adj_t a;
        OK(adjacent(p, s, MPITOPO_WEIGHT_BYTES, &a));
        for (int k = 0; k < a.outdeg; k++) {
            adj_t b;
            int d = a.dst[k], found = 0;
            OK(adjacent(p, d, MPITOPO_WEIGHT_BYTES, &b));
            for (int j = 0; j < b.indeg; j++)
                if (b.src[j] == s) {
                    found = 1;
                    assert_int_equal(b.srcw[j], a.dstw[k]);
                }
            assert_true(found);
            adj_free(&b);
        }
        adj_free(&a);
    }
    mpitopo_pattern_destroy(&p);
}

/* Weights beyond INT_MAX: every weight is scaled by INT_MAX / largest, on
 * every process alike, and small ones stay >= 1. */
static void test_scaling(void **state)
{
    (void)state;
    static const int src[] = {0, 1, 2, 3};
    static const int dst[] = {1, 2, 3, 0};
    const double big = 4.0 * INT_MAX;
    const double bytes[] = {big, big / 2, 1, big / 4};
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(4, 4, src, dst, bytes, NULL, &p));
    adj_t a;
    OK(adjacent(p, 0, MPITOPO_WEIGHT_BYTES, &a));
    assert_ints(a.dstw, (int[]){INT_MAX}, 1);
    assert_ints(a.srcw, (int[]){(int)floor(INT_MAX / 4.0 + 0.5)}, 1);
    adj_free(&a);
    OK(adjacent(p, 1, MPITOPO_WEIGHT_BYTES, &a));
    assert_ints(a.srcw, (int[]){INT_MAX}, 1);
    assert_ints(a.dstw, (int[]){(int)floor(INT_MAX / 2.0 + 0.5)}, 1);
    adj_free(&a);
    OK(adjacent(p, 2, MPITOPO_WEIGHT_BYTES, &a));
    assert_ints(a.dstw, (int[]){1}, 1); /* 1 * INT_MAX / big = 0.25 -> 1 */
    adj_free(&a);
    /* Messages are all 1: no scaling there. */
    OK(adjacent(p, 2, MPITOPO_WEIGHT_MESSAGES, &a));
    assert_ints(a.dstw, (int[]){1}, 1);
    assert_ints(a.srcw, (int[]){1}, 1);
    adj_free(&a);
    mpitopo_pattern_destroy(&p);

    /* Exactly INT_MAX is not scaled. */
    const double fits[] = {(double)INT_MAX, 3, 1, 2};
    OK(mpitopo_pattern_create(4, 4, src, dst, fits, NULL, &p));
    OK(adjacent(p, 1, MPITOPO_WEIGHT_BYTES, &a));
    assert_ints(a.srcw, (int[]){INT_MAX}, 1);
    assert_ints(a.dstw, (int[]){3}, 1);
    adj_free(&a);
    mpitopo_pattern_destroy(&p);
}

static void test_zero_weights(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(2, 1, (int[]){0}, (int[]){1}, (double[]){0}, (double[]){0}, &p));
    adj_t a;
    OK(adjacent(p, 0, MPITOPO_WEIGHT_BYTES, &a));
    assert_int_equal(a.outdeg, 1);
    assert_ints(a.dstw, (int[]){1}, 1);
    adj_free(&a);
    mpitopo_pattern_destroy(&p);
}

static void test_errors(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = small_pattern();
    int in, out, *s, *sw, *d, *dw;
    FAILS(mpitopo_pattern_adjacent(NULL, 0, MPITOPO_WEIGHT_BYTES, &in, &s, &sw, &out, &d, &dw),
          MPITOPO_ERR_ARG, "pattern");
    FAILS(mpitopo_pattern_adjacent(p, 0, MPITOPO_WEIGHT_BYTES, NULL, &s, &sw, &out, &d, &dw),
          MPITOPO_ERR_ARG, "indegree");
    FAILS(mpitopo_pattern_adjacent(p, 0, MPITOPO_WEIGHT_BYTES, &in, &s, &sw, &out, &d, NULL),
          MPITOPO_ERR_ARG, "destweights");
    FAILS(mpitopo_pattern_adjacent(p, 0, (mpitopo_weight_t)7, &in, &s, &sw, &out, &d, &dw),
          MPITOPO_ERR_ARG, "weight = 7");
    FAILS(mpitopo_pattern_adjacent(p, 4, MPITOPO_WEIGHT_BYTES, &in, &s, &sw, &out, &d, &dw),
          MPITOPO_ERR_RANGE, "proc = 4 out of range [0, 4)");
    FAILS(mpitopo_pattern_adjacent(p, -1, MPITOPO_WEIGHT_BYTES, &in, &s, &sw, &out, &d, &dw),
          MPITOPO_ERR_RANGE, "proc = -1");
    mpitopo_pattern_destroy(&p);
}

typedef struct run_ctx {
    const mpitopo_pattern_t *p;
    int proc;
} run_ctx_t;

/* Under the counting allocator of unit.h: the arrays come from the
 * library's allocation hook, so they go back through the hook's free. */
static int run_adjacent(void *ctx)
{
    run_ctx_t *c = ctx;
    adj_t a;
    int rc = adjacent(c->p, c->proc, MPITOPO_WEIGHT_BYTES, &a);
    if (rc != MPITOPO_SUCCESS) {
        /* Nothing handed out on failure: the outputs are untouched. */
        assert_int_equal(a.indeg, -1);
        assert_null(a.src);
        assert_null(a.dst);
        return rc;
    }
    assert_int_equal(a.indeg, 3);
    assert_int_equal(a.outdeg, 1);
    unit_free(a.src);
    unit_free(a.srcw);
    unit_free(a.dst);
    unit_free(a.dstw);
    return rc;
}

/* Process 1 has in- and out-edges: four arrays, each allocation fails once. */
static void test_allocation_failures(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = small_pattern();
    run_ctx_t c = {p, 1};
    assert_int_equal(unit_each_allocation_fails("adjacent", run_adjacent, &c), 4);
    mpitopo_pattern_destroy(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_neighbours_and_weights),
        cmocka_unit_test(test_both_ends_agree),
        cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_zero_weights),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
