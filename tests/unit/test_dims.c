/* Grid dimensions: mpitopo_dims_create against a brute force over every
 * factorisation, and the node-aware choice against a brute force over
 * every nearly balanced factorisation and every node box. */
#include "unit.h"

/* ---------------------------------------------------------------------------
 * Oracles: plain enumeration, no pruning.
 */

/* A non-increasing sequence of the free entries, with its key. */
typedef struct seq {
    int k;
    int v[MPITOPO_MAX_DIMS];
} seq_t;

static int spread(const seq_t *s)
{
    return s->k > 0 ? s->v[0] - s->v[s->k - 1] : 0;
}

/* <0 when a is more balanced than b: smaller max - min, then smaller max,
 * then lexicographically smaller. */
static int balance_cmp(const seq_t *a, const seq_t *b)
{
    if (spread(a) != spread(b))
        return spread(a) < spread(b) ? -1 : 1;
    for (int i = 0; i < a->k; i++)
        if (a->v[i] != b->v[i])
            return a->v[i] < b->v[i] ? -1 : 1;
    return 0;
}

typedef void (*visit_fn)(const seq_t *s, void *ctx);

/* Every non-increasing k-sequence with product m, largest entry first. */
static void each_sequence(seq_t *s, int i, long long r, long long prev, visit_fn visit, void *ctx)
{
    if (i == s->k) {
        if (r == 1)
            visit(s, ctx);
        return;
    }
    for (long long x = prev < r ? prev : r; x >= 1; x--) {
        if (r % x != 0)
            continue;
        s->v[i] = (int)x;
        each_sequence(s, i + 1, r / x, x, visit, ctx);
    }
}

/* For large m: the same over a divisor list (m's divisors, increasing). */
static void each_sequence_div(seq_t *s, int i, long long r, long long prev, const int *div, int ndiv,
                              visit_fn visit, void *ctx)
{
    if (i == s->k) {
        if (r == 1)
            visit(s, ctx);
        return;
    }
    if (i == s->k - 1) {
        if (r <= prev) {
            s->v[i] = (int)r;
            visit(s, ctx);
        }
        return;
    }
    for (int t = ndiv - 1; t >= 0; t--) {
        long long x = div[t];
        if (x > prev || r % x != 0)
            continue;
        s->v[i] = (int)x;
        each_sequence_div(s, i + 1, r / x, x, div, ndiv, visit, ctx);
    }
}

static void keep_most_balanced(const seq_t *s, void *ctx)
{
    seq_t *best = ctx;
    if (best->k < 0 || balance_cmp(s, best) < 0)
        *best = *s;
}

static seq_t brute_balanced(long long m, int k)
{
    seq_t s = {.k = k}, best = {.k = -1};
    each_sequence(&s, 0, m, m, keep_most_balanced, &best);
    return best;
}

static int divisors_of(long long m, int *div)
{
    int n = 0;
    for (long long d = 1; d * d <= m; d++) {
        if (m % d == 0) {
            div[n++] = (int)d;
            if (d * d != m)
                div[n++] = (int)(m / d);
        }
    }
    for (int i = 1; i < n; i++) /* insertion sort: a few hundred entries */
        for (int j = i; j > 0 && div[j - 1] > div[j]; j--) {
            int t = div[j];
            div[j] = div[j - 1];
            div[j - 1] = t;
        }
    return n;
}

static seq_t brute_balanced_big(long long m, int k)
{
    static int div[2000];
    int ndiv = divisors_of(m, div);
    seq_t s = {.k = k}, best = {.k = -1};
    each_sequence_div(&s, 0, m, m, div, ndiv, keep_most_balanced, &best);
    return best;
}

/* The expected result of mpitopo_dims_create for dims_in (or -1: RANGE). */
static int expected_dims(int nprocs, int ndims, const int *dims_in, int *out)
{
    long long fixed = 1;
    int k = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims_in[i] == 0)
            k++;
        else
            fixed *= dims_in[i];
    }
    if (nprocs % fixed != 0 || (k == 0 && fixed != nprocs))
        return -1;
    seq_t best = brute_balanced(nprocs / fixed, k);
    for (int i = 0, j = 0; i < ndims; i++)
        out[i] = dims_in[i] != 0 ? dims_in[i] : best.v[j++];
    return 0;
}

