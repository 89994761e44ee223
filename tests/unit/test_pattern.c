/* Patterns: CSR builder, generators, descriptions, files, allocation failures. */
#include "unit.h"

#include "pattern/pattern_internal.h"

#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* Helpers ------------------------------------------------------------------- */

/* The invariants every pattern keeps: offsets from 0 to nedges, rows
 * strictly increasing (sorted, no duplicates), weights finite and >= 0. */
static void check_csr(const mpitopo_pattern_t *p)
{
    assert_true(p->nprocs >= 1);
    assert_int_equal(p->offs[0], 0);
    assert_int_equal(p->offs[p->nprocs], p->nedges);
    for (int i = 0; i < p->nprocs; i++) {
        assert_true(p->offs[i] <= p->offs[i + 1]);
        for (int64_t k = p->offs[i]; k < p->offs[i + 1]; k++) {
            assert_true(p->dst[k] >= 0 && p->dst[k] < p->nprocs);
            if (k > p->offs[i])
                assert_true(p->dst[k - 1] < p->dst[k]);
            assert_true(isfinite(p->bytes[k]) && p->bytes[k] >= 0);
            assert_true(isfinite(p->msgs[k]) && p->msgs[k] >= 0);
        }
    }
}

/* Dense n x n copies of the two weights; has[i * n + j] marks edges. */
static void to_dense(const mpitopo_pattern_t *p, double *bytes, double *msgs, char *has)
{
    int n = p->nprocs;
    memset(bytes, 0, (size_t)n * n * sizeof *bytes);
    memset(msgs, 0, (size_t)n * n * sizeof *msgs);
    memset(has, 0, (size_t)n * n);
    for (int i = 0; i < n; i++)
        for (int64_t k = p->offs[i]; k < p->offs[i + 1]; k++) {
            bytes[(size_t)i * n + p->dst[k]] = p->bytes[k];
            msgs[(size_t)i * n + p->dst[k]] = p->msgs[k];
            has[(size_t)i * n + p->dst[k]] = 1;
        }
}

/* Bit-identical patterns (the Cartesian remembrance aside). */
static void assert_same(const mpitopo_pattern_t *a, const mpitopo_pattern_t *b)
{
    assert_int_equal(a->nprocs, b->nprocs);
    assert_int_equal(a->nedges, b->nedges);
    size_t e = (size_t)a->nedges;
    assert_memory_equal(a->offs, b->offs, (size_t)(a->nprocs + 1) * sizeof *a->offs);
    if (e) {
        assert_memory_equal(a->dst, b->dst, e * sizeof *a->dst);
        assert_memory_equal(a->bytes, b->bytes, e * sizeof *a->bytes);
        assert_memory_equal(a->msgs, b->msgs, e * sizeof *a->msgs);
    }
}

/* The last error message starts with the public function's name. */
static void assert_error_from(const char *func)
{
    size_t n = strlen(func);
    if (strncmp(mpitopo_last_error(), func, n) != 0 ||
        strncmp(mpitopo_last_error() + n, ": ", 2) != 0)
        fail_msg("message \"%s\" does not start with \"%s: \"", mpitopo_last_error(), func);
}

static int degree(const mpitopo_pattern_t *p, int proc)
{
    int d = -1;
    OK(mpitopo_pattern_out_edges(p, proc, &d, NULL, NULL, NULL));
    return d;
}

/* mpitopo_pattern_create ----------------------------------------------------- */

static void test_create_merges_and_sorts(void **state)
{
    (void)state;
    /* Unsorted, with a self edge and the 1 -> 2 edge three times. */
    int src[] = {2, 1, 0, 1, 3, 1, 0, 1};
    int dst[] = {0, 2, 3, 0, 3, 2, 1, 2};
    double bytes[] = {1, 0.5, 3, 4, 5, 0.25, 7, 2};
    double msgs[] = {1, 1, 2, 1, 1, 3, 1, 1};
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(4, 8, src, dst, bytes, msgs, &p));
    check_csr(p);
    assert_int_equal(p->nedges, 6);
    int64_t offs[] = {0, 2, 4, 5, 6};
    int want_dst[] = {1, 3, 0, 2, 0, 3};
    double want_bytes[] = {7, 3, 4, 2.75, 1, 5};
    double want_msgs[] = {1, 2, 1, 5, 1, 1};
    assert_memory_equal(p->offs, offs, sizeof offs);
    assert_memory_equal(p->dst, want_dst, sizeof want_dst);
    assert_memory_equal(p->bytes, want_bytes, sizeof want_bytes);
    assert_memory_equal(p->msgs, want_msgs, sizeof want_msgs);
    assert_null(p->cart);
    mpitopo_pattern_destroy(&p);
    assert_null(p);
    mpitopo_pattern_destroy(&p);
    mpitopo_pattern_destroy(NULL);
}

static void test_create_default_weights(void **state)
{
    (void)state;
    int src[] = {0, 0, 1};
    int dst[] = {1, 1, 1};
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(2, 3, src, dst, NULL, NULL, &p));
    check_csr(p);
    assert_int_equal(p->nedges, 2);
    assert_true(p->bytes[0] == 2 && p->msgs[0] == 2); /* 0 -> 1 twice */
    assert_true(p->bytes[1] == 1 && p->msgs[1] == 1); /* 1 -> 1 kept */
    mpitopo_pattern_destroy(&p);

    OK(mpitopo_pattern_create(5, 0, NULL, NULL, NULL, NULL, &p));
    check_csr(p);
    assert_int_equal(p->nedges, 0);
    assert_int_equal(degree(p, 4), 0);
    mpitopo_pattern_destroy(&p);
}

/* Long rows take the qsort path; the sums must still come in input order,
 * which a dense accumulation in input order reproduces bit for bit. */
static void test_create_long_rows(void **state)
{
    (void)state;
    enum { N = 40, E = 6000 };
    static int src[E], dst[E];
    static double bytes[E], msgs[E], dense_b[N * N], dense_m[N * N], got_b[N * N], got_m[N * N];
    static char has[N * N], want_has[N * N];
    mpitopo__rng_t rng;
    mpitopo__rng_seed(&rng, 42);
    memset(dense_b, 0, sizeof dense_b);
    memset(dense_m, 0, sizeof dense_m);
    memset(want_has, 0, sizeof want_has);
    for (int e = 0; e < E; e++) {
        src[e] = (int)mpitopo__rng_below(&rng, e < E / 2 ? 3 : N); /* a few very long rows */
        dst[e] = (int)mpitopo__rng_below(&rng, N);
        bytes[e] = mpitopo__rng_double(&rng) * 10;
        msgs[e] = 1.0 / (1 + (double)mpitopo__rng_below(&rng, 7));
        dense_b[src[e] * N + dst[e]] += bytes[e];
        dense_m[src[e] * N + dst[e]] += msgs[e];
        want_has[src[e] * N + dst[e]] = 1;
    }
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(N, E, src, dst, bytes, msgs, &p));
    check_csr(p);
    to_dense(p, got_b, got_m, has);
    assert_memory_equal(has, want_has, sizeof has);
    assert_memory_equal(got_b, dense_b, sizeof got_b);
    assert_memory_equal(got_m, dense_m, sizeof got_m);
    mpitopo_pattern_destroy(&p);
}

static void test_create_errors(void **state)
{
    (void)state;
    int src[] = {0, 1}, dst[] = {1, 2};
    double bad[] = {1, -1}, nan_[] = {NAN, 1}, inf_[] = {1, INFINITY};
    mpitopo_pattern_t *p = (mpitopo_pattern_t *)&p; /* must be reset to NULL */
    FAILS(mpitopo_pattern_create(0, 0, NULL, NULL, NULL, NULL, &p), MPITOPO_ERR_ARG, "nprocs = 0");
    assert_null(p);
    FAILS(mpitopo_pattern_create(3, -1, src, dst, NULL, NULL, &p), MPITOPO_ERR_ARG, "nedges = -1");
    FAILS(mpitopo_pattern_create(3, 2, NULL, dst, NULL, NULL, &p), MPITOPO_ERR_ARG, "NULL");
    FAILS(mpitopo_pattern_create(2, 2, src, dst, NULL, NULL, &p), MPITOPO_ERR_RANGE,
          "edge 1: 1 -> 2 out of range [0, 2)");
    FAILS(mpitopo_pattern_create(3, 2, src, dst, bad, NULL, &p), MPITOPO_ERR_ARG, "bytes = -1");
    FAILS(mpitopo_pattern_create(3, 2, src, dst, nan_, NULL, &p), MPITOPO_ERR_ARG, "edge 0");
    FAILS(mpitopo_pattern_create(3, 2, src, dst, NULL, inf_, &p), MPITOPO_ERR_ARG,
          "messages = inf");
    assert_error_from("mpitopo_pattern_create");
    FAILS(mpitopo_pattern_create(3, 2, src, dst, NULL, NULL, NULL), MPITOPO_ERR_ARG, "");
    assert_null(p);
    /* Finite weights whose sum is not. */
    int s2[] = {0, 0}, d2[] = {1, 1};
    double huge[] = {1.5e308, 1.5e308};
    FAILS(mpitopo_pattern_create(2, 2, s2, d2, huge, NULL, &p), MPITOPO_ERR_RANGE, "0 -> 1");
    assert_error_from("mpitopo_pattern_create");
    assert_null(p);
}

