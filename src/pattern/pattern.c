/* Patterns: the CSR builder every constructor ends in, destroy and queries. */
#include "pattern/pattern_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows up to this length are sorted by insertion, longer ones by qsort. */
#define SMALL_ROW 32

/* Errors of the builder name the public function that called it. */
#define NOMEM_IN(func, what)                                                                       \
    MPITOPO_FAIL_AS(MPITOPO_ERR_NOMEM, (func), "out of memory allocating %s", (what))

/* Coordinate lists ------------------------------------------------------- */

void mpitopo__coo_init(mpitopo__coo_t *coo, int flags, const char *func)
{
    memset(coo, 0, sizeof *coo);
    coo->flags = flags;
    coo->func = func;
}

void mpitopo__coo_free(mpitopo__coo_t *coo)
{
    mpitopo__free(coo->src);
    mpitopo__free(coo->dst);
    mpitopo__free(coo->bytes);
    mpitopo__free(coo->msgs);
    mpitopo__coo_init(coo, coo->flags, coo->func);
}

/* Grow one array to cap elements; on failure the old block stays valid. */
static int grow(void **array, int64_t cap, size_t size)
{
    void *p = mpitopo__realloc_array(*array, (size_t)cap, size);
    if (!p)
        return -1;
    *array = p;
    return 0;
}

int mpitopo__coo_reserve(mpitopo__coo_t *coo, int64_t cap)
{
    if (cap <= coo->cap)
        return MPITOPO_SUCCESS;
    if ((uint64_t)cap > SIZE_MAX / sizeof(double) || grow((void **)&coo->src, cap, sizeof(int)) ||
        grow((void **)&coo->dst, cap, sizeof(int)) ||
        ((coo->flags & MPITOPO__COO_BYTES) && grow((void **)&coo->bytes, cap, sizeof(double))) ||
        ((coo->flags & MPITOPO__COO_MSGS) && grow((void **)&coo->msgs, cap, sizeof(double))))
        return NOMEM_IN(coo->func, "the edge list");
    coo->cap = cap;
    return MPITOPO_SUCCESS;
}

int mpitopo__coo_push(mpitopo__coo_t *coo, int src, int dst, double bytes, double msgs)
{
    if (coo->n == coo->cap) {
        int rc = mpitopo__coo_reserve(coo, coo->cap < 16 ? 16 : 2 * coo->cap);
        if (rc)
            return rc;
    }
    int64_t e = coo->n++;
    coo->src[e] = src;
    coo->dst[e] = dst;
    if (coo->bytes)
        coo->bytes[e] = bytes;
    if (coo->msgs)
        coo->msgs[e] = msgs;
    return MPITOPO_SUCCESS;
}

/* CSR builder ------------------------------------------------------------ */

/* Give an unkept weight its default of 1 per edge. */
static int fill_ones(double **w, int64_t n, const char *func)
{
    if (*w)
        return MPITOPO_SUCCESS;
    *w = mpitopo__malloc_array((size_t)n, sizeof **w);
    if (!*w)
        return NOMEM_IN(func, "edge weights");
    for (int64_t e = 0; e < n; e++)
        (*w)[e] = 1.0;
    return MPITOPO_SUCCESS;
}

/* Counting sort by source, stable so duplicates keep their input order.
 * When the sources already come in order (all generators), the arrays are
 * taken over as they are. */
static int bucket_by_source(mpitopo_pattern_t *p, mpitopo__coo_t *coo)
{
    int64_t *offs = p->offs, n = coo->n;
    int sorted = 1;
    for (int64_t e = 0; e < n; e++) {
        offs[coo->src[e] + 1]++;
        sorted &= e == 0 || coo->src[e - 1] <= coo->src[e];
    }
    for (int i = 0; i < p->nprocs; i++)
        offs[i + 1] += offs[i];
    if (sorted) {
        p->dst = coo->dst;
        p->bytes = coo->bytes;
        p->msgs = coo->msgs;
        coo->dst = NULL;
        coo->bytes = coo->msgs = NULL;
        return MPITOPO_SUCCESS;
    }
    p->dst = mpitopo__malloc_array((size_t)n, sizeof *p->dst);
    p->bytes = mpitopo__malloc_array((size_t)n, sizeof *p->bytes);
    p->msgs = mpitopo__malloc_array((size_t)n, sizeof *p->msgs);
    if (!p->dst || !p->bytes || !p->msgs)
        return NOMEM_IN(coo->func, "the CSR arrays");
    /* offs[s] serves as the cursor of row s; afterwards it holds the start
     * of row s + 1, so shift it back by one row. */
    for (int64_t e = 0; e < n; e++) {
        int64_t k = offs[coo->src[e]]++;
        p->dst[k] = coo->dst[e];
        p->bytes[k] = coo->bytes[e];
        p->msgs[k] = coo->msgs[e];
    }
    memmove(offs + 1, offs, (size_t)p->nprocs * sizeof *offs);
    offs[0] = 0;
    return MPITOPO_SUCCESS;
}