/* Closed-form cut of a box along dimension i (see the header of dims.c). */
static long long side_cut(long long nprocs, int d, int periodic, int b)
{
    if (d == 1)
        return 0;
    if (periodic)
        return b < d ? (d == 2 ? 1 : 2) * (nprocs / b) : 0;
    return 2LL * (d / b - 1) * (nprocs / d);
}

static long long box_cut(long long nprocs, int ndims, const int *dims, const int *periods, const int *box)
{
    long long cut = 0;
    for (int i = 0; i < ndims; i++)
        cut += side_cut(nprocs, dims[i], !periods || periods[i], box[i]);
    return cut;
}

typedef struct box_search {
    long long nprocs;
    int ndims;
    const int *dims, *periods;
    int box[MPITOPO_MAX_DIMS];
    long long best; /* -1: none */
} box_search_t;

static void each_box(box_search_t *s, int i, long long rem)
{
    if (i == s->ndims) {
        long long c = box_cut(s->nprocs, s->ndims, s->dims, s->periods, s->box);
        if (rem == 1 && (s->best < 0 || c < s->best))
            s->best = c;
        return;
    }
    for (long long x = 1; x * x <= rem; x++) {
        if (rem % x != 0)
            continue;
        long long pair[2] = {x, rem / x};
        for (int j = 0; j < (x * x == rem ? 1 : 2); j++) {
            if (s->dims[i] % pair[j] == 0) {
                s->box[i] = (int)pair[j];
                each_box(s, i + 1, rem / pair[j]);
            }
        }
    }
}

/* Least cut over every box of ppn processes tiling dims; -1 when none. */
static long long brute_box_cut(long long nprocs, int ppn, int ndims, const int *dims, const int *periods)
{
    box_search_t s = {.nprocs = nprocs, .ndims = ndims, .dims = dims, .periods = periods, .best = -1};
    each_box(&s, 0, ppn);
    return s.best;
}

/* The node-aware oracle: every sequence within the balance limit, scored
 * by its best box, ties to the more balanced. */
typedef struct node_oracle {
    int nprocs, ppn, ndims;
    const int *dims_in, *periods;
    seq_t ref;
    seq_t best;
    long long best_cut; /* -1: none yet */
} node_oracle_t;

static void fill(int ndims, const int *dims_in, const seq_t *s, int *out)
{
    for (int i = 0, j = 0; i < ndims; i++)
        out[i] = dims_in[i] != 0 ? dims_in[i] : s->v[j++];
}

static void node_visit(const seq_t *s, void *ctx)
{
    node_oracle_t *o = ctx;
    if (s->k > 0 && (long long)s->v[0] * o->ref.v[o->ref.k - 1] > 2LL * o->ref.v[0] * s->v[s->k - 1])
        return;
    int dims[MPITOPO_MAX_DIMS];
    fill(o->ndims, o->dims_in, s, dims);
    long long cut = brute_box_cut(o->nprocs, o->ppn, o->ndims, dims, o->periods);
    if (cut < 0)
        return;
    if (o->best_cut < 0 || cut < o->best_cut || (cut == o->best_cut && balance_cmp(s, &o->best) < 0)) {
        o->best_cut = cut;
        o->best = *s;
    }
}

/* ---------------------------------------------------------------------------
 * mpitopo_dims_create
 */

static void check_plain(int nprocs, int ndims, const int *dims_in)
{
    int dims[MPITOPO_MAX_DIMS], want[MPITOPO_MAX_DIMS];
    memcpy(dims, dims_in, (size_t)ndims * sizeof *dims);
    int rc = mpitopo_dims_create(nprocs, ndims, dims);
    if (expected_dims(nprocs, ndims, dims_in, want) < 0) {
        if (rc != MPITOPO_ERR_RANGE)
            fail_msg("nprocs %d ndims %d: %s, expected MPITOPO_ERR_RANGE", nprocs, ndims, mpitopo_err_name(rc));
        assert_memory_equal(dims, dims_in, (size_t)ndims * sizeof *dims);
        return;
    }
    OK(rc);
    for (int i = 0; i < ndims; i++)
        if (dims[i] != want[i])
            fail_msg("nprocs %d ndims %d: dims[%d] = %d, brute force %d", nprocs, ndims, i, dims[i], want[i]);
}