static void test_queries(void **state)
{
    (void)state;
    int src[] = {0, 0, 2}, dst[] = {2, 1, 0};
    double bytes[] = {5, 6, 7};
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_create(3, 3, src, dst, bytes, NULL, &p));
    int n = 0, deg = 0, is_cart = -1, ndims = -1;
    int64_t e = 0;
    const int *d = NULL;
    const double *b = NULL, *m = NULL;
    OK(mpitopo_pattern_nprocs(p, &n));
    OK(mpitopo_pattern_nedges(p, &e));
    assert_int_equal(n, 3);
    assert_int_equal(e, 3);
    OK(mpitopo_pattern_out_edges(p, 0, &deg, &d, &b, &m));
    assert_int_equal(deg, 2);
    assert_int_equal(d[0], 1);
    assert_int_equal(d[1], 2);
    assert_true(b[0] == 6 && b[1] == 5 && m[0] == 1 && m[1] == 1);
    OK(mpitopo_pattern_out_edges(p, 1, &deg, NULL, NULL, NULL));
    assert_int_equal(deg, 0);
    FAILS(mpitopo_pattern_out_edges(p, 3, &deg, NULL, NULL, NULL), MPITOPO_ERR_RANGE, "proc = 3");
    FAILS(mpitopo_pattern_out_edges(p, -1, &deg, NULL, NULL, NULL), MPITOPO_ERR_RANGE, "proc = -1");
    FAILS(mpitopo_pattern_out_edges(p, 0, NULL, NULL, NULL, NULL), MPITOPO_ERR_ARG, "");
    FAILS(mpitopo_pattern_nprocs(NULL, &n), MPITOPO_ERR_ARG, "");
    FAILS(mpitopo_pattern_nedges(p, NULL), MPITOPO_ERR_ARG, "");
    OK(mpitopo_pattern_cart_info(p, &is_cart, &ndims, NULL, NULL));
    assert_int_equal(is_cart, 0);
    assert_int_equal(ndims, 0);
    FAILS(mpitopo_pattern_cart_info(NULL, &is_cart, NULL, NULL, NULL), MPITOPO_ERR_ARG, "");
    mpitopo_pattern_destroy(&p);
}

static void test_weight_names(void **state)
{
    (void)state;
    mpitopo_weight_t w = MPITOPO_WEIGHT_UNIT;
    OK(mpitopo_weight_from_string("bytes", &w));
    assert_int_equal(w, MPITOPO_WEIGHT_BYTES);
    OK(mpitopo_weight_from_string("messages", &w));
    assert_int_equal(w, MPITOPO_WEIGHT_MESSAGES);
    OK(mpitopo_weight_from_string("unit", &w));
    assert_int_equal(w, MPITOPO_WEIGHT_UNIT);
    FAILS(mpitopo_weight_from_string("Bytes", &w), MPITOPO_ERR_NOT_FOUND, "\"Bytes\"");
    FAILS(mpitopo_weight_from_string(NULL, &w), MPITOPO_ERR_ARG, "");
    for (int k = 0; k < 3; k++) {
        OK(mpitopo_weight_from_string(mpitopo_weight_name((mpitopo_weight_t)k), &w));
        assert_int_equal(w, k);
    }
    assert_string_equal(mpitopo_weight_name((mpitopo_weight_t)7), "unknown");
    assert_true(mpitopo_edge_weight(MPITOPO_WEIGHT_BYTES, 3, 4) == 3);
    assert_true(mpitopo_edge_weight(MPITOPO_WEIGHT_MESSAGES, 3, 4) == 4);
    assert_true(mpitopo_edge_weight(MPITOPO_WEIGHT_UNIT, 3, 4) == 1);
}

/* Cartesian patterns against a naive computation ------------------------------ */

/* Every offset of the stencil, computed the slow way: enumerate
 * [-r, r]^ndims and keep what the kind asks for. Returns the count. */
/* Whether offset o (from any point) reaches a neighbour other than the point
 * itself and, when q is given, other than the one offset q reaches. */
static int reaches_other(int ndims, const int *dims, const int *periods, const int *o, const int *q)
{
    for (int i = 0; i < ndims; i++)
        if (!periods[i] && (o[i] >= dims[i] || -o[i] >= dims[i]))
            return 0; /* beyond an open border: nobody */
    for (int i = 0; i < ndims; i++) {
        long long diff = (long long)o[i] - (q ? q[i] : 0);
        if (periods[i] ? diff % dims[i] != 0 : diff != 0)
            return 1;
    }
    return 0;
}

static int naive_offsets(int ndims, const mpitopo_stencil_t *s, int *out)
{
    if (s->kind == MPITOPO_STENCIL_OFFSETS) {
        for (int k = 0; k < s->noffsets * ndims; k++)
            out[k] = s->offsets[k];
        return s->noffsets;
    }
    int r = s->radius, side = 2 * r + 1, total = 1, n = 0;
    for (int i = 0; i < ndims; i++)
        total *= side;
    for (int code = 0; code < total; code++) {
        int o[MPITOPO_MAX_DIMS], nonzero = 0, c = code;
        for (int i = 0; i < ndims; i++, c /= side) {
            o[i] = c % side - r;
            nonzero += o[i] != 0;
        }
        if (nonzero == 0 || (s->kind == MPITOPO_STENCIL_STAR && nonzero != 1))
            continue;
        memcpy(out + (size_t)n * ndims, o, (size_t)ndims * sizeof *o);
        n++;
    }
    return n;
}

/* Dense weights of the Cartesian pattern, straight from the definition. */
static void naive_cart(int ndims, const int *dims, const int *periods, const mpitopo_stencil_t *s,
                       double *bytes, double *msgs, char *has)
{
    int n = 1;
    for (int i = 0; i < ndims; i++)
        n *= dims[i];
    static int offs[4096 * MPITOPO_MAX_DIMS];
    int noff = naive_offsets(ndims, s, offs);
    memset(bytes, 0, (size_t)n * n * sizeof *bytes);
    memset(msgs, 0, (size_t)n * n * sizeof *msgs);
    memset(has, 0, (size_t)n * n);
    for (int p = 0; p < n; p++) {
        int coords[MPITOPO_MAX_DIMS];
        for (int i = ndims - 1, rest = p; i >= 0; rest /= dims[i], i--)
            coords[i] = rest % dims[i];
        for (int k = 0; k < noff; k++) {
            const int *o = offs + (size_t)k * ndims;
            int q = 0, inside = 1;
            double w = s->bytes * (s->offset_weights ? s->offset_weights[k] : 1);
            for (int i = 0; i < ndims; i++) {
                int c = coords[i] + o[i];
                if (periods[i])
                    c = ((c % dims[i]) + dims[i]) % dims[i];
                inside &= c >= 0 && c < dims[i];
                q = q * dims[i] + c;
                if (o[i] && s->dim_weights)
                    w *= s->dim_weights[i];
            }
            if (!inside || q == p)
                continue;
            bytes[(size_t)p * n + q] += w;
            msgs[(size_t)p * n + q] += 1;
            has[(size_t)p * n + q] = 1;
        }
    }
}

#define CART_MAXN 128

