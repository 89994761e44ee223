/* Pattern generators: Cartesian stencils, Erdos-Renyi, rings, complete. */
#include "pattern/pattern_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Errors of the Cartesian helpers are mpitopo_pattern_cart's. */
#define CART_FAIL(code, ...) MPITOPO_FAIL_AS((code), "mpitopo_pattern_cart", __VA_ARGS__)
#define CART_NOMEM(what) CART_FAIL(MPITOPO_ERR_NOMEM, "out of memory allocating %s", (what))

/* A list of stencil offsets (n x ndims ints) with the bytes and the number
 * of messages each one stands for. */
struct offsets {
    int n;
    int *o;
    double *bytes;
    double *msgs;
};

static void offsets_free(struct offsets *l)
{
    mpitopo__free(l->o);
    mpitopo__free(l->bytes);
    mpitopo__free(l->msgs);
    memset(l, 0, sizeof *l);
}

/* Room for n offsets; at most MPITOPO_MAX_STENCIL_OFFSETS, the limit every
 * stencil of the library shares (a Moore radius of 2,000 in 2-D is 16
 * million offsets: seconds and gigabytes before the first edge). */
static int offsets_alloc(struct offsets *l, int64_t n, int ndims)
{
    if (n > MPITOPO_MAX_STENCIL_OFFSETS)
        return CART_FAIL(MPITOPO_ERR_RANGE, "the stencil has more than %d offsets", MPITOPO_MAX_STENCIL_OFFSETS);
    l->n = (int)n;
    l->o = mpitopo__calloc((size_t)n * (size_t)ndims, sizeof *l->o);
    l->bytes = mpitopo__malloc_array((size_t)n, sizeof *l->bytes);
    l->msgs = mpitopo__malloc_array((size_t)n, sizeof *l->msgs);
    if (!l->o || !l->bytes || !l->msgs)
        return CART_NOMEM("stencil offsets");
    return MPITOPO_SUCCESS;
}

/* Argument checks ---------------------------------------------------------- */

static void format_dims(char *buf, size_t size, int ndims, const int *dims)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < ndims && used < size; i++) {
        int n = snprintf(buf + used, size - used, i ? "x%d" : "%d", dims[i]);
        used += n > 0 ? (size_t)n : 0;
    }
}

/* Fill the grid part of cart and count its processes. */
static int check_grid(int ndims, const int *dims, const int *periods, mpitopo__cart_t *cart,
                      int *nprocs)
{
    if (ndims < 0 || ndims > MPITOPO_MAX_DIMS)
        return CART_FAIL(MPITOPO_ERR_ARG, "ndims = %d must be in [0, %d]", ndims, MPITOPO_MAX_DIMS);
    if (ndims > 0 && !dims)
        return CART_FAIL(MPITOPO_ERR_ARG, "dims must not be NULL when ndims = %d", ndims);
    int64_t n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 1)
            return CART_FAIL(MPITOPO_ERR_ARG, "dims[%d] = %d must be >= 1", i, dims[i]);
        n *= dims[i];
        if (n > INT_MAX) {
            char buf[MPITOPO_MAX_DIMS * 12];
            format_dims(buf, sizeof buf, ndims, dims);
            return CART_FAIL(MPITOPO_ERR_RANGE, "dims = %s: more than %d processes", buf, INT_MAX);
        }
        cart->dims[i] = dims[i];
        cart->periods[i] = periods ? periods[i] != 0 : 1;
    }
    cart->ndims = ndims;
    *nprocs = (int)n;
    return MPITOPO_SUCCESS;
}

static int bad_factor(double w)
{
    return !(isfinite(w) && w >= 0);
}