static void test_dims_brute_force(void **state)
{
    (void)state;
    long calls = 0;
    for (int n = 1; n <= 400; n++) {
        for (int ndims = 1; ndims <= 4; ndims++) {
            int dims[4] = {0, 0, 0, 0};
            check_plain(n, ndims, dims);
            calls++;
            /* One fixed entry first, last or in the middle (divisor or not). */
            for (int f = 1; f <= 7; f++) {
                for (int at = 0; at < ndims; at++) {
                    memset(dims, 0, sizeof dims);
                    dims[at] = f;
                    check_plain(n, ndims, dims);
                    calls++;
                }
            }
            /* Two fixed entries around free ones. */
            if (ndims == 4) {
                int two[4] = {2, 0, 3, 0};
                check_plain(n, 4, two);
                calls++;
            }
        }
    }
    assert_true(calls > 10000);
}

static void check_big(int nprocs, int k)
{
    int dims[MPITOPO_MAX_DIMS] = {0};
    OK(mpitopo_dims_create(nprocs, k, dims));
    seq_t want = brute_balanced_big(nprocs, k);
    for (int i = 0; i < k; i++)
        if (dims[i] != want.v[i])
            fail_msg("nprocs %d k %d: dims[%d] = %d, brute force %d", nprocs, k, i, dims[i], want.v[i]);
}

/* A valid answer: product nprocs, non-increasing, positive. */
static void check_valid(int nprocs, int k, const int *dims)
{
    long long prod = 1;
    for (int i = 0; i < k; i++) {
        assert_true(dims[i] >= 1);
        assert_true(i == 0 || dims[i] <= dims[i - 1]);
        prod *= dims[i];
    }
    assert_true(prod == nprocs);
}

static void test_dims_big(void **state)
{
    (void)state;
    const int prime = 2147483647; /* 2^31 - 1 */
    int dims[MPITOPO_MAX_DIMS] = {0};
    OK(mpitopo_dims_create(prime, 3, dims));
    assert_int_equal(dims[0], prime);
    assert_int_equal(dims[1], 1);
    assert_int_equal(dims[2], 1);

    memset(dims, 0, sizeof dims);
    OK(mpitopo_dims_create(1 << 30, 3, dims));
    for (int i = 0; i < 3; i++)
        assert_int_equal(dims[i], 1024);
    memset(dims, 0, sizeof dims);
    OK(mpitopo_dims_create(1 << 30, 32, dims));
    for (int i = 0; i < 32; i++)
        assert_int_equal(dims[i], i < 30 ? 2 : 1);
    memset(dims, 0, sizeof dims);
    OK(mpitopo_dims_create(1 << 30, 4, dims));
    int four[4] = {256, 256, 128, 128};
    assert_memory_equal(dims, four, sizeof four);

    /* Against the brute force over divisors, for a few awkward numbers. */
    static const int big[] = {2147483646, 2147483647, 1 << 30, 735134400, 2095133040, 1073741823,
                              2147117569 /* 46337^2 */, 1999999973 /* prime */, 1862340480};
    for (size_t b = 0; b < sizeof big / sizeof big[0]; b++)
        for (int k = 1; k <= 3; k++)
            check_big(big[b], k);
    check_big(2147483646, 4);
    check_big(1 << 30, 5);

    /* The hardest cases stay valid for every ndims (and fast: see the
     * worst-case timings in the header of src/map/dims.c). */
    static const int hard[] = {2095133040, 2042040000, 1102701600, 735134400, 1 << 30, 1162261467, 2147483646};
    for (size_t h = 0; h < sizeof hard / sizeof hard[0]; h++) {
        for (int k = 1; k <= MPITOPO_MAX_DIMS; k++) {
            memset(dims, 0, sizeof dims);
            OK(mpitopo_dims_create(hard[h], k, dims));
            check_valid(hard[h], k, dims);
        }
    }
}