static void check_cart_case(int ndims, const int *dims, const int *periods,
                            const mpitopo_stencil_t *s)
{
    static double wb[CART_MAXN * CART_MAXN], wm[CART_MAXN * CART_MAXN];
    static double gb[CART_MAXN * CART_MAXN], gm[CART_MAXN * CART_MAXN];
    static char wh[CART_MAXN * CART_MAXN], gh[CART_MAXN * CART_MAXN];
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_cart(ndims, dims, periods, s, &p));
    check_csr(p);
    assert_true(p->nprocs <= CART_MAXN);
    naive_cart(ndims, dims, periods, s, wb, wm, wh);
    to_dense(p, gb, gm, gh);
    size_t nn = (size_t)p->nprocs * p->nprocs;
    for (size_t k = 0; k < nn; k++) {
        if (gh[k] != wh[k] || gb[k] != wb[k] || gm[k] != wm[k])
            fail_msg(
                "ndims %d dims[0] %d kind %d radius %d: edge %zu -> %zu: got %d %g %g, want %d "
                "%g %g",
                ndims, ndims ? dims[0] : 0, (int)s->kind, s->radius, k / p->nprocs, k % p->nprocs,
                gh[k], gb[k], gm[k], wh[k], wb[k], wm[k]);
    }
    /* The remembered grid and offsets. */
    int is_cart = 0, nd = -1, d[MPITOPO_MAX_DIMS], per[MPITOPO_MAX_DIMS];
    OK(mpitopo_pattern_cart_info(p, &is_cart, &nd, d, per));
    assert_int_equal(is_cart, 1);
    assert_int_equal(nd, ndims);
    for (int i = 0; i < ndims; i++) {
        assert_int_equal(d[i], dims[i]);
        assert_int_equal(per[i], periods[i] != 0);
    }
    /* The raw stencil's weight that reaches a neighbour other than the point
     * itself ends up, merged, in the stored stencil. */
    static int offs[4096 * MPITOPO_MAX_DIMS];
    int noff = naive_offsets(ndims, s, offs);
    double want_bytes = 0, want_msgs = 0, bytes = 0, msgs = 0;
    for (int k = 0; k < noff; k++) {
        if (!reaches_other(ndims, dims, periods, offs + k * ndims, NULL))
            continue;
        double w = s->bytes * (s->offset_weights ? s->offset_weights[k] : 1);
        for (int i = 0; i < ndims; i++)
            w *= offs[k * ndims + i] && s->dim_weights ? s->dim_weights[i] : 1;
        want_bytes += w;
        want_msgs += 1;
    }
    const mpitopo__cart_t *c = p->cart;
    for (int k = 0; k < c->noffsets; k++) {
        bytes += c->offset_bytes[k];
        msgs += c->offset_msgs[k];
    }
    assert_true(fabs(bytes - want_bytes) <= 1e-9 * want_bytes);
    assert_true(msgs == want_msgs);
    /* Merged: distinct stored offsets reach distinct neighbours, so each gives
     * one edge from every process whose neighbour exists. */
    double edges = 0, edge_bytes = 0, edge_msgs = 0;
    for (int k = 0; k < c->noffsets; k++) {
        const int *o = c->offsets + k * ndims;
        assert_true(reaches_other(ndims, dims, periods, o, NULL));
        for (int j = 0; j < k; j++)
            assert_true(reaches_other(ndims, dims, periods, o, c->offsets + j * ndims));
        double points = 1;
        for (int i = 0; i < ndims; i++) {
            int a = abs(o[i]);
            points *= periods[i] ? dims[i] : (a >= dims[i] ? 0 : dims[i] - a);
        }
        edges += points;
        edge_bytes += points * c->offset_bytes[k];
        edge_msgs += points * c->offset_msgs[k];
    }
    assert_true(edges == (double)p->nedges);
    double got_bytes = 0, got_msgs = 0;
    for (int64_t e = 0; e < p->nedges; e++) {
        got_bytes += p->bytes[e];
        got_msgs += p->msgs[e];
    }
    assert_true(fabs(got_bytes - edge_bytes) <= 1e-9 * edge_bytes);
    assert_true(got_msgs == edge_msgs);
    mpitopo_pattern_destroy(&p);
}

static const int grids[][5] = {
    /* ndims, dims... */
    {0},          {1, 5},       {1, 1},          {1, 2},          {1, 3},          {2, 4, 3},
    {2, 2, 2},    {2, 1, 5},    {2, 5, 1},       {2, 3, 3},       {2, 2, 6},       {3, 3, 2, 4},
    {3, 2, 2, 2}, {3, 1, 3, 4}, {4, 2, 3, 1, 2}, {4, 3, 3, 3, 3}, {4, 2, 2, 2, 2},
};

static void check_cart_grid(const int *g, const mpitopo_stencil_t *s)
{
    int ndims = g[0];
    const int *dims = g + 1;
    int all[4] = {1, 1, 1, 1}, none[4] = {0}, alt[4] = {1, 0, 1, 0}, alt2[4] = {0, 1, 0, 1};
    check_cart_case(ndims, dims, all, s);
    check_cart_case(ndims, dims, none, s);
    check_cart_case(ndims, dims, alt, s);
    check_cart_case(ndims, dims, alt2, s);
}

static void test_cart_vs_naive_star_moore(void **state)
{
    (void)state;
    double dw[4] = {4, 1, 0.5, 2};
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++)
        for (int kind = 0; kind < 2; kind++)
            for (int r = 0; r <= 2; r++)
                for (int weighted = 0; weighted < 2; weighted++) {
                    mpitopo_stencil_t s = {(mpitopo_stencil_kind_t)kind, r, 0, NULL, NULL, NULL, 1};
                    if (weighted) {
                        s.dim_weights = dw;
                        s.bytes = 8;
                    }
                    check_cart_grid(grids[g], &s);
                }
}

static void test_cart_vs_naive_offsets(void **state)
{
    (void)state;
    /* 2-D: a skewed stencil with a repeated offset, a long one that wraps
     * twice and one that wraps onto the process itself on small grids. */
    int o2[] = {1, 0, 0, -1, 1, 1, 1, 0, -2, 3, 0, 4, 5, -7};
    double ow2[] = {1, 2, 0.5, 4, 0.25, 8, 0};
    double dw2[] = {3, 0.5};
    int dims2[][3] = {{2, 4, 3}, {2, 2, 2}, {2, 1, 4}, {2, 5, 5}, {2, 3, 7}};
    for (int g = 0; g < 5; g++)
        for (int weighted = 0; weighted < 2; weighted++) {
            mpitopo_stencil_t s = {MPITOPO_STENCIL_OFFSETS, 0, 7, o2, NULL, NULL, 2};
            if (weighted) {
                s.offset_weights = ow2;
                s.dim_weights = dw2;
            }
            check_cart_grid(dims2[g], &s);
        }
    /* 3-D and 1-D. */
    int o3[] = {1, -1, 0, 0, 0, 2, -1, -1, -1, 2, 0, 0};
    double ow3[] = {1, 3, 0.5, 2};
    int g3[] = {3, 3, 2, 4};
    mpitopo_stencil_t s3 = {MPITOPO_STENCIL_OFFSETS, 0, 4, o3, ow3, NULL, 1};
    check_cart_grid(g3, &s3);
    int o1[] = {-3, 1, 2, 6};
    int g1[] = {1, 6};
    mpitopo_stencil_t s1 = {MPITOPO_STENCIL_OFFSETS, 0, 4, o1, NULL, NULL, 1};
    check_cart_grid(g1, &s1);
    /* No offsets at all. */
    mpitopo_stencil_t s0 = {MPITOPO_STENCIL_OFFSETS, 0, 0, NULL, NULL, NULL, 1};
    check_cart_grid(g3, &s0);
}

static void test_cart_degrees(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    int d2[] = {128, 128};
    OK(mpitopo_pattern_cart(2, d2, NULL, NULL, &p));
    check_csr(p);
    assert_int_equal(p->nprocs, 16384);
    assert_int_equal(p->nedges, 4 * 16384);
    for (int q = 0; q < p->nprocs; q++)
        assert_int_equal(degree(p, q), 4);
    /* Neighbours of rank 0 in a periodic grid: (0,1), (1,0), (0,127), (127,0). */
    const int *dst;
    int deg;
    OK(mpitopo_pattern_out_edges(p, 0, &deg, &dst, NULL, NULL));
    int want0[] = {1, 127, 128, 127 * 128};
    assert_memory_equal(dst, want0, sizeof want0);
    mpitopo_pattern_destroy(&p);

    int d3[] = {4, 4, 4};
    mpitopo_stencil_t moore = {MPITOPO_STENCIL_MOORE, 1, 0, NULL, NULL, NULL, 1};
    OK(mpitopo_pattern_cart(3, d3, NULL, &moore, &p));
    for (int q = 0; q < p->nprocs; q++)
        assert_int_equal(degree(p, q), 26);
    assert_int_equal(p->cart->noffsets, 26);
    mpitopo_pattern_destroy(&p);

    /* Open 4x4 star: corners 2, borders 3, inside 4; 48 edges. */
    int d4[] = {4, 4}, open[] = {0, 0};
    OK(mpitopo_pattern_cart(2, d4, open, NULL, &p));
    assert_int_equal(p->nedges, 48);
    assert_int_equal(degree(p, 0), 2);
    assert_int_equal(degree(p, 1), 3);
    assert_int_equal(degree(p, 5), 4);
    assert_int_equal(degree(p, 15), 2);
    mpitopo_pattern_destroy(&p);

    /* Open 3x3x3 Moore: the centre has 26 neighbours, a corner 7. */
    int d5[] = {3, 3, 3}, open3[] = {0, 0, 0};
    OK(mpitopo_pattern_cart(3, d5, open3, &moore, &p));
    assert_int_equal(degree(p, 13), 26);
    assert_int_equal(degree(p, 0), 7);
    mpitopo_pattern_destroy(&p);
}

/* Periodic dimensions of size 1 and 2: offsets that hit the same peer are
 * merged, offsets that come back to the process vanish. */