static int check_stencil(int ndims, const mpitopo_stencil_t *s)
{
    if (s->kind != MPITOPO_STENCIL_STAR && s->kind != MPITOPO_STENCIL_MOORE &&
        s->kind != MPITOPO_STENCIL_OFFSETS)
        return CART_FAIL(MPITOPO_ERR_ARG, "stencil->kind = %d is not a stencil kind", (int)s->kind);
    if (s->kind != MPITOPO_STENCIL_OFFSETS && s->radius < 0)
        return CART_FAIL(MPITOPO_ERR_ARG, "stencil->radius = %d must be >= 0", s->radius);
    if (s->kind == MPITOPO_STENCIL_OFFSETS && s->noffsets < 0)
        return CART_FAIL(MPITOPO_ERR_ARG, "stencil->noffsets = %d must be >= 0", s->noffsets);
    if (s->kind == MPITOPO_STENCIL_OFFSETS && s->noffsets > 0 && !s->offsets)
        return CART_FAIL(MPITOPO_ERR_ARG, "stencil->offsets must not be NULL when noffsets = %d",
                         s->noffsets);
    if (bad_factor(s->bytes))
        return CART_FAIL(MPITOPO_ERR_ARG, "stencil->bytes = %g must be finite and >= 0", s->bytes);
    for (int i = 0; s->dim_weights && i < ndims; i++)
        if (bad_factor(s->dim_weights[i]))
            return CART_FAIL(MPITOPO_ERR_ARG,
                             "stencil->dim_weights[%d] = %g must be finite and >= 0", i,
                             s->dim_weights[i]);
    int weighted = s->kind == MPITOPO_STENCIL_OFFSETS && s->offset_weights;
    for (int k = 0; weighted && k < s->noffsets; k++)
        if (bad_factor(s->offset_weights[k]))
            return CART_FAIL(MPITOPO_ERR_ARG,
                             "stencil->offset_weights[%d] = %g must be finite and >= 0", k,
                             s->offset_weights[k]);
    return MPITOPO_SUCCESS;
}

/* Stencil expansion ---------------------------------------------------------- */

/* +-k along each axis, k = 1..radius. */
static int expand_star(int ndims, int radius, struct offsets *l)
{
    int rc = offsets_alloc(l, 2 * (int64_t)radius * ndims, ndims);
    if (rc)
        return rc;
    int k = 0;
    for (int i = 0; i < ndims; i++)
        for (int r = 1; r <= radius; r++) {
            l->o[(size_t)k++ * (size_t)ndims + (size_t)i] = -r;
            l->o[(size_t)k++ * (size_t)ndims + (size_t)i] = r;
        }
    return MPITOPO_SUCCESS;
}

/* Every offset of [-radius, radius]^ndims but 0, in odometer order. */
static int expand_moore(int ndims, int radius, struct offsets *l)
{
    /* Saturate just above the limit, testing before multiplying so the
     * count cannot overflow (a side of 2^32 - 1 did); offsets_alloc refuses
     * it then. */
    const int64_t cap = (int64_t)MPITOPO_MAX_STENCIL_OFFSETS + 2;
    int64_t count = 1, side = 2 * (int64_t)radius + 1;
    for (int i = 0; i < ndims; i++)
        count = count > cap / side ? cap : count * side;
    int rc = offsets_alloc(l, count - 1, ndims);
    if (rc)
        return rc;
    int cur[MPITOPO_MAX_DIMS];
    for (int i = 0; i < ndims; i++)
        cur[i] = -radius;
    for (int k = 0; k < l->n;) {
        int zero = 1;
        for (int i = 0; i < ndims; i++)
            zero &= cur[i] == 0;
        if (!zero)
            memcpy(l->o + (size_t)k++ * (size_t)ndims, cur, (size_t)ndims * sizeof *cur);
        for (int i = ndims - 1; i >= 0 && ++cur[i] > radius; i--)
            cur[i] = -radius;
    }
    return MPITOPO_SUCCESS;
}

static int expand_explicit(int ndims, const mpitopo_stencil_t *s, struct offsets *l)
{
    int rc = offsets_alloc(l, s->noffsets, ndims);
    if (rc)
        return rc;
    size_t size = (size_t)s->noffsets * (size_t)ndims * sizeof *l->o;
    if (size)
        memcpy(l->o, s->offsets, size);
    for (int k = 0; k < l->n; k++) {
        int zero = 1;
        for (int i = 0; i < ndims; i++)
            zero &= l->o[(size_t)k * (size_t)ndims + (size_t)i] == 0;
        if (zero)
            return CART_FAIL(MPITOPO_ERR_ARG, "stencil->offsets[%d] is all zero", k);
    }
    return MPITOPO_SUCCESS;
}

/* Bytes of each offset: bytes * offset weight * dimension weights of its
 * non-zero components. */