static void test_dims_fixed_and_empty(void **state)
{
    (void)state;
    /* Fixed entries are kept; the free ones are non-increasing in order. */
    int dims[5] = {0, 5, 0, 0, 1};
    OK(mpitopo_dims_create(5 * 60, 5, dims));
    int want[5] = {5, 5, 4, 3, 1};
    assert_memory_equal(dims, want, sizeof want);
    int all[3] = {2, 3, 4};
    OK(mpitopo_dims_create(24, 3, all));
    assert_int_equal(all[2], 4);
    /* ndims = 0: a grid of one process. */
    OK(mpitopo_dims_create(1, 0, NULL));
    FAILS(mpitopo_dims_create(2, 0, NULL), MPITOPO_ERR_RANGE, "ndims = 0");
    int one[1] = {0};
    OK(mpitopo_dims_create(1, 1, one));
    assert_int_equal(one[0], 1);
}

static void test_dims_errors(void **state)
{
    (void)state;
    int dims[4] = {0, 0, -3, 0}, copy[4];
    memcpy(copy, dims, sizeof dims);
    FAILS(mpitopo_dims_create(12, 4, dims), MPITOPO_ERR_ARG, "dims[2] = -3 must be >= 0");
    assert_memory_equal(dims, copy, sizeof dims);
    FAILS(mpitopo_dims_create(0, 2, dims), MPITOPO_ERR_ARG, "nprocs = 0");
    FAILS(mpitopo_dims_create(-5, 2, dims), MPITOPO_ERR_ARG, "nprocs = -5");
    FAILS(mpitopo_dims_create(12, -1, dims), MPITOPO_ERR_ARG, "ndims = -1");
    FAILS(mpitopo_dims_create(12, MPITOPO_MAX_DIMS + 1, dims), MPITOPO_ERR_ARG, "ndims = 33");
    FAILS(mpitopo_dims_create(12, 2, NULL), MPITOPO_ERR_ARG, "dims is NULL");
    assert_non_null(strstr(mpitopo_last_error(), "mpitopo_dims_create"));

    int bad[3] = {5, 0, 0};
    FAILS(mpitopo_dims_create(12, 3, bad), MPITOPO_ERR_RANGE, "nprocs = 12");
    assert_int_equal(bad[1], 0);
    int fixed[2] = {3, 5};
    FAILS(mpitopo_dims_create(30, 2, fixed), MPITOPO_ERR_RANGE, "nprocs = 30");
    FAILS(mpitopo_dims_create(10, 2, fixed), MPITOPO_ERR_RANGE, "nprocs = 10");
    int huge[4] = {65536, 65536, 65536, 0};
    FAILS(mpitopo_dims_create(64, 4, huge), MPITOPO_ERR_RANGE, "more than nprocs = 64");
    assert_int_equal(huge[3], 0);

    int nd[3] = {0, 0, 0};
    FAILS(mpitopo_dims_create_nodes(12, 0, 3, nd, NULL, NULL), MPITOPO_ERR_ARG, "procs_per_node = 0");
    FAILS(mpitopo_dims_create_nodes(12, 4, 3, bad, NULL, NULL), MPITOPO_ERR_RANGE, "nprocs = 12");
    assert_non_null(strstr(mpitopo_last_error(), "mpitopo_dims_create_nodes"));
    int neg[2] = {0, -1};
    FAILS(mpitopo_dims_create_nodes(12, 4, 2, neg, NULL, NULL), MPITOPO_ERR_ARG, "dims[1] = -1");
    assert_int_equal(neg[0], 0);
}

/* ---------------------------------------------------------------------------
 * mpitopo_dims_create_nodes
 */

static void test_nodes_paper(void **state)
{
    (void)state;
    /* Gropp, EuroMPI'18: 576 processes, 36 per node, 3-D. */
    int plain[3] = {0, 0, 0}, dims[3] = {0, 0, 0}, box[3];
    OK(mpitopo_dims_create(576, 3, plain));
    assert_int_equal(plain[0], 9);
    assert_int_equal(plain[1], 8);
    assert_int_equal(plain[2], 8);
    OK(mpitopo_dims_create_nodes(576, 36, 3, dims, NULL, box));
    int want[3] = {12, 8, 6};
    assert_memory_equal(dims, want, sizeof want);
    /* Periodic: 3x2x6 spans the ring of 6, cutting 960 edges (3x4x3: 1056). */
    int periodic_box[3] = {3, 2, 6};
    assert_memory_equal(box, periodic_box, sizeof box);
    assert_true(box_cut(576, 3, dims, NULL, box) == 960);
    assert_true(brute_box_cut(576, 36, 3, plain, NULL) == 1152);

    int open[3] = {0, 0, 0};
    memset(dims, 0, sizeof dims);
    OK(mpitopo_dims_create_nodes(576, 36, 3, dims, open, box));
    assert_memory_equal(dims, want, sizeof want);
    int open_box[3] = {3, 4, 3};
    assert_memory_equal(box, open_box, sizeof box);
    assert_true(box_cut(576, 3, dims, open, box) == 624);

    /* node_box may be NULL. */
    memset(dims, 0, sizeof dims);
    OK(mpitopo_dims_create_nodes(576, 36, 3, dims, NULL, NULL));
    assert_memory_equal(dims, want, sizeof want);
}