static void test_cart_tiny_dims(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    int d22[] = {2, 2};
    OK(mpitopo_pattern_cart(2, d22, NULL, NULL, &p));
    assert_int_equal(p->nedges, 8);
    for (int q = 0; q < 4; q++) {
        const int *dst;
        const double *b, *m;
        int deg;
        OK(mpitopo_pattern_out_edges(p, q, &deg, &dst, &b, &m));
        assert_int_equal(deg, 2);
        for (int k = 0; k < 2; k++)
            assert_true(b[k] == 2 && m[k] == 2 && dst[k] != q);
    }
    assert_int_equal(p->cart->noffsets, 2); /* +-1 merged in both dimensions */
    mpitopo_pattern_destroy(&p);

    int d11[] = {1, 1};
    OK(mpitopo_pattern_cart(2, d11, NULL, NULL, &p));
    assert_int_equal(p->nprocs, 1);
    assert_int_equal(p->nedges, 0);
    assert_int_equal(p->cart->noffsets, 0); /* every offset wraps onto the point */
    mpitopo_pattern_destroy(&p);

    int d14[] = {1, 4};
    OK(mpitopo_pattern_cart(2, d14, NULL, NULL, &p));
    assert_int_equal(p->nedges, 8);
    mpitopo_pattern_destroy(&p);

    /* Star radius 2 on a periodic ring of 3: -1 = +2 and +1 = -2. */
    int d3[] = {3};
    mpitopo_stencil_t s = {MPITOPO_STENCIL_STAR, 2, 0, NULL, NULL, NULL, 1};
    OK(mpitopo_pattern_cart(1, d3, NULL, &s, &p));
    assert_int_equal(p->nedges, 6);
    for (int64_t k = 0; k < p->nedges; k++)
        assert_true(p->bytes[k] == 2 && p->msgs[k] == 2);
    mpitopo_pattern_destroy(&p);
}

static void test_cart_zero_dims(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_cart(0, NULL, NULL, NULL, &p));
    check_csr(p);
    assert_int_equal(p->nprocs, 1);
    assert_int_equal(p->nedges, 0);
    int is_cart = 0, nd = -1;
    OK(mpitopo_pattern_cart_info(p, &is_cart, &nd, NULL, NULL));
    assert_int_equal(is_cart, 1);
    assert_int_equal(nd, 0);
    mpitopo_pattern_destroy(&p);
    mpitopo_stencil_t moore = {MPITOPO_STENCIL_MOORE, 3, 0, NULL, NULL, NULL, 1};
    OK(mpitopo_pattern_cart(0, NULL, NULL, &moore, &p));
    assert_int_equal(p->nedges, 0);
    mpitopo_pattern_destroy(&p);
}

static void test_cart_errors(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    int d[] = {4, 4}, d0[] = {4, 0}, dbig[] = {65536, 65536}, zero[] = {1, 0, 0, 0};
    double neg = -1, nanw[] = {1, NAN}, big[] = {1e300, 1e300};
    FAILS(mpitopo_pattern_cart(-1, d, NULL, NULL, &p), MPITOPO_ERR_ARG, "ndims = -1");
    FAILS(mpitopo_pattern_cart(33, d, NULL, NULL, &p), MPITOPO_ERR_ARG, "ndims = 33");
    FAILS(mpitopo_pattern_cart(2, NULL, NULL, NULL, &p), MPITOPO_ERR_ARG, "dims");
    FAILS(mpitopo_pattern_cart(2, d0, NULL, NULL, &p), MPITOPO_ERR_ARG, "dims[1] = 0");
    assert_error_from("mpitopo_pattern_cart");
    FAILS(mpitopo_pattern_cart(2, dbig, NULL, NULL, &p), MPITOPO_ERR_RANGE, "65536x65536");
    FAILS(mpitopo_pattern_cart(2, d, NULL, NULL, NULL), MPITOPO_ERR_ARG, "");
    mpitopo_stencil_t s = {MPITOPO_STENCIL_STAR, -1, 0, NULL, NULL, NULL, 1};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_ARG, "radius = -1");
    s = (mpitopo_stencil_t){(mpitopo_stencil_kind_t)7, 1, 0, NULL, NULL, NULL, 1};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_ARG, "kind = 7");
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_OFFSETS, 0, 2, zero, NULL, NULL, 1};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_ARG, "offsets[1] is all zero");
    assert_error_from("mpitopo_pattern_cart");
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_OFFSETS, 0, 2, NULL, NULL, NULL, 1};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_ARG, "offsets must not be NULL");
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_OFFSETS, 0, -1, zero, NULL, NULL, 1};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_ARG, "noffsets = -1");
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_OFFSETS, 0, 1, zero, &neg, NULL, 1};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_ARG, "offset_weights[0] = -1");
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_STAR, 1, 0, NULL, NULL, nanw, 1};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_ARG, "dim_weights[1] = nan");
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_STAR, 1, 0, NULL, NULL, NULL, -2};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_ARG, "bytes = -2");
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_MOORE, 1, 0, NULL, NULL, big, 1e300};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_RANGE, "overflow");
    assert_error_from("mpitopo_pattern_cart");
    /* 3^32 - 1 and 8e9 offsets: counted without overflow, refused. */
    int d32[32];
    for (int i = 0; i < 32; i++)
        d32[i] = 1;
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_MOORE, 1, 0, NULL, NULL, NULL, 1};
    FAILS(mpitopo_pattern_cart(32, d32, NULL, &s, &p), MPITOPO_ERR_RANGE, "offsets");
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_STAR, 2000000000, 0, NULL, NULL, NULL, 1};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_RANGE, "offsets");
    /* One stencil limit everywhere (MPITOPO_MAX_STENCIL_OFFSETS, as in
     * mpitopo_cart_stencil_create): Moore radius 2,000 in 2-D is 16 million
     * offsets and is refused at once; radius 511 (1,046,528) is not. */
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_MOORE, 2000, 0, NULL, NULL, NULL, 1};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_RANGE, "more than 1048576 offsets");
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_STAR, 1 << 19, 0, NULL, NULL, NULL, 1};
    FAILS(mpitopo_pattern_cart(2, d, NULL, &s, &p), MPITOPO_ERR_RANGE, "more than 1048576 offsets");
    FAILS(mpitopo_pattern_from_string("cart:64x64:moore=2000", &p), MPITOPO_ERR_RANGE, "more than 1048576 offsets");
    /* A side of 2^32 - 1: the count once overflowed 64 bits (UB), then asked for memory. */
    FAILS(mpitopo_pattern_from_string("cart:4x4:moore=2147483647", &p), MPITOPO_ERR_RANGE, "more than 1048576 offsets");
    FAILS(mpitopo_pattern_from_string("cart:4x4x4:moore=1073741824", &p), MPITOPO_ERR_RANGE, "more than 1048576 offsets");
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_MOORE, 511, 0, NULL, NULL, NULL, 1};
    OK(mpitopo_pattern_cart(2, d, NULL, &s, &p));
    mpitopo_pattern_destroy(&p);
    assert_null(p);
}

/* A million processes: the CSR is built and checked; its time is printed
 * (performance is measured by bench/, not asserted here). */
static void test_cart_million(void **state)
{
    (void)state;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_from_string("cart:1000x1000", &p));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    print_message("cart:1000x1000 star: %.3f s\n", secs);
    assert_int_equal(p->nprocs, 1000000);
    assert_int_equal(p->nedges, 4000000);
    for (int q = 0; q < p->nprocs; q += 997)
        assert_int_equal(degree(p, q), 4);
    check_csr(p);
    mpitopo_pattern_destroy(&p);
}

/* Random patterns ---------------------------------------------------------------- */

static void test_random_statistics(void **state)
{
    (void)state;
    const int n = 300;
    const double density = 0.05;
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_random(n, density, 12345, &p));
    check_csr(p);
    double pairs = (double)n * (n - 1), mean = density * pairs;
    double sigma = sqrt(pairs * density * (1 - density));
    assert_true(fabs((double)p->nedges - mean) < 5 * sigma);
    /* No self edges; as many pairs above as below the diagonal; the first
     * and last rows get their share. */
    int64_t upper = 0, first = 0, last = 0;
    for (int i = 0; i < n; i++)
        for (int64_t k = p->offs[i]; k < p->offs[i + 1]; k++) {
            assert_int_not_equal(p->dst[k], i);
            upper += p->dst[k] > i;
            assert_true(p->bytes[k] == 1 && p->msgs[k] == 1);
        }
    for (int i = 0; i < 30; i++) {
        first += degree(p, i);
        last += degree(p, n - 1 - i);
    }
    double half = (double)p->nedges / 2, rows = 30 * (n - 1) * density;
    assert_true(fabs((double)upper - half) < 5 * sqrt(half));
    assert_true(fabs((double)first - rows) < 5 * sqrt(rows));
    assert_true(fabs((double)last - rows) < 5 * sqrt(rows));
    mpitopo_pattern_destroy(&p);
}

static void test_random_determinism(void **state)
{
    (void)state;
    mpitopo_pattern_t *a = NULL, *b = NULL, *c = NULL;
    OK(mpitopo_pattern_random(200, 0.1, 7, &a));
    OK(mpitopo_pattern_random(200, 0.1, 7, &b));
    OK(mpitopo_pattern_random(200, 0.1, 8, &c));
    assert_same(a, b);
    int differ =
        a->nedges != c->nedges || memcmp(a->dst, c->dst, (size_t)a->nedges * sizeof *a->dst) != 0;
    assert_true(differ);
    mpitopo_pattern_destroy(&a);
    mpitopo_pattern_destroy(&b);
    mpitopo_pattern_destroy(&c);
}