static int weigh_offsets(int ndims, const mpitopo_stencil_t *s, struct offsets *l)
{
    for (int k = 0; k < l->n; k++) {
        double b = s->bytes;
        if (s->kind == MPITOPO_STENCIL_OFFSETS && s->offset_weights)
            b *= s->offset_weights[k];
        for (int i = 0; s->dim_weights && i < ndims; i++)
            if (l->o[(size_t)k * (size_t)ndims + (size_t)i] != 0)
                b *= s->dim_weights[i];
        if (!isfinite(b))
            return CART_FAIL(MPITOPO_ERR_RANGE, "the bytes of stencil offset %d overflow", k);
        l->bytes[k] = b;
        l->msgs[k] = 1.0;
    }
    return MPITOPO_SUCCESS;
}

static int expand_stencil(int ndims, const mpitopo_stencil_t *s, struct offsets *l)
{
    int rc;
    if (s->kind == MPITOPO_STENCIL_STAR)
        rc = expand_star(ndims, s->radius, l);
    else if (s->kind == MPITOPO_STENCIL_MOORE)
        rc = expand_moore(ndims, s->radius, l);
    else
        rc = expand_explicit(ndims, s, l);
    return rc ? rc : weigh_offsets(ndims, s, l);
}

/* Effective offsets ---------------------------------------------------------
 * Two offsets that agree modulo the periodic dimensions reach the same peer
 * from every process, so they are merged once here rather than nprocs times
 * in the CSR; offsets that reach no other process are dropped. The edge list
 * then has no duplicates and no self edges, and its size is known. The
 * pattern still remembers the stencil as given (see pattern_internal.h). */

/* Reduce offset o in place; returns 0 if it never reaches another process. */
static int normalize_offset(const mpitopo__cart_t *c, int *o)
{
    int moves = 0;
    for (int i = 0; i < c->ndims; i++) {
        long long d = c->dims[i], x = o[i];
        if (c->periods[i]) {
            x = ((x % d) + d) % d;
            x = x > d / 2 ? x - d : x;
        } else if (x <= -d || x >= d) {
            return 0;
        }
        o[i] = (int)x;
        moves |= x != 0;
    }
    return moves;
}

struct offset_key {
    const int *o;
    int ndims;
    int index;
};