/* Equal cut and equal spread and largest entry: the lexicographically
 * smaller sequence (its large entries as small as possible). */
static void test_nodes_ties(void **state)
{
    (void)state;
    static const int open[5] = {0, 0, 0, 0, 0};
    int dims[5] = {0, 0, 0, 0, 0}, box[5];
    OK(mpitopo_dims_create_nodes(16, 8, 5, dims, open, box)); /* 4x4x1x1x1 cuts as much */
    int want[5] = {4, 2, 2, 1, 1};
    assert_memory_equal(dims, want, sizeof want);
    memset(dims, 0, sizeof dims);
    OK(mpitopo_dims_create_nodes(24, 4, 5, dims, NULL, box)); /* 6x4x1x1x1 cuts as much */
    int want24[5] = {6, 2, 2, 1, 1};
    assert_memory_equal(dims, want24, sizeof want24);
}

static void test_nodes_fallbacks(void **state)
{
    (void)state;
    /* procs_per_node does not divide nprocs: mpitopo_dims_create's answer. */
    int dims[2] = {0, 0}, box[2] = {7, 7};
    OK(mpitopo_dims_create_nodes(100, 7, 2, dims, NULL, box));
    assert_int_equal(dims[0], 10);
    assert_int_equal(dims[1], 10);
    assert_int_equal(box[0], 0);
    assert_int_equal(box[1], 0);
    int more[3] = {0, 0, 0}, box3[3] = {1, 1, 1};
    OK(mpitopo_dims_create_nodes(8, 16, 3, more, NULL, box3));
    assert_int_equal(more[0], 2);
    assert_int_equal(box3[0] + box3[1] + box3[2], 0);
    /* Every entry fixed: the grid stays, the box is still reported. */
    int fixed[2] = {6, 4}, fbox[2];
    OK(mpitopo_dims_create_nodes(24, 4, 2, fixed, NULL, fbox));
    assert_int_equal(fixed[0], 6);
    assert_int_equal(fbox[0] * fbox[1], 4);
    assert_true(box_cut(24, 2, fixed, NULL, fbox) == brute_box_cut(24, 4, 2, fixed, NULL));
    /* ndims = 0. */
    OK(mpitopo_dims_create_nodes(1, 1, 0, NULL, NULL, NULL));
    /* One process per node and one node: any grid, no cut; the most
     * balanced wins the tie. */
    int one[3] = {0, 0, 0};
    OK(mpitopo_dims_create_nodes(60, 60, 3, one, NULL, NULL));
    assert_int_equal(one[0], 5);
    assert_int_equal(one[1], 4);
    assert_int_equal(one[2], 3);
}