static void test_random_extremes(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL, *q = NULL;
    OK(mpitopo_pattern_random(50, 0, 1, &p));
    assert_int_equal(p->nedges, 0);
    mpitopo_pattern_destroy(&p);
    OK(mpitopo_pattern_random(50, 1, 1, &p));
    OK(mpitopo_pattern_complete(50, &q));
    assert_same(p, q);
    mpitopo_pattern_destroy(&p);
    mpitopo_pattern_destroy(&q);
    OK(mpitopo_pattern_random(1, 0.5, 1, &p));
    assert_int_equal(p->nedges, 0);
    mpitopo_pattern_destroy(&p);
    /* Nearly complete: every pair but a handful, none twice. */
    OK(mpitopo_pattern_random(60, 0.999, 3, &p));
    check_csr(p);
    assert_true(p->nedges > 60 * 59 - 30);
    mpitopo_pattern_destroy(&p);
    /* Tiny densities over many pairs: sparse, fast. */
    OK(mpitopo_pattern_random(1000000, 1e-9, 3, &p));
    check_csr(p);
    assert_true(p->nedges < 10000);
    mpitopo_pattern_destroy(&p);
    OK(mpitopo_pattern_random(5, 5e-324, 3, &p));
    assert_int_equal(p->nedges, 0);
    mpitopo_pattern_destroy(&p);
    FAILS(mpitopo_pattern_random(10, -0.1, 1, &p), MPITOPO_ERR_ARG, "density = -0.1");
    FAILS(mpitopo_pattern_random(10, 1.5, 1, &p), MPITOPO_ERR_ARG, "density = 1.5");
    FAILS(mpitopo_pattern_random(10, NAN, 1, &p), MPITOPO_ERR_ARG, "density = nan");
    FAILS(mpitopo_pattern_random(0, 0.5, 1, &p), MPITOPO_ERR_ARG, "nprocs = 0");
    assert_null(p);
}

/* Rings and complete graphs ------------------------------------------------------- */

static void test_rings(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL, *q = NULL;
    OK(mpitopo_pattern_rings(10, 4, &p));
    check_csr(p);
    /* {0..3} {4..7} {8, 9}: the pair gives both directions. */
    int src[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, dst[] = {1, 2, 3, 0, 5, 6, 7, 4, 9, 8};
    OK(mpitopo_pattern_create(10, 10, src, dst, NULL, NULL, &q));
    assert_same(p, q);
    mpitopo_pattern_destroy(&p);
    mpitopo_pattern_destroy(&q);

    OK(mpitopo_pattern_rings(7, 3, &p)); /* the last ring {6} has no edge */
    assert_int_equal(p->nedges, 6);
    assert_int_equal(degree(p, 6), 0);
    assert_int_equal(p->dst[p->offs[5]], 3);
    mpitopo_pattern_destroy(&p);
    OK(mpitopo_pattern_rings(7, 1, &p));
    assert_int_equal(p->nedges, 0);
    mpitopo_pattern_destroy(&p);
    OK(mpitopo_pattern_rings(5, 2147483647, &p)); /* one ring of 5 */
    assert_int_equal(p->nedges, 5);
    assert_int_equal(p->dst[p->offs[4]], 0);
    mpitopo_pattern_destroy(&p);
    FAILS(mpitopo_pattern_rings(5, 0, &p), MPITOPO_ERR_ARG, "ring_size = 0");
    FAILS(mpitopo_pattern_rings(0, 2, &p), MPITOPO_ERR_ARG, "nprocs = 0");
}

static void test_complete(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    OK(mpitopo_pattern_complete(5, &p));
    check_csr(p);
    assert_int_equal(p->nedges, 20);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(degree(p, i), 4);
        for (int64_t k = p->offs[i]; k < p->offs[i + 1]; k++)
            assert_int_equal(p->dst[k], (int)(k - p->offs[i]) + (k - p->offs[i] >= i));
    }
    mpitopo_pattern_destroy(&p);
    OK(mpitopo_pattern_complete(1, &p));
    assert_int_equal(p->nedges, 0);
    mpitopo_pattern_destroy(&p);
    FAILS(mpitopo_pattern_complete(0, &p), MPITOPO_ERR_ARG, "nprocs = 0");
}

/* Descriptions -------------------------------------------------------------------- */

static void test_from_string_valid(void **state)
{
    (void)state;
    mpitopo_pattern_t *a = NULL, *b = NULL;
    OK(mpitopo_pattern_from_string("cart:4x4", &a));
    int d44[] = {4, 4};
    OK(mpitopo_pattern_cart(2, d44, NULL, NULL, &b));
    assert_same(a, b);
    mpitopo_pattern_destroy(&a);
    mpitopo_pattern_destroy(&b);

    OK(mpitopo_pattern_from_string("cart:3x4x5:periods=1,0,1:star=2:weights=4,1,0.5:bytes=8", &a));
    int d345[] = {3, 4, 5}, per[] = {1, 0, 1};
    double dw[] = {4, 1, 0.5};
    mpitopo_stencil_t s = {MPITOPO_STENCIL_STAR, 2, 0, NULL, NULL, dw, 8};
    OK(mpitopo_pattern_cart(3, d345, per, &s, &b));
    assert_same(a, b);
    mpitopo_pattern_destroy(&a);
    mpitopo_pattern_destroy(&b);

    OK(mpitopo_pattern_from_string("cart:4x5:open:moore=1", &a));
    int open[] = {0, 0};
    int d45[] = {4, 5};
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_MOORE, 1, 0, NULL, NULL, NULL, 1};
    OK(mpitopo_pattern_cart(2, d45, open, &s, &b));
    assert_same(a, b);
    mpitopo_pattern_destroy(&a);
    mpitopo_pattern_destroy(&b);

    OK(mpitopo_pattern_from_string("cart:6x5:bytes=2.5:offsets=1,0;0,-1;+2,3:open", &a));
    int offs[] = {1, 0, 0, -1, 2, 3};
    s = (mpitopo_stencil_t){MPITOPO_STENCIL_OFFSETS, 0, 3, offs, NULL, NULL, 2.5};
    int d65[] = {6, 5};
    OK(mpitopo_pattern_cart(2, d65, open, &s, &b));
    assert_same(a, b);
    assert_int_equal(a->cart->noffsets, 3);
    mpitopo_pattern_destroy(&a);
    mpitopo_pattern_destroy(&b);

    OK(mpitopo_pattern_from_string("random:50:0.1:7", &a));
    OK(mpitopo_pattern_random(50, 0.1, 7, &b));
    assert_same(a, b);
    mpitopo_pattern_destroy(&a);
    mpitopo_pattern_destroy(&b);

    OK(mpitopo_pattern_from_string("ring:10:4", &a));
    OK(mpitopo_pattern_rings(10, 4, &b));
    assert_same(a, b);
    mpitopo_pattern_destroy(&a);
    mpitopo_pattern_destroy(&b);

    OK(mpitopo_pattern_from_string("complete:6", &a));
    OK(mpitopo_pattern_complete(6, &b));
    assert_same(a, b);
    mpitopo_pattern_destroy(&a);
    mpitopo_pattern_destroy(&b);

    OK(mpitopo_pattern_from_string("cart:7", &a));
    assert_int_equal(a->nedges, 14);
    mpitopo_pattern_destroy(&a);
}