static int compare_offsets(const void *a, const void *b)
{
    const struct offset_key *x = a, *y = b;
    for (int i = 0; i < x->ndims; i++)
        if (x->o[i] != y->o[i])
            return x->o[i] < y->o[i] ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Merge runs of equal keys into eff, summing in stencil order. */
static int merge_offsets(int ndims, const struct offset_key *keys, int nkeys,
                         const struct offsets *raw, struct offsets *eff)
{
    int rc = offsets_alloc(eff, nkeys, ndims);
    if (rc)
        return rc;
    int m = 0;
    size_t row = (size_t)ndims * sizeof(int);
    for (int k = 0; k < nkeys; k++) {
        int j = keys[k].index;
        if (m > 0 && memcmp(eff->o + (size_t)(m - 1) * (size_t)ndims, keys[k].o, row) == 0) {
            eff->bytes[m - 1] += raw->bytes[j];
            eff->msgs[m - 1] += raw->msgs[j];
            if (!isfinite(eff->bytes[m - 1]))
                return CART_FAIL(MPITOPO_ERR_RANGE, "the bytes of merged stencil offsets overflow");
            continue;
        }
        if (row)
            memcpy(eff->o + (size_t)m * (size_t)ndims, keys[k].o, row);
        eff->bytes[m] = raw->bytes[j];
        eff->msgs[m] = raw->msgs[j];
        m++;
    }
    eff->n = m;
    return MPITOPO_SUCCESS;
}

static int effective_offsets(const mpitopo__cart_t *c, const struct offsets *raw,
                             struct offsets *eff)
{
    int ndims = c->ndims, nkeys = 0, rc;
    size_t size = (size_t)raw->n * (size_t)ndims;
    struct offset_key *keys = mpitopo__malloc_array((size_t)raw->n, sizeof *keys);
    int *norm = mpitopo__malloc_array(size, sizeof *norm);
    if (!keys || !norm) {
        rc = CART_NOMEM("stencil keys");
        goto cleanup;
    }
    if (size)
        memcpy(norm, raw->o, size * sizeof *norm);
    for (int k = 0; k < raw->n; k++) {
        int *o = norm + (size_t)k * (size_t)ndims;
        if (normalize_offset(c, o))
            keys[nkeys++] = (struct offset_key){o, ndims, k};
    }
    qsort(keys, (size_t)nkeys, sizeof *keys, compare_offsets);
    rc = merge_offsets(ndims, keys, nkeys, raw, eff);
cleanup:
    mpitopo__free(keys);
    mpitopo__free(norm);
    return rc;
}

/* Cartesian edges ------------------------------------------------------------ */

/* Rank of coords + o, or -1 beyond an open border. Components of o are
 * normalized, so one wrap is enough. */
static int neighbour(const mpitopo__cart_t *c, const int *coords, const int *o)
{
    int rank = 0;
    for (int i = 0; i < c->ndims; i++) {
        int d = c->dims[i];
        long long x = (long long)coords[i] + o[i];
        if (x < 0 || x >= d) {
            if (!c->periods[i])
                return -1;
            x += x < 0 ? d : -d;
        }
        rank = rank * d + (int)x;
    }
    return rank;
}

static int cart_edges(const mpitopo__cart_t *c, int nprocs, const struct offsets *eff,
                      mpitopo__coo_t *coo)
{
    int rc = mpitopo__coo_reserve(coo, (int64_t)nprocs * eff->n);
    int coords[MPITOPO_MAX_DIMS] = {0};
    for (int p = 0; !rc && p < nprocs; p++) {
        for (int k = 0; !rc && k < eff->n; k++) {
            int q = neighbour(c, coords, eff->o + (size_t)k * (size_t)c->ndims);
            if (q >= 0)
                rc = mpitopo__coo_push(coo, p, q, eff->bytes[k], eff->msgs[k]);
        }
        for (int i = c->ndims - 1; i >= 0 && ++coords[i] == c->dims[i]; i--)
            coords[i] = 0;
    }
    return rc;
}

int mpitopo_pattern_cart(int ndims, const int *dims, const int *periods,
                         const mpitopo_stencil_t *stencil, mpitopo_pattern_t **pattern)
{
    static const mpitopo_stencil_t default_stencil = MPITOPO_STENCIL_DEFAULT;
    if (!pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern must not be NULL");
    *pattern = NULL;
    const mpitopo_stencil_t *s = stencil ? stencil : &default_stencil;
    struct offsets raw = {0}, eff = {0};
    mpitopo__coo_t coo;
    mpitopo__coo_init(&coo, MPITOPO__COO_BYTES | MPITOPO__COO_MSGS, __func__);
    int nprocs = 0, rc;
    mpitopo__cart_t *cart = mpitopo__calloc(1, sizeof *cart);
    if (!cart) {
        rc = MPITOPO_NOMEM("the grid");
        goto cleanup;
    }
    if ((rc = check_grid(ndims, dims, periods, cart, &nprocs)) || (rc = check_stencil(ndims, s)) ||
        (rc = expand_stencil(ndims, s, &raw)) || (rc = effective_offsets(cart, &raw, &eff)) ||
        (rc = cart_edges(cart, nprocs, &eff, &coo)) ||
        (rc = mpitopo__pattern_from_coo(nprocs, &coo, pattern)))
        goto cleanup;
    cart->noffsets = eff.n;
    cart->offsets = eff.o;
    cart->offset_bytes = eff.bytes;
    cart->offset_msgs = eff.msgs;
    eff.o = NULL;
    eff.bytes = NULL;
    eff.msgs = NULL;
    (*pattern)->cart = cart;
    cart = NULL;
cleanup:
    offsets_free(&raw);
    offsets_free(&eff);
    mpitopo__coo_free(&coo);
    mpitopo__free(cart);
    return rc;
}

/* Every ordered pair i != j; errors are those of `func`, the public function
 * called (mpitopo_pattern_random with density 1 builds it too). */
static int complete_graph(int nprocs, const char *func, mpitopo_pattern_t **pattern)
{
    mpitopo__coo_t coo;
    mpitopo__coo_init(&coo, 0, func);
    int rc = mpitopo__coo_reserve(&coo, (int64_t)nprocs * (nprocs - 1));
    for (int i = 0; !rc && i < nprocs; i++)
        for (int j = 0; !rc && j < nprocs; j++)
            if (i != j)
                rc = mpitopo__coo_push(&coo, i, j, 1.0, 1.0);
    if (!rc)
        rc = mpitopo__pattern_from_coo(nprocs, &coo, pattern);
    mpitopo__coo_free(&coo);
    return rc;
}

/* Erdos-Renyi ------------------------------------------------------------------ */

/* Ordered pair number k of the n * (n - 1) pairs i != j, in row-major order. */
static void pair_of(uint64_t k, int n, int *i, int *j)
{
    uint64_t r = k % (uint64_t)(n - 1);
    *i = (int)(k / (uint64_t)(n - 1));
    *j = (int)r < *i ? (int)r : (int)r + 1;
}

/* Geometric skipping: the gap before the next chosen pair is geometric with
 * parameter density, so each pair costs nothing and each edge O(1). The
 * pairs come out in order, so the CSR builder has nothing to sort.
 * The stream is the same everywhere for a seed; the gaps go through the C
 * library's log and log1p, so a platform whose libm rounds differently in
 * the last bit could, very rarely, shift one gap. */
static int sample_pairs(int n, double density, uint64_t seed, mpitopo__coo_t *coo)
{
    uint64_t total = (uint64_t)n * (uint64_t)(n - 1), k = 0;
    double expected = density * (double)total;
    double want = fmin(expected + 6 * sqrt(expected) + 16, (double)total);
    int rc = mpitopo__coo_reserve(coo, (int64_t)want);
    mpitopo__rng_t rng;
    mpitopo__rng_seed(&rng, seed);
    double log_q = log1p(-density);
    while (!rc) {
        double u = 1.0 - mpitopo__rng_double(&rng); /* in (0, 1] */
        double skip = floor(log(u) / log_q);
        if (!(skip < (double)(total - k)) || k + (uint64_t)skip >= total)
            break;
        k += (uint64_t)skip;
        int i, j;
        pair_of(k++, n, &i, &j);
        rc = mpitopo__coo_push(coo, i, j, 1.0, 1.0);
    }
    return rc;
}

int mpitopo_pattern_random(int nprocs, double density, uint64_t seed, mpitopo_pattern_t **pattern)
{
    if (!pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern must not be NULL");
    *pattern = NULL;
    if (nprocs < 1)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "nprocs = %d must be >= 1", nprocs);
    if (!(density >= 0 && density <= 1))
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "density = %g must be in [0, 1]", density);
    if (density == 1)
        return complete_graph(nprocs, __func__, pattern);
    mpitopo__coo_t coo;
    mpitopo__coo_init(&coo, 0, __func__);
    int rc = MPITOPO_SUCCESS;
    if (density > 0 && nprocs > 1)
        rc = sample_pairs(nprocs, density, seed, &coo);
    if (!rc)
        rc = mpitopo__pattern_from_coo(nprocs, &coo, pattern);
    mpitopo__coo_free(&coo);
    return rc;
}

/* Rings and complete graphs ------------------------------------------------------ */

int mpitopo_pattern_rings(int nprocs, int ring_size, mpitopo_pattern_t **pattern)
{
    if (!pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern must not be NULL");
    *pattern = NULL;
    if (nprocs < 1 || ring_size < 1)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "nprocs = %d and ring_size = %d must be >= 1", nprocs,
                            ring_size);
    mpitopo__coo_t coo;
    mpitopo__coo_init(&coo, 0, __func__);
    int rc = mpitopo__coo_reserve(&coo, nprocs);
    for (int first = 0; !rc && first < nprocs; first += ring_size) {
        int len = nprocs - first < ring_size ? nprocs - first : ring_size;
        for (int k = 0; !rc && len > 1 && k < len; k++)
            rc = mpitopo__coo_push(&coo, first + k, first + (k + 1) % len, 1.0, 1.0);
        if (nprocs - first <= ring_size)
            break; /* first += ring_size could overflow */
    }
    if (!rc)
        rc = mpitopo__pattern_from_coo(nprocs, &coo, pattern);
    mpitopo__coo_free(&coo);
    return rc;
}

int mpitopo_pattern_complete(int nprocs, mpitopo_pattern_t **pattern)
{
    if (!pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern must not be NULL");
    *pattern = NULL;
    if (nprocs < 1)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "nprocs = %d must be >= 1", nprocs);
    return complete_graph(nprocs, __func__, pattern);
}