/* Check the result of mpitopo_dims_create_nodes against the oracle. */
static void check_nodes(int nprocs, int ppn, int ndims, const int *dims_in, const int *periods)
{
    int dims[MPITOPO_MAX_DIMS], box[MPITOPO_MAX_DIMS], plain[MPITOPO_MAX_DIMS];
    memcpy(dims, dims_in, (size_t)ndims * sizeof *dims);
    memcpy(plain, dims_in, (size_t)ndims * sizeof *dims);
    int rc = mpitopo_dims_create_nodes(nprocs, ppn, ndims, dims, periods, box);
    if (mpitopo_dims_create(nprocs, ndims, plain) != MPITOPO_SUCCESS) {
        assert_int_equal(rc, MPITOPO_ERR_RANGE);
        return;
    }
    OK(rc);
    if (nprocs % ppn != 0) {
        assert_memory_equal(dims, plain, (size_t)ndims * sizeof *dims);
        for (int i = 0; i < ndims; i++)
            assert_int_equal(box[i], 0);
        return;
    }
    node_oracle_t o = {.nprocs = nprocs, .ppn = ppn, .ndims = ndims, .dims_in = dims_in, .periods = periods,
                       .best_cut = -1};
    o.ref.k = 0;
    for (int i = 0; i < ndims; i++)
        if (dims_in[i] == 0)
            o.ref.v[o.ref.k++] = plain[i];
    seq_t s = {.k = o.ref.k};
    long long m = nprocs;
    for (int i = 0; i < ndims; i++)
        m /= dims_in[i] != 0 ? dims_in[i] : 1;
    each_sequence(&s, 0, m, m, node_visit, &o);
    assert_true(o.best_cut >= 0); /* ppn | nprocs: a box always exists */
    int want[MPITOPO_MAX_DIMS];
    fill(ndims, dims_in, &o.best, want);
    for (int i = 0; i < ndims; i++)
        if (dims[i] != want[i])
            fail_msg("nprocs %d ppn %d ndims %d: dims[%d] = %d, oracle %d", nprocs, ppn, ndims, i, dims[i],
                     want[i]);
    long long prod = 1;
    for (int i = 0; i < ndims; i++) {
        assert_true(box[i] >= 1 && dims[i] % box[i] == 0);
        prod *= box[i];
    }
    assert_true(prod == ppn);
    long long cut = box_cut(nprocs, ndims, dims, periods, box);
    assert_true(cut == o.best_cut);
    assert_true(cut <= brute_box_cut(nprocs, ppn, ndims, plain, periods));
}

static void test_nodes_brute_force(void **state)
{
    (void)state;
    static const int open[5] = {0, 0, 0, 0, 0}, mixed[5] = {1, 0, 1, 0, 1}, mixed2[5] = {0, 1, 0, 1, 0};
    const int *periods[] = {NULL, open, mixed, mixed2};
    long calls = 0;
    for (int n = 1; n <= 144; n++) {
        for (int ppn = 1; ppn <= n + 1; ppn++) {
            if (n % ppn != 0 && ppn != 5 && ppn != n + 1)
                continue;
            for (int ndims = 1; ndims <= (n <= 48 ? 5 : n <= 72 ? 4 : 3); ndims++) {
                for (int p = 0; p < 4; p++) {
                    int dims[5] = {0, 0, 0, 0, 0};
                    check_nodes(n, ppn, ndims, dims, periods[p]);
                    dims[ndims - 1] = 2;
                    check_nodes(n, ppn, ndims, dims, periods[p]);
                    calls += 2;
                }
            }
        }
    }
    assert_true(calls > 10000);
    /* Fixed entries in the middle, larger grids. */
    int mid[4] = {0, 4, 0, 0};
    check_nodes(576, 36, 4, mid, NULL);
    check_nodes(576, 36, 4, mid, open);
    int mid3[3] = {0, 3, 0};
    check_nodes(576, 36, 3, mid3, NULL);
    check_nodes(720, 48, 3, (int[3]){0, 0, 0}, mixed);
    check_nodes(1024, 64, 3, (int[3]){0, 0, 0}, NULL);
    check_nodes(1024, 64, 3, (int[3]){0, 0, 0}, open);
    check_nodes(960, 24, 4, (int[4]){0, 0, 0, 0}, mixed2);
}