static void test_from_string_errors(void **state)
{
    (void)state;
    static const struct {
        const char *desc;
        int code;
        const char *needle;
    } cases[] = {
        {"cart:128xx4", MPITOPO_ERR_PARSE, "dimension 2 \"\" is not an integer >= 1"},
        {"cart:", MPITOPO_ERR_PARSE, "dimension 1 \"\""},
        {"cart", MPITOPO_ERR_PARSE, "dimension 1 \"\""},
        {"cart:4x0", MPITOPO_ERR_PARSE, "dimension 2 \"0\""},
        {"cart:4x-4", MPITOPO_ERR_PARSE, "dimension 2 \"-4\""},
        {"cart:4x4.5", MPITOPO_ERR_PARSE, "dimension 2 \"4.5\""},
        {"cart:1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1",
         MPITOPO_ERR_PARSE, "33 dimensions"},
        {"cart:100000x100000", MPITOPO_ERR_RANGE, "more than 2147483647 processes"},
        {"cart:4x4:", MPITOPO_ERR_PARSE, "unknown option \"\""},
        {"cart:4x4:foo=1", MPITOPO_ERR_PARSE, "unknown option \"foo\""},
        {"cart:4x4:open=1", MPITOPO_ERR_PARSE, "\"open\" takes no value"},
        {"cart:4x4:star", MPITOPO_ERR_PARSE, "\"star\" needs a value"},
        {"cart:4x4:open:periods=1,0", MPITOPO_ERR_PARSE, "\"periods\" conflicts"},
        {"cart:4x4:moore=1:star=1", MPITOPO_ERR_PARSE, "\"star\" conflicts"},
        {"cart:4x4:offsets=1,0:star=1", MPITOPO_ERR_PARSE, "\"star\" conflicts"},
        {"cart:4x4:bytes=1:bytes=2", MPITOPO_ERR_PARSE, "option \"bytes\" given twice"},
        {"cart:4x4:open:open", MPITOPO_ERR_PARSE, "option \"open\" given twice"},
        {"cart:4x4:periods=1", MPITOPO_ERR_PARSE, "periods = \"1\" must have 2 values"},
        {"cart:4x4:periods=1,2", MPITOPO_ERR_PARSE,
         "periods: value 2 \"2\" is not an integer in [0, 1]"},
        {"cart:4x4:star=-1", MPITOPO_ERR_PARSE, "star = \"-1\" is not an integer >= 0"},
        {"cart:4x4:moore=x", MPITOPO_ERR_PARSE, "moore = \"x\""},
        {"cart:4x4:offsets=1,0;1", MPITOPO_ERR_PARSE, "offset = \"1\" must have 2 values"},
        {"cart:4x4:offsets=1,0;1,z", MPITOPO_ERR_PARSE, "offset: value 2 \"z\""},
        {"cart:4x4:offsets=", MPITOPO_ERR_PARSE, "offset = \"\""},
        {"cart:4x4:offsets=1,0;0,0", MPITOPO_ERR_PARSE, "offsets[1] is all zero"},
        {"cart:4x4:weights=1,-1", MPITOPO_ERR_PARSE,
         "weights: value 2 \"-1\" is not a number >= 0"},
        {"cart:4x4:weights=1", MPITOPO_ERR_PARSE, "weights = \"1\" must have 2 values"},
        {"cart:4x4:bytes=abc", MPITOPO_ERR_PARSE, "bytes = \"abc\""},
        {"cart:4x4:bytes=inf", MPITOPO_ERR_PARSE, "bytes = \"inf\""},
        {"cart:4x4:bytes=1e300:weights=1e300,1", MPITOPO_ERR_RANGE, "overflow"},
        {"random:10:0.5", MPITOPO_ERR_PARSE,
         "expected 3 fields after the kind (N:DENSITY:SEED), got 2"},
        {"random:10:0.5:1:2", MPITOPO_ERR_PARSE, "got 4"},
        {"random:0:0.5:1", MPITOPO_ERR_PARSE, "N = \"0\" is not an integer >= 1"},
        {"random:10:1.5:1", MPITOPO_ERR_PARSE, "DENSITY = \"1.5\""},
        {"random:10:nan:1", MPITOPO_ERR_PARSE, "DENSITY = \"nan\""},
        {"random:10:0.5:-1", MPITOPO_ERR_PARSE, "SEED = \"-1\""},
        {"ring:10", MPITOPO_ERR_PARSE, "(N:K), got 1"},
        {"ring:10:0", MPITOPO_ERR_PARSE, "K = \"0\""},
        {"ring:99999999999:2", MPITOPO_ERR_PARSE, "N = \"99999999999\""},
        {"complete:x", MPITOPO_ERR_PARSE, "N = \"x\""},
        {"complete:4:5", MPITOPO_ERR_PARSE, "expected 1 fields"},
        {"torus:4", MPITOPO_ERR_PARSE, "unknown kind \"torus\" (known: cart:"},
        {"Cart:4", MPITOPO_ERR_PARSE, "unknown kind \"Cart\""},
        {"", MPITOPO_ERR_PARSE, "unknown kind \"\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mpitopo_pattern_t *p = (mpitopo_pattern_t *)&p;
        int rc = mpitopo_pattern_from_string(cases[k].desc, &p);
        if (rc != cases[k].code || !strstr(mpitopo_last_error(), cases[k].needle) ||
            !strstr(mpitopo_last_error(), "mpitopo_pattern_from_string: desc = \""))
            fail_msg("\"%s\": %s \"%s\", expected %s with \"%s\"", cases[k].desc,
                     mpitopo_err_name(rc), mpitopo_last_error(), mpitopo_err_name(cases[k].code),
                     cases[k].needle);
        assert_null(p);
    }
    mpitopo_pattern_t *p = NULL;
    FAILS(mpitopo_pattern_from_string("cart:128xx4", &p), MPITOPO_ERR_PARSE, "");
    assert_string_equal(mpitopo_last_error(),
                        "mpitopo_pattern_from_string: desc = \"cart:128xx4\": "
                        "dimension 2 \"\" is not an integer >= 1");
    FAILS(mpitopo_pattern_from_string(NULL, &p), MPITOPO_ERR_ARG, "");
    FAILS(mpitopo_pattern_from_string("complete:3", NULL), MPITOPO_ERR_ARG, "");
}

/* Files ------------------------------------------------------------------------------ */

static void test_read_valid(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL, *q = NULL;
    OK(mpitopo_pattern_read(MPITOPO_TEST_DATA "/pattern_valid.txt", &p));
    check_csr(p);
    int src[] = {0, 1, 1, 2, 3, 2, 3};
    int dst[] = {1, 0, 2, 3, 3, 1, 0};
    double bytes[] = {2048, 1024, 512.5, 1000, 8, 0.25, 0};
    double msgs[] = {2, 1, 2, 1, 1, 1, 0};
    OK(mpitopo_pattern_create(4, 7, src, dst, bytes, msgs, &q));
    assert_same(p, q);
    mpitopo_pattern_destroy(&p);
    mpitopo_pattern_destroy(&q);

    OK(mpitopo_pattern_read(MPITOPO_TEST_DATA "/pattern_crlf.txt", &p));
    int s2[] = {0, 1, 2}, d2[] = {1, 2, 0};
    double b2[] = {10, 20, 30}, m2[] = {1, 2, 3};
    OK(mpitopo_pattern_create(3, 3, s2, d2, b2, m2, &q));
    assert_same(p, q);
    mpitopo_pattern_destroy(&p);
    mpitopo_pattern_destroy(&q);
}

static void test_read_invalid_files(void **state)
{
    (void)state;
    static const struct {
        const char *file, *needle;
    } cases[] = {
        {"pattern_dst_range.txt", "pattern_dst_range.txt:5: DST = 70 out of range [0, 64)"},
        {"pattern_no_header.txt", "no header line"},
        {"pattern_bad_header.txt", "pattern_bad_header.txt:2: expected the header"},
        {"pattern_bad_version.txt", "pattern_bad_version.txt:1: version = \"2\""},
        {"pattern_fields.txt",
         "pattern_fields.txt:3: expected 4 fields SRC DST BYTES MESSAGES, got 3"},
        {"pattern_negative.txt", "pattern_negative.txt:4: BYTES = \"-5\""},
        {"pattern_nan.txt", "pattern_nan.txt:2: BYTES = \"nan\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", MPITOPO_TEST_DATA, cases[k].file);
        mpitopo_pattern_t *p = NULL;
        int rc = mpitopo_pattern_read(path, &p);
        if (rc != MPITOPO_ERR_FORMAT || !strstr(mpitopo_last_error(), cases[k].needle) ||
            !strstr(mpitopo_last_error(), "mpitopo_pattern_read: "))
            fail_msg("%s: %s \"%s\"", cases[k].file, mpitopo_err_name(rc), mpitopo_last_error());
        assert_null(p);
    }
    mpitopo_pattern_t *p = NULL;
    FAILS(mpitopo_pattern_read(MPITOPO_TEST_DATA "/no_such_file.txt", &p), MPITOPO_ERR_IO,
          "no_such_file.txt\": No such file or directory");
    FAILS(mpitopo_pattern_read(MPITOPO_TEST_DATA, &p), MPITOPO_ERR_IO, "Is a directory");
    FAILS(mpitopo_pattern_read(NULL, &p), MPITOPO_ERR_ARG, "");
}

/* A temporary file holding text[0..len); its path goes to path. */
static void temp_file(char path[64], const char *text, size_t len)
{
    snprintf(path, 64, "/tmp/mpitopo_test_pattern_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Small inputs that once meant unbounded work (issue 15). */
static void test_read_bounded(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    /* An endless stream without a line end stops at its first NUL byte. */
    clock_t t0 = clock();
    FAILS(mpitopo_pattern_read("/dev/zero", &p), MPITOPO_ERR_FORMAT,
          "mpitopo_pattern_read: /dev/zero:1: NUL byte in the line");
    assert_true(clock() - t0 < CLOCKS_PER_SEC / 4);
    assert_null(p);

    /* Lines are bounded, in files and in memory, before and after the
     * header; the longest line allowed reads (with a CR too). */
    size_t max = MPITOPO__PATTERN_MAX_LINE, size = 3 * max + 64;
    char *text = malloc(size), path[64];
    assert_non_null(text);
    int n = snprintf(text, size, "mpitopo-pattern 1 2\n0 1 1 1 #"); /* line 2: 9 bytes so far */
    memset(text + n, 'x', max - 9);
    memcpy(text + n + max - 9, "\r\n1 0 2 2\n", 10);
    size_t len = (size_t)n + max - 9 + 10;
    OK(mpitopo_pattern_parse(text, len, "t.txt", &p));
    assert_int_equal(p->nedges, 2);
    mpitopo_pattern_destroy(&p);
    temp_file(path, text, len);
    OK(mpitopo_pattern_read(path, &p));
    assert_int_equal(p->nedges, 2);
    mpitopo_pattern_destroy(&p);
    unlink(path);
    memmove(text + n + 1, text + n, len - (size_t)n); /* one 'x' more */
    FAILS(mpitopo_pattern_parse(text, len + 1, "t.txt", &p), MPITOPO_ERR_FORMAT,
          "t.txt:2: line longer than 4096 bytes");
    temp_file(path, text, len + 1);
    FAILS(mpitopo_pattern_read(path, &p), MPITOPO_ERR_FORMAT, ":2: line longer than 4096 bytes");
    unlink(path);
    memset(text, ' ', 3 * max); /* no line end at all: stops at once */
    temp_file(path, text, 3 * max);
    FAILS(mpitopo_pattern_read(path, &p), MPITOPO_ERR_FORMAT, ":1: line longer than 4096 bytes");
    unlink(path);
    free(text);

    /* A header claiming 2^31-1 processes for one edge: refused at the
     * header against the caller's bound, before anything is sized by it. */
    static const char huge[] = "# one edge\nmpitopo-pattern 1 2147483647\n0 1 1 1\n";
    temp_file(path, huge, sizeof huge - 1);
    t0 = clock();
    FAILS(mpitopo_pattern_read_max(path, 8, &p), MPITOPO_ERR_RANGE,
          ":2: NPROCS = 2147483647 is more than the 8 processes allowed");
    assert_true(strncmp(mpitopo_last_error(), "mpitopo_pattern_read_max: /tmp/", 31) == 0);
    assert_true(clock() - t0 < CLOCKS_PER_SEC / 4);
    assert_null(p);
    FAILS(mpitopo_pattern_read_max(path, 0, &p), MPITOPO_ERR_ARG, "max_nprocs = 0");
    unlink(path);
    static const char fits[] = "mpitopo-pattern 1 8\n0 7 1 1\n";
    temp_file(path, fits, sizeof fits - 1);
    OK(mpitopo_pattern_read_max(path, 8, &p));
    assert_int_equal(p->nprocs, 8);
    mpitopo_pattern_destroy(&p);
    unlink(path);
}

/* Errors name the function called, not the one it called in turn. */
static void test_errors_name_the_caller(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    unit_cap_allocations((size_t)64 << 20);
    FAILS(mpitopo_pattern_random(100000, 1.0, 1, &p), MPITOPO_ERR_NOMEM, "mpitopo_pattern_random: out of memory");
    FAILS(mpitopo_pattern_complete(100000, &p), MPITOPO_ERR_NOMEM, "mpitopo_pattern_complete: out of memory");
    FAILS(mpitopo_pattern_from_string("random:100000:1:1", &p), MPITOPO_ERR_NOMEM,
          "mpitopo_pattern_from_string: desc = \"random:100000:1:1\": out of memory");
    FAILS(mpitopo_pattern_from_string("complete:100000", &p), MPITOPO_ERR_NOMEM,
          "mpitopo_pattern_from_string: desc = \"complete:100000\": out of memory");
    unit_cap_allocations(0);
    assert_null(p);
}

/* Every malformed line, in memory: the error names the line. */
static void test_parse_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int line;
        const char *needle;
    } cases[] = {
        {"mpitopo-pattern 1 4\n0 1 1\n", 2, "expected 4 fields SRC DST BYTES MESSAGES, got 3"},
        {"mpitopo-pattern 1 4\n0 1 1 1 1\n", 2,
         "expected 4 fields SRC DST BYTES MESSAGES, got at least 5"},
        {"mpitopo-pattern 1 4\n0 1 1 1 # ok\n1 2 1 1 x\n", 3,
         "expected 4 fields SRC DST BYTES MESSAGES, got at least 5"},
        {"mpitopo-pattern 1 4\n4 1 1 1\n", 2, "SRC = 4 out of range [0, 4)"},
        {"mpitopo-pattern 1 4\n-1 1 1 1\n", 2, "SRC = -1 out of range [0, 4)"},
        {"mpitopo-pattern 1 4\n0 99999999999999999999 1 1\n", 2,
         "DST = \"99999999999999999999\" is not an integer"},
        {"mpitopo-pattern 1 4\n0 1.0 1 1\n", 2, "DST = \"1.0\" is not an integer"},
        {"mpitopo-pattern 1 4\n0 1 -1 1\n", 2, "BYTES = \"-1\" is not a finite number >= 0"},
        {"mpitopo-pattern 1 4\n0 1 1 -0.5\n", 2, "MESSAGES = \"-0.5\""},
        {"mpitopo-pattern 1 4\n0 1 nan 1\n", 2, "BYTES = \"nan\""},
        {"mpitopo-pattern 1 4\n0 1 inf 1\n", 2, "BYTES = \"inf\""},
        {"mpitopo-pattern 1 4\n0 1 1e999 1\n", 2, "BYTES = \"1e999\""},
        {"mpitopo-pattern 1 4\n0 1 0x10 1\n", 2, "BYTES = \"0x10\""},
        {"mpitopo-pattern 1 4\n0 1 1,5 1\n", 2, "BYTES = \"1,5\""},
        {"mpitopo-pattern 1 4\n\n# c\n0 1 1 1\r\n2 1 1 1\r\r\n", 5, "MESSAGES = \"1?\""},
        {"mpitopo-pattern 1 4\n0\v1 1 1\n", 2, "expected 4 fields"},
        {"# c\n\nmpitopo-pattern 1\n", 3,
         "the header \"mpitopo-pattern 1 NPROCS\" needs 3 fields, got 2"},
        {"mpitopo-pattern 1 4 5\n", 1,
         "the header \"mpitopo-pattern 1 NPROCS\" needs 3 fields, got 4"},
        {"mpitopo-pattern 2 4\n", 1, "version = \"2\" is not supported"},
        {"mpitopo-pattern 1 0\n", 1, "NPROCS = \"0\" is not an integer in [1, 2147483647]"},
        {"mpitopo-pattern 1 2147483648\n", 1, "NPROCS = \"2147483648\""},
        {"mpitopo-pattern 1 x\n", 1, "NPROCS = \"x\""},
        {"MPITOPO-PATTERN 1 4\n", 1,
         "expected the header \"mpitopo-pattern 1 NPROCS\", got \"MPITOPO-PATTERN\""},
        {"0 1 1 1\nmpitopo-pattern 1 4\n", 1,
         "expected the header \"mpitopo-pattern 1 NPROCS\", got \"0\""},
        {"mpitopo-pattern 1 4\n0 1 1 1\nmpitopo-pattern 1 4\n", 3,
         "expected 4 fields SRC DST BYTES MESSAGES, got 3"},
        {"mpitopo-pattern 1 4\n0 1 1 1\n1 2 1 1 3", 3,
         "expected 4 fields SRC DST BYTES MESSAGES, got at least 5"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char want[256];
        snprintf(want, sizeof want, "mpitopo_pattern_parse: t.txt:%d: %s", cases[k].line,
                 cases[k].needle);
        mpitopo_pattern_t *p = NULL;
        int rc = mpitopo_pattern_parse(cases[k].text, strlen(cases[k].text), "t.txt", &p);
        if (rc != MPITOPO_ERR_FORMAT || !strstr(mpitopo_last_error(), want))
            fail_msg("case %zu: %s \"%s\", expected \"%s\"", k, mpitopo_err_name(rc),
                     mpitopo_last_error(), want);
        assert_null(p);
    }
    /* NUL bytes, in an edge line and in a comment. */
    static const char nul1[] = "mpitopo-pattern 1 4\n0 1\0 1 1\n";
    static const char nul2[] = "mpitopo-pattern 1 4\n# \0\n";
    mpitopo_pattern_t *p = NULL;
    FAILS(mpitopo_pattern_parse(nul1, sizeof nul1 - 1, "t.txt", &p), MPITOPO_ERR_FORMAT,
          "t.txt:2: NUL byte");
    FAILS(mpitopo_pattern_parse(nul2, sizeof nul2 - 1, "t.txt", &p), MPITOPO_ERR_FORMAT,
          "t.txt:2: NUL byte");
    FAILS(mpitopo_pattern_parse("", 0, "t.txt", &p), MPITOPO_ERR_FORMAT, "t.txt: no header line");
    FAILS(mpitopo_pattern_parse(NULL, 0, NULL, &p), MPITOPO_ERR_FORMAT, "(memory): no header");
    /* The sum of two finite weights can overflow. */
    static const char sum[] = "mpitopo-pattern 1 2\n0 1 1e308 1\n0 1 1e308 1\n";
    FAILS(mpitopo_pattern_parse(sum, sizeof sum - 1, "t.txt", &p), MPITOPO_ERR_FORMAT,
          "t.txt: the summed weights of the repeated edge 0 -> 1 overflow");
    FAILS(mpitopo_pattern_parse("x", 1, "t.txt", NULL), MPITOPO_ERR_ARG, "");
    assert_null(p);
}

static void test_parse_edge_cases(void **state)
{
    (void)state;
    mpitopo_pattern_t *p = NULL;
    /* The text need not be NUL-terminated: only len bytes count. */
    const char text[] = "mpitopo-pattern 1 3\n0 1 1 1\n1 2 3 4\nGARBAGE";
    OK(mpitopo_pattern_parse(text, sizeof text - 1 - 7, "t", &p));
    assert_int_equal(p->nedges, 2);
    mpitopo_pattern_destroy(&p);
    /* Header only, tabs, leading zeros and signs, exponent notation,
     * a comment glued to the last field, no final newline. */
    const char t1[] = "\tmpitopo-pattern\t01\t+2\t";
    OK(mpitopo_pattern_parse(t1, sizeof t1 - 1, "t", &p));
    assert_int_equal(p->nprocs, 2);
    assert_int_equal(p->nedges, 0);
    mpitopo_pattern_destroy(&p);
    const char t2[] = "mpitopo-pattern 1 2\n+1 00 1.5E2 .5#c\n0 0 0 0";
    OK(mpitopo_pattern_parse(t2, sizeof t2 - 1, "t", &p));
    assert_int_equal(p->nedges, 2);
    assert_int_equal(p->dst[0], 0);
    assert_true(p->bytes[1] == 150 && p->msgs[1] == 0.5);
    mpitopo_pattern_destroy(&p);
    /* A number may be as long as a line allows: 1 and 200 zeros is 1e200. */
    char t3[300];
    int n = snprintf(t3, sizeof t3, "mpitopo-pattern 1 2\n0 1 1%0200d 1\n", 0);
    OK(mpitopo_pattern_parse(t3, (size_t)n, "t", &p));
    assert_true(p->bytes[0] == 1e200);
    mpitopo_pattern_destroy(&p);
}

/* write -> parse gives back the same arrays, weights bit for bit. */
static void test_round_trip(void **state)
{
    (void)state;
    int src[] = {0, 0, 1, 2, 2, 3, 3, 4};
    int dst[] = {1, 4, 1, 0, 3, 2, 4, 0};
    double bytes[] = {0.1, 1.0 / 3, 1e-300, 1.7976931348623157e308, 5e-324, -0.0, 123456789.123, 2};
    double msgs[] = {1, 7, 0.3, 2.5e-8, 1e22, 9007199254740993.0, 0, 1};
    mpitopo_pattern_t *p = NULL, *q = NULL, *r = NULL;
    OK(mpitopo_pattern_create(5, 8, src, dst, bytes, msgs, &p));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    OK(mpitopo_pattern_write_stream(p, f));
    fclose(f);
    OK(mpitopo_pattern_parse(buf, len, "mem", &q));
    assert_same(p, q);
    free(buf);

    char path[] = "/tmp/mpitopo_test_pattern_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    mpitopo_pattern_destroy(&q);
    OK(mpitopo_pattern_from_string("cart:5x6x7:moore=1:weights=0.1,0.7,3:bytes=1.1", &q));
    OK(mpitopo_pattern_write(q, path));
    OK(mpitopo_pattern_read(path, &r));
    assert_same(q, r);
    unlink(path);
    FAILS(mpitopo_pattern_write(p, "/nonexistent-dir/x.txt"), MPITOPO_ERR_IO,
          "/nonexistent-dir/x.txt");
    FAILS(mpitopo_pattern_write(NULL, path), MPITOPO_ERR_ARG, "");
    FAILS(mpitopo_pattern_write_stream(p, NULL), MPITOPO_ERR_ARG, "");
    if (access("/dev/full", W_OK) == 0)
        FAILS(mpitopo_pattern_write(q, "/dev/full"), MPITOPO_ERR_IO, "/dev/full");
    mpitopo_pattern_destroy(&p);
    mpitopo_pattern_destroy(&q);
    mpitopo_pattern_destroy(&r);
}

/* Allocation failures ----------------------------------------------------------------- */

typedef int (*build_fn)(mpitopo_pattern_t **p);

static int build_create(mpitopo_pattern_t **p)
{
    int src[] = {3, 0, 1, 0, 3}, dst[] = {1, 2, 3, 2, 3};
    double b[] = {1, 2, 3, 4, 5};
    return mpitopo_pattern_create(4, 5, src, dst, b, NULL, p);
}

static int build_long_rows(mpitopo_pattern_t **p)
{
    int src[100], dst[100];
    for (int e = 0; e < 100; e++)
        src[e] = e % 2, dst[e] = (e * 37) % 50;
    return mpitopo_pattern_create(50, 100, src, dst, NULL, NULL, p);
}

static int build_cart(mpitopo_pattern_t **p)
{
    int dims[] = {3, 2, 4}, periods[] = {1, 0, 1}, offs[] = {1, 0, 0, -1, 0, 1, 1, 0, 0};
    double ow[] = {1, 2, 3};
    mpitopo_stencil_t s = {MPITOPO_STENCIL_OFFSETS, 0, 3, offs, ow, NULL, 1};
    return mpitopo_pattern_cart(3, dims, periods, &s, p);
}

static int build_moore(mpitopo_pattern_t **p)
{
    return mpitopo_pattern_from_string("cart:4x4x2:moore=2:periods=1,0,1:weights=1,2,3", p);
}

static int build_offsets(mpitopo_pattern_t **p)
{
    return mpitopo_pattern_from_string("cart:4x5:offsets=1,0;-1,2;3,3:open", p);
}

static int build_random(mpitopo_pattern_t **p)
{
    return mpitopo_pattern_from_string("random:300:0.02:9", p);
}

static int build_ring(mpitopo_pattern_t **p)
{
    return mpitopo_pattern_from_string("ring:13:5", p);
}

static int build_complete(mpitopo_pattern_t **p)
{
    return mpitopo_pattern_complete(12, p);
}

static int build_parse(mpitopo_pattern_t **p)
{
    /* Enough edges to make the list grow a few times. */
    char text[8192];
    int n = snprintf(text, sizeof text, "mpitopo-pattern 1 40\n");
    for (int e = 0; e < 200; e++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%d %d %d.5 1\n", (e * 7) % 40,
                      (e * 13) % 40, e);
    return mpitopo_pattern_parse(text, (size_t)n, "t", p);
}

static int build_read(mpitopo_pattern_t **p)
{
    return mpitopo_pattern_read(MPITOPO_TEST_DATA "/pattern_valid.txt", p);
}

typedef struct pattern_run {
    build_fn build;
    const mpitopo_pattern_t *ref;
} pattern_run_t;

/* Build once; a success must equal the reference (only a failed shrink may
 * pass unnoticed, and it changes nothing), a failure must return no pattern
 * and name the public function. */
static int run_build(void *ctx)
{
    pattern_run_t *r = ctx;
    mpitopo_pattern_t *p = NULL;
    int rc = r->build(&p);
    if (rc == MPITOPO_SUCCESS) {
        assert_same(p, r->ref);
        mpitopo_pattern_destroy(&p);
    } else if (strncmp(mpitopo_last_error(), "mpitopo_pattern_", 16) != 0) {
        fail_msg("message \"%s\" does not name the function", mpitopo_last_error());
    }
    assert_null(p);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    static const build_fn builds[] = {build_create,  build_long_rows, build_cart, build_moore,
                                      build_offsets, build_random,    build_ring, build_complete,
                                      build_parse,   build_read};
    for (size_t b = 0; b < sizeof builds / sizeof builds[0]; b++) {
        mpitopo_pattern_t *ref = NULL;
        OK(builds[b](&ref));
        pattern_run_t r = {builds[b], ref};
        char what[32];
        snprintf(what, sizeof what, "build %zu", b);
        assert_true(unit_each_allocation_fails(what, run_build, &r) > 1);
        mpitopo_pattern_destroy(&ref);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_merges_and_sorts),
        cmocka_unit_test(test_create_default_weights),
        cmocka_unit_test(test_create_long_rows),
        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_queries),
        cmocka_unit_test(test_weight_names),
        cmocka_unit_test(test_cart_vs_naive_star_moore),
        cmocka_unit_test(test_cart_vs_naive_offsets),
        cmocka_unit_test(test_cart_degrees),
        cmocka_unit_test(test_cart_tiny_dims),
        cmocka_unit_test(test_cart_zero_dims),
        cmocka_unit_test(test_cart_errors),
        cmocka_unit_test(test_cart_million),
        cmocka_unit_test(test_random_statistics),
        cmocka_unit_test(test_random_determinism),
        cmocka_unit_test(test_random_extremes),
        cmocka_unit_test(test_rings),
        cmocka_unit_test(test_complete),
        cmocka_unit_test(test_from_string_valid),
        cmocka_unit_test(test_from_string_errors),
        cmocka_unit_test(test_read_valid),
        cmocka_unit_test(test_read_invalid_files),
        cmocka_unit_test(test_read_bounded),
        cmocka_unit_test(test_errors_name_the_caller),
        cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test(test_parse_edge_cases),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