static int row_sorted(const int *dst, int64_t begin, int64_t end)
{
    for (int64_t k = begin + 1; k < end; k++)
        if (dst[k - 1] > dst[k])
            return 0;
    return 1;
}

static void insertion_sort_row(mpitopo_pattern_t *p, int64_t begin, int64_t end)
{
    for (int64_t k = begin + 1; k < end; k++) {
        int d = p->dst[k];
        double b = p->bytes[k], m = p->msgs[k];
        int64_t j = k;
        for (; j > begin && p->dst[j - 1] > d; j--) {
            p->dst[j] = p->dst[j - 1];
            p->bytes[j] = p->bytes[j - 1];
            p->msgs[j] = p->msgs[j - 1];
        }
        p->dst[j] = d;
        p->bytes[j] = b;
        p->msgs[j] = m;
    }
}

/* Long rows are sorted through keys whose position breaks ties, so the
 * sort is stable whatever qsort does. */
struct row_key {
    int dst;
    int64_t pos;
};

struct row_scratch {
    struct row_key *keys;
    double *bytes, *msgs;
};

static int compare_keys(const void *a, const void *b)
{
    const struct row_key *x = a, *y = b;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void qsort_row(mpitopo_pattern_t *p, int64_t begin, int64_t end, struct row_scratch *s)
{
    int64_t len = end - begin;
    for (int64_t k = 0; k < len; k++)
        s->keys[k] = (struct row_key){p->dst[begin + k], begin + k};
    qsort(s->keys, (size_t)len, sizeof *s->keys, compare_keys);
    for (int64_t k = 0; k < len; k++) {
        s->bytes[k] = p->bytes[s->keys[k].pos];
        s->msgs[k] = p->msgs[s->keys[k].pos];
    }
    for (int64_t k = 0; k < len; k++)
        p->dst[begin + k] = s->keys[k].dst;
    memcpy(p->bytes + begin, s->bytes, (size_t)len * sizeof *s->bytes);
    memcpy(p->msgs + begin, s->msgs, (size_t)len * sizeof *s->msgs);
}

static int sort_rows(mpitopo_pattern_t *p, const char *func)
{
    int64_t longest = 0;
    for (int i = 0; i < p->nprocs; i++) {
        int64_t len = p->offs[i + 1] - p->offs[i];
        if (len > SMALL_ROW && len > longest && !row_sorted(p->dst, p->offs[i], p->offs[i + 1]))
            longest = len;
    }
    struct row_scratch s = {0};
    int rc = MPITOPO_SUCCESS;
    if (longest) {
        s.keys = mpitopo__malloc_array((size_t)longest, sizeof *s.keys);
        s.bytes = mpitopo__malloc_array((size_t)longest, sizeof *s.bytes);
        s.msgs = mpitopo__malloc_array((size_t)longest, sizeof *s.msgs);
        if (!s.keys || !s.bytes || !s.msgs) {
            rc = NOMEM_IN(func, "sort buffers");
            goto cleanup;
        }
    }
    for (int i = 0; i < p->nprocs; i++) {
        int64_t begin = p->offs[i], end = p->offs[i + 1];
        if (row_sorted(p->dst, begin, end))
            continue;
        if (end - begin <= SMALL_ROW)
            insertion_sort_row(p, begin, end);
        else
            qsort_row(p, begin, end, &s);
    }
cleanup:
    mpitopo__free(s.keys);
    mpitopo__free(s.bytes);
    mpitopo__free(s.msgs);
    return rc;
}

/* Sum runs of equal destinations in place; the write position never passes
 * the read position. */
static void merge_duplicates(mpitopo_pattern_t *p)
{
    int64_t w = 0, r = 0;
    for (int i = 0; i < p->nprocs; i++) {
        int64_t end = p->offs[i + 1];
        p->offs[i] = w;
        for (; r < end; r++) {
            if (w > p->offs[i] && p->dst[w - 1] == p->dst[r]) {
                p->bytes[w - 1] += p->bytes[r];
                p->msgs[w - 1] += p->msgs[r];
                continue;
            }
            p->dst[w] = p->dst[r];
            p->bytes[w] = p->bytes[r];
            p->msgs[w] = p->msgs[r];
            w++;
        }
    }
    p->offs[p->nprocs] = w;
    p->nedges = w;
}

static int check_sums(const mpitopo_pattern_t *p, const char *func)
{
    for (int i = 0; i < p->nprocs; i++)
        for (int64_t k = p->offs[i]; k < p->offs[i + 1]; k++)
            if (!isfinite(p->bytes[k]) || !isfinite(p->msgs[k]))
                return MPITOPO_FAIL_AS(
                    MPITOPO_ERR_RANGE, func,
                    "the summed weights of the repeated edge %d -> %d overflow "
                    "(bytes = %g, messages = %g)",
                    i, p->dst[k], p->bytes[k], p->msgs[k]);
    return MPITOPO_SUCCESS;
}

/* Give back spare room; a failed shrink keeps the larger block. */
static void shrink(void **array, int64_t n, size_t size)
{
    void *q = mpitopo__realloc_array(*array, (size_t)n, size);
    if (q)
        *array = q;
}

int mpitopo__pattern_from_coo(int nprocs, mpitopo__coo_t *coo, mpitopo_pattern_t **pattern)
{
    int rc;
    int64_t n = coo->n;
    const char *func = coo->func;
    mpitopo_pattern_t *p = mpitopo__calloc(1, sizeof *p);
    if (!p || !(p->offs = mpitopo__calloc((size_t)nprocs + 1, sizeof *p->offs))) {
        rc = NOMEM_IN(func, "the pattern");
        goto cleanup;
    }
    p->nprocs = nprocs;
    /* Room for one edge at least, so the arrays are never NULL. */
    if ((rc = mpitopo__coo_reserve(coo, 1)) || (rc = fill_ones(&coo->bytes, n, func)) ||
        (rc = fill_ones(&coo->msgs, n, func)) || (rc = bucket_by_source(p, coo)) ||
        (rc = sort_rows(p, func)))
        goto cleanup;
    merge_duplicates(p);
    if ((rc = check_sums(p, func)))
        goto cleanup;
    /* The arrays may have been taken over with spare room, or merged. */
    shrink((void **)&p->dst, p->nedges, sizeof *p->dst);
    shrink((void **)&p->bytes, p->nedges, sizeof *p->bytes);
    shrink((void **)&p->msgs, p->nedges, sizeof *p->msgs);
    *pattern = p;
    p = NULL;
cleanup:
    mpitopo__coo_free(coo);
    mpitopo_pattern_destroy(&p);
    return rc;
}

/* Public constructor and destructor ----------------------------------------- */

#define CREATE_FAIL(code, ...) MPITOPO_FAIL_AS((code), "mpitopo_pattern_create", __VA_ARGS__)

static int check_coo_args(int nprocs, int64_t nedges, const int *src, const int *dst,
                          const double *bytes, const double *msgs)
{
    if (nprocs < 1)
        return CREATE_FAIL(MPITOPO_ERR_ARG, "nprocs = %d must be >= 1", nprocs);
    if (nedges < 0)
        return CREATE_FAIL(MPITOPO_ERR_ARG, "nedges = %lld must be >= 0", (long long)nedges);
    if (nedges > 0 && (!src || !dst))
        return CREATE_FAIL(MPITOPO_ERR_ARG, "src and dst must not be NULL when nedges = %lld > 0",
                           (long long)nedges);
    for (int64_t e = 0; e < nedges; e++) {
        if (src[e] < 0 || src[e] >= nprocs || dst[e] < 0 || dst[e] >= nprocs)
            return CREATE_FAIL(MPITOPO_ERR_RANGE, "edge %lld: %d -> %d out of range [0, %d)",
                               (long long)e, src[e], dst[e], nprocs);
        if ((bytes && !(isfinite(bytes[e]) && bytes[e] >= 0)) ||
            (msgs && !(isfinite(msgs[e]) && msgs[e] >= 0)))
            return CREATE_FAIL(MPITOPO_ERR_ARG,
                               "edge %lld: bytes = %g, messages = %g must be finite and >= 0",
                               (long long)e, bytes ? bytes[e] : 1.0, msgs ? msgs[e] : 1.0);
    }
    return MPITOPO_SUCCESS;
}

int mpitopo_pattern_create(int nprocs, int64_t nedges, const int *src, const int *dst,
                           const double *bytes, const double *msgs, mpitopo_pattern_t **pattern)
{
    if (!pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern must not be NULL");
    *pattern = NULL;
    int rc = check_coo_args(nprocs, nedges, src, dst, bytes, msgs);
    if (rc)
        return rc;
    mpitopo__coo_t coo;
    mpitopo__coo_init(&coo, (bytes ? MPITOPO__COO_BYTES : 0) | (msgs ? MPITOPO__COO_MSGS : 0),
                      __func__);
    if ((rc = mpitopo__coo_reserve(&coo, nedges)))
        goto cleanup;
    coo.n = nedges;
    if (nedges > 0) {
        memcpy(coo.src, src, (size_t)nedges * sizeof *src);
        memcpy(coo.dst, dst, (size_t)nedges * sizeof *dst);
        if (bytes)
            memcpy(coo.bytes, bytes, (size_t)nedges * sizeof *bytes);
        if (msgs)
            memcpy(coo.msgs, msgs, (size_t)nedges * sizeof *msgs);
    }
    rc = mpitopo__pattern_from_coo(nprocs, &coo, pattern);
cleanup:
    mpitopo__coo_free(&coo);
    return rc;
}

void mpitopo_pattern_destroy(mpitopo_pattern_t **pattern)
{
    if (!pattern || !*pattern)
        return;
    mpitopo_pattern_t *p = *pattern;
    if (p->cart) {
        mpitopo__free(p->cart->offsets);
        mpitopo__free(p->cart->offset_bytes);
        mpitopo__free(p->cart->offset_msgs);
        mpitopo__free(p->cart);
    }
    mpitopo__free(p->offs);
    mpitopo__free(p->dst);
    mpitopo__free(p->bytes);
    mpitopo__free(p->msgs);
    mpitopo__free(p);
    *pattern = NULL;
}

/* Queries ------------------------------------------------------------------ */

int mpitopo_pattern_nprocs(const mpitopo_pattern_t *pattern, int *nprocs)
{
    if (!pattern || !nprocs)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern and nprocs must not be NULL");
    *nprocs = pattern->nprocs;
    return MPITOPO_SUCCESS;
}

int mpitopo_pattern_nedges(const mpitopo_pattern_t *pattern, int64_t *nedges)
{
    if (!pattern || !nedges)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern and nedges must not be NULL");
    *nedges = pattern->nedges;
    return MPITOPO_SUCCESS;
}

int mpitopo_pattern_out_edges(const mpitopo_pattern_t *pattern, int proc, int *degree,
                              const int **dst, const double **bytes, const double **msgs)
{
    if (!pattern || !degree)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern and degree must not be NULL");
    if (proc < 0 || proc >= pattern->nprocs)
        return MPITOPO_FAIL(MPITOPO_ERR_RANGE, "proc = %d out of range [0, %d)", proc,
                            pattern->nprocs);
    int64_t begin = pattern->offs[proc];
    *degree = (int)(pattern->offs[proc + 1] - begin);
    if (dst)
        *dst = pattern->dst + begin;
    if (bytes)
        *bytes = pattern->bytes + begin;
    if (msgs)
        *msgs = pattern->msgs + begin;
    return MPITOPO_SUCCESS;
}

int mpitopo_pattern_cart_info(const mpitopo_pattern_t *pattern, int *is_cart, int *ndims, int *dims,
                              int *periods)
{
    if (!pattern)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "pattern must not be NULL");
    const mpitopo__cart_t *c = pattern->cart;
    if (is_cart)
        *is_cart = c != NULL;
    if (ndims)
        *ndims = c ? c->ndims : 0;
    for (int i = 0; c && i < c->ndims; i++) {
        if (dims)
            dims[i] = c->dims[i];
        if (periods)
            periods[i] = c->periods[i];
    }
    return MPITOPO_SUCCESS;
}

/* Weights ------------------------------------------------------------------ */

static const char *const weight_names[] = {"bytes", "messages", "unit"};

int mpitopo_weight_from_string(const char *s, mpitopo_weight_t *weight)
{
    if (!s || !weight)
        return MPITOPO_FAIL(MPITOPO_ERR_ARG, "s and weight must not be NULL");
    for (int w = 0; w < 3; w++) {
        if (strcmp(s, weight_names[w]) == 0) {
            *weight = (mpitopo_weight_t)w;
            return MPITOPO_SUCCESS;
        }
    }
    return MPITOPO_FAIL(MPITOPO_ERR_NOT_FOUND,
                        "s = \"%.64s\" is not a weight (bytes, messages, unit)", s);
}

const char *mpitopo_weight_name(mpitopo_weight_t weight)
{
    if ((int)weight < 0 || (int)weight > 2)
        return "unknown";
    return weight_names[weight];
}
