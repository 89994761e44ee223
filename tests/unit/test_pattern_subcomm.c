/* The sub-communicator all-to-all generator and its description. */
#include "unit.h"

#include "pattern/pattern_internal.h"

#include <math.h>

/* Row-major coordinates of rank r. */
static void coords_of(int ndims, const int *dims, int r, int *c)
{
    for (int i = ndims - 1; i >= 0; i--) {
        c[i] = r % dims[i];
        r /= dims[i];
    }
}

/* p and q share their coordinates in every dimension not kept. */
static int same_group(int ndims, const int *dims, const int *remain, int p, int q)
{
    int a[MPITOPO_MAX_DIMS], b[MPITOPO_MAX_DIMS];
    coords_of(ndims, dims, p, a);
    coords_of(ndims, dims, q, b);
    for (int i = 0; i < ndims; i++)
        if (!(remain ? remain[i] : 1) && a[i] != b[i])
            return 0;
    return 1;
}

/* The pattern is exactly the all-to-all of the groups, brute force:
 * an edge p -> q of `bytes` bytes and one message iff p != q share a group. */
static void check_groups(int ndims, const int *dims, const int *remain, double bytes,
                         const mpitopo_pattern_t *pat)
{
    int n = pat->nprocs;
    int64_t want = 0;
    for (int p = 0; p < n; p++) {
        int64_t k = pat->offs[p];
        for (int q = 0; q < n; q++) {
            if (q == p || !same_group(ndims, dims, remain, p, q))
                continue;
            want++;
            assert_true(k < pat->offs[p + 1]);
            assert_int_equal(pat->dst[k], q);
            assert_true(pat->bytes[k] == bytes);
            assert_true(pat->msgs[k] == 1.0);
            k++;
        }
        assert_int_equal(k, pat->offs[p + 1]);
    }
    assert_int_equal(pat->nedges, want);
}

static void columns_of_a_2d_grid(void **state)
{
    (void)state;
    int dims[2] = {4, 3}, remain[2] = {1, 0};
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_subcomm_alltoall(2, dims, remain, 8.0, &p));
    assert_int_equal(p->nprocs, 12);
    assert_int_equal(p->nedges, 12 * 3);
    check_groups(2, dims, remain, 8.0, p);
    /* Rank 1 is (0, 1): its column holds ranks 4, 7, 10. */
    int deg;
    const int *dst;
    OK(mpitopo_pattern_out_edges(p, 1, &deg, &dst, NULL, NULL));
    assert_int_equal(deg, 3);
    assert_int_equal(dst[0], 4);
    assert_int_equal(dst[1], 7);
    assert_int_equal(dst[2], 10);
    mpitopo_pattern_destroy(&p);
}

static void planes_of_a_3d_grid(void **state)
{
    (void)state;
    int dims[3] = {3, 2, 4}, remain[3] = {1, 0, 1};
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_subcomm_alltoall(3, dims, remain, 1.0, &p));
    assert_int_equal(p->nprocs, 24);
    assert_int_equal(p->nedges, 24 * 11);
    check_groups(3, dims, remain, 1.0, p);
    /* A Cartesian pattern: the grid is remembered, all periodic. */
    int is_cart = 0, nd = 0, d[MPITOPO_MAX_DIMS], per[MPITOPO_MAX_DIMS];
    OK(mpitopo_pattern_cart_info(p, &is_cart, &nd, d, per));
    assert_int_equal(is_cart, 1);
    assert_int_equal(nd, 3);
    assert_int_equal(d[0], 3);
    assert_int_equal(d[1], 2);
    assert_int_equal(d[2], 4);
    assert_int_equal(per[0] + per[1] + per[2], 3);
    mpitopo_pattern_destroy(&p);
}

/* Keeping every dimension (or NULL) is the complete pattern; keeping none,
 * groups of one, no edge. Sizes 1 and 2 in kept dimensions. */
static void extremes(void **state)
{
    (void)state;
    int dims[3] = {2, 1, 3}, all[3] = {1, 1, 1}, none[3] = {0, 0, 0};
    mpitopo_pattern_t *p = NULL, *q = NULL;
    OK(mpitopo_pattern_subcomm_alltoall(3, dims, NULL, 1.0, &p));
    OK(mpitopo_pattern_complete(6, &q));
    assert_int_equal(p->nedges, q->nedges);
    assert_memory_equal(p->offs, q->offs, 7 * sizeof *p->offs);
    assert_memory_equal(p->dst, q->dst, (size_t)q->nedges * sizeof *p->dst);
    mpitopo_pattern_destroy(&p);
    OK(mpitopo_pattern_subcomm_alltoall(3, dims, all, 1.0, &p));
    assert_int_equal(p->nedges, q->nedges);
    mpitopo_pattern_destroy(&p);
    mpitopo_pattern_destroy(&q);
    OK(mpitopo_pattern_subcomm_alltoall(3, dims, none, 1.0, &p));
    assert_int_equal(p->nprocs, 6);
    assert_int_equal(p->nedges, 0);
    mpitopo_pattern_destroy(&p);
    OK(mpitopo_pattern_subcomm_alltoall(0, NULL, NULL, 1.0, &p));
    assert_int_equal(p->nprocs, 1);
    assert_int_equal(p->nedges, 0);
    mpitopo_pattern_destroy(&p);
    /* Zero bytes: the edges are there, weightless. */
    int two[1] = {2};
    OK(mpitopo_pattern_subcomm_alltoall(1, two, NULL, 0.0, &p));
    check_groups(1, two, NULL, 0.0, p);
    mpitopo_pattern_destroy(&p);
}