/* The closed-form cut is the edge count of the real stencil pattern. */
static void test_nodes_cut_matches_pattern(void **state)
{
    (void)state;
    static const int open[3] = {0, 0, 0}, mixed[3] = {1, 0, 1};
    const int *periods[] = {NULL, open, mixed};
    static const int cases[][2] = {{576, 36}, {64, 8}, {48, 12}, {96, 16}, {36, 4}, {30, 6}, {8, 2}, {20, 4}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int p = 0; p < 3; p++) {
            int dims[3] = {0, 0, 0}, box[3];
            OK(mpitopo_dims_create_nodes(cases[c][0], cases[c][1], 3, dims, periods[p], box));
            mpitopo_pattern_t *pat = NULL;
            OK(mpitopo_pattern_cart(3, dims, periods[p], NULL, &pat));
            mpitopo_box_bound_t bound;
            OK(mpitopo_cart_box_bound(pat, cases[c][1], MPITOPO_WEIGHT_UNIT, &bound));
            mpitopo_pattern_destroy(&pat);
            assert_true(bound.found);
            long long cut = box_cut(cases[c][0], 3, dims, periods[p], box);
            if (cut != bound.offnode_edges)
                fail_msg("%d procs, %d per node, %dx%dx%d: closed form %lld, pattern %lld", cases[c][0],
                         cases[c][1], dims[0], dims[1], dims[2], cut, (long long)bound.offnode_edges);
        }
    }
}

static void test_nodes_big(void **state)
{
    (void)state;
    int dims[MPITOPO_MAX_DIMS], box[MPITOPO_MAX_DIMS];
    /* A prime: one grid, one box. */
    memset(dims, 0, sizeof dims);
    OK(mpitopo_dims_create_nodes(2147483647, 1, 3, dims, NULL, box));
    assert_int_equal(dims[0], 2147483647);
    assert_int_equal(box[0] * box[1] * box[2], 1);
    /* One node: the box is the grid and nothing is cut; most balanced. */
    memset(dims, 0, sizeof dims);
    OK(mpitopo_dims_create_nodes(1 << 30, 1 << 30, 3, dims, NULL, box));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dims[i], 1024);
        assert_int_equal(box[i], 1024);
    }
    /* Large grids: valid, and no worse than the plain answer's best box. */
    static const int big[][2] = {{1 << 30, 64}, {2147483646, 42}, {2095133040, 48}, {2095133040, 5040},
                                 {1102701600, 36}, {735134400, 64}};
    for (size_t b = 0; b < sizeof big / sizeof big[0]; b++) {
        for (int k = 1; k <= 6; k++) {
            int plain[MPITOPO_MAX_DIMS] = {0};
            memset(dims, 0, sizeof dims);
            OK(mpitopo_dims_create(big[b][0], k, plain));
            OK(mpitopo_dims_create_nodes(big[b][0], big[b][1], k, dims, NULL, box));
            check_valid(big[b][0], k, dims);
            long long cut = box_cut(big[b][0], k, dims, NULL, box);
            assert_true(cut == brute_box_cut(big[b][0], big[b][1], k, dims, NULL));
            assert_true(cut <= brute_box_cut(big[b][0], big[b][1], k, plain, NULL));
        }
    }
    /* Every ndims up to the maximum on the hardest numbers. */
    for (int k = 1; k <= MPITOPO_MAX_DIMS; k++) {
        memset(dims, 0, sizeof dims);
        OK(mpitopo_dims_create_nodes(2095133040, 5040, k, dims, NULL, box));
        check_valid(2095133040, k, dims);
        memset(dims, 0, sizeof dims);
        OK(mpitopo_dims_create_nodes(1916006400, 64, k, dims, (const int[MPITOPO_MAX_DIMS]){0}, box));
        check_valid(1916006400, k, dims);
    }
}

static int run_nodes(void *ctx)
{
    (void)ctx;
    int dims[3] = {0, 0, 0}, box[3];
    return mpitopo_dims_create_nodes(576, 36, 3, dims, NULL, box);
}

static int run_plain(void *ctx)
{
    (void)ctx;
    int dims[3] = {0, 0, 0};
    return mpitopo_dims_create(576, 3, dims);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    assert_int_equal(unit_each_allocation_fails("mpitopo_dims_create_nodes", run_nodes, NULL), 1);
    assert_int_equal(unit_each_allocation_fails("mpitopo_dims_create", run_plain, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dims_brute_force),    cmocka_unit_test(test_dims_big),
        cmocka_unit_test(test_dims_fixed_and_empty), cmocka_unit_test(test_dims_errors),
        cmocka_unit_test(test_nodes_paper),         cmocka_unit_test(test_nodes_ties),
        cmocka_unit_test(test_nodes_fallbacks),
        cmocka_unit_test(test_nodes_brute_force),   cmocka_unit_test(test_nodes_cut_matches_pattern),
        cmocka_unit_test(test_nodes_big),           cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