static void bad_arguments(void **state)
{
    (void)state;
    int dims[2] = {4, 4}, remain[2] = {1, 0}, zero[2] = {4, 0}, huge[2] = {65536, 65536};
    int big[2] = {2, 1 << 21}, keep[2] = {0, 1};
    mpitopo_pattern_t *p = (mpitopo_pattern_t *)&p;
    FAILS(mpitopo_pattern_subcomm_alltoall(2, dims, remain, 1.0, NULL), MPITOPO_ERR_ARG, "pattern");
    FAILS(mpitopo_pattern_subcomm_alltoall(-1, dims, remain, 1.0, &p), MPITOPO_ERR_ARG,
          "ndims = -1");
    assert_null(p);
    FAILS(mpitopo_pattern_subcomm_alltoall(33, dims, remain, 1.0, &p), MPITOPO_ERR_ARG,
          "ndims = 33");
    FAILS(mpitopo_pattern_subcomm_alltoall(2, NULL, remain, 1.0, &p), MPITOPO_ERR_ARG, "dims");
    FAILS(mpitopo_pattern_subcomm_alltoall(2, zero, remain, 1.0, &p), MPITOPO_ERR_ARG,
          "dims[1] = 0");
    FAILS(mpitopo_pattern_subcomm_alltoall(2, dims, remain, -1.0, &p), MPITOPO_ERR_ARG,
          "bytes = -1");
    FAILS(mpitopo_pattern_subcomm_alltoall(2, dims, remain, NAN, &p), MPITOPO_ERR_ARG, "bytes");
    FAILS(mpitopo_pattern_subcomm_alltoall(2, huge, remain, 1.0, &p), MPITOPO_ERR_RANGE,
          "more than 2147483647 processes");
    FAILS(mpitopo_pattern_subcomm_alltoall(2, big, keep, 1.0, &p), MPITOPO_ERR_RANGE,
          "a sub-communicator of 2097152 processes");
    assert_null(p);
}

static void descriptions(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL, *q = NULL;
    int dims[3] = {3, 2, 4}, remain[3] = {1, 0, 1};
    OK(mpitopo_pattern_from_string("alltoall:3x2x4:1,0,1:bytes=2.5", &p));
    OK(mpitopo_pattern_subcomm_alltoall(3, dims, remain, 2.5, &q));
    assert_int_equal(p->nedges, q->nedges);
    assert_memory_equal(p->dst, q->dst, (size_t)q->nedges * sizeof *p->dst);
    assert_memory_equal(p->bytes, q->bytes, (size_t)q->nedges * sizeof *p->bytes);
    mpitopo_pattern_destroy(&p);
    mpitopo_pattern_destroy(&q);
    OK(mpitopo_pattern_from_string("alltoall:64x64:1,0", &p));
    assert_int_equal(p->nprocs, 4096);
    assert_int_equal(p->nedges, 4096 * 63);
    assert_true(p->bytes[0] == 1.0);
    mpitopo_pattern_destroy(&p);

    static const struct {
        const char *desc;
        int code;
        const char *needle;
    } bad[] = {
        {"alltoall:4x4", MPITOPO_ERR_PARSE, "expected DIMS:REMAIN[:bytes=B]"},
        {"alltoall:4x4:1,0:bytes=1:x", MPITOPO_ERR_PARSE, "got 4 fields"},
        {"alltoall:4x4:1", MPITOPO_ERR_PARSE, "REMAIN = \"1\" must have 2 values"},
        {"alltoall:4x4:1,2", MPITOPO_ERR_PARSE, "REMAIN: value 2 \"2\" is not an integer in [0, 1]"},
        {"alltoall:4x0:1,0", MPITOPO_ERR_PARSE, "dimension 2 \"0\""},
        {"alltoall:4x4:1,0:moore=1", MPITOPO_ERR_PARSE, "unknown option \"moore=1\""},
        {"alltoall:4x4:1,0:bytes=-1", MPITOPO_ERR_PARSE, "bytes = \"-1\""},
        {"alltoall:2x2097152:0,1", MPITOPO_ERR_RANGE, "a sub-communicator of 2097152"},
        {"alltoalls:4:1", MPITOPO_ERR_PARSE, "alltoall:DIMS:REMAIN[:bytes=B]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = (mpitopo_pattern_t *)&p;
        FAILS(mpitopo_pattern_from_string(bad[i].desc, &p), bad[i].code, bad[i].needle);
        assert_null(p);
        if (strncmp(mpitopo_last_error(), "mpitopo_pattern_from_string: ", 29) != 0)
            fail_msg("\"%s\": message \"%s\"", bad[i].desc, mpitopo_last_error());
    }
}

static int make_planes(void *ctx)
{
    (void)ctx;
    int dims[3] = {3, 2, 4}, remain[3] = {1, 0, 1};
    mpitopo_pattern_t *p = NULL;
    int rc = mpitopo_pattern_subcomm_alltoall(3, dims, remain, 1.0, &p);
    mpitopo_pattern_destroy(&p);
    return rc;
}

static void allocation_failures(void **state)
{
    (void)state;
    assert_true(unit_each_allocation_fails("subcomm alltoall", make_planes, NULL) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(columns_of_a_2d_grid), cmocka_unit_test(planes_of_a_3d_grid),
        cmocka_unit_test(extremes),            cmocka_unit_test(bad_arguments),
        cmocka_unit_test(descriptions),        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
